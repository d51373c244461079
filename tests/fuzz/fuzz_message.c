/*
 * Messages (rows) with arbitrary formats: ffbp_get_message,
 * ffbp_get_fetch_response and ffbp_get_sql_response. Byte 0 is the item
 * count (mod 41), the next `count` bytes pick each item from a table of
 * type descriptors (low 5 bits); the rest is the input of all three
 * decoders.
 *
 * Properties: all-or-nothing (cursor untouched unless FFBP_OK, and then
 * advanced to a multiple of 4); every value lies inside the message, in
 * column order, 4-aligned, NULL exactly where the bitmap says; VARYING
 * lengths within their maximum; every truncation of a decoded input is
 * FFBP_INCOMPLETE; a decoded message re-encoded with ffbp_msg_begin /
 * ffbp_msg_set_null / ffbp_put_opaque decodes to the same values; the BLR
 * of the items parses back to the items.
 */
#include <string.h>

#include "proto/sql.h"
#include "tests/fuzz/fuzz.h"

#define MAX_ITEMS 40

static const ffbp_item table[32] = {
    {FFBP_BLR_SHORT, 0, 0, 0, 0},
    {FFBP_BLR_LONG, 0, 0, 0, 0},
    {FFBP_BLR_QUAD, 0, 0, 0, 0},
    {FFBP_BLR_FLOAT, 0, 0, 0, 0},
    {FFBP_BLR_D_FLOAT, 0, 0, 0, 0},
    {FFBP_BLR_SQL_DATE, 0, 0, 0, 0},
    {FFBP_BLR_SQL_TIME, 0, 0, 0, 0},
    {FFBP_BLR_TEXT, 0, 5, 0, 0},
    {FFBP_BLR_TEXT2, 0, 0, 4, 0},
    {FFBP_BLR_TEXT2, 0, 20, 4, 0},
    {FFBP_BLR_INT64, -4, 0, 0, 0},
    {FFBP_BLR_BLOB2, 0, 0, 4, 1},
    {FFBP_BLR_BOOL, 0, 0, 0, 0},
    {FFBP_BLR_DEC64, 0, 0, 0, 0},
    {FFBP_BLR_DEC128, 0, 0, 0, 0},
    {FFBP_BLR_INT128, -10, 0, 0, 0},
    {FFBP_BLR_DOUBLE, 0, 0, 0, 0},
    {FFBP_BLR_SQL_TIME_TZ, 0, 0, 0, 0},
    {FFBP_BLR_TIMESTAMP_TZ, 0, 0, 0, 0},
    {FFBP_BLR_EX_TIME_TZ, 0, 0, 0, 0},
    {FFBP_BLR_EX_TIMESTAMP_TZ, 0, 0, 0, 0},
    {FFBP_BLR_TIMESTAMP, 0, 0, 0, 0},
    {FFBP_BLR_VARYING, 0, 3, 0, 0},
    {FFBP_BLR_VARYING2, 0, 80, 4, 0},
    {FFBP_BLR_VARYING2, 0, 0, 4, 0},
    {FFBP_BLR_TEXT, 0, 1, 0, 0},
    {40, 0, 5, 0, 0}, /* blr_cstring: not a message type */
    {FFBP_BLR_VARYING2, 0, 5, 0x0304, 0},
    {FFBP_BLR_TEXT2, 0, 3, 1, 0},
    {FFBP_BLR_VARYING, 0, 1, 0, 0},
    {FFBP_BLR_LONG, -2, 0, 0, 0},
    {FFBP_BLR_BLOB2, 0, 0, 0, -5},
};

static int is_varying(const ffbp_item *it) {
    return it->blr == FFBP_BLR_VARYING || it->blr == FFBP_BLR_VARYING2;
}

/* The decoded offsets and lengths of a message of `len` bytes at `msg`. */
static void check_values(const uint8_t *msg, size_t len, const ffbp_item *items,
                         size_t n, const uint32_t *off, const uint32_t *vlen) {
    size_t bitmap = (n + 7) / 8;
    size_t next = bitmap + ffbp_pad(bitmap); /* first value */
    FUZZ_CHECK(len % 4 == 0 && len >= next);
    for (size_t i = 0; i < n; i++) {
        int null = (msg[i >> 3] >> (i & 7)) & 1;
        if (null) {
            FUZZ_CHECK(off[i] == FFBP_NULL_OFFSET && vlen[i] == 0);
            continue;
        }
        FUZZ_CHECK(off[i] != FFBP_NULL_OFFSET);
        size_t start = off[i];
        if (is_varying(&items[i])) {
            FUZZ_CHECK(start == next + 4);
            FUZZ_CHECK(vlen[i] <= items[i].length);
        } else {
            FUZZ_CHECK(start == next);
            FUZZ_CHECK(vlen[i] == ffbp_item_wire_size(&items[i]));
        }
        FUZZ_CHECK(start % 4 == 0);
        size_t end = start + vlen[i] + ffbp_pad(vlen[i]);
        FUZZ_CHECK(end <= len);
        next = end;
    }
    FUZZ_CHECK(next == len);
}

