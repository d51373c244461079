/*
 * A hostile (or broken) service manager: scripted answers to a service
 * attachment's op_service_info that are malformed, ask for input that was
 * not offered, repeat errors, or deliver endless lines - each must end in
 * a clear FFB_E_* error (a protocol error breaks the connection), never a
 * crash, a hang or unbounded memory. Also the exact bytes of the service
 * attach and of a restore's first input, and the round trips of a failed
 * start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/service.h"
#include "tests/support/check.h"
#include "tests/support/hostile.h"

#define setup hostile_setup
#define teardown hostile_teardown

static uint64_t rts(ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

static void expect_proto(ffb_conn *c, int rc, const char *needle) {
    if (rc != FFB_E_PROTO)
        fail_msg("expected FFB_E_PROTO, got %d (%s)", rc,
                 ffb_error_message(ffb_conn_error(c)));
    assert_true(ffb_conn_is_broken(c));
    if (needle)
        expect_msg(c, needle);
}

/* The bytes the client wrote contain `needle`. */
static int wrote(const void *needle, size_t n) {
    for (size_t i = 0; i + n <= H.written_len; i++)
        if (memcmp(H.written + i, needle, n) == 0)
            return 1;
    return 0;
}

/* A service attachment over the script: op_accept (protocol 15, flow C),
   then the op_service_attach answer. */
static ffb_conn *svc_attach(void) {
    ffb_conn_options o;
    hostile_options(&o);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    hostile_use(&H, c);
    srv_accept(&W, FFBP_OP_ACCEPT, 15, NULL, NULL, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_svc_connect(c));
    /* op_connect names the service manager; op_service_attach (82) names
       it too, with the user name first in an SPB of the current version
       ("02 02", one-byte lengths) or, when the SRP data of flow C is
       longer than 255 bytes (hex of a random number: 255 or 256), of the
       wide form ("03", four-byte lengths). */
    static const uint8_t attach[] = {0, 0, 0, 82, 0, 0, 0, 0};
    assert_true(wrote(attach, sizeof(attach)));
    assert_true(wrote("service_mgr", 11));
    static const uint8_t wide[] = {3, 28, 6, 0, 0, 0};
    static const uint8_t narrow[] = {2, 2, 28, 6};
    assert_true(wrote(wide, sizeof(wide)) || wrote(narrow, sizeof(narrow)));
    static const uint8_t auth[] = {116}; /* isc_spb_auth_plugin_name */
    assert_true(wrote(auth, sizeof(auth)));
    return c;
}

/* An op_response whose data is `p`. */
static void answer(const void *p, size_t n) {
    srv_response(&W, 0, 0, p, n);
    hostile_push(&H, &W);
}

static void test_svc_info_malformed(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    /* isc_info_svc_server_version claiming 255 bytes, 3 present. */
    static const uint8_t bad[] = {0x37, 0xFF, 0x00, 'L', 'I', '-', 0x01};
    answer(bad, sizeof(bad));
    ffb_svc_info si;
    expect_proto(c, ffb_svc_server_info(c, &si, sizeof(si)),
                 "malformed answer to op_service_info");
    ffb_conn_free(c);
}

static void test_svc_info_legacy_format(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    /* The legacy (SPB version 1) format of isc_info_svc_version has a
       length; we asked in the current format: refused. */
    static const uint8_t v1[] = {0x36, 0x04, 0x00, 0x02, 0x00, 0x00, 0x00,
                                 0x01};
    answer(v1, sizeof(v1));
    ffb_svc_info si;
    expect_proto(c, ffb_svc_server_info(c, &si, sizeof(si)), NULL);
    ffb_conn_free(c);
}

static void test_svc_info_good(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    uint64_t before = rts(c);
    /* The FB5 answer of reference 03, C.6.4 (trimmed to its used length). */
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    static const uint8_t head[] = {0x36, 2, 0, 0, 0};
    ffbp_put_raw(&w, head, sizeof(head));
    static const char ver[] = "LI-V5.0.4.1812 Firebird 5.0";
    uint8_t h[3] = {0x37, sizeof(ver) - 1, 0};
    ffbp_put_raw(&w, h, 3);
    ffbp_put_raw(&w, ver, sizeof(ver) - 1);
    static const uint8_t rest[] = {0x39, 6, 0, 0, 0, 0x32, 5, 2, 0, 0, 0, 6,
                                   1, 0, 0, 0, 0x6A, 3, 0, 'a', '.', 'b',
                                   0x7F, 0x01};
    ffbp_put_raw(&w, rest, sizeof(rest));
    answer(w.data, w.len);
    ffbp_writer_free(&w);
    ffb_svc_info si;
    OK(c, ffb_svc_server_info(c, &si, sizeof(si)));
    assert_int_equal(rts(c) - before, 1);
    assert_int_equal(si.version, 2);
    assert_string_equal(si.server_version, ver);
    assert_int_equal(si.capabilities, 6);
    assert_int_equal(si.attachments, 2);
    assert_int_equal(si.databases, 1);
    assert_string_equal(si.implementation, ""); /* not answered */
    ffb_conn_free(c);
}

