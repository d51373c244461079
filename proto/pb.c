/* Parameter blocks (clumplets) and info buffers; reference 01, 1.3. */
#include "proto/proto.h"

#include <string.h>

void ffbp_pb_begin(ffbp_pb *pb, ffbp_writer *w, int kind) {
    pb->w = w;
    pb->kind = kind;
    pb->bad = 0;
    if (kind == FFBP_PB_V1 || kind == FFBP_PB_V2) {
        uint8_t v = (uint8_t)kind;
        ffbp_put_raw(w, &v, 1);
    }
}

void ffbp_pb_bytes(ffbp_pb *pb, uint8_t tag, const void *p, size_t len) {
    if (pb->kind == FFBP_PB_V2) {
        if (len > UINT32_MAX) {
            pb->bad = 1;
            return;
        }
        uint8_t h[5] = {tag, (uint8_t)len, (uint8_t)(len >> 8),
                        (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
        ffbp_put_raw(pb->w, h, 5);
    } else {
        if (len > 255) {
            pb->bad = 1;
            return;
        }
        uint8_t h[2] = {tag, (uint8_t)len};
        ffbp_put_raw(pb->w, h, 2);
    }
    ffbp_put_raw(pb->w, p, len);
}

void ffbp_pb_str(ffbp_pb *pb, uint8_t tag, const char *s) {
    ffbp_pb_bytes(pb, tag, s, s ? strlen(s) : 0);
}

void ffbp_pb_int(ffbp_pb *pb, uint8_t tag, int32_t v) {
    uint32_t u = (uint32_t)v;
    uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16),
                    (uint8_t)(u >> 24)};
    ffbp_pb_bytes(pb, tag, b, 4);
}

void ffbp_pb_flag(ffbp_pb *pb, uint8_t tag) { ffbp_pb_bytes(pb, tag, NULL, 0); }

int ffbp_pb_next(const uint8_t *p, size_t len, int kind, size_t *pos,
                 uint8_t *tag, const uint8_t **data, size_t *data_len) {
    size_t i = *pos;
    if (i == 0 && (kind == FFBP_PB_V1 || kind == FFBP_PB_V2)) {
        if (len == 0)
            return 0;
        if (p[0] != (uint8_t)kind)
            return FFBP_EBAD;
        i = 1;
    }
    if (i >= len)
        return 0;
    size_t hdr = kind == FFBP_PB_V2 ? 5 : 2;
    if (len - i < hdr)
        return FFBP_EBAD;
    size_t n = kind == FFBP_PB_V2 ? ffbp_le_u32(p + i + 1, 4) : p[i + 1];
    if (len - i - hdr < n)
        return FFBP_EBAD;
    *tag = p[i];
    *data = p + i + hdr;
    *data_len = n;
    *pos = i + hdr + n;
    return 1;
}

int ffbp_info_next(const uint8_t *p, size_t len, size_t *pos, uint8_t *item,
                   const uint8_t **data, size_t *data_len) {
    size_t i = *pos;
    if (i >= len)
        return 0;
    uint8_t it = p[i];
    if (it == FFBP_INFO_END)
        return 0;
    if (it == FFBP_INFO_TRUNCATED) {
        *item = it;
        *data = NULL;
        *data_len = 0;
        *pos = len;
        return 1;
    }
    if (len - i < 3)
        return FFBP_EBAD;
    size_t n = (size_t)p[i + 1] | (size_t)p[i + 2] << 8;
    if (len - i - 3 < n)
        return FFBP_EBAD;
    *item = it;
    *data = p + i + 3;
    *data_len = n;
    *pos = i + 3 + n;
    return 1;
}
