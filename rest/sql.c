/* ffb-rest: SQL generation for reads (spec rest.md A4). Pure. */
#include "sql.h"

#include "embed.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef rest_gen gen;

void rest_gen_quote(rbuf *b, const char *name) {
    rbuf_addc(b, '"');
    for (const char *p = name; *p; p++) {
        if (*p == '"')
            rbuf_addc(b, '"');
        rbuf_addc(b, *p);
    }
    rbuf_addc(b, '"');
}

#define quote_ident rest_gen_quote

/* A column as the SQL names it: qualified by the generator's alias. */
static void col_ref(gen *g, rbuf *b, const rest_column *c) {
    if (g->qual) {
        rbuf_adds(b, g->qual);
        rbuf_addc(b, '.');
    }
    quote_ident(b, c->name);
}

static int nomem(gen *g) {
    rest_err_set(g->err, 500, "PGRST000", NULL, "out of memory");
    return -1;
}

int rest_gen_param(gen *g, const rest_param *p) {
    rest_plan *pl = g->plan;
    if (pl->nparams == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 8;
        rest_param *np = rarena_alloc(g->arena, nc * sizeof *np);
        if (!np)
            return nomem(g);
        if (pl->nparams)
            memcpy(np, pl->params, pl->nparams * sizeof *np);
        pl->params = np;
        g->cap = nc;
    }
    pl->params[pl->nparams++] = *p;
    return 0;
}

static int text_param(gen *g, const char *s) {
    rest_param p = {0};
    p.text = s;
    return rest_gen_param(g, &p);
}

static const rest_column *column(gen *g, const char *name) {
    const rest_column *c = rest_table_find(g->t, name);
    if (!c) {
        rest_err_set(g->err, 400, "42703", NULL, "column %s.%s does not exist",
                     g->t->exposed, name);
    }
    return c;
}

/* ilike on "*x*" without other wildcards: CONTAINING (A4.2). */
static const char *containing_arg(gen *g, const char *v) {
    size_t n = strlen(v);
    if (n < 2 || v[0] != '%' || v[n - 1] != '%')
        return NULL;
    for (size_t i = 1; i + 1 < n; i++)
        if (v[i] == '%' || v[i] == '_' || v[i] == '\\')
            return NULL;
    return rarena_strndup(g->arena, v + 1, n - 2);
}

int rest_gen_cond(gen *g, const rest_cond *c, rbuf *b) {
    static const char *const cmp[] = {"=", "<>", ">", ">=", "<", "<="};
    if (c->negate)
        rbuf_adds(b, "NOT (");
    if (c->kind != REST_COND_LEAF) {
        rbuf_addc(b, '(');
        for (size_t i = 0; i < c->nkids; i++) {
            if (i)
                rbuf_adds(b, c->kind == REST_COND_AND ? " AND " : " OR ");
            if (rest_gen_cond(g, c->kids[i], b) < 0)
                return -1;
        }
        rbuf_addc(b, ')');
    } else {
        const rest_column *col = column(g, c->column);
        if (!col)
            return -1;
        switch (c->op) {
        case REST_OP_EQ:
        case REST_OP_NEQ:
        case REST_OP_GT:
        case REST_OP_GTE:
        case REST_OP_LT:
        case REST_OP_LTE:
            col_ref(g, b, col);
            /* per filter of every request: no printf */
            rbuf_addc(b, ' ');
            rbuf_adds(b, cmp[c->op]);
            rbuf_adds(b, " ?");
            if (text_param(g, c->value) < 0)
                return -1;
            break;
        case REST_OP_LIKE:
            col_ref(g, b, col);
            rbuf_adds(b, " LIKE ? ESCAPE '\\'");
            if (text_param(g, c->value) < 0)
                return -1;
            break;
        case REST_OP_ILIKE: {
            const char *arg = containing_arg(g, c->value);
            if (arg) {
                col_ref(g, b, col);
                rbuf_adds(b, " CONTAINING ?");
                if (text_param(g, arg) < 0)
                    return -1;
            } else {
                rbuf_adds(b, "UPPER(");
                col_ref(g, b, col);
                rbuf_adds(b, ") LIKE UPPER(?) ESCAPE '\\'");
                if (text_param(g, c->value) < 0)
                    return -1;
            }
            break;
        }
        case REST_OP_IN:
            if (c->nlist == 0) {
                rbuf_adds(b, "1 = 0");
                break;
            }
            col_ref(g, b, col);
            rbuf_adds(b, " IN (");
            for (size_t i = 0; i < c->nlist; i++) {
                rbuf_adds(b, i ? ", ?" : "?");
                if (text_param(g, c->list[i]) < 0)
                    return -1;
            }
            rbuf_addc(b, ')');
            break;
        case REST_OP_IS: {
            static const char *const is[] = {" IS NULL", " IS NOT NULL",
                                             " IS TRUE", " IS FALSE",
                                             " IS UNKNOWN"};
            col_ref(g, b, col);
            rbuf_adds(b, is[c->is_value]);
            break;
        }
        case REST_OP_ISDISTINCT:
            col_ref(g, b, col);
            rbuf_adds(b, " IS DISTINCT FROM ?");
            if (text_param(g, c->value) < 0)
                return -1;
            break;
        default:
            rest_err_set(g->err, 500, "PGRST000", NULL, "bad operator");
            return -1;
        }
    }
    if (c->negate)
        rbuf_addc(b, ')');
    return 0;
}

