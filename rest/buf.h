/*
 * ffb-rest: a growable byte buffer and a bump arena (no I/O).
 */
#ifndef FFB_REST_BUF_H
#define FFB_REST_BUF_H

#include <stddef.h>
#include <stdint.h>

/* A growable buffer; `failed` sticks once an allocation or the cap fails,
   and every later append is ignored (callers check once at the end). */
typedef struct rbuf {
    char *p;
    size_t len;
    size_t cap;
    size_t max; /* 0 = no limit */
    int failed;
} rbuf;

void rbuf_init(rbuf *b, size_t max);
void rbuf_free(rbuf *b);
void rbuf_reset(rbuf *b);
void rbuf_add(rbuf *b, const void *p, size_t n);
void rbuf_adds(rbuf *b, const char *s);
void rbuf_addc(rbuf *b, char c);
void rbuf_printf(rbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* NUL-terminates without counting the NUL; NULL when failed. */
const char *rbuf_cstr(rbuf *b);

/* The decimal digits of v at dst (at most 20 bytes and a NUL, so dst has
   21); returns their count. For headers on every request, where snprintf
   costs ten times as much. */
size_t rest_fmt_i64(char *dst, int64_t v);

/* A bump arena: everything is freed at once. */
typedef struct rarena {
    struct rarena_block *head;
    size_t used_total;
    size_t max; /* 0 = no limit */
} rarena;

void rarena_init(rarena *a, size_t max);
void rarena_free(rarena *a);
void *rarena_alloc(rarena *a, size_t n); /* zeroed; NULL on failure */
char *rarena_strndup(rarena *a, const char *s, size_t n);

#endif
