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
#include <string.h>

#include "lib/internal.h"
#include "proto/blob.h"

#define SEGMENT_MAX 65535u
#define GET_PAYLOAD 65533u       /* one op_get_segment of 65535 bytes */
#define QUEUE_THRESHOLD (1024u * 1024u)
#define MAX_GETS 256
/* ffb_blob_read() asks for the next part when less than this is left. */
#define READ_AHEAD_LOW (1024u * 1024u)
#define DEFAULT_BUDGET (10u * 1024u * 1024u)

static const uint8_t info_items[] = {4, 5, 6, 7, FFBP_INFO_END};

/* ---- helpers ----------------------------------------------------------------------- */

static int64_t le_int(const uint8_t *p, size_t n) { return ffbp_le_int(p, n); }

/* Parse an answer to info items 4, 5, 6, 7. Returns 1 when all four were
   there. */
static int parse_info(const uint8_t *p, size_t len, ffb_blob_info *out) {
    size_t pos = 0, n;
    uint8_t item;
    const uint8_t *d;
    int seen = 0, rc;
    memset(out, 0, sizeof(*out));
    while ((rc = ffbp_info_next(p, len, &pos, &item, &d, &n)) == 1) {
        switch (item) {
        case 4:
            out->segments = le_int(d, n);
            seen |= 1;
            break;
        case 5:
            out->max_segment = le_int(d, n);
            seen |= 2;
            break;
        case 6:
            out->length = le_int(d, n);
            seen |= 4;
            break;
        case 7:
            out->stream = n > 0 && d[0] != 0;
            seen |= 8;
            break;
        default:
            break;
        }
    }
    return rc >= 0 && seen == 15 && out->length >= 0;
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

void ffb__blobs_destroy_all(ffb_conn *conn) {
    while (conn->blobs)
        blob_destroy(conn->blobs);
    while (conn->inl) {
        ffb__inline *e = conn->inl;
        conn->inl = e->next;
        ffb__free(conn->alloc, e->data);
        ffb__free(conn->alloc, e);
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

int ffb__pump(ffb_conn *conn) {
    int rc = ffb__need_blocking(conn);
    if (rc < 0)
        return rc;
    /* Answers already owed come first: requests queued meanwhile (deferred
       closes, say) wait for a write that needs them, rather than making
       every read a new round trip. */
    if (conn->fifo_len == conn->fifo_unsent)
        rc = ffb__engine_flush(conn);
    if (rc == 0 && conn->out.len)
        rc = ffb__io_flush(conn);
    if (rc == 0)
        rc = ffb__io_read(conn);
    return rc < 0 ? ffb__engine_fail(conn, rc) : 0;
}

/* ---- reply handlers ------------------------------------------------------------------ */

static int mismatch(ffb_conn *conn, const ffbp_packet *pkt, const char *what) {
    char d[160];
    ffbp_describe(d, sizeof(d), pkt);
    return ffb__error_set(&conn->err, FFB_E_PROTO, "expected %s, got %s", what,
                          d);
}

static int blob_done(ffb__pending *p, int rc) {
    if (p->sync && p->completes)
        p->sync->done = 1;
    blob_unref(p->ctx);
    return rc;
}

/* op_create_blob2 / op_open_blob2. */
static int open_reply(ffb_conn *conn, const ffbp_packet *pkt, ffb__pending *p) {
    ffb_blob *b = p->ctx;
    if (ffb__expect_response(pkt) < 0)
        return blob_done(p, mismatch(conn, pkt, "op_response to a blob open"));
    const ffbp_response *r = &pkt->u.response;
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
    if (ffb__expect_response(pkt) < 0)
        return blob_done(p, mismatch(conn, pkt, "op_response to a blob request"));
    const ffbp_response *r = &pkt->u.response;
    if (ffb__status_is_error(&r->status)) {
        if (!b->failed)
            fail_blob(b, &r->status, "the blob request failed");
        if (p->sync && p->sync->rc == 0)
            p->sync->rc = FFB_E_SERVER;
    } else if (p->op == FFBP_OP_SEEK_BLOB) {
        /* The new position is in the low word of the blob id. */
        b->position = b->received = (int64_t)(uint32_t)r->blob_id;
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
    if (ffb__expect_response(pkt) < 0)
        return blob_done(p, mismatch(conn, pkt, "op_response to op_info_blob"));
    const ffbp_response *r = &pkt->u.response;
    b->info_pending = 0;
    if (b->failed) /* the open failed: the answer is not about this blob */
        return blob_done(p, 0);
    if (ffb__status_is_error(&r->status)) {
        fail_blob(b, &r->status, "reading the blob's info failed");
    } else if (parse_info(r->data.p, r->data.len, &b->info)) {
        b->have_info = 1;
        if (b->received >= b->info.length && b->gets_inflight == 0)
            b->eof = 1;
    } else {
        return blob_done(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                           "malformed blob info answer"));
    }
    return blob_done(p, 0);
}

static int get_reply(ffb_conn *conn, const ffbp_packet *pkt, ffb__pending *p) {
    ffb_blob *b = p->ctx;
    if (ffb__expect_response(pkt) < 0)
        return blob_done(p, mismatch(conn, pkt,
                                     "op_response to op_get_segment"));
    const ffbp_response *r = &pkt->u.response;
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
                                           "malformed op_get_segment buffer"));
    if (b->rbuf.failed)
        return blob_done(p, ffb__error_set(&conn->err, FFB_E_NOMEM,
                                           "out of memory for blob data"));
    /* State 2: end of blob. State 0 with every byte received: also the end
       (C.2.4: the last chunk may leave fewer than 3 bytes unused). */
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


/* The handle field for the next request: the handle, or 0xFFFF while the
   blob is still the server's last object; else wait for the handle. */
static int blob_handle(ffb_blob *b, uint16_t *h) {
    ffb_conn *conn = b->conn;
    for (;;) {
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
        int rc = ffb__pump(conn);
        if (rc < 0)
            return rc;
    }
}

static int tx_field(ffb_tx *tx, uint16_t *h) {
    return ffb__tx_handle(tx, h);
}

static int queue_open(ffb_blob *b, int op) {
    ffb_conn *conn = b->conn;
    uint16_t txh;
    int rc = tx_field(b->tx, &txh);
    if (rc < 0)
        return rc;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_blob_open(&w, op, b->bpb, b->bpb_len, txh,
                       b->writing ? 0 : b->id);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
        return rc;
    if (!expect(b, op, open_reply, NULL))
        return FFB_E_NOMEM;
    /* Writing through 0xFFFF is safe only while no other created blob of
       ours is open: a failed create would redirect to it. */
    b->no_last = b->writing && conn->write_blobs_open > 0;
    conn->last_kind = FFB__LAST_BLOB;
    conn->last_obj = b;
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
    uint16_t h;
    if ((rc = blob_handle(b, &h)) < 0)
        return rc;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    int op = b->stream ? FFBP_OP_PUT_SEGMENT : FFBP_OP_BATCH_SEGMENTS;
    ffbp_put_segment(&w, op, h, (uint16_t)b->wbuf.len, b->wbuf.data,
                     b->wbuf.len);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
        return rc;
    if (!expect(b, op, simple_reply, NULL))
        return FFB_E_NOMEM;
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
    ffb__error_clear(&conn->err);
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

int ffb_blob_write(ffb_blob *b, const void *data, size_t len) {
    if (!b || (!data && len))
        return FFB_E_INVAL;
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
        /* Keep the queued bytes moving, without waiting for answers. */
        if (conn->stage.len >= 4 * QUEUE_THRESHOLD)
            return ffb_conn_flush(conn);
    }
    return 0;
}

static int finish_write(ffb_blob *b, int op, uint8_t id_out[8]) {
    ffb_conn *conn = b->conn;
    int rc = ffb__need_ready(conn);
    if (rc == 0)
        rc = ffb__need_blocking(conn);
    if (rc < 0)
        return rc;
    if (!b->writing || b->closed)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "not a blob being written");
    ffb__error_clear(&conn->err);
    if (op == FFBP_OP_CANCEL_BLOB && !b->create_queued) {
        b->closed = 1; /* nothing reached the server */
        return 0;
    }
    if ((rc = queue_data(b)) < 0)
        return rc;
    uint16_t h;
    if ((rc = blob_handle(b, &h)) < 0)
        return rc;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_object_op(&w, op, h);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
        return rc;
    ffb__sync sync = {0};
    ffb__pending *p = expect(b, op, simple_reply, &sync);
    if (!p)
        return FFB_E_NOMEM;
    p->completes = 1;
    b->closed = 1;
    rc = ffb__wait(conn, &sync.done);
    if (rc < 0)
        return rc;
    if (b->failed)
        return blob_error(b);
    if (id_out)
        id_to_bytes(b->id, id_out);
    return 0;
}

int ffb_blob_close(ffb_blob *b, uint8_t id_out[8]) {
    if (!b)
        return FFB_E_INVAL;
    return finish_write(b, FFBP_OP_CLOSE_BLOB, id_out);
}

int ffb_blob_cancel(ffb_blob *b) {
    if (!b)
        return FFB_E_INVAL;
    return finish_write(b, FFBP_OP_CANCEL_BLOB, NULL);
}

/* ---- reading ------------------------------------------------------------------------- */

static void queue_gets(ffb_blob *b, unsigned k, uint16_t h) {
    ffb_conn *conn = b->conn;
    for (unsigned i = 0; i < k; i++) {
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        ffbp_put_segment(&w, FFBP_OP_GET_SEGMENT, h, 65535, NULL, 0);
        if (ffb__queue_free(conn, &w, 1) < 0)
            return;
        if (!expect(b, FFBP_OP_GET_SEGMENT, get_reply, NULL))
            return;
        b->gets_inflight++;
    }
}

/* Drop the cached inline copies nobody reads: of transaction `tx`, or all
   of them. A copy being read goes when its blob is freed. */
static void inline_drop(ffb_conn *conn, int all, uint16_t tx) {
    for (ffb__inline **pp = &conn->inl; *pp;) {
        ffb__inline *e = *pp;
        if ((all || e->tx == tx) && !e->in_use) {
            *pp = e->next;
            conn->inl_bytes -= e->cost;
            ffb__free(conn->alloc, e->data);
            ffb__free(conn->alloc, e);
        } else {
            pp = &e->next;
        }
    }
}

static ffb__inline *inline_find(ffb_conn *conn, uint16_t tx, uint64_t id) {
    for (ffb__inline *e = conn->inl; e; e = e->next)
        if (e->tx == tx && e->id == id)
            return e;
    return NULL;
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
    ffbp_put_info(&w, FFBP_OP_INFO_BLOB, 0xFFFF, 0, info_items,
                  sizeof(info_items), 128);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0 ||
        !expect(b, FFBP_OP_INFO_BLOB, info_reply, NULL))
        return rc < 0 ? rc : FFB_E_NOMEM;
    b->info_pending = 1;
    size_t k = prefetch ? (prefetch + GET_PAYLOAD - 1) / GET_PAYLOAD : 1;
    if (k > MAX_GETS)
        k = MAX_GETS;
    queue_gets(b, (unsigned)k, 0xFFFF);
    if (conn->state == FFB__ST_BROKEN)
        return conn->err.code;
    *out = b;
    return 0;
}

