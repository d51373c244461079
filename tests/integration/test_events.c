/*
 * Events against real servers: connection A registers names (its aux
 * connection opens on the first registration), connection B posts them
 * with EXECUTE BLOCK ... POST_EVENT and commits, A's callbacks must see
 * exactly the posts, as deltas. Event names carry the instance and the
 * process id, so that parallel runs do not hear each other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include <sys/socket.h>

#include "tests/support/extio.h"
#include "tests/support/it.h"

typedef it_target target;

static ffb_conn *conn_to(const target *t) {
    ffb_conn_options o;
    it_options(t, &o);
    o.connect_timeout_ms = 60000;
    return it_open(&o);
}

/* What the callbacks heard. */
typedef struct heard {
    int calls;
    uint32_t total;
    uint32_t last;
    char name[64];
} heard;

static void on_event(ffb_events *ev, const char *name, uint32_t count,
                     void *data) {
    (void)ev;
    heard *h = data;
    h->calls++;
    h->total += count;
    h->last = count;
    snprintf(h->name, sizeof(h->name), "%s", name);
}

static void ename(char *out, size_t size, const target *t, const char *tag) {
    snprintf(out, size, "X_%s_%s_%d", tag, t->name, (int)getpid());
}


/* Wait until `h` has heard `total` posts (each wait delivers >= 1). */
static void wait_total(ffb_events *ev, heard *h, uint32_t total) {
    ffb_conn *c = ffb_events_conn(ev);
    for (int i = 0; i < 20 && h->total < total; i++) {
        int rc = ffb_events_wait(ev, 10000);
        if (rc < 0)
            fail_msg("ffb_events_wait: %d %s", rc,
                     ffb_error_message(ffb_conn_error(c)));
    }
    assert_int_equal(h->total, total);
}

static uint64_t packets_sent(const ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.packets_sent;
}

static void test_deltas(void **state) {
    const target *t = *state;
    char x[64], y[64];
    ename(x, sizeof(x), t, "A");
    ename(y, sizeof(y), t, "B");
    ffb_conn *a = conn_to(t), *b = conn_to(t);
    ffb_events *ev = NULL;
    assert_int_equal(ffb_events_new(a, &ev), 0);
    assert_int_equal(ffb_events_fd(ev), -1);
    heard hx = {0}, hy = {0};

    uint64_t r0 = it_rts(a), p0 = packets_sent(a);
    OK(a, ffb_events_register(ev, x, on_event, &hx));
    /* 2: op_connect_request + op_que_events in one write (the aux TCP
       connect in between is not a round trip of the main connection);
       then the baseline arrives on the aux connection and is
       re-registered (op_que_events with the count seen). */
    assert_int_equal(it_rts(a) - r0, 2);
    assert_int_equal(packets_sent(a) - p0, 3);
    assert_true(ffb_events_fd(ev) >= 0);
    assert_true(ffb_events_aux_port(ev) > 0);

    r0 = it_rts(a);
    p0 = packets_sent(a);
    OK(a, ffb_events_register(ev, y, on_event, &hy));
    /* 2: op_que_events, then its baseline's re-registration - never a
       second op_connect_request. */
    assert_int_equal(it_rts(a) - r0, 2);
    assert_int_equal(packets_sent(a) - p0, 2);

    /* The baselines were taken in by the registrations and are no
       callbacks: nothing posted yet, so nothing is delivered. */
    r0 = it_rts(a);
    assert_int_equal(ffb_events_wait(ev, 300), FFB_E_TIMEOUT);
    assert_int_equal(hx.calls + hy.calls, 0);
    assert_int_equal(it_rts(a) - r0, 0); /* nothing came, nothing sent */

    it_post_event(b, x, 1);
    r0 = it_rts(a);
    assert_int_equal(ffb_events_wait(ev, 10000), 1);
    /* 1: the re-registration after the notification. */
    assert_int_equal(it_rts(a) - r0, 1);
    assert_int_equal(hx.calls, 1);
    assert_int_equal(hx.last, 1);
    assert_string_equal(hx.name, x);
    assert_int_equal(hy.calls, 0);

    /* Three posts in one transaction: one callback with delta 3. */
    it_post_event(b, x, 3);
    assert_int_equal(ffb_events_wait(ev, 10000), 1);
    assert_int_equal(hx.calls, 2);
    assert_int_equal(hx.last, 3);
    assert_int_equal(hx.total, 4);

    /* Two commits before A reads: the deltas add up exactly. */
    it_post_event(b, y, 1);
    it_post_event(b, y, 2);
    wait_total(ev, &hy, 3);
    assert_true(hy.calls >= 1 && hy.calls <= 2);
    assert_int_equal(hx.total, 4);

    /* Unregister: 1 round trip (op_cancel_events); nothing comes after. */
    r0 = it_rts(a);
    assert_int_equal(ffb_events_unregister(ev, x), 0);
    assert_int_equal(it_rts(a) - r0, 1);
    assert_int_equal(ffb_events_unregister(ev, x), 1); /* nothing to send */
    it_post_event(b, x, 2);
    r0 = it_rts(a);
    assert_int_equal(ffb_events_wait(ev, 500), FFB_E_TIMEOUT);
    assert_int_equal(it_rts(a) - r0, 0);
    assert_int_equal(hx.total, 4);
    /* The other name still listens. */
    it_post_event(b, y, 1);
    wait_total(ev, &hy, 4);

    /* Registered again: a new baseline, then the posts from now on. */
    OK(a, ffb_events_register(ev, x, on_event, &hx));
    it_post_event(b, x, 1);
    wait_total(ev, &hx, 5);

    /* Both connections stay usable. */
    OK(a, ffb_conn_ping(a));
    ffb_events_free(ev);
    OK(a, ffb_conn_ping(a));
    ffb_conn_free(a);
    ffb_conn_free(b);
}

