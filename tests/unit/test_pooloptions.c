/*
 * The blocking pool (lib/pool.c) where no server is needed: options that
 * are refused (with a code and a message), allocation failures at every
 * point of ffb_pool_new (no leak, no half-made pool), foreign connections
 * given back, and the size-taking output structs. The pool against real
 * servers is tests/integration/test_pool.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "include/fastfb.h"

/* An allocator that fails from the Nth allocation on and counts what is
   live. */
typedef struct failing {
    long fail_at; /* -1: never */
    long calls;
    long live;
} failing;

static void *f_malloc(size_t size, void *data) {
    failing *f = data;
    if (f->fail_at >= 0 && f->calls++ >= f->fail_at)
        return NULL;
    void *p = malloc(size);
    if (p)
        f->live++;
    return p;
}

static void *f_realloc(void *ptr, size_t size, void *data) {
    failing *f = data;
    if (f->fail_at >= 0 && f->calls++ >= f->fail_at)
        return NULL;
    void *p = realloc(ptr, size);
    if (p && !ptr)
        f->live++;
    return p;
}

static void f_free(void *ptr, void *data) {
    failing *f = data;
    if (ptr)
        f->live--;
    free(ptr);
}

static void conn_opts(ffb_conn_options *o) {
    ffb_conn_options_init(o);
    o->dsn = "127.0.0.1/1:/nonexistent.fdb"; /* never connected here */
    o->user = "SYSDBA";
    o->password = "secret";
    o->role = "R";
}

static void expect_error(const ffb_pool *p, int code, const char *needle) {
    ffb_pool_error_info e;
    assert_int_equal(ffb_pool_error(p, &e, sizeof e), 0);
    assert_int_equal(e.code, code);
    if (!strstr(e.message, needle))
        fail_msg("message \"%s\" lacks \"%s\"", e.message, needle);
}

