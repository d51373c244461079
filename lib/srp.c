/*
 * SRP client (Firebird's Srp, Srp224, Srp256, Srp384, Srp512 plugins) and
 * Firebird's login normalisation.
 *
 * The mathematics follows docs/protocol/01-connection.md 6.4.5 exactly,
 * which is what Firebird's RemotePassword (src/auth/SecureRemotePassword/
 * srp.cpp) computes:
 *   - every integer that enters a hash is in its minimal big-endian form
 *     (no leading zero bytes, no padding to the size of N), except g inside
 *     k (padded to 128 bytes) and K (the raw 20-byte digest);
 *   - the salt is hashed as the ASCII text received, never hex-decoded;
 *   - n1 = H(N)^H(g) mod N is a modular exponentiation, not an XOR;
 *   - the exponent e = a + u*x is used unreduced;
 *   - only M uses the plugin's hash; x, u, k and K always use SHA-1.
 * Test vector: 6.4.8, checked in tests/unit/test_srp.c.
 *
 * Secrets (a, x, e, S) live in BIGNUMs taken from a BN_CTX; BN_CTX_free()
 * clears every BIGNUM of its pool. Byte buffers holding secrets are wiped
 * with OPENSSL_cleanse().
 */
#include "lib/auth.h"

#include <string.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "include/fastfb.h"

/* 6.4.1: the 1024-bit safe prime N; g = 2. */
static const char N_HEX[] =
    "E67D2E994B2F900C3F41F08F5BB2627ED0D49EE1FE767A52EFCD565CD6E768812C3E1E9C"
    "E8F0A8BEA6CB13CD29DDEBF7A96D4A93B55D488DF099A15C89DCB0640738EB2CBDD9A8F7"
    "BAB561AB1B0DC1C6CDABF303264A08D1BCA932D1F1EE428B619D970F342ABA9A65793B8B"
    "2F041AE5364350C16F735F56ECBCA87BD57B29E7";

#define N_LEN 128
#define SRP_G 2
#define SHA1_LEN 20
/* 6.4.4: (32 + 128 + 2) * 2 */
#define SERVER_DATA_MAX 324
#define SALT_MAX 64
/* Big enough for any integer we encode: B may have up to 320 hex digits. */
#define NUM_BUF 192

struct part {
    const void *p;
    size_t n;
};

static int hex_value(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/*
 * Parse n hex digits (any case, leading zeros and odd length allowed, n may
 * be 0 meaning the value 0) into x. FFB_E_PROTO for a non-hex character.
 */
static int bn_from_hex(BIGNUM *x, const char *hex, size_t n) {
    uint8_t buf[NUM_BUF];
    size_t nbytes = (n + 1) / 2;
    size_t i;
    size_t j = 0;
    int rc = 0;

    if (nbytes > sizeof(buf))
        return FFB_E_PROTO;
    /* An odd count means the first byte holds a single digit. */
    for (i = 0; i < n; j++) {
        int hi = 0;
        int lo;
        if (!(n % 2 != 0 && i == 0)) {
            hi = hex_value((unsigned char)hex[i++]);
            if (hi < 0)
                return FFB_E_PROTO;
        }
        lo = hex_value((unsigned char)hex[i++]);
        if (lo < 0)
            return FFB_E_PROTO;
        buf[j] = (uint8_t)(hi << 4 | lo);
    }
    if (BN_bin2bn(buf, (int)nbytes, x) == NULL)
        rc = FFB_E_CRYPT;
    OPENSSL_cleanse(buf, sizeof(buf));
    return rc;
}

/* bytes(x): minimal big-endian encoding (empty for 0). */
static size_t bn_bytes(const BIGNUM *x, uint8_t *buf, size_t size) {
    int n = BN_num_bytes(x);
    if (n < 0 || (size_t)n > size)
        return (size_t)-1;
    return (size_t)BN_bn2bin(x, buf);
}

/*
 * hex(bytes): upper case, no leading zeros ("0" for zero), NUL-terminated.
 * FFB_E_INVAL if out is too small.
 */
static int to_hex(const uint8_t *b, size_t n, char *out, size_t size,
                  size_t *out_len) {
    static const char digits[] = "0123456789ABCDEF";
    size_t i = 0;
    size_t o = 0;
    int started = 0;

    while (i < n && b[i] == 0)
        i++;
    for (; i < n; i++) {
        unsigned hi = b[i] >> 4;
        unsigned lo = b[i] & 0x0F;
        if (started || hi != 0) {
            if (o + 1 >= size)
                return FFB_E_INVAL;
            out[o++] = digits[hi];
        }
        started = 1;
        if (o + 1 >= size)
            return FFB_E_INVAL;
        out[o++] = digits[lo];
    }
    if (o == 0) {
        if (size < 2)
            return FFB_E_INVAL;
        out[o++] = '0';
    }
    out[o] = '\0';
    *out_len = o;
    return 0;
}

static int digest(const EVP_MD *md, const struct part *parts, size_t n,
                  uint8_t *out) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned out_len = 0;
    size_t i;
    int rc = FFB_E_CRYPT;

    if (ctx == NULL)
        return FFB_E_CRYPT;
    if (EVP_DigestInit_ex(ctx, md, NULL) != 1)
        goto done;
    for (i = 0; i < n; i++) {
        if (parts[i].n > 0 &&
            EVP_DigestUpdate(ctx, parts[i].p, parts[i].n) != 1)
            goto done;
    }
    if (EVP_DigestFinal_ex(ctx, out, &out_len) != 1)
        goto done;
    rc = 0;
done:
    EVP_MD_CTX_free(ctx);
    return rc;
}

