/*
 * Arrays (reference 03, C.10.1): descriptors (ffb_array_desc, looked up
 * from the system tables and cached per connection), the conversion
 * between the application's element layout (include/fastfb.h) and the
 * wire's (proto/slice.h), and op_get_slice / op_put_slice as requests.
 * The blocking calls are in lib/blocking.c.
 */
#include <string.h>

#include "lib/internal.h"
#include "proto/slice.h"

/* ---- element types ---------------------------------------------------- */

/* enum ffb_sqltype of an element <-> its BLR type (= RDB$FIELD_TYPE). */
static const struct {
    int sqltype;
    uint8_t blr;
} elem_types[] = {
    {FFB_SQL_SHORT, FFBP_BLR_SHORT},
    {FFB_SQL_LONG, FFBP_BLR_LONG},
    {FFB_SQL_INT64, FFBP_BLR_INT64},
    {FFB_SQL_INT128, FFBP_BLR_INT128},
    {FFB_SQL_FLOAT, FFBP_BLR_FLOAT},
    {FFB_SQL_DOUBLE, FFBP_BLR_DOUBLE},
    {FFB_SQL_TYPE_DATE, FFBP_BLR_SQL_DATE},
    {FFB_SQL_TYPE_TIME, FFBP_BLR_SQL_TIME},
    {FFB_SQL_TIMESTAMP, FFBP_BLR_TIMESTAMP},
    {FFB_SQL_TEXT, FFBP_BLR_TEXT},
    {FFB_SQL_VARYING, FFBP_BLR_VARYING},
    {FFB_SQL_BOOLEAN, FFBP_BLR_BOOL},
    {FFB_SQL_DEC16, FFBP_BLR_DEC64},
    {FFB_SQL_DEC34, FFBP_BLR_DEC128},
    {FFB_SQL_TIME_TZ, FFBP_BLR_SQL_TIME_TZ},
    {FFB_SQL_TIMESTAMP_TZ, FFBP_BLR_TIMESTAMP_TZ},
};

static uint8_t elem_blr(int sqltype) {
    for (size_t i = 0; i < sizeof(elem_types) / sizeof(elem_types[0]); i++)
        if (elem_types[i].sqltype == sqltype)
            return elem_types[i].blr;
    return 0;
}

int ffb__array_sqltype(int field_type) {
    for (size_t i = 0; i < sizeof(elem_types) / sizeof(elem_types[0]); i++)
        if (elem_types[i].blr == field_type)
            return elem_types[i].sqltype;
    return 0;
}

static int text_elem(int sqltype) {
    return sqltype == FFB_SQL_TEXT || sqltype == FFB_SQL_VARYING;
}

size_t ffb_array_element_size(const ffb_array_desc *d) {
    if (!d || (text_elem(d->element) && (d->length <= 0 || d->length > 32765)))
        return 0;
    return ffbp_slice_native_size(
        elem_blr(d->element),
        (uint16_t)(text_elem(d->element) ? d->length : 0));
}

size_t ffb_array_element_count(const ffb_array_desc *d) {
    if (!d || d->dims == 0 || d->dims > FFB_ARRAY_MAX_DIMS)
        return 0;
    uint64_t n = 1;
    for (unsigned i = 0; i < d->dims; i++) {
        if (d->upper[i] < d->lower[i])
            return 0;
        n *= (uint64_t)((int64_t)d->upper[i] - d->lower[i] + 1);
        if (n > 0x7FFFFFFF)
            return 0;
    }
    return (size_t)n;
}

/* ---- host <-> wire ------------------------------------------------------ */

