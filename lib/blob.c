/*
 * Blobs (reference 03, C.2 and C.3).
 *
 * Writing: data is buffered and re-framed into segments (segmented blobs:
 * [uint16 LE length][bytes] records of up to 65535 bytes, sent with
 * op_batch_segments; stream blobs: raw bytes with op_put_segment). The
 * create, the segments and the close travel in one write, naming the new
 * blob as the server's last object (0xFFFF) - but only while no other
 * created blob of ours is open on the server: a failed create would make
 * 0xFFFF name that one and write into it (C.2.10). Otherwise the handle is
 * learnt first (one more round trip).
 *
 * Reading: ffb_blob_open() queues op_open_blob2 + op_info_blob(0xFFFF) +
 * k op_get_segment(0xFFFF) and sends nothing; the first read, info or flush
 * on the connection sends them, together with whatever else is queued -
 * opening every blob of a fetched batch and then reading them costs one
 * round trip. Refills ask for exactly the bytes the info says are left,
 * all at once. Blobs that Firebird 5.0.3+ pushed inline are served from the
 * connection's cache, keyed by transaction and blob id, with no I/O.
 */
#include <stdio.h>
#include <string.h>

#include "lib/internal.h"
#include "proto/blob.h"

#define SEGMENT_MAX 65535u
#define GET_LENGTH 65535u        /* the buffer every op_get_segment asks for */
#define GET_PAYLOAD 65533u       /* its payload as one record */
#define QUEUE_THRESHOLD (1024u * 1024u)
#define MAX_GETS 256
#define INFO_LENGTH 128          /* the buffer every op_info_blob asks for */
/* An op_inline_blob's data: Firebird's MAX_INLINE_BLOB_SIZE (C.3.3). */
#define INLINE_MAX 65535u
/* ffb_blob_read() asks for the next part when less than this is left. */
#define READ_AHEAD_LOW (1024u * 1024u)
#define DEFAULT_BUDGET (10u * 1024u * 1024u)

static const uint8_t info_items[] = {4, 5, 6, 7, FFBP_INFO_END};

/* The inline cache's index (see "inline blobs" below). */
struct ffb__inline_index {
    ffb__inline **slot;
    unsigned bits;     /* 1 << bits slots */
    size_t count;
};

/* ---- helpers ----------------------------------------------------------------------- */

static int64_t le_int(const uint8_t *p, size_t n) { return ffbp_le_int(p, n); }

/* Parse an answer to info items 4, 5, 6, 7 (C.2.7). Returns 1 when all
   four are there with values a blob can have: 1-8 byte integers, no
   negative count or length, a max segment of at most 65535 (segments are
   16-bit in Firebird), the type 0 or 1. With `exact`, isc_info_end must be
   the last byte, as in an op_inline_blob (C.3.2). Nothing is allocated
   from these values: a blob's real size is what its reads bring. */
static int parse_info(const uint8_t *p, size_t len, int exact,
                      ffb_blob_info *out) {
    size_t pos = 0, n;
    uint8_t item;
    const uint8_t *d;
    int seen = 0, rc;
    memset(out, 0, sizeof(*out));
    while ((rc = ffbp_info_next(p, len, &pos, &item, &d, &n)) == 1) {
        if (item < 4 || item > 7)
            continue; /* isc_info_truncated ends the loop: incomplete */
        if (n == 0 || n > 8)
            return 0;
        int64_t v = le_int(d, n);
        switch (item) {
        case 4:
            out->segments = v;
            break;
        case 5:
            out->max_segment = v;
            break;
        case 6:
            out->length = v;
            break;
        default:
            if (v != 0 && v != 1)
                return 0;
            out->stream = (int)v;
            break;
        }
        seen |= 1 << (item - 4);
    }
    if (rc < 0 || seen != 15)
        return 0;
    if (exact && (pos + 1 != len || p[pos] != FFBP_INFO_END))
        return 0;
    return out->segments >= 0 && out->max_segment >= 0 &&
           out->max_segment <= (int64_t)SEGMENT_MAX && out->length >= 0;
}

/* The blob id as Firebird prints it: relation, then number. */
static void id_text(uint64_t id, char out[18]) {
    snprintf(out, 18, "%08X:%08X", (unsigned)(id >> 32), (unsigned)id);
}

static uint64_t id_from_bytes(const uint8_t b[8]) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
}

static void id_to_bytes(uint64_t v, uint8_t b[8]) {
    for (int i = 7; i >= 0; i--) {
        b[i] = (uint8_t)v;
        v >>= 8;
    }
}

