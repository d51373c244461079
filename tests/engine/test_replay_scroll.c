/*
 * Replays the recorded Firebird 5.0.4 conversation fb5-scroll (see its
 * header in tests/data/fb5) through the library: every client write must
 * equal the recording byte for byte. It checks protocol 18's scrollable
 * cursor: cursor flags 1 in op_execute, the first op_fetch_scroll (next,
 * with the BLR) riding with it, op_info_cursor's record count after that
 * first fetch, then one op_fetch_scroll per move without the BLR - next,
 * prior, first, last, absolute, relative, including moves past either end
 * that leave the cursor open - and the close + commit at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/conv.h"

#define OK(conn, expr)                                                         \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ < 0)                                                           \
            fail_msg("%s:%d: %s = %d: %s; %s", __FILE__, __LINE__, #expr, rc_, \
                     ffb_error_message(ffb_conn_error(conn)), cv.failure);     \
    } while (0)

static conv cv;

static uint64_t rts(ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

/* The current row is (id, "row id"). */
static void expect_row(ffb_stmt *s, int64_t id) {
    int64_t v;
    assert_int_equal(ffb_stmt_get_int64(s, 0, &v), 0);
    assert_int_equal(v, id);
    const char *t;
    size_t n;
    assert_int_equal(ffb_stmt_get_text(s, 1, &t, &n), 0);
    char want[16];
    int wl = snprintf(want, sizeof(want), "row %d", (int)id);
    assert_int_equal(n, (size_t)wl);
    assert_memory_equal(t, want, n);
}

/* One move: exactly 1 round trip, then the row `first` (0: none) and the
   buffered rows `more...` (0-terminated) read without I/O. */
static void move(ffb_conn *c, ffb_stmt *s, int op, int32_t pos, unsigned rows,
                 int64_t first, ...) {
    uint64_t b = rts(c);
    int rc = ffb_stmt_fetch_scroll(s, op, pos, rows);
    OK(c, rc);
    assert_int_equal(rts(c) - b, 1); /* one op_fetch_scroll per write */
    if (!first) {
        assert_int_equal(rc, 0);
        return;
    }
    assert_int_equal(rc, 1);
    expect_row(s, first);
    va_list ap;
    va_start(ap, first);
    int64_t id;
    while ((id = va_arg(ap, int64_t)) != 0) {
        assert_int_equal(ffb_stmt_fetch(s), 1);
        expect_row(s, id);
    }
    va_end(ap);
    assert_int_equal(rts(c) - b, 1); /* the rest came in the same answer */
}

