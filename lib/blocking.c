/*
 * The public calls that wait. Each is its queue twin (or the "try" half the
 * object's own file keeps) followed by the blocking loop of lib/run.c:
 * "queue, then run until this request is done". Nothing else in lib/ runs
 * the loop, so the engine and the SQL objects stay sans-I/O (the lint suite
 * checks it: tests/lint/check_io_boundary.sh).
 *
 * Two kinds of call live here:
 *  - blocking only (commit, prepare, ping, ...): on a connection with
 *    external I/O they fail with FFB_E_STATE and the application uses the
 *    queue twin;
 *  - "try, then wait" (fetch, blob reads, ffb_conn_next_result, closing a
 *    cursor whose execution is still held): their try half answers
 *    FFB_E_AGAIN when the answers it needs are not in; external I/O hands
 *    that to the application (feed the answers, call again), blocking I/O
 *    waits for them here and tries again.
 */
#include <stdio.h>
#include <string.h>

#include "lib/events.h"
#include "lib/internal.h"

/* ---- the two ways of waiting ---- */

/* A try half answered FFB_E_AGAIN: wait for `until` (NULL: the next packet)
   unless the application drives the I/O. */
static int wait_again(ffb_conn *conn, ffb__until_fn until, const void *arg) {
    if (conn->io == FFB_IO_EXTERNAL)
        return FFB_E_AGAIN;
    return until ? ffb__run(conn, until, arg) : ffb__run_step(conn);
}

/* Requests a try half made ready without waiting for them (read-ahead, a
   blob's data) go to the server now; `rc` is what the call answers. */
static int send_ahead(ffb_conn *conn, int rc) {
    if (rc < 0 || conn->io == FFB_IO_EXTERNAL || conn->out.len == 0)
        return rc;
    int w = ffb__write_out(conn);
    return w < 0 ? w : rc;
}

int ffb_conn_flush(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    if (conn->state == FFB__ST_BROKEN)
        return ffb__broken_code(conn);
    int rc = ffb__engine_flush(conn);
    if (rc == 0)
        rc = ffb__write_out(conn);
    return rc < 0 ? ffb__engine_fail(conn, rc) : 0;
}

int ffb_conn_next_result(ffb_conn *conn, const ffb_result **out) {
    if (!conn || !out)
        return FFB_E_INVAL;
    int rc = ffb__next_result_begin(conn);
    if (rc < 0)
        return rc;
    while ((rc = ffb__next_result(conn, out)) == FFB_E_AGAIN) {
        if (conn->io != FFB_IO_BLOCKING)
            return FFB_E_AGAIN;
        /* Wait for the head to complete. It may be delivered to its
           callback and freed while we read, so only its address is
           compared. */
        rc = ffb__run(conn, ffb__result_head_done, ffb__result_head(conn));
        if (rc < 0) {
            ffb__engine_fail(conn, rc);
            if (conn->state != FFB__ST_BROKEN)
                return rc;
        }
        ffb__results_poll(conn);
    }
    return rc;
}

/* ---- connections ---- */

static int connect_once(ffb_conn *conn, int create,
                        const ffb_create_options *copts) {
    ffb__connect_begin(conn);
    int rc = ffb__io_connect(conn);
    if (rc < 0) {
        conn->state = FFB__ST_CLOSED;
        return rc;
    }
    rc = ffb__hs_start(conn, create, copts);
    if (rc == 0)
        rc = ffb__wait(conn, &conn->hs_finished);
    if ((rc = ffb__connect_end(conn, rc)) < 0)
        ffb__io_close(conn);
    return rc;
}

static int connect_blocking(ffb_conn *conn, int create,
                            const ffb_create_options *copts) {
    int rc = ffb__connect_check(conn, create, copts);
    if (rc < 0)
        return rc;
    rc = connect_once(conn, create, copts);
    if (ffb__connect_retry(conn, rc)) {
        /* A server whose administrator narrowed WireCryptPlugin drops the
           connection on a pipelined op_crypt naming a cipher it lacks
           (reference 01, 10.4): try once more the patient way. */
        conn->pipeline_crypt = 0;
        rc = connect_once(conn, create, copts);
        conn->pipeline_crypt = 1;
    }
    return rc;
}

int ffb_conn_connect(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    return connect_blocking(conn, 0, NULL);
}

int ffb_conn_create_database(ffb_conn *conn, const ffb_create_options *copts) {
    if (!conn)
        return FFB_E_INVAL;
    return connect_blocking(conn, 1, copts);
}

/* op_disconnect (no answer), written if the wire still works. */
static void say_goodbye(ffb_conn *conn) {
    if (ffb__conn_queue_goodbye(conn) == 0)
        ffb__write_out(conn);
}

static int release_db(ffb_conn *conn, int drop) {
    ffb__conn_error_clear(conn);
    int rc = ffb__need_blocking(conn);
    /* Requests still waiting for a handle go before the detach. */
    if (rc == 0 && conn->held_head)
        rc = ffb__run(conn, ffb__nothing_held, NULL);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    ffb__simple s = {0};
    s.sync = &sync;
    rc = ffb__await(conn, ffb__queue_release(conn, drop, &s), &sync);
    if (rc < 0 && rc > FFB_E_FATAL && drop)
        return rc; /* still attached: the database was not dropped */
    if (conn->io_open && conn->state != FFB__ST_BROKEN)
        say_goodbye(conn);
    ffb__io_close(conn);
    ffb__conn_closed(conn);
    return rc;
}

