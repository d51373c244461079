/*
 * ffbp_get_slice (the op_slice answer) on arbitrary bytes, and ffbp_put_sdl
 * on descriptors derived from them. Byte 0 picks the element type, bytes
 * 1-2 its length (text), byte 3 the element count asked for; the rest is
 * the packet.
 *
 * Properties: all-or-nothing (cursor untouched unless FFBP_OK); the count
 * never exceeds what was asked; the elements lie inside the input and
 * walking them again with ffbp_slice_elem covers exactly elems_len; every
 * truncation of an accepted packet is FFBP_INCOMPLETE; the SDL encoder
 * either refuses or ends in isc_sdl_eoc.
 */
#include <string.h>

#include "proto/ops.h"
#include "proto/slice.h"
#include "proto/sql.h"
#include "tests/fuzz/fuzz.h"

static const uint8_t types[] = {
    FFBP_BLR_SHORT,        FFBP_BLR_LONG,     FFBP_BLR_INT64,
    FFBP_BLR_INT128,       FFBP_BLR_FLOAT,    FFBP_BLR_DOUBLE,
    FFBP_BLR_SQL_DATE,     FFBP_BLR_SQL_TIME, FFBP_BLR_TIMESTAMP,
    FFBP_BLR_TEXT,         FFBP_BLR_VARYING,  FFBP_BLR_BOOL,
    FFBP_BLR_DEC64,        FFBP_BLR_DEC128,   FFBP_BLR_SQL_TIME_TZ,
    FFBP_BLR_TIMESTAMP_TZ, FFBP_BLR_BLOB2 /* not an element type */};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4)
        return 0;
    uint8_t blr = types[data[0] % sizeof(types)];
    uint16_t length = (uint16_t)(data[1] | data[2] << 8);
    uint32_t max = data[3];
    const uint8_t *p = data + 4;
    size_t len = size - 4;

    ffbp_reader r;
    ffbp_reader_init(&r, p, len);
    ffbp_slice s;
    int rc = ffbp_get_slice(&r, blr, length, max, &s);
    if (rc != FFBP_OK) {
        FUZZ_CHECK(rc == FFBP_INCOMPLETE || rc == FFBP_EBAD);
        FUZZ_CHECK(r.pos == 0);
    } else {
        FUZZ_CHECK(s.count <= max);
        FUZZ_CHECK(fuzz_inside(p, len, s.elems, s.elems_len));
        FUZZ_CHECK(r.pos == 12 + s.elems_len);
        size_t off = 0;
        for (uint32_t i = 0; i < s.count; i++) {
            size_t n = 0;
            FUZZ_CHECK(ffbp_slice_elem(s.elems + off, s.elems_len - off, blr,
                                       length, &n) == FFBP_OK);
            FUZZ_CHECK(n >= 4 && n % 4 == 0);
            off += n;
        }
        FUZZ_CHECK(off == s.elems_len);
        for (size_t cut = 0; cut < r.pos; cut += 1 + cut / 8) {
            ffbp_reader t;
            ffbp_reader_init(&t, p, cut);
            ffbp_slice s2;
            FUZZ_CHECK(ffbp_get_slice(&t, blr, length, max, &s2) ==
                       FFBP_INCOMPLETE);
            FUZZ_CHECK(t.pos == 0);
        }
    }

    /* The SDL of a descriptor built from the same bytes. */
    ffbp_sdl d;
    memset(&d, 0, sizeof(d));
    d.blr = blr;
    d.length = length;
    d.scale = (int8_t)data[3];
    d.charset = data[0] & 1 ? data[3] : -1;
    d.relation = "R";
    d.field = "F";
    d.dims = data[3] % 18;
    for (unsigned i = 0; i < d.dims && i < FFBP_SDL_MAX_DIMS; i++) {
        int32_t v = 0;
        if (len >= 4 * (i + 1))
            memcpy(&v, p + 4 * i, 4);
        d.lower[i] = v % 70000;
        d.upper[i] = d.lower[i] + (int32_t)(data[1] % 5);
    }
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    rc = ffbp_put_sdl(&w, &d);
    if (rc == FFBP_OK) {
        FUZZ_CHECK(!w.failed && w.len >= 10);
        FUZZ_CHECK(w.data[0] == 1 && w.data[w.len - 1] == 255);
    } else {
        FUZZ_CHECK(rc == FFBP_EBAD && w.len == 0);
    }
    ffbp_writer_free(&w);
    return 0;
}
