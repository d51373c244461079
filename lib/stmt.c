/*
 * Statements: allocate + prepare in one write, the describe, execute with
 * the first fetch (or the row counts, or op_execute2) in the same write,
 * fetching with read-ahead, deferred close and drop.
 *
 * Cursor life (per statement): execute opens it on the server
 * (cursor_open); rows arrive in batches ended by a terminator (status 0:
 * more may follow, 100: end). It stays open on the server until a
 * DSQL_close (queued in front of the next execute or prepare) or the end of
 * its transaction. `gen` counts cursor openings: answers owed to an older
 * cursor are drained and dropped.
 *
 * Fetch sizing: the first op_fetch asks for about 1 MiB of rows (10..1000,
 * as fbclient does), which the server cuts at about 128 KiB per batch.
 * When the application reads past the first batch the cursor has proved
 * long: each refill sends `fetch_depth` fetches at once (2, then 4, then 8)
 * of up to 4096 rows, and it is sent when half of the buffered rows have
 * been read, so the next batches are on their way while the application
 * works. Fetches sent past the end are answered with status 100 or
 * isc_req_sync, both drained silently.
 */
#include <stdio.h>
#include <string.h>

#include "lib/internal.h"
#include "lib/types.h"
#include "proto/scroll.h"

#define PREPARE_BUFFER 64384 /* fbclient's MAX_MEDIUM_BLOCK_SIZE */
#define FIRST_FETCH_MAX 1000
#define FETCH_MAX 4096
#define FETCH_DEPTH_MAX 8
/* Firebird's limit on columns and on parameters of one statement; a
   describe announcing more is not from a real server. */
#define MAX_VARS 32767

/* ---- helpers ------------------------------------------------------------- */


void ffb__sync_fail_status(ffb_conn *conn, ffb__sync *sync, int code,
                           const ffbp_status *st, const char *prefix) {
    if (sync && sync->rc != 0)
        return; /* the first failure of a write is the one reported */
    code = ffb__error_from_status(ffb__sync_error(conn, sync), code, st,
                                  prefix);
    if (sync)
        sync->rc = code;
}

/* An error answer to a request of `p`: when the request ran in a
   transaction whose start failed, the failure is only a consequence:
   FFB_E_ABORTED, with the start's error as the cause. */
static void fail_request(ffb_conn *conn, ffb__pending *p,
                         const ffbp_status *st, const char *prefix) {
    if (!p->sync)
        return;
    ffb_stmt *stmt = p->ctx;
    if (stmt && stmt->prepare_err && p->op != FFBP_OP_PREPARE_STATEMENT) {
        /* The lazy prepare in front of it failed: report that. */
        if (p->sync->rc != 0)
            return;
        ffb_error *e = ffb__sync_error(conn, p->sync);
        *e = *stmt->prepare_err;
        p->sync->rc = e->code ? e->code : FFB_E_SERVER;
        return;
    }
    if (p->tx && p->tx->state == FFB__TX_FAILED && p->tx->start_err) {
        if (p->sync->rc != 0)
            return;
        ffb_error *e = ffb__sync_error(conn, p->sync);
        *e = *p->tx->start_err;
        e->code = FFB_E_ABORTED;
        p->sync->rc = FFB_E_ABORTED;
        return;
    }
    ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, st, prefix);
}


/* Answer nobody waits for: deferred close/drop, rollback of a freed
   transaction. Errors are expected (e.g. closing a cursor the commit
   already closed) and ignored, like fbclient does. */
static int ignore_reply(ffb_conn *conn, const ffbp_packet *pkt,
                        ffb__pending *p) {
    return ffb__reply_response(conn, pkt, p) ? 0 : FFB_E_PROTO;
}

int ffb__queue_fire_and_forget(ffb_conn *conn, ffbp_writer *w, int32_t op,
                               int deferred) {
    int rc = ffb__engine_queue(conn, w, !deferred);
    if (rc < 0)
        return ffb__engine_fail(conn, rc);
    ffb__pending *p = ffb__engine_expect(conn, op, ignore_reply, NULL);
    if (!p)
        return ffb__engine_fail(conn, FFB_E_NOMEM);
    p->deferred = deferred;
    return 0;
}

static void stmt_destroy(ffb_stmt *stmt);
static int keep_sql(ffb_stmt *stmt, const char *sql, size_t len);
static void take_spare(ffb_stmt *stmt);
static int prepare_reply(ffb_conn *conn, const ffbp_packet *pkt,
                         ffb__pending *p);
static int alloc_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p);


void ffb__stmt_unref(ffb_stmt *stmt) {
    if (stmt && --stmt->refs == 0)
        stmt_destroy(stmt);
}

void ffb__meta_free_a(const ffb_allocator *a, ffb__meta *m) {
    for (size_t i = 0; m->cols && i < m->n; i++)
        ffb__free(a, m->cols[i].strings);
    ffb__free(a, m->cols);
    ffb__free(a, m->items);
    ffb__free(a, m->blr);
    memset(m, 0, sizeof(*m));
}

void ffb__meta_free(ffb_conn *conn, ffb__meta *m) {
    ffb__meta_free_a(conn->alloc, m);
}

static void params_free(ffb_stmt *stmt) {
    if (!stmt->params)
        return;
    for (size_t i = 0; i < stmt->in.n; i++)
        ffb__free(stmt->conn->alloc, stmt->params[i].data);
    ffb__free(stmt->conn->alloc, stmt->params);
    stmt->params = NULL;
}

static void rows_reset(ffb_stmt *stmt) {
    stmt->nrows = 0;
    stmt->cur = 0;
    ffbp_writer_reset(&stmt->rows);
}

typedef struct ffb__strblock {
    struct ffb__strblock *next;
    char bytes[];
} ffb__strblock;

static void desc_free(ffb_stmt *stmt) {
    ffb__free(stmt->conn->alloc, stmt->desc.in);
    ffb__free(stmt->conn->alloc, stmt->desc.out);
    memset(&stmt->desc, 0, sizeof(stmt->desc));
    while (stmt->desc_strings) {
        ffb__strblock *b = stmt->desc_strings;
        stmt->desc_strings = b->next;
        ffb__free(stmt->conn->alloc, b);
    }
    stmt->desc_started = 0;
    stmt->desc_truncated = 0;
    stmt->desc_asked = 0;
}

/*
 * Output formats that were replaced (a new prepare, a lazy prepare's new
 * describe) while queued requests still decode rows with them - the
 * decoder reads p->items, p->off and p->len before any handler runs - are
 * kept until no request refers to them.
 */
typedef struct ffb__retired {
    struct ffb__retired *next;
    ffb__meta out;
    uint32_t *off, *len;
} ffb__retired;

static void retired_free(ffb_conn *conn, ffb__retired *r) {
    ffb__meta_free(conn, &r->out);
    ffb__free(conn->alloc, r->off);
    ffb__free(conn->alloc, r->len);
    ffb__free(conn->alloc, r);
}

/* 1 when a request owed an answer decodes with these formats. */
static int formats_in_use(const ffb_conn *conn, const ffbp_item *items,
                          const uint32_t *off) {
    if (conn->state != FFB__ST_READY)
        return 0; /* nothing is decoded any more */
    for (size_t i = 0; i < conn->fifo_len; i++) {
        const ffb__pending *p = &conn->fifo[(conn->fifo_head + i) %
                                            conn->fifo_cap];
        if ((items && p->items == items) || (off && p->off == off))
            return 1;
    }
    return 0;
}

/* Free the retired formats no request uses any more. */
static void retired_prune(ffb_stmt *stmt) {
    ffb_conn *conn = stmt->conn;
    for (ffb__retired **pp = &stmt->retired; *pp;) {
        ffb__retired *r = *pp;
        if (formats_in_use(conn, r->out.items, r->off)) {
            pp = &r->next;
            continue;
        }
        *pp = r->next;
        retired_free(conn, r);
    }
}

/* The statement's output formats and row scratch are about to be
   replaced: free them, or keep them while requests still use them. */
static void retire_out(ffb_stmt *stmt) {
    ffb_conn *conn = stmt->conn;
    retired_prune(stmt);
    if (formats_in_use(conn, stmt->out.items, stmt->scratch_off)) {
        ffb__retired *r = ffb__malloc(conn->alloc, sizeof(*r));
        if (r) {
            r->out = stmt->out;
            r->off = stmt->scratch_off;
            r->len = stmt->scratch_len;
            r->next = stmt->retired;
            stmt->retired = r;
            memset(&stmt->out, 0, sizeof(stmt->out));
            stmt->scratch_off = stmt->scratch_len = NULL;
            return;
        }
        /* Nothing will be decoded on a broken connection: free them. */
        ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    }
    ffb__meta_free(conn, &stmt->out);
    ffb__free(conn->alloc, stmt->scratch_off);
    ffb__free(conn->alloc, stmt->scratch_len);
    stmt->scratch_off = stmt->scratch_len = NULL;
}

static void stmt_destroy(ffb_stmt *stmt) {
    ffb_conn *conn = stmt->conn;
    for (ffb_stmt **pp = &conn->stmts; *pp; pp = &(*pp)->next)
        if (*pp == stmt) {
            *pp = stmt->next;
            break;
        }
    if (conn->last_obj == stmt) {
        conn->last_kind = FFB__LAST_OTHER;
        conn->last_obj = NULL;
    }
    params_free(stmt);
    ffb__meta_free(conn, &stmt->in);
    ffb__meta_free(conn, &stmt->out);
    desc_free(stmt);
    ffbp_writer_free(&stmt->rows);
    ffb__free(conn->alloc, stmt->rowv);
    ffb__free(conn->alloc, stmt->row_off);
    ffb__free(conn->alloc, stmt->row_len);
    ffb__free(conn->alloc, stmt->scratch_off);
    ffb__free(conn->alloc, stmt->scratch_len);
    ffb__free(conn->alloc, stmt->row_err);
    ffb__free(conn->alloc, stmt->textbuf);
    ffb__free(conn->alloc, stmt->plan);
    ffb__free(conn->alloc, stmt->sql);
    ffb__free(conn->alloc, stmt->prepare_err);
    while (stmt->retired) {
        ffb__retired *r = stmt->retired;
        stmt->retired = r->next;
        retired_free(conn, r);
    }
    ffb__tx_unref(stmt->cursor_tx);
    if (stmt->auto_tx) {
        stmt->auto_tx->freed = 1;
        ffb__tx_unref(stmt->auto_tx);
    }
    ffb__obj_release(conn->alloc, stmt, "statement");
}

void ffb__stmts_destroy_all(ffb_conn *conn) {
    while (conn->stmts)
        stmt_destroy(conn->stmts);
}

static ffb__pending *expect(ffb_conn *conn, int32_t op, ffb__reply_fn fn,
                            ffb_stmt *stmt, ffb__sync *sync) {
    ffb__pending *p = ffb__engine_expect(conn, op, fn, stmt);
    if (!p) {
        ffb__engine_fail(conn, FFB_E_NOMEM);
        return NULL;
    }
    p->sync = sync;
    p->gen = stmt ? stmt->gen : 0;
    if (stmt)
        stmt->refs++;
    return p;
}

/* Every statement reply handler ends here: complete the waiter when this
   was the last request of its write, release the reference. */
static int done(ffb__pending *p, int rc) {
    if (p->sync && p->completes)
        p->sync->done = 1;
    if (p->ends_exec && p->ctx)
        ((ffb_stmt *)p->ctx)->exec_inflight = 0;
    ffb__stmt_unref(p->ctx);
    return rc;
}

/* The transaction's end closed the cursors it holds: their references to
   it go too (the caller's end reply still holds one), else every ended
   transaction stayed in conn->txs for the life of the connection. */
void ffb__stmts_tx_ended(ffb_conn *conn, ffb_tx *tx) {
    for (ffb_stmt *s = conn->stmts; s; s = s->next) {
        if (s->cursor_tx != tx)
            continue;
        if (s->cursor_open) {
            s->cursor_open = 0;
            /* rows were still to come: the end took them */
            s->ended_early = !s->eof;
            s->eof = 1;
        }
        s->cursor_tx = NULL;
        ffb__tx_unref(tx);
    }
}

/* The auto-commit transaction of a cursor that ended: its commit is
   queued and rides with the next request (nobody waits for it). Called
   with the statement's reference already taken (take_auto). */
