/*
 * XDR primitives: a bounds-checked reader over a byte span and a growing
 * writer. Firebird's XDR is big-endian with every item padded to 4 bytes;
 * 16-bit values travel as 4 bytes (xdr_short sign-extended, xdr_u_short
 * zero-extended). See shared protocol reference 01, section 1.2.
 *
 * Readers never read past `len`. A getter returns FFBP_OK and advances, or
 * FFBP_INCOMPLETE (not enough bytes yet, cursor untouched) or FFBP_EBAD
 * (malformed, e.g. a length over its limit). Packet decoders save the
 * cursor and restore it on anything but success, so decoding is
 * all-or-nothing.
 */
#ifndef FFB_PROTO_XDR_H
#define FFB_PROTO_XDR_H

#include <stddef.h>
#include <stdint.h>

#include "include/fastfb.h"

enum { FFBP_OK = 0, FFBP_INCOMPLETE = 1, FFBP_EBAD = -1 };

/* Largest counted string we accept from the wire (Firebird packets never
   carry a single field above this; 64 MiB). */
#define FFBP_MAX_CSTRING (64u * 1024u * 1024u)

typedef struct ffbp_reader {
    const uint8_t *p;
    size_t len;
    size_t pos;
    /* After FFBP_INCOMPLETE: the reader needs at least this many bytes
       (from p) before the same decode can get further. A lower bound on
       the length of what is being decoded, so the caller may wait for that
       much before trying again. */
    size_t need;
} ffbp_reader;

/* A view into the reader's bytes. */
typedef struct ffbp_bytes {
    const uint8_t *p;
    uint32_t len;
} ffbp_bytes;

static inline void ffbp_reader_init(ffbp_reader *r, const uint8_t *p,
                                    size_t len) {
    r->p = p;
    r->len = len;
    r->pos = 0;
    r->need = 0;
}

static inline size_t ffbp_reader_left(const ffbp_reader *r) {
    return r->len - r->pos;
}

int ffbp_get_i32(ffbp_reader *r, int32_t *out);
int ffbp_get_u32(ffbp_reader *r, uint32_t *out);
/* xdr_short / xdr_u_short: 4 bytes on the wire, low 16 bits kept. */
int ffbp_get_u16(ffbp_reader *r, uint16_t *out);
int ffbp_get_i64(ffbp_reader *r, int64_t *out);
/* xdr_quad (blob id): high int32 then low int32, returned as one uint64. */
int ffbp_get_quad(ffbp_reader *r, uint64_t *out);
/* Fixed-length opaque: len bytes plus padding to 4. */
int ffbp_get_opaque(ffbp_reader *r, size_t len, const uint8_t **out);
/* Counted string: uint32 length (with Firebird's 16-bit sign fix-up),
   bytes, padding. Fails with FFBP_EBAD above `max`. */
int ffbp_get_cstring(ffbp_reader *r, uint32_t max, ffbp_bytes *out);
/* Skip n raw bytes (no padding). */
int ffbp_skip(ffbp_reader *r, size_t n);

/* Padding after `len` bytes of opaque data. */
static inline size_t ffbp_pad(size_t len) { return (4 - (len & 3)) & 3; }

/* Big-endian fixed-width values in a buffer (message fields, blob ids,
   the op code in front of a packet). */
static inline void ffbp_be32_put(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint32_t ffbp_be32_get(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

static inline void ffbp_be64_put(uint8_t *p, uint64_t v) {
    ffbp_be32_put(p, (uint32_t)(v >> 32));
    ffbp_be32_put(p + 4, (uint32_t)v);
}

static inline uint64_t ffbp_be64_get(const uint8_t *p) {
    return (uint64_t)ffbp_be32_get(p) << 32 | ffbp_be32_get(p + 4);
}

typedef struct ffbp_writer {
    uint8_t *data;
    size_t len;
    size_t cap;
    const ffb_allocator *alloc; /* NULL = libc */
    int failed;                 /* sticky: an allocation failed */
    int secret;                 /* holds secrets: bytes are wiped when the
                                   buffer moves or is freed */
    int borrowed;               /* data is the caller's (ffbp_writer_init_buf),
                                   not freed; growing moves to the heap */
} ffbp_writer;

/* Return the code of a decoder step that did not succeed. */
#define FFBP_TRY(expr)                                                         \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ != FFBP_OK)                                                    \
            return rc_;                                                        \
    } while (0)

/* Overwrite n bytes with zeros in a way the compiler keeps. */
void ffbp_wipe(void *p, size_t n);

void ffbp_writer_init(ffbp_writer *w, const ffb_allocator *alloc);
/* A writer that starts in the caller's `buf` (`cap` bytes, e.g. on the
   stack) and moves to the allocator only when that is too small: for a
   packet that is encoded, queued (copied) and freed at once, so the
   common case allocates nothing. Never hand its buffer on. */
void ffbp_writer_init_buf(ffbp_writer *w, const ffb_allocator *alloc,
                          void *buf, size_t cap);
void ffbp_writer_free(ffbp_writer *w);
/* Make room for `n` more bytes; 0 or FFB_E_NOMEM (and failed is set). */
int ffbp_writer_reserve(ffbp_writer *w, size_t n);
/* Drop the first n bytes (consumed output). */
void ffbp_writer_consume(ffbp_writer *w, size_t n);
static inline void ffbp_writer_reset(ffbp_writer *w) { w->len = 0; }

void ffbp_put_i32(ffbp_writer *w, int32_t v);
void ffbp_put_u32(ffbp_writer *w, uint32_t v);
/* xdr_short: sign-extended (0xFFFF goes out as FF FF FF FF). */
void ffbp_put_i16(ffbp_writer *w, uint16_t v);
/* xdr_u_short: zero-extended. */
void ffbp_put_u16(ffbp_writer *w, uint16_t v);
void ffbp_put_i64(ffbp_writer *w, int64_t v);
void ffbp_put_quad(ffbp_writer *w, uint64_t v);
void ffbp_put_opaque(ffbp_writer *w, const void *p, size_t len);
void ffbp_put_cstring(ffbp_writer *w, const void *p, size_t len);
void ffbp_put_raw(ffbp_writer *w, const void *p, size_t len);

/* Little-endian helpers for parameter blocks and info buffers. */
static inline uint32_t ffbp_le_u32(const uint8_t *p, size_t n) {
    uint32_t v = 0;
    for (size_t i = 0; i < n && i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}
/* Sign-extending little-endian integer of 1..8 bytes (info buffers). */
int64_t ffbp_le_int(const uint8_t *p, size_t n);

#endif
