/* ffb-rest: the schema cache as data (no I/O). */
#include "schema.h"

#include "buf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dupstr(const char *s) {
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (p)
        memcpy(p, s, n + 1);
    return p;
}

char *rest_expose_name(const char *stored) {
    int lower = 0;
    for (const char *p = stored; *p; p++)
        if (islower((unsigned char)*p) || (unsigned char)*p >= 0x80)
            lower = 1;
    char *e = dupstr(stored);
    if (e && !lower)
        for (char *p = e; *p; p++)
            *p = (char)tolower((unsigned char)*p);
    return e;
}

void rest_schema_init(rest_schema *s) { memset(s, 0, sizeof *s); }

static void table_free(rest_table *t) {
    for (size_t c = 0; c < t->ncols; c++) {
        free(t->cols[c].name);
        free(t->cols[c].exposed);
    }
    for (size_t f = 0; f < t->nfks; f++) {
        for (size_t c = 0; c < t->fks[f].ncols; c++) {
            free(t->fks[f].cols[c]);
            free(t->fks[f].ref_cols[c]);
        }
        free(t->fks[f].cols);
        free(t->fks[f].ref_cols);
        free(t->fks[f].name);
        free(t->fks[f].ref_table);
    }
    free(t->fks);
    free(t->pk);
    free(t->cols);
    free(t->name);
    free(t->exposed);
}

void rest_schema_free(rest_schema *s) {
    for (size_t i = 0; i < s->ntables; i++)
        table_free(&s->tables[i]);
    free(s->tables);
    for (size_t i = 0; i < s->nroutines; i++) {
        rest_routine *r = &s->routines[i];
        table_free(&r->out);
        free(r->returns);
        for (size_t a = 0; a < r->nin; a++) {
            free(r->in[a].name);
            free(r->in[a].exposed);
        }
        free(r->in);
        free(r->name);
        free(r->exposed);
    }
    free(s->routines);
    memset(s, 0, sizeof *s);
}

static int upper_eq(const char *given, const char *stored);
static char *dupstr(const char *s);

rest_routine *rest_schema_routine(rest_schema *s, const char *name, int kind) {
    for (size_t i = 0; i < s->nroutines; i++)
        if (s->routines[i].kind == kind &&
            strcmp(s->routines[i].name, name) == 0)
            return &s->routines[i];
    if (s->nroutines == s->cap_routines) {
        size_t nc = s->cap_routines ? s->cap_routines * 2 : 16;
        rest_routine *nr = realloc(s->routines, nc * sizeof *nr);
        if (!nr)
            return NULL;
        s->routines = nr;
        s->cap_routines = nc;
    }
    rest_routine *r = &s->routines[s->nroutines];
    memset(r, 0, sizeof *r);
    r->name = dupstr(name);
    r->exposed = rest_expose_name(name);
    if (!r->name || !r->exposed) {
        free(r->name);
        free(r->exposed);
        return NULL;
    }
    r->kind = kind;
    r->out.name = dupstr(name);
    r->out.exposed = rest_expose_name(name);
    if (!r->out.name || !r->out.exposed) {
        free(r->name);
        free(r->exposed);
        free(r->out.name);
        free(r->out.exposed);
        return NULL;
    }
    r->out.proc = r->name;
    s->nroutines++;
    return r;
}

