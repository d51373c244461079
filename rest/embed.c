/*
 * ffb-rest: resource embedding (spec rest.md A5), pipelined: every level is
 * one statement restricted by a sub-select of its parent's rows, so all go
 * out in one write and are joined here by key (embed.h).
 *
 * Level k's statement (alias tk for its table, jk for a junction, dk for
 * its parent's keys):
 *
 *   SELECT <columns>, <match columns>, <its kids' join columns>
 *   FROM (SELECT DISTINCT k0.. FROM (<the parent's rows' join columns>) e)
 *        dk JOIN "T" tk ON tk."FK" = dk.k0
 *   WHERE <its filters> [AND EXISTS (...) for an !inner kid]
 *   [ORDER BY <its embedded order>]
 *
 * and the parent's rows are, recursively, the same FROM and WHERE, down to
 * the top level's own filters, order (with the primary key appended, so
 * that each statement sees the same page) and OFFSET/FETCH. An embedded
 * limit/offset is applied per parent while the JSON is written (the SQL
 * reads every child of the page's parents: no window functions before
 * Firebird 4).
 */
#include "embed.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- relationships ------------------------------------------------------ */

typedef struct cand {
    int kind;
    const rest_fk *fk;  /* to-one: the parent's; to-many: the child's;
                           m2m: the junction's to the parent */
    const rest_fk *fk2; /* m2m: the junction's to the child */
    const rest_table *jt;
} cand;

static int nomem(rest_err *err) {
    rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
    return -1;
}

static int in_pk(const rest_table *t, const rest_fk *fk) {
    for (size_t k = 0; k < fk->ncols; k++) {
        int found = 0;
        for (size_t p = 0; p < t->npk; p++)
            if (strcmp(t->cols[t->pk[p]].name, fk->cols[k]) == 0)
                found = 1;
        if (!found)
            return 0;
    }
    return t->npk > 0;
}

/* Does `hint` name this candidate: its constraint, its (one) column, or
   for many-to-many the junction table? */
static int hint_names(const char *hint, const cand *c) {
    if (strcasecmp(hint, c->fk->name) == 0)
        return 1;
    if (c->kind == REST_REL_M2M)
        return strcasecmp(hint, c->jt->name) == 0 ||
               strcasecmp(hint, c->jt->exposed) == 0 ||
               strcasecmp(hint, c->fk2->name) == 0;
    return c->fk->ncols == 1 && strcasecmp(hint, c->fk->cols[0]) == 0;
}

static const char *const kind_names[] = {"many-to-one", "one-to-many",
                                         "many-to-many"};

