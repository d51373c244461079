/* ffb-rest: the response helpers of handler.c, for the other handlers
   (rpc.c). */
#ifndef FFB_REST_RESPOND_H
#define FFB_REST_RESPOND_H

#include "server.h"
#include "url.h"

void rest_add_header(h2o_req_t *req, const char *name, const char *value,
                     size_t vlen);
void rest_send_body(h2o_req_t *req, int status, const char *ctype,
                    const char *body, size_t len, int head);
void rest_send_error(h2o_req_t *req, const rest_app *app, const rest_err *e,
                     int head);
rest_loop *rest_loop_of(h2o_req_t *req);
uint64_t rest_conn_rts(const ffb_conn *c);

#endif
