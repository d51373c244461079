/*
 * A hostile server and blobs (issue 8, defects 3 and 5): scripted
 * op_inline_blob, op_get_segment, op_info_blob and op_seek_blob answers
 * that a malicious server or a man in the middle could send. Every
 * length, count or offset the server gives must be checked against the
 * bytes that really arrived, before anything is allocated, copied or
 * looped over; an inconsistent answer is FFB_E_PROTO with the connection
 * broken; what a real Firebird 5 sends (tests/engine/test_replay_inline.c)
 * is still accepted. The rules and limits are in docs/blobs.md.
 * Run under ASan+UBSan and valgrind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tests/support/check.h"
#include "tests/support/hostile.h"

#define setup hostile_setup
#define teardown hostile_teardown

/* An FFB_E_PROTO that broke the connection. */
static void expect_proto(ffb_conn *c, int rc, const char *needle) {
    if (rc != FFB_E_PROTO)
        fail_msg("expected FFB_E_PROTO, got %d (%s)", rc,
                 ffb_error_message(ffb_conn_error(c)));
    assert_true(ffb_conn_is_broken(c));
    if (needle)
        expect_msg(c, needle);
}

static uint64_t rts(ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

static size_t cache_entries(const ffb_conn *c) {
    size_t n = 0;
    for (const ffb__inline *e = c->inl; e; e = e->next)
        n++;
    return n;
}

static void id_bytes(uint64_t id, uint8_t out[8]) {
    for (int i = 7; i >= 0; i--, id >>= 8)
        out[i] = (uint8_t)id;
}

#define TX 7        /* the transaction handle the script gives */
#define BLOB_H 9    /* the blob handle of a server open */
#define ID0 0x0000008100000000ull

/* ---- what the server sends ----------------------------------------------- */

/* A blob info answer for items 4-7: each value in `width` bytes (4, or 8
   for a total length beyond 32 bits), isc_info_end. */
static size_t info_buf(uint8_t *p, int64_t segs, int64_t max, int64_t len,
                       int64_t type, unsigned width) {
    size_t n = 0;
    const int64_t v[4] = {segs, max, len, type};
    for (unsigned i = 0; i < 4; i++) {
        unsigned w = i == 2 ? width : 4;
        p[n++] = (uint8_t)(4 + i);
        p[n++] = (uint8_t)w;
        p[n++] = 0;
        for (unsigned k = 0; k < w; k++)
            p[n++] = (uint8_t)((uint64_t)v[i] >> (8 * k));
    }
    p[n++] = FFBP_INFO_END;
    return n;
}

/* Append one [uint16 LE length][bytes] record of `n` bytes of `c`. */
static void rec(ffbp_writer *w, size_t n, uint8_t c) {
    uint8_t h[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
    ffbp_put_raw(w, h, 2);
    for (size_t i = 0; i < n; i++)
        ffbp_put_raw(w, &c, 1);
}

static void inline_pkt(uint16_t tx, uint64_t id, const uint8_t *info,
                       size_t ilen, const ffbp_writer *data) {
    srv_inline_blob(&W, tx, id, info, ilen, data ? data->data : NULL,
                    data ? data->len : 0);
}

/* A row of `select b from t`: null bitmap, then the blob id. */
static void blob_row(uint64_t id) {
    uint8_t row[12] = {0};
    for (int i = 0; i < 8; i++)
        row[4 + i] = (uint8_t)(id >> (56 - 8 * i));
    srv_fetch(&W, 0, 1, row, sizeof(row));
}

static const srv_var BLOB_COL = {FFBP_SQL_BLOB, 0, 0, 8, 1, "B"};

/* Prepare `select b from t` (or a procedure returning b) in a new
   transaction: transaction TX, statement 3. */
static ffb_stmt *prepare_blob(ffb_conn *c, ffb_tx **tx, int stmt_type) {
    uint8_t desc[512];
    size_t n = srv_describe(desc, sizeof(desc), stmt_type, 1, &BLOB_COL, 1, 1,
                            0, NULL, 0, 0);
    srv_response(&W, TX, 0, NULL, 0);
    srv_response(&W, 3, 0, NULL, 0);
    srv_response(&W, 0, 0, desc, n);
    hostile_push(&H, &W);
    OK(c, ffb_tx_begin(c, NULL, tx));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, *tx, "select b from t", (size_t)-1));
    return s;
}

static ffb_conn *attach19(const ffb_conn_options *o) {
    return hostile_attach(&H, 19, o);
}

/* The answers to [the close of the blob read before, riding in front,]
   open + info + one get of a blob read from the server: the data as one
   stream record, state 2. */
static void push_server_blob(const char *text, int64_t info_len,
                             int close_owed) {
    uint8_t info[64];
    if (close_owed)
        srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, BLOB_H, 0, NULL, 0);
    size_t il = info_buf(info, 1, (int64_t)strlen(text), info_len, 1, 4);
    srv_response(&W, 0xFFFF, 0, info, il);
    ffbp_writer d;
    ffbp_writer_init(&d, NULL);
    uint8_t h[2] = {(uint8_t)strlen(text), 0};
    ffbp_put_raw(&d, h, 2);
    ffbp_put_raw(&d, text, strlen(text));
    srv_response(&W, 2, 0, d.data, d.len);
    ffbp_writer_free(&d);
    hostile_push(&H, &W);
}

/* ---- A: inline blobs checked against their data -------------------------- */