static void blob_destroy(ffb_blob *b) {
    ffb_conn *conn = b->conn;
    for (ffb_blob **pp = &conn->blobs; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    if (conn->last_obj == b) {
        conn->last_kind = FFB__LAST_OTHER;
        conn->last_obj = NULL;
    }
    if (b->writing && b->on_server && conn->write_blobs_open > 0)
        conn->write_blobs_open--;
    ffbp_writer_free(&b->wbuf);
    ffbp_writer_free(&b->rbuf);
    ffb__free(conn->alloc, b->err);
    ffb__tx_unref(b->tx);
    ffb__free(conn->alloc, b);
}

static void blob_unref(ffb_blob *b) {
    if (b && --b->refs == 0)
        blob_destroy(b);
}

void ffb__blob_unref(ffb_blob *b) { blob_unref(b); }

void ffb__blobs_destroy_all(ffb_conn *conn) {
    while (conn->blobs)
        blob_destroy(conn->blobs);
    struct ffb__inline_index *x = conn->inl ? conn->inl->index : NULL;
    while (conn->inl) {
        ffb__inline *e = conn->inl;
        conn->inl = e->next;
        ffb__free(conn->alloc, e); /* its data is in the same block */
    }
    if (x) {
        ffb__free(conn->alloc, x->slot);
        ffb__free(conn->alloc, x);
    }
    conn->inl_bytes = 0;
}

static void fail_blob(ffb_blob *b, const ffbp_status *st, const char *what) {
    ffb_conn *conn = b->conn;
    b->failed = 1;
    if (!b->err)
        b->err = ffb__malloc(conn->alloc, sizeof(ffb_error));
    if (b->err)
        ffb__error_from_status(b->err, FFB_E_SERVER, st, what);
}

/* Report a failure recorded by a reply handler. */
static int blob_error(ffb_blob *b) {
    ffb_conn *conn = b->conn;
    if (b->err) {
        conn->err = *b->err;
        return conn->err.code ? conn->err.code : FFB_E_SERVER;
    }
    return ffb__error_set(&conn->err, FFB_E_SERVER, "the blob request failed");
}

/* ---- reply handlers ------------------------------------------------------------------ */


static int blob_done(ffb__pending *p, int rc) {
    if (p->sync && p->completes)
        p->sync->done = 1;
    blob_unref(p->ctx);
    return rc;
}

/* op_create_blob2 / op_open_blob2. */
static int open_reply(ffb_conn *conn, const ffbp_packet *pkt, ffb__pending *p) {
    ffb_blob *b = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return blob_done(p, FFB_E_PROTO);
    if (ffb__status_is_error(&r->status)) {
        fail_blob(b, &r->status,
                  b->writing ? "creating the blob failed"
                             : "opening the blob failed");
        b->eof = 1;
        return blob_done(p, 0);
    }
    b->handle = r->object;
    b->has_handle = 1;
    b->on_server = 1;
    if (b->writing) {
        b->id = r->blob_id;
        conn->write_blobs_open++;
    }
    if (b->freed) {
        /* Freed before the server answered: close it now. */
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        ffbp_put_object_op(&w, b->writing ? FFBP_OP_CANCEL_BLOB
                                          : FFBP_OP_CLOSE_BLOB,
                           b->handle);
        ffb__queue_fire_and_forget(conn, &w, FFBP_OP_CLOSE_BLOB, 0);
        ffbp_writer_free(&w);
        b->on_server = 0;
        if (b->writing && conn->write_blobs_open)
            conn->write_blobs_open--;
    }
    return blob_done(p, 0);
}

/* Segments, close, cancel, seek. */
static int simple_reply(ffb_conn *conn, const ffbp_packet *pkt,
                        ffb__pending *p) {
    ffb_blob *b = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return blob_done(p, FFB_E_PROTO);
    if (ffb__status_is_error(&r->status)) {
        /* A refused seek leaves the blob readable: only its waiter hears
           of it. */
        if (p->op != FFBP_OP_SEEK_BLOB && !b->failed)
            fail_blob(b, &r->status, "the blob request failed");
        if (p->sync)
            ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, &r->status,
                                  p->op == FFBP_OP_SEEK_BLOB
                                      ? "seeking in the blob failed"
                                      : "the blob request failed");
    } else if (p->op == FFBP_OP_SEEK_BLOB) {
        /* The new position is in the low word of the blob id; the server
           clamps it to [0, length] (C.2.6), so it cannot pass the target
           or the blob's end. */
        int64_t pos = (int64_t)(uint32_t)r->blob_id;
        if ((b->seek_max >= 0 && pos > b->seek_max) ||
            (b->have_info && pos > b->info.length))
            return blob_done(p, ffb__error_set(
                                    &conn->err, FFB_E_PROTO,
                                    "op_seek_blob answered position %lld, "
                                    "beyond the target or the blob's %lld "
                                    "bytes",
                                    (long long)pos,
                                    (long long)b->info.length));
        b->position = b->received = pos;
    } else if (p->op == FFBP_OP_CLOSE_BLOB || p->op == FFBP_OP_CANCEL_BLOB) {
        b->on_server = 0;
        if (b->writing && conn->write_blobs_open)
            conn->write_blobs_open--;
    }
    return blob_done(p, 0);
}

static int info_reply(ffb_conn *conn, const ffbp_packet *pkt,
                      ffb__pending *p) {
    ffb_blob *b = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return blob_done(p, FFB_E_PROTO);
    b->info_pending = 0;
    if (b->failed) /* the open failed: the answer is not about this blob */
        return blob_done(p, 0);
    if (ffb__status_is_error(&r->status)) {
        fail_blob(b, &r->status, "reading the blob's info failed");
        if (p->sync)
            ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, &r->status,
                                  "reading the blob's info failed");
    } else if (r->data.len <= INFO_LENGTH &&
               parse_info(r->data.p, r->data.len, 0, &b->info)) {
        b->have_info = 1;
        if (b->received >= b->info.length && b->gets_inflight == 0)
            b->eof = 1;
    } else {
        memset(&b->info, 0, sizeof(b->info));
        return blob_done(
            p, ffb__error_set(&conn->err, FFB_E_PROTO,
                              "malformed blob info answer (%zu bytes; "
                              "items 4-7 with counts and length >= 0, max "
                              "segment <= 65535, type 0 or 1, in at most "
                              "the %d bytes asked)",
                              (size_t)r->data.len, INFO_LENGTH));
    }
    return blob_done(p, 0);
}

static int get_reply(ffb_conn *conn, const ffbp_packet *pkt, ffb__pending *p) {
    ffb_blob *b = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return blob_done(p, FFB_E_PROTO);
    /* Whoever it is for: the server fills at most the buffer asked for,
       records and their length words included, and reports state 0, 1
       or 2 (C.2.4). */
    if (r->data.len > GET_LENGTH)
        return blob_done(p, ffb__error_set(
                                &conn->err, FFB_E_PROTO,
                                "an op_get_segment answer of %zu bytes: more "
                                "than the %u bytes asked for",
                                (size_t)r->data.len, GET_LENGTH));
    if (r->object > 2)
        return blob_done(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                           "op_get_segment answered state %u "
                                           "(0, 1 or 2 expected)",
                                           (unsigned)r->object));
    if (p->gen != b->gen)
        return blob_done(p, 0); /* before a seek, or the open failed */
    if (b->gets_inflight)
        b->gets_inflight--;
    if (b->failed)
        return blob_done(p, 0);
    if (ffb__status_is_error(&r->status)) {
        fail_blob(b, &r->status, "reading the blob failed");
        b->eof = 1;
        return blob_done(p, 0);
    }
    if (b->end_seen && r->data.len)
        /* After state 2 the server answers empty buffers only. */
        return blob_done(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                           "op_get_segment returned data "
                                           "after the end of the blob"));
    size_t pos = 0, n;
    const uint8_t *d;
    int rc;
    while ((rc = ffbp_segment_next(r->data.p, r->data.len, &pos, &d, &n)) ==
           1) {
        ffbp_put_raw(&b->rbuf, d, n);
        b->received += (int64_t)n;
    }
    if (rc < 0)
        return blob_done(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                           "malformed op_get_segment buffer: "
                                           "a record runs past its %zu bytes",
                                           (size_t)r->data.len));
    if (b->rbuf.failed)
        return blob_done(p, ffb__error_set(&conn->err, FFB_E_NOMEM,
                                           "out of memory for blob data"));
    /* State 2: end of blob. State 0 with every byte received: also the end
       (C.2.4: the last chunk may leave fewer than 3 bytes unused). */
    if (r->object == 2)
        b->end_seen = 1;
    if (r->object == 2 || (b->have_info && b->received >= b->info.length))
        b->eof = 1;
    return blob_done(p, 0);
}

