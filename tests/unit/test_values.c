/*
 * Parameter binding and column text in lib/values.c without a server: the
 * statements are built by hand (metadata, parameters and one row, as
 * lib/stmt.c would after a describe and a fetch).
 *
 * - CHAR in every multi-byte character set is cut to its characters;
 * - FLOAT and DOUBLE PRECISION read as the shortest text that reads back;
 * - text the client does not convert becomes a VARCHAR in the message;
 * - conversions refused on the client carry the server's status vector
 *   (codes, arguments, SQLCODE, SQLSTATE) and a message naming the
 *   declared type and the value.
 * tests/integration/test_types.c checks the same against real servers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/fastfb.h"
#include "lib/internal.h"
#include "lib/types.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MAXV 8

typedef struct fixture {
    ffb_conn *conn;
    ffb_stmt s;
    ffb__col in_cols[MAXV], out_cols[MAXV];
    ffbp_item in_items[MAXV], out_items[MAXV];
    ffb__param params[MAXV];
    ffb__row row;
    uint32_t off[MAXV], len[MAXV];
    uint8_t msg[512];
} fixture;

/* A described column: type, scale, length in bytes, character set, and
   the NUMERIC (1) / DECIMAL (2) subtype of integer types. */
typedef struct var {
    int sqltype, scale, length, charset, numeric;
} var;

static void col_from(ffb__col *c, ffbp_item *it, const var *v) {
    memset(c, 0, sizeof(*c));
    c->sqltype = v->sqltype;
    c->scale = v->scale;
    c->length = v->length;
    int text = v->sqltype == FFBP_SQL_VARYING || v->sqltype == FFBP_SQL_TEXT;
    c->subtype = text ? v->charset : v->numeric;
    c->charset = text ? v->charset : -1;
    c->field = c->relation = c->owner = c->relation_alias = "";
    c->alias = "X";
    assert_int_equal(
        ffbp_item_from_sql(v->sqltype, c->subtype, v->scale, v->length, it),
        FFBP_OK);
}

static void fixture_init(fixture *f, const var *in, size_t nin) {
    memset(f, 0, sizeof(*f));
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = "localhost:/nowhere.fdb";
    assert_int_equal(ffb_conn_new(&o, &f->conn), 0);
    f->s.conn = f->conn;
    f->s.prepared = 1;
    f->s.in.n = nin;
    f->s.in.cols = f->in_cols;
    f->s.in.items = f->in_items;
    f->s.params = f->params;
    for (size_t i = 0; i < nin; i++)
        col_from(&f->in_cols[i], &f->in_items[i], &in[i]);
}

/* One row of one column of type `out` holding the wire bytes p[0..n). */
static void fixture_cell(fixture *f, const var *out, const void *p, size_t n) {
    f->s.out.n = 1;
    f->s.out.cols = f->out_cols;
    f->s.out.items = f->out_items;
    col_from(&f->out_cols[0], &f->out_items[0], out);
    assert_true(n <= sizeof(f->msg));
    memcpy(f->msg, p, n);
    f->off[0] = 0;
    f->len[0] = (uint32_t)n;
    f->s.rows.data = f->msg;
    f->s.rows.len = n;
    f->row.pos = 0;
    f->row.len = n;
    f->row.offs = 0;
    f->s.rowv = &f->row;
    f->s.nrows = 1;
    f->s.cur = 1;
    f->s.row_off = f->off;
    f->s.row_len = f->len;
}

static void fixture_free(fixture *f) {
    for (size_t i = 0; i < f->s.in.n; i++)
        ffb__free(f->conn->alloc, f->params[i].data);
    ffb__free(f->conn->alloc, f->s.textbuf);
    ffb_conn_free(f->conn);
}

#define BIND_OK(f, expr)                                                       \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ != 0)                                                          \
            fail_msg("%s:%d: %s = %d: %s", __FILE__, __LINE__, #expr, rc_,     \
                     ffb_error_message(ffb_conn_error((f)->conn)));            \
    } while (0)

