/*
 * Message formats (BLR) and the packed message encoding of protocol >= 13
 * (protocol reference 02, sections 8 and 9). Pure functions on buffers.
 */
#include "proto/sql.h"

#include <string.h>

#define TRY FFBP_TRY

/* BLR framing bytes (blr.h). */
enum {
    BLR_VERSION4 = 4,
    BLR_VERSION5 = 5,
    BLR_BEGIN = 2,
    BLR_MESSAGE = 4,
    BLR_END = 255,
    BLR_EOC = 76
};

/* Largest item count whose BLR count (2 x n) fits the 16-bit field. */
#define MAX_ITEMS 32767u

/* ---- SQL type -> item (8.3) ---------------------------------------------- */

static uint8_t plain_blr(int sqltype) {
    switch (sqltype) {
    case FFBP_SQL_FLOAT:
        return FFBP_BLR_FLOAT;
    case FFBP_SQL_DOUBLE:
        return FFBP_BLR_DOUBLE;
    case FFBP_SQL_D_FLOAT:
        return FFBP_BLR_D_FLOAT;
    case FFBP_SQL_DEC16:
        return FFBP_BLR_DEC64;
    case FFBP_SQL_DEC34:
        return FFBP_BLR_DEC128;
    case FFBP_SQL_TYPE_DATE:
        return FFBP_BLR_SQL_DATE;
    case FFBP_SQL_TYPE_TIME:
        return FFBP_BLR_SQL_TIME;
    case FFBP_SQL_TIMESTAMP:
        return FFBP_BLR_TIMESTAMP;
    case FFBP_SQL_TIME_TZ:
        return FFBP_BLR_SQL_TIME_TZ;
    case FFBP_SQL_TIME_TZ_EX:
        return FFBP_BLR_EX_TIME_TZ;
    case FFBP_SQL_TIMESTAMP_TZ:
        return FFBP_BLR_TIMESTAMP_TZ;
    case FFBP_SQL_TIMESTAMP_TZ_EX:
        return FFBP_BLR_EX_TIMESTAMP_TZ;
    case FFBP_SQL_BOOLEAN:
        return FFBP_BLR_BOOL;
    default:
        return 0;
    }
}

static uint8_t scaled_blr(int sqltype) {
    switch (sqltype) {
    case FFBP_SQL_SHORT:
        return FFBP_BLR_SHORT;
    case FFBP_SQL_LONG:
        return FFBP_BLR_LONG;
    case FFBP_SQL_INT64:
        return FFBP_BLR_INT64;
    case FFBP_SQL_INT128:
        return FFBP_BLR_INT128;
    case FFBP_SQL_QUAD:
        return FFBP_BLR_QUAD;
    default:
        return 0;
    }
}

int ffbp_item_from_sql(int sqltype, int subtype, int scale, int length,
                       ffbp_item *out) {
    ffbp_item it = {0, 0, 0, 0, 0};
    int type = sqltype & ~1;
    uint8_t code;
    if ((code = plain_blr(type)) != 0) {
        it.blr = code;
    } else if ((code = scaled_blr(type)) != 0) {
        if (scale < -128 || scale > 127)
            return FFBP_EBAD;
        it.blr = code;
        it.scale = (int8_t)scale;
    } else if (type == FFBP_SQL_TEXT || type == FFBP_SQL_VARYING) {
        if (length < 0 || length > 0xFFFF || subtype < 0 || subtype > 0xFFFF)
            return FFBP_EBAD;
        it.blr = type == FFBP_SQL_TEXT ? FFBP_BLR_TEXT2 : FFBP_BLR_VARYING2;
        it.texttype = (uint16_t)subtype;
        it.length = (uint16_t)length;
    } else if (type == FFBP_SQL_BLOB) {
        /* sub type (signed) and the charset, which the describe reports in
           sqlscale */
        if (subtype < -32768 || subtype > 32767 || scale < 0 || scale > 0xFFFF)
            return FFBP_EBAD;
        it.blr = FFBP_BLR_BLOB2;
        it.subtype = (int16_t)subtype;
        it.texttype = (uint16_t)scale;
    } else if (type == FFBP_SQL_ARRAY) {
        it.blr = FFBP_BLR_QUAD;
    } else if (type == FFBP_SQL_NULL) {
        it.blr = FFBP_BLR_TEXT; /* 0E 00 00 */
    } else {
        return FFBP_EBAD;
    }
    *out = it;
    return FFBP_OK;
}