static int host_le(void) {
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static void put_be(uint8_t *o, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; i++)
        o[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static uint64_t get_be(const uint8_t *p, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* The element at `e` (application layout) appended to `w`, wire layout. */
static int put_elem(ffbp_writer *w, uint8_t blr, uint16_t length,
                    const uint8_t *e) {
    uint8_t b[16] = {0};
    int16_t s16;
    uint16_t u16;
    uint32_t u32, u32b;
    uint64_t u64;
    switch (blr) {
    case FFBP_BLR_SHORT:
        memcpy(&s16, e, 2);
        put_be(b, (uint32_t)(int32_t)s16, 4);
        ffbp_put_raw(w, b, 4);
        return 0;
    case FFBP_BLR_LONG:
    case FFBP_BLR_FLOAT:
    case FFBP_BLR_SQL_DATE:
    case FFBP_BLR_SQL_TIME:
        memcpy(&u32, e, 4);
        put_be(b, u32, 4);
        ffbp_put_raw(w, b, 4);
        return 0;
    case FFBP_BLR_INT64:
    case FFBP_BLR_DOUBLE:
        memcpy(&u64, e, 8);
        put_be(b, u64, 8);
        ffbp_put_raw(w, b, 8);
        return 0;
    case FFBP_BLR_TIMESTAMP:
        memcpy(&u32, e, 4);
        memcpy(&u32b, e + 4, 4);
        put_be(b, u32, 4);
        put_be(b + 4, u32b, 4);
        ffbp_put_raw(w, b, 8);
        return 0;
    case FFBP_BLR_SQL_TIME_TZ: /* long time, short zone */
        memcpy(&u32, e, 4);
        memcpy(&u16, e + 4, 2);
        put_be(b, u32, 4);
        put_be(b + 4, (uint32_t)(int32_t)(int16_t)u16, 4);
        ffbp_put_raw(w, b, 8);
        return 0;
    case FFBP_BLR_TIMESTAMP_TZ: /* long date, long time, short zone */
        memcpy(&u32, e, 4);
        memcpy(&u32b, e + 4, 4);
        memcpy(&u16, e + 8, 2);
        put_be(b, u32, 4);
        put_be(b + 4, u32b, 4);
        put_be(b + 8, (uint32_t)(int32_t)(int16_t)u16, 4);
        ffbp_put_raw(w, b, 12);
        return 0;
    case FFBP_BLR_INT128:
        for (size_t i = 0; i < 16; i++)
            b[i] = host_le() ? e[15 - i] : e[i];
        ffbp_put_raw(w, b, 16);
        return 0;
    case FFBP_BLR_DEC64:
        ffbp_put_raw(w, e, 8);
        return 0;
    case FFBP_BLR_DEC128:
        ffbp_put_raw(w, e, 16);
        return 0;
    case FFBP_BLR_BOOL:
        if (e[0] > 1)
            return -1; /* reference 02: exactly 0 or 1 */
        ffbp_put_opaque(w, e, 1);
        return 0;
    case FFBP_BLR_TEXT:
        ffbp_put_opaque(w, e, length);
        return 0;
    case FFBP_BLR_VARYING:
        memcpy(&u16, e, 2);
        if (u16 > length || memchr(e + 2, 0, u16))
            return -1; /* the server keeps a C string: no NUL inside */
        ffbp_put_u32(w, u16);
        ffbp_put_opaque(w, e + 2, u16);
        return 0;
    default:
        return -1;
    }
}

/* The wire element at `p` (checked by ffbp_slice_elem) into `e`. */
static void get_elem(uint8_t blr, uint16_t length, const uint8_t *p,
                     uint8_t *e) {
    int16_t s16;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (blr) {
    case FFBP_BLR_SHORT:
        s16 = (int16_t)(uint16_t)get_be(p + 2, 2);
        memcpy(e, &s16, 2);
        break;
    case FFBP_BLR_LONG:
    case FFBP_BLR_FLOAT:
    case FFBP_BLR_SQL_DATE:
    case FFBP_BLR_SQL_TIME:
        u32 = (uint32_t)get_be(p, 4);
        memcpy(e, &u32, 4);
        break;
    case FFBP_BLR_INT64:
    case FFBP_BLR_DOUBLE:
        u64 = get_be(p, 8);
        memcpy(e, &u64, 8);
        break;
    case FFBP_BLR_TIMESTAMP:
        u32 = (uint32_t)get_be(p, 4);
        memcpy(e, &u32, 4);
        u32 = (uint32_t)get_be(p + 4, 4);
        memcpy(e + 4, &u32, 4);
        break;
    case FFBP_BLR_SQL_TIME_TZ:
        memset(e, 0, 8);
        u32 = (uint32_t)get_be(p, 4);
        memcpy(e, &u32, 4);
        u16 = (uint16_t)get_be(p + 6, 2);
        memcpy(e + 4, &u16, 2);
        break;
    case FFBP_BLR_TIMESTAMP_TZ:
        memset(e, 0, 12);
        u32 = (uint32_t)get_be(p, 4);
        memcpy(e, &u32, 4);
        u32 = (uint32_t)get_be(p + 4, 4);
        memcpy(e + 4, &u32, 4);
        u16 = (uint16_t)get_be(p + 10, 2);
        memcpy(e + 8, &u16, 2);
        break;
    case FFBP_BLR_INT128:
        for (size_t i = 0; i < 16; i++)
            e[i] = host_le() ? p[15 - i] : p[i];
        break;
    case FFBP_BLR_DEC64:
        memcpy(e, p, 8);
        break;
    case FFBP_BLR_DEC128:
        memcpy(e, p, 16);
        break;
    case FFBP_BLR_BOOL:
        e[0] = p[0] != 0;
        break;
    case FFBP_BLR_TEXT:
        memcpy(e, p, length);
        break;
    case FFBP_BLR_VARYING:
        u16 = (uint16_t)get_be(p, 4); /* <= length (ffbp_slice_elem) */
        memcpy(e, &u16, 2);
        memcpy(e + 2, p + 4, u16);
        memset(e + 2 + u16, 0, (size_t)length - u16);
        break;
    default:
        break;
    }
}

/* ---- requests --------------------------------------------------------- */

/* One op_get_slice / op_put_slice in flight; owned by the connection's
   list until its answer is handled (or the connection is freed). */
typedef struct ffb__array_op {
    struct ffb__array_op *next;
    ffb__sync *sync;
    ffbp_item item; /* element type, for the engine's op_slice decoder */
    uint32_t count;
    uint8_t *buf; /* get: the application's buffer */
    size_t *out_len;
    uint8_t *id_out; /* put */
} ffb__array_op;

static void op_unlink(ffb_conn *conn, ffb__array_op *op) {
    for (ffb__array_op **pp = &conn->array_ops; *pp; pp = &(*pp)->next)
        if (*pp == op) {
            *pp = op->next;
            break;
        }
    ffb__free(conn->alloc, op);
}

void ffb__arrays_free_all(ffb_conn *conn) {
    while (conn->array_ops)
        op_unlink(conn, conn->array_ops);
    ffb__array_cache_clear(conn);
}

static int sdl_of(ffb_conn *conn, const ffb_array_desc *d, ffbp_writer *w,
                  uint8_t *blr, uint16_t *length, size_t *esize,
                  size_t *count) {
    *esize = ffb_array_element_size(d);
    *count = ffb_array_element_count(d);
    *blr = elem_blr(d->element);
    *length = (uint16_t)(text_elem(d->element) ? d->length : 0);
    ffbp_sdl s;
    memset(&s, 0, sizeof(s));
    s.blr = *blr;
    s.scale = (int8_t)d->scale;
    s.length = *length;
    s.charset = text_elem(d->element) && d->charset >= 0 ? d->charset : -1;
    s.relation = d->relation;
    s.field = d->field;
    s.dims = d->dims;
    for (unsigned i = 0; i < d->dims && i < FFBP_SDL_MAX_DIMS; i++) {
        s.lower[i] = d->lower[i];
        s.upper[i] = d->upper[i];
    }
    if (!*esize || !*count || (uint64_t)*esize * *count > 0x7FFFFFFF ||
        memchr(d->relation, 0, sizeof(d->relation)) == NULL ||
        memchr(d->field, 0, sizeof(d->field)) == NULL ||
        ffbp_put_sdl(w, &s) != FFBP_OK)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "not an array descriptor libfastfb can use "
                              "(element type %d, %u dimensions)",
                              d->element, d->dims);
    return w->failed ? ffb__fatal(conn, FFB_E_NOMEM, "out of memory") : 0;
}

static int tx_known(ffb_conn *conn, ffb_tx *tx, uint16_t *h) {
    if (!tx || tx->conn != conn)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "an array needs a transaction of this "
                              "connection");
    if (tx->state != FFB__TX_ACTIVE) {
        int rc = ffb__tx_handle(tx, h);
        if (rc < 0)
            return rc;
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the transaction's start has not been "
                              "answered yet");
    }
    *h = tx->handle;
    return 0;
}

