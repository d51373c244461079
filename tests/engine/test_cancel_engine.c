/*
 * op_cancel on scripted conversations (docs/cancel.md): where it goes in
 * the byte stream (ahead of what is staged, a write of its own or the
 * first bytes of the next one), that no answer is expected for it (the
 * next answers still match their requests), what happens before the
 * attach, and the FFB_E_* codes the cancel and timeout statuses map to,
 * with the connection's state afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/check.h"
#include "tests/support/hostile.h"

#define setup hostile_setup
#define teardown hostile_teardown

static const uint8_t CANCEL_RAISE[8] = {0, 0, 0, 91, 0, 0, 0, 3};
static const uint8_t CANCEL_DISABLE[8] = {0, 0, 0, 91, 0, 0, 0, 1};
static const uint8_t PING[4] = {0, 0, 0, 93};

/* External I/O: op_cancel goes to the output at once, ahead of a request
   staged before it, while an answer is owed; it is never answered. */
static void test_external_order(void **state) {
    (void)state;
    ffb_conn_options o;
    hostile_options(&o);
    o.io = FFB_IO_EXTERNAL;
    ffb_conn *c = NULL;
    OK(c, ffb_conn_new(&o, &c));
    /* Not attached: refused, nothing is staged. */
    assert_int_equal(ffb_conn_cancel(c, FFB_CANCEL_RAISE), FFB_E_STATE);
    assert_int_equal(ffb_conn_wants(c), 0);
    ffb_conn_free(c);
    c = hostile_ext_attach(17);
    const uint8_t *out;
    OK(c, ffb_conn_queue_ping(c, NULL, NULL));
    size_t n = ffb_conn_output(c, &out);
    assert_int_equal(n, 4);
    ffb_conn_output_done(c, n); /* ping 1 on the wire, its answer owed */
    assert_int_equal(ffb_conn_wants(c), FFB_WANT_READ);

    OK(c, ffb_conn_queue_ping(c, NULL, NULL)); /* ping 2: staged */
    OK(c, ffb_conn_cancel(c, FFB_CANCEL_DISABLE));
    OK(c, ffb_conn_cancel(c, FFB_CANCEL_RAISE));
    assert_true(ffb_conn_wants(c) & FFB_WANT_WRITE);
    /* The two op_cancels alone, then the staged ping in the next write. */
    n = ffb_conn_output(c, &out);
    assert_int_equal(n, 16);
    assert_memory_equal(out, CANCEL_DISABLE, 8);
    assert_memory_equal(out + 8, CANCEL_RAISE, 8);
    ffb_conn_output_done(c, n);
    assert_true(ffb_conn_wants(c) & FFB_WANT_WRITE);
    n = ffb_conn_output(c, &out);
    assert_int_equal(n, 4);
    assert_memory_equal(out, PING, 4);
    ffb_conn_output_done(c, n);

    /* Two answers, for the two pings: nothing was owed for op_cancel. */
    srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, 0, 0, NULL, 0);
    OK(c, ffb_conn_feed(c, W.data, W.len));
    ffbp_writer_reset(&W);
    const ffb_result *res;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(ffb_conn_next_result(c, &res), 1);
        assert_int_equal(ffb_result_op(res), FFB_OP_PING);
        assert_int_equal(ffb_result_status(res), 0);
    }
    assert_int_equal(ffb_conn_next_result(c, &res), 0);
    assert_int_equal(ffb_conn_wants(c), 0);
    assert_int_equal(ffb_conn_cancel(c, 0), FFB_E_INVAL);
    assert_int_equal(ffb_conn_cancel(c, 5), FFB_E_INVAL);
    assert_int_equal(ffb_conn_cancel(NULL, FFB_CANCEL_RAISE), FFB_E_INVAL);
    ffb_conn_free(c);
}

/* Blocking: a cancel asked while no call runs is written first by the
   next call, in a write of its own ahead of its request; one asked before the
   attach is dropped (the handshake starts with op_connect). */
