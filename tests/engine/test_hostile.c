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

#include "tests/support/hostile.h"

static hostile H;
static ffbp_writer W;

static int setup(void **state) {
    (void)state;
    hostile_init(&H);
    ffbp_writer_init(&W, NULL);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    hostile_free(&H);
    ffbp_writer_free(&W);
    return 0;
}

#define OK(conn, expr)                                                         \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ < 0)                                                           \
            fail_msg("%s:%d: %s = %d: %s", __FILE__, __LINE__, #expr, rc_,     \
                     ffb_error_message(ffb_conn_error(conn)));                 \
    } while (0)

static void expect_msg(ffb_conn *c, const char *needle) {
    const char *msg = ffb_error_message(ffb_conn_error(c));
    if (!strstr(msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", msg, needle);
}

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
    OK(c, ffb_tx_begin(c, tx, NULL));
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scripted_select, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
