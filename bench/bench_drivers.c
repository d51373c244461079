/*
 * bench_drivers: libfastfb against libfbclient and node-firebird, over
 * ffb-proxy, on the same server, database and data (bench/README.md).
 *
 *   bench_drivers setup  --host H --port P --db PATH
 *       create the benchmark database (replacing it) and its data,
 *       directly on the server;
 *   bench_drivers run    --host H --port PROXY --db PATH --delay MS
 *                        --proxy-pid PID --proxy-stats FILE --out RAW.tsv
 *                        [--info INFO.tsv] [--reps N] [--quick]
 *                        [--peers ffb,fbclient,node] [--scenarios a,b]
 *       measure every scenario with every peer, alternating, and append
 *       one line per measurement to RAW.tsv;
 *   bench_drivers report --in RAW.tsv [--info INFO.tsv] --md OUT.md
 *                        --gnuplot OUT.gp --png OUT.png
 *       medians, ratios and round trips as a Markdown table, and a
 *       gnuplot script for the chart of time against link delay;
 *   bench_drivers drop   --host H --port P --db PATH
 *       drop the benchmark database.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <fastfb.h>

#include "bench.h"

const scenario bench_scenarios[SC_COUNT] = {
    {"connect", "connect + detach x%d", 10, 3},
    {"select_ac", "%d auto-commit point selects", 200, 50},
    {"select_tx", "%d point selects in one transaction", 200, 50},
    {"select_pipe", "%d point selects in one transaction, pipelined", 200,
     50},
    {"scan", "full scan of 10,000 rows x%d", 3, 1},
    {"insert_rows", "%d row-by-row inserts, one transaction", 300, 100},
    {"insert_pipe", "%d inserts in one transaction, pipelined", 300, 100},
    {"insert_batch", "%d-row batch insert", 300, 100},
    {"blob_rw", "1 MiB blob write + read x%d", 3, 1},
    {"blob_scan", "%d rows with an 8 KB blob each", BENCH_BLOB_ROWS, 100},
};

/* The scenario's title with its count. */
static void scenario_title(char *buf, size_t size, int sc, int n) {
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
    snprintf(buf, size, bench_scenarios[sc].title, n);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
}

uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_fail(peer *p, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof(p->err), fmt, ap);
    va_end(ap);
    return code;
}

int bench_lat_push(lat_log *l, uint64_t ns) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        uint64_t *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = ns;
    return 0;
}

