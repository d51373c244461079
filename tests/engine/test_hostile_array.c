/*
 * A hostile server and arrays: scripted op_slice answers to op_get_slice
 * (and one to op_put_slice) that a malicious server or a man in the middle
 * could send. The element count, the length fields and every VARCHAR
 * length are checked against what was asked before anything is copied
 * into the application's buffer; an inconsistent answer is FFB_E_PROTO
 * with the connection broken, and the buffer beyond the array is never
 * written. A well-formed answer is decoded (the framing of these tests is
 * right). Run under ASan+UBSan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/check.h"
#include "tests/support/hostile.h"

#define setup hostile_setup
#define teardown hostile_teardown

#define TX 7

static void expect_proto(ffb_conn *c, int rc, const char *needle) {
    if (rc != FFB_E_PROTO)
        fail_msg("expected FFB_E_PROTO, got %d (%s)", rc,
                 ffb_error_message(ffb_conn_error(c)));
    assert_true(ffb_conn_is_broken(c));
    expect_msg(c, needle);
}

static ffb_array_desc desc(int element, int length, int32_t upper) {
    ffb_array_desc d;
    memset(&d, 0, sizeof(d));
    d.element = element;
    d.length = length;
    d.charset = element == FFB_SQL_VARYING ? 0 : -1;
    d.dims = 1;
    d.lower[0] = 1;
    d.upper[0] = upper;
    strcpy(d.relation, "T");
    strcpy(d.field, "A");
    return d;
}

/* op_slice: lengths, then the element words (big-endian int32 each). */
static void push_slice(uint32_t total, uint32_t slen, const uint32_t *w,
                       size_t n) {
    ffbp_put_i32(&W, FFBP_OP_SLICE);
    ffbp_put_u32(&W, total);
    ffbp_put_u32(&W, slen);
    for (size_t i = 0; i < n; i++)
        ffbp_put_u32(&W, w[i]);
    hostile_push(&H, &W);
}

/* Attach (protocol 16), start a transaction: its answer is scripted. */
static ffb_conn *attach(ffb_tx **tx) {
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    OK(c, ffb_tx_begin(c, NULL, tx));
    srv_response(&W, TX, 0, NULL, 0);
    hostile_push(&H, &W);
    return c;
}

static const uint8_t ID[8] = {0, 0, 0, 0x81, 0, 0, 0, 1};

static void test_good_answer(void **state) {
    (void)state;
    ffb_tx *tx;
    ffb_conn *c = attach(&tx);
    ffb_array_desc d = desc(FFB_SQL_SHORT, 0, 3);
    static const uint32_t el[] = {0xFFFFFFFFu, 7, 0x7FFF};
    push_slice(6, 6, el, 3);
    int16_t v[4] = {9, 9, 9, 9};
    size_t got = 0;
    OK(c, ffb_array_get(c, tx, &d, ID, v, sizeof(v), &got));
    assert_int_equal(got, 6);
    assert_int_equal(v[0], -1);
    assert_int_equal(v[1], 7);
    assert_int_equal(v[2], 32767);
    assert_int_equal(v[3], 9); /* beyond the array: untouched */
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_more_elements_than_asked(void **state) {
    (void)state;
    ffb_tx *tx;
    ffb_conn *c = attach(&tx);
    ffb_array_desc d = desc(FFB_SQL_LONG, 0, 2);
    static const uint32_t el[] = {1, 2, 3};
    push_slice(12, 12, el, 3);
    int32_t v[3] = {5, 5, 5};
    size_t got = 0;
    expect_proto(c, ffb_array_get(c, tx, &d, ID, v, sizeof(v), &got),
                 "malformed op_slice from the server while waiting for "
                 "op_get_slice");
    assert_int_equal(v[2], 5);
    assert_int_equal(got, 0);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_length_not_elements(void **state) {
    (void)state;
    ffb_tx *tx;
    ffb_conn *c = attach(&tx);
    ffb_array_desc d = desc(FFB_SQL_LONG, 0, 2);
    static const uint32_t el[] = {1, 2};
    push_slice(7, 7, el, 2); /* 7 native bytes: no INTEGER count */
    int32_t v[2];
    size_t got = 0;
    expect_proto(c, ffb_array_get(c, tx, &d, ID, v, sizeof(v), &got),
                 "malformed op_slice from the server while waiting for "
                 "op_get_slice");
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_varchar_too_long(void **state) {
    (void)state;
    ffb_tx *tx;
    ffb_conn *c = attach(&tx);
    ffb_array_desc d = desc(FFB_SQL_VARYING, 4, 1); /* VARCHAR(4) x 1 */
    /* Length 40000 with 4 bytes behind it. */
    static const uint32_t el[] = {40000, 0x41424344};
    push_slice(6, 6, el, 2);
    uint8_t v[6 + 16];
    memset(v, 0xEE, sizeof(v));
    size_t got = 0;
    expect_proto(c, ffb_array_get(c, tx, &d, ID, v, sizeof(v), &got),
                 "malformed op_slice from the server while waiting for "
                 "op_get_slice");
    for (size_t i = 0; i < sizeof(v); i++)
        assert_int_equal(v[i], 0xEE);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_truncated_then_eof(void **state) {
    (void)state;
    ffb_tx *tx;
    ffb_conn *c = attach(&tx);
    ffb_array_desc d = desc(FFB_SQL_LONG, 0, 1000);
    /* 1000 elements announced, 2 sent, then the server closes. */
    static const uint32_t el[] = {1, 2};
    push_slice(4000, 4000, el, 2);
    int32_t *v = calloc(1000, sizeof(int32_t));
    assert_non_null(v);
    size_t got = 0;
    int rc = ffb_array_get(c, tx, &d, ID, v, 1000 * sizeof(int32_t), &got);
    assert_true(rc < 0);
    assert_true(ffb_conn_is_broken(c));
    assert_int_equal(v[0], 0); /* all-or-nothing: nothing copied */
    free(v);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_slice_for_put(void **state) {
    (void)state;
    ffb_tx *tx;
    ffb_conn *c = attach(&tx);
    ffb_array_desc d = desc(FFB_SQL_LONG, 0, 1);
    static const uint32_t el[] = {1};
    push_slice(4, 4, el, 1); /* op_slice where op_response is owed */
    int32_t v = 3;
    uint8_t id[8];
    expect_proto(c, ffb_array_put(c, tx, &d, &v, sizeof(v), id),
                 "unexpected packet from the server: op_slice");
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_put_answer_gives_id(void **state) {
    (void)state;
    ffb_tx *tx;
    ffb_conn *c = attach(&tx);
    ffb_array_desc d = desc(FFB_SQL_LONG, 0, 2);
    srv_response(&W, 0, 0x0000008100000042ull, NULL, 0);
    hostile_push(&H, &W);
    int32_t v[2] = {1, 2};
    uint8_t id[8];
    OK(c, ffb_array_put(c, tx, &d, v, sizeof(v), id));
    static const uint8_t want[8] = {0, 0, 0, 0x81, 0, 0, 0, 0x42};
    assert_memory_equal(id, want, 8);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_good_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_more_elements_than_asked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_length_not_elements, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_varchar_too_long, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_then_eof, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_slice_for_put, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_answer_gives_id, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