int rest_routine_set_returns(rest_routine *r, const char *d, size_t n) {
    static const char tag[] = "@returns";
    size_t tl = sizeof tag - 1, i = 0;
    while (i + tl <= n && memcmp(d + i, tag, tl) != 0)
        i++;
    if (i + tl > n)
        return 0;
    i += tl;
    if (i < n && !isspace((unsigned char)d[i]))
        return 0; /* "@returnsX": not the annotation */
    while (i < n && isspace((unsigned char)d[i]))
        i++;
    char name[256];
    size_t k = 0;
    if (i < n && d[i] == '"') {
        for (i++; i < n && k + 1 < sizeof name; i++) {
            if (d[i] == '"') {
                if (i + 1 < n && d[i + 1] == '"')
                    i++;
                else
                    break;
            }
            if (d[i] == '\0')
                return 0; /* no identifier holds a NUL */
            name[k++] = d[i];
        }
        if (i >= n || d[i] != '"')
            return 0; /* unterminated or too long */
    } else {
        while (i < n && k + 1 < sizeof name &&
               (isalnum((unsigned char)d[i]) || d[i] == '_' || d[i] == '$'))
            name[k++] = (char)toupper((unsigned char)d[i++]);
    }
    if (k == 0)
        return 0;
    name[k] = '\0';
    free(r->returns);
    r->returns = dupstr(name);
    return r->returns ? 0 : -1;
}

static long col_index(const rest_table *t, const char *stored);

/* `out` takes `t`'s name, key and the foreign keys it has the columns of. */
static int link_table(rest_table *out, const rest_table *t) {
    for (size_t k = 0; k < t->npk; k++)
        if (col_index(out, t->cols[t->pk[k]].name) < 0)
            goto fks; /* not every key column is an output: no key */
    for (size_t k = 0; k < t->npk; k++)
        if (rest_table_add_pk(out, t->cols[t->pk[k]].name) < 0)
            return -1;
fks:
    for (size_t f = 0; f < t->nfks; f++) {
        const rest_fk *fk = &t->fks[f];
        size_t c = 0;
        while (c < fk->ncols && col_index(out, fk->cols[c]) >= 0)
            c++;
        for (size_t k = 0; c == fk->ncols && k < fk->ncols; k++)
            if (rest_table_add_fk(out, fk->name, fk->ref_table, fk->cols[k],
                                  fk->ref_cols[k]) < 0)
                return -1;
    }
    char *nm = dupstr(t->name), *ex = dupstr(t->exposed);
    if (!nm || !ex) {
        free(nm);
        free(ex);
        return -1;
    }
    free(out->name);
    free(out->exposed);
    out->name = nm;
    out->exposed = ex;
    return 0;
}

/* db-procedure-returns: "proc:table, proc:table". */
static int apply_map(rest_schema *s, const char *m) {
    while (m && *m) {
        while (*m == ' ' || *m == ',')
            m++;
        if (!*m)
            break;
        const char *colon = strchr(m, ':');
        const char *end = strchr(m, ',');
        if (!end)
            end = m + strlen(m);
        if (!colon || colon > end)
            return -2;
        char proc[256], tab[300];
        size_t pn = (size_t)(colon - m), tn = (size_t)(end - colon - 1);
        while (pn && m[pn - 1] == ' ')
            pn--;
        const char *t = colon + 1;
        while (tn && *t == ' ')
            t++, tn--;
        while (tn && t[tn - 1] == ' ')
            tn--;
        if (pn == 0 || tn == 0 || pn >= sizeof proc || tn + 10 >= sizeof tab)
            return -2;
        memcpy(proc, m, pn);
        proc[pn] = '\0';
        snprintf(tab, sizeof tab, "@returns %.*s", (int)tn, t);
        rest_routine *r = (rest_routine *)rest_schema_find_routine(s, proc);
        if (!r || r->kind != REST_RT_SELECTABLE)
            return -2;
        free(r->returns);
        r->returns = NULL;
        if (rest_routine_set_returns(r, tab, strlen(tab)) < 0)
            return -1;
        if (!r->returns)
            return -2;
        m = end;
    }
    return 0;
}

int rest_schema_link_routines(rest_schema *s) {
    int rc = apply_map(s, s->returns_map);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < s->nroutines; i++) {
        rest_routine *r = &s->routines[i];
        r->out.proc = r->name;
        if (r->kind != REST_RT_SELECTABLE || !r->returns)
            continue;
        const rest_table *t = NULL;
        for (size_t k = 0; k < s->ntables && !t; k++)
            if (strcmp(s->tables[k].name, r->returns) == 0)
                t = &s->tables[k];
        if (t && link_table(&r->out, t) < 0)
            return -1;
    }
    return 0;
}