/* ---- queueing ---------------------------------------------------------------------- */

static ffb__pending *expect(ffb_blob *b, int32_t op, ffb__reply_fn fn,
                            ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    ffb__pending *p = ffb__engine_expect(conn, op, fn, b);
    if (!p) {
        ffb__engine_fail(conn, FFB_E_NOMEM);
        return NULL;
    }
    p->sync = sync;
    p->gen = b->gen;
    b->refs++;
    return p;
}


/*
 * Every blob request goes through blob_request(): its packet is encoded
 * at once with the handle field left to fill - the transaction's for an
 * open or a create, the blob's for the others - and sent now when that
 * handle can be named (the handle, or 0xFFFF while the object is the
 * server's last), or held in the connection's hold queue until the answer
 * that tells it (lib/engine.c). Nothing waits here.
 */
static ffb__reply_fn reply_for(int op) {
    switch (op) {
    case FFBP_OP_OPEN_BLOB2:
    case FFBP_OP_CREATE_BLOB2:
        return open_reply;
    case FFBP_OP_INFO_BLOB:
        return info_reply;
    case FFBP_OP_GET_SEGMENT:
        return get_reply;
    default:
        return simple_reply;
    }
}

static int opens(int op) {
    return op == FFBP_OP_OPEN_BLOB2 || op == FFBP_OP_CREATE_BLOB2;
}

/* The handle field of a request: 0 (*h set), FFB__LATER, or an error. */
static int field_now(ffb_blob *b, int op, uint16_t *h) {
    ffb_conn *conn = b->conn;
    if (opens(op))
        return ffb__tx_handle(b->tx, h);
    if (b->has_handle) {
        *h = b->handle;
        return 0;
    }
    if (b->failed)
        return blob_error(b);
    if (!b->no_last && conn->last_kind == FFB__LAST_BLOB &&
        conn->last_obj == b) {
        *h = 0xFFFF;
        return 0;
    }
    return FFB__LATER;
}

/* Fill the handle field, queue the packet and its reply handler. */
static int blob_send(ffb_blob *b, int op, ffbp_writer *pkt, uint16_t h,
                     ffb__sync *sync, int completes, uint32_t gen) {
    ffb_conn *conn = b->conn;
    /* op, then the handle (xdr_short); opens carry the BPB first. */
    size_t off = opens(op) ? 8 + b->bpb_len + ffbp_pad(b->bpb_len) : 4;
    if (pkt->len < off + 4)
        return ffb__fatal(conn, FFB_E_PROTO, "internal error: short packet");
    ffbp_be32_put(pkt->data + off, (uint32_t)(int32_t)(int16_t)h);
    int rc = ffb__engine_queue(conn, pkt, 1);
    if (rc < 0)
        return ffb__engine_fail(conn, rc);
    ffb__pending *p = expect(b, op, reply_for(op), sync);
    if (!p)
        return FFB_E_NOMEM;
    p->completes = completes;
    p->gen = gen;
    if (opens(op)) {
        /* Writing through 0xFFFF is safe only while no other created blob
           of ours is open: a failed create would redirect to it. */
        b->no_last = b->writing && conn->write_blobs_open > 0;
        conn->last_kind = FFB__LAST_BLOB;
        conn->last_obj = b;
    }
    return 0;
}

static int held_blob_send(ffb_conn *conn, ffb__held *hd) {
    ffb_blob *b = hd->obj;
    uint16_t h = 0;
    int rc = field_now(b, hd->op, &h);
    if (rc == FFB__LATER)
        return rc;
    if (rc == 0)
        rc = blob_send(b, hd->op, &hd->msg, h, hd->sync, hd->completes,
                       hd->gen);
    if (rc < 0) {
        if (hd->op == FFBP_OP_GET_SEGMENT && b->gets_inflight)
            b->gets_inflight--;
        ffb__sync_fail(conn, hd->sync, rc);
    }
    blob_unref(b);
    return 0;
}

static void held_blob_drop(ffb_conn *conn, ffb__held *hd, int rc) {
    ffb__sync_fail(conn, hd->sync, rc);
    blob_unref(hd->obj);
}

/* Send or hold the request in `pkt` (taken). */
static int blob_request(ffb_blob *b, int op, ffbp_writer *pkt,
                        ffb__sync *sync, int completes) {
    ffb_conn *conn = b->conn;
    if (pkt->failed) {
        ffbp_writer_free(pkt);
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    }
    uint16_t h = 0;
    int rc = conn->held_head ? FFB__LATER : field_now(b, op, &h);
    if (rc == 0)
        rc = blob_send(b, op, pkt, h, sync, completes, b->gen);
    if (rc != FFB__LATER) {
        ffbp_writer_free(pkt);
        return rc;
    }
    ffb__held *hd = ffb__malloc(conn->alloc, sizeof(*hd));
    if (!hd) {
        ffbp_writer_free(pkt);
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    }
    memset(hd, 0, sizeof(*hd));
    hd->msg = *pkt;
    hd->op = op;
    hd->obj = b;
    hd->sync = sync;
    hd->completes = completes;
    hd->gen = b->gen;
    hd->send = held_blob_send;
    hd->drop = held_blob_drop;
    b->refs++;
    ffb__engine_hold(conn, hd);
    return 0;
}

