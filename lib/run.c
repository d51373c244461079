/*
 * The blocking loop: "run until this request is done". It is the only
 * place that waits, and with the socket driver (lib/net.c) the only code
 * that calls a transport. Everything below the public blocking calls
 * queues requests on the engine and returns; a blocking call is its queue
 * twin followed by ffb__run() on the request's completion.
 *
 * Each turn: stage -> wire (unless only deferred requests are staged),
 * hand the output to the transport, stop when the condition holds, parse
 * what was received already, then wait for bytes - never longer than the
 * engine's next deadline, which is then given back to it as the time
 * (ffb_conn_expire), so the same timeouts hold for every transport.
 */
#include "lib/internal.h"

void ffb__conn_set_transport(ffb_conn *conn, const ffb__transport *t,
                             void *data) {
    conn->tp = t ? t : &ffb__net_transport;
    conn->tp_data = t ? data : NULL;
}

void ffb__io_wake(ffb_conn *conn) {
    const ffb__transport *t = conn->tp;
    if (t && t->wake)
        t->wake(conn, conn->tp_data);
}

void ffb__io_release(ffb_conn *conn) {
    const ffb__transport *t = conn->tp;
    if (t && t->release)
        t->release(conn, conn->tp_data);
    /* The socket driver's wake pipe is made whichever transport runs
       later: release it too. */
    if (t != &ffb__net_transport && ffb__net_transport.release)
        ffb__net_transport.release(conn, NULL);
}

/* Milliseconds until the engine's next deadline (-1: none). */
static int time_left(ffb_conn *conn) {
    int64_t d = ffb_conn_deadline(conn);
    if (d < 0)
        return -1;
    int64_t left = d - ffb__now(conn);
    if (left <= 0)
        return 0;
    return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

int ffb__io_connect(ffb_conn *conn) {
    int t = -1;
    if (conn->hs_deadline >= 0) {
        int64_t left = conn->hs_deadline - ffb__now(conn);
        t = left <= 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left;
    }
    int rc = conn->tp->connect(conn, conn->tp_data, t);
    conn->io_open = rc == 0;
    return rc;
}

void ffb__io_close(ffb_conn *conn) {
    if (!conn->io_open)
        return;
    conn->io_open = 0;
    conn->tp->close(conn, conn->tp_data);
}

int ffb__need_blocking(ffb_conn *conn) {
    if (conn->io != FFB_IO_EXTERNAL)
        return 0;
    return ffb__error_set(&conn->err, FFB_E_STATE,
                          "a blocking call on a connection with external "
                          "I/O; use the queue functions and drive it with "
                          "ffb_conn_feed/output");
}

int ffb__blocking(ffb_conn *conn) {
    int rc = ffb__need_blocking(conn);
    if (rc == 0)
        ffb__conn_error_clear(conn);
    return rc;
}

/* After a wait: the time must be given back unless the wire moved (the
   deadline then moved too) - always during the handshake, whose deadline
   is fixed. */
static int need_expire(const ffb_conn *conn) {
    return conn->state == FFB__ST_HANDSHAKE || !conn->io_moved;
}

/* One failure of the transport or a deadline: the connection's state
   decides what the caller sees. */
static int io_failed(ffb_conn *conn, int rc) {
    if (rc == FFB_E_TIMEOUT)
        return ffb__engine_break(conn, rc);
    return ffb__engine_fail(conn, rc);
}

/* owed_first: while answers to flushed requests are owed, what is staged
   waits for them (read-ahead that would otherwise go out a request at a
   time goes as one write once they are in). */
static int run(ffb_conn *conn, ffb__until_fn until, const void *arg,
               int owed_first) {
    if (conn->io == FFB_IO_EXTERNAL)
        return ffb__need_blocking(conn);
    for (;;) {
        if (conn->state == FFB__ST_BROKEN)
            return ffb__broken_code(conn);
        if (!conn->io_open)
            return ffb__error_set(&conn->err, FFB_E_CLOSED,
                                  "the connection is closed");
        /* op_cancel asked (maybe by another thread, which woke the
           wait): on the wire first, in a write of its own - what is
           staged goes in the next turn's write. */
        int cancel = ffb__engine_cancel_take(conn);
        if (cancel < 0)
            return cancel;
        int rc = 0;
        if (!cancel && (!owed_first || !ffb__engine_owed_sent(conn)))
            rc = ffb__engine_flush_needed(conn);
        if (rc < 0)
            return rc;
        if (conn->out.len) {
            rc = conn->tp->flush(conn, conn->tp_data, time_left(conn));
            if (rc == 0 && need_expire(conn))
                rc = ffb_conn_expire(conn, ffb__now(conn));
            if (rc < 0)
                return io_failed(conn, rc);
            if (conn->out.len || cancel)
                continue; /* the time ran out before the write did, or
                             op_cancel went: now the stage */
        }
        if (until(conn, arg))
            return 0;
        /* Answers received but not parsed yet (a blocking call made inside
           a result callback, while the packets behind the one that ran it
           wait): parse them before waiting for more. */
        rc = ffb__engine_drain(conn);
        if (rc < 0)
            return rc;
        if (rc > 0)
            continue;
        if (conn->state == FFB__ST_READY && !ffb__engine_owes_flushed(conn))
            return ffb__engine_fail(
                conn, ffb__error_set(&conn->err, FFB_E_PROTO,
                                     "internal error: waiting for an answer "
                                     "the server holds back (only deferred "
                                     "requests are pending)"));
        rc = conn->tp->read(conn, conn->tp_data, time_left(conn));
        if (rc == 0 && need_expire(conn))
            rc = ffb_conn_expire(conn, ffb__now(conn));
        if (rc < 0)
            return io_failed(conn, rc);
    }
}

int ffb__run(ffb_conn *conn, ffb__until_fn until, const void *arg) {
    return run(conn, until, arg, 0);
}

static int flag_set(ffb_conn *conn, const void *arg) {
    (void)conn;
    return *(const int *)arg != 0;
}

int ffb__wait(ffb_conn *conn, const int *done) {
    return ffb__run(conn, flag_set, done);
}

int ffb__await(ffb_conn *conn, int queued, ffb__sync *sync) {
    if (queued < 0)
        return queued;
    if (queued > 0)
        return 0; /* nothing was queued: the answer was there */
    int rc = ffb__wait(conn, &sync->done);
    /* A request whose answer came with an error of its own and then shut
       the attachment down (isc_att_shutdown: a cancelled service) gets its
       own error; any other break is the caller's answer. */
    if (rc == FFB_E_SHUTDOWN && sync->done && sync->rc < 0)
        return sync->rc;
    return rc < 0 ? rc : sync->rc;
}

static int written(ffb_conn *conn, const void *arg) {
    (void)arg;
    return conn->out.len == 0;
}

int ffb__write_out(ffb_conn *conn) {
    if (conn->io == FFB_IO_EXTERNAL || conn->out.len == 0)
        return 0;
    return ffb__run(conn, written, NULL);
}

static int packet_came(ffb_conn *conn, const void *arg) {
    return conn->stats.packets_received != *(const uint64_t *)arg;
}

int ffb__run_step(ffb_conn *conn) {
    uint64_t seen = conn->stats.packets_received;
    return run(conn, packet_came, &seen, 1);
}