/* Ask for the rest: exactly what the info says is left, else 4 buffers. */
static int refill(ffb_blob *b) {
    if (b->cached || b->eof || b->gets_inflight || b->failed)
        return 0;
    unsigned k = 4;
    if (b->have_info) {
        int64_t left = b->info.length - b->received;
        if (left <= 0) {
            b->eof = 1;
            return 0;
        }
        k = (unsigned)((left + GET_PAYLOAD - 1) / GET_PAYLOAD);
        if (k > MAX_GETS)
            k = MAX_GETS;
    }
    if (b->has_handle && !b->on_server)
        /* Its transaction ended (or it was closed): the handle may name
           another blob by now, so nothing more is asked with it. */
        return ffb__error_set(&b->conn->err, FFB_E_STATE,
                              "the blob's transaction has ended before the "
                              "blob was read to its end");
    uint16_t h;
    int rc = blob_handle(b, &h);
    if (rc < 0)
        return rc;
    queue_gets(b, k, h);
    if (b->conn->state == FFB__ST_BROKEN)
        return b->conn->err.code;
    return ffb_conn_flush(b->conn); /* on their way now */
}

int ffb_blob_read(ffb_blob *b, void *buf, size_t size, size_t *got) {
    if (!b || (!buf && size) || !got)
        return FFB_E_INVAL;
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
        if ((rc = ffb__pump(conn)) < 0)
            return rc;
    }
}

