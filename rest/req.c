/* ffb-rest: the request on a pooled connection (req.h). */
#include "req.h"

#include <stdio.h>
#include <string.h>

#include "http.h"
#include "json.h"
#include "roles.h"

struct rest_req_slot {
    rest_req *r;
};

static void slot_dispose(void *p) {
    struct rest_req_slot *s = p;
    if (s->r) {
        /* the client left: the slot goes with the h2o request's pool, so
           rest_req_free must not write to it (found by fuzz_http) */
        s->r->req = NULL;
        s->r->slot = NULL;
    }
}

void rest_req_init(rest_req *r, const rest_req_ops *ops, rest_app *app,
                   h2o_req_t *req, int head, size_t arena_cap) {
    r->ops = ops;
    r->req = req;
    r->app = app;
    r->lp = rest_http_loop(req);
    r->head = head;
    rarena_init(&r->arena, arena_cap);
}

void rest_req_fail(rest_req *r, int code, const ffb_error *e) {
    if (r->failed)
        return;
    r->failed = 1;
    rest_err_from_ffb(&r->err, code, e, r->as.auth.has_jwt);
}

void rest_req_fail_conn(rest_req *r, int code) {
    rest_req_fail(r, code, ffb_conn_error(r->conn));
}

int rest_req_check(rest_req *r, const ffb_result *res) {
    if (ffb_result_status(res) >= 0)
        return 0;
    rest_req_fail(r, ffb_result_status(res), ffb_result_error(res));
    return -1;
}

int rest_req_runas(rest_req *r, rest_err *err) {
    return rest_runas_request(r->app, r->req, &r->arena, &r->as, err);
}

static void on_conn(ffb_uv_pool *pool, ffb_conn *conn, int status, void *data) {
    rest_req *r = data;
    r->pool = pool;
    if (status < 0) {
        r->failed = 1;
        rest_roles_acquire_error(pool, status, r->as.auth.role,
                                 r->as.auth.has_jwt, &r->err);
        rest_req_finish(r);
        return;
    }
    r->conn = conn;
    /* db-prepared-statements-idle: the statements this connection has not
       used for that long are freed; the frees ride with this request's
       first write (no round trip of their own) */
    const rest_config *cfg = r->app->cfg;
    int idle = cfg->db_prepared_statements_idle;
    int freed = idle > 0 ? ffb_conn_cache_trim(conn, (int64_t)idle * 1000) : 0;
    if (freed > 0 && cfg->log_level >= 3)
        fprintf(stderr,
                "ffb-rest: %d prepared statement%s unused for %d s freed\n",
                freed, freed == 1 ? "" : "s", idle);
    r->rt0 = rest_http_conn_rts(conn);
    r->ops->start(r);
}

int rest_req_acquire(rest_req *r, rest_err *err) {
    r->slot =
        h2o_mem_alloc_shared(&r->req->pool, sizeof *r->slot, slot_dispose);
    r->slot->r = r;
    return rest_roles_acquire(r->lp, r->as.auth.role, r->as.auth.has_jwt,
                              r->app->cfg->db_pool_acquisition_timeout * 1000,
                              on_conn, r, err);
}

int rest_req_begin(rest_req *r, int read_only, int isolation) {
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    to.read_only = read_only;
    to.isolation = isolation;
    to.lock_timeout = 10;
    return ffb_tx_begin(r->conn, &to, &r->tx);
}

void rest_req_stmt_timeout(const rest_app *app, ffb_stmt *st) {
    /* a cached statement forgets its timeout when it goes back: set it
       on every use (0 round trips; main.c refused the key below
       protocol 16, so this cannot fail) */
    if (app->cfg->db_statement_timeout > 0 && st)
        (void)ffb_stmt_set_timeout(st,
                                   (uint32_t)app->cfg->db_statement_timeout);
}

static void on_prepared(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    rest_req *r = data;
    rest_req_check(r, res);
    if (--r->waiting > 0)
        return;
    r->ops->prepared(r);
}

int rest_req_prepare(rest_req *r, const char *sql, size_t len, ffb_stmt **st) {
    int rc =
        ffb_conn_queue_prepare(r->conn, r->tx, sql, len, st, on_prepared, r);
    if (rc == 0)
        r->waiting++;
    if (rc >= 0)
        rest_req_stmt_timeout(r->app, *st);
    return rc;
}

static void on_ctx(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    /* db-pre-request may refuse the request (a PSQL exception); the
       statements behind it were sent anyway, their answers follow */
    rest_req_check(data, res);
}

int rest_req_queue_ctx(rest_req *r) {
    return r->as.stmt ? rest_runas_queue(&r->as, r->tx, on_ctx, r) : 0;
}

static void on_end(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    rest_req *r = data;
    if (!r->again)
        rest_req_check(r, res);
    if (r->ops->ended)
        r->ops->ended(r);
    else
        rest_req_finish(r);
}

int rest_req_queue_end(rest_req *r, int rollback) {
    int rc = rollback ? ffb_tx_queue_rollback(r->tx, on_end, r)
                      : ffb_tx_queue_commit(r->tx, on_end, r);
    if (rc < 0)
        rest_req_fail_conn(r, rc);
    return rc < 0 ? rc : 0;
}

void rest_req_finish(rest_req *r) {
    uint64_t rts = 0;
    int used = r->conn != NULL;
    if (r->conn) {
        if (r->ops->done && r->ops->done(r))
            return; /* again, on the same connection */
        rts = rest_http_conn_rts(r->conn) - r->rt0;
        rest_req_drop_tx(r);
        /* a 5xx may mean a broken connection; a statement timeout
           (57014) leaves it usable */
        if (r->failed && r->err.status >= 500 &&
            strcmp(r->err.code, "57014") != 0)
            ffb_uv_pool_discard(r->pool, r->conn);
        else
            ffb_uv_pool_release(r->pool, r->conn);
        r->conn = NULL;
    }
    if (r->req)
        r->ops->respond(r, rts, used);
    r->ops->destroy(r);
}

void rest_req_timing(rest_req *r, uint64_t rts) {
    char tmp[64];
    if (!r->app->cfg->server_timing)
        return;
    static const char pre[] = "db;desc=\"rt=";
    memcpy(tmp, pre, sizeof pre - 1);
    size_t n = sizeof pre - 1;
    n += rest_fmt_i64(tmp + n, rts > INT64_MAX ? INT64_MAX : (int64_t)rts);
    tmp[n++] = '"';
    rest_http_add_header(r->req, "server-timing", tmp, n);
}

void rest_req_send_error(rest_req *r) {
    rest_http_send_error(r->req, r->app, &r->err, r->head);
}

int rest_req_respond_head(rest_req *r, uint64_t rts, int used_db,
                          const rbuf *body) {
    if (used_db)
        rest_req_timing(r, rts);
    if (!r->failed && body && body->failed) {
        r->failed = 1;
        rest_err_set(&r->err, 500, "PGRST000", NULL,
                     "the response is too large");
    }
    if (!r->failed)
        return 0;
    rest_req_send_error(r);
    return 1;
}

void rest_req_free(rest_req *r) {
    if (r->slot)
        r->slot->r = NULL;
    rarena_free(&r->arena);
}

void rest_req_drop_tx(rest_req *r) {
    ffb_stmt_free(r->as.stmt);
    r->as.stmt = NULL;
    ffb_tx_free(r->tx);
    r->tx = NULL;
}
