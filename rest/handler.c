/*
 * ffb-rest: the request handlers. A read (GET/HEAD /<table>) is parsed,
 * planned, and then, on a connection of the loop's pool, costs one round
 * trip when its statements are in the connection's cache: the start of a
 * read-only read-committed transaction, the page query with its first
 * fetch, the count and the commit all leave in one write.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "buf.h"
#include "context.h"
#include "cors.h"
#include "embed.h"
#include "http.h"
#include "json.h"
#include "openapi.h"
#include "reload.h"
#include "req.h"
#include "roles.h"
#include "rpc.h"
#include "server.h"
#include "sql.h"
#include "url.h"

typedef struct rest_handler {
    h2o_handler_t super;
    rest_app *app;
} rest_handler;

typedef struct rreq rreq;

/* A statement of a read with embeds: the top level or one embed level
   (embed.h); all are executed in one write. */
typedef struct estmt {
    rreq *rr;
    rest_enode *node;
    ffb_stmt *st;
} estmt;

struct rreq {
    rest_req b; /* the request on a pooled connection (req.h) */
    rest_query q;
    rest_plan plan;
    int has_plan;
    int singular;
    int count;         /* enum rest_count (Prefer: count=) */
    int commit_queued; /* b.again: more rows than the probe, read again
                          without it */
    ffb_stmt *stmt;
    ffb_stmt *cstmt;
    ffb_stmt *estmt; /* count=planned/estimated: the row estimate */
    int64_t planned; /* its answer; -1: unknown */
    int64_t counted; /* the count's answer; -1: none */
    rbuf body;
    int64_t nrows;
    int64_t total;           /* -1: unknown */
    char **keyjson;          /* "\"key\":" per output column */
    const char *name;        /* the table as the client named it */
    const rest_table *table; /* a selectable procedure's (RPC), or NULL */
    int read_write;          /* an RPC POST: the procedure may write */
    /* blobs of the page: opened while the rows are written, read once
       every row is in (one write for all), spliced into the body at the
       end */
    estmt *es; /* with embeds: [0] the top level, then every level */
    size_t nes;
    size_t epending;     /* statements whose rows are not all in */
    int no_early_commit; /* a level was longer than one fetch */
    size_t elevel;       /* per-level: the depth being read */
    size_t lwait;        /* per-level: prepares of that depth not answered */
    struct rblob *blobs;
    size_t nblobs;
    size_t capblobs;
    size_t blobs_pending;
    int has_blobs; /* the page has blob columns: the commit waits */
};

typedef struct rblob {
    rreq *rr;
    ffb_blob *blob;
    size_t at; /* where in the body its JSON goes */
    int text;  /* BLOB SUB_TYPE TEXT: a string; else "\\x..." */
    rbuf data;
} rblob;

/* ---- responses ---------------------------------------------------------- */

static void add_header(h2o_req_t *req, const char *name, const char *value,
                       size_t vlen) {
    /* h2o keeps the pointers: copy both into the request's pool */
    h2o_iovec_t n = h2o_strdup(&req->pool, name, strlen(name));
    h2o_iovec_t v = h2o_strdup(&req->pool, value, vlen);
    h2o_add_header_by_str(&req->pool, &req->res.headers, n.base, n.len, 1, NULL,
                          v.base, v.len);
}

static const char *reason(int status) {
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 206:
        return "Partial Content";
    case 300:
        return "Multiple Choices";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 409:
        return "Conflict";
    case 413:
        return "Payload Too Large";
    case 414:
        return "URI Too Long";
    case 416:
        return "Range Not Satisfiable";
    case 431:
        return "Request Header Fields Too Large";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return status >= 500 ? "Internal Server Error" : "Error";
    }
}

static void send_body(h2o_req_t *req, int status, const char *ctype,
                      const char *body, size_t len, int head) {
    req->res.status = status;
    req->res.reason = reason(status);
    if (ctype)
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE,
                       NULL, ctype, strlen(ctype));
    req->res.content_length = head ? SIZE_MAX : len;
    h2o_send_inline(req, head ? "" : body, head ? 0 : len);
}

static void send_error(h2o_req_t *req, const rest_app *app, const rest_err *e,
                       int head) {
    rbuf b;
    char ps[64];
    rbuf_init(&b, 0);
    json_error(&b, e, app->cfg->client_error_minimal);
    snprintf(ps, sizeof ps, "ffb-rest; error=%s", e->code);
    add_header(req, "proxy-status", ps, strlen(ps));
    char wa[400];
    if (rest_jwt_www_authenticate(e, wa, sizeof wa))
        add_header(req, "www-authenticate", wa, strlen(wa));
    if (b.failed)
        send_body(req, 500, "application/json; charset=utf-8", "{}", 2, head);
    else
        send_body(req, e->status, "application/json; charset=utf-8", b.p, b.len,
                  head);
    rbuf_free(&b);
}

/* The loop whose h2o context serves `req`. */
static rest_loop *loop_of(h2o_req_t *req) {
    return (rest_loop *)(void *)((char *)req->conn->ctx -
                                 offsetof(rest_loop, ctx));
}

/* ---- request headers ---------------------------------------------------- */

static const h2o_iovec_t *header(h2o_req_t *req, const char *name) {
    ssize_t i = h2o_find_header_by_str(&req->headers, name, strlen(name), -1);
    return i < 0 ? NULL : &req->headers.entries[i].value;
}

/* A list header (Prefer, Accept): every line of `name` joined with ", ",
   as RFC 9110 5.3 combines a field's lines and PostgREST reads them
   (one line: that line, not copied). The copy lives in the request's
   pool, bounded by h2o's limit on the header block. NULL when absent. */
static const h2o_iovec_t *header_list(h2o_req_t *req, const char *name) {
    const h2o_headers_t *hs = &req->headers;
    size_t nl = strlen(name), len = 0, n = 0;
    ssize_t first = h2o_find_header_by_str(hs, name, nl, -1);
    for (ssize_t i = first; i >= 0; i = h2o_find_header_by_str(hs, name, nl, i))
        len += hs->entries[i].value.len + 2, n++;
    if (n <= 1)
        return first < 0 ? NULL : &hs->entries[first].value;
    h2o_iovec_t *v = h2o_mem_alloc_pool(&req->pool, sizeof *v + len);
    char *p = (char *)(v + 1);
    v->base = p;
    for (ssize_t i = first; i >= 0;
         i = h2o_find_header_by_str(hs, name, nl, i)) {
        if (p != v->base)
            *p++ = ',', *p++ = ' ';
        memcpy(p, hs->entries[i].value.base, hs->entries[i].value.len);
        p += hs->entries[i].value.len;
    }
    v->len = (size_t)(p - v->base);
    return v;
}