static void auto_commit(ffb_conn *conn, ffb_tx *tx) {
    if (conn->state == FFB__ST_READY && tx->state == FFB__TX_ACTIVE &&
        ffb__tx_queue_end(tx, FFBP_OP_COMMIT, NULL) < 0)
        ffb__conn_error_clear(conn);
    tx->freed = 1; /* no rollback: it is committed, or the server ends it */
    ffb__tx_unref(tx);
}

static ffb_tx *take_auto(ffb_stmt *stmt) {
    ffb_tx *tx = stmt->auto_tx;
    stmt->auto_tx = NULL;
    return tx;
}

/* Queue a DSQL_close of the open cursor; its answer rides with the next
   flushed request and is ignored. */
static int queue_close(ffb_stmt *stmt) {
    ffb_conn *conn = stmt->conn;
    if (!stmt->cursor_open) {
        if (stmt->auto_tx)
            auto_commit(conn, take_auto(stmt));
        return 0;
    }
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_free_statement(&w, stmt->handle, FFBP_DSQL_CLOSE);
    int rc = ffb__queue_fire_and_forget(conn, &w, FFBP_OP_FREE_STATEMENT, 1);
    ffbp_writer_free(&w);
    stmt->cursor_open = 0;
    stmt->eof = 1;
    stmt->ended_early = 0; /* closed on purpose */
    stmt->gen++; /* answers still owed to this cursor are dropped */
    stmt->fetches_inflight = 0;
    ffb__tx_unref(stmt->cursor_tx);
    stmt->cursor_tx = NULL;
    rows_reset(stmt);
    if (stmt->auto_tx)
        auto_commit(conn, take_auto(stmt));
    return rc;
}

/* ---- new / free --------------------------------------------------------------- */

int ffb_stmt_new(ffb_conn *conn, ffb_stmt **out) {
    if (!conn || !out)
        return FFB_E_INVAL;
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    ffb_stmt *s = ffb__malloc(conn->alloc, sizeof(*s));
    if (!s)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    memset(s, 0, sizeof(*s));
    s->conn = conn;
    s->refs = 1;
    s->stmt_flags = -1;
    s->inline_size = conn->inline_size;
    s->fetch_size = conn->fetch_size;
    for (int i = 0; i < 4; i++)
        s->records[i] = -1;
    ffbp_writer_init(&s->rows, conn->alloc);
    s->next = conn->stmts;
    conn->stmts = s;
    *out = s;
    return 0;
}

/* What freeing does on the wire: the handle kept for the next statement
   (DSQL_unprepare also closes a cursor) or released, riding with the next
   request; then the application's reference goes. */
static void free_send(ffb_conn *conn, void *obj) {
    ffb_stmt *stmt = obj;
    if (conn->state == FFB__ST_READY && stmt->has_handle) {
        int keep = conn->nspare < sizeof(conn->spare) / sizeof(conn->spare[0]);
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        ffbp_put_free_statement(&w, stmt->handle,
                                keep ? FFBP_DSQL_UNPREPARE : FFBP_DSQL_DROP);
        if (ffb__queue_fire_and_forget(conn, &w, FFBP_OP_FREE_STATEMENT, 1) < 0)
            ffb__conn_error_clear(conn);
        else if (keep)
            conn->spare[conn->nspare++] = stmt->handle;
        ffbp_writer_free(&w);
    }
    /* A handle whose allocate is still unanswered is dropped by the
       allocate's reply handler once it is known. */
    stmt->cursor_open = 0;
    stmt->gen++;
    ffb__stmt_unref(stmt);
}

static void free_drop(ffb_conn *conn, void *obj) {
    (void)conn;
    ffb__stmt_unref(obj);
}

void ffb_stmt_free(ffb_stmt *stmt) {
    ffb__obj_check(stmt, "ffb_stmt_free");
    if (!stmt || stmt->freed)
        return;
    if (stmt->cached && ffb__cache_release(stmt))
        return; /* back in the statement cache */
    ffb_conn *conn = stmt->conn;
    stmt->freed = 1;
    if (stmt->auto_tx)
        auto_commit(conn, take_auto(stmt));
    /* Requests of the statement may still wait in the hold queue: the
       free goes behind them. */
    if (conn->held_head && conn->state == FFB__ST_READY &&
        ffb__engine_hold_call(conn, free_send, free_drop, stmt) == 0)
        return;
    free_send(conn, stmt);
}

int ffb__stmt_exec_sent(ffb_conn *conn, const void *arg) {
    (void)conn;
    return ((const ffb_stmt *)arg)->exec_held == 0;
}

/* The statement goes back to the cache while its execution waits in the
   hold queue: its cursor is closed right behind it. */
static void close_send(ffb_conn *conn, void *obj) {
    ffb_stmt *stmt = obj;
    if (conn->state == FFB__ST_READY && queue_close(stmt) < 0)
        ffb__conn_error_clear(conn);
    ffb__stmt_unref(stmt);
}

static void close_drop(ffb_conn *conn, void *obj) {
    (void)conn;
    ffb__stmt_unref(obj);
}

int ffb__stmt_close_cursor(ffb_stmt *stmt, int behind) {
    ffb_conn *conn = stmt->conn;
    if (stmt->exec_held) {
        /* Until the execution is sent, its cursor is not there. */
        if (!behind)
            return FFB_E_AGAIN;
        int rc = ffb__engine_hold_call(conn, close_send, close_drop, stmt);
        if (rc == 0)
            stmt->refs++;
        return rc;
    }
    if (stmt->conn->state != FFB__ST_READY) {
        stmt->cursor_open = 0;
        return 0;
    }
    return queue_close(stmt);
}

/* ---- describe ------------------------------------------------------------------ */

static int var_charset(const ffbp_var *v) {
    if (v->sqltype == FFBP_SQL_TEXT || v->sqltype == FFBP_SQL_VARYING)
        return v->subtype & 0xFF;
    if (v->sqltype == FFBP_SQL_BLOB && v->subtype == 1)
        return v->scale;
    return -1;
}

/* Copy the described variables into owned metadata and items. */
static int build_meta_into(ffb_stmt *stmt, ffb__meta *m, const ffbp_var *vars,
                           size_t n, int input) {
    ffb_conn *conn = stmt->conn;
    ffb__meta_free(conn, m);
    if (n == 0)
        return 0;
    m->cols = ffb__malloc(conn->alloc, n * sizeof(*m->cols));
    m->items = ffb__malloc(conn->alloc, n * sizeof(*m->items));
    if (!m->cols || !m->items)
        goto nomem;
    memset(m->cols, 0, n * sizeof(*m->cols));
    m->n = n;
    for (size_t i = 0; i < n; i++) {
        const ffbp_var *v = &vars[i];
        ffb__col *c = &m->cols[i];
        c->sqltype = v->sqltype;
        c->nullable = v->nullable;
        c->subtype = v->subtype;
        c->scale = v->scale;
        c->length = v->length;
        c->charset = var_charset(v);
        const ffbp_bytes *strs[5] = {&v->field, &v->relation, &v->owner,
                                      &v->alias, &v->relation_alias};
        size_t total = 0;
        for (int k = 0; k < 5; k++)
            total += strs[k]->len + 1;
        c->strings = ffb__malloc(conn->alloc, total);
        if (!c->strings)
            goto nomem;
        const char **dst[5] = {&c->field, &c->relation, &c->owner, &c->alias,
                               &c->relation_alias};
        char *q = c->strings;
        for (int k = 0; k < 5; k++) {
            if (strs[k]->len)
                memcpy(q, strs[k]->p, strs[k]->len);
            q[strs[k]->len] = '\0';
            *dst[k] = q;
            q += strs[k]->len + 1;
        }
        ffbp_item *it = &m->items[i];
        if (ffbp_item_from_sql(v->sqltype, v->subtype, v->scale, v->length,
                               it) != FFBP_OK)
            return ffb__error_set(&conn->err, FFB_E_UNSUPPORTED,
                                  "%s %zu has SQL type %d, which has no "
                                  "message form",
                                  input ? "parameter" : "column", i + 1,
                                  v->sqltype);
        if (!input) {
            /* Time zone values come with their offset, so local time needs
               no zone database on the client (reference 02, 10.2). */
            if (it->blr == FFBP_BLR_SQL_TIME_TZ)
                it->blr = FFBP_BLR_EX_TIME_TZ;
            else if (it->blr == FFBP_BLR_TIMESTAMP_TZ)
                it->blr = FFBP_BLR_EX_TIMESTAMP_TZ;
        }
    }
    if (!input) {
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        int brc = ffbp_put_blr(&w, m->items, n);
        if (w.failed) {
            ffbp_writer_free(&w);
            return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
        }
        if (brc != FFBP_OK) {
            ffbp_writer_free(&w);
            return ffb__error_set(&conn->err, FFB_E_UNSUPPORTED,
                                  "cannot describe the output message in "
                                  "BLR");
        }
        m->blr = w.data; /* ownership moves */
        m->blr_len = w.len;
    }
    return 0;
nomem:
    return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
}

/* As build_meta_into; a failure leaves `m` empty, never half built. */
static int build_meta(ffb_stmt *stmt, ffb__meta *m, const ffbp_var *vars,
                      size_t n, int input) {
    int rc = build_meta_into(stmt, m, vars, n, input);
    if (rc < 0)
        ffb__meta_free(stmt->conn, m);
    return rc;
}

/* Arrays for one side of the describe, sized by its announced count. */
static int desc_side_alloc(ffb_stmt *stmt, ffbp_var **vars, size_t *cap,
                           uint32_t count) {
    ffb_conn *conn = stmt->conn;
    *vars = NULL;
    *cap = 0;
    if (count == 0)
        return 0;
    *vars = ffb__malloc(conn->alloc, count * sizeof(ffbp_var));
    if (!*vars)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    memset(*vars, 0, count * sizeof(ffbp_var));
    *cap = count;
    return 0;
}

static int too_many_vars(ffb_stmt *stmt, uint32_t in, uint32_t out) {
    return ffb__error_set(&stmt->conn->err, FFB_E_PROTO,
                          "the server describes %u parameters and %u "
                          "columns; Firebird allows at most %d of each",
                          (unsigned)in, (unsigned)out, MAX_VARS);
}

/*
 * Parse (part of) a describe into stmt->desc. The first answer sizes the
 * arrays from the counts it announces (at most MAX_VARS each). A
 * continuation may announce a side the first answer did not reach (the
 * arrays for it are made then and the answer parsed again), but never a
 * different count for a side already announced: that would not match the
 * arrays, and no real server does it.
 */
static int parse_describe(ffb_stmt *stmt, const uint8_t *p, size_t len) {
    ffb_conn *conn = stmt->conn;
    ffbp_sqlinfo *d = &stmt->desc;
    if (!stmt->desc_started) {
        ffbp_sqlinfo probe;
        ffbp_sqlinfo_init(&probe, NULL, 0, NULL, 0);
        if (ffbp_parse_describe(p, len, &probe) != FFBP_OK)
            return ffb__error_set(&conn->err, FFB_E_PROTO,
                                  "malformed describe in the answer to "
                                  "op_prepare_statement");
        if (probe.in_count > MAX_VARS || probe.out_count > MAX_VARS)
            return too_many_vars(stmt, probe.in_count, probe.out_count);
        ffbp_var *in, *out;
        size_t in_cap, out_cap;
        int rc = desc_side_alloc(stmt, &in, &in_cap, probe.in_count);
        if (rc == 0)
            rc = desc_side_alloc(stmt, &out, &out_cap, probe.out_count);
        if (rc < 0) {
            ffb__free(conn->alloc, in);
            return rc;
        }
        ffbp_sqlinfo_init(d, in, in_cap, out, out_cap);
        stmt->desc_started = 1;
    }
    int had_in = d->have_in, had_out = d->have_out;
    uint32_t in_count = d->in_count, out_count = d->out_count;
    for (int pass = 0; pass < 2; pass++) {
        if (ffbp_parse_describe(p, len, d) != FFBP_OK)
            return ffb__error_set(&conn->err, FFB_E_PROTO,
                                  "malformed describe from the server");
        if ((had_in && d->in_count != in_count) ||
            (had_out && d->out_count != out_count))
            return ffb__error_set(
                &conn->err, FFB_E_PROTO,
                "the continued describe announces %u parameters and %u "
                "columns where the first answer said %u and %u",
                (unsigned)d->in_count, (unsigned)d->out_count,
                (unsigned)in_count, (unsigned)out_count);
        if (d->in_count > MAX_VARS || d->out_count > MAX_VARS)
            return too_many_vars(stmt, d->in_count, d->out_count);
        /* A side announced for the first time: arrays, then again. */
        int grow_in = d->have_in && d->in_count > d->in_cap;
        int grow_out = d->have_out && d->out_count > d->out_cap;
        if (!grow_in && !grow_out)
            break;
        if (pass == 1)
            return ffb__error_set(&conn->err, FFB_E_PROTO,
                                  "inconsistent describe from the server");
        int rc = 0;
        if (grow_in) {
            ffb__free(conn->alloc, d->in);
            rc = desc_side_alloc(stmt, &d->in, &d->in_cap, d->in_count);
        }
        if (rc == 0 && grow_out) {
            ffb__free(conn->alloc, d->out);
            rc = desc_side_alloc(stmt, &d->out, &d->out_cap, d->out_count);
        }
        if (rc < 0)
            return rc;
    }
    if (d->truncated)
        stmt->desc_truncated = 1;
    return 0;
}

