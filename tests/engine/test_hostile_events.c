/*
 * A hostile server and events: the main connection is scripted
 * (tests/support/hostile.h), the aux connection is a real local TCP
 * listener whose thread writes scripted bytes, stage by stage. Garbage on
 * the aux connection (unknown packets, absurd lengths, malformed EPBs, a
 * missing name) is FFB_E_PROTO from the call that read it, the events
 * object stops reading the aux connection (open until the attachment
 * ends) and the main connection stays usable;
 * notifications split into single bytes, for unknown request ids, and
 * counts that go backwards are handled without a crash. A bad
 * op_connect_request answer breaks the connection (the server would wait
 * for a connect we cannot make). Run under ASan+UBSan and valgrind.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/events.h"
#include "tests/support/check.h"
#include "tests/support/hostile.h"

#define setup hostile_setup
#define teardown hostile_teardown

/* ---- the aux server: a listener and a thread writing stages ---- */

#define STAGES 4
typedef struct aux_srv {
    int lfd, port;
    int go[2];                /* a byte per stage after the first */
    ffbp_writer stage[STAGES];
    size_t nstages;
    size_t piece;             /* write in pieces of this size (0: whole) */
    pthread_t th;
} aux_srv;

static void *aux_main(void *arg) {
    aux_srv *a = arg;
    int fd = accept(a->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    for (size_t i = 0; i < a->nstages; i++) {
        char b;
        if (i > 0 && read(a->go[0], &b, 1) != 1)
            break;
        const uint8_t *p = a->stage[i].data;
        size_t n = a->stage[i].len, off = 0;
        while (off < n) {
            size_t k = a->piece && a->piece < n - off ? a->piece : n - off;
            ssize_t w = write(fd, p + off, k);
            if (w <= 0)
                break;
            off += (size_t)w;
            if (a->piece) {
                struct timespec ms = {0, 1000000};
                nanosleep(&ms, NULL);
            }
        }
    }
    char b;
    (void)!read(a->go[0], &b, 1); /* the last "go" closes */
    close(fd);
    return NULL;
}

static void aux_start(aux_srv *a) {
    a->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(a->lfd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(a->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(a->lfd, 1), 0);
    socklen_t sl = sizeof(sa);
    assert_int_equal(getsockname(a->lfd, (struct sockaddr *)&sa, &sl), 0);
    a->port = ntohs(sa.sin_port);
    assert_int_equal(pipe(a->go), 0);
    assert_int_equal(pthread_create(&a->th, NULL, aux_main, a), 0);
}

static void aux_go(aux_srv *a) { assert_int_equal(write(a->go[1], "g", 1), 1); }

static void aux_stop(aux_srv *a) {
    for (size_t i = 0; i < STAGES + 1; i++)
        (void)!write(a->go[1], "g", 1);
    pthread_join(a->th, NULL);
    close(a->go[0]);
    close(a->go[1]);
    close(a->lfd);
    for (size_t i = 0; i < STAGES; i++)
        ffbp_writer_free(&a->stage[i]);
}

/* ---- what the servers send ---- */

static void epb1(ffbp_writer *w, const char *name, uint32_t count) {
    ffbp_epb_item it = {name, strlen(name), count};
    assert_int_equal(ffbp_put_epb(w, &it, 1), 0);
}

/* op_event: short db, cstring EPB, ast, arg, rid. */
static void srv_event(ffbp_writer *w, const char *name, uint32_t count,
                      int32_t rid) {
    ffbp_writer e;
    ffbp_writer_init(&e, NULL);
    epb1(&e, name, count);
    ffbp_put_i32(w, FFBP_OP_EVENT);
    ffbp_put_i16(w, 0);
    ffbp_put_cstring(w, e.data, e.len);
    ffbp_put_i32(w, 0);
    ffbp_put_i32(w, 0);
    ffbp_put_i32(w, rid);
    ffbp_writer_free(&e);
}

/* The answer to op_connect_request: a sockaddr_in as Linux sends it. */
static void srv_aux_answer(ffbp_writer *w, int port) {
    uint8_t sa[16] = {2, 0, (uint8_t)(port >> 8), (uint8_t)port, 127, 0, 0, 1};
    srv_response(w, 0, 0, sa, sizeof(sa));
}

typedef struct heard {
    int calls;
    uint32_t total, last;
} heard;

static void on_event(ffb_events *ev, const char *name, uint32_t count,
                     void *data) {
    (void)ev;
    (void)name;
    heard *h = data;
    h->calls++;
    h->total += count;
    h->last = count;
}

static ffb_conn *attach(void) {
    ffb_conn_options o;
    hostile_options(&o);
    o.dsn = "127.0.0.1/3050:db"; /* the aux connect goes to this host */
    return hostile_attach(&H, 15, &o);
}

/* Attach, register "EVT" (rid 1) with its baseline (count 5) on the aux
   connection: main answers connect_request, que_events, and the
   re-registration of the baseline (rid 2). */
static ffb_conn *registered(aux_srv *a, ffb_events **ev, heard *h) {
    ffb_conn *c = attach();
    srv_aux_answer(&W, a->port);
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    assert_int_equal(ffb_events_new(c, ev), 0);
    OK(c, ffb_events_register(*ev, "EVT", on_event, h));
    assert_int_equal(h->calls, 0);
    assert_true(ffb_events_fd(*ev) >= 0);
    assert_int_equal(ffb_events_aux_port(*ev), a->port);
    return c;
}

/* The events object stopped with FFB_E_PROTO; the main connection is
   fine. */
static void expect_aux_proto(ffb_conn *c, ffb_events *ev, int rc,
                             const char *needle) {
    if (rc != FFB_E_PROTO)
        fail_msg("expected FFB_E_PROTO, got %d (%s)", rc,
                 ffb_error_message(ffb_conn_error(c)));
    expect_msg(c, needle);
    assert_false(ffb_conn_is_broken(c));
    assert_int_equal(ffb_events_fd(ev), -1);
    assert_int_equal(ffb_events_wait(ev, 0), FFB_E_STATE);
    assert_int_equal(ffb_events_register(ev, "OTHER", on_event, NULL),
                     FFB_E_STATE);
}

/* A script: the baseline, then `bad` as the next stage. */
static void run_garbage(const ffbp_writer *bad, const char *needle) {
    aux_srv a;
    memset(&a, 0, sizeof(a));
    for (size_t i = 0; i < STAGES; i++)
        ffbp_writer_init(&a.stage[i], NULL);
    srv_event(&a.stage[0], "EVT", 5, 1);
    ffbp_put_raw(&a.stage[1], bad->data, bad->len);
    a.nstages = 2;
    aux_start(&a);
    heard h = {0};
    ffb_events *ev;
    ffb_conn *c = registered(&a, &ev, &h);
    aux_go(&a);
    expect_aux_proto(c, ev, ffb_events_wait(ev, 5000), needle);
    assert_int_equal(h.calls, 0);
    ffb_conn_free(c);
    aux_stop(&a);
}

static void test_unknown_op(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_i32(&w, FFBP_OP_RESPONSE); /* not an aux packet */
    ffbp_put_i32(&w, 0);
    run_garbage(&w, "unexpected packet on the aux connection");
    ffbp_writer_free(&w);
}

static void test_huge_epb_length(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_i32(&w, FFBP_OP_EVENT);
    ffbp_put_i16(&w, 0);
    ffbp_put_u32(&w, 0x7FFFFF00u); /* EPB length: no allocation follows */
    ffbp_put_u32(&w, 0);
    run_garbage(&w, "unexpected packet on the aux connection");
    ffbp_writer_free(&w);
}

static void test_bad_epb(void **state) {
    (void)state;
    /* Version 2, and an entry whose name runs past the block. */
    static const uint8_t v2[] = {2, 3, 'E', 'V', 'T', 6, 0, 0, 0};
    static const uint8_t runs[] = {1, 200, 'E', 'V', 'T', 6, 0, 0, 0};
    const uint8_t *bad[2] = {v2, runs};
    for (int i = 0; i < 2; i++) {
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        ffbp_put_i32(&w, FFBP_OP_EVENT);
        ffbp_put_i16(&w, 0);
        ffbp_put_cstring(&w, bad[i], sizeof(v2));
        ffbp_put_i32(&w, 0);
        ffbp_put_i32(&w, 0);
        ffbp_put_i32(&w, 2); /* the re-registration's rid */
        run_garbage(&w, "malformed event parameter block");
        ffbp_writer_free(&w);
    }
}

static void test_name_missing(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    srv_event(&w, "NOT_EVT", 9, 2);
    run_garbage(&w, "the registered name is missing");
    ffbp_writer_free(&w);
}

/* Byte by byte, an unknown rid and op_dummy first, a count that goes
   backwards: one callback with the true delta, nothing else. */
static void test_pieces_and_oddities(void **state) {
    (void)state;
    aux_srv a;
    memset(&a, 0, sizeof(a));
    for (size_t i = 0; i < STAGES; i++)
        ffbp_writer_init(&a.stage[i], NULL);
    srv_event(&a.stage[0], "EVT", 5, 1);
    ffbp_put_i32(&a.stage[1], FFBP_OP_DUMMY);
    srv_event(&a.stage[1], "EVT", 100, 77); /* nobody's rid: ignored */
    srv_event(&a.stage[1], "EVT", 8, 2);    /* delta 3 */
    srv_event(&a.stage[2], "EVT", 4, 3);    /* backwards: no callback */
    ffbp_put_i32(&a.stage[3], FFBP_OP_EXIT);
    a.nstages = 4;
    a.piece = 1;
    aux_start(&a);
    heard h = {0};
    ffb_events *ev;
    ffb_conn *c = registered(&a, &ev, &h);
    srv_response(&W, 0, 0, NULL, 0); /* re-registration rid 3 */
    hostile_push(&H, &W);
    aux_go(&a);
    int rc = ffb_events_wait(ev, 5000);
    if (rc != 1)
        fail_msg("wait: %d %s", rc, ffb_error_message(ffb_conn_error(c)));
    assert_int_equal(h.calls, 1);
    assert_int_equal(h.last, 3);
    srv_response(&W, 0, 0, NULL, 0); /* re-registration rid 4 */
    hostile_push(&H, &W);
    aux_go(&a);
    assert_int_equal(ffb_events_wait(ev, 300), FFB_E_TIMEOUT);
    assert_int_equal(h.calls, 1);
    aux_go(&a);
    /* op_exit on the aux: the attachment is gone. */
    assert_int_equal(ffb_events_wait(ev, 5000), FFB_E_CLOSED);
    assert_int_equal(ffb_events_fd(ev), -1);
    assert_false(ffb_conn_is_broken(c));
    ffb_conn_free(c);
    aux_stop(&a);
}

/* The aux connection ends (EOF): FFB_E_CLOSED. */
static void test_eof(void **state) {
    (void)state;
    aux_srv a;
    memset(&a, 0, sizeof(a));
    for (size_t i = 0; i < STAGES; i++)
        ffbp_writer_init(&a.stage[i], NULL);
    srv_event(&a.stage[0], "EVT", 1, 1);
    a.nstages = 1;
    aux_start(&a);
    heard h = {0};
    ffb_events *ev;
    ffb_conn *c = registered(&a, &ev, &h);
    aux_go(&a); /* closes */
    assert_int_equal(ffb_events_wait(ev, 5000), FFB_E_CLOSED);
    expect_msg(c, "attachment is gone");
    ffb_conn_free(c);
    aux_stop(&a);
}

/* An op_connect_request answer without a usable address: the server
   would wait for a connect that cannot be made - the connection breaks. */
static void test_bad_address(void **state) {
    (void)state;
    static const uint8_t shorts[4] = {2, 0, 0, 0};
    static const uint8_t port0[16] = {2, 0, 0, 0, 127, 0, 0, 1};
    const uint8_t *d[2] = {shorts, port0};
    const size_t n[2] = {sizeof(shorts), sizeof(port0)};
    for (int i = 0; i < 2; i++) {
        ffb_conn *c = attach();
        srv_response(&W, 0, 0, d[i], n[i]);
        hostile_push(&H, &W);
        ffb_events *ev;
        assert_int_equal(ffb_events_new(c, &ev), 0);
        int rc = ffb_events_register(ev, "EVT", on_event, NULL);
        assert_int_equal(rc, FFB_E_PROTO);
        expect_msg(c, "carries no usable address");
        assert_true(ffb_conn_is_broken(c));
        ffb_conn_free(c);
        hostile_free(&H);
        hostile_init(&H);
    }
}

/* Refused op_connect_request: FFB_E_SERVER, and the registration's own
   answer is read (the connection stays in step and usable). */
static void test_refused(void **state) {
    (void)state;
    ffb_conn *c = attach();
    srv_error(&W, 335544724u); /* isc_net_event_connect_err */
    hostile_push(&H, &W);
    srv_error(&W, 335544724u);
    hostile_push(&H, &W);
    ffb_events *ev;
    assert_int_equal(ffb_events_new(c, &ev), 0);
    assert_int_equal(ffb_events_register(ev, "EVT", on_event, NULL),
                     FFB_E_SERVER);
    assert_false(ffb_conn_is_broken(c));
    /* Unusable on this attachment: no second op_connect_request. */
    size_t before = H.written_len;
    assert_int_equal(ffb_events_register(ev, "EVT", on_event, NULL),
                     FFB_E_STATE);
    assert_int_equal(H.written_len, before);
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_ping(c));
    ffb_conn_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unknown_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_huge_epb_length, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_epb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_name_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pieces_and_oddities, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_eof, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_address, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
