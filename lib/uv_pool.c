/*
 * The async pool of libfastfb_uv (ffb_uv_pool_*): the pool core of
 * lib/poolcore.c, the policy the blocking ffb_pool uses too, driven from a
 * libuv loop with the adapter's connections (lib/uv.c) and the queue
 * functions. Public API only, as the adapter.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "include/fastfb_uv.h"
#include "lib/poolcore.h"

/* ---- the pool ------------------------------------------------------------ */

/*
 * ffb_uv_pool: the pool core (lib/poolcore.c, the same policy as the
 * blocking ffb_pool) driven from the loop. The core's inputs are made where
 * they happen (acquire, release, the answers of the connections); its
 * actions are taken only by pool_run(), from the pool's prepare and check
 * handles and its timer, so no callback of the application ever runs
 * inside one of its own calls:
 *   CREATE   ffb_uv_conn_new() + ffb_uv_connect()   -> created()
 *   VALIDATE ffb_conn_queue_ping()                   -> validated()
 *   RESET    ffb_conn_queue_reset()                  -> reset_done()
 *   CLOSE    ffb_uv_close()
 *   HAND, TIMEOUT, FAIL: the acquire callback.
 */

#define POOL_MAGIC 0x66627570u /* "fbup" */
#define POOL_DEFAULT_MAX 8
#define POOL_DEFAULT_ACQUIRE_MS 30000
#define POOL_DEFAULT_IDLE_MS 600000
#define POOL_DEFAULT_VALIDATE_MS 30000

typedef struct acq {
    ffb__pool_waiter w; /* w.data = the acq */
    ffb_uv_pool *pool;
    ffb_uv_acquire_cb cb;
    void *data;
    int status;       /* decided at once (no wait): 0 or FFB_E_TIMEOUT */
    int64_t deadline; /* of the acquire (FFB__POOL_NEVER: none) */
    unsigned pass;    /* the pool_run() pass it was made in (or before) */
    struct acq *next; /* decided at once, delivered by pool_run() */
} acq;

/* The options' strings, copied. */
enum {
    PS_DSN,
    PS_HOST,
    PS_PORT,
    PS_DATABASE,
    PS_USER,
    PS_PASSWORD,
    PS_ROLE,
    PS_CHARSET,
    PS_AUTH,
    PS_CRYPT,
    PS_OS_USER,
    PS_CLIENT_HOST,
    PS_PROCESS,
    PS_N
};

struct ffb_uv_pool {
    uint32_t magic;
    uv_loop_t *loop;
    ffb_allocator alloc;
    int has_alloc;
    ffb_conn_options copts;
    char *strs[PS_N];
    int acquire_timeout_ms; /* -1: no limit */
    ffb__poolcore core;
    ffb__pool_slot *slots;
    acq *now_head, *now_tail; /* outcomes decided at once */
    size_t conns;             /* connections not yet reported closed */
    int64_t armed;
    uv_timer_t timer;
    uv_prepare_t prepare;
    uv_check_t check;
    uv_idle_t idle; /* runs while answers wait for the next pass */
    int handles;
    int closing; /* 0, 1 = shut down, 2 = handles closing */
    ffb_uv_pool_close_cb close_cb;
    void *close_data;
    int in_run;
    int dirty;     /* an input came since the last pool_run() */
    unsigned pass; /* pool_run() passes begun */
    int create_rc; /* code of the last connect that failed */
    ffb_pool_error_info last;
};

static void *pmalloc(ffb_uv_pool *p, size_t n) {
    return p->has_alloc ? p->alloc.malloc(n, p->alloc.data) : malloc(n);
}

static void pfree(ffb_uv_pool *p, void *q) {
    if (!q)
        return;
    if (p->has_alloc)
        p->alloc.free(q, p->alloc.data);
    else
        free(q);
}

