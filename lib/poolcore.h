/*
 * The connection-pool core (lib/poolcore.c): the policy of a pool, with no
 * I/O, no locks, no clock and no allocation.
 *
 * The core is driven by inputs and answers with actions. The inputs are
 * calls: a waiter asks for a connection (acquire), the application gives one
 * back (release), the driver reports the outcome of an action it ran
 * (created, validated, reset_done), time passes (tick), a waiter gives up
 * (withdraw). Every input takes the time as an argument (milliseconds on
 * the ffb_now_ms() scale), and the driver asks ffb__poolcore_next_deadline()
 * when to call tick next. What the core decided is taken, one action at a
 * time, with ffb__poolcore_next_action():
 *
 *   CREATE    open a new connection, then call created(conn or NULL)
 *   VALIDATE  check `conn` (ping), then call validated(conn, ok)
 *   RESET     reset `conn` for its next user, then call reset_done(conn, ok)
 *   CLOSE     close and free `conn`; the core has forgotten it already
 *   HAND      `waiter` got `conn` (waiter->conn); it is now in use
 *   TIMEOUT   `waiter` passed its deadline without a connection
 *   FAIL      `waiter` gets no connection: a creation meant for it failed
 *             (the driver knows why: the error of that creation)
 *
 * A blocking pool calls the core under its mutex, takes the actions under
 * the mutex and runs CREATE/VALIDATE/RESET/CLOSE outside it; an event-loop
 * pool calls it from the loop and runs them asynchronously. Either way the
 * core never waits for an action: the connection is in a "pending" state
 * until its answer comes, and other inputs are handled meanwhile.
 *
 * Connections are `void *` to the core: it only compares them. Waiters are
 * owned by the caller (an intrusive node, e.g. on the waiting thread's stack
 * or inside an async request) and must stay valid until the core has let go
 * of them: until their HAND/TIMEOUT/FAIL action was taken, or withdraw()
 * returned. So the core allocates nothing; its connection slots are an array
 * the caller provides (one per connection up to max_size).
 *
 * Policy (docs/pool.md):
 * - Idle connections are a stack: the most recently used is handed out
 *   first, so the least recently used ones stay idle at the bottom and are
 *   closed after idle_timeout_ms while the pool holds more than min_size.
 * - Waiters are served strictly in arrival (FIFO) order; each has a
 *   deadline (INT64_MAX = none) after which tick() times it out.
 * - An idle connection unused for validate_after_ms or longer is validated
 *   before it is handed out; if that fails it is closed and the next one is
 *   tried (or one created).
 * - A connection older than max_lifetime_ms is closed instead of being
 *   reset on release, handed out, or kept idle.
 * - A broken connection (release with broken, or a failed validation or
 *   reset) is closed; new ones are created while the pool has fewer than
 *   min_size or waiters that no pending connection will serve.
 * - A failed creation fails the oldest waiter that no pending connection
 *   will serve, and delays the next creation: backoff_min_ms, doubled per
 *   consecutive failure up to backoff_max_ms. A success resets it.
 * - Release always asks for a RESET (the driver's reset costs nothing when
 *   there is nothing to undo).
 *
 * Costs: acquire, release and the answers are O(1) except that finding a
 * connection's slot is O(max_size); tick and next_deadline are O(waiters +
 * idle).
 */
#ifndef FFB_LIB_POOLCORE_H
#define FFB_LIB_POOLCORE_H

#include <stddef.h>
#include <stdint.h>

/* Most connections a core manages. */
#define FFB__POOL_MAX_SIZE 4096

/* Defaults of the creation backoff. */
#define FFB__POOL_BACKOFF_MIN_MS 50
#define FFB__POOL_BACKOFF_MAX_MS 5000

/* "No deadline" / "never". */
#define FFB__POOL_NEVER INT64_MAX

enum ffb__pool_action_kind {
    FFB__PA_NONE = 0,
    FFB__PA_CREATE,
    FFB__PA_VALIDATE,
    FFB__PA_RESET,
    FFB__PA_CLOSE,
    FFB__PA_HAND,
    FFB__PA_TIMEOUT,
    FFB__PA_FAIL
};

/* Why a connection is closed (ffb__pool_action.reason for CLOSE). */
enum ffb__pool_close_reason {
    FFB__PC_NONE = 0,
    FFB__PC_BROKEN,   /* released broken */
    FFB__PC_INVALID,  /* validation failed */
    FFB__PC_RESET,    /* reset failed */
    FFB__PC_IDLE,     /* idle too long above min_size */
    FFB__PC_LIFETIME, /* older than max_lifetime_ms */
    FFB__PC_SHUTDOWN  /* ffb__poolcore_shutdown */
};

