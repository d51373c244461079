/*
 * The array wire formats (proto/slice.c) on byte vectors: the SDL as
 * src/yvalve/array.cpp gen_sdl writes it (plus blr_text2/varying2 with a
 * character set), the op_get_slice/op_put_slice request, op_slice decoding
 * with its bounds, and the op_info_cursor answer (proto/scroll.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/ops.h"
#include "proto/scroll.h"
#include "proto/slice.h"
#include "proto/sql.h"

static void expect_bytes(const ffbp_writer *w, const uint8_t *want, size_t n) {
    assert_int_equal(w->len, n);
    assert_memory_equal(w->data, want, n);
}

static void test_sdl(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    /* INTEGER[-2:2] of T.A: do2 with tiny literals. */
    ffbp_sdl s = {FFBP_BLR_LONG, 0, 0, -1, "T", "A", 1, {-2}, {2}};
    assert_int_equal(ffbp_put_sdl(&w, &s), FFBP_OK);
    static const uint8_t a[] = {1, 6,   1,    8, 0, 2,    1,   'T', 4,
                                1, 'A', 0x22, 0, 9, 0xFE, 9,   2,   0x24,
                                1, 8,   0,    1, 7, 0,    0xFF};
    expect_bytes(&w, a, sizeof(a));
    /* NUMERIC(9,2)[3, 1000:100000]: do1, short and long literals. */
    ffbp_writer_reset(&w);
    ffbp_sdl s2 = {FFBP_BLR_LONG, -2, 0,         -1,         "T",
                   "N",           2,  {1, 1000}, {3, 100000}};
    assert_int_equal(ffbp_put_sdl(&w, &s2), FFBP_OK);
    static const uint8_t b[] = {1,    6,   1,    8,    0xFE, 2, 1,    'T',  4,
                                1,    'N', 0x23, 0,    9,    3, 0x22, 1,    10,
                                0xE8, 3,   11,   0xA0, 0x86, 1, 0,    0x24, 1,
                                8,    0,   2,    7,    0,    7, 1,    0xFF};
    expect_bytes(&w, b, sizeof(b));
    /* CHAR(3) UTF8 (12 bytes): blr_text2, charset 4, length 12. */
    ffbp_writer_reset(&w);
    ffbp_sdl s3 = {FFBP_BLR_TEXT, 0, 12, 4, "", "C", 1, {1}, {2}};
    assert_int_equal(ffbp_put_sdl(&w, &s3), FFBP_OK);
    static const uint8_t c[] = {1, 6, 1, 15,  4,    0, 12,  0, 2,
                                0, 4, 1, 'C', 0x23, 0, 9,   2, 0x24,
                                1, 8, 0, 1,   7,    0, 0xFF};
    expect_bytes(&w, c, sizeof(c));
    /* Refused: no dimensions, 17, lower > upper, BLOB elements. */
    ffbp_writer_reset(&w);
    s.dims = 0;
    assert_int_equal(ffbp_put_sdl(&w, &s), FFBP_EBAD);
    s.dims = 17;
    assert_int_equal(ffbp_put_sdl(&w, &s), FFBP_EBAD);
    s.dims = 1;
    s.lower[0] = 3;
    assert_int_equal(ffbp_put_sdl(&w, &s), FFBP_EBAD);
    s.lower[0] = 1;
    s.blr = FFBP_BLR_BLOB2;
    assert_int_equal(ffbp_put_sdl(&w, &s), FFBP_EBAD);
    assert_int_equal(w.len, 0);
    ffbp_writer_free(&w);
}

static void test_request(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    static const uint8_t sdl[] = {1, 2, 3};
    static const uint8_t el[] = {0, 0, 0, 7};
    ffbp_put_slice_request(&w, FFBP_OP_PUT_SLICE, 5, 0x0000000100000002ull, 4,
                           sdl, 3, 4, el, 4);
    static const uint8_t want[] = {0, 0, 0, 59, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0,
                                   0, 2, 0, 0,  0, 4, 0, 0, 0, 3, 1, 2, 3, 0,
                                   0, 0, 0, 0,  0, 0, 0, 4, 0, 0, 0, 7};
    expect_bytes(&w, want, sizeof(want));
    ffbp_writer_free(&w);
}

