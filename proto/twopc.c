/*
 * Two-phase commit requests and the limbo list (proto/twopc.h).
 */
#include "proto/twopc.h"

void ffbp_put_prepare2(ffbp_writer *w, uint16_t tx, const void *msg,
                       size_t len) {
    ffbp_put_i32(w, FFBP_OP_PREPARE2);
    ffbp_put_i16(w, tx);
    ffbp_put_cstring(w, msg, len);
}

void ffbp_put_reconnect(ffbp_writer *w, uint16_t db, int64_t id) {
    uint8_t b[8];
    uint64_t v = (uint64_t)id;
    size_t n = v <= 0xFFFFFFFFu ? 4 : 8;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    ffbp_put_i32(w, FFBP_OP_RECONNECT);
    ffbp_put_i16(w, db);
    ffbp_put_cstring(w, b, n);
}

/* One pass over the answer; ids NULL: only checks and counts. */
static int limbo_walk(const uint8_t *p, size_t len, int64_t *ids, size_t max,
                      size_t *count, int *more) {
    size_t pos = 0, n, stored = 0;
    uint8_t item;
    const uint8_t *d;
    int rc, extra = 0;
    while ((rc = ffbp_info_next(p, len, &pos, &item, &d, &n)) == 1) {
        if (item == FFBP_INFO_TRUNCATED) {
            extra = 1;
            break;
        }
        if (item != FFBP_INFO_LIMBO || n == 0 || n > 8)
            return FFBP_EBAD;
        int64_t id = ffbp_le_int(d, n);
        if (id <= 0)
            return FFBP_EBAD;
        if (stored < max) {
            if (ids)
                ids[stored] = id;
            stored++;
        } else {
            extra = 1;
        }
    }
    if (rc < 0)
        return FFBP_EBAD;
    /* ffbp_info_next stopped at isc_info_end or the end of the buffer;
       what follows the end marker is not part of the answer. */
    *count = stored;
    *more = extra;
    return FFBP_OK;
}

int ffbp_limbo_decode(const uint8_t *p, size_t len, int64_t *ids, size_t max,
                      size_t *count, int *more) {
    size_t c;
    int m;
    if (limbo_walk(p, len, NULL, max, &c, &m) != FFBP_OK)
        return FFBP_EBAD;
    return limbo_walk(p, len, ids, max, count, more);
}
