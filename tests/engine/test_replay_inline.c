/*
 * Replays the recorded Firebird 5.0.4 conversation fb5-inline-blobs (see
 * its header in tests/data/fb5) through the library: every client write
 * must equal the recording byte for byte. It checks protocol 19's inline
 * blobs (op_inline_blob in front of rows, served from the cache with no
 * I/O), the pipelined blob open (op_open_blob2 + op_info_blob(0xFFFF) +
 * op_get_segment(0xFFFF)), refills by exact size, closes riding with the
 * next request, and the inline size 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/conv.h"

#define OK(conn, expr)                                                         \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ < 0)                                                           \
            fail_msg("%s:%d: %s = %d: %s; %s", __FILE__, __LINE__, #expr, rc_, \
                     ffb_error_message(ffb_conn_error(conn)), cv.failure);     \
    } while (0)

static conv cv;

static uint64_t rts(ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

/* Byte i of the T column: 'A' + i % 26; of B: i % 256. */
static void check_t(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)('A' + i % 26))
            fail_msg("T byte %zu is %02X", i, p[i]);
}

static void check_b(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(i % 256))
            fail_msg("B byte %zu is %02X", i, p[i]);
}

typedef struct seen {
    ffb_tx *tx;
    int rows;
    int inline_blobs;
    uint64_t rts_before;
} seen;

/* Runs when the execute's rows are in, before the commit's answer (which
   ends the transaction and its inline cache) is read. */
static void on_rows(ffb_conn *conn, const ffb_result *res, void *data) {
    seen *s = data;
    ffb_stmt *st = ffb_result_stmt(res);
    assert_int_equal(ffb_result_status(res), 0);
    static const size_t sizes[] = {0, 0, 10, 60000, 100000};
    while (ffb_stmt_fetch(st) == 1) {
        int64_t id;
        assert_int_equal(ffb_stmt_get_int64(st, 0, &id), 0);
        s->rows++;
        for (unsigned col = 1; col <= 2; col++) {
            if (ffb_stmt_is_null(st, col) == 1)
                continue;
            uint8_t bid[8];
            assert_int_equal(ffb_stmt_get_blob_id(st, col, bid), 0);
            if (sizes[id - 1] > 65533)
                continue; /* too big to be inlined */
            uint64_t before = rts(conn);
            ffb_blob *b;
            assert_int_equal(ffb_blob_open(conn, s->tx, bid, 0, &b), 0);
            const uint8_t *p;
            size_t n;
            assert_int_equal(ffb_blob_read_all(b, &p, &n), 0);
            ffb_blob_info info;
            assert_int_equal(ffb_blob_get_info(b, &info, sizeof(info)), 0);
            /* Served from the inline cache: no request at all. */
            assert_int_equal(rts(conn), before);
            assert_int_equal(n, sizes[id - 1]);
            assert_int_equal(info.length, (int64_t)n);
            assert_int_equal(info.stream, col == 2);
            if (col == 1)
                check_t(p, n);
            else
                check_b(p, n);
            ffb_blob_free(b);
            s->inline_blobs++;
        }
    }
}

/* An op_inline_blob as the reply decoder hands it over: stream blob `text`
   in transaction `tx`, one record, its info answer (items 4-7). */
static void store_inline(ffb_conn *c, uint16_t tx, uint64_t id,
                         const char *text) {
    uint8_t len = (uint8_t)strlen(text);
    uint8_t info[] = {4, 4, 0, 1, 0, 0, 0,   /* segments 1 */
                      5, 2, 0, len, 0,       /* max segment */
                      6, 4, 0, len, 0, 0, 0, /* length */
                      7, 4, 0, 1, 0, 0, 0,   /* stream */
                      1};
    uint8_t data[260] = {len, 0};
    memcpy(data + 2, text, len);
    ffbp_inline_blob ib = {tx, id, {info, sizeof(info)}, {data, len + 2u}};
    ffb__inline_store(c, &ib);
}

static void id_bytes(uint64_t id, uint8_t out[8]) {
    for (int i = 7; i >= 0; i--, id >>= 8)
        out[i] = (uint8_t)id;
}

static size_t cache_entries(const ffb_conn *c) {
    size_t n = 0;
    for (const ffb__inline *e = c->inl; e; e = e->next)
        n++;
    return n;
}

/* Read an open blob whole and compare. */
static void expect_blob(ffb_conn *c, ffb_blob *b, const char *text) {
    const uint8_t *p;
    size_t n;
    OK(c, ffb_blob_read_all(b, &p, &n));
    assert_int_equal(n, strlen(text));
    assert_memory_equal(p, text, n);
}

/* The cache rules of C.3.5-C.3.7 on a live (replayed) transaction: the
   conversation fails on any write, so every open here is served from
   memory. */
