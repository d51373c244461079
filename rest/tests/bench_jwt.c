/*
 * The cost of verifying a token, with and without the JWT cache, for
 * callgrind (instruction counts are repeatable where wall time is not):
 *
 *   valgrind --tool=callgrind build/rest/tests/bench_jwt MODE N
 *
 * MODE 0 builds the key and the token only (the baseline), 1 verifies
 * the token N times with rest_jwt_verify, 2 N times through a cache
 * (the first a miss). (Ir(MODE) - Ir(0)) / N is the cost of one. Every
 * answer is checked (the role). Not a test: built with the tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/hmac.h>

#include "b64url.h"
#include "jwtcache.h"

int main(int argc, char **argv) {
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    long n = argc > 2 ? atol(argv[2]) : 1000;
    const char *secret = "reallyreallyreallyreallyverysafe";
    rest_jwt_key k;
    char err[256];
    if (rest_jwt_key_init(&k, secret, 0, NULL, NULL, NULL, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    /* a token as a client sends it: role, sub, exp, a few claims */
    const char *hdr = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    const char *pl = "{\"role\":\"web_user\",\"sub\":\"user-1234\",\"exp\":"
                     "4102444800,\"iat\":1700000000,\"email\":\"a@b.example\"}";
    char h[256], p[512], tok[1024];
    b64url((const unsigned char *)hdr, strlen(hdr), h);
    b64url((const unsigned char *)pl, strlen(pl), p);
    snprintf(tok, sizeof tok, "%s.%s", h, p);
    unsigned char mac[64];
    unsigned ml;
    HMAC(EVP_sha256(), secret, (int)strlen(secret), (unsigned char *)tok,
         strlen(tok), mac, &ml);
    strcat(tok, ".");
    b64url(mac, ml, tok + strlen(tok));
    rest_jwt_cache *c = mode == 2 ? rest_jwt_cache_new(1000) : NULL;
    long ok = 0;
    for (long i = 0; mode && i < n; i++) {
        rarena a;
        rest_jwt_claims cl;
        rest_err e;
        rarena_init(&a, 1 << 16);
        if (rest_jwt_verify_cached(c, &k, tok, strlen(tok), 1700000000, &a, &cl,
                                   &e) == 0 &&
            cl.role && strcmp(cl.role, "web_user") == 0)
            ok++;
        rarena_free(&a);
    }
    rest_jwt_cache_free(c);
    rest_jwt_key_free(&k);
    if (mode && ok != n) {
        fprintf(stderr, "%ld of %ld verified\n", ok, n);
        return 1;
    }
    printf("mode %d: %ld verified\n", mode, ok);
    return 0;
}
