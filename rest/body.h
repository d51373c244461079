/*
 * ffb-rest: the JSON request body of a write (spec rest.md A6, A15) as
 * rows of values. Pure: no I/O. Parsed with yajl's event parser; numbers
 * keep their literal text (yajl_number), so 12345678901234567890.123 is
 * bound exactly as written, never through a double.
 */
#ifndef FFB_REST_BODY_H
#define FFB_REST_BODY_H

#include <stddef.h>

#include "buf.h"
#include "url.h"

enum rest_jkind {
    REST_J_ABSENT = 0, /* the key is not in this object */
    REST_J_NULL,
    REST_J_STRING,
    REST_J_NUMBER,
    REST_J_TRUE,
    REST_J_FALSE
};

typedef struct rest_jval {
    int kind;         /* enum rest_jkind */
    const char *text; /* STRING (unescaped UTF-8), NUMBER (the literal),
                         TRUE/FALSE ("true"/"false"); NUL-terminated */
    size_t len;
} rest_jval;

typedef struct rest_body {
    int is_array;      /* the body was an array of objects */
    const char **keys; /* every key of every object, in first-seen order */
    size_t nkeys;
    rest_jval *vals; /* nrows * nkeys, row-major; ABSENT where missing */
    size_t nrows;
    int keys_differ; /* some object lacks a key another one has */
} rest_body;

typedef struct rest_body_limits {
    size_t max_keys; /* distinct keys */
    size_t max_rows; /* objects of an array */
} rest_body_limits;

#define REST_BODY_LIMITS_DEFAULT                                               \
    { 1024, 100000 }

/*
 * Parse `len` bytes of JSON: an object, or an array of objects, whose
 * values are scalars. Everything lives in `arena`. Returns 0, or -1 with
 * `err` 400 PGRST102 (empty or invalid JSON, nested values, too many keys
 * or rows; `details` says what and where).
 */
int rest_parse_body(rarena *arena, const char *data, size_t len,
                    const rest_body_limits *lim, rest_body *out, rest_err *err);

/*
 * An application/x-www-form-urlencoded body ("a=1&b=x+y"): one object
 * whose values are strings (percent-decoded, '+' a space; a key without
 * '=' has the empty string). Returns 0, or -1 with 400 PGRST102 (too many
 * keys) or 500 (no memory).
 */
int rest_parse_form(rarena *arena, const char *data, size_t len,
                    const rest_body_limits *lim, rest_body *out, rest_err *err);

static inline const rest_jval *rest_body_val(const rest_body *b, size_t row,
                                             size_t key) {
    return &b->vals[row * b->nkeys + key];
}

/* Canonical text of the parsed body (golden tests, fuzzing). */
void rest_body_dump(const rest_body *b, rbuf *out);
/* `n` bytes with newlines, returns and NULs escaped (for dumps). */
void rest_dump_text(rbuf *out, const char *s, size_t n);

#endif
