/*
 * The blocking connection pool: the pool core (lib/poolcore.c) driven by
 * threads. docs/pool.md has the design.
 *
 * One mutex guards the core and the pool's error. Every call feeds its
 * input to the core under the mutex and then runs the actions the core
 * decided (work()): waiter outcomes are signalled at once; connecting,
 * pinging, resetting and freeing a connection run with the mutex released
 * and their outcome goes back to the core under it. So whichever thread
 * calls when work is due does it; there is no background thread.
 *
 * A waiting thread sleeps on a condition variable of its own (on its
 * stack, inside its core waiter), until its outcome is decided or the
 * core's next deadline (its own timeout, an eviction, the end of a connect
 * backoff), when it ticks the core and runs what is due. The core lets go
 * of a waiter when its outcome action is taken - under the mutex, in the
 * same hold that signals it - so a woken thread may leave at once.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "lib/internal.h"
#include "lib/poolcore.h"

#define DEFAULT_MAX 8
#define DEFAULT_ACQUIRE_MS 30000
#define DEFAULT_IDLE_MS 600000
#define DEFAULT_VALIDATE_MS 30000

typedef struct pool_waiter {
    ffb__pool_waiter w;
    pthread_cond_t cv;
    int rc; /* FAIL: the code of the connect that failed it */
} pool_waiter;

/* The string fields of ffb_conn_options, copied. */
#define NSTR 13

struct ffb_pool {
    const ffb_allocator *alloc; /* the connection options' (NULL = libc) */
    pthread_mutex_t mu;
    ffb__poolcore core;
    ffb__pool_slot *slots;
    ffb_conn_options copts;
    char *strs[NSTR];
    int acquire_timeout_ms; /* < 0: no limit */
    int bad;                /* the options were refused: this code */
    int create_rc;          /* the last failed connect's code */
    ffb_pool_error_info last;
};

/* ---- errors ------------------------------------------------------------ */

