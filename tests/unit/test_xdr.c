/*
 * XDR primitives (proto/xdr.c): the bounds-checked reader and the growing
 * writer, on byte vectors from reference 01 section 1.2. Every decoder
 * input sits in front of a guard page (tests/support/guard.c), and short
 * inputs must give FFBP_INCOMPLETE with the cursor untouched.
 */
#include "tests/support/guard.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/xdr.h"

/* A reader over a guard-page copy of `v`. */
typedef struct gvec {
    guard_buf g;
    ffbp_reader r;
} gvec;

static void gvec_init(gvec *gv, const uint8_t *v, size_t len) {
    const uint8_t *p = guard_copy(&gv->g, v, len);
    ffbp_reader_init(&gv->r, p, len);
}

static void gvec_free(gvec *gv) { guard_release(&gv->g); }

/* ---- a test allocator ---------------------------------------------------- */

typedef struct test_alloc {
    int calls;    /* malloc + realloc calls so far */
    int fail_at;  /* 1-based call that fails; 0 = never */
    size_t limit; /* sizes above this fail */
    int live;     /* blocks not freed yet */
    int frees;
} test_alloc;

static void *ta_malloc(size_t n, void *data) {
    test_alloc *t = data;
    t->calls++;
    if (t->calls == t->fail_at || n > t->limit)
        return NULL;
    void *p = malloc(n);
    if (p)
        t->live++;
    return p;
}

static void *ta_realloc(void *p, size_t n, void *data) {
    test_alloc *t = data;
    t->calls++;
    if (t->calls == t->fail_at || n > t->limit)
        return NULL;
    void *q = realloc(p, n);
    if (q && !p)
        t->live++;
    return q;
}

static void ta_free(void *p, void *data) {
    test_alloc *t = data;
    if (p) {
        t->live--;
        t->frees++;
    }
    free(p);
}

static ffb_allocator make_alloc(test_alloc *t, int fail_at) {
    memset(t, 0, sizeof(*t));
    t->fail_at = fail_at;
    t->limit = (size_t)1 << 24;
    ffb_allocator a = {ta_malloc, ta_realloc, ta_free, t};
    return a;
}

/* ---- reader: integers ---------------------------------------------------- */

static void test_xdr_get_u32_big_endian(void **state) {
    (void)state;
    static const uint8_t v[] = {0x12, 0x34, 0x56, 0x78, 0x80, 0x00, 0x00, 0x01};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    uint32_t u = 0;
    int32_t i = 0;
    assert_int_equal(ffbp_get_u32(&gv.r, &u), FFBP_OK);
    assert_int_equal(u, 0x12345678u);
    assert_int_equal(ffbp_get_i32(&gv.r, &i), FFBP_OK);
    assert_int_equal(i, INT32_MIN + 1);
    assert_int_equal(gv.r.pos, 8);
    assert_int_equal(ffbp_reader_left(&gv.r), 0);
    assert_int_equal(ffbp_get_u32(&gv.r, &u), FFBP_INCOMPLETE);
    assert_int_equal(gv.r.pos, 8);
    gvec_free(&gv);
}

static void test_xdr_get_short_sign_extended(void **state) {
    (void)state;
    /* xdr_short 0x800D (protocol 13) travels as FF FF 80 0D. */
    static const uint8_t v[] = {0xFF, 0xFF, 0x80, 0x0D};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    uint16_t s = 0;
    assert_int_equal(ffbp_get_u16(&gv.r, &s), FFBP_OK);
    assert_int_equal(s, 0x800D);
    assert_int_equal(gv.r.pos, 4);
    gvec_free(&gv);
}

static void test_xdr_get_u_short_zero_extended(void **state) {
    (void)state;
    static const uint8_t v[] = {0x00, 0x00, 0x01, 0x05, 0xFF, 0xFF, 0xFF, 0xFF};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    uint16_t s = 0;
    assert_int_equal(ffbp_get_u16(&gv.r, &s), FFBP_OK);
    assert_int_equal(s, 0x0105);
    /* INVALID_OBJECT 0xFFFF sent sign-extended. */
    assert_int_equal(ffbp_get_u16(&gv.r, &s), FFBP_OK);
    assert_int_equal(s, 0xFFFF);
    gvec_free(&gv);
}

