/*
 * Pipelined results. Each queued public request has a result record; the
 * requests' reply handlers fill its sync (status and error) and the last
 * one marks it done. Results complete in queue order, so only the head of
 * the queue is ever checked: done results go to their callback, or to the
 * list ffb_conn_next_result() takes from.
 */
#include <string.h>

#include "lib/internal.h"

struct ffb_result *ffb__result_new(ffb_conn *conn, int op, ffb_cb cb,
                                   void *data) {
    struct ffb_result *r = ffb__malloc(conn->alloc, sizeof(*r));
    if (!r) {
        ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
        return NULL;
    }
    memset(r, 0, sizeof(*r));
    r->conn = conn;
    r->op = op;
    r->cb = cb;
    r->data = data;
    r->rows = -1;
    r->sync.own_err = 1;
    if (conn->rq_tail)
        conn->rq_tail->next = r;
    else
        conn->rq_head = r;
    conn->rq_tail = r;
    return r;
}

static void result_free(ffb_conn *conn, struct ffb_result *r) {
    if (!r)
        return;
    ffb__blob_unref(r->blob);
    if (r->batch)
        ffb__batch_unref(r->batch);
    ffb__stmt_unref(r->stmt);
    ffb__tx_unref(r->tx);
    ffb__free(conn->alloc, r->sync.err);
    ffb__free(conn->alloc, r);
}

void ffb__result_drop(ffb_conn *conn, struct ffb_result *res) {
    struct ffb_result **pp = &conn->rq_head, *prev = NULL;
    for (; *pp; prev = *pp, pp = &(*pp)->next)
        if (*pp == res) {
            *pp = res->next;
            if (conn->rq_tail == res)
                conn->rq_tail = prev;
            break;
        }
    result_free(conn, res);
}

/* The connection broke: no result still owed can arrive. Each completes
   with the code and the error that broke it. */
static void fail_broken(ffb_conn *conn) {
    for (struct ffb_result *r = conn->rq_head; r; r = r->next) {
        if (r->sync.done)
            continue;
        ffb_error *e = ffb__sync_error(conn, &r->sync);
        if (e != &conn->err)
            *e = conn->err;
        r->sync.rc = ffb__broken_code(conn);
        r->sync.done = 1;
    }
}

void ffb__results_poll(ffb_conn *conn) {
    if (conn->in_callback || !conn->rq_head)
        return; /* delivered by the outer poll, in order; or nothing */
    if (conn->state == FFB__ST_BROKEN)
        fail_broken(conn);
    if (!conn->rq_head->sync.done)
        return;
    while (conn->rq_head && conn->rq_head->sync.done) {
        struct ffb_result *r = conn->rq_head;
        conn->rq_head = r->next;
        if (!conn->rq_head)
            conn->rq_tail = NULL;
        r->next = NULL;
        if (r->finish)
            r->finish(conn, r);
        if (r->sync.has_rows)
            r->rows = r->sync.rows; /* this execution's own count */
        else if (r->stmt && r->sync.rc == 0)
            r->rows = ffb_stmt_rows_affected(r->stmt);
        if (r->cb) {
            conn->in_callback = 1;
            r->cb(conn, r, r->data);
            conn->in_callback = 0;
            result_free(conn, r);
        } else {
            if (conn->done_tail)
                conn->done_tail->next = r;
            else
                conn->done_head = r;
            conn->done_tail = r;
        }
    }
}

void ffb__results_cancel(ffb_conn *conn) {
    ffb__engine_drop_held(conn, FFB_E_CANCELLED);
    if (!conn->rq_head || conn->in_callback)
        return;
    for (struct ffb_result *r = conn->rq_head; r; r = r->next) {
        if (r->sync.done)
            continue;
        ffb_error *e = ffb__sync_error(conn, &r->sync);
        ffb__error_set(e, FFB_E_CANCELLED,
                       "cancelled: the connection was closed before the "
                       "answer arrived");
        r->sync.rc = FFB_E_CANCELLED;
        r->sync.done = 1;
    }
    ffb__results_poll(conn);
}

void ffb__results_free_all(ffb_conn *conn) {
    struct ffb_result *lists[3] = {conn->rq_head, conn->done_head,
                                   conn->delivered};
    for (int i = 0; i < 3; i++)
        for (struct ffb_result *r = lists[i], *n; r; r = n) {
            n = r->next;
            result_free(conn, r);
        }
    conn->rq_head = conn->rq_tail = NULL;
    conn->done_head = conn->done_tail = NULL;
    conn->delivered = NULL;
}

