/* ffb-rest: read the schema cache from the RDB$ tables (spec A13). */
#ifndef FFB_REST_SCHEMA_LOAD_H
#define FFB_REST_SCHEMA_LOAD_H

#include <stdint.h>

#include <uv.h>

#include "fastfb.h"
#include "schema.h"

/*
 * Connect with `opts` on `loop`, read every table, view, column, primary
 * and foreign key in one read-only transaction (both catalog queries are
 * prepared in one write and executed in the next), detach, and run the
 * loop until done. Returns 0, or a negative code with `err` set.
 * `round_trips` gets what the reading cost after the connect.
 */
int rest_schema_load(uv_loop_t *loop, const ffb_conn_options *opts,
                     rest_schema *out, uint64_t *round_trips, char *err,
                     size_t errlen);

#endif
