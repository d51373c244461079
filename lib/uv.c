/*
 * The libuv adapter (libfastfb_uv): a connection with external I/O whose
 * byte pump runs on a libuv loop. It uses the public API of fastfb.h only;
 * the engine stays sans-I/O.
 *
 * Per connection: one uv_tcp_t (a new one for each address tried), one
 * uv_timer_t for ffb_conn_deadline(), and a uv_prepare_t and uv_check_t
 * that run pump(): what is staged is written there, once per loop pass,
 * so every request queued during one pass of the loop shares a write
 * (queue calls never reach the adapter; the pump asks ffb_conn_wants()).
 * prepare runs after the timers and right before the poll, check right
 * after it: output queued in any callback goes out before the loop next
 * waits. Both are unreferenced: the socket (and while closing, the
 * prepare handle) keeps the loop alive.
 *
 * States (`state`):
 *   NEW -> RESOLVING (uv_getaddrinfo) -> CONNECTING (uv_tcp_connect, per
 *   address) -> HANDSHAKE (the engine's op_connect .. op_attach) -> READY
 *   Any connect step -> FAILED (connect callback with the code).
 *   READY -> BROKEN (read/write error, EOF, timeout, bad bytes): the
 *   requests pending complete with the cause (the engine does it when the
 *   connection breaks) and the socket is closed.
 *
 * Closing (`closing`), from ffb_uv_close():
 *   REQUESTED -> [DETACHING: op_detach owed] -> TEARDOWN (handles closing)
 *   -> the close callback, then the memory is freed.
 * Work that calls into the library (ffb_conn_close() runs callbacks) is
 * only done from the adapter's own libuv callbacks, never from inside a
 * call of the application's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "include/fastfb_uv.h"
#include "lib/cancelq.h"

#define MAGIC 0x66627576u /* "fbuv" */
#define READ_SIZE 65536
#define KEEPALIVE_S 60

enum {
    ST_NEW,
    ST_RESOLVING,
    ST_CONNECTING,
    ST_HANDSHAKE,
    ST_READY,
    ST_FAILED,
    ST_BROKEN
};
enum { CL_NONE, CL_REQUESTED, CL_DETACHING, CL_TEARDOWN };

typedef struct uvconn uvconn;

typedef struct tcp_slot {
    uv_tcp_t h; /* first: the handle's address is the slot's */
    uvconn *a;
} tcp_slot;

typedef struct wreq {
    uv_write_t req;
    uvconn *a;
    size_t len;
    uint8_t bytes[];
} wreq;

struct uvconn {
    uint32_t magic;
    ffb_conn *conn;
    uv_loop_t *loop;
    ffb_allocator alloc;
    int has_alloc;
    int state;
    int closing;
    int io_timeout_ms;
    ffb_uv_connect_cb connect_cb;
    void *connect_data;
    ffb_uv_close_cb close_cb;
    void *close_data;
    int close_status;
    int broken_rc;
    int detached; /* the op_detach answer came */
    int64_t detach_deadline;
    uv_getaddrinfo_t gai;
    int gai_active;
    struct addrinfo *addrs, *next_addr;
    int last_uv_err; /* of the last address tried */
    tcp_slot *tcp;   /* current stream, NULL when none */
    int tcp_connected;
    uv_connect_t creq;
    uv_timer_t timer;
    int64_t armed; /* the deadline the timer is set for, -1: none */
    uv_prepare_t prepare;
    uv_check_t check;
    uv_async_t wake;   /* ffb_uv_conn_cancel from other threads */
    uint32_t cancel_q; /* their kinds (lib/cancelq.h) */
    int handles;     /* handles not yet reported closed */
    size_t inflight; /* bytes given to uv_write, not yet reported done */
    size_t early;    /* ... reported done before their write callback */
    ffb_uv_stats stats;
    /* Events (ffb_uv_events_register): the aux connection, opened when
       the server announces its port, read into abuf and fed to the
       connection's events object. */
    int events_on;
    tcp_slot *aux;
    int aux_started;     /* this attachment's aux connect was started */
    uv_connect_t aux_creq;
    uint8_t abuf[8192];
    uint8_t rbuf[READ_SIZE];
};

/* ---- memory -------------------------------------------------------------- */

