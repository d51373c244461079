/* ffb-rest: RPC (rpc.h). */
#include "rpc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "auth.h"
#include "context.h"
#include "http.h"
#include "json.h"
#include "req.h"
#include "roles.h"
#include "sql.h"
#include "wsql.h"

typedef struct rpcreq rpcreq;

struct rpcreq {
    rest_req b; /* the request on a pooled connection (req.h); b.again:
                   more rows than the probe, run again without it */
    const rest_routine *rt;
    const char **val; /* per input argument in order; NULL: SQL NULL */
    size_t *vlen;
    size_t nargs; /* arguments passed (the rest take their defaults) */
    rbuf sql;
    int post;
    int unbounded; /* no probe, every row before the commit: a GET run
                      again, or a POST's selectable call */
    int commit_queued;
    ffb_stmt *stmt;
    rbuf body;
    int64_t nrows;
};

static void rpc_free(rpcreq *r) {
    rbuf_free(&r->sql);
    rbuf_free(&r->body);
    rest_req_free(&r->b);
    free(r);
}

static void destroy(rest_req *b) { rpc_free((rpcreq *)b); }

static void fail_ffb(rpcreq *r, int code, const ffb_error *e) {
    rest_req_fail(&r->b, code, e);
}

static void respond(rest_req *b, uint64_t rts, int used_db) {
    rpcreq *r = (rpcreq *)b;
    h2o_req_t *req = r->b.req;
    char tmp[96];
    (void)used_db; /* Server-Timing also on a failed acquire (rt=0) */
    if (rest_req_respond_head(b, rts, 1, &r->body))
        return;
    if (r->rt->kind == REST_RT_EXECUTABLE && r->body.len == 0) {
        rest_http_send(req, 204, NULL, "", 0, 0);
        return;
    }
    if (r->rt->kind == REST_RT_SELECTABLE) {
        /* every row is sent (no limit on RPC results yet), so the exact
           count is the rows' number: "0-1/2" as PostgREST (postgrest-js
           reads its count from there; a "*" total gave it NaN) */
        const h2o_iovec_t *pv = rest_http_header_list(req, "prefer");
        rest_prefer pf;
        rest_parse_prefer(pv ? pv->base : NULL, pv ? pv->len : 0, &pf);
        char total[24] = "*";
        if (pf.count_exact)
            snprintf(total, sizeof total, "%lld", (long long)r->nrows);
        if (r->nrows == 0)
            snprintf(tmp, sizeof tmp, "*/%s", total);
        else
            snprintf(tmp, sizeof tmp, "0-%lld/%s", (long long)r->nrows - 1,
                     total);
        rest_http_add_header(req, "content-range", tmp, strlen(tmp));
        if (pf.count_exact)
            rest_http_add_header(req, "preference-applied", "count=exact", 11);
    }
    rest_http_send(req, 200, "application/json; charset=utf-8", r->body.p,
                   r->body.len, r->b.head);
}

static void start(rest_req *b);
static void build_sql(rpcreq *r);

static int done(rest_req *b) {
    rpcreq *r = (rpcreq *)b;
    ffb_stmt_free(r->stmt);
    r->stmt = NULL;
    if (r->b.again && !r->b.failed) {
        /* more rows than the probe: once more without it, fetching
           them all before the commit (same connection) */
        rest_req_drop_tx(b);
        r->b.again = 0;
        r->unbounded = 1;
        r->commit_queued = 0;
        r->nrows = 0;
        rbuf_reset(&r->body);
        rbuf_reset(&r->sql);
        build_sql(r);
        start(b);
        return 1;
    }
    return 0;
}

static void finish(rpcreq *r) { rest_req_finish(&r->b); }

static void queue_commit(rpcreq *r) {
    if (r->commit_queued)
        return;
    r->commit_queued = 1;
    /* a failure keeps nothing: db-pre-request's refusal of a POST whose
       procedure ran behind it, or a failed call after the block */
    if (rest_req_queue_end(&r->b, r->b.failed) < 0)
        finish(r);
}

