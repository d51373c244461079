/*
 * The libfastfb async peer: the same scenarios and checks as peer_ffb.c,
 * through libfastfb_uv (fastfb_uv.h) - connections on a libuv loop, the
 * queue functions of fastfb.h with result callbacks, no blocking call.
 *
 * The scenarios are sequences (a select, then the next one): where the
 * blocking peer calls ffb_stmt_execute(), this one queues the execution
 * with a callback and runs the loop (uv_run(UV_RUN_ONCE)) until that
 * callback has run - what a sequential task on an event loop costs. The
 * adapter writes once per loop pass, so everything queued before a wait
 * leaves in one write, and the round trips must equal the blocking
 * peer's (the report shows both).
 *
 * The concurrency scenario is event-driven throughout: one loop, one
 * ffb_uv_pool of N connections, N logical clients, each acquiring a
 * connection, running one auto-commit point select on it (start, execute
 * with its first fetch, commit: one write) and releasing it, from
 * callbacks, until the time is up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fastfb_uv.h>

#include "bench.h"

/* ---- waiting for a callback, by running the loop ------------------------ */

/* One queued request's outcome, kept past its callback. */
typedef struct op {
    int done;
    int status;
    int64_t rows; /* ffb_result_rows_affected() */
    char err[512];
} op;

static void on_op(ffb_conn *c, const ffb_result *res, void *data) {
    op *o = data;
    (void)c;
    o->done = 1;
    o->status = ffb_result_status(res);
    o->rows = ffb_result_rows_affected(res);
    if (o->status != 0 && ffb_result_error(res))
        snprintf(o->err, sizeof(o->err), "%s",
                 ffb_error_message(ffb_result_error(res)));
}

typedef struct uv_stmt_pool {
    ffb_stmt **v;
    int n;
} uv_stmt_pool;

/* A point select's row check, resumable from callbacks: read the buffered
   rows; when none is buffered, queue a fetch and continue in its
   callback. `then` runs once, when the cursor ended or failed. */
typedef struct point {
    peer *p;
    ffb_stmt *st;
    int64_t want;
    int rows;
    int failed;
    int done;
    void (*then)(struct point *pt);
    void *data;
} point;

typedef struct uv_peer {
    uv_loop_t loop;
    int loop_ok;
    ffb_conn *conn;
    ffb_stmt *stmt;
    ffb_stmt *stmt2;
    uv_stmt_pool pool;
    unsigned char *blob_buf; /* BENCH_BLOB_LARGE bytes */
    unsigned char *read_buf; /* BENCH_BLOB_LARGE bytes */
    char dsn[600];
    /* the concurrency scenario */
    ffb_uv_pool *cpool;
    struct conc_slot *slots;
    int nslots;
} uv_peer;

/* Run the loop until *flag is set. */
static int wait_for(peer *p, const int *flag) {
    uv_peer *s = p->st;
    while (!*flag)
        if (uv_run(&s->loop, UV_RUN_ONCE) == 0 && !*flag)
            return bench_fail(p, PEER_ERR, "the loop ran dry while waiting");
    return PEER_OK;
}

static int conn_fail(peer *p, ffb_conn *c, const char *what) {
    return bench_fail(p, PEER_ERR, "%s: %s", what,
                      ffb_error_message(ffb_conn_error(c)));
}

