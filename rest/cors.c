/* ffb-rest: CORS (cors.h). */
#include "cors.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char METHODS[] = "GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD";
static const char EXPOSE[] = "Content-Encoding, Content-Location, "
                             "Content-Range, Content-Type, Date, Location, "
                             "Server, Transfer-Encoding, Range-Unit";

static void add(h2o_req_t *req, const char *name, const char *v, size_t n) {
    h2o_iovec_t nm = h2o_strdup(&req->pool, name, strlen(name));
    h2o_iovec_t vv = h2o_strdup(&req->pool, v, n);
    h2o_add_header_by_str(&req->pool, &req->res.headers, nm.base, nm.len, 1,
                          NULL, vv.base, vv.len);
}

int rest_cors_origin_listed(const char *allowed, const char *o, size_t n) {
    const char *p = allowed;
    while (p && *p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > p && t[-1] == ' ')
            t--;
        if ((size_t)(t - p) == n && n > 0 && memcmp(p, o, n) == 0)
            return 1;
        p = e;
    }
    return 0;
}

/* Append `name` (n bytes) to the list in `out` unless it is there. */
static void add_name(char *out, size_t outn, const char *name, size_t n) {
    size_t ol = strlen(out);
    const char *p = out;
    while (*p) {
        const char *e = strstr(p, ", ");
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && strncasecmp(p, name, n) == 0)
            return;
        p = e ? e + 2 : p + l;
    }
    if (ol + n + 3 > outn)
        return;
    if (ol) {
        memcpy(out + ol, ", ", 2);
        ol += 2;
    }
    memcpy(out + ol, name, n);
    out[ol + n] = '\0';
}

void rest_cors_allow_headers(const char *req, size_t n, char *out,
                             size_t outn) {
    out[0] = '\0';
    add_name(out, outn, "Authorization", 13);
    size_t i = 0;
    while (i < n) {
        while (i < n && (req[i] == ' ' || req[i] == ','))
            i++;
        size_t s = i;
        while (i < n && req[i] != ',')
            i++;
        size_t e = i;
        while (e > s && req[e - 1] == ' ')
            e--;
        if (e > s)
            add_name(out, outn, req + s, e - s);
    }
    add_name(out, outn, "Accept", 6);
    add_name(out, outn, "Accept-Language", 15);
    add_name(out, outn, "Content-Language", 16);
}

static const h2o_iovec_t *find(h2o_req_t *req, const char *name) {
    ssize_t i = h2o_find_header_by_str(&req->headers, name, strlen(name), -1);
    return i < 0 ? NULL : &req->headers.entries[i].value;
}

int rest_cors(const rest_config *cfg, h2o_req_t *req) {
    const h2o_iovec_t *origin = find(req, "origin");
    if (!origin)
        return 0;
    int listed = 0;
    if (cfg->server_cors_allowed_origins) {
        listed = rest_cors_origin_listed(cfg->server_cors_allowed_origins,
                                         origin->base, origin->len);
        if (!listed)
            return 0; /* wai-cors ignores the failure: no CORS headers */
    }
    const h2o_iovec_t *rm = find(req, "access-control-request-method");
    int preflight =
        h2o_memis(req->method.base, req->method.len, H2O_STRLIT("OPTIONS")) &&
        rm != NULL;
    if (preflight) {
        /* a method not allowed is a failure wai-cors ignores */
        static const char *const ok[] = {"GET",    "POST",    "PATCH", "PUT",
                                         "DELETE", "OPTIONS", "HEAD"};
        int allowed = 0;
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
            allowed |= h2o_memis(rm->base, rm->len, ok[i], strlen(ok[i]));
        if (!allowed)
            preflight = 0;
    }
    if (listed) {
        add(req, "access-control-allow-origin", origin->base, origin->len);
        add(req, "access-control-allow-credentials", "true", 4);
    } else {
        add(req, "access-control-allow-origin", "*", 1);
    }
    if (!preflight) {
        add(req, "access-control-expose-headers", EXPOSE, sizeof EXPOSE - 1);
        return 0;
    }
    char ah[2048];
    const h2o_iovec_t *rh = find(req, "access-control-request-headers");
    rest_cors_allow_headers(rh ? rh->base : "", rh ? rh->len : 0, ah,
                            sizeof ah);
    add(req, "access-control-allow-methods", METHODS, sizeof METHODS - 1);
    add(req, "access-control-allow-headers", ah, strlen(ah));
    add(req, "access-control-max-age", "86400", 5);
    req->res.status = 200;
    req->res.reason = "OK";
    req->res.content_length = 0;
    h2o_send_inline(req, "", 0);
    return 1;
}
