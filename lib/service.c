/*
 * The Services API on a service attachment (reference 03, C.6): server
 * information, and actions - op_service_start followed by op_service_info
 * queries until the service has said everything and taken its input.
 *
 * An action is a request chain driven by its answers:
 *
 *   queue:  op_service_start + the first op_service_info, one write
 *   start answer   ok ------------------------------> RUN
 *                  error ---------------------------> DRAIN (the next
 *                      answer repeats the error; the service must end
 *                      before another can start, C.6.3)
 *   query answer   output / marker / stdin wanted / running
 *                      --> deliver, queue the next query (with input)
 *                  nothing more -------------------> done: sync completes
 *
 * The first query rides with the start; a query's answer is awaited
 * before the next is sent (each may carry input the answer asked for).
 * Nothing here waits: the blocking calls are in lib/blocking.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/internal.h"
#include "proto/service.h"

/* Answers are at most 65535 bytes (the service layer's lengths are 16
   bits, C.6.1); an input chunk leaves room for the other send items. */
#define ANSWER_SIZE 65535u
#define INPUT_CHUNK 65000u
/* Error answers in a row after which an action stops asking. */
#define MAX_ERROR_ANSWERS 3
/* Queries in flight while a backup streams (no input to wait for): the
   server answers them in order, and those past the end get an empty
   answer. They leave together once the answers of the last write are in,
   so a backup costs about a quarter of its queries in round trips. */
#define BINARY_WINDOW 4u
/* Text lines longer than this are delivered in pieces. */
#define MAX_LINE 65536u

enum { PHASE_RUN = 0, PHASE_DRAIN };

typedef struct svc_action {
    ffb_conn *conn;
    ffb__sync *sync;
    ffb_svc_io io;
    int text;          /* output goes to on_line, split into lines */
    unsigned wait_s;   /* isc_info_svc_timeout per query (0: none) */
    int phase;
    int cancel_sent;
    int cancel_unsupported;
    int stopped;       /* a callback asked to stop: output is dropped */
    int input_done;    /* on_input ended the input */
    uint32_t stdin_wanted;
    unsigned error_answers;
    unsigned window;   /* queries kept in flight (binary output only) */
    unsigned inflight;
    int ending;        /* an answer said the end: absorb those in flight */
    char *line;
    size_t line_len, line_cap;
    uint8_t *chunk;    /* input being sent */
    ffb_svc_stats stats;
} svc_action;

typedef struct svc_info_req {
    ffb__sync *sync;
    ffb_svc_info *out;
    size_t out_size;
} svc_info_req;

struct ffb__svc_state {
    svc_action *cur;      /* the running action */
    svc_info_req *info;   /* a server-info request owed */
    int data_mode;        /* a backup went to stdout on this attachment */
    int ver_known;        /* the server version string was seen */
    int ver[3];
    ffb_svc_stats last;
};

/* ---- state --------------------------------------------------------------- */

static void action_free(ffb_conn *conn, svc_action *a) {
    if (!a)
        return;
    ffb__free(conn->alloc, a->line);
    ffb__free(conn->alloc, a->chunk);
    ffb__free(conn->alloc, a);
}

void ffb__svc_reset(ffb_conn *conn) {
    if (!conn->svc)
        return;
    action_free(conn, conn->svc->cur);
    ffb__free(conn->alloc, conn->svc->info);
    ffb__free(conn->alloc, conn->svc);
    conn->svc = NULL;
}

static int svc_state(ffb_conn *conn) {
    if (conn->svc)
        return 0;
    conn->svc = ffb__malloc(conn->alloc, sizeof(*conn->svc));
    if (!conn->svc)
        return ffb__error_set(&conn->err, FFB_E_NOMEM, "out of memory");
    memset(conn->svc, 0, sizeof(*conn->svc));
    return 0;
}

/* The checks of every service call: a ready service attachment with no
   action running. */
static int svc_ready(ffb_conn *conn) {
    ffb__conn_error_clear(conn);
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (!conn->service)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "not a service attachment (connect with "
                              "ffb_svc_connect())");
    if ((rc = svc_state(conn)) < 0)
        return rc;
    if (conn->svc->cur || conn->svc->info)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "a service request is still running on this "
                              "attachment; one at a time");
    return 0;
}

