/*
 * A hostile or broken server: truncated, malformed and unexpected packets
 * during the handshake must give a clear error with a code, mark the
 * connection broken, and never read out of bounds or wait for more than
 * the packet can hold. Driven through the byte-pump API (external I/O).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/conv.h"
#include "tests/support/srv.h"

/* A connection with external I/O whose op_connect has been taken. */
static ffb_conn *start_with(const char *plugins, int level, int min_protocol) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.min_protocol = min_protocol;
    o.dsn = "server/3050:db";
    o.io = FFB_IO_EXTERNAL;
    o.password = "pw";
    o.auth_plugins = plugins;
    o.wire_crypt = level;
    o.os_user = "u";
    o.client_host = "h";
    o.process_name = "p";
    o.process_id = 1;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(ffb_conn_start(c), 0);
    const uint8_t *out;
    size_t n = ffb_conn_output(c, &out);
    assert_true(n > 0);
    assert_int_equal(out[3], 1); /* op_connect */
    ffb_conn_output_done(c, n);
    assert_int_equal(ffb_conn_wants(c), FFB_WANT_READ);
    return c;
}

static ffb_conn *start_min(int min_protocol) {
    return start_with(NULL, FFB_CRYPT_ENABLED, min_protocol);
}

static ffb_conn *start(void) { return start_min(0); }

static void feed_hex(ffb_conn *c, const char *hex, int expect_rc) {
    uint8_t buf[1024];
    size_t n = conv_unhex(hex, buf, sizeof(buf));
    assert_int_equal(ffb_conn_feed(c, buf, n), expect_rc);
}

static void expect_broken(ffb_conn *c, int code, const char *needle) {
    assert_true(ffb_conn_is_broken(c));
    assert_int_equal(ffb_conn_step(c), code);
    const char *msg = ffb_error_message(ffb_conn_error(c));
    if (!strstr(msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", msg, needle);
    /* Once broken, more input is refused with the same code. */
    uint8_t junk[4] = {0, 0, 0, 9};
    assert_int_equal(ffb_conn_feed(c, junk, 4), code);
}

static void test_truncated_accept_then_eof(void **state) {
    (void)state;
    ffb_conn *c = start();
    /* op_cond_accept cut inside its data field. */
    feed_hex(c, "00000062FFFF80130000000100000005000001444000", 0);
    assert_int_equal(ffb_conn_step(c), 0); /* still waiting: incomplete */
    assert_int_equal(ffb_conn_feed_eof(c), FFB_E_CLOSED);
    expect_broken(c, FFB_E_CLOSED, "op_connect");
    ffb_conn_free(c);
}

static void test_unknown_op(void **state) {
    (void)state;
    ffb_conn *c = start();
    feed_hex(c, "000000FF00000000", FFB_E_PROTO);
    expect_broken(c, FFB_E_PROTO, "op 255");
    ffb_conn_free(c);
}

static void test_protocol_not_offered(void **state) {
    (void)state;
    ffb_conn *c = start();
    /* op_accept choosing protocol 10, which a 13..19 client never offered. */
    feed_hex(c, "000000030000000A0000000100000005", FFB_E_PROTO);
    expect_broken(c, FFB_E_PROTO, "did not offer");
    ffb_conn_free(c);
}

static void test_bad_status_arg(void **state) {
    (void)state;
    ffb_conn *c = start();
    /* op_response whose status vector uses isc_arg_cstring (3), which
       never travels on the wire. */
    feed_hex(c,
             "00000009000000000000000000000000000000000000000300000001",
             FFB_E_PROTO);
    expect_broken(c, FFB_E_PROTO, "malformed op_response");
    ffb_conn_free(c);
}

static void test_huge_length(void **state) {
    (void)state;
    ffb_conn *c = start();
    /* op_cond_accept announcing 2 GiB of auth data: refused at once
       instead of waiting for it. */
    feed_hex(c, "00000062FFFF801300000001000000057FFFFFFF", FFB_E_PROTO);
    expect_broken(c, FFB_E_PROTO, "malformed op_cond_accept");
    ffb_conn_free(c);
}

static void test_bad_srp_data(void **state) {
    (void)state;
    ffb_conn *c = start();
    /* op_cond_accept for Srp256 whose data is not salt + hex(B). */
    feed_hex(c,
             "00000062FFFF80130000000100000005"
             "00000006"
             "0100410100470000" /* salt "A", B "G": not hex */
             "00000006537270323536000000000000"
             "00000000",
             FFB_E_PROTO);
    expect_broken(c, FFB_E_PROTO, "SRP data");
    ffb_conn_free(c);
}

static void test_login_rejected_at_connect(void **state) {
    (void)state;
    ffb_conn *c = start();
    /* op_response isc_login as the answer to op_connect (unknown user). */
    feed_hex(c,
             "000000090000000000000000000000000000000000000001140000980000"
             "0000",
             FFB_E_AUTH);
    expect_broken(c, FFB_E_AUTH, "SYSDBA");
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)), FFB_GDS_LOGIN);
    ffb_conn_free(c);
}

