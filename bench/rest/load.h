/*
 * ffb-rest-load (bench/rest/README.md, spec rest.md A17.3): what the
 * engine (load.c) and the scenarios (scen.c) share.
 *
 * A scenario builds one HTTP/1.1 request from a connection's random
 * values, checks the status and the shape of every answer, and may have
 * a direct twin: the same SQL run through libfastfb without HTTP, checked
 * the same way (row counts and the values the request chose).
 */
#ifndef FFB_BENCH_REST_LOAD_H
#define FFB_BENCH_REST_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include <fastfb.h>

#include "data/loader.h"

/* A growable byte buffer. */
typedef struct lbuf {
    char *p;
    size_t len, cap;
} lbuf;

void lb_put(lbuf *b, const void *s, size_t n);
void lb_puts(lbuf *b, const char *s);
void lb_printf(lbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The sizes of the datasets (bookstore with `seed --scale N`). */
typedef struct lsizes {
    int64_t books, authors, customers;
} lsizes;

/* What a scenario needs from the run: tokens, sizes, the host header. */
typedef struct lenv {
    lsizes sz;
    const char *host;     /* Host: header value */
    const char *fb_token; /* FbREST scenarios: Bearer token or NULL */
    const char *k6_token; /* GETSingleJWT's fixed token */
    char **uniq_tokens;   /* GETSingleUniqueJWT's 20,000 */
    size_t nuniq;
} lenv;

/* The random values of one request (per connection). */
typedef struct lreq {
    int64_t v;    /* the id, offset, year or n the request chose */
    int word;     /* vocabulary word (ilike) */
    int conn;     /* connection number */
    uint64_t seq; /* requests sent on this connection */
} lreq;

/* One answer as the checks see it. */
typedef struct lresp {
    int status;
    const char *body;
    size_t body_len;
    const char *content_range; /* NULL when absent */
    const char *pref_applied;  /* Preference-Applied, NULL when absent */
} lresp;

/* The direct twin of a scenario: up to 3 statements run in one
   transaction (one write when `bounded`), each with its parameters. */
#define LD_MAX_STMTS 3
#define LD_MAX_PARAMS 16
typedef struct ldparam {
    int is_text;
    int64_t i;
    char text[64];
} ldparam;
typedef struct ldstmt {
    const char *sql;
    int nparams;
    ldparam p[LD_MAX_PARAMS];
    int repeat; /* DML executions queued (bulk insert), 0 = 1 */
    int vary;   /* 1 + the text parameter whose last two digits are the
                   execution's number (a unique isbn per row), 0 = none */
} ldstmt;
typedef struct ldplan {
    int read_only, rollback, bounded;
    int nstmts;
    ldstmt s[LD_MAX_STMTS];
} ldplan;

/* Rows of one statement of a direct run, as the checks see them. */
typedef struct ldrows {
    int64_t nrows;    /* rows fetched (or rows affected for DML) */
    int64_t first[4]; /* the first row's first 4 columns as int64
                         (columns that are no integer: 0) */
    int64_t sum1;     /* Σ column 1 over the rows (aggregate count) */
    int64_t sum0;     /* Σ column 0 */
    int bad;          /* a per-row rule failed */
    char badmsg[160];
} ldrows;

typedef struct lscen {
    const char *name;
    const char *suite; /* "fbrest" or "k6" */
    int expect_status;
    int expect_rt;      /* the round trips per request of the REST issue; -1:
                           no Server-Timing (no database work) */
    int rt_lo, rt_hi;   /* what -check-rt accepts when not the target (as
                           measured, rt_why says why); 0, 0: the target */
    const char *rt_why; /* why a scenario measures other than the target */
    /* choose the values and write the whole request into `out` */
    void (*build)(const lenv *e, lreq *q, dl_prng *r, lbuf *out);
    /* 0, or -1 with a sentence in err; `root` is the parsed JSON body
       (NULL when the body is empty or not JSON) */
    int (*check)(const lenv *e, const lreq *q, const lresp *r, yajl_val root,
                 char *err, size_t n);
    /* the direct twin: choose values (with the same rules) into `q` and
       fill the plan; NULL when the scenario has none */
    void (*dplan)(const lenv *e, lreq *q, dl_prng *r, ldplan *p);
    /* a row of statement `k` (called for every row: column checks) */
    void (*drow)(const lenv *e, const lreq *q, int k, ffb_stmt *st,
                 ldrows *rows);
    /* 0, or -1 with err, once every statement is in */
    int (*dcheck)(const lenv *e, const lreq *q, const ldrows *rows, char *err,
                  size_t n);
    /* after the run (k6's teardown): a request to send once, or NULL */
    const char *teardown;
} lscen;

extern const lscen lscens[];
extern const size_t nlscens;

/* yajl helpers for the checks */
yajl_val lj_get(yajl_val obj, const char *key);
int lj_int(yajl_val v, int64_t *out);

#endif
