/*
 * Scrollable cursors (protocol 18, Firebird 5): op_fetch_scroll (112) and
 * the answer of op_info_cursor (113). Reference 03, C.8.
 */
#ifndef FFB_PROTO_SCROLL_H
#define FFB_PROTO_SCROLL_H

#include <stddef.h>
#include <stdint.h>

#include "proto/xdr.h"

/* P_FETCH fetch_op values (src/remote/protocol.h). */
enum {
    FFBP_FETCH_NEXT = 0,
    FFBP_FETCH_PRIOR = 1,
    FFBP_FETCH_FIRST = 2,
    FFBP_FETCH_LAST = 3,
    FFBP_FETCH_ABSOLUTE = 4,
    FFBP_FETCH_RELATIVE = 5
};

/* IResultSet::INF_RECORD_COUNT, the op_info_cursor item. */
#define FFBP_INF_RECORD_COUNT 10

/*
 * op_fetch_scroll: int32 op, short statement, cstring blr (may be empty),
 * short message number (0), short messages, short fetch_op, int32 pos.
 */
void ffbp_put_fetch_scroll(ffbp_writer *w, uint16_t stmt, const uint8_t *blr,
                           size_t blr_len, uint16_t count, int fetch_op,
                           int32_t pos);

/*
 * Decode the info buffer answering op_info_cursor(INF_RECORD_COUNT):
 * `0A <u16 LE len> <len-byte LE integer> 01`. Items other than the record
 * count (isc_info_error, filler after isc_info_truncated) make it fail.
 * All-or-nothing: FFBP_OK with *records set (-1 for a forward-only cursor),
 * or FFBP_EBAD (no record count, a length of 0 or over 8, data past the
 * buffer, an unknown item) with *records untouched.
 */
int ffbp_parse_cursor_info(const uint8_t *p, size_t len, int64_t *records);

#endif
