/*
 * Fuzz target: JWT verification (rest/jwt.c), which reads what any client
 * sends in `Authorization: Bearer`. The input is the token, tried with a
 * key of each algorithm, with jwt-aud and with a deep role path.
 * Properties: no crash, no over-read (the replay puts a guard page behind
 * the input), a refusal is 401 PGRST301/PGRST303 with a message and its
 * WWW-Authenticate value, an accepted token's claims lie in the arena
 * (NUL-terminated, their length as said). Also the request-context
 * helpers on the same bytes (claims, cookies). The JWT cache (jwtcache.h)
 * must answer as the verification does: the token goes through a cache of
 * two entries per key twice (the second time a hit when it was accepted), the
 * same verdict and role each time.
 */
#include <string.h>

#include "context.h"
#include "jwt.h"
#include "jwtcache.h"
#include "tests/fuzz/fuzz.h"

static rest_jwt_key keys[3];
static rest_jwt_cache *cache[3];
static int ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) {
        static const char *const alg[] = {"HS256", "HS384", "HS512"};
        static const char *const path[] = {".role", ".a.b[2].\"c.d\"",
                                           ".roles[0]"};
        char err[256];
        for (int i = 0; i < 3; i++)
            if (rest_jwt_key_init(&keys[i], "reallyreallyreallyreallyverysafe",
                                  0, alg[i], i == 1 ? "api" : NULL, path[i],
                                  err, sizeof err) < 0)
                abort();
        for (int i = 0; i < 3; i++)
            cache[i] = rest_jwt_cache_new(2);
        ready = 1;
    }
    for (int i = 0; i < 3; i++) {
        rarena a;
        rest_jwt_claims c;
        rest_err e;
        char wa[512];
        rarena_init(&a, 1u << 20);
        if (rest_jwt_verify(&keys[i], (const char *)data, size, 1700000000, &a,
                            &c, &e) < 0) {
            FUZZ_CHECK(e.status == 401);
            FUZZ_CHECK(strcmp(e.code, "PGRST301") == 0 ||
                       strcmp(e.code, "PGRST303") == 0);
            FUZZ_CHECK(e.message[0] != '\0');
            FUZZ_CHECK(rest_jwt_www_authenticate(&e, wa, sizeof wa) != NULL);
        } else {
            FUZZ_CHECK(c.claims && strlen(c.claims) == c.claims_len);
            rest_ctx ctx;
            memset(&ctx, 0, sizeof ctx);
            rest_ctx_add_claims(&ctx, &a, c.claims, c.claims_len);
            FUZZ_CHECK(ctx.n <= REST_CTX_MAX);
        }
        int ok = rest_jwt_verify(&keys[i], (const char *)data, size, 1700000000,
                                 &a, &c, &e) == 0;
        char *role = ok && c.role ? c.role : NULL;
        for (int k = 0; k < 2; k++) {
            rest_jwt_claims cc;
            rest_err ce;
            int cok =
                rest_jwt_verify_cached(cache[i], &keys[i], (const char *)data,
                                       size, 1700000000, &a, &cc, &ce) == 0;
            FUZZ_CHECK(cok == ok);
            if (cok) {
                FUZZ_CHECK(cc.claims_len == c.claims_len &&
                           memcmp(cc.claims, c.claims, c.claims_len) == 0);
                FUZZ_CHECK((role == NULL) == (cc.role == NULL));
                FUZZ_CHECK(!role || strcmp(role, cc.role) == 0);
            } else {
                FUZZ_CHECK(strcmp(ce.code, e.code) == 0);
            }
        }
        rarena_free(&a);
    }
    rarena a;
    rest_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    rarena_init(&a, 1u << 20);
    rest_ctx_add_cookies(&ctx, &a, (const char *)data, size);
    for (size_t i = 0; i < ctx.n; i++)
        FUZZ_CHECK(ctx.value_len[i] <= REST_CTX_VALUE_MAX &&
                   ctx.name_len[i] <= REST_CTX_NAME_MAX);
    rarena_free(&a);
    return 0;
}