/* The string views of the variables that point into this answer (p, len):
   their total length, or (q non-NULL) each copied to *q and repointed. */
static size_t answer_strings(ffbp_sqlinfo *d, const uint8_t *p, size_t len,
                             char **q) {
    ffbp_var *sides[2] = {d->in, d->out};
    size_t caps[2] = {d->in ? d->in_cap : 0, d->out ? d->out_cap : 0};
    size_t total = 0;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < caps[k]; i++) {
            ffbp_var *v = &sides[k][i];
            ffbp_bytes *strs[5] = {&v->field, &v->relation, &v->owner,
                                   &v->alias, &v->relation_alias};
            for (int j = 0; j < 5; j++) {
                ffbp_bytes *b = strs[j];
                if (!b->len || b->p < p || b->p >= p + len)
                    continue;
                total += b->len;
                if (q) {
                    memcpy(*q, b->p, b->len);
                    b->p = (const uint8_t *)*q;
                    *q += b->len;
                }
            }
        }
    return total;
}

/* The answer's buffer is reused before a continued describe is complete:
   the names it holds are copied into a block the statement owns. */
static int own_strings(ffb_stmt *stmt, const uint8_t *p, size_t len) {
    size_t total = answer_strings(&stmt->desc, p, len, NULL);
    if (total == 0)
        return 0;
    ffb__strblock *b = ffb__malloc(stmt->conn->alloc, sizeof(*b) + total);
    if (!b)
        return ffb__fatal(stmt->conn, FFB_E_NOMEM, "out of memory");
    b->next = stmt->desc_strings;
    stmt->desc_strings = b;
    char *q = b->bytes;
    answer_strings(&stmt->desc, p, len, &q);
    return 0;
}

/*
 * What the describe still lacks: the side (1 = output) and the 1-based
 * variable to continue from; 0 when it is complete. A side the answers
 * never reached (an earlier one was truncated) is asked for from its
 * first variable.
 */
static int describe_next(const ffb_stmt *stmt, int *select, uint32_t *start) {
    const ffbp_sqlinfo *d = &stmt->desc;
    uint32_t v;
    if ((v = ffbp_sqlinfo_incomplete(d, 0)) != 0) {
        *select = 0;
        *start = v;
        return 1;
    }
    if (!d->have_in && stmt->desc_truncated) {
        *select = 0;
        *start = 1;
        return 1;
    }
    if ((v = ffbp_sqlinfo_incomplete(d, 1)) != 0) {
        *select = 1;
        *start = v;
        return 1;
    }
    if (!d->have_out && stmt->desc_truncated) {
        *select = 1;
        *start = 1;
        return 1;
    }
    return 0;
}

/* Row scratch arrays and parameter slots for the current formats (the
   old scratch arrays are dropped; parameters were freed by the caller). */
static int alloc_buffers(ffb_stmt *stmt) {
    ffb_conn *conn = stmt->conn;
    size_t n = stmt->out.n ? stmt->out.n : 1;
    ffb__free(conn->alloc, stmt->scratch_off);
    ffb__free(conn->alloc, stmt->scratch_len);
    stmt->scratch_off = ffb__malloc(conn->alloc, n * sizeof(uint32_t));
    stmt->scratch_len = ffb__malloc(conn->alloc, n * sizeof(uint32_t));
    if (stmt->in.n) {
        stmt->params = ffb__malloc(conn->alloc,
                                   stmt->in.n * sizeof(*stmt->params));
        if (stmt->params)
            memset(stmt->params, 0, stmt->in.n * sizeof(*stmt->params));
    }
    if (!stmt->scratch_off || !stmt->scratch_len ||
        (stmt->in.n && !stmt->params))
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    return 0;
}

/* The describe is complete: keep what we need (the string views point into
   the receive buffer, so this runs inside the reply handler). */
static int describe_done(ffb_stmt *stmt) {
    ffbp_sqlinfo *d = &stmt->desc;
    stmt->stmt_type = d->stmt_type;
    stmt->stmt_flags = d->stmt_flags;
    int rc = build_meta(stmt, &stmt->in, d->in, d->in_count, 1);
    if (rc == 0)
        rc = build_meta(stmt, &stmt->out, d->out, d->out_count, 0);
    desc_free(stmt);
    if (rc < 0) {
        /* Nothing half described is left to run or to look at. */
        params_free(stmt);
        ffb__meta_free(stmt->conn, &stmt->in);
        retire_out(stmt);
        stmt->prepared = 0;
        return rc;
    }
    if ((rc = alloc_buffers(stmt)) < 0)
        return rc;
    /* Message length bound, for the first fetch size (about 1 MiB). */
    size_t msg = 4;
    for (size_t i = 0; i < stmt->out.n; i++)
        msg += ffbp_item_wire_size(&stmt->out.items[i]) + 4;
    size_t rows = (1024 * 1024) / (msg + 12);
    stmt->fetch_count =
        (uint16_t)(rows < 10 ? 10 : rows > FIRST_FETCH_MAX ? FIRST_FETCH_MAX
                                                           : rows);
    stmt->prepared = 1;
    return 0;
}

static int vars_equal(const ffbp_var *v, size_t n, const ffb__meta *m) {
    if (n != m->n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const ffb__col *c = &m->cols[i];
        if (v[i].sqltype != c->sqltype || v[i].nullable != c->nullable ||
            v[i].subtype != c->subtype || v[i].scale != c->scale ||
            v[i].length != c->length)
            return 0;
    }
    return 1;
}

static int bytes_is(const ffbp_bytes *b, const char *s) {
    size_t n = strlen(s);
    return b->len == n && (n == 0 || memcmp(b->p, s, n) == 0);
}

/* The names of a describe whose types match `m`: 1 when they differ (a
   column renamed on another connection; remembered formats from shared
   format memory are not emptied by DDL here), and then they replace the
   remembered ones (the rows decode the same). */
static int names_refresh(ffb_stmt *stmt, const ffbp_var *v, ffb__meta *m) {
    int differ = 0;
    for (size_t i = 0; i < m->n && !differ; i++) {
        const ffb__col *c = &m->cols[i];
        differ = !bytes_is(&v[i].field, c->field) ||
                 !bytes_is(&v[i].relation, c->relation) ||
                 !bytes_is(&v[i].owner, c->owner) ||
                 !bytes_is(&v[i].alias, c->alias) ||
                 !bytes_is(&v[i].relation_alias, c->relation_alias);
    }
    for (size_t i = 0; i < m->n && differ; i++) {
        ffb__col *c = &m->cols[i];
        const ffbp_bytes *strs[5] = {&v[i].field, &v[i].relation,
                                      &v[i].owner, &v[i].alias,
                                      &v[i].relation_alias};
        size_t total = 0;
        for (int k = 0; k < 5; k++)
            total += strs[k]->len + 1;
        char *q = ffb__malloc(stmt->conn->alloc, total);
        if (!q)
            return ffb__fatal(stmt->conn, FFB_E_NOMEM, "out of memory");
        ffb__free(stmt->conn->alloc, c->strings);
        c->strings = q;
        const char **dst[5] = {&c->field, &c->relation, &c->owner, &c->alias,
                               &c->relation_alias};
        for (int k = 0; k < 5; k++) {
            if (strs[k]->len)
                memcpy(q, strs[k]->p, strs[k]->len);
            q[strs[k]->len] = '\0';
            *dst[k] = q;
            q += strs[k]->len + 1;
        }
    }
    return differ;
}

/* The describe of a lazy prepare arrived: keep the remembered formats when
   they still hold (1 when only their names changed, and were taken).
   When the output changed, the old formats stay alive (requests queued
   with them decode by them) until the next execute. */
static int lazy_done(ffb_stmt *stmt) {
    ffbp_sqlinfo *d = &stmt->desc;
    int in_same = vars_equal(d->in, d->in_count, &stmt->in);
    int out_same = vars_equal(d->out, d->out_count, &stmt->out);
    stmt->stmt_type = d->stmt_type;
    stmt->stmt_flags = d->stmt_flags;
    if (in_same && out_same) {
        int a = names_refresh(stmt, d->in, &stmt->in);
        int b = a < 0 ? a : names_refresh(stmt, d->out, &stmt->out);
        desc_free(stmt);
        return a < 0 ? a : b < 0 ? b : (a || b);
    }
    ffb_conn *conn = stmt->conn;
    stmt->meta_changed = (in_same ? 0 : 1) | (out_same ? 0 : 2);
    /* In-flight requests may still decode with the old formats. */
    retire_out(stmt);
    ffb__param *params = stmt->params;
    ffb__meta in = stmt->in;
    stmt->params = NULL;
    memset(&stmt->in, 0, sizeof(stmt->in));
    int rc = describe_done(stmt);
    if (rc == 0 && in_same && stmt->params) {
        /* The parameters did not change: keep the application's values. */
        ffb__free(conn->alloc, stmt->params);
        ffb__meta_free(conn, &stmt->in);
        stmt->params = params;
        stmt->in = in;
    } else {
        for (size_t i = 0; params && i < in.n; i++)
            ffb__free(conn->alloc, params[i].data);
        ffb__free(conn->alloc, params);
        ffb__meta_free(conn, &in);
    }
    return rc;
}

int ffb__meta_copy_a(const ffb_allocator *a, ffb__meta *dst,
                     const ffb__meta *src) {
    memset(dst, 0, sizeof(*dst));
    if (src->n == 0)
        return 0;
    dst->cols = ffb__malloc(a, src->n * sizeof(*dst->cols));
    dst->items = ffb__malloc(a, src->n * sizeof(*dst->items));
    if (!dst->cols || !dst->items)
        goto nomem;
    memset(dst->cols, 0, src->n * sizeof(*dst->cols));
    dst->n = src->n;
    memcpy(dst->items, src->items, src->n * sizeof(*dst->items));
    for (size_t i = 0; i < src->n; i++) {
        const ffb__col *c = &src->cols[i];
        ffb__col *o = &dst->cols[i];
        *o = *c;
        const char *strs[5] = {c->field, c->relation, c->owner, c->alias,
                               c->relation_alias};
        size_t total = 0;
        for (int k = 0; k < 5; k++)
            total += strlen(strs[k]) + 1;
        o->strings = ffb__malloc(a, total);
        if (!o->strings)
            goto nomem;
        const char **ptrs[5] = {&o->field, &o->relation, &o->owner, &o->alias,
                                &o->relation_alias};
        char *q = o->strings;
        for (int k = 0; k < 5; k++) {
            size_t l = strlen(strs[k]) + 1;
            memcpy(q, strs[k], l);
            *ptrs[k] = q;
            q += l;
        }
    }
    if (src->blr_len) {
        dst->blr = ffb__malloc(a, src->blr_len);
        if (!dst->blr)
            goto nomem;
        memcpy(dst->blr, src->blr, src->blr_len);
        dst->blr_len = src->blr_len;
    }
    return 0;
nomem:
    ffb__meta_free_a(a, dst);
    return FFB_E_NOMEM;
}

int ffb__meta_copy(ffb_conn *conn, ffb__meta *dst, const ffb__meta *src) {
    if (ffb__meta_copy_a(conn->alloc, dst, src) < 0)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    return 0;
}

/* op_allocate_statement: the statement becomes the server's last object,
   which its prepare names 0xFFFF; the answer is held back by a lazy server
   (reference 02, 7.3). */