/* One row as an object of its columns. */
static int row_object(rpcreq *r, unsigned ncol) {
    rbuf_addc(&r->body, '{');
    for (unsigned c = 0; c < ncol; c++) {
        ffb_column_info ci;
        int rc = ffb_stmt_column_info(r->stmt, c, &ci, sizeof ci);
        if (rc < 0)
            return rc;
        if (ci.sqltype == FFB_SQL_BLOB) {
            rest_err_set(&r->b.err, 400, "PGRST127",
                         "blob outputs of procedures",
                         "Feature not "
                         "implemented");
            r->b.failed = 1;
            return 0;
        }
        char *k = rest_expose_name(ci.alias && *ci.alias ? ci.alias : ci.field);
        if (!k)
            return FFB_E_NOMEM;
        if (c)
            rbuf_addc(&r->body, ',');
        json_string(&r->body, k, strlen(k));
        free(k);
        rbuf_addc(&r->body, ':');
        rc = json_column(&r->body, r->stmt, c, &ci);
        if (rc < 0)
            return rc;
    }
    rbuf_addc(&r->body, '}');
    return 0;
}

static void on_fetch(ffb_conn *c, const ffb_result *res, void *data);

/* Take the rows that are in; 1 when done. */
static int rows(rpcreq *r) {
    unsigned ncol = ffb_stmt_column_count(r->stmt);
    for (;;) {
        int rc = ffb_stmt_fetch(r->stmt);
        if (rc == 1) {
            if (r->b.failed)
                continue;
            if (r->rt->kind == REST_RT_FUNCTION) {
                ffb_column_info ci;
                rc = ffb_stmt_column_info(r->stmt, 0, &ci, sizeof ci);
                if (rc == 0 && ci.sqltype == FFB_SQL_BLOB) {
                    rest_err_set(&r->b.err, 400, "PGRST127",
                                 "blob results of functions",
                                 "Feature not implemented");
                    r->b.failed = 1;
                    continue;
                }
                if (rc == 0)
                    rc = json_column(&r->body, r->stmt, 0, &ci);
            } else if (r->rt->kind == REST_RT_EXECUTABLE) {
                rc = ncol ? row_object(r, ncol) : 0;
            } else {
                if (!r->unbounded && r->nrows == r->b.app->cfg->db_probe_rows) {
                    /* one row more than the probe: the answer is longer;
                       its commit is on its way: run again without it */
                    r->b.again = 1;
                    return 1;
                }
                rbuf_addc(&r->body, r->nrows ? ',' : '[');
                rc = row_object(r, ncol);
            }
            if (rc < 0) {
                fail_ffb(r, rc, ffb_conn_error(r->b.conn));
                return 1;
            }
            r->nrows++;
            continue;
        }
        if ((rc == FFB_E_AGAIN || rc == FFB_E_STATE) && r->commit_queued &&
            !r->unbounded) {
            /* Firebird ended the answer early (more than 128 KiB of rows:
               ffb_stmt_row_wire_max()) and the commit on its way closes
               the cursor (the library says FFB_E_STATE): a GET
               (read-only) runs again without the probe. A POST's call
               never runs twice: a selectable one starts unbounded, and a
               function's or executable procedure's one row comes whole. */
            r->b.again = 1;
            return 1;
        }
        if (rc == FFB_E_AGAIN) {
            rc = ffb_stmt_queue_fetch(r->stmt, on_fetch, r);
            if (rc == 0)
                return 0;
            if (rc == 1)
                continue;
        }
        if (rc < 0)
            fail_ffb(r, rc, ffb_conn_error(r->b.conn));
        if (r->rt->kind == REST_RT_SELECTABLE && !r->b.again)
            rbuf_adds(&r->body, r->nrows ? "]" : "[]");
        return 1;
    }
}

static void on_fetch(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    rpcreq *r = data;
    if (ffb_result_status(res) < 0)
        fail_ffb(r, ffb_result_status(res), ffb_result_error(res));
    else if (!rows(r))
        return;
    queue_commit(r);
}

static void on_exec(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    rpcreq *r = data;
    if (ffb_result_status(res) < 0) {
        fail_ffb(r, ffb_result_status(res), ffb_result_error(res));
        queue_commit(r);
        return;
    }
    if (ffb_stmt_column_count(r->stmt) == 0 || rows(r))
        queue_commit(r);
}

#define RPC_FUNCTION_FETCH 2

