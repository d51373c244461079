/*
 * The pool core (lib/poolcore.c) on a fake clock: every policy rule, input
 * by input, with the exact actions it must answer. Connections are the
 * addresses of the elements of `conns`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "lib/poolcore.h"

static int conns[64];
#define C(i) ((void *)&conns[i])

typedef struct fixture {
    ffb__poolcore core;
    ffb__pool_slot slots[16];
    int64_t now;
} fixture;

static fixture F;

static void setup_core(size_t min, size_t max, int64_t idle, int64_t validate,
                       int64_t life) {
    memset(&F, 0, sizeof F);
    ffb__poolcore_options o = {.min_size = min,
                               .max_size = max,
                               .idle_timeout_ms = idle,
                               .validate_after_ms = validate,
                               .max_lifetime_ms = life,
                               .backoff_min_ms = 100,
                               .backoff_max_ms = 1000};
    assert_int_equal(ffb__poolcore_init(&F.core, &o, F.slots, 16), 0);
    F.now = 1000;
}

/* The next action must be `kind` (on `conn` when not NULL). */
static ffb__pool_action expect(int kind, void *conn) {
    ffb__pool_action a;
    assert_int_equal(ffb__poolcore_next_action(&F.core, F.now, &a), 1);
    assert_int_equal(a.kind, kind);
    if (conn)
        assert_ptr_equal(a.conn, conn);
    return a;
}

static void expect_none(void) {
    ffb__pool_action a;
    assert_int_equal(ffb__poolcore_next_action(&F.core, F.now, &a), 0);
    assert_int_equal(a.kind, FFB__PA_NONE);
}

static ffb__pool_counts counts(void) {
    ffb__pool_counts c;
    ffb__poolcore_counts(&F.core, &c);
    return c;
}

/* Create `n` connections conns[first..] into the idle stack. */
static void fill(int first, int n) {
    ffb__pool_waiter w[16];
    memset(w, 0, sizeof w);
    for (int i = 0; i < n; i++)
        assert_int_equal(
            ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &w[i]), 0);
    for (int i = 0; i < n; i++)
        expect(FFB__PA_CREATE, NULL);
    expect_none();
    for (int i = 0; i < n; i++) {
        assert_int_equal(ffb__poolcore_created(&F.core, C(first + i), F.now),
                         0);
        ffb__pool_action a = expect(FFB__PA_HAND, C(first + i));
        assert_ptr_equal(a.waiter, &w[i]);
    }
    for (int i = 0; i < n; i++) {
        assert_int_equal(ffb__poolcore_release(&F.core, C(first + i), F.now, 0),
                         0);
        expect(FFB__PA_RESET, C(first + i));
        assert_int_equal(
            ffb__poolcore_reset_done(&F.core, C(first + i), 1, F.now), 0);
    }
    expect_none();
}

static void test_poolcore_init_rejects_bad_options(void **state) {
    (void)state;
    ffb__poolcore core;
    ffb__pool_slot slots[4];
    ffb__poolcore_options o = {.min_size = 0, .max_size = 0};
    assert_int_equal(ffb__poolcore_init(&core, &o, slots, 4), FFB_E_INVAL);
    o.max_size = 5; /* more than the slots given */
    assert_int_equal(ffb__poolcore_init(&core, &o, slots, 4), FFB_E_INVAL);
    o.max_size = 2;
    o.min_size = 3;
    assert_int_equal(ffb__poolcore_init(&core, &o, slots, 4), FFB_E_INVAL);
    o.min_size = 1;
    o.idle_timeout_ms = -1;
    assert_int_equal(ffb__poolcore_init(&core, &o, slots, 4), FFB_E_INVAL);
    o.idle_timeout_ms = 0;
    o.max_size = FFB__POOL_MAX_SIZE + 1;
    assert_int_equal(ffb__poolcore_init(&core, &o, slots, 4), FFB_E_INVAL);
    o.max_size = 2;
    assert_int_equal(ffb__poolcore_init(&core, &o, slots, 4), 0);
    assert_int_equal(ffb__poolcore_init(NULL, &o, slots, 4), FFB_E_INVAL);
}

