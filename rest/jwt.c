/* ffb-rest: JWT verification (jwt.h). */
#include "jwt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <yajl/yajl_tree.h>

/* PostgREST's allowed clock skew (Auth/Jwt.hs allowedSkewSeconds) */
#define JWT_SKEW REST_JWT_SKEW
/* tokens longer than this are refused before decoding */
#define JWT_MAX_LEN 16384

static int b64v(int c, int url) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (url ? '-' : '+'))
        return 62;
    if (c == (url ? '_' : '/'))
        return 63;
    return -1;
}

long rest_b64_decode(const char *s, size_t n, unsigned char *out, size_t cap,
                     int url) {
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    if (!url)
        while (n > 0 && s[n - 1] == '=')
            n--;
    if (n % 4 == 1)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int v = b64v((unsigned char)s[i], url);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o == cap)
                return -1;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    /* the unused low bits must be zero (one text per byte string) */
    if (bits > 0 && (acc & ((1u << bits) - 1)) != 0)
        return -1;
    return (long)o;
}

void rest_jwt_key_free(rest_jwt_key *k) {
    if (k->secret)
        OPENSSL_cleanse(k->secret, k->secret_len);
    free(k->secret);
    for (size_t i = 0; i < k->npath; i++)
        free(k->path[i].key);
    free(k->path);
    memset(k, 0, sizeof *k);
}

int rest_jspath_parse(const char *s, rest_jspath_step **out, size_t *n) {
    rest_jspath_step *st = NULL;
    size_t ns = 0;
    *out = NULL;
    *n = 0;
    if (!s || !*s)
        return -1;
    while (*s) {
        rest_jspath_step step = {NULL, 0};
        if (s[0] == '.' && s[1] == '"') {
            const char *e = strchr(s + 2, '"');
            if (!e || e == s + 2)
                goto bad;
            step.key = strndup(s + 2, (size_t)(e - s - 2));
            s = e + 1;
        } else if (s[0] == '.') {
            size_t k = 1;
            while (s[k] && s[k] != '.' && s[k] != '[' && s[k] != '"')
                k++;
            if (k == 1)
                goto bad;
            step.key = strndup(s + 1, k - 1);
            s += k;
        } else if (s[0] == '[') {
            char *e;
            long v = strtol(s + 1, &e, 10);
            if (e == s + 1 || *e != ']' || v < 0)
                goto bad;
            step.index = v;
            s = e + 1;
        } else {
            goto bad;
        }
        if (s[-1] != ']' && !step.key)
            goto bad;
        rest_jspath_step *ns2 = realloc(st, (ns + 1) * sizeof *st);
        if (!ns2) {
            free(step.key);
            goto bad;
        }
        st = ns2;
        st[ns++] = step;
    }
    *out = st;
    *n = ns;
    return 0;
bad:
    for (size_t i = 0; i < ns; i++)
        free(st[i].key);
    free(st);
    return -1;
}

int rest_jwt_key_init(rest_jwt_key *k, const char *secret, int is_base64,
                      const char *alg, const char *aud, const char *role_key,
                      char *err, size_t errlen) {
    memset(k, 0, sizeof *k);
    char *text = NULL;
    size_t tlen;
    if (secret && secret[0] == '@') {
        FILE *f = fopen(secret + 1, "rb");
        if (!f) {
            snprintf(err, errlen, "jwt-secret: cannot read %s", secret + 1);
            return -1;
        }
        text = malloc(65537);
        tlen = text ? fread(text, 1, 65536, f) : 0;
        fclose(f);
        if (!text)
            return -1;
        while (tlen > 0 && (text[tlen - 1] == '\n' || text[tlen - 1] == '\r'))
            tlen--;
    } else {
        tlen = strlen(secret);
        text = malloc(tlen + 1);
        if (!text)
            return -1;
        memcpy(text, secret, tlen);
    }
    text[tlen] = '\0';
    if (is_base64) {
        unsigned char *d = malloc(tlen + 1);
        int url = strchr(text, '-') || strchr(text, '_');
        long dn = d ? rest_b64_decode(text, tlen, d, tlen + 1, url) : -1;
        OPENSSL_cleanse(text, tlen);
        free(text);
        if (dn < 0) {
            free(d);
            snprintf(err, errlen,
                     "jwt-secret: not valid base64 "
                     "(jwt-secret-is-base64 = true)");
            return -1;
        }
        k->secret = d;
        k->secret_len = (size_t)dn;
    } else {
        k->secret = (unsigned char *)text;
        k->secret_len = tlen;
    }
    if (k->secret_len < 32) {
        rest_jwt_key_free(k);
        snprintf(err, errlen,
                 "jwt-secret: the JWT secret must be at least 32 characters "
                 "long");
        return -1;
    }
    if (!alg || strcmp(alg, "HS256") == 0)
        k->alg_bits = 256;
    else if (strcmp(alg, "HS384") == 0)
        k->alg_bits = 384;
    else if (strcmp(alg, "HS512") == 0)
        k->alg_bits = 512;
    else {
        rest_jwt_key_free(k);
        snprintf(err, errlen, "jwt-alg: expected HS256, HS384 or HS512");
        return -1;
    }
    k->aud = aud;
    if (rest_jspath_parse(role_key ? role_key : ".role", &k->path, &k->npath) <
        0) {
        rest_jwt_key_free(k);
        snprintf(err, errlen,
                 "jwt-role-claim-key: expected a JSPath such as .role, "
                 ".app.roles[0] or .\"https://x.y\".role");
        return -1;
    }
    return 0;
}

