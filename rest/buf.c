/* ffb-rest: growable buffer and bump arena. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rbuf_init(rbuf *b, size_t max) {
    memset(b, 0, sizeof *b);
    b->max = max;
}

void rbuf_free(rbuf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

void rbuf_reset(rbuf *b) {
    b->len = 0;
    b->failed = 0;
}

static int grow(rbuf *b, size_t extra) {
    if (b->failed)
        return -1;
    if (extra > SIZE_MAX - b->len - 1 || (b->max && b->len + extra > b->max)) {
        b->failed = 1;
        return -1;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void rbuf_add(rbuf *b, const void *p, size_t n) {
    if (n == 0 || grow(b, n) < 0)
        return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void rbuf_adds(rbuf *b, const char *s) { rbuf_add(b, s, strlen(s)); }

void rbuf_addc(rbuf *b, char c) {
    if (grow(b, 1) < 0)
        return;
    b->p[b->len++] = c;
}

size_t rest_fmt_i64(char *dst, int64_t v) {
    char t[20];
    size_t n = 0, len = 0;
    /* in uint64_t: -INT64_MIN does not fit in int64_t */
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        t[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        dst[len++] = '-';
    while (n)
        dst[len++] = t[--n];
    dst[len] = '\0';
    return len;
}

void rbuf_printf(rbuf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof tmp) {
        rbuf_add(b, tmp, (size_t)n);
        return;
    }
    if (grow(b, (size_t)n) < 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *rbuf_cstr(rbuf *b) {
    if (grow(b, 0) < 0)
        return NULL;
    b->p[b->len] = '\0';
    return b->p;
}

struct rarena_block {
    struct rarena_block *next;
    size_t size;
    size_t used;
    _Alignas(16) unsigned char data[];
};

void rarena_init(rarena *a, size_t max) {
    a->head = NULL;
    a->used_total = 0;
    a->max = max;
}

void rarena_free(rarena *a) {
    struct rarena_block *b = a->head;
    while (b) {
        struct rarena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
    a->used_total = 0;
}

void *rarena_alloc(rarena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    if (a->max && (n > a->max || a->used_total > a->max - n))
        return NULL;
    struct rarena_block *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t size = n > 4096 ? n : 4096;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->size = size;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    a->used_total += n;
    memset(p, 0, n);
    return p;
}

char *rarena_strndup(rarena *a, const char *s, size_t n) {
    char *p = rarena_alloc(a, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}
