/*
 * The connection-pool core: policy only (see lib/poolcore.h and
 * docs/pool.md). No I/O, no locks, no clock, no allocation.
 *
 * Slot states and their transitions (the input or step that makes them):
 *
 *   FREE       --plan (too few, or waiters)--------> CREATING (todo CREATE)
 *   CREATING   --created(conn)---------------------> IDLE, or LENT (handed)
 *   CREATING   --created(NULL)---------------------> FREE (backoff)
 *   IDLE       --acquire/pump, fresh----------------> LENT
 *   IDLE       --pump, unused >= validate_after-----> VALIDATING (todo)
 *   IDLE       --tick: idle_timeout / lifetime------> CLOSING
 *   VALIDATING --validated(ok)---------------------> LENT or IDLE
 *   VALIDATING --validated(!ok)--------------------> CLOSING
 *   LENT       --release (healthy, young)-----------> RESETTING (todo RESET)
 *   LENT       --release (broken / old)-------------> CLOSING
 *   RESETTING  --reset_done(ok)--------------------> LENT or IDLE
 *   RESETTING  --reset_done(!ok)-------------------> CLOSING
 *   CLOSING    --its CLOSE action taken-------------> FREE
 *
 * A slot owes the driver at most one action at a time (`todo`), kept in
 * the todo FIFO until taken. Waiters move from the wait FIFO to the ready
 * list when their outcome is decided, and leave it when the outcome is
 * taken (next_action) or withdrawn.
 */
#include "lib/poolcore.h"

#include <string.h>

#include "include/fastfb.h"

enum slot_state {
    S_FREE = 0,
    S_CREATING,
    S_IDLE,
    S_LENT,
    S_VALIDATING,
    S_RESETTING,
    S_CLOSING
};

/* now - since, 0 when since is later, saturating instead of overflowing. */
static int64_t elapsed(int64_t now, int64_t since) {
    if (since >= now)
        return 0;
    if (since < 0 && now > INT64_MAX + since)
        return INT64_MAX;
    return now - since;
}

static int64_t add_sat(int64_t t, int64_t d) {
    if (d > 0 && t > INT64_MAX - d)
        return INT64_MAX;
    return t + d;
}

static size_t *state_count(ffb__poolcore *core, int st) {
    switch (st) {
    case S_CREATING:
        return &core->n_creating;
    case S_IDLE:
        return &core->n_idle;
    case S_LENT:
        return &core->n_lent;
    case S_VALIDATING:
        return &core->n_validating;
    case S_RESETTING:
        return &core->n_resetting;
    case S_CLOSING:
        return &core->n_closing;
    default:
        return &core->n_free;
    }
}

static void set_state(ffb__poolcore *core, int32_t i, int st) {
    ffb__pool_slot *s = &core->slots[i];
    (*state_count(core, s->state))--;
    s->state = st;
    (*state_count(core, st))++;
    if (st == S_FREE) {
        s->conn = NULL;
        s->todo = FFB__PA_NONE;
    }
}

/* Connections held or being created, not counting those being closed. */
static size_t live(const ffb__poolcore *core) {
    return core->opt.max_size - core->n_free - core->n_closing;
}

/* ---- lists ------------------------------------------------------------- */

static void todo_push(ffb__poolcore *core, int32_t i, int kind, int reason) {
    ffb__pool_slot *s = &core->slots[i];
    s->todo = kind;
    s->reason = reason;
    s->todo_next = -1;
    if (core->todo_tail >= 0)
        core->slots[core->todo_tail].todo_next = i;
    else
        core->todo_head = i;
    core->todo_tail = i;
}

static int32_t todo_pop(ffb__poolcore *core) {
    int32_t i = core->todo_head;
    if (i < 0)
        return -1;
    core->todo_head = core->slots[i].todo_next;
    if (core->todo_head < 0)
        core->todo_tail = -1;
    core->slots[i].todo_next = -1;
    return i;
}

/* The idle stack: `prev` points towards the top (more recent). */
static void idle_push(ffb__poolcore *core, int32_t i) {
    ffb__pool_slot *s = &core->slots[i];
    s->prev = -1;
    s->next = core->idle_top;
    if (core->idle_top >= 0)
        core->slots[core->idle_top].prev = i;
    else
        core->idle_bottom = i;
    core->idle_top = i;
    set_state(core, i, S_IDLE);
}

static void idle_remove(ffb__poolcore *core, int32_t i) {
    ffb__pool_slot *s = &core->slots[i];
    if (s->prev >= 0)
        core->slots[s->prev].next = s->next;
    else
        core->idle_top = s->next;
    if (s->next >= 0)
        core->slots[s->next].prev = s->prev;
    else
        core->idle_bottom = s->prev;
    s->prev = s->next = -1;
}