/* "LI-V4.0.5.3140 Firebird 4.0" -> 4, 0, 5. */
static void learn_version(ffb_conn *conn, ffbp_bytes v) {
    char buf[64];
    size_t n = v.len < sizeof(buf) - 1 ? v.len : sizeof(buf) - 1;
    memcpy(buf, v.p, n);
    buf[n] = '\0';
    const char *s = strchr(buf, 'V');
    int a, b, c;
    if (s && sscanf(s + 1, "%d.%d.%d", &a, &b, &c) == 3) {
        conn->svc->ver_known = 1;
        conn->svc->ver[0] = a;
        conn->svc->ver[1] = b;
        conn->svc->ver[2] = c;
    }
}

/* 1 when the server stops a service on op_cancel: 4.0.2+ (C.6.7). */
static int cancel_supported(const ffb_conn *conn) {
    if (conn->protocol < 16)
        return 0; /* Firebird 3.0 */
    const struct ffb__svc_state *st = conn->svc;
    if (st && st->ver_known) {
        if (st->ver[0] != 4)
            return st->ver[0] > 4;
        return st->ver[1] > 0 || st->ver[2] >= 2;
    }
    return 1;
}

/* ---- server information -------------------------------------------------- */

static void copy_view(char *dst, size_t size, ffbp_bytes v) {
    size_t n = v.len < size - 1 ? v.len : size - 1;
    if (n)
        memcpy(dst, v.p, n);
    dst[n] = '\0';
}

static int info_reply(ffb_conn *conn, const ffbp_packet *pkt,
                      ffb__pending *p) {
    svc_info_req *q = p->ctx;
    ffb__sync *sync = q->sync;
    conn->svc->info = NULL;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r) {
        ffb__free(conn->alloc, q);
        return FFB_E_PROTO;
    }
    ffbp_svc_answer ans;
    int bad = ffbp_get_svc_answer(r->data.p, r->data.len, &ans) < 0;
    if (ffb__status_is_error(&r->status)) {
        /* A user without administrator rights is refused the paths and
           the database list (isc_insufficient_svc_privileges), the rest
           being answered: `out` gets what came. */
        ffb__sync_fail_status(conn, sync, FFB_E_SERVER, &r->status,
                              "service information");
        if (bad)
            ffbp_get_svc_answer(NULL, 0, &ans); /* all absent */
        bad = 0;
    }
    if (bad) {
        ffb__free(conn->alloc, q);
        return ffb__error_set(&conn->err, FFB_E_PROTO,
                              "malformed answer to op_service_info (server "
                              "information, %zu bytes)",
                              (size_t)r->data.len);
    }
    ffb_svc_info full;
    memset(&full, 0, sizeof(full));
    full.version = (int)ans.version;
    full.capabilities = (int)ans.capabilities;
    full.attachments = (int)ans.num_att;
    full.databases = (int)ans.num_db;
    copy_view(full.server_version, sizeof(full.server_version),
              ans.server_version);
    copy_view(full.implementation, sizeof(full.implementation),
              ans.implementation);
    copy_view(full.env, sizeof(full.env), ans.env);
    copy_view(full.env_lock, sizeof(full.env_lock), ans.env_lock);
    copy_view(full.env_msg, sizeof(full.env_msg), ans.env_msg);
    copy_view(full.user_dbpath, sizeof(full.user_dbpath), ans.user_dbpath);
    if (ans.server_version.p)
        learn_version(conn, ans.server_version);
    ffb__give(q->out, q->out_size, &full, sizeof(full));
    ffb__free(conn->alloc, q);
    sync->done = 1;
    return 0;
}

