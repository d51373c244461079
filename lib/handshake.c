/*
 * Connect, authenticate, start wire encryption, attach.
 *
 * States (conn->hs) and the packets that move them:
 *
 *   ACCEPT  --op_cond_accept--------------------> AUTH  (op_cont_auth sent,
 *                                                        maybe + op_crypt)
 *   ACCEPT  --op_accept_data / op_accept--------> ATTACH (auth data in DPB)
 *   AUTH    --op_cont_auth (plugin switch/step)-> AUTH
 *   AUTH    --op_response ok, op_crypt pipelined-> CRYPT
 *   AUTH    --op_response ok, cipher agreed-----> CRYPT (op_crypt sent)
 *   AUTH    --op_response ok, no encryption-----> ATTACH
 *   CRYPT   --op_response ok--------------------> ATTACH (encrypted)
 *   ATTACH  --op_cont_auth----------------------> ATTACH (auth continues)
 *   ATTACH  --op_response ok--------------------> DONE
 *   any     --error / unexpected packet---------> FAILED
 *
 * Round trips with encryption: op_connect; op_cont_auth + op_crypt in one
 * write (the servers accept it, reference 01 section 10.4); op_attach.
 * Without: op_connect; op_attach with the proof in the DPB (flow B).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/internal.h"
#include "lib/wirecrypt.h"
#include "proto/service.h"

#define KEY_TYPE "Symmetric"
#define MAX_AUTH_ROUNDS 16

/* Secrets of the handshake: wiped as soon as the handshake ends, either
   way (docs/security.md). */
static void wipe_secrets(ffb_conn *conn) {
    OPENSSL_cleanse(&conn->srp, sizeof(conn->srp));
    conn->srp_active = 0;
    OPENSSL_cleanse(conn->session_key, sizeof(conn->session_key));
    OPENSSL_cleanse(conn->hs_dpb_data, sizeof(conn->hs_dpb_data));
    conn->hs_dpb_data_len = 0;
    /* Packets that held the proof or the hash. */
    if (conn->stage.data)
        OPENSSL_cleanse(conn->stage.data + conn->stage.len,
                        conn->stage.cap - conn->stage.len);
    if (conn->out.data)
        OPENSSL_cleanse(conn->out.data + conn->out.len,
                        conn->out.cap - conn->out.len);
    conn->stage.secret = conn->out.secret = 0;
}

void ffb__hs_wipe(ffb_conn *conn) { wipe_secrets(conn); }

static int fail(ffb_conn *conn, int code) {
    wipe_secrets(conn);
    conn->hs = FFB__HS_FAILED;
    conn->hs_finished = 1;
    ffb__hs_complete(conn, code);
    /* Whatever the code, a failed handshake leaves nothing to talk to:
       later bytes are not parsed (they would only bury the real error). */
    conn->state = FFB__ST_BROKEN;
    /* Every later call reports what ended it (a refused attach is
       FFB_E_SERVER, a wrong password FFB_E_AUTH, ...). */
    if (!conn->fatal_code)
        conn->fatal_code = code;
    conn->hs_rc = code;
    return code;
}