static uint64_t quad_of(const uint8_t id[8]) { return get_be(id, 8); }

static int get_reply(ffb_conn *conn, const ffbp_packet *pkt, ffb__pending *p) {
    ffb__array_op *op = p->ctx;
    int rc = 0;
    if (pkt->op == FFBP_OP_SLICE) {
        const ffbp_slice *s = &pkt->u.slice;
        const uint8_t *q = s->elems;
        size_t esize = ffbp_slice_native_size(op->item.blr, op->item.length);
        for (uint32_t i = 0; i < s->count; i++) {
            size_t n = 0;
            ffbp_slice_elem(q, s->elems_len - (size_t)(q - s->elems),
                            op->item.blr, op->item.length, &n);
            get_elem(op->item.blr, op->item.length, q, op->buf + i * esize);
            q += n;
        }
        if (op->out_len)
            *op->out_len = (size_t)s->count * esize;
    } else {
        const ffbp_response *r = ffb__reply_response(conn, pkt, p);
        if (!r)
            rc = FFB_E_PROTO;
        else if (ffb__status_is_error(&r->status))
            ffb__sync_fail_status(conn, op->sync, FFB_E_SERVER, &r->status,
                                  "op_get_slice failed");
        else
            rc = ffb__error_set(&conn->err, FFB_E_PROTO,
                                "op_get_slice answered op_response without "
                                "an error and without the slice");
    }
    if (op->sync)
        op->sync->done = 1;
    op_unlink(conn, op);
    return rc;
}