static void wait_unlink(ffb__poolcore *core, ffb__pool_waiter *w) {
    if (w->prev)
        w->prev->next = w->next;
    else
        core->wait_head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        core->wait_tail = w->prev;
    w->prev = w->next = NULL;
    core->c.waiting--;
}

static void ready_unlink(ffb__poolcore *core, ffb__pool_waiter *w) {
    if (w->prev)
        w->prev->next = w->next;
    else
        core->ready_head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        core->ready_tail = w->prev;
    w->prev = w->next = NULL;
}

/* Decide the outcome of a waiting `w`. */
static void make_ready(ffb__poolcore *core, ffb__pool_waiter *w, int result,
                       int reason) {
    wait_unlink(core, w);
    w->result = result;
    w->reason = reason;
    w->state = FFB__PW_READY;
    w->prev = core->ready_tail;
    w->next = NULL;
    if (core->ready_tail)
        core->ready_tail->next = w;
    else
        core->ready_head = w;
    core->ready_tail = w;
}

/* ---- decisions --------------------------------------------------------- */

static int too_old(const ffb__poolcore *core, int32_t i, int64_t now) {
    return core->opt.max_lifetime_ms > 0 &&
           elapsed(now, core->slots[i].created_at) >= core->opt.max_lifetime_ms;
}

static int needs_validation(const ffb__poolcore *core, int32_t i, int64_t now) {
    return core->opt.validate_after_ms > 0 &&
           elapsed(now, core->slots[i].last_used) >=
               core->opt.validate_after_ms;
}

static void close_slot(ffb__poolcore *core, int32_t i, int reason) {
    switch (reason) {
    case FFB__PC_BROKEN:
    case FFB__PC_INVALID:
    case FFB__PC_RESET:
        core->c.discarded++;
        break;
    case FFB__PC_IDLE:
        core->c.evicted++;
        break;
    case FFB__PC_LIFETIME:
        core->c.expired++;
        break;
    default:
        break;
    }
    set_state(core, i, S_CLOSING);
    todo_push(core, i, FFB__PA_CLOSE, reason);
}

static void lend(ffb__poolcore *core, int32_t i, ffb__pool_waiter *w) {
    set_state(core, i, S_LENT);
    w->conn = core->slots[i].conn;
    core->c.acquired++;
}

/* A usable connection `i` (not in any list) goes to the oldest waiter, or
   to the top of the idle stack. */
static void give(ffb__poolcore *core, int32_t i, int64_t now) {
    if (core->shut) {
        close_slot(core, i, FFB__PC_SHUTDOWN);
        return;
    }
    if (too_old(core, i, now)) {
        close_slot(core, i, FFB__PC_LIFETIME);
        return;
    }
    if (core->wait_head) {
        ffb__pool_waiter *w = core->wait_head;
        lend(core, i, w);
        make_ready(core, w, FFB__PA_HAND, FFB__PC_NONE);
        return;
    }
    idle_push(core, i);
}

static void expire_waiters(ffb__poolcore *core, int64_t now) {
    ffb__pool_waiter *w = core->wait_head;
    while (w) {
        ffb__pool_waiter *next = w->next;
        if (w->deadline <= now) {
            core->c.timeouts++;
            make_ready(core, w, FFB__PA_TIMEOUT, FFB__PC_NONE);
        }
        w = next;
    }
}

/* Close idle connections past their lifetime, and the least recently used
   ones idle too long while more than min_size are held. */
static void evict(ffb__poolcore *core, int64_t now) {
    int32_t i = core->idle_bottom;
    while (i >= 0) {
        int32_t up = core->slots[i].prev;
        if (too_old(core, i, now)) {
            idle_remove(core, i);
            close_slot(core, i, FFB__PC_LIFETIME);
        } else if (core->opt.idle_timeout_ms > 0 &&
                   live(core) > core->opt.min_size &&
                   elapsed(now, core->slots[i].last_used) >=
                       core->opt.idle_timeout_ms) {
            idle_remove(core, i);
            close_slot(core, i, FFB__PC_IDLE);
        }
        i = up;
    }
}

/* Serve waiters not covered by validations in progress from the idle
   stack, most recently used first. */