static void test_crypt_incompatible(void **state) {
    (void)state;
    ffb_conn *c = start();
    feed_hex(c,
             "00000009000000000000000000000000000000000000000114000"
             "2E800000000",
             FFB_E_CRYPT);
    expect_broken(c, FFB_E_CRYPT, "incompatible");
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)),
                     FFB_GDS_WIRECRYPT_INCOMPATIBLE);
    ffb_conn_free(c);
}

static void test_unrequested_compression(void **state) {
    (void)state;
    ffb_conn *c = start();
    feed_hex(c, "00000003FFFF801300000001" "00000105", FFB_E_PROTO);
    expect_broken(c, FFB_E_PROTO, "compression");
    ffb_conn_free(c);
}

static void test_every_truncation_of_accept(void **state) {
    (void)state;
    /* The real op_cond_accept of a recording, fed cut at every length and
       followed by EOF: never a success, never a crash. */
    char path[512];
    conv cv;
    conv_load(&cv, conv_data_path("fb5-handshake-srp256-plain.conv", path,
                                  sizeof(path)));
    const conv_line *s = NULL;
    for (size_t i = 0; i < cv.n && !s; i++)
        if (cv.lines[i].kind == CONV_S)
            s = &cv.lines[i];
    assert_non_null(s);
    for (size_t cut = 0; cut < s->len; cut++) {
        ffb_conn *c = start();
        if (cut)
            assert_int_equal(ffb_conn_feed(c, s->bytes, cut), 0);
        assert_int_equal(ffb_conn_step(c), 0);
        assert_int_equal(ffb_conn_feed_eof(c), FFB_E_CLOSED);
        assert_true(ffb_conn_is_broken(c));
        ffb_conn_free(c);
    }
    conv_free(&cv);
}

static void test_protocol_12_legacy_login(void **state) {
    (void)state;
    /* A Firebird 2.5-era server picks protocol 12 from an offer of 10..19:
       the login then travels as isc_dpb_password_enc (the Legacy_Auth
       hash), never in clear. */
    ffb_conn *c = start_min(10);
    feed_hex(c, "00000003FFFF800C0000000100000005", 0);
    const uint8_t *out;
    size_t n = ffb_conn_output(c, &out);
    assert_true(n > 16);
    assert_int_equal(out[3], 19); /* op_attach */
    /* op_attach: op, object, cstring file "db" (4+4), cstring dpb. */
    size_t dpb_len = (size_t)out[16] << 24 | (size_t)out[17] << 16 |
                     (size_t)out[18] << 8 | out[19];
    assert_true(20 + dpb_len <= n);
    size_t pos = 0, len;
    uint8_t tag;
    const uint8_t *d;
    int found = 0;
    while (ffbp_pb_next(out + 20, dpb_len, FFBP_PB_V1, &pos, &tag, &d,
                        &len) == 1) {
        if (tag == FFBP_DPB_PASSWORD_ENC) {
            char h[12];
            assert_int_equal(ffb__legacy_hash("pw", 2, h), 0);
            assert_int_equal(len, 11);
            assert_memory_equal(d, h, 11);
            found = 1;
        }
        assert_true(tag != FFBP_DPB_PASSWORD &&
                    tag != FFBP_DPB_SPECIFIC_AUTH_DATA);
    }
    assert_true(found);
    ffb_conn_output_done(c, n);
    feed_hex(c,
             "000000090000000000000000000000000000000000000001000000000000"
             "0000",
             0);
    assert_int_equal(ffb_conn_step(c), 1);
    assert_int_equal(ffb_conn_protocol(c), 12);
    assert_string_equal(ffb_conn_wire_crypt(c), "");
    assert_int_equal(ffb_conn_queue_ping(c, NULL, NULL), FFB_E_UNSUPPORTED);
    assert_int_equal(ffb_conn_pending(c), 0);
    ffb_conn_free(c);
}

