/* rest/jwt.c: RFC 7515 and jwt.io vectors, HS384/HS512 vectors made
   with Python's hmac (another implementation), and every refusal with
   PostgREST's code, message and WWW-Authenticate value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/hmac.h>

#include "b64url.h"
#include "context.h"
#include "jwt.h"
#include "jwtcache.h"

static int fails;
#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__,   \
                    #c);                                                       \
            fails++;                                                           \
        }                                                                      \
    } while (0)

static const char *SECRET = "reallyreallyreallyreallyverysafe";
static const int64_t NOW = 1700000000;

/* header.payload.signature with HMAC-SHA256 of `key` */
static void sign(const char *header, const char *payload, const char *key,
                 char *out) {
    char h[1024], p[2048];
    b64url((const unsigned char *)header, strlen(header), h);
    b64url((const unsigned char *)payload, strlen(payload), p);
    sprintf(out, "%s.%s", h, p);
    unsigned char mac[64];
    unsigned ml;
    HMAC(EVP_sha256(), key, (int)strlen(key), (unsigned char *)out, strlen(out),
         mac, &ml);
    strcat(out, ".");
    b64url(mac, ml, out + strlen(out));
}

static rest_jwt_key key(const char *aud, const char *path, const char *alg) {
    rest_jwt_key k;
    char err[256];
    if (rest_jwt_key_init(&k, SECRET, 0, alg, aud, path, err, sizeof err) < 0) {
        fprintf(stderr, "key: %s\n", err);
        exit(1);
    }
    return k;
}

/* verify; returns the role ("" none) or the error code in `code` */
static int verify(const rest_jwt_key *k, const char *tok, char *role,
                  rest_err *e) {
    rarena a;
    rest_jwt_claims c;
    rarena_init(&a, 1 << 20);
    int rc = rest_jwt_verify(k, tok, strlen(tok), NOW, &a, &c, e);
    if (rc == 0)
        snprintf(role, 128, "%s", c.role ? c.role : "");
    rarena_free(&a);
    return rc;
}

static void expect_ok(const rest_jwt_key *k, const char *tok,
                      const char *want_role, int line) {
    char role[128];
    rest_err e;
    if (verify(k, tok, role, &e) < 0) {
        fprintf(stderr, "line %d: refused: %s %s\n", line, e.code, e.message);
        fails++;
        return;
    }
    if (strcmp(role, want_role) != 0) {
        fprintf(stderr, "line %d: role %s, want %s\n", line, role, want_role);
        fails++;
    }
}

static void expect_err(const rest_jwt_key *k, const char *tok, const char *code,
                       const char *msg, int line) {
    char role[128], wa[512];
    rest_err e;
    if (verify(k, tok, role, &e) == 0) {
        fprintf(stderr, "line %d: accepted (role %s)\n", line, role);
        fails++;
        return;
    }
    if (e.status != 401 || strcmp(e.code, code) != 0 ||
        strcmp(e.message, msg) != 0) {
        fprintf(stderr, "line %d: %d %s \"%s\", want 401 %s \"%s\"\n", line,
                e.status, e.code, e.message, code, msg);
        fails++;
    }
    char want[512];
    snprintf(want, sizeof want,
             "Bearer error=\"invalid_token\", error_description=\"%s\"", msg);
    const char *got = rest_jwt_www_authenticate(&e, wa, sizeof wa);
    if (!got || strcmp(got, want) != 0) {
        fprintf(stderr, "line %d: WWW-Authenticate %s\n", line,
                got ? got : "(none)");
        fails++;
    }
}

#define OK(k, t, r) expect_ok(k, t, r, __LINE__)
#define ERR(k, t, c, m) expect_err(k, t, c, m, __LINE__)

