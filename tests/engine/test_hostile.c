/*
 * A hostile or broken server after the attach: scripted answers to
 * prepare, execute, fetch, blobs and batches that a malicious server or a
 * man in the middle could send. Each test is one conversation for one
 * defect class (docs/security.md): the answer must be a clear error with a
 * code, the connection broken when the wire can no longer be trusted, and
 * never an out-of-bounds access, a hang, unbounded memory or a desync.
 * Run under ASan+UBSan and valgrind in CI.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <zlib.h>

#include "tests/support/check.h"
#include "tests/support/hostile.h"

#define setup hostile_setup
#define teardown hostile_teardown

static const srv_var INT_COL = {FFBP_SQL_LONG, 0, 0, 4, 1, "ID"};

/* One INTEGER row message. */
static size_t int_row(uint8_t *buf, int32_t v) {
    memset(buf, 0, 8);
    buf[4] = (uint8_t)((uint32_t)v >> 24);
    buf[5] = (uint8_t)((uint32_t)v >> 16);
    buf[6] = (uint8_t)((uint32_t)v >> 8);
    buf[7] = (uint8_t)v;
    return 8;
}

/* Answers to op_transaction + op_allocate_statement + op_prepare (one
   write), the describe given. */
static void push_prepare(const uint8_t *desc, size_t dlen) {
    srv_response(&W, 7, 0, NULL, 0);    /* transaction 7 */
    srv_response(&W, 3, 0, NULL, 0);    /* statement 3 */
    srv_response(&W, 0, 0, desc, dlen); /* the describe */
    hostile_push(&H, &W);
}

static ffb_stmt *prepare_select(ffb_conn *c, ffb_tx **tx) {
    uint8_t desc[512];
    size_t n = srv_describe(desc, sizeof(desc), FFB_STMT_SELECT, 1, &INT_COL,
                            1, 1, 0, NULL, 0, 0);
    push_prepare(desc, n);
    OK(c, ffb_tx_begin(c, NULL, tx));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, *tx, "select id from t", (size_t)-1));
    return s;
}

/* ---- the harness itself ------------------------------------------------- */

