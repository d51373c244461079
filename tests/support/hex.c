#include "tests/support/hex.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

int test_hexval(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

size_t test_unhex(const char *hex, uint8_t *out, size_t size) {
    size_t n = 0;
    while (*hex) {
        if (*hex == ' ' || *hex == '\n') {
            hex++;
            continue;
        }
        int hi = test_hexval((unsigned char)hex[0]);
        int lo = hex[1] ? test_hexval((unsigned char)hex[1]) : -1;
        if (hi < 0 || lo < 0)
            fail_msg("not a hex byte at \"%.8s\"", hex);
        if (n == size)
            fail_msg("a hex vector longer than its %zu-byte buffer", size);
        out[n++] = (uint8_t)(hi << 4 | lo);
        hex += 2;
    }
    return n;
}

uint8_t *test_unhex_alloc(const char *hex, size_t *len) {
    size_t cap = strlen(hex) / 2 + 1;
    uint8_t *b = malloc(cap);
    assert_non_null(b);
    *len = test_unhex(hex, b, cap);
    return b;
}