static void test_vectors(void) {
    /* RFC 7515 appendix A.1: HS256 with a base64url JWK key; its exp is
       1300819380 (checked at that time) */
    rest_jwt_key k;
    char err[256], role[128];
    rest_err e;
    rarena a;
    rest_jwt_claims c;
    CHECK(rest_jwt_key_init(&k,
                            "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-"
                            "1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow",
                            1, NULL, NULL, NULL, err, sizeof err) == 0);
    CHECK(k.secret_len == 64);
    const char *rfc =
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9."
        "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxl"
        "LmNvbS9pc19yb290Ijp0cnVlfQ."
        "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    rarena_init(&a, 1 << 20);
    CHECK(rest_jwt_verify(&k, rfc, strlen(rfc), 1300819380, &a, &c, &e) == 0);
    CHECK(c.role == NULL);
    CHECK(c.claims && strstr(c.claims, "\"iss\":\"joe\""));
    /* 31 s after exp: expired (the skew is 30 s) */
    CHECK(rest_jwt_verify(&k, rfc, strlen(rfc), 1300819380 + 30, &a, &c, &e) ==
          0);
    CHECK(rest_jwt_verify(&k, rfc, strlen(rfc), 1300819380 + 31, &a, &c, &e) <
          0);
    CHECK(strcmp(e.message, "JWT expired") == 0);
    rarena_free(&a);
    rest_jwt_key_free(&k);

    /* jwt.io's HS256 example: its secret is 19 bytes, under PostgREST's
       32, so the key is built by hand */
    rest_jwt_key j = {0};
    j.secret = (unsigned char *)strdup("your-256-bit-secret");
    j.secret_len = 19;
    j.alg_bits = 256;
    CHECK(rest_jspath_parse(".name", &j.path, &j.npath) == 0);
    OK(&j,
       "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
       "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5"
       "MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
       "John Doe");
    rest_jwt_key_free(&j);

    /* HS384 / HS512 made with Python's hmac */
    const char *t384 =
        "eyJhbGciOiJIUzM4NCIsInR5cCI6IkpXVCJ9."
        "eyJyb2xlIjoid2ViX3VzZXIiLCJhcHAiOnsicm9sZXMiOlsiYSIsImIiXX0sImV4cCI6"
        "MjAwMDAwMDAwMH0.CJuEMzS3aA3ak_bE9E0ugU62QYt4QYOcHqkqaMszL28PFuWOGa28"
        "TlcB4d11ORdq";
    const char *t512 =
        "eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9."
        "eyJyb2xlIjoid2ViX3VzZXIiLCJhcHAiOnsicm9sZXMiOlsiYSIsImIiXX0sImV4cCI6"
        "MjAwMDAwMDAwMH0.s3maNyZN92CWMiKs_ezAgFc15-kGYycQk9Z3ZIklyzcVkxHOg8m2"
        "uU6Qyh-P6-_cpAl6oivBN2RpTETo1-0XGg";
    k = key(NULL, NULL, "HS384");
    OK(&k, t384, "web_user");
    /* the algorithm is the configuration's: HS512 and HS256 are refused */
    ERR(&k, t512, "PGRST301", "Wrong or unsupported encoding algorithm");
    rest_jwt_key_free(&k);
    k = key(NULL, ".app.roles[1]", "HS512");
    OK(&k, t512, "b");
    ERR(&k, t384, "PGRST301", "Wrong or unsupported encoding algorithm");
    rest_jwt_key_free(&k);
    (void)role;
}

