/*
 * Replays the recorded Firebird 5.0.4 conversation fb5-batch (see its
 * header in tests/data/fb5) through the library's batch API: two batches on
 * one prepared INSERT, the first with NULLs and a duplicate key (op_batch_cs
 * with counts 1 1 1 -1 1 and a status vector for message 3), the second
 * with a stream and a segmented blob in the batch blob stream.
 *
 * Every client write is compared byte for byte. Three writes differ from
 * the recording by choice of encoding, and for them the expected bytes are
 * the recorded ones with that part built here:
 *   - the parameter block of op_batch_create: the recording client sent
 *     only TAG_MULTIERROR and TAG_RECORD_COUNTS (and TAG_BLOB_POLICY for
 *     the batch that used blobs); libfastfb always sends the buffer size
 *     and the detailed-error limit too, and TAG_BLOB_POLICY whenever the
 *     statement has a blob parameter (docs/batch.md);
 *   - the segmented blob: the recording wrote the segments "AB" and "CDE";
 *     ffb_batch_add_blob() makes one segment per 65535 bytes of one call,
 *     so the blob is the single segment "ABCDE" here. The messages and the
 *     op_batch_exec that follow it are the recorded bytes.
 * The BLR and message length of op_batch_create, the messages (NULL bitmap,
 * values), the batch blob ids and every other packet are the recorded
 * bytes, and all the server's answers are fed back as recorded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/blob.h"
#include "tests/support/conv.h"

static const char *const FIXED_A =
    "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D4393";

#define GDS_UNIQUE_KEY_VIOLATION 335544665u
#define GDS_IDX_KEY_VALUE 335545072u

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

/* The k-th client write (0-based) of the loaded conversation. */
static conv_line *client_write(int k) {
    for (size_t i = 0; i < cv.n; i++)
        if (cv.lines[i].kind == CONV_C && k-- == 0)
            return &cv.lines[i];
    fail_msg("the recording has fewer client writes");
    return NULL;
}

static void set_write(conv_line *l, const ffbp_writer *w) {
    free(l->bytes);
    l->bytes = malloc(w->len);
    memcpy(l->bytes, w->data, w->len);
    l->len = w->len;
}

/* libfastfb's parameter block for multi_error 1 and the defaults:
   version 1; TAG_MULTIERROR 1, TAG_RECORD_COUNTS 1, TAG_BUFFER_BYTES_SIZE
   16 MiB, TAG_DETAILED_ERRORS 64, TAG_BLOB_POLICY 3 (BLOB_STREAM: the
   statement has a blob parameter); 4-byte little-endian values. */
static const uint8_t PB[] = {
    0x01,                                                 /* version */
    0x01, 0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* multi-error */
    0x02, 0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* counts */
    0x03, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* buffer */
    0x05, 0x04, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, /* detailed */
    0x04, 0x04, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, /* blob policy */
};

/* A recorded write that starts with `prefix_len` bytes of other packets,
   then op_batch_create (statement, BLR, message length, parameter block),
   then op_batch_sync: the same with libfastfb's parameter block. */
static void expect_create(int k, size_t prefix_len) {
    conv_line *l = client_write(k);
    ffbp_reader r;
    ffbp_reader_init(&r, l->bytes + prefix_len, l->len - prefix_len);
    int32_t op;
    uint16_t stmt;
    ffbp_bytes blr, pb;
    uint32_t msglen;
    assert_int_equal(ffbp_get_i32(&r, &op), FFBP_OK);
    assert_int_equal(op, FFBP_OP_BATCH_CREATE);
    assert_int_equal(ffbp_get_u16(&r, &stmt), FFBP_OK);
    assert_int_equal(ffbp_get_cstring(&r, 1024, &blr), FFBP_OK);
    assert_int_equal(ffbp_get_u32(&r, &msglen), FFBP_OK);
    assert_int_equal(ffbp_get_cstring(&r, 1024, &pb), FFBP_OK);
    assert_int_equal(msglen, 110); /* the header's message length */
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_raw(&w, l->bytes, prefix_len);
    ffbp_put_batch_create(&w, stmt, blr.p, blr.len, msglen, PB, sizeof(PB));
    ffbp_put_raw(&w, l->bytes + prefix_len + r.pos,
                 l->len - prefix_len - r.pos); /* op_batch_sync */
    assert_int_equal(l->len - prefix_len - r.pos, 4);
    set_write(l, &w);
    ffbp_writer_free(&w);
}

static uint8_t stream_byte(size_t i) { return (uint8_t)(i * 3 % 256); }

/* The blob write: our blob stream, then the recorded op_batch_msg +
   op_batch_exec. */
