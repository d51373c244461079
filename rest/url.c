/*
 * ffb-rest: PostgREST's URL grammar (spec rest.md A3). Pure: no I/O.
 *
 * Everything parsed is copied into the caller's arena, so the tree lives
 * as long as the request. Input is bounded by the server's URL limit; the
 * parser is linear in it, and recursion (and/or trees) is bounded by
 * rest_limits.max_depth.
 */
#include "url.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void rest_err_set(rest_err *e, int status, const char *code,
                  const char *details, const char *fmt, ...) {
    va_list ap;
    memset(e, 0, sizeof *e);
    e->status = status;
    snprintf(e->code, sizeof e->code, "%s", code);
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    if (details)
        snprintf(e->details, sizeof e->details, "%s", details);
}

static const char *const op_names[] = {"eq", "neq", "gt",        "gte",
                                       "lt", "lte", "like",      "ilike",
                                       "in", "is",  "isdistinct"};

/* Operators of PostgREST that Firebird cannot do (spec A2: "no"), and
   the v2 ones: PGRST127. */
static const char *const op_unsupported[] = {
    "match", "imatch", "fts", "plfts", "phfts", "wfts", "cs",
    "cd",    "ov",     "sl",  "sr",    "nxr",   "nxl",  "adj"};

const char *rest_op_name(int op) {
    if (op < 0 || (size_t)op >= sizeof op_names / sizeof op_names[0])
        return "?";
    return op_names[op];
}

/* A key with an embed path ("books.order", "books.authors.id"): kept until
   the whole query string is read, since select may come after it. */
typedef struct deferred {
    const char *key; /* decoded */
    size_t keyn;
    const char *v;
    size_t vn;
    struct deferred *next;
} deferred;

typedef struct parser {
    rarena *arena;
    const rest_limits *lim;
    rest_query *q;
    rest_err *err;
    size_t leaves; /* filters of every level */
    deferred *paths;
    deferred **tail;
} parser;

/* A view of bytes. */
typedef struct span {
    const char *p;
    size_t n;
} span;

static int nomem(parser *ps) {
    rest_err_set(ps->err, 500, "PGRST000", NULL, "out of memory");
    return -1;
}

static int perr(parser *ps, const char *details, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int perr(parser *ps, const char *details, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rest_err_set(ps->err, 400, "PGRST100", details, "%s", msg);
    return -1;
}

static int not_impl(parser *ps, const char *what) {
    rest_err_set(ps->err, 400, "PGRST127", what, "Feature not implemented");
    return -1;
}

static span trim(span s) {
    while (s.n && isspace((unsigned char)s.p[0])) {
        s.p++;
        s.n--;
    }
    while (s.n && isspace((unsigned char)s.p[s.n - 1]))
        s.n--;
    return s;
}

static int span_eq(span s, const char *lit) {
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* '+' is a space, %XX a byte; a '%' not followed by two hex digits stays. */
static char *decode(parser *ps, const char *p, size_t n, size_t *outn) {
    char *o = rarena_alloc(ps->arena, n + 1);
    if (!o)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '+') {
            o[k++] = ' ';
        } else if (p[i] == '%' && i + 2 < n && hexval(p[i + 1]) >= 0 &&
                   hexval(p[i + 2]) >= 0) {
            o[k++] = (char)(hexval(p[i + 1]) * 16 + hexval(p[i + 2]));
            i += 2;
        } else {
            o[k++] = p[i];
        }
    }
    o[k] = '\0';
    *outn = k;
    return o;
}

char *rest_url_decode(rarena *a, const char *s, size_t n, size_t *outn) {
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.arena = a;
    return decode(&ps, s, n, outn);
}

static int is_name_byte(unsigned char c) {
    return isalnum(c) || c == '_' || c == '$' || c == '-' || c == ' ' ||
           c >= 0x80;
}

/* A quoted string at s[*i] ('"' ... '"' with \" and \\); on success *i is
   past the closing quote. */
static int quoted(parser *ps, const char *s, size_t n, size_t *i,
                  const char **out) {
    size_t j = *i + 1;
    char *o = rarena_alloc(ps->arena, n - *i + 1);
    size_t k = 0;
    if (!o)
        return nomem(ps);
    while (j < n && s[j] != '"') {
        if (s[j] == '\\' && j + 1 < n)
            j++;
        o[k++] = s[j++];
    }
    if (j >= n)
        return perr(ps, "unexpected end of input expecting '\"'",
                    "\"failed to parse\" (unterminated quoted value)");
    o[k] = '\0';
    *out = o;
    *i = j + 1;
    return 0;
}

/* A field name at s[*i]: quoted, or identifier bytes (trimmed). Stops at
   any other byte. */
static int field_name(parser *ps, const char *s, size_t n, size_t *i,
                      const char **out, const char *what) {
    while (*i < n && s[*i] == ' ')
        (*i)++;
    if (*i < n && s[*i] == '"') {
        int rc = quoted(ps, s, n, i, out);
        while (rc == 0 && *i < n && s[*i] == ' ')
            (*i)++;
        return rc;
    }
    size_t st = *i;
    while (*i < n && is_name_byte((unsigned char)s[*i]) &&
           !(s[*i] == '-' && *i + 1 < n && s[*i + 1] == '>'))
        (*i)++;
    span sp = trim((span){s + st, *i - st});
    if (sp.n == 0)
        return perr(ps, "expecting field name", "\"failed to parse %s\"", what);
    *out = rarena_strndup(ps->arena, sp.p, sp.n);
    return *out ? 0 : nomem(ps);
}

