/* ffb-rest: SQL generation for writes (wsql.h). Pure. */
#include "wsql.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sql.h"

#define RDB_BLOB 261
#define RDB_CHAR 14
#define RDB_VARCHAR 37

typedef struct wgen {
    rarena *arena;
    const rest_table *t;
    const rest_wopts *o;
    rest_wplan *plan;
    rest_err *err;
    size_t capstmts;
} wgen;

static int nomem(wgen *g) {
    rest_err_set(g->err, 500, "PGRST000", NULL, "out of memory");
    return -1;
}

static int no_column(wgen *g, const char *name) {
    rest_err_set(g->err, 400, "PGRST204", NULL,
                 "Could not find the '%.128s' column of '%.128s' in the "
                 "schema cache",
                 name, g->t->exposed);
    return -1;
}

/* A new statement at the end of the plan. */
static rest_wstmt *new_stmt(wgen *g, size_t maxparams) {
    rest_wplan *pl = g->plan;
    if (pl->nstmts == g->capstmts) {
        size_t nc = g->capstmts ? g->capstmts * 2 : 4;
        rest_wstmt *ns = rarena_alloc(g->arena, nc * sizeof *ns);
        if (!ns)
            return NULL;
        if (pl->nstmts)
            memcpy(ns, pl->stmts, pl->nstmts * sizeof *ns);
        pl->stmts = ns;
        g->capstmts = nc;
    }
    rest_wstmt *s = &pl->stmts[pl->nstmts];
    memset(s, 0, sizeof *s);
    rbuf_init(&s->sql, 4u << 20);
    s->params = rarena_alloc(g->arena, (maxparams + 1) * sizeof *s->params);
    if (!s->params)
        return NULL;
    pl->nstmts++;
    return s;
}

static void add_wparam(rest_wstmt *s, int kind, const char *text, size_t len) {
    rest_wparam *p = &s->params[s->nparams++];
    p->kind = kind == REST_J_ABSENT ? REST_J_NULL : kind;
    p->text = text;
    p->len = len;
}

/* "TYPE OF COLUMN "T"."C"" */
static void type_of(wgen *g, rbuf *b, const rest_column *c) {
    rbuf_adds(b, "TYPE OF COLUMN ");
    rest_quote_ident(b, g->t->name);
    rbuf_addc(b, '.');
    rest_quote_ident(b, c->name);
}

/* The type of an output: blobs come back as text (a text blob) or bytes
   (printed as hex), so that the rows need no blob reads. */
static void out_type(wgen *g, rbuf *b, const rest_column *c) {
    if (c->type == RDB_BLOB)
        rbuf_adds(b, c->subtype == 1 ? "VARCHAR(8191) CHARACTER SET UTF8"
                                     : "VARCHAR(32765) CHARACTER SET OCTETS");
    else
        type_of(g, b, c);
}

/* What an input of this column adds to the block's message, at most. */
static size_t in_bytes(const rest_column *c) {
    if (c->type == RDB_CHAR || c->type == RDB_VARCHAR)
        return (size_t)(c->length > 0 ? c->length : 0) + 8;
    return 24;
}

/* The columns of a comma-separated list (columns=, on_conflict=). */
static int col_list(wgen *g, const char *list, const rest_column ***out,
                    size_t *n) {
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    *out = rarena_alloc(g->arena, cap * sizeof **out);
    if (!*out)
        return nomem(g);
    *n = 0;
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && *p == ' ')
            p++, len--;
        while (len && p[len - 1] == ' ')
            len--;
        if (len) {
            char *nm = rarena_strndup(g->arena, p, len);
            if (!nm)
                return nomem(g);
            if (len >= 2 && nm[0] == '"' && nm[len - 1] == '"') {
                nm[len - 1] = '\0';
                nm++;
            }
            const rest_column *c = rest_table_find(g->t, nm);
            if (!c)
                return no_column(g, nm);
            (*out)[(*n)++] = c;
        }
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

/* The columns written: columns= or the body's keys. keyof[i] is the
   body key of column i (-1: none). */
static int write_columns(wgen *g, const rest_body *b, const rest_column ***cols,
                         long **keyof, size_t *n) {
    if (g->o->columns) {
        if (col_list(g, g->o->columns, cols, n) < 0)
            return -1;
    } else {
        *cols = rarena_alloc(g->arena, (b->nkeys + 1) * sizeof **cols);
        if (!*cols)
            return nomem(g);
        for (size_t k = 0; k < b->nkeys; k++) {
            const rest_column *c = rest_table_find(g->t, b->keys[k]);
            if (!c)
                return no_column(g, b->keys[k]);
            (*cols)[k] = c;
        }
        *n = b->nkeys;
    }
    *keyof = rarena_alloc(g->arena, (*n + 1) * sizeof **keyof);
    if (!*keyof)
        return nomem(g);
    for (size_t i = 0; i < *n; i++) {
        (*keyof)[i] = -1;
        for (size_t k = 0; k < b->nkeys; k++)
            if (rest_table_find(g->t, b->keys[k]) == (*cols)[i]) {
                (*keyof)[i] = (long)k;
                break;
            }
    }
    return 0;
}

/* Output columns: select= for representation (plain columns, renames),
   the primary key for headers-only. */