static void test_pool_options_refused(void **state) {
    (void)state;
    ffb_pool *p = NULL;
    ffb_conn_options o;
    conn_opts(&o);
    ffb_pool_options po = FFB_POOL_OPTIONS_INIT;

    assert_int_equal(ffb_pool_new(&po, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_pool_new(NULL, &p), FFB_E_INVAL);
    expect_error(p, FFB_E_INVAL, "NULL");
    ffb_pool_free(p);

    assert_int_equal(ffb_pool_new(&po, &p), FFB_E_INVAL); /* no conn */
    expect_error(p, FFB_E_INVAL, "ffb_pool_options.conn");
    ffb_conn *c = NULL;
    assert_int_equal(ffb_pool_acquire(p, 0, &c), FFB_E_INVAL);
    assert_null(c);
    ffb_pool_free(p);

    po.conn = &o;
    po.version = 99;
    assert_int_equal(ffb_pool_new(&po, &p), FFB_E_INVAL);
    expect_error(p, FFB_E_INVAL, "version");
    ffb_pool_free(p);
    po.version = FFB_POOL_OPTIONS_VERSION;

    po.min_size = 5;
    po.max_size = 4;
    assert_int_equal(ffb_pool_new(&po, &p), FFB_E_INVAL);
    expect_error(p, FFB_E_INVAL, "min_size (5) <= max_size (4)");
    ffb_pool_free(p);
    po.min_size = 0;
    po.max_size = 4097;
    assert_int_equal(ffb_pool_new(&po, &p), FFB_E_INVAL);
    ffb_pool_free(p);
    po.max_size = 0;

    o.io = FFB_IO_EXTERNAL;
    assert_int_equal(ffb_pool_new(&po, &p), FFB_E_INVAL);
    expect_error(p, FFB_E_INVAL, "blocking");
    ffb_pool_free(p);
    o.io = FFB_IO_BLOCKING;

    /* A connection option ffb_conn_new() refuses: its message. */
    o.auth_plugins = "NoSuchPlugin";
    assert_int_equal(ffb_pool_new(&po, &p), FFB_E_INVAL);
    expect_error(p, FFB_E_INVAL, "connection options were refused");
    assert_int_equal(ffb_pool_acquire(p, -1, &c), FFB_E_INVAL);
    ffb_pool_free(p);
    ffb_pool_free(NULL);
}

static void test_pool_new_out_of_memory(void **state) {
    (void)state;
    failing f = {0};
    ffb_allocator a = {f_malloc, f_realloc, f_free, &f};
    ffb_conn_options o;
    conn_opts(&o);
    o.allocator = &a;
    ffb_pool_options po = FFB_POOL_OPTIONS_INIT;
    po.conn = &o;
    po.max_size = 3;
    int rc = FFB_E_NOMEM;
    long n;
    for (n = 0; n < 200; n++) {
        f = (failing){.fail_at = n};
        ffb_pool *p = (ffb_pool *)&f; /* must be overwritten */
        rc = ffb_pool_new(&po, &p);
        if (rc == 0) {
            assert_non_null(p);
            ffb_pool_counters s;
            assert_int_equal(ffb_pool_stats(p, &s, sizeof s), 0);
            assert_int_equal(s.total, 0); /* min_size 0: no connect */
            ffb_pool_free(p);
            break;
        }
        assert_int_equal(rc, FFB_E_NOMEM);
        assert_null(p);
        assert_int_equal(f.live, 0); /* nothing leaked */
    }
    assert_int_equal(rc, 0);
    assert_true(n >= 3); /* the pool, its strings and slots, the probe */
    assert_int_equal(f.live, 0);
}

static void test_pool_foreign_and_sizes(void **state) {
    (void)state;
    ffb_conn_options o;
    conn_opts(&o);
    ffb_pool_options po;
    ffb_pool_options_init(&po);
    po.conn = &o;
    ffb_pool *p = NULL;
    assert_int_equal(ffb_pool_new(&po, &p), 0);
    ffb_conn *foreign = NULL;
    assert_int_equal(ffb_conn_new(&o, &foreign), 0);
    assert_int_equal(ffb_pool_release(p, foreign), FFB_E_INVAL);
    expect_error(p, FFB_E_INVAL, "not one handed out by this pool");
    assert_int_equal(ffb_pool_discard(p, foreign), FFB_E_INVAL);
    assert_int_equal(ffb_pool_release(p, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_pool_release(NULL, foreign), FFB_E_INVAL);
    ffb_conn_free(foreign);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_pool_acquire(p, -2, &c), FFB_E_INVAL);
    assert_int_equal(ffb_pool_acquire(NULL, 0, &c), FFB_E_INVAL);
    assert_int_equal(ffb_pool_acquire(p, 0, NULL), FFB_E_INVAL);
    assert_int_equal(ffb_pool_maintain(p), 0);
    assert_int_equal(ffb_pool_maintain(NULL), FFB_E_INVAL);

    /* An older caller's smaller struct gets a prefix; a newer one's
       larger struct gets zeros after ours. */
    unsigned char big[sizeof(ffb_pool_counters) + 16];
    memset(big, 0xAB, sizeof big);
    assert_int_equal(ffb_pool_stats(p, (ffb_pool_counters *)big, sizeof big),
                     0);
    for (size_t i = sizeof(ffb_pool_counters); i < sizeof big; i++)
        assert_int_equal(big[i], 0);
    ffb_pool_counters small;
    memset(&small, 0xAB, sizeof small);
    assert_int_equal(ffb_pool_stats(p, &small, sizeof(size_t)), 0);
    assert_int_equal(small.in_use, 0);
    assert_int_equal(small.idle, (size_t)-1 / 0xFF * 0xAB); /* untouched */
    assert_int_equal(ffb_pool_stats(p, NULL, 0), FFB_E_INVAL);
    assert_int_equal(ffb_pool_error(p, NULL, 0), FFB_E_INVAL);
    ffb_pool_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_options_refused),
        cmocka_unit_test(test_pool_new_out_of_memory),
        cmocka_unit_test(test_pool_foreign_and_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
