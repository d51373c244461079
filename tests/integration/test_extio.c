/*
 * The whole request path with the application's own I/O (FFB_IO_EXTERNAL)
 * against real servers: the test owns the socket and drives the
 * connection through the byte pump (tests/support/extio.c), operation by
 * operation through the queue API, with the round-trip budgets of the
 * blocking API. Where a budget depends on the server it is measured the
 * blocking way on the same server in the same test and must be equal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/extio.h"
#include "tests/support/it.h"

typedef it_target target;

static void options(const target *t, ffb_conn_options *o, int io) {
    it_options(t, o);
    o->io = io;
    o->io_timeout_ms = 60000;
    o->connect_timeout_ms = 60000;
}

static ffb_conn *blocking_conn(const target *t) {
    ffb_conn_options o;
    options(t, &o, FFB_IO_BLOCKING);
    return it_open(&o);
}

static ffb_conn *external_conn(const target *t, extio *x) {
    ffb_conn_options o;
    options(t, &o, FFB_IO_EXTERNAL);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(extio_open(x, c, t->dsn), 0);
    int rc = extio_connect(x);
    if (rc != 1)
        fail_msg("external connect: %d %s", rc,
                 ffb_error_message(ffb_conn_error(c)));
    return c;
}

static void done_conn(ffb_conn *c, extio *x) {
    extio_close(x);
    ffb_conn_free(c);
}

/* The next result, which must have succeeded; its op is returned. */
static int next_ok(extio *x, int op) {
    const ffb_result *res;
    int rc = extio_next(x, &res);
    if (rc != 1)
        fail_msg("no result: %d %s", rc,
                 ffb_error_message(ffb_conn_error(x->conn)));
    if (ffb_result_status(res) != 0)
        fail_msg("result of op %d failed: %s", ffb_result_op(res),
                 ffb_error_message(ffb_result_error(res)));
    assert_int_equal(ffb_result_op(res), op);
    return ffb_result_op(res);
}

static int setup_target(void **state) {
    target *t = *state;
    ffb_conn *c = blocking_conn(t);
    it_exec(c,
            "recreate table %s (id integer primary key, v varchar(40), "
            "b blob sub_type binary)",
            t->table);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
    return 0;
}

static int teardown_target(void **state) {
    target *t = *state;
    ffb_conn *c = blocking_conn(t);
    it_exec(c, "drop table %s", t->table);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
    return 0;
}

/* The connect costs what the blocking connect costs on this server. */
static void test_connect(void **state) {
    target *t = *state;
    ffb_conn *b = blocking_conn(t);
    uint64_t want = it_rts(b);
    OK(b, ffb_conn_close(b));
    ffb_conn_free(b);
    extio x;
    ffb_conn *c = external_conn(t, &x);
    assert_int_equal(ffb_conn_is_attached(c), 1);
    printf("# %s: connect in %llu round trips (blocking: %llu)\n", t->name,
           (unsigned long long)it_rts(c), (unsigned long long)want);
    assert_int_equal(it_rts(c), want);
    assert_int_equal(ffb_conn_deadline(c), -1); /* nothing owed */
    done_conn(c, &x);
}

typedef struct connect_seen {
    int calls, status, op;
    char message[256];
} connect_seen;

static void on_connect(ffb_conn *c, const ffb_result *res, void *data) {
    connect_seen *seen = data;
    (void)c;
    seen->calls++;
    seen->status = ffb_result_status(res);
    seen->op = ffb_result_op(res);
    snprintf(seen->message, sizeof(seen->message), "%s",
             ffb_result_status(res) ? ffb_error_message(ffb_result_error(res))
                                    : "");
}

/* The queued connect: its result arrives through the callback inside the
   feed that ends the handshake, at the blocking connect's cost; a refused
   login completes it with the server's error; without a callback
   ffb_conn_next_result() takes it. */
