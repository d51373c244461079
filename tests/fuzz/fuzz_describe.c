/*
 * ffbp_parse_describe on arbitrary statement info answers. Byte 0 picks
 * the capacities of the input and output arrays (two bits each: 0, 1, 2,
 * 8) and, with bit 4, a continuation: byte 1 then splits the rest into a
 * first answer and a continuation parsed into the same structure (the
 * op_info_sql follow-up of a truncated describe).
 *
 * Properties: FFBP_OK or FFBP_EBAD; every view lies inside the input;
 * nullable and complete are 0/1, sqltype has bit 0 clear; the incomplete index
 * is 0 or within the described count; the continuation items fit their
 * 32 bytes; parsing again with arrays as large as the described counts
 * gives the same counts and, for the variables the small arrays held, the
 * same values.
 */
#include <string.h>

#include "proto/sql.h"
#include "tests/fuzz/fuzz.h"

#define BIG 256

static const size_t caps[4] = {0, 1, 2, 8};

static void check_bytes(const uint8_t *p, size_t len, ffbp_bytes b) {
    FUZZ_CHECK(fuzz_inside(p, len, b.p, b.len));
}

static void check_side(const uint8_t *p, size_t len, const ffbp_var *v,
                       size_t cap) {
    for (size_t i = 0; i < cap; i++) {
        check_bytes(p, len, v[i].field);
        check_bytes(p, len, v[i].relation);
        check_bytes(p, len, v[i].owner);
        check_bytes(p, len, v[i].alias);
        check_bytes(p, len, v[i].relation_alias);
        FUZZ_CHECK(v[i].complete == 0 || v[i].complete == 1);
        FUZZ_CHECK(v[i].nullable == 0 || v[i].nullable == 1);
        FUZZ_CHECK((v[i].sqltype & 1) == 0);
    }
}

static int same_bytes(ffbp_bytes a, ffbp_bytes b) {
    return a.p == b.p && a.len == b.len;
}

static int same_var(const ffbp_var *a, const ffbp_var *b) {
    return a->sqltype == b->sqltype && a->nullable == b->nullable &&
           a->subtype == b->subtype && a->scale == b->scale &&
           a->length == b->length && same_bytes(a->field, b->field) &&
           same_bytes(a->relation, b->relation) &&
           same_bytes(a->owner, b->owner) && same_bytes(a->alias, b->alias) &&
           same_bytes(a->relation_alias, b->relation_alias) &&
           a->complete == b->complete;
}

/* Parse the one or two answers into d. */
static int parse(const uint8_t *p, size_t len, size_t split, int cont,
                 ffbp_sqlinfo *d) {
    if (!cont)
        return ffbp_parse_describe(p, len, d);
    int rc = ffbp_parse_describe(p, split, d);
    if (rc != FFBP_OK)
        return rc;
    return ffbp_parse_describe(p + split, len - split, d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2)
        return 0;
    size_t in_cap = caps[data[0] & 3];
    size_t out_cap = caps[(data[0] >> 2) & 3];
    int cont = (data[0] >> 4) & 1;
    const uint8_t *p = data + 2;
    size_t len = size - 2;
    size_t split = len ? data[1] % (len + 1) : 0;

    static ffbp_var in[BIG], out[BIG];
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, in_cap ? in : NULL, in_cap, out_cap ? out : NULL,
                      out_cap);
    int rc = parse(p, len, split, cont, &d);
    FUZZ_CHECK(rc == FFBP_OK || rc == FFBP_EBAD);
    check_bytes(p, len, d.plan);
    check_side(p, len, in, in_cap);
    check_side(p, len, out, out_cap);
    FUZZ_CHECK(d.truncated == 0 || d.truncated == 1);
    if (rc != FFBP_OK)
        return 0;

    for (int sel = 0; sel <= 1; sel++) {
        uint32_t count = sel ? d.out_count : d.in_count;
        uint32_t start = ffbp_sqlinfo_incomplete(&d, sel);
        FUZZ_CHECK(start <= count);
        if (start) {
            uint8_t items[40];
            memset(items, 0xAA, sizeof(items));
            size_t n = ffbp_describe_continue_items(items, sel, start);
            FUZZ_CHECK(n >= 16 && n <= 32 && items[n] == 0xAA);
        }
    }

    /* again with room for everything */
    if (d.in_count > BIG || d.out_count > BIG)
        return 0;
    ffbp_var small_in[8], small_out[8];
    memcpy(small_in, in, sizeof(small_in));
    memcpy(small_out, out, sizeof(small_out));
    ffbp_sqlinfo big;
    ffbp_sqlinfo_init(&big, in, BIG, out, BIG);
    FUZZ_CHECK(parse(p, len, split, cont, &big) == FFBP_OK);
    FUZZ_CHECK(big.in_count == d.in_count && big.out_count == d.out_count);
    FUZZ_CHECK(big.stmt_type == d.stmt_type && big.stmt_flags == d.stmt_flags &&
               big.truncated == d.truncated);
    for (size_t i = 0; i < in_cap && i < d.in_count; i++)
        FUZZ_CHECK(same_var(&small_in[i], &in[i]));
    for (size_t i = 0; i < out_cap && i < d.out_count; i++)
        FUZZ_CHECK(same_var(&small_out[i], &out[i]));
    return 0;
}