static int sha1(const struct part *parts, size_t n, uint8_t out[SHA1_LEN]) {
    return digest(EVP_sha1(), parts, n, out);
}

static const EVP_MD *proof_md(int proof_hash) {
    switch (proof_hash) {
    case FFB__SRP_SHA1:
        return EVP_sha1();
    case FFB__SRP_SHA224:
        return EVP_sha224();
    case FFB__SRP_SHA256:
        return EVP_sha256();
    case FFB__SRP_SHA384:
        return EVP_sha384();
    case FFB__SRP_SHA512:
        return EVP_sha512();
    default:
        return NULL;
    }
}

int ffb__srp_hash_of(const char *plugin, size_t len) {
    static const struct {
        const char *name;
        int hash;
    } map[] = {
        {"Srp", FFB__SRP_SHA1},      {"Srp224", FFB__SRP_SHA224},
        {"Srp256", FFB__SRP_SHA256}, {"Srp384", FFB__SRP_SHA384},
        {"Srp512", FFB__SRP_SHA512},
    };
    size_t i;

    if (plugin == NULL)
        return 0;
    for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (strlen(map[i].name) == len && memcmp(map[i].name, plugin, len) == 0)
            return map[i].hash;
    }
    return 0;
}

static int load_n(BIGNUM *n) {
    return bn_from_hex(n, N_HEX, sizeof(N_HEX) - 1) == 0 ? 0 : FFB_E_CRYPT;
}

/* A = g^a mod N, written as hex into s. */
static int compute_A(ffb__srp *s, BIGNUM *a, const BIGNUM *n, BN_CTX *ctx,
                     int *trivial) {
    uint8_t buf[N_LEN];
    size_t len;
    BIGNUM *g;
    BIGNUM *A;

    BN_CTX_start(ctx);
    g = BN_CTX_get(ctx);
    A = BN_CTX_get(ctx);
    if (A == NULL || !BN_set_word(g, SRP_G))
        goto crypt;
    BN_set_flags(a, BN_FLG_CONSTTIME);
    if (!BN_mod_exp(A, g, a, n, ctx))
        goto crypt;
    /* Firebird master draws a new key if A <= 1. */
    *trivial = BN_cmp(A, BN_value_one()) <= 0;
    len = bn_bytes(A, buf, sizeof(buf));
    if (len == (size_t)-1 ||
        to_hex(buf, len, s->A_hex, sizeof(s->A_hex), &s->A_hex_len) != 0)
        goto crypt;
    BN_CTX_end(ctx);
    return 0;
crypt:
    BN_CTX_end(ctx);
    return FFB_E_CRYPT;
}

