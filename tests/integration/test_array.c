/*
 * Arrays against real Firebird 3.0 and 4.0 servers: a table with an array
 * column of every element type the server allows (Firebird 4: also INT128,
 * DECFLOAT and the time zone types), multi-dimensional and with lower
 * bounds other than 1; each array written with op_put_slice, its id bound
 * to the INSERT, read back with op_get_slice and compared byte for byte.
 * Round trips asserted exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/it.h"

typedef it_target target;

typedef struct colspec {
    const char *name;
    const char *type;  /* element type and dimensions, SQL */
    int element;       /* expected ffb_array_desc.element */
    int scale, length; /* expected (length: text only, else 0) */
    unsigned dims;
    int32_t lower[3], upper[3];
    int fb4; /* Firebird 4 and later only */
} colspec;

static const colspec cols[] = {
    {"A_SMALL", "SMALLINT[3]", FFB_SQL_SHORT, 0, 0, 1, {1}, {3}, 0},
    {"A_INT", "INTEGER[-2:2]", FFB_SQL_LONG, 0, 0, 1, {-2}, {2}, 0},
    {"A_BIG", "BIGINT[0:1, 2:4]", FFB_SQL_INT64, 0, 0, 2, {0, 2}, {1, 4}, 0},
    {"A_FLOAT", "FLOAT[2]", FFB_SQL_FLOAT, 0, 0, 1, {1}, {2}, 0},
    {"A_DOUBLE",
     "DOUBLE PRECISION[2, 2, 2]",
     FFB_SQL_DOUBLE,
     0,
     0,
     3,
     {1, 1, 1},
     {2, 2, 2},
     0},
    {"A_NUM", "NUMERIC(9,2)[3]", FFB_SQL_LONG, -2, 0, 1, {1}, {3}, 0},
    {"A_DEC", "DECIMAL(18,4)[10:12]", FFB_SQL_INT64, -4, 0, 1, {10}, {12}, 0},
    {"A_NUM4", "NUMERIC(4,1)[2]", FFB_SQL_SHORT, -1, 0, 1, {1}, {2}, 0},
    {"A_CHAR",
     "CHAR(5)[3] CHARACTER SET NONE",
     FFB_SQL_TEXT,
     0,
     5,
     1,
     {1},
     {3},
     0},
    {"A_CHARU",
     "CHAR(3)[2] CHARACTER SET UTF8",
     FFB_SQL_TEXT,
     0,
     12,
     1,
     {1},
     {2},
     0},
    {"A_VC",
     "VARCHAR(10)[4] CHARACTER SET NONE",
     FFB_SQL_VARYING,
     0,
     10,
     1,
     {1},
     {4},
     0},
    {"A_DATE", "DATE[2]", FFB_SQL_TYPE_DATE, 0, 0, 1, {1}, {2}, 0},
    {"A_TIME", "TIME[2]", FFB_SQL_TYPE_TIME, 0, 0, 1, {1}, {2}, 0},
    {"A_TS", "TIMESTAMP[2]", FFB_SQL_TIMESTAMP, 0, 0, 1, {1}, {2}, 0},
    {"A_BOOL", "BOOLEAN[4]", FFB_SQL_BOOLEAN, 0, 0, 1, {1}, {4}, 0},
    {"A_I128", "INT128[2]", FFB_SQL_INT128, 0, 0, 1, {1}, {2}, 1},
    {"A_N38", "NUMERIC(38,6)[2]", FFB_SQL_INT128, -6, 0, 1, {1}, {2}, 1},
    {"A_DF16", "DECFLOAT(16)[2]", FFB_SQL_DEC16, 0, 0, 1, {1}, {2}, 1},
    {"A_DF34", "DECFLOAT(34)[2]", FFB_SQL_DEC34, 0, 0, 1, {1}, {2}, 1},
    {"A_TTZ", "TIME WITH TIME ZONE[2]", FFB_SQL_TIME_TZ, 0, 0, 1, {1}, {2}, 1},
    {"A_TSTZ",
     "TIMESTAMP WITH TIME ZONE[2]",
     FFB_SQL_TIMESTAMP_TZ,
     0,
     0,
     1,
     {1},
     {2},
     1},
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static ffb_conn *open_conn(const target *t) {
    return it_connect(t, 0);
}

static int used(const target *t, size_t i) {
    return !cols[i].fb4 || t->version >= 4;
}

static int setup_target(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t);
    char sql[2048];
    size_t n = (size_t)snprintf(sql, sizeof(sql), "create table %s (id integer",
                                t->table);
    for (size_t i = 0; i < NCOLS; i++)
        if (used(t, i))
            n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", %s %s",
                                  cols[i].name, cols[i].type);
    snprintf(sql + n, sizeof(sql) - n, ")");
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
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

