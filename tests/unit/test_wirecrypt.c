/*
 * Wire ciphers (lib/wirecrypt.c).
 *
 * Vectors:
 *  - docs/protocol/01-connection.md 7.3 keystream test vectors (K of the SRP
 *    vector 6.4.8);
 *  - live Firebird 5.0.4 traffic from shared/fixtures/fb5/:
 *    fb5-handshake-srp256-chacha64.conv (ChaCha64, K and IV from its
 *    header) and fb5-handshake-srp-arc4.conv (Arc4, K from its header): the
 *    recorded ciphertext (C/S lines) must decrypt to the recorded plaintext
 *    (c/s lines), one continuous state per direction;
 *  - a reference ChaCha20 block function (RFC 7539 2.3, written here) to
 *    check that OpenSSL carries the 32-bit block counter into state word 13,
 *    which ChaCha64 relies on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/hex.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "include/fastfb.h"
#include "lib/wirecrypt.h"

/* ---- helpers ---------------------------------------------------------- */


static ffb__cipher *make(const char *plugin, const char *key_hex,
                         const char *iv_hex) {
    uint8_t key[64];
    uint8_t iv[32];
    size_t key_len = test_unhex(key_hex, key, sizeof(key));
    size_t iv_len = test_unhex(iv_hex, iv, sizeof(iv));
    ffb__cipher *c = NULL;
    assert_int_equal(ffb__cipher_new(&c, NULL, plugin, key, key_len,
                                     iv_len ? iv : NULL, iv_len),
                     0);
    assert_non_null(c);
    return c;
}

/* Apply to the hex input and compare with the hex output. */
static void apply_hex(ffb__cipher *c, const char *in_hex,
                      const char *want_hex) {
    uint8_t in[512];
    uint8_t want[512];
    uint8_t out[512];
    size_t n = test_unhex(in_hex, in, sizeof(in));
    assert_int_equal(test_unhex(want_hex, want, sizeof(want)), n);
    assert_int_equal(ffb__cipher_apply(c, in, out, n), 0);
    assert_memory_equal(out, want, n);
}

static void keystream(ffb__cipher *c, uint8_t *out, size_t n) {
    memset(out, 0, n);
    assert_int_equal(ffb__cipher_apply(c, out, out, n), 0);
}

/* ---- 7.3 vectors ------------------------------------------------------- */

#define K_HEX "BAF2AC1E2FE66C9B1E05A76380FE08C9161CBF78"

static void test_cipher_arc4_vector(void **state) {
    ffb__cipher *c = make("Arc4", K_HEX, "");
    (void)state;
    apply_hex(c, "00000000000000000000000000000000",
              "BB3AAFEF3EBE74D9BB8C21C7C1CDFEBF");
    ffb__cipher_free(c);
}

static void test_cipher_chacha_vector(void **state) {
    ffb__cipher *c = make("ChaCha", K_HEX, "0102030405060708090A0B0C00000000");
    (void)state;
    apply_hex(
        c, "0000000000000000000000000000000000000000000000000000000000000000",
        "3769838BB4435E62F2672B4C38508DAF64DDE867F7FF717C8A1D47AC1BFEB0F5");
    ffb__cipher_free(c);
    /* 12-byte IV: counter 0, same stream */
    c = make("ChaCha", K_HEX, "0102030405060708090A0B0C");
    apply_hex(
        c, "0000000000000000000000000000000000000000000000000000000000000000",
        "3769838BB4435E62F2672B4C38508DAF64DDE867F7FF717C8A1D47AC1BFEB0F5");
    ffb__cipher_free(c);
}

static void test_cipher_chacha64_vector(void **state) {
    ffb__cipher *c = make("ChaCha64", K_HEX, "A1A2A3A4A5A6A7A8");
    (void)state;
    apply_hex(
        c, "0000000000000000000000000000000000000000000000000000000000000000",
        "871AC91DF53DA9B3FA70257C2644852CBDD981E5165095949704A6604D60B04E");
    ffb__cipher_free(c);
}