static void test_poolcore_min_size_created_on_tick(void **state) {
    (void)state;
    setup_core(2, 4, 0, 0, 0);
    expect_none(); /* nothing before the first input */
    ffb__poolcore_tick(&F.core, F.now);
    expect(FFB__PA_CREATE, NULL);
    expect(FFB__PA_CREATE, NULL);
    expect_none();
    assert_int_equal(ffb__poolcore_created(&F.core, C(0), F.now), 0);
    assert_int_equal(ffb__poolcore_created(&F.core, C(1), F.now), 0);
    /* No third CREATE was taken. */
    assert_int_equal(ffb__poolcore_created(&F.core, C(2), F.now), FFB_E_STATE);
    ffb__pool_counts c = counts();
    assert_int_equal(c.idle, 2);
    assert_int_equal(c.total, 2);
    assert_int_equal(c.created, 2);
    expect_none();
}

static void test_poolcore_acquire_reuses_most_recent(void **state) {
    (void)state;
    setup_core(0, 4, 0, 0, 0);
    fill(0, 3); /* released 0, 1, 2: 2 is the most recent */
    ffb__pool_waiter w = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &w), 1);
    assert_ptr_equal(w.conn, C(2));
    assert_int_equal(w.state, FFB__PW_DONE);
    expect_none(); /* no action for an immediate hand */
    ffb__pool_waiter w2 = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &w2), 1);
    assert_ptr_equal(w2.conn, C(1));
    ffb__pool_counts c = counts();
    assert_int_equal(c.in_use, 2);
    assert_int_equal(c.idle, 1);
    assert_int_equal(c.created, 3);
    assert_int_equal(c.acquired, 5); /* 3 in fill + 2 */
}

static void test_poolcore_waiters_served_fifo_at_max(void **state) {
    (void)state;
    setup_core(0, 1, 0, 0, 0);
    fill(0, 1);
    ffb__pool_waiter a = {0}, b = {0}, c = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &a), 1);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &b),
                     0);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &c),
                     0);
    expect_none(); /* at max_size: no CREATE */
    assert_int_equal(counts().waiting, 2);
    assert_int_equal(ffb__poolcore_release(&F.core, C(0), F.now, 0), 0);
    expect(FFB__PA_RESET, C(0));
    /* A newcomer while the reset runs queues behind b and c. */
    ffb__pool_waiter d = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &d),
                     0);
    assert_int_equal(ffb__poolcore_reset_done(&F.core, C(0), 1, F.now), 0);
    ffb__pool_action x = expect(FFB__PA_HAND, C(0));
    assert_ptr_equal(x.waiter, &b);
    assert_int_equal(ffb__poolcore_release(&F.core, C(0), F.now, 0), 0);
    expect(FFB__PA_RESET, C(0));
    assert_int_equal(ffb__poolcore_reset_done(&F.core, C(0), 1, F.now), 0);
    x = expect(FFB__PA_HAND, C(0));
    assert_ptr_equal(x.waiter, &c);
    assert_int_equal(ffb__poolcore_release(&F.core, C(0), F.now, 0), 0);
    expect(FFB__PA_RESET, C(0));
    assert_int_equal(ffb__poolcore_reset_done(&F.core, C(0), 1, F.now), 0);
    x = expect(FFB__PA_HAND, C(0));
    assert_ptr_equal(x.waiter, &d);
    expect_none();
}