static int find_rel(const rest_schema *s, const rest_table *p,
                    const rest_table *x, const char *xname, const char *hint,
                    cand *out, rest_err *err) {
    cand cs[16];
    size_t n = 0;
    if (x) {
        for (size_t i = 0; i < p->nfks && n < 16; i++)
            if (strcmp(p->fks[i].ref_table, x->name) == 0)
                cs[n++] = (cand){REST_REL_TO_ONE, &p->fks[i], NULL, NULL};
        for (size_t i = 0; i < x->nfks && n < 16; i++)
            if (strcmp(x->fks[i].ref_table, p->name) == 0)
                cs[n++] = (cand){REST_REL_TO_MANY, &x->fks[i], NULL, NULL};
        for (size_t j = 0; j < s->ntables && n < 16; j++) {
            const rest_table *jt = &s->tables[j];
            if (jt == p || jt == x)
                continue;
            for (size_t a = 0; a < jt->nfks; a++) {
                if (strcmp(jt->fks[a].ref_table, p->name) != 0 ||
                    !in_pk(jt, &jt->fks[a]))
                    continue;
                for (size_t b = 0; b < jt->nfks && n < 16; b++)
                    if (b != a && strcmp(jt->fks[b].ref_table, x->name) == 0 &&
                        in_pk(jt, &jt->fks[b]))
                        cs[n++] =
                            (cand){REST_REL_M2M, &jt->fks[a], &jt->fks[b], jt};
            }
        }
    }
    if (hint) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (hint_names(hint, &cs[i]))
                cs[m++] = cs[i];
        n = m;
    }
    if (n == 1) {
        *out = cs[0];
        return 0;
    }
    if (n == 0) {
        rest_err_set(err, 400, "PGRST200", NULL,
                     "Could not find a relationship between '%.100s' and "
                     "'%.100s' in the schema cache",
                     p->exposed, xname);
        char h[160] = "";
        if (hint)
            snprintf(h, sizeof h, " using the hint '%.100s'", hint);
        snprintf(err->details, sizeof err->details,
                 "Searched for a foreign key relationship between '%.100s' "
                 "and '%.100s'%s in the schema 'public', but no matches "
                 "were found.",
                 p->exposed, xname, h);
        return -1;
    }
    rest_err_set(err, 300, "PGRST201", NULL,
                 "Could not embed because more than one relationship was "
                 "found for '%.100s' and '%.100s'",
                 p->exposed, xname);
    size_t dl = 0, hl = 0;
    hl += (size_t)snprintf(
        err->hint, sizeof err->hint,
        "Try changing '%.60s' to one of the following: ", xname);
    for (size_t i = 0; i < n; i++) {
        const char *h =
            cs[i].kind == REST_REL_M2M ? cs[i].jt->exposed : cs[i].fk->name;
        if (dl < sizeof err->details)
            dl += (size_t)snprintf(err->details + dl, sizeof err->details - dl,
                                   "%s%s via %s", i ? "; " : "",
                                   kind_names[cs[i].kind], h);
        if (hl < sizeof err->hint)
            hl += (size_t)snprintf(err->hint + hl, sizeof err->hint - hl,
                                   "%s'%.60s!%.60s'", i ? ", " : "", xname, h);
    }
    if (hl < sizeof err->hint)
        snprintf(err->hint + hl, sizeof err->hint - hl,
                 ". Find the desired relationship in the 'details' key.");
    return -1;
}

static int build(rarena *a, const rest_schema *s, rest_eplan *ep, rest_enode *n,
                 rest_err *err) {
    const rest_query *q = n->q;
    if (!q->nembeds)
        return 0;
    n->kids = rarena_alloc(a, q->nembeds * sizeof *n->kids);
    if (!n->kids)
        return nomem(err);
    for (size_t i = 0; i < q->nselect; i++) {
        const rest_select *it = &q->select[i];
        if (!it->embed)
            continue;
        const rest_table *x = rest_schema_find(s, it->name);
        cand c;
        if (find_rel(s, n->t, x, it->name, it->embed->hint, &c, err) < 0)
            return -1;
        if (it->embed->spread && c.kind != REST_REL_TO_ONE) {
            rest_err_set(err, 400, "PGRST119", NULL,
                         "A spread operation on '%.100s' is not possible",
                         it->name);
            snprintf(err->details, sizeof err->details,
                     "'%.100s' and '%.100s' do not form a many-to-one or "
                     "one-to-one relationship",
                     n->t->exposed, it->name);
            return -1;
        }
        rest_enode *k = rarena_alloc(a, sizeof *k);
        if (!k)
            return nomem(err);
        k->it = it;
        k->q = it->embed->q;
        k->t = x;
        k->kind = c.kind;
        k->key = it->alias ? it->alias : it->name;
        k->parent = n;
        k->depth = n->depth + 1;
        if (k->depth > ep->depth)
            ep->depth = k->depth;
        k->index = n->nkids;
        k->nk = c.fk->ncols;
        k->jt = c.jt;
        if (c.kind == REST_REL_TO_ONE) {
            k->pcols = (const char **)c.fk->cols;
            k->ccols = (const char **)c.fk->ref_cols;
        } else {
            k->pcols = (const char **)c.fk->ref_cols;
            k->ccols = (const char **)c.fk->cols;
        }
        if (c.kind == REST_REL_M2M) {
            k->nj = c.fk2->ncols;
            k->jcols = (const char **)c.fk2->cols;
            k->tcols = (const char **)c.fk2->ref_cols;
        }
        n->kids[n->nkids++] = k;
        rest_enode **nl =
            rarena_alloc(a, (ep->nlevels + 1) * sizeof *ep->levels);
        if (!nl)
            return nomem(err);
        if (ep->nlevels)
            memcpy(nl, ep->levels, ep->nlevels * sizeof *nl);
        nl[ep->nlevels++] = k;
        ep->levels = nl;
        if (build(a, s, ep, k, err) < 0)
            return -1;
    }
    return 0;
}

