/*
 * Events (protocol reference part 03, C.5): the requests on the main
 * connection (op_connect_request, op_que_events, op_cancel_events), the
 * event parameter block (EPB), the address in the op_connect_request
 * answer, and the packets of the auxiliary connection (op_event).
 * Pure encode/decode: no allocation, decoders all-or-nothing.
 */
#ifndef FFB_PROTO_EVENTS_H
#define FFB_PROTO_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#define FFBP_EPB_VERSION1 1   /* src/jrd/event.h EPB_version1 */
#define FFBP_P_REQ_ASYNC 1    /* src/remote/protocol.h P_REQ_async */
#define FFBP_EPB_MAX 65535u   /* a delivered EPB must fit in 65535 bytes */

/* op_connect_request: short type (P_REQ_async), short object (the
   database, ignored), int32 partner (0, ignored). */
void ffbp_put_connect_request(ffbp_writer *w, uint16_t db);

/* op_que_events: short database, cstring EPB, int32 ast (0), int32 arg
   (0), int32 rid (client-chosen, echoed back in op_event). */
void ffbp_put_que_events(ffbp_writer *w, uint16_t db, const uint8_t *epb,
                         size_t epb_len, int32_t rid);

/* op_cancel_events: short database, int32 rid. */
void ffbp_put_cancel_events(ffbp_writer *w, uint16_t db, int32_t rid);

/* Append an EPB: version 1, then per name a 1-byte length, the name and
   its count (uint32 little-endian). FFBP_EBAD (nothing appended) when a
   name is empty, longer than 255 bytes, or the block would pass 65535
   bytes. */
typedef struct ffbp_epb_item {
    const char *name;
    size_t len;
    uint32_t count;
} ffbp_epb_item;
int ffbp_put_epb(ffbp_writer *w, const ffbp_epb_item *items, size_t n);

/* Iterate an EPB: *pos 0 checks the version byte first. Returns 1 with a
   name (a view into p) and its count, 0 at the end, FFBP_EBAD when the
   version is not 1 or an entry runs past the block; *pos is only moved
   with an item. An empty block (len 0) has no items. */
int ffbp_epb_next(const uint8_t *p, size_t len, size_t *pos,
                  const uint8_t **name, size_t *name_len, uint32_t *count);

/* The TCP port of the aux connection in the op_connect_request answer's
   data: a raw struct sockaddr (16 bytes sockaddr_in, 28 sockaddr_in6),
   port in bytes 2-3, big-endian. The family bytes (server byte order) and
   the address (the server's own view) are not used. FFBP_EBAD when the
   data is shorter than 16 bytes, longer than 128, or the port is 0. */
int ffbp_aux_port(const uint8_t *data, size_t len, uint16_t *port);

/* A packet of the aux connection: op_event (the fields below), op_dummy
   (keep-alive, nothing else), op_exit / op_disconnect (the attachment is
   gone). Any other op code is FFBP_EBAD. FFBP_INCOMPLETE when more bytes
   are needed (r->need says how many at least); the reader moves only on
   FFBP_OK. */
typedef struct ffbp_event {
    int32_t op;
    uint16_t db;
    ffbp_bytes epb;   /* the updated EPB: a view into the input */
    int32_t ast, arg;
    int32_t rid;
} ffbp_event;
int ffbp_get_aux_packet(ffbp_reader *r, ffbp_event *out);

#endif