static void run(rpcreq *r) {
    int rc = 0;
    if (r->b.as.stmt)
        rc = rest_req_queue_ctx(&r->b);
    for (size_t i = 0; rc == 0 && i < r->nargs; i++)
        rc = r->val[i] ? ffb_stmt_bind_text(r->stmt, (unsigned)i, r->val[i],
                                            r->vlen[i])
                       : ffb_stmt_bind_null(r->stmt, (unsigned)i);
    if (rc < 0) {
        fail_ffb(r, rc, ffb_conn_error(r->b.conn));
        queue_commit(r); /* the context block may be on its way */
        return;
    }
    int bounded = 1;
    if (r->rt->kind == REST_RT_FUNCTION)
        ffb_stmt_set_fetch_size(r->stmt, RPC_FUNCTION_FETCH);
    else if (r->rt->kind == REST_RT_SELECTABLE) {
        bounded = !r->unbounded;
        int64_t probe = r->b.app->cfg->db_probe_rows;
        if (bounded)
            rc = ffb_stmt_bind_int64(r->stmt, (unsigned)r->nargs, probe + 1);
        /* the probe's rows and the end in one fetch; unbounded: big
           batches, the commit waits for the end */
        ffb_stmt_set_fetch_size(r->stmt, bounded ? (int)probe + 2 : 1000);
        if (rc < 0) {
            fail_ffb(r, rc, ffb_conn_error(r->b.conn));
            queue_commit(r);
            return;
        }
    }
    rc = ffb_stmt_queue_execute(r->stmt, r->b.tx, on_exec, r);
    if (rc < 0) {
        fail_ffb(r, rc, ffb_conn_error(r->b.conn));
        queue_commit(r);
        return;
    }
    /* the commit rides with the execute: 1 round trip warm; with
       db-pre-request a POST's waits for the block's answer (the procedure
       behind it ran whether or not the block refused the request) */
    if (bounded && !(r->post && r->b.as.stmt && r->b.app->cfg->db_pre_request))
        queue_commit(r);
}

static void prepared(rest_req *b) {
    rpcreq *r = (rpcreq *)b;
    if (r->b.failed)
        queue_commit(r);
    else
        run(r);
}

static void start(rest_req *b) {
    rpcreq *r = (rpcreq *)b;
    int rc = rest_req_begin(b, !r->post, FFB_ISO_READ_COMMITTED);
    if (rc == 0 && r->b.as.sql) {
        rc = rest_req_prepare(b, r->b.as.sql, r->b.as.sql_len, &r->b.as.stmt);
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0) {
        rc = rest_req_prepare(b, r->sql.p, r->sql.len, &r->stmt);
        rc = rc < 0 ? rc : 0;
    }
    if (rc < 0) {
        rest_req_fail_conn(b, rc);
        if (r->b.waiting == 0) {
            if (r->b.tx)
                queue_commit(r);
            else
                finish(r);
        }
        return;
    }
    if (r->b.waiting == 0)
        run(r);
}

static const rest_req_ops rpc_ops = {start, prepared, NULL,
                                     done,  respond,  destroy};

/* ---- arguments ------------------------------------------------------------
 */

static int hexd(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Query-string text decoded ('+' is a space), into the arena. */
static char *qdecode(rarena *a, const char *s, size_t n, size_t *out) {
    char *d = rarena_alloc(a, n + 1);
    size_t k = 0;
    if (!d)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexd(s[i + 1]) >= 0 &&
            hexd(s[i + 2]) >= 0) {
            d[k++] = (char)(hexd(s[i + 1]) * 16 + hexd(s[i + 2]));
            i += 2;
        } else
            d[k++] = s[i] == '+' ? ' ' : s[i];
    }
    d[k] = '\0';
    *out = k;
    return d;
}

static int not_found(rpcreq *r, rest_err *err, const char *given) {
    rest_err_set(err, 404, "PGRST202", NULL,
                 "Could not find the function %s(%s) in the schema cache",
                 r->rt ? r->rt->exposed : "", given);
    snprintf(err->details, sizeof err->details,
             "Searched for the function %s with parameters %s, but no "
             "matches were found in the schema cache.",
             r->rt ? r->rt->exposed : "", *given ? given : "(none)");
    return -1;
}

/* Set argument `key` = value: 0, or 1 when the routine has no such
   argument. `given` collects the names for the message. */
static int set_arg(rpcreq *r, const char *key, const char *v, size_t vn,
                   int is_null, rbuf *given) {
    size_t pos;
    if (given->len)
        rbuf_adds(given, ", ");
    rbuf_adds(given, key);
    if (!rest_routine_find_arg(r->rt, key, &pos))
        return 1; /* reported once all names are known */
    r->val[pos] = is_null ? NULL : v;
    r->vlen[pos] = vn;
    if (pos + 1 > r->nargs)
        r->nargs = pos + 1;
    return 0;
}

