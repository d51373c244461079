/*
 * A hostile server and scrollable cursors (protocol 18): scripted answers
 * to op_info_cursor and op_fetch_scroll. A record-count answer that holds
 * no well-formed count, and a move answered with more rows than the server
 * may send, are FFB_E_PROTO with the connection broken; well-formed
 * answers are taken (the framing of these tests is right).
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
#define STMT 3

static const srv_var INT_COL = {FFBP_SQL_LONG, 0, 0, 4, 1, "I"};

/* A row of `select i from t`: null bitmap, then the value. */
static void int_row(int32_t v) {
    uint8_t row[8] = {0,
                      0,
                      0,
                      0,
                      (uint8_t)(v >> 24),
                      (uint8_t)(v >> 16),
                      (uint8_t)(v >> 8),
                      (uint8_t)v};
    srv_fetch(&W, 0, 1, row, sizeof(row));
}

/* Attached on protocol 18, `select i from t` prepared and executed
   scrollable; its first fetch answered with row 1. */
static ffb_stmt *open_cursor(ffb_conn **cp, ffb_tx **tx) {
    ffb_conn *c = hostile_attach(&H, 18, NULL);
    uint8_t desc[512];
    size_t n = srv_describe(desc, sizeof(desc), FFB_STMT_SELECT, 1, &INT_COL, 1,
                            1, 0, NULL, 0, 0);
    srv_response(&W, TX, 0, NULL, 0);
    srv_response(&W, STMT, 0, NULL, 0);
    srv_response(&W, 0, 0, desc, n);
    hostile_push(&H, &W);
    OK(c, ffb_tx_begin(c, NULL, tx));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, *tx, "select i from t", (size_t)-1));
    OK(c, ffb_stmt_set_scrollable(s, 1));
    OK(c, ffb_stmt_set_fetch_size(s, 1));
    srv_response(&W, 0, 0, NULL, 0); /* op_execute */
    int_row(1);
    srv_fetch(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(s, *tx));
    assert_int_equal(ffb_stmt_is_scrollable(s), 1);
    assert_int_equal(ffb_stmt_fetch(s), 1);
    *cp = c;
    return s;
}

static void done(ffb_conn *c, ffb_stmt *s, ffb_tx *tx) {
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_good_count_and_move(void **state) {
    (void)state;
    ffb_conn *c;
    ffb_tx *tx;
    ffb_stmt *s = open_cursor(&c, &tx);
    static const uint8_t info[] = {0x0A, 4, 0, 10, 0, 0, 0, 1};
    srv_response(&W, STMT, 0, info, sizeof(info));
    hostile_push(&H, &W);
    int64_t n = 0;
    OK(c, ffb_stmt_record_count(s, &n));
    assert_int_equal(n, 10);
    int_row(10);
    srv_fetch(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    assert_int_equal(ffb_stmt_fetch_scroll(s, FFB_FETCH_LAST, 0, 1), 1);
    int64_t v;
    OK(c, ffb_stmt_get_int64(s, 0, &v));
    assert_int_equal(v, 10);
    srv_fetch(&W, 100, 0, NULL, 0); /* past the end: the cursor stays */
    hostile_push(&H, &W);
    assert_int_equal(ffb_stmt_fetch_scroll(s, FFB_FETCH_NEXT, 0, 1), 0);
    assert_int_equal(ffb_stmt_is_scrollable(s), 1);
    assert_false(ffb_conn_is_broken(c));
    done(c, s, tx);
}

static void test_bad_counts(void **state) {
    (void)state;
    static const uint8_t bad[][12] = {
        {0x0A, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9},    /* 9-byte integer */
        {0x0A, 0, 0, 1},                            /* empty integer */
        {0x0A, 4, 0, 10, 0},                        /* past the buffer */
        {3, 4, 0, 0x15, 0, 0, 0x14, 2},             /* isc_info_error */
        {1},                                        /* no count at all */
        {0x0A, 4, 0, 1, 0, 0, 0, 0x0A, 4, 0, 2, 0}, /* two counts */
    };
    static const size_t len[] = {12, 4, 5, 8, 1, 12};
    for (size_t i = 0; i < sizeof(len) / sizeof(len[0]); i++) {
        ffb_conn *c;
        ffb_tx *tx;
        ffb_stmt *s = open_cursor(&c, &tx);
        srv_response(&W, STMT, 0, bad[i], len[i]);
        hostile_push(&H, &W);
        int64_t n = 42;
        int rc = ffb_stmt_record_count(s, &n);
        if (rc != FFB_E_PROTO)
            fail_msg("case %zu: %d (%s)", i, rc,
                     ffb_error_message(ffb_conn_error(c)));
        assert_int_equal(n, 42);
        assert_true(ffb_conn_is_broken(c));
        expect_msg(c, "holds no record count");
        done(c, s, tx);
        hostile_free(&H);
        hostile_init(&H);
    }
}

static void test_move_with_too_many_rows(void **state) {
    (void)state;
    ffb_conn *c;
    ffb_tx *tx;
    ffb_stmt *s = open_cursor(&c, &tx);
    int_row(1); /* fetch_first: at most the one row asked */
    int_row(2);
    srv_fetch(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    int rc = ffb_stmt_fetch_scroll(s, FFB_FETCH_FIRST, 0, 1);
    assert_int_equal(rc, FFB_E_PROTO);
    assert_true(ffb_conn_is_broken(c));
    expect_msg(c, "more rows than");
    done(c, s, tx);
}

/* ffb_stmt_fetch() past the buffered rows of a scrollable cursor goes on in
   the direction of the last move: op_fetch_scroll(prior) after a prior,
   without the BLR, and no read-ahead before the rows run out. */
static void test_fetch_goes_on_backwards(void **state) {
    (void)state;
    ffb_conn *c;
    ffb_tx *tx;
    ffb_stmt *s = open_cursor(&c, &tx);
    int_row(9);
    srv_fetch(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    assert_int_equal(ffb_stmt_fetch_scroll(s, FFB_FETCH_PRIOR, 0, 1), 1);
    size_t before = H.written_len;
    int_row(8);
    srv_fetch(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    assert_int_equal(ffb_stmt_fetch(s), 1);
    int64_t v;
    OK(c, ffb_stmt_get_int64(s, 0, &v));
    assert_int_equal(v, 8);
    /* op_fetch_scroll, statement 3, no BLR, message 0, 1 row, prior, 0. */
    static const uint8_t want[] = {0, 0, 0, 112, 0, 0, 0, STMT, 0, 0,
                                   0, 0, 0, 0,   0, 0, 0, 0,    0, 1,
                                   0, 0, 0, 1,   0, 0, 0, 0};
    assert_int_equal(H.written_len - before, sizeof(want));
    assert_memory_equal(H.written + before, want, sizeof(want));
    done(c, s, tx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_good_count_and_move, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_move_with_too_many_rows, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fetch_goes_on_backwards, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
