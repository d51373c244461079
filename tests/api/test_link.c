/*
 * The public API as an application sees it: compiled against
 * include/fastfb.h alone (C99) and linked against the shared library only,
 * so every call here goes through an exported symbol. Calls every public
 * function that can run without a server; the ones that talk to a server
 * are reached through paths that fail before any I/O (FFB_E_INVAL,
 * FFB_E_STATE) or through the byte pump (FFB_IO_EXTERNAL), where this test
 * plays the server.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fastfb.h"

/* A valid options struct: no I/O happens in ffb_conn_new, so any host. */
static ffb_conn_options base_options(void) {
    ffb_conn_options o;
    ffb_conn_options_init(&o);
    o.database = "/db/api-test.fdb";
    return o;
}

static ffb_conn *new_conn(const ffb_conn_options *o) {
    ffb_conn *conn = NULL;
    assert_int_equal(ffb_conn_new(o, &conn), FFB_OK);
    assert_non_null(conn);
    return conn;
}

/* ---- version and result codes -------------------------------------------- */

static void test_version_matches_header(void **state) {
    (void)state;
    char want[32];
    snprintf(want, sizeof(want), "%d.%d.%d", FFB_VERSION_MAJOR,
             FFB_VERSION_MINOR, FFB_VERSION_PATCH);
    assert_string_equal(ffb_version(), want);
    assert_int_equal(FFB_VERSION_NUM, FFB_VERSION_MAJOR << 16 |
                                          FFB_VERSION_MINOR << 8 |
                                          FFB_VERSION_PATCH);
}

static void test_codes_have_name_and_text(void **state) {
    (void)state;
    static const struct {
        int code;
        const char *name;
        const char *text;
    } codes[] = {
#define ROW(name, value, text) {value, "FFB_" #name, text},
        FFB_ERRNO_MAP(ROW)
#undef ROW
    };
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        assert_string_equal(ffb_err_name(codes[i].code), codes[i].name);
        assert_string_equal(ffb_strerror(codes[i].code), codes[i].text);
    }
    assert_int_equal(FFB_OK, 0);
    assert_true(FFB_E_ABORTED > FFB_E_FATAL);
    assert_true(FFB_E_IO < FFB_E_FATAL && FFB_E_NOMEM < FFB_E_FATAL);
}

static void test_unknown_codes(void **state) {
    (void)state;
    static const int unknown[] = {1, 7, -60, -99, -150, -1000, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        assert_string_equal(ffb_err_name(unknown[i]), "FFB_E_UNKNOWN");
        assert_string_equal(ffb_strerror(unknown[i]), "unknown error code");
    }
}

/* ---- options and ffb_conn_new ---------------------------------------------
 */

static void test_options_init_matches_initializer(void **state) {
    (void)state;
    ffb_conn_options a = FFB_CONN_OPTIONS_INIT;
    ffb_conn_options b;
    memset(&b, 0xA5, sizeof(b));
    ffb_conn_options_init(&b);
    assert_int_equal(b.version, FFB_CONN_OPTIONS_VERSION);
    assert_int_equal(a.version, b.version);
    assert_null(b.dsn);
    assert_null(b.host);
    assert_null(b.database);
    assert_null(b.password);
    assert_null(b.auth_plugins);
    assert_null(b.allocator);
    assert_int_equal(b.wire_crypt, 0);
    assert_int_equal(b.io, FFB_IO_BLOCKING);
    assert_int_equal(b.compress, 0);
    assert_int_equal(b.process_id, 0);
}

static void *bad_malloc(size_t size, void *data) {
    (void)data;
    return malloc(size);
}

/* ffb_conn_new must refuse `o` with FFB_E_INVAL, and leave a connection
   whose error says why (its message holds `names`), which refuses to
   connect with that error. */
static void expect_rejected(const ffb_conn_options *o, const char *what,
                            const char *names) {
    ffb_conn *conn = NULL;
    int rc = ffb_conn_new(o, &conn);
    if (rc != FFB_E_INVAL)
        fail_msg("%s: expected FFB_E_INVAL, got %s", what, ffb_err_name(rc));
    assert_non_null(conn);
    const ffb_error *e = ffb_conn_error(conn);
    assert_int_equal(ffb_error_code(e), FFB_E_INVAL);
    if (!strstr(ffb_error_message(e), names))
        fail_msg("%s: the error \"%s\" does not name \"%s\"", what,
                 ffb_error_message(e), names);
    assert_int_equal(ffb_conn_connect(conn), FFB_E_INVAL);
    assert_non_null(strstr(ffb_error_message(ffb_conn_error(conn)), names));
    assert_int_equal(ffb_conn_is_attached(conn), 0);
    ffb_conn_free(conn);
}

