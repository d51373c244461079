/*
 * libfastfb_uv as an application sees it: compiled against the public
 * headers alone and linked against the shared libraries only. Everything
 * that runs without a Firebird server: argument and state errors, the
 * two-phase close of connections that never connected, a refused TCP
 * connect, and every allocation through the connection's allocator -
 * failing each one in turn leaks nothing and never crashes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fastfb_uv.h"

typedef struct closed {
    int done, status, order;
} closed;

static int order;

static void on_closed(ffb_conn *c, int status, void *data) {
    closed *s = data;
    assert_non_null(c);
    s->done++;
    s->status = status;
    s->order = ++order;
}

typedef struct connected {
    int done, status, order;
} connected;

static void on_connected(ffb_conn *c, int status, void *data) {
    (void)c;
    connected *s = data;
    s->done++;
    s->status = status;
    s->order = ++order;
}

static ffb_conn_options options(void) {
    ffb_conn_options o;
    ffb_conn_options_init(&o);
    o.database = "/db/api-test.fdb";
    return o;
}

static void end_loop(uv_loop_t *loop) {
    assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(loop), 0);
}

static void test_bad_arguments(void **state) {
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn_options o = options();
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(NULL, &o, &c), FFB_E_INVAL);
    assert_null(c);
    assert_int_equal(ffb_uv_conn_new(&loop, &o, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_uv_connect(NULL, on_connected, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_uv_create_database(NULL, NULL, on_connected, NULL),
                     FFB_E_INVAL);
    assert_int_equal(ffb_uv_close(NULL, NULL, NULL), FFB_E_INVAL);
    assert_null(ffb_uv_conn_loop(NULL));
    ffb_uv_stats st;
    assert_int_equal(ffb_uv_conn_stats(NULL, &st, sizeof(st)), FFB_E_INVAL);

    /* A connection that is not the adapter's is refused. */
    ffb_conn *plain = NULL;
    o.io = FFB_IO_EXTERNAL;
    assert_int_equal(ffb_conn_new(&o, &plain), 0);
    assert_null(ffb_uv_conn_loop(plain));
    assert_int_equal(ffb_uv_connect(plain, on_connected, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_uv_close(plain, NULL, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_uv_conn_stats(plain, &st, sizeof(st)), FFB_E_INVAL);
    ffb_conn_free(plain);

    /* No callback: refused, nothing started. */
    assert_int_equal(ffb_uv_conn_new(&loop, &o, &c), 0);
    assert_ptr_equal(ffb_uv_conn_loop(c), &loop);
    assert_int_equal(ffb_uv_connect(c, NULL, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_uv_conn_stats(c, NULL, 0), FFB_E_INVAL);
    memset(&st, 0xff, sizeof(st));
    assert_int_equal(ffb_uv_conn_stats(c, &st, sizeof(st)), 0);
    assert_int_equal(st.writes, 0);
    assert_int_equal(st.reads, 0);
    /* A smaller struct of an older caller: only its part is written. */
    uint64_t first[2] = {7, 7};
    assert_int_equal(ffb_uv_conn_stats(c, (ffb_uv_stats *)first, 8), 0);
    assert_int_equal(first[0], 0);
    assert_int_equal(first[1], 7);
    closed cl = {0};
    assert_int_equal(ffb_uv_close(c, on_closed, &cl), 0);
    assert_int_equal(ffb_uv_close(c, on_closed, &cl), FFB_E_STATE);
    assert_int_equal(ffb_uv_connect(c, on_connected, NULL), FFB_E_STATE);
    assert_int_equal(cl.done, 0); /* two-phase: not before the loop runs */
    end_loop(&loop);
    assert_int_equal(cl.done, 1);
    assert_int_equal(cl.status, 0);
}

/* Options ffb_conn_new() refuses: the connection still says why, connecting
   returns the same error, and it closes like any other. */
static void test_bad_options_keep_their_error(void **state) {
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn_options o = options();
    o.auth_plugins = "Srp256,NoSuchPlugin";
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, &o, &c), FFB_E_INVAL);
    assert_non_null(c);
    assert_non_null(
        strstr(ffb_error_message(ffb_conn_error(c)), "NoSuchPlugin"));
    connected s = {0};
    assert_int_equal(ffb_uv_connect(c, on_connected, &s), FFB_E_INVAL);
    closed cl = {0};
    assert_int_equal(ffb_uv_close(c, on_closed, &cl), 0);
    end_loop(&loop);
    assert_int_equal(s.done, 0); /* an error return: never called */
    assert_int_equal(cl.done, 1);
}

/* NULL options: the defaults, which lack a database. */
static void test_null_options(void **state) {
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, NULL, &c), FFB_E_INVAL);
    assert_non_null(c);
    assert_non_null(
        strstr(ffb_error_message(ffb_conn_error(c)), "no database"));
    assert_int_equal(ffb_uv_close(c, NULL, NULL), 0);
    end_loop(&loop);
}

/* A port nothing listens on. */
static int closed_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    socklen_t sl = sizeof(sa);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