static int decode_err(rest_err *e, const char *msg, const char *details) {
    rest_err_set(e, 401, "PGRST301", details, "%s", msg);
    return -1;
}

static int claims_err(rest_err *e, const char *msg) {
    rest_err_set(e, 401, "PGRST303", NULL, "%s", msg);
    return -1;
}

/* A part of the token decoded, NUL-terminated, into the arena. */
static unsigned char *part(rarena *a, const char *s, size_t n, size_t *out) {
    unsigned char *d = rarena_alloc(a, n + 1);
    if (!d)
        return NULL;
    long dn = rest_b64_decode(s, n, d, n + 1, 1);
    if (dn < 0)
        return NULL;
    d[dn] = '\0';
    *out = (size_t)dn;
    return d;
}

static yajl_val member(yajl_val obj, const char *key) {
    if (!YAJL_IS_OBJECT(obj))
        return NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0)
            return obj->u.object.values[i];
    return NULL;
}

/* A time claim: 0 absent (or null), 1 a number in *t, -1 not a number.
   PostgREST takes a number that is not an integer as 0 (Sci.toBoundedInteger
   then fromMaybe 0), so does this. */
static int time_claim(yajl_val claims, const char *key, int64_t *t) {
    yajl_val v = member(claims, key);
    if (!v || YAJL_IS_NULL(v))
        return 0;
    if (!YAJL_IS_NUMBER(v))
        return -1;
    *t = YAJL_IS_INTEGER(v) ? (int64_t)YAJL_GET_INTEGER(v) : 0;
    return 1;
}

static char *scalar_text(rarena *a, yajl_val v) {
    if (YAJL_IS_STRING(v))
        return rarena_strndup(a, v->u.string, strlen(v->u.string));
    if (YAJL_IS_NUMBER(v))
        return rarena_strndup(a, YAJL_GET_NUMBER(v),
                              strlen(YAJL_GET_NUMBER(v)));
    if (YAJL_IS_TRUE(v))
        return rarena_strndup(a, "true", 4);
    if (YAJL_IS_FALSE(v))
        return rarena_strndup(a, "false", 5);
    return NULL;
}

