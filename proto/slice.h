/*
 * Arrays: the slice description language (SDL), op_get_slice (58) /
 * op_put_slice (59) requests and the op_slice (60) answer. Reference 03,
 * C.10.1; src/yvalve/array.cpp gen_sdl, src/common/sdl.cpp, src/remote/
 * protocol.cpp xdr_slice, src/common/xdr.cpp xdr_datum.
 *
 * Elements travel one by one as message fields do (xdr_datum; a connection
 * of architecture generic is never "symmetric"): SHORT as 4 bytes, BOOLEAN
 * as 1 byte padded to 4, CHAR(n) n bytes padded, VARCHAR(n) (an SDL
 * varying is a C string of n + 2 bytes on the server) as int32 length,
 * bytes, padding. The slice's length fields count NATIVE bytes: elements x
 * ffbp_slice_native_size().
 */
#ifndef FFB_PROTO_SLICE_H
#define FFB_PROTO_SLICE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/xdr.h"

#define FFBP_SDL_MAX_DIMS 16 /* gen_sdl: isc_invalid_dimension above */

typedef struct ffbp_sdl {
    uint8_t blr;     /* element type: FFBP_BLR_SHORT ... (RDB$FIELD_TYPE) */
    int8_t scale;    /* SHORT, LONG, INT64, INT128 */
    uint16_t length; /* TEXT, VARYING: bytes */
    int charset;     /* TEXT, VARYING: >= 0 writes blr_text2/varying2 with
                        this character set (else the attachment's, which
                        sizes a UTF8 connection's text in 4-byte units) */
    const char *relation; /* may be "" */
    const char *field;
    unsigned dims; /* 1..16 */
    int32_t lower[FFBP_SDL_MAX_DIMS], upper[FFBP_SDL_MAX_DIMS];
} ffbp_sdl;

/*
 * Append the SDL gen_sdl writes for `s`: version1, struct 1 <type>
 * [scale | u16 length], relation, field, per dimension do1/do2 with
 * literals, element 1 scalar 0 <dims> variable..., eoc. FFBP_EBAD (nothing
 * written) for an element type arrays cannot hold, 0 or over 16
 * dimensions, lower > upper, names over 255 bytes.
 */
int ffbp_put_sdl(ffbp_writer *w, const ffbp_sdl *s);

/* Bytes of one element on the server (the unit of the length fields);
   0 for a type arrays cannot hold. */
size_t ffbp_slice_native_size(uint8_t blr, uint16_t length);

/*
 * op_get_slice / op_put_slice: int32 op, short transaction, quad id,
 * int32 length (native bytes), cstring sdl, int32 0 (no SDL parameters),
 * int32 slice length (native bytes: 0 for get), the encoded elements.
 */
void ffbp_put_slice_request(ffbp_writer *w, int32_t op, uint16_t tx,
                            uint64_t id, uint32_t length, const uint8_t *sdl,
                            size_t sdl_len, uint32_t slice_len,
                            const uint8_t *elems, size_t elems_len);

/*
 * One encoded element at `p` (`left` bytes): its wire size in *size.
 * FFBP_INCOMPLETE when it does not fit, FFBP_EBAD for a VARCHAR longer
 * than `length` or an unknown type.
 */
int ffbp_slice_elem(const uint8_t *p, size_t left, uint8_t blr, uint16_t length,
                    size_t *size);

typedef struct ffbp_slice {
    uint32_t length;      /* p_slr_length: native bytes returned */
    uint32_t count;       /* elements */
    const uint8_t *elems; /* their encoding (view into the input) */
    size_t elems_len;
} ffbp_slice;

/*
 * op_slice (op code included): int32 length, int32 slice length (native
 * bytes), elements. All-or-nothing; FFBP_EBAD when the element count
 * exceeds `max_count` (what was asked for), the length fields disagree
 * with it, or an element is bad.
 */
int ffbp_get_slice(ffbp_reader *r, uint8_t blr, uint16_t length,
                   uint32_t max_count, ffbp_slice *out);

#endif