static int out_columns(wgen *g, const rest_query *q) {
    rest_wplan *pl = g->plan;
    const rest_table *t = g->t;
    size_t cap = t->ncols + (q ? q->nselect : 0) + 1;
    pl->keys = rarena_alloc(g->arena, cap * sizeof *pl->keys);
    pl->outcols = rarena_alloc(g->arena, cap * sizeof *pl->outcols);
    if (!pl->keys || !pl->outcols)
        return nomem(g);
    if (g->o->ret == REST_RET_HEADERS) {
        for (size_t i = 0; i < t->npk; i++) {
            pl->outcols[pl->nkeys] = &t->cols[t->pk[i]];
            pl->keys[pl->nkeys++] = t->cols[t->pk[i]].exposed;
        }
        return 0;
    }
    size_t n = q && q->nselect ? q->nselect : 1;
    for (size_t i = 0; i < n; i++) {
        const rest_select *it = q && q->nselect ? &q->select[i] : NULL;
        if (it && it->agg) {
            rest_err_set(g->err, 400, "PGRST127",
                         "aggregates in the representation of a write",
                         "Feature not implemented");
            return -1;
        }
        if (!it || strcmp(it->name, "*") == 0) {
            for (size_t c = 0; c < t->ncols && pl->nkeys < cap; c++) {
                pl->outcols[pl->nkeys] = &t->cols[c];
                pl->keys[pl->nkeys++] = t->cols[c].exposed;
            }
            continue;
        }
        if (it->embed) {
            rest_err_set(g->err, 400, "PGRST127",
                         "embeds in the representation of a write",
                         "Feature not implemented");
            return -1;
        }
        const rest_column *c = rest_table_find(t, it->name);
        if (!c) {
            rest_err_set(g->err, 400, "42703", NULL,
                         "column %s.%s does not exist", t->exposed, it->name);
            return -1;
        }
        if (it->cast) {
            rest_err_set(g->err, 400, "PGRST127",
                         "casts in the representation of a write",
                         "Feature not implemented");
            return -1;
        }
        if (pl->nkeys < cap) {
            pl->outcols[pl->nkeys] = c;
            pl->keys[pl->nkeys++] = it->alias ? it->alias : c->exposed;
        }
    }
    return 0;
}

/* "RETURNS (O0 <type>, ...)" or "RETURNS (N INTEGER)" */
static void returns(wgen *g, rbuf *b) {
    rest_wplan *pl = g->plan;
    if (pl->count_only) {
        rbuf_adds(b, " RETURNS (N INTEGER)");
        return;
    }
    if (!pl->nkeys)
        return;
    rbuf_adds(b, " RETURNS (");
    for (size_t i = 0; i < pl->nkeys; i++) {
        rbuf_printf(b, "%sO%zu ", i ? ", " : "", i);
        out_type(g, b, pl->outcols[i]);
    }
    rbuf_addc(b, ')');
}

static void col_names(rbuf *b, const rest_column *const *cols, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (i)
            rbuf_adds(b, ", ");
        rest_quote_ident(b, cols[i]->name);
    }
}

/* " RETURNING "A", ... INTO :O0, ...;" (`row` >= 0: into the row's
   variables :R<row>_0, ...) */
static void returning_into(wgen *g, rbuf *b, long row) {
    rest_wplan *pl = g->plan;
    rbuf_adds(b, " RETURNING ");
    col_names(b, pl->outcols, pl->nkeys);
    rbuf_adds(b, " INTO ");
    for (size_t i = 0; i < pl->nkeys; i++) {
        if (row >= 0)
            rbuf_printf(b, "%s:R%ld_%zu", i ? ", " : "", row, i);
        else
            rbuf_printf(b, "%s:O%zu", i ? ", " : "", i);
    }
    rbuf_addc(b, ';');
}

/* What one row of outputs takes in the block's variables, at most. */
static size_t out_bytes(const rest_wplan *pl) {
    size_t n = 0;
    for (size_t i = 0; i < pl->nkeys; i++)
        n +=
            pl->outcols[i]->type == RDB_BLOB ? 32768 : in_bytes(pl->outcols[i]);
    return n;
}

/* " DECLARE VARIABLE R<row>_0 <type>; ..." */
static void row_vars(wgen *g, rbuf *b, size_t row) {
    rest_wplan *pl = g->plan;
    for (size_t i = 0; i < pl->nkeys; i++) {
        rbuf_printf(b, " DECLARE VARIABLE R%zu_%zu ", row, i);
        out_type(g, b, pl->outcols[i]);
        rbuf_addc(b, ';');
    }
}

/* " O0 = :R<row>_0; ... SUSPEND;" */
static void row_out(const rest_wplan *pl, rbuf *b, size_t row) {
    for (size_t i = 0; i < pl->nkeys; i++)
        rbuf_printf(b, " O%zu = :R%zu_%zu;", i, row, i);
    rbuf_adds(b, " SUSPEND;");
}

/* The singular check: " IF (V <> 1) THEN V = CAST('FFB-REST:ROWS:' || V
   AS INTEGER); SUSPEND;" (wsql.h) */
static void check_one(rbuf *b, const char *v) {
    rbuf_printf(b,
                " IF (%s <> 1) THEN %s = CAST('FFB-REST:ROWS:' || %s AS "
                "INTEGER); SUSPEND;",
                v, v, v);
}

int rest_wraise_parse(const char *arg, long long *n) {
    static const char rows[] = "FFB-REST:ROWS:", more[] = "FFB-REST:MORE:";
    int kind = REST_WRAISE_NONE;
    const char *p = NULL;
    if (arg && strncmp(arg, rows, sizeof rows - 1) == 0)
        kind = REST_WRAISE_ROWS, p = arg + sizeof rows - 1;
    else if (arg && strncmp(arg, more, sizeof more - 1) == 0)
        kind = REST_WRAISE_MORE, p = arg + sizeof more - 1;
    if (!p || *p < '0' || *p > '9')
        return REST_WRAISE_NONE;
    long long v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v < 100000000000000LL ? v * 10 + (*p - '0') : v;
    if (*p)
        return REST_WRAISE_NONE;
    *n = v;
    return kind;
}

