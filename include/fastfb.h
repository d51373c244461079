/*
 * libfastfb - a native Firebird wire-protocol client.
 *
 * This is the one public header: core types, errors, the connection
 * (blocking and byte-pump), and statistics. Every function documents its
 * round-trip cost: one round trip is one flush of requests that need an
 * answer, followed by waiting for that answer (see docs/architecture.md).
 *
 * Objects are used by one thread at a time; different connections may be
 * used from different threads at once. Nothing here installs signal
 * handlers. The only process-wide state is created once and never changed
 * (the "C" numeric locale of number text) or, in builds without NDEBUG,
 * the lock-protected list of freed objects that catches a second free;
 * only that check prints (to stderr, before it aborts).
 */
#ifndef FASTFB_H
#define FASTFB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define FFB_API __declspec(dllexport)
#elif defined(__GNUC__)
#define FFB_API __attribute__((visibility("default")))
#else
#define FFB_API
#endif

/* ---- version ----------------------------------------------------------- */

#define FFB_VERSION_MAJOR 0
#define FFB_VERSION_MINOR 1
#define FFB_VERSION_PATCH 0
/** 0xMMmmpp, for compile-time comparisons. */
#define FFB_VERSION_NUM 0x000100

/**
 * The version of the library actually loaded, e.g. "0.1.0".
 *
 * Ownership: static string.
 * Round trips: 0.
 * Since: 0.1
 */
FFB_API const char *ffb_version(void);

/* ---- result codes ------------------------------------------------------ */

/*
 * X-macro: name, value, short text. Codes at or below FFB_E_FATAL leave the
 * connection unusable (ffb_conn_is_broken() then returns 1): every later
 * call that needs the server returns that same code, and ffb_conn_error()
 * keeps the error that broke it. Out of memory (FFB_E_NOMEM) is one of
 * them: the requests staged and the answers expected can no longer be
 * trusted to match.
 */
#define FFB_ERRNO_MAP(X)                                                       \
    X(OK, 0, "success")                                                        \
    X(E_INVAL, -1, "invalid argument")                                         \
    X(E_STATE, -2, "operation not allowed in the object's current state")      \
    X(E_AGAIN, -3, "operation would block")                                    \
    X(E_SERVER, -4, "the server returned an error")                            \
    X(E_UNSUPPORTED, -5, "not supported by the server's protocol version")     \
    X(E_TIMEOUT, -6, "operation timed out")                                    \
    X(E_CANCELLED, -7, "operation cancelled")                                  \
    X(E_ABORTED, -8, "not sent: an earlier operation in the pipeline failed")  \
    X(E_FATAL, -100, "fatal connection error")                                 \
    X(E_IO, -101, "network I/O error")                                         \
    X(E_CLOSED, -102, "connection closed")                                     \
    X(E_PROTO, -103, "protocol error: malformed or unexpected packet")         \
    X(E_AUTH, -104, "authentication failed")                                   \
    X(E_CRYPT, -105, "wire encryption error")                                  \
    X(E_NOMEM, -106, "out of memory")                                          \
    X(E_STMT_TIMEOUT, -9, "the statement timeout expired")                     \
    X(E_SHUTDOWN, -107, "the server shut the attachment down")

enum ffb_code {
#define FFB__ERRNO_ENUM(name, value, text) FFB_##name = (value),
    FFB_ERRNO_MAP(FFB__ERRNO_ENUM)
#undef FFB__ERRNO_ENUM
};

/**
 * A static, human-readable text for a result code ("network I/O error").
 * Unknown codes give "unknown error code".
 *
 * Round trips: 0.
 * Since: 0.1
 */
FFB_API const char *ffb_strerror(int code);

/**
 * The symbolic name of a result code ("FFB_E_IO"); "FFB_E_UNKNOWN" for an
 * unknown code.
 *
 * Round trips: 0.
 * Since: 0.1
 */
FFB_API const char *ffb_err_name(int code);

/* ---- error objects ----------------------------------------------------- */

/**
 * Details of a failure: the result code, and for FFB_E_SERVER (and server
 * answers that ended authentication, FFB_E_AUTH) the whole Firebird status
 * vector. Errors are borrowed from their owner (see ffb_conn_error()).
 */
typedef struct ffb_error ffb_error;

/** The FFB_E_* code (0 when the error object holds no error). Since: 0.1 */
FFB_API int ffb_error_code(const ffb_error *err);

/**
 * The first gds code of the status vector (e.g. 335544665 for a unique key
 * violation), or 0 for library-side errors.
 * Round trips: 0. Since: 0.1
 */
FFB_API uint32_t ffb_error_gds(const ffb_error *err);

/** Number of gds codes (errors and warnings) in the vector. Since: 0.1 */
FFB_API size_t ffb_error_count(const ffb_error *err);

/** The i-th gds code of the vector, or 0 when out of range. Since: 0.1 */
FFB_API uint32_t ffb_error_gds_at(const ffb_error *err, size_t i);

/**
 * The symbolic name of the i-th code without the isc_ prefix
 * ("unique_key_violation"), or "" when unknown or out of range.
 * Since: 0.1
 */
FFB_API const char *ffb_error_symbol_at(const ffb_error *err, size_t i);

/**
 * Number of arguments (strings and numbers) attached to the i-th code.
 * Since: 0.1
 */
FFB_API size_t ffb_error_arg_count(const ffb_error *err, size_t i);

/**
 * The j-th argument of the i-th code as text (numbers in decimal), or NULL
 * when out of range. Valid as long as the error object.
 * Since: 0.1
 */
FFB_API const char *ffb_error_arg(const ffb_error *err, size_t i, size_t j);

/**
 * The SQLSTATE: the one the server sent, else the table value for the first
 * code that has a specific one, else "HY000"; "" for library errors.
 * Since: 0.1
 */
FFB_API const char *ffb_error_sqlstate(const ffb_error *err);

/**
 * The legacy SQLCODE: the number after isc_sqlerr if present, else the table
 * value of the first code that has one, else -999; 0 for library errors.
 * Since: 0.1
 */
FFB_API int ffb_error_sqlcode(const ffb_error *err);

/**
 * The formatted message: one line per code (our wording, the server's
 * arguments filled in, then "[symbol, SQLSTATE xxxxx]"), or the library's
 * own message saying what failed and what was expected.
 * Valid as long as the error object. Never NULL.
 * Since: 0.1
 */
FFB_API const char *ffb_error_message(const ffb_error *err);

/**
 * Whether the vector holds `gds` anywhere (errors and warnings).
 * Since: 0.1
 */
FFB_API int ffb_error_has(const ffb_error *err, uint32_t gds);

/* Frequently tested gds codes. */
#define FFB_GDS_LOGIN 335544472u
#define FFB_GDS_IO_ERROR 335544344u
#define FFB_GDS_UNIQUE_KEY_VIOLATION 335544665u
#define FFB_GDS_DEADLOCK 335544336u
#define FFB_GDS_WIRECRYPT_INCOMPATIBLE 335545064u
#define FFB_GDS_MISS_WIRECRYPT 335545065u
#define FFB_GDS_LOGIN_ERROR 335545106u
/* Conversions (also raised on the client: see docs/errors.md). */
#define FFB_GDS_ARITH_EXCEPT 335544321u         /* with one of the next: */
#define FFB_GDS_NUMERIC_OUT_OF_RANGE 335544916u /* SQLSTATE 22003 */
#define FFB_GDS_STRING_TRUNCATION 335544914u    /* SQLSTATE 22001 */
#define FFB_GDS_CONVERT_ERROR 335544334u        /* SQLSTATE 22018 */
#define FFB_GDS_MALFORMED_STRING 335544849u
#define FFB_GDS_DSQL_ERROR 335544569u

/* ---- memory ------------------------------------------------------------ */

/**
 * Allocator hooks, per connection. All three must be set; `data` is passed
 * to every call. NULL options mean the C library's malloc/realloc/free.
 */
typedef struct ffb_allocator {
    void *(*malloc)(size_t size, void *data);
    void *(*realloc)(void *ptr, size_t size, void *data);
    void (*free)(void *ptr, void *data);
    void *data;
} ffb_allocator;

/* ---- connection options ------------------------------------------------ */

/**
 * Client wire-encryption level (sent as CNCT_client_crypt). The zero value
 * is the default, Enabled, so a zeroed options struct behaves as documented.
 */
enum ffb_crypt_level {
    FFB_CRYPT_ENABLED = 0,  /* default: encrypt when the server offers it */
    FFB_CRYPT_DISABLED = 1, /* never encrypt (fails against Required) */
    FFB_CRYPT_REQUIRED = 2  /* fail unless the wire ends up encrypted */
};

/** How the connection does I/O. */
enum ffb_io_mode {
    FFB_IO_BLOCKING = 0, /* the library owns a socket (default) */
    FFB_IO_EXTERNAL = 1  /* the application pumps bytes (ffb_conn_feed...) */
};

#define FFB_CONN_OPTIONS_VERSION 1

/**
 * Connection options. Initialise with FFB_CONN_OPTIONS_INIT or
 * ffb_conn_options_init(); fields are only ever appended.
 *
 * Strings are copied by ffb_conn_new(); NULL means the default.
 */
typedef struct ffb_conn_options {
    unsigned version;       /* FFB_CONN_OPTIONS_VERSION */
    const char *dsn;        /* "host[/port]:path", "inet://host:port/path",
                               "inet6://[::1]:port/path" or a bare path;
                               explicit host/port/database override it */
    const char *host;       /* default "localhost" */
    const char *port;       /* service name or number, default "3050" */
    const char *database;   /* path or alias on the server */
    const char *user;       /* default "SYSDBA" */
    const char *password;   /* default "" */
    const char *role;       /* default none */
    const char *charset;    /* connection character set, default "UTF8" */
    const char *auth_plugins; /* client list, default "Srp256,Srp,Legacy_Auth";
                                 the first is tried first */
    const char *wire_crypt_plugins; /* default "ChaCha64,ChaCha,Arc4" */
    int wire_crypt;         /* enum ffb_crypt_level, default ENABLED */
    int compress;           /* 1 = ask for zlib compression */
    int io;                 /* enum ffb_io_mode */
    int connect_timeout_ms; /* 0 = none; TCP connect and the whole
                               handshake */
    int io_timeout_ms;      /* 0 = none; the longest the wire may stand
                               still (nothing written or received) while an
                               answer is owed; then the connection breaks
                               with FFB_E_TIMEOUT */
    int dialect;            /* SQL dialect, default 3 */
    int no_pipeline_crypt;  /* 1 = send op_crypt in a write of its own
                               (one more round trip); by default it rides
                               with the login proof */
    const ffb_allocator *allocator; /* NULL = libc */
    /* Identification sent to the server (CNCT_user, CNCT_host,
       isc_dpb_process_id, isc_dpb_process_name); NULL/0 = taken from the
       process and the operating system. */
    const char *os_user;
    const char *client_host;
    int process_id;
    const char *process_name;
    /* Lowest protocol version offered: 13 (default, Firebird 3.0+) down to
       10 (Firebird 1.x/2.x). Versions below 13 have no authentication
       plugins, wire encryption or compression: the login then travels as a
       Legacy_Auth hash in the DPB, and FFB_CRYPT_REQUIRED fails. The server
       only reads the first 10 entries, so 10 leaves no room for versions
       after 19. */
    int min_protocol;
    /* Statements kept prepared by ffb_conn_prepare(), keyed by SQL text:
       0 = the default (32), negative = no cache. */
    int stmt_cache_size;
    /* Firebird 5.0.3+ (protocol 19): blobs up to this size (bytes,
       including 2 bytes per segment) come inline with their rows and are
       read with no round trip. 0 = the default (65535, the maximum),
       negative = off. */
    int inline_blob_size;
    /* Memory for inline blobs not yet opened, per connection; 0 = 10 MiB. */
    size_t blob_cache_bytes;
    /* Rows asked by the first fetch of a cursor; 0 = about 1 MiB of rows
       (10..1000). Later fetches grow from it. */
    int fetch_size;
    /* The largest packet accepted from the server, in bytes after
       decompression: 0 = 64 MiB; at least 64 KiB. A row the describe says
       is longer is always accepted. A larger packet breaks the connection
       with FFB_E_PROTO (docs/security.md). */
    size_t max_packet_size;
    /* Database encryption: answers the server's requests for a key
       (op_crypt_key_callback) during the connect; NULL = answer with no
       data. See ffb_crypt_key_fn and docs/crypto.md. Since: 0.2 */
    int (*crypt_key_cb)(void *data, const uint8_t *request,
                        size_t request_len, uint8_t *reply,
                        size_t reply_size);
    void *crypt_key_data; /* handed to crypt_key_cb */
    /* Statement formats shared with other connections of the same
       database (ffb_formats_new()); NULL = none (each connection
       remembers only its own; ignored with stmt_cache_size < 0).
       ffb_conn_new() takes a reference: the caller may drop its own at
       once. Since: 0.2 */
    struct ffb_formats *formats;
} ffb_conn_options;

/* C99 designated initializer; from C++ use ffb_conn_options_init(). */
#define FFB_CONN_OPTIONS_INIT {.version = FFB_CONN_OPTIONS_VERSION}

/**
 * Fill `opts` with the defaults (same as FFB_CONN_OPTIONS_INIT).
 * Round trips: 0. Since: 0.1
 */
FFB_API void ffb_conn_options_init(ffb_conn_options *opts);

/* ---- connection -------------------------------------------------------- */

typedef struct ffb_conn ffb_conn;

/**
 * Create a connection object. Does no I/O.
 *
 * Ownership: the caller frees it with ffb_conn_free(). Option strings are
 * copied.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (bad option, e.g. an unparsable dsn or an unknown
 * auth plugin name), FFB_E_NOMEM. With FFB_E_INVAL `*out` is still a
 * connection: ffb_conn_error() says which option is wrong and why, every
 * connect returns the same error, and the caller frees it. With
 * FFB_E_NOMEM (or `out` NULL) there is none: `*out` is NULL.
 * Since: 0.1 (the connection on FFB_E_INVAL: 0.2)
 */
FFB_API int ffb_conn_new(const ffb_conn_options *opts, ffb_conn **out);

/**
 * Connect, authenticate, start wire encryption and compression as
 * negotiated, and attach to the database.
 *
 * Round trips: 3 with wire encryption (op_connect; op_cont_auth + op_crypt;
 * op_attach), 2 without (op_connect; op_attach carrying the proof),
 * one more for each authentication plugin the server makes the client
 * switch to. The TCP connect itself is not counted.
 * Returns: 0, or FFB_E_STATE (already connected), FFB_E_AUTH (login failed;
 * the error names the user), FFB_E_CRYPT (encryption could not be agreed),
 * FFB_E_SERVER (the server refused the attach, e.g. missing file), FFB_E_IO
 * (the OS reason is in the message), FFB_E_TIMEOUT, FFB_E_PROTO,
 * FFB_E_NOMEM. Any failure leaves the connection closed.
 * Since: 0.1
 */
FFB_API int ffb_conn_connect(ffb_conn *conn);

/** Options for ffb_conn_create_database(). */
#define FFB_CREATE_OPTIONS_VERSION 1

typedef struct ffb_create_options {
    unsigned version;       /* FFB_CREATE_OPTIONS_VERSION */
    int page_size;          /* 0 = server default (8192 on 4.0+) */
    const char *charset;    /* default character set of the database;
                               NULL = server default (NONE) */
    int dialect;            /* 0 = 3 */
    int overwrite;          /* 1 = replace an existing file */
    int force_write;        /* -1 = server default, 0 = off, 1 = on */
} ffb_create_options;

#define FFB_CREATE_OPTIONS_INIT                                                \
    {.version = FFB_CREATE_OPTIONS_VERSION, .force_write = -1}

/**
 * Like ffb_conn_connect(), but creates the database (op_create) instead of
 * attaching. `copts` may be NULL for the defaults.
 *
 * Round trips: as ffb_conn_connect().
 * Returns: as ffb_conn_connect(); FFB_E_SERVER when the file exists or the
 * path is not allowed.
 * Since: 0.1
 */
FFB_API int ffb_conn_create_database(ffb_conn *conn,
                                     const ffb_create_options *copts);

/**
 * Detach politely (op_detach, then op_disconnect) and close the socket.
 * Safe on a connection that is not connected (returns 0).
 *
 * Round trips: 1 (op_detach; op_disconnect gets no answer).
 * Returns: 0, or FFB_E_SERVER (the server refused to detach, e.g. active
 * transactions; the connection is closed anyway), FFB_E_IO, FFB_E_PROTO.
 * Since: 0.1
 */
FFB_API int ffb_conn_close(ffb_conn *conn);

/**
 * Drop the attached database (op_drop_database) and close the connection.
 *
 * Round trips: 1.
 * Returns: 0 (also for isc_drdb_completed_with_errs, which still drops),
 * FFB_E_STATE (not attached), FFB_E_SERVER (e.g. other attachments), fatal
 * codes.
 * Since: 0.1
 */
FFB_API int ffb_conn_drop_database(ffb_conn *conn);

/**
 * Free the connection. NULL is fine. A connected connection is closed
 * abruptly (op_disconnect is written if possible, nothing is waited for).
 *
 * Ownership: statements, transactions, blobs and batches belong to their
 * connection; ffb_conn_free() frees every one still alive, so none of them
 * may be used or freed afterwards. Each object is freed at most once.
 * Builds without NDEBUG recognise a second free, or a free after
 * ffb_conn_free(), of objects made with the default allocator, and abort
 * with a message naming the call (docs/security.md). Inside a result
 * callback ffb_conn_free() is ignored (see the pipelining section).
 * Round trips: 0.
 * Since: 0.1
 */
FFB_API void ffb_conn_free(ffb_conn *conn);

/**
 * Check the attachment with op_ping (protocol 13+).
 *
 * Round trips: 1.
 * Returns: 0, FFB_E_STATE, FFB_E_SERVER (e.g. the attachment was killed),
 * fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_conn_ping(ffb_conn *conn);

/**
 * The error of the most recent failing call on this connection, or of any
 * call when it succeeded (then ffb_error_code() is 0).
 *
 * Ownership: borrowed; valid until the next call on `conn`.
 * Round trips: 0. Since: 0.1
 */
FFB_API const ffb_error *ffb_conn_error(const ffb_conn *conn);

/** 1 when a fatal error made the connection unusable. Since: 0.1 */
FFB_API int ffb_conn_is_broken(const ffb_conn *conn);

