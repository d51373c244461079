/*
 * Blobs against real Firebird 3.0 and 4.0 servers: sizes from 0 B to
 * 10 MiB, segmented and stream, text in UTF8, seek and info, and the
 * round-trip budgets of the blob issue asserted exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/it.h"

typedef it_target target;


static ffb_conn *open_conn(const target *t) {
    return it_connect(t, 0);
}

static uint8_t *pattern(size_t n, unsigned seed) {
    uint8_t *p = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
    return p;
}

static void write_blob(ffb_conn *c, ffb_tx *tx, const uint8_t *data,
                       size_t len, int stream, uint8_t id[8]) {
    ffb_blob_options o = FFB_BLOB_OPTIONS_INIT;
    o.stream = stream;
    ffb_blob *b;
    OK(c, ffb_blob_create(c, tx, &o, &b));
    /* Written in pieces of 100000 bytes (several segments each). */
    for (size_t off = 0; off < len; off += 100000)
        OK(c, ffb_blob_write(b, data + off,
                             len - off < 100000 ? len - off : 100000));
    OK(c, ffb_blob_close(b, id));
    ffb_blob_free(b);
}

static void read_check(ffb_conn *c, ffb_tx *tx, const uint8_t id[8],
                       const uint8_t *data, size_t len) {
    ffb_blob *b;
    OK(c, ffb_blob_open(c, tx, id, len, &b));
    const uint8_t *got;
    size_t n;
    OK(c, ffb_blob_read_all(b, &got, &n));
    assert_int_equal(n, len);
    if (len)
        assert_memory_equal(got, data, len);
    ffb_blob_info info;
    OK(c, ffb_blob_get_info(b, &info, sizeof(info)));
    assert_int_equal(info.length, (int64_t)len);
    ffb_blob_free(b);
}

/* Stream a blob through ffb_blob_read() in 50,000-byte pieces, opened
   with the smallest prefetch (one segment). The first read waits for that
   segment (1 round trip) and, with less than 1 MiB left buffered, sends the
   request for the rest before it returns (read-ahead: a second flush).
   Up to 256 segments (16 MiB) go in that one request: 2 round trips in
   all. */
static void stream_check(ffb_conn *c, ffb_tx *tx, const uint8_t id[8],
                         const uint8_t *data, size_t len) {
    ffb_stats s0, s1;
    ffb_conn_stats(c, &s0, sizeof(s0));
    ffb_blob *b;
    OK(c, ffb_blob_open(c, tx, id, 1, &b));
    uint8_t *buf = malloc(50000);
    size_t pos = 0, n;
    OK(c, ffb_blob_read(b, buf, 50000, &n));
    assert_int_equal(n, len < 50000 ? len : 50000);
    ffb_conn_stats(c, &s1, sizeof(s1));
    assert_int_equal(s1.round_trips - s0.round_trips, 1);
    /* open + info + one get; then the read-ahead for the rest */
    assert_int_equal(s1.flushes - s0.flushes, 2);
    for (;;) {
        assert_memory_equal(buf, data + pos, n);
        pos += n;
        if (n == 0)
            break;
        OK(c, ffb_blob_read(b, buf, 50000, &n));
    }
    assert_int_equal(pos, len);
    ffb_conn_stats(c, &s1, sizeof(s1));
    assert_int_equal(s1.round_trips - s0.round_trips, 2);
    free(buf);
    ffb_blob_free(b);
}

static int setup_target(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[256];
    snprintf(sql, sizeof(sql),
             "create table %s (id integer primary key, b blob sub_type "
             "binary, t blob sub_type text character set utf8)",
             t->table);
    OK(c, ffb_conn_execute_immediate(c, tx, sql, (size_t)-1));
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
    return 0;
}

static int teardown_target(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx;
    ffb_tx_options o = FFB_TX_OPTIONS_INIT;
    o.lock_timeout = 10;
    OK(c, ffb_tx_begin(c, &o, &tx));
    char sql[128];
    snprintf(sql, sizeof(sql), "drop table %s", t->table);
    ffb_conn_execute_immediate(c, tx, sql, (size_t)-1);
    ffb_tx_commit(tx);
    ffb_tx_free(tx);
    ffb_conn_close(c);
    ffb_conn_free(c);
    return 0;
}

