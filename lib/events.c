/*
 * Events (reference 03, C.5; docs/events.md). The requests go on the main
 * connection as queued requests with reply handlers: op_connect_request
 * (once per attachment), op_que_events (one request per registered name,
 * re-queued after each notification with the counts just seen) and
 * op_cancel_events. The aux connection is a second byte stream that only
 * the server writes: its bytes are fed here (sans-I/O) and decoded into
 * notifications, which become callbacks with deltas. The socket of the
 * aux connection is driven by lib/net.c (blocking I/O, from lib/blocking.c)
 * or by the application (FFB_IO_EXTERNAL, ffb_events_feed()).
 *
 * Count semantics (C.5.6): the server fires a request as soon as, for its
 * name, the count sent is <= its counter c, and sends c + 1. The first
 * answer to a registration (count 0) comes at once: it is the baseline.
 * Later answers carry the baseline plus the posts since: the delta.
 */
#include <string.h>

#include "lib/events.h"
#include "proto/events.h"

enum { REQ_CONNECT = 1, REQ_QUE, REQ_CANCEL };

/* A request of the events object owed by the main connection. Owned by
   the connection (conn->evreqs), so that an answer arriving after
   ffb_events_free() still finds it. */
struct ffb__evreq {
    ffb_conn *conn;
    ffb_events *ev;     /* NULL once the events object is gone */
    ffb__evreg *reg;    /* REQ_QUE */
    int kind;
    int at_baseline;    /* REQ_QUE: the sync completes with the baseline */
    int32_t rid;
    ffb__sync *sync;    /* NULL: nobody waits (a re-registration) */
    struct ffb__evreq *next, *prev;
};

static void req_unlink(ffb_conn *conn, ffb__evreq *q) {
    if (q->prev)
        q->prev->next = q->next;
    else
        conn->evreqs = q->next;
    if (q->next)
        q->next->prev = q->prev;
    ffb__free(conn->alloc, q);
}

/* Forget the aux connection and every registration's server side: the
   attachment ended (or the events object stops). The socket (blocking
   I/O) is closed by the driver. */
/* A queued registration that waited for its baseline ends with `rc`. */
static void baseline_end(ffb_conn *conn, ffb__evreg *g, int rc) {
    ffb__sync *s = g->baseline_sync;
    g->baseline_sync = NULL;
    if (s && !s->done) {
        if (rc < 0 && s->rc == 0) {
            ffb__error_set(ffb__sync_error(conn, s), rc,
                           "the registration of \"%s\" ended before its "
                           "first answer on the aux connection",
                           g->name);
            s->rc = rc;
        }
        s->done = 1;
    }
}

/* The events object stops reading its aux connection (`state` says why).
   The socket itself belongs to the attachment and is closed only when
   that ends (attach_end) or the server ended it (FFB__AUX_GONE): a client
   that closes it while attached is not noticed by the server (C.5.1), and
   Firebird 4.0.5 with compression was seen sending garbage on the main
   connection right after it (docs/events.md). */
static void aux_drop(ffb_events *ev, int state) {
    ffb_conn *conn = ev->conn;
    if (state == FFB__AUX_GONE && conn->aux_fd >= 0) {
        ffb__aux_close(conn->aux_fd);
        conn->aux_fd = -1;
    }
    ev->aux_fd = -1;
    ev->aux_port = 0;
    ev->aux_state = state;
    ffbp_writer_reset(&ev->in);
    for (ffb__evreg *g = ev->regs; g; g = g->next) {
        baseline_end(ev->conn, g, state == FFB__AUX_NONE ? FFB_E_CANCELLED
                                               : FFB_E_CLOSED);
        g->rid = 0;
        g->active = 0;
        g->baseline = 0;
        g->count = 0;
    }
}

/* Free the object (its aux connection dropped already). */
static void ev_free(ffb_events *ev) {
    ffb_conn *conn = ev->conn;
    ffbp_writer_free(&ev->in);
    for (ffb__evreg *g = ev->regs, *n; g; g = n) {
        n = g->next;
        ffb__free(conn->alloc, g);
    }
    conn->events = NULL;
    ffb__free(conn->alloc, ev);
}