int ffb_blob_read_all(ffb_blob *b, const uint8_t **data, size_t *len) {
    if (!b || !data || !len)
        return FFB_E_INVAL;
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
        if ((rc = ffb__pump(conn)) < 0)
            return rc;
    }
    *data = b->rbuf.data;
    *len = b->rbuf.len;
    b->position += (int64_t)b->rbuf.len;
    b->rpos = b->rbuf.len; /* consumed; the bytes stay until the next call */
    return 0;
}

int ffb_blob_get_info(ffb_blob *b, ffb_blob_info *out) {
    if (!b || !out)
        return FFB_E_INVAL;
    ffb_conn *conn = b->conn;
    while (!b->have_info) {
        if (b->failed)
            return blob_error(b);
        int rc = ffb__need_ready(conn);
        if (rc < 0)
            return rc;
        if (!b->info_pending) {
            /* Ask explicitly (a created blob, or a cached one has info). */
            uint16_t h;
            if ((rc = blob_handle(b, &h)) < 0)
                return rc;
            ffbp_writer w;
            ffbp_writer_init(&w, conn->alloc);
            ffbp_put_info(&w, FFBP_OP_INFO_BLOB, h, 0, info_items,
                          sizeof(info_items), 128);
            if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
                return rc;
            ffb__sync sync = {0};
            ffb__pending *p = expect(b, FFBP_OP_INFO_BLOB, info_reply, &sync);
            if (!p)
                return FFB_E_NOMEM;
            p->completes = 1;
            b->info_pending = 1;
            if ((rc = ffb__wait(conn, &sync.done)) < 0)
                return rc;
            if (!b->have_info && !b->failed)
                return ffb__error_set(&conn->err, FFB_E_PROTO,
                                      "no blob info in the answer");
            continue;
        }
        if ((rc = ffb__pump(conn)) < 0)
            return rc;
    }
    *out = b->info;
    return 0;
}