static void pool_error(ffb_uv_pool *p, int code, const ffb_error *e,
                       const char *fmt, ...) {
    memset(&p->last, 0, sizeof(p->last));
    p->last.code = code;
    p->last.time_ms = ffb_now_ms();
    if (e) {
        p->last.gds = ffb_error_gds(e);
        snprintf(p->last.sqlstate, sizeof(p->last.sqlstate), "%s",
                 ffb_error_sqlstate(e));
        snprintf(p->last.message, sizeof(p->last.message), "%s",
                 ffb_error_message(e));
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->last.message, sizeof(p->last.message), fmt, ap);
    va_end(ap);
}

static void pool_run(ffb_uv_pool *p);
static void pool_conn_closed(ffb_conn *conn, int status, void *data);

static void pool_close_conn(ffb_uv_pool *p, ffb_conn *conn) {
    if (ffb_uv_close(conn, pool_conn_closed, p) < 0)
        p->conns--; /* already closing: counted by that close */
}

static void pool_created(ffb_conn *conn, int status, void *data) {
    ffb_uv_pool *p = data;
    int64_t now = ffb_now_ms();
    p->dirty = 1;
    if (status == 0) {
        ffb__poolcore_created(&p->core, conn, now);
        return;
    }
    p->create_rc = status;
    pool_error(p, status, ffb_conn_error(conn), NULL);
    ffb__poolcore_created(&p->core, NULL, now);
    pool_close_conn(p, conn);
}

static void pool_validated(ffb_conn *conn, const ffb_result *res, void *data) {
    ffb_uv_pool *p = data;
    p->dirty = 1;
    ffb__poolcore_validated(&p->core, conn, ffb_result_status(res) == 0,
                            ffb_now_ms());
}

static void pool_reset(ffb_conn *conn, const ffb_result *res, void *data) {
    ffb_uv_pool *p = data;
    p->dirty = 1;
    ffb__poolcore_reset_done(&p->core, conn, ffb_result_status(res) == 0,
                             ffb_now_ms());
}

static void pool_conn_closed(ffb_conn *conn, int status, void *data) {
    (void)conn;
    (void)status;
    ffb_uv_pool *p = data;
    p->conns--;
    p->dirty = 1;
}

static void pool_create(ffb_uv_pool *p, int64_t now) {
    ffb_conn *conn = NULL;
    int rc = ffb_uv_conn_new(p->loop, &p->copts, &conn);
    if (rc == 0) {
        p->conns++;
        rc = ffb_uv_connect(conn, pool_created, p);
        if (rc == 0)
            return;
    } else if (conn) {
        p->conns++;
    }
    p->create_rc = rc;
    pool_error(p, rc, conn ? ffb_conn_error(conn) : NULL, "%s",
               ffb_strerror(rc));
    ffb__poolcore_created(&p->core, NULL, now);
    if (conn)
        pool_close_conn(p, conn);
}

static void deliver(ffb_uv_pool *p, acq *a, ffb_conn *conn, int status) {
    if (p->in_run && a->pass == p->pass) {
        /* Asked for by a callback of this pass: answered on the next one
           (a callback that acquires again in a loop must not keep the
           loop here). */
        a->status = status;
        a->w.conn = conn;
        a->next = NULL;
        if (p->now_tail)
            p->now_tail->next = a;
        else
            p->now_head = a;
        p->now_tail = a;
        return;
    }
    ffb_uv_acquire_cb cb = a->cb;
    void *data = a->data;
    ffb_uv_pool *pool = a->pool;
    pfree(pool, a);
    cb(pool, conn, status, data);
}

/* Hand `conn` to the waiter - unless it broke while idle in the pool (the
   server went away, the adapter closed it): then it goes back as broken
   (closed, replaced as needed) and the waiter asks again, keeping its
   deadline, until it gets a working one or its answer is decided. */
