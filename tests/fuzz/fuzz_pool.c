/*
 * The pool core (lib/poolcore.c) driven by arbitrary input sequences. Each
 * input byte picks an operation (acquire, release, answer an action, time
 * passes, tick, withdraw, shutdown) and the next bytes its arguments. A
 * model of what the driver knows checks after every step:
 * - a connection is never handed out while it is in use, and never after
 *   it was closed; only connections the driver created are named;
 * - waiters are served in FIFO order: no older waiter is still waiting
 *   when a younger one gets a connection, and none gets one past its
 *   deadline;
 * - a timeout comes only at or after the waiter's deadline, and every
 *   waiter gets exactly one outcome;
 * - the counts match the model (in use, waiting, total <= max_size,
 *   created);
 * - after a tick nothing is due any more (next_deadline > now), so a
 *   driver that sleeps until the next deadline cannot spin.
 */
#include <stdint.h>
#include <string.h>

#include "include/fastfb.h"
#include "lib/poolcore.h"
#include "tests/fuzz/fuzz.h"

#define MAXW 64
#define MAXC 512

enum { C_NONE = 0, C_OWNED, C_LENT, C_VALIDATE, C_RESET, C_CLOSED };

typedef struct model {
    ffb__poolcore core;
    ffb__pool_slot slots[8];
    ffb__pool_waiter w[MAXW];
    uint32_t seq[MAXW]; /* arrival order of the waiter in w[i] */
    int64_t deadline[MAXW];
    int wstate[MAXW]; /* 0 free, 1 waiting */
    uint32_t next_seq;
    int cstate[MAXC]; /* per fake connection id */
    int ncreated;
    int creates_owed; /* CREATE actions taken, not answered */
    int64_t now;
    size_t max;
    uint64_t created_ok;
} model;

static model M;
static uint8_t conn_mem[MAXC];

static void *conn_of(int id) { return &conn_mem[id]; }
static int id_of(const void *p) {
    FUZZ_CHECK((const uint8_t *)p >= conn_mem &&
               (const uint8_t *)p < conn_mem + MAXC);
    return (int)((const uint8_t *)p - conn_mem);
}

static int widx(const ffb__pool_waiter *w) {
    FUZZ_CHECK(w >= M.w && w < M.w + MAXW);
    return (int)(w - M.w);
}

static void handed(int wi, const void *conn) {
    int id = id_of(conn);
    FUZZ_CHECK(M.cstate[id] == C_OWNED); /* not lent, not closed */
    M.cstate[id] = C_LENT;
    /* FIFO: nobody older still waits. */
    for (int k = 0; k < MAXW; k++)
        if (k != wi && M.wstate[k] == 1)
            FUZZ_CHECK(M.seq[k] > M.seq[wi]);
    FUZZ_CHECK(M.deadline[wi] > M.now);
}

static void drain(void) {
    ffb__pool_action a;
    while (ffb__poolcore_next_action(&M.core, M.now, &a)) {
        switch (a.kind) {
        case FFB__PA_HAND: {
            int wi = widx(a.waiter);
            FUZZ_CHECK(M.wstate[wi] == 1);
            FUZZ_CHECK(a.waiter->conn == a.conn);
            handed(wi, a.conn);
            M.wstate[wi] = 0;
            break;
        }
        case FFB__PA_TIMEOUT: {
            int wi = widx(a.waiter);
            FUZZ_CHECK(M.wstate[wi] == 1);
            FUZZ_CHECK(M.deadline[wi] <= M.now);
            M.wstate[wi] = 0;
            break;
        }
        case FFB__PA_FAIL: {
            int wi = widx(a.waiter);
            FUZZ_CHECK(M.wstate[wi] == 1);
            M.wstate[wi] = 0;
            break;
        }
        case FFB__PA_CREATE:
            M.creates_owed++;
            break;
        case FFB__PA_VALIDATE: {
            int id = id_of(a.conn);
            FUZZ_CHECK(M.cstate[id] == C_OWNED);
            M.cstate[id] = C_VALIDATE;
            break;
        }
        case FFB__PA_RESET: {
            int id = id_of(a.conn);
            FUZZ_CHECK(M.cstate[id] == C_RESET);
            break;
        }
        case FFB__PA_CLOSE: {
            int id = id_of(a.conn);
            FUZZ_CHECK(M.cstate[id] == C_OWNED || M.cstate[id] == C_RESET ||
                       M.cstate[id] == C_VALIDATE);
            M.cstate[id] = C_CLOSED;
            break;
        }
        default:
            FUZZ_CHECK(0);
        }
    }
}