int ffb_blob_seek(ffb_blob *b, int whence, int64_t offset, int64_t *pos_out) {
    if (!b || whence < 0 || whence > 2)
        return FFB_E_INVAL;
    ffb_conn *conn = b->conn;
    if (b->writing)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "seeking is for blobs opened for reading");
    int64_t target = whence == 0 ? offset
                     : whence == 1 ? b->position + offset
                                   : -1;
    if (b->cached) {
        int64_t len = b->info.length;
        if (!b->info.stream)
            return ffb__error_set(&conn->err, FFB_E_SERVER,
                                  "a segmented blob cannot seek "
                                  "[bad_segstr_type]");
        if (whence == 2)
            target = len + offset;
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
        if (pos_out)
            *pos_out = target;
        return b->rbuf.failed ? FFB_E_NOMEM : 0;
    }
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (target < INT32_MIN || target > INT32_MAX || offset < INT32_MIN ||
        offset > INT32_MAX)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "blob offsets are limited to 32 bits");
    uint16_t h;
    if ((rc = blob_handle(b, &h)) < 0)
        return rc;
    /* What was read ahead is discarded; relative moves are made absolute
       from our own position, as the server's is ahead of it. */
    b->gen++;
    b->gets_inflight = 0;
    ffbp_writer_reset(&b->rbuf);
    b->rpos = 0;
    b->eof = 0;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_seek_blob(&w, h, whence == 2 ? 2 : 0,
                       (int32_t)(whence == 2 ? offset : target));
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
        return rc;
    ffb__sync sync = {0};
    ffb__pending *p = expect(b, FFBP_OP_SEEK_BLOB, simple_reply, &sync);
    if (!p)
        return FFB_E_NOMEM;
    p->completes = 1;
    if ((rc = ffb__wait(conn, &sync.done)) < 0)
        return rc;
    if (sync.rc < 0 || b->failed) {
        rc = blob_error(b);
        b->failed = 0; /* a refused seek leaves the blob readable */
        return rc;
    }
    if (b->have_info && b->received >= b->info.length)
        b->eof = 1;
    if (pos_out)
        *pos_out = b->position;
    return 0;
}