/* ---- multi-byte characters --------------------------------------------------
 */

static void test_mb_chars(void **state) {
    (void)state;
    static const struct {
        int cs;
        const char *s;
        long chars;
    } v[] = {
        {5,
         "\x82\xA0"
         "a\xB1",
         3},                         /* SJIS: kanji, ASCII, half-width kana */
        {68, "\x82\xA0\x82\xA2", 2}, /* CP943C */
        {6, "\xA4\xA2\x8E\xB1z", 3}, /* EUCJ: 2 + half-width kana + 1 */
        {44, "\xC7\xD1 ", 2},        /* KSC_5601 */
        {56, "\xA4\xA4\xA4\x40", 2}, /* BIG_5: a low trailing byte */
        {57, "\xD6\xD0", 1},         /* GB_2312 */
        {67, "\x81\x40\xD6\xD0", 2}, /* GBK */
        {69, "\x81\x30\x89\x38\xD6\xD0x", 3}, /* GB18030: 4 + 2 + 1 */
        {4, "\xC3\xA9\xE4\xB8\xAD", 2},       /* UTF8 */
        {3, "\xF0\x9F\x98\x80", 1},           /* UNICODE_FSS */
        {53, "\xE9\xE9", 2},                  /* WIN1252: bytes */
        {0, "\xC3\xA9", 2},                   /* NONE: bytes */
        {5, "\x82", 1},                       /* cut short: one */
    };
    for (size_t i = 0; i < N(v); i++) {
        size_t len = strlen(v[i].s);
        if (ffb__mb_chars(v[i].cs, v[i].s, len) != v[i].chars)
            fail_msg("[%zu] charset %d: %ld characters, expected %ld", i,
                     v[i].cs, ffb__mb_chars(v[i].cs, v[i].s, len), v[i].chars);
        assert_int_equal(ffb__mb_skip(v[i].cs, v[i].s, len, v[i].chars), len);
        assert_int_equal(ffb__mb_skip(v[i].cs, v[i].s, len, 1000), len);
        assert_int_equal(ffb__mb_skip(v[i].cs, v[i].s, len, 0), 0);
    }
    assert_int_equal(ffb__mb_skip(69, "\x81\x30\x89\x38\xD6\xD0", 6, 1), 4);
    assert_int_equal(ffb__mb_skip(5,
                                  "\x82\xA0"
                                  "a",
                                  3, 1),
                     2);
    assert_int_equal(ffb__mb_chars(4, "\xFF", 1), -1); /* not UTF-8 */
    assert_int_equal(ffb__mb_chars(5, NULL, 0), 0);
    assert_int_equal(ffb__mb_skip(5, NULL, 0, 3), 0);
}

/* CHAR(n) arrives padded to n x the maximum bytes; it reads as n
   characters, for every multi-byte set. */
static void test_char_cut_to_characters(void **state) {
    (void)state;
    static const struct {
        int cs, bpc, chars;
        const char *value; /* the characters, then blanks */
        size_t want;       /* bytes of the first `chars` characters */
    } v[] = {
        {5, 2, 3,
         "\x82\xA0"
         "a ",
         4},
        {68, 2, 2, "\x82\xA0\x82\xA0", 4},
        {6, 2, 2, "\xA4\xA2 ", 3},
        {44, 2, 2, "a ", 2},
        {56, 2, 2, "\xA4\xA4 ", 3},
        {57, 2, 1, "\xD6\xD0", 2},
        {67, 2, 2, "\xD6\xD0 ", 3},
        {69, 4, 3,
         "\x81\x30\x89\x38"
         "a ",
         6},
        {69, 4, 2, "  ", 2},
        {4, 4, 5, "ab   ", 5},
        {3, 3, 2, "\xC3\xA9 ", 3},
    };
    for (size_t i = 0; i < N(v); i++) {
        char cell[64];
        size_t vl = strlen(v[i].value), n = (size_t)(v[i].chars * v[i].bpc);
        assert_true(vl <= n && n <= sizeof(cell));
        memset(cell, ' ', n);
        memcpy(cell, v[i].value, vl);
        fixture f;
        fixture_init(&f, NULL, 0);
        const var out = {FFBP_SQL_TEXT, 0, (int)n, v[i].cs, 0};
        fixture_cell(&f, &out, cell, n);
        const char *t;
        size_t len = 0;
        BIND_OK(&f, ffb_stmt_get_text(&f.s, 0, &t, &len));
        if (len != v[i].want)
            fail_msg("[%zu] charset %d: %zu bytes, expected %zu", i, v[i].cs,
                     len, v[i].want);
        assert_memory_equal(t, v[i].value, len);
        /* Something other than blanks beyond the characters (a server
           that sent more): left as it came. */
        cell[n - 1] = 'x';
        fixture_cell(&f, &out, cell, n);
        BIND_OK(&f, ffb_stmt_get_text(&f.s, 0, &t, &len));
        assert_int_equal(len, n);
        fixture_free(&f);
    }
}