/* ---- POST ------------------------------------------------------------------
 */

typedef struct chunk {
    rest_wstmt *st;
    rbuf decl; /* "P0 TYPE OF ... = ?, ..." */
    rbuf vars; /* the rows' output variables: " DECLARE VARIABLE R0_0 ..." */
    rbuf body; /* the row statements */
    rbuf tail; /* the rows out, once every row is written */
    size_t bytes;
} chunk;

static void chunk_free(chunk *c) {
    rbuf_free(&c->decl);
    rbuf_free(&c->vars);
    rbuf_free(&c->body);
    rbuf_free(&c->tail);
}

/* The rows come out only after the last INSERT: a SUSPEND ends the
   statement's savepoint of what came before it, so a failing row behind
   a suspended one would leave that one written (wsql.h). */
static int chunk_close(wgen *g, chunk *c) {
    rest_wstmt *st = c->st;
    rest_wplan *pl = g->plan;
    int one = g->o->singular && !pl->count_only && pl->nkeys;
    rbuf_adds(&st->sql, "EXECUTE BLOCK");
    if (c->decl.len) {
        rbuf_adds(&st->sql, " (");
        rbuf_add(&st->sql, c->decl.p, c->decl.len);
        rbuf_addc(&st->sql, ')');
    }
    returns(g, &st->sql);
    rbuf_adds(&st->sql, " AS");
    if (one)
        rbuf_adds(&st->sql, " DECLARE VARIABLE K INTEGER = 0;");
    rbuf_add(&st->sql, c->vars.p, c->vars.len);
    rbuf_adds(&st->sql, " BEGIN");
    if (pl->count_only)
        rbuf_adds(&st->sql, " N = 0;");
    rbuf_add(&st->sql, c->body.p, c->body.len);
    rbuf_add(&st->sql, c->tail.p, c->tail.len);
    if (pl->count_only && g->o->singular)
        check_one(&st->sql, "N");
    else if (one)
        check_one(&st->sql, "K");
    else if (pl->count_only)
        rbuf_adds(&st->sql, " SUSPEND;");
    rbuf_adds(&st->sql, " END");
    st->cursor = 1;
    st->atomic = 1;
    st->fetch_rows = (int)st->nrows + 2;
    int bad = c->decl.failed || c->vars.failed || c->body.failed ||
              c->tail.failed || st->sql.failed;
    chunk_free(c);
    c->st = NULL;
    if (bad) {
        rest_err_set(g->err, 400, "PGRST100", NULL,
                     "the generated SQL is too long");
        return -1;
    }
    rbuf_cstr(&st->sql);
    return 0;
}

static void chunk_init(chunk *c) {
    rbuf_init(&c->decl, 4u << 20);
    rbuf_init(&c->vars, 4u << 20);
    rbuf_init(&c->body, 4u << 20);
    rbuf_init(&c->tail, 4u << 20);
    c->bytes = 0;
}

/* One row's statement appended to the chunk. */
static int insert_row(wgen *g, chunk *c, const rest_body *b, size_t r,
                      const rest_column **cols, const long *keyof, size_t ncols,
                      const rest_column **match, size_t nmatch) {
    rest_wplan *pl = g->plan;
    const rest_wopts *o = g->o;
    rest_wstmt *st = c->st;
    size_t first = st->nparams;
    /* the row's columns: all of them, or those present (missing=default) */
    const rest_column *rc[1024];
    long rk[1024];
    size_t n = 0;
    for (size_t i = 0; i < ncols && n < 1024; i++) {
        int absent =
            keyof[i] < 0 ||
            rest_body_val(b, r, (size_t)keyof[i])->kind == REST_J_ABSENT;
        if (absent && o->missing_default)
            continue;
        rc[n] = cols[i];
        rk[n] = absent ? -1 : keyof[i];
        n++;
    }
    for (size_t i = 0; i < n; i++) {
        const rest_jval *v =
            rk[i] >= 0 ? rest_body_val(b, r, (size_t)rk[i]) : NULL;
        if (c->decl.len)
            rbuf_adds(&c->decl, ", ");
        rbuf_printf(&c->decl, "P%zu ", st->nparams);
        type_of(g, &c->decl, rc[i]);
        rbuf_adds(&c->decl, " = ?");
        add_wparam(st, v ? v->kind : REST_J_NULL, v ? v->text : NULL,
                   v ? v->len : 0);
        c->bytes += in_bytes(rc[i]);
    }
    rbuf *s = &c->body;
    int ignore = pl->resolution_used && o->resolution == REST_RES_IGNORE;
    int merge = pl->resolution_used && o->resolution == REST_RES_MERGE;
    if (ignore) {
        rbuf_adds(s, " IF (NOT EXISTS (SELECT 1 FROM ");
        rest_quote_ident(s, g->t->name);
        rbuf_adds(s, " WHERE ");
        for (size_t m = 0; m < nmatch; m++) {
            size_t i = 0;
            while (i < n && rc[i] != match[m])
                i++;
            if (i == n) {
                rest_err_set(g->err, 400, "PGRST102", NULL,
                             "the conflict column %.128s is missing from "
                             "row %zu of the body",
                             match[m]->exposed, r + 1);
                return -1;
            }
            if (m)
                rbuf_adds(s, " AND ");
            rest_quote_ident(s, match[m]->name);
            rbuf_printf(s, " = :P%zu", first + i);
        }
        rbuf_adds(s, ")) THEN BEGIN");
    }
    rbuf_adds(s, merge ? " UPDATE OR INSERT INTO " : " INSERT INTO ");
    rest_quote_ident(s, g->t->name);
    if (n == 0) {
        rbuf_adds(s, " DEFAULT VALUES");
    } else {
        rbuf_adds(s, " (");
        col_names(s, rc, n);
        rbuf_adds(s, ") VALUES (");
        for (size_t i = 0; i < n; i++)
            rbuf_printf(s, "%s:P%zu", i ? ", " : "", first + i);
        rbuf_addc(s, ')');
    }
    if (merge) {
        rbuf_adds(s, " MATCHING (");
        col_names(s, match, nmatch);
        rbuf_addc(s, ')');
    }
    size_t row = st->nrows; /* in this block */
    if (pl->put && pl->nkeys) {
        /* PUT: its one row */
        returning_into(g, s, -1);
        rbuf_adds(s, " SUSPEND;");
    } else if (pl->count_only) {
        rbuf_adds(s, "; N = N + ROW_COUNT;");
    } else if (pl->nkeys && o->singular) {
        /* one row at most comes out: it stays in the outputs */
        returning_into(g, s, -1);
        rbuf_adds(s, " K = K + 1;");
    } else if (pl->nkeys) {
        returning_into(g, s, (long)row);
        row_vars(g, &c->vars, row);
        c->bytes += out_bytes(pl);
        if (ignore) {
            rbuf_printf(s, " F%zu = 1;", row);
            rbuf_printf(&c->vars, " DECLARE VARIABLE F%zu SMALLINT = 0;", row);
            rbuf_printf(&c->tail, " IF (F%zu = 1) THEN BEGIN", row);
        }
        row_out(pl, &c->tail, row);
        if (ignore)
            rbuf_adds(&c->tail, " END");
    } else {
        rbuf_addc(s, ';');
    }
    if (ignore)
        rbuf_adds(s, " END");
    st->nrows++;
    return 0;
}

