/*
 * The status vector (reference 01, 11): the error part of op_response and
 * of op_batch_cs. All-or-nothing like the packet decoders. In a file of its
 * own so that the packet decoders (response.c) and the batch decoders
 * (batch.c) both use it without depending on each other.
 */
#include "proto/proto.h"

/* Longest string inside a status vector (xdr_string limit). */
#define STATUS_STRING_MAX 65535u
/* Entries (codes and arguments) of one status vector. Firebird's longest
   are a few dozen; a server sending more is refused, so that an endless
   vector costs the client bounded work however it is chunked. */
#define STATUS_ENTRIES_MAX 1024u
#define TRY FFBP_TRY

static int get_status(ffbp_reader *r, ffbp_status *st) {
    st->n = 0;
    st->total = 0;
    for (;;) {
        int32_t type;
        TRY(ffbp_get_i32(r, &type));
        ffbp_status_arg a = {type, 0, NULL, 0};
        if (type == FFBP_ARG_END)
            return FFBP_OK;
        switch (type) {
        case FFBP_ARG_GDS:
        case FFBP_ARG_NUMBER:
        case FFBP_ARG_UNIX:
        case FFBP_ARG_NEXT_MACH:
        case FFBP_ARG_WIN32:
        case FFBP_ARG_WARNING:
            TRY(ffbp_get_i32(r, &a.num));
            break;
        case FFBP_ARG_STRING:
        case FFBP_ARG_INTERPRETED:
        case FFBP_ARG_SQL_STATE: {
            ffbp_bytes b;
            TRY(ffbp_get_cstring(r, STATUS_STRING_MAX, &b));
            a.str = b.p;
            a.len = b.len;
            break;
        }
        default:
            return FFBP_EBAD; /* cstring, vms, ... never travel */
        }
        if (st->total >= STATUS_ENTRIES_MAX)
            return FFBP_EBAD;
        if (st->n < st->cap)
            st->args[st->n++] = a;
        st->total++;
    }
}

/* All-or-nothing like the packet decoders: callers outside
   ffbp_get_packet (batch completion state) rely on the cursor being left
   untouched when the vector is incomplete. */
int ffbp_get_status(ffbp_reader *r, ffbp_status *st) {
    size_t save = r->pos;
    int rc = get_status(r, st);
    if (rc != FFBP_OK)
        r->pos = save;
    return rc;
}

