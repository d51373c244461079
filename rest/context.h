/*
 * ffb-rest: the request context (spec rest.md A8.3): PostgREST's GUCs as
 * Firebird context variables, set with RDB$SET_CONTEXT('USER_TRANSACTION',
 * name, value) in one EXECUTE BLOCK queued in front of the request's
 * statement, in the same write (no round trip of its own), followed by
 * `db-pre-request` when configured. PSQL reads them with
 * RDB$GET_CONTEXT('USER_TRANSACTION', 'request.method').
 *
 * Names: request.method, request.path, request.jwt.claims (the payload's
 * JSON), request.jwt.claim.<claim> per top-level scalar claim,
 * request.header.<lower-case name> per header, request.cookie.<name> per
 * cookie. A value is VARCHAR(255) in Firebird (RDB$SET_CONTEXT declares
 * it so): longer values are left out, never cut. At most REST_CTX_MAX
 * names. Names and values are parameters and the block has room for a
 * multiple of REST_CTX_SLOTS pairs (the unused ones NULL, skipped), so its
 * text depends only on that bucket (and the pre-request procedure): a
 * request with one header more is still warm.
 */
#ifndef FFB_REST_CONTEXT_H
#define FFB_REST_CONTEXT_H

#include <stddef.h>

#include "buf.h"

#define REST_CTX_MAX 64
#define REST_CTX_VALUE_MAX 255
#define REST_CTX_NAME_MAX 80
#define REST_CTX_SLOTS 16

typedef struct rest_ctx {
    size_t n;
    const char *name[REST_CTX_MAX];
    size_t name_len[REST_CTX_MAX];
    const char *value[REST_CTX_MAX];
    size_t value_len[REST_CTX_MAX];
    int dropped; /* names left out: too long, or too many */
} rest_ctx;

/* Add `prefix` + `name` = value (the name lower-cased when `lower`),
   copied into the arena; a value too long or a name too long is dropped. */
void rest_ctx_add(rest_ctx *c, rarena *a, const char *prefix, const char *name,
                  size_t nlen, int lower, const char *value, size_t vlen);

/* request.jwt.claims and request.jwt.claim.<k> from the payload's JSON. */
void rest_ctx_add_claims(rest_ctx *c, rarena *a, const char *json, size_t len);

/* request.cookie.<name> from a Cookie header's value. */
void rest_ctx_add_cookies(rest_ctx *c, rarena *a, const char *v, size_t n);

/* The slots of the block for `n` pairs: 0, or `n` rounded up to a
   multiple of REST_CTX_SLOTS. */
size_t rest_ctx_slots(size_t n);

/* The EXECUTE BLOCK with `slots` pairs, then EXECUTE PROCEDURE
   `pre_request` (a name; NULL: none). Parameters: name 1, value 1, name
   2, ...; a pair whose name is NULL is skipped. */
void rest_ctx_sql(rbuf *out, size_t slots, const char *pre_request);

/* The block's text for every slot count (0, REST_CTX_SLOTS, ...,
   REST_CTX_MAX) with one pre-request procedure, built once at start-up:
   a request takes its text from here instead of building it (with
   printf, about 30k instructions at 16 slots). */
#define REST_CTX_BUCKETS (REST_CTX_MAX / REST_CTX_SLOTS + 1)
typedef struct rest_ctx_texts {
    char *sql[REST_CTX_BUCKETS];
    size_t len[REST_CTX_BUCKETS];
} rest_ctx_texts;

/* 0, or -1 (no memory; nothing kept). */
int rest_ctx_texts_init(rest_ctx_texts *t, const char *pre_request);
void rest_ctx_texts_free(rest_ctx_texts *t);

#endif