#define CHECK(p, c, expr)                                                      \
    do {                                                                       \
        if ((expr) < 0)                                                        \
            return conn_fail(p, c, #expr);                                     \
    } while (0)

/* Wait for a queued request and check its status. */
static int wait_op(peer *p, op *o, const char *what) {
    if (wait_for(p, &o->done) != PEER_OK)
        return PEER_ERR;
    if (o->status != 0)
        return bench_fail(p, PEER_ERR, "%s: %s%s%s", what,
                          ffb_err_name(o->status), o->err[0] ? ": " : "",
                          o->err);
    return PEER_OK;
}

#define QUEUE_WAIT(p, c, what, call)                                           \
    do {                                                                       \
        op o_ = {0};                                                           \
        op *o = &o_;                                                           \
        if ((call) < 0)                                                        \
            return conn_fail(p, c, what);                                      \
        if (wait_op(p, o, what) != PEER_OK)                                    \
            return PEER_ERR;                                                   \
    } while (0)

static uint64_t round_trips(const ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

static void conn_options(peer *p, ffb_conn_options *o) {
    uv_peer *s = p->st;
    ffb_conn_options d = FFB_CONN_OPTIONS_INIT;
    *o = d;
    o->dsn = s->dsn;
    o->user = p->cfg->user;
    o->password = p->cfg->password;
    o->charset = "UTF8";
    o->wire_crypt = bench_crypt_level(p->cfg);
    o->wire_crypt_plugins = p->cfg->cipher;
    o->io_timeout_ms = 120000;
    o->connect_timeout_ms = 30000;
}

typedef struct connecting {
    int done;
    int status;
} connecting;

static void on_connected(ffb_conn *c, int status, void *data) {
    connecting *k = data;
    (void)c;
    k->done = 1;
    k->status = status;
}

typedef struct closing {
    int done;
    int status;
    uint64_t rts; /* the connection's round trips, read in the callback */
} closing;

static void on_closed(ffb_conn *c, int status, void *data) {
    closing *k = data;
    k->done = 1;
    k->status = status;
    k->rts = round_trips(c);
}

static int close_conn(peer *p, ffb_conn *c, uint64_t *rts_out) {
    closing k = {0, 0, 0};
    if (ffb_uv_close(c, on_closed, &k) != 0)
        return bench_fail(p, PEER_ERR, "ffb_uv_close refused");
    if (wait_for(p, &k.done) != PEER_OK)
        return PEER_ERR;
    if (rts_out)
        *rts_out = k.rts;
    if (k.status != 0)
        return bench_fail(p, PEER_ERR, "close: %s", ffb_err_name(k.status));
    return PEER_OK;
}

static int open_conn(peer *p, ffb_conn **out) {
    uv_peer *s = p->st;
    ffb_conn_options o;
    conn_options(p, &o);
    ffb_conn *c;
    if (ffb_uv_conn_new(&s->loop, &o, &c) == FFB_E_NOMEM)
        return bench_fail(p, PEER_ERR, "out of memory");
    connecting k = {0, 0};
    if (ffb_uv_connect(c, on_connected, &k) != 0) {
        int rc = conn_fail(p, c, "ffb_uv_connect");
        close_conn(p, c, NULL);
        return rc;
    }
    if (wait_for(p, &k.done) != PEER_OK)
        return PEER_ERR;
    if (k.status != 0) {
        int rc = conn_fail(p, c, "connect");
        close_conn(p, c, NULL);
        return rc;
    }
    *out = c;
    return PEER_OK;
}

static int exec_sql(peer *p, ffb_conn *c, const char *sql) {
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    QUEUE_WAIT(p, c, sql,
               ffb_conn_queue_execute_immediate(c, tx, sql, (size_t)-1, NULL, 0,
                                                on_op, o));
    QUEUE_WAIT(p, c, "commit", ffb_tx_queue_commit(tx, on_op, o));
    ffb_tx_free(tx);
    return PEER_OK;
}

static int uvp_start(peer *p, const bench_cfg *cfg) {
    uv_peer *s = calloc(1, sizeof(*s));
    if (!s)
        return bench_fail(p, PEER_ERR, "out of memory");
    p->st = s;
    s->blob_buf = malloc(BENCH_BLOB_LARGE);
    s->read_buf = malloc(BENCH_BLOB_LARGE);
    if (!s->blob_buf || !s->read_buf)
        return bench_fail(p, PEER_ERR, "out of memory");
    if (uv_loop_init(&s->loop) != 0)
        return bench_fail(p, PEER_ERR, "uv_loop_init failed");
    s->loop_ok = 1;
    snprintf(s->dsn, sizeof(s->dsn), "%s/%d:%s", cfg->host, cfg->port, cfg->db);
    return PEER_OK;
}

static const char *sql_for(int sc) {
    switch (sc) {
    case SC_SELECT_AC:
    case SC_SELECT_TX:
    case SC_SELECT_PIPE:
        return SQL_POINT;
    case SC_SCAN:
        return SQL_SCAN;
    case SC_INSERT_ROWS:
    case SC_INSERT_PIPE:
    case SC_INSERT_BATCH:
        return SQL_INSERT;
    case SC_BLOB_RW:
        return SQL_BLOB_INSERT;
    case SC_BLOB_SCAN:
        return SQL_BLOB_SCAN;
    default:
        return NULL;
    }
}

/* `n` statements of `sql`, prepared in one transaction of their own (all
   queued at once: untimed, as in the blocking peer). */
static int prepare_n(peer *p, ffb_conn *c, ffb_stmt **out, int n,
                     const char *sql) {
    ffb_tx *tx;
    op last = {0};
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        CHECK(p, c, ffb_stmt_new(c, &out[i]));
        CHECK(p, c,
              ffb_stmt_queue_prepare(out[i], tx, sql, (size_t)-1,
                                     i == n - 1 ? on_op : NULL,
                                     i == n - 1 ? &last : NULL));
    }
    if (wait_op(p, &last, sql) != PEER_OK)
        return PEER_ERR;
    /* The others' results, queued without a callback, came first. */
    const ffb_result *res;
    for (int i = 0; i < n - 1; i++)
        if (ffb_conn_next_result(c, &res) != 1 || ffb_result_status(res) != 0)
            return conn_fail(p, c, sql);
    QUEUE_WAIT(p, c, "commit", ffb_tx_queue_commit(tx, on_op, o));
    ffb_tx_free(tx);
    return PEER_OK;
}

static int uvp_setup(peer *p, int sc, int n) {
    uv_peer *s = p->st;
    if (sc == SC_CONNECT)
        return PEER_OK;
    int rc = open_conn(p, &s->conn);
    if (rc != PEER_OK)
        return rc;
    if (sc == SC_SELECT_PIPE) {
        s->pool.v = calloc((size_t)n, sizeof(*s->pool.v));
        if (!s->pool.v)
            return bench_fail(p, PEER_ERR, "out of memory");
        s->pool.n = n;
        return prepare_n(p, s->conn, s->pool.v, n, sql_for(sc));
    }
    if (prepare_n(p, s->conn, &s->stmt, 1, sql_for(sc)) != PEER_OK)
        return PEER_ERR;
    if (sc == SC_BLOB_RW &&
        prepare_n(p, s->conn, &s->stmt2, 1, SQL_BLOB_SELECT) != PEER_OK)
        return PEER_ERR;
    return PEER_OK;
}

/* ---- row checks --------------------------------------------------------- */

static int read_row(peer *p, ffb_stmt *st, int64_t *id_out) {
    int64_t v;
    int scale;
    const char *name;
    size_t len;
    int y, mo, d, h, mi, sec, frac;
    if (ffb_stmt_get_int64(st, 0, id_out) < 0 ||
        ffb_stmt_get_text(st, 1, &name, &len) < 0 ||
        ffb_stmt_get_numeric(st, 2, &v, &scale) < 0 ||
        ffb_stmt_get_timestamp(st, 3, &y, &mo, &d, &h, &mi, &sec, &frac) < 0)
        return bench_fail(p, PEER_ERR, "reading a row failed");
    if (len < 5 || v != *id_out)
        return bench_fail(p, PEER_ERR, "unexpected row %lld",
                          (long long)*id_out);
    return PEER_OK;
}

static void point_more(ffb_conn *c, const ffb_result *res, void *data);

static void point_end(point *pt) {
    pt->done = 1;
    if (pt->then)
        pt->then(pt);
}

/* Read what is buffered; queue a fetch when nothing is. */
static void point_step(point *pt) {
    int r;
    while ((r = ffb_stmt_fetch(pt->st)) == 1) {
        int64_t id;
        if (read_row(pt->p, pt->st, &id) != PEER_OK) {
            pt->failed = 1;
            break;
        }
        if (id != pt->want || ++pt->rows > 1) {
            bench_fail(pt->p, PEER_ERR, "got row %lld (row %d), wanted %lld",
                       (long long)id, pt->rows, (long long)pt->want);
            pt->failed = 1;
            break;
        }
    }
    if (!pt->failed && r == FFB_E_AGAIN) {
        int q = ffb_stmt_queue_fetch(pt->st, point_more, pt);
        if (q == 0)
            return; /* point_more() continues */
        if (q == 1) {
            point_step(pt);
            return;
        }
        r = q;
    }
    if (!pt->failed && r < 0) {
        bench_fail(pt->p, PEER_ERR, "fetch: %s", ffb_err_name(r));
        pt->failed = 1;
    }
    if (!pt->failed && pt->rows != 1) {
        bench_fail(pt->p, PEER_ERR, "no row %lld", (long long)pt->want);
        pt->failed = 1;
    }
    point_end(pt);
}

static void point_more(ffb_conn *c, const ffb_result *res, void *data) {
    point *pt = data;
    (void)c;
    if (ffb_result_status(res) != 0) {
        bench_fail(pt->p, PEER_ERR, "fetch: %s",
                   ffb_result_error(res)
                       ? ffb_error_message(ffb_result_error(res))
                       : ffb_err_name(ffb_result_status(res)));
        pt->failed = 1;
        point_end(pt);
        return;
    }
    point_step(pt);
}

static void point_start(point *pt, peer *p, ffb_stmt *st, int64_t want) {
    pt->p = p;
    pt->st = st;
    pt->want = want;
    pt->rows = 0;
    pt->failed = 0;
    pt->done = 0;
    point_step(pt);
}

/* A point select's row, for the sequential scenarios. */
static int check_point(peer *p, ffb_stmt *st, int64_t want) {
    point pt = {0};
    point_start(&pt, p, st, want);
    if (wait_for(p, &pt.done) != PEER_OK)
        return PEER_ERR;
    return pt.failed ? PEER_ERR : PEER_OK;
}

/* The next row of a cursor, waiting on the loop when none is buffered:
   1, 0 (end) or PEER_ERR. */
static int fetch_wait(peer *p, ffb_conn *c, ffb_stmt *st) {
    for (;;) {
        int r = ffb_stmt_fetch(st);
        if (r != FFB_E_AGAIN)
            return r < 0 ? conn_fail(p, c, "fetch") : r;
        op o = {0};
        int q = ffb_stmt_queue_fetch(st, on_op, &o);
        if (q < 0)
            return conn_fail(p, c, "ffb_stmt_queue_fetch");
        if (q == 0 && wait_op(p, &o, "fetch") != PEER_OK)
            return PEER_ERR;
    }
}

/* ---- scenarios ---------------------------------------------------------- */

static int run_connect(peer *p, int n, run_result *out) {
    out->lib_rts = 0;
    for (int i = 0; i < n; i++) {
        ffb_conn *c;
        uint64_t rts = 0;
        if (open_conn(p, &c) != PEER_OK)
            return PEER_ERR;
        int rc = close_conn(p, c, &rts);
        out->lib_rts += (int64_t)rts;
        if (rc != PEER_OK)
            return rc;
    }
    return PEER_OK;
}

/* Start, execute (with its first fetch) and commit queued together: one
   write, as the blocking peer's one-shot pipeline. */
static int run_select_ac(peer *p, int n) {
    uv_peer *s = p->st;
    ffb_conn *c = s->conn;
    for (int i = 0; i < n; i++) {
        int64_t id = bench_point_id(i);
        ffb_tx *tx;
        op ex = {0}, cm = {0};
        CHECK(p, c, ffb_stmt_bind_int64(s->stmt, 0, id));
        CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
        CHECK(p, c, ffb_stmt_queue_execute(s->stmt, tx, on_op, &ex));
        CHECK(p, c, ffb_tx_queue_commit(tx, on_op, &cm));
        if (wait_op(p, &cm, "commit") != PEER_OK ||
            wait_op(p, &ex, "execute") != PEER_OK)
            return PEER_ERR;
        int rc = check_point(p, s->stmt, id);
        ffb_tx_free(tx);
        if (rc != PEER_OK)
            return rc;
    }
    return PEER_OK;
}

static int run_select_tx(peer *p, int n) {
    uv_peer *s = p->st;
    ffb_conn *c = s->conn;
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        int64_t id = bench_point_id(i);
        CHECK(p, c, ffb_stmt_bind_int64(s->stmt, 0, id));
        QUEUE_WAIT(p, c, "execute",
                   ffb_stmt_queue_execute(s->stmt, tx, on_op, o));
        if (check_point(p, s->stmt, id) != PEER_OK)
            return PEER_ERR;
    }
    QUEUE_WAIT(p, c, "commit", ffb_tx_queue_commit(tx, on_op, o));
    ffb_tx_free(tx);
    return PEER_OK;
}