static void test_refusals(void) {
    char t[4096];
    const char *H = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    rest_jwt_key k = key(NULL, NULL, NULL);
    sign(H, "{\"role\":\"web_user\"}", SECRET, t);
    OK(&k, t, "web_user");
    sign(H, "{\"sub\":\"x\"}", SECRET, t);
    OK(&k, t, ""); /* no role: the anonymous role applies */
    /* expiry and friends, with the 30 s skew */
    char p[256];
    snprintf(p, sizeof p, "{\"role\":\"r\",\"exp\":%lld}", (long long)NOW - 31);
    sign(H, p, SECRET, t);
    ERR(&k, t, "PGRST303", "JWT expired");
    snprintf(p, sizeof p, "{\"role\":\"r\",\"exp\":%lld}", (long long)NOW - 30);
    sign(H, p, SECRET, t);
    OK(&k, t, "r");
    snprintf(p, sizeof p, "{\"role\":\"r\",\"nbf\":%lld}", (long long)NOW + 31);
    sign(H, p, SECRET, t);
    ERR(&k, t, "PGRST303", "JWT not yet valid");
    snprintf(p, sizeof p, "{\"role\":\"r\",\"nbf\":%lld}", (long long)NOW + 30);
    sign(H, p, SECRET, t);
    OK(&k, t, "r");
    snprintf(p, sizeof p, "{\"role\":\"r\",\"iat\":%lld}", (long long)NOW + 31);
    sign(H, p, SECRET, t);
    ERR(&k, t, "PGRST303", "JWT issued at future");
    sign(H, "{\"exp\":\"soon\"}", SECRET, t);
    ERR(&k, t, "PGRST303", "The JWT 'exp' claim must be a number");
    sign(H, "{\"nbf\":true}", SECRET, t);
    ERR(&k, t, "PGRST303", "The JWT 'nbf' claim must be a number");
    sign(H, "{\"iat\":[1]}", SECRET, t);
    ERR(&k, t, "PGRST303", "The JWT 'iat' claim must be a number");
    /* PostgREST takes a fractional time as 0: expired */
    sign(H, "{\"exp\":2000000000.5}", SECRET, t);
    ERR(&k, t, "PGRST303", "JWT expired");
    /* exp is checked before nbf */
    snprintf(p, sizeof p, "{\"exp\":1,\"nbf\":%lld}", (long long)NOW + 99);
    sign(H, p, SECRET, t);
    ERR(&k, t, "PGRST303", "JWT expired");
    sign(H, "[1,2]", SECRET, t);
    ERR(&k, t, "PGRST303", "Parsing claims failed");
    sign(H, "{\"role\":", SECRET, t);
    ERR(&k, t, "PGRST303", "Parsing claims failed");
    /* aud without jwt-aud: anything goes, but its type is checked */
    sign(H, "{\"role\":\"r\",\"aud\":\"other\"}", SECRET, t);
    OK(&k, t, "r");
    sign(H, "{\"aud\":5}", SECRET, t);
    ERR(&k, t, "PGRST303",
        "The JWT 'aud' claim must be a string or an array of strings");
    /* the signature */
    sign(H, "{\"role\":\"r\"}", "another-secret-another-secret-xx", t);
    ERR(&k, t, "PGRST301", "JWT cryptographic operation failed");
    sign(H, "{\"role\":\"r\"}", SECRET, t);
    char *dot = strrchr(t, '.');
    dot[1] = dot[1] == 'A' ? 'B' : 'A'; /* tampered signature */
    ERR(&k, t, "PGRST301", "JWT cryptographic operation failed");
    /* tampered payload: the same signature over {"role":"admin"} */
    char t2[4096], a[512];
    sign(H, "{\"role\":\"r\"}", SECRET, t);
    sign(H, "{\"role\":\"admin\"}", "x", t2);
    b64url((const unsigned char *)"{\"role\":\"admin\"}", 16, a);
    char *d1 = strchr(t, '.'), *d2 = strrchr(t, '.');
    snprintf(t2, sizeof t2, "%.*s.%s%s", (int)(d1 - t), t, a, d2);
    ERR(&k, t2, "PGRST301", "JWT cryptographic operation failed");
    /* a truncated signature */
    sign(H, "{\"role\":\"r\"}", SECRET, t);
    t[strlen(t) - 2] = '\0';
    ERR(&k, t, "PGRST301", "JWT cryptographic operation failed");
    /* alg none, with and without a signature; other algorithms */
    sign("{\"alg\":\"none\"}", "{\"role\":\"admin\"}", SECRET, t);
    ERR(&k, t, "PGRST301", "Wrong or unsupported encoding algorithm");
    *strrchr(t, '.') = '\0';
    strcat(t, ".");
    ERR(&k, t, "PGRST301", "Wrong or unsupported encoding algorithm");
    sign("{\"alg\":\"RS256\"}", "{}", SECRET, t);
    ERR(&k, t, "PGRST301", "Wrong or unsupported encoding algorithm");
    sign("{\"alg\":\"hs256\"}", "{}", SECRET, t);
    ERR(&k, t, "PGRST301", "Wrong or unsupported encoding algorithm");
    sign("{\"typ\":\"JWT\"}", "{}", SECRET, t);
    ERR(&k, t, "PGRST301", "JWT couldn't be decoded");
    sign("not json", "{}", SECRET, t);
    ERR(&k, t, "PGRST301", "JWT couldn't be decoded");
    /* shapes */
    ERR(&k, "", "PGRST301", "Empty JWT is sent in Authorization header");
    ERR(&k, "abc", "PGRST301", "Expected 3 parts in JWT; got 1");
    ERR(&k, "a.b.c.d", "PGRST301", "Expected 3 parts in JWT; got 4");
    ERR(&k, "a.b.c.d.e", "PGRST301", "Expected 3 parts in JWT; got 5");
    ERR(&k, "!!.b.c", "PGRST301", "JWT couldn't be decoded");
    rest_jwt_key_free(&k);

    /* jwt-aud */
    k = key("api", NULL, NULL);
    sign(H, "{\"role\":\"r\",\"aud\":\"api\"}", SECRET, t);
    OK(&k, t, "r");
    sign(H, "{\"role\":\"r\",\"aud\":\"web\"}", SECRET, t);
    ERR(&k, t, "PGRST303", "JWT not in audience");
    sign(H, "{\"role\":\"r\",\"aud\":[\"web\",\"api\"]}", SECRET, t);
    OK(&k, t, "r");
    sign(H, "{\"role\":\"r\",\"aud\":[\"web\"]}", SECRET, t);
    ERR(&k, t, "PGRST303", "JWT not in audience");
    sign(H, "{\"role\":\"r\",\"aud\":[]}", SECRET, t); /* PostgREST: ok */
    OK(&k, t, "r");
    sign(H, "{\"role\":\"r\"}", SECRET, t); /* no aud: ok */
    OK(&k, t, "r");
    rest_jwt_key_free(&k);

    /* jwt-role-claim-key */
    k = key(NULL, ".\"https://x.io/claims\".roles[0]", NULL);
    sign(H, "{\"https://x.io/claims\":{\"roles\":[\"editor\",\"x\"]}}", SECRET,
         t);
    OK(&k, t, "editor");
    sign(H, "{\"https://x.io/claims\":{\"roles\":[]}}", SECRET, t);
    OK(&k, t, "");
    rest_jwt_key_free(&k);
    k = key(NULL, ".n", NULL);
    sign(H, "{\"n\":42}", SECRET, t);
    OK(&k, t, "42");
    rest_jwt_key_free(&k);
}