/* The cast whitelist of A4.3; -1 with PGRST100 for anything else. */
static int cast_sql(gen *g, const char *cast, rbuf *b) {
    static const struct {
        const char *name;
        const char *sql;
    } casts[] = {{"text", "VARCHAR(8191)"},
                 {"int", "INTEGER"},
                 {"integer", "INTEGER"},
                 {"bigint", "BIGINT"},
                 {"smallint", "SMALLINT"},
                 {"numeric", "NUMERIC(18,4)"},
                 {"float", "DOUBLE PRECISION"},
                 {"double", "DOUBLE PRECISION"},
                 {"date", "DATE"},
                 {"timestamp", "TIMESTAMP"},
                 {"time", "TIME"},
                 {"boolean", "BOOLEAN"}};
    for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++)
        if (strcmp(cast, casts[i].name) == 0) {
            rbuf_adds(b, casts[i].sql);
            return 0;
        }
    unsigned p, s;
    char tail;
    if ((sscanf(cast, "numeric(%u,%u)%c", &p, &s, &tail) == 2 ||
         sscanf(cast, "numeric(%u, %u)%c", &p, &s, &tail) == 2) &&
        p >= 1 && p <= 38 && s <= p && cast[strlen(cast) - 1] == ')') {
        rbuf_printf(b, "NUMERIC(%u,%u)", p, s);
        return 0;
    }
    rest_err_set(g->err, 400, "PGRST100",
                 "allowed: text, int, integer, bigint, smallint, numeric, "
                 "numeric(p,s), float, double, date, timestamp, time, "
                 "boolean",
                 "\"failed to parse select parameter\" (unknown cast %.64s)",
                 cast);
    return -1;
}

static int add_key(gen *g, const char *key, size_t *cap) {
    rest_plan *pl = g->plan;
    if (pl->nkeys == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        const char **nk = rarena_alloc(g->arena, nc * sizeof *nk);
        if (!nk)
            return nomem(g);
        if (pl->nkeys)
            memcpy(nk, pl->keys, pl->nkeys * sizeof *nk);
        pl->keys = nk;
        *cap = nc;
    }
    pl->keys[pl->nkeys++] = key;
    return 0;
}

/* RDB$FIELD_TYPE of TIME / TIMESTAMP WITH TIME ZONE (Firebird 4+) */
#define RDB_TIME_TZ 28
#define RDB_TIMESTAMP_TZ 29

static int is_tz(const rest_column *c) {
    return c && (c->type == RDB_TIME_TZ || c->type == RDB_TIMESTAMP_TZ);
}

