/*
 * ffb-rest: POST, PATCH and DELETE (spec rest.md A6, A8.1). The body is
 * parsed (body.c), the statements planned (wsql.c), and then, on a
 * connection of the loop's pool, a warm write costs one round trip: the
 * start of a read-write read-committed transaction, the statement's
 * execute (with its first fetch for an EXECUTE BLOCK) and the commit or
 * rollback leave in one write. The end rides when the one statement is
 * atomic (wsql.h): it writes every row before it suspends the first, so
 * its error undoes all of it, and its rows and end come in the first
 * fetch; a singular write's block refuses other than one row itself. The
 * end waits for the answers only when it must: a body cut into several
 * blocks (a failing block must roll the others back) and a PATCH/DELETE
 * representation of more rows than its block keeps (its refusal, then
 * the request again with the streaming block, whose end waits for the
 * last row: a commit behind a fetch that did not reach the block's end
 * would commit half of it).
 *
 * It runs as the request's role (auth.h: a JWT's role, db-anon-role) on
 * that role's pool (roles.h), and the request context block (context.h)
 * goes in front of the statements in the same write. With db-pre-request
 * the end waits for the block's answer: the procedure may refuse the
 * request, and the statements behind it were executed all the same, so a
 * commit written with them would keep what it refused (one round trip
 * more).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "body.h"
#include "buf.h"
#include "context.h"
#include "http.h"
#include "json.h"
#include "req.h"
#include "roles.h"
#include "wsql.h"

typedef struct wreq wreq;

typedef struct wexec {
    wreq *w;
    size_t i;
} wexec;

struct wreq {
    rest_req b; /* the request on a pooled connection (req.h) */
    rest_query q;
    rest_body body;
    rest_wplan plan;
    int has_plan;
    rest_wopts o; /* the planner's options (again on REST_WRAISE_MORE) */
    rest_prefer pf;
    int kind;
    int singular;   /* Accept: application/vnd.pgrst.object+json */
    int rollback;   /* end with a rollback */
    int tx_applied; /* Preference-Applied: tx=... */
    const char *name;
    ffb_stmt **stmts;
    wexec *ex;
    size_t pending; /* executes (and their fetches) not finished */
    int end_queued;
    rbuf out; /* the representation */
    int64_t nout;
    int64_t affected;
    int put_inserted; /* PUT: the row was new (201 with representation) */
    rbuf location;
    char **keyjson;
};

static void w_free(wreq *w) {
    if (w->has_plan)
        rest_wplan_free(&w->plan);
    rbuf_free(&w->out);
    rbuf_free(&w->location);
    rest_req_free(&w->b);
    free(w);
}

static void destroy(rest_req *r) { w_free((wreq *)r); }

static void w_fail(wreq *w, int code, const ffb_error *e) {
    rest_req_fail(&w->b, code, e);
}

/* ---- the response ------------------------------------------------------- */

static void pref_applied(wreq *w) {
    /* in PostgREST's order: resolution, return, count, tx, missing */
    char tmp[192] = "";
    size_t n = 0;
    const rest_prefer *p = &w->pf;
#define ADD(s)                                                                 \
    n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%s%s", n ? ", " : "", s)
    if (w->kind == REST_W_INSERT && w->plan.resolution_used && p->resolution)
        ADD(p->resolution == REST_RES_MERGE ? "resolution=merge-duplicates"
                                            : "resolution=ignore-duplicates");
    if (p->has_ret)
        ADD(p->ret == REST_RET_REPR      ? "return=representation"
            : p->ret == REST_RET_HEADERS ? "return=headers-only"
                                         : "return=minimal");
    if (p->count_exact)
        ADD("count=exact");
    if (w->tx_applied)
        ADD(w->rollback ? "tx=rollback" : "tx=commit");
    if (p->missing_default && w->kind != REST_W_DELETE)
        ADD("missing=default");
#undef ADD
    if (n && n < sizeof tmp)
        rest_http_add_header(w->b.req, "preference-applied", tmp, n);
}

