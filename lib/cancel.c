/*
 * Cancellation and timeouts (docs/cancel.md): op_cancel asked from any
 * thread, the statement timeout of op_execute (protocol 16) and the SQL
 * that sets the attachment's timeouts. The blocking halves live in
 * lib/blocking.c; op_cancel reaches the wire through the engine
 * (ffb__engine_cancel_request/_take, written by lib/run.c's loop).
 */
#include <stdio.h>

#include "lib/internal.h"

int ffb_conn_cancel(ffb_conn *conn, int kind) {
    if (!conn || kind < FFB_CANCEL_DISABLE || kind > FFB_CANCEL_ABORT)
        return FFB_E_INVAL;
    if (conn->io == FFB_IO_EXTERNAL) {
        /* The application's own thread, like every other call. */
        int rc = ffb__need_ready(conn);
        if (rc < 0)
            return rc;
        rc = ffb__engine_cancel_request(conn, kind);
        if (rc < 0)
            return rc;
        rc = ffb__engine_cancel_take(conn);
        return rc < 0 ? rc : 0;
    }
    /* Any thread: record, then wake the blocking call's wait. Nothing
       else of the connection is touched here. */
    int rc = ffb__engine_cancel_request(conn, kind);
    if (rc == 0)
        ffb__io_wake(conn);
    return rc;
}

int ffb_stmt_set_timeout(ffb_stmt *stmt, uint32_t ms) {
    if (!stmt)
        return FFB_E_INVAL;
    ffb__obj_check(stmt, "ffb_stmt_set_timeout");
    ffb_conn *conn = stmt->conn;
    if (ms && conn->protocol < 16)
        return ffb__error_set(&conn->err, FFB_E_UNSUPPORTED,
                              "statement timeouts need protocol 16 "
                              "(Firebird 4 or later); the server speaks "
                              "protocol %d",
                              conn->protocol);
    stmt->timeout_ms = ms;
    return 0;
}

int ffb__timeout_sql(ffb_conn *conn, int idle, uint32_t value, char *buf,
                     size_t size) {
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (conn->protocol < 16)
        return ffb__error_set(&conn->err, FFB_E_UNSUPPORTED,
                              "%s timeouts need Firebird 4 or later "
                              "(protocol 16); the server speaks protocol %d",
                              idle ? "session idle" : "statement",
                              conn->protocol);
    /* The unit always: the default units are SECOND (statement) and
       MINUTE (idle), whatever the caller meant (reference 03, C.7.2). */
    int n = snprintf(buf, size,
                     idle ? "SET SESSION IDLE TIMEOUT %lu SECOND"
                          : "SET STATEMENT TIMEOUT %lu MILLISECOND",
                     (unsigned long)value);
    return n > 0 && (size_t)n < size ? n : FFB_E_INVAL;
}
