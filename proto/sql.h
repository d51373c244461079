/*
 * Statements, transactions and data on the wire: request encoders, message
 * (row) formats and their BLR, row encoding/decoding, the describe (sql
 * info) parser. Protocol reference 02 (statements). Pure functions on
 * buffers, like the rest of proto/.
 */
#ifndef FFB_PROTO_SQL_H
#define FFB_PROTO_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/* ---- SQL types (sqltype with the nullable bit cleared) -------------------- */

enum ffbp_sqltype {
    FFBP_SQL_VARYING = 448,
    FFBP_SQL_TEXT = 452,
    FFBP_SQL_DOUBLE = 480,
    FFBP_SQL_FLOAT = 482,
    FFBP_SQL_LONG = 496,
    FFBP_SQL_SHORT = 500,
    FFBP_SQL_TIMESTAMP = 510,
    FFBP_SQL_BLOB = 520,
    FFBP_SQL_D_FLOAT = 530,
    FFBP_SQL_ARRAY = 540,
    FFBP_SQL_QUAD = 550,
    FFBP_SQL_TYPE_TIME = 560,
    FFBP_SQL_TYPE_DATE = 570,
    FFBP_SQL_INT64 = 580,
    FFBP_SQL_TIMESTAMP_TZ_EX = 32748,
    FFBP_SQL_TIME_TZ_EX = 32750,
    FFBP_SQL_INT128 = 32752,
    FFBP_SQL_TIMESTAMP_TZ = 32754,
    FFBP_SQL_TIME_TZ = 32756,
    FFBP_SQL_DEC16 = 32760,
    FFBP_SQL_DEC34 = 32762,
    FFBP_SQL_BOOLEAN = 32764,
    FFBP_SQL_NULL = 32766
};

/* ---- BLR ------------------------------------------------------------------- */

enum ffbp_blr {
    FFBP_BLR_SHORT = 7,
    FFBP_BLR_LONG = 8,
    FFBP_BLR_QUAD = 9,
    FFBP_BLR_FLOAT = 10,
    FFBP_BLR_D_FLOAT = 11,
    FFBP_BLR_SQL_DATE = 12,
    FFBP_BLR_SQL_TIME = 13,
    FFBP_BLR_TEXT = 14,
    FFBP_BLR_TEXT2 = 15,
    FFBP_BLR_INT64 = 16,
    FFBP_BLR_BLOB2 = 17,
    FFBP_BLR_BOOL = 23,
    FFBP_BLR_DEC64 = 24,
    FFBP_BLR_DEC128 = 25,
    FFBP_BLR_INT128 = 26,
    FFBP_BLR_DOUBLE = 27,
    FFBP_BLR_SQL_TIME_TZ = 28,
    FFBP_BLR_TIMESTAMP_TZ = 29,
    FFBP_BLR_EX_TIME_TZ = 30,
    FFBP_BLR_EX_TIMESTAMP_TZ = 31,
    FFBP_BLR_TIMESTAMP = 35,
    FFBP_BLR_VARYING = 37,
    FFBP_BLR_VARYING2 = 38
};

/*
 * One item of a message: the BLR type descriptor of a parameter or column.
 * `length` is in bytes for text items (CHAR: exact, VARCHAR: maximum,
 * without the 2-byte prefix) and is also a limit in characters of the
 * item's charset (reference 02, 8.2).
 */
typedef struct ffbp_item {
    uint8_t blr;       /* FFBP_BLR_* */
    int8_t scale;      /* SHORT, LONG, INT64, INT128, QUAD */
    uint16_t length;   /* TEXT, TEXT2, VARYING, VARYING2 */
    uint16_t texttype; /* TEXT2/VARYING2: charset | collation << 8;
                          BLOB2: charset */
    int16_t subtype;   /* BLOB2 */
} ffbp_item;

/* Map a described SQL type to its item (reference 02, 8.3). Returns FFBP_OK
   or FFBP_EBAD for a type that has no BLR. */
int ffbp_item_from_sql(int sqltype, int subtype, int scale, int length,
                       ffbp_item *out);

/*
 * Append the BLR of a message with `n` items: blr_version5, blr_begin,
 * blr_message 0, count (2 x n, LE), each item + blr_short 0, blr_end,
 * blr_eoc. n == 0 appends nothing (an empty BLR is sent for "no message").
 * Returns FFBP_OK or FFBP_EBAD (n too large, unknown BLR code).
 */
int ffbp_put_blr(ffbp_writer *w, const ffbp_item *items, size_t n);

/*
 * Parse a message BLR back into items (for tests and tracing): version 4
 * or 5, every item followed by blr_short 0, blr_end blr_eoc last. Returns
 * the item count (items beyond `cap` are checked but not stored; an empty
 * BLR has 0), or FFBP_EBAD.
 */
int ffbp_parse_blr(const uint8_t *blr, size_t len, ffbp_item *items,
                   size_t cap);