/* Bytes 12..15 of a ChaCha IV are a big-endian initial block counter. */
static void test_cipher_chacha_counter_from_iv(void **state) {
    uint8_t ref[64 * 3];
    uint8_t ks[64 * 2];
    ffb__cipher *c;
    (void)state;
    c = make("ChaCha", K_HEX, "0102030405060708090A0B0C00000000");
    keystream(c, ref, sizeof(ref));
    ffb__cipher_free(c);
    c = make("ChaCha", K_HEX, "0102030405060708090A0B0C00000001");
    keystream(c, ks, sizeof(ks));
    ffb__cipher_free(c);
    assert_memory_equal(ks, ref + 64, sizeof(ks));
}

/* ChaCha stops at the end of the 32-bit counter (libtomcrypt overflows). */
static void test_cipher_chacha_counter_exhausted(void **state) {
    uint8_t buf[200];
    ffb__cipher *c;
    (void)state;
    memset(buf, 0, sizeof(buf));
    c = make("ChaCha", K_HEX, "0102030405060708090A0B0CFFFFFFFF");
    assert_int_equal(ffb__cipher_apply(c, buf, buf, 64), 0);
    assert_int_equal(ffb__cipher_apply(c, buf, buf, 0), 0);
    assert_int_equal(ffb__cipher_apply(c, buf, buf, 1), FFB_E_CRYPT);
    assert_int_equal(ffb__cipher_apply(c, buf, buf, 0), FFB_E_CRYPT);
    ffb__cipher_free(c);
    c = make("ChaCha", K_HEX, "0102030405060708090A0B0CFFFFFFFE");
    assert_int_equal(ffb__cipher_apply(c, buf, buf, 100), 0);
    assert_int_equal(ffb__cipher_apply(c, buf, buf, 28), 0);
    assert_int_equal(ffb__cipher_apply(c, buf, buf, 1), FFB_E_CRYPT);
    ffb__cipher_free(c);
    c = make("ChaCha", K_HEX, "0102030405060708090A0B0CFFFFFFFE");
    assert_int_equal(ffb__cipher_apply(c, buf, buf, 129), FFB_E_CRYPT);
    ffb__cipher_free(c);
}

/* Streaming in odd pieces (and in place) equals one call. */
static void check_streaming(const char *plugin, const char *iv_hex) {
    static const size_t pieces[] = {1,   3,   7, 63,  64, 65,   1, 127,
                                    128, 129, 5, 250, 0,  1000, 17};
    uint8_t plain[2200];
    uint8_t one[2200];
    uint8_t many[2200];
    size_t i;
    size_t off = 0;
    ffb__cipher *c;

    for (i = 0; i < sizeof(plain); i++)
        plain[i] = (uint8_t)(i * 7 + 3);
    c = make(plugin, K_HEX, iv_hex);
    assert_int_equal(ffb__cipher_apply(c, plain, one, sizeof(plain)), 0);
    ffb__cipher_free(c);

    c = make(plugin, K_HEX, iv_hex);
    memcpy(many, plain, sizeof(plain));
    for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
        assert_true(off + pieces[i] <= sizeof(many));
        assert_int_equal(
            ffb__cipher_apply(c, many + off, many + off, pieces[i]), 0);
        off += pieces[i];
    }
    assert_int_equal(
        ffb__cipher_apply(c, many + off, many + off, sizeof(many) - off), 0);
    ffb__cipher_free(c);
    assert_memory_equal(one, many, sizeof(one));
    assert_memory_not_equal(one, plain, 64);

    /* decrypting with a second state gives the plaintext back */
    c = make(plugin, K_HEX, iv_hex);
    assert_int_equal(ffb__cipher_apply(c, one, one, sizeof(one)), 0);
    ffb__cipher_free(c);
    assert_memory_equal(one, plain, sizeof(plain));
}

static void test_cipher_streaming(void **state) {
    (void)state;
    check_streaming("Arc4", "");
    check_streaming("ChaCha", "0102030405060708090A0B0C00000000");
    check_streaming("ChaCha64", "A1A2A3A4A5A6A7A8");
}

/* ---- OpenSSL's counter carry (what ChaCha64 relies on) ----------------- */

static uint32_t rotl(uint32_t v, int n) {
    return (uint32_t)(v << n) | (v >> (32 - n));
}