static const char *const reserved[] = {"select", "order", "limit",  "offset",
                                       "or",     "and",   "columns"};

/* A key of the read's grammar: reserved, or an embed's ("track.order"). */
static int reserved_key(const char *k) {
    const char *dot = strrchr(k, '.');
    const char *last = dot ? dot + 1 : k;
    for (size_t x = 0; x < sizeof reserved / sizeof reserved[0]; x++)
        if (strcmp(last, reserved[x]) == 0)
            return 1;
    return 0;
}

/* A value shaped as a filter ("eq.1", "not.in.(1,2)", "fts(english).x",
   "eq(any).{1,2}"): on a name that is not an argument, a filter on the
   result (postgrest-js's .eq() after .rpc(..., {get: true})). */
static int filter_shaped(const char *v) {
    static const char *const ops[] = {
        "eq",    "neq",   "gt",   "gte",        "lt",    "lte",    "like",
        "ilike", "in",    "is",   "isdistinct", "match", "imatch", "fts",
        "plfts", "phfts", "wfts", "cs",         "cd",    "ov",     "sl",
        "sr",    "nxr",   "nxl",  "adj"};
    if (strncmp(v, "not.", 4) == 0)
        v += 4;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t n = strlen(ops[i]);
        if (strncmp(v, ops[i], n) == 0 && (v[n] == '.' || v[n] == '('))
            return 1;
    }
    return 0;
}

/* The query string. A GET's arguments; with `rq` (a selectable
   procedure, read as a table), every key that is not an argument and is
   reserved or has a filter-shaped value goes to `rq` as written (a POST's
   (args = 0): every key), for the read's grammar. Without `rq` such keys
   are 400 PGRST127 (ignoring them would answer what was not asked for). */
static int args_from_query(rpcreq *r, rest_err *err, unsigned char *setmask,
                           int args, rbuf *rq) {
    h2o_req_t *req = r->b.req;
    rbuf given;
    int unknown = 0;
    rbuf_init(&given, 4096);
    if (req->query_at != SIZE_MAX) {
        const char *q = req->path.base + req->query_at + 1;
        size_t qn = req->path.len - req->query_at - 1, i = 0;
        while (i < qn) {
            size_t s = i;
            while (i < qn && q[i] != '&')
                i++;
            const char *eq = memchr(q + s, '=', i - s);
            size_t kn, vn;
            char *k = qdecode(&r->b.arena, q + s,
                              (size_t)((eq ? eq : q + i) - (q + s)), &kn);
            char *v =
                eq ? qdecode(&r->b.arena, eq + 1, (size_t)(q + i - eq - 1), &vn)
                   : qdecode(&r->b.arena, "", 0, &vn);
            size_t seg = s, segn = i - s;
            i++;
            if (!k || !v) {
                rbuf_free(&given);
                rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
                return -1;
            }
            if (kn == 0)
                continue;
            size_t pos;
            int arg = args && rest_routine_find_arg(r->rt, k, &pos);
            int result =
                !args || (!arg && (filter_shaped(v) || reserved_key(k)));
            if (result && rq) {
                if (rq->len)
                    rbuf_addc(rq, '&');
                rbuf_add(rq, q + seg, segn);
                continue;
            }
            if (result) {
                rbuf_free(&given);
                rest_err_set(err, 400, "PGRST127",
                             "select, order, limit and filters on "
                             "the results of functions and executable "
                             "procedures",
                             "Feature not implemented");
                return -1;
            }
            if (arg)
                setmask[pos] = 1;
            unknown |= set_arg(r, k, v, vn, 0, &given);
        }
    }
    const char *g = rbuf_cstr(&given);
    int rc = unknown ? not_found(r, err, g ? g : "") : 0;
    rbuf_free(&given);
    return rc;
}