/** 1 while attached. Since: 0.1 */
FFB_API int ffb_conn_is_attached(const ffb_conn *conn);

/**
 * The negotiated protocol version number (13..19), 0 before the accept.
 * Round trips: 0. Since: 0.1
 */
FFB_API int ffb_conn_protocol(const ffb_conn *conn);

/**
 * The authentication plugin that completed the login ("Srp256"), or "".
 * Round trips: 0. Since: 0.1
 */
FFB_API const char *ffb_conn_auth_plugin(const ffb_conn *conn);

/**
 * The wire-crypt plugin in use ("ChaCha64", "ChaCha", "Arc4"), or "" when
 * the wire is not encrypted.
 * Round trips: 0. Since: 0.1
 */
FFB_API const char *ffb_conn_wire_crypt(const ffb_conn *conn);

/** 1 when zlib compression is on. Round trips: 0. Since: 0.1 */
FFB_API int ffb_conn_is_compressed(const ffb_conn *conn);

/* ---- database info ----------------------------------------------------- */

/** Facts about the attached database, from op_info_database. */
typedef struct ffb_db_info {
    char server_version[256];   /* isc_info_firebird_version, first string,
                                   e.g. "LI-V4.0.5.3140 Firebird 4.0" */
    char implementation[256];   /* isc_info_isc_version, e.g. "LI-V6.3.5..." */
    int ods_major, ods_minor;   /* on-disk structure, e.g. 13.0 */
    int page_size;
    int dialect;                /* database SQL dialect */
    int64_t attachment_id;
    int server_major;           /* parsed from server_version, e.g. 4 */
    int server_minor;
} ffb_db_info;

/**
 * Ask the server for version, ODS, page size, dialect and attachment id.
 *
 * Round trips: 1.
 * Returns: 0, FFB_E_STATE (not attached), FFB_E_SERVER, fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_conn_db_info(ffb_conn *conn, ffb_db_info *out,
                             size_t out_size);

/**
 * Raw op_info_database: send `items`, receive at most `out_size` bytes of
 * the server's info buffer into `out` (`*out_len` set).
 *
 * Round trips: 1.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_SERVER, fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_conn_info_raw(ffb_conn *conn, const uint8_t *items,
                              size_t items_len, uint8_t *out, size_t out_size,
                              size_t *out_len);

/* ---- statistics -------------------------------------------------------- */

/** Counters of one connection; always on. */
typedef struct ffb_stats {
    uint64_t round_trips;       /* flushes that were then waited on */
    uint64_t flushes;           /* writes of queued bytes to the transport */
    uint64_t packets_sent;
    uint64_t packets_received;
    uint64_t bytes_sent;        /* protocol bytes, before compression */
    uint64_t bytes_received;    /* protocol bytes, after decompression */
    uint64_t wire_bytes_sent;   /* on the socket, after zlib and cipher */
    uint64_t wire_bytes_received;
} ffb_stats;

/**
 * Copy the counters into `out`. `out_size` is sizeof(ffb_stats) as the
 * caller knows it, so older callers keep working when the struct grows.
 *
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (NULL arguments).
 * Since: 0.1
 */
FFB_API int ffb_conn_stats(const ffb_conn *conn, ffb_stats *out,
                           size_t out_size);

/** Set every counter to zero. Round trips: 0. Since: 0.1 */
FFB_API void ffb_conn_reset_stats(ffb_conn *conn);

/* ---- transactions ------------------------------------------------------ */

typedef struct ffb_tx ffb_tx;

/** Isolation levels. The zero value is the default. */
enum ffb_isolation {
    FFB_ISO_READ_COMMITTED = 0, /* default: READ COMMITTED RECORD_VERSION
                                   (promoted to READ CONSISTENCY by
                                   Firebird 4+ servers with default
                                   settings) */
    FFB_ISO_SNAPSHOT = 1,       /* SNAPSHOT (concurrency) */
    FFB_ISO_SERIALIZABLE = 2,   /* SNAPSHOT TABLE STABILITY (consistency) */
    FFB_ISO_READ_COMMITTED_NO_REC_VERSION = 3,
    FFB_ISO_READ_CONSISTENCY = 4 /* Firebird 4+ */
};

/** Table reservation (isc_tpb_lock_read / isc_tpb_lock_write). */
typedef struct ffb_tx_reservation {
    const char *table;
    int write;      /* 0 = lock_read, 1 = lock_write */
    int mode;       /* 0 = none, 3 shared, 4 protected, 5 exclusive */
} ffb_tx_reservation;

#define FFB_TX_OPTIONS_VERSION 1

/**
 * Transaction options. The zeroed struct (FFB_TX_OPTIONS_INIT) means: READ
 * COMMITTED (record version), read-write, WAIT without time limit - what
 * libpq and Jaybird users expect.
 */
typedef struct ffb_tx_options {
    unsigned version;       /* FFB_TX_OPTIONS_VERSION */
    int isolation;          /* enum ffb_isolation */
    int read_only;
    int lock_timeout;       /* 0 = wait forever, -1 = NO WAIT, n > 0 = wait
                               n seconds (1..32767) */
    int autocommit;         /* isc_tpb_autocommit */
    int no_auto_undo;       /* isc_tpb_no_auto_undo */
    const ffb_tx_reservation *reservations;
    size_t nreservations;
} ffb_tx_options;

#define FFB_TX_OPTIONS_INIT {.version = FFB_TX_OPTIONS_VERSION}

/** Same as FFB_TX_OPTIONS_INIT. Since: 0.1 */
FFB_API void ffb_tx_options_init(ffb_tx_options *opts);

/**
 * Start a transaction. `opts` may be NULL for the defaults.
 *
 * The start is lazy: op_transaction is queued and travels in front of the
 * next request that needs an answer (usually the first statement run in
 * the transaction), whose write also refers to the new transaction as
 * "the object allocated last". A start the server rejects (bad TPB) is
 * reported by that next call.
 *
 * Ownership: free with ffb_tx_free(); the connection must outlive it.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (bad options, e.g. a table name over 252 bytes),
 * FFB_E_STATE (not attached), FFB_E_NOMEM.
 * Since: 0.1
 */
FFB_API int ffb_tx_begin(ffb_conn *conn, const ffb_tx_options *opts, ffb_tx **out);

/**
 * Commit. Cursors opened in the transaction are closed; statements stay
 * prepared.
 *
 * Round trips: 1 (0 extra for a lazy start still queued: both go in one
 * write).
 * Returns: 0, FFB_E_STATE (already ended), FFB_E_SERVER (e.g. a deferred
 * constraint failed; the transaction is still active), fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_tx_commit(ffb_tx *tx);

/** Roll back. Round trips: 1. Returns as ffb_tx_commit(). Since: 0.1 */
FFB_API int ffb_tx_rollback(ffb_tx *tx);

/** Commit and keep the transaction (and its cursors) open.
    Round trips: 1. Returns as ffb_tx_commit(). Since: 0.1 */
FFB_API int ffb_tx_commit_retaining(ffb_tx *tx);

/** Roll back and keep the transaction open. Round trips: 1. Since: 0.1 */
FFB_API int ffb_tx_rollback_retaining(ffb_tx *tx);

/** 1 while the transaction can be used (started or queued, not ended).
    Round trips: 0. Since: 0.1 */
FFB_API int ffb_tx_is_active(const ffb_tx *tx);

/**
 * The server's transaction number (isc_info_tra_id), by op_info_transaction.
 * Round trips: 1.
 * Returns: 0, FFB_E_STATE, FFB_E_SERVER, fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_tx_id(ffb_tx *tx, int64_t *out);

/**
 * Raw op_info_transaction (items and answer as in Firebird's API).
 * Round trips: 1. Returns as ffb_conn_info_raw(). Since: 0.1
 */
FFB_API int ffb_tx_info_raw(ffb_tx *tx, const uint8_t *items,
                            size_t items_len, uint8_t *out, size_t out_size,
                            size_t *out_len);

/**
 * Free the transaction. An active transaction is rolled back: the
 * rollback is queued and rides with the next request on the connection
 * (or is sent by ffb_conn_close()). NULL is fine.
 * Round trips: 0.
 * Since: 0.1
 */
FFB_API void ffb_tx_free(ffb_tx *tx);

/* ---- statements -------------------------------------------------------- */

typedef struct ffb_stmt ffb_stmt;

/** Statement types (isc_info_sql_stmt_*). */
enum ffb_stmt_type {
    FFB_STMT_SELECT = 1,
    FFB_STMT_INSERT = 2,
    FFB_STMT_UPDATE = 3,
    FFB_STMT_DELETE = 4,
    FFB_STMT_DDL = 5,
    FFB_STMT_EXEC_PROCEDURE = 8, /* also singleton DML ... RETURNING */
    FFB_STMT_START_TRANS = 9,
    FFB_STMT_COMMIT = 10,
    FFB_STMT_ROLLBACK = 11,
    FFB_STMT_SELECT_FOR_UPDATE = 12,
    FFB_STMT_SET_GENERATOR = 13,
    FFB_STMT_SAVEPOINT = 14
};

/** SQL types of columns and parameters (sqltype without the null bit). */
enum ffb_sqltype {
    FFB_SQL_VARYING = 448,
    FFB_SQL_TEXT = 452,
    FFB_SQL_DOUBLE = 480,
    FFB_SQL_FLOAT = 482,
    FFB_SQL_LONG = 496,
    FFB_SQL_SHORT = 500,
    FFB_SQL_TIMESTAMP = 510,
    FFB_SQL_BLOB = 520,
    FFB_SQL_ARRAY = 540,
    FFB_SQL_TYPE_TIME = 560,
    FFB_SQL_TYPE_DATE = 570,
    FFB_SQL_INT64 = 580,
    FFB_SQL_TIMESTAMP_TZ_EX = 32748,
    FFB_SQL_TIME_TZ_EX = 32750,
    FFB_SQL_INT128 = 32752,
    FFB_SQL_TIMESTAMP_TZ = 32754,
    FFB_SQL_TIME_TZ = 32756,
    FFB_SQL_DEC16 = 32760,
    FFB_SQL_DEC34 = 32762,
    FFB_SQL_BOOLEAN = 32764,
    FFB_SQL_NULL = 32766
};

/**
 * Create a statement object. Does no I/O: its server handle is allocated
 * together with the first prepare.
 *
 * Ownership: free with ffb_stmt_free(); the connection must outlive it.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (not attached), FFB_E_NOMEM.
 * Since: 0.1
 */
FFB_API int ffb_stmt_new(ffb_conn *conn, ffb_stmt **out);

/**
 * Prepare `sql` (in the connection character set; `len` may be
 * (size_t)-1 for a NUL-terminated string) and read its full describe.
 * `tx` may be NULL on Firebird 4 and later (metadata is then read in a
 * system transaction); Firebird 3 needs a transaction (FFB_E_INVAL).
 * A statement prepared before is replaced; an open cursor is closed first,
 * in the same write.
 *
 * Round trips: 1 (op_allocate_statement + op_prepare_statement, or
 * op_prepare_statement alone on a handle that exists), plus 1 per further
 * part of a describe too large for one answer (rare: hundreds of columns).
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_SERVER (syntax error, unknown
 * table...: the message carries the server's line and column),
 * FFB_E_UNSUPPORTED (a column or parameter of a type libfastfb cannot
 * send or receive, named in the message; the statement is left
 * unprepared), fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_stmt_prepare(ffb_stmt *stmt, ffb_tx *tx, const char *sql,
                             size_t len);

/** The statement type (enum ffb_stmt_type), 0 before a prepare. Since: 0.1 */
FFB_API int ffb_stmt_type(const ffb_stmt *stmt);

/** 1 when executing opens a cursor (SELECT). Since: 0.1 */
FFB_API int ffb_stmt_has_cursor(const ffb_stmt *stmt);

/** Number of output columns / input parameters. Round trips: 0. Since: 0.1 */
FFB_API unsigned ffb_stmt_column_count(const ffb_stmt *stmt);
FFB_API unsigned ffb_stmt_param_count(const ffb_stmt *stmt);

/** Describe of one column or parameter. */
typedef struct ffb_column_info {
    int sqltype;         /* enum ffb_sqltype */
    int nullable;
    int subtype;         /* text: charset | collation << 8; blob: subtype;
                            numeric: 1 NUMERIC, 2 DECIMAL */
    int scale;           /* numeric scale (<= 0); text blob: charset */
    int length;          /* bytes (in-memory size, as described) */
    int charset;         /* character set id of text columns and text blobs,
                            -1 otherwise */
    const char *field;   /* column name, "" if none */
    const char *relation;/* table, "" if none */
    const char *owner;
    const char *alias;   /* label */
    const char *relation_alias; /* "": not requested (fbclient's describe
                                   list, which libfastfb sends) */
} ffb_column_info;

/**
 * Describe of output column `col` (0-based) or input parameter `idx`.
 * Strings are valid until the statement is prepared again or freed.
 * `out_size` is sizeof(ffb_column_info) as the caller knows it (as with
 * every output struct: older callers keep working when it grows).
 * Returns: 0, FFB_E_INVAL (index out of range). Round trips: 0.
 * Since: 0.1 (out_size: 0.2)
 */
FFB_API int ffb_stmt_column_info(const ffb_stmt *stmt, unsigned col,
                                 ffb_column_info *out, size_t out_size);
FFB_API int ffb_stmt_param_info(const ffb_stmt *stmt, unsigned idx,
                                ffb_column_info *out, size_t out_size);

/** Label of output column `col` (alias, else field name); "" if out of
    range. Since: 0.1 */
FFB_API const char *ffb_stmt_column_name(const ffb_stmt *stmt, unsigned col);

/** Which plan ffb_stmt_plan() reads. */
enum ffb_plan_kind {
    FFB_PLAN_LEGACY = 0,   /* isc_info_sql_get_plan: "PLAN (T INDEX ...)" */
    FFB_PLAN_EXPLAINED = 1 /* isc_info_sql_explain_plan (Firebird 3+): the
                              detailed tree */
};

/**
 * The execution plan (`kind`: enum ffb_plan_kind). `*out` is valid until
 * the next call on `stmt`.
 * Round trips: 1; 0 when ffb_stmt_queue_plan() read it already for the
 * statement as prepared now.
 * Since: 0.1 (enum ffb_plan_kind: 0.2; the values are the 0 and 1 of 0.1)
 */
FFB_API int ffb_stmt_plan(ffb_stmt *stmt, int kind, const char **out);

/**
 * Prepare through the connection's statement cache (LRU, keyed by the SQL
 * text; size in ffb_conn_options.stmt_cache_size). A cached statement is
 * handed out at once; the caller gives it back with ffb_stmt_free(), which
 * returns it to the cache (bindings cleared, cursor closed) instead of
 * dropping it. The cache is emptied when a DDL statement runs on the
 * connection, and a cached statement the server reports as obsolete
 * (isc_obsolete_metadata) is prepared again and re-executed once,
 * transparently.
 *
 * On a miss whose metadata the connection still remembers (the statement
 * was evicted earlier) and with a spare statement handle at hand, the
 * prepare is queued and not waited for: it travels with the first execute,
 * whose write then holds prepare + execute + fetch. The describe is
 * checked when it arrives; if the statement changed, the execute is run
 * again with the new formats (and when the new describe is too long for
 * one answer, the statement is prepared again first: 1 more round trip).
 * A queued execution whose rows came in the replaced formats fails with
 * FFB_E_STATE ("execute it again").
 *
 * A text already checked out (in use) is prepared again for the second
 * caller; with a spare handle at hand that prepare also rides with the
 * first execute, using the formats of the statement in use.
 *
 * A text neither cached nor remembered by this connection is looked up in
 * its shared format memory (ffb_conn_options.formats, ffb_formats_new()):
 * when another connection prepared it, this prepare rides with the first
 * execute in the same way. Such connections get 4
 * spare handles allocated in their op_attach's write (no round trip
 * more), so even a never-used connection's first use is 1 round trip on
 * Firebird 3 and 4 (verified live: SELECT with a parameter, INSERT in an
 * auto-commit transaction, EXECUTE BLOCK; a text first prepared cold costs
 * FB4 2, FB3 3: FB3 prepares only in a started transaction, so its start
 * is read first). On a spare handle a transaction whose start is still
 * unanswered is named 0xFFFF (nothing is allocated behind it), on
 * Firebird 3 too.
 *
 * Ownership: give the statement back with ffb_stmt_free().
 * Round trips: 0 on a hit, a remembered or shared statement or a text in
 * use with a spare handle, otherwise as ffb_stmt_prepare().
 * Returns: as ffb_stmt_prepare().
 * Since: 0.1
 */
FFB_API int ffb_conn_prepare(ffb_conn *conn, ffb_tx *tx, const char *sql,
                             size_t len, ffb_stmt **out);

/**
 * Free the statements of the connection's cache (ffb_conn_prepare) that
 * have not been checked out for `idle_ms` milliseconds or more (0: every
 * one not in use); a statement in use, or whose execution is not answered
 * yet, stays. Each is freed as ffb_stmt_free() frees: its handle's
 * DSQL_unprepare (or drop) is queued and rides with the next request that
 * goes to the server, no write of its own. Its formats are remembered as
 * an evicted statement's are, and its handle is kept as a spare (up to
 * 16 per connection), so the next ffb_conn_prepare() of the same text
 * rides its prepare with the first execute on a spare handle (a warm
 * miss: prepare + execute + fetch in 1 round trip); once another prepare
 * has taken the spare, it is a plain miss (as ffb_stmt_prepare()).
 * Round trips: 0.
 * Returns: the number of statements freed (>= 0), or FFB_E_INVAL (NULL
 * `conn`, negative `idle_ms`).
 * Since: 0.2
 */
FFB_API int ffb_conn_cache_trim(ffb_conn *conn, int64_t idle_ms);

/**
 * Statement formats shared between connections (format memory). Once any
 * connection holding it has prepared a text through ffb_conn_prepare(),
 * the first ffb_conn_prepare() of the same text on every other such
 * connection rides its prepare with its first execute, as a text the
 * connection remembers itself does (see ffb_conn_prepare()): prepare +
 * execute + fetch [+ commit] in one write. Attach it with
 * ffb_conn_options.formats; ffb_pool_new() and ffb_uv_pool_new() make one
 * per pool when the options name none, so every pool connection shares it.
 *
 * Entries are keyed by the SQL text and by what shapes a describe (the
 * database, host, port, dialect and connection character set): several
 * databases may share one object without mixing their entries. An entry
 * is only a guess: the describe that comes back is checked, and when it
 * differs (DDL on another connection or in another process), the
 * execution runs again with the new formats, which replace the entry.
 * A wrong entry costs round trips, never a wrong answer. DDL on a
 * connection empties that connection's own cache, not the shared entries
 * (they are checked on use).
 *
 * Thread-safe: connections on any threads or event loops may share one
 * (a mutex guards it, held only to copy an entry in or out). Memory is
 * bounded by `max_bytes`, least recently used entries evicted first.
 */