static int put_reply(ffb_conn *conn, const ffbp_packet *pkt, ffb__pending *p) {
    ffb__array_op *op = p->ctx;
    int rc = 0;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        rc = FFB_E_PROTO;
    else if (ffb__status_is_error(&r->status))
        ffb__sync_fail_status(conn, op->sync, FFB_E_SERVER, &r->status,
                              "op_put_slice failed");
    else if (op->id_out)
        put_be(op->id_out, r->blob_id, 8);
    if (op->sync)
        op->sync->done = 1;
    op_unlink(conn, op);
    return rc;
}

static int queue_slice(ffb_conn *conn, ffbp_writer *w, int32_t code,
                       ffb__reply_fn fn, ffb__array_op *op) {
    int rc = ffb__queue_free(conn, w, 1);
    if (rc < 0) {
        ffb__free(conn->alloc, op);
        return rc;
    }
    ffb__pending *p = ffb__engine_expect(conn, code, fn, op);
    if (!p) {
        ffb__free(conn->alloc, op);
        return ffb__engine_fail(conn, FFB_E_NOMEM);
    }
    op->next = conn->array_ops;
    conn->array_ops = op;
    p->sync = op->sync;
    p->completes = 1;
    if (code == FFBP_OP_GET_SLICE) {
        p->items = &op->item;
        p->nitems = 1;
        p->limit = op->count;
    }
    return 0;
}

int ffb__array_queue_get(ffb_conn *conn, ffb_tx *tx, const ffb_array_desc *d,
                         const uint8_t id[8], void *buf, size_t size,
                         size_t *out_len, ffb__sync *sync) {
    if (!d || !id || (!buf && size))
        return ffb__error_set(&conn->err, FFB_E_INVAL, "NULL argument");
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    uint16_t h;
    if ((rc = tx_known(conn, tx, &h)) < 0)
        return rc;
    ffbp_writer sdl;
    ffbp_writer_init(&sdl, conn->alloc);
    uint8_t blr;
    uint16_t length;
    size_t esize, count;
    if ((rc = sdl_of(conn, d, &sdl, &blr, &length, &esize, &count)) < 0)
        goto out;
    if (size < esize * count) {
        rc = ffb__error_set(&conn->err, FFB_E_INVAL,
                            "the buffer holds %zu bytes, the array %zu", size,
                            esize * count);
        goto out;
    }
    ffb__array_op *op = ffb__malloc(conn->alloc, sizeof(*op));
    if (!op) {
        rc = ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
        goto out;
    }
    memset(op, 0, sizeof(*op));
    op->sync = sync;
    op->item.blr = blr;
    op->item.length = length;
    op->count = (uint32_t)count;
    op->buf = buf;
    op->out_len = out_len;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_slice_request(&w, FFBP_OP_GET_SLICE, h, quad_of(id),
                           (uint32_t)(esize * count), sdl.data, sdl.len, 0,
                           NULL, 0);
    rc = queue_slice(conn, &w, FFBP_OP_GET_SLICE, get_reply, op);
out:
    ffbp_writer_free(&sdl);
    return rc;
}