/* ---- FLOAT and DOUBLE PRECISION as text -------------------------------------
 */

static void test_float_shortest_text(void **state) {
    (void)state;
    static const struct {
        float f;
        const char *text;
    } v[] = {
        {0.1f, "0.1"},
        {-0.1f, "-0.1"},
        {1.0f / 3.0f, "0.33333334"},
        {16777216.0f, "16777216"},
        {3e38f, "3e+38"},
        {FLT_MAX, "3.4028235e+38"},
        {FLT_MIN, "1.1754944e-38"},
        {1.40129846e-45f, "1e-45"},
        {2.8e-45f, "3e-45"},
        {-0.0f, "-0"},
        {2.5f, "2.5"},
        {123456.789f, "123456.79"},
        {1e-10f, "1e-10"},
    };
    for (size_t i = 0; i < N(v); i++) {
        fixture f;
        fixture_init(&f, NULL, 0);
        uint32_t u;
        memcpy(&u, &v[i].f, 4);
        uint8_t be[4] = {(uint8_t)(u >> 24), (uint8_t)(u >> 16),
                         (uint8_t)(u >> 8), (uint8_t)u};
        const var out = {FFBP_SQL_FLOAT, 0, 4, 0, 0};
        fixture_cell(&f, &out, be, 4);
        const char *t;
        size_t len = 0;
        BIND_OK(&f, ffb_stmt_get_text(&f.s, 0, &t, &len));
        char got[40];
        snprintf(got, sizeof(got), "%.*s", (int)len, t);
        if (strcmp(got, v[i].text) != 0)
            fail_msg("[%zu] %.9g reads as \"%s\", expected \"%s\"", i,
                     (double)v[i].f, got, v[i].text);
        /* It reads back as the same float. */
        assert_true(strtof(got, NULL) == v[i].f);
        assert_true(signbit(strtof(got, NULL)) == signbit(v[i].f));
        fixture_free(&f);
    }
}

/* A double bound to a text parameter is its shortest text too. */
static void test_double_into_text_shortest(void **state) {
    (void)state;
    const var in[] = {{FFBP_SQL_VARYING, 0, 80, 4, 0}};
    fixture f;
    fixture_init(&f, in, 1);
    BIND_OK(&f, ffb_stmt_bind_double(&f.s, 0, 0.1));
    assert_int_equal(f.params[0].len, 3);
    assert_memory_equal(f.params[0].data, "0.1", 3);
    BIND_OK(&f, ffb_stmt_bind_double(&f.s, 0, 0.1 + 0.2));
    assert_int_equal(f.params[0].len, 19);
    assert_memory_equal(f.params[0].data, "0.30000000000000004", 19);
    fixture_free(&f);
}

/* ---- text sent as text
 * -------------------------------------------------------- */

