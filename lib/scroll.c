/*
 * Scrollable cursors (protocol 18, Firebird 5; reference 03, C.8): the
 * execution's cursor flags, op_fetch_scroll and op_info_cursor's record
 * count. The rows travel as for op_fetch and land in the statement's row
 * buffer (lib/stmt.c); ffb_stmt_fetch() reads them. Below protocol 18
 * every call here answers FFB_E_UNSUPPORTED and sends nothing.
 */
#include <string.h>

#include "lib/internal.h"
#include "proto/scroll.h"

static int need_p18(ffb_conn *conn, const char *what) {
    if (conn->protocol >= 18)
        return 0;
    return ffb__error_set(&conn->err, FFB_E_UNSUPPORTED,
                          "%s needs protocol 18 (Firebird 5), the server "
                          "speaks %d",
                          what, conn->protocol);
}

int ffb_stmt_set_scrollable(ffb_stmt *stmt, int on) {
    if (!stmt)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    ffb__conn_error_clear(conn);
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (on && (rc = need_p18(conn, "a scrollable cursor")) < 0)
        return rc;
    stmt->scroll_want = on != 0;
    return 0;
}

int ffb_stmt_is_scrollable(const ffb_stmt *stmt) {
    return stmt && stmt->cursor_open && stmt->scroll_open;
}

/* The checks every request on an open scrollable cursor makes: the
   execution's first fetch must have been answered (C.14: op_info_cursor
   before it spoils the cursor; a move before it would race the rows). */
static int cursor_ready(ffb_stmt *stmt, const char *what) {
    ffb_conn *conn = stmt->conn;
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if ((rc = need_p18(conn, what)) < 0)
        return rc;
    if (stmt->exec_held || stmt->exec_inflight)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "%s: the execution's first fetch has not been "
                              "answered yet",
                              what);
    if (!stmt->cursor_open || !stmt->scroll_open)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "%s: no scrollable cursor is open (call "
                              "ffb_stmt_set_scrollable() before executing)",
                              what);
    if (stmt->fetches_inflight)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "%s: a fetch of this cursor is still in flight",
                              what);
    return 0;
}

int ffb__stmt_queue_scroll(ffb_stmt *stmt, int op, int32_t pos, unsigned rows,
                           ffb__sync *sync) {
    ffb_conn *conn = stmt->conn;
    if (op < FFB_FETCH_NEXT || op > FFB_FETCH_RELATIVE)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "unknown fetch operation %d", op);
    if (rows > 65535)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "%u rows: at most 65535 per fetch", rows);
    int rc = cursor_ready(stmt, "op_fetch_scroll");
    if (rc < 0)
        return rc;
    /* The server returns more than one row for next and prior only. */
    uint16_t count = op == FFB_FETCH_NEXT || op == FFB_FETCH_PRIOR
                         ? (uint16_t)(rows ? rows : 1)
                         : 1;
    if (op != FFB_FETCH_ABSOLUTE && op != FFB_FETCH_RELATIVE)
        pos = 0;
    return ffb__stmt_queue_fetch_one(stmt, op, pos, count, sync, 1);
}

/* ---- record count ----------------------------------------------------- */

static int count_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    ffb_stmt *stmt = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    int rc = 0;
    if (!r) {
        rc = FFB_E_PROTO;
    } else if (ffb__status_is_error(&r->status)) {
        ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, &r->status,
                              "op_info_cursor failed");
    } else {
        int64_t n;
        if (ffbp_parse_cursor_info(r->data.p, r->data.len, &n) != FFBP_OK) {
            rc = ffb__error_set(&conn->err, FFB_E_PROTO,
                                "the answer to op_info_cursor holds no "
                                "record count (%u bytes)",
                                (unsigned)r->data.len);
        } else if (p->sync) {
            p->sync->has_rows = 1;
            p->sync->rows = n;
        }
    }
    if (p->sync)
        p->sync->done = 1;
    ffb__stmt_unref(stmt);
    return rc;
}

int ffb__stmt_queue_record_count(ffb_stmt *stmt, ffb__sync *sync) {
    ffb_conn *conn = stmt->conn;
    int rc = cursor_ready(stmt, "op_info_cursor");
    if (rc < 0)
        return rc;
    static const uint8_t items[] = {FFBP_INF_RECORD_COUNT, FFBP_INFO_END};
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_info(&w, FFBP_OP_INFO_CURSOR, stmt->handle, 0, items,
                  sizeof(items), 256);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
        return rc;
    ffb__pending *p =
        ffb__engine_expect(conn, FFBP_OP_INFO_CURSOR, count_reply, stmt);
    if (!p)
        return ffb__engine_fail(conn, FFB_E_NOMEM);
    p->sync = sync;
    p->gen = stmt->gen;
    p->completes = 1;
    stmt->refs++;
    return 0;
}

/* ---- queue twins ------------------------------------------------------- */

int ffb_stmt_queue_fetch_scroll(ffb_stmt *stmt, int op, int32_t pos,
                                unsigned rows, ffb_cb cb, void *data) {
    if (!stmt)
        return FFB_E_INVAL;
    struct ffb_result *r =
        ffb__result_for(stmt->conn, FFB_OP_FETCH_SCROLL, cb, data, stmt, NULL);
    if (!r)
        return FFB_E_NOMEM;
    return ffb__result_queued(
        stmt->conn, r, ffb__stmt_queue_scroll(stmt, op, pos, rows, &r->sync));
}

int ffb_stmt_queue_record_count(ffb_stmt *stmt, ffb_cb cb, void *data) {
    if (!stmt)
        return FFB_E_INVAL;
    struct ffb_result *r =
        ffb__result_for(stmt->conn, FFB_OP_RECORD_COUNT, cb, data, stmt, NULL);
    if (!r)
        return FFB_E_NOMEM;
    return ffb__result_queued(stmt->conn, r,
                              ffb__stmt_queue_record_count(stmt, &r->sync));
}