static void hand(ffb_uv_pool *p, acq *a, ffb_conn *conn, int64_t now) {
    if (p->closing) { /* served before the close, told after it */
        ffb__poolcore_release(&p->core, conn, now, 1);
        deliver(p, a, NULL, FFB_E_CANCELLED);
        return;
    }
    while (!ffb_conn_is_attached(conn)) {
        ffb__poolcore_release(&p->core, conn, now, 1);
        int rc = ffb__poolcore_acquire(&p->core, now, a->deadline, &a->w);
        if (rc == 0)
            return; /* it waits again: HAND, TIMEOUT or FAIL follows */
        if (rc != 1) {
            if (rc == FFB_E_TIMEOUT)
                pool_error(p, rc, NULL,
                           "the idle connections had broken, and no other "
                           "became free in time");
            deliver(p, a, NULL,
                    rc == FFB_E_TIMEOUT ? FFB_E_TIMEOUT : FFB_E_CANCELLED);
            return;
        }
        conn = a->w.conn;
    }
    deliver(p, a, conn, 0);
}

static void take(ffb_uv_pool *p, const ffb__pool_action *act, int64_t now) {
    ffb_conn *conn = act->conn;
    int rc;
    switch (act->kind) {
    case FFB__PA_CREATE:
        pool_create(p, now);
        break;
    case FFB__PA_VALIDATE:
        if (ffb_conn_queue_ping(conn, pool_validated, p) < 0)
            ffb__poolcore_validated(&p->core, conn, 0, now);
        break;
    case FFB__PA_RESET:
        rc = ffb_conn_queue_reset(conn, pool_reset, p);
        if (rc != 0)
            ffb__poolcore_reset_done(&p->core, conn, rc == 1, now);
        break;
    case FFB__PA_CLOSE:
        pool_close_conn(p, conn);
        break;
    case FFB__PA_HAND:
        hand(p, act->waiter->data, conn, now);
        break;
    case FFB__PA_TIMEOUT:
        pool_error(p, FFB_E_TIMEOUT, NULL,
                   "no connection of the pool became free in time");
        deliver(p, act->waiter->data, NULL, FFB_E_TIMEOUT);
        break;
    case FFB__PA_FAIL:
        deliver(p, act->waiter->data, NULL,
                act->reason == FFB__PC_SHUTDOWN ? FFB_E_CANCELLED
                : p->create_rc < 0              ? p->create_rc
                                                : FFB_E_IO);
        break;
    default:
        break;
    }
}

static void pool_timer(uv_timer_t *t);
static void pool_idle(uv_idle_t *h);
static void pool_handle_closed(uv_handle_t *h);

/* Take every action the core decided; set the timer; end a close.

   The core changes only with its inputs (acquire, release, the answers of
   the connections, a close) and with time, and its next deadline is
   where the timer is set. So with no input since the last pass and
   nothing due, a pass has nothing to do - and the pool runs from three
   handles every turn of the loop, with every connection's traffic
   (docs/performance.md): then it only lets the next poll block again. */
