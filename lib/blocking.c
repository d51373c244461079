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
#include <string.h>

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
