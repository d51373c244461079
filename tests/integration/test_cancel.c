/*
 * Cancellation and timeouts against real servers (docs/cancel.md):
 * ffb_conn_cancel() from another thread while a blocking call waits
 * (raise: FFB_E_CANCELLED within 100 ms, the connection usable; abort:
 * FFB_E_SHUTDOWN and broken), disable/enable, the statement timeout per
 * statement and per attachment (Firebird 4: FFB_E_STMT_TIMEOUT, usable
 * afterwards; Firebird 3 refuses with FFB_E_UNSUPPORTED, nothing sent),
 * the session idle timeout (the next call: FFB_E_SHUTDOWN, broken), and
 * a cancel of a queued request on a connection with external I/O. FB3E
 * and FB4E run everything through wire crypt and zlib.
 */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/extio.h"
#include "tests/support/it.h"

typedef it_target target;

#define GDS_CANCELLED 335544794u
#define GDS_ATT_STMT_TIMEOUT 335545128u
#define GDS_REQ_STMT_TIMEOUT 335545129u
#define GDS_ATT_SHUTDOWN 335544856u
#define GDS_ATT_SHUT_KILLED 335545130u
#define GDS_ATT_SHUT_IDLE 335545131u

/* A query that runs `ms` milliseconds (the clock is read on every turn:
   'NOW' is evaluated each time, CURRENT_TIMESTAMP is not) and then
   returns one row: how many turns it made. Bounded, so that a cancel
   that does not work costs seconds, not a server busy for ever. */
static void busy_sql(char *buf, size_t size, int ms) {
    snprintf(buf, size,
             "execute block returns (n bigint) as "
             "declare t timestamp; "
             "begin n = 0; t = cast('NOW' as timestamp); "
             "while (datediff(millisecond from t to cast('NOW' as "
             "timestamp)) < %d) do n = n + 1; suspend; end",
             ms);
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void options(const target *t, ffb_conn_options *o, int io) {
    it_options(t, o);
    o->io = io;
    o->io_timeout_ms = 60000;
    o->connect_timeout_ms = 60000;
}

static ffb_stmt *prepare(ffb_conn *c, ffb_tx *tx, const char *sql);

/* The busy query of `ms`, prepared in tx. */
static ffb_stmt *busy_stmt(ffb_conn *c, ffb_tx *tx, int ms) {
    char sql[512];
    busy_sql(sql, sizeof(sql), ms);
    return prepare(c, tx, sql);
}

static ffb_conn *open_conn(const target *t) {
    ffb_conn_options o;
    options(t, &o, FFB_IO_BLOCKING);
    return it_open(&o);
}

static ffb_stmt *prepare(ffb_conn *c, ffb_tx *tx, const char *sql) {
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    return s;
}

/* SELECT 1 in `tx` on a connection that must be fully usable: prepare
   (op_allocate_statement + op_prepare_statement in one write, with any
   deferred free riding along) = 1 round trip, execute (op_execute +
   op_fetch in one write, the one row and the end in the answer) = 1. */
static void select_one(ffb_conn *c, ffb_tx *tx) {
    uint64_t b = it_rts(c);
    ffb_stmt *s = prepare(c, tx, "select 1 from rdb$database");
    assert_int_equal(it_rts(c) - b, 1);
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    int64_t v = 0;
    OK(c, ffb_stmt_get_int64(s, 0, &v));
    assert_int_equal(v, 1);
    assert_int_equal(ffb_stmt_fetch(s), 0);
    assert_int_equal(it_rts(c) - b, 2);
    ffb_stmt_free(s);
}

/* ---- the other thread ---------------------------------------------------- */

typedef struct canceller {
    ffb_conn *conn;
    int kind;
    int delay_ms;
    int64_t at;  /* when ffb_conn_cancel was called */
    int rc;
    pthread_t th;
} canceller;

static void *cancel_main(void *arg) {
    canceller *k = arg;
    usleep((useconds_t)k->delay_ms * 1000);
    k->at = now_ms();
    k->rc = ffb_conn_cancel(k->conn, k->kind);
    return NULL;
}

static void cancel_later(canceller *k, ffb_conn *c, int kind, int delay_ms) {
    memset(k, 0, sizeof(*k));
    k->conn = c;
    k->kind = kind;
    k->delay_ms = delay_ms;
    assert_int_equal(pthread_create(&k->th, NULL, cancel_main, k), 0);
}

static void cancel_join(canceller *k) {
    pthread_join(k->th, NULL);
    assert_int_equal(k->rc, 0);
}

/* Run the busy query (prepared) with a cancel of `kind` from another
   thread after delay_ms: the execute's code, and how long after the
   cancel call it returned. */
static int run_cancelled(ffb_conn *c, ffb_stmt *s, ffb_tx *tx, int kind,
                         int delay_ms, int64_t *after_ms) {
    canceller k;
    cancel_later(&k, c, kind, delay_ms);
    int rc = ffb_stmt_execute(s, tx);
    int64_t end = now_ms();
    cancel_join(&k);
    *after_ms = end - k.at;
    return rc;
}

/* ---- raise ------------------------------------------------------------- */

static void test_raise_from_thread(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    ffb_stmt *s = busy_stmt(c, tx, 20000);

    uint64_t b = it_rts(c);
    int64_t after;
    int rc = run_cancelled(c, s, tx, FFB_CANCEL_RAISE, 300, &after);
    print_message("%s: raise answered %lld ms after ffb_conn_cancel\n",
                  t->name, (long long)after);
    assert_int_equal(rc, FFB_E_CANCELLED);
    assert_int_equal(ffb_error_code(ffb_conn_error(c)), FFB_E_CANCELLED);
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)), GDS_CANCELLED);
    assert_true(after >= 0 && after < 100);
    /* op_execute + op_fetch in one write: 1 round trip (the execute's
       answer came at once; op_cancel is never answered and adds none). */
    assert_int_equal(it_rts(c) - b, 1);
    assert_false(ffb_conn_is_broken(c));
    ffb_stmt_free(s);

    select_one(c, tx);
    b = it_rts(c);
    OK(c, ffb_tx_commit(tx));
    assert_int_equal(it_rts(c) - b, 1); /* op_commit */
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* A raise while nothing runs goes out ahead of the next call and finds
   nothing to cancel. */