static void respond(rest_req *r, uint64_t rts, int used_db) {
    wreq *w = (wreq *)r;
    h2o_req_t *req = w->b.req;
    char tmp[96];
    if (rest_req_respond_head(r, rts, used_db, &w->out))
        return;
    int repr = w->pf.ret == REST_RET_REPR;
    if (w->kind == REST_W_PUT) {
        /* PostgREST: no Content-Range; 201 when the row was new, else 200,
           with the representation; 204 without */
        pref_applied(w);
        if (!repr)
            rest_http_send(req, 204, NULL, "", 0, 0);
        else if (w->singular)
            rest_http_send(req, w->put_inserted ? 201 : 200,
                           "application/vnd.pgrst.object+json; charset=utf-8",
                           w->out.p + 1, w->out.len - 1, 0);
        else {
            rbuf_addc(&w->out, ']');
            rest_http_send(req, w->put_inserted ? 201 : 200,
                           "application/json; charset=utf-8", w->out.p,
                           w->out.len, 0);
        }
        return;
    }
    /* Content-Range: POST and DELETE "* / *" (with count=exact "* / n"),
       PATCH "0-(n-1) / *", without the spaces */
    int64_t n = repr || w->plan.count_only || w->kind != REST_W_INSERT
                    ? w->affected
                    : w->nout;
    if (w->kind == REST_W_UPDATE && n > 0)
        snprintf(tmp, sizeof tmp, "0-%lld/", (long long)(n - 1));
    else
        snprintf(tmp, sizeof tmp, "*/");
    size_t tl = strlen(tmp);
    if (w->pf.count_exact)
        snprintf(tmp + tl, sizeof tmp - tl, "%lld", (long long)n);
    else
        snprintf(tmp + tl, sizeof tmp - tl, "*");
    rest_http_add_header(req, "content-range", tmp, strlen(tmp));
    if (w->location.len)
        rest_http_add_header(req, "location", w->location.p, w->location.len);
    pref_applied(w);
    int status = w->kind == REST_W_INSERT ? 201 : repr ? 200 : 204;
    if (repr && w->singular) {
        /* the one object, without the array's opening bracket */
        rest_http_send(req, status,
                       "application/vnd.pgrst.object+json; charset=utf-8",
                       w->out.p + 1, w->out.len - 1, 0);
    } else if (repr) {
        if (w->nout == 0)
            rbuf_adds(&w->out, "[]");
        else
            rbuf_addc(&w->out, ']');
        rest_http_send(req, status, "application/json; charset=utf-8", w->out.p,
                       w->out.len, 0);
    } else {
        rest_http_send(req, status, NULL, "", 0, 0);
    }
}

static void start(rest_req *r);

/* The statements go before the connection does. A representation of
   more rows than the block keeps goes again on the same connection, with
   the block that suspends each row as it is written (its end waits for
   the last row). */
static int done(rest_req *r) {
    wreq *w = (wreq *)r;
    for (size_t i = 0; w->stmts && i < w->plan.nstmts; i++)
        ffb_stmt_free(w->stmts[i]);
    w->stmts = NULL;
    if (!w->b.again || w->b.failed)
        return 0;
    rest_err err;
    rest_req_drop_tx(&w->b);
    rest_wplan_free(&w->plan);
    w->has_plan = 0;
    w->b.again = 0;
    w->end_queued = 0;
    w->affected = w->nout = 0;
    rbuf_reset(&w->out);
    rbuf_reset(&w->location);
    w->o.repr_stream = 1;
    if (rest_plan_write(&w->b.arena, app_schema(w->b.app), w->name, &w->q,
                        w->kind != REST_W_DELETE ? &w->body : NULL, &w->o,
                        &w->plan, &err) < 0) {
        w->b.failed = 1;
        w->b.err = err;
        return 0;
    }
    w->has_plan = 1;
    start(&w->b); /* the context block is prepared again from its text */
    return 1;
}

static void finish(wreq *w) { rest_req_finish(&w->b); }

/* ---- the transaction's end ---------------------------------------------- */

static void ended(rest_req *r) {
    wreq *w = (wreq *)r;
    w->end_queued = 2;
    if (w->pending == 0)
        finish(w);
}

static void queue_end(wreq *w) {
    if (w->end_queued)
        return;
    w->end_queued = 1;
    /* a failure undoes everything: the failing statement undid itself,
       the blocks before it are rolled back */
    if (rest_req_queue_end(&w->b, w->rollback || w->b.failed || w->b.again) <
        0) {
        w->end_queued = 2;
        if (w->pending == 0)
            finish(w);
    }
}

