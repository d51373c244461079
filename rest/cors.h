/*
 * ffb-rest: CORS as PostgREST does it (its Cors.hs on wai-cors; spec
 * rest.md A12) and OPTIONS. A request with `Origin` gets
 * Access-Control-Allow-Origin (`*`, or the origin itself with
 * Access-Control-Allow-Credentials when `server-cors-allowed-origins`
 * lists it; an origin not listed gets no CORS headers) and
 * Access-Control-Expose-Headers. A preflight (OPTIONS with Origin and an
 * allowed Access-Control-Request-Method) is answered here: 200 with the
 * allowed methods, headers (Authorization, the requested ones, then
 * wai-cors's simple ones) and Max-Age 86400. No database work.
 */
#ifndef FFB_REST_CORS_H
#define FFB_REST_CORS_H

#include <h2o.h>

#include "config.h"

/* Add the CORS headers of `req` to its response; 1 when it was a preflight
   and has been answered, else 0. */
int rest_cors(const rest_config *cfg, h2o_req_t *req);

/* Is `origin` (n bytes) in the comma-separated list `allowed`? (pure) */
int rest_cors_origin_listed(const char *allowed, const char *origin, size_t n);

/* The Access-Control-Allow-Headers value for the requested list (pure):
   "Authorization, <requested...>, Accept, Accept-Language,
   Content-Language", each name once (case-insensitive). */
void rest_cors_allow_headers(const char *req, size_t n, char *out, size_t outn);

#endif