/* like/ilike: '*' is PostgREST's alias of '%'. */
static const char *star_to_percent(parser *ps, const char *v) {
    size_t n = strlen(v);
    char *o = rarena_strndup(ps->arena, v, n);
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (o[i] == '*')
            o[i] = '%';
    return o;
}

static int parse_op(parser *ps, span word, int *op) {
    for (size_t k = 0; k < sizeof op_names / sizeof op_names[0]; k++)
        if (span_eq(word, op_names[k])) {
            *op = (int)k;
            return 0;
        }
    for (size_t k = 0; k < sizeof op_unsupported / sizeof op_unsupported[0];
         k++)
        if (span_eq(word, op_unsupported[k])) {
            char d[96];
            snprintf(d, sizeof d, "operator %s has no Firebird equivalent",
                     op_unsupported[k]);
            return not_impl(ps, d);
        }
    if (word.n > 2 && word.p[word.n - 1] == ')' && memchr(word.p, '(', word.n))
        return not_impl(ps, "operator modifiers (any)/(all)");
    char d[160];
    snprintf(d, sizeof d, "unknown operator \"%.*s\"",
             (int)(word.n > 64 ? 64 : word.n), word.p);
    return perr(ps, d, "\"failed to parse filter\"");
}

static int parse_is(parser *ps, const char *v, int *out) {
    static const char *const names[] = {"null", "not_null", "true", "false",
                                        "unknown"};
    for (int k = 0; k < 5; k++)
        if (strcmp(v, names[k]) == 0) {
            *out = k;
            return 0;
        }
    return perr(ps,
                "expecting null, not_null, true, false or unknown after is.",
                "\"failed to parse filter (is.%.64s)\"", v);
}

static int count_leaf(parser *ps) {
    ps->q->nleaves++;
    if (++ps->leaves > ps->lim->max_filters)
        return perr(ps, NULL, "the request has more than %zu filters",
                    ps->lim->max_filters);
    return 0;
}

/* "(a,b,"c,d")" at s[*i] into cond->list. */
static int in_list(parser *ps, const char *s, size_t n, size_t *i,
                   rest_cond *c) {
    if (*i >= n || s[*i] != '(')
        return perr(ps, "expecting \"(\" after in.",
                    "\"failed to parse filter (in.)\"");
    (*i)++;
    size_t cap = 8;
    c->list = rarena_alloc(ps->arena, cap * sizeof *c->list);
    if (!c->list)
        return nomem(ps);
    if (*i < n && s[*i] == ')') {
        (*i)++;
        return 0;
    }
    for (;;) {
        const char *item;
        if (*i < n && s[*i] == '"') {
            if (quoted(ps, s, n, i, &item) < 0)
                return -1;
        } else {
            size_t st = *i;
            while (*i < n && s[*i] != ',' && s[*i] != ')')
                (*i)++;
            item = rarena_strndup(ps->arena, s + st, *i - st);
            if (!item)
                return nomem(ps);
        }
        if (c->nlist >= ps->lim->max_in_list)
            return perr(ps, NULL, "an in.() list has more than %zu items",
                        ps->lim->max_in_list);
        if (c->nlist == cap) {
            const char **nl =
                rarena_alloc(ps->arena, 2 * cap * sizeof *c->list);
            if (!nl)
                return nomem(ps);
            memcpy(nl, c->list, cap * sizeof *c->list);
            c->list = nl;
            cap *= 2;
        }
        c->list[c->nlist++] = item;
        if (*i < n && s[*i] == ',') {
            (*i)++;
            continue;
        }
        if (*i < n && s[*i] == ')') {
            (*i)++;
            return 0;
        }
        return perr(ps, "expecting \",\" or \")\" in in.() list",
                    "\"failed to parse filter (in.)\"");
    }
}

/*
 * "[not.]op.value" at s[*i]. `nested`: inside and/or, where a bare value
 * ends at ',' or ')' and may be quoted; at the top level the value is the
 * rest of the input verbatim.
 */