static int fail_msg(ffb_conn *conn, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail_msg(ffb_conn *conn, int code, const char *fmt, ...) {
    ffb__conn_error_clear(conn);
    conn->err.code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(conn->err.message, sizeof(conn->err.message), fmt, ap);
    va_end(ap);
    return fail(conn, code);
}

static int view_eq(ffbp_bytes b, const char *s) {
    size_t n = strlen(s);
    return b.len == n && (n == 0 || memcmp(b.p, s, n) == 0);
}

static int client_has_plugin(const ffb_conn *conn, const uint8_t *p,
                             size_t len) {
    for (size_t i = 0; i < conn->nplugins; i++)
        if (strlen(conn->plugins[i]) == len &&
            memcmp(conn->plugins[i], p, len) == 0)
            return 1;
    return 0;
}

/* ---- key list ------------------------------------------------------------ */

/*
 * Look up `plugin` under key type Symmetric in a key list (reference 01,
 * 5.4). *listed = 1 when the server names it; the IV = its
 * TAG_PLUGIN_SPECIFIC data (*iv, *iv_len) when present. Returns 0 or FFB_E_PROTO.
 */
static int keys_find(const uint8_t *keys, size_t len, const char *plugin,
                     int *listed, const uint8_t **iv, size_t *iv_len) {
    size_t pos = 0, plen = strlen(plugin);
    int in_sym = 0;
    uint8_t tag;
    const uint8_t *d;
    size_t n;
    int rc;
    *listed = 0;
    *iv = NULL;
    *iv_len = 0;
    while ((rc = ffbp_pb_next(keys, len, FFBP_PB_UNTAGGED, &pos, &tag, &d,
                              &n)) == 1) {
        if (tag == FFBP_TAG_KEY_TYPE) {
            in_sym = n == strlen(KEY_TYPE) && memcmp(d, KEY_TYPE, n) == 0;
        } else if (tag == FFBP_TAG_KEY_PLUGINS && in_sym) {
            size_t i = 0;
            while (i < n) {
                while (i < n && (d[i] == ' ' || d[i] == ',' || d[i] == '\t'))
                    i++;
                size_t s = i;
                while (i < n && d[i] != ' ' && d[i] != ',' && d[i] != '\t')
                    i++;
                if (i - s == plen && memcmp(d + s, plugin, plen) == 0)
                    *listed = 1;
            }
        } else if (tag == FFBP_TAG_PLUGIN_SPECIFIC && in_sym) {
            if (n > plen && memcmp(d, plugin, plen) == 0 && d[plen] == 0) {
                *iv = d + plen + 1;
                *iv_len = n - plen - 1;
            }
        }
    }
    return rc < 0 ? FFB_E_PROTO : 0;
}

static int iv_needed(const char *plugin) { return strcmp(plugin, "Arc4") != 0; }

/*
 * The cipher to request before the key list is known (op_crypt pipelined
 * with the proof): what a server of the negotiated protocol offers by
 * default - 15: Arc4; 16: ChaCha, Arc4; 17+: ChaCha64, ChaCha, Arc4 -
 * in the client's order of preference.
 */
static const char *guess_cipher(const ffb_conn *conn) {
    for (size_t i = 0; i < conn->nciphers; i++) {
        const char *c = conn->ciphers[i];
        if (strcmp(c, "Arc4") == 0)
            return c;
        if (strcmp(c, "ChaCha") == 0 && conn->protocol >= 16)
            return c;
        if (strcmp(c, "ChaCha64") == 0 && conn->protocol >= 17)
            return c;
    }
    return NULL;
}

static int make_ciphers(ffb_conn *conn, const char *plugin,
                        const uint8_t *iv, size_t iv_len,
                        struct ffb__cipher **tx, struct ffb__cipher **rx) {
    int rc = ffb__cipher_new(tx, conn->alloc, plugin, conn->session_key, 20,
                             iv, iv_len);
    if (rc == 0) {
        rc = ffb__cipher_new(rx, conn->alloc, plugin, conn->session_key, 20,
                             iv, iv_len);
        if (rc < 0) {
            ffb__cipher_free(*tx);
            *tx = NULL;
        }
    }
    /* The ciphers hold what they need: the key itself goes now. */
    OPENSSL_cleanse(conn->session_key, sizeof(conn->session_key));
    if (rc < 0)
        return fail_msg(conn, rc == FFB_E_NOMEM ? FFB_E_NOMEM : FFB_E_CRYPT,
                        "could not set up wire cipher %s (IV of %zu bytes)",
                        plugin, iv_len);
    return 0;
}

/* ---- plugin steps -------------------------------------------------------- */

/*
 * Run the current plugin. `first`: start it from its first step (server
 * data, if any, is stale and ignored). Output into out/out_len. *is_proof =
 * 1 when the output completes SRP (a session key exists afterwards).
 */
static int plugin_step(ffb_conn *conn, const uint8_t *data, size_t len,
                       int first, uint8_t *out, size_t out_size,
                       size_t *out_len, int *is_proof) {
    *is_proof = 0;
    const char *name = conn->cur_plugin;
    int hash = ffb__srp_hash_of(name, strlen(name));
    if (hash) {
        if (first || !conn->srp_active) {
            int rc = ffb__srp_init(&conn->srp, hash,
                                   conn->test_a_len ? conn->test_a : NULL,
                                   conn->test_a_len);
            if (rc < 0)
                return fail_msg(conn, rc,
                                "%s: could not generate the SRP key pair",
                                name);
            conn->srp_active = 1;
            if (conn->srp.A_hex_len > out_size)
                return fail_msg(conn, FFB_E_INVAL, "auth data too long");
            memcpy(out, conn->srp.A_hex, conn->srp.A_hex_len);
            *out_len = conn->srp.A_hex_len;
            conn->hs_final_sent = 0;
            return 0;
        }
        char proof[160];
        size_t plen = 0;
        int rc = ffb__srp_proof(&conn->srp, data, len, conn->login,
                                conn->login_len, conn->password,
                                strlen(conn->password), proof, sizeof(proof),
                                &plen, conn->session_key);
        if (rc < 0)
            return fail_msg(conn, rc == FFB_E_PROTO ? FFB_E_PROTO : FFB_E_AUTH,
                            "%s: the server's SRP data (%zu bytes: salt and "
                            "public key B) is not usable",
                            name, len);
        conn->have_key = 1;
        conn->srp_active = 0;
        memcpy(out, proof, plen);
        OPENSSL_cleanse(proof, sizeof(proof));
        *out_len = plen;
        *is_proof = 1;
        conn->hs_final_sent = 1;
        return 0;
    }
    if (strcmp(name, "Legacy_Auth") == 0) {
        /* Legacy_Auth yields no session key: with encryption required its
           hash (as good as the password) never leaves the client. */
        if (conn->wire_crypt == FFB_CRYPT_REQUIRED)
            return fail_msg(conn, FFB_E_CRYPT,
                            "wire encryption is required by the client, but "
                            "the server asks for plugin Legacy_Auth, which "
                            "produces no session key (nothing was sent)");
        char h[12];
        int rc = ffb__legacy_hash(conn->password, strlen(conn->password), h);
        if (rc < 0)
            return fail_msg(conn, FFB_E_CRYPT,
                            "Legacy_Auth: could not hash the password");
        memcpy(out, h, 11);
        OPENSSL_cleanse(h, sizeof(h));
        *out_len = 11;
        conn->hs_final_sent = 1;
        return 0;
    }
    return fail_msg(conn, FFB_E_AUTH,
                    "authentication plugin \"%s\" is not implemented", name);
}

/*
 * The server named `name` (maybe empty = keep the current plugin) with
 * `data`. Switch plugin if needed and produce our answer.
 */
static int auth_answer(ffb_conn *conn, ffbp_bytes name, ffbp_bytes data,
                       uint8_t *out, size_t out_size, size_t *out_len,
                       int *is_proof) {
    int first = 0;
    if (name.len && !view_eq(name, conn->cur_plugin)) {
        if (!client_has_plugin(conn, name.p, name.len) ||
            name.len >= FFB__PLUGIN_NAME)
            return fail_msg(conn, FFB_E_AUTH,
                            "login failed for user \"%s\": the server wants "
                            "authentication plugin \"%.*s\", which is not in "
                            "the client's list \"%s\"",
                            conn->user, (int)name.len, (const char *)name.p,
                            conn->plugin_list);
        memcpy(conn->cur_plugin, name.p, name.len);
        conn->cur_plugin[name.len] = '\0';
        conn->srp_active = 0;
        first = 1; /* the data that came with a switch is stale */
    }
    if (++conn->hs_rounds > MAX_AUTH_ROUNDS)
        return fail_msg(conn, FFB_E_AUTH,
                        "login failed for user \"%s\": too many "
                        "authentication rounds",
                        conn->user);
    return plugin_step(conn, data.p, data.len, first, out, out_size, out_len,
                       is_proof);
}

/* ---- packets we send ------------------------------------------------------ */

static int queue(ffb_conn *conn, ffbp_writer *w, int expects) {
    int rc = ffb__engine_queue(conn, w, expects);
    ffbp_writer_free(w);
    return rc < 0 ? fail(conn, rc) : 0;
}

static int build_user_id(ffb_conn *conn, ffbp_writer *w, const uint8_t *data,
                         size_t len) {
    ffbp_pb pb;
    ffbp_pb_begin(&pb, w, FFBP_PB_UNTAGGED);
    ffbp_pb_str(&pb, FFBP_CNCT_LOGIN, conn->user);
    ffbp_pb_str(&pb, FFBP_CNCT_PLUGIN_NAME, conn->cur_plugin);
    ffbp_pb_str(&pb, FFBP_CNCT_PLUGIN_LIST, conn->plugin_list);
    /* Plugin data in parts of at most 254 bytes, each led by its number. */
    for (size_t off = 0, seq = 0; off < len; seq++) {
        size_t n = len - off > 254 ? 254 : len - off;
        uint8_t part[255];
        part[0] = (uint8_t)seq;
        memcpy(part + 1, data + off, n);
        ffbp_pb_bytes(&pb, FFBP_CNCT_SPECIFIC_DATA, part, n + 1);
        OPENSSL_cleanse(part, sizeof(part));
        off += n;
    }
    /* On the wire: 0 Disabled, 1 Enabled, 2 Required. */
    ffbp_pb_int(&pb, FFBP_CNCT_CLIENT_CRYPT,
                conn->wire_crypt == FFB_CRYPT_DISABLED   ? 0
                : conn->wire_crypt == FFB_CRYPT_REQUIRED ? 2
                                                         : 1);
    ffbp_pb_str(&pb, FFBP_CNCT_USER, conn->os_user);
    ffbp_pb_str(&pb, FFBP_CNCT_HOST, conn->client_host);
    ffbp_pb_flag(&pb, FFBP_CNCT_USER_VERIFICATION);
    if (pb.bad)
        return fail_msg(conn, FFB_E_INVAL,
                        "user name, host name or plugin list longer than "
                        "255 bytes");
    return 0;
}

/* The login answer when it rides in the attach (flows B and C; protocol
   < 13: the Legacy_Auth hash), under the DPB's or the SPB's tags. */
static void put_login_data(ffb_conn *conn, ffbp_pb *pb, uint8_t enc_tag,
                           uint8_t name_tag, uint8_t list_tag,
                           uint8_t data_tag) {
    if (conn->hs_dpb_legacy) {
        ffbp_pb_bytes(pb, enc_tag, conn->hs_dpb_data, conn->hs_dpb_data_len);
    } else if (conn->hs_dpb_auth) {
        ffbp_pb_str(pb, name_tag, conn->cur_plugin);
        ffbp_pb_str(pb, list_tag, conn->plugin_list);
        ffbp_pb_bytes(pb, data_tag, conn->hs_dpb_data,
                      conn->hs_dpb_data_len);
    }
}

/* op_service_attach (reference 03, C.6.1-C.6.2): the same login as a
   database attach, in an SPB - "02 02" with one-byte lengths, or the wide
   form "03" (four-byte lengths) when the plugin data is longer than 255. */
static int send_service_attach(ffb_conn *conn) {
    ffbp_writer spbw, w;
    ffbp_writer_init(&spbw, conn->alloc);
    spbw.secret = 1;
    int big = conn->hs_dpb_auth && conn->hs_dpb_data_len > 255;
    ffbp_pb pb;
    if (big) {
        ffbp_pb_begin(&pb, &spbw, FFBP_PB_V2); /* the body of the wide form */
        if (spbw.len)
            spbw.data[0] = FFBP_SPB_VERSION3;
    } else {
        uint8_t v[2] = {FFBP_SPB_VERSION, FFBP_SPB_VERSION};
        ffbp_put_raw(&spbw, v, 2);
        ffbp_pb_begin(&pb, &spbw, FFBP_PB_UNTAGGED);
    }
    ffbp_pb_str(&pb, FFBP_SPB_USER_NAME, conn->user);
    if (conn->role && conn->role[0])
        ffbp_pb_str(&pb, FFBP_SPB_SQL_ROLE_NAME, conn->role);
    ffbp_pb_flag(&pb, FFBP_SPB_UTF8_FILENAME);
    ffbp_pb_int(&pb, FFBP_SPB_PROCESS_ID, conn->process_id);
    ffbp_pb_str(&pb, FFBP_SPB_PROCESS_NAME, conn->process_name);
    put_login_data(conn, &pb, FFBP_SPB_PASSWORD_ENC, FFBP_SPB_AUTH_PLUGIN_NAME,
                   FFBP_SPB_AUTH_PLUGIN_LIST, FFBP_SPB_SPECIFIC_AUTH_DATA);
    if (pb.bad) {
        ffbp_writer_free(&spbw);
        return fail_msg(conn, FFB_E_INVAL,
                        "a service parameter (user, role or process name) "
                        "is longer than 255 bytes");
    }
    ffbp_writer_init(&w, conn->alloc);
    w.secret = 1;
    ffbp_put_attach(&w, FFBP_OP_SERVICE_ATTACH, 0, FFB__SERVICE_NAME,
                    strlen(FFB__SERVICE_NAME), spbw.data, spbw.len);
    ffbp_writer_free(&spbw);
    OPENSSL_cleanse(conn->hs_dpb_data, sizeof(conn->hs_dpb_data));
    conn->hs = FFB__HS_ATTACH;
    return queue(conn, &w, 1);
}

/* The op_ping behind the allocations that rode with op_attach: its answer
   pushes theirs out, and the connect is complete. */
static int spares_ping_reply(ffb_conn *conn, const ffbp_packet *pkt,
                             ffb__pending *p) {
    if (!ffb__reply_response(conn, pkt, p))
        return FFB_E_PROTO;
    if (conn->hs_spares) {
        conn->hs_spares = 0;
        conn->hs_finished = 1;
        ffb__hs_complete(conn, 0);
    }
    return 0;
}

/*
 * With shared format memory (ffb_conn_options.formats), spare statement
 * handles ride with op_attach: op_allocate_statement x FFB__SPARES_AHEAD
 * and an op_ping that flushes their held answers, all in the attach's
 * write. The connect reads them with the attach's answer (no round trip
 * more), so the first ffb_conn_prepare() of a text another connection
 * prepared rides prepare + execute + fetch in one write on a spare
 * handle. Only when the attach's answer is final (the login is done
 * before it, not carried in its DPB): an op_cont_auth in its place would
 * leave the allocations unattached. They fail harmlessly when the attach
 * does (the connect reports the attach's error).
 */
static int queue_spares(ffb_conn *conn) {
    if (!conn->formats || !conn->lazy || conn->hs_dpb_auth || conn->service)
        return 0;
    int rc = conn->on_spares(conn, FFB__SPARES_AHEAD);
    if (rc < 0)
        return fail(conn, rc);
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_empty_op(&w, FFBP_OP_PING);
    if ((rc = queue(conn, &w, 1)) < 0)
        return rc;
    if (!ffb__engine_expect(conn, FFBP_OP_PING, spares_ping_reply, NULL))
        return fail(conn, FFB_E_NOMEM);
    conn->hs_spares = 1;
    return 0;
}

static int send_attach(ffb_conn *conn) {
    if (conn->service)
        return send_service_attach(conn);
    ffbp_writer dpbw, w;
    ffbp_writer_init(&dpbw, conn->alloc);
    dpbw.secret = 1;
    int big = conn->hs_dpb_auth && conn->hs_dpb_data_len > 255;
    ffbp_pb pb;
    ffbp_pb_begin(&pb, &dpbw, big ? FFBP_PB_V2 : FFBP_PB_V1);
    ffbp_pb_str(&pb, FFBP_DPB_USER_NAME, conn->user);
    ffbp_pb_str(&pb, FFBP_DPB_LC_CTYPE, conn->charset);
    if (conn->role && conn->role[0])
        ffbp_pb_str(&pb, FFBP_DPB_SQL_ROLE_NAME, conn->role);
    ffbp_pb_flag(&pb, FFBP_DPB_UTF8_FILENAME);
    ffbp_pb_int(&pb, FFBP_DPB_PROCESS_ID, conn->process_id);
    ffbp_pb_str(&pb, FFBP_DPB_PROCESS_NAME, conn->process_name);
    if (conn->hs_create) {
        const ffb_create_options *o = &conn->hs_copts;
        if (o->page_size > 0)
            ffbp_pb_int(&pb, FFBP_DPB_PAGE_SIZE, o->page_size);
        if (o->charset && o->charset[0])
            ffbp_pb_str(&pb, FFBP_DPB_SET_DB_CHARSET, o->charset);
        ffbp_pb_int(&pb, FFBP_DPB_SQL_DIALECT, o->dialect ? o->dialect : 3);
        if (o->overwrite)
            ffbp_pb_int(&pb, FFBP_DPB_OVERWRITE, 1);
        if (o->force_write >= 0)
            ffbp_pb_int(&pb, FFBP_DPB_FORCE_WRITE, o->force_write);
    } else if (conn->dialect && conn->dialect != 3) {
        ffbp_pb_int(&pb, FFBP_DPB_SQL_DIALECT, conn->dialect);
    }
    put_login_data(conn, &pb, FFBP_DPB_PASSWORD_ENC, FFBP_DPB_AUTH_PLUGIN_NAME,
                   FFBP_DPB_AUTH_PLUGIN_LIST, FFBP_DPB_SPECIFIC_AUTH_DATA);
    if (pb.bad) {
        ffbp_writer_free(&dpbw);
        return fail_msg(conn, FFB_E_INVAL,
                        "a database parameter (user, role, charset or "
                        "process name) is longer than 255 bytes");
    }
    ffbp_writer_init(&w, conn->alloc);
    w.secret = 1;
    ffbp_put_attach(&w, conn->hs_create ? FFBP_OP_CREATE : FFBP_OP_ATTACH, 0,
                    conn->database, strlen(conn->database), dpbw.data,
                    dpbw.len);
    ffbp_writer_free(&dpbw);
    /* The DPB copy of the answer is not needed any more. */
    OPENSSL_cleanse(conn->hs_dpb_data, sizeof(conn->hs_dpb_data));
    conn->hs = FFB__HS_ATTACH;
    int rc = queue(conn, &w, 1);
    if (rc == 0)
        rc = queue_spares(conn);
    return rc;
}

static int send_cont_auth(ffb_conn *conn, const uint8_t *data, size_t len) {
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    w.secret = 1;
    ffbp_put_cont_auth(&w, data, len, conn->cur_plugin,
                       strlen(conn->cur_plugin), "", 0);
    return queue(conn, &w, 1);
}

static int send_crypt(ffb_conn *conn, const char *plugin) {
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_crypt(&w, plugin, strlen(plugin), KEY_TYPE, strlen(KEY_TYPE));
    snprintf(conn->crypt_chosen, sizeof(conn->crypt_chosen), "%s", plugin);
    return queue(conn, &w, 1);
}

/* ---- decisions ------------------------------------------------------------ */

/* After authentication succeeded without a pipelined op_crypt: encrypt if
   we can and want to, then attach. */
static int after_auth(ffb_conn *conn) {
    const char *choice = NULL;
    const uint8_t *iv = NULL;
    size_t iv_len = 0;
    char offered[128] = "";
    if (conn->have_key && conn->wire_crypt != FFB_CRYPT_DISABLED) {
        for (size_t i = 0; i < conn->nciphers && !choice; i++) {
            int listed;
            if (keys_find(conn->hs_keys, conn->hs_keys_len, conn->ciphers[i],
                          &listed, &iv, &iv_len) < 0)
                return fail_msg(conn, FFB_E_PROTO,
                                "malformed key list from the server");
            if (listed && (!iv_needed(conn->ciphers[i]) || iv_len))
                choice = conn->ciphers[i];
        }
    }
    if (!choice) {
        if (conn->wire_crypt == FFB_CRYPT_REQUIRED) {
            size_t pos = 0, n;
            uint8_t tag;
            const uint8_t *d;
            while (ffbp_pb_next(conn->hs_keys, conn->hs_keys_len,
                                FFBP_PB_UNTAGGED, &pos, &tag, &d, &n) == 1)
                if (tag == FFBP_TAG_KEY_PLUGINS)
                    snprintf(offered, sizeof(offered), "%.*s", (int)n,
                             (const char *)d);
            return fail_msg(
                conn, FFB_E_CRYPT,
                "wire encryption is required by the client, but none could "
                "be started: %s (server offers \"%s\", client accepts "
                "\"%s%s%s%s%s\")",
                conn->have_key ? "no common cipher"
                               : "the authentication plugin produced no key",
                offered, conn->nciphers > 0 ? conn->ciphers[0] : "",
                conn->nciphers > 1 ? "," : "",
                conn->nciphers > 1 ? conn->ciphers[1] : "",
                conn->nciphers > 2 ? "," : "",
                conn->nciphers > 2 ? conn->ciphers[2] : "");
        }
        return send_attach(conn);
    }
    /* The receive cipher starts with the next byte: bytes already here
       behind the authentication answer were received in clear, before
       op_crypt was even sent - no server sends them. */
    if (conn->in.len > conn->in_pos || conn->wire_pos < conn->wire_in.len ||
        conn->z_more)
        return fail_msg(conn, FFB_E_PROTO,
                        "the server sent data behind its authentication "
                        "answer, before op_crypt was sent");
    struct ffb__cipher *tx = NULL, *rx = NULL;
    int rc = make_ciphers(conn, choice, iv, iv_len, &tx, &rx);
    if (rc < 0)
        return rc;
    rc = send_crypt(conn, choice);
    if (rc < 0) {
        ffb__cipher_free(tx);
        ffb__cipher_free(rx);
        return rc;
    }
    /* op_crypt goes out in clear; its answer is already encrypted. */
    conn->tx_next = tx;
    ffb__cipher_free(conn->rx_cipher);
    conn->rx_cipher = rx;
    conn->hs = FFB__HS_CRYPT;
    return 0;
}

/* The answer to a proof that had op_crypt pipelined behind it. */
static int after_auth_pipelined(ffb_conn *conn) {
    int listed;
    const uint8_t *iv;
    size_t iv_len;
    if (keys_find(conn->hs_keys, conn->hs_keys_len, conn->crypt_chosen,
                  &listed, &iv, &iv_len) < 0)
        return fail_msg(conn, FFB_E_PROTO,
                        "malformed key list from the server");
    if (!listed || (iv_needed(conn->crypt_chosen) && !iv_len))
        return fail_msg(conn, FFB_E_CRYPT,
                        "the server does not offer wire cipher %s, which "
                        "was requested together with the login proof; "
                        "connect with pipeline_crypt disabled or adjust "
                        "wire_crypt_plugins",
                        conn->crypt_chosen);
    struct ffb__cipher *tx = NULL, *rx = NULL;
    int rc = make_ciphers(conn, conn->crypt_chosen, iv, iv_len, &tx, &rx);
    if (rc < 0)
        return rc;
    ffb__cipher_free(conn->tx_cipher);
    conn->tx_cipher = tx;
    conn->rx_next = rx; /* installed right after this packet */
    conn->hs = FFB__HS_CRYPT;
    return 0;
}

static int add_keys(ffb_conn *conn, ffbp_bytes keys) {
    if (keys.len == 0)
        return 0;
    if (keys.len > sizeof(conn->hs_keys) - conn->hs_keys_len)
        return fail_msg(conn, FFB_E_PROTO,
                        "the server's key list is too long (%u bytes)",
                        (unsigned)keys.len);
    memcpy(conn->hs_keys + conn->hs_keys_len, keys.p, keys.len);
    conn->hs_keys_len += keys.len;
    return 0;
}

/* ---- errors from the server ------------------------------------------------ */

static int server_error(ffb_conn *conn, const ffbp_response *resp,
                        const char *during) {
    uint32_t gds = ffb__status_first_gds(&resp->status);
    char prefix[512];
    int code = FFB_E_SERVER;
    switch (gds) {
    case FFBP_GDS_LOGIN:
    case FFBP_GDS_LOGIN_ERROR:
        code = FFB_E_AUTH;
        snprintf(prefix, sizeof(prefix),
                 "login failed for user \"%s\" (%s, plugin %s)", conn->user,
                 during, conn->cur_plugin);
        break;
    case FFBP_GDS_WIRECRYPT_INCOMPATIBLE:
        code = FFB_E_CRYPT;
        snprintf(prefix, sizeof(prefix),
                 "wire encryption levels are incompatible: the client's "
                 "setting is %s, and the server's must be %s",
                 conn->wire_crypt == FFB_CRYPT_DISABLED ? "Disabled"
                 : conn->wire_crypt == FFB_CRYPT_REQUIRED ? "Required"
                                                           : "Enabled",
                 conn->wire_crypt == FFB_CRYPT_DISABLED
                     ? "Required (encryption disabled on the client, "
                       "required by the server)"
                     : "Disabled (encryption required by the client, "
                       "disabled on the server)");
        break;
    case FFBP_GDS_MISS_WIRECRYPT:
        code = FFB_E_CRYPT;
        snprintf(prefix, sizeof(prefix),
                 "the server requires wire encryption, but the connection is "
                 "not encrypted (client wire_crypt %s, plugin %s produced %s)",
                 conn->wire_crypt == FFB_CRYPT_DISABLED ? "Disabled"
                                                        : "Enabled",
                 conn->cur_plugin, conn->have_key ? "a key" : "no key");
        break;
    default:
        snprintf(prefix, sizeof(prefix), "%s failed", during);
        break;
    }
    ffb__error_from_status(&conn->err, code, &resp->status, prefix);
    return fail(conn, code);
}

/* ---- the state machine ----------------------------------------------------- */

int ffb__hs_start(ffb_conn *conn, int create, const ffb_create_options *copts) {
    conn->service = create == FFB__HS_SERVICE;
    conn->hs_create = create == 1;
    if (copts)
        conn->hs_copts = *copts;
    else
        conn->hs_copts = (ffb_create_options)FFB_CREATE_OPTIONS_INIT;
    conn->hs_rounds = 0;
    conn->crypt_key_asked = 0;
    conn->hs_rc = 0;
    conn->hs_finished = 0;
    conn->hs_dpb_auth = 0;
    conn->hs_dpb_legacy = 0;
    conn->hs_keys_len = 0;
    conn->crypt_pipelined = 0;
    conn->hs_final_sent = 0;
    conn->crypt_chosen[0] = '\0';
    snprintf(conn->cur_plugin, sizeof(conn->cur_plugin), "%s",
             conn->plugins[0]);
    if (ffb__login_normalize(conn->user, strlen(conn->user), conn->login,
                             sizeof(conn->login), &conn->login_len) < 0)
        return fail_msg(conn, FFB_E_INVAL,
                        "user name \"%s\" is not valid (unbalanced quotes "
                        "or longer than 255 bytes)",
                        conn->user);

    /* Packets of the handshake carry the proof or the hash: their buffers
       are wiped when they move and when the handshake ends. */
    conn->stage.secret = conn->out.secret = 1;
    uint8_t data[300];
    size_t len = 0;
    int is_proof;
    int rc = plugin_step(conn, NULL, 0, 1, data, sizeof(data), &len,
                         &is_proof);
    if (rc < 0)
        return rc;
    ffbp_writer uid, w;
    ffbp_writer_init(&uid, conn->alloc);
    uid.secret = 1;
    rc = build_user_id(conn, &uid, data, len);
    OPENSSL_cleanse(data, sizeof(data));
    if (rc < 0) {
        ffbp_writer_free(&uid);
        return rc;
    }
    /* A service connection names the service manager in op_connect
       (fbclient's attachSvc): FB3 accepts only that name (C.6.1). */
    const char *file = conn->service ? FFB__SERVICE_NAME : conn->database;
    ffbp_connect c = {file, strlen(file), uid.data,
                      uid.len, conn->min_protocol, FFBP_PROTOCOL_MAX,
                      conn->compress};
    ffbp_writer_init(&w, conn->alloc);
    w.secret = 1;
    ffbp_put_connect(&w, &c);
    ffbp_writer_free(&uid);
    conn->hs = FFB__HS_ACCEPT;
    conn->state = FFB__ST_HANDSHAKE;
    return queue(conn, &w, 1);
}

static int accept_body(ffb_conn *conn, const ffbp_packet *pkt, uint8_t *out,
                       size_t out_size) {
    const ffbp_accept *a = &pkt->u.accept;
    unsigned v = a->version;
    int proto = (int)(v & FFBP_PROTOCOL_MASK);
    if ((v != 10 && !(v & FFBP_PROTOCOL_FLAG)) || proto < conn->min_protocol ||
        proto > FFBP_PROTOCOL_MAX ||
        (proto < 13 && pkt->op != FFBP_OP_ACCEPT))
        return fail_msg(conn, FFB_E_PROTO,
                        "%s chose protocol version 0x%04X, which the client "
                        "did not offer (%d..19)",
                        ffbp_op_name(pkt->op), v, conn->min_protocol);
    if (a->arch != FFBP_ARCH_GENERIC)
        return fail_msg(conn, FFB_E_PROTO,
                        "%s chose architecture %d; the client offered only "
                        "the generic one (1)",
                        ffbp_op_name(pkt->op), (int)a->arch);
    int ptype = a->type & FFBP_PTYPE_MASK;
    if (ptype < FFBP_PTYPE_BATCH_SEND || ptype > FFBP_PTYPE_LAZY_SEND)
        return fail_msg(conn, FFB_E_PROTO,
                        "%s chose packet type %d; expected 3..5",
                        ffbp_op_name(pkt->op), ptype);
    int compress = (a->type & FFBP_PFLAG_COMPRESS) != 0;
    if (compress && (!conn->compress || proto < 13))
        return fail_msg(conn, FFB_E_PROTO,
                        "the server switched on compression, which the "
                        "client did not request");
    conn->protocol = proto;
    conn->ptype = ptype;
    conn->lazy = ptype == FFBP_PTYPE_LAZY_SEND;
    if (compress) {
        int rc = ffb__engine_start_compression(conn);
        if (rc < 0)
            return fail(conn, rc);
    }
    int rc = add_keys(conn, a->keys);
    if (rc < 0)
        return rc;

    size_t len = 0;
    int is_proof = 0;
    if (pkt->op == FFBP_OP_ACCEPT && proto < 13) {
        /* Before plugins (Firebird 1.x/2.x): the Legacy_Auth hash travels
           as isc_dpb_password_enc; no key, so no encryption. */
        if (conn->wire_crypt == FFB_CRYPT_REQUIRED)
            return fail_msg(conn, FFB_E_CRYPT,
                            "wire encryption is required by the client, but "
                            "the server speaks protocol %d, which has none",
                            proto);
        char h[12];
        if (ffb__legacy_hash(conn->password, strlen(conn->password), h) < 0)
            return fail_msg(conn, FFB_E_CRYPT,
                            "Legacy_Auth: could not hash the password");
        snprintf(conn->cur_plugin, sizeof(conn->cur_plugin), "Legacy_Auth");
        memcpy(conn->hs_dpb_data, h, 11);
        OPENSSL_cleanse(h, sizeof(h));
        conn->hs_dpb_data_len = 11;
        conn->hs_dpb_legacy = 1;
        conn->hs_final_sent = 1;
        return send_attach(conn);
    }
    if (pkt->op == FFBP_OP_ACCEPT) {
        /* Flow C: no authentication before the attach, so no key and no
           op_crypt can ever come: a client that requires encryption stops
           here, before anything more is sent. */
        if (conn->wire_crypt == FFB_CRYPT_REQUIRED)
            return fail_msg(conn, FFB_E_CRYPT,
                            "wire encryption is required by the client, but "
                            "the server accepted the connection without an "
                            "authentication exchange (op_accept, protocol "
                            "%d), so it cannot be encrypted; nothing was "
                            "sent",
                            proto);
        /* The plugin's first step travels in the DPB. */
        rc = plugin_step(conn, NULL, 0, 1, out, out_size, &len, &is_proof);
        if (rc < 0)
            return rc;
        memcpy(conn->hs_dpb_data, out, len);
        conn->hs_dpb_data_len = len;
        conn->hs_dpb_auth = 1;
        return send_attach(conn);
    }
    if (pkt->op == FFBP_OP_ACCEPT_DATA) {
        /* Flow B (the answer in the DPB of op_attach) and an accept that
           says the login is done both attach without op_crypt: never when
           the client requires encryption, and nothing is computed or sent
           for it. */
        if (conn->wire_crypt == FFB_CRYPT_REQUIRED)
            return fail_msg(conn, FFB_E_CRYPT,
                            "wire encryption is required by the client, but "
                            "the server disabled it (op_accept_data%s); "
                            "nothing was sent",
                            a->authenticated ? ", login already complete"
                                             : "");
        if (a->authenticated)
            return send_attach(conn);
        rc = auth_answer(conn, a->plugin, a->data, out, out_size, &len,
                         &is_proof);
        if (rc < 0)
            return rc;
        memcpy(conn->hs_dpb_data, out, len);
        conn->hs_dpb_data_len = len;
        conn->hs_dpb_auth = 1;
        return send_attach(conn);
    }
    /* op_cond_accept: authenticate now, on the bare connection (flow A). */
    rc = auth_answer(conn, a->plugin, a->data, out, out_size, &len,
                     &is_proof);
    if (rc < 0)
        return rc;
    rc = send_cont_auth(conn, out, len);
    if (rc < 0)
        return rc;
    conn->hs = FFB__HS_AUTH;
    if (is_proof && conn->pipeline_crypt &&
        conn->wire_crypt != FFB_CRYPT_DISABLED) {
        const char *guess = guess_cipher(conn);
        if (guess) {
            rc = send_crypt(conn, guess);
            if (rc < 0)
                return rc;
            conn->crypt_pipelined = 1;
            conn->rx_bytewise = 1;
        }
    }
    return 0;
}

static int on_accept(ffb_conn *conn, const ffbp_packet *pkt) {
    uint8_t out[300];
    int rc = accept_body(conn, pkt, out, sizeof(out));
    OPENSSL_cleanse(out, sizeof(out));
    return rc;
}

static int cont_auth_body(ffb_conn *conn, const ffbp_cont_auth *ca,
                          int in_attach, uint8_t *out, size_t out_size) {
    /* Authentication inside the attach runs on a connection that is not
       encrypted unless op_crypt went first: with encryption required,
       nothing is computed or sent for it. */
    if (in_attach && conn->wire_crypt == FFB_CRYPT_REQUIRED &&
        !conn->tx_cipher)
        return fail_msg(conn, FFB_E_CRYPT,
                        "wire encryption is required by the client, but the "
                        "server continues authentication (plugin \"%.*s\") "
                        "on an unencrypted attach; nothing was sent",
                        (int)ca->name.len,
                        ca->name.p ? (const char *)ca->name.p : "");
    int rc = add_keys(conn, ca->keys);
    if (rc < 0)
        return rc;
    if (conn->crypt_pipelined)
        return fail_msg(conn, FFB_E_AUTH,
                        "login failed for user \"%s\": the server rejected "
                        "the %s proof and asked for plugin \"%.*s\" (check "
                        "the password)",
                        conn->user, conn->cur_plugin, (int)ca->name.len,
                        ca->name.p ? (const char *)ca->name.p : "");
    size_t len = 0;
    int is_proof = 0;
    rc = auth_answer(conn, ca->name, ca->data, out, out_size, &len,
                     &is_proof);
    if (rc < 0)
        return rc;
    rc = send_cont_auth(conn, out, len);
    if (rc < 0)
        return rc;
    if (!in_attach && is_proof && conn->pipeline_crypt &&
        conn->wire_crypt != FFB_CRYPT_DISABLED) {
        const char *guess = guess_cipher(conn);
        if (guess) {
            rc = send_crypt(conn, guess);
            if (rc < 0)
                return rc;
            conn->crypt_pipelined = 1;
            conn->rx_bytewise = 1;
        }
    }
    return 0;
}

static int on_cont_auth(ffb_conn *conn, const ffbp_cont_auth *ca,
                        int in_attach) {
    uint8_t out[300];
    int rc = cont_auth_body(conn, ca, in_attach, out, sizeof(out));
    OPENSSL_cleanse(out, sizeof(out));
    return rc;
}

static int unexpected(ffb_conn *conn, const ffbp_packet *pkt) {
    char d[200];
    ffbp_describe(d, sizeof(d), pkt);
    return fail_msg(conn, FFB_E_PROTO,
                    "unexpected packet during the handshake: %s", d);
}

int ffb__hs_packet(ffb_conn *conn, const ffbp_packet *pkt) {
    int rc;
    switch (pkt->op) {
    case FFBP_OP_CRYPT_KEY_CALLBACK:
        /* The server wants a database key before it answers what it was
           asked: answer, and keep waiting for that answer. */
        rc = ffb__hs_crypt_key(conn, &pkt->u.crypt_cb);
        return rc < 0 ? fail(conn, rc) : 0;
    case FFBP_OP_TRUSTED_AUTH:
        return fail_msg(conn, FFB_E_UNSUPPORTED,
                        "the server asks for trusted authentication, which "
                        "is not supported");
    default:
        break;
    }
    switch (conn->hs) {
    case FFB__HS_ACCEPT:
        if (pkt->op == FFBP_OP_ACCEPT || pkt->op == FFBP_OP_ACCEPT_DATA ||
            pkt->op == FFBP_OP_COND_ACCEPT)
            return on_accept(conn, pkt);
        if (pkt->op == FFBP_OP_REJECT)
            return fail_msg(conn, FFB_E_PROTO,
                            "the server rejected every protocol version "
                            "offered (13..19): Firebird 3.0 or newer is "
                            "required");
        if (pkt->op == FFBP_OP_RESPONSE ||
            pkt->op == FFBP_OP_RESPONSE_PIGGYBACK) {
            if (!ffb__status_is_error(&pkt->u.response.status))
                return fail_msg(conn, FFB_E_PROTO,
                                "the server answered op_connect with a "
                                "success op_response instead of an accept");
            return server_error(conn, &pkt->u.response, "connect");
        }
        if (pkt->op == FFBP_OP_CONT_AUTH)
            return fail_msg(conn, FFB_E_PROTO,
                            "the server answered op_connect with a bare "
                            "op_cont_auth (no accept packet)");
        return unexpected(conn, pkt);

    case FFB__HS_AUTH:
        if (pkt->op == FFBP_OP_CONT_AUTH)
            return on_cont_auth(conn, &pkt->u.cont_auth, 0);
        if (pkt->op == FFBP_OP_RESPONSE ||
            pkt->op == FFBP_OP_RESPONSE_PIGGYBACK) {
            if (ffb__status_is_error(&pkt->u.response.status))
                return server_error(conn, &pkt->u.response,
                                    "authentication");
            rc = add_keys(conn, pkt->u.response.data);
            if (rc < 0)
                return rc;
            /* The plugin is reported only when its exchange completed
               (proof or hash sent); a server that lets the client in
               earlier did not authenticate it with that plugin. */
            if (conn->hs_final_sent)
                snprintf(conn->auth_used, sizeof(conn->auth_used), "%s",
                         conn->cur_plugin);
            if (conn->crypt_pipelined)
                return after_auth_pipelined(conn);
            return after_auth(conn);
        }
        return unexpected(conn, pkt);

    case FFB__HS_CRYPT:
        if (pkt->op == FFBP_OP_RESPONSE ||
            pkt->op == FFBP_OP_RESPONSE_PIGGYBACK) {
            if (ffb__status_is_error(&pkt->u.response.status)) {
                server_error(conn, &pkt->u.response, "op_crypt");
                conn->err.code = FFB_E_CRYPT;
                return fail(conn, FFB_E_CRYPT);
            }
            snprintf(conn->crypt_used, sizeof(conn->crypt_used), "%s",
                     conn->crypt_chosen);
            return send_attach(conn);
        }
        return unexpected(conn, pkt);

    case FFB__HS_ATTACH:
        if (pkt->op == FFBP_OP_CONT_AUTH)
            return on_cont_auth(conn, &pkt->u.cont_auth, 1);
        if (pkt->op == FFBP_OP_RESPONSE ||
            pkt->op == FFBP_OP_RESPONSE_PIGGYBACK) {
            if (ffb__status_is_error(&pkt->u.response.status))
                return server_error(conn, &pkt->u.response,
                                    conn->service    ? "service attach"
                                    : conn->hs_create ? "create database"
                                                      : "attach");
            /* Required means encrypted: checked again where it counts. */
            if (conn->wire_crypt == FFB_CRYPT_REQUIRED && !conn->tx_cipher)
                return fail_msg(conn, FFB_E_CRYPT,
                                "wire encryption is required by the client, "
                                "but the attach completed on an unencrypted "
                                "connection; it is not used");
            if (!conn->auth_used[0] && conn->hs_final_sent)
                snprintf(conn->auth_used, sizeof(conn->auth_used), "%s",
                         conn->cur_plugin);
            conn->db_handle = pkt->u.response.object;
            conn->hs = FFB__HS_DONE;
            conn->state = FFB__ST_READY;
            wipe_secrets(conn);
            if (conn->hs_spares)
                return 0; /* complete with the answers behind it */
            conn->hs_finished = 1;
            ffb__hs_complete(conn, 0);
            return 0;
        }
        return unexpected(conn, pkt);

    default:
        return unexpected(conn, pkt);
    }
}
