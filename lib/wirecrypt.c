/*
 * Wire ciphers (docs/protocol/01-connection.md 7.3): Arc4, ChaCha,
 * ChaCha64, one direction per object.
 *
 * RC4 (Arc4): we use OpenSSL's low-level RC4_set_key()/RC4() API.
 *   OpenSSL 3 moved RC4 out of the default provider into the "legacy"
 *   provider for EVP; the alternative was an EVP cipher fetched from a
 *   private OSSL_LIB_CTX that loads "legacy". We chose the low-level API
 *   because:
 *   - it is compiled into libcrypto itself: no separate provider module
 *     (ossl-modules/legacy.so must be found at run time in OpenSSL's
 *     MODULESDIR or OPENSSL_MODULES, which a trimmed or relocated OpenSSL
 *     may not have), no openssl.cnf dependence, no dlopen at connect time;
 *     it works on a fresh Debian 12 with no configuration change (the
 *     legacy provider happens to be installed there too, in libssl3);
 *   - it has no global side effects: nothing is loaded into the default
 *     library context (loading "legacy" there would change which
 *     algorithms the embedding application sees), and it needs no
 *     per-process private library context to create, share and free;
 *   - Arc4 is fixed by the protocol (plain RC4, no discard), so the
 *     provider machinery buys nothing.
 *   The cost: RC4_* is deprecated since OpenSSL 3.0 (we define
 *   OPENSSL_SUPPRESS_DEPRECATED) and is absent from builds configured with
 *   no-rc4 or no-deprecated (OPENSSL_API_COMPAT >= 30000 also hides it).
 *   Both options were tried on Debian 12 (OpenSSL 3.0.19) and give the 7.3
 *   keystream; the EVP route also needs EVP_CIPHER_CTX_set_key_length(20)
 *   (EVP's RC4 defaults to a 16-byte key, a silent trap), and
 *   EVP_CIPHER_fetch(NULL, "RC4") in the default context fails.
 *
 * ChaCha / ChaCha64: EVP_chacha20() (default provider). OpenSSL's 16-byte
 *   IV is state words 12..15, little-endian: a 32-bit block counter
 *   (word 12) followed by the 12-byte nonce (words 13..15).
 *   - ChaCha (RFC 7539 layout, libtomcrypt chacha_ivctr32): our IV is the
 *     nonce (bytes 0..11) plus an initial counter (bytes 12..15, read
 *     big-endian), so the OpenSSL IV is LE32(counter) || nonce.
 *   - ChaCha64 (Bernstein layout, chacha_ivctr64): 64-bit counter in words
 *     12..13 from 0, the 8-byte IV in words 14..15, so the OpenSSL IV is
 *     8 zero bytes || IV. This relies on OpenSSL carrying the 32-bit
 *     counter of word 12 into word 13: OpenSSL 3.0's chacha20_cipher()
 *     (providers/implementations/ciphers/cipher_chacha20_hw.c) does
 *     exactly that ("if (ctr32 == 0) ctx->counter[1]++"), for whole blocks
 *     and for a buffered partial block. tests/unit/test_wirecrypt.c checks
 *     it against a reference ChaCha20 block function at counter 2^32 - 1.
 *   - For ChaCha the carry would run into the nonce, so apply() refuses to
 *     go past block 2^32 - 1 (FFB_E_CRYPT), as libtomcrypt reports
 *     overflow and Firebird breaks the connection.
 */
#define OPENSSL_SUPPRESS_DEPRECATED

#include "lib/wirecrypt.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rc4.h>

enum cipher_kind { KIND_ARC4 = 1, KIND_CHACHA, KIND_CHACHA64 };

#define CHACHA_KEY_LEN 32
#define CHACHA_IV_LEN 16
#define CHACHA_BLOCK 64
/* Firebird's ChaCha plugin: "Key too short". */
#define CHACHA_MIN_KEY 16
/* EVP_EncryptUpdate takes an int length; feed it in chunks. */
#define EVP_CHUNK ((size_t)1 << 30)

struct ffb__cipher {
    ffb_allocator alloc;
    int has_alloc;
    int kind;
    int broken;
    RC4_KEY rc4;
    EVP_CIPHER_CTX *evp;
    uint64_t left; /* ChaCha: keystream bytes left before the counter wraps */
};

static const struct {
    const char *name;
    int kind;
} plugins[] = {
    {"Arc4", KIND_ARC4},
    {"ChaCha", KIND_CHACHA},
    {"ChaCha64", KIND_CHACHA64},
};

static int kind_of(const char *plugin, size_t len) {
    size_t i;

    if (plugin == NULL)
        return 0;
    for (i = 0; i < sizeof(plugins) / sizeof(plugins[0]); i++) {
        if (strlen(plugins[i].name) == len &&
            memcmp(plugins[i].name, plugin, len) == 0)
            return plugins[i].kind;
    }
    return 0;
}

int ffb__cipher_known(const char *plugin, size_t len) {
    return kind_of(plugin, len) != 0;
}

static void *mem_alloc(const ffb_allocator *alloc, size_t size) {
    return alloc != NULL ? alloc->malloc(size, alloc->data) : malloc(size);
}