static void expect_text_item(const fixture *f, unsigned i, const char *s) {
    const ffb__param *pa = &f->params[i];
    size_t n = strlen(s);
    if (!pa->set || pa->item.blr != FFBP_BLR_VARYING2 || pa->len != n ||
        memcmp(pa->data, s, n) != 0 || pa->item.texttype != 0 ||
        pa->item.length != (n ? n : 1))
        fail_msg("parameter %u: \"%s\" is not a VARCHAR(%zu) of NONE (blr %d, "
                 "length %u, texttype %u)",
                 i + 1, s, n, pa->item.blr, (unsigned)pa->item.length,
                 (unsigned)pa->item.texttype);
}

static void test_text_for_the_server(void **state) {
    (void)state;
    enum { DATE, TIME, TS, INT, NUM, DBL, FLT, BOOL, NP };
    const var in[NP] = {
        [DATE] = {FFBP_SQL_TYPE_DATE, 0, 4, 0, 0},
        [TIME] = {FFBP_SQL_TYPE_TIME, 0, 4, 0, 0},
        [TS] = {FFBP_SQL_TIMESTAMP, 0, 8, 0, 0},
        [INT] = {FFBP_SQL_LONG, 0, 4, 0, 0},
        [NUM] = {FFBP_SQL_INT64, -2, 8, 0, 1},
        [DBL] = {FFBP_SQL_DOUBLE, 0, 8, 0, 0},
        [FLT] = {FFBP_SQL_FLOAT, 0, 4, 0, 0},
        [BOOL] = {FFBP_SQL_BOOLEAN, 0, 1, 0, 0},
    };
    static const struct {
        unsigned idx;
        const char *text;
    } srv[] = {
        {DATE, "29.02.2024"},
        {DATE, "yesterday"},
        {DATE, "1 JAN 2024"},
        {DATE, "2024-02-30"},
        {DATE, ""},
        {TIME, "now"},
        {TIME, "25:00"},
        {TS, "2024-02-29T10:00"},
        {TS, "today"},
        {INT, "0x10"},
        {INT, "abc"},
        {INT, "1,5"},
        {NUM, "--1"},
        {DBL, "NaN"},
        {DBL, "inf"},
        {DBL, "0x1p3"},
        {DBL, "1e400"},
        {DBL, "1e-300"},
        {DBL, "1e+300"},
        {DBL, "0e500"},
        {DBL, "1e290"},
        {DBL, "0.000000000000000000000000000000000000000000001"},
        {FLT, "3.5e38"},
        {FLT, "1e-40"},
        {BOOL, "yes"},
        {BOOL, "1"},
    };
    fixture f;
    fixture_init(&f, in, NP);
    for (size_t i = 0; i < N(srv); i++) {
        BIND_OK(&f, ffb_stmt_bind_text(&f.s, srv[i].idx, srv[i].text,
                                       strlen(srv[i].text)));
        expect_text_item(&f, srv[i].idx, srv[i].text);
    }
    /* What the client converts keeps the described type. */
    static const struct {
        unsigned idx;
        const char *text;
    } cli[] = {
        {DATE, " 2024-2-9 "}, {TIME, "13:45"}, {TS, "2024-02-29 13:45:30.1234"},
        {INT, " 12 "},        {INT, "1e3"},    {NUM, "-12.345"},
        {DBL, "1.5e3"},       {DBL, ".5"},     {DBL, "1e99"},
        {DBL, "0e99"},        {FLT, "3e38"},   {BOOL, " True "},
    };
    for (size_t i = 0; i < N(cli); i++) {
        BIND_OK(&f, ffb_stmt_bind_text(&f.s, cli[i].idx, cli[i].text,
                                       strlen(cli[i].text)));
        if (f.params[cli[i].idx].item.blr != f.in_items[cli[i].idx].blr)
            fail_msg("\"%s\" was not converted on the client", cli[i].text);
    }
    assert_int_equal(f.params[NUM].fixed[7], (uint8_t)(-1235 & 0xFF));
    /* Bytes for a type that is not text go as OCTETS text. */
    BIND_OK(&f, ffb_stmt_bind_bytes(&f.s, INT, "12", 2));
    assert_int_equal(f.params[INT].item.blr, FFBP_BLR_VARYING2);
    assert_int_equal(f.params[INT].item.texttype, 1);
    assert_int_equal(f.params[INT].len, 2);
    fixture_free(&f);
}