/* The connection's attachment ended (destroy: it is being freed). */
static void attach_end(ffb_conn *conn, int destroy) {
    ffb_events *ev = conn->events;
    conn->aux_requested = 0;
    if (conn->aux_fd >= 0)
        ffb__aux_close(conn->aux_fd);
    conn->aux_fd = -1;
    if (ev)
        aux_drop(ev, FFB__AUX_NONE);
    /* Requests owed by the old attachment are never answered now. */
    while (conn->evreqs) {
        ffb__sync *sy = conn->evreqs->sync;
        if (sy && !sy->done) {
            if (sy->rc == 0) {
                ffb__error_set(ffb__sync_error(conn, sy), FFB_E_CANCELLED,
                               "cancelled: the attachment ended before the "
                               "answer arrived");
                sy->rc = FFB_E_CANCELLED;
            }
            sy->done = 1;
        }
        req_unlink(conn, conn->evreqs);
    }
    if (ev)
        ev->owed = 0;
    if (destroy && ev)
        ev_free(ev);
}

int ffb_events_new(ffb_conn *conn, ffb_events **out) {
    if (!conn || !out)
        return FFB_E_INVAL;
    *out = NULL;
    if (conn->events)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the connection has an events object already: "
                              "one per connection, so that its attachment "
                              "never asks for a second aux connection");
    ffb_events *ev = ffb__malloc(conn->alloc, sizeof(*ev));
    if (!ev)
        return ffb__error_set(&conn->err, FFB_E_NOMEM, "out of memory");
    memset(ev, 0, sizeof(*ev));
    ev->conn = conn;
    ev->aux_fd = -1;
    ev->next_rid = 1;
    ffbp_writer_init(&ev->in, conn->alloc);
    conn->events = ev;
    conn->on_attach_end = attach_end;
    *out = ev;
    return 0;
}

ffb_conn *ffb_events_conn(const ffb_events *ev) { return ev ? ev->conn : NULL; }

ffb_events *ffb_conn_events(const ffb_conn *conn) {
    return conn ? conn->events : NULL;
}

int ffb_events_aux_abort(ffb_events *ev) {
    if (!ev)
        return FFB_E_INVAL;
    if (ev->aux_state != FFB__AUX_PORT && ev->aux_state != FFB__AUX_REQUESTED)
        return ffb__error_set(&ev->conn->err, FFB_E_STATE,
                              "no aux connection is being opened");
    return ffb__events_aux_failed(ev);
}

int ffb_events_fd(const ffb_events *ev) { return ev ? ev->aux_fd : -1; }

int ffb_events_aux_port(const ffb_events *ev) {
    return ev && (ev->aux_state == FFB__AUX_PORT ||
                  ev->aux_state == FFB__AUX_OPEN)
               ? ev->aux_port
               : 0;
}

static ffb__evreg *find_reg(ffb_events *ev, const char *name, size_t len) {
    for (ffb__evreg *g = ev->regs; g; g = g->next)
        if (g->len == len && memcmp(g->name, name, len) == 0)
            return g;
    return NULL;
}

/* ---- answers on the main connection ---- */

static int evreq_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    ffb__evreq *q = p->ctx;
    ffb_events *ev = q->ev;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return FFB_E_PROTO;
    int failed = ffb__status_is_error(&r->status);
    if (failed && q->sync)
        ffb__sync_fail_status(conn, q->sync, FFB_E_SERVER, &r->status,
                              q->kind == REQ_CONNECT
                                  ? "op_connect_request refused"
                              : q->kind == REQ_QUE ? "op_que_events refused"
                                                   : "op_cancel_events refused");
    if (ev)
        ev->owed--;
    if (ev && q->kind == REQ_CONNECT) {
        uint16_t port = 0;
        if (failed) {
            ev->aux_state = FFB__AUX_FAILED;
        } else if (ffbp_aux_port(r->data.p, r->data.len, &port) != FFBP_OK) {
            /* The server waits for an aux connect we cannot make: the
               connection cannot be trusted any more. */
            ev->aux_state = FFB__AUX_FAILED;
            int rc = ffb__error_set(&conn->err, FFB_E_PROTO,
                                    "the answer to op_connect_request "
                                    "carries no usable address (%u bytes)",
                                    (unsigned)r->data.len);
            if (q->sync) {
                ffb__sync_fail(conn, q->sync, rc);
                q->sync->done = 1;
            }
            req_unlink(conn, q);
            return rc;
        } else {
            ev->aux_port = port;
            ev->aux_state = FFB__AUX_PORT;
        }
    }
    if (ev && q->kind == REQ_QUE && q->reg && q->reg->rid == q->rid && failed) {
        q->reg->rid = 0; /* not queued on the server */
        if (!q->sync)
            ev->requeue_failed = 1;
    }
    if (ev && q->kind == REQ_QUE && q->at_baseline && !failed && q->reg &&
        q->reg->rid == q->rid && !q->reg->baseline) {
        q->reg->baseline_sync = q->sync; /* completes in deliver() */
    } else if (q->sync) {
        q->sync->done = 1;
    }
    req_unlink(conn, q);
    return 0;
}

