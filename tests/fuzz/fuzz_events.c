/*
 * The event decoders (proto/events.c) on arbitrary bytes:
 * ffbp_get_aux_packet packet after packet (the aux stream), the EPB of
 * every op_event through ffbp_epb_next, the whole input as an EPB, and
 * the first bytes as the op_connect_request answer (ffbp_aux_port).
 *
 * Properties: all-or-nothing (the reader moves only on FFBP_OK, and then
 * by a multiple of 4); views lie inside the input; every truncation of a
 * decoded packet is FFBP_INCOMPLETE; EPB items lie inside the block and
 * the cursor only grows; an accepted port is non-zero and comes from
 * bytes 2-3.
 */
#include <string.h>

#include "proto/events.h"
#include "tests/fuzz/fuzz.h"

static void check_epb(const uint8_t *p, size_t len) {
    size_t pos = 0, nlen, last = 0;
    const uint8_t *name;
    uint32_t count;
    int rc, items = 0;
    while ((rc = ffbp_epb_next(p, len, &pos, &name, &nlen, &count)) == 1) {
        FUZZ_CHECK(pos > last && pos <= len);
        FUZZ_CHECK(fuzz_inside(p, len, name, nlen));
        FUZZ_CHECK(nlen <= 255);
        last = pos;
        items++;
        FUZZ_CHECK((size_t)items <= len / 5);
    }
    FUZZ_CHECK(rc == 0 || rc == FFBP_EBAD);
    if (rc == 0 && len > 0)
        FUZZ_CHECK(p[0] == FFBP_EPB_VERSION1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint16_t port = 0;
    if (ffbp_aux_port(data, size < 28 ? size : 28, &port) == FFBP_OK)
        FUZZ_CHECK(port != 0 && port == (uint16_t)(data[2] << 8 | data[3]));
    check_epb(data, size);

    ffbp_reader r;
    ffbp_reader_init(&r, data, size);
    for (;;) {
        size_t before = r.pos;
        ffbp_event e;
        int rc = ffbp_get_aux_packet(&r, &e);
        if (rc != FFBP_OK) {
            FUZZ_CHECK(rc == FFBP_INCOMPLETE || rc == FFBP_EBAD);
            FUZZ_CHECK(r.pos == before);
            break;
        }
        FUZZ_CHECK(r.pos > before && (r.pos - before) % 4 == 0);
        FUZZ_CHECK(e.op == FFBP_OP_EVENT || e.op == FFBP_OP_DUMMY ||
                   e.op == FFBP_OP_EXIT || e.op == FFBP_OP_DISCONNECT);
        if (e.op == FFBP_OP_EVENT) {
            FUZZ_CHECK(fuzz_inside(data, size, e.epb.p, e.epb.len));
            FUZZ_CHECK(e.epb.len <= FFBP_EPB_MAX);
            check_epb(e.epb.p, e.epb.len);
        }
        /* Every truncation of the packet is incomplete. */
        size_t end = r.pos - before;
        size_t cuts[3] = {end - 1, end / 2, 1};
        for (size_t i = 0; i < 3; i++) {
            if (cuts[i] == 0 || cuts[i] >= end)
                continue;
            ffbp_reader t;
            ffbp_reader_init(&t, data + before, cuts[i]);
            ffbp_event e2;
            FUZZ_CHECK(ffbp_get_aux_packet(&t, &e2) == FFBP_INCOMPLETE);
            FUZZ_CHECK(t.pos == 0);
        }
    }
    return 0;
}