static int op_value(parser *ps, const char *s, size_t n, size_t *i,
                    rest_cond *c, int nested) {
    size_t st = *i;
    while (*i < n && s[*i] != '.')
        (*i)++;
    span word = {s + st, *i - st};
    if (span_eq(word, "not")) {
        if (*i >= n)
            return perr(ps, "expecting operator after not.",
                        "\"failed to parse filter (not)\"");
        c->negate = !c->negate;
        (*i)++;
        st = *i;
        while (*i < n && s[*i] != '.')
            (*i)++;
        word = (span){s + st, *i - st};
    }
    if (parse_op(ps, word, &c->op) < 0)
        return -1;
    if (*i >= n)
        return perr(ps, "expecting \".\" and a value after the operator",
                    "\"failed to parse filter (%.*s)\"",
                    (int)(word.n > 32 ? 32 : word.n), word.p);
    (*i)++; /* the '.' */
    if (c->op == REST_OP_IN) {
        if (in_list(ps, s, n, i, c) < 0)
            return -1;
        if (!nested && *i != n)
            return perr(ps, "unexpected text after the in.() list",
                        "\"failed to parse filter (in.)\"");
        return 0;
    }
    const char *v;
    if (nested && *i < n && s[*i] == '"') {
        if (quoted(ps, s, n, i, &v) < 0)
            return -1;
    } else if (nested) {
        st = *i;
        while (*i < n && s[*i] != ',' && s[*i] != ')')
            (*i)++;
        v = rarena_strndup(ps->arena, s + st, *i - st);
    } else {
        v = rarena_strndup(ps->arena, s + *i, n - *i);
        *i = n;
    }
    if (!v)
        return nomem(ps);
    if (c->op == REST_OP_IS)
        return parse_is(ps, v, &c->is_value);
    if (c->op == REST_OP_LIKE || c->op == REST_OP_ILIKE) {
        v = star_to_percent(ps, v);
        if (!v)
            return nomem(ps);
    }
    c->value = v;
    return 0;
}

static int add_kid(parser *ps, rest_cond *parent, rest_cond *kid, size_t *cap) {
    if (parent->nkids == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        rest_cond **nk = rarena_alloc(ps->arena, nc * sizeof *nk);
        if (!nk)
            return nomem(ps);
        if (parent->nkids)
            memcpy(nk, parent->kids, parent->nkids * sizeof *nk);
        parent->kids = nk;
        *cap = nc;
    }
    parent->kids[parent->nkids++] = kid;
    return 0;
}

static int logic_list(parser *ps, const char *s, size_t n, size_t *i,
                      rest_cond *c, size_t depth);

/* One condition inside and/or. */
static int logic_cond(parser *ps, const char *s, size_t n, size_t *i,
                      rest_cond **out, size_t depth) {
    rest_cond *c = rarena_alloc(ps->arena, sizeof *c);
    if (!c)
        return nomem(ps);
    while (*i < n && s[*i] == ' ')
        (*i)++;
    size_t j = *i;
    int neg = 0;
    if (n - j >= 4 && memcmp(s + j, "not.", 4) == 0) {
        neg = 1;
        j += 4;
    }
    int kind = REST_COND_LEAF;
    if (n - j >= 4 && memcmp(s + j, "and(", 4) == 0) {
        kind = REST_COND_AND;
        j += 3;
    } else if (n - j >= 3 && memcmp(s + j, "or(", 3) == 0) {
        kind = REST_COND_OR;
        j += 2;
    }
    if (kind != REST_COND_LEAF) {
        c->kind = kind;
        c->negate = neg;
        *i = j;
        if (logic_list(ps, s, n, i, c, depth + 1) < 0)
            return -1;
        *out = c;
        return 0;
    }
    if (field_name(ps, s, n, i, &c->column, "logic tree") < 0)
        return -1;
    if (*i < n && s[*i] == '-' && *i + 1 < n && s[*i + 1] == '>')
        return not_impl(ps, "JSON paths (->, ->>): Firebird has no JSON");
    if (*i >= n || s[*i] != '.')
        return perr(ps, "expecting \".\" after the field name",
                    "\"failed to parse logic tree\"");
    (*i)++;
    if (op_value(ps, s, n, i, c, 1) < 0)
        return -1;
    if (count_leaf(ps) < 0)
        return -1;
    *out = c;
    return 0;
}

/* "(cond,cond,...)" at s[*i] into c->kids. */
static int logic_list(parser *ps, const char *s, size_t n, size_t *i,
                      rest_cond *c, size_t depth) {
    size_t cap = 0;
    if (depth > ps->lim->max_depth)
        return perr(ps, NULL, "and/or trees nest deeper than %zu",
                    ps->lim->max_depth);
    if (*i >= n || s[*i] != '(')
        return perr(ps, "expecting \"(\"", "\"failed to parse logic tree\"");
    (*i)++;
    for (;;) {
        rest_cond *kid = NULL;
        if (logic_cond(ps, s, n, i, &kid, depth) < 0)
            return -1;
        if (add_kid(ps, c, kid, &cap) < 0)
            return -1;
        while (*i < n && s[*i] == ' ')
            (*i)++;
        if (*i < n && s[*i] == ',') {
            (*i)++;
            continue;
        }
        if (*i < n && s[*i] == ')') {
            (*i)++;
            return 0;
        }
        return perr(ps, "expecting \",\" or \")\"",
                    "\"failed to parse logic tree\"");
    }
}

static int root_add(parser *ps, rest_cond *c, size_t *cap) {
    rest_query *q = ps->q;
    if (!q->where) {
        q->where = rarena_alloc(ps->arena, sizeof *q->where);
        if (!q->where)
            return nomem(ps);
        q->where->kind = REST_COND_AND;
    }
    return add_kid(ps, q->where, c, cap);
}

