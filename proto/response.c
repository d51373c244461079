/*
 * Decoders for server packets of the connection layer: the accept family,
 * op_response with its status vector, op_cont_auth, op_crypt_key_callback.
 * All-or-nothing: on anything but FFBP_OK the reader is left untouched.
 */
#include "proto/proto.h"

/* Auth data, plugin names, key lists: generous bounds, well below what a
   hostile server could use to make us buffer without limit. */
#define AUTH_FIELD_MAX (1024u * 1024u)

#define TRY FFBP_TRY

static int get_response(ffbp_reader *r, ffbp_response *out) {
    TRY(ffbp_get_u16(r, &out->object));
    TRY(ffbp_get_quad(r, &out->blob_id));
    TRY(ffbp_get_cstring(r, FFBP_MAX_CSTRING, &out->data));
    return ffbp_get_status(r, &out->status);
}

static int get_accept(ffbp_reader *r, int32_t op, ffbp_accept *out) {
    TRY(ffbp_get_u16(r, &out->version));
    TRY(ffbp_get_i32(r, &out->arch));
    TRY(ffbp_get_u16(r, &out->type));
    if (op == FFBP_OP_ACCEPT) {
        out->data.len = out->plugin.len = out->keys.len = 0;
        out->data.p = out->plugin.p = out->keys.p = NULL;
        out->authenticated = 0;
        return FFBP_OK;
    }
    TRY(ffbp_get_cstring(r, AUTH_FIELD_MAX, &out->data));
    TRY(ffbp_get_cstring(r, AUTH_FIELD_MAX, &out->plugin));
    TRY(ffbp_get_u16(r, &out->authenticated));
    return ffbp_get_cstring(r, AUTH_FIELD_MAX, &out->keys);
}

static int get_cont_auth(ffbp_reader *r, ffbp_cont_auth *out) {
    TRY(ffbp_get_cstring(r, AUTH_FIELD_MAX, &out->data));
    TRY(ffbp_get_cstring(r, AUTH_FIELD_MAX, &out->name));
    TRY(ffbp_get_cstring(r, AUTH_FIELD_MAX, &out->list));
    return ffbp_get_cstring(r, AUTH_FIELD_MAX, &out->keys);
}

static int get_body(ffbp_reader *r, int protocol, ffbp_packet *out) {
    switch (out->op) {
    case FFBP_OP_ACCEPT:
    case FFBP_OP_ACCEPT_DATA:
    case FFBP_OP_COND_ACCEPT:
        return get_accept(r, out->op, &out->u.accept);
    case FFBP_OP_REJECT:
    case FFBP_OP_DUMMY:
    case FFBP_OP_DISCONNECT:
        return FFBP_OK;
    case FFBP_OP_RESPONSE:
    case FFBP_OP_RESPONSE_PIGGYBACK:
        return get_response(r, &out->u.response);
    case FFBP_OP_CONT_AUTH:
        return get_cont_auth(r, &out->u.cont_auth);
    case FFBP_OP_TRUSTED_AUTH:
        return ffbp_get_cstring(r, AUTH_FIELD_MAX, &out->u.trusted);
    case FFBP_OP_INLINE_BLOB:
        if (protocol != 0 && protocol < 19)
            return FFBP_EBAD;
        TRY(ffbp_get_u16(r, &out->u.inline_blob.tx));
        TRY(ffbp_get_quad(r, &out->u.inline_blob.blob_id));
        TRY(ffbp_get_cstring(r, 1024, &out->u.inline_blob.info));
        return ffbp_get_cstring(r, 65535 + 4, &out->u.inline_blob.data);
    case FFBP_OP_BATCH_CS:
        if (protocol != 0 && protocol < 16)
            return FFBP_EBAD;
        return ffbp_get_batch_cs_body(r, &out->u.batch_cs);
    case FFBP_OP_CRYPT_KEY_CALLBACK:
        TRY(ffbp_get_cstring(r, AUTH_FIELD_MAX, &out->u.crypt_cb.data));
        out->u.crypt_cb.reply_size = -1;
        /* p_cc_reply: protocol 14+, and during the connect phase
           (protocol still unknown) fbclient reads it too. */
        if (protocol == 0 || protocol >= 14)
            TRY(ffbp_get_i32(r, &out->u.crypt_cb.reply_size));
        return FFBP_OK;
    default:
        return FFBP_EBAD;
    }
}

int ffbp_get_packet(ffbp_reader *r, int protocol, ffbp_packet *out,
                    ffbp_status_arg *status_args, size_t status_cap) {
    size_t save = r->pos;
    int rc = ffbp_get_i32(r, &out->op);
    if (rc != FFBP_OK)
        return rc;
    if (out->op == FFBP_OP_RESPONSE || out->op == FFBP_OP_RESPONSE_PIGGYBACK) {
        out->u.response.status.args = status_args;
        out->u.response.status.cap = status_args ? status_cap : 0;
    }
    rc = get_body(r, protocol, out);
    if (rc != FFBP_OK)
        r->pos = save;
    return rc;
}
