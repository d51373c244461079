/* Batch requests and op_batch_cs (reference 03, C.4). */
#include "proto/blob.h"

void ffbp_put_batch_create(ffbp_writer *w, uint16_t stmt, const uint8_t *blr,
                           size_t blr_len, uint32_t msglen, const uint8_t *pb,
                           size_t pb_len) {
    ffbp_put_i32(w, FFBP_OP_BATCH_CREATE);
    ffbp_put_i16(w, stmt);
    ffbp_put_cstring(w, blr, blr_len);
    ffbp_put_u32(w, msglen);
    ffbp_put_cstring(w, pb, pb_len);
}

void ffbp_put_batch_msg(ffbp_writer *w, uint16_t stmt, uint32_t count,
                        const uint8_t *msgs, size_t len) {
    ffbp_put_i32(w, FFBP_OP_BATCH_MSG);
    ffbp_put_i16(w, stmt);
    ffbp_put_u32(w, count);
    ffbp_put_raw(w, msgs, len); /* each message is 4-aligned already */
}

void ffbp_put_batch_exec(ffbp_writer *w, uint16_t stmt, uint16_t tx) {
    ffbp_put_i32(w, FFBP_OP_BATCH_EXEC);
    ffbp_put_i16(w, stmt);
    ffbp_put_i16(w, tx);
}

void ffbp_put_batch_regblob(ffbp_writer *w, uint16_t stmt, uint64_t existing,
                            uint64_t batch_id) {
    ffbp_put_i32(w, FFBP_OP_BATCH_REGBLOB);
    ffbp_put_i16(w, stmt);
    ffbp_put_quad(w, existing);
    ffbp_put_quad(w, batch_id);
}

/*
 * The logical stream (what the server rebuilds) and the wire form differ:
 * padding is not sent, headers are XDR, segment length words of segmented
 * blobs travel as 4-byte big-endian numbers. `logical` advances by the
 * in-memory layout: header at a multiple of 4, segment words at a multiple
 * of 2.
 */
int ffbp_put_batch_blob_stream(ffbp_writer *w, uint16_t stmt,
                               const ffbp_stream_blob *blobs, size_t n) {
    /* First pass: the logical length. */
    uint64_t logical = 0;
    for (size_t i = 0; i < n; i++) {
        const ffbp_stream_blob *b = &blobs[i];
        logical = (logical + 3) & ~(uint64_t)3;
        logical += 16 + b->bpb_len;
        if (b->segmented) {
            size_t pos = 0, len;
            const uint8_t *d;
            int rc;
            while ((rc = ffbp_segment_next(b->data, b->len, &pos, &d, &len)) ==
                   1) {
                logical = (logical + 1) & ~(uint64_t)1;
                logical += 2 + len;
            }
            if (rc < 0)
                return FFBP_EBAD;
        } else {
            logical += b->len;
        }
    }
    logical = (logical + 3) & ~(uint64_t)3;
    if (logical > 0x7FFFFFFF)
        return FFBP_EBAD;
    ffbp_put_i32(w, FFBP_OP_BATCH_BLOB_STREAM);
    ffbp_put_i16(w, stmt);
    ffbp_put_u32(w, (uint32_t)logical);
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const ffbp_stream_blob *b = &blobs[i];
        at = (at + 3) & ~(uint64_t)3;
        /* size: BPB + data, for segmented blobs with the length words and
           the 2-alignment pads in front of them. */
        uint64_t start = at + 16;
        uint64_t end = start + b->bpb_len;
        if (b->segmented) {
            size_t pos = 0, len;
            const uint8_t *d;
            while (ffbp_segment_next(b->data, b->len, &pos, &d, &len) == 1) {
                end = (end + 1) & ~(uint64_t)1;
                end += 2 + len;
            }
        } else {
            end += b->len;
        }
        ffbp_put_quad(w, b->id);
        ffbp_put_u32(w, (uint32_t)(end - start));
        ffbp_put_u32(w, (uint32_t)b->bpb_len);
        ffbp_put_raw(w, b->bpb, b->bpb_len);
        at = start + b->bpb_len;
        if (b->segmented) {
            size_t pos = 0, len;
            const uint8_t *d;
            while (ffbp_segment_next(b->data, b->len, &pos, &d, &len) == 1) {
                at = (at + 1) & ~(uint64_t)1;
                ffbp_put_u32(w, (uint32_t)len);
                ffbp_put_raw(w, d, len);
                at += 2 + len;
            }
        } else {
            ffbp_put_raw(w, b->data, b->len);
            at += b->len;
        }
    }
    return FFBP_OK;
}