static const uint8_t stats_spb[] = {11, 106, 1, 0, 'x', 108, 4, 0, 0, 0};

static int count_line(const char *line, size_t len, void *data) {
    (void)line;
    size_t *n = data;
    (*n)++;
    assert_true(len <= 65536);
    return 0;
}

static void test_svc_output_malformed(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    answer(NULL, 0); /* op_service_start */
    static const uint8_t bad[] = {0x3F, 0x10, 0x00, 'a', 'b'};
    answer(bad, sizeof(bad));
    size_t n = 0;
    ffb_svc_io io = {FFB_SVC_IO_VERSION, count_line, NULL, NULL, &n, 0};
    expect_proto(c, ffb_svc_run(c, stats_spb, sizeof(stats_spb), &io),
                 "service output");
    assert_int_equal(n, 0);
    ffb_conn_free(c);
}

static void test_svc_unrequested_input(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    answer(NULL, 0);
    /* The server asks for 1000 bytes of stdin nobody offered. */
    static const uint8_t ask[] = {0x4E, 0xE8, 0x03, 0x00, 0x00, 0x3F, 0x00,
                                  0x00, 0x04, 0x01};
    answer(ask, sizeof(ask));
    expect_proto(c, ffb_svc_run(c, stats_spb, sizeof(stats_spb), NULL),
                 "asks for input");
    ffb_conn_free(c);
}

/* The start fails; the next answer repeats the error (C.6.3): reported
   once, in 1 round trip (start and first query share a write), and the
   attachment stays usable. */
static void test_svc_start_error_drained(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    srv_error(&W, 336920605u); /* isc_gstat_open_err */
    hostile_push(&H, &W);
    srv_error(&W, 336920605u);
    hostile_push(&H, &W);
    uint64_t before = rts(c);
    assert_int_equal(ffb_svc_run(c, stats_spb, sizeof(stats_spb), NULL),
                     FFB_E_SERVER);
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)), 336920605u);
    assert_int_equal(rts(c) - before, 1);
    assert_false(ffb_conn_is_broken(c));
    /* A started service that fails later: the error answer says nothing
       more may come (no output item, no marker), so the action ends with
       it after that one query. */
    answer(NULL, 0);
    srv_error(&W, 335544382u);
    hostile_push(&H, &W);
    assert_int_equal(ffb_svc_run(c, stats_spb, sizeof(stats_spb), NULL),
                     FFB_E_SERVER);
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)), 335544382u);
    ffb_svc_stats st;
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(st.queries, 1);
    assert_int_equal(hostile_pending(&H), 0);
    ffb_conn_free(c);
}

/* Endless text without a newline: delivered in bounded pieces. */
static int endless(hostile *h, ffbp_writer *w, size_t n) {
    (void)h;
    if (n >= 40)
        return 0;
    static uint8_t chunk[3 + 60000 + 2];
    chunk[0] = 0x3F;
    chunk[1] = (uint8_t)(60000 & 0xFF);
    chunk[2] = (uint8_t)(60000 >> 8);
    memset(chunk + 3, 'z', 60000);
    chunk[3 + 60000] = 0x02;
    chunk[3 + 60001] = 0x01;
    srv_response(w, 0, 0, chunk, sizeof(chunk));
    return 1;
}

static void test_svc_endless_line(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    answer(NULL, 0);
    H.gen = endless;
    size_t n = 0;
    ffb_svc_io io = {FFB_SVC_IO_VERSION, count_line, NULL, NULL, &n, 0};
    int rc = ffb_svc_run(c, stats_spb, sizeof(stats_spb), &io);
    /* The script ends with EOF after 40 answers of 60000 bytes. */
    assert_int_equal(rc, FFB_E_CLOSED);
    assert_true(n >= 30); /* 2.4 MB in lines of at most 64 KiB */
    ffb_conn_free(c);
}