/* The pipelined runs: results come in queue order, so the k-th callback
   answers the k-th execution. */
typedef struct pipe_run {
    peer *p;
    int done;
    int failed;
    point pt; /* the select whose rows are being read */
} pipe_run;

static void pipe_fail(pipe_run *r, const char *what, const ffb_result *res) {
    if (r->failed++)
        return;
    const ffb_error *e = ffb_result_error(res);
    bench_fail(r->p, PEER_ERR, "execution %d: %s%s%s", r->done, what,
               e ? ": " : "", e ? ffb_error_message(e) : "");
}

static void on_point(ffb_conn *c, const ffb_result *res, void *data) {
    pipe_run *r = data;
    uv_peer *s = r->p->st;
    int k = r->done;
    (void)c;
    if (k >= s->pool.n || ffb_result_stmt(res) != s->pool.v[k])
        pipe_fail(r, "answer out of order", res);
    else if (ffb_result_status(res) != 0)
        pipe_fail(r, "failed", res);
    else if (!r->failed) {
        /* The row came with the execution: read at once, no wait. */
        point_start(&r->pt, r->p, s->pool.v[k], bench_point_id(k));
        if (!r->pt.done || r->pt.failed)
            r->failed++; /* p->err says why, or a fetch was needed */
        if (!r->pt.done)
            bench_fail(r->p, PEER_ERR, "select %d: row not buffered", k);
    }
    r->done++;
}

