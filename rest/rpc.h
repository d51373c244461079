/*
 * ffb-rest: RPC (spec rest.md A7): GET and POST /rpc/<name> to the
 * procedures and PSQL functions of the schema cache.
 *
 *   selectable procedure  SELECT * FROM "P"(?, ...)        200 [rows]
 *   executable procedure  EXECUTE PROCEDURE "P"(?, ...)    200 {outputs}, or
 *                                                          204 without any
 *   function              SELECT "F"(?, ...) FROM RDB$DATABASE  200 value
 *
 * Arguments by name (matched like columns, A4.1) from the query string
 * (GET/HEAD) or a JSON object body (POST), passed in their declared
 * order; trailing ones with a default may be left out. A name the routine
 * does not have, or a missing one, is 404 PGRST202. GET runs read-only
 * (a routine that writes fails with 25006: 405), POST read-write; other
 * methods 405 PGRST101. Values go as text (the server converts them) or
 * NULL. Warm: 1 round trip (start, execute with its rows, commit in one
 * write). A selectable procedure is read as a table by the read path
 * (rest_http_read_proc): the query string's keys that are not arguments
 * are its filters, select, order, paging and embeds (through `@returns
 * <table>` in its description), as in PostgREST; a POST's query string
 * is all the read's. Prefer: params=single-object passes a POST's whole
 * body as the one argument. Filters and select on a function's or an
 * executable procedure's result, and their blob outputs, are 400
 * PGRST127.
 */
#ifndef FFB_REST_RPC_H
#define FFB_REST_RPC_H

#include "server.h"

/* `name` (n bytes, percent-decoded by h2o): the part after /rpc/. */
int rest_rpc_handle(rest_app *app, h2o_req_t *req, const char *name, size_t n);

#endif
