/*
 * Two-phase commit and limbo transactions (protocol reference part 03,
 * C.10.2; part 02, 2.3 and 2.4; the isc_info_limbo item of C.9.2).
 */
#ifndef FFB_PROTO_TWOPC_H
#define FFB_PROTO_TWOPC_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/* isc_info_limbo: one clump per limbo transaction, each its number as a
   little-endian integer (4 bytes, or 8 when it does not fit in 31 bits). */
#define FFBP_INFO_LIMBO 16

/* op_prepare2 (51): short transaction, cstring message. */
void ffbp_put_prepare2(ffbp_writer *w, uint16_t tx, const void *msg,
                       size_t len);
/* op_reconnect (33): short database, cstring transaction number (the
   number as a little-endian integer: 4 bytes, 8 when it does not fit in
   32 bits). `id` must be positive. */
void ffbp_put_reconnect(ffbp_writer *w, uint16_t db, int64_t id);

/*
 * Decode the answer to an op_info_database asking for isc_info_limbo
 * only: the numbers of the limbo transactions, in the order the server
 * lists them. The first `max` go to ids[]; *count gets how many were
 * stored; *more is 1 when the answer holds more than `max` or was
 * truncated (isc_info_truncated: the answer buffer was too small). A
 * clump of another item, a number of 0 or more than 8 bytes or a number
 * not positive is FFBP_EBAD; bytes after isc_info_end are ignored. All or nothing: on
 * FFBP_EBAD nothing is written.
 */
int ffbp_limbo_decode(const uint8_t *p, size_t len, int64_t *ids, size_t max,
                      size_t *count, int *more);

#endif
