/*
 * Fuzz target: what ffb-rest does with the request h2o hands it - the
 * router (handler.c on_req), the header parsers (Prefer, Range, Accept,
 * Content-Type, Authorization and its JWT, Origin and CORS, cookies and
 * headers into the request context), the query string and the body of
 * reads, writes and RPC - up to the pool's acquire, which is not linked:
 * a stub here takes the request and answers it as the pool would when the
 * database is away (503), or after the client left.
 *
 * The input is an HTTP request split into parts, one a line:
 *   byte 0      flags: bits 0-2 the method (GET HEAD POST PATCH PUT DELETE
 *               OPTIONS, 7: "BREW"), bit 3 the client leaves before the
 *               pool answers, bits 4-5 the configuration (below), bit 6 a
 *               request context in every request
 *   line 1      the request target (path and query, as on the request line)
 *   lines       headers "name: value" (the name lowercased, as h2o does;
 *               a line without ':' is skipped) up to an empty line
 *   the rest    the body
 * Properties: no crash, leak or over-read (the replay puts a guard page
 * behind the input); the handler accepts the request and answers it exactly
 * once (none when the client left), with a status of 200-599, and every
 * answer whose type is JSON is well-formed JSON; an error (4xx/5xx) is
 * PostgREST's shape, an object with "code" and "message" strings.
 */
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "config.h"
#include "fixture.h"
#include "jwt.h"
#include "jwtcache.h"
#include "reload.h"
#include "roles.h"
#include "server.h"
#include "tests/fuzz/fuzz.h"

/* ---- what is not linked: the pool, the reload ---------------------------- */

static struct {
    ffb_uv_acquire_cb cb;
    void *data;
    int calls;
} pending;

int rest_roles_acquire(rest_loop *lp, const char *role, int has_jwt,
                       int timeout_ms, ffb_uv_acquire_cb cb, void *data,
                       rest_err *err) {
    (void)lp, (void)role, (void)has_jwt, (void)timeout_ms, (void)err;
    FUZZ_CHECK(pending.cb == NULL);
    pending.cb = cb;
    pending.data = data;
    pending.calls++;
    return 0;
}

void rest_roles_acquire_error(ffb_uv_pool *pool, int status, const char *role,
                              int has_jwt, rest_err *e) {
    (void)pool, (void)status, (void)role, (void)has_jwt;
    rest_err_set(e, 503, "PGRST001", NULL, "Database connection error");
}

void rest_reload_request(rest_app *app, rest_reload_cb cb, void *data) {
    (void)app;
    cb(data, -1, "no reload here");
}

/* ---- the server side: app, loop, an output stream that records -------- */

#define NAPPS 4

static rest_config cfgs[NAPPS];
static rest_app apps[NAPPS];
static h2o_handler_t *handlers[NAPPS];
static h2o_pathconf_t *pathconfs[NAPPS];
static rest_schema schema, schema_ctx;
static rest_jwt_key jwt;
static rest_loop lp;
static int ready;

static struct {
    int sends; /* do_send calls with a final state */
    int status;
    char ctype[128];
    char *body;
    size_t len;
} out;

static void do_send(h2o_ostream_t *self, h2o_req_t *req, h2o_iovec_t *bufs,
                    size_t n, h2o_send_state_t state) {
    (void)self;
    FUZZ_CHECK(!h2o_send_state_is_in_progress(state));
    out.sends++;
    out.status = req->res.status;
    ssize_t i = h2o_find_header(&req->res.headers, H2O_TOKEN_CONTENT_TYPE, -1);
    out.ctype[0] = '\0';
    if (i >= 0) {
        const h2o_iovec_t *v = &req->res.headers.entries[i].value;
        size_t l = v->len < sizeof out.ctype - 1 ? v->len : sizeof out.ctype - 1;
        memcpy(out.ctype, v->base, l);
        out.ctype[l] = '\0';
    }
    for (size_t k = 0; k < n; k++) {
        out.body = realloc(out.body, out.len + bufs[k].len + 1);
        FUZZ_CHECK(out.body != NULL);
        memcpy(out.body + out.len, bufs[k].base, bufs[k].len);
        out.len += bufs[k].len;
        out.body[out.len] = '\0';
    }
}