int rest_embed_resolve(rarena *a, const rest_schema *s, const rest_table *t,
                       const rest_query *q, rest_eplan **out, rest_err *err) {
    rest_eplan *ep = rarena_alloc(a, sizeof *ep);
    rest_enode *root = rarena_alloc(a, sizeof *root);
    if (!ep || !root)
        return nomem(err);
    rarena_init(&ep->rows, 64u << 20);
    root->q = q;
    root->t = t;
    root->key = t->exposed;
    ep->root = root;
    *out = ep;
    return build(a, s, ep, root, err);
}

void rest_embed_free(rest_eplan *ep) {
    if (!ep)
        return;
    for (size_t i = 0; i < ep->nlevels; i++)
        rest_plan_free(&ep->levels[i]->plan);
    rarena_free(&ep->rows);
}

/* ---- SQL ------------------------------------------------------------------
 */

static void qcol(rbuf *b, const char *qual, const char *col) {
    if (qual)
        rbuf_printf(b, "%s.", qual);
    rest_gen_quote(b, col);
}

/* The filters of `q` (an AND at the root of its tree) with " AND "
   between; `*any` says whether something was written before. */
static int filters(rest_gen *g, const rest_query *q, rbuf *b, int *any) {
    if (!q->where)
        return 0;
    for (size_t i = 0; i < q->where->nkids; i++) {
        rbuf_adds(b, *any ? " AND " : " WHERE ");
        *any = 1;
        if (rest_gen_cond(g, q->where->kids[i], b) < 0)
            return -1;
    }
    return 0;
}

static int inner_exists(rest_gen *g, const rest_enode *n, const char *qual,
                        rbuf *b, int *any);

/* A many-to-many level's junction join: t.<ref> = j.<fk> for each column. */
static void junction_on(rbuf *b, const rest_enode *k, const char *t,
                        const char *j) {
    for (size_t i = 0; i < k->nj; i++) {
        rbuf_adds(b, i ? " AND " : "");
        qcol(b, t, k->tcols[i]);
        rbuf_adds(b, " = ");
        qcol(b, j, k->jcols[i]);
    }
}

/* A level's own filters and its !inner kids, on its table named `qual`. */
static int own_where(rest_gen *g, const rest_enode *k, const char *qual,
                     rbuf *b, int *any) {
    rest_gen kg = *g;
    kg.t = k->t;
    kg.qual = qual;
    if (filters(&kg, k->q, b, any) < 0 ||
        inner_exists(&kg, k, qual, b, any) < 0)
        return -1;
    g->cap = kg.cap;
    return 0;
}

/* EXISTS (a row of kid `k` for the row of its parent named `pq`). */
static int exists(rest_gen *g, const rest_enode *k, const char *pq, rbuf *b) {
    char x[16], y[16];
    snprintf(x, sizeof x, "x%zu", k->depth);
    snprintf(y, sizeof y, "y%zu", k->depth);
    rbuf_adds(b, "EXISTS (SELECT 1 FROM ");
    if (k->kind == REST_REL_M2M) {
        rest_gen_quote(b, k->jt->name);
        rbuf_printf(b, " %s JOIN ", y);
        rest_gen_quote(b, k->t->name);
        rbuf_printf(b, " %s ON ", x);
        junction_on(b, k, x, y);
    } else {
        rest_gen_quote(b, k->t->name);
        rbuf_printf(b, " %s", x);
    }
    for (size_t i = 0; i < k->nk; i++) {
        rbuf_adds(b, i ? " AND " : " WHERE ");
        qcol(b, k->kind == REST_REL_M2M ? y : x, k->ccols[i]);
        rbuf_adds(b, " = ");
        qcol(b, pq, k->pcols[i]);
    }
    int any = 1;
    if (own_where(g, k, x, b, &any) < 0)
        return -1;
    rbuf_addc(b, ')');
    return 0;
}

