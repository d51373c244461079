/*
 * The request path on scripted conversations: requests held until a
 * handle is known, results delivered in the order they were queued
 * whatever the application waits for, and a connection closed or freed
 * with requests pending (each completes with FFB_E_CANCELLED, in order;
 * valgrind checks that nothing leaks).
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

/* An external-I/O connection attached by hand (protocol 17). */
static ffb_conn *ext_attach(void) { return hostile_ext_attach(17); }

typedef struct seen {
    int n;
    int op[8];
    int status[8];
} seen;

static void record(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    seen *s = data;
    if (s->n < 8) {
        s->op[s->n] = ffb_result_op(res);
        s->status[s->n] = ffb_result_status(res);
    }
    s->n++;
}

/* Closed with three requests queued (one of them held): each callback
   runs once, in order, with FFB_E_CANCELLED, before the close returns. */
static void test_close_cancels_pending(void **state) {
    (void)state;
    ffb_conn *c = ext_attach();
    seen s = {0};
    ffb_tx *tx1, *tx2;
    OK(c, ffb_tx_begin(c, NULL, &tx1));
    OK(c, ffb_tx_begin(c, NULL, &tx2));
    OK(c, ffb_conn_queue_ping(c, record, &s));
    OK(c, ffb_tx_queue_commit(tx1, record, &s)); /* held: tx1 not last */
    OK(c, ffb_tx_queue_rollback(tx2, record, &s));
    assert_int_equal(ffb_conn_pending(c), 3);
    const uint8_t *out;
    ffb_conn_output_done(c, ffb_conn_output(c, &out)); /* on the wire */
    OK(c, ffb_conn_close(c));
    assert_int_equal(s.n, 3);
    assert_int_equal(s.op[0], FFB_OP_PING);
    assert_int_equal(s.op[1], FFB_OP_COMMIT);
    assert_int_equal(s.op[2], FFB_OP_ROLLBACK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(s.status[i], FFB_E_CANCELLED);
    assert_int_equal(ffb_conn_pending(c), 0);
    ffb_tx_free(tx1);
    ffb_tx_free(tx2);
    ffb_conn_free(c);
}

/* Freed with a held request and a queued result taken by nobody: the
   callback runs, nothing leaks (the engine suite runs under valgrind). */
static void test_free_cancels_held(void **state) {
    (void)state;
    ffb_conn *c = ext_attach();
    seen s = {0};
    ffb_tx *tx1, *tx2;
    OK(c, ffb_tx_begin(c, NULL, &tx1));
    OK(c, ffb_tx_begin(c, NULL, &tx2));
    uint8_t info[32];
    static const uint8_t items[] = {4, 1};
    OK(c, ffb_tx_queue_info(tx1, items, sizeof(items), info, sizeof(info),
                            record, &s));
    OK(c, ffb_tx_queue_commit(tx1, NULL, NULL));
    ffb_tx_free(tx1); /* the held requests keep it */
    ffb_tx_free(tx2);
    ffb_conn_free(c);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.status[0], FFB_E_CANCELLED);
}

/* A request naming a transaction whose start is not answered, behind
   another start: queueing does no I/O; the request is written after the
   answer that names the transaction, with its handle, and the results
   come in the order they were queued. */