/* Queue the commit behind the executions and wait for it. */
static int finish_pipe(peer *p, ffb_conn *c, ffb_tx *tx, pipe_run *run, int n) {
    op cm = {0};
    CHECK(p, c, ffb_tx_queue_commit(tx, on_op, &cm));
    if (wait_for(p, &cm.done) != PEER_OK)
        return PEER_ERR;
    ffb_tx_free(tx);
    if (run->failed)
        return PEER_ERR;
    if (cm.status != 0)
        return bench_fail(p, PEER_ERR, "commit: %s", cm.err);
    if (run->done != n)
        return bench_fail(p, PEER_ERR, "%d of %d answers", run->done, n);
    return PEER_OK;
}

static int run_select_pipe(peer *p, int n) {
    uv_peer *s = p->st;
    ffb_conn *c = s->conn;
    pipe_run run;
    memset(&run, 0, sizeof(run));
    run.p = p;
    ffb_tx *tx;
    if (n > s->pool.n)
        return bench_fail(p, PEER_ERR, "%d statements for %d selects",
                          s->pool.n, n);
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        CHECK(p, c, ffb_stmt_bind_int64(s->pool.v[i], 0, bench_point_id(i)));
        CHECK(p, c, ffb_stmt_queue_execute(s->pool.v[i], tx, on_point, &run));
    }
    return finish_pipe(p, c, tx, &run, n);
}

static int run_scan(peer *p, int n) {
    uv_peer *s = p->st;
    ffb_conn *c = s->conn;
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        QUEUE_WAIT(p, c, "execute",
                   ffb_stmt_queue_execute(s->stmt, tx, on_op, o));
        int64_t sum = 0, id;
        int rows = 0, r;
        while ((r = fetch_wait(p, c, s->stmt)) == 1) {
            if (read_row(p, s->stmt, &id) != PEER_OK)
                return PEER_ERR;
            sum += id;
            rows++;
        }
        if (r < 0)
            return PEER_ERR;
        if (rows != BENCH_ROWS ||
            sum != (int64_t)BENCH_ROWS * (BENCH_ROWS + 1) / 2)
            return bench_fail(p, PEER_ERR, "scan: %d rows", rows);
    }
    QUEUE_WAIT(p, c, "commit", ffb_tx_queue_commit(tx, on_op, o));
    ffb_tx_free(tx);
    return PEER_OK;
}

static int bind_ins_row(peer *p, ffb_stmt *st, int i) {
    uv_peer *s = p->st;
    char name[32];
    snprintf(name, sizeof(name), "row %d", i);
    CHECK(p, s->conn, ffb_stmt_bind_int64(st, 0, i + 1));
    CHECK(p, s->conn, ffb_stmt_bind_text(st, 1, name, (size_t)-1));
    CHECK(p, s->conn, ffb_stmt_bind_numeric(st, 2, bench_ins_amount(i), -2));
    return PEER_OK;
}

static int run_insert_rows(peer *p, int n) {
    uv_peer *s = p->st;
    ffb_conn *c = s->conn;
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        op ex = {0};
        if (bind_ins_row(p, s->stmt, i) != PEER_OK)
            return PEER_ERR;
        CHECK(p, c, ffb_stmt_queue_execute(s->stmt, tx, on_op, &ex));
        if (wait_op(p, &ex, "insert") != PEER_OK)
            return PEER_ERR;
        if (ex.rows != 1)
            return bench_fail(p, PEER_ERR, "insert %d: %lld rows", i,
                              (long long)ex.rows);
    }
    QUEUE_WAIT(p, c, "commit", ffb_tx_queue_commit(tx, on_op, o));
    ffb_tx_free(tx);
    return PEER_OK;
}

static void on_insert(ffb_conn *c, const ffb_result *res, void *data) {
    pipe_run *r = data;
    uv_peer *s = r->p->st;
    int k = r->done;
    (void)c;
    if (ffb_result_stmt(res) != s->stmt || ffb_result_data(res) != r)
        pipe_fail(r, "answer of another request", res);
    else if (ffb_result_status(res) != 0)
        pipe_fail(r, "failed", res);
    else if (ffb_result_rows_affected(res) != 1 && !r->failed++)
        bench_fail(r->p, PEER_ERR, "insert %d: %lld rows affected", k,
                   (long long)ffb_result_rows_affected(res));
    r->done++;
}

static int run_insert_pipe(peer *p, int n) {
    uv_peer *s = p->st;
    ffb_conn *c = s->conn;
    pipe_run run;
    memset(&run, 0, sizeof(run));
    run.p = p;
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        if (bind_ins_row(p, s->stmt, i) != PEER_OK)
            return PEER_ERR;
        CHECK(p, c, ffb_stmt_queue_execute(s->stmt, tx, on_insert, &run));
    }
    return finish_pipe(p, c, tx, &run, n);
}

