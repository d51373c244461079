/*
 * ffb-rest: the JWT cache (spec rest.md A11; PostgREST's
 * `jwt-cache-max-entries`): tokens that verified, keyed by the token's
 * text, with what the verification found (the role, the claims' JSON and
 * exp). A hit skips the base64, the HMAC and the two JSON parses; an
 * entry whose exp has passed (with the 30 s skew) is dropped at lookup
 * and the token verified again, which refuses it as expired. Only
 * accepted tokens are kept: a refused one is verified (and refused) every
 * time. LRU, at most `max` entries (each a copy of its token and claims,
 * at most 16 KiB each): the least recently used one is reused when full.
 *
 * One cache per server thread (no lock). The bucket is chosen by a hash
 * with a per-cache random seed, and a token is compared with the cached
 * one with CRYPTO_memcmp, so the lookup's time does not tell how much of
 * a guessed token matches a cached one. Pure apart from the seed: the
 * time is an argument.
 */
#ifndef FFB_REST_JWTCACHE_H
#define FFB_REST_JWTCACHE_H

#include "jwt.h"

typedef struct rest_jwt_cache rest_jwt_cache;

/* A cache of at most `max` tokens; NULL when `max` is 0 (no cache) or on
   no memory. */
rest_jwt_cache *rest_jwt_cache_new(size_t max);
void rest_jwt_cache_free(rest_jwt_cache *c);

/* rest_jwt_verify through the cache `c` (NULL: no cache): the same
   answer, with `out` in the arena. The entries belong to the key `k` they
   were verified with: a call with another key empties the cache first. */
int rest_jwt_verify_cached(rest_jwt_cache *c, const rest_jwt_key *k,
                           const char *token, size_t len, int64_t now,
                           rarena *a, rest_jwt_claims *out, rest_err *err);

typedef struct rest_jwt_cache_stats {
    size_t entries;
    uint64_t hits;
    uint64_t misses;
    uint64_t evicted; /* reused for another token (full) */
    uint64_t expired; /* dropped at lookup: exp passed */
} rest_jwt_cache_stats;
void rest_jwt_cache_stats_get(const rest_jwt_cache *c, rest_jwt_cache_stats *s);

#endif