static void test_poolcore_creates_per_waiter_up_to_max(void **state) {
    (void)state;
    setup_core(0, 2, 0, 0, 0);
    ffb__pool_waiter w[3];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 3; i++)
        assert_int_equal(
            ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &w[i]), 0);
    expect(FFB__PA_CREATE, NULL);
    expect(FFB__PA_CREATE, NULL);
    expect_none(); /* the third waits for one of the two */
    /* Creations complete in any order; waiters still get them in order. */
    assert_int_equal(ffb__poolcore_created(&F.core, C(7), F.now), 0);
    ffb__pool_action a = expect(FFB__PA_HAND, C(7));
    assert_ptr_equal(a.waiter, &w[0]);
    assert_int_equal(ffb__poolcore_created(&F.core, C(7), F.now),
                     FFB_E_INVAL); /* already in the pool */
    assert_int_equal(ffb__poolcore_created(&F.core, C(3), F.now), 0);
    a = expect(FFB__PA_HAND, C(3));
    assert_ptr_equal(a.waiter, &w[1]);
    assert_int_equal(counts().waiting, 1);
}

static void test_poolcore_timeout_and_deadline(void **state) {
    (void)state;
    setup_core(0, 1, 0, 0, 0);
    fill(0, 1);
    ffb__pool_waiter a = {0}, b = {0}, c = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &a), 1);
    /* None free and no time to wait: at once. */
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &b),
                     FFB_E_TIMEOUT);
    assert_int_equal(b.state, FFB__PW_DONE);
    assert_int_equal(counts().timeouts, 1);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now + 500, &b), 0);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now + 300, &c), 0);
    assert_int_equal(ffb__poolcore_next_deadline(&F.core), F.now + 300);
    ffb__poolcore_tick(&F.core, F.now + 299);
    expect_none();
    ffb__poolcore_tick(&F.core, F.now + 300);
    ffb__pool_action x = expect(FFB__PA_TIMEOUT, NULL);
    assert_ptr_equal(x.waiter, &c);
    expect_none();
    assert_int_equal(ffb__poolcore_next_deadline(&F.core), F.now + 500);
    F.now += 500;
    ffb__poolcore_tick(&F.core, F.now);
    x = expect(FFB__PA_TIMEOUT, NULL);
    assert_ptr_equal(x.waiter, &b);
    assert_int_equal(counts().timeouts, 3);
    assert_int_equal(counts().waiting, 0);
    assert_int_equal(ffb__poolcore_next_deadline(&F.core), FFB__POOL_NEVER);
}

static void test_poolcore_idle_eviction_above_min(void **state) {
    (void)state;
    setup_core(1, 4, 1000, 0, 0);
    fill(0, 3); /* all idle since 1000; bottom to top: 0, 1, 2 */
    F.now = 1100;
    ffb__pool_waiter w = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &w), 1);
    assert_ptr_equal(w.conn, C(2));
    assert_int_equal(ffb__poolcore_release(&F.core, C(2), F.now, 0), 0);
    expect(FFB__PA_RESET, C(2));
    assert_int_equal(ffb__poolcore_reset_done(&F.core, C(2), 1, F.now), 0);
    assert_int_equal(ffb__poolcore_next_deadline(&F.core), 2000);
    ffb__poolcore_tick(&F.core, 1999);
    expect_none();
    F.now = 2000;
    ffb__poolcore_tick(&F.core, F.now);
    /* Least recently used first. */
    ffb__pool_action a = expect(FFB__PA_CLOSE, C(0));
    assert_int_equal(a.reason, FFB__PC_IDLE);
    expect(FFB__PA_CLOSE, C(1));
    expect_none();
    /* conn 2 is idle long enough too, but min_size keeps it. */
    F.now = 9000;
    ffb__poolcore_tick(&F.core, F.now);
    expect_none();
    ffb__pool_counts c = counts();
    assert_int_equal(c.total, 1);
    assert_int_equal(c.idle, 1);
    assert_int_equal(c.evicted, 2);
    assert_int_equal(ffb__poolcore_next_deadline(&F.core), FFB__POOL_NEVER);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &w), 1);
    assert_ptr_equal(w.conn, C(2));
}

