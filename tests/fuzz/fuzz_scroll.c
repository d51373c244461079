/*
 * ffbp_parse_cursor_info (the op_info_cursor answer) on arbitrary bytes.
 *
 * Properties: all-or-nothing (the output is untouched unless FFBP_OK); an
 * accepted buffer starts with the record count item, whose value is the
 * little-endian, sign-extended integer of its declared length; the
 * decoder never reads past the input (the guard page of replay.c catches
 * it).
 */
#include <string.h>

#include "proto/scroll.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int64_t n = 0x5A5A5A5A5A5A5A5All;
    int rc = ffbp_parse_cursor_info(data, size, &n);
    if (rc != FFBP_OK) {
        FUZZ_CHECK(rc == FFBP_EBAD);
        FUZZ_CHECK(n == 0x5A5A5A5A5A5A5A5All);
        return 0;
    }
    FUZZ_CHECK(size >= 4 && data[0] == FFBP_INF_RECORD_COUNT);
    size_t len = (size_t)data[1] | (size_t)data[2] << 8;
    FUZZ_CHECK(len >= 1 && len <= 8 && 3 + len <= size);
    int64_t v = 0;
    memcpy(&v, data + 3, len); /* little-endian hosts only below */
    uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    if (first == 1 && len < 8) {
        uint64_t u = 0;
        memcpy(&u, data + 3, len);
        if ((u >> (8 * len - 1)) & 1)
            u |= ~(uint64_t)0 << (8 * len);
        FUZZ_CHECK((int64_t)u == n);
    } else if (first == 1) {
        FUZZ_CHECK(v == n);
    }
    return 0;
}
