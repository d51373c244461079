/*
 * Server packet encoders (tests/support/srv.h).
 */
#include "tests/support/srv.h"

#include <stdlib.h>
#include <string.h>

/* ---- encoders ------------------------------------------------------------ */

void srv_response(ffbp_writer *w, uint16_t object, uint64_t blob_id,
                  const void *data, size_t len) {
    ffbp_put_i32(w, FFBP_OP_RESPONSE);
    ffbp_put_i16(w, object);
    ffbp_put_quad(w, blob_id);
    ffbp_put_cstring(w, data, len);
    ffbp_put_i32(w, FFBP_ARG_END);
}

void srv_error(ffbp_writer *w, uint32_t gds) {
    ffbp_put_i32(w, FFBP_OP_RESPONSE);
    ffbp_put_i16(w, 0);
    ffbp_put_quad(w, 0);
    ffbp_put_cstring(w, NULL, 0);
    ffbp_put_i32(w, FFBP_ARG_GDS);
    ffbp_put_u32(w, gds);
    ffbp_put_i32(w, FFBP_ARG_END);
}

void srv_fetch(ffbp_writer *w, int32_t status, uint16_t count,
               const void *msg, size_t len) {
    ffbp_put_i32(w, FFBP_OP_FETCH_RESPONSE);
    ffbp_put_i32(w, status);
    ffbp_put_i16(w, count);
    if (count)
        ffbp_put_raw(w, msg, len);
}

void srv_sql_response(ffbp_writer *w, uint16_t count, const void *msg,
                      size_t len) {
    ffbp_put_i32(w, FFBP_OP_SQL_RESPONSE);
    ffbp_put_i16(w, count);
    if (count)
        ffbp_put_raw(w, msg, len);
}

void srv_inline_blob(ffbp_writer *w, uint16_t tx, uint64_t id,
                     const void *info, size_t info_len, const void *data,
                     size_t data_len) {
    ffbp_put_i32(w, FFBP_OP_INLINE_BLOB);
    ffbp_put_i16(w, tx);
    ffbp_put_quad(w, id);
    ffbp_put_cstring(w, info, info_len);
    ffbp_put_cstring(w, data, data_len);
}

void srv_accept(ffbp_writer *w, int32_t op, int protocol, const char *plugin,
                const void *data, size_t data_len, int authenticated,
                const void *keys, size_t keys_len) {
    ffbp_put_i32(w, op);
    ffbp_put_i16(w, (uint16_t)(FFBP_PROTOCOL_FLAG | (unsigned)protocol));
    ffbp_put_i32(w, FFBP_ARCH_GENERIC);
    ffbp_put_i16(w, FFBP_PTYPE_LAZY_SEND);
    if (op == FFBP_OP_ACCEPT)
        return;
    ffbp_put_cstring(w, data, data_len);
    ffbp_put_cstring(w, plugin, plugin ? strlen(plugin) : 0);
    ffbp_put_i16(w, (uint16_t)authenticated);
    ffbp_put_cstring(w, keys, keys_len);
}

void srv_cont_auth(ffbp_writer *w, const void *data, size_t data_len,
                   const char *plugin, const void *keys, size_t keys_len) {
    ffbp_put_i32(w, FFBP_OP_CONT_AUTH);
    ffbp_put_cstring(w, data, data_len);
    ffbp_put_cstring(w, plugin, plugin ? strlen(plugin) : 0);
    ffbp_put_cstring(w, plugin, plugin ? strlen(plugin) : 0);
    ffbp_put_cstring(w, keys, keys_len);
}

typedef struct ibuf {
    uint8_t *p;
    size_t cap, len;
} ibuf;

static void ib_byte(ibuf *b, uint8_t c) {
    if (b->len >= b->cap)
        abort();
    b->p[b->len++] = c;
}

static void ib_item(ibuf *b, uint8_t code, const void *v, size_t n) {
    if (n >= 65536 || b->len + 3 + n > b->cap)
        abort();
    b->p[b->len++] = code;
    b->p[b->len++] = (uint8_t)n;
    b->p[b->len++] = (uint8_t)(n >> 8);
    memcpy(b->p + b->len, v, n);
    b->len += n;
}

static void ib_int(ibuf *b, uint8_t code, uint32_t v) {
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                     (uint8_t)(v >> 24)};
    ib_item(b, code, le, 4);
}

static void ib_side(ibuf *b, uint8_t side, uint32_t count, const srv_var *v,
                    size_t n, uint32_t first, uint32_t truncate_at) {
    ib_byte(b, side);
    ib_int(b, FFBP_INFO_SQL_DESCRIBE_VARS, count);
    for (size_t i = 0; i < n; i++) {
        uint32_t seq = first + (uint32_t)i;
        if (truncate_at && seq == truncate_at) {
            ib_byte(b, FFBP_INFO_TRUNCATED);
            return;
        }
        ib_int(b, FFBP_INFO_SQL_SQLDA_SEQ, seq);
        ib_int(b, FFBP_INFO_SQL_TYPE,
               (uint32_t)(v[i].sqltype | (v[i].nullable ? 1 : 0)));
        ib_int(b, FFBP_INFO_SQL_SUB_TYPE, (uint32_t)v[i].subtype);
        ib_int(b, FFBP_INFO_SQL_SCALE, (uint32_t)v[i].scale);
        ib_int(b, FFBP_INFO_SQL_LENGTH, (uint32_t)v[i].length);
        const char *name = v[i].name ? v[i].name : "C";
        ib_item(b, FFBP_INFO_SQL_FIELD, name, strlen(name));
        ib_item(b, FFBP_INFO_SQL_RELATION, "T", 1);
        ib_item(b, FFBP_INFO_SQL_OWNER, "SYSDBA", 6);
        ib_item(b, FFBP_INFO_SQL_ALIAS, name, strlen(name));
        ib_byte(b, FFBP_INFO_SQL_DESCRIBE_END);
    }
}

size_t srv_describe(uint8_t *buf, size_t cap, int stmt_type,
                    uint32_t out_count, const srv_var *out, size_t nout,
                    uint32_t first_out, uint32_t in_count, const srv_var *in,
                    size_t nin, uint32_t truncate_at) {
    ibuf b = {buf, cap, 0};
    if (stmt_type)
        ib_int(&b, FFBP_INFO_SQL_STMT_TYPE, (uint32_t)stmt_type);
    /* The server answers in the order asked: bind, then select. */
    ib_side(&b, FFBP_INFO_SQL_BIND, in_count, in, nin, 1, 0);
    uint32_t first = first_out ? first_out : 1;
    ib_side(&b, FFBP_INFO_SQL_SELECT, out_count, out, nout, first,
            truncate_at);
    if (truncate_at && truncate_at >= first && truncate_at < first + nout)
        return b.len;
    ib_byte(&b, FFBP_INFO_END);
    return b.len;
}

size_t srv_describe_side(uint8_t *buf, size_t cap, int select, uint32_t count,
                         const srv_var *vars, size_t n, uint32_t first,
                         uint32_t truncate_at) {
    ibuf b = {buf, cap, 0};
    ib_side(&b, select ? FFBP_INFO_SQL_SELECT : FFBP_INFO_SQL_BIND, count,
            vars, n, first ? first : 1, truncate_at);
    uint32_t f = first ? first : 1;
    if (truncate_at && truncate_at >= f && truncate_at < f + n)
        return b.len;
    ib_byte(&b, FFBP_INFO_END);
    return b.len;
}