static void quarter(uint32_t *x, int a, int b, int c, int d) {
    x[a] += x[b];
    x[d] = rotl(x[d] ^ x[a], 16);
    x[c] += x[d];
    x[b] = rotl(x[b] ^ x[c], 12);
    x[a] += x[b];
    x[d] = rotl(x[d] ^ x[a], 8);
    x[c] += x[d];
    x[b] = rotl(x[b] ^ x[c], 7);
}

/* RFC 7539 2.3: one 64-byte keystream block of the 16-word state. */
static void chacha_block(const uint32_t in[16], uint8_t out[64]) {
    uint32_t x[16];
    int i;
    memcpy(x, in, sizeof(x));
    for (i = 0; i < 10; i++) {
        quarter(x, 0, 4, 8, 12);
        quarter(x, 1, 5, 9, 13);
        quarter(x, 2, 6, 10, 14);
        quarter(x, 3, 7, 11, 15);
        quarter(x, 0, 5, 10, 15);
        quarter(x, 1, 6, 11, 12);
        quarter(x, 2, 7, 8, 13);
        quarter(x, 3, 4, 9, 14);
    }
    for (i = 0; i < 16; i++) {
        uint32_t v = x[i] + in[i];
        out[4 * i] = (uint8_t)v;
        out[4 * i + 1] = (uint8_t)(v >> 8);
        out[4 * i + 2] = (uint8_t)(v >> 16);
        out[4 * i + 3] = (uint8_t)(v >> 24);
    }
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void test_openssl_chacha_counter_carry(void **state) {
    /* Words 12..13 = 0xFFFFFFFF, 0x00000007 (a 64-bit counter just below a
     * carry), words 14..15 an 8-byte IV. */
    static const uint8_t iv[16] = {0xFF, 0xFF, 0xFF, 0xFF, 7,    0,
                                   0,    0,    0xA1, 0xA2, 0xA3, 0xA4,
                                   0xA5, 0xA6, 0xA7, 0xA8};
    uint8_t key[32];
    uint8_t ref[64 * 4];
    uint8_t got[64 * 4];
    uint32_t st[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
    EVP_CIPHER_CTX *ctx;
    int n = 0;
    int i;
    size_t off;
    static const int split[] = {10, 100, 54, 92};
    (void)state;

    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)(i * 11 + 5);
    for (i = 0; i < 8; i++)
        st[4 + i] = le32(key + 4 * i);
    for (i = 0; i < 4; i++)
        st[12 + i] = le32(iv + 4 * i);
    for (i = 0; i < 4; i++) {
        chacha_block(st, ref + 64 * i);
        if (++st[12] == 0)
            st[13]++; /* the 64-bit counter of Bernstein's layout */
    }

    /* odd pieces cross the carry inside a buffered partial block */
    ctx = EVP_CIPHER_CTX_new();
    assert_non_null(ctx);
    assert_int_equal(EVP_EncryptInit_ex(ctx, EVP_chacha20(), NULL, key, iv), 1);
    memset(got, 0, sizeof(got));
    off = 0;
    for (i = 0; i < 4; i++) {
        assert_int_equal(
            EVP_EncryptUpdate(ctx, got + off, &n, got + off, split[i]), 1);
        off += (size_t)split[i];
    }
    EVP_CIPHER_CTX_free(ctx);
    assert_memory_equal(got, ref, sizeof(got));

    /* one call of whole blocks crossing the carry */
    ctx = EVP_CIPHER_CTX_new();
    assert_non_null(ctx);
    assert_int_equal(EVP_EncryptInit_ex(ctx, EVP_chacha20(), NULL, key, iv), 1);
    memset(got, 0, sizeof(got));
    assert_int_equal(EVP_EncryptUpdate(ctx, got, &n, got, (int)sizeof(got)), 1);
    EVP_CIPHER_CTX_free(ctx);
    assert_memory_equal(got, ref, sizeof(got));
}

/* ChaCha64 through our API equals the reference at counter 0. */
static void test_cipher_chacha64_reference(void **state) {
    uint8_t k[32];
    uint8_t iv[8] = {0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8};
    uint8_t K[20];
    uint8_t ref[128];
    uint8_t got[128];
    uint32_t st[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
    unsigned k_len = 0;
    ffb__cipher *c = NULL;
    int i;
    (void)state;
    test_unhex(K_HEX, K, sizeof(K));
    assert_int_equal(EVP_Digest(K, 20, k, &k_len, EVP_sha256(), NULL), 1);
    for (i = 0; i < 8; i++)
        st[4 + i] = le32(k + 4 * i);
    st[14] = le32(iv);
    st[15] = le32(iv + 4);
    chacha_block(st, ref);
    st[12] = 1;
    chacha_block(st, ref + 64);
    assert_int_equal(
        ffb__cipher_new(&c, NULL, "ChaCha64", K, 20, iv, sizeof(iv)), 0);
    keystream(c, got, sizeof(got));
    ffb__cipher_free(c);
    assert_memory_equal(got, ref, sizeof(got));
}

/* ---- live FB 5.0.4 traffic -------------------------------------------- */

/* fb5-handshake-srp256-chacha64.conv header: K and the ChaCha64 IV. */
#define FB5_CHACHA64_K "2FDF075E6FA183E3D96B9C5244D93290F165241C"
#define FB5_CHACHA64_IV "2C9BEC757E8630C7"

static void test_cipher_fb5_chacha64(void **state) {
    ffb__cipher *srv = make("ChaCha64", FB5_CHACHA64_K, FB5_CHACHA64_IV);
    ffb__cipher *cli = make("ChaCha64", FB5_CHACHA64_K, FB5_CHACHA64_IV);
    (void)state;
    /* server -> client: the last 32 bytes of the chunk that answers
     * op_cont_auth + op_crypt (the op_crypt answer), then the op_attach
     * answer */
    apply_hex(
        srv, "902A39E13DDDAC169381DEC2197F709F4BD5C6FD804579FE5A85FA58581037A4",
        "0000000900000000000000000000000000000000000000010000000000000000");
    apply_hex(
        srv, "D9F588B8D5FEE243917A9A6DBC333210B2B46855A12ECE12964408E73FE173E9",
        "0000000900000000000000000000000000000000000000010000000000000000");
    /* client -> server: op_attach, op_info_database, op_detach */
    apply_hex(
        cli,
        "902A39FB3DDDAC169381DECA7F1608EB3EA7A38E804579D85B99FC0B014373E6"
        "98C58CE481B8DA0E913D9EFFAC33325ABCD2012DD55BBC76BB27648E5A8F07E9",
        "000000130000000000000008666978747572657300000027011C065359534442"
        "413004555446384D004704921000004A0E666978747572652D636C69656E7400");
    apply_hex(
        cli, "30F22E0794C36E006F0918199E558967BB2D547CCD399198C8080516BE3CF66E",
        "000000280000000000000000000000090C67898C840E3E650100000000000400");
    apply_hex(cli, "54E2B831A93ED341", "0000001500000000");
    ffb__cipher_free(srv);
    ffb__cipher_free(cli);
}

/* fb5-handshake-srp-arc4.conv header: K (the Arc4 key). */
#define FB5_ARC4_K "B4FAB384B6C0C159575729E4F1F6EA6F8184026C"

static void test_cipher_fb5_arc4(void **state) {
    ffb__cipher *srv = make("Arc4", FB5_ARC4_K, "");
    ffb__cipher *cli = make("Arc4", FB5_ARC4_K, "");
    (void)state;
    apply_hex(
        srv, "FC08C703BE778CF0543B6BFCFDD63FBE14A42EEAA82DC4A2A2D9828BB860AF50",
        "0000000900000000000000000000000000000000000000010000000000000000");
    apply_hex(
        srv, "9B73BB4E94FBD97F40A59FDC9BED55075045817E34BA03D1E620C5216AFF72CD",
        "0000000900000000000000000000000000000000000000010000000000000000");
    apply_hex(
        cli,
        "FC08C719BE778CF0543B6BF49BBF47CA61D64B99A82DC484A3C584D8E133EB12"
        "DA43BF12C0BDE13240E29B4E8BED554D5E23E80640CF71B5CB43A9480F9106CD",
        "000000130000000000000008666978747572657300000027011C065359534442"
        "413004555446384D004704921000004A0E666978747572652D636C69656E7400");
    apply_hex(
        cli, "7F5FC5E8676A7E0579A53C143F1B2ACCA300F596184A54604640A8A439F74E35",
        "000000280000000000000000000000090C67898C840E3E650100000000000400");
    ffb__cipher_free(srv);
    ffb__cipher_free(cli);
}

/* ---- arguments and allocation ----------------------------------------- */

static void test_cipher_known(void **state) {
    (void)state;
    assert_int_equal(ffb__cipher_known("Arc4", 4), 1);
    assert_int_equal(ffb__cipher_known("ChaCha", 6), 1);
    assert_int_equal(ffb__cipher_known("ChaCha64", 8), 1);
    assert_int_equal(ffb__cipher_known("ChaCha64", 6), 1); /* "ChaCha" */
    assert_int_equal(ffb__cipher_known("chacha", 6), 0);
    assert_int_equal(ffb__cipher_known("ARC4", 4), 0);
    assert_int_equal(ffb__cipher_known("Arc4 ", 5), 0);
    assert_int_equal(ffb__cipher_known("Arc", 3), 0);
    assert_int_equal(ffb__cipher_known("", 0), 0);
    assert_int_equal(ffb__cipher_known(NULL, 0), 0);
}

static void test_cipher_bad_args(void **state) {
    uint8_t key[20] = {1, 2, 3};
    uint8_t iv[16] = {0};
    ffb__cipher *c = (ffb__cipher *)(uintptr_t)1;
    (void)state;
    assert_int_equal(ffb__cipher_new(&c, NULL, "Foo", key, 20, NULL, 0),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, "chacha64", key, 20, iv, 8),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, "Arc4", key, 20, iv, 8),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, "Arc4", key, 0, NULL, 0),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, "ChaCha", key, 20, iv, 8),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, "ChaCha", key, 20, iv, 15),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, "ChaCha", key, 20, NULL, 0),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, "ChaCha64", key, 20, iv, 16),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, "ChaCha64", key, 20, iv, 12),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, "ChaCha64", key, 15, iv, 8),
                     FFB_E_INVAL); /* Firebird: "Key too short" */
    assert_int_equal(ffb__cipher_new(&c, NULL, "ChaCha64", NULL, 20, iv, 8),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(&c, NULL, NULL, key, 20, iv, 8),
                     FFB_E_INVAL);
    assert_int_equal(ffb__cipher_new(NULL, NULL, "Arc4", key, 20, NULL, 0),
                     FFB_E_INVAL);
    assert_ptr_equal(c, (ffb__cipher *)(uintptr_t)1); /* untouched */
    assert_int_equal(ffb__cipher_new(&c, NULL, "ChaCha64", key, 16, iv, 8), 0);
    assert_int_equal(ffb__cipher_apply(c, NULL, NULL, 0), 0);
    assert_int_equal(ffb__cipher_apply(c, NULL, iv, 1), FFB_E_CRYPT);
    ffb__cipher_free(c);
    ffb__cipher_free(NULL);
}