/* One statement is done (its rows read). */
static void check_singular(wreq *w);

static void stmt_done(wreq *w) {
    if (--w->pending > 0)
        return;
    if (!w->end_queued) {
        check_singular(w);
        queue_end(w);
    } else if (w->end_queued == 2)
        finish(w);
}

/* ---- rows ---------------------------------------------------------------- */

static void url_escape(rbuf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
            c == '~') {
            rbuf_addc(b, (char)c);
        } else {
            rbuf_addc(b, '%');
            rbuf_addc(b, hex[c >> 4]);
            rbuf_addc(b, hex[c & 15]);
        }
    }
}

/* headers-only: "/<table>?<pk>=eq.<value>&..." of the first row */
static int location(wreq *w, ffb_stmt *st) {
    rbuf *b = &w->location;
    rbuf_addc(b, '/');
    url_escape(b, w->plan.t->exposed, strlen(w->plan.t->exposed));
    for (size_t c = 0; c < w->plan.nkeys; c++) {
        const char *s;
        size_t n;
        int rc = ffb_stmt_get_text_trimmed(st, (unsigned)c, &s, &n);
        if (rc < 0)
            return rc;
        rbuf_addc(b, c ? '&' : '?');
        url_escape(b, w->plan.keys[c], strlen(w->plan.keys[c]));
        rbuf_adds(b, "=eq.");
        if (rc == 1 || !s) /* NULL */
            rbuf_adds(b, "null");
        else
            url_escape(b, s, n);
    }
    return 0;
}

static int one_row(wreq *w, ffb_stmt *st) {
    unsigned off = 0; /* the first key's column */
    if (w->plan.put) {
        /* M: the body's key is the URL's (else nothing was written); I:
           the row was new */
        int64_t m = 0, ins = 0;
        ffb_stmt_get_int64(st, 0, &m);
        ffb_stmt_get_int64(st, 1, &ins);
        if (!m) {
            rest_err_set(&w->b.err, 400, "PGRST115", NULL,
                         "Payload values do not match URL in primary key "
                         "column(s)");
            w->b.failed = 1;
            return 0;
        }
        w->put_inserted = ins != 0;
        if (w->pf.ret != REST_RET_REPR) {
            w->affected++;
            return 0;
        }
        off = 2;
    }
    if (w->plan.count_only) {
        int64_t v = 0;
        if (ffb_stmt_get_int64(st, 0, &v) == 0)
            w->affected += v;
        return 0;
    }
    w->affected++;
    if (w->pf.ret == REST_RET_HEADERS) {
        if (w->nout++ == 0 && w->plan.nkeys)
            return location(w, st);
        return 0;
    }
    rbuf_addc(&w->out, w->nout++ ? ',' : '[');
    rbuf_addc(&w->out, '{');
    for (size_t c = 0; c < w->plan.nkeys; c++) {
        ffb_column_info ci;
        int rc = ffb_stmt_column_info(st, (unsigned)c + off, &ci, sizeof ci);
        if (c)
            rbuf_addc(&w->out, ',');
        rbuf_adds(&w->out, w->keyjson[c]);
        if (rc == 0)
            rc = json_column(&w->out, st, (unsigned)c + off, &ci);
        if (rc < 0)
            return rc;
    }
    rbuf_addc(&w->out, '}');
    return 0;
}

/* Every statement is answered: with the singular object asked for, a
   write of other than one row is refused and rolled back (PostgREST). */
static void check_singular(wreq *w) {
    if (!w->singular || w->b.failed || w->b.again || w->affected == 1)
        return;
    w->b.failed = 1;
    char d[96];
    snprintf(d, sizeof d, "The result contains %lld rows",
             (long long)w->affected);
    rest_err_set(&w->b.err, 406, "PGRST116", d,
                 "JSON object requested, multiple (or no) rows returned");
}

/* A failed execute or fetch: the block's own refusal (wsql.h) is the
   singular 406, or, for more rows than it keeps, the request again with
   the streaming block (the refusal undid everything: nothing was
   suspended before it); anything else the failure. */
