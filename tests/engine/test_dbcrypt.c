/*
 * Database encryption keys: a scripted server asks for a key
 * (op_crypt_key_callback) before the answer to the attach, before the
 * accept, and on protocol 13 (no size field); the application's callback
 * answers and the bytes it sends are checked exactly. Hostile variants:
 * endless requests, sizes out of range, a callback that refuses or
 * overflows.
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

/* What the server's key holder asks, as the server encodes it: cstring
   data, then p_cc_reply (an XDR short: 4 bytes) unless `reply` is
   NO_FIELD. */
#define NO_FIELD INT32_MIN
static void srv_key_request(ffbp_writer *w, const char *data, int32_t reply) {
    ffbp_put_i32(w, FFBP_OP_CRYPT_KEY_CALLBACK);
    ffbp_put_cstring(w, data, strlen(data));
    if (reply != NO_FIELD)
        ffbp_put_i32(w, reply);
}

typedef struct seen {
    int calls;
    uint8_t req[64];
    size_t req_len;
    size_t reply_size;
    const char *answer; /* what to write */
    int ret;            /* returned instead, when not 0 */
} seen;

static int key_cb(void *data, const uint8_t *request, size_t request_len,
                  uint8_t *reply, size_t reply_size) {
    seen *s = data;
    s->calls++;
    s->req_len = request_len < sizeof(s->req) ? request_len : sizeof(s->req);
    memcpy(s->req, request, s->req_len);
    s->reply_size = reply_size;
    if (s->ret)
        return s->ret;
    size_t n = strlen(s->answer);
    memcpy(reply, s->answer, n <= reply_size ? n : reply_size);
    return (int)n;
}

static ffb_conn *new_conn(seen *s) {
    ffb_conn_options o;
    hostile_options(&o);
    if (s) {
        o.crypt_key_cb = key_cb;
        o.crypt_key_data = s;
    }
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    hostile_use(&H, c);
    return c;
}

/* The client wrote `want` (n bytes) as its last packet. */
static void wrote_last(const void *want, size_t n) {
    assert_true(H.written_len >= n);
    assert_memory_equal(H.written + H.written_len - n, want, n);
}

static uint64_t rts(const ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

/* Protocol 16, flow C: the request comes where the attach's answer was
   due; the answer carries the callback's bytes and p_cc_reply 0. */
static void test_key_before_attach_answer(void **state) {
    (void)state;
    seen s = {.answer = "secret!"};
    ffb_conn *c = new_conn(&s);
    srv_accept(&W, FFBP_OP_ACCEPT, 16, NULL, NULL, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_key_request(&W, "KEY-1", 20);
    hostile_push(&H, &W);
    srv_response(&W, 1, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_connect(c));
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.req_len, 5);
    assert_memory_equal(s.req, "KEY-1", 5);
    assert_int_equal(s.reply_size, 20);
    static const uint8_t want[] = {0, 0, 0, 97,  0, 0, 0, 7,  's', 'e',
                                   'c', 'r', 'e', 't', '!', 0, 0, 0, 0, 0};
    wrote_last(want, sizeof(want));
    /* op_connect, op_attach, the key answer. */
    assert_int_equal(rts(c), 3);
    assert_int_equal(ffb_conn_is_attached(c), 1);
    ffb_conn_free(c);
}

/* Before the accept (an encrypted security database, protocol 15+): both
   directions carry p_cc_reply; then the handshake goes on. */
static void test_key_before_accept(void **state) {
    (void)state;
    seen s = {.answer = "k"};
    ffb_conn *c = new_conn(&s);
    srv_key_request(&W, "SEC", 0);
    hostile_push(&H, &W);
    srv_accept(&W, FFBP_OP_ACCEPT, 17, NULL, NULL, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_response(&W, 1, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_connect(c));
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.reply_size, 1); /* 0 means 1, as in fbclient */
    static const uint8_t want[] = {0, 0, 0, 97, 0, 0, 0, 1,
                                   'k', 0, 0, 0, 0, 0, 0, 0};
    /* It follows op_connect, before op_attach. */
    size_t at = 0;
    int found = 0;
    for (; at + sizeof(want) <= H.written_len; at++)
        if (memcmp(H.written + at, want, sizeof(want)) == 0) {
            found = 1;
            break;
        }
    assert_true(found);
    assert_true(H.written_len > at + sizeof(want)); /* op_attach after */
    assert_int_equal(ffb_conn_protocol(c), 17);
    ffb_conn_free(c);
}

/* Protocol 13 has no p_cc_reply after the accept: the request is
   op + cstring, the answer too, and the callback may write 32767 bytes. */
static void test_key_protocol13(void **state) {
    (void)state;
    seen s = {.answer = "abcd"};
    ffb_conn *c = new_conn(&s);
    srv_accept(&W, FFBP_OP_ACCEPT, 13, NULL, NULL, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_key_request(&W, "K13", NO_FIELD);
    hostile_push(&H, &W);
    srv_response(&W, 1, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_connect(c));
    assert_int_equal(s.reply_size, FFB_CRYPT_KEY_MAX);
    static const uint8_t want[] = {0, 0, 0, 97, 0, 0, 0, 4, 'a', 'b', 'c', 'd'};
    wrote_last(want, sizeof(want));
    ffb_conn_free(c);
}

/* No callback: an empty answer, and the server decides (here: it refuses
   the attach, and that error is what the connect reports). */
static void test_key_no_callback(void **state) {
    (void)state;
    ffb_conn *c = new_conn(NULL);
    srv_accept(&W, FFBP_OP_ACCEPT, 16, NULL, NULL, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_key_request(&W, "KEY", 64);
    hostile_push(&H, &W);
    srv_error(&W, 335545204u); /* isc_db_crypt_key */
    hostile_push(&H, &W);
    assert_int_equal(ffb_conn_connect(c), FFB_E_SERVER);
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)), 335545204u);
    static const uint8_t want[] = {0, 0, 0, 97, 0, 0, 0, 0, 0, 0, 0, 0};
    wrote_last(want, sizeof(want));
    ffb_conn_free(c);
}

