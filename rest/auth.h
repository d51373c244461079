/*
 * ffb-rest: who a request runs as (spec rest.md A8.2, A11), PostgREST's
 * rules: `Authorization: Bearer <jwt>` verified with the configuration's
 * key gives the token's role (or db-anon-role when it names none); no
 * token (or another scheme) is anonymous: db-anon-role. With a jwt-secret
 * and no db-anon-role an anonymous request is 401 PGRST302; a token
 * without a jwt-secret is 500 PGRST300. Without jwt-secret and
 * db-anon-role, requests run as the db-uri user without a role (ffb-rest
 * before JWT did so; PostgREST would refuse them).
 */
#ifndef FFB_REST_AUTH_H
#define FFB_REST_AUTH_H

#include "jwt.h"
#include "server.h"

typedef struct rest_auth {
    const char *role; /* NULL: no role */
    int has_jwt;      /* a verified token came: permission errors are 403 */
    rest_jwt_claims claims;
} rest_auth;

struct rest_ctx;
/* The request context of `req` (context.h) when the configuration and the
   schema cache ask for it: 1 with `sql` set (in the arena), else 0. */
int rest_ctx_request(const rest_app *app, h2o_req_t *req, const rest_auth *au,
                     rarena *a, struct rest_ctx *ctx, const char **sql,
                     size_t *sql_len);

int rest_auth_request(const rest_app *app, h2o_req_t *req, rarena *a,
                      rest_auth *out, rest_err *err);

#include "context.h"

/* Who a request runs as and its request context: what every handler
   (reads, writes, RPC) keeps. */
typedef struct rest_runas {
    rest_auth auth;
    rest_ctx ctx;    /* the request context (context.h) */
    const char *sql; /* its EXECUTE BLOCK; NULL: none */
    size_t sql_len;
    ffb_stmt *stmt; /* the block, prepared with the request's statements */
} rest_runas;

/* rest_auth_request, then rest_ctx_request: 0, or -1 with `err` (the
   token's refusal, or no memory). */
int rest_runas_request(const rest_app *app, h2o_req_t *req, rarena *a,
                       rest_runas *as, rest_err *err);

/* Bind the context's pairs to `as->stmt` (unused slots NULL) and queue
   its execute in `tx` with `cb`: 0, or < 0 with nothing queued. */
int rest_runas_queue(rest_runas *as, ffb_tx *tx, ffb_cb cb, void *data);

#endif
