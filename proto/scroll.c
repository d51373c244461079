/*
 * op_fetch_scroll and the op_info_cursor answer (reference 03, C.8.2 and
 * C.8.3; src/remote/protocol.cpp xdr_protocol, case op_fetch_scroll).
 */
#include "proto/scroll.h"

#include "proto/ops.h"

void ffbp_put_fetch_scroll(ffbp_writer *w, uint16_t stmt, const uint8_t *blr,
                           size_t blr_len, uint16_t count, int fetch_op,
                           int32_t pos) {
    ffbp_put_i32(w, FFBP_OP_FETCH_SCROLL);
    ffbp_put_i16(w, stmt);
    ffbp_put_cstring(w, blr, blr_len);
    ffbp_put_i16(w, 0); /* message number */
    ffbp_put_i16(w, count);
    ffbp_put_i16(w, (uint16_t)fetch_op);
    ffbp_put_i32(w, pos);
}

int ffbp_parse_cursor_info(const uint8_t *p, size_t len, int64_t *records) {
    size_t i = 0;
    int have = 0;
    int64_t v = 0;
    while (i < len) {
        uint8_t item = p[i++];
        if (item == 1) /* isc_info_end */
            break;
        if (item != FFBP_INF_RECORD_COUNT || len - i < 2)
            return FFBP_EBAD; /* isc_info_error, truncated, unknown */
        size_t n = (size_t)p[i] | (size_t)p[i + 1] << 8;
        i += 2;
        if (n == 0 || n > 8 || len - i < n || have)
            return FFBP_EBAD;
        uint64_t u = 0;
        for (size_t k = 0; k < n; k++)
            u |= (uint64_t)p[i + k] << (8 * k);
        if (n < 8 && (u >> (8 * n - 1)) & 1) /* sign-extend */
            u |= ~(uint64_t)0 << (8 * n);
        v = (int64_t)u;
        i += n;
        have = 1;
    }
    if (!have)
        return FFBP_EBAD;
    *records = v;
    return FFBP_OK;
}