static void set_error(ffb_pool *pool, int code, const ffb_error *err,
                      const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Record the pool's last failure (mutex held, or no other thread yet):
   `fmt` is a prefix, followed by `err`'s message when there is one. */
static void set_error(ffb_pool *pool, int code, const ffb_error *err,
                      const char *fmt, ...) {
    ffb_pool_error_info *e = &pool->last;
    memset(e, 0, sizeof *e);
    e->code = code;
    e->time_ms = ffb_now_ms();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    if (err) {
        size_t n = strlen(e->message);
        snprintf(e->message + n, sizeof e->message - n, ": %s",
                 ffb_error_message(err));
        e->gds = ffb_error_gds(err);
        snprintf(e->sqlstate, sizeof e->sqlstate, "%s",
                 ffb_error_sqlstate(err));
    }
}

/* ---- options ----------------------------------------------------------- */

void ffb_pool_options_init(ffb_pool_options *opts) {
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->version = FFB_POOL_OPTIONS_VERSION;
}

static const char **str_field(ffb_conn_options *o, int i) {
    const char **f[NSTR] = {&o->dsn,          &o->host,
                            &o->port,         &o->database,
                            &o->user,         &o->password,
                            &o->role,         &o->charset,
                            &o->auth_plugins, &o->wire_crypt_plugins,
                            &o->os_user,      &o->client_host,
                            &o->process_name};
    return f[i];
}

static int copy_conn_options(ffb_pool *pool, const ffb_conn_options *src) {
    pool->copts = *src;
    /* Every connection of the pool shares one format memory: the
       options' one, or one of its own. */
    if (src->formats)
        pool->copts.formats = ffb_formats_ref(src->formats);
    else if (ffb_formats_new(0, &pool->copts.formats) < 0)
        pool->copts.formats = NULL; /* out of memory: not shared */
    for (int i = 0; i < NSTR; i++) {
        const char **f = str_field(&pool->copts, i);
        if (!*f)
            continue;
        pool->strs[i] = ffb__strdup(pool->alloc, *f);
        if (!pool->strs[i])
            return FFB_E_NOMEM;
        *f = pool->strs[i];
    }
    return 0;
}

static int64_t ms_or(int v, int64_t dflt) {
    if (v == 0)
        return dflt;
    return v < 0 ? 0 : v; /* the core's 0 is "off" */
}

/* Check the options and fill the core's; FFB_E_INVAL with the pool's error
   set. */
static int check_options(ffb_pool *pool, const ffb_pool_options *o,
                         ffb__poolcore_options *co) {
    if (o->version != FFB_POOL_OPTIONS_VERSION) {
        set_error(pool, FFB_E_INVAL, NULL,
                  "ffb_pool_options.version must be "
                  "FFB_POOL_OPTIONS_VERSION");
        return FFB_E_INVAL;
    }
    if (!o->conn || o->conn->version != FFB_CONN_OPTIONS_VERSION) {
        set_error(pool, FFB_E_INVAL, NULL,
                  "ffb_pool_options.conn must point to connection options "
                  "of version FFB_CONN_OPTIONS_VERSION");
        return FFB_E_INVAL;
    }
    if (o->conn->io != FFB_IO_BLOCKING) {
        set_error(pool, FFB_E_INVAL, NULL,
                  "a pool needs blocking connections (io = "
                  "FFB_IO_BLOCKING)");
        return FFB_E_INVAL;
    }
    memset(co, 0, sizeof *co);
    co->max_size = o->max_size ? o->max_size : DEFAULT_MAX;
    co->min_size = o->min_size;
    if (co->max_size > FFB__POOL_MAX_SIZE || co->min_size > co->max_size) {
        set_error(pool, FFB_E_INVAL, NULL,
                  "pool sizes: need min_size (%zu) <= max_size (%zu) <= %d",
                  co->min_size, co->max_size, FFB__POOL_MAX_SIZE);
        return FFB_E_INVAL;
    }
    co->idle_timeout_ms = ms_or(o->idle_timeout_ms, DEFAULT_IDLE_MS);
    co->validate_after_ms = ms_or(o->validate_after_ms, DEFAULT_VALIDATE_MS);
    co->max_lifetime_ms = o->max_lifetime_ms > 0 ? o->max_lifetime_ms : 0;
    pool->acquire_timeout_ms =
        o->acquire_timeout_ms == 0 ? DEFAULT_ACQUIRE_MS : o->acquire_timeout_ms;
    if (pool->acquire_timeout_ms < 0)
        pool->acquire_timeout_ms = -1;
    return 0;
}

/* ---- the actions ------------------------------------------------------- */

/* Open a connection (mutex released). NULL when it failed, with its code
   in *rc_out and the failed connection (if one was made) in *failed, for
   the caller to record its error under the mutex and free it. */
static ffb_conn *connect_one(ffb_pool *pool, int *rc_out, ffb_conn **failed) {
    ffb_conn *conn = NULL;
    int rc = ffb_conn_new(&pool->copts, &conn);
    if (rc == 0)
        rc = ffb_conn_connect(conn);
    *rc_out = rc;
    *failed = NULL;
    if (rc == 0)
        return conn;
    *failed = conn;
    return NULL;
}

static void unlock(ffb_pool *pool) { pthread_mutex_unlock(&pool->mu); }
static void lock(ffb_pool *pool) { pthread_mutex_lock(&pool->mu); }

/* Run what the core decided until nothing is left (mutex held; released
   around I/O). Returns the code of the last failed connect made here, or
   0. */
static int work(ffb_pool *pool) {
    int last_rc = 0;
    ffb__pool_action a;
    while (ffb__poolcore_next_action(&pool->core, ffb_now_ms(), &a)) {
        ffb_conn *conn = a.conn;
        switch (a.kind) {
        case FFB__PA_FAIL:
            /* Told here, under the lock: the pool's error may be another
               failure's by the time the waiter reads it. */
            ((pool_waiter *)a.waiter->data)->rc =
                pool->create_rc < 0 ? pool->create_rc : FFB_E_IO;
            pthread_cond_signal(&((pool_waiter *)a.waiter->data)->cv);
            break;
        case FFB__PA_HAND:
        case FFB__PA_TIMEOUT:
            pthread_cond_signal(&((pool_waiter *)a.waiter->data)->cv);
            break;
        case FFB__PA_CREATE: {
            int rc;
            ffb_conn *failed;
            unlock(pool);
            conn = connect_one(pool, &rc, &failed);
            lock(pool);
            if (!conn) {
                if (failed)
                    set_error(pool, rc, ffb_conn_error(failed),
                              "connecting a pool connection failed");
                else
                    set_error(pool, rc, NULL,
                              "connecting a pool connection failed: %s",
                              ffb_strerror(rc));
                last_rc = rc;
                pool->create_rc = rc;
            }
            ffb__poolcore_created(&pool->core, conn, ffb_now_ms());
            if (failed) {
                unlock(pool);
                ffb_conn_free(failed);
                lock(pool);
            }
            break;
        }
        case FFB__PA_VALIDATE: {
            unlock(pool);
            int ok = ffb_conn_ping(conn) == 0;
            lock(pool);
            ffb__poolcore_validated(&pool->core, conn, ok, ffb_now_ms());
            break;
        }
        case FFB__PA_RESET: {
            unlock(pool);
            int ok = ffb_conn_reset(conn) == 0 && !ffb_conn_is_broken(conn);
            lock(pool);
            ffb__poolcore_reset_done(&pool->core, conn, ok, ffb_now_ms());
            break;
        }
        case FFB__PA_CLOSE:
            unlock(pool);
            ffb_conn_free(conn);
            lock(pool);
            break;
        default:
            break;
        }
    }
    /* The core's next deadline may have moved earlier (a failed connect
       starts its backoff; a release may make room): the first waiter
       sleeps on the old one. Wake it to wait again, for the new one - it
       then ticks the core and makes the retry itself. */
    if (pool->core.wait_head)
        pthread_cond_signal(&((pool_waiter *)pool->core.wait_head->data)->cv);
    return last_rc;
}

/* ---- public ------------------------------------------------------------ */

int ffb_pool_new(const ffb_pool_options *opts, ffb_pool **out) {
    if (!out)
        return FFB_E_INVAL;
    *out = NULL;
    /* The pool's memory comes from the connections' allocator. */
    const ffb_allocator *alloc =
        opts && opts->version == FFB_POOL_OPTIONS_VERSION && opts->conn
            ? opts->conn->allocator
            : NULL;
    ffb_pool *pool = ffb__malloc(alloc, sizeof *pool);
    if (!pool)
        return FFB_E_NOMEM;
    memset(pool, 0, sizeof *pool);
    pool->alloc = alloc;
    if (pthread_mutex_init(&pool->mu, NULL) != 0) {
        ffb__free(alloc, pool);
        return FFB_E_NOMEM;
    }
    ffb__poolcore_options co = {.max_size = 1};
    int rc = FFB_E_INVAL;
    if (!opts)
        set_error(pool, FFB_E_INVAL, NULL, "ffb_pool_new: options are NULL");
    else
        rc = check_options(pool, opts, &co);
    if (rc == 0) {
        rc = copy_conn_options(pool, opts->conn);
        if (rc < 0)
            goto nomem;
        /* The connection options are checked once, without I/O. */
        ffb_conn *probe = NULL;
        rc = ffb_conn_new(&pool->copts, &probe);
        if (rc == FFB_E_NOMEM)
            goto nomem;
        if (rc < 0)
            set_error(pool, rc, ffb_conn_error(probe),
                      "the pool's connection options were refused");
        ffb_conn_free(probe);
    }
    if (rc < 0) {
        pool->bad = rc;
        co.max_size = 1;
        co.min_size = 0;
    }
    pool->slots = ffb__malloc(pool->alloc, co.max_size * sizeof *pool->slots);
    if (!pool->slots)
        goto nomem;
    if (ffb__poolcore_init(&pool->core, &co, pool->slots, co.max_size) < 0)
        goto nomem; /* checked above: cannot happen */
    *out = pool;
    if (rc < 0)
        return rc;
    /* min_size connections now, in this thread. */
    lock(pool);
    ffb__poolcore_tick(&pool->core, ffb_now_ms());
    int crc = work(pool);
    unlock(pool);
    return crc;
nomem:
    *out = NULL;
    ffb_pool_free(pool);
    return FFB_E_NOMEM;
}

static struct timespec abs_time(int64_t ms) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    return ts;
}