/* Does the comma-separated list `v` hold `token` (before any ';')? */
static int list_has(const h2o_iovec_t *v, const char *token) {
    size_t tn = strlen(token), i = 0;
    while (v && i < v->len) {
        while (i < v->len && (v->base[i] == ' ' || v->base[i] == ','))
            i++;
        size_t st = i;
        while (i < v->len && v->base[i] != ',' && v->base[i] != ';')
            i++;
        size_t e = i;
        while (e > st && v->base[e - 1] == ' ')
            e--;
        if (e - st == tn && strncasecmp(v->base + st, token, tn) == 0)
            return 1;
        while (i < v->len && v->base[i] != ',')
            i++;
    }
    return 0;
}

/* Accept: JSON, the singular object, or anything; else 406 PGRST107. */
static int parse_accept(h2o_req_t *req, int *singular, rest_err *err) {
    const h2o_iovec_t *v = header_list(req, "accept");
    *singular = 0;
    if (!v || v->len == 0)
        return 0;
    if (list_has(v, "application/vnd.pgrst.object+json") ||
        list_has(v, "application/vnd.pgrst.object")) {
        *singular = 1;
        return 0;
    }
    if (list_has(v, "application/json") || list_has(v, "*/*") ||
        list_has(v, "application/*"))
        return 0;
    rest_err_set(err, 406, "PGRST107", NULL,
                 "None of these media types are available: %.*s",
                 (int)(v->len > 128 ? 128 : v->len), v->base);
    return -1;
}

/* ---- the read ------------------------------------------------------------ */

static void free_blobs(rreq *rr) {
    for (size_t i = 0; i < rr->nblobs; i++) {
        ffb_blob_free(rr->blobs[i].blob);
        rbuf_free(&rr->blobs[i].data);
    }
    free(rr->blobs);
    rr->blobs = NULL;
    rr->nblobs = rr->capblobs = rr->blobs_pending = 0;
}

static void free_estmts(rreq *rr);

static void rreq_free(rreq *rr) {
    free_blobs(rr);
    free_estmts(rr);
    if (rr->has_plan)
        rest_plan_free(&rr->plan);
    rbuf_free(&rr->body);
    rest_req_free(&rr->b);
    free(rr);
}

static uint64_t conn_rts(const ffb_conn *c) {
    ffb_stats st;
    if (ffb_conn_stats(c, &st, sizeof st) < 0)
        return 0;
    return st.round_trips;
}

static void fail_ffb(rreq *rr, int code, const ffb_error *e) {
    rest_req_fail(&rr->b, code, e);
}

static void respond(rest_req *r, uint64_t rts, int used_db) {
    rreq *rr = (rreq *)r;
    h2o_req_t *req = rr->b.req;
    char tmp[128];
    (void)used_db; /* Server-Timing also on a failed acquire (rt=0) */
    if (rest_req_respond_head(r, rts, 1, &rr->body))
        return;
    int64_t lower = rr->plan.offset;
    int64_t upper = lower + rr->nrows - 1;
    int status = 200;
    if (rr->total >= 0) {
        if (lower > rr->total) {
            rest_err e;
            char d[160];
            snprintf(d, sizeof d,
                     "An offset of %lld was requested, but there are only "
                     "%lld rows.",
                     (long long)lower, (long long)rr->total);
            rest_err_set(&e, 416, "PGRST103", d,
                         "Requested range not satisfiable");
            snprintf(tmp, sizeof tmp, "*/%lld", (long long)rr->total);
            add_header(req, "content-range", tmp, strlen(tmp));
            send_error(req, rr->b.app, &e, rr->b.head);
            return;
        }
        if (1 + upper - lower < rr->total)
            status = 206;
    }
    /* lower-upper/total, "*" for an empty page or an unknown total
       (3 numbers of at most 20 characters fit in tmp) */
    size_t tl = 0;
    if (rr->nrows == 0)
        tmp[tl++] = '*';
    else {
        tl += rest_fmt_i64(tmp + tl, lower);
        tmp[tl++] = '-';
        tl += rest_fmt_i64(tmp + tl, upper);
    }
    tmp[tl++] = '/';
    if (rr->total >= 0)
        tl += rest_fmt_i64(tmp + tl, rr->total);
    else
        tmp[tl++] = '*';
    add_header(req, "content-range", tmp, tl);
    static const char *const applied[] = {NULL, "count=exact", "count=planned",
                                          "count=estimated"};
    if (rr->count)
        add_header(req, "preference-applied", applied[rr->count],
                   strlen(applied[rr->count]));
    if (rr->singular) {
        if (rr->nrows != 1) {
            rest_err e;
            char d[96];
            snprintf(d, sizeof d, "The result contains %lld rows",
                     (long long)rr->nrows);
            rest_err_set(&e, 406, "PGRST116", d,
                         "JSON object requested, multiple (or no) rows "
                         "returned");
            send_error(req, rr->b.app, &e, rr->b.head);
            return;
        }
        /* the one object, without the array's brackets */
        send_body(req, status,
                  "application/vnd.pgrst.object+json; charset=utf-8",
                  rr->body.p + 1, rr->body.len - 2, rr->b.head);
        return;
    }
    send_body(req, status, "application/json; charset=utf-8", rr->body.p,
              rr->body.len, rr->b.head);
}

static void start(rest_req *r);

/* The planner's options of a read (`probe`: 0 when reading again). */
static void read_opts(const rreq *rr, rest_plan_opts *po, int64_t probe) {
    const rest_config *cfg = rr->b.app->cfg;
    memset(po, 0, sizeof *po);
    po->max_rows = cfg->db_max_rows;
    po->null_order_pg = cfg->db_null_order_pg;
    po->probe = probe;
    po->table = rr->table;
    po->aggregates = cfg->db_aggregates_enabled;
    rest_plan_count_opts(po, rr->count);
}

/* The embed levels' statements (the top level's is rr->stmt). */
static void free_estmts(rreq *rr) {
    for (size_t i = 1; i < rr->nes; i++)
        ffb_stmt_free(rr->es[i].st);
    free(rr->es);
    rr->es = NULL;
    rr->nes = 0;
}

/* The body with every blob's JSON put where its column was. */
static void splice_blobs(rreq *rr) {
    rbuf out;
    size_t prev = 0;
    rbuf_init(&out, rr->body.max);
    for (size_t i = 0; i < rr->nblobs; i++) {
        rblob *b = &rr->blobs[i];
        rbuf_add(&out, rr->body.p + prev, b->at - prev);
        if (b->text)
            json_string(&out, b->data.p ? b->data.p : "", b->data.len);
        else
            json_hex(&out, b->data.p ? b->data.p : "", b->data.len);
        prev = b->at;
        if (b->data.failed)
            out.failed = 1;
    }
    rbuf_add(&out, rr->body.p + prev, rr->body.len - prev);
    rbuf_free(&rr->body);
    rr->body = out;
}

/* The read's database work is over: read again without the probe, or
   its answer assembled and its statements freed. */