/* " AND EXISTS (...)" for every !inner kid of `n`. */
static int inner_exists(rest_gen *g, const rest_enode *n, const char *qual,
                        rbuf *b, int *any) {
    for (size_t i = 0; i < n->nkids; i++) {
        if (!n->kids[i]->it->embed->inner)
            continue;
        rbuf_adds(b, *any ? " AND " : " WHERE ");
        *any = 1;
        if (exists(g, n->kids[i], qual, b) < 0)
            return -1;
    }
    return 0;
}

static void root_qual(const rest_enode *root, char *out, size_t n) {
    rbuf b;
    rbuf_init(&b, 512);
    rest_gen_quote(&b, root->t->name);
    snprintf(out, n, "%s", b.failed ? "" : rbuf_cstr(&b));
    rbuf_free(&b);
}

int rest_embed_root_where(rest_eplan *ep, rest_gen *g, rbuf *where) {
    char rq[300];
    int any = where->len > 0;
    root_qual(ep->root, rq, sizeof rq);
    return inner_exists(g, ep->root, rq, where, &any);
}

/* Hidden output columns (join keys), named FFB$Kn so that an ORDER BY
   of a selected column is never ambiguous; `sep` says whether a column
   was written already. */
static void out_col(rbuf *b, int *sep, const char *qual, const char *col,
                    size_t n) {
    if (*sep)
        rbuf_adds(b, ", ");
    *sep = 1;
    qcol(b, qual, col);
    rbuf_printf(b, " AS FFB$K%zu", n);
}

static size_t ntz(const rest_plan *p) {
    size_t n = 0;
    for (size_t k = 0; k < p->nkeys; k++)
        if (p->tzcol && p->tzcol[k] >= 0)
            n += 2;
    return n;
}

/* Every kid's join columns, after the first `ncols` output columns. */
static void kid_cols(rest_enode *n, const char *qual, rbuf *b, int *sep,
                     size_t ncols) {
    for (size_t i = 0; i < n->nkids; i++) {
        rest_enode *k = n->kids[i];
        k->pidx = ncols;
        for (size_t c = 0; c < k->nk; c++)
            out_col(b, sep, qual, k->pcols[c], ncols + c);
        ncols += k->nk;
    }
}

int rest_embed_root_cols(rest_eplan *ep, rest_gen *g, rbuf *sql) {
    int sep = g->plan->nkeys > 0;
    kid_cols(ep->root, NULL, sql, &sep, g->plan->nkeys + ntz(g->plan));
    return 0;
}

/* The primary key after the order, so that a page is the same set of rows
   in every statement; nothing when the order has every key column
   already (a repeated column would stop Firebird from navigating the
   index: a sort of the whole table, measured). */
static void pk_order(const rest_table *t, const rest_query *q, rbuf *sql,
                     int has_order) {
    size_t have = 0;
    for (size_t p = 0; p < t->npk; p++)
        for (size_t i = 0; i < q->norder; i++) {
            const rest_column *c =
                q->order[i].rel ? NULL : rest_table_find(t, q->order[i].column);
            if (c == &t->cols[t->pk[p]]) {
                have++;
                break;
            }
        }
    if (t->npk && have == t->npk)
        return;
    for (size_t p = 0; p < t->npk; p++) {
        rbuf_adds(sql, has_order || p ? ", " : " ORDER BY ");
        rest_gen_quote(sql, t->cols[t->pk[p]].name);
    }
}

void rest_embed_root_order(rest_eplan *ep, rbuf *sql, int has_order) {
    pk_order(ep->root->t, ep->root->q, sql, has_order);
}