/* A post committed while no request is queued on the server (after a
   notification was sent, before its re-registration arrives): the
   re-registration carries an older count and fires at once. */
static void test_stale_requeue(void **state) {
    const target *t = *state;
    char x[64];
    ename(x, sizeof(x), t, "S");
    ffb_conn *a = conn_to(t), *b = conn_to(t);
    ffb_events *ev = NULL;
    assert_int_equal(ffb_events_new(a, &ev), 0);
    heard h = {0};
    OK(a, ffb_events_register(ev, x, on_event, &h));
    struct timespec ms200 = {0, 200000000};
    it_post_event(b, x, 1);
    nanosleep(&ms200, NULL); /* its notification is sent: none queued */
    it_post_event(b, x, 1);
    nanosleep(&ms200, NULL);
    wait_total(ev, &h, 2);
    ffb_conn_free(a);
    ffb_conn_free(b);
}

/* What a callback may do: unregister its own name (blocking), not close
   the connection nor wait. */
typedef struct selfish {
    heard h;
    int close_rc, wait_rc, unreg_rc;
} selfish;

static void on_event_unregister(ffb_events *ev, const char *name,
                                uint32_t count, void *data) {
    selfish *s = data;
    on_event(ev, name, count, &s->h);
    s->close_rc = ffb_conn_close(ffb_events_conn(ev));
    s->wait_rc = ffb_events_wait(ev, 0);
    s->unreg_rc = ffb_events_unregister(ev, name);
}

static void test_callback_calls(void **state) {
    const target *t = *state;
    char x[64];
    ename(x, sizeof(x), t, "C");
    ffb_conn *a = conn_to(t), *b = conn_to(t);
    ffb_events *ev = NULL;
    assert_int_equal(ffb_events_new(a, &ev), 0);
    selfish s = {0};
    OK(a, ffb_events_register(ev, x, on_event_unregister, &s));
    it_post_event(b, x, 1);
    assert_int_equal(ffb_events_wait(ev, 10000), 1);
    assert_int_equal(s.close_rc, FFB_E_STATE);
    assert_int_equal(s.wait_rc, FFB_E_STATE);
    assert_int_equal(s.unreg_rc, 0);
    assert_int_equal(s.h.total, 1);
    assert_true(ffb_conn_is_attached(a));
    /* Unregistered inside: the re-registration queued before the callback
       was cancelled by it, so nothing more comes. */
    it_post_event(b, x, 1);
    assert_int_equal(ffb_events_wait(ev, 500), FFB_E_TIMEOUT);
    assert_int_equal(s.h.total, 1);
    OK(a, ffb_conn_ping(a));
    ffb_conn_free(a);
    ffb_conn_free(b);
}

static void test_timeout(void **state) {
    const target *t = *state;
    char x[64];
    ename(x, sizeof(x), t, "T");
    ffb_conn *a = conn_to(t);
    ffb_events *ev = NULL;
    assert_int_equal(ffb_events_new(a, &ev), 0);
    /* Before a registration there is nothing to wait on. */
    assert_int_equal(ffb_events_wait(ev, 10), FFB_E_STATE);
    heard h = {0};
    OK(a, ffb_events_register(ev, x, on_event, &h));
    uint64_t r0 = it_rts(a);
    int64_t t0 = ffb_now_ms();
    assert_int_equal(ffb_events_wait(ev, 250), FFB_E_TIMEOUT);
    int64_t took = ffb_now_ms() - t0;
    assert_true(took >= 240 && took < 5000);
    /* 0: nothing came, nothing was sent. */
    assert_int_equal(it_rts(a) - r0, 0);
    assert_int_equal(h.calls, 0);
    OK(a, ffb_conn_ping(a)); /* a timeout leaves the connection alone */
    ffb_events_free(ev);
    ffb_conn_free(a);
}