static int done(rest_req *r) {
    rreq *rr = (rreq *)r;
    if (rr->b.again && !rr->b.failed) {
        /* the probe found more rows than it asked for, or Firebird
           ended an answer early with the commit on its way: plan again
           without the probe and read the whole answer on the same
           connection, the commit after it */
        rest_err err;
        rest_plan_opts po;
        read_opts(rr, &po, 0);
        free_blobs(rr);
        free_estmts(rr);
        ffb_stmt_free(rr->stmt);
        ffb_stmt_free(rr->cstmt);
        ffb_stmt_free(rr->estmt);
        rr->stmt = rr->cstmt = rr->estmt = NULL;
        rest_req_drop_tx(&rr->b);
        rest_plan_free(&rr->plan);
        rr->has_plan = 0;
        rr->b.again = 0;
        rr->commit_queued = 0;
        rr->nrows = 0;
        rr->total = rr->counted = rr->planned = -1;
        rbuf_reset(&rr->body);
        if (rest_plan_read(&rr->b.arena, app_schema(rr->b.app), rr->name,
                           &rr->q, &po, &rr->plan, &err) == 0) {
            rr->has_plan = 1;
            if (rr->plan.embed)
                rr->plan.embed->per_level = rr->b.app->cfg->db_embed_per_level;
            start(&rr->b);
            return 1;
        }
        rr->b.failed = 1;
        rr->b.err = err;
    }
    if (rr->nblobs && !rr->b.failed)
        splice_blobs(rr);
    if (rr->plan.embed && !rr->b.failed) {
        rr->nrows = (int64_t)rr->plan.embed->root->nrows;
        if (rest_embed_write(rr->plan.embed, &rr->body) < 0)
            rr->body.failed = 1;
    }
    for (size_t i = 0; i < rr->nblobs; i++) {
        ffb_blob_free(rr->blobs[i].blob);
        rr->blobs[i].blob = NULL;
    }
    free_estmts(rr);
    ffb_stmt_free(rr->stmt);
    ffb_stmt_free(rr->cstmt);
    ffb_stmt_free(rr->estmt);
    rr->stmt = rr->cstmt = rr->estmt = NULL;
    rr->total = rest_plan_count_total(rr->count, rr->b.app->cfg->db_max_rows,
                                      rr->counted, rr->planned);
    return 0;
}

static void destroy(rest_req *r) { rreq_free((rreq *)r); }

static void finish(rreq *rr) { rest_req_finish(&rr->b); }

static void queue_commit(rreq *rr) {
    if (rr->commit_queued)
        return;
    rr->commit_queued = 1;
    if (rest_req_queue_end(&rr->b, 0) < 0)
        finish(rr);
}

static void on_fetch(ffb_conn *conn, const ffb_result *res, void *data);

static int open_blob(rreq *rr, unsigned col, const ffb_column_info *ci) {
    uint8_t id[8];
    int rc = ffb_stmt_get_blob_id(rr->stmt, col, id);
    if (rc < 0)
        return rc;
    if (rr->nblobs == rr->capblobs) {
        size_t nc = rr->capblobs ? rr->capblobs * 2 : 16;
        rblob *nb = realloc(rr->blobs, nc * sizeof *nb);
        if (!nb)
            return FFB_E_NOMEM;
        rr->blobs = nb;
        rr->capblobs = nc;
    }
    rblob *b = &rr->blobs[rr->nblobs];
    memset(b, 0, sizeof *b);
    b->rr = rr;
    b->at = rr->body.len;
    b->text = ci->subtype == 1;
    rbuf_init(&b->data, 16u << 20);
    /* nothing is sent yet: the opens of a page go out with the first
       read, all in one write */
    rc = ffb_blob_open(rr->b.conn, rr->b.tx, id, 0, &b->blob);
    if (rc < 0)
        return rc;
    rr->nblobs++;
    return 0;
}

static void on_blob(ffb_conn *conn, const ffb_result *res, void *data);

/* Take what is buffered; 1 when the blob is complete, 0 while a read is
   on its way, < 0 on failure. */
static int pump_blob(rblob *b) {
    char tmp[16384];
    for (;;) {
        size_t got = 0;
        ffb_blob_info bi;
        /* the open's info (prefetched with it) tells the length: the end
           is known without asking for it */
        if (ffb_blob_get_info(b->blob, &bi, sizeof bi) == 0 && bi.length >= 0 &&
            (uint64_t)bi.length == b->data.len)
            return 1;
        int rc = ffb_blob_read(b->blob, tmp, sizeof tmp, &got);
        if (rc == 0 && got == 0)
            return 1;
        if (rc == 0) {
            rbuf_add(&b->data, tmp, got);
            if (b->data.failed)
                return FFB_E_NOMEM;
            continue;
        }
        if (rc != FFB_E_AGAIN)
            return rc;
        rc = ffb_blob_queue_read(b->blob, on_blob, b);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return rc;
    }
}

static void blob_done(rreq *rr) {
    if (--rr->blobs_pending == 0)
        queue_commit(rr);
}

static void on_blob(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    rblob *b = data;
    rreq *rr = b->rr;
    if (ffb_result_status(res) < 0) {
        fail_ffb(rr, ffb_result_status(res), ffb_result_error(res));
        blob_done(rr);
        return;
    }
    int rc = rr->b.failed ? 1 : pump_blob(b);
    if (rc < 0)
        fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
    if (rc != 0)
        blob_done(rr);
}

/* Take what every blob has buffered; a blob that needs more gets a read
   (its callback finishes it). */
static void pump_all(rreq *rr) {
    for (size_t i = 0; i < rr->nblobs && !rr->b.failed; i++) {
        int rc = pump_blob(&rr->blobs[i]);
        if (rc < 0)
            fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
        else if (rc == 0)
            rr->blobs_pending++;
    }
}

static void on_blobs_in(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    rreq *rr = data;
    if (ffb_result_status(res) < 0)
        fail_ffb(rr, ffb_result_status(res), ffb_result_error(res));
    else
        pump_all(rr);
    blob_done(rr);
}

/*
 * Every row is in: read the page's blobs, then commit; without blobs,
 * commit now. Only the last blob is asked for: that flushes every open
 * with its prefetch (64 KiB) in one write, and its answer comes after
 * all the others, so then every blob that fits its prefetch is complete
 * (asking each blob in turn makes the later ones wait for the earlier
 * opens' answers: one more round trip, measured).
 */
static void rows_done(rreq *rr) {
    if (rr->commit_queued)
        return;
    if (rr->nblobs == 0 || rr->b.failed) {
        queue_commit(rr);
        return;
    }
    rr->blobs_pending = 1;
    int rc =
        ffb_blob_queue_read(rr->blobs[rr->nblobs - 1].blob, on_blobs_in, rr);
    if (rc == 0)
        return;
    if (rc < 0)
        fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
    else
        pump_all(rr); /* all buffered already (inline blobs) */
    blob_done(rr);
}

