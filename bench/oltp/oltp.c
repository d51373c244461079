/*
 * ffb-oltp: sysbench's OLTP workloads (oltp_common.lua and friends) run on
 * libfastfb, with sysbench's option names and report layout
 * (docs: bench/oltp/README.md, spec: shared/docs/specs/oltp.md §B3).
 * Driver: libfastfb only so far (the fbclient driver is not written yet).
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <fastfb.h>

#include "oltp.h"

/* ---- options ----------------------------------------------------------- */

static oltp_opts O = {
    .tables = 1, .table_size = 10000, .threads = 1, .time = 10,
    .range_size = 100, .point_selects = 10, .simple_ranges = 1,
    .sum_ranges = 1, .order_ranges = 1, .distinct_ranges = 1,
    .index_updates = 1, .non_index_updates = 1, .delete_inserts = 1,
    .range_selects = 1, .auto_inc = 1, .create_secondary = 1,
    .random_points = 10, .number_of_ranges = 10, .delta = 5,
    .percentile = 95, .rand_type = "uniform", .user = "SYSDBA",
    .password = "masterkey", .driver = "libfastfb", .mode = "sysbench",
};

static int parse_bool(const char *v) {
    return !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "1") ||
           !strcmp(v, "yes");
}

static int set_opt(const char *name, const char *v) {
    char n[64];
    size_t i;
    for (i = 0; name[i] && i < sizeof(n) - 1; i++)
        n[i] = name[i] == '_' ? '-' : name[i];
    n[i] = 0;
#define I(key, field)                                                          \
    if (!strcmp(n, key)) {                                                     \
        O.field = atoll(v);                                                    \
        return 0;                                                              \
    }
#define B(key, field)                                                          \
    if (!strcmp(n, key)) {                                                     \
        O.field = parse_bool(v);                                               \
        return 0;                                                              \
    }
#define S(key, field)                                                          \
    if (!strcmp(n, key)) {                                                     \
        O.field = v;                                                           \
        return 0;                                                              \
    }
    I("tables", tables) I("table-size", table_size) I("threads", threads)
    I("time", time) I("events", events) I("report-interval", report_interval)
    I("rand-seed", rand_seed) I("range-size", range_size)
    I("point-selects", point_selects) I("simple-ranges", simple_ranges)
    I("sum-ranges", sum_ranges) I("order-ranges", order_ranges)
    I("distinct-ranges", distinct_ranges) I("index-updates", index_updates)
    I("non-index-updates", non_index_updates)
    I("delete-inserts", delete_inserts) I("random-points", random_points)
    I("number-of-ranges", number_of_ranges) I("delta", delta)
    I("percentile", percentile)
    B("range-selects", range_selects) B("auto-inc", auto_inc)
    B("skip-trx", skip_trx) B("create-secondary", create_secondary)
    S("rand-type", rand_type) S("dsn", dsn) S("fb-db", dsn) S("user", user)
    S("fb-user", user) S("password", password) S("fb-password", password)
    S("driver", driver) S("mode", mode) S("out", out) S("db-ps-mode", ps_mode)
#undef I
#undef B
#undef S
    fprintf(stderr, "ffb-oltp: unknown option --%s\n", name);
    return -1;
}

/* ---- random numbers (sysbench's sb_rand.c formulas) -------------------- */

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t oltp_rand_next(oltp_rng *r) {
    uint64_t s0 = r->s[0], s1 = r->s[1], res = s0 + s1;
    s1 ^= s0;
    r->s[0] = rotl(s0, 24) ^ s1 ^ (s1 << 16);
    r->s[1] = rotl(s1, 37);
    return res;
}

void oltp_rand_seed(oltp_rng *r, uint64_t seed) {
    /* splitmix64 spreads the seed over both words */
    for (int i = 0; i < 2; i++) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        r->s[i] = z ^ (z >> 31);
    }
}

