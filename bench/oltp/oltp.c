/*
 * ffb-oltp: sysbench's OLTP workloads (oltp_common.lua and friends) run on
 * libfastfb, with sysbench's option names and report layout
 * (docs: bench/oltp/README.md, spec: shared/docs/specs/oltp.md §B3).
 * Drivers: oltp_ffb.c (libfastfb) and oltp_fbclient.c (libfbclient via
 * dlopen), both behind oltp_drv.h; prepare/cleanup use libfastfb.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <fastfb.h>

#include "oltp_drv.h"

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
    S("fb-client", fb_client) S("firebird-client", fb_client)
    I("proxy-pid", proxy_pid) S("proxy-stats", proxy_stats)
#undef I
#undef B
#undef S
    fprintf(stderr, "ffb-oltp: unknown option --%s\n", name);
    return -1;
}

/* ---- random numbers (sysbench's sb_rand.c, checked against its source:
   bench/oltp/README.md "Random numbers") ---------------------------------- */

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoroshiro128+ with sysbench's constants (55, 14, 36) */
uint64_t oltp_rand_next(oltp_rng *r) {
    uint64_t s0 = r->s[0], s1 = r->s[1], res = s0 + s1;
    s1 ^= s0;
    r->s[0] = rotl(s0, 55) ^ s1 ^ (s1 << 14);
    r->s[1] = rotl(s1, 36);
    return res;
}

void oltp_rand_seed(oltp_rng *r, uint64_t seed) {
    struct random_data rd;
    char st[128];
    int32_t w[4];
    memset(&rd, 0, sizeof(rd));
    initstate_r((unsigned)seed, st, sizeof(st), &rd);
    for (int i = 0; i < 4; i++)
        random_r(&rd, &w[i]);
    r->s[0] = (uint64_t)w[0] << 32 | ((uint64_t)w[1] & UINT32_MAX);
    r->s[1] = (uint64_t)w[2] << 32 | ((uint64_t)w[3] & UINT32_MAX);
}

double oltp_rand_double(oltp_rng *r) {
    union {
        uint64_t i;
        double d;
    } u = {.i = UINT64_C(0x3FF) << 52 | oltp_rand_next(r) >> 12};
    return u.d - 1.0;
}

uint32_t oltp_rand_uniform(oltp_rng *r, uint32_t a, uint32_t b) {
    return (uint32_t)(a + oltp_rand_double(r) * (b - a + 1));
}

/* rand-spec-iter 12: the mean of 12 uniform doubles over the range */
uint32_t oltp_rand_gaussian(oltp_rng *r, uint32_t a, uint32_t b) {
    double t = b - a + 1, sum = 0;
    for (int i = 0; i < 12; i++)
        sum += oltp_rand_double(r) * t;
    return a + (uint32_t)(sum * (1.0 / 12));
}

/* 1.0.20's special with rand-spec-pct 1, rand-spec-res 75, iter 12: one
   draw picks the branch (a quarter: the 12-term mean over [a, b]) and, in
   the other branch, the place in the central 1 %. */
uint32_t oltp_rand_special(oltp_rng *r, uint32_t a, uint32_t b) {
    double t = b - a, rnd = oltp_rand_double(r);
    if (rnd * t * (100.0 / (100.0 - 75)) < t) {
        double sum = 0;
        for (int i = 0; i < 12; i++)
            sum += oltp_rand_double(r);
        return (uint32_t)(a + sum * t * (1.0 / 12));
    }
    double res = rnd * (t * (1 / 100.0) + 1) + t / 2 - t * (1 / 200.0);
    return a + (uint32_t)res;
}

/* Pareto with h = 0.2 */
uint32_t oltp_rand_pareto(oltp_rng *r, uint32_t a, uint32_t b) {
    double h = 0.2, p = log(h) / log(1.0 - h);
    return a + (uint32_t)((b - a + 1) * pow(oltp_rand_double(r), p));
}

