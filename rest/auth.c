/* ffb-rest: who a request runs as (auth.h). */
#include "auth.h"

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
        if (rest_jwt_verify(app->jwt, tok, tn, (int64_t)time(NULL), a,
                            &out->claims, err) < 0)
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
