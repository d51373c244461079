/* ffb-rest: the JSON request body (body.h). Pure. */
#include "body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

typedef struct pair {
    size_t key;
    rest_jval v;
} pair;

typedef struct bparse {
    rarena *arena;
    const rest_body_limits *lim;
    rest_err *err;
    int depth;     /* 0 outside, 1 in the top object or array, 2 in a row */
    int top_array; /* the top value is an array */
    int started;
    size_t pos;     /* keys seen in the current object */
    size_t cur_key; /* the key whose value comes next */
    /* keys */
    const char **keys;
    size_t *klen;
    size_t nkeys, capkeys, capklen;
    /* every pair of every row, and where each row starts */
    pair *pairs;
    size_t npairs, cappairs;
    size_t *rowstart;
    size_t nrows, caprows;
    int failed; /* err is set */
} bparse;

static int fail(bparse *p, const char *details) {
    if (!p->failed) {
        rest_err_set(p->err, 400, "PGRST102", details, "Empty or invalid json");
        p->failed = 1;
    }
    return 0;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void *n = realloc(*arr, nc * elem);
    if (!n)
        return -1;
    *arr = n;
    *cap = nc;
    return 0;
}

static int value(bparse *p, int kind, const char *s, size_t n) {
    if (p->depth == 0 || (p->depth == 1 && p->top_array))
        return fail(p, "expected an object or an array of objects");
    if (p->depth != 2)
        return fail(p, "nested objects and arrays are not supported as "
                       "values (Firebird has no JSON type)");
    if (grow((void **)&p->pairs, &p->cappairs, p->npairs + 1, sizeof(pair)))
        return fail(p, "out of memory");
    char *t = NULL;
    if (s) {
        t = rarena_strndup(p->arena, s, n);
        if (!t)
            return fail(p, "the body is too large");
    }
    pair *pr = &p->pairs[p->npairs++];
    pr->key = p->cur_key;
    pr->v.kind = kind;
    pr->v.text = t;
    pr->v.len = n;
    return 1;
}

static int on_null(void *ctx) { return value(ctx, REST_J_NULL, NULL, 0); }

static int on_bool(void *ctx, int b) {
    return b ? value(ctx, REST_J_TRUE, "true", 4)
             : value(ctx, REST_J_FALSE, "false", 5);
}

static int on_number(void *ctx, const char *s, size_t n) {
    return value(ctx, REST_J_NUMBER, s, n);
}

static int on_string(void *ctx, const unsigned char *s, size_t n) {
    return value(ctx, REST_J_STRING, (const char *)s, n);
}

static int begin_row(bparse *p) {
    if (p->nrows >= p->lim->max_rows)
        return fail(p, "too many objects in the array");
    if (grow((void **)&p->rowstart, &p->caprows, p->nrows + 1, sizeof(size_t)))
        return fail(p, "out of memory");
    p->rowstart[p->nrows++] = p->npairs;
    p->pos = 0;
    return 1;
}

static int on_start_map(void *ctx) {
    bparse *p = ctx;
    if (p->depth == 0) {
        p->started = 1;
        p->depth = 2;
        return begin_row(p);
    }
    if (p->depth == 1 && p->top_array) {
        p->depth = 2;
        return begin_row(p);
    }
    return fail(p, "nested objects and arrays are not supported as values "
                   "(Firebird has no JSON type)");
}