int ffb__svc_queue_server_info(ffb_conn *conn, ffb_svc_info *out,
                               size_t out_size, ffb__sync *sync) {
    if (!out || out_size == 0)
        return ffb__error_set(&conn->err, FFB_E_INVAL, "no output struct");
    int rc = svc_ready(conn);
    if (rc < 0)
        return rc;
    svc_info_req *q = ffb__malloc(conn->alloc, sizeof(*q));
    if (!q)
        return ffb__error_set(&conn->err, FFB_E_NOMEM, "out of memory");
    q->sync = sync;
    q->out = out;
    q->out_size = out_size;
    static const uint8_t items[] = {
        FFBP_SVC_INFO_VERSION,      FFBP_SVC_INFO_SERVER_VERSION,
        FFBP_SVC_INFO_IMPLEMENTATION, FFBP_SVC_INFO_CAPABILITIES,
        FFBP_SVC_INFO_SVR_DB_INFO,  FFBP_SVC_INFO_GET_ENV,
        FFBP_SVC_INFO_GET_ENV_LOCK, FFBP_SVC_INFO_GET_ENV_MSG,
        FFBP_SVC_INFO_USER_DBPATH};
    static const uint8_t send[] = {FFBP_SVC_INFO_END};
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_service_info(&w, send, sizeof(send), items, sizeof(items),
                          8192);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0) {
        ffb__free(conn->alloc, q);
        return rc;
    }
    ffb__pending *p =
        ffb__engine_expect(conn, FFBP_OP_SERVICE_INFO, info_reply, q);
    if (!p) {
        ffb__free(conn->alloc, q);
        return ffb__engine_fail(conn, FFB_E_NOMEM);
    }
    p->sync = sync;
    conn->svc->info = q;
    return 0;
}

/* ---- actions ------------------------------------------------------------- */

static int query_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p);

static void request_cancel(svc_action *a) {
    ffb_conn *conn = a->conn;
    if (a->cancel_sent || a->cancel_unsupported)
        return;
    if (!cancel_supported(conn)) {
        a->cancel_unsupported = 1;
        a->stopped = 1;
        return;
    }
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_cancel(&w, FFBP_CANCEL_RAISE);
    /* Not answered (C.7.1): it rides with the next query. */
    if (ffb__queue_free(conn, &w, 0) == 0)
        a->cancel_sent = 1;
}

/* Hand one complete line (without its newline) to on_line. */
static void emit_line(svc_action *a, const char *s, size_t n) {
    if (!s)
        s = ""; /* an empty line before any text: never NULL */
    a->stats.lines++;
    if (a->io.on_line && !a->stopped &&
        a->io.on_line(s, n, a->io.data) != 0)
        request_cancel(a);
}

static int line_append(svc_action *a, const uint8_t *p, size_t n) {
    if (n == 0)
        return 0;
    if (a->line_len + n > a->line_cap) {
        size_t cap = a->line_cap ? a->line_cap : 256;
        while (cap < a->line_len + n)
            cap *= 2;
        char *l = ffb__realloc(a->conn->alloc, a->line, cap);
        if (!l)
            return FFB_E_NOMEM;
        a->line = l;
        a->line_cap = cap;
    }
    memcpy(a->line + a->line_len, p, n);
    a->line_len += n;
    return 0;
}

/* Split text output into lines; a partial line waits for the rest. */
static int deliver_text(svc_action *a, const uint8_t *p, size_t n) {
    while (n) {
        const uint8_t *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (a->line_len + take > MAX_LINE)
            take = MAX_LINE - a->line_len;
        if (line_append(a, p, take) < 0)
            return FFB_E_NOMEM;
        p += take;
        n -= take;
        if (nl && p == nl) {
            p++;
            n--;
        } else if (a->line_len < MAX_LINE) {
            break; /* no newline yet */
        }
        emit_line(a, a->line, a->line_len);
        a->line_len = 0;
    }
    return 0;
}

