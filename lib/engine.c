/*
 * The sans-I/O connection engine: staging of outgoing packets, the byte
 * transforms (zlib, then the wire cipher), parsing of received packets and
 * dispatch to the handshake or to the FIFO of replies owed to us.
 *
 * Send path:    packet -> stage -> [deflate, Z_SYNC_FLUSH] -> [encrypt] -> out
 * Receive path: wire_in -> [decrypt] -> [inflate] -> in -> packet -> handler
 *
 * Switching the receive cipher on mid-chunk: when op_crypt was written in
 * the same flush as the final op_cont_auth, the server's answer chunk holds
 * the op_cont_auth reply in clear and then the op_crypt reply encrypted.
 * While that switch is pending (rx_bytewise) the engine installs the
 * decryptor exactly after the reply that carries the IV: without
 * compression the bytes behind that packet, moved as they came, are
 * decrypted in place; with compression inflate is fed up to each sync-flush
 * marker (00 00 FF FF) and the decryptor starts after the one ending that
 * reply. Every received byte is transformed once, whatever the chunking.
 *
 * Round trips: `awaiting` is set when bytes of a flush that holds a
 * reply-expecting packet are handed to the transport; the first received
 * bytes while it is set count one round trip.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/internal.h"
#include "lib/wirecrypt.h"
#include "proto/sql.h"
#include "lib/zstream.h"
#include "lib/cancelq.h"

/* The handshake ended: the queued connect's result completes. */
void ffb__hs_complete(ffb_conn *conn, int rc) {
    ffb__sync *s = conn->hs_sync;
    conn->hs_sync = NULL;
    if (s && rc < 0)
        ffb__sync_fail(conn, s, rc);
    else if (s)
        s->done = 1;
}

/* After a call from the application failed: a result that completed with
   the failure (the queued connect's) goes to its callback now. */
static int failed(ffb_conn *conn, int rc) {
    if (rc < 0 && !conn->in_dispatch)
        conn->on_results(conn);
    return rc;
}

int ffb__engine_break(ffb_conn *conn, int code) {
    if (conn->state == FFB__ST_HANDSHAKE) {
        conn->on_hs_wipe(conn); /* the handshake ends here */
        ffb__hs_complete(conn, code);
    }
    if (conn->state != FFB__ST_BROKEN) {
        conn->state = FFB__ST_BROKEN;
        conn->fatal_code = code;
        conn->hs = conn->hs == FFB__HS_NONE ? FFB__HS_NONE : FFB__HS_FAILED;
    }
    /* Held requests can never be sent now: they complete with the cause
       while whoever waits for them still does (a blocking call returns
       when the connection breaks). Inside the release loop, it does that
       on its way out. */
    if (!conn->releasing)
        ffb__engine_drop_held(conn, code);
    return code;
}

int ffb__engine_fail(ffb_conn *conn, int code) {
    return code <= FFB_E_FATAL ? ffb__engine_break(conn, code) : code;
}

/* ---- time ------------------------------------------------------------------------ */

int64_t ffb_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ffb__now(const ffb_conn *conn) {
    return conn->clock ? conn->clock(conn->clock_data) : ffb_now_ms();
}

void ffb__conn_set_clock(ffb_conn *conn, int64_t (*clock)(void *data),
                         void *data) {
    conn->clock = clock;
    conn->clock_data = data;
}

/* The wire is in use: bytes wait to be written, or an answer the server
   sends at once is owed for something already flushed. */
static int wire_busy(const ffb_conn *conn) {
    if (conn->out.len || conn->awaiting)
        return 1;
    if (conn->state == FFB__ST_HANDSHAKE)
        return conn->hs_flushed && !conn->hs_finished;
    for (size_t i = 0; i + conn->fifo_unsent < conn->fifo_len; i++)
        if (!conn->fifo[(conn->fifo_head + i) % conn->fifo_cap].deferred)
            return 1;
    return 0;
}

/* The wire moved (or starts being used): the I/O timeout counts again,
   from the next time the deadline is asked for (the clock is read then,
   once per wait, not once per packet; a timeout can only come later that
   way, never sooner). */
static void io_progress(ffb_conn *conn) { conn->io_moved = 1; }

int64_t ffb_conn_deadline(ffb_conn *conn) {
    if (!conn || conn->state == FFB__ST_BROKEN)
        return -1;
    if (conn->io_moved) {
        conn->io_moved = 0;
        if (conn->io_timeout_ms > 0)
            conn->io_mark = ffb__now(conn);
    }
    int64_t d = -1;
    if (conn->state == FFB__ST_HANDSHAKE && conn->hs_deadline >= 0)
        d = conn->hs_deadline;
    if (conn->io_timeout_ms > 0 && wire_busy(conn)) {
        int64_t io = conn->io_mark + conn->io_timeout_ms;
        if (d < 0 || io < d)
            d = io;
    }
    return d;
}

static const char *waiting_for(const ffb_conn *conn);