static void test_scripted_select(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_select(c, &tx);
    uint8_t row[8];
    srv_response(&W, 0, 0, NULL, 0); /* execute */
    for (int i = 1; i <= 3; i++)
        srv_fetch(&W, 0, 1, row, int_row(row, i * 10));
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(s, tx));
    int64_t v, sum = 0;
    int rows = 0;
    while (ffb_stmt_fetch(s) == 1) {
        OK(c, ffb_stmt_get_int64(s, 0, &v));
        sum += v;
        rows++;
    }
    assert_int_equal(rows, 3);
    assert_int_equal(sum, 60);
    assert_false(ffb_conn_is_broken(c));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static uint64_t rts(ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

static const srv_var COLS3[3] = {{FFBP_SQL_LONG, 0, 0, 4, 1, "A"},
                                 {FFBP_SQL_LONG, 0, 0, 4, 1, "B"},
                                 {FFBP_SQL_LONG, 0, 0, 4, 1, "C"}};

/* Prepare a statement; the answers are queued by the caller
   (push_prepare, then the continuations). */
static int prepare_with(ffb_conn *c, ffb_tx **tx, ffb_stmt **s) {
    OK(c, ffb_tx_begin(c, NULL, tx));
    OK(c, ffb_stmt_new(c, s));
    return ffb_stmt_prepare(*s, *tx, "select a, b, c from t", (size_t)-1);
}

/* One continuation answer (op_response to op_info_sql). */
static void push_cont(const uint8_t *d, size_t n) {
    srv_response(&W, 0, 0, d, n);
    hostile_push(&H, &W);
}

/* ---- defect 2: the describe continuation changes the counts ------------- */

static void test_describe_continuation_ok(void **state) {
    (void)state;
    /* The honest case: 3 columns, the first answer truncated at the
       second; the continuation from column 2 completes it. */
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    uint8_t d1[512], d2[512];
    size_t n1 = srv_describe(d1, sizeof(d1), FFB_STMT_SELECT, 3, COLS3, 3, 1,
                             0, NULL, 0, 2);
    push_prepare(d1, n1);
    size_t n2 =
        srv_describe_side(d2, sizeof(d2), 1, 3, COLS3 + 1, 2, 2, 0);
    push_cont(d2, n2);
    uint64_t b = rts(c);
    ffb_tx *tx;
    ffb_stmt *s;
    OK(c, prepare_with(c, &tx, &s));
    /* prepare; one continuation */
    assert_int_equal(rts(c) - b, 2);
    assert_int_equal(ffb_stmt_column_count(s), 3);
    ffb_column_info ci;
    OK(c, ffb_stmt_column_info(s, 2, &ci, sizeof(ci)));
    assert_string_equal(ci.alias, "C");
    /* The first answer's names too: its buffer is gone by now. */
    OK(c, ffb_stmt_column_info(s, 0, &ci, sizeof(ci)));
    assert_string_equal(ci.alias, "A");
    assert_string_equal(ci.relation, "T");
    assert_int_equal(hostile_pending(&H), 0);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_describe_continuation_grows(void **state) {
    (void)state;
    /* The first answer announces 2 columns (arrays sized for 2), the
       continuation re-announces 5 and describes 2..5: reading the
       incomplete flags of 5 from an array of 2 was a heap over-read. */
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    srv_var five[5];
    for (int i = 0; i < 5; i++)
        five[i] = INT_COL;
    uint8_t d1[512], d2[1024];
    size_t n1 = srv_describe(d1, sizeof(d1), FFB_STMT_SELECT, 2, five, 2, 1,
                             0, NULL, 0, 2);
    push_prepare(d1, n1);
    size_t n2 = srv_describe_side(d2, sizeof(d2), 1, 5, five + 1, 4, 2, 0);
    push_cont(d2, n2);
    ffb_tx *tx;
    ffb_stmt *s;
    assert_int_equal(prepare_with(c, &tx, &s), FFB_E_PROTO);
    expect_msg(c, "announces 0 parameters and 5 columns where the first "
                  "answer said 0 and 2");
    assert_true(ffb_conn_is_broken(c));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_describe_continuation_new_side(void **state) {
    (void)state;
    /* The first answer describes no parameters; the continuation of the
       columns suddenly announces 3 of them (a NULL array before). */
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    uint8_t d1[512], d2[1024];
    size_t n1 = srv_describe(d1, sizeof(d1), FFB_STMT_SELECT, 3, COLS3, 3, 1,
                             0, NULL, 0, 2);
    push_prepare(d1, n1);
    size_t n2 = srv_describe_side(d2, sizeof(d2), 0, 3, COLS3, 3, 1, 0);
    push_cont(d2, n2);
    ffb_tx *tx;
    ffb_stmt *s;
    assert_int_equal(prepare_with(c, &tx, &s), FFB_E_PROTO);
    expect_msg(c, "where the first answer said 0 and 3");
    assert_true(ffb_conn_is_broken(c));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_describe_continuation_stalls(void **state) {
    (void)state;
    /* Each continuation answer repeats column 1 and truncates again: the
       client used to ask forever (5,001 round trips and counting). Now
       the answer must complete at least one more column. */
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    uint8_t d1[512], d2[512];
    size_t n1 = srv_describe(d1, sizeof(d1), FFB_STMT_SELECT, 3, COLS3, 3, 1,
                             0, NULL, 0, 2);
    push_prepare(d1, n1);
    size_t n2 = srv_describe_side(d2, sizeof(d2), 1, 3, COLS3, 3, 1, 2);
    for (int i = 0; i < 10; i++)
        push_cont(d2, n2);
    uint64_t b = rts(c);
    ffb_tx *tx;
    ffb_stmt *s;
    assert_int_equal(prepare_with(c, &tx, &s), FFB_E_PROTO);
    expect_msg(c, "did not advance");
    /* prepare; one continuation that did not advance */
    assert_int_equal(rts(c) - b, 2);
    assert_true(ffb_conn_is_broken(c));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_describe_truncated_before_select(void **state) {
    (void)state;
    /* The first answer ends (truncated) right after the parameters: the
       columns were never described, and are asked for from the first. */
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    uint8_t d1[512], d2[512];
    size_t n1 = srv_describe_side(d1, sizeof(d1), 0, 1, &INT_COL, 1, 1, 0);
    d1[n1 - 1] = FFBP_INFO_TRUNCATED; /* instead of isc_info_end */
    push_prepare(d1, n1);
    size_t n2 = srv_describe_side(d2, sizeof(d2), 1, 3, COLS3, 3, 1, 0);
    push_cont(d2, n2);
    uint64_t b = rts(c);
    ffb_tx *tx;
    ffb_stmt *s;
    OK(c, prepare_with(c, &tx, &s));
    assert_int_equal(rts(c) - b, 2); /* prepare; the columns */
    assert_int_equal(ffb_stmt_column_count(s), 3);
    assert_int_equal(ffb_stmt_param_count(s), 1);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- defect 4: describe counts beyond Firebird's limit ------------------ */

static void test_describe_count_too_large(void **state) {
    (void)state;
    /* 0x04000001 columns: times sizeof(ffbp_var) this wrapped to 64 bytes
       on 32-bit size_t (then written past), and asked for gigabytes on
       64-bit. Firebird has at most 32767 columns or parameters. */
    static const uint32_t counts[] = {0x04000001u, 32768u, 0x7FFFFFFFu};
    for (size_t k = 0; k < 3; k++) {
        hostile_free(&H);
        hostile_init(&H);
        fail_alloc fa = {0};
        ffb_allocator a;
        fail_alloc_install(&fa, &a);
        ffb_conn_options o;
        hostile_options(&o);
        o.allocator = &a;
        ffb_conn *c = hostile_attach(&H, 16, &o);
        uint8_t d1[512];
        size_t n1 = srv_describe(d1, sizeof(d1), FFB_STMT_SELECT, counts[k],
                                 &INT_COL, 1, 1, 0, NULL, 0, 0);
        push_prepare(d1, n1);
        ffb_tx *tx;
        ffb_stmt *s;
        assert_int_equal(prepare_with(c, &tx, &s), FFB_E_PROTO);
        if (!strstr(ffb_error_message(ffb_conn_error(c)), "at most 32767"))
            fail_msg("count %x: %s", (unsigned)counts[k],
                     ffb_error_message(ffb_conn_error(c)));
        assert_true(ffb_conn_is_broken(c));
        ffb_stmt_free(s);
        ffb_tx_free(tx);
        ffb_conn_free(c);
        assert_int_equal(fa.live, 0);
    }
}

/* ---- defect 5: rows beyond what was asked --------------------------------- */

static int endless_rows(hostile *h, ffbp_writer *w, size_t n) {
    (void)h;
    if (n > 100000)
        return 0; /* the old client would take them all */
    uint8_t row[8];
    for (int i = 0; i < 100; i++)
        srv_fetch(w, 0, 1, row, int_row(row, (int32_t)i));
    return 1;
}

static void test_fetch_more_rows_than_asked(void **state) {
    (void)state;
    ffb_conn_options o;
    hostile_options(&o);
    o.fetch_size = 10;
    ffb_conn *c = hostile_attach(&H, 16, &o);
    ffb_tx *tx;
    ffb_stmt *s = prepare_select(c, &tx);
    srv_response(&W, 0, 0, NULL, 0); /* execute */
    hostile_push(&H, &W);
    H.gen = endless_rows;
    assert_int_equal(ffb_stmt_execute(s, tx), FFB_E_PROTO);
    expect_msg(c, "more rows than the 10 asked for");
    assert_true(ffb_conn_is_broken(c));
    assert_true(H.gen_calls <= 2);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_execute2_more_than_one_row(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    uint8_t desc[512];
    size_t n = srv_describe(desc, sizeof(desc), FFB_STMT_EXEC_PROCEDURE, 1,
                            &INT_COL, 1, 1, 0, NULL, 0, 0);
    push_prepare(desc, n);
    ffb_tx *tx;
    ffb_stmt *s;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, tx, "execute procedure p", (size_t)-1));
    uint8_t row[8];
    for (int i = 0; i < 5; i++)
        srv_sql_response(&W, 1, row, int_row(row, i));
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    assert_int_equal(ffb_stmt_execute(s, tx), FFB_E_PROTO);
    expect_msg(c, "more than one op_sql_response");
    assert_true(ffb_conn_is_broken(c));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- defect 6: the lazy prepare's describe is checked -------------------- */

static void test_lazy_prepare_describe_checked(void **state) {
    (void)state;
    /* With a statement cache of 1, text A leaves the cache (its formats
       remembered), and preparing A again rides with the execute on a spare
       handle. The server now describes 3 columns: the client re-runs the
       statement with the new formats instead of keeping 1 column. */
    ffb_conn_options o;
    hostile_options(&o);
    o.stmt_cache_size = 1;
    ffb_conn *c = hostile_attach(&H, 16, &o);
    uint8_t d1[512], d3[512];
    size_t n1 = srv_describe(d1, sizeof(d1), FFB_STMT_SELECT, 1, &INT_COL, 1,
                             1, 0, NULL, 0, 0);
    size_t n3 = srv_describe(d3, sizeof(d3), FFB_STMT_SELECT, 3, COLS3, 3, 1,
                             0, NULL, 0, 0);
    ffb_tx *tx;
    ffb_stmt *a, *b;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    push_prepare(d1, n1); /* transaction 7, statement 3, describe of A */
    OK(c, ffb_conn_prepare(c, tx, "select a from t", (size_t)-1, &a));
    ffb_stmt_free(a);
    srv_response(&W, 4, 0, NULL, 0); /* statement 4 */
    srv_response(&W, 0, 0, d1, n1);  /* describe of B */
    hostile_push(&H, &W);
    OK(c, ffb_conn_prepare(c, tx, "select b from t", (size_t)-1, &b));
    ffb_stmt_free(b); /* A left the cache: handle 3 is spare */
    uint64_t before = rts(c);
    OK(c, ffb_conn_prepare(c, tx, "select a from t", (size_t)-1, &a));
    assert_int_equal(rts(c), before); /* lazy: nothing sent yet */
    assert_int_equal(ffb_stmt_column_count(a), 1);
    /* free(3) x2, prepare(3) with 3 columns now, free(4), execute, rows
       in the 1-column format asked for, end. */
    uint8_t row[16];
    for (int i = 0; i < 2; i++)
        srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, 0, 0, d3, n3);
    srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, 0, 0, NULL, 0);
    srv_fetch(&W, 0, 1, row, int_row(row, 1));
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    /* The re-run: close, execute, a 3-column row, end. */
    srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, 0, 0, NULL, 0);
    memset(row, 0, sizeof(row));
    row[7] = 1;
    row[11] = 2;
    row[15] = 3;
    srv_fetch(&W, 0, 1, row, 16);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(a, tx));
    assert_int_equal(ffb_stmt_column_count(a), 3);
    assert_int_equal(hostile_pending(&H), 0);
    assert_int_equal(rts(c) - before, 2); /* the lazy run, the re-run */
    assert_int_equal(ffb_stmt_fetch(a), 1);
    for (unsigned i = 0; i < 3; i++) {
        int64_t v;
        OK(c, ffb_stmt_get_int64(a, i, &v));
        assert_int_equal(v, i + 1);
    }
    assert_int_equal(ffb_stmt_fetch(a), 0);
    ffb_stmt_free(a);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- defect 5: unbounded packets, status vectors, inflation ------------- */

static int endless_status(hostile *h, ffbp_writer *w, size_t n) {
    (void)h;
    if (n == 0) { /* op_response header, then entries for ever */
        ffbp_put_i32(w, FFBP_OP_RESPONSE);
        ffbp_put_i16(w, 0);
        ffbp_put_quad(w, 0);
        ffbp_put_cstring(w, NULL, 0);
        ffbp_put_i32(w, FFBP_ARG_GDS);
        ffbp_put_u32(w, 335544321u);
    }
    if (n > 100000)
        return 0;
    for (int i = 0; i < 100; i++) {
        ffbp_put_i32(w, FFBP_ARG_NUMBER);
        ffbp_put_i32(w, i);
    }
    return 1;
}

static void test_endless_status_vector(void **state) {
    (void)state;
    /* A status vector that never ends was buffered for ever and parsed
       again from its start on every read (quadratic). */
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    H.gen = endless_status;
    uint64_t parses = c->parse_attempts;
    assert_int_equal(ffb_conn_ping(c), FFB_E_PROTO);
    expect_msg(c, "malformed op_response");
    assert_true(ffb_conn_is_broken(c));
    /* 1024 entries at 100 a read */
    assert_true(H.gen_calls <= 12);
    assert_true(c->parse_attempts - parses <= 12);
    ffb_conn_free(c);
}

static int huge_data(hostile *h, ffbp_writer *w, size_t n) {
    (void)h;
    if (n == 0) {
        ffbp_put_i32(w, FFBP_OP_RESPONSE);
        ffbp_put_i16(w, 0);
        ffbp_put_quad(w, 0);
        ffbp_put_u32(w, 60u * 1024 * 1024); /* data: 60 MiB announced */
    }
    if (n > 100000)
        return 0;
    static const uint8_t zeros[8192];
    ffbp_put_raw(w, zeros, sizeof(zeros));
    return 1;
}

static void test_packet_over_limit(void **state) {
    (void)state;
    /* A packet larger than max_packet_size is refused once that much is
       buffered, not after 60 MiB. */
    ffb_conn_options o;
    hostile_options(&o);
    o.max_packet_size = 65536;
    ffb_conn *c = hostile_attach(&H, 16, &o);
    H.gen = huge_data;
    assert_int_equal(ffb_conn_ping(c), FFB_E_PROTO);
    expect_msg(c, "larger than the 65536 bytes accepted");
    assert_true(ffb_conn_is_broken(c));
    assert_true(H.gen_calls <= 65536 / 8192 + 2);
    assert_true(c->in.cap <= 256 * 1024);
    ffb_conn_free(c);

    /* Options: below 64 KiB is refused with a message. */
    ffb_conn *bad = NULL;
    o.max_packet_size = 1000;
    assert_int_equal(ffb_conn_new(&o, &bad), FFB_E_INVAL);
    assert_non_null(bad); /* carrying the error */
    expect_msg(bad, "max_packet_size");
    ffb_conn_free(bad);
}

/* Compress `w` into the scripted server's stream (sync flush). */
static void push_z(z_stream *zs, const uint8_t *p, size_t n) {
    size_t cap = n + n / 100 + 1024;
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    zs->next_in = (Bytef *)(uintptr_t)p;
    zs->avail_in = (uInt)n;
    zs->next_out = out;
    zs->avail_out = (uInt)cap;
    assert_int_equal(deflate(zs, Z_SYNC_FLUSH), Z_OK);
    assert_int_equal(zs->avail_in, 0);
    hostile_push_bytes(&H, out, cap - zs->avail_out);
    free(out);
}

static void test_inflate_bomb(void **state) {
    (void)state;
    /* 64 MiB of a packet compressed to about 64 KiB: inflated in steps
       and refused at max_packet_size, with the buffers staying small. */
    ffb_conn_options o;
    hostile_options(&o);
    o.compress = 1;
    o.max_packet_size = 1024 * 1024;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    hostile_use(&H, c);
    ffbp_writer_reset(&W);
    ffbp_put_i32(&W, FFBP_OP_ACCEPT);
    ffbp_put_i16(&W, (uint16_t)(FFBP_PROTOCOL_FLAG | 16u));
    ffbp_put_i32(&W, FFBP_ARCH_GENERIC);
    ffbp_put_i16(&W, FFBP_PTYPE_LAZY_SEND | FFBP_PFLAG_COMPRESS);
    hostile_push(&H, &W);
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    assert_int_equal(deflateInit(&zs, Z_BEST_COMPRESSION), Z_OK);
    srv_response(&W, 1, 0, NULL, 0);
    push_z(&zs, W.data, W.len);
    ffbp_writer_reset(&W);
    OK(c, ffb_conn_connect(c));
    assert_int_equal(ffb_conn_is_compressed(c), 1);
    /* The ping's answer: op_response with 64 MiB of data, all zeros. */
    ffbp_put_i32(&W, FFBP_OP_RESPONSE);
    ffbp_put_i16(&W, 0);
    ffbp_put_quad(&W, 0);
    ffbp_put_u32(&W, 64u * 1024 * 1024);
    push_z(&zs, W.data, W.len);
    ffbp_writer_reset(&W);
    uint8_t *zeros = calloc(1, 1024 * 1024);
    assert_non_null(zeros);
    size_t before = H.nchunks;
    for (int i = 0; i < 64; i++)
        push_z(&zs, zeros, 1024 * 1024);
    free(zeros);
    /* All the compressed megabytes in one read. */
    size_t total = 0;
    for (size_t i = before; i < H.nchunks; i++)
        total += H.chunk_len[i];
    uint8_t *all = malloc(total);
    assert_non_null(all);
    size_t k = 0;
    for (size_t i = before; i < H.nchunks; i++) {
        memcpy(all + k, H.chunk[i], H.chunk_len[i]);
        k += H.chunk_len[i];
        free(H.chunk[i]);
    }
    H.nchunks = before;
    hostile_push_bytes(&H, all, total);
    free(all);
    deflateEnd(&zs);
    assert_true(total < 1024 * 1024);
    assert_int_equal(ffb_conn_ping(c), FFB_E_PROTO);
    expect_msg(c, "larger than the 1048576 bytes accepted");
    assert_true(c->in.cap <= 2u * 1024 * 1024);
    ffb_conn_free(c);
}

/* ---- defect 7: what a result callback may call --------------------------- */

typedef struct cb_seen {
    int calls;
    int next_rc, close_rc, rows;
} cb_seen;

static void misbehaving_cb(ffb_conn *conn, const ffb_result *res,
                           void *data) {
    cb_seen *s = data;
    s->calls++;
    assert_int_equal(ffb_result_status(res), 0);
    const ffb_result *r;
    s->next_rc = ffb_conn_next_result(conn, &r); /* used to hang */
    s->close_rc = ffb_conn_close(conn);
    ffb_conn_free(conn); /* used to be a use-after-free */
    while (ffb_stmt_fetch(ffb_result_stmt(res)) == 1)
        s->rows++;
}

static void test_callback_rules(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    ffb_tx *tx;
    ffb_stmt *s = prepare_select(c, &tx);
    uint8_t row[8];
    srv_response(&W, 0, 0, NULL, 0);
    srv_fetch(&W, 0, 1, row, int_row(row, 5));
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    cb_seen seen = {0};
    OK(c, ffb_stmt_queue_execute(s, tx, misbehaving_cb, &seen));
    OK(c, ffb_conn_flush(c));
    const ffb_result *r;
    assert_int_equal(ffb_conn_next_result(c, &r), 0); /* delivered to cb */
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.next_rc, FFB_E_STATE);
    assert_int_equal(seen.close_rc, FFB_E_STATE);
    assert_int_equal(seen.rows, 1);
    /* Still usable afterwards, and the free after the call works. */
    assert_false(ffb_conn_is_broken(c));
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_ping(c));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- defect 8: out of memory at every allocation of a conversation ------ */

/* The conversation: attach, ping, database info, then a transaction with
   a prepared SELECT, its rows, and the commit. 0 when every step
   succeeded (and gave the right answers); else the first failure. */
static int conversation(fail_alloc *fa, int *step) {
    hostile_free(&H);
    hostile_init(&H);
    ffbp_writer_reset(&W);
    ffb_allocator a;
    fail_alloc_install(fa, &a);
    ffb_conn_options o;
    hostile_options(&o);
    o.allocator = &a;
    *step = 0;
    ffb_conn *c = NULL;
    int rc = ffb_conn_new(&o, &c);
    if (rc < 0)
        return rc;
    hostile_use(&H, c);
    srv_accept(&W, FFBP_OP_ACCEPT, 16, NULL, NULL, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_response(&W, 1, 0, NULL, 0); /* attach */
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0); /* ping */
    hostile_push(&H, &W);
    static const uint8_t info[] = {FFBP_INFO_PAGE_SIZE, 4, 0, 0, 0x20, 0, 0,
                                   1};
    srv_response(&W, 0, 0, info, sizeof(info)); /* page size 8192 */
    hostile_push(&H, &W);
    uint8_t desc[512];
    size_t n = srv_describe(desc, sizeof(desc), FFB_STMT_SELECT, 1, &INT_COL,
                            1, 1, 0, NULL, 0, 0);
    push_prepare(desc, n);
    uint8_t row[8];
    srv_response(&W, 0, 0, NULL, 0);
    for (int i = 1; i <= 3; i++)
        srv_fetch(&W, 0, 1, row, int_row(row, i));
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    srv_response(&W, 0, 0, NULL, 0); /* commit */
    hostile_push(&H, &W);

    ffb_tx *tx = NULL;
    ffb_stmt *s = NULL;
    ffb_db_info di;
    int64_t sum = 0, v;
    if ((*step = 1, rc = ffb_conn_connect(c)) < 0 ||
        (*step = 2, rc = ffb_conn_ping(c)) < 0 ||
        (*step = 3, rc = ffb_conn_db_info(c, &di, sizeof(di))) < 0)
        goto out;
    assert_int_equal(di.page_size, 8192); /* no answer went astray */
    if ((*step = 4, rc = ffb_tx_begin(c, NULL, &tx)) < 0 ||
        (*step = 5, rc = ffb_stmt_new(c, &s)) < 0 ||
        (*step = 6, rc = ffb_stmt_prepare(s, tx, "select id from t",
                                          (size_t)-1)) < 0 ||
        (*step = 7, rc = ffb_stmt_execute(s, tx)) < 0)
        goto out;
    *step = 8;
    while ((rc = ffb_stmt_fetch(s)) == 1) {
        assert_int_equal(ffb_stmt_get_int64(s, 0, &v), 0);
        sum += v;
    }
    if (rc < 0)
        goto out;
    assert_int_equal(sum, 6);
    *step = 9;
    rc = ffb_tx_commit(tx);
out:
    if (rc < 0) {
        /* Out of memory is fatal: the connection is broken, never left
           with staged requests and reply handlers out of step. */
        if (rc == FFB_E_NOMEM && c->state == FFB__ST_READY)
            fail_msg("allocation %zu: step %d returned FFB_E_NOMEM and left "
                     "the connection usable: %s",
                     fa->fail_at, *step, ffb_error_message(ffb_conn_error(c)));
        if (rc != FFB_E_NOMEM)
            fail_msg("allocation %zu: step %d returned %d: %s", fa->fail_at,
                     *step, rc, ffb_error_message(ffb_conn_error(c)));
    }
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
    return rc;
}

static void test_out_of_memory_everywhere(void **state) {
    (void)state;
    fail_alloc fa = {0};
    int step;
    assert_int_equal(conversation(&fa, &step), 0);
    assert_int_equal(fa.live, 0);
    size_t total = fa.calls;
    assert_true(total > 20);
    size_t refused = 0;
    for (size_t k = 1; k <= total; k++) {
        fail_alloc f = {0};
        f.fail_at = k;
        int rc = conversation(&f, &step);
        if (f.failed)
            refused++;
        if (f.live != 0)
            fail_msg("allocation %zu refused (step %d, rc %d): %zu blocks "
                     "leaked",
                     k, step, rc, f.live);
    }
    assert_int_equal(refused, total);
}

/* ---- defect 11: freeing twice, or after the connection ------------------- */

/* Run `misuse` in a child: it must abort with a message naming `call`. */
static void expect_abort(void (*misuse)(void), const char *call) {
#ifdef NDEBUG
    (void)misuse;
    (void)call;
    skip(); /* the checks are those of builds without NDEBUG */
#else
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        misuse();
        _exit(0); /* not detected */
    }
    close(fds[1]);
    char msg[1024] = "";
    size_t n = 0;
    ssize_t k;
    while (n + 1 < sizeof(msg) &&
           (k = read(fds[0], msg + n, sizeof(msg) - 1 - n)) > 0)
        n += (size_t)k;
    msg[n] = '\0';
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
        fail_msg("%s misuse not detected (status %d): %s", call, st, msg);
    if (!strstr(msg, call) || !strstr(msg, "freed already"))
        fail_msg("message \"%s\" lacks %s", msg, call);
#endif
}

static ffb_conn *misuse_conn(ffb_tx **tx, ffb_stmt **s) {
    hostile_init(&H);
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    *s = prepare_select(c, tx);
    return c;
}

static void double_stmt_free(void) {
    ffb_tx *tx;
    ffb_stmt *s;
    ffb_conn *c = misuse_conn(&tx, &s);
    ffb_stmt_free(s);
    ffb_stmt_free(s);
    (void)c;
}

static void stmt_free_after_conn(void) {
    ffb_tx *tx;
    ffb_stmt *s;
    ffb_conn *c = misuse_conn(&tx, &s);
    ffb_conn_free(c);
    ffb_stmt_free(s);
}

static void tx_free_after_conn(void) {
    ffb_tx *tx;
    ffb_stmt *s;
    ffb_conn *c = misuse_conn(&tx, &s);
    ffb_conn_free(c);
    ffb_tx_free(tx);
}

static void double_conn_free(void) {
    ffb_tx *tx;
    ffb_stmt *s;
    ffb_conn *c = misuse_conn(&tx, &s);
    ffb_conn_free(c);
    ffb_conn_free(c);
}

static void test_misuse_detected(void **state) {
    (void)state;
    expect_abort(double_stmt_free, "ffb_stmt_free");
    expect_abort(stmt_free_after_conn, "ffb_stmt_free");
    expect_abort(tx_free_after_conn, "ffb_tx_free");
    expect_abort(double_conn_free, "ffb_conn_free");
    /* The right order is quiet. */
    ffb_tx *tx;
    ffb_stmt *s;
    hostile_free(&H);
    ffb_conn *c = misuse_conn(&tx, &s);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_large_packet_parsed_once(void **state) {
    (void)state;
    /* A 4 MiB answer arriving in 1460-byte pieces: the first attempt
       learns how long it is at least, and it is parsed again only when
       that much is here (before: once per piece, 2,900 times). */
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    size_t n = 4u * 1024 * 1024;
    uint8_t *data = calloc(1, n);
    assert_non_null(data);
    srv_response(&W, 0, 0, data, n);
    free(data);
    hostile_push(&H, &W);
    H.feed_piece = 1460;
    uint64_t before = c->parse_attempts;
    OK(c, ffb_conn_ping(c));
    assert_true(c->parse_attempts - before <= 4);
    ffb_conn_free(c);
}

typedef struct nested_seen {
    ffb_stmt *other;
    int calls, rows_other;
    int fetch_rc;
} nested_seen;

static void fetch_other_cb(ffb_conn *conn, const ffb_result *res,
                           void *data) {
    (void)conn;
    (void)res;
    nested_seen *x = data;
    if (x->calls++)
        return;
    /* The other statement's answer is received but not parsed yet: the
       blocking fetch parses it instead of waiting on the wire for ever. */
    while ((x->fetch_rc = ffb_stmt_fetch(x->other)) == 1)
        x->rows_other++;
}

static void test_blocking_call_in_callback_parses_buffered(void **state) {
    (void)state;
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    ffb_tx *tx;
    ffb_stmt *a = prepare_select(c, &tx);
    uint8_t desc[512];
    size_t n = srv_describe(desc, sizeof(desc), FFB_STMT_SELECT, 1, &INT_COL,
                            1, 1, 0, NULL, 0, 0);
    srv_response(&W, 4, 0, NULL, 0);
    srv_response(&W, 0, 0, desc, n);
    hostile_push(&H, &W);
    ffb_stmt *b;
    OK(c, ffb_stmt_new(c, &b));
    OK(c, ffb_stmt_prepare(b, tx, "select id from u", (size_t)-1));
    /* Both executions answered in one read. */
    uint8_t row[8];
    for (int k = 0; k < 2; k++) {
        srv_response(&W, 0, 0, NULL, 0);
        for (int i = 0; i < 2; i++)
            srv_fetch(&W, 0, 1, row, int_row(row, i));
        srv_fetch(&W, 100, 0, NULL, 0);
    }
    hostile_push(&H, &W);
    nested_seen x = {b, 0, 0, -99};
    OK(c, ffb_stmt_queue_execute(a, tx, fetch_other_cb, &x));
    OK(c, ffb_stmt_queue_execute(b, tx, fetch_other_cb, &x));
    OK(c, ffb_conn_flush(c));
    const ffb_result *r;
    assert_int_equal(ffb_conn_next_result(c, &r), 0);
    assert_int_equal(x.calls, 2);
    assert_int_equal(x.fetch_rc, 0);
    assert_int_equal(x.rows_other, 2);
    assert_false(ffb_conn_is_broken(c));
    ffb_stmt_free(a);
    ffb_stmt_free(b);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_lazy_prepare_truncated_describe(void **state) {
    (void)state;
    /* As above, but the new describe does not fit its answer: the client
       cannot check the remembered formats in place, so it prepares the
       statement again before running it once more. */
    ffb_conn_options o;
    hostile_options(&o);
    o.stmt_cache_size = 1;
    ffb_conn *c = hostile_attach(&H, 16, &o);
    uint8_t d1[512], d3[512], dt[512];
    size_t n1 = srv_describe(d1, sizeof(d1), FFB_STMT_SELECT, 1, &INT_COL, 1,
                             1, 0, NULL, 0, 0);
    size_t n3 = srv_describe(d3, sizeof(d3), FFB_STMT_SELECT, 3, COLS3, 3, 1,
                             0, NULL, 0, 0);
    size_t nt = srv_describe(dt, sizeof(dt), FFB_STMT_SELECT, 3, COLS3, 3, 1,
                             0, NULL, 0, 2);
    ffb_tx *tx;
    ffb_stmt *a, *b;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    push_prepare(d1, n1);
    OK(c, ffb_conn_prepare(c, tx, "select a from t", (size_t)-1, &a));
    ffb_stmt_free(a);
    srv_response(&W, 4, 0, NULL, 0);
    srv_response(&W, 0, 0, d1, n1);
    hostile_push(&H, &W);
    OK(c, ffb_conn_prepare(c, tx, "select b from t", (size_t)-1, &b));
    ffb_stmt_free(b);
    uint64_t before = rts(c);
    OK(c, ffb_conn_prepare(c, tx, "select a from t", (size_t)-1, &a));
    uint8_t row[16];
    for (int i = 0; i < 2; i++)
        srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, 0, 0, dt, nt); /* truncated at column 2 */
    srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, 0, 0, NULL, 0);
    srv_fetch(&W, 0, 1, row, int_row(row, 1));
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    /* Prepared again: close of the cursor, the whole describe. */
    srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, 0, 0, d3, n3);
    hostile_push(&H, &W);
    /* The run with the new formats. */
    srv_response(&W, 0, 0, NULL, 0);
    memset(row, 0, sizeof(row));
    row[7] = 1;
    row[11] = 2;
    row[15] = 3;
    srv_fetch(&W, 0, 1, row, 16);
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(a, tx));
    assert_int_equal(ffb_stmt_column_count(a), 3);
    assert_int_equal(hostile_pending(&H), 0);
    assert_int_equal(rts(c) - before, 3); /* lazy run, prepare, run */
    assert_int_equal(ffb_stmt_fetch(a), 1);
    int64_t v;
    OK(c, ffb_stmt_get_int64(a, 2, &v));
    assert_int_equal(v, 3);
    assert_int_equal(ffb_stmt_fetch(a), 0);
    ffb_stmt_free(a);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

