/*
 * Hex test vectors. Blanks and newlines between bytes are skipped; any
 * other non-hex character fails the test (cmocka), as does a vector that
 * does not fit.
 */
#ifndef FFB_TEST_HEX_H
#define FFB_TEST_HEX_H

#include <stddef.h>
#include <stdint.h>

/* The value of a hex digit, -1 for anything else. */
int test_hexval(int c);
/* Into out[size]; returns the length. */
size_t test_unhex(const char *hex, uint8_t *out, size_t size);
/* Into a new buffer (free() it); *len set. */
uint8_t *test_unhex_alloc(const char *hex, size_t *len);

#endif