static int plan_insert(wgen *g, const rest_query *q, const rest_body *b) {
    rest_wplan *pl = g->plan;
    const rest_wopts *o = g->o;
    const rest_column **cols, **match = NULL;
    long *keyof;
    size_t ncols, nmatch = 0;
    if (b->keys_differ && !o->columns && !o->missing_default) {
        rest_err_set(g->err, 400, "PGRST102", NULL,
                     "All object keys must match");
        return -1;
    }
    if (write_columns(g, b, &cols, &keyof, &ncols) < 0)
        return -1;
    if (o->resolution != REST_RES_NONE) {
        if (o->on_conflict) {
            if (col_list(g, o->on_conflict, &match, &nmatch) < 0)
                return -1;
        } else {
            match = rarena_alloc(g->arena, (g->t->npk + 1) * sizeof *match);
            if (!match)
                return nomem(g);
            for (size_t i = 0; i < g->t->npk; i++)
                match[nmatch++] = &g->t->cols[g->t->pk[i]];
        }
        pl->resolution_used = nmatch > 0;
    }
    if (o->ret == REST_RET_MINIMAL)
        pl->count_only = 1;
    else if (out_columns(g, q) < 0)
        return -1;
    if (b->nrows == 0) {
        pl->noop = 1;
        return 0;
    }
    size_t maxp = o->max_block_params ? o->max_block_params : 8000;
    size_t maxb = o->max_block_bytes ? o->max_block_bytes : 512u << 10;
    size_t maxc = o->max_block_contexts ? o->max_block_contexts : 256;
    /* table contexts of one row's statement (measured, wsql.h) */
    size_t rowc = !pl->resolution_used               ? 1
                  : o->resolution == REST_RES_IGNORE ? 2
                                                     : 3;
    if (ncols > maxp || ncols > 1024) {
        rest_err_set(g->err, 400, "PGRST100", NULL,
                     "more than %zu columns in one row",
                     maxp < 1024 ? maxp : 1024);
        return -1;
    }
    if (rowc > maxc) {
        rest_err_set(g->err, 400, "PGRST100", NULL,
                     "a row takes more than %zu table contexts", maxc);
        return -1;
    }
    chunk c;
    memset(&c, 0, sizeof c);
    for (size_t r = 0; r < b->nrows; r++) {
        if (c.st &&
            (c.st->nparams + ncols > maxp || (c.st->nrows + 1) * rowc > maxc)) {
            if (chunk_close(g, &c) < 0)
                return -1;
        }
        if (!c.st) {
            /* the inputs this block can take: no more than its rows */
            size_t left = b->nrows - r, rows = maxc / rowc;
            if (rows > left)
                rows = left;
            size_t cap = rows * ncols < maxp ? rows * ncols : maxp;
            c.st = new_stmt(g, cap);
            if (!c.st)
                return nomem(g);
            chunk_init(&c);
        }
        /* the row, taken back into a new block when it overflows this
           one */
        size_t dl = c.decl.len, bl = c.body.len, np = c.st->nparams,
               by = c.bytes, vl = c.vars.len, tl = c.tail.len;
        if (insert_row(g, &c, b, r, cols, keyof, ncols, match, nmatch) < 0) {
            chunk_free(&c);
            return -1;
        }
        if (c.st->nrows > 1 &&
            (c.decl.len + c.vars.len + c.body.len + c.tail.len + 64 > maxb ||
             c.bytes > maxb)) {
            c.decl.len = dl;
            c.body.len = bl;
            c.vars.len = vl;
            c.tail.len = tl;
            c.st->nparams = np;
            c.bytes = by;
            c.st->nrows--;
            if (chunk_close(g, &c) < 0)
                return -1;
            r--; /* again, in a new block */
        }
    }
    return chunk_close(g, &c);
}

