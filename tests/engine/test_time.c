/*
 * Time is an input: the engine reports its next deadline
 * (ffb_conn_deadline) and is told the time (ffb_conn_expire). The blocking
 * calls wait no longer than that deadline and then hand the time back, so
 * the connect and I/O timeouts behave the same through the socket driver,
 * the scripted transport and an application's own I/O. The scripted server
 * runs on a fake clock: a silent server's wait moves the clock by exactly
 * the time the client allowed, so every figure below is exact.
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

static ffb_conn *attach_with(int connect_ms, int io_ms) {
    ffb_conn_options o;
    hostile_options(&o);
    o.connect_timeout_ms = connect_ms;
    o.io_timeout_ms = io_ms;
    return hostile_attach(&H, 17, &o);
}

static void expect_text(ffb_conn *c, const char *part) {
    const char *m = ffb_error_message(ffb_conn_error(c));
    if (!strstr(m, part))
        fail_msg("error \"%s\" does not say \"%s\"", m, part);
}

/* A server that stops answering: the blocking call returns FFB_E_TIMEOUT
   after exactly io_timeout_ms of silence, and the connection is broken. */
static void test_silent_server_times_out(void **state) {
    (void)state;
    ffb_conn *c = attach_with(0, 5000);
    H.stall = 1;
    int64_t t0 = H.now;
    assert_int_equal(ffb_conn_ping(c), FFB_E_TIMEOUT);
    assert_int_equal(H.now - t0, 5000);
    assert_int_equal(H.stalls, 1);
    assert_int_equal(ffb_conn_is_broken(c), 1);
    expect_text(c, "no answer from the server within 5000 ms");
    expect_text(c, "op_ping");
    /* Later calls say the same, without touching the wire. */
    size_t reads = H.reads;
    assert_int_equal(ffb_conn_ping(c), FFB_E_TIMEOUT);
    assert_int_equal(H.reads, reads);
    assert_int_equal(ffb_conn_deadline(c), -1);
    ffb_conn_free(c);
}

/* One byte every 3 s: slower than nothing at all for 5 s would be, but the
   wire keeps moving, so the answer arrives whole after 3 x 16 s. */
static int dribble(hostile *h, ffbp_writer *w, size_t n) {
    const ffbp_writer *answer = h->gen_data;
    if (n >= answer->len)
        return 0;
    h->now += 3000;
    ffbp_put_raw(w, answer->data + n, 1);
    return 1;
}

static void test_slow_answer_keeps_the_wire_alive(void **state) {
    (void)state;
    ffb_conn *c = attach_with(0, 5000);
    ffbp_writer answer;
    ffbp_writer_init(&answer, NULL);
    srv_response(&answer, 0, 0, NULL, 0);
    H.gen = dribble;
    H.gen_data = &answer;
    H.stall = 1;
    int64_t t0 = H.now;
    OK(c, ffb_conn_ping(c));
    assert_int_equal(H.now - t0, 3000 * (int64_t)answer.len);
    assert_true(H.now - t0 > 5000);
    assert_int_equal(H.stalls, 0);
    assert_int_equal(ffb_conn_is_broken(c), 0);
    ffbp_writer_free(&answer);
    ffb_conn_free(c);
}

/* Half an answer, then silence: the deadline counts from the last byte
   that arrived, and the connection breaks (half a packet can never be
   matched to anything again). */
static int half_then_silence(hostile *h, ffbp_writer *w, size_t n) {
    const ffbp_writer *answer = h->gen_data;
    if (n > 0)
        return 0;
    h->now += 4000;
    ffbp_put_raw(w, answer->data, answer->len / 2);
    return 1;
}

static void test_half_an_answer_then_silence(void **state) {
    (void)state;
    ffb_conn *c = attach_with(0, 5000);
    ffbp_writer answer;
    ffbp_writer_init(&answer, NULL);
    srv_response(&answer, 0, 0, NULL, 0);
    H.gen = half_then_silence;
    H.gen_data = &answer;
    H.stall = 1;
    int64_t t0 = H.now;
    assert_int_equal(ffb_conn_ping(c), FFB_E_TIMEOUT);
    assert_int_equal(H.now - t0, 4000 + 5000);
    assert_int_equal(ffb_conn_is_broken(c), 1);
    expect_text(c, "within 5000 ms");
    ffbp_writer_free(&answer);
    ffb_conn_free(c);
}

/* connect_timeout_ms bounds the whole connect, the handshake included. */
static void test_connect_timeout_covers_the_handshake(void **state) {
    (void)state;
    ffb_conn_options o;
    hostile_options(&o);
    o.connect_timeout_ms = 3000;
    ffb_conn *c = NULL;
    OK(c, ffb_conn_new(&o, &c));
    hostile_use(&H, c);
    H.stall = 1;
    int64_t t0 = H.now;
    assert_int_equal(ffb_conn_connect(c), FFB_E_TIMEOUT);
    assert_int_equal(H.now - t0, 3000);
    expect_text(c, "timed out after 3000 ms");
    expect_text(c, "op_connect");
    assert_int_equal(ffb_conn_is_attached(c), 0);
    ffb_conn_free(c);
}

/* Without timeouts there is no deadline: a wait may be as long as the
   server takes (the scripted transport fails the test if the client waits
   without one on a silent server, so it is asked for none here). */
static void test_no_timeout_no_deadline(void **state) {
    (void)state;
    ffb_conn *c = attach_with(0, 0);
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_ping(c));
    assert_int_equal(ffb_conn_deadline(c), -1);
    ffb_conn_free(c);
}