int rest_routine_add_arg(rest_routine *r, const char *name, int has_default) {
    if (r->nin == r->cap_in) {
        size_t nc = r->cap_in ? r->cap_in * 2 : 8;
        rest_arg *na = realloc(r->in, nc * sizeof *na);
        if (!na)
            return -1;
        r->in = na;
        r->cap_in = nc;
    }
    rest_arg *a = &r->in[r->nin];
    a->name = dupstr(name);
    a->exposed = rest_expose_name(name);
    a->has_default = has_default;
    if (!a->name || !a->exposed) {
        free(a->name);
        free(a->exposed);
        return -1;
    }
    r->nin++;
    return 0;
}

const rest_routine *rest_schema_find_routine(const rest_schema *s,
                                             const char *name) {
    for (size_t i = 0; i < s->nroutines; i++)
        if (upper_eq(name, s->routines[i].name))
            return &s->routines[i];
    for (size_t i = 0; i < s->nroutines; i++)
        if (strcmp(name, s->routines[i].name) == 0)
            return &s->routines[i];
    return NULL;
}

const rest_arg *rest_routine_find_arg(const rest_routine *r, const char *name,
                                      size_t *pos) {
    for (int exact = 0; exact < 2; exact++)
        for (size_t i = 0; i < r->nin; i++)
            if (exact ? strcmp(name, r->in[i].name) == 0
                      : upper_eq(name, r->in[i].name)) {
                *pos = i;
                return &r->in[i];
            }
    return NULL;
}

rest_table *rest_schema_table(rest_schema *s, const char *name, int is_view,
                              int rel_type) {
    for (size_t i = 0; i < s->ntables; i++)
        if (strcmp(s->tables[i].name, name) == 0)
            return &s->tables[i];
    if (s->ntables == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        rest_table *nt = realloc(s->tables, nc * sizeof *nt);
        if (!nt)
            return NULL;
        s->tables = nt;
        s->cap = nc;
    }
    rest_table *t = &s->tables[s->ntables];
    memset(t, 0, sizeof *t);
    t->name = dupstr(name);
    t->exposed = rest_expose_name(name);
    if (!t->name || !t->exposed) {
        free(t->name);
        free(t->exposed);
        return NULL;
    }
    t->is_view = is_view;
    t->rel_type = rel_type;
    s->ntables++;
    return t;
}

rest_column *rest_table_add_column(rest_table *t, const char *name) {
    if (t->ncols == t->cap_cols) {
        size_t nc = t->cap_cols ? t->cap_cols * 2 : 8;
        rest_column *n = realloc(t->cols, nc * sizeof *n);
        if (!n)
            return NULL;
        t->cols = n;
        t->cap_cols = nc;
    }
    rest_column *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = dupstr(name);
    c->exposed = rest_expose_name(name);
    c->charset = -1;
    c->identity = -1;
    if (!c->name || !c->exposed) {
        free(c->name);
        free(c->exposed);
        return NULL;
    }
    t->ncols++;
    return c;
}

static long col_index(const rest_table *t, const char *stored) {
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, stored) == 0)
            return (long)i;
    return -1;
}

int rest_table_add_pk(rest_table *t, const char *col) {
    long i = col_index(t, col);
    if (i < 0)
        return -1;
    size_t *n = realloc(t->pk, (t->npk + 1) * sizeof *n);
    if (!n)
        return -1;
    t->pk = n;
    t->pk[t->npk++] = (size_t)i;
    return 0;
}