static void test_raise_idle(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    OK(c, ffb_conn_cancel(c, FFB_CANCEL_RAISE));
    ffb_tx *tx = it_active_tx(c);
    select_one(c, tx);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- abort ------------------------------------------------------------- */

static void test_abort_from_thread(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    ffb_stmt *s = busy_stmt(c, tx, 20000);

    int64_t after;
    int rc = run_cancelled(c, s, tx, FFB_CANCEL_ABORT, 300, &after);
    print_message("%s: abort answered %lld ms after ffb_conn_cancel\n",
                  t->name, (long long)after);
    assert_int_equal(rc, FFB_E_SHUTDOWN);
    assert_true(after >= 0 && after < 100);
    assert_true(ffb_conn_is_broken(c));
    const ffb_error *e = ffb_conn_error(c);
    assert_int_equal(ffb_error_code(e), FFB_E_SHUTDOWN);
    assert_int_equal(ffb_error_gds(e), GDS_ATT_SHUTDOWN);
    if (t->version >= 4) /* FB3 sends isc_att_shutdown alone */
        assert_int_equal(ffb_error_gds_at(e, 1), GDS_ATT_SHUT_KILLED);
    /* Every later call: the cause. */
    assert_int_equal(ffb_conn_ping(c), FFB_E_SHUTDOWN);
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)), GDS_ATT_SHUTDOWN);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- disable / enable ------------------------------------------------------ */