int ffb__srp_init(ffb__srp *s, int proof_hash, const uint8_t *fixed_a,
                  size_t fixed_a_len) {
    uint8_t rnd[N_LEN];
    BN_CTX *ctx = NULL;
    BIGNUM *n;
    BIGNUM *a;
    BIGNUM *r;
    int tries;
    int trivial = 0;
    int rc;

    if (s == NULL || proof_md(proof_hash) == NULL ||
        (fixed_a == NULL && fixed_a_len != 0) || fixed_a_len > INT32_MAX)
        return FFB_E_INVAL;
    memset(s, 0, sizeof(*s));
    s->proof_hash = proof_hash;

    ctx = BN_CTX_new();
    if (ctx == NULL)
        return FFB_E_CRYPT;
    BN_CTX_start(ctx);
    n = BN_CTX_get(ctx);
    a = BN_CTX_get(ctx);
    r = BN_CTX_get(ctx);
    if (r == NULL || load_n(n) != 0) {
        rc = FFB_E_CRYPT;
        goto done;
    }

    if (fixed_a != NULL) {
        if (BN_bin2bn(fixed_a, (int)fixed_a_len, a) == NULL) {
            rc = FFB_E_CRYPT;
            goto done;
        }
        if (BN_is_zero(a) || BN_cmp(a, n) >= 0) {
            rc = FFB_E_INVAL;
            goto done;
        }
        rc = compute_A(s, a, n, ctx, &trivial);
        if (rc == 0 && trivial)
            rc = FFB_E_INVAL;
    } else {
        /* 6.4.3: 128 random bytes mod N. A zero key or A <= 1 has
         * negligible probability; draw again, a few times at most. */
        rc = FFB_E_CRYPT;
        for (tries = 0; tries < 8; tries++) {
            if (RAND_bytes(rnd, sizeof(rnd)) != 1 ||
                BN_bin2bn(rnd, sizeof(rnd), r) == NULL ||
                !BN_mod(a, r, n, ctx)) {
                rc = FFB_E_CRYPT;
                break;
            }
            if (BN_is_zero(a))
                continue;
            rc = compute_A(s, a, n, ctx, &trivial);
            if (rc != 0 || !trivial)
                break;
            rc = FFB_E_CRYPT;
        }
    }
    if (rc == 0) {
        size_t len = bn_bytes(a, s->a, sizeof(s->a));
        if (len == (size_t)-1)
            rc = FFB_E_CRYPT;
        else
            s->a_len = len;
    }

done:
    OPENSSL_cleanse(rnd, sizeof(rnd));
    BN_CTX_end(ctx);
    BN_CTX_free(ctx); /* clears a */
    if (rc != 0)
        OPENSSL_cleanse(s, sizeof(*s));
    return rc;
}

/* Split the server data of 6.4.4 into salt text and B text. */
static int parse_server_data(const uint8_t *data, size_t len, const char **salt,
                             size_t *salt_len, const char **b_hex,
                             size_t *b_len) {
    size_t ls;
    size_t lb;

    if (len == 0)
        return FFB_E_AUTH; /* isc_auth_data */
    if (data == NULL)
        return FFB_E_INVAL;
    if (len > SERVER_DATA_MAX || len < 4)
        return FFB_E_PROTO; /* isc_auth_datalength */
    ls = (size_t)data[0] | (size_t)data[1] << 8;
    if (ls > SALT_MAX || ls > len - 4)
        return FFB_E_PROTO;
    lb = (size_t)data[2 + ls] | (size_t)data[3 + ls] << 8;
    if (lb != len - 4 - ls)
        return FFB_E_PROTO;
    *salt = (const char *)data + 2;
    *salt_len = ls;
    *b_hex = (const char *)data + 4 + ls;
    *b_len = lb;
    return 0;
}