#define REJECTS(field, value, names)                                           \
    do {                                                                       \
        ffb_conn_options o_ = base_options();                                  \
        o_.field = value;                                                      \
        expect_rejected(&o_, #field " = " #value, names);                      \
    } while (0)

static void test_conn_new_rejects_bad_options(void **state) {
    (void)state;
    static const ffb_allocator no_free = {bad_malloc, NULL, NULL, NULL};

    REJECTS(version, 0, "version is 0");
    REJECTS(version, FFB_CONN_OPTIONS_VERSION + 1, "ffb_conn_options.version");
    REJECTS(database, NULL, "no database");
    REJECTS(database, "", "no database");
    REJECTS(auth_plugins, "Kerberos", "\"Kerberos\"");
    REJECTS(auth_plugins, "srp256", "\"srp256\""); /* case-sensitive */
    REJECTS(auth_plugins, " , ", "list is empty");  /* empty list */
    REJECTS(wire_crypt_plugins, "AES", "\"AES\"");
    REJECTS(wire_crypt, 3, "wire_crypt");
    REJECTS(wire_crypt, -1, "wire_crypt");
    REJECTS(io, 2, "io must be");
    REJECTS(dialect, 2, "dialect");
    REJECTS(allocator, &no_free, "allocator");
    REJECTS(min_protocol, 9, "min_protocol");
    REJECTS(min_protocol, 14, "min_protocol");

    expect_rejected(NULL, "NULL options", "no options");
    ffb_conn_options o = base_options();
    assert_int_equal(ffb_conn_new(&o, NULL), FFB_E_INVAL);
}

static void test_conn_new_accepts_good_options(void **state) {
    (void)state;
    ffb_conn_options o = base_options();
    o.host = "db.example";
    o.port = "3051";
    o.user = "alice";
    o.password = "secret";
    o.role = "READER";
    o.charset = "WIN1252";
    o.auth_plugins = "Srp;Srp224 Srp256,Srp384,Srp512,Legacy_Auth";
    o.wire_crypt_plugins = "Arc4";
    o.wire_crypt = FFB_CRYPT_REQUIRED;
    o.compress = 1;
    o.io = FFB_IO_EXTERNAL;
    o.connect_timeout_ms = 500;
    o.io_timeout_ms = 500;
    o.dialect = 1;
    o.no_pipeline_crypt = 1;
    o.min_protocol = 10;
    o.os_user = "alice";
    o.client_host = "client1";
    o.process_id = 42;
    o.process_name = "api-test";
    ffb_conn *conn = new_conn(&o);
    ffb_conn_free(conn);
}

/* ---- a connection that never connected ----------------------------------- */

static void test_conn_fresh_accessors(void **state) {
    (void)state;
    ffb_conn_options o = base_options();
    ffb_conn *conn = new_conn(&o);
    assert_int_equal(ffb_conn_is_broken(conn), 0);
    assert_int_equal(ffb_conn_is_attached(conn), 0);
    assert_int_equal(ffb_conn_protocol(conn), 0);
    assert_int_equal(ffb_conn_is_compressed(conn), 0);
    assert_string_equal(ffb_conn_auth_plugin(conn), "");
    assert_string_equal(ffb_conn_wire_crypt(conn), "");
    assert_int_equal(ffb_conn_wants(conn), 0);
    const uint8_t *bytes = NULL;
    assert_int_equal(ffb_conn_output(conn, &bytes), 0);
    ffb_conn_output_done(conn, 0);
    assert_true(ffb_conn_step(conn) <= 0); /* not attached */
    ffb_conn_free(conn);
}

static void test_conn_fresh_error_is_empty(void **state) {
    (void)state;
    ffb_conn_options o = base_options();
    ffb_conn *conn = new_conn(&o);
    const ffb_error *e = ffb_conn_error(conn);
    assert_non_null(e);
    assert_int_equal(ffb_error_code(e), 0);
    assert_int_equal(ffb_error_gds(e), 0);
    assert_int_equal(ffb_error_count(e), 0);
    assert_int_equal(ffb_error_gds_at(e, 0), 0);
    assert_string_equal(ffb_error_symbol_at(e, 0), "");
    assert_int_equal(ffb_error_arg_count(e, 0), 0);
    assert_null(ffb_error_arg(e, 0, 0));
    assert_string_equal(ffb_error_sqlstate(e), "");
    assert_int_equal(ffb_error_sqlcode(e), 0);
    assert_non_null(ffb_error_message(e));
    assert_string_equal(ffb_error_message(e), "");
    assert_int_equal(ffb_error_has(e, FFB_GDS_LOGIN), 0);
    ffb_conn_free(conn);
}

static void test_conn_stats_fresh_and_partial(void **state) {
    (void)state;
    ffb_conn_options o = base_options();
    ffb_conn *conn = new_conn(&o);
    ffb_stats st;
    memset(&st, 0xFF, sizeof(st));
    assert_int_equal(ffb_conn_stats(conn, &st, sizeof(st)), FFB_OK);
    assert_int_equal(st.round_trips, 0);
    assert_int_equal(st.flushes, 0);
    assert_int_equal(st.packets_sent, 0);
    assert_int_equal(st.packets_received, 0);
    assert_int_equal(st.bytes_sent, 0);
    assert_int_equal(st.bytes_received, 0);
    assert_int_equal(st.wire_bytes_sent, 0);
    assert_int_equal(st.wire_bytes_received, 0);
    /* An older caller knowing only the first field: nothing past it is
       written. */
    memset(&st, 0xFF, sizeof(st));
    assert_int_equal(ffb_conn_stats(conn, &st, sizeof(st.round_trips)), FFB_OK);
    assert_int_equal(st.round_trips, 0);
    assert_true(st.flushes == UINT64_MAX);
    assert_int_equal(ffb_conn_stats(conn, NULL, sizeof(st)), FFB_E_INVAL);
    assert_int_equal(ffb_conn_stats(NULL, &st, sizeof(st)), FFB_E_INVAL);
    ffb_conn_reset_stats(conn);
    ffb_conn_free(conn);
}

static void test_conn_close_never_connected(void **state) {
    (void)state;
    ffb_conn_options o = base_options();
    ffb_conn *conn = new_conn(&o);
    assert_int_equal(ffb_conn_close(conn), FFB_OK);
    assert_int_equal(ffb_conn_close(conn), FFB_OK);
    assert_int_equal(ffb_conn_is_attached(conn), 0);
    assert_int_equal(ffb_conn_is_broken(conn), 0);
    ffb_conn_free(conn);
}

static void test_conn_free_null(void **state) {
    (void)state;
    ffb_conn_free(NULL);
}

/* Calls that need an attachment fail before any I/O. */
static void test_conn_calls_need_attachment(void **state) {
    (void)state;
    ffb_conn_options o = base_options();
    ffb_conn *conn = new_conn(&o);
    uint8_t buf[16];
    size_t len = 99;
    ffb_db_info info;
    const uint8_t item = 1;

    assert_int_equal(ffb_conn_ping(conn), FFB_E_STATE);
    assert_int_equal(ffb_error_code(ffb_conn_error(conn)), FFB_E_STATE);
    assert_string_not_equal(ffb_error_message(ffb_conn_error(conn)), "");
    assert_int_equal(ffb_conn_drop_database(conn), FFB_E_STATE);
    assert_int_equal(ffb_conn_db_info(conn, &info, sizeof(info)), FFB_E_STATE);
    assert_int_equal(ffb_conn_info_raw(conn, &item, 1, buf, sizeof(buf), &len),
                     FFB_E_STATE);
    assert_int_equal(ffb_conn_info_raw(conn, NULL, 1, buf, sizeof(buf), &len),
                     FFB_E_INVAL);
    assert_int_equal(ffb_conn_db_info(conn, NULL, 0), FFB_E_INVAL);

    ffb_create_options copts = FFB_CREATE_OPTIONS_INIT;
    copts.page_size = 1000;
    assert_int_equal(ffb_conn_create_database(conn, &copts), FFB_E_INVAL);
    copts.page_size = 0;
    copts.dialect = 2;
    assert_int_equal(ffb_conn_create_database(conn, &copts), FFB_E_INVAL);
    /* A blocking connection cannot be started with the byte pump. */
    assert_int_equal(ffb_conn_start(conn), FFB_E_INVAL);

    assert_int_equal(ffb_conn_connect(NULL), FFB_E_INVAL);
    assert_int_equal(ffb_conn_create_database(NULL, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_conn_close(NULL), FFB_E_INVAL);
    assert_int_equal(ffb_conn_ping(NULL), FFB_E_INVAL);
    assert_int_equal(ffb_conn_drop_database(NULL), FFB_E_INVAL);
    assert_int_equal(ffb_conn_feed(NULL, buf, 1), FFB_E_INVAL);
    assert_int_equal(ffb_conn_feed(conn, NULL, 1), FFB_E_INVAL);
    assert_int_equal(ffb_conn_feed_eof(NULL), FFB_E_INVAL);
    assert_int_equal(ffb_conn_step(NULL), FFB_E_INVAL);
    assert_int_equal(ffb_conn_start(NULL), FFB_E_INVAL);
    assert_int_equal(ffb_conn_is_broken(conn), 0);
    ffb_conn_free(conn);
}

/* ---- the dsn parser, through ffb_conn_new ---------------------------------
 */

static int dsn_rc(const char *dsn) {
    ffb_conn_options o;
    ffb_conn_options_init(&o);
    o.dsn = dsn;
    ffb_conn *conn = NULL;
    int rc = ffb_conn_new(&o, &conn);
    ffb_conn_free(conn);
    return rc;
}

static void test_dsn_accepted(void **state) {
    (void)state;
    static const char *const ok[] = {
        "employee",
        "/var/lib/firebird/data/x.fdb",
        "localhost:/var/db/x.fdb",
        "localhost:employee",
        "db.example/3051:/var/db/x.fdb",
        "db.example/gds_db:x",
        "127.0.0.1:/db/x.fdb",
        "[::1]:/db/x.fdb",
        "[::1]/3051:/db/x.fdb",
        "inet://db.example/x.fdb",
        "inet://db.example:3051//var/db/x.fdb",
        "inet4://127.0.0.1:3050/employee",
        "inet6://[::1]:3050/employee",
        "inet6://[fe80::1]/x.fdb",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (dsn_rc(ok[i]) != FFB_OK)
            fail_msg("dsn \"%s\" was rejected", ok[i]);
    /* An explicit database overrides the path of the dsn. */
    ffb_conn_options o;
    ffb_conn_options_init(&o);
    o.dsn = "db.example:/a.fdb";
    o.database = "/b.fdb";
    ffb_conn_free(new_conn(&o));
}

static void test_dsn_rejected(void **state) {
    (void)state;
    static const char *const bad[] = {
        "",
        ":/db/x.fdb",             /* empty host */
        "localhost:",             /* empty path */
        "localhost/:/x.fdb",      /* empty port */
        "[::1",                   /* unclosed bracket */
        "[::1]",                  /* no path */
        "[::1]/3050",             /* no path */
        "[::1]:",                 /* empty path */
        "inet://db.example",      /* no path */
        "inet://db.example:3050", /* no path */
        "inet://db.example/",     /* empty path */
        "inet6://[::1:3050/x",    /* unclosed bracket */
        "inet://:3050/x",         /* empty host */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (dsn_rc(bad[i]) != FFB_E_INVAL)
            fail_msg("dsn \"%s\" was accepted (or failed otherwise)", bad[i]);
}

/* ---- per-connection allocator
 * ------------------------------------------------ */

typedef struct counting {
    long live;
    long calls;
} counting;

static void *c_malloc(size_t size, void *data) {
    counting *c = data;
    void *p = malloc(size);
    if (p) {
        c->live++;
        c->calls++;
    }
    return p;
}

static void *c_realloc(void *ptr, size_t size, void *data) {
    counting *c = data;
    void *p = realloc(ptr, size);
    if (p) {
        c->calls++;
        if (!ptr)
            c->live++;
    }
    return p;
}

static void c_free(void *ptr, void *data) {
    counting *c = data;
    if (ptr) {
        c->live--;
        c->calls++;
    }
    free(ptr);
}

static void test_allocator_is_used_and_balanced(void **state) {
    (void)state;
    counting cnt = {0, 0};
    ffb_allocator a = {c_malloc, c_realloc, c_free, &cnt};
    ffb_conn_options o = base_options();
    o.allocator = &a;
    o.io = FFB_IO_EXTERNAL;
    ffb_conn *conn = new_conn(&o);
    assert_true(cnt.calls > 0);
    assert_int_equal(ffb_conn_start(conn), FFB_OK);
    const uint8_t *bytes;
    assert_true(ffb_conn_output(conn, &bytes) > 0);
    ffb_conn_free(conn);
    assert_int_equal(cnt.live, 0);
}

/* ---- the byte pump (FFB_IO_EXTERNAL): the test plays the server ---------- */

typedef struct wire {
    uint8_t b[512];
    size_t len;
} wire;

static void put32(wire *w, uint32_t v) {
    assert_true(w->len + 4 <= sizeof(w->b));
    w->b[w->len++] = (uint8_t)(v >> 24);
    w->b[w->len++] = (uint8_t)(v >> 16);
    w->b[w->len++] = (uint8_t)(v >> 8);
    w->b[w->len++] = (uint8_t)v;
}

/* XDR opaque: length, bytes, zero padding to a multiple of 4. */
static void put_str(wire *w, const char *s) {
    size_t n = strlen(s);
    put32(w, (uint32_t)n);
    assert_true(w->len + n + 3 <= sizeof(w->b));
    memcpy(w->b + w->len, s, n);
    w->len += n;
    while (w->len % 4)
        w->b[w->len++] = 0;
}

static ffb_conn *started_external(void) {
    ffb_conn_options o = base_options();
    o.io = FFB_IO_EXTERNAL;
    ffb_conn *conn = new_conn(&o);
    assert_int_equal(ffb_conn_start(conn), FFB_OK);
    return conn;
}

static void test_external_start_emits_op_connect(void **state) {
    (void)state;
    ffb_conn *conn = started_external();
    assert_int_equal(ffb_conn_wants(conn), FFB_WANT_READ | FFB_WANT_WRITE);
    /* The blocking calls refuse an external-I/O connection. */
    assert_int_equal(ffb_conn_connect(conn), FFB_E_STATE);
    assert_int_equal(ffb_conn_start(conn), FFB_E_STATE);

    const uint8_t *bytes = NULL;
    size_t n = ffb_conn_output(conn, &bytes);
    assert_true(n >= 16);
    assert_non_null(bytes);
    static const uint8_t op_connect[4] = {0, 0, 0, 1};
    assert_memory_equal(bytes, op_connect, 4);
    /* Written in two parts, as a short write would do. */
    ffb_conn_output_done(conn, 3);
    assert_int_equal(ffb_conn_output(conn, &bytes), n - 3);
    ffb_conn_output_done(conn, n - 3);
    assert_int_equal(ffb_conn_output(conn, &bytes), 0);
    assert_int_equal(ffb_conn_wants(conn), FFB_WANT_READ);
    assert_int_equal(ffb_conn_step(conn), 0);

    ffb_stats st;
    assert_int_equal(ffb_conn_stats(conn, &st, sizeof(st)), FFB_OK);
    assert_int_equal(st.packets_sent, 1);
    assert_int_equal(st.flushes, 1);
    assert_int_equal(st.bytes_sent, n);
    assert_int_equal(st.wire_bytes_sent, n); /* no zlib, no cipher yet */
    assert_int_equal(st.round_trips, 0);     /* no answer yet */
    ffb_conn_reset_stats(conn);
    assert_int_equal(ffb_conn_stats(conn, &st, sizeof(st)), FFB_OK);
    assert_int_equal(st.packets_sent, 0);
    assert_int_equal(st.wire_bytes_sent, 0);
    ffb_conn_free(conn);
}

/*
 * The server refuses op_connect with op_response (op 9: object, blob id,
 * empty data) and this status vector:
 *   isc_arg_gds io_error, isc_arg_string "open", isc_arg_string path,
 *   isc_arg_gds sys_request, isc_arg_string "open", isc_arg_unix 2,
 *   isc_arg_end
 */
static void test_external_server_error_fills_error(void **state) {
    (void)state;
    ffb_conn *conn = started_external();
    const uint8_t *bytes;
    ffb_conn_output_done(conn, ffb_conn_output(conn, &bytes));

    wire w = {{0}, 0};
    put32(&w, 9); /* op_response */
    put32(&w, 0); /* p_resp_object */
    put32(&w, 0); /* p_resp_blob_id */
    put32(&w, 0);
    put32(&w, 0); /* p_resp_data: empty */
    put32(&w, 1); /* isc_arg_gds */
    put32(&w, FFB_GDS_IO_ERROR);
    put32(&w, 2); /* isc_arg_string */
    put_str(&w, "open");
    put32(&w, 2);
    put_str(&w, "/nope.fdb");
    put32(&w, 1);
    put32(&w, 335544373u); /* isc_sys_request */
    put32(&w, 2);
    put_str(&w, "open");
    put32(&w, 7); /* isc_arg_unix */
    put32(&w, 2);
    put32(&w, 0); /* isc_arg_end */

    /* Fed in two pieces: the packet is parsed only once it is complete. */
    assert_int_equal(ffb_conn_feed(conn, w.b, 10), FFB_OK);
    assert_int_equal(ffb_conn_step(conn), 0);
    /* A refused connect ends the connection: the feed that completes the
       answer reports it, and so does every later step. */
    assert_int_equal(ffb_conn_feed(conn, w.b + 10, w.len - 10), FFB_E_SERVER);
    assert_int_equal(ffb_conn_step(conn), FFB_E_SERVER);
    assert_int_equal(ffb_conn_is_broken(conn), 1);
    assert_int_equal(ffb_conn_is_attached(conn), 0);

    const ffb_error *e = ffb_conn_error(conn);
    assert_int_equal(ffb_error_code(e), FFB_E_SERVER);
    assert_int_equal(ffb_error_gds(e), FFB_GDS_IO_ERROR);
    assert_int_equal(ffb_error_count(e), 2);
    assert_int_equal(ffb_error_gds_at(e, 0), FFB_GDS_IO_ERROR);
    assert_int_equal(ffb_error_gds_at(e, 1), 335544373u);
    assert_int_equal(ffb_error_gds_at(e, 2), 0);
    assert_string_equal(ffb_error_symbol_at(e, 0), "io_error");
    assert_string_equal(ffb_error_symbol_at(e, 1), "sys_request");
    assert_string_equal(ffb_error_symbol_at(e, 2), "");
    assert_int_equal(ffb_error_arg_count(e, 0), 2);
    assert_string_equal(ffb_error_arg(e, 0, 0), "open");
    assert_string_equal(ffb_error_arg(e, 0, 1), "/nope.fdb");
    assert_null(ffb_error_arg(e, 0, 2));
    assert_int_equal(ffb_error_arg_count(e, 1), 2);
    assert_string_equal(ffb_error_arg(e, 1, 1), "2");
    assert_null(ffb_error_arg(e, 2, 0));
    /* No isc_arg_sql_state and no isc_sqlerr: both come from the table. */
    assert_string_equal(ffb_error_sqlstate(e), "08001");
    assert_int_equal(ffb_error_sqlcode(e), -902);
    assert_int_equal(ffb_error_has(e, 335544373u), 1);
    assert_int_equal(ffb_error_has(e, FFB_GDS_LOGIN), 0);
    const char *m = ffb_error_message(e);
    assert_non_null(strstr(m, "/nope.fdb"));
    assert_non_null(strstr(m, "[io_error, SQLSTATE 08001]"));

    ffb_stats st;
    assert_int_equal(ffb_conn_stats(conn, &st, sizeof(st)), FFB_OK);
    assert_int_equal(st.round_trips, 1);
    assert_int_equal(st.packets_received, 1);
    assert_int_equal(st.wire_bytes_received, w.len);
    ffb_conn_free(conn);
}

static void test_external_eof_breaks_the_connection(void **state) {
    (void)state;
    ffb_conn *conn = started_external();
    const uint8_t *bytes;
    ffb_conn_output_done(conn, ffb_conn_output(conn, &bytes));
    assert_int_equal(ffb_conn_feed_eof(conn), FFB_E_CLOSED);
    assert_int_equal(ffb_conn_is_broken(conn), 1);
    assert_int_equal(ffb_conn_wants(conn), 0);
    assert_true(ffb_conn_step(conn) <= FFB_E_FATAL);
    const ffb_error *e = ffb_conn_error(conn);
    assert_int_equal(ffb_error_code(e), FFB_E_CLOSED);
    assert_int_equal(ffb_error_gds(e), 0);
    assert_string_equal(ffb_error_sqlstate(e), "");
    assert_string_not_equal(ffb_error_message(e), "");
    /* After a fatal error, more input is refused with the same code. */
    const uint8_t junk[4] = {0, 0, 0, 9};
    assert_true(ffb_conn_feed(conn, junk, sizeof(junk)) <= FFB_E_FATAL);
    ffb_conn_free(conn);
}

static void test_external_garbage_is_a_protocol_error(void **state) {
    (void)state;
    ffb_conn *conn = started_external();
    const uint8_t *bytes;
    ffb_conn_output_done(conn, ffb_conn_output(conn, &bytes));
    const uint8_t junk[8] = {0, 0, 0x30, 0x39, 0, 0, 0, 0}; /* op 12345 */
    assert_int_equal(ffb_conn_feed(conn, junk, sizeof(junk)), FFB_E_PROTO);
    assert_int_equal(ffb_conn_is_broken(conn), 1);
    assert_int_equal(ffb_error_code(ffb_conn_error(conn)), FFB_E_PROTO);
    ffb_conn_free(conn);
}

/* What a driver of external I/O asks besides the byte pump: the endpoint
   from the dsn (defaults otherwise), a stream failure that breaks the
   connection with its message, and its own pointer. */
static void test_external_driver_helpers(void **state) {
    (void)state;
    ffb_conn_options o = base_options();
    o.io = FFB_IO_EXTERNAL;
    ffb_conn *conn = new_conn(&o);
    assert_string_equal(ffb_conn_host(conn), "localhost");
    assert_string_equal(ffb_conn_port(conn), "3050");
    ffb_conn_free(conn);
    o.database = NULL;
    o.dsn = "db.example/3055:/x.fdb";
    conn = new_conn(&o);
    assert_string_equal(ffb_conn_host(conn), "db.example");
    assert_string_equal(ffb_conn_port(conn), "3055");
    assert_string_equal(ffb_conn_host(NULL), "");
    assert_string_equal(ffb_conn_port(NULL), "");

    assert_null(ffb_conn_io_data(conn));
    int mine;
    ffb_conn_set_io_data(conn, &mine);
    assert_ptr_equal(ffb_conn_io_data(conn), &mine);
    assert_null(ffb_conn_io_data(NULL));
    ffb_conn_set_io_data(NULL, &mine); /* ignored */

    /* Not started: nothing to break. Not a fatal code: refused. */
    assert_int_equal(ffb_conn_feed_error(conn, FFB_E_IO, "x"), FFB_E_STATE);
    assert_int_equal(ffb_conn_feed_error(NULL, FFB_E_IO, "x"), FFB_E_INVAL);
    assert_int_equal(ffb_conn_start(conn), FFB_OK);
    assert_int_equal(ffb_conn_feed_error(conn, FFB_E_SERVER, "x"),
                     FFB_E_INVAL);
    assert_int_equal(ffb_conn_is_broken(conn), 0);
    assert_int_equal(
        ffb_conn_feed_error(conn, FFB_E_IO, "reading from the peer: reset"),
        FFB_E_IO);
    assert_int_equal(ffb_conn_is_broken(conn), 1);
    assert_int_equal(ffb_conn_step(conn), FFB_E_IO);
    assert_string_equal(ffb_error_message(ffb_conn_error(conn)),
                        "reading from the peer: reset");
    /* The first cause stays. */
    assert_int_equal(ffb_conn_feed_error(conn, FFB_E_TIMEOUT, NULL),
                     FFB_E_IO);
    ffb_conn_free(conn);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_matches_header),
        cmocka_unit_test(test_codes_have_name_and_text),
        cmocka_unit_test(test_unknown_codes),
        cmocka_unit_test(test_options_init_matches_initializer),
        cmocka_unit_test(test_conn_new_rejects_bad_options),
        cmocka_unit_test(test_conn_new_accepts_good_options),
        cmocka_unit_test(test_conn_fresh_accessors),
        cmocka_unit_test(test_conn_fresh_error_is_empty),
        cmocka_unit_test(test_conn_stats_fresh_and_partial),
        cmocka_unit_test(test_conn_close_never_connected),
        cmocka_unit_test(test_conn_free_null),
        cmocka_unit_test(test_conn_calls_need_attachment),
        cmocka_unit_test(test_dsn_accepted),
        cmocka_unit_test(test_dsn_rejected),
        cmocka_unit_test(test_allocator_is_used_and_balanced),
        cmocka_unit_test(test_external_start_emits_op_connect),
        cmocka_unit_test(test_external_server_error_fills_error),
        cmocka_unit_test(test_external_eof_breaks_the_connection),
        cmocka_unit_test(test_external_garbage_is_a_protocol_error),
        cmocka_unit_test(test_external_driver_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