static int on_key(void *ctx, const unsigned char *k, size_t n) {
    bparse *p = ctx;
    const char *key = (const char *)k;
    size_t i = p->pos;
    /* objects usually repeat the keys in the same order */
    if (!(i < p->nkeys && p->klen[i] == n && memcmp(p->keys[i], key, n) == 0))
        for (i = 0; i < p->nkeys; i++)
            if (p->klen[i] == n && memcmp(p->keys[i], key, n) == 0)
                break;
    if (i == p->nkeys) {
        if (p->nkeys >= p->lim->max_keys)
            return fail(p, "too many distinct keys");
        if (grow((void **)&p->keys, &p->capkeys, p->nkeys + 1,
                 sizeof(char *)) ||
            grow((void **)&p->klen, &p->capklen, p->nkeys + 1, sizeof(size_t)))
            return fail(p, "out of memory");
        char *s = rarena_strndup(p->arena, key, n);
        if (!s)
            return fail(p, "the body is too large");
        p->keys[p->nkeys] = s;
        p->klen[p->nkeys] = n;
        p->nkeys++;
    }
    p->cur_key = i;
    p->pos++;
    return 1;
}

static int on_end_map(void *ctx) {
    bparse *p = ctx;
    p->depth = p->top_array ? 1 : 0;
    return 1;
}

static int on_start_array(void *ctx) {
    bparse *p = ctx;
    if (p->depth == 0 && !p->started) {
        p->started = 1;
        p->top_array = 1;
        p->depth = 1;
        return 1;
    }
    if (p->depth == 1)
        return fail(p, "expected an object or an array of objects");
    return fail(p, "nested objects and arrays are not supported as values "
                   "(Firebird has no JSON type)");
}

static int on_end_array(void *ctx) {
    bparse *p = ctx;
    p->depth = 0;
    return 1;
}

static const yajl_callbacks callbacks = {
    on_null,      on_bool, NULL,       NULL,           on_number,   on_string,
    on_start_map, on_key,  on_end_map, on_start_array, on_end_array};

int rest_parse_body(rarena *arena, const char *data, size_t len,
                    const rest_body_limits *lim, rest_body *out,
                    rest_err *err) {
    static const rest_body_limits deflim = REST_BODY_LIMITS_DEFAULT;
    bparse p;
    memset(&p, 0, sizeof p);
    memset(out, 0, sizeof *out);
    p.arena = arena;
    p.lim = lim ? lim : &deflim;
    p.err = err;
    int rc = -1;
    size_t i = 0;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' ||
                       data[i] == '\n'))
        i++;
    if (i == len) {
        fail(&p, "the request body is empty");
        goto out;
    }
    yajl_handle h = yajl_alloc(&callbacks, NULL, &p);
    if (!h) {
        fail(&p, "out of memory");
        goto out;
    }
    yajl_status st = yajl_parse(h, (const unsigned char *)data, len);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    if (st != yajl_status_ok && !p.failed) {
        unsigned char *m =
            yajl_get_error(h, 0, (const unsigned char *)data, len);
        char d[256];
        size_t ml = m ? strlen((const char *)m) : 0;
        while (ml && (m[ml - 1] == '\n' || m[ml - 1] == ' '))
            ml--;
        snprintf(d, sizeof d, "%.*s", (int)(ml > 200 ? 200 : ml),
                 m ? (const char *)m : "invalid JSON");
        if (m)
            yajl_free_error(h, m);
        fail(&p, d);
    }
    yajl_free(h);
    if (p.failed)
        goto out;
    /* dense rows: ABSENT (zeroed) where an object lacks a key */
    out->is_array = p.top_array;
    out->nkeys = p.nkeys;
    out->nrows = p.nrows;
    out->keys = rarena_alloc(arena, (p.nkeys + 1) * sizeof *out->keys);
    out->vals =
        rarena_alloc(arena, (p.nrows * p.nkeys + 1) * sizeof(rest_jval));
    if (!out->keys || !out->vals) {
        fail(&p, "the body is too large");
        goto out;
    }
    if (p.nkeys)
        memcpy(out->keys, p.keys, p.nkeys * sizeof *out->keys);
    for (size_t r = 0; r < p.nrows; r++) {
        size_t a = p.rowstart[r];
        size_t b = r + 1 < p.nrows ? p.rowstart[r + 1] : p.npairs;
        rest_jval *row = &out->vals[r * p.nkeys];
        size_t have = 0;
        for (size_t j = a; j < b; j++) {
            if (row[p.pairs[j].key].kind == REST_J_ABSENT)
                have++;
            row[p.pairs[j].key] = p.pairs[j].v; /* the last one wins */
        }
        if (have != p.nkeys)
            out->keys_differ = 1;
    }
    rc = 0;