static void test_queued_connect(void **state) {
    target *t = *state;
    ffb_conn *b = blocking_conn(t);
    uint64_t want = it_rts(b);
    OK(b, ffb_conn_close(b));
    ffb_conn_free(b);

    ffb_conn_options o;
    options(t, &o, FFB_IO_EXTERNAL);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    extio x;
    assert_int_equal(extio_open(&x, c, t->dsn), 0);
    connect_seen seen = {0};
    OK(c, ffb_conn_queue_connect(c, on_connect, &seen));
    assert_int_equal(ffb_conn_queue_connect(c, on_connect, &seen),
                     FFB_E_STATE); /* started already: no second result */
    while (seen.calls == 0)
        assert_true(extio_pump(&x, 30000) >= 0);
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.status, 0);
    assert_int_equal(seen.op, FFB_OP_CONNECT);
    assert_int_equal(ffb_conn_is_attached(c), 1);
    assert_int_equal(it_rts(c), want); /* the same handshake */
    assert_int_equal(ffb_conn_pending(c), 0);
    done_conn(c, &x);

    o.password = "not the password";
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(extio_open(&x, c, t->dsn), 0);
    memset(&seen, 0, sizeof(seen));
    OK(c, ffb_conn_queue_connect(c, on_connect, &seen));
    int rc = 0;
    while (seen.calls == 0 && rc >= 0)
        rc = extio_pump(&x, 30000);
    assert_int_equal(seen.calls, 1); /* delivered by the failing feed */
    assert_int_equal(seen.status, FFB_E_AUTH);
    assert_int_equal(rc, FFB_E_AUTH);
    assert_non_null(strstr(seen.message, "password"));
    assert_int_equal(ffb_conn_pending(c), 0);
    done_conn(c, &x);

    o.password = "masterkey";
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(extio_open(&x, c, t->dsn), 0);
    OK(c, ffb_conn_queue_connect(c, NULL, NULL));
    const ffb_result *res;
    assert_int_equal(extio_next(&x, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_CONNECT);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(ffb_conn_is_attached(c), 1);
    done_conn(c, &x);
}

/* The statement cache through the queue: a new text costs what the
   blocking calls cost; given back and checked out again
   it is the same statement, nothing to wait for (1 round trip: the
   execution alone); checked out while in use, nothing to wait for either,
   the second statement's prepare rides with its execution. A
   text the server refuses completes its FFB_OP_PREPARE with the error and
   is not kept. */