typedef struct ffb_formats ffb_formats;

/**
 * Create shared format memory of at most `max_bytes` (0 = the default,
 * 1 MiB: about 1,000 statements of 10 columns; an entry holds the SQL
 * text and its describe, and describes of more than 40 parameters plus
 * columns are not kept).
 * Ownership: reference-counted; the creator holds one reference, each
 * connection (or pool) given it holds its own; ffb_formats_unref() drops
 * one, and the last frees it.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (NULL `out`), FFB_E_NOMEM.
 * Since: 0.2
 */
FFB_API int ffb_formats_new(size_t max_bytes, ffb_formats **out);

/** Take one more reference; returns `f`. NULL is ignored. Thread-safe.
    Round trips: 0. Since: 0.2 */
FFB_API ffb_formats *ffb_formats_ref(ffb_formats *f);

/** Drop one reference; the last frees `f`. NULL is ignored. Thread-safe.
    Round trips: 0. Since: 0.2 */
FFB_API void ffb_formats_unref(ffb_formats *f);

/** What ffb_formats_stats() reports. */
typedef struct ffb_formats_stats {
    size_t entries;    /* texts remembered now */
    size_t bytes;      /* their memory, counted against max_bytes */
    uint64_t hits;     /* prepares that took an entry */
    uint64_t misses;   /* prepares that found none */
    uint64_t stored;   /* describes stored (new or replaced entries) */
    uint64_t evicted;  /* entries dropped for room */
} ffb_formats_stats;

/**
 * Counters of `f`. `out_size` is sizeof(ffb_formats_stats) as the caller
 * knows it. Thread-safe.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (NULL argument).
 * Since: 0.2
 */
FFB_API int ffb_formats_stats_get(ffb_formats *f, ffb_formats_stats *out,
                                  size_t out_size);

/** Rows asked by the first fetch of the next executions (0 = automatic).
    Round trips: 0. Returns 0 or FFB_E_INVAL. Since: 0.1 */
FFB_API int ffb_stmt_set_fetch_size(ffb_stmt *stmt, int rows);

/**
 * The most bytes one row of the prepared statement's output can take in a
 * fetch answer: op_fetch_response's 12 bytes, the null bitmap and every
 * column at its declared size (a VARCHAR(100) of UTF8 at 400 bytes).
 *
 * Firebird answers an op_fetch of N rows with fewer - the rest wait for
 * the next fetch - once it has written 16 network packets of its
 * TcpRemoteBufferSize (8 KiB by default, so 128 KiB) and more than 10
 * rows [verified FB3/4: rows of 1,016 bytes, a batch of 129; of 16,016
 * bytes, 11]. An application that pipelines the end of the transaction
 * after a fetch (ffb_tx_queue_commit() behind ffb_stmt_queue_execute())
 * gets every row only when the fetch is answered whole: when it asks for at
 * most FFB_FETCH_WHOLE_ROWS rows, or rows x this at most
 * FFB_FETCH_WHOLE_BYTES (with the default buffer size). Else the commit
 * closes the cursor behind the first answer.
 *
 * Returns 0 when `stmt` is NULL, not prepared, or has no output columns.
 * Round trips: 0.
 * Since: 0.2
 */
FFB_API size_t ffb_stmt_row_wire_max(const ffb_stmt *stmt);

/** A fetch of at most this many rows is always answered whole. */
#define FFB_FETCH_WHOLE_ROWS 10
/** A fetch whose rows take at most this many bytes (15 packets of
    Firebird's default TcpRemoteBufferSize, 8192) is answered whole. */
#define FFB_FETCH_WHOLE_BYTES (15 * 8192)

/** Inline blob limit sent with the next executions of this statement
    (protocol 19; 0 = none, at most 65535). Round trips: 0. Since: 0.1 */
FFB_API int ffb_stmt_set_inline_blob_size(ffb_stmt *stmt, int bytes);

/* ---- parameters (0-based index; kept until changed or cleared) ---------- */

/**
 * Bind parameter values. Values are converted to the described type on the
 * client, so a value that does not fit (2^40 for a SMALLINT, a string
 * longer than its column, a boolean for an INTEGER) fails here with
 * FFB_E_INVAL - nothing is sent - and the status vector the server gives
 * for the same conversion: ffb_error_sqlstate() 22003, 22001 or 22018,
 * ffb_error_sqlcode() -303, codes such as FFB_GDS_NUMERIC_OUT_OF_RANGE,
 * and a message naming the parameter, its declared type and the value
 * (docs/errors.md). Text the client cannot convert exactly ("29.02.2024"
 * or "yesterday" for a DATE, "abc" for an INTEGER) is sent as text and
 * converted by the server: a refusal is then the server's error, from
 * ffb_stmt_execute() (docs/types.md). Text is copied. Numbers given as
 * text ("12.345") are exact: no floating point is involved for NUMERIC,
 * DECIMAL, INT128 and DECFLOAT.
 *
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (not prepared), FFB_E_NOMEM.
 * Since: 0.1
 */
FFB_API int ffb_stmt_bind_null(ffb_stmt *stmt, unsigned idx);
FFB_API int ffb_stmt_bind_int64(ffb_stmt *stmt, unsigned idx, int64_t v);
/** An exact number given as unscaled integer and scale (12345, -2 = 123.45). */
FFB_API int ffb_stmt_bind_numeric(ffb_stmt *stmt, unsigned idx, int64_t v,
                                  int scale);
FFB_API int ffb_stmt_bind_double(ffb_stmt *stmt, unsigned idx, double v);
FFB_API int ffb_stmt_bind_bool(ffb_stmt *stmt, unsigned idx, int v);
/** Text (any type: numbers, dates "2024-02-29 13:45:30.1234", time zones
    "... Europe/Prague", booleans "true"/"false" are parsed for the
    parameter's type; what the client cannot parse goes to the server as
    text). `len` may be (size_t)-1 for NUL-terminated. */
FFB_API int ffb_stmt_bind_text(ffb_stmt *stmt, unsigned idx, const char *s,
                               size_t len);
/** Raw bytes for OCTETS / binary columns and blob ids (8 bytes). */
FFB_API int ffb_stmt_bind_bytes(ffb_stmt *stmt, unsigned idx,
                                const void *p, size_t len);
FFB_API int ffb_stmt_bind_date(ffb_stmt *stmt, unsigned idx, int year,
                               int month, int day);
/** Time of day; `frac` in 1/10000 s. */
FFB_API int ffb_stmt_bind_time(ffb_stmt *stmt, unsigned idx, int hour,
                               int min, int sec, int frac);
FFB_API int ffb_stmt_bind_timestamp(ffb_stmt *stmt, unsigned idx, int year,
                                    int month, int day, int hour, int min,
                                    int sec, int frac);
/** Reset every parameter to "unbound" (executing then fails). Since: 0.1 */
FFB_API void ffb_stmt_clear_bindings(ffb_stmt *stmt);

/* ---- execution ----------------------------------------------------------- */

/**
 * Execute in `tx` with the bound parameters.
 *
 * - SELECT: opens the cursor and fetches the first rows in the same write;
 *   read them with ffb_stmt_fetch(). A cursor still open from an earlier
 *   execution is closed in the same write.
 * - statements with outputs but no cursor (EXECUTE PROCEDURE, INSERT ...
 *   RETURNING): op_execute2; the row is read with ffb_stmt_fetch().
 * - INSERT, UPDATE, DELETE: the affected-row counts come in the same write
 *   (ffb_stmt_rows_affected()).
 *
 * Auto-commit: with `tx` NULL the statement runs in a transaction of its
 * own (the default options of ffb_tx_begin()), started in the same write.
 * Without a cursor (DML, DDL, EXECUTE PROCEDURE, RETURNING) its commit is
 * in that write too, and the call returns once the commit is answered: 1
 * round trip. A SELECT's transaction is committed when its cursor ends -
 * its last row read (often in the first answer), ffb_stmt_close_cursor(),
 * the next execution or ffb_stmt_free(); that commit is not waited for
 * (its answer is read with a later request): a point SELECT costs 1 round
 * trip, and rows beyond the first batch are fetched in the still open
 * transaction as usual.
 *
 * Errors of the first fetch: a SELECT's first fetch travels with the
 * execute, so a failure the server raises while producing the first rows
 * (a conversion error in a select list, a division by zero, a parameter
 * sent as text that the server cannot convert) is reported by this call,
 * as FFB_E_SERVER with the server's status vector, and not by
 * ffb_stmt_fetch(), which then returns 0 (no rows). Failures in later
 * batches come from ffb_stmt_fetch().
 *
 * Round trips: 1 (plus the lazy start of `tx` and any deferred frees in
 * the same write; a parameter sent as text adds nothing).
 * Returns: 0, FFB_E_INVAL (a parameter not bound), FFB_E_STATE (not
 * prepared, transaction ended), FFB_E_SERVER (constraint violation,
 * conversion error, an error of the first fetch...), FFB_E_UNSUPPORTED
 * (the describe of a statement prepared lazily by ffb_conn_prepare() has
 * a type libfastfb cannot receive), fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_stmt_execute(ffb_stmt *stmt, ffb_tx *tx);

/**
 * Move to the next row: 1 = a row, 0 = end of the result, < 0 = error.
 *
 * Rows arrive in batches; while a batch lasts no I/O happens. When the
 * cursor proves long, later fetches are sent before the buffered rows run
 * out, several at a time, so reading a large result costs few round trips.
 * Values of the previous row (including zero-copy text views) are invalid
 * after the call.
 *
 * When the end of the cursor's transaction is queued already (a commit
 * or rollback behind ffb_stmt_queue_execute()), no read-ahead is sent:
 * the end closes the cursor first. Rows beyond those answered before the
 * end are then FFB_E_STATE, at once, not a fetch the server refuses (a
 * long answer that Firebird cut short: see ffb_stmt_row_wire_max()).
 *
 * Round trips: 0 while buffered rows remain; 1 per refill otherwise.
 * Returns: 1, 0, FFB_E_STATE (no result; more rows than were answered
 * before the queued end of the transaction, or than were buffered when the
 * transaction ended: a cursor its commit or rollback closed before its
 * last row came never says 0), FFB_E_SERVER (an error while
 * reading rows after the first batch; one raised by the first fetch is
 * ffb_stmt_execute()'s), FFB_E_AGAIN (external I/O: no row buffered; the next
 * fetch is on its way - ffb_stmt_queue_fetch() says when rows are in),
 * fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_stmt_fetch(ffb_stmt *stmt);

/**
 * Rows changed by the last INSERT/UPDATE/DELETE/MERGE execution (sum of the
 * insert, update and delete counters), or -1 when unknown (no execution
 * yet, a SELECT, DDL). The count is the server's, asked in the execute's
 * write: INSERT ... RETURNING gives 1; EXECUTE PROCEDURE gives 0 however
 * many rows the procedure changes (the server counts the statement's own
 * rows, not the procedure's; fbclient reports the same 0).
 * Round trips: 0. Since: 0.1
 */
FFB_API int64_t ffb_stmt_rows_affected(const ffb_stmt *stmt);

/**
 * Close the cursor, if open. The close is queued and rides with the next
 * request. Round trips: 0. Returns 0. Since: 0.1
 */
FFB_API int ffb_stmt_close_cursor(ffb_stmt *stmt);

/**
 * Free the statement; its server handle is released by a queued
 * DSQL_drop that rides with the next request. NULL is fine.
 * Round trips: 0. Since: 0.1
 */
FFB_API void ffb_stmt_free(ffb_stmt *stmt);

/* ---- column values of the current row (0-based) --------------------------- */

/** 1 if the value is NULL, 0 if not, FFB_E_INVAL / FFB_E_STATE. Since: 0.1 */
FFB_API int ffb_stmt_is_null(const ffb_stmt *stmt, unsigned col);

/**
 * Typed getters. Each converts from the column's type where that is exact
 * (SMALLINT to int64, NUMERIC(9,2) to numeric, any type to text) and fails
 * with FFB_E_INVAL otherwise (text "abc" to int64, 1.5 to int64, a date to
 * double), with a message naming the column and both types. NULL gives
 * FFB_E_INVAL too (test with ffb_stmt_is_null()).
 *
 * Round trips: 0.
 * Since: 0.1
 */
FFB_API int ffb_stmt_get_int64(const ffb_stmt *stmt, unsigned col,
                               int64_t *out);
/** Exact value as unscaled integer and scale (NUMERIC, DECIMAL, integers,
    INT128 when it fits 64 bits). */
FFB_API int ffb_stmt_get_numeric(const ffb_stmt *stmt, unsigned col,
                                 int64_t *value, int *scale);
FFB_API int ffb_stmt_get_double(const ffb_stmt *stmt, unsigned col,
                                double *out);
FFB_API int ffb_stmt_get_bool(const ffb_stmt *stmt, unsigned col, int *out);
/**
 * The value as text: strings as they are (CHAR with its padding; see
 * ffb_stmt_get_text_trimmed), numbers exactly ("-12.34", INT128,
 * DECFLOAT "1E+300"), dates "YYYY-MM-DD", times "HH:MM:SS.ffff",
 * timestamps, time zones "... Europe/Prague", booleans "true"/"false".
 * For CHAR/VARCHAR the result is a zero-copy view into the row: valid until
 * the next ffb_stmt_fetch() and not NUL-terminated; other types are
 * formatted into a buffer owned by the statement, valid until the next
 * getter call. *len_out gets the length in bytes.
 */
FFB_API int ffb_stmt_get_text(ffb_stmt *stmt, unsigned col, const char **out,
                              size_t *len_out);
/** Like ffb_stmt_get_text, without the blanks that pad CHAR values. */
FFB_API int ffb_stmt_get_text_trimmed(ffb_stmt *stmt, unsigned col,
                                      const char **out, size_t *len_out);
FFB_API int ffb_stmt_get_date(const ffb_stmt *stmt, unsigned col, int *year,
                              int *month, int *day);
FFB_API int ffb_stmt_get_time(const ffb_stmt *stmt, unsigned col, int *hour,
                              int *min, int *sec, int *frac);
FFB_API int ffb_stmt_get_timestamp(const ffb_stmt *stmt, unsigned col,
                                   int *year, int *month, int *day,
                                   int *hour, int *min, int *sec, int *frac);
/** Blob id (8 bytes, as the server sent it). */
FFB_API int ffb_stmt_get_blob_id(const ffb_stmt *stmt, unsigned col,
                                 uint8_t out[8]);

/* ---- one-shot SQL ---------------------------------------------------------- */

/** What an ffb_value holds. */
enum ffb_value_type {
    FFB_VALUE_NULL = 0,
    FFB_VALUE_INT64,   /* i */
    FFB_VALUE_NUMERIC, /* i x 10^scale, scale -18..0 (exact decimals) */
    FFB_VALUE_DOUBLE,  /* d */
    FFB_VALUE_BOOL,    /* i: 0 or 1 (Firebird 3+ BOOLEAN) */
    FFB_VALUE_TEXT,    /* p, len: text in the connection character set;
                          also dates, times and decimals as literals */
    FFB_VALUE_BYTES    /* p, len: octets */
};

/**
 * A parameter given by value, for statements run without a prepare
 * (ffb_conn_execute_immediate_params()): the server converts it to the
 * parameter's type as it would a literal (a conversion it refuses is an
 * FFB_E_SERVER error). Text and bytes are at most 32765 bytes.
 */
typedef struct ffb_value {
    int type;          /* enum ffb_value_type */
    int scale;         /* FFB_VALUE_NUMERIC */
    int64_t i;
    double d;
    const void *p;
    size_t len;
} ffb_value;

/**
 * Execute SQL without parameters or results (DDL, SET statements...).
 * `tx` may be NULL only for SET TRANSACTION and session statements.
 *
 * Round trips: 1.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_SERVER, fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_conn_execute_immediate(ffb_conn *conn, ffb_tx *tx,
                                       const char *sql, size_t len);

/**
 * Execute SQL with parameters (`?` markers, given by value, in order)
 * without preparing it: op_exec_immediate2 carries the text and the input
 * message in one request, so `update or insert ... values (?, ?)` costs
 * one round trip where a prepared statement costs two the first time.
 * No result set and no row count come back (use a statement for those).
 * Like ffb_conn_execute_immediate() without parameters (nparams 0).
 *
 * Round trips: 1.
 * Returns: 0, FFB_E_INVAL (a value the library cannot send, e.g. text over
 * 32765 bytes), FFB_E_STATE, FFB_E_SERVER (including a value the server
 * cannot convert to its parameter's type), fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_conn_execute_immediate_params(ffb_conn *conn, ffb_tx *tx,
                                              const char *sql, size_t len,
                                              const ffb_value *params,
                                              size_t nparams);

/* ---- blobs --------------------------------------------------------------- */

typedef struct ffb_blob ffb_blob;

#define FFB_BLOB_OPTIONS_VERSION 1

/** Options of a created blob. Zeroed = segmented binary blob. */
typedef struct ffb_blob_options {
    unsigned version;   /* FFB_BLOB_OPTIONS_VERSION */
    int stream;         /* 1 = stream blob (seekable), 0 = segmented */
    int subtype;        /* 0 binary, 1 text, < 0 user-defined */
    int charset;        /* text: character set id of the data written
                           (0 = the connection's) */
} ffb_blob_options;

#define FFB_BLOB_OPTIONS_INIT {.version = FFB_BLOB_OPTIONS_VERSION}

/** Facts about an open blob. */
typedef struct ffb_blob_info {
    int64_t length;     /* total bytes */
    int64_t segments;   /* number of segments (engine chunks for stream) */
    int64_t max_segment;
    int stream;         /* 1 stream, 0 segmented */
} ffb_blob_info;

/**
 * Create a blob in `tx`. `opts` may be NULL. Nothing is sent yet: the
 * create, the data and the close travel together (ffb_blob_close()).
 * Written data is re-framed into segments of up to 65535 bytes; a segmented
 * blob keeps one segment per ffb_blob_write() call when it fits one.
 *
 * Ownership: free with ffb_blob_free() (after close or cancel).
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_NOMEM.
 * Since: 0.1
 */
