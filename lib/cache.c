/*
 * The statement cache of ffb_conn_prepare(): prepared statements keyed by
 * SQL text, least recently used evicted first, emptied when DDL runs. The
 * metadata of evicted statements is remembered (four times as many entries)
 * so that preparing the same text again can ride with its first execute on
 * a spare handle: one round trip for prepare + execute + fetch. A text
 * neither cached nor remembered here is looked up in the connection's
 * shared format memory (lib/formats.c), which other connections fill.
 */
#include <string.h>

#include "lib/internal.h"

#define memo_free ffb__memo_free /* lib/formats.c */

static ffb__memo *memo_find(ffb_conn *conn, const char *sql, size_t len) {
    for (size_t i = 0; i < conn->memo_n; i++)
        if (conn->memo[i].len == len && memcmp(conn->memo[i].sql, sql, len) == 0)
            return &conn->memo[i];
    return NULL;
}

/* Remember the formats of a prepared statement leaving the cache. */
static void memo_add(ffb_conn *conn, const ffb_stmt *stmt) {
    size_t cap = (size_t)conn->cache_size * 4;
    if (!stmt->prepared || !stmt->sql || cap == 0 ||
        stmt->in.n + stmt->out.n > 40 /* a describe that fits one answer */)
        return;
    ffb__memo *m = memo_find(conn, stmt->sql, stmt->sql_len);
    if (m) {
        memo_free(conn, m);
    } else if (conn->memo_n < cap) {
        if (!conn->memo) {
            conn->memo = ffb__malloc(conn->alloc, cap * sizeof(*conn->memo));
            if (!conn->memo)
                return;
            memset(conn->memo, 0, cap * sizeof(*conn->memo));
        }
        m = &conn->memo[conn->memo_n++];
    } else {
        m = &conn->memo[0];
        for (size_t i = 1; i < conn->memo_n; i++)
            if (conn->memo[i].tick < m->tick)
                m = &conn->memo[i];
        memo_free(conn, m);
    }
    m->sql = ffb__malloc(conn->alloc, stmt->sql_len + 1);
    if (!m->sql)
        return;
    memcpy(m->sql, stmt->sql, stmt->sql_len + 1);
    m->len = stmt->sql_len;
    m->stmt_type = stmt->stmt_type;
    m->stmt_flags = stmt->stmt_flags;
    m->fetch_count = stmt->fetch_count;
    m->tick = ++conn->cache_tick;
    if (ffb__meta_copy(conn, &m->in, &stmt->in) < 0 ||
        ffb__meta_copy(conn, &m->out, &stmt->out) < 0) {
        memo_free(conn, m);
        ffb__conn_error_clear(conn);
    }
}

static int entry_busy(const ffb__cache_entry *e);

static void entry_drop(ffb_conn *conn, ffb__cache_entry *e, int remember) {
    ffb_stmt *s = e->stmt;
    if (remember)
        memo_add(conn, s);
    s->cached = NULL;
    ffb_stmt_free(s);
    /* Keep the array dense. */
    size_t i = (size_t)(e - conn->cache);
    conn->cache[i] = conn->cache[--conn->cache_n];
    for (size_t k = 0; k < conn->cache_n; k++)
        conn->cache[k].stmt->cached = &conn->cache[k];
}

int ffb__cache_release(ffb_stmt *stmt) {
    ffb__cache_entry *e = stmt->cached;
    ffb_conn *conn = stmt->conn;
    if (!e->in_use)
        return 1;
    e->in_use = 0;
    if (e->stale || !stmt->prepared || conn->state != FFB__ST_READY) {
        /* Stale, or its queued prepare failed: not kept. */
        entry_drop(conn, e, 0);
        return 1;
    }
    ffb__stmt_close_cursor(stmt, 1);
    ffb_stmt_clear_bindings(stmt);
    /* What one use set for its executions is not the next user's. */
    stmt->scroll_want = 0;
    stmt->timeout_ms = 0;
    e->tick = ++conn->cache_tick;
    e->idle_since = ffb_now_ms();
    return 1;
}

void ffb__cache_invalidate(ffb_conn *conn) {
    ffb__array_cache_clear(conn); /* array descriptors may have changed too */
    for (size_t i = 0; i < conn->cache_n;) {
        ffb__cache_entry *e = &conn->cache[i];
        if (e->in_use) {
            e->stale = 1;
            i++;
        } else {
            entry_drop(conn, e, 0);
        }
    }
    for (size_t i = 0; i < conn->memo_n; i++)
        memo_free(conn, &conn->memo[i]);
    conn->memo_n = 0;
}