static void action_finish(ffb_conn *conn, svc_action *a) {
    ffb__sync *sync = a->sync;
    if (a->line_len) {
        emit_line(a, a->line, a->line_len);
        a->line_len = 0;
    }
    if (a->cancel_sent && sync->rc == 0) {
        ffb__error_set(ffb__sync_error(conn, sync), FFB_E_CANCELLED,
                       "the service action was cancelled");
        sync->rc = FFB_E_CANCELLED;
    } else if (a->cancel_sent &&
               (sync->rc == FFB_E_SERVER || sync->rc == FFB_E_SHUTDOWN)) {
        /* The service reports the cancel as its error; Firebird 4.0.5
           reports it as isc_att_shutdown and then closes the service
           attachment (the connection stays broken: docs/services.md). */
        ffb__sync_error(conn, sync)->code = FFB_E_CANCELLED;
        sync->rc = FFB_E_CANCELLED;
    } else if (a->cancel_unsupported && sync->rc == 0) {
        ffb__error_set(ffb__sync_error(conn, sync), FFB_E_UNSUPPORTED,
                       "the action could not be cancelled: this server "
                       "(Firebird %s) ignores op_cancel on a service "
                       "(4.0.2+ stops it); it ran to its end",
                       conn->protocol < 16 ? "3.0" : "4.0.0/4.0.1");
        sync->rc = FFB_E_UNSUPPORTED;
    }
    conn->svc->last = a->stats;
    conn->svc->cur = NULL;
    action_free(conn, a);
    sync->done = 1;
}

/* Queue the next op_service_info: wait, input if asked, and what to ask. */
static int send_query(svc_action *a) {
    ffb_conn *conn = a->conn;
    ffbp_writer send, w;
    ffbp_writer_init(&send, conn->alloc);
    size_t got = 0;
    int with_data = 0;
    if (a->stdin_wanted && a->io.on_input) {
        with_data = 1;
        if (!a->input_done && !a->stopped) {
            size_t want = a->stdin_wanted < INPUT_CHUNK ? a->stdin_wanted
                                                        : INPUT_CHUNK;
            if (!a->chunk &&
                !(a->chunk = ffb__malloc(conn->alloc, INPUT_CHUNK))) {
                ffbp_writer_free(&send);
                return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
            }
            if (a->io.on_input(a->chunk, want, &got, a->io.data) != 0) {
                got = 0;
                request_cancel(a);
            }
            if (got > want)
                got = want;
            if (got == 0)
                a->input_done = 1;
        }
        /* After the end every request is answered with an empty item
           (C.6.6: a truncated stream needs more than one). */
        a->stats.bytes_in += got;
    }
    ffbp_put_svc_send_items(&send, a->wait_s, with_data, a->chunk, got);
    uint8_t recv[4];
    size_t nrecv = 0;
    if (a->io.on_input)
        recv[nrecv++] = FFBP_SVC_INFO_STDIN;
    recv[nrecv++] = FFBP_SVC_INFO_RUNNING;
    recv[nrecv++] = FFBP_SVC_INFO_TO_EOF; /* last: markers follow it */
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_service_info(&w, send.data, send.len, recv, nrecv, ANSWER_SIZE);
    ffbp_writer_free(&send);
    int rc = ffb__queue_free(conn, &w, 1);
    if (rc < 0)
        return rc;
    ffb__pending *p =
        ffb__engine_expect(conn, FFBP_OP_SERVICE_INFO, query_reply, a);
    if (!p)
        return ffb__engine_fail(conn, FFB_E_NOMEM);
    p->sync = a->sync;
    a->stats.queries++;
    a->inflight++;
    return 0;
}

/* An answer said nothing more comes: done once those in flight are in. */
static void action_ending(ffb_conn *conn, svc_action *a) {
    a->ending = 1;
    if (a->inflight == 0)
        action_finish(conn, a);
}

static int start_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    svc_action *a = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return FFB_E_PROTO;
    if (ffb__status_is_error(&r->status)) {
        ffb__sync_fail_status(conn, a->sync, FFB_E_SERVER, &r->status,
                              "service start");
        a->phase = PHASE_DRAIN;
    }
    return 0; /* the first query's answer follows */
}

