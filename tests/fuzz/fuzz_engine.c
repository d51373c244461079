/*
 * The whole receive path of a connection with external I/O: arbitrary
 * bytes as "server output" after ffb_conn_start(). Byte 0 picks a
 * scenario: a fresh connection waiting for the answer to op_connect, or one
 * that has first been fed a prefix of a recorded Firebird 5 handshake
 * (fuzz_engine_data.h), so the input lands in the authentication loop, on
 * a pipelined op_crypt, behind a started cipher or zlib stream, in the
 * attach, or on an attached connection. Byte 1 is the chunk size the rest
 * is fed in (0 = one piece). The client uses the fixed SRP private key of
 * the recordings, so the prefixes are answered exactly as recorded.
 *
 * Properties: no crash, leak or sanitizer report; a failure leaves a
 * fatal code and a message; a broken connection stays broken.
 * FFB_FUZZ_VERBOSE=1 prints where each input ended.
 */
#include <string.h>

#include "lib/internal.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_engine_data.h"

/* The SRP private key of every recording (tests/data/fb5/README.md). */
static const char FIXED_A[] =
    "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D4393";

typedef struct scenario {
    const char *plugins;
    const char *password;
    int wire_crypt;
    const char *ciphers; /* NULL = default, "" = never encrypt */
    int compress;
    int create;
    const char *const *prefix[3];
} scenario;

/* clang-format off */
static const scenario scenarios[] = {
    /* 0, 1: waiting for the answer to op_connect (attach / create). */
    {"Srp256,Srp,Legacy_Auth", NULL, FFB_CRYPT_ENABLED, NULL, 0, 0, {0}},
    {"Srp256,Srp", NULL, FFB_CRYPT_REQUIRED, NULL, 1, 1, {0}},
    /* 2: flow A without encryption, after op_cond_accept. */
    {"Srp256,Srp", NULL, FFB_CRYPT_ENABLED, "", 0, 0, {plain_s1}},
    /* 3, 4: proof + pipelined op_crypt sent; the answer switches cipher. */
    {"Srp256,Srp", NULL, FFB_CRYPT_ENABLED, NULL, 0, 0, {chacha64_s1}},
    {"Srp,Srp256", NULL, FFB_CRYPT_ENABLED, "Arc4", 0, 0, {arc4_s1}},
    /* 5: zlib in both directions after op_cond_accept. */
    {"Srp256,Srp", NULL, FFB_CRYPT_ENABLED, "", 1, 0, {compressed_s1}},
    /* 6: flow B: proof in the DPB, waiting for the attach answer. */
    {"Srp256,Srp", NULL, FFB_CRYPT_DISABLED, NULL, 0, 0, {disabled_s1}},
    /* 7, 8: wrong password, before and after the switch to Srp. */
    {"Srp256,Srp,Legacy_Auth", "wrongkey", FFB_CRYPT_ENABLED, "", 0, 0,
     {walk_s1}},
    {"Srp256,Srp,Legacy_Auth", "wrongkey", FFB_CRYPT_ENABLED, "", 0, 0,
     {walk_s1, walk_s2}},
    /* 9: authenticated, waiting for the attach answer. */
    {"Srp256,Srp", NULL, FFB_CRYPT_ENABLED, "", 0, 0, {plain_s1, plain_s2}},
    /* 10: attached; nothing is owed. */
    {"Srp256,Srp", NULL, FFB_CRYPT_ENABLED, "", 0, 0,
     {plain_s1, plain_s2, plain_s3}},
    /* 11, 12: behind a running ChaCha64 / Arc4 decryptor (attach). */
    {"Srp256,Srp", NULL, FFB_CRYPT_ENABLED, NULL, 0, 0,
     {chacha64_s1, chacha64_s2}},
    {"Srp,Srp256", NULL, FFB_CRYPT_ENABLED, "Arc4", 0, 0,
     {arc4_s1, arc4_s2}},
    /* 13: inside a running inflate stream (attach). */
    {"Srp256,Srp", NULL, FFB_CRYPT_ENABLED, "", 1, 0,
     {compressed_s1, compressed_s2}},
    /* 14: flow B attached. */
    {"Srp256,Srp", NULL, FFB_CRYPT_DISABLED, NULL, 0, 0,
     {disabled_s1, disabled_s2}},
};
/* clang-format on */
#define NSCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

static int hexval(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return c - 'a' + 10;
}

/* Decode a list of hex pieces into a malloc'd buffer. */
static uint8_t *unhex(const char *const *pieces, size_t *len) {
    size_t n = 0;
    for (size_t i = 0; pieces[i]; i++)
        n += strlen(pieces[i]) / 2;
    uint8_t *b = malloc(n ? n : 1);
    FUZZ_CHECK(b != NULL);
    size_t k = 0;
    for (size_t i = 0; pieces[i]; i++)
        for (const char *h = pieces[i]; h[0] && h[1]; h += 2)
            b[k++] = (uint8_t)(hexval(h[0]) << 4 | hexval(h[1]));
    *len = n;
    return b;
}