static void *amalloc(uvconn *a, size_t n) {
    return a->has_alloc ? a->alloc.malloc(n, a->alloc.data) : malloc(n);
}

static void afree(uvconn *a, void *p) {
    if (!p)
        return;
    if (a->has_alloc)
        a->alloc.free(p, a->alloc.data);
    else
        free(p);
}

static uvconn *get(const ffb_conn *conn) {
    uvconn *a = conn ? ffb_conn_io_data(conn) : NULL;
    return a && a->magic == MAGIC && a->conn == conn ? a : NULL;
}

/* ---- failures ------------------------------------------------------------ */

/* Break the connection with the adapter's own reason (a libuv error). */
static int stream_error(uvconn *a, int code, int uverr, const char *what) {
    char msg[512];
    snprintf(msg, sizeof(msg), "%s %s port %s: %s (%s)", what,
             ffb_conn_host(a->conn), ffb_conn_port(a->conn), uv_strerror(uverr),
             uv_err_name(uverr));
    return ffb_conn_feed_error(a->conn, code, msg);
}

static void tcp_closed(uv_handle_t *h);

static void close_tcp(uvconn *a) {
    if (!a->tcp)
        return;
    uv_close((uv_handle_t *)&a->tcp->h, tcp_closed);
    a->tcp = NULL;
    a->tcp_connected = 0;
}

static void close_aux(uvconn *a) {
    if (!a->aux)
        return;
    uv_close((uv_handle_t *)&a->aux->h, tcp_closed);
    a->aux = NULL;
}

static void connect_done(uvconn *a, int status) {
    ffb_uv_connect_cb cb = a->connect_cb;
    a->connect_cb = NULL;
    if (cb)
        cb(a->conn, status, a->connect_data);
}

/* A connect step failed with `rc` (the connection's error says why). */
static void connect_failed(uvconn *a, int rc) {
    a->state = ST_FAILED;
    a->broken_rc = rc;
    close_tcp(a);
    if (a->addrs) {
        uv_freeaddrinfo(a->addrs);
        a->addrs = a->next_addr = NULL;
    }
    connect_done(a, rc);
}

/* The connection broke with `rc`. Called only from the adapter's own
   callbacks (ffb_conn_close() runs result callbacks). */
static void on_break(uvconn *a, int rc) {
    if (a->state == ST_FAILED || a->state == ST_BROKEN)
        return;
    if (a->state != ST_READY) {
        connect_failed(a, rc);
        return;
    }
    a->state = ST_BROKEN;
    a->broken_rc = rc;
    close_tcp(a);
    close_aux(a);
    /* Nothing pending can be answered now: complete it. A callback may
       queue again before the connection is closed; then once more. */
    for (int i = 0; i < 4; i++) {
        ffb_conn_close(a->conn);
        if (ffb_conn_pending(a->conn) == 0)
            break;
    }
}

/* ---- connect ------------------------------------------------------------- */

static void try_next(uvconn *a);
static void sync_written(uvconn *a);

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    uvconn *a = ((tcp_slot *)h)->a;
    *buf = uv_buf_init((char *)a->rbuf, sizeof(a->rbuf));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    uvconn *a = ((tcp_slot *)s)->a;
    if (nread == 0 || a->closing == CL_TEARDOWN)
        return;
    int rc;
    sync_written(a);
    if (nread > 0) {
        a->stats.reads++;
        rc = ffb_conn_feed(a->conn, a->rbuf, (size_t)nread);
    } else if (nread == UV_EOF) {
        uv_read_stop(s);
        rc = ffb_conn_feed_eof(a->conn);
        if (rc == 0) { /* after op_detach: expected */
            close_tcp(a);
            return;
        }
    } else {
        rc = stream_error(a, FFB_E_IO, (int)nread, "reading from");
    }
    if (rc < 0) {
        on_break(a, rc);
        return;
    }
    if (a->state == ST_HANDSHAKE) {
        rc = ffb_conn_step(a->conn);
        if (rc < 0) {
            connect_failed(a, rc);
        } else if (rc == 1) {
            a->state = ST_READY;
            connect_done(a, 0);
        }
    }
}