/* Write the buffered rows; ask for more when the page is longer than the
   first fetch (reads without a limit). Returns 1 at the end. */
static int rows(rreq *rr) {
    /* the keys' columns; the time zone offsets follow them (sql.h) */
    unsigned ncol = (unsigned)rr->plan.nkeys;
    if (ncol > ffb_stmt_column_count(rr->stmt))
        ncol = ffb_stmt_column_count(rr->stmt);
    ffb_column_info ci[64];
    ffb_column_info *cis = ncol <= 64 ? ci : malloc(ncol * sizeof *cis);
    if (!cis) {
        rest_err_set(&rr->b.err, 500, "PGRST000", NULL, "out of memory");
        rr->b.failed = 1;
        return 1;
    }
    for (unsigned c = 0; c < ncol; c++)
        ffb_stmt_column_info(rr->stmt, c, &cis[c], sizeof cis[c]);
    int done = 0;
    for (;;) {
        int rc = ffb_stmt_fetch(rr->stmt);
        if (rc == 1) {
            if (rr->plan.probe > 0 && rr->nrows == rr->plan.probe) {
                /* one row more than the probe: the answer is longer than
                   one fetch; the commit is on its way, so read it again
                   without the probe (run_again) */
                rr->b.again = 1;
                done = 1;
                goto out;
            }
            rbuf_addc(&rr->body, rr->nrows ? ',' : '[');
            rbuf_addc(&rr->body, '{');
            for (unsigned c = 0; c < ncol; c++) {
                if (c)
                    rbuf_addc(&rr->body, ',');
                rbuf_adds(&rr->body, rr->keyjson[c]);
                int jr;
                if (cis[c].sqltype == FFB_SQL_BLOB &&
                    ffb_stmt_is_null(rr->stmt, c) == 0)
                    jr = open_blob(rr, c, &cis[c]);
                else if (rr->plan.tzcol && rr->plan.tzcol[c] >= 0)
                    jr = json_tz_column(&rr->body, rr->stmt, c, &cis[c],
                                        (unsigned)rr->plan.tzcol[c]);
                else
                    jr = json_column(&rr->body, rr->stmt, c, &cis[c]);
                if (jr < 0) {
                    fail_ffb(rr, jr, ffb_conn_error(rr->b.conn));
                    done = 1;
                    goto out;
                }
            }
            rbuf_addc(&rr->body, '}');
            rr->nrows++;
            continue;
        }
        if ((rc == FFB_E_AGAIN || rc == FFB_E_STATE) && rr->commit_queued) {
            /* Firebird ended the answer before the page's last row
               (more than 128 KiB of rows: ffb_stmt_row_wire_max()), and
               the commit on its way closes the cursor (the library says
               FFB_E_STATE): read again, committing after the rows */
            rr->b.again = 1;
            rr->no_early_commit = 1;
            done = 1;
            goto out;
        }
        if (rc == FFB_E_AGAIN) {
            rc = ffb_stmt_queue_fetch(rr->stmt, on_fetch, rr);
            if (rc == 0)
                goto out; /* more rows on their way */
            if (rc == 1)
                continue;
        }
        if (rc < 0)
            fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
        done = 1;
        goto out;
    }
out:
    if (done && !rr->b.failed && !rr->b.again) {
        if (rr->nrows == 0)
            rbuf_addc(&rr->body, '[');
        rbuf_addc(&rr->body, ']');
    }
    if (cis != ci)
        free(cis);
    return done;
}

static void on_fetch(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    rreq *rr = data;
    if (ffb_result_status(res) < 0) {
        fail_ffb(rr, ffb_result_status(res), ffb_result_error(res));
        queue_commit(rr);
        return;
    }
    if (rows(rr))
        rows_done(rr);
}

static void on_exec(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    rreq *rr = data;
    if (ffb_result_status(res) < 0) {
        fail_ffb(rr, ffb_result_status(res), ffb_result_error(res));
        if (!rr->commit_queued)
            queue_commit(rr);
        return;
    }
    if (rows(rr))
        rows_done(rr);
}

/* ---- reads with embeds: every level's rows, then the commit ----------------
 */

static void on_efetch(ffb_conn *conn, const ffb_result *res, void *data);

static void launch_level(rreq *rr, size_t depth);

static void edone(rreq *rr) {
    if (--rr->epending > 0)
        return;
    rest_eplan *ep = rr->plan.embed;
    if (ep->per_level && !rr->b.failed && !rr->b.again &&
        rr->elevel < ep->depth) {
        launch_level(rr, ++rr->elevel);
        return;
    }
    queue_commit(rr); /* nothing when it is queued already */
}

/* Take a statement's rows; fetch more while the commit is not on its way
   (else read the request again without the early commit). */
static void edrain(estmt *es) {
    rreq *rr = es->rr;
    int64_t probe = es->node->parent ? 0 : rr->plan.probe;
    for (;;) {
        int rc = rr->b.failed
                     ? 1
                     : rest_embed_take(rr->plan.embed, es->node, es->st, probe);
        if ((rc == FFB_E_AGAIN || rc == FFB_E_STATE) && rr->commit_queued) {
            /* the level's answer ended early (rows() above) */
            rr->b.again = 1;
            rr->no_early_commit = 1;
            break;
        }
        if (rc == FFB_E_AGAIN) {
            rc = ffb_stmt_queue_fetch(es->st, on_efetch, es);
            if (rc == 0)
                return;
            if (rc == 1)
                continue;
        }
        if (rc == 2)
            rr->b.again = 1; /* the probe: read again without it */
        else if (rc < 0)
            fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
        break;
    }
    edone(rr);
}

static void on_efetch(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    estmt *es = data;
    if (ffb_result_status(res) < 0) {
        fail_ffb(es->rr, ffb_result_status(res), ffb_result_error(res));
        edone(es->rr);
        return;
    }
    edrain(es);
}

static void on_eexec(ffb_conn *conn, const ffb_result *res, void *data) {
    on_efetch(conn, res, data);
}

/* ---- db-embed-strategy = per-level: a round trip per depth --------------- */

static int bind_plan(const rest_plan *pl, ffb_stmt *st, size_t n);
#define REST_MAX_FETCH 10000
#define REST_MAX_IN_KEYS 32

/* The last prepare of a depth is answered (or all were cached): the
   deepest depth's commit goes with its executes. */
static void level_queued(rreq *rr) {
    if (rr->lwait == 0 && rr->elevel == rr->plan.embed->depth &&
        !rr->no_early_commit)
        queue_commit(rr);
}