static void test_reprepare_with_fetches_in_flight(void **state) {
    (void)state;
    /* Read-ahead fetches are on the wire when the statement is prepared
       again: their rows are decoded with the old formats, which used to be
       freed by the prepare (heap use-after-free under ASan). */
    ffb_conn_options o;
    hostile_options(&o);
    o.fetch_size = 10;
    ffb_conn *c = hostile_attach(&H, 16, &o);
    ffb_tx *tx;
    ffb_stmt *s = prepare_select(c, &tx);
    uint8_t row[8];
    srv_response(&W, 0, 0, NULL, 0);
    for (int i = 0; i < 10; i++)
        srv_fetch(&W, 0, 1, row, int_row(row, i));
    srv_fetch(&W, 0, 0, NULL, 0); /* more may follow */
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(s, tx));
    for (int i = 0; i < 6; i++)
        assert_int_equal(ffb_stmt_fetch(s), 1); /* refill sent at half */
    assert_true(s->fetches_inflight > 0);
    unsigned inflight = s->fetches_inflight;
    /* The refill's answers (a row each, in the old format), the close,
       the new prepare. */
    for (unsigned i = 0; i < inflight; i++) {
        srv_fetch(&W, 0, 1, row, int_row(row, 77));
        srv_fetch(&W, 100, 0, NULL, 0);
    }
    srv_response(&W, 0, 0, NULL, 0);
    uint8_t d3[512];
    size_t n3 = srv_describe(d3, sizeof(d3), FFB_STMT_SELECT, 3, COLS3, 3, 1,
                             0, NULL, 0, 0);
    srv_response(&W, 0, 0, d3, n3);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_prepare(s, tx, "select a, b, c from t", (size_t)-1));
    assert_int_equal(ffb_stmt_column_count(s), 3);
    assert_int_equal(hostile_pending(&H), 0);
    assert_null(s->retired); /* nothing uses the old formats any more */
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

