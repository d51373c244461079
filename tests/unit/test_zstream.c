/*
 * Wire compression (lib/zstream.c).
 *
 * Vectors: shared/fixtures/fb5/fb5-handshake-compressed.conv, a live
 * Firebird 5.0.4 conversation with pflag_compress. The FB5_* strings below
 * are copied from it: the client writes after the accept (C lines, made by
 * zlib 1.2.13 deflateInit defaults + one deflate(Z_SYNC_FLUSH) per write)
 * with their plaintext (c lines), and the first three server chunks (S
 * lines) with their plaintext (s lines). One stream per direction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/hex.h"

#include <zlib.h>

#include "include/fastfb.h"
#include "lib/zstream.h"

#define FB5_CLI1_Z                                                             \
    "789C2CCCBB11804008005122EB11383E972970D780A94538F61FA8336EF4A205"         \
    "801300B66895D5DC693757469B9165DC4B56E424972047E16C3511A308D53A93"         \
    "C74031B2547D1FCB715F249FFE1E000000FFFF"
#define FB5_CLI1                                                               \
    "0000005C00000040423444434434383832413738363331374642434437333944"         \
    "3530313343323835423238313533433444463131424432313637393332384245"         \
    "31353732374336360000000653727032353600000000000000000000"
#define FB5_CLI2_Z                                                             \
    "02026128CD91965951525A945A0C64AB33CAB0054706BB38391AB08486B859F8"         \
    "32B8B34C126060F0E2832AD24DCEC94CCD2B6100000000FFFF"
#define FB5_CLI2                                                               \
    "000000130000000000000008666978747572657300000027011C065359534442"         \
    "413004555446384D004704921000004A0E666978747572652D636C69656E7400"
#define FB5_CLI3_Z "02020D24B33879D23B7B5AF8EC5219C15C160600000000FFFF"
#define FB5_CLI3                                                               \
    "000000280000000000000000000000090C67898C840E3E650100000000000400"
#define FB5_SRV1_Z                                                             \
    "789C626060E0644005BE0C9CC195B9B9A9254599C98C22CE1989406466A20061"         \
    "283816259B300BC2441904AF3F89729EBF2C80591C22C460CCFAD83BE6D00587"         \
    "F566D916083319610C00000000FFFF"
#define FB5_SRV1                                                               \
    "000000090000000000000000000000000000004D000953796D6D657472696301"         \
    "1443686143686136342043686143686120417263340311436861436861363400"         \
    "11D7E45A439FA6500317436861436861003305E34B5CC2D040AF366B38000000"         \
    "00000000000000010000000000000000"
#define FB5_SRV2_Z "62C0B40F451E000000FFFF"
#define FB5_SRV2                                                               \
    "0000000900000000000000000000000000000000000000010000000000000000"
#define FB5_SRV3_Z                                                             \
    "C222DFCB23CBC028EDE3A91B66A667AC67A267686168A4E09659949A945994A2"         \
    "60AA6790EEC1C0049607B2B1C96BE191D32F492E50D028CBD5D40F30B4B48AEA"         \
    "6160686101BB868F8581418181C18E918139958501C861E8646210863914EE5E"         \
    "00000000FFFF"
#define FB5_SRV3                                                               \
    "000000090000000000000000000000000000008D0C1D00011B4C492D56362E33"         \
    "2E342E3138313220466972656269726420352E30674800021B4C492D56352E30"         \
    "2E342E3138313220466972656269726420352E302A4C492D56352E302E342E31"         \
    "38313220466972656269726420352E302F7463702028766D292F5031393A5A8C"         \
    "0000840400010000000E0400002000003E010003650400040000008902001300"         \
    "01000000000000010000000000000000"

/* ---- helpers ---------------------------------------------------------- */


struct buf {
    uint8_t *p;
    size_t len;
    size_t cap;
};

