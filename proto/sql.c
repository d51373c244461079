/*
 * Requests of the statement layer and the answers that carry messages
 * (protocol reference 02, sections 2-5). Encoders append to a writer;
 * decoders are all-or-nothing.
 */
#include "proto/sql.h"

#define TRY FFBP_TRY

/* ---- requests ------------------------------------------------------------ */

/* op_transaction (2.1): short database, cstring tpb. */
void ffbp_put_transaction(ffbp_writer *w, uint16_t db, const uint8_t *tpb,
                          size_t tpb_len) {
    ffbp_put_i32(w, FFBP_OP_TRANSACTION);
    ffbp_put_i16(w, db);
    ffbp_put_cstring(w, tpb, tpb_len);
}

/*
 * op_prepare_statement (3.3), wire order: short transaction, short
 * statement, short dialect, cstring SQL, cstring items, int32 buffer
 * length, [protocol >= 20] short flags (sent as 0).
 */
void ffbp_put_prepare(ffbp_writer *w, uint16_t tx, uint16_t stmt,
                      uint16_t dialect, const char *sql, size_t sql_len,
                      const uint8_t *items, size_t items_len,
                      uint32_t buffer_len, int protocol) {
    ffbp_put_i32(w, FFBP_OP_PREPARE_STATEMENT);
    ffbp_put_i16(w, tx);
    ffbp_put_i16(w, stmt);
    ffbp_put_i16(w, dialect);
    ffbp_put_cstring(w, sql, sql_len);
    ffbp_put_cstring(w, items, items_len);
    ffbp_put_u32(w, buffer_len);
    if (protocol >= 20)
        ffbp_put_i16(w, 0);
}

/* op_free_statement (3.8): short statement, short option. */
void ffbp_put_free_statement(ffbp_writer *w, uint16_t stmt, uint16_t option) {
    ffbp_put_i32(w, FFBP_OP_FREE_STATEMENT);
    ffbp_put_i16(w, stmt);
    ffbp_put_i16(w, option);
}

/*
 * op_execute / op_execute2 (4.2): short statement, short transaction,
 * cstring in-BLR, short message number (0), short messages (0/1),
 * [message], op_execute2 only: cstring out-BLR, short out message number
 * (0); then [>= 16] int32 timeout, [>= 18] int32 cursor flags, [>= 19]
 * int32 inline blob size.
 */
void ffbp_put_execute(ffbp_writer *w, const ffbp_execute *e, int protocol) {
    ffbp_put_i32(w, e->op);
    ffbp_put_i16(w, e->stmt);
    ffbp_put_i16(w, e->tx);
    ffbp_put_cstring(w, e->in_blr, e->in_blr_len);
    ffbp_put_i16(w, 0);
    ffbp_put_i16(w, e->in_msg ? 1 : 0);
    if (e->in_msg)
        ffbp_put_opaque(w, e->in_msg, e->in_msg_len);
    if (e->op == FFBP_OP_EXECUTE2) {
        ffbp_put_cstring(w, e->out_blr, e->out_blr_len);
        ffbp_put_i16(w, 0);
    }
    if (protocol >= 16)
        ffbp_put_u32(w, e->timeout_ms);
    if (protocol >= 18)
        ffbp_put_u32(w, e->cursor_flags);
    if (protocol >= 19)
        ffbp_put_u32(w, e->inline_blob_size);
}

/*
 * op_exec_immediate (4.6): short transaction, short statement (0), short
 * dialect, cstring SQL, cstring items (empty), int32 buffer length (0),
 * [>= 20] short flags (0). op_exec_immediate2 ends with the same fields.
 */
static void put_immediate_fields(ffbp_writer *w, uint16_t tx, uint16_t dialect,
                                 const char *sql, size_t sql_len,
                                 int protocol) {
    ffbp_put_i16(w, tx);
    ffbp_put_i16(w, 0);
    ffbp_put_i16(w, dialect);
    ffbp_put_cstring(w, sql, sql_len);
    ffbp_put_cstring(w, NULL, 0);
    ffbp_put_u32(w, 0);
    if (protocol >= 20)
        ffbp_put_i16(w, 0);
}

void ffbp_put_exec_immediate(ffbp_writer *w, uint16_t tx, uint16_t dialect,
                             const char *sql, size_t sql_len, int protocol) {
    ffbp_put_i32(w, FFBP_OP_EXEC_IMMEDIATE);
    put_immediate_fields(w, tx, dialect, sql, sql_len, protocol);
}

/*
 * op_exec_immediate2 (4.6) with an input message and no output: cstring
 * in-BLR, short message number (0), short messages (0/1), the message,
 * cstring out-BLR (empty), short out message number (0), [>= 19] int32
 * inline blob size (0), then the fields of op_exec_immediate.
 */
void ffbp_put_exec_immediate2(ffbp_writer *w, uint16_t tx, uint16_t dialect,
                              const char *sql, size_t sql_len,
                              const uint8_t *in_blr, size_t in_blr_len,
                              const uint8_t *in_msg, size_t in_msg_len,
                              int protocol) {
    ffbp_put_i32(w, FFBP_OP_EXEC_IMMEDIATE2);
    ffbp_put_cstring(w, in_blr, in_blr_len);
    ffbp_put_i16(w, 0);
    ffbp_put_i16(w, in_msg ? 1 : 0);
    if (in_msg)
        ffbp_put_opaque(w, in_msg, in_msg_len);
    ffbp_put_cstring(w, NULL, 0);
    ffbp_put_i16(w, 0);
    if (protocol >= 19)
        ffbp_put_u32(w, 0);
    put_immediate_fields(w, tx, dialect, sql, sql_len, protocol);
}

