/*
 * ffb-rest: the OpenAPI (Swagger 2.0) document of GET / (spec rest.md
 * A12), in PostgREST's shape (its OpenAPI.hs): a path per table and view
 * (get with rowFilter.<t>.<c>, select, order, range, rangeUnit, offset,
 * limit, preferCount; tables also post, patch, delete), definitions with
 * each column's type, format and maxLength, the primary and foreign keys
 * in the description ("Note:\nThis is a Primary Key.<pk/>"), `required`
 * for NOT NULL columns without a default, and PostgREST's shared
 * parameters. From the schema cache alone: no database work.
 * `openapi-mode = ignore-privileges` (the default here) lists everything;
 * `disabled` answers 404 PGRST126 (handler).
 */
#ifndef FFB_REST_OPENAPI_H
#define FFB_REST_OPENAPI_H

#include "buf.h"
#include "config.h"
#include "schema.h"

void rest_openapi(const rest_schema *s, const rest_config *cfg, rbuf *out);

/* The JSON type and PostgreSQL-style format of a column (pure). */
void rest_openapi_type(const rest_column *c, const char **type,
                       const char **format);

#endif