static int args_from_body(rpcreq *r, rest_err *err, unsigned char *setmask) {
    h2o_req_t *req = r->b.req;
    size_t n = req->entity.len;
    if (req->entity.base == NULL || n == 0)
        return 0; /* no body: no arguments */
    char *text = rarena_strndup(&r->b.arena, req->entity.base, n);
    char eb[128];
    yajl_val doc = text ? yajl_tree_parse(text, eb, sizeof eb) : NULL;
    const h2o_iovec_t *pv = rest_http_header_list(req, "prefer");
    rest_prefer pf;
    rest_parse_prefer(pv ? pv->base : NULL, pv ? pv->len : 0, &pf);
    if (doc && pf.params_single && strlen(text) == n) {
        /* Prefer: params=single-object: the whole body, as JSON text, is
           the one argument (Firebird has no json type: a text argument) */
        yajl_tree_free(doc);
        if (r->rt->nin != 1) {
            rest_err_set(err, 404, "PGRST202", NULL,
                         "Could not find the function %s with a single "
                         "parameter in the schema cache",
                         r->rt->exposed);
            return -1;
        }
        setmask[0] = 1;
        r->val[0] = text;
        r->vlen[0] = n;
        r->nargs = 1;
        return 0;
    }
    if (!doc || !YAJL_IS_OBJECT(doc) || strlen(text) != n) {
        yajl_tree_free(doc);
        rest_err_set(err, 400, "PGRST102", NULL, "Empty or invalid json");
        return -1;
    }
    rbuf given;
    int unknown = 0;
    rbuf_init(&given, 4096);
    for (size_t i = 0; i < doc->u.object.len; i++) {
        const char *k = doc->u.object.keys[i];
        yajl_val v = doc->u.object.values[i];
        const char *t = NULL;
        if (YAJL_IS_STRING(v))
            t = v->u.string;
        else if (YAJL_IS_NUMBER(v))
            t = YAJL_GET_NUMBER(v);
        else if (YAJL_IS_TRUE(v))
            t = "true";
        else if (YAJL_IS_FALSE(v))
            t = "false";
        else if (!YAJL_IS_NULL(v)) {
            yajl_tree_free(doc);
            rbuf_free(&given);
            rest_err_set(err, 400, "PGRST127",
                         "objects and arrays as RPC arguments",
                         "Feature not implemented");
            return -1;
        }
        char *copy = t ? rarena_strndup(&r->b.arena, t, strlen(t)) : NULL;
        char *kc = rarena_strndup(&r->b.arena, k, strlen(k));
        if ((t && !copy) || !kc) {
            yajl_tree_free(doc);
            rbuf_free(&given);
            rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
            return -1;
        }
        size_t pos;
        if (rest_routine_find_arg(r->rt, kc, &pos))
            setmask[pos] = 1;
        unknown |= set_arg(r, kc, copy, copy ? strlen(copy) : 0, !t, &given);
    }
    yajl_tree_free(doc);
    const char *g = rbuf_cstr(&given);
    int rc = unknown ? not_found(r, err, g ? g : "") : 0;
    rbuf_free(&given);
    return rc;
}

/* Every argument up to the last one given must be given (Firebird's
   arguments are positional); after it, each must have a default. */
static int check_args(rpcreq *r, const unsigned char *setmask, rest_err *err) {
    rbuf given;
    int bad = 0;
    rbuf_init(&given, 4096);
    for (size_t i = 0; i < r->rt->nin; i++) {
        if (setmask[i]) {
            if (given.len)
                rbuf_adds(&given, ", ");
            rbuf_adds(&given, r->rt->in[i].exposed);
        }
        if (i < r->nargs ? !setmask[i] : !r->rt->in[i].has_default)
            bad = 1;
    }
    const char *g = rbuf_cstr(&given);
    int rc = bad ? not_found(r, err, g ? g : "") : 0;
    rbuf_free(&given);
    return rc;
}

static void build_sql(rpcreq *r) {
    rbuf *b = &r->sql;
    const rest_routine *rt = r->rt;
    if (rt->kind == REST_RT_SELECTABLE)
        rbuf_adds(b, "SELECT * FROM ");
    else if (rt->kind == REST_RT_EXECUTABLE)
        rbuf_adds(b, "EXECUTE PROCEDURE ");
    else
        rbuf_adds(b, "SELECT ");
    rest_sql_quote_ident(b, rt->name);
    if (r->nargs || rt->kind == REST_RT_FUNCTION) {
        rbuf_addc(b, '(');
        for (size_t i = 0; i < r->nargs; i++)
            rbuf_adds(b, i ? ", ?" : "?");
        rbuf_addc(b, ')');
    }
    if (rt->kind == REST_RT_FUNCTION)
        rbuf_adds(b, " FROM RDB$DATABASE");
    /* the probe (db-probe-rows + 1 rows at most): the cursor ends within
       the first fetch, so the commit can ride with the execute */
    if (rt->kind == REST_RT_SELECTABLE && !r->unbounded)
        rbuf_adds(b, " FETCH NEXT ? ROWS ONLY");
}

