/* Allocator plumbing: every allocation goes through the connection's
   ffb_allocator, or the C library when none was given. */
#include <stdatomic.h>
#include <stdio.h>
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

/* ---- freed-object checks (builds without NDEBUG) ------------------------- */

#ifndef NDEBUG
/*
 * The structs of statements, transactions, blobs, batches and connections
 * allocated with the C library are not released at once but kept (their
 * contents already freed) in a ring of the last QUARANTINE ones. Their
 * addresses are then not reused, so a second free - or a free after
 * ffb_conn_free(), which frees every object of the connection - is found
 * by its address alone, without reading freed memory. Objects of a custom
 * allocator are released at once: its owner may be gone by the time the
 * ring would release them.
 */
#define QUARANTINE 256

static struct {
    void *p;
    const char *kind;
} ring[QUARANTINE];
static size_t ring_next;
static atomic_flag ring_lock = ATOMIC_FLAG_INIT;

static void lock(void) {
    while (atomic_flag_test_and_set_explicit(&ring_lock, memory_order_acquire))
        ;
}

static void unlock(void) {
    atomic_flag_clear_explicit(&ring_lock, memory_order_release);
}

void ffb__obj_release(const ffb_allocator *a, void *p, const char *kind) {
    if (!p)
        return;
    if (a) {
        ffb__free(a, p);
        return;
    }
    lock();
    void *old = ring[ring_next].p;
    ring[ring_next].p = p;
    ring[ring_next].kind = kind;
    ring_next = (ring_next + 1) % QUARANTINE;
    unlock();
    free(old);
}

void ffb__obj_check(const void *p, const char *call) {
    if (!p)
        return;
    const char *kind = NULL;
    lock();
    for (size_t i = 0; i < QUARANTINE && !kind; i++)
        if (ring[i].p == p)
            kind = ring[i].kind;
    unlock();
    if (!kind)
        return;
    fprintf(stderr,
            "libfastfb: %s(%p): this %s was freed already - by an earlier "
            "free, or by ffb_conn_free() of its connection, which frees "
            "every object of the connection. Aborting (checks of builds "
            "without NDEBUG).\n",
            call, p, kind);
    abort();
}
#else
void ffb__obj_release(const ffb_allocator *a, void *p, const char *kind) {
    (void)kind;
    ffb__free(a, p);
}

void ffb__obj_check(const void *p, const char *call) {
    (void)p;
    (void)call;
}
#endif

int ffb__give(void *out, size_t size, const void *full, size_t full_size) {
    if (!out)
        return FFB_E_INVAL;
    size_t n = size < full_size ? size : full_size;
    memcpy(out, full, n);
    if (size > n)
        memset((char *)out + n, 0, size - n);
    return 0;
}
