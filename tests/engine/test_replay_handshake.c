/*
 * Replays the recorded Firebird 5.0.4 handshakes (tests/data/fb5) through
 * the real engine: every client write must equal the recording byte for
 * byte (SRP with the fixed private key of the recordings), every server
 * byte must be consumed, and the round trips are counted exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/conv.h"

/* The fixed SRP private key of every recording (fixtures README). */
/* What the recording client's op_info_database asked for. */
static const uint8_t INFO_ITEMS[] = {0x0C, 0x67, 0x89, 0x8C, 0x84,
                                     0x0E, 0x3E, 0x65, 0x01};

typedef struct replay_case {
    const char *file;
    int connection;         /* which "@ connect" */
    const char *plugins;
    const char *password;
    int wire_crypt;
    const char *ciphers;    /* NULL = default; "" = never encrypt */
    int compress;
    /* expectations */
    int connect_rc;
    uint64_t connect_rt;
    const char *cipher_used;
    int protocol;
} replay_case;

static ffb_conn *new_conn(const replay_case *rc, conv *cv) {
    ffb_conn_options o;
    conv_options(&o);
    if (rc->password)
        o.password = rc->password;
    o.auth_plugins = rc->plugins;
    o.wire_crypt = rc->wire_crypt;
    o.wire_crypt_plugins = rc->ciphers;
    o.compress = rc->compress;
    ffb_conn *conn = NULL;
    assert_int_equal(ffb_conn_new(&o, &conn), 0);
    conv_use(conn, cv);
    return conn;
}

static uint64_t rts(ffb_conn *conn) {
    ffb_stats st;
    ffb_conn_stats(conn, &st, sizeof(st));
    return st.round_trips;
}

/* connect, op_info_database, detach: the script of the handshake files. */
static void replay_session(const replay_case *rc, size_t chunk) {
    char path[512];
    conv cv;
    conv_load(&cv, conv_data_path(rc->file, path, sizeof(path)));
    cv.chunk = chunk;
    conv_seek_connection(&cv, rc->connection);
    ffb_conn *conn = new_conn(rc, &cv);

    int r = ffb_conn_connect(conn);
    if (r != rc->connect_rc || cv.failure[0])
        fail_msg("%s (chunk %zu): connect returned %d (%s), expected %d; %s",
                 rc->file, chunk, r,
                 ffb_error_message(ffb_conn_error(conn)), rc->connect_rc,
                 cv.failure);
    /* op_connect; op_cont_auth (+ op_crypt); op_attach - or fewer. */
    assert_int_equal(rts(conn), rc->connect_rt);
    if (r == 0) {
        assert_int_equal(ffb_conn_protocol(conn), rc->protocol);
        assert_string_equal(ffb_conn_wire_crypt(conn), rc->cipher_used);
        assert_int_equal(ffb_conn_is_compressed(conn), rc->compress);
        uint8_t buf[1024];
        size_t len = 0;
        uint64_t before = rts(conn);
        r = ffb_conn_info_raw(conn, INFO_ITEMS, sizeof(INFO_ITEMS), buf,
                              sizeof(buf), &len);
        if (r != 0 || cv.failure[0])
            fail_msg("%s: info failed: %s; %s", rc->file,
                     ffb_error_message(ffb_conn_error(conn)), cv.failure);
        assert_int_equal(rts(conn) - before, 1); /* one request, one answer */
        assert_true(len > 0 && buf[0] == 0x0C);  /* isc_info_isc_version */
        before = rts(conn);
        r = ffb_conn_close(conn);
        if (r != 0 || cv.failure[0])
            fail_msg("%s: detach failed: %s; %s", rc->file,
                     ffb_error_message(ffb_conn_error(conn)), cv.failure);
        assert_int_equal(rts(conn) - before, 1); /* op_detach only */
    } else {
        ffb_conn_close(conn);
    }
    if (cv.failure[0])
        fail_msg("%s", cv.failure);
    ffb_conn_free(conn);
    /* Everything recorded for this connection was consumed. */
    assert_true(cv.pos == cv.n || cv.lines[cv.pos].kind == CONV_CONNECT);
    conv_free(&cv);
}

static void run_all_chunkings(const replay_case *rc) {
    static const size_t chunks[] = {0, 1, 3, 7, 64};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
        replay_session(rc, chunks[i]);
}

static void test_replay_srp256_plain(void **state) {
    (void)state;
    /* Client Enabled but with no cipher to offer: flow A in clear. */
    replay_case rc = {"fb5-handshake-srp256-plain.conv", 0, "Srp256,Srp",
                      NULL, FFB_CRYPT_ENABLED, "", 0, 0, 3, "", 19};
    run_all_chunkings(&rc);
}