int ffb_conn_close(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__not_in_callback(conn, "ffb_conn_close()");
    if (rc < 0)
        return rc;
    if (conn->state == FFB__ST_READY && conn->io == FFB_IO_BLOCKING)
        return release_db(conn, 0);
    ffb__conn_close_now(conn);
    ffb__io_close(conn);
    return 0;
}

int ffb_conn_drop_database(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__not_in_callback(conn, "ffb_conn_drop_database()");
    if (rc == 0)
        rc = ffb__need_ready(conn);
    return rc < 0 ? rc : release_db(conn, 1);
}

void ffb_conn_free(ffb_conn *conn) {
    ffb__obj_check(conn, "ffb_conn_free");
    if (!conn || ffb__conn_free_refused(conn))
        return;
    if (conn->state == FFB__ST_READY && conn->io == FFB_IO_BLOCKING &&
        conn->io_open)
        say_goodbye(conn); /* abrupt: nothing is waited for */
    ffb__io_close(conn);
    ffb__conn_destroy(conn);
}

int ffb_conn_ping(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    ffb__simple s = {0};
    s.sync = &sync;
    return ffb__await(conn, ffb__queue_ping(conn, &s), &sync);
}

/* An info request (the database's, or with `tx` the transaction's), its
   answer copied to `out`. */
static int info_wait(ffb_conn *conn, ffb_tx *tx, const uint8_t *items,
                     size_t items_len, uint8_t *out, size_t out_size,
                     size_t *out_len) {
    if ((!items && items_len) || (!out && out_size) || items_len > 65535 ||
        out_size > 0x7FFFFFFF)
        return FFB_E_INVAL;
    if (tx && conn->state != FFB__ST_READY)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the connection is not attached");
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    ffb__simple s = {0};
    s.sync = &sync;
    s.data = out;
    s.data_size = out_size;
    rc = tx ? ffb__tx_queue_info(tx, items, items_len, out_size, &s)
            : ffb__queue_db_info(conn, items, items_len, out_size, &s);
    rc = ffb__await(conn, rc, &sync);
    if ((rc == 0 || !tx) && out_len)
        *out_len = s.data_len;
    return rc;
}

int ffb_conn_info_raw(ffb_conn *conn, const uint8_t *items, size_t items_len,
                      uint8_t *out, size_t out_size, size_t *out_len) {
    if (!conn)
        return FFB_E_INVAL;
    return info_wait(conn, NULL, items, items_len, out, out_size, out_len);
}

int ffb_conn_db_info(ffb_conn *conn, ffb_db_info *out, size_t out_size) {
    if (!conn || !out)
        return FFB_E_INVAL;
    uint8_t buf[1024];
    size_t len = 0;
    const uint8_t *items;
    size_t nitems = ffb__db_info_items(&items);
    int rc = ffb_conn_info_raw(conn, items, nitems, buf, sizeof(buf), &len);
    if (rc < 0)
        return rc;
    ffb_db_info full;
    if ((rc = ffb__db_info_parse(conn, buf, len, &full)) < 0)
        return rc;
    return ffb__give(out, out_size, &full, sizeof(full));
}

int ffb_conn_execute_immediate_params(ffb_conn *conn, ffb_tx *tx,
                                      const char *sql, size_t len,
                                      const ffb_value *params, size_t n) {
    if (!conn || !sql)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    ffb__simple s = {0};
    s.sync = &sync;
    return ffb__await(
        conn, ffb__queue_immediate(conn, tx, sql, len, params, n, &s), &sync);
}

int ffb_conn_execute_immediate(ffb_conn *conn, ffb_tx *tx, const char *sql,
                               size_t len) {
    return ffb_conn_execute_immediate_params(conn, tx, sql, len, NULL, 0);
}

/* SET STATEMENT TIMEOUT / SET SESSION IDLE TIMEOUT, outside any
   transaction (lib/cancel.c builds the text). */
static int set_timeout(ffb_conn *conn, int idle, uint32_t value) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    char sql[96];
    int n = ffb__timeout_sql(conn, idle, value, sql, sizeof(sql));
    if (n < 0)
        return n;
    ffb__sync sync = {0};
    ffb__simple s = {0};
    s.sync = &sync;
    return ffb__await(
        conn, ffb__queue_immediate(conn, NULL, sql, (size_t)n, NULL, 0, &s),
        &sync);
}

int ffb_conn_set_statement_timeout(ffb_conn *conn, uint32_t ms) {
    return set_timeout(conn, 0, ms);
}

int ffb_conn_set_idle_timeout(ffb_conn *conn, uint32_t seconds) {
    return set_timeout(conn, 1, seconds);
}

int ffb_conn_reset(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    unsigned gen = ++conn->reset_gen;
    int queued = ffb__queue_reset(conn, &sync, gen);
    if ((rc = ffb__await(conn, queued, &sync)) < 0)
        return rc;
    /* Only the last rollback carries the completion: check the others. */
    return queued == 0 ? ffb__reset_check(conn, gen) : 0;
}

/* ---- transactions ---- */