static int queue_open(ffb_blob *b, int op) {
    ffb_conn *conn = b->conn;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_blob_open(&w, op, b->bpb, b->bpb_len, 0, b->writing ? 0 : b->id);
    int rc = blob_request(b, op, &w, NULL, 0);
    if (rc < 0)
        return rc;
    if (b->writing)
        b->create_queued = 1;
    else
        b->open_queued = 1;
    return 0;
}

/* Queue the buffered data (creating the blob first if needed). */
static int queue_data(ffb_blob *b) {
    ffb_conn *conn = b->conn;
    int rc;
    if (!b->create_queued && (rc = queue_open(b, FFBP_OP_CREATE_BLOB2)) < 0)
        return rc;
    if (b->wbuf.len == 0)
        return 0;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    int op = b->stream ? FFBP_OP_PUT_SEGMENT : FFBP_OP_BATCH_SEGMENTS;
    ffbp_put_segment(&w, op, 0, (uint16_t)b->wbuf.len, b->wbuf.data,
                     b->wbuf.len);
    if ((rc = blob_request(b, op, &w, NULL, 0)) < 0)
        return rc;
    ffbp_writer_reset(&b->wbuf);
    return 0;
}

static int new_blob(ffb_conn *conn, ffb_tx *tx, int writing, ffb_blob **out) {
    if (!conn || !tx || !out)
        return FFB_E_INVAL;
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (tx->conn != conn)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "transaction of another connection");
    if (!ffb_tx_is_active(tx))
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the transaction has ended");
    ffb_blob *b = ffb__malloc(conn->alloc, sizeof(*b));
    if (!b)
        return ffb__error_set(&conn->err, FFB_E_NOMEM, "out of memory");
    memset(b, 0, sizeof(*b));
    b->conn = conn;
    b->tx = tx;
    tx->refs++;
    b->refs = 1;
    b->writing = writing;
    ffbp_writer_init(&b->wbuf, conn->alloc);
    ffbp_writer_init(&b->rbuf, conn->alloc);
    b->next = conn->blobs;
    conn->blobs = b;
    ffb__conn_error_clear(conn);
    *out = b;
    return 0;
}

/* ---- writing ------------------------------------------------------------------------ */

int ffb_blob_create(ffb_conn *conn, ffb_tx *tx, const ffb_blob_options *opts,
                    ffb_blob **out) {
    ffb_blob_options defaults = FFB_BLOB_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    if (opts->version != FFB_BLOB_OPTIONS_VERSION)
        return conn ? ffb__error_set(&conn->err, FFB_E_INVAL,
                                     "ffb_blob_options.version must be "
                                     "FFB_BLOB_OPTIONS_VERSION")
                    : FFB_E_INVAL;
    ffb_blob *b;
    int rc = new_blob(conn, tx, 1, &b);
    if (rc < 0)
        return rc;
    /* BPB: kind, and the sub-type/charset of what is written. */
    uint8_t *p = b->bpb;
    *p++ = 1; /* isc_bpb_version1 */
    *p++ = 3; /* isc_bpb_type */
    *p++ = 1;
    *p++ = opts->stream ? 1 : 0;
    if (opts->subtype) {
        uint16_t st = (uint16_t)(int16_t)opts->subtype;
        *p++ = 1; /* source_type */
        *p++ = 2;
        *p++ = (uint8_t)st;
        *p++ = (uint8_t)(st >> 8);
        *p++ = 2; /* target_type */
        *p++ = 2;
        *p++ = (uint8_t)st;
        *p++ = (uint8_t)(st >> 8);
    }
    if (opts->charset > 0 && opts->charset < 256) {
        *p++ = 4; /* source_interp */
        *p++ = 1;
        *p++ = (uint8_t)opts->charset;
        *p++ = 5; /* target_interp */
        *p++ = 1;
        *p++ = (uint8_t)opts->charset;
    }
    b->bpb_len = (size_t)(p - b->bpb);
    b->stream = opts->stream != 0;
    *out = b;
    return 0;
}

int ffb__blob_write(ffb_blob *b, const void *data, size_t len) {
    ffb_conn *conn = b->conn;
    if (!b->writing || b->closed)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "not a blob being written");
    if (b->failed)
        return blob_error(b);
    const uint8_t *p = data;
    if (b->stream) {
        ffbp_put_raw(&b->wbuf, p, len);
    } else {
        /* One segment per call when it fits, else 65535-byte segments. */
        while (len > 0) {
            size_t n = len > SEGMENT_MAX ? SEGMENT_MAX : len;
            uint8_t h[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
            ffbp_put_raw(&b->wbuf, h, 2);
            ffbp_put_raw(&b->wbuf, p, n);
            p += n;
            len -= n;
        }
    }
    if (b->wbuf.failed)
        return ffb__error_set(&conn->err, FFB_E_NOMEM, "out of memory");
    if (b->wbuf.len >= QUEUE_THRESHOLD) {
        int rc = queue_data(b);
        if (rc < 0)
            return rc;
        /* Keep the queued bytes moving, without waiting for answers: the
           blocking call writes them (external I/O: the application). */
        if (conn->stage.len >= 4 * QUEUE_THRESHOLD &&
            (rc = ffb__engine_flush(conn)) < 0)
            return ffb__engine_fail(conn, rc);
    }
    return 0;
}

/* Queue the last data and the close (or cancel); `sync` completes with
   its answer. 1 when nothing needs to go (a cancel before the create). */
int ffb__blob_queue_finish(ffb_blob *b, int op, ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (!b->writing || b->closed)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "not a blob being written");
    if (op == FFBP_OP_CANCEL_BLOB && !b->create_queued) {
        b->closed = 1; /* nothing reached the server */
        return 1;
    }
    if ((rc = queue_data(b)) < 0)
        return rc;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_object_op(&w, op, 0);
    if ((rc = blob_request(b, op, &w, sync, 1)) < 0)
        return rc;
    b->closed = 1;
    return 0;
}

int ffb__blob_finished(ffb_blob *b, int rc, uint8_t id_out[8]) {
    if (rc < 0 && !b->failed)
        return rc;
    if (b->failed)
        return blob_error(b);
    if (id_out)
        id_to_bytes(b->id, id_out);
    return 0;
}