int bench_lat_merge(lat_log *dst, const lat_log *src) {
    for (size_t i = 0; i < src->n; i++)
        if (bench_lat_push(dst, src->v[i]) != 0)
            return -1;
    return 0;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

uint64_t bench_lat_percentile(lat_log *l, double q) {
    if (!l->n)
        return 0;
    qsort(l->v, l->n, sizeof(*l->v), cmp_u64);
    size_t rank = (size_t)(q * (double)l->n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > l->n)
        rank = l->n;
    return l->v[rank - 1];
}

void bench_lat_free(lat_log *l) {
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int bench_run_queries(peer *p, lat_log *lat, uint64_t end_ns,
                      int (*query)(void *ctx), void *ctx) {
    while (bench_now_ns() < end_ns) {
        uint64_t t0 = bench_now_ns();
        if (query(ctx) != PEER_OK)
            return PEER_ERR;
        if (bench_lat_push(lat, bench_now_ns() - t0) != 0)
            return bench_fail(p, PEER_ERR, "out of memory");
    }
    return PEER_OK;
}

int bench_client_joined(peer *p, int rc, int i, const peer *pc, int client_rc,
                        lat_log *all, const lat_log *lat) {
    if (client_rc != PEER_OK && rc == PEER_OK)
        rc = bench_fail(p, PEER_ERR, "client %d: %s", i, pc->err);
    if (bench_lat_merge(all, lat) != 0 && rc == PEER_OK)
        rc = bench_fail(p, PEER_ERR, "out of memory");
    return rc;
}

void bench_conc_latencies(conc_result *out, lat_log *all) {
    out->queries = all->n;
    out->p50_ns = bench_lat_percentile(all, 0.50);
    out->p99_ns = bench_lat_percentile(all, 0.99);
    bench_lat_free(all);
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_drivers: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* ---- options ----------------------------------------------------------------
 */

typedef struct args {
    bench_cfg cfg;
    double delay;
    int reps;
    int quick;
    const char *peers;
    const char *scenarios;
    const char *clients; /* the concurrency scenario's client counts */
    int conc_ms;         /* and how long each run lasts */
    pid_t proxy_pid;
    const char *proxy_stats;
    const char *out;
    const char *in;
    const char *info;
    const char *md;
    const char *gnuplot;
    const char *png;
} args;

static void parse(int argc, char **argv, args *a) {
    memset(a, 0, sizeof(*a));
    a->cfg.host = "127.0.0.1";
    a->cfg.user = "SYSDBA";
    a->cfg.password = "masterkey";
    a->cfg.node_dir = "bench/node";
    a->cfg.node_bin = "node";
    a->reps = 5;
    a->peers = "ffb,uv,fbclient,node";
    for (int i = 2; i < argc; i++) {
        const char *k = argv[i];
        if (!strcmp(k, "--quick")) {
            a->quick = 1;
            continue;
        }
        if (i + 1 >= argc)
            die("%s needs a value", k);
        const char *v = argv[++i];
        if (!strcmp(k, "--host"))
            a->cfg.host = v;
        else if (!strcmp(k, "--port"))
            a->cfg.port = atoi(v);
        else if (!strcmp(k, "--db"))
            a->cfg.db = v;
        else if (!strcmp(k, "--user"))
            a->cfg.user = v;
        else if (!strcmp(k, "--password"))
            a->cfg.password = v;
        else if (!strcmp(k, "--node-dir"))
            a->cfg.node_dir = v;
        else if (!strcmp(k, "--node"))
            a->cfg.node_bin = v;
        else if (!strcmp(k, "--wire-crypt"))
            a->cfg.wire_crypt = v;
        else if (!strcmp(k, "--cipher"))
            a->cfg.cipher = v;
        else if (!strcmp(k, "--delay"))
            a->delay = atof(v);
        else if (!strcmp(k, "--reps"))
            a->reps = atoi(v);
        else if (!strcmp(k, "--peers"))
            a->peers = v;
        else if (!strcmp(k, "--scenarios"))
            a->scenarios = v;
        else if (!strcmp(k, "--clients"))
            a->clients = v;
        else if (!strcmp(k, "--conc-ms"))
            a->conc_ms = atoi(v);
        else if (!strcmp(k, "--proxy-pid"))
            a->proxy_pid = (pid_t)atoi(v);
        else if (!strcmp(k, "--proxy-stats"))
            a->proxy_stats = v;
        else if (!strcmp(k, "--out"))
            a->out = v;
        else if (!strcmp(k, "--in"))
            a->in = v;
        else if (!strcmp(k, "--info"))
            a->info = v;
        else if (!strcmp(k, "--md"))
            a->md = v;
        else if (!strcmp(k, "--gnuplot"))
            a->gnuplot = v;
        else if (!strcmp(k, "--png"))
            a->png = v;
        else
            die("unknown option %s", k);
    }
    if (a->reps < 1)
        a->reps = 1;
}

static int in_list(const char *list, const char *name) {
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* ---- setup and drop (libfastfb, directly on the server) ---------------------
 */

static ffb_conn *direct_conn(const args *a, int create) {
    char dsn[700];
    snprintf(dsn, sizeof(dsn), "%s/%d:%s", a->cfg.host, a->cfg.port, a->cfg.db);
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn;
    o.user = a->cfg.user;
    o.password = a->cfg.password;
    o.io_timeout_ms = 300000;
    ffb_conn *c;
    if (ffb_conn_new(&o, &c) != 0)
        die("ffb_conn_new failed");
    ffb_create_options co = FFB_CREATE_OPTIONS_INIT;
    co.charset = "UTF8";
    co.overwrite = 1;
    co.force_write = 0; /* no fsync per commit: less noise, same for all */
    int rc = create ? ffb_conn_create_database(c, &co) : ffb_conn_connect(c);
    if (rc != 0)
        die("%s %s: %s", create ? "creating" : "attaching", dsn,
            ffb_error_message(ffb_conn_error(c)));
    return c;
}

static void sql_or_die(ffb_conn *c, const char *sql) {
    ffb_tx *tx;
    if (ffb_tx_begin(c, NULL, &tx) != 0 ||
        ffb_conn_execute_immediate(c, tx, sql, (size_t)-1) != 0 ||
        ffb_tx_commit(tx) != 0)
        die("%s: %s", sql, ffb_error_message(ffb_conn_error(c)));
    ffb_tx_free(tx);
}

static const char *const setup_sql[] = {
    "create table BENCH_T (id integer not null primary key, "
    "name varchar(40) not null, amount numeric(18,2) not null, "
    "created timestamp not null)",
    "create table BENCH_INS (id integer not null primary key, "
    "name varchar(40), amount numeric(18,2))",
    "create table BENCH_BLOB (id integer not null primary key, "
    "data blob sub_type binary)",
    "create table BENCH_BLOBW (id integer not null primary key, "
    "data blob sub_type binary)",
    "execute block as declare i integer = 1; begin "
    "while (i <= 10000) do begin "
    "insert into BENCH_T values (:i, 'name ' || :i, "
    "cast(:i as numeric(18,2)) / 100, "
    "dateadd(:i second to timestamp '2024-01-01 00:00:00')); "
    "i = i + 1; end end",
};

static int cmd_setup(const args *a) {
    ffb_conn *c = direct_conn(a, 1);
    for (size_t i = 0; i < sizeof(setup_sql) / sizeof(setup_sql[0]); i++)
        sql_or_die(c, setup_sql[i]);
    /* 300 blobs of 8 KB, written as binary strings the server turns into
       blobs (libfastfb has no blob API yet). */
    ffb_tx *tx;
    ffb_stmt *s;
    static unsigned char buf[BENCH_BLOB_SMALL];
    if (ffb_tx_begin(c, NULL, &tx) != 0 || ffb_stmt_new(c, &s) != 0 ||
        ffb_stmt_prepare(s, tx,
                         "insert into BENCH_BLOB (id, data) values (?, "
                         "cast(? as varchar(8192) character set octets))",
                         (size_t)-1) != 0)
        die("blob insert: %s", ffb_error_message(ffb_conn_error(c)));
    for (int id = 1; id <= BENCH_BLOB_ROWS; id++) {
        for (size_t k = 0; k < sizeof(buf); k++)
            buf[k] = bench_blob_byte(id, k);
        if (ffb_stmt_bind_int64(s, 0, id) != 0 ||
            ffb_stmt_bind_bytes(s, 1, buf, sizeof(buf)) != 0 ||
            ffb_stmt_execute(s, tx) != 0)
            die("blob %d: %s", id, ffb_error_message(ffb_conn_error(c)));
    }
    ffb_stmt_free(s);
    if (ffb_tx_commit(tx) != 0)
        die("commit: %s", ffb_error_message(ffb_conn_error(c)));
    ffb_tx_free(tx);
    ffb_conn_close(c);
    ffb_conn_free(c);
    fprintf(stderr, "created %s: %d rows, %d blobs of %d bytes\n", a->cfg.db,
            BENCH_ROWS, BENCH_BLOB_ROWS, BENCH_BLOB_SMALL);
    return 0;
}

static int cmd_drop(const args *a) {
    ffb_conn *c = direct_conn(a, 0);
    if (ffb_conn_drop_database(c) != 0)
        die("drop: %s", ffb_error_message(ffb_conn_error(c)));
    ffb_conn_free(c);
    return 0;
}

/* ---- the proxy's turn counter
 * -------------------------------------------------- */

static int read_stats(const char *path, uint64_t *seq, uint64_t *turns,
                      int *by_signal) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[1024];
    int ok = fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    const char *s = ok ? strstr(line, " seq=") : NULL;
    const char *t = ok ? strstr(line, " turns=") : NULL;
    if (!s || !t)
        return -1;
    *seq = strtoull(s + 5, NULL, 10);
    *turns = strtoull(t + 7, NULL, 10);
    *by_signal = strstr(line, " why=signal") != NULL;
    return 0;
}

/* SIGUSR1, then wait for the stats file to be replaced. */
static int64_t proxy_turns(const args *a) {
    if (!a->proxy_pid || !a->proxy_stats)
        return -1;
    uint64_t seq0 = 0, seq, turns;
    int sig;
    if (read_stats(a->proxy_stats, &seq0, &turns, &sig) < 0)
        seq0 = 0;
    if (kill(a->proxy_pid, SIGUSR1) != 0)
        die("ffb-proxy (pid %d): %s", (int)a->proxy_pid, strerror(errno));
    uint64_t deadline = bench_now_ns() + 10000000000u;
    while (bench_now_ns() < deadline) {
        if (read_stats(a->proxy_stats, &seq, &turns, &sig) == 0 && seq > seq0 &&
            sig)
            return (int64_t)turns;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    die("ffb-proxy did not update %s", a->proxy_stats);
    return -1;
}

/* ---- run
 * ------------------------------------------------------------------------ */

typedef struct peer_def {
    const char *key;
    const char *name;
    const peer_ops *ops;
} peer_def;

static const peer_def peer_defs[] = {
    {"ffb", "libfastfb", &bench_ffb_ops},
    {"uv", "libfastfb async", &bench_uv_ops},
#ifdef FFB_BENCH_HAVE_FBCLIENT
    {"fbclient", "libfbclient", &bench_fbclient_ops},
#endif
    {"node", "node-firebird", &bench_node_ops},
};
#define NPEER_DEFS (sizeof(peer_defs) / sizeof(peer_defs[0]))

static void tsv_clean(char *s) {
    for (; *s; s++)
        if (*s == '\t' || *s == '\n' || *s == '\r')
            *s = ' ';
}

/* One measurement: setup, turns, run, turns, teardown. */
/* CPU (user + system) this process has used, in ns. */
static int64_t cpu_now_ns(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return ((int64_t)u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000;
}

static void measure(const args *a, peer *p, int sc, int n, int rep, FILE *out) {
    run_result r = {0, -1, -1};
    int64_t t0 = -1, t1 = -1;
    const char *status = "ok";
    p->err[0] = '\0';
    int rc = p->ops->setup(p, sc, n);
    if (rc == PEER_OK) {
        t0 = proxy_turns(a);
        int64_t c0 = cpu_now_ns();
        rc = p->ops->run(p, sc, n, &r);
        int64_t c1 = cpu_now_ns();
        t1 = proxy_turns(a);
        if (r.cpu_ns < 0)
            r.cpu_ns = c1 - c0; /* a driver in this process */
    }
    char err[sizeof(p->err) + 16];
    snprintf(err, sizeof(err), "%s", p->err);
    if (p->ops->teardown(p, sc) != PEER_OK && rc == PEER_OK) {
        rc = PEER_ERR;
        snprintf(err, sizeof(err), "teardown: %s", p->err);
    }
    if (rc == PEER_NA)
        status = "na";
    else if (rc != PEER_OK)
        status = "err";
    tsv_clean(err);
    if (!out) /* warm-up */
        return;
    double ms = (double)r.ns / 1e6;
    int64_t turns = t0 >= 0 && t1 >= 0 ? t1 - t0 : -1;
    fprintf(out, "%g\t%s\t%s\t%d\t%d\t%s\t%.3f\t%lld\t%lld\t%.3f\t%s\n",
            a->delay, bench_scenarios[sc].name, p->key, rep, n, status,
            rc == PEER_OK ? ms : 0.0, (long long)turns, (long long)r.lib_rts,
            rc == PEER_OK ? (double)r.cpu_ns / 1e6 : 0.0, err);
    fflush(out);
    if (rc == PEER_OK)
        fprintf(stderr, "  %-13s %-14s %10.1f ms %6lld round trips\n",
                bench_scenarios[sc].name, p->name, ms, (long long)turns);
    else
        fprintf(stderr, "  %-13s %-14s %s %s\n", bench_scenarios[sc].name,
                p->name, rc == PEER_NA ? "n/a:" : "FAILED:", err);
}

/* The concurrency scenario's client counts: --clients, else 1,8 (quick)
   or 1,8,32. */
#define MAX_CLIENT_COUNTS 8
static int client_counts(const args *a, int *out) {
    const char *list = a->clients ? a->clients : a->quick ? "1,8" : "1,8,32";
    int n = 0;
    for (const char *p = list; *p && n < MAX_CLIENT_COUNTS;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            die("--clients: a comma-separated list of numbers");
        if (v < 1 || v > 256)
            die("--clients: %ld is out of range (1 to 256)", v);
        out[n++] = (int)v;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static int conc_ms(const args *a) {
    return a->conc_ms > 0 ? a->conc_ms : a->quick ? 2000 : 10000;
}

static void conc_line(const args *a, FILE *out, const char *key, int rep,
                      int clients, const char *status, int ms,
                      const conc_result *r, int64_t turns, const char *note) {
    fprintf(out,
            "%g\tconc\t%s\t%d\t%d\t%s\t%.3f\t%lld\t%lld\t%.3f\t%s\t%llu\t"
            "%.1f\t%.1f\n",
            a->delay, key, rep, clients, status,
            r ? (double)r->ns / 1e6 : (double)ms, (long long)turns,
            (long long)(r ? r->lib_rts : -1),
            r ? (double)r->cpu_ns / 1e6 : 0.0, note,
            (unsigned long long)(r ? r->queries : 0),
            r ? (double)r->p50_ns / 1e3 : 0.0,
            r ? (double)r->p99_ns / 1e3 : 0.0);
    fflush(out);
}

/* One concurrency run: setup (untimed: the connections), turns, run,
   turns, teardown. Every answer is checked by the peer. */
static void measure_conc(const args *a, peer *p, int clients, int rep,
                         FILE *out) {
    conc_result r;
    memset(&r, 0, sizeof(r));
    r.cpu_ns = -1;
    r.lib_rts = -1;
    int64_t t0 = -1, t1 = -1;
    int ms = conc_ms(a);
    p->err[0] = '\0';
    int rc = p->ops->conc_setup(p, clients);
    if (rc == PEER_OK) {
        t0 = proxy_turns(a);
        int64_t c0 = cpu_now_ns();
        rc = p->ops->conc_run(p, clients, ms, &r);
        int64_t c1 = cpu_now_ns();
        t1 = proxy_turns(a);
        if (r.cpu_ns < 0)
            r.cpu_ns = c1 - c0;
    }
    char err[sizeof(p->err) + 16];
    snprintf(err, sizeof(err), "%s", p->err);
    if (p->ops->conc_teardown(p) != PEER_OK && rc == PEER_OK) {
        rc = PEER_ERR;
        snprintf(err, sizeof(err), "teardown: %s", p->err);
    }
    if (rc == PEER_OK && r.queries == 0) {
        rc = PEER_ERR;
        snprintf(err, sizeof(err), "no query completed in %d ms", ms);
    }
    tsv_clean(err);
    int64_t turns = t0 >= 0 && t1 >= 0 ? t1 - t0 : -1;
    const char *status = rc == PEER_OK ? "ok" : rc == PEER_NA ? "na" : "err";
    conc_line(a, out, p->key, rep, clients, status, ms,
              rc == PEER_OK ? &r : NULL, turns, err);
    if (rc == PEER_OK)
        fprintf(stderr,
                "  conc x%-7d %-16s %8.0f q/s  p50 %7.2f ms  p99 %7.2f ms  "
                "%5.2f round trips/q\n",
                clients, p->name, (double)r.queries * 1e9 / (double)r.ns,
                (double)r.p50_ns / 1e6, (double)r.p99_ns / 1e6,
                turns >= 0 ? (double)turns / (double)r.queries : -1.0);
    else
        fprintf(stderr, "  conc x%-7d %-16s %s %s\n", clients, p->name,
                rc == PEER_NA ? "NOT MEASURED:" : "FAILED:", err);
}

static int cmd_run(const args *a) {
    if (!a->cfg.db || !a->cfg.port || !a->out)
        die("run needs --db, --port and --out");
    FILE *out = fopen(a->out, "a");
    if (!out)
        die("%s: %s", a->out, strerror(errno));
    FILE *info = a->info ? fopen(a->info, "a") : NULL;
    peer peers[NPEER_DEFS];
    size_t np = 0;
    /* Drivers that cannot work in this run, with the reason: the
       concurrency table says NOT MEASURED for them too. */
    const char *absent_key[NPEER_DEFS];
    char absent_why[NPEER_DEFS][sizeof(peers[0].err)];
    size_t nabsent = 0;
    for (size_t i = 0; i < NPEER_DEFS; i++) {
        if (!in_list(a->peers, peer_defs[i].key))
            continue;
        peer *p = &peers[np];
        memset(p, 0, sizeof(*p));
        p->key = peer_defs[i].key;
        p->name = peer_defs[i].name;
        p->ops = peer_defs[i].ops;
        p->cfg = &a->cfg;
        if (p->ops->start(p, &a->cfg) != PEER_OK) {
            fprintf(stderr, "%s: not started: %s\n", p->name, p->err);
            absent_key[nabsent] = p->key;
            snprintf(absent_why[nabsent++], sizeof(absent_why[0]),
                     "not started: %s", p->err);
            p->ops->stop(p);
            continue;
        }
        char text[512];
        int irc = p->ops->info(p, text, sizeof(text));
        if (irc == PEER_NA) {
            /* The driver cannot work in this run (node-firebird whose
               attach never completes): said here and in the report, as a
               driver that is not installed is. */
            fprintf(stderr, "%s: NOT MEASURED in this run: %s\n", p->name,
                    p->err[0] ? p->err : text);
            if (info)
                fprintf(info, "%g\t%s\tnot measured in this run: %s\n",
                        a->delay, p->key, p->err[0] ? p->err : text);
            absent_key[nabsent] = p->key;
            snprintf(absent_why[nabsent++], sizeof(absent_why[0]), "%s",
                     p->err[0] ? p->err : text);
            p->ops->stop(p);
            continue;
        }
        if (irc != PEER_OK) {
            /* Stop it first: a peer in a child process (node) would outlive
               us holding the output pipe, and run.sh's tee would wait on it
               for ever. */
            char err[sizeof(p->err)];
            snprintf(err, sizeof(err), "%s", p->err);
            p->ops->stop(p);
            die("%s: %s", p->name, err);
        }
        tsv_clean(text);
        fprintf(stderr, "%s: %s\n", p->name, text);
        if (info)
            fprintf(info, "%g\t%s\t%s\n", a->delay, p->key, text);
        np++;
    }
    if (info)
        fclose(info);
    if (np == 0)
        die("no peer could start");

    int sel[SC_COUNT];
    int nsel = 0;
    for (int sc = 0; sc < SC_COUNT; sc++)
        if (in_list(a->scenarios, bench_scenarios[sc].name))
            sel[nsel++] = sc;

    /* Warm-up (not recorded): caches, prepared statements, node's JIT. */
    fprintf(stderr, "[delay %g ms] warm-up\n", a->delay);
    for (int k = 0; k < nsel; k++) {
        int sc = sel[k];
        int n = a->quick ? 1 : bench_scenarios[sc].n_quick / 2;
        for (size_t i = 0; i < np; i++)
            measure(a, &peers[i], sc, n > 0 ? n : 1, -1, NULL);
    }
    for (int rep = 0; rep < a->reps; rep++) {
        fprintf(stderr, "[delay %g ms] repetition %d/%d\n", a->delay, rep + 1,
                a->reps);
        for (int k = 0; k < nsel; k++) {
            int sc = sel[k];
            int n = a->quick ? bench_scenarios[sc].n_quick
                             : bench_scenarios[sc].n_full;
            /* Rotate who goes first, so no peer always follows another. */
            for (size_t i = 0; i < np; i++)
                measure(a, &peers[(i + (size_t)rep + (size_t)k) % np], sc, n,
                        rep, out);
        }
    }
    /* The concurrency scenario, once per client count; the order of the
       peers rotates with the count. */
    if (in_list(a->scenarios, "conc")) {
        int counts[MAX_CLIENT_COUNTS];
        int ncounts = client_counts(a, counts);
        size_t nc = 0;
        peer *cp[NPEER_DEFS];
        for (size_t i = 0; i < np; i++)
            if (peers[i].ops->conc_setup)
                cp[nc++] = &peers[i];
        fprintf(stderr, "[delay %g ms] concurrency, %d ms per run\n",
                a->delay, conc_ms(a));
        for (int k = 0; k < ncounts; k++) {
            for (size_t i = 0; i < nc; i++)
                measure_conc(a, cp[(i + (size_t)k) % nc], counts[k], 0, out);
            for (size_t i = 0; i < nabsent; i++) {
                char why[sizeof(absent_why[0])];
                snprintf(why, sizeof(why), "%s", absent_why[i]);
                tsv_clean(why);
                conc_line(a, out, absent_key[i], 0, counts[k], "na",
                          conc_ms(a), NULL, -1, why);
            }
        }
    }
    for (size_t i = 0; i < np; i++)
        peers[i].ops->stop(&peers[i]);
    fclose(out);
    return 0;
}

/* ---- report
 * ------------------------------------------------------------------- */

#define MAX_DELAYS 8
#define MAX_SAMPLES 64
#define NPEERS 4

static const char *const report_keys[NPEERS] = {"ffb", "uv", "fbclient",
                                                "node"};
static const char *const report_names[NPEERS] = {
    "libfastfb", "libfastfb async", "libfbclient", "node-firebird"};

typedef struct cell {
    double ms[MAX_SAMPLES];
    double turns[MAX_SAMPLES];
    double lib[MAX_SAMPLES];
    double cpu[MAX_SAMPLES];
    int n;
    int na;
    int err;
    int ntotal;
    char note[256];
} cell;

static double delays[MAX_DELAYS];
static int ndelays;
static int scenario_n[SC_COUNT];
static cell cells[MAX_DELAYS][SC_COUNT][NPEERS];

/* The concurrency scenario: one cell per delay, client count and peer. */
#define MAX_COUNTS 8
typedef struct conc_cell {
    double qps[MAX_SAMPLES];
    double p50_ms[MAX_SAMPLES];
    double p99_ms[MAX_SAMPLES];
    double cpu_us[MAX_SAMPLES]; /* client CPU per query */
    double rt[MAX_SAMPLES];     /* proxy turns per query */
    double lib_rt[MAX_SAMPLES]; /* the driver's own, -1 if none */
    double secs[MAX_SAMPLES];
    int n;
    int na;
    int err;
    int ntotal;
    char note[256];
} conc_cell;

static int counts[MAX_COUNTS];
static int ncounts;
static conc_cell conc_cells[MAX_DELAYS][MAX_COUNTS][NPEERS];

static int count_index(int n) {
    for (int i = 0; i < ncounts; i++)
        if (counts[i] == n)
            return i;
    if (ncounts == MAX_COUNTS)
        die("too many client counts");
    int i = ncounts++;
    while (i > 0 && counts[i - 1] > n) {
        counts[i] = counts[i - 1];
        for (int d = 0; d < MAX_DELAYS; d++)
            memcpy(conc_cells[d][i], conc_cells[d][i - 1],
                   sizeof(conc_cells[d][i]));
        i--;
    }
    counts[i] = n;
    for (int d = 0; d < MAX_DELAYS; d++)
        memset(conc_cells[d][i], 0, sizeof(conc_cells[d][i]));
    return i;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(const double *v, int n) {
    double t[MAX_SAMPLES];
    memcpy(t, v, sizeof(double) * (size_t)n);
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static int delay_index(double d) {
    for (int i = 0; i < ndelays; i++)
        if (delays[i] == d)
            return i;
    if (ndelays == MAX_DELAYS)
        die("too many delays");
    int i = ndelays++;
    while (i > 0 && delays[i - 1] > d) {
        delays[i] = delays[i - 1];
        memcpy(cells[i], cells[i - 1], sizeof(cells[i]));
        memcpy(conc_cells[i], conc_cells[i - 1], sizeof(conc_cells[i]));
        i--;
    }
    delays[i] = d;
    memset(cells[i], 0, sizeof(cells[i]));
    memset(conc_cells[i], 0, sizeof(conc_cells[i]));
    return i;
}

/* The next `delim`-separated field of *save (strsep() is not POSIX). */
static char *next_field(char **save, char delim) {
    char *start = *save;
    if (!start)
        return NULL;
    char *end = strchr(start, delim);
    if (end) {
        *end = '\0';
        *save = end + 1;
    } else {
        *save = NULL;
    }
    return start;
}

static void load_conc(char **field, int nf) {
    int pk = -1;
    for (int i = 0; i < NPEERS; i++)
        if (!strcmp(field[2], report_keys[i]))
            pk = i;
    if (pk < 0 || nf < 14)
        return;
    int d = delay_index(atof(field[0]));
    conc_cell *c = &conc_cells[d][count_index(atoi(field[4]))][pk];
    c->ntotal++;
    if (strcmp(field[5], "ok") != 0) {
        if (!strcmp(field[5], "na"))
            c->na++;
        else
            c->err++;
        snprintf(c->note, sizeof(c->note), "%s", field[10]);
        return;
    }
    double ms = atof(field[6]), q = atof(field[11]);
    if (c->n == MAX_SAMPLES || ms <= 0 || q <= 0)
        return;
    double turns = atof(field[7]), lib = atof(field[8]);
    c->qps[c->n] = q * 1000 / ms;
    c->p50_ms[c->n] = atof(field[12]) / 1000;
    c->p99_ms[c->n] = atof(field[13]) / 1000;
    c->cpu_us[c->n] = atof(field[9]) * 1000 / q;
    c->rt[c->n] = turns >= 0 ? turns / q : -1;
    c->lib_rt[c->n] = lib >= 0 ? lib / q : -1;
    c->secs[c->n] = ms / 1000;
    c->n++;
}

static void load_raw(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        die("%s: %s", path, strerror(errno));
    char line[2048];
    while (fgets(line, sizeof(line), f)) {
        /* delay scenario peer rep n status ms turns lib_rts cpu_ms note,
           and for the concurrency scenario queries p50_us p99_us */
        char *field[14] = {0};
        int nf = 0;
        char *save = line;
        line[strcspn(line, "\n")] = '\0';
        for (char *t; nf < 14 && (t = next_field(&save, '\t')) != NULL;)
            field[nf++] = t;
        if (nf < 10)
            continue;
        if (!strcmp(field[1], "conc")) {
            load_conc(field, nf);
            continue;
        }
        int sc = -1, pk = -1;
        for (int i = 0; i < SC_COUNT; i++)
            if (!strcmp(field[1], bench_scenarios[i].name))
                sc = i;
        for (int i = 0; i < NPEERS; i++)
            if (!strcmp(field[2], report_keys[i]))
                pk = i;
        if (sc < 0 || pk < 0)
            continue;
        cell *c = &cells[delay_index(atof(field[0]))][sc][pk];
        c->ntotal++;
        if (!scenario_n[sc])
            scenario_n[sc] = atoi(field[4]);
        const char *note = nf > 10 ? field[10] : "";
        if (!strcmp(field[5], "na")) {
            c->na++;
            snprintf(c->note, sizeof(c->note), "%s", note);
        } else if (!strcmp(field[5], "err")) {
            c->err++;
            snprintf(c->note, sizeof(c->note), "%s", note);
        } else if (c->n < MAX_SAMPLES) {
            c->ms[c->n] = atof(field[6]);
            c->turns[c->n] = atof(field[7]);
            c->lib[c->n] = atof(field[8]);
            c->cpu[c->n] = atof(field[9]);
            c->n++;
        }
    }
    fclose(f);
}

static void fmt_ms(char *buf, size_t size, double ms) {
    if (ms >= 100)
        snprintf(buf, size, "%.0f", ms);
    else if (ms >= 10)
        snprintf(buf, size, "%.1f", ms);
    else
        snprintf(buf, size, "%.2f", ms);
}

/* "123.4", "n/a (not yet)" or "error". */
static void time_cell(char *buf, size_t size, const cell *c) {
    if (c->n)
        fmt_ms(buf, size, median(c->ms, c->n));
    else if (c->na)
        snprintf(buf, size, "n/a (%s)", c->note);
    else if (c->err)
        snprintf(buf, size, "error");
    else
        snprintf(buf, size, "-");
}

static void rt_cell(char *buf, size_t size, const cell *c, int show_lib) {
    if (!c->n) {
        snprintf(buf, size, "-");
        return;
    }
    double t = median(c->turns, c->n);
    double l = median(c->lib, c->n);
    if (show_lib && l >= 0 && l != t)
        snprintf(buf, size, "%.0f (%.0f)", t, l);
    else
        snprintf(buf, size, "%.0f", t);
}

/* Median client CPU in ms. */
static void cpu_cell(char *buf, size_t size, const cell *c) {
    if (!c->n)
        snprintf(buf, size, "-");
    else
        fmt_ms(buf, size, median(c->cpu, c->n));
}

static void ratio_cell(char *buf, size_t size, const cell *c,
                       const cell *base) {
    if (!c->n || !base->n) {
        snprintf(buf, size, "n/a");
        return;
    }
    double b = median(base->ms, base->n);
    snprintf(buf, size, "%.2fx", b > 0 ? median(c->ms, c->n) / b : 0.0);
}

static void conc_val(char *buf, size_t size, const double *v, int n,
                     const char *fmt) {
    if (!n || median(v, n) < 0) {
        snprintf(buf, size, "-");
        return;
    }
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
    snprintf(buf, size, fmt, median(v, n));
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
}

/* The concurrency table: the async libfastfb (one loop, a pool of N),
   the blocking libfastfb and libfbclient (N threads each) and
   node-firebird (N connections, one loop). */
static void write_conc_md(FILE *f) {
    static const int cp[] = {1, 0, 2, 3}; /* uv, ffb, fbclient, node */
    const int ncp = 4;
    if (!ncounts)
        return;
    double secs = 0;
    for (int d = 0; d < ndelays; d++)
        for (int k = 0; k < ncounts; k++)
            for (int p = 0; p < NPEERS; p++)
                if (conc_cells[d][k][p].n)
                    secs = median(conc_cells[d][k][p].secs,
                                  conc_cells[d][k][p].n);
    fprintf(f, "\n## Concurrency: N clients running point selects\n\n");
    fprintf(f,
            "Each of N clients runs auto-commit point selects (`%s`, a random "
            "id per query, the row checked) one after the other for %.0f s; "
            "all clients at once. libfastfb async: one libuv loop, one "
            "ffb_uv_pool of N connections, each client acquiring a "
            "connection, querying (start + execute + commit in one write) "
            "and releasing it, all from callbacks; libfastfb (blocking) and "
            "libfbclient: N threads, one connection each; node-firebird: N connections on its event "
            "loop, one async loop per connection. q/s = queries answered and "
            "checked per second (all clients); p50/p99 = latency of one "
            "query in ms (for libfastfb from the acquire to the checked "
            "row); CPU/q = the client's CPU time (user + system, all its "
            "threads) per query in microseconds; RT/q = proxy turns per query "
            "(libfastfb's own count in parentheses where it differs); ratio "
            "= libfastfb async q/s / peer q/s (> 1: libfastfb is faster).\n\n",
            SQL_POINT, secs);
    fprintf(f, "| clients | delay |");
    for (int i = 0; i < ncp; i++)
        fprintf(f, " %s q/s | p50 | p99 | CPU/q | RT/q |",
                report_names[cp[i]]);
    for (int i = 1; i < ncp; i++)
        fprintf(f, " libfastfb async / %s |", report_names[cp[i]]);
    fprintf(f, "\n|--:|--:|");
    for (int i = 0; i < ncp; i++)
        fprintf(f, "--:|--:|--:|--:|--:|");
    for (int i = 1; i < ncp; i++)
        fprintf(f, "--:|");
    fprintf(f, "\n");
    for (int k = 0; k < ncounts; k++)
        for (int d = 0; d < ndelays; d++) {
            conc_cell *c = conc_cells[d][k];
            int any = 0;
            for (int i = 0; i < ncp; i++)
                any |= c[cp[i]].ntotal;
            if (!any)
                continue;
            fprintf(f, "| %d | %g ms |", counts[k], delays[d]);
            for (int i = 0; i < ncp; i++) {
                conc_cell *x = &c[cp[i]];
                if (!x->n) {
                    fprintf(f, " %s | - | - | - | - |",
                            x->na    ? "NOT MEASURED"
                            : x->err ? "error"
                                     : "-");
                    continue;
                }
                char q[32], p50[32], p99[32], u[32], r[48], l[32];
                conc_val(q, sizeof(q), x->qps, x->n, "%.0f");
                conc_val(p50, sizeof(p50), x->p50_ms, x->n, "%.2f");
                conc_val(p99, sizeof(p99), x->p99_ms, x->n, "%.2f");
                conc_val(u, sizeof(u), x->cpu_us, x->n, "%.0f");
                conc_val(r, sizeof(r), x->rt, x->n, "%.2f");
                conc_val(l, sizeof(l), x->lib_rt, x->n, "%.2f");
                if (strcmp(l, "-") != 0 && strcmp(l, r) != 0) {
                    size_t used = strlen(r);
                    snprintf(r + used, sizeof(r) - used, " (%s)", l);
                }
                fprintf(f, " %s | %s | %s | %s | %s |", q, p50, p99, u, r);
            }
            for (int i = 1; i < ncp; i++) {
                conc_cell *x = &c[cp[i]], *b = &c[cp[0]];
                if (x->n && b->n)
                    fprintf(f, " %.2fx |",
                            median(b->qps, b->n) / median(x->qps, x->n));
                else
                    fprintf(f, " n/a |");
            }
            fprintf(f, "\n");
        }
    /* Why a cell is empty: never silent. */
    int header = 0;
    for (int d = 0; d < ndelays; d++)
        for (int k = 0; k < ncounts; k++)
            for (int p = 0; p < NPEERS; p++) {
                conc_cell *c = &conc_cells[d][k][p];
                if (!c->na && !c->err)
                    continue;
                if (!header++)
                    fprintf(f, "\nNot measured or failed:\n\n");
                fprintf(f, "- %s, %d clients, %g ms: %s%s\n", report_names[p],
                        counts[k], delays[d],
                        c->na ? "NOT MEASURED: " : "FAILED: ", c->note);
            }
}

static void write_md(const args *a, FILE *f) {
    int reps = 0;
    for (int d = 0; d < ndelays; d++)
        for (int s = 0; s < SC_COUNT; s++)
            for (int p = 0; p < NPEERS; p++)
                if (cells[d][s][p].ntotal > reps)
                    reps = cells[d][s][p].ntotal;
    fprintf(f, "## libfastfb (blocking and async), libfbclient and "
               "node-firebird over ffb-proxy\n\n");
    fprintf(f,
            "Median of %d run%s per cell; time in ms for the whole scenario; "
            "libfastfb = the blocking API (fastfb.h), libfastfb async = the "
            "same work through libfastfb_uv on a libuv loop (queue functions "
            "and callbacks, no blocking call); RT = client turns counted by "
            "ffb-proxy (for libfastfb, its own round-trip counter in "
            "parentheses where it differs); CPU = the client's own CPU time "
            "(user + system) in ms during the timed part; ratio = peer time "
            "/ libfastfb time (> 1: the blocking libfastfb is faster). Delay "
            "is one-way, added to each direction.\n\n",
            reps, reps == 1 ? "" : "s");
    fprintf(f, "| scenario | delay |");
    for (int p = 0; p < NPEERS; p++)
        fprintf(f, " %s | RT | CPU |", report_names[p]);
    for (int p = 1; p < NPEERS; p++)
        fprintf(f, " %s / libfastfb |", report_names[p]);
    fprintf(f, "\n|---|--:|");
    for (int p = 0; p < NPEERS; p++)
        fprintf(f, "--:|--:|--:|");
    for (int p = 1; p < NPEERS; p++)
        fprintf(f, "--:|");
    fprintf(f, "\n");
    int rt_same = 0, rt_cmp = 0;
    char rt_diff[2048] = "";
    for (int s = 0; s < SC_COUNT; s++) {
        for (int d = 0; d < ndelays; d++) {
            cell *c = cells[d][s];
            int any = 0;
            for (int p = 0; p < NPEERS; p++)
                any |= c[p].ntotal;
            if (!any)
                continue;
            char title[128] = "";
            if (d == 0)
                scenario_title(title, sizeof(title), s, scenario_n[s]);
            fprintf(f, "| %s | %g ms |", title, delays[d]);
            for (int p = 0; p < NPEERS; p++) {
                char t[128], r[64], u[32];
                time_cell(t, sizeof(t), &c[p]);
                rt_cell(r, sizeof(r), &c[p], p <= 1);
                cpu_cell(u, sizeof(u), &c[p]);
                fprintf(f, " %s | %s | %s |", t, r, u);
            }
            for (int p = 1; p < NPEERS; p++) {
                char q[32];
                ratio_cell(q, sizeof(q), &c[p], &c[0]);
                fprintf(f, " %s |", q);
            }
            fprintf(f, "\n");
            /* The async column must cost the blocking one's round trips. */
            if (c[0].n && c[1].n) {
                double b = median(c[0].turns, c[0].n);
                double u = median(c[1].turns, c[1].n);
                double bl = median(c[0].lib, c[0].n);
                double ul = median(c[1].lib, c[1].n);
                rt_cmp++;
                if (b == u && bl == ul)
                    rt_same++;
                else {
                    size_t used = strlen(rt_diff);
                    snprintf(rt_diff + used, sizeof(rt_diff) - used,
                             "%s%s at %g ms: blocking %.0f (%.0f), async "
                             "%.0f (%.0f)",
                             used ? "; " : "", bench_scenarios[s].name,
                             delays[d], b, bl, u, ul);
                }
            }
        }
    }
    if (rt_cmp)
        fprintf(f,
                "\nRound trips, async against blocking libfastfb (proxy "
                "turns and the library's own count): equal in %d of %d "
                "cells%s%s.\n",
                rt_same, rt_cmp, rt_diff[0] ? "; different: " : "", rt_diff);
    /* Failures, if any, so a broken cell is never silent. */
    int header = 0;
    for (int d = 0; d < ndelays; d++)
        for (int s = 0; s < SC_COUNT; s++)
            for (int p = 0; p < NPEERS; p++) {
                cell *c = &cells[d][s][p];
                if (!c->err)
                    continue;
                if (!header++)
                    fprintf(f, "\nFailures:\n\n");
                fprintf(f, "- %s, %s, %g ms: %d of %d runs failed: %s\n",
                        report_names[p], bench_scenarios[s].name, delays[d],
                        c->err, c->ntotal, c->note);
            }
    if (a->info) {
        FILE *in = fopen(a->info, "r");
        char line[1024], seen[NPEERS][600];
        memset(seen, 0, sizeof(seen));
        while (in && fgets(line, sizeof(line), in)) {
            line[strcspn(line, "\n")] = '\0';
            char *save = line;
            next_field(&save, '\t');
            char *key = next_field(&save, '\t');
            for (int p = 0; key && save && p < NPEERS; p++)
                if (!strcmp(key, report_keys[p]) && !seen[p][0])
                    snprintf(seen[p], sizeof(seen[p]), "%s", save);
        }
        if (in)
            fclose(in);
        fprintf(f, "\nDrivers, with the protocol and wire encryption they "
                   "negotiated:\n\n");
        for (int p = 0; p < NPEERS; p++)
            if (seen[p][0])
                fprintf(f, "- %s: %s\n", report_names[p], seen[p]);
    }
    fprintf(f, "\nNotes:\n\n");
    fprintf(f,
            "- libfbclient 3.0 has no batch API: its batch is a prepared "
            "EXECUTE BLOCK with %d rows of parameters, executed once per %d "
            "rows. node-firebird's batch is executeBatch and libfastfb's "
            "ffb_batch (both the Firebird 4 batch API).\n",
            BENCH_BATCH_CHUNK, BENCH_BATCH_CHUNK);
    fprintf(f, "- Connect + detach includes op_disconnect, which the proxy "
               "counts as a turn and libfastfb does not (it expects no "
               "answer).\n");
    fprintf(f, "- Blob scans: node-firebird starts all blob reads at once "
               "(Promise.all, as its README shows), libfastfb opens every "
               "blob as its row arrives and then reads them (docs/blobs.md), "
               "libfbclient reads them one by one (its API is blocking).\n");
    fprintf(f, "- Pipelined scenarios: every peer issues all statements "
               "before reading any answer, the fastest way its API allows. "
               "libfastfb queues the executions (one prepared statement per "
               "select; the inserts share one) and the commit and flushes "
               "them in one write; "
               "node-firebird starts them all at once (Promise.all) on "
               "statements prepared in setup; libfbclient's API is blocking, "
               "so it runs them one by one, as in the non-pipelined "
               "scenario.\n");
    fprintf(f, "- What each peer does, and the fairness rules: "
               "bench/README.md.\n");
    write_conc_md(f);
}

/* gnuplot: one panel per scenario, median time against one-way delay. */
static void write_gnuplot(const args *a, FILE *f) {
    fprintf(f, "# generated by bench_drivers report\n");
    fprintf(f, "set terminal pngcairo size 2000,900 font 'Sans,9'\n");
    fprintf(f, "set output '%s'\n", a->png ? a->png : "bench.png");
    fprintf(f, "set datafile missing '?'\n");
    fprintf(f, "set key top left\nset grid\n");
    fprintf(f, "set xlabel 'one-way delay (ms)'\nset ylabel 'ms'\n");
    if (ndelays > 0)
        fprintf(f, "set xrange [%g:%g]\nset yrange [0:*]\n", delays[0] - 0.5,
                delays[ndelays - 1] + 0.5);
    fprintf(f, "set multiplot layout 2,5 title 'libfastfb (blocking, async), "
               "libfbclient, node-firebird: median time per scenario vs link delay'\n");
    for (int s = 0; s < SC_COUNT; s++) {
        fprintf(f, "$d%d << EOD\n", s);
        for (int d = 0; d < ndelays; d++) {
            fprintf(f, "%g", delays[d]);
            for (int p = 0; p < NPEERS; p++) {
                cell *c = &cells[d][s][p];
                if (c->n)
                    fprintf(f, " %.3f", median(c->ms, c->n));
                else
                    fprintf(f, " ?");
            }
            fprintf(f, "\n");
        }
        fprintf(f, "EOD\n");
        char title[128];
        scenario_title(title, sizeof(title), s, scenario_n[s]);
        fprintf(f, "set title '%s'\n", title);
        fprintf(f,
                "plot $d%d using 1:2 with linespoints title '%s', "
                "'' using 1:3 with linespoints title '%s', "
                "'' using 1:4 with linespoints title '%s', "
                "'' using 1:5 with linespoints title '%s'\n",
                s, report_names[0], report_names[1], report_names[2],
                report_names[3]);
    }
    fprintf(f, "unset multiplot\n");
}

static int cmd_report(const args *a) {
    if (!a->in)
        die("report needs --in");
    load_raw(a->in);
    FILE *md = a->md ? fopen(a->md, "w") : stdout;
    if (!md)
        die("%s: %s", a->md, strerror(errno));
    write_md(a, md);
    if (md != stdout)
        fclose(md);
    if (a->gnuplot) {
        FILE *g = fopen(a->gnuplot, "w");
        if (!g)
            die("%s: %s", a->gnuplot, strerror(errno));
        write_gnuplot(a, g);
        fclose(g);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs("usage: bench_drivers setup|run|report|drop [options]\n"
              "  setup  --host H --port P --db PATH\n"
              "  run    --host H --port PROXY --db PATH --delay MS\n"
              "         --proxy-pid PID --proxy-stats FILE --out RAW.tsv\n"
              "         [--info INFO.tsv] [--reps N] [--quick]\n"
              "         [--peers ffb,fbclient,node] [--scenarios a,b,...]\n"
              "         [--node-dir DIR] [--node BIN]\n"
              "         [--wire-crypt required|enabled|disabled] [--cipher C]\n"
              "  report --in RAW.tsv [--info INFO.tsv] [--md OUT.md]\n"
              "         [--gnuplot OUT.gp --png OUT.png]\n"
              "  drop   --host H --port P --db PATH\n"
              "See bench/README.md.\n",
              argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    signal(SIGPIPE, SIG_IGN);
    args a;
    parse(argc, argv, &a);
    if (!strcmp(argv[1], "setup"))
        return cmd_setup(&a);
    if (!strcmp(argv[1], "drop"))
        return cmd_drop(&a);
    if (!strcmp(argv[1], "run"))
        return cmd_run(&a);
    if (!strcmp(argv[1], "report"))
        return cmd_report(&a);
    die("unknown command %s", argv[1]);
    return 2;
}