/* The callback refuses, or writes more than the server takes: the
   connect fails with FFB_E_CRYPT and nothing is answered. */
static void test_key_callback_fails(void **state) {
    (void)state;
    for (int k = 0; k < 2; k++) {
        seen s = {.answer = "0123456789", .ret = k == 0 ? -5 : 0};
        ffb_conn *c = new_conn(&s);
        srv_accept(&W, FFBP_OP_ACCEPT, 16, NULL, NULL, 0, 0, NULL, 0);
        hostile_push(&H, &W);
        srv_key_request(&W, "KEY", 4); /* k == 1: 10 bytes do not fit */
        hostile_push(&H, &W);
        srv_response(&W, 1, 0, NULL, 0);
        hostile_push(&H, &W);
        size_t before = 0;
        assert_int_equal(ffb_conn_connect(c), FFB_E_CRYPT);
        expect_msg(c, k == 0 ? "refused" : "at most 4");
        for (size_t i = 0; i + 4 <= H.written_len; i += 4)
            before += memcmp(H.written + i, "\0\0\0\x61", 4) == 0;
        assert_int_equal(before, 0); /* no op_crypt_key_callback went out */
        assert_int_equal(ffb_conn_is_attached(c), 0);
        ffb_conn_free(c);
        hostile_free(&H);
        hostile_init(&H);
    }
}

/* A server that never stops asking is cut off after 16 requests. */
static void test_key_endless(void **state) {
    (void)state;
    seen s = {.answer = "x"};
    ffb_conn *c = new_conn(&s);
    srv_accept(&W, FFBP_OP_ACCEPT, 16, NULL, NULL, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    for (int i = 0; i < 40; i++) {
        srv_key_request(&W, "again", 8);
        hostile_push(&H, &W);
    }
    assert_int_equal(ffb_conn_connect(c), FFB_E_PROTO);
    assert_int_equal(s.calls, 16);
    expect_msg(c, "more than 16 times");
    ffb_conn_free(c);
}

/* Sizes a real server cannot send (p_cc_reply is a short): cut to 32767;
   a negative one means 1, as in fbclient. */
static void test_key_sizes(void **state) {
    (void)state;
    static const int32_t sizes[] = {1000000, -7, 32767, 1};
    static const size_t want[] = {FFB_CRYPT_KEY_MAX, 1, 32767, 1};
    for (size_t k = 0; k < 4; k++) {
        seen s = {.answer = ""};
        ffb_conn *c = new_conn(&s);
        srv_accept(&W, FFBP_OP_ACCEPT, 16, NULL, NULL, 0, 0, NULL, 0);
        hostile_push(&H, &W);
        srv_key_request(&W, "S", sizes[k]);
        hostile_push(&H, &W);
        srv_response(&W, 1, 0, NULL, 0);
        hostile_push(&H, &W);
        OK(c, ffb_conn_connect(c));
        assert_int_equal(s.reply_size, want[k]);
        ffb_conn_free(c);
        hostile_free(&H);
        hostile_init(&H);
    }
}

/* After the connect (ALTER DATABASE ENCRYPT asks the key holder, which
   asks the client): the request comes in place of the answer owed, the
   answer goes out at once (not held back behind that owed answer), and
   the request then gets its answer. A refusal there answers with no
   data: the statement gets the server's verdict. */
static void test_key_after_connect(void **state) {
    (void)state;
    seen s = {.answer = "\x5a"};
    ffb_conn_options o;
    hostile_options(&o);
    o.crypt_key_cb = key_cb;
    o.crypt_key_data = &s;
    ffb_conn *c = hostile_attach(&H, 16, &o);
    for (int k = 0; k < 2; k++) {
        s.ret = k ? -1 : 0;
        srv_key_request(&W, "", 1);
        hostile_push(&H, &W);
        srv_response(&W, 0, 0, NULL, 0);
        hostile_push(&H, &W);
        uint64_t r0 = rts(c);
        OK(c, ffb_conn_ping(c));
        assert_int_equal(rts(c) - r0, 2); /* op_ping, the key answer */
        static const uint8_t key[] = {0, 0, 0, 97, 0, 0, 0, 1,
                                      0x5a, 0, 0, 0, 0, 0, 0, 0};
        static const uint8_t none[] = {0, 0, 0, 97, 0, 0, 0, 0, 0, 0, 0, 0};
        if (k == 0)
            wrote_last(key, sizeof(key));
        else
            wrote_last(none, sizeof(none));
    }
    assert_int_equal(s.calls, 2);
    assert_int_equal(s.req_len, 0);
    assert_int_equal(s.reply_size, 1);
    ffb_conn_free(c);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_key_before_attach_answer),
        T(test_key_before_accept),
        T(test_key_protocol13),
        T(test_key_no_callback),
        T(test_key_callback_fails),
        T(test_key_endless),
        T(test_key_sizes),
        T(test_key_after_connect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