/* ---- BLR ----------------------------------------------------------------- */

/* Shape of a type descriptor: which bytes follow the code. */
enum shape {
    SH_UNKNOWN,
    SH_PLAIN,  /* nothing */
    SH_SCALE,  /* scale (1) */
    SH_LENGTH, /* length (2) */
    SH_TEXT2,  /* texttype (2), length (2) */
    SH_BLOB2   /* subtype (2), texttype (2) */
};

static enum shape blr_shape(uint8_t code) {
    switch (code) {
    case FFBP_BLR_FLOAT:
    case FFBP_BLR_D_FLOAT:
    case FFBP_BLR_SQL_DATE:
    case FFBP_BLR_SQL_TIME:
    case FFBP_BLR_BOOL:
    case FFBP_BLR_DEC64:
    case FFBP_BLR_DEC128:
    case FFBP_BLR_DOUBLE:
    case FFBP_BLR_SQL_TIME_TZ:
    case FFBP_BLR_TIMESTAMP_TZ:
    case FFBP_BLR_EX_TIME_TZ:
    case FFBP_BLR_EX_TIMESTAMP_TZ:
    case FFBP_BLR_TIMESTAMP:
        return SH_PLAIN;
    case FFBP_BLR_SHORT:
    case FFBP_BLR_LONG:
    case FFBP_BLR_QUAD:
    case FFBP_BLR_INT64:
    case FFBP_BLR_INT128:
        return SH_SCALE;
    case FFBP_BLR_TEXT:
    case FFBP_BLR_VARYING:
        return SH_LENGTH;
    case FFBP_BLR_TEXT2:
    case FFBP_BLR_VARYING2:
        return SH_TEXT2;
    case FFBP_BLR_BLOB2:
        return SH_BLOB2;
    default:
        return SH_UNKNOWN;
    }
}

static size_t put_le16(uint8_t *b, uint16_t v) {
    b[0] = (uint8_t)(v & 0xFF);
    b[1] = (uint8_t)(v >> 8);
    return 2;
}

/*
 * Layout (8.1): blr_version5, blr_begin, blr_message, message number 0,
 * count (2 x n, LE16), n x {type descriptor, blr_short 0}, blr_end,
 * blr_eoc.
 */