static void on_connect(uv_connect_t *req, int status) {
    uvconn *a = req->data;
    if (status == UV_ECANCELED || a->closing == CL_TEARDOWN ||
        a->state != ST_CONNECTING)
        return;
    if (status < 0) {
        a->last_uv_err = status;
        close_tcp(a);
        try_next(a);
        return;
    }
    uv_tcp_nodelay(&a->tcp->h, 1);
    uv_tcp_keepalive(&a->tcp->h, 1, KEEPALIVE_S);
    int rc = uv_read_start((uv_stream_t *)&a->tcp->h, on_alloc, on_read);
    if (rc < 0) {
        connect_failed(a, stream_error(a, FFB_E_IO, rc, "reading from"));
        return;
    }
    uv_freeaddrinfo(a->addrs);
    a->addrs = a->next_addr = NULL;
    a->tcp_connected = 1;
    a->state = ST_HANDSHAKE; /* op_connect goes out at the next pump */
}

/* Connect to the next address of the lookup, or fail with the reason of
   the last one tried. */
static void try_next(uvconn *a) {
    while (a->next_addr) {
        struct addrinfo *ai = a->next_addr;
        a->next_addr = ai->ai_next;
        tcp_slot *t = amalloc(a, sizeof(*t));
        if (!t) {
            connect_failed(a, ffb_conn_feed_error(a->conn, FFB_E_NOMEM,
                                                  "out of memory for a "
                                                  "TCP handle"));
            return;
        }
        int rc = uv_tcp_init(a->loop, &t->h);
        if (rc < 0) {
            afree(a, t);
            a->last_uv_err = rc;
            continue;
        }
        t->a = a;
        a->handles++;
        a->tcp = t;
        a->creq.data = a;
        rc = uv_tcp_connect(&a->creq, &t->h, ai->ai_addr, on_connect);
        if (rc == 0) {
            a->state = ST_CONNECTING;
            return;
        }
        a->last_uv_err = rc;
        close_tcp(a);
    }
    connect_failed(
        a, stream_error(a, FFB_E_IO, a->last_uv_err, "cannot connect to"));
}

static void maybe_finish(uvconn *a);

static void on_resolved(uv_getaddrinfo_t *req, int status,
                        struct addrinfo *res) {
    uvconn *a = req->data;
    a->gai_active = 0;
    if (a->closing == CL_TEARDOWN || a->state != ST_RESOLVING) {
        if (res)
            uv_freeaddrinfo(res);
        maybe_finish(a);
        return;
    }
    if (status < 0 || !res) {
        if (res)
            uv_freeaddrinfo(res);
        connect_failed(a, stream_error(a, FFB_E_IO,
                                       status < 0 ? status : UV_EAI_NONAME,
                                       "cannot resolve"));
        return;
    }
    a->addrs = a->next_addr = res;
    a->last_uv_err = UV_EAI_NONAME;
    try_next(a);
}

static int start(ffb_conn *conn, int create, const ffb_create_options *copts,
                 ffb_uv_connect_cb cb, void *data) {
    uvconn *a = get(conn);
    if (!a || !cb)
        return FFB_E_INVAL;
    if (a->closing != CL_NONE || a->state != ST_NEW)
        return FFB_E_STATE;
    /* The connect clock starts here: it covers the lookup and TCP. */
    int rc = create ? ffb_conn_start_create(conn, copts) : ffb_conn_start(conn);
    if (rc < 0)
        return rc;
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    a->gai.data = a;
    rc = uv_getaddrinfo(a->loop, &a->gai, on_resolved, ffb_conn_host(conn),
                        ffb_conn_port(conn), &hints);
    if (rc < 0) {
        a->state = ST_FAILED;
        a->broken_rc = stream_error(a, FFB_E_IO, rc, "cannot resolve");
        return a->broken_rc;
    }
    a->gai_active = 1;
    a->state = ST_RESOLVING;
    a->connect_cb = cb;
    a->connect_data = data;
    return 0;
}

int ffb_uv_connect(ffb_conn *conn, ffb_uv_connect_cb cb, void *data) {
    return start(conn, 0, NULL, cb, data);
}

int ffb_uv_create_database(ffb_conn *conn, const ffb_create_options *copts,
                           ffb_uv_connect_cb cb, void *data) {
    return start(conn, 1, copts, cb, data);
}

/* ---- writes -------------------------------------------------------------- */