/* Element k of column i, application layout (include/fastfb.h). */
static void fill(size_t i, size_t k, uint8_t *e, size_t esize) {
    int16_t s16;
    int32_t s32;
    int64_t s64;
    float f;
    double d;
    uint32_t u32;
    uint16_t u16;
    memset(e, 0, esize);
    switch (cols[i].element) {
    case FFB_SQL_SHORT:
        s16 = (int16_t)(k * 1000 - 30000 + (k & 1 ? -1 : 1) * (int)i);
        if (cols[i].scale)
            s16 = (int16_t)(k * 100 - 999);
        memcpy(e, &s16, 2);
        break;
    case FFB_SQL_LONG:
        s32 = (int32_t)(k * 123456789u) - 2000000000 + (int32_t)k;
        if (cols[i].scale)
            s32 = (int32_t)k * 12345 - 99999;
        memcpy(e, &s32, 4);
        break;
    case FFB_SQL_INT64:
        s64 = (int64_t)k * 1234567890123ll - 9000000000000000000ll;
        memcpy(e, &s64, 8);
        break;
    case FFB_SQL_FLOAT:
        f = (float)k * 1.5f - 3.25f;
        memcpy(e, &f, 4);
        break;
    case FFB_SQL_DOUBLE:
        d = (double)k / 3.0 - 1e300 * (k == 7);
        memcpy(e, &d, 8);
        break;
    case FFB_SQL_TEXT: {
        /* Blank-padded, as the server pads. */
        memset(e, ' ', esize);
        char s[16];
        int n = snprintf(s, sizeof(s), "c%zu", k * 11);
        memcpy(e, s, (size_t)n);
        break;
    }
    case FFB_SQL_VARYING: {
        char s[16];
        int n =
            snprintf(s, sizeof(s), "%.*s", (int)(k * 3 % 11), "vwxyzabcdef");
        u16 = (uint16_t)n;
        memcpy(e, &u16, 2);
        memcpy(e + 2, s, (size_t)n);
        break;
    }
    case FFB_SQL_TYPE_DATE:
        s32 = 58000 + (int32_t)k * 400; /* days since 1858-11-17 */
        memcpy(e, &s32, 4);
        break;
    case FFB_SQL_TYPE_TIME:
        u32 = (uint32_t)(k * 36000000u + 1234u);
        memcpy(e, &u32, 4);
        break;
    case FFB_SQL_TIMESTAMP:
        s32 = 59000 + (int32_t)k;
        u32 = (uint32_t)(k * 1000000u + 5u);
        memcpy(e, &s32, 4);
        memcpy(e + 4, &u32, 4);
        break;
    case FFB_SQL_BOOLEAN:
        e[0] = (uint8_t)(k % 3 == 1);
        break;
    case FFB_SQL_INT128:
        /* A negative 128-bit number in host order: small values differ per
           element, the high bytes all ones. */
        memset(e, 0xFF, 16);
        s64 = -(int64_t)(k * 1000003 + 7);
        {
            uint16_t one = 1;
            uint8_t le;
            memcpy(&le, &one, 1);
            if (le)
                memcpy(e, &s64, 8);
            else
                memcpy(e + 8, &s64, 8);
        }
        break;
    case FFB_SQL_DEC16: /* DPD: coefficient k + 1, exponent 0 */
        e[0] = 0x22;
        e[1] = 0x38;
        e[7] = (uint8_t)(k + 1);
        break;
    case FFB_SQL_DEC34:
        e[0] = 0x22;
        e[1] = 0x08;
        e[15] = (uint8_t)(k + 2);
        break;
    case FFB_SQL_TIME_TZ:
        u32 = (uint32_t)(k * 10000000u + 99u);
        u16 = (uint16_t)(1439 + 60 * (int)k); /* offset zones +00:00, +01:00 */
        memcpy(e, &u32, 4);
        memcpy(e + 4, &u16, 2);
        break;
    case FFB_SQL_TIMESTAMP_TZ:
        s32 = 59500 + (int32_t)k;
        u32 = (uint32_t)(k * 20000000u + 7u);
        u16 = (uint16_t)(1439 - 120);
        memcpy(e, &s32, 4);
        memcpy(e + 4, &u32, 4);
        memcpy(e + 8, &u16, 2);
        break;
    default:
        fail_msg("no filler for element type %d", cols[i].element);
    }
}

