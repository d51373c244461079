/*
 * What a driver of external I/O (FFB_IO_EXTERNAL) needs from a connection
 * besides the byte pump: where to open its stream, a way to report that
 * the stream failed, and one pointer for its own state (an event-loop
 * adapter such as lib/uv.c keeps its handles there).
 */
#include "lib/internal.h"

const char *ffb_conn_host(const ffb_conn *conn) {
    return conn && conn->host ? conn->host : "";
}

const char *ffb_conn_port(const ffb_conn *conn) {
    return conn && conn->port ? conn->port : "";
}

int ffb_conn_feed_error(ffb_conn *conn, int code, const char *message) {
    if (!conn || (code > FFB_E_FATAL && code != FFB_E_TIMEOUT))
        return FFB_E_INVAL;
    if (conn->state == FFB__ST_BROKEN)
        return ffb__broken_code(conn);
    if (conn->state == FFB__ST_NEW || conn->state == FFB__ST_CLOSED)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the connection is not started");
    ffb__error_set(&conn->err, code, "%s",
                   message && message[0] ? message : ffb_strerror(code));
    return ffb__engine_break(conn, code);
}

void ffb_conn_set_io_data(ffb_conn *conn, void *data) {
    if (conn)
        conn->io_data = data;
}

void *ffb_conn_io_data(const ffb_conn *conn) {
    return conn ? conn->io_data : NULL;
}