static int put_allocate(ffb_conn *conn) {
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_object_op(&w, FFBP_OP_ALLOCATE_STATEMENT, conn->db_handle);
    return ffb__queue_free(conn, &w, 0);
}

static int queue_allocate(ffb_stmt *stmt, ffb__sync *sync) {
    ffb_conn *conn = stmt->conn;
    int rc = put_allocate(conn);
    if (rc < 0)
        return rc;
    ffb__pending *p =
        expect(conn, FFBP_OP_ALLOCATE_STATEMENT, alloc_reply, stmt, sync);
    if (!p)
        return FFB_E_NOMEM;
    p->deferred = 1;
    stmt->alloc_queued = 1;
    conn->last_kind = FFB__LAST_STMT;
    conn->last_obj = stmt;
    return 0;
}

/* ---- spare handles allocated ahead ------------------------------------------- */

/* The answer to an allocation made ahead: one more spare handle. */
static int spare_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (conn->spares_owed)
        conn->spares_owed--;
    if (!r)
        return FFB_E_PROTO;
    if (ffb__status_is_error(&r->status))
        return 0; /* fewer spares: a later prepare allocates its own */
    uint16_t h = (uint16_t)r->object;
    if (conn->nspare < sizeof(conn->spare) / sizeof(conn->spare[0])) {
        conn->spare[conn->nspare++] = h;
        return 0;
    }
    ffbp_writer w; /* no room (cannot happen: bounded when queued) */
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_free_statement(&w, h, FFBP_DSQL_DROP);
    int rc = ffb__queue_fire_and_forget(conn, &w, FFBP_OP_FREE_STATEMENT, 1);
    ffbp_writer_free(&w);
    return rc < 0 ? rc : 0;
}

/*
 * Queue op_allocate_statement for spare handles until `want` are at hand
 * or owed (reference 02, 7.8 "grow a pool of handles": the answers are
 * held back and come with the next flushed request, no round trip of
 * their own). The server's last object becomes a handle nothing names,
 * so this is done only while no request to come may name an earlier
 * object as 0xFFFF (the caller checks, or nothing is queued yet).
 */
int ffb__spares_queue(ffb_conn *conn, size_t want) {
    size_t cap = sizeof(conn->spare) / sizeof(conn->spare[0]);
    if (want > cap)
        want = cap;
    while (conn->nspare + conn->spares_owed < want) {
        int rc = put_allocate(conn);
        if (rc < 0)
            return rc;
        ffb__pending *p = ffb__engine_expect(conn, FFBP_OP_ALLOCATE_STATEMENT,
                                             spare_reply, NULL);
        if (!p)
            return ffb__engine_fail(conn, FFB_E_NOMEM);
        p->deferred = 1;
        conn->spares_owed++;
        conn->last_kind = FFB__LAST_OTHER;
        conn->last_obj = NULL;
    }
    return 0;
}

/* Prepare on a known handle with remembered formats: the prepare is queued
   and rides with the next request (reference 02, 7.8: "new SQL on a known,
   already allocated handle, types known in advance"). */
int ffb__stmt_prepare_lazy(ffb_stmt *stmt, ffb_tx *tx, const ffb__memo *m) {
    ffb_conn *conn = stmt->conn;
    int rc = keep_sql(stmt, m->sql, m->len);
    if (rc < 0)
        return rc;
    take_spare(stmt);
    /* Without a handle (no spare one): allocated in the same write, the
       prepare naming it as the server's last object. */
    int allocate = !stmt->has_handle && !stmt->alloc_queued;
    if (!stmt->has_handle && !allocate)
        return FFB_E_STATE;
    uint16_t txh = 0;
    if (tx) {
        if (tx->state == FFB__TX_ACTIVE)
            txh = tx->handle;
        else if (tx->state == FFB__TX_PENDING && conn->protocol >= 16)
            txh = 0;
        else if ((rc = ffb__tx_handle(tx, &txh)) != 0 ||
                 (txh == 0xFFFF && allocate))
            /* A lazy start stays nameable as 0xFFFF on a spare handle
               (nothing is allocated behind it), not behind an
               allocation (Firebird 3 refuses transaction 0). */
            return rc < 0 ? rc : FFB_E_STATE;
    }
    if ((rc = queue_close(stmt)) < 0)
        return rc;
    params_free(stmt);
    ffb__meta_free(conn, &stmt->in);
    retire_out(stmt);
    desc_free(stmt);
    stmt->gen++;
    rows_reset(stmt);
    if (ffb__meta_copy(conn, &stmt->in, &m->in) < 0 ||
        ffb__meta_copy(conn, &stmt->out, &m->out) < 0)
        return FFB_E_NOMEM;
    if ((rc = alloc_buffers(stmt)) < 0)
        return rc;
    stmt->stmt_type = m->stmt_type;
    stmt->stmt_flags = m->stmt_flags;
    stmt->fetch_count = m->fetch_count;
    stmt->lazy = 1;
    stmt->meta_changed = 0;
    stmt->lazy_truncated = 0;
    ffb__free(conn->alloc, stmt->prepare_err);
    stmt->prepare_err = NULL;

    size_t ilen;
    const uint8_t *items = ffbp_describe_items(&ilen);
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    uint16_t sh = stmt->handle;
    if (allocate) {
        ffbp_writer_free(&w);
        if ((rc = queue_allocate(stmt, NULL)) < 0)
            return rc;
        sh = 0xFFFF;
    } else {
        /* Unprepare first: a spare handle may still hold an old
           statement. */
        ffbp_put_free_statement(&w, stmt->handle, FFBP_DSQL_UNPREPARE);
        rc = ffb__queue_fire_and_forget(conn, &w, FFBP_OP_FREE_STATEMENT, 1);
        ffbp_writer_free(&w);
        if (rc < 0)
            return rc;
    }
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_prepare(&w, txh, sh, (uint16_t)conn->dialect, m->sql,
                     m->len, items, ilen, PREPARE_BUFFER, conn->protocol);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
        return rc;
    ffb__pending *p =
        expect(conn, FFBP_OP_PREPARE_STATEMENT, prepare_reply, stmt, NULL);
    if (!p)
        return FFB_E_NOMEM;
    p->gen = ++stmt->prep_gen;
    stmt->prepared = 1;
    return 0;
}

/* ---- prepare --------------------------------------------------------------------- */

static int describe_more_reply(ffb_conn *conn, const ffbp_packet *pkt,
                               ffb__pending *p);

/* A describe too large for one answer: ask for the rest of one side, as
   the next step of the prepare - the request `p` hands its completion to
   it (1; 0 when nothing was asked, an error code). Each answer must complete at least one more variable, so a server
   cannot keep the client asking (at most 2 x MAX_VARS requests). */
static int describe_continue(ffb_stmt *stmt, ffb__pending *p) {
    ffb_conn *conn = stmt->conn;
    int sel;
    uint32_t start;
    if (!describe_next(stmt, &sel, &start))
        return 0;
    uint64_t asked = (uint64_t)sel << 32 | start;
    if (stmt->desc_asked && asked <= stmt->desc_asked)
        return ffb__fatal(conn, FFB_E_PROTO,
                          "the server's describe continuation did not "
                          "advance (still at %s %u)",
                          sel ? "column" : "parameter", (unsigned)start);
    stmt->desc_asked = asked;
    if (p->sync && p->sync->rc < 0)
        return 0; /* an earlier step failed: the prepare ends here */
    uint8_t cont[32];
    size_t clen = ffbp_describe_continue_items(cont, sel, start);
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_info(&w, FFBP_OP_INFO_SQL, stmt->handle, 0, cont, clen,
                  PREPARE_BUFFER);
    int rc = ffb__queue_free(conn, &w, 1);
    if (rc < 0)
        return rc;
    /* `p` is the engine's copy of the request being answered. */
    ffb__pending *q =
        expect(conn, FFBP_OP_INFO_SQL, describe_more_reply, stmt, p->sync);
    if (!q)
        return FFB_E_NOMEM;
    q->completes = p->completes;
    q->gen = stmt->prep_gen;
    p->completes = 0;
    p->sync = NULL;
    return 1;
}

/* The last step of a prepare was answered (or failed): the statement can
   be executed, and executions held behind it go. */
static void prepare_end(ffb_stmt *stmt, ffb__pending *p, int rc) {
    if (p->gen != stmt->prep_gen)
        return; /* a newer prepare owns the statement */
    stmt->prepare_pending = 0;
    stmt->describe_incomplete = 0;
    if (stmt->retired)
        retired_prune(stmt); /* the answers that used them are in */
    if (rc == 0 && !stmt->prepared && (!p->sync || p->sync->rc == 0))
        ffb__fatal(stmt->conn, FFB_E_PROTO,
                   "prepare answered without a describe");
}

static int alloc_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    ffb_stmt *stmt = p->ctx;
    if (!ffb__reply_response(conn, pkt, p))
        return done(p, FFB_E_PROTO);
    stmt->alloc_queued = 0;
    if (ffb__status_is_error(&pkt->u.response.status)) {
        ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER,
                              &pkt->u.response.status,
                              "allocating a statement handle failed");
        return done(p, 0);
    }
    stmt->handle = pkt->u.response.object;
    stmt->has_handle = 1;
    if (stmt->freed) {
        /* Freed before its handle was known: drop it now. */
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        ffbp_put_free_statement(&w, stmt->handle, FFBP_DSQL_DROP);
        ffb__queue_fire_and_forget(conn, &w, FFBP_OP_FREE_STATEMENT, 1);
        ffbp_writer_free(&w);
    }
    return done(p, 0);
}

static int prepare_reply(ffb_conn *conn, const ffbp_packet *pkt,
                         ffb__pending *p) {
    ffb_stmt *stmt = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return done(p, FFB_E_PROTO);
    if (ffb__status_is_error(&r->status)) {
        ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, &r->status,
                              "prepare failed");
        if (stmt->lazy) {
            /* Requests queued behind it fail as a consequence; they report
               this error. */
            if (!stmt->prepare_err)
                stmt->prepare_err = ffb__malloc(conn->alloc, sizeof(ffb_error));
            if (stmt->prepare_err)
                ffb__error_from_status(stmt->prepare_err, FFB_E_SERVER,
                                       &r->status, "prepare failed");
            stmt->prepared = 0;
        } else {
            prepare_end(stmt, p, FFB_E_SERVER);
        }
        return done(p, 0);
    }
    /* Only a newer prepare makes this answer stale (executions queued
       behind a lazy prepare bump `gen`, and must see its describe; so
       must executions held behind the prepare of a statement freed
       meanwhile, which their references keep). */
    if (p->gen != stmt->prep_gen)
        return done(p, 0);
    stmt->prepare_flags = r->object;
    int continued = 0;
    int rc = parse_describe(stmt, r->data.p, r->data.len);
    if (rc == 0) {
        int sel;
        uint32_t start;
        int more = describe_next(stmt, &sel, &start);
        if (more && stmt->lazy) {
            /* The new describe did not fit one answer, so the remembered
               formats cannot be checked here: the statement is prepared
               again before the blocking execute runs it once more. */
            stmt->lazy_truncated = 1;
            stmt->meta_changed = 3;
            desc_free(stmt);
        } else if (more) {
            stmt->describe_incomplete = 1;
            rc = own_strings(stmt, r->data.p, r->data.len);
            if (rc == 0 && (rc = describe_continue(stmt, p)) == 1) {
                rc = 0;
                continued = 1;
            }
        }
        else if (stmt->lazy)
            rc = lazy_done(stmt);
        else
            rc = describe_done(stmt);
        /* A describe read in full that was not remembered as it is: the
           shared format memory keeps it for the other connections. */
        if (rc == 1) {
            rc = 0;
            ffb__formats_put(conn, stmt);
        } else if (rc == 0 && stmt->share && !continued && !more &&
                   (!stmt->lazy || stmt->meta_changed) &&
                   !stmt->lazy_truncated) {
            ffb__formats_put(conn, stmt);
        }
    }
    if (rc < 0 && p->sync && p->sync->rc == 0)
        p->sync->rc = rc;
    if (!stmt->lazy && !continued)
        prepare_end(stmt, p, rc);
    if (rc < 0 && stmt->lazy && rc > FFB_E_FATAL) {
        /* Nobody waits on a lazy prepare: the execution behind it reports
           why the statement cannot run (a type it cannot receive, ...). */
        if (!stmt->prepare_err)
            stmt->prepare_err = ffb__malloc(conn->alloc, sizeof(ffb_error));
        if (stmt->prepare_err)
            *stmt->prepare_err = conn->err;
        stmt->prepared = 0;
    }
    return done(p, rc <= FFB_E_FATAL ? rc : 0);
}