/* Refused: the connect callback gets FFB_E_IO, a second connect is
   refused, the close callback comes after and reports the cause. */
static void test_refused_then_closed(void **state) {
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    char host[64];
    snprintf(host, sizeof(host), "%d", closed_port());
    ffb_conn_options o = options();
    o.host = "127.0.0.1";
    o.port = host;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, &o, &c), 0);
    assert_string_equal(ffb_conn_port(c), host);
    connected s = {0};
    assert_int_equal(ffb_uv_connect(c, on_connected, &s), 0);
    assert_int_equal(ffb_uv_connect(c, on_connected, &s), FFB_E_STATE);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(s.done, 1);
    assert_int_equal(s.status, FFB_E_IO);
    assert_non_null(
        strstr(ffb_error_message(ffb_conn_error(c)), "cannot connect to"));
    closed cl = {0};
    assert_int_equal(ffb_uv_close(c, on_closed, &cl), 0);
    end_loop(&loop);
    assert_int_equal(cl.done, 1);
    assert_int_equal(cl.status, FFB_E_IO);
    assert_true(s.order < cl.order);
}

/* ---- allocation failures ------------------------------------------------- */

typedef struct failing {
    long live;    /* blocks not freed */
    long calls;   /* allocations tried */
    long fail_at; /* the allocation that fails (0-based), -1: none */
    int failed;
} failing;

static void *f_malloc(size_t n, void *data) {
    failing *f = data;
    if (f->calls++ == f->fail_at) {
        f->failed = 1;
        return NULL;
    }
    void *p = malloc(n);
    if (p)
        f->live++;
    return p;
}

static void *f_realloc(void *p, size_t n, void *data) {
    failing *f = data;
    if (f->calls++ == f->fail_at) {
        f->failed = 1;
        return NULL;
    }
    void *q = realloc(p, n);
    if (q && !p)
        f->live++;
    return q;
}

static void f_free(void *p, void *data) {
    failing *f = data;
    if (p)
        f->live--;
    free(p);
}

/* Create, connect (refused), close - with the Nth allocation failing, for
   every N until none fails: each run ends with every block freed and the
   callbacks called as documented. */
static void test_allocation_failures(void **state) {
    (void)state;
    char port[16];
    snprintf(port, sizeof(port), "%d", closed_port());
    long n;
    for (n = 0; n < 10000; n++) {
        failing f = {0, 0, n, 0};
        ffb_allocator a = {f_malloc, f_realloc, f_free, &f};
        ffb_conn_options o = options();
        o.host = "127.0.0.1";
        o.port = port;
        o.allocator = &a;
        uv_loop_t loop;
        uv_loop_init(&loop);
        ffb_conn *c = NULL;
        int rc = ffb_uv_conn_new(&loop, &o, &c);
        if (rc == FFB_E_NOMEM) {
            assert_null(c);
            assert_int_equal(f.live, 0);
            end_loop(&loop);
            continue;
        }
        assert_int_equal(rc, 0);
        connected s = {0};
        rc = ffb_uv_connect(c, on_connected, &s);
        if (rc == 0) {
            assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
            assert_int_equal(s.done, 1);
            assert_true(s.status == FFB_E_IO || s.status == FFB_E_NOMEM);
        } else {
            assert_int_equal(rc, FFB_E_NOMEM);
        }
        closed cl = {0};
        assert_int_equal(ffb_uv_close(c, on_closed, &cl), 0);
        end_loop(&loop);
        assert_int_equal(cl.done, 1);
        assert_int_equal(f.live, 0);
        if (!f.failed)
            break;
    }
    assert_true(n > 2); /* the loop did fail allocations */
    assert_true(n < 10000);
}

/* ---- the pool, without a server
 * ---------------------------------------------- */

typedef struct acquired {
    int done, status, order;
    ffb_conn *conn;
} acquired;

static void on_acquired(ffb_uv_pool *pool, ffb_conn *conn, int status,
                        void *data) {
    assert_non_null(pool);
    acquired *a = data;
    a->done++;
    a->status = status;
    a->conn = conn;
    a->order = ++order;
}

static void on_pool_closed(ffb_uv_pool *pool, void *data) {
    assert_non_null(pool);
    closed *c = data;
    c->done++;
    c->order = ++order;
}

