/*
 * A scripted server for the engine and hostile-server tests: what a
 * Firebird server (or a man in the middle) sends, encoded by the test, fed
 * to a connection through the library's test transport so the blocking API
 * runs unchanged.
 *
 * Each transport read feeds the next queued chunk; with nothing queued, the
 * optional generator is asked for more (endless or growing answers), and
 * failing that the server "closes the connection" (EOF), so a test can never
 * hang on a missing answer. Every byte the client writes is kept.
 */
#ifndef FFB_TEST_HOSTILE_H
#define FFB_TEST_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/internal.h"
#include "tests/support/srv.h"

/* ---- the scripted transport -------------------------------------------- */

typedef struct hostile hostile;

/* Asked for more server bytes when the queue is empty; append to `w` and
   return 1, or return 0 for EOF. `n` counts the calls. */
typedef int (*hostile_gen)(hostile *h, ffbp_writer *w, size_t n);

struct hostile {
    uint8_t **chunk;
    size_t *chunk_len;
    size_t nchunks, cap, next;
    size_t feed_piece;   /* feed each chunk in pieces of this size (0 = whole) */
    hostile_gen gen;
    void *gen_data;
    size_t gen_calls;
    size_t reads;        /* transport reads served */
    size_t max_reads;    /* a read beyond this fails the test (0 = 100000) */
    uint8_t *written;    /* everything the client wrote */
    size_t written_len, written_cap;
    size_t flushes;      /* transport writes */
    /* Time: the connection reads this clock (ms). With `stall`, a read
       with nothing scripted waits the time it is given - the clock moves
       on by that much - and comes back empty, as a silent server's
       socket does; without it the server closes the stream. */
    int64_t now;
    int stall;
    size_t stalls;       /* empty waits served */
};

void hostile_init(hostile *h);

/* The scripted server and a writer for its answers, shared by a suite's
   tests; hostile_setup/hostile_teardown (cmocka fixtures) reset them. */
extern hostile H;
extern ffbp_writer W;
int hostile_setup(void **state);
int hostile_teardown(void **state);
void hostile_free(hostile *h);
/* Queue the writer's bytes as one chunk (one transport read), reset it. */
void hostile_push(hostile *h, ffbp_writer *w);
void hostile_push_bytes(hostile *h, const void *p, size_t len);
/* Chunks still queued. */
size_t hostile_pending(const hostile *h);
/* Install the transport on a connection made by the test. */
void hostile_use(hostile *h, ffb_conn *conn);

/* Options for hostile_attach: a plain connection (no encryption, no
   compression), external identities fixed. NULL `o` = defaults. */
void hostile_options(ffb_conn_options *o);
/* A connection attached over the script: op_accept for `protocol` (flow C,
   auth data in the DPB), then a successful attach answer. Asserts
   success; the client writes of the handshake are kept. */
ffb_conn *hostile_attach(hostile *h, int protocol,
                         const ffb_conn_options *o);

/* An external-I/O connection (hostile_options) attached by hand through
   the byte pump, with W: op_accept for `protocol`, then a successful
   attach answer. */
ffb_conn *hostile_ext_attach(int protocol);

/* A counting allocator that fails allocation number `fail_at` (1-based,
   0 = never) and every one after it while `fail_all`. */
typedef struct fail_alloc {
    size_t calls;
    size_t fail_at;
    int fail_all;
    size_t live;
    int failed;          /* an allocation was refused */
} fail_alloc;

void fail_alloc_install(fail_alloc *fa, ffb_allocator *out);

#endif