/*
 * Bytes given to uv_write are reported done (ffb_conn_output_done()) as
 * soon as they have left libuv's queue for the socket - not only from the
 * write callback. libuv defers the callback of a write that completed
 * inside uv_write() to the next loop pass, after the poll: the answer to
 * those bytes can be read first, and the engine must know its request
 * was written before it sees the answer (round trips, the I/O timeout).
 */
static void sync_written(uvconn *a) {
    if (!a->inflight || !a->tcp)
        return;
    size_t queued =
        uv_stream_get_write_queue_size((const uv_stream_t *)&a->tcp->h);
    if (queued >= a->inflight)
        return;
    size_t n = a->inflight - queued;
    a->inflight -= n;
    a->early += n;
    ffb_conn_output_done(a->conn, n);
}

static void on_written(uv_write_t *req, int status) {
    wreq *w = (wreq *)req;
    uvconn *a = w->a;
    size_t len = w->len, from_early = a->early < len ? a->early : len;
    a->early -= from_early;
    len -= from_early;
    a->inflight -= len;
    afree(a, w);
    if (status == UV_ECANCELED || a->closing == CL_TEARDOWN)
        return;
    if (status < 0) {
        on_break(a, stream_error(a, FFB_E_IO, status, "writing to"));
        return;
    }
    if (len)
        ffb_conn_output_done(a->conn, len);
}

/* Hand what the connection has to write (past what is in flight) to the
   socket: synchronously as far as it goes, the rest through uv_write from
   a copy (the connection's buffer moves with the next call on it). */
static void write_out(uvconn *a) {
    if (!a->tcp_connected || (a->state != ST_HANDSHAKE && a->state != ST_READY))
        return;
    sync_written(a);
    if (!(ffb_conn_wants(a->conn) & FFB_WANT_WRITE))
        return;
    const uint8_t *p;
    size_t n = ffb_conn_output(a->conn, &p);
    if (n <= a->inflight)
        return;
    uv_stream_t *s = (uv_stream_t *)&a->tcp->h;
    a->stats.writes++;
    if (a->inflight == 0) {
        uv_buf_t b = uv_buf_init((char *)p,
                                 (unsigned)(n > 0x40000000u ? 0x40000000u : n));
        int k = uv_try_write(s, &b, 1);
        if (k < 0 && k != UV_EAGAIN) {
            on_break(a, stream_error(a, FFB_E_IO, k, "writing to"));
            return;
        }
        if (k > 0) {
            ffb_conn_output_done(a->conn, (size_t)k);
            if ((size_t)k == n)
                return;
            n = ffb_conn_output(a->conn, &p);
            if (n == 0)
                return;
        }
    }
    size_t len = n - a->inflight;
    if (len > 0x40000000u) /* uv_buf_t holds an unsigned; the rest next */
        len = 0x40000000u;
    wreq *w = amalloc(a, sizeof(*w) + len);
    if (!w) {
        on_break(a, ffb_conn_feed_error(a->conn, FFB_E_NOMEM,
                                        "out of memory for a write"));
        return;
    }
    w->a = a;
    w->len = len;
    memcpy(w->bytes, p + a->inflight, len);
    uv_buf_t b = uv_buf_init((char *)w->bytes, (unsigned)len);
    a->stats.queued++;
    int rc = uv_write(&w->req, s, &b, 1, on_written);
    if (rc < 0) {
        afree(a, w);
        on_break(a, stream_error(a, FFB_E_IO, rc, "writing to"));
        return;
    }
    a->inflight += len;
}

/* ---- time ---------------------------------------------------------------- */

static void on_timer(uv_timer_t *t);

/* Set the one timer to the earliest deadline: the connection's, and while
   detaching the detach's own.

   The timer is re-set only when the deadline comes before the time it is
   set for. With io_timeout_ms every request moves the deadline to later
   and every answer clears it, and a stop + start per request was the
   adapter's largest cost after the cipher (docs/performance.md). A timer
   set for an earlier time just fires early: on_timer() finds nothing
   due and sets it again. While nothing is due it stays set but
   unreferenced, so it never keeps the loop alive. */