static void pool_run(ffb_uv_pool *p) {
    if (p->in_run || p->closing == 2)
        return;
    if (!p->dirty && !p->now_head &&
        (p->armed == FFB__POOL_NEVER || ffb_now_ms() < p->armed)) {
        uv_idle_stop(&p->idle);
        return;
    }
    p->dirty = 0;
    p->in_run = 1;
    p->pass++;
    int64_t now = ffb_now_ms();
    ffb__poolcore_tick(&p->core, now);
    /* Outcomes decided before this pass; those decided during it (by the
       callbacks it runs) wait for the next. */
    acq *batch = p->now_head;
    p->now_head = p->now_tail = NULL;
    int did = 0; /* callbacks ran, or requests were queued */
    for (;;) {
        acq *a = batch;
        if (a) {
            did = 1;
            batch = a->next;
            if (a->status == 0)
                hand(p, a, a->w.conn, now);
            else
                deliver(p, a, NULL, a->status);
            continue;
        }
        ffb__pool_action act;
        if (!ffb__poolcore_next_action(&p->core, now, &act))
            break;
        did = 1;
        take(p, &act, now);
    }
    p->in_run = 0;
    int64_t d = ffb__poolcore_next_deadline(&p->core);
    /* Answers for the next pass, or requests this pass queued on
       connections (an acquire callback's query, a reset, a detach) whose
       own prepare handle may have run already this turn: the idle handle
       keeps the next poll from blocking, so the next turn writes them (a
       timer of 0 would run again within this turn of the loop's timers). */
    if ((p->now_head || did) && p->closing != 2)
        uv_idle_start(&p->idle, pool_idle);
    else
        uv_idle_stop(&p->idle);
    if (d != p->armed) {
        p->armed = d;
        if (d == FFB__POOL_NEVER)
            uv_timer_stop(&p->timer);
        else
            uv_timer_start(&p->timer, pool_timer,
                           d > now ? (uint64_t)(d - now) : 0, 0);
    }
    ffb__pool_counts c;
    ffb__poolcore_counts(&p->core, &c);
    /* Keep the loop alive while an acquire waits or a close runs. */
    if (c.waiting || p->now_head || p->closing)
        uv_ref((uv_handle_t *)&p->prepare);
    else
        uv_unref((uv_handle_t *)&p->prepare);
    if (p->closing == 1 && ffb__poolcore_is_drained(&p->core) &&
        p->conns == 0) {
        p->closing = 2;
        uv_close((uv_handle_t *)&p->timer, pool_handle_closed);
        uv_close((uv_handle_t *)&p->prepare, pool_handle_closed);
        uv_close((uv_handle_t *)&p->check, pool_handle_closed);
        uv_close((uv_handle_t *)&p->idle, pool_handle_closed);
    }
}

static void pool_timer(uv_timer_t *t) {
    ffb_uv_pool *p = t->data;
    p->armed = FFB__POOL_NEVER;
    p->dirty = 1;
    pool_run(p);
}

static void pool_prepare(uv_prepare_t *h) { pool_run(h->data); }

static void pool_idle(uv_idle_t *h) { pool_run(h->data); }

static void pool_check(uv_check_t *h) { pool_run(h->data); }

/* Zero a string before it is freed, in a way the compiler keeps. */
static void wipe(char *str) {
    for (volatile char *v = str; v && *v; v++)
        *v = 0;
}

static void pool_handle_closed(uv_handle_t *h) {
    ffb_uv_pool *p = h->data;
    if (--p->handles > 0)
        return;
    if (p->close_cb)
        p->close_cb(p, p->close_data);
    for (int i = 0; i < PS_N; i++) {
        wipe(p->strs[i]); /* the password among them */
        pfree(p, p->strs[i]);
    }
    ffb_formats_unref(p->copts.formats);
    pfree(p, p->slots);
    p->magic = 0;
    pfree(p, p);
}

static ffb_uv_pool *pool_get(const ffb_uv_pool *pool) {
    return pool && pool->magic == POOL_MAGIC ? (ffb_uv_pool *)pool : NULL;
}

static int64_t pool_ms(int v, int64_t dflt) {
    if (v == 0)
        return dflt;
    return v < 0 ? 0 : v; /* the core's 0 is "off" */
}

static int copy_strs(ffb_uv_pool *p) {
    const char **f[PS_N] = {
        &p->copts.dsn,          &p->copts.host,
        &p->copts.port,         &p->copts.database,
        &p->copts.user,         &p->copts.password,
        &p->copts.role,         &p->copts.charset,
        &p->copts.auth_plugins, &p->copts.wire_crypt_plugins,
        &p->copts.os_user,      &p->copts.client_host,
        &p->copts.process_name};
    for (int i = 0; i < PS_N; i++) {
        if (!*f[i])
            continue;
        size_t n = strlen(*f[i]) + 1;
        p->strs[i] = pmalloc(p, n);
        if (!p->strs[i])
            return FFB_E_NOMEM;
        memcpy(p->strs[i], *f[i], n);
        *f[i] = p->strs[i];
    }
    return 0;
}