enum ffb__pool_waiter_state {
    FFB__PW_NEW = 0, /* not known to the core */
    FFB__PW_WAITING, /* in the FIFO */
    FFB__PW_READY,   /* result decided; its action not taken yet */
    FFB__PW_DONE     /* result taken; the core has let go */
};

/* A waiter. The caller sets `data` (and may read everything); the rest is
   the core's. `conn` is set with HAND; `result` is the outcome once READY
   (FFB__PA_HAND, FFB__PA_TIMEOUT or FFB__PA_FAIL) and `reason` says why a
   FAIL: FFB__PC_SHUTDOWN, or FFB__PC_NONE for a failed creation (the driver
   knows its error). */
typedef struct ffb__pool_waiter {
    struct ffb__pool_waiter *prev;
    struct ffb__pool_waiter *next;
    int64_t deadline;
    void *conn;
    int state;  /* enum ffb__pool_waiter_state */
    int result; /* enum ffb__pool_action_kind of the outcome */
    int reason; /* enum ffb__pool_close_reason, FAIL only */
    void *data; /* the caller's */
} ffb__pool_waiter;

/* A connection slot; the caller provides max_size of them. */
typedef struct ffb__pool_slot {
    void *conn;
    int64_t created_at;
    int64_t last_used;
    int state;    /* poolcore.c: enum slot_state */
    int todo;     /* action owed to the driver, FFB__PA_NONE if taken */
    int reason;   /* close reason while todo is CLOSE */
    int32_t prev; /* idle stack / todo FIFO links (indices, -1 = none) */
    int32_t next;
    int32_t todo_next;
} ffb__pool_slot;

typedef struct ffb__pool_action {
    int kind;   /* enum ffb__pool_action_kind; NONE = nothing to do */
    int reason; /* CLOSE, FAIL: enum ffb__pool_close_reason */
    void *conn; /* VALIDATE, RESET, CLOSE, HAND */
    ffb__pool_waiter *waiter; /* HAND, TIMEOUT, FAIL */
} ffb__pool_action;

/* Options of a core; zero means "off" for every time limit. */
typedef struct ffb__poolcore_options {
    size_t min_size;
    size_t max_size;           /* 1..FFB__POOL_MAX_SIZE */
    int64_t idle_timeout_ms;   /* 0 = idle connections are never closed */
    int64_t validate_after_ms; /* 0 = never validate */
    int64_t max_lifetime_ms;   /* 0 = no limit */
    int64_t backoff_min_ms;    /* 0 = FFB__POOL_BACKOFF_MIN_MS */
    int64_t backoff_max_ms;    /* 0 = FFB__POOL_BACKOFF_MAX_MS */
} ffb__poolcore_options;

/* Counters and gauges. */
typedef struct ffb__pool_counts {
    size_t in_use; /* handed out, not released yet */
    size_t idle;
    size_t waiting; /* waiters in the FIFO */
    size_t pending; /* being created, validated, reset or closed */
    size_t total;   /* every connection the pool holds or is creating */
    uint64_t created;
    uint64_t create_failures;
    uint64_t discarded; /* closed broken, invalid or after a failed reset */
    uint64_t evicted;   /* closed after idle_timeout_ms */
    uint64_t expired;   /* closed past max_lifetime_ms */
    uint64_t timeouts;
    uint64_t failed_waits; /* waiters failed by a failed creation */
    uint64_t validations;
    uint64_t validations_failed;
    uint64_t acquired; /* connections handed out */
    uint64_t resets;
    uint64_t resets_failed;
} ffb__pool_counts;

typedef struct ffb__poolcore {
    ffb__poolcore_options opt;
    ffb__pool_slot *slots;
    size_t nslots;
    int32_t idle_top, idle_bottom; /* most / least recently used */
    int32_t todo_head, todo_tail;  /* actions owed, FIFO */
    ffb__pool_waiter *wait_head, *wait_tail;
    ffb__pool_waiter *ready_head, *ready_tail;
    size_t n_free, n_idle, n_lent, n_creating, n_validating, n_resetting,
        n_closing;
    unsigned failures;    /* consecutive creation failures */
    int64_t create_after; /* no CREATE before this time (backoff) */
    int shut;
    ffb__pool_counts c;
} ffb__poolcore;