static void pump(ffb__poolcore *core, int64_t now) {
    while (core->c.waiting > core->n_validating && core->idle_top >= 0) {
        int32_t i = core->idle_top;
        idle_remove(core, i);
        if (too_old(core, i, now)) {
            close_slot(core, i, FFB__PC_LIFETIME);
        } else if (needs_validation(core, i, now)) {
            set_state(core, i, S_VALIDATING);
            todo_push(core, i, FFB__PA_VALIDATE, FFB__PC_NONE);
        } else {
            ffb__pool_waiter *w = core->wait_head;
            lend(core, i, w);
            make_ready(core, w, FFB__PA_HAND, FFB__PC_NONE);
        }
    }
}

/* How many creations the pool wants now, ignoring the backoff. */
static size_t creations_wanted(const ffb__poolcore *core) {
    if (core->shut)
        return 0;
    size_t supply = core->n_creating + core->n_validating + core->n_resetting;
    size_t for_waiters =
        core->c.waiting > supply ? core->c.waiting - supply : 0;
    size_t have = live(core);
    size_t for_min = core->opt.min_size > have ? core->opt.min_size - have : 0;
    size_t n = for_waiters > for_min ? for_waiters : for_min;
    if (n > core->n_free)
        n = core->n_free;
    /* After a failure, one attempt at a time. */
    if (core->failures > 0) {
        if (core->n_creating > 0)
            return 0;
        if (n > 1)
            n = 1;
    }
    return n;
}

static void plan(ffb__poolcore *core, int64_t now) {
    if (core->failures > 0 && now < core->create_after)
        return;
    size_t n = creations_wanted(core);
    for (size_t i = 0; i < core->opt.max_size && n > 0; i++) {
        if (core->slots[i].state != S_FREE)
            continue;
        set_state(core, (int32_t)i, S_CREATING);
        todo_push(core, (int32_t)i, FFB__PA_CREATE, FFB__PC_NONE);
        n--;
    }
}

static void step(ffb__poolcore *core, int64_t now) {
    expire_waiters(core, now);
    evict(core, now);
    pump(core, now);
    plan(core, now);
}

static int32_t find(const ffb__poolcore *core, const void *conn, int st) {
    if (!conn)
        return -1;
    for (size_t i = 0; i < core->opt.max_size; i++)
        if (core->slots[i].conn == conn &&
            (st < 0 || core->slots[i].state == st))
            return (int32_t)i;
    return -1;
}

static int64_t backoff(const ffb__poolcore *core) {
    int64_t b = core->opt.backoff_min_ms;
    for (unsigned k = 1; k < core->failures && b < core->opt.backoff_max_ms;
         k++)
        b = b > INT64_MAX / 2 ? INT64_MAX : b * 2;
    return b < core->opt.backoff_max_ms ? b : core->opt.backoff_max_ms;
}

/* ---- inputs ------------------------------------------------------------ */

int ffb__poolcore_init(ffb__poolcore *core, const ffb__poolcore_options *opt,
                       ffb__pool_slot *slots, size_t nslots) {
    if (!core || !opt || !slots || opt->max_size == 0 ||
        opt->max_size > FFB__POOL_MAX_SIZE || opt->min_size > opt->max_size ||
        nslots < opt->max_size || opt->idle_timeout_ms < 0 ||
        opt->validate_after_ms < 0 || opt->max_lifetime_ms < 0 ||
        opt->backoff_min_ms < 0 || opt->backoff_max_ms < 0)
        return FFB_E_INVAL;
    memset(core, 0, sizeof *core);
    core->opt = *opt;
    if (core->opt.backoff_min_ms == 0)
        core->opt.backoff_min_ms = FFB__POOL_BACKOFF_MIN_MS;
    if (core->opt.backoff_max_ms == 0)
        core->opt.backoff_max_ms = FFB__POOL_BACKOFF_MAX_MS;
    if (core->opt.backoff_max_ms < core->opt.backoff_min_ms)
        core->opt.backoff_max_ms = core->opt.backoff_min_ms;
    core->slots = slots;
    core->nslots = nslots;
    for (size_t i = 0; i < opt->max_size; i++) {
        memset(&slots[i], 0, sizeof slots[i]);
        slots[i].state = S_FREE;
        slots[i].prev = slots[i].next = slots[i].todo_next = -1;
    }
    core->n_free = opt->max_size;
    core->idle_top = core->idle_bottom = -1;
    core->todo_head = core->todo_tail = -1;
    return 0;
}