int ffb_conn_expire(ffb_conn *conn, int64_t now_ms) {
    if (!conn)
        return FFB_E_INVAL;
    if (conn->state == FFB__ST_BROKEN)
        return ffb__broken_code(conn);
    int64_t d = ffb_conn_deadline(conn);
    if (d < 0 || now_ms < d)
        return 0;
    if (conn->state == FFB__ST_HANDSHAKE && conn->hs_deadline >= 0 &&
        now_ms >= conn->hs_deadline)
        ffb__error_set(&conn->err, FFB_E_TIMEOUT,
                       "connecting to %s port %s timed out after %d ms "
                       "(waiting for %s)",
                       conn->host, conn->port, conn->connect_timeout_ms,
                       waiting_for(conn));
    else
        ffb__error_set(&conn->err, FFB_E_TIMEOUT,
                       "no %s within %d ms (waiting for %s); the "
                       "connection is unusable",
                       conn->out.len ? "progress writing to the server"
                                     : "answer from the server",
                       conn->io_timeout_ms, waiting_for(conn));
    /* An answer owed may still come, or half of one has: nothing later on
       this wire could be matched to its request with certainty. */
    return failed(conn, ffb__engine_break(conn, FFB_E_TIMEOUT));
}

/* Out of memory where the wire is concerned: the requests staged and the
   replies expected may no longer match, so the connection is broken
   (every fatal-class error does that). */
static int queue_nomem(ffb_conn *conn, const char *what) {
    return ffb__engine_fail(
        conn, ffb__fatal(conn, FFB_E_NOMEM, "out of memory %s",
                             what));
}

int ffb__fatal(ffb_conn *conn, int code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ffb__error_set(&conn->err, code, "%s", msg);
    return ffb__engine_fail(conn, code);
}

int ffb__engine_queue(ffb_conn *conn, const ffbp_writer *w, int expects) {
    if (w->failed)
        return queue_nomem(conn, "while encoding a packet");
    ffbp_put_raw(&conn->stage, w->data, w->len);
    if (conn->stage.failed)
        return queue_nomem(conn, "while queueing a packet");
    conn->stats.packets_sent++;
    if (expects) {
        conn->stage_expects = 1;
        if (!conn->in_dispatch)
            conn->stage_direct = 1;
    }
    return 0;
}

ffb__pending *ffb__engine_expect(ffb_conn *conn, int32_t op, ffb__reply_fn fn,
                                 void *ctx) {
    if (conn->fifo_len == conn->fifo_cap) {
        size_t cap = conn->fifo_cap ? conn->fifo_cap * 2 : 16;
        ffb__pending *f = ffb__malloc(conn->alloc, cap * sizeof(*f));
        if (!f) {
            /* The request is staged already: without its handler the next
               answer would go to the wrong request. */
            queue_nomem(conn, "for the reply queue");
            return NULL;
        }
        for (size_t i = 0; i < conn->fifo_len; i++)
            f[i] = conn->fifo[(conn->fifo_head + i) % conn->fifo_cap];
        ffb__free(conn->alloc, conn->fifo);
        conn->fifo = f;
        conn->fifo_cap = cap;
        conn->fifo_head = 0;
    }
    ffb__pending *p =
        &conn->fifo[(conn->fifo_head + conn->fifo_len) % conn->fifo_cap];
    memset(p, 0, sizeof(*p));
    p->op = op;
    p->on_reply = fn;
    p->ctx = ctx;
    conn->fifo_len++;
    conn->fifo_unsent++;
    return p;
}

int ffb__engine_owes_flushed(const ffb_conn *conn) {
    for (size_t i = 0; i < conn->fifo_len; i++)
        if (!conn->fifo[(conn->fifo_head + i) % conn->fifo_cap].deferred)
            return 1;
    return 0;
}

/* Answers the server sends at once are owed for requests already
   flushed. */
int ffb__engine_owed_sent(const ffb_conn *conn) {
    for (size_t i = 0; i + conn->fifo_unsent < conn->fifo_len; i++)
        if (!conn->fifo[(conn->fifo_head + i) % conn->fifo_cap].deferred)
            return 1;
    return 0;
}

/* What is staged is worth a write now. Deferred requests alone (frees,
   closes) are not: they ride with the next request that needs an answer.
   Follow-ups queued while answers were handled (held requests released,
   the next step of an operation) wait while answers to the last write
   are still owed, and go together in one write once those are in. */
static int stage_ready(const ffb_conn *conn) {
    if (conn->stage.len == 0)
        return 0;
    if (conn->state != FFB__ST_READY)
        return 1;
    if (!conn->stage_expects)
        return 0;
    return conn->stage_direct || !ffb__engine_owed_sent(conn);
}

int ffb__engine_flush_needed(ffb_conn *conn) {
    return stage_ready(conn) ? ffb__engine_flush(conn) : 0;
}