/* The offsets of the time zone columns, after every key's column. */
static int tz_columns(gen *g, const rest_column **src, rbuf *b) {
    rest_plan *pl = g->plan;
    size_t next = pl->nkeys;
    pl->tzcol = rarena_alloc(g->arena, (pl->nkeys + 1) * sizeof *pl->tzcol);
    if (!pl->tzcol)
        return nomem(g);
    for (size_t k = 0; k < pl->nkeys; k++) {
        pl->tzcol[k] = -1;
        if (!is_tz(src[k]))
            continue;
        rbuf_adds(b, ", EXTRACT(TIMEZONE_HOUR FROM ");
        col_ref(g, b, src[k]);
        rbuf_adds(b, "), EXTRACT(TIMEZONE_MINUTE FROM ");
        col_ref(g, b, src[k]);
        rbuf_addc(b, ')');
        pl->tzcol[k] = (int)next;
        next += 2;
    }
    return 0;
}

static int add_src(gen *g, const rest_column ***src, size_t *cap,
                   const rest_column *c) {
    size_t n = g->plan->nkeys; /* the key about to be added */
    if (n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        const rest_column **ns = rarena_alloc(g->arena, nc * sizeof *ns);
        if (!ns)
            return nomem(g);
        if (n)
            memcpy(ns, *src, n * sizeof *ns);
        *src = ns;
        *cap = nc;
    }
    (*src)[n] = c;
    return 0;
}

/* RDB$FIELD_TYPE of the exact numbers: SMALLINT, INTEGER, BIGINT, INT128
   (NUMERIC/DECIMAL are these with a scale) */
static int is_exact(const rest_column *c) {
    return c->type == 7 || c->type == 8 || c->type == 16 || c->type == 26;
}

/* An aggregate (A4.6): FN(col), FN(CAST(col AS t)), COUNT(*), with the
   aggregate's own cast around it. Firebird's AVG of an exact number keeps
   its scale and truncates (AVG of INTEGER 1, 2 is 1); PostgreSQL's is
   exact with decimals: an exact column is averaged as DOUBLE PRECISION
   unless the client cast it. `src`: the column whose type the output
   has (MIN/MAX without casts), else NULL. */
static int agg_sql(gen *g, const rest_select *it, rbuf *b,
                   const rest_column **src) {
    static const char *const fn[] = {"", "SUM", "AVG", "MIN", "MAX", "COUNT"};
    const rest_column *col = NULL;
    if (*it->name && !(col = column(g, it->name)))
        return -1;
    if (it->agg_cast)
        rbuf_adds(b, "CAST(");
    rbuf_printf(b, "%s(", fn[it->agg]);
    if (!col) {
        rbuf_addc(b, '*');
    } else if (it->cast || (it->agg == REST_AGG_AVG && is_exact(col))) {
        rbuf_adds(b, "CAST(");
        col_ref(g, b, col);
        rbuf_adds(b, " AS ");
        if (!it->cast)
            rbuf_adds(b, "DOUBLE PRECISION");
        else if (cast_sql(g, it->cast, b) < 0)
            return -1;
        rbuf_addc(b, ')');
    } else {
        col_ref(g, b, col);
    }
    rbuf_addc(b, ')');
    if (it->agg_cast) {
        rbuf_adds(b, " AS ");
        if (cast_sql(g, it->agg_cast, b) < 0)
            return -1;
        rbuf_addc(b, ')');
    }
    *src = (it->agg == REST_AGG_MIN || it->agg == REST_AGG_MAX) && !it->cast &&
                   !it->agg_cast
               ? col
               : NULL;
    return 0;
}

/* An aggregate's key: the alias, else the function's name (PostgREST's). */
static const char *agg_key(const rest_select *it) {
    static const char *const key[] = {"", "sum", "avg", "min", "max", "count"};
    return it->alias ? it->alias : key[it->agg];
}

/* " GROUP BY" the columns select does not aggregate (PostgREST's
   automatic GROUP BY); nothing when every item is an aggregate. */