static void expect_blob_write(int k) {
    conv_line *l = client_write(k);
    /* Recorded stream: op, statement, length, blob 0:1 (header 16 + 300
       bytes), blob 0:2 (header 16 + BPB 4 + two segments as 4-byte words
       + data: 4 + 2 + 4 + 3). */
    size_t recorded_stream = 12 + 16 + 300 + 16 + 4 + 4 + 2 + 4 + 3;
    uint8_t data[300];
    for (size_t i = 0; i < 300; i++)
        data[i] = stream_byte(i);
    static const uint8_t seg[] = {5, 0, 'A', 'B', 'C', 'D', 'E'};
    static const uint8_t bpb[] = {1, 3, 1, 0};
    ffbp_stream_blob sb[2] = {
        {1, NULL, 0, data, sizeof(data), 0},
        {2, bpb, sizeof(bpb), seg, sizeof(seg), 1},
    };
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    assert_int_equal(ffbp_put_batch_blob_stream(&w, 1, sb, 2), FFBP_OK);
    ffbp_put_raw(&w, l->bytes + recorded_stream, l->len - recorded_stream);
    /* The recorded op_batch_msg follows the stream. */
    assert_int_equal(l->bytes[recorded_stream + 3], FFBP_OP_BATCH_MSG);
    set_write(l, &w);
    ffbp_writer_free(&w);
}

static void test_replay_batch(void **state) {
    char path[512];
    conv_load(&cv, conv_data_path("fb5-batch.conv", path, sizeof(path)));
    /* Server bytes fed whole, or cut into 5-byte pieces (every packet,
       op_batch_cs included, then arrives in parts). */
    cv.chunk = *state ? *(size_t *)*state : 0;
    expect_create(4, 16); /* op_transaction (TPB 03 02 09 06) first */
    expect_create(6, 8);  /* op_batch_rls of the first batch first */
    expect_blob_write(7);
    conv_seek_connection(&cv, 0);

    static uint8_t a[32];
    conv_unhex(FIXED_A, a, sizeof(a));
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.database = "fixtures";
    o.host = "recorded";
    o.password = "masterkey";
    o.auth_plugins = "Srp256,Srp";
    o.wire_crypt_plugins = ""; /* the recording client did not encrypt */
    o.os_user = "alice";
    o.client_host = "client1";
    o.process_id = 4242;
    o.process_name = "fixture-client";
    o.test_srp_private_key = a;
    o.test_srp_private_key_len = sizeof(a);
    ffb_conn *c;
    assert_int_equal(ffb_conn_new(&c, &o), 0);
    ffb__conn_set_transport(c, &conv_transport, &cv);
    OK(c, ffb_conn_connect(c));
    assert_int_equal(ffb_conn_protocol(c), 19);

    /* 1. allocate + prepare(0xFFFF), transaction 0. */
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, NULL,
                           "INSERT INTO TBATCH (ID, NAME, N, B) VALUES (?, ?, "
                           "?, ?)",
                           (size_t)-1));
    assert_int_equal(ffb_stmt_param_count(s), 4);

    /* 2 + 3. The first batch: create + sync (with the transaction's
       start), then the messages + exec. */
    ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
    bo.multi_error = 1;
    ffb_batch *b;
    OK(c, ffb_batch_new(s, &bo, &b));
    static const struct {
        int id;
        const char *name;
        int n;
    } rows[] = {{1, "alpha", 10},
                {2, NULL, 20},
                {3, "gamma", -1},
                {2, "duplicate", 40},
                {5, NULL, -1}};
    for (size_t i = 0; i < 5; i++) {
        OK(c, ffb_stmt_bind_int64(s, 0, rows[i].id));
        if (rows[i].name)
            OK(c, ffb_stmt_bind_text(s, 1, rows[i].name, (size_t)-1));
        else
            OK(c, ffb_stmt_bind_null(s, 1));
        if (rows[i].n >= 0)
            OK(c, ffb_stmt_bind_int64(s, 2, rows[i].n));
        else
            OK(c, ffb_stmt_bind_null(s, 2));
        OK(c, ffb_stmt_bind_null(s, 3));
        OK(c, ffb_batch_add(b));
    }
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    to.isolation = FFB_ISO_SNAPSHOT; /* TPB 03 02 09 06 */
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, &tx, &to));
    uint64_t r0 = rts(c);
    assert_int_equal(ffb_batch_execute(b, tx), FFB_E_SERVER);
    assert_int_equal(rts(c) - r0, 2);
    assert_int_equal(ffb_batch_row_count(b), 5);
    static const int64_t want[] = {1, 1, 1, -1, 1};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(ffb_batch_row_status(b, i), want[i]);
        if (i != 3)
            assert_null(ffb_batch_row_error(b, i));
    }
    const ffb_error *e = ffb_batch_row_error(b, 3);
    assert_non_null(e);
    assert_int_equal(ffb_error_gds(e), GDS_UNIQUE_KEY_VIOLATION);
    assert_true(ffb_error_has(e, GDS_IDX_KEY_VALUE));
    assert_string_equal(ffb_error_arg(e, 0, 0), "INTEG_6");
    assert_string_equal(ffb_error_arg(e, 0, 1), "TBATCH");
    assert_non_null(strstr(ffb_error_message(ffb_conn_error(c)),
                           "row 4 of the batch"));

    /* 4 + 5. The first batch released (rides with the next write); a new
       batch with blobs: rls + create + sync, then the blob stream +
       messages + exec. */
    ffb_batch_free(b);
    OK(c, ffb_batch_new(s, &bo, &b));
    uint8_t data[300], id1[8], id2[8];
    for (size_t i = 0; i < 300; i++)
        data[i] = stream_byte(i);
    OK(c, ffb_batch_add_blob(b, data, sizeof(data), 0, id1));
    OK(c, ffb_batch_add_blob(b, "ABCDE", 5, 1, id2));
    OK(c, ffb_stmt_bind_int64(s, 0, 6));
    OK(c, ffb_stmt_bind_text(s, 1, "stream blob", (size_t)-1));
    OK(c, ffb_stmt_bind_int64(s, 2, 60));
    OK(c, ffb_stmt_bind_blob_id(s, 3, id1));
    OK(c, ffb_batch_add(b));
    OK(c, ffb_stmt_bind_int64(s, 0, 7));
    OK(c, ffb_stmt_bind_text(s, 1, "segmented blob", (size_t)-1));
    OK(c, ffb_stmt_bind_null(s, 2));
    OK(c, ffb_stmt_bind_blob_id(s, 3, id2));
    OK(c, ffb_batch_add(b));
    OK(c, ffb_stmt_bind_int64(s, 0, 8));
    OK(c, ffb_stmt_bind_null(s, 1));
    OK(c, ffb_stmt_bind_int64(s, 2, 80));
    OK(c, ffb_stmt_bind_null(s, 3));
    OK(c, ffb_batch_add(b));
    r0 = rts(c);
    OK(c, ffb_batch_execute(b, tx));
    assert_int_equal(rts(c) - r0, 2);
    assert_int_equal(ffb_batch_row_count(b), 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(ffb_batch_row_status(b, i), 1);

    /* 6. rls rides with the commit; detach, disconnect. */
    ffb_batch_free(b);
    r0 = rts(c);
    OK(c, ffb_tx_commit(tx));
    assert_int_equal(rts(c) - r0, 1);
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c)); /* the recording did not free the statement */
    ffb_stmt_free(s);
    ffb_conn_free(c);
    if (cv.failure[0])
        fail_msg("%s", cv.failure);
    assert_int_equal(cv.pos, cv.n);
    conv_free(&cv);
}