struct counting {
    int live;
    int calls;
    int fail_at; /* fail the Nth allocation (1-based); 0 = never */
};

static void *count_malloc(size_t size, void *data) {
    struct counting *ct = data;
    if (++ct->calls == ct->fail_at)
        return NULL;
    ct->live++;
    return malloc(size);
}

static void *count_realloc(void *p, size_t size, void *data) {
    struct counting *ct = data;
    void *q;
    if (++ct->calls == ct->fail_at)
        return NULL;
    q = realloc(p, size);
    if (p == NULL && q != NULL)
        ct->live++;
    return q;
}

static void count_free(void *p, void *data) {
    struct counting *ct = data;
    if (p != NULL)
        ct->live--;
    free(p);
}

static void test_cipher_allocator(void **state) {
    struct counting ct = {0, 0, 0};
    ffb_allocator alloc = {count_malloc, count_realloc, count_free, &ct};
    uint8_t key[20] = {9};
    uint8_t iv[8] = {1};
    const char *plugins[] = {"Arc4", "ChaCha64"};
    size_t i;
    (void)state;
    for (i = 0; i < 2; i++) {
        ffb__cipher *c = NULL;
        size_t iv_len = i == 0 ? 0 : 8;
        ct.fail_at = 0;
        ct.calls = 0;
        assert_int_equal(ffb__cipher_new(&c, &alloc, plugins[i], key, 20,
                                         iv_len ? iv : NULL, iv_len),
                         0);
        assert_int_equal(ct.live, 1);
        ffb__cipher_free(c);
        assert_int_equal(ct.live, 0);
        ct.fail_at = 1;
        ct.calls = 0;
        c = NULL;
        assert_int_equal(ffb__cipher_new(&c, &alloc, plugins[i], key, 20,
                                         iv_len ? iv : NULL, iv_len),
                         FFB_E_NOMEM);
        assert_null(c);
        assert_int_equal(ct.live, 0);
    }
}