static void level_exec(estmt *es) {
    rreq *rr = es->rr;
    int rc = bind_plan(&es->node->plan, es->st, es->node->plan.nparams);
    if (rc == 0) {
        ffb_stmt_set_fetch_size(es->st, REST_MAX_FETCH);
        rc = ffb_stmt_queue_execute(es->st, rr->b.tx, on_eexec, es);
    }
    if (rc < 0) {
        fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
        edone(rr);
    }
}

static void on_lprepared(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    estmt *es = data;
    rreq *rr = es->rr;
    rr->lwait--;
    if (ffb_result_status(res) < 0) {
        fail_ffb(rr, ffb_result_status(res), ffb_result_error(res));
        edone(rr);
    } else if (rr->b.failed) {
        edone(rr);
    } else {
        level_exec(es);
    }
    level_queued(rr);
}

/* Every level of `depth`, restricted to its parent's keys as parameters. */
static void launch_level(rreq *rr, size_t depth) {
    rest_eplan *ep = rr->plan.embed;
    size_t n = 0;
    rr->lwait = 0;
    for (size_t i = 1; i < rr->nes; i++) {
        estmt *es = &rr->es[i];
        if (es->node->depth != depth)
            continue;
        const char **keys = NULL;
        long nk = es->node->nk == 1 ? rest_embed_keys(ep, es->node, &keys) : -1;
        if (nk == 0)
            continue; /* no parent has a key: no rows */
        /* Firebird before 5 looks an IN list up value by value (about
           35 us each on FB4, measured: 256 keys cost 11 ms): more keys
           than REST_MAX_IN_KEYS keep the level's sub-select */
        if (nk > REST_MAX_IN_KEYS)
            nk = -1;
        rest_err err;
        if (nk > 0 &&
            rest_embed_level_keys(ep, es->node, keys, (size_t)nk, &err) < 0) {
            rr->b.failed = 1;
            rr->b.err = err;
            break;
        }
        n++;
        rr->epending++;
        int r = ffb_conn_queue_prepare(
            rr->b.conn, rr->b.tx, es->node->plan.sql.p, es->node->plan.sql.len,
            &es->st, on_lprepared, es);
        if (r >= 0)
            rest_req_stmt_timeout(rr->b.app, es->st);
        if (r < 0) {
            fail_ffb(rr, r, ffb_conn_error(rr->b.conn));
            rr->epending--;
            break;
        }
        if (r == 0)
            rr->lwait++;
        else
            level_exec(es);
    }
    if (rr->epending == 0) {
        /* nothing at this depth: the next, or the commit */
        rr->epending = 1;
        edone(rr);
        return;
    }
    (void)n;
    level_queued(rr);
}

static void on_count(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    rreq *rr = data;
    int64_t v;
    if (rest_req_check(&rr->b, res) < 0)
        return;
    if (ffb_stmt_fetch(rr->cstmt) == 1 &&
        ffb_stmt_get_int64(rr->cstmt, 0, &v) == 0)
        rr->counted = v;
    ffb_stmt_close_cursor(rr->cstmt);
}

static void on_estimate(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    rreq *rr = data;
    double s;
    if (rest_req_check(&rr->b, res) < 0)
        return;
    /* no row: a view, or a table without a primary or unique key */
    if (ffb_stmt_fetch(rr->estmt) == 1 &&
        ffb_stmt_get_double(rr->estmt, 0, &s) == 0)
        rr->planned = rest_plan_estimate(s);
    ffb_stmt_close_cursor(rr->estmt);
}

/* The count and the row estimate behind the page's execute (same write). */
static int queue_counts(rreq *rr) {
    int rc = 0;
    if (rr->cstmt)
        rc = ffb_stmt_queue_execute(rr->cstmt, rr->b.tx, on_count, rr);
    if (rc == 0 && rr->estmt)
        rc = ffb_stmt_queue_execute(rr->estmt, rr->b.tx, on_estimate, rr);
    return rc;
}