/* Compress and encrypt `len` plaintext bytes onto the end of `out`. */
static int to_wire(ffb_conn *conn, const uint8_t *data, size_t len) {
    size_t start = conn->out.len;
    if (conn->z) {
        int rc = ffb__zstream_deflate(conn->z, data, len, &conn->out.data,
                                      &conn->out.len, &conn->out.cap);
        if (rc < 0)
            return ffb__engine_fail(
                conn, ffb__error_set(&conn->err, rc == FFB_E_NOMEM ? FFB_E_NOMEM
                                                                    : FFB_E_PROTO,
                                     "zlib compression failed"));
    } else {
        ffbp_put_raw(&conn->out, data, len);
        if (conn->out.failed)
            return ffb__engine_fail(
                conn, ffb__fatal(conn, FFB_E_NOMEM,
                                     "out of memory for the output buffer"));
    }
    if (conn->tx_cipher &&
        ffb__cipher_apply(conn->tx_cipher, conn->out.data + start,
                          conn->out.data + start, conn->out.len - start) < 0)
        return ffb__engine_fail(
            conn, ffb__error_set(&conn->err, FFB_E_CRYPT,
                                 "wire encryption failed"));
    conn->stats.bytes_sent += len;
    conn->stats.flushes++;
    return 0;
}

int ffb__engine_flush(ffb_conn *conn) {
    if (conn->stage.len == 0)
        return 0;
    if (conn->io_timeout_ms > 0 && !wire_busy(conn))
        io_progress(conn);
    if (conn->state == FFB__ST_HANDSHAKE)
        conn->hs_flushed = 1;
    int rc = to_wire(conn, conn->stage.data, conn->stage.len);
    if (rc < 0)
        return rc;
    if (conn->tx_next) {
        /* The flush that carried op_crypt went out in clear; everything
           after it is encrypted. */
        conn->tx_cipher = conn->tx_next;
        conn->tx_next = NULL;
    }
    conn->fifo_unsent = 0;
    if (conn->stage_expects)
        conn->out_expects = 1;
    conn->stage_expects = 0;
    conn->stage_direct = 0;
    ffbp_writer_reset(&conn->stage);
    return 0;
}

int ffb__engine_send_unanswered(ffb_conn *conn, const ffbp_writer *w) {
    if (w->failed)
        return queue_nomem(conn, "while encoding a packet");
    if (conn->state != FFB__ST_READY || conn->tx_next)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the connection is not attached");
    int rc = to_wire(conn, w->data, w->len);
    if (rc < 0)
        return rc;
    conn->stats.packets_sent++;
    conn->out_alone = 1; /* the stage waits until this is written */
    return 0;
}

int ffb__engine_cancel_request(ffb_conn *conn, int kind) {
    return ffb__cancelq_push(&conn->cancel_q, kind) < 0 ? FFB_E_AGAIN : 0;
}

int ffb__engine_cancel_take(ffb_conn *conn) {
    int kinds[FFB__CANCEL_MAX];
    unsigned count = ffb__cancelq_take(&conn->cancel_q, kinds);
    if (count == 0 || conn->state != FFB__ST_READY)
        return 0; /* nothing of an attachment to cancel */
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    for (unsigned i = 0; i < count; i++)
        ffbp_put_object_op(&w, FFBP_OP_CANCEL, (uint16_t)kinds[i]);
    int rc = ffb__engine_send_unanswered(conn, &w);
    ffbp_writer_free(&w);
    return rc < 0 ? rc : 1;
}

/* The transport wrote `n` bytes of `out`. */
static void output_done(ffb_conn *conn, size_t n) {
    if (n == 0)
        return;
    conn->stats.wire_bytes_sent += n;
    ffbp_writer_consume(&conn->out, n);
    io_progress(conn);
    if (conn->out.len == 0)
        conn->out_alone = 0;
    /* The wait starts when the whole flush is handed over: answers read
       while a long write is still going out (the driver reads while it
       writes) belong to the same round trip. */
    if (conn->out_expects && conn->out.len == 0) {
        conn->awaiting = 1;
        conn->out_expects = 0;
    }
}

size_t ffb_conn_output(ffb_conn *conn, const uint8_t **bytes_out) {
    if (!conn || !bytes_out)
        return 0;
    if (conn->stage.len && conn->state != FFB__ST_BROKEN && !conn->out_alone)
        ffb__engine_flush_needed(conn);
    *bytes_out = conn->out.data;
    return conn->out.len;
}

void ffb_conn_output_done(ffb_conn *conn, size_t len) {
    if (!conn)
        return;
    if (len > conn->out.len)
        len = conn->out.len;
    output_done(conn, len);
}

/* Inflated bytes produced per step before the packets are parsed: memory
   stays bounded by max_packet plus this, whatever the compression ratio. */
#define INFLATE_STEP (256u * 1024u)

/* Transform up to n bytes from wire_in (at wire_pos) into `in`; with zlib
   fewer may be used (output budget) - wire_pos tells. */