static int query_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    svc_action *a = p->ctx;
    a->inflight--;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return FFB_E_PROTO;
    ffbp_svc_answer ans;
    int bad = ffbp_get_svc_answer(r->data.p, r->data.len, &ans) < 0;
    if (a->ending) {
        /* Asked ahead, answered after the end: nothing may come in it. */
        if (ffb__status_is_error(&r->status))
            ffb__sync_fail_status(conn, a->sync, FFB_E_SERVER, &r->status,
                                  "service");
        else if (bad || (ans.has_output && ans.output.len))
            return ffb__error_set(&conn->err, FFB_E_PROTO,
                                  "service output after its end");
        action_ending(conn, a);
        return 0;
    }
    if (ffb__status_is_error(&r->status) && a->cancel_sent &&
        ffb__status_code(&r->status, FFB_E_SERVER) == FFB_E_SHUTDOWN) {
        /* Firebird 4.0.5 answers a cancelled service with isc_att_shutdown
           and closes the attachment: the action ends here, cancelled (the
           engine then breaks the connection with that cause). */
        ffb__sync_fail_status(conn, a->sync, FFB_E_SERVER, &r->status,
                              "service");
        action_ending(conn, a);
        return 0;
    }
    if (ffb__status_is_error(&r->status)) {
        /* A failed start is repeated once by the next answer (C.6.3):
           the first error is the one reported. Error answers may carry
           the whole buffer, garbage included. */
        if (a->phase != PHASE_DRAIN)
            ffb__sync_fail_status(conn, a->sync, FFB_E_SERVER, &r->status,
                                  "service");
        if (bad || ++a->error_answers >= MAX_ERROR_ANSWERS) {
            action_ending(conn, a);
            return 0;
        }
    } else {
        if (bad) {
            char d[64];
            snprintf(d, sizeof(d), "%zu bytes", (size_t)r->data.len);
            return ffb__error_set(&conn->err, FFB_E_PROTO,
                                  "malformed answer to op_service_info "
                                  "(service output, %s)",
                                  d);
        }
        a->error_answers = 0;
    }
    if (ans.stdin_wanted > 0 && !a->io.on_input)
        return ffb__error_set(&conn->err, FFB_E_PROTO,
                              "the service asks for input it was not "
                              "offered");
    size_t n = ans.has_output ? ans.output.len : 0;
    if (n) {
        a->stats.bytes_out += n;
        if (a->stopped) {
            /* dropped */
        } else if (a->text) {
            if (deliver_text(a, ans.output.p, n) < 0)
                return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
        } else if (a->io.on_data &&
                   a->io.on_data(ans.output.p, n, a->io.data) != 0) {
            request_cancel(a);
        }
    }
    a->stdin_wanted = ans.stdin_wanted > 0 ? (uint32_t)ans.stdin_wanted : 0;
    /* The rule of C.6.5: go on while the item carried data or a marker
       says more may come; also while input is wanted or the service
       still runs. */
    int more = ans.has_output &&
               (n > 0 || ans.timeout || ans.not_ready || ans.truncated);
    more = more || a->stdin_wanted > 0 || ans.running == 1;
    if (!more) {
        action_ending(conn, a);
        return 0;
    }
    unsigned window = a->phase == PHASE_RUN && !a->error_answers ? a->window
                                                                 : 1;
    while (a->inflight < window) {
        int rc = send_query(a);
        if (rc < 0)
            return rc; /* the connection is broken */
    }
    return 0;
}

static int action_queue(ffb_conn *conn, const uint8_t *spb, size_t len,
                        const ffb_svc_io *io, int writes_text,
                        unsigned wait_s, ffb__sync *sync) {
    if ((!spb && len) || len == 0 || len > 65535)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "the start block must be 1 to 65535 bytes");
    if (io && io->version != FFB_SVC_IO_VERSION)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "ffb_svc_io.version is %u, this library "
                              "knows %u (use FFB_SVC_IO_INIT)",
                              io->version, (unsigned)FFB_SVC_IO_VERSION);
    int rc = svc_ready(conn);
    if (rc < 0)
        return rc;
    if (writes_text && conn->svc->data_mode)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "a backup was streamed on this service "
                              "attachment: the server keeps it in data mode "
                              "and drops all text output (reference 03, "
                              "C.6.5); use a new attachment");
    svc_action *a = ffb__malloc(conn->alloc, sizeof(*a));
    if (!a)
        return ffb__error_set(&conn->err, FFB_E_NOMEM, "out of memory");
    memset(a, 0, sizeof(*a));
    a->conn = conn;
    a->sync = sync;
    if (io)
        a->io = *io;
    a->text = a->io.on_data == NULL;
    a->wait_s = wait_s;
    a->window = !a->text && !a->io.on_input ? BINARY_WINDOW : 1;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_service_start(&w, spb, len);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0) {
        action_free(conn, a);
        return rc;
    }
    ffb__pending *p =
        ffb__engine_expect(conn, FFBP_OP_SERVICE_START, start_reply, a);
    if (!p) {
        action_free(conn, a);
        return ffb__engine_fail(conn, FFB_E_NOMEM);
    }
    p->sync = sync;
    conn->svc->cur = a;
    conn->svc->last = (ffb_svc_stats){0};
    if (spb[0] == FFBP_SVC_BACKUP && !a->text)
        conn->svc->data_mode = 1;
    /* The first query goes in the same write as the start. */
    return send_query(a);
}