/* The case: the info says 1000 bytes, the data holds 3. Before the
   fix the copy was cached with the info's length, and a seek on it copied
   1000 bytes out of a 5-byte buffer: heap memory came back as blob data. */
static void test_inline_length_beyond_data(void **state) {
    (void)state;
    ffb_conn *c = attach19(NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    uint8_t info[64];
    size_t il = info_buf(info, 1, 1000, 1000, 1, 4);
    ffbp_writer d;
    ffbp_writer_init(&d, NULL);
    rec(&d, 3, 'a');
    srv_response(&W, 0, 0, NULL, 0);
    inline_pkt(TX, ID0 + 6, info, il, &d);
    blob_row(ID0 + 6);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    ffbp_writer_free(&d);
    int rc = ffb_stmt_execute(s, tx);
    if (rc == 0) {
        /* What the unfixed library did: serve it, and over-read. */
        uint8_t id[8];
        assert_int_equal(ffb_stmt_fetch(s), 1);
        OK(c, ffb_stmt_get_blob_id(s, 0, id));
        ffb_blob *b;
        OK(c, ffb_blob_open(c, tx, id, 0, &b));
        int64_t pos;
        OK(c, ffb_blob_seek(b, 0, 0, &pos));
        const uint8_t *p;
        size_t n;
        OK(c, ffb_blob_read_all(b, &p, &n));
        fail_msg("an inline blob announcing 1000 bytes with 3 in its data "
                 "was accepted; read_all after a seek returned %zu bytes",
                 n);
    }
    expect_proto(c, rc, "00000081:00000006");
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* Inconsistent op_inline_blob packets, one connection each. */
typedef struct bad_inline {
    const char *what;
    const char *needle; /* in the message */
} bad_inline;

static const bad_inline BAD[] = {
    {"length beyond the data", "00000081:00000001"},
    {"record running past the data", "00000081:00000002"},
    {"record longer than the max segment", "00000081:00000003"},
    {"fewer records than num_segments", "00000081:00000004"},
    {"trailing bytes after the records", "00000081:00000005"},
    {"blob type 2", "00000081:00000006"},
    {"no total length item", "00000081:00000007"},
    {"negative total length", "00000081:00000008"},
    {"data for an empty blob", "00000081:00000009"},
    {"stream blob with max segment 0", "00000081:0000000A"},
    {"more than 65535 bytes of data", "00000081:0000000B"},
    {"bytes after isc_info_end", "00000081:0000000C"},
    {"max segment above 65535", "00000081:0000000D"},
    {"negative num_segments", "00000081:0000000E"},
    {"more records than num_segments", "00000081:0000000F"},
};

static void bad_case(size_t i, uint8_t *info, size_t *ilen, ffbp_writer *d) {
    switch (i + 1) {
    case 1: /* stream, 1000 announced, 3 held */
        *ilen = info_buf(info, 1, 1000, 1000, 1, 4);
        rec(d, 3, 'x');
        break;
    case 2: /* segmented 10 bytes: the record says 32 */
        *ilen = info_buf(info, 1, 10, 10, 0, 4);
        rec(d, 10, 'x');
        d->data[0] = 32;
        break;
    case 3: /* one 10-byte record, max segment 5 */
        *ilen = info_buf(info, 1, 5, 10, 0, 4);
        rec(d, 10, 'x');
        break;
    case 4: /* two segments announced, one sent */
        *ilen = info_buf(info, 2, 10, 10, 0, 4);
        rec(d, 10, 'x');
        break;
    case 5: /* 3 bytes, then garbage */
        *ilen = info_buf(info, 1, 3, 3, 0, 4);
        rec(d, 3, 'x');
        ffbp_put_raw(d, "\x01\x02", 2);
        break;
    case 6:
        *ilen = info_buf(info, 1, 3, 3, 2, 4);
        rec(d, 3, 'x');
        break;
    case 7: { /* items 4, 5, 7 only */
        uint8_t full[64];
        size_t n = info_buf(full, 1, 3, 3, 0, 4);
        memcpy(info, full, 14);           /* items 4 and 5 */
        memcpy(info + 14, full + 21, n - 21); /* item 7 and the end */
        *ilen = 14 + (n - 21);
        rec(d, 3, 'x');
        break;
    }
    case 8:
        *ilen = info_buf(info, 1, 3, -3, 0, 4);
        rec(d, 3, 'x');
        break;
    case 9:
        *ilen = info_buf(info, 0, 0, 0, 0, 4);
        rec(d, 0, 'x');
        break;
    case 10:
        *ilen = info_buf(info, 1, 0, 5, 1, 4);
        rec(d, 5, 'x');
        break;
    case 11: /* consistent, but larger than Firebird's 65535 limit */
        *ilen = info_buf(info, 2, 65533, 65533, 0, 4);
        rec(d, 65533, 'x');
        rec(d, 0, 'x');
        break;
    case 12:
        *ilen = info_buf(info, 1, 3, 3, 0, 4);
        info[(*ilen)++] = 4;
        rec(d, 3, 'x');
        break;
    case 13:
        *ilen = info_buf(info, 1, 70000, 3, 0, 4);
        rec(d, 3, 'x');
        break;
    case 14:
        *ilen = info_buf(info, -1, 3, 3, 0, 4);
        rec(d, 3, 'x');
        break;
    case 15: /* 1 segment announced, records 2 + 0 + 0 (framing-consistent
                sum, wrong count) */
        *ilen = info_buf(info, 1, 4, 4, 0, 4);
        rec(d, 2, 'x');
        rec(d, 0, 'x');
        rec(d, 0, 'x');
        break;
    default:
        fail();
    }
}

static void test_inline_inconsistent(void **state) {
    (void)state;
    char failures[2048] = "";
    for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        hostile_free(&H);
        hostile_init(&H);
        ffb_conn *c = attach19(NULL);
        ffb_tx *tx;
        ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
        uint8_t info[80];
        size_t ilen = 0;
        ffbp_writer d;
        ffbp_writer_init(&d, NULL);
        bad_case(i, info, &ilen, &d);
        srv_response(&W, 0, 0, NULL, 0);
        inline_pkt(TX, ID0 + i + 1, info, ilen, &d);
        blob_row(ID0 + i + 1);
        srv_fetch(&W, 100, 0, NULL, 0);
        hostile_push(&H, &W);
        ffbp_writer_free(&d);
        int rc = ffb_stmt_execute(s, tx);
        const char *msg = ffb_error_message(ffb_conn_error(c));
        if (rc != FFB_E_PROTO || !ffb_conn_is_broken(c) ||
            !strstr(msg, BAD[i].needle)) {
            size_t l = strlen(failures);
            snprintf(failures + l, sizeof(failures) - l,
                     "\n  %s: rc %d, cached %zu, \"%s\"", BAD[i].what, rc,
                     cache_entries(c), rc ? msg : "");
        }
        ffb_stmt_free(s);
        ffb_tx_free(tx);
        ffb_conn_free(c);
    }
    if (failures[0])
        fail_msg("inconsistent op_inline_blob accepted:%s", failures);
}

/* What Firebird 5 sends is accepted and served from the cache, exactly;
   a copy whose records hold less than its info announces (Firebird's
   estimate for transliterated text, reference C.3.5) is well-formed but
   not kept: that blob is read from the server. */
typedef struct good_inline {
    int64_t segs, max, len;
    int stream;
    size_t rec[4]; /* record lengths, then 0 ... */
    size_t nrec;
    size_t junk;   /* unused tail bytes */
    int cached;
} good_inline;

static const good_inline GOOD[] = {
    {0, 0, 0, 0, {0}, 0, 0, 1},                /* empty blob */
    {3, 10, 30, 0, {10, 10, 10}, 3, 0, 1},     /* reference C.3.2 */
    {1, 1000, 1000, 1, {1000}, 1, 0, 1},       /* one stream put */
    {1, 100, 250, 1, {100, 100, 50}, 3, 0, 1}, /* engine chunks */
    {2, 5, 5, 0, {5, 0}, 2, 0, 1},             /* an empty segment */
    {1, 40, 40, 0, {25}, 1, 15, 0},            /* estimate, segmented */
    {1, 20, 40, 1, {15, 0}, 2, 25, 0},         /* estimate, stream */
};

static void test_inline_firebird_shapes(void **state) {
    (void)state;
    const size_t n = sizeof(GOOD) / sizeof(GOOD[0]);
    ffb_conn *c = attach19(NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    srv_response(&W, 0, 0, NULL, 0);
    for (size_t i = 0; i < n; i++) {
        const good_inline *g = &GOOD[i];
        uint8_t info[64];
        size_t il = info_buf(info, g->segs, g->max, g->len, g->stream, 4);
        ffbp_writer d;
        ffbp_writer_init(&d, NULL);
        for (size_t r = 0; r < g->nrec; r++)
            rec(&d, g->rec[r], (uint8_t)('a' + r));
        for (size_t j = 0; j < g->junk; j++)
            ffbp_put_raw(&d, "?", 1);
        inline_pkt(TX, ID0 + 0x100 + i, info, il, &d);
        blob_row(ID0 + 0x100 + i);
        ffbp_writer_free(&d);
    }
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(s, tx));
    assert_false(ffb_conn_is_broken(c));
    for (size_t i = 0; i < n; i++) {
        const good_inline *g = &GOOD[i];
        assert_int_equal(ffb_stmt_fetch(s), 1);
        uint8_t id[8];
        OK(c, ffb_stmt_get_blob_id(s, 0, id));
        if (!g->cached)
            push_server_blob("from the server", 40, c->fifo_len > 0);
        uint64_t r0 = rts(c);
        ffb_blob *b;
        OK(c, ffb_blob_open(c, tx, id, 0, &b));
        const uint8_t *p;
        size_t len;
        OK(c, ffb_blob_read_all(b, &p, &len));
        if (g->cached) {
            assert_int_equal(rts(c), r0);
            assert_int_equal(len, (size_t)g->len);
            size_t at = 0;
            for (size_t r = 0; r < g->nrec; r++)
                for (size_t k = 0; k < g->rec[r]; k++)
                    assert_int_equal(p[at++], 'a' + r);
            ffb_blob_info bi;
            OK(c, ffb_blob_get_info(b, &bi, sizeof(bi)));
            assert_int_equal(bi.length, g->len);
            assert_int_equal(bi.stream, g->stream);
        } else {
            assert_int_equal(rts(c) - r0, 1);
            assert_int_equal(len, strlen("from the server"));
            assert_memory_equal(p, "from the server", len);
        }
        ffb_blob_free(b);
    }
    assert_int_equal(ffb_stmt_fetch(s), 0);
    assert_int_equal(cache_entries(c), 0);
    assert_int_equal(c->inl_bytes, 0);
    assert_false(ffb_conn_is_broken(c));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* Seeks on a cached stream blob stay inside the bytes held, whatever the
   offset (no signed overflow either). */
static void test_inline_seek_bounds(void **state) {
    (void)state;
    ffb_conn *c = attach19(NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    uint8_t info[64];
    size_t il = info_buf(info, 1, 10, 10, 1, 4);
    ffbp_writer d;
    ffbp_writer_init(&d, NULL);
    uint8_t h[2] = {10, 0};
    ffbp_put_raw(&d, h, 2);
    ffbp_put_raw(&d, "abcdefghij", 10);
    srv_response(&W, 0, 0, NULL, 0);
    inline_pkt(TX, ID0 + 0x20, info, il, &d);
    blob_row(ID0 + 0x20);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    ffbp_writer_free(&d);
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    uint8_t id[8];
    OK(c, ffb_stmt_get_blob_id(s, 0, id));
    uint64_t r0 = rts(c);
    ffb_blob *b;
    OK(c, ffb_blob_open(c, tx, id, 0, &b));
    const uint8_t *p;
    size_t n;
    int64_t pos;
    OK(c, ffb_blob_seek(b, 2, -3, &pos));
    assert_int_equal(pos, 7);
    OK(c, ffb_blob_read_all(b, &p, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(p, "hij", 3);
    OK(c, ffb_blob_seek(b, 0, 100, &pos));
    assert_int_equal(pos, 10);
    OK(c, ffb_blob_read_all(b, &p, &n));
    assert_int_equal(n, 0);
    OK(c, ffb_blob_seek(b, 0, -5, &pos));
    assert_int_equal(pos, 0);
    OK(c, ffb_blob_seek(b, 1, 4, &pos));
    assert_int_equal(pos, 4);
    /* Offsets at the ends of int64_t: clamped, no overflow. */
    OK(c, ffb_blob_seek(b, 1, INT64_MAX, &pos));
    assert_int_equal(pos, 10);
    OK(c, ffb_blob_seek(b, 2, INT64_MAX, &pos));
    assert_int_equal(pos, 10);
    OK(c, ffb_blob_seek(b, 1, INT64_MIN, &pos));
    assert_int_equal(pos, 0);
    OK(c, ffb_blob_seek(b, 2, INT64_MIN, &pos));
    assert_int_equal(pos, 0);
    uint8_t buf[4];
    size_t got;
    OK(c, ffb_blob_read(b, buf, sizeof(buf), &got));
    assert_int_equal(got, 4);
    assert_memory_equal(buf, "abcd", 4);
    assert_int_equal(rts(c), r0);
    ffb_blob_free(b);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- B: op_inline_blob only where Firebird 5 sends it -------------------- */

static void simple_inline(uint16_t tx, uint64_t id) {
    uint8_t info[64];
    size_t il = info_buf(info, 1, 3, 3, 1, 4);
    ffbp_writer d;
    ffbp_writer_init(&d, NULL);
    rec(&d, 3, 'z');
    inline_pkt(tx, id, info, il, &d);
    ffbp_writer_free(&d);
}

/* In front of the answer to op_ping: no rows are owed. */
static void test_unsolicited_before_ping(void **state) {
    (void)state;
    ffb_conn *c = attach19(NULL);
    simple_inline(TX, ID0 + 0x31);
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    int rc = ffb_conn_ping(c);
    expect_proto(c, rc, "00000081:00000031");
    assert_int_equal(cache_entries(c), 0);
    ffb_conn_free(c);
}

/* In front of the answers to a prepare (op_transaction first). */
static void test_unsolicited_before_prepare(void **state) {
    (void)state;
    ffb_conn *c = attach19(NULL);
    uint8_t desc[512];
    size_t n = srv_describe(desc, sizeof(desc), FFB_STMT_SELECT, 1, &BLOB_COL,
                            1, 1, 0, NULL, 0, 0);
    simple_inline(TX, ID0 + 0x32);
    srv_response(&W, TX, 0, NULL, 0);
    srv_response(&W, 3, 0, NULL, 0);
    srv_response(&W, 0, 0, desc, n);
    hostile_push(&H, &W);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    int rc = ffb_stmt_prepare(s, tx, "select b from t", (size_t)-1);
    expect_proto(c, rc, "00000081:00000032");
    assert_int_equal(cache_entries(c), 0);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* In front of the op_response of the op_execute that opens a cursor
   (Firebird sends them with the fetches only). */
static void test_unsolicited_before_execute(void **state) {
    (void)state;
    ffb_conn *c = attach19(NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    simple_inline(TX, ID0 + 0x33);
    srv_response(&W, 0, 0, NULL, 0);
    blob_row(ID0 + 0x33);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    int rc = ffb_stmt_execute(s, tx);
    expect_proto(c, rc, "op_execute");
    expect_msg(c, "00000081:00000033");
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* After the last answer, with nothing owed: the connection breaks and the
   copy is not served. */
static void test_unsolicited_nothing_owed(void **state) {
    (void)state;
    ffb_conn *c = attach19(NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    srv_response(&W, 0, 0, NULL, 0);
    blob_row(ID0 + 0x34);
    srv_fetch(&W, 100, 0, NULL, 0);
    simple_inline(TX, ID0 + 0x34);
    hostile_push(&H, &W);
    int rc = ffb_stmt_execute(s, tx);
    (void)rc; /* the rows may have been delivered before the bad packet */
    assert_true(ffb_conn_is_broken(c));
    expect_msg(c, "00000081:00000034");
    assert_int_equal(cache_entries(c), 0);
    uint8_t id[8];
    id_bytes(ID0 + 0x34, id);
    ffb_blob *b;
    assert_true(ffb_blob_open(c, tx, id, 0, &b) < 0);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* Naming a transaction that is not ours (or not active). */
static void test_inline_foreign_transaction(void **state) {
    (void)state;
    ffb_conn *c = attach19(NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    srv_response(&W, 0, 0, NULL, 0);
    simple_inline(TX + 1, ID0 + 0x35);
    blob_row(ID0 + 0x35);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    int rc = ffb_stmt_execute(s, tx);
    expect_proto(c, rc, "00000081:00000035");
    assert_int_equal(cache_entries(c), 0);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* Below protocol 19 the decoder refuses op_inline_blob (a check: this
   held before the fix too). */
static void test_inline_below_protocol_19(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 18, NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    srv_response(&W, 0, 0, NULL, 0);
    simple_inline(TX, ID0 + 0x36);
    blob_row(ID0 + 0x36);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    int rc = ffb_stmt_execute(s, tx);
    expect_proto(c, rc, "op_inline_blob");
    assert_int_equal(cache_entries(c), 0);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* In front of op_sql_response of an op_execute2 (a singleton output): the
   other place Firebird 5 sends them. */
static void test_inline_before_sql_response(void **state) {
    (void)state;
    ffb_conn *c = attach19(NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_EXEC_PROCEDURE);
    simple_inline(TX, ID0 + 0x37);
    uint8_t row[12] = {0};
    for (int i = 0; i < 8; i++)
        row[4 + i] = (uint8_t)((ID0 + 0x37) >> (56 - 8 * i));
    srv_sql_response(&W, 1, row, sizeof(row));
    srv_response(&W, 0, 0, NULL, 0);
    /* The row counts asked in the same write (isc_info_sql_records:
       select, insert, update and delete counts, all 0). */
    static const uint8_t counts[] = {
        23, 28, 0,             /* isc_info_sql_records, 28 bytes */
        13, 4,  0, 0, 0, 0, 0, /* isc_info_req_select_count */
        14, 4,  0, 0, 0, 0, 0, /* isc_info_req_insert_count */
        15, 4,  0, 0, 0, 0, 0, /* isc_info_req_update_count */
        16, 4,  0, 0, 0, 0, 0, /* isc_info_req_delete_count */
        1};                    /* isc_info_end */
    srv_response(&W, 0, 0, counts, sizeof(counts));
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_rows_affected(s), 0);
    assert_int_equal(cache_entries(c), 1);
    assert_int_equal(ffb_stmt_fetch(s), 1);
    uint8_t id[8];
    OK(c, ffb_stmt_get_blob_id(s, 0, id));
    uint64_t r0 = rts(c);
    ffb_blob *b;
    OK(c, ffb_blob_open(c, tx, id, 0, &b));
    const uint8_t *p;
    size_t n;
    OK(c, ffb_blob_read_all(b, &p, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(p, "zzz", 3);
    assert_int_equal(rts(c), r0);
    ffb_blob_free(b);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* Far more inline blobs than the budget: the cache never holds more than
   blob_cache_bytes, and the connection stays usable. */
static void test_inline_flood_budget(void **state) {
    (void)state;
    ffb_conn_options o;
    hostile_options(&o);
    o.blob_cache_bytes = 4096;
    ffb_conn *c = attach19(&o);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    srv_response(&W, 0, 0, NULL, 0);
    uint8_t info[64];
    size_t il = info_buf(info, 1, 100, 100, 0, 4);
    ffbp_writer d;
    ffbp_writer_init(&d, NULL);
    rec(&d, 100, 'f');
    for (unsigned i = 0; i < 3000; i++) {
        inline_pkt(TX, ID0 + 0x1000 + i, info, il, &d);
        if (i % 100 == 99)
            blob_row(ID0 + 0x1000 + i);
    }
    /* And the same id over and over. */
    for (unsigned i = 0; i < 1000; i++)
        inline_pkt(TX, ID0 + 0x1000, info, il, &d);
    blob_row(ID0 + 0x1000);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    ffbp_writer_free(&d);
    OK(c, ffb_stmt_execute(s, tx));
    assert_false(ffb_conn_is_broken(c));
    assert_true(c->inl_bytes <= 4096);
    assert_true(cache_entries(c) * (sizeof(ffb__inline) + 100) <= 4096);
    assert_true(cache_entries(c) > 0);
    size_t bytes = 0;
    for (const ffb__inline *e = c->inl; e; e = e->next)
        bytes += sizeof(ffb__inline) + e->len;
    assert_int_equal(bytes, c->inl_bytes);
    int rows = 0;
    while (ffb_stmt_fetch(s) == 1)
        rows++;
    assert_int_equal(rows, 31);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* Seconds to take `n` empty inline blobs (distinct ids) in front of one
   row, with the default 10 MiB budget (which holds them all). */
static double flood_seconds(unsigned n) {
    hostile_free(&H);
    hostile_init(&H);
    ffb_conn *c = attach19(NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    srv_response(&W, 0, 0, NULL, 0);
    uint8_t info[64];
    size_t il = info_buf(info, 0, 0, 0, 0, 4);
    for (unsigned i = 0; i < n; i++)
        inline_pkt(TX, ID0 + 0x100000 + i, info, il, NULL);
    blob_row(ID0 + 0x100000);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    OK(c, ffb_stmt_execute(s, tx));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(cache_entries(c), n);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
    return (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* Each copy costs the same whatever the cache holds: before the index,
   every store walked the whole list (4 times the packets took 16 times
   as long: 200,000 empty blobs, 10 MB of packets, took 75 s). */
static void test_inline_flood_linear(void **state) {
    (void)state;
    double t1 = flood_seconds(10000);
    double t4 = flood_seconds(40000);
    if (t4 > 8 * t1 + 0.05)
        fail_msg("10,000 inline blobs took %.3f s, 40,000 took %.3f s: "
                 "not linear", t1, t4);
}

/* A newer copy of an id that cannot be kept (over the budget) must not
   leave the older, stale one to be served (the blob id was reused,
   Firebird issue #9060): the blob is read from the server. */
static void test_inline_stale_copy_dropped(void **state) {
    (void)state;
    ffb_conn_options o;
    hostile_options(&o);
    o.blob_cache_bytes = sizeof(ffb__inline) + 50;
    ffb_conn *c = attach19(&o);
    ffb_tx *tx;
    ffb_stmt *s = prepare_blob(c, &tx, FFB_STMT_SELECT);
    srv_response(&W, 0, 0, NULL, 0);
    simple_inline(TX, ID0 + 0x40); /* "zzz": fits */
    blob_row(ID0 + 0x40);
    uint8_t info[64];
    size_t il = info_buf(info, 1, 200, 200, 0, 4);
    ffbp_writer d;
    ffbp_writer_init(&d, NULL);
    rec(&d, 200, 'n');
    inline_pkt(TX, ID0 + 0x40, info, il, &d); /* newer, too big */
    ffbp_writer_free(&d);
    blob_row(ID0 + 0x40);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    assert_int_equal(ffb_stmt_fetch(s), 1);
    uint8_t id[8];
    OK(c, ffb_stmt_get_blob_id(s, 0, id));
    push_server_blob("current", 7, 0);
    uint64_t r0 = rts(c);
    ffb_blob *b;
    OK(c, ffb_blob_open(c, tx, id, 0, &b));
    const uint8_t *p;
    size_t n;
    OK(c, ffb_blob_read_all(b, &p, &n));
    if (n == 3 && memcmp(p, "zzz", 3) == 0)
        fail_msg("the stale inline copy was served");
    assert_int_equal(n, 7);
    assert_memory_equal(p, "current", 7);
    assert_int_equal(rts(c) - r0, 1);
    ffb_blob_free(b);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- C: op_get_segment and op_info_blob answers -------------------------- */

/* Open a blob of `tx` (begun lazily: the script answers op_transaction
   first) with `prefetch`; the answers were pushed by the caller. */
static ffb_blob *open_server_blob(ffb_conn *c, ffb_tx **tx, size_t prefetch) {
    OK(c, ffb_tx_begin(c, NULL, tx));
    uint8_t id[8];
    id_bytes(ID0 + 0x50, id);
    ffb_blob *b;
    OK(c, ffb_blob_open(c, *tx, id, prefetch, &b));
    return b;
}

static void push_open_info(int64_t segs, int64_t max, int64_t len,
                           unsigned width) {
    uint8_t info[64];
    srv_response(&W, TX, 0, NULL, 0);     /* op_transaction */
    srv_response(&W, BLOB_H, 0, NULL, 0); /* op_open_blob2 */
    size_t il = info_buf(info, segs, max, len, 1, width);
    srv_response(&W, 0xFFFF, 0, info, il);
}

/* An answer longer than the 65535 bytes the op_get_segment asked for. */
static void test_get_segment_longer_than_asked(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    push_open_info(2, 65535, 70000, 4);
    ffbp_writer d;
    ffbp_writer_init(&d, NULL);
    rec(&d, 65535, 'q');
    rec(&d, 4465, 'q');
    srv_response(&W, 2, 0, d.data, d.len);
    ffbp_writer_free(&d);
    hostile_push(&H, &W);
    ffb_tx *tx;
    ffb_blob *b = open_server_blob(c, &tx, 0);
    const uint8_t *p;
    size_t n = 0;
    int rc = ffb_blob_read_all(b, &p, &n);
    if (rc == 0)
        fail_msg("a 70004-byte answer to a 65535-byte op_get_segment was "
                 "accepted (%zu bytes)", n);
    expect_proto(c, rc, "65535");
    ffb_blob_free(b);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* Framing past the data, an unknown state, data after the end. */
static void test_get_segment_malformed(void **state) {
    (void)state;
    char failures[1024] = "";
    for (int i = 0; i < 3; i++) {
        hostile_free(&H);
        hostile_init(&H);
        ffb_conn *c = hostile_attach(&H, 16, NULL);
        push_open_info(1, 100, 100, 4);
        ffbp_writer d;
        ffbp_writer_init(&d, NULL);
        const char *what = "";
        if (i == 0) {
            what = "a record running past the data";
            rec(&d, 10, 'q');
            d.data[0] = 200;
            srv_response(&W, 2, 0, d.data, d.len);
        } else if (i == 1) {
            what = "state 3";
            rec(&d, 10, 'q');
            srv_response(&W, 3, 0, d.data, d.len);
        } else {
            what = "data after state 2";
            rec(&d, 10, 'q');
            srv_response(&W, 2, 0, d.data, d.len);
            srv_response(&W, 2, 0, d.data, d.len);
        }
        ffbp_writer_free(&d);
        hostile_push(&H, &W);
        ffb_tx *tx;
        ffb_blob *b = open_server_blob(c, &tx, i == 2 ? 2 * 65533 : 0);
        const uint8_t *p;
        size_t n = 0;
        int rc = ffb_blob_read_all(b, &p, &n);
        if (rc != FFB_E_PROTO || !ffb_conn_is_broken(c)) {
            size_t l = strlen(failures);
            snprintf(failures + l, sizeof(failures) - l,
                     "\n  %s: rc %d, %zu bytes", what, rc, n);
        }
        ffb_blob_free(b);
        ffb_tx_free(tx);
        ffb_conn_free(c);
    }
    if (failures[0])
        fail_msg("malformed op_get_segment answers accepted:%s", failures);
}

/* Info answers: negative or absurd values, longer than asked. */
static void test_info_blob_malformed(void **state) {
    (void)state;
    char failures[1024] = "";
    for (int i = 0; i < 4; i++) {
        hostile_free(&H);
        hostile_init(&H);
        ffb_conn *c = hostile_attach(&H, 16, NULL);
        uint8_t info[256];
        size_t il;
        const char *what;
        srv_response(&W, TX, 0, NULL, 0);
        srv_response(&W, BLOB_H, 0, NULL, 0);
        if (i == 0) {
            what = "negative num_segments";
            il = info_buf(info, -5, 10, 10, 1, 4);
        } else if (i == 1) {
            what = "negative max_segment";
            il = info_buf(info, 1, -10, 10, 1, 4);
        } else if (i == 2) {
            what = "negative length";
            il = info_buf(info, 1, 10, -10, 1, 8);
        } else {
            what = "an answer longer than the 128 bytes asked";
            il = info_buf(info, 1, 10, 10, 1, 4) - 1; /* well-formed: */
            for (int k = 0; k < 20; k++) {            /* items repeated */
                static const uint8_t again[] = {4, 4, 0, 1, 0, 0, 0};
                memcpy(info + il, again, sizeof(again));
                il += sizeof(again);
            }
            info[il++] = FFBP_INFO_END;
        }
        srv_response(&W, 0xFFFF, 0, info, il);
        ffbp_writer d;
        ffbp_writer_init(&d, NULL);
        rec(&d, 10, 'q');
        srv_response(&W, 2, 0, d.data, d.len);
        ffbp_writer_free(&d);
        hostile_push(&H, &W);
        ffb_tx *tx;
        ffb_blob *b = open_server_blob(c, &tx, 0);
        ffb_blob_info bi = {0, 0, 0, 0};
        int rc = ffb_blob_get_info(b, &bi, sizeof(bi));
        if (rc != FFB_E_PROTO || !ffb_conn_is_broken(c)) {
            size_t l = strlen(failures);
            snprintf(failures + l, sizeof(failures) - l,
                     "\n  %s: rc %d (segments %lld, max %lld, length %lld)",
                     what, rc, (long long)bi.segments,
                     (long long)bi.max_segment, (long long)bi.length);
        }
        ffb_blob_free(b);
        ffb_tx_free(tx);
        ffb_conn_free(c);
    }
    if (failures[0])
        fail_msg("malformed op_info_blob answers accepted:%s", failures);
}

/* An allocator that records the largest single request. */
typedef struct peak_alloc {
    size_t largest;
} peak_alloc;

static void *pk_malloc(size_t size, void *data) {
    peak_alloc *pa = data;
    if (size > pa->largest)
        pa->largest = size;
    return malloc(size ? size : 1);
}

static void *pk_realloc(void *ptr, size_t size, void *data) {
    peak_alloc *pa = data;
    if (size > pa->largest)
        pa->largest = size;
    return realloc(ptr, size ? size : 1);
}

static void pk_free(void *ptr, void *data) {
    (void)data;
    free(ptr);
}

/* Count the op_get_segment requests the client wrote: op 36, a handle,
   length 65535 (xdr_short: FF FF FF FF), an empty segment. */
static size_t gets_written(const hostile *h) {
    size_t n = 0;
    for (size_t i = 0; i + 16 <= h->written_len; i += 4) {
        const uint8_t *p = h->written + i;
        if (p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 36 &&
            p[8] == 0xFF && p[9] == 0xFF && p[10] == 0xFF && p[11] == 0xFF &&
            p[12] == 0 && p[13] == 0 && p[14] == 0 && p[15] == 0) {
            n++;
            i += 12;
        }
    }
    return n;
}

/* Answers every op_get_segment written so far with `gen_chunk` bytes of
   data (state 1), until `gen_total` bytes were sent, then empty state-2
   answers. */
static size_t gen_answered, gen_sent, gen_total, gen_chunk;

static int answer_gets(hostile *h, ffbp_writer *w, size_t call) {
    (void)call;
    size_t want = gets_written(h);
    if (want == gen_answered)
        return 0;
    ffbp_writer d;
    ffbp_writer_init(&d, NULL);
    for (; gen_answered < want; gen_answered++) {
        size_t n = gen_total - gen_sent < gen_chunk ? gen_total - gen_sent
                                                    : gen_chunk;
        ffbp_writer_reset(&d);
        if (n)
            rec(&d, n, (uint8_t)gen_sent);
        gen_sent += n;
        srv_response(w, gen_sent == gen_total ? 2 : 1, 0, d.data, d.len);
    }
    ffbp_writer_free(&d);
    return 1;
}

/* The info claims INT64_MAX bytes: nothing is allocated or asked for from
   that number beyond one part (256 requests), and what arrives is what is
   read. Before the fix the refill's arithmetic overflowed (UBSan). */
static void test_info_absurd_length(void **state) {
    (void)state;
    peak_alloc pa = {0};
    ffb_allocator al = {pk_malloc, pk_realloc, pk_free, &pa};
    ffb_conn_options o;
    hostile_options(&o);
    o.allocator = &al;
    ffb_conn *c = attach19(&o);
    push_open_info(1, 65533, INT64_MAX, 8);
    hostile_push(&H, &W);
    gen_answered = gen_sent = 0;
    gen_total = 300000;
    gen_chunk = 1000; /* far from the end of int64_t after the first */
    H.gen = answer_gets;
    ffb_tx *tx;
    ffb_blob *b = open_server_blob(c, &tx, 0);
    ffb_blob_info bi;
    OK(c, ffb_blob_get_info(b, &bi, sizeof(bi)));
    assert_int_equal(bi.length, INT64_MAX);
    const uint8_t *p;
    size_t n;
    OK(c, ffb_blob_read_all(b, &p, &n));
    assert_int_equal(n, 300000);
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)((i / 1000) * 1000))
            fail_msg("byte %zu is %02X", i, p[i]);
    /* The prefetch, then parts of 256 requests. */
    assert_true(gets_written(&H) <= 1 + 2 * 256);
    assert_true(pa.largest < 4u * 1024u * 1024u);
    assert_false(ffb_conn_is_broken(c));
    ffb_blob_free(b);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* Streaming a large blob: the read buffer stays within the documented
   bound (under 1 MiB unread plus one part of at most 256 x 65533 bytes). */
static void test_read_ahead_bounded(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    const size_t total = 40u * 1024u * 1024u;
    push_open_info(1, 65533, (int64_t)total, 4);
    hostile_push(&H, &W);
    gen_answered = gen_sent = 0;
    gen_total = total;
    gen_chunk = 65533;
    H.gen = answer_gets;
    ffb_tx *tx;
    ffb_blob *b = open_server_blob(c, &tx, 0);
    static uint8_t buf[1u << 20];
    size_t got, sum = 0, most = 0;
    do {
        OK(c, ffb_blob_read(b, buf, sizeof(buf), &got));
        for (size_t i = 0; i < got; i++)
            if (buf[i] != (uint8_t)(((sum + i) / 65533) * 65533))
                fail_msg("byte %zu is %02X", sum + i, buf[i]);
        sum += got;
        size_t held = b->rbuf.len - b->rpos;
        if (held > most)
            most = held;
    } while (got);
    assert_int_equal(sum, total);
    assert_true(most < 1024u * 1024u + 256u * 65533u);
    ffb_blob_free(b);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- D: the server's seek answer, the application's offsets -------------- */

/* A seek answered with a position beyond the blob (or the target). */
static void test_seek_answer_beyond_blob(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    push_open_info(1, 100, 100, 4);
    ffbp_writer d;
    ffbp_writer_init(&d, NULL);
    rec(&d, 100, 's');
    srv_response(&W, 2, 0, d.data, d.len);
    ffbp_writer_free(&d);
    hostile_push(&H, &W);
    ffb_tx *tx;
    ffb_blob *b = open_server_blob(c, &tx, 0);
    uint8_t buf[10];
    size_t got;
    OK(c, ffb_blob_read(b, buf, sizeof(buf), &got));
    /* The application's own offsets: out of 32 bits without overflow. */
    int64_t pos;
    assert_int_equal(ffb_blob_seek(b, 1, INT64_MAX, &pos), FFB_E_INVAL);
    assert_int_equal(ffb_blob_seek(b, 1, INT64_MIN, &pos), FFB_E_INVAL);
    assert_false(ffb_conn_is_broken(c));
    srv_response(&W, 0, 0x7FFFFFF0u, NULL, 0);
    hostile_push(&H, &W);
    int rc = ffb_blob_seek(b, 0, 50, &pos);
    expect_proto(c, rc, "seek");
    ffb_blob_free(b);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_inline_length_beyond_data),
        T(test_inline_inconsistent),
        T(test_inline_firebird_shapes),
        T(test_inline_seek_bounds),
        T(test_unsolicited_before_ping),
        T(test_unsolicited_before_prepare),
        T(test_unsolicited_before_execute),
        T(test_unsolicited_nothing_owed),
        T(test_inline_foreign_transaction),
        T(test_inline_below_protocol_19),
        T(test_inline_before_sql_response),
        T(test_inline_flood_budget),
        T(test_inline_flood_linear),
        T(test_inline_stale_copy_dropped),
        T(test_get_segment_longer_than_asked),
        T(test_get_segment_malformed),
        T(test_info_blob_malformed),
        T(test_info_absurd_length),
        T(test_read_ahead_bounded),
        T(test_seek_answer_beyond_blob),
#undef T
    };
    /* HOSTILE_BLOB_TEST=name runs one test (a sanitizer stops at the
       first report). */
    if (getenv("HOSTILE_BLOB_TEST"))
        cmocka_set_test_filter(getenv("HOSTILE_BLOB_TEST"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
