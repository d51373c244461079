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
 * write): a selectable procedure is asked for db-probe-rows + 1 rows
 * (FETCH NEXT ?), all in the first fetch; when they are all there it is
 * run again without the limit and the early commit, as reads are. Blob outputs
 * and filters/select/order on the result are not done yet (PGRST127).
 */
#ifndef FFB_REST_RPC_H
#define FFB_REST_RPC_H

#include "server.h"

/* `name` (n bytes, percent-decoded by h2o): the part after /rpc/. */
int rest_rpc_handle(rest_app *app, h2o_req_t *req, const char *name, size_t n);

#endif