static int parse_filter(parser *ps, const char *key, size_t keyn, const char *v,
                        size_t vn, size_t *cap) {
    span k = trim((span){key, keyn});
    size_t i = 0;
    rest_cond *c = rarena_alloc(ps->arena, sizeof *c);
    if (!c)
        return nomem(ps);
    if (k.n == 0)
        return perr(ps, "empty filter name", "\"failed to parse filter\"");
    c->column = rarena_strndup(ps->arena, k.p, k.n);
    if (!c->column)
        return nomem(ps);
    if (strstr(c->column, "->"))
        return not_impl(ps, "JSON paths (->, ->>): Firebird has no JSON");
    if (op_value(ps, v, vn, &i, c, 0) < 0)
        return -1;
    if (count_leaf(ps) < 0)
        return -1;
    return root_add(ps, c, cap);
}

static int parse_logic_key(parser *ps, int neg, int kind, const char *v,
                           size_t vn, size_t *cap) {
    rest_cond *c = rarena_alloc(ps->arena, sizeof *c);
    size_t i = 0;
    if (!c)
        return nomem(ps);
    c->kind = kind;
    c->negate = neg;
    if (logic_list(ps, v, vn, &i, c, 1) < 0)
        return -1;
    if (i != vn)
        return perr(ps, "unexpected text after \")\"",
                    "\"failed to parse logic tree\"");
    return root_add(ps, c, cap);
}

/* Split `s` at top-level commas (outside quotes and parentheses). */
static int next_item(const char *s, size_t n, size_t *i, span *out) {
    if (*i > n)
        return 0;
    size_t st = *i;
    int depth = 0, inq = 0;
    while (*i < n) {
        char ch = s[*i];
        if (inq) {
            if (ch == '\\' && *i + 1 < n)
                (*i)++;
            else if (ch == '"')
                inq = 0;
        } else if (ch == '"') {
            inq = 1;
        } else if (ch == '(') {
            depth++;
        } else if (ch == ')') {
            depth--;
        } else if (ch == ',' && depth <= 0) {
            break;
        }
        (*i)++;
    }
    *out = (span){s + st, *i - st};
    (*i)++;
    return 1;
}

static const char *const aggregates[] = {"sum", "avg", "min", "max", "count"};

static int parse_select_into(parser *ps, rest_query *q, const char *v,
                             size_t vn, size_t depth);

/* The relation part of an embed at s[*i] (after its name): ["!" hint]
   ["!inner"|"!left"] "(" select ")", up to the item's end. */
static int parse_relation(parser *ps, const char *s, size_t n, size_t i,
                          rest_select *out, size_t depth) {
    rest_embed *e = rarena_alloc(ps->arena, sizeof *e);
    rest_query *q = rarena_alloc(ps->arena, sizeof *q);
    if (!e || !q)
        return nomem(ps);
    memset(e, 0, sizeof *e);
    memset(q, 0, sizeof *q);
    q->limit = -1;
    e->q = q;
    out->embed = e;
    while (i < n && s[i] == '!') {
        size_t st = ++i;
        while (i < n && s[i] != '!' && s[i] != '(')
            i++;
        span w = trim((span){s + st, i - st});
        if (w.n == 0)
            return perr(ps, "expecting a hint after \"!\"",
                        "\"failed to parse select parameter\"");
        if (span_eq(w, "inner"))
            e->inner = 1;
        else if (span_eq(w, "left"))
            e->inner = 0;
        else if (e->hint)
            return perr(ps, "only one hint per embed",
                        "\"failed to parse select parameter\"");
        else if (!(e->hint = rarena_strndup(ps->arena, w.p, w.n)))
            return nomem(ps);
    }
    while (n > i && s[n - 1] == ' ')
        n--;
    if (i >= n || s[i] != '(' || s[n - 1] != ')')
        return perr(ps, "expecting \"(\" select \")\" after the embed",
                    "\"failed to parse select parameter\"");
    if (depth + 1 > (ps->lim->max_embed_depth ? ps->lim->max_embed_depth : 8))
        return perr(ps, NULL,
                    "\"failed to parse select parameter\" (embeds nest "
                    "deeper than %zu)",
                    ps->lim->max_embed_depth ? ps->lim->max_embed_depth : 8);
    return parse_select_into(ps, q, s + i + 1, n - i - 2, depth + 1);
}