static int group_by(gen *g, const rest_query *q, rbuf *b) {
    int first = 1;
    for (size_t i = 0; i < q->nselect; i++) {
        const rest_select *it = &q->select[i];
        if (it->agg || it->embed)
            continue;
        if (strcmp(it->name, "*") == 0) {
            for (size_t c = 0; c < g->t->ncols; c++) {
                rbuf_adds(b, first ? " GROUP BY " : ", ");
                first = 0;
                col_ref(g, b, &g->t->cols[c]);
            }
            continue;
        }
        const rest_column *col = column(g, it->name);
        if (!col)
            return -1;
        rbuf_adds(b, first ? " GROUP BY " : ", ");
        first = 0;
        col_ref(g, b, col);
    }
    return 0;
}

/* Aggregates only at the top level of a read without embeds, and only
   with db-aggregates-enabled (else PostgREST's PGRST123). */
static int check_aggs(const rest_query *q, int allowed, int top,
                      rest_err *err) {
    for (size_t i = 0; i < q->nselect; i++) {
        const rest_select *it = &q->select[i];
        if (it->embed) {
            if (check_aggs(it->embed->q, allowed, 0, err) < 0)
                return -1;
            continue;
        }
        if (!it->agg)
            continue;
        if (!allowed) {
            rest_err_set(err, 400, "PGRST123", NULL,
                         "Use of aggregate functions is not allowed");
            return -1;
        }
        if (!top || q->nembeds) {
            rest_err_set(err, 400, "PGRST127",
                         top ? "aggregates with embeds"
                             : "aggregates inside embeds",
                         "Feature not implemented");
            return -1;
        }
    }
    return 0;
}

int rest_gen_select(gen *g, const rest_query *q, rbuf *b) {
    size_t kcap = 0, scap = 0;
    const rest_column **src = NULL; /* per key: its column, NULL if cast */
    int first = 1;
    size_t n = q->nselect ? q->nselect : 1;
    for (size_t i = 0; i < n; i++) {
        const rest_select *it = q->nselect ? &q->select[i] : NULL;
        if (it && it->embed)
            continue; /* embed.c */
        if (it && it->agg) {
            const rest_column *asrc;
            if (!first)
                rbuf_adds(b, ", ");
            first = 0;
            if (agg_sql(g, it, b, &asrc) < 0 ||
                add_src(g, &src, &scap, asrc) < 0 ||
                add_key(g, agg_key(it), &kcap) < 0)
                return -1;
            continue;
        }
        if (!it || strcmp(it->name, "*") == 0) {
            for (size_t c = 0; c < g->t->ncols; c++) {
                if (!first)
                    rbuf_adds(b, ", ");
                first = 0;
                col_ref(g, b, &g->t->cols[c]);
                if (add_src(g, &src, &scap, &g->t->cols[c]) < 0 ||
                    add_key(g, g->t->cols[c].exposed, &kcap) < 0)
                    return -1;
            }
            continue;
        }
        const rest_column *col = column(g, it->name);
        if (!col)
            return -1;
        if (!first)
            rbuf_adds(b, ", ");
        first = 0;
        if (it->cast) {
            rbuf_adds(b, "CAST(");
            col_ref(g, b, col);
            rbuf_adds(b, " AS ");
            if (cast_sql(g, it->cast, b) < 0)
                return -1;
            rbuf_addc(b, ')');
        } else {
            col_ref(g, b, col);
        }
        if (add_src(g, &src, &scap, it->cast ? NULL : col) < 0 ||
            add_key(g, it->alias ? it->alias : col->exposed, &kcap) < 0)
            return -1;
    }
    if (first && q->nembeds == 0) {
        rest_err_set(g->err, 400, "PGRST100", NULL, "table %s has no columns",
                     g->t->exposed);
        return -1;
    }
    return tz_columns(g, src, b);
}