int ffbp_put_blr(ffbp_writer *w, const ffbp_item *items, size_t n) {
    if (n == 0)
        return FFBP_OK;
    if (n > MAX_ITEMS)
        return FFBP_EBAD;
    for (size_t i = 0; i < n; i++)
        if (blr_shape(items[i].blr) == SH_UNKNOWN)
            return FFBP_EBAD;
    uint8_t b[8] = {BLR_VERSION5, BLR_BEGIN, BLR_MESSAGE, 0};
    size_t k = 4 + put_le16(b + 4, (uint16_t)(2 * n));
    ffbp_put_raw(w, b, k);
    for (size_t i = 0; i < n; i++) {
        const ffbp_item *it = &items[i];
        k = 0;
        b[k++] = it->blr;
        switch (blr_shape(it->blr)) {
        case SH_SCALE:
            b[k++] = (uint8_t)it->scale;
            break;
        case SH_LENGTH:
            k += put_le16(b + k, it->length);
            break;
        case SH_TEXT2:
            k += put_le16(b + k, it->texttype);
            k += put_le16(b + k, it->length);
            break;
        case SH_BLOB2:
            k += put_le16(b + k, (uint16_t)it->subtype);
            k += put_le16(b + k, it->texttype);
            break;
        default:
            break;
        }
        b[k++] = FFBP_BLR_SHORT; /* null indicator */
        b[k++] = 0;
        ffbp_put_raw(w, b, k);
    }
    b[0] = BLR_END;
    b[1] = BLR_EOC;
    ffbp_put_raw(w, b, 2);
    return FFBP_OK;
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

int ffbp_parse_blr(const uint8_t *blr, size_t len, ffbp_item *items,
                   size_t cap) {
    if (len == 0)
        return 0;
    if (len < 8 || (blr[0] != BLR_VERSION4 && blr[0] != BLR_VERSION5) ||
        blr[1] != BLR_BEGIN || blr[2] != BLR_MESSAGE)
        return FFBP_EBAD;
    size_t count = le16(blr + 4);
    if (count & 1)
        return FFBP_EBAD;
    size_t n = count / 2;
    size_t pos = 6;
    for (size_t i = 0; i < n; i++) {
        ffbp_item it = {0, 0, 0, 0, 0};
        if (pos >= len)
            return FFBP_EBAD;
        it.blr = blr[pos++];
        size_t need;
        switch (blr_shape(it.blr)) {
        case SH_PLAIN:
            need = 0;
            break;
        case SH_SCALE:
            need = 1;
            break;
        case SH_LENGTH:
            need = 2;
            break;
        case SH_TEXT2:
        case SH_BLOB2:
            need = 4;
            break;
        default:
            return FFBP_EBAD;
        }
        if (len - pos < need + 2)
            return FFBP_EBAD;
        const uint8_t *d = blr + pos;
        switch (blr_shape(it.blr)) {
        case SH_SCALE:
            it.scale = (int8_t)d[0];
            break;
        case SH_LENGTH:
            it.length = le16(d);
            break;
        case SH_TEXT2:
            it.texttype = le16(d);
            it.length = le16(d + 2);
            break;
        case SH_BLOB2:
            it.subtype = (int16_t)le16(d);
            it.texttype = le16(d + 2);
            break;
        default:
            break;
        }
        pos += need;
        if (blr[pos] != FFBP_BLR_SHORT || blr[pos + 1] != 0)
            return FFBP_EBAD;
        pos += 2;
        if (i < cap)
            items[i] = it;
    }
    if (len - pos != 2 || blr[pos] != BLR_END || blr[pos + 1] != BLR_EOC)
        return FFBP_EBAD;
    return (int)n;
}

size_t ffbp_item_wire_size(const ffbp_item *it) {
    switch (it->blr) {
    case FFBP_BLR_BOOL:
        return 1;
    case FFBP_BLR_SHORT: /* xdr_short: 4 bytes */
    case FFBP_BLR_LONG:
    case FFBP_BLR_FLOAT:
    case FFBP_BLR_SQL_DATE:
    case FFBP_BLR_SQL_TIME:
        return 4;
    case FFBP_BLR_QUAD:
    case FFBP_BLR_D_FLOAT:
    case FFBP_BLR_INT64:
    case FFBP_BLR_BLOB2:
    case FFBP_BLR_DEC64:
    case FFBP_BLR_DOUBLE:
    case FFBP_BLR_SQL_TIME_TZ:
    case FFBP_BLR_TIMESTAMP:
        return 8;
    case FFBP_BLR_TIMESTAMP_TZ:
    case FFBP_BLR_EX_TIME_TZ:
        return 12;
    case FFBP_BLR_DEC128:
    case FFBP_BLR_INT128:
    case FFBP_BLR_EX_TIMESTAMP_TZ:
        return 16;
    case FFBP_BLR_TEXT:
    case FFBP_BLR_TEXT2:
        return it->length;
    case FFBP_BLR_VARYING:
    case FFBP_BLR_VARYING2:
        return 4 + (size_t)it->length;
    default:
        return 0;
    }
}

size_t ffbp_message_wire_max(const ffbp_item *items, size_t n) {
    size_t total = n ? ((n + 7) / 8 + 3) & ~(size_t)3 : 0;
    for (size_t i = 0; i < n; i++)
        total += (ffbp_item_wire_size(&items[i]) + 3) & ~(size_t)3;
    return total;
}

/* ---- messages (9.1, 9.2) ------------------------------------------------- */

static int get_value(ffbp_reader *r, const ffbp_item *it, size_t base,
                     uint32_t *off, uint32_t *len) {
    const uint8_t *p;
    size_t start = r->pos;
    size_t n;
    if (it->blr == FFBP_BLR_VARYING || it->blr == FFBP_BLR_VARYING2) {
        uint32_t k;
        TRY(ffbp_get_u32(r, &k));
        if (k > it->length)
            return FFBP_EBAD;
        n = k;
        start = r->pos;
    } else {
        n = ffbp_item_wire_size(it);
        if (n == 0 && it->blr != FFBP_BLR_TEXT && it->blr != FFBP_BLR_TEXT2)
            return FFBP_EBAD; /* unknown BLR code */
    }
    TRY(ffbp_get_opaque(r, n, &p));
    if (start - base > UINT32_MAX - 1)
        return FFBP_EBAD;
    *off = (uint32_t)(start - base);
    *len = (uint32_t)n;
    return FFBP_OK;
}

/*
 * Layout (protocol >= 13): opaque null bitmap of ceil(n / 8) bytes (bit i
 * set = item i NULL, LSB first) padded to 4, then the value of every
 * non-NULL item in order, each padded to 4: fixed types in their XDR form,
 * TEXT as opaque(length), VARYING as int32 k (<= length) + opaque(k).
 */
static int get_message(ffbp_reader *r, const ffbp_item *items, size_t n,
                       uint32_t *off, uint32_t *len) {
    size_t base = r->pos;
    const uint8_t *bitmap = NULL;
    if (n > 0) /* no bitmap, and no pointer arithmetic, for 0 items */
        TRY(ffbp_get_opaque(r, (n + 7) / 8, &bitmap));
    for (size_t i = 0; i < n; i++) {
        uint32_t o = FFBP_NULL_OFFSET, l = 0;
        if (!(bitmap[i >> 3] & (1u << (i & 7))))
            TRY(get_value(r, &items[i], base, &o, &l));
        if (off)
            off[i] = o;
        if (len)
            len[i] = l;
    }
    return FFBP_OK;
}

int ffbp_get_message(ffbp_reader *r, const ffbp_item *items, size_t n,
                     uint32_t *off, uint32_t *len, const uint8_t **msg_out,
                     size_t *msg_len_out) {
    size_t save = r->pos;
    int rc = get_message(r, items, n, off, len);
    if (rc != FFBP_OK) {
        r->pos = save;
        return rc;
    }
    if (msg_out) /* an empty message may come from an empty reader */
        *msg_out = r->p ? r->p + save : NULL;
    if (msg_len_out)
        *msg_len_out = r->pos - save;
    return FFBP_OK;
}

size_t ffbp_msg_begin(ffbp_writer *w, size_t n) {
    static const uint8_t zeros[64];
    size_t pos = w->len;
    size_t left = (n + 7) / 8;
    left += ffbp_pad(left);
    while (left > 0) {
        size_t k = left < sizeof(zeros) ? left : sizeof(zeros);
        ffbp_put_raw(w, zeros, k);
        left -= k;
    }
    return pos;
}

void ffbp_msg_set_null(ffbp_writer *w, size_t bitmap_pos, size_t i) {
    size_t at = bitmap_pos + i / 8;
    if (at < bitmap_pos || at >= w->len || !w->data)
        return;
    w->data[at] |= (uint8_t)(1u << (i & 7));
}