static void test_held_goes_after_the_answer(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 17, NULL);
    ffb_tx *tx1, *tx2;
    OK(c, ffb_tx_begin(c, NULL, &tx1));
    OK(c, ffb_tx_begin(c, NULL, &tx2));
    seen s = {0};
    size_t reads = H.reads, flushes = H.flushes;
    OK(c, ffb_tx_queue_commit(tx1, record, &s));  /* held */
    OK(c, ffb_tx_queue_rollback(tx2, record, &s)); /* behind it */
    assert_int_equal(H.reads, reads);
    assert_int_equal(H.flushes, flushes);
    srv_response(&W, 21, 0, NULL, 0); /* tx1 */
    srv_response(&W, 22, 0, NULL, 0); /* tx2 */
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0); /* commit */
    srv_response(&W, 0, 0, NULL, 0); /* rollback */
    hostile_push(&H, &W);
    size_t w0 = H.written_len;
    uint64_t r0;
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    r0 = st.round_trips;
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 0); /* callbacks took them */
    assert_int_equal(s.n, 2);
    assert_int_equal(s.op[0], FFB_OP_COMMIT);
    assert_int_equal(s.op[1], FFB_OP_ROLLBACK);
    assert_int_equal(s.status[0], 0);
    assert_int_equal(s.status[1], 0);
    ffb_conn_stats(c, &st, sizeof(st));
    assert_int_equal(st.round_trips - r0, 2); /* the starts, then the ends */
    assert_int_equal(H.flushes - flushes, 2);
    /* The second write: op_commit(21), sent once tx1's answer named it,
       then op_rollback of tx2 - still the server's last object, so
       0xFFFF (its answer was not handled yet when the commit went). */
    const uint8_t *wr = H.written + w0;
    size_t wl = H.written_len - w0;
    static const uint8_t ends[] = {0, 0, 0, FFBP_OP_COMMIT, 0, 0, 0, 21,
                                   0, 0, 0, FFBP_OP_ROLLBACK, 0xFF, 0xFF,
                                   0xFF, 0xFF};
    assert_true(wl >= sizeof(ends));
    assert_memory_equal(wr + wl - sizeof(ends), ends, sizeof(ends));
    ffb_tx_free(tx1);
    ffb_tx_free(tx2);
    ffb_conn_free(c);
}

static const srv_var INT_COL = {FFBP_SQL_LONG, 0, 0, 4, 1, "ID"};

/* Waiting for one statement's rows delivers the results queued before
   it first, in their order. */
static void test_results_in_queue_order(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 17, NULL);
    ffb_tx *tx;
    uint8_t desc[512];
    size_t n = srv_describe(desc, sizeof(desc), FFB_STMT_SELECT, 1, &INT_COL,
                            1, 1, 0, NULL, 0, 0);
    srv_response(&W, 7, 0, NULL, 0);
    srv_response(&W, 3, 0, NULL, 0);
    srv_response(&W, 0, 0, desc, n);
    hostile_push(&H, &W);
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *a;
    OK(c, ffb_stmt_new(c, &a));
    seen s = {0};
    OK(c, ffb_stmt_queue_prepare(a, tx, "select id from t", (size_t)-1,
                                 record, &s));
    OK(c, ffb_conn_queue_ping(c, record, &s));
    /* Prepare answered (1 round trip), then the ping's. */
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    /* A blocking call on the connection: both callbacks ran first. */
    uint8_t row[8];
    memset(row, 0, sizeof(row));
    row[7] = 5;
    srv_response(&W, 0, 0, NULL, 0);
    srv_fetch(&W, 0, 1, row, 8);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(a, tx));
    assert_int_equal(s.n, 2);
    assert_int_equal(s.op[0], FFB_OP_PREPARE);
    assert_int_equal(s.op[1], FFB_OP_PING);
    assert_int_equal(ffb_stmt_fetch(a), 1);
    int64_t v;
    OK(c, ffb_stmt_get_int64(a, 0, &v));
    assert_int_equal(v, 5);
    ffb_stmt_free(a);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- found in review: each failed (crash, hang or wrong result) before
   its fix ---- */

static const srv_var INT_P = {FFBP_SQL_LONG, 0, 0, 4, 1, "ID"};

static size_t insert_desc(uint8_t *buf, size_t cap, int params) {
    return srv_describe(buf, cap, FFB_STMT_INSERT, 0, NULL, 0, 1, params,
                        params ? &INT_P : NULL, params ? 1 : 0, 0);
}

static long find(const uint8_t *p, size_t len, const uint8_t *pat, size_t n,
                 size_t from) {
    for (size_t i = from; i + n <= len; i++)
        if (!memcmp(p + i, pat, n))
            return (long)i;
    return -1;
}

/* An auto-commit execution held behind its prepare: released from the
   hold queue, its commit must go in the same write and its failure must
   be the execution's (it was held behind the execution itself, which
   completed first; the late answer wrote into the freed result). */
