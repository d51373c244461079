/*
 * ffbp_get_packet over arbitrary bytes, packet after packet, the way the
 * engine parses its input buffer. Byte 0 picks the negotiated protocol (low
 * 3 bits: 0 = before the accept, then 13..19) and the capacity of the
 * status array (next 3 bits; 0 = no array); the rest is the stream.
 *
 * Properties: a decode either succeeds and advances by at least one op
 * code, or leaves the cursor untouched; every view lies inside the input;
 * every truncation of a decoded packet is FFBP_INCOMPLETE; the packet can be
 * described.
 */
#include <string.h>

#include "proto/proto.h"
#include "tests/fuzz/fuzz.h"

static const int protocols[8] = {0, 13, 14, 15, 16, 17, 18, 19};
static const size_t caps[8] = {0, 1, 2, 3, 4, 8, 16, 64};

static void check_views(const uint8_t *base, size_t len, const ffbp_packet *pkt,
                        size_t cap) {
    switch (pkt->op) {
    case FFBP_OP_ACCEPT:
    case FFBP_OP_ACCEPT_DATA:
    case FFBP_OP_COND_ACCEPT: {
        const ffbp_accept *a = &pkt->u.accept;
        FUZZ_CHECK(fuzz_inside(base, len, a->data.p, a->data.len));
        FUZZ_CHECK(fuzz_inside(base, len, a->plugin.p, a->plugin.len));
        FUZZ_CHECK(fuzz_inside(base, len, a->keys.p, a->keys.len));
        break;
    }
    case FFBP_OP_RESPONSE:
    case FFBP_OP_RESPONSE_PIGGYBACK: {
        const ffbp_response *r = &pkt->u.response;
        FUZZ_CHECK(fuzz_inside(base, len, r->data.p, r->data.len));
        FUZZ_CHECK(r->status.n <= cap && r->status.n <= r->status.total);
        for (size_t i = 0; i < r->status.n; i++) {
            const ffbp_status_arg *a = &r->status.args[i];
            FUZZ_CHECK(a->type != FFBP_ARG_END);
            FUZZ_CHECK(fuzz_inside(base, len, a->str, a->len));
        }
        break;
    }
    case FFBP_OP_CONT_AUTH: {
        const ffbp_cont_auth *c = &pkt->u.cont_auth;
        FUZZ_CHECK(fuzz_inside(base, len, c->data.p, c->data.len));
        FUZZ_CHECK(fuzz_inside(base, len, c->name.p, c->name.len));
        FUZZ_CHECK(fuzz_inside(base, len, c->list.p, c->list.len));
        FUZZ_CHECK(fuzz_inside(base, len, c->keys.p, c->keys.len));
        break;
    }
    case FFBP_OP_CRYPT_KEY_CALLBACK:
        FUZZ_CHECK(fuzz_inside(base, len, pkt->u.crypt_cb.data.p,
                               pkt->u.crypt_cb.data.len));
        break;
    case FFBP_OP_TRUSTED_AUTH:
        FUZZ_CHECK(
            fuzz_inside(base, len, pkt->u.trusted.p, pkt->u.trusted.len));
        break;
    default:
        break;
    }
}

/* Every cut of the packet at [start, end) must read as incomplete. */
static void check_truncations(const uint8_t *p, size_t start, size_t end,
                              int protocol, ffbp_status_arg *args, size_t cap) {
    size_t cuts[3] = {end - 1, start + (end - start) / 2, start + 3};
    for (size_t i = 0; i < 3; i++) {
        if (cuts[i] < start || cuts[i] >= end)
            continue;
        ffbp_reader r;
        ffbp_reader_init(&r, p + start, cuts[i] - start);
        ffbp_packet pkt;
        memset(&pkt, 0, sizeof(pkt));
        int rc = ffbp_get_packet(&r, protocol, &pkt, args, cap);
        FUZZ_CHECK(rc == FFBP_INCOMPLETE);
        FUZZ_CHECK(r.pos == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    int protocol = protocols[data[0] & 7];
    size_t cap = caps[(data[0] >> 3) & 7];
    ffbp_status_arg args[64];
    ffbp_status_arg *argp = cap ? args : NULL;
    const uint8_t *p = data + 1;
    size_t len = size - 1;

    ffbp_reader r;
    ffbp_reader_init(&r, p, len);
    for (;;) {
        size_t before = r.pos;
        ffbp_packet pkt;
        memset(&pkt, 0, sizeof(pkt));
        int rc = ffbp_get_packet(&r, protocol, &pkt, argp, cap);
        if (rc != FFBP_OK) {
            FUZZ_CHECK(rc == FFBP_INCOMPLETE || rc == FFBP_EBAD);
            FUZZ_CHECK(r.pos == before);
            break;
        }
        FUZZ_CHECK(r.pos >= before + 4 && r.pos <= len);
        check_views(p, len, &pkt, cap);
        check_truncations(p, before, r.pos, protocol, argp, cap);

        char line[256];
        int n = ffbp_describe(line, sizeof(line), &pkt);
        FUZZ_CHECK(n >= 0);
        FUZZ_CHECK(strlen(line) < sizeof(line));
        char tiny[8];
        ffbp_describe(tiny, sizeof(tiny), &pkt);
        FUZZ_CHECK(strlen(tiny) < sizeof(tiny));
        FUZZ_CHECK(strlen(ffbp_op_name(pkt.op)) > 0);
    }
    return 0;
}