static void test_replay_scroll(void **state) {
    (void)state;
    char path[512];
    conv_load(&cv, conv_data_path("fb5-scroll.conv", path, sizeof(path)));
    conv_seek_connection(&cv, 0);
    ffb_conn_options o;
    conv_options(&o);
    o.wire_crypt_plugins = ""; /* the recording client did not encrypt */
    ffb_conn *c;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    conv_use(c, &cv);
    OK(c, ffb_conn_connect(c));
    assert_int_equal(ffb_conn_protocol(c), 19);

    /* 1. allocate + prepare(0xFFFF). */
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, NULL, "SELECT ID, NAME FROM TSCROLL ORDER BY ID",
                           (size_t)-1));
    assert_int_equal(ffb_stmt_column_count(s), 2);

    /* Before any execution there is no cursor: refused, nothing sent. */
    int64_t count = 0;
    assert_int_equal(ffb_stmt_record_count(s, &count), FFB_E_STATE);
    assert_int_equal(ffb_stmt_fetch_scroll(s, FFB_FETCH_FIRST, 0, 1),
                     FFB_E_STATE);
    assert_int_equal(ffb_stmt_set_scrollable(s, 1), 0);
    assert_int_equal(ffb_stmt_is_scrollable(s), 0);

    /* 2. transaction + execute(cursor flags 1) + op_fetch_scroll(next, 1
       row, with the BLR) in one write. */
    OK(c, ffb_stmt_set_fetch_size(s, 1));
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    to.isolation = FFB_ISO_SNAPSHOT; /* TPB 03 02 09 06 */
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, &to, &tx));
    uint64_t b = rts(c);
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(rts(c) - b, 1);
    assert_int_equal(ffb_stmt_is_scrollable(s), 1);
    assert_int_equal(ffb_stmt_fetch(s), 1); /* buffered: no read-ahead */
    expect_row(s, 1);
    assert_int_equal(rts(c) - b, 1);

    /* 3. op_info_cursor after the first fetch: 10 records. */
    b = rts(c);
    OK(c, ffb_stmt_record_count(s, &count));
    assert_int_equal(count, 10);
    assert_int_equal(rts(c) - b, 1);

    /* 4. the moves, one op_fetch_scroll per write, without the BLR. */
    move(c, s, FFB_FETCH_NEXT, 0, 3, 2, (int64_t)3, (int64_t)4, (int64_t)0);
    move(c, s, FFB_FETCH_PRIOR, 0, 2, 3, (int64_t)2, (int64_t)0);
    move(c, s, FFB_FETCH_FIRST, 0, 1, 1, (int64_t)0);
    move(c, s, FFB_FETCH_LAST, 0, 1, 10, (int64_t)0);
    move(c, s, FFB_FETCH_NEXT, 0, 1, 0);    /* past the end: status 100 */
    assert_int_equal(ffb_stmt_fetch(s), 0); /* no row, and no I/O */
    move(c, s, FFB_FETCH_PRIOR, 0, 1, 10, (int64_t)0); /* still open */
    move(c, s, FFB_FETCH_ABSOLUTE, 5, 1, 5, (int64_t)0);
    move(c, s, FFB_FETCH_ABSOLUTE, -2, 1, 9, (int64_t)0);
    move(c, s, FFB_FETCH_RELATIVE, -3, 1, 6, (int64_t)0);
    move(c, s, FFB_FETCH_RELATIVE, 0, 1, 6, (int64_t)0);
    move(c, s, FFB_FETCH_RELATIVE, 100, 1, 0);
    move(c, s, FFB_FETCH_ABSOLUTE, 0, 1, 0);
    assert_int_equal(ffb_stmt_is_scrollable(s), 1);
    /* Bad arguments are refused before anything is sent. */
    assert_int_equal(ffb_stmt_fetch_scroll(s, 6, 0, 1), FFB_E_INVAL);
    assert_int_equal(ffb_stmt_fetch_scroll(s, FFB_FETCH_NEXT, 0, 70000),
                     FFB_E_INVAL);

    /* 5. DSQL_close (deferred) + commit in one write. */
    b = rts(c);
    OK(c, ffb_stmt_close_cursor(s));
    assert_int_equal(ffb_stmt_is_scrollable(s), 0);
    OK(c, ffb_tx_commit(tx));
    assert_int_equal(rts(c) - b, 1);
    ffb_tx_free(tx);
    assert_int_equal(ffb_stmt_fetch_scroll(s, FFB_FETCH_FIRST, 0, 1),
                     FFB_E_STATE);

    /* 6. detach, disconnect. */
    OK(c, ffb_conn_close(c));
    ffb_stmt_free(s);
    ffb_conn_free(c);
    if (cv.failure[0])
        fail_msg("%s", cv.failure);
    assert_int_equal(cv.pos, cv.n);
    conv_free(&cv);
}

/* A queued move: queued (0 round trips), flushed, its result, then the
   rows read without I/O. */
static void qmove(ffb_conn *c, ffb_stmt *s, int op, int32_t pos, unsigned rows,
                  int64_t first, int64_t second) {
    uint64_t b = rts(c);
    OK(c, ffb_stmt_queue_fetch_scroll(s, op, pos, rows, NULL, NULL));
    assert_int_equal(rts(c) - b, 0);
    /* One move at a time: a second is refused while this one flies. */
    assert_int_equal(ffb_stmt_queue_fetch_scroll(s, op, pos, rows, NULL, NULL),
                     FFB_E_STATE);
    OK(c, ffb_conn_flush(c));
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_FETCH_SCROLL);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(rts(c) - b, 1);
    if (!first) {
        assert_int_equal(ffb_stmt_fetch(s), 0);
    } else {
        assert_int_equal(ffb_stmt_fetch(s), 1);
        expect_row(s, first);
        if (second) {
            assert_int_equal(ffb_stmt_fetch(s), 1);
            expect_row(s, second);
        }
    }
    assert_int_equal(rts(c) - b, 1);
}