static void test_held_autocommit_commit_fails(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 17, NULL);
    uint8_t desc[512];
    size_t n = insert_desc(desc, sizeof(desc), 0);
    ffb_stmt *a;
    OK(c, ffb_stmt_new(c, &a));
    seen s = {0};
    OK(c, ffb_stmt_queue_prepare(a, NULL, "insert into t values (1)",
                                 (size_t)-1, record, &s));
    OK(c, ffb_stmt_queue_execute(a, NULL, record, &s));
    srv_response(&W, 3, 0, NULL, 0); /* allocate */
    srv_response(&W, 0, 0, desc, n); /* prepare */
    hostile_push(&H, &W);
    srv_response(&W, 9, 0, NULL, 0); /* start */
    srv_response(&W, 0, 0, NULL, 0); /* execute */
    srv_response(&W, 0, 0, NULL, 0); /* records */
    srv_error(&W, 335544345u);       /* the commit: lock conflict */
    hostile_push(&H, &W);
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.op[0], FFB_OP_PREPARE);
    assert_int_equal(s.status[0], 0);
    assert_int_equal(s.op[1], FFB_OP_EXECUTE);
    assert_int_equal(s.status[1], FFB_E_SERVER);
    assert_int_equal(hostile_pending(&H), 0);
    assert_int_equal(H.flushes, 2 + 2); /* the attach's two, then two */
    ffb_stmt_free(a);
    ffb_conn_free(c);
}

/* A prepare queued behind an execution of the same statement: the
   execution does not wait for it (it never could). */
static void test_prepare_behind_held_exec(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 17, NULL);
    uint8_t desc[512];
    size_t n = insert_desc(desc, sizeof(desc), 0);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *a;
    OK(c, ffb_stmt_new(c, &a));
    seen s = {0};
    OK(c, ffb_stmt_queue_prepare(a, tx, "insert into t values (1)",
                                 (size_t)-1, record, &s));
    OK(c, ffb_stmt_queue_execute(a, tx, record, &s));
    OK(c, ffb_stmt_queue_prepare(a, tx, "insert into t values (2)",
                                 (size_t)-1, record, &s));
    srv_response(&W, 9, 0, NULL, 0); /* start */
    srv_response(&W, 3, 0, NULL, 0); /* allocate */
    srv_response(&W, 0, 0, desc, n); /* prepare */
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0); /* execute */
    srv_response(&W, 0, 0, NULL, 0); /* records */
    srv_response(&W, 0, 0, desc, n); /* the second prepare */
    hostile_push(&H, &W);
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 0);
    assert_int_equal(s.n, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(s.status[i], 0);
    assert_int_equal(s.op[1], FFB_OP_EXECUTE);
    assert_int_equal(s.op[2], FFB_OP_PREPARE);
    assert_int_equal(ffb_conn_is_broken(c), 0);
    ffb_stmt_free(a);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* The allocation and the prepare refused: the execution held behind them
   completes with FFB_E_ABORTED instead of waiting for a handle forever. */
static void test_held_exec_after_refused_prepare(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 17, NULL);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *a;
    OK(c, ffb_stmt_new(c, &a));
    seen s = {0};
    OK(c, ffb_stmt_queue_prepare(a, tx, "insert into t values (1)",
                                 (size_t)-1, record, &s));
    OK(c, ffb_stmt_queue_execute(a, tx, record, &s));
    srv_response(&W, 9, 0, NULL, 0);
    srv_error(&W, 335544326u); /* allocate refused */
    srv_error(&W, 335544326u); /* prepare refused */
    hostile_push(&H, &W);
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.status[0], FFB_E_SERVER);
    assert_int_equal(s.status[1], FFB_E_ABORTED);
    assert_int_equal(ffb_conn_is_broken(c), 0);
    ffb_stmt_free(a);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* A statement freed while its execution is held: the free (which may
   hand the handle to another statement) goes after the execution; and a
   statement freed right after queueing its prepare and execution still
   runs them. */