int ffb__array_queue_put(ffb_conn *conn, ffb_tx *tx, const ffb_array_desc *d,
                         const void *buf, size_t len, uint8_t id_out[8],
                         ffb__sync *sync) {
    if (!d || !id_out || (!buf && len))
        return ffb__error_set(&conn->err, FFB_E_INVAL, "NULL argument");
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    uint16_t h;
    if ((rc = tx_known(conn, tx, &h)) < 0)
        return rc;
    ffbp_writer sdl, elems;
    ffbp_writer_init(&sdl, conn->alloc);
    ffbp_writer_init(&elems, conn->alloc);
    uint8_t blr;
    uint16_t length;
    size_t esize, count;
    if ((rc = sdl_of(conn, d, &sdl, &blr, &length, &esize, &count)) < 0)
        goto out;
    if (len != esize * count) {
        rc = ffb__error_set(&conn->err, FFB_E_INVAL,
                            "%zu bytes given, the array holds %zu elements "
                            "of %zu bytes",
                            len, count, esize);
        goto out;
    }
    const uint8_t *e = buf;
    for (size_t i = 0; i < count; i++)
        if (put_elem(&elems, blr, length, e + i * esize) < 0) {
            rc = ffb__error_set(&conn->err, FFB_E_INVAL,
                                "element %zu cannot be sent (a BOOLEAN "
                                "other than 0 or 1, a VARCHAR over %u bytes "
                                "or with a NUL byte)",
                                i, (unsigned)length);
            goto out;
        }
    if (elems.failed) {
        rc = ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
        goto out;
    }
    ffb__array_op *op = ffb__malloc(conn->alloc, sizeof(*op));
    if (!op) {
        rc = ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
        goto out;
    }
    memset(op, 0, sizeof(*op));
    op->sync = sync;
    op->id_out = id_out;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_slice_request(&w, FFBP_OP_PUT_SLICE, h, 0, (uint32_t)len, sdl.data,
                           sdl.len, (uint32_t)len, elems.data, elems.len);
    rc = queue_slice(conn, &w, FFBP_OP_PUT_SLICE, put_reply, op);
out:
    ffbp_writer_free(&sdl);
    ffbp_writer_free(&elems);
    return rc;
}

/* ---- descriptor cache --------------------------------------------------- */

typedef struct ffb__array_cached {
    struct ffb__array_cached *next;
    ffb_array_desc desc;
} ffb__array_cached;

void ffb__array_cache_clear(ffb_conn *conn) {
    while (conn->arrays) {
        ffb__array_cached *c = conn->arrays;
        conn->arrays = c->next;
        ffb__free(conn->alloc, c);
    }
}

int ffb__array_cache_find(ffb_conn *conn, const char *relation,
                          const char *field, ffb_array_desc *out) {
    for (ffb__array_cached *c = conn->arrays; c; c = c->next)
        if (!strcmp(c->desc.relation, relation) &&
            !strcmp(c->desc.field, field)) {
            *out = c->desc;
            return 1;
        }
    return 0;
}

void ffb__array_cache_add(ffb_conn *conn, const ffb_array_desc *d) {
    ffb__array_cached *c = ffb__malloc(conn->alloc, sizeof(*c));
    if (!c)
        return; /* not cached: looked up again next time */
    c->desc = *d;
    c->next = conn->arrays;
    conn->arrays = c;
}

/* ---- queue twins -------------------------------------------------------- */

/* A result of this file; `tx` is referenced while it is queued. */
static struct ffb_result *array_result(ffb_conn *conn, int op, ffb_cb cb,
                                       void *data, ffb_tx *tx) {
    return ffb__result_for(conn, op, cb, data, NULL,
                           tx && tx->conn == conn ? tx : NULL);
}

int ffb_array_queue_get(ffb_conn *conn, ffb_tx *tx, const ffb_array_desc *desc,
                        const uint8_t id[8], void *buf, size_t size,
                        size_t *out_len, ffb_cb cb, void *data) {
    if (!conn)
        return FFB_E_INVAL;
    struct ffb_result *r = array_result(conn, FFB_OP_ARRAY_GET, cb, data, tx);
    if (!r)
        return FFB_E_NOMEM;
    return ffb__result_queued(
        conn, r,
        ffb__array_queue_get(conn, tx, desc, id, buf, size, out_len, &r->sync));
}

int ffb_array_queue_put(ffb_conn *conn, ffb_tx *tx, const ffb_array_desc *desc,
                        const void *buf, size_t len, uint8_t id_out[8],
                        ffb_cb cb, void *data) {
    if (!conn)
        return FFB_E_INVAL;
    struct ffb_result *r = array_result(conn, FFB_OP_ARRAY_PUT, cb, data, tx);
    if (!r)
        return FFB_E_NOMEM;
    return ffb__result_queued(
        conn, r,
        ffb__array_queue_put(conn, tx, desc, buf, len, id_out, &r->sync));
}