void ffb_blob_free(ffb_blob *b) {
    if (!b || b->freed)
        return;
    ffb_conn *conn = b->conn;
    b->freed = 1;
    if (b->cached) {
        /* One inline copy serves one open (C.3.7). */
        for (ffb__inline **pp = &conn->inl; *pp; pp = &(*pp)->next)
            if (*pp == b->cached) {
                *pp = b->cached->next;
                conn->inl_bytes -= b->cached->cost;
                ffb__free(conn->alloc, b->cached->data);
                ffb__free(conn->alloc, b->cached);
                break;
            }
        b->cached = NULL;
    } else if (b->on_server && conn->state == FFB__ST_READY) {
        /* Closed with the next request; its answer is read and ignored. */
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        ffbp_put_object_op(&w, b->writing ? FFBP_OP_CANCEL_BLOB
                                          : FFBP_OP_CLOSE_BLOB,
                           b->handle);
        if (ffb__queue_fire_and_forget(conn, &w, FFBP_OP_CLOSE_BLOB, 0) < 0)
            ffb__error_clear(&conn->err);
        ffbp_writer_free(&w);
        b->on_server = 0;
        if (b->writing && conn->write_blobs_open)
            conn->write_blobs_open--;
    }
    b->gen++;
    blob_unref(b);
}

void ffb__blobs_tx_ended(ffb_conn *conn, ffb_tx *tx) {
    /* The server released the transaction's blob handles. */
    for (ffb_blob *b = conn->blobs; b; b = b->next)
        if (b->tx == tx && b->on_server) {
            b->on_server = 0;
            if (b->writing && conn->write_blobs_open)
                conn->write_blobs_open--;
        }
    /* Inline copies live as long as their transaction (C.3.7). */
    inline_drop(conn, 0, tx->handle);
}

void ffb__inline_clear(ffb_conn *conn) { inline_drop(conn, 1, 0); }

/* ---- inline blobs ----------------------------------------------------------------------- */

void ffb__inline_store(ffb_conn *conn, const ffbp_inline_blob *ib) {
    ffb_blob_info info;
    if (!parse_info(ib->info.p, ib->info.len, &info))
        return; /* incomplete info: not usable (C.3.5) */
    /* Join the records defensively: exactly num_segments for a segmented
       blob, up to a zero-length record for a stream one, never past the
       buffer; a tail after that is ignored (C.3.5). */
    size_t pos = 0, n, total = 0;
    const uint8_t *d;
    int64_t count = 0;
    while (ffbp_segment_next(ib->data.p, ib->data.len, &pos, &d, &n) == 1) {
        if (!info.stream && count == info.segments)
            break;
        if (info.stream && n == 0)
            break;
        total += n;
        count++;
    }
    size_t cost = sizeof(ffb__inline) + total;
    ffb__inline *old = inline_find(conn, ib->tx, ib->blob_id);
    if (old && old->in_use)
        return; /* the application is reading that one */
    size_t freed = old ? old->cost : 0;
    if (conn->inl_bytes - freed + cost > conn->inline_budget)
        return; /* over budget: dropped, read normally later */
    uint8_t *data = ffb__malloc(conn->alloc, total ? total : 1);
    if (!data)
        return;
    pos = 0;
    count = 0;
    size_t at = 0;
    while (at < total &&
           ffbp_segment_next(ib->data.p, ib->data.len, &pos, &d, &n) == 1) {
        memcpy(data + at, d, n);
        at += n;
    }
    ffb__inline *e = old;
    if (e) {
        /* Replace an unused copy with the newer one (C.3.5 step 3, the
           fixed behaviour of Firebird issue #9060). */
        conn->inl_bytes -= e->cost;
        ffb__free(conn->alloc, e->data);
    } else {
        e = ffb__malloc(conn->alloc, sizeof(*e));
        if (!e) {
            ffb__free(conn->alloc, data);
            return;
        }
        memset(e, 0, sizeof(*e));
        e->next = conn->inl;
        conn->inl = e;
    }
    e->tx = ib->tx;
    e->id = ib->blob_id;
    e->data = data;
    e->len = total;
    e->info = info;
    e->in_use = 0;
    e->cost = cost;
    conn->inl_bytes += cost;
}