out:
    free(p.keys);
    free(p.klen);
    free(p.pairs);
    free(p.rowstart);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    return rc;
}

int rest_parse_form(rarena *arena, const char *data, size_t len,
                    const rest_body_limits *lim, rest_body *out,
                    rest_err *err) {
    static const rest_body_limits deflim = REST_BODY_LIMITS_DEFAULT;
    if (!lim)
        lim = &deflim;
    memset(out, 0, sizeof *out);
    size_t pairs = 1;
    for (size_t i = 0; i < len; i++)
        pairs += data[i] == '&';
    out->keys = rarena_alloc(arena, (pairs + 1) * sizeof *out->keys);
    out->vals = rarena_alloc(arena, (pairs + 1) * sizeof *out->vals);
    if (!out->keys || !out->vals)
        goto nomem;
    out->nrows = 1;
    size_t i = 0;
    while (i < len) {
        size_t st = i;
        while (i < len && data[i] != '&')
            i++;
        const char *eq = memchr(data + st, '=', i - st);
        size_t kl = eq ? (size_t)(eq - data - st) : i - st;
        if (kl || eq) {
            size_t kn, vn = 0;
            char *k = rest_url_decode(arena, data + st, kl, &kn);
            char *v = eq ? rest_url_decode(arena, eq + 1,
                                           (size_t)(data + i - eq - 1), &vn)
                         : rarena_strndup(arena, "", 0);
            if (!k || !v)
                goto nomem;
            size_t x = 0;
            while (x < out->nkeys && strcmp(out->keys[x], k) != 0)
                x++;
            if (x == out->nkeys) {
                if (out->nkeys >= lim->max_keys) {
                    rest_err_set(err, 400, "PGRST102", "too many distinct keys",
                                 "Empty or invalid json");
                    memset(out, 0, sizeof *out);
                    return -1;
                }
                out->keys[out->nkeys++] = k;
            }
            /* the last one wins, as in a JSON object */
            out->vals[x].kind = REST_J_STRING;
            out->vals[x].text = v;
            out->vals[x].len = vn;
        }
        i++;
    }
    return 0;
nomem:
    memset(out, 0, sizeof *out);
    rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
    return -1;
}

void rest_dump_text(rbuf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            rbuf_adds(out, "\\n");
        else if (s[i] == '\r')
            rbuf_adds(out, "\\r");
        else if (s[i] == '\0')
            rbuf_adds(out, "\\0");
        else
            rbuf_addc(out, s[i]);
    }
}

void rest_body_dump(const rest_body *b, rbuf *out) {
    static const char *const kinds[] = {"-", "null", "s", "n", "true", "false"};
    rbuf_printf(out, "%s %zu rows, keys:", b->is_array ? "array" : "object",
                b->nrows);
    for (size_t k = 0; k < b->nkeys; k++)
        rbuf_printf(out, " %s", b->keys[k]);
    if (b->keys_differ)
        rbuf_adds(out, " (keys differ)");
    rbuf_addc(out, '\n');
    for (size_t r = 0; r < b->nrows; r++) {
        for (size_t k = 0; k < b->nkeys; k++) {
            const rest_jval *v = rest_body_val(b, r, k);
            rbuf_adds(out, k ? " " : "  ");
            rbuf_adds(out, kinds[v->kind]);
            if (v->kind == REST_J_STRING || v->kind == REST_J_NUMBER) {
                rbuf_addc(out, ':');
                rest_dump_text(out, v->text, v->len);
            }
        }
        rbuf_addc(out, '\n');
    }
}