static void mem_free(const ffb_allocator *alloc, void *p) {
    if (alloc != NULL)
        alloc->free(p, alloc->data);
    else
        free(p);
}

/* Build the OpenSSL IV (words 12..15) for ChaCha / ChaCha64. */
static int chacha_iv(int kind, const uint8_t *iv, size_t iv_len,
                     uint8_t out[CHACHA_IV_LEN], uint64_t *left) {
    uint32_t counter = 0;

    if (kind == KIND_CHACHA64) {
        if (iv_len != 8)
            return FFB_E_INVAL;
        memset(out, 0, 8);
        memcpy(out + 8, iv, 8);
        *left = UINT64_MAX; /* 2^64 blocks: unreachable */
        return 0;
    }
    if (iv_len != 12 && iv_len != 16)
        return FFB_E_INVAL;
    if (iv_len == 16)
        counter = (uint32_t)iv[12] << 24 | (uint32_t)iv[13] << 16 |
                  (uint32_t)iv[14] << 8 | (uint32_t)iv[15];
    out[0] = (uint8_t)counter;
    out[1] = (uint8_t)(counter >> 8);
    out[2] = (uint8_t)(counter >> 16);
    out[3] = (uint8_t)(counter >> 24);
    memcpy(out + 4, iv, 12);
    *left = ((uint64_t)1 << 32) - counter;
    *left *= CHACHA_BLOCK;
    return 0;
}

static int chacha_init(ffb__cipher *c, const uint8_t *key, size_t key_len,
                       const uint8_t *iv, size_t iv_len) {
    uint8_t k[CHACHA_KEY_LEN];
    uint8_t oiv[CHACHA_IV_LEN];
    unsigned k_len = 0;
    int rc;

    if (key_len < CHACHA_MIN_KEY)
        return FFB_E_INVAL;
    rc = chacha_iv(c->kind, iv, iv_len, oiv, &c->left);
    if (rc != 0)
        return rc;
    rc = FFB_E_CRYPT;
    if (EVP_Digest(key, key_len, k, &k_len, EVP_sha256(), NULL) != 1 ||
        k_len != CHACHA_KEY_LEN)
        goto done;
    c->evp = EVP_CIPHER_CTX_new();
    if (c->evp == NULL)
        goto done;
    if (EVP_EncryptInit_ex(c->evp, EVP_chacha20(), NULL, k, oiv) != 1)
        goto done;
    rc = 0;
done:
    OPENSSL_cleanse(k, sizeof(k));
    return rc;
}

int ffb__cipher_new(ffb__cipher **out, const ffb_allocator *alloc,
                    const char *plugin, const uint8_t *key, size_t key_len,
                    const uint8_t *iv, size_t iv_len) {
    ffb__cipher *c;
    int kind;
    int rc;

    if (out == NULL || plugin == NULL || key == NULL ||
        (iv == NULL && iv_len != 0))
        return FFB_E_INVAL;
    if (alloc != NULL && (alloc->malloc == NULL || alloc->realloc == NULL ||
                          alloc->free == NULL))
        return FFB_E_INVAL;
    kind = kind_of(plugin, strlen(plugin));
    if (kind == 0)
        return FFB_E_INVAL;
    if (kind == KIND_ARC4 && (iv_len != 0 || key_len == 0 || key_len > INT_MAX))
        return FFB_E_INVAL;

    c = mem_alloc(alloc, sizeof(*c));
    if (c == NULL)
        return FFB_E_NOMEM;
    memset(c, 0, sizeof(*c));
    if (alloc != NULL) {
        c->alloc = *alloc;
        c->has_alloc = 1;
    }
    c->kind = kind;

    if (kind == KIND_ARC4) {
        RC4_set_key(&c->rc4, (int)key_len, key);
        rc = 0;
    } else {
        rc = chacha_init(c, key, key_len, iv, iv_len);
    }
    if (rc != 0) {
        ffb__cipher_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int ffb__cipher_apply(ffb__cipher *c, const uint8_t *in, uint8_t *out,
                      size_t len) {
    if (c == NULL || c->broken || ((in == NULL || out == NULL) && len != 0))
        return FFB_E_CRYPT;
    if (len == 0)
        return 0;
    if (c->kind == KIND_ARC4) {
        RC4(&c->rc4, len, in, out);
        return 0;
    }
    if (c->kind == KIND_CHACHA) {
        if (len > c->left) {
            c->broken = 1;
            return FFB_E_CRYPT;
        }
        c->left -= len;
    }
    while (len > 0) {
        size_t n = len < EVP_CHUNK ? len : EVP_CHUNK;
        int out_len = 0;
        if (EVP_EncryptUpdate(c->evp, out, &out_len, in, (int)n) != 1 ||
            out_len != (int)n) {
            c->broken = 1;
            return FFB_E_CRYPT;
        }
        in += n;
        out += n;
        len -= n;
    }
    return 0;
}

void ffb__cipher_free(ffb__cipher *c) {
    ffb_allocator alloc;
    int has_alloc;

    if (c == NULL)
        return;
    EVP_CIPHER_CTX_free(c->evp);
    alloc = c->alloc;
    has_alloc = c->has_alloc;
    OPENSSL_cleanse(c, sizeof(*c));
    mem_free(has_alloc ? &alloc : NULL, c);
}
