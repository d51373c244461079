/*
 * The driver benchmark (bench_drivers): scenarios, the peer interface and
 * the shared helpers. See bench/README.md for what each peer does per
 * scenario and the fairness rules.
 */
#ifndef FFB_BENCH_H
#define FFB_BENCH_H

#include <stddef.h>
#include <stdint.h>

enum scenario_id {
    SC_CONNECT,      /* connect + detach, n times */
    SC_SELECT_AC,    /* n point selects, each in its own transaction */
    SC_SELECT_TX,    /* n point selects in one transaction */
    SC_SELECT_PIPE,  /* the same, every select issued before any answer */
    SC_SCAN,         /* n full scans of BENCH_T */
    SC_INSERT_ROWS,  /* n single-row inserts in one transaction */
    SC_INSERT_PIPE,  /* the same, every insert issued before any answer */
    SC_INSERT_BATCH, /* one n-row batch insert */
    SC_BLOB_RW,      /* n x (write a 1 MiB blob, insert it, read it back) */
    SC_BLOB_SCAN,    /* read n rows with an 8 KB blob each */
    SC_COUNT
};

typedef struct scenario {
    const char *name;  /* key in the results, e.g. "select_ac" */
    const char *title; /* for the table, with the full count */
    int n_full;
    int n_quick;
} scenario;

extern const scenario bench_scenarios[SC_COUNT];

/* The data every peer works on (created by "bench_drivers setup"). */
#define BENCH_ROWS 10000    /* BENCH_T */
#define BENCH_BLOB_ROWS 300 /* BENCH_BLOB */
#define BENCH_BLOB_SMALL 8192
#define BENCH_BLOB_LARGE (1 << 20)
#define BENCH_BATCH_CHUNK 100 /* rows per EXECUTE BLOCK (fbclient batch) */

/* The statements, identical for every peer. */
#define SQL_POINT "select id, name, amount, created from BENCH_T where id = ?"
#define SQL_SCAN "select id, name, amount, created from BENCH_T"
#define SQL_INSERT "insert into BENCH_INS (id, name, amount) values (?, ?, ?)"
#define SQL_CLEAN_INS "delete from BENCH_INS"
#define SQL_BLOB_INSERT "insert into BENCH_BLOBW (id, data) values (?, ?)"
#define SQL_BLOB_SELECT "select data from BENCH_BLOBW where id = ?"
#define SQL_CLEAN_BLOBW "delete from BENCH_BLOBW"
#define SQL_BLOB_SCAN                                                          \
    "select id, data from BENCH_BLOB where id <= ? order by id"
#define SQL_WIRE_INFO                                                          \
    "select rdb$get_context('SYSTEM', 'WIRE_CRYPT_PLUGIN'), "                  \
    "rdb$get_context('SYSTEM', 'WIRE_COMPRESSED'), mon$remote_version "        \
    "from mon$attachments where mon$attachment_id = current_connection"

/* The i-th point select's key (0-based), spread over the table. */
static inline int64_t bench_point_id(int i) {
    return (int64_t)((i * 7919) % BENCH_ROWS) + 1;
}

/* Row i (0-based) of the insert scenarios: id i + 1, name "row <i>",
   amount i x 1.25 (NUMERIC(18,2), unscaled i x 125). */
static inline int64_t bench_ins_amount(int i) { return (int64_t)i * 125; }

/* Byte k of blob `id` - every peer writes and checks the same content. */
static inline unsigned char bench_blob_byte(int64_t id, size_t k) {
    return (unsigned char)((k * 131u + (uint64_t)id * 7u) & 0xFF);
}

typedef struct bench_cfg {
    const char *host;
    int port;
    const char *db;
    const char *user;
    const char *password;
    const char *node_dir; /* bench/node (peer.js) */
    const char *node_bin; /* "node" */
    /* --wire-crypt: "required" (the default), "enabled" or "disabled", for
       the C peers (libfastfb, async, libfbclient); --cipher: libfastfb's
       wire_crypt_plugins (NULL: its default list, ChaCha64 first). For
       like-with-like runs (docs/performance.md). */
    const char *wire_crypt;
    const char *cipher;
} bench_cfg;

#ifdef FASTFB_H
static inline int bench_crypt_level(const bench_cfg *cfg) {
    const char *w = cfg->wire_crypt ? cfg->wire_crypt : "required";
    return w[0] == 'd' ? FFB_CRYPT_DISABLED
           : w[0] == 'e' ? FFB_CRYPT_ENABLED
                         : FFB_CRYPT_REQUIRED;
}
#endif