/* ---- PUT ------------------------------------------------------------------
 */

/* The URL's filters of a PUT: exactly the primary key's columns with eq
   (PostgREST's rule), their values in `val` (in key order). */
static int put_filters(wgen *g, const rest_query *q, const char **val) {
    const rest_table *t = g->t;
    const rest_cond *w = q->where;
    size_t n = w ? w->nkids : 0;
    for (size_t k = 0; k < t->npk; k++)
        val[k] = NULL;
    int ok = t->npk > 0 && n == t->npk;
    for (size_t i = 0; ok && i < n; i++) {
        const rest_cond *c = w->kids[i];
        const rest_column *col =
            c->kind == REST_COND_LEAF && !c->negate && c->op == REST_OP_EQ
                ? rest_table_find(t, c->column)
                : NULL;
        ok = 0;
        for (size_t k = 0; col && k < t->npk; k++)
            if (&t->cols[t->pk[k]] == col && !val[k]) {
                val[k] = c->value;
                ok = 1;
            }
    }
    if (!ok) {
        rest_err_set(g->err, 405, "PGRST105", NULL,
                     "Filters must include all and only primary key columns "
                     "with 'eq' operators");
        return -1;
    }
    return 0;
}

static int plan_put(wgen *g, const rest_query *q, const rest_body *b) {
    rest_wplan *pl = g->plan;
    const rest_table *t = g->t;
    const rest_column **cols;
    long *keyof;
    size_t ncols;
    if (q->limit >= 0 || q->offset > 0) {
        rest_err_set(g->err, 400, "PGRST114", NULL,
                     "limit/offset querystring parameters are not allowed "
                     "for PUT");
        return -1;
    }
    const char **val = rarena_alloc(g->arena, (t->npk + 1) * sizeof *val);
    const rest_column **pk = rarena_alloc(g->arena, (t->npk + 1) * sizeof *pk);
    size_t *pidx = rarena_alloc(g->arena, (t->npk + 1) * sizeof *pidx);
    if (!val || !pk || !pidx)
        return nomem(g);
    if (put_filters(g, q, val) < 0)
        return -1;
    if (!b || b->nrows == 0) {
        rest_err_set(g->err, 400, "PGRST102", "PUT takes one JSON object",
                     "Empty or invalid json");
        return -1;
    }
    if (write_columns(g, b, &cols, &keyof, &ncols) < 0)
        return -1;
    if (g->o->ret == REST_RET_REPR && out_columns(g, q) < 0)
        return -1;
    if (ncols > 1024) {
        rest_err_set(g->err, 400, "PGRST100", NULL,
                     "more than 1024 columns in one row");
        return -1;
    }
    /* each key column's input of the row (insert_row's order: the columns,
       absent ones left out with missing=default); a body without it cannot
       match the URL (PostgREST: PGRST115) */
    for (size_t k = 0; k < t->npk; k++) {
        pk[k] = &t->cols[t->pk[k]];
        size_t at = 0, i = 0;
        for (; i < ncols; i++) {
            int absent =
                keyof[i] < 0 ||
                rest_body_val(b, 0, (size_t)keyof[i])->kind == REST_J_ABSENT;
            if (cols[i] == pk[k]) {
                if (absent)
                    i = ncols;
                break;
            }
            at += !(absent && g->o->missing_default);
        }
        if (i == ncols) {
            rest_err_set(g->err, 400, "PGRST115", NULL,
                         "Payload values do not match URL in primary key "
                         "column(s)");
            return -1;
        }
        pidx[k] = at;
    }
    pl->put = 1;
    pl->resolution_used = 1;
    rest_wopts merge = *g->o;
    merge.resolution = REST_RES_MERGE;
    const rest_wopts *saved = g->o;
    g->o = &merge;
    chunk c;
    memset(&c, 0, sizeof c);
    c.st = new_stmt(g, ncols + t->npk);
    if (!c.st) {
        g->o = saved;
        return nomem(g);
    }
    chunk_init(&c);
    int rc = insert_row(g, &c, b, 0, cols, keyof, ncols, pk, t->npk);
    g->o = saved;
    rest_wstmt *st = c.st;
    for (size_t k = 0; rc == 0 && k < t->npk; k++) {
        rbuf_printf(&c.decl, "%sQ%zu ", c.decl.len ? ", " : "", k);
        type_of(g, &c.decl, pk[k]);
        rbuf_adds(&c.decl, " = ?");
        add_wparam(st, REST_J_STRING, val[k], strlen(val[k]));
    }
    rbuf *s = &st->sql;
    if (rc == 0) {
        rbuf_adds(s, "EXECUTE BLOCK (");
        rbuf_add(s, c.decl.p, c.decl.len);
        rbuf_adds(s, ") RETURNS (M INTEGER, I INTEGER");
        for (size_t i = 0; i < pl->nkeys; i++) {
            rbuf_printf(s, ", O%zu ", i);
            out_type(g, s, pl->outcols[i]);
        }
        rbuf_adds(s, ") AS BEGIN M = 0; I = 0; IF (");
        for (size_t k = 0; k < t->npk; k++)
            rbuf_printf(s, "%s:P%zu = :Q%zu", k ? " AND " : "", pidx[k], k);
        rbuf_adds(s, ") THEN BEGIN M = 1; IF (NOT EXISTS (SELECT 1 FROM ");
        rest_quote_ident(s, t->name);
        rbuf_adds(s, " WHERE ");
        for (size_t k = 0; k < t->npk; k++) {
            if (k)
                rbuf_adds(s, " AND ");
            rest_quote_ident(s, pk[k]->name);
            rbuf_printf(s, " = :Q%zu", k);
        }
        rbuf_adds(s, ")) THEN I = 1;");
        rbuf_add(s, c.body.p, c.body.len);
        /* the row's RETURNING suspends it; else (and when the key does not
           match) one row of M and I */
        rbuf_adds(s, pl->nkeys ? " END IF (M = 0) THEN SUSPEND; END"
                               : " END SUSPEND; END");
        st->cursor = 1;
        st->atomic = 1; /* one write, then its one row */
        st->fetch_rows = 3;
        if (c.decl.failed || c.body.failed || s->failed) {
            rest_err_set(g->err, 400, "PGRST100", NULL,
                         "the generated SQL is too long");
            rc = -1;
        } else {
            rbuf_cstr(s);
        }
    }
    chunk_free(&c);
    return rc;
}

