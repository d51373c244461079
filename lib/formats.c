/*
 * Shared format memory (ffb_formats): the describes of statements prepared
 * through ffb_conn_prepare(), keyed by SQL text and by what shapes a
 * describe, shared by every connection given the object, so that a text
 * prepared once on any of them rides its prepare with its first execute
 * on each of the others (lib/cache.c takes an entry as a remembered one;
 * lib/stmt.c checks the describe that comes back and stores it again when
 * it differs).
 *
 * One mutex guards the table; it is held to copy an entry in or out and
 * never across a call into a connection. Entries live in libc memory (the
 * object outlives any one connection and its allocator); a connection
 * gets its copy in its own allocator. Least recently used entries go
 * first when `max_bytes` would be exceeded.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/internal.h"

#define DEFAULT_BYTES ((size_t)1 << 20)
#define MAX_VARS_KEPT 40 /* a describe that fits one answer (lib/cache.c) */

typedef struct fmt_entry {
    uint64_t key; /* hash of the context and the text */
    uint64_t ctx;
    size_t bytes;
    ffb__memo m; /* m.tick: last use */
} fmt_entry;

struct ffb_formats {
    pthread_mutex_t mu;
    int refs; /* __atomic */
    size_t max_bytes, bytes;
    fmt_entry *e;
    size_t n, cap;
    uint64_t tick;
    ffb_formats_stats st;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) {
    /* the terminating NUL too: "ab"+"c" is not "a"+"bc" */
    return fnv(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

int ffb_formats_new(size_t max_bytes, ffb_formats **out) {
    if (!out)
        return FFB_E_INVAL;
    *out = NULL;
    ffb_formats *f = calloc(1, sizeof(*f));
    if (!f)
        return FFB_E_NOMEM;
    if (pthread_mutex_init(&f->mu, NULL) != 0) {
        free(f);
        return FFB_E_NOMEM;
    }
    f->refs = 1;
    f->max_bytes = max_bytes ? max_bytes : DEFAULT_BYTES;
    *out = f;
    return 0;
}

ffb_formats *ffb_formats_ref(ffb_formats *f) {
    if (f)
        __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
    return f;
}

static void entry_free(fmt_entry *x) {
    free(x->m.sql);
    ffb__meta_free_a(NULL, &x->m.in);
    ffb__meta_free_a(NULL, &x->m.out);
    memset(x, 0, sizeof(*x));
}

void ffb_formats_unref(ffb_formats *f) {
    if (!f || __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    for (size_t i = 0; i < f->n; i++)
        entry_free(&f->e[i]);
    free(f->e);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

int ffb_formats_stats_get(ffb_formats *f, ffb_formats_stats *out,
                          size_t out_size) {
    if (!f || !out)
        return FFB_E_INVAL;
    pthread_mutex_lock(&f->mu);
    ffb_formats_stats st = f->st;
    st.entries = f->n;
    st.bytes = f->bytes;
    pthread_mutex_unlock(&f->mu);
    memcpy(out, &st, out_size < sizeof(st) ? out_size : sizeof(st));
    return 0;
}

void ffb__formats_attach(ffb_conn *conn, ffb_formats *f) {
    conn->formats = ffb_formats_ref(f);
    /* The database, where it is, and what changes the describe of the
       same text there: the dialect and the connection character set
       (text lengths are in its bytes). User and role change what may
       be prepared, not the formats. */
    uint64_t h = 14695981039346656037ull;
    h = fnv_str(h, conn->host);
    h = fnv_str(h, conn->port);
    h = fnv_str(h, conn->database);
    h = fnv_str(h, conn->charset);
    h = fnv(h, &conn->dialect, sizeof(conn->dialect));
    conn->formats_ctx = h;
}

void ffb__formats_detach(ffb_conn *conn) {
    ffb_formats_unref(conn->formats);
    conn->formats = NULL;
}

static uint64_t key_of(uint64_t ctx, const char *sql, size_t len) {
    return fnv(ctx, sql, len);
}

static fmt_entry *find(ffb_formats *f, uint64_t key, uint64_t ctx,
                       const char *sql, size_t len) {
    for (size_t i = 0; i < f->n; i++) {
        fmt_entry *x = &f->e[i];
        if (x->key == key && x->ctx == ctx && x->m.len == len &&
            memcmp(x->m.sql, sql, len) == 0)
            return x;
    }
    return NULL;
}

void ffb__memo_free(ffb_conn *conn, ffb__memo *m) {
    ffb__free(conn->alloc, m->sql);
    ffb__meta_free(conn, &m->in);
    ffb__meta_free(conn, &m->out);
    memset(m, 0, sizeof(*m));
}

int ffb__formats_get(ffb_conn *conn, const char *sql, size_t len,
                     ffb__memo *out) {
    ffb_formats *f = conn->formats;
    memset(out, 0, sizeof(*out));
    if (!f)
        return 0;
    uint64_t key = key_of(conn->formats_ctx, sql, len);
    int found = 0;
    pthread_mutex_lock(&f->mu);
    fmt_entry *x = find(f, key, conn->formats_ctx, sql, len);
    if (x) {
        out->sql = ffb__malloc(conn->alloc, len + 1);
        if (out->sql && ffb__meta_copy_a(conn->alloc, &out->in, &x->m.in) == 0 &&
            ffb__meta_copy_a(conn->alloc, &out->out, &x->m.out) == 0) {
            memcpy(out->sql, sql, len);
            out->sql[len] = '\0';
            out->len = len;
            out->stmt_type = x->m.stmt_type;
            out->stmt_flags = x->m.stmt_flags;
            out->fetch_count = x->m.fetch_count;
            x->m.tick = ++f->tick;
            found = 1;
        }
        f->st.hits += found;
    } else {
        f->st.misses++;
    }
    pthread_mutex_unlock(&f->mu);
    if (!found)
        ffb__memo_free(conn, out); /* out of memory: the normal way */
    return found;
}

static size_t meta_bytes(const ffb__meta *m) {
    size_t b = m->blr_len + m->n * (sizeof(ffb__col) + sizeof(ffbp_item));
    for (size_t i = 0; i < m->n; i++) {
        const ffb__col *c = &m->cols[i];
        b += strlen(c->field) + strlen(c->relation) + strlen(c->owner) +
             strlen(c->alias) + strlen(c->relation_alias) + 5;
    }
    return b;
}

/* Drop the least recently used entry (keeping the array dense). */
static void evict_one(ffb_formats *f) {
    size_t v = 0;
    for (size_t i = 1; i < f->n; i++)
        if (f->e[i].m.tick < f->e[v].m.tick)
            v = i;
    f->bytes -= f->e[v].bytes;
    entry_free(&f->e[v]);
    f->e[v] = f->e[--f->n];
    f->st.evicted++;
}

void ffb__formats_put(ffb_conn *conn, const ffb_stmt *stmt) {
    ffb_formats *f = conn->formats;
    if (!f || !stmt->prepared || !stmt->sql ||
        stmt->in.n + stmt->out.n > MAX_VARS_KEPT)
        return;
    /* Built outside the lock, in libc memory. */
    fmt_entry nx;
    memset(&nx, 0, sizeof(nx));
    size_t len = stmt->sql_len;
    nx.m.sql = malloc(len + 1);
    if (!nx.m.sql || ffb__meta_copy_a(NULL, &nx.m.in, &stmt->in) < 0 ||
        ffb__meta_copy_a(NULL, &nx.m.out, &stmt->out) < 0) {
        entry_free(&nx);
        return; /* not shared, works the same */
    }
    memcpy(nx.m.sql, stmt->sql, len);
    nx.m.sql[len] = '\0';
    nx.m.len = len;
    nx.m.stmt_type = stmt->stmt_type;
    nx.m.stmt_flags = stmt->stmt_flags;
    nx.m.fetch_count = stmt->fetch_count;
    nx.ctx = conn->formats_ctx;
    nx.key = key_of(nx.ctx, stmt->sql, len);
    nx.bytes = sizeof(nx) + len + 1 + meta_bytes(&nx.m.in) +
               meta_bytes(&nx.m.out);

    fmt_entry old;
    memset(&old, 0, sizeof(old));
    pthread_mutex_lock(&f->mu);
    if (nx.bytes > f->max_bytes) {
        pthread_mutex_unlock(&f->mu);
        entry_free(&nx);
        return;
    }
    fmt_entry *x = find(f, nx.key, nx.ctx, nx.m.sql, len);
    if (x) {
        old = *x; /* freed outside the lock */
        f->bytes -= old.bytes;
        *x = nx;
    } else {
        while (f->n && f->bytes + nx.bytes > f->max_bytes)
            evict_one(f);
        if (f->n == f->cap) {
            size_t cap = f->cap ? f->cap * 2 : 16;
            fmt_entry *e = realloc(f->e, cap * sizeof(*e));
            if (!e) {
                pthread_mutex_unlock(&f->mu);
                entry_free(&nx);
                return;
            }
            f->e = e;
            f->cap = cap;
        }
        x = &f->e[f->n++];
        *x = nx;
    }
    x->m.tick = ++f->tick;
    f->bytes += nx.bytes;
    f->st.stored++;
    pthread_mutex_unlock(&f->mu);
    entry_free(&old);
}