typedef struct ctx {
    const rest_plan_opts *o;
    const rest_plan *top;
    rest_eplan *ep;
} ctx;

int rest_embed_order_term(rest_eplan *ep, rest_gen *g, const rest_order *ord,
                          rbuf *b) {
    const rest_enode *k = NULL;
    for (size_t i = 0; ep && i < ep->root->nkids; i++)
        if (strcmp(ep->root->kids[i]->key, ord->rel) == 0)
            k = ep->root->kids[i];
    if (!k || k->it->embed->spread) {
        rest_err_set(g->err, 400, "PGRST108", NULL,
                     "'%.100s' is not an embedded resource in this request",
                     ord->rel);
        snprintf(g->err->hint, sizeof g->err->hint,
                 "Verify that '%.100s' is included in the 'select' query "
                 "parameter.",
                 ord->rel);
        return -1;
    }
    if (k->kind != REST_REL_TO_ONE) {
        rest_err_set(g->err, 400, "PGRST118", NULL,
                     "A related order on '%.100s' is not possible", ord->rel);
        snprintf(g->err->details, sizeof g->err->details,
                 "'%.100s' and '%.100s' do not form a many-to-one or "
                 "one-to-one relationship",
                 ep->root->t->exposed, ord->rel);
        return -1;
    }
    const rest_column *c = rest_table_find(k->t, ord->column);
    if (!c) {
        rest_err_set(g->err, 400, "42703", NULL, "column %s.%s does not exist",
                     k->t->exposed, ord->column);
        return -1;
    }
    char rq[300];
    root_qual(ep->root, rq, sizeof rq);
    rbuf_adds(b, "(SELECT o.");
    rest_gen_quote(b, c->name);
    rbuf_adds(b, " FROM ");
    rest_gen_quote(b, k->t->name);
    rbuf_adds(b, " o");
    for (size_t i = 0; i < k->nk; i++) {
        rbuf_adds(b, i ? " AND " : " WHERE ");
        qcol(b, "o", k->ccols[i]);
        rbuf_adds(b, " = ");
        qcol(b, rq, k->pcols[i]);
    }
    rbuf_addc(b, ')');
    return 0;
}

static int keyset(rest_gen *g, const ctx *c, const rest_enode *p,
                  const char *const *cols, size_t n, rbuf *b);

/* FROM (<the parent's keys>) dk JOIN <the level's table(s)> tk. */
static int from(rest_gen *g, const ctx *c, const rest_enode *k, rbuf *b) {
    char t[16], j[16], d[16];
    snprintf(t, sizeof t, "t%zu", k->depth);
    snprintf(j, sizeof j, "j%zu", k->depth);
    snprintf(d, sizeof d, "d%zu", k->depth);
    rbuf_adds(b, " FROM (");
    if (keyset(g, c, k->parent, k->pcols, k->nk, b) < 0)
        return -1;
    rbuf_printf(b, ") %s JOIN ", d);
    const char *m = t;
    if (k->kind == REST_REL_M2M) {
        m = j;
        rest_gen_quote(b, k->jt->name);
        rbuf_printf(b, " %s ON ", j);
        for (size_t i = 0; i < k->nk; i++) {
            rbuf_adds(b, i ? " AND " : "");
            qcol(b, j, k->ccols[i]);
            rbuf_printf(b, " = %s.k%zu", d, i);
        }
        rbuf_adds(b, " JOIN ");
    }
    rest_gen_quote(b, k->t->name);
    rbuf_printf(b, " %s ON ", t);
    if (k->kind == REST_REL_M2M) {
        junction_on(b, k, t, j);
    } else {
        for (size_t i = 0; i < k->nk; i++) {
            rbuf_adds(b, i ? " AND " : "");
            qcol(b, m, k->ccols[i]);
            rbuf_printf(b, " = %s.k%zu", d, i);
        }
    }
    /* the level's own filters and !inner kids */
    int any = 0;
    if (own_where(g, k, t, b, &any) < 0)
        return -1;
    return 0;
}

