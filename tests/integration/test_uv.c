/*
 * libfastfb_uv against real servers: connect, SQL, blobs and batches
 * through the queue API with callbacks on a libuv loop, with the
 * round-trip budgets of the blocking API (measured the blocking way on the
 * same server where they depend on it); one write for everything queued
 * in one callback; close with requests pending; the connect timeout on the
 * adapter's timer; and that the loop never stalls while 100 connections
 * run mixed work on it (selects, DML in transactions, blob write and
 * read, a batch), every result and every step's round trips checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>
#ifdef FFB_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "include/fastfb.h"
#include "include/fastfb_uv.h"
#include "tests/support/it.h"
#include "tests/support/proxy.h"

typedef it_target target;

/* Callbacks in the order they ran. */
static int seq;

static void options(const target *t, ffb_conn_options *o) {
    it_options(t, o);
    o->io_timeout_ms = 60000;
    o->connect_timeout_ms = 60000;
}

static ffb_conn *blocking_conn(const target *t) {
    ffb_conn_options o;
    options(t, &o);
    return it_open(&o);
}

static void blocking_done(ffb_conn *c) {
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

/* ---- running the loop ---------------------------------------------------- */

static void guard_tick(uv_timer_t *t) { (void)t; }

/* Run the loop until *flag is set: a guard timer makes every pass end
   within 50 ms, so a flag never set fails after 60 s instead of hanging. */
static void wait_for(uv_loop_t *loop, const int *flag, const char *what) {
    uv_timer_t g;
    uv_timer_init(loop, &g);
    uv_timer_start(&g, guard_tick, 50, 50);
    int64_t end = ffb_now_ms() + 60000;
    while (!*flag && ffb_now_ms() < end)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&g, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    if (!*flag)
        fail_msg("gave up waiting for %s", what);
}

/* The loop ends by itself once every connection is closed: nothing of
   the adapter's is left on it. */
static void end_loop(uv_loop_t *loop) {
    assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(loop), 0);
}

typedef struct connected {
    int done, status, seq;
    char msg[512];
} connected;

static void on_connected(ffb_conn *c, int status, void *data) {
    connected *s = data;
    s->done = 1;
    s->status = status;
    s->seq = ++seq;
    snprintf(s->msg, sizeof(s->msg), "%s",
             ffb_error_message(ffb_conn_error(c)));
}

typedef struct closed {
    int done, status, seq, attached;
    ffb_stats st;
    ffb_uv_stats ust;
} closed;

static void on_closed(ffb_conn *c, int status, void *data) {
    closed *s = data;
    s->done = 1;
    s->status = status;
    s->seq = ++seq;
    s->attached = ffb_conn_is_attached(c);
    ffb_conn_stats(c, &s->st, sizeof(s->st));
    ffb_uv_conn_stats(c, &s->ust, sizeof(s->ust));
}

static ffb_conn *uv_conn_opts(uv_loop_t *loop, const ffb_conn_options *o) {
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(loop, o, &c), 0);
    connected s = {0};
    OK(c, ffb_uv_connect(c, on_connected, &s));
    wait_for(loop, &s.done, "the connect");
    if (s.status != 0)
        fail_msg("connect: %d %s", s.status, s.msg);
    assert_int_equal(ffb_conn_is_attached(c), 1);
    return c;
}

static ffb_conn *uv_conn(uv_loop_t *loop, const target *t) {
    ffb_conn_options o;
    options(t, &o);
    return uv_conn_opts(loop, &o);
}

/* Close politely: the detach is answered (status 0). */
static void uv_done(uv_loop_t *loop, ffb_conn *c) {
    closed s = {0};
    OK(c, ffb_uv_close(c, on_closed, &s));
    assert_int_equal(ffb_uv_close(c, on_closed, &s), FFB_E_STATE);
    wait_for(loop, &s.done, "the close");
    assert_int_equal(s.status, 0);
    assert_int_equal(s.attached, 0);
}

typedef struct got {
    int done, status, op, seq;
    int64_t rows;
    char msg[512];
} got;

static void on_result(ffb_conn *c, const ffb_result *r, void *data) {
    (void)c;
    got *g = data;
    g->done = 1;
    g->status = ffb_result_status(r);
    g->op = ffb_result_op(r);
    g->seq = ++seq;
    g->rows = ffb_result_rows_affected(r);
    snprintf(g->msg, sizeof(g->msg), "%s",
             ffb_error_message(ffb_result_error(r)));
}

static void expect_ok(uv_loop_t *loop, got *g, int op) {
    wait_for(loop, &g->done, "a result");
    if (g->status != 0)
        fail_msg("result of op %d failed: %d %s", g->op, g->status, g->msg);
    assert_int_equal(g->op, op);
}

/* The next row: ffb_stmt_fetch(), and on FFB_E_AGAIN the result of
   ffb_stmt_queue_fetch(). */
static int uv_fetch(uv_loop_t *loop, ffb_stmt *s) {
    for (;;) {
        int rc = ffb_stmt_fetch(s);
        if (rc != FFB_E_AGAIN)
            return rc;
        got g = {0};
        rc = ffb_stmt_queue_fetch(s, on_result, &g);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            wait_for(loop, &g.done, "rows");
            if (g.status < 0)
                return g.status;
        }
    }
}

static uint64_t uv_writes(const ffb_conn *c) {
    ffb_uv_stats st;
    assert_int_equal(ffb_uv_conn_stats(c, &st, sizeof(st)), 0);
    return st.writes;
}

static uint64_t queued_writes(const ffb_conn *c) {
    ffb_uv_stats st;
    assert_int_equal(ffb_uv_conn_stats(c, &st, sizeof(st)), 0);
    return st.queued;
}

static uint64_t flushes(const ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.flushes;
}

static int setup_target(void **state) {
    target *t = *state;
    ffb_conn *c = blocking_conn(t);
    it_exec(c,
            "recreate table %s (id integer primary key, v varchar(40), "
            "b blob sub_type binary)",
            t->table);
    blocking_done(c);
    return 0;
}

static int teardown_target(void **state) {
    target *t = *state;
    ffb_conn *c = blocking_conn(t);
    it_exec(c, "drop table %s", t->table);
    blocking_done(c);
    return 0;
}

/* ---- connect and close --------------------------------------------------- */

/* The connect costs what the blocking connect costs on this server, one
   write per round trip (each handshake step needs the answer before it);
   the polite close costs 1 more (op_detach). */
static void test_connect_and_close(void **state) {
    target *t = *state;
    ffb_conn *b = blocking_conn(t);
    uint64_t want = it_rts(b);
    assert_null(ffb_uv_conn_loop(b));
    blocking_done(b);

    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn(&loop, t);
    assert_ptr_equal(ffb_uv_conn_loop(c), &loop);
    printf("# %s: connect in %llu round trips, %llu writes (blocking: %llu)"
           "\n",
           t->name, (unsigned long long)it_rts(c),
           (unsigned long long)uv_writes(c), (unsigned long long)want);
    assert_int_equal(it_rts(c), want);
    assert_int_equal(uv_writes(c), want);
    assert_int_equal(ffb_conn_is_compressed(c), t->compress);
    /* A blocking call on it is refused, not run. */
    assert_int_equal(ffb_conn_ping(c), FFB_E_STATE);
    assert_int_equal(ffb_uv_connect(c, on_connected, NULL), FFB_E_STATE);

    closed s = {0};
    OK(c, ffb_uv_close(c, on_closed, &s));
    wait_for(&loop, &s.done, "the close");
    assert_int_equal(s.status, 0);
    assert_int_equal(s.attached, 0);
    assert_int_equal(s.st.round_trips, want + 1);
    assert_int_equal(s.ust.writes, want + 1);
    end_loop(&loop);
}

/* A name to resolve (uv_getaddrinfo): "localhost" instead of the
   address. */
static void test_localhost(void **state) {
    target *t = *state;
    const char *slash = strchr(t->dsn, '/');
    assert_non_null(slash);
    char dsn[600];
    snprintf(dsn, sizeof(dsn), "localhost%s", slash);
    ffb_conn_options o;
    options(t, &o);
    o.dsn = dsn;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn_opts(&loop, &o);
    assert_string_equal(ffb_conn_host(c), "localhost");
    got g = {0};
    OK(c, ffb_conn_queue_ping(c, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_PING);
    uv_done(&loop, c);
    end_loop(&loop);
}

/* Create a database through the loop, use it, drop it (op_drop_database,
   1 round trip); attaching it afterwards fails with the server's I/O
   error. */
static void test_create_and_drop(void **state) {
    target *t = *state;
    const char *colon = strchr(t->dsn, ':'), *slash = strrchr(t->dsn, '/');
    assert_true(colon && slash && slash > colon);
    char dsn[600];
    snprintf(dsn, sizeof(dsn), "%.*s/ffb_uvcreate_%d.fdb",
             (int)(slash - t->dsn), t->dsn, (int)getpid());
    ffb_conn_options o;
    options(t, &o);
    o.dsn = dsn;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, &o, &c), 0);
    ffb_create_options co = FFB_CREATE_OPTIONS_INIT;
    co.page_size = 16384;
    co.overwrite = 1;
    connected s = {0};
    OK(c, ffb_uv_create_database(c, &co, on_connected, &s));
    wait_for(&loop, &s.done, "the create");
    if (s.status != 0)
        fail_msg("create %s: %s", dsn, s.msg);
    static const uint8_t items[] = {14 /* isc_info_page_size */, 1};
    uint8_t info[32];
    got g = {0};
    OK(c, ffb_conn_queue_info(c, items, sizeof(items), info, sizeof(info),
                              on_result, &g));
    expect_ok(&loop, &g, FFB_OP_INFO);
    assert_int_equal(info[0], 14);
    assert_int_equal(info[3] | info[4] << 8, 16384);
    uint64_t r0 = it_rts(c);
    memset(&g, 0, sizeof(g));
    OK(c, ffb_conn_queue_drop_database(c, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_DROP_DATABASE);
    assert_int_equal(it_rts(c) - r0, 1);
    closed cl = {0};
    OK(c, ffb_uv_close(c, on_closed, &cl));
    wait_for(&loop, &cl.done, "the close");
    assert_int_equal(cl.status, 0); /* nothing left to detach */
    end_loop(&loop);

    ffb_conn *b = NULL;
    assert_int_equal(ffb_conn_new(&o, &b), 0);
    assert_int_equal(ffb_conn_connect(b), FFB_E_SERVER);
    assert_int_equal(ffb_error_gds(ffb_conn_error(b)), FFB_GDS_IO_ERROR);
    ffb_conn_free(b);
}

/* ---- SQL ----------------------------------------------------------------- */

static const char *const SELECT_2500 =
    "with recursive r(n) as (select 1 from rdb$database union all "
    "select n + 1 from r where n < 50) select (a.n - 1) * 50 + b.n, "
    "'row ' || ((a.n - 1) * 50 + b.n) from r a cross join r b";

/* Prepare, execute and 2500 rows: the budgets of the blocking calls on
   the same server (Firebird 3 prepares after the start's answer: 2). */