static int run_insert_batch(peer *p, int n) {
    uv_peer *s = p->st;
    ffb_conn *c = s->conn;
    ffb_tx *tx;
    ffb_batch *b;
    ffb_batch_options o = FFB_BATCH_OPTIONS_INIT;
    o.commit = 1;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    CHECK(p, c, ffb_batch_new(s->stmt, &o, &b));
    for (int i = 0; i < n; i++) {
        if (bind_ins_row(p, s->stmt, i) != PEER_OK)
            return PEER_ERR;
        CHECK(p, c, ffb_batch_add(b));
    }
    QUEUE_WAIT(p, c, "batch", ffb_batch_queue_execute(b, tx, on_op, o));
    if (ffb_batch_row_count(b) != (size_t)n)
        return bench_fail(p, PEER_ERR, "batch: %zu rows",
                          ffb_batch_row_count(b));
    for (int i = 0; i < n; i++)
        if (ffb_batch_row_status(b, (size_t)i) < 0)
            return bench_fail(p, PEER_ERR, "batch row %d failed", i);
    ffb_batch_free(b);
    if (ffb_tx_is_active(tx))
        QUEUE_WAIT(p, c, "commit", ffb_tx_queue_commit(tx, on_op, o));
    ffb_tx_free(tx);
    return PEER_OK;
}

static int check_blob(peer *p, const uint8_t *data, size_t len, int64_t key,
                      size_t want) {
    if (len != want || data[0] != bench_blob_byte(key, 0) ||
        data[len - 1] != bench_blob_byte(key, len - 1))
        return bench_fail(p, PEER_ERR, "blob %lld: %zu bytes, wrong content",
                          (long long)key, len);
    return PEER_OK;
}

/* Read a whole blob into s->read_buf, waiting on the loop for each part
   that is not buffered yet. */
static int read_blob(peer *p, ffb_conn *c, ffb_blob *b, size_t *len) {
    uv_peer *s = p->st;
    size_t got = 0;
    for (;;) {
        size_t n = 0;
        if (got == BENCH_BLOB_LARGE) {
            uint8_t extra;
            int r = ffb_blob_read(b, &extra, 1, &n);
            if (r == 0 && n == 0)
                break;
            if (r == 0)
                return bench_fail(p, PEER_ERR, "blob longer than written");
            if (r != FFB_E_AGAIN)
                return conn_fail(p, c, "blob read");
        } else {
            int r =
                ffb_blob_read(b, s->read_buf + got, BENCH_BLOB_LARGE - got, &n);
            if (r == 0 && n == 0)
                break;
            if (r == 0) {
                got += n;
                continue;
            }
            if (r != FFB_E_AGAIN)
                return conn_fail(p, c, "blob read");
        }
        op o = {0};
        int q = ffb_blob_queue_read(b, on_op, &o);
        if (q < 0)
            return conn_fail(p, c, "ffb_blob_queue_read");
        if (q == 0 && wait_op(p, &o, "blob read") != PEER_OK)
            return PEER_ERR;
    }
    *len = got;
    return PEER_OK;
}

static int run_blob_rw(peer *p, int n) {
    uv_peer *s = p->st;
    ffb_conn *c = s->conn;
    for (int i = 0; i < n; i++) {
        int64_t key = i + 1;
        for (size_t k = 0; k < BENCH_BLOB_LARGE; k++)
            s->blob_buf[k] = bench_blob_byte(key, k);
        ffb_tx *tx;
        ffb_blob *b;
        uint8_t id[8];
        size_t len;
        CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
        CHECK(p, c, ffb_blob_create(c, tx, NULL, &b));
        CHECK(p, c, ffb_blob_write(b, s->blob_buf, BENCH_BLOB_LARGE));
        QUEUE_WAIT(p, c, "blob close", ffb_blob_queue_close(b, on_op, o));
        CHECK(p, c, ffb_blob_get_id(b, id));
        ffb_blob_free(b);
        CHECK(p, c, ffb_stmt_bind_int64(s->stmt, 0, key));
        CHECK(p, c, ffb_stmt_bind_blob_id(s->stmt, 1, id));
        QUEUE_WAIT(p, c, "insert",
                   ffb_stmt_queue_execute(s->stmt, tx, on_op, o));
        CHECK(p, c, ffb_stmt_bind_int64(s->stmt2, 0, key));
        QUEUE_WAIT(p, c, "select",
                   ffb_stmt_queue_execute(s->stmt2, tx, on_op, o));
        if (fetch_wait(p, c, s->stmt2) != 1)
            return conn_fail(p, c, "blob row");
        CHECK(p, c, ffb_stmt_get_blob_id(s->stmt2, 0, id));
        if (fetch_wait(p, c, s->stmt2) != 0)
            return conn_fail(p, c, "blob row end");
        CHECK(p, c, ffb_blob_open(c, tx, id, 0, &b));
        int rc = read_blob(p, c, b, &len);
        ffb_blob_free(b);
        if (rc == PEER_OK)
            rc = check_blob(p, s->read_buf, len, key, BENCH_BLOB_LARGE);
        if (rc != PEER_OK)
            return rc;
        QUEUE_WAIT(p, c, "commit", ffb_tx_queue_commit(tx, on_op, o));
        ffb_tx_free(tx);
    }
    return PEER_OK;
}