int rest_table_add_fk(rest_table *t, const char *fk, const char *ref_table,
                      const char *col, const char *ref_col) {
    rest_fk *f = NULL;
    for (size_t i = 0; i < t->nfks; i++)
        if (strcmp(t->fks[i].name, fk) == 0)
            f = &t->fks[i];
    if (!f) {
        rest_fk *n = realloc(t->fks, (t->nfks + 1) * sizeof *n);
        if (!n)
            return -1;
        t->fks = n;
        f = &t->fks[t->nfks];
        memset(f, 0, sizeof *f);
        f->name = dupstr(fk);
        f->ref_table = dupstr(ref_table);
        if (!f->name || !f->ref_table) {
            free(f->name);
            free(f->ref_table);
            return -1;
        }
        t->nfks++;
    }
    char **nc = realloc(f->cols, (f->ncols + 1) * sizeof *nc);
    if (!nc)
        return -1;
    f->cols = nc;
    char **nr = realloc(f->ref_cols, (f->ncols + 1) * sizeof *nr);
    if (!nr)
        return -1;
    f->ref_cols = nr;
    f->cols[f->ncols] = dupstr(col);
    f->ref_cols[f->ncols] = dupstr(ref_col ? ref_col : "");
    if (!f->cols[f->ncols] || !f->ref_cols[f->ncols]) {
        free(f->cols[f->ncols]);
        free(f->ref_cols[f->ncols]);
        return -1;
    }
    f->ncols++;
    return 0;
}

/* Compare `given` in upper case with `stored`. */
static int upper_eq(const char *given, const char *stored) {
    for (; *given && *stored; given++, stored++)
        if (toupper((unsigned char)*given) != (unsigned char)*stored)
            return 0;
    return *given == *stored;
}

const rest_table *rest_schema_find(const rest_schema *s, const char *name) {
    for (size_t i = 0; i < s->ntables; i++)
        if (upper_eq(name, s->tables[i].name))
            return &s->tables[i];
    for (size_t i = 0; i < s->ntables; i++)
        if (strcmp(name, s->tables[i].name) == 0)
            return &s->tables[i];
    return NULL;
}

const rest_column *rest_table_find(const rest_table *t, const char *name) {
    for (size_t i = 0; i < t->ncols; i++)
        if (upper_eq(name, t->cols[i].name))
            return &t->cols[i];
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(name, t->cols[i].name) == 0)
            return &t->cols[i];
    return NULL;
}

void rest_schema_dump(const rest_schema *s, rbuf *b) {
    for (size_t i = 0; i < s->ntables; i++) {
        const rest_table *t = &s->tables[i];
        rbuf_printf(b, "%s %s (%s)", t->is_view ? "view" : "table", t->exposed,
                    t->name);
        if (t->npk) {
            rbuf_adds(b, " pk(");
            for (size_t k = 0; k < t->npk; k++)
                rbuf_printf(b, "%s%s", k ? "," : "", t->cols[t->pk[k]].exposed);
            rbuf_addc(b, ')');
        }
        rbuf_addc(b, '\n');
        for (size_t c = 0; c < t->ncols; c++) {
            const rest_column *col = &t->cols[c];
            rbuf_printf(b,
                        "  column %s type=%d subtype=%d scale=%d length=%d "
                        "charset=%d%s%s%s%s\n",
                        col->exposed, col->type, col->subtype, col->scale,
                        col->length, col->charset,
                        col->notnull ? " not-null" : "",
                        col->computed ? " computed" : "",
                        col->has_default ? " default" : "",
                        col->identity >= 0 ? " identity" : "");
        }
        for (size_t f = 0; f < t->nfks; f++) {
            const rest_fk *fk = &t->fks[f];
            rbuf_printf(b, "  fk %s (", fk->name);
            for (size_t k = 0; k < fk->ncols; k++)
                rbuf_printf(b, "%s%s", k ? "," : "", fk->cols[k]);
            rbuf_printf(b, ") -> %s (", fk->ref_table);
            for (size_t k = 0; k < fk->ncols; k++)
                rbuf_printf(b, "%s%s", k ? "," : "", fk->ref_cols[k]);
            rbuf_adds(b, ")\n");
        }
    }
}
