/*
 * ffb-rest: SQL for Firebird (spec rest.md A4) from a parsed request and
 * the schema cache. Pure: no I/O. Every value is a parameter; every
 * identifier comes from the schema cache and is double-quoted.
 */
#ifndef FFB_REST_SQL_H
#define FFB_REST_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "schema.h"
#include "url.h"

typedef struct rest_param {
    int is_int; /* OFFSET/FETCH values */
    int64_t i;
    const char *text; /* values from the URL, bound as text */
    int is_null;      /* a procedure's argument given as null */
} rest_param;

typedef struct rest_plan_opts {
    int64_t max_rows;        /* db-max-rows, -1: none */
    int null_order_pg;       /* 1: PostgreSQL's null placement (A4.4) */
    int count_exact;         /* Prefer: count=exact */
    int64_t probe;           /* > 0: a read without a limit asks for probe + 1
                                rows, so that the whole answer fits one fetch
                                (and the commit can ride with it); more rows
                                than that and the server reads again without
                                the probe */
    int aggregates;          /* db-aggregates-enabled: else aggregates in select
                                are 400 PGRST123 */
    int64_t count_limit;     /* > 0: the count query counts at most this many
                                rows (count=estimated: db-max-rows + 1) */
    int count_planned;       /* count=planned/estimated: the row estimate's
                                statement (est_sql) */
    const rest_table *table; /* read this one instead of `name`'s (a
                                selectable procedure, rest_table.proc) */
} rest_plan_opts;

typedef struct rest_plan {
    rbuf sql;       /* the page query */
    rbuf count_sql; /* the count query (when asked) */
    rest_param *params;
    size_t nparams;
    size_t nwhere;     /* the first nwhere params belong to WHERE (count) */
    const char **keys; /* the JSON key of each output column */
    size_t nkeys;
    /* per key: the output column of EXTRACT(TIMEZONE_HOUR ...) of a TIME
       or TIMESTAMP WITH TIME ZONE column (TIMEZONE_MINUTE follows), -1
       for others: libfastfb gives a region zone's name but not the offset
       in effect, so the server is asked for it; these columns follow the
       keys' columns */
    int *tzcol;
    int64_t offset;           /* effective */
    int64_t limit;            /* effective, -1: none */
    int64_t probe;            /* > 0: the SQL's FETCH is probe + 1 rows although
                                 the client set no limit */
    struct rest_eplan *embed; /* the embeds' statements (embed.h), or NULL */
    /* count=planned/estimated: Firebird has no planner estimate in SQL, so
       the selectivity of the table's primary key (else a unique key)
       index, RDB$INDICES.RDB$STATISTICS (1 / its distinct keys, from the
       last SET STATISTICS or index build), read in the same write; the
       estimate is round(1 / selectivity) rows whatever the filters (0:
       never computed, a view or no unique key: unknown). One parameter:
       est_table, the stored name. NULL: not asked. */
    const char *est_sql;
    const char *est_table;
} rest_plan;

/* The row estimate from the selectivity est_sql read: -1 when unknown. */
int64_t rest_plan_estimate(double selectivity);

/* Prefer: count= */
enum rest_count {
    REST_COUNT_NONE = 0,
    REST_COUNT_EXACT,
    REST_COUNT_PLANNED,
    REST_COUNT_ESTIMATED
};
/* The count fields of `o` for `kind` (o->max_rows set first): exact
   counts; planned reads the estimate; estimated counts at most
   db-max-rows + 1 rows and reads the estimate too. */
void rest_plan_count_opts(rest_plan_opts *o, int kind);
/* The total of Content-Range (-1: "*") from the count (-1: none) and the
   estimate (-1: unknown), as PostgREST: planned the estimate; estimated
   the count when it is at most db-max-rows (or there is no db-max-rows),
   else the larger of the two (unknown when the estimate is). */
int64_t rest_plan_count_total(int kind, int64_t max_rows, int64_t counted,
                              int64_t planned);

/*
 * Plan a read of `table` (`name` as the client gave it). Returns 0, or -1
 * with `err` (404 PGRST205 unknown table; 400 42703 unknown column;
 * 400 PGRST100 bad cast).
 */
int rest_plan_read(rarena *arena, const rest_schema *schema, const char *name,
                   const rest_query *q, const rest_plan_opts *opts,
                   rest_plan *plan, rest_err *err);
void rest_plan_free(rest_plan *plan);

/* The generator's pieces, for embed.c: the SQL of a table's columns,
   filters and order, qualified by `qual` when it is set. */
typedef struct rest_gen {
    rarena *arena;
    const rest_table *t;
    rest_plan *plan; /* params and keys go here */
    rest_err *err;
    size_t cap;
    const char *qual;      /* NULL: unqualified; else "t1" or "\"BOOKS\"" */
    struct rest_eplan *ep; /* the top level's embeds (order=rel(col)) */
} rest_gen;
void rest_gen_quote(rbuf *b, const char *name);
int rest_gen_param(rest_gen *g, const rest_param *p);
int rest_gen_cond(rest_gen *g, const rest_cond *c, rbuf *b);
int rest_gen_select(rest_gen *g, const rest_query *q, rbuf *b);
int rest_gen_order(rest_gen *g, const rest_query *q, const rest_plan_opts *o,
                   rbuf *b);
/* " WHERE <filters>" of `q` on `t` (nothing without filters) appended to
   `out`, its parameters in `*params` (in `arena`). Returns 0, or -1 with
   `err` (400 42703 unknown column). For writes (wsql.c). */
int rest_plan_where(rarena *arena, const rest_table *t, const rest_query *q,
                    rbuf *out, rest_param **params, size_t *nparams,
                    rest_err *err);

/* What a read names after FROM: the table, or a selectable procedure
   with its arguments as parameters and the table's name as alias. */
int rest_gen_from(rest_gen *g, const rest_table *t, rbuf *b);

/* `name` as a double-quoted SQL identifier. */
void rest_quote_ident(rbuf *b, const char *name);

/* SQL + params + count as text (golden files). */
void rest_plan_dump(const rest_plan *plan, rbuf *out);

/* `name` as a double-quoted identifier ("" for a quote). */
void rest_sql_quote_ident(rbuf *b, const char *name);

#endif