/* The result at the head of the queue (compared by address only: it may
   be delivered and freed meanwhile) completed. */
int ffb__result_head_done(ffb_conn *conn, const void *arg) {
    const struct ffb_result *head = arg;
    return conn->rq_head != head || head->sync.done;
}

const void *ffb__result_head(const ffb_conn *conn) { return conn->rq_head; }

int ffb__next_result_begin(ffb_conn *conn) {
    if (conn->in_callback)
        /* The result being delivered holds the queue: waiting for the next
           one here could never end. */
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "ffb_conn_next_result() inside a result "
                              "callback; results are delivered in order "
                              "once the callback returns");
    result_free(conn, conn->delivered);
    conn->delivered = NULL;
    return 0;
}

int ffb__next_result(ffb_conn *conn, const ffb_result **out) {
    for (;;) {
        if (conn->done_head) {
            struct ffb_result *r = conn->done_head;
            conn->done_head = r->next;
            if (!conn->done_head)
                conn->done_tail = NULL;
            r->next = NULL;
            conn->delivered = r;
            *out = r;
            return 1;
        }
        if (!conn->rq_head)
            return 0;
        if (conn->state == FFB__ST_BROKEN) {
            ffb__results_poll(conn); /* they fail with the cause */
            continue;
        }
        return FFB_E_AGAIN; /* the head has not completed */
    }
}

size_t ffb_conn_pending(const ffb_conn *conn) {
    size_t n = 0;
    for (const struct ffb_result *r = conn ? conn->rq_head : NULL; r;
         r = r->next)
        n++;
    for (const struct ffb_result *r = conn ? conn->done_head : NULL; r;
         r = r->next)
        n++;
    return n;
}

int ffb_result_status(const ffb_result *res) {
    return res ? res->sync.rc : FFB_E_INVAL;
}

const ffb_error *ffb_result_error(const ffb_result *res) {
    if (!res || res->sync.rc == 0)
        return NULL;
    return res->sync.err ? res->sync.err : &res->conn->err;
}

int ffb_result_op(const ffb_result *res) { return res ? res->op : 0; }

void *ffb_result_data(const ffb_result *res) { return res ? res->data : NULL; }

ffb_stmt *ffb_result_stmt(const ffb_result *res) {
    return res ? res->stmt : NULL;
}

int64_t ffb_result_rows_affected(const ffb_result *res) {
    return res ? res->rows : -1;
}

/* ---- queue functions -------------------------------------------------------------- */

/* A result for a request about to be queued; the statement and the
   transaction are referenced while it is. */
static struct ffb_result *result_for(ffb_conn *conn, int op, ffb_cb cb,
                                     void *data, ffb_stmt *stmt, ffb_tx *tx) {
    ffb__conn_error_clear(conn);
    struct ffb_result *r = ffb__result_new(conn, op, cb, data);
    if (!r)
        return NULL;
    if (stmt) {
        r->stmt = stmt;
        stmt->refs++;
    }
    if (tx) {
        r->tx = tx;
        tx->refs++;
    }
    return r;
}

/* The queueing call returned rc: a result nobody will complete goes. */
static int queued(ffb_conn *conn, struct ffb_result *r, int rc) {
    if (rc != 0 && !r->sync.done)
        ffb__result_drop(conn, r);
    return rc;
}

/* The same for the queue twins of other files (lib/internal.h). */
struct ffb_result *ffb__result_for(ffb_conn *conn, int op, ffb_cb cb,
                                   void *data, ffb_stmt *stmt, ffb_tx *tx) {
    return result_for(conn, op, cb, data, stmt, tx);
}

int ffb__result_queued(ffb_conn *conn, struct ffb_result *r, int rc) {
    return queued(conn, r, rc);
}

int ffb_stmt_queue_execute(ffb_stmt *stmt, ffb_tx *tx, ffb_cb cb, void *data) {
    if (!stmt)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    struct ffb_result *r =
        result_for(conn, FFB_OP_EXECUTE, cb, data, stmt, NULL);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r, ffb__stmt_queue_execute(stmt, tx, &r->sync));
}