static void exec_failed(wreq *w, int code, const ffb_error *e) {
    long long n = 0;
    int kind = e && ffb_error_gds(e) == REST_WRAISE_GDS
                   ? rest_wraise_parse(ffb_error_arg(e, 0, 0), &n)
                   : REST_WRAISE_NONE;
    if (kind == REST_WRAISE_ROWS && !w->b.failed) {
        w->affected = n;
        check_singular(w);
    } else if (kind == REST_WRAISE_MORE && !w->b.failed) {
        w->b.again = 1;
    } else {
        w_fail(w, code, e);
    }
}

static void on_fetch(ffb_conn *conn, const ffb_result *res, void *data);

/* Read what is buffered; 1 at the end, 0 while a fetch is on its way. */
static int rows(wexec *x) {
    wreq *w = x->w;
    ffb_stmt *st = w->stmts[x->i];
    for (;;) {
        int rc = ffb_stmt_fetch(st);
        if (rc == 1) {
            if (!w->b.failed && (rc = one_row(w, st)) < 0) {
                w_fail(w, rc, ffb_conn_error(w->b.conn));
                return 1;
            }
            continue;
        }
        if (rc == FFB_E_AGAIN && !w->end_queued) {
            rc = ffb_stmt_queue_fetch(st, on_fetch, x);
            if (rc == 0)
                return 0;
            if (rc == 1)
                continue;
        }
        if (rc == FFB_E_AGAIN || (rc == FFB_E_STATE && w->end_queued)) {
            /* The end rides only when Firebird answers the rows whole
               (run(): ffb_stmt_row_wire_max()); a server whose
               TcpRemoteBufferSize is below its default of 8192 can still
               end the answer early, and the end closed the cursor */
            rest_err_set(&w->b.err, 500, "PGRST000", NULL,
                         "Firebird ended the answer before the write's last "
                         "row, after its end (tx=%s) was sent: a "
                         "TcpRemoteBufferSize below 8192?",
                         w->rollback ? "rollback" : "commit");
            w->b.failed = 1;
            return 1;
        }
        if (rc < 0)
            exec_failed(w, rc, ffb_conn_error(w->b.conn));
        return 1;
    }
}

static void on_fetch(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    wexec *x = data;
    if (ffb_result_status(res) < 0) {
        exec_failed(x->w, ffb_result_status(res), ffb_result_error(res));
        stmt_done(x->w);
        return;
    }
    if (rows(x))
        stmt_done(x->w);
}

static void on_exec(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    wexec *x = data;
    wreq *w = x->w;
    if (ffb_result_status(res) < 0) {
        exec_failed(w, ffb_result_status(res), ffb_result_error(res));
        stmt_done(w);
        return;
    }
    if (!w->plan.stmts[x->i].cursor) {
        w->affected += ffb_result_rows_affected(res);
        stmt_done(w);
        return;
    }
    if (rows(x))
        stmt_done(w);
}

/* ---- execution ------------------------------------------------------------
 */