/* ---- PATCH / DELETE ----------------------------------------------------- */

/* The filter text with each '?' (outside quotes) as ":Q<n>". */
static void named_marks(rbuf *out, const char *w, size_t n) {
    size_t k = 0;
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = w[i];
        if (quote) {
            if (ch == quote)
                quote = 0;
        } else if (ch == '"' || ch == '\'') {
            quote = ch;
        } else if (ch == '?') {
            rbuf_printf(out, ":Q%zu", k++);
            continue;
        }
        rbuf_addc(out, ch);
    }
}

/* Text inputs of the filters, in steps of length so that the SQL text
   (and the statement cache) does not vary with every value. */
static void filter_type(rbuf *b, size_t len) {
    size_t n = 32;
    while (n < len && n < 8191)
        n = n * 4 > 8191 ? 8191 : n * 4;
    rbuf_printf(b, "VARCHAR(%zu) CHARACTER SET UTF8", n);
}

/* "UPDATE "T" SET "A" = :P0, ..." for the body's columns (a block's),
   or with `bind` "... = ?, ..." and the values bound to it */
static void update_set(wgen *g, rbuf *s, const rest_column **cols,
                       const long *keyof, size_t ncols, const rest_body *b,
                       rest_wstmt *bind) {
    rbuf_adds(s, "UPDATE ");
    rest_quote_ident(s, g->t->name);
    rbuf_adds(s, " SET ");
    size_t k = 0;
    for (size_t i = 0; i < ncols; i++) {
        if (keyof[i] < 0)
            continue;
        if (k)
            rbuf_adds(s, ", ");
        rest_quote_ident(s, cols[i]->name);
        if (bind) {
            const rest_jval *v = rest_body_val(b, 0, (size_t)keyof[i]);
            rbuf_adds(s, " = ?");
            add_wparam(bind, v->kind, v->text, v->len);
            k++;
        } else {
            rbuf_printf(s, " = :P%zu", k++);
        }
    }
}