int ffb__svc_queue_run(ffb_conn *conn, const uint8_t *spb, size_t len,
                       const ffb_svc_io *io, ffb__sync *sync) {
    /* Raw actions: text unless binary output is asked; a raw backup to
       stdout is recognised too. */
    int text = io && io->on_line && !io->on_data;
    return action_queue(conn, spb, len, io, text, io ? io->wait_s : 0, sync);
}

int ffb_svc_cancel(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    if (!conn->service || !conn->svc || !conn->svc->cur)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "no service action is running");
    if (!cancel_supported(conn))
        return ffb__error_set(&conn->err, FFB_E_UNSUPPORTED,
                              "this server (Firebird %s) ignores op_cancel on "
                              "a service connection; Firebird 4.0.2+ stops "
                              "the service",
                              conn->protocol < 16 ? "3.0" : "4.0.0/4.0.1");
    request_cancel(conn->svc->cur);
    return 0;
}

int ffb_svc_last_stats(const ffb_conn *conn, ffb_svc_stats *out,
                       size_t out_size) {
    if (!conn || !out)
        return FFB_E_INVAL;
    ffb_svc_stats z = {0};
    const ffb_svc_stats *s = conn->svc ? &conn->svc->last : &z;
    if (conn->svc && conn->svc->cur)
        s = &conn->svc->cur->stats;
    return ffb__give(out, out_size, s, sizeof(*s));
}

void ffb_svc_properties_init(ffb_svc_properties *p) {
    if (!p)
        return;
    p->sweep_interval = p->page_buffers = p->forced_writes = p->read_only =
        -1;
    p->shutdown = p->shutdown_timeout = p->online = -1;
}

/* ---- the built-in actions: their start blocks ---------------------------- */

static const char *db_of(const ffb_conn *conn, const char *db) {
    return db ? db : conn->database;
}

/* Build a start block into `w`; FFB_E_INVAL when a string is too long. */
static int spb_done(ffb_conn *conn, ffbp_spb *s, ffbp_writer *w) {
    if (s->bad || w->failed) {
        ffbp_writer_free(w);
        return ffb__error_set(&conn->err, w->failed ? FFB_E_NOMEM
                                                    : FFB_E_INVAL,
                              "a service argument is longer than 65535 "
                              "bytes");
    }
    return 0;
}

static int queue_spb(ffb_conn *conn, ffbp_writer *w, const ffb_svc_io *io,
                     int writes_text, ffb__sync *sync) {
    int rc = action_queue(conn, w->data, w->len, io, writes_text, 0, sync);
    ffbp_writer_free(w);
    return rc;
}