static void buf_free(struct buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static int ends_with_sync_marker(const struct buf *b) {
    static const uint8_t marker[4] = {0x00, 0x00, 0xFF, 0xFF};
    return b->len >= 4 && memcmp(b->p + b->len - 4, marker, 4) == 0;
}

/* ---- tests ------------------------------------------------------------ */

static void test_zstream_round_trip(void **state) {
    static const char *msgs[] = {"op_attach", "", "x",
                                 "a longer message, a longer message, a longer",
                                 "\x00\x00\x00\x09\x00\x00\x00\x00"};
    ffb__zstream *tx = NULL;
    ffb__zstream *rx = NULL;
    struct buf wire = {0};
    struct buf plain = {0};
    size_t i;
    (void)state;

    assert_int_equal(ffb__zstream_new(&tx, NULL), 0);
    assert_int_equal(ffb__zstream_new(&rx, NULL), 0);
    for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
        size_t n = i == 4 ? 8 : strlen(msgs[i]);
        wire.len = 0;
        plain.len = 0;
        assert_int_equal(ffb__zstream_deflate(tx, (const uint8_t *)msgs[i], n,
                                              &wire.p, &wire.len, &wire.cap),
                         0);
        if (n == 0) {
            assert_int_equal(wire.len, 0);
            continue;
        }
        if (i == 0) {
            assert_true(wire.len >= 2);
            assert_int_equal(wire.p[0], 0x78);
            assert_int_equal(wire.p[1], 0x9C);
        }
        assert_true(ends_with_sync_marker(&wire));
        assert_int_equal(ffb__zstream_inflate(rx, wire.p, wire.len, &plain.p,
                                              &plain.len, &plain.cap),
                         0);
        assert_int_equal(plain.len, n);
        assert_memory_equal(plain.p, msgs[i], n);
    }
    buf_free(&wire);
    buf_free(&plain);
    ffb__zstream_free(tx);
    ffb__zstream_free(rx);
}

static void test_zstream_appends(void **state) {
    ffb__zstream *z = NULL;
    struct buf b = {0};
    struct buf p = {0};
    size_t first;
    (void)state;
    assert_int_equal(ffb__zstream_new(&z, NULL), 0);
    b.p = malloc(3);
    assert_non_null(b.p);
    memcpy(b.p, "abc", 3);
    b.len = b.cap = 3;
    assert_int_equal(ffb__zstream_deflate(z, (const uint8_t *)"hello", 5, &b.p,
                                          &b.len, &b.cap),
                     0);
    assert_memory_equal(b.p, "abc", 3);
    assert_int_equal(b.p[3], 0x78);
    first = b.len;
    assert_int_equal(ffb__zstream_deflate(z, (const uint8_t *)"world", 5, &b.p,
                                          &b.len, &b.cap),
                     0);
    assert_true(b.len > first);
    assert_true(b.len <= b.cap);
    ffb__zstream_free(z);

    /* inflate both flushes, appending after existing bytes */
    assert_int_equal(ffb__zstream_new(&z, NULL), 0);
    p.p = malloc(1);
    assert_non_null(p.p);
    p.p[0] = '>';
    p.len = p.cap = 1;
    assert_int_equal(
        ffb__zstream_inflate(z, b.p + 3, b.len - 3, &p.p, &p.len, &p.cap), 0);
    assert_int_equal(p.len, 11);
    assert_memory_equal(p.p, ">helloworld", 11);
    ffb__zstream_free(z);
    buf_free(&b);
    buf_free(&p);
}

static void test_zstream_large(void **state) {
    const size_t n = 3u << 20;
    uint8_t *data = malloc(n);
    ffb__zstream *tx = NULL;
    ffb__zstream *rx = NULL;
    struct buf wire = {0};
    struct buf plain = {0};
    uint32_t x = 12345;
    size_t i;
    (void)state;
    assert_non_null(data);
    /* half incompressible, half very compressible */
    for (i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = i < n / 2 ? (uint8_t)(x >> 24) : (uint8_t)(i % 7);
    }
    assert_int_equal(ffb__zstream_new(&tx, NULL), 0);
    assert_int_equal(ffb__zstream_new(&rx, NULL), 0);
    assert_int_equal(
        ffb__zstream_deflate(tx, data, n, &wire.p, &wire.len, &wire.cap), 0);
    assert_true(ends_with_sync_marker(&wire));
    assert_int_equal(ffb__zstream_inflate(rx, wire.p, wire.len, &plain.p,
                                          &plain.len, &plain.cap),
                     0);
    assert_int_equal(plain.len, n);
    assert_memory_equal(plain.p, data, n);
    free(data);
    buf_free(&wire);
    buf_free(&plain);
    ffb__zstream_free(tx);
    ffb__zstream_free(rx);
}