FFB_API int ffb_blob_create(ffb_conn *conn, ffb_tx *tx,
                            const ffb_blob_options *opts, ffb_blob **out);

/**
 * Append data. Buffered; when more than 1 MiB is buffered it is queued
 * on the connection (still without waiting).
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (not a created blob, or closed),
 * FFB_E_NOMEM.
 * Since: 0.1
 */
FFB_API int ffb_blob_write(ffb_blob *blob, const void *data, size_t len);

/**
 * Finish a created blob and get its id (8 bytes) for a parameter
 * (ffb_stmt_bind_blob_id()) in the same transaction.
 * Round trips: 1 (op_create_blob2 + op_batch_segments + op_close_blob in
 * one write, for data up to the queueing threshold; larger blobs' earlier
 * parts were already on their way).
 * Returns: 0, FFB_E_STATE, FFB_E_SERVER, fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_blob_close(ffb_blob *blob, uint8_t id_out[8]);

/**
 * Open a blob by id for reading. Nothing is sent yet: the open, an info
 * request and `prefetch` bytes' worth of reads (0 = 64 KiB, at most
 * 16 MiB) are queued and go out with the first read, info or flush - so
 * opening the blobs of a fetched batch and then reading them costs one
 * round trip for all. On Firebird 5.0.3+ a blob pushed inline with its row
 * is served from the transaction's cache with no I/O at all.
 *
 * Ownership: free with ffb_blob_free().
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_NOMEM.
 * Since: 0.1
 */
FFB_API int ffb_blob_open(ffb_conn *conn, ffb_tx *tx, const uint8_t id[8],
                          size_t prefetch, ffb_blob **out);

/**
 * Read up to `size` bytes. *got = 0 means the end of the blob. Segment
 * boundaries are not kept (stream semantics).
 * Read-ahead: when less than 1 MiB is left buffered, the next part (what
 * the blob info says is left, at most 256 segments of 64 KiB) is asked for
 * before the call returns, so it travels while the application works.
 * After the blob's transaction has ended, only what was already received
 * can be read (then FFB_E_STATE).
 * Round trips: 1 for the first read of a blob opened with enough prefetch
 * (and for all blobs opened before it), 0 while data is buffered, 1 per
 * further part (several reads in flight at once).
 * Returns: 0, FFB_E_STATE, FFB_E_SERVER, FFB_E_AGAIN (external I/O: nothing
 * buffered; ffb_blob_queue_read() says when data is in), fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_blob_read(ffb_blob *blob, void *buf, size_t size,
                          size_t *got);

/**
 * Read the rest of the blob into a buffer owned by the blob: `*data` stays
 * valid until the next read, seek or ffb_blob_free() on this blob.
 * Round trips: as ffb_blob_read() (1 when the prefetch covered the blob,
 * else 2: the remaining reads are all sent at once once the size is known).
 * Since: 0.1
 */
FFB_API int ffb_blob_read_all(ffb_blob *blob, const uint8_t **data,
                              size_t *len);

/** Length, segment count, largest segment and kind (`out_size`:
    sizeof(ffb_blob_info) as the caller knows it). Round trips: 0 once the
    open's answer is in (it carries the info), else 1.
    Since: 0.1 (out_size: 0.2) */
FFB_API int ffb_blob_get_info(ffb_blob *blob, ffb_blob_info *out,
                              size_t out_size);

/**
 * Move the read position of a stream blob: `whence` 0 from the start,
 * 1 from the current position, 2 from the end. *pos_out (may be NULL) gets
 * the new absolute position. Segmented blobs cannot seek (FFB_E_SERVER,
 * isc_bad_segstr_type).
 * Round trips: 1 (0 for a blob served from the inline cache).
 * Since: 0.1
 */
FFB_API int ffb_blob_seek(ffb_blob *blob, int whence, int64_t offset,
                          int64_t *pos_out);

/** Discard a created blob. Round trips: 0 (queued). Since: 0.1 */
FFB_API int ffb_blob_cancel(ffb_blob *blob);

/** Free the blob; an open one is closed by a queued op_close_blob that
    rides with the next request. NULL is fine. Round trips: 0. Since: 0.1 */
FFB_API void ffb_blob_free(ffb_blob *blob);

/** Bind a blob id (from ffb_blob_close() or a fetched row) to a BLOB
    parameter. Round trips: 0. Since: 0.1 */
FFB_API int ffb_stmt_bind_blob_id(ffb_stmt *stmt, unsigned idx,
                                  const uint8_t id[8]);

/* ---- batch DML ---------------------------------------------------------- */

typedef struct ffb_batch ffb_batch;

#define FFB_BATCH_OPTIONS_VERSION 1

/** Batch options. Zeroed: stop at the first failing row, per-row counts
    on, server buffer 16 MiB. */
typedef struct ffb_batch_options {
    unsigned version;      /* FFB_BATCH_OPTIONS_VERSION */
    int multi_error;       /* 1 = go on after a failing row */
    int no_record_counts;  /* 1 = no per-row counts */
    uint32_t buffer_bytes; /* server buffer; 0 = 16 MiB */
    int detailed_errors;   /* rows keeping a full status vector; 0 = 64 */
    int commit;            /* 1 = commit the execute's transaction in the
                              write of its last part: batch + commit in one
                              round trip (docs/batch.md) */
} ffb_batch_options;

#define FFB_BATCH_OPTIONS_INIT {.version = FFB_BATCH_OPTIONS_VERSION}

/**
 * A batch of executions of a prepared INSERT/UPDATE/DELETE/EXECUTE
 * PROCEDURE with parameters. On Firebird 4+ it uses the batch API
 * (op_batch_*); on Firebird 3 the same calls pipeline one op_execute per
 * row in as few writes as possible, with the same per-row results.
 *
 * Ownership: free with ffb_batch_free() before the statement.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (not prepared), FFB_E_NOMEM.
 * Since: 0.1
 */
FFB_API int ffb_batch_new(ffb_stmt *stmt, const ffb_batch_options *opts,
                          ffb_batch **out);

/**
 * Add a row: the statement's currently bound parameter values (bound with
 * the ordinary ffb_stmt_bind_* calls, in the application's own C types),
 * encoded at once and kept in the batch until it is executed.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (a parameter unbound, or a value a batch cannot
 * carry: time zones given as text, blob contents instead of an id from
 * ffb_batch_add_blob()), FFB_E_NOMEM.
 * Since: 0.1
 */
FFB_API int ffb_batch_add(ffb_batch *batch);

/**
 * Add a blob to the batch's blob stream and get the id to bind (with
 * ffb_stmt_bind_blob_id()) in one row of this batch. `segmented` = 1 makes
 * it a segmented blob of one segment per call. Firebird 4+ carries it in
 * the batch's blob stream; on Firebird 3 it is created (op_create_blob2 +
 * segments + close) in the execute's transaction before the rows, which
 * costs one more round trip.
 * Round trips: 0.
 * Since: 0.1
 */
FFB_API int ffb_batch_add_blob(ffb_batch *batch, const void *data,
                               size_t len, int segmented, uint8_t id_out[8]);

/**
 * Like ffb_batch_add_blob() for a segmented blob whose segments are given
 * one by one (each split at 65535 bytes).
 * Round trips: 0.
 * Since: 0.1
 */
FFB_API int ffb_batch_add_blob_segments(ffb_batch *batch,
                                        const void *const *segments,
                                        const size_t *lens, size_t n,
                                        uint8_t id_out[8]);

/**
 * Execute every row added since the last execute, in `tx`.
 * Round trips: 1 (messages, blobs and execute in one write; with the
 * commit option the commit too). The first execute of a batch object on
 * Firebird 4+ costs 1 more: its op_batch_create is confirmed before any
 * message is sent, because Firebird 5 crashes on messages behind a refused
 * create. A batch larger than the server's buffer is split; without
 * multi_error each further part costs 1 more (execution stops at the first
 * failing row), with it all parts go in one write. Firebird 3 pipelines one
 * op_execute per row in one write. See docs/batch.md.
 * Returns: 0 when every row succeeded, FFB_E_SERVER when a row failed (see
 * ffb_batch_row_status()), FFB_E_STATE, fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_batch_execute(ffb_batch *batch, ffb_tx *tx);

/** Rows processed by the last execute. Since: 0.1 */
FFB_API size_t ffb_batch_row_count(const ffb_batch *batch);

/**
 * Result of row `i` of the last execute: the rows affected (>= 0),
 * -1 when the row failed, -2 when it succeeded without a count, or
 * FFB_E_INVAL for an index out of range (rows after a failure without
 * multi_error were not run: they are beyond ffb_batch_row_count()).
 * Since: 0.1
 */
FFB_API int64_t ffb_batch_row_status(const ffb_batch *batch, size_t i);

/** The error of failed row `i` (NULL when the server gave no details).
    Valid until the next execute. Since: 0.1 */
FFB_API const ffb_error *ffb_batch_row_error(const ffb_batch *batch,
                                             size_t i);

/** Free the batch (op_batch_rls rides with the next request). NULL is
    fine. Round trips: 0. Since: 0.1 */
FFB_API void ffb_batch_free(ffb_batch *batch);

/* ---- pipelining -------------------------------------------------------- */

/*
 * Queue requests, flush once, take the results in order (docs/
 * pipelining.md). The ffb_*_queue_* functions only encode and queue; they
 * never do I/O. ffb_conn_flush() writes everything queued; results then
 * come back in queue order, through the callback given when queueing or,
 * when it is NULL, from ffb_conn_next_result(). Blocking calls made while
 * results are pending go through the same queue, so everything stays in
 * order.
 *
 * Callbacks run inside the library call that read the answer (a blocking
 * call, ffb_conn_next_result() or ffb_conn_feed()), in queue order. Inside
 * a callback the application may read the result, fetch the rows of its
 * statement, open and read blobs, queue more requests and make other
 * blocking calls; it may not call ffb_conn_next_result(), ffb_conn_close()
 * or ffb_conn_drop_database() (FFB_E_STATE), and ffb_conn_free() is
 * ignored there (the connection's error says so): free it after the call
 * that delivered the result returns.
 *
 * Each result reports the server's own answer, with one exception: a
 * request whose failure is only the consequence of an earlier failure in
 * the pipeline - a statement run in a transaction whose start the server
 * refused - reports FFB_E_ABORTED, with the first failure in its error.
 * The wire always stays in sync: every answer owed is read. When the
 * connection breaks, every result still owed completes with the code and
 * the error that broke it, in queue order, inside the call that saw the
 * break (a feed, an expire, a blocking call); ffb_conn_close() and
 * ffb_conn_free() complete those still left with FFB_E_CANCELLED.
 */

typedef struct ffb_result ffb_result;
typedef void (*ffb_cb)(ffb_conn *conn, const ffb_result *res, void *data);

/** What a result answers. */
enum ffb_op {
    FFB_OP_EXECUTE = 1,
    FFB_OP_COMMIT,
    FFB_OP_ROLLBACK,
    FFB_OP_COMMIT_RETAINING,
    FFB_OP_ROLLBACK_RETAINING,
    FFB_OP_EXECUTE_IMMEDIATE,
    FFB_OP_PREPARE,
    FFB_OP_FETCH,
    FFB_OP_PING,
    FFB_OP_INFO,
    FFB_OP_BLOB_READ,
    FFB_OP_BLOB_INFO,
    FFB_OP_BLOB_SEEK,
    FFB_OP_BLOB_CLOSE,
    FFB_OP_BATCH_EXECUTE,
    FFB_OP_PLAN,
    FFB_OP_DETACH,
    FFB_OP_DROP_DATABASE,
    FFB_OP_CONNECT,
    FFB_OP_CREATE_DATABASE,
    FFB_OP_RESET,
    FFB_OP_TX_PREPARE, /* ffb_tx_queue_prepare() (0.2) */
    FFB_OP_SVC_INFO,  /* ffb_svc_queue_server_info() */
    FFB_OP_SVC_ACTION, /* ffb_svc_queue_run() */
    FFB_OP_EVENTS, /* ffb_events_queue_register / _unregister */
    FFB_OP_FETCH_SCROLL, /* ffb_stmt_queue_fetch_scroll() */
    FFB_OP_RECORD_COUNT, /* ffb_stmt_queue_record_count() */
    FFB_OP_ARRAY_GET,    /* ffb_array_queue_get() */
    FFB_OP_ARRAY_PUT,    /* ffb_array_queue_put() */
    FFB_OP_ARRAY_LOOKUP  /* ffb_array_queue_lookup() */
};

/**
 * Queue an execution of a prepared statement (as ffb_stmt_execute(): with
 * a SELECT the first rows come in the same write; read them with
 * ffb_stmt_fetch() once the result has arrived; `tx` NULL is auto-commit
 * as there: without a cursor the result comes with the commit's answer).
 * It may be queued right behind ffb_stmt_queue_prepare(), or in a
 * transaction whose start is not answered yet: it then waits in the
 * library for the answers it needs (a handle, the describe) and goes out
 * with the next write after them, with the parameters bound at this call.
 * The blocking ffb_stmt_execute() also prepares again after a metadata
 * change (isc_obsolete_metadata); the queued execution reports that error.
 * A DML statement (INSERT/UPDATE/DELETE without RETURNING) may be queued
 * many times before any answer: each result carries its own row count
 * (ffb_result_rows_affected()). A statement with a result set or output
 * runs one execution at a time: queueing it again before its result has
 * arrived fails with FFB_E_STATE (use one statement per execution).
 * Round trips: 0 (queues only).
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_NOMEM. On failure `cb` is not
 * called.
 * Since: 0.1
 */
FFB_API int ffb_stmt_queue_execute(ffb_stmt *stmt, ffb_tx *tx, ffb_cb cb,
                                   void *data);

/** Queue a commit / rollback (retaining or not).
    Round trips: 0. Returns as ffb_stmt_queue_execute(). Since: 0.1
    (ffb_tx_queue_rollback_retaining: 0.2) */
FFB_API int ffb_tx_queue_commit(ffb_tx *tx, ffb_cb cb, void *data);
FFB_API int ffb_tx_queue_rollback(ffb_tx *tx, ffb_cb cb, void *data);
FFB_API int ffb_tx_queue_commit_retaining(ffb_tx *tx, ffb_cb cb, void *data);
FFB_API int ffb_tx_queue_rollback_retaining(ffb_tx *tx, ffb_cb cb,
                                            void *data);

/**
 * Queue a prepare (the twin of ffb_stmt_prepare(): the allocation, the
 * prepare and, for a describe too long for one answer, its continuation,
 * each step queued by the answer to the one before). The result
 * (FFB_OP_PREPARE) arrives when the statement is described; executions
 * queued behind it wait in the library until then and go out with the
 * next write, so prepare + execute queued together cost 2 round trips.
 * With Firebird 3 and a transaction whose start has not been answered, the
 * prepare itself waits for that answer.
 * Round trips: 0 (queues only).
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_NOMEM. Since: 0.2
 */
FFB_API int ffb_stmt_queue_prepare(ffb_stmt *stmt, ffb_tx *tx,
                                   const char *sql, size_t len, ffb_cb cb,
                                   void *data);

/**
 * More rows of an open cursor without waiting: when ffb_stmt_fetch() would
 * answer at once (rows are buffered, or the cursor ended), returns 1 and
 * queues nothing; otherwise queues the next fetch (or joins the one in
 * flight) and returns 0: the result (FFB_OP_FETCH) arrives when rows, the
 * end or an error did, and ffb_stmt_fetch() then answers without waiting.
 * The first rows of an execution come with its own result: before that,
 * FFB_E_STATE.
 * Round trips: 0 (queues only).
 * Returns: 1, 0, FFB_E_INVAL, FFB_E_STATE, fatal codes. Since: 0.2
 */
FFB_API int ffb_stmt_queue_fetch(ffb_stmt *stmt, ffb_cb cb, void *data);

/**
 * Queue twin of ffb_conn_prepare(): a statement from the connection's
 * cache, usable at once - queue its execution right behind. Returns 1 when
 * nothing is to be waited for (no result comes, `cb` is not called): a
 * cached text not in use, or one whose formats the connection remembers
 * (evicted earlier, or in use by another checkout), whose prepare then
 * rides in front of its first execution, and whose failure that
 * execution's result reports. Returns 0 when the prepare is queued: an
 * FFB_OP_PREPARE result follows (a failed one is not kept in the cache).
 * Ownership: give the statement back with ffb_stmt_free().
 * Round trips: 0 (queues only).
 * Returns: 1, 0, FFB_E_INVAL, FFB_E_STATE (not attached, or a `tx` the
 * prepare cannot use), FFB_E_NOMEM.
 * Since: 0.2
 */
FFB_API int ffb_conn_queue_prepare(ffb_conn *conn, ffb_tx *tx, const char *sql,
                                   size_t len, ffb_stmt **out, ffb_cb cb,
                                   void *data);

/**
 * Queue twins of ffb_conn_ping(), ffb_conn_info_raw(), ffb_tx_info_raw()
 * and ffb_conn_execute_immediate_params(). An info answer is copied to
 * `out` (which must stay valid until the result arrives);
 * ffb_result_length() says how many bytes. A request that names a
 * transaction whose start is not answered yet, behind other allocations,
 * waits in the library for that answer.
 * Round trips: 0 (queues only).
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_UNSUPPORTED (ping below
 * protocol 13), FFB_E_NOMEM. Since: 0.2
 */
FFB_API int ffb_conn_queue_ping(ffb_conn *conn, ffb_cb cb, void *data);

/**
 * The plan without waiting: 1 when ffb_stmt_plan() would answer at once
 * (the plan of the statement as prepared now was read), else queues the
 * request and returns 0; once the FFB_OP_PLAN result is in,
 * ffb_stmt_plan() answers without I/O.
 * Round trips: 0 (queues only). Since: 0.2
 */
FFB_API int ffb_stmt_queue_plan(ffb_stmt *stmt, int kind, ffb_cb cb,
                                void *data);

/**
 * Queue twins of ffb_conn_close() and ffb_conn_drop_database() for
 * external I/O: op_detach / op_drop_database. Once the result is in
 * (FFB_OP_DETACH: the connection is closed whatever the server said; a
 * refused drop leaves it attached), the application closes its socket
 * and calls ffb_conn_close(), which then sends nothing. ffb_conn_close()
 * or ffb_conn_free() with requests still pending completes each with
 * FFB_E_CANCELLED (callbacks run, in order) before it returns.
 * Round trips: 0 (queues only).
 * Returns: 0, FFB_E_STATE (not attached, or requests still wait for
 * handles), FFB_E_NOMEM. Since: 0.2
 */