static int end_tx(ffb_tx *tx, int op) {
    if (!tx)
        return FFB_E_INVAL;
    ffb_conn *conn = tx->conn;
    int rc = ffb__tx_end_check(tx);
    if (rc == 0)
        rc = ffb__need_blocking(conn);
    if (rc < 0)
        return rc;
    ffb__conn_error_clear(conn);
    ffb__sync sync = {0};
    if ((rc = ffb__await(conn, ffb__tx_queue_end(tx, op, &sync), &sync)) < 0)
        return rc;
    if (sync.rc == 0 && tx->state == FFB__TX_FAILED &&
        (op == FFBP_OP_COMMIT || op == FFBP_OP_ROLLBACK))
        tx->state = FFB__TX_ENDED;
    return sync.rc;
}

int ffb_tx_commit(ffb_tx *tx) { return end_tx(tx, FFBP_OP_COMMIT); }
int ffb_tx_rollback(ffb_tx *tx) { return end_tx(tx, FFBP_OP_ROLLBACK); }
int ffb_tx_commit_retaining(ffb_tx *tx) {
    return end_tx(tx, FFBP_OP_COMMIT_RETAINING);
}
int ffb_tx_rollback_retaining(ffb_tx *tx) {
    return end_tx(tx, FFBP_OP_ROLLBACK_RETAINING);
}

int ffb_tx_info_raw(ffb_tx *tx, const uint8_t *items, size_t items_len,
                    uint8_t *out, size_t out_size, size_t *out_len) {
    if (!tx)
        return FFB_E_INVAL;
    return info_wait(tx->conn, tx, items, items_len, out, out_size, out_len);
}

int ffb_tx_id(ffb_tx *tx, int64_t *out) {
    static const uint8_t items[] = {4 /* isc_info_tra_id */, FFBP_INFO_END};
    if (!tx || !out)
        return FFB_E_INVAL;
    uint8_t buf[64];
    size_t len = 0;
    int rc = ffb_tx_info_raw(tx, items, sizeof(items), buf, sizeof(buf), &len);
    if (rc < 0)
        return rc;
    size_t pos = 0, n;
    uint8_t item;
    const uint8_t *d;
    while ((rc = ffbp_info_next(buf, len, &pos, &item, &d, &n)) == 1)
        if (item == 4) {
            *out = ffbp_le_int(d, n);
            return 0;
        }
    /* The server answered something else than asked: a protocol error. */
    return ffb__fatal(tx->conn, FFB_E_PROTO,
                      "op_info_transaction answer without isc_info_tra_id");
}

/* ---- statements ---- */

static int prepare_wait(ffb_stmt *stmt, ffb_tx *tx, const char *sql,
                        size_t len) {
    ffb_conn *conn = stmt->conn;
    int rc = ffb__need_ready(conn);
    if (rc == 0)
        rc = ffb__need_blocking(conn);
    if (rc < 0)
        return rc;
    ffb__conn_error_clear(conn);
    ffb__sync sync = {0};
    return ffb__await(conn, ffb__stmt_queue_prepare(stmt, tx, sql, len, &sync),
                      &sync);
}

int ffb_stmt_prepare(ffb_stmt *stmt, ffb_tx *tx, const char *sql, size_t len) {
    if (!stmt || !sql)
        return FFB_E_INVAL;
    return prepare_wait(stmt, tx, sql, len);
}

int ffb_conn_prepare(ffb_conn *conn, ffb_tx *tx, const char *sql, size_t len,
                     ffb_stmt **out) {
    if (!conn || !sql || !out)
        return FFB_E_INVAL;
    if (len == (size_t)-1)
        len = strlen(sql);
    ffb_stmt *s;
    int rc = ffb__cache_checkout(conn, tx, sql, len, &s);
    if (rc < 0)
        return rc;
    if (rc == FFB__CACHE_PREPARE && (rc = prepare_wait(s, tx, sql, len)) < 0) {
        ffb_stmt_free(s);
        return rc;
    }
    if (rc != FFB__CACHE_HIT)
        ffb__cache_add(conn, s);
    *out = s;
    return 0;
}

/* Prepare the statement's SQL again, keeping the bound parameters when
   their formats did not change. */
static int reprepare(ffb_stmt *stmt, ffb_tx *tx) {
    ffb__reprepare r;
    int rc = ffb__stmt_reprepare_begin(stmt, &r);
    if (rc < 0)
        return rc;
    rc = prepare_wait(stmt, tx, r.sql, r.sql_len);
    return ffb__stmt_reprepare_end(stmt, &r, rc);
}

static int execute_once(ffb_stmt *stmt, ffb_tx *tx) {
    ffb_conn *conn = stmt->conn;
    ffb__conn_error_clear(conn);
    ffb__sync sync = {0};
    return ffb__await(conn, ffb__stmt_queue_execute(stmt, tx, &sync), &sync);
}

int ffb_stmt_execute(ffb_stmt *stmt, ffb_tx *tx) {
    if (!stmt)
        return FFB_E_INVAL;
    int rc = ffb__need_blocking(stmt->conn);
    if (rc < 0)
        return rc;
    rc = execute_once(stmt, tx);
    int retried = 0;
    for (;;) {
        int next = ffb__stmt_execute_next(stmt, &rc, &retried);
        if (next == FFB__EXEC_DONE)
            return rc;
        if (next == FFB__EXEC_REPREPARE && (rc = reprepare(stmt, tx)) < 0)
            continue; /* the failed prepare is the answer */
        rc = execute_once(stmt, tx);
    }
}

