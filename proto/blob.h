/*
 * Blob and batch requests (protocol reference part 03, C.2 and C.4).
 */
#ifndef FFB_PROTO_BLOB_H
#define FFB_PROTO_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"
#include "proto/sql.h"

/* op_create_blob2 / op_open_blob2: cstring bpb, short tx, quad id. */
void ffbp_put_blob_open(ffbp_writer *w, int op, const uint8_t *bpb,
                        size_t bpb_len, uint16_t tx, uint64_t id);
/* op_put_segment / op_batch_segments / op_get_segment: short blob,
   short length, cstring segment. */
void ffbp_put_segment(ffbp_writer *w, int op, uint16_t blob, uint16_t length,
                      const uint8_t *data, size_t len);
/* op_seek_blob: short blob, short mode, int32 offset. */
void ffbp_put_seek_blob(ffbp_writer *w, uint16_t blob, uint16_t mode,
                        int32_t offset);

/* Iterate the records of a segment buffer ([uint16 LE length][bytes]).
   Returns 1 with a record, 0 at the end, FFBP_EBAD when a record runs past
   the buffer. */
int ffbp_segment_next(const uint8_t *p, size_t len, size_t *pos,
                      const uint8_t **data, size_t *data_len);

/* ---- batch (protocol 16+) ---------------------------------------------------- */

enum ffbp_batch_tag {
    FFBP_BATCH_VERSION1 = 1,
    FFBP_BATCH_TAG_MULTIERROR = 1,
    FFBP_BATCH_TAG_RECORD_COUNTS = 2,
    FFBP_BATCH_TAG_BUFFER_BYTES_SIZE = 3,
    FFBP_BATCH_TAG_BLOB_POLICY = 4,
    FFBP_BATCH_TAG_DETAILED_ERRORS = 5
};

/* op_batch_create: short stmt, cstring blr, uint32 msglen, cstring pb. */
void ffbp_put_batch_create(ffbp_writer *w, uint16_t stmt, const uint8_t *blr,
                           size_t blr_len, uint32_t msglen, const uint8_t *pb,
                           size_t pb_len);
/* op_batch_msg: short stmt, uint32 count, then the messages (already
   encoded, back to back). */
void ffbp_put_batch_msg(ffbp_writer *w, uint16_t stmt, uint32_t count,
                        const uint8_t *msgs, size_t len);
/* op_batch_exec: short stmt, short tx. */
void ffbp_put_batch_exec(ffbp_writer *w, uint16_t stmt, uint16_t tx);
/* op_batch_regblob: short stmt, quad existing, quad batch id. */
void ffbp_put_batch_regblob(ffbp_writer *w, uint16_t stmt, uint64_t existing,
                            uint64_t batch_id);
/*
 * op_batch_blob_stream carrying whole blobs: one header per blob, never
 * split (reference C.4.5). Each blob is stream kind unless `segmented`
 * gives its data as [uint16 LE length][bytes] records. Appends the packet;
 * the logical length is computed here.
 */
typedef struct ffbp_stream_blob {
    uint64_t id;
    const uint8_t *bpb;
    size_t bpb_len;
    const uint8_t *data;
    size_t len;
    int segmented;
} ffbp_stream_blob;
int ffbp_put_batch_blob_stream(ffbp_writer *w, uint16_t stmt,
                               const ffbp_stream_blob *blobs, size_t n);

/* The in-memory message length Firebird computes for a message of these
   items (reference C.4.1), and the aligned length. */
uint32_t ffbp_batch_msglen(const ffbp_item *items, size_t n, uint32_t *aligned);

#endif