static void test_disable_enable(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    ffb_stmt *s = busy_stmt(c, tx, 1500);

    /* Disabled (sent ahead of the execute): the raise is ignored and the
       query runs its 1.5 s to the end. */
    OK(c, ffb_conn_cancel(c, FFB_CANCEL_DISABLE));
    int64_t t0 = now_ms(), after;
    uint64_t b = it_rts(c);
    int rc = run_cancelled(c, s, tx, FFB_CANCEL_RAISE, 300, &after);
    OK(c, rc);
    assert_true(now_ms() - t0 >= 1400);
    assert_int_equal(ffb_stmt_fetch(s), 1);
    int64_t n = 0;
    OK(c, ffb_stmt_get_int64(s, 0, &n));
    assert_true(n > 0);
    assert_int_equal(ffb_stmt_fetch(s), 0);
    /* op_execute + op_fetch: 1 (the row and the end in one answer). */
    assert_int_equal(it_rts(c) - b, 1);

    /* Enabled again: the next raise cancels. */
    OK(c, ffb_conn_cancel(c, FFB_CANCEL_ENABLE));
    rc = run_cancelled(c, s, tx, FFB_CANCEL_RAISE, 300, &after);
    print_message("%s: raise after enable answered %lld ms after the call\n",
                  t->name, (long long)after);
    assert_int_equal(rc, FFB_E_CANCELLED);
    assert_true(after >= 0 && after < 100);
    ffb_stmt_free(s);
    select_one(c, tx);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- statement timeouts ------------------------------------------------------ */

static void test_statement_timeout(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    ffb_stmt *s = busy_stmt(c, tx, 20000);

    if (t->version < 4) {
        /* Protocol 15: no timeout field, no SET STATEMENT TIMEOUT. */
        uint64_t b = it_rts(c);
        assert_int_equal(ffb_stmt_set_timeout(s, 500), FFB_E_UNSUPPORTED);
        assert_int_equal(ffb_error_code(ffb_conn_error(c)), FFB_E_UNSUPPORTED);
        OK(c, ffb_stmt_set_timeout(s, 0));
        assert_int_equal(ffb_conn_set_statement_timeout(c, 700),
                         FFB_E_UNSUPPORTED);
        assert_int_equal(ffb_conn_set_idle_timeout(c, 1), FFB_E_UNSUPPORTED);
        assert_int_equal(it_rts(c) - b, 0); /* nothing was sent */
        assert_false(ffb_conn_is_broken(c));
        ffb_stmt_free(s);
        select_one(c, tx);
        OK(c, ffb_tx_commit(tx));
        ffb_tx_free(tx);
        ffb_conn_free(c);
        return;
    }

    /* Per statement: 500 ms in op_execute. */
    OK(c, ffb_stmt_set_timeout(s, 500));
    uint64_t b = it_rts(c);
    int64_t t0 = now_ms();
    int rc = ffb_stmt_execute(s, tx);
    int64_t took = now_ms() - t0;
    print_message("%s: statement timeout 500 ms fired after %lld ms\n",
                  t->name, (long long)took);
    assert_int_equal(rc, FFB_E_STMT_TIMEOUT);
    const ffb_error *e = ffb_conn_error(c);
    assert_int_equal(ffb_error_gds(e), GDS_CANCELLED);
    assert_int_equal(ffb_error_gds_at(e, 1), GDS_REQ_STMT_TIMEOUT);
    assert_true(took >= 450 && took < 3000);
    assert_int_equal(it_rts(c) - b, 1); /* op_execute + op_fetch */
    assert_false(ffb_conn_is_broken(c));
    select_one(c, tx);

    /* Per attachment: 700 ms, the statement's own value off. */
    OK(c, ffb_stmt_set_timeout(s, 0));
    b = it_rts(c);
    OK(c, ffb_conn_set_statement_timeout(c, 700));
    assert_int_equal(it_rts(c) - b, 1); /* op_exec_immediate, tx 0 */
    t0 = now_ms();
    rc = ffb_stmt_execute(s, tx);
    took = now_ms() - t0;
    print_message("%s: attachment timeout 700 ms fired after %lld ms\n",
                  t->name, (long long)took);
    assert_int_equal(rc, FFB_E_STMT_TIMEOUT);
    assert_int_equal(ffb_error_gds_at(ffb_conn_error(c), 1),
                     GDS_ATT_STMT_TIMEOUT);
    assert_true(took >= 650 && took < 3000);
    OK(c, ffb_conn_set_statement_timeout(c, 0));
    ffb_stmt_free(s);
    select_one(c, tx);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- session idle timeout ------------------------------------------------- */

static void test_idle_timeout(void **state) {
    target *t = *state;
    if (t->version < 4)
        return; /* refused on FB3: test_statement_timeout */
    ffb_conn *c = open_conn(t);
    uint64_t b = it_rts(c);
    /* 1 SECOND (the statement's default unit would be MINUTE). */
    OK(c, ffb_conn_set_idle_timeout(c, 1));
    assert_int_equal(it_rts(c) - b, 1); /* op_exec_immediate, tx 0 */
    sleep(3);
    /* The server ended it silently; the next request is answered with
       the shutdown. */
    assert_int_equal(ffb_conn_ping(c), FFB_E_SHUTDOWN);
    const ffb_error *e = ffb_conn_error(c);
    assert_int_equal(ffb_error_gds(e), GDS_ATT_SHUTDOWN);
    assert_int_equal(ffb_error_gds_at(e, 1), GDS_ATT_SHUT_IDLE);
    assert_true(ffb_conn_is_broken(c));
    assert_int_equal(ffb_conn_ping(c), FFB_E_SHUTDOWN);
    ffb_conn_free(c);
}

/* ---- external I/O --------------------------------------------------------- */

/* A queued execution (op_execute + op_fetch) cancelled from the
   application's own loop. */
static void test_external_cancel(void **state) {
    target *t = *state;
    ffb_conn_options o;
    options(t, &o, FFB_IO_EXTERNAL);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    extio x;
    assert_int_equal(extio_open(&x, c, t->dsn), 0);
    assert_int_equal(extio_connect(&x), 1);
    /* Not attached yet is refused; here it is attached. */
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    char sql[512];
    busy_sql(sql, sizeof(sql), 20000);
    OK(c, ffb_stmt_queue_prepare(s, tx, sql, (size_t)-1, NULL, NULL));
    const ffb_result *res;
    assert_int_equal(extio_next(&x, &res), 1);
    OK(c, ffb_result_status(res));
    /* op_execute + op_fetch: the result completes with the first fetch,
       which the query holds back. */
    OK(c, ffb_stmt_queue_execute(s, tx, NULL, NULL));
    int64_t t0 = now_ms();
    while (now_ms() - t0 < 300)
        assert_int_equal(extio_pump(&x, 50), 0);
    assert_false(ffb_conn_wants(c) & FFB_WANT_WRITE);
    uint64_t flushes_before;
    {
        ffb_stats st;
        ffb_conn_stats(c, &st, sizeof(st));
        flushes_before = st.flushes;
    }
    int64_t at = now_ms();
    OK(c, ffb_conn_cancel(c, FFB_CANCEL_RAISE));
    assert_true(ffb_conn_wants(c) & FFB_WANT_WRITE);
    {
        ffb_stats st;
        ffb_conn_stats(c, &st, sizeof(st));
        assert_int_equal(st.flushes - flushes_before, 1); /* op_cancel */
    }
    assert_int_equal(extio_next(&x, &res), 1);
    int64_t after = now_ms() - at;
    print_message("%s: external raise answered after %lld ms\n", t->name,
                  (long long)after);
    assert_int_equal(ffb_result_status(res), FFB_E_CANCELLED);
    assert_true(after < 100);
    /* The cursor's stream ended with the error: no rows, the end. */
    assert_int_equal(ffb_stmt_fetch(s), 0);
    ffb_stmt_free(s);
    OK(c, ffb_tx_queue_commit(tx, NULL, NULL));
    assert_int_equal(extio_next(&x, &res), 1);
    OK(c, ffb_result_status(res));
    ffb_tx_free(tx);
    assert_int_equal(ffb_conn_cancel(c, 0), FFB_E_INVAL);
    assert_int_equal(ffb_conn_cancel(c, 5), FFB_E_INVAL);
    extio_close(&x);
    ffb_conn_free(c);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB4", "FB3E", "FB4E"};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raise_from_thread),
        cmocka_unit_test(test_raise_idle),
        cmocka_unit_test(test_abort_from_thread),
        cmocka_unit_test(test_disable_enable),
        cmocka_unit_test(test_statement_timeout),
        cmocka_unit_test(test_idle_timeout),
        cmocka_unit_test(test_external_cancel),
    };
    return it_main("CANCEL", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
