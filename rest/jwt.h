/*
 * ffb-rest: JWT verification (spec rest.md A11), as PostgREST does it:
 * `Authorization: Bearer <jwt>`, HS256/384/512 with the algorithm fixed
 * by the configuration (`jwt-alg`; a token naming another one, `none`
 * included, is refused), HMAC on OpenSSL compared with CRYPTO_memcmp,
 * claims parsed with yajl, exp/nbf/iat with PostgREST's 30 s skew, aud
 * against `jwt-aud`, the role from `jwt-role-claim-key` (PostgREST's
 * JSPath: `.role`, `.app.roles[0]`, `."https://x.y".role`). Pure: no I/O,
 * the time is an argument.
 */
#ifndef FFB_REST_JWT_H
#define FFB_REST_JWT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "url.h"

/* One step of a JSPath: a key, or an index when `key` is NULL. */
typedef struct rest_jspath_step {
    char *key;
    long index;
} rest_jspath_step;

typedef struct rest_jwt_key {
    unsigned char *secret; /* the HMAC key (base64-decoded if so told) */
    size_t secret_len;
    int alg_bits;    /* 256, 384 or 512 */
    const char *aud; /* jwt-aud, NULL: any */
    rest_jspath_step *path;
    size_t npath;
} rest_jwt_key;

/* The key from the configuration's strings: `secret` (`@file` reads the
   file; decoded first when `is_base64`), `alg` ("HS256"...; NULL is
   HS256), `role_key` (NULL is ".role"). PostgREST's rule: at least 32
   bytes. 0, or -1 with a sentence in `err`. */
int rest_jwt_key_init(rest_jwt_key *k, const char *secret, int is_base64,
                      const char *alg, const char *aud, const char *role_key,
                      char *err, size_t errlen);
void rest_jwt_key_free(rest_jwt_key *k);

/* Parse a JSPath; 0 or -1. The steps are malloc'ed (rest_jwt_key_free). */
int rest_jspath_parse(const char *s, rest_jspath_step **out, size_t *n);

typedef struct rest_jwt_claims {
    char *role;   /* NULL: the token names none (anonymous role applies) */
    char *claims; /* the payload's JSON text as sent */
    size_t claims_len;
    int has_exp;
    int64_t exp; /* the exp claim (seconds), when has_exp */
} rest_jwt_claims;

/* exp/nbf/iat are checked with this skew (seconds), as PostgREST does. */
#define REST_JWT_SKEW 30

/* Verify `token` (the text after "Bearer ") at time `now` (seconds since
   1970). 0 with `out` filled (from the arena), or -1 with PostgREST's
   error in `err` (401 PGRST301 / PGRST303). */
int rest_jwt_verify(const rest_jwt_key *k, const char *token, size_t len,
                    int64_t now, rarena *a, rest_jwt_claims *out,
                    rest_err *err);

/* The WWW-Authenticate value PostgREST sends with error `e` (PGRST301,
   302, 303, and "Bearer" with any other 401 but PostgREST's own codes),
   or NULL. Written into `buf`. */
const char *rest_jwt_www_authenticate(const rest_err *e, char *buf, size_t n);

/* base64url (or standard) decode without padding; bytes written, or -1. */
long rest_b64_decode(const char *s, size_t n, unsigned char *out, size_t cap,
                     int url);

/* base64url without padding of `n` bytes into `out` (NUL-terminated):
   the length, or -1 when `cap` (the NUL included) is too small. */
long rest_b64url_encode(const unsigned char *p, size_t n, char *out,
                        size_t cap);

/* Sign `claims` (the payload's JSON text) into a compact JWT in `out`:
   header {"alg":"<alg>","typ":"JWT"}, HMAC with SHA-256/384/512 for
   "HS256"/"HS384"/"HS512", an empty signature for "none" (tests of the
   refusal); `key` of `keylen` bytes. For the tests and the load tool
   (bench/rest/load.c); the server never signs. Length written (without
   the NUL), or -1 (unknown alg, `cap` too small). */
long rest_jwt_sign(const char *alg, const char *claims, size_t claims_len,
                   const unsigned char *key, size_t keylen, char *out,
                   size_t cap);

#endif