int ffb_stmt_queue_prepare(ffb_stmt *stmt, ffb_tx *tx, const char *sql,
                           size_t len, ffb_cb cb, void *data) {
    if (!stmt || !sql)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    struct ffb_result *r =
        result_for(conn, FFB_OP_PREPARE, cb, data, stmt, NULL);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r,
                  ffb__stmt_queue_prepare(stmt, tx, sql, len, &r->sync));
}

int ffb_conn_queue_prepare(ffb_conn *conn, ffb_tx *tx, const char *sql,
                           size_t len, ffb_stmt **out, ffb_cb cb, void *data) {
    if (!conn || !sql || !out)
        return FFB_E_INVAL;
    if (len == (size_t)-1)
        len = strlen(sql);
    ffb_stmt *s;
    int how = ffb__cache_checkout(conn, tx, sql, len, &s);
    if (how < 0)
        return how;
    if (how == FFB__CACHE_PREPARE) {
        struct ffb_result *r =
            result_for(conn, FFB_OP_PREPARE, cb, data, s, NULL);
        int rc = r ? queued(conn, r,
                            ffb__stmt_queue_prepare(s, tx, sql, len, &r->sync))
                   : FFB_E_NOMEM;
        if (rc < 0) {
            ffb_stmt_free(s);
            return rc;
        }
    }
    if (how != FFB__CACHE_HIT)
        ffb__cache_add(conn, s);
    *out = s;
    return how == FFB__CACHE_PREPARE ? 0 : 1;
}

int ffb_stmt_queue_fetch(ffb_stmt *stmt, ffb_cb cb, void *data) {
    if (!stmt)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    struct ffb_result *r = result_for(conn, FFB_OP_FETCH, cb, data, stmt, NULL);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r, ffb__stmt_queue_fetch(stmt, &r->sync));
}

/* A result for a simple request whose answer is copied to `out`. */
static struct ffb_result *simple_result(ffb_conn *conn, int op, ffb_cb cb,
                                        void *data, ffb_tx *tx, uint8_t *out,
                                        size_t out_size) {
    struct ffb_result *r = result_for(conn, op, cb, data, NULL, tx);
    if (r) {
        r->simple.sync = &r->sync;
        r->simple.data = out;
        r->simple.data_size = out_size;
    }
    return r;
}

int ffb_conn_queue_ping(ffb_conn *conn, ffb_cb cb, void *data) {
    if (!conn)
        return FFB_E_INVAL;
    struct ffb_result *r =
        simple_result(conn, FFB_OP_PING, cb, data, NULL, NULL, 0);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r, ffb__queue_ping(conn, &r->simple));
}

int ffb_conn_queue_info(ffb_conn *conn, const uint8_t *items,
                        size_t items_len, uint8_t *out, size_t out_size,
                        ffb_cb cb, void *data) {
    if (!conn || (!out && out_size))
        return FFB_E_INVAL;
    struct ffb_result *r =
        simple_result(conn, FFB_OP_INFO, cb, data, NULL, out, out_size);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r,
                  ffb__queue_db_info(conn, items, items_len, out_size,
                                     &r->simple));
}

int ffb_tx_queue_info(ffb_tx *tx, const uint8_t *items, size_t items_len,
                      uint8_t *out, size_t out_size, ffb_cb cb, void *data) {
    if (!tx || (!items && items_len) || (!out && out_size) ||
        items_len > 65535 || out_size > 0x7FFFFFFF)
        return FFB_E_INVAL;
    ffb_conn *conn = tx->conn;
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    struct ffb_result *r =
        simple_result(conn, FFB_OP_INFO, cb, data, tx, out, out_size);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r,
                  ffb__tx_queue_info(tx, items, items_len, out_size,
                                     &r->simple));
}

int ffb_conn_queue_execute_immediate(ffb_conn *conn, ffb_tx *tx,
                                     const char *sql, size_t len,
                                     const ffb_value *params, size_t n,
                                     ffb_cb cb, void *data) {
    if (!conn || !sql)
        return FFB_E_INVAL;
    struct ffb_result *r =
        simple_result(conn, FFB_OP_EXECUTE_IMMEDIATE, cb, data, tx, NULL, 0);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r,
                  ffb__queue_immediate(conn, tx, sql, len, params, n,
                                       &r->simple));
}