static void arm(uvconn *a) {
    if (a->closing == CL_TEARDOWN)
        return;
    int64_t d = -1;
    if (a->state >= ST_RESOLVING && a->state <= ST_READY)
        d = ffb_conn_deadline(a->conn);
    if (a->closing == CL_DETACHING && (d < 0 || a->detach_deadline < d))
        d = a->detach_deadline;
    if (d < 0) {
        if (a->armed >= 0)
            uv_unref((uv_handle_t *)&a->timer);
        return;
    }
    uv_ref((uv_handle_t *)&a->timer);
    if (a->armed >= 0 && a->armed <= d)
        return;
    a->armed = d;
    int64_t left = d - ffb_now_ms();
    uv_timer_start(&a->timer, on_timer, left > 0 ? (uint64_t)left : 0, 0);
}

static void teardown(uvconn *a, int status);

static void on_timer(uv_timer_t *t) {
    uvconn *a = t->data;
    a->stats.timer_fires++;
    a->armed = -1;
    int64_t now = ffb_now_ms();
    if (a->closing == CL_DETACHING && now >= a->detach_deadline) {
        teardown(a, FFB_E_TIMEOUT);
        return;
    }
    if (a->state >= ST_RESOLVING && a->state <= ST_READY) {
        int rc = ffb_conn_expire(a->conn, now);
        if (rc < 0)
            on_break(a, rc);
    }
    arm(a);
}

/* ---- closing ------------------------------------------------------------- */

static void handle_closed(uv_handle_t *h) {
    uvconn *a = h->data;
    a->handles--;
    maybe_finish(a);
}

static void tcp_closed(uv_handle_t *h) {
    tcp_slot *t = (tcp_slot *)h;
    uvconn *a = t->a;
    afree(a, t);
    a->handles--;
    maybe_finish(a);
}

static void maybe_finish(uvconn *a) {
    if (a->closing != CL_TEARDOWN || a->handles > 0 || a->gai_active)
        return;
    if (a->addrs)
        uv_freeaddrinfo(a->addrs);
    ffb_conn *conn = a->conn;
    if (a->close_cb)
        a->close_cb(conn, a->close_status, a->close_data);
    a->magic = 0;
    ffb_conn_set_io_data(conn, NULL);
    ffb_conn_free(conn);
    afree(a, a);
}

/* Complete what is pending, close every handle; maybe_finish() ends it. */
static void teardown(uvconn *a, int status) {
    if (a->closing == CL_TEARDOWN)
        return;
    if (a->state >= ST_RESOLVING && a->state <= ST_HANDSHAKE) {
        a->state = ST_FAILED;
        connect_done(a, FFB_E_CANCELLED);
    }
    a->closing = CL_TEARDOWN;
    a->close_status = status;
    for (int i = 0; i < 4; i++) {
        ffb_conn_close(a->conn);
        if (ffb_conn_pending(a->conn) == 0)
            break;
    }
    close_tcp(a);
    close_aux(a);
    if (a->gai_active)
        uv_cancel((uv_req_t *)&a->gai);
    uv_close((uv_handle_t *)&a->timer, handle_closed);
    uv_close((uv_handle_t *)&a->prepare, handle_closed);
    uv_close((uv_handle_t *)&a->check, handle_closed);
    uv_close((uv_handle_t *)&a->wake, handle_closed);
}

static void on_detached(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    uvconn *a = data;
    /* Not when it is cancelled: by a break (then the cause counts) or by
       the teardown after the detach's own timeout. */
    if (a->closing != CL_DETACHING || a->state != ST_READY)
        return;
    a->detached = 1;
    a->close_status = ffb_result_status(res);
}

static void begin_close(uvconn *a) {
    switch (a->state) {
    case ST_NEW:
        teardown(a, 0);
        return;
    case ST_FAILED:
    case ST_BROKEN:
        teardown(a, a->broken_rc);
        return;
    case ST_READY:
        if (ffb_conn_is_attached(a->conn) && ffb_conn_pending(a->conn) == 0 &&
            ffb_conn_queue_detach(a->conn, on_detached, a) == 0) {
            a->closing = CL_DETACHING;
            a->detach_deadline =
                ffb_now_ms() + (a->io_timeout_ms > 0
                                    ? a->io_timeout_ms
                                    : FFB_UV_DETACH_TIMEOUT_MS);
            return;
        }
        teardown(a, ffb_conn_is_attached(a->conn) ? FFB_E_CANCELLED : 0);
        return;
    default: /* a connect in progress */
        teardown(a, FFB_E_CANCELLED);
        return;
    }
}