/* op_fetch (5.1): short statement, cstring out-BLR, short message number
   (0), short row count. */
void ffbp_put_fetch(ffbp_writer *w, uint16_t stmt, const uint8_t *blr,
                    size_t blr_len, uint16_t count) {
    ffbp_put_i32(w, FFBP_OP_FETCH);
    ffbp_put_i16(w, stmt);
    ffbp_put_cstring(w, blr, blr_len);
    ffbp_put_i16(w, 0);
    ffbp_put_i16(w, count);
}

/* ---- answers ------------------------------------------------------------- */

static int get_op(ffbp_reader *r, int32_t want) {
    int32_t op;
    TRY(ffbp_get_i32(r, &op));
    return op == want ? FFBP_OK : FFBP_EBAD;
}

/* short messages (0 or 1), then the message when 1. */
static int get_messages(ffbp_reader *r, const ffbp_item *items, size_t n,
                        uint32_t *off, uint32_t *len,
                        ffbp_fetch_response *out) {
    TRY(ffbp_get_u16(r, &out->count));
    out->msg = NULL;
    out->msg_len = 0;
    if (out->count > 1)
        return FFBP_EBAD;
    if (out->count == 1)
        return ffbp_get_message(r, items, n, off, len, &out->msg,
                                &out->msg_len);
    return FFBP_OK;
}

/* op_fetch_response (5.2): int32 op (66), int32 status (0 / 100), short
   messages (0/1), [message]. */
static int get_fetch_response(ffbp_reader *r, const ffbp_item *items, size_t n,
                              uint32_t *off, uint32_t *len,
                              ffbp_fetch_response *out) {
    TRY(get_op(r, FFBP_OP_FETCH_RESPONSE));
    TRY(ffbp_get_i32(r, &out->status));
    return get_messages(r, items, n, off, len, out);
}

int ffbp_get_fetch_response(ffbp_reader *r, const ffbp_item *items, size_t n,
                            uint32_t *off, uint32_t *len,
                            ffbp_fetch_response *out) {
    size_t save = r->pos;
    int rc = get_fetch_response(r, items, n, off, len, out);
    if (rc != FFBP_OK)
        r->pos = save;
    return rc;
}

/* op_sql_response (4.4): int32 op (78), short messages (0/1), [message]. */
static int get_sql_response(ffbp_reader *r, const ffbp_item *items, size_t n,
                            uint32_t *off, uint32_t *len,
                            ffbp_fetch_response *out) {
    TRY(get_op(r, FFBP_OP_SQL_RESPONSE));
    out->status = 0;
    return get_messages(r, items, n, off, len, out);
}

int ffbp_get_sql_response(ffbp_reader *r, const ffbp_item *items, size_t n,
                          uint32_t *off, uint32_t *len,
                          ffbp_fetch_response *out) {
    size_t save = r->pos;
    int rc = get_sql_response(r, items, n, off, len, out);
    if (rc != FFBP_OK)
        r->pos = save;
    return rc;
}

/* ---- describe item lists (3.4.1, 3.4.2) ---------------------------------- */

/* fbclient's list (PREPARE_PREFETCH_METADATA): the recorded conversations
   and fbclient send exactly these bytes. */
static const uint8_t describe_items[] = {
    FFBP_INFO_SQL_STMT_TYPE, FFBP_INFO_SQL_STMT_FLAGS,
    /* input */
    FFBP_INFO_SQL_BIND, FFBP_INFO_SQL_DESCRIBE_VARS, FFBP_INFO_SQL_SQLDA_SEQ,
    FFBP_INFO_SQL_TYPE, FFBP_INFO_SQL_SUB_TYPE, FFBP_INFO_SQL_SCALE,
    FFBP_INFO_SQL_LENGTH, FFBP_INFO_SQL_FIELD, FFBP_INFO_SQL_RELATION,
    FFBP_INFO_SQL_OWNER, FFBP_INFO_SQL_ALIAS, FFBP_INFO_SQL_DESCRIBE_END,
    /* output */
    FFBP_INFO_SQL_SELECT, FFBP_INFO_SQL_DESCRIBE_VARS, FFBP_INFO_SQL_SQLDA_SEQ,
    FFBP_INFO_SQL_TYPE, FFBP_INFO_SQL_SUB_TYPE, FFBP_INFO_SQL_SCALE,
    FFBP_INFO_SQL_LENGTH, FFBP_INFO_SQL_FIELD, FFBP_INFO_SQL_RELATION,
    FFBP_INFO_SQL_OWNER, FFBP_INFO_SQL_ALIAS, FFBP_INFO_SQL_DESCRIBE_END};

const uint8_t *ffbp_describe_items(size_t *len_out) {
    *len_out = sizeof(describe_items);
    return describe_items;
}

/* sqlda_start (LE16, or LE32 above 0xFFFF), the side, then the
   per-variable list of describe_items. */
size_t ffbp_describe_continue_items(uint8_t *out, int select, uint32_t start) {
    size_t k = 0;
    out[k++] = FFBP_INFO_SQL_SQLDA_START;
    int width = start > 0xFFFFu ? 4 : 2;
    out[k++] = (uint8_t)width;
    for (int i = 0; i < width; i++)
        out[k++] = (uint8_t)(start >> (8 * i));
    out[k++] = select ? FFBP_INFO_SQL_SELECT : FFBP_INFO_SQL_BIND;
    /* describe_vars .. describe_end of the input half of the list */
    for (size_t i = 3; i < 14; i++)
        out[k++] = describe_items[i];
    return k;
}
