/*
 * Parameter blocks and info buffers: the same bytes go through
 * ffbp_pb_next as an untagged, a version-1 and a version-2 block, and
 * through ffbp_info_next.
 *
 * Properties: iteration always advances and ends (0 or FFBP_EBAD); every
 * item lies inside the input; a block that iterates cleanly is rebuilt
 * byte for byte by the ffbp_pb_* writer.
 */
#include <string.h>

#include "proto/proto.h"
#include "tests/fuzz/fuzz.h"

static void pb_kind(const uint8_t *p, size_t len, int kind) {
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_pb pb;
    ffbp_pb_begin(&pb, &w, kind);

    size_t pos = 0, items = 0;
    int rc;
    uint8_t tag;
    const uint8_t *d;
    size_t n;
    volatile uint64_t sink = 0;
    while ((rc = ffbp_pb_next(p, len, kind, &pos, &tag, &d, &n)) == 1) {
        FUZZ_CHECK(fuzz_inside(p, len, d, n));
        FUZZ_CHECK(pos <= len && d + n == p + pos);
        FUZZ_CHECK(kind == FFBP_PB_V2 || n <= 255);
        FUZZ_CHECK(++items <= len);
        if (n >= 1 && n <= 8)
            sink += (uint64_t)ffbp_le_int(d, n);
        if (n >= 1)
            sink += ffbp_le_u32(d, n);
        ffbp_pb_bytes(&pb, tag, d, n);
    }
    (void)sink;
    FUZZ_CHECK(rc == 0 || rc == FFBP_EBAD);
    FUZZ_CHECK(!pb.bad && !w.failed);
    if (rc == 0 && len > 0) {
        FUZZ_CHECK(w.len == len);
        FUZZ_CHECK(memcmp(w.data, p, len) == 0);
    }
    ffbp_writer_free(&w);
}

static void info(const uint8_t *p, size_t len) {
    size_t pos = 0, last = 0;
    int rc;
    uint8_t item;
    const uint8_t *d;
    size_t n;
    int first = 1;
    while ((rc = ffbp_info_next(p, len, &pos, &item, &d, &n)) == 1) {
        FUZZ_CHECK(first || pos > last);
        FUZZ_CHECK(pos <= len);
        FUZZ_CHECK(fuzz_inside(p, len, d, n));
        FUZZ_CHECK(n <= 65535);
        if (item == FFBP_INFO_TRUNCATED)
            FUZZ_CHECK(n == 0 && pos == len);
        else
            FUZZ_CHECK(d + n == p + pos);
        first = 0;
        last = pos;
    }
    FUZZ_CHECK(rc == 0 || rc == FFBP_EBAD);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pb_kind(data, size, FFBP_PB_UNTAGGED);
    pb_kind(data, size, FFBP_PB_V1);
    pb_kind(data, size, FFBP_PB_V2);
    info(data, size);
    return 0;
}