static void item_layout(const ffbp_item *it, uint32_t *align, uint32_t *len) {
    switch (it->blr) {
    case FFBP_BLR_TEXT:
    case FFBP_BLR_TEXT2:
        *align = 1;
        *len = it->length;
        return;
    case FFBP_BLR_VARYING:
    case FFBP_BLR_VARYING2:
        *align = 2;
        *len = (uint32_t)it->length + 2;
        return;
    case FFBP_BLR_SHORT:
        *align = 2;
        *len = 2;
        return;
    case FFBP_BLR_BOOL:
        *align = 1;
        *len = 1;
        return;
    case FFBP_BLR_INT64:
    case FFBP_BLR_DOUBLE:
    case FFBP_BLR_D_FLOAT:
    case FFBP_BLR_DEC64:
        *align = 8;
        *len = 8;
        return;
    case FFBP_BLR_INT128:
    case FFBP_BLR_DEC128:
        *align = 8;
        *len = 16;
        return;
    case FFBP_BLR_TIMESTAMP:
    case FFBP_BLR_BLOB2:
    case FFBP_BLR_QUAD:
    case FFBP_BLR_SQL_TIME_TZ:
    case FFBP_BLR_EX_TIME_TZ:
        *align = 4;
        *len = 8;
        return;
    case FFBP_BLR_TIMESTAMP_TZ:
        *align = 4;
        *len = 12;
        return;
    case FFBP_BLR_EX_TIMESTAMP_TZ:
        *align = 4;
        *len = 16;
        return;
    default: /* LONG, FLOAT, SQL_DATE, SQL_TIME */
        *align = 4;
        *len = 4;
        return;
    }
}

uint32_t ffbp_batch_msglen(const ffbp_item *items, size_t n,
                           uint32_t *aligned) {
    uint32_t off = 0, max_align = 2;
    for (size_t i = 0; i < n; i++) {
        uint32_t a, l;
        item_layout(&items[i], &a, &l);
        if (a > max_align)
            max_align = a;
        off = (off + a - 1) & ~(a - 1);
        off += l;
        off = (off + 1) & ~(uint32_t)1;
        off += 2; /* the NULL indicator */
    }
    if (aligned)
        *aligned = (off + max_align - 1) & ~(max_align - 1);
    return off;
}

#define TRY(expr)                                                              \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ != FFBP_OK) {                                                  \
            r->pos = save;                                                     \
            return rc_;                                                        \
        }                                                                      \
    } while (0)

int ffbp_get_batch_cs_body(ffbp_reader *r, ffbp_batch_cs *out) {
    size_t save = r->pos;
    TRY(ffbp_get_u16(r, &out->stmt));
    TRY(ffbp_get_u32(r, &out->reccount));
    TRY(ffbp_get_u32(r, &out->updates));
    TRY(ffbp_get_u32(r, &out->vectors));
    TRY(ffbp_get_u32(r, &out->errors));
    /* Firebird keeps at most 256 detailed vectors (TAG_DETAILED_ERRORS);
       more would make each parse of an incomplete answer long. */
    if (out->updates > (1u << 26) || out->vectors > 256 ||
        out->errors > (1u << 26)) {
        r->pos = save;
        return FFBP_EBAD;
    }
    const uint8_t *p;
    TRY(ffbp_get_opaque(r, (size_t)out->updates * 4, &p));
    out->counts = p;
    size_t dstart = r->pos;
    size_t entries = 0;
    for (uint32_t i = 0; i < out->vectors; i++) {
        uint32_t pos;
        ffbp_status st = {NULL, 0, 0, 0};
        TRY(ffbp_get_u32(r, &pos));
        TRY(ffbp_get_status(r, &st));
        /* 8192 status entries in all: each attempt to parse an incomplete
           answer stays cheap. */
        entries += st.total;
        if (entries > 8192) {
            r->pos = save;
            return FFBP_EBAD;
        }
    }
    out->detail = r->p + dstart;
    out->detail_len = r->pos - dstart;
    TRY(ffbp_get_opaque(r, (size_t)out->errors * 4, &p));
    out->simple = p;
    return FFBP_OK;
}
