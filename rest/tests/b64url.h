/* base64url without padding, for the tests that make tokens (rest/jwt.c's
   encoder; `out` must hold 4 * ceil(n / 3) + 1 bytes). */
#ifndef FFB_REST_TEST_B64URL_H
#define FFB_REST_TEST_B64URL_H

#include <stddef.h>
#include <stdint.h>

#include "jwt.h"

static void b64url(const unsigned char *p, size_t n, char *out) {
    rest_b64url_encode(p, n, out, SIZE_MAX);
}

#endif
