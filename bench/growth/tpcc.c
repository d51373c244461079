/*
 * ffb-tpcc: the growth test's workload (bench/growth/README.md, spec
 * growth.md section C). A TPC-C-like schema, a loader through the batch
 * API, and the five-transaction mix run by terminal threads, one
 * connection each, through libfastfb's public blocking API: with
 * --mode=procs (the default, IBSurgeon-like) each transaction is one PSQL
 * procedure, its start, call and commit in one write (1 round trip); with
 * --mode=client every statement is sent from the client.
 *
 *   ffb-tpcc create                 the database and its tables (--scale)
 *   ffb-tpcc load  --warehouses=N   grow the database to N warehouses
 *   ffb-tpcc run [--mode=procs|client]  the timed mix (or --transactions=N)
 *   ffb-tpcc check [--full]         TPC-C consistency conditions
 *   ffb-tpcc drop                   drop the database
 *
 * Every answer is checked; a wrong one (a missing row, a count that does
 * not match, round trips other than the transaction's formula, totals that
 * do not add up) fails the command with exit code 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <fastfb.h>

/* ---- options and sizes ------------------------------------------------- */

typedef struct opts {
    const char *dsn, *user, *password;
    int warehouses;   /* load: target count */
    int threads;      /* load: connections */
    int scale;        /* divisor of ITEM, STOCK, CUSTOMER, ORDERS */
    int terminals;
    int warmup, duration;
    int transactions; /* per terminal; 0 = timed */
    uint64_t seed;
    int full;         /* check: the order-line count condition too */
    int quiet;
    int scale_given;
    int fixed_home;
    int client;       /* run: --mode=client (1) or procs (0, default) */
} opts;

static opts O = {
    .user = "SYSDBA", .password = "masterkey", .threads = 2, .scale = 1,
    .terminals = 20, .warmup = 15, .duration = 60, .seed = 1,
};

/* Population per warehouse at scale 1 is TPC-C's (clause 4.3.3.1). */
static int N_ITEMS, N_CUST, N_ORD, N_NEW;
#define N_DIST 10

static void set_sizes(int scale) {
    N_ITEMS = 100000 / scale;
    N_CUST = 3000 / scale;
    N_ORD = N_CUST;
    N_NEW = N_ORD * 900 / 3000;
}

static atomic_int g_failed;

static void failf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("ffb-tpcc: FAILED: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    atomic_store(&g_failed, 1);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- random values (TPC-C clause 2.1.6 and 4.3.2) ------------------------ */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnext(rng *r) { /* xorshift64* */
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}

static void rseed(rng *r, uint64_t seed) {
    r->s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    if (r->s == 0) r->s = 1;
    for (int i = 0; i < 4; i++) rnext(r);
}

static int64_t rrange(rng *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(rnext(r) % (uint64_t)(hi - lo + 1));
}

/* NURand(A, x, y); C fixed per kind (the run's and the load's C for c_last
   differ by an allowed delta, clause 2.1.6.1). */
static int64_t nurand(rng *r, int64_t a, int64_t x, int64_t y, int64_t c) {
    return (((rrange(r, 0, a) | rrange(r, x, y)) + c) % (y - x + 1)) + x;
}

