/*
 * A small event loop for FFB_IO_EXTERNAL in tests: the test owns the
 * socket and moves bytes between it and the byte pump (ffb_conn_output/
 * output_done/feed/feed_eof), waits with poll() no longer than
 * ffb_conn_deadline(), and tells the connection the time
 * (ffb_conn_expire). Only the public API: what an application with its
 * own event loop does.
 */
#ifndef FFB_TEST_EXTIO_H
#define FFB_TEST_EXTIO_H

#include <stddef.h>
#include <stdint.h>

#include "include/fastfb.h"

typedef struct extio {
    int fd;
    ffb_conn *conn;
    size_t turns;   /* pump turns */
    size_t writes;  /* send() calls that wrote bytes */
} extio;

/* Open TCP to the host and port of a "host/port:path" dsn; 0 or -1. */
int extio_open(extio *x, ffb_conn *conn, const char *dsn);
void extio_close(extio *x);
/* One turn: write what is pending, wait (at most wait_ms, and never past
   the connection's deadline) for bytes, feed them, expire. 0 or the
   connection's error code. */
int extio_pump(extio *x, int wait_ms);
/* ffb_conn_start(), then pump until attached: 1 or an error code. */
int extio_connect(extio *x);
/* ffb_conn_next_result(), pumping while it says FFB_E_AGAIN. */
int extio_next(extio *x, const ffb_result **res);
/* The next row: ffb_stmt_fetch(), and on FFB_E_AGAIN ffb_stmt_queue_fetch()
   and its result. 1 (a row), 0 (end), or an error code. */
int extio_fetch(extio *x, ffb_stmt *stmt);

#endif
