/*
 * Number text does not follow the locale: with LC_ALL (and so LC_NUMERIC)
 * set to de_DE, whose decimal separator is ',', binding "2.5" to a DOUBLE,
 * FLOAT, DECFLOAT or NUMERIC parameter works, "2,5" is not read as a number
 * (it goes to the server as text, which refuses it), and doubles
 * come out as text with '.', in the shortest form that reads back as the
 * same double. The caller's locale (global and per-thread) is left as it
 * was.
 *
 * The statements are built by hand (metadata, parameters and one row, as
 * lib/stmt.c would after a describe and a fetch), so no server is needed.
 *
 * Without the de_DE.UTF-8 locale the test is skipped (exit 77), unless
 * FFB_TEST_REQUIRE_LOCALE=1 (set by tests/run-all.sh, which generates the
 * locale): then it fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/fastfb.h"
#include "lib/internal.h"
#include "lib/types.h"

#define MAXV 8

static const char *const DE_NAMES[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE"};
static const char *de_name; /* the name that worked */

/* A prepared statement with parameters `in` and one fetched row of
   columns `out`, without a connection to a server. */
typedef struct fixture {
    ffb_conn *conn;
    ffb_stmt s;
    ffb__col in_cols[MAXV], out_cols[MAXV];
    ffbp_item in_items[MAXV], out_items[MAXV];
    ffb__param params[MAXV];
    ffb__row row;
    uint32_t off[MAXV], len[MAXV];
    uint8_t msg[512];
    size_t msg_len;
} fixture;

typedef struct var {
    int sqltype, scale, length, charset; /* charset: TEXT/VARYING only */
} var;