static void check_counts(void) {
    ffb__pool_counts c;
    ffb__poolcore_counts(&M.core, &c);
    size_t lent = 0, waiting = 0, alive = 0;
    for (int i = 0; i < M.ncreated; i++) {
        if (M.cstate[i] == C_LENT)
            lent++;
        if (M.cstate[i] != C_CLOSED && M.cstate[i] != C_NONE)
            alive++;
    }
    for (int k = 0; k < MAXW; k++)
        waiting += M.wstate[k] == 1;
    FUZZ_CHECK(c.in_use == lent);
    FUZZ_CHECK(c.waiting == waiting);
    FUZZ_CHECK(c.total <= M.max);
    FUZZ_CHECK(alive + (size_t)M.creates_owed <= M.max);
    FUZZ_CHECK(c.idle + c.in_use <= c.total);
    FUZZ_CHECK(c.created == M.created_ok);
    int64_t next = ffb__poolcore_next_deadline(&M.core);
    for (int k = 0; k < MAXW; k++)
        if (M.wstate[k] == 1)
            FUZZ_CHECK(next <= M.deadline[k]);
}

/* The i-th connection (mod count) in state st, or -1. */
static int pick_conn(int st, unsigned i) {
    int n = 0;
    for (int k = 0; k < M.ncreated; k++)
        n += M.cstate[k] == st;
    if (n == 0)
        return -1;
    int want = (int)(i % (unsigned)n);
    for (int k = 0; k < M.ncreated; k++)
        if (M.cstate[k] == st && want-- == 0)
            return k;
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    memset(&M, 0, sizeof M);
    if (size < 4)
        return 0;
    ffb__poolcore_options o = {.max_size = 1 + data[0] % 8,
                               .min_size = data[1] % 4,
                               .idle_timeout_ms = (data[2] & 3) * 100,
                               .validate_after_ms = ((data[2] >> 2) & 3) * 70,
                               .max_lifetime_ms = ((data[2] >> 4) & 3) * 500,
                               .backoff_min_ms = 10,
                               .backoff_max_ms = 80};
    if (o.min_size > o.max_size)
        o.min_size = o.max_size;
    M.max = o.max_size;
    FUZZ_CHECK(ffb__poolcore_init(&M.core, &o, M.slots, 8) == 0);
    M.now = data[3];
    size_t p = 4;
    while (p < size) {
        uint8_t op = data[p++];
        uint8_t arg = p < size ? data[p++] : 0;
        switch (op % 10) {
        case 0: /* time passes */
            M.now += arg;
            break;
        case 1: { /* acquire */
            int wi = -1;
            for (int k = 0; k < MAXW; k++)
                if (M.wstate[k] == 0) {
                    wi = k;
                    break;
                }
            if (wi < 0)
                break;
            int64_t dl = arg == 255 ? FFB__POOL_NEVER : M.now + arg % 128;
            memset(&M.w[wi], 0, sizeof M.w[wi]);
            M.seq[wi] = M.next_seq++;
            M.deadline[wi] = dl;
            int rc = ffb__poolcore_acquire(&M.core, M.now, dl, &M.w[wi]);
            if (rc == 1) {
                for (int k = 0; k < MAXW; k++)
                    FUZZ_CHECK(M.wstate[k] == 0);
                M.deadline[wi] = FFB__POOL_NEVER;
                handed(wi, M.w[wi].conn);
            } else if (rc == 0) {
                M.wstate[wi] = 1;
            } else if (rc == FFB_E_TIMEOUT) {
                FUZZ_CHECK(dl <= M.now);
            } else {
                FUZZ_CHECK(rc == FFB_E_STATE && M.core.shut);
            }
            break;
        }
        case 2: { /* release */
            int id = pick_conn(C_LENT, arg >> 1);
            if (id < 0)
                break;
            /* Broken: a CLOSE must follow; healthy: a RESET (or a CLOSE
               when past its lifetime or shut down). */
            M.cstate[id] = (arg & 1) ? C_OWNED : C_RESET;
            FUZZ_CHECK(ffb__poolcore_release(&M.core, conn_of(id), M.now,
                                             arg & 1) == 0);
            break;
        }
        case 3: /* answer a CREATE */
            if (M.creates_owed == 0) {
                FUZZ_CHECK(ffb__poolcore_created(&M.core, NULL, M.now) ==
                           FFB_E_STATE);
                break;
            }
            M.creates_owed--;
            if ((arg & 3) == 0 || M.ncreated >= MAXC) {
                FUZZ_CHECK(ffb__poolcore_created(&M.core, NULL, M.now) == 0);
            } else {
                int id = M.ncreated++;
                M.cstate[id] = C_OWNED;
                M.created_ok++;
                FUZZ_CHECK(ffb__poolcore_created(&M.core, conn_of(id), M.now) ==
                           0);
            }
            break;
        case 4: { /* answer a VALIDATE */
            int id = pick_conn(C_VALIDATE, arg >> 1);
            if (id < 0)
                break;
            M.cstate[id] = C_OWNED;
            FUZZ_CHECK(ffb__poolcore_validated(&M.core, conn_of(id), arg & 1,
                                               M.now) == 0);
            break;
        }
        case 5: { /* answer a RESET */
            int id = pick_conn(C_RESET, arg >> 1);
            if (id < 0)
                break;
            M.cstate[id] = C_OWNED;
            FUZZ_CHECK(ffb__poolcore_reset_done(&M.core, conn_of(id), arg & 1,
                                                M.now) == 0);
            break;
        }
        case 6: /* tick at the next deadline, or now */
            if (arg & 1) {
                int64_t d = ffb__poolcore_next_deadline(&M.core);
                if (d != FFB__POOL_NEVER && d > M.now && d - M.now < 100000)
                    M.now = d;
            }
            ffb__poolcore_tick(&M.core, M.now);
            /* Nothing is left due: a driver sleeping until the next
               deadline never spins. */
            drain();
            FUZZ_CHECK(ffb__poolcore_next_deadline(&M.core) > M.now);
            break;
        case 7: { /* withdraw */
            int wi = arg % MAXW;
            if (M.wstate[wi] != 1)
                break;
            int st = ffb__poolcore_withdraw(&M.core, &M.w[wi]);
            FUZZ_CHECK(st == FFB__PW_WAITING || st == FFB__PW_READY);
            if (st == FFB__PW_READY && M.w[wi].result == FFB__PA_HAND)
                handed(wi, M.w[wi].conn);
            M.wstate[wi] = 0;
            break;
        }
        case 8: /* bad inputs must be refused without harm */
            FUZZ_CHECK(ffb__poolcore_release(&M.core, conn_of(MAXC - 1), M.now,
                                             0) == FFB_E_INVAL);
            FUZZ_CHECK(ffb__poolcore_validated(&M.core, conn_of(MAXC - 1), 1,
                                               M.now) == FFB_E_INVAL);
            break;
        case 9:
            if (arg == 0)
                ffb__poolcore_shutdown(&M.core);
            break;
        }
        drain();
        check_counts();
    }
    /* Wind down: answer everything owed; the core must drain. */
    ffb__poolcore_shutdown(&M.core);
    for (int round = 0; round < 4 * MAXC; round++) {
        drain();
        int id;
        if ((id = pick_conn(C_LENT, 0)) >= 0) {
            M.cstate[id] = C_OWNED;
            FUZZ_CHECK(ffb__poolcore_release(&M.core, conn_of(id), M.now, 0) ==
                       0);
        } else if ((id = pick_conn(C_VALIDATE, 0)) >= 0) {
            M.cstate[id] = C_OWNED;
            FUZZ_CHECK(
                ffb__poolcore_validated(&M.core, conn_of(id), 1, M.now) == 0);
        } else if ((id = pick_conn(C_RESET, 0)) >= 0) {
            M.cstate[id] = C_OWNED;
            FUZZ_CHECK(
                ffb__poolcore_reset_done(&M.core, conn_of(id), 1, M.now) == 0);
        } else if (M.creates_owed > 0) {
            M.creates_owed--;
            FUZZ_CHECK(ffb__poolcore_created(&M.core, NULL, M.now) == 0);
        } else {
            break;
        }
    }
    drain();
    check_counts();
    FUZZ_CHECK(ffb__poolcore_is_drained(&M.core));
    for (int k = 0; k < MAXW; k++)
        FUZZ_CHECK(M.wstate[k] == 0);
    for (int i = 0; i < M.ncreated; i++)
        FUZZ_CHECK(M.cstate[i] == C_CLOSED);
    return 0;
}
