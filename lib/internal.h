/*
 * Declarations shared across lib/. Not installed.
 */
#ifndef FFB_LIB_INTERNAL_H
#define FFB_LIB_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "include/fastfb.h"
#include "lib/auth.h"
#include "proto/proto.h"
#include "proto/sql.h"

struct ffb__cipher;
struct ffb__evreq;
typedef struct ffb__evreq ffb__evreq;
struct ffb__zstream;

/* ---- allocation --------------------------------------------------------- */

void *ffb__malloc(const ffb_allocator *a, size_t size);
void *ffb__realloc(const ffb_allocator *a, void *p, size_t size);
void ffb__free(const ffb_allocator *a, void *p);
/* Copy an output struct into the caller's of `size` bytes - its own idea
   of the struct: a prefix of ours, or ours followed by zeros. */
int ffb__give(void *out, size_t size, const void *full, size_t full_size);
/* Copy of a NUL-terminated string (NULL stays NULL). */
char *ffb__strdup(const ffb_allocator *a, const char *s);
/* Release the struct of an application object (`kind`: "statement", ...);
   builds without NDEBUG keep it a while so that misuse is recognised. */
void ffb__obj_release(const ffb_allocator *a, void *p, const char *kind);
/* Abort with a message naming `call` when p is an object released by
   ffb__obj_release (builds without NDEBUG; nothing otherwise). */
void ffb__obj_check(const void *p, const char *call);

/* ---- errors ------------------------------------------------------------- */

#define FFB__ERR_MAX_CODES 24
#define FFB__ERR_MAX_ARGS 48
#define FFB__ERR_POOL 2048
#define FFB__ERR_MESSAGE 2048

struct ffb_error {
    int code;
    size_t ncodes;
    uint32_t codes[FFB__ERR_MAX_CODES];
    uint8_t warning[FFB__ERR_MAX_CODES];  /* isc_arg_warning group */
    uint8_t arg_first[FFB__ERR_MAX_CODES]; /* index into args */
    uint8_t arg_count[FFB__ERR_MAX_CODES];
    size_t nargs;
    /* Offsets into pool, not pointers: the struct is copied by value
       (start errors, per-result errors, batch rows), and a copy's
       arguments must stay valid when the original is freed. */
    uint16_t arg_off[FFB__ERR_MAX_ARGS];
    size_t pool_len;
    char pool[FFB__ERR_POOL];
    char sqlstate[6];
    int sqlcode;
    char message[FFB__ERR_MESSAGE];
};

void ffb__error_clear(ffb_error *err);
/* A library-side error: code plus a printf-formatted message. Returns
   code. */