/* ---- statement columns -------------------------------------------------- */

int ffb_stmt_get_array_id(const ffb_stmt *stmt, unsigned col, uint8_t out[8]) {
    if (!stmt || !out)
        return FFB_E_INVAL;
    if (col < stmt->out.n && stmt->out.cols[col].sqltype != FFBP_SQL_ARRAY)
        return ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                              "column %u is not an array", col + 1);
    return ffb_stmt_get_blob_id(stmt, col, out);
}

int ffb_stmt_bind_array_id(ffb_stmt *stmt, unsigned idx, const uint8_t id[8]) {
    if (!stmt || !id)
        return FFB_E_INVAL;
    if (stmt->prepared && idx < stmt->in.n &&
        stmt->in.cols[idx].sqltype != FFBP_SQL_ARRAY)
        return ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                              "parameter %u is not an array", idx + 1);
    return ffb_stmt_bind_blob_id(stmt, idx, id);
}

/* ---- the descriptor lookup, as requests ------------------------------------
 * One query without parameters (the names go in as string literals), so its
 * prepare and its execution are queued together: the execution waits in the
 * hold queue for the prepare's answer and is sent then, with its fetch.
 * The rows (at most 16 + the end) come in that one fetch. */

#define LOOKUP_SQL_HEAD                                                        \
    "SELECT F.RDB$FIELD_TYPE, F.RDB$FIELD_SCALE, F.RDB$FIELD_LENGTH, "         \
    "F.RDB$DIMENSIONS, F.RDB$CHARACTER_SET_ID, D.RDB$LOWER_BOUND, "            \
    "D.RDB$UPPER_BOUND FROM RDB$RELATION_FIELDS RF JOIN RDB$FIELDS F ON "      \
    "F.RDB$FIELD_NAME = RF.RDB$FIELD_SOURCE LEFT JOIN RDB$FIELD_DIMENSIONS "   \
    "D ON D.RDB$FIELD_NAME = F.RDB$FIELD_NAME WHERE RF.RDB$RELATION_NAME = "

/* 'name' with quotes doubled. */
static size_t put_literal_sql(char *o, const char *s) {
    size_t n = 0;
    o[n++] = '\'';
    for (; *s; s++) {
        if (*s == '\'')
            o[n++] = '\'';
        o[n++] = *s;
    }
    o[n++] = '\'';
    return n;
}