/* Answer to op_info_sql continuing a describe. */
static int describe_more_reply(ffb_conn *conn, const ffbp_packet *pkt,
                               ffb__pending *p) {
    ffb_stmt *stmt = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return done(p, FFB_E_PROTO);
    if (p->gen != stmt->prep_gen)
        return done(p, 0); /* of an older prepare: the new one owns it */
    if (ffb__status_is_error(&r->status)) {
        ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, &r->status,
                              "reading the rest of the describe failed");
        prepare_end(stmt, p, FFB_E_SERVER);
        return done(p, 0);
    }
    int continued = 0;
    int rc = parse_describe(stmt, r->data.p, r->data.len);
    if (rc == 0) {
        int sel;
        uint32_t start;
        if (!describe_next(stmt, &sel, &start)) {
            stmt->describe_incomplete = 0;
            rc = describe_done(stmt);
        } else {
            rc = own_strings(stmt, r->data.p, r->data.len);
            if (rc == 0 && (rc = describe_continue(stmt, p)) == 1) {
                rc = 0;
                continued = 1;
            }
        }
    }
    if (rc < 0 && p->sync && p->sync->rc == 0)
        p->sync->rc = rc;
    if (!continued)
        prepare_end(stmt, p, rc);
    return done(p, rc <= FFB_E_FATAL ? rc : 0);
}

/* Remember the SQL text (for re-preparing stale statements). */
static int keep_sql(ffb_stmt *stmt, const char *sql, size_t len) {
    ffb_conn *conn = stmt->conn;
    if (stmt->sql && stmt->sql_len == len && memcmp(stmt->sql, sql, len) == 0)
        return 0;
    char *c = ffb__malloc(conn->alloc, len + 1);
    if (!c)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    memcpy(c, sql, len);
    c[len] = '\0';
    ffb__free(conn->alloc, stmt->sql);
    stmt->sql = c;
    stmt->sql_len = len;
    return 0;
}

/* A handle for a statement that has none: a spare one, if any. */
static void take_spare(ffb_stmt *stmt) {
    ffb_conn *conn = stmt->conn;
    if (!stmt->has_handle && !stmt->alloc_queued && conn->nspare) {
        stmt->handle = conn->spare[--conn->nspare];
        stmt->has_handle = 1;
    }
}

int ffb__prepare_tx_check(ffb_conn *conn, ffb_tx *tx) {
    if (!tx && conn->protocol < 16)
        /* Firebird 3 answers isc_bad_trans_handle to a prepare in
           transaction 0: say so before anything is sent. */
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "Firebird 3 prepares only inside a "
                              "transaction: pass one (tx NULL needs "
                              "Firebird 4 or later)");
    if (tx && tx->conn != conn)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "transaction of another connection");
    if (tx && tx->state != FFB__TX_ACTIVE && tx->state != FFB__TX_PENDING) {
        uint16_t h;
        return ffb__tx_handle(tx, &h); /* the error for an ended one */
    }
    return 0;
}

/* The transaction and statement fields of a prepare can be written now
   (0) or only after an answer that is owed (FFB__LATER). */
static int prepare_nameable(ffb_stmt *stmt, ffb_tx *tx) {
    ffb_conn *conn = stmt->conn;
    if (tx && tx->state == FFB__TX_PENDING && conn->protocol < 16)
        /* Firebird 3 refuses to prepare with transaction 0
           (isc_bad_trans_handle, contrary to reference 02, 3.3): the real
           handle first. */
        return FFB__LATER;
    if (!stmt->has_handle && stmt->alloc_queued &&
        !(conn->last_kind == FFB__LAST_STMT && conn->last_obj == stmt))
        return FFB__LATER; /* allocated earlier, not the last object now */
    return 0;
}

/* Encode a prepare: the allocation when the statement has no handle, the
   prepare with the describe items; the answer's handler asks for the rest
   of a long describe and completes `sync` at the end. */
static int prepare_send(ffb_stmt *stmt, ffb_tx *tx, const char *sql,
                        size_t len, ffb__sync *sync) {
    ffb_conn *conn = stmt->conn;
    int rc = keep_sql(stmt, sql, len);
    if (rc < 0)
        return rc;
    sql = stmt->sql; /* the caller's copy may be the held one */
    stmt->lazy = 0;
    stmt->meta_changed = 0;
    stmt->lazy_truncated = 0;
    ffb__free(conn->alloc, stmt->prepare_err);
    stmt->prepare_err = NULL;
    take_spare(stmt);

    uint16_t txh = 0;
    if (tx) {
        /* A lazy start cannot be named once we allocate behind it; the
           metadata is then read in a system transaction (handle 0). */
        if (tx->state == FFB__TX_ACTIVE)
            txh = tx->handle;
        else if (tx->state != FFB__TX_PENDING)
            return ffb__tx_handle(tx, &txh);
    }

    /* Re-preparing over an open cursor blocks the handle until the
       transaction ends (reference 02, 5.4): close it in the same write. */
    rc = queue_close(stmt);
    if (rc < 0)
        return rc;
    stmt->prepared = 0;
    stmt->stmt_type = 0;
    stmt->stmt_flags = -1;
    params_free(stmt);
    ffb__meta_free(conn, &stmt->in);
    retire_out(stmt);
    desc_free(stmt);
    stmt->describe_incomplete = 0;
    stmt->singleton = 0;
    stmt->gen++;
    rows_reset(stmt);

    ffbp_writer w;
    uint16_t sh;
    if (!stmt->has_handle && !stmt->alloc_queued &&
        (rc = queue_allocate(stmt, sync)) < 0)
        return rc;
    if (stmt->has_handle)
        sh = stmt->handle;
    else if (conn->last_kind == FFB__LAST_STMT && conn->last_obj == stmt)
        sh = 0xFFFF; /* the statement allocated last */
    else
        return ffb__fatal(conn, FFB_E_PROTO,
                          "internal error: statement handle not known");

    size_t ilen;
    const uint8_t *items = ffbp_describe_items(&ilen);
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_prepare(&w, txh, sh, (uint16_t)conn->dialect, sql, len, items,
                     ilen, PREPARE_BUFFER, conn->protocol);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
        return rc;
    ffb__pending *p = expect(conn, FFBP_OP_PREPARE_STATEMENT, prepare_reply,
                             stmt, sync);
    if (!p)
        return FFB_E_NOMEM;
    p->gen = ++stmt->prep_gen;
    p->completes = 1;
    stmt->prepare_pending = 1;
    return 0;
}

static int held_prepare_send(ffb_conn *conn, ffb__held *h) {
    ffb_stmt *stmt = h->stmt;
    if (prepare_nameable(stmt, h->tx) == FFB__LATER)
        return FFB__LATER;
    stmt->prepare_held--;
    ffb__held_done(conn, h,
                   prepare_send(stmt, h->tx, h->sql, h->sql_len, h->sync));
    return 0;
}

static void held_prepare_drop(ffb_conn *conn, ffb__held *h, int rc) {
    h->stmt->prepare_held--;
    ffb__held_drop(conn, h, rc);
}

int ffb__stmt_queue_prepare(ffb_stmt *stmt, ffb_tx *tx, const char *sql,
                            size_t len, ffb__sync *sync) {
    ffb_conn *conn = stmt->conn;
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (stmt->freed)
        return ffb__error_set(&conn->err, FFB_E_STATE, "statement was freed");
    if (len == (size_t)-1)
        len = strlen(sql);
    if (len == 0 || len > 10 * 1024 * 1024)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "SQL text must be 1 byte to 10 MiB long");
    if ((rc = ffb__prepare_tx_check(conn, tx)) < 0)
        return rc; /* the statement is left as it was */
    if (!conn->held_head && prepare_nameable(stmt, tx) == 0)
        return prepare_send(stmt, tx, sql, len, sync);
    /* A handle it names is owed, or requests before it wait. */
    ffb__held *h = ffb__malloc(conn->alloc, sizeof(*h));
    char *copy = ffb__malloc(conn->alloc, len + 1);
    if (!h || !copy) {
        ffb__free(conn->alloc, h);
        ffb__free(conn->alloc, copy);
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    }
    memset(h, 0, sizeof(*h));
    memcpy(copy, sql, len);
    copy[len] = '\0';
    h->sql = copy;
    h->sql_len = len;
    stmt->prepare_held++;
    ffb__held_push(conn, h, held_prepare_send, held_prepare_drop, stmt, tx,
                   sync);
    return 0;
}

/* ---- execute ------------------------------------------------------------------------ */

void ffb__put_param(ffbp_writer *w, const ffb__param *pa) {
    switch (pa->item.blr) {
    case FFBP_BLR_VARYING:
    case FFBP_BLR_VARYING2:
        ffbp_put_u32(w, (uint32_t)pa->len);
        ffbp_put_opaque(w, pa->data, pa->len);
        break;
    case FFBP_BLR_TEXT:
    case FFBP_BLR_TEXT2:
        ffbp_put_opaque(w, pa->data, pa->len);
        break;
    default:
        ffbp_put_opaque(w, pa->fixed, ffbp_item_wire_size(&pa->item));
        break;
    }
}

static int has_cursor(const ffb_stmt *stmt) {
    if (stmt->stmt_flags >= 0)
        return (stmt->stmt_flags & 1) != 0;
    return stmt->stmt_type == FFB_STMT_SELECT ||
           stmt->stmt_type == FFB_STMT_SELECT_FOR_UPDATE;
}

/* Build the input BLR and message from the bound parameters. */
int ffb__stmt_build_input(ffb_stmt *stmt, ffbp_writer *blr, ffbp_writer *msg) {
    ffb_conn *conn = stmt->conn;
    size_t n = stmt->in.n;
    if (n == 0)
        return 0;
    ffbp_item few[16]; /* most statements: no allocation */
    ffbp_item *items =
        n <= 16 ? few : ffb__malloc(conn->alloc, n * sizeof(*items));
    if (!items)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const ffb__param *pa = &stmt->params[i];
        if (!pa->set) {
            if (items != few)
                ffb__free(conn->alloc, items);
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "parameter %zu of %zu is not bound", i + 1,
                                  n);
        }
        items[i] = pa->is_null ? stmt->in.items[i] : pa->item;
    }
    int rc = ffbp_put_blr(blr, items, n);
    if (items != few)
        ffb__free(conn->alloc, items);
    if (rc != FFBP_OK)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "cannot build the parameter BLR");
    size_t bm = ffbp_msg_begin(msg, n);
    for (size_t i = 0; i < n; i++) {
        const ffb__param *pa = &stmt->params[i];
        if (pa->is_null) {
            ffbp_msg_set_null(msg, bm, i);
            continue;
        }
        ffb__put_param(msg, pa);
    }
    if (blr->failed || msg->failed)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    return 0;
}

static int row_append(ffb_stmt *stmt, const ffbp_fetch_response *f,
                      const uint32_t *off, const uint32_t *len) {
    ffb_conn *conn = stmt->conn;
    size_t n = stmt->out.n;
    if (stmt->nrows == stmt->rows_cap) {
        size_t cap = stmt->rows_cap ? stmt->rows_cap * 2 : 64;
        ffb__row *v = ffb__realloc(conn->alloc, stmt->rowv, cap * sizeof(*v));
        if (!v)
            return FFB_E_NOMEM;
        stmt->rowv = v;
        stmt->rows_cap = cap;
    }
    size_t need = (stmt->nrows + 1) * (n ? n : 1);
    if (need > stmt->roff_cap) {
        size_t cap = stmt->roff_cap ? stmt->roff_cap * 2 : 256;
        while (cap < need)
            cap *= 2;
        uint32_t *o = ffb__realloc(conn->alloc, stmt->row_off,
                                   cap * sizeof(uint32_t));
        if (!o)
            return FFB_E_NOMEM;
        stmt->row_off = o;
        uint32_t *l = ffb__realloc(conn->alloc, stmt->row_len,
                                   cap * sizeof(uint32_t));
        if (!l)
            return FFB_E_NOMEM;
        stmt->row_len = l;
        stmt->roff_cap = cap;
    }
    ffb__row *r = &stmt->rowv[stmt->nrows];
    r->pos = stmt->rows.len;
    r->len = f->msg_len;
    r->offs = stmt->nrows * (n ? n : 1);
    ffbp_put_raw(&stmt->rows, f->msg, f->msg_len);
    if (stmt->rows.failed)
        return FFB_E_NOMEM;
    if (n) {
        memcpy(stmt->row_off + r->offs, off, n * sizeof(uint32_t));
        memcpy(stmt->row_len + r->offs, len, n * sizeof(uint32_t));
    }
    stmt->nrows++;
    stmt->rows_seen++;
    return 0;
}