/* Queue `w` (freed) with an events request of `kind`. */
static int queue_req(ffb_events *ev, ffbp_writer *w, int32_t op, int kind,
                     ffb__evreg *reg, int32_t rid, ffb__sync *sync) {
    ffb_conn *conn = ev->conn;
    if (w->failed) {
        ffbp_writer_free(w);
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    }
    ffb__evreq *q = ffb__malloc(conn->alloc, sizeof(*q));
    if (!q) {
        ffbp_writer_free(w);
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    }
    memset(q, 0, sizeof(*q));
    q->conn = conn;
    q->ev = ev;
    q->reg = reg;
    q->kind = kind;
    q->rid = rid;
    q->sync = sync;
    int rc = ffb__queue_free(conn, w, 1);
    if (rc < 0) {
        ffb__free(conn->alloc, q);
        return rc;
    }
    ffb__pending *p = ffb__engine_expect(conn, op, evreq_reply, q);
    if (!p) {
        ffb__free(conn->alloc, q);
        return ffb__engine_fail(conn, FFB_E_NOMEM);
    }
    q->next = conn->evreqs;
    if (conn->evreqs)
        conn->evreqs->prev = q;
    conn->evreqs = q;
    ev->owed++;
    return 0;
}

/* op_que_events for `g` with its current count, a new rid. */
static int queue_que(ffb_events *ev, ffb__evreg *g, ffb__sync *sync,
                     int at_baseline) {
    ffb_conn *conn = ev->conn;
    ffbp_writer epb, w;
    ffbp_writer_init(&epb, conn->alloc);
    ffbp_writer_init(&w, conn->alloc);
    ffbp_epb_item it = {g->name, g->len, g->count};
    ffbp_put_epb(&epb, &it, 1); /* the name was checked when registered */
    int32_t rid = ev->next_rid++;
    if (ev->next_rid <= 0)
        ev->next_rid = 1;
    ffbp_put_que_events(&w, conn->db_handle, epb.data, epb.len, rid);
    int failed = epb.failed;
    ffbp_writer_free(&epb);
    if (failed)
        w.failed = 1;
    g->rid = rid;
    int rc = queue_req(ev, &w, FFBP_OP_QUE_EVENTS, REQ_QUE, g, rid, sync);
    if (rc == 0 && at_baseline)
        ev->conn->evreqs->at_baseline = 1; /* the one just queued */
    return rc;
}

int ffb__events_queue_register(ffb_events *ev, const char *name,
                               ffb_event_cb cb, void *data, ffb__sync *sync,
                               int at_baseline) {
    ffb_conn *conn = ev->conn;
    size_t len = name ? strlen(name) : 0;
    if (!cb || len == 0 || len > 255)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "an event name is 1 to 255 bytes, and a "
                              "callback is needed");
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (ev->aux_state == FFB__AUX_FAILED || ev->aux_state == FFB__AUX_GONE)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "events are unusable on this attachment (its "
                              "aux connection failed or ended); connect "
                              "again");
    ffb__evreg *g = find_reg(ev, name, len);
    if (g && g->active) {
        g->cb = cb;
        g->data = data;
        return 1; /* queued on the server already */
    }
    if (!g) {
        g = ffb__malloc(conn->alloc, sizeof(*g));
        if (!g)
            return ffb__error_set(&conn->err, FFB_E_NOMEM, "out of memory");
        memset(g, 0, sizeof(*g));
        memcpy(g->name, name, len);
        g->len = len;
        g->next = ev->regs;
        ev->regs = g;
    }
    g->cb = cb;
    g->data = data;
    g->active = 1;
    g->baseline = 0;
    g->count = 0;
    if (ev->aux_state == FFB__AUX_NONE && conn->aux_requested)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "this attachment asked for its aux connection "
                              "already (an earlier events object): events "
                              "need a new attachment");
    if (ev->aux_state == FFB__AUX_NONE) {
        /* Once per attachment (C.5.1): a second op_connect_request would
           orphan the first aux port on the server. */
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        ffbp_put_connect_request(&w, conn->db_handle);
        memset(&ev->cr_sync, 0, sizeof(ev->cr_sync));
        rc = queue_req(ev, &w, FFBP_OP_CONNECT_REQUEST, REQ_CONNECT, NULL, 0,
                       &ev->cr_sync);
        if (rc < 0)
            return rc;
        ev->aux_state = FFB__AUX_REQUESTED;
        conn->aux_requested = 1;
    }
    return queue_que(ev, g, sync, at_baseline);
}