enum { PEER_OK = 0, PEER_NA = 1, PEER_ERR = -1 };

/* The i-th random key of the concurrency scenario (xorshift64*, one state
   per client, seeded from the client's number): 1..BENCH_ROWS. */
static inline int64_t bench_rand_id(uint64_t *state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (int64_t)((x * 2685821657736338717u) >> 33) % BENCH_ROWS + 1;
}

static inline uint64_t bench_rand_seed(int client) {
    return 0x9E3779B97F4A7C15u * (uint64_t)(client + 1);
}

/* Latencies of one concurrency run, in ns (grown as needed). */
typedef struct lat_log {
    uint64_t *v;
    size_t n;
    size_t cap;
} lat_log;

/* 0, or -1 when out of memory. */
int bench_lat_push(lat_log *l, uint64_t ns);
/* Append `src` to `dst`; 0 or -1. */
int bench_lat_merge(lat_log *dst, const lat_log *src);
/* Sorts the log; nearest-rank percentile (0 < q <= 1), in ns; 0 if empty. */
uint64_t bench_lat_percentile(lat_log *l, double q);
void bench_lat_free(lat_log *l);

/* One concurrency run: `clients` clients, each running point selects
   (auto-commit, random keys, every row checked) until the time is up. */
typedef struct conc_result {
    uint64_t ns;      /* wall time of the run */
    int64_t cpu_ns;   /* as run_result.cpu_ns */
    int64_t lib_rts;  /* the driver's own round trips, -1 if none */
    uint64_t queries; /* answered and checked */
    uint64_t p50_ns;
    uint64_t p99_ns;
} conc_result;

/* The queries, p50 and p99 of a run from the merged latencies of all its
   clients, which are freed. */
void bench_conc_latencies(conc_result *out, lat_log *all);


/* One measured run. */
typedef struct run_result {
    uint64_t ns;     /* wall time of the timed part */
    int64_t lib_rts; /* the driver's own round-trip count, -1 if none */
    int64_t cpu_ns;  /* client CPU (user + system) of the timed part; -1:
                        measured by the harness (a peer in this process) */
} run_result;

typedef struct peer peer;

/*
 * A driver under test. setup() and teardown() are not timed (connecting
 * for the scenarios that are not about connecting, preparing, cleaning
 * up); run() is. Every function returns PEER_OK, PEER_NA (the driver
 * cannot do this; `err` says why) or PEER_ERR (`err` says what failed).
 */
typedef struct peer_ops {
    int (*start)(peer *p, const bench_cfg *cfg);
    int (*setup)(peer *p, int sc, int n);
    int (*run)(peer *p, int sc, int n, run_result *out);
    int (*teardown)(peer *p, int sc);
    /* Wire encryption and protocol as the server sees them. */
    int (*info)(peer *p, char *buf, size_t size);
    void (*stop)(peer *p);
    /* The concurrency scenario; NULL for a peer that does not take part.
       conc_setup() opens `clients` connections (untimed), conc_run() runs
       for `ms` milliseconds, conc_teardown() closes them. */
    int (*conc_setup)(peer *p, int clients);
    int (*conc_run)(peer *p, int clients, int ms, conc_result *out);
    int (*conc_teardown)(peer *p);
} peer_ops;

struct peer {
    const char *key;  /* "ffb", "fbclient", "node" */
    const char *name; /* column title */
    const peer_ops *ops;
    void *st;
    const bench_cfg *cfg;
    char err[1024];
};

extern const peer_ops bench_ffb_ops;
extern const peer_ops bench_node_ops;
extern const peer_ops bench_uv_ops;
#ifdef FFB_BENCH_HAVE_FBCLIENT
extern const peer_ops bench_fbclient_ops;
#endif

uint64_t bench_now_ns(void);
/* Format into p->err; returns PEER_ERR (or `code`). */
int bench_fail(peer *p, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A threaded client's run: `query(ctx)` again and again until `end_ns`,
   each one's latency pushed to `lat`. PEER_OK, or PEER_ERR (the query
   failed, or out of memory: said in p->err). */
int bench_run_queries(peer *p, lat_log *lat, uint64_t end_ns,
                      int (*query)(void *ctx), void *ctx);
/* After client `i` (its own peer copy `pc`, result `client_rc`,
   latencies `lat`) was joined: the run's result `rc` with the client's
   failure if it is the first, and its latencies merged into `all`. */
int bench_client_joined(peer *p, int rc, int i, const peer *pc, int client_rc,
                        lat_log *all, const lat_log *lat);

#endif /* FFB_BENCH_H */