/* ---- issue 9: a write is never spent on deferred requests alone ---------- */

static void test_deferred_only_not_flushed(void **state) {
    (void)state;
    /* A cursor closed while a queued result is pending: waiting for the
       result used to send the 12-byte close alone (one more write, one
       more packet the server must read). It now rides with the next
       request. */
    ffb_conn *c = hostile_attach(&H, 16, NULL);
    ffb_tx *tx;
    ffb_stmt *a = prepare_select(c, &tx);
    uint8_t row[8];
    srv_response(&W, 0, 0, NULL, 0);
    srv_fetch(&W, 0, 1, row, int_row(row, 1));
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_execute(a, tx)); /* a's cursor stays open */
    uint8_t desc[512];
    size_t n = srv_describe(desc, sizeof(desc), FFB_STMT_SELECT, 1, &INT_COL,
                            1, 1, 0, NULL, 0, 0);
    srv_response(&W, 4, 0, NULL, 0);
    srv_response(&W, 0, 0, desc, n);
    hostile_push(&H, &W);
    ffb_stmt *b;
    OK(c, ffb_stmt_new(c, &b));
    OK(c, ffb_stmt_prepare(b, tx, "select id from u", (size_t)-1));
    srv_response(&W, 0, 0, NULL, 0);
    srv_fetch(&W, 0, 1, row, int_row(row, 2));
    srv_fetch(&W, 100, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_stmt_queue_execute(b, tx, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    size_t writes = H.flushes;
    OK(c, ffb_stmt_close_cursor(a)); /* deferred */
    const ffb_result *r;
    assert_int_equal(ffb_conn_next_result(c, &r), 1);
    assert_int_equal(ffb_result_status(r), 0);
    assert_int_equal(H.flushes, writes); /* the close did not go alone */
    /* It rides with the ping: its answer comes first. */
    srv_response(&W, 0, 0, NULL, 0);
    srv_response(&W, 0, 0, NULL, 0);
    hostile_push(&H, &W);
    OK(c, ffb_conn_ping(c));
    assert_int_equal(H.flushes, writes + 1);
    assert_int_equal(hostile_pending(&H), 0);
    ffb_stmt_free(a);
    ffb_stmt_free(b);
    ffb_tx_free(tx);
    ffb_conn_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scripted_select, setup, teardown),
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_describe_continuation_ok),
        T(test_describe_continuation_grows),
        T(test_describe_continuation_new_side),
        T(test_describe_continuation_stalls),
        T(test_describe_truncated_before_select),
        T(test_describe_count_too_large),
        T(test_fetch_more_rows_than_asked),
        T(test_execute2_more_than_one_row),
        T(test_lazy_prepare_describe_checked),
        T(test_lazy_prepare_truncated_describe),
        T(test_reprepare_with_fetches_in_flight),
        T(test_endless_status_vector),
        T(test_packet_over_limit),
        T(test_inflate_bomb),
        T(test_large_packet_parsed_once),
        T(test_callback_rules),
        T(test_blocking_call_in_callback_parses_buffered),
        T(test_out_of_memory_everywhere),
        T(test_misuse_detected),
        T(test_deferred_only_not_flushed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