typedef struct arr {
    ffb_array_desc d;
    size_t esize, count;
    uint8_t *data;
    uint8_t id[8];
} arr;

static void test_round_trip(void **state) {
    const target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    arr a[NCOLS];
    memset(a, 0, sizeof(a));

    /* 1. descriptors: prepare (1 round trip) + execute with its fetch (1)
       each; asked again, the connection's cache answers (0). */
    for (size_t i = 0; i < NCOLS; i++) {
        if (!used(t, i))
            continue;
        uint64_t b = it_rts(c);
        OK(c, ffb_array_lookup(c, tx, t->table, cols[i].name, &a[i].d,
                               sizeof(a[i].d)));
        assert_int_equal(it_rts(c) - b, 2);
        b = it_rts(c);
        ffb_array_desc again;
        OK(c, ffb_array_lookup(c, tx, t->table, cols[i].name, &again,
                               sizeof(again)));
        assert_int_equal(it_rts(c) - b, 0);
        assert_memory_equal(&again, &a[i].d, sizeof(again));
        if (a[i].d.element != cols[i].element)
            fail_msg("%s: element %d, expected %d", cols[i].name,
                     a[i].d.element, cols[i].element);
        assert_int_equal(a[i].d.scale, cols[i].scale);
        if (cols[i].length)
            assert_int_equal(a[i].d.length, cols[i].length);
        assert_int_equal(a[i].d.dims, cols[i].dims);
        for (unsigned k = 0; k < cols[i].dims; k++) {
            assert_int_equal(a[i].d.lower[k], cols[i].lower[k]);
            assert_int_equal(a[i].d.upper[k], cols[i].upper[k]);
        }
        a[i].esize = ffb_array_element_size(&a[i].d);
        a[i].count = ffb_array_element_count(&a[i].d);
        assert_true(a[i].esize > 0 && a[i].count > 0);
        a[i].data = malloc(a[i].esize * a[i].count);
        assert_non_null(a[i].data);
        for (size_t k = 0; k < a[i].count; k++)
            fill(i, k, a[i].data + k * a[i].esize, a[i].esize);
    }

    /* 2. one blocking put: 1 round trip. */
    uint64_t b = it_rts(c);
    OK(c, ffb_array_put(c, tx, &a[0].d, a[0].data, a[0].esize * a[0].count,
                        a[0].id));
    assert_int_equal(it_rts(c) - b, 1);

    /* 3. the other puts queued and sent in one write: 1 round trip. */
    b = it_rts(c);
    size_t queued = 0;
    for (size_t i = 1; i < NCOLS; i++) {
        if (!used(t, i))
            continue;
        OK(c,
           ffb_array_queue_put(c, tx, &a[i].d, a[i].data,
                               a[i].esize * a[i].count, a[i].id, NULL, NULL));
        queued++;
    }
    OK(c, ffb_conn_flush(c));
    const ffb_result *res;
    for (size_t k = 0; k < queued; k++) {
        assert_int_equal(ffb_conn_next_result(c, &res), 1);
        assert_int_equal(ffb_result_op(res), FFB_OP_ARRAY_PUT);
        if (ffb_result_status(res) != 0)
            fail_msg("put %zu: %s", k,
                     ffb_error_message(ffb_result_error(res)));
    }
    assert_int_equal(it_rts(c) - b, 1);

    /* 4. the ids bound to one INSERT: prepare 1 + execute 1. */
    char sql[2048];
    size_t n =
        (size_t)snprintf(sql, sizeof(sql), "insert into %s (id", t->table);
    for (size_t i = 0; i < NCOLS; i++)
        if (used(t, i))
            n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", %s",
                                  cols[i].name);
    n += (size_t)snprintf(sql + n, sizeof(sql) - n, ") values (1");
    for (size_t i = 0; i < NCOLS; i++)
        if (used(t, i))
            n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", ?");
    snprintf(sql + n, sizeof(sql) - n, ")");
    ffb_stmt *ins;
    OK(c, ffb_stmt_new(c, &ins));
    b = it_rts(c);
    OK(c, ffb_stmt_prepare(ins, tx, sql, (size_t)-1));
    unsigned p = 0;
    for (size_t i = 0; i < NCOLS; i++) {
        if (!used(t, i))
            continue;
        ffb_column_info ci;
        OK(c, ffb_stmt_param_info(ins, p, &ci, sizeof(ci)));
        assert_int_equal(ci.sqltype, FFB_SQL_ARRAY);
        OK(c, ffb_stmt_bind_array_id(ins, p++, a[i].id));
    }
    OK(c, ffb_stmt_execute(ins, tx));
    assert_int_equal(it_rts(c) - b, 2);
    assert_int_equal(ffb_stmt_rows_affected(ins), 1);
    ffb_stmt_free(ins);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);

    /* 5. read back in a new transaction: the select (prepare 1 + execute
       1), the descriptors from the cache by the describe's names (0), one
       blocking get (1), the others queued in one write (1). */
    tx = it_active_tx(c);
    n = (size_t)snprintf(sql, sizeof(sql), "select ");
    for (size_t i = 0, first = 1; i < NCOLS; i++)
        if (used(t, i)) {
            n += (size_t)snprintf(sql + n, sizeof(sql) - n, "%s%s",
                                  first ? "" : ", ", cols[i].name);
            first = 0;
        }
    snprintf(sql + n, sizeof(sql) - n, " from %s where id = 1", t->table);
    ffb_stmt *sel;
    OK(c, ffb_stmt_new(c, &sel));
    b = it_rts(c);
    OK(c, ffb_stmt_prepare(sel, tx, sql, (size_t)-1));
    OK(c, ffb_stmt_execute(sel, tx));
    assert_int_equal(ffb_stmt_fetch(sel), 1);
    assert_int_equal(it_rts(c) - b, 2);
    uint8_t *back[NCOLS] = {0};
    size_t got[NCOLS] = {0};
    b = it_rts(c);
    unsigned col = 0;
    int first = 1;
    for (size_t i = 0; i < NCOLS; i++) {
        if (!used(t, i))
            continue;
        ffb_column_info ci;
        OK(c, ffb_stmt_column_info(sel, col, &ci, sizeof(ci)));
        assert_int_equal(ci.sqltype, FFB_SQL_ARRAY);
        ffb_array_desc d;
        OK(c, ffb_stmt_array_desc(sel, col, tx, &d, sizeof(d)));
        assert_memory_equal(&d, &a[i].d, sizeof(d));
        uint8_t id[8];
        OK(c, ffb_stmt_get_array_id(sel, col, id));
        back[i] = malloc(a[i].esize * a[i].count + 1);
        assert_non_null(back[i]);
        if (first) {
            uint64_t b1 = it_rts(c);
            OK(c, ffb_array_get(c, tx, &d, id, back[i],
                                a[i].esize * a[i].count + 1, &got[i]));
            assert_int_equal(it_rts(c) - b1, 1);
            first = 0;
        } else {
            OK(c, ffb_array_queue_get(c, tx, &d, id, back[i],
                                      a[i].esize * a[i].count + 1, &got[i],
                                      NULL, NULL));
        }
        col++;
    }
    OK(c, ffb_conn_flush(c));
    for (size_t i = 0, k = 0; i < NCOLS; i++) {
        if (!used(t, i) || k++ == 0)
            continue; /* the first column's get was the blocking one */
        assert_int_equal(ffb_conn_next_result(c, &res), 1);
        assert_int_equal(ffb_result_op(res), FFB_OP_ARRAY_GET);
        if (ffb_result_status(res) != 0)
            fail_msg("get %s: %s", cols[i].name,
                     ffb_error_message(ffb_result_error(res)));
    }
    assert_int_equal(it_rts(c) - b, 2); /* the blocking get + the queue */
    for (size_t i = 0; i < NCOLS; i++) {
        if (!used(t, i))
            continue;
        assert_int_equal(got[i], a[i].esize * a[i].count);
        if (memcmp(back[i], a[i].data, got[i]) != 0) {
            for (size_t k = 0; k < got[i]; k++)
                if (back[i][k] != a[i].data[k])
                    fail_msg("%s: byte %zu (element %zu) is %02X, wrote %02X",
                             cols[i].name, k, k / a[i].esize, back[i][k],
                             a[i].data[k]);
        }
        free(back[i]);
        free(a[i].data);
    }
    ffb_stmt_free(sel);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