/* Wire size of a non-NULL value of `it` without the padding to 4 (only
   text and boolean values need any: blr_bool is 1); for VARYING items the
   maximum (4 + length). 0 for an unknown code (and for TEXT of length 0). */
size_t ffbp_item_wire_size(const ffbp_item *it);

/* The most bytes a message of these `n` items takes on the wire (protocol
   >= 13): the null bitmap and every value at its largest, each padded to
   4. */
size_t ffbp_message_wire_max(const ffbp_item *items, size_t n);

/* ---- messages (protocol >= 13: null bitmap + non-null values) ------------- */

#define FFBP_NULL_OFFSET 0xFFFFFFFFu

/*
 * Decode one message of `n` items. For item i, off[i] is the offset (from
 * the start of the message) of its value bytes - for VARYING items the
 * first data byte after the 2-byte-in-4 length - or FFBP_NULL_OFFSET when
 * NULL; len[i] is the value length (VARYING: the actual length; TEXT: the
 * declared length; fixed types: their wire size without padding).
 * *msg_out / *msg_len_out give the message bytes. off, len, msg_out and
 * msg_len_out may be NULL. All-or-nothing: FFBP_INCOMPLETE leaves the
 * reader untouched; a VARYING length above its declared maximum and an
 * unknown BLR code are FFBP_EBAD (reader untouched too).
 */
int ffbp_get_message(ffbp_reader *r, const ffbp_item *items, size_t n,
                     uint32_t *off, uint32_t *len, const uint8_t **msg_out,
                     size_t *msg_len_out);

/* Encoding: ffbp_msg_begin writes a zero null bitmap for n items and
   returns its position in w; values follow with ffbp_put_* (text with
   ffbp_put_opaque, VARYING as ffbp_put_u32(len) + ffbp_put_opaque). */
size_t ffbp_msg_begin(ffbp_writer *w, size_t n);
void ffbp_msg_set_null(ffbp_writer *w, size_t bitmap_pos, size_t i);

/* ---- requests ------------------------------------------------------------- */

void ffbp_put_transaction(ffbp_writer *w, uint16_t db, const uint8_t *tpb,
                          size_t tpb_len);
/* protocol >= 20 appends the flags short, sent as 0. */
void ffbp_put_prepare(ffbp_writer *w, uint16_t tx, uint16_t stmt,
                      uint16_t dialect, const char *sql, size_t sql_len,
                      const uint8_t *items, size_t items_len,
                      uint32_t buffer_len, int protocol);
void ffbp_put_free_statement(ffbp_writer *w, uint16_t stmt, uint16_t option);

enum { FFBP_DSQL_CLOSE = 1, FFBP_DSQL_DROP = 2, FFBP_DSQL_UNPREPARE = 4 };

typedef struct ffbp_execute {
    int op;                 /* FFBP_OP_EXECUTE or FFBP_OP_EXECUTE2 */
    uint16_t stmt, tx;
    const uint8_t *in_blr;  /* may be NULL/0 */
    size_t in_blr_len;
    const uint8_t *in_msg;  /* encoded message; NULL = no message */
    size_t in_msg_len;
    const uint8_t *out_blr; /* op_execute2 only */
    size_t out_blr_len;
    uint32_t timeout_ms;    /* protocol >= 16 */
    uint32_t cursor_flags;  /* protocol >= 18 */
    uint32_t inline_blob_size; /* protocol >= 19 */
} ffbp_execute;

void ffbp_put_execute(ffbp_writer *w, const ffbp_execute *e, int protocol);

/* op_exec_immediate2 with an input message, no output (answered by
   op_sql_response with no row, then op_response) */
void ffbp_put_exec_immediate2(ffbp_writer *w, uint16_t tx, uint16_t dialect,
                              const char *sql, size_t sql_len,
                              const uint8_t *in_blr, size_t in_blr_len,
                              const uint8_t *in_msg, size_t in_msg_len,
                              int protocol);
/* op_exec_immediate (no messages) */
void ffbp_put_exec_immediate(ffbp_writer *w, uint16_t tx, uint16_t dialect,
                             const char *sql, size_t sql_len, int protocol);

void ffbp_put_fetch(ffbp_writer *w, uint16_t stmt, const uint8_t *blr,
                    size_t blr_len, uint16_t count);

/* ---- answers carrying messages -------------------------------------------- */

/* ffbp_fetch_response (op_fetch_response / op_sql_response) is defined in
   proto/proto.h, as part of ffbp_packet. */

/* Decode op_fetch_response (op code included) with the cursor's items;
   off/len as in ffbp_get_message. */
int ffbp_get_fetch_response(ffbp_reader *r, const ffbp_item *items, size_t n,
                            uint32_t *off, uint32_t *len,
                            ffbp_fetch_response *out);

/* Decode op_sql_response (op code included): count, message if count. */
int ffbp_get_sql_response(ffbp_reader *r, const ffbp_item *items, size_t n,
                          uint32_t *off, uint32_t *len,
                          ffbp_fetch_response *out);

/* ---- describe (statement info, reference 02 3.4) -------------------------- */

