/*
 * The libfastfb peer: the public API only (fastfb.h), used the way the
 * documentation recommends - prepared statements, the one-shot pipeline
 * for auto-commit statements, blobs opened for a whole fetched batch
 * before reading (docs/blobs.md), batches with the commit in the same
 * write.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fastfb.h>

#include "bench.h"

typedef struct ffb_peer {
    ffb_conn *conn;
    ffb_stmt *stmt;
    ffb_stmt *stmt2;
    ffb_stmt **pool; /* the pipelined scenarios: one statement per execution */
    int npool;
    unsigned char *blob_buf; /* BENCH_BLOB_LARGE bytes */
    char dsn[600];
} ffb_peer;

static int conn_fail(peer *p, ffb_conn *c, const char *what) {
    return bench_fail(p, PEER_ERR, "%s: %s", what,
                      ffb_error_message(ffb_conn_error(c)));
}

#define CHECK(p, c, expr)                                                      \
    do {                                                                       \
        if ((expr) < 0)                                                        \
            return conn_fail(p, c, #expr);                                     \
    } while (0)

static uint64_t round_trips(const ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

static int open_conn(peer *p, ffb_conn **out) {
    ffb_peer *s = p->st;
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = s->dsn;
    o.user = p->cfg->user;
    o.password = p->cfg->password;
    o.charset = "UTF8";
    o.wire_crypt = bench_crypt_level(p->cfg);
    o.wire_crypt_plugins = p->cfg->cipher;
    o.io_timeout_ms = 120000;
    o.connect_timeout_ms = 30000;
    ffb_conn *c;
    if (ffb_conn_new(&o, &c) != 0)
        return bench_fail(p, PEER_ERR, "ffb_conn_new failed");
    if (ffb_conn_connect(c) != 0) {
        int rc = conn_fail(p, c, "connect");
        ffb_conn_free(c);
        return rc;
    }
    *out = c;
    return PEER_OK;
}

static int exec_sql(peer *p, ffb_conn *c, const char *sql) {
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    int rc = ffb_conn_execute_immediate(c, tx, sql, (size_t)-1);
    if (rc == 0)
        rc = ffb_tx_commit(tx);
    ffb_tx_free(tx);
    return rc < 0 ? conn_fail(p, c, sql) : PEER_OK;
}

static int ffb_start(peer *p, const bench_cfg *cfg) {
    ffb_peer *s = calloc(1, sizeof(*s));
    if (!s)
        return bench_fail(p, PEER_ERR, "out of memory");
    s->blob_buf = malloc(BENCH_BLOB_LARGE);
    if (!s->blob_buf) {
        free(s);
        return bench_fail(p, PEER_ERR, "out of memory");
    }
    snprintf(s->dsn, sizeof(s->dsn), "%s/%d:%s", cfg->host, cfg->port, cfg->db);
    p->st = s;
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

/* Prepared in a transaction of its own: Firebird 3 needs one, and the
   statement stays prepared after the commit. */
static int prepare(peer *p, ffb_stmt **out, const char *sql) {
    ffb_peer *s = p->st;
    ffb_tx *tx;
    CHECK(p, s->conn, ffb_stmt_new(s->conn, out));
    CHECK(p, s->conn, ffb_tx_begin(s->conn, NULL, &tx));
    int rc = ffb_stmt_prepare(*out, tx, sql, (size_t)-1);
    if (rc == 0)
        rc = ffb_tx_commit(tx);
    ffb_tx_free(tx);
    return rc < 0 ? conn_fail(p, s->conn, sql) : PEER_OK;
}

/*
 * The pipelined selects queue n executions before reading any answer. A
 * statement has one set of row buffers, so a SELECT runs one execution at
 * a time (queueing it again before its answer is refused): each queued
 * select gets a statement of its own, n statements with the same text,
 * prepared here, untimed, in one transaction (n + 1 round trips). The
 * pipelined inserts need only one statement: each queued DML execution
 * keeps its own row count.
 */
static int prepare_pool(peer *p, const char *sql, int n) {
    ffb_peer *s = p->st;
    ffb_conn *c = s->conn;
    s->pool = calloc((size_t)n, sizeof(*s->pool));
    if (!s->pool)
        return bench_fail(p, PEER_ERR, "out of memory");
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        rc = ffb_stmt_new(c, &s->pool[i]);
        if (rc == 0) {
            s->npool++;
            rc = ffb_stmt_prepare(s->pool[i], tx, sql, (size_t)-1);
        }
    }
    if (rc == 0)
        rc = ffb_tx_commit(tx);
    ffb_tx_free(tx);
    return rc < 0 ? conn_fail(p, c, sql) : PEER_OK;
}

static int ffb_setup(peer *p, int sc, int n) {
    ffb_peer *s = p->st;
    if (sc == SC_CONNECT)
        return PEER_OK;
    int rc = open_conn(p, &s->conn);
    if (rc != PEER_OK)
        return rc;
    if (sc == SC_SELECT_PIPE)
        return prepare_pool(p, sql_for(sc), n);
    if (prepare(p, &s->stmt, sql_for(sc)) != PEER_OK)
        return PEER_ERR;
    if (sc == SC_BLOB_RW && prepare(p, &s->stmt2, SQL_BLOB_SELECT) != PEER_OK)
        return PEER_ERR;
    return PEER_OK;
}

/* Read the current row the way an application would. */
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

/* Fetch the single row of a point select. */
static int fetch_point(peer *p, ffb_conn *c, ffb_stmt *st, int64_t want) {
    int64_t id;
    int r = ffb_stmt_fetch(st);
    if (r != 1)
        return r < 0 ? conn_fail(p, c, "fetch")
                     : bench_fail(p, PEER_ERR, "no row %lld", (long long)want);
    if (read_row(p, st, &id) != PEER_OK)
        return PEER_ERR;
    if (id != want)
        return bench_fail(p, PEER_ERR, "got row %lld, wanted %lld",
                          (long long)id, (long long)want);
    r = ffb_stmt_fetch(st);
    if (r != 0)
        return r < 0 ? conn_fail(p, c, "fetch")
                     : bench_fail(p, PEER_ERR, "more than one row");
    return PEER_OK;
}

static int run_connect(peer *p, int n, run_result *out) {
    out->lib_rts = 0;
    for (int i = 0; i < n; i++) {
        ffb_conn *c;
        if (open_conn(p, &c) != PEER_OK)
            return PEER_ERR;
        int rc = ffb_conn_close(c);
        out->lib_rts += (int64_t)round_trips(c);
        if (rc < 0)
            rc = conn_fail(p, c, "close");
        ffb_conn_free(c);
        if (rc < 0)
            return PEER_ERR;
    }
    return PEER_OK;
}

/* One auto-commit point select: start, execute, fetch and commit travel
   in one write. */
static int point_select_ac(peer *p, ffb_conn *c, ffb_stmt *st, int64_t id) {
    ffb_tx *tx;
    const ffb_result *res;
    CHECK(p, c, ffb_stmt_bind_int64(st, 0, id));
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    CHECK(p, c, ffb_stmt_queue_execute(st, tx, NULL, NULL));
    CHECK(p, c, ffb_tx_queue_commit(tx, NULL, NULL));
    CHECK(p, c, ffb_conn_flush(c));
    for (int k = 0; k < 2; k++) {
        if (ffb_conn_next_result(c, &res) != 1)
            return conn_fail(p, c, "next_result");
        if (ffb_result_status(res) != 0)
            return bench_fail(p, PEER_ERR, "%s",
                              ffb_error_message(ffb_result_error(res)));
    }
    int rc = fetch_point(p, c, st, id);
    ffb_tx_free(tx);
    return rc;
}

static int run_select_ac(peer *p, int n) {
    ffb_peer *s = p->st;
    for (int i = 0; i < n; i++)
        if (point_select_ac(p, s->conn, s->stmt, bench_point_id(i)) != PEER_OK)
            return PEER_ERR;
    return PEER_OK;
}

static int run_select_tx(peer *p, int n) {
    ffb_peer *s = p->st;
    ffb_conn *c = s->conn;
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        int64_t id = bench_point_id(i);
        CHECK(p, c, ffb_stmt_bind_int64(s->stmt, 0, id));
        CHECK(p, c, ffb_stmt_execute(s->stmt, tx));
        if (fetch_point(p, c, s->stmt, id) != PEER_OK)
            return PEER_ERR;
    }
    CHECK(p, c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    return PEER_OK;
}

static int run_scan(peer *p, int n) {
    ffb_peer *s = p->st;
    ffb_conn *c = s->conn;
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        CHECK(p, c, ffb_stmt_execute(s->stmt, tx));
        int64_t sum = 0, id;
        int rows = 0, r;
        while ((r = ffb_stmt_fetch(s->stmt)) == 1) {
            if (read_row(p, s->stmt, &id) != PEER_OK)
                return PEER_ERR;
            sum += id;
            rows++;
        }
        if (r < 0)
            return conn_fail(p, c, "fetch");
        if (rows != BENCH_ROWS ||
            sum != (int64_t)BENCH_ROWS * (BENCH_ROWS + 1) / 2)
            return bench_fail(p, PEER_ERR, "scan: %d rows", rows);
    }
    CHECK(p, c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    return PEER_OK;
}

static int bind_ins_row(peer *p, ffb_stmt *st, int i) {
    ffb_peer *s = p->st;
    char name[32];
    snprintf(name, sizeof(name), "row %d", i);
    CHECK(p, s->conn, ffb_stmt_bind_int64(st, 0, i + 1));
    CHECK(p, s->conn, ffb_stmt_bind_text(st, 1, name, (size_t)-1));
    CHECK(p, s->conn, ffb_stmt_bind_numeric(st, 2, bench_ins_amount(i), -2));
    return PEER_OK;
}

static int run_insert_rows(peer *p, int n) {
    ffb_peer *s = p->st;
    ffb_conn *c = s->conn;
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        if (bind_ins_row(p, s->stmt, i) != PEER_OK)
            return PEER_ERR;
        CHECK(p, c, ffb_stmt_execute(s->stmt, tx));
        if (ffb_stmt_rows_affected(s->stmt) != 1)
            return bench_fail(p, PEER_ERR, "insert %d: no row", i);
    }
    CHECK(p, c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    return PEER_OK;
}

/* State of a pipelined run, seen by the result callbacks. Results come in
   queue order, so the k-th callback answers the k-th execution. */
typedef struct pipe_run {
    peer *p;
    int done; /* callbacks so far */
    int failed;
} pipe_run;

static void pipe_fail(pipe_run *r, const char *what, const ffb_result *res) {
    if (r->failed++)
        return; /* keep the first error */
    const ffb_error *e = ffb_result_error(res);
    bench_fail(r->p, PEER_ERR, "execution %d: %s%s%s", r->done, what,
               e ? ": " : "", e ? ffb_error_message(e) : "");
}

/* A point select's answer: its rows are buffered in its statement. */
static void on_point(ffb_conn *c, const ffb_result *res, void *data) {
    pipe_run *r = data;
    ffb_peer *s = r->p->st;
    int k = r->done;
    (void)c;
    if (k >= s->npool || ffb_result_stmt(res) != s->pool[k])
        pipe_fail(r, "answer out of order", res);
    else if (ffb_result_status(res) != 0)
        pipe_fail(r, "failed", res);
    else if (!r->failed &&
             fetch_point(r->p, s->conn, s->pool[k], bench_point_id(k)) !=
                 PEER_OK)
        r->failed++; /* fetch_point wrote p->err */
    r->done++;
}

/* Queue the commit behind the n queued executions, send everything in one
   write and wait for the commit: it is the only result without a callback,
   and the executions' callbacks run while it is read. */
static int finish_pipe(peer *p, ffb_conn *c, ffb_tx *tx, pipe_run *run,
                       int n) {
    const ffb_result *res;
    CHECK(p, c, ffb_tx_queue_commit(tx, NULL, NULL));
    CHECK(p, c, ffb_conn_flush(c));
    if (ffb_conn_next_result(c, &res) != 1)
        return conn_fail(p, c, "next_result");
    int commit_rc = ffb_result_status(res);
    if (commit_rc != 0 && !run->failed)
        bench_fail(p, PEER_ERR, "commit: %s",
                   ffb_error_message(ffb_result_error(res)));
    ffb_tx_free(tx);
    if (run->failed || commit_rc != 0)
        return PEER_ERR;
    if (run->done != n)
        return bench_fail(p, PEER_ERR, "%d of %d answers", run->done, n);
    return PEER_OK;
}

/* All n selects (each with its first fetch) and the commit in one write;
   the transaction's start rides in front. */
static int run_select_pipe(peer *p, int n) {
    ffb_peer *s = p->st;
    ffb_conn *c = s->conn;
    pipe_run run = {p, 0, 0};
    ffb_tx *tx;
    if (n > s->npool)
        return bench_fail(p, PEER_ERR, "%d statements for %d selects",
                          s->npool, n);
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        CHECK(p, c, ffb_stmt_bind_int64(s->pool[i], 0, bench_point_id(i)));
        CHECK(p, c, ffb_stmt_queue_execute(s->pool[i], tx, on_point, &run));
    }
    return finish_pipe(p, c, tx, &run, n);
}

/* An insert's answer, with its row count (op_info_sql rides with it). */
static void on_insert(ffb_conn *c, const ffb_result *res, void *data) {
    pipe_run *r = data;
    ffb_peer *s = r->p->st;
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

/* All n inserts and the commit in one write. */
static int run_insert_pipe(peer *p, int n) {
    ffb_peer *s = p->st;
    ffb_conn *c = s->conn;
    pipe_run run = {p, 0, 0};
    ffb_tx *tx;
    CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
    for (int i = 0; i < n; i++) {
        if (bind_ins_row(p, s->stmt, i) != PEER_OK)
            return PEER_ERR;
        CHECK(p, c, ffb_stmt_queue_execute(s->stmt, tx, on_insert, &run));
    }
    return finish_pipe(p, c, tx, &run, n);
}

/* One batch; the transaction's start rides in front of it and its commit
   in the same write (ffb_batch_options.commit). */
static int run_insert_batch(peer *p, int n) {
    ffb_peer *s = p->st;
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
    CHECK(p, c, ffb_batch_execute(b, tx));
    if (ffb_batch_row_count(b) != (size_t)n)
        return bench_fail(p, PEER_ERR, "batch: %zu rows",
                          ffb_batch_row_count(b));
    ffb_batch_free(b);
    if (ffb_tx_is_active(tx))
        CHECK(p, c, ffb_tx_commit(tx));
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

/* Write 1 MiB (create + segments + close in one write), insert its id,
   select it back and read it with the default prefetch. */
static int run_blob_rw(peer *p, int n) {
    ffb_peer *s = p->st;
    ffb_conn *c = s->conn;
    for (int i = 0; i < n; i++) {
        int64_t key = i + 1;
        for (size_t k = 0; k < BENCH_BLOB_LARGE; k++)
            s->blob_buf[k] = bench_blob_byte(key, k);
        ffb_tx *tx;
        ffb_blob *b;
        uint8_t id[8];
        CHECK(p, c, ffb_tx_begin(c, NULL, &tx));
        CHECK(p, c, ffb_blob_create(c, tx, NULL, &b));
        CHECK(p, c, ffb_blob_write(b, s->blob_buf, BENCH_BLOB_LARGE));
        CHECK(p, c, ffb_blob_close(b, id));
        ffb_blob_free(b);
        CHECK(p, c, ffb_stmt_bind_int64(s->stmt, 0, key));
        CHECK(p, c, ffb_stmt_bind_blob_id(s->stmt, 1, id));
        CHECK(p, c, ffb_stmt_execute(s->stmt, tx));
        CHECK(p, c, ffb_stmt_bind_int64(s->stmt2, 0, key));
        CHECK(p, c, ffb_stmt_execute(s->stmt2, tx));
        if (ffb_stmt_fetch(s->stmt2) != 1)
            return conn_fail(p, c, "blob row");
        CHECK(p, c, ffb_stmt_get_blob_id(s->stmt2, 0, id));
        if (ffb_stmt_fetch(s->stmt2) != 0)
            return conn_fail(p, c, "blob row end");
        const uint8_t *data;
        size_t len;
        CHECK(p, c, ffb_blob_open(c, tx, id, 0, &b));
        CHECK(p, c, ffb_blob_read_all(b, &data, &len));
        int rc = check_blob(p, data, len, key, BENCH_BLOB_LARGE);
        ffb_blob_free(b);
        if (rc != PEER_OK)
            return rc;
        CHECK(p, c, ffb_tx_commit(tx));
        ffb_tx_free(tx);
    }
    return PEER_OK;
}

/* Open every blob as its row arrives (queued, no I/O), then read them:
   the opens and first reads of all blobs travel together. */
static int run_blob_scan(peer *p, int n) {
    ffb_peer *s = p->st;
    ffb_conn *c = s->conn;
    ffb_blob **blobs = calloc((size_t)n, sizeof(*blobs));
    int64_t *keys = calloc((size_t)n, sizeof(*keys));
    int rows = 0, r, rc = PEER_OK;
    ffb_tx *tx = NULL;
    if (!blobs || !keys) {
        rc = bench_fail(p, PEER_ERR, "out of memory");
        goto done;
    }
    if (ffb_tx_begin(c, NULL, &tx) < 0 ||
        ffb_stmt_bind_int64(s->stmt, 0, n) < 0 ||
        ffb_stmt_execute(s->stmt, tx) < 0) {
        rc = conn_fail(p, c, "blob scan");
        goto done;
    }
    while ((r = ffb_stmt_fetch(s->stmt)) == 1 && rows < n) {
        uint8_t id[8];
        if (ffb_stmt_get_int64(s->stmt, 0, &keys[rows]) < 0 ||
            ffb_stmt_get_blob_id(s->stmt, 1, id) < 0 ||
            ffb_blob_open(c, tx, id, 0, &blobs[rows]) < 0) {
            rc = conn_fail(p, c, "blob open");
            goto done;
        }
        rows++;
    }
    if (r < 0 || rows != n) {
        rc = r < 0 ? conn_fail(p, c, "fetch")
                   : bench_fail(p, PEER_ERR, "blob scan: %d rows", rows);
        goto done;
    }
    for (int i = 0; i < rows && rc == PEER_OK; i++) {
        const uint8_t *data;
        size_t len;
        if (ffb_blob_read_all(blobs[i], &data, &len) < 0)
            rc = conn_fail(p, c, "blob read");
        else
            rc = check_blob(p, data, len, keys[i], BENCH_BLOB_SMALL);
    }
    if (rc == PEER_OK && ffb_tx_commit(tx) < 0)
        rc = conn_fail(p, c, "commit");
done:
    for (int i = 0; blobs && i < rows; i++)
        ffb_blob_free(blobs[i]);
    free(blobs);
    free(keys);
    ffb_tx_free(tx);
    return rc;
}

static int ffb_run(peer *p, int sc, int n, run_result *out) {
    ffb_peer *s = p->st;
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

static int ffb_teardown(peer *p, int sc) {
    ffb_peer *s = p->st;
    int rc = PEER_OK;
    if (s->conn && (sc == SC_INSERT_ROWS || sc == SC_INSERT_PIPE ||
                    sc == SC_INSERT_BATCH))
        rc = exec_sql(p, s->conn, SQL_CLEAN_INS);
    if (s->conn && sc == SC_BLOB_RW)
        rc = exec_sql(p, s->conn, SQL_CLEAN_BLOBW);
    ffb_stmt_free(s->stmt);
    ffb_stmt_free(s->stmt2);
    s->stmt = s->stmt2 = NULL;
    for (int i = 0; i < s->npool; i++)
        ffb_stmt_free(s->pool[i]);
    free(s->pool);
    s->pool = NULL;
    s->npool = 0;
    if (s->conn) {
        ffb_conn_close(s->conn);
        ffb_conn_free(s->conn);
        s->conn = NULL;
    }
    return rc;
}

static int ffb_info(peer *p, char *buf, size_t size) {
    ffb_conn *c;
    if (open_conn(p, &c) != PEER_OK)
        return PEER_ERR;
    snprintf(buf, size, "libfastfb %s, protocol P%d, wire crypt %s%s",
             ffb_version(), ffb_conn_protocol(c),
             *ffb_conn_wire_crypt(c) ? ffb_conn_wire_crypt(c) : "off",
             ffb_conn_is_compressed(c) ? ", compressed" : "");
    ffb_conn_close(c);
    ffb_conn_free(c);
    return PEER_OK;
}

static void ffb_stop(peer *p) {
    ffb_peer *s = p->st;
    if (!s)
        return;
    ffb_teardown(p, -1);
    free(s->blob_buf);
    free(s);
    p->st = NULL;
}

/* ---- the concurrency scenario ---------------------------------------------
 *
 * As libfbclient's: N threads, one connection each (connected and given
 * the prepared point select in setup), each running select_ac's one-shot
 * pipeline with a random id until the time is up. The blocking calls'
 * cost beside the async pool's (docs/performance.md).
 */

typedef struct ffb_client {
    peer pc; /* a copy of the peer with this client's error */
    ffb_conn *conn;
    ffb_stmt *stmt;
    pthread_t th;
    int started;
    int rc;
    uint64_t rng;
    uint64_t end_ns;
    uint64_t rts0;
    lat_log lat;
} ffb_client;

static ffb_client *conc_c;
static int conc_n;

static int ffb_conc_teardown(peer *p) {
    (void)p;
    for (int i = 0; i < conc_n; i++) {
        ffb_client *c = &conc_c[i];
        if (c->conn) {
            ffb_stmt_free(c->stmt);
            ffb_conn_close(c->conn);
            ffb_conn_free(c->conn);
        }
        bench_lat_free(&c->lat);
    }
    free(conc_c);
    conc_c = NULL;
    conc_n = 0;
    return PEER_OK;
}

static int ffb_conc_setup(peer *p, int clients) {
    conc_c = calloc((size_t)clients, sizeof(*conc_c));
    if (!conc_c)
        return bench_fail(p, PEER_ERR, "out of memory");
    conc_n = clients;
    for (int i = 0; i < clients; i++) {
        ffb_client *c = &conc_c[i];
        c->pc = *p;
        c->rng = bench_rand_seed(i);
        ffb_tx *tx = NULL;
        if (open_conn(&c->pc, &c->conn) != PEER_OK)
            return bench_fail(p, PEER_ERR, "client %d: %s", i, c->pc.err);
        if (ffb_stmt_new(c->conn, &c->stmt) < 0 ||
            ffb_tx_begin(c->conn, NULL, &tx) < 0 ||
            ffb_stmt_prepare(c->stmt, tx, SQL_POINT, (size_t)-1) < 0 ||
            ffb_tx_commit(tx) < 0) {
            ffb_tx_free(tx);
            return conn_fail(p, c->conn, "prepare");
        }
        ffb_tx_free(tx);
    }
    return PEER_OK;
}

static int client_query(void *arg) {
    ffb_client *c = arg;
    return point_select_ac(&c->pc, c->conn, c->stmt, bench_rand_id(&c->rng));
}

static void *ffb_client_main(void *arg) {
    ffb_client *c = arg;
    c->rc = bench_run_queries(&c->pc, &c->lat, c->end_ns, client_query, c);
    return NULL;
}

/* Every call has the connections' I/O timeout: the joins cannot hang. */
static int ffb_conc_run(peer *p, int clients, int ms, conc_result *out) {
    int rc = PEER_OK;
    uint64_t t0 = bench_now_ns();
    out->lib_rts = 0;
    for (int i = 0; i < clients && i < conc_n; i++) {
        ffb_client *c = &conc_c[i];
        c->end_ns = t0 + (uint64_t)ms * 1000000u;
        c->rts0 = round_trips(c->conn);
        if (pthread_create(&c->th, NULL, ffb_client_main, c) != 0) {
            rc = bench_fail(p, PEER_ERR, "pthread_create failed");
            break;
        }
        c->started = 1;
    }
    lat_log all = {0};
    for (int i = 0; i < conc_n; i++) {
        ffb_client *c = &conc_c[i];
        if (!c->started)
            continue;
        pthread_join(c->th, NULL);
        c->started = 0;
        out->lib_rts += (int64_t)(round_trips(c->conn) - c->rts0);
        rc = bench_client_joined(p, rc, i, &c->pc, c->rc, &all, &c->lat);
    }
    out->ns = bench_now_ns() - t0;
    bench_conc_latencies(out, &all);
    return rc;
}

const peer_ops bench_ffb_ops = {
    .start = ffb_start,
    .setup = ffb_setup,
    .run = ffb_run,
    .teardown = ffb_teardown,
    .info = ffb_info,
    .stop = ffb_stop,
    .conc_setup = ffb_conc_setup,
    .conc_run = ffb_conc_run,
    .conc_teardown = ffb_conc_teardown,
};