static int plan_update_delete(wgen *g, const rest_query *q,
                              const rest_body *b) {
    rest_wplan *pl = g->plan;
    const rest_wopts *o = g->o;
    int upd = o->kind == REST_W_UPDATE;
    const rest_column **cols = NULL;
    long *keyof = NULL;
    size_t ncols = 0;
    if (q->limit >= 0 || q->offset > 0 || q->norder) {
        rest_err_set(g->err, 400, "PGRST127",
                     "limit, offset and order on PATCH and DELETE",
                     "Feature not implemented");
        return -1;
    }
    if (upd) {
        if (!b || b->is_array || b->nrows != 1) {
            rest_err_set(g->err, 400, "PGRST102", "PATCH takes one JSON object",
                         "Empty or invalid json");
            return -1;
        }
        if (write_columns(g, b, &cols, &keyof, &ncols) < 0)
            return -1;
        size_t used = 0;
        for (size_t i = 0; i < ncols; i++)
            used += keyof[i] >= 0;
        if (used == 0) {
            pl->noop = 1;
            return 0;
        }
    }
    if (o->ret == REST_RET_REPR && out_columns(g, q) < 0)
        return -1;
    rbuf where;
    rest_param *wp;
    size_t nwp;
    rbuf_init(&where, 1u << 20);
    if (rest_plan_where(g->arena, g->t, q, &where, &wp, &nwp, g->err) < 0) {
        rbuf_free(&where);
        return -1;
    }
    rest_wstmt *st = new_stmt(g, ncols + nwp);
    if (!st) {
        rbuf_free(&where);
        return nomem(g);
    }
    rbuf *s = &st->sql;
    int repr = o->ret == REST_RET_REPR;
    int one = o->singular;
    /* PATCH/DELETE: the plain statement (its row count comes with the
       execute), or a block: the singular object's (the block counts the
       rows and refuses other than one: minimal, N = ROW_COUNT; with
       representation the one row stays in the outputs), the
       representation's (the rows kept in variables, suspended once every
       row is written; more than `cap` raise MORE), or, on MORE, the
       streaming one (each row suspended as it is written) */
    size_t cap = 0;
    if (repr && !one && !o->repr_stream) {
        cap = o->repr_rows ? o->repr_rows : 16;
        size_t rb = out_bytes(pl);
        if (rb && cap * rb > (256u << 10))
            cap = (256u << 10) / rb ? (256u << 10) / rb : 1;
        pl->repr_rows = cap;
    }
    if (!repr && !one) {
        if (upd) {
            update_set(g, s, cols, keyof, ncols, b, st);
        } else {
            rbuf_adds(s, "DELETE FROM ");
            rest_quote_ident(s, g->t->name);
        }
        rbuf_add(s, where.p, where.len);
        for (size_t i = 0; i < nwp; i++)
            add_wparam(st, REST_J_STRING, wp[i].text, strlen(wp[i].text));
        st->atomic = 1;
    } else {
        /* EXECUTE BLOCK (P.. = ?, Q.. = ?) RETURNS (O..) AS BEGIN FOR
           SELECT ... AS CURSOR C DO BEGIN ... END END */
        rbuf decl;
        rbuf_init(&decl, 1u << 20);
        size_t k = 0;
        for (size_t i = 0; upd && i < ncols; i++) {
            if (keyof[i] < 0)
                continue;
            const rest_jval *v = rest_body_val(b, 0, (size_t)keyof[i]);
            rbuf_printf(&decl, "%sP%zu ", k ? ", " : "", k);
            type_of(g, &decl, cols[i]);
            rbuf_adds(&decl, " = ?");
            add_wparam(st, v->kind, v->text, v->len);
            k++;
        }
        for (size_t i = 0; i < nwp; i++) {
            size_t len = strlen(wp[i].text);
            rbuf_printf(&decl, "%sQ%zu ", k + i ? ", " : "", i);
            filter_type(&decl, len);
            rbuf_adds(&decl, " = ?");
            add_wparam(st, REST_J_STRING, wp[i].text, len);
        }
        rbuf_adds(s, "EXECUTE BLOCK");
        if (decl.len) {
            rbuf_adds(s, " (");
            rbuf_add(s, decl.p, decl.len);
            rbuf_addc(s, ')');
        }
        rbuf_free(&decl);
        if (!repr) {
            /* the singular object, minimal */
            pl->count_only = 1;
            rbuf_adds(s, " RETURNS (N INTEGER) AS BEGIN ");
            if (upd) {
                update_set(g, s, cols, keyof, ncols, b, NULL);
            } else {
                rbuf_adds(s, "DELETE FROM ");
                rest_quote_ident(s, g->t->name);
            }
            named_marks(s, where.p, where.len);
            rbuf_adds(s, "; N = ROW_COUNT;");
            check_one(s, "N");
            rbuf_adds(s, " END");
            st->fetch_rows = 3;
            st->atomic = 1;
            goto closed;
        }
        returns(g, s);
        rbuf_adds(s, " AS");
        if (one || cap)
            rbuf_adds(s, " DECLARE VARIABLE K INTEGER = 0;");
        for (size_t r = 1; r <= cap; r++)
            row_vars(g, s, r);
        rbuf_adds(s, " BEGIN FOR SELECT ");
        if (upd)
            rbuf_adds(s, "1 AS X");
        else
            col_names(s, pl->outcols, pl->nkeys);
        rbuf_adds(s, " FROM ");
        rest_quote_ident(s, g->t->name);
        named_marks(s, where.p, where.len);
        if (!upd) {
            rbuf_adds(s, " INTO ");
            for (size_t i = 0; i < pl->nkeys; i++)
                rbuf_printf(s, "%s:O%zu", i ? ", " : "", i);
        }
        rbuf_adds(s, " AS CURSOR C DO BEGIN ");
        if (cap)
            rbuf_printf(s,
                        "K = K + 1; IF (K > %zu) THEN K = CAST('FFB-REST:"
                        "MORE:' || K AS INTEGER); ",
                        cap);
        if (upd) {
            update_set(g, s, cols, keyof, ncols, b, NULL);
            rbuf_adds(s, " WHERE CURRENT OF C");
            returning_into(g, s, -1);
        } else {
            rbuf_adds(s, "DELETE FROM ");
            rest_quote_ident(s, g->t->name);
            rbuf_adds(s, " WHERE CURRENT OF C;");
        }
        if (one)
            rbuf_adds(s, " K = K + 1;");
        else if (!cap)
            rbuf_adds(s, " SUSPEND;");
        for (size_t r = 1; r <= cap; r++) {
            rbuf_printf(s, "%s IF (K = %zu) THEN BEGIN", r > 1 ? " ELSE" : "",
                        r);
            for (size_t i = 0; i < pl->nkeys; i++)
                rbuf_printf(s, " R%zu_%zu = :O%zu;", r, i, i);
            rbuf_adds(s, " END");
        }
        rbuf_adds(s, " END");
        if (one)
            check_one(s, "K");
        for (size_t r = 1; r <= cap; r++) {
            rbuf_printf(s, " IF (K >= %zu) THEN BEGIN", r);
            row_out(pl, s, r);
            rbuf_adds(s, " END");
        }
        rbuf_adds(s, " END");
        st->atomic = one || cap;
        st->fetch_rows = one ? 3 : cap ? (int)cap + 2 : 1000;
    closed:
        st->cursor = 1;
    }
    int bad = where.failed || s->failed;
    rbuf_free(&where);
    if (bad) {
        rest_err_set(g->err, 400, "PGRST100", NULL,
                     "the generated SQL is too long");
        return -1;
    }
    rbuf_cstr(s);
    return 0;
}

