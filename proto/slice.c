/*
 * SDL, op_get_slice/op_put_slice and op_slice (see proto/slice.h).
 */
#include "proto/slice.h"

#include <string.h>

#include "proto/ops.h"
#include "proto/sql.h"

/* isc_sdl_* (consts_pub.h). */
enum {
    SDL_VERSION1 = 1,
    SDL_RELATION = 2,
    SDL_FIELD = 4,
    SDL_STRUCT = 6,
    SDL_VARIABLE = 7,
    SDL_SCALAR = 8,
    SDL_TINY_INTEGER = 9,
    SDL_SHORT_INTEGER = 10,
    SDL_LONG_INTEGER = 11,
    SDL_DO2 = 34,
    SDL_DO1 = 35,
    SDL_ELEMENT = 36,
    SDL_EOC = 255
};

size_t ffbp_slice_native_size(uint8_t blr, uint16_t length) {
    switch (blr) {
    case FFBP_BLR_BOOL:
        return 1;
    case FFBP_BLR_SHORT:
        return 2;
    case FFBP_BLR_LONG:
    case FFBP_BLR_FLOAT:
    case FFBP_BLR_SQL_DATE:
    case FFBP_BLR_SQL_TIME:
        return 4;
    case FFBP_BLR_INT64:
    case FFBP_BLR_DOUBLE:
    case FFBP_BLR_TIMESTAMP:
    case FFBP_BLR_DEC64:
    case FFBP_BLR_SQL_TIME_TZ: /* ISC_TIME_TZ: 4 + 2, aligned */
        return 8;
    case FFBP_BLR_TIMESTAMP_TZ: /* ISC_TIMESTAMP_TZ: 8 + 2, aligned */
        return 12;
    case FFBP_BLR_INT128:
    case FFBP_BLR_DEC128:
        return 16;
    case FFBP_BLR_TEXT:
        return length;
    case FFBP_BLR_VARYING: /* a C string of length + 2 (sdl.cpp) */
        return length ? (size_t)length + 2 : 0;
    default:
        return 0;
    }
}

static void put_literal(ffbp_writer *w, int32_t v) {
    uint8_t b[5];
    size_t n;
    if (v >= -128 && v <= 127) {
        b[0] = SDL_TINY_INTEGER;
        b[1] = (uint8_t)v;
        n = 2;
    } else if (v >= -32768 && v <= 32767) {
        b[0] = SDL_SHORT_INTEGER;
        b[1] = (uint8_t)v;
        b[2] = (uint8_t)((uint32_t)v >> 8);
        n = 3;
    } else {
        b[0] = SDL_LONG_INTEGER;
        for (int i = 0; i < 4; i++)
            b[1 + i] = (uint8_t)((uint32_t)v >> (8 * i));
        n = 5;
    }
    ffbp_put_raw(w, b, n);
}

static void put_name(ffbp_writer *w, uint8_t tag, const char *s, size_t n) {
    uint8_t h[2] = {tag, (uint8_t)n};
    ffbp_put_raw(w, h, 2);
    ffbp_put_raw(w, s, n);
}

int ffbp_put_sdl(ffbp_writer *w, const ffbp_sdl *s) {
    size_t rl = s->relation ? strlen(s->relation) : 0;
    size_t fl = s->field ? strlen(s->field) : 0;
    if (!ffbp_slice_native_size(s->blr, s->length) || s->dims == 0 ||
        s->dims > FFBP_SDL_MAX_DIMS || rl > 255 || fl > 255)
        return FFBP_EBAD;
    for (unsigned i = 0; i < s->dims; i++)
        if (s->lower[i] > s->upper[i])
            return FFBP_EBAD;
    uint8_t h[8] = {SDL_VERSION1, SDL_STRUCT, 1, s->blr};
    size_t n = 4;
    switch (s->blr) {
    case FFBP_BLR_SHORT:
    case FFBP_BLR_LONG:
    case FFBP_BLR_INT64:
    case FFBP_BLR_INT128:
        h[n++] = (uint8_t)s->scale;
        break;
    case FFBP_BLR_TEXT:
    case FFBP_BLR_VARYING:
        if (s->charset >= 0) { /* blr_text2 / blr_varying2: u16 ttype */
            h[3] = s->blr == FFBP_BLR_TEXT ? FFBP_BLR_TEXT2 : FFBP_BLR_VARYING2;
            h[n++] = (uint8_t)s->charset;
            h[n++] = (uint8_t)(s->charset >> 8);
        }
        h[n++] = (uint8_t)s->length;
        h[n++] = (uint8_t)(s->length >> 8);
        break;
    default:
        break;
    }
    ffbp_put_raw(w, h, n);
    put_name(w, SDL_RELATION, s->relation, rl);
    put_name(w, SDL_FIELD, s->field, fl);
    for (unsigned i = 0; i < s->dims; i++) {
        uint8_t d[2] = {s->lower[i] == 1 ? SDL_DO1 : SDL_DO2, (uint8_t)i};
        ffbp_put_raw(w, d, 2);
        if (s->lower[i] != 1)
            put_literal(w, s->lower[i]);
        put_literal(w, s->upper[i]);
    }
    uint8_t e[5] = {SDL_ELEMENT, 1, SDL_SCALAR, 0, (uint8_t)s->dims};
    ffbp_put_raw(w, e, 5);
    for (unsigned i = 0; i < s->dims; i++) {
        uint8_t v[2] = {SDL_VARIABLE, (uint8_t)i};
        ffbp_put_raw(w, v, 2);
    }
    uint8_t eoc = SDL_EOC;
    ffbp_put_raw(w, &eoc, 1);
    return FFBP_OK;
}

