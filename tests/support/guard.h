/*
 * Guard pages for decoder inputs (STYLE 11, picohttpparser's habit): a
 * copy of a byte vector that ends exactly where an inaccessible page
 * begins, so any read past the end faults at once, with or without a
 * sanitizer.
 */
#ifndef FFB_TEST_GUARD_H
#define FFB_TEST_GUARD_H

#include <stddef.h>
#include <stdint.h>

typedef struct guard_buf {
    uint8_t *map; /* the whole mapping */
    size_t map_len;
    uint8_t *p; /* the copy; p + len is the first byte of the guard */
    size_t len;
} guard_buf;

/* Copy `len` bytes of `src` (NULL when len is 0) in front of a PROT_NONE
   page. Returns g->p; aborts when the mapping fails. */
const uint8_t *guard_copy(guard_buf *g, const void *src, size_t len);
/* Unmap; g may be reused. */
void guard_release(guard_buf *g);

#endif