int ffb__array_queue_lookup(ffb_conn *conn, ffb_tx *tx, ffb_array_desc *d,
                            ffb__sync *sync, ffb_stmt **out) {
    if (!tx)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "the lookup needs a transaction");
    char sql[sizeof(LOOKUP_SQL_HEAD) + 2 * 2 * 256 + 64];
    size_t n = sizeof(LOOKUP_SQL_HEAD) - 1;
    memcpy(sql, LOOKUP_SQL_HEAD, n);
    n += put_literal_sql(sql + n, d->relation);
    memcpy(sql + n, " AND RF.RDB$FIELD_NAME = ", 25);
    n += 25;
    n += put_literal_sql(sql + n, d->field);
    static const char tail[] = " ORDER BY D.RDB$DIMENSION";
    memcpy(sql + n, tail, sizeof(tail) - 1);
    n += sizeof(tail) - 1;
    ffb_stmt *s;
    int rc = ffb_stmt_new(conn, &s);
    if (rc < 0)
        return rc;
    s->fetch_size = FFB_ARRAY_MAX_DIMS + 1; /* every row and the end */
    if ((rc = ffb__stmt_queue_prepare(s, tx, sql, n, NULL)) < 0 ||
        (rc = ffb__stmt_queue_execute(s, tx, sync)) < 0) {
        ffb_stmt_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* One row: type, scale, length, dimensions, charset, lower, upper. */
static int lookup_row(ffb_stmt *stmt, ffb_array_desc *d) {
    int64_t v[7] = {0, 0, 0, 0, -1, 1, 0};
    for (unsigned i = 0; i < 7; i++) {
        if (ffb_stmt_is_null(stmt, i) == 1)
            continue;
        int rc = ffb_stmt_get_int64(stmt, i, &v[i]);
        if (rc < 0)
            return rc;
    }
    if (ffb_stmt_is_null(stmt, 5) == 1 || d->dims >= FFB_ARRAY_MAX_DIMS) {
        d->dims = FFB_ARRAY_MAX_DIMS + 1; /* not an array / too many */
        return 0;
    }
    d->element = ffb__array_sqltype((int)v[0]);
    d->scale = (int)v[1];
    d->length = (int)v[2];
    d->charset = text_elem(d->element) ? (int)v[4] : -1;
    d->lower[d->dims] = (int32_t)v[5];
    d->upper[d->dims] = (int32_t)v[6];
    d->dims++;
    return 0;
}

int ffb__array_lookup_finish(ffb_conn *conn, ffb_stmt *s, int rc,
                             ffb_array_desc *d) {
    int found = 0;
    while (rc == 0 && (rc = ffb__stmt_fetch(s)) == 1) {
        found = 1;
        rc = lookup_row(s, d);
    }
    ffb_stmt_free(s);      /* its drop rides with the next request */
    if (rc == FFB_E_AGAIN) /* cannot happen: the end came with the rows */
        rc = ffb__error_set(&conn->err, FFB_E_PROTO,
                            "the lookup's rows did not end in one fetch");
    if (rc < 0)
        return rc;
    if (!found)
        return ffb__error_set(&conn->err, FFB_E_SERVER,
                              "column \"%s\" of table \"%s\" does not exist",
                              d->field, d->relation);
    if (d->dims == 0 || d->dims > FFB_ARRAY_MAX_DIMS)
        return ffb__error_set(&conn->err, FFB_E_SERVER,
                              "column \"%s\" of table \"%s\" is not an array",
                              d->field, d->relation);
    if (!d->element || !ffb_array_element_size(d))
        return ffb__error_set(&conn->err, FFB_E_UNSUPPORTED,
                              "the elements of array \"%s\".\"%s\" have a "
                              "type libfastfb cannot move",
                              d->relation, d->field);
    if (!text_elem(d->element))
        d->length = (int)ffb_array_element_size(d);
    ffb__array_cache_add(conn, d);
    return 0;
}

int ffb__array_lookup_begin(ffb_conn *conn, const char *relation,
                            const char *field, ffb_array_desc *out,
                            size_t out_size) {
    if (!relation || !field || !out || out_size < sizeof(ffb_array_desc))
        return ffb__error_set(&conn->err, FFB_E_INVAL, "bad arguments");
    size_t rl = strlen(relation), fl = strlen(field);
    if (rl > 252 || fl > 252)
        return ffb__error_set(&conn->err, FFB_E_INVAL, "a name over 252 bytes");
    if (ffb__array_cache_find(conn, relation, field, out))
        return 1;
    memset(out, 0, sizeof(*out));
    memcpy(out->relation, relation, rl + 1);
    memcpy(out->field, field, fl + 1);
    return 0;
}

static void lookup_finish(ffb_conn *conn, struct ffb_result *r) {
    ffb_array_desc *d = (ffb_array_desc *)(void *)r->simple.data;
    int rc = ffb__array_lookup_finish(conn, r->stmt, r->sync.rc, d);
    if (rc < 0 && r->sync.rc == 0) {
        ffb_error *e = ffb__sync_error(conn, &r->sync);
        if (e != &conn->err)
            *e = conn->err;
        r->sync.rc = rc;
    }
}

int ffb_array_queue_lookup(ffb_conn *conn, ffb_tx *tx, const char *relation,
                           const char *field, ffb_array_desc *out,
                           size_t out_size, ffb_cb cb, void *data) {
    if (!conn)
        return FFB_E_INVAL;
    ffb__conn_error_clear(conn);
    int rc = ffb__array_lookup_begin(conn, relation, field, out, out_size);
    if (rc != 0)
        return rc; /* 1: from the cache */
    struct ffb_result *r =
        array_result(conn, FFB_OP_ARRAY_LOOKUP, cb, data, tx);
    if (!r)
        return FFB_E_NOMEM;
    ffb_stmt *s = NULL;
    rc = ffb__array_queue_lookup(conn, tx, out, &r->sync, &s);
    if (rc == 0) {
        r->stmt = s; /* its reference: the one ffb_stmt_new gave */
        s->refs++;
        r->simple.data = (uint8_t *)(void *)out;
        r->finish = lookup_finish;
    }
    return ffb__result_queued(conn, r, rc);
}