static void col_from(ffb__col *c, ffbp_item *it, const var *v) {
    memset(c, 0, sizeof(*c));
    c->sqltype = v->sqltype;
    c->scale = v->scale;
    c->length = v->length;
    c->subtype = v->sqltype == FFBP_SQL_VARYING ? v->charset : 0;
    c->charset = v->sqltype == FFBP_SQL_VARYING ? v->charset : -1;
    c->field = c->relation = c->owner = c->relation_alias = "";
    c->alias = "X";
    assert_int_equal(ffbp_item_from_sql(v->sqltype, c->subtype, v->scale,
                                        v->length, it),
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

/* The current row: column i of type out[i] holds value bytes vals[i]
   (wire form, lens[i] bytes). */
static void fixture_row(fixture *f, const var *out, size_t nout,
                        const uint8_t *const *vals, const size_t *lens) {
    f->s.out.n = nout;
    f->s.out.cols = f->out_cols;
    f->s.out.items = f->out_items;
    f->msg_len = 0;
    for (size_t i = 0; i < nout; i++) {
        col_from(&f->out_cols[i], &f->out_items[i], &out[i]);
        assert_true(f->msg_len + lens[i] <= sizeof(f->msg));
        memcpy(f->msg + f->msg_len, vals[i], lens[i]);
        f->off[i] = (uint32_t)f->msg_len;
        f->len[i] = (uint32_t)lens[i];
        f->msg_len += lens[i];
    }
    f->s.rows.data = f->msg;
    f->s.rows.len = f->msg_len;
    f->row.pos = 0;
    f->row.len = f->msg_len;
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

static uint64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

static void wr64(uint8_t *p, uint64_t v) {
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t dbits(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static double bound_double(const fixture *f, unsigned i) {
    uint64_t u = rd64(f->params[i].fixed);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

#define BIND_OK(f, expr)                                                       \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ != 0)                                                          \
            fail_msg("%s:%d: %s = %d: %s", __FILE__, __LINE__, #expr, rc_,     \
                     ffb_error_message(ffb_conn_error((f)->conn)));            \
    } while (0)

/* The locale is what main() set, and still has ',' as decimal point. */
static void expect_caller_locale(void) {
    assert_true(uselocale((locale_t)0) == LC_GLOBAL_LOCALE);
    const char *cur = setlocale(LC_NUMERIC, NULL);
    assert_non_null(cur);
    assert_string_equal(cur, de_name);
    char b[16];
    snprintf(b, sizeof(b), "%.1f", 2.5);
    assert_string_equal(b, "2,5");
}

/* ---- text to numbers -------------------------------------------------------- */

enum { P_DOUBLE, P_FLOAT, P_DEC16, P_DEC34, P_NUM9_2, P_NUM18_4, P_N };

static const var NUM_PARAMS[P_N] = {
    [P_DOUBLE] = {FFBP_SQL_DOUBLE, 0, 8, 0},
    [P_FLOAT] = {FFBP_SQL_FLOAT, 0, 4, 0},
    [P_DEC16] = {FFBP_SQL_DEC16, 0, 8, 0},
    [P_DEC34] = {FFBP_SQL_DEC34, 0, 16, 0},
    [P_NUM9_2] = {FFBP_SQL_LONG, -2, 4, 0},
    [P_NUM18_4] = {FFBP_SQL_INT64, -4, 8, 0},
};

static void test_bind_text_point(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, NUM_PARAMS, P_N);
    for (unsigned i = 0; i < P_N; i++)
        BIND_OK(&f, ffb_stmt_bind_text(&f.s, i, "2.5", 3));

    assert_true(bound_double(&f, P_DOUBLE) == 2.5);
    uint32_t fu = rd32(f.params[P_FLOAT].fixed);
    float fv;
    memcpy(&fv, &fu, 4);
    assert_true(fv == 2.5f);
    uint8_t d16[8], d34[16];
    assert_int_equal(ffb__dec64_parse("25E-1", 5, d16), 0);
    assert_int_equal(ffb__dec128_parse("25E-1", 5, d34), 0);
    assert_memory_equal(f.params[P_DEC16].fixed, d16, 8);
    assert_memory_equal(f.params[P_DEC34].fixed, d34, 16);
    assert_int_equal(rd32(f.params[P_NUM9_2].fixed), 250);
    assert_int_equal(rd64(f.params[P_NUM18_4].fixed), 25000);

    /* With exponent, sign and trailing blanks, as before. */
    BIND_OK(&f, ffb_stmt_bind_text(&f.s, P_DOUBLE, "-1.25e3 ", 8));
    assert_true(bound_double(&f, P_DOUBLE) == -1250.0);
    expect_caller_locale();
    fixture_free(&f);
}

/* "2,5" is not a number to the client in any locale: it is not converted
   with the locale's decimal comma but sent as text, for the server to
   refuse (Firebird reads '1,5' as a conversion error). */
static void expect_sent_as_text(const fixture *f, unsigned i, const char *s) {
    const ffb__param *pa = &f->params[i];
    if (!pa->set || pa->item.blr != FFBP_BLR_VARYING2 || pa->len != strlen(s) ||
        memcmp(pa->data, s, pa->len) != 0)
        fail_msg("parameter %u: \"%s\" was not sent as text (blr %d)", i + 1, s,
                 pa->item.blr);
}

static void test_bind_text_comma_not_a_number(void **state) {
    (void)state;
    fixture f;
    fixture_init(&f, NUM_PARAMS, P_N);
    for (unsigned i = 0; i < P_N; i++) {
        BIND_OK(&f, ffb_stmt_bind_text(&f.s, i, "2,5", 3));
        expect_sent_as_text(&f, i, "2,5");
    }
    BIND_OK(&f, ffb_stmt_bind_text(&f.s, P_DOUBLE, "1.234,5", 7));
    expect_sent_as_text(&f, P_DOUBLE, "1.234,5");
    expect_caller_locale();
    fixture_free(&f);
}

/* A double bound to a text or DECFLOAT parameter is formatted with '.'. */
static void test_bind_double_formats_point(void **state) {
    (void)state;
    const var in[] = {
        {FFBP_SQL_VARYING, 0, 40, 4 /* UTF8 */},
        {FFBP_SQL_DEC16, 0, 8, 0},
        {FFBP_SQL_DEC34, 0, 16, 0},
    };
    fixture f;
    fixture_init(&f, in, 3);
    BIND_OK(&f, ffb_stmt_bind_double(&f.s, 0, 2.5));
    assert_int_equal(f.params[0].len, 3);
    assert_memory_equal(f.params[0].data, "2.5", 3);

    BIND_OK(&f, ffb_stmt_bind_double(&f.s, 1, 2.5));
    uint8_t d16[8];
    assert_int_equal(ffb__dec64_parse("2.5", 3, d16), 0);
    assert_memory_equal(f.params[1].fixed, d16, 8);

    /* 0.1 as the 17 significant digits of the double nearest to it. */
    BIND_OK(&f, ffb_stmt_bind_double(&f.s, 2, 0.1));
    uint8_t d34[16];
    assert_int_equal(ffb__dec128_parse("0.10000000000000001", 19, d34), 0);
    assert_memory_equal(f.params[2].fixed, d34, 16);
    expect_caller_locale();
    fixture_free(&f);
}

/* ---- numbers to text ---------------------------------------------------------- */

static void test_get_text_point(void **state) {
    (void)state;
    const var out[] = {
        {FFBP_SQL_DOUBLE, 0, 8, 0},
        {FFBP_SQL_FLOAT, 0, 4, 0},
        {FFBP_SQL_DEC16, 0, 8, 0},
        {FFBP_SQL_DEC34, 0, 16, 0},
        {FFBP_SQL_DEC16, 0, 8, 0},
        {FFBP_SQL_DEC34, 0, 16, 0},
    };
    uint8_t dv[8], fv[4], d16[8], d34[16], snan[8], ninf[16];
    wr64(dv, dbits(2.5));
    float f25 = 2.5f;
    uint32_t fu;
    memcpy(&fu, &f25, 4);
    ffbp_be32_put(fv, fu);
    assert_int_equal(ffb__dec64_parse("2.5", 3, d16), 0);
    assert_int_equal(ffb__dec128_parse("-0.125", 6, d34), 0);
    assert_int_equal(ffb__dec64_parse("-sNaN", 5, snan), 0);
    assert_int_equal(ffb__dec128_parse("-Infinity", 9, ninf), 0);
    const uint8_t *vals[] = {dv, fv, d16, d34, snan, ninf};
    const size_t lens[] = {8, 4, 8, 16, 8, 16};
    fixture f;
    fixture_init(&f, NULL, 0);
    fixture_row(&f, out, 6, vals, lens);

    const char *t;
    size_t n;
    BIND_OK(&f, ffb_stmt_get_text(&f.s, 0, &t, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(t, "2.5", 3);
    BIND_OK(&f, ffb_stmt_get_text(&f.s, 1, &t, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(t, "2.5", 3);

    /* DECFLOAT read as a double goes through text. */
    double d = 0;
    BIND_OK(&f, ffb_stmt_get_double(&f.s, 2, &d));
    assert_true(d == 2.5);
    BIND_OK(&f, ffb_stmt_get_double(&f.s, 3, &d));
    assert_true(d == -0.125);
    /* A signalling NaN reads as NaN (strtod alone would give 0). */
    BIND_OK(&f, ffb_stmt_get_double(&f.s, 4, &d));
    assert_true(isnan(d));
    BIND_OK(&f, ffb_stmt_get_double(&f.s, 5, &d));
    assert_true(isinf(d) && d < 0);
    expect_caller_locale();
    fixture_free(&f);
}

/* 17 significant digits identify every double: text -> DOUBLE parameter ->
   the same bits; a DOUBLE column -> its shortest text -> the same bits. */
static void test_roundtrip_17_digits(void **state) {
    (void)state;
    static const struct {
        const char *text;
        double value;
        const char *shortest; /* what get_text gives */
        int server;           /* 1: beyond 1e290 / below 1e-290, the text
                                 goes to the server (lib/values.c) */
    } v[] = {
        {"0.10000000000000001", 0.1, "0.1", 0},
        {"0.33333333333333331", 1.0 / 3.0, "0.3333333333333333", 0},
        {"3.1415926535897931", 3.141592653589793, "3.141592653589793", 0},
        {"-2.7182818284590451", -2.718281828459045, "-2.718281828459045", 0},
        {"1.7976931348623157e+308", DBL_MAX, "1.7976931348623157e+308", 1},
        {"2.2250738585072014e-308", DBL_MIN, "2.2250738585072014e-308", 1},
        {"4.9406564584124654e-324", 4.9406564584124654e-324, "5e-324", 1},
        {"123456789012345680", 123456789012345678.0, "1.2345678901234568e+17",
         0},
        {"0.30000000000000004", 0.1 + 0.2, "0.30000000000000004", 0},
        {"1e+22", 1e22, "1e+22", 0},
    };
    const var in[] = {{FFBP_SQL_DOUBLE, 0, 8, 0}};
    const var out[] = {{FFBP_SQL_DOUBLE, 0, 8, 0}};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        fixture f;
        fixture_init(&f, in, 1);
        BIND_OK(&f, ffb_stmt_bind_text(&f.s, 0, v[i].text, strlen(v[i].text)));
        if (v[i].server)
            expect_sent_as_text(&f, 0, v[i].text);
        else if (dbits(bound_double(&f, 0)) != dbits(v[i].value))
            fail_msg("\"%s\" bound as %a, not %a", v[i].text,
                     bound_double(&f, 0), v[i].value);

        uint8_t dv[8];
        wr64(dv, dbits(v[i].value));
        const uint8_t *vals[] = {dv};
        const size_t lens[] = {8};
        fixture_row(&f, out, 1, vals, lens);
        const char *t;
        size_t n;
        BIND_OK(&f, ffb_stmt_get_text(&f.s, 0, &t, &n));
        char text[64];
        assert_true(n < sizeof(text));
        memcpy(text, t, n);
        text[n] = '\0';
        assert_string_equal(text, v[i].shortest);
        assert_null(strchr(text, ','));
        /* ... and that text binds back to the same double. */
        BIND_OK(&f, ffb_stmt_bind_text(&f.s, 0, text, n));
        if (v[i].server)
            expect_sent_as_text(&f, 0, text);
        else
            assert_true(dbits(bound_double(&f, 0)) == dbits(v[i].value));
        fixture_free(&f);
    }
    expect_caller_locale();
}

/* A per-thread locale set by the application is the one in force after
   each call. */
static void test_thread_locale_kept(void **state) {
    (void)state;
    locale_t mine = newlocale(LC_ALL_MASK, de_name, (locale_t)0);
    assert_non_null(mine);
    locale_t before = uselocale(mine);
    assert_true(before == LC_GLOBAL_LOCALE);

    const var in[] = {{FFBP_SQL_DOUBLE, 0, 8, 0}, {FFBP_SQL_VARYING, 0, 40, 4}};
    fixture f;
    fixture_init(&f, in, 2);
    BIND_OK(&f, ffb_stmt_bind_text(&f.s, 0, "2.5", 3));
    assert_true(uselocale((locale_t)0) == mine);
    BIND_OK(&f, ffb_stmt_bind_text(&f.s, 0, "2,5", 3));
    expect_sent_as_text(&f, 0, "2,5");
    assert_true(uselocale((locale_t)0) == mine);
    BIND_OK(&f, ffb_stmt_bind_double(&f.s, 1, -0.5));
    assert_memory_equal(f.params[1].data, "-0.5", 4);
    assert_true(uselocale((locale_t)0) == mine);
    char b[16];
    snprintf(b, sizeof(b), "%.1f", 2.5);
    assert_string_equal(b, "2,5");
    fixture_free(&f);

    uselocale(LC_GLOBAL_LOCALE);
    freelocale(mine);
    expect_caller_locale();
}

int main(void) {
    const char *req = getenv("FFB_TEST_REQUIRE_LOCALE");
    int required = req && strcmp(req, "1") == 0;
    for (size_t i = 0; i < sizeof(DE_NAMES) / sizeof(DE_NAMES[0]); i++) {
        const char *got = setlocale(LC_ALL, DE_NAMES[i]);
        if (got && strcmp(localeconv()->decimal_point, ",") == 0) {
            de_name = DE_NAMES[i];
            break;
        }
    }
    if (!de_name) {
        fprintf(stderr,
                "test_locale: the de_DE.UTF-8 locale is not available "
                "(localedef -i de_DE -f UTF-8 de_DE.UTF-8)%s\n",
                required ? "; FFB_TEST_REQUIRE_LOCALE=1: failing" : "; skipped");
        return required ? 1 : 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_text_point),
        cmocka_unit_test(test_bind_text_comma_not_a_number),
        cmocka_unit_test(test_bind_double_formats_point),
        cmocka_unit_test(test_get_text_point),
        cmocka_unit_test(test_roundtrip_17_digits),
        cmocka_unit_test(test_thread_locale_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