/* ---- OpenSSL allocation failures --------------------------------------- */

static long ossl_calls;
static long ossl_fail_at; /* fail the Nth call (1-based); 0 = never */

static void *t_malloc(size_t n, const char *file, int line) {
    (void)file;
    (void)line;
    if (++ossl_calls == ossl_fail_at)
        return NULL;
    return malloc(n);
}

static void *t_realloc(void *p, size_t n, const char *file, int line) {
    (void)file;
    (void)line;
    if (++ossl_calls == ossl_fail_at)
        return NULL;
    return realloc(p, n);
}

static void t_free(void *p, const char *file, int line) {
    (void)file;
    (void)line;
    free(p);
}

/* Each OpenSSL allocation of new + apply failed in turn: a clean
 * FFB_E_CRYPT / FFB_E_NOMEM, or the right keystream (leaks: valgrind). */
static void test_cipher_openssl_alloc_failures(void **state) {
    static const char *const cases[][3] = {
        {"ChaCha64", "A1A2A3A4A5A6A7A8",
         "871AC91DF53DA9B3FA70257C2644852CBDD981E5165095949704A6604D60B04E"},
        {"ChaCha", "0102030405060708090A0B0C00000000",
         "3769838BB4435E62F2672B4C38508DAF64DDE867F7FF717C8A1D47AC1BFEB0F5"},
        {"Arc4", "", "BB3AAFEF3EBE74D9BB8C21C7C1CDFEBF"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < 3; i++) {
        uint8_t key[20];
        uint8_t iv[16];
        uint8_t want[32];
        uint8_t ks[32];
        size_t iv_len = test_unhex(cases[i][1], iv, sizeof(iv));
        size_t n_ks = test_unhex(cases[i][2], want, sizeof(want));
        long n;
        test_unhex(K_HEX, key, sizeof(key));
        for (n = 1; n < 100000; n++) {
            ffb__cipher *c = NULL;
            int rc;
            ossl_calls = 0;
            ossl_fail_at = n;
            rc = ffb__cipher_new(&c, NULL, cases[i][0], key, 20,
                                 iv_len ? iv : NULL, iv_len);
            memset(ks, 0, sizeof(ks));
            if (rc == 0)
                rc = ffb__cipher_apply(c, ks, ks, n_ks);
            ffb__cipher_free(c);
            ossl_fail_at = 0;
            if (rc != 0) {
                assert_true(rc == FFB_E_CRYPT || rc == FFB_E_NOMEM);
                continue;
            }
            assert_memory_equal(ks, want, n_ks);
            if (ossl_calls < n)
                break;
        }
        assert_true(n < 100000);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cipher_arc4_vector),
        cmocka_unit_test(test_cipher_chacha_vector),
        cmocka_unit_test(test_cipher_chacha64_vector),
        cmocka_unit_test(test_cipher_chacha_counter_from_iv),
        cmocka_unit_test(test_cipher_chacha_counter_exhausted),
        cmocka_unit_test(test_cipher_streaming),
        cmocka_unit_test(test_openssl_chacha_counter_carry),
        cmocka_unit_test(test_cipher_chacha64_reference),
        cmocka_unit_test(test_cipher_fb5_chacha64),
        cmocka_unit_test(test_cipher_fb5_arc4),
        cmocka_unit_test(test_cipher_known),
        cmocka_unit_test(test_cipher_bad_args),
        cmocka_unit_test(test_cipher_allocator),
        cmocka_unit_test(test_cipher_openssl_alloc_failures),
    };
    /* before OpenSSL allocates anything */
    if (!CRYPTO_set_mem_functions(t_malloc, t_realloc, t_free))
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