/* The safety rules of reference 03 C.5.1: one events object and one aux
   connection per attachment; detach closes it; after a new connect (a
   new TCP connection: the library never re-attaches on the old one)
   registering opens a new one. */
static void test_detach_reattach(void **state) {
    const target *t = *state;
    char x[64];
    ename(x, sizeof(x), t, "R");
    ffb_conn *a = conn_to(t), *b = conn_to(t);
    ffb_events *ev = NULL, *ev2 = NULL;
    assert_int_equal(ffb_events_new(a, &ev), 0);
    assert_int_equal(ffb_events_new(a, &ev2), FFB_E_STATE);
    assert_null(ev2);
    heard h = {0};
    OK(a, ffb_events_register(ev, x, on_event, &h));
    int port1 = ffb_events_aux_port(ev);
    assert_true(ffb_events_fd(ev) >= 0 && port1 > 0);
    it_post_event(b, x, 1);
    wait_total(ev, &h, 1);

    /* A new events object on the same attachment may not ask for a
       second aux connection: refused, nothing sent. */
    uint64_t r1 = it_rts(a);
    ffb_events_free(ev);
    assert_int_equal(it_rts(a) - r1, 1); /* op_cancel_events */
    assert_int_equal(ffb_events_new(a, &ev), 0);
    r1 = it_rts(a);
    uint64_t p1 = packets_sent(a);
    assert_int_equal(ffb_events_register(ev, x, on_event, &h), FFB_E_STATE);
    assert_int_equal(it_rts(a) - r1, 0);
    assert_int_equal(packets_sent(a) - p1, 0);
    OK(a, ffb_conn_ping(a));

    OK(a, ffb_conn_close(a));
    /* Detach closed the aux connection, and the server has no requests. */
    assert_int_equal(ffb_events_fd(ev), -1);
    assert_int_equal(ffb_events_aux_port(ev), 0);
    assert_int_equal(ffb_events_wait(ev, 10), FFB_E_STATE);
    assert_int_equal(ffb_events_register(ev, x, on_event, &h), FFB_E_STATE);

    OK(a, ffb_conn_connect(a));
    uint64_t r0 = it_rts(a), p0 = packets_sent(a);
    OK(a, ffb_events_register(ev, x, on_event, &h));
    /* 2, and 3 packets: the new attachment's own op_connect_request with
       op_que_events, then the baseline's re-registration. */
    assert_int_equal(it_rts(a) - r0, 2);
    assert_int_equal(packets_sent(a) - p0, 3);
    assert_true(ffb_events_fd(ev) >= 0);
    it_post_event(b, x, 2);
    wait_total(ev, &h, 3);
    assert_int_equal(h.last, 2);

    /* ffb_conn_free frees the events object too (and closes its aux). */
    ffb_conn_free(a);
    ffb_conn_free(b);
}