int ffb__svc_queue_builtin(ffb_conn *conn, const ffb__svc_req *q,
                           ffb__sync *sync) {
    ffbp_writer w;
    ffbp_spb s;
    ffbp_writer_init(&w, conn->alloc);
    ffb_svc_io io = FFB_SVC_IO_INIT;
    io.on_line = q->on_line;
    io.data = q->data;
    int text = 1;
    const char *db = db_of(conn, q->db);
    switch (q->kind) {
    case FFB__SVC_STATS:
        ffbp_spb_begin(&s, &w, FFBP_SVC_DB_STATS);
        ffbp_spb_str(&s, FFBP_SPB_DBNAME, db);
        ffbp_spb_int(&s, FFBP_SPB_OPTIONS, q->options);
        break;
    case FFB__SVC_LOG:
        ffbp_spb_begin(&s, &w, FFBP_SVC_GET_FB_LOG);
        break;
    case FFB__SVC_VALIDATE:
        ffbp_spb_begin(&s, &w, FFBP_SVC_VALIDATE);
        ffbp_spb_str(&s, FFBP_SPB_DBNAME, db);
        break;
    case FFB__SVC_REPAIR:
        ffbp_spb_begin(&s, &w, FFBP_SVC_REPAIR);
        ffbp_spb_str(&s, FFBP_SPB_DBNAME, db);
        ffbp_spb_int(&s, FFBP_SPB_OPTIONS, q->options);
        break;
    case FFB__SVC_PROPERTIES: {
        const ffb_svc_properties *pr = q->props;
        ffbp_spb_begin(&s, &w, FFBP_SVC_PROPERTIES);
        ffbp_spb_str(&s, FFBP_SPB_DBNAME, db);
        int any = 0;
        if (pr->sweep_interval >= 0) {
            ffbp_spb_int(&s, FFBP_SPB_PRP_SWEEP_INTERVAL,
                         (uint32_t)pr->sweep_interval);
            any = 1;
        }
        if (pr->page_buffers >= 0) {
            ffbp_spb_int(&s, FFBP_SPB_PRP_PAGE_BUFFERS,
                         (uint32_t)pr->page_buffers);
            any = 1;
        }
        if (pr->forced_writes >= 0) {
            ffbp_spb_byte(&s, FFBP_SPB_PRP_WRITE_MODE,
                          pr->forced_writes ? 38 : 37);
            any = 1;
        }
        if (pr->read_only >= 0) {
            ffbp_spb_byte(&s, FFBP_SPB_PRP_ACCESS_MODE,
                          pr->read_only ? 39 : 40);
            any = 1;
        }
        if (pr->shutdown > 0) {
            if (pr->shutdown > FFB_SVC_MODE_FULL)
                goto bad_mode;
            ffbp_spb_byte(&s, FFBP_SPB_PRP_SHUTDOWN_MODE,
                          (uint8_t)pr->shutdown);
            ffbp_spb_int(&s, FFBP_SPB_PRP_FORCE_SHUTDOWN,
                         pr->shutdown_timeout > 0
                             ? (uint32_t)pr->shutdown_timeout
                             : 0);
            any = 1;
        }
        if (pr->online >= 0) {
            if (pr->online > FFB_SVC_MODE_SINGLE)
                goto bad_mode;
            ffbp_spb_byte(&s, FFBP_SPB_PRP_ONLINE_MODE, (uint8_t)pr->online);
            any = 1;
        }
        if (!any) {
            ffbp_writer_free(&w);
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "no property to change");
        }
        break;
    bad_mode:
        ffbp_writer_free(&w);
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "shutdown must be MULTI, SINGLE or FULL; "
                              "online NORMAL, MULTI or SINGLE");
    }
    case FFB__SVC_BACKUP:
        ffbp_spb_begin(&s, &w, FFBP_SVC_BACKUP);
        ffbp_spb_str(&s, FFBP_SPB_DBNAME, db);
        ffbp_spb_str(&s, FFBP_SPB_BKP_FILE, "stdout");
        if (q->options)
            ffbp_spb_int(&s, FFBP_SPB_OPTIONS, q->options);
        io.on_line = NULL;
        io.on_data = q->on_data;
        text = 0;
        break;
    case FFB__SVC_RESTORE:
        db = q->target ? q->target : conn->database;
        if (!db || !db[0]) {
            ffbp_writer_free(&w);
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "no target database for the restore");
        }
        ffbp_spb_begin(&s, &w, FFBP_SVC_RESTORE);
        ffbp_spb_str(&s, FFBP_SPB_BKP_FILE, "stdin");
        ffbp_spb_str(&s, FFBP_SPB_DBNAME, db);
        if (q->on_line)
            ffbp_spb_flag(&s, FFBP_SPB_VERBOSE);
        ffbp_spb_int(&s, FFBP_SPB_OPTIONS,
                     q->options | (q->replace ? FFBP_SPB_RES_REPLACE
                                              : FFBP_SPB_RES_CREATE));
        io.on_input = q->on_input;
        break;
    default:
        ffbp_writer_free(&w);
        return FFB_E_INVAL;
    }
    int rc = spb_done(conn, &s, &w);
    if (rc < 0)
        return rc;
    /* Text the server drops in data mode (C.6.5): statistics and
       validation reports; the log, properties and a sweep still work. */
    int writes_text = text && (q->kind == FFB__SVC_STATS ||
                               q->kind == FFB__SVC_VALIDATE ||
                               (q->kind == FFB__SVC_REPAIR && q->on_line));
    return queue_spb(conn, &w, &io, writes_text, sync);
}