static int rx_transform(ffb_conn *conn, size_t n) {
    uint8_t *p = conn->wire_in.data + conn->wire_pos;
    size_t before = conn->in.len;
    if (conn->rx_cipher && n > conn->rx_done_upto) {
        /* Decrypt each byte once, in place: inflate may take them in
           several steps, and bytes may arrive in between. */
        uint8_t *q = p + conn->rx_done_upto;
        if (ffb__cipher_apply(conn->rx_cipher, q, q, n - conn->rx_done_upto) <
            0)
            return ffb__error_set(&conn->err, FFB_E_CRYPT,
                                  "wire decryption failed");
        conn->rx_done_upto = n;
    }
    size_t used = n;
    if (conn->z) {
        int rc = ffb__zstream_inflate_some(conn->z, p, n, &used, INFLATE_STEP,
                                           &conn->in.data, &conn->in.len,
                                           &conn->in.cap);
        if (rc < 0)
            return ffb__error_set(
                &conn->err, rc == FFB_E_NOMEM ? FFB_E_NOMEM : FFB_E_PROTO,
                "the server's compressed stream is corrupt (zlib inflate "
                "failed)");
        conn->z_more = rc == 1;
        for (size_t i = 0; i < used; i++)
            conn->rx_tail = conn->rx_tail << 8 | p[i];
    } else {
        ffbp_put_raw(&conn->in, p, n);
        if (conn->in.failed)
            return ffb__fatal(conn, FFB_E_NOMEM,
                                  "out of memory for the input buffer");
    }
    conn->stats.bytes_received += conn->in.len - before;
    conn->wire_pos += used;
    conn->rx_done_upto = conn->rx_done_upto > used ? conn->rx_done_upto - used
                                                   : 0;
    return 0;
}

static int install_rx(ffb_conn *conn) {
    ffb__cipher_free(conn->rx_cipher);
    conn->rx_cipher = conn->rx_next;
    conn->rx_next = NULL;
    conn->rx_bytewise = 0;
    conn->rx_done_upto = 0;
    if (!conn->z && conn->in.len > conn->in_pos) {
        /* Bytes after the packet that carried the key were moved as they
           came (no cipher ran before): they are the first the new cipher
           decrypts. */
        uint8_t *q = conn->in.data + conn->in_pos;
        if (ffb__cipher_apply(conn->rx_cipher, q, q,
                              conn->in.len - conn->in_pos) < 0)
            return ffb__error_set(&conn->err, FFB_E_CRYPT,
                                  "wire decryption failed");
    }
    return 0;
}

/* With zlib and a cipher switch pending, how many of the `avail` wire
   bytes to inflate now: up to the end of the next sync-flush marker
   (00 00 FF FF), where the switch may happen, or all of them. */
static size_t upto_marker(const ffb_conn *conn, size_t avail) {
    const uint8_t *p = conn->wire_in.data + conn->wire_pos;
    uint32_t tail = conn->rx_tail;
    for (size_t i = 0; i < avail; i++) {
        tail = tail << 8 | p[i];
        if (tail == 0x0000FFFFu)
            return i + 1;
    }
    return avail;
}

static const char *waiting_for(const ffb_conn *conn) {
    switch (conn->state == FFB__ST_HANDSHAKE ? conn->hs : FFB__HS_NONE) {
    case FFB__HS_ACCEPT:
        return "the answer to op_connect";
    case FFB__HS_AUTH:
        return "the answer to op_cont_auth";
    case FFB__HS_CRYPT:
        return "the answer to op_crypt";
    case FFB__HS_ATTACH:
        return "the answer to op_attach";
    default:
        break;
    }
    if (conn->fifo_len)
        return ffbp_op_name(conn->fifo[conn->fifo_head].op);
    return "nothing";
}

static int shut_down(const ffbp_packet *pkt) {
    return (pkt->op == FFBP_OP_RESPONSE ||
            pkt->op == FFBP_OP_RESPONSE_PIGGYBACK) &&
           ffb__status_code(&pkt->u.response.status, FFB_E_SERVER) ==
               FFB_E_SHUTDOWN;
}