/* Open every blob as its row arrives (queued), then read them. */
static int run_blob_scan(peer *p, int n) {
    uv_peer *s = p->st;
    ffb_conn *c = s->conn;
    ffb_blob **blobs = calloc((size_t)n, sizeof(*blobs));
    int64_t *keys = calloc((size_t)n, sizeof(*keys));
    int rows = 0, r = 0, rc = PEER_OK;
    ffb_tx *tx = NULL;
    op ex = {0};
    if (!blobs || !keys) {
        rc = bench_fail(p, PEER_ERR, "out of memory");
        goto done;
    }
    if (ffb_tx_begin(c, NULL, &tx) < 0 ||
        ffb_stmt_bind_int64(s->stmt, 0, n) < 0 ||
        ffb_stmt_queue_execute(s->stmt, tx, on_op, &ex) < 0) {
        rc = conn_fail(p, c, "blob scan");
        goto done;
    }
    if ((rc = wait_op(p, &ex, "blob scan")) != PEER_OK)
        goto done;
    while (rows < n && (r = fetch_wait(p, c, s->stmt)) == 1) {
        uint8_t id[8];
        if (ffb_stmt_get_int64(s->stmt, 0, &keys[rows]) < 0 ||
            ffb_stmt_get_blob_id(s->stmt, 1, id) < 0 ||
            ffb_blob_open(c, tx, id, 0, &blobs[rows]) < 0) {
            rc = conn_fail(p, c, "blob open");
            goto done;
        }
        rows++;
    }
    if (r == 1 && (r = fetch_wait(p, c, s->stmt)) == 1)
        r = bench_fail(p, PEER_ERR, "blob scan: more than %d rows", n);
    if (r < 0 || rows != n) {
        rc = r < 0 ? PEER_ERR
                   : bench_fail(p, PEER_ERR, "blob scan: %d rows", rows);
        goto done;
    }
    for (int i = 0; i < rows && rc == PEER_OK; i++) {
        size_t len;
        rc = read_blob(p, c, blobs[i], &len);
        if (rc == PEER_OK)
            rc = check_blob(p, s->read_buf, len, keys[i], BENCH_BLOB_SMALL);
    }
    if (rc == PEER_OK) {
        op cm = {0};
        if (ffb_tx_queue_commit(tx, on_op, &cm) < 0)
            rc = conn_fail(p, c, "commit");
        else
            rc = wait_op(p, &cm, "commit");
    }
done:
    for (int i = 0; blobs && i < rows; i++)
        ffb_blob_free(blobs[i]);
    free(blobs);
    free(keys);
    ffb_tx_free(tx);
    return rc;
}

static int uvp_run(peer *p, int sc, int n, run_result *out) {
    uv_peer *s = p->st;
    uint64_t before = s->conn ? round_trips(s->conn) : 0;
    int rc;
    out->lib_rts = -1;
    uint64_t t0 = bench_now_ns();
    switch (sc) {
    case SC_CONNECT:
        rc = run_connect(p, n, out);
        break;
    case SC_SELECT_AC:
        rc = run_select_ac(p, n);
        break;
    case SC_SELECT_TX:
        rc = run_select_tx(p, n);
        break;
    case SC_SELECT_PIPE:
        rc = run_select_pipe(p, n);
        break;
    case SC_SCAN:
        rc = run_scan(p, n);
        break;
    case SC_INSERT_ROWS:
        rc = run_insert_rows(p, n);
        break;
    case SC_INSERT_PIPE:
        rc = run_insert_pipe(p, n);
        break;
    case SC_INSERT_BATCH:
        rc = run_insert_batch(p, n);
        break;
    case SC_BLOB_RW:
        rc = run_blob_rw(p, n);
        break;
    case SC_BLOB_SCAN:
        rc = run_blob_scan(p, n);
        break;
    default:
        return bench_fail(p, PEER_ERR, "unknown scenario");
    }
    out->ns = bench_now_ns() - t0;
    if (s->conn)
        out->lib_rts = (int64_t)(round_trips(s->conn) - before);
    return rc;
}

static int uvp_teardown(peer *p, int sc) {
    uv_peer *s = p->st;
    int rc = PEER_OK;
    if (s->conn && ffb_conn_is_attached(s->conn)) {
        if (sc == SC_INSERT_ROWS || sc == SC_INSERT_PIPE ||
            sc == SC_INSERT_BATCH)
            rc = exec_sql(p, s->conn, SQL_CLEAN_INS);
        if (sc == SC_BLOB_RW)
            rc = exec_sql(p, s->conn, SQL_CLEAN_BLOBW);
    }
    /* The statements go with the connection (ffb_uv_close). */
    s->stmt = s->stmt2 = NULL;
    free(s->pool.v);
    s->pool.v = NULL;
    s->pool.n = 0;
    if (s->conn) {
        ffb_conn *c = s->conn;
        s->conn = NULL;
        if (close_conn(p, c, NULL) != PEER_OK && rc == PEER_OK)
            rc = PEER_ERR;
    }
    return rc;
}

static int uvp_info(peer *p, char *buf, size_t size) {
    ffb_conn *c;
    if (open_conn(p, &c) != PEER_OK)
        return PEER_ERR;
    snprintf(buf, size,
             "libfastfb %s on libuv %s (libfastfb_uv), protocol P%d, "
             "wire crypt %s%s",
             ffb_version(), uv_version_string(), ffb_conn_protocol(c),
             *ffb_conn_wire_crypt(c) ? ffb_conn_wire_crypt(c) : "off",
             ffb_conn_is_compressed(c) ? ", compressed" : "");
    return close_conn(p, c, NULL);
}

/* ---- the concurrency scenario -------------------------------------------- */

/* A pool connection and the point select prepared on it in setup. */
typedef struct conc_slot {
    ffb_conn *conn;
    ffb_stmt *stmt;
    uint64_t rts0;
} conc_slot;

typedef struct conc_client {
    peer *p;
    peer own; /* its own error text */
    int index;
    int from_outside; /* this acquire was asked outside the loop's callbacks */
    uint64_t rng;
    uint64_t t0;
    ffb_conn *conn;
    ffb_tx *tx;
    op ex;
    point pt;
    lat_log lat;
    struct conc_run *run;
} conc_client;

typedef struct conc_run {
    peer *p;
    uint64_t end_ns;
    int active;
    int all_done;
    int failed;
    conc_client *clients;
} conc_run;