static void test_config(void) {
    rest_jwt_key k;
    char err[256];
    rest_jspath_step *st;
    size_t n;
    CHECK(rest_jwt_key_init(&k, "short", 0, NULL, NULL, NULL, err, sizeof err) <
          0);
    CHECK(strstr(err, "at least 32 characters") != NULL);
    CHECK(rest_jwt_key_init(&k, SECRET, 0, "none", NULL, NULL, err,
                            sizeof err) < 0);
    CHECK(rest_jwt_key_init(&k, SECRET, 0, NULL, NULL, "role", err,
                            sizeof err) < 0);
    CHECK(strstr(err, "jwt-role-claim-key") != NULL);
    CHECK(rest_jwt_key_init(&k, "not base64!", 1, NULL, NULL, NULL, err,
                            sizeof err) < 0);
    CHECK(rest_jspath_parse(".a.b[2].\"c.d\"", &st, &n) == 0 && n == 4);
    CHECK(strcmp(st[0].key, "a") == 0 && strcmp(st[1].key, "b") == 0);
    CHECK(!st[2].key && st[2].index == 2 && strcmp(st[3].key, "c.d") == 0);
    for (size_t i = 0; i < n; i++)
        free(st[i].key);
    free(st);
    CHECK(rest_jspath_parse("", &st, &n) < 0);
    CHECK(rest_jspath_parse(".", &st, &n) < 0);
    CHECK(rest_jspath_parse(".a[x]", &st, &n) < 0);
    CHECK(rest_jspath_parse(".a[-1]", &st, &n) < 0);
    CHECK(rest_jspath_parse(".\"\"", &st, &n) < 0);
    unsigned char out[8];
    CHECK(rest_b64_decode("AQ", 2, out, sizeof out, 1) == 1 && out[0] == 1);
    CHECK(rest_b64_decode("AR", 2, out, sizeof out, 1) < 0); /* low bits */
    CHECK(rest_b64_decode("A", 1, out, sizeof out, 1) < 0);
    CHECK(rest_b64_decode("AQ==", 4, out, sizeof out, 0) == 1);
    CHECK(rest_b64_decode("AQ==", 4, out, sizeof out, 1) < 0);
    rest_err e;
    char wa[256];
    rest_err_set(&e, 401, "PGRST302", NULL, "Anonymous access is disabled");
    CHECK(strcmp(rest_jwt_www_authenticate(&e, wa, sizeof wa), "Bearer") == 0);
    rest_err_set(&e, 400, "PGRST100", NULL, "x");
    CHECK(rest_jwt_www_authenticate(&e, wa, sizeof wa) == NULL);
    /* a database error answered 401: "Bearer", as PostgREST's PgError */
    rest_err_set(&e, 401, "42501", NULL, "x");
    CHECK(strcmp(rest_jwt_www_authenticate(&e, wa, sizeof wa), "Bearer") == 0);
    rest_err_set(&e, 403, "42501", NULL, "x");
    CHECK(rest_jwt_www_authenticate(&e, wa, sizeof wa) == NULL);
}

