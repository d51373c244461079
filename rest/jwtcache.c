/* ffb-rest: the JWT cache (jwtcache.h). */
#include "jwtcache.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#define NIL ((size_t)-1)

typedef struct centry {
    char *token;
    size_t len;
    uint64_t hash;
    char *role; /* NULL: none */
    char *claims;
    size_t claims_len;
    int has_exp;
    int64_t exp;
    size_t next;        /* in its bucket's chain */
    size_t prev, newer; /* the LRU list: prev is older, newer is newer */
} centry;

struct rest_jwt_cache {
    centry *e;
    size_t max, n;
    size_t *bucket;  /* entry index, NIL: empty */
    size_t nbuckets; /* a power of 2 */
    size_t oldest, newest;
    uint64_t seed;
    const rest_jwt_key *key; /* what the entries were verified with */
    rest_jwt_cache_stats st;
};

rest_jwt_cache *rest_jwt_cache_new(size_t max) {
    if (max == 0)
        return NULL;
    rest_jwt_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->max = max;
    c->nbuckets = 16;
    while (c->nbuckets < max * 2)
        c->nbuckets *= 2;
    c->e = calloc(max, sizeof *c->e);
    c->bucket = malloc(c->nbuckets * sizeof *c->bucket);
    if (!c->e || !c->bucket) {
        rest_jwt_cache_free(c);
        return NULL;
    }
    for (size_t i = 0; i < c->nbuckets; i++)
        c->bucket[i] = NIL;
    c->oldest = c->newest = NIL;
    if (RAND_bytes((unsigned char *)&c->seed, sizeof c->seed) != 1)
        c->seed = (uint64_t)(uintptr_t)c ^ 0x9e3779b97f4a7c15u;
    return c;
}

static void entry_clear(centry *x) {
    free(x->token);
    free(x->role);
    free(x->claims);
    x->token = x->role = x->claims = NULL;
}

void rest_jwt_cache_free(rest_jwt_cache *c) {
    if (!c)
        return;
    for (size_t i = 0; c->e && i < c->n; i++)
        entry_clear(&c->e[i]);
    free(c->e);
    free(c->bucket);
    free(c);
}

/* FNV-1a from the seed, then a final mix: the bucket only. */
static uint64_t hash(const rest_jwt_cache *c, const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325u ^ c->seed;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3u;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 33;
    return h;
}

static void lru_unlink(rest_jwt_cache *c, size_t i) {
    centry *x = &c->e[i];
    if (x->prev != NIL)
        c->e[x->prev].newer = x->newer;
    else
        c->oldest = x->newer;
    if (x->newer != NIL)
        c->e[x->newer].prev = x->prev;
    else
        c->newest = x->prev;
}

static void lru_push(rest_jwt_cache *c, size_t i) {
    centry *x = &c->e[i];
    x->prev = c->newest;
    x->newer = NIL;
    if (c->newest != NIL)
        c->e[c->newest].newer = i;
    else
        c->oldest = i;
    c->newest = i;
}

static void bucket_unlink(rest_jwt_cache *c, size_t i) {
    size_t *p = &c->bucket[c->e[i].hash & (c->nbuckets - 1)];
    while (*p != i)
        p = &c->e[*p].next;
    *p = c->e[i].next;
}

/* Take entry `i` out of the cache: the last entry moves into its slot. */
static void drop(rest_jwt_cache *c, size_t i) {
    bucket_unlink(c, i);
    lru_unlink(c, i);
    entry_clear(&c->e[i]);
    size_t last = --c->n;
    if (i == last)
        return;
    /* re-point whatever names `last` at `i` */
    size_t *p = &c->bucket[c->e[last].hash & (c->nbuckets - 1)];
    while (*p != last)
        p = &c->e[*p].next;
    *p = i;
    centry *m = &c->e[last];
    if (m->prev != NIL)
        c->e[m->prev].newer = i;
    else
        c->oldest = i;
    if (m->newer != NIL)
        c->e[m->newer].prev = i;
    else
        c->newest = i;
    c->e[i] = *m;
    memset(m, 0, sizeof *m);
}

static size_t find(rest_jwt_cache *c, const char *tok, size_t len, uint64_t h) {
    for (size_t i = c->bucket[h & (c->nbuckets - 1)]; i != NIL;
         i = c->e[i].next) {
        centry *x = &c->e[i];
        /* equal lengths only, then a comparison whose time does not
           depend on where the bytes differ */
        if (x->hash == h && x->len == len &&
            CRYPTO_memcmp(x->token, tok, len) == 0)
            return i;
    }
    return NIL;
}

static char *dup(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static void put(rest_jwt_cache *c, const char *tok, size_t len, uint64_t h,
                const rest_jwt_claims *cl) {
    if (c->n == c->max) {
        drop(c, c->oldest);
        c->st.evicted++;
    }
    size_t i = c->n;
    centry *x = &c->e[i];
    memset(x, 0, sizeof *x);
    x->token = dup(tok, len);
    x->role = cl->role ? dup(cl->role, strlen(cl->role)) : NULL;
    x->claims = dup(cl->claims ? cl->claims : "", cl->claims_len);
    if (!x->token || (cl->role && !x->role) || !x->claims) {
        entry_clear(x);
        return; /* no memory: not cached, the answer stands */
    }
    x->len = len;
    x->hash = h;
    x->claims_len = cl->claims_len;
    x->has_exp = cl->has_exp;
    x->exp = cl->exp;
    size_t *b = &c->bucket[h & (c->nbuckets - 1)];
    x->next = *b;
    *b = i;
    c->n++;
    lru_push(c, i);
}

int rest_jwt_verify_cached(rest_jwt_cache *c, const rest_jwt_key *k,
                           const char *tok, size_t len, int64_t now, rarena *a,
                           rest_jwt_claims *out, rest_err *err) {
    if (!c)
        return rest_jwt_verify(k, tok, len, now, a, out, err);
    if (c->key != k) {
        /* another key (or jwt-aud, role path): nothing cached holds */
        while (c->n)
            drop(c, c->n - 1);
        c->key = k;
    }
    uint64_t h = hash(c, tok, len);
    size_t i = find(c, tok, len, h);
    if (i != NIL) {
        centry *x = &c->e[i];
        if (x->has_exp && now - REST_JWT_SKEW > x->exp) {
            /* expired since: verified again, which says so */
            drop(c, i);
            c->st.expired++;
        } else {
            memset(out, 0, sizeof *out);
            out->role =
                x->role ? rarena_strndup(a, x->role, strlen(x->role)) : NULL;
            out->claims = rarena_strndup(a, x->claims, x->claims_len);
            if ((x->role && !out->role) || !out->claims) {
                rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
                return -1;
            }
            out->claims_len = x->claims_len;
            out->has_exp = x->has_exp;
            out->exp = x->exp;
            c->st.hits++;
            lru_unlink(c, i);
            lru_push(c, i);
            return 0;
        }
    }
    c->st.misses++;
    int rc = rest_jwt_verify(k, tok, len, now, a, out, err);
    if (rc == 0)
        put(c, tok, len, h, out);
    return rc;
}

void rest_jwt_cache_stats_get(const rest_jwt_cache *c,
                              rest_jwt_cache_stats *s) {
    memset(s, 0, sizeof *s);
    if (!c)
        return;
    *s = c->st;
    s->entries = c->n;
}