static void check_cache_rules(ffb_conn *c, ffb_tx *tx) {
    assert_int_equal(tx->state, FFB__TX_ACTIVE);
    const uint64_t ID = 0x0000008100000042ull;
    uint8_t id[8];
    id_bytes(ID, id);
    size_t entries = cache_entries(c), bytes = c->inl_bytes;
    uint64_t r0 = rts(c);

    /* The same id again while unused: the newer copy replaces the old. */
    store_inline(c, tx->handle, ID, "stale copy");
    store_inline(c, tx->handle, ID, "newer");
    assert_int_equal(cache_entries(c), entries + 1);
    ffb_blob *b;
    OK(c, ffb_blob_open(c, tx, id, 0, &b));
    ffb_blob_info bi;
    OK(c, ffb_blob_get_info(b, &bi, sizeof(bi)));
    assert_int_equal(bi.length, 5);
    /* While the application reads it, a new copy does not touch it. */
    store_inline(c, tx->handle, ID, "while in use");
    expect_blob(c, b, "newer");
    /* One copy serves one open: closing drops it. */
    ffb_blob_free(b);
    assert_int_equal(cache_entries(c), entries);
    assert_int_equal(c->inl_bytes, bytes);

    /* Over the budget a copy is not kept. */
    size_t budget = c->inline_budget;
    c->inline_budget = bytes + sizeof(ffb__inline) + 3;
    store_inline(c, tx->handle, ID, "too long");
    assert_int_equal(cache_entries(c), entries);
    store_inline(c, tx->handle, ID, "fit");
    assert_int_equal(cache_entries(c), entries + 1);
    c->inline_budget = budget;
    /* Another transaction's copy is a separate entry. */
    store_inline(c, (uint16_t)(tx->handle + 1), ID, "other tx");
    assert_int_equal(cache_entries(c), entries + 2);
    assert_int_equal(rts(c) - r0, 0);
    /* Both stay until their transactions end (the commit below). */
}

static void test_replay_inline_blobs(void **state) {
    (void)state;
    char path[512];
    conv_load(&cv, conv_data_path("fb5-inline-blobs.conv", path,
                                  sizeof(path)));
    conv_seek_connection(&cv, 0);
    ffb_conn_options o;
    conv_options(&o);
    o.wire_crypt_plugins = ""; /* the recording client did not encrypt */
    o.fetch_size = 100;
    ffb_conn *c;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    conv_use(c, &cv);
    OK(c, ffb_conn_connect(c));
    assert_int_equal(ffb_conn_protocol(c), 19);

    /* 1. allocate + prepare(0xFFFF), transaction 0. */
    ffb_stmt *s1;
    OK(c, ffb_stmt_new(c, &s1));
    OK(c, ffb_stmt_prepare(s1, NULL, "SELECT ID, T, B FROM TBLOB ORDER BY ID",
                           (size_t)-1));
    assert_int_equal(ffb_stmt_column_count(s1), 3);

    /* 2. transaction + execute(0xFFFF, inline 65535) + fetch + commit. */
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    to.isolation = FFB_ISO_SNAPSHOT; /* TPB 03 02 09 06 */
    seen sn = {NULL, 0, 0, 0};
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, &to, &tx));
    sn.tx = tx;
    uint64_t b0 = rts(c);
    OK(c, ffb_stmt_queue_execute(s1, tx, on_rows, &sn));
    OK(c, ffb_tx_queue_commit(tx, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_COMMIT);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(rts(c) - b0, 1);
    assert_int_equal(sn.rows, 5);
    assert_int_equal(sn.inline_blobs, 6); /* rows 2, 3, 4: T and B */
    assert_int_equal(cache_entries(c), 0); /* each served once, then gone */
    ffb_tx_free(tx);

    /* 3. the second statement. */
    ffb_stmt *s2;
    OK(c, ffb_stmt_new(c, &s2));
    OK(c, ffb_stmt_prepare(s2, NULL, "SELECT ID, T, B FROM TBLOB WHERE ID = ?",
                           (size_t)-1));

    /* 4. row 5, whose blobs are too big to be inlined. */
    OK(c, ffb_tx_begin(c, &to, &tx));
    OK(c, ffb_stmt_bind_int64(s2, 0, 5));
    OK(c, ffb_stmt_queue_execute(s2, tx, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(ffb_stmt_fetch(s2), 1);
    uint8_t tid[8], bid[8];
    OK(c, ffb_stmt_get_blob_id(s2, 1, tid));
    OK(c, ffb_stmt_get_blob_id(s2, 2, bid));
    assert_int_equal(ffb_stmt_fetch(s2), 0);
    check_cache_rules(c, tx);

    /* 5. open + info + one read in one write, then one refill of exactly
       the bytes left; each close rides with the next request. */
    for (int col = 0; col < 2; col++) {
        ffb_blob *b;
        uint64_t before = rts(c);
        OK(c, ffb_blob_open(c, tx, col ? bid : tid, 0, &b));
        const uint8_t *p;
        size_t n;
        OK(c, ffb_blob_read_all(b, &p, &n));
        assert_int_equal(n, 100000);
        if (col)
            check_b(p, n);
        else
            check_t(p, n);
        assert_int_equal(rts(c) - before, 2);
        ffb_blob_free(b);
    }
    OK(c, ffb_tx_commit(tx));
    /* The commit dropped this transaction's copies. */
    assert_int_equal(cache_entries(c), 1);
    ffb_tx_free(tx);

    /* 6. the first statement again with inline size 0: no op_inline_blob. */
    OK(c, ffb_stmt_set_inline_blob_size(s1, 0));
    OK(c, ffb_tx_begin(c, &to, &tx));
    OK(c, ffb_stmt_queue_execute(s1, tx, NULL, NULL));
    OK(c, ffb_tx_queue_commit(tx, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    while (ffb_conn_next_result(c, &res) == 1)
        assert_int_equal(ffb_result_status(res), 0);
    int rows = 0;
    while (ffb_stmt_fetch(s1) == 1)
        rows++;
    assert_int_equal(rows, 5);
    ffb_tx_free(tx);

    /* 7. detach, disconnect: the cache is emptied. */
    OK(c, ffb_conn_close(c));
    assert_int_equal(cache_entries(c), 0);
    assert_int_equal(c->inl_bytes, 0);
    ffb_stmt_free(s1);
    ffb_stmt_free(s2);
    ffb_conn_free(c);
    if (cv.failure[0])
        fail_msg("%s", cv.failure);
    assert_int_equal(cv.pos, cv.n);
    conv_free(&cv);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_inline_blobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
