/*
 * ffb-rest: the URL grammar of PostgREST (spec rest.md A3) as a pure
 * parser: a query string and a Range header in, a request tree out. No I/O,
 * no schema: names are checked against the schema cache later (sql.c).
 */
#ifndef FFB_REST_URL_H
#define FFB_REST_URL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* A PostgREST-shaped error: HTTP status, code, message, details, hint. */
typedef struct rest_err {
    int status;
    char code[16];
    char message[256];
    char details[512];
    char hint[256];
} rest_err;

void rest_err_set(rest_err *e, int status, const char *code,
                  const char *details, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

enum rest_op {
    REST_OP_EQ = 0,
    REST_OP_NEQ,
    REST_OP_GT,
    REST_OP_GTE,
    REST_OP_LT,
    REST_OP_LTE,
    REST_OP_LIKE,
    REST_OP_ILIKE,
    REST_OP_IN,
    REST_OP_IS,
    REST_OP_ISDISTINCT
};

enum rest_is {
    REST_IS_NULL = 0,
    REST_IS_NOT_NULL,
    REST_IS_TRUE,
    REST_IS_FALSE,
    REST_IS_UNKNOWN
};

enum rest_cond_kind { REST_COND_LEAF = 0, REST_COND_AND, REST_COND_OR };

typedef struct rest_cond {
    int kind;   /* enum rest_cond_kind */
    int negate; /* not. */
    /* leaf */
    const char *column;
    int op;            /* enum rest_op */
    const char *value; /* eq..ilike, isdistinct: the text as given (like:
                          '*' already turned into '%') */
    int is_value;      /* enum rest_is */
    const char **list; /* in */
    size_t nlist;
    /* and/or */
    struct rest_cond **kids;
    size_t nkids;
} rest_cond;

struct rest_query;

/* An embedded resource of select (spec A2/A5): `alias:name!hint!inner(...)`
   or `...name(...)`. Its own select, filters, order and limit/offset (from
   `name.col=`, `name.order=`, `name.limit=` keys) are in `q`. */
typedef struct rest_embed {
    const char *hint; /* NULL: none; an FK constraint or a column name */
    int inner;        /* !inner */
    int spread;       /* ...name(...) */
    struct rest_query *q;
} rest_embed;

/* Aggregates of select (spec A4.6): `col.sum()`, `count()`. */
enum rest_agg {
    REST_AGG_NONE = 0,
    REST_AGG_SUM,
    REST_AGG_AVG,
    REST_AGG_MIN,
    REST_AGG_MAX,
    REST_AGG_COUNT
};

typedef struct rest_select {
    const char *alias;    /* NULL: none */
    const char *name;     /* "*" for all; "" for count() */
    const char *cast;     /* NULL: none; lower case as given (with an
                             aggregate: the aggregated column's cast) */
    rest_embed *embed;    /* NULL: a column; else name is the relation */
    int agg;              /* enum rest_agg */
    const char *agg_cast; /* the aggregate's cast (`col.sum()::text`) */
} rest_select;

enum rest_nulls { REST_NULLS_DEFAULT = 0, REST_NULLS_FIRST, REST_NULLS_LAST };

typedef struct rest_order {
    const char *rel; /* order=rel(col): a to-one embed's column; or NULL */
    const char *column;
    int desc;
    int nulls; /* enum rest_nulls */
} rest_order;

typedef struct rest_limits {
    size_t max_filters;     /* filters and logic trees, counted per leaf */
    size_t max_in_list;     /* items of one in.(...) */
    size_t max_depth;       /* nesting of and/or */
    size_t max_embed_depth; /* nesting of embeds; 0: 8 */
} rest_limits;

#define REST_LIMITS_DEFAULT                                                    \
    { 64, 1000, 8, 8 }

typedef struct rest_query {
    rest_select *select; /* NULL/0: "*" */
    size_t nselect;
    rest_cond *where; /* an AND of every filter; NULL: none */
    rest_order *order;
    size_t norder;
    int64_t limit;  /* -1: none */
    int64_t offset; /* 0: none */
    int has_range;  /* a Range header was given */
    int64_t range_from;
    int64_t range_to; /* -1: open */
    size_t nleaves;
    size_t nembeds; /* select items that are embeds */
    size_t naggs;   /* select items that are aggregates */
} rest_query;

/*
 * Parse `qs` (the part after '?', not decoded, may be empty) and the Range
 * header (`range` may be NULL). Everything lives in `arena`. Returns 0, or
 * -1 with `err` set (PGRST100 400 for the grammar; PGRST103 416 for a bad
 * range; PGRST108 for a filter on an embed; PGRST127 for what is not
 * implemented yet). Aggregates are parsed; the planner refuses them
 * (PGRST123) unless db-aggregates-enabled.
 */
int rest_parse_query(rarena *arena, const char *qs, size_t qslen,
                     const char *range, size_t rangelen, const rest_limits *lim,
                     rest_query *out, rest_err *err);

/* The tree as canonical text (for golden tests and logs). */
void rest_query_dump(const rest_query *q, rbuf *out);

const char *rest_op_name(int op);

/* `n` bytes percent-decoded ('+' is a space) into the arena, NUL-ended;
   NULL on no memory. */
char *rest_url_decode(rarena *a, const char *s, size_t n, size_t *outn);

#endif