int ffb_stmt_fetch(ffb_stmt *stmt) {
    if (!stmt)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    int rc;
    while ((rc = ffb__stmt_fetch(stmt)) == FFB_E_AGAIN)
        if ((rc = wait_again(conn, ffb__stmt_rows_ready, stmt)) < 0)
            return rc;
    return send_ahead(conn, rc);
}

int ffb_stmt_fetch_scroll(ffb_stmt *stmt, int op, int32_t pos,
                          unsigned rows) {
    if (!stmt)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    ffb__conn_error_clear(conn);
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    rc = ffb__await(conn, ffb__stmt_queue_scroll(stmt, op, pos, rows, &sync),
                    &sync);
    /* The rows are buffered: the first becomes current (0 when none). */
    return rc < 0 ? rc : ffb__stmt_fetch(stmt);
}

int ffb_stmt_record_count(ffb_stmt *stmt, int64_t *out) {
    if (!stmt || !out)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    ffb__conn_error_clear(conn);
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    rc = ffb__await(conn, ffb__stmt_queue_record_count(stmt, &sync), &sync);
    if (rc == 0)
        *out = sync.rows;
    return rc;
}

int ffb_stmt_close_cursor(ffb_stmt *stmt) {
    if (!stmt)
        return FFB_E_INVAL;
    int rc;
    while ((rc = ffb__stmt_close_cursor(stmt, 0)) == FFB_E_AGAIN)
        if ((rc = wait_again(stmt->conn, ffb__stmt_exec_sent, stmt)) < 0)
            return rc;
    return rc;
}

int ffb_stmt_plan(ffb_stmt *stmt, int explain, const char **out) {
    if (!stmt || !out)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    const char *t = ffb__stmt_plan_known(stmt, explain);
    if (!t) {
        int rc = ffb__need_blocking(conn);
        if (rc < 0)
            return rc;
        ffb__sync sync = {0};
        if ((rc = ffb__await(conn, ffb__stmt_queue_plan(stmt, explain, &sync),
                             &sync)) < 0)
            return rc;
        if (!(t = ffb__stmt_plan_known(stmt, explain)))
            return ffb__error_set(&conn->err, FFB_E_PROTO,
                                  "no plan in the answer");
    }
    *out = t;
    return 0;
}

/* ---- blobs ---- */

int ffb_blob_write(ffb_blob *b, const void *data, size_t len) {
    if (!b || (!data && len))
        return FFB_E_INVAL;
    return send_ahead(b->conn, ffb__blob_write(b, data, len));
}

static int finish_write(ffb_blob *b, int op, uint8_t id_out[8]) {
    ffb_conn *conn = b->conn;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    rc = ffb__await(conn, ffb__blob_queue_finish(b, op, &sync), &sync);
    return ffb__blob_finished(b, rc, id_out);
}

int ffb_blob_close(ffb_blob *b, uint8_t id_out[8]) {
    if (!b)
        return FFB_E_INVAL;
    return finish_write(b, FFBP_OP_CLOSE_BLOB, id_out);
}

int ffb_blob_cancel(ffb_blob *b) {
    if (!b)
        return FFB_E_INVAL;
    return finish_write(b, FFBP_OP_CANCEL_BLOB, NULL);
}

int ffb_blob_read(ffb_blob *b, void *buf, size_t size, size_t *got) {
    if (!b || (!buf && size) || !got)
        return FFB_E_INVAL;
    int rc;
    while ((rc = ffb__blob_read(b, buf, size, got)) == FFB_E_AGAIN)
        if ((rc = wait_again(b->conn, NULL, NULL)) < 0)
            return rc;
    if (rc == 0 && *got) {
        /* These bytes are the caller's: a failure writing the read-ahead
           is reported by the next call. */
        (void)send_ahead(b->conn, 0);
        return 0;
    }
    return send_ahead(b->conn, rc);
}

int ffb_blob_read_all(ffb_blob *b, const uint8_t **data, size_t *len) {
    if (!b || !data || !len)
        return FFB_E_INVAL;
    int rc;
    while ((rc = ffb__blob_read_all(b, data, len)) == FFB_E_AGAIN)
        if ((rc = wait_again(b->conn, NULL, NULL)) < 0)
            return rc;
    return send_ahead(b->conn, rc);
}

int ffb_blob_get_info(ffb_blob *b, ffb_blob_info *out, size_t out_size) {
    if (!b || !out)
        return FFB_E_INVAL;
    ffb_conn *conn = b->conn;
    ffb_blob_info full;
    ffb__sync sync = {0};
    int rc;
    /* Nothing may be queued with `sync` unless this call waits for it. */
    if (!b->have_info && !b->failed && (rc = ffb__need_blocking(conn)) < 0)
        return rc;
    while ((rc = ffb__blob_info(b, &full, &sync)) == FFB_E_AGAIN)
        if ((rc = ffb__run(conn, ffb__blob_info_known, b)) < 0)
            return rc;
    return rc < 0 ? rc : ffb__give(out, out_size, &full, sizeof(full));
}