FFB_API int ffb_conn_queue_detach(ffb_conn *conn, ffb_cb cb, void *data);
FFB_API int ffb_conn_queue_drop_database(ffb_conn *conn, ffb_cb cb,
                                         void *data);

/**
 * Queue twins of the blob calls. ffb_blob_create(), ffb_blob_open() and
 * ffb_blob_write() never wait (they queue). ffb_blob_queue_read(): returns
 * 1 when ffb_blob_read() would answer at once (data buffered, the end, an
 * error), else asks for more and returns 0 - the FFB_OP_BLOB_READ result
 * comes with the data, and ffb_blob_read() then answers without waiting
 * (with external I/O it returns FFB_E_AGAIN while nothing is buffered).
 * ffb_blob_queue_info(): 1 when ffb_blob_get_info() answers at once.
 * ffb_blob_queue_seek(): 1 when served at once (an inline copy);
 * ffb_blob_tell() gives the position once the result is in.
 * ffb_blob_queue_close(): the id is then ffb_blob_get_id(). A request for
 * a blob whose handle (or whose transaction's) is not known yet waits in
 * the library for the answer that tells it.
 * Round trips: 0 (queues only).
 * Returns: 1, 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_NOMEM. Since: 0.2
 */
FFB_API int ffb_blob_queue_read(ffb_blob *blob, ffb_cb cb, void *data);

/**
 * Queue twin of ffb_batch_execute(): the same steps (create, parts, the
 * commit with the commit option), each queued when the answers to the one
 * before are in; requests queued after it wait behind it. The result
 * (FFB_OP_BATCH_EXECUTE) fails as ffb_batch_execute() would; the per-row
 * results are then in ffb_batch_row_count()/row_status()/row_error().
 * Rows may be added again once the result is in (FFB_E_STATE before).
 * Round trips: 0 (queues only).
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE, FFB_E_NOMEM. Since: 0.2
 */
FFB_API int ffb_batch_queue_execute(ffb_batch *batch, ffb_tx *tx, ffb_cb cb,
                                    void *data);
FFB_API int ffb_blob_queue_info(ffb_blob *blob, ffb_cb cb, void *data);
FFB_API int ffb_blob_queue_seek(ffb_blob *blob, int whence, int64_t offset,
                                ffb_cb cb, void *data);
FFB_API int ffb_blob_queue_close(ffb_blob *blob, ffb_cb cb, void *data);
/** The blob's id: of an opened blob, or of a created one once its create
    was answered (FFB_E_STATE before). Round trips: 0. Since: 0.2 */
FFB_API int ffb_blob_get_id(const ffb_blob *blob, uint8_t out[8]);
/** The read position (bytes handed to the application, or where the last
    seek put it). Round trips: 0. Since: 0.2 */
FFB_API int64_t ffb_blob_tell(const ffb_blob *blob);
FFB_API int ffb_conn_queue_info(ffb_conn *conn, const uint8_t *items,
                                size_t items_len, uint8_t *out,
                                size_t out_size, ffb_cb cb, void *data);
FFB_API int ffb_tx_queue_info(ffb_tx *tx, const uint8_t *items,
                              size_t items_len, uint8_t *out, size_t out_size,
                              ffb_cb cb, void *data);
FFB_API int ffb_conn_queue_execute_immediate(ffb_conn *conn, ffb_tx *tx,
                                             const char *sql, size_t len,
                                             const ffb_value *params,
                                             size_t nparams, ffb_cb cb,
                                             void *data);

/**
 * Write everything queued. Blocking I/O: returns when written. External
 * I/O: the bytes become available to ffb_conn_output().
 * Round trips: 0 (the answers are read by ffb_conn_next_result()).
 * Returns: 0, fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_conn_flush(ffb_conn *conn);

/**
 * Take the next result (of requests queued without a callback), reading
 * from the network only when none is ready. `*out` is valid until the next
 * call of ffb_conn_next_result() on `conn`.
 * Round trips: 1 for the first result of a flushed batch, 0 for the rest.
 * Returns: 1 (a result), 0 (nothing pending), FFB_E_AGAIN (external I/O:
 * none has completed; feed the answers), fatal codes.
 * Since: 0.1
 */
FFB_API int ffb_conn_next_result(ffb_conn *conn, const ffb_result **out);

/** Number of queued requests whose results have not been delivered.
    Since: 0.1 */
FFB_API size_t ffb_conn_pending(const ffb_conn *conn);

/** 0 or the negative FFB_E_* code of the request. Since: 0.1 */
FFB_API int ffb_result_status(const ffb_result *res);
/** The error (NULL on success); valid as long as the result. Since: 0.1 */
FFB_API const ffb_error *ffb_result_error(const ffb_result *res);
/** enum ffb_op. Since: 0.1 */
FFB_API int ffb_result_op(const ffb_result *res);
/** The `data` given when queueing. Since: 0.1 */
FFB_API void *ffb_result_data(const ffb_result *res);
/** The statement of an FFB_OP_EXECUTE, FFB_OP_PREPARE or FFB_OP_FETCH
    result, else NULL. Since: 0.1 */
FFB_API ffb_stmt *ffb_result_stmt(const ffb_result *res);
/** Rows changed by this execution of a DML statement, -1 if unknown.
    Since: 0.1 */
FFB_API int64_t ffb_result_rows_affected(const ffb_result *res);
/** Bytes of an FFB_OP_INFO answer copied to its buffer. Since: 0.2 */
FFB_API size_t ffb_result_length(const ffb_result *res);

/* ---- bring your own I/O (opts.io = FFB_IO_EXTERNAL) --------------------- */

#define FFB_WANT_READ 1u
#define FFB_WANT_WRITE 2u

/**
 * Start connecting with external I/O: queues op_connect. The application
 * then moves bytes with ffb_conn_output()/ffb_conn_output_done() and
 * ffb_conn_feed() until ffb_conn_step() returns 1 (attached) or an error.
 * ffb_conn_start_create() creates the database instead, as
 * ffb_conn_create_database() (`copts` NULL: the defaults).
 *
 * Round trips: 0 (queues only; the connect then costs what
 * ffb_conn_connect() costs).
 * Returns: 0, FFB_E_STATE, FFB_E_INVAL (not an external-I/O connection,
 * or the options ffb_conn_new() refused), FFB_E_NOMEM.
 * Since: 0.1 (one function with an int `create` until 0.2)
 */
FFB_API int ffb_conn_start(ffb_conn *conn);
FFB_API int ffb_conn_start_create(ffb_conn *conn,
                                  const ffb_create_options *copts);

/**
 * ffb_conn_start() / ffb_conn_start_create() with a result: FFB_OP_CONNECT
 * (FFB_OP_CREATE_DATABASE) completes when the handshake ends - 0 once
 * attached, else the code and error that ended it (a refused login, a
 * timeout through ffb_conn_expire(), the peer's close through
 * ffb_conn_feed_eof()) - through `cb`, or from ffb_conn_next_result() when
 * `cb` is NULL. Requests can be queued once it has completed. The callback
 * runs inside the ffb_conn_feed(), ffb_conn_feed_eof() or ffb_conn_expire()
 * that ended the handshake.
 * Round trips: 0 (queues only; the connect costs what ffb_conn_connect()
 * costs).
 * Returns: 0, FFB_E_STATE, FFB_E_INVAL, FFB_E_NOMEM; on failure `cb` is not
 * called.
 * Since: 0.2
 */
FFB_API int ffb_conn_queue_connect(ffb_conn *conn, ffb_cb cb, void *data);
FFB_API int ffb_conn_queue_create_database(ffb_conn *conn,
                                           const ffb_create_options *copts,
                                           ffb_cb cb, void *data);

/**
 * Give received bytes to the connection. They are decrypted, inflated and
 * parsed as far as they go.
 *
 * Round trips: 0.
 * Returns: 0, or a negative code when the bytes broke the connection.
 * Since: 0.1
 */
FFB_API int ffb_conn_feed(ffb_conn *conn, const uint8_t *bytes, size_t len);

/**
 * Report that the peer closed the stream.
 * Returns: FFB_E_CLOSED (always; the connection is now broken unless it was
 * already closed politely, then 0). Since: 0.1
 */
FFB_API int ffb_conn_feed_eof(ffb_conn *conn);

/**
 * Bytes ready to be written to the peer. `*bytes_out` stays valid until the
 * next call on `conn`.
 * Round trips: 0. Since: 0.1
 */
FFB_API size_t ffb_conn_output(ffb_conn *conn, const uint8_t **bytes_out);

/** Mark `len` bytes of the output as written. Since: 0.1 */
FFB_API void ffb_conn_output_done(ffb_conn *conn, size_t len);

/** FFB_WANT_READ and/or FFB_WANT_WRITE. Since: 0.1 */
FFB_API unsigned ffb_conn_wants(const ffb_conn *conn);

/**
 * The library's clock: monotonic milliseconds (CLOCK_MONOTONIC), the scale
 * of ffb_conn_deadline() and ffb_conn_expire().
 * Round trips: 0. Since: 0.2
 */
FFB_API int64_t ffb_now_ms(void);

/**
 * When the connection next needs the time: the moment (ffb_now_ms() scale)
 * by which the connect must end (connect_timeout_ms) or the wire must move
 * (io_timeout_ms: bytes written or received while an answer is owed), or
 * -1 when no timeout runs. An application driving its own I/O waits no
 * longer than this, then calls ffb_conn_expire(); the blocking calls do the
 * same inside, so the timeouts are the same for every transport. It
 * changes with every call that queues, feeds or writes; progress counts
 * from the first call of this function after it (it reads the clock then,
 * so ask for it right before each wait).
 * Round trips: 0. Since: 0.2
 */
FFB_API int64_t ffb_conn_deadline(ffb_conn *conn);

/**
 * Tell the connection the time. When a deadline has passed the connection
 * breaks with FFB_E_TIMEOUT (an answer that is owed may still come, or
 * half of one has: nothing later on the wire could be matched with
 * certainty) and its error names what it was waiting for; earlier calls do
 * nothing.
 * Round trips: 0.
 * Returns: 0, FFB_E_TIMEOUT (the connection is now broken), or the code
 * that broke it earlier. Since: 0.2
 */
FFB_API int ffb_conn_expire(ffb_conn *conn, int64_t now_ms);

/**
 * Progress of an externally driven connect: 1 when attached, 0 while still
 * in progress, negative on failure.
 * Since: 0.1
 */
FFB_API int ffb_conn_step(ffb_conn *conn);

/**
 * Where the connection goes: the host and the port (service name or
 * number) from the dsn or the host/port options, "localhost" and "3050"
 * by default. An application driving its own I/O opens its stream there.
 *
 * Ownership: borrowed; valid as long as the connection. Never NULL ("" for
 * a NULL connection).
 * Round trips: 0. Since: 0.2
 */
FFB_API const char *ffb_conn_host(const ffb_conn *conn);
FFB_API const char *ffb_conn_port(const ffb_conn *conn);

/**
 * Report that the application's stream failed (DNS, connect, read or
 * write error; its own timeout): the connection breaks with `code` and
 * ffb_conn_error() says `message` (NULL or "": the code's text). The
 * stream's end is reported with ffb_conn_feed_eof() instead.
 *
 * Round trips: 0.
 * Returns: `code` (the connection is now broken), the code that broke it
 * earlier, FFB_E_INVAL (`code` is neither fatal nor FFB_E_TIMEOUT),
 * FFB_E_STATE (not started).
 * Since: 0.2
 */
FFB_API int ffb_conn_feed_error(ffb_conn *conn, int code,
                                const char *message);

/**
 * One pointer for the code that drives the connection's I/O (an event-loop
 * adapter keeps its state there; libfastfb_uv uses it on the connections
 * it makes). The library never reads it. NULL until set.
 *
 * Round trips: 0. Since: 0.2
 */
FFB_API void ffb_conn_set_io_data(ffb_conn *conn, void *data);
FFB_API void *ffb_conn_io_data(const ffb_conn *conn);

/* ---- reset and connection pool (lib/reset.c, lib/pool.c) --------------- */

/**
 * Make a connection clean for its next user: every transaction still
 * active is rolled back, which also closes their cursors (those of
 * auto-commit executions too) and releases their blobs on the server
 * (blobs being written are discarded). Prepared statements and the
 * statement cache are kept. Nothing is freed: the application still owns
 * its ffb_tx, ffb_stmt and ffb_blob objects; the transactions are no
 * longer active (ffb_tx_is_active() is 0). Transactions already freed
 * with ffb_tx_free() are not rolled back again (their rollback is queued).
 *
 * Ownership: nothing is retained.
 * Round trips: 1 when a transaction is active (every rollback in one
 * write), 0 when none is.
 * Returns: 0, FFB_E_INVAL (conn NULL), FFB_E_STATE (not attached, or
 * external I/O), FFB_E_SERVER (a rollback was refused; the connection
 * should not be reused), fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_conn_reset(ffb_conn *conn);

/**
 * Queue twin of ffb_conn_reset(): queues the rollbacks and returns 0; the
 * result (FFB_OP_RESET) arrives with the answer to the last of them, and
 * carries its status (the answers come in order, so all are in by then;
 * a transaction whose rollback was refused stays active, which
 * ffb_tx_is_active() shows). Returns 1 and queues nothing when no
 * transaction is active (`cb` is not called).
 * Round trips: 0 (queues only; the write then costs 1).
 * Returns: 1, 0, FFB_E_INVAL, FFB_E_STATE (not attached), fatal codes. On
 * failure `cb` is not called.
 * Since: 0.2
 */
FFB_API int ffb_conn_queue_reset(ffb_conn *conn, ffb_cb cb, void *data);

/**
 * A pool of blocking connections to one database, for threads.
 *
 * Threads: every pool function may be called from any thread at once,
 * except ffb_pool_free(). A connection acquired from the pool is used by
 * one thread at a time (the rule for every ffb_conn) until it is released.
 * Connecting, validating (op_ping), resetting and closing happen outside
 * the pool's lock, in the thread that calls into the pool when the work is
 * due; there is no background thread.
 */
typedef struct ffb_pool ffb_pool;

#define FFB_POOL_OPTIONS_VERSION 1

/**
 * Pool options. Initialise with FFB_POOL_OPTIONS_INIT or
 * ffb_pool_options_init(); fields are only ever appended. Zero means the
 * default everywhere; time limits that can be switched off are off when
 * negative.
 */
typedef struct ffb_pool_options {
    unsigned version;             /* FFB_POOL_OPTIONS_VERSION */
    const ffb_conn_options *conn; /* how to connect (required); copied
                                     with its strings by ffb_pool_new().
                                     io must be FFB_IO_BLOCKING. An
                                     allocator it names is used for the
                                     pool too and must outlive it. */
    size_t min_size;              /* connections kept open, default 0 */
    size_t max_size;              /* most connections, default 8 */
    int acquire_timeout_ms;       /* default wait of ffb_pool_acquire():
                                     30000; negative = no limit */
    int idle_timeout_ms;          /* close connections idle this long
                                     while more than min_size are open:
                                     default 600000; negative = never */
    int validate_after_ms;        /* ping a connection idle this long
                                     before handing it out: default
                                     30000; negative = never */
    int max_lifetime_ms;          /* close connections this old when they
                                     come back or before handing them
                                     out: default (0) and negative = no
                                     limit */
} ffb_pool_options;

/* C99 designated initializer; from C++ use ffb_pool_options_init(). */
#define FFB_POOL_OPTIONS_INIT                                                  \
    { .version = FFB_POOL_OPTIONS_VERSION }

/**
 * Fill `opts` with the defaults (same as FFB_POOL_OPTIONS_INIT).
 * Round trips: 0. Since: 0.2
 */
FFB_API void ffb_pool_options_init(ffb_pool_options *opts);

/**
 * Create a pool and open min_size connections (one after the other, in
 * this thread).
 *
 * Ownership: the caller frees the pool with ffb_pool_free(). The options
 * and the connection options' strings are copied.
 * Round trips: min_size connects (ffb_conn_connect(): 2 or 3 each).
 * Returns: 0, or
 *   FFB_E_INVAL   bad options (a NULL or wrong-version struct, max_size
 *                 above 4096, min_size above max_size, external I/O, a
 *                 connection option ffb_conn_new() refuses);
 *   a connect code (FFB_E_AUTH, FFB_E_IO, FFB_E_SERVER, ...) when one of
 *                 the min_size connections could not be opened;
 *   FFB_E_NOMEM.
 * With FFB_E_INVAL or a connect code `*out` is still a pool, and
 * ffb_pool_error() says what failed: after a connect failure the pool is
 * usable (it tries again when connections are needed, backing off while
 * connects keep failing); with FFB_E_INVAL every acquire fails with the
 * same error. The caller frees it either way. With FFB_E_NOMEM (or `out`
 * NULL) `*out` is NULL.
 * Since: 0.2
 */
FFB_API int ffb_pool_new(const ffb_pool_options *opts, ffb_pool **out);

/**
 * Take a connection. The most recently used idle connection is handed
 * out; one idle for validate_after_ms or longer is pinged first (and
 * closed if the ping fails); one past max_lifetime_ms is closed instead.
 * When none is idle and fewer than max_size are open, this thread
 * connects a new one; otherwise it waits, and waiting threads are served
 * in the order they came.
 *
 * `timeout_ms`: how long to wait, -1 = the pool's acquire_timeout_ms, 0 =
 * do not wait (an idle connection that needs no validation ping, else
 * FFB_E_TIMEOUT at once). A connect this thread has started is not cut short by it
 * (the connection options' connect_timeout_ms bounds that); when it ends
 * after the time, the acquire times out and the new connection stays
 * idle in the pool.
 * Ownership: the connection stays the pool's; give it back with
 * ffb_pool_release() or ffb_pool_discard() and use it in one thread at a
 * time meanwhile.
 * Round trips: 0 for an idle connection used recently; 1 (op_ping) for
 * one idle for validate_after_ms or longer; a connect (2 or 3) for a new
 * one. The thread may also run work the pool decided meanwhile (closing
 * idle connections: 0 round trips).
 * Returns: 0, or
 *   FFB_E_TIMEOUT  no connection within the time;
 *   a connect code when the connect made for this thread failed (the
 *                  pool then waits a little before connecting again);
 *   FFB_E_INVAL    NULL arguments, timeout below -1, or the pool's
 *                  options were refused.
 * ffb_pool_error() has the message of every failure.
 * Since: 0.2
 */