static int blob_queue(ffb_blob *b, int what, int whence, int64_t offset,
                      ffb_cb cb, void *data) {
    if (!b)
        return FFB_E_INVAL;
    ffb_conn *conn = b->conn;
    struct ffb_result *r = result_for(conn, what, cb, data, NULL, NULL);
    if (!r)
        return FFB_E_NOMEM;
    r->blob = b;
    b->refs++;
    return queued(conn, r, ffb__blob_queue(b, what, whence, offset, &r->sync));
}

int ffb_blob_queue_read(ffb_blob *b, ffb_cb cb, void *data) {
    return blob_queue(b, FFB_OP_BLOB_READ, 0, 0, cb, data);
}

int ffb_blob_queue_info(ffb_blob *b, ffb_cb cb, void *data) {
    return blob_queue(b, FFB_OP_BLOB_INFO, 0, 0, cb, data);
}

int ffb_blob_queue_seek(ffb_blob *b, int whence, int64_t offset, ffb_cb cb,
                        void *data) {
    return blob_queue(b, FFB_OP_BLOB_SEEK, whence, offset, cb, data);
}

int ffb_blob_queue_close(ffb_blob *b, ffb_cb cb, void *data) {
    return blob_queue(b, FFB_OP_BLOB_CLOSE, 0, 0, cb, data);
}

int ffb_batch_queue_execute(ffb_batch *b, ffb_tx *tx, ffb_cb cb, void *data) {
    if (!b || !tx)
        return FFB_E_INVAL;
    ffb_conn *conn = tx->conn;
    struct ffb_result *r =
        result_for(conn, FFB_OP_BATCH_EXECUTE, cb, data, NULL, NULL);
    if (!r)
        return FFB_E_NOMEM;
    r->batch = b;
    ffb__batch_ref(b);
    return queued(conn, r, ffb__batch_queue_execute(b, tx, &r->sync));
}

int ffb_stmt_queue_plan(ffb_stmt *stmt, int explain, ffb_cb cb, void *data) {
    if (!stmt)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    struct ffb_result *r = result_for(conn, FFB_OP_PLAN, cb, data, stmt, NULL);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r, ffb__stmt_queue_plan(stmt, explain, &r->sync));
}

static int queue_release(ffb_conn *conn, int drop, ffb_cb cb, void *data) {
    if (!conn)
        return FFB_E_INVAL;
    struct ffb_result *r =
        simple_result(conn, drop ? FFB_OP_DROP_DATABASE : FFB_OP_DETACH, cb,
                      data, NULL, NULL, 0);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r, ffb__queue_release(conn, drop, &r->simple));
}

int ffb_conn_queue_detach(ffb_conn *conn, ffb_cb cb, void *data) {
    return queue_release(conn, 0, cb, data);
}

int ffb_conn_queue_drop_database(ffb_conn *conn, ffb_cb cb, void *data) {
    return queue_release(conn, 1, cb, data);
}

size_t ffb_result_length(const ffb_result *res) {
    return res ? res->simple.data_len : 0;
}

static int queue_end(ffb_tx *tx, int op, int kind, ffb_cb cb, void *data) {
    if (!tx)
        return FFB_E_INVAL;
    ffb_conn *conn = tx->conn;
    if (conn->state == FFB__ST_READY && tx->state == FFB__TX_ENDED)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the transaction has already ended");
    struct ffb_result *r = result_for(conn, kind, cb, data, NULL, tx);
    if (!r)
        return FFB_E_NOMEM;
    return queued(conn, r, ffb__tx_queue_end(tx, op, &r->sync));
}

int ffb_tx_queue_commit(ffb_tx *tx, ffb_cb cb, void *data) {
    return queue_end(tx, FFBP_OP_COMMIT, FFB_OP_COMMIT, cb, data);
}

int ffb_tx_queue_rollback(ffb_tx *tx, ffb_cb cb, void *data) {
    return queue_end(tx, FFBP_OP_ROLLBACK, FFB_OP_ROLLBACK, cb, data);
}

int ffb_tx_queue_commit_retaining(ffb_tx *tx, ffb_cb cb, void *data) {
    return queue_end(tx, FFBP_OP_COMMIT_RETAINING, FFB_OP_COMMIT_RETAINING,
                     cb, data);
}

int ffb_tx_queue_rollback_retaining(ffb_tx *tx, ffb_cb cb, void *data) {
    return queue_end(tx, FFBP_OP_ROLLBACK_RETAINING,
                     FFB_OP_ROLLBACK_RETAINING, cb, data);
}