static void test_xdr_get_hyper_high_word_first(void **state) {
    (void)state;
    static const uint8_t v[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    int64_t h = 0;
    assert_int_equal(ffbp_get_i64(&gv.r, &h), FFBP_OK);
    assert_true(h == INT64_C(0x0102030405060708));
    assert_int_equal(ffbp_get_i64(&gv.r, &h), FFBP_OK);
    assert_true(h == -2);
    assert_int_equal(gv.r.pos, 16);
    gvec_free(&gv);
}

static void test_xdr_get_quad_high_then_low(void **state) {
    (void)state;
    /* gds_quad_high = 0x81, gds_quad_low = 0x80000002 */
    static const uint8_t v[] = {0x00, 0x00, 0x00, 0x81, 0x80, 0x00, 0x00, 0x02};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    uint64_t q = 0;
    assert_int_equal(ffbp_get_quad(&gv.r, &q), FFBP_OK);
    assert_true(q == UINT64_C(0x0000008180000002));
    gvec_free(&gv);
}

static void test_xdr_integers_short_input_incomplete(void **state) {
    (void)state;
    static const uint8_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (size_t len = 0; len < 8; len++) {
        gvec gv;
        gvec_init(&gv, v, len);
        uint32_t u;
        int32_t i;
        uint16_t s;
        int64_t h;
        uint64_t q;
        if (len < 4) {
            assert_int_equal(ffbp_get_u32(&gv.r, &u), FFBP_INCOMPLETE);
            assert_int_equal(ffbp_get_i32(&gv.r, &i), FFBP_INCOMPLETE);
            assert_int_equal(ffbp_get_u16(&gv.r, &s), FFBP_INCOMPLETE);
        }
        assert_int_equal(ffbp_get_i64(&gv.r, &h), FFBP_INCOMPLETE);
        assert_int_equal(ffbp_get_quad(&gv.r, &q), FFBP_INCOMPLETE);
        assert_int_equal(gv.r.pos, 0);
        gvec_free(&gv);
    }
}

static void test_xdr_get_from_middle_of_buffer(void **state) {
    (void)state;
    static const uint8_t v[] = {0xAA, 0xAA, 0xAA, 0xAA, 0x00,
                                0x00, 0x00, 0x2A, 0x00, 0x00};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    gv.r.pos = 4;
    uint32_t u = 0;
    assert_int_equal(ffbp_get_u32(&gv.r, &u), FFBP_OK);
    assert_int_equal(u, 42);
    assert_int_equal(ffbp_get_u32(&gv.r, &u), FFBP_INCOMPLETE);
    assert_int_equal(gv.r.pos, 8);
    gvec_free(&gv);
}

/* ---- reader: opaque and strings ------------------------------------------ */

static void test_xdr_get_opaque_skips_padding(void **state) {
    (void)state;
    static const uint8_t v[] = {'a', 'b', 'c', 'd', 'e', 0,  0,
                                0,   'f', 'g', 'h', 'i', 'X'};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    const uint8_t *p = NULL;
    assert_int_equal(ffbp_get_opaque(&gv.r, 5, &p), FFBP_OK);
    assert_memory_equal(p, "abcde", 5);
    assert_int_equal(gv.r.pos, 8);
    assert_int_equal(ffbp_get_opaque(&gv.r, 4, &p), FFBP_OK);
    assert_memory_equal(p, "fghi", 4);
    assert_int_equal(gv.r.pos, 12);
    assert_int_equal(ffbp_get_opaque(&gv.r, 0, &p), FFBP_OK);
    assert_int_equal(gv.r.pos, 12);
    /* One byte left, but one byte of data needs three of padding. */
    assert_int_equal(ffbp_get_opaque(&gv.r, 1, &p), FFBP_INCOMPLETE);
    assert_int_equal(gv.r.pos, 12);
    gvec_free(&gv);
}

static void test_xdr_get_opaque_missing_padding_incomplete(void **state) {
    (void)state;
    static const uint8_t v[] = {'a', 'b', 'c', 'd', 'e', 0, 0, 0};
    for (size_t len = 0; len < sizeof(v); len++) {
        gvec gv;
        gvec_init(&gv, v, len);
        const uint8_t *p;
        assert_int_equal(ffbp_get_opaque(&gv.r, 5, &p), FFBP_INCOMPLETE);
        assert_int_equal(gv.r.pos, 0);
        gvec_free(&gv);
    }
}

static void test_xdr_get_opaque_huge_length_bad(void **state) {
    (void)state;
    static const uint8_t v[] = {0, 0, 0, 0};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    const uint8_t *p;
    /* len + padding overflows size_t. */
    assert_int_equal(ffbp_get_opaque(&gv.r, SIZE_MAX, &p), FFBP_EBAD);
    assert_int_equal(ffbp_get_opaque(&gv.r, SIZE_MAX - 1, &p), FFBP_EBAD);
    assert_int_equal(gv.r.pos, 0);
    gvec_free(&gv);
}

static void test_xdr_get_cstring_padded(void **state) {
    (void)state;
    static const uint8_t v[] = {0,   0,   0, 6, 'S', 'r', 'p', '2',
                                '5', '6', 0, 0, 0,   0,   0,   0,
                                0,   0,   0, 3, 'x', 'y', 'z', 0};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    ffbp_bytes b;
    assert_int_equal(ffbp_get_cstring(&gv.r, 255, &b), FFBP_OK);
    assert_int_equal(b.len, 6);
    assert_memory_equal(b.p, "Srp256", 6);
    assert_int_equal(gv.r.pos, 12);
    assert_int_equal(ffbp_get_cstring(&gv.r, 255, &b), FFBP_OK);
    assert_int_equal(b.len, 0);
    assert_int_equal(gv.r.pos, 16);
    assert_int_equal(ffbp_get_cstring(&gv.r, 255, &b), FFBP_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.p, "xyz", 3);
    assert_int_equal(gv.r.pos, sizeof(v));
    gvec_free(&gv);
}

static void test_xdr_get_cstring_sign_extended_length_fixed_up(void **state) {
    (void)state;
    /* An old peer's sign-extended 16-bit length: FFFF0003 means 3. */
    static const uint8_t v[] = {0xFF, 0xFF, 0x00, 0x03, 'a', 'b', 'c', 0};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    ffbp_bytes b;
    assert_int_equal(ffbp_get_cstring(&gv.r, 255, &b), FFBP_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.p, "abc", 3);
    assert_int_equal(gv.r.pos, 8);
    gvec_free(&gv);
}

static void test_xdr_get_cstring_fixed_up_length_still_limited(void **state) {
    (void)state;
    /* FFFF8000 -> 0x8000 = 32768 bytes, over a 255-byte limit: bad even
       though the bytes are not there (the length alone decides). */
    static const uint8_t v[] = {0xFF, 0xFF, 0x80, 0x00, 'a', 'b', 'c', 0};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    ffbp_bytes b;
    assert_int_equal(ffbp_get_cstring(&gv.r, 255, &b), FFBP_EBAD);
    assert_int_equal(gv.r.pos, 0);
    /* Under a larger limit it is simply incomplete. */
    assert_int_equal(ffbp_get_cstring(&gv.r, 65535, &b), FFBP_INCOMPLETE);
    assert_int_equal(gv.r.pos, 0);
    gvec_free(&gv);
}

static void test_xdr_get_cstring_over_limit_bad(void **state) {
    (void)state;
    static const uint8_t v[] = {0, 0, 1, 0, 'a', 'b', 'c', 'd'};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    ffbp_bytes b;
    assert_int_equal(ffbp_get_cstring(&gv.r, 255, &b), FFBP_EBAD);
    assert_int_equal(gv.r.pos, 0);
    assert_int_equal(ffbp_get_cstring(&gv.r, 256, &b), FFBP_INCOMPLETE);
    assert_int_equal(gv.r.pos, 0);
    gvec_free(&gv);
}

static void test_xdr_get_cstring_over_global_limit_bad(void **state) {
    (void)state;
    /* 0x7FFFFFFF and FFBP_MAX_CSTRING + 1 are refused whatever `max`. */
    static const uint8_t v1[] = {0x7F, 0xFF, 0xFF, 0xFF};
    static const uint8_t v2[] = {0x04, 0x00, 0x00, 0x01};
    static const uint8_t v3[] = {0xFF, 0xFE, 0x00, 0x00}; /* no fix-up */
    const uint8_t *vs[] = {v1, v2, v3};
    for (size_t i = 0; i < 3; i++) {
        gvec gv;
        gvec_init(&gv, vs[i], 4);
        ffbp_bytes b;
        assert_int_equal(ffbp_get_cstring(&gv.r, UINT32_MAX, &b), FFBP_EBAD);
        assert_int_equal(gv.r.pos, 0);
        gvec_free(&gv);
    }
    /* Exactly the global limit is only incomplete. */
    static const uint8_t v4[] = {0x04, 0x00, 0x00, 0x00};
    gvec gv;
    gvec_init(&gv, v4, 4);
    ffbp_bytes b;
    assert_int_equal(ffbp_get_cstring(&gv.r, UINT32_MAX, &b), FFBP_INCOMPLETE);
    gvec_free(&gv);
}

static void test_xdr_get_cstring_truncated_incomplete(void **state) {
    (void)state;
    static const uint8_t v[] = {0,   0,   0,   9,   'S', 'y', 'm', 'm',
                                'e', 't', 'r', 'i', 'c', 0,   0,   0};
    for (size_t len = 0; len < sizeof(v); len++) {
        gvec gv;
        gvec_init(&gv, v, len);
        ffbp_bytes b = {NULL, 77};
        assert_int_equal(ffbp_get_cstring(&gv.r, 255, &b), FFBP_INCOMPLETE);
        assert_int_equal(gv.r.pos, 0);
        assert_int_equal(b.len, 77); /* output untouched */
        gvec_free(&gv);
    }
}

static void test_xdr_skip(void **state) {
    (void)state;
    static const uint8_t v[] = {1, 2, 3};
    gvec gv;
    gvec_init(&gv, v, sizeof(v));
    assert_int_equal(ffbp_skip(&gv.r, 2), FFBP_OK);
    assert_int_equal(gv.r.pos, 2);
    assert_int_equal(ffbp_skip(&gv.r, 2), FFBP_INCOMPLETE);
    assert_int_equal(ffbp_skip(&gv.r, SIZE_MAX), FFBP_INCOMPLETE);
    assert_int_equal(gv.r.pos, 2);
    assert_int_equal(ffbp_skip(&gv.r, 1), FFBP_OK);
    assert_int_equal(ffbp_reader_left(&gv.r), 0);
    gvec_free(&gv);
}

static void test_xdr_pad(void **state) {
    (void)state;
    static const size_t expect[] = {0, 3, 2, 1, 0, 3, 2, 1, 0};
    for (size_t i = 0; i < 9; i++)
        assert_int_equal(ffbp_pad(i), expect[i]);
    assert_int_equal(ffbp_pad(SIZE_MAX), 1);
}

/* ---- little-endian helpers ----------------------------------------------- */

static void test_xdr_le_u32(void **state) {
    (void)state;
    static const uint8_t v[] = {0x92, 0x10, 0x00, 0x00, 0xFF};
    assert_int_equal(ffbp_le_u32(v, 4), 4242);
    assert_int_equal(ffbp_le_u32(v, 1), 0x92);
    assert_int_equal(ffbp_le_u32(v, 2), 0x1092);
    assert_int_equal(ffbp_le_u32(v, 0), 0);
    /* At most 4 bytes are read. */
    assert_int_equal(ffbp_le_u32(v, 5), 4242);
}

static void test_xdr_le_int_sign_extends(void **state) {
    (void)state;
    static const uint8_t ff[8] = {0xFF, 0xFF, 0xFF, 0xFF,
                                  0xFF, 0xFF, 0xFF, 0xFF};
    static const uint8_t v2[] = {0xFF, 0x7F};
    static const uint8_t v3[] = {0x00, 0x20, 0x80};
    static const uint8_t v8[] = {1, 0, 0, 0, 0, 0, 0, 0x80};
    for (size_t n = 1; n <= 8; n++)
        assert_true(ffbp_le_int(ff, n) == -1);
    assert_true(ffbp_le_int(v2, 2) == 0x7FFF);
    assert_true(ffbp_le_int(v3, 3) == -0x7FE000);
    assert_true(ffbp_le_int(v8, 8) == INT64_MIN + 1);
    assert_true(ffbp_le_int(ff, 0) == 0);
    assert_true(ffbp_le_int(ff, 9) == 0);
}

/* ---- writer -------------------------------------------------------------- */

static void test_xdr_put_integers(void **state) {
    (void)state;
    static const uint8_t expect[] = {
        0x00, 0x00, 0x00, 0x01,                         /* i32 1 */
        0xFF, 0xFF, 0xFF, 0xFE,                         /* i32 -2 */
        0xDE, 0xAD, 0xBE, 0xEF,                         /* u32 */
        0xFF, 0xFF, 0x80, 0x0D,                         /* short 0x800D */
        0xFF, 0xFF, 0xFF, 0xFF,                         /* short 0xFFFF */
        0x00, 0x00, 0x00, 0x05,                         /* short 5 */
        0x00, 0x00, 0x01, 0x05,                         /* u_short 0x105 */
        0x00, 0x00, 0x80, 0x00,                         /* u_short 0x8000 */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* hyper */
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, /* hyper -1 */
        0x00, 0x00, 0x00, 0x81, 0x80, 0x00, 0x00, 0x02, /* quad */
    };
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_i32(&w, 1);
    ffbp_put_i32(&w, -2);
    ffbp_put_u32(&w, 0xDEADBEEFu);
    ffbp_put_i16(&w, 0x800D);
    ffbp_put_i16(&w, 0xFFFF);
    ffbp_put_i16(&w, 5);
    ffbp_put_u16(&w, 0x105);
    ffbp_put_u16(&w, 0x8000);
    ffbp_put_i64(&w, INT64_C(0x0102030405060708));
    ffbp_put_i64(&w, -1);
    ffbp_put_quad(&w, UINT64_C(0x0000008180000002));
    assert_false(w.failed);
    assert_int_equal(w.len, sizeof(expect));
    assert_memory_equal(w.data, expect, sizeof(expect));
    ffbp_writer_free(&w);
    assert_null(w.data);
    assert_int_equal(w.len, 0);
}

static void test_xdr_put_opaque_and_cstring_pad_with_zeros(void **state) {
    (void)state;
    static const uint8_t expect[] = {
        'a', 'b', 'c', 'd', 'e', 0,   0,   0,             /* opaque 5 */
        'f', 'g', 'h', 'i',                               /* opaque 4 */
        0,   0,   0,   9,   'S', 'y', 'm', 'm', 'e', 't', /* cstring 9 */
        'r', 'i', 'c', 0,   0,   0,                       /* */
        0,   0,   0,   0,                                 /* cstring 0 */
        0,   0,   0,   1,   'x', 0,   0,   0,             /* cstring 1 */
    };
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_opaque(&w, "abcde", 5);
    ffbp_put_opaque(&w, "fghi", 4);
    ffbp_put_opaque(&w, NULL, 0);
    ffbp_put_cstring(&w, "Symmetric", 9);
    ffbp_put_cstring(&w, NULL, 0);
    ffbp_put_cstring(&w, "x", 1);
    assert_int_equal(w.len, sizeof(expect));
    assert_memory_equal(w.data, expect, sizeof(expect));
    ffbp_writer_free(&w);
}

static void test_xdr_put_raw_empty_allocates_nothing(void **state) {
    (void)state;
    test_alloc t;
    ffb_allocator a = make_alloc(&t, 0);
    ffbp_writer w;
    ffbp_writer_init(&w, &a);
    ffbp_put_raw(&w, NULL, 0);
    ffbp_put_opaque(&w, NULL, 0);
    assert_int_equal(t.calls, 0);
    assert_null(w.data);
    assert_int_equal(w.len, 0);
    ffbp_writer_free(&w);
    assert_int_equal(t.frees, 0);
}

static void test_xdr_writer_grows_and_keeps_bytes(void **state) {
    (void)state;
    test_alloc t;
    ffb_allocator a = make_alloc(&t, 0);
    ffbp_writer w;
    ffbp_writer_init(&w, &a);
    for (uint32_t i = 0; i < 5000; i++)
        ffbp_put_u32(&w, i);
    assert_false(w.failed);
    assert_int_equal(w.len, 20000);
    assert_true(w.cap >= w.len);
    /* Doubling from 256: 256 .. 32768 is 8 allocations. */
    assert_int_equal(t.calls, 8);
    assert_int_equal(w.cap, 32768);
    for (uint32_t i = 0; i < 5000; i++) {
        const uint8_t *p = w.data + 4 * i;
        uint32_t v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                     (uint32_t)p[2] << 8 | p[3];
        assert_int_equal(v, i);
    }
    assert_int_equal(t.live, 1);
    ffbp_writer_free(&w);
    assert_int_equal(t.live, 0);
}

/* ffbp_writer_init_buf(): the packets of the hot paths are encoded on the
   stack (docs/performance.md). Within the buffer nothing is allocated and
   the free frees nothing; past it the bytes move to the allocator, the
   buffer is left alone, and the free frees the heap block. A failed move
   is sticky, as for any writer. */
static void test_xdr_writer_init_buf(void **state) {
    (void)state;
    test_alloc t;
    ffb_allocator a = make_alloc(&t, 0);
    uint8_t buf[16];
    ffbp_writer w;
    ffbp_writer_init_buf(&w, &a, buf, sizeof(buf));
    for (uint32_t i = 0; i < 4; i++)
        ffbp_put_u32(&w, i);
    assert_ptr_equal(w.data, buf);
    assert_int_equal(w.len, 16);
    assert_int_equal(t.calls, 0);
    ffbp_writer_free(&w);
    assert_int_equal(t.frees, 0);
    assert_null(w.data);

    ffbp_writer_init_buf(&w, &a, buf, sizeof(buf));
    for (uint32_t i = 0; i < 100; i++)
        ffbp_put_u32(&w, i);
    assert_false(w.failed);
    assert_true(w.data != buf);
    assert_int_equal(w.len, 400);
    /* Doubling from 16: the move to 32, then 64, 128, 256 and 512. */
    assert_int_equal(t.calls, 5);
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(ffbp_be32_get(w.data + 4 * i), i);
    assert_int_equal(t.live, 1);
    ffbp_writer_free(&w);
    assert_int_equal(t.live, 0);

    test_alloc f;
    ffb_allocator fa = make_alloc(&f, 1);
    ffbp_writer_init_buf(&w, &fa, buf, 4);
    ffbp_put_u32(&w, 7);
    ffbp_put_u32(&w, 8); /* the move fails */
    assert_true(w.failed);
    assert_ptr_equal(w.data, buf);
    ffbp_put_u32(&w, 9);
    assert_int_equal(w.len, 4);
    ffbp_writer_free(&w);
    assert_int_equal(f.frees, 0);
}

static void test_xdr_writer_reserve_large_jump(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_u32(&w, 1);
    assert_int_equal(ffbp_writer_reserve(&w, 100000), 0);
    assert_true(w.cap - w.len >= 100000);
    assert_int_equal(w.len, 4);
    /* Already enough room: nothing changes. */
    size_t cap = w.cap;
    assert_int_equal(ffbp_writer_reserve(&w, 10), 0);
    assert_int_equal(w.cap, cap);
    ffbp_writer_free(&w);
}

static void test_xdr_writer_consume_and_reset(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_raw(&w, "0123456789", 10);
    ffbp_writer_consume(&w, 3);
    assert_int_equal(w.len, 7);
    assert_memory_equal(w.data, "3456789", 7);
    ffbp_writer_consume(&w, 0);
    assert_int_equal(w.len, 7);
    ffbp_writer_consume(&w, 100);
    assert_int_equal(w.len, 0);
    ffbp_put_raw(&w, "ab", 2);
    size_t cap = w.cap;
    ffbp_writer_reset(&w);
    assert_int_equal(w.len, 0);
    assert_int_equal(w.cap, cap);
    ffbp_writer_free(&w);
}

static void test_xdr_writer_failure_is_sticky(void **state) {
    (void)state;
    test_alloc t;
    ffb_allocator a = make_alloc(&t, 2); /* the first growth fails */
    ffbp_writer w;
    ffbp_writer_init(&w, &a);
    ffbp_put_raw(&w, "abcd", 4); /* first allocation: 256 bytes */
    assert_false(w.failed);
    uint8_t big[300];
    memset(big, 0x5A, sizeof(big));
    ffbp_put_raw(&w, big, sizeof(big)); /* needs to grow: fails */
    assert_true(w.failed);
    assert_int_equal(w.len, 4);
    assert_memory_equal(w.data, "abcd", 4);
    /* Later writes are dropped, even those that would fit, and even
       though the allocator would now succeed. */
    int calls = t.calls;
    ffbp_put_u32(&w, 7);
    ffbp_put_cstring(&w, "x", 1);
    assert_int_equal(w.len, 4);
    assert_int_equal(ffbp_writer_reserve(&w, 1), FFB_E_NOMEM);
    assert_int_equal(t.calls, calls);
    ffbp_writer_free(&w);
    assert_int_equal(t.live, 0);
}

static void test_xdr_writer_first_allocation_fails(void **state) {
    (void)state;
    test_alloc t;
    ffb_allocator a = make_alloc(&t, 1);
    ffbp_writer w;
    ffbp_writer_init(&w, &a);
    ffbp_put_i32(&w, 1);
    assert_true(w.failed);
    assert_null(w.data);
    assert_int_equal(w.len, 0);
    ffbp_writer_free(&w);
    assert_int_equal(t.live, 0);
    assert_int_equal(t.frees, 0);
}

static void test_xdr_writer_fail_at_every_allocation(void **state) {
    (void)state;
    /* failmalloc loop: fail the Nth allocation until none fails. */
    for (int n = 1;; n++) {
        test_alloc t;
        ffb_allocator a = make_alloc(&t, n);
        ffbp_writer w;
        ffbp_writer_init(&w, &a);
        for (uint32_t i = 0; i < 1000; i++)
            ffbp_put_u32(&w, i);
        int failed = w.failed;
        if (failed)
            assert_int_equal(ffbp_writer_reserve(&w, 1), FFB_E_NOMEM);
        else
            assert_int_equal(w.len, 4000);
        assert_true(w.len % 4 == 0 && w.len <= 4000);
        ffbp_writer_free(&w);
        assert_int_equal(t.live, 0);
        if (!failed)
            break;
        assert_true(n < 100);
    }
}

static void test_xdr_writer_reserve_overflow_fails(void **state) {
    (void)state;
    test_alloc t;
    ffb_allocator a = make_alloc(&t, 0);
    ffbp_writer w;
    ffbp_writer_init(&w, &a);
    /* len + n wraps around. */
    ffbp_put_raw(&w, "abc", 3);
    assert_int_equal(ffbp_writer_reserve(&w, SIZE_MAX), FFB_E_NOMEM);
    assert_true(w.failed);
    assert_int_equal(w.len, 3);
    ffbp_writer_free(&w);

    /* No wrap, but more than the allocator gives. */
    ffbp_writer_init(&w, &a);
    assert_int_equal(ffbp_writer_reserve(&w, SIZE_MAX - 8), FFB_E_NOMEM);
    assert_true(w.failed);
    ffbp_writer_free(&w);
    assert_int_equal(t.live, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xdr_get_u32_big_endian),
        cmocka_unit_test(test_xdr_get_short_sign_extended),
        cmocka_unit_test(test_xdr_get_u_short_zero_extended),
        cmocka_unit_test(test_xdr_get_hyper_high_word_first),
        cmocka_unit_test(test_xdr_get_quad_high_then_low),
        cmocka_unit_test(test_xdr_integers_short_input_incomplete),
        cmocka_unit_test(test_xdr_get_from_middle_of_buffer),
        cmocka_unit_test(test_xdr_get_opaque_skips_padding),
        cmocka_unit_test(test_xdr_get_opaque_missing_padding_incomplete),
        cmocka_unit_test(test_xdr_get_opaque_huge_length_bad),
        cmocka_unit_test(test_xdr_get_cstring_padded),
        cmocka_unit_test(test_xdr_get_cstring_sign_extended_length_fixed_up),
        cmocka_unit_test(test_xdr_get_cstring_fixed_up_length_still_limited),
        cmocka_unit_test(test_xdr_get_cstring_over_limit_bad),
        cmocka_unit_test(test_xdr_get_cstring_over_global_limit_bad),
        cmocka_unit_test(test_xdr_get_cstring_truncated_incomplete),
        cmocka_unit_test(test_xdr_skip),
        cmocka_unit_test(test_xdr_pad),
        cmocka_unit_test(test_xdr_le_u32),
        cmocka_unit_test(test_xdr_le_int_sign_extends),
        cmocka_unit_test(test_xdr_put_integers),
        cmocka_unit_test(test_xdr_put_opaque_and_cstring_pad_with_zeros),
        cmocka_unit_test(test_xdr_put_raw_empty_allocates_nothing),
        cmocka_unit_test(test_xdr_writer_grows_and_keeps_bytes),
        cmocka_unit_test(test_xdr_writer_reserve_large_jump),
        cmocka_unit_test(test_xdr_writer_consume_and_reset),
        cmocka_unit_test(test_xdr_writer_failure_is_sticky),
        cmocka_unit_test(test_xdr_writer_first_allocation_fails),
        cmocka_unit_test(test_xdr_writer_fail_at_every_allocation),
        cmocka_unit_test(test_xdr_writer_reserve_overflow_fails),
        cmocka_unit_test(test_xdr_writer_init_buf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
