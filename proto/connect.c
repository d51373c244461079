/* Encoders for the connection-layer requests (protocol reference 01). */
#include "proto/proto.h"

void ffbp_put_connect(ffbp_writer *w, const ffbp_connect *c) {
    int count = c->max_version - c->min_version + 1;
    if (count < 0)
        count = 0;
    ffbp_put_i32(w, FFBP_OP_CONNECT);
    ffbp_put_i32(w, 0); /* p_cnct_operation: ignored by the server */
    ffbp_put_i16(w, FFBP_CONNECT_VERSION3);
    ffbp_put_i32(w, FFBP_ARCH_GENERIC);
    ffbp_put_cstring(w, c->file, c->file_len);
    ffbp_put_i16(w, (uint16_t)count);
    ffbp_put_cstring(w, c->user_id, c->user_id_len);
    for (int v = c->min_version; v <= c->max_version; v++) {
        uint16_t max_type = FFBP_PTYPE_LAZY_SEND;
        if (c->compress && v >= 13)
            max_type |= FFBP_PFLAG_COMPRESS;
        ffbp_put_i16(w, (uint16_t)FFBP_PROTOCOL(v));
        ffbp_put_i32(w, FFBP_ARCH_GENERIC);
        ffbp_put_u16(w, 0);        /* min type: unused by the server */
        ffbp_put_u16(w, max_type); /* unsigned on the wire */
        ffbp_put_i16(w, (uint16_t)(v * 2 - 18)); /* 8, 10, ... 20 */
    }
}

void ffbp_put_cont_auth(ffbp_writer *w, const void *data, size_t data_len,
                        const char *name, size_t name_len, const char *list,
                        size_t list_len) {
    ffbp_put_i32(w, FFBP_OP_CONT_AUTH);
    ffbp_put_cstring(w, data, data_len);
    ffbp_put_cstring(w, name, name_len);
    ffbp_put_cstring(w, list, list_len);
    ffbp_put_cstring(w, NULL, 0); /* keys: empty from the client */
}

void ffbp_put_crypt(ffbp_writer *w, const char *plugin, size_t plugin_len,
                    const char *key, size_t key_len) {
    ffbp_put_i32(w, FFBP_OP_CRYPT);
    ffbp_put_cstring(w, plugin, plugin_len);
    ffbp_put_cstring(w, key, key_len);
}

void ffbp_put_attach(ffbp_writer *w, int op, uint16_t object, const char *file,
                     size_t file_len, const uint8_t *dpb, size_t dpb_len) {
    ffbp_put_i32(w, op);
    ffbp_put_i16(w, object);
    ffbp_put_cstring(w, file, file_len);
    ffbp_put_cstring(w, dpb, dpb_len);
}

void ffbp_put_object_op(ffbp_writer *w, int op, uint16_t object) {
    ffbp_put_i32(w, op);
    ffbp_put_i16(w, object);
}

void ffbp_put_empty_op(ffbp_writer *w, int op) { ffbp_put_i32(w, op); }

void ffbp_put_info(ffbp_writer *w, int op, uint16_t object,
                   uint16_t incarnation, const uint8_t *items,
                   size_t items_len, uint32_t buffer_len) {
    ffbp_put_i32(w, op);
    ffbp_put_i16(w, object);
    ffbp_put_i16(w, incarnation);
    ffbp_put_cstring(w, items, items_len);
    ffbp_put_u32(w, buffer_len);
}