/* context.c: the names, the 255-byte rule, the block's text */
static void test_context(void) {
    rarena a;
    rest_ctx c;
    rbuf b;
    char big[300];
    memset(&c, 0, sizeof c);
    rarena_init(&a, 1 << 20);
    rest_ctx_add(&c, &a, "request.header.", "X-Test", 6, 1, "v", 1);
    memset(big, 'x', sizeof big);
    rest_ctx_add(&c, &a, "request.header.", "x-big", 5, 1, big, 256);
    rest_ctx_add(&c, &a, "request.header.", "x-255", 5, 1, big, 255);
    CHECK(c.n == 2 && c.dropped == 1);
    CHECK(strcmp(c.name[0], "request.header.x-test") == 0);
    const char *cj = "{\"sub\":\"u\",\"n\":5,\"o\":{},\"b\":true}";
    rest_ctx_add_claims(&c, &a, cj, strlen(cj));
    CHECK(c.n == 6);
    CHECK(strcmp(c.name[2], "request.jwt.claims") == 0);
    CHECK(strcmp(c.name[3], "request.jwt.claim.sub") == 0 &&
          strcmp(c.value[3], "u") == 0);
    CHECK(strcmp(c.name[4], "request.jwt.claim.n") == 0 &&
          strcmp(c.value[4], "5") == 0);
    CHECK(strcmp(c.name[5], "request.jwt.claim.b") == 0);
    rest_ctx_add_cookies(&c, &a, "a=1; b=two;c=", 13);
    CHECK(c.n == 9 && strcmp(c.name[6], "request.cookie.a") == 0 &&
          strcmp(c.value[7], "two") == 0 && c.value_len[8] == 0);
    for (int i = 0; i < 70; i++)
        rest_ctx_add(&c, &a, "request.header.", "h", 1, 1, "v", 1);
    CHECK(c.n == REST_CTX_MAX);
    rbuf_init(&b, 0);
    rest_ctx_sql(&b, 2, "pre_req");
    CHECK(strcmp(rbuf_cstr(&b),
                 "EXECUTE BLOCK (N0 VARCHAR(80) CHARACTER SET UTF8 = ?, V0 "
                 "VARCHAR(255) CHARACTER SET UTF8 = ?, N1 VARCHAR(80) "
                 "CHARACTER SET UTF8 = ?, V1 VARCHAR(255) CHARACTER SET UTF8 "
                 "= ?) AS DECLARE R INTEGER; BEGIN IF (:N0 IS NOT NULL) THEN "
                 "R = RDB$SET_CONTEXT('USER_TRANSACTION', :N0, :V0); IF (:N1 "
                 "IS NOT NULL) THEN R = RDB$SET_CONTEXT('USER_TRANSACTION', "
                 ":N1, :V1); EXECUTE PROCEDURE \"PRE_REQ\"; END") == 0);
    CHECK(rest_ctx_slots(0) == 0 && rest_ctx_slots(1) == 16 &&
          rest_ctx_slots(16) == 16 && rest_ctx_slots(17) == 32);
    rbuf_reset(&b);
    rest_ctx_sql(&b, 0, "My\"Proc");
    CHECK(strcmp(rbuf_cstr(&b),
                 "EXECUTE BLOCK AS BEGIN EXECUTE PROCEDURE \"My\"\"Proc\"; "
                 "END") == 0);
    rbuf_free(&b);
    rarena_free(&a);
}