/* ---- reading ------------------------------------------------------------------------- */

/* Queue k op_get_segment; `sync` (may be NULL) completes with the last. */
static int queue_gets(ffb_blob *b, unsigned k, ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    for (unsigned i = 0; i < k; i++) {
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        ffbp_put_segment(&w, FFBP_OP_GET_SEGMENT, 0, GET_LENGTH, NULL, 0);
        int last = i + 1 == k;
        int rc = blob_request(b, FFBP_OP_GET_SEGMENT, &w, last ? sync : NULL,
                              last);
        if (rc < 0)
            return rc;
        b->gets_inflight++;
    }
    return 0;
}

/*
 * The inline cache: a list (conn->inl, newest first) and a hash index on
 * (transaction, blob id) that every entry points to, so that storing,
 * finding and dropping a copy cost O(1) however many the budget holds
 * (up to 10 MiB / sizeof(ffb__inline) of empty blobs). A chain never holds
 * more than INDEX_CHAIN entries: ids a server picks to collide make the
 * cache refuse copies, never slow down. The index (struct ffb__inline_index,
 * above) is freed with the last entry.
 */
#define INDEX_BITS_MIN 6
#define INDEX_CHAIN 8

/* Fibonacci hashing; doubling the table splits chains, never joins them. */
static size_t inline_slot(uint16_t tx, uint64_t id, unsigned bits) {
    uint64_t x = (id ^ (uint64_t)tx * 0xC2B2AE3D27D4EB4Full) *
                 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> (64 - bits));
}

static struct ffb__inline_index *inline_index(const ffb_conn *conn) {
    return conn->inl ? conn->inl->index : NULL;
}

static ffb__inline *inline_find(ffb_conn *conn, uint16_t tx, uint64_t id) {
    struct ffb__inline_index *x = inline_index(conn);
    if (!x)
        return NULL;
    for (ffb__inline *e = x->slot[inline_slot(tx, id, x->bits)]; e;
         e = e->hnext)
        if (e->tx == tx && e->id == id)
            return e;
    return NULL;
}

/* Double the index when it is full (a failure keeps the old one). */
static void inline_grow(ffb_conn *conn, struct ffb__inline_index *x) {
    if (x->bits >= 8 * sizeof(size_t) - 2 ||
        x->count < ((size_t)1 << x->bits))
        return;
    unsigned bits = x->bits + 1;
    size_t cap = (size_t)1 << bits;
    ffb__inline **slot = ffb__malloc(conn->alloc, cap * sizeof(*slot));
    if (!slot)
        return;
    memset(slot, 0, cap * sizeof(*slot));
    for (ffb__inline *e = conn->inl; e; e = e->next) {
        size_t h = inline_slot(e->tx, e->id, bits);
        e->hnext = slot[h];
        slot[h] = e;
    }
    ffb__free(conn->alloc, x->slot);
    x->slot = slot;
    x->bits = bits;
}

/* Link a new entry into the list and the index; -1 (the entry is not
   linked) when the index cannot be made or its chain is full. */
static int inline_insert(ffb_conn *conn, ffb__inline *e) {
    struct ffb__inline_index *x = inline_index(conn);
    if (!x) {
        size_t cap = (size_t)1 << INDEX_BITS_MIN;
        x = ffb__malloc(conn->alloc, sizeof(*x));
        if (!x)
            return -1;
        x->slot = ffb__malloc(conn->alloc, cap * sizeof(*x->slot));
        if (!x->slot) {
            ffb__free(conn->alloc, x);
            return -1;
        }
        memset(x->slot, 0, cap * sizeof(*x->slot));
        x->bits = INDEX_BITS_MIN;
        x->count = 0;
    } else {
        inline_grow(conn, x);
    }
    size_t h = inline_slot(e->tx, e->id, x->bits), chain = 0;
    for (const ffb__inline *o = x->slot[h]; o; o = o->hnext)
        chain++;
    if (chain >= INDEX_CHAIN)
        return -1; /* x is in use: an empty index has no full chain */
    e->index = x;
    e->hnext = x->slot[h];
    x->slot[h] = e;
    x->count++;
    e->prev = NULL;
    e->next = conn->inl;
    if (conn->inl)
        conn->inl->prev = e;
    conn->inl = e;
    return 0;
}

/* Take a cached inline copy out of the cache and free it. */
static void inline_remove(ffb_conn *conn, ffb__inline *victim) {
    struct ffb__inline_index *x = victim->index;
    ffb__inline **pp = &x->slot[inline_slot(victim->tx, victim->id, x->bits)];
    while (*pp && *pp != victim)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = victim->hnext;
    x->count--;
    if (victim->prev)
        victim->prev->next = victim->next;
    else
        conn->inl = victim->next;
    if (victim->next)
        victim->next->prev = victim->prev;
    conn->inl_bytes -= victim->cost;
    ffb__free(conn->alloc, victim); /* data in the same block */
    if (!conn->inl) {
        ffb__free(conn->alloc, x->slot);
        ffb__free(conn->alloc, x);
    }
}

/* Drop the cached inline copies nobody reads: of transaction `tx`, or all
   of them. A copy being read goes when its blob is freed. */
static void inline_drop(ffb_conn *conn, int all, uint16_t tx) {
    ffb__inline *next;
    for (ffb__inline *e = conn->inl; e; e = next) {
        next = e->next;
        if ((all || e->tx == tx) && !e->in_use)
            inline_remove(conn, e);
    }
}