/* A cast's type at s[*i] (after "::"), up to "." or the end. */
static int parse_cast(parser *ps, const char *s, size_t n, size_t *i, span it,
                      const char **out) {
    size_t st = *i;
    while (*i < n && s[*i] != '.')
        (*i)++;
    span c = trim((span){s + st, *i - st});
    for (size_t k = 0; k < c.n; k++) {
        unsigned char ch = (unsigned char)c.p[k];
        if (!isalnum(ch) && ch != '_' && ch != '(' && ch != ')' && ch != ',' &&
            ch != ' ')
            return perr(ps, "bad cast",
                        "\"failed to parse select parameter (%.*s)\"",
                        (int)(it.n > 64 ? 64 : it.n), it.p);
    }
    if (c.n == 0)
        return perr(ps, "expecting a type after \"::\"",
                    "\"failed to parse select parameter\"");
    char *cast = rarena_strndup(ps->arena, c.p, c.n);
    if (!cast)
        return nomem(ps);
    for (char *p = cast; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    *out = cast;
    return 0;
}

/* The end of a select item at s[i]: an aggregate's "::cast", spaces. */
static int select_tail(parser *ps, const char *s, size_t n, size_t i, span it,
                       rest_select *out) {
    if (out->agg && n - i >= 2 && s[i] == ':' && s[i + 1] == ':') {
        i += 2;
        if (parse_cast(ps, s, n, &i, it, &out->agg_cast) < 0)
            return -1;
    }
    while (i < n && s[i] == ' ')
        i++;
    if (i != n)
        return perr(ps, "unexpected text in select item",
                    "\"failed to parse select parameter (%.*s)\"",
                    (int)(it.n > 64 ? 64 : it.n), it.p);
    return 0;
}

static int parse_select_item(parser *ps, span it, rest_select *out,
                             size_t depth) {
    const char *s = it.p;
    size_t n = it.n, i = 0;
    it = trim(it);
    if (it.n == 0)
        return perr(ps, "empty item in select",
                    "\"failed to parse select parameter\"");
    if (it.n >= 3 && memcmp(it.p, "...", 3) == 0) {
        size_t j = (size_t)(it.p - s) + 3;
        if (field_name(ps, s, n, &j, &out->name, "select parameter") < 0)
            return -1;
        if (parse_relation(ps, s, n, j, out, depth) < 0)
            return -1;
        out->embed->spread = 1;
        return 0;
    }
    if (span_eq(it, "*")) {
        out->name = "*";
        return 0;
    }
    /* alias: an identifier followed by ':' that is not '::'. */
    while (i < n && s[i] == ' ')
        i++;
    size_t st = i;
    if (i < n && s[i] != '"') {
        while (i < n && is_name_byte((unsigned char)s[i]))
            i++;
        if (i < n && s[i] == ':' && (i + 1 >= n || s[i + 1] != ':') && i > st) {
            span a = trim((span){s + st, i - st});
            out->alias = rarena_strndup(ps->arena, a.p, a.n);
            if (!out->alias)
                return nomem(ps);
            i++;
        } else {
            i = st;
        }
    } else {
        size_t j = i;
        const char *a;
        if (quoted(ps, s, n, &j, &a) < 0)
            return -1;
        if (j < n && s[j] == ':' && (j + 1 >= n || s[j + 1] != ':')) {
            out->alias = a;
            i = j + 1;
        }
    }
    while (i < n && s[i] == ' ')
        i++;
    if (n - i >= 7 && memcmp(s + i, "count()", 7) == 0) {
        /* count(): the rows of each group */
        out->name = "";
        out->agg = REST_AGG_COUNT;
        i += 7;
        return select_tail(ps, s, n, i, it, out);
    }
    if (i < n && s[i] == '*' && (i + 1 == n || s[i + 1] == ' ')) {
        if (out->alias)
            return perr(ps, "\"*\" cannot be renamed",
                        "\"failed to parse select parameter\"");
        out->name = "*";
        return 0;
    }
    if (field_name(ps, s, n, &i, &out->name, "select parameter") < 0)
        return -1;
    if (i < n && (s[i] == '(' || s[i] == '!'))
        return parse_relation(ps, s, n, i, out, depth);
    if (i + 1 < n && s[i] == '-' && s[i + 1] == '>')
        return not_impl(ps, "JSON paths (->, ->>): Firebird has no JSON");
    if (n - i >= 2 && s[i] == ':' && s[i + 1] == ':') {
        i += 2;
        if (parse_cast(ps, s, n, &i, it, &out->cast) < 0)
            return -1;
    }
    if (i < n && s[i] == '.') {
        span rest = {s + i + 1, n - i - 1};
        for (size_t k = 0; k < 5; k++) {
            size_t an = strlen(aggregates[k]);
            if (rest.n >= an + 2 && memcmp(rest.p, aggregates[k], an) == 0 &&
                rest.p[an] == '(' && rest.p[an + 1] == ')') {
                out->agg = (int)k + REST_AGG_SUM;
                return select_tail(ps, s, n, i + 1 + an + 2, it, out);
            }
        }
        return perr(ps, "unexpected \".\" in select",
                    "\"failed to parse select parameter (%.*s)\"",
                    (int)(it.n > 64 ? 64 : it.n), it.p);
    }
    return select_tail(ps, s, n, i, it, out);
}

static int parse_select_into(parser *ps, rest_query *q, const char *v,
                             size_t vn, size_t depth) {
    size_t i = 0, count = 0, cap = 8;
    span it;
    q->select = rarena_alloc(ps->arena, cap * sizeof *q->select);
    if (!q->select)
        return nomem(ps);
    q->nselect = 0;
    while (next_item(v, vn, &i, &it)) {
        if (count == cap) {
            rest_select *ns =
                rarena_alloc(ps->arena, 2 * cap * sizeof *q->select);
            if (!ns)
                return nomem(ps);
            memcpy(ns, q->select, cap * sizeof *ns);
            q->select = ns;
            cap *= 2;
        }
        memset(&q->select[count], 0, sizeof q->select[count]);
        if (parse_select_item(ps, it, &q->select[count], depth) < 0)
            return -1;
        if (q->select[count].embed)
            q->nembeds++;
        if (q->select[count].agg)
            q->naggs++;
        count++;
        if (count > 1000)
            return perr(ps, NULL, "select has more than 1000 items");
    }
    q->nselect = count;
    return 0;
}

static int parse_select(parser *ps, const char *v, size_t vn) {
    ps->q->nembeds = 0;
    ps->q->naggs = 0;
    return parse_select_into(ps, ps->q, v, vn, 0);
}

static int parse_order(parser *ps, const char *v, size_t vn) {
    size_t i = 0, cap = 4;
    span it;
    rest_query *q = ps->q;
    q->order = rarena_alloc(ps->arena, cap * sizeof *q->order);
    if (!q->order)
        return nomem(ps);
    q->norder = 0;
    while (next_item(v, vn, &i, &it)) {
        rest_order o = {0};
        size_t j = 0;
        if (field_name(ps, it.p, it.n, &j, &o.column, "order") < 0)
            return -1;
        if (j < it.n && it.p[j] == '(') {
            /* rel(col): a to-one embed's column (checked by the planner) */
            o.rel = o.column;
            j++;
            if (field_name(ps, it.p, it.n, &j, &o.column, "order") < 0)
                return -1;
            if (j >= it.n || it.p[j] != ')')
                return perr(ps, "expecting \")\"",
                            "\"failed to parse order (%.*s)\"",
                            (int)(it.n > 64 ? 64 : it.n), it.p);
            j++;
        }
        while (j < it.n) {
            if (it.p[j] != '.')
                return perr(ps, "expecting \".\"",
                            "\"failed to parse order (%.*s)\"",
                            (int)(it.n > 64 ? 64 : it.n), it.p);
            size_t st = ++j;
            while (j < it.n && it.p[j] != '.')
                j++;
            span w = {it.p + st, j - st};
            if (span_eq(w, "asc"))
                o.desc = 0;
            else if (span_eq(w, "desc"))
                o.desc = 1;
            else if (span_eq(w, "nullsfirst"))
                o.nulls = REST_NULLS_FIRST;
            else if (span_eq(w, "nullslast"))
                o.nulls = REST_NULLS_LAST;
            else
                return perr(ps, "expecting asc, desc, nullsfirst or nullslast",
                            "\"failed to parse order (%.*s)\"",
                            (int)(it.n > 64 ? 64 : it.n), it.p);
        }
        if (q->norder == cap) {
            rest_order *no =
                rarena_alloc(ps->arena, 2 * cap * sizeof *q->order);
            if (!no)
                return nomem(ps);
            memcpy(no, q->order, cap * sizeof *no);
            q->order = no;
            cap *= 2;
        }
        if (q->norder >= 64)
            return perr(ps, NULL, "order has more than 64 terms");
        q->order[q->norder++] = o;
    }
    return 0;
}

#define REST_MAX_NUMBER 1000000000000000LL

static int parse_count(const char *v, size_t vn, int64_t *out) {
    int64_t x = 0;
    if (vn == 0)
        return -1;
    for (size_t i = 0; i < vn; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        x = x * 10 + (v[i] - '0');
        if (x > REST_MAX_NUMBER)
            return -1;
    }
    *out = x;
    return 0;
}

static void parse_range(parser *ps, const char *r, size_t rn) {
    span s = trim((span){r, rn});
    if (s.n >= 6 && memcmp(s.p, "items=", 6) == 0) {
        s.p += 6;
        s.n -= 6;
    }
    const char *dash = memchr(s.p, '-', s.n);
    int64_t a, b = -1;
    if (!dash)
        return; /* not a range of items: ignored, as PostgREST does */
    if (parse_count(s.p, (size_t)(dash - s.p), &a) < 0)
        return;
    size_t bn = s.n - (size_t)(dash - s.p) - 1;
    if (bn && parse_count(dash + 1, bn, &b) < 0)
        return;
    ps->q->has_range = 1;
    ps->q->range_from = a;
    ps->q->range_to = b;
}

static int dispatch(parser *ps, const char *key, size_t kn, const char *v,
                    size_t vn, size_t *rootcap) {
    span k = trim((span){key, kn});
    rest_query *q = ps->q;
    if (span_eq(k, "select"))
        return parse_select(ps, v, vn);
    if (span_eq(k, "order"))
        return parse_order(ps, v, vn);
    if (span_eq(k, "limit") || span_eq(k, "offset")) {
        int64_t x;
        if (parse_count(v, vn, &x) < 0)
            return perr(ps, "expecting a non-negative integer",
                        "\"failed to parse %.*s parameter (%.*s)\"", (int)k.n,
                        k.p, (int)(vn > 32 ? 32 : vn), v);
        if (k.p[0] == 'l')
            q->limit = x;
        else
            q->offset = x;
        return 0;
    }
    if (span_eq(k, "columns") || span_eq(k, "on_conflict"))
        return 0; /* write parameters: ignored by reads, as PostgREST does */
    if (span_eq(k, "and") || span_eq(k, "or"))
        return parse_logic_key(ps, 0,
                               k.p[0] == 'a' ? REST_COND_AND : REST_COND_OR, v,
                               vn, rootcap);
    if (span_eq(k, "not.and") || span_eq(k, "not.or"))
        return parse_logic_key(ps, 1,
                               k.p[4] == 'a' ? REST_COND_AND : REST_COND_OR, v,
                               vn, rootcap);
    /* An embed path ("books.order", "books.id") names an embed of select:
       resolved once every key is read. A quoted name may hold dots. */
    if (k.n && k.p[0] != '"' && memchr(k.p, '.', k.n)) {
        deferred *d = rarena_alloc(ps->arena, sizeof *d);
        if (!d)
            return nomem(ps);
        *d = (deferred){k.p, k.n, v, vn, NULL};
        *ps->tail = d;
        ps->tail = &d->next;
        return 0;
    }
    if (k.n && k.p[0] == '"') {
        size_t i = 0;
        const char *name;
        if (quoted(ps, k.p, k.n, &i, &name) < 0)
            return -1;
        return parse_filter(ps, name, strlen(name), v, vn, rootcap);
    }
    return parse_filter(ps, k.p, k.n, v, vn, rootcap);
}

static int not_embedded(parser *ps, const char *p, size_t n) {
    int pn = (int)(n > 63 ? 63 : n);
    rest_err_set(ps->err, 400, "PGRST108", NULL,
                 "'%.*s' is not an embedded resource in this request", pn, p);
    snprintf(ps->err->hint, sizeof ps->err->hint,
             "Verify that '%.*s' is included in the 'select' query "
             "parameter.",
             pn, p);
    return -1;
}

/* The embed of `q` that a path segment names: its alias, else its name. */
static rest_query *embed_named(rest_query *q, const char *p, size_t n) {
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < q->nselect; i++) {
            const rest_select *it = &q->select[i];
            const char *nm = pass == 0 ? it->alias : it->name;
            if (it->embed && nm && strlen(nm) == n && memcmp(nm, p, n) == 0)
                return it->embed->q;
        }
    return NULL;
}