int ffb__events_queue_unregister(ffb_events *ev, const char *name,
                                 ffb__sync *sync) {
    ffb_conn *conn = ev->conn;
    size_t len = name ? strlen(name) : 0;
    if (len == 0 || len > 255)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "an event name is 1 to 255 bytes");
    ffb__evreg *g = find_reg(ev, name, len);
    if (!g || !g->active)
        return 1;
    g->active = 0;
    int32_t rid = g->rid;
    g->rid = 0;
    if (rid == 0 || conn->state != FFB__ST_READY)
        return 1;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_cancel_events(&w, conn->db_handle, rid);
    return queue_req(ev, &w, FFBP_OP_CANCEL_EVENTS, REQ_CANCEL, NULL, rid,
                     sync);
}

int ffb__events_cancel_all(ffb_events *ev, ffb__sync *sync) {
    int queued = 1;
    for (ffb__evreg *g = ev->regs; g; g = g->next) {
        if (!g->active)
            continue;
        int rc = ffb__events_queue_unregister(ev, g->name, sync);
        if (rc < 0)
            return rc;
        if (rc == 0)
            queued = 0;
    }
    return queued;
}

void ffb__events_forget_sync(ffb_conn *conn, ffb__sync *sync) {
    for (ffb__evreq *q = conn->evreqs; q; q = q->next)
        if (q->sync == sync)
            q->sync = NULL;
    if (conn->events)
        for (ffb__evreg *g = conn->events->regs; g; g = g->next)
            if (g->baseline_sync == sync)
                g->baseline_sync = NULL;
}

int ffb__events_has_baseline(ffb_events *ev, const char *name) {
    ffb__evreg *g = find_reg(ev, name, strlen(name));
    /* Unregistered by a callback meanwhile: nothing to wait for. */
    return !g || !g->active || g->baseline;
}

int ffb__events_owed_none(ffb_conn *conn, const void *ev) {
    (void)conn;
    return ((const ffb_events *)ev)->owed == 0;
}

void ffb__events_destroy(ffb_events *ev) {
    ffb_conn *conn = ev->conn;
    for (ffb__evreq *q = conn->evreqs; q; q = q->next)
        if (q->ev == ev)
            q->ev = NULL; /* answered later, or freed with the connection */
    aux_drop(ev, FFB__AUX_NONE);
    ev_free(ev);
}

void ffb__events_aux_open(ffb_events *ev, int fd) {
    ev->conn->aux_fd = fd;
    ev->aux_fd = fd;
    ev->aux_state = FFB__AUX_OPEN;
}

int ffb__events_aux_failed(ffb_events *ev) {
    ffb_conn *conn = ev->conn;
    aux_drop(ev, FFB__AUX_FAILED);
    if (conn->state != FFB__ST_READY || conn->protocol < 13)
        return 0;
    /* Release the server, which waits for our connect (C.5.2). */
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_empty_op(&w, FFBP_OP_ABORT_AUX_CONNECTION);
    return ffb__queue_free(conn, &w, 0);
}

/* ---- the aux stream ---- */

/* One op_event: the callback with the delta, and the re-registration. */
static int deliver(ffb_events *ev, const ffbp_event *e, int *calls) {
    ffb_conn *conn = ev->conn;
    ffb__evreg *g = NULL;
    for (ffb__evreg *x = ev->regs; x; x = x->next)
        if (x->active && x->rid != 0 && x->rid == e->rid)
            g = x;
    if (!g)
        return 0; /* cancelled, or an answer to an older request */
    size_t pos = 0, nlen;
    const uint8_t *nm;
    uint32_t count = 0;
    int found = 0, rc;
    while ((rc = ffbp_epb_next(e->epb.p, e->epb.len, &pos, &nm, &nlen,
                               &count)) == 1) {
        /* The server strips trailing blanks of the name it returns. */
        size_t want = g->len;
        while (want > 0 && g->name[want - 1] == ' ')
            want--;
        if (nlen == want && memcmp(nm, g->name, nlen) == 0) {
            found = 1;
            break;
        }
    }
    if (rc < 0 || !found)
        return ffb__error_set(&conn->err, FFB_E_PROTO,
                              "op_event for rid %d: %s", (int)e->rid,
                              rc < 0 ? "malformed event parameter block"
                                     : "the registered name is missing");
    g->rid = 0; /* one-shot: the server dropped the request */
    uint32_t delta = 0;
    if (!g->baseline) {
        g->baseline = 1;
        baseline_end(conn, g, 0);
    } else if (count > g->count)
        delta = count - g->count;
    g->count = count;
    rc = queue_que(ev, g, NULL, 0);
    if (rc < 0)
        return rc;
    if (delta) {
        (*calls)++;
        /* As in a result callback: the connection may not be closed or
           freed from inside (the call delivering still uses it). */
        int was = conn->in_callback;
        conn->in_callback = 1;
        ev->in_callback++;
        g->cb(ev, g->name, delta, g->data);
        ev->in_callback--;
        conn->in_callback = was;
    }
    return 0;
}