int ffb_blob_open(ffb_conn *conn, ffb_tx *tx, const uint8_t id[8],
                  size_t prefetch, ffb_blob **out) {
    if (!id)
        return FFB_E_INVAL;
    ffb_blob *b;
    int rc = new_blob(conn, tx, 0, &b);
    if (rc < 0)
        return rc;
    b->id = id_from_bytes(id);
    if (tx->state == FFB__TX_ACTIVE) {
        ffb__inline *e = inline_find(conn, tx->handle, b->id);
        if (e && !e->in_use) {
            /* Pushed inline with its row: no I/O at all. */
            e->in_use = 1;
            b->cached = e;
            ffbp_put_raw(&b->rbuf, e->data, e->len);
            b->received = (int64_t)e->len;
            b->info = e->info;
            b->have_info = 1;
            b->eof = 1;
            b->stream = e->info.stream;
            *out = b;
            return b->rbuf.failed ? FFB_E_NOMEM : 0;
        }
    }
    b->bpb_len = 0; /* an empty BPB: the server transliterates text blobs
                       to the connection charset (C.1.4) */
    if ((rc = queue_open(b, FFBP_OP_OPEN_BLOB2)) < 0) {
        ffb_blob_free(b);
        return rc;
    }
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_info(&w, FFBP_OP_INFO_BLOB, 0, 0, info_items, sizeof(info_items),
                  INFO_LENGTH);
    if ((rc = blob_request(b, FFBP_OP_INFO_BLOB, &w, NULL, 0)) < 0)
        return rc;
    b->info_pending = 1;
    size_t k = prefetch ? prefetch / GET_PAYLOAD + (prefetch % GET_PAYLOAD != 0)
                        : 1;
    if (k > MAX_GETS)
        k = MAX_GETS;
    if ((rc = queue_gets(b, (unsigned)k, NULL)) < 0)
        return rc;
    *out = b;
    return 0;
}

/* Ask for the rest: exactly what the info says is left, else 4 buffers;
   `sync` (may be NULL) completes with the last answer. */
static int refill_sync(ffb_blob *b, ffb__sync *sync) {
    if (b->cached || b->eof || b->gets_inflight || b->failed)
        return 0;
    unsigned k = 4;
    if (b->have_info) {
        int64_t left = b->info.length - b->received;
        if (left <= 0) {
            b->eof = 1;
            return 0;
        }
        /* Whatever the info claims (up to INT64_MAX), one part is at most
           MAX_GETS requests: memory grows with what the answers bring. */
        uint64_t parts = (uint64_t)left / GET_PAYLOAD +
                         ((uint64_t)left % GET_PAYLOAD != 0);
        k = parts > MAX_GETS ? MAX_GETS : (unsigned)parts;
    }
    if (b->has_handle && !b->on_server)
        /* Its transaction ended (or it was closed): the handle may name
           another blob by now, so nothing more is asked with it. */
        return ffb__error_set(&b->conn->err, FFB_E_STATE,
                              "the blob's transaction has ended before the "
                              "blob was read to its end");
    return queue_gets(b, k, sync);
}

/* The same for a read: the requests go on their way now (read-ahead). */
static int refill(ffb_blob *b) {
    int rc = refill_sync(b, NULL);
    if (rc >= 0 && (rc = ffb__engine_flush(b->conn)) < 0)
        return ffb__engine_fail(b->conn, rc);
    return rc;
}

int ffb__blob_read(ffb_blob *b, void *buf, size_t size, size_t *got) {
    ffb_conn *conn = b->conn;
    *got = 0;
    if (b->writing)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the blob was created, not opened for reading");
    for (;;) {
        if (b->rpos < b->rbuf.len) {
            size_t n = b->rbuf.len - b->rpos;
            if (n > size)
                n = size;
            memcpy(buf, b->rbuf.data + b->rpos, n);
            b->rpos += n;
            b->position += (int64_t)n;
            *got = n;
            if (b->rpos == b->rbuf.len) {
                ffbp_writer_reset(&b->rbuf);
                b->rpos = 0;
            }
            /* Read-ahead: when less than READ_AHEAD_LOW is left buffered,
               ask for the next part now, so the server sends it while the
               application works through what is here. What was read is
               dropped first (less than READ_AHEAD_LOW moves), so the
               buffer holds at most that plus one part. A failure here
               (the connection broke, the transaction ended) is reported
               by the next call; these bytes are the caller's. */
            if (b->rbuf.len - b->rpos < READ_AHEAD_LOW && !b->gets_inflight &&
                !b->eof && !b->cached && !b->failed &&
                (b->on_server || !b->has_handle) &&
                conn->state == FFB__ST_READY) {
                if (b->rpos) {
                    ffbp_writer_consume(&b->rbuf, b->rpos);
                    b->rpos = 0;
                }
                (void)refill(b);
            }
            return 0;
        }
        if (b->failed)
            return blob_error(b);
        if (b->eof && b->gets_inflight == 0)
            return 0;
        int rc = ffb__need_ready(conn);
        if (rc < 0)
            return rc;
        if (b->gets_inflight == 0 && (rc = refill(b)) < 0)
            return rc;
        if (b->gets_inflight == 0 && b->eof)
            return 0;
        return FFB_E_AGAIN; /* the next answers first */
    }
}

int ffb__blob_read_all(ffb_blob *b, const uint8_t **data, size_t *len) {
    ffb_conn *conn = b->conn;
    if (b->writing)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the blob was created, not opened for reading");
    /* Keep what was not read yet at the front of the buffer. */
    if (b->rpos) {
        ffbp_writer_consume(&b->rbuf, b->rpos);
        b->rpos = 0;
    }
    for (;;) {
        if (b->failed)
            return blob_error(b);
        if (b->eof && b->gets_inflight == 0)
            break;
        int rc = ffb__need_ready(conn);
        if (rc < 0)
            return rc;
        if (b->gets_inflight == 0 && (rc = refill(b)) < 0)
            return rc;
        if (b->eof && b->gets_inflight == 0)
            break;
        return FFB_E_AGAIN; /* the next answers first */
    }
    *data = b->rbuf.data;
    *len = b->rbuf.len;
    b->position += (int64_t)b->rbuf.len;
    b->rpos = b->rbuf.len; /* consumed; the bytes stay until the next call */
    return 0;
}

/* Ask for the blob's info; 1 when it is known already (nothing queued). */
static int queue_info(ffb_blob *b, ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    if (b->have_info)
        return 1;
    if (b->failed)
        return blob_error(b);
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_info(&w, FFBP_OP_INFO_BLOB, 0, 0, info_items, sizeof(info_items),
                  INFO_LENGTH);
    if ((rc = blob_request(b, FFBP_OP_INFO_BLOB, &w, sync, 1)) < 0)
        return rc;
    b->info_pending = 1;
    return 0;
}

int ffb__blob_info_known(ffb_conn *conn, const void *arg) {
    const ffb_blob *b = arg;
    (void)conn;
    return b->have_info || b->failed || !b->info_pending;
}

