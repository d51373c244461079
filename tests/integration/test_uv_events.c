/*
 * Events on a libuv loop (ffb_uv_events_register): the adapter connects
 * the aux connection on the loop when the server announces it, and the
 * callbacks run on the loop; a blocking second connection posts. Deltas
 * and the round trips of the blocking API are checked, and that closing
 * the connection leaves nothing of the adapter's on the loop (the aux
 * handle is closed with it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "include/fastfb.h"
#include "include/fastfb_uv.h"
#include "tests/support/it.h"

typedef it_target target;

static void options(const target *t, ffb_conn_options *o) {
    it_options(t, o);
    o->io_timeout_ms = 60000;
    o->connect_timeout_ms = 60000;
}

static void guard_tick(uv_timer_t *t) { (void)t; }

/* Run the loop until *flag holds (or `ms` passed: then fail unless
   `may_time_out`). */
static void run_until(uv_loop_t *loop, const int *flag, int ms,
                      int may_time_out, const char *what) {
    uv_timer_t g;
    uv_timer_init(loop, &g);
    uv_timer_start(&g, guard_tick, 20, 20);
    int64_t end = ffb_now_ms() + ms;
    while (!*flag && ffb_now_ms() < end)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&g, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    if (!*flag && !may_time_out)
        fail_msg("gave up waiting for %s", what);
}

typedef struct flag_status {
    int done, status, seq;
} flag_status;

static void on_connected(ffb_conn *c, int status, void *data) {
    (void)c;
    flag_status *s = data;
    s->done = 1;
    s->status = status;
}

static void on_closed(ffb_conn *c, int status, void *data) {
    (void)c;
    flag_status *s = data;
    s->done = 1;
    s->status = status;
}

static void on_result(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    flag_status *s = data;
    s->done = 1;
    s->status = ffb_result_status(res);
}

typedef struct heard {
    int calls, enough;
    uint32_t total, want, last;
    uv_loop_t *loop;
} heard;

static void on_event(ffb_events *ev, const char *name, uint32_t count,
                     void *data) {
    (void)ev;
    (void)name;
    heard *h = data;
    h->calls++;
    h->total += count;
    h->last = count;
    h->enough = h->total >= h->want;
}


/* The callbacks set `enough` once `total` reaches `n`. */
static void want(heard *h, uint32_t n) {
    h->want = n;
    h->enough = h->total >= n;
}

static void test_uv_events(void **state) {
    const target *t = *state;
    char x[64];
    snprintf(x, sizeof(x), "X_UV_%s_%d", t->name, (int)getpid());
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    ffb_conn_options o;
    options(t, &o);
    ffb_conn *a = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, &o, &a), 0);
    flag_status cs = {0};
    OK(a, ffb_uv_connect(a, on_connected, &cs));
    run_until(&loop, &cs.done, 60000, 0, "the connect");
    assert_int_equal(cs.status, 0);

    ffb_events *ev = NULL;
    assert_int_equal(ffb_events_new(a, &ev), 0);
    heard h = {0};
    h.loop = &loop;
    flag_status rs = {0};
    uint64_t r0 = it_rts(a);
    assert_int_equal(ffb_uv_events_register(ev, x, on_event, &h, on_result,
                                            &rs),
                     0);
    run_until(&loop, &rs.done, 60000, 0, "the registration");
    if (rs.status != 0)
        fail_msg("register: %d %s", rs.status,
                 ffb_error_message(ffb_conn_error(a)));
    assert_true(ffb_events_aux_port(ev) > 0);
    /* Let the baseline's re-registration be answered too. */
    int never = 0;
    run_until(&loop, &never, 200, 1, "");
    /* 2: op_connect_request + op_que_events in one write, then the
       baseline's re-registration (as ffb_events_register()). */
    assert_int_equal(it_rts(a) - r0, 2);
    assert_int_equal(h.calls, 0);

    ffb_conn *b = NULL;
    assert_int_equal(ffb_conn_new(&o, &b), 0);
    OK(b, ffb_conn_connect(b));

    /* Three posts in one transaction: one callback on the loop, delta 3. */
    want(&h, 3);
    it_post_event(b, x, 3);
    run_until(&loop, &h.enough, 10000, 0, "the notification");
    assert_int_equal(h.calls, 1);
    assert_int_equal(h.last, 3);

    /* Two commits before the loop runs again: the second is made while
       no request is queued (the first one's notification is on its way),
       so the re-registration carries an older count and fires at once:
       the deltas add up exactly. */
    want(&h, 5);
    it_post_event(b, x, 1);
    it_post_event(b, x, 1);
    run_until(&loop, &h.enough, 10000, 0, "the notifications");
    assert_int_equal(h.total, 5);
    assert_true(h.calls >= 2 && h.calls <= 3);

    /* Unregistered: nothing more comes. */
    flag_status us = {0};
    r0 = it_rts(a);
    assert_int_equal(ffb_events_queue_unregister(ev, x, on_result, &us), 0);
    run_until(&loop, &us.done, 10000, 0, "the unregistration");
    assert_int_equal(us.status, 0);
    assert_int_equal(it_rts(a) - r0, 1); /* op_cancel_events */
    want(&h, 6);
    it_post_event(b, x, 1);
    run_until(&loop, &h.enough, 500, 1, "");
    assert_int_equal(h.total, 5);

    /* The close takes the aux handle with it: the loop ends by itself. */
    flag_status cl = {0};
    assert_int_equal(ffb_uv_close(a, on_closed, &cl), 0);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_true(cl.done);
    assert_int_equal(cl.status, 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    ffb_conn_free(b);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB3E", "FB4", "FB4E"};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uv_events),
    };
    return it_main("UVEVENTS", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
