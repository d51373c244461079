/*
 * Replays the recorded Firebird 5.0.4 conversation fb5-batch (see its
 * header in tests/data/fb5) through the library's batch API: two batches on
 * one prepared INSERT, the first with NULLs and a duplicate key (op_batch_cs
 * with counts 1 1 1 -1 1 and a status vector for message 3), the second
 * with a stream and a segmented blob in the batch blob stream.
 *
 * Every client write is compared byte for byte with the recording: the
 * parameter blocks of op_batch_create (TAG_MULTIERROR, TAG_RECORD_COUNTS,
 * and TAG_BLOB_POLICY only for the batch that carries blobs), the
 * segmented blob written as the two segments "AB" and "CDE" with
 * ffb_batch_add_blob_segments(), the messages and every other packet.
 * All the server's answers are fed back as recorded.
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

static uint8_t stream_byte(size_t i) { return (uint8_t)(i * 3 % 256); }

static void test_replay_batch(void **state) {
    char path[512];
    conv_load(&cv, conv_data_path("fb5-batch.conv", path, sizeof(path)));
    /* Server bytes fed whole, or cut into 5-byte pieces (every packet,
       op_batch_cs included, then arrives in parts). */
    cv.chunk = *state ? *(size_t *)*state : 0;
    conv_seek_connection(&cv, 0);

    ffb_conn_options o;
    conv_options(&o);
    o.wire_crypt_plugins = ""; /* the recording client did not encrypt */
    ffb_conn *c;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    conv_use(c, &cv);
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
    OK(c, ffb_tx_begin(c, &to, &tx));
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
    static const void *const segs[] = {"AB", "CDE"};
    static const size_t seglens[] = {2, 3};
    OK(c, ffb_batch_add_blob_segments(b, segs, seglens, 2, id2));
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