/* ---- client-side errors
 * --------------------------------------------------------- */

static void expect_codes(const fixture *f, const uint32_t *codes, size_t n,
                         const char *sqlstate, const char *piece) {
    const ffb_error *e = ffb_conn_error(f->conn);
    const char *m = ffb_error_message(e);
    assert_int_equal(ffb_error_code(e), FFB_E_INVAL);
    assert_int_equal(ffb_error_count(e), n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ffb_error_gds_at(e, i), codes[i]);
    assert_int_equal(ffb_error_gds(e), FFB_GDS_DSQL_ERROR);
    assert_int_equal(ffb_error_sqlcode(e), -303);
    assert_string_equal(ffb_error_arg(e, 1, 0), "-303");
    assert_string_equal(ffb_error_sqlstate(e), sqlstate);
    if (!strstr(m, piece))
        fail_msg("the message lacks \"%s\": %s", piece, m);
}

static void test_client_errors(void **state) {
    (void)state;
    const uint32_t range[] = {FFB_GDS_DSQL_ERROR, 335544436u,
                              FFB_GDS_ARITH_EXCEPT,
                              FFB_GDS_NUMERIC_OUT_OF_RANGE};
    const uint32_t trunc[] = {FFB_GDS_DSQL_ERROR, 335544436u,
                              FFB_GDS_ARITH_EXCEPT, FFB_GDS_STRING_TRUNCATION,
                              335545033u};
    const uint32_t cast[] = {FFB_GDS_DSQL_ERROR, 335544436u,
                             FFB_GDS_CONVERT_ERROR};
    const uint32_t bad[] = {FFB_GDS_DSQL_ERROR, 335544436u,
                            FFB_GDS_MALFORMED_STRING};
    const var in[] = {
        {FFBP_SQL_SHORT, 0, 2, 0, 0},  {FFBP_SQL_LONG, -2, 4, 0, 2},
        {FFBP_SQL_INT64, -4, 8, 0, 1}, {FFBP_SQL_VARYING, 0, 20, 4, 0},
        {FFBP_SQL_TEXT, 0, 4, 0, 0},   {FFBP_SQL_TYPE_DATE, 0, 4, 0, 0},
        {FFBP_SQL_FLOAT, 0, 4, 0, 0},  {FFBP_SQL_BOOLEAN, 0, 1, 0, 0},
    };
    fixture f;
    fixture_init(&f, in, N(in));
    assert_int_equal(ffb_stmt_bind_int64(&f.s, 0, 70000), FFB_E_INVAL);
    expect_codes(&f, range, N(range), "22003",
                 "parameter 1 (SMALLINT): 70000 is out of range (-32768 .. "
                 "32767)");
    assert_int_equal(ffb_stmt_bind_text(&f.s, 1, "21474836.475", 12),
                     FFB_E_INVAL);
    expect_codes(&f, range, N(range), "22003",
                 "parameter 2 (DECIMAL(9,2)): \"21474836.475\" is out of "
                 "range (-21474836.48 .. 21474836.47)");
    assert_int_equal(ffb_stmt_bind_numeric(&f.s, 2, INT64_MAX, 0), FFB_E_INVAL);
    expect_codes(&f, range, N(range), "22003",
                 "parameter 3 (NUMERIC(18,4)): 9223372036854775807 is out");
    assert_int_equal(ffb_stmt_bind_text(&f.s, 3, "123456", 6), FFB_E_INVAL);
    expect_codes(&f, trunc, N(trunc), "22001",
                 "parameter 4 (VARCHAR(5) CHARACTER SET UTF8): \"123456\" is 6 "
                 "characters long, longer than the 5");
    assert_string_equal(ffb_error_arg(ffb_conn_error(f.conn), 4, 0), "5");
    assert_string_equal(ffb_error_arg(ffb_conn_error(f.conn), 4, 1), "6");
    assert_int_equal(ffb_stmt_bind_text(&f.s, 4, "\xC3\xA9\xC3\xA9\xC3", 5),
                     FFB_E_INVAL);
    expect_codes(&f, trunc, N(trunc), "22001",
                 "(CHAR(4) CHARACTER SET NONE): \"\xC3\xA9\xC3\xA9\xC3\" is 5 "
                 "bytes long");
    assert_int_equal(ffb_stmt_bind_text(&f.s, 3, "a\xC3", 2), FFB_E_INVAL);
    expect_codes(&f, bad, N(bad), "42000", "not valid UTF-8");
    assert_int_equal(ffb_stmt_bind_bool(&f.s, 5, 1), FFB_E_INVAL);
    expect_codes(&f, cast, N(cast), "22018", "(DATE): cannot take a boolean");
    assert_string_equal(ffb_error_arg(ffb_conn_error(f.conn), 2, 0), "BOOLEAN");
    assert_int_equal(ffb_stmt_bind_int64(&f.s, 7, 5), FFB_E_INVAL);
    expect_codes(&f, cast, N(cast), "22018", "(BOOLEAN): cannot take a number");
    assert_string_equal(ffb_error_arg(ffb_conn_error(f.conn), 2, 0), "5");
    assert_int_equal(ffb_stmt_bind_double(&f.s, 6, 1e300), FFB_E_INVAL);
    expect_codes(&f, range, N(range), "22003",
                 "(FLOAT): 1e+300 is out of range");
    /* A long value is cut in the message. */
    char big[200];
    memset(big, '7', sizeof(big));
    assert_int_equal(ffb_stmt_bind_text(&f.s, 0, big, sizeof(big)),
                     FFB_E_INVAL);
    expect_codes(&f, range, N(range), "22003", "7777...\" is out of range");
    /* Nothing was bound by the failures. */
    for (size_t i = 0; i < N(in); i++)
        assert_false(f.params[i].set);
    fixture_free(&f);
}