FFB_API int ffb_pool_acquire(ffb_pool *pool, int timeout_ms, ffb_conn **out);

/**
 * Give a connection back. It is reset (ffb_conn_reset(): every active
 * transaction is rolled back, prepared statements are kept) by this
 * thread, then handed to the oldest waiting thread or kept idle. A broken
 * connection, one whose reset fails, or one past max_lifetime_ms is closed,
 * and a new one is opened when the pool needs one (min_size, or a waiting
 * thread).
 * The application's ffb_tx, ffb_stmt and ffb_blob objects of the
 * connection stay the application's: free them before the release, or
 * know that the connection (and so they) may be freed by the pool later.
 * Round trips: 0 when no transaction is active, else 1 (the reset). The
 * thread may also run work the pool decided meanwhile: after closing a
 * broken connection, the connect (2 or 3) of its replacement for a
 * waiting thread.
 * Returns: 0, FFB_E_INVAL (NULL, or not a connection handed out by this
 * pool; nothing is done).
 * Since: 0.2
 */
FFB_API int ffb_pool_release(ffb_pool *pool, ffb_conn *conn);

/**
 * Give a connection back for closing (the application saw it fail, or left
 * it in a state it cannot undo). A new one is opened when the pool needs
 * one (by this thread when another one waits: a connect, 2 or 3).
 * Round trips: 0 for the close.
 * Returns: 0, FFB_E_INVAL (as ffb_pool_release()).
 * Since: 0.2
 */
FFB_API int ffb_pool_discard(ffb_pool *pool, ffb_conn *conn);

/**
 * Do the work that is due now: close connections idle past idle_timeout_ms
 * (down to min_size) or past max_lifetime_ms, and open connections up to
 * min_size. Every pool call does this too; call it from a timer when the
 * pool may stay untouched for long.
 * Round trips: one connect per connection opened; 0 otherwise.
 * Returns: 0, FFB_E_INVAL.
 * Since: 0.2
 */
FFB_API int ffb_pool_maintain(ffb_pool *pool);

/** Counters and gauges of a pool (ffb_pool_stats()). */
typedef struct ffb_pool_counters {
    size_t in_use; /* handed out, not released yet */
    size_t idle;
    size_t waiting;           /* threads waiting in ffb_pool_acquire() */
    size_t pending;           /* being connected, validated, reset or
                                 closed */
    size_t total;             /* open or being opened */
    uint64_t created;         /* connects that succeeded */
    uint64_t create_failures; /* connects that failed */
    uint64_t discarded;       /* closed broken: released broken, by
                                 ffb_pool_discard(), a failed validation or
                                 a failed reset */
    uint64_t evicted;         /* closed after idle_timeout_ms */
    uint64_t expired;         /* closed after max_lifetime_ms */
    uint64_t timeouts;        /* acquires that timed out */
    uint64_t failed_waits;    /* acquires failed by a failed connect */
    uint64_t validations;     /* pings of idle connections */
    uint64_t validations_failed;
    uint64_t acquired; /* connections handed out */
    uint64_t resets;   /* releases that reset the connection */
    uint64_t resets_failed;
} ffb_pool_counters;

/**
 * Copy the counters into `out`; `out_size` is sizeof(ffb_pool_counters)
 * as the caller knows it.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (NULL arguments).
 * Since: 0.2
 */
FFB_API int ffb_pool_stats(const ffb_pool *pool, ffb_pool_counters *out,
                           size_t out_size);

/** The last failure of a pool (ffb_pool_error()). */
typedef struct ffb_pool_error_info {
    int code;          /* FFB_E_*; 0 when nothing failed yet */
    uint32_t gds;      /* first gds code of a server's error, else 0 */
    char sqlstate[6];  /* "" when unknown */
    char message[512]; /* what failed and why */
    int64_t time_ms;   /* when (ffb_now_ms() scale) */
} ffb_pool_error_info;

/**
 * Copy the pool's last failure into `out`: a connect that failed (with the
 * connection's error: code, gds code, SQLSTATE, message), an acquire that
 * timed out, options that were refused, a release of a foreign
 * connection. The pool keeps one, the latest of any thread: read it right
 * after the call that failed.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (NULL arguments).
 * Since: 0.2
 */
FFB_API int ffb_pool_error(const ffb_pool *pool, ffb_pool_error_info *out,
                           size_t out_size);

/**
 * Close every connection of the pool and free it. No other thread may be
 * inside a pool call. Connections still handed out are freed too: they
 * must not be used afterwards. ffb_pool_free(NULL) does nothing.
 * Round trips: 0 (connections are freed, which writes op_disconnect
 * without waiting).
 * Since: 0.2
 */
FFB_API void ffb_pool_free(ffb_pool *pool);

/* ---- two-phase commit (docs/transactions.md) --------------------------- */

/**
 * Prepare the transaction: the first phase of a two-phase commit. The
 * server makes the transaction's work durable and marks it "in limbo":
 * from then on only ffb_tx_commit() or ffb_tx_rollback() may follow (the
 * second phase), and if the connection is lost first the transaction
 * stays in limbo in the database - its changes neither visible nor
 * undone, its record versions blocking garbage collection - until a
 * coordinator finishes it through ffb_conn_reconnect_tx().
 * `msg` (len bytes, at most 65535; NULL/0 = none) is stored with the
 * limbo transaction in RDB$TRANSACTIONS.RDB$TRANSACTION_DESCRIPTION, for
 * a coordinator to recognise its transactions after a crash (op_prepare2;
 * without a message op_prepare, and nothing is stored). The database's
 * ON TRANSACTION COMMIT triggers run here, so a prepare can fail.
 * ffb_tx_free() of a prepared transaction sends nothing: it is neither
 * committed nor rolled back, and stays in limbo when the connection ends.
 * Round trips: 1 (the start, when it has not travelled yet, rides along).
 * Returns: 0, FFB_E_INVAL (NULL tx, message too long), FFB_E_STATE (ended,
 * already prepared, not attached, external I/O: use the queue twin),
 * FFB_E_SERVER (e.g. a commit trigger raised an exception: the transaction
 * is still active and should be rolled back), fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_tx_prepare(ffb_tx *tx, const void *msg, size_t len);

/** The queue twin of ffb_tx_prepare(): the result is FFB_OP_TX_PREPARE.
    Round trips: 0 (queues only). Returns as ffb_tx_prepare() (without
    the external I/O case). Since: 0.2 */
FFB_API int ffb_tx_queue_prepare(ffb_tx *tx, const void *msg, size_t len,
                                 ffb_cb cb, void *data);

/** 1 when the transaction was prepared (its prepare's answer came) or
    was reconnected in limbo, and has not ended. Round trips: 0.
    Since: 0.2 */
FFB_API int ffb_tx_is_prepared(const ffb_tx *tx);

/** The database info item listing limbo transactions (isc_info_limbo). */
#define FFB_INFO_LIMBO 16

/**
 * The numbers of the database's limbo transactions: prepared, never
 * committed or rolled back (op_info_database with isc_info_limbo). The
 * first `max` go to `ids` (may be NULL when max is 0); *count gets how
 * many were stored. A transaction prepared on a connection that is still
 * attached makes the server wait until that connection ends or finishes
 * it.
 * Round trips: 1.
 * Returns: 0 (all listed), 1 (more than `max`: ask again with more room),
 * FFB_E_INVAL, FFB_E_STATE (not attached, external I/O: queue
 * ffb_conn_queue_info() with the item FFB_INFO_LIMBO and decode the answer
 * with ffb_limbo_parse()), FFB_E_SERVER, FFB_E_PROTO (a malformed answer:
 * the connection breaks), fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_conn_limbo(ffb_conn *conn, int64_t *ids, size_t max,
                           size_t *count);

/**
 * Decode an op_info_database answer to the single item FFB_INFO_LIMBO
 * (from ffb_conn_queue_info() or ffb_conn_info_raw()) as ffb_conn_limbo()
 * does. Nothing is written when the answer is malformed.
 * Round trips: 0.
 * Returns: 0, 1 (more than `max`, or the answer was truncated: ask with
 * a larger buffer - 11 bytes per transaction and 1 more suffice),
 * FFB_E_INVAL, FFB_E_PROTO (malformed).
 * Since: 0.2
 */
FFB_API int ffb_limbo_parse(const uint8_t *answer, size_t len, int64_t *ids,
                            size_t max, size_t *count);

/**
 * Reconnect to limbo transaction `id` (op_reconnect), for recovery: the
 * transaction it gives may only be committed or rolled back
 * (ffb_tx_commit(), ffb_tx_rollback() and their queue twins), which
 * finishes the limbo transaction in the database. Queued like
 * ffb_tx_begin(): the request travels with that commit or rollback, so
 * recovering one transaction costs 1 round trip. When the server refuses
 * (the transaction is not in limbo: already committed, rolled back,
 * active, or unknown: isc_no_recon with isc_tra_state), that commit or
 * rollback fails with FFB_E_ABORTED and the server's status.
 * Round trips: 0 (queues only).
 * Returns: 0, FFB_E_INVAL (id not positive), FFB_E_STATE (not attached),
 * FFB_E_NOMEM.
 * Since: 0.2
 */
FFB_API int ffb_conn_reconnect_tx(ffb_conn *conn, int64_t id, ffb_tx **out);

/*
 * A distributed transaction: one transaction on each of several
 * connections (databases), committed together with two-phase commit.
 * The application is the coordinator; docs/transactions.md lists its
 * obligations: record each participant's database and transaction
 * number (ffb_dtx_tx_id()) and the decision durably between
 * ffb_dtx_prepare() and ffb_dtx_commit(), and after a crash finish every
 * limbo transaction by that record (ffb_conn_limbo(),
 * ffb_conn_reconnect_tx()). The blocking calls write to every connection
 * before waiting for any: each phase costs 1 round trip per connection,
 * and the connections' round trips overlap. With external I/O, use the
 * queue twins of each participant's transaction (ffb_tx_queue_prepare(),
 * ffb_tx_queue_commit(), ffb_tx_queue_rollback()) instead.
 */
typedef struct ffb_dtx ffb_dtx;

/**
 * Start a transaction with `opts` (NULL: the defaults) on each of the `n`
 * connections (1..64); nothing waits (as ffb_tx_begin()). Run statements
 * in ffb_dtx_tx(d, i).
 * Ownership: the caller frees it with ffb_dtx_free(), before the
 * connections.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (a connection not attached),
 * FFB_E_NOMEM (nothing is started then).
 * Since: 0.2
 */
FFB_API int ffb_dtx_begin(ffb_conn *const *conns, size_t n,
                          const ffb_tx_options *opts, ffb_dtx **out);

/** The participants; the transaction of participant `i` (NULL when out
    of range; it belongs to the dtx: do not free it). Round trips: 0.
    Since: 0.2 */
FFB_API size_t ffb_dtx_count(const ffb_dtx *d);
FFB_API ffb_tx *ffb_dtx_tx(const ffb_dtx *d, size_t i);

/**
 * Phase one: prepare every participant with the message `msg` (as
 * ffb_tx_prepare()), asking each for its transaction number in the same
 * write (ffb_dtx_tx_id()). When any prepare fails, every participant is
 * rolled back (one more round trip) and the failure is returned
 * (ffb_dtx_failed(), ffb_dtx_error() say where and why).
 * Round trips: 1 per connection, overlapping (2 when a prepare failed).
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (not active), the failing
 * participant's code (FFB_E_SERVER, FFB_E_ABORTED, fatal codes).
 * Since: 0.2
 */
FFB_API int ffb_dtx_prepare(ffb_dtx *d, const void *msg, size_t len);

/** The transaction number of participant `i` read by ffb_dtx_prepare()
    (0 before, or out of range). Round trips: 0. Since: 0.2 */
FFB_API int64_t ffb_dtx_tx_id(const ffb_dtx *d, size_t i);

/**
 * Phase two: commit every participant. Not prepared yet: ffb_dtx_prepare()
 * without a message first (and its rollback when that fails). When a
 * commit fails, participants already committed stay committed; the one
 * that failed stays prepared: call ffb_dtx_commit() again (only the
 * participants not yet committed are sent), or recover it later with
 * ffb_conn_reconnect_tx(). Never roll back after a commit was decided.
 * Round trips: 1 per connection, overlapping (2 without a prior prepare).
 * Returns: 0, FFB_E_STATE (rolled back or committed already), the failing
 * participant's code.
 * Since: 0.2
 */
FFB_API int ffb_dtx_commit(ffb_dtx *d);

/**
 * Roll back every participant (prepared or not).
 * Round trips: 1 per connection, overlapping.
 * Returns: 0, FFB_E_STATE (ended, or a participant committed already:
 * finish with ffb_dtx_commit()), the failing participant's code.
 * Since: 0.2
 */
FFB_API int ffb_dtx_rollback(ffb_dtx *d);

/** The participant whose failure the last dtx call returned (-1: none),
    and that failure (NULL: none; valid until the next dtx call).
    Round trips: 0. Since: 0.2 */
FFB_API int ffb_dtx_failed(const ffb_dtx *d);
FFB_API const ffb_error *ffb_dtx_error(const ffb_dtx *d);

/**
 * Free the dtx and its transactions (ffb_tx_free() each: an active one is
 * rolled back with the connection's next request, a prepared one is left
 * in limbo). NULL is fine.
 * Round trips: 0.
 * Since: 0.2
 */
FFB_API void ffb_dtx_free(ffb_dtx *d);

/* ---- database encryption keys (docs/crypto.md) ------------------------ */

/**
 * The type of ffb_conn_options.crypt_key_cb. A database encrypted with a
 * crypt plugin whose key holder takes keys from the client makes the
 * server ask the application for key material while it opens the
 * database (op_crypt_key_callback, before the answer to the attach or
 * create; with an encrypted security database also before the accept or
 * during the login). The callback gets the key holder's request
 * (`request`, request_len bytes: e.g. the key's name; at most 1 MiB) and
 * writes its answer to `reply`, at most `reply_size` bytes (1..32767: the
 * size the server accepts, from the packet on protocol 14+; 32767 on
 * protocol 13, which does not send it - the server cuts a longer answer).
 * Returns the number of bytes written (0 = none: the server then
 * decides whether it can open the database), or a negative value to
 * refuse: the connect then fails with FFB_E_CRYPT. More than reply_size
 * also fails it (FFB_E_CRYPT). It runs inside the call that moves the
 * connection's bytes (ffb_conn_connect(), ffb_conn_feed(), the loop of
 * libfastfb_uv) and must not call libfastfb on that connection. Without
 * a callback the library answers with no data, as fbclient does. A server
 * asking more than 16 times in one connect breaks it (FFB_E_PROTO).
 * The library wipes its copy of the answer once it is encoded.
 * Round trips: each request costs one (the server waits for the answer).
 * Since: 0.2
 */
typedef int (*ffb_crypt_key_fn)(void *data, const uint8_t *request,
                                size_t request_len, uint8_t *reply,
                                size_t reply_size);

/** The largest key answer a server accepts (p_cc_reply is a short). */
#define FFB_CRYPT_KEY_MAX 32767
/* ==== Services API (service manager: backup, restore, statistics, ...) ====
 *
 * A service attachment is an ffb_conn attached to the server's service
 * manager instead of a database: the same options, the same handshake
 * (authentication, wire encryption, compression), ffb_conn_close() and
 * ffb_conn_free(). The connection's `database` option (or the path of its
 * dsn) is the database the actions below work on when they are given
 * NULL. Only the calls of this section may be used on it. One action runs
 * at a time on an attachment; see docs/services.md.
 */

/**
 * Connect to the service manager of the server named by the options:
 * op_connect names "service_mgr", then the login as for ffb_conn_connect()
 * and op_service_attach.
 * Round trips: as ffb_conn_connect(): 3 with wire encryption, 2 without.
 * Returns: as ffb_conn_connect().
 * Since: 0.2
 */
FFB_API int ffb_svc_connect(ffb_conn *conn);

/**
 * Queue twin of ffb_svc_connect() for external I/O (as
 * ffb_conn_queue_connect(): the FFB_OP_CONNECT result completes when the
 * handshake ends).
 * Round trips: as ffb_svc_connect(). Returns: 0, FFB_E_INVAL, FFB_E_STATE.
 * Since: 0.2
 */
FFB_API int ffb_svc_queue_connect(ffb_conn *conn, ffb_cb cb, void *data);

/** What the service manager says about the server. Strings are empty and
    numbers -1 when the server did not answer the item. */
typedef struct ffb_svc_info {
    int version;              /* isc_info_svc_version (2) */
    int capabilities;         /* isc_info_svc_capabilities bit mask */
    char server_version[128]; /* "LI-V4.0.5.3140 Firebird 4.0" */
    char implementation[128]; /* "Firebird/Linux/AMD/Intel/x64" */
    char env[1024];           /* root directory (isc_info_svc_get_env) */
    char env_lock[1024];      /* lock files directory */
    char env_msg[1024];       /* directory of firebird.msg */
    char user_dbpath[1024];   /* the security database */
    int attachments;          /* isc_info_svc_svr_db_info: attachments */
    int databases;            /* ... databases in use */
} ffb_svc_info;

/**
 * Ask the server version, implementation, capabilities, its paths and the
 * number of attachments and databases in use, in one op_service_info.
 * `out_size` = sizeof(*out) (structs of older versions are filled as far
 * as they go).
 * Round trips: 1.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (not a service attachment, or an
 * action is running), FFB_E_SERVER (a user without administrator rights
 * is refused the paths and the database list; `out` still gets the
 * version, implementation and capabilities), FFB_E_PROTO (malformed
 * answer: fatal), FFB_E_IO, ...
 * Since: 0.2
 */
FFB_API int ffb_svc_server_info(ffb_conn *conn, ffb_svc_info *out,
                                size_t out_size);

/**
 * Queue twin: the FFB_OP_SVC_INFO result completes with `out` filled
 * (`out` must stay valid until then).
 * Round trips: 1. Returns: 0 queued, or the errors of ffb_svc_server_info
 * that are found before anything is sent.
 * Since: 0.2
 */
FFB_API int ffb_svc_queue_server_info(ffb_conn *conn, ffb_svc_info *out,
                                      size_t out_size, ffb_cb cb, void *data);