static h2o_ostream_t ostream = {NULL, do_send, NULL, NULL};

static void set(rest_config *c, const char *k, const char *v) {
    char err[256];
    FUZZ_CHECK(rest_config_set(c, k, v, "fuzz", err, sizeof err) == 0);
}

static void setup(void) {
    fixture_schema(&schema);
    fixture_schema(&schema_ctx);
    schema_ctx.reads_request_context = 1;
    char err[256];
    FUZZ_CHECK(rest_jwt_key_init(&jwt, "reallyreallyreallyreallyverysafe", 0,
                                 NULL, NULL, NULL, err, sizeof err) == 0);
    lp.jwt_cache = rest_jwt_cache_new(16);
    for (int i = 0; i < NAPPS; i++) {
        rest_config *c = &cfgs[i];
        rest_app *a = &apps[i];
        rest_config_defaults(c);
        /* small limits, so the fuzzer reaches them */
        set(c, "server-max-url-length", "600");
        set(c, "server-max-header-size", "900");
        set(c, "server-max-filters", "6");
        set(c, "server-max-in-list", "8");
        set(c, "server-max-embed-depth", "3");
        set(c, "server-timing-enabled", "true");
        switch (i) {
        case 1: /* JWT, anonymous allowed */
            set(c, "db-anon-role", "WEB_ANON");
            break;
        case 2: /* JWT, no anonymous; CORS with a list */
            set(c, "server-cors-allowed-origins",
                "http://a.example, https://b.example");
            set(c, "db-pre-request", "PRE_REQ");
            break;
        case 3: /* no JWT; minimal errors, aggregates, no OpenAPI */
            set(c, "client-error-verbosity", "minimal");
            set(c, "db-aggregates-enabled", "true");
            set(c, "openapi-mode", "disabled");
            break;
        }
        a->cfg = c;
        a->jwt = i == 1 || i == 2 ? &jwt : NULL;
        a->schema = &schema;
        h2o_config_init(&a->h2o);
        a->host = h2o_config_register_host(
            &a->h2o, h2o_iovec_init(H2O_STRLIT("default")), 65535);
        rest_register_handlers(a);
        pathconfs[i] = &a->host->paths.entries[0];
        FUZZ_CHECK(pathconfs[i]->handlers.size == 1);
        handlers[i] = pathconfs[i]->handlers.entries[0];
    }
    lp.app = &apps[0];
}

/* An error's body: {"code": "...", "message": "...", ...}. */
static void check_error_shape(yajl_val v) {
    const char *code[] = {"code", NULL};
    const char *msg[] = {"message", NULL};
    FUZZ_CHECK(YAJL_IS_OBJECT(v));
    FUZZ_CHECK(YAJL_IS_STRING(yajl_tree_get(v, code, yajl_t_string)));
    FUZZ_CHECK(YAJL_IS_STRING(yajl_tree_get(v, msg, yajl_t_string)));
}

static void check_answer(int head, int minimal) {
    FUZZ_CHECK(out.sends == 1);
    FUZZ_CHECK(out.status >= 200 && out.status <= 599);
    int json = strncmp(out.ctype, "application/json", 16) == 0 ||
               strncmp(out.ctype, "application/openapi+json", 24) == 0 ||
               strncmp(out.ctype, "application/vnd.pgrst.object+json", 33) == 0;
    if (head) {
        FUZZ_CHECK(out.len == 0);
        return;
    }
    if (out.status >= 400)
        FUZZ_CHECK(json);
    if (!json)
        return;
    char ebuf[128];
    yajl_val v = yajl_tree_parse(out.body ? out.body : "", ebuf, sizeof ebuf);
    FUZZ_CHECK(v != NULL);
    if (out.status >= 400 && !minimal)
        check_error_shape(v);
    yajl_tree_free(v);
}