int ffb_blob_seek(ffb_blob *b, int whence, int64_t offset, int64_t *pos_out) {
    if (!b || whence < 0 || whence > 2)
        return FFB_E_INVAL;
    ffb_conn *conn = b->conn;
    int rc = b->cached ? 0 : ffb__need_blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    if ((rc = ffb__await(conn, ffb__blob_queue_seek(b, whence, offset, &sync),
                         &sync)) < 0 ||
        (rc = ffb__blob_seek_done(b, 0)) < 0)
        return rc;
    if (pos_out)
        *pos_out = b->position;
    return 0;
}

/* ---- batch ---- */

int ffb_batch_execute(ffb_batch *b, ffb_tx *tx) {
    ffb_conn *conn = b ? ffb__batch_conn(b) : NULL;
    if (!conn || !tx)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    return ffb__await(conn, ffb__batch_queue_execute(b, tx, &sync), &sync);
}

/* ---- two-phase commit ---- */

int ffb_tx_prepare(ffb_tx *tx, const void *msg, size_t len) {
    if (!tx)
        return FFB_E_INVAL;
    ffb_conn *conn = tx->conn;
    ffb__conn_error_clear(conn);
    int rc = ffb__prepare_msg_check(tx, msg, len);
    if (rc == 0)
        rc = ffb__need_blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    return ffb__await(conn, ffb__tx_queue_prepare(tx, msg, len, &sync), &sync);
}

int ffb_conn_limbo(ffb_conn *conn, int64_t *ids, size_t max, size_t *count) {
    static const uint8_t items[] = {FFB_INFO_LIMBO, FFBP_INFO_END};
    if (!conn || (!ids && max) || !count)
        return FFB_E_INVAL;
    /* 11 bytes a transaction (item, length, 8-byte number), the end; at
       most what an info answer's 16-bit lengths allow. */
    size_t size = max < 5000 ? 64 + 11 * max : 65535;
    uint8_t *buf = ffb__malloc(conn->alloc, size);
    if (!buf)
        return FFB_E_NOMEM;
    size_t len = 0;
    int rc = info_wait(conn, NULL, items, sizeof(items), buf, size, &len);
    if (rc == 0) {
        rc = ffb_limbo_parse(buf, len, ids, max, count);
        if (rc == FFB_E_PROTO)
            rc = ffb__fatal(conn, FFB_E_PROTO,
                            "malformed isc_info_limbo answer");
    }
    ffb__free(conn->alloc, buf);
    return rc;
}

/* One phase of a distributed transaction: every participant's request is
   written before any answer is waited for, so the connections' round
   trips overlap. The first failure is returned (and kept in the dtx). */
static int dtx_phase(ffb_dtx *d, int what, const void *msg, size_t len) {
    for (size_t i = 0; i < d->n; i++) {
        ffb__dtx_part *p = &d->p[i];
        ffb_conn *conn = p->tx->conn;
        p->queued = ffb__dtx_queue(d, i, what, msg, len);
        if (p->queued == 0 && (p->queued = ffb__engine_flush(conn)) == 0)
            p->queued = ffb__write_out(conn);
    }
    int first = 0;
    for (size_t i = 0; i < d->n; i++) {
        ffb__dtx_part *p = &d->p[i];
        int rc = ffb__dtx_answer(d, i, what,
                                 ffb__await(p->tx->conn, p->queued, &p->sync));
        if (rc < 0 && first == 0)
            first = rc;
    }
    return first;
}

int ffb_dtx_prepare(ffb_dtx *d, const void *msg, size_t len) {
    if (!d || (!msg && len))
        return FFB_E_INVAL;
    int rc = ffb__dtx_check(d, FFB__DTX_PREPARE);
    if (rc < 0)
        return rc;
    if ((rc = dtx_phase(d, FFB__DTX_PREPARE, msg, len)) == 0) {
        d->state = FFB__DTX_PREPARED;
        return 0;
    }
    /* Phase one failed somewhere: every participant is rolled back; the
       failure reported is the prepare's (d->failed stays set, so the
       rollbacks' do not replace it). */
    (void)dtx_phase(d, FFB__DTX_ROLLBACK, NULL, 0);
    d->state = FFB__DTX_ENDED;
    return rc;
}

int ffb_dtx_commit(ffb_dtx *d) {
    if (!d)
        return FFB_E_INVAL;
    int rc = ffb__dtx_check(d, FFB__DTX_COMMIT);
    if (rc < 0)
        return rc;
    if (d->state == FFB__DTX_ACTIVE && (rc = ffb_dtx_prepare(d, NULL, 0)) < 0)
        return rc;
    /* The decision is commit: from here on never roll back. */
    d->state = FFB__DTX_COMMITTING;
    if ((rc = dtx_phase(d, FFB__DTX_COMMIT, NULL, 0)) == 0)
        d->state = FFB__DTX_ENDED;
    return rc;
}

int ffb_dtx_rollback(ffb_dtx *d) {
    if (!d)
        return FFB_E_INVAL;
    int rc = ffb__dtx_check(d, FFB__DTX_ROLLBACK);
    if (rc < 0)
        return rc;
    rc = dtx_phase(d, FFB__DTX_ROLLBACK, NULL, 0);
    d->state = FFB__DTX_ENDED;
    return rc;
}