static void test_poolcore_validation_after_idle(void **state) {
    (void)state;
    setup_core(0, 2, 0, 500, 0);
    fill(0, 2); /* 1 on top */
    F.now += 499;
    ffb__pool_waiter w = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &w), 1);
    assert_ptr_equal(w.conn, C(1)); /* 499 ms: no validation */
    F.now += 1;
    /* conn 0 idle for 500 ms: validated first, so no immediate hand. */
    ffb__pool_waiter v = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &v),
                     FFB_E_TIMEOUT);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &v),
                     0);
    expect(FFB__PA_VALIDATE, C(0));
    expect_none();
    assert_int_equal(ffb__poolcore_validated(&F.core, C(1), 1, F.now),
                     FFB_E_INVAL); /* not being validated */
    assert_int_equal(ffb__poolcore_validated(&F.core, C(0), 1, F.now + 2), 0);
    ffb__pool_action a = expect(FFB__PA_HAND, C(0));
    assert_ptr_equal(a.waiter, &v);
    ffb__pool_counts c = counts();
    assert_int_equal(c.validations, 1);
    assert_int_equal(c.validations_failed, 0);
    assert_int_equal(c.in_use, 2);
}

static void test_poolcore_failed_validation_tries_next(void **state) {
    (void)state;
    setup_core(0, 3, 0, 500, 0);
    fill(0, 2);
    F.now += 600;
    ffb__pool_waiter w = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &w),
                     0);
    expect(FFB__PA_VALIDATE, C(1));
    expect_none();
    assert_int_equal(ffb__poolcore_validated(&F.core, C(1), 0, F.now), 0);
    ffb__pool_action a = expect(FFB__PA_CLOSE, C(1));
    assert_int_equal(a.reason, FFB__PC_INVALID);
    expect(FFB__PA_VALIDATE, C(0)); /* the next idle one */
    expect_none();
    assert_int_equal(ffb__poolcore_validated(&F.core, C(0), 0, F.now), 0);
    expect(FFB__PA_CLOSE, C(0));
    expect(FFB__PA_CREATE, NULL); /* none left: a new one */
    expect_none();
    assert_int_equal(ffb__poolcore_created(&F.core, C(5), F.now), 0);
    a = expect(FFB__PA_HAND, C(5));
    assert_ptr_equal(a.waiter, &w);
    ffb__pool_counts c = counts();
    assert_int_equal(c.validations, 2);
    assert_int_equal(c.validations_failed, 2);
    assert_int_equal(c.discarded, 2);
    assert_int_equal(c.created, 3);
}

static void test_poolcore_max_lifetime(void **state) {
    (void)state;
    setup_core(0, 2, 0, 0, 1000);
    fill(0, 2); /* both born at 1000 */
    ffb__pool_waiter w = {0};
    F.now = 1500;
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &w), 1);
    assert_int_equal(ffb__poolcore_next_deadline(&F.core), 2000);
    F.now = 2000;
    /* Past its lifetime: closed on release instead of reset. */
    assert_int_equal(ffb__poolcore_release(&F.core, w.conn, F.now, 0), 0);
    ffb__pool_action a = expect(FFB__PA_CLOSE, w.conn);
    assert_int_equal(a.reason, FFB__PC_LIFETIME);
    /* The idle one too (closed by the same input), never handed out. */
    a = expect(FFB__PA_CLOSE, NULL);
    assert_int_equal(a.reason, FFB__PC_LIFETIME);
    expect_none();
    ffb__pool_waiter v = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &v),
                     0);
    expect(FFB__PA_CREATE, NULL);
    assert_int_equal(counts().expired, 2);
}

static void test_poolcore_lifetime_instead_of_handing(void **state) {
    (void)state;
    setup_core(0, 2, 0, 0, 1000);
    fill(0, 1);
    /* No tick ran; acquire itself must not hand an expired connection. */
    F.now = 3000;
    ffb__pool_waiter w = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &w),
                     0);
    expect(FFB__PA_CLOSE, C(0));
    expect(FFB__PA_CREATE, NULL);
    expect_none();
}