/* Every path key into the query of the embed it names. */
static int resolve_paths(parser *ps, rest_query *root) {
    for (deferred *d = ps->paths; d; d = d->next) {
        const char *k = d->key;
        size_t kn = d->keyn, st = 0;
        rest_query *q = root;
        /* the key's own part: the last segment, or "not.and"/"not.or" and
           a filter's column (the segment after the path) */
        for (;;) {
            const char *dot = memchr(k + st, '.', kn - st);
            if (!dot)
                break;
            size_t sn = (size_t)(dot - (k + st));
            size_t rest = kn - st - sn - 1;
            const char *r = dot + 1;
            /* "x.not.and": the rest is a logic key of x */
            if ((rest == 7 && memcmp(r, "not.and", 7) == 0) ||
                (rest == 6 && memcmp(r, "not.or", 6) == 0)) {
                rest_query *e = embed_named(q, k + st, sn);
                if (!e)
                    return not_embedded(ps, k, (size_t)(dot - k));
                q = e;
                st += sn + 1;
                break;
            }
            rest_query *e = embed_named(q, k + st, sn);
            if (!e)
                return not_embedded(ps, k, (size_t)(dot - k));
            q = e;
            st += sn + 1;
        }
        parser sub = *ps;
        sub.q = q;
        size_t cap = q->where ? q->where->nkids : 0;
        if (span_eq((span){k + st, kn - st}, "select"))
            return perr(ps, NULL, "\"failed to parse\" (%.*s)",
                        (int)(kn > 64 ? 64 : kn), k);
        if (dispatch(&sub, k + st, kn - st, d->v, d->vn, &cap) < 0)
            return -1;
        ps->leaves = sub.leaves;
    }
    return 0;
}