static int bind_params(ffb_stmt *st, const rest_wstmt *ws) {
    for (size_t i = 0; i < ws->nparams; i++) {
        const rest_wparam *p = &ws->params[i];
        int rc = p->kind == REST_J_NULL
                     ? ffb_stmt_bind_null(st, (unsigned)i)
                     : ffb_stmt_bind_text(st, (unsigned)i, p->text, p->len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void run(wreq *w) {
    size_t n = w->plan.nstmts;
    /* a refusal of db-pre-request is answered before the statements'
       answers, so the end (queued once they are in) rolls back */
    if (w->b.as.stmt) {
        int rc = rest_req_queue_ctx(&w->b);
        if (rc < 0) {
            w_fail(w, rc, ffb_conn_error(w->b.conn));
            w->pending = 0;
            finish(w); /* nothing was queued */
            return;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const rest_wstmt *ws = &w->plan.stmts[i];
        ffb_stmt *st = w->stmts[i];
        int rc = bind_params(st, ws);
        if (rc == 0 && ws->cursor)
            ffb_stmt_set_fetch_size(st, ws->fetch_rows); /* wsql.h */
        if (rc == 0) {
            w->ex[i].w = w;
            w->ex[i].i = i;
            rc = ffb_stmt_queue_execute(st, w->b.tx, on_exec, &w->ex[i]);
        }
        if (rc < 0) {
            /* a value refused before anything was sent, or no memory:
               nothing of this statement went out */
            w_fail(w, rc, ffb_conn_error(w->b.conn));
            w->pending -= n - i;
            if (i == 0 && !w->b.as.stmt)
                finish(w); /* nothing was queued */
            else
                queue_end(w); /* the executes queued before: rolled back */
            return;
        }
    }
    /* one statement whose rows and end all come with its execute, and
       whose failure undoes all it did (wsql.h: atomic): the end rides in
       the same write. The singular check must be the block's (a PUT
       writes one row or none, and none is its error already). */
    int put = w->kind == REST_W_PUT;
    /* ... and only when Firebird answers its rows whole: not after 128
       KiB of them (fastfb.h, ffb_stmt_row_wire_max()) */
    const rest_wstmt *w0 = &w->plan.stmts[0];
    int whole = !w0->cursor || w0->fetch_rows <= FFB_FETCH_WHOLE_ROWS ||
                (size_t)w0->fetch_rows * ffb_stmt_row_wire_max(w->stmts[0]) <=
                    FFB_FETCH_WHOLE_BYTES;
    if (n == 1 && whole && w0->atomic &&
        (!w->singular || put || w->plan.singular_checked) &&
        !(w->b.as.stmt && w->b.app->cfg->db_pre_request))
        queue_end(w);
}

static void prepared(rest_req *r) {
    wreq *w = (wreq *)r;
    if (w->b.failed) {
        w->pending = 0;
        queue_end(w);
        return;
    }
    run(w);
}

static void start(rest_req *r) {
    wreq *w = (wreq *)r;
    int rc = rest_req_begin(r, 0, FFB_ISO_READ_COMMITTED);
    size_t n = w->plan.nstmts;
    w->stmts = rarena_alloc(&w->b.arena, (n + 1) * sizeof *w->stmts);
    w->ex = rarena_alloc(&w->b.arena, (n + 1) * sizeof *w->ex);
    if (rc == 0 && (!w->stmts || !w->ex))
        rc = FFB_E_NOMEM;
    if (rc < 0) {
        w_fail(w, rc, ffb_conn_error(w->b.conn));
        finish(w);
        return;
    }
    w->pending = n;
    if (w->b.as.sql) {
        int q =
            rest_req_prepare(r, w->b.as.sql, w->b.as.sql_len, &w->b.as.stmt);
        if (q < 0)
            w_fail(w, q, ffb_conn_error(w->b.conn));
    }
    for (size_t i = 0; !w->b.failed && i < n; i++) {
        const rest_wstmt *ws = &w->plan.stmts[i];
        int q = rest_req_prepare(r, ws->sql.p, ws->sql.len, &w->stmts[i]);
        if (q < 0) {
            w_fail(w, q, ffb_conn_error(w->b.conn));
            break;
        }
    }
    if (w->b.waiting)
        return; /* prepared() goes on */
    if (w->b.failed) {
        finish(w);
        return;
    }
    run(w); /* every statement cached: one write for everything */
}

static const rest_req_ops write_ops = {start, prepared, ended,
                                       done,  respond,  destroy};

/* ---- the request ------------------------------------------------------------
 */

/* Is the Content-Type `type` (parameters after ';' ignored)? (A body
   without a type is taken as JSON, as PostgREST does.) */
static int is_type(const h2o_iovec_t *ct, const char *type) {
    if (!ct)
        return 0;
    size_t n = ct->len, tn = strlen(type);
    const char *semi = memchr(ct->base, ';', n);
    if (semi)
        n = (size_t)(semi - ct->base);
    while (n && ct->base[n - 1] == ' ')
        n--;
    return n == tn && strncasecmp(ct->base, type, tn) == 0;
}

int rest_handle_write(rest_app *app, h2o_req_t *req, const char *name) {
    const rest_config *cfg = app->cfg;
    rest_err err;
    wreq *w = calloc(1, sizeof *w);
    if (!w) {
        rest_err_set(&err, 500, "PGRST000", NULL, "out of memory");
        rest_http_send_error(req, app, &err, 0);
        return 0;
    }
    rest_req_init(&w->b, &write_ops, app, req, 0, 64u << 20);
    rbuf_init(&w->out, 64u << 20);
    rbuf_init(&w->location, 8192);
    w->kind =
        h2o_memis(req->method.base, req->method.len, H2O_STRLIT("POST"))
            ? REST_W_INSERT
        : h2o_memis(req->method.base, req->method.len, H2O_STRLIT("PATCH"))
            ? REST_W_UPDATE
        : h2o_memis(req->method.base, req->method.len, H2O_STRLIT("PUT"))
            ? REST_W_PUT
            : REST_W_DELETE;
    if (rest_req_runas(&w->b, &err) < 0)
        goto fail;
    if (rest_http_accept(req, &w->singular, &err) < 0)
        goto fail;
    const h2o_iovec_t *pv = rest_http_header_list(req, "prefer");
    rest_parse_prefer(pv ? pv->base : NULL, pv ? pv->len : 0, &w->pf);
    /* db-tx-end: the server's end, and whether Prefer: tx= may change it */
    int end_rollback = cfg->db_tx_end >= 2;
    int may_override = cfg->db_tx_end == 1 || cfg->db_tx_end == 3;
    w->rollback = end_rollback;
    if (w->pf.tx && may_override) {
        w->rollback = w->pf.tx == 2;
        w->tx_applied = 1;
    }
    const char *qs = "";
    size_t qn = 0;
    if (req->query_at != SIZE_MAX) {
        qs = req->path.base + req->query_at + 1;
        qn = req->path.len - req->query_at - 1;
    }
    rest_limits lim = {cfg->server_max_filters, cfg->server_max_in_list, 8,
                       cfg->server_max_embed_depth};
    rest_wopts o = {0};
    o.kind = w->kind;
    o.singular = w->singular;
    /* with db-pre-request the end waits for the answers anyway: the
       representation streams (no refusal of a 17th row, so the
       procedure runs once) */
    o.repr_stream = w->b.as.sql && cfg->db_pre_request;
    o.ret = w->pf.ret;
    o.resolution = w->pf.resolution;
    o.missing_default = w->pf.missing_default;
    if (rest_parse_query(&w->b.arena, qs, qn, NULL, 0, &lim, &w->q, &err) < 0)
        goto fail;
    if (rest_write_params(&w->b.arena, qs, qn, &o.columns, &o.on_conflict) < 0)
        goto nomem;
    int has_body = w->kind != REST_W_DELETE;
    if (has_body) {
        const h2o_iovec_t *ct = rest_http_header(req, "content-type");
        const char *data = req->entity.base ? req->entity.base : "";
        size_t dlen = req->entity.base ? req->entity.len : 0;
        int prc;
        if (is_type(ct, "application/x-www-form-urlencoded"))
            prc =
                rest_parse_form(&w->b.arena, data, dlen, NULL, &w->body, &err);
        else if (!ct || ct->len == 0 || is_type(ct, "application/json"))
            prc =
                rest_parse_body(&w->b.arena, data, dlen, NULL, &w->body, &err);
        else {
            rest_err_set(&err, 415, "PGRST107", NULL,
                         "None of these media types are available: %.*s",
                         (int)(ct->len > 128 ? 128 : ct->len), ct->base);
            goto fail;
        }
        if (prc < 0)
            goto fail;
    }
    if (rest_plan_write(&w->b.arena, app_schema(app), name, &w->q,
                        has_body ? &w->body : NULL, &o, &w->plan, &err) < 0)
        goto fail;
    w->has_plan = 1;
    w->o = o;
    w->name = rarena_strndup(&w->b.arena, name, strlen(name));
    if (!w->name)
        goto nomem;
    w->keyjson = rest_http_keyjson(&w->b.arena, w->plan.keys, w->plan.nkeys);
    if (!w->keyjson)
        goto nomem;
    if (w->plan.noop) {
        /* nothing to write (POST [], PATCH {}): no connection */
        respond(&w->b, 0, 0);
        w_free(w);
        return 0;
    }
    if (rest_req_acquire(&w->b, &err) < 0)
        goto fail;
    return 0;
nomem:
    rest_err_set(&err, 500, "PGRST000", NULL, "out of memory");
fail:
    rest_http_send_error(req, app, &err, 0);
    w_free(w);
    return 0;
}