static void test_free_goes_behind_held_requests(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 17, NULL);
    uint8_t desc[512];
    size_t n = insert_desc(desc, sizeof(desc), 0);
    ffb_stmt *a;
    OK(c, ffb_stmt_new(c, &a));
    srv_response(&W, 3, 0, NULL, 0);
    srv_response(&W, 0, 0, desc, n);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_prepare(a, NULL, "insert into t values (1)", (size_t)-1));
    size_t w0 = H.written_len;
    ffb_tx *tx1, *tx2;
    OK(c, ffb_tx_begin(c, NULL, &tx1));
    OK(c, ffb_tx_begin(c, NULL, &tx2));
    seen s = {0};
    OK(c, ffb_stmt_queue_execute(a, tx1, record, &s)); /* held */
    ffb_stmt_free(a);
    srv_response(&W, 21, 0, NULL, 0);
    srv_response(&W, 22, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0); /* execute */
    srv_response(&W, 0, 0, NULL, 0); /* records */
    hostile_push(&H, &W);
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.status[0], 0);
    static const uint8_t fr[] = {0, 0, 0, FFBP_OP_FREE_STATEMENT, 0, 0, 0, 3};
    static const uint8_t ex[] = {0, 0, 0, FFBP_OP_EXECUTE, 0, 0, 0, 3};
    long at_exec = find(H.written, H.written_len, ex, sizeof(ex), w0);
    assert_true(at_exec >= 0);
    /* The free (deferred) rode in the same write, behind the execution. */
    assert_true(find(H.written, H.written_len, fr, sizeof(fr), w0) > at_exec);
    srv_response(&W, 0, 0, NULL, 0); /* the free's answer */
    srv_response(&W, 0, 0, NULL, 0); /* ping */
    hostile_push(&H, &W);
    OK(c, ffb_conn_ping(c));

    /* Freed right after queueing: the prepare's answer is still read and
       the execution runs. */
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *b;
    OK(c, ffb_stmt_new(c, &b));
    seen t = {0};
    OK(c, ffb_stmt_queue_prepare(b, tx, "insert into t values (1)",
                                 (size_t)-1, record, &t));
    OK(c, ffb_stmt_queue_execute(b, tx, record, &t));
    ffb_stmt_free(b);
    srv_response(&W, 9, 0, NULL, 0);
    srv_response(&W, 0, 0, desc, n); /* the spare handle 3: no allocate */
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    assert_int_equal(ffb_conn_next_result(c, &res), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.status[0], 0);
    assert_int_equal(t.status[1], 0);
    assert_int_equal(ffb_conn_is_broken(c), 0);
    ffb_tx_free(tx1);
    ffb_tx_free(tx2);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* A batch freed while its execution is held: its rows stay until it has
   run (they were cleared at once, and the held execution read past its
   arrays). */
static void test_batch_freed_while_held(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 17, NULL);
    uint8_t desc[512];
    size_t n = insert_desc(desc, sizeof(desc), 1);
    ffb_stmt *a;
    OK(c, ffb_stmt_new(c, &a));
    srv_response(&W, 3, 0, NULL, 0);
    srv_response(&W, 0, 0, desc, n);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_prepare(a, NULL, "insert into t values (?)", (size_t)-1));
    ffb_batch *b;
    OK(c, ffb_batch_new(a, NULL, &b));
    for (int i = 0; i < 2; i++) {
        OK(c, ffb_stmt_bind_int64(a, 0, i));
        OK(c, ffb_batch_add(b));
    }
    ffb_tx *tx1, *tx2;
    OK(c, ffb_tx_begin(c, NULL, &tx1));
    OK(c, ffb_tx_begin(c, NULL, &tx2));
    seen s = {0};
    OK(c, ffb_tx_queue_commit(tx1, record, &s));        /* held */
    OK(c, ffb_batch_queue_execute(b, tx2, record, &s)); /* behind it */
    ffb_batch_free(b);
    srv_response(&W, 21, 0, NULL, 0);
    srv_response(&W, 22, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0); /* commit */
    srv_response(&W, 0, 0, NULL, 0); /* batch create */
    srv_response(&W, 0, 0, NULL, 0); /* batch sync */
    hostile_push(&H, &W);
    /* The part: op_batch_msg (deferred) and op_batch_exec. */
    srv_response(&W, 0, 0, NULL, 0);
    ffbp_put_i32(&W, FFBP_OP_BATCH_CS);
    ffbp_put_i16(&W, 3);
    ffbp_put_u32(&W, 2); /* records */
    ffbp_put_u32(&W, 2); /* counts */
    ffbp_put_u32(&W, 0); /* vectors */
    ffbp_put_u32(&W, 0); /* errors */
    ffbp_put_i32(&W, 1);
    ffbp_put_i32(&W, 1);
    hostile_push(&H, &W);
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.status[0], 0);
    assert_int_equal(s.op[1], FFB_OP_BATCH_EXECUTE);
    assert_int_equal(s.status[1], 0);
    assert_int_equal(ffb_conn_is_broken(c), 0);
    ffb_stmt_free(a);
    ffb_tx_free(tx1);
    ffb_tx_free(tx2);
    ffb_conn_free(c);
}