int ffb__srp_proof(const ffb__srp *s, const uint8_t *data, size_t len,
                   const char *login, size_t login_len, const char *password,
                   size_t password_len, char *proof_hex, size_t proof_hex_size,
                   size_t *proof_len, uint8_t K[20]) {
    static const uint8_t colon = ':';
    static const uint8_t g_byte = SRP_G;
    uint8_t n_buf[N_LEN];
    uint8_t a_buf[NUM_BUF];
    uint8_t b_buf[NUM_BUF];
    uint8_t s_buf[NUM_BUF];
    uint8_t n1_buf[N_LEN];
    uint8_t n2_buf[SHA1_LEN];
    uint8_t k_in[2 * N_LEN];
    uint8_t h[SHA1_LEN];
    uint8_t h2[SHA1_LEN];
    uint8_t m[EVP_MAX_MD_SIZE];
    size_t n_len;
    size_t a_len;
    size_t b_len;
    size_t s_len;
    size_t n1_len;
    size_t n2_len;
    const char *salt;
    size_t salt_len;
    const char *b_hex;
    size_t b_hex_len;
    const EVP_MD *md;
    BN_CTX *ctx = NULL;
    BIGNUM *n, *g, *k, *a, *A, *B, *x, *u, *gx, *t, *e, *S, *n1, *n2;
    int rc;

    if (s == NULL || (login == NULL && login_len != 0) ||
        (password == NULL && password_len != 0) || proof_hex == NULL ||
        proof_len == NULL || K == NULL || s->a_len == 0 ||
        s->a_len > sizeof(s->a) || s->A_hex_len == 0 ||
        s->A_hex_len >= sizeof(s->A_hex))
        return FFB_E_INVAL;
    md = proof_md(s->proof_hash);
    if (md == NULL)
        return FFB_E_INVAL;
    rc = parse_server_data(data, len, &salt, &salt_len, &b_hex, &b_hex_len);
    if (rc != 0)
        return rc;

    ctx = BN_CTX_new();
    if (ctx == NULL)
        return FFB_E_CRYPT;
    BN_CTX_start(ctx);
    n = BN_CTX_get(ctx);
    g = BN_CTX_get(ctx);
    k = BN_CTX_get(ctx);
    a = BN_CTX_get(ctx);
    A = BN_CTX_get(ctx);
    B = BN_CTX_get(ctx);
    x = BN_CTX_get(ctx);
    u = BN_CTX_get(ctx);
    gx = BN_CTX_get(ctx);
    t = BN_CTX_get(ctx);
    e = BN_CTX_get(ctx);
    S = BN_CTX_get(ctx);
    n1 = BN_CTX_get(ctx);
    n2 = BN_CTX_get(ctx);
    rc = FFB_E_CRYPT;
    if (n2 == NULL || load_n(n) != 0 || !BN_set_word(g, SRP_G))
        goto done;

    rc = bn_from_hex(B, b_hex, b_hex_len);
    if (rc != 0)
        goto done;
    rc = FFB_E_CRYPT;
    /* "Trivial public key" check of Firebird master. */
    if (!BN_nnmod(t, B, n, ctx))
        goto done;
    if (BN_cmp(t, BN_value_one()) <= 0) {
        rc = FFB_E_AUTH;
        goto done;
    }

    if (BN_bin2bn(s->a, (int)s->a_len, a) == NULL ||
        bn_from_hex(A, s->A_hex, s->A_hex_len) != 0)
        goto done;
    BN_set_flags(a, BN_FLG_CONSTTIME);
    n_len = bn_bytes(n, n_buf, sizeof(n_buf));
    a_len = bn_bytes(A, a_buf, sizeof(a_buf));
    b_len = bn_bytes(B, b_buf, sizeof(b_buf));
    if (n_len != N_LEN || a_len == (size_t)-1 || b_len == (size_t)-1)
        goto done;

    /* k = H(N || pad(g)) */
    memcpy(k_in, n_buf, N_LEN);
    memset(k_in + N_LEN, 0, N_LEN - 1);
    k_in[2 * N_LEN - 1] = SRP_G;
    {
        const struct part p[] = {{k_in, sizeof(k_in)}};
        if (sha1(p, 1, h) != 0 || BN_bin2bn(h, SHA1_LEN, k) == NULL)
            goto done;
    }
    /* x = H(salt || H(I || ":" || P)) */
    {
        const struct part p1[] = {
            {login, login_len}, {&colon, 1}, {password, password_len}};
        const struct part p2[] = {{salt, salt_len}, {h2, SHA1_LEN}};
        if (sha1(p1, 3, h2) != 0 || sha1(p2, 2, h) != 0 ||
            BN_bin2bn(h, SHA1_LEN, x) == NULL)
            goto done;
    }
    /* u = H(bytes(A) || bytes(B)) */
    {
        const struct part p[] = {{a_buf, a_len}, {b_buf, b_len}};
        if (sha1(p, 2, h) != 0 || BN_bin2bn(h, SHA1_LEN, u) == NULL)
            goto done;
    }
    /* S = ((B - k * g^x) mod N) ^ (a + u * x) mod N */
    BN_set_flags(x, BN_FLG_CONSTTIME);
    if (!BN_mod_exp(gx, g, x, n, ctx) || !BN_mod_mul(t, k, gx, n, ctx) ||
        !BN_mod_sub(t, B, t, n, ctx) || !BN_mul(e, u, x, ctx) ||
        !BN_add(e, e, a))
        goto done;
    BN_set_flags(e, BN_FLG_CONSTTIME);
    if (!BN_mod_exp(S, t, e, n, ctx))
        goto done;
    /* K = H(bytes(S)) */
    s_len = bn_bytes(S, s_buf, sizeof(s_buf));
    if (s_len == (size_t)-1)
        goto done;
    {
        const struct part p[] = {{s_buf, s_len}};
        if (sha1(p, 1, K) != 0)
            goto done;
    }
    /* n1 = int(H(bytes(N))) ^ int(H(bytes(g))) mod N, n2 = int(H(I)) */
    {
        const struct part pn[] = {{n_buf, n_len}};
        const struct part pg[] = {{&g_byte, 1}};
        const struct part pi[] = {{login, login_len}};
        if (sha1(pn, 1, h) != 0 || BN_bin2bn(h, SHA1_LEN, t) == NULL ||
            sha1(pg, 1, h) != 0 || BN_bin2bn(h, SHA1_LEN, n1) == NULL ||
            !BN_mod_exp(n1, t, n1, n, ctx) || sha1(pi, 1, h) != 0 ||
            BN_bin2bn(h, SHA1_LEN, n2) == NULL)
            goto done;
        n1_len = bn_bytes(n1, n1_buf, sizeof(n1_buf));
        n2_len = bn_bytes(n2, n2_buf, sizeof(n2_buf));
        if (n1_len == (size_t)-1 || n2_len == (size_t)-1)
            goto done;
    }
    /* M = Hp(bytes(n1) || bytes(n2) || salt || bytes(A) || bytes(B) || K) */
    {
        const struct part p[] = {{n1_buf, n1_len}, {n2_buf, n2_len},
                                 {salt, salt_len}, {a_buf, a_len},
                                 {b_buf, b_len},   {K, SHA1_LEN}};
        if (digest(md, p, 6, m) != 0)
            goto done;
    }
    rc = to_hex(m, (size_t)EVP_MD_get_size(md), proof_hex, proof_hex_size,
                proof_len);

done:
    if (rc != 0)
        OPENSSL_cleanse(K, SHA1_LEN);
    OPENSSL_cleanse(s_buf, sizeof(s_buf));
    OPENSSL_cleanse(h, sizeof(h));
    OPENSSL_cleanse(h2, sizeof(h2));
    OPENSSL_cleanse(m, sizeof(m));
    OPENSSL_cleanse(k_in, sizeof(k_in));
    BN_CTX_end(ctx);
    BN_CTX_free(ctx); /* clears every BIGNUM of the pool */
    return rc;
}