/* Zipfian, exponent 0.8: rejection-inversion sampling (Hoermann and
   Derflinger), as sysbench's sb_rand_zipfian_int. */
static double zhelper1(double x) { /* log(1 + x) / x */
    return fabs(x) > 1e-8 ? log1p(x) / x
                          : 1 - x * (0.5 - x * (0.33333333333333333 - 0.25 * x));
}
static double zhelper2(double x) { /* (exp(x) - 1) / x */
    return fabs(x) > 1e-8
               ? expm1(x) / x
               : 1 + x * 0.5 * (1 + x * 0.33333333333333333 * (1 + 0.25 * x));
}
static double zH(double x, double e) {
    double lx = log(x);
    return zhelper2((1 - e) * lx) * lx;
}
static double zh(double x, double e) { return exp(-e * log(x)); }
static double zHinv(double x, double e) {
    double t = x * (1 - e);
    if (t < -1)
        t = -1;
    return exp(zhelper1(t) * x);
}

uint32_t oltp_rand_zipfian(oltp_rng *r, uint32_t a, uint32_t b) {
    const double e = 0.8;
    const double s = 2 - zHinv(zH(2.5, e) - zh(2, e), e);
    const double hx1 = zH(1.5, e) - 1;
    uint32_t n = b - a + 1;
    const double hn = zH(n + 0.5, e);
    for (;;) {
        double u = hn + oltp_rand_double(r) * (hx1 - hn);
        double x = zHinv(u, e);
        uint32_t k = (uint32_t)(x + 0.5);
        if (k < 1)
            k = 1;
        else if (k > n)
            k = n;
        if (k - x <= s || u >= zH(k + 0.5, e) - zh(k, e))
            return a + k - 1;
    }
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
        *out = *tmpl == '#'   ? (char)oltp_rand_uniform(r, '0', '9')
               : *tmpl == '@' ? (char)oltp_rand_uniform(r, 'a', 'z')
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
#define HB OLTP_HB
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

typedef oltp_thr thr;

const oltp_opts *oltp_o = &O;
static const oltp_drv *DRV;
static int W, PIPE; /* PIPE: --mode=pipelined */
/* Statement slots: per table, per statement kind, NC copies (pipelined
   mode runs one SELECT per statement handle, so an event's point selects
   need point_selects handles); then one extra (select_random_*, bulk). */
static int NC = 1;
#define SL(n, s, c) ((((int)(n)) * S_N + (s)) * NC + (c))
static int EXTRA, NSLOTS;
static double t_end;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int oltp_fatal(thr *t, const char *what, const char *msg) {
    if (!t->failed)
        snprintf(t->err, sizeof(t->err), "%.200s: %.300s", what,
                 msg ? msg : "failed");
    t->failed = 1;
    return -1;
}

int oltp_retryable(int sqlcode) { return sqlcode == -913 || sqlcode == -803; }

int oltp_check_c(const char *s, size_t len) {
    if (len < 119)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char want = i >= 119 ? ' ' : i % 12 == 11 ? '-' : '#';
        if (want == '#' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != want)
            return 0;
    }
    return 1;
}

static char rp_sql[4096], rr_sql[8192];

/* Every statement the workload runs, prepared before the clock starts
   (sysbench's thread_init); the implicit transaction they were prepared
   in is committed. */
static int prepare_stmts(thr *t) {
    char sql[256];
    int rc = 0;
    if (W == W_RPOINTS)
        rc = DRV->prepare(t, EXTRA, rp_sql);
    else if (W == W_RRANGES)
        rc = DRV->prepare(t, EXTRA, rr_sql);
    else if (W == W_BULK) {
        snprintf(sql, sizeof(sql), "INSERT INTO sbtest%d VALUES (?, ?)",
                 t->tid + 1);
        rc = DRV->prepare(t, EXTRA, sql);
    } else
        for (int n = 0; n < O.tables && !rc; n++)
            for (int s = 0; s < S_N && !rc; s++)
                for (int c = 0; c < (s <= S_DISTINCT ? NC : 1) && !rc; c++) {
                    snprintf(sql, sizeof(sql), SQL[s], n + 1);
                    rc = DRV->prepare(t, SL(n, s, c), sql);
                }
    DRV->end_implicit(t);
    return rc;
}