/* ---- events: the aux connection (reference 03 C.5.2) -------------------- */

static void aux_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    uvconn *a = ((tcp_slot *)h)->a;
    *buf = uv_buf_init((char *)a->abuf, sizeof(a->abuf));
}

static void aux_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    uvconn *a = ((tcp_slot *)s)->a;
    if (nread == 0 || a->closing == CL_TEARDOWN || a->aux != (tcp_slot *)s)
        return;
    ffb_events *ev = ffb_conn_events(a->conn);
    if (nread < 0) { /* the end (or an error): the attachment is gone */
        if (ev)
            ffb_events_feed(ev, NULL, 0);
        close_aux(a);
        return;
    }
    /* Garbage stops the events object; the socket stays open as long as
       the attachment (the server does not notice a close, and Firebird 4
       with compression misbehaved after one: docs/events.md). Without an
       events object (freed) the bytes are dropped. */
    if (ev && ffb_events_feed(ev, a->abuf, (size_t)nread) < 0)
        uv_read_stop(s);
}

static void aux_connected(uv_connect_t *req, int status) {
    uvconn *a = req->data;
    if (status == UV_ECANCELED || a->closing == CL_TEARDOWN || !a->aux)
        return;
    ffb_events *ev = ffb_conn_events(a->conn);
    if (status < 0 ||
        uv_read_start((uv_stream_t *)&a->aux->h, aux_alloc, aux_read) < 0) {
        close_aux(a);
        if (ev)
            ffb_events_aux_abort(ev); /* the server waits for us */
    }
}

/* The server announced the aux port: connect to it, on the address the
   main stream is connected to (the server's own view of its address is
   wrong behind NAT). Plain TCP, never written to. */