static void test_protocol_below_offer(void **state) {
    (void)state;
    /* With the default offer (13..19), protocol 12 is a protocol error. */
    ffb_conn *c = start();
    feed_hex(c, "00000003FFFF800C0000000100000005", FFB_E_PROTO);
    expect_broken(c, FFB_E_PROTO, "13..19");
    ffb_conn_free(c);
}

/* ---- WireCrypt Required (issue 8, defect 1) --------------------------------- */

static ffb_conn *start_crypt(const char *plugins, int level) {
    return start_with(plugins, level, 0);
}

static void feed_writer(ffb_conn *c, ffbp_writer *w, int expect_rc) {
    assert_int_equal(ffb_conn_feed(c, w->data, w->len), expect_rc);
    ffbp_writer_reset(w);
}

/* Nothing more leaves the client. */
static void expect_silent(ffb_conn *c) {
    const uint8_t *out;
    assert_int_equal(ffb_conn_output(c, &out), 0);
}

/* SRP server data: salt "AB", B = 0xABCDEF0123 (hex as the server sends). */
static const uint8_t SRP_DATA[] = {2, 0, 'A', 'B', 10, 0, 'A', 'B', 'C', 'D',
                                   'E', 'F', '0', '1', '2', '3'};

static void test_required_refuses_plain_accept(void **state) {
    (void)state;
    /* A relay answers op_connect with a bare op_accept: no authentication
       before the attach, so no key and no op_crypt can come. Required
       stops before the attach (which would carry the first auth step). */
    ffb_conn *c = start_crypt("Srp256,Srp", FFB_CRYPT_REQUIRED);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    srv_accept(&w, FFBP_OP_ACCEPT, 16, NULL, NULL, 0, 0, NULL, 0);
    feed_writer(c, &w, FFB_E_CRYPT);
    expect_silent(c);
    expect_broken(c, FFB_E_CRYPT, "without an authentication exchange");
    assert_string_equal(ffb_conn_auth_plugin(c), "");
    ffbp_writer_free(&w);
    ffb_conn_free(c);
}

static void test_enabled_plain_attach_answers_srp(void **state) {
    (void)state;
    /* Enabled lets the plain attach go (unencrypted, the user's choice);
       the server continuing with SRP inside it is answered, and the
       plugin is reported because the proof went out. */
    ffb_conn *c = start_crypt("Srp256,Srp", FFB_CRYPT_ENABLED);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    srv_accept(&w, FFBP_OP_ACCEPT, 16, NULL, NULL, 0, 0, NULL, 0);
    feed_writer(c, &w, 0);
    const uint8_t *out;
    size_t n = ffb_conn_output(c, &out);
    assert_true(n > 4);
    assert_int_equal(out[3], FFBP_OP_ATTACH);
    ffb_conn_output_done(c, n);
    srv_cont_auth(&w, SRP_DATA, sizeof(SRP_DATA), "Srp256", NULL, 0);
    feed_writer(c, &w, 0);
    n = ffb_conn_output(c, &out);
    assert_true(n > 4);
    assert_int_equal(out[3], FFBP_OP_CONT_AUTH); /* the proof, in clear */
    ffb_conn_output_done(c, n);
    srv_response(&w, 1, 0, NULL, 0);
    feed_writer(c, &w, 0);
    assert_int_equal(ffb_conn_step(c), 1);
    assert_string_equal(ffb_conn_auth_plugin(c), "Srp256");
    assert_string_equal(ffb_conn_wire_crypt(c), "");
    ffbp_writer_free(&w);
    ffb_conn_free(c);
}

static void test_plain_accept_reports_no_plugin(void **state) {
    (void)state;
    /* The server lets the client in after the first SRP step (A) alone:
       Srp256 did not authenticate anything, so it is not reported. */
    ffb_conn *c = start_crypt("Srp256,Srp", FFB_CRYPT_ENABLED);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    srv_accept(&w, FFBP_OP_ACCEPT, 16, NULL, NULL, 0, 0, NULL, 0);
    feed_writer(c, &w, 0);
    const uint8_t *out;
    ffb_conn_output_done(c, ffb_conn_output(c, &out));
    srv_response(&w, 1, 0, NULL, 0);
    feed_writer(c, &w, 0);
    assert_int_equal(ffb_conn_step(c), 1);
    assert_string_equal(ffb_conn_auth_plugin(c), "");
    ffbp_writer_free(&w);
    ffb_conn_free(c);
}