/* ---- services (lib/service.c) ---- */

int ffb_svc_connect(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    return connect_blocking(conn, FFB__HS_SERVICE, NULL);
}

int ffb_svc_server_info(ffb_conn *conn, ffb_svc_info *out,
                        size_t out_size) {
    if (!conn || !out)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    return ffb__await(
        conn, ffb__svc_queue_server_info(conn, out, out_size, &sync), &sync);
}

int ffb_svc_run(ffb_conn *conn, const uint8_t *spb, size_t spb_len,
                const ffb_svc_io *io) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    return ffb__await(conn, ffb__svc_queue_run(conn, spb, spb_len, io, &sync),
                      &sync);
}

static int svc_builtin(ffb_conn *conn, const ffb__svc_req *q) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    return ffb__await(conn, ffb__svc_queue_builtin(conn, q, &sync), &sync);
}

int ffb_svc_db_stats(ffb_conn *conn, const char *db, unsigned options,
                     ffb_svc_line_cb on_line, void *data) {
    ffb__svc_req q = {.kind = FFB__SVC_STATS, .db = db, .options = options,
                      .on_line = on_line, .data = data};
    return svc_builtin(conn, &q);
}

int ffb_svc_fb_log(ffb_conn *conn, ffb_svc_line_cb on_line, void *data) {
    ffb__svc_req q = {.kind = FFB__SVC_LOG, .on_line = on_line, .data = data};
    return svc_builtin(conn, &q);
}

int ffb_svc_validate(ffb_conn *conn, const char *db, ffb_svc_line_cb on_line,
                     void *data) {
    ffb__svc_req q = {.kind = FFB__SVC_VALIDATE, .db = db,
                      .on_line = on_line, .data = data};
    return svc_builtin(conn, &q);
}

int ffb_svc_repair(ffb_conn *conn, const char *db, unsigned options,
                   ffb_svc_line_cb on_line, void *data) {
    ffb__svc_req q = {.kind = FFB__SVC_REPAIR, .db = db, .options = options,
                      .on_line = on_line, .data = data};
    return svc_builtin(conn, &q);
}

int ffb_svc_sweep(ffb_conn *conn, const char *db) {
    return ffb_svc_repair(conn, db, FFB_SVC_REPAIR_SWEEP, NULL, NULL);
}

int ffb_svc_set_properties(ffb_conn *conn, const char *db,
                           const ffb_svc_properties *p) {
    if (!p)
        return FFB_E_INVAL;
    ffb__svc_req q = {.kind = FFB__SVC_PROPERTIES, .db = db, .props = p};
    return svc_builtin(conn, &q);
}

int ffb_svc_backup(ffb_conn *conn, const char *db, unsigned options,
                   ffb_svc_data_cb on_data, void *data) {
    if (!on_data)
        return FFB_E_INVAL;
    ffb__svc_req q = {.kind = FFB__SVC_BACKUP, .db = db, .options = options,
                      .on_data = on_data, .data = data};
    return svc_builtin(conn, &q);
}

int ffb_svc_restore(ffb_conn *conn, const char *target, int replace,
                    ffb_svc_input_cb on_input, ffb_svc_line_cb on_line,
                    void *data) {
    if (!on_input)
        return FFB_E_INVAL;
    ffb__svc_req q = {.kind = FFB__SVC_RESTORE, .target = target,
                      .replace = replace, .on_input = on_input,
                      .on_line = on_line, .data = data};
    return svc_builtin(conn, &q);
}

/* Local files for the backup and restore helpers. */
typedef struct svc_file {
    FILE *f;
    int failed;
    ffb_svc_line_cb on_line;
    void *data;
} svc_file;

static int file_write(const uint8_t *p, size_t len, void *data) {
    svc_file *sf = data;
    if (fwrite(p, 1, len, sf->f) != len) {
        sf->failed = 1;
        return 1; /* cancel where the server can */
    }
    return 0;
}

static int file_read(uint8_t *buf, size_t size, size_t *got, void *data) {
    svc_file *sf = data;
    *got = fread(buf, 1, size, sf->f);
    if (*got == 0 && ferror(sf->f)) {
        sf->failed = 1;
        return 1;
    }
    return 0;
}

static int file_line(const char *line, size_t len, void *data) {
    svc_file *sf = data;
    return sf->on_line ? sf->on_line(line, len, sf->data) : 0;
}

int ffb_svc_backup_to_file(ffb_conn *conn, const char *db, const char *path) {
    if (!conn || !path)
        return FFB_E_INVAL;
    int std = strcmp(path, "-") == 0;
    svc_file sf = {std ? stdout : fopen(path, "wb"), 0, NULL, NULL};
    if (!sf.f)
        return ffb__error_set(&conn->err, FFB_E_IO, "cannot create %s",
                              path);
    int rc = ffb_svc_backup(conn, db, 0, file_write, &sf);
    if (fflush(sf.f) != 0)
        sf.failed = 1;
    if (!std && fclose(sf.f) != 0)
        sf.failed = 1;
    if (sf.failed)
        return ffb__error_set(&conn->err, FFB_E_IO, "cannot write %s", path);
    return rc;
}