static void test_poolcore_broken_replaced_to_min(void **state) {
    (void)state;
    setup_core(2, 2, 0, 0, 0);
    ffb__poolcore_tick(&F.core, F.now);
    expect(FFB__PA_CREATE, NULL);
    expect(FFB__PA_CREATE, NULL);
    assert_int_equal(ffb__poolcore_created(&F.core, C(0), F.now), 0);
    assert_int_equal(ffb__poolcore_created(&F.core, C(1), F.now), 0);
    ffb__pool_waiter w = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &w), 1);
    assert_int_equal(ffb__poolcore_release(&F.core, w.conn, F.now, 1), 0);
    ffb__pool_action a = expect(FFB__PA_CLOSE, w.conn);
    assert_int_equal(a.reason, FFB__PC_BROKEN);
    /* The slot is free once the CLOSE is taken: the replacement follows. */
    expect(FFB__PA_CREATE, NULL);
    expect_none();
    assert_int_equal(ffb__poolcore_release(&F.core, w.conn, F.now, 0),
                     FFB_E_INVAL); /* no longer the pool's */
    ffb__pool_counts c = counts();
    assert_int_equal(c.discarded, 1);
    assert_int_equal(c.total, 2);
    assert_int_equal(c.pending, 1);
}

static void test_poolcore_failed_reset_discards(void **state) {
    (void)state;
    setup_core(0, 2, 0, 0, 0);
    fill(0, 1);
    ffb__pool_waiter w = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &w), 1);
    assert_int_equal(ffb__poolcore_release(&F.core, C(0), F.now, 0), 0);
    expect(FFB__PA_RESET, C(0));
    assert_int_equal(ffb__poolcore_reset_done(&F.core, C(0), 0, F.now), 0);
    ffb__pool_action a = expect(FFB__PA_CLOSE, C(0));
    assert_int_equal(a.reason, FFB__PC_RESET);
    expect_none(); /* min_size 0 and nobody waits: nothing created */
    ffb__pool_counts c = counts();
    assert_int_equal(c.resets, 2);
    assert_int_equal(c.resets_failed, 1);
    assert_int_equal(c.discarded, 1);
    assert_int_equal(c.total, 0);
}

static void test_poolcore_create_failure_backs_off(void **state) {
    (void)state;
    setup_core(1, 3, 0, 0, 0);
    ffb__pool_waiter a = {0}, b = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &a),
                     0);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &b),
                     0);
    expect(FFB__PA_CREATE, NULL);
    expect(FFB__PA_CREATE, NULL);
    expect_none();
    assert_int_equal(ffb__poolcore_created(&F.core, NULL, F.now), 0);
    /* One creation is still out for b: only a fails. */
    ffb__pool_action x = expect(FFB__PA_FAIL, NULL);
    assert_ptr_equal(x.waiter, &a);
    expect_none();
    assert_int_equal(ffb__poolcore_created(&F.core, NULL, F.now), 0);
    x = expect(FFB__PA_FAIL, NULL);
    assert_ptr_equal(x.waiter, &b);
    expect_none(); /* min_size wants one, but not before the backoff */
    /* Two failures: 100 then 200 ms. */
    assert_int_equal(ffb__poolcore_next_deadline(&F.core), F.now + 200);
    ffb__poolcore_tick(&F.core, F.now + 199);
    expect_none();
    F.now += 200;
    ffb__poolcore_tick(&F.core, F.now);
    expect(FFB__PA_CREATE, NULL);
    expect_none();
    /* While it runs, more waiters get no second attempt. */
    ffb__pool_waiter c = {0}, d = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &c),
                     0);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &d),
                     0);
    expect_none();
    assert_int_equal(ffb__poolcore_created(&F.core, NULL, F.now), 0);
    x = expect(FFB__PA_FAIL, NULL);
    assert_ptr_equal(x.waiter, &c);
    expect_none();
    assert_int_equal(ffb__poolcore_next_deadline(&F.core), F.now + 400);
    F.now += 10000; /* d waits; capped at backoff_max */
    ffb__poolcore_tick(&F.core, F.now);
    expect(FFB__PA_CREATE, NULL);
    expect_none();
    assert_int_equal(ffb__poolcore_created(&F.core, C(0), F.now), 0);
    x = expect(FFB__PA_HAND, C(0));
    assert_ptr_equal(x.waiter, &d);
    /* Success ends the backoff: creations are parallel again. */
    ffb__pool_waiter e = {0}, f = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &e),
                     0);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &f),
                     0);
    expect(FFB__PA_CREATE, NULL);
    expect(FFB__PA_CREATE, NULL);
    expect_none();
    ffb__pool_counts cnt = counts();
    assert_int_equal(cnt.create_failures, 3);
    assert_int_equal(cnt.failed_waits, 3);
}

