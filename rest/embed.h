/*
 * ffb-rest: resource embedding (spec rest.md A2, A5). Pure planning and
 * assembly: no I/O.
 *
 * Every level of a request's embed tree is one statement, and all of them
 * are independent: each is restricted by a sub-select of its parent's rows
 * (for the top level: its filters, order and page), so they all go out in
 * one write, in the request's one transaction, and are joined here by key.
 * A warm GET with embeds at any depth costs one round trip.
 */
#ifndef FFB_REST_EMBED_H
#define FFB_REST_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "fastfb.h"
#include "sql.h"

enum rest_rel { REST_REL_TO_ONE = 0, REST_REL_TO_MANY, REST_REL_M2M };

typedef struct rest_erow {
    const char *json;   /* "k":v,... (no braces); "" for none */
    const char *mkey;   /* the match key (its parent's key value) */
    const char **pkeys; /* per kid: this row's value of the kid's key */
    const char **praw;  /* per-level: per kid, the key as text (one-column
                           keys), NULL when NULL */
} rest_erow;

typedef struct rest_enode rest_enode;
struct rest_enode {
    const rest_select *it; /* NULL: the top level */
    const rest_query *q;
    const rest_table *t;
    int kind;        /* enum rest_rel */
    const char *key; /* the JSON key */
    rest_enode *parent;
    size_t depth;
    size_t index;         /* among the parent's kids */
    const rest_table *jt; /* many-to-many: the junction table */
    size_t nk;
    const char **pcols; /* the parent's columns of the join */
    const char **ccols; /* matched against them: in t, or in jt (m2m) */
    const char **jcols; /* m2m: jt's columns to t ... */
    const char **tcols; /* ... and t's columns they reference */
    size_t nj;
    rest_enode **kids;
    size_t nkids;
    size_t pidx;    /* where pcols are in the parent's output columns */
    size_t midx;    /* where ccols are in this level's output columns */
    rest_plan plan; /* the level's SQL (the top level uses the request's) */
    /* rows */
    rest_erow *rows;
    size_t nrows, caprows;
    size_t *hash; /* open addressing: row index + 1 of a group's first */
    size_t hcap;
};

typedef struct rest_eplan {
    rarena rows; /* the rows of every level */
    rest_enode *root;
    rest_enode **levels; /* every node below the top, in SQL order */
    size_t nlevels;
    size_t depth;  /* the deepest level */
    int per_level; /* db-embed-strategy = per-level (set by the caller) */
    rarena *arena; /* the request's, for per-level SQL */
    rest_plan_opts o;
    const rest_plan *top;
} rest_eplan;

/* The tree of `q`'s embeds on `t`: relationships from the schema cache's
   foreign keys. -1 with PGRST200 (400: none), PGRST201 (300: several),
   42703 (unknown column). */
int rest_embed_resolve(rarena *a, const rest_schema *s, const rest_table *t,
                       const rest_query *q, rest_eplan **out, rest_err *err);
/* Hooks of the top level's SQL (sql.c): !inner conditions after its
   filters; the join keys after its columns; the primary key after its
   order (so that a page is the same set in every statement). */
int rest_embed_root_where(rest_eplan *ep, rest_gen *g, rbuf *where);
int rest_embed_root_cols(rest_eplan *ep, rest_gen *g, rbuf *sql);
void rest_embed_root_order(rest_eplan *ep, rbuf *sql, int has_order);
/* order=rel(col) of the top level: (SELECT o.col FROM rel's table o WHERE
   o.key = <the top table>.fk), for a to-one embed of select; 400 PGRST108
   when rel is not one, PGRST118 when it is not to-one. `ep` may be NULL. */
int rest_embed_order_term(rest_eplan *ep, rest_gen *g, const rest_order *ord,
                          rbuf *b);
/* Every level's SQL, once the top level's plan is complete. */
int rest_embed_plan(rest_eplan *ep, rarena *a, const rest_query *q,
                    const rest_plan_opts *o, const rest_plan *top,
                    rest_err *err);
void rest_embed_free(rest_eplan *ep);
/* Per level: level `k`'s SQL again, restricted to its parent's `keys`
   (text parameters, IN (?, ...)) instead of the sub-select. One-column
   keys only (the caller keeps the sub-select for others). */
int rest_embed_level_keys(rest_eplan *ep, rest_enode *k,
                          const char *const *keys, size_t nkeys, rest_err *err);
/* Per level: the distinct key values of kid `k` in its parent's rows,
   padded to the next of 1, 2, 4, ... 512, 1000 by repeating the last
   (so that the statement cache hits); 0 when there are none, -1 for
   more than 1000 (the caller keeps the sub-select). */
long rest_embed_keys(rest_eplan *ep, const rest_enode *k, const char ***out);
void rest_embed_dump(const rest_eplan *ep, rbuf *out);

/* Take the rows `st` has buffered for `n` (the top level: `probe` > 0
   stops at probe + 1 rows). Returns 1 at the end, FFB_E_AGAIN when more
   must be fetched, 2 when the probe overflowed, < 0 on failure. */
int rest_embed_take(rest_eplan *ep, rest_enode *n, ffb_stmt *st, int64_t probe);
/* The body: the top level's rows with their embeds. */
int rest_embed_write(rest_eplan *ep, rbuf *body);

#endif