static void test_get_slice(void **state) {
    (void)state;
    /* SMALLINT x 3 (native 6 bytes), each 4 on the wire. */
    static const uint8_t pkt[] = {0, 0, 0, 60, 0,    0,    0,    6,
                                  0, 0, 0, 6,  0xFF, 0xFF, 0xFF, 0xFF,
                                  0, 0, 0, 1,  0,    0,    0x7F, 0xFF};
    ffbp_reader r;
    ffbp_slice s;
    ffbp_reader_init(&r, pkt, sizeof(pkt));
    assert_int_equal(ffbp_get_slice(&r, FFBP_BLR_SHORT, 0, 3, &s), FFBP_OK);
    assert_int_equal(s.count, 3);
    assert_int_equal(s.elems_len, 12);
    assert_int_equal(r.pos, sizeof(pkt));
    for (size_t cut = 0; cut < sizeof(pkt); cut++) {
        ffbp_reader_init(&r, pkt, cut);
        assert_int_equal(ffbp_get_slice(&r, FFBP_BLR_SHORT, 0, 3, &s),
                         FFBP_INCOMPLETE);
        assert_int_equal(r.pos, 0);
    }
    /* More elements than asked for; a length that is no element count. */
    ffbp_reader_init(&r, pkt, sizeof(pkt));
    assert_int_equal(ffbp_get_slice(&r, FFBP_BLR_SHORT, 0, 2, &s), FFBP_EBAD);
    assert_int_equal(r.pos, 0);
    ffbp_reader_init(&r, pkt, sizeof(pkt));
    assert_int_equal(ffbp_get_slice(&r, FFBP_BLR_LONG, 0, 3, &s), FFBP_EBAD);
    /* VARCHAR(2) (native 4): "ab", then a length of 3 (too long). */
    static const uint8_t v[] = {0, 0, 0, 60, 0,   0,   0,   8,   0, 0,
                                0, 8, 0, 0,  0,   2,   'a', 'b', 0, 0,
                                0, 0, 0, 3,  'x', 'y', 'z', 0};
    ffbp_reader_init(&r, v, sizeof(v));
    assert_int_equal(ffbp_get_slice(&r, FFBP_BLR_VARYING, 2, 2, &s), FFBP_EBAD);
    ffbp_reader_init(&r, v, 20);
    static const uint8_t v1[] = {0, 0, 0, 60, 0, 0, 0,   4,   0, 0,
                                 0, 4, 0, 0,  0, 2, 'a', 'b', 0, 0};
    ffbp_reader_init(&r, v1, sizeof(v1));
    assert_int_equal(ffbp_get_slice(&r, FFBP_BLR_VARYING, 2, 1, &s), FFBP_OK);
    assert_int_equal(s.count, 1);
    /* Another op. */
    static const uint8_t resp[] = {0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0};
    ffbp_reader_init(&r, resp, sizeof(resp));
    assert_int_equal(ffbp_get_slice(&r, FFBP_BLR_LONG, 0, 1, &s), FFBP_EBAD);
}

static void test_cursor_info(void **state) {
    (void)state;
    int64_t n = 0;
    static const uint8_t ten[] = {0x0A, 4, 0, 10, 0, 0, 0, 1}; /* FB5 */
    assert_int_equal(ffbp_parse_cursor_info(ten, sizeof(ten), &n), FFBP_OK);
    assert_int_equal(n, 10);
    static const uint8_t fwd[] = {0x0A, 4, 0, 0xFF, 0xFF, 0xFF, 0xFF, 1};
    assert_int_equal(ffbp_parse_cursor_info(fwd, sizeof(fwd), &n), FFBP_OK);
    assert_int_equal(n, -1);
    /* FB5's answer to an unknown item: isc_info_error. */
    static const uint8_t err[] = {3, 4, 0, 0x15, 0, 0, 0x14, 2};
    n = 7;
    assert_int_equal(ffbp_parse_cursor_info(err, sizeof(err), &n), FFBP_EBAD);
    assert_int_equal(n, 7);
    assert_int_equal(ffbp_parse_cursor_info(ten, 5, &n), FFBP_EBAD);
    assert_int_equal(ffbp_parse_cursor_info(ten, 0, &n), FFBP_EBAD);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sdl),
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_get_slice),
        cmocka_unit_test(test_cursor_info),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
