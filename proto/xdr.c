#include "proto/xdr.h"

#include <stdlib.h>
#include <string.h>

/* n more bytes are needed at the cursor. */
static int short_by(ffbp_reader *r, size_t n) {
    size_t want = r->pos + n < r->pos ? SIZE_MAX : r->pos + n;
    if (want > r->need)
        r->need = want;
    return FFBP_INCOMPLETE;
}

static uint32_t load_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

int ffbp_get_u32(ffbp_reader *r, uint32_t *out) {
    if (ffbp_reader_left(r) < 4)
        return short_by(r, 4);
    *out = load_be32(r->p + r->pos);
    r->pos += 4;
    return FFBP_OK;
}

int ffbp_get_i32(ffbp_reader *r, int32_t *out) {
    uint32_t v;
    int rc = ffbp_get_u32(r, &v);
    if (rc == FFBP_OK)
        *out = (int32_t)v;
    return rc;
}

int ffbp_get_u16(ffbp_reader *r, uint16_t *out) {
    uint32_t v;
    int rc = ffbp_get_u32(r, &v);
    if (rc == FFBP_OK)
        *out = (uint16_t)(v & 0xFFFFu);
    return rc;
}

int ffbp_get_i64(ffbp_reader *r, int64_t *out) {
    if (ffbp_reader_left(r) < 8)
        return short_by(r, 8);
    uint64_t hi = load_be32(r->p + r->pos);
    uint64_t lo = load_be32(r->p + r->pos + 4);
    *out = (int64_t)(hi << 32 | lo);
    r->pos += 8;
    return FFBP_OK;
}

int ffbp_get_quad(ffbp_reader *r, uint64_t *out) {
    int64_t v;
    int rc = ffbp_get_i64(r, &v);
    if (rc == FFBP_OK)
        *out = (uint64_t)v;
    return rc;
}

int ffbp_get_opaque(ffbp_reader *r, size_t len, const uint8_t **out) {
    size_t total = len + ffbp_pad(len);
    if (total < len)
        return FFBP_EBAD;
    if (ffbp_reader_left(r) < total)
        return short_by(r, total);
    *out = r->p ? r->p + r->pos : NULL; /* an empty reader may have no bytes */
    r->pos += total;
    return FFBP_OK;
}

int ffbp_get_cstring(ffbp_reader *r, uint32_t max, ffbp_bytes *out) {
    size_t save = r->pos;
    uint32_t len;
    int rc = ffbp_get_u32(r, &len);
    if (rc != FFBP_OK)
        return rc;
    /* Old peers sign-extended 16-bit lengths (fixupLength). */
    if ((len & 0xFFFF0000u) == 0xFFFF0000u)
        len &= 0xFFFFu;
    if (len > max || len > FFBP_MAX_CSTRING) {
        r->pos = save;
        return FFBP_EBAD;
    }
    const uint8_t *p;
    rc = ffbp_get_opaque(r, len, &p);
    if (rc != FFBP_OK) {
        r->pos = save;
        return rc;
    }
    out->p = p;
    out->len = len;
    return FFBP_OK;
}

int ffbp_skip(ffbp_reader *r, size_t n) {
    if (ffbp_reader_left(r) < n)
        return short_by(r, n);
    r->pos += n;
    return FFBP_OK;
}

/* ---- writer ----------------------------------------------------------- */

static void *w_realloc(const ffb_allocator *a, void *p, size_t n) {
    if (a)
        return a->realloc(p, n, a->data);
    return realloc(p, n);
}

void ffbp_writer_init(ffbp_writer *w, const ffb_allocator *alloc) {
    memset(w, 0, sizeof(*w));
    w->alloc = alloc;
}

void ffbp_writer_init_buf(ffbp_writer *w, const ffb_allocator *alloc,
                          void *buf, size_t cap) {
    memset(w, 0, sizeof(*w));
    w->alloc = alloc;
    w->data = buf;
    w->cap = cap;
    w->borrowed = 1;
}

/* Called through a volatile pointer so the stores are not optimised away
   as dead. */