int ffb_pool_acquire(ffb_pool *pool, int timeout_ms, ffb_conn **out) {
    if (!pool || !out || timeout_ms < -1)
        return FFB_E_INVAL;
    *out = NULL;
    lock(pool);
    if (pool->bad) {
        int rc = pool->bad;
        unlock(pool);
        return rc;
    }
    int64_t now = ffb_now_ms();
    int t = timeout_ms == -1 ? pool->acquire_timeout_ms : timeout_ms;
    int64_t deadline = t < 0 ? FFB__POOL_NEVER : now + t;
    pool_waiter pw;
    memset(&pw, 0, sizeof pw);
    pw.w.data = &pw;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int crc = pthread_cond_init(&pw.cv, &ca);
    pthread_condattr_destroy(&ca);
    if (crc != 0) {
        set_error(pool, FFB_E_NOMEM, NULL, "no condition variable");
        unlock(pool);
        return FFB_E_NOMEM;
    }
    int rc = ffb__poolcore_acquire(&pool->core, now, deadline, &pw.w);
    int connect_rc = 0;
    if (rc == 0) {
        connect_rc = work(pool);
        while (pw.w.state != FFB__PW_DONE) {
            if (pw.w.state == FFB__PW_READY) {
                ffb__poolcore_withdraw(&pool->core, &pw.w);
                break;
            }
            int64_t next = ffb__poolcore_next_deadline(&pool->core);
            if (next == FFB__POOL_NEVER) {
                pthread_cond_wait(&pw.cv, &pool->mu);
            } else {
                struct timespec ts = abs_time(next);
                pthread_cond_timedwait(&pw.cv, &pool->mu, &ts);
            }
            ffb__poolcore_tick(&pool->core, ffb_now_ms());
            int r = work(pool);
            if (r < 0)
                connect_rc = r;
        }
        switch (pw.w.result) {
        case FFB__PA_HAND:
            rc = 1;
            break;
        case FFB__PA_TIMEOUT:
            rc = FFB_E_TIMEOUT;
            break;
        default: /* FAIL */
            if (pw.w.reason == FFB__PC_SHUTDOWN) {
                set_error(pool, FFB_E_STATE, NULL, "the pool is closing");
                rc = FFB_E_STATE;
            } else {
                /* The code of the connect that failed this waiter (made
                   by this thread or another). */
                rc = pw.rc < 0 ? pw.rc : connect_rc < 0 ? connect_rc : FFB_E_IO;
            }
            break;
        }
    } else {
        work(pool);
    }
    if (rc == FFB_E_TIMEOUT) {
        ffb__pool_counts c;
        ffb__poolcore_counts(&pool->core, &c);
        set_error(pool, FFB_E_TIMEOUT, NULL,
                  "no pool connection within %d ms (%zu in use of at most "
                  "%zu, %zu waiting)",
                  t, c.in_use, pool->core.opt.max_size, c.waiting);
    } else if (rc == FFB_E_STATE && pool->core.shut) {
        set_error(pool, FFB_E_STATE, NULL, "the pool is closing");
    }
    unlock(pool);
    pthread_cond_destroy(&pw.cv);
    if (rc == 1) {
        *out = pw.w.conn;
        return 0;
    }
    return rc;
}