/* Per level (db-embed-strategy = per-level): FROM the level's table(s)
   WHERE its match column IN (the parent's key values, as parameters). */
static int from_keys(rest_gen *g, const rest_enode *k, const char *const *keys,
                     size_t nkeys, rbuf *b) {
    char t[16], j[16];
    snprintf(t, sizeof t, "t%zu", k->depth);
    snprintf(j, sizeof j, "j%zu", k->depth);
    rbuf_adds(b, " FROM ");
    if (k->kind == REST_REL_M2M) {
        rest_gen_quote(b, k->jt->name);
        rbuf_printf(b, " %s JOIN ", j);
    }
    rest_gen_quote(b, k->t->name);
    rbuf_printf(b, " %s", t);
    if (k->kind == REST_REL_M2M) {
        rbuf_adds(b, " ON ");
        junction_on(b, k, t, j);
    }
    rbuf_adds(b, " WHERE ");
    qcol(b, k->kind == REST_REL_M2M ? j : t, k->ccols[0]);
    rbuf_adds(b, " IN (");
    for (size_t i = 0; i < nkeys; i++) {
        rest_param p = {0, 0, keys[i], 0};
        rbuf_adds(b, i ? ", ?" : "?");
        if (rest_gen_param(g, &p) < 0)
            return -1;
    }
    rbuf_addc(b, ')');
    int any = 1;
    if (own_where(g, k, t, b, &any) < 0)
        return -1;
    return 0;
}

/* The top level's rows: its filters, order and page, exactly as its own
   statement has them. */
static int top_rows(rest_gen *g, const ctx *c, const rest_enode *root,
                    rbuf *b) {
    rest_gen rg = *g;
    rg.t = root->t;
    rg.qual = NULL;
    rg.ep = c->ep;
    rbuf_adds(b, " FROM ");
    if (rest_gen_from(&rg, root->t, b) < 0)
        return -1;
    int any = 0;
    char rq[300];
    root_qual(root, rq, sizeof rq);
    if (filters(&rg, root->q, b, &any) < 0 ||
        inner_exists(&rg, root, rq, b, &any) < 0)
        return -1;
    const rest_plan *top = c->top;
    int64_t fetch = top->probe > 0 ? top->probe + 1 : top->limit;
    if (top->offset > 0 || fetch >= 0) {
        /* the same order as the top statement's, for the same page */
        rbuf ob;
        rbuf_init(&ob, 1u << 20);
        if (rest_gen_order(&rg, root->q, c->o, &ob) < 0) {
            rbuf_free(&ob);
            return -1;
        }
        rbuf_add(b, ob.p, ob.len);
        pk_order(root->t, root->q, b, ob.len > 0);
        rbuf_free(&ob);
        rest_param p = {1, top->offset, NULL, 0};
        rbuf_adds(b, " OFFSET ? ROWS");
        if (rest_gen_param(&rg, &p) < 0)
            return -1;
    }
    if (fetch >= 0) {
        rest_param p = {1, fetch, NULL, 0};
        rbuf_adds(b, " FETCH NEXT ? ROWS ONLY");
        if (rest_gen_param(&rg, &p) < 0)
            return -1;
    }
    g->cap = rg.cap;
    return 0;
}

/* SELECT DISTINCT k0.. FROM (the rows of `p`, its `cols` as k0..) e. */
static int keyset(rest_gen *g, const ctx *c, const rest_enode *p,
                  const char *const *cols, size_t n, rbuf *b) {
    char e[16], t[16];
    snprintf(e, sizeof e, "e%zu", p->depth);
    snprintf(t, sizeof t, "t%zu", p->depth);
    rbuf_adds(b, "SELECT DISTINCT ");
    for (size_t i = 0; i < n; i++)
        rbuf_printf(b, "%s%s.k%zu", i ? ", " : "", e, i);
    rbuf_adds(b, " FROM (SELECT ");
    for (size_t i = 0; i < n; i++) {
        rbuf_adds(b, i ? ", " : "");
        qcol(b, p->parent ? t : NULL, cols[i]);
        rbuf_printf(b, " AS k%zu", i);
    }
    int rc = p->parent ? from(g, c, p, b) : top_rows(g, c, p, b);
    if (rc < 0)
        return -1;
    rbuf_printf(b, ") %s", e);
    return 0;
}