int rest_plan_write(rarena *arena, const rest_schema *schema, const char *name,
                    const rest_query *q, const rest_body *body,
                    const rest_wopts *opts, rest_wplan *plan, rest_err *err) {
    wgen g = {arena, NULL, opts, plan, err, 0};
    memset(plan, 0, sizeof *plan);
    g.t = rest_schema_find(schema, name);
    if (!g.t) {
        rest_err_set(err, 404, "PGRST205", NULL,
                     "Could not find the table '%.128s' in the schema cache",
                     name);
        return -1;
    }
    plan->t = g.t;
    int rc;
    if (opts->kind == REST_W_INSERT) {
        if (!body) {
            rest_err_set(err, 400, "PGRST102", "the request body is empty",
                         "Empty or invalid json");
            return -1;
        }
        rc = plan_insert(&g, q, body);
        if (rc == 0 && opts->singular &&
            (plan->nstmts > 1 || (!plan->count_only && !plan->nkeys))) {
            /* several blocks (or no output to count with): the rows are
               counted here, the end waits for them */
            rest_wopts o1 = *opts;
            o1.singular = 0;
            rest_wplan_free(plan);
            memset(plan, 0, sizeof *plan);
            plan->t = g.t;
            g.o = &o1;
            g.capstmts = 0;
            rc = plan_insert(&g, q, body);
            g.o = opts;
        }
    } else if (opts->kind == REST_W_PUT) {
        rc = plan_put(&g, q, body);
    } else {
        rc = plan_update_delete(&g, q, body);
    }
    if (rc == 0 && opts->singular && opts->kind != REST_W_PUT &&
        plan->nstmts == 1 && (plan->count_only || plan->nkeys))
        plan->singular_checked = 1;
    if (rc < 0)
        rest_wplan_free(plan);
    return rc;
}

void rest_wplan_free(rest_wplan *plan) {
    for (size_t i = 0; i < plan->nstmts; i++)
        rbuf_free(&plan->stmts[i].sql);
    plan->nstmts = 0;
}

void rest_wplan_dump(const rest_wplan *plan, rbuf *b) {
    if (plan->noop)
        rbuf_adds(b, "(nothing to do)\n");
    for (size_t i = 0; i < plan->nstmts; i++) {
        const rest_wstmt *s = &plan->stmts[i];
        rbuf_add(b, s->sql.p, s->sql.len);
        rbuf_adds(b, "\nparams:");
        for (size_t j = 0; j < s->nparams; j++) {
            const rest_wparam *p = &s->params[j];
            switch (p->kind) {
            case REST_J_NULL:
                rbuf_adds(b, " null");
                break;
            case REST_J_STRING:
                rbuf_adds(b, " '");
                rest_dump_text(b, p->text, p->len);
                rbuf_addc(b, '\'');
                break;
            default:
                rbuf_addc(b, ' ');
                rbuf_add(b, p->text, p->len);
            }
        }
        rbuf_addc(b, '\n');
        if (s->cursor && !s->atomic)
            rbuf_adds(b, "end: waits for every row\n");
    }
    if (plan->singular_checked)
        rbuf_adds(b, "singular: refused in the block\n");
    if (plan->repr_rows)
        rbuf_printf(b, "rows kept: %zu\n", plan->repr_rows);
    if (plan->nkeys) {
        rbuf_adds(b, "keys:");
        for (size_t i = 0; i < plan->nkeys; i++) {
            rbuf_addc(b, ' ');
            rbuf_adds(b, plan->keys[i]);
        }
        rbuf_addc(b, '\n');
    }
    if (plan->count_only)
        rbuf_adds(b, "returns: count\n");
}

/* ---- Prefer and the write parameters of the URL ------------------------- */

static int tok_is(const char *p, size_t n, const char *t) {
    return strlen(t) == n && strncasecmp(p, t, n) == 0;
}

void rest_parse_prefer(const char *v, size_t n, rest_prefer *out) {
    memset(out, 0, sizeof *out);
    size_t i = 0;
    while (v && i < n) {
        while (i < n && (v[i] == ' ' || v[i] == ','))
            i++;
        size_t st = i;
        while (i < n && v[i] != ',')
            i++;
        size_t e = i;
        while (e > st && v[e - 1] == ' ')
            e--;
        const char *p = v + st;
        size_t l = e - st;
        if (tok_is(p, l, "return=minimal"))
            out->ret = REST_RET_MINIMAL, out->has_ret = 1;
        else if (tok_is(p, l, "return=headers-only"))
            out->ret = REST_RET_HEADERS, out->has_ret = 1;
        else if (tok_is(p, l, "return=representation"))
            out->ret = REST_RET_REPR, out->has_ret = 1;
        else if (tok_is(p, l, "resolution=merge-duplicates"))
            out->resolution = REST_RES_MERGE;
        else if (tok_is(p, l, "resolution=ignore-duplicates"))
            out->resolution = REST_RES_IGNORE;
        else if (tok_is(p, l, "missing=default"))
            out->missing_default = 1;
        else if (tok_is(p, l, "missing=null"))
            out->missing_default = 0;
        else if (tok_is(p, l, "tx=commit"))
            out->tx = 1;
        else if (tok_is(p, l, "tx=rollback"))
            out->tx = 2;
        else if (tok_is(p, l, "count=exact"))
            out->count_exact = 1;
        else if (tok_is(p, l, "params=single-object"))
            out->params_single = 1;
    }
}

int rest_write_params(rarena *a, const char *qs, size_t n, const char **columns,
                      const char **on_conflict) {
    *columns = *on_conflict = NULL;
    size_t i = 0;
    while (i < n) {
        size_t st = i;
        while (i < n && qs[i] != '&')
            i++;
        const char *eq = memchr(qs + st, '=', i - st);
        if (eq) {
            size_t kl = (size_t)(eq - qs - st);
            const char *v = eq + 1;
            size_t vl = (size_t)(qs + i - v);
            const char **dst = NULL;
            if (kl == 7 && memcmp(qs + st, "columns", 7) == 0)
                dst = columns;
            else if (kl == 11 && memcmp(qs + st, "on_conflict", 11) == 0)
                dst = on_conflict;
            size_t dn;
            if (dst && !(*dst = rest_url_decode(a, v, vl, &dn)))
                return -1;
        }
        i++;
    }
    return 0;
}