static int dispatch(ffb_conn *conn, const ffbp_packet *pkt) {
    conn->stats.packets_received++;
    if (pkt->op == FFBP_OP_DUMMY)
        return 0; /* keep-alive: dropped wherever it arrives */
    if (conn->state == FFB__ST_HANDSHAKE)
        return conn->on_handshake(conn, pkt); /* lib/handshake.c */
    if (pkt->op == FFBP_OP_INLINE_BLOB) {
        /* Not an answer of its own: Firebird 5 pushes it in front of a row
           of an op_fetch answer or of the op_sql_response of op_execute2,
           for that request's transaction. Anywhere else (nothing owed, in
           front of any other answer, below protocol 19, a transaction
           that is not active) it is a protocol violation (docs/blobs.md). */
        const ffbp_inline_blob *ib = &pkt->u.inline_blob;
        const ffb__pending *h =
            conn->fifo_len ? &conn->fifo[conn->fifo_head] : NULL;
        int ok = conn->protocol >= 19 && h && h->off &&
                 (h->op == FFBP_OP_FETCH || h->op == FFBP_OP_FETCH_SCROLL ||
                  h->op == FFBP_OP_EXECUTE2);
        const ffb_tx *t = conn->txs;
        while (ok && t && !(t->state == FFB__TX_ACTIVE && t->handle == ib->tx))
            t = t->next;
        if (!ok || !t)
            return ffb__error_set(&conn->err, FFB_E_PROTO,
                                  "unsolicited op_inline_blob for blob "
                                  "%08X:%08X (transaction %u) while waiting "
                                  "for %s",
                                  (unsigned)(ib->blob_id >> 32),
                                  (unsigned)ib->blob_id, (unsigned)ib->tx,
                                  waiting_for(conn));
        return conn->on_inline_blob(conn, ib); /* lib/blob.c */
    }
    if (pkt->op == FFBP_OP_CRYPT_KEY_CALLBACK && conn->fifo_len) {
        /* The server wants a database key before it answers the request
           owed (ALTER DATABASE ENCRYPT, say): answer it, keep waiting. */
        int rc = conn->on_crypt_key(conn, &pkt->u.crypt_cb); /* lib/dbcrypt.c */
        return rc < 0 ? ffb__engine_fail(conn, rc) : 0;
    }
    conn->crypt_key_asked = 0; /* bounds key requests between answers */
    if (conn->fifo_len == 0) {
        char d[160];
        ffbp_describe(d, sizeof(d), pkt);
        return ffb__error_set(&conn->err, FFB_E_PROTO,
                              "unexpected packet from the server while no "
                              "reply was owed: %s",
                              d);
    }
    /* The handler works on a copy: it may queue requests (the next step of
       its operation), and growing the queue moves the entries. */
    ffb__pending cur = conn->fifo[conn->fifo_head];
    int rc = cur.on_reply(conn, pkt, &cur);
    if (rc >= 0 && shut_down(pkt)) {
        /* The server ended the attachment (op_cancel abort, idle timeout,
           a kill): it closes the socket next. The request got its error;
           the connection is broken with that cause (docs/cancel.md). */
        ffb__error_from_status(&conn->err, FFB_E_SERVER,
                               &pkt->u.response.status,
                               "the server shut the attachment down");
        ffb__engine_break(conn, FFB_E_SHUTDOWN);
    }
    if (rc == 1) {
        conn->fifo[conn->fifo_head] = cur;
        return 0; /* more packets belong to this request */
    }
    conn->fifo_head = (conn->fifo_head + 1) % conn->fifo_cap;
    conn->fifo_len--;
    return rc;
}

/* ---- answers ------------------------------------------------------------------ */

const ffbp_response *ffb__reply_response(ffb_conn *conn,
                                         const ffbp_packet *pkt,
                                         const ffb__pending *p) {
    if (pkt->op == FFBP_OP_RESPONSE || pkt->op == FFBP_OP_RESPONSE_PIGGYBACK)
        return &pkt->u.response;
    char d[160];
    ffbp_describe(d, sizeof(d), pkt);
    ffb__error_set(&conn->err, FFB_E_PROTO, "expected op_response to %s, got %s",
                   ffbp_op_name(p->op), d);
    return NULL;
}

/* ---- held requests ------------------------------------------------------------- */

void ffb__engine_hold(ffb_conn *conn, ffb__held *h) {
    h->next = NULL;
    if (conn->held_tail)
        conn->held_tail->next = h;
    else
        conn->held_head = h;
    conn->held_tail = h;
}

static void held_free(ffb_conn *conn, ffb__held *h) {
    ffbp_writer_free(&h->blr);
    ffbp_writer_free(&h->msg);
    ffbp_writer_free(&h->text);
    ffb__free(conn->alloc, h->sql);
    ffb__free(conn->alloc, h);
}

static int call_send(ffb_conn *conn, ffb__held *h) {
    h->call(conn, h->obj);
    return 0;
}

static void call_drop(ffb_conn *conn, ffb__held *h, int rc) {
    (void)rc;
    h->call_drop(conn, h->obj);
}

int ffb__engine_hold_call(ffb_conn *conn, void (*send)(ffb_conn *, void *),
                          void (*drop)(ffb_conn *, void *), void *obj) {
    ffb__held *h = ffb__malloc(conn->alloc, sizeof(*h));
    if (!h)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    memset(h, 0, sizeof(*h));
    h->send = call_send;
    h->drop = call_drop;
    h->call = send;
    h->call_drop = drop;
    h->obj = obj;
    ffb__engine_hold(conn, h);
    return 0;
}

void ffb__engine_release(ffb_conn *conn) {
    if (conn->releasing)
        return; /* a send queued more: the outer loop goes on */
    conn->releasing = 1;
    while (conn->held_head && conn->state == FFB__ST_READY) {
        ffb__held *h = conn->held_head;
        if (h->send(conn, h) == FFB__LATER)
            break;
        conn->held_head = h->next;
        if (!conn->held_head)
            conn->held_tail = NULL;
        held_free(conn, h);
    }
    conn->releasing = 0;
    if (conn->state == FFB__ST_BROKEN)
        ffb__engine_drop_held(conn, ffb__broken_code(conn));
}