/* Blanks beyond the length are dropped only as far as needed. */
static void test_blanks_kept_to_length(void **state) {
    (void)state;
    const var in[] = {{FFBP_SQL_VARYING, 0, 20, 4, 0},
                      {FFBP_SQL_VARYING, 0, 3, 0, 0},
                      {FFBP_SQL_VARYING, 0, 4, 1, 0}};
    fixture f;
    fixture_init(&f, in, N(in));
    BIND_OK(&f, ffb_stmt_bind_text(&f.s, 0, "abc      ", 9));
    assert_int_equal(f.params[0].len, 5);
    assert_memory_equal(f.params[0].data, "abc  ", 5);
    BIND_OK(&f, ffb_stmt_bind_text(&f.s, 0, "\xC3\xA9\xC3\xA9\xC3\xA9   ", 9));
    assert_int_equal(f.params[0].len, 8); /* 3 x 'é' + 2 blanks */
    BIND_OK(&f, ffb_stmt_bind_text(&f.s, 1, "ab   ", 5));
    assert_int_equal(f.params[1].len, 3);
    /* OCTETS pads with zero bytes: those are dropped, blanks are data. */
    BIND_OK(&f, ffb_stmt_bind_bytes(&f.s, 2, "ab\0\0\0\0", 6));
    assert_int_equal(f.params[2].len, 4);
    assert_int_equal(ffb_stmt_bind_bytes(&f.s, 2, "ab    ", 6), FFB_E_INVAL);
    assert_string_equal(ffb_error_sqlstate(ffb_conn_error(f.conn)), "22001");
    fixture_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mb_chars),
        cmocka_unit_test(test_char_cut_to_characters),
        cmocka_unit_test(test_float_shortest_text),
        cmocka_unit_test(test_double_into_text_shortest),
        cmocka_unit_test(test_text_for_the_server),
        cmocka_unit_test(test_client_errors),
        cmocka_unit_test(test_blanks_kept_to_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