int ffb_uv_pool_new(uv_loop_t *loop, const ffb_pool_options *opts,
                    ffb_uv_pool **out) {
    if (!loop || !opts || !out || opts->version != FFB_POOL_OPTIONS_VERSION ||
        !opts->conn || opts->conn->version != FFB_CONN_OPTIONS_VERSION)
        return FFB_E_INVAL;
    ffb__poolcore_options co;
    memset(&co, 0, sizeof(co));
    co.max_size = opts->max_size ? opts->max_size : POOL_DEFAULT_MAX;
    co.min_size = opts->min_size;
    if (co.max_size > FFB__POOL_MAX_SIZE || co.min_size > co.max_size)
        return FFB_E_INVAL;
    co.idle_timeout_ms = pool_ms(opts->idle_timeout_ms, POOL_DEFAULT_IDLE_MS);
    co.validate_after_ms =
        pool_ms(opts->validate_after_ms, POOL_DEFAULT_VALIDATE_MS);
    co.max_lifetime_ms = opts->max_lifetime_ms > 0 ? opts->max_lifetime_ms : 0;
    const ffb_allocator *al = opts->conn->allocator;
    ffb_uv_pool *p = al ? al->malloc(sizeof(*p), al->data) : malloc(sizeof(*p));
    if (!p)
        return FFB_E_NOMEM;
    memset(p, 0, sizeof(*p));
    if (al) {
        p->alloc = *al;
        p->has_alloc = 1;
    }
    p->copts = *opts->conn;
    /* Every connection of the pool shares one format memory: the
       options' one, or one of its own. */
    if (opts->conn->formats)
        p->copts.formats = ffb_formats_ref(opts->conn->formats);
    else if (ffb_formats_new(0, &p->copts.formats) < 0)
        p->copts.formats = NULL; /* out of memory: not shared */
    p->slots = pmalloc(p, co.max_size * sizeof(*p->slots));
    if (!p->slots || copy_strs(p) < 0) {
        for (int i = 0; i < PS_N; i++)
            pfree(p, p->strs[i]);
        ffb_formats_unref(p->copts.formats);
        pfree(p, p->slots);
        pfree(p, p);
        return FFB_E_NOMEM;
    }
    if (ffb__poolcore_init(&p->core, &co, p->slots, co.max_size) < 0) {
        for (int i = 0; i < PS_N; i++)
            pfree(p, p->strs[i]);
        ffb_formats_unref(p->copts.formats);
        pfree(p, p->slots);
        pfree(p, p);
        return FFB_E_INVAL;
    }
    p->magic = POOL_MAGIC;
    p->loop = loop;
    p->acquire_timeout_ms = opts->acquire_timeout_ms == 0
                                ? POOL_DEFAULT_ACQUIRE_MS
                                : opts->acquire_timeout_ms;
    if (p->acquire_timeout_ms < 0)
        p->acquire_timeout_ms = -1;
    p->armed = FFB__POOL_NEVER;
    p->dirty = 1; /* the first pass opens min_size connections */
    uv_timer_init(loop, &p->timer);
    uv_prepare_init(loop, &p->prepare);
    uv_check_init(loop, &p->check);
    uv_idle_init(loop, &p->idle);
    p->timer.data = p->prepare.data = p->check.data = p->idle.data = p;
    p->handles = 4;
    uv_prepare_start(&p->prepare, pool_prepare);
    uv_check_start(&p->check, pool_check);
    uv_unref((uv_handle_t *)&p->prepare);
    uv_unref((uv_handle_t *)&p->check);
    uv_unref((uv_handle_t *)&p->timer);
    /* min_size connections are opened by the first pass of the loop. */
    if (co.min_size)
        uv_ref((uv_handle_t *)&p->prepare);
    *out = p;
    return 0;
}