static conc_slot *slot_of(uv_peer *s, const ffb_conn *c) {
    for (int i = 0; i < s->nslots; i++)
        if (s->slots[i].conn == c)
            return &s->slots[i];
    return NULL;
}

/* Setup: acquire all N connections at once, so the pool opens N, and
   prepare the point select on each. */
typedef struct conc_prep {
    peer *p;
    int acquired;
    int prepared;
    int failed;
} conc_prep;

typedef struct prep_slot {
    conc_prep *cp;
    conc_slot *slot;
    ffb_tx *tx;
    op pr;
    op cm;
} prep_slot;

static void prep_committed(ffb_conn *c, const ffb_result *res, void *data) {
    prep_slot *ps = data;
    (void)c;
    on_op(c, res, &ps->cm);
    if (ps->pr.status != 0 || ps->cm.status != 0) {
        if (!ps->cp->failed++)
            bench_fail(ps->cp->p, PEER_ERR, "prepare on a pool connection: %s",
                       ps->pr.status ? ps->pr.err : ps->cm.err);
    }
    ffb_tx_free(ps->tx);
    ps->tx = NULL;
    ps->cp->prepared++;
}

static void prep_acquired(ffb_uv_pool *pool, ffb_conn *c, int status,
                          void *data) {
    prep_slot *ps = data;
    uv_peer *s = ps->cp->p->st;
    (void)pool;
    if (status != 0) {
        ffb_pool_error_info e;
        memset(&e, 0, sizeof(e));
        ffb_uv_pool_error(s->cpool, &e, sizeof(e));
        if (!ps->cp->failed++)
            bench_fail(ps->cp->p, PEER_ERR, "acquire: %s: %s",
                       ffb_err_name(status), e.message);
        ps->cp->acquired++;
        ps->cp->prepared++;
        return;
    }
    ps->slot->conn = c;
    ps->cp->acquired++;
    if (ffb_tx_begin(c, NULL, &ps->tx) < 0 ||
        ffb_stmt_new(c, &ps->slot->stmt) < 0 ||
        ffb_stmt_queue_prepare(ps->slot->stmt, ps->tx, SQL_POINT, (size_t)-1,
                               on_op, &ps->pr) < 0 ||
        ffb_tx_queue_commit(ps->tx, prep_committed, ps) < 0) {
        if (!ps->cp->failed++)
            conn_fail(ps->cp->p, c, "prepare on a pool connection");
        ps->cp->prepared++;
    }
}

static int uvp_conc_setup(peer *p, int clients) {
    uv_peer *s = p->st;
    ffb_conn_options o;
    conn_options(p, &o);
    ffb_pool_options po = FFB_POOL_OPTIONS_INIT;
    po.conn = &o;
    po.min_size = (size_t)clients;
    po.max_size = (size_t)clients;
    po.acquire_timeout_ms = 60000;
    po.validate_after_ms = -1; /* no pings in the timed part */
    po.idle_timeout_ms = -1;
    if (ffb_uv_pool_new(&s->loop, &po, &s->cpool) != 0)
        return bench_fail(p, PEER_ERR, "ffb_uv_pool_new failed");
    s->slots = calloc((size_t)clients, sizeof(*s->slots));
    prep_slot *ps = calloc((size_t)clients, sizeof(*ps));
    if (!s->slots || !ps) {
        free(ps);
        return bench_fail(p, PEER_ERR, "out of memory");
    }
    s->nslots = clients;
    conc_prep cp;
    memset(&cp, 0, sizeof(cp));
    cp.p = p;
    int rc = PEER_OK;
    for (int i = 0; i < clients; i++) {
        ps[i].cp = &cp;
        ps[i].slot = &s->slots[i];
        if (ffb_uv_pool_acquire(s->cpool, -1, prep_acquired, &ps[i]) != 0) {
            rc = bench_fail(p, PEER_ERR, "ffb_uv_pool_acquire refused");
            cp.prepared += clients - i;
            cp.acquired += clients - i;
            break;
        }
    }
    /* Bounded: the acquire timeout and the connections' I/O timeout. */
    while (cp.prepared < clients)
        if (uv_run(&s->loop, UV_RUN_ONCE) == 0 && cp.prepared < clients) {
            rc = bench_fail(p, PEER_ERR, "the loop ran dry in setup");
            break;
        }
    if (cp.failed)
        rc = PEER_ERR;
    for (int i = 0; i < clients; i++)
        if (s->slots[i].conn)
            ffb_uv_pool_release(s->cpool, s->slots[i].conn);
    free(ps);
    /* Let the releases' resets (nothing to undo: no round trip) finish. */
    uv_run(&s->loop, UV_RUN_NOWAIT);
    return rc;
}

static void client_next(conc_client *cl);

static void client_fail(conc_client *cl, const char *fmt, const char *what) {
    conc_run *run = cl->run;
    if (!run->failed++)
        bench_fail(run->p, PEER_ERR, fmt, what);
}

static void client_stop(conc_client *cl) {
    if (--cl->run->active == 0)
        cl->run->all_done = 1;
}

/* The row is checked: give the connection back, record, go again. */
static void client_checked(point *pt) {
    conc_client *cl = pt->data;
    conc_run *run = cl->run;
    uv_peer *s = run->p->st;
    uint64_t now = bench_now_ns();
    if (pt->failed)
        client_fail(cl, "%s", cl->own.err);
    ffb_tx_free(cl->tx);
    cl->tx = NULL;
    ffb_uv_pool_release(s->cpool, cl->conn);
    cl->conn = NULL;
    if (!pt->failed && bench_lat_push(&cl->lat, now - cl->t0) != 0)
        client_fail(cl, "%s", "out of memory");
    if (run->failed || now >= run->end_ns) {
        client_stop(cl);
        return;
    }
    client_next(cl);
}