void ffb__engine_drop_held(ffb_conn *conn, int rc) {
    while (conn->held_head) {
        ffb__held *h = conn->held_head;
        conn->held_head = h->next;
        if (!conn->held_head)
            conn->held_tail = NULL;
        h->drop(conn, h, rc);
        held_free(conn, h);
    }
}

ffb_error *ffb__sync_error(ffb_conn *conn, ffb__sync *sync) {
    if (!sync || !sync->own_err)
        return &conn->err;
    if (!sync->err) {
        sync->err = ffb__malloc(conn->alloc, sizeof(ffb_error));
        if (!sync->err)
            return &conn->err; /* degraded, still reported */
        ffb__error_clear(sync->err);
    }
    return sync->err;
}

void ffb__sync_fail(ffb_conn *conn, ffb__sync *sync, int rc) {
    if (!sync)
        return;
    if (sync->rc == 0) {
        ffb_error *e = ffb__sync_error(conn, sync);
        if (e != &conn->err)
            *e = conn->err;
        sync->rc = rc;
    }
    sync->done = 1;
}

/* Decode the packet at `r`; answers carrying messages need the format of
   the request they belong to. */
static int decode(ffb_conn *conn, ffbp_reader *r, ffbp_packet *pkt) {
    if (ffbp_reader_left(r) >= 4) {
        int32_t op = (int32_t)ffbp_be32_get(r->p + r->pos);
        if (op == FFBP_OP_SLICE) {
            /* The elements of op_get_slice's answer: the type and count
               asked for are in the request (lib/array.c). */
            pkt->op = op;
            const ffb__pending *p =
                conn->state == FFB__ST_READY && conn->fifo_len
                    ? &conn->fifo[conn->fifo_head]
                    : NULL;
            if (!p || p->op != FFBP_OP_GET_SLICE || !p->items)
                return FFBP_EBAD; /* nobody asked for a slice */
            return ffbp_get_slice(r, p->items[0].blr, p->items[0].length,
                                  p->limit, &pkt->u.slice);
        }
        if (op == FFBP_OP_FETCH_RESPONSE || op == FFBP_OP_SQL_RESPONSE) {
            pkt->op = op;
            const ffb__pending *p =
                conn->state == FFB__ST_READY && conn->fifo_len
                    ? &conn->fifo[conn->fifo_head]
                    : NULL;
            if (!p || !p->off)
                return FFBP_EBAD; /* nobody asked for rows */
            if (op == FFBP_OP_FETCH_RESPONSE)
                return ffbp_get_fetch_response(r, p->items, p->nitems, p->off,
                                               p->len, &pkt->u.fetch);
            return ffbp_get_sql_response(r, p->items, p->nitems, p->off,
                                         p->len, &pkt->u.fetch);
        }
    }
    return ffbp_get_packet(r, conn->protocol, pkt, conn->status_args,
                           sizeof(conn->status_args) /
                               sizeof(conn->status_args[0]));
}

/* A row packet may be as long as the describe of the request at the head
   of the queue allows, whatever max_packet says - but never more than
   this (the describe comes from the server too). */
#define ROW_BOUND_MAX ((size_t)256 * 1024 * 1024)

/* The largest packet accepted now: max_packet, or for a row answer
   (op_fetch_response, op_sql_response) the longest row its describe
   allows, up to ROW_BOUND_MAX. */
static size_t packet_limit(const ffb_conn *conn, int32_t op) {
    size_t limit = conn->max_packet;
    if (conn->state != FFB__ST_READY || conn->fifo_len == 0 ||
        (op != FFBP_OP_FETCH_RESPONSE && op != FFBP_OP_SQL_RESPONSE))
        return limit;
    const ffb__pending *p = &conn->fifo[conn->fifo_head];
    if (!p->items)
        return limit;
    size_t n = 64 + (p->nitems + 7) / 8;
    for (size_t i = 0; i < p->nitems && n < ROW_BOUND_MAX; i++)
        n += ffbp_item_wire_size(&p->items[i]) + 8;
    if (n > ROW_BOUND_MAX)
        n = ROW_BOUND_MAX;
    return n > limit ? n : limit;
}