static void astring(rng *r, char *out, int lo, int hi) {
    static const char al[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    int n = (int)rrange(r, lo, hi);
    for (int i = 0; i < n; i++) out[i] = al[rnext(r) % 62];
    out[n] = 0;
}

static void nstring(rng *r, char *out, int n) {
    for (int i = 0; i < n; i++) out[i] = (char)('0' + rnext(r) % 10);
    out[n] = 0;
}

/* i_data / s_data: 10% hold "ORIGINAL" somewhere (clause 4.3.3.1). */
static void data_string(rng *r, char *out) {
    astring(r, out, 26, 50);
    if (rrange(r, 1, 10) == 1) {
        size_t n = strlen(out);
        size_t at = (size_t)rrange(r, 0, (int64_t)n - 8);
        memcpy(out + at, "ORIGINAL", 8);
    }
}

static void last_name(int num, char *out) {
    static const char *syl[10] = {"BAR", "OUGHT", "ABLE", "PRI", "PRES",
                                  "ESE", "ANTI", "CALLY", "ATION", "EING"};
    sprintf(out, "%s%s%s", syl[num / 100], syl[(num / 10) % 10],
            syl[num % 10]);
}

#define C_LAST_LOAD 157
#define C_LAST_RUN 223 /* |223 - 157| = 66: within 65..119, not 96/112 */
#define C_CID 259
#define C_OLIID 7911

/* c_last of a run: NURand(255, 0, 999) over the names that exist. */
static int run_last_num(rng *r) {
    int top = N_CUST < 1000 ? N_CUST - 1 : 999;
    return (int)nurand(r, 255, 0, top, C_LAST_RUN);
}

/* ---- connections --------------------------------------------------------- */

static ffb_conn *open_conn(void) {
    ffb_conn_options co;
    ffb_conn_options_init(&co);
    co.dsn = O.dsn;
    co.user = O.user;
    co.password = O.password;
    co.io_timeout_ms = 120000;
    ffb_conn *c = NULL;
    if (ffb_conn_new(&co, &c) != 0 || ffb_conn_connect(c) != 0) {
        failf("connect to %s: %s", O.dsn,
              c ? ffb_error_message(ffb_conn_error(c)) : "out of memory");
        ffb_conn_free(c);
        return NULL;
    }
    return c;
}

static const char *cerr(ffb_conn *c) {
    return ffb_error_message(ffb_conn_error(c));
}

static uint64_t conn_rt(ffb_conn *c) {
    ffb_stats s;
    ffb_conn_stats(c, &s, sizeof s);
    return s.round_trips;
}

static int exec_sql(ffb_conn *c, const char *sql) {
    ffb_tx *tx = NULL;
    int rc = ffb_tx_begin(c, NULL, &tx);
    if (rc == 0) rc = ffb_conn_execute_immediate(c, tx, sql, (size_t)-1);
    if (rc == 0) rc = ffb_tx_commit(tx);
    if (rc != 0) failf("%s: %s", sql, cerr(c));
    ffb_tx_free(tx);
    return rc;
}

/* One int64 from a one-row query in a transaction of its own. */
static int query_i64(ffb_conn *c, const char *sql, int64_t *out) {
    ffb_tx *tx = NULL;
    ffb_stmt *s = NULL;
    int rc = ffb_tx_begin(c, NULL, &tx);
    if (rc == 0) rc = ffb_stmt_new(c, &s);
    if (rc == 0) rc = ffb_stmt_prepare(s, tx, sql, (size_t)-1);
    if (rc == 0) rc = ffb_stmt_execute(s, tx);
    if (rc == 0) rc = ffb_stmt_fetch(s) == 1 ? 0 : -1;
    if (rc == 0 && ffb_stmt_is_null(s, 0) == 1) *out = 0;
    else if (rc == 0) rc = ffb_stmt_get_int64(s, 0, out);
    if (rc != 0) failf("%s: %s", sql, cerr(c));
    ffb_stmt_free(s);
    if (tx) ffb_tx_commit(tx);
    ffb_tx_free(tx);
    return rc;
}

static int64_t db_bytes(ffb_conn *c) {
    int64_t v = -1;
    if (query_i64(c, "select mon$pages * mon$page_size from mon$database", &v))
        return -1;
    return v;
}

/* ---- schema -------------------------------------------------------------- */

static const char *const DDL_TABLES[] = {
    "create table tpcc_meta (k varchar(16) not null primary key, v bigint)",
    "create table warehouse (w_id integer not null, w_name varchar(10),"
    " w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20),"
    " w_state char(2), w_zip char(9), w_tax numeric(4,4),"
    " w_ytd numeric(12,2))",
    "create table district (d_id smallint not null, d_w_id integer not null,"
    " d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),"
    " d_city varchar(20), d_state char(2), d_zip char(9),"
    " d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id integer)",
    "create table customer (c_id integer not null, c_d_id smallint not null,"
    " c_w_id integer not null, c_first varchar(16), c_middle char(2),"
    " c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20),"
    " c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16),"
    " c_since timestamp, c_credit char(2), c_credit_lim numeric(12,2),"
    " c_discount numeric(4,4), c_balance numeric(12,2),"
    " c_ytd_payment numeric(12,2), c_payment_cnt smallint,"
    " c_delivery_cnt smallint, c_data varchar(500))",
    "create table history (h_c_id integer, h_c_d_id smallint,"
    " h_c_w_id integer, h_d_id smallint, h_w_id integer, h_date timestamp,"
    " h_amount numeric(6,2), h_data varchar(24))",
    "create table new_order (no_o_id integer not null,"
    " no_d_id smallint not null, no_w_id integer not null)",
    "create table orders (o_id integer not null, o_d_id smallint not null,"
    " o_w_id integer not null, o_c_id integer, o_entry_d timestamp,"
    " o_carrier_id smallint, o_ol_cnt smallint, o_all_local smallint)",
    "create table order_line (ol_o_id integer not null,"
    " ol_d_id smallint not null, ol_w_id integer not null,"
    " ol_number smallint not null, ol_i_id integer,"
    " ol_supply_w_id integer, ol_delivery_d timestamp,"
    " ol_quantity smallint, ol_amount numeric(6,2), ol_dist_info char(24))",
    "create table item (i_id integer not null, i_im_id integer,"
    " i_name varchar(24), i_price numeric(5,2), i_data varchar(50))",
    "create table stock (s_i_id integer not null, s_w_id integer not null,"
    " s_quantity smallint, s_dist_01 char(24), s_dist_02 char(24),"
    " s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24),"
    " s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24),"
    " s_dist_09 char(24), s_dist_10 char(24), s_ytd integer,"
    " s_order_cnt smallint, s_remote_cnt smallint, s_data varchar(50))",
    NULL};

/* Created after the first load, as IBSurgeon did. */
static const char *const DDL_INDEXES[] = {
    "alter table warehouse add constraint pk_warehouse primary key (w_id)",
    "alter table district add constraint pk_district primary key"
    " (d_w_id, d_id)",
    "alter table customer add constraint pk_customer primary key"
    " (c_w_id, c_d_id, c_id)",
    "create index customer_last on customer (c_w_id, c_d_id, c_last,"
    " c_first)",
    "alter table new_order add constraint pk_new_order primary key"
    " (no_w_id, no_d_id, no_o_id)",
    "alter table orders add constraint pk_orders primary key"
    " (o_w_id, o_d_id, o_id)",
    "create index orders_customer on orders (o_w_id, o_d_id, o_c_id, o_id)",
    "alter table order_line add constraint pk_order_line primary key"
    " (ol_w_id, ol_d_id, ol_o_id, ol_number)",
    "alter table item add constraint pk_item primary key (i_id)",
    "alter table stock add constraint pk_stock primary key (s_w_id, s_i_id)",
    NULL};

static int meta_get(ffb_conn *c, const char *k, int64_t *v) {
    char sql[128];
    snprintf(sql, sizeof sql,
             "select coalesce(max(v), -1) from tpcc_meta where k = '%s'", k);
    return query_i64(c, sql, v);
}

static int meta_set(ffb_conn *c, const char *k, int64_t v) {
    char sql[160];
    snprintf(sql, sizeof sql,
             "update or insert into tpcc_meta (k, v) values ('%s', %" PRId64
             ") matching (k)", k, v);
    return exec_sql(c, sql);
}

/* Attach, or create the database (page size 16384, UTF8) with the schema.
   *cur gets the warehouses loaded so far, *indexed whether the indexes are
   there. The scale of an existing database wins over --scale. Only
   load and create (may_create) make a missing database. */
static ffb_conn *open_or_create(int *cur, int *indexed, int may_create) {
    ffb_conn_options co;
    ffb_conn_options_init(&co);
    co.dsn = O.dsn;
    co.user = O.user;
    co.password = O.password;
    ffb_conn *c = NULL;
    if (ffb_conn_new(&co, &c) != 0) {
        failf("bad --dsn %s", O.dsn);
        ffb_conn_free(c);
        return NULL;
    }
    int created = 0;
    if (ffb_conn_connect(c) != 0) {
        if (!may_create) {
            failf("attach %s: %s", O.dsn, cerr(c));
            ffb_conn_free(c);
            return NULL;
        }
        ffb_create_options cr = FFB_CREATE_OPTIONS_INIT;
        cr.page_size = 16384;
        cr.charset = "UTF8";
        if (ffb_conn_create_database(c, &cr) != 0) {
            failf("neither attach nor create %s: %s", O.dsn, cerr(c));
            ffb_conn_free(c);
            return NULL;
        }
        created = 1;
        for (int i = 0; DDL_TABLES[i]; i++)
            if (exec_sql(c, DDL_TABLES[i])) goto fail;
        if (meta_set(c, "scale", O.scale) || meta_set(c, "warehouses", 0) ||
            meta_set(c, "indexed", 0))
            goto fail;
    }
    int64_t sc, w, ix;
    if (meta_get(c, "scale", &sc) || meta_get(c, "warehouses", &w) ||
        meta_get(c, "indexed", &ix))
        goto fail;
    if (sc < 1 || w < 0) {
        failf("%s holds no ffb-tpcc database (tpcc_meta)", O.dsn);
        goto fail;
    }
    if (!created && sc != O.scale && O.scale_given && !O.quiet)
        fprintf(stderr, "ffb-tpcc: the database has scale %" PRId64
                        "; using it\n", sc);
    O.scale = (int)sc;
    set_sizes(O.scale);
    *cur = (int)w;
    *indexed = ix == 1;
    return c;
fail:
    ffb_conn_free(c);
    return NULL;
}

/* ---- loader --------------------------------------------------------------- */

enum { T_ITEM, T_WAREHOUSE, T_DISTRICT, T_STOCK, T_CUSTOMER, T_HISTORY,
       T_ORDERS, T_NEW_ORDER, T_ORDER_LINE, T_COUNT };

static const char *const INS[T_COUNT] = {
    "insert into item values (?, ?, ?, ?, ?)",
    "insert into warehouse values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "insert into district values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "insert into stock values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
    " ?, ?)",
    "insert into customer values (?, ?, ?, ?, 'OE', ?, ?, ?, ?, ?, ?, ?,"
    " localtimestamp, ?, 50000, ?, -10, 10, 1, 0, ?)",
    "insert into history values (?, ?, ?, ?, ?, localtimestamp, 10, ?)",
    "insert into orders values (?, ?, ?, ?, localtimestamp, ?, ?, 1)",
    "insert into new_order values (?, ?, ?)",
    "insert into order_line values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
};

#define LOAD_BATCH 1000

/* A unit of load work: one transaction. */
typedef struct unit {
    int kind; /* 0 items [a, b], 1 warehouse w + districts, 2 stock of w for
                 items [a, b], 3 customers + history of (w, d), 4 orders of
                 (w, d) */
    int w, d, a, b;
} unit;

typedef struct loader {
    ffb_conn *conn;
    ffb_tx *tx;
    ffb_stmt *st[T_COUNT];
    ffb_batch *bt[T_COUNT];
    size_t pending[T_COUNT];
    rng r;
} loader;

static unit *g_units;
static size_t g_nunits, g_next_unit;
static pthread_mutex_t g_unit_mx = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t g_rows_done;

static int ld_flush(loader *l, int t) {
    if (l->pending[t] == 0) return 0;
    if (ffb_batch_execute(l->bt[t], l->tx) != 0 ||
        ffb_batch_row_count(l->bt[t]) != l->pending[t]) {
        failf("batch insert of %zu rows (%s): %s", l->pending[t], INS[t],
              cerr(l->conn));
        return -1;
    }
    atomic_fetch_add(&g_rows_done, l->pending[t]);
    l->pending[t] = 0;
    return 0;
}

/* Add the row bound on statement t. */
static int ld_add(loader *l, int t) {
    if (ffb_batch_add(l->bt[t]) != 0) {
        failf("batch add (%s): %s", INS[t], cerr(l->conn));
        return -1;
    }
    if (++l->pending[t] >= LOAD_BATCH) return ld_flush(l, t);
    return 0;
}

static void bt(loader *l, int t, unsigned i, const char *s) {
    ffb_stmt_bind_text(l->st[t], i, s, (size_t)-1);
}
static void bi(loader *l, int t, unsigned i, int64_t v) {
    ffb_stmt_bind_int64(l->st[t], i, v);
}
static void bn(loader *l, int t, unsigned i, int64_t v, int scale) {
    ffb_stmt_bind_numeric(l->st[t], i, v, scale);
}

/* Street, city, state, zip at parameter i.. i+4. */
static void bind_address(loader *l, int t, unsigned i) {
    char b[32];
    astring(&l->r, b, 10, 20); bt(l, t, i, b);
    astring(&l->r, b, 10, 20); bt(l, t, i + 1, b);
    astring(&l->r, b, 10, 20); bt(l, t, i + 2, b);
    astring(&l->r, b, 2, 2); bt(l, t, i + 3, b);
    nstring(&l->r, b, 4); strcat(b, "11111"); bt(l, t, i + 4, b);
}

static int load_unit(loader *l, const unit *u) {
    char b[600];
    rseed(&l->r, (uint64_t)u->kind * 1000003u + (uint64_t)u->w * 7919u +
                     (uint64_t)u->d * 131u + (uint64_t)u->a + O.seed);
    if (ffb_tx_begin(l->conn, NULL, &l->tx) != 0) {
        failf("begin: %s", cerr(l->conn));
        return -1;
    }
    int rc = 0;
    switch (u->kind) {
    case 0:
        for (int i = u->a; rc == 0 && i <= u->b; i++) {
            bi(l, T_ITEM, 0, i);
            bi(l, T_ITEM, 1, rrange(&l->r, 1, 10000));
            astring(&l->r, b, 14, 24); bt(l, T_ITEM, 2, b);
            bn(l, T_ITEM, 3, rrange(&l->r, 100, 10000), -2);
            data_string(&l->r, b); bt(l, T_ITEM, 4, b);
            rc = ld_add(l, T_ITEM);
        }
        break;
    case 1:
        bi(l, T_WAREHOUSE, 0, u->w);
        astring(&l->r, b, 6, 10); bt(l, T_WAREHOUSE, 1, b);
        bind_address(l, T_WAREHOUSE, 2);
        bn(l, T_WAREHOUSE, 7, rrange(&l->r, 0, 2000), -4);
        bn(l, T_WAREHOUSE, 8, 30000000, -2); /* 300,000.00 = 10 x d_ytd */
        rc = ld_add(l, T_WAREHOUSE);
        for (int d = 1; rc == 0 && d <= N_DIST; d++) {
            bi(l, T_DISTRICT, 0, d);
            bi(l, T_DISTRICT, 1, u->w);
            astring(&l->r, b, 6, 10); bt(l, T_DISTRICT, 2, b);
            bind_address(l, T_DISTRICT, 3);
            bn(l, T_DISTRICT, 8, rrange(&l->r, 0, 2000), -4);
            bn(l, T_DISTRICT, 9, 3000000, -2);
            bi(l, T_DISTRICT, 10, N_ORD + 1);
            rc = ld_add(l, T_DISTRICT);
        }
        break;
    case 2:
        for (int i = u->a; rc == 0 && i <= u->b; i++) {
            bi(l, T_STOCK, 0, i);
            bi(l, T_STOCK, 1, u->w);
            bi(l, T_STOCK, 2, rrange(&l->r, 10, 100));
            for (unsigned k = 0; k < 10; k++) {
                astring(&l->r, b, 24, 24);
                bt(l, T_STOCK, 3 + k, b);
            }
            bi(l, T_STOCK, 13, 0);
            bi(l, T_STOCK, 14, 0);
            bi(l, T_STOCK, 15, 0);
            data_string(&l->r, b); bt(l, T_STOCK, 16, b);
            rc = ld_add(l, T_STOCK);
        }
        break;
    case 3:
        for (int c = 1; rc == 0 && c <= N_CUST; c++) {
            bi(l, T_CUSTOMER, 0, c);
            bi(l, T_CUSTOMER, 1, u->d);
            bi(l, T_CUSTOMER, 2, u->w);
            astring(&l->r, b, 8, 16); bt(l, T_CUSTOMER, 3, b);
            last_name(c <= 1000 ? c - 1
                                : (int)nurand(&l->r, 255, 0, 999, C_LAST_LOAD),
                      b);
            bt(l, T_CUSTOMER, 4, b);
            bind_address(l, T_CUSTOMER, 5);
            nstring(&l->r, b, 16); bt(l, T_CUSTOMER, 10, b);
            bt(l, T_CUSTOMER, 11, rrange(&l->r, 1, 10) == 1 ? "BC" : "GC");
            bn(l, T_CUSTOMER, 12, rrange(&l->r, 0, 5000), -4);
            astring(&l->r, b, 300, 500); bt(l, T_CUSTOMER, 13, b);
            rc = ld_add(l, T_CUSTOMER);
            if (rc) break;
            bi(l, T_HISTORY, 0, c);
            bi(l, T_HISTORY, 1, u->d);
            bi(l, T_HISTORY, 2, u->w);
            bi(l, T_HISTORY, 3, u->d);
            bi(l, T_HISTORY, 4, u->w);
            astring(&l->r, b, 12, 24); bt(l, T_HISTORY, 5, b);
            rc = ld_add(l, T_HISTORY);
        }
        break;
    case 4: {
        /* o_c_id: a random permutation of 1..N_CUST */
        int *perm = malloc(sizeof(int) * (size_t)N_CUST);
        if (!perm) { failf("out of memory"); rc = -1; break; }
        for (int i = 0; i < N_CUST; i++) perm[i] = i + 1;
        for (int i = N_CUST - 1; i > 0; i--) {
            int j = (int)rrange(&l->r, 0, i), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        int first_new = N_ORD - N_NEW + 1;
        for (int o = 1; rc == 0 && o <= N_ORD; o++) {
            int cnt = (int)rrange(&l->r, 5, 15), delivered = o < first_new;
            bi(l, T_ORDERS, 0, o);
            bi(l, T_ORDERS, 1, u->d);
            bi(l, T_ORDERS, 2, u->w);
            bi(l, T_ORDERS, 3, perm[o - 1]);
            if (delivered) bi(l, T_ORDERS, 4, rrange(&l->r, 1, 10));
            else ffb_stmt_bind_null(l->st[T_ORDERS], 4);
            bi(l, T_ORDERS, 5, cnt);
            rc = ld_add(l, T_ORDERS);
            for (int n = 1; rc == 0 && n <= cnt; n++) {
                bi(l, T_ORDER_LINE, 0, o);
                bi(l, T_ORDER_LINE, 1, u->d);
                bi(l, T_ORDER_LINE, 2, u->w);
                bi(l, T_ORDER_LINE, 3, n);
                bi(l, T_ORDER_LINE, 4, rrange(&l->r, 1, N_ITEMS));
                bi(l, T_ORDER_LINE, 5, u->w);
                if (delivered)
                    ffb_stmt_bind_timestamp(l->st[T_ORDER_LINE], 6, 2026, 1,
                                            1, 12, 0, 0, 0);
                else ffb_stmt_bind_null(l->st[T_ORDER_LINE], 6);
                bi(l, T_ORDER_LINE, 7, 5);
                bn(l, T_ORDER_LINE, 8,
                   delivered ? 0 : rrange(&l->r, 1, 999999), -2);
                astring(&l->r, b, 24, 24); bt(l, T_ORDER_LINE, 9, b);
                rc = ld_add(l, T_ORDER_LINE);
            }
            if (rc == 0 && !delivered) {
                bi(l, T_NEW_ORDER, 0, o);
                bi(l, T_NEW_ORDER, 1, u->d);
                bi(l, T_NEW_ORDER, 2, u->w);
                rc = ld_add(l, T_NEW_ORDER);
            }
        }
        free(perm);
        break;
    }
    }
    for (int t = 0; rc == 0 && t < T_COUNT; t++) rc = ld_flush(l, t);
    if (rc == 0 && ffb_tx_commit(l->tx) != 0) {
        failf("commit of a load unit: %s", cerr(l->conn));
        rc = -1;
    }
    ffb_tx_free(l->tx);
    l->tx = NULL;
    return rc;
}

static void *load_thread(void *arg) {
    (void)arg;
    loader l = {0};
    l.conn = open_conn();
    if (!l.conn) return NULL;
    ffb_tx *tx = NULL;
    ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
    bo.no_record_counts = 1;
    if (ffb_tx_begin(l.conn, NULL, &tx) != 0) failf("%s", cerr(l.conn));
    for (int t = 0; tx && t < T_COUNT; t++) {
        if (ffb_stmt_new(l.conn, &l.st[t]) != 0 ||
            ffb_stmt_prepare(l.st[t], tx, INS[t], (size_t)-1) != 0 ||
            ffb_batch_new(l.st[t], &bo, &l.bt[t]) != 0) {
            failf("prepare %s: %s", INS[t], cerr(l.conn));
            break;
        }
    }
    if (tx) ffb_tx_commit(tx);
    ffb_tx_free(tx);
    while (!atomic_load(&g_failed)) {
        pthread_mutex_lock(&g_unit_mx);
        size_t i = g_next_unit < g_nunits ? g_next_unit++ : g_nunits;
        pthread_mutex_unlock(&g_unit_mx);
        if (i == g_nunits) break;
        if (load_unit(&l, &g_units[i])) break;
    }
    for (int t = 0; t < T_COUNT; t++) {
        ffb_batch_free(l.bt[t]);
        ffb_stmt_free(l.st[t]);
    }
    ffb_conn_free(l.conn);
    return NULL;
}

static void add_unit(int kind, int w, int d, int a, int b) {
    unit u = {kind, w, d, a, b};
    g_units[g_nunits++] = u;
}

/* The progress bar: rows, rows/s and the database's growth in MB/s, read
   from MON$DATABASE by a connection of its own once a second. */
typedef struct progress {
    uint64_t total_rows;
    int64_t bytes0;
    double t0;
    atomic_int stop;
} progress;

static void *progress_thread(void *arg) {
    progress *p = arg;
    ffb_conn *c = open_conn();
    int tty = isatty(2);
    double last_print = 0;
    while (c && !atomic_load(&p->stop)) {
        for (int i = 0; i < 10 && !atomic_load(&p->stop); i++)
            usleep(100000);
        double t = now_s() - p->t0;
        uint64_t rows = atomic_load(&g_rows_done);
        int64_t bytes = db_bytes(c);
        if (bytes < 0) break;
        double mb = (double)(bytes - p->bytes0) / 1048576.0;
        int pct = p->total_rows ? (int)(100.0 * rows / p->total_rows) : 100;
        if (pct > 100) pct = 100;
        char bar[41];
        memset(bar, '#', (size_t)(pct * 40 / 100));
        memset(bar + pct * 40 / 100, '.', (size_t)(40 - pct * 40 / 100));
        bar[40] = 0;
        if (O.quiet) continue;
        if (tty)
            fprintf(stderr, "\r[%s] %3d%% %9" PRIu64 " rows %7.0f rows/s"
                            " %6.1f MB/s  db %7.1f MB  %5.0f s ",
                    bar, pct, rows, rows / t, mb / t, bytes / 1048576.0, t);
        else if (t - last_print >= 10) {
            fprintf(stderr, "[%s] %3d%% %" PRIu64 " rows %.0f rows/s %.1f MB/s"
                            " db %.1f MB %.0f s\n",
                    bar, pct, rows, rows / t, mb / t, bytes / 1048576.0, t);
            last_print = t;
        }
    }
    if (tty && !O.quiet) fputc('\n', stderr);
    ffb_conn_free(c);
    return NULL;
}

static int cmd_load(void) {
    int cur = 0, indexed = 0;
    ffb_conn *c = open_or_create(&cur, &indexed, 1);
    if (!c) return 1;
    if (O.warehouses <= cur) {
        printf("RESULT load warehouses=%d rows=0 seconds=0 bytes_before=%"
               PRId64 " bytes_after=%" PRId64 " mb_s=0 rows_s=0 index_s=0\n",
               cur, db_bytes(c), db_bytes(c));
        ffb_conn_free(c);
        return 0;
    }
    int stock_parts = 4;
    g_units = calloc((size_t)(O.warehouses - cur) * (1 + stock_parts + 2 * N_DIST)
                         + 4, sizeof(unit));
    if (!g_units) { failf("out of memory"); return 1; }
    uint64_t total = 0;
    if (cur == 0) {
        for (int p = 0; p < 4; p++) {
            add_unit(0, 0, 0, p * N_ITEMS / 4 + 1, (p + 1) * N_ITEMS / 4);
        }
        total += (uint64_t)N_ITEMS;
    }
    /* Big units first so both connections stay busy to the end. */
    for (int w = cur + 1; w <= O.warehouses; w++) {
        for (int d = 1; d <= N_DIST; d++) add_unit(4, w, d, 0, 0);
        for (int p = 0; p < stock_parts; p++)
            add_unit(2, w, 0, p * N_ITEMS / stock_parts + 1,
                     (p + 1) * N_ITEMS / stock_parts);
        for (int d = 1; d <= N_DIST; d++) add_unit(3, w, d, 0, 0);
        add_unit(1, w, 0, 0, 0);
        /* orders: N_ORD x (1 + about 10 lines) + new orders (an estimate
           for the progress bar; every batch's count is checked) */
        total += 1 + N_DIST + (uint64_t)N_ITEMS +
                 (uint64_t)N_DIST * (2u * N_CUST + N_ORD * 11u + N_NEW);
    }
    int64_t bytes0 = db_bytes(c);
    progress pg = {.total_rows = total, .bytes0 = bytes0, .t0 = now_s()};
    pthread_t pt, th[64];
    int nth = O.threads < 1 ? 1 : O.threads > 64 ? 64 : O.threads;
    pthread_create(&pt, NULL, progress_thread, &pg);
    for (int i = 0; i < nth; i++) pthread_create(&th[i], NULL, load_thread, NULL);
    for (int i = 0; i < nth; i++) pthread_join(th[i], NULL);
    double load_s = now_s() - pg.t0;
    atomic_store(&pg.stop, 1);
    pthread_join(pt, NULL);
    free(g_units);
    if (atomic_load(&g_failed)) {
        fprintf(stderr, "ffb-tpcc: the load failed; drop the database and"
                        " load again\n");
        ffb_conn_free(c);
        return 1;
    }
    int64_t bytes1 = db_bytes(c);
    double t1 = now_s(), index_s = 0;
    if (!indexed) {
        for (int i = 0; DDL_INDEXES[i]; i++)
            if (exec_sql(c, DDL_INDEXES[i])) { ffb_conn_free(c); return 1; }
        if (meta_set(c, "indexed", 1)) { ffb_conn_free(c); return 1; }
        index_s = now_s() - t1;
    }
    if (meta_set(c, "warehouses", O.warehouses)) { ffb_conn_free(c); return 1; }
    int64_t bytes2 = db_bytes(c);
    uint64_t rows = atomic_load(&g_rows_done);
    double mb = (double)(bytes1 - bytes0) / 1048576.0;
    printf("loaded warehouses %d..%d: %" PRIu64 " rows in %.1f s (%.0f rows/s),"
           " database %.1f -> %.1f MB (%.2f MB/s)%s\n",
           cur + 1, O.warehouses, rows, load_s, rows / load_s,
           bytes0 / 1048576.0, bytes1 / 1048576.0, mb / load_s,
           indexed ? "" : "; indexes created after the load");
    if (!indexed)
        printf("indexes: %.1f s, database %.1f MB\n", index_s,
               bytes2 / 1048576.0);
    printf("RESULT load warehouses=%d rows=%" PRIu64 " seconds=%.2f"
           " bytes_before=%" PRId64 " bytes_after=%" PRId64 " mb_s=%.3f"
           " rows_s=%.0f index_s=%.2f\n",
           O.warehouses, rows, load_s, bytes0, bytes2, mb / load_s,
           rows / load_s, index_s);
    ffb_conn_free(c);
    return 0;
}

/* ---- the transactions ------------------------------------------------------ */

enum { X_NEW_ORDER, X_PAYMENT, X_ORDER_STATUS, X_DELIVERY, X_STOCK_LEVEL,
       X_COUNT };
static const char *const X_NAME[X_COUNT] = {"new_order", "payment",
    "order_status", "delivery", "stock_level"};

enum { NO_WC, NO_DIST, NO_ORD, NO_NEW, NO_ITEM, NO_STOCK, NO_LINE,
       PA_WH, PA_DIST, PA_BYNAME, PA_CUST, PA_HIST,
       OS_CUST, OS_BYNAME, OS_ORDER, OS_LINES,
       DL_NEW, DL_ORDER, DL_LINES, DL_CUST,
       SL_DIST, SL_COUNT, Q_COUNT };

static const char *const Q[Q_COUNT] = {
    "select w.w_tax, c.c_discount, c.c_last, c.c_credit from warehouse w"
    " join customer c on c.c_w_id = w.w_id where w.w_id = ? and c.c_d_id = ?"
    " and c.c_id = ?",
    "update district set d_next_o_id = d_next_o_id + 1 where d_w_id = ?"
    " and d_id = ? returning d_next_o_id - 1, d_tax",
    "insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt,"
    " o_all_local) values (?, ?, ?, ?, localtimestamp, ?, ?)",
    "insert into new_order (no_o_id, no_d_id, no_w_id) values (?, ?, ?)",
    "select i_price, i_name, i_data from item where i_id = ?",
    "update stock set s_quantity = iif(s_quantity >= ? + 10, s_quantity - ?,"
    " s_quantity - ? + 91), s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1,"
    " s_remote_cnt = s_remote_cnt + ? where s_w_id = ? and s_i_id = ?"
    " returning s_quantity, s_data, decode(cast(? as smallint), 1, s_dist_01,"
    " 2, s_dist_02, 3, s_dist_03, 4, s_dist_04, 5, s_dist_05, 6, s_dist_06,"
    " 7, s_dist_07, 8, s_dist_08, 9, s_dist_09, s_dist_10)",
    "insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id,"
    " ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info)"
    " values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "update warehouse set w_ytd = w_ytd + ? where w_id = ? returning w_name",
    "update district set d_ytd = d_ytd + ? where d_w_id = ? and d_id = ?"
    " returning d_name",
    "select c_id from customer where c_w_id = ? and c_d_id = ? and c_last = ?"
    " order by c_first",
    "update customer set c_balance = c_balance - ?, c_ytd_payment ="
    " c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data ="
    " iif(c_credit = 'BC', left(cast(? as varchar(60)) || c_data, 500),"
    " c_data) where c_w_id = ? and c_d_id = ? and c_id = ?"
    " returning c_balance, c_credit",
    "insert into history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date,"
    " h_amount, h_data) values (?, ?, ?, ?, ?, localtimestamp, ?, ?)",
    "select c_balance, c_first, c_middle, c_last from customer where"
    " c_w_id = ? and c_d_id = ? and c_id = ?",
    "select c_id, c_balance, c_first, c_middle from customer where c_w_id = ?"
    " and c_d_id = ? and c_last = ? order by c_first",
    "select first 1 o_id, o_entry_d, o_carrier_id, o_ol_cnt from orders"
    " where o_w_id = ? and o_d_id = ? and o_c_id = ? order by o_id desc",
    "select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d"
    " from order_line where ol_w_id = ? and ol_d_id = ? and ol_o_id = ?",
    "delete from new_order where no_w_id = ? and no_d_id = ? and no_o_id ="
    " (select min(no_o_id) from new_order where no_w_id = ? and no_d_id = ?)"
    " returning no_o_id",
    "update orders set o_carrier_id = ? where o_w_id = ? and o_d_id = ? and"
    " o_id = ? returning o_c_id, o_ol_cnt",
    "update order_line set ol_delivery_d = localtimestamp where ol_w_id = ?"
    " and ol_d_id = ? and ol_o_id = ?",
    "update customer set c_balance = c_balance + (select sum(ol_amount) from"
    " order_line where ol_w_id = ? and ol_d_id = ? and ol_o_id = ?),"
    " c_delivery_cnt = c_delivery_cnt + 1 where c_w_id = ? and c_d_id = ?"
    " and c_id = ? returning c_balance",
    "select d_next_o_id from district where d_w_id = ? and d_id = ?",
    "select count(distinct s.s_i_id) from order_line ol join stock s on"
    " s.s_w_id = ol.ol_w_id and s.s_i_id = ol.ol_i_id where ol.ol_w_id = ?"
    " and ol.ol_d_id = ? and ol.ol_o_id >= ? and ol.ol_o_id < ? and"
    " s.s_quantity < ?",
};

typedef struct xstats {
    uint64_t count, rt, rt_expected, rt_checked_ops, retries, rollbacks;
    uint32_t *lat; /* microseconds */
    size_t nlat, cap;
} xstats;

typedef struct term {
    int id, home_w, nw;
    ffb_conn *conn;
    ffb_tx *tx;
    ffb_stmt *q[Q_COUNT];
    ffb_stmt *p[X_COUNT]; /* --mode=procs: the five calls */
    rng r;
    xstats x[X_COUNT];
    int64_t paid_cents;   /* committed payments */
    int64_t new_orders;   /* committed new orders (incl. rolled back: no) */
    int64_t delivered;    /* committed deliveries of one order */
    int64_t expect_rt;    /* set by each transaction */
    double cpu_s, sys_s;  /* client CPU (user + system; system) in the
                             measured part */
} term;

static atomic_int g_phase; /* 0 warm-up, 1 measured, 2 stop */

/* The transaction's home warehouse: drawn uniformly from all warehouses for
   every transaction, so the data the terminals touch grows with the
   database and 20 terminals over many warehouses rarely wait on each
   other's warehouse row (the growth test's point); --fixed-home keeps
   TPC-C's terminal-to-warehouse binding (terminal i: warehouse i mod W + 1). */
static int home(term *t) {
    return O.fixed_home ? t->home_w : (int)rrange(&t->r, 1, t->nw);
}

enum { XR_OK = 0, XR_RETRY = 1, XR_FAIL = -1 };

static int retryable_error(const ffb_error *e) {
    return ffb_error_has(e, FFB_GDS_DEADLOCK) ||
           ffb_error_has(e, 335544451u) || /* update_conflict */
           ffb_error_has(e, 335544345u) || /* lock_conflict */
           ffb_error_has(e, 335544510u) || /* lock_timeout */
           ffb_error_has(e, 335544878u) || /* concurrent transaction */
           /* Firebird 3, read committed: the row a statement was about to
              change was deleted by a transaction that committed meanwhile
              (two deliveries of one district); isc_random with this text */
           (ffb_error_has(e, 335544382u) &&
            strstr(ffb_error_message(e), "cannot update erased record"));
}

static int retryable(ffb_conn *c) { return retryable_error(ffb_conn_error(c)); }

/* A server error inside a transaction: roll back; retry conflicts. */
static int xerr(term *t, const char *what) {
    int r = retryable(t->conn);
    if (!r)
        failf("terminal %d: %s: %s (gds %u)", t->id, what, cerr(t->conn),
              ffb_error_gds(ffb_conn_error(t->conn)));
    if (t->tx && ffb_tx_is_active(t->tx)) ffb_tx_rollback(t->tx);
    ffb_tx_free(t->tx);
    t->tx = NULL;
    return r ? XR_RETRY : XR_FAIL;
}

static int xbad(term *t, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    failf("terminal %d: wrong answer: %s", t->id, msg);
    if (t->tx && ffb_tx_is_active(t->tx)) ffb_tx_rollback(t->tx);
    ffb_tx_free(t->tx);
    t->tx = NULL;
    return XR_FAIL;
}

static int xbegin(term *t, int read_only) {
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    to.isolation = FFB_ISO_READ_COMMITTED;
    to.lock_timeout = 10;
    to.read_only = read_only;
    if (ffb_tx_begin(t->conn, &to, &t->tx) != 0) {
        failf("begin: %s", cerr(t->conn));
        return -1;
    }
    return 0;
}

static int xcommit(term *t) {
    if (ffb_tx_commit(t->tx) != 0) return xerr(t, "commit");
    ffb_tx_free(t->tx);
    t->tx = NULL;
    return XR_OK;
}

/* Bind n integer parameters 0..n-1 of s (int64_t arguments). */
static void bind_ints(ffb_stmt *s, unsigned n, ...) {
    va_list ap;
    va_start(ap, n);
    for (unsigned i = 0; i < n; i++)
        ffb_stmt_bind_int64(s, i, va_arg(ap, int64_t));
    va_end(ap);
}

#define BI(k, i, v) ffb_stmt_bind_int64(t->q[k], i, v)
#define BN(k, i, v) ffb_stmt_bind_numeric(t->q[k], i, v, -2)
#define EXEC(k) (ffb_stmt_execute(t->q[k], t->tx) == 0)

/* An integer column; INT64_MIN when NULL. */
static int64_t col_i64(ffb_stmt *st, unsigned col) {
    int64_t v = INT64_MIN;
    if (ffb_stmt_is_null(st, col) == 0) ffb_stmt_get_int64(st, col, &v);
    return v;
}

/* A numeric column in cents (scale -2) or 1e-4 units (-4). */
static int64_t col_num(ffb_stmt *st, unsigned col, int want_scale) {
    int64_t v;
    int sc;
    if (ffb_stmt_is_null(st, col) != 0 ||
        ffb_stmt_get_numeric(st, col, &v, &sc) != 0)
        return INT64_MIN;
    for (; sc < want_scale; sc++) v /= 10;
    for (; sc > want_scale; sc--) v *= 10;
    return v;
}

static int64_t geti(term *t, int q, unsigned col) {
    return col_i64(t->q[q], col);
}

static int64_t getn(term *t, int q, unsigned col, int want_scale) {
    return col_num(t->q[q], col, want_scale);
}

/* The row of a singleton RETURNING: 1, 0 when no row matched. */
static int ret_row(term *t, int q) {
    int r = ffb_stmt_fetch(t->q[q]);
    if (r == 1 && ffb_stmt_is_null(t->q[q], 0) == 1) r = 0;
    return r;
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Round trips: 5 + 3 x ol_cnt (1 warehouse+customer select, 1 district
   update with RETURNING, 2 inserts, per line item select + stock update +
   line insert, 1 commit; the lazy start rides the first select). The 1%
   with an unused item id rolls back at the last line's item select:
   3 x ol_cnt + 3. */
/* ---- the input of each transaction, drawn the same way in both modes ---- */

typedef struct no_in {
    int w, d, c, cnt, rollback, all_local;
    int items[15], supw[15], qty[15];
} no_in;

static void draw_new_order(term *t, no_in *a) {
    a->w = home(t);
    a->d = (int)rrange(&t->r, 1, N_DIST);
    a->c = (int)nurand(&t->r, 1023, 1, N_CUST, C_CID);
    a->cnt = (int)rrange(&t->r, 5, 15);
    a->rollback = rrange(&t->r, 1, 100) == 1;
    a->all_local = 1;
    for (int i = 0; i < a->cnt; i++) {
        a->items[i] = (int)nurand(&t->r, 8191, 1, N_ITEMS, C_OLIID);
        a->supw[i] = a->w;
        if (t->nw > 1 && rrange(&t->r, 1, 100) == 1) {
            do a->supw[i] = (int)rrange(&t->r, 1, t->nw);
            while (a->supw[i] == a->w);
            a->all_local = 0;
        }
        a->qty[i] = (int)rrange(&t->r, 1, 10);
    }
    /* Sorted item order: two new orders never wait on each other's stock
       rows in opposite orders (no deadlock by construction). */
    qsort(a->items, (size_t)a->cnt, sizeof(int), cmp_int);
    if (a->rollback)
        a->items[a->cnt - 1] = N_ITEMS + 1; /* unused: clause 2.4.1.4 */
}

typedef struct pa_in {
    int w, d, cw, cd, byname, c;
    char last[24];
    int64_t amount; /* cents */
} pa_in;

static void draw_payment(term *t, pa_in *a) {
    a->w = home(t);
    a->d = (int)rrange(&t->r, 1, N_DIST);
    a->cw = a->w;
    a->cd = a->d;
    if (t->nw > 1 && rrange(&t->r, 1, 100) <= 15) {
        do a->cw = (int)rrange(&t->r, 1, t->nw); while (a->cw == a->w);
        a->cd = (int)rrange(&t->r, 1, N_DIST);
    }
    a->byname = rrange(&t->r, 1, 100) <= 60;
    a->c = (int)nurand(&t->r, 1023, 1, N_CUST, C_CID);
    last_name(run_last_num(&t->r), a->last);
    a->amount = rrange(&t->r, 100, 500000);
}

typedef struct os_in {
    int w, d, byname, c;
    char last[24];
} os_in;

static void draw_order_status(term *t, os_in *a) {
    a->w = home(t);
    a->d = (int)rrange(&t->r, 1, N_DIST);
    a->byname = rrange(&t->r, 1, 100) <= 60;
    a->c = (int)nurand(&t->r, 1023, 1, N_CUST, C_CID);
    last_name(run_last_num(&t->r), a->last);
}

/* ---- --mode=client: every statement from the client ---------------------- */

static int tx_new_order(term *t) {
    no_in a;
    draw_new_order(t, &a);
    int w = a.w, d = a.d, c = a.c, cnt = a.cnt, rollback = a.rollback;
    int all_local = a.all_local;
    const int *items = a.items, *supw = a.supw, *qty = a.qty;
    t->expect_rt = rollback ? 3 * cnt + 3 : 5 + 3 * cnt;
    if (xbegin(t, 0)) return XR_FAIL;
    BI(NO_WC, 0, w); BI(NO_WC, 1, d); BI(NO_WC, 2, c);
    if (!EXEC(NO_WC)) return xerr(t, "new_order: warehouse, customer");
    if (ffb_stmt_fetch(t->q[NO_WC]) != 1)
        return xbad(t, "new_order: no customer %d/%d/%d", w, d, c);
    int64_t w_tax = getn(t, NO_WC, 0, -4), c_disc = getn(t, NO_WC, 1, -4);
    if (w_tax < 0 || w_tax > 2000 || c_disc < 0 || c_disc > 5000)
        return xbad(t, "new_order: w_tax %" PRId64 " c_discount %" PRId64,
                    w_tax, c_disc);
    BI(NO_DIST, 0, w); BI(NO_DIST, 1, d);
    if (!EXEC(NO_DIST)) return xerr(t, "new_order: district");
    if (ret_row(t, NO_DIST) != 1)
        return xbad(t, "new_order: no district %d/%d", w, d);
    int64_t o_id = geti(t, NO_DIST, 0), d_tax = getn(t, NO_DIST, 1, -4);
    if (o_id <= N_ORD || d_tax < 0 || d_tax > 2000)
        return xbad(t, "new_order: d_next_o_id %" PRId64, o_id + 1);
    BI(NO_ORD, 0, o_id); BI(NO_ORD, 1, d); BI(NO_ORD, 2, w); BI(NO_ORD, 3, c);
    BI(NO_ORD, 4, cnt); BI(NO_ORD, 5, all_local);
    if (!EXEC(NO_ORD)) return xerr(t, "new_order: insert orders");
    if (ffb_stmt_rows_affected(t->q[NO_ORD]) != 1)
        return xbad(t, "new_order: orders insert count");
    BI(NO_NEW, 0, o_id); BI(NO_NEW, 1, d); BI(NO_NEW, 2, w);
    if (!EXEC(NO_NEW)) return xerr(t, "new_order: insert new_order");
    if (ffb_stmt_rows_affected(t->q[NO_NEW]) != 1)
        return xbad(t, "new_order: new_order insert count");
    int64_t total = 0;
    for (int i = 0; i < cnt; i++) {
        BI(NO_ITEM, 0, items[i]);
        if (!EXEC(NO_ITEM)) return xerr(t, "new_order: item");
        int got = ffb_stmt_fetch(t->q[NO_ITEM]);
        if (got != 1) {
            if (got == 0 && rollback && i == cnt - 1) {
                /* the expected "item number is not valid" */
                if (ffb_tx_rollback(t->tx) != 0)
                    return xerr(t, "new_order: rollback");
                ffb_tx_free(t->tx);
                t->tx = NULL;
                t->x[X_NEW_ORDER].rollbacks++;
                return XR_OK;
            }
            return xbad(t, "new_order: item %d not found", items[i]);
        }
        int64_t price = getn(t, NO_ITEM, 0, -2);
        if (price < 100 || price > 10000)
            return xbad(t, "new_order: item %d price %" PRId64, items[i], price);
        ffb_stmt *s = t->q[NO_STOCK];
        for (unsigned k = 0; k < 4; k++) ffb_stmt_bind_int64(s, k, qty[i]);
        ffb_stmt_bind_int64(s, 4, supw[i] != w);
        ffb_stmt_bind_int64(s, 5, supw[i]);
        ffb_stmt_bind_int64(s, 6, items[i]);
        ffb_stmt_bind_int64(s, 7, d);
        if (!EXEC(NO_STOCK)) return xerr(t, "new_order: stock");
        if (ret_row(t, NO_STOCK) != 1)
            return xbad(t, "new_order: no stock %d/%d", supw[i], items[i]);
        int64_t sq = geti(t, NO_STOCK, 0);
        const char *dist;
        size_t dl;
        if (sq < 0 || sq > 100 ||
            ffb_stmt_get_text(s, 2, &dist, &dl) != 0 || dl < 24)
            return xbad(t, "new_order: stock %d/%d quantity %" PRId64,
                        supw[i], items[i], sq);
        int64_t amount = price * qty[i];
        total += amount;
        ffb_stmt *ol = t->q[NO_LINE];
        bind_ints(ol, 7, o_id, (int64_t)d, (int64_t)w, (int64_t)i + 1,
                  (int64_t)items[i], (int64_t)supw[i], (int64_t)qty[i]);
        ffb_stmt_bind_numeric(ol, 7, amount, -2);
        ffb_stmt_bind_text(ol, 8, dist, 24);
        if (!EXEC(NO_LINE)) return xerr(t, "new_order: insert order_line");
        if (ffb_stmt_rows_affected(ol) != 1)
            return xbad(t, "new_order: order_line insert count");
    }
    if (total <= 0) return xbad(t, "new_order: total %" PRId64, total);
    int r = xcommit(t);
    if (r == XR_OK) t->new_orders++;
    return r;
}

/* The customer of that last name at position ceil(n/2) in c_first order
   (clause 2.5.2.2), by query k (its first column c_id): 1 round trip. */
static int by_name(term *t, int k, int w, int d, const char *last, int *c) {
    BI(k, 0, w); BI(k, 1, d);
    ffb_stmt_bind_text(t->q[k], 2, last, (size_t)-1);
    if (!EXEC(k)) return xerr(t, "customer by last name");
    int ids[64], n = 0, f;
    while ((f = ffb_stmt_fetch(t->q[k])) == 1)
        if (n < 64) ids[n++] = (int)geti(t, k, 0);
    if (f < 0) return xerr(t, "customer by last name: fetch");
    if (n == 0) return xbad(t, "no customer named %s in %d/%d", last, w, d);
    *c = ids[(n - 1) / 2];
    return XR_OK;
}

/* Round trips: 5 by customer id (warehouse and district updates with
   RETURNING, customer update, history insert, commit), 6 by last name
   (one more select of the customers of that name). */
static int tx_payment(term *t) {
    pa_in a;
    draw_payment(t, &a);
    int w = a.w, d = a.d, cw = a.cw, cd = a.cd, byname = a.byname, c = a.c;
    const char *last = a.last;
    int64_t amount = a.amount;
    t->expect_rt = byname ? 6 : 5;
    if (xbegin(t, 0)) return XR_FAIL;
    BN(PA_WH, 0, amount); BI(PA_WH, 1, w);
    if (!EXEC(PA_WH)) return xerr(t, "payment: warehouse");
    if (ret_row(t, PA_WH) != 1) return xbad(t, "payment: no warehouse %d", w);
    BN(PA_DIST, 0, amount); BI(PA_DIST, 1, w); BI(PA_DIST, 2, d);
    if (!EXEC(PA_DIST)) return xerr(t, "payment: district");
    if (ret_row(t, PA_DIST) != 1)
        return xbad(t, "payment: no district %d/%d", w, d);
    if (byname) {
        int r = by_name(t, PA_BYNAME, cw, cd, last, &c);
        if (r != XR_OK) return r;
    }
    char hdata[32];
    snprintf(hdata, sizeof hdata, "%d %d %d %d %d", c, cd, cw, d, w);
    ffb_stmt *s = t->q[PA_CUST];
    ffb_stmt_bind_numeric(s, 0, amount, -2);
    ffb_stmt_bind_numeric(s, 1, amount, -2);
    ffb_stmt_bind_text(s, 2, hdata, (size_t)-1);
    ffb_stmt_bind_int64(s, 3, cw);
    ffb_stmt_bind_int64(s, 4, cd);
    ffb_stmt_bind_int64(s, 5, c);
    if (!EXEC(PA_CUST)) return xerr(t, "payment: customer");
    if (ret_row(t, PA_CUST) != 1)
        return xbad(t, "payment: no customer %d/%d/%d", cw, cd, c);
    ffb_stmt *h = t->q[PA_HIST];
    bind_ints(h, 5, (int64_t)c, (int64_t)cd, (int64_t)cw, (int64_t)d,
              (int64_t)w);
    ffb_stmt_bind_numeric(h, 5, amount, -2);
    ffb_stmt_bind_text(h, 6, hdata, (size_t)-1);
    if (!EXEC(PA_HIST)) return xerr(t, "payment: history");
    if (ffb_stmt_rows_affected(h) != 1)
        return xbad(t, "payment: history insert count");
    int r = xcommit(t);
    if (r == XR_OK) t->paid_cents += amount;
    return r;
}

/* Round trips: 4 (customer by id or by name, last order, its lines,
   commit). */
static int tx_order_status(term *t) {
    os_in a;
    draw_order_status(t, &a);
    int w = a.w, d = a.d, byname = a.byname, c = a.c;
    const char *last = a.last;
    t->expect_rt = 4;
    if (xbegin(t, 1)) return XR_FAIL;
    if (byname) {
        int r = by_name(t, OS_BYNAME, w, d, last, &c);
        if (r != XR_OK) return r;
    } else {
        BI(OS_CUST, 0, w); BI(OS_CUST, 1, d); BI(OS_CUST, 2, c);
        if (!EXEC(OS_CUST)) return xerr(t, "order_status: customer");
        if (ffb_stmt_fetch(t->q[OS_CUST]) != 1)
            return xbad(t, "order_status: no customer %d/%d/%d", w, d, c);
    }
    BI(OS_ORDER, 0, w); BI(OS_ORDER, 1, d); BI(OS_ORDER, 2, c);
    if (!EXEC(OS_ORDER)) return xerr(t, "order_status: order");
    if (ffb_stmt_fetch(t->q[OS_ORDER]) != 1)
        return xbad(t, "order_status: customer %d/%d/%d has no order", w, d, c);
    int64_t o_id = geti(t, OS_ORDER, 0), cnt = geti(t, OS_ORDER, 3);
    if (cnt < 5 || cnt > 15)
        return xbad(t, "order_status: o_ol_cnt %" PRId64, cnt);
    BI(OS_LINES, 0, w); BI(OS_LINES, 1, d); BI(OS_LINES, 2, o_id);
    if (!EXEC(OS_LINES)) return xerr(t, "order_status: lines");
    int n = 0, f;
    while ((f = ffb_stmt_fetch(t->q[OS_LINES])) == 1) {
        if (geti(t, OS_LINES, 0) < 1 || getn(t, OS_LINES, 3, -2) < 0)
            return xbad(t, "order_status: a bad order line");
        n++;
    }
    if (f < 0) return xerr(t, "order_status: lines fetch");
    if (n != cnt)
        return xbad(t, "order_status: order %d/%d/%" PRId64 " has %d lines,"
                       " o_ol_cnt says %" PRId64, w, d, o_id, n, cnt);
    return xcommit(t);
}

/* Round trips: 11 + 3 x (districts with an order to deliver): per district
   the new_order delete with RETURNING; where it found one, the orders
   update with RETURNING, the order_line update, the customer update; and
   the commit. 41 when every district has one. */
static void draw_delivery(term *t, int *w, int *carrier) {
    *w = home(t);
    *carrier = (int)rrange(&t->r, 1, 10);
}

static int tx_delivery(term *t) {
    int w, carrier, found = 0;
    draw_delivery(t, &w, &carrier);
    if (xbegin(t, 0)) return XR_FAIL;
    int64_t delivered = 0;
    for (int d = 1; d <= N_DIST; d++) {
        BI(DL_NEW, 0, w); BI(DL_NEW, 1, d); BI(DL_NEW, 2, w); BI(DL_NEW, 3, d);
        if (!EXEC(DL_NEW)) return xerr(t, "delivery: new_order");
        int got = ret_row(t, DL_NEW);
        if (got < 0) return xerr(t, "delivery: new_order row");
        if (got == 0) continue;
        found++;
        int64_t o_id = geti(t, DL_NEW, 0);
        BI(DL_ORDER, 0, carrier); BI(DL_ORDER, 1, w); BI(DL_ORDER, 2, d);
        BI(DL_ORDER, 3, o_id);
        if (!EXEC(DL_ORDER)) return xerr(t, "delivery: orders");
        if (ret_row(t, DL_ORDER) != 1)
            return xbad(t, "delivery: new order %d/%d/%" PRId64 " has no"
                           " order", w, d, o_id);
        int64_t c = geti(t, DL_ORDER, 0), cnt = geti(t, DL_ORDER, 1);
        BI(DL_LINES, 0, w); BI(DL_LINES, 1, d); BI(DL_LINES, 2, o_id);
        if (!EXEC(DL_LINES)) return xerr(t, "delivery: order_line");
        if (ffb_stmt_rows_affected(t->q[DL_LINES]) != cnt)
            return xbad(t, "delivery: order %d/%d/%" PRId64 " updated %" PRId64
                           " lines, o_ol_cnt %" PRId64, w, d, o_id,
                        ffb_stmt_rows_affected(t->q[DL_LINES]), cnt);
        bind_ints(t->q[DL_CUST], 6, (int64_t)w, (int64_t)d, o_id, (int64_t)w,
                  (int64_t)d, c);
        if (!EXEC(DL_CUST)) return xerr(t, "delivery: customer");
        if (ret_row(t, DL_CUST) != 1)
            return xbad(t, "delivery: no customer %d/%d/%" PRId64, w, d, c);
        delivered++;
    }
    t->expect_rt = 11 + 3 * found;
    int r = xcommit(t);
    if (r == XR_OK) t->delivered += delivered;
    return r;
}

/* Round trips: 3 (district's next order id, the count, commit). */
static void draw_stock_level(term *t, int *w, int *d, int *threshold) {
    *w = home(t);
    *d = (int)rrange(&t->r, 1, N_DIST);
    *threshold = (int)rrange(&t->r, 10, 20);
}

static int tx_stock_level(term *t) {
    int w, d, threshold;
    draw_stock_level(t, &w, &d, &threshold);
    t->expect_rt = 3;
    if (xbegin(t, 1)) return XR_FAIL;
    BI(SL_DIST, 0, w); BI(SL_DIST, 1, d);
    if (!EXEC(SL_DIST)) return xerr(t, "stock_level: district");
    if (ffb_stmt_fetch(t->q[SL_DIST]) != 1)
        return xbad(t, "stock_level: no district %d/%d", w, d);
    int64_t next = geti(t, SL_DIST, 0);
    BI(SL_COUNT, 0, w); BI(SL_COUNT, 1, d); BI(SL_COUNT, 2, next - 20);
    BI(SL_COUNT, 3, next); BI(SL_COUNT, 4, threshold);
    if (!EXEC(SL_COUNT)) return xerr(t, "stock_level: count");
    if (ffb_stmt_fetch(t->q[SL_COUNT]) != 1)
        return xbad(t, "stock_level: no count");
    int64_t n = geti(t, SL_COUNT, 0);
    if (n < 0 || n > 20 * 15)
        return xbad(t, "stock_level: %" PRId64 " items below %d", n, threshold);
    return xcommit(t);
}

static int (*const X_FN[X_COUNT])(term *) = {tx_new_order, tx_payment,
    tx_order_status, tx_delivery, tx_stock_level};

/* ---- --mode=procs: each transaction one PSQL procedure -------------------- */

/* Created (or replaced) by `run --mode=procs` before the terminals start.
   Each does what its client-mode twin above does, statement for
   statement, and raises an exception where the twin reports a wrong
   answer; a failed call is undone whole (the statement's savepoint), so
   the commit behind it commits nothing. */
static const char *const DDL_PROCS[] = {
    "create or alter exception tpcc_bad_item 'item number is not valid'",
    "create or alter exception tpcc_missing 'a row is missing'",
    /* lines: per order line 12 digits, item (6), supplying warehouse (4),
       quantity (2) */
    "create or alter procedure tpcc_new_order (w integer, d integer,"
    " c integer, cnt integer, all_local integer, lines varchar(180))"
    " returns (r_o_id integer, r_total numeric(18,2), r_lines integer)"
    " as"
    " declare i integer = 0; declare iid integer; declare sw integer;"
    " declare q integer; declare price numeric(5,2);"
    " declare w_tax numeric(4,4); declare c_disc numeric(4,4);"
    " declare d_tax numeric(4,4); declare sq integer;"
    " declare dist char(24);"
    " begin"
    "  select w.w_tax, c.c_discount from warehouse w join customer c"
    "   on c.c_w_id = w.w_id where w.w_id = :w and c.c_d_id = :d"
    "   and c.c_id = :c into :w_tax, :c_disc;"
    "  if (w_tax is null) then exception tpcc_missing 'no customer';"
    "  update district set d_next_o_id = d_next_o_id + 1 where d_w_id = :w"
    "   and d_id = :d returning d_next_o_id - 1, d_tax into :r_o_id, :d_tax;"
    "  if (row_count = 0) then exception tpcc_missing 'no district';"
    "  insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d,"
    "   o_ol_cnt, o_all_local) values (:r_o_id, :d, :w, :c, localtimestamp,"
    "   :cnt, :all_local);"
    "  insert into new_order (no_o_id, no_d_id, no_w_id)"
    "   values (:r_o_id, :d, :w);"
    "  r_total = 0; r_lines = 0;"
    "  while (i < cnt) do"
    "  begin"
    "   iid = cast(substring(lines from i * 12 + 1 for 6) as integer);"
    "   sw = cast(substring(lines from i * 12 + 7 for 4) as integer);"
    "   q = cast(substring(lines from i * 12 + 11 for 2) as integer);"
    "   price = null;"
    "   select i_price from item where i_id = :iid into :price;"
    "   if (price is null) then exception tpcc_bad_item;"
    "   update stock set s_quantity = iif(s_quantity >= :q + 10,"
    "    s_quantity - :q, s_quantity - :q + 91), s_ytd = s_ytd + :q,"
    "    s_order_cnt = s_order_cnt + 1,"
    "    s_remote_cnt = s_remote_cnt + iif(:sw = :w, 0, 1)"
    "    where s_w_id = :sw and s_i_id = :iid"
    "    returning s_quantity, decode(:d, 1, s_dist_01, 2, s_dist_02,"
    "    3, s_dist_03, 4, s_dist_04, 5, s_dist_05, 6, s_dist_06,"
    "    7, s_dist_07, 8, s_dist_08, 9, s_dist_09, s_dist_10)"
    "    into :sq, :dist;"
    "   if (row_count = 0) then exception tpcc_missing 'no stock';"
    "   insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number,"
    "    ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info)"
    "    values (:r_o_id, :d, :w, :i + 1, :iid, :sw, :q, :price * :q,"
    "    :dist);"
    "   r_total = r_total + price * q; r_lines = r_lines + 1; i = i + 1;"
    "  end"
    " end",
    /* the customer of that name at position ceil(n/2) in c_first order */
    "create or alter procedure tpcc_payment (w integer, d integer,"
    " cw integer, cd integer, c integer, byname integer,"
    " last varchar(16), amount numeric(6,2))"
    " returns (r_c_id integer, r_balance numeric(12,2), r_credit char(2))"
    " as"
    " declare n integer; declare k integer; declare w_name varchar(10);"
    " declare d_name varchar(10); declare hdata varchar(24);"
    " begin"
    "  update warehouse set w_ytd = w_ytd + :amount where w_id = :w"
    "   returning w_name into :w_name;"
    "  if (row_count = 0) then exception tpcc_missing 'no warehouse';"
    "  update district set d_ytd = d_ytd + :amount where d_w_id = :w"
    "   and d_id = :d returning d_name into :d_name;"
    "  if (row_count = 0) then exception tpcc_missing 'no district';"
    "  r_c_id = c;"
    "  if (byname = 1) then"
    "  begin"
    "   select count(*) from customer where c_w_id = :cw and c_d_id = :cd"
    "    and c_last = :last into :n;"
    "   if (n = 0) then exception tpcc_missing 'no customer of that name';"
    "   k = (n - 1) / 2 + 1;"
    "   select c_id from customer where c_w_id = :cw and c_d_id = :cd"
    "    and c_last = :last order by c_first rows :k to :k into :r_c_id;"
    "  end"
    "  hdata = r_c_id || ' ' || cd || ' ' || cw || ' ' || d || ' ' || w;"
    "  update customer set c_balance = c_balance - :amount,"
    "   c_ytd_payment = c_ytd_payment + :amount,"
    "   c_payment_cnt = c_payment_cnt + 1,"
    "   c_data = iif(c_credit = 'BC', left(cast(:hdata as varchar(60))"
    "   || c_data, 500), c_data)"
    "   where c_w_id = :cw and c_d_id = :cd and c_id = :r_c_id"
    "   returning c_balance, c_credit into :r_balance, :r_credit;"
    "  if (row_count = 0) then exception tpcc_missing 'no customer';"
    "  insert into history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id,"
    "   h_date, h_amount, h_data) values (:r_c_id, :cd, :cw, :d, :w,"
    "   localtimestamp, :amount, :hdata);"
    " end",
    /* the last order's lines are read row by row, as a client would */
    "create or alter procedure tpcc_order_status (w integer, d integer,"
    " c integer, byname integer, last varchar(16))"
    " returns (r_c_id integer, r_balance numeric(12,2), r_o_id integer,"
    " r_ol_cnt integer, r_lines integer, r_amount numeric(18,2))"
    " as"
    " declare n integer; declare k integer; declare cf varchar(16);"
    " declare cm char(2); declare cl varchar(16); declare iid integer;"
    " declare sw integer; declare q integer; declare amt numeric(6,2);"
    " declare dd timestamp;"
    " begin"
    "  r_c_id = c;"
    "  if (byname = 1) then"
    "  begin"
    "   select count(*) from customer where c_w_id = :w and c_d_id = :d"
    "    and c_last = :last into :n;"
    "   if (n = 0) then exception tpcc_missing 'no customer of that name';"
    "   k = (n - 1) / 2 + 1;"
    "   select c_id, c_balance, c_first, c_middle from customer"
    "    where c_w_id = :w and c_d_id = :d and c_last = :last"
    "    order by c_first rows :k to :k into :r_c_id, :r_balance, :cf, :cm;"
    "  end"
    "  else"
    "  begin"
    "   select c_balance, c_first, c_middle, c_last from customer"
    "    where c_w_id = :w and c_d_id = :d and c_id = :c"
    "    into :r_balance, :cf, :cm, :cl;"
    "   if (cl is null) then exception tpcc_missing 'no customer';"
    "  end"
    "  select first 1 o_id, o_ol_cnt from orders where o_w_id = :w"
    "   and o_d_id = :d and o_c_id = :r_c_id order by o_id desc"
    "   into :r_o_id, :r_ol_cnt;"
    "  if (r_o_id is null) then exception tpcc_missing 'no order';"
    "  r_lines = 0; r_amount = 0;"
    "  for select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount,"
    "   ol_delivery_d from order_line where ol_w_id = :w and ol_d_id = :d"
    "   and ol_o_id = :r_o_id into :iid, :sw, :q, :amt, :dd do"
    "  begin"
    "   r_lines = r_lines + 1; r_amount = r_amount + amt;"
    "  end"
    " end",
    "create or alter procedure tpcc_delivery (w integer, carrier integer)"
    " returns (r_delivered integer)"
    " as"
    " declare d integer = 1; declare o integer; declare c integer;"
    " declare cnt integer;"
    " begin"
    "  r_delivered = 0;"
    "  while (d <= 10) do"
    "  begin"
    "   o = null;"
    "   delete from new_order where no_w_id = :w and no_d_id = :d"
    "    and no_o_id = (select min(no_o_id) from new_order"
    "    where no_w_id = :w and no_d_id = :d) returning no_o_id into :o;"
    "   if (o is not null) then"
    "   begin"
    "    update orders set o_carrier_id = :carrier where o_w_id = :w"
    "     and o_d_id = :d and o_id = :o returning o_c_id, o_ol_cnt"
    "     into :c, :cnt;"
    "    if (row_count = 0) then exception tpcc_missing"
    "     'a new order without its order';"
    "    update order_line set ol_delivery_d = localtimestamp"
    "     where ol_w_id = :w and ol_d_id = :d and ol_o_id = :o;"
    "    if (row_count <> cnt) then exception tpcc_missing"
    "     'order lines other than o_ol_cnt';"
    "    update customer set c_balance = c_balance + (select sum(ol_amount)"
    "     from order_line where ol_w_id = :w and ol_d_id = :d"
    "     and ol_o_id = :o), c_delivery_cnt = c_delivery_cnt + 1"
    "     where c_w_id = :w and c_d_id = :d and c_id = :c;"
    "    if (row_count = 0) then exception tpcc_missing 'no customer';"
    "    r_delivered = r_delivered + 1;"
    "   end"
    "   d = d + 1;"
    "  end"
    " end",
    "create or alter procedure tpcc_stock_level (w integer, d integer,"
    " threshold integer)"
    " returns (r_low integer)"
    " as"
    " declare nxt integer;"
    " begin"
    "  select d_next_o_id from district where d_w_id = :w and d_id = :d"
    "   into :nxt;"
    "  if (nxt is null) then exception tpcc_missing 'no district';"
    "  select count(distinct s.s_i_id) from order_line ol join stock s"
    "   on s.s_w_id = ol.ol_w_id and s.s_i_id = ol.ol_i_id"
    "   where ol.ol_w_id = :w and ol.ol_d_id = :d"
    "   and ol.ol_o_id >= :nxt - 20 and ol.ol_o_id < :nxt"
    "   and s.s_quantity < :threshold into :r_low;"
    " end",
    NULL};

static const char *const P_SQL[X_COUNT] = {
    "execute procedure tpcc_new_order ?, ?, ?, ?, ?, ?",
    "execute procedure tpcc_payment ?, ?, ?, ?, ?, ?, ?, ?",
    "execute procedure tpcc_order_status ?, ?, ?, ?, ?",
    "execute procedure tpcc_delivery ?, ?",
    "execute procedure tpcc_stock_level ?, ?, ?",
};

/* The call of procedure x with its bound parameters: the transaction's
   start, the call and the commit in one write, 1 round trip (a failed call
   was undone whole, so the commit behind it commits nothing). XR_OK with
   the outputs readable by ffb_stmt_fetch(); *err the call's error when it
   failed (XR_FAIL / XR_RETRY as xerr: conflicts retried; `bad_item`: the
   New-Order rollback, returned as XR_OK with *err set). */
static int pcall(term *t, int x, int read_only, const ffb_error **err) {
    const ffb_result *res;
    *err = NULL;
    t->expect_rt = 1;
    if (xbegin(t, read_only)) return XR_FAIL;
    if (ffb_stmt_queue_execute(t->p[x], t->tx, NULL, NULL) < 0 ||
        ffb_tx_queue_commit(t->tx, NULL, NULL) < 0 ||
        ffb_conn_flush(t->conn) < 0) {
        failf("terminal %d: %s: queue: %s", t->id, X_NAME[x], cerr(t->conn));
        ffb_tx_free(t->tx);
        t->tx = NULL;
        return XR_FAIL;
    }
    int rc = XR_OK;
    for (int k = 0; k < 2; k++) {
        if (ffb_conn_next_result(t->conn, &res) != 1) {
            failf("terminal %d: %s: %s", t->id, X_NAME[x], cerr(t->conn));
            rc = XR_FAIL;
            break;
        }
        if (ffb_result_status(res) == 0 || rc != XR_OK)
            continue;
        const ffb_error *e = ffb_result_error(res);
        if (k == 0 && x == X_NEW_ORDER &&
            strstr(ffb_error_message(e), "item number is not valid")) {
            *err = e;
        } else if (retryable_error(e)) {
            rc = XR_RETRY;
        } else {
            failf("terminal %d: %s (%s): %s (gds %u)", t->id, X_NAME[x],
                  k ? "commit" : "call", ffb_error_message(e),
                  ffb_error_gds(e));
            rc = XR_FAIL;
        }
    }
    if (ffb_tx_is_active(t->tx)) ffb_tx_rollback(t->tx);
    ffb_tx_free(t->tx);
    t->tx = NULL;
    if (rc == XR_OK && !*err && ffb_stmt_fetch(t->p[x]) != 1) {
        failf("terminal %d: %s: no output row", t->id, X_NAME[x]);
        rc = XR_FAIL;
    }
    return rc;
}

#define PI(x, i, v) ffb_stmt_bind_int64(t->p[x], i, v)

static int64_t pgeti(term *t, int x, unsigned col) {
    return col_i64(t->p[x], col);
}

static int64_t pgetn(term *t, int x, unsigned col) { /* cents */
    return col_num(t->p[x], col, -2);
}

static int px_new_order(term *t) {
    no_in a;
    draw_new_order(t, &a);
    char lines[15 * 12 + 1];
    for (int i = 0; i < a.cnt; i++)
        snprintf(lines + 12 * i, sizeof lines - 12 * (size_t)i,
                 "%06d%04d%02d", a.items[i], a.supw[i], a.qty[i]);
    PI(X_NEW_ORDER, 0, a.w); PI(X_NEW_ORDER, 1, a.d); PI(X_NEW_ORDER, 2, a.c);
    PI(X_NEW_ORDER, 3, a.cnt); PI(X_NEW_ORDER, 4, a.all_local);
    ffb_stmt_bind_text(t->p[X_NEW_ORDER], 5, lines, 12 * (size_t)a.cnt);
    const ffb_error *e;
    int r = pcall(t, X_NEW_ORDER, 0, &e);
    if (r != XR_OK) return r;
    if (e) {
        if (!a.rollback)
            return xbad(t, "new_order: %s", ffb_error_message(e));
        t->x[X_NEW_ORDER].rollbacks++;
        return XR_OK;
    }
    if (a.rollback)
        return xbad(t, "new_order: item %d was found", a.items[a.cnt - 1]);
    int64_t o_id = pgeti(t, X_NEW_ORDER, 0), n = pgeti(t, X_NEW_ORDER, 2);
    int64_t total = pgetn(t, X_NEW_ORDER, 1);
    if (o_id <= N_ORD || n != a.cnt || total < 100LL * a.cnt)
        return xbad(t, "new_order: order %" PRId64 ", %" PRId64 " lines of %d,"
                    " total %" PRId64, o_id, n, a.cnt, total);
    t->new_orders++;
    return XR_OK;
}

static int px_payment(term *t) {
    pa_in a;
    draw_payment(t, &a);
    PI(X_PAYMENT, 0, a.w); PI(X_PAYMENT, 1, a.d); PI(X_PAYMENT, 2, a.cw);
    PI(X_PAYMENT, 3, a.cd); PI(X_PAYMENT, 4, a.c); PI(X_PAYMENT, 5, a.byname);
    ffb_stmt_bind_text(t->p[X_PAYMENT], 6, a.last, (size_t)-1);
    ffb_stmt_bind_numeric(t->p[X_PAYMENT], 7, a.amount, -2);
    const ffb_error *e;
    int r = pcall(t, X_PAYMENT, 0, &e);
    if (r != XR_OK) return r;
    int64_t c = pgeti(t, X_PAYMENT, 0);
    if (c < 1 || c > N_CUST || (!a.byname && c != a.c))
        return xbad(t, "payment: customer %" PRId64, c);
    t->paid_cents += a.amount;
    return XR_OK;
}

static int px_order_status(term *t) {
    os_in a;
    draw_order_status(t, &a);
    PI(X_ORDER_STATUS, 0, a.w); PI(X_ORDER_STATUS, 1, a.d);
    PI(X_ORDER_STATUS, 2, a.c); PI(X_ORDER_STATUS, 3, a.byname);
    ffb_stmt_bind_text(t->p[X_ORDER_STATUS], 4, a.last, (size_t)-1);
    const ffb_error *e;
    int r = pcall(t, X_ORDER_STATUS, 1, &e);
    if (r != XR_OK) return r;
    int64_t cnt = pgeti(t, X_ORDER_STATUS, 3), n = pgeti(t, X_ORDER_STATUS, 4);
    if (cnt < 5 || cnt > 15 || n != cnt || pgetn(t, X_ORDER_STATUS, 5) < 0)
        return xbad(t, "order_status: order %" PRId64 " has %" PRId64
                    " lines, o_ol_cnt says %" PRId64,
                    pgeti(t, X_ORDER_STATUS, 2), n, cnt);
    return XR_OK;
}

static int px_delivery(term *t) {
    int w, carrier;
    draw_delivery(t, &w, &carrier);
    PI(X_DELIVERY, 0, w); PI(X_DELIVERY, 1, carrier);
    const ffb_error *e;
    int r = pcall(t, X_DELIVERY, 0, &e);
    if (r != XR_OK) return r;
    int64_t n = pgeti(t, X_DELIVERY, 0);
    if (n < 0 || n > N_DIST) return xbad(t, "delivery: %" PRId64, n);
    t->delivered += n;
    return XR_OK;
}

static int px_stock_level(term *t) {
    int w, d, threshold;
    draw_stock_level(t, &w, &d, &threshold);
    PI(X_STOCK_LEVEL, 0, w); PI(X_STOCK_LEVEL, 1, d);
    PI(X_STOCK_LEVEL, 2, threshold);
    const ffb_error *e;
    int r = pcall(t, X_STOCK_LEVEL, 1, &e);
    if (r != XR_OK) return r;
    int64_t n = pgeti(t, X_STOCK_LEVEL, 0);
    if (n < 0 || n > 20 * 15)
        return xbad(t, "stock_level: %" PRId64 " items below %d", n, threshold);
    return XR_OK;
}

static int (*const P_FN[X_COUNT])(term *) = {px_new_order, px_payment,
    px_order_status, px_delivery, px_stock_level};

static void lat_add(xstats *x, double us) {
    if (x->nlat == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 4096;
        uint32_t *p = realloc(x->lat, nc * sizeof *p);
        if (!p) return;
        x->lat = p;
        x->cap = nc;
    }
    x->lat[x->nlat++] = us > 4e9 ? 4000000000u : (uint32_t)us;
}

/* This thread's CPU seconds, user + system; *sys gets the system part. */
static double thread_cpu_s(double *sys) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + *sys;
}

static void *term_thread(void *arg) {
    term *t = arg;
    ffb_tx *tx = NULL;
    if (ffb_tx_begin(t->conn, NULL, &tx) != 0) {
        failf("begin: %s", cerr(t->conn));
        return NULL;
    }
    int nq = O.client ? Q_COUNT : X_COUNT;
    for (int i = 0; i < nq; i++) {
        ffb_stmt **st = O.client ? &t->q[i] : &t->p[i];
        const char *sql = O.client ? Q[i] : P_SQL[i];
        if (ffb_stmt_new(t->conn, st) != 0 ||
            ffb_stmt_prepare(*st, tx, sql, (size_t)-1) != 0) {
            failf("prepare %s: %s", sql, cerr(t->conn));
            ffb_tx_free(tx);
            return NULL;
        }
    }
    ffb_tx_commit(tx);
    ffb_tx_free(tx);
    int measuring = 0, done = 0;
    double cpu0 = 0, sys0 = 0;
    while (!atomic_load(&g_failed)) {
        int ph = atomic_load(&g_phase);
        if (ph == 2) break;
        if (ph == 1 && !measuring) {
            measuring = 1;
            cpu0 = thread_cpu_s(&sys0);
        }
        if (O.transactions && done >= O.transactions) break;
        int r100 = (int)rrange(&t->r, 1, 100);
        int x = r100 <= 45 ? X_NEW_ORDER : r100 <= 88 ? X_PAYMENT
              : r100 <= 92 ? X_ORDER_STATUS : r100 <= 96 ? X_DELIVERY
              : X_STOCK_LEVEL;
        double t0 = now_s();
        uint64_t rt_all = 0;
        int res;
        for (int attempt = 0;; attempt++) {
            uint64_t rt0 = conn_rt(t->conn);
            res = (O.client ? X_FN : P_FN)[x](t);
            uint64_t rt = conn_rt(t->conn) - rt0;
            rt_all += rt;
            if (res == XR_OK && rt != (uint64_t)t->expect_rt) {
                failf("terminal %d: %s took %" PRIu64 " round trips, its"
                      " formula says %" PRId64, t->id, X_NAME[x], rt,
                      t->expect_rt);
                res = XR_FAIL;
            }
            if (res != XR_RETRY) {
                if (res == XR_OK && measuring) {
                    t->x[x].rt_expected += (uint64_t)t->expect_rt;
                    t->x[x].rt_checked_ops++;
                }
                break;
            }
            if (measuring) t->x[x].retries++;
            if (attempt >= 50) {
                failf("terminal %d: %s: 50 conflicts in a row", t->id,
                      X_NAME[x]);
                res = XR_FAIL;
                break;
            }
        }
        if (res != XR_OK) break;
        if (measuring) {
            t->x[x].count++;
            t->x[x].rt += rt_all;
            lat_add(&t->x[x], (now_s() - t0) * 1e6);
        }
        done++;
    }
    if (measuring) {
        double sys1;
        t->cpu_s = thread_cpu_s(&sys1) - cpu0;
        t->sys_s = sys1 - sys0;
    }
    return NULL;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static double pct_ms(uint32_t *v, size_t n, double p) {
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_u32);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i] / 1000.0;
}

/* Totals the run must move by exactly what the terminals committed. */
typedef struct totals {
    int64_t w_ytd_cents, next_o_sum, new_order_rows;
} totals;

static int read_totals(ffb_conn *c, totals *tt) {
    return query_i64(c, "select cast(sum(w_ytd) * 100 as bigint) from"
                        " warehouse", &tt->w_ytd_cents) ||
           query_i64(c, "select sum(d_next_o_id) from district",
                     &tt->next_o_sum) ||
           query_i64(c, "select count(*) from new_order", &tt->new_order_rows);
}

static int read_io(ffb_conn *c, int64_t *reads, int64_t *fetches) {
    return query_i64(c, "select mon$page_reads from mon$io_stats where"
                        " mon$stat_group = 0", reads) ||
           query_i64(c, "select mon$page_fetches from mon$io_stats where"
                        " mon$stat_group = 0", fetches);
}

static int cmd_run(void) {
    int cur = 0, indexed = 0;
    ffb_conn *c = open_or_create(&cur, &indexed, 0);
    if (!c) return 1;
    if (cur < 1 || !indexed) {
        failf("no loaded database (warehouses %d); run load first", cur);
        ffb_conn_free(c);
        return 1;
    }
    for (int i = 0; !O.client && DDL_PROCS[i]; i++)
        if (exec_sql(c, DDL_PROCS[i])) {
            ffb_conn_free(c);
            return 1;
        }
    ffb_db_info di;
    memset(&di, 0, sizeof di);
    ffb_conn_db_info(c, &di, sizeof di);
    int nt = O.terminals < 1 ? 1 : O.terminals;
    term *ts = calloc((size_t)nt, sizeof *ts);
    pthread_t *th = calloc((size_t)nt, sizeof *th);
    if (!ts || !th) { failf("out of memory"); return 1; }
    for (int i = 0; i < nt; i++) {
        ts[i].id = i;
        ts[i].home_w = i % cur + 1;
        ts[i].nw = cur;
        rseed(&ts[i].r, O.seed * 1000 + (uint64_t)i);
        ts[i].conn = open_conn();
        if (!ts[i].conn) return 1;
    }
    totals before, after;
    int64_t r0 = 0, f0 = 0, r1 = 0, f1 = 0;
    if (read_totals(c, &before)) return 1;
    int64_t bytes = db_bytes(c);
    atomic_store(&g_phase, O.transactions ? 1 : 0);
    for (int i = 0; i < nt; i++) pthread_create(&th[i], NULL, term_thread, &ts[i]);
    double t1;
    if (O.transactions) {
        t1 = now_s();
        read_io(c, &r0, &f0);
    } else {
        for (int s = 0; s < O.warmup * 10 && !atomic_load(&g_failed); s++)
            usleep(100000);
        read_io(c, &r0, &f0);
        atomic_store(&g_phase, 1);
        t1 = now_s();
        for (int s = 0; s < O.duration * 10 && !atomic_load(&g_failed); s++)
            usleep(100000);
        atomic_store(&g_phase, 2);
    }
    double t2 = 0;
    for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
    t2 = now_s();
    if (!O.transactions) t2 = t1 + O.duration;
    read_io(c, &r1, &f1);
    int rc = atomic_load(&g_failed) ? 1 : 0;
    double secs = t2 - t1;
    if (rc == 0 && read_totals(c, &after)) rc = 1;
    /* Totals: every committed payment is in w_ytd, every committed new
       order took one d_next_o_id and left one new_order row unless a
       delivery took it. */
    int64_t paid = 0, nos = 0, dels = 0;
    for (int i = 0; i < nt; i++) {
        paid += ts[i].paid_cents;
        nos += ts[i].new_orders;
        dels += ts[i].delivered;
    }
    if (rc == 0 && after.w_ytd_cents - before.w_ytd_cents != paid) {
        failf("sum(w_ytd) moved by %" PRId64 " cents, the committed payments"
              " sum to %" PRId64, after.w_ytd_cents - before.w_ytd_cents, paid);
        rc = 1;
    }
    if (rc == 0 && after.next_o_sum - before.next_o_sum != nos) {
        failf("sum(d_next_o_id) moved by %" PRId64 ", %" PRId64
              " new orders committed", after.next_o_sum - before.next_o_sum,
              nos);
        rc = 1;
    }
    if (rc == 0 &&
        after.new_order_rows - before.new_order_rows != nos - dels) {
        failf("new_order rows moved by %" PRId64 ", expected %" PRId64
              " (%" PRId64 " new, %" PRId64 " delivered)",
              after.new_order_rows - before.new_order_rows, nos - dels, nos,
              dels);
        rc = 1;
    }
    xstats all = {0};
    double cpu = 0;
    printf("ffb-tpcc run (--mode=%s): %d warehouses (scale 1/%d), %.1f MB,"
           " %d terminals, %.1f s measured%s, %s\n",
           O.client ? "client" : "procs", cur, O.scale, bytes / 1048576.0, nt,
           secs,
           O.transactions ? "" : " after the warm-up", di.server_version);
    printf("%-13s %8s %9s %8s %8s %8s %9s %8s %9s\n", "transaction", "count",
           "per min", "p50 ms", "p95 ms", "rt/op", "formula", "retries",
           "rollback");
    size_t total_lat = 0;
    for (int x = 0; x < X_COUNT; x++)
        for (int i = 0; i < nt; i++) total_lat += ts[i].x[x].nlat;
    uint32_t *alll = malloc((total_lat + 1) * sizeof *alll);
    size_t na = 0;
    double p95_no = 0;
    uint64_t n_no = 0;
    for (int x = 0; x < X_COUNT; x++) {
        xstats s = {0};
        for (int i = 0; i < nt; i++) {
            xstats *y = &ts[i].x[x];
            s.count += y->count;
            s.rt += y->rt;
            s.rt_expected += y->rt_expected;
            s.rt_checked_ops += y->rt_checked_ops;
            s.retries += y->retries;
            s.rollbacks += y->rollbacks;
            s.nlat += y->nlat;
        }
        uint32_t *v = malloc((s.nlat + 1) * sizeof *v);
        size_t n = 0;
        for (int i = 0; v && i < nt; i++) {
            if (ts[i].x[x].nlat == 0) continue;
            memcpy(v + n, ts[i].x[x].lat, ts[i].x[x].nlat * sizeof *v);
            n += ts[i].x[x].nlat;
        }
        if (alll && v && n) {
            memcpy(alll + na, v, n * sizeof *v);
            na += n;
        }
        double p95 = v ? pct_ms(v, n, 0.95) : 0;
        if (x == X_NEW_ORDER) {
            p95_no = p95;
            n_no = s.count;
        }
        printf("%-13s %8" PRIu64 " %9.1f %8.2f %8.2f %8.2f %9.2f %8" PRIu64
               " %9" PRIu64 "\n",
               X_NAME[x], s.count, s.count / secs * 60, v ? pct_ms(v, n, 0.5) : 0,
               p95, s.count ? (double)s.rt / s.count : 0,
               s.rt_checked_ops ? (double)s.rt_expected / s.rt_checked_ops : 0,
               s.retries, s.rollbacks);
        printf("RESULT tx type=%s count=%" PRIu64 " rt=%" PRIu64
               " rt_expected=%" PRIu64 " rt_checked_ops=%" PRIu64
               " retries=%" PRIu64 "\n",
               X_NAME[x], s.count, s.rt, s.rt_expected, s.rt_checked_ops,
               s.retries);
        free(v);
        all.count += s.count;
        all.rt += s.rt;
        all.retries += s.retries;
    }
    double sys = 0;
    for (int i = 0; i < nt; i++) {
        cpu += ts[i].cpu_s;
        sys += ts[i].sys_s;
    }
    double p95_all = alll ? pct_ms(alll, na, 0.95) : 0;
    free(alll);
    double hit = f1 - f0 > 0 ? 1.0 - (double)(r1 - r0) / (double)(f1 - f0) : 0;
    printf("%-13s %8" PRIu64 " %9.1f %8s %8.2f %8.2f\n", "all", all.count,
           all.count / secs * 60, "", p95_all,
           all.count ? (double)all.rt / all.count : 0);
    printf("client: %.2f round trips and %.1f us CPU (%.1f of it in the"
           " kernel) per transaction; server: %" PRId64 " page reads, %" PRId64
           " fetches (hit ratio %.4f)\n",
           all.count ? (double)all.rt / all.count : 0,
           all.count ? cpu * 1e6 / all.count : 0,
           all.count ? sys * 1e6 / all.count : 0, r1 - r0, f1 - f0, hit);
    printf("checks: %s\n", rc == 0 ? "every answer and the totals are right"
                                   : "FAILED");
    printf("RESULT run mode=%s warehouses=%d bytes=%" PRId64
           " terminals=%d seconds=%.2f"
           " ops=%" PRIu64 " tpm=%.1f tpmc=%.1f p95_ms=%.3f p95_no_ms=%.3f"
           " rt_per_op=%.4f cpu_us_per_op=%.2f sys_us_per_op=%.2f"
           " cpu_us_per_rt=%.3f"
           " retries=%" PRIu64
           " page_reads=%" PRId64 " page_fetches=%" PRId64 " hit_ratio=%.5f"
           " ok=%d\n",
           O.client ? "client" : "procs", cur, bytes, nt, secs, all.count,
           all.count / secs * 60,
           n_no / secs * 60, p95_all, p95_no,
           all.count ? (double)all.rt / all.count : 0,
           all.count ? cpu * 1e6 / all.count : 0,
           all.count ? sys * 1e6 / all.count : 0,
           all.rt ? cpu * 1e6 / all.rt : 0, all.retries, r1 - r0,
           f1 - f0, hit, rc == 0);
    for (int i = 0; i < nt; i++) {
        for (int q = 0; q < Q_COUNT; q++) ffb_stmt_free(ts[i].q[q]);
        for (int q = 0; q < X_COUNT; q++) ffb_stmt_free(ts[i].p[q]);
        for (int x = 0; x < X_COUNT; x++) free(ts[i].x[x].lat);
        ffb_conn_free(ts[i].conn);
    }
    free(ts);
    free(th);
    ffb_conn_free(c);
    return rc;
}

/* ---- check, drop, main ------------------------------------------------------ */

/* Each query counts the rows breaking a condition: 0 passes. */
static const struct {
    const char *name, *sql;
    int full;
} CHECKS[] = {
    {"w_ytd = sum(d_ytd) (TPC-C condition 1)",
     "select count(*) from warehouse w where w.w_ytd <> (select sum(d_ytd)"
     " from district d where d.d_w_id = w.w_id)", 0},
    {"d_next_o_id - 1 = max(o_id) = max(no_o_id) (condition 2)",
     "select count(*) from district d where d.d_next_o_id - 1 <> (select"
     " max(o_id) from orders where o_w_id = d.d_w_id and o_d_id = d.d_id)"
     " or d.d_next_o_id - 1 <> (select max(no_o_id) from new_order where"
     " no_w_id = d.d_w_id and no_d_id = d.d_id)", 0},
    {"count(new_order) = max - min + 1 (condition 3)",
     "select count(*) from district d where (select count(*) from new_order"
     " where no_w_id = d.d_w_id and no_d_id = d.d_id) <> coalesce((select"
     " max(no_o_id) - min(no_o_id) + 1 from new_order where no_w_id ="
     " d.d_w_id and no_d_id = d.d_id), 0)", 0},
    {"sum(o_ol_cnt) = count(order_line) (condition 4)",
     "select count(*) from district d where (select sum(o_ol_cnt) from orders"
     " where o_w_id = d.d_w_id and o_d_id = d.d_id) <> (select count(*) from"
     " order_line where ol_w_id = d.d_w_id and ol_d_id = d.d_id)", 1},
    {"every delivered order's lines are delivered",
     "select count(*) from orders o join order_line ol on ol.ol_w_id ="
     " o.o_w_id and ol.ol_d_id = o.o_d_id and ol.ol_o_id = o.o_id where"
     " (o.o_carrier_id is null) <> (ol.ol_delivery_d is null)", 1},
};

static int cmd_check(void) {
    int cur = 0, indexed = 0, bad = 0;
    ffb_conn *c = open_or_create(&cur, &indexed, 0);
    if (!c) return 1;
    struct { const char *what; const char *sql; int64_t want; } counts[] = {
        {"warehouse rows", "select count(*) from warehouse", cur},
        {"district rows", "select count(*) from district", cur * N_DIST},
        {"item rows", "select count(*) from item", N_ITEMS},
        {"stock rows", "select count(*) from stock", (int64_t)cur * N_ITEMS},
        {"customer rows", "select count(*) from customer",
         (int64_t)cur * N_DIST * N_CUST},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        if (i >= 3 && !O.full) break;
        int64_t v = -1;
        if (query_i64(c, counts[i].sql, &v)) { bad++; continue; }
        int ok = v == counts[i].want;
        printf("%-58s %s (%" PRId64 ")\n", counts[i].what, ok ? "ok" : "FAILED",
               v);
        if (!ok) {
            failf("%s: %" PRId64 ", expected %" PRId64, counts[i].what, v,
                  counts[i].want);
            bad++;
        }
    }
    for (size_t i = 0; i < sizeof CHECKS / sizeof CHECKS[0]; i++) {
        if (CHECKS[i].full && !O.full) continue;
        int64_t v = -1;
        if (query_i64(c, CHECKS[i].sql, &v)) { bad++; continue; }
        printf("%-58s %s\n", CHECKS[i].name, v == 0 ? "ok" : "FAILED");
        if (v != 0) {
            failf("%s: %" PRId64 " rows break it", CHECKS[i].name, v);
            bad++;
        }
    }
    printf("RESULT check warehouses=%d ok=%d\n", cur, bad == 0);
    ffb_conn_free(c);
    return bad ? 1 : 0;
}

/* Create the database and its schema and detach: Firebird 4 keeps a file it
   created open without O_DIRECT until the last attachment goes, so the
   growth test creates first and loads in new attachments. */
static int cmd_create(void) {
    int cur = 0, indexed = 0;
    ffb_conn *c = open_or_create(&cur, &indexed, 1);
    if (!c) return 1;
    printf("RESULT create warehouses=%d scale=%d\n", cur, O.scale);
    ffb_conn_free(c);
    return 0;
}

static int cmd_drop(void) {
    ffb_conn *c = open_conn();
    if (!c) return 1;
    int rc = ffb_conn_drop_database(c);
    if (rc) failf("drop %s: %s", O.dsn, cerr(c));
    ffb_conn_free(c);
    return rc ? 1 : 0;
}

static void usage(FILE *f) {
    fputs("usage: ffb-tpcc create|load|run|check|drop --dsn=HOST/PORT:PATH"
          " [options]\n"
          "  --user=SYSDBA --password=masterkey\n"
          "  load:  --warehouses=N (grow to N) --threads=2 --scale=1 (divides\n"
          "         items, stock, customers and orders; fixed at creation)\n"
          "  run:   --mode=procs (each transaction one PSQL procedure, 1"
          " round trip)\n"
          "         | --mode=client (every statement from the client)\n"
          "         --terminals=20 --warmup=15 --duration=60 |"
          " --transactions=N (per terminal)\n"
          "         --seed=1 --fixed-home (terminal i always on warehouse\n"
          "         i mod W + 1; default: a random warehouse per transaction)\n"
          "  check: --full (also the order-line and row-count conditions)\n"
          "  --quiet (no progress bar)\n", f);
}

static int parse_int(const char *v, const char *name, int lo, int hi) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi) {
        fprintf(stderr, "ffb-tpcc: --%s: want an integer in %d..%d, got '%s'\n",
                name, lo, hi, v);
        exit(2);
    }
    return (int)x;
}

