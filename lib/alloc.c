/* Allocator plumbing: every allocation goes through the connection's
   ffb_allocator, or the C library when none was given. */
#include <stdlib.h>
#include <string.h>

#include "lib/internal.h"

void *ffb__malloc(const ffb_allocator *a, size_t size) {
    if (size == 0)
        size = 1;
    return a ? a->malloc(size, a->data) : malloc(size);
}

void *ffb__realloc(const ffb_allocator *a, void *p, size_t size) {
    if (size == 0)
        size = 1;
    return a ? a->realloc(p, size, a->data) : realloc(p, size);
}

void ffb__free(const ffb_allocator *a, void *p) {
    if (!p)
        return;
    if (a)
        a->free(p, a->data);
    else
        free(p);
}

char *ffb__strdup(const ffb_allocator *a, const char *s) {
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = ffb__malloc(a, n);
    if (d)
        memcpy(d, s, n);
    return d;
}