/* ---- queue twins ---------------------------------------------------------- */

int ffb_svc_queue_server_info(ffb_conn *conn, ffb_svc_info *out,
                              size_t out_size, ffb_cb cb, void *data) {
    if (!conn || !out)
        return FFB_E_INVAL;
    struct ffb_result *r = ffb__result_new(conn, FFB_OP_SVC_INFO, cb, data);
    if (!r)
        return FFB_E_NOMEM;
    int rc = ffb__svc_queue_server_info(conn, out, out_size, &r->sync);
    if (rc < 0 && !r->sync.done)
        ffb__result_drop(conn, r);
    return rc;
}

int ffb_svc_queue_run(ffb_conn *conn, const uint8_t *spb, size_t spb_len,
                      const ffb_svc_io *io, ffb_cb cb, void *data) {
    if (!conn)
        return FFB_E_INVAL;
    struct ffb_result *r = ffb__result_new(conn, FFB_OP_SVC_ACTION, cb, data);
    if (!r)
        return FFB_E_NOMEM;
    int rc = ffb__svc_queue_run(conn, spb, spb_len, io, &r->sync);
    if (rc < 0 && !r->sync.done)
        ffb__result_drop(conn, r);
    return rc;
}

/* The queue twins of the built-in actions: the same request chains, the
   FFB_OP_SVC_ACTION result completing when the action has ended. */
static int queue_builtin(ffb_conn *conn, const ffb__svc_req *q, ffb_cb cb,
                         void *data) {
    if (!conn)
        return FFB_E_INVAL;
    struct ffb_result *r = ffb__result_new(conn, FFB_OP_SVC_ACTION, cb, data);
    if (!r)
        return FFB_E_NOMEM;
    int rc = ffb__svc_queue_builtin(conn, q, &r->sync);
    if (rc < 0 && !r->sync.done)
        ffb__result_drop(conn, r);
    return rc;
}

int ffb_svc_queue_db_stats(ffb_conn *conn, const char *db, unsigned options,
                           ffb_svc_line_cb on_line, void *line_data,
                           ffb_cb cb, void *data) {
    ffb__svc_req q = {.kind = FFB__SVC_STATS, .db = db, .options = options,
                      .on_line = on_line, .data = line_data};
    return queue_builtin(conn, &q, cb, data);
}

int ffb_svc_queue_backup(ffb_conn *conn, const char *db, unsigned options,
                         ffb_svc_data_cb on_data, void *stream_data,
                         ffb_cb cb, void *data) {
    if (!on_data)
        return FFB_E_INVAL;
    ffb__svc_req q = {.kind = FFB__SVC_BACKUP, .db = db, .options = options,
                      .on_data = on_data, .data = stream_data};
    return queue_builtin(conn, &q, cb, data);
}

int ffb_svc_queue_restore(ffb_conn *conn, const char *target, int replace,
                          ffb_svc_input_cb on_input, ffb_svc_line_cb on_line,
                          void *stream_data, ffb_cb cb, void *data) {
    if (!on_input)
        return FFB_E_INVAL;
    ffb__svc_req q = {.kind = FFB__SVC_RESTORE, .target = target,
                      .replace = replace, .on_input = on_input,
                      .on_line = on_line, .data = stream_data};
    return queue_builtin(conn, &q, cb, data);
}

int ffb_svc_queue_set_properties(ffb_conn *conn, const char *db,
                                 const ffb_svc_properties *p, ffb_cb cb,
                                 void *data) {
    if (!p)
        return FFB_E_INVAL;
    ffb__svc_req q = {.kind = FFB__SVC_PROPERTIES, .db = db, .props = p};
    return queue_builtin(conn, &q, cb, data);
}