int main(int argc, char **argv) {
    if (argc < 2) { usage(stderr); return 2; }
    const char *cmd = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) != 0) { usage(stderr); return 2; }
        size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a) - 2;
        const char *v = eq ? eq + 1 : "";
        char k[32];
        if (kl >= sizeof k) { usage(stderr); return 2; }
        memcpy(k, a + 2, kl);
        k[kl] = 0;
        if (!strcmp(k, "dsn")) O.dsn = v;
        else if (!strcmp(k, "user")) O.user = v;
        else if (!strcmp(k, "password")) O.password = v;
        else if (!strcmp(k, "warehouses")) O.warehouses = parse_int(v, k, 1, 100000);
        else if (!strcmp(k, "threads")) O.threads = parse_int(v, k, 1, 64);
        else if (!strcmp(k, "scale")) {
            O.scale = parse_int(v, k, 1, 300);
            O.scale_given = 1;
        }
        else if (!strcmp(k, "terminals")) O.terminals = parse_int(v, k, 1, 1000);
        else if (!strcmp(k, "warmup")) O.warmup = parse_int(v, k, 0, 86400);
        else if (!strcmp(k, "duration")) O.duration = parse_int(v, k, 1, 86400);
        else if (!strcmp(k, "transactions"))
            O.transactions = parse_int(v, k, 1, 100000000);
        else if (!strcmp(k, "seed")) O.seed = (uint64_t)parse_int(v, k, 0, 2147483647);
        else if (!strcmp(k, "full")) O.full = 1;
        else if (!strcmp(k, "quiet")) O.quiet = 1;
        else if (!strcmp(k, "fixed-home")) O.fixed_home = 1;
        else if (!strcmp(k, "mode")) {
            if (!strcmp(v, "client")) O.client = 1;
            else if (!strcmp(v, "procs")) O.client = 0;
            else {
                fprintf(stderr, "ffb-tpcc: --mode: procs or client\n");
                return 2;
            }
        }
        else if (!strcmp(k, "help")) { usage(stdout); return 0; }
        else {
            fprintf(stderr, "ffb-tpcc: unknown option --%s\n", k);
            usage(stderr);
            return 2;
        }
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "help")) { usage(stdout); return 0; }
    if (!O.dsn) {
        fprintf(stderr, "ffb-tpcc: --dsn is required\n");
        return 2;
    }
    set_sizes(O.scale);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(cmd, "load")) {
        if (!O.warehouses) {
            fprintf(stderr, "ffb-tpcc: load needs --warehouses=N\n");
            return 2;
        }
        return cmd_load();
    }
    if (!strcmp(cmd, "run")) return cmd_run();
    if (!strcmp(cmd, "check")) return cmd_check();
    if (!strcmp(cmd, "drop")) return cmd_drop();
    if (!strcmp(cmd, "create")) return cmd_create();
    usage(stderr);
    return 2;
}