/* Our deflater reproduces the recorded client bytes (same zlib). */
static void test_zstream_fb5_client_bytes(void **state) {
    static const char *const pairs[][2] = {
        {FB5_CLI1, FB5_CLI1_Z}, {FB5_CLI2, FB5_CLI2_Z}, {FB5_CLI3, FB5_CLI3_Z}};
    ffb__zstream *z = NULL;
    ffb__zstream *rx = NULL;
    struct buf wire = {0};
    struct buf plain = {0};
    size_t i;
    (void)state;
    assert_int_equal(ffb__zstream_new(&z, NULL), 0);
    assert_int_equal(ffb__zstream_new(&rx, NULL), 0);
    for (i = 0; i < 3; i++) {
        size_t in_len;
        size_t want_len;
        uint8_t *in = test_unhex_alloc(pairs[i][0], &in_len);
        uint8_t *want = test_unhex_alloc(pairs[i][1], &want_len);
        wire.len = 0;
        plain.len = 0;
        assert_int_equal(
            ffb__zstream_deflate(z, in, in_len, &wire.p, &wire.len, &wire.cap),
            0);
        /* the recorded client stream also inflates correctly */
        assert_int_equal(ffb__zstream_inflate(rx, want, want_len, &plain.p,
                                              &plain.len, &plain.cap),
                         0);
        assert_int_equal(plain.len, in_len);
        assert_memory_equal(plain.p, in, in_len);
        if (strcmp(zlibVersion(), "1.2.13") == 0) {
            assert_int_equal(wire.len, want_len);
            assert_memory_equal(wire.p, want, want_len);
        }
        free(in);
        free(want);
    }
    buf_free(&wire);
    buf_free(&plain);
    ffb__zstream_free(z);
    ffb__zstream_free(rx);
}

/* The server's stream, whole chunks and then byte by byte. */
static void test_zstream_fb5_server_chunks(void **state) {
    static const char *const pairs[][2] = {
        {FB5_SRV1_Z, FB5_SRV1}, {FB5_SRV2_Z, FB5_SRV2}, {FB5_SRV3_Z, FB5_SRV3}};
    int bytewise;
    (void)state;
    for (bytewise = 0; bytewise < 2; bytewise++) {
        ffb__zstream *z = NULL;
        struct buf plain = {0};
        size_t i;
        assert_int_equal(ffb__zstream_new(&z, NULL), 0);
        for (i = 0; i < 3; i++) {
            size_t in_len;
            size_t want_len;
            uint8_t *in = test_unhex_alloc(pairs[i][0], &in_len);
            uint8_t *want = test_unhex_alloc(pairs[i][1], &want_len);
            plain.len = 0;
            if (bytewise) {
                size_t j;
                for (j = 0; j < in_len; j++)
                    assert_int_equal(ffb__zstream_inflate(z, in + j, 1,
                                                          &plain.p, &plain.len,
                                                          &plain.cap),
                                     0);
            } else {
                assert_int_equal(ffb__zstream_inflate(z, in, in_len, &plain.p,
                                                      &plain.len, &plain.cap),
                                 0);
            }
            assert_int_equal(plain.len, want_len);
            assert_memory_equal(plain.p, want, want_len);
            free(in);
            free(want);
        }
        buf_free(&plain);
        ffb__zstream_free(z);
    }
}

static void test_zstream_corrupt(void **state) {
    static const uint8_t bad_header[] = {0x78, 0x9D, 0x00, 0x00};
    static const uint8_t raw_deflate[] = {0x62, 0xC0, 0xB4, 0x0F, 0x45};
    static const uint8_t bad_block[] = {0x78, 0x9C, 0xFF, 0xFF, 0xFF, 0xFF};
    const uint8_t *cases[] = {bad_header, raw_deflate, bad_block};
    const size_t lens[] = {sizeof(bad_header), sizeof(raw_deflate),
                           sizeof(bad_block)};
    size_t i;
    (void)state;
    for (i = 0; i < 3; i++) {
        ffb__zstream *z = NULL;
        struct buf plain = {0};
        assert_int_equal(ffb__zstream_new(&z, NULL), 0);
        assert_int_equal(ffb__zstream_inflate(z, cases[i], lens[i], &plain.p,
                                              &plain.len, &plain.cap),
                         FFB_E_PROTO);
        /* stays failed */
        assert_int_equal(ffb__zstream_inflate(z, cases[i], 1, &plain.p,
                                              &plain.len, &plain.cap),
                         FFB_E_PROTO);
        /* the other direction still works */
        assert_int_equal(ffb__zstream_deflate(z, (const uint8_t *)"a", 1,
                                              &plain.p, &plain.len, &plain.cap),
                         0);
        buf_free(&plain);
        ffb__zstream_free(z);
    }
}