static int64_t fake_now;
static int64_t fake_clock(void *data) {
    (void)data;
    return fake_now;
}

/* An application's own I/O gets the same timeout: the deadline appears
   when a request is on the wire, moves with every byte written or
   received, and ffb_conn_expire() past it breaks the connection - the
   queued request then completes with FFB_E_TIMEOUT. */
static void test_external_io_deadline(void **state) {
    (void)state;
    ffb_conn_options o;
    hostile_options(&o);
    o.io = FFB_IO_EXTERNAL;
    o.io_timeout_ms = 5000;
    ffb_conn *c = NULL;
    OK(c, ffb_conn_new(&o, &c));
    fake_now = 50000;
    ffb__conn_set_clock(c, fake_clock, NULL);
    OK(c, ffb_conn_start(c));
    const uint8_t *out;
    size_t n = ffb_conn_output(c, &out);
    assert_true(n > 0);
    assert_int_equal(ffb_conn_deadline(c), 50000 + 5000);
    ffb_conn_output_done(c, n);
    srv_accept(&W, FFBP_OP_ACCEPT, 17, NULL, NULL, 0, 0, NULL, 0);
    OK(c, ffb_conn_feed(c, W.data, W.len));
    ffbp_writer_reset(&W);
    n = ffb_conn_output(c, &out); /* op_attach */
    ffb_conn_output_done(c, n);
    srv_response(&W, 1, 0, NULL, 0);
    OK(c, ffb_conn_feed(c, W.data, W.len));
    ffbp_writer_reset(&W);
    assert_int_equal(ffb_conn_step(c), 1);
    assert_int_equal(ffb_conn_deadline(c), -1); /* nothing owed */

    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_tx_queue_commit(tx, NULL, NULL));
    /* Queued, not written: no clock runs yet. */
    assert_int_equal(ffb_conn_deadline(c), -1);
    fake_now = 60000;
    n = ffb_conn_output(c, &out);
    assert_true(n > 8);
    assert_int_equal(ffb_conn_deadline(c), 65000);
    fake_now = 61000;
    ffb_conn_output_done(c, n);
    assert_int_equal(ffb_conn_deadline(c), 66000);
    /* The start's answer comes at 65 s: the clock starts again. */
    fake_now = 65000;
    OK(c, ffb_conn_expire(c, fake_now));
    srv_response(&W, 7, 0, NULL, 0);
    OK(c, ffb_conn_feed(c, W.data, W.len));
    ffbp_writer_reset(&W);
    assert_int_equal(ffb_conn_deadline(c), 70000);
    OK(c, ffb_conn_expire(c, 69999));
    assert_int_equal(ffb_conn_is_broken(c), 0);
    assert_int_equal(ffb_conn_expire(c, 70000), FFB_E_TIMEOUT);
    assert_int_equal(ffb_conn_is_broken(c), 1);
    expect_text(c, "op_commit");
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_COMMIT);
    assert_int_equal(ffb_result_status(res), FFB_E_TIMEOUT);
    assert_non_null(strstr(ffb_error_message(ffb_result_error(res)),
                           "within 5000 ms"));
    assert_int_equal(ffb_conn_next_result(c, &res), 0);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void count_result(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    int *seen = data;
    seen[0]++;
    seen[1] = ffb_result_status(res);
    seen[2] = ffb_result_op(res);
}

/* A queued connect whose server accepts, then stays silent: the
   ffb_conn_expire() at the connect deadline completes its result with
   FFB_E_TIMEOUT through the callback, inside that call. */
static void test_queued_connect_times_out(void **state) {
    (void)state;
    ffb_conn_options o;
    hostile_options(&o);
    o.io = FFB_IO_EXTERNAL;
    o.connect_timeout_ms = 3000;
    ffb_conn *c = NULL;
    OK(c, ffb_conn_new(&o, &c));
    fake_now = 10000;
    ffb__conn_set_clock(c, fake_clock, NULL);
    int seen[3] = {0, 0, 0};
    OK(c, ffb_conn_queue_connect(c, count_result, seen));
    assert_int_equal(ffb_conn_deadline(c), 13000);
    const uint8_t *out;
    size_t n = ffb_conn_output(c, &out);
    ffb_conn_output_done(c, n);
    srv_accept(&W, FFBP_OP_ACCEPT, 17, NULL, NULL, 0, 0, NULL, 0);
    OK(c, ffb_conn_feed(c, W.data, W.len));
    ffbp_writer_reset(&W);
    n = ffb_conn_output(c, &out); /* op_attach, never answered */
    ffb_conn_output_done(c, n);
    OK(c, ffb_conn_expire(c, 12999));
    assert_int_equal(seen[0], 0);
    assert_int_equal(ffb_conn_expire(c, 13000), FFB_E_TIMEOUT);
    assert_int_equal(seen[0], 1);
    assert_int_equal(seen[1], FFB_E_TIMEOUT);
    assert_int_equal(seen[2], FFB_OP_CONNECT);
    expect_text(c, "timed out after 3000 ms");
    assert_int_equal(ffb_conn_pending(c), 0);
    ffb_conn_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_silent_server_times_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_slow_answer_keeps_the_wire_alive,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_half_an_answer_then_silence,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_connect_timeout_covers_the_handshake, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_timeout_no_deadline, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_external_io_deadline, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_queued_connect_times_out, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