static int level_sql(rarena *a, const ctx *c, rest_enode *k, rest_err *err,
                     const char *const *keys, size_t nkeys) {
    rest_plan *pl = &k->plan;
    rest_plan_free(pl);
    memset(pl, 0, sizeof *pl);
    char t[16], j[16];
    snprintf(t, sizeof t, "t%zu", k->depth);
    snprintf(j, sizeof j, "j%zu", k->depth);
    rbuf_init(&pl->sql, 1u << 20);
    rbuf_init(&pl->count_sql, 0);
    pl->limit = k->q->limit;
    pl->offset = k->q->offset;
    rest_gen g = {a, k->t, pl, err, 0, t, NULL};
    rbuf *b = &pl->sql;
    rbuf_adds(b, "SELECT ");
    if (rest_gen_select(&g, k->q, b) < 0)
        return -1;
    int sep = pl->nkeys > 0;
    size_t ncols = pl->nkeys + ntz(pl);
    k->midx = ncols;
    const char *m = k->kind == REST_REL_M2M ? j : t;
    for (size_t i = 0; i < k->nk; i++)
        out_col(b, &sep, m, k->ccols[i], ncols + i);
    kid_cols(k, t, b, &sep, ncols + k->nk);
    if ((keys ? from_keys(&g, k, keys, nkeys, b) : from(&g, c, k, b)) < 0)
        return -1;
    /* only the embedded order: rows are grouped by key in memory (an
       ORDER BY of the match column makes Firebird walk that index from
       end to end instead of looking the keys up: measured) */
    if (k->kind != REST_REL_TO_ONE && rest_gen_order(&g, k->q, c->o, b) < 0)
        return -1;
    if (b->failed) {
        rest_err_set(err, 400, "PGRST100", NULL,
                     "the generated SQL is too long");
        return -1;
    }
    rbuf_cstr(b);
    return 0;
}

int rest_embed_plan(rest_eplan *ep, rarena *a, const rest_query *q,
                    const rest_plan_opts *o, const rest_plan *top,
                    rest_err *err) {
    ctx c = {o, top, ep};
    (void)q;
    ep->arena = a;
    ep->o = *o;
    ep->top = top;
    /* the top level's rows are read with the request's own plan */
    ep->root->plan.keys = top->keys;
    ep->root->plan.nkeys = top->nkeys;
    ep->root->plan.tzcol = top->tzcol;
    for (size_t i = 0; i < ep->nlevels; i++)
        if (level_sql(a, &c, ep->levels[i], err, NULL, 0) < 0)
            return -1;
    return 0;
}

int rest_embed_level_keys(rest_eplan *ep, rest_enode *k,
                          const char *const *keys, size_t nkeys,
                          rest_err *err) {
    ctx c = {&ep->o, ep->top, ep};
    return level_sql(ep->arena, &c, k, err, keys, nkeys);
}

void rest_embed_dump(const rest_eplan *ep, rbuf *b) {
    for (size_t i = 0; i < ep->nlevels; i++) {
        const rest_enode *k = ep->levels[i];
        rbuf_printf(b, "embed %s (%s, depth %zu%s%s", k->key,
                    kind_names[k->kind], k->depth,
                    k->it->embed->inner ? ", inner" : "",
                    k->it->embed->spread ? ", spread" : "");
        if (k->q->limit >= 0)
            rbuf_printf(b, ", limit %lld", (long long)k->q->limit);
        if (k->q->offset)
            rbuf_printf(b, ", offset %lld", (long long)k->q->offset);
        rbuf_adds(b, "): ");
        rest_plan_dump(&k->plan, b);
    }
}