static int bind_plan(const rest_plan *pl, ffb_stmt *st, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const rest_param *p = &pl->params[i];
        int rc = p->is_int ? ffb_stmt_bind_int64(st, (unsigned)i, p->i)
                 : p->is_null
                     ? ffb_stmt_bind_null(st, (unsigned)i)
                     : ffb_stmt_bind_text(st, (unsigned)i, p->text, (size_t)-1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int bind_params(rreq *rr, ffb_stmt *st, size_t n) {
    return bind_plan(&rr->plan, st, n);
}

/* The largest page whose rows ride with the execute, so that the commit
   can go in the same write. */
#define REST_MAX_FETCH 10000

/* The request context's block, in front of the statements (same write). */
static int queue_ctx(rreq *rr) { return rest_req_queue_ctx(&rr->b); }

/* Nothing of the statements was sent: done, or, when the context block
   went ahead, done once it is answered (with the commit's answer). */
static void abort_run(rreq *rr) {
    if (rr->b.as.stmt)
        queue_commit(rr);
    else
        finish(rr);
}

/* With embeds: every level bound and executed after the top level, each
   asking for REST_MAX_FETCH rows in its first fetch; the commit follows
   in the same write unless a level was longer once (then it waits). */
static void run_embeds(rreq *rr, int bounded) {
    int rc = 0;
    rr->es[0].st = rr->stmt;
    for (size_t i = 0; i < rr->nes && rc == 0; i++) {
        ffb_stmt *st = rr->es[i].st;
        if (!st)
            continue; /* per-level: prepared once its parent is read */
        unsigned ncol = ffb_stmt_column_count(st);
        for (unsigned c = 0; c < ncol; c++) {
            ffb_column_info ci;
            if (ffb_stmt_column_info(st, c, &ci, sizeof ci) == 0 &&
                ci.sqltype == FFB_SQL_BLOB) {
                rest_err_set(&rr->b.err, 400, "PGRST127",
                             "blob columns in a read with embeds",
                             "Feature not implemented");
                rr->b.failed = 1;
                abort_run(rr);
                return;
            }
        }
        if (i > 0 && st)
            rc = bind_plan(&rr->es[i].node->plan, st,
                           rr->es[i].node->plan.nparams);
    }
    if (rc < 0) {
        fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
        abort_run(rr);
        return;
    }
    int per_level = rr->plan.embed->per_level;
    size_t nexec = per_level ? 1 : rr->nes;
    rr->epending = nexec;
    rr->elevel = 0;
    for (size_t i = 0; i < nexec; i++) {
        if (i > 0)
            ffb_stmt_set_fetch_size(rr->es[i].st, REST_MAX_FETCH);
        rc = ffb_stmt_queue_execute(rr->es[i].st, rr->b.tx, on_eexec,
                                    &rr->es[i]);
        if (rc < 0) {
            fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
            rr->epending = i; /* the queued ones answer */
            if (i == 0) {
                abort_run(rr);
                return;
            }
            queue_commit(rr);
            return;
        }
        if (i == 0)
            rc = queue_counts(rr);
        if (rc < 0) {
            fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
            rr->epending = 1;
            queue_commit(rr);
            return;
        }
    }
    if (bounded && !rr->no_early_commit && !per_level)
        queue_commit(rr);
}

/* Both statements are usable: bind, execute, count, commit: one write. */
static void run(rreq *rr) {
    int rc = queue_ctx(rr);
    if (rc < 0) {
        fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
        finish(rr);
        return;
    }
    rc = bind_params(rr, rr->stmt, rr->plan.nparams);
    if (rc == 0 && rr->cstmt)
        rc = bind_params(rr, rr->cstmt, rr->plan.nwhere);
    if (rc == 0 && rr->estmt)
        rc = ffb_stmt_bind_text(rr->estmt, 0, rr->plan.est_table, (size_t)-1);
    if (rc < 0) {
        /* a value the column's type refuses: nothing was sent but the
           context block, whose answer comes with the commit's */
        fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
        if (rr->b.as.stmt)
            queue_commit(rr);
        else
            finish(rr);
        return;
    }
    int64_t page = rr->plan.probe > 0 ? rr->plan.probe + 1 : rr->plan.limit;
    int bounded = page >= 0 && page < REST_MAX_FETCH;
    unsigned ncol = ffb_stmt_column_count(rr->stmt);
    for (unsigned c = 0; c < ncol; c++) {
        ffb_column_info ci;
        if (ffb_stmt_column_info(rr->stmt, c, &ci, sizeof ci) == 0 &&
            ci.sqltype == FFB_SQL_BLOB)
            rr->has_blobs = 1;
    }
    if (bounded)
        ffb_stmt_set_fetch_size(rr->stmt, (int)page + 1);
    if (rr->plan.embed) {
        run_embeds(rr, bounded);
        return;
    }
    rc = ffb_stmt_queue_execute(rr->stmt, rr->b.tx, on_exec, rr);
    if (rc == 0)
        rc = queue_counts(rr);
    if (rc < 0) {
        fail_ffb(rr, rc, ffb_conn_error(rr->b.conn));
        /* an execute may be queued already: its answer comes */
        queue_commit(rr);
        return;
    }
    if (bounded && !rr->has_blobs && !rr->no_early_commit)
        queue_commit(rr);
}

/* Every prepare is answered. */
static void prepared(rest_req *r) {
    rreq *rr = (rreq *)r;
    if (rr->b.failed) {
        finish(rr);
        return;
    }
    run(rr);
}

/* On the connection: the transaction, the statements from the cache. */
static void start(rest_req *r) {
    rreq *rr = (rreq *)r;
    /* with embeds, every level's statement must see the same rows: one
       snapshot for all */
    int rc = rest_req_begin(r, !rr->read_write,
                            rr->plan.embed ? FFB_ISO_SNAPSHOT
                                           : FFB_ISO_READ_COMMITTED);
    if (rc == 0 && r->as.sql) {
        rc = rest_req_prepare(r, r->as.sql, r->as.sql_len, &r->as.stmt);
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0) {
        rc = rest_req_prepare(r, rr->plan.sql.p, rr->plan.sql.len, &rr->stmt);
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0 && rr->plan.est_sql) {
        rc = rest_req_prepare(r, rr->plan.est_sql, strlen(rr->plan.est_sql),
                              &rr->estmt);
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0 && rr->plan.count_sql.len) {
        rc = rest_req_prepare(r, rr->plan.count_sql.p, rr->plan.count_sql.len,
                              &rr->cstmt);
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0 && rr->plan.embed) {
        rest_eplan *ep = rr->plan.embed;
        rr->es = calloc(ep->nlevels + 1, sizeof *rr->es);
        if (!rr->es)
            rc = FFB_E_NOMEM;
        for (size_t i = 0; rc == 0 && i <= ep->nlevels; i++) {
            estmt *es = &rr->es[i];
            es->rr = rr;
            es->node = i ? ep->levels[i - 1] : ep->root;
            rr->nes++;
            if (i == 0 || ep->per_level)
                continue; /* rr->stmt; per-level: once the parent is in */
            int q = rest_req_prepare(r, es->node->plan.sql.p,
                                     es->node->plan.sql.len, &es->st);
            if (q < 0)
                rc = q;
        }
    }
    if (rc < 0) {
        rest_req_fail_conn(r, rc);
        if (r->waiting == 0)
            finish(rr);
        return;
    }
    if (r->waiting == 0)
        run(rr); /* all cached: one write for everything */
}

static const rest_req_ops read_ops = {start, prepared, NULL,
                                      done,  respond,  destroy};

/* Prefer: count=exact|planned|estimated (enum rest_count). */
static int prefer_count(h2o_req_t *req) {
    const h2o_iovec_t *v = header_list(req, "prefer");
    return list_has(v, "count=exact")       ? REST_COUNT_EXACT
           : list_has(v, "count=planned")   ? REST_COUNT_PLANNED
           : list_has(v, "count=estimated") ? REST_COUNT_ESTIMATED
                                            : REST_COUNT_NONE;
}

/* A read of `name`, or of the selectable procedure `t` (with its
   arguments) when set, with the query string `qs` (n bytes). */
static int read_request(rest_app *app, h2o_req_t *req, const char *name,
                        const rest_table *t, const char *qs, size_t qn,
                        int head, int read_write) {
    const rest_config *cfg = app->cfg;
    rest_err err;
    rreq *rr = calloc(1, sizeof *rr);
    if (!rr) {
        rest_err_set(&err, 500, "PGRST000", NULL, "out of memory");
        send_error(req, app, &err, head);
        return 0;
    }
    rest_req_init(&rr->b, &read_ops, app, req, head, 8u << 20);
    rr->total = rr->counted = rr->planned = -1;
    rr->read_write = read_write;
    rbuf_init(&rr->body, 64u << 20);
    if (t) {
        /* the procedure's table with this request's arguments, in the
           request's arena (the caller's go away) */
        rest_table *c = rarena_alloc(&rr->b.arena, sizeof *c);
        const char **v =
            rarena_alloc(&rr->b.arena, (t->proc_nvals + 1) * sizeof *v);
        if (!c || !v)
            goto nomem;
        *c = *t;
        for (size_t i = 0; i < t->proc_nvals; i++) {
            const char *a = t->proc_vals[i];
            v[i] = a ? rarena_strndup(&rr->b.arena, a, strlen(a)) : NULL;
            if (a && !v[i])
                goto nomem;
        }
        c->proc_vals = v;
        rr->table = c;
    }
    if (rest_req_runas(&rr->b, &err) < 0)
        goto fail;
    if (parse_accept(req, &rr->singular, &err) < 0)
        goto fail;
    const h2o_iovec_t *range = header(req, "range");
    rest_limits lim = {cfg->server_max_filters, cfg->server_max_in_list, 8,
                       cfg->server_max_embed_depth};
    if (rest_parse_query(&rr->b.arena, qs, qn, range ? range->base : NULL,
                         range ? range->len : 0, &lim, &rr->q, &err) < 0)
        goto fail;
    rr->count = prefer_count(req);
    rest_plan_opts po;
    read_opts(rr, &po, cfg->db_probe_rows);
    if (rest_plan_read(&rr->b.arena, app_schema(app), name, &rr->q, &po,
                       &rr->plan, &err) < 0)
        goto fail;
    rr->has_plan = 1;
    if (rr->plan.embed)
        rr->plan.embed->per_level = cfg->db_embed_per_level;
    rr->name = rarena_strndup(&rr->b.arena, name, strlen(name));
    if (!rr->name)
        goto nomem;
    rr->keyjson =
        rest_http_keyjson(&rr->b.arena, rr->plan.keys, rr->plan.nkeys);
    if (!rr->keyjson)
        goto nomem;
    if (rest_req_acquire(&rr->b, &err) < 0)
        goto fail;
    return 0;
nomem:
    rest_err_set(&err, 500, "PGRST000", NULL, "out of memory");
fail:
    send_error(req, app, &err, head);
    rreq_free(rr);
    return 0;
}

static int handle_read(rest_handler *h, h2o_req_t *req, const char *name,
                       int head) {
    const char *qs = "";
    size_t qn = 0;
    if (req->query_at != SIZE_MAX) {
        qs = req->path.base + req->query_at + 1;
        qn = req->path.len - req->query_at - 1;
    }
    return read_request(h->app, req, name, NULL, qs, qn, head, 0);
}

int rest_http_read_proc(rest_app *app, h2o_req_t *req, const rest_table *t,
                        const char *qs, size_t qn, int head, int read_write) {
    return read_request(app, req, t->exposed, t, qs, qn, head, read_write);
}

/* ---- OPTIONS and the OpenAPI document (spec A12) ------------------------- */

static int method_is(h2o_req_t *req, const char *m) {
    return h2o_memis(req->method.base, req->method.len, m, strlen(m));
}

static int send_allow(h2o_req_t *req, const char *allow) {
    add_header(req, "allow", allow, strlen(allow));
    send_body(req, 200, NULL, "", 0, 0);
    return 0;
}

static int handle_options(rest_app *app, h2o_req_t *req, const char *p,
                          size_t n) {
    rest_err err;
    char name[256];
    if (n >= 4 && memcmp(p, "rpc/", 4) == 0)
        return send_allow(req, "OPTIONS,GET,HEAD,POST");
    if (n >= sizeof name || memchr(p, '/', n)) {
        rest_err_set(&err, 404, "PGRST125", NULL,
                     "Invalid path specified in request URL");
        send_error(req, app, &err, 0);
        return 0;
    }
    memcpy(name, p, n);
    name[n] = '\0';
    const rest_table *t = rest_schema_find(app_schema(app), name);
    if (!t) {
        rest_err_set(&err, 404, "PGRST205", NULL,
                     "Could not find the table '%s' in the schema cache", name);
        send_error(req, app, &err, 0);
        return 0;
    }
    /* PostgREST: a table takes every verb; a view here only reads (its
       updatability is not in the schema cache yet; a write to an updatable view
       is tried, Firebird decides) */
    return send_allow(req, t->is_view
                               ? "OPTIONS,GET,HEAD"
                               : "OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE");
}

static int handle_root(rest_app *app, h2o_req_t *req, int head) {
    rest_err err;
    if (method_is(req, "OPTIONS"))
        return send_allow(req, "OPTIONS,GET,HEAD");
    if (!method_is(req, "GET") && !head) {
        rest_err_set(&err, 405, "PGRST117", NULL,
                     "Unsupported HTTP method: %.*s", (int)req->method.len,
                     req->method.base);
        send_error(req, app, &err, 0);
        return 0;
    }
    if (app->cfg->openapi_mode == 1) {
        rest_err_set(&err, 404, "PGRST126", NULL,
                     "Root endpoint metadata is disabled");
        send_error(req, app, &err, head);
        return 0;
    }
    const h2o_iovec_t *v = header_list(req, "accept");
    if (v && v->len && !list_has(v, "application/openapi+json") &&
        !list_has(v, "application/json") && !list_has(v, "*/*") &&
        !list_has(v, "application/*")) {
        rest_err_set(&err, 406, "PGRST107", NULL,
                     "None of these media types are available: %.*s",
                     (int)(v->len > 128 ? 128 : v->len), v->base);
        send_error(req, app, &err, head);
        return 0;
    }
    rbuf b;
    rbuf_init(&b, 64u << 20);
    rest_openapi(app_schema(app), app->cfg, &b);
    if (b.failed) {
        rbuf_free(&b);
        rest_err_set(&err, 500, "PGRST000", NULL, "the response is too large");
        send_error(req, app, &err, head);
        return 0;
    }
    send_body(req, 200, "application/openapi+json; charset=utf-8", b.p, b.len,
              head);
    rbuf_free(&b);
    return 0;
}

/* ---- routing ------------------------------------------------------------- */

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
    rest_handler *h = (rest_handler *)self;
    rest_app *app = h->app;
    rest_err err;
    int head = method_is(req, "HEAD");
    if (rest_cors(app->cfg, req))
        return 0; /* a preflight, answered */
    size_t hsize = 0;
    for (size_t i = 0; i < req->headers.size; i++)
        hsize += req->headers.entries[i].name->len +
                 req->headers.entries[i].value.len;
    if (hsize > app->cfg->server_max_headers) {
        rest_err_set(&err, 431, "PGRST100", NULL,
                     "The request's headers are longer than %zu bytes",
                     app->cfg->server_max_headers);
        send_error(req, app, &err, head);
        return 0;
    }
    if (req->path.len > app->cfg->server_max_url) {
        rest_err_set(&err, 414, "PGRST100", NULL,
                     "The URL is longer than %zu bytes",
                     app->cfg->server_max_url);
        send_error(req, app, &err, head);
        return 0;
    }
    const char *p = req->path_normalized.base;
    size_t n = req->path_normalized.len;
    if (n == 0 || p[0] != '/') {
        rest_err_set(&err, 404, "PGRST125", NULL,
                     "Invalid path specified in request URL");
        send_error(req, app, &err, head);
        return 0;
    }
    p++;
    n--;
    if (n == 0)
        return handle_root(app, req, head);
    if (method_is(req, "OPTIONS"))
        return handle_options(app, req, p, n);
    if (n >= 4 && memcmp(p, "rpc/", 4) == 0)
        return rest_rpc_handle(app, req, p + 4, n - 4);
    if (memchr(p, '/', n)) {
        rest_err_set(&err, 404, "PGRST125", NULL,
                     "Invalid path specified in request URL");
        send_error(req, app, &err, head);
        return 0;
    }
    int write = method_is(req, "POST") || method_is(req, "PATCH") ||
                method_is(req, "PUT") || method_is(req, "DELETE");
    if (!method_is(req, "GET") && !head && !write) {
        rest_err_set(&err, 400, "PGRST127",
                     "only GET, HEAD, POST, PUT, PATCH and DELETE of tables "
                     "and views so far",
                     "Feature not implemented");
        send_error(req, app, &err, 0);
        return 0;
    }
    /* the table's name: percent-decoded by h2o's normalisation */
    char name[256];
    if (n >= sizeof name) {
        rest_err_set(&err, 404, "PGRST205", NULL,
                     "Could not find the table in the schema cache");
        send_error(req, app, &err, head);
        return 0;
    }
    memcpy(name, p, n);
    name[n] = '\0';
    if (write)
        return rest_handle_write(app, req, name);
    return handle_read(h, req, name, head);
}

/* ---- admin: /live and /ready ----------------------------------------------
 */

typedef struct ready_req {
    h2o_req_t *req;
    struct ready_req **slot;
} ready_req;

static void ready_dispose(void *p) {
    ready_req **s = p;
    if (*s)
        (*s)->req = NULL;
}

static void on_ready(ffb_uv_pool *pool, ffb_conn *conn, int status,
                     void *data) {
    ready_req *r = data;
    if (conn)
        ffb_uv_pool_release(pool, conn);
    if (r->req) {
        int ok = status == 0;
        r->req->res.status = ok ? 200 : 503;
        r->req->res.reason = ok ? "OK" : "Service Unavailable";
        r->req->res.content_length = 0;
        h2o_send_inline(r->req, "", 0);
        *r->slot = NULL;
    }
    free(r);
}

/* An admin request answered later, told when its client leaves. */
static ready_req *ready_new(h2o_req_t *req) {
    ready_req *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    ready_req **slot =
        h2o_mem_alloc_shared(&req->pool, sizeof *slot, ready_dispose);
    *slot = r;
    r->req = req;
    r->slot = slot;
    return r;
}

/* POST /reload: answered once the new schema cache is in place. */
static void on_reloaded(void *data, int rc, const char *msg) {
    ready_req *r = data;
    if (r->req) {
        h2o_req_t *req = r->req;
        *r->slot = NULL;
        send_body(req, rc == 0 ? 200 : 503, "text/plain; charset=utf-8", msg,
                  strlen(msg), 0);
    }
    free(r);
}

static int on_admin(h2o_handler_t *self, h2o_req_t *req) {
    rest_handler *h = (rest_handler *)self;
    if (h2o_memis(req->path_normalized.base, req->path_normalized.len,
                  H2O_STRLIT("/reload"))) {
        if (!method_is(req, "POST")) {
            add_header(req, "allow", "POST", 4);
            send_body(req, 405, NULL, "", 0, 0);
            return 0;
        }
        ready_req *r = ready_new(req);
        if (!r)
            return -1;
        rest_reload_request(h->app, on_reloaded, r);
        return 0;
    }
    if (h2o_memis(req->path_normalized.base, req->path_normalized.len,
                  H2O_STRLIT("/live"))) {
        req->res.status = 200;
        req->res.reason = "OK";
        req->res.content_length = 0;
        h2o_send_inline(req, "", 0);
        return 0;
    }
    if (h2o_memis(req->path_normalized.base, req->path_normalized.len,
                  H2O_STRLIT("/ready"))) {
        rest_loop *lp = loop_of(req);
        ready_req *r = ready_new(req);
        if (!r)
            return -1;
        ready_req **slot = r->slot;
        if (ffb_uv_pool_acquire(lp->pool, 2000, on_ready, r) < 0) {
            *slot = NULL;
            free(r);
            req->res.status = 503;
            req->res.reason = "Service Unavailable";
            h2o_send_inline(req, "", 0);
        }
        return 0;
    }
    req->res.status = 404;
    req->res.reason = "Not Found";
    h2o_send_inline(req, "", 0);
    return 0;
}

void rest_register_handlers(rest_app *app) {
    h2o_pathconf_t *pc = h2o_config_register_path(app->host, "/", 0);
    rest_handler *h = (rest_handler *)h2o_create_handler(pc, sizeof *h);
    h->super.on_req = on_req;
    h->app = app;
    if (app->admin_host) {
        h2o_pathconf_t *ac = h2o_config_register_path(app->admin_host, "/", 0);
        rest_handler *a = (rest_handler *)h2o_create_handler(ac, sizeof *a);
        a->super.on_req = on_admin;
        a->app = app;
    }
}

/* ---- shared with the other handlers (http.h) ---------------------------- */

void rest_http_add_header(h2o_req_t *req, const char *name, const char *value,
                          size_t vlen) {
    add_header(req, name, value, vlen);
}

void rest_http_send(h2o_req_t *req, int status, const char *ctype,
                    const char *body, size_t len, int head) {
    send_body(req, status, ctype, body, len, head);
}

void rest_http_send_error(h2o_req_t *req, const rest_app *app,
                          const rest_err *e, int head) {
    send_error(req, app, e, head);
}

rest_loop *rest_http_loop(h2o_req_t *req) { return loop_of(req); }

const h2o_iovec_t *rest_http_header(h2o_req_t *req, const char *name) {
    return header(req, name);
}

const h2o_iovec_t *rest_http_header_list(h2o_req_t *req, const char *name) {
    return header_list(req, name);
}

uint64_t rest_http_conn_rts(const ffb_conn *c) { return conn_rts(c); }

char **rest_http_keyjson(rarena *a, const char *const *keys, size_t n) {
    char **kj = rarena_alloc(a, (n + 1) * sizeof *kj);
    for (size_t i = 0; kj && i < n; i++) {
        /* a name without a byte to escape (every column of a plain
           schema): straight into the arena, without a buffer of its own */
        size_t kn = strlen(keys[i]), j = 0;
        while (j < kn && (unsigned char)keys[i][j] >= 0x20 &&
               keys[i][j] != '"' && keys[i][j] != '\\')
            j++;
        if (j == kn) {
            char *o = rarena_alloc(a, kn + 4);
            if (!o)
                return NULL;
            o[0] = '"';
            memcpy(o + 1, keys[i], kn);
            memcpy(o + 1 + kn, "\":", 3);
            kj[i] = o;
            continue;
        }
        rbuf k;
        rbuf_init(&k, 0);
        json_string(&k, keys[i], strlen(keys[i]));
        rbuf_addc(&k, ':');
        const char *s = rbuf_cstr(&k);
        kj[i] = s ? rarena_strndup(a, s, k.len) : NULL;
        rbuf_free(&k);
        if (!kj[i])
            return NULL;
    }
    return kj;
}

int rest_http_accept(h2o_req_t *req, int *singular, rest_err *err) {
    return parse_accept(req, singular, err);
}