int rest_gen_order(gen *g, const rest_query *q, const rest_plan_opts *o,
                   rbuf *b) {
    for (size_t i = 0; i < q->norder; i++) {
        const rest_order *ord = &q->order[i];
        const rest_column *col = NULL;
        if (ord->rel) {
            /* a to-one embed's column: a scalar sub-select (NULL when the
               row has no match) */
            rbuf_adds(b, i ? ", " : " ORDER BY ");
            if (rest_embed_order_term(g->ep, g, ord, b) < 0)
                return -1;
        } else {
            col = column(g, ord->column);
            if (!col)
                return -1;
            rbuf_adds(b, i ? ", " : " ORDER BY ");
            col_ref(g, b, col);
        }
        rbuf_adds(b, ord->desc ? " DESC" : " ASC");
        int nulls = ord->nulls;
        if (col && col->notnull)
            nulls = REST_NULLS_DEFAULT; /* keeps index navigation (A4.4) */
        else if (nulls == REST_NULLS_DEFAULT && o->null_order_pg)
            nulls = ord->desc ? REST_NULLS_FIRST : REST_NULLS_LAST;
        if (nulls == REST_NULLS_FIRST)
            rbuf_adds(b, " NULLS FIRST");
        else if (nulls == REST_NULLS_LAST)
            rbuf_adds(b, " NULLS LAST");
    }
    return 0;
}

/* " WHERE <every filter>", or nothing without filters. */
static int where_sql(gen *g, const rest_query *q, rbuf *where) {
    if (q->where && q->where->nkids) {
        rbuf_adds(where, " WHERE ");
        /* the root is an AND of every filter: no outer parentheses */
        const rest_cond *root = q->where;
        for (size_t i = 0; i < root->nkids; i++) {
            if (i)
                rbuf_adds(where, " AND ");
            if (rest_gen_cond(g, root->kids[i], where) < 0)
                return -1;
        }
    }
    return 0;
}

int rest_plan_where(rarena *arena, const rest_table *t, const rest_query *q,
                    rbuf *out, rest_param **params, size_t *nparams,
                    rest_err *err) {
    rest_plan tmp;
    memset(&tmp, 0, sizeof tmp);
    gen g = {arena, t, &tmp, err, 0, NULL, NULL};
    int rc = where_sql(&g, q, out);
    *params = tmp.params;
    *nparams = tmp.nparams;
    return rc;
}

void rest_quote_ident(rbuf *b, const char *name) { quote_ident(b, name); }

int rest_gen_from(rest_gen *g, const rest_table *t, rbuf *b) {
    if (!t->proc) {
        quote_ident(b, t->name);
        return 0;
    }
    /* a selectable procedure: its arguments are the statement's first
       parameters; named as the table, so that qualified columns (the
       embeds' EXISTS, order=rel(col)) read it */
    quote_ident(b, t->proc);
    if (t->proc_nvals) {
        rbuf_addc(b, '(');
        for (size_t i = 0; i < t->proc_nvals; i++) {
            rest_param p = {0};
            p.text = t->proc_vals[i];
            p.is_null = !p.text;
            rbuf_adds(b, i ? ", ?" : "?");
            if (rest_gen_param(g, &p) < 0)
                return -1;
        }
        rbuf_addc(b, ')');
    }
    rbuf_addc(b, ' ');
    quote_ident(b, t->name);
    return 0;
}