enum ffbp_sql_info {
    FFBP_INFO_SQL_SELECT = 4,
    FFBP_INFO_SQL_BIND = 5,
    FFBP_INFO_SQL_NUM_VARIABLES = 6,
    FFBP_INFO_SQL_DESCRIBE_VARS = 7,
    FFBP_INFO_SQL_DESCRIBE_END = 8,
    FFBP_INFO_SQL_SQLDA_SEQ = 9,
    FFBP_INFO_SQL_MESSAGE_SEQ = 10,
    FFBP_INFO_SQL_TYPE = 11,
    FFBP_INFO_SQL_SUB_TYPE = 12,
    FFBP_INFO_SQL_SCALE = 13,
    FFBP_INFO_SQL_LENGTH = 14,
    FFBP_INFO_SQL_NULL_IND = 15,
    FFBP_INFO_SQL_FIELD = 16,
    FFBP_INFO_SQL_RELATION = 17,
    FFBP_INFO_SQL_OWNER = 18,
    FFBP_INFO_SQL_ALIAS = 19,
    FFBP_INFO_SQL_SQLDA_START = 20,
    FFBP_INFO_SQL_STMT_TYPE = 21,
    FFBP_INFO_SQL_GET_PLAN = 22,
    FFBP_INFO_SQL_RECORDS = 23,
    FFBP_INFO_SQL_BATCH_FETCH = 24,
    FFBP_INFO_SQL_RELATION_ALIAS = 25,
    FFBP_INFO_SQL_EXPLAIN_PLAN = 26,
    FFBP_INFO_SQL_STMT_FLAGS = 27
};

/* One described parameter or column; strings are views into the info
   buffer. */
typedef struct ffbp_var {
    int sqltype;      /* nullable bit cleared */
    int nullable;
    int subtype;
    int scale;
    int length;
    ffbp_bytes field, relation, owner, alias, relation_alias;
    int complete;     /* its describe_end (8) was seen */
} ffbp_var;

typedef struct ffbp_sqlinfo {
    int stmt_type;       /* isc_info_sql_stmt_type, 0 if absent */
    int stmt_flags;      /* isc_info_sql_stmt_flags, -1 if absent */
    int batch_fetch;     /* isc_info_sql_batch_fetch, -1 if absent */
    ffbp_bytes plan;     /* get_plan / explain_plan text */
    int64_t records[4];  /* select, insert, update, delete counts; -1 if absent */
    /* Input (bind) and output (select) variables: counts as described, the
       caller's arrays are filled up to their capacity. */
    uint32_t in_count, out_count;
    ffbp_var *in, *out;
    size_t in_cap, out_cap;
    int have_in, have_out;   /* the describe_vars item was seen */
    int truncated;           /* isc_info_truncated ended the last answer
                                parsed */
    int error_item;          /* first isc_info_error: the item it names,
                                -1 if none (ffbp_sqlinfo_init) */
    int32_t error_code;      /* ... and its gds code (isc_infunk, ...),
                                0 if none */
} ffbp_sqlinfo;

/* Zero `d` and the arrays, set the "absent" values (-1), attach the
   arrays. */
void ffbp_sqlinfo_init(ffbp_sqlinfo *d, ffbp_var *in, size_t in_cap,
                       ffbp_var *out, size_t out_cap);

/*
 * Parse a statement info answer (reference 02, 3.4.2). Variables are
 * placed by their sqlda_seq; the arrays in `d` must be set up by the caller
 * (ffbp_sqlinfo_init, so `complete` starts at 0); items of variables
 * beyond the capacity are validated and skipped - a caller that sees
 * in_count / out_count above its capacity re-inits with larger arrays and
 * parses the same buffer again. Only the items present are stored, so the
 * continuation of a truncated describe is parsed into the same structure
 * and `complete` flags accumulate. Returns FFBP_OK or FFBP_EBAD (malformed:
 * an item running past the buffer, a sqlda_seq out of range of the
 * described count, describe_vars before select/bind, a negative count);
 * after FFBP_EBAD `d` may hold part of the answer.
 */
int ffbp_parse_describe(const uint8_t *p, size_t len, ffbp_sqlinfo *d);

/* The 1-based index of the first variable of one side (select = 1:
   output) whose describe_end was not seen - the `start` for
   ffbp_describe_continue_items - or 0 when all are complete. Variables
   beyond the capacity count as incomplete. */
uint32_t ffbp_sqlinfo_incomplete(const ffbp_sqlinfo *d, int select);

/* The prepare item list libfastfb sends (fbclient's, 26 bytes);
   *len_out set. */
const uint8_t *ffbp_describe_items(size_t *len_out);

/* Items asking to continue the describe of one side (select = 1: output,
   0: input) from the 1-based variable `start`: 14 02 lo hi (14 04 + LE32
   above 0xFFFF), 04|05, the per-variable list of ffbp_describe_items.
   Writes at most 32 bytes (16, or 18 above 0xFFFF); returns the length. */
size_t ffbp_describe_continue_items(uint8_t *out, int select, uint32_t start);

#endif