int ffb__blob_info(ffb_blob *b, ffb_blob_info *out, ffb__sync *sync) {
    for (;;) {
        if (b->have_info) {
            *out = b->info;
            return 0;
        }
        if (b->failed)
            return blob_error(b);
        if (b->info_pending)
            return FFB_E_AGAIN; /* asked with the open, or below */
        if (sync->done)
            return sync->rc < 0
                       ? sync->rc
                       : ffb__error_set(&b->conn->err, FFB_E_PROTO,
                                        "no blob info in the answer");
        /* Ask explicitly (a created blob, or a cached one has info). */
        int rc = queue_info(b, sync);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return FFB_E_AGAIN;
    }
}

/* Queue a seek; 1 when it was served from the inline copy at once. */
int ffb__blob_queue_seek(ffb_blob *b, int whence, int64_t offset,
                      ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    if (b->writing)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "seeking is for blobs opened for reading");
    if (b->cached) {
        /* Bounded by the bytes held (which the store checked equal the
           info's length). */
        const int64_t len = (int64_t)b->cached->len;
        if (!b->info.stream)
            return ffb__error_set(&conn->err, FFB_E_SERVER,
                                  "a segmented blob cannot seek "
                                  "[bad_segstr_type]");
        int64_t base = whence == 0 ? 0 : whence == 1 ? b->position : len;
        /* base >= 0: only a positive offset can overflow; clamp it. */
        int64_t target = offset > 0 && base > INT64_MAX - offset
                             ? len
                             : base + offset;
        if (target < 0)
            target = 0;
        if (target > len)
            target = len;
        /* Served from the cache: rebuild the view at the new position. */
        ffbp_writer_reset(&b->rbuf);
        ffbp_put_raw(&b->rbuf, b->cached->data + target,
                     (size_t)(len - target));
        b->rpos = 0;
        b->position = target;
        return b->rbuf.failed ? FFB_E_NOMEM : 1;
    }
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    /* The offset first: position + offset cannot overflow then. */
    int64_t target = 0;
    if (offset >= INT32_MIN && offset <= INT32_MAX)
        target = whence == 0 ? offset : whence == 1 ? b->position + offset
                                                    : -1;
    if (offset < INT32_MIN || offset > INT32_MAX || target < INT32_MIN ||
        target > INT32_MAX)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "blob offsets are limited to 32 bits");
    /* What was read ahead is discarded; relative moves are made absolute
       from our own position, as the server's is ahead of it. */
    b->gen++;
    b->gets_inflight = 0;
    ffbp_writer_reset(&b->rbuf);
    b->rpos = 0;
    b->eof = 0;
    b->end_seen = 0;
    /* What the answer may report (the server clamps to [0, length]). */
    b->seek_max = whence != 2 ? (target > 0 ? target : 0)
                  : b->have_info ? b->info.length
                                 : -1;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_seek_blob(&w, 0, whence == 2 ? 2 : 0,
                       (int32_t)(whence == 2 ? offset : target));
    return blob_request(b, FFBP_OP_SEEK_BLOB, &w, sync, 1);
}

/* The answer to a seek arrived (or it failed: the error is in
   conn->err). */
int ffb__blob_seek_done(ffb_blob *b, int rc) {
    if (rc < 0)
        return rc;
    if (b->failed)
        return blob_error(b);
    if (b->have_info && b->received >= b->info.length)
        b->eof = 1;
    return 0;
}

static void free_send(ffb_conn *conn, void *obj) {
    ffb_blob *b = obj;
    if (b->cached) {
        /* One inline copy serves one open (C.3.7). */
        inline_remove(conn, b->cached);
        b->cached = NULL;
    } else if (b->on_server && conn->state == FFB__ST_READY) {
        /* Closed with the next request; its answer is read and ignored. */
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        ffbp_put_object_op(&w, b->writing ? FFBP_OP_CANCEL_BLOB
                                          : FFBP_OP_CLOSE_BLOB,
                           b->handle);
        if (ffb__queue_fire_and_forget(conn, &w, FFBP_OP_CLOSE_BLOB, 0) < 0)
            ffb__conn_error_clear(conn);
        ffbp_writer_free(&w);
        b->on_server = 0;
        if (b->writing && conn->write_blobs_open)
            conn->write_blobs_open--;
    }
    b->gen++;
    blob_unref(b);
}

static void free_drop(ffb_conn *conn, void *obj) {
    ffb_blob *b = obj;
    if (b->cached) {
        inline_remove(conn, b->cached);
        b->cached = NULL;
    }
    blob_unref(b);
}

void ffb_blob_free(ffb_blob *b) {
    if (!b || b->freed)
        return;
    ffb_conn *conn = b->conn;
    b->freed = 1;
    /* Its own requests may wait in the hold queue: the close goes after
       them (an open still held is answered and closed by open_reply). */
    if (conn->held_head && conn->state == FFB__ST_READY &&
        ffb__engine_hold_call(conn, free_send, free_drop, b) == 0)
        return;
    free_send(conn, b);
}

void ffb__blobs_tx_ended(ffb_conn *conn, ffb_tx *tx) {
    /* The server released the transaction's blob handles. */
    for (ffb_blob *b = conn->blobs; b; b = b->next)
        if (b->tx == tx && b->on_server) {
            b->on_server = 0;
            if (b->writing && conn->write_blobs_open)
                conn->write_blobs_open--;
            if (b->writing)
                b->closed = 1; /* not closed in time: the server dropped it */
        }
    /* Inline copies live as long as their transaction (C.3.7). */
    inline_drop(conn, 0, tx->handle);
}

void ffb__inline_clear(ffb_conn *conn) { inline_drop(conn, 1, 0); }

/* ---- inline blobs ----------------------------------------------------------------------- */

/*
 * Check an op_inline_blob against what Firebird 5 sends (C.3.2, C.3.3:
 * sendInlineBlob sizes the data as total_length + 2 bytes per record, the
 * records being num_segments for a segmented blob and ceil(total_length /
 * max_segment) for a stream one, each at most max_segment bytes, and sends
 * at most 65535 bytes). Returns 1 when the records hold exactly the info's
 * length (*total), 0 when they are well-formed but hold less (the info was
 * an estimate: Firebird's transliteration filter reports upper bounds for
 * text blobs, and the unused tail of the buffer is not meaningful, C.3.5),
 * or FFB_E_PROTO (conn->err names the blob) when the packet contradicts
 * itself.
 */
