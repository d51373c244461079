/* ffb-rest: the rows of every embed level and the nested JSON of the
   answer (embed.h): levels are joined by key in memory. */
#include <string.h>

#include "embed.h"
#include "json.h"

/* ---- rows -----------------------------------------------------------------
 */

/* The JSON texts of columns [from, from + n) joined by '\x1f'; NULL when
   one is NULL (it matches nothing). */
static const char *key_text(rest_eplan *ep, ffb_stmt *st, size_t from, size_t n,
                            rbuf *tmp) {
    rbuf_reset(tmp);
    for (size_t i = 0; i < n; i++) {
        ffb_column_info ci;
        unsigned c = (unsigned)(from + i);
        if (ffb_stmt_is_null(st, c) != 0 ||
            ffb_stmt_column_info(st, c, &ci, sizeof ci) < 0)
            return NULL;
        if (i)
            rbuf_addc(tmp, '\x1f');
        if (json_column(tmp, st, c, &ci) < 0)
            return NULL;
    }
    if (tmp->failed)
        return NULL;
    return rarena_strndup(&ep->rows, tmp->p ? tmp->p : "", tmp->len);
}

int rest_embed_take(rest_eplan *ep, rest_enode *n, ffb_stmt *st,
                    int64_t probe) {
    const rest_plan *pl = &n->plan;
    rbuf row, tmp;
    int rc;
    rbuf_init(&row, 16u << 20);
    rbuf_init(&tmp, 1u << 20);
    for (;;) {
        rc = ffb_stmt_fetch(st);
        if (rc != 1)
            break;
        if (probe > 0 && (int64_t)n->nrows == probe) {
            rc = 2;
            goto out;
        }
        if (n->nrows == n->caprows) {
            size_t nc = n->caprows ? n->caprows * 2 : 64;
            rest_erow *nr = rarena_alloc(&ep->rows, nc * sizeof *nr);
            if (!nr) {
                rc = FFB_E_NOMEM;
                goto out;
            }
            if (n->nrows)
                memcpy(nr, n->rows, n->nrows * sizeof *nr);
            n->rows = nr;
            n->caprows = nc;
        }
        rest_erow *r = &n->rows[n->nrows];
        rbuf_reset(&row);
        for (unsigned c = 0; c < pl->nkeys; c++) {
            ffb_column_info ci;
            if (ffb_stmt_column_info(st, c, &ci, sizeof ci) < 0) {
                rc = FFB_E_INVAL;
                goto out;
            }
            if (c)
                rbuf_addc(&row, ',');
            json_string(&row, pl->keys[c], strlen(pl->keys[c]));
            rbuf_addc(&row, ':');
            int jr =
                pl->tzcol && pl->tzcol[c] >= 0
                    ? json_tz_column(&row, st, c, &ci, (unsigned)pl->tzcol[c])
                    : json_column(&row, st, c, &ci);
            if (jr < 0) {
                rc = jr;
                goto out;
            }
        }
        r->json = row.failed
                      ? NULL
                      : rarena_strndup(&ep->rows, row.p ? row.p : "", row.len);
        if (!r->json) {
            rc = FFB_E_NOMEM;
            goto out;
        }
        if (n->parent)
            r->mkey = key_text(ep, st, n->midx, n->nk, &tmp);
        if (n->nkids) {
            r->pkeys = rarena_alloc(&ep->rows, n->nkids * sizeof *r->pkeys);
            if (!r->pkeys) {
                rc = FFB_E_NOMEM;
                goto out;
            }
            for (size_t k = 0; k < n->nkids; k++)
                r->pkeys[k] =
                    key_text(ep, st, n->kids[k]->pidx, n->kids[k]->nk, &tmp);
            if (ep->per_level) {
                r->praw = rarena_alloc(&ep->rows, n->nkids * sizeof *r->praw);
                if (!r->praw) {
                    rc = FFB_E_NOMEM;
                    goto out;
                }
                for (size_t k = 0; k < n->nkids; k++) {
                    const char *v;
                    size_t vn;
                    unsigned c = (unsigned)n->kids[k]->pidx;
                    if (n->kids[k]->nk == 1 && ffb_stmt_is_null(st, c) == 0 &&
                        ffb_stmt_get_text(st, c, &v, &vn) == 0)
                        r->praw[k] = rarena_strndup(&ep->rows, v, vn);
                }
            }
        }
        n->nrows++;
    }
    if (rc == 0)
        rc = 1;
out:
    rbuf_free(&row);
    rbuf_free(&tmp);
    return rc;
}

static uint64_t fnv(const char *s);

long rest_embed_keys(rest_eplan *ep, const rest_enode *k, const char ***out) {
    static const size_t buckets[] = {1,  2,   4,   8,   16,  32,
                                     64, 128, 256, 512, 1000};
    const rest_enode *p = k->parent;
    size_t cap = 16, n = 0;
    while (cap < 2 * p->nrows)
        cap *= 2;
    const char **seen = rarena_alloc(&ep->rows, cap * sizeof *seen);
    const char **keys = rarena_alloc(&ep->rows, 1000 * sizeof *keys);
    if (!seen || !keys)
        return -1;
    for (size_t i = 0; i < p->nrows; i++) {
        const char *v = p->rows[i].praw ? p->rows[i].praw[k->index] : NULL;
        if (!v)
            continue;
        size_t s = fnv(v) & (cap - 1);
        while (seen[s] && strcmp(seen[s], v) != 0)
            s = (s + 1) & (cap - 1);
        if (seen[s])
            continue;
        if (n == 1000)
            return -1;
        seen[s] = v;
        keys[n++] = v;
    }
    if (n == 0)
        return 0;
    size_t b = 0;
    while (buckets[b] < n)
        b++;
    for (size_t i = n; i < buckets[b]; i++)
        keys[i] = keys[n - 1];
    *out = keys;
    return (long)buckets[b];
}