int rest_rpc_handle(rest_app *app, h2o_req_t *req, const char *name, size_t n) {
    rest_err err;
    int head = h2o_memis(req->method.base, req->method.len, H2O_STRLIT("HEAD"));
    int get = h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET"));
    int post = h2o_memis(req->method.base, req->method.len, H2O_STRLIT("POST"));
    if (!get && !head && !post) {
        rest_err_set(&err, 405, "PGRST101", NULL,
                     "Only GET or POST is allowed");
        rest_http_send_error(req, app, &err, 0);
        return 0;
    }
    rpcreq *r = calloc(1, sizeof *r);
    if (!r) {
        rest_err_set(&err, 500, "PGRST000", NULL, "out of memory");
        rest_http_send_error(req, app, &err, head);
        return 0;
    }
    rest_req_init(&r->b, &rpc_ops, app, req, head, 8u << 20);
    r->post = post;
    rbuf_init(&r->sql, 1u << 20);
    rbuf_init(&r->body, 64u << 20);
    char *nm = rarena_strndup(&r->b.arena, name, n);
    if (!nm || memchr(name, '/', n) || n == 0) {
        rest_err_set(&err, 404, "PGRST125", NULL,
                     "Invalid path specified in request URL");
        goto fail;
    }
    r->rt = rest_schema_find_routine(app_schema(app), nm);
    if (!r->rt) {
        rest_err_set(&err, 404, "PGRST202", NULL,
                     "Could not find the function %.200s without parameters "
                     "in the schema cache",
                     nm);
        goto fail;
    }
    r->val = rarena_alloc(&r->b.arena, (r->rt->nin + 1) * sizeof *r->val);
    r->vlen = rarena_alloc(&r->b.arena, (r->rt->nin + 1) * sizeof *r->vlen);
    unsigned char *setmask = rarena_alloc(&r->b.arena, r->rt->nin + 1);
    if (!r->val || !r->vlen || !setmask) {
        rest_err_set(&err, 500, "PGRST000", NULL, "out of memory");
        goto fail;
    }
    /* a selectable procedure reads as a table: the query string's keys
       that are not arguments are the read's */
    rbuf rq;
    int selectable = r->rt->kind == REST_RT_SELECTABLE;
    /* A POST's call may write: it runs once, every row fetched before its
       commit (no probe, which would run it again when it answers more) */
    if (post && selectable)
        r->unbounded = 1;
    rbuf_init(&rq, 1u << 20);
    if ((post ? (args_from_query(r, &err, setmask, 0, selectable ? &rq : NULL) <
                         0
                     ? -1
                     : args_from_body(r, &err, setmask))
              : args_from_query(r, &err, setmask, 1, selectable ? &rq : NULL)) <
            0 ||
        check_args(r, setmask, &err) < 0) {
        rbuf_free(&rq);
        goto fail;
    }
    if (selectable && (!post || rq.len)) {
        /* GET/HEAD always, a POST with a query string: as a read of the
           procedure's table (with db-pre-request a POST's end must wait
           for the block, which the read path does not do) */
        if (post && app->cfg->db_pre_request) {
            rbuf_free(&rq);
            rest_err_set(&err, 400, "PGRST127",
                         "select, order, limit and filters on a POST to a "
                         "procedure with db-pre-request",
                         "Feature not implemented");
            goto fail;
        }
        rest_table t = r->rt->out;
        t.proc_vals = r->val;
        t.proc_nvals = r->nargs;
        const char *qs = rq.len ? rbuf_cstr(&rq) : "";
        if (rq.failed) {
            rbuf_free(&rq);
            rest_err_set(&err, 414, "PGRST000", NULL, "URI too long");
            goto fail;
        }
        rest_http_read_proc(app, req, &t, qs, rq.len, head, post);
        rbuf_free(&rq);
        rpc_free(r);
        return 0;
    }
    rbuf_free(&rq);
    if (rest_req_runas(&r->b, &err) < 0)
        goto fail;
    build_sql(r);
    if (r->sql.failed) {
        rest_err_set(&err, 500, "PGRST000", NULL, "out of memory");
        goto fail;
    }
    if (rest_req_acquire(&r->b, &err) < 0)
        goto fail;
    return 0;
fail:
    rest_http_send_error(req, app, &err, head);
    rpc_free(r);
    return 0;
}
