/*
 * Database encryption keys: the application's answer to the server's
 * op_crypt_key_callback during the connect (docs/crypto.md). Sans-I/O: the
 * handshake hands the decoded request here, the answer is staged like
 * any handshake packet.
 */
#include <string.h>

#include "lib/internal.h"

/* Requests answered in one connect before the server is taken for
   hostile (a key holder asks once per key; 16 leaves room). */
#define MAX_KEY_REQUESTS 16

int ffb__hs_crypt_key(ffb_conn *conn, const ffbp_crypt_cb *cc) {
    if (++conn->crypt_key_asked > MAX_KEY_REQUESTS)
        return ffb__error_set(&conn->err, FFB_E_PROTO,
                              "the server asked for a database encryption "
                              "key more than %d times in one connect",
                              MAX_KEY_REQUESTS);
    /* The size the server takes: from the packet where it has the field
       (fbclient makes 0 or less 1); the field's largest value when
       protocol 13 leaves it out, and a hostile server's bigger number is
       cut to what a short holds (the server cuts a longer answer). */
    int present = conn->protocol == 0 || conn->protocol >= 14;
    size_t size = !present || cc->reply_size > FFB_CRYPT_KEY_MAX
                      ? FFB_CRYPT_KEY_MAX
                  : cc->reply_size <= 0 ? 1
                                        : (size_t)cc->reply_size;
    uint8_t *reply = NULL;
    size_t len = 0;
    if (conn->crypt_key_cb) {
        reply = ffb__malloc(conn->alloc, size);
        if (!reply)
            return ffb__error_set(&conn->err, FFB_E_NOMEM, "out of memory");
        memset(reply, 0, size);
        int n = conn->crypt_key_cb(conn->crypt_key_data, cc->data.p,
                                   cc->data.len, reply, size);
        if (n < 0 || (size_t)n > size) {
            if (conn->state == FFB__ST_READY) {
                /* After the connect: the request owed gets the server's
                   answer to an empty key. */
                n = 0;
            } else {
                ffbp_wipe(reply, size);
                ffb__free(conn->alloc, reply);
                if (n < 0)
                    return ffb__error_set(&conn->err, FFB_E_CRYPT,
                                          "the database encryption key "
                                          "callback refused the server's "
                                          "request (%d)",
                                          n);
                return ffb__error_set(&conn->err, FFB_E_CRYPT,
                                      "the database encryption key callback "
                                      "returned %d bytes; the server takes "
                                      "at most %zu",
                                      n, size);
            }
        }
        len = (size_t)n;
    }
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    w.secret = 1; /* key material: wiped when freed */
    ffbp_put_crypt_key_callback(&w, reply, len, present);
    if (reply) {
        ffbp_wipe(reply, size);
        ffb__free(conn->alloc, reply);
    }
    /* The server answers it: with the answer it owed before asking, or
       with the next request. */
    int rc = ffb__engine_queue(conn, &w, 1);
    ffbp_writer_free(&w);
    /* Queued while an answer is handled, it would wait for the answers
       owed - which the server gives only after this one: it goes now. */
    conn->stage_direct = 1;
    return rc;
}
