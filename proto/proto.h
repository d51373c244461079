/*
 * The sans-I/O wire format: packet encoders and decoders. Internal to the
 * library and its tests (not installed). No sockets, no clock, no state
 * across packets; decoders do not allocate and return views into the input.
 */
#ifndef FFB_PROTO_PROTO_H
#define FFB_PROTO_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ops.h"
#include "proto/slice.h"
#include "proto/xdr.h"

/* ---- op_connect --------------------------------------------------------- */

typedef struct ffbp_connect {
    const char *file;        /* p_cnct_file */
    size_t file_len;
    const uint8_t *user_id;  /* p_cnct_user_id: untagged clumplet block */
    size_t user_id_len;
    int min_version;         /* protocol numbers, e.g. 13..19 */
    int max_version;
    int compress;            /* set pflag_compress in max_type */
} ffbp_connect;

/*
 * op_connect: int32 op, enum operation(0), short cversion(3), enum arch(1),
 * cstring file, short count, cstring user_id, count x {short version,
 * enum arch, ushort min_type, ushort max_type, short weight}.
 */
void ffbp_put_connect(ffbp_writer *w, const ffbp_connect *c);

/* op_cont_auth: cstring data, cstring name, cstring list, cstring keys. */
void ffbp_put_cont_auth(ffbp_writer *w, const void *data, size_t data_len,
                        const char *name, size_t name_len, const char *list,
                        size_t list_len);

/* op_crypt: cstring plugin, cstring key type. */
void ffbp_put_crypt(ffbp_writer *w, const char *plugin, size_t plugin_len,
                    const char *key, size_t key_len);

/* op_attach / op_create / op_service_attach: short object, cstring file,
   cstring dpb. */
void ffbp_put_attach(ffbp_writer *w, int op, uint16_t object, const char *file,
                     size_t file_len, const uint8_t *dpb, size_t dpb_len);

/* Ops whose body is one short object: op_detach, op_drop_database,
   op_service_detach, op_commit, op_rollback, ... */
void ffbp_put_object_op(ffbp_writer *w, int op, uint16_t object);

/* Ops with an empty body: op_ping, op_disconnect, op_dummy. */
void ffbp_put_empty_op(ffbp_writer *w, int op);

/* op_info_database and friends: short object, short incarnation,
   cstring items, int32 buffer_length. */
void ffbp_put_info(ffbp_writer *w, int op, uint16_t object,
                   uint16_t incarnation, const uint8_t *items,
                   size_t items_len, uint32_t buffer_len);

/* ---- received packets --------------------------------------------------- */

/* One status-vector entry as decoded (views into the packet). */
typedef struct ffbp_status_arg {
    int32_t type;       /* FFBP_ARG_* */
    int32_t num;        /* gds code, number, errno */
    const uint8_t *str; /* string-valued types */
    uint32_t len;
} ffbp_status_arg;

typedef struct ffbp_status {
    ffbp_status_arg *args; /* caller-provided array */
    size_t cap;
    size_t n;              /* entries stored (at most cap) */
    size_t total;          /* entries on the wire */
} ffbp_status;

typedef struct ffbp_response {
    uint16_t object;
    uint64_t blob_id;
    ffbp_bytes data;
    ffbp_status status;
} ffbp_response;

typedef struct ffbp_accept {
    uint16_t version;      /* raw, e.g. 0x800F */
    int32_t arch;
    uint16_t type;         /* ptype | flags */
    /* op_accept_data / op_cond_accept only: */
    ffbp_bytes data;
    ffbp_bytes plugin;
    uint16_t authenticated;
    ffbp_bytes keys;
} ffbp_accept;

typedef struct ffbp_cont_auth {
    ffbp_bytes data, name, list, keys;
} ffbp_cont_auth;

typedef struct ffbp_crypt_cb {
    ffbp_bytes data;
    int32_t reply_size;    /* -1 when absent */
} ffbp_crypt_cb;

/* The client's op_crypt_key_callback: cstring data, then p_cc_reply (0)
   when `with_reply` (protocol 14+, or before the accept: protocol 0). */
void ffbp_put_crypt_key_callback(ffbp_writer *w, const void *data, size_t len,
                                 int with_reply);

/* op_fetch_response: status (0 or 100), count (0/1), message if count;
   op_sql_response: count, message if count (status 0). */
typedef struct ffbp_fetch_response {
    int32_t status;
    uint16_t count;
    const uint8_t *msg; /* NULL when count == 0 */
    size_t msg_len;
} ffbp_fetch_response;

/* op_inline_blob (protocol 19): a small blob pushed in front of the row or
   op_sql_response that references it (reference 03, C.3.2). */