/* Re-encode: the bitmap from the NULL offsets, each value as it was. */
static void check_reencode(const uint8_t *msg, const ffbp_item *items, size_t n,
                           const uint32_t *off, const uint32_t *vlen,
                           size_t len) {
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    size_t bm = ffbp_msg_begin(&w, n);
    for (size_t i = 0; i < n; i++) {
        if (off[i] == FFBP_NULL_OFFSET) {
            ffbp_msg_set_null(&w, bm, i);
            continue;
        }
        if (is_varying(&items[i]))
            ffbp_put_u32(&w, vlen[i]);
        ffbp_put_opaque(&w, msg + off[i], vlen[i]);
    }
    FUZZ_CHECK(!w.failed && w.len == len);
    uint32_t off2[MAX_ITEMS], len2[MAX_ITEMS];
    ffbp_reader r;
    ffbp_reader_init(&r, w.data, w.len);
    FUZZ_CHECK(ffbp_get_message(&r, items, n, off2, len2, NULL, NULL) ==
               FFBP_OK);
    FUZZ_CHECK(r.pos == w.len);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(off2[i] == off[i] && len2[i] == vlen[i]);
        if (off[i] != FFBP_NULL_OFFSET && vlen[i])
            FUZZ_CHECK(memcmp(w.data + off[i], msg + off[i], vlen[i]) == 0);
    }
    ffbp_writer_free(&w);
}

typedef int (*decoder)(ffbp_reader *r, const ffbp_item *items, size_t n,
                       uint32_t *off, uint32_t *len, ffbp_fetch_response *out);

static int dec_message(ffbp_reader *r, const ffbp_item *items, size_t n,
                       uint32_t *off, uint32_t *len, ffbp_fetch_response *out) {
    out->status = 0;
    out->count = 1;
    return ffbp_get_message(r, items, n, off, len, &out->msg, &out->msg_len);
}

static void run(decoder dec, int32_t op, const uint8_t *p, size_t len,
                const ffbp_item *items, size_t n) {
    uint32_t off[MAX_ITEMS], vlen[MAX_ITEMS];
    ffbp_fetch_response fr;
    memset(&fr, 0, sizeof(fr));
    ffbp_reader r;
    ffbp_reader_init(&r, p, len);
    int rc = dec(&r, items, n, off, vlen, &fr);
    if (rc != FFBP_OK) {
        FUZZ_CHECK(rc == FFBP_INCOMPLETE || rc == FFBP_EBAD);
        FUZZ_CHECK(r.pos == 0);
        return;
    }
    FUZZ_CHECK(r.pos % 4 == 0 && r.pos <= len);
    if (op) {
        FUZZ_CHECK(r.pos >= 4);
        uint32_t got = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                       (uint32_t)p[2] << 8 | p[3];
        FUZZ_CHECK(got == (uint32_t)op);
    }
    FUZZ_CHECK(fr.count <= 1);
    if (fr.count == 1) {
        FUZZ_CHECK(fr.msg || fr.msg_len == 0);
        FUZZ_CHECK(fuzz_inside(p, len, fr.msg, fr.msg_len));
        if (fr.msg)
            FUZZ_CHECK(fr.msg + fr.msg_len == p + r.pos);
        check_values(fr.msg, fr.msg_len, items, n, off, vlen);
        check_reencode(fr.msg, items, n, off, vlen, fr.msg_len);
    } else {
        FUZZ_CHECK(fr.msg == NULL && fr.msg_len == 0);
    }
    size_t end = r.pos;
    size_t cuts[4] = {0, end - 1, end / 2, end > 4 ? end - 4 : 0};
    for (size_t i = 0; i < 4; i++) {
        if (cuts[i] >= end)
            continue;
        ffbp_reader t;
        ffbp_reader_init(&t, p, cuts[i]);
        FUZZ_CHECK(dec(&t, items, n, off, vlen, &fr) == FFBP_INCOMPLETE);
        FUZZ_CHECK(t.pos == 0);
    }
}

static void check_blr(const ffbp_item *items, size_t n) {
    int known = 1;
    for (size_t i = 0; i < n; i++)
        if (items[i].blr == 40)
            known = 0;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    int rc = ffbp_put_blr(&w, items, n);
    if (!known) {
        FUZZ_CHECK(rc == FFBP_EBAD && w.len == 0);
        ffbp_writer_free(&w);
        return;
    }
    FUZZ_CHECK(rc == FFBP_OK);
    ffbp_item back[MAX_ITEMS];
    FUZZ_CHECK(ffbp_parse_blr(w.data, w.len, back, MAX_ITEMS) == (int)n);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(back[i].blr == items[i].blr);
        FUZZ_CHECK(back[i].scale == items[i].scale);
        FUZZ_CHECK(back[i].length == items[i].length);
        FUZZ_CHECK(back[i].texttype == items[i].texttype);
        FUZZ_CHECK(back[i].subtype == items[i].subtype);
    }
    ffbp_writer_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    size_t n = data[0] % (MAX_ITEMS + 1);
    if (size < 1 + n)
        return 0;
    ffbp_item items[MAX_ITEMS];
    for (size_t i = 0; i < n; i++)
        items[i] = table[data[1 + i] & 31];
    const uint8_t *p = data + 1 + n;
    size_t len = size - 1 - n;

    check_blr(items, n);
    run(dec_message, 0, p, len, items, n);
    run(ffbp_get_fetch_response, FFBP_OP_FETCH_RESPONSE, p, len, items, n);
    run(ffbp_get_sql_response, FFBP_OP_SQL_RESPONSE, p, len, items, n);
    return 0;
}