static void save_row_error(ffb_stmt *stmt, const ffbp_status *st) {
    ffb_conn *conn = stmt->conn;
    if (!stmt->row_err)
        stmt->row_err = ffb__malloc(conn->alloc, sizeof(ffb_error));
    if (stmt->row_err)
        ffb__error_from_status(stmt->row_err, FFB_E_SERVER, st,
                               "fetching rows failed");
    stmt->fetch_error = 1;
}

/* Answer to op_execute (cursor open, DML, DDL). */
static int exec_reply(ffb_conn *conn, const ffbp_packet *pkt,
                      ffb__pending *p) {
    ffb_stmt *stmt = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return done(p, FFB_E_PROTO);
    ffb_tx *end = NULL;
    if (ffb__status_is_error(&r->status)) {
        fail_request(conn, p, &r->status, NULL);
        if (p->gen == stmt->gen) {
            stmt->cursor_open = 0; /* the cursor did not open */
            stmt->eof = 1;
            end = take_auto(stmt);
        }
    }
    int rc = done(p, 0);
    if (end)
        auto_commit(conn, end);
    return rc;
}

/* Rows of the current execution arrived in formats a lazy prepare's
   describe has replaced: they are dropped, and the execution fails with a
   clear error (the blocking execute then runs it again with the new
   formats). */
static void stale_formats(ffb_conn *conn, ffb__pending *p) {
    if (!p->sync || p->sync->rc != 0)
        return;
    ffb__error_set(ffb__sync_error(conn, p->sync), FFB_E_STATE,
                   "the statement changed on the server since its formats "
                   "were remembered: its rows were not kept; execute it "
                   "again");
    p->sync->rc = FFB_E_STATE;
}

/* Answers to op_fetch: rows, then a terminator or an error. */
static int fetch_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    ffb_stmt *stmt = p->ctx;
    int current = p->gen == stmt->gen && !stmt->freed;
    if (pkt->op == FFBP_OP_FETCH_RESPONSE) {
        const ffbp_fetch_response *f = &pkt->u.fetch;
        if (f->count) {
            /* The server sends at most the rows asked for, then the
               terminator: a stream of rows beyond that is not an answer
               to this fetch (and would grow the buffer without end). */
            if (++p->got > p->limit)
                return done(p, ffb__error_set(
                                   &conn->err, FFB_E_PROTO,
                                   "the server sent more rows than the %u "
                                   "asked for by op_fetch",
                                   (unsigned)p->limit));
            /* Rows decoded with formats a lazy prepare's describe has
               replaced are dropped: the statement runs again with the new
               ones (and the arrays differ in length). */
            if (current && p->items != stmt->out.items)
                stale_formats(conn, p);
            else if (current && row_append(stmt, f, p->off, p->len) < 0)
                return done(p, ffb__fatal(conn, FFB_E_NOMEM,
                                              "out of memory for rows"));
            return 1; /* more rows or the terminator follow */
        }
        ffb_tx *end = NULL;
        if (current) {
            stmt->fetches_inflight--;
            if (stmt->scroll_open) {
                /* A move past either end (status 100), or nothing found:
                   no row, but the cursor stays open and may move back. */
                if (f->status == 100 || p->got == 0)
                    stmt->eof = 1;
            } else if (f->status == 100) {
                stmt->eof = 1;
                end = take_auto(stmt); /* the cursor is done */
            }
        }
        int rc = done(p, 0);
        if (end)
            auto_commit(conn, end); /* rides with the next request */
        return rc;
    }
    if (!ffb__reply_response(conn, pkt, p))
        return done(p, FFB_E_PROTO);
    /* An error in place of the rows. */
    if (current) {
        stmt->fetches_inflight--;
        if (!stmt->eof) {
            /* A fetch after the end answers isc_req_sync: drained. */
            if (p->sync && p->sync->rc == 0)
                fail_request(conn, p, &pkt->u.response.status,
                             "fetching rows failed");
            else if (!p->sync)
                save_row_error(stmt, &pkt->u.response.status);
            stmt->eof = 1;
        }
    }
    ffb_tx *end =
        current && stmt->eof && !stmt->scroll_open ? take_auto(stmt) : NULL;
    int rc = done(p, 0);
    if (end)
        auto_commit(conn, end);
    return rc;
}

/* Answers to op_execute2: op_sql_response, then op_response. */
static int exec2_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    ffb_stmt *stmt = p->ctx;
    if (pkt->op == FFBP_OP_SQL_RESPONSE) {
        /* One output row, then op_response. */
        if (++p->got > 1)
            return done(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                          "the server sent more than one "
                                          "op_sql_response to op_execute2"));
        if (pkt->u.fetch.count && p->gen == stmt->gen &&
            p->items != stmt->out.items)
            stale_formats(conn, p);
        else if (pkt->u.fetch.count && p->gen == stmt->gen &&
                 row_append(stmt, &pkt->u.fetch, p->off, p->len) < 0)
            return done(p, ffb__fatal(conn, FFB_E_NOMEM,
                                          "out of memory for rows"));
        return 1;
    }
    if (!ffb__reply_response(conn, pkt, p))
        return done(p, FFB_E_PROTO);
    if (ffb__status_is_error(&pkt->u.response.status)) {
        fail_request(conn, p, &pkt->u.response.status, NULL);
        if (p->gen == stmt->gen)
            rows_reset(stmt);
    }
    return done(p, 0);
}

/* Answer to op_info_sql(isc_info_sql_records). */
/* Rows inserted + updated + deleted (records[1..3]); -1 when unknown. */
static int64_t records_total(const int64_t records[4]) {
    if (records[1] < 0 && records[2] < 0 && records[3] < 0)
        return -1;
    int64_t n = 0;
    for (int i = 1; i < 4; i++)
        if (records[i] > 0)
            n += records[i];
    return n;
}

static int records_reply(ffb_conn *conn, const ffbp_packet *pkt,
                         ffb__pending *p) {
    ffb_stmt *stmt = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return done(p, FFB_E_PROTO);
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, NULL, 0, NULL, 0);
    if (!ffb__status_is_error(&r->status) &&
        ffbp_parse_describe(r->data.p, r->data.len, &d) == FFBP_OK) {
        /* Each queued execution keeps its own count; the statement shows
           the latest. */
        if (p->sync) {
            p->sync->has_rows = 1;
            p->sync->rows = records_total(d.records);
        }
        if (p->gen == stmt->gen)
            memcpy(stmt->records, d.records, sizeof(stmt->records));
    }
    return done(p, 0);
}

/* Queue op_info_sql(isc_info_sql_records) behind an execution: its answer
   completes the sync and gives ffb_stmt_rows_affected(). */
static int queue_records(ffb_stmt *stmt, ffb__sync *sync) {
    ffb_conn *conn = stmt->conn;
    static const uint8_t items[] = {FFBP_INFO_SQL_RECORDS, FFBP_INFO_END};
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_info(&w, FFBP_OP_INFO_SQL, stmt->handle, 0, items, sizeof(items),
                  64);
    int rc = ffb__queue_free(conn, &w, 1);
    if (rc < 0)
        return rc;
    ffb__pending *p = expect(conn, FFBP_OP_INFO_SQL, records_reply, stmt, sync);
    if (!p)
        return FFB_E_NOMEM;
    p->completes = 1;
    return 0;
}

int ffb__stmt_queue_fetch_one(ffb_stmt *stmt, int fetch_op, int32_t pos,
                              uint16_t count, ffb__sync *sync, int completes) {
    ffb_conn *conn = stmt->conn;
    uint8_t buf[256]; /* the packet is copied to the stage and freed */
    ffbp_writer w;
    ffbp_writer_init_buf(&w, conn->alloc, buf, sizeof(buf));
    int32_t op = FFBP_OP_FETCH;
    if (stmt->scroll_open) {
        /* The BLR goes with the first fetch only (what fbclient does); the
           rows still buffered are no longer where the cursor is. */
        op = FFBP_OP_FETCH_SCROLL;
        ffbp_put_fetch_scroll(&w, stmt->handle, stmt->out.blr,
                              stmt->scroll_blr_sent ? 0 : stmt->out.blr_len,
                              count, fetch_op, pos);
        stmt->scroll_blr_sent = 1;
        if (stmt->nrows || stmt->cur)
            rows_reset(stmt);
        stmt->eof = 0;
        if (fetch_op == FFBP_FETCH_PRIOR || fetch_op == FFBP_FETCH_NEXT)
            stmt->scroll_dir = fetch_op;
        else
            stmt->scroll_dir = FFBP_FETCH_NEXT;
    } else {
        /* The first fetch after an execute must carry the BLR; sending it
           every time is harmless and keeps the fetches independent. */
        ffbp_put_fetch(&w, stmt->handle, stmt->out.blr, stmt->out.blr_len,
                       count);
    }
    int rc = ffb__queue_free(conn, &w, 1);
    if (rc < 0)
        return rc;
    ffb__pending *p = expect(conn, op, fetch_reply, stmt, sync);
    if (!p)
        return FFB_E_NOMEM;
    p->items = stmt->out.items;
    p->nitems = stmt->out.n;
    p->off = stmt->scratch_off;
    p->len = stmt->scratch_len;
    /* Only next and prior return more than one row (reference 03, C.8.2). */
    p->limit = count;
    p->completes = completes;
    stmt->fetches_inflight++;
    return 0;
}

/* Queue `depth` fetches of `count` rows. */
static int queue_fetches(ffb_stmt *stmt, unsigned depth, uint16_t count,
                         ffb__sync *sync) {
    for (unsigned i = 0; i < depth; i++) {
        int rc = ffb__stmt_queue_fetch_one(stmt, FFBP_FETCH_NEXT, 0, count,
                                           i + 1 == depth ? sync : NULL,
                                           i + 1 == depth);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Library-side failure of a queued request, reported through its sync. */
static int sync_lib_fail(ffb_conn *conn, ffb__sync *sync, int rc) {
    /* Only a failure has an error to keep: on success this allocated and
       copied a whole ffb_error (4 KiB) per execution. */
    if (sync && sync->own_err && rc < 0 && rc > FFB_E_FATAL) {
        ffb_error *e = ffb__sync_error(conn, sync);
        if (e != &conn->err)
            *e = conn->err;
    }
    return rc;
}

/* The transaction field of a request can be written now (NULL: an
   auto-commit transaction that the request starts itself). */
static int tx_nameable(ffb_tx *tx) {
    uint16_t h;
    return !tx || ffb__tx_handle(tx, &h) != FFB__LATER;
}


/* An execution can be encoded now: its statement's handle is known
   (op_execute and op_fetch never take 0xFFFF: the server's decoder needs
   the real handle and drops the connection otherwise - reference 02, 6),
   and its transaction can be named. */
static int exec_nameable(const ffb_stmt *stmt, ffb_tx *tx) {
    return stmt->has_handle && tx_nameable(tx);
}

static int exec_send(ffb_stmt *stmt, ffb_tx *tx, ffb__sync *sync,
                     ffb__held *held);

static int held_exec_send(ffb_conn *conn, ffb__held *h) {
    ffb_stmt *stmt = h->stmt;
    /* A prepare sent before it must be answered, and an allocation queued
       before it (a lazy prepare) too. Prepares held are behind it: the
       queue is in order, so they never hold it up. */
    if (stmt->prepare_pending || (!stmt->has_handle && stmt->alloc_queued))
        return FFB__LATER;
    if (stmt->prepared && stmt->has_handle && !tx_nameable(h->tx))
        return FFB__LATER;
    stmt->exec_held--;
    int rc;
    if (!stmt->prepared || !stmt->has_handle) {
        /* The prepare before it failed: its result says why. */
        ffb__error_set(&conn->err, FFB_E_ABORTED,
                       "not sent: the statement's prepare failed");
        rc = FFB_E_ABORTED;
    } else {
        rc = exec_send(stmt, h->tx, h->sync, h);
    }
    ffb__held_done(conn, h, rc);
    return 0;
}

static void held_exec_drop(ffb_conn *conn, ffb__held *h, int rc) {
    h->stmt->exec_held--;
    ffb__held_drop(conn, h, rc);
}

int ffb__stmt_queue_execute(ffb_stmt *stmt, ffb_tx *tx, ffb__sync *sync) {
    ffb_conn *conn = stmt->conn;
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    int preparing = stmt->prepare_pending || stmt->prepare_held;
    if (stmt->freed ||
        (!preparing &&
         (!stmt->prepared || (!stmt->has_handle && !stmt->alloc_queued))))
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the statement is not prepared");
    if (tx && tx->conn != conn)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "transaction of another connection");
    int single = preparing || has_cursor(stmt) || stmt->out.n;
    if (stmt->exec_inflight || (single && stmt->exec_held))
        /* Its rows and counts would be overwritten by the next one. */
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the statement's previous execution has not "
                              "been answered yet: a statement with a result "
                              "set or output runs one execution at a time "
                              "(queue other statements, for example from "
                              "ffb_conn_prepare())");
    if (!conn->held_head && !preparing && exec_nameable(stmt, tx))
        return exec_send(stmt, tx, sync, NULL);
    /* The transaction's handle is owed (something was allocated after its
       start), or requests before this one wait: this one waits behind
       them, with its parameters as they are bound now. */
    ffb__held *h = ffb__malloc(conn->alloc, sizeof(*h));
    if (!h)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    memset(h, 0, sizeof(*h));
    ffbp_writer_init(&h->blr, conn->alloc);
    ffbp_writer_init(&h->msg, conn->alloc);
    /* Behind a prepare its input is built when it is sent (nothing can be
       bound before the describe). */
    if (!preparing &&
        (rc = ffb__stmt_build_input(stmt, &h->blr, &h->msg)) < 0) {
        ffbp_writer_free(&h->blr);
        ffbp_writer_free(&h->msg);
        ffb__free(conn->alloc, h);
        return rc;
    }
    h->prepared = !preparing;
    stmt->exec_held++;
    ffb__held_push(conn, h, held_exec_send, held_exec_drop, stmt, tx, sync);
    return 0;
}