/* 1 when the 11 bytes of the Legacy_Auth hash of "pw" occur in p. */
static int has_hash(const uint8_t *p, size_t n) {
    char h[12];
    assert_int_equal(ffb__legacy_hash("pw", 2, h), 0);
    for (size_t i = 0; i + 11 <= n; i++)
        if (memcmp(p + i, h, 11) == 0)
            return 1;
    return 0;
}

static void test_required_refuses_legacy_before_hash(void **state) {
    (void)state;
    /* The server switches to Legacy_Auth: with Required, its hash (as good
       as the password) is never sent. */
    ffb_conn *c = start_crypt("Srp256,Legacy_Auth", FFB_CRYPT_REQUIRED);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    srv_accept(&w, FFBP_OP_COND_ACCEPT, 16, "Legacy_Auth", NULL, 0, 0, NULL,
               0);
    feed_writer(c, &w, FFB_E_CRYPT);
    expect_silent(c);
    expect_broken(c, FFB_E_CRYPT, "Legacy_Auth");
    ffbp_writer_free(&w);
    ffb_conn_free(c);

    /* And as the first plugin: refused before op_connect. */
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = "server/3050:db";
    o.io = FFB_IO_EXTERNAL;
    o.password = "pw";
    o.auth_plugins = "Legacy_Auth";
    o.wire_crypt = FFB_CRYPT_REQUIRED;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(ffb_conn_start(c), FFB_E_CRYPT);
    const uint8_t *out;
    size_t n = ffb_conn_output(c, &out);
    assert_false(has_hash(out, n));
    ffb_conn_free(c);

    /* With Enabled the hash does go (the user's choice). */
    c = start_crypt("Srp256,Legacy_Auth", FFB_CRYPT_ENABLED);
    ffbp_writer_init(&w, NULL);
    srv_accept(&w, FFBP_OP_COND_ACCEPT, 16, "Legacy_Auth", NULL, 0, 0, NULL,
               0);
    feed_writer(c, &w, 0);
    n = ffb_conn_output(c, &out);
    assert_true(has_hash(out, n));
    ffbp_writer_free(&w);
    ffb_conn_free(c);
}

static void test_required_refuses_accept_data(void **state) {
    (void)state;
    /* op_accept_data (flow B) means no op_crypt: with Required the proof
       is not even computed. */
    for (int authenticated = 0; authenticated <= 1; authenticated++) {
        ffb_conn *c = start_crypt("Srp256,Srp", FFB_CRYPT_REQUIRED);
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        srv_accept(&w, FFBP_OP_ACCEPT_DATA, 16, "Srp256", SRP_DATA,
                   sizeof(SRP_DATA), authenticated, NULL, 0);
        feed_writer(c, &w, FFB_E_CRYPT);
        expect_silent(c);
        expect_broken(c, FFB_E_CRYPT, "nothing was sent");
        assert_false(c->have_key);
        ffbp_writer_free(&w);
        ffb_conn_free(c);
    }
}

static void test_secrets_wiped(void **state) {
    (void)state;
    /* After the attach neither the hash kept for the DPB nor the packets
       that carried it remain in the connection's buffers. */
    ffb_conn *c = start_crypt("Legacy_Auth", FFB_CRYPT_ENABLED);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    srv_accept(&w, FFBP_OP_ACCEPT_DATA, 16, "Legacy_Auth", NULL, 0, 0, NULL,
               0);
    feed_writer(c, &w, 0);
    const uint8_t *out;
    size_t n = ffb_conn_output(c, &out);
    assert_true(has_hash(out, n)); /* flow B: the hash in the DPB */
    ffb_conn_output_done(c, n);
    srv_response(&w, 1, 0, NULL, 0);
    feed_writer(c, &w, 0);
    assert_int_equal(ffb_conn_step(c), 1);
    assert_string_equal(ffb_conn_auth_plugin(c), "Legacy_Auth");
    assert_false(has_hash(c->hs_dpb_data, sizeof(c->hs_dpb_data)));
    assert_false(has_hash(c->stage.data, c->stage.cap));
    assert_false(has_hash(c->out.data, c->out.cap));
    uint8_t zero[20] = {0};
    assert_memory_equal(c->session_key, zero, sizeof(zero));
    ffbp_writer_free(&w);
    ffb_conn_free(c);
}