int ffb_svc_restore_from_file(ffb_conn *conn, const char *path,
                              const char *target, int replace,
                              ffb_svc_line_cb on_line, void *data) {
    if (!conn || !path)
        return FFB_E_INVAL;
    int std = strcmp(path, "-") == 0;
    svc_file sf = {std ? stdin : fopen(path, "rb"), 0, on_line, data};
    if (!sf.f)
        return ffb__error_set(&conn->err, FFB_E_IO, "cannot open %s", path);
    int rc = ffb_svc_restore(conn, target, replace, file_read,
                             on_line ? file_line : NULL, &sf);
    if (!std)
        fclose(sf.f);
    if (sf.failed)
        return ffb__error_set(&conn->err, FFB_E_IO, "cannot read %s", path);
    return rc;
}

/* ---- events (lib/events.c; the aux socket: lib/net.c) ---- */

/* The aux connection's port is known: connect it before anything else is
   waited for on the main connection (the server serves nothing there
   until it is connected, reference 03 C.5.2). */
static int aux_open(ffb_events *ev) {
    ffb_conn *conn = ev->conn;
    int rc = ffb__wait(conn, &ev->cr_sync.done);
    if (rc < 0)
        return rc;
    if (ev->aux_state != FFB__AUX_PORT)
        return ev->cr_sync.rc < 0 ? ev->cr_sync.rc : FFB_E_PROTO;
    int fd = -1;
    int t = conn->connect_timeout_ms > 0 ? conn->connect_timeout_ms : -1;
    rc = ffb__aux_connect(conn, ev->aux_port, t, &fd);
    if (rc < 0) {
        ffb_error keep = conn->err;
        if (ffb__events_aux_failed(ev) == 0)
            ffb__write_out(conn);
        conn->err = keep;
        return rc;
    }
    ffb__events_aux_open(ev, fd);
    return 0;
}

/* One read of the aux connection, bounded by `deadline` (-1: none): what
   came is delivered, the re-registrations it queued are written and their
   answers read. 0 when the time ran out, 1 when something was read (its
   callbacks added to *calls), or an error. */
static int aux_pump(ffb_events *ev, int64_t deadline, int *calls) {
    ffb_conn *conn = ev->conn;
    if (ev->aux_fd < 0)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "no aux connection: register an event first");
    uint8_t buf[8192];
    int t = -1;
    if (deadline >= 0) {
        int64_t left = deadline - ffb_now_ms();
        t = left <= 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left;
    }
    int n = ffb__aux_recv(conn, ev->aux_fd, buf, sizeof(buf), t);
    if (n == 0)
        return 0;
    if (n == FFB_E_CLOSED)
        n = 0; /* end of file */
    else if (n < 0)
        return n;
    int got = 0;
    int rc = ffb__events_input(ev, buf, (size_t)n, &got);
    *calls += got;
    /* The re-registrations go out now, in one write, and their answers
       are read before returning. */
    if (ev->owed > 0 && conn->state == FFB__ST_READY) {
        int r2 = ffb__run(conn, ffb__events_owed_none, ev);
        if (r2 < 0 && rc >= 0)
            rc = r2;
    }
    if (rc < 0)
        return rc;
    if (ev->requeue_failed) {
        ev->requeue_failed = 0;
        return ffb__error_set(&conn->err, FFB_E_SERVER,
                              "the server refused to re-register an event "
                              "after its notification");
    }
    return 1;
}

/* The start of a blocking events call: 0, or why it may not run now. */
static int events_blocking(ffb_events *ev, const char *what) {
    if (!ev)
        return FFB_E_INVAL;
    int rc = ffb__blocking(ev->conn);
    if (rc == 0 && ev->in_callback)
        rc = ffb__error_set(&ev->conn->err, FFB_E_STATE,
                            "%s inside an event callback", what);
    return rc;
}

static int register_wait(ffb_events *ev, const char *name, ffb_event_cb cb,
                         void *data, ffb__sync *sync) {
    ffb_conn *conn = ev->conn;
    int rc = ffb__events_queue_register(ev, name, cb, data, sync, 0);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (ev->aux_state == FFB__AUX_REQUESTED) {
        rc = aux_open(ev);
        if (rc < 0) {
            /* The registration's answer (isc_net_event_connect_err) is
               read, so that the connection stays in step. */
            int r2 = ffb__wait(conn, &sync->done);
            return r2 < 0 && r2 <= FFB_E_FATAL ? r2 : rc;
        }
    }
    rc = ffb__await(conn, 0, sync);
    if (rc < 0)
        return rc;
    /* The baseline (the server answers a new registration at once with
       the current count) is taken in before returning: every post
       committed after this call is then counted. */
    int64_t limit = conn->io_timeout_ms > 0 ? conn->io_timeout_ms : 60000;
    int64_t deadline = ffb_now_ms() + limit;
    int calls = 0;
    while (!ffb__events_has_baseline(ev, name)) {
        rc = aux_pump(ev, deadline, &calls);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return ffb__error_set(&conn->err, FFB_E_TIMEOUT,
                                  "the server did not answer the "
                                  "registration of \"%s\" on the aux "
                                  "connection within %lld ms",
                                  name, (long long)limit);
    }
    return 0;
}

int ffb_events_register(ffb_events *ev, const char *name, ffb_event_cb cb,
                        void *data) {
    int rc = events_blocking(ev, "ffb_events_register() (use the queue twin)");
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    rc = register_wait(ev, name, cb, data, &sync);
    ffb__events_forget_sync(ev->conn, &sync);
    return rc;
}