int ffb__error_set(ffb_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A server status vector. `prefix` (may be NULL) becomes the first line of
   the message. Returns code. */
int ffb__error_from_status(ffb_error *err, int code, const ffbp_status *st,
                           const char *prefix);
/* 1 when the status vector reports an error (first gds code non-zero). */
int ffb__status_is_error(const ffbp_status *st);
uint32_t ffb__status_first_gds(const ffbp_status *st);

/* ---- transports (lib/net.c, lib/run.c) -------------------------------------- */

/*
 * A transport moves bytes between the byte pump (ffb_conn_output/
 * output_done/feed/feed_eof) and a peer. The blocking loop (lib/run.c)
 * uses the connection's table: the socket driver below by default; tests
 * install scripted ones (recorded conversations, fault injection). Each
 * wait is bounded by `timeout_ms` (-1: no bound) and returns 0 when it
 * ran out: the loop then tells the engine the time (ffb_conn_expire).
 */
typedef struct ffb__transport {
    /* Open the stream to conn->host/port. */
    int (*connect)(ffb_conn *conn, void *data, int timeout_ms);
    /* Write ffb_conn_output() (all of it, or as much as the time allows),
       reporting progress with ffb_conn_output_done(); may feed bytes read
       meanwhile. */
    int (*flush)(ffb_conn *conn, void *data, int timeout_ms);
    /* Wait for bytes and feed them (ffb_conn_feed, ffb_conn_feed_eof). */
    int (*read)(ffb_conn *conn, void *data, int timeout_ms);
    void (*close)(ffb_conn *conn, void *data);
    /* Optional (NULL: none). Make the current or next wait of flush/read
       return 0 at once; called from ANY thread (ffb_conn_cancel), so it
       may only touch what is safe to share: it never runs concurrently
       with `release`. */
    void (*wake)(ffb_conn *conn, void *data);
    /* Optional: the connection is being freed (after close). */
    void (*release)(ffb_conn *conn, void *data);
} ffb__transport;

typedef struct ffb__net {
    int fd;
    short revents; /* of the last poll */
    int wake_rd, wake_wr; /* the wake pipe: made by the first connect,
                             kept until the connection is freed (another
                             thread may write to it at any time) */
} ffb__net;

extern const ffb__transport ffb__net_transport;
/* OS identity: user name, host name (lower case), process id and name. */
void ffb__os_identity(char *user, size_t user_size, char *host,
                      size_t host_size, int *pid, char *name,
                      size_t name_size);

void ffb__conn_set_transport(ffb_conn *conn, const ffb__transport *t,
                             void *data);
/* Wake the transport's wait (any thread; lib/run.c). */
void ffb__io_wake(ffb_conn *conn);
/* The connection is freed: the transport lets go of what it kept. */
void ffb__io_release(ffb_conn *conn);
/* Tests: a fixed SRP private key (big-endian bytes, at most 128), so that
   recorded conversations replay byte for byte. Never in production: it
   removes the handshake's secrecy; no public option can set it. */
int ffb__conn_set_test_srp_key(ffb_conn *conn, const uint8_t *a, size_t len);
/* Tests: the clock the engine reads (NULL: CLOCK_MONOTONIC, as
   ffb_now_ms()). */
void ffb__conn_set_clock(ffb_conn *conn, int64_t (*clock)(void *data),
                         void *data);
int64_t ffb__now(const ffb_conn *conn);

/* The blocking loop (lib/run.c): the only code that waits. */
typedef int (*ffb__until_fn)(ffb_conn *conn, const void *arg);
/* Flush, write, read and parse until until(conn, arg) holds (0), or the
   connection fails (its code). FFB_E_STATE on external I/O. */
int ffb__run(ffb_conn *conn, ffb__until_fn until, const void *arg);
/* ffb__run until the next packet from the server was handled. */
int ffb__run_step(ffb_conn *conn);
/* ffb__run until *done is non-zero. */
int ffb__wait(ffb_conn *conn, const int *done);

/* Blocking I/O: hand everything staged and written to the transport now
   (read-ahead); nothing on external I/O. */
int ffb__write_out(ffb_conn *conn);
int ffb__io_connect(ffb_conn *conn);
void ffb__io_close(ffb_conn *conn);

/* ---- pending replies ---------------------------------------------------- */

struct ffb__pending;

/*
 * A handler for the answer(s) to one request. It gets each decoded packet
 * owed to the request and returns 0 when the request is complete, 1 when
 * more packets belong to it (a fetch's rows, op_sql_response before the
 * op_response of op_execute2), or a negative FFB_E_* code when the answer
 * is wrong for the request (fatal codes break the connection).
 */
typedef int (*ffb__reply_fn)(ffb_conn *conn, const ffbp_packet *pkt,
                             struct ffb__pending *p);

/* Where a blocking call waits: the last request of its write completes
   it; every request of the write records the first failure in it. */
typedef struct ffb__sync {
    int done;
    int rc;
    int has_rows;       /* rows: this execution's own row count */
    int64_t rows;
    int own_err;        /* errors go to `err` (allocated on demand), not to
                           conn->err: pipelined results carry their own */
    ffb_error *err;
} ffb__sync;

typedef struct ffb__pending {
    int32_t op;            /* the request's op code */
    ffb__reply_fn on_reply;
    void *ctx;             /* ffb_stmt, ffb_tx, ffb__simple, ... */
    uint32_t gen;          /* the object's generation when queued */
    int deferred;          /* the server holds the answer back (lazy) */
    ffb__sync *sync;       /* may be NULL: nobody waits on it */
    int completes;         /* the last request of the write: sets done */
    int ends_exec;         /* the last answer of a statement's execution */
    ffb_tx *tx;            /* the transaction the request runs in: when its
                              start failed, the request's error is reported
                              as FFB_E_ABORTED */
    /* For answers that carry messages (op_fetch_response,
       op_sql_response): the message format and scratch arrays. */
    const ffbp_item *items;
    size_t nitems;
    uint32_t *off, *len;
    uint32_t limit;        /* rows the request asked for (op_fetch: its
                              count; op_execute2: 1): more is a protocol
                              error */
    uint32_t got;          /* rows received for it */
} ffb__pending;

/* ---- held requests (lib/engine.c) ------------------------------------------ */

/*
 * A request that cannot be encoded yet: a handle it names is still owed
 * (a transaction started behind other allocations, a statement whose
 * prepare has not been answered). It waits in the connection's hold queue
 * and is encoded by the engine after the reply that it waited for, in the
 * order the requests were made: while one waits, every later request of
 * these kinds waits behind it. No call waits for it.
 */
#define FFB__LATER 1 /* "not yet": returned by a send that must wait */

typedef struct ffb__held ffb__held;
struct ffb__held {
    ffb__held *next;
    /* Encode it: 0 when queued (or failed, reported through its sync),
       FFB__LATER to stay held. */
    int (*send)(ffb_conn *conn, ffb__held *h);
    /* Release it unsent; rc says why (the connection broke or closed). */
    void (*drop)(ffb_conn *conn, ffb__held *h, int rc);
    ffb__sync *sync;
    ffb_stmt *stmt;      /* referenced while held */
    ffb_tx *tx;          /* referenced while held */
    int op;
    int prepared;        /* EXEC: the input below was built when queued */
    ffbp_writer blr, msg;
    char *sql;           /* PREPARE: the text */
    size_t sql_len;
    ffbp_writer text;    /* SIMPLE: items or SQL */
    void *obj;           /* BLOB: the blob (referenced while held) */
    void (*call)(ffb_conn *conn, void *obj);      /* a held call */
    void (*call_drop)(ffb_conn *conn, void *obj);
    int completes;       /* its reply completes the sync */
    uint32_t gen;        /* the object's generation when queued */
    uint32_t out_size;   /* SIMPLE: answer buffer size asked for */
    struct ffb__simple *simple;
};

/* A held request of the SQL layer was sent (rc 0) or failed (rc < 0):
   a failure goes to its sync - as FFB_E_ABORTED when its transaction's
   start failed - and the statement and transaction it held are released
   (lib/tx.c). */
void ffb__held_done(ffb_conn *conn, ffb__held *h, int rc);
/* Its drop function: dropped unsent, the sync hears `rc`. */
void ffb__held_drop(ffb_conn *conn, ffb__held *h, int rc);
/* Hold `h` (its payload filled in) for the SQL layer: its send and drop
   functions, the sync it completes, and references on the statement and
   the transaction it names (either may be NULL), which ffb__held_done
   releases. */
void ffb__held_push(ffb_conn *conn, ffb__held *h,
                    int (*send)(ffb_conn *, ffb__held *),
                    void (*drop)(ffb_conn *, ffb__held *, int),
                    ffb_stmt *stmt, ffb_tx *tx, ffb__sync *sync);
/* The rest of a blocking call whose queue twin returned `queued`: its
   error (< 0), 0 when nothing was queued (> 0: the answer was there), or
   the status of `sync` once the blocking loop has run until it completed
   (lib/run.c). */
int ffb__await(ffb_conn *conn, int queued, ffb__sync *sync);
/* Hold a request that runs `send(conn, obj)` - a free of an object whose
   requests are held, say - once everything queued before it has gone;
   `drop(conn, obj)` when it never can. 0 or FFB_E_NOMEM (the connection
   is then broken). */
int ffb__engine_hold_call(ffb_conn *conn, void (*send)(ffb_conn *, void *),
                          void (*drop)(ffb_conn *, void *), void *obj);
/* Hold `h` (allocated with ffb__malloc; the engine frees it). */
void ffb__engine_hold(ffb_conn *conn, ffb__held *h);
/* Send held requests whose answers they waited for came. */
void ffb__engine_release(ffb_conn *conn);
/* Drop every held request (teardown, close, broken). */
void ffb__engine_drop_held(ffb_conn *conn, int rc);
/* Values given without a describe as an input BLR and message
   (lib/values.c). */
int ffb__values_input(ffb_conn *conn, const ffb_value *v, size_t n,
                      ffbp_writer *blr, ffbp_writer *msg);
/* Complete a sync with a library-side failure `rc` (conn->err holds the
   error): its own error object gets a copy. */
void ffb__sync_fail(ffb_conn *conn, ffb__sync *sync, int rc);

/* ---- the connection ----------------------------------------------------- */

enum ffb__state {
    FFB__ST_NEW = 0,  /* created, no socket */
    FFB__ST_HANDSHAKE, /* op_connect sent, authenticating/attaching */
    FFB__ST_READY,    /* attached */
    FFB__ST_CLOSED,   /* detached or never connected after a close */
    FFB__ST_BROKEN    /* fatal error */
};

/* Handshake sub-states (see lib/handshake.c). */
enum ffb__hs {
    FFB__HS_NONE = 0,
    FFB__HS_ACCEPT,     /* waiting for the answer to op_connect */
    FFB__HS_AUTH,       /* waiting for the answer to op_cont_auth */
    FFB__HS_CRYPT,      /* waiting for the answer to op_crypt */
    FFB__HS_ATTACH,     /* waiting for the answer to op_attach / op_create */
    FFB__HS_DONE,
    FFB__HS_FAILED
};

#define FFB__MAX_PLUGINS 8
#define FFB__PLUGIN_NAME 32

struct ffb_conn {
    ffb_allocator alloc_copy;
    const ffb_allocator *alloc; /* NULL = libc */

    /* Options (owned copies). */
    char *host, *port, *database, *user, *password, *role, *charset;
    char *os_user, *client_host, *process_name;
    int process_id;
    char plugins[FFB__MAX_PLUGINS][FFB__PLUGIN_NAME];
    size_t nplugins;
    char plugin_list[FFB__MAX_PLUGINS * (FFB__PLUGIN_NAME + 1)];
    char ciphers[4][FFB__PLUGIN_NAME];
    size_t nciphers;
    int wire_crypt;
    int compress;
    int io;
    int connect_timeout_ms;
    int io_timeout_ms;
    int dialect;
    int pipeline_crypt;
    int min_protocol;
    int cache_size;
    uint32_t inline_size;
    size_t inline_budget;
    int fetch_size;
    uint8_t test_a[128];
    size_t test_a_len;

    /* Connection state. */
    int state;
    ffb__net net;
    const ffb__transport *tp; /* never NULL: the socket driver by default */
    void *tp_data;
    void *io_data; /* the external I/O driver's (ffb_conn_set_io_data) */
    int64_t (*clock)(void *data); /* NULL: CLOCK_MONOTONIC */
    /* What the engine hands to the layers above it (set by lib/conn.c):
       it never calls them by name. */
    void (*on_results)(ffb_conn *conn);      /* answers completed results */
    int (*on_inline_blob)(ffb_conn *conn, const ffbp_inline_blob *ib);
    int (*on_handshake)(ffb_conn *conn, const ffbp_packet *pkt);
    void (*on_hs_wipe)(ffb_conn *conn); /* the handshake ended: secrets */
    int (*on_crypt_key)(ffb_conn *conn, const ffbp_crypt_cb *cc);
    int (*on_spares)(ffb_conn *conn, size_t want); /* lib/stmt.c */
    void *clock_data;
    int64_t hs_deadline;  /* the connect must end by then (-1: no limit) */
    int64_t io_mark;      /* last progress of the wire (io_timeout_ms) */
    int io_moved;         /* progress since io_mark was taken */
    int hs_flushed;       /* the handshake's first packet was flushed */
    int io_open;
    int protocol;     /* negotiated protocol number (13..19) */
    int ptype;
    int lazy;
    int compressed;
    uint16_t db_handle;
    char auth_used[FFB__PLUGIN_NAME];
    char crypt_used[FFB__PLUGIN_NAME];
    int detaching;    /* op_detach/op_drop sent: EOF afterwards is fine */
    /* Events (lib/events.c): the connection's events object, its requests
       still owed, and what it hears when the attachment ends (destroy:
       the connection is freed). */
    struct ffb_events *events;
    struct ffb__evreq *evreqs;
    int aux_requested; /* this attachment sent op_connect_request */
    int aux_fd;        /* its aux socket (blocking I/O; -1: none): it
                          lives as long as the attachment */
    void (*on_attach_end)(ffb_conn *conn, int destroy);
    int fatal_code;   /* the fatal code that broke the connection */
    uint32_t cancel_q; /* op_cancel kinds asked, not written yet; shared
                          between threads: __atomic only (lib/engine.c) */
    int bad_options;  /* ffb_conn_new refused the options: err says why */

    /* Handshake. */
    int hs;
    int hs_create;
    int service;      /* attached to the service manager (lib/service.c) */
    struct ffb__svc_state *svc; /* its state, NULL until used */
    ffb_create_options hs_copts;
    char login[256];  /* normalised login */
    size_t login_len;
    char cur_plugin[FFB__PLUGIN_NAME];
    ffb__srp srp;
    int srp_active;
    uint8_t session_key[20];
    int have_key;
    int crypt_pipelined;  /* op_crypt went out with the proof */
    char crypt_chosen[FFB__PLUGIN_NAME];
    int hs_rounds;
    int hs_rc;            /* final result of the handshake */
    int hs_finished;      /* DONE or FAILED */
    ffb__sync *hs_sync;   /* ffb_conn_queue_connect()'s result */
    int hs_dpb_auth;      /* put auth data into the DPB (flow B/C) */
    int hs_dpb_legacy;    /* protocol < 13: isc_dpb_password_enc */
    int hs_final_sent;    /* the current plugin's last step (proof, hash)
                             was sent: its success authenticates */
    uint8_t hs_dpb_data[512];
    size_t hs_dpb_data_len;
    int (*crypt_key_cb)(void *, const uint8_t *, size_t, uint8_t *, size_t);
    void *crypt_key_data;  /* ffb_conn_options.crypt_key_cb and its data */
    int crypt_key_asked;   /* op_crypt_key_callback requests this connect */
    uint8_t hs_keys[2048]; /* key lists seen during the handshake */
    size_t hs_keys_len;

    /* Transforms. */
    struct ffb__zstream *z;
    struct ffb__cipher *tx_cipher, *rx_cipher;
    struct ffb__cipher *tx_next;  /* installed after the next flush */
    struct ffb__cipher *rx_next;  /* installed at the next stream boundary */
    int rx_bytewise;      /* a receive cipher starts at a boundary not yet
                             seen: transform no further than it */
    uint32_t rx_tail;     /* last 4 wire bytes given to inflate */

    /* Buffers. */
    ffbp_writer stage;    /* plaintext packets not yet flushed */
    ffbp_writer out;      /* wire bytes to write */
    ffbp_writer wire_in;  /* received, not yet transformed (from wire_pos) */
    size_t wire_pos;
    size_t rx_done_upto;  /* bytes at wire_pos already decrypted */
    int z_more;           /* inflate stopped at its budget: more output */
    size_t in_need;       /* the incomplete packet at in_pos is at least
                             this long (from the last decode) */
    int in_stalled;       /* ... and no byte arrived since that decode */
    uint64_t parse_attempts; /* packet decodes tried (tests check that
                                received bytes are handled in linear time) */
    size_t max_packet;    /* largest packet accepted (max_packet_size) */
    ffbp_writer in;       /* plaintext received, not yet parsed */
    size_t in_pos;
    int stage_expects;    /* stage holds a packet that needs an answer */
    int stage_direct;     /* ... queued by a call, not while answers were
                             handled (a follow-up) */
    int in_dispatch;      /* answers are being handled */
    int out_expects;      /* out holds such bytes */
    int out_alone;        /* out ends with op_cancel: nothing staged joins
                             it before it is written (its own write) */
    int awaiting;         /* flushed, answer not seen yet */
    int eof;

    /* Requests not encoded yet, in order (lib/engine.c). */
    ffb__held *held_head, *held_tail;
    int releasing;

    /* Replies owed to us, in order. */
    ffb__pending *fifo;
    size_t fifo_cap, fifo_head, fifo_len;
    size_t fifo_unsent;    /* entries at the tail not flushed yet */

    /* SQL objects. */
    ffb_tx *txs;
    ffb_stmt *stmts;
    struct ffb_blob *blobs;          /* lib/blob.c */
    struct ffb_batch *batches;       /* lib/batch.c */
    struct ffb__array_op *array_ops; /* slices in flight (lib/array.c) */
    struct ffb__array_cached *arrays; /* array descriptors looked up */
    struct ffb__inline *inl;         /* inline blob cache */
    size_t inl_bytes;
    int write_blobs_open;  /* created blobs not yet closed on the server */
    struct ffb__cache_entry *cache;  /* lib/cache.c */
    size_t cache_n;
    struct ffb__memo *memo;
    unsigned reset_gen;   /* resets queued (lib/reset.c) */
    size_t memo_n;
    uint64_t cache_tick;
    struct ffb_formats *formats; /* shared format memory (lib/formats.c) */
    uint64_t formats_ctx;  /* what shapes its describes, hashed */
    uint16_t spare[16];    /* statement handles kept for reuse */
    size_t nspare;
    size_t spares_owed;    /* allocations made ahead, not answered yet */
    int hs_spares;         /* the connect waits for the allocations that
                              rode with op_attach (lib/handshake.c) */
    struct ffb_result *rq_head, *rq_tail;     /* queued, in order */
    struct ffb_result *done_head, *done_tail; /* completed, not taken */
    struct ffb_result *delivered;             /* freed at the next call */
    int in_callback;
    int last_kind;         /* what 0xFFFF names on the server: */
    void *last_obj;        /* FFB__LAST_TX / _STMT / _OTHER and the object */

    ffb_stats stats;
    ffb_error err;
    ffbp_status_arg status_args[64];
};

/* ---- transactions and statements (lib/tx.c, lib/stmt.c) ------------------- */

enum ffb__tx_state {
    FFB__TX_PENDING = 1, /* op_transaction queued, handle not known yet */
    FFB__TX_ACTIVE,
    FFB__TX_ENDED,       /* committed / rolled back */
    FFB__TX_FAILED       /* the server refused to start it */
};

struct ffb_tx {
    ffb_conn *conn;
    int state;
    uint16_t handle;
    int answered;        /* the start's answer was read */
    int refs;            /* user + replies owed */
    int freed;           /* ffb_tx_free() called */
    ffb_tx *next;        /* conn->txs list */
    ffb_error *start_err; /* why the start failed */
    unsigned reset_gen;  /* the reset that rolled it back (lib/reset.c) */
    int prepared;        /* two-phase: prepared, or reconnected in limbo */
    int no_last;         /* 0xFFFF may not name it: had its start failed,
                            0xFFFF would name another live transaction
                            (lib/twopc.c) */
    int end_queued;      /* a commit or rollback is on its way: its cursors
                            get no read-ahead (their answers would come
                            after the end, errors) */
};

typedef struct ffb__col {
    int sqltype, nullable, subtype, scale, length, charset;
    const char *field, *relation, *owner, *alias, *relation_alias;
    char *strings;      /* owns the five strings above */
} ffb__col;

typedef struct ffb__meta {
    size_t n;
    ffb__col *cols;
    ffbp_item *items;   /* wire items (what we ask for / send) */
    uint8_t *blr;       /* BLR of items */
    size_t blr_len;
} ffb__meta;

/* A bound parameter: its wire item and value bytes (wire format, without
   padding). */
typedef struct ffb__param {
    int set;
    int is_null;
    ffbp_item item;
    uint8_t fixed[16];
    uint8_t *data;      /* VARYING/TEXT payload (owned) */
    size_t len;
} ffb__param;

/* Append the value of a bound, non-NULL parameter to a message (lib/stmt.c). */
void ffb__put_param(ffbp_writer *w, const ffb__param *pa);

typedef struct ffb__row {
    size_t pos, len;    /* message bytes in rows */
    size_t offs;        /* index of its first entry in row_off/row_len */
} ffb__row;

struct ffb_stmt {
    ffb_conn *conn;
    int refs;
    int freed;
    uint32_t gen;        /* bumped when a cursor is closed or re-opened */
    ffb_stmt *next;      /* conn->stmts list */
    int exec_inflight;   /* a cursor or singleton execution's last answer is
                            not read yet (its rows would be overwritten) */
    int exec_held;       /* executions waiting in the hold queue */
    int prepare_held;    /* prepares waiting in the hold queue */
    int prepare_pending; /* a prepare was sent, its last answer not read */

    int has_handle;      /* the server answered the allocate */
    int alloc_queued;    /* allocate sent, answer not read yet */
    uint16_t handle;
    int prepared;
    int stmt_type;
    int stmt_flags;
    int prepare_flags;   /* p_resp_object of the prepare (lazy port) */
    ffb__meta in, out;
    ffb__param *params;
    ffbp_sqlinfo desc;   /* describe being read (prepare) */
    int describe_incomplete;
    int desc_started;    /* the first describe answer sized the arrays */
    struct ffb__strblock *desc_strings; /* names of earlier answers of a
                            continued describe (the views would point into
                            a receive buffer that is reused) */
    int desc_truncated;  /* an answer of this describe was truncated */
    uint64_t desc_asked; /* last continuation asked: side << 32 | start;
                            each must ask for more than the one before */
    uint32_t prep_gen;   /* bumped by each prepare: an older prepare's
                            answer is dropped */

    /* cursor */
    int cursor_open;     /* on the server (until close/commit) */
    int eof;             /* status 100 seen */
    int ended_early;     /* its transaction ended before its last row came:
                            a fetch past the buffered rows fails */
    ffb_tx *cursor_tx;
    ffb_tx *auto_tx;     /* auto-commit (tx NULL): the transaction of the
                            open cursor, committed when it ends */
    unsigned fetches_inflight;
    uint16_t fetch_count;   /* rows asked per op_fetch */
    unsigned fetch_depth;   /* op_fetch sent per refill */
    uint64_t rows_seen;
    int fetch_error;     /* an error ended the row stream */
    ffb_error *row_err;
    ffbp_writer rows;    /* message bytes of buffered rows */
    ffb__row *rowv;      /* buffered rows */
    size_t nrows, rows_cap, cur; /* cur = 1 + index of the current row */
    uint32_t *row_off, *row_len; /* per row x column */
    size_t roff_cap;
    uint32_t *scratch_off, *scratch_len; /* decode scratch, n = out.n */
    int singleton;       /* execute2 row waiting for fetch */
    int64_t records[4];  /* select, insert, update, delete; -1 unknown */
    char *textbuf;       /* formatted getter values */
    size_t textbuf_cap;
    char *sql;           /* the text last prepared */
    size_t sql_len;
    struct ffb__cache_entry *cached; /* owned by the statement cache */
    uint32_t inline_size; /* sent in op_execute (protocol 19) */
    int fetch_size;      /* first fetch, 0 = automatic */
    int lazy;            /* prepared from remembered metadata: the
                            describe in the answer is checked */
    int meta_changed;    /* ... and it differed: 1 inputs, 2 outputs */
    struct ffb__retired *retired; /* output formats replaced while queued
                            requests still decode rows with them */
    int lazy_truncated;  /* a lazy prepare's describe did not fit its
                            answer: the statement is prepared again */
    ffb_error *prepare_err; /* a lazy prepare failed */
    int share;           /* from ffb_conn_prepare(): its describe goes to
                            the shared format memory */
    uint32_t timeout_ms; /* op_execute's timeout (ffb_stmt_set_timeout) */
    char *plan;          /* the last plan read (ffb_stmt_plan) */
    int plan_kind;       /* 1 legacy, 2 explained */
    uint32_t plan_gen;   /* prep_gen it belongs to */
    /* scrollable cursors (lib/scroll.c, protocol 18) */
    int scroll_want;     /* the next execution opens a scrollable cursor */
    int scroll_open;     /* the open cursor is scrollable */
    int scroll_blr_sent; /* its first op_fetch_scroll carried the BLR */
    int scroll_dir;      /* FFBP_FETCH_NEXT or _PRIOR: where ffb_stmt_fetch
                            goes when the buffered rows run out */
};

/* Resolve the transaction field of a request: the handle, or 0xFFFF for a
   lazy start that is still the last object; FFB__LATER when neither holds
   yet (the start's answer is owed); an error for a failed or ended one. */
int ffb__tx_handle(ffb_tx *tx, uint16_t *out);
void ffb__tx_unref(ffb_tx *tx);
void ffb__stmt_unref(ffb_stmt *stmt);
/* Queue one fetch of `count` rows (lib/stmt.c): op_fetch on a forward-only
   cursor, op_fetch_scroll(fetch_op, pos) on a scrollable one (its buffered
   rows are dropped: the server's position is where the answer starts).
   `sync` (may be NULL) completes with it when `completes`. */
int ffb__stmt_queue_fetch_one(ffb_stmt *stmt, int fetch_op, int32_t pos,
                              uint16_t count, ffb__sync *sync, int completes);
/* Commit/rollback closed the cursors of tx. */
void ffb__stmts_tx_ended(ffb_conn *conn, ffb_tx *tx);
/* Connection teardown: release objects still held (by replies owed or by
   the cache). */
void ffb__stmts_destroy_all(ffb_conn *conn);
void ffb__batches_destroy_all(ffb_conn *conn);
void ffb__txs_destroy_all(ffb_conn *conn);
/* Queue a request whose answer nobody waits for (deferred free/close/
   rollback): errors are ignored. */
int ffb__queue_fire_and_forget(ffb_conn *conn, ffbp_writer *w, int32_t op,
                               int deferred);
/* Record an error answer in sync (first failure wins) and conn->err. */
void ffb__sync_fail_status(ffb_conn *conn, ffb__sync *sync, int code,
                           const ffbp_status *st, const char *prefix);
/* The op_response answering request `p`, or NULL with conn->err saying
   what came instead (FFB_E_PROTO): the prologue of every reply handler
   (lib/engine.c). */
const ffbp_response *ffb__reply_response(ffb_conn *conn,
                                         const ffbp_packet *pkt,
                                         const ffb__pending *p);

enum {
    FFB__LAST_NONE = 0,
    FFB__LAST_TX,
    FFB__LAST_STMT,
    FFB__LAST_BLOB,
    FFB__LAST_OTHER
};

/* ---- blobs (lib/blob.c) -------------------------------------------------------- */

typedef struct ffb__inline {
    struct ffb__inline *next;
    uint16_t tx;
    uint64_t id;
    uint8_t *data;     /* payload, records joined: len bytes, in the same
                          allocation as the entry (cost = sizeof + len) */
    size_t len;
    ffb_blob_info info;
    int in_use;
    size_t cost;
    struct ffb__inline *prev;            /* conn->inl, the other way */
    struct ffb__inline *hnext;           /* same slot of the index */
    struct ffb__inline_index *index;     /* the cache's (lib/blob.c), shared
                                            by all entries */
} ffb__inline;

struct ffb_blob {
    ffb_conn *conn;
    ffb_tx *tx;
    int refs;
    int freed;
    int writing;        /* created (1) or opened for reading (0) */
    struct ffb_blob *next;
    uint16_t handle;
    int has_handle;
    int on_server;      /* the server holds the blob open */
    int create_queued;
    int open_queued;
    int no_last;        /* 0xFFFF may not name it: wait for the handle */
    uint64_t id;
    uint8_t bpb[24];
    size_t bpb_len;
    int stream;
    uint32_t gen;
    ffbp_writer wbuf;   /* data not yet queued (records or raw) */
    int closed;
    ffbp_writer rbuf;   /* data received, not yet read */
    size_t rpos;
    unsigned gets_inflight;
    int eof;
    int end_seen;       /* an op_get_segment answered state 2 (since the
                           open or the last seek): no more data may come */
    int64_t seek_max;   /* the highest position the pending seek's answer
                           may report (-1: not known) */
    int64_t received;   /* bytes received since the open or the last seek */
    int64_t position;   /* bytes handed to the application */
    int have_info;
    int info_pending;   /* an op_info_blob answer is owed */
    ffb_blob_info info;
    int failed;
    ffb_error *err;
    ffb__inline *cached;
};

/* op_inline_blob arrived (where the engine accepts one: docs/blobs.md).
   Checks it against its info; keeps it if it is exact and fits the
   budget. 0, or FFB_E_PROTO (message naming the blob) when the packet
   contradicts itself. */
int ffb__inline_store(ffb_conn *conn, const ffbp_inline_blob *ib);
/* Commit/rollback of the transaction with this handle. */
void ffb__blobs_tx_ended(ffb_conn *conn, ffb_tx *tx);
/* Drop every inline copy not being read (detach: C.3.7). */
void ffb__inline_clear(ffb_conn *conn);
void ffb__blobs_destroy_all(ffb_conn *conn);
void ffb__blob_unref(struct ffb_blob *b);
/* The queue twins' work (what: FFB_OP_BLOB_*): 1 when nothing needed to
   be queued (the answer is there), 0 when `sync` completes later. */
int ffb__blob_queue(struct ffb_blob *b, int what, int whence, int64_t offset,
                    ffb__sync *sync);

/* ---- statement cache (lib/cache.c) ------------------------------------------ */

typedef struct ffb__cache_entry {
    ffb_stmt *stmt;
    int in_use;
    int stale;
    uint64_t tick;
    int64_t idle_since; /* ffb_now_ms() when last given back */
} ffb__cache_entry;

/* Metadata remembered for SQL text whose statement left the cache. */
typedef struct ffb__memo {
    char *sql;
    size_t len;
    int stmt_type, stmt_flags;
    ffb__meta in, out;
    uint16_t fetch_count;
    uint64_t tick;
} ffb__memo;

/* The statement goes back to the cache; 1 if it did (not to be freed). */
int ffb__cache_release(ffb_stmt *stmt);
/* ffb_conn_prepare's first half: a cached statement (FFB__CACHE_HIT), a new
   one prepared from remembered formats without waiting (FFB__CACHE_LAZY),
   or a new one the caller prepares (FFB__CACHE_PREPARE); then
   ffb__cache_add() keeps a new one. */
enum { FFB__CACHE_HIT = 1, FFB__CACHE_LAZY, FFB__CACHE_PREPARE };
int ffb__cache_checkout(ffb_conn *conn, ffb_tx *tx, const char *sql,
                        size_t len, ffb_stmt **out);
void ffb__cache_add(ffb_conn *conn, ffb_stmt *s);
/* DDL ran: drop what the cache holds. */
void ffb__cache_invalidate(ffb_conn *conn);
void ffb__cache_free_all(ffb_conn *conn);
int ffb__meta_copy(ffb_conn *conn, ffb__meta *dst, const ffb__meta *src);
void ffb__meta_free(ffb_conn *conn, ffb__meta *m);
/* The same with an allocator (NULL = libc); the copy returns FFB_E_NOMEM
   and sets no error. */
int ffb__meta_copy_a(const ffb_allocator *a, ffb__meta *dst,
                     const ffb__meta *src);
void ffb__meta_free_a(const ffb_allocator *a, ffb__meta *m);
/* Prepare using remembered metadata; nothing is waited for. */
/* The transaction given to a prepare is usable for it (NULL needs
   protocol 16+); sets conn->err otherwise. */
int ffb__prepare_tx_check(ffb_conn *conn, ffb_tx *tx);
int ffb__stmt_prepare_lazy(ffb_stmt *stmt, ffb_tx *tx, const ffb__memo *m);

/* Shared format memory (lib/formats.c). ffb__formats_attach: the
   connection takes a reference and hashes what shapes its describes.
   ffb__formats_get: a copy of the entry for `sql` in the connection's
   allocator (1), none (0); free it with ffb__memo_free(). ffb__formats_put:
   the describe of a statement just prepared replaces the entry. */
void ffb__formats_attach(ffb_conn *conn, struct ffb_formats *f);
void ffb__formats_detach(ffb_conn *conn);
int ffb__formats_get(ffb_conn *conn, const char *sql, size_t len,
                     ffb__memo *out);
void ffb__formats_put(ffb_conn *conn, const ffb_stmt *stmt);
void ffb__memo_free(ffb_conn *conn, ffb__memo *m);
/* Spare statement handles allocated ahead, up to `want` (lib/stmt.c). */
int ffb__spares_queue(ffb_conn *conn, size_t want);
#define FFB__SPARES_AHEAD 4
/* Queue a prepare (with its describe continuation): `sync` completes when
   the statement is described, or failed. */
int ffb__stmt_queue_prepare(ffb_stmt *stmt, ffb_tx *tx, const char *sql,
                            size_t len, ffb__sync *sync);

/* ---- simple requests (lib/conn.c) --------------------------------------- */

/* A request answered by one op_response (op_exec_immediate2: an
   op_sql_response first): ping, info, execute immediate, detach. `sync`
   completes with it; the answer's data is copied to `data`. It lives on
   a blocking call's stack or in a queued result. */
enum {
    FFB__SIMPLE_PLAIN = 0,
    FFB__SIMPLE_IMMEDIATE,
    FFB__SIMPLE_IMMEDIATE2,
    FFB__SIMPLE_DETACH /* op_detach / op_drop_database */
};
typedef struct ffb__simple {
    ffb__sync *sync;
    int kind;
    int sql_seen;       /* IMMEDIATE2: its op_sql_response came */
    uint16_t object;
    uint8_t *data;
    size_t data_size;
    size_t data_len;
    int allow_drdb; /* treat isc_drdb_completed_with_errs as success */
} ffb__simple;

/* Queue `w` (freed) answered into `s`. */
int ffb__queue_simple(ffb_conn *conn, ffbp_writer *w, int32_t op,
                      ffb__simple *s);
/* Queue a request that names a transaction (tx NULL: 0): op_info_
   transaction (`a` = items, `b` unused) or execute immediate (`a` = the
   SQL, `b`/`c` = input BLR and message, empty without parameters); held
   until the transaction's handle is known. The writers are taken. */
int ffb__queue_simple_tx(ffb_conn *conn, ffb_tx *tx, int32_t op,
                         ffbp_writer *a, ffbp_writer *b, ffbp_writer *c,
                         uint32_t out_size, ffb__simple *s);

/* Execute immediate, with parameters given by value (none: op_exec_
   immediate). */
int ffb__queue_immediate(ffb_conn *conn, ffb_tx *tx, const char *sql,
                         size_t len, const ffb_value *params, size_t n,
                         ffb__simple *s);
/* op_info_transaction into s->data. */
int ffb__tx_queue_info(ffb_tx *tx, const uint8_t *items, size_t items_len,
                       size_t out_size, ffb__simple *s);
/* op_detach (drop 0) or op_drop_database. */
int ffb__queue_release(ffb_conn *conn, int drop, ffb__simple *s);
/* op_ping / op_info_database. */
int ffb__queue_ping(ffb_conn *conn, ffb__simple *s);
int ffb__queue_db_info(ffb_conn *conn, const uint8_t *items, size_t items_len,
                       size_t out_size, ffb__simple *s);

/* ---- pipelined results (lib/pipeline.c) ------------------------------------ */

struct ffb_result {
    ffb_conn *conn;
    int op;              /* FFB_OP_* */
    ffb__sync sync;
    ffb_cb cb;
    void *data;
    ffb_stmt *stmt;      /* referenced while queued */
    ffb_tx *tx;
    int64_t rows;
    ffb__simple simple;  /* the answer of a simple request */
    struct ffb_blob *blob; /* referenced while queued */
    struct ffb_batch *batch; /* referenced while queued */
    /* Run when the result completes, before it is delivered (NULL: none):
       it may correct the status. */
    void (*finish)(ffb_conn *conn, struct ffb_result *res);
    unsigned gen;        /* the finish function's own */
    struct ffb_result *next;
};

/* Create a result record and append it to the queue (not yet linked to
   any request: the caller passes &res->sync to the queue functions). */
struct ffb_result *ffb__result_new(ffb_conn *conn, int op, ffb_cb cb,
                                   void *data);
/* ffb__result_new for a request about to be queued, referencing `stmt`
   and `tx` (may be NULL) while it is; the connection's error cleared. */
struct ffb_result *ffb__result_for(ffb_conn *conn, int op, ffb_cb cb,
                                   void *data, ffb_stmt *stmt, ffb_tx *tx);
/* The queueing call returned rc: a result nobody will complete is
   dropped. Returns rc. */
int ffb__result_queued(ffb_conn *conn, struct ffb_result *r, int rc);
/* Undo ffb__result_new when queueing failed before anything was sent. */
void ffb__result_drop(ffb_conn *conn, struct ffb_result *res);
/* Deliver completed results (callbacks, or the list for next_result). */
void ffb__results_poll(ffb_conn *conn);
void ffb__results_free_all(ffb_conn *conn);
/* The connection is closed or freed with requests pending: held ones are
   dropped, and every result not complete completes with FFB_E_CANCELLED
   (callbacks run, in order). */
void ffb__results_cancel(ffb_conn *conn);
/* The error target of a sync. */
ffb_error *ffb__sync_error(ffb_conn *conn, ffb__sync *sync);

/* The input BLR and message of the statement's bound parameters (BLR
   empty and no message when it has none). */
int ffb__stmt_build_input(ffb_stmt *stmt, ffbp_writer *blr, ffbp_writer *msg);

/* Statement and transaction requests, queued without waiting. */
int ffb__stmt_queue_execute(ffb_stmt *stmt, ffb_tx *tx, ffb__sync *sync);
/* The plan: 1 when it is known already, 0 when `sync` completes. */
int ffb__stmt_queue_plan(ffb_stmt *stmt, int explain, ffb__sync *sync);
/* More rows: 1 when ffb_stmt_fetch() can answer now (nothing queued), 0
   when `sync` completes once rows (or the end) arrive. */
int ffb__stmt_queue_fetch(ffb_stmt *stmt, ffb__sync *sync);
int ffb__tx_queue_end(ffb_tx *tx, int op, ffb__sync *sync);
/* Two-phase commit (lib/tx.c, lib/twopc.c): the first phase, op_prepare2
   with a message of `len` bytes (op_prepare without one); the start of a
   transaction from its encoded request `w` (op_transaction or
   op_reconnect), queued without waiting, as ffb_tx_begin(). */
int ffb__tx_queue_prepare(ffb_tx *tx, const void *msg, size_t len,
                          ffb__sync *sync);
int ffb__tx_start(ffb_conn *conn, const ffbp_writer *w, int32_t op,
                  ffb_tx **out);
/* The same as the step of a multi-step operation that is the head of the
   hold queue: sent now, or FFB__LATER when the handle is not known. */
int ffb__tx_send_end(ffb_tx *tx, int op, ffb__sync *sync);
void ffb__batch_ref(struct ffb_batch *b);
void ffb__batch_unref(struct ffb_batch *b);
/* Queue a batch's execution (lib/batch.c). */
int ffb__batch_queue_execute(struct ffb_batch *b, ffb_tx *tx, ffb__sync *sync);
/* The batch's connection; NULL once the batch is freed. */
ffb_conn *ffb__batch_conn(const struct ffb_batch *b);

/* ---- the halves of the blocking calls (lib/blocking.c) -------------------
 * A "try" half answers FFB_E_AGAIN when the answers it needs are not in:
 * external I/O hands that to the application, the blocking call waits for
 * the condition named beside it and tries again. */

/* ffb_stmt_fetch: 1 a row, 0 the end; waits for ffb__stmt_rows_ready. */
int ffb__stmt_fetch(ffb_stmt *stmt);
int ffb__stmt_rows_ready(ffb_conn *conn, const void *stmt);
/* Close the cursor; while the execution waits in the hold queue,
   FFB_E_AGAIN (wait for ffb__stmt_exec_sent), or with `behind` the close
   is held behind the execution. */
int ffb__stmt_close_cursor(ffb_stmt *stmt, int behind);
int ffb__stmt_exec_sent(ffb_conn *conn, const void *stmt);
/* Scrollable cursors (lib/scroll.c): queue op_fetch_scroll, op_info_cursor
   (the count in sync->rows). */
int ffb__stmt_queue_scroll(ffb_stmt *stmt, int op, int32_t pos,
                           unsigned rows, ffb__sync *sync);
int ffb__stmt_queue_record_count(ffb_stmt *stmt, ffb__sync *sync);
/* Arrays (lib/array.c): op_get_slice / op_put_slice; the descriptor cache;
   one row of the lookup query (ffb__ARRAY_LOOKUP_SQL) into `d`. */
int ffb__array_queue_get(ffb_conn *conn, ffb_tx *tx, const ffb_array_desc *d,
                         const uint8_t id[8], void *buf, size_t size,
                         size_t *out_len, ffb__sync *sync);
int ffb__array_queue_put(ffb_conn *conn, ffb_tx *tx, const ffb_array_desc *d,
                         const void *buf, size_t len, uint8_t id_out[8],
                         ffb__sync *sync);
void ffb__arrays_free_all(ffb_conn *conn);
void ffb__array_cache_clear(ffb_conn *conn);
int ffb__array_cache_find(ffb_conn *conn, const char *relation,
                          const char *field, ffb_array_desc *out);
void ffb__array_cache_add(ffb_conn *conn, const ffb_array_desc *d);
int ffb__array_sqltype(int field_type);
/* The lookup: begin (1 = answered from the cache into `out`, which else
   gets the names), queue (prepare + execution; `sync` completes with the
   execution), finish (the rows into `d`, the statement freed, cached). */
int ffb__array_lookup_begin(ffb_conn *conn, const char *relation,
                            const char *field, ffb_array_desc *out,
                            size_t out_size);
int ffb__array_queue_lookup(ffb_conn *conn, ffb_tx *tx, ffb_array_desc *d,
                            ffb__sync *sync, ffb_stmt **out);
int ffb__array_lookup_finish(ffb_conn *conn, ffb_stmt *s, int rc,
                             ffb_array_desc *d);
const char *ffb__stmt_plan_known(const ffb_stmt *stmt, int explain);
/* The blocking execute's retries: after an execution that ended with *rc,
   done, run again, or prepare again and run (isc_obsolete_metadata once:
   *retried). */
enum { FFB__EXEC_DONE, FFB__EXEC_AGAIN, FFB__EXEC_REPREPARE };
int ffb__stmt_execute_next(ffb_stmt *stmt, int *rc, int *retried);
/* A prepare of the statement's own SQL that keeps the bound parameters
   when their formats stay the same: begin, prepare r->sql, end. */
typedef struct ffb__reprepare {
    ffb__param *params;
    ffb__meta in;
    char *sql;
    size_t sql_len;
} ffb__reprepare;
int ffb__stmt_reprepare_begin(ffb_stmt *stmt, ffb__reprepare *r);
int ffb__stmt_reprepare_end(ffb_stmt *stmt, ffb__reprepare *r, int rc);

/* Blobs: writes stage (the blocking call writes them out), reads and
   read_all wait for the next packet. */
int ffb__blob_write(ffb_blob *b, const void *data, size_t len);
int ffb__blob_read(ffb_blob *b, void *buf, size_t size, size_t *got);
int ffb__blob_read_all(ffb_blob *b, const uint8_t **data, size_t *len);
/* The info: FFB_E_AGAIN until ffb__blob_info_known (asks once itself, with
   `sync`, when nothing asked yet). */
int ffb__blob_info(ffb_blob *b, ffb_blob_info *out, ffb__sync *sync);
int ffb__blob_info_known(ffb_conn *conn, const void *blob);
/* Close or cancel a created blob: queue, then what its answer means. */
int ffb__blob_queue_finish(ffb_blob *b, int op, ffb__sync *sync);
int ffb__blob_finished(ffb_blob *b, int rc, uint8_t id_out[8]);
/* A seek: 1 when served from the inline copy at once. */
int ffb__blob_queue_seek(ffb_blob *b, int whence, int64_t offset,
                         ffb__sync *sync);
int ffb__blob_seek_done(ffb_blob *b, int rc);

/* ffb_conn_next_result: begin (frees the result delivered before), then 1
   a result, 0 none pending, FFB_E_AGAIN until ffb__result_head_done. */
int ffb__next_result_begin(ffb_conn *conn);
int ffb__next_result(ffb_conn *conn, const ffb_result **out);
int ffb__result_head_done(ffb_conn *conn, const void *head);
const void *ffb__result_head(const ffb_conn *conn);

/* Connections (lib/conn.c): the steps of a blocking connect around the
   loop, the detach's ends, and freeing. */
int ffb__connect_check(ffb_conn *conn, int create,
                       const ffb_create_options *copts);
void ffb__connect_begin(ffb_conn *conn);
int ffb__connect_end(ffb_conn *conn, int rc);
int ffb__connect_retry(const ffb_conn *conn, int rc);
/* Stage op_disconnect for the wire (0: there is something to write). */
int ffb__conn_queue_goodbye(ffb_conn *conn);
void ffb__conn_closed(ffb_conn *conn);
void ffb__conn_close_now(ffb_conn *conn);
int ffb__nothing_held(ffb_conn *conn, const void *arg);
int ffb__not_in_callback(ffb_conn *conn, const char *what);
int ffb__conn_free_refused(ffb_conn *conn);
void ffb__conn_destroy(ffb_conn *conn);
size_t ffb__db_info_items(const uint8_t **items);
int ffb__db_info_parse(ffb_conn *conn, const uint8_t *buf, size_t len,
                       ffb_db_info *out);
int ffb__tx_end_check(ffb_tx *tx);
/* ffb_conn_reset (lib/reset.c): roll back every active transaction the
   application has not freed; 1 when there is none, 0 when `sync`
   completes with the last rollback. */
int ffb__tx_needs_rollback(const ffb_tx *tx);
int ffb__queue_reset(ffb_conn *conn, ffb__sync *sync, unsigned gen);
/* A reset whose transactions (tx->reset_gen == gen) are not all rolled
   back: FFB_E_SERVER with a message (0 when they are). */
int ffb__reset_check(ffb_conn *conn, unsigned gen);

/* ---- cancellation and timeouts (lib/cancel.c) ----------------------------- */

/* The SQL that sets the attachment's statement timeout (ms) or idle
   timeout (s, idle 1) into buf: its length, or FFB_E_UNSUPPORTED
   (protocol below 16) / FFB_E_STATE with conn->err set. */
int ffb__timeout_sql(ffb_conn *conn, int idle, uint32_t value, char *buf,
                     size_t size);
/* The FFB_E_* code a server status vector stands for: FFB_E_CANCELLED
   (isc_cancelled), FFB_E_STMT_TIMEOUT (isc_cancelled + a statement
   timeout code), FFB_E_SHUTDOWN (isc_att_shutdown), else `code`
   (lib/error.c). */
int ffb__status_code(const ffbp_status *st, int code);

/* ---- engine (lib/engine.c) ---------------------------------------------- */

/* Queue a packet: `w` holds its bytes. `expects` = the server answers it.
   The packet bytes are appended to the stage. */
int ffb__engine_queue(ffb_conn *conn, const ffbp_writer *w, int expects);
/* Queue an expected reply; returns the entry (valid until the next
   queue call) so the caller can fill in items/sync, or NULL (NOMEM, error
   set). */
ffb__pending *ffb__engine_expect(ffb_conn *conn, int32_t op, ffb__reply_fn fn,
                                 void *ctx);
/* 1 when a request whose answer the server flushes is owed. */
int ffb__engine_owes_flushed(const ffb_conn *conn);
/* ... and was flushed already (not only staged). */
int ffb__engine_owed_sent(const ffb_conn *conn);
/* Move staged packets to the wire buffer (compress, encrypt). */
int ffb__engine_flush(ffb_conn *conn);
/* The same, unless what is staged holds only deferred requests (frees,
   closes) on an attached connection: a write is never spent on those
   alone; they ride with the next request that needs an answer. */
int ffb__engine_flush_needed(ffb_conn *conn);
/* Put a packet the server never answers (op_cancel) on the wire at once:
   compressed and encrypted onto `out`, ahead of what is staged (requests
   still staged keep their order among themselves; no reply is expected).
   Attached connections only. */
int ffb__engine_send_unanswered(ffb_conn *conn, const ffbp_writer *w);
/* Record an op_cancel of `kind` to be written (ANY thread; lock-free):
   0, or FFB_E_AGAIN when 8 wait already (lib/cancelq.h). */
int ffb__engine_cancel_request(ffb_conn *conn, int kind);
/* Write the recorded op_cancels (the connection's own thread): 1 when
   something was put on the wire, 0 when nothing (requests taken while
   the connection is not attached are dropped), or a fatal code. */
int ffb__engine_cancel_take(ffb_conn *conn);
/* Give received wire bytes to the engine. */
int ffb__engine_feed(ffb_conn *conn, const uint8_t *p, size_t len);
/* Parse what was received but not parsed yet (a result callback ran a
   blocking call while packets behind it waited): 1 when something was
   processed, 0 when nothing could be, or a fatal code. */
int ffb__engine_drain(ffb_conn *conn);
/* Mark the connection broken with `code` if it is fatal-class (and it is
   not broken already); returns code. */
int ffb__engine_fail(ffb_conn *conn, int code);
/* Mark it broken with `code`, whatever its class (a timeout); returns
   code. */
int ffb__engine_break(ffb_conn *conn, int code);
/* What every call returns once the connection is broken: the fatal code
   that broke it (its error object keeps the cause). */
static inline int ffb__broken_code(const ffb_conn *conn) {
    return conn->fatal_code ? conn->fatal_code : FFB_E_FATAL;
}
/* Clear the connection's error at the start of a call - unless the
   connection is broken: then the error says why, for every later call. */
static inline void ffb__conn_error_clear(ffb_conn *conn) {
    if (conn->state != FFB__ST_BROKEN && !conn->bad_options)
        ffb__error_clear(&conn->err);
}
/* A fatal-class error (FFB_E_NOMEM, ...): set conn->err and break the
   connection; returns code. */
int ffb__fatal(ffb_conn *conn, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Release transform state and buffers (not the options). */
void ffb__engine_reset(ffb_conn *conn);
/* Set up compression after the accept. */
int ffb__engine_start_compression(ffb_conn *conn);

/* FFB_E_STATE (with a message) when `conn` uses external I/O: blocking
   calls check it before queueing anything. */
/* 0 when attached; else FFB_E_STATE saying why (broken or not attached). */
int ffb__need_ready(ffb_conn *conn);
/* Queue `w` (`expects`: a reply is owed), free it; a failure breaks the
   connection and is returned. */
int ffb__queue_free(ffb_conn *conn, ffbp_writer *w, int expects);
int ffb__need_blocking(ffb_conn *conn);
/* The start of a blocking call: FFB_E_STATE on external I/O, else the
   connection's error is cleared (unless it is broken). */
int ffb__blocking(ffb_conn *conn);

/* ---- services (lib/service.c) ------------------------------------------- */

struct ffb__svc_state;
enum {
    FFB__SVC_STATS = 1,
    FFB__SVC_LOG,
    FFB__SVC_VALIDATE,
    FFB__SVC_REPAIR,
    FFB__SVC_PROPERTIES,
    FFB__SVC_BACKUP,
    FFB__SVC_RESTORE
};
/* A built-in action and its arguments. */
typedef struct ffb__svc_req {
    int kind;
    const char *db, *target;
    unsigned options;
    int replace;
    const ffb_svc_properties *props;
    ffb_svc_line_cb on_line;
    ffb_svc_data_cb on_data;
    ffb_svc_input_cb on_input;
    void *data;
} ffb__svc_req;
int ffb__svc_queue_server_info(ffb_conn *conn, ffb_svc_info *out,
                               size_t out_size, ffb__sync *sync);
int ffb__svc_queue_run(ffb_conn *conn, const uint8_t *spb, size_t len,
                       const ffb_svc_io *io, ffb__sync *sync);
int ffb__svc_queue_builtin(ffb_conn *conn, const ffb__svc_req *q,
                           ffb__sync *sync);
/* Free the service state (a new connect, the connection's end). */
void ffb__svc_reset(ffb_conn *conn);

/* ---- handshake (lib/handshake.c) ---------------------------------------- */

/* `create`: 0 attach, 1 create the database, FFB__HS_SERVICE attach to
   the service manager (lib/service.c). */
#define FFB__HS_SERVICE 2
#define FFB__SERVICE_NAME "service_mgr"
int ffb__hs_start(ffb_conn *conn, int create, const ffb_create_options *copts);
/* The handshake ended with `rc` (lib/engine.c): completes conn->hs_sync. */
void ffb__hs_complete(ffb_conn *conn, int rc);
/* The handshake ended (failed below it, in the engine): wipe its secrets. */
void ffb__hs_wipe(ffb_conn *conn);
/* Answer op_crypt_key_callback (lib/dbcrypt.c; the engine's on_crypt_key
   after the handshake): 0, or the failure (the handshake or the engine
   breaks the connection with it). */
int ffb__hs_crypt_key(ffb_conn *conn, const ffbp_crypt_cb *cc);
/* Handle a packet received during the handshake. */
int ffb__hs_packet(ffb_conn *conn, const ffbp_packet *pkt);

/* ---- distributed transactions (lib/twopc.c) ---------------------------- */

#define FFB__DTX_MAX 64

enum ffb__dtx_state {
    FFB__DTX_ACTIVE = 1,
    FFB__DTX_PREPARED,
    FFB__DTX_COMMITTING, /* a commit failed: some participants may have
                            committed, the others are prepared */
    FFB__DTX_ENDED
};

/* What a phase does to each participant (lib/blocking.c runs them). */
enum { FFB__DTX_PREPARE = 1, FFB__DTX_COMMIT, FFB__DTX_ROLLBACK };

typedef struct ffb__dtx_part {
    ffb_tx *tx;
    ffb__sync sync;      /* the phase's request */
    ffb__sync isync;     /* the transaction number's info request */
    ffb__simple info;
    uint8_t idbuf[32];
    int64_t id;
    int queued;          /* what the queue call returned */
} ffb__dtx_part;

struct ffb_dtx {
    const ffb_allocator *alloc; /* the first connection's */
    size_t n;
    ffb__dtx_part *p;
    int state;
    int failed;          /* participant of the last failure, -1 none */
    ffb_error err;
};

/* Queue participant i's request of phase `what` (nothing for one that has
   ended already: 1). */
int ffb__dtx_queue(ffb_dtx *d, size_t i, int what, const void *msg,
                   size_t len);
/* Its answer came with `rc` (from ffb__await): 0, or the failure, which
   is recorded when it is the phase's first. */
int ffb__dtx_answer(ffb_dtx *d, size_t i, int what, int rc);
/* The checks at the start of a phase: 0 or FFB_E_STATE. */
int ffb__dtx_check(ffb_dtx *d, int what);
/* 0 when 1..65535 bytes or none. */
int ffb__prepare_msg_check(ffb_tx *tx, const void *msg, size_t len);

#endif
