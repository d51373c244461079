/* Blob request encoders and segment buffers (reference 03, C.2). */
#include "proto/blob.h"

void ffbp_put_blob_open(ffbp_writer *w, int op, const uint8_t *bpb,
                        size_t bpb_len, uint16_t tx, uint64_t id) {
    ffbp_put_i32(w, op);
    /* The "2" variants carry the BPB first. */
    if (op == FFBP_OP_CREATE_BLOB2 || op == FFBP_OP_OPEN_BLOB2)
        ffbp_put_cstring(w, bpb, bpb_len);
    ffbp_put_i16(w, tx);
    ffbp_put_quad(w, id);
}

void ffbp_put_segment(ffbp_writer *w, int op, uint16_t blob, uint16_t length,
                      const uint8_t *data, size_t len) {
    ffbp_put_i32(w, op);
    ffbp_put_i16(w, blob);
    ffbp_put_i16(w, length); /* xdr_short: 65535 goes out as FF FF FF FF */
    ffbp_put_cstring(w, data, len);
}

void ffbp_put_seek_blob(ffbp_writer *w, uint16_t blob, uint16_t mode,
                        int32_t offset) {
    ffbp_put_i32(w, FFBP_OP_SEEK_BLOB);
    ffbp_put_i16(w, blob);
    ffbp_put_i16(w, mode);
    ffbp_put_i32(w, offset);
}

int ffbp_segment_next(const uint8_t *p, size_t len, size_t *pos,
                      const uint8_t **data, size_t *data_len) {
    size_t i = *pos;
    if (i >= len)
        return 0;
    if (len - i < 2)
        return FFBP_EBAD;
    size_t n = (size_t)p[i] | (size_t)p[i + 1] << 8;
    if (len - i - 2 < n)
        return FFBP_EBAD;
    *data = p + i + 2;
    *data_len = n;
    *pos = i + 2 + n;
    return 1;
}