/* A connection that must not be reused: broken, detached, or its last
   error is a connection exception (SQLSTATE class 08: the attachment was
   killed or shut down, the network failed) - the server will refuse every
   request on it. */
static int unusable(const ffb_conn *conn) {
    if (ffb_conn_is_broken(conn) || !ffb_conn_is_attached(conn))
        return 1;
    const char *state = ffb_error_sqlstate(ffb_conn_error(conn));
    return state[0] == '0' && state[1] == '8';
}

static int give_back(ffb_pool *pool, ffb_conn *conn, int broken) {
    if (!pool || !conn)
        return FFB_E_INVAL;
    lock(pool);
    if (!ffb__poolcore_lent(&pool->core, conn)) {
        /* Not looked at: it may be freed, or another thread's. */
        set_error(pool, FFB_E_INVAL, NULL,
                  "the connection given back is not one handed out by this "
                  "pool");
        unlock(pool);
        return FFB_E_INVAL;
    }
    unlock(pool);
    /* The caller owns it until the release below: read it unlocked. */
    if (!broken)
        broken = unusable(conn);
    lock(pool);
    int rc = ffb__poolcore_release(&pool->core, conn, ffb_now_ms(), broken);
    if (rc < 0)
        set_error(pool, FFB_E_INVAL, NULL,
                  "the connection given back is not one handed out by this "
                  "pool");
    else
        work(pool);
    unlock(pool);
    return rc < 0 ? FFB_E_INVAL : 0;
}