static void test_replay_srp256_crypt_disabled(void **state) {
    (void)state;
    /* Flow B: the proof rides in the DPB of op_attach: 2 round trips. */
    replay_case rc = {"fb5-handshake-srp256-crypt-disabled.conv", 0,
                      "Srp256,Srp", NULL, FFB_CRYPT_DISABLED, NULL, 0, 0, 2,
                      "", 19};
    run_all_chunkings(&rc);
}

static void test_replay_srp256_chacha64(void **state) {
    (void)state;
    /* op_cont_auth + op_crypt in one write; the reply chunk switches from
       clear to ChaCha64 mid-way. */
    replay_case rc = {"fb5-handshake-srp256-chacha64.conv", 0, "Srp256,Srp",
                      NULL, FFB_CRYPT_ENABLED, NULL, 0, 0, 3, "ChaCha64",
                      19};
    run_all_chunkings(&rc);
}

static void test_replay_srp_arc4(void **state) {
    (void)state;
    replay_case rc = {"fb5-handshake-srp-arc4.conv", 0, "Srp,Srp256", NULL,
                      FFB_CRYPT_ENABLED, "Arc4", 0, 0, 3, "Arc4", 19};
    run_all_chunkings(&rc);
}

static void test_replay_compressed(void **state) {
    (void)state;
    replay_case rc = {"fb5-handshake-compressed.conv", 0, "Srp256,Srp", NULL,
                      FFB_CRYPT_ENABLED, "", 1, 0, 3, "", 19};
    run_all_chunkings(&rc);
}

static void test_replay_wrong_password_walk(void **state) {
    (void)state;
    /* Srp256 proof rejected -> Srp (new A, new proof) rejected ->
       Legacy_Auth hash -> isc_login, then the server closes. Five writes,
       five round trips. */
    replay_case rc = {"fb5-errors.conv", 1, "Srp256,Srp,Legacy_Auth",
                      "wrongkey", FFB_CRYPT_ENABLED, "", 0, FFB_E_AUTH, 5,
                      "", 19};
    run_all_chunkings(&rc);
}

static void test_replay_wrong_password_no_legacy(void **state) {
    (void)state;
    /* The server asks for Legacy_Auth, which the client did not offer: the
       client gives up itself after four round trips and closes. */
    replay_case rc = {"fb5-errors.conv", 2, "Srp256,Srp", "wrongkey",
                      FFB_CRYPT_ENABLED, "", 0, FFB_E_AUTH, 4, "", 19};
    run_all_chunkings(&rc);
}

static void test_crypt_switch_linear(void **state) {
    (void)state;
    /* While the switch to the new receive cipher is pending, received
       bytes used to be moved and parsed one at a time: 256 KiB behind the
       reply cost 256 Ki parses and as many memmoves (quadratic). They are
       now parsed as they come and the rest decrypted in place. */
    replay_case rc = {"fb5-handshake-srp256-chacha64.conv", 0, "Srp256,Srp",
                      NULL, FFB_CRYPT_ENABLED, NULL, 0, 0, 3, "ChaCha64",
                      19};
    char path[512];
    conv cv;
    conv_load(&cv, conv_data_path(rc.file, path, sizeof(path)));
    conv_seek_connection(&cv, 0);
    size_t s_seen = 0;
    for (size_t i = cv.pos; i < cv.n; i++) {
        conv_line *l = &cv.lines[i];
        if (l->kind != CONV_S || ++s_seen != 2)
            continue;
        /* The chunk with the plain op_cont_auth reply and the encrypted
           op_crypt reply: 256 KiB of noise behind it. */
        size_t extra = 256 * 1024;
        l->bytes = realloc(l->bytes, l->len + extra);
        assert_non_null(l->bytes);
        memset(l->bytes + l->len, 0x5A, extra);
        l->len += extra;
        break;
    }
    ffb_conn *conn = new_conn(&rc, &cv);
    /* The noise, decrypted, is no packet. */
    assert_int_equal(ffb_conn_connect(conn), FFB_E_PROTO);
    if (conn->parse_attempts > 64)
        fail_msg("%llu packet parses for 3 server chunks",
                 (unsigned long long)conn->parse_attempts);
    ffb_conn_free(conn);
    conv_free(&cv);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_srp256_plain),
        cmocka_unit_test(test_replay_srp256_crypt_disabled),
        cmocka_unit_test(test_replay_srp256_chacha64),
        cmocka_unit_test(test_crypt_switch_linear),
        cmocka_unit_test(test_replay_srp_arc4),
        cmocka_unit_test(test_replay_compressed),
        cmocka_unit_test(test_replay_wrong_password_walk),
        cmocka_unit_test(test_replay_wrong_password_no_legacy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