/* Hand everything the client wants to write to the void. */
static void drain(ffb_conn *conn) {
    const uint8_t *out;
    size_t n;
    int guard = 0;
    while ((n = ffb_conn_output(conn, &out)) > 0 && guard++ < 4) {
        FUZZ_CHECK(out != NULL);
        /* Written in two parts, as a socket might. */
        ffb_conn_output_done(conn, n / 2);
        ffb_conn_output_done(conn, n - n / 2);
    }
}

static void feed_prefix(ffb_conn *conn, const char *const *pieces) {
    size_t len;
    uint8_t *b = unhex(pieces, &len);
    ffb_conn_feed(conn, b, len);
    free(b);
    drain(conn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2)
        return 0;
    const scenario *sc = &scenarios[data[0] % NSCENARIOS];
    unsigned chunk_byte = data[1];
    size_t chunk = chunk_byte ? chunk_byte : size;
    data += 2;
    size -= 2;

    static uint8_t a[32];
    size_t alen;
    static const char *const a_pieces[] = {FIXED_A, NULL};
    uint8_t *ab = unhex(a_pieces, &alen);
    memcpy(a, ab, sizeof(a));
    free(ab);

    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.database = "fixtures";
    o.host = "recorded";
    o.user = "SYSDBA";
    o.password = sc->password ? sc->password : "masterkey";
    o.auth_plugins = sc->plugins;
    o.wire_crypt = sc->wire_crypt;
    o.wire_crypt_plugins = sc->ciphers;
    o.compress = sc->compress;
    o.charset = "UTF8";
    o.io = FFB_IO_EXTERNAL;
    o.os_user = "alice";
    o.client_host = "client1";
    o.process_id = 4242;
    o.process_name = "fixture-client";
    ffb_conn *conn = NULL;
    FUZZ_CHECK(ffb_conn_new(&o, &conn) == 0);
    FUZZ_CHECK(ffb__conn_set_test_srp_key(conn, a, sizeof(a)) == 0);
    ffb_create_options copts = FFB_CREATE_OPTIONS_INIT;
    copts.page_size = 8192;
    copts.charset = "UTF8";
    FUZZ_CHECK((sc->create ? ffb_conn_start_create(conn, &copts) : ffb_conn_start(conn)) ==
               0);
    drain(conn);
    for (size_t i = 0; i < 3 && sc->prefix[i]; i++)
        feed_prefix(conn, sc->prefix[i]);

    int broken = ffb_conn_is_broken(conn);
    for (size_t off = 0; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        int rc = ffb_conn_feed(conn, data + off, n);
        int now_broken = ffb_conn_is_broken(conn);
        FUZZ_CHECK(!broken || now_broken);
        if (rc < 0 && rc <= FFB_E_FATAL)
            FUZZ_CHECK(now_broken);
        if (now_broken) {
            const ffb_error *e = ffb_conn_error(conn);
            FUZZ_CHECK(ffb_error_code(e) < 0);
            FUZZ_CHECK(strlen(ffb_error_message(e)) < FFB__ERR_MESSAGE);
            FUZZ_CHECK(ffb_conn_wants(conn) == 0);
        }
        broken = now_broken;
        (void)ffb_conn_wants(conn);
        drain(conn);
    }
    int step = ffb_conn_step(conn);
    FUZZ_CHECK(step >= -106 && step <= 1);
    const ffb_error *e = ffb_conn_error(conn);
    for (size_t i = 0; i < ffb_error_count(e); i++) {
        (void)ffb_error_symbol_at(e, i);
        for (size_t j = 0; j < ffb_error_arg_count(e, i); j++)
            FUZZ_CHECK(ffb_error_arg(e, i, j) != NULL);
    }
    (void)ffb_error_sqlstate(e);
    (void)ffb_error_sqlcode(e);
    (void)ffb_error_gds(e);
    (void)ffb_error_has(e, FFB_GDS_LOGIN);
    (void)ffb_error_gds_at(e, 1);
    FUZZ_CHECK(ffb_strerror(step) != NULL && ffb_err_name(step) != NULL);
    (void)ffb_conn_protocol(conn);
    (void)ffb_conn_wire_crypt(conn);
    (void)ffb_conn_auth_plugin(conn);
    if (getenv("FFB_FUZZ_VERBOSE"))
        fprintf(stderr,
                "scenario %u chunk %u: %zu bytes, step %d, "
                "protocol %d, crypt \"%s\": %s\n",
                (unsigned)(sc - scenarios), chunk_byte, size, step,
                ffb_conn_protocol(conn), ffb_conn_wire_crypt(conn),
                ffb_error_message(e));
    ffb_conn_feed_eof(conn);
    ffb_conn_free(conn);
    return 0;
}