/* The recorded op_batch_cs alone, through the decoder: reccount 5, counts
   1 1 1 -1 1, one status vector at position 3. */
static void test_decode_recorded_cs(void **state) {
    (void)state;
    char path[512];
    conv_load(&cv, conv_data_path("fb5-batch.conv", path, sizeof(path)));
    /* The server chunk answering the first batch's messages: op_response
       (to op_batch_msg, 32 bytes) then op_batch_cs. */
    int k = 0;
    const conv_line *l = NULL;
    for (size_t i = 0; i < cv.n; i++)
        if (cv.lines[i].kind == CONV_S && k++ == 5) {
            l = &cv.lines[i];
            break;
        }
    assert_non_null(l);
    ffbp_reader r;
    ffbp_reader_init(&r, l->bytes, l->len);
    ffbp_status_arg args[32];
    ffbp_packet pkt;
    assert_int_equal(ffbp_get_packet(&r, 19, &pkt, args, 32), FFBP_OK);
    assert_int_equal(pkt.op, FFBP_OP_RESPONSE);
    assert_int_equal(ffbp_get_packet(&r, 19, &pkt, args, 32), FFBP_OK);
    assert_int_equal(pkt.op, FFBP_OP_BATCH_CS);
    assert_int_equal(r.pos, l->len);
    const ffbp_batch_cs *cs = &pkt.u.batch_cs;
    assert_int_equal(cs->stmt, 1);
    assert_int_equal(cs->reccount, 5);
    assert_int_equal(cs->updates, 5);
    assert_int_equal(cs->vectors, 1);
    assert_int_equal(cs->errors, 0);
    static const int32_t counts[] = {1, 1, 1, -1, 1};
    for (int i = 0; i < 5; i++) {
        const uint8_t *p = cs->counts + 4 * i;
        int32_t v = (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                              (uint32_t)p[2] << 8 | p[3]);
        assert_int_equal(v, counts[i]);
    }
    ffbp_reader d;
    ffbp_reader_init(&d, cs->detail, cs->detail_len);
    uint32_t pos;
    ffbp_status st = {args, 32, 0, 0};
    assert_int_equal(ffbp_get_u32(&d, &pos), FFBP_OK);
    assert_int_equal(pos, 3);
    assert_int_equal(ffbp_get_status(&d, &st), FFBP_OK);
    assert_int_equal(d.pos, cs->detail_len);
    ffb_error err;
    ffb__error_from_status(&err, FFB_E_SERVER, &st, NULL);
    assert_int_equal(ffb_error_gds(&err), GDS_UNIQUE_KEY_VIOLATION);
    assert_true(ffb_error_has(&err, GDS_IDX_KEY_VALUE));
    assert_string_equal(ffb_error_arg(&err, 1, 0), "(\"ID\" = 2)");
    conv_free(&cv);
}

int main(void) {
    static size_t whole = 0, pieces = 5;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_replay_batch, &whole),
        cmocka_unit_test_prestate(test_replay_batch, &pieces),
        cmocka_unit_test(test_decode_recorded_cs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
