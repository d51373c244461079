/*
 * ffbp_get_status on arbitrary bytes. Byte 0 picks the capacity of the
 * argument array (low 3 bits, 0 = none); the rest is the vector.
 *
 * Properties: all-or-nothing (cursor untouched unless FFBP_OK); stored
 * entries never exceed the capacity, strings lie inside the input, and
 * string arguments are never longer than xdr_string's 65535 bytes; every
 * truncation of a decoded vector is FFBP_INCOMPLETE.
 */
#include <string.h>

#include "proto/proto.h"
#include "tests/fuzz/fuzz.h"

static const size_t caps[8] = {0, 1, 2, 3, 4, 8, 20, 64};

static int is_string_arg(int32_t type) {
    return type == FFBP_ARG_STRING || type == FFBP_ARG_INTERPRETED ||
           type == FFBP_ARG_SQL_STATE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    size_t cap = caps[data[0] & 7];
    const uint8_t *p = data + 1;
    size_t len = size - 1;
    ffbp_status_arg args[64];

    ffbp_reader r;
    ffbp_reader_init(&r, p, len);
    ffbp_status st = {cap ? args : NULL, cap, 0, 0};
    int rc = ffbp_get_status(&r, &st);
    if (rc != FFBP_OK) {
        FUZZ_CHECK(rc == FFBP_INCOMPLETE || rc == FFBP_EBAD);
        FUZZ_CHECK(r.pos == 0);
        return 0;
    }
    FUZZ_CHECK(r.pos >= 4 && r.pos <= len && r.pos % 4 == 0);
    FUZZ_CHECK(st.n <= cap && st.n <= st.total);
    for (size_t i = 0; i < st.n; i++) {
        const ffbp_status_arg *a = &args[i];
        FUZZ_CHECK(a->type != FFBP_ARG_END);
        FUZZ_CHECK(fuzz_inside(p, len, a->str, a->len));
        if (is_string_arg(a->type))
            FUZZ_CHECK(a->len <= 65535 && (a->len == 0 || a->str));
        else
            FUZZ_CHECK(a->str == NULL && a->len == 0);
    }
    /* Entries on the wire: the decoded length is at least 4 bytes per
       entry plus the terminator. */
    FUZZ_CHECK(st.total <= (r.pos - 4) / 8);

    size_t end = r.pos;
    size_t cuts[3] = {end - 1, end / 2, 1};
    for (size_t i = 0; i < 3; i++) {
        ffbp_reader t;
        ffbp_reader_init(&t, p, cuts[i]);
        ffbp_status s2 = {cap ? args : NULL, cap, 0, 0};
        FUZZ_CHECK(ffbp_get_status(&t, &s2) == FFBP_INCOMPLETE);
        FUZZ_CHECK(t.pos == 0);
    }
    return 0;
}