static uint32_t tnum(thr *t) {
    return oltp_rand_uniform(&t->rng, 1, (uint32_t)O.tables) - 1;
}
static uint32_t rid(thr *t) { return rnd(&t->rng, 1, (uint32_t)O.table_size); }

/* Run a SELECT, read and check every row: a point select gives at most 1
   row, a range at most range-size, SUM exactly 1; c has sysbench's shape. */
static int run_select(thr *t, int slot, int tx, int kind, long long max) {
    long long rows;
    int check = kind != S_SUM, rc;
    if (PIPE)
        return DRV->q_select(t, slot, check, max, kind == S_SUM);
    if ((rc = DRV->select(t, slot, tx, check, &rows)))
        return rc;
    if (rows > max || (kind == S_SUM && rows != 1)) {
        char m[64];
        snprintf(m, sizeof(m), "%lld rows, %s %lld expected", rows,
                 kind == S_SUM ? "exactly" : "at most", max);
        return oltp_fatal(t, "select", m);
    }
    t->reads++;
    return 0;
}

/* A DML statement: inside the explicit transaction (tx 1), or
   auto-committed. Counted as write when it changed rows. */
static int run_dml(thr *t, int slot, int tx) {
    int64_t n;
    if (PIPE && tx)
        return DRV->q_dml(t, slot);
    int rc = DRV->dml(t, slot, tx, &n);
    if (rc)
        return rc;
    if (n > 0)
        t->writes++;
    else
        t->others++;
    return 0;
}

static void bind_c(thr *t, int slot, unsigned idx, const char *tmpl) {
    char buf[128];
    oltp_rand_str(&t->rng, tmpl, buf);
    DRV->bind_text(t, slot, idx, buf);
}

static int ranges(thr *t, int tx, int kind, long long count) {
    for (long long i = 0; i < count; i++) {
        uint32_t n = tnum(t), id = rid(t);
        int slot = SL(n, kind, PIPE ? i : 0);
        DRV->bind_int(t, slot, 0, id);
        DRV->bind_int(t, slot, 1, (int64_t)id + O.range_size - 1);
        int rc = run_select(t, slot, tx, kind, kind == S_SUM ? 1 : O.range_size);
        if (rc)
            return rc;
    }
    return 0;
}