static void test_poolcore_backoff_capped(void **state) {
    (void)state;
    setup_core(1, 1, 0, 0, 0);
    ffb__poolcore_tick(&F.core, F.now);
    int64_t want[] = {100, 200, 400, 800, 1000, 1000};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        expect(FFB__PA_CREATE, NULL);
        expect_none();
        assert_int_equal(ffb__poolcore_created(&F.core, NULL, F.now), 0);
        expect_none();
        assert_int_equal(ffb__poolcore_next_deadline(&F.core), F.now + want[i]);
        F.now += want[i];
        ffb__poolcore_tick(&F.core, F.now);
    }
}

static void test_poolcore_withdraw(void **state) {
    (void)state;
    setup_core(0, 1, 0, 0, 0);
    fill(0, 1);
    ffb__pool_waiter a = {0}, b = {0}, c = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &a), 1);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &b),
                     0);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &c),
                     0);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, 0, &b),
                     FFB_E_INVAL); /* already waiting */
    assert_int_equal(ffb__poolcore_withdraw(&F.core, &b), FFB__PW_WAITING);
    assert_int_equal(ffb__poolcore_withdraw(&F.core, &b), FFB__PW_DONE);
    assert_int_equal(counts().waiting, 1);
    assert_int_equal(ffb__poolcore_release(&F.core, C(0), F.now, 0), 0);
    expect(FFB__PA_RESET, C(0));
    assert_int_equal(ffb__poolcore_reset_done(&F.core, C(0), 1, F.now), 0);
    /* c's HAND is decided; withdrawing now takes it (c owns the conn). */
    assert_int_equal(c.state, FFB__PW_READY);
    assert_int_equal(ffb__poolcore_withdraw(&F.core, &c), FFB__PW_READY);
    assert_int_equal(c.result, FFB__PA_HAND);
    assert_ptr_equal(c.conn, C(0));
    expect_none();
    assert_int_equal(counts().in_use, 1);
}

static void test_poolcore_shutdown_drains(void **state) {
    (void)state;
    setup_core(0, 3, 0, 0, 0);
    fill(0, 2);
    ffb__pool_waiter a = {0}, b = {0}, c = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &a), 1);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &b), 1);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &c),
                     0);
    expect(FFB__PA_CREATE, NULL); /* for c; taken, not answered yet */
    ffb__poolcore_shutdown(&F.core);
    ffb__pool_action x = expect(FFB__PA_FAIL, NULL);
    assert_ptr_equal(x.waiter, &c);
    assert_int_equal(x.reason, FFB__PC_SHUTDOWN);
    expect_none();
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, &c),
                     FFB_E_STATE);
    assert_int_equal(ffb__poolcore_is_drained(&F.core), 0);
    assert_int_equal(ffb__poolcore_release(&F.core, a.conn, F.now, 0), 0);
    expect(FFB__PA_CLOSE, a.conn);
    assert_int_equal(ffb__poolcore_created(&F.core, C(9), F.now), 0);
    expect(FFB__PA_CLOSE, C(9));
    assert_int_equal(ffb__poolcore_release(&F.core, b.conn, F.now, 0), 0);
    x = expect(FFB__PA_CLOSE, b.conn);
    assert_int_equal(x.reason, FFB__PC_SHUTDOWN);
    expect_none();
    assert_int_equal(ffb__poolcore_is_drained(&F.core), 1);
}