int ffb__events_input(ffb_events *ev, const uint8_t *p, size_t len,
                      int *calls) {
    ffb_conn *conn = ev->conn;
    int rc0;
    *calls = 0;
    if (ev->aux_state != FFB__AUX_OPEN && ev->aux_state != FFB__AUX_PORT)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "no aux connection is expected");
    if (len == 0) {
        aux_drop(ev, FFB__AUX_GONE);
        rc0 = ffb__error_set(&conn->err, FFB_E_CLOSED,
                             "the aux connection ended: the attachment is "
                             "gone");
        if (conn->on_results)
            conn->on_results(conn);
        return rc0;
    }
    ffbp_put_raw(&ev->in, p, len);
    if (ev->in.failed)
        return ffb__error_set(&conn->err, FFB_E_NOMEM, "out of memory");
    ev->aux_state = FFB__AUX_OPEN;
    size_t used = 0;
    int rc = 0;
    while (used < ev->in.len) {
        ffbp_reader r;
        ffbp_reader_init(&r, ev->in.data + used, ev->in.len - used);
        ffbp_event e;
        int d = ffbp_get_aux_packet(&r, &e);
        if (d == FFBP_INCOMPLETE)
            break;
        if (d != FFBP_OK) {
            int32_t op = ev->in.len - used >= 4
                             ? (int32_t)ffbp_be32_get(ev->in.data + used)
                             : -1;
            rc = ffb__error_set(&conn->err, FFB_E_PROTO,
                                "unexpected packet on the aux connection "
                                "(op %d, %s)",
                                (int)op, ffbp_op_name(op));
            break;
        }
        used += r.pos;
        if (e.op == FFBP_OP_DUMMY)
            continue;
        if (e.op != FFBP_OP_EVENT) {
            aux_drop(ev, FFB__AUX_GONE);
            rc = ffb__error_set(&conn->err, FFB_E_CLOSED,
                                "the server ended the aux connection (%s)",
                                ffbp_op_name(e.op));
            break;
        }
        rc = deliver(ev, &e, calls);
        if (rc < 0)
            break;
        if (ev->aux_state != FFB__AUX_OPEN)
            return *calls; /* a callback ended it */
    }
    if (rc < 0) {
        if (rc == FFB_E_PROTO)
            aux_drop(ev, FFB__AUX_FAILED);
    } else {
        ffbp_writer_consume(&ev->in, used);
    }
    /* Queued registrations whose baseline came are complete now. */
    if (conn->on_results)
        conn->on_results(conn);
    return rc < 0 ? rc : *calls;
}

int ffb_events_feed(ffb_events *ev, const void *data, size_t len) {
    if (!ev || (!data && len))
        return FFB_E_INVAL;
    int calls;
    return ffb__events_input(ev, data, len, &calls);
}

/* ---- queue twins ---- */

static int queue_twin(ffb_events *ev, const char *name, ffb_event_cb cb,
                      void *data, ffb_cb done, void *done_data, int reg) {
    if (!ev)
        return FFB_E_INVAL;
    ffb_conn *conn = ev->conn;
    ffb__conn_error_clear(conn);
    if (reg && conn->io == FFB_IO_BLOCKING && ev->aux_state != FFB__AUX_OPEN)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the first registration on a blocking "
                              "connection is ffb_events_register(): the aux "
                              "connection must be opened as soon as the "
                              "server announces it");
    struct ffb_result *r = ffb__result_new(conn, FFB_OP_EVENTS, done,
                                           done_data);
    if (!r)
        return FFB_E_NOMEM;
    int rc = reg ? ffb__events_queue_register(ev, name, cb, data, &r->sync, 1)
                 : ffb__events_queue_unregister(ev, name, &r->sync);
    if (rc != 0)
        ffb__result_drop(conn, r);
    return rc;
}

int ffb_events_queue_register(ffb_events *ev, const char *name,
                              ffb_event_cb cb, void *data, ffb_cb done,
                              void *done_data) {
    return queue_twin(ev, name, cb, data, done, done_data, 1);
}

int ffb_events_queue_unregister(ffb_events *ev, const char *name,
                                ffb_cb done, void *done_data) {
    return queue_twin(ev, name, NULL, NULL, done, done_data, 0);
}