static void test_sizes(void **state) {
    target *t = *state;
    static const size_t sizes[] = {0, 1, 65535, 65536, 1024 * 1024,
                                   10 * 1024 * 1024};
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int stream = 0; stream < 2; stream++) {
            uint8_t *data = pattern(sizes[i], (unsigned)(i * 2 + stream));
            uint8_t id[8];
            write_blob(c, tx, data, sizes[i], stream, id);
            read_check(c, tx, id, data, sizes[i]);
            if (sizes[i] >= 1024 * 1024)
                stream_check(c, tx, id, data, sizes[i]);
            free(data);
        }
    OK(c, ffb_tx_rollback(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

static void test_budget_write_and_insert(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    char sql[256];
    snprintf(sql, sizeof(sql), "insert into %s (id, b) values (?, ?)",
             t->table);
    ffb_stmt *ins;
    OK(c, ffb_stmt_new(c, &ins));
    OK(c, ffb_stmt_prepare(ins, tx, sql, (size_t)-1));
    uint8_t *data = pattern(1024 * 1024, 7);
    uint64_t b0 = it_rts(c);
    uint8_t id[8];
    write_blob(c, tx, data, 1024 * 1024, 0, id);
    /* op_create_blob2 + op_batch_segments(0xFFFF, 1 MiB) +
       op_close_blob(0xFFFF): one write. */
    assert_int_equal(it_rts(c) - b0, 1);
    OK(c, ffb_stmt_bind_int64(ins, 0, 1));
    OK(c, ffb_stmt_bind_blob_id(ins, 1, id));
    OK(c, ffb_stmt_execute(ins, tx));
    /* The insert needs the blob id the create answers: a second write. */
    assert_int_equal(it_rts(c) - b0, 2);
    /* Small contents go as the parameter itself: the server makes the
       blob, and the insert is one round trip. */
    b0 = it_rts(c);
    OK(c, ffb_stmt_bind_int64(ins, 0, 2));
    OK(c, ffb_stmt_bind_bytes(ins, 1, data, 30000));
    OK(c, ffb_stmt_execute(ins, tx));
    assert_int_equal(it_rts(c) - b0, 1);
    ffb_stmt_free(ins);

    /* Read the 1 MiB back through its row. */
    ffb_stmt *sel;
    snprintf(sql, sizeof(sql), "select b from %s where id = ?", t->table);
    OK(c, ffb_stmt_new(c, &sel));
    OK(c, ffb_stmt_prepare(sel, tx, sql, (size_t)-1));
    OK(c, ffb_stmt_bind_int64(sel, 0, 1));
    OK(c, ffb_stmt_execute(sel, tx));
    assert_int_equal(ffb_stmt_fetch(sel), 1);
    uint8_t rid[8];
    OK(c, ffb_stmt_get_blob_id(sel, 0, rid));
    b0 = it_rts(c);
    ffb_blob *b;
    OK(c, ffb_blob_open(c, tx, rid, 2 * 1024 * 1024, &b));
    const uint8_t *got;
    size_t n;
    OK(c, ffb_blob_read_all(b, &got, &n));
    /* op_open_blob2 + op_info_blob(0xFFFF) + 33 op_get_segment(0xFFFF):
       one write for up to 2 MiB. */
    assert_int_equal(it_rts(c) - b0, 1);
    assert_int_equal(n, 1024 * 1024);
    assert_memory_equal(got, data, n);
    ffb_blob_free(b); /* the close rides with the next request */
    /* The 30000 bytes sent as a parameter. */
    OK(c, ffb_stmt_bind_int64(sel, 0, 2));
    OK(c, ffb_stmt_execute(sel, tx));
    assert_int_equal(ffb_stmt_fetch(sel), 1);
    OK(c, ffb_stmt_get_blob_id(sel, 0, rid));
    read_check(c, tx, rid, data, 30000);
    ffb_stmt_free(sel);
    free(data);
    OK(c, ffb_tx_rollback(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

static void test_budget_batch_of_blobs(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    char sql[256];
    /* 300 rows with 8 KB blobs, made by the server from parameters. */
    snprintf(sql, sizeof(sql), "insert into %s (id, b) values (?, ?)",
             t->table);
    ffb_stmt *ins;
    OK(c, ffb_stmt_new(c, &ins));
    OK(c, ffb_stmt_prepare(ins, tx, sql, (size_t)-1));
    uint8_t *data = pattern(8192, 3);
    for (int i = 0; i < 300; i++) {
        data[0] = (uint8_t)i;
        OK(c, ffb_stmt_bind_int64(ins, 0, 1000 + i));
        OK(c, ffb_stmt_bind_bytes(ins, 1, data, 8192));
        OK(c, ffb_stmt_queue_execute(ins, tx, NULL, NULL));
    }
    OK(c, ffb_conn_flush(c));
    const ffb_result *res;
    while (ffb_conn_next_result(c, &res) == 1)
        assert_int_equal(ffb_result_status(res), 0);
    ffb_stmt_free(ins);

    ffb_stmt *sel;
    snprintf(sql, sizeof(sql),
             "select id, b from %s where id >= 1000 order by id", t->table);
    OK(c, ffb_stmt_new(c, &sel));
    OK(c, ffb_stmt_prepare(sel, tx, sql, (size_t)-1));
    uint64_t b0 = it_rts(c);
    OK(c, ffb_stmt_execute(sel, tx));
    ffb_blob *blobs[300];
    int n = 0;
    while (ffb_stmt_fetch(sel) == 1) {
        uint8_t id[8];
        OK(c, ffb_stmt_get_blob_id(sel, 1, id));
        OK(c, ffb_blob_open(c, tx, id, 0, &blobs[n]));
        n++;
    }
    assert_int_equal(n, 300);
    uint64_t after_rows = it_rts(c) - b0;
    for (int i = 0; i < n; i++) {
        const uint8_t *got;
        size_t len;
        OK(c, ffb_blob_read_all(blobs[i], &got, &len));
        assert_int_equal(len, 8192);
        assert_int_equal(got[0], (uint8_t)i);
        assert_memory_equal(got + 1, data + 1, 8191);
        ffb_blob_free(blobs[i]);
    }
    /* All 300 opens, infos and reads went in one write: one round trip for
       every blob of the batch. */
    uint64_t for_blobs = it_rts(c) - b0 - after_rows;
    printf("# %s: 300 rows in %llu round trips, their 300 blobs in %llu\n",
           t->name, (unsigned long long)after_rows,
           (unsigned long long)for_blobs);
    assert_int_equal(for_blobs, 1);
    ffb_stmt_free(sel);
    free(data);
    OK(c, ffb_tx_rollback(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

/* After its transaction ends, a blob gives what was received and then
   FFB_E_STATE: no read is sent with a handle the server may have given to
   another blob since. */
static void test_read_after_commit(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    size_t len = 300000;
    uint8_t *data = pattern(len, 11);
    uint8_t id[8];
    write_blob(c, tx, data, len, 1, id);
    ffb_blob *b;
    OK(c, ffb_blob_open(c, tx, id, 1, &b)); /* open + info + one read */
    uint64_t b0 = it_rts(c);
    OK(c, ffb_tx_commit(tx)); /* they travel with the commit */
    assert_int_equal(it_rts(c) - b0, 1);
    uint8_t buf[10000];
    size_t got = 0, n;
    int rc;
    while ((rc = ffb_blob_read(b, buf, sizeof(buf), &n)) == 0 && n > 0) {
        assert_memory_equal(buf, data + got, n);
        got += n;
    }
    assert_int_equal(rc, FFB_E_STATE);
    assert_true(got > 0 && got < len); /* the one segment received */
    assert_int_equal(it_rts(c) - b0, 1);
    ffb_blob_free(b);
    ffb_tx_free(tx);
    free(data);
    /* The connection is in sync: a query still works. */
    OK(c, ffb_tx_begin(c, NULL, &tx));
    char sql[128];
    snprintf(sql, sizeof(sql), "delete from %s where id = -1", t->table);
    OK(c, ffb_conn_execute_immediate(c, tx, sql, (size_t)-1));
    OK(c, ffb_tx_rollback(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

static void test_text_and_seek(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    /* UTF8 text through a text blob column, given as a parameter. */
    const char *text = "Grüße, 世界 — 𝄞 and more";
    char sql[256];
    snprintf(sql, sizeof(sql),
             "insert into %s (id, t) values (5, ?) returning t", t->table);
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    OK(c, ffb_stmt_bind_text(s, 0, text, (size_t)-1));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    uint8_t id[8];
    OK(c, ffb_stmt_get_blob_id(s, 0, id));
    ffb_stmt_free(s);
    ffb_blob *b;
    OK(c, ffb_blob_open(c, tx, id, 0, &b));
    const uint8_t *got;
    size_t n;
    OK(c, ffb_blob_read_all(b, &got, &n));
    assert_int_equal(n, strlen(text));
    assert_memory_equal(got, text, n);
    ffb_blob_free(b);

    /* Seek in a stream blob; a segmented one refuses. */
    uint8_t *data = pattern(200000, 11);
    uint8_t sid[8], gid[8];
    write_blob(c, tx, data, 200000, 1, sid);
    write_blob(c, tx, data, 1000, 0, gid);
    OK(c, ffb_blob_open(c, tx, sid, 0, &b));
    int64_t pos;
    OK(c, ffb_blob_seek(b, 0, 150000, &pos));
    assert_int_equal(pos, 150000);
    uint8_t buf[100];
    size_t got_n;
    OK(c, ffb_blob_read(b, buf, sizeof(buf), &got_n));
    assert_int_equal(got_n, 100);
    assert_memory_equal(buf, data + 150000, 100);
    OK(c, ffb_blob_seek(b, 2, -10, &pos));
    assert_int_equal(pos, 199990);
    OK(c, ffb_blob_read(b, buf, sizeof(buf), &got_n));
    assert_int_equal(got_n, 10);
    assert_memory_equal(buf, data + 199990, 10);
    ffb_blob_info info;
    OK(c, ffb_blob_get_info(b, &info, sizeof(info)));
    assert_int_equal(info.stream, 1);
    assert_int_equal(info.length, 200000);
    ffb_blob_free(b);
    OK(c, ffb_blob_open(c, tx, gid, 0, &b));
    assert_int_equal(ffb_blob_seek(b, 0, 10, &pos), FFB_E_SERVER);
    OK(c, ffb_blob_get_info(b, &info, sizeof(info)));
    assert_int_equal(info.stream, 0);
    assert_int_equal(info.segments, 1);
    ffb_blob_free(b);
    free(data);
    OK(c, ffb_tx_rollback(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB4", "FB4E"};
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_budget_write_and_insert),
        cmocka_unit_test(test_budget_batch_of_blobs),
        cmocka_unit_test(test_text_and_seek),
        cmocka_unit_test(test_read_after_commit),
    };
    return it_main("BLOB", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), setup_target,
                   teardown_target);
}