static void test_prepare_execute_fetch(void **state) {
    target *t = *state;
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
    blocking_done(b);
    assert_int_equal(want_prepare, t->version >= 4 ? 1 : 2);

    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn(&loop, t);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    r0 = it_rts(c);
    got g = {0};
    OK(c,
       ffb_stmt_queue_prepare(s, tx, SELECT_2500, (size_t)-1, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_PREPARE);
    assert_int_equal(it_rts(c) - r0, want_prepare);
    assert_int_equal(ffb_stmt_column_count(s), 2);

    r0 = it_rts(c);
    memset(&g, 0, sizeof(g));
    OK(c, ffb_stmt_queue_execute(s, tx, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_EXECUTE);
    int64_t n = 0, sum = 0;
    int rc;
    while ((rc = uv_fetch(&loop, s)) == 1) {
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
    OK(c, rc);
    assert_int_equal(n, 2500);
    assert_int_equal(sum, 2500 * 2501 / 2);
    printf("# %s: prepare %llu, 2500 rows %llu round trips (blocking %llu)\n",
           t->name, (unsigned long long)want_prepare,
           (unsigned long long)(it_rts(c) - r0), (unsigned long long)want_rows);
    assert_int_equal(it_rts(c) - r0, want_rows);
    ffb_stmt_free(s);
    memset(&g, 0, sizeof(g));
    OK(c, ffb_tx_queue_rollback(tx, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_ROLLBACK);
    ffb_tx_free(tx);
    uv_done(&loop, c);
    end_loop(&loop);
}

static ffb_stmt *prepared_insert(uv_loop_t *loop, const target *t, ffb_conn *c,
                                 ffb_tx *tx) {
    char sql[160];
    snprintf(sql, sizeof(sql), "insert into %s (id, v) values (?, ?)",
             t->table);
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    got g = {0};
    OK(c, ffb_stmt_queue_prepare(s, tx, sql, (size_t)-1, on_result, &g));
    expect_ok(loop, &g, FFB_OP_PREPARE);
    return s;
}

/* Three inserts, each with its own row count, and the commit, queued
   together: one write, one round trip (all answered in order). */
static void test_dml_and_commit(void **state) {
    target *t = *state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn(&loop, t);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepared_insert(&loop, t, c, tx);
    uint64_t r0 = it_rts(c), w0 = uv_writes(c);
    got ins[3], com = {0};
    memset(ins, 0, sizeof(ins));
    for (int i = 0; i < 3; i++) {
        OK(c, ffb_stmt_bind_int64(s, 0, i + 1));
        OK(c, ffb_stmt_bind_text(s, 1, "three", 5));
        OK(c, ffb_stmt_queue_execute(s, tx, on_result, &ins[i]));
    }
    OK(c, ffb_tx_queue_commit(tx, on_result, &com));
    expect_ok(&loop, &com, FFB_OP_COMMIT);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ins[i].done, 1);
        assert_int_equal(ins[i].status, 0);
        assert_int_equal(ins[i].rows, 1);
        assert_true(ins[i].seq < com.seq);
    }
    assert_int_equal(it_rts(c) - r0, 1);
    assert_int_equal(uv_writes(c) - w0, 1);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    uv_done(&loop, c);
    end_loop(&loop);
}

/* ---- one write per loop pass --------------------------------------------- */

#define NPIPE 50

typedef struct pipe_run {
    const target *t;
    ffb_conn *c;
    ffb_tx *tx;
    ffb_stmt *s;
    got prep, ins[NPIPE], ping, com;
    uint64_t r0, w0, f0;
    int queued;
} pipe_run;

/* The prepare's answer is being handled (inside ffb_conn_feed()): queue
   NPIPE inserts, a ping and the commit from here. */
static void queue_in_callback(ffb_conn *c, const ffb_result *r, void *data) {
    pipe_run *p = data;
    on_result(c, r, &p->prep);
    if (p->prep.status != 0)
        return;
    p->r0 = it_rts(c);
    p->w0 = uv_writes(c);
    p->f0 = flushes(c);
    for (int i = 0; i < NPIPE; i++) {
        if (ffb_stmt_bind_int64(p->s, 0, 1000 + i) < 0 ||
            ffb_stmt_bind_text(p->s, 1, "pipe", 4) < 0 ||
            ffb_stmt_queue_execute(p->s, p->tx, on_result, &p->ins[i]) < 0)
            return;
    }
    if (ffb_conn_queue_ping(c, on_result, &p->ping) < 0 ||
        ffb_tx_queue_commit(p->tx, on_result, &p->com) < 0)
        return;
    p->queued = 1;
}

/* The same work with the blocking connection's queue: flush, then every
   result. */
static uint64_t pipe_blocking(const target *t) {
    ffb_conn *b = blocking_conn(t);
    ffb_tx *tx = it_active_tx(b);
    char sql[160];
    snprintf(sql, sizeof(sql), "insert into %s (id, v) values (?, ?)",
             t->table);
    ffb_stmt *s;
    OK(b, ffb_stmt_new(b, &s));
    OK(b, ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    uint64_t r0 = it_rts(b);
    for (int i = 0; i < NPIPE; i++) {
        OK(b, ffb_stmt_bind_int64(s, 0, 2000 + i));
        OK(b, ffb_stmt_bind_text(s, 1, "pipe", 4));
        OK(b, ffb_stmt_queue_execute(s, tx, NULL, NULL));
    }
    OK(b, ffb_conn_queue_ping(b, NULL, NULL));
    OK(b, ffb_tx_queue_commit(tx, NULL, NULL));
    OK(b, ffb_conn_flush(b));
    const ffb_result *res;
    int n = 0, rc;
    while ((rc = ffb_conn_next_result(b, &res)) == 1) {
        assert_int_equal(ffb_result_status(res), 0);
        n++;
    }
    OK(b, rc);
    assert_int_equal(n, NPIPE + 2);
    uint64_t rts = it_rts(b) - r0;
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    blocking_done(b);
    return rts;
}

static void test_pipeline_queued_in_a_callback(void **state) {
    target *t = *state;
    uint64_t want = pipe_blocking(t);
    /* Every request in one flush, answered in order. */
    assert_int_equal(want, 1);

    uv_loop_t loop;
    uv_loop_init(&loop);
    pipe_run *p = calloc(1, sizeof(*p));
    p->t = t;
    p->c = uv_conn(&loop, t);
    p->tx = NULL;
    OK(p->c, ffb_tx_begin(p->c, NULL, &p->tx));
    char sql[160];
    snprintf(sql, sizeof(sql), "insert into %s (id, v) values (?, ?)",
             t->table);
    OK(p->c, ffb_stmt_new(p->c, &p->s));
    OK(p->c, ffb_stmt_queue_prepare(p->s, p->tx, sql, (size_t)-1,
                                    queue_in_callback, p));
    wait_for(&loop, &p->com.done, "the commit");
    assert_int_equal(p->queued, 1);
    for (int i = 0; i < NPIPE; i++) {
        assert_int_equal(p->ins[i].status, 0);
        assert_int_equal(p->ins[i].rows, 1);
        assert_true(p->ins[i].seq < p->ping.seq);
    }
    assert_int_equal(p->ping.status, 0);
    assert_int_equal(p->com.status, 0);
    assert_true(p->ping.seq < p->com.seq);
    uint64_t rts = it_rts(p->c) - p->r0, w = uv_writes(p->c) - p->w0,
             f = flushes(p->c) - p->f0;
    printf("# %s: %d inserts + ping + commit queued in a callback: %llu "
           "write(s), %llu flush(es), %llu round trip(s) (blocking %llu)\n",
           t->name, NPIPE, (unsigned long long)w, (unsigned long long)f,
           (unsigned long long)rts, (unsigned long long)want);
    assert_int_equal(w, 1); /* one write for everything queued */
    assert_int_equal(f, 1);
    assert_int_equal(rts, want);
    ffb_stmt_free(p->s);
    ffb_tx_free(p->tx);
    uv_done(&loop, p->c);
    end_loop(&loop);
    free(p);
}

typedef struct timer_run {
    ffb_conn *c;
    got ping[NPIPE];
    uint64_t r0, w0;
} timer_run;

/* From a timer callback (before the loop polls): NPIPE pings. */
static void queue_in_timer(uv_timer_t *h) {
    timer_run *r = h->data;
    r->r0 = it_rts(r->c);
    r->w0 = uv_writes(r->c);
    for (int i = 0; i < NPIPE; i++)
        if (ffb_conn_queue_ping(r->c, on_result, &r->ping[i]) < 0)
            return;
}

static void test_pipeline_queued_in_a_timer(void **state) {
    target *t = *state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    timer_run r;
    memset(&r, 0, sizeof(r));
    r.c = uv_conn(&loop, t);
    uv_timer_t h;
    uv_timer_init(&loop, &h);
    h.data = &r;
    uv_timer_start(&h, queue_in_timer, 1, 0);
    wait_for(&loop, &r.ping[NPIPE - 1].done, "the pings");
    for (int i = 0; i < NPIPE; i++) {
        assert_int_equal(r.ping[i].status, 0);
        if (i)
            assert_true(r.ping[i - 1].seq < r.ping[i].seq);
    }
    /* One write, one round trip: the answers come together. */
    assert_int_equal(uv_writes(r.c) - r.w0, 1);
    assert_int_equal(it_rts(r.c) - r.r0, 1);
    uv_close((uv_handle_t *)&h, NULL);
    uv_done(&loop, r.c);
    end_loop(&loop);
}

/* ---- blobs and batches --------------------------------------------------- */

static size_t uv_read_blob(uv_loop_t *loop, ffb_blob *b, uint8_t *buf,
                           size_t size) {
    size_t total = 0;
    for (;;) {
        size_t n = 0;
        int rc = ffb_blob_read(b, buf + total, size - total, &n);
        if (rc == FFB_E_AGAIN) {
            got g = {0};
            rc = ffb_blob_queue_read(b, on_result, &g);
            assert_true(rc == 0 || rc == 1);
            if (rc == 0)
                expect_ok(loop, &g, FFB_OP_BLOB_READ);
            continue;
        }
        assert_int_equal(rc, 0);
        if (n == 0)
            return total;
        total += n;
    }
}

/* A 300 KB blob: create + data + close in one write (1), the insert with
   its id (1), then open + reads (1) - the blocking suite's budgets. */
static void test_blob(void **state) {
    target *t = *state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn(&loop, t);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[200];
    snprintf(sql, sizeof(sql), "insert into %s (id, b) values (?, ?)",
             t->table);
    ffb_stmt *ins;
    OK(c, ffb_stmt_new(c, &ins));
    got g = {0};
    OK(c, ffb_stmt_queue_prepare(ins, tx, sql, (size_t)-1, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_PREPARE);
    size_t len = 300 * 1000;
    uint8_t *data = malloc(len), *back = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(i * 13 + i / 509);
    ffb_blob *b;
    uint64_t r0 = it_rts(c);
    OK(c, ffb_blob_create(c, tx, NULL, &b));
    for (size_t off = 0; off < len; off += 30000)
        OK(c, ffb_blob_write(b, data + off, 30000));
    memset(&g, 0, sizeof(g));
    OK(c, ffb_blob_queue_close(b, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_BLOB_CLOSE);
    assert_int_equal(it_rts(c) - r0, 1);
    uint8_t id[8];
    OK(c, ffb_blob_get_id(b, id));
    ffb_blob_free(b);
    OK(c, ffb_stmt_bind_int64(ins, 0, 500));
    OK(c, ffb_stmt_bind_blob_id(ins, 1, id));
    memset(&g, 0, sizeof(g));
    OK(c, ffb_stmt_queue_execute(ins, tx, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_EXECUTE);
    assert_int_equal(it_rts(c) - r0, 2);
    ffb_stmt_free(ins);

    snprintf(sql, sizeof(sql), "select b from %s where id = 500", t->table);
    ffb_stmt *sel;
    OK(c, ffb_stmt_new(c, &sel));
    got gp = {0}, ge = {0};
    OK(c, ffb_stmt_queue_prepare(sel, tx, sql, (size_t)-1, on_result, &gp));
    OK(c, ffb_stmt_queue_execute(sel, tx, on_result, &ge));
    expect_ok(&loop, &gp, FFB_OP_PREPARE);
    expect_ok(&loop, &ge, FFB_OP_EXECUTE);
    assert_int_equal(uv_fetch(&loop, sel), 1);
    uint8_t rid[8];
    OK(c, ffb_stmt_get_blob_id(sel, 0, rid));
    r0 = it_rts(c);
    OK(c, ffb_blob_open(c, tx, rid, 1024 * 1024, &b));
    assert_int_equal(uv_read_blob(&loop, b, back, len + 1), len);
    assert_memory_equal(back, data, len);
    assert_int_equal(it_rts(c) - r0, 1);
    ffb_blob_free(b);
    assert_int_equal(uv_fetch(&loop, sel), 0);
    ffb_stmt_free(sel);
    memset(&g, 0, sizeof(g));
    OK(c, ffb_tx_queue_rollback(tx, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_ROLLBACK);
    ffb_tx_free(tx);
    free(data);
    free(back);
    uv_done(&loop, c);
    end_loop(&loop);
}

/* 1000 rows through a batch with the commit option, row 501 failing
   (multi_error): the round trips ffb_batch_execute() costs on the same
   server (Firebird 3: 1; Firebird 4: 2, the create is confirmed first). */
static uint64_t run_batch(const target *t, ffb_conn *c, uv_loop_t *loop,
                          int base) {
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[160];
    snprintf(sql, sizeof(sql), "insert into %s (id, v) values (?, ?)",
             t->table);
    ffb_stmt *s;
    if (loop) {
        s = prepared_insert(loop, t, c, tx);
    } else {
        OK(c, ffb_stmt_new(c, &s));
        OK(c, ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    }
    ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
    bo.multi_error = 1;
    bo.commit = 1;
    ffb_batch *b;
    OK(c, ffb_batch_new(s, &bo, &b));
    for (int i = 0; i < 1000; i++) {
        OK(c, ffb_stmt_bind_int64(s, 0, base + (i == 500 ? 499 : i)));
        OK(c, ffb_stmt_bind_text(s, 1, "batch", 5));
        OK(c, ffb_batch_add(b));
    }
    uint64_t r0 = it_rts(c);
    int rc;
    if (loop) {
        got g = {0};
        OK(c, ffb_batch_queue_execute(b, tx, on_result, &g));
        wait_for(loop, &g.done, "the batch");
        assert_int_equal(g.op, FFB_OP_BATCH_EXECUTE);
        rc = g.status;
        assert_non_null(strstr(g.msg, "row 501 of the batch failed"));
    } else {
        rc = ffb_batch_execute(b, tx);
    }
    uint64_t rts = it_rts(c) - r0;
    assert_int_equal(rc, FFB_E_SERVER);
    assert_int_equal(ffb_batch_row_count(b), 1000);
    assert_int_equal(ffb_batch_row_status(b, 499), 1);
    assert_int_equal(ffb_batch_row_status(b, 500), -1);
    assert_int_equal(ffb_batch_row_status(b, 501), 1);
    assert_int_equal(ffb_tx_is_active(tx), 0); /* committed */
    ffb_batch_free(b);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    return rts;
}

static void test_batch(void **state) {
    target *t = *state;
    ffb_conn *bc = blocking_conn(t);
    uint64_t want = run_batch(t, bc, NULL, 10000);
    blocking_done(bc);
    assert_int_equal(want, t->version >= 4 ? 2 : 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn(&loop, t);
    uint64_t got_rts = run_batch(t, c, &loop, 20000);
    printf("# %s: batch of 1000 + commit in %llu round trips (blocking %llu)"
           "\n",
           t->name, (unsigned long long)got_rts, (unsigned long long)want);
    assert_int_equal(got_rts, want);
    uv_done(&loop, c);
    end_loop(&loop);
}

/* ---- closing with requests pending --------------------------------------- */

#define NPEND 6

/* Queued and closed in the same pass: nothing is written; each request
   completes with FFB_E_CANCELLED in queue order, then the close callback
   runs. */
static void test_close_pending_unsent(void **state) {
    target *t = *state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn(&loop, t);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    got g[NPEND];
    memset(g, 0, sizeof(g));
    for (int i = 0; i < NPEND - 1; i++)
        OK(c, ffb_conn_queue_ping(c, on_result, &g[i]));
    OK(c, ffb_stmt_queue_prepare(s, tx, "select 1 from rdb$database",
                                 (size_t)-1, on_result, &g[NPEND - 1]));
    uint64_t f0 = flushes(c);
    closed cl = {0};
    OK(c, ffb_uv_close(c, on_closed, &cl));
    wait_for(&loop, &cl.done, "the close");
    for (int i = 0; i < NPEND; i++) {
        assert_int_equal(g[i].done, 1);
        assert_int_equal(g[i].status, FFB_E_CANCELLED);
        assert_int_equal(g[i].seq, g[0].seq + i);
        assert_true(g[i].seq < cl.seq);
    }
    assert_int_equal(cl.status, FFB_E_CANCELLED);
    assert_int_equal(cl.st.flushes, f0); /* nothing was written */
    end_loop(&loop);
}

/* Written but not answered yet. The pings are queued in a result
   callback (the loop's poll phase), so the adapter writes them in its
   check handle right after; a zero timer then closes the connection at
   the start of the next pass, and the close starts in that pass's
   prepare handle - before the loop polls again, so their answers are
   never read. */
typedef struct on_wire {
    ffb_conn *c;
    got first, g[NPEND];
    closed cl;
    uv_timer_t close_timer;
    uint64_t w0, r0, written;
} on_wire;

static void close_now(uv_timer_t *h) {
    on_wire *w = h->data;
    w->written = uv_writes(w->c) - w->w0;
    if (ffb_uv_close(w->c, on_closed, &w->cl) < 0)
        fail_msg("ffb_uv_close refused");
}

static void queue_then_close(ffb_conn *c, const ffb_result *r, void *data) {
    on_wire *w = data;
    on_result(c, r, &w->first);
    w->w0 = uv_writes(c);
    w->r0 = it_rts(c);
    for (int i = 0; i < NPEND; i++)
        if (ffb_conn_queue_ping(c, on_result, &w->g[i]) < 0)
            return;
    uv_timer_start(&w->close_timer, close_now, 0, 0);
}

static void test_close_pending_on_the_wire(void **state) {
    target *t = *state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    on_wire *w = calloc(1, sizeof(*w));
    w->c = uv_conn(&loop, t);
    uv_timer_init(&loop, &w->close_timer);
    w->close_timer.data = w;
    OK(w->c, ffb_conn_queue_ping(w->c, queue_then_close, w));
    wait_for(&loop, &w->cl.done, "the close");
    assert_int_equal(w->first.status, 0);
    assert_int_equal(w->written, 1); /* the pings went out, in one write */
    for (int i = 0; i < NPEND; i++) {
        assert_int_equal(w->g[i].status, FFB_E_CANCELLED);
        assert_true(w->g[i].seq < w->cl.seq);
        if (i)
            assert_int_equal(w->g[i].seq, w->g[i - 1].seq + 1);
    }
    assert_int_equal(w->cl.status, FFB_E_CANCELLED);
    assert_int_equal(w->cl.st.round_trips, w->r0); /* no answer was read */
    uv_close((uv_handle_t *)&w->close_timer, NULL);
    end_loop(&loop);
    free(w);
}

/* ffb_uv_close() from a result callback of the same connection: the
   requests behind it complete with FFB_E_CANCELLED, the close runs
   after the callback returned. */
typedef struct self_close {
    got first, rest[3];
    closed cl;
    int rc;
} self_close;

static void close_from_callback(ffb_conn *c, const ffb_result *r, void *data) {
    self_close *sc = data;
    on_result(c, r, &sc->first);
    sc->rc = ffb_uv_close(c, on_closed, &sc->cl);
}

static void test_close_from_a_callback(void **state) {
    target *t = *state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn(&loop, t);
    self_close sc;
    memset(&sc, 0, sizeof(sc));
    OK(c, ffb_conn_queue_ping(c, close_from_callback, &sc));
    for (int i = 0; i < 3; i++)
        OK(c, ffb_conn_queue_ping(c, on_result, &sc.rest[i]));
    wait_for(&loop, &sc.cl.done, "the close");
    assert_int_equal(sc.rc, 0);
    assert_int_equal(sc.first.status, 0);
    /* The answers came in one read with the first one's: they are
       delivered by the same feed, before the close starts. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sc.rest[i].done, 1);
        assert_true(sc.rest[i].status == 0 ||
                    sc.rest[i].status == FFB_E_CANCELLED);
        assert_true(sc.rest[i].seq < sc.cl.seq);
    }
    end_loop(&loop);
}

/* ---- connect failures ---------------------------------------------------- */

/* A TCP listener on 127.0.0.1 that never accepts: the kernel completes
   the TCP connect, nobody answers op_connect. */
static int silent_listener(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 16), 0);
    socklen_t sl = sizeof(sa);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static void test_connect_timeout(void **state) {
    (void)state;
    int port;
    int lfd = silent_listener(&port);
    char dsn[64];
    snprintf(dsn, sizeof(dsn), "127.0.0.1/%d:/nothing.fdb", port);
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn;
    o.connect_timeout_ms = 300;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, &o, &c), 0);
    connected s = {0};
    int64_t t0 = ffb_now_ms();
    OK(c, ffb_uv_connect(c, on_connected, &s));
    /* The loop ends by itself when the timer has failed the connect. */
    uv_run(&loop, UV_RUN_DEFAULT);
    int64_t took = ffb_now_ms() - t0;
    assert_int_equal(s.done, 1);
    printf("# connect to a silent listener: %d after %lld ms: %s\n", s.status,
           (long long)took, s.msg);
    assert_int_equal(s.status, FFB_E_TIMEOUT);
    assert_non_null(strstr(s.msg, "timed out after 300 ms"));
    assert_true(took >= 300);
    assert_true(took < 300 + 2000);
    ffb_uv_stats ust;
    OK(c, ffb_uv_conn_stats(c, &ust, sizeof(ust)));
    assert_true(ust.timer_fires >= 1);
    assert_int_equal(ffb_conn_is_attached(c), 0);
    closed cl = {0};
    OK(c, ffb_uv_close(c, on_closed, &cl));
    end_loop(&loop);
    assert_int_equal(cl.done, 1);
    assert_int_equal(cl.status, FFB_E_TIMEOUT);
    close(lfd);
}

/* Nothing listens: FFB_E_IO naming the address and libuv's reason. */
static void test_connect_refused(void **state) {
    (void)state;
    int port;
    close(silent_listener(&port));
    char dsn[64];
    snprintf(dsn, sizeof(dsn), "127.0.0.1/%d:/nothing.fdb", port);
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, &o, &c), 0);
    connected s = {0};
    OK(c, ffb_uv_connect(c, on_connected, &s));
    wait_for(&loop, &s.done, "the connect");
    assert_int_equal(s.status, FFB_E_IO);
    char want[64];
    snprintf(want, sizeof(want), "cannot connect to 127.0.0.1 port %d", port);
    if (!strstr(s.msg, want) || !strstr(s.msg, "ECONNREFUSED"))
        fail_msg("message: %s", s.msg);
    closed cl = {0};
    OK(c, ffb_uv_close(c, on_closed, &cl));
    end_loop(&loop);
    assert_int_equal(cl.status, FFB_E_IO);
}

/* A name that does not resolve. */
static void test_unknown_host(void **state) {
    (void)state;
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = "no-such-host.invalid:/nothing.fdb";
    o.connect_timeout_ms = 10000;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, &o, &c), 0);
    connected s = {0};
    OK(c, ffb_uv_connect(c, on_connected, &s));
    wait_for(&loop, &s.done, "the connect");
    assert_int_equal(s.status, FFB_E_IO);
    assert_non_null(strstr(s.msg, "cannot resolve no-such-host.invalid"));
    closed cl = {0};
    OK(c, ffb_uv_close(c, on_closed, &cl));
    end_loop(&loop);
}

/* Closed while the connect is in progress: the connect callback gets
   FFB_E_CANCELLED, then the close callback. */
static void test_close_while_connecting(void **state) {
    target *t = *state;
    ffb_conn_options o;
    options(t, &o);
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, &o, &c), 0);
    connected s = {0};
    OK(c, ffb_uv_connect(c, on_connected, &s));
    closed cl = {0};
    OK(c, ffb_uv_close(c, on_closed, &cl));
    end_loop(&loop);
    assert_int_equal(s.done, 1);
    assert_int_equal(s.status, FFB_E_CANCELLED);
    assert_int_equal(cl.done, 1);
    assert_int_equal(cl.status, FFB_E_CANCELLED);
    assert_true(s.seq < cl.seq);
}

/* ---- through ffb-proxy (bench/proxy.c): delays and faults ---------------- */

typedef it_proxy proxy;

static void proxy_start(proxy *p, const target *t, const char *const *args) {
    it_proxy_start(p, t->dsn, args);
}

static uint64_t proxy_turns(proxy *p) { return it_proxy_turns(p); }

static void proxy_stop(proxy *p) { it_proxy_stop(p); }

static void proxy_options(const target *t, const proxy *p, char *dsn,
                          size_t size, ffb_conn_options *o) {
    it_proxy_dsn(p, t->dsn, dsn, size);
    options(t, o);
    o->dsn = dsn;
}

/* 20 ms each way: the proxy's own count of client turns equals the
   library's round trips - connect, then 50 pings queued in a timer
   callback (1) - and the pings take at least one 40 ms round trip. */
static void test_proxy_turns_match(void **state) {
    target *t = *state;
    proxy p;
    const char *const args[] = {"--delay-ms", "20", NULL};
    proxy_start(&p, t, args);
    char dsn[600];
    ffb_conn_options o;
    proxy_options(t, &p, dsn, sizeof(dsn), &o);
    uv_loop_t loop;
    uv_loop_init(&loop);
    int64_t t0 = ffb_now_ms();
    ffb_conn *c = uv_conn_opts(&loop, &o);
    int64_t connect_ms = ffb_now_ms() - t0;
    uint64_t turns = proxy_turns(&p), rts = it_rts(c);
    assert_int_equal(turns, rts);
    assert_true(connect_ms >= (int64_t)rts * 40);

    timer_run r;
    memset(&r, 0, sizeof(r));
    r.c = c;
    uv_timer_t h;
    uv_timer_init(&loop, &h);
    h.data = &r;
    t0 = ffb_now_ms();
    uv_timer_start(&h, queue_in_timer, 0, 0);
    wait_for(&loop, &r.ping[NPIPE - 1].done, "the pings");
    int64_t ping_ms = ffb_now_ms() - t0;
    for (int i = 0; i < NPIPE; i++)
        assert_int_equal(r.ping[i].status, 0);
    assert_int_equal(it_rts(c) - r.r0, 1);
    assert_int_equal(proxy_turns(&p) - turns, 1);
    printf("# %s through a 20 ms proxy: connect %llu turns in %lld ms, %d "
           "pings 1 turn in %lld ms\n",
           t->name, (unsigned long long)turns, (long long)connect_ms, NPIPE,
           (long long)ping_ms);
    assert_true(ping_ms >= 40);
    uv_close((uv_handle_t *)&h, NULL);
    uv_done(&loop, c);
    end_loop(&loop);
    proxy_stop(&p);
}

/* A wide result read with fetches queued from the result callbacks, until
   a request fails. */
typedef struct scan {
    ffb_stmt *s;
    ffb_tx *tx;
    got prep;
    int rows, status, done;
    int64_t t_end;
    char conn_msg[512];
} scan;

static void scan_rows(ffb_conn *c, const ffb_result *r, void *data) {
    scan *sc = data;
    int rc = ffb_result_status(r);
    while (rc == 0) {
        while ((rc = ffb_stmt_fetch(sc->s)) == 1)
            sc->rows++;
        if (rc != FFB_E_AGAIN)
            break;
        rc = ffb_stmt_queue_fetch(sc->s, scan_rows, sc);
        if (rc == 0)
            return; /* called again when rows are in */
        if (rc == 1)
            rc = 0;
    }
    sc->status = rc;
    sc->done = 1;
    sc->t_end = ffb_now_ms();
    snprintf(sc->conn_msg, sizeof(sc->conn_msg), "%s",
             ffb_error_message(ffb_conn_error(c)));
}

/* About 1.1 MB of text that compresses to no less than half (random
   hex), so the faults below hit it with zlib on too. */
#define U "uuid_to_char(gen_uuid())"
static const char *const SELECT_WIDE =
    "with recursive r(n) as (select 1 from rdb$database union all "
    "select n + 1 from r where n < 50) select (a.n - 1) * 50 + b.n, " U "||" U
    "||" U "||" U "||" U "||" U "||" U "||" U " from r a cross join r b";

static void start_scan(ffb_conn *c, scan *sc) {
    OK(c, ffb_tx_begin(c, NULL, &sc->tx));
    OK(c, ffb_stmt_new(c, &sc->s));
    OK(c, ffb_stmt_queue_prepare(sc->s, sc->tx, SELECT_WIDE, (size_t)-1,
                                 on_result, &sc->prep));
    OK(c, ffb_stmt_queue_execute(sc->s, sc->tx, scan_rows, sc));
}

/* The server's answers stop after 300 KB: the I/O timeout (1 s) on the
   adapter's timer breaks the connection, the fetch pending completes
   with FFB_E_TIMEOUT and ffb_conn_error() names the timeout, and the
   close reports FFB_E_TIMEOUT. */
static void test_break_stalled_stream(void **state) {
    target *t = *state;
    proxy p;
    const char *const args[] = {"--stall-after-bytes", "300000", NULL};
    proxy_start(&p, t, args);
    char dsn[600];
    ffb_conn_options o;
    proxy_options(t, &p, dsn, sizeof(dsn), &o);
    o.io_timeout_ms = 1000;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn_opts(&loop, &o);
    scan sc;
    memset(&sc, 0, sizeof(sc));
    int64_t t0 = ffb_now_ms();
    start_scan(c, &sc);
    wait_for(&loop, &sc.done, "the scan to fail");
    printf("# %s stalled after 300000 bytes: %s after %d rows, %lld ms: %s\n",
           t->name, ffb_err_name(sc.status), sc.rows,
           (long long)(sc.t_end - t0), sc.conn_msg);
    assert_int_equal(sc.prep.status, 0);
    assert_int_equal(sc.status, FFB_E_TIMEOUT); /* the cause, not a close */
    assert_true(sc.rows > 0 && sc.rows < 2500);
    assert_non_null(strstr(sc.conn_msg, "within 1000 ms"));
    assert_true(sc.t_end - t0 >= 1000);
    assert_true(sc.t_end - t0 < 10000);
    assert_int_equal(ffb_conn_is_attached(c), 0);
    got g = {0};
    assert_int_equal(ffb_conn_queue_ping(c, on_result, &g), FFB_E_STATE);
    closed cl = {0};
    OK(c, ffb_uv_close(c, on_closed, &cl));
    wait_for(&loop, &cl.done, "the close");
    assert_int_equal(cl.status, FFB_E_TIMEOUT);
    end_loop(&loop);
    proxy_stop(&p);
}

/* The stream is closed after 300 KB: the read sees the end, the fetch
   pending completes with that end (FFB_E_CLOSED), so does the close. */
static void test_break_closed_stream(void **state) {
    target *t = *state;
    proxy p;
    const char *const args[] = {"--close-after-bytes", "300000", NULL};
    proxy_start(&p, t, args);
    char dsn[600];
    ffb_conn_options o;
    proxy_options(t, &p, dsn, sizeof(dsn), &o);
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn_opts(&loop, &o);
    scan sc;
    memset(&sc, 0, sizeof(sc));
    start_scan(c, &sc);
    wait_for(&loop, &sc.done, "the scan to fail");
    printf("# %s closed after 300000 bytes: %s after %d rows: %s\n", t->name,
           ffb_err_name(sc.status), sc.rows, sc.conn_msg);
    assert_true(sc.status == FFB_E_CLOSED || sc.status == FFB_E_IO);
    assert_true(sc.rows > 0 && sc.rows < 2500);
    closed cl = {0};
    OK(c, ffb_uv_close(c, on_closed, &cl));
    wait_for(&loop, &cl.done, "the close");
    assert_true(cl.status == FFB_E_CLOSED || cl.status == FFB_E_IO);
    end_loop(&loop);
    proxy_stop(&p);
}

/* ---- the async pool ---------------------------------------------------------
 */

#define NWAIT 6

typedef struct pool_run_t pool_run_t;

typedef struct waiter {
    pool_run_t *r;
    int idx, done, status, order;
    ffb_conn *conn;
    got ping;
    uint64_t at_hand;           /* round trips of conn when handed out */
    ffb_stats st_hand, st_ping; /* for FFB_TEST_DEBUG */
    int64_t hand_cost;          /* since its previous user's ping answered */
    int64_t ping_cost;
} waiter;

/* The connections seen, with their round trips when last given back. */
struct pool_run_t {
    ffb_uv_pool *pool;
    waiter w[NWAIT];
    int served;
    ffb_conn *cs[4];
    uint64_t crts[4];
    int nc;
};

static int conn_index(pool_run_t *r, ffb_conn *c) {
    for (int i = 0; i < r->nc; i++)
        if (r->cs[i] == c)
            return i;
    return -1;
}

static void pool_options(const target *t, ffb_conn_options *co,
                         ffb_pool_options *po) {
    options(t, co);
    ffb_pool_options_init(po);
    po->conn = co;
}

static void pool_closed(ffb_uv_pool *pool, void *data) {
    (void)pool;
    closed *c = data;
    c->done = 1;
    c->seq = ++seq;
}

static void pool_done(uv_loop_t *loop, ffb_uv_pool *pool) {
    closed c = {0};
    assert_int_equal(0, ffb_uv_pool_close(pool, pool_closed, &c));
    assert_int_equal(ffb_uv_pool_close(pool, pool_closed, &c), FFB_E_STATE);
    wait_for(loop, &c.done, "the pool's close");
    end_loop(loop);
}

/* A waiter's connection answered its ping: give it back. */
static void waiter_pinged(ffb_conn *c, const ffb_result *res, void *data) {
    waiter *w = data;
    on_result(c, res, &w->ping);
    w->ping_cost = (int64_t)(it_rts(c) - w->at_hand);
    ffb_conn_stats(c, &w->st_ping, sizeof(w->st_ping));
    int k = conn_index(w->r, c);
    if (k >= 0)
        w->r->crts[k] = it_rts(c);
    if (ffb_uv_pool_release(w->r->pool, c) < 0)
        fail_msg("release refused");
}

static void waiter_got(ffb_uv_pool *pool, ffb_conn *conn, int status,
                       void *data) {
    (void)pool;
    waiter *w = data;
    w->done = 1;
    w->status = status;
    w->order = ++w->r->served;
    w->conn = conn;
    if (status != 0)
        return;
    pool_run_t *r = w->r;
    w->at_hand = it_rts(conn);
    ffb_conn_stats(conn, &w->st_hand, sizeof(w->st_hand));
    int k = conn_index(r, conn);
    if (k < 0 && r->nc < 4) { /* fresh from its connect */
        r->cs[r->nc] = conn;
        r->crts[r->nc++] = w->at_hand;
        k = r->nc - 1;
    }
    w->hand_cost = k >= 0 ? (int64_t)(w->at_hand - r->crts[k]) : -1;
    if (ffb_conn_queue_ping(conn, waiter_pinged, w) < 0)
        ffb_uv_pool_discard(pool, conn);
}

/* Six acquires at once on a pool of two: two connects, then every waiter
   served in the order it asked, each on one of the two connections. */
static void test_pool_serves_waiters_in_order(void **state) {
    target *t = *state;
    ffb_conn_options co;
    ffb_pool_options po;
    pool_options(t, &co, &po);
    po.max_size = 2;
    uv_loop_t loop;
    uv_loop_init(&loop);
    pool_run_t *r = calloc(1, sizeof(*r));
    assert_int_equal(0, ffb_uv_pool_new(&loop, &po, &r->pool));
    assert_ptr_equal(ffb_uv_pool_loop(r->pool), &loop);
    for (int i = 0; i < NWAIT; i++) {
        r->w[i].r = r;
        r->w[i].idx = i;
        assert_int_equal(
            0, ffb_uv_pool_acquire(r->pool, -1, waiter_got, &r->w[i]));
    }
    assert_int_equal(r->served, 0); /* never inside the call */
    /* Every waiter's ping: the last waiter served may finish first. */
    for (int i = 0; i < NWAIT; i++)
        wait_for(&loop, &r->w[i].ping.done, "a waiter's ping");
    /* A connection given back is reset and handed to the oldest waiter,
       so waiters may be served before the second connect ends: one or
       two distinct connections. Handing out and the reset (no
       transaction) cost no round trip; each ping costs 1. */
    for (int i = 0; i < NWAIT; i++)
        if (getenv("FFB_TEST_DEBUG"))
            printf("# waiter %d: conn %d (queued writes %llu) at_hand %llu "
                   "hand %lld ping %lld\n",
                   i, conn_index(r, r->w[i].conn),
                   (unsigned long long)queued_writes(r->w[i].conn),
                   (unsigned long long)r->w[i].at_hand,
                   (long long)r->w[i].hand_cost, (long long)r->w[i].ping_cost),
                printf("#   sent %llu->%llu recv %llu->%llu flushes %llu->%llu "
                       "wire_in %llu->%llu attached %d\n",
                       (unsigned long long)r->w[i].st_hand.packets_sent,
                       (unsigned long long)r->w[i].st_ping.packets_sent,
                       (unsigned long long)r->w[i].st_hand.packets_received,
                       (unsigned long long)r->w[i].st_ping.packets_received,
                       (unsigned long long)r->w[i].st_hand.flushes,
                       (unsigned long long)r->w[i].st_ping.flushes,
                       (unsigned long long)r->w[i].st_hand.wire_bytes_received,
                       (unsigned long long)r->w[i].st_ping.wire_bytes_received,
                       ffb_conn_is_attached(r->w[i].conn));
    for (int i = 0; i < NWAIT; i++) {
        assert_int_equal(r->w[i].status, 0);
        assert_int_equal(r->w[i].order, i + 1);
        assert_int_equal(r->w[i].ping.status, 0);
        assert_int_equal(r->w[i].hand_cost, 0);
        assert_int_equal(r->w[i].ping_cost, 1);
    }
    int used = r->nc;
    assert_true(used >= 1 && used <= 2);
    /* Let a connect still running for the waiters end. */
    ffb_pool_counters pc;
    int64_t end = ffb_now_ms() + 30000;
    do {
        uv_run(&loop, UV_RUN_NOWAIT);
        assert_int_equal(0, ffb_uv_pool_stats(r->pool, &pc, sizeof(pc)));
    } while (pc.pending && ffb_now_ms() < end);
    assert_int_equal(pc.pending, 0);
    assert_true(pc.created >= 1 && pc.created <= 2);
    assert_int_equal(pc.create_failures, 0);
    assert_int_equal(pc.acquired, NWAIT);
    assert_int_equal(pc.in_use, 0);
    assert_int_equal(pc.idle, pc.created);
    printf("# %s: %d waiters on a pool of 2: served in order by %d "
           "connection(s), %llu connected\n",
           t->name, NWAIT, used, (unsigned long long)pc.created);
    assert_int_equal(pc.waiting, 0);
    /* Idle: handed out at once, with no round trip. */
    waiter w = {0};
    w.r = r;
    assert_int_equal(0, ffb_uv_pool_acquire(r->pool, 0, waiter_got, &w));
    wait_for(&loop, &w.ping.done, "an idle connection");
    if (getenv("FFB_TEST_DEBUG")) {
        ffb_uv_stats us;
        ffb_uv_conn_stats(w.conn, &us, sizeof(us));
        printf("# idle waiter: conn %d at_hand %llu now %llu hand %lld ping "
               "%lld writes %llu reads %llu\n",
               conn_index(r, w.conn), (unsigned long long)w.at_hand,
               (unsigned long long)it_rts(w.conn), (long long)w.hand_cost,
               (long long)w.ping_cost, (unsigned long long)us.writes,
               (unsigned long long)us.reads);
    }
    assert_int_equal(w.status, 0);
    assert_int_equal(w.hand_cost, 0);
    assert_int_equal(w.ping_cost, 1);
    pool_done(&loop, r->pool);
    free(r);
}

typedef struct held {
    int done, status;
    ffb_conn *conn;
    int64_t at;
} held;

static void got_held(ffb_uv_pool *pool, ffb_conn *conn, int status,
                     void *data) {
    (void)pool;
    held *h = data;
    h->done = 1;
    h->status = status;
    h->conn = conn;
    h->at = ffb_now_ms();
}

/* An acquire of an idle connection asked while the loop is not running:
   its callback queues a ping, whose callback gives the connection back
   and closes the pool. With no other event on the loop (only a 5 s limit
   timer) the ping must still leave at once. The pool answers such an
   acquire from its prepare handle, after the connection's own prepare
   handle has written for that turn; it then keeps the next poll from
   blocking (the async benchmark found the ping waiting for an unrelated
   event). */
typedef struct first_query {
    ffb_uv_pool *pool;
    int acquired, pinged, ping_status, closed, released;
    int64_t t_ping;
    uv_timer_t limit;
} first_query;

static void fq_pool_closed(ffb_uv_pool *pool, void *data) {
    (void)pool;
    first_query *q = data;
    q->closed = 1;
    uv_close((uv_handle_t *)&q->limit, NULL);
}

static void fq_pinged(ffb_conn *c, const ffb_result *res, void *data) {
    first_query *q = data;
    q->pinged = 1;
    q->ping_status = ffb_result_status(res);
    q->t_ping = ffb_now_ms();
    assert_int_equal(ffb_uv_pool_release(q->pool, c), 0);
    assert_int_equal(ffb_uv_pool_close(q->pool, fq_pool_closed, q), 0);
}

static void fq_acquired(ffb_uv_pool *pool, ffb_conn *conn, int status,
                        void *data) {
    (void)pool;
    first_query *q = data;
    q->acquired = 1;
    assert_int_equal(status, 0);
    assert_int_equal(ffb_conn_queue_ping(conn, fq_pinged, q), 0);
}

static void fq_warm(ffb_uv_pool *pool, ffb_conn *conn, int status,
                    void *data) {
    first_query *q = data;
    assert_int_equal(status, 0);
    assert_int_equal(ffb_uv_pool_release(pool, conn), 0);
    q->released = 1;
}

static void fq_limit(uv_timer_t *t) { uv_stop(t->loop); }

static void test_pool_first_query_not_held(void **state) {
    target *t = *state;
    ffb_conn_options co;
    ffb_pool_options po;
    pool_options(t, &co, &po);
    po.max_size = 1;
    uv_loop_t loop;
    uv_loop_init(&loop);
    first_query q;
    memset(&q, 0, sizeof(q));
    assert_int_equal(0, ffb_uv_pool_new(&loop, &po, &q.pool));
    /* Connect, give back: the connection is idle, the loop stopped. */
    assert_int_equal(0, ffb_uv_pool_acquire(q.pool, -1, fq_warm, &q));
    wait_for(&loop, &q.released, "the first connection");
    uv_run(&loop, UV_RUN_NOWAIT);
    uv_timer_init(&loop, &q.limit);
    uv_timer_start(&q.limit, fq_limit, 5000, 0);
    assert_int_equal(0, ffb_uv_pool_acquire(q.pool, -1, fq_acquired, &q));
    int64_t t0 = ffb_now_ms();
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(q.acquired, 1);
    assert_int_equal(q.pinged, 1);
    assert_int_equal(q.ping_status, 0);
    /* One ping on loopback: far below the 5 s limit, which alone would
       have woken a held write. */
    assert_true(q.t_ping - t0 < 2500);
    assert_int_equal(q.closed, 1);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* One connection, held: a second acquire with 200 ms times out on the
   pool's timer; a third that waits without limit is cancelled by the
   close, and the held connection, released after the close, is closed. */
static void test_pool_timeout_and_close(void **state) {
    target *t = *state;
    ffb_conn_options co;
    ffb_pool_options po;
    pool_options(t, &co, &po);
    po.max_size = 1;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_uv_pool *pool;
    assert_int_equal(0, ffb_uv_pool_new(&loop, &po, &pool));
    held a = {0}, b = {0}, c = {0};
    assert_int_equal(0, ffb_uv_pool_acquire(pool, -1, got_held, &a));
    wait_for(&loop, &a.done, "the first connection");
    assert_int_equal(a.status, 0);
    int64_t t0 = ffb_now_ms();
    assert_int_equal(0, ffb_uv_pool_acquire(pool, 200, got_held, &b));
    wait_for(&loop, &b.done, "the timeout");
    assert_int_equal(b.status, FFB_E_TIMEOUT);
    assert_null(b.conn);
    assert_true(b.at - t0 >= 200 && b.at - t0 < 2000);
    assert_int_equal(ffb_uv_pool_acquire(pool, 0, got_held, &b), 0);
    memset(&b, 0, sizeof(b));
    wait_for(&loop, &b.done, "the no-wait acquire");
    assert_int_equal(b.status, FFB_E_TIMEOUT);
    assert_int_equal(ffb_uv_pool_acquire(pool, -2, got_held, &c), FFB_E_INVAL);
    assert_int_equal(0, ffb_uv_pool_acquire(pool, -1, got_held, &c));
    ffb_pool_counters pc;
    assert_int_equal(0, ffb_uv_pool_stats(pool, &pc, sizeof(pc)));
    assert_int_equal(pc.timeouts, 2);
    assert_int_equal(pc.in_use, 1);
    closed cl = {0};
    assert_int_equal(0, ffb_uv_pool_close(pool, pool_closed, &cl));
    assert_int_equal(ffb_uv_pool_acquire(pool, -1, got_held, &b), FFB_E_STATE);
    wait_for(&loop, &c.done, "the cancelled waiter");
    assert_int_equal(c.status, FFB_E_CANCELLED);
    assert_int_equal(cl.done, 0); /* a connection is still out */
    OK(a.conn, ffb_uv_pool_release(pool, a.conn));
    wait_for(&loop, &cl.done, "the pool's close");
    end_loop(&loop);
}

/* A transaction left open is rolled back by the release (1 round trip):
   the row inserted in it is gone for the next user of the same
   connection, which gets it with no round trip. */
static void test_pool_release_resets(void **state) {
    target *t = *state;
    ffb_conn_options co;
    ffb_pool_options po;
    pool_options(t, &co, &po);
    po.max_size = 1;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_uv_pool *pool;
    assert_int_equal(0, ffb_uv_pool_new(&loop, &po, &pool));
    held a = {0};
    assert_int_equal(0, ffb_uv_pool_acquire(pool, -1, got_held, &a));
    wait_for(&loop, &a.done, "a connection");
    ffb_conn *c = a.conn;
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepared_insert(&loop, t, c, tx);
    OK(c, ffb_stmt_bind_int64(s, 0, 40000));
    OK(c, ffb_stmt_bind_text(s, 1, "reset", 5));
    got g = {0};
    OK(c, ffb_stmt_queue_execute(s, tx, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_EXECUTE);
    assert_int_equal(g.rows, 1);
    ffb_stmt_free(s);
    uint64_t r0 = it_rts(c);
    OK(c, ffb_uv_pool_release(pool, c));
    assert_int_equal(ffb_uv_pool_release(pool, c), FFB_E_INVAL);
    held b = {0};
    assert_int_equal(0, ffb_uv_pool_acquire(pool, -1, got_held, &b));
    wait_for(&loop, &b.done, "the connection again");
    assert_ptr_equal(b.conn, c);
    assert_int_equal(it_rts(c) - r0, 1); /* the rollback */
    assert_int_equal(ffb_tx_is_active(tx), 0);
    ffb_tx_free(tx);
    ffb_pool_counters pc;
    assert_int_equal(0, ffb_uv_pool_stats(pool, &pc, sizeof(pc)));
    assert_int_equal(pc.resets, 1);
    assert_int_equal(pc.created, 1);
    /* The row is not there. */
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[160];
    snprintf(sql, sizeof(sql), "select count(*) from %s where id = 40000",
             t->table);
    OK(c, ffb_stmt_new(c, &s));
    got gp = {0}, ge = {0};
    OK(c, ffb_stmt_queue_prepare(s, tx, sql, (size_t)-1, on_result, &gp));
    OK(c, ffb_stmt_queue_execute(s, tx, on_result, &ge));
    expect_ok(&loop, &ge, FFB_OP_EXECUTE);
    assert_int_equal(uv_fetch(&loop, s), 1);
    int64_t n;
    OK(c, ffb_stmt_get_int64(s, 0, &n));
    assert_int_equal(n, 0);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    OK(c, ffb_uv_pool_release(pool, c));
    pool_done(&loop, pool);
}

/* Connects that fail (a wrong password) fail the waiter with the
   connect's code; the pool's error has the server's message. */
static void test_pool_connect_failure(void **state) {
    target *t = *state;
    ffb_conn_options co;
    ffb_pool_options po;
    pool_options(t, &co, &po);
    co.password = "wrong-password";
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_uv_pool *pool;
    assert_int_equal(0, ffb_uv_pool_new(&loop, &po, &pool));
    held a = {0};
    assert_int_equal(0, ffb_uv_pool_acquire(pool, 5000, got_held, &a));
    wait_for(&loop, &a.done, "the failed acquire");
    assert_int_equal(a.status, FFB_E_AUTH);
    ffb_pool_error_info e;
    assert_int_equal(0, ffb_uv_pool_error(pool, &e, sizeof(e)));
    assert_int_equal(e.code, FFB_E_AUTH);
    assert_true(e.message[0] != '\0');
    printf("# %s: pool connect failure: %s\n", t->name, e.message);
    ffb_pool_counters pc;
    assert_int_equal(0, ffb_uv_pool_stats(pool, &pc, sizeof(pc)));
    assert_int_equal(pc.create_failures, 1);
    assert_int_equal(pc.failed_waits, 1);
    pool_done(&loop, pool);
}

/* ---- the async pool through a server restart ----------------------------- */

#define RCLIENTS 4

enum { RS_OK, RS_BROKEN, RS_TIMEOUT, RS_CONNECT, RS_N };

typedef struct rrun rrun;

/* A client on the loop: acquire, a query with its own value, release,
   again, until told to stop. */
typedef struct rclient {
    rrun *r;
    int id, i, phase, stopped;
    ffb_conn *conn;
    ffb_tx *tx;
    ffb_stmt *s;
    uint64_t n[3][RS_N], ok_after;
} rclient;

struct rrun {
    ffb_uv_pool *pool;
    rclient cl[RCLIENTS];
    int phase, stop, nstopped, failures;
    char first_failure[512];
};

static void rclient_next(rclient *k);

static void rclient_fail(rclient *k, const char *what) {
    if (k->r->failures++ == 0)
        snprintf(k->r->first_failure, sizeof(k->r->first_failure),
                 "client %d, phase %d, iteration %d: %s", k->id, k->phase, k->i,
                 what);
}

/* An iteration ended: count it in the phase it began in (a failure that
   ends after the cut counts in the cut's phase), start the next. */
static void rclient_end(rclient *k, int outcome) {
    int phase = k->phase;
    if (outcome != RS_OK && phase == 0 && k->r->phase > 0)
        phase = 1;
    k->n[phase][outcome]++;
    if (phase == 2 && outcome == RS_OK)
        k->ok_after++;
    k->i++;
    rclient_next(k);
}

static int conn_error(int rc) { return rc == FFB_E_CLOSED || rc == FFB_E_IO; }

/* The query failed: free its objects and give the connection back as it
   is (the pool must see it broke), or fail the test. */
static void rclient_broken(rclient *k, int rc, const char *what) {
    ffb_stmt_free(k->s);
    ffb_tx_free(k->tx);
    k->s = NULL;
    k->tx = NULL;
    if (!conn_error(rc) || ffb_conn_is_attached(k->conn)) {
        char msg[400];
        snprintf(msg, sizeof(msg), "%s: %s (attached %d): %s", what,
                 ffb_err_name(rc), ffb_conn_is_attached(k->conn),
                 ffb_error_message(ffb_conn_error(k->conn)));
        rclient_fail(k, msg);
    }
    if (ffb_uv_pool_release(k->r->pool, k->conn) < 0)
        rclient_fail(k, "release refused");
    rclient_end(k, RS_BROKEN);
}

static void rclient_committed(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    rclient *k = data;
    if (ffb_result_status(res) < 0) {
        rclient_broken(k, ffb_result_status(res), "commit");
        return;
    }
    ffb_tx_free(k->tx);
    k->tx = NULL;
    if (ffb_uv_pool_release(k->r->pool, k->conn) < 0)
        rclient_fail(k, "release refused");
    rclient_end(k, RS_OK);
}

static int64_t rclient_value(const rclient *k) {
    return (int64_t)k->id * 100000000 + k->i;
}

static void rclient_executed(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    rclient *k = data;
    int rc = ffb_result_status(res);
    if (rc < 0) {
        rclient_broken(k, rc, "execute");
        return;
    }
    int64_t got = -1;
    if ((rc = ffb_stmt_fetch(k->s)) != 1 ||
        ffb_stmt_get_int64(k->s, 0, &got) < 0 || got != rclient_value(k) + 1) {
        rclient_fail(k, "wrong answer");
        rclient_broken(k, FFB_E_STATE, "fetch");
        return;
    }
    ffb_stmt_free(k->s);
    k->s = NULL;
    rc = ffb_tx_queue_commit(k->tx, rclient_committed, k);
    if (rc < 0)
        rclient_broken(k, rc, "queue commit");
}

static void rclient_prepared(ffb_conn *c, const ffb_result *res, void *data) {
    rclient *k = data;
    int rc = ffb_result_status(res);
    if (rc >= 0 && (rc = ffb_stmt_bind_int64(k->s, 0, rclient_value(k))) >= 0)
        rc = ffb_stmt_queue_execute(k->s, k->tx, rclient_executed, k);
    if (rc < 0)
        rclient_broken(k, rc, "prepare");
    (void)c;
}

static void rclient_got(ffb_uv_pool *pool, ffb_conn *conn, int status,
                        void *data) {
    rclient *k = data;
    if (status == FFB_E_TIMEOUT && !conn) {
        rclient_end(k, RS_TIMEOUT);
        return;
    }
    if (status < 0) {
        if (!conn && (conn_error(status) || status == FFB_E_TIMEOUT)) {
            rclient_end(k, RS_CONNECT);
            return;
        }
        rclient_fail(k, ffb_err_name(status));
        rclient_end(k, RS_CONNECT);
        return;
    }
    k->conn = conn;
    /* Broken while idle (the cut): handed out closed, as documented. */
    if (!ffb_conn_is_attached(conn)) {
        if (ffb_uv_pool_discard(pool, conn) < 0)
            rclient_fail(k, "discard refused");
        rclient_end(k, RS_BROKEN);
        return;
    }
    int rc;
    if ((rc = ffb_tx_begin(conn, NULL, &k->tx)) < 0 ||
        (rc = ffb_stmt_new(conn, &k->s)) < 0 ||
        (rc = ffb_stmt_queue_prepare(k->s, k->tx,
                                     "select cast(? as bigint) + 1 from "
                                     "rdb$database",
                                     (size_t)-1, rclient_prepared, k)) < 0)
        rclient_broken(k, rc, "queue");
}

static void rclient_next(rclient *k) {
    if (k->r->stop) {
        k->stopped = 1;
        k->r->nstopped++;
        return;
    }
    k->phase = k->r->phase;
    if (ffb_uv_pool_acquire(k->r->pool, -1, rclient_got, k) < 0) {
        rclient_fail(k, "acquire refused");
        k->stopped = 1;
        k->r->nstopped++;
    }
}

static uint64_t rrun_ok(const rrun *r, int phase) {
    uint64_t n = 0;
    for (int i = 0; i < RCLIENTS; i++)
        n += r->cl[i].n[phase][RS_OK];
    return n;
}

static void run_ms(uv_loop_t *loop, int ms) {
    int64_t until = ffb_now_ms() + ms;
    uv_timer_t g;
    uv_timer_init(loop, &g);
    uv_timer_start(&g, guard_tick, 5, 5);
    while (ffb_now_ms() < until)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&g, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
}

/* Run the loop until `done(r)`, at most 15 s. */
static void run_until(uv_loop_t *loop, rrun *r, int (*done)(const rrun *),
                      const char *what) {
    int64_t until = ffb_now_ms() + 15000;
    while (!done(r) && !r->failures && ffb_now_ms() < until)
        run_ms(loop, 20);
    if (r->failures)
        fail_msg("%d failures; first: %s", r->failures, r->first_failure);
    if (!done(r))
        fail_msg("gave up waiting for %s", what);
}

/* 100 good iterations, and min_size reached with no connect pending, so
   the cut finds only established connections. */
static int served_before(const rrun *r) {
    ffb_pool_counters pc;
    if (ffb_uv_pool_stats(r->pool, &pc, sizeof(pc)) < 0)
        return 0;
    return rrun_ok(r, 0) >= 100 && pc.pending == 0 && pc.total >= 2;
}

static int served_after(const rrun *r) {
    for (int i = 0; i < RCLIENTS; i++)
        if (r->cl[i].ok_after < 10)
            return 0;
    return 1;
}

static int all_stopped(const rrun *r) { return r->nstopped == RCLIENTS; }

/*
 * The async pool (3 connections, 4 clients on the loop) through the
 * proxy: every connection cut at once, new ones refused for 400 ms, then
 * held for 400 ms, then let through. Connections broken while idle are
 * handed out closed and discarded, the ones under a query fail with a
 * connection error and are released broken; acquires meanwhile time out
 * (300 ms) or get the refused connect's error; afterwards every client is
 * served again, and the pool's counts agree with the clients'.
 */
static void test_pool_server_restart(void **state) {
    target *t = *state;
    proxy p;
    const char *const args[] = {NULL};
    proxy_start(&p, t, args);
    char dsn[600];
    ffb_conn_options co;
    proxy_options(t, &p, dsn, sizeof(dsn), &co);
    co.connect_timeout_ms = 5000;
    co.io_timeout_ms = 5000;
    ffb_pool_options po;
    ffb_pool_options_init(&po);
    po.conn = &co;
    po.min_size = 2;
    po.max_size = 3;
    po.acquire_timeout_ms = 300;
    po.validate_after_ms = -1;
    uv_loop_t loop;
    uv_loop_init(&loop);
    rrun *r = calloc(1, sizeof(*r));
    assert_int_equal(0, ffb_uv_pool_new(&loop, &po, &r->pool));
    for (int i = 0; i < RCLIENTS; i++) {
        r->cl[i].r = r;
        r->cl[i].id = i + 1;
        rclient_next(&r->cl[i]);
    }
    run_until(&loop, r, served_before, "service before the cut");
    ffb_pool_counters before;
    assert_int_equal(0, ffb_uv_pool_stats(r->pool, &before, sizeof(before)));
    r->phase = 1;
    it_proxy_command(&p, "refuse");
    unsigned cut = it_proxy_command(&p, "cut");
    run_ms(&loop, 400);
    it_proxy_command(&p, "hold");
    run_ms(&loop, 400);
    r->phase = 2;
    unsigned held = it_proxy_command(&p, "open");
    run_until(&loop, r, served_after, "service after the restart");
    r->stop = 1;
    run_until(&loop, r, all_stopped, "the clients to stop");
    uint64_t n[3][RS_N];
    memset(n, 0, sizeof(n));
    for (int i = 0; i < RCLIENTS; i++)
        for (int ph = 0; ph < 3; ph++)
            for (int k = 0; k < RS_N; k++)
                n[ph][k] += r->cl[i].n[ph][k];
    ffb_pool_counters pc;
    assert_int_equal(0, ffb_uv_pool_stats(r->pool, &pc, sizeof(pc)));
    ffb_pool_error_info e;
    assert_int_equal(0, ffb_uv_pool_error(r->pool, &e, sizeof(e)));
    for (int ph = 0; ph < 3; ph++)
        printf("# %s: async pool %s: %llu ok, %llu broken, %llu timed out, "
               "%llu connects failed\n",
               t->name,
               ph == 0   ? "before the cut"
               : ph == 1 ? "cut, refused, held"
                         : "after",
               (unsigned long long)n[ph][RS_OK],
               (unsigned long long)n[ph][RS_BROKEN],
               (unsigned long long)n[ph][RS_TIMEOUT],
               (unsigned long long)n[ph][RS_CONNECT]);
    printf("# %s: %u cut, %u held; pool: created %llu (%llu before), "
           "discarded %llu, create failures %llu, timeouts %llu; last "
           "error: %s\n",
           t->name, cut, held, (unsigned long long)pc.created,
           (unsigned long long)before.created, (unsigned long long)pc.discarded,
           (unsigned long long)pc.create_failures,
           (unsigned long long)pc.timeouts, e.message);
    for (int k = RS_BROKEN; k < RS_N; k++)
        assert_int_equal(n[0][k], 0); /* nothing failed before the cut */
    /* Every connection was cut: those idle were handed out closed and
       discarded, those in use failed their query and were released. */
    assert_int_equal(cut, before.total);
    assert_int_equal(n[1][RS_BROKEN] + n[2][RS_BROKEN], cut);
    assert_true(pc.create_failures >= 1);
    assert_true(n[1][RS_TIMEOUT] + n[1][RS_CONNECT] >= 1);
    assert_true(pc.created >= before.created + 1);
    uint64_t ok = 0, broken = 0, timeouts = 0, connects = 0;
    for (int ph = 0; ph < 3; ph++) {
        ok += n[ph][RS_OK];
        broken += n[ph][RS_BROKEN];
        timeouts += n[ph][RS_TIMEOUT];
        connects += n[ph][RS_CONNECT];
    }
    assert_int_equal(pc.acquired, ok + broken);
    assert_int_equal(pc.timeouts, timeouts);
    assert_int_equal(pc.failed_waits, connects);
    assert_int_equal(pc.discarded, broken);
    assert_int_equal(pc.created - pc.discarded - pc.evicted - pc.expired,
                     pc.total);
    assert_int_equal(pc.in_use, 0);
    assert_int_equal(pc.waiting, 0);
    ffb_uv_pool *pool = r->pool;
    free(r);
    pool_done(&loop, pool);
    proxy_stop(&p);
}

/* ---- the loop never stalls ----------------------------------------------- */

#define NCONN 100
#define NBATCH 10

/*
 * Each of the NCONN connections runs the same script on the one loop, one
 * step after the other, each step queued from the callback that ended
 * the one before (so it goes out in one write), with its round trips
 * noted:
 *
 *   S_PREPARE  begin tx1; create a blob, write its bytes (its own size
 *              and pattern per connection), close it; prepare the insert,
 *              a select with a parameter and a range select
 *   S_DML      the insert twice (one row with the blob, one without),
 *              the parameterised select, the commit
 *   S_SELECT   begin tx2; the range select: both rows, values checked
 *   S_BLOB     open the blob of the first row, read it: bytes checked
 *   S_BATCH    NBATCH inserts in a batch that commits tx2
 *   S_CHECK    begin tx3; the range select again: 2 + NBATCH rows
 *   S_CLOSE    the polite close (op_detach)
 */
enum step {
    S_CONNECT,
    S_PREPARE,
    S_DML,
    S_SELECT,
    S_BLOB,
    S_BATCH,
    S_CHECK,
    S_CLOSE,
    S_N
};

static const char *const step_name[S_N] = {
    "connect", "prepare", "dml", "select", "blob", "batch", "check", "close"};

typedef struct many many;

typedef struct one {
    many *m;
    int idx;
    ffb_conn *c;
    ffb_tx *tx;
    ffb_stmt *ins, *sel, *range;
    ffb_blob *blob;
    uint8_t blob_id[8];
    uint8_t *data, *back;
    size_t len, got;
    ffb_batch *batch;
    int64_t base, attachment;
    int step, rows, results, closed, close_status;
    uint64_t rt0, rt[S_N];
} one;

struct many {
    one conns[NCONN];
    const target *t;
    int nclosed, failures;
    char first_failure[512];
    int64_t last_tick, max_gap, ticks;
    uv_timer_t tick, guard, start;
    int gave_up;
    const ffb_conn_options *opts;
    int64_t start_ms; /* the connect calls themselves */
};

static void many_fail(one *o, const char *what, const char *msg) {
    if (o->m->failures++ == 0)
        snprintf(o->m->first_failure, sizeof(o->m->first_failure),
                 "connection %d, %s, %s: %s", o->idx, step_name[o->step], what,
                 msg);
}

static void many_closed(ffb_conn *c, int status, void *data) {
    one *o = data;
    o->closed = 1;
    o->close_status = status;
    if (o->step == S_CLOSE)
        o->rt[S_CLOSE] = it_rts(c) - o->rt0;
    if (++o->m->nclosed == NCONN) {
        uv_timer_stop(&o->m->tick);
        uv_timer_stop(&o->m->guard);
    }
}

static void many_close(one *o) {
    if (ffb_uv_close(o->c, many_closed, o) < 0)
        many_fail(o, "close", "refused");
}

/* The step ended: note its round trips and start the next. */
static void many_next(one *o);

static void begin_step(one *o, int step) {
    o->step = step;
    o->rt0 = it_rts(o->c);
}

static void end_step(one *o) {
    o->rt[o->step] = it_rts(o->c) - o->rt0;
    many_next(o);
}

/* A failed request ends the connection's script (abruptly). */
static int check_result(one *o, const ffb_result *r, const char *what) {
    if (ffb_result_status(r) >= 0)
        return 0;
    many_fail(o, what, ffb_error_message(ffb_result_error(r)));
    o->step = S_CLOSE + 1; /* nothing more */
    many_close(o);
    return -1;
}

static void queued_failed(one *o, const char *what) {
    many_fail(o, what, ffb_error_message(ffb_conn_error(o->c)));
    o->step = S_CLOSE + 1;
    many_close(o);
}

static uint8_t pattern(const one *o, size_t k) {
    return (uint8_t)(k * 31 + (size_t)o->idx * 7 + k / 251);
}

/* Requests of a step whose last callback ends it: count them down. */
static void step_result(ffb_conn *c, const ffb_result *r, void *data) {
    (void)c;
    one *o = data;
    if (check_result(o, r, "a request") < 0)
        return;
    if (ffb_result_op(r) == FFB_OP_EXECUTE && o->step == S_DML &&
        o->results < 2 && ffb_result_rows_affected(r) != 1) {
        many_fail(o, "insert", "row count is not 1");
        o->step = S_CLOSE + 1;
        many_close(o);
        return;
    }
    o->results++;
}

static void dml_selected(ffb_conn *c, const ffb_result *r, void *data) {
    one *o = data;
    if (check_result(o, r, "select") < 0)
        return;
    int64_t v = 0;
    if (ffb_stmt_fetch(o->sel) != 1 || ffb_stmt_get_int64(o->sel, 0, &v) < 0 ||
        ffb_stmt_get_int64(o->sel, 1, &o->attachment) < 0) {
        queued_failed(o, "select's row");
        return;
    }
    if (v != o->base * 2 + 1)
        many_fail(o, "select", "wrong value");
    (void)c;
    o->results++;
}

static void step_done(ffb_conn *c, const ffb_result *r, void *data) {
    (void)c;
    one *o = data;
    if (check_result(o, r, "the step's last request") < 0)
        return;
    end_step(o);
}

/* Rows of the range select, in callbacks until the end of the cursor. */
static void range_rows(ffb_conn *c, const ffb_result *r, void *data) {
    one *o = data;
    if (check_result(o, r, "range select") < 0)
        return;
    int rc;
    for (;;) {
        while ((rc = ffb_stmt_fetch(o->range)) == 1) {
            int64_t id = -1;
            const char *text;
            size_t len;
            char want[48];
            if (ffb_stmt_get_int64(o->range, 0, &id) < 0 ||
                ffb_stmt_get_text(o->range, 1, &text, &len) < 0) {
                queued_failed(o, "a row");
                return;
            }
            int k = (int)(id - o->base);
            if (k == 1)
                snprintf(want, sizeof(want), "one %d", o->idx);
            else if (k == 2)
                snprintf(want, sizeof(want), "two %d", o->idx);
            else
                snprintf(want, sizeof(want), "batch %d %d", o->idx, k);
            int expected_k = o->rows < 2 ? o->rows + 1 : 10 + o->rows - 2;
            if (k != expected_k || len != strlen(want) ||
                memcmp(text, want, len) != 0)
                many_fail(o, "a row", "wrong id or text");
            int null = ffb_stmt_is_null(o->range, 2);
            if (k == 1) {
                if (null != 0 ||
                    ffb_stmt_get_blob_id(o->range, 2, o->blob_id) < 0)
                    many_fail(o, "the first row", "no blob id");
            } else if (null != 1) {
                many_fail(o, "a row", "a blob where none was written");
            }
            o->rows++;
        }
        if (rc != FFB_E_AGAIN)
            break;
        rc = ffb_stmt_queue_fetch(o->range, range_rows, o);
        if (rc == 0)
            return; /* called again with more rows */
        if (rc < 0)
            break;
    }
    if (rc < 0) {
        queued_failed(o, "fetch");
        return;
    }
    int want = o->step == S_SELECT ? 2 : 2 + NBATCH;
    if (o->rows != want)
        many_fail(o, "range select", "wrong number of rows");
    (void)c;
    end_step(o);
}

/* The blob's bytes, read in callbacks to its end. */
static void blob_bytes(ffb_conn *c, const ffb_result *r, void *data) {
    one *o = data;
    if (r && check_result(o, r, "blob read") < 0)
        return;
    for (;;) {
        size_t n = 0;
        int rc =
            ffb_blob_read(o->blob, o->back + o->got, o->len + 1 - o->got, &n);
        if (rc == FFB_E_AGAIN) {
            rc = ffb_blob_queue_read(o->blob, blob_bytes, o);
            if (rc == 0)
                return;
            if (rc == 1)
                continue;
        }
        if (rc < 0) {
            queued_failed(o, "blob read");
            return;
        }
        if (n == 0)
            break;
        o->got += n;
    }
    if (o->got != o->len || memcmp(o->back, o->data, o->len) != 0)
        many_fail(o, "blob", "bytes differ");
    ffb_blob_free(o->blob);
    o->blob = NULL;
    (void)c;
    end_step(o);
}

static void batch_done(ffb_conn *c, const ffb_result *r, void *data) {
    one *o = data;
    if (check_result(o, r, "batch") < 0)
        return;
    if (ffb_batch_row_count(o->batch) != NBATCH)
        many_fail(o, "batch", "wrong row count");
    for (size_t k = 0; k < NBATCH; k++)
        if (ffb_batch_row_status(o->batch, k) != 1)
            many_fail(o, "batch", "a row not inserted");
    if (ffb_tx_is_active(o->tx))
        many_fail(o, "batch", "transaction not committed");
    ffb_batch_free(o->batch);
    o->batch = NULL;
    (void)c;
    end_step(o);
}

static void start_prepare(one *o) {
    ffb_conn *c = o->c;
    const target *t = o->m->t;
    char ins[200], range[200];
    snprintf(ins, sizeof(ins), "insert into %s (id, v, b) values (?, ?, ?)",
             t->table);
    snprintf(range, sizeof(range),
             "select id, v, b from %s where id between ? and ? order by id",
             t->table);
    static const char sel[] = "select cast(? as bigint) * 2 + 1, "
                              "current_connection from rdb$database";
    begin_step(o, S_PREPARE);
    if (ffb_tx_begin(c, NULL, &o->tx) < 0 ||
        ffb_blob_create(c, o->tx, NULL, &o->blob) < 0 ||
        ffb_blob_write(o->blob, o->data, o->len / 2) < 0 ||
        ffb_blob_write(o->blob, o->data + o->len / 2, o->len - o->len / 2) <
            0 ||
        ffb_blob_queue_close(o->blob, step_result, o) < 0 ||
        ffb_stmt_new(c, &o->ins) < 0 || ffb_stmt_new(c, &o->sel) < 0 ||
        ffb_stmt_new(c, &o->range) < 0 ||
        ffb_stmt_queue_prepare(o->ins, o->tx, ins, (size_t)-1, step_result, o) <
            0 ||
        ffb_stmt_queue_prepare(o->sel, o->tx, sel, sizeof(sel) - 1, step_result,
                               o) < 0 ||
        ffb_stmt_queue_prepare(o->range, o->tx, range, (size_t)-1, step_done,
                               o) < 0)
        queued_failed(o, "queue");
}

static int bind_row(one *o, int k, const char *fmt, int blob) {
    char text[48];
    snprintf(text, sizeof(text), fmt, o->idx, k);
    if (ffb_stmt_bind_int64(o->ins, 0, o->base + k) < 0 ||
        ffb_stmt_bind_text(o->ins, 1, text, strlen(text)) < 0 ||
        (blob ? ffb_stmt_bind_blob_id(o->ins, 2, o->blob_id)
              : ffb_stmt_bind_null(o->ins, 2)) < 0)
        return -1;
    return 0;
}

static void start_dml(one *o) {
    if (o->results != 3 || ffb_blob_get_id(o->blob, o->blob_id) < 0) {
        queued_failed(o, "prepares or blob id");
        return;
    }
    ffb_blob_free(o->blob);
    o->blob = NULL;
    begin_step(o, S_DML);
    o->results = 0;
    if (bind_row(o, 1, "one %d", 1) < 0 ||
        ffb_stmt_queue_execute(o->ins, o->tx, step_result, o) < 0 ||
        bind_row(o, 2, "two %d", 0) < 0 ||
        ffb_stmt_queue_execute(o->ins, o->tx, step_result, o) < 0 ||
        ffb_stmt_bind_int64(o->sel, 0, o->base) < 0 ||
        ffb_stmt_queue_execute(o->sel, o->tx, dml_selected, o) < 0 ||
        ffb_tx_queue_commit(o->tx, step_done, o) < 0)
        queued_failed(o, "queue");
}

/* A new transaction and the range select in it. */
static void start_range(one *o, int step) {
    ffb_tx_free(o->tx); /* committed (by the commit, or by the batch) */
    o->tx = NULL;
    begin_step(o, step);
    o->rows = 0;
    if (ffb_tx_begin(o->c, NULL, &o->tx) < 0 ||
        ffb_stmt_bind_int64(o->range, 0, o->base) < 0 ||
        ffb_stmt_bind_int64(o->range, 1, o->base + 99) < 0 ||
        ffb_stmt_queue_execute(o->range, o->tx, range_rows, o) < 0)
        queued_failed(o, "queue");
}

static void start_blob(one *o) {
    begin_step(o, S_BLOB);
    if (ffb_blob_open(o->c, o->tx, o->blob_id, 1024 * 1024, &o->blob) < 0) {
        queued_failed(o, "blob open");
        return;
    }
    o->got = 0;
    blob_bytes(o->c, NULL, o);
}

static void start_batch(one *o) {
    begin_step(o, S_BATCH);
    ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
    bo.commit = 1;
    if (ffb_batch_new(o->ins, &bo, &o->batch) < 0) {
        queued_failed(o, "batch");
        return;
    }
    for (int k = 10; k < 10 + NBATCH; k++)
        if (bind_row(o, k, "batch %d %d", 0) < 0 ||
            ffb_batch_add(o->batch) < 0) {
            queued_failed(o, "batch row");
            return;
        }
    if (ffb_batch_queue_execute(o->batch, o->tx, batch_done, o) < 0)
        queued_failed(o, "queue");
}

static void start_close(one *o) {
    /* tx3 is freed active: its rollback rides with the detach. */
    ffb_stmt_free(o->ins);
    ffb_stmt_free(o->sel);
    ffb_stmt_free(o->range);
    ffb_tx_free(o->tx);
    o->tx = NULL;
    begin_step(o, S_CLOSE);
    many_close(o);
}

static void many_next(one *o) {
    switch (o->step) {
    case S_CONNECT:
        start_prepare(o);
        break;
    case S_PREPARE:
        start_dml(o);
        break;
    case S_DML:
        if (o->results != 3)
            many_fail(o, "dml", "a result missing");
        start_range(o, S_SELECT);
        break;
    case S_SELECT:
        start_blob(o);
        break;
    case S_BLOB:
        start_batch(o);
        break;
    case S_BATCH:
        start_range(o, S_CHECK);
        break;
    case S_CHECK:
        start_close(o);
        break;
    default:
        break;
    }
}

static void many_connected(ffb_conn *c, int status, void *data) {
    one *o = data;
    if (status < 0) {
        many_fail(o, "connect", ffb_error_message(ffb_conn_error(c)));
        o->step = S_CLOSE + 1;
        many_close(o);
        return;
    }
    o->rt[S_CONNECT] = it_rts(c);
    many_next(o);
}

static void many_tick(uv_timer_t *h) {
    many *m = h->data;
    int64_t now = ffb_now_ms();
    if (m->ticks && now - m->last_tick > m->max_gap)
        m->max_gap = now - m->last_tick;
    m->last_tick = now;
    m->ticks++;
}

static void many_give_up(uv_timer_t *h) {
    many *m = h->data;
    m->gave_up = 1;
    uv_stop(h->loop);
}

/* On the running loop, after the first tick: all connects at once. */
static void many_start(uv_timer_t *h) {
    many *m = h->data;
    int64_t t0 = ffb_now_ms();
    for (int i = 0; i < NCONN; i++) {
        one *x = &m->conns[i];
        if (ffb_uv_conn_new(h->loop, m->opts, &x->c) != 0 ||
            ffb_uv_connect(x->c, many_connected, x) != 0) {
            many_fail(x, "start", "refused");
            m->gave_up = 1;
            uv_stop(h->loop);
            return;
        }
    }
    m->start_ms = ffb_now_ms() - t0;
}

/*
 * NCONN connections on one loop, each running the script above with
 * every result checked (values, row counts, blob bytes, batch rows), the
 * round trips of every step exactly as the same requests cost one
 * connection alone, while a 5 ms repeating timer keeps firing: the
 * largest gap between two ticks stays under 250 ms.
 */
static void test_loop_never_stalls(void **state) {
    target *t = *state;
    /* Round trips per step, the reason beside each: */
    ffb_conn *b = blocking_conn(t);
    uint64_t want[S_N];
    want[S_CONNECT] = it_rts(b); /* as the blocking connect, 3 */
    blocking_done(b);
    /* Firebird 4 takes the transaction start, the blob's create (its
       transaction named as "the object allocated last", so it is queued
       before the statements are allocated), data and close, and the
       prepares in one write; Firebird 3 prepares only after the start's
       answer (test_prepare_execute_fetch): 2. */
    want[S_PREPARE] = t->version >= 4 ? 1 : 2;
    want[S_DML] = 1;    /* 2 inserts, the select, the commit: one write */
    want[S_SELECT] = 1; /* the start, the execute and its fetch */
    want[S_BLOB] = 1;   /* open + reads, the whole blob prefetched */
    /* op_batch_create is confirmed before the messages on Firebird 4
       (test_batch); Firebird 3 pipelines one execute per row and the
       commit in one write. */
    want[S_BATCH] = t->version >= 4 ? 2 : 1;
    want[S_CHECK] = 1; /* as S_SELECT */
    want[S_CLOSE] = 1; /* op_detach, with the rollback of tx3 */

    uv_loop_t loop;
    uv_loop_init(&loop);
    many *m = calloc(1, sizeof(*m));
    m->t = t;
    ffb_conn_options o;
    options(t, &o);
    m->opts = &o;
    for (int i = 0; i < NCONN; i++) {
        one *x = &m->conns[i];
        x->m = m;
        x->idx = i;
        x->base = 1000000 + (int64_t)i * 100;
        x->len = 2000 + (size_t)i * 97; /* 2 to 11.6 KB */
        x->data = malloc(x->len);
        x->back = malloc(x->len + 1);
        for (size_t k = 0; k < x->len; k++)
            x->data[k] = pattern(x, k);
    }
    uv_timer_init(&loop, &m->tick);
    m->tick.data = m;
    uv_timer_start(&m->tick, many_tick, 5, 5);
    uv_timer_init(&loop, &m->guard);
    m->guard.data = m;
    uv_timer_start(&m->guard, many_give_up, 300000, 0);
    uv_timer_init(&loop, &m->start);
    m->start.data = m;
    uv_timer_start(&m->start, many_start, 6, 0);
    int64_t t0 = ffb_now_ms();
    uv_run(&loop, UV_RUN_DEFAULT);
    int64_t took = ffb_now_ms() - t0;
    if (m->gave_up)
        fail_msg("%d of %d connections closed after 300 s", m->nclosed, NCONN);
    uv_close((uv_handle_t *)&m->tick, NULL);
    uv_close((uv_handle_t *)&m->guard, NULL);
    uv_close((uv_handle_t *)&m->start, NULL);
    end_loop(&loop);
    printf("# %s: %d connections ran the mixed script (%d steps) in %lld ms "
           "(the %d connect calls, in one timer callback: %lld ms); timer "
           "(5 ms) ticked %lld times, largest gap %lld ms\n",
           t->name, NCONN, S_N, (long long)took, NCONN, (long long)m->start_ms,
           (long long)m->ticks, (long long)m->max_gap);
    int failures = m->failures, nclosed = m->nclosed, bad = -1;
    char first[512], why[256] = "";
    snprintf(first, sizeof(first), "%s", m->first_failure);
    for (int i = 0; i < NCONN && bad < 0; i++) {
        one *x = &m->conns[i];
        if (!x->closed || x->close_status != 0 || x->attachment <= 0) {
            bad = i;
            snprintf(why, sizeof(why), "closed %d, status %d, attachment %lld",
                     x->closed, x->close_status, (long long)x->attachment);
        }
        for (int j = 0; j < i && bad < 0; j++) /* an attachment each */
            if (m->conns[j].attachment == x->attachment) {
                bad = i;
                snprintf(why, sizeof(why), "attachment of connection %d", j);
            }
        for (int k = 0; k < S_N && bad < 0; k++)
            if (x->rt[k] != want[k]) {
                bad = i;
                snprintf(why, sizeof(why), "%s: %llu round trips, not %llu",
                         step_name[k], (unsigned long long)x->rt[k],
                         (unsigned long long)want[k]);
            }
    }
    int64_t gap = m->max_gap;
    for (int i = 0; i < NCONN; i++) {
        free(m->conns[i].data);
        free(m->conns[i].back);
    }
    free(m);
    if (failures)
        fail_msg("%d failures; first: %s", failures, first);
    assert_int_equal(nclosed, NCONN);
    if (bad >= 0)
        fail_msg("connection %d: %s", bad, why);
    /* Under valgrind everything runs some 50 times slower: the bound
       means nothing there (the run still checks every connection). */
    if (!RUNNING_ON_VALGRIND)
        assert_true(gap < 250);
}

/* ---- cancellation ----------------------------------------------------- */

/* A query that runs `ms` milliseconds, then returns one row (the clock is
   read on every turn), as in tests/integration/test_cancel.c. */
#define BUSY_SQL(ms)                                                           \
    "execute block returns (n bigint) as declare t timestamp; begin n = 0; "  \
    "t = cast('NOW' as timestamp); while (datediff(millisecond from t to "     \
    "cast('NOW' as timestamp)) < " #ms ") do n = n + 1; suspend; end"

typedef struct uv_canceller {
    ffb_conn *conn;
    int64_t at;
    int rc;
} uv_canceller;

static void *uv_cancel_main(void *arg) {
    uv_canceller *k = arg;
    uv_sleep(300);
    k->at = ffb_now_ms();
    k->rc = ffb_uv_conn_cancel(k->conn, FFB_CANCEL_RAISE);
    return NULL;
}

static void on_cancel_timer(uv_timer_t *h) {
    uv_canceller *k = h->data;
    k->at = ffb_now_ms();
    k->rc = ffb_conn_cancel(k->conn, FFB_CANCEL_RAISE);
}

/* A queued execution (op_execute + op_fetch, one round trip) cancelled by
   another thread (ffb_uv_conn_cancel), then one cancelled from a timer on
   the loop (ffb_conn_cancel): FFB_E_CANCELLED within 100 ms each time,
   and the connection runs the next query. */
static void test_cancel(void **state) {
    target *t = *state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = uv_conn(&loop, t);
    assert_int_equal(ffb_uv_conn_cancel(c, 9), FFB_E_INVAL);
    assert_int_equal(ffb_uv_conn_cancel(NULL, FFB_CANCEL_RAISE), FFB_E_INVAL);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    got g = {0};
    OK(c, ffb_stmt_queue_prepare(s, tx, BUSY_SQL(20000), (size_t)-1,
                                 on_result, &g));
    expect_ok(&loop, &g, FFB_OP_PREPARE);

    for (int from_loop = 0; from_loop < 2; from_loop++) {
        uv_canceller k = {c, 0, -1};
        pthread_t th;
        uv_timer_t tm;
        if (from_loop) {
            uv_timer_init(&loop, &tm);
            tm.data = &k;
            uv_timer_start(&tm, on_cancel_timer, 300, 0);
        } else {
            assert_int_equal(pthread_create(&th, NULL, uv_cancel_main, &k),
                             0);
        }
        uint64_t r0 = it_rts(c);
        memset(&g, 0, sizeof(g));
        OK(c, ffb_stmt_queue_execute(s, tx, on_result, &g));
        wait_for(&loop, &g.done, "the cancelled execution");
        int64_t after = ffb_now_ms() - k.at;
        if (from_loop)
            uv_close((uv_handle_t *)&tm, NULL);
        else
            pthread_join(th, NULL);
        printf("# %s: cancel from the %s answered after %lld ms\n", t->name,
               from_loop ? "loop" : "other thread", (long long)after);
        assert_int_equal(k.rc, 0);
        assert_int_equal(g.status, FFB_E_CANCELLED);
        assert_true(after >= 0 && after < 100);
        /* op_execute + op_fetch in one write; op_cancel has no answer. */
        assert_int_equal(it_rts(c) - r0, 1);
    }
    ffb_stmt_free(s);
    OK(c, ffb_stmt_new(c, &s));
    memset(&g, 0, sizeof(g));
    OK(c, ffb_stmt_queue_prepare(s, tx, "select 1 from rdb$database",
                                 (size_t)-1, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_PREPARE);
    memset(&g, 0, sizeof(g));
    OK(c, ffb_stmt_queue_execute(s, tx, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_EXECUTE);
    assert_int_equal(uv_fetch(&loop, s), 1);
    assert_int_equal(uv_fetch(&loop, s), 0);
    ffb_stmt_free(s);
    memset(&g, 0, sizeof(g));
    OK(c, ffb_tx_queue_commit(tx, on_result, &g));
    expect_ok(&loop, &g, FFB_OP_COMMIT);
    ffb_tx_free(tx);
    uv_done(&loop, c);
    end_loop(&loop);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);      /* the proxy's pipes */
    if (getenv("FFB_TEST_FILTER")) /* e.g. "test_pool_*" */
        cmocka_set_test_filter(getenv("FFB_TEST_FILTER"));
    static const char *const names[] = {"FB3", "FB4", "FB4E"};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_and_close),
        cmocka_unit_test(test_localhost),
        cmocka_unit_test(test_create_and_drop),
        cmocka_unit_test(test_prepare_execute_fetch),
        cmocka_unit_test(test_dml_and_commit),
        cmocka_unit_test(test_pipeline_queued_in_a_callback),
        cmocka_unit_test(test_pipeline_queued_in_a_timer),
        cmocka_unit_test(test_blob),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_close_pending_unsent),
        cmocka_unit_test(test_close_pending_on_the_wire),
        cmocka_unit_test(test_close_from_a_callback),
        cmocka_unit_test(test_connect_timeout),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_unknown_host),
        cmocka_unit_test(test_close_while_connecting),
        cmocka_unit_test(test_proxy_turns_match),
        cmocka_unit_test(test_break_stalled_stream),
        cmocka_unit_test(test_break_closed_stream),
        cmocka_unit_test(test_pool_serves_waiters_in_order),
        cmocka_unit_test(test_pool_timeout_and_close),
        cmocka_unit_test(test_pool_first_query_not_held),
        cmocka_unit_test(test_pool_release_resets),
        cmocka_unit_test(test_pool_connect_failure),
        cmocka_unit_test(test_pool_server_restart),
        cmocka_unit_test(test_loop_never_stalls),
        cmocka_unit_test(test_cancel),
    };
    return it_main("UV", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), setup_target,
                   teardown_target);
}