/* A finished stream (Z_FINISH) is not what Firebird sends. */
static void test_zstream_finished_stream(void **state) {
    uint8_t comp[64];
    uLongf comp_len = sizeof(comp);
    ffb__zstream *z = NULL;
    struct buf plain = {0};
    (void)state;
    assert_int_equal(compress(comp, &comp_len, (const Bytef *)"abc", 3), Z_OK);
    assert_int_equal(ffb__zstream_new(&z, NULL), 0);
    assert_int_equal(ffb__zstream_inflate(z, comp, comp_len, &plain.p,
                                          &plain.len, &plain.cap),
                     FFB_E_PROTO);
    buf_free(&plain);
    ffb__zstream_free(z);
}

static void test_zstream_bad_args(void **state) {
    ffb__zstream *z = NULL;
    struct buf b = {0};
    size_t len = 5;
    (void)state;
    assert_int_equal(ffb__zstream_new(NULL, NULL), FFB_E_INVAL);
    assert_int_equal(ffb__zstream_new(&z, NULL), 0);
    assert_int_equal(ffb__zstream_deflate(z, NULL, 1, &b.p, &b.len, &b.cap),
                     FFB_E_INVAL);
    assert_int_equal(
        ffb__zstream_deflate(z, (const uint8_t *)"a", 1, NULL, &b.len, &b.cap),
        FFB_E_INVAL);
    assert_int_equal(
        ffb__zstream_inflate(z, (const uint8_t *)"a", 1, &b.p, &len, &b.cap),
        FFB_E_INVAL); /* len > cap */
    assert_int_equal(ffb__zstream_inflate(NULL, (const uint8_t *)"a", 1, &b.p,
                                          &b.len, &b.cap),
                     FFB_E_INVAL);
    assert_int_equal(ffb__zstream_inflate(z, NULL, 0, &b.p, &b.len, &b.cap), 0);
    assert_int_equal(b.len, 0);
    ffb__zstream_free(z);
    ffb__zstream_free(NULL);
}

struct counting {
    long live;
    long calls;
    long fail_at; /* fail the Nth call (1-based); 0 = never */
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

/* One round trip through the counting allocator; returns the first error. */
static int alloc_round_trip(struct counting *ct, const ffb_allocator *alloc) {
    static const char msg[] = "some packet bytes, some packet bytes";
    ffb__zstream *z = NULL;
    uint8_t *wire = NULL;
    size_t wire_len = 0;
    size_t wire_cap = 0;
    uint8_t *plain = NULL;
    size_t plain_len = 0;
    size_t plain_cap = 0;
    int rc;

    rc = ffb__zstream_new(&z, alloc);
    if (rc != 0) {
        assert_null(z);
        return rc;
    }
    rc = ffb__zstream_deflate(z, (const uint8_t *)msg, sizeof(msg), &wire,
                              &wire_len, &wire_cap);
    if (rc == 0)
        rc = ffb__zstream_inflate(z, wire, wire_len, &plain, &plain_len,
                                  &plain_cap);
    if (rc == 0) {
        assert_int_equal(plain_len, sizeof(msg));
        assert_memory_equal(plain, msg, sizeof(msg));
    }
    if (wire != NULL)
        count_free(wire, ct);
    if (plain != NULL)
        count_free(plain, ct);
    ffb__zstream_free(z);
    return rc;
}

static void test_zstream_allocator(void **state) {
    struct counting ct = {0, 0, 0};
    ffb_allocator alloc = {count_malloc, count_realloc, count_free, &ct};
    long n;
    (void)state;
    /* everything through the allocator, balanced */
    assert_int_equal(alloc_round_trip(&ct, &alloc), 0);
    assert_int_equal(ct.live, 0);
    assert_true(ct.calls >= 5); /* object, zlib's states and windows, bufs */
    /* fail each allocation in turn */
    for (n = 1;; n++) {
        int rc;
        ct.live = 0;
        ct.calls = 0;
        ct.fail_at = n;
        rc = alloc_round_trip(&ct, &alloc);
        assert_int_equal(ct.live, 0);
        if (rc == 0)
            break;
        assert_int_equal(rc, FFB_E_NOMEM);
    }
    assert_true(n > 5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zstream_round_trip),
        cmocka_unit_test(test_zstream_appends),
        cmocka_unit_test(test_zstream_large),
        cmocka_unit_test(test_zstream_fb5_client_bytes),
        cmocka_unit_test(test_zstream_fb5_server_chunks),
        cmocka_unit_test(test_zstream_corrupt),
        cmocka_unit_test(test_zstream_finished_stream),
        cmocka_unit_test(test_zstream_bad_args),
        cmocka_unit_test(test_zstream_allocator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