/** Text output: one line without its newline (not NUL-terminated), valid
    during the call. Return 0 to go on, non-zero to cancel the action (as
    ffb_svc_cancel()). */
typedef int (*ffb_svc_line_cb)(const char *line, size_t len, void *data);
/** Binary output (a backup stream): `len` bytes, valid during the call.
    Return 0 to go on, non-zero to cancel. */
typedef int (*ffb_svc_data_cb)(const uint8_t *p, size_t len, void *data);
/** Input (a restore stream): copy up to `size` bytes to `buf`, set *got;
    *got = 0 ends the input. Return 0, or non-zero to cancel. */
typedef int (*ffb_svc_input_cb)(uint8_t *buf, size_t size, size_t *got,
                                void *data);

/** How an action talks to the client. Any callback may be NULL. */
#define FFB_SVC_IO_VERSION 1
typedef struct ffb_svc_io {
    unsigned version;          /* FFB_SVC_IO_VERSION (FFB_SVC_IO_INIT) */
    ffb_svc_line_cb on_line;   /* text output (statistics, log, verbose) */
    ffb_svc_data_cb on_data;   /* set: the output is binary, not lines */
    ffb_svc_input_cb on_input; /* set: the service's stdin is served */
    void *data;                /* passed to every callback */
    unsigned wait_s;           /* the longest each query waits on the
                                  server for output (isc_info_svc_timeout);
                                  0 = until the answer is full or the
                                  service ends (fewest round trips) */
} ffb_svc_io;

/* C99 designated initializer; fields added later are zero by default. */
#define FFB_SVC_IO_INIT {.version = FFB_SVC_IO_VERSION}

/** Counters of the last action on an attachment. */
typedef struct ffb_svc_stats {
    uint64_t queries;    /* op_service_info requests sent */
    uint64_t bytes_out;  /* output bytes received (text or binary) */
    uint64_t bytes_in;   /* input bytes sent */
    uint64_t lines;      /* text lines delivered */
} ffb_svc_stats;

/**
 * Run a service action: op_service_start with `spb` (the "SpbStart" block:
 * action byte, then its arguments - reference 03, C.6.3), then
 * op_service_info requests (1-second server wait, 64 KiB answers) until
 * the service has produced all its output and, with io->on_input, taken
 * its input. Output comes to io->on_data (binary) or io->on_line (lines).
 * After a failed start the attachment is drained (one query more) so that
 * the next action can start.
 * Round trips: 1 (start) + one per query; ffb_svc_last_stats() counts the
 * queries. A short text action (statistics -h, a sweep) takes 1 + 1.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (not a service attachment; another
 * action is running; the attachment is in data mode after a streamed
 * backup and the action writes text), FFB_E_SERVER (the server refused or
 * the service failed: the first error), FFB_E_CANCELLED (cancelled, by
 * ffb_svc_cancel() or a callback), FFB_E_UNSUPPORTED (a callback asked to
 * cancel on a server that cannot: the action ran to its end), fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_svc_run(ffb_conn *conn, const uint8_t *spb, size_t spb_len,
                        const ffb_svc_io *io);

/**
 * Queue twin of ffb_svc_run(): the FFB_OP_SVC_ACTION result completes when
 * the action has ended; callbacks run while answers are handled. `io` is
 * copied; the SPB too.
 * Round trips: as ffb_svc_run(). Returns: 0, or the errors found before
 * anything is sent.
 * Since: 0.2
 */
FFB_API int ffb_svc_queue_run(ffb_conn *conn, const uint8_t *spb,
                              size_t spb_len, const ffb_svc_io *io, ffb_cb cb,
                              void *data);

/**
 * Cancel the running action: op_cancel (fb_cancel_raise) rides with the
 * next query, and the action ends with FFB_E_CANCELLED once the service
 * has stopped. Call it from a callback of the action (or, with external
 * I/O, between pumps) - not from another thread.
 * Round trips: 0 (the op_cancel is never answered).
 * Returns: 0, FFB_E_STATE (no action running), FFB_E_UNSUPPORTED (Firebird
 * 3.0 and 4.0.0-4.0.1 ignore op_cancel on a service: protocol 15, or a
 * server version seen by ffb_svc_server_info() older than 4.0.2).
 * Since: 0.2
 */
FFB_API int ffb_svc_cancel(ffb_conn *conn);

/** Counters of the last action (0s before the first). Round trips: 0.
    Returns: 0, FFB_E_INVAL. Since: 0.2 */
FFB_API int ffb_svc_last_stats(const ffb_conn *conn, ffb_svc_stats *out,
                               size_t out_size);

/* Statistics options (isc_spb_sts_*): gstat -d -l -h -i -s -r -e. */
#define FFB_SVC_STATS_DATA 0x01
#define FFB_SVC_STATS_LOG 0x02
#define FFB_SVC_STATS_HEADER 0x04
#define FFB_SVC_STATS_INDEX 0x08
#define FFB_SVC_STATS_SYSTEM 0x10
#define FFB_SVC_STATS_VERSIONS 0x20
#define FFB_SVC_STATS_ENCRYPTION 0x100

/**
 * Database statistics (isc_action_svc_db_stats, the text of gstat):
 * FFB_SVC_STATS_HEADER is gstat -h, DATA|INDEX is gstat -a. `db` NULL:
 * the connection's database.
 * Round trips: 1 + queries (2 for -h on a small database).
 * Returns: as ffb_svc_run(). Since: 0.2
 */
FFB_API int ffb_svc_db_stats(ffb_conn *conn, const char *db, unsigned options,
                             ffb_svc_line_cb on_line, void *data);

/** firebird.log, line by line (isc_action_svc_get_fb_log).
    Round trips: 1 + queries. Returns: as ffb_svc_run(). Since: 0.2 */
FFB_API int ffb_svc_fb_log(ffb_conn *conn, ffb_svc_line_cb on_line,
                           void *data);

/** Online validation (isc_action_svc_validate, Firebird 3.0+): its report
    lines. Round trips: 1 + queries. Returns: as ffb_svc_run(). Since: 0.2 */
FFB_API int ffb_svc_validate(ffb_conn *conn, const char *db,
                             ffb_svc_line_cb on_line, void *data);

/* Repair options (isc_spb_rpr_*): gfix -v -sweep -mend -full ... */
#define FFB_SVC_REPAIR_VALIDATE 0x01
#define FFB_SVC_REPAIR_SWEEP 0x02
#define FFB_SVC_REPAIR_MEND 0x04
#define FFB_SVC_REPAIR_CHECK 0x10
#define FFB_SVC_REPAIR_IGNORE_CHECKSUM 0x20
#define FFB_SVC_REPAIR_KILL_SHADOWS 0x40
#define FFB_SVC_REPAIR_FULL 0x80

/** Repair / offline validation / sweep (isc_action_svc_repair with
    `options`). Round trips: 1 + queries (a sweep: 2). Returns: as
    ffb_svc_run(). Since: 0.2 */
FFB_API int ffb_svc_repair(ffb_conn *conn, const char *db, unsigned options,
                           ffb_svc_line_cb on_line, void *data);

/** Sweep the database (ffb_svc_repair with FFB_SVC_REPAIR_SWEEP).
    Round trips: 2 (start + the query that sees the end). Since: 0.2 */
FFB_API int ffb_svc_sweep(ffb_conn *conn, const char *db);

/* Shutdown modes for ffb_svc_properties.shutdown / .online. */
#define FFB_SVC_MODE_NORMAL 0
#define FFB_SVC_MODE_MULTI 1
#define FFB_SVC_MODE_SINGLE 2
#define FFB_SVC_MODE_FULL 3

/** Database properties to change (isc_action_svc_properties); -1 leaves
    a field unchanged. Initialise with ffb_svc_properties_init(). */
typedef struct ffb_svc_properties {
    int sweep_interval;  /* transactions; 0 = no automatic sweep */
    int page_buffers;
    int forced_writes;   /* 1 sync writes, 0 async */
    int read_only;       /* 1 read-only, 0 read-write */
    int shutdown;        /* FFB_SVC_MODE_MULTI/SINGLE/FULL: shut down ... */
    int shutdown_timeout;/* ... forcibly after this many seconds (0 = now) */
    int online;          /* FFB_SVC_MODE_NORMAL/MULTI/SINGLE: bring online */
} ffb_svc_properties;

/** All fields -1. Round trips: 0. Since: 0.2 */
FFB_API void ffb_svc_properties_init(ffb_svc_properties *p);

/** Change database properties in one action (the server applies them in
    its order). Round trips: 2 (start + the query that sees the end).
    Returns: as ffb_svc_run(); FFB_E_INVAL when nothing is set. Since: 0.2 */
FFB_API int ffb_svc_set_properties(ffb_conn *conn, const char *db,
                                   const ffb_svc_properties *p);

/**
 * Back the database up, streamed to the client (isc_action_svc_backup to
 * "stdout", read with isc_info_svc_to_eof): the gbak stream comes to
 * on_data in chunks. Afterwards the attachment is in data mode (the server
 * drops text output on it): text actions then fail with FFB_E_STATE -
 * use a new attachment. Verbose lines are not available in this mode.
 * `options`: isc_spb_bkp_* flags (0 = none).
 * Round trips: 1 + queries (about one per 64 KiB; FB3/FB4 often answer
 * 1 KiB chunks while the service runs).
 * Returns: as ffb_svc_run(). Since: 0.2
 */
FFB_API int ffb_svc_backup(ffb_conn *conn, const char *db, unsigned options,
                           ffb_svc_data_cb on_data, void *data);

/** ffb_svc_backup() into a local file (created or truncated; "-" is
    stdout). Round trips: as ffb_svc_backup(). Returns: as it, FFB_E_IO when
    the file cannot be written (the action is cancelled where the server
    allows). Since: 0.2 */
FFB_API int ffb_svc_backup_to_file(ffb_conn *conn, const char *db,
                                   const char *path);

/**
 * Restore a gbak stream sent from the client (isc_action_svc_restore from
 * "stdin", answering isc_info_svc_stdin requests - reference 03, C.6.6)
 * into the database `target` (a path or alias on the server; NULL: the
 * connection's database option). `replace`:
 * overwrite an existing database (else it must not exist). on_line gets the
 * verbose lines when non-NULL (isc_spb_verbose).
 * Round trips: 1 + queries (about one per 64 KiB of input, plus the
 * output's).
 * Returns: as ffb_svc_run(). Since: 0.2
 */
FFB_API int ffb_svc_restore(ffb_conn *conn, const char *target, int replace,
                            ffb_svc_input_cb on_input,
                            ffb_svc_line_cb on_line, void *data);

/** ffb_svc_restore() from a local file ("-" is stdin). Round trips: as
    ffb_svc_restore(). Returns: as it, FFB_E_IO when the file cannot be
    read. Since: 0.2 */
FFB_API int ffb_svc_restore_from_file(ffb_conn *conn, const char *path,
                                      const char *target, int replace,
                                      ffb_svc_line_cb on_line, void *data);

/**
 * Queue twins of ffb_svc_db_stats(), ffb_svc_backup(), ffb_svc_restore()
 * and ffb_svc_set_properties() (the log, validation, repair and sweep go
 * through ffb_svc_queue_run() with their start block): the start block is
 * built and queued now, the FFB_OP_SVC_ACTION result completes when the
 * action has ended, and the stream callbacks (which get `line_data` /
 * `stream_data`) run while its answers are handled; they must stay valid
 * until then.
 * Round trips: as the blocking calls. Returns: 0 queued, or the errors
 * found before anything is sent (FFB_E_INVAL, FFB_E_STATE).
 * Since: 0.2
 */
FFB_API int ffb_svc_queue_db_stats(ffb_conn *conn, const char *db,
                                   unsigned options, ffb_svc_line_cb on_line,
                                   void *line_data, ffb_cb cb, void *data);
FFB_API int ffb_svc_queue_backup(ffb_conn *conn, const char *db,
                                 unsigned options, ffb_svc_data_cb on_data,
                                 void *stream_data, ffb_cb cb, void *data);
FFB_API int ffb_svc_queue_restore(ffb_conn *conn, const char *target,
                                  int replace, ffb_svc_input_cb on_input,
                                  ffb_svc_line_cb on_line, void *stream_data,
                                  ffb_cb cb, void *data);
FFB_API int ffb_svc_queue_set_properties(ffb_conn *conn, const char *db,
                                         const ffb_svc_properties *p,
                                         ffb_cb cb, void *data);
/* ---- events (POST_EVENT notifications) --------------------------------- */

/*
 * Firebird events: a trigger or procedure runs POST_EVENT 'name'; when its
 * transaction commits, every attachment that registered interest in that
 * name is told how many times it was posted. libfastfb delivers each
 * notification to a callback as a DELTA: the number of posts since the
 * previous delivery (several commits before a delivery are coalesced into
 * one callback with their sum). docs/events.md has the design.
 *
 * The server sends notifications on a second, auxiliary TCP connection
 * that the library opens the first time a name is registered on an
 * attachment (op_connect_request), towards the port the server announces
 * and the same address as the main connection. The aux connection is
 * plain TCP even when the main connection is encrypted or compressed (the
 * server never encrypts it): event names and counts travel in clear.
 * There is one aux connection per attachment, never a second; it closes
 * when the attachment ends (ffb_conn_close(), ffb_conn_free(), a new
 * connect), or when the server ends it. After a new connect, register
 * again: that opens a new one.
 *
 * With FFB_IO_EXTERNAL the application connects the aux socket itself
 * (to ffb_events_aux_port() on the main connection's host, as soon as it
 * is known) and feeds what it reads with ffb_events_feed().
 */
typedef struct ffb_events ffb_events;

/** A notification: `name` (NUL-terminated, as registered) was posted
    `count` times (>= 1) since the previous callback for it. Inside, as in
    a result callback, the connection may not be closed or freed, nor the
    events object freed or waited on; other calls are allowed (the queue
    twins, and the blocking ffb_events_unregister()). */
typedef void (*ffb_event_cb)(ffb_events *ev, const char *name,
                             uint32_t count, void *data);

/**
 * The events object of a connection: at most one per connection (a second
 * call answers FFB_E_STATE), so that the attachment never asks for a
 * second aux connection. Nothing is sent.
 * Ownership: ffb_events_free(), or ffb_conn_free() frees it with the
 * connection.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (the connection has one), FFB_E_NOMEM.
 * Since: 0.2
 */
FFB_API int ffb_events_new(ffb_conn *conn, ffb_events **out);

/**
 * Register interest in event `name` (1..255 bytes, compared exactly, case
 * sensitive; trailing blanks are not significant to the server) and call
 * `cb` for its notifications. The server answers a new registration at
 * once, on the aux connection, with the current count: the call waits for
 * that baseline (no callback for it) and re-registers, so that every post
 * committed after it returns is delivered. Registering a name again only
 * replaces its callback. Callbacks of other names may run inside.
 * Round trips: 2 - op_que_events (the first registration of an
 * attachment: op_connect_request + op_que_events in one write, then the
 * aux TCP connect, which ffb_stats.round_trips does not count), then the
 * re-registration after the baseline. 0 when the name was registered.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (not attached, external I/O,
 * inside an event callback), FFB_E_SERVER, FFB_E_IO (the aux connection
 * could not be opened: the server is told with op_abort_aux_connection
 * and events stay unusable on this attachment), FFB_E_TIMEOUT (no
 * baseline within io_timeout_ms, default 60 s), fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_events_register(ffb_events *ev, const char *name,
                                ffb_event_cb cb, void *data);

/**
 * Queue twin of ffb_events_register(): an FFB_OP_EVENTS result follows,
 * unless it returns 1 (the name was registered already: only its callback
 * is replaced). The first registration of an attachment queues op_connect_request too;
 * the aux connection must then be connected as soon as
 * ffb_events_aux_port() is non-zero (the server serves nothing else on the
 * main connection until it is), which is why a blocking connection takes
 * this twin only once its aux connection is open (FFB_E_STATE before).
 * Round trips: 0 (queues only).
 * Returns: 0, 1, FFB_E_INVAL, FFB_E_STATE, FFB_E_NOMEM.
 * Since: 0.2
 */
FFB_API int ffb_events_queue_register(ffb_events *ev, const char *name,
                                      ffb_event_cb cb, void *data,
                                      ffb_cb done, void *done_data);

/**
 * Stop the notifications of `name` (op_cancel_events). A notification
 * already on its way is dropped. 1 when nothing had to be sent (the name
 * is not registered, or its request is not queued on the server).
 * Round trips: 1 (0 when it returns 1).
 * Returns: 0, 1, FFB_E_INVAL, FFB_E_STATE, FFB_E_SERVER, fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_events_unregister(ffb_events *ev, const char *name);

/** Queue twin of ffb_events_unregister(): an FFB_OP_EVENTS result follows
    unless it returns 1. Round trips: 0. Since: 0.2 */
FFB_API int ffb_events_queue_unregister(ffb_events *ev, const char *name,
                                        ffb_cb done, void *done_data);

/**
 * Wait up to `timeout_ms` (-1: no limit) for notifications on the aux
 * connection and deliver them (callbacks run inside). Each delivery is
 * re-registered at once with the counts just seen (op_que_events on the
 * main connection, all names of one read in one write), and the call
 * returns once those answers are in.
 * Round trips: 1 per read that delivered (the re-registration); 0 on
 * timeout.
 * Returns: the number of callbacks made (>= 1), FFB_E_TIMEOUT (nothing
 * within the time; the connection is unaffected), FFB_E_STATE (external
 * I/O, no aux connection), FFB_E_CLOSED (the aux connection ended: the
 * attachment is gone), FFB_E_PROTO (the server sent garbage on the aux
 * connection; it is closed), fatal codes of the main connection.
 * Since: 0.2
 */
FFB_API int ffb_events_wait(ffb_events *ev, int timeout_ms);

/** The aux connection's socket to poll for reading (blocking I/O), then
    call ffb_events_wait(ev, 0); -1 when there is none. Round trips: 0.
    Since: 0.2 */
FFB_API int ffb_events_fd(const ffb_events *ev);

/** The TCP port the server announced for the aux connection, 0 while
    none is known (or after the attachment ended). With FFB_IO_EXTERNAL
    the application connects to it on the main connection's host.
    Round trips: 0. Since: 0.2 */
FFB_API int ffb_events_aux_port(const ffb_events *ev);