int rest_parse_query(rarena *arena, const char *qs, size_t qslen,
                     const char *range, size_t rangelen, const rest_limits *lim,
                     rest_query *out, rest_err *err) {
    static const rest_limits deflim = REST_LIMITS_DEFAULT;
    parser ps = {arena, lim ? lim : &deflim, out, err, 0, NULL, NULL};
    ps.tail = &ps.paths;
    size_t rootcap = 0, i = 0;
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    out->limit = -1;
    while (i < qslen) {
        size_t st = i;
        while (i < qslen && qs[i] != '&')
            i++;
        size_t pn = i - st;
        const char *pair = qs + st;
        i++;
        if (pn == 0)
            continue;
        const char *eq = memchr(pair, '=', pn);
        size_t kn = eq ? (size_t)(eq - pair) : pn;
        size_t dkn, dvn = 0;
        char *k = decode(&ps, pair, kn, &dkn);
        char *v = eq ? decode(&ps, eq + 1, pn - kn - 1, &dvn)
                     : rarena_strndup(arena, "", 0);
        if (!k || !v)
            return nomem(&ps);
        if (dispatch(&ps, k, dkn, v, dvn, &rootcap) < 0)
            return -1;
    }
    if (resolve_paths(&ps, out) < 0)
        return -1;
    if (range && rangelen)
        parse_range(&ps, range, rangelen);
    if (out->has_range && out->range_to >= 0 &&
        out->range_to < out->range_from) {
        rest_err_set(err, 416, "PGRST103", NULL,
                     "Requested range not satisfiable");
        return -1;
    }
    return 0;
}