int ffb__poolcore_acquire(ffb__poolcore *core, int64_t now, int64_t deadline,
                          ffb__pool_waiter *w) {
    if (!core || !w || w->state == FFB__PW_WAITING || w->state == FFB__PW_READY)
        return FFB_E_INVAL;
    if (core->shut)
        return FFB_E_STATE;
    w->conn = NULL;
    w->result = FFB__PA_NONE;
    w->reason = FFB__PC_NONE;
    w->prev = w->next = NULL;
    expire_waiters(core, now);
    evict(core, now);
    if (!core->wait_head) {
        while (core->idle_top >= 0) {
            int32_t i = core->idle_top;
            if (too_old(core, i, now)) {
                idle_remove(core, i);
                close_slot(core, i, FFB__PC_LIFETIME);
                continue;
            }
            if (needs_validation(core, i, now))
                break;
            idle_remove(core, i);
            lend(core, i, w);
            w->result = FFB__PA_HAND;
            w->state = FFB__PW_DONE;
            step(core, now);
            return 1;
        }
    }
    if (deadline <= now) {
        core->c.timeouts++;
        w->result = FFB__PA_TIMEOUT;
        w->state = FFB__PW_DONE;
        step(core, now);
        return FFB_E_TIMEOUT;
    }
    w->deadline = deadline;
    w->state = FFB__PW_WAITING;
    w->prev = core->wait_tail;
    if (core->wait_tail)
        core->wait_tail->next = w;
    else
        core->wait_head = w;
    core->wait_tail = w;
    core->c.waiting++;
    step(core, now);
    return 0;
}

int ffb__poolcore_withdraw(ffb__poolcore *core, ffb__pool_waiter *w) {
    if (!core || !w)
        return FFB__PW_NEW;
    int st = w->state;
    if (st == FFB__PW_WAITING) {
        wait_unlink(core, w);
        w->state = FFB__PW_DONE;
        w->result = FFB__PA_NONE;
    } else if (st == FFB__PW_READY) {
        ready_unlink(core, w);
        w->state = FFB__PW_DONE;
    }
    return st;
}

int ffb__poolcore_lent(const ffb__poolcore *core, const void *conn) {
    return core && find((ffb__poolcore *)core, (void *)conn, S_LENT) >= 0;
}

int ffb__poolcore_release(ffb__poolcore *core, void *conn, int64_t now,
                          int broken) {
    if (!core)
        return FFB_E_INVAL;
    int32_t i = find(core, conn, S_LENT);
    if (i < 0)
        return FFB_E_INVAL;
    expire_waiters(core, now);
    if (broken) {
        close_slot(core, i, FFB__PC_BROKEN);
    } else if (core->shut) {
        close_slot(core, i, FFB__PC_SHUTDOWN);
    } else if (too_old(core, i, now)) {
        close_slot(core, i, FFB__PC_LIFETIME);
    } else {
        core->c.resets++;
        set_state(core, i, S_RESETTING);
        todo_push(core, i, FFB__PA_RESET, FFB__PC_NONE);
    }
    step(core, now);
    return 0;
}

int ffb__poolcore_created(ffb__poolcore *core, void *conn, int64_t now) {
    if (!core)
        return FFB_E_INVAL;
    if (conn && find(core, conn, -1) >= 0)
        return FFB_E_INVAL;
    int32_t i = -1;
    for (size_t k = 0; k < core->opt.max_size; k++)
        if (core->slots[k].state == S_CREATING &&
            core->slots[k].todo == FFB__PA_NONE) {
            i = (int32_t)k;
            break;
        }
    if (i < 0)
        return FFB_E_STATE;
    expire_waiters(core, now);
    if (!conn) {
        set_state(core, i, S_FREE);
        core->c.create_failures++;
        if (core->failures < 64)
            core->failures++;
        core->create_after = add_sat(now, backoff(core));
        size_t supply =
            core->n_creating + core->n_validating + core->n_resetting;
        if (core->c.waiting > supply) {
            core->c.failed_waits++;
            make_ready(core, core->wait_head, FFB__PA_FAIL, FFB__PC_NONE);
        }
    } else {
        ffb__pool_slot *s = &core->slots[i];
        s->conn = conn;
        s->created_at = now;
        s->last_used = now;
        core->c.created++;
        core->failures = 0;
        give(core, i, now);
    }
    step(core, now);
    return 0;
}

int ffb__poolcore_validated(ffb__poolcore *core, void *conn, int ok,
                            int64_t now) {
    if (!core)
        return FFB_E_INVAL;
    int32_t i = find(core, conn, S_VALIDATING);
    if (i < 0 || core->slots[i].todo != FFB__PA_NONE)
        return FFB_E_INVAL;
    expire_waiters(core, now);
    core->c.validations++;
    if (!ok) {
        core->c.validations_failed++;
        close_slot(core, i, FFB__PC_INVALID);
    } else {
        core->slots[i].last_used = now;
        give(core, i, now);
    }
    step(core, now);
    return 0;
}