static void test_queued_cache(void **state) {
    target *t = *state;
    extio x;
    ffb_conn *c = external_conn(t, &x);
    char sql[256];
    snprintf(sql, sizeof(sql), "select count(*) from %s where id > -1",
             t->table);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s1;
    uint64_t r0 = it_rts(c);
    assert_int_equal(ffb_conn_queue_prepare(c, tx, sql, (size_t)-1, &s1, NULL,
                                            NULL),
                     0);
    OK(c, ffb_stmt_queue_execute(s1, tx, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    next_ok(&x, FFB_OP_PREPARE);
    next_ok(&x, FFB_OP_EXECUTE);
    /* The execution waits in the library for the describe: as
       ffb_conn_prepare() + ffb_stmt_execute() cost, 2 round trips (Firebird
       3: 3, its allocate is answered before the prepare can go). */
    assert_int_equal(it_rts(c) - r0, t->version == 3 ? 3 : 2);
    assert_int_equal(extio_fetch(&x, s1), 1);
    assert_int_equal(extio_fetch(&x, s1), 0);
    ffb_stmt_free(s1); /* back to the cache */

    ffb_stmt *s2;
    r0 = it_rts(c);
    assert_int_equal(ffb_conn_queue_prepare(c, tx, sql, (size_t)-1, &s2, NULL,
                                            NULL),
                     1);
    assert_ptr_equal(s2, s1);
    assert_int_equal(ffb_conn_pending(c), 0);
    OK(c, ffb_stmt_queue_execute(s2, tx, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    next_ok(&x, FFB_OP_EXECUTE);
    assert_int_equal(it_rts(c) - r0, 1);

    /* s2 is in use (its cursor open): a second checkout of the text. */
    ffb_stmt *s3;
    r0 = it_rts(c);
    assert_int_equal(ffb_conn_queue_prepare(c, tx, sql, (size_t)-1, &s3, NULL,
                                            NULL),
                     1);
    assert_ptr_not_equal(s3, s2);
    OK(c, ffb_stmt_queue_execute(s3, tx, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    next_ok(&x, FFB_OP_EXECUTE);
    /* No spare handle yet: the allocation and the prepare (with s2's
       formats) go in the first write, and op_execute, which needs the real
       handle (reference 02, 6), in the next: 2, as ffb_conn_prepare(). */
    assert_int_equal(it_rts(c) - r0, 2);
    assert_int_equal(extio_fetch(&x, s3), 1);
    assert_int_equal(extio_fetch(&x, s3), 0);
    ffb_stmt_free(s3);
    ffb_stmt_free(s2);

    ffb_stmt *bad;
    assert_int_equal(ffb_conn_queue_prepare(c, tx, "select nonsense from",
                                            (size_t)-1, &bad, NULL, NULL),
                     0);
    OK(c, ffb_conn_flush(c));
    const ffb_result *res;
    assert_int_equal(extio_next(&x, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_PREPARE);
    assert_int_equal(ffb_result_status(res), FFB_E_SERVER);
    ffb_stmt_free(bad); /* not kept: the next checkout prepares again */
    assert_int_equal(ffb_conn_queue_prepare(c, tx, "select nonsense from",
                                            (size_t)-1, &bad, NULL, NULL),
                     0);
    OK(c, ffb_conn_flush(c));
    assert_int_equal(extio_next(&x, &res), 1);
    assert_int_equal(ffb_result_status(res), FFB_E_SERVER);
    ffb_stmt_free(bad);
    OK(c, ffb_tx_queue_commit(tx, NULL, NULL));
    next_ok(&x, FFB_OP_COMMIT);
    ffb_tx_free(tx);
    done_conn(c, &x);
}

/* Create, the retaining ends and drop, all queued: a new database made
   through external I/O, a transaction committed and rolled back retaining
   and then committed in one write (1 round trip: the start and three ends
   travel together), then op_drop_database (1 round trip). */
static void test_create_retaining_drop(void **state) {
    target *t = *state;
    char var[64];
    snprintf(var, sizeof(var), "FFB_TEST_%s_DBDIR", t->name);
    const char *dir = getenv(var);
    if (!dir)
        fail_msg("%s is not set", var);
    const char *colon = strchr(t->dsn, ':');
    assert_non_null(colon);
    char dsn[512];
    snprintf(dsn, sizeof(dsn), "%.*s:%s/ffb_extio_%s_%d.fdb",
             (int)(colon - t->dsn), t->dsn, dir, t->name, (int)getpid());
    ffb_conn_options o;
    options(t, &o, FFB_IO_EXTERNAL);
    o.dsn = dsn;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    extio x;
    assert_int_equal(extio_open(&x, c, dsn), 0);
    ffb_create_options co = FFB_CREATE_OPTIONS_INIT;
    co.overwrite = 1;
    co.page_size = 8192;
    OK(c, ffb_conn_queue_create_database(c, &co, NULL, NULL));
    next_ok(&x, FFB_OP_CREATE_DATABASE);
    assert_int_equal(ffb_conn_is_attached(c), 1);

    ffb_tx *tx;
    uint64_t r0 = it_rts(c);
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_tx_queue_commit_retaining(tx, NULL, NULL));
    OK(c, ffb_tx_queue_rollback_retaining(tx, NULL, NULL));
    OK(c, ffb_tx_queue_commit(tx, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    next_ok(&x, FFB_OP_COMMIT_RETAINING);
    next_ok(&x, FFB_OP_ROLLBACK_RETAINING);
    next_ok(&x, FFB_OP_COMMIT);
    assert_int_equal(it_rts(c) - r0, 1);
    assert_int_equal(ffb_tx_is_active(tx), 0);
    ffb_tx_free(tx);

    r0 = it_rts(c);
    OK(c, ffb_conn_queue_drop_database(c, NULL, NULL));
    next_ok(&x, FFB_OP_DROP_DATABASE);
    assert_int_equal(it_rts(c) - r0, 1);
    extio_close(&x);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);

    /* Gone: a blocking attach to it fails with the server's I/O error. */
    options(t, &o, FFB_IO_BLOCKING);
    o.dsn = dsn;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(ffb_conn_connect(c), FFB_E_SERVER);
    ffb_conn_free(c);
}

/* 2500 rows, 1..2500 (a recursion that deep would exceed the server's
   limit of 1024 levels: two of 50, crossed). */
static const char *const SELECT_2500 =
    "with recursive r(n) as (select 1 from rdb$database union all "
    "select n + 1 from r where n < 50) select (a.n - 1) * 50 + b.n, "
    "'row ' || ((a.n - 1) * 50 + b.n) from r a cross join r b";

/* Prepare, execute and every row through the queue. Firebird 4 takes
   the start, the allocation and the prepare in one write (1 round trip);
   Firebird 3 refuses to prepare in a transaction it has not answered, so
   the prepare waits for the start's answer (2), as the blocking prepare
   does. The execution brings the first rows (1); the rest come as the
   blocking fetch would get them. */
static void test_prepare_execute_fetch(void **state) {
    target *t = *state;
    /* The blocking budget for the rows, on this server. */
    ffb_conn *b = blocking_conn(t);
    ffb_tx *btx;
    OK(b, ffb_tx_begin(b, NULL, &btx));
    ffb_stmt *bs;
    OK(b, ffb_stmt_new(b, &bs));
    uint64_t r0 = it_rts(b);
    OK(b, ffb_stmt_prepare(bs, btx, SELECT_2500, (size_t)-1));
    uint64_t want_prepare = it_rts(b) - r0;
    r0 = it_rts(b);
    OK(b, ffb_stmt_execute(bs, btx));
    int brc;
    while ((brc = ffb_stmt_fetch(bs)) == 1)
        ;
    OK(b, brc);
    uint64_t want_rows = it_rts(b) - r0;
    ffb_stmt_free(bs);
    OK(b, ffb_tx_rollback(btx));
    ffb_tx_free(btx);
    OK(b, ffb_conn_close(b));
    ffb_conn_free(b);
    assert_int_equal(want_prepare, t->version >= 4 ? 1 : 2);

    extio x;
    ffb_conn *c = external_conn(t, &x);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    r0 = it_rts(c);
    OK(c, ffb_stmt_queue_prepare(s, tx, SELECT_2500, (size_t)-1, NULL, NULL));
    next_ok(&x, FFB_OP_PREPARE);
    assert_int_equal(it_rts(c) - r0, want_prepare);
    assert_int_equal(ffb_stmt_column_count(s), 2);
    assert_int_equal(ffb_stmt_has_cursor(s), 1);

    r0 = it_rts(c);
    OK(c, ffb_stmt_queue_execute(s, tx, NULL, NULL));
    next_ok(&x, FFB_OP_EXECUTE);
    int64_t n = 0, sum = 0;
    int rc;
    while ((rc = extio_fetch(&x, s)) == 1) {
        int64_t v;
        OK(c, ffb_stmt_get_int64(s, 0, &v));
        const char *text;
        size_t len;
        OK(c, ffb_stmt_get_text(s, 1, &text, &len));
        char want[32];
        snprintf(want, sizeof(want), "row %lld", (long long)v);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(text, want, len);
        n++;
        sum += v;
    }
    if (rc != 0)
        fail_msg("fetch after %lld rows: %d %s", (long long)n, rc,
                 ffb_error_message(ffb_conn_error(c)));
    assert_int_equal(n, 2500);
    assert_int_equal(sum, 2500 * 2501 / 2);
    printf("# %s: prepare %llu, 2500 rows %llu round trips (blocking %llu)\n",
           t->name, (unsigned long long)want_prepare,
           (unsigned long long)(it_rts(c) - r0),
           (unsigned long long)want_rows);
    assert_int_equal(it_rts(c) - r0, want_rows);
    ffb_stmt_free(s);
    OK(c, ffb_tx_queue_rollback(tx, NULL, NULL));
    next_ok(&x, FFB_OP_ROLLBACK);
    ffb_tx_free(tx);
    done_conn(c, &x);
}

/* Three inserts, each with its own row count, and the commit: one
   write, one round trip. */
static void test_dml_and_commit(void **state) {
    target *t = *state;
    extio x;
    ffb_conn *c = external_conn(t, &x);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[160];
    snprintf(sql, sizeof(sql), "insert into %s (id, v) values (?, ?)",
             t->table);
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_queue_prepare(s, tx, sql, (size_t)-1, NULL, NULL));
    next_ok(&x, FFB_OP_PREPARE);
    uint64_t r0 = it_rts(c);
    size_t w0 = x.writes;
    for (int i = 1; i <= 3; i++) {
        OK(c, ffb_stmt_bind_int64(s, 0, i));
        OK(c, ffb_stmt_bind_text(s, 1, "three", 5));
        OK(c, ffb_stmt_queue_execute(s, tx, NULL, NULL));
    }
    OK(c, ffb_tx_queue_commit(tx, NULL, NULL));
    for (int i = 1; i <= 3; i++) {
        const ffb_result *res;
        assert_int_equal(extio_next(&x, &res), 1);
        assert_int_equal(ffb_result_status(res), 0);
        assert_int_equal(ffb_result_op(res), FFB_OP_EXECUTE);
        assert_int_equal(ffb_result_rows_affected(res), 1);
    }
    next_ok(&x, FFB_OP_COMMIT);
    assert_int_equal(it_rts(c) - r0, 1);
    assert_int_equal(x.writes - w0, 1);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    done_conn(c, &x);
}

/* A transaction started behind another one: a request naming it waits in
   the library for the start's answer - queueing writes nothing and reads
   nothing, and the request goes out by itself once that answer is in
   (2 round trips, as the blocking call costs). */
static void test_held_until_the_handle_is_known(void **state) {
    target *t = *state;
    extio x;
    ffb_conn *c = external_conn(t, &x);
    ffb_tx *tx1, *tx2;
    OK(c, ffb_tx_begin(c, NULL, &tx1));
    OK(c, ffb_tx_begin(c, NULL, &tx2)); /* tx1 is no longer the last */
    uint8_t info[64];
    static const uint8_t items[] = {4 /* isc_info_tra_id */, 1};
    uint64_t r0 = it_rts(c);
    size_t turns = x.turns;
    OK(c, ffb_tx_queue_info(tx1, items, sizeof(items), info, sizeof(info),
                            NULL, NULL));
    OK(c, ffb_tx_queue_commit(tx1, NULL, NULL));
    assert_int_equal(x.turns, turns); /* queueing did no I/O */
    assert_int_equal(ffb_conn_pending(c), 2);
    const ffb_result *res;
    assert_int_equal(extio_next(&x, &res), 1);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(ffb_result_op(res), FFB_OP_INFO);
    assert_true(ffb_result_length(res) >= 4);
    assert_int_equal(info[0], 4);
    next_ok(&x, FFB_OP_COMMIT);
    assert_int_equal(it_rts(c) - r0, 2);
    OK(c, ffb_tx_queue_rollback(tx2, NULL, NULL));
    next_ok(&x, FFB_OP_ROLLBACK);
    ffb_tx_free(tx1);
    ffb_tx_free(tx2);
    done_conn(c, &x);
}

/* Execute immediate with parameters, ping and the info requests: all in
   one write, one round trip. */
static void test_immediate_ping_info(void **state) {
    target *t = *state;
    extio x;
    ffb_conn *c = external_conn(t, &x);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[200];
    snprintf(sql, sizeof(sql),
             "update or insert into %s (id, v) values (?, ?) matching (id)",
             t->table);
    ffb_value v[2];
    memset(v, 0, sizeof(v));
    v[0].type = FFB_VALUE_INT64;
    v[0].i = 100;
    v[1].type = FFB_VALUE_TEXT;
    v[1].p = "by value";
    v[1].len = 8;
    static const uint8_t db_items[] = {14 /* isc_info_page_size */, 1};
    uint8_t info[64];
    uint64_t r0 = it_rts(c);
    OK(c, ffb_conn_queue_execute_immediate(c, tx, sql, (size_t)-1, v, 2, NULL,
                                           NULL));
    OK(c, ffb_conn_queue_ping(c, NULL, NULL));
    OK(c, ffb_conn_queue_info(c, db_items, sizeof(db_items), info,
                              sizeof(info), NULL, NULL));
    next_ok(&x, FFB_OP_EXECUTE_IMMEDIATE);
    next_ok(&x, FFB_OP_PING);
    next_ok(&x, FFB_OP_INFO);
    assert_int_equal(it_rts(c) - r0, 1);
    assert_int_equal(info[0], 14);
    /* The row is there, in this transaction. */
    snprintf(sql, sizeof(sql), "select v from %s where id = 100", t->table);
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_queue_prepare(s, tx, sql, (size_t)-1, NULL, NULL));
    OK(c, ffb_stmt_queue_execute(s, tx, NULL, NULL));
    next_ok(&x, FFB_OP_PREPARE);
    next_ok(&x, FFB_OP_EXECUTE);
    assert_int_equal(extio_fetch(&x, s), 1);
    const char *text;
    size_t len;
    OK(c, ffb_stmt_get_text(s, 0, &text, &len));
    assert_int_equal(len, 8);
    assert_memory_equal(text, "by value", 8);
    assert_int_equal(extio_fetch(&x, s), 0);
    /* The plan: queued, then read without I/O. */
    const char *plan;
    assert_int_equal(ffb_stmt_queue_plan(s, FFB_PLAN_LEGACY, NULL, NULL), 0);
    next_ok(&x, FFB_OP_PLAN);
    size_t turns = x.turns;
    OK(c, ffb_stmt_plan(s, FFB_PLAN_LEGACY, &plan));
    assert_int_equal(x.turns, turns);
    assert_non_null(strstr(plan, "PLAN"));
    assert_int_equal(ffb_stmt_queue_plan(s, FFB_PLAN_LEGACY, NULL, NULL), 1);
    ffb_stmt_free(s);
    OK(c, ffb_tx_queue_rollback(tx, NULL, NULL));
    next_ok(&x, FFB_OP_ROLLBACK);
    ffb_tx_free(tx);
    /* The detach: then the server closes its end, which is expected. */
    r0 = it_rts(c);
    OK(c, ffb_conn_queue_detach(c, NULL, NULL));
    next_ok(&x, FFB_OP_DETACH);
    assert_int_equal(it_rts(c) - r0, 1);
    assert_int_equal(ffb_conn_is_attached(c), 0);
    assert_int_equal(ffb_conn_queue_ping(c, NULL, NULL), FFB_E_STATE);
    OK(c, ffb_conn_close(c));
    done_conn(c, &x);
}

/* ffb_blob_read() with the application's I/O: FFB_E_AGAIN asks for the
   result of ffb_blob_queue_read(). */
static size_t read_blob(extio *x, ffb_blob *b, uint8_t *buf, size_t size) {
    size_t total = 0;
    for (;;) {
        size_t got = 0;
        int rc = ffb_blob_read(b, buf + total, size - total, &got);
        if (rc == FFB_E_AGAIN) {
            rc = ffb_blob_queue_read(b, NULL, NULL);
            assert_true(rc == 0 || rc == 1);
            if (rc == 0)
                next_ok(x, FFB_OP_BLOB_READ);
            continue;
        }
        OK(x->conn, rc);
        if (got == 0)
            return total;
        total += got;
    }
}

/* A 1 MiB stream blob written, closed, inserted; read back through its
   row, its info, a seek. The budgets of the blocking suite (test_blob):
   create + data + close in one write, the insert (it needs the id the
   create answers) in a second, the open + info + reads of up to 2 MiB in
   one. */
static void test_blob(void **state) {
    target *t = *state;
    extio x;
    ffb_conn *c = external_conn(t, &x);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[200];
    snprintf(sql, sizeof(sql), "insert into %s (id, b) values (?, ?)",
             t->table);
    ffb_stmt *ins;
    OK(c, ffb_stmt_new(c, &ins));
    OK(c, ffb_stmt_queue_prepare(ins, tx, sql, (size_t)-1, NULL, NULL));
    next_ok(&x, FFB_OP_PREPARE);
    size_t len = 1024 * 1024;
    uint8_t *data = malloc(len), *back = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(i * 7 + i / 251);
    ffb_blob_options bo = FFB_BLOB_OPTIONS_INIT;
    bo.stream = 1;
    ffb_blob *b;
    uint64_t r0 = it_rts(c);
    OK(c, ffb_blob_create(c, tx, &bo, &b));
    for (size_t off = 0; off < len; off += 100000)
        OK(c, ffb_blob_write(b, data + off,
                             len - off < 100000 ? len - off : 100000));
    uint8_t id[8];
    assert_int_equal(ffb_blob_get_id(b, id), FFB_E_STATE);
    OK(c, ffb_blob_queue_close(b, NULL, NULL));
    next_ok(&x, FFB_OP_BLOB_CLOSE);
    assert_int_equal(it_rts(c) - r0, 1);
    OK(c, ffb_blob_get_id(b, id));
    ffb_blob_free(b);
    OK(c, ffb_stmt_bind_int64(ins, 0, 500));
    OK(c, ffb_stmt_bind_blob_id(ins, 1, id));
    OK(c, ffb_stmt_queue_execute(ins, tx, NULL, NULL));
    next_ok(&x, FFB_OP_EXECUTE);
    assert_int_equal(it_rts(c) - r0, 2);
    ffb_stmt_free(ins);

    snprintf(sql, sizeof(sql), "select b from %s where id = 500", t->table);
    ffb_stmt *sel;
    OK(c, ffb_stmt_new(c, &sel));
    OK(c, ffb_stmt_queue_prepare(sel, tx, sql, (size_t)-1, NULL, NULL));
    OK(c, ffb_stmt_queue_execute(sel, tx, NULL, NULL));
    next_ok(&x, FFB_OP_PREPARE);
    next_ok(&x, FFB_OP_EXECUTE);
    assert_int_equal(extio_fetch(&x, sel), 1);
    uint8_t rid[8];
    OK(c, ffb_stmt_get_blob_id(sel, 0, rid));
    r0 = it_rts(c);
    OK(c, ffb_blob_open(c, tx, rid, 2 * 1024 * 1024, &b));
    assert_int_equal(read_blob(&x, b, back, len + 1), len);
    assert_memory_equal(back, data, len);
    assert_int_equal(it_rts(c) - r0, 1);
    /* The info came with the open. */
    assert_int_equal(ffb_blob_queue_info(b, NULL, NULL), 1);
    ffb_blob_info info;
    OK(c, ffb_blob_get_info(b, &info, sizeof(info)));
    assert_int_equal(info.length, (int64_t)len);
    /* Back to byte 1000: one round trip, then the rest is read again. */
    r0 = it_rts(c);
    OK(c, ffb_blob_queue_seek(b, 0, 1000, NULL, NULL));
    next_ok(&x, FFB_OP_BLOB_SEEK);
    assert_int_equal(ffb_blob_tell(b), 1000);
    assert_int_equal(read_blob(&x, b, back, len), len - 1000);
    assert_memory_equal(back, data + 1000, len - 1000);
    ffb_blob_free(b);
    assert_int_equal(extio_fetch(&x, sel), 0);
    ffb_stmt_free(sel);
    OK(c, ffb_tx_queue_rollback(tx, NULL, NULL));
    next_ok(&x, FFB_OP_ROLLBACK);
    ffb_tx_free(tx);
    free(data);
    free(back);
    done_conn(c, &x);
}

/* 1000 rows through a batch (one of them fails: multi_error), with the
   commit option; a commit queued behind it must wait for it. Budget: what
   ffb_batch_execute() costs on the same server, measured here. */
static int run_batch(const target *t, ffb_conn *c, extio *x, int base,
                     uint64_t *rts) {
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[160];
    snprintf(sql, sizeof(sql), "insert into %s (id, v) values (?, ?)",
             t->table);
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    if (x) {
        OK(c, ffb_stmt_queue_prepare(s, tx, sql, (size_t)-1, NULL, NULL));
        next_ok(x, FFB_OP_PREPARE);
    } else {
        OK(c, ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    }
    ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
    bo.multi_error = 1;
    bo.commit = 1;
    ffb_batch *b;
    OK(c, ffb_batch_new(s, &bo, &b));
    for (int i = 0; i < 1000; i++) {
        /* Row 500 repeats row 499's key. */
        OK(c, ffb_stmt_bind_int64(s, 0, base + (i == 500 ? 499 : i)));
        OK(c, ffb_stmt_bind_text(s, 1, "batch", 5));
        OK(c, ffb_batch_add(b));
    }
    uint64_t r0 = it_rts(c);
    int rc;
    if (x) {
        OK(c, ffb_batch_queue_execute(b, tx, NULL, NULL));
        assert_int_equal(ffb_batch_add(b), FFB_E_STATE);
        const ffb_result *res;
        assert_int_equal(extio_next(x, &res), 1);
        assert_int_equal(ffb_result_op(res), FFB_OP_BATCH_EXECUTE);
        rc = ffb_result_status(res);
        assert_non_null(strstr(ffb_error_message(ffb_result_error(res)),
                               "row 501 of the batch failed"));
    } else {
        rc = ffb_batch_execute(b, tx);
    }
    *rts = it_rts(c) - r0;
    assert_int_equal(rc, FFB_E_SERVER);
    assert_int_equal(ffb_batch_row_count(b), 1000);
    assert_int_equal(ffb_batch_row_status(b, 499), 1);
    assert_int_equal(ffb_batch_row_status(b, 500), -1);
    assert_int_equal(ffb_batch_row_status(b, 501), 1);
    assert_int_equal(ffb_tx_is_active(tx), 0); /* committed */
    ffb_batch_free(b);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    return rc;
}

static void test_batch(void **state) {
    target *t = *state;
    ffb_conn *bc = blocking_conn(t);
    uint64_t want;
    run_batch(t, bc, NULL, 10000, &want);
    OK(bc, ffb_conn_close(bc));
    ffb_conn_free(bc);
    extio x;
    ffb_conn *c = external_conn(t, &x);
    uint64_t got;
    run_batch(t, c, &x, 20000, &got);
    printf("# %s: batch of 1000 + commit in %llu round trips (blocking %llu)"
           "\n",
           t->name, (unsigned long long)got, (unsigned long long)want);
    assert_int_equal(got, want);
    /* Firebird 3: every row and the commit in one write; Firebird 4: the
       create is confirmed first, then the part and the commit. */
    assert_int_equal(want, t->version >= 4 ? 2 : 1);

    /* A commit queued right behind the execution follows it on the wire:
       the rows are committed. */
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[160];
    snprintf(sql, sizeof(sql), "insert into %s (id, v) values (?, 'q')",
             t->table);
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_queue_prepare(s, tx, sql, (size_t)-1, NULL, NULL));
    next_ok(&x, FFB_OP_PREPARE);
    ffb_batch *b;
    OK(c, ffb_batch_new(s, NULL, &b));
    for (int i = 0; i < 10; i++) {
        OK(c, ffb_stmt_bind_int64(s, 0, 30000 + i));
        OK(c, ffb_batch_add(b));
    }
    OK(c, ffb_batch_queue_execute(b, tx, NULL, NULL));
    OK(c, ffb_tx_queue_commit(tx, NULL, NULL));
    next_ok(&x, FFB_OP_BATCH_EXECUTE);
    next_ok(&x, FFB_OP_COMMIT);
    ffb_batch_free(b);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    OK(c, ffb_tx_begin(c, NULL, &tx));
    snprintf(sql, sizeof(sql),
             "select count(*) from %s where id between 30000 and 30009",
             t->table);
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_queue_prepare(s, tx, sql, (size_t)-1, NULL, NULL));
    OK(c, ffb_stmt_queue_execute(s, tx, NULL, NULL));
    next_ok(&x, FFB_OP_PREPARE);
    next_ok(&x, FFB_OP_EXECUTE);
    assert_int_equal(extio_fetch(&x, s), 1);
    int64_t n;
    OK(c, ffb_stmt_get_int64(s, 0, &n));
    assert_int_equal(n, 10);
    ffb_stmt_free(s);
    OK(c, ffb_tx_queue_rollback(tx, NULL, NULL));
    next_ok(&x, FFB_OP_ROLLBACK);
    ffb_tx_free(tx);
    done_conn(c, &x);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB4", "FB4E"};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect),
        cmocka_unit_test(test_queued_connect),
        cmocka_unit_test(test_create_retaining_drop),
        cmocka_unit_test(test_queued_cache),
        cmocka_unit_test(test_prepare_execute_fetch),
        cmocka_unit_test(test_dml_and_commit),
        cmocka_unit_test(test_held_until_the_handle_is_known),
        cmocka_unit_test(test_immediate_ping_info),
        cmocka_unit_test(test_blob),
        cmocka_unit_test(test_batch),
    };
    return it_main("EXTIO", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), setup_target,
                   teardown_target);
}