/* Encode an execution (its input built now, or when it was held). */
static int exec_send(ffb_stmt *stmt, ffb_tx *tx, ffb__sync *sync,
                     ffb__held *held) {
    ffb_conn *conn = stmt->conn;
    int rc = 0;
    if (stmt->retired)
        retired_prune(stmt);
    ffb_tx *auto_tx = NULL; /* before the first goto out */
    /* The packets of an execution are encoded, copied to the stage and
       freed here: they start on the stack (no allocation per request). */
    uint8_t blr_buf[128], msg_buf[256], pkt_buf[512];
    ffbp_writer blr, msg;
    if (held && held->prepared) {
        /* The held ones are the heap's; these (empty) go to the hold
           entry, which is freed without being written to again. */
        ffbp_writer_init(&blr, conn->alloc);
        ffbp_writer_init(&msg, conn->alloc);
        ffbp_writer t = blr;
        blr = held->blr;
        held->blr = t;
        t = msg;
        msg = held->msg;
        held->msg = t;
    } else {
        ffbp_writer_init_buf(&blr, conn->alloc, blr_buf, sizeof(blr_buf));
        ffbp_writer_init_buf(&msg, conn->alloc, msg_buf, sizeof(msg_buf));
        if ((rc = ffb__stmt_build_input(stmt, &blr, &msg)) < 0)
            goto out;
    }
    /* The cursor still open from the last execution ends first (with an
       auto-commit transaction, before the new one starts). */
    if ((rc = queue_close(stmt)) < 0)
        goto out;
    if (!tx) {
        /* Auto-commit: a transaction of its own, started in this write. */
        if ((rc = ffb_tx_begin(conn, NULL, &auto_tx)) < 0)
            goto out;
        tx = auto_tx;
    }
    uint16_t txh = 0;
    if ((rc = ffb__tx_handle(tx, &txh)) != 0) {
        if (rc == FFB__LATER) /* callers checked: cannot happen */
            rc = ffb__fatal(conn, FFB_E_PROTO,
                            "internal error: transaction handle not known");
        goto out;
    }
    stmt->gen++;
    /* answers owed to the previous cursor are dropped (not current), so
       they no longer count: a read-ahead fetch in flight when a commit
       closed that cursor left this at 1 for good (every later fetch saw
       FFB_E_AGAIN) */
    stmt->fetches_inflight = 0;
    rows_reset(stmt);
    stmt->eof = 0;
    stmt->ended_early = 0;
    stmt->fetch_error = 0;
    stmt->singleton = 0;
    stmt->rows_seen = 0;
    for (int i = 0; i < 4; i++)
        stmt->records[i] = -1;

    int cursor = has_cursor(stmt);
    ffbp_execute e;
    memset(&e, 0, sizeof(e));
    e.op = !cursor && stmt->out.n ? FFBP_OP_EXECUTE2 : FFBP_OP_EXECUTE;
    e.stmt = stmt->handle;
    e.tx = txh;
    e.in_blr = blr.data;
    e.in_blr_len = blr.len;
    e.in_msg = stmt->in.n ? msg.data : NULL;
    e.in_msg_len = msg.len;
    e.out_blr = stmt->out.blr;
    e.out_blr_len = stmt->out.blr_len;
    e.inline_blob_size = stmt->inline_size;
    e.timeout_ms = stmt->timeout_ms;
    /* IStatement::CURSOR_TYPE_SCROLLABLE (reference 03, C.8.1). */
    stmt->scroll_open = cursor && stmt->scroll_want;
    stmt->scroll_blr_sent = 0;
    stmt->scroll_dir = FFBP_FETCH_NEXT;
    e.cursor_flags = stmt->scroll_open ? 1u : 0u;
    ffbp_writer w;
    ffbp_writer_init_buf(&w, conn->alloc, pkt_buf, sizeof(pkt_buf));
    ffbp_put_execute(&w, &e, conn->protocol);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
        goto out;
    ffb__pending *p;
    if (e.op == FFBP_OP_EXECUTE2) {
        p = expect(conn, e.op, exec2_reply, stmt, sync);
        if (!p) {
            rc = FFB_E_NOMEM;
            goto out;
        }
        p->tx = tx;
        p->items = stmt->out.items;
        p->nitems = stmt->out.n;
        p->off = stmt->scratch_off;
        p->len = stmt->scratch_len;
        p->ends_exec = 1;
        stmt->singleton = 1;
        /* The row counts ride in the same write, as for DML: EXECUTE
           PROCEDURE (0, as fbclient reports it) and INSERT/UPDATE/DELETE
           ... RETURNING, which Firebird describes as EXECUTE PROCEDURE. */
        rc = queue_records(stmt, sync);
    } else {
        p = expect(conn, e.op, exec_reply, stmt, sync);
        if (!p) {
            rc = FFB_E_NOMEM;
            goto out;
        }
        p->tx = tx;
        if (cursor) {
            stmt->cursor_open = 1;
            stmt->fetch_depth = 1;
            if (stmt->fetch_size > 0)
                stmt->fetch_count = (uint16_t)stmt->fetch_size;
            if (tx) {
                /* A cursor that failed to open kept its reference. */
                ffb_tx *stale = stmt->cursor_tx;
                tx->refs++;
                stmt->cursor_tx = tx;
                ffb__tx_unref(stale);
            }
            rc = queue_fetches(stmt, 1, stmt->fetch_count, sync);
            if (rc == 0) {
                ffb__pending *last =
                    &conn->fifo[(conn->fifo_head + conn->fifo_len - 1) %
                                conn->fifo_cap];
                last->tx = tx;
                last->ends_exec = 1;
            }
        } else if (stmt->stmt_type == FFB_STMT_INSERT ||
                   stmt->stmt_type == FFB_STMT_UPDATE ||
                   stmt->stmt_type == FFB_STMT_DELETE ||
                   stmt->stmt_type == FFB_STMT_EXEC_PROCEDURE) {
            /* The row counts ride in the same write (reference 02, 7.8). */
            rc = queue_records(stmt, sync);
        } else {
            p->completes = 1;
        }
    }
    /* DML may have several executions in flight (each result keeps its
       own count); a cursor or singleton output may not. */
    if (rc == 0 && (cursor || e.op == FFBP_OP_EXECUTE2))
        stmt->exec_inflight = 1;
    if (rc == 0 && auto_tx && cursor) {
        /* Committed when the cursor ends (its last rows, a close, the
           next execution, a free): that commit rides with the next
           request. A cursor whose rows fit the first fetch costs the
           one round trip. */
        stmt->auto_tx = auto_tx;
        auto_tx = NULL;
    } else if (rc == 0 && auto_tx) {
        /* The commit goes in the same write, and the execution is done
           when its answer is read. */
        ffb__pending *last =
            &conn->fifo[(conn->fifo_head + conn->fifo_len - 1) %
                        conn->fifo_cap];
        last->completes = 0;
        /* Its answer completes the sync (end_reply). Sent now, even when
           this execution is itself being released from the hold queue:
           the transaction it just started is the server's last object. */
        rc = ffb__tx_send_end(auto_tx, FFBP_OP_COMMIT, sync);
        if (rc == FFB__LATER)
            rc = ffb__tx_queue_end(auto_tx, FFBP_OP_COMMIT, sync);
        auto_tx->freed = 1; /* the queued commit holds its own reference */
        ffb__tx_unref(auto_tx);
        auto_tx = NULL;
    }
out:
    if (auto_tx)
        ffb_tx_free(auto_tx); /* failed before anything went: roll back */
    ffbp_writer_free(&blr);
    ffbp_writer_free(&msg);
    return sync_lib_fail(conn, sync, rc);
}

int ffb__stmt_reprepare_begin(ffb_stmt *stmt, ffb__reprepare *r) {
    ffb_conn *conn = stmt->conn;
    memset(r, 0, sizeof(*r));
    int rc = ffb__meta_copy(conn, &r->in, &stmt->in);
    if (rc < 0)
        return rc;
    r->params = stmt->params;
    stmt->params = NULL;
    r->sql = stmt->sql;
    r->sql_len = stmt->sql_len;
    stmt->sql = NULL;
    return 0;
}

int ffb__stmt_reprepare_end(ffb_stmt *stmt, ffb__reprepare *r, int rc) {
    ffb_conn *conn = stmt->conn;
    ffb__param *params = r->params;
    ffb__free(conn->alloc, r->sql);
    int same = rc == 0 && r->in.n == stmt->in.n;
    for (size_t i = 0; same && i < r->in.n; i++)
        same = r->in.cols[i].sqltype == stmt->in.cols[i].sqltype &&
               r->in.cols[i].scale == stmt->in.cols[i].scale &&
               r->in.cols[i].length == stmt->in.cols[i].length &&
               r->in.cols[i].subtype == stmt->in.cols[i].subtype;
    if (same && params) {
        params_free(stmt);
        stmt->params = params;
        params = NULL;
    }
    for (size_t i = 0; params && i < r->in.n; i++)
        ffb__free(conn->alloc, params[i].data);
    ffb__free(conn->alloc, params);
    ffb__meta_free(conn, &r->in);
    if (rc == 0 && !same && stmt->in.n)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the statement's parameters changed on the "
                              "server: bind them again");
    return rc;
}

