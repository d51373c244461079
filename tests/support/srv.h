/*
 * What a Firebird server sends, encoded by a test or a fuzz target: the
 * answers the scripted server of tests/support/hostile.h feeds a
 * connection. No test framework: usable from fuzz targets (a buffer too
 * small for a describe aborts).
 */
#ifndef FFB_TEST_SRV_H
#define FFB_TEST_SRV_H

#include <stddef.h>
#include <stdint.h>

#include "lib/internal.h"

/* ---- server packet encoders -------------------------------------------- */

/* op_response, success. */
void srv_response(ffbp_writer *w, uint16_t object, uint64_t blob_id,
                  const void *data, size_t len);
/* op_response carrying an error status: isc_arg_gds `gds`. */
void srv_error(ffbp_writer *w, uint32_t gds);
/* op_fetch_response: status (0 more, 100 end), count 0/1 and a message. */
void srv_fetch(ffbp_writer *w, int32_t status, uint16_t count,
               const void *msg, size_t len);
/* op_sql_response with count 0/1 and a message. */
void srv_sql_response(ffbp_writer *w, uint16_t count, const void *msg,
                      size_t len);
/* op_inline_blob (protocol 19). */
void srv_inline_blob(ffbp_writer *w, uint16_t tx, uint64_t id,
                     const void *info, size_t info_len, const void *data,
                     size_t data_len);
/* op_accept / op_accept_data / op_cond_accept for `protocol` (13..19),
   generic architecture, lazy packets; auth fields only for the latter two. */
void srv_accept(ffbp_writer *w, int32_t op, int protocol, const char *plugin,
                const void *data, size_t data_len, int authenticated,
                const void *keys, size_t keys_len);
/* op_cont_auth. */
void srv_cont_auth(ffbp_writer *w, const void *data, size_t data_len,
                   const char *plugin, const void *keys, size_t keys_len);

/* One described variable. */
typedef struct srv_var {
    int sqltype; /* FFBP_SQL_* (without the nullable bit) */
    int subtype, scale, length;
    int nullable;
    const char *name;
} srv_var;

/* A statement info answer: statement type, the bind (input) and select
   (output) sides, in the order servers answer, with describe_vars `out_count` / `in_count` (which may
   differ from the number of variables given, for hostile describes), each
   variable ended by describe_end, then isc_info_end. `truncate_at`: the
   1-based output variable at which isc_info_truncated ends the answer (0:
   complete). `first_out`: the sqlda_seq of the first output variable
   written (1 normally; a continuation starts further on). Returns the
   length written to buf. */
size_t srv_describe(uint8_t *buf, size_t cap, int stmt_type,
                    uint32_t out_count, const srv_var *out, size_t nout,
                    uint32_t first_out, uint32_t in_count, const srv_var *in,
                    size_t nin, uint32_t truncate_at);
/* One side only (select = 1: output), as the answer to a describe
   continuation: describe_vars `count`, variables from sqlda_seq `first`,
   truncated at `truncate_at` (0: complete, then isc_info_end). */
size_t srv_describe_side(uint8_t *buf, size_t cap, int select, uint32_t count,
                         const srv_var *vars, size_t n, uint32_t first,
                         uint32_t truncate_at);

#endif
