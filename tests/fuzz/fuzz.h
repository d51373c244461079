/*
 * Shared by the libFuzzer targets (fuzz_*.c) and the corpus replay
 * (replay.c). Each target defines LLVMFuzzerTestOneInput(); a property that
 * does not hold calls FUZZ_CHECK, which aborts, so libFuzzer and the replay
 * test both report it as a crash.
 */
#ifndef FFB_FUZZ_H
#define FFB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__,          \
                    __LINE__, #cond);                                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* A view (p, n) lies inside [base, base + len) - or is empty. */
static inline int fuzz_inside(const uint8_t *base, size_t len, const uint8_t *p,
                              size_t n) {
    if (n == 0)
        return 1;
    uintptr_t b = (uintptr_t)base, q = (uintptr_t)p;
    return q >= b && q - b <= len && n <= len - (q - b);
}

#endif
