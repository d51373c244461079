/* base64url without padding, for the tests that make tokens. */
#ifndef FFB_REST_TEST_B64URL_H
#define FFB_REST_TEST_B64URL_H

#include <stddef.h>

static void b64url(const unsigned char *p, size_t n, char *out) {
    static const char a[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[o++] = a[(v >> 18) & 63];
        out[o++] = a[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = a[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = a[v & 63];
    }
    out[o] = '\0';
}

#endif