/*
 * Set up `core` with `nslots` (>= max_size) slots. Nothing is created yet:
 * the first tick (or any input) asks for min_size connections.
 * Returns: 0, FFB_E_INVAL (bad options: max_size 0 or above
 * FFB__POOL_MAX_SIZE, min_size > max_size, a negative time, too few
 * slots).
 */
int ffb__poolcore_init(ffb__poolcore *core, const ffb__poolcore_options *opt,
                       ffb__pool_slot *slots, size_t nslots);

/*
 * `w` wants a connection until `deadline` (FFB__POOL_NEVER = no limit).
 * Returns: 1 when a connection was handed at once (w->conn; no action
 * follows for w, w->state DONE); 0 when w waits (HAND, TIMEOUT or FAIL
 * follows, or withdraw); FFB_E_TIMEOUT when none is free and deadline <=
 * now (w not queued); FFB_E_STATE when the core is shut down; FFB_E_INVAL
 * when w is NULL or already queued.
 */
int ffb__poolcore_acquire(ffb__poolcore *core, int64_t now, int64_t deadline,
                          ffb__pool_waiter *w);

/*
 * `w` gives up (its own timeout, cancellation). Returns the state it had:
 * FFB__PW_WAITING (removed; no action will name it), FFB__PW_READY (its
 * result was decided but not taken: it is taken now - w->result says which;
 * after HAND the caller owns w->conn and must release it), FFB__PW_DONE or
 * FFB__PW_NEW (nothing to do).
 */
int ffb__poolcore_withdraw(ffb__poolcore *core, ffb__pool_waiter *w);

/* 1 when `conn` is a connection of `core` handed out now (a caller checks
   this before it looks at a connection given back). */
int ffb__poolcore_lent(const ffb__poolcore *core, const void *conn);

/*
 * The connection `conn` handed out earlier comes back. `broken` = it must
 * not be used again (closed and replaced as needed); otherwise it is closed
 * when past its lifetime, else RESET is asked.
 * Returns: 0, FFB_E_INVAL (not a connection in use from this core).
 */
int ffb__poolcore_release(ffb__poolcore *core, void *conn, int64_t now,
                          int broken);

/*
 * The answer to a CREATE: `conn`, or NULL when the creation failed.
 * Returns: 0, FFB_E_STATE (no CREATE was taken), FFB_E_INVAL (conn is
 * already in the pool).
 */
int ffb__poolcore_created(ffb__poolcore *core, void *conn, int64_t now);

/*
 * The answer to a VALIDATE of `conn`: ok = it is usable.
 * Returns: 0, FFB_E_INVAL (conn not being validated).
 */
int ffb__poolcore_validated(ffb__poolcore *core, void *conn, int ok,
                            int64_t now);

/*
 * The answer to a RESET of `conn`: ok = it is clean and usable.
 * Returns: 0, FFB_E_INVAL (conn not being reset).
 */
int ffb__poolcore_reset_done(ffb__poolcore *core, void *conn, int ok,
                             int64_t now);

/* Time passed: time out waiters, close idle and expired connections, create
   what is missing once the backoff allows. */
void ffb__poolcore_tick(ffb__poolcore *core, int64_t now);

/* When tick() should next be called: a waiter's deadline, an idle
   connection's eviction or lifetime, the end of the backoff when a creation
   waits for it; FFB__POOL_NEVER when nothing is timed. */
int64_t ffb__poolcore_next_deadline(const ffb__poolcore *core);

/* Take the next action: 1 with *out filled, 0 when there is none. Waiter
   outcomes (HAND, TIMEOUT, FAIL) come before connection work, each kind in
   the order it was decided. Taking a CLOSE frees its slot, which may make
   room for a CREATE decided at `now`. */
int ffb__poolcore_next_action(ffb__poolcore *core, int64_t now,
                              ffb__pool_action *out);

/*
 * Stop: every waiter gets FAIL with result FFB_E_CANCELLED, idle
 * connections are closed, nothing is created any more, and connections
 * that come back later (release, answers) are closed. The pool is drained
 * when ffb__poolcore_is_drained() says so and no action is left.
 */
void ffb__poolcore_shutdown(ffb__poolcore *core);

/* 1 when the core holds no connection and owes no answer. */
int ffb__poolcore_is_drained(const ffb__poolcore *core);

/* The same as the public ffb_pool_counters (both pools report them). */
struct ffb_pool_counters;
void ffb__poolcore_counters(const ffb__poolcore *core,
                            struct ffb_pool_counters *out);

/* The counters; the gauges are computed now. */
void ffb__poolcore_counts(const ffb__poolcore *core, ffb__pool_counts *out);

#endif