/* verify through cache `c` at `now`: 0 with the role, or the code */
static int cverify(rest_jwt_cache *c, const rest_jwt_key *k, const char *tok,
                   int64_t now, char *role, rest_err *e) {
    rarena a;
    rest_jwt_claims cl;
    rarena_init(&a, 1 << 20);
    int rc = rest_jwt_verify_cached(c, k, tok, strlen(tok), now, &a, &cl, e);
    if (rc == 0) {
        snprintf(role, 128, "%s", cl.role ? cl.role : "");
        CHECK(cl.claims && cl.claims[0] == '{' &&
              strlen(cl.claims) == cl.claims_len);
    }
    rarena_free(&a);
    return rc;
}

static void test_cache(void) {
    rest_jwt_key k = key(NULL, NULL, NULL);
    rest_jwt_cache_stats st;
    rest_err e;
    char role[128], ta[1024], tb[1024], tc[1024], tx[1024], p[256];
    const char *hdr = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    CHECK(rest_jwt_cache_new(0) == NULL); /* 0: no cache */
    /* a hit answers as the verification did; exp is kept with it */
    rest_jwt_cache *c = rest_jwt_cache_new(2);
    snprintf(p, sizeof p, "{\"role\":\"alice\",\"exp\":%lld}",
             (long long)NOW + 10);
    sign(hdr, p, SECRET, ta);
    CHECK(cverify(c, &k, ta, NOW, role, &e) == 0 && !strcmp(role, "alice"));
    CHECK(cverify(c, &k, ta, NOW + 5, role, &e) == 0 && !strcmp(role, "alice"));
    rest_jwt_cache_stats_get(c, &st);
    CHECK(st.entries == 1 && st.hits == 1 && st.misses == 1);
    /* within the 30 s skew after exp: still a hit */
    CHECK(cverify(c, &k, ta, NOW + 40, role, &e) == 0);
    rest_jwt_cache_stats_get(c, &st);
    CHECK(st.hits == 2);
    /* past exp + skew: the cached token is refused as expired (dropped
       from the cache and verified again), every time */
    for (int i = 0; i < 2; i++) {
        CHECK(cverify(c, &k, ta, NOW + 41, role, &e) < 0);
        CHECK(e.status == 401 && !strcmp(e.code, "PGRST303") &&
              !strcmp(e.message, "JWT expired"));
    }
    rest_jwt_cache_stats_get(c, &st);
    CHECK(st.entries == 0 && st.expired == 1 && st.hits == 2);
    /* a refused token is never kept: a wrong signature, a token one byte
       off a cached one */
    sign(hdr, "{\"role\":\"bob\"}", SECRET, tb);
    CHECK(cverify(c, &k, tb, NOW, role, &e) == 0 && !strcmp(role, "bob"));
    snprintf(tx, sizeof tx, "%s", tb);
    tx[strlen(tx) - 2] = tx[strlen(tx) - 2] == 'A' ? 'B' : 'A';
    for (int i = 0; i < 2; i++) {
        CHECK(cverify(c, &k, tx, NOW, role, &e) < 0);
        CHECK(!strcmp(e.code, "PGRST301"));
    }
    rest_jwt_cache_stats_get(c, &st);
    CHECK(st.entries == 1);
    /* eviction, least recently used first: bob, then carol (full at 2);
       bob used again; dave takes carol's place */
    sign(hdr, "{\"role\":\"carol\"}", SECRET, tc);
    CHECK(cverify(c, &k, tc, NOW, role, &e) == 0);
    CHECK(cverify(c, &k, tb, NOW, role, &e) == 0 && !strcmp(role, "bob"));
    rest_jwt_cache_stats_get(c, &st);
    uint64_t hits = st.hits, misses = st.misses;
    CHECK(st.entries == 2 && st.evicted == 0);
    char td[1024];
    sign(hdr, "{\"role\":\"dave\"}", SECRET, td);
    CHECK(cverify(c, &k, td, NOW, role, &e) == 0 && !strcmp(role, "dave"));
    rest_jwt_cache_stats_get(c, &st);
    CHECK(st.entries == 2 && st.evicted == 1 && st.misses == misses + 1);
    CHECK(cverify(c, &k, tb, NOW, role, &e) == 0 && !strcmp(role, "bob"));
    CHECK(cverify(c, &k, td, NOW, role, &e) == 0 && !strcmp(role, "dave"));
    rest_jwt_cache_stats_get(c, &st);
    CHECK(st.hits == hits + 2 && st.misses == misses + 1);
    CHECK(cverify(c, &k, tc, NOW, role, &e) == 0 && !strcmp(role, "carol"));
    rest_jwt_cache_stats_get(c, &st);
    CHECK(st.misses == misses + 2 && st.evicted == 2); /* carol was gone */
    /* the entries belong to their key: with another secret the same
       cache verifies again, and refuses */
    rest_jwt_key k2;
    char kerr[128];
    CHECK(rest_jwt_key_init(&k2, "another-secret-of-32-bytes-or-more", 0, NULL,
                            NULL, NULL, kerr, sizeof kerr) == 0);
    CHECK(cverify(c, &k2, tb, NOW, role, &e) < 0 &&
          strcmp(e.message, "JWT cryptographic operation failed") == 0);
    rest_jwt_cache_stats_get(c, &st);
    CHECK(st.entries == 0);
    rest_jwt_key_free(&k2);
    rest_jwt_cache_free(c);
    /* many tokens through a small cache: the same answers as without */
    c = rest_jwt_cache_new(7);
    for (int i = 0; i < 200; i++) {
        char t[1024], want[32], role2[128];
        int n = (i * 37) % 23;
        snprintf(p, sizeof p, "{\"role\":\"r%d\"}", n);
        snprintf(want, sizeof want, "r%d", n);
        sign(hdr, p, SECRET, t);
        CHECK(cverify(c, &k, t, NOW, role2, &e) == 0 && !strcmp(role2, want));
    }
    rest_jwt_cache_stats_get(c, &st);
    CHECK(st.entries == 7 && st.hits + st.misses == 200);
    rest_jwt_cache_free(c);
    rest_jwt_key_free(&k);
}

int main(void) {
    test_cache();
    test_context();
    test_vectors();
    test_refusals();
    test_config();
    printf("%d failed\n", fails);
    return fails != 0;
}
