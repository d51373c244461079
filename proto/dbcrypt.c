/*
 * The client's answer to op_crypt_key_callback (protocol reference part
 * 01, 12.5).
 */
#include "proto/proto.h"

void ffbp_put_crypt_key_callback(ffbp_writer *w, const void *data, size_t len,
                                 int with_reply) {
    ffbp_put_i32(w, FFBP_OP_CRYPT_KEY_CALLBACK);
    ffbp_put_cstring(w, data, len);
    /* p_cc_reply: the answer carries 0 (fbclient), where the field exists
       (protocol 14+, or before the accept). */
    if (with_reply)
        ffbp_put_i16(w, 0);
}
