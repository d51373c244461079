/* ffb-rest: the HTTP helpers of handler.c that the write path (write.c)
   shares. */
#ifndef FFB_REST_HTTP_H
#define FFB_REST_HTTP_H

#include "server.h"
#include "url.h"

void rest_http_add_header(h2o_req_t *req, const char *name, const char *value,
                          size_t vlen);
void rest_http_send(h2o_req_t *req, int status, const char *ctype,
                    const char *body, size_t len, int head);
void rest_http_send_error(h2o_req_t *req, const rest_app *app,
                          const rest_err *e, int head);
rest_loop *rest_http_loop(h2o_req_t *req);
/* The first line of request header `name`, or NULL. */
const h2o_iovec_t *rest_http_header(h2o_req_t *req, const char *name);
/* A list header (Prefer): all its lines joined with ", " (RFC 9110 5.3),
   or NULL. */
const h2o_iovec_t *rest_http_header_list(h2o_req_t *req, const char *name);
uint64_t rest_http_conn_rts(const ffb_conn *c);

/* "\"key\":" of each key, JSON-escaped, in the arena; NULL: no memory. */
char **rest_http_keyjson(rarena *a, const char *const *keys, size_t n);

/* Accept: JSON or anything (0), PostgREST's singular object (0 with
 *singular set), else -1 with 406 PGRST107. */
int rest_http_accept(h2o_req_t *req, int *singular, rest_err *err);

/* A read of the selectable procedure `t` (rest_table.proc, its arguments
   set) as of a table: filters, select, order, paging, counts, singular
   and embeds from `qs` (the query string without the arguments, n
   bytes), answered as a read (rpc.c). `read_write`: a POST's read-write
   transaction. */
int rest_http_read_proc(rest_app *app, h2o_req_t *req, const rest_table *t,
                        const char *qs, size_t qn, int head, int read_write);

/* POST, PATCH and DELETE of /<name> (write.c). */
int rest_handle_write(rest_app *app, h2o_req_t *req, const char *name);

#endif