void ffbp_put_slice_request(ffbp_writer *w, int32_t op, uint16_t tx,
                            uint64_t id, uint32_t length, const uint8_t *sdl,
                            size_t sdl_len, uint32_t slice_len,
                            const uint8_t *elems, size_t elems_len) {
    ffbp_put_i32(w, op);
    ffbp_put_i16(w, tx);
    ffbp_put_quad(w, id);
    ffbp_put_u32(w, length);
    ffbp_put_cstring(w, sdl, sdl_len);
    ffbp_put_u32(w, 0); /* SDL parameters: none */
    ffbp_put_u32(w, slice_len);
    ffbp_put_raw(w, elems, elems_len); /* already padded element by element */
}

static size_t pad4(size_t n) { return (n + 3) & ~(size_t)3; }

int ffbp_slice_elem(const uint8_t *p, size_t left, uint8_t blr, uint16_t length,
                    size_t *size) {
    size_t n;
    switch (blr) {
    case FFBP_BLR_TEXT:
        n = pad4(length);
        break;
    case FFBP_BLR_VARYING: {
        if (left < 4)
            return FFBP_INCOMPLETE;
        uint32_t len = ffbp_be32_get(p);
        if (len > length)
            return FFBP_EBAD;
        n = 4 + pad4(len);
        break;
    }
    case FFBP_BLR_SQL_TIME_TZ:
        n = 8;
        break;
    case FFBP_BLR_TIMESTAMP_TZ:
        n = 12;
        break;
    default: {
        size_t ns = ffbp_slice_native_size(blr, length);
        if (!ns)
            return FFBP_EBAD;
        n = ns < 4 ? 4 : ns;
        break;
    }
    }
    if (n == 0)
        return FFBP_EBAD;
    if (left < n)
        return FFBP_INCOMPLETE;
    *size = n;
    return FFBP_OK;
}

int ffbp_get_slice(ffbp_reader *r, uint8_t blr, uint16_t length,
                   uint32_t max_count, ffbp_slice *out) {
    size_t start = r->pos;
    size_t ns = ffbp_slice_native_size(blr, length);
    int32_t op;
    uint32_t total, slen;
    int rc;
    if (!ns)
        return FFBP_EBAD;
    if ((rc = ffbp_get_i32(r, &op)) != FFBP_OK ||
        (op == FFBP_OP_SLICE && (rc = ffbp_get_u32(r, &total)) != FFBP_OK) ||
        (op == FFBP_OP_SLICE && (rc = ffbp_get_u32(r, &slen)) != FFBP_OK))
        goto fail;
    if (op != FFBP_OP_SLICE) {
        rc = FFBP_EBAD;
        goto fail;
    }
    uint32_t count = (uint32_t)(slen / ns);
    if (slen % ns || count > max_count) {
        rc = FFBP_EBAD;
        goto fail;
    }
    const uint8_t *p = r->p + r->pos;
    size_t left = ffbp_reader_left(r), used = 0;
    for (uint32_t i = 0; i < count; i++) {
        size_t n;
        if ((rc = ffbp_slice_elem(p + used, left - used, blr, length, &n)) !=
            FFBP_OK)
            goto fail;
        used += n;
    }
    r->pos += used;
    out->length = total;
    out->count = count;
    out->elems = p;
    out->elems_len = used;
    return FFBP_OK;
fail:
    r->pos = start;
    return rc;
}