int ffb_conn_cache_trim(ffb_conn *conn, int64_t idle_ms) {
    if (!conn || idle_ms < 0)
        return FFB_E_INVAL;
    int64_t now = ffb_now_ms();
    int n = 0;
    for (size_t i = 0; i < conn->cache_n;) {
        ffb__cache_entry *e = &conn->cache[i];
        if (!entry_busy(e) && now - e->idle_since >= idle_ms) {
            /* freed as ffb_stmt_free does (the drop rides with the next
               request), its formats remembered as an eviction's */
            entry_drop(conn, e, !e->stale);
            n++;
        } else {
            i++;
        }
    }
    return n;
}

void ffb__cache_free_all(ffb_conn *conn) {
    while (conn->cache_n) {
        ffb__cache_entry *e = &conn->cache[0];
        e->in_use = 0;
        entry_drop(conn, e, 0);
    }
    ffb__free(conn->alloc, conn->cache);
    conn->cache = NULL;
    for (size_t i = 0; i < conn->memo_n; i++)
        memo_free(conn, &conn->memo[i]);
    ffb__free(conn->alloc, conn->memo);
    conn->memo = NULL;
    conn->memo_n = 0;
}

/* Checked out, or given back while its execution is still held or not
   answered (the next execution would be refused until then). */
static int entry_busy(const ffb__cache_entry *e) {
    return e->in_use || e->stmt->exec_held || e->stmt->exec_inflight;
}

int ffb__cache_checkout(ffb_conn *conn, ffb_tx *tx, const char *sql,
                        size_t len, ffb_stmt **out) {
    for (size_t i = 0; i < conn->cache_n; i++) {
        ffb__cache_entry *e = &conn->cache[i];
        ffb_stmt *s = e->stmt;
        if (!entry_busy(e) && !e->stale && s->prepared && s->sql_len == len &&
            memcmp(s->sql, sql, len) == 0) {
            e->in_use = 1;
            e->tick = ++conn->cache_tick;
            ffb__conn_error_clear(conn);
            *out = s;
            return FFB__CACHE_HIT;
        }
    }
    int rc = ffb__prepare_tx_check(conn, tx);
    if (rc < 0)
        return rc; /* before the lazy path, which sends nothing now */
    ffb_stmt *s;
    if ((rc = ffb_stmt_new(conn, &s)) < 0)
        return rc;
    const ffb__memo *m = memo_find(conn, sql, len);
    ffb__memo busy;
    if (!m) {
        /* The text is cached but in use (a window of pipelined executions
           of one text): its formats serve as remembered ones, so this
           checkout's prepare (on a spare handle, or on one allocated in
           the same write) rides with its execute too. */
        for (size_t i = 0; i < conn->cache_n && !m; i++) {
            ffb_stmt *o = conn->cache[i].stmt;
            if (entry_busy(&conn->cache[i]) && !conn->cache[i].stale &&
                o->prepared && !o->lazy && o->sql_len == len &&
                memcmp(o->sql, sql, len) == 0) {
                memset(&busy, 0, sizeof(busy));
                busy.sql = o->sql;
                busy.len = o->sql_len;
                busy.stmt_type = o->stmt_type;
                busy.stmt_flags = o->stmt_flags;
                busy.in = o->in;
                busy.out = o->out;
                busy.fetch_count = o->fetch_count;
                m = &busy;
            }
        }
    }
    /* Not remembered here: another connection sharing format memory may
       have prepared it (lib/formats.c). */
    ffb__memo shared;
    memset(&shared, 0, sizeof(shared));
    if (!m && conn->formats && ffb__formats_get(conn, sql, len, &shared))
        m = &shared;
    *out = s;
    s->share = 1;
    if (m) {
        rc = ffb__stmt_prepare_lazy(s, tx, m);
        memo_free(conn, &shared);
        if (rc == 0)
            return FFB__CACHE_LAZY;
        if (rc != FFB_E_STATE) {
            ffb_stmt_free(s);
            return rc;
        }
        /* Not possible right now: the normal way. */
    }
    return FFB__CACHE_PREPARE;
}

void ffb__cache_add(ffb_conn *conn, ffb_stmt *s) {
    if (conn->cache_size > 0) {
        if (!conn->cache) {
            conn->cache = ffb__malloc(conn->alloc, (size_t)conn->cache_size *
                                                       sizeof(*conn->cache));
            if (!conn->cache)
                return; /* works, just not cached */
        }
        if (conn->cache_n == (size_t)conn->cache_size) {
            ffb__cache_entry *lru = NULL;
            for (size_t i = 0; i < conn->cache_n; i++)
                if (!conn->cache[i].in_use &&
                    (!lru || conn->cache[i].tick < lru->tick))
                    lru = &conn->cache[i];
            if (lru)
                entry_drop(conn, lru, 1);
        }
        if (conn->cache_n < (size_t)conn->cache_size) {
            ffb__cache_entry *e = &conn->cache[conn->cache_n++];
            e->stmt = s;
            e->in_use = 1;
            e->stale = 0;
            e->tick = ++conn->cache_tick;
            s->cached = e;
        }
    }
}