int ffb__poolcore_reset_done(ffb__poolcore *core, void *conn, int ok,
                             int64_t now) {
    if (!core)
        return FFB_E_INVAL;
    int32_t i = find(core, conn, S_RESETTING);
    if (i < 0 || core->slots[i].todo != FFB__PA_NONE)
        return FFB_E_INVAL;
    expire_waiters(core, now);
    if (!ok) {
        core->c.resets_failed++;
        close_slot(core, i, FFB__PC_RESET);
    } else {
        core->slots[i].last_used = now;
        give(core, i, now);
    }
    step(core, now);
    return 0;
}

void ffb__poolcore_tick(ffb__poolcore *core, int64_t now) {
    if (core)
        step(core, now);
}

int64_t ffb__poolcore_next_deadline(const ffb__poolcore *core) {
    int64_t t = FFB__POOL_NEVER;
    if (!core)
        return t;
    for (const ffb__pool_waiter *w = core->wait_head; w; w = w->next)
        if (w->deadline < t)
            t = w->deadline;
    int evictable =
        core->opt.idle_timeout_ms > 0 && live(core) > core->opt.min_size;
    for (int32_t i = core->idle_top; i >= 0; i = core->slots[i].next) {
        const ffb__pool_slot *s = &core->slots[i];
        if (core->opt.max_lifetime_ms > 0) {
            int64_t e = add_sat(s->created_at, core->opt.max_lifetime_ms);
            if (e < t)
                t = e;
        }
        if (evictable) {
            int64_t e = add_sat(s->last_used, core->opt.idle_timeout_ms);
            if (e < t)
                t = e;
        }
    }
    if (core->failures > 0 && core->n_creating == 0 &&
        creations_wanted(core) > 0 && core->create_after < t)
        t = core->create_after;
    return t;
}

int ffb__poolcore_next_action(ffb__poolcore *core, int64_t now,
                              ffb__pool_action *out) {
    if (!core || !out)
        return 0;
    memset(out, 0, sizeof *out);
    if (core->ready_head) {
        ffb__pool_waiter *w = core->ready_head;
        ready_unlink(core, w);
        w->state = FFB__PW_DONE;
        out->kind = w->result;
        out->reason = w->reason;
        out->waiter = w;
        out->conn = w->conn;
        return 1;
    }
    for (;;) {
        int32_t i = todo_pop(core);
        if (i < 0)
            return 0;
        ffb__pool_slot *s = &core->slots[i];
        int kind = s->todo;
        s->todo = FFB__PA_NONE;
        if (kind == FFB__PA_CREATE && core->shut) {
            set_state(core, i, S_FREE);
            continue;
        }
        out->kind = kind;
        out->reason = s->reason;
        out->conn = s->conn;
        if (kind == FFB__PA_CLOSE) {
            set_state(core, i, S_FREE);
            /* The slot is free again: a waiter may need it. */
            plan(core, now);
        }
        return 1;
    }
}

void ffb__poolcore_shutdown(ffb__poolcore *core) {
    if (!core || core->shut)
        return;
    core->shut = 1;
    while (core->wait_head)
        make_ready(core, core->wait_head, FFB__PA_FAIL, FFB__PC_SHUTDOWN);
    while (core->idle_top >= 0) {
        int32_t i = core->idle_top;
        idle_remove(core, i);
        close_slot(core, i, FFB__PC_SHUTDOWN);
    }
}

int ffb__poolcore_is_drained(const ffb__poolcore *core) {
    return core && core->n_free == core->opt.max_size && core->todo_head < 0 &&
           !core->ready_head;
}

void ffb__poolcore_counts(const ffb__poolcore *core, ffb__pool_counts *out) {
    if (!core || !out)
        return;
    *out = core->c;
    out->in_use = core->n_lent;
    out->idle = core->n_idle;
    out->pending = core->n_creating + core->n_validating + core->n_resetting +
                   core->n_closing;
    out->total = live(core);
}

void ffb__poolcore_counters(const ffb__poolcore *core, ffb_pool_counters *out) {
    ffb__pool_counts c = {0}; /* stays zero for a NULL core */
    ffb__poolcore_counts(core, &c);
    ffb_pool_counters s = {
        .in_use = c.in_use,
        .idle = c.idle,
        .waiting = c.waiting,
        .pending = c.pending,
        .total = c.total,
        .created = c.created,
        .create_failures = c.create_failures,
        .discarded = c.discarded,
        .evicted = c.evicted,
        .expired = c.expired,
        .timeouts = c.timeouts,
        .failed_waits = c.failed_waits,
        .validations = c.validations,
        .validations_failed = c.validations_failed,
        .acquired = c.acquired,
        .resets = c.resets,
        .resets_failed = c.resets_failed,
    };
    *out = s;
}