/* ---- the body -------------------------------------------------------------
 */

static uint64_t fnv(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Rows of a level chained by key: hash[slot] = first + 1, next[i]. */
typedef struct index {
    size_t *head, *tail, *next;
    size_t cap;
} index_t;

static int build_index(rest_eplan *ep, rest_enode *n, index_t *ix) {
    size_t cap = 16;
    while (cap < 2 * n->nrows)
        cap *= 2;
    ix->cap = cap;
    ix->head = rarena_alloc(&ep->rows, cap * sizeof *ix->head);
    ix->tail = rarena_alloc(&ep->rows, cap * sizeof *ix->tail);
    ix->next = rarena_alloc(&ep->rows, (n->nrows + 1) * sizeof *ix->next);
    if (!ix->head || !ix->tail || !ix->next)
        return -1;
    for (size_t i = 0; i < n->nrows; i++) {
        const char *k = n->rows[i].mkey;
        if (!k)
            continue;
        size_t s = fnv(k) & (cap - 1);
        while (ix->head[s] && strcmp(n->rows[ix->head[s] - 1].mkey, k) != 0)
            s = (s + 1) & (cap - 1);
        if (!ix->head[s])
            ix->head[s] = i + 1;
        else
            ix->next[ix->tail[s] - 1] = i + 1;
        ix->tail[s] = i + 1;
    }
    return 0;
}

/* The first row (+1) of key `k`, 0 for none. */
static size_t lookup(const rest_enode *n, const index_t *ix, const char *k) {
    if (!k)
        return 0;
    size_t s = fnv(k) & (ix->cap - 1);
    while (ix->head[s]) {
        if (strcmp(n->rows[ix->head[s] - 1].mkey, k) == 0)
            return ix->head[s];
        s = (s + 1) & (ix->cap - 1);
    }
    return 0;
}

typedef struct writer {
    rest_eplan *ep;
    index_t *ix; /* per level, by the node's position in ep->levels */
} writer;

static size_t level_of(const rest_eplan *ep, const rest_enode *n) {
    for (size_t i = 0; i < ep->nlevels; i++)
        if (ep->levels[i] == n)
            return i;
    return 0;
}

static void fields(writer *w, const rest_enode *n, const rest_erow *r, rbuf *b,
                   int *sep);

static void object(writer *w, const rest_enode *n, const rest_erow *r,
                   rbuf *b) {
    int sep = 0;
    rbuf_addc(b, '{');
    fields(w, n, r, b, &sep);
    rbuf_addc(b, '}');
}

static void fields(writer *w, const rest_enode *n, const rest_erow *r, rbuf *b,
                   int *sep) {
    if (r->json[0]) {
        if (*sep)
            rbuf_addc(b, ',');
        rbuf_adds(b, r->json);
        *sep = 1;
    }
    for (size_t i = 0; i < n->nkids; i++) {
        const rest_enode *k = n->kids[i];
        const index_t *ix = &w->ix[level_of(w->ep, k)];
        size_t at = lookup(k, ix, r->pkeys[i]);
        if (k->it->embed->spread) {
            if (at) {
                fields(w, k, &k->rows[at - 1], b, sep);
                continue;
            }
            for (size_t c = 0; c < k->plan.nkeys; c++) {
                if (*sep)
                    rbuf_addc(b, ',');
                *sep = 1;
                json_string(b, k->plan.keys[c], strlen(k->plan.keys[c]));
                rbuf_adds(b, ":null");
            }
            continue;
        }
        if (*sep)
            rbuf_addc(b, ',');
        *sep = 1;
        json_string(b, k->key, strlen(k->key));
        rbuf_addc(b, ':');
        if (k->kind == REST_REL_TO_ONE) {
            if (at)
                object(w, k, &k->rows[at - 1], b);
            else
                rbuf_adds(b, "null");
            continue;
        }
        rbuf_addc(b, '[');
        int64_t skip = k->q->offset, left = k->q->limit, nout = 0;
        for (; at && left != 0; at = ix->next[at - 1]) {
            if (skip > 0) {
                skip--;
                continue;
            }
            if (nout++)
                rbuf_addc(b, ',');
            object(w, k, &k->rows[at - 1], b);
            if (left > 0)
                left--;
        }
        rbuf_addc(b, ']');
    }
}

int rest_embed_write(rest_eplan *ep, rbuf *body) {
    writer w = {ep, NULL};
    w.ix = rarena_alloc(&ep->rows, (ep->nlevels + 1) * sizeof *w.ix);
    if (!w.ix)
        return FFB_E_NOMEM;
    for (size_t i = 0; i < ep->nlevels; i++)
        if (build_index(ep, ep->levels[i], &w.ix[i]) < 0)
            return FFB_E_NOMEM;
    rbuf_addc(body, '[');
    for (size_t i = 0; i < ep->root->nrows; i++) {
        if (i)
            rbuf_addc(body, ',');
        object(&w, ep->root, &ep->root->rows[i], body);
    }
    rbuf_addc(body, ']');
    return body->failed ? FFB_E_NOMEM : 0;
}
