/*
 * Wire compression (docs/protocol/01-connection.md 8): one continuous zlib
 * stream per direction for the life of the connection. Implemented in
 * lib/zstream.c.
 */
#ifndef FFB_ZSTREAM_H
#define FFB_ZSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "include/fastfb.h"

typedef struct ffb__zstream ffb__zstream;

/*
 * Both directions in one object: deflateInit(Z_DEFAULT_COMPRESSION) for
 * what we send, inflateInit for what we receive. zlib's memory comes from
 * alloc when it is non-NULL (libc otherwise); the object keeps a copy of
 * *alloc. Returns 0, FFB_E_INVAL, FFB_E_NOMEM.
 */
int ffb__zstream_new(ffb__zstream **out, const ffb_allocator *alloc);

/*
 * Compress len bytes and flush with Z_SYNC_FLUSH (the output then ends in
 * 00 00 FF FF); APPEND the output at *buf + *buf_len, growing *buf and
 * *buf_cap with the object's allocator (realloc; *buf may be NULL with
 * *buf_cap 0). len 0 writes nothing. On error *buf, *buf_len and *buf_cap stay
 * consistent (the buffer may have grown, *buf_len may include output of
 * the failed call) and the direction is unusable.
 * Returns 0, FFB_E_INVAL, FFB_E_NOMEM, FFB_E_PROTO (zlib state error).
 */
int ffb__zstream_deflate(ffb__zstream *z, const uint8_t *in, size_t len,
                         uint8_t **buf, size_t *buf_len, size_t *buf_cap);

/*
 * Decompress len bytes (Z_NO_FLUSH, all input consumed) and APPEND the
 * output as above. Input may end anywhere; the rest follows in the next
 * call. Corrupt data, or a peer that ends its stream (Firebird never
 * does) -> FFB_E_PROTO, after which this direction stays failed.
 * Returns 0, FFB_E_INVAL, FFB_E_NOMEM, FFB_E_PROTO.
 */
int ffb__zstream_inflate(ffb__zstream *z, const uint8_t *in, size_t len,
                         uint8_t **buf, size_t *buf_len, size_t *buf_cap);

/*
 * As ffb__zstream_inflate, but stops once about max_out bytes (at most
 * max_out + 16 KiB) were appended, so a highly compressed input cannot
 * make one call produce unbounded output. *consumed tells how much of `in`
 * was used. Returns 0 when everything given was inflated and nothing is
 * held back, 1 when the budget stopped it (call again with the rest of the
 * input, which may be empty: zlib may still hold output), or a negative
 * code as ffb__zstream_inflate.
 */
int ffb__zstream_inflate_some(ffb__zstream *z, const uint8_t *in, size_t len,
                              size_t *consumed, size_t max_out, uint8_t **buf,
                              size_t *buf_len, size_t *buf_cap);

/* Free both streams and the object. NULL is allowed. */
void ffb__zstream_free(ffb__zstream *z);

#endif