/* The same conversation through the queue twins: the same bytes. */
static void test_replay_scroll_queued(void **state) {
    (void)state;
    char path[512];
    conv_load(&cv, conv_data_path("fb5-scroll.conv", path, sizeof(path)));
    conv_seek_connection(&cv, 0);
    ffb_conn_options o;
    conv_options(&o);
    o.wire_crypt_plugins = "";
    ffb_conn *c;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    conv_use(c, &cv);
    OK(c, ffb_conn_connect(c));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, NULL, "SELECT ID, NAME FROM TSCROLL ORDER BY ID",
                           (size_t)-1));
    OK(c, ffb_stmt_set_scrollable(s, 1));
    OK(c, ffb_stmt_set_fetch_size(s, 1));
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    to.isolation = FFB_ISO_SNAPSHOT;
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, &to, &tx));
    uint64_t b = rts(c);
    OK(c, ffb_stmt_queue_execute(s, tx, NULL, NULL));
    /* Before the execution's answer the count would spoil the cursor
       (C.14) and a move would race its rows: both refused, nothing
       queued. */
    assert_int_equal(ffb_stmt_queue_record_count(s, NULL, NULL), FFB_E_STATE);
    assert_int_equal(
        ffb_stmt_queue_fetch_scroll(s, FFB_FETCH_NEXT, 0, 3, NULL, NULL),
        FFB_E_STATE);
    OK(c, ffb_conn_flush(c));
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_EXECUTE);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(rts(c) - b, 1);
    assert_int_equal(ffb_stmt_fetch(s), 1);
    expect_row(s, 1);

    b = rts(c);
    OK(c, ffb_stmt_queue_record_count(s, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_RECORD_COUNT);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(ffb_result_rows_affected(res), 10);
    assert_int_equal(rts(c) - b, 1);

    /* next 3: rows 2, 3, 4 - the third read by ffb_stmt_fetch below. */
    qmove(c, s, FFB_FETCH_NEXT, 0, 3, 2, 3);
    assert_int_equal(ffb_stmt_fetch(s), 1);
    expect_row(s, 4);
    qmove(c, s, FFB_FETCH_PRIOR, 0, 2, 3, 2);
    qmove(c, s, FFB_FETCH_FIRST, 0, 1, 1, 0);
    qmove(c, s, FFB_FETCH_LAST, 0, 1, 10, 0);
    qmove(c, s, FFB_FETCH_NEXT, 0, 1, 0, 0);
    qmove(c, s, FFB_FETCH_PRIOR, 0, 1, 10, 0);
    qmove(c, s, FFB_FETCH_ABSOLUTE, 5, 1, 5, 0);
    qmove(c, s, FFB_FETCH_ABSOLUTE, -2, 1, 9, 0);
    qmove(c, s, FFB_FETCH_RELATIVE, -3, 1, 6, 0);
    qmove(c, s, FFB_FETCH_RELATIVE, 0, 1, 6, 0);
    qmove(c, s, FFB_FETCH_RELATIVE, 100, 1, 0, 0);
    qmove(c, s, FFB_FETCH_ABSOLUTE, 0, 1, 0, 0);

    OK(c, ffb_stmt_close_cursor(s));
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_stmt_free(s);
    ffb_conn_free(c);
    if (cv.failure[0])
        fail_msg("%s", cv.failure);
    assert_int_equal(cv.pos, cv.n);
    conv_free(&cv);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_scroll),
        cmocka_unit_test(test_replay_scroll_queued),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