/* A queued connect closed mid-handshake completes with FFB_E_CANCELLED;
   a later start of the same connection attaches without touching that
   freed result (review: its pointer outlived it; ASan saw the write). */
static void test_queued_connect_closed(void **state) {
    (void)state;
    ffb_conn_options o;
    hostile_options(&o);
    o.io = FFB_IO_EXTERNAL;
    ffb_conn *c = NULL;
    OK(c, ffb_conn_new(&o, &c));
    seen s = {0};
    OK(c, ffb_conn_queue_connect(c, record, &s));
    OK(c, ffb_conn_close(c));
    assert_int_equal(s.n, 1);
    assert_int_equal(s.op[0], FFB_OP_CONNECT);
    assert_int_equal(s.status[0], FFB_E_CANCELLED);
    OK(c, ffb_conn_start(c));
    const uint8_t *out;
    ffb_conn_output_done(c, ffb_conn_output(c, &out));
    srv_accept(&W, FFBP_OP_ACCEPT, 17, NULL, NULL, 0, 0, NULL, 0);
    OK(c, ffb_conn_feed(c, W.data, W.len));
    ffbp_writer_reset(&W);
    ffb_conn_output_done(c, ffb_conn_output(c, &out));
    srv_response(&W, 1, 0, NULL, 0);
    OK(c, ffb_conn_feed(c, W.data, W.len));
    ffbp_writer_reset(&W);
    assert_int_equal(ffb_conn_step(c), 1);
    assert_int_equal(s.n, 1);
    ffb_conn_free(c);
}

/* ffb_blob_get_info on external I/O for a created blob (no info known)
   fails with FFB_E_STATE and queues nothing (review: it queued a request
   completing into the call's stack frame). */
static void test_blob_info_external_queues_nothing(void **state) {
    (void)state;
    ffb_conn *c = ext_attach();
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_blob *b;
    OK(c, ffb_blob_create(c, tx, NULL, &b));
    size_t held = 0, held_after = 0, fifo = c->fifo_len;
    for (const ffb__held *h = c->held_head; h; h = h->next)
        held++;
    ffb_blob_info bi;
    assert_int_equal(ffb_blob_get_info(b, &bi, sizeof(bi)), FFB_E_STATE);
    for (const ffb__held *h = c->held_head; h; h = h->next)
        held_after++;
    assert_int_equal(held_after, held);
    assert_int_equal(c->fifo_len, fifo);
    assert_int_equal(ffb_conn_pending(c), 0);
    ffb_blob_free(b);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* The server goes away with two requests owed: both callbacks run inside
   the ffb_conn_feed_eof() that saw it, in order, with FFB_E_CLOSED and the
   message naming what was awaited - not FFB_E_CANCELLED later. */
static void test_break_completes_with_the_cause(void **state) {
    (void)state;
    ffb_conn *c = ext_attach();
    seen s = {0};
    OK(c, ffb_conn_queue_ping(c, record, &s));
    OK(c, ffb_conn_queue_ping(c, record, &s));
    const uint8_t *out;
    ffb_conn_output_done(c, ffb_conn_output(c, &out));
    assert_int_equal(ffb_conn_feed_eof(c), FFB_E_CLOSED);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.op[0], FFB_OP_PING);
    assert_int_equal(s.status[0], FFB_E_CLOSED);
    assert_int_equal(s.status[1], FFB_E_CLOSED);
    assert_int_equal(ffb_conn_pending(c), 0);
    assert_non_null(strstr(ffb_error_message(ffb_conn_error(c)), "op_ping"));
    OK(c, ffb_conn_close(c));
    assert_int_equal(s.n, 2);
    ffb_conn_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_close_cancels_pending),
        T(test_free_cancels_held),
        T(test_held_goes_after_the_answer),
        T(test_results_in_queue_order),
        T(test_held_autocommit_commit_fails),
        T(test_prepare_behind_held_exec),
        T(test_held_exec_after_refused_prepare),
        T(test_free_goes_behind_held_requests),
        T(test_batch_freed_while_held),
        T(test_queued_connect_closed),
        T(test_blob_info_external_queues_nothing),
        T(test_break_completes_with_the_cause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