int rest_plan_read(rarena *arena, const rest_schema *schema, const char *name,
                   const rest_query *q, const rest_plan_opts *opts,
                   rest_plan *plan, rest_err *err) {
    gen g = {arena, NULL, plan, err, 0, NULL, NULL};
    memset(plan, 0, sizeof *plan);
    rbuf_init(&plan->sql, 1u << 20);
    rbuf_init(&plan->count_sql, 1u << 20);
    g.t = opts->table ? opts->table : rest_schema_find(schema, name);
    if (!g.t) {
        rest_err_set(err, 404, "PGRST205", NULL,
                     "Could not find the table '%.128s' in the schema cache",
                     name);
        return -1;
    }
    if (check_aggs(q, opts->aggregates, 1, err) < 0)
        goto fail0;
    if (q->nembeds &&
        rest_embed_resolve(arena, schema, g.t, q, &plan->embed, err) < 0)
        goto fail0;
    rbuf where, group, from;
    rbuf_init(&where, 1u << 20);
    rbuf_init(&group, 1u << 20);
    rbuf_init(&from, 1u << 20);
    /* FROM, then WHERE: a procedure's arguments come first */
    if (rest_gen_from(&g, g.t, &from) < 0 || where_sql(&g, q, &where) < 0)
        goto fail;
    g.ep = plan->embed;
    if (plan->embed && rest_embed_root_where(plan->embed, &g, &where) < 0)
        goto fail;
    plan->nwhere = plan->nparams;

    rbuf_adds(&plan->sql, "SELECT ");
    if (rest_gen_select(&g, q, &plan->sql) < 0)
        goto fail;
    if (plan->embed) {
        size_t at = plan->sql.len;
        rest_embed_root_cols(plan->embed, &g, &plan->sql);
        if (plan->sql.len == at && plan->nkeys == 0)
            rbuf_adds(&plan->sql, "1"); /* only embeds without keys */
    }
    rbuf_adds(&plan->sql, " FROM ");
    rbuf_add(&plan->sql, from.p, from.len);
    if (where.len)
        rbuf_add(&plan->sql, where.p, where.len);
    if (q->naggs && group_by(&g, q, &group) < 0)
        goto fail;
    rbuf_add(&plan->sql, group.p, group.len);
    size_t before_order = plan->sql.len;
    if (rest_gen_order(&g, q, opts, &plan->sql) < 0)
        goto fail;
    if (plan->embed)
        rest_embed_root_order(plan->embed, &plan->sql,
                              plan->sql.len > before_order);

    /* Paging (A4.5): the Range header and limit/offset intersect (as in
       PostgREST); db-max-rows caps the page. */
    int64_t off = q->offset, lim = q->limit;
    if (q->has_range) {
        /* PostgREST intersects the Range header with limit/offset */
        int64_t lo = q->range_from > off ? q->range_from : off;
        int64_t hi = q->range_to; /* -1: open */
        if (lim >= 0 && (hi < 0 || off + lim - 1 < hi))
            hi = off + lim - 1;
        off = lo;
        lim = hi < 0 ? -1 : (hi >= lo ? hi - lo + 1 : 0);
    }
    if (opts->max_rows >= 0 && (lim < 0 || lim > opts->max_rows))
        lim = opts->max_rows;
    plan->offset = off;
    plan->limit = lim;
    int64_t fetch = lim;
    if (lim < 0 && opts->probe > 0) {
        plan->probe = opts->probe;
        fetch = opts->probe + 1;
    }
    if (off > 0 || fetch >= 0) {
        rest_param p = {1, off, NULL, 0};
        rbuf_adds(&plan->sql, " OFFSET ? ROWS");
        if (rest_gen_param(&g, &p) < 0)
            goto fail;
    }
    if (fetch >= 0) {
        rest_param p = {1, fetch, NULL, 0};
        rbuf_adds(&plan->sql, " FETCH NEXT ? ROWS ONLY");
        if (rest_gen_param(&g, &p) < 0)
            goto fail;
    }
    if (opts->count_exact) {
        /* with aggregates: the groups (one without GROUP BY); with a
           limit: at most that many (ROWS, inside a derived table) */
        int sub = q->naggs || opts->count_limit > 0;
        rbuf_adds(&plan->count_sql, "SELECT COUNT(*) FROM ");
        if (sub)
            rbuf_adds(&plan->count_sql, q->naggs ? "(SELECT COUNT(*) AS N FROM "
                                                 : "(SELECT 1 AS N FROM ");
        rbuf_add(&plan->count_sql, from.p, from.len);
        if (where.len)
            rbuf_add(&plan->count_sql, where.p, where.len);
        if (q->naggs)
            rbuf_add(&plan->count_sql, group.p, group.len);
        if (opts->count_limit > 0)
            rbuf_printf(&plan->count_sql, " ROWS %lld",
                        (long long)opts->count_limit);
        if (sub)
            rbuf_addc(&plan->count_sql, ')');
    }
    if (opts->count_planned && !g.t->proc) {
        plan->est_sql =
            "SELECT I.RDB$STATISTICS FROM RDB$RELATION_CONSTRAINTS C JOIN "
            "RDB$INDICES I ON I.RDB$INDEX_NAME = C.RDB$INDEX_NAME WHERE "
            "C.RDB$RELATION_NAME = ? AND C.RDB$CONSTRAINT_TYPE IN ('PRIMARY "
            "KEY', 'UNIQUE') ORDER BY C.RDB$CONSTRAINT_TYPE ROWS 1";
        plan->est_table = g.t->name;
    }
    if (plan->sql.failed || plan->count_sql.failed || where.failed ||
        group.failed || from.failed) {
        rest_err_set(err, 400, "PGRST100", NULL,
                     "the generated SQL is too long");
        goto fail;
    }
    rbuf_cstr(&plan->sql);
    rbuf_cstr(&plan->count_sql);
    rbuf_free(&where);
    rbuf_free(&group);
    rbuf_free(&from);
    if (plan->embed &&
        rest_embed_plan(plan->embed, arena, q, opts, plan, err) < 0) {
        rest_plan_free(plan);
        return -1;
    }
    return 0;
fail:
    rbuf_free(&where);
    rbuf_free(&group);
    rbuf_free(&from);
fail0:
    rest_plan_free(plan);
    return -1;
}