static void test_pool_bad_arguments(void **state) {
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    ffb_conn_options co = options();
    ffb_pool_options po;
    ffb_pool_options_init(&po);
    ffb_uv_pool *pool = NULL;
    assert_int_equal(ffb_uv_pool_new(&loop, &po, &pool), FFB_E_INVAL);
    po.conn = &co; /* now valid */
    assert_int_equal(ffb_uv_pool_new(NULL, &po, &pool), FFB_E_INVAL);
    assert_int_equal(ffb_uv_pool_new(&loop, NULL, &pool), FFB_E_INVAL);
    assert_int_equal(ffb_uv_pool_new(&loop, &po, NULL), FFB_E_INVAL);
    po.version = 99;
    assert_int_equal(ffb_uv_pool_new(&loop, &po, &pool), FFB_E_INVAL);
    po.version = FFB_POOL_OPTIONS_VERSION;
    po.min_size = 3;
    po.max_size = 2;
    assert_int_equal(ffb_uv_pool_new(&loop, &po, &pool), FFB_E_INVAL);
    po.min_size = 0;
    po.max_size = 5000;
    assert_int_equal(ffb_uv_pool_new(&loop, &po, &pool), FFB_E_INVAL);
    assert_null(pool);
    po.max_size = 0;
    assert_int_equal(ffb_uv_pool_new(&loop, &po, &pool), 0);
    assert_ptr_equal(ffb_uv_pool_loop(pool), &loop);
    assert_null(ffb_uv_pool_loop(NULL));
    acquired a = {0};
    assert_int_equal(ffb_uv_pool_acquire(NULL, -1, on_acquired, &a),
                     FFB_E_INVAL);
    assert_int_equal(ffb_uv_pool_acquire(pool, -1, NULL, &a), FFB_E_INVAL);
    assert_int_equal(ffb_uv_pool_acquire(pool, -2, on_acquired, &a),
                     FFB_E_INVAL);
    /* A connection that is not the pool's. */
    ffb_conn *c = NULL;
    assert_int_equal(ffb_uv_conn_new(&loop, &co, &c), 0);
    assert_int_equal(ffb_uv_pool_release(pool, c), FFB_E_INVAL);
    assert_int_equal(ffb_uv_pool_discard(pool, c), FFB_E_INVAL);
    assert_int_equal(ffb_uv_pool_release(pool, NULL), FFB_E_INVAL);
    ffb_pool_error_info e;
    assert_int_equal(ffb_uv_pool_error(pool, &e, sizeof(e)), 0);
    assert_int_equal(e.code, FFB_E_INVAL);
    assert_int_equal(ffb_uv_close(c, NULL, NULL), 0);
    ffb_pool_counters pc;
    assert_int_equal(ffb_uv_pool_stats(NULL, &pc, sizeof(pc)), FFB_E_INVAL);
    assert_int_equal(ffb_uv_pool_stats(pool, &pc, sizeof(pc)), 0);
    assert_int_equal(pc.total, 0);
    closed cl = {0};
    assert_int_equal(ffb_uv_pool_close(NULL, NULL, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_uv_pool_close(pool, on_pool_closed, &cl), 0);
    assert_int_equal(ffb_uv_pool_close(pool, on_pool_closed, &cl), FFB_E_STATE);
    assert_int_equal(ffb_uv_pool_acquire(pool, -1, on_acquired, &a),
                     FFB_E_STATE);
    end_loop(&loop);
    assert_int_equal(cl.done, 1);
    assert_int_equal(a.done, 0);
}

/* Nothing listens: the waiter gets the connect's FFB_E_IO (never inside
   the acquire call), the pool's error names the address; a no-wait
   acquire times out; a waiter still waiting is cancelled by the close,
   before the close callback. */
static void test_pool_connect_refused(void **state) {
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    char port[16];
    snprintf(port, sizeof(port), "%d", closed_port());
    ffb_conn_options co = options();
    co.host = "127.0.0.1";
    co.port = port;
    ffb_pool_options po;
    ffb_pool_options_init(&po);
    po.conn = &co;
    po.max_size = 1;
    ffb_uv_pool *pool = NULL;
    assert_int_equal(ffb_uv_pool_new(&loop, &po, &pool), 0);
    acquired a = {0}, b = {0}, c = {0};
    assert_int_equal(ffb_uv_pool_acquire(pool, 5000, on_acquired, &a), 0);
    assert_int_equal(a.done, 0);
    while (!a.done)
        uv_run(&loop, UV_RUN_ONCE);
    assert_int_equal(a.status, FFB_E_IO);
    assert_null(a.conn);
    ffb_pool_error_info e;
    assert_int_equal(ffb_uv_pool_error(pool, &e, sizeof(e)), 0);
    assert_int_equal(e.code, FFB_E_IO);
    assert_non_null(strstr(e.message, "cannot connect to 127.0.0.1"));
    assert_int_equal(ffb_uv_pool_acquire(pool, 0, on_acquired, &b), 0);
    while (!b.done)
        uv_run(&loop, UV_RUN_ONCE);
    assert_int_equal(b.status, FFB_E_TIMEOUT);
    assert_int_equal(ffb_uv_pool_acquire(pool, -1, on_acquired, &c), 0);
    closed cl = {0};
    assert_int_equal(ffb_uv_pool_close(pool, on_pool_closed, &cl), 0);
    end_loop(&loop);
    assert_int_equal(c.done, 1);
    assert_true(c.status == FFB_E_CANCELLED || c.status == FFB_E_IO);
    assert_int_equal(cl.done, 1);
    assert_true(c.order < cl.order);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_bad_options_keep_their_error),
        cmocka_unit_test(test_null_options),
        cmocka_unit_test(test_refused_then_closed),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_pool_bad_arguments),
        cmocka_unit_test(test_pool_connect_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