static void test_poolcore_bad_inputs(void **state) {
    (void)state;
    setup_core(0, 2, 0, 0, 0);
    assert_int_equal(ffb__poolcore_release(&F.core, C(0), F.now, 0),
                     FFB_E_INVAL);
    assert_int_equal(ffb__poolcore_release(&F.core, NULL, F.now, 0),
                     FFB_E_INVAL);
    assert_int_equal(ffb__poolcore_created(&F.core, C(0), F.now), FFB_E_STATE);
    assert_int_equal(ffb__poolcore_created(&F.core, NULL, F.now), FFB_E_STATE);
    assert_int_equal(ffb__poolcore_validated(&F.core, C(0), 1, F.now),
                     FFB_E_INVAL);
    assert_int_equal(ffb__poolcore_reset_done(&F.core, C(0), 1, F.now),
                     FFB_E_INVAL);
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, F.now, NULL),
                     FFB_E_INVAL);
    /* An answer to a CREATE not yet taken is refused too. */
    ffb__pool_waiter w = {0};
    assert_int_equal(ffb__poolcore_acquire(&F.core, F.now, FFB__POOL_NEVER, &w),
                     0);
    assert_int_equal(ffb__poolcore_created(&F.core, C(0), F.now), FFB_E_STATE);
    /* A RESET not taken yet cannot be answered either. */
    expect(FFB__PA_CREATE, NULL);
    assert_int_equal(ffb__poolcore_created(&F.core, C(0), F.now), 0);
    expect(FFB__PA_HAND, C(0));
    assert_int_equal(ffb__poolcore_release(&F.core, C(0), F.now, 0), 0);
    assert_int_equal(ffb__poolcore_reset_done(&F.core, C(0), 1, F.now),
                     FFB_E_INVAL);
    assert_int_equal(ffb__poolcore_release(&F.core, C(0), F.now, 0),
                     FFB_E_INVAL); /* released twice */
    expect(FFB__PA_RESET, C(0));
    assert_int_equal(ffb__poolcore_reset_done(&F.core, C(0), 1, F.now), 0);
    assert_int_equal(counts().idle, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poolcore_init_rejects_bad_options),
        cmocka_unit_test(test_poolcore_min_size_created_on_tick),
        cmocka_unit_test(test_poolcore_acquire_reuses_most_recent),
        cmocka_unit_test(test_poolcore_waiters_served_fifo_at_max),
        cmocka_unit_test(test_poolcore_creates_per_waiter_up_to_max),
        cmocka_unit_test(test_poolcore_timeout_and_deadline),
        cmocka_unit_test(test_poolcore_idle_eviction_above_min),
        cmocka_unit_test(test_poolcore_validation_after_idle),
        cmocka_unit_test(test_poolcore_failed_validation_tries_next),
        cmocka_unit_test(test_poolcore_max_lifetime),
        cmocka_unit_test(test_poolcore_lifetime_instead_of_handing),
        cmocka_unit_test(test_poolcore_broken_replaced_to_min),
        cmocka_unit_test(test_poolcore_failed_reset_discards),
        cmocka_unit_test(test_poolcore_create_failure_backs_off),
        cmocka_unit_test(test_poolcore_backoff_capped),
        cmocka_unit_test(test_poolcore_withdraw),
        cmocka_unit_test(test_poolcore_shutdown_drains),
        cmocka_unit_test(test_poolcore_bad_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