/* Refusals that send nothing: a column that is not an array, a buffer too
   small, a BOOLEAN other than 0/1. */
static void test_refusals(void **state) {
    const target *t = *state;
    ffb_conn *c = open_conn(t);
    ffb_tx *tx = it_active_tx(c);
    ffb_array_desc d;
    assert_int_equal(ffb_array_lookup(c, tx, t->table, "ID", &d, sizeof(d)),
                     FFB_E_SERVER);
    assert_int_equal(
        ffb_array_lookup(c, tx, t->table, "NO_SUCH", &d, sizeof(d)),
        FFB_E_SERVER);
    /* The queue twin: prepare, then execute + fetch (2 round trips); asked
       again, the cache answers at once (1, nothing queued). */
    uint64_t b = it_rts(c);
    assert_int_equal(ffb_array_queue_lookup(c, tx, t->table, "A_BOOL", &d,
                                            sizeof(d), NULL, NULL),
                     0);
    OK(c, ffb_conn_flush(c));
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_ARRAY_LOOKUP);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(it_rts(c) - b, 2);
    assert_int_equal(d.element, FFB_SQL_BOOLEAN);
    assert_int_equal(d.dims, 1);
    assert_int_equal(d.upper[0], 4);
    ffb_array_desc d2;
    assert_int_equal(ffb_array_queue_lookup(c, tx, t->table, "A_BOOL", &d2,
                                            sizeof(d2), NULL, NULL),
                     1);
    assert_memory_equal(&d, &d2, sizeof(d));
    assert_int_equal(ffb_conn_pending(c), 0);
    /* A failing queued lookup reports through its result. */
    assert_int_equal(ffb_array_queue_lookup(c, tx, t->table, "NOPE", &d2,
                                            sizeof(d2), NULL, NULL),
                     0);
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_status(res), FFB_E_SERVER);
    assert_non_null(
        strstr(ffb_error_message(ffb_result_error(res)), "does not exist"));
    b = it_rts(c);
    uint8_t bad[4] = {0, 1, 2, 0}, id[8];
    assert_int_equal(ffb_array_put(c, tx, &d, bad, sizeof(bad), id),
                     FFB_E_INVAL);
    assert_int_equal(ffb_array_put(c, tx, &d, bad, 3, id), FFB_E_INVAL);
    memset(id, 0, sizeof(id));
    size_t got;
    assert_int_equal(ffb_array_get(c, tx, &d, id, bad, 3, &got), FFB_E_INVAL);
    assert_int_equal(it_rts(c) - b, 0);
    OK(c, ffb_conn_ping(c));
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB4", "FB3E", "FB4E"};
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refusals),
    };
    return it_main("ARRAY", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), setup_target,
                   teardown_target);
}