static const char *const methods[8] = {"GET", "HEAD",   "POST",    "PATCH",
                                       "PUT", "DELETE", "OPTIONS", "BREW"};

static const char *line_end(const char *p, const char *end) {
    const char *q = memchr(p, '\n', (size_t)(end - p));
    return q ? q : end;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) {
        setup();
        ready = 1;
    }
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    int which = (int)((flags >> 4) & 3);
    rest_app *app = &apps[which];
    app->schema = flags & 0x40 ? &schema_ctx : &schema;
    lp.app = app;

    h2o_conn_t conn;
    memset(&conn, 0, sizeof conn);
    conn.ctx = &lp.ctx;
    lp.ctx.globalconf = &app->h2o;
    h2o_req_t req;
    h2o_init_request(&req, &conn, NULL);
    req.pathconf = pathconfs[which];
    req._ostr_top = &ostream;
    req.version = 0x101;
    const char *m = methods[flags & 7];
    req.method = req.input.method = h2o_iovec_init(m, strlen(m));
    req.scheme = req.input.scheme = &H2O_URL_SCHEME_HTTP;
    req.authority = req.input.authority =
        h2o_iovec_init(H2O_STRLIT("localhost"));

    /* line 1: the request target, copied (h2o's points into its buffer) */
    const char *le = line_end(p, end);
    h2o_iovec_t target = h2o_strdup(&req.pool, p, (size_t)(le - p));
    req.path = req.input.path = target;
    req.path_normalized = h2o_url_normalize_path(
        &req.pool, target.base, target.len, &req.query_at, &req.norm_indexes);
    p = le < end ? le + 1 : end;

    /* headers, as h2o's HTTP/1 parser adds them */
    while (p < end) {
        le = line_end(p, end);
        if (le == p) {
            p++;
            break;
        }
        const char *colon = memchr(p, ':', (size_t)(le - p));
        if (colon && colon > p) {
            h2o_iovec_t name = h2o_strdup(&req.pool, p, (size_t)(colon - p));
            h2o_strtolower(name.base, name.len);
            const char *v = colon + 1;
            while (v < le && (*v == ' ' || *v == '\t'))
                v++;
            h2o_iovec_t value = h2o_strdup(&req.pool, v, (size_t)(le - v));
            const h2o_token_t *tok = h2o_lookup_token(name.base, name.len);
            if (tok)
                h2o_add_header(&req.pool, &req.headers, tok, NULL, value.base,
                               value.len);
            else
                h2o_add_header_by_str(&req.pool, &req.headers, name.base,
                                      name.len, 0, NULL, value.base,
                                      value.len);
        }
        p = le < end ? le + 1 : end;
    }
    /* the body, as h2o buffers it (NULL when there is none) */
    if (p < end)
        req.entity = h2o_strdup(&req.pool, p, (size_t)(end - p));

    memset(&out, 0, sizeof out);
    pending.cb = NULL;
    int head = (flags & 7) == 1;
    FUZZ_CHECK(handlers[which]->on_req(handlers[which], &req) == 0);
    int gone = 0;
    if (pending.cb) {
        /* the request waits for a connection: no answer yet */
        FUZZ_CHECK(out.sends == 0);
        ffb_uv_acquire_cb cb = pending.cb;
        pending.cb = NULL;
        if (flags & 8) {
            /* the client leaves first: h2o frees the request's pool */
            h2o_dispose_request(&req);
            gone = 1;
        }
        cb(NULL, NULL, -1, pending.data);
    }
    if (getenv("FUZZ_HTTP_VERBOSE"))
        fprintf(stderr, "%s %d%s %.*s\n", m, out.status,
                pending.calls ? " (pool)" : "", (int)(out.len > 160 ? 160 : out.len),
                out.body ? out.body : "");
    pending.calls = 0;
    if (gone)
        FUZZ_CHECK(out.sends == 0);
    else {
        check_answer(head, which == 3);
        h2o_dispose_request(&req);
    }
    free(out.body);
    out.body = NULL;
    return 0;
}