int ffb_events_unregister(ffb_events *ev, const char *name) {
    /* Allowed inside an event callback: it reads only the main
       connection. */
    if (!ev)
        return FFB_E_INVAL;
    int rc = ffb__blocking(ev->conn);
    if (rc < 0)
        return rc;
    ffb_conn *conn = ev->conn;
    ffb__sync sync = {0};
    rc = ffb__events_queue_unregister(ev, name, &sync);
    if (rc == 0)
        rc = ffb__await(conn, 0, &sync);
    ffb__events_forget_sync(conn, &sync);
    return rc;
}

int ffb_events_wait(ffb_events *ev, int timeout_ms) {
    int rc = events_blocking(ev, "ffb_events_wait()");
    if (rc < 0)
        return rc;
    ffb_conn *conn = ev->conn;
    int64_t deadline = timeout_ms >= 0 ? ffb_now_ms() + timeout_ms : -1;
    int calls = 0;
    for (;;) {
        rc = aux_pump(ev, deadline, &calls);
        if (rc < 0)
            return rc;
        if (calls > 0)
            return calls;
        if (rc == 0)
            return ffb__error_set(&conn->err, FFB_E_TIMEOUT,
                                  "no event within %d ms", timeout_ms);
    }
}

void ffb_events_free(ffb_events *ev) {
    if (!ev)
        return;
    ffb_conn *conn = ev->conn;
    if (ev->in_callback) {
        ffb__error_set(&conn->err, FFB_E_STATE,
                       "ffb_events_free() inside an event callback is "
                       "ignored");
        return;
    }
    if (conn->state == FFB__ST_READY && !conn->in_callback) {
        ffb__sync sync = {0};
        int rc = ffb__events_cancel_all(
            ev, conn->io == FFB_IO_BLOCKING ? &sync : NULL);
        if (rc == 0 && conn->io == FFB_IO_BLOCKING)
            ffb__run(conn, ffb__events_owed_none, ev);
        ffb__events_forget_sync(conn, &sync);
    }
    ffb__events_destroy(ev);
}

/* ---- arrays ---- */

/* A transaction whose start is still owed (lazy): flush it and wait for
   its answer, so that a slice can name its handle. */
static int tx_started(ffb_conn *conn, const void *arg) {
    (void)conn;
    return ((const ffb_tx *)arg)->state != FFB__TX_PENDING;
}

static int array_tx_ready(ffb_conn *conn, ffb_tx *tx) {
    if (!tx || tx->conn != conn || tx->state != FFB__TX_PENDING)
        return 0;
    int rc = ffb__engine_flush(conn);
    if (rc < 0)
        return ffb__engine_fail(conn, rc);
    return ffb__run(conn, tx_started, tx);
}

int ffb_array_lookup(ffb_conn *conn, ffb_tx *tx, const char *relation,
                     const char *field, ffb_array_desc *out,
                     size_t out_size) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc < 0)
        return rc;
    ffb_array_desc d;
    if ((rc = ffb__array_lookup_begin(conn, relation, field, &d,
                                      out_size < sizeof(d) ? 0
                                                           : sizeof(d))) < 0)
        return rc;
    if (rc == 0) {
        ffb__sync sync = {0};
        ffb_stmt *s = NULL;
        rc = ffb__await(conn, ffb__array_queue_lookup(conn, tx, &d, &sync, &s),
                        &sync);
        if (s)
            rc = ffb__array_lookup_finish(conn, s, rc, &d);
        if (rc < 0)
            return rc;
    }
    *out = d;
    return 0;
}

int ffb_stmt_array_desc(ffb_stmt *stmt, unsigned col, ffb_tx *tx,
                        ffb_array_desc *out, size_t out_size) {
    if (!stmt)
        return FFB_E_INVAL;
    ffb_column_info ci;
    int rc = ffb_stmt_column_info(stmt, col, &ci, sizeof(ci));
    if (rc < 0)
        return rc;
    if (ci.sqltype != FFB_SQL_ARRAY || !ci.relation[0] || !ci.field[0])
        return ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                              "column %u is not an array column of a table",
                              col + 1);
    return ffb_array_lookup(stmt->conn, tx, ci.relation, ci.field, out,
                            out_size);
}

int ffb_array_get(ffb_conn *conn, ffb_tx *tx, const ffb_array_desc *desc,
                  const uint8_t id[8], void *buf, size_t size,
                  size_t *out_len) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc == 0)
        rc = array_tx_ready(conn, tx);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    return ffb__await(conn,
                      ffb__array_queue_get(conn, tx, desc, id, buf, size,
                                           out_len, &sync),
                      &sync);
}

int ffb_array_put(ffb_conn *conn, ffb_tx *tx, const ffb_array_desc *desc,
                  const void *buf, size_t len, uint8_t id_out[8]) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__blocking(conn);
    if (rc == 0)
        rc = array_tx_ready(conn, tx);
    if (rc < 0)
        return rc;
    ffb__sync sync = {0};
    return ffb__await(conn,
                      ffb__array_queue_put(conn, tx, desc, buf, len, id_out,
                                           &sync),
                      &sync);
}