int rest_jwt_verify(const rest_jwt_key *k, const char *tok, size_t len,
                    int64_t now, rarena *a, rest_jwt_claims *out,
                    rest_err *err) {
    memset(out, 0, sizeof *out);
    if (len == 0)
        return decode_err(err, "Empty JWT is sent in Authorization header",
                          NULL);
    const char *d1 = memchr(tok, '.', len);
    const char *d2 =
        d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok)) : NULL;
    int parts = 1;
    for (size_t i = 0; i < len; i++)
        parts += tok[i] == '.';
    if (parts != 3) {
        char m[64];
        snprintf(m, sizeof m, "Expected 3 parts in JWT; got %d", parts);
        return decode_err(err, m, NULL);
    }
    if (len > JWT_MAX_LEN)
        return decode_err(err, "JWT couldn't be decoded", NULL);
    const char *p1 = d1 + 1, *p2 = d2 + 1;
    size_t n0 = (size_t)(d1 - tok), n1 = (size_t)(d2 - p1),
           n2 = len - (size_t)(p2 - tok);
    size_t hl, pl;
    char ebuf[128];
    unsigned char *hj = part(a, tok, n0, &hl);
    yajl_val hdr =
        hj ? yajl_tree_parse((const char *)hj, ebuf, sizeof ebuf) : NULL;
    yajl_val alg = member(hdr, "alg");
    if (!hdr || !YAJL_IS_OBJECT(hdr) || !alg || !YAJL_IS_STRING(alg) ||
        strlen((const char *)hj) != hl) {
        yajl_tree_free(hdr);
        return decode_err(err, "JWT couldn't be decoded", NULL);
    }
    if (member(hdr, "enc")) {
        yajl_tree_free(hdr);
        return decode_err(err, "Unsupported token type", NULL);
    }
    char want[8];
    snprintf(want, sizeof want, "HS%d", k->alg_bits);
    if (strcmp(alg->u.string, want) != 0) {
        char det[160];
        snprintf(det, sizeof det,
                 "the token's algorithm is %.40s; this server accepts only "
                 "%s (jwt-alg)",
                 alg->u.string, want);
        yajl_tree_free(hdr);
        return decode_err(err, "Wrong or unsupported encoding algorithm", det);
    }
    yajl_tree_free(hdr);
    /* the signature over "header.payload" */
    const EVP_MD *md = k->alg_bits == 256   ? EVP_sha256()
                       : k->alg_bits == 384 ? EVP_sha384()
                                            : EVP_sha512();
    unsigned char mac[EVP_MAX_MD_SIZE], sig[EVP_MAX_MD_SIZE + 3];
    unsigned int maclen = 0;
    long sl = rest_b64_decode(p2, n2, sig, sizeof sig, 1);
    if (!HMAC(md, k->secret, (int)k->secret_len, (const unsigned char *)tok,
              (size_t)(d2 - tok), mac, &maclen) ||
        sl != (long)maclen || CRYPTO_memcmp(mac, sig, maclen) != 0)
        return decode_err(err, "JWT cryptographic operation failed", NULL);
    /* the claims */
    unsigned char *pj = part(a, p1, n1, &pl);
    yajl_val cl =
        pj ? yajl_tree_parse((const char *)pj, ebuf, sizeof ebuf) : NULL;
    if (!cl || !YAJL_IS_OBJECT(cl) || strlen((const char *)pj) != pl) {
        yajl_tree_free(cl);
        return claims_err(err, "Parsing claims failed");
    }
    int64_t t = 0;
    int r;
    const char *bad = NULL;
    if (time_claim(cl, "exp", &t) > 0) { /* for the cache (jwtcache.h) */
        out->has_exp = 1;
        out->exp = t;
    }
    /* PostgREST's order: exp, nbf, iat, aud; the first failure wins */
    if ((r = time_claim(cl, "exp", &t)) < 0)
        bad = "The JWT 'exp' claim must be a number";
    else if (r > 0 && now - JWT_SKEW > t)
        bad = "JWT expired";
    else if ((r = time_claim(cl, "nbf", &t)) < 0)
        bad = "The JWT 'nbf' claim must be a number";
    else if (r > 0 && now + JWT_SKEW < t)
        bad = "JWT not yet valid";
    else if ((r = time_claim(cl, "iat", &t)) < 0)
        bad = "The JWT 'iat' claim must be a number";
    else if (r > 0 && now + JWT_SKEW < t)
        bad = "JWT issued at future";
    if (!bad) {
        yajl_val aud = member(cl, "aud");
        if (aud && YAJL_IS_STRING(aud)) {
            if (k->aud && strcmp(k->aud, aud->u.string) != 0)
                bad = "JWT not in audience";
        } else if (aud && YAJL_IS_ARRAY(aud)) {
            int any = aud->u.array.len == 0 || !k->aud;
            for (size_t i = 0; i < aud->u.array.len; i++) {
                yajl_val v = aud->u.array.values[i];
                if (!YAJL_IS_STRING(v)) {
                    bad = "The JWT 'aud' claim must be a string or an "
                          "array of strings";
                    break;
                }
                if (k->aud && strcmp(k->aud, v->u.string) == 0)
                    any = 1;
            }
            if (!bad && !any)
                bad = "JWT not in audience";
        } else if (aud && !YAJL_IS_NULL(aud)) {
            bad = "The JWT 'aud' claim must be a string or an array of "
                  "strings";
        }
    }
    if (bad) {
        yajl_tree_free(cl);
        return claims_err(err, bad);
    }
    /* the role: jwt-role-claim-key walked from the claims */
    yajl_val v = cl;
    for (size_t i = 0; v && i < k->npath; i++) {
        if (k->path[i].key)
            v = member(v, k->path[i].key);
        else if (YAJL_IS_ARRAY(v) && (size_t)k->path[i].index < v->u.array.len)
            v = v->u.array.values[k->path[i].index];
        else
            v = NULL;
    }
    if (v && !YAJL_IS_NULL(v)) {
        out->role = scalar_text(a, v);
        if (!out->role && !YAJL_IS_OBJECT(v) && !YAJL_IS_ARRAY(v)) {
            yajl_tree_free(cl);
            rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
            return -1;
        }
    }
    yajl_tree_free(cl);
    out->claims = (char *)pj;
    out->claims_len = pl;
    return 0;
}