typedef struct ffbp_inline_blob {
    uint16_t tx;
    uint64_t blob_id;
    ffbp_bytes info;  /* answer to blob info items 4, 5, 6, 7 */
    ffbp_bytes data;  /* [uint16 LE length][bytes] records */
} ffbp_inline_blob;

/* op_batch_cs (reference 03, C.4.7); arrays are views, re-read by lib. */
typedef struct ffbp_batch_cs {
    uint16_t stmt;
    uint32_t reccount, updates, vectors, errors;
    const uint8_t *counts;     /* updates x int32, big-endian */
    const uint8_t *detail;     /* vectors x (uint32 position, status vector) */
    size_t detail_len;
    const uint8_t *simple;     /* errors x uint32 position */
} ffbp_batch_cs;

typedef struct ffbp_packet {
    int32_t op;
    union {
        ffbp_accept accept;      /* op_accept, op_accept_data, op_cond_accept */
        ffbp_response response;  /* op_response, op_response_piggyback */
        ffbp_cont_auth cont_auth;
        ffbp_crypt_cb crypt_cb;  /* op_crypt_key_callback */
        ffbp_bytes trusted;      /* op_trusted_auth */
        ffbp_inline_blob inline_blob; /* op_inline_blob */
        ffbp_batch_cs batch_cs;       /* op_batch_cs */
        ffbp_fetch_response fetch; /* op_fetch_response, op_sql_response
                                      (decoded with the message format of
                                      the reply owed, see lib/engine.c) */
        ffbp_slice slice;          /* op_slice (the same: lib/engine.c) */
    } u;
} ffbp_packet;

/*
 * Decode one server packet of the connection layer. `status_args` /
 * `status_cap` receive the status vector of op_response. `protocol` is the
 * negotiated protocol number (0 before the accept).
 *
 * Returns FFBP_OK (and advances), FFBP_INCOMPLETE (cursor untouched), or
 * FFBP_EBAD (malformed or an op this decoder does not know; cursor
 * untouched). On FFBP_EBAD `out->op` holds the op code when it was read.
 */
int ffbp_get_packet(ffbp_reader *r, int protocol, ffbp_packet *out,
                    ffbp_status_arg *status_args, size_t status_cap);

/* The body of op_batch_cs (after the op code); proto/batch.c. The status
   vectors inside are validated (each must parse) and left as views. */
int ffbp_get_batch_cs_body(ffbp_reader *r, ffbp_batch_cs *out);

/* Decode just a status vector (used by op_response and later by batch
   completion state). */
int ffbp_get_status(ffbp_reader *r, ffbp_status *st);

/* ---- parameter blocks (clumplets) --------------------------------------- */

enum ffbp_pb_kind {
    FFBP_PB_UNTAGGED = 0, /* tag:1 len:1 data (user-id block, key list) */
    FFBP_PB_V1 = 1,       /* header 01, tag:1 len:1 */
    FFBP_PB_V2 = 2        /* header 02, tag:1 len:4 LE */
};

typedef struct ffbp_pb {
    ffbp_writer *w;
    int kind;
    int bad; /* an item did not fit its length field */
} ffbp_pb;

/* Start a block in `w` (writes the version byte for V1/V2). */
void ffbp_pb_begin(ffbp_pb *pb, ffbp_writer *w, int kind);
void ffbp_pb_bytes(ffbp_pb *pb, uint8_t tag, const void *p, size_t len);
void ffbp_pb_str(ffbp_pb *pb, uint8_t tag, const char *s);
/* 4-byte little-endian integer item. */
void ffbp_pb_int(ffbp_pb *pb, uint8_t tag, int32_t v);
/* Item with no data. */
void ffbp_pb_flag(ffbp_pb *pb, uint8_t tag);

/* Iterate items of a block. *pos starts at 0 (or 1 past the version byte:
   ffbp_pb_next skips it itself for V1/V2 when *pos == 0). Returns 1 with an
   item, 0 at the end, FFBP_EBAD when malformed. */
int ffbp_pb_next(const uint8_t *p, size_t len, int kind, size_t *pos,
                 uint8_t *tag, const uint8_t **data, size_t *data_len);

/* ---- info buffers -------------------------------------------------------- */

/*
 * Iterate an info reply: item:1 len:2 LE data. Returns 1 with an item,
 * 0 at isc_info_end or the end of the buffer, FFBP_EBAD when an item runs
 * past the buffer. isc_info_truncated is returned as an item with no data.
 */
int ffbp_info_next(const uint8_t *p, size_t len, size_t *pos, uint8_t *item,
                   const uint8_t **data, size_t *data_len);

/* ---- diagnostics --------------------------------------------------------- */

/* The name of an op code ("op_response"), or "op_unknown". */
const char *ffbp_op_name(int32_t op);

/* Render a decoded packet as one line; returns snprintf's result. */
int ffbp_describe(char *out, size_t size, const ffbp_packet *pkt);

#endif
