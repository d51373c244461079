/*
 * Wire compression, docs/protocol/01-connection.md 8: zlib format (RFC
 * 1950), deflateInit(Z_DEFAULT_COMPRESSION) / inflateInit, one stream per
 * direction that is never finished, Z_SYNC_FLUSH after each send, Z_NO_FLUSH
 * on receive.
 */
#include "lib/zstream.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

/* Free space we ask for before each zlib call. */
#define OUT_STEP 16384

struct ffb__zstream {
    ffb_allocator alloc;
    int has_alloc;
    int def_ready;
    int inf_ready;
    int def_failed;
    int inf_failed;
    z_stream def;
    z_stream inf;
};

static void *mem_alloc(const ffb__zstream *z, size_t size) {
    return z->has_alloc ? z->alloc.malloc(size, z->alloc.data) : malloc(size);
}

static void *mem_realloc(const ffb__zstream *z, void *p, size_t size) {
    if (p == NULL)
        return mem_alloc(z, size);
    return z->has_alloc ? z->alloc.realloc(p, size, z->alloc.data)
                        : realloc(p, size);
}

static void mem_free(const ffb__zstream *z, void *p) {
    if (z->has_alloc)
        z->alloc.free(p, z->alloc.data);
    else
        free(p);
}

static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
    const ffb__zstream *z = opaque;
    if (size != 0 && items > SIZE_MAX / size)
        return Z_NULL;
    return mem_alloc(z, (size_t)items * size);
}

static void z_free(voidpf opaque, voidpf p) { mem_free(opaque, p); }

int ffb__zstream_new(ffb__zstream **out, const ffb_allocator *alloc) {
    ffb__zstream *z;
    int ret;

    if (out == NULL)
        return FFB_E_INVAL;
    if (alloc != NULL && (alloc->malloc == NULL || alloc->realloc == NULL ||
                          alloc->free == NULL))
        return FFB_E_INVAL;
    z = alloc != NULL ? alloc->malloc(sizeof(*z), alloc->data)
                      : malloc(sizeof(*z));
    if (z == NULL)
        return FFB_E_NOMEM;
    memset(z, 0, sizeof(*z));
    if (alloc != NULL) {
        z->alloc = *alloc;
        z->has_alloc = 1;
        z->def.zalloc = z_alloc;
        z->def.zfree = z_free;
        z->def.opaque = z;
        z->inf.zalloc = z_alloc;
        z->inf.zfree = z_free;
        z->inf.opaque = z;
    }
    ret = deflateInit(&z->def, Z_DEFAULT_COMPRESSION);
    if (ret != Z_OK)
        goto fail;
    z->def_ready = 1;
    ret = inflateInit(&z->inf);
    if (ret != Z_OK)
        goto fail;
    z->inf_ready = 1;
    *out = z;
    return 0;

fail:
    ffb__zstream_free(z);
    return ret == Z_MEM_ERROR ? FFB_E_NOMEM : FFB_E_PROTO;
}

void ffb__zstream_free(ffb__zstream *z) {
    if (z == NULL)
        return;
    if (z->def_ready)
        deflateEnd(&z->def);
    if (z->inf_ready)
        inflateEnd(&z->inf);
    mem_free(z, z);
}

/* Make room for at least `need` more bytes after *buf_len. */
static int reserve(const ffb__zstream *z, uint8_t **buf, size_t *buf_len,
                   size_t *buf_cap, size_t need) {
    size_t cap = *buf_cap;
    uint8_t *p;

    if (cap - *buf_len >= need)
        return 0;
    if (need > SIZE_MAX - *buf_len)
        return FFB_E_NOMEM;
    if (cap < 256)
        cap = 256;
    while (cap - *buf_len < need) {
        if (cap > SIZE_MAX / 2) {
            cap = *buf_len + need;
            break;
        }
        cap *= 2;
    }
    p = mem_realloc(z, *buf, cap);
    if (p == NULL)
        return FFB_E_NOMEM;
    *buf = p;
    *buf_cap = cap;
    return 0;
}

static int check_buf(uint8_t **buf, size_t *buf_len, size_t *buf_cap) {
    if (buf == NULL || buf_len == NULL || buf_cap == NULL ||
        *buf_len > *buf_cap || (*buf == NULL && *buf_cap != 0))
        return FFB_E_INVAL;
    return 0;
}

/* Point strm's output at the free part of the buffer (at most UINT_MAX). */
static void set_out(z_stream *s, uint8_t *buf, size_t buf_len, size_t buf_cap) {
    size_t room = buf_cap - buf_len;
    s->next_out = buf + buf_len;
    s->avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
}