/* A restore: the server asks for 262144 bytes; the client sends what its
   callback gives (at most one 65000-byte chunk) as the send item 62. */
static int give(uint8_t *buf, size_t size, size_t *got, void *data) {
    int *calls = data;
    assert_true(size <= 65000);
    if ((*calls)++ == 0) {
        memcpy(buf, "GBAKDATA", 8);
        *got = 8;
    } else {
        *got = 0;
    }
    return 0;
}

static void test_svc_restore_input(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    answer(NULL, 0);
    static const uint8_t ask[] = {0x4E, 0x00, 0x00, 0x04, 0x00, 0x43, 1, 0,
                                  0, 0, 0x3F, 0x00, 0x00, 0x04, 0x01};
    answer(ask, sizeof(ask));
    static const uint8_t done[] = {0x4E, 0, 0, 0, 0, 0x43, 0, 0, 0, 0,
                                   0x3F, 0x00, 0x00, 0x01};
    answer(done, sizeof(done));
    int calls = 0;
    OK(c, ffb_svc_restore(c, "/db/new.fdb", 0, give, NULL, &calls));
    static const uint8_t item[] = {0x3E, 8, 0, 'G', 'B', 'A', 'K', 'D', 'A',
                                   'T', 'A', 0x01};
    assert_true(wrote(item, sizeof(item)));
    ffb_svc_stats st;
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(st.bytes_in, 8);
    assert_int_equal(st.queries, 2);
    ffb_conn_free(c);
}

static int keep_none(const uint8_t *p, size_t len, void *data) {
    (void)p;
    *(size_t *)data += len;
    return 0;
}

/* A backup keeps four queries in flight: after the answer that ends the
   stream, the ones asked ahead must be empty - output there is refused. */
static void test_svc_backup_output_after_end(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    answer(NULL, 0); /* op_service_start */
    static const uint8_t more[] = {0x43, 1, 0, 0, 0, 0x3F, 4, 0, 0, 2, 4,
                                   10, 0x02, 0x01};
    answer(more, sizeof(more)); /* first query: data, more follows */
    static const uint8_t end[] = {0x43, 0, 0, 0, 0, 0x3F, 0, 0, 0x01};
    answer(end, sizeof(end));   /* the end */
    static const uint8_t late[] = {0x43, 0, 0, 0, 0, 0x3F, 2, 0, 'x', 'y',
                                   0x01};
    answer(late, sizeof(late)); /* output after the end */
    answer(end, sizeof(end));
    answer(end, sizeof(end));
    size_t got = 0;
    expect_proto(c, ffb_svc_backup(c, "/db/a.fdb", 0, keep_none, &got),
                 "after its end");
    assert_int_equal(got, 4);
    ffb_conn_free(c);
}

/* The same with empty answers after the end: success, all four absorbed,
   in 2 round trips (start + first query; then the four queries asked
   ahead in one write). */
static void test_svc_backup_window(void **state) {
    (void)state;
    ffb_conn *c = svc_attach();
    answer(NULL, 0);
    static const uint8_t more[] = {0x43, 1, 0, 0, 0, 0x3F, 4, 0, 0, 2, 4,
                                   10, 0x02, 0x01};
    answer(more, sizeof(more));
    static const uint8_t end[] = {0x43, 0, 0, 0, 0, 0x3F, 0, 0, 0x01};
    for (int i = 0; i < 4; i++)
        answer(end, sizeof(end));
    size_t got = 0;
    uint64_t before = rts(c);
    OK(c, ffb_svc_backup(c, "/db/a.fdb", 0, keep_none, &got));
    assert_int_equal(rts(c) - before, 2);
    assert_int_equal(got, 4);
    ffb_svc_stats st;
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(st.queries, 5);
    assert_int_equal(hostile_pending(&H), 0);
    /* Data mode: text actions refused, nothing sent. */
    assert_int_equal(ffb_svc_db_stats(c, NULL, FFB_SVC_STATS_HEADER, NULL,
                                      NULL),
                     FFB_E_STATE);
    assert_int_equal(rts(c) - before, 2);
    ffb_conn_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_svc_info_malformed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_svc_info_legacy_format, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_svc_info_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_svc_output_malformed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_svc_unrequested_input, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_svc_start_error_drained, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_svc_endless_line, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_svc_restore_input, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_svc_backup_output_after_end,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_svc_backup_window, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