int64_t rest_plan_estimate(double s) {
    if (!(s > 0) || s > 1) /* 0 (never computed), NaN, nonsense */
        return -1;
    double rows = 1 / s + 0.5;
    return rows >= 9e18 ? -1 : (int64_t)rows;
}

void rest_plan_count_opts(rest_plan_opts *o, int kind) {
    o->count_exact = kind == REST_COUNT_EXACT || kind == REST_COUNT_ESTIMATED;
    /* estimated without db-max-rows is the count (no estimate needed) */
    o->count_planned = kind == REST_COUNT_PLANNED ||
                       (kind == REST_COUNT_ESTIMATED && o->max_rows >= 0);
    o->count_limit =
        kind == REST_COUNT_ESTIMATED && o->max_rows >= 0 ? o->max_rows + 1 : 0;
}

int64_t rest_plan_count_total(int kind, int64_t max_rows, int64_t counted,
                              int64_t planned) {
    switch (kind) {
    case REST_COUNT_EXACT:
        return counted;
    case REST_COUNT_PLANNED:
        return planned;
    case REST_COUNT_ESTIMATED:
        if (counted < 0 || max_rows < 0 || counted <= max_rows)
            return counted;
        return planned < 0 ? -1 : planned > counted ? planned : counted;
    default:
        return -1;
    }
}

void rest_plan_free(rest_plan *plan) {
    rbuf_free(&plan->sql);
    rbuf_free(&plan->count_sql);
    rest_embed_free(plan->embed);
    plan->embed = NULL;
}

void rest_plan_dump(const rest_plan *plan, rbuf *b) {
    rbuf_add(b, plan->sql.p, plan->sql.len);
    rbuf_adds(b, "\nparams:");
    for (size_t i = 0; i < plan->nparams; i++) {
        if (plan->params[i].is_int)
            rbuf_printf(b, " %lld", (long long)plan->params[i].i);
        else if (plan->params[i].is_null)
            rbuf_adds(b, " NULL");
        else {
            rbuf_adds(b, " '");
            rbuf_adds(b, plan->params[i].text);
            rbuf_addc(b, '\'');
        }
    }
    if (plan->probe)
        rbuf_printf(b, " (probe %lld)", (long long)plan->probe);
    rbuf_adds(b, "\nkeys:");
    for (size_t i = 0; i < plan->nkeys; i++) {
        rbuf_addc(b, ' ');
        rbuf_adds(b, plan->keys[i]);
    }
    if (plan->count_sql.len) {
        rbuf_adds(b, "\ncount: ");
        rbuf_add(b, plan->count_sql.p, plan->count_sql.len);
        rbuf_printf(b, " (%zu params)", plan->nwhere);
    }
    if (plan->est_sql)
        rbuf_printf(b, "\nestimate: %s ('%s')", plan->est_sql, plan->est_table);
    rbuf_addc(b, '\n');
    if (plan->embed)
        rest_embed_dump(plan->embed, b);
}

void rest_sql_quote_ident(rbuf *b, const char *name) { quote_ident(b, name); }