static double udouble(oltp_rng *r) {
    return (double)(oltp_rand_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

uint32_t oltp_rand_uniform(oltp_rng *r, uint32_t a, uint32_t b) {
    return a + (uint32_t)(udouble(r) * (double)(b - a + 1));
}

/* The mean of 12 uniforms over [a, b] (rand-spec-iter 12). */
uint32_t oltp_rand_gaussian(oltp_rng *r, uint32_t a, uint32_t b) {
    uint64_t sum = 0;
    for (int i = 0; i < 12; i++)
        sum += oltp_rand_uniform(r, a, b) - a;
    return a + (uint32_t)(sum / 12);
}

/* 1.0.20's special: 75 % of values uniform in the central 1 %, the rest
   gaussian over the whole range. */
uint32_t oltp_rand_special(oltp_rng *r, uint32_t a, uint32_t b) {
    uint64_t d = (uint64_t)b - a + 1;
    uint64_t spec = d / 100 ? d / 100 : 1;
    if (udouble(r) * 100.0 < 75.0) {
        uint64_t lo = a + (d - spec) / 2;
        return (uint32_t)(lo + (uint64_t)(udouble(r) * (double)spec));
    }
    return oltp_rand_gaussian(r, a, b);
}

/* Pareto with h = 0.2: 80 % of values in the first 20 % of the range. */
uint32_t oltp_rand_pareto(oltp_rng *r, uint32_t a, uint32_t b) {
    double h = 0.2, p = log(h) / log(1.0 - h);
    return a + (uint32_t)((double)(b - a + 1) * pow(udouble(r), p));
}

/* Zipfian with exponent 0.8 (Gray et al.'s quick method); the zeta sums
   are cached per thread for one n. */
uint32_t oltp_rand_zipfian(oltp_rng *r, uint32_t a, uint32_t b) {
    const double th = 0.8;
    uint64_t n = (uint64_t)b - a + 1;
    if (r->zipf_n != n) {
        double z = 0;
        for (uint64_t i = 1; i <= n; i++)
            z += 1.0 / pow((double)i, th);
        r->zipf_n = n;
        r->zetan = z;
        r->zeta2 = 1.0 + 1.0 / pow(2.0, th);
    }
    double alpha = 1.0 / (1.0 - th);
    double eta = (1.0 - pow(2.0 / (double)n, 1.0 - th)) /
                 (1.0 - r->zeta2 / r->zetan);
    double u = udouble(r), uz = u * r->zetan;
    if (uz < 1.0)
        return a;
    if (uz < 1.0 + pow(0.5, th))
        return n > 1 ? a + 1 : a;
    uint64_t v = (uint64_t)((double)n * pow(eta * u - eta + 1.0, alpha));
    return a + (uint32_t)(v >= n ? n - 1 : v);
}

static int rand_kind;

static uint32_t rnd(oltp_rng *r, uint32_t a, uint32_t b) {
    switch (rand_kind) {
    case 1: return oltp_rand_gaussian(r, a, b);
    case 2: return oltp_rand_special(r, a, b);
    case 3: return oltp_rand_pareto(r, a, b);
    case 4: return oltp_rand_zipfian(r, a, b);
    default: return oltp_rand_uniform(r, a, b);
    }
}

/* sb_rand_str: '#' becomes a digit, '@' a letter. */
void oltp_rand_str(oltp_rng *r, const char *tmpl, char *out) {
    for (; *tmpl; tmpl++, out++)
        *out = *tmpl == '#'   ? (char)('0' + oltp_rand_uniform(r, 0, 9))
               : *tmpl == '@' ? (char)('a' + oltp_rand_uniform(r, 0, 25))
                              : *tmpl;
    *out = 0;
}

static const char C_TMPL[] =
    "###########-###########-###########-###########-###########-"
    "###########-###########-###########-###########-###########";
static const char PAD_TMPL[] =
    "###########-###########-###########-###########-###########";

/* ---- the report (sysbench master's layout) ----------------------------- */

/* sysbench's latency histogram: 1024 log buckets, 0.001 .. 100000 ms. */
#define HB 1024
static const double H_MIN = 0.001, H_MAX = 100000.0;

static int hbucket(double ms) {
    if (ms <= H_MIN)
        return 0;
    double mult = (HB - 1) / (log(H_MAX) - log(H_MIN));
    int i = (int)floor((log(ms) - log(H_MIN)) * mult + 0.5);
    return i < 0 ? 0 : i >= HB ? HB - 1 : i;
}

static double hvalue(int i) {
    double mult = (HB - 1) / (log(H_MAX) - log(H_MIN));
    return exp(i / mult + log(H_MIN));
}

double oltp_percentile(const uint64_t *hist, double pct) {
    uint64_t total = 0, cum = 0;
    for (int i = 0; i < HB; i++)
        total += hist[i];
    if (!total)
        return 0;
    uint64_t want = (uint64_t)floor((double)total * pct / 100.0 + 0.5);
    if (want < 1)
        want = 1;
    for (int i = 0; i < HB; i++) {
        cum += hist[i];
        if (cum >= want)
            return hvalue(i);
    }
    return hvalue(HB - 1);
}

void oltp_report(FILE *f, const oltp_report_in *r) {
    double t = r->elapsed;
    uint64_t q = r->reads + r->writes + r->others;
    fprintf(f, "SQL statistics:\n    queries performed:\n");
    fprintf(f, "%-41s%llu\n", "        read:", (unsigned long long)r->reads);
    fprintf(f, "%-41s%llu\n", "        write:", (unsigned long long)r->writes);
    fprintf(f, "%-41s%llu\n", "        other:", (unsigned long long)r->others);
    fprintf(f, "%-41s%llu\n", "        total:", (unsigned long long)q);
    fprintf(f, "%-41s%-6llu (%.2f per sec.)\n", "    transactions:",
            (unsigned long long)r->events, r->events / t);
    fprintf(f, "%-41s%-6llu (%.2f per sec.)\n", "    queries:",
            (unsigned long long)q, q / t);
    fprintf(f, "%-41s%-6llu (%.2f per sec.)\n", "    ignored errors:",
            (unsigned long long)r->errors, r->errors / t);
    fprintf(f, "%-41s%-6llu (%.2f per sec.)\n", "    reconnects:",
            (unsigned long long)r->reconnects, r->reconnects / t);
    fprintf(f, "\nThroughput:\n");
    fprintf(f, "%-41s%.4f\n", "    events/s (eps):", r->events / t);
    fprintf(f, "%-41s%.4fs\n", "    time elapsed:", t);
    fprintf(f, "%-41s%llu\n", "    total number of events:",
            (unsigned long long)r->events);
    fprintf(f, "\nLatency (ms):\n");
    char pl[64];
    snprintf(pl, sizeof(pl), "         %dth percentile:", r->percentile);
    fprintf(f, "%-40s%13.2f\n", "         min:", r->lat_min);
    fprintf(f, "%-40s%13.2f\n", "         avg:",
            r->events ? r->lat_sum / r->events : 0.0);
    fprintf(f, "%-40s%13.2f\n", "         max:", r->lat_max);
    fprintf(f, "%-40s%13.2f\n", pl, r->lat_pct);
    fprintf(f, "%-40s%13.2f\n", "         sum:", r->lat_sum);
    fprintf(f, "\nThreads fairness:\n");
    fprintf(f, "%-35s%.4f/%3.2f\n", "    events (avg/stddev):", r->ev_avg,
            r->ev_sd);
    fprintf(f, "%-35s%.4f/%3.2f\n", "    execution time (avg/stddev):",
            r->et_avg, r->et_sd);
    fprintf(f, "\n");
    if (r->rt_per_event >= 0)
        fprintf(f, "%-41s%.2f\n", "round trips per event:", r->rt_per_event);
    if (r->cpu_us_per_event >= 0)
        fprintf(f, "%-41s%.1f\n", "client CPU us per event:",
                r->cpu_us_per_event);
}

/* ---- workloads --------------------------------------------------------- */

enum { W_POINT, W_RO, W_RW, W_WO, W_UPD_IDX, W_UPD_NONIDX, W_DELETE,
       W_INSERT, W_RPOINTS, W_RRANGES, W_BULK, W_N };
static const char *const WNAMES[W_N] = {
    "oltp_point_select", "oltp_read_only", "oltp_read_write",
    "oltp_write_only", "oltp_update_index", "oltp_update_non_index",
    "oltp_delete", "oltp_insert", "select_random_points",
    "select_random_ranges", "bulk_insert"};

enum { S_POINT, S_SIMPLE, S_SUM, S_ORDER, S_DISTINCT, S_UPD_IDX,
       S_UPD_NONIDX, S_DELETE, S_INSERT, S_N };
static const char *const SQL[S_N] = {
    "SELECT c FROM sbtest%d WHERE id=?",
    "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?",
    "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?",
    "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
    "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
    "UPDATE sbtest%d SET k=k+1 WHERE id=?",
    "UPDATE sbtest%d SET c=? WHERE id=?",
    "DELETE FROM sbtest%d WHERE id=?",
    "INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)"};

typedef struct thr {
    int tid;
    ffb_conn *conn;
    oltp_rng rng;
    ffb_stmt **st;   /* [tables][S_N] */
    ffb_stmt *extra; /* select_random_* / bulk insert */
    ffb_tx *itx;     /* the implicit transaction SELECTs keep open */
    uint64_t reads, writes, others, events, errors, bulk_n;
    uint64_t hist[HB];
    double lat_min, lat_max, lat_sum, busy;
    uint64_t rt0, rt1;
    int failed;
    char err[512];
} thr;

static int W;
static double t_end;
static ffb_tx_options TXO = {.version = FFB_TX_OPTIONS_VERSION,
                             .isolation = FFB_ISO_SNAPSHOT};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rts(ffb_conn *c) {
    ffb_stats s;
    ffb_conn_stats(c, &s, sizeof(s));
    return s.round_trips;
}

/* 1 = retry the event (-913 lock/update conflict, -803 unique violation),
   0 = fatal (message kept). */
static int fail(thr *t, const char *what, const ffb_error *e) {
    int sc = e ? ffb_error_sqlcode(e) : 0;
    if (sc == -913 || sc == -803)
        return 1;
    snprintf(t->err, sizeof(t->err), "%.200s: %.300s", what,
             e ? ffb_error_message(e) : "failed");
    t->failed = 1;
    return 0;
}
#define CK(expr)                                                               \
    do {                                                                       \
        if ((expr) < 0)                                                        \
            return fail(t, #expr, ffb_conn_error(t->conn)) ? 1 : -1;          \
    } while (0)

static int connect_thr(thr *t) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = O.dsn;
    o.user = O.user;
    o.password = O.password;
    o.charset = "UTF8";
    o.io_timeout_ms = 600000;
    if (ffb_conn_new(&o, &t->conn) != 0 || ffb_conn_connect(t->conn) != 0) {
        fail(t, "connect", t->conn ? ffb_conn_error(t->conn) : NULL);
        return -1;
    }
    return 0;
}

static int prep(thr *t, ffb_tx *tx, ffb_stmt **out, const char *sql) {
    if (ffb_stmt_new(t->conn, out) < 0 ||
        ffb_stmt_prepare(*out, tx, sql, (size_t)-1) < 0) {
        fail(t, sql, ffb_conn_error(t->conn));
        return -1;
    }
    return 0;
}

static char rp_sql[4096], rr_sql[8192];

/* Every statement the workload runs, prepared before the clock starts
   (sysbench's thread_init), in one transaction. */
static int prepare_stmts(thr *t) {
    ffb_tx *tx;
    char sql[256];
    t->st = calloc((size_t)O.tables * S_N, sizeof(*t->st));
    if (ffb_tx_begin(t->conn, &TXO, &tx) < 0)
        return fail(t, "begin", ffb_conn_error(t->conn)), -1;
    int rc = 0;
    if (W == W_RPOINTS)
        rc = prep(t, tx, &t->extra, rp_sql);
    else if (W == W_RRANGES)
        rc = prep(t, tx, &t->extra, rr_sql);
    else if (W == W_BULK) {
        snprintf(sql, sizeof(sql), "INSERT INTO sbtest%d VALUES (?, ?)",
                 t->tid + 1);
        rc = prep(t, tx, &t->extra, sql);
    } else
        for (int n = 0; n < O.tables && !rc; n++)
            for (int s = 0; s < S_N && !rc; s++) {
                snprintf(sql, sizeof(sql), SQL[s], n + 1);
                rc = prep(t, tx, &t->st[n * S_N + s], sql);
            }
    if (!rc && ffb_tx_commit(tx) < 0)
        (void)fail(t, "commit", ffb_conn_error(t->conn)), rc = -1;
    ffb_tx_free(tx);
    return rc;
}

static uint32_t tnum(thr *t) {
    return oltp_rand_uniform(&t->rng, 1, (uint32_t)O.tables) - 1;
}
static uint32_t rid(thr *t) { return rnd(&t->rng, 1, (uint32_t)O.table_size); }

/* Run a SELECT and read every row; checks the row shape. */
static int run_select(thr *t, ffb_stmt *st, ffb_tx *tx, int kind,
                      long long want_max) {
    CK(ffb_stmt_execute(st, tx));
    long long rows = 0;
    int r;
    while ((r = ffb_stmt_fetch(st)) == 1) {
        rows++;
        if (kind == S_POINT || kind == S_SIMPLE || kind == S_ORDER ||
            kind == S_DISTINCT) {
            const char *c;
            size_t len;
            if (ffb_stmt_get_text(st, 0, &c, &len) < 0 || len != 120) {
                snprintf(t->err, sizeof(t->err), "c is not CHAR(120)");
                return t->failed = 1, -1;
            }
        }
    }
    if (r < 0)
        CK(r);
    if (rows > want_max) {
        snprintf(t->err, sizeof(t->err), "%lld rows, at most %lld expected",
                 rows, want_max);
        return t->failed = 1, -1;
    }
    t->reads++;
    return 0;
}

/* One auto-committed DML: start + execute + commit in one write (the
   start rides the execute), then its two answers. `st` prepared, or `sql`
   executed immediately when st is NULL. Sets *n to the rows affected;
   returns 0, 1 (retry) or -1 (fatal). */
static int autocommit(thr *t, ffb_stmt *st, const char *sql, int64_t *n) {
    ffb_tx *a;
    const ffb_result *res;
    CK(ffb_tx_begin(t->conn, &TXO, &a));
    int q = st ? ffb_stmt_queue_execute(st, a, NULL, NULL)
               : ffb_conn_queue_execute_immediate(t->conn, a, sql, (size_t)-1,
                                                  NULL, 0, NULL, NULL);
    if (q < 0 || ffb_tx_queue_commit(a, NULL, NULL) < 0 ||
        ffb_conn_flush(t->conn) < 0) {
        ffb_tx_free(a);
        return fail(t, "queue", ffb_conn_error(t->conn)) ? 1 : -1;
    }
    int bad = 0;
    *n = 0;
    for (int k = 0; k < 2; k++) {
        if (ffb_conn_next_result(t->conn, &res) != 1) {
            ffb_tx_free(a);
            return fail(t, "next_result", ffb_conn_error(t->conn)) ? 1 : -1;
        }
        if (ffb_result_status(res) != 0 && !bad)
            bad = fail(t, "dml", ffb_result_error(res)) ? 2 : 1;
        if (k == 0)
            *n = ffb_result_rows_affected(res);
    }
    if (ffb_tx_is_active(a))
        ffb_tx_rollback(a);
    ffb_tx_free(a);
    return bad == 2 ? 1 : bad ? -1 : 0;
}

/* A DML statement: inside `tx`, or auto-committed when tx is NULL. */
static int run_dml(thr *t, ffb_stmt *st, ffb_tx *tx) {
    int64_t n;
    if (tx) {
        CK(ffb_stmt_execute(st, tx));
        n = ffb_stmt_rows_affected(st);
    } else {
        int rc = autocommit(t, st, NULL, &n);
        if (rc)
            return rc;
    }
    if (n > 0)
        t->writes++;
    else
        t->others++;
    return 0;
}

static void bind_c(thr *t, ffb_stmt *st, unsigned idx, const char *tmpl) {
    char buf[128];
    oltp_rand_str(&t->rng, tmpl, buf);
    ffb_stmt_bind_text(st, idx, buf, (size_t)-1);
}

#define ST(n, s) t->st[(n) * S_N + (s)]

static int ranges(thr *t, ffb_tx *tx, int kind, long long count) {
    for (long long i = 0; i < count; i++) {
        uint32_t n = tnum(t), id = rid(t);
        ffb_stmt *st = ST(n, kind);
        ffb_stmt_bind_int64(st, 0, id);
        ffb_stmt_bind_int64(st, 1, (int64_t)id + O.range_size - 1);
        int rc = run_select(t, st, tx, kind, kind == S_SUM ? 1 : O.range_size);
        if (rc)
            return rc;
    }
    return 0;
}

static int reads(thr *t, ffb_tx *tx) {
    uint32_t n = tnum(t);
    for (long long i = 0; i < O.point_selects; i++) {
        ffb_stmt_bind_int64(ST(n, S_POINT), 0, rid(t));
        int rc = run_select(t, ST(n, S_POINT), tx, S_POINT, 1);
        if (rc)
            return rc;
    }
    if (!O.range_selects)
        return 0;
    int rc;
    if ((rc = ranges(t, tx, S_SIMPLE, O.simple_ranges)) ||
        (rc = ranges(t, tx, S_SUM, O.sum_ranges)) ||
        (rc = ranges(t, tx, S_ORDER, O.order_ranges)) ||
        (rc = ranges(t, tx, S_DISTINCT, O.distinct_ranges)))
        return rc;
    return 0;
}

static int upd_index(thr *t, ffb_tx *tx) {
    uint32_t n = tnum(t);
    ffb_stmt_bind_int64(ST(n, S_UPD_IDX), 0, rid(t));
    return run_dml(t, ST(n, S_UPD_IDX), tx);
}

static int upd_nonidx(thr *t, ffb_tx *tx) {
    uint32_t n = tnum(t);
    bind_c(t, ST(n, S_UPD_NONIDX), 0, C_TMPL);
    ffb_stmt_bind_int64(ST(n, S_UPD_NONIDX), 1, rid(t));
    return run_dml(t, ST(n, S_UPD_NONIDX), tx);
}

static int writes(thr *t, ffb_tx *tx) {
    int rc;
    for (long long i = 0; i < O.index_updates; i++)
        if ((rc = upd_index(t, tx)))
            return rc;
    for (long long i = 0; i < O.non_index_updates; i++)
        if ((rc = upd_nonidx(t, tx)))
            return rc;
    for (long long i = 0; i < O.delete_inserts; i++) {
        uint32_t n = tnum(t), id = rid(t);
        ffb_stmt_bind_int64(ST(n, S_DELETE), 0, id);
        if ((rc = run_dml(t, ST(n, S_DELETE), tx)))
            return rc;
        ffb_stmt *ins = ST(n, S_INSERT);
        ffb_stmt_bind_int64(ins, 0, id);
        ffb_stmt_bind_int64(ins, 1, rid(t));
        bind_c(t, ins, 2, C_TMPL);
        bind_c(t, ins, 3, PAD_TMPL);
        if ((rc = run_dml(t, ins, tx)))
            return rc;
    }
    return 0;
}

/* The transaction SELECTs outside BEGIN keep open (the Edition's rule). */
static ffb_tx *implicit_tx(thr *t) {
    if (!t->itx && ffb_tx_begin(t->conn, &TXO, &t->itx) < 0)
        t->itx = NULL;
    return t->itx;
}

static int bulk_flush(thr *t, ffb_batch **b) {
    if (!*b)
        return 0;
    ffb_tx *tx;
    int rc = 0;
    if (ffb_tx_begin(t->conn, &TXO, &tx) < 0 || ffb_batch_execute(*b, tx) < 0)
        (void)fail(t, "batch", ffb_conn_error(t->conn)), rc = -1;
    if (ffb_tx_is_active(tx) && ffb_tx_commit(tx) < 0)
        (void)fail(t, "commit", ffb_conn_error(t->conn)), rc = -1;
    ffb_tx_free(tx);
    ffb_batch_free(*b);
    *b = NULL;
    return rc;
}

static ffb_batch *bulk_b[1024];

/* One event; returns 0, 1 (retry: ignored error) or -1 (fatal). */
static int event(thr *t) {
    int explicit_tx = (W == W_RO || W == W_RW || W == W_WO) && !O.skip_trx;
    ffb_tx *tx = NULL;
    int rc = 0;
    if (explicit_tx) {
        if (ffb_tx_begin(t->conn, &TXO, &tx) < 0)
            return fail(t, "begin", ffb_conn_error(t->conn)) ? 1 : -1;
        t->others++;
    }
    switch (W) {
    case W_POINT: {
        uint32_t n = tnum(t);
        ffb_stmt_bind_int64(ST(n, S_POINT), 0, rid(t));
        rc = run_select(t, ST(n, S_POINT), implicit_tx(t), S_POINT, 1);
        break;
    }
    case W_RO: rc = reads(t, tx); break;
    case W_RW:
        rc = reads(t, tx);
        if (!rc)
            rc = writes(t, tx);
        break;
    case W_WO: rc = writes(t, tx); break;
    case W_UPD_IDX: rc = upd_index(t, NULL); break;
    case W_UPD_NONIDX: rc = upd_nonidx(t, NULL); break;
    case W_DELETE: {
        uint32_t n = tnum(t);
        ffb_stmt_bind_int64(ST(n, S_DELETE), 0, rid(t));
        rc = run_dml(t, ST(n, S_DELETE), NULL);
        break;
    }
    case W_INSERT: {
        /* sysbench's unprepared con:query(), pgsql's auto_inc form */
        char c[128], pad[64], sql[512];
        oltp_rand_str(&t->rng, C_TMPL, c);
        oltp_rand_str(&t->rng, PAD_TMPL, pad);
        snprintf(sql, sizeof(sql),
                 "INSERT INTO sbtest%u (k, c, pad) VALUES (%u, '%s', '%s')",
                 tnum(t) + 1, rid(t), c, pad);
        int64_t n;
        rc = autocommit(t, NULL, sql, &n);
        if (!rc)
            t->writes++;
        break;
    }
    case W_RPOINTS:
    case W_RRANGES: {
        uint32_t rlen = (uint32_t)(O.table_size / O.threads);
        uint32_t lo = rlen * (uint32_t)t->tid, hi = lo + rlen;
        if (W == W_RPOINTS)
            for (int i = 0; i < O.random_points; i++)
                ffb_stmt_bind_int64(t->extra, (unsigned)i, rnd(&t->rng, lo, hi));
        else
            for (int i = 0; i < O.number_of_ranges; i++) {
                uint32_t v = rnd(&t->rng, lo, hi);
                ffb_stmt_bind_int64(t->extra, (unsigned)(2 * i), v);
                ffb_stmt_bind_int64(t->extra, (unsigned)(2 * i + 1),
                                    (int64_t)v + O.delta);
            }
        CK(ffb_stmt_execute(t->extra, implicit_tx(t)));
        int r;
        while ((r = ffb_stmt_fetch(t->extra)) == 1)
            ;
        CK(r);
        t->reads++;
        break;
    }
    case W_BULK: {
        ffb_batch **b = &bulk_b[t->tid];
        if (!*b) {
            ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
            bo.commit = 1;
            CK(ffb_batch_new(t->extra, &bo, b));
        }
        t->bulk_n++;
        ffb_stmt_bind_int64(t->extra, 0, (int64_t)t->bulk_n);
        ffb_stmt_bind_int64(t->extra, 1, (int64_t)t->bulk_n);
        CK(ffb_batch_add(*b));
        if (t->bulk_n % 1000 == 0)
            rc = bulk_flush(t, b);
        break;
    }
    }
    if (explicit_tx) {
        if (rc == 0) {
            if (ffb_tx_commit(tx) < 0)
                rc = fail(t, "commit", ffb_conn_error(t->conn)) ? 1 : -1;
            else
                t->others++;
        }
        if (rc && ffb_tx_is_active(tx))
            ffb_tx_rollback(tx);
        ffb_tx_free(tx);
    }
    if (rc == 1 && t->itx) { /* a conflict ends the implicit transaction */
        ffb_tx_rollback(t->itx);
        ffb_tx_free(t->itx);
        t->itx = NULL;
    }
    return rc;
}

static uint64_t events_left;
static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;

static int take_event(void) {
    if (now() >= t_end)
        return 0;
    if (!O.events)
        return 1;
    pthread_mutex_lock(&ev_mu);
    int ok = events_left > 0;
    if (ok)
        events_left--;
    pthread_mutex_unlock(&ev_mu);
    return ok;
}

static pthread_barrier_t bar;

static void *worker(void *arg) {
    thr *t = arg;
    int ok = connect_thr(t) == 0 && prepare_stmts(t) == 0;
    pthread_barrier_wait(&bar);
    if (!ok)
        return NULL;
    t->lat_min = 1e300;
    t->rt0 = rts(t->conn);
    double t0 = now();
    while (!t->failed && take_event()) {
        double e0 = now();
        int rc;
        while ((rc = event(t)) == 1)
            t->errors++;
        if (rc < 0)
            break;
        double ms = (now() - e0) * 1000.0;
        t->events++;
        t->lat_sum += ms;
        if (ms < t->lat_min)
            t->lat_min = ms;
        if (ms > t->lat_max)
            t->lat_max = ms;
        t->hist[hbucket(ms)]++;
    }
    if (W == W_BULK && !t->failed)
        bulk_flush(t, &bulk_b[t->tid]);
    t->rt1 = rts(t->conn); /* the implicit tx's final commit is not an event's */
    if (t->itx) {
        ffb_tx_commit(t->itx);
        ffb_tx_free(t->itx);
        t->itx = NULL;
    }
    t->busy = now() - t0;
    return NULL;
}

/* ---- prepare / cleanup ------------------------------------------------- */

static int exec_ddl(thr *t, const char *sql, int ignore_missing) {
    ffb_tx *tx;
    if (ffb_tx_begin(t->conn, NULL, &tx) < 0)
        return fail(t, "begin", ffb_conn_error(t->conn)), -1;
    int rc = ffb_conn_execute_immediate(t->conn, tx, sql, (size_t)-1);
    if (rc == 0)
        rc = ffb_tx_commit(tx);
    if (rc < 0 && !ignore_missing)
        fail(t, sql, ffb_conn_error(t->conn));
    if (ffb_tx_is_active(tx))
        ffb_tx_rollback(tx);
    ffb_tx_free(tx);
    return rc < 0 && !ignore_missing ? -1 : 0;
}

static int cmd_prepare(thr *t) {
    char sql[512];
    if (W == W_BULK) {
        for (int i = 1; i <= O.threads; i++) {
            snprintf(sql, sizeof(sql),
                     "CREATE TABLE sbtest%d (id INTEGER NOT NULL, k INTEGER "
                     "DEFAULT '0' NOT NULL, PRIMARY KEY (id))", i);
            if (exec_ddl(t, sql, 0))
                return -1;
        }
        return 0;
    }
    for (int n = 1; n <= O.tables; n++) {
        fprintf(stderr, "Creating table 'sbtest%d'...\n", n);
        snprintf(sql, sizeof(sql),
                 "CREATE TABLE sbtest%d (id %s, k INTEGER DEFAULT '0' NOT "
                 "NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT "
                 "'' NOT NULL, PRIMARY KEY (id))", n,
                 O.auto_inc ? "INTEGER GENERATED BY DEFAULT AS IDENTITY NOT NULL"
                            : "INTEGER NOT NULL");
        if (exec_ddl(t, sql, 0))
            return -1;
        if (W == W_INSERT && !O.auto_inc)
            continue; /* sysbench: empty tables then */
        fprintf(stderr, "Inserting %lld records into 'sbtest%d'\n",
                O.table_size, n);
        snprintf(sql, sizeof(sql),
                 "INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)", n);
        ffb_stmt *st;
        ffb_tx *tx;
        if (ffb_tx_begin(t->conn, &TXO, &tx) < 0 || prep(t, tx, &st, sql) ||
            ffb_tx_commit(tx) < 0)
            return fail(t, sql, ffb_conn_error(t->conn)), -1;
        ffb_tx_free(tx);
        for (long long i = 1; i <= O.table_size;) {
            ffb_batch *b;
            ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
            bo.commit = 1;
            if (ffb_tx_begin(t->conn, &TXO, &tx) < 0 ||
                ffb_batch_new(st, &bo, &b) < 0)
                return fail(t, "batch", ffb_conn_error(t->conn)), -1;
            for (int k = 0; k < 1000 && i <= O.table_size; k++, i++) {
                ffb_stmt_bind_int64(st, 0, i);
                ffb_stmt_bind_int64(st, 1, rid(t));
                bind_c(t, st, 2, C_TMPL);
                bind_c(t, st, 3, PAD_TMPL);
                if (ffb_batch_add(b) < 0)
                    return fail(t, "batch_add", ffb_conn_error(t->conn)), -1;
            }
            if (ffb_batch_execute(b, tx) < 0 ||
                (ffb_tx_is_active(tx) && ffb_tx_commit(tx) < 0))
                return fail(t, "batch", ffb_conn_error(t->conn)), -1;
            ffb_batch_free(b);
            ffb_tx_free(tx);
            int pct = (int)((i - 1) * 100 / O.table_size);
            fprintf(stderr, "\r  [%-50.*s] %3d%%", pct / 2,
                    "##################################################", pct);
        }
        fprintf(stderr, "\n");
        ffb_stmt_free(st);
        if (O.auto_inc) { /* the identity continues after the loaded ids */
            snprintf(sql, sizeof(sql),
                     "ALTER TABLE sbtest%d ALTER COLUMN id RESTART WITH %lld",
                     n, O.table_size + 1);
            if (exec_ddl(t, sql, 0))
                return -1;
        }
        if (O.create_secondary) {
            fprintf(stderr, "Creating a secondary index on 'sbtest%d'...\n", n);
            snprintf(sql, sizeof(sql), "CREATE INDEX k_%d ON sbtest%d(k)", n, n);
            if (exec_ddl(t, sql, 0))
                return -1;
        }
    }
    return 0;
}

static int cmd_cleanup(thr *t) {
    char sql[64];
    long long n = W == W_BULK ? O.threads : O.tables;
    for (long long i = 1; i <= n; i++) {
        fprintf(stderr, "Dropping table 'sbtest%lld'...\n", i);
        snprintf(sql, sizeof(sql), "DROP TABLE sbtest%lld", i);
        exec_ddl(t, sql, 1);
    }
    return 0;
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int cmd_run(FILE *out) {
    thr *ts = calloc((size_t)O.threads, sizeof(*ts));
    pthread_t *th = calloc((size_t)O.threads, sizeof(*th));
    if (!ts || !th || O.threads > 1024)
        return fprintf(stderr, "ffb-oltp: bad --threads\n"), 1;
    events_left = (uint64_t)O.events;
    double horizon = O.time > 0 ? (double)O.time : 1e12;
    pthread_barrier_init(&bar, NULL, (unsigned)O.threads + 1);
    for (int i = 0; i < O.threads; i++) {
        ts[i].tid = i;
        oltp_rand_seed(&ts[i].rng, (uint64_t)O.rand_seed + (uint64_t)i);
        pthread_create(&th[i], NULL, worker, &ts[i]);
    }
    fprintf(out, "Running the test with following options:\n");
    fprintf(out, "Number of threads: %lld\n", O.threads);
    fprintf(out, "Initializing random number generator from seed (%lld).\n\n",
            O.rand_seed);
    t_end = now() + horizon;
    pthread_barrier_wait(&bar); /* connected and prepared: the clock starts */
    double c0 = cpu_seconds();
    double t0 = now();
    t_end = t0 + horizon;
    fprintf(out, "Threads started!\n\n");
    for (int i = 0; i < O.threads; i++)
        pthread_join(th[i], NULL);
    double el = now() - t0, cpu = cpu_seconds() - c0;
    oltp_report_in r = {.elapsed = el, .percentile = (int)O.percentile,
                        .lat_min = 1e300};
    static uint64_t hist[HB];
    uint64_t rt = 0;
    int bad = 0;
    for (int i = 0; i < O.threads; i++) {
        thr *t = &ts[i];
        if (t->failed) {
            fprintf(stderr, "FATAL: thread %d: %s\n", i, t->err);
            bad = 1;
        }
        r.reads += t->reads;
        r.writes += t->writes;
        r.others += t->others;
        r.events += t->events;
        r.errors += t->errors;
        r.lat_sum += t->lat_sum;
        if (t->events && t->lat_min < r.lat_min)
            r.lat_min = t->lat_min;
        if (t->lat_max > r.lat_max)
            r.lat_max = t->lat_max;
        for (int k = 0; k < HB; k++)
            hist[k] += t->hist[k];
        rt += t->rt1 - t->rt0;
        r.ev_avg += (double)t->events / O.threads;
        r.et_avg += t->busy / O.threads;
    }
    for (int i = 0; i < O.threads; i++) {
        r.ev_sd += pow(ts[i].events - r.ev_avg, 2) / O.threads;
        r.et_sd += pow(ts[i].busy - r.et_avg, 2) / O.threads;
    }
    r.ev_sd = sqrt(r.ev_sd);
    r.et_sd = sqrt(r.et_sd);
    if (!r.events)
        r.lat_min = 0;
    r.lat_pct = oltp_percentile(hist, (double)O.percentile);
    r.rt_per_event = r.events ? (double)rt / r.events : 0;
    r.cpu_us_per_event = r.events ? cpu * 1e6 / r.events : 0;
    oltp_report(out, &r);
    for (int i = 0; i < O.threads; i++) {
        thr *t = &ts[i];
        if (t->st)
            for (long long k = 0; k < O.tables * S_N; k++)
                if (t->st[k])
                    ffb_stmt_free(t->st[k]);
        if (t->extra)
            ffb_stmt_free(t->extra);
        free(t->st);
        if (t->conn) {
            ffb_conn_close(t->conn);
            ffb_conn_free(t->conn);
        }
    }
    free(ts);
    free(th);
    return bad;
}

static void usage(void) {
    fprintf(stderr,
            "usage: ffb-oltp <workload> prepare|run|cleanup [--option=value]"
            "\n  workloads:");
    for (int i = 0; i < W_N; i++)
        fprintf(stderr, " %s", WNAMES[i]);
    fprintf(stderr, "\n  options: sysbench's names (--tables, --table-size, "
                    "--threads, --time, --events, --rand-type, --rand-seed, "
                    "--range-size, --point-selects, ... --skip-trx, "
                    "--auto-inc) plus --dsn, --user, --password, --driver, "
                    "--mode\n");
}

int oltp_main(int argc, char **argv) {
    if (argc < 3)
        return usage(), 2;
    W = -1;
    const char *wl = argv[1];
    const char *sl = strrchr(wl, '/');
    wl = sl ? sl + 1 : wl;
    for (int i = 0; i < W_N; i++) {
        size_t l = strlen(WNAMES[i]);
        if (!strncmp(wl, WNAMES[i], l) && (!wl[l] || !strcmp(wl + l, ".lua")))
            W = i;
    }
    if (W < 0)
        return fprintf(stderr, "ffb-oltp: unknown workload %s\n", argv[1]), 2;
    for (int i = 3; i < argc; i++) {
        char *a = argv[i], *eq;
        if (strncmp(a, "--", 2) || !(eq = strchr(a, '=')))
            return fprintf(stderr, "ffb-oltp: bad argument %s\n", a), 2;
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)(eq - a - 2), a + 2);
        if (set_opt(name, eq + 1))
            return 2;
    }
    if (!O.dsn)
        O.dsn = getenv("FFB_OLTP_DSN");
    if (!O.dsn)
        return fprintf(stderr, "ffb-oltp: --dsn=host/port:path needed\n"), 2;
    if (strcmp(O.driver, "libfastfb"))
        return fprintf(stderr, "ffb-oltp: --driver=%s is not implemented yet "
                               "(only libfastfb)\n", O.driver), 2;
    if (strcmp(O.mode, "sysbench"))
        return fprintf(stderr, "ffb-oltp: --mode=%s is not implemented yet\n",
                       O.mode), 2;
    const char *rt[] = {"uniform", "gaussian", "special", "pareto", "zipfian"};
    rand_kind = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(O.rand_type, rt[i]))
            rand_kind = i;
    if (rand_kind < 0)
        return fprintf(stderr, "ffb-oltp: bad --rand-type\n"), 2;
    if (O.tables < 1 || O.table_size < 1 || O.threads < 1 ||
        O.random_points < 1 || O.random_points > 100 ||
        O.number_of_ranges < 1 || O.number_of_ranges > 100)
        return fprintf(stderr, "ffb-oltp: bad sizes\n"), 2;
    if (!O.rand_seed)
        O.rand_seed = (long long)time(NULL);
    /* select_random_* text */
    int p = snprintf(rp_sql, sizeof(rp_sql),
                     "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (");
    for (int i = 0; i < O.random_points; i++)
        p += snprintf(rp_sql + p, sizeof(rp_sql) - (size_t)p, "%s?",
                      i ? ", " : "");
    snprintf(rp_sql + p, sizeof(rp_sql) - (size_t)p, ")");
    p = snprintf(rr_sql, sizeof(rr_sql),
                 "SELECT count(k) FROM sbtest1 WHERE ");
    for (int i = 0; i < O.number_of_ranges; i++)
        p += snprintf(rr_sql + p, sizeof(rr_sql) - (size_t)p,
                      "%sk BETWEEN ? AND ?", i ? " OR " : "");
    const char *cmd = argv[2];
    printf("ffb-oltp (sysbench-compatible) driver=%s libfastfb %s dsn=%s "
           "workload=%s rand-type=%s\n\n", O.driver, ffb_version(), O.dsn,
           WNAMES[W], O.rand_type);
    if (!strcmp(cmd, "run"))
        return cmd_run(stdout);
    thr t = {0};
    oltp_rand_seed(&t.rng, (uint64_t)O.rand_seed);
    if (!strcmp(cmd, "createdb")) { /* ours: a UTF8 database, as the Edition */
        ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
        ffb_create_options co = FFB_CREATE_OPTIONS_INIT;
        co.charset = "UTF8";
        co.overwrite = 1;
        o.dsn = O.dsn;
        o.user = O.user;
        o.password = O.password;
        o.charset = "UTF8";
        if (ffb_conn_new(&o, &t.conn) != 0 ||
            ffb_conn_create_database(t.conn, &co) != 0) {
            fprintf(stderr, "FATAL: create: %s\n",
                    ffb_error_message(ffb_conn_error(t.conn)));
            return 1;
        }
        ffb_conn_close(t.conn);
        ffb_conn_free(t.conn);
        return 0;
    }
    if (connect_thr(&t)) {
        fprintf(stderr, "FATAL: %s\n", t.err);
        return 1;
    }
    if (!strcmp(cmd, "dropdb")) { /* ours */
        int rc = ffb_conn_drop_database(t.conn);
        ffb_conn_free(t.conn);
        return rc != 0;
    }
    int rc = !strcmp(cmd, "prepare")   ? cmd_prepare(&t)
             : !strcmp(cmd, "cleanup") ? cmd_cleanup(&t)
                                       : (usage(), -2);
    if (rc == -1)
        fprintf(stderr, "FATAL: %s\n", t.err);
    ffb_conn_close(t.conn);
    ffb_conn_free(t.conn);
    return rc ? 1 : 0;
}
