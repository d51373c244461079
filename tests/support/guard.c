/* Guard-page copies of test vectors (see guard.h). */
#if !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#endif

#include "tests/support/guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const uint8_t *guard_copy(guard_buf *g, const void *src, size_t len) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (len + page - 1) / page;
    size_t map_len = (data_pages + 1) * page;
    void *m = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("guard_copy: mmap");
        abort();
    }
    uint8_t *base = m;
    uint8_t *guard = base + data_pages * page;
    if (mprotect(guard, page, PROT_NONE) != 0) {
        perror("guard_copy: mprotect");
        abort();
    }
    g->map = base;
    g->map_len = map_len;
    g->p = guard - len;
    g->len = len;
    if (len)
        memcpy(g->p, src, len);
    return g->p;
}

void guard_release(guard_buf *g) {
    if (g->map)
        munmap(g->map, g->map_len);
    memset(g, 0, sizeof(*g));
}