/* Parse and dispatch every complete packet in `in`. */
static int parse_packets(ffb_conn *conn) {
    for (;;) {
        if (conn->in_pos >= conn->in.len)
            break;
        /* The last attempt said how long the packet is at least: until
           that much is here, trying again cannot get further (so a large
           packet is not parsed again on every read). */
        if (conn->in.len - conn->in_pos < conn->in_need) {
            conn->in_stalled = 1;
            break;
        }
        ffbp_reader r;
        ffbp_reader_init(&r, conn->in.data + conn->in_pos,
                         conn->in.len - conn->in_pos);
        ffbp_packet pkt;
        memset(&pkt, 0, sizeof(pkt));
        conn->parse_attempts++;
        int rc = decode(conn, &r, &pkt);
        if (rc == FFBP_INCOMPLETE) {
            size_t have = conn->in.len - conn->in_pos;
            size_t at_least = r.need > have ? r.need : have;
            size_t limit = packet_limit(conn, pkt.op);
            if (at_least > limit)
                return ffb__error_set(
                    &conn->err, FFB_E_PROTO,
                    "a packet from the server is larger than the %zu bytes "
                    "accepted (max_packet_size; %s of at least %zu bytes, "
                    "while waiting for %s)",
                    limit, ffbp_op_name(pkt.op), at_least,
                    waiting_for(conn));
            conn->in_need = r.need;
            conn->in_stalled = 1;
            break;
        }
        conn->in_need = 0;
        conn->in_stalled = 0;
        if (rc != FFBP_OK) {
            if (r.len - r.pos >= 4 && pkt.op != FFBP_OP_RESPONSE &&
                pkt.op != FFBP_OP_RESPONSE_PIGGYBACK &&
                pkt.op != FFBP_OP_CONT_AUTH && pkt.op != FFBP_OP_ACCEPT &&
                pkt.op != FFBP_OP_ACCEPT_DATA &&
                pkt.op != FFBP_OP_COND_ACCEPT &&
                pkt.op != FFBP_OP_FETCH_RESPONSE &&
                pkt.op != FFBP_OP_SQL_RESPONSE &&
                !(pkt.op == FFBP_OP_SLICE && conn->fifo_len &&
                  conn->fifo[conn->fifo_head].op == FFBP_OP_GET_SLICE))
                return ffb__error_set(
                    &conn->err, FFB_E_PROTO,
                    "unexpected packet from the server: %s (op %d) while "
                    "waiting for %s",
                    ffbp_op_name(pkt.op), (int)pkt.op, waiting_for(conn));
            return ffb__error_set(&conn->err, FFB_E_PROTO,
                                  "malformed %s from the server while "
                                  "waiting for %s",
                                  ffbp_op_name(pkt.op), waiting_for(conn));
        }
        conn->in_pos += r.pos;
        conn->in_dispatch++;
        rc = dispatch(conn, &pkt);
        if (rc >= 0 || (rc > FFB_E_FATAL && conn->state != FFB__ST_BROKEN)) {
            if (conn->held_head)
                ffb__engine_release(conn);
            rc = 0;
        }
        conn->in_dispatch--;
        if (rc < 0)
            return rc;
        conn->on_results(conn); /* completed results: lib/pipeline.c */
        if (conn->rx_next && !conn->z && (rc = install_rx(conn)) < 0)
            return rc; /* exactly at the packet boundary */
        if (conn->state == FFB__ST_BROKEN)
            return ffb__broken_code(conn);
    }
    if (conn->in_pos == conn->in.len) {
        conn->in.len = 0;
        conn->in_pos = 0;
    } else if (conn->in_pos > 65536) {
        ffbp_writer_consume(&conn->in, conn->in_pos);
        conn->in_pos = 0;
    }
    return 0;
}

/*
 * Transform and parse what was received. Each step transforms what is
 * there (with zlib at most INFLATE_STEP of output), then parses every
 * complete packet: linear in the bytes received, whatever the chunking,
 * and an incomplete packet is bounded by max_packet.
 */
static int process(ffb_conn *conn) {
    for (;;) {
        size_t avail = conn->wire_in.len - conn->wire_pos;
        if (avail || conn->z_more) {
            size_t n = avail;
            if (conn->rx_bytewise && conn->z)
                /* Up to the next marker; while inflate still holds output
                   from before it, no further. */
                n = conn->z_more && conn->rx_tail == 0x0000FFFFu
                        ? 0
                        : upto_marker(conn, avail);
            int rc = rx_transform(conn, n);
            if (rc < 0)
                return rc;
        }
        int rc = parse_packets(conn);
        if (rc < 0)
            return rc;
        /* With compression the decryptor starts after the sync flush that
           ended the reply carrying the IV. */
        if (conn->rx_next && conn->z && conn->rx_tail == 0x0000FFFFu &&
            !conn->z_more && (rc = install_rx(conn)) < 0)
            return rc;
        if (conn->wire_pos == conn->wire_in.len && !conn->z_more) {
            conn->wire_in.len = 0;
            conn->wire_pos = 0;
            return 0;
        }
    }
}

int ffb__engine_drain(ffb_conn *conn) {
    if (conn->state == FFB__ST_BROKEN)
        return ffb__broken_code(conn);
    if (conn->wire_pos == conn->wire_in.len && !conn->z_more &&
        (conn->in_pos >= conn->in.len || conn->in_stalled))
        return 0;
    int rc = process(conn);
    return rc < 0 ? ffb__engine_fail(conn, rc) : 1;
}