static void test_bad_calls(void **state) {
    const target *t = *state;
    ffb_conn *a = conn_to(t);
    ffb_events *ev = NULL;
    assert_int_equal(ffb_events_new(a, &ev), 0);
    heard h = {0};
    char big[300];
    memset(big, 'N', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    uint64_t r0 = it_rts(a);
    assert_int_equal(ffb_events_register(ev, big, on_event, &h), FFB_E_INVAL);
    assert_int_equal(ffb_events_register(ev, "", on_event, &h), FFB_E_INVAL);
    assert_int_equal(ffb_events_register(ev, "X", NULL, &h), FFB_E_INVAL);
    /* The queue twin refuses the first registration of a blocking
       connection: the aux connection must be opened at once. */
    assert_int_equal(ffb_events_queue_register(ev, "X", on_event, &h, NULL,
                                               NULL),
                     FFB_E_STATE);
    assert_int_equal(it_rts(a) - r0, 0);
    assert_int_equal(ffb_events_unregister(ev, "never"), 1);
    ffb_events_free(ev);
    ffb_conn_free(a);
}


/* ---- external I/O: the application owns both sockets ---- */

typedef struct ext {
    extio main, aux;
    ffb_events *ev;
    int aux_open;
    int results;       /* FFB_OP_EVENTS results delivered */
    int last_status;
} ext;

static void on_done(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    ext *e = data;
    assert_int_equal(ffb_result_op(res), FFB_OP_EVENTS);
    e->results++;
    e->last_status = ffb_result_status(res);
}

/* One turn: the main connection's pump, then the aux socket: connected as
   soon as the port is known, what it has read fed to the events object. */
static void ext_turn(ext *e, const target *t) {
    int rc = extio_pump(&e->main, 10);
    if (rc < 0)
        fail_msg("pump: %d %s", rc,
                 ffb_error_message(ffb_conn_error(e->main.conn)));
    if (!e->aux_open && ffb_events_aux_port(e->ev) > 0) {
        char dsn[600];
        const char *slash = strchr(t->dsn, '/');
        assert_non_null(slash);
        snprintf(dsn, sizeof(dsn), "%.*s/%d:aux", (int)(slash - t->dsn),
                 t->dsn, ffb_events_aux_port(e->ev));
        assert_int_equal(extio_open(&e->aux, NULL, dsn), 0);
        e->aux_open = 1;
    }
    if (e->aux_open) {
        uint8_t buf[4096];
        ssize_t n = recv(e->aux.fd, buf, sizeof(buf), 0);
        if (n > 0) {
            int k = ffb_events_feed(e->ev, buf, (size_t)n);
            if (k < 0)
                fail_msg("feed: %d %s", k,
                         ffb_error_message(ffb_conn_error(e->main.conn)));
        }
    }
}

static void on_detached(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    assert_int_equal(ffb_result_status(res), 0);
    *(int *)data = 1;
}

static void test_external(void **state) {
    const target *t = *state;
    char x[64];
    ename(x, sizeof(x), t, "E");
    ffb_conn_options o;
    it_options(t, &o);
    o.io = FFB_IO_EXTERNAL;
    o.io_timeout_ms = 60000;
    o.connect_timeout_ms = 60000;
    ext e;
    memset(&e, 0, sizeof(e));
    ffb_conn *a = NULL;
    assert_int_equal(ffb_conn_new(&o, &a), 0);
    assert_int_equal(extio_open(&e.main, a, t->dsn), 0);
    assert_int_equal(extio_connect(&e.main), 1);
    ffb_conn *b = conn_to(t);
    assert_int_equal(ffb_events_new(a, &e.ev), 0);
    heard h = {0};
    /* The blocking calls refuse external I/O. */
    assert_int_equal(ffb_events_register(e.ev, x, on_event, &h), FFB_E_STATE);
    uint64_t r0 = it_rts(a);
    assert_int_equal(
        ffb_events_queue_register(e.ev, x, on_event, &h, on_done, &e), 0);
    /* The result comes once the baseline has arrived on the aux socket. */
    for (int i = 0; i < 1000 && e.results == 0; i++)
        ext_turn(&e, t);
    assert_int_equal(e.results, 1);
    assert_int_equal(e.last_status, 0);
    assert_true(e.aux_open);
    assert_int_equal(h.calls, 0);
    /* Let the baseline's re-registration be answered. */
    for (int i = 0; i < 50 && ffb_conn_wants(a) != 0; i++)
        ext_turn(&e, t);
    /* 2: op_connect_request + op_que_events in one write, then the
       re-registration after the baseline. */
    assert_int_equal(it_rts(a) - r0, 2);

    it_post_event(b, x, 2);
    for (int i = 0; i < 1000 && h.total < 2; i++)
        ext_turn(&e, t);
    assert_int_equal(h.calls, 1);
    assert_int_equal(h.last, 2);

    /* Two commits: the deltas add up exactly. */
    it_post_event(b, x, 1);
    it_post_event(b, x, 1);
    for (int i = 0; i < 1000 && h.total < 4; i++)
        ext_turn(&e, t);
    assert_int_equal(h.total, 4);

    /* Unregister through the queue twin. */
    assert_int_equal(ffb_events_queue_unregister(e.ev, x, on_done, &e), 0);
    for (int i = 0; i < 1000 && e.results < 2; i++)
        ext_turn(&e, t);
    assert_int_equal(e.results, 2);
    assert_int_equal(e.last_status, 0);
    it_post_event(b, x, 1);
    for (int i = 0; i < 30; i++)
        ext_turn(&e, t);
    assert_int_equal(h.total, 4);

    /* The application's order: detach, close the main socket, and only
       then the aux socket (it belongs to the attachment: docs/events.md). */
    int detached = 0;
    assert_int_equal(ffb_conn_queue_detach(a, on_detached, &detached), 0);
    for (int i = 0; i < 1000 && !detached; i++)
        ext_turn(&e, t);
    assert_int_equal(detached, 1);
    extio_close(&e.main);
    extio_close(&e.aux);
    ffb_conn_free(a); /* frees the events object too */
    ffb_conn_free(b);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB3E", "FB4", "FB4E"};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deltas),
        cmocka_unit_test(test_stale_requeue),
        cmocka_unit_test(test_callback_calls),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_detach_reattach),
        cmocka_unit_test(test_bad_calls),
        cmocka_unit_test(test_external),
    };
    return it_main("EVENTS", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