/* 6.4.2: ASCII letters, '_', '$', and digits except in first position. */
static int symbol_char(char c, int first) {
    if (c >= 'a' && c <= 'z')
        return 1;
    if (c >= 'A' && c <= 'Z')
        return 1;
    if (c == '_' || c == '$')
        return 1;
    return !first && c >= '0' && c <= '9';
}

static void ascii_upper(char *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (p[i] >= 'a' && p[i] <= 'z')
            p[i] = (char)(p[i] - 'a' + 'A');
    }
}

/*
 * Mirrors fb_utils::dpbItemUpper (src/common/utils.cpp), including its
 * quirks: the "first character" of a quoted name is the one right after
 * the opening quote, and an escaped quote does not stop a single-quoted
 * name from being upper-cased.
 */
int ffb__login_normalize(const char *in, size_t len, char *out, size_t out_size,
                         size_t *out_len) {
    size_t i;
    size_t o = 0;

    if ((in == NULL && len != 0) || out == NULL || out_len == NULL)
        return FFB_E_INVAL;
    /* The result is never longer than the input. */
    if (out_size < len + 1)
        return FFB_E_INVAL;

    if (len > 0 && (in[0] == '"' || in[0] == '\'')) {
        const char quote = in[0];
        int ascii = 1;
        for (i = 1; i < len; i++) {
            if (in[i] == quote) {
                if (++i >= len) {
                    if (ascii && quote == '\'')
                        ascii_upper(out, o);
                    out[o] = '\0';
                    *out_len = o;
                    return 0;
                }
                if (in[i] != quote) {
                    out[0] = '\0';
                    return FFB_E_INVAL; /* isc_quoted_str_bad */
                }
            } else if (!symbol_char(in[i], i == 1)) {
                ascii = 0;
            }
            out[o++] = in[i];
        }
        out[0] = '\0';
        return FFB_E_INVAL; /* isc_quoted_str_miss */
    }

    for (i = 0; i < len; i++) {
        if (!symbol_char(in[i], i == 0))
            break;
    }
    if (len > 0)
        memcpy(out, in, len);
    if (i == len)
        ascii_upper(out, len);
    out[len] = '\0';
    *out_len = len;
    return 0;
}