static void aux_check(uvconn *a) {
    ffb_events *ev = a->events_on ? ffb_conn_events(a->conn) : NULL;
    if (!ev || a->aux_started || !a->tcp || a->state != ST_READY)
        return;
    int port = ffb_events_aux_port(ev);
    if (port <= 0)
        return;
    a->aux_started = 1;
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    int rc = uv_tcp_getpeername(&a->tcp->h, (struct sockaddr *)&ss, &len);
    if (rc == 0 && ss.ss_family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
    else if (rc == 0 && ss.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
    else
        rc = UV_EINVAL;
    tcp_slot *t = rc == 0 ? amalloc(a, sizeof(*t)) : NULL;
    if (!t) {
        ffb_events_aux_abort(ev);
        return;
    }
    t->a = a;
    uv_tcp_init(a->loop, &t->h);
    a->handles++;
    a->aux = t;
    a->aux_creq.data = a;
    rc = uv_tcp_connect(&a->aux_creq, &t->h, (struct sockaddr *)&ss,
                        aux_connected);
    if (rc < 0) {
        close_aux(a);
        ffb_events_aux_abort(ev);
        return;
    }
    uv_tcp_nodelay(&t->h, 1);
}

int ffb_uv_events_register(ffb_events *ev, const char *name, ffb_event_cb cb,
                           void *data, ffb_cb done, void *done_data) {
    uvconn *a = get(ffb_events_conn(ev));
    if (!a)
        return FFB_E_INVAL;
    if (a->closing != CL_NONE || a->state != ST_READY)
        return FFB_E_STATE;
    int rc = ffb_events_queue_register(ev, name, cb, data, done, done_data);
    if (rc >= 0)
        a->events_on = 1;
    return rc;
}

/* Once per loop pass, from prepare and from check. */
static void pump(uvconn *a) {
    if (a->closing == CL_TEARDOWN)
        return;
    if (a->closing == CL_REQUESTED)
        begin_close(a);
    if (a->closing == CL_DETACHING) {
        if (a->state != ST_READY) { /* broke while detaching */
            teardown(a, a->broken_rc);
            return;
        }
        if (a->detached || !a->tcp) { /* answered, or the server left */
            teardown(a, a->detached ? a->close_status : FFB_E_CLOSED);
            return;
        }
    }
    if (a->closing == CL_TEARDOWN)
        return;
    aux_check(a);
    write_out(a);
    arm(a);
}

static void on_prepare(uv_prepare_t *h) { pump(h->data); }
static void on_wake(uv_async_t *h);

static void on_check(uv_check_t *h) { pump(h->data); }

/* ---- cancellation -------------------------------------------------------- */

/* On the loop: the kinds other threads asked, in order, through
   ffb_conn_cancel (external I/O: straight to the output), then out. */
static void on_wake(uv_async_t *h) {
    uvconn *a = h->data;
    int kinds[FFB__CANCEL_MAX];
    unsigned count = ffb__cancelq_take(&a->cancel_q, kinds);
    if (a->closing == CL_TEARDOWN)
        return;
    for (unsigned i = 0; i < count; i++)
        (void)ffb_conn_cancel(a->conn, kinds[i]);
    pump(a);
}

int ffb_uv_conn_cancel(ffb_conn *conn, int kind) {
    /* Any thread: only the magic, the queue and the async handle are
       touched (the application keeps the connection alive). */
    uvconn *a = conn ? ffb_conn_io_data(conn) : NULL;
    if (!a || a->magic != MAGIC || kind < FFB_CANCEL_DISABLE ||
        kind > FFB_CANCEL_ABORT)
        return FFB_E_INVAL;
    if (ffb__cancelq_push(&a->cancel_q, kind) < 0)
        return FFB_E_AGAIN;
    uv_async_send(&a->wake);
    return 0;
}

int ffb_uv_close(ffb_conn *conn, ffb_uv_close_cb cb, void *data) {
    uvconn *a = get(conn);
    if (!a)
        return FFB_E_INVAL;
    if (a->closing != CL_NONE)
        return FFB_E_STATE;
    a->closing = CL_REQUESTED;
    a->close_cb = cb;
    a->close_data = data;
    uv_ref((uv_handle_t *)&a->prepare); /* run the close even when idle */
    return 0;
}

/* ---- the connection ------------------------------------------------------ */

int ffb_uv_conn_new(uv_loop_t *loop, const ffb_conn_options *opts,
                    ffb_conn **out) {
    if (!loop || !out)
        return FFB_E_INVAL;
    ffb_conn_options o;
    if (opts)
        o = *opts;
    else
        ffb_conn_options_init(&o);
    o.io = FFB_IO_EXTERNAL;
    ffb_conn *conn = NULL;
    int rc = ffb_conn_new(&o, &conn);
    if (!conn)
        return rc;
    const ffb_allocator *al = o.allocator;
    uvconn *a = al ? al->malloc(sizeof(*a), al->data) : malloc(sizeof(*a));
    if (!a) {
        ffb_conn_free(conn);
        return FFB_E_NOMEM;
    }
    memset(a, 0, sizeof(*a));
    a->magic = MAGIC;
    a->conn = conn;
    a->loop = loop;
    if (o.allocator) {
        a->alloc = *o.allocator;
        a->has_alloc = 1;
    }
    a->io_timeout_ms = o.io_timeout_ms;
    a->armed = -1;
    uv_timer_init(loop, &a->timer);
    uv_prepare_init(loop, &a->prepare);
    uv_check_init(loop, &a->check);
    a->timer.data = a->prepare.data = a->check.data = a;
    uv_async_init(loop, &a->wake, on_wake);
    uv_unref((uv_handle_t *)&a->wake);
    a->wake.data = a;
    a->handles = 4;
    uv_prepare_start(&a->prepare, on_prepare);
    uv_check_start(&a->check, on_check);
    uv_unref((uv_handle_t *)&a->prepare);
    uv_unref((uv_handle_t *)&a->check);
    ffb_conn_set_io_data(conn, a);
    *out = conn;
    return rc;
}

uv_loop_t *ffb_uv_conn_loop(const ffb_conn *conn) {
    uvconn *a = get(conn);
    return a ? a->loop : NULL;
}

int ffb_uv_conn_stats(const ffb_conn *conn, ffb_uv_stats *out,
                      size_t out_size) {
    uvconn *a = get(conn);
    if (!a || !out)
        return FFB_E_INVAL;
    memset(out, 0, out_size);
    memcpy(out, &a->stats,
           out_size < sizeof(a->stats) ? out_size : sizeof(a->stats));
    return 0;
}