int ffb__engine_feed(ffb_conn *conn, const uint8_t *p, size_t len) {
    if (conn->state == FFB__ST_BROKEN)
        return ffb__broken_code(conn);
    if (len == 0)
        return 0;
    conn->stats.wire_bytes_received += len;
    io_progress(conn);
    if (conn->awaiting) {
        conn->stats.round_trips++;
        conn->awaiting = 0;
    }
    ffbp_put_raw(&conn->wire_in, p, len);
    conn->in_stalled = 0;
    if (conn->wire_in.failed)
        return ffb__engine_fail(
            conn, ffb__fatal(conn, FFB_E_NOMEM,
                                 "out of memory for received data"));
    int rc = process(conn);
    if (rc < 0)
        return ffb__engine_fail(conn, rc);
    return 0;
}

int ffb__engine_start_compression(ffb_conn *conn) {
    if (conn->z)
        return 0;
    int rc = ffb__zstream_new(&conn->z, conn->alloc);
    if (rc < 0)
        return ffb__error_set(&conn->err, rc,
                              "could not start zlib compression");
    conn->compressed = 1;
    return 0;
}

void ffb__engine_reset(ffb_conn *conn) {
    ffb__zstream_free(conn->z);
    conn->z = NULL;
    ffb__cipher_free(conn->tx_cipher);
    ffb__cipher_free(conn->rx_cipher);
    ffb__cipher_free(conn->tx_next);
    ffb__cipher_free(conn->rx_next);
    conn->tx_cipher = conn->rx_cipher = conn->tx_next = conn->rx_next = NULL;
    conn->rx_bytewise = 0;
    conn->rx_tail = 0;
    ffbp_writer_reset(&conn->stage);
    ffbp_writer_reset(&conn->out);
    ffbp_writer_reset(&conn->wire_in);
    conn->wire_pos = 0;
    conn->rx_done_upto = 0;
    conn->z_more = 0;
    ffbp_writer_reset(&conn->in);
    conn->stage.failed = conn->out.failed = 0;
    conn->wire_in.failed = conn->in.failed = 0;
    conn->in_pos = 0;
    conn->in_need = 0;
    conn->in_stalled = 0;
    conn->stage_expects = conn->out_expects = conn->awaiting = 0;
    conn->stage_direct = conn->in_dispatch = 0;
    conn->eof = 0;
    conn->fifo_head = conn->fifo_len = 0;
    conn->fifo_unsent = 0;
    conn->compressed = 0;
    conn->protocol = 0;
    conn->crypt_used[0] = '\0';
    conn->auth_used[0] = '\0';
    conn->nspare = 0;
    conn->spares_owed = 0;
    conn->hs_spares = 0;
    conn->last_kind = FFB__LAST_NONE;
    conn->last_obj = NULL;
    conn->detaching = 0;
    conn->fatal_code = 0;
    conn->hs_deadline = -1;
    conn->hs_flushed = 0;
    conn->on_hs_wipe(conn); /* SRP state, session key, DPB copy */
    conn->have_key = 0;
}

int ffb_conn_feed(ffb_conn *conn, const uint8_t *bytes, size_t len) {
    if (!conn || (!bytes && len))
        return FFB_E_INVAL;
    return failed(conn, ffb__engine_feed(conn, bytes, len));
}

int ffb_conn_feed_eof(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    conn->eof = 1;
    if (conn->state == FFB__ST_BROKEN)
        return conn->err.code ? conn->err.code : FFB_E_CLOSED;
    if (conn->detaching || conn->state == FFB__ST_CLOSED ||
        conn->state == FFB__ST_NEW)
        return 0;
    if (conn->state == FFB__ST_READY && conn->fifo_len == 0 &&
        !conn->awaiting && conn->in.len == conn->in_pos) {
        ffb__error_set(&conn->err, FFB_E_CLOSED,
                       "the server closed the connection");
        return ffb__engine_fail(conn, FFB_E_CLOSED);
    }
    ffb__error_set(&conn->err, FFB_E_CLOSED,
                   "the server closed the connection while the client was "
                   "waiting for %s",
                   waiting_for(conn));
    return failed(conn, ffb__engine_fail(conn, FFB_E_CLOSED));
}

unsigned ffb_conn_wants(const ffb_conn *conn) {
    if (!conn || conn->state == FFB__ST_BROKEN)
        return 0;
    unsigned w = 0;
    /* Deferred requests alone (frees, closes) wait for the next request
       that needs an answer: they are not worth a write. */
    if (conn->out.len || stage_ready(conn))
        w |= FFB_WANT_WRITE;
    if ((conn->state == FFB__ST_HANDSHAKE && !conn->hs_finished) ||
        conn->fifo_len)
        w |= FFB_WANT_READ;
    return w;
}

int ffb__need_ready(ffb_conn *conn) {
    if (conn->state == FFB__ST_READY)
        return 0;
    if (conn->state == FFB__ST_BROKEN)
        /* The error object keeps what broke it. */
        return ffb__broken_code(conn);
    return ffb__error_set(&conn->err, FFB_E_STATE,
                          "the connection is not attached");
}

int ffb__queue_free(ffb_conn *conn, ffbp_writer *w, int expects) {
    int rc = ffb__engine_queue(conn, w, expects);
    ffbp_writer_free(w);
    return rc < 0 ? ffb__engine_fail(conn, rc) : 0;
}