static int inline_check(ffb_conn *conn, const ffbp_inline_blob *ib,
                        ffb_blob_info *info, size_t *total) {
    char id[18];
    const char *why;
    const size_t len = ib->data.len;
    uint64_t records = 0;
    *total = 0;
    if (!parse_info(ib->info.p, ib->info.len, 1, info)) {
        why = "its info is not a complete answer to items 4-7 with values a "
              "blob can have, ended by isc_info_end";
        goto bad;
    }
    if (len > INLINE_MAX) {
        why = "its data is longer than the 65535 bytes an inline blob may "
              "have";
        goto bad;
    }
    if (info->length == 0) {
        if (len == 0)
            return 1;
        why = "an empty blob carries data";
        goto bad;
    }
    if (!info->stream) {
        records = (uint64_t)info->segments;
    } else if (info->max_segment > 0) {
        records = (uint64_t)info->length / (uint64_t)info->max_segment +
                  ((uint64_t)info->length % (uint64_t)info->max_segment != 0);
    } else {
        why = "a stream blob with data has a max segment of 0";
        goto bad;
    }
    /* Once length <= len <= 65535, nothing below can overflow. */
    if (records == 0 || (uint64_t)info->length > len ||
        records > (len - (size_t)info->length) / 2 ||
        (size_t)info->length + 2 * (size_t)records != len) {
        why = "its data is not the info's length plus 2 bytes per record";
        goto bad;
    }
    size_t pos = 0, n, sum = 0;
    const uint8_t *d;
    for (uint64_t i = 0; i < records; i++) {
        if (ffbp_segment_next(ib->data.p, len, &pos, &d, &n) != 1) {
            why = "a record runs past its data";
            goto bad;
        }
        if ((int64_t)n > info->max_segment) {
            why = "a record is longer than the info's max segment";
            goto bad;
        }
        sum += n;
        if (info->stream && n == 0)
            break; /* the stream ended before the estimate */
    }
    *total = sum;
    return pos == len; /* else: less than announced, the tail unused */
bad:
    id_text(ib->blob_id, id);
    return ffb__error_set(&conn->err, FFB_E_PROTO,
                          "inconsistent op_inline_blob for blob %s "
                          "(transaction %u, info of %u bytes, data of %zu "
                          "bytes): %s",
                          id, (unsigned)ib->tx, (unsigned)ib->info.len, len,
                          why);
}

int ffb__inline_store(ffb_conn *conn, const ffbp_inline_blob *ib) {
    ffb_blob_info info;
    size_t total;
    int exact = inline_check(conn, ib, &info, &total);
    if (exact < 0)
        return exact;
    ffb__inline *old = inline_find(conn, ib->tx, ib->blob_id);
    if (old && old->in_use)
        return 0; /* the application is reading that one */
    /* A newer copy makes an unused one stale (C.3.5 step 3, the fixed
       behaviour of Firebird issue #9060), whether or not the new one can
       be kept. */
    if (old)
        inline_remove(conn, old);
    if (!exact)
        return 0; /* read from the server when opened */
    /* Entry and data in one block, all of it charged to the budget. */
    size_t cost = sizeof(ffb__inline) + total;
    if (conn->inl_bytes > conn->inline_budget ||
        cost > conn->inline_budget - conn->inl_bytes)
        return 0; /* over budget: dropped, read normally later */
    ffb__inline *e = ffb__malloc(conn->alloc, cost);
    if (!e)
        return 0; /* the cache is an optimisation */
    memset(e, 0, sizeof(*e));
    e->data = (uint8_t *)(e + 1);
    size_t pos = 0, n, at = 0;
    const uint8_t *d;
    /* inline_check saw these records sum to `total`. */
    while (at < total &&
           ffbp_segment_next(ib->data.p, ib->data.len, &pos, &d, &n) == 1) {
        memcpy(e->data + at, d, n);
        at += n;
    }
    e->tx = ib->tx;
    e->id = ib->blob_id;
    e->len = total;
    e->info = info;
    e->cost = cost;
    if (inline_insert(conn, e) < 0) {
        ffb__free(conn->alloc, e);
        return 0;
    }
    conn->inl_bytes += cost;
    return 0;
}

/* ---- queue twins ------------------------------------------------------------------------ */

int ffb__blob_queue(ffb_blob *b, int what, int whence, int64_t offset,
                    ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    switch (what) {
    case FFB_OP_BLOB_CLOSE:
        return ffb__blob_queue_finish(b, FFBP_OP_CLOSE_BLOB, sync);
    case FFB_OP_BLOB_INFO:
        return queue_info(b, sync);
    case FFB_OP_BLOB_SEEK:
        if (whence < 0 || whence > 2)
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "whence must be 0, 1 or 2");
        return ffb__blob_queue_seek(b, whence, offset, sync);
    default: /* FFB_OP_BLOB_READ */
        if (b->writing)
            return ffb__error_set(&conn->err, FFB_E_STATE,
                                  "the blob was created, not opened for "
                                  "reading");
        if (b->rpos < b->rbuf.len || b->failed || b->cached ||
            (b->eof && !b->gets_inflight))
            return 1; /* ffb_blob_read() answers without waiting */
        int rc = ffb__need_ready(conn);
        if (rc < 0)
            return rc;
        if (b->gets_inflight) /* one more behind those in flight */
            return queue_gets(b, 1, sync);
        if ((rc = refill_sync(b, sync)) < 0)
            return rc;
        return b->gets_inflight ? 0 : 1;
    }
}

int ffb_blob_get_id(const ffb_blob *b, uint8_t out[8]) {
    if (!b || !out)
        return FFB_E_INVAL;
    if (b->writing && !b->has_handle)
        return ffb__error_set(&b->conn->err, FFB_E_STATE,
                              "the blob's create has not been answered yet");
    id_to_bytes(b->id, out);
    return 0;
}

int64_t ffb_blob_tell(const ffb_blob *b) { return b ? b->position : -1; }