int ffb_uv_pool_acquire(ffb_uv_pool *pool, int timeout_ms, ffb_uv_acquire_cb cb,
                        void *data) {
    ffb_uv_pool *p = pool_get(pool);
    if (!p || !cb || timeout_ms < -1)
        return FFB_E_INVAL;
    if (p->closing)
        return FFB_E_STATE;
    acq *a = pmalloc(p, sizeof(*a));
    if (!a)
        return FFB_E_NOMEM;
    memset(a, 0, sizeof(*a));
    a->pool = p;
    a->cb = cb;
    a->data = data;
    a->w.data = a;
    a->pass = p->pass;
    int64_t now = ffb_now_ms();
    int t = timeout_ms == -1 ? p->acquire_timeout_ms : timeout_ms;
    int64_t deadline = t < 0 ? FFB__POOL_NEVER : now + t;
    a->deadline = deadline;
    int rc = ffb__poolcore_acquire(&p->core, now, deadline, &a->w);
    if (rc == 1 || rc == FFB_E_TIMEOUT) { /* decided now, told later */
        a->status = rc == 1 ? 0 : FFB_E_TIMEOUT;
        if (rc == FFB_E_TIMEOUT)
            pool_error(p, rc, NULL, "no idle connection (timeout 0)");
        if (p->now_tail)
            p->now_tail->next = a;
        else
            p->now_head = a;
        p->now_tail = a;
    } else if (rc < 0) {
        pfree(p, a);
        return rc;
    }
    p->dirty = 1;
    uv_ref((uv_handle_t *)&p->prepare); /* the answer comes next pass */
    return 0;
}

static int give_back(ffb_uv_pool *pool, ffb_conn *conn, int broken) {
    ffb_uv_pool *p = pool_get(pool);
    if (!p || !conn)
        return FFB_E_INVAL;
    if (!ffb__poolcore_lent(&p->core, conn)) {
        /* Not looked at: it may be freed, or another user's. */
        pool_error(p, FFB_E_INVAL, NULL,
                   "not a connection handed out by this pool");
        return FFB_E_INVAL;
    }
    /* A connection that broke, or with requests still pending (their
       callbacks would reach the next user), is not handed out again. */
    if (!ffb_conn_is_attached(conn) || ffb_conn_pending(conn) > 0)
        broken = 1;
    int rc = ffb__poolcore_release(&p->core, conn, ffb_now_ms(), broken);
    p->dirty = 1;
    if (rc < 0)
        pool_error(p, rc, NULL, "not a connection handed out by this pool");
    else
        uv_ref((uv_handle_t *)&p->prepare);
    return rc;
}

int ffb_uv_pool_release(ffb_uv_pool *pool, ffb_conn *conn) {
    return give_back(pool, conn, 0);
}

int ffb_uv_pool_discard(ffb_uv_pool *pool, ffb_conn *conn) {
    return give_back(pool, conn, 1);
}

int ffb_uv_pool_stats(const ffb_uv_pool *pool, ffb_pool_counters *out,
                      size_t out_size) {
    ffb_uv_pool *p = pool_get(pool);
    if (!p || !out)
        return FFB_E_INVAL;
    ffb_pool_counters s;
    ffb__poolcore_counters(&p->core, &s);
    memset(out, 0, out_size);
    memcpy(out, &s, out_size < sizeof(s) ? out_size : sizeof(s));
    return 0;
}

int ffb_uv_pool_error(const ffb_uv_pool *pool, ffb_pool_error_info *out,
                      size_t out_size) {
    ffb_uv_pool *p = pool_get(pool);
    if (!p || !out)
        return FFB_E_INVAL;
    memset(out, 0, out_size);
    memcpy(out, &p->last,
           out_size < sizeof(p->last) ? out_size : sizeof(p->last));
    return 0;
}

uv_loop_t *ffb_uv_pool_loop(const ffb_uv_pool *pool) {
    ffb_uv_pool *p = pool_get(pool);
    return p ? p->loop : NULL;
}

int ffb_uv_pool_close(ffb_uv_pool *pool, ffb_uv_pool_close_cb cb, void *data) {
    ffb_uv_pool *p = pool_get(pool);
    if (!p)
        return FFB_E_INVAL;
    if (p->closing)
        return FFB_E_STATE;
    p->closing = 1;
    p->close_cb = cb;
    p->close_data = data;
    ffb__poolcore_shutdown(&p->core);
    p->dirty = 1;
    uv_ref((uv_handle_t *)&p->prepare);
    return 0;
}
