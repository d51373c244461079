/* ffb-rest: who a request runs as (auth.h). */
#include "auth.h"

#include "context.h"
#include "http.h"
#include "jwtcache.h"

#include <string.h>
#include <strings.h>
#include <time.h>

int rest_auth_request(const rest_app *app, h2o_req_t *req, rarena *a,
                      rest_auth *out, rest_err *err) {
    const rest_config *cfg = app->cfg;
    memset(out, 0, sizeof *out);
    ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1);
    const char *tok = NULL;
    size_t tn = 0;
    if (i >= 0) {
        const h2o_iovec_t *v = &req->headers.entries[i].value;
        /* PostgREST: "Bearer <token>" or "bearer <token>"; another scheme
           is no token */
        if (v->len >= 6 && strncasecmp(v->base, "bearer", 6) == 0 &&
            (v->len == 6 || v->base[6] == ' ')) {
            tok = v->base + (v->len > 6 ? 7 : 6);
            tn = v->len > 6 ? v->len - 7 : 0;
            while (tn > 0 && tok[tn - 1] == ' ')
                tn--;
        }
    }
    if (tok) {
        if (!app->jwt) {
            rest_err_set(err, 500, "PGRST300", NULL, "Server lacks JWT secret");
            return -1;
        }
        rest_loop *lp = rest_http_loop(req);
        if (rest_jwt_verify_cached(lp ? lp->jwt_cache : NULL, app->jwt, tok, tn,
                                   (int64_t)time(NULL), a, &out->claims,
                                   err) < 0)
            return -1;
        out->has_jwt = 1;
        out->role = out->claims.role ? out->claims.role : cfg->db_anon_role;
        if (!out->role) {
            rest_err_set(err, 401, "PGRST302", NULL,
                         "Anonymous access is disabled");
            return -1;
        }
        return 0;
    }
    if (app->jwt && !cfg->db_anon_role) {
        rest_err_set(err, 401, "PGRST302", NULL,
                     "Anonymous access is disabled");
        return -1;
    }
    out->role = cfg->db_anon_role;
    return 0;
}

int rest_ctx_request(const rest_app *app, h2o_req_t *req, const rest_auth *au,
                     rarena *a, rest_ctx *ctx, const char **sql,
                     size_t *sql_len) {
    const rest_config *cfg = app->cfg;
    int mode = cfg->db_request_context;
    int names =
        mode == 1 || (mode == 0 && app_schema(app)->reads_request_context);
    /* the pairs are read below n only: no need to zero their 2 KB */
    ctx->n = 0;
    ctx->dropped = 0;
    if (!names && !cfg->db_pre_request)
        return 0;
    if (names) {
        rest_ctx_add(ctx, a, "request.method", "", 0, 0, req->method.base,
                     req->method.len);
        rest_ctx_add(ctx, a, "request.path", "", 0, 0,
                     req->path_normalized.base, req->path_normalized.len);
        if (au->claims.claims)
            rest_ctx_add_claims(ctx, a, au->claims.claims,
                                au->claims.claims_len);
        for (size_t i = 0; i < req->headers.size; i++) {
            const h2o_header_t *h = &req->headers.entries[i];
            if (h->name->len == 6 && memcmp(h->name->base, "cookie", 6) == 0)
                rest_ctx_add_cookies(ctx, a, h->value.base, h->value.len);
            else
                rest_ctx_add(ctx, a, "request.header.", h->name->base,
                             h->name->len, 1, h->value.base, h->value.len);
        }
    }
    size_t slots = rest_ctx_slots(ctx->n);
    const rest_ctx_texts *ct = app->ctx_texts;
    if (ct) {
        /* the same text as below, built at start-up */
        *sql = ct->sql[slots / REST_CTX_SLOTS];
        *sql_len = ct->len[slots / REST_CTX_SLOTS];
        return 1;
    }
    rbuf b;
    rbuf_init(&b, 0);
    rest_ctx_sql(&b, slots, cfg->db_pre_request);
    const char *t = rbuf_cstr(&b);
    *sql = t ? rarena_strndup(a, t, b.len) : NULL;
    *sql_len = b.len;
    rbuf_free(&b);
    return *sql ? 1 : -1;
}

int rest_runas_request(const rest_app *app, h2o_req_t *req, rarena *a,
                       rest_runas *as, rest_err *err) {
    if (rest_auth_request(app, req, a, &as->auth, err) < 0)
        return -1;
    if (rest_ctx_request(app, req, &as->auth, a, &as->ctx, &as->sql,
                         &as->sql_len) < 0) {
        rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
        return -1;
    }
    return 0;
}

int rest_runas_queue(rest_runas *as, ffb_tx *tx, ffb_cb cb, void *data) {
    const rest_ctx *ctx = &as->ctx;
    ffb_stmt *st = as->stmt;
    size_t slots = rest_ctx_slots(ctx->n);
    for (size_t i = 0; i < slots; i++) {
        unsigned k = (unsigned)(2 * i);
        int rc;
        if (i < ctx->n) {
            rc = ffb_stmt_bind_text(st, k, ctx->name[i], ctx->name_len[i]);
            if (rc == 0)
                rc = ffb_stmt_bind_text(st, k + 1, ctx->value[i],
                                        ctx->value_len[i]);
        } else {
            rc = ffb_stmt_bind_null(st, k);
            if (rc == 0)
                rc = ffb_stmt_bind_null(st, k + 1);
        }
        if (rc < 0)
            return rc;
    }
    return ffb_stmt_queue_execute(st, tx, cb, data);
}