static int reads(thr *t, int tx) {
    uint32_t n = tnum(t);
    for (long long i = 0; i < O.point_selects; i++) {
        int slot = SL(n, S_POINT, PIPE ? i : 0);
        DRV->bind_int(t, slot, 0, rid(t));
        int rc = run_select(t, slot, tx, S_POINT, 1);
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

static int upd_index(thr *t, int tx) {
    int slot = SL(tnum(t), S_UPD_IDX, 0);
    DRV->bind_int(t, slot, 0, rid(t));
    return run_dml(t, slot, tx);
}

static int upd_nonidx(thr *t, int tx) {
    int slot = SL(tnum(t), S_UPD_NONIDX, 0);
    bind_c(t, slot, 0, C_TMPL);
    DRV->bind_int(t, slot, 1, rid(t));
    return run_dml(t, slot, tx);
}

static int writes(thr *t, int tx) {
    int rc;
    for (long long i = 0; i < O.index_updates; i++)
        if ((rc = upd_index(t, tx)))
            return rc;
    for (long long i = 0; i < O.non_index_updates; i++)
        if ((rc = upd_nonidx(t, tx)))
            return rc;
    for (long long i = 0; i < O.delete_inserts; i++) {
        uint32_t n = tnum(t), id = rid(t);
        DRV->bind_int(t, SL(n, S_DELETE, 0), 0, id);
        if ((rc = run_dml(t, SL(n, S_DELETE, 0), tx)))
            return rc;
        int ins = SL(n, S_INSERT, 0);
        DRV->bind_int(t, ins, 0, id);
        DRV->bind_int(t, ins, 1, rid(t));
        bind_c(t, ins, 2, C_TMPL);
        bind_c(t, ins, 3, PAD_TMPL);
        if ((rc = run_dml(t, ins, tx)))
            return rc;
    }
    return 0;
}

/* One event; returns 0, 1 (retry: ignored error) or -1 (fatal). In
   pipelined mode the event's statements are queued and go in one write
   (with the lazy start), then the commit. */
static int event(thr *t) {
    int explicit_tx = (W == W_RO || W == W_RW || W == W_WO) && !O.skip_trx;
    int rc = 0;
    if (explicit_tx) {
        if ((rc = DRV->begin(t)))
            return rc;
        t->others++;
    }
    int tx = explicit_tx;
    switch (W) {
    case W_POINT: {
        int slot = SL(tnum(t), S_POINT, 0);
        DRV->bind_int(t, slot, 0, rid(t));
        rc = run_select(t, slot, 0, S_POINT, 1);
        break;
    }
    case W_RO: rc = reads(t, tx); break;
    case W_RW:
        rc = reads(t, tx);
        if (!rc)
            rc = writes(t, tx);
        break;
    case W_WO: rc = writes(t, tx); break;
    case W_UPD_IDX: rc = upd_index(t, 0); break;
    case W_UPD_NONIDX: rc = upd_nonidx(t, 0); break;
    case W_DELETE: {
        int slot = SL(tnum(t), S_DELETE, 0);
        DRV->bind_int(t, slot, 0, rid(t));
        rc = run_dml(t, slot, 0);
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
        rc = DRV->insert_sql(t, sql, &n);
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
                DRV->bind_int(t, EXTRA, (unsigned)i, rnd(&t->rng, lo, hi));
        else
            for (int i = 0; i < O.number_of_ranges; i++) {
                uint32_t v = rnd(&t->rng, lo, hi);
                DRV->bind_int(t, EXTRA, (unsigned)(2 * i), v);
                DRV->bind_int(t, EXTRA, (unsigned)(2 * i + 1),
                              (int64_t)v + O.delta);
            }
        long long rows;
        rc = DRV->select(t, EXTRA, 0, 0, &rows);
        if (!rc && W == W_RRANGES && rows != 1)
            rc = oltp_fatal(t, "select_random_ranges", "not one row");
        if (!rc)
            t->reads++;
        break;
    }
    case W_BULK:
        t->bulk_n++;
        DRV->bind_int(t, EXTRA, 0, (int64_t)t->bulk_n);
        DRV->bind_int(t, EXTRA, 1, (int64_t)t->bulk_n);
        rc = DRV->bulk_add(t, EXTRA);
        if (!rc && t->bulk_n % 1000 == 0)
            rc = DRV->bulk_flush(t);
        break;
    }
    if (!rc && PIPE && explicit_tx)
        rc = DRV->q_run(t);
    if (explicit_tx && rc == 0) {
        if ((rc = DRV->commit(t)) == 0)
            t->others++;
    }
    if (rc == 1) /* a conflict: roll back, end the implicit transaction */
        DRV->rollback(t);
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

/* Four meeting points of the workers and the main thread: ready, go,
   done, released (the proxy's counter is read between them). */
static pthread_barrier_t bar;
static char drv_desc[256];

static void *worker(void *arg) {
    thr *t = arg;
    int ok = DRV->connect(t, NSLOTS) == 0 && prepare_stmts(t) == 0;
    if (ok && t->tid == 0)
        DRV->describe(t, drv_desc, sizeof(drv_desc));
    pthread_barrier_wait(&bar); /* ready */
    pthread_barrier_wait(&bar); /* go */
    t->lat_min = 1e300;
    uint64_t (*rt)(thr *) = DRV->round_trips;
    t->rt0 = ok ? rt(t) : 0;
    double t0 = now();
    while (ok && !t->failed && take_event()) {
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
    if (ok && W == W_BULK && !t->failed)
        DRV->bulk_flush(t);
    t->rt1 = ok ? rt(t) : 0; /* the implicit tx's final commit is no event's */
    t->busy = now() - t0;
    pthread_barrier_wait(&bar); /* done */
    pthread_barrier_wait(&bar); /* released */
    if (t->d) {
        DRV->end_implicit(t);
        DRV->disconnect(t);
    }
    return NULL;
}

/* ffb-proxy's turns (bench/README.md "Counters"): SIGUSR1 makes it
   rewrite its stats file with a higher seq. Returns the turns over all
   connections, or -1. */
static long long proxy_turns(void) {
    if (!O.proxy_pid || !O.proxy_stats)
        return -1;
    long long seq0 = -1;
    for (int i = 0; i < 2000; i++) {
        long long seq = -1, turns = -1;
        FILE *f = fopen(O.proxy_stats, "r");
        if (f) {
            char line[512];
            if (fgets(line, sizeof(line), f)) {
                const char *p = strstr(line, "seq="), *q = strstr(line, " turns=");
                if (p && q) {
                    seq = atoll(p + 4);
                    turns = atoll(q + 7);
                }
            }
            fclose(f);
        }
        if (i == 0) {
            seq0 = seq;
            if (kill((pid_t)O.proxy_pid, SIGUSR1) != 0)
                return -1;
        } else if (seq > seq0)
            return turns;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* ---- prepare / cleanup (libfastfb for either driver: not timed) -------- */

typedef struct adm {
    ffb_conn *conn;
    oltp_rng rng;
    char err[512];
} adm;

static const ffb_tx_options TXO = {.version = FFB_TX_OPTIONS_VERSION,
                                   .isolation = FFB_ISO_SNAPSHOT};

static int fail(adm *t, const char *what, const ffb_error *e) {
    snprintf(t->err, sizeof(t->err), "%.200s: %.300s", what,
             e ? ffb_error_message(e) : "failed");
    return -1;
}

static int adm_connect(adm *t) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = O.dsn;
    o.user = O.user;
    o.password = O.password;
    o.charset = "UTF8";
    o.io_timeout_ms = 600000;
    if (ffb_conn_new(&o, &t->conn) != 0 || ffb_conn_connect(t->conn) != 0)
        return fail(t, "connect", t->conn ? ffb_conn_error(t->conn) : NULL);
    return 0;
}

static void adm_bind_c(adm *t, ffb_stmt *st, unsigned idx, const char *tmpl) {
    char buf[128];
    oltp_rand_str(&t->rng, tmpl, buf);
    ffb_stmt_bind_text(st, idx, buf, (size_t)-1);
}

static int exec_ddl(adm *t, const char *sql, int ignore_missing) {
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

static int cmd_prepare(adm *t) {
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
        if (ffb_tx_begin(t->conn, &TXO, &tx) < 0 ||
            ffb_stmt_new(t->conn, &st) < 0 ||
            ffb_stmt_prepare(st, tx, sql, (size_t)-1) < 0 ||
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
                ffb_stmt_bind_int64(st, 1, rnd(&t->rng, 1, (uint32_t)O.table_size));
                adm_bind_c(t, st, 2, C_TMPL);
                adm_bind_c(t, st, 3, PAD_TMPL);
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

static int cmd_cleanup(adm *t) {
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
    t_end = 1e300;
    for (int i = 0; i < O.threads; i++) {
        ts[i].tid = i;
        oltp_rand_seed(&ts[i].rng, (uint64_t)O.rand_seed + (uint64_t)i);
        pthread_create(&th[i], NULL, worker, &ts[i]);
    }
    fprintf(out, "Running the test with following options:\n");
    fprintf(out, "Number of threads: %lld\n", O.threads);
    fprintf(out, "Initializing random number generator from seed (%lld).\n\n",
            O.rand_seed);
    pthread_barrier_wait(&bar); /* ready: connected and prepared */
    long long p0 = proxy_turns();
    double c0 = cpu_seconds();
    double t0 = now();
    t_end = t0 + horizon;
    pthread_barrier_wait(&bar); /* go: the clock starts */
    fprintf(out, "Threads started!\n\n");
    pthread_barrier_wait(&bar); /* done */
    double el = now() - t0, cpu = cpu_seconds() - c0;
    long long p1 = proxy_turns();
    pthread_barrier_wait(&bar); /* released: commit, disconnect */
    for (int i = 0; i < O.threads; i++)
        pthread_join(th[i], NULL);
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
    /* the driver's own counter; fbclient has none: the proxy's turns */
    int own = DRV->round_trips != NULL && ts[0].rt0 != UINT64_MAX;
    r.rt_per_event = !r.events ? 0
                     : own     ? (double)rt / r.events
                     : p0 >= 0 && p1 >= p0 ? (double)(p1 - p0) / r.events
                                           : -1;
    r.cpu_us_per_event = r.events ? cpu * 1e6 / r.events : 0;
    oltp_report(out, &r);
    if (p0 >= 0 && p1 >= p0 && r.events)
        fprintf(out, "%-41s%.2f\n", "proxy turns per event:",
                (double)(p1 - p0) / r.events);
    fprintf(out, "%-41s%s\n", "client:", drv_desc);
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
    DRV = !strcmp(O.driver, "libfastfb")  ? &oltp_drv_ffb
          : !strcmp(O.driver, "fbclient") ? &oltp_drv_fbclient
                                          : NULL;
    if (!DRV)
        return fprintf(stderr, "ffb-oltp: --driver=%s: libfastfb or "
                               "fbclient\n", O.driver), 2;
    if (strcmp(O.mode, "sysbench") && strcmp(O.mode, "pipelined"))
        return fprintf(stderr, "ffb-oltp: --mode=%s: sysbench or "
                               "pipelined\n", O.mode), 2;
    PIPE = !strcmp(O.mode, "pipelined") && (W == W_RO || W == W_RW ||
                                           W == W_WO) && !O.skip_trx;
    if (!strcmp(O.mode, "pipelined") && !DRV->q_run)
        return fprintf(stderr, "ffb-oltp: --mode=pipelined needs "
                               "--driver=libfastfb\n"), 2;
    if (PIPE) { /* one statement handle per SELECT of an event */
        long long m = O.point_selects;
        long long k[4] = {O.simple_ranges, O.sum_ranges, O.order_ranges,
                          O.distinct_ranges};
        for (int i = 0; i < 4; i++)
            m = k[i] > m ? k[i] : m;
        if (m > 100)
            return fprintf(stderr, "ffb-oltp: too many statements per event "
                                   "for --mode=pipelined\n"), 2;
        NC = m > 0 ? (int)m : 1;
    }
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
    EXTRA = (int)O.tables * S_N * NC;
    NSLOTS = EXTRA + 1;
    printf("ffb-oltp (sysbench-compatible) driver=%s mode=%s libfastfb %s "
           "dsn=%s workload=%s rand-type=%s\n\n", O.driver, O.mode,
           ffb_version(), O.dsn, WNAMES[W], O.rand_type);
    if (!strcmp(cmd, "run"))
        return cmd_run(stdout);
    adm t = {0};
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
    if (adm_connect(&t)) {
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