static void test_required_no_bytes_before_crypt(void **state) {
    (void)state;
    /* op_crypt sent on its own after the proof's answer: bytes that came
       behind that answer arrived in clear before op_crypt existed, so
       they cannot be the encrypted answer to it (they were taken as such,
       and op_crypt and op_attach then went out unencrypted). */
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = "server/3050:db";
    o.io = FFB_IO_EXTERNAL;
    o.password = "pw";
    o.auth_plugins = "Srp256";
    o.wire_crypt = FFB_CRYPT_REQUIRED;
    o.wire_crypt_plugins = "Arc4";
    o.no_pipeline_crypt = 1;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(ffb_conn_start(c), 0);
    const uint8_t *out;
    ffb_conn_output_done(c, ffb_conn_output(c, &out));
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    srv_accept(&w, FFBP_OP_COND_ACCEPT, 15, "Srp256", SRP_DATA,
               sizeof(SRP_DATA), 0, NULL, 0);
    feed_writer(c, &w, 0);
    size_t n = ffb_conn_output(c, &out);
    assert_true(n > 4);
    assert_int_equal(out[3], FFBP_OP_CONT_AUTH); /* the proof, alone */
    ffb_conn_output_done(c, n);
    static const uint8_t keys[] = {FFBP_TAG_KEY_TYPE, 9, 'S', 'y', 'm', 'm',
                                   'e', 't', 'r', 'i', 'c',
                                   FFBP_TAG_KEY_PLUGINS, 4, 'A', 'r', 'c',
                                   '4'};
    srv_response(&w, 0, 0, keys, sizeof(keys)); /* login accepted */
    srv_response(&w, 0, 0, NULL, 0);            /* "op_crypt accepted" */
    feed_writer(c, &w, FFB_E_PROTO);
    expect_silent(c);
    expect_broken(c, FFB_E_PROTO, "before op_crypt was sent");
    ffbp_writer_free(&w);
    ffb_conn_free(c);
}

static void test_secrets_wiped_on_engine_failure(void **state) {
    (void)state;
    /* The proof went out; the server then hangs up (or sends garbage):
       the failure comes from the engine, not the handshake, and the SRP
       state and session key go all the same. */
    for (int garbage = 0; garbage <= 1; garbage++) {
        ffb_conn *c = start_crypt("Srp256", FFB_CRYPT_ENABLED);
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        srv_accept(&w, FFBP_OP_COND_ACCEPT, 17, "Srp256", SRP_DATA,
                   sizeof(SRP_DATA), 0, NULL, 0);
        feed_writer(c, &w, 0);
        assert_true(c->have_key);
        if (garbage) {
            uint8_t junk[8] = {0, 0, 0, 0xEE, 1, 2, 3, 4};
            assert_int_equal(ffb_conn_feed(c, junk, sizeof(junk)),
                             FFB_E_PROTO);
        } else {
            assert_int_equal(ffb_conn_feed_eof(c), FFB_E_CLOSED);
        }
        uint8_t zero[sizeof(c->srp)];
        memset(zero, 0, sizeof(zero));
        assert_memory_equal(&c->srp, zero, sizeof(c->srp));
        assert_memory_equal(c->session_key, zero, sizeof(c->session_key));
        ffbp_writer_free(&w);
        ffb_conn_free(c);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_accept_then_eof),
        cmocka_unit_test(test_unknown_op),
        cmocka_unit_test(test_protocol_not_offered),
        cmocka_unit_test(test_bad_status_arg),
        cmocka_unit_test(test_huge_length),
        cmocka_unit_test(test_bad_srp_data),
        cmocka_unit_test(test_login_rejected_at_connect),
        cmocka_unit_test(test_crypt_incompatible),
        cmocka_unit_test(test_unrequested_compression),
        cmocka_unit_test(test_every_truncation_of_accept),
        cmocka_unit_test(test_protocol_12_legacy_login),
        cmocka_unit_test(test_protocol_below_offer),
        cmocka_unit_test(test_required_refuses_plain_accept),
        cmocka_unit_test(test_enabled_plain_attach_answers_srp),
        cmocka_unit_test(test_plain_accept_reports_no_plugin),
        cmocka_unit_test(test_required_refuses_legacy_before_hash),
        cmocka_unit_test(test_required_refuses_accept_data),
        cmocka_unit_test(test_secrets_wiped),
        cmocka_unit_test(test_required_no_bytes_before_crypt),
        cmocka_unit_test(test_secrets_wiped_on_engine_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