static void client_committed(ffb_conn *c, const ffb_result *res, void *data) {
    conc_client *cl = data;
    op cm = {0};
    on_op(c, res, &cm);
    cl->pt.then = client_checked;
    cl->pt.data = cl;
    if (cl->ex.status != 0 || cm.status != 0) {
        client_fail(cl, "point select: %s",
                    cl->ex.status ? cl->ex.err : cm.err);
        cl->pt.failed = 1;
        client_checked(&cl->pt);
        return;
    }
    /* The row came with the execution. */
    point_start(&cl->pt, &cl->own, cl->pt.st, cl->pt.want);
}

static void client_acquired(ffb_uv_pool *pool, ffb_conn *c, int status,
                            void *data) {
    conc_client *cl = data;
    uv_peer *s = cl->run->p->st;
    (void)pool;
    if (status != 0) {
        client_fail(cl, "acquire: %s", ffb_err_name(status));
        client_stop(cl);
        return;
    }
    cl->conn = c;
    conc_slot *slot = slot_of(s, c);
    if (!slot) {
        client_fail(cl, "%s",
                    "the pool handed out a connection not opened "
                    "in setup (one was replaced)");
        ffb_uv_pool_release(s->cpool, c);
        client_stop(cl);
        return;
    }
    int64_t id = cl->pt.want;
    memset(&cl->ex, 0, sizeof(cl->ex));
    cl->pt.st = slot->stmt;
    if (ffb_stmt_bind_int64(slot->stmt, 0, id) < 0 ||
        ffb_tx_begin(c, NULL, &cl->tx) < 0 ||
        ffb_stmt_queue_execute(slot->stmt, cl->tx, on_op, &cl->ex) < 0 ||
        ffb_tx_queue_commit(cl->tx, client_committed, cl) < 0) {
        client_fail(cl, "queue: %s", ffb_error_message(ffb_conn_error(c)));
        ffb_tx_free(cl->tx);
        cl->tx = NULL;
        ffb_uv_pool_release(s->cpool, c);
        client_stop(cl);
    }
    if (cl->from_outside)
    cl->from_outside = 0;
}

/* One query: acquire, (start, execute, commit), check, release. */
static void client_next(conc_client *cl) {
    uv_peer *s = cl->run->p->st;
    cl->t0 = bench_now_ns();
    cl->pt.want = bench_rand_id(&cl->rng);
    if (ffb_uv_pool_acquire(s->cpool, -1, client_acquired, cl) != 0) {
        client_fail(cl, "%s", "ffb_uv_pool_acquire refused");
        client_stop(cl);
    }
}

static int uvp_conc_run(peer *p, int clients, int ms, conc_result *out) {
    uv_peer *s = p->st;
    conc_run run;
    memset(&run, 0, sizeof(run));
    run.p = p;
    run.clients = calloc((size_t)clients, sizeof(*run.clients));
    if (!run.clients)
        return bench_fail(p, PEER_ERR, "out of memory");
    for (int i = 0; i < s->nslots; i++)
        s->slots[i].rts0 = round_trips(s->slots[i].conn);
    uint64_t t0 = bench_now_ns();
    run.end_ns = t0 + (uint64_t)ms * 1000000u;
    run.active = clients;
    for (int i = 0; i < clients; i++) {
        conc_client *cl = &run.clients[i];
        cl->p = p;
        cl->own = *p;
        cl->own.err[0] = '\0';
        cl->index = i;
        cl->rng = bench_rand_seed(i);
        cl->run = &run;
        cl->from_outside = 1;
        client_next(cl);
    }
    int rc = wait_for(p, &run.all_done);
    out->ns = bench_now_ns() - t0;
    if (run.failed)
        rc = PEER_ERR;
    lat_log all = {0};
    for (int i = 0; i < clients; i++) {
        if (bench_lat_merge(&all, &run.clients[i].lat) != 0 && rc == PEER_OK)
            rc = bench_fail(p, PEER_ERR, "out of memory");
        bench_lat_free(&run.clients[i].lat);
    }
    free(run.clients);
    bench_conc_latencies(out, &all);
    out->lib_rts = 0;
    for (int i = 0; i < s->nslots; i++)
        out->lib_rts +=
            (int64_t)(round_trips(s->slots[i].conn) - s->slots[i].rts0);
    return rc;
}

static void pool_closed(ffb_uv_pool *pool, void *data) {
    (void)pool;
    *(int *)data = 1;
}

static int uvp_conc_teardown(peer *p) {
    uv_peer *s = p->st;
    int rc = PEER_OK;
    if (s->cpool) {
        int done = 0;
        /* The statements go with the connections. */
        if (ffb_uv_pool_close(s->cpool, pool_closed, &done) == 0)
            rc = wait_for(p, &done);
        s->cpool = NULL;
    }
    free(s->slots);
    s->slots = NULL;
    s->nslots = 0;
    return rc;
}

static void uvp_stop(peer *p) {
    uv_peer *s = p->st;
    if (!s)
        return;
    if (s->loop_ok) {
        uvp_teardown(p, -1);
        uvp_conc_teardown(p);
        /* Everything is closed; let the handles' close callbacks run, but
           never wait for ever on a handle left behind. */
        for (int i = 0; i < 2000 && uv_run(&s->loop, UV_RUN_NOWAIT); i++) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        if (uv_loop_close(&s->loop) != 0)
            fprintf(stderr, "libfastfb async: a libuv handle was left "
                            "open at the end\n");
    }
    free(s->blob_buf);
    free(s->read_buf);
    free(s);
    p->st = NULL;
}

const peer_ops bench_uv_ops = {
    .start = uvp_start,
    .setup = uvp_setup,
    .run = uvp_run,
    .teardown = uvp_teardown,
    .info = uvp_info,
    .stop = uvp_stop,
    .conc_setup = uvp_conc_setup,
    .conc_run = uvp_conc_run,
    .conc_teardown = uvp_conc_teardown,
};