int ffb__stmt_execute_next(ffb_stmt *stmt, int *rc, int *retried) {
    ffb_conn *conn = stmt->conn;
    if (stmt->prepare_err) {
        /* The lazy prepare that rode in front failed. */
        conn->err = *stmt->prepare_err;
        ffb__free(conn->alloc, stmt->prepare_err);
        stmt->prepare_err = NULL;
        stmt->lazy = 0;
        *rc = conn->err.code ? conn->err.code : FFB_E_SERVER;
        return FFB__EXEC_DONE;
    }
    if (stmt->lazy) {
        stmt->lazy = 0;
        if (stmt->meta_changed && stmt->lazy_truncated) {
            /* Its new describe was too long to check in place: prepare it
               again (keeping the parameters that still fit), then run. */
            stmt->meta_changed = 0;
            stmt->lazy_truncated = 0;
            return FFB__EXEC_REPREPARE;
        }
        if (stmt->meta_changed) {
            /* The statement changed since its formats were remembered: run
               it again with the formats the server described. */
            int changed = stmt->meta_changed;
            stmt->meta_changed = 0;
            if ((changed & 1) && stmt->in.n) {
                *rc = ffb__error_set(&conn->err, FFB_E_STATE,
                                     "the statement's parameters changed on "
                                     "the server: bind them again");
                return FFB__EXEC_DONE;
            }
            return FFB__EXEC_AGAIN;
        }
    }
    if (!*retried && *rc == FFB_E_SERVER && stmt->sql &&
        ffb_error_has(&conn->err, 335544356u /* isc_obsolete_metadata */)) {
        /* Prepared before a metadata change: prepare again, run once more. */
        *retried = 1;
        return FFB__EXEC_REPREPARE;
    }
    if (*rc == 0 && stmt->stmt_type == FFB_STMT_DDL)
        ffb__cache_invalidate(conn);
    return FFB__EXEC_DONE;
}

/* ---- fetch ---------------------------------------------------------------------------- */

/* Queue the next fetches, more and larger ones as the cursor goes on;
   `sync` (may be NULL) completes with the last. */
static int queue_refill(ffb_stmt *stmt, ffb__sync *sync) {
    if (stmt->scroll_open) /* one fetch on, in the direction of the last */
        return ffb__stmt_queue_fetch_one(stmt, stmt->scroll_dir, 0,
                                         stmt->fetch_count, sync, 1);
    if (stmt->fetch_depth < FETCH_DEPTH_MAX && stmt->rows_seen > 0)
        stmt->fetch_depth = stmt->fetch_depth ? stmt->fetch_depth * 2 : 1;
    if (stmt->fetch_count < FETCH_MAX)
        stmt->fetch_count = stmt->fetch_count * 4 > FETCH_MAX
                                ? FETCH_MAX
                                : (uint16_t)(stmt->fetch_count * 4);
    return queue_fetches(stmt, stmt->fetch_depth, stmt->fetch_count, sync);
}

/* Send the next fetches without waiting for them. */
static int refill(ffb_stmt *stmt) {
    int rc = queue_refill(stmt, NULL);
    if (rc < 0)
        return rc;
    /* Staged for the wire now (read-ahead): the blocking call writes them
       at once, with external I/O the application does. */
    rc = ffb__engine_flush(stmt->conn);
    return rc < 0 ? ffb__engine_fail(stmt->conn, rc) : 0;
}

/* Rows arrived, or the fetches in flight ended. */
int ffb__stmt_rows_ready(ffb_conn *conn, const void *arg) {
    const ffb_stmt *stmt = arg;
    (void)conn;
    return !stmt->exec_held &&
           (stmt->nrows || !stmt->fetches_inflight || stmt->fetch_error);
}

int ffb__stmt_fetch(ffb_stmt *stmt) {
    ffb_conn *conn = stmt->conn;
    if (stmt->exec_held)
        return FFB_E_AGAIN; /* its cursor and rows are not there yet */
    for (;;) {
        if (stmt->cur < stmt->nrows) {
            stmt->cur++;
            /* Read-ahead: half the buffer consumed, cursor not finished,
               and no end of its transaction on its way (that closes the
               cursor before the fetch is read). */
            if (stmt->cursor_open && !stmt->eof && !stmt->scroll_open &&
                stmt->fetches_inflight == 0 && conn->state == FFB__ST_READY &&
                stmt->cur * 2 >= stmt->nrows &&
                !(stmt->cursor_tx && stmt->cursor_tx->end_queued)) {
                int rc = refill(stmt);
                if (rc < 0)
                    return rc;
            }
            return 1;
        }
        /* Buffer used up. */
        if (stmt->nrows)
            rows_reset(stmt);
        if (stmt->singleton) {
            stmt->singleton = 0;
            return 0;
        }
        if (stmt->fetch_error) {
            stmt->fetch_error = 0;
            if (stmt->row_err)
                conn->err = *stmt->row_err;
            return conn->err.code ? conn->err.code : FFB_E_SERVER;
        }
        if (stmt->fetches_inflight == 0) {
            if (stmt->ended_early)
                return ffb__error_set(
                    &conn->err, FFB_E_STATE,
                    "the cursor's transaction ended before its last row "
                    "came: Firebird closed the cursor");
            if (stmt->eof || !stmt->cursor_open)
                return 0;
            if (stmt->cursor_tx && stmt->cursor_tx->end_queued)
                return ffb__error_set(
                    &conn->err, FFB_E_STATE,
                    "more rows than Firebird answered before the end of "
                    "the cursor's transaction, which is queued and closes "
                    "the cursor: fetch them before ending it");
            if (conn->state != FFB__ST_READY)
                return ffb__need_ready(conn);
            int rc = refill(stmt);
            if (rc < 0)
                return rc;
        }
        /* Wait for rows or the end of the fetches in flight. */
        int rc = ffb__need_ready(conn);
        return rc < 0 ? rc : FFB_E_AGAIN;
    }
}

int ffb__stmt_queue_fetch(ffb_stmt *stmt, ffb__sync *sync) {
    ffb_conn *conn = stmt->conn;
    if (stmt->exec_held || stmt->exec_inflight)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the statement's execution has not been "
                              "answered yet: its result says when the first "
                              "rows are there");
    if (stmt->cur < stmt->nrows || stmt->singleton || stmt->fetch_error ||
        (!stmt->fetches_inflight && (stmt->eof || !stmt->cursor_open)))
        return 1; /* ffb_stmt_fetch() answers without waiting */
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (stmt->fetches_inflight) {
        /* Rows are on their way: the last fetch in flight completes it,
           unless somebody waits on that one already. */
        for (size_t i = conn->fifo_len; i-- > 0;) {
            ffb__pending *p =
                &conn->fifo[(conn->fifo_head + i) % conn->fifo_cap];
            if ((p->op == FFBP_OP_FETCH || p->op == FFBP_OP_FETCH_SCROLL) &&
                p->ctx == stmt) {
                if (p->sync)
                    break;
                p->sync = sync;
                p->completes = 1;
                return 0;
            }
        }
    }
    return queue_refill(stmt, sync);
}

int ffb_stmt_set_fetch_size(ffb_stmt *stmt, int rows) {
    if (!stmt || rows < 0 || rows > 65535)
        return FFB_E_INVAL;
    stmt->fetch_size = rows;
    return 0;
}

size_t ffb_stmt_row_wire_max(const ffb_stmt *stmt) {
    if (!stmt || !stmt->prepared || stmt->out.n == 0)
        return 0;
    return 12 + ffbp_message_wire_max(stmt->out.items, stmt->out.n);
}

int ffb_stmt_set_inline_blob_size(ffb_stmt *stmt, int bytes) {
    if (!stmt || bytes < 0)
        return FFB_E_INVAL;
    stmt->inline_size = bytes > 65535 ? 65535 : (uint32_t)bytes;
    return 0;
}

int64_t ffb_stmt_rows_affected(const ffb_stmt *stmt) {
    return stmt ? records_total(stmt->records) : -1;
}

/* ---- accessors ------------------------------------------------------------------------- */

int ffb_stmt_type(const ffb_stmt *stmt) { return stmt ? stmt->stmt_type : 0; }

int ffb_stmt_has_cursor(const ffb_stmt *stmt) {
    return stmt && stmt->prepared && has_cursor(stmt);
}

unsigned ffb_stmt_column_count(const ffb_stmt *stmt) {
    return stmt ? (unsigned)stmt->out.n : 0;
}

unsigned ffb_stmt_param_count(const ffb_stmt *stmt) {
    return stmt ? (unsigned)stmt->in.n : 0;
}

static int col_info(const ffb__meta *m, unsigned i, ffb_column_info *out) {
    if (!out || i >= m->n)
        return FFB_E_INVAL;
    const ffb__col *c = &m->cols[i];
    out->sqltype = c->sqltype;
    out->nullable = c->nullable;
    out->subtype = c->subtype;
    out->scale = c->scale;
    out->length = c->length;
    out->charset = c->charset;
    out->field = c->field;
    out->relation = c->relation;
    out->owner = c->owner;
    out->alias = c->alias;
    out->relation_alias = c->relation_alias;
    return 0;
}

int ffb_stmt_column_info(const ffb_stmt *stmt, unsigned col,
                         ffb_column_info *out, size_t out_size) {
    ffb_column_info full;
    int rc = stmt && out ? col_info(&stmt->out, col, &full) : FFB_E_INVAL;
    return rc < 0 ? rc : ffb__give(out, out_size, &full, sizeof(full));
}

int ffb_stmt_param_info(const ffb_stmt *stmt, unsigned idx,
                        ffb_column_info *out, size_t out_size) {
    ffb_column_info full;
    int rc = stmt && out ? col_info(&stmt->in, idx, &full) : FFB_E_INVAL;
    return rc < 0 ? rc : ffb__give(out, out_size, &full, sizeof(full));
}

const char *ffb_stmt_column_name(const ffb_stmt *stmt, unsigned col) {
    if (!stmt || col >= stmt->out.n)
        return "";
    const ffb__col *c = &stmt->out.cols[col];
    return c->alias[0] ? c->alias : c->field;
}

/* Answer to op_info_sql(plan). */
static int plan_reply(ffb_conn *conn, const ffbp_packet *pkt,
                      ffb__pending *p) {
    ffb_stmt *stmt = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return done(p, FFB_E_PROTO);
    if (ffb__status_is_error(&r->status)) {
        ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, &r->status,
                              "reading the plan failed");
        return done(p, 0);
    }
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, NULL, 0, NULL, 0);
    if (ffbp_parse_describe(r->data.p, r->data.len, &d) != FFBP_OK) {
        int e = ffb__error_set(&conn->err, FFB_E_PROTO,
                               "malformed plan answer");
        if (p->sync && p->sync->rc == 0)
            p->sync->rc = e;
        return done(p, e); /* breaks the connection */
    }
    if (p->gen != stmt->prep_gen)
        return done(p, 0); /* prepared again since: not its plan */
    char *t = ffb__malloc(conn->alloc, d.plan.len + 1);
    if (!t)
        return done(p, ffb__fatal(conn, FFB_E_NOMEM, "out of memory"));
    if (d.plan.len)
        memcpy(t, d.plan.p, d.plan.len);
    t[d.plan.len] = '\0';
    ffb__free(conn->alloc, stmt->plan);
    stmt->plan = t;
    stmt->plan_kind = (int)(p->limit + 1); /* 1 legacy, 2 explained */
    stmt->plan_gen = stmt->prep_gen;
    return done(p, 0);
}

/* The plan of the statement as prepared now, if it was read. */
const char *ffb__stmt_plan_known(const ffb_stmt *stmt, int explain) {
    if (!stmt->plan || stmt->plan_gen != stmt->prep_gen ||
        stmt->plan_kind != explain + 1)
        return NULL;
    const char *t = stmt->plan;
    while (*t == '\n') /* the server starts the legacy plan with one */
        t++;
    return t;
}

int ffb__stmt_queue_plan(ffb_stmt *stmt, int explain, ffb__sync *sync) {
    ffb_conn *conn = stmt->conn;
    if (explain != FFB_PLAN_LEGACY && explain != FFB_PLAN_EXPLAINED)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "the plan kind must be FFB_PLAN_LEGACY or "
                              "FFB_PLAN_EXPLAINED");
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (!stmt->prepared || stmt->prepare_pending || stmt->prepare_held)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the statement is not prepared");
    if (ffb__stmt_plan_known(stmt, explain))
        return 1;
    uint8_t items[2] = {(uint8_t)(explain ? FFBP_INFO_SQL_EXPLAIN_PLAN
                                          : FFBP_INFO_SQL_GET_PLAN),
                        FFBP_INFO_END};
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_info(&w, FFBP_OP_INFO_SQL, stmt->handle, 0, items, 2, 65535);
    if ((rc = ffb__queue_free(conn, &w, 1)) < 0)
        return rc;
    ffb__pending *p = expect(conn, FFBP_OP_INFO_SQL, plan_reply, stmt, sync);
    if (!p)
        return FFB_E_NOMEM;
    p->completes = 1;
    p->gen = stmt->prep_gen;
    p->limit = explain ? 1 : 0;
    return 0;
}

