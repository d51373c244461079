/*
 * What the two dataset loaders of bench/rest/data share (seed, chinook_gen):
 * the command line, creating or reusing the database, the DDL, batched
 * inserts of 1,000 rows with a progress bar, and the PRNG.
 *
 * A load goes: dl_open() (attach, or create; skip a complete load of the
 * same dataset), dl_ddl(pre), per table dl_table_begin() + per row the
 * dl_* binders and dl_row() + dl_table_end(), dl_ddl(post), dl_finish().
 * Errors are printed where they happen; the functions return -1 then.
 */
#ifndef FFB_BENCH_REST_LOADER_H
#define FFB_BENCH_REST_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <fastfb.h>

/* xorshift64* (Vigna), the generator of spec A16.1; seeded with 42. */
typedef struct dl_prng {
    uint64_t s;
} dl_prng;

static inline uint64_t dl_next(dl_prng *p) {
    p->s ^= p->s >> 12;
    p->s ^= p->s << 25;
    p->s ^= p->s >> 27;
    return p->s * 2685821657736338717ull;
}

/* Uniform-enough integer in [lo, hi] (the modulo bias is below 1e-15). */
static inline int64_t dl_range(dl_prng *p, int64_t lo, int64_t hi) {
    return lo + (int64_t)(dl_next(p) % (uint64_t)(hi - lo + 1));
}

typedef struct dl_opts {
    const char *dsn;
    const char *user;
    const char *password;
    int force;      /* drop and reload even when complete */
    int check_only; /* report whether a complete load is there */
    int scale;      /* divisor of the big tables (1 = the spec's) */
    int page_size;
    int forced_writes; /* -1 server default, 0 off, 1 on */
    int quiet;
    int print_schema;
    const char *pg_copy; /* write the PostgreSQL twin here ("-": stdout) */
} dl_opts;

/* One DDL statement (no terminator). Those holding a ';' (PSQL bodies)
   are printed between SET TERM lines by dl_print_schema(). */
typedef struct dl_sql {
    const char *text;
} dl_sql;

#define DL_BATCH_ROWS 1000
#define DL_MAX_PARAMS 16

typedef struct dl_ctx {
    dl_opts o;
    const char *dataset;
    int version;
    ffb_conn *conn;
    /* the table being loaded */
    const char *table;
    ffb_tx *tx;
    ffb_stmt *stmt;
    ffb_batch *batch;
    size_t in_batch;
    uint64_t table_rows, table_total;
    /* progress */
    uint64_t done_rows, total_rows;
    int64_t t0_ms;
    int tty;
    int last_pct;
    /* --pg-copy: the COPY text of the current row */
    FILE *pg;
    char pgv[DL_MAX_PARAMS][256];
    unsigned pgn;
} dl_ctx;

/*
 * Parse the command line shared by both tools. `prog` and `what` go into
 * the usage text. Returns 0 to go on, 1 to exit 0 (help printed), 2 to exit
 * 2 (a usage error printed).
 */
int dl_parse_args(int argc, char **argv, const char *prog, const char *what,
                  dl_opts *o);

/* Print the schema as an isql script: `pre`, a comment where the rows go,
   then `post` (each list ends with a NULL text). */
void dl_print_schema(FILE *f, const char *title, const dl_sql *pre,
                     const dl_sql *post);

/*
 * Attach to o->dsn, or create it (UTF8, page size o->page_size) when the
 * file does not exist. An existing database is dropped and created anew
 * when --force is given or when it holds a partial or different load of
 * this dataset (its dataset_info row says so); one with tables but no
 * dataset_info is refused. Returns 0 (load it), 1 (a complete load of the
 * same dataset, version and scale is there: nothing to do), -1.
 */
int dl_open(dl_ctx *c, const char *dataset, int version, uint64_t total_rows);

/* Execute each statement in a transaction of its own, committed. */
int dl_ddl(dl_ctx *c, const dl_sql *list);

/* Start loading `rows` rows into `table` with `insert_sql` (? markers). */
int dl_table_begin(dl_ctx *c, const char *table, const char *insert_sql,
                   uint64_t rows);

/* Parameter binders for the current row (0-based index). */
int dl_int(dl_ctx *c, unsigned idx, int64_t v);
int dl_num(dl_ctx *c, unsigned idx, int64_t unscaled, int scale);
int dl_text(dl_ctx *c, unsigned idx, const char *s);
int dl_null(dl_ctx *c, unsigned idx);
int dl_date(dl_ctx *c, unsigned idx, int y, int m, int d);
int dl_ts(dl_ctx *c, unsigned idx, int y, int m, int d, int hh, int mi, int ss);

/* Add the bound row; executes the batch every DL_BATCH_ROWS rows. */
int dl_row(dl_ctx *c);

/* Execute the rest, commit, and check the row count. */
int dl_table_end(dl_ctx *c);

/* Mark the load complete, print the time, detach. Returns 0 or -1. */
int dl_finish(dl_ctx *c);

/*
 * The whole run after dl_parse_args(): dl_open(), `pre`, `load(c, arg)`,
 * `post`, dl_finish(), dl_close(). Returns the exit code: 0 (loaded, or a
 * complete load found), 1 (failed), 3 (--check: no complete load).
 * With --pg-copy no database is touched: `pg_pre`, the rows as COPY text
 * (the same values), then `pg_post` go to the file (NULL texts: the
 * dataset has no PostgreSQL twin, exit 2).
 */
int dl_run(dl_ctx *c, const char *dataset, int version, uint64_t total_rows,
           const dl_sql *pre, int (*load)(dl_ctx *c, void *arg), void *arg,
           const dl_sql *post, const char *pg_pre, const char *pg_post);

/* Free everything (after an error too). */
void dl_close(dl_ctx *c);

/* Calendar helpers for generated dates: day `n` after y-01-01. */
void dl_day_to_date(int y0, int n, int *y, int *m, int *d);

/* A generated word list: `n` distinct capitalised words of 5..12 letters
   made of syllables, different for each `salt`. out[i] has room for 16. */
void dl_names(int salt, int n, char (*out)[16]);

/* The 50-word vocabulary of titles (none a substring of another, so an
   ilike search for one finds exactly the titles holding it). */
extern const char *const dl_vocab[50];

/* `nw` (at most 8) distinct vocabulary words, capitalised, joined by
   spaces (cut at `size`). */
void dl_words(dl_prng *p, int nw, char *out, size_t size);

#endif