const char *rest_jwt_www_authenticate(const rest_err *e, char *buf, size_t n) {
    /* PGRST302, and a database error answered 401 (42501 without a token,
       22023 for a role that does not exist), as PostgREST's PgError */
    if (strcmp(e->code, "PGRST302") == 0 ||
        (e->status == 401 && strncmp(e->code, "PGRST", 5) != 0)) {
        snprintf(buf, n, "Bearer");
        return buf;
    }
    if (strcmp(e->code, "PGRST301") != 0 && strcmp(e->code, "PGRST303") != 0)
        return NULL;
    /* PostgREST: error_description=<Haskell show of the message>: in
       double quotes, '"' and '\' escaped (the messages are ASCII) */
    size_t o = (size_t)snprintf(buf, n,
                                "Bearer error=\"invalid_token\", "
                                "error_description=\"");
    for (const char *p = e->message; *p && o + 3 < n; p++) {
        if (*p == '"' || *p == '\\')
            buf[o++] = '\\';
        buf[o++] = *p;
    }
    if (o + 2 <= n) {
        buf[o++] = '"';
        buf[o] = '\0';
    }
    return buf;
}

/* ---- signing (tests, bench/rest/load.c) --------------------------------- */

long rest_b64url_encode(const unsigned char *p, size_t n, char *out,
                        size_t cap) {
    static const char a[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t need = n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
    if (need + 1 > cap)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[o++] = a[(v >> 18) & 63];
        out[o++] = a[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = a[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = a[v & 63];
    }
    out[o] = '\0';
    return (long)o;
}

long rest_jwt_sign(const char *alg, const char *claims, size_t claims_len,
                   const unsigned char *key, size_t keylen, char *out,
                   size_t cap) {
    const EVP_MD *md = NULL;
    if (strcmp(alg, "HS256") == 0)
        md = EVP_sha256();
    else if (strcmp(alg, "HS384") == 0)
        md = EVP_sha384();
    else if (strcmp(alg, "HS512") == 0)
        md = EVP_sha512();
    else if (strcmp(alg, "none") != 0)
        return -1;
    char hj[64];
    snprintf(hj, sizeof hj, "{\"alg\":\"%s\",\"typ\":\"JWT\"}", alg);
    long h =
        rest_b64url_encode((const unsigned char *)hj, strlen(hj), out, cap);
    if (h < 0 || (size_t)h + 2 > cap)
        return -1;
    out[h] = '.';
    long c = rest_b64url_encode((const unsigned char *)claims, claims_len,
                                out + h + 1, cap - (size_t)h - 1);
    if (c < 0)
        return -1;
    size_t o = (size_t)h + 1 + (size_t)c;
    if (o + 2 > cap)
        return -1;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    if (md &&
        !HMAC(md, key, (int)keylen, (const unsigned char *)out, o, mac, &ml))
        return -1;
    out[o++] = '.';
    long s = rest_b64url_encode(mac, ml, out + o, cap - o);
    if (s < 0)
        return -1;
    return (long)(o + (size_t)s);
}