int ffb__zstream_deflate(ffb__zstream *z, const uint8_t *in, size_t len,
                         uint8_t **buf, size_t *buf_len, size_t *buf_cap) {
    int rc;

    if (z == NULL || (in == NULL && len != 0))
        return FFB_E_INVAL;
    rc = check_buf(buf, buf_len, buf_cap);
    if (rc != 0)
        return rc;
    if (z->def_failed)
        return FFB_E_PROTO;
    if (len == 0)
        return 0;

    while (len > 0) {
        uInt chunk = len > UINT_MAX ? UINT_MAX : (uInt)len;
        int flush = chunk == len ? Z_SYNC_FLUSH : Z_NO_FLUSH;
        /* zlib's const-incorrect next_in (without ZLIB_CONST). */
        z->def.next_in = (Bytef *)(uintptr_t)in;
        z->def.avail_in = chunk;
        for (;;) {
            int ret;
            size_t before;
            rc = reserve(z, buf, buf_len, buf_cap,
                         z->def.avail_in / 2 + OUT_STEP);
            if (rc != 0)
                goto fail;
            set_out(&z->def, *buf, *buf_len, *buf_cap);
            before = z->def.avail_out;
            ret = deflate(&z->def, flush);
            *buf_len += before - z->def.avail_out;
            if (ret == Z_BUF_ERROR) {
                /* No progress possible: everything is out. */
                if (z->def.avail_in == 0)
                    break;
                rc = FFB_E_PROTO;
                goto fail;
            }
            if (ret != Z_OK) {
                rc = FFB_E_PROTO;
                goto fail;
            }
            if (z->def.avail_in == 0 && z->def.avail_out != 0)
                break;
        }
        in += chunk;
        len -= chunk;
    }
    return 0;

fail:
    z->def_failed = 1;
    return rc;
}

int ffb__zstream_inflate_some(ffb__zstream *z, const uint8_t *in, size_t len,
                              size_t *consumed, size_t max_out, uint8_t **buf,
                              size_t *buf_len, size_t *buf_cap) {
    int rc;

    *consumed = 0;
    if (z == NULL || (in == NULL && len != 0))
        return FFB_E_INVAL;
    rc = check_buf(buf, buf_len, buf_cap);
    if (rc != 0)
        return rc;
    if (z->inf_failed)
        return FFB_E_PROTO;

    size_t produced = 0;
    for (;;) {
        uInt chunk = len > UINT_MAX ? UINT_MAX : (uInt)len;
        z->inf.next_in = (Bytef *)(uintptr_t)in;
        z->inf.avail_in = chunk;
        /* At most one step of output per inflate call, so a small input
           cannot make one call produce unbounded output. */
        rc = reserve(z, buf, buf_len, buf_cap, OUT_STEP);
        if (rc != 0)
            goto fail;
        set_out(&z->inf, *buf, *buf_len, *buf_cap);
        if (z->inf.avail_out > OUT_STEP)
            z->inf.avail_out = OUT_STEP;
        uInt before = z->inf.avail_out;
        int ret = inflate(&z->inf, Z_NO_FLUSH);
        size_t out = before - z->inf.avail_out;
        size_t used = chunk - z->inf.avail_in;
        *buf_len += out;
        produced += out;
        in += used;
        len -= used;
        *consumed += used;
        if (ret == Z_MEM_ERROR) {
            rc = FFB_E_NOMEM;
            goto fail;
        }
        if (ret == Z_BUF_ERROR && used == 0 && out == 0) {
            if (len == 0)
                return 0; /* all consumed, nothing pending */
            rc = FFB_E_PROTO;
            goto fail;
        }
        if (ret != Z_OK && ret != Z_BUF_ERROR) {
            /* Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_END (the peer finished
               a stream that must stay open), ... */
            rc = FFB_E_PROTO;
            goto fail;
        }
        /* Output space left over: zlib holds nothing back. */
        if (z->inf.avail_out != 0 && len == 0)
            return 0;
        if (produced >= max_out)
            return 1; /* budget reached: call again (maybe with no input) */
    }

fail:
    z->inf_failed = 1;
    return rc;
}

int ffb__zstream_inflate(ffb__zstream *z, const uint8_t *in, size_t len,
                         uint8_t **buf, size_t *buf_len, size_t *buf_cap) {
    while (len > 0) {
        size_t used;
        int rc = ffb__zstream_inflate_some(z, in, len, &used, SIZE_MAX, buf,
                                           buf_len, buf_cap);
        if (rc < 0)
            return rc;
        in += used;
        len -= used;
        if (rc == 0)
            break;
    }
    return z == NULL ? FFB_E_INVAL : 0;
}