static void *(*volatile wipe_memset)(void *, int, size_t) = memset;

void ffbp_wipe(void *p, size_t n) {
    if (p && n)
        wipe_memset(p, 0, n);
}

static void w_free(const ffb_allocator *a, void *p) {
    if (a)
        a->free(p, a->data);
    else
        free(p);
}

void ffbp_writer_free(ffbp_writer *w) {
    if (w->data && w->secret)
        ffbp_wipe(w->data, w->cap);
    if (w->data && !w->borrowed)
        w_free(w->alloc, w->data);
    w->data = NULL;
    w->len = w->cap = 0;
    w->borrowed = 0;
}

int ffbp_writer_reserve(ffbp_writer *w, size_t n) {
    if (w->failed)
        return FFB_E_NOMEM;
    if (w->cap - w->len >= n)
        return 0;
    size_t need = w->len + n;
    if (need < w->len) {
        w->failed = 1;
        return FFB_E_NOMEM;
    }
    size_t cap = w->cap ? w->cap : 256;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    uint8_t *p;
    if (w->borrowed) {
        /* Out of the caller's buffer: to the heap (the buffer stays). */
        p = w_realloc(w->alloc, NULL, cap);
        if (p) {
            memcpy(p, w->data, w->len);
            if (w->secret)
                ffbp_wipe(w->data, w->cap);
            w->borrowed = 0;
        }
    } else if (w->secret && w->data) {
        /* Move by hand so the old block is wiped before it is freed. */
        p = w_realloc(w->alloc, NULL, cap);
        if (p) {
            memcpy(p, w->data, w->len);
            ffbp_wipe(w->data, w->cap);
            w_free(w->alloc, w->data);
        }
    } else {
        p = w_realloc(w->alloc, w->data, cap);
    }
    if (!p) {
        w->failed = 1;
        return FFB_E_NOMEM;
    }
    w->data = p;
    w->cap = cap;
    return 0;
}

void ffbp_writer_consume(ffbp_writer *w, size_t n) {
    if (n >= w->len) {
        w->len = 0;
        return;
    }
    memmove(w->data, w->data + n, w->len - n);
    w->len -= n;
}

void ffbp_put_raw(ffbp_writer *w, const void *p, size_t len) {
    if (len == 0 || ffbp_writer_reserve(w, len) != 0)
        return;
    memcpy(w->data + w->len, p, len);
    w->len += len;
}

void ffbp_put_u32(ffbp_writer *w, uint32_t v) {
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
                    (uint8_t)v};
    ffbp_put_raw(w, b, 4);
}

void ffbp_put_i32(ffbp_writer *w, int32_t v) { ffbp_put_u32(w, (uint32_t)v); }

void ffbp_put_i16(ffbp_writer *w, uint16_t v) {
    ffbp_put_i32(w, (int32_t)(int16_t)v);
}

void ffbp_put_u16(ffbp_writer *w, uint16_t v) { ffbp_put_u32(w, v); }

void ffbp_put_i64(ffbp_writer *w, int64_t v) {
    ffbp_put_u32(w, (uint32_t)((uint64_t)v >> 32));
    ffbp_put_u32(w, (uint32_t)(uint64_t)v);
}

void ffbp_put_quad(ffbp_writer *w, uint64_t v) { ffbp_put_i64(w, (int64_t)v); }

void ffbp_put_opaque(ffbp_writer *w, const void *p, size_t len) {
    static const uint8_t zeros[4] = {0, 0, 0, 0};
    ffbp_put_raw(w, p, len);
    ffbp_put_raw(w, zeros, ffbp_pad(len));
}

void ffbp_put_cstring(ffbp_writer *w, const void *p, size_t len) {
    ffbp_put_u32(w, (uint32_t)len);
    ffbp_put_opaque(w, p, len);
}

int64_t ffbp_le_int(const uint8_t *p, size_t n) {
    if (n == 0 || n > 8)
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    if (n < 8 && (p[n - 1] & 0x80))
        v |= ~(uint64_t)0 << (8 * n);
    return (int64_t)v;
}