/**
 * External I/O: give the bytes read from the aux socket. Complete
 * notifications are delivered (callbacks run inside) and their
 * re-registrations queued on the main connection (pump it as usual);
 * incomplete packets are kept. `len` 0 means end of file (the attachment
 * is gone).
 * Round trips: 0.
 * Returns: the number of callbacks made (>= 0), FFB_E_INVAL, FFB_E_STATE
 * (no aux connection expected), FFB_E_CLOSED (end of file), FFB_E_PROTO
 * (garbage: the events object stops), FFB_E_NOMEM.
 * Since: 0.2
 */
FFB_API int ffb_events_feed(ffb_events *ev, const void *data, size_t len);

/** The connection of an events object. Round trips: 0. Since: 0.2 */
FFB_API ffb_conn *ffb_events_conn(const ffb_events *ev);

/** The events object of a connection (NULL: none). Round trips: 0.
    Since: 0.2 */
FFB_API ffb_events *ffb_conn_events(const ffb_conn *conn);

/**
 * External I/O: the aux socket could not be connected. The server, which
 * waits for it, is told (op_abort_aux_connection: no answer; pump the
 * main connection as usual), and events stay unusable on this attachment
 * (a registration queued with it fails with the server's
 * isc_net_event_connect_err).
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (no aux connection being opened),
 * fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_events_aux_abort(ffb_events *ev);

/**
 * Free the events object: registered names are cancelled (one write, all
 * op_cancel_events together; on a blocking connection their answers are
 * waited for). The aux connection stays open until the attachment ends
 * (closing it earlier is not noticed by the server; Firebird 4.0.5 with
 * compression sent garbage on the main connection after it), and a new
 * events object cannot register on the same attachment (FFB_E_STATE): that
 * would need a second op_connect_request. ffb_events_free(NULL) does
 * nothing.
 * Round trips: 1 when names were registered on a blocking attached
 * connection, else 0.
 * Since: 0.2
 */
FFB_API void ffb_events_free(ffb_events *ev);
/* ---- cancellation and timeouts (docs/cancel.md) ------------------------- */

/** What ffb_conn_cancel() asks the server (the op_cancel kinds). */
enum ffb_cancel_kind {
    FFB_CANCEL_DISABLE = 1, /* ignore later raises until ENABLE; clears a
                               pending one */
    FFB_CANCEL_ENABLE = 2,  /* honour raises again */
    FFB_CANCEL_RAISE = 3,   /* cancel the call running in the attachment:
                               it fails with FFB_E_CANCELLED, the
                               connection stays usable */
    FFB_CANCEL_ABORT = 4    /* shut the attachment down: the running call,
                               or the next one, fails with FFB_E_SHUTDOWN
                               and the connection is broken */
};

/**
 * Send op_cancel of `kind` (enum ffb_cancel_kind) to the server. The
 * server never answers it; its effect shows in the call it interrupts.
 *
 * Threads: with the socket driver (io FFB_IO_BLOCKING) this is the one
 * call that may be made from ANY thread, while a blocking call runs on
 * the connection in another: it only records the request (atomically)
 * and wakes that call's wait; the blocking loop then writes op_cancel,
 * in order through compression and wire encryption, in a write of its
 * own ahead of anything else staged. With no blocking call running, the
 * request waits for the next one and goes out first (a raise then finds
 * nothing to cancel). It may be called from the moment ffb_conn_new()
 * returned until ffb_conn_free() starts, never concurrently with
 * ffb_conn_free(). With FFB_IO_EXTERNAL (and on a connection of
 * ffb_uv_conn_new(), on the loop's thread) the application calls it on
 * its own thread like every other call: op_cancel is written to the
 * output at once (ffb_conn_wants() then reports FFB_WANT_WRITE); other
 * threads use ffb_uv_conn_cancel() (fastfb_uv.h).
 *
 * Round trips: 0 (no answer exists; it rides the wire alone).
 * Returns: 0, FFB_E_INVAL (NULL or an unknown kind), FFB_E_STATE (external
 * I/O: not attached), FFB_E_AGAIN (blocking: 8 requests already wait to
 * be written). A request that reaches the loop while the connection is
 * not attached is dropped.
 * Since: 0.2
 */
FFB_API int ffb_conn_cancel(ffb_conn *conn, int kind);

/**
 * Statement timeout in milliseconds (0 = none) sent with every later
 * execution of this statement (the op_execute timeout field, protocol 16:
 * Firebird 4 and later). When it expires the execution or the fetch fails
 * with FFB_E_STMT_TIMEOUT and the connection stays usable. The timer runs
 * from the execution (or cursor open) until the execution ends or the
 * last row is fetched; a non-zero value replaces the attachment's value
 * (ffb_conn_set_statement_timeout()), even a smaller one. A statement
 * from the connection's cache forgets it when it goes back to the cache.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_UNSUPPORTED (a server below protocol 16,
 * e.g. Firebird 3; ms 0 is always accepted).
 * Since: 0.2
 */
FFB_API int ffb_stmt_set_timeout(ffb_stmt *stmt, uint32_t ms);

/**
 * The attachment's statement timeout in milliseconds (0 = none), for every
 * statement without a timeout of its own: SET STATEMENT TIMEOUT <ms>
 * MILLISECOND, outside any transaction (Firebird has no DPB item for it).
 * Expiry: FFB_E_STMT_TIMEOUT, the connection stays usable.
 * Round trips: 1.
 * Returns: 0, FFB_E_UNSUPPORTED (Firebird 3: protocol below 16; nothing is
 * sent), FFB_E_STATE, FFB_E_SERVER, fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_conn_set_statement_timeout(ffb_conn *conn, uint32_t ms);

/**
 * The attachment's idle timeout in SECONDS (0 = none): SET SESSION IDLE
 * TIMEOUT <s> SECOND (the unit is always written: the statement's default
 * unit is MINUTE). When the attachment stays idle that long the server
 * ends it silently; the next call fails with FFB_E_SHUTDOWN (status
 * isc_att_shutdown + isc_att_shut_idle) and the connection is broken.
 * Round trips: 1.
 * Returns: as ffb_conn_set_statement_timeout().
 * Since: 0.2
 */
FFB_API int ffb_conn_set_idle_timeout(ffb_conn *conn, uint32_t seconds);
/* ==== scrollable cursors (protocol 18, Firebird 5) ======================= */

/**
 * Where ffb_stmt_fetch_scroll() moves (P_FETCH of the wire protocol).
 * Positions are the server's: 1-based row numbers; after a move past either
 * end the cursor is before the first / after the last row.
 */
enum ffb_fetch_op {
    FFB_FETCH_NEXT = 0,     /* the next `rows` rows */
    FFB_FETCH_PRIOR = 1,    /* the previous `rows` rows, backwards */
    FFB_FETCH_FIRST = 2,    /* row 1 */
    FFB_FETCH_LAST = 3,     /* the last row */
    FFB_FETCH_ABSOLUTE = 4, /* row `pos`; pos < 0 counts from the end (-1 =
                               the last row); 0 = before the first (no row) */
    FFB_FETCH_RELATIVE = 5  /* `pos` rows from the current one (0 = re-read
                               it) */
};

/**
 * Make the statement's next executions open a scrollable cursor (cursor
 * flags CURSOR_TYPE_SCROLLABLE in op_execute); `on` 0 goes back to
 * forward-only. A scrollable cursor's result is materialised on the
 * server as it is read. The execution's first fetch still travels with
 * it (fetch_next of ffb_stmt_set_fetch_size() rows, 1 round trip); the
 * buffered rows are then read with ffb_stmt_fetch(), which on a scrollable
 * cursor never reads ahead: when they run out it fetches again in the
 * direction of the last move (next, or prior after FFB_FETCH_PRIOR).
 * With auto-commit (`tx` NULL) the transaction is committed when the
 * cursor is closed, not at a move past the end. A statement from the
 * connection's cache forgets the setting when it goes back to the cache.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (not attached), FFB_E_UNSUPPORTED
 * (protocol below 18: Firebird 3 and 4; nothing is sent and the
 * connection stays usable).
 * Since: 0.2
 */
FFB_API int ffb_stmt_set_scrollable(ffb_stmt *stmt, int on);

/** 1 if the statement has an open scrollable cursor, else 0. Since: 0.2 */
FFB_API int ffb_stmt_is_scrollable(const ffb_stmt *stmt);

/**
 * Move the scrollable cursor (op_fetch_scroll) and make the first row
 * received current. `pos` is used by FFB_FETCH_ABSOLUTE and
 * FFB_FETCH_RELATIVE only; `rows` (0 = 1, at most 65535) by
 * FFB_FETCH_NEXT and FFB_FETCH_PRIOR only - the server sends one row for
 * the others. Rows after the first of a next/prior are read with
 * ffb_stmt_fetch(). Rows still buffered and unread are dropped: moves are
 * counted from the last row the server sent, which with next/prior of
 * several rows is the last of them.
 * Round trips: 1.
 * Returns: 1 (a row is current), 0 (no row there: past either end; the
 * cursor stays open and may move back), FFB_E_INVAL (bad `op` or `rows`),
 * FFB_E_STATE (no open scrollable cursor, or a fetch of it in flight),
 * FFB_E_UNSUPPORTED (protocol below 18; nothing sent), FFB_E_SERVER,
 * fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_stmt_fetch_scroll(ffb_stmt *stmt, int op, int32_t pos,
                                  unsigned rows);

/**
 * The number of records of the open scrollable cursor (op_info_cursor,
 * INF_RECORD_COUNT); the server reads the whole result to count it. Only
 * after the execution's first fetch has been answered: asked before, it
 * spoils the cursor on Firebird 5 (every later fetch fails), so the call
 * refuses with FFB_E_STATE then (after ffb_stmt_execute() returns, or the
 * execution's result has arrived, it is always allowed).
 * Round trips: 1.
 * Returns: 0, FFB_E_INVAL, FFB_E_STATE (no open scrollable cursor, its
 * first fetch not answered, a fetch in flight), FFB_E_UNSUPPORTED
 * (protocol below 18; nothing sent), FFB_E_SERVER, fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_stmt_record_count(ffb_stmt *stmt, int64_t *out);

/**
 * Queue twins of ffb_stmt_fetch_scroll() (result FFB_OP_FETCH_SCROLL; once
 * it is in, ffb_stmt_fetch() returns the rows received, 0 at once when the
 * move found none) and ffb_stmt_record_count() (result FFB_OP_RECORD_COUNT;
 * the count is ffb_result_rows_affected() of the result). Same checks,
 * same errors, nothing sent when they fail.
 * Round trips: 0 (queue only).
 * Since: 0.2
 */
FFB_API int ffb_stmt_queue_fetch_scroll(ffb_stmt *stmt, int op, int32_t pos,
                                        unsigned rows, ffb_cb cb, void *data);
FFB_API int ffb_stmt_queue_record_count(ffb_stmt *stmt, ffb_cb cb,
                                        void *data);

/* ==== arrays ============================================================= */

/**
 * The descriptor of an array column: element type, dimensions, bounds.
 * ffb_array_lookup() fills it from the system tables (what fbclient's
 * isc_array_lookup_bounds does); an application may also fill it itself.
 */
#define FFB_ARRAY_MAX_DIMS 16
typedef struct ffb_array_desc {
    int element;      /* enum ffb_sqltype of the elements (FFB_SQL_SHORT,
                         ..., FFB_SQL_TEXT, FFB_SQL_VARYING, FFB_SQL_BOOLEAN,
                         FFB_SQL_INT128, FFB_SQL_DEC16/34, FFB_SQL_TIME_TZ,
                         FFB_SQL_TIMESTAMP_TZ) */
    int scale;        /* NUMERIC/DECIMAL scale (<= 0), else 0 */
    int length;       /* CHAR/VARCHAR: bytes (characters x bytes per
                         character of `charset`), else the element size */
    int charset;      /* character set id of text elements, else -1 */
    unsigned dims;    /* 1..16 */
    int32_t lower[FFB_ARRAY_MAX_DIMS], upper[FFB_ARRAY_MAX_DIMS];
    char relation[256]; /* table and column, as stored (case-sensitive) */
    char field[256];
} ffb_array_desc;

/**
 * Look up the descriptor of column `field` of table `relation` (names as
 * stored: unquoted names in upper case) in RDB$RELATION_FIELDS, RDB$FIELDS
 * and RDB$FIELD_DIMENSIONS, in `tx`. The answer is cached per connection
 * (until a DDL statement runs on it, or the connection is freed): asking
 * again costs nothing.
 * One query, the names as literals: its prepare (with the allocation) goes
 * in one write, the execution with its fetch in the next, sent when the
 * prepare is answered.
 * Round trips: 2 (plus the lazy start of `tx`), 0 when cached.
 * Returns: 0, FFB_E_INVAL (NULL arguments, `tx` NULL, names over 252 bytes),
 * FFB_E_STATE, FFB_E_SERVER (no such column: isc_fldnotdef; not an array),
 * FFB_E_UNSUPPORTED (an element type libfastfb cannot move), fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_array_lookup(ffb_conn *conn, ffb_tx *tx, const char *relation,
                             const char *field, ffb_array_desc *out,
                             size_t out_size);

/**
 * Queue twin of ffb_array_lookup(): returns 1 when the cache answered
 * (`out` is filled, nothing queued, no result), else queues the prepare and
 * the execution and returns 0; `out` (kept valid by the caller) is filled
 * when the result (FFB_OP_ARRAY_LOOKUP) is delivered.
 * Round trips: 0 (queue only). Since: 0.2
 */
FFB_API int ffb_array_queue_lookup(ffb_conn *conn, ffb_tx *tx,
                                   const char *relation, const char *field,
                                   ffb_array_desc *out, size_t out_size,
                                   ffb_cb cb, void *data);

/**
 * Elements of one array: how many, and the bytes of one in the buffers of
 * ffb_array_get()/ffb_array_put(), in row-major order (the last dimension
 * varies fastest). Element layout, host byte order:
 *   SMALLINT int16_t, INTEGER int32_t, BIGINT int64_t (NUMERIC/DECIMAL:
 *   the scaled integer), INT128 16 bytes (host-order two's complement),
 *   FLOAT float, DOUBLE PRECISION double, DATE int32_t (days, as
 *   ffb_stmt_get_date's wire value), TIME uint32_t (1/10000 s), TIMESTAMP
 *   {int32_t date; uint32_t time}, TIME WITH TIME ZONE {uint32_t time;
 *   uint16_t zone; 2 bytes padding}, TIMESTAMP WITH TIME ZONE {int32_t
 *   date; uint32_t time; uint16_t zone; 2 bytes padding}, BOOLEAN 1 byte (0
 *   or 1), DECFLOAT(16)/(34) the 8/16 bytes as on the wire (IEEE 754 DPD,
 *   big-endian), CHAR(n) `length` bytes (blank-padded), VARCHAR(n)
 *   {uint16_t len; `length` bytes}.
 * Round trips: 0. Returns 0 for a descriptor libfastfb cannot move.
 * Since: 0.2
 */
FFB_API size_t ffb_array_element_size(const ffb_array_desc *desc);
FFB_API size_t ffb_array_element_count(const ffb_array_desc *desc);

/**
 * Read the whole array `id` (from ffb_stmt_get_array_id()) into `buf`
 * (`size` bytes, at least count x element size) with op_get_slice; the SDL
 * is generated from `desc`. *out_len receives the bytes filled (elements
 * the server returned x element size). An array never written reads as
 * zeros/blanks.
 * Round trips: 1; 2 when `tx`'s lazy start has not been answered yet (the
 * slice names the transaction's handle, so the start goes first).
 * Returns: 0, FFB_E_INVAL (buffer too small, bad descriptor), FFB_E_STATE,
 * FFB_E_SERVER, FFB_E_PROTO (an answer that does not match the request),
 * fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_array_get(ffb_conn *conn, ffb_tx *tx,
                          const ffb_array_desc *desc, const uint8_t id[8],
                          void *buf, size_t size, size_t *out_len);

/**
 * Write a whole new array (`len` bytes = count x element size, layout as
 * above) with op_put_slice; `id_out` receives its id, to bind with
 * ffb_stmt_bind_array_id() to the INSERT or UPDATE that stores it in `tx`.
 * Round trips: 1; 2 when `tx`'s lazy start has not been answered yet.
 * Returns: 0, FFB_E_INVAL (length not count x element size, a BOOLEAN
 * other than 0/1, a VARCHAR length over `length`), FFB_E_STATE,
 * FFB_E_SERVER, fatal codes.
 * Since: 0.2
 */
FFB_API int ffb_array_put(ffb_conn *conn, ffb_tx *tx,
                          const ffb_array_desc *desc, const void *buf,
                          size_t len, uint8_t id_out[8]);

/**
 * Queue twins of ffb_array_get() (result FFB_OP_ARRAY_GET; `buf` and
 * `out_len` are filled when it is in and must stay valid until then) and
 * ffb_array_put() (result FFB_OP_ARRAY_PUT; `id_out` filled then). `tx`'s
 * handle must be known (its start answered: FFB_E_STATE otherwise).
 * Round trips: 0 (queue only).
 * Since: 0.2
 */
FFB_API int ffb_array_queue_get(ffb_conn *conn, ffb_tx *tx,
                                const ffb_array_desc *desc,
                                const uint8_t id[8], void *buf, size_t size,
                                size_t *out_len, ffb_cb cb, void *data);
FFB_API int ffb_array_queue_put(ffb_conn *conn, ffb_tx *tx,
                                const ffb_array_desc *desc, const void *buf,
                                size_t len, uint8_t id_out[8], ffb_cb cb,
                                void *data);

/**
 * The id of array column `col` of the current row / bind an array id to
 * parameter `idx` (an array column: FFB_SQL_ARRAY in the describe).
 * Returns: 0, FFB_E_INVAL (not an array, NULL value), FFB_E_STATE.
 * Round trips: 0. Since: 0.2
 */
FFB_API int ffb_stmt_get_array_id(const ffb_stmt *stmt, unsigned col,
                                  uint8_t out[8]);
FFB_API int ffb_stmt_bind_array_id(ffb_stmt *stmt, unsigned idx,
                                   const uint8_t id[8]);

/**
 * The descriptor of array column `col` of a prepared statement: looked up
 * (ffb_array_lookup()) by the table and column names of its describe.
 * Round trips: as ffb_array_lookup(). Returns: as ffb_array_lookup(), and
 * FFB_E_INVAL for a column that is not an array of a table.
 * Since: 0.2
 */
FFB_API int ffb_stmt_array_desc(ffb_stmt *stmt, unsigned col, ffb_tx *tx,
                                ffb_array_desc *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* FASTFB_H */
