/* ffb-oltp's libfastfb driver (oltp_drv.h): blocking calls in sysbench
   mode, the queue API in pipelined mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fastfb.h>

#include "oltp_drv.h"

#define QMAX 256

typedef struct qent {
    int slot, dml, check, exact;
    long long max;
} qent;

typedef struct ffb_d {
    ffb_conn *conn;
    ffb_stmt **st;
    int nst;
    ffb_tx *tx, *itx;
    ffb_batch *bulk;
    qent q[QMAX];
    int nq;
} ffb_d;

static const ffb_tx_options TXO = {.version = FFB_TX_OPTIONS_VERSION,
                                   .isolation = FFB_ISO_SNAPSHOT};

#define D(t) ((ffb_d *)(t)->d)

/* 1 = retry, -1 = fatal (message kept) */
static int efail(oltp_thr *t, const char *what, const ffb_error *e) {
    if (e && oltp_retryable(ffb_error_sqlcode(e)))
        return 1;
    return oltp_fatal(t, what, e ? ffb_error_message(e) : "failed");
}
#define CK(expr)                                                               \
    do {                                                                       \
        if ((expr) < 0)                                                        \
            return efail(t, #expr, ffb_conn_error(D(t)->conn));                \
    } while (0)

static int f_connect(oltp_thr *t, int nslots) {
    ffb_d *d = calloc(1, sizeof(*d));
    if (!d || !(d->st = calloc((size_t)nslots, sizeof(*d->st))))
        return oltp_fatal(t, "connect", "out of memory");
    t->d = d;
    d->nst = nslots;
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = oltp_o->dsn;
    o.user = oltp_o->user;
    o.password = oltp_o->password;
    o.charset = "UTF8";
    o.io_timeout_ms = 600000;
    if (ffb_conn_new(&o, &d->conn) != 0 || ffb_conn_connect(d->conn) != 0)
        return oltp_fatal(t, "connect",
                          d->conn ? ffb_error_message(ffb_conn_error(d->conn))
                                  : "out of memory");
    return 0;
}

static void f_disconnect(oltp_thr *t) {
    ffb_d *d = D(t);
    if (!d)
        return;
    for (int i = 0; i < d->nst; i++)
        if (d->st[i])
            ffb_stmt_free(d->st[i]);
    if (d->bulk)
        ffb_batch_free(d->bulk);
    if (d->conn) {
        ffb_conn_close(d->conn);
        ffb_conn_free(d->conn);
    }
    free(d->st);
    free(d);
    t->d = NULL;
}

/* Statements are prepared in the implicit transaction (ended by the
   caller's end_implicit before the clock starts). */
static ffb_tx *implicit(oltp_thr *t) {
    ffb_d *d = D(t);
    if (!d->itx && ffb_tx_begin(d->conn, &TXO, &d->itx) < 0)
        d->itx = NULL;
    return d->itx;
}

static int f_prepare(oltp_thr *t, int slot, const char *sql) {
    ffb_d *d = D(t);
    ffb_tx *tx = implicit(t);
    if (!tx || ffb_stmt_new(d->conn, &d->st[slot]) < 0 ||
        ffb_stmt_prepare(d->st[slot], tx, sql, (size_t)-1) < 0)
        return oltp_fatal(t, sql, ffb_error_message(ffb_conn_error(d->conn)));
    return 0;
}

static void f_bind_int(oltp_thr *t, int slot, unsigned i, int64_t v) {
    ffb_stmt_bind_int64(D(t)->st[slot], i, v);
}

static void f_bind_text(oltp_thr *t, int slot, unsigned i, const char *s) {
    ffb_stmt_bind_text(D(t)->st[slot], i, s, (size_t)-1);
}

static int f_begin(oltp_thr *t) {
    CK(ffb_tx_begin(D(t)->conn, &TXO, &D(t)->tx));
    return 0;
}

static int f_commit(oltp_thr *t) {
    ffb_d *d = D(t);
    int rc = ffb_tx_commit(d->tx);
    if (rc < 0)
        return efail(t, "commit", ffb_conn_error(d->conn));
    ffb_tx_free(d->tx);
    d->tx = NULL;
    return 0;
}

static void f_rollback(oltp_thr *t) {
    ffb_d *d = D(t);
    ffb_tx **txs[2] = {&d->tx, &d->itx};
    for (int i = 0; i < 2; i++)
        if (*txs[i]) {
            if (ffb_tx_is_active(*txs[i]))
                ffb_tx_rollback(*txs[i]);
            ffb_tx_free(*txs[i]);
            *txs[i] = NULL;
        }
}

static void f_end_implicit(oltp_thr *t) {
    ffb_d *d = D(t);
    if (d && d->itx) {
        ffb_tx_commit(d->itx);
        ffb_tx_free(d->itx);
        d->itx = NULL;
    }
}

/* Read every row of an executed SELECT (its first rows came with the
   execute); checks c's shape. */
static int read_rows(oltp_thr *t, ffb_stmt *st, int check, long long *rows) {
    int r;
    *rows = 0;
    while ((r = ffb_stmt_fetch(st)) == 1) {
        ++*rows;
        if (check) {
            const char *c;
            size_t len;
            if (ffb_stmt_get_text(st, 0, &c, &len) < 0 || !oltp_check_c(c, len))
                return oltp_fatal(t, "select", "c is not sysbench's CHAR(120)");
        }
    }
    CK(r);
    return 0;
}

static int f_select(oltp_thr *t, int slot, int tx, int check, long long *rows) {
    ffb_stmt *st = D(t)->st[slot];
    CK(ffb_stmt_execute(st, tx ? D(t)->tx : implicit(t)));
    return read_rows(t, st, check, rows);
}

/* One auto-committed DML: start + execute + commit in one write (the
   start rides the execute), then its two answers. `slot` prepared, or
   `sql` executed immediately when slot < 0. */
static int autocommit(oltp_thr *t, int slot, const char *sql, int64_t *n) {
    ffb_d *d = D(t);
    ffb_tx *a;
    const ffb_result *res;
    CK(ffb_tx_begin(d->conn, &TXO, &a));
    int q = slot >= 0 ? ffb_stmt_queue_execute(d->st[slot], a, NULL, NULL)
                      : ffb_conn_queue_execute_immediate(
                            d->conn, a, sql, (size_t)-1, NULL, 0, NULL, NULL);
    if (q < 0 || ffb_tx_queue_commit(a, NULL, NULL) < 0 ||
        ffb_conn_flush(d->conn) < 0) {
        ffb_tx_free(a);
        return efail(t, "queue", ffb_conn_error(d->conn));
    }
    int rc = 0;
    *n = 0;
    for (int k = 0; k < 2; k++) {
        if (ffb_conn_next_result(d->conn, &res) != 1) {
            ffb_tx_free(a);
            return efail(t, "next_result", ffb_conn_error(d->conn));
        }
        if (ffb_result_status(res) != 0 && !rc)
            rc = efail(t, "dml", ffb_result_error(res));
        if (k == 0)
            *n = ffb_result_rows_affected(res);
    }
    if (ffb_tx_is_active(a))
        ffb_tx_rollback(a);
    ffb_tx_free(a);
    return rc;
}

static int f_dml(oltp_thr *t, int slot, int tx, int64_t *n) {
    if (!tx)
        return autocommit(t, slot, NULL, n);
    ffb_stmt *st = D(t)->st[slot];
    CK(ffb_stmt_execute(st, D(t)->tx));
    *n = ffb_stmt_rows_affected(st);
    return 0;
}

static int f_insert_sql(oltp_thr *t, const char *sql, int64_t *n) {
    return autocommit(t, -1, sql, n);
}

static int f_bulk_add(oltp_thr *t, int slot) {
    ffb_d *d = D(t);
    if (!d->bulk) {
        ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
        bo.commit = 1;
        CK(ffb_batch_new(d->st[slot], &bo, &d->bulk));
    }
    CK(ffb_batch_add(d->bulk));
    return 0;
}

/* The batch and its commit in one write (FB3: pipelined executes). */
static int f_bulk_flush(oltp_thr *t) {
    ffb_d *d = D(t);
    if (!d->bulk)
        return 0;
    ffb_tx *tx;
    int rc = 0;
    if (ffb_tx_begin(d->conn, &TXO, &tx) < 0 ||
        ffb_batch_execute(d->bulk, tx) < 0)
        rc = oltp_fatal(t, "batch", ffb_error_message(ffb_conn_error(d->conn)));
    if (ffb_tx_is_active(tx) && ffb_tx_commit(tx) < 0)
        rc =
            oltp_fatal(t, "commit", ffb_error_message(ffb_conn_error(d->conn)));
    ffb_tx_free(tx);
    ffb_batch_free(d->bulk);
    d->bulk = NULL;
    return rc;
}

static uint64_t f_round_trips(oltp_thr *t) {
    ffb_stats s;
    ffb_conn_stats(D(t)->conn, &s, sizeof(s));
    return s.round_trips;
}

/* ---- pipelined: an event's independent statements in one write ------- */

static int f_q_select(oltp_thr *t, int slot, int check, long long want_max,
                      int want_exact) {
    ffb_d *d = D(t);
    if (d->nq == QMAX)
        return oltp_fatal(t, "pipeline", "too many statements in one event");
    CK(ffb_stmt_queue_execute(d->st[slot], d->tx, NULL, NULL));
    d->q[d->nq++] = (qent){
        .slot = slot, .check = check, .max = want_max, .exact = want_exact};
    return 0;
}

static int f_q_dml(oltp_thr *t, int slot) {
    ffb_d *d = D(t);
    if (d->nq == QMAX)
        return oltp_fatal(t, "pipeline", "too many statements in one event");
    CK(ffb_stmt_queue_execute(d->st[slot], d->tx, NULL, NULL));
    d->q[d->nq++] = (qent){.slot = slot, .dml = 1};
    return 0;
}

/* Flush, then every result in queue order: a SELECT's rows (they came
   with its execute), a DML's row count. Every answer is read even after
   a failure, so the wire stays in sync. */
static int f_q_run(oltp_thr *t) {
    ffb_d *d = D(t);
    int nq = d->nq, rc = 0;
    d->nq = 0;
    if (ffb_conn_flush(d->conn) < 0)
        return efail(t, "flush", ffb_conn_error(d->conn));
    for (int i = 0; i < nq; i++) {
        const ffb_result *res;
        if (ffb_conn_next_result(d->conn, &res) != 1)
            return efail(t, "next_result", ffb_conn_error(d->conn));
        if (rc)
            continue;
        if (ffb_result_status(res) != 0) {
            rc = efail(t, "pipelined statement", ffb_result_error(res));
            continue;
        }
        qent *e = &d->q[i];
        if (e->dml) {
            if (ffb_result_rows_affected(res) > 0)
                t->writes++;
            else
                t->others++;
            continue;
        }
        long long rows;
        if ((rc = read_rows(t, d->st[e->slot], e->check, &rows)))
            continue;
        if (rows > e->max || (e->exact && rows != e->max))
            rc = oltp_fatal(t, "select", "unexpected row count");
        else
            t->reads++;
    }
    return rc;
}

static void f_describe(oltp_thr *t, char *buf, size_t size) {
    ffb_conn *c = D(t)->conn;
    snprintf(buf, size, "libfastfb %s, protocol %d, wire crypt %s%s",
             ffb_version(), ffb_conn_protocol(c),
             *ffb_conn_wire_crypt(c) ? ffb_conn_wire_crypt(c) : "off",
             ffb_conn_is_compressed(c) ? ", zlib" : "");
}

const oltp_drv oltp_drv_ffb = {
    .name = "libfastfb",
    .connect = f_connect,
    .disconnect = f_disconnect,
    .prepare = f_prepare,
    .bind_int = f_bind_int,
    .bind_text = f_bind_text,
    .begin = f_begin,
    .commit = f_commit,
    .rollback = f_rollback,
    .select = f_select,
    .dml = f_dml,
    .insert_sql = f_insert_sql,
    .bulk_add = f_bulk_add,
    .bulk_flush = f_bulk_flush,
    .end_implicit = f_end_implicit,
    .round_trips = f_round_trips,
    .q_select = f_q_select,
    .q_dml = f_q_dml,
    .q_run = f_q_run,
    .describe = f_describe,
};