/* ---- dump (golden tests) ------------------------------------------------ */

static void dump_str(rbuf *b, const char *s) {
    rbuf_addc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            rbuf_addc(b, '\\');
        rbuf_addc(b, *s);
    }
    rbuf_addc(b, '"');
}

static void dump_cond(const rest_cond *c, rbuf *b) {
    if (c->negate)
        rbuf_adds(b, "not.");
    if (c->kind != REST_COND_LEAF) {
        rbuf_adds(b, c->kind == REST_COND_AND ? "and(" : "or(");
        for (size_t i = 0; i < c->nkids; i++) {
            if (i)
                rbuf_addc(b, ',');
            dump_cond(c->kids[i], b);
        }
        rbuf_addc(b, ')');
        return;
    }
    rbuf_adds(b, rest_op_name(c->op));
    rbuf_addc(b, '(');
    dump_str(b, c->column);
    rbuf_addc(b, ',');
    if (c->op == REST_OP_IN) {
        rbuf_addc(b, '[');
        for (size_t i = 0; i < c->nlist; i++) {
            if (i)
                rbuf_addc(b, ',');
            dump_str(b, c->list[i]);
        }
        rbuf_addc(b, ']');
    } else if (c->op == REST_OP_IS) {
        static const char *const n[] = {"null", "not_null", "true", "false",
                                        "unknown"};
        rbuf_adds(b, n[c->is_value]);
    } else {
        dump_str(b, c->value);
    }
    rbuf_addc(b, ')');
}

static void dump_select(const rest_query *q, rbuf *b);

static void dump_embed(const rest_select *it, rbuf *b) {
    const rest_embed *e = it->embed;
    const rest_query *q = e->q;
    if (e->spread)
        rbuf_adds(b, "...");
    dump_str(b, it->name);
    if (e->hint) {
        rbuf_addc(b, '!');
        dump_str(b, e->hint);
    }
    if (e->inner)
        rbuf_adds(b, "!inner");
    rbuf_addc(b, '{');
    dump_select(q, b);
    if (q->where) {
        rbuf_adds(b, " where=");
        dump_cond(q->where, b);
    }
    for (size_t i = 0; i < q->norder; i++)
        rbuf_printf(b, "%s%s.%s", i ? "," : " order=", q->order[i].column,
                    q->order[i].desc ? "desc" : "asc");
    if (q->limit >= 0)
        rbuf_printf(b, " limit=%lld", (long long)q->limit);
    if (q->offset)
        rbuf_printf(b, " offset=%lld", (long long)q->offset);
    rbuf_addc(b, '}');
}

static void dump_select(const rest_query *q, rbuf *b) {
    rbuf_adds(b, "select=");
    if (!q->nselect)
        rbuf_adds(b, "*");
    for (size_t i = 0; i < q->nselect; i++) {
        if (i)
            rbuf_addc(b, ',');
        if (q->select[i].alias) {
            dump_str(b, q->select[i].alias);
            rbuf_addc(b, ':');
        }
        if (q->select[i].embed)
            dump_embed(&q->select[i], b);
        else if (q->select[i].agg == REST_AGG_COUNT && !*q->select[i].name)
            rbuf_adds(b, "count()");
        else if (strcmp(q->select[i].name, "*") == 0)
            rbuf_addc(b, '*');
        else
            dump_str(b, q->select[i].name);
        if (q->select[i].cast)
            rbuf_printf(b, "::%s", q->select[i].cast);
        if (q->select[i].agg && *q->select[i].name)
            rbuf_printf(b, ".%s()", aggregates[q->select[i].agg - 1]);
        if (q->select[i].agg_cast)
            rbuf_printf(b, "::%s", q->select[i].agg_cast);
    }
}

void rest_query_dump(const rest_query *q, rbuf *b) {
    dump_select(q, b);
    rbuf_adds(b, " where=");
    if (q->where)
        dump_cond(q->where, b);
    else
        rbuf_adds(b, "-");
    rbuf_adds(b, " order=");
    if (!q->norder)
        rbuf_adds(b, "-");
    for (size_t i = 0; i < q->norder; i++) {
        static const char *const nn[] = {"", ".nullsfirst", ".nullslast"};
        if (i)
            rbuf_addc(b, ',');
        if (q->order[i].rel) {
            dump_str(b, q->order[i].rel);
            rbuf_addc(b, '(');
        }
        dump_str(b, q->order[i].column);
        if (q->order[i].rel)
            rbuf_addc(b, ')');
        rbuf_printf(b, ".%s%s", q->order[i].desc ? "desc" : "asc",
                    nn[q->order[i].nulls]);
    }
    rbuf_printf(b, " limit=%lld offset=%lld", (long long)q->limit,
                (long long)q->offset);
    if (q->has_range)
        rbuf_printf(b, " range=%lld-%lld", (long long)q->range_from,
                    (long long)q->range_to);
}
