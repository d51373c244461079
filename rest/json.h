/*
 * ffb-rest: the JSON row writer (spec rest.md A9): every Firebird type
 * exact, no DOM. And the error body of A10.
 */
#ifndef FFB_REST_JSON_H
#define FFB_REST_JSON_H

#include <stddef.h>

#include "buf.h"
#include "url.h"

#include "fastfb.h"

/* A JSON string literal of `n` bytes (UTF-8 passed through, controls
   escaped). */
void json_string(rbuf *b, const char *s, size_t n);
/* As json_string, for text that may not be UTF-8 (an error's message
   quoting the request): a byte that starts no valid UTF-8 sequence is
   written as U+FFFD. */
void json_text(rbuf *b, const char *s, size_t n);

/* The value of column `col` of the current row of `stmt`, as JSON. */
int json_column(rbuf *b, ffb_stmt *stmt, unsigned col,
                const ffb_column_info *ci);

/* Bytes as PostgreSQL's bytea text form, "\\x0aff". */
void json_hex(rbuf *b, const char *s, size_t n);

/* A double as the shortest text that reads back the same; NaN/Inf: null. */
void json_double(rbuf *b, double d);

/* TIME/TIMESTAMP WITH TIME ZONE `col` with its offset in effect from
   columns `hcol` (hours) and `hcol` + 1 (minutes): ISO 8601
   ("2024-07-01T12:00:00+02:00"). */
int json_tz_column(rbuf *b, ffb_stmt *stmt, unsigned col,
                   const ffb_column_info *ci, unsigned hcol);

/* A time zone value as libfastfb prints it ("2024-07-01 12:00:00.5000
   +02:00", "10:11:12.0000 Europe/Prague") as a JSON string in ISO 8601
   ("2024-07-01T12:00:00.5+02:00"; a region zone as a "[Zone]" suffix). */
void json_tz_text(rbuf *b, const char *s, size_t n);

/* "a decimal number as JSON allows" (for DECFLOAT text). */
int json_is_number(const char *s, size_t n);

/* {"code":..,"message":..,"details":..,"hint":..} (A10). */
void json_error(rbuf *b, const rest_err *e, int minimal);

/* Map a libfastfb error (a failed request) to A10's status and shape. */
void rest_err_from_ffb(rest_err *e, int code, const ffb_error *fe, int has_jwt);

#endif