int ffb_pool_release(ffb_pool *pool, ffb_conn *conn) {
    return give_back(pool, conn, 0);
}

int ffb_pool_discard(ffb_pool *pool, ffb_conn *conn) {
    return give_back(pool, conn, 1);
}

int ffb_pool_maintain(ffb_pool *pool) {
    if (!pool)
        return FFB_E_INVAL;
    lock(pool);
    if (!pool->bad) {
        ffb__poolcore_tick(&pool->core, ffb_now_ms());
        work(pool);
    }
    unlock(pool);
    return 0;
}

int ffb_pool_stats(const ffb_pool *pool, ffb_pool_counters *out,
                   size_t out_size) {
    if (!pool || !out)
        return FFB_E_INVAL;
    ffb_pool *p = (ffb_pool *)pool; /* the mutex is not part of the state */
    ffb_pool_counters s;
    lock(p);
    ffb__poolcore_counters(&p->core, &s);
    unlock(p);
    return ffb__give(out, out_size, &s, sizeof s);
}

int ffb_pool_error(const ffb_pool *pool, ffb_pool_error_info *out,
                   size_t out_size) {
    if (!pool || !out)
        return FFB_E_INVAL;
    ffb_pool *p = (ffb_pool *)pool;
    lock(p);
    ffb_pool_error_info e = p->last;
    unlock(p);
    return ffb__give(out, out_size, &e, sizeof e);
}

void ffb_pool_free(ffb_pool *pool) {
    if (!pool)
        return;
    if (pool->slots) {
        lock(pool);
        ffb__poolcore_shutdown(&pool->core);
        work(pool);
        /* Connections still handed out go too. */
        for (size_t i = 0; i < pool->core.opt.max_size; i++)
            if (pool->slots[i].conn) {
                ffb_conn_free(pool->slots[i].conn);
                pool->slots[i].conn = NULL;
            }
        unlock(pool);
        ffb__free(pool->alloc, pool->slots);
    }
    for (int i = 0; i < NSTR; i++)
        if (pool->strs[i]) {
            OPENSSL_cleanse(pool->strs[i], strlen(pool->strs[i]));
            ffb__free(pool->alloc, pool->strs[i]);
        }
    ffb_formats_unref(pool->copts.formats);
    pthread_mutex_destroy(&pool->mu);
    ffb__free(pool->alloc, pool);
}