static void test_blocking_next_call(void **state) {
    (void)state;
    ffb_conn_options o;
    hostile_options(&o);
    ffb_conn *c = NULL;
    OK(c, ffb_conn_new(&o, &c));
    OK(c, ffb_conn_cancel(c, FFB_CANCEL_RAISE)); /* recorded */
    hostile_use(&H, c);
    srv_accept(&W, FFBP_OP_ACCEPT, 17, NULL, NULL, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_response(&W, 1, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_connect(c));
    assert_true(H.written_len >= 4);
    assert_int_equal(H.written[3], 1); /* op_connect, no op_cancel */
    for (size_t i = 0; i + 4 <= H.written_len; i += 4)
        assert_false(memcmp(H.written + i, CANCEL_RAISE, 8) == 0);

    size_t at = H.written_len, flushes = H.flushes;
    OK(c, ffb_conn_cancel(c, FFB_CANCEL_RAISE));
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_ping(c));
    assert_int_equal(H.written_len - at, 12);
    assert_memory_equal(H.written + at, CANCEL_RAISE, 8);
    assert_memory_equal(H.written + at + 8, PING, 4);
    /* op_cancel in a write of its own, then the ping. */
    assert_int_equal(H.flushes - flushes, 2);

    /* The next answer is the next ping's: none was owed for op_cancel. */
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_ping(c));
    assert_int_equal(hostile_pending(&H), 0);
    ffb_conn_free(c);
}

/* op_response with the status isc_arg_gds a [, isc_arg_gds b]. */
static void status_answer(ffbp_writer *w, uint32_t a, uint32_t b) {
    ffbp_put_i32(w, FFBP_OP_RESPONSE);
    ffbp_put_i16(w, 0);
    ffbp_put_quad(w, 0);
    ffbp_put_cstring(w, NULL, 0);
    ffbp_put_i32(w, FFBP_ARG_GDS);
    ffbp_put_u32(w, a);
    if (b) {
        ffbp_put_i32(w, FFBP_ARG_GDS);
        ffbp_put_u32(w, b);
    }
    ffbp_put_i32(w, FFBP_ARG_END);
}

static void test_codes(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 17, NULL);
    /* isc_cancelled alone: a raise; usable. */
    status_answer(&W, 335544794u, 0);
    hostile_push(&H, &W);
    assert_int_equal(ffb_conn_ping(c), FFB_E_CANCELLED);
    assert_false(ffb_conn_is_broken(c));
    /* isc_cancelled + isc_req_stmt_timeout / att / cfg: the timeout. */
    const uint32_t second[3] = {335545129u, 335545128u, 335545127u};
    for (int i = 0; i < 3; i++) {
        status_answer(&W, 335544794u, second[i]);
        hostile_push(&H, &W);
        assert_int_equal(ffb_conn_ping(c), FFB_E_STMT_TIMEOUT);
        assert_int_equal(ffb_error_gds_at(ffb_conn_error(c), 1), second[i]);
        assert_false(ffb_conn_is_broken(c));
    }
    /* Another second code: still a cancel. */
    status_answer(&W, 335544794u, 335544436u);
    hostile_push(&H, &W);
    assert_int_equal(ffb_conn_ping(c), FFB_E_CANCELLED);
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_ping(c));
    /* isc_att_shutdown + isc_att_shut_idle: broken with that cause. */
    status_answer(&W, 335544856u, 335545131u);
    hostile_push(&H, &W);
    assert_int_equal(ffb_conn_ping(c), FFB_E_SHUTDOWN);
    assert_true(ffb_conn_is_broken(c));
    assert_int_equal(ffb_conn_ping(c), FFB_E_SHUTDOWN);
    const ffb_error *e = ffb_conn_error(c);
    assert_int_equal(ffb_error_code(e), FFB_E_SHUTDOWN);
    assert_int_equal(ffb_error_gds_at(e, 1), 335545131u);
    /* Recorded on a broken connection: dropped, no write. */
    size_t at = H.written_len;
    OK(c, ffb_conn_cancel(c, FFB_CANCEL_RAISE));
    assert_int_equal(ffb_conn_ping(c), FFB_E_SHUTDOWN);
    assert_int_equal(H.written_len, at);
    ffb_conn_free(c);
}

/* Statement timeouts need protocol 16: refused below it. */
static void test_timeout_protocol(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 15, NULL);
    size_t at = H.written_len;
    assert_int_equal(ffb_conn_set_statement_timeout(c, 1000),
                     FFB_E_UNSUPPORTED);
    assert_int_equal(ffb_conn_set_idle_timeout(c, 60), FFB_E_UNSUPPORTED);
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    assert_int_equal(ffb_stmt_set_timeout(s, 1000), FFB_E_UNSUPPORTED);
    OK(c, ffb_stmt_set_timeout(s, 0));
    assert_int_equal(ffb_stmt_set_timeout(NULL, 0), FFB_E_INVAL);
    assert_int_equal(H.written_len, at);
    ffb_stmt_free(s);
    ffb_conn_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_external_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocking_next_call, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_protocol, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
