/*
 * Recorded conversations (tests/data/fb5, the .conv files; format in the README
 * there) replayed through a scripted transport: the library's writes are
 * compared byte for byte with the recorded client writes, and the recorded
 * server bytes are fed back, whole or cut into chunks.
 */
#ifndef FFB_TEST_CONV_H
#define FFB_TEST_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "lib/internal.h"

enum conv_kind {
    CONV_CONNECT,
    CONV_C,
    CONV_S,
    CONV_C_PLAIN,
    CONV_S_PLAIN,
    CONV_EOF,
    CONV_CLOSE
};

typedef struct conv_line {
    int kind;
    uint8_t *bytes;
    size_t len;
    int lineno;
} conv_line;

typedef struct conv {
    conv_line *lines;
    size_t n;
    size_t pos;        /* next line to consume */
    uint8_t *written;  /* client bytes since the last compared C line */
    size_t written_len, written_cap;
    size_t chunk;      /* feed S lines in chunks of this size (0 = whole) */
    char failure[512]; /* first mismatch, "" when none */
    const char *name;
} conv;

/* Load a .conv file; aborts the test on I/O errors. */
void conv_load(conv *cv, const char *path);
void conv_free(conv *cv);
/* Advance to the k-th "@ connect" (0-based) and consume it. */
void conv_seek_connection(conv *cv, int k);
/* The scripted transport for ffb__conn_set_transport(conn, &conv_transport,
   cv). */
extern const ffb__transport conv_transport;
/* Path of a data file under tests/data (FFB_TEST_DATA or the source dir). */
const char *conv_data_path(const char *name, char *buf, size_t size);
/* Parse a hex string (upper or lower case) into out. Returns length. */
size_t conv_unhex(const char *hex, uint8_t *out, size_t size);

/* The SRP private key of every recording (tests/data/fb5/README.md). */
#define CONV_FIXED_A                                                           \
    "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D4393"

/* The options of the recording client: database "fixtures" on host
   "recorded", SYSDBA/masterkey, UTF8, plugins Srp256,Srp, its identity
   (alice@client1, process 4242 "fixture-client"). Callers change what
   their recording did differently. */
void conv_options(ffb_conn_options *o);
/* Replay `cv` on `conn`: the scripted transport and the recordings' fixed
   SRP key (a test-only entry point, not an option). */
void conv_use(ffb_conn *conn, conv *cv);

#endif
