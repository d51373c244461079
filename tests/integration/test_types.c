/*
 * Every Firebird 3-5 data type against real Firebird 3.0 and 4.0 servers:
 * each value is written once through a parameter and once as an SQL
 * literal, read back, and compared exactly (text, typed getters, and a
 * `WHERE col = ?` lookup with the value as parameter, which checks that
 * client-side conversion gives the very value the server stores).
 * The Firebird 4+ types (INT128, NUMERIC(38,x), DECFLOAT, time zones) run
 * on FB4 only. Also: NULL for every type, blob ids, client-side conversion
 * errors (nothing reaches the server) and getter conversions.
 *
 * Runs against the instances fb3 and fb4 of servers.env. Each type group
 * has its own table, named with the process id and dropped at the end.
 *
 * Cleanup: every connection, transaction and statement a test opens is
 * registered and released by the test's teardown, which cmocka runs even
 * when an assertion longjmps out of the test; the tables are dropped on a
 * fresh connection with a lock-timeout transaction, so a failed test can
 * neither leak a connection nor block the drop forever.
 */
#include <float.h>
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

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- targets and tables -------------------------------------------------- */

/* One table per type group; `min_version` 4 = Firebird 4+ types, `intl`
   = needs the server's fbintl character sets (WIN1252, ISO8859_1). */
typedef struct tspec {
    const char *key;
    const char *cols;
    int min_version;
    int intl;
} tspec;

enum {
    T_INT,
    T_NUM,
    T_BIG,
    T_FLT,
    T_DF,
    T_DT,
    T_TZ,
    T_STR,
    T_CS,
    T_BOOL,
    T_BLOB,
    T_COUNT
};

static const tspec specs[T_COUNT] = {
    [T_INT] = {"INT", "s smallint, i integer, b bigint", 3, 0},
    [T_NUM] = {"NUM",
               "n42 numeric(4,2), d42 decimal(4,2), n93 numeric(9,3), "
               "d93 decimal(9,3), n184 numeric(18,4), d184 decimal(18,4), "
               "n1818 numeric(18,18)",
               3, 0},
    [T_BIG] = {"BIG",
               "i128 int128, n192 numeric(19,2), n3810 numeric(38,10), "
               "d3810 decimal(38,10), n3838 numeric(38,38)",
               4, 0},
    [T_FLT] = {"FLT", "f float, d double precision", 3, 0},
    [T_DF] = {"DF", "d16 decfloat(16), d34 decfloat(34)", 4, 0},
    [T_DT] = {"DT", "d date, t time, ts timestamp", 3, 0},
    [T_TZ] = {"TZ", "t time with time zone, ts timestamp with time zone", 4, 0},
    [T_STR] = {"STR",
               "c char(5) character set utf8, v varchar(5) character set "
               "utf8, n varchar(10) character set none, nc char(4) "
               "character set none, o char(8) character set octets, vo "
               "varchar(8) character set octets",
               3, 0},
    [T_CS] = {"CS",
              "w varchar(5) character set win1252, wc char(3) character "
              "set win1252, l varchar(5) character set iso8859_1",
              3, 1},
    [T_BOOL] = {"BOOL", "b boolean", 3, 0},
    [T_BLOB] = {"BLOB",
                "bt blob sub_type text character set utf8, bb blob "
                "sub_type binary",
                3, 0},
};

typedef struct target {
    char name[16];
    char dsn[512];
    int version;
    int intl;           /* WIN1252 and ISO8859_1 usable */
    char intl_why[512]; /* why not */
    char table[T_COUNT][64];
    int created[T_COUNT];
} target;

static target targets[2];
static size_t ntargets;
static int next_id = 1; /* row ids, unique in the whole run */

static int table_active(const target *t, int k) {
    return t->version >= specs[k].min_version && (!specs[k].intl || t->intl);
}

/* ---- resources, released by the teardown of every test ------------------- */

static ffb_conn *res_conns[8];
static size_t res_nconns;
static ffb_tx *res_txs[32];
static size_t res_ntxs;
static ffb_stmt *res_stmts[256];
static size_t res_nstmts;

static int release_all(void **state) {
    (void)state;
    for (size_t i = 0; i < res_nstmts; i++)
        ffb_stmt_free(res_stmts[i]);
    for (size_t i = 0; i < res_ntxs; i++)
        ffb_tx_free(res_txs[i]); /* an active one is rolled back */
    for (size_t i = 0; i < res_nconns; i++) {
        ffb_conn_close(res_conns[i]); /* sends the queued rollbacks */
        ffb_conn_free(res_conns[i]);
    }
    res_nstmts = res_ntxs = res_nconns = 0;
    return 0;
}

/* `expr` must fail with `want`. */
#define FAILS(conn, expr, want)                                                \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ != (want))                                                     \
            fail_msg("%s:%d: %s = %d (%s), expected %s", __FILE__, __LINE__,   \
                     #expr, rc_, ffb_error_message(ffb_conn_error(conn)),      \
                     ffb_err_name(want));                                      \
    } while (0)

static ffb_conn *open_conn(const target *t, const char *charset) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = t->dsn;
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.charset = charset;
    o.io_timeout_ms = 60000;
    ffb_conn *c = NULL;
    assert_true(res_nconns < N_ELEMS(res_conns));
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    res_conns[res_nconns++] = c;
    OK(c, ffb_conn_connect(c));
    return c;
}

static ffb_tx *begin(ffb_conn *c) {
    ffb_tx *tx = NULL;
    assert_true(res_ntxs < N_ELEMS(res_txs));
    OK(c, ffb_tx_begin(c, NULL, &tx));
    res_txs[res_ntxs++] = tx;
    return tx;
}

static ffb_stmt *prep(ffb_conn *c, ffb_tx *tx, const char *fmt, ...) {
    char sql[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof(sql), fmt, ap);
    va_end(ap);
    ffb_stmt *s = NULL;
    assert_true(res_nstmts < N_ELEMS(res_stmts));
    OK(c, ffb_stmt_new(c, &s));
    res_stmts[res_nstmts++] = s;
    int rc = ffb_stmt_prepare(s, tx, sql, (size_t)-1);
    if (rc < 0)
        fail_msg("prepare \"%s\" = %d: %s", sql, rc,
                 ffb_error_message(ffb_conn_error(c)));
    return s;
}

static void exec_imm(ffb_conn *c, ffb_tx *tx, const char *fmt, ...) {
    char sql[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof(sql), fmt, ap);
    va_end(ap);
    int rc = ffb_conn_execute_immediate(c, tx, sql, (size_t)-1);
    if (rc < 0)
        fail_msg("\"%s\" = %d: %s", sql, rc,
                 ffb_error_message(ffb_conn_error(c)));
}

/* ---- comparing ----------------------------------------------------------- */

static void hexdump(char *out, size_t size, const char *p, size_t n) {
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && o + 4 < size; i++)
        o += (size_t)snprintf(out + o, size - o, "%02X ",
                              (unsigned)(unsigned char)p[i]);
}

static void expect_bytes(const char *what, const char *got, size_t glen,
                         const char *want, size_t wlen) {
    if (glen == wlen && memcmp(got, want, wlen) == 0)
        return;
    char g[400], w[400];
    hexdump(g, sizeof(g), got, glen);
    hexdump(w, sizeof(w), want, wlen);
    fail_msg("%s: got \"%.*s\" (%zu bytes: %s), expected \"%s\" (%zu bytes: "
             "%s)",
             what, (int)glen, got, glen, g, want, wlen, w);
}

/* The text of column `col` of the current row equals want[0..wlen). */
static void expect_text(ffb_conn *c, ffb_stmt *s, unsigned col,
                        const char *what, const char *want, size_t wlen) {
    const char *got;
    size_t glen;
    OK(c, ffb_stmt_get_text(s, col, &got, &glen));
    expect_bytes(what, got, glen, want, wlen);
}

static void expect_str(ffb_conn *c, ffb_stmt *s, unsigned col, const char *what,
                       const char *want) {
    expect_text(c, s, col, what, want, strlen(want));
}

static void expect_trimmed(ffb_conn *c, ffb_stmt *s, unsigned col,
                           const char *what, const char *want, size_t wlen) {
    const char *got;
    size_t glen;
    OK(c, ffb_stmt_get_text_trimmed(s, col, &got, &glen));
    expect_bytes(what, got, glen, want, wlen);
}

/* Execute `s` (a SELECT ... WHERE id = ?) for `id` and move to its row. */
static void fetch_id(ffb_conn *c, ffb_tx *tx, ffb_stmt *s, int id) {
    OK(c, ffb_stmt_bind_int64(s, 0, id));
    OK(c, ffb_stmt_execute(s, tx));
    int r = ffb_stmt_fetch(s);
    OK(c, r);
    if (r != 1)
        fail_msg("row %d not found", id);
}

static void expect_no_more_rows(ffb_conn *c, ffb_stmt *s) {
    int r = ffb_stmt_fetch(s);
    OK(c, r);
    assert_int_equal(r, 0);
}

/* The current error has `gds` among its codes and SQLSTATE `sqlstate`. */
static void expect_error(ffb_conn *c, int code, uint32_t gds,
                         const char *sqlstate, const char *what) {
    const ffb_error *e = ffb_conn_error(c);
    if (ffb_error_code(e) != code || !ffb_error_has(e, gds) ||
        strcmp(ffb_error_sqlstate(e), sqlstate) != 0)
        fail_msg("%s: got %s, SQLSTATE %s, %s; expected %s with gds %u and "
                 "SQLSTATE %s",
                 what, ffb_err_name(ffb_error_code(e)), ffb_error_sqlstate(e),
                 ffb_error_message(e), ffb_err_name(code), (unsigned)gds,
                 sqlstate);
}

/*
 * Text the client does not convert itself goes to the server as text in
 * the same execute: binding it costs nothing, the execute exactly the one
 * round trip it costs anyway, and the server refuses it with its own error
 * (`gds` among the codes, `sqlstate`). `s` is an INSERT whose other
 * parameters are bound; the row id is parameter 0.
 */
static void server_refuses(ffb_conn *c, ffb_tx *tx, ffb_stmt *s, unsigned idx,
                           const char *text, uint32_t gds,
                           const char *sqlstate) {
    char what[160];
    snprintf(what, sizeof(what), "parameter %u \"%s\"", idx + 1, text);
    OK(c, ffb_stmt_bind_int64(s, 0, next_id++));
    uint64_t b = it_rts(c);
    OK(c, ffb_stmt_bind_text(s, idx, text, (size_t)-1));
    assert_int_equal(it_rts(c) - b, 0);
    int rc = ffb_stmt_execute(s, tx);
    if (rc != FFB_E_SERVER)
        fail_msg("%s: execute = %d (%s), expected the server's refusal", what,
                 rc, ffb_error_message(ffb_conn_error(c)));
    assert_int_equal(it_rts(c) - b, 1);
    expect_error(c, FFB_E_SERVER, gds, sqlstate, what);
    /* The server's own text names the value. */
    if (!strstr(ffb_error_message(ffb_conn_error(c)), text) &&
        gds == FFB_GDS_CONVERT_ERROR)
        fail_msg("%s: the message does not show the value: %s", what,
                 ffb_error_message(ffb_conn_error(c)));
}

/* ---- the round trip of text values --------------------------------------- */

enum {
    TV_BYTES = 1, /* bind with ffb_stmt_bind_bytes */
    TV_NOEQ = 2   /* no `col = ?` lookup (NaN equals nothing) */
};

/* A value bound as text (`in`) and written as the SQL literal `lit` (none
   when NULL); both rows must read back as `out` (NULL: same as `in`).
   Lengths 0 mean strlen. */
typedef struct tv {
    const char *in;
    const char *lit;
    const char *out;
    size_t in_len, out_len;
    int flags;
} tv;

static void check_values(ffb_conn *c, ffb_tx *tx, const char *table,
                         const char *col, const tv *v, size_t n) {
    ffb_stmt *ins =
        prep(c, tx, "insert into %s (id, %s) values (?, ?)", table, col);
    ffb_stmt *sel = prep(c, tx, "select %s from %s where id = ?", col, table);
    ffb_stmt *eq =
        prep(c, tx, "select count(*) from %s where id in (?, ?) and %s = ?",
             table, col);
    for (size_t i = 0; i < n; i++) {
        const tv *x = &v[i];
        int id = next_id++, id2 = next_id++;
        size_t il = x->in_len ? x->in_len : strlen(x->in);
        const char *out = x->out ? x->out : x->in;
        size_t ol = x->out_len ? x->out_len : x->out ? strlen(x->out) : il;
        char what[160];

        OK(c, ffb_stmt_bind_int64(ins, 0, id));
        if (x->flags & TV_BYTES)
            OK(c, ffb_stmt_bind_bytes(ins, 1, x->in, il));
        else
            OK(c, ffb_stmt_bind_text(ins, 1, x->in, il));
        OK(c, ffb_stmt_execute(ins, tx));
        assert_int_equal(ffb_stmt_rows_affected(ins), 1);
        if (x->lit)
            exec_imm(c, tx, "insert into %s (id, %s) values (%d, %s)", table,
                     col, id2, x->lit);
        for (int k = 0; k < (x->lit ? 2 : 1); k++) {
            snprintf(what, sizeof(what), "%s.%s [%zu] \"%.*s\" as %s", table,
                     col, i, (int)il, x->in, k ? "literal" : "parameter");
            fetch_id(c, tx, sel, k ? id2 : id);
            assert_int_equal(ffb_stmt_is_null(sel, 0), 0);
            expect_text(c, sel, 0, what, out, ol);
            expect_no_more_rows(c, sel);
        }
        if (x->flags & TV_NOEQ)
            continue;
        /* The value as a parameter finds both rows. */
        OK(c, ffb_stmt_bind_int64(eq, 0, id));
        OK(c, ffb_stmt_bind_int64(eq, 1, id2));
        if (x->flags & TV_BYTES)
            OK(c, ffb_stmt_bind_bytes(eq, 2, x->in, il));
        else
            OK(c, ffb_stmt_bind_text(eq, 2, x->in, il));
        OK(c, ffb_stmt_execute(eq, tx));
        assert_int_equal(ffb_stmt_fetch(eq), 1);
        int64_t cnt = -1;
        OK(c, ffb_stmt_get_int64(eq, 0, &cnt));
        if (cnt != (x->lit ? 2 : 1))
            fail_msg("%s.%s [%zu] \"%.*s\": `%s = ?` found %lld rows, "
                     "expected %d",
                     table, col, i, (int)il, x->in, col, (long long)cnt,
                     x->lit ? 2 : 1);
        expect_no_more_rows(c, eq);
    }
}

/* Table entries: V(in, literal), VO(in, literal, out), VNOEQ(in, literal)
   and VB(bytes, literal, out, in_len, out_len). */
#define V(in_, lit_)                                                           \
    { .in = (in_), .lit = (lit_) }
#define VO(in_, lit_, out_)                                                    \
    { .in = (in_), .lit = (lit_), .out = (out_) }
#define VNOEQ(in_, lit_)                                                       \
    { .in = (in_), .lit = (lit_), .flags = TV_NOEQ }
#define VB(in_, lit_, out_, il_, ol_)                                          \
    {                                                                          \
        .in = (in_), .lit = (lit_), .out = (out_), .in_len = (il_),            \
        .out_len = (ol_), .flags = TV_BYTES                                    \
    }

#define CHECK(c, tx, t, k, col, ...)                                           \
    do {                                                                       \
        static const tv vals_[] = {__VA_ARGS__};                               \
        check_values(c, tx, (t)->table[k], col, vals_, N_ELEMS(vals_));        \
    } while (0)

/* Insert one row: id plus the columns in `cols` bound by `bind`. */
typedef void (*binder)(ffb_conn *c, ffb_stmt *s, void *data);

static int insert_row(ffb_conn *c, ffb_tx *tx, const char *table,
                      const char *cols, int nparams, binder bind, void *data) {
    char qs[128] = "?";
    for (int i = 0; i < nparams; i++)
        strcat(qs, ", ?");
    ffb_stmt *s =
        prep(c, tx, "insert into %s (id, %s) values (%s)", table, cols, qs);
    int id = next_id++;
    OK(c, ffb_stmt_bind_int64(s, 0, id));
    bind(c, s, data);
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_rows_affected(s), 1);
    return id;
}

/* The Firebird 4+ types do not exist on 3.0: check that the server says so
   with a clean error (and the connection goes on), and return 1. */
static int fb3_refuses(const target *t, const char *type) {
    if (t->version >= 4)
        return 0;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx;
    assert_int_equal(ffb_tx_begin(c, NULL, &tx), 0);
    ffb_stmt *s;
    assert_int_equal(ffb_stmt_new(c, &s), 0);
    char sql[160];
    snprintf(sql, sizeof(sql), "select cast(null as %s) from rdb$database",
             type);
    assert_int_equal(ffb_stmt_prepare(s, tx, sql, (size_t)-1), FFB_E_SERVER);
    assert_int_equal(ffb_conn_ping(c), 0);
    printf("# %s: %s refused by Firebird %d as expected\n", t->name, type,
           t->version);
    return 1;
}

/* ---- integers ------------------------------------------------------------ */

static void bind_int_min(ffb_conn *c, ffb_stmt *s, void *d) {
    (void)d;
    OK(c, ffb_stmt_bind_int64(s, 1, INT16_MIN));
    OK(c, ffb_stmt_bind_int64(s, 2, INT32_MIN));
    OK(c, ffb_stmt_bind_int64(s, 3, INT64_MIN));
}

static void bind_int_max(ffb_conn *c, ffb_stmt *s, void *d) {
    (void)d;
    OK(c, ffb_stmt_bind_int64(s, 1, INT16_MAX));
    OK(c, ffb_stmt_bind_int64(s, 2, INT32_MAX));
    OK(c, ffb_stmt_bind_int64(s, 3, INT64_MAX));
}

/* Exact numbers with a scale, and doubles, rounded half away from zero. */
static void bind_int_scaled(ffb_conn *c, ffb_stmt *s, void *d) {
    (void)d;
    OK(c, ffb_stmt_bind_numeric(s, 1, 15, -1));  /* 1.5 -> 2 */
    OK(c, ffb_stmt_bind_numeric(s, 2, -25, -1)); /* -2.5 -> -3 */
    OK(c, ffb_stmt_bind_numeric(s, 3, 123, 2));  /* 12300 */
}

static void bind_int_double(ffb_conn *c, ffb_stmt *s, void *d) {
    (void)d;
    OK(c, ffb_stmt_bind_double(s, 1, 2.5));
    OK(c, ffb_stmt_bind_double(s, 2, -1.5));
    OK(c, ffb_stmt_bind_double(s, 3, 9007199254740992.0)); /* 2^53 */
}

static void expect_ints(ffb_conn *c, ffb_tx *tx, ffb_stmt *sel, int id,
                        int64_t s, int64_t i, int64_t b) {
    const int64_t want[3] = {s, i, b};
    fetch_id(c, tx, sel, id);
    for (unsigned k = 0; k < 3; k++) {
        int64_t v = 0, nv = 0;
        int scale = 99;
        char txt[32];
        OK(c, ffb_stmt_get_int64(sel, k, &v));
        assert_int_equal(v, want[k]);
        OK(c, ffb_stmt_get_numeric(sel, k, &nv, &scale));
        assert_int_equal(nv, want[k]);
        assert_int_equal(scale, 0);
        snprintf(txt, sizeof(txt), "%lld", (long long)want[k]);
        expect_str(c, sel, k, "integer as text", txt);
    }
    expect_no_more_rows(c, sel);
}

static void test_integers(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_INT];

    CHECK(c, tx, t, T_INT, "s", V("-32768", "-32768"), V("32767", "32767"),
          V("0", "0"), V("-1", "-1"), VO(" 42 ", "42", "42"),
          VO("1e3", "1e3", "1000"), VO("12.5", "12.5", "13"),
          VO("-12.5", "-12.5", "-13"));
    CHECK(c, tx, t, T_INT, "i", V("-2147483648", "-2147483648"),
          V("2147483647", "2147483647"), VO("+7", "7", "7"));
    CHECK(c, tx, t, T_INT, "b",
          V("-9223372036854775808", "-9223372036854775808"),
          V("9223372036854775807", "9223372036854775807"),
          V("1234567890123456789", "1234567890123456789"));

    ffb_stmt *sel = prep(c, tx, "select s, i, b from %s where id = ?", T);
    int id = insert_row(c, tx, T, "s, i, b", 3, bind_int_min, NULL);
    expect_ints(c, tx, sel, id, INT16_MIN, INT32_MIN, INT64_MIN);
    id = insert_row(c, tx, T, "s, i, b", 3, bind_int_max, NULL);
    expect_ints(c, tx, sel, id, INT16_MAX, INT32_MAX, INT64_MAX);
    id = insert_row(c, tx, T, "s, i, b", 3, bind_int_scaled, NULL);
    expect_ints(c, tx, sel, id, 2, -3, 12300);
    id = insert_row(c, tx, T, "s, i, b", 3, bind_int_double, NULL);
    expect_ints(c, tx, sel, id, 3, -2, 9007199254740992LL);

    /* The same edges as literals. */
    id = next_id++;
    exec_imm(c, tx,
             "insert into %s (id, s, i, b) values (%d, -32768, -2147483648, "
             "-9223372036854775808)",
             T, id);
    expect_ints(c, tx, sel, id, INT16_MIN, INT32_MIN, INT64_MIN);
    double d;
    fetch_id(c, tx, sel, id);
    OK(c, ffb_stmt_get_double(sel, 2, &d));
    assert_true(d == -9223372036854775808.0);
}

/* ---- NUMERIC / DECIMAL up to 18 digits ----------------------------------- */

typedef struct numv {
    int64_t v;
    int scale;
} numv;

static void bind_numerics(ffb_conn *c, ffb_stmt *s, void *d) {
    const numv *n = d;
    for (unsigned k = 0; k < 7; k++)
        OK(c, ffb_stmt_bind_numeric(s, k + 1, n[k].v, n[k].scale));
}

static void expect_numeric(ffb_conn *c, ffb_stmt *s, unsigned col, int64_t v,
                           int scale, const char *text) {
    int64_t got = 0;
    int sc = 99;
    OK(c, ffb_stmt_get_numeric(s, col, &got, &sc));
    if (got != v || sc != scale)
        fail_msg("column %u: got %lld scale %d, expected %lld scale %d", col,
                 (long long)got, sc, (long long)v, scale);
    expect_str(c, s, col, "numeric as text", text);
}

static void test_numeric(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_NUM];

    /* NUMERIC(4,2) is stored in a SMALLINT: the storage bounds it, not
       the precision. Excess digits round half away from zero, exactly as
       the server rounds the same literal. */
    CHECK(c, tx, t, T_NUM, "n42", V("99.99", "99.99"), V("-99.99", "-99.99"),
          V("327.67", "327.67"), V("-327.68", "-327.68"), V("0.01", "0.01"),
          V("-0.01", "-0.01"), VO("0", "0", "0.00"), VO("5", "5", "5.00"),
          VO("1.235", "1.235", "1.24"), VO("-1.235", "-1.235", "-1.24"),
          VO("1.234", "1.234", "1.23"));
    CHECK(c, tx, t, T_NUM, "d42", V("-12.34", "-12.34"), V("99.99", "99.99"),
          V("21474836.47", "21474836.47"), V("-21474836.48", "-21474836.48"));
    CHECK(c, tx, t, T_NUM, "n93", V("123456.789", "123456.789"),
          V("999999.999", "999999.999"), V("-999999.999", "-999999.999"),
          V("2147483.647", "2147483.647"), V("-2147483.648", "-2147483.648"),
          V("0.001", "0.001"));
    CHECK(c, tx, t, T_NUM, "d93", V("-123456.789", "-123456.789"),
          VO("0.5", "0.5", "0.500"));
    CHECK(c, tx, t, T_NUM, "n184",
          V("12345678901234.5678", "12345678901234.5678"),
          V("99999999999999.9999", "99999999999999.9999"),
          V("922337203685477.5807", "922337203685477.5807"),
          V("-922337203685477.5808", "-922337203685477.5808"),
          V("0.0001", "0.0001"), VO("1.23455", "1.23455", "1.2346"));
    CHECK(c, tx, t, T_NUM, "d184", VO("-1.5", "-1.5", "-1.5000"),
          V("-99999999999999.9999", "-99999999999999.9999"));
    CHECK(c, tx, t, T_NUM, "n1818",
          V("0.999999999999999999", "0.999999999999999999"),
          V("-0.999999999999999999", "-0.999999999999999999"),
          V("9.223372036854775807", "9.223372036854775807"),
          V("-9.223372036854775808", "-9.223372036854775808"),
          V("0.000000000000000001", "0.000000000000000001"),
          VO("0", "0", "0.000000000000000000"));

    /* Integer + scale in and out, never through floating point. */
    ffb_stmt *sel = prep(c, tx,
                         "select n42, d42, n93, d93, n184, d184, n1818 from "
                         "%s where id = ?",
                         T);
    const char *cols = "n42, d42, n93, d93, n184, d184, n1818";
    numv a[7] = {{32767, -2},         {-2147483648LL, -2}, {2147483647, -3},
                 {-2147483648LL, -3}, {INT64_MAX, -4},     {INT64_MIN, -4},
                 {INT64_MAX, -18}};
    int id = insert_row(c, tx, T, cols, 7, bind_numerics, a);
    fetch_id(c, tx, sel, id);
    expect_numeric(c, sel, 0, 32767, -2, "327.67");
    expect_numeric(c, sel, 1, -2147483648LL, -2, "-21474836.48");
    expect_numeric(c, sel, 2, 2147483647, -3, "2147483.647");
    expect_numeric(c, sel, 3, -2147483648LL, -3, "-2147483.648");
    expect_numeric(c, sel, 4, INT64_MAX, -4, "922337203685477.5807");
    expect_numeric(c, sel, 5, INT64_MIN, -4, "-922337203685477.5808");
    expect_numeric(c, sel, 6, INT64_MAX, -18, "9.223372036854775807");
    /* Other scales are rescaled exactly (rounding half away from zero). */
    numv b[7] = {{5, 0},    {12345, -3}, {-12345, -4},    {1, 2},
                 {-15, -5}, {7, 0},      {INT64_MIN, -18}};
    id = insert_row(c, tx, T, cols, 7, bind_numerics, b);
    fetch_id(c, tx, sel, id);
    expect_numeric(c, sel, 0, 500, -2, "5.00");
    expect_numeric(c, sel, 1, 1235, -2, "12.35");
    expect_numeric(c, sel, 2, -1235, -3, "-1.235"); /* -1.2345 */
    expect_numeric(c, sel, 3, 100000, -3, "100.000");
    expect_numeric(c, sel, 4, -2, -4, "-0.0002"); /* -0.00015 */
    expect_numeric(c, sel, 5, 70000, -4, "7.0000");
    expect_numeric(c, sel, 6, INT64_MIN, -18, "-9.223372036854775808");
    /* Too large for the storage type: refused on the client. */
    ffb_stmt *ins = prep(c, tx, "insert into %s (id, n42) values (?, ?)", T);
    FAILS(c, ffb_stmt_bind_numeric(ins, 1, 32768, -2), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_text(ins, 1, "327.68", (size_t)-1), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_numeric(ins, 1, 1, 3), FFB_E_INVAL); /* 1000 */

    /* Getters: exact conversions only. */
    id = next_id++;
    exec_imm(c, tx, "insert into %s (id, n42, n184) values (%d, 1.50, 2.00)", T,
             id);
    ffb_stmt *g = prep(c, tx, "select n42, n184 from %s where id = ?", T);
    fetch_id(c, tx, g, id);
    int64_t v = 0;
    FAILS(c, ffb_stmt_get_int64(g, 0, &v), FFB_E_INVAL); /* 1.50 */
    OK(c, ffb_stmt_get_int64(g, 1, &v));                 /* 2.0000 */
    assert_int_equal(v, 2);
    double d = 0;
    OK(c, ffb_stmt_get_double(g, 0, &d));
    assert_true(d == 1.5);
    expect_numeric(c, g, 0, 150, -2, "1.50");
    expect_numeric(c, g, 1, 20000, -4, "2.0000");
}

/* ---- INT128 and NUMERIC(19..38) (Firebird 4+) ---------------------------- */

#define I128_MAX "170141183460469231731687303715884105727"
#define I128_MIN "-170141183460469231731687303715884105728"

static void bind_big(ffb_conn *c, ffb_stmt *s, void *d) {
    (void)d;
    OK(c, ffb_stmt_bind_int64(s, 1, INT64_MIN));
    OK(c, ffb_stmt_bind_numeric(s, 2, INT64_MAX, -2));
    OK(c, ffb_stmt_bind_numeric(s, 3, INT64_MIN, -10));
    OK(c, ffb_stmt_bind_double(s, 4, 2.5));
    OK(c, ffb_stmt_bind_numeric(s, 5, -1, -38));
}

static void test_int128(void **state) {
    target *t = *state;
    if (fb3_refuses(t, "INT128"))
        return;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_BIG];

    CHECK(c, tx, t, T_BIG, "i128", V(I128_MAX, I128_MAX), V(I128_MIN, I128_MIN),
          V("0", "0"), V("-1", "-1"),
          V("12345678901234567890123456789", "12345678901234567890123456789"),
          V("-9223372036854775809", "-9223372036854775809"));
    /* Firebird 4.0.5 refuses the scaled literal of -2^127
       (-1701411834604692317316873037158841057.28: "cannot convert the
       string"), while it takes the unscaled one: those go in as text
       literals, which the server converts exactly. */
    CHECK(c, tx, t, T_BIG, "n192",
          V("99999999999999999.99", "99999999999999999.99"),
          V("-99999999999999999.99", "-99999999999999999.99"),
          V("12.34", "12.34"),
          V("1701411834604692317316873037158841057.27",
            "1701411834604692317316873037158841057.27"),
          V("-1701411834604692317316873037158841057.28",
            "'-1701411834604692317316873037158841057.28'"));
    CHECK(c, tx, t, T_BIG, "n3810",
          V("9999999999999999999999999999.9999999999",
            "9999999999999999999999999999.9999999999"),
          V("-9999999999999999999999999999.9999999999",
            "-9999999999999999999999999999.9999999999"),
          V("1234567890123456789012345678.0123456789",
            "1234567890123456789012345678.0123456789"),
          V("17014118346046923173168730371.5884105727",
            "17014118346046923173168730371.5884105727"),
          V("-17014118346046923173168730371.5884105728",
            "'-17014118346046923173168730371.5884105728'"),
          V("0.0000000001", "0.0000000001"),
          VO("-0.00000000005", "-0.00000000005", "-0.0000000001"));
    CHECK(c, tx, t, T_BIG, "d3810", VO("-1.5", "-1.5", "-1.5000000000"));
    CHECK(c, tx, t, T_BIG, "n3838",
          V("0.99999999999999999999999999999999999999",
            "0.99999999999999999999999999999999999999"),
          V("-0.99999999999999999999999999999999999999",
            "-0.99999999999999999999999999999999999999"),
          V("1.70141183460469231731687303715884105727",
            "1.70141183460469231731687303715884105727"),
          V("-1.70141183460469231731687303715884105728",
            "'-1.70141183460469231731687303715884105728'"),
          V("0.00000000000000000000000000000000000001",
            "0.00000000000000000000000000000000000001"));

    ffb_stmt *sel = prep(c, tx,
                         "select i128, n192, n3810, d3810, n3838 from %s "
                         "where id = ?",
                         T);
    int id = insert_row(c, tx, T, "i128, n192, n3810, d3810, n3838", 5,
                        bind_big, NULL);
    fetch_id(c, tx, sel, id);
    expect_numeric(c, sel, 0, INT64_MIN, 0, "-9223372036854775808");
    expect_numeric(c, sel, 1, INT64_MAX, -2, "92233720368547758.07");
    expect_numeric(c, sel, 2, INT64_MIN, -10, "-922337203.6854775808");
    expect_str(c, sel, 3, "DECIMAL(38,10) from 2.5", "2.5000000000");
    /* -1E-38: NUMERIC(38,38) reads as -1 at scale -38. */
    expect_numeric(c, sel, 4, -1, -38,
                   "-0.00000000000000000000000000000000000001");

    /* Values beyond 64 bits: text only. */
    id = next_id++;
    exec_imm(c, tx, "insert into %s (id, i128, n3810) values (%d, %s, 12.5)", T,
             id, I128_MAX);
    fetch_id(c, tx, sel, id);
    int64_t v;
    int scale;
    FAILS(c, ffb_stmt_get_numeric(sel, 0, &v, &scale), FFB_E_INVAL);
    FAILS(c, ffb_stmt_get_int64(sel, 0, &v), FFB_E_INVAL);
    expect_numeric(c, sel, 2, 125000000000LL, -10, "12.5000000000");
    ffb_stmt *ins = prep(c, tx, "insert into %s (id, i128) values (?, ?)", T);
    FAILS(c,
          ffb_stmt_bind_text(ins, 1, "170141183460469231731687303715884105728",
                             (size_t)-1),
          FFB_E_INVAL);
    FAILS(c,
          ffb_stmt_bind_text(ins, 1, "-170141183460469231731687303715884105729",
                             (size_t)-1),
          FFB_E_INVAL);
}

/* ---- FLOAT, DOUBLE PRECISION --------------------------------------------- */

typedef struct dbl2 {
    double f, d;
} dbl2;

static void bind_doubles(ffb_conn *c, ffb_stmt *s, void *data) {
    const dbl2 *x = data;
    OK(c, ffb_stmt_bind_double(s, 1, x->f));
    OK(c, ffb_stmt_bind_double(s, 2, x->d));
}

static void test_float(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_FLT];

    /* FLOAT holds binary32: -0.1 reads back as the float nearest -0.1,
       printed as the shortest text that reads back as that float ("-0.1",
       where 9 digits would say -0.100000001). 1e-40 is below FLT_MIN: the
       client sends it as text and the server makes it a subnormal, which
       reads as "1e-40" again. */
    CHECK(c, tx, t, T_FLT, "f", V("1.5", "1.5"), V("-0.1", "-0.1"), V("0", "0"),
          V("-2.25", "-2.25"), VO("3e38", "3e38", "3e+38"),
          VO("0.3", "0.3", "0.3"), VO("16777217", "16777217", "16777216"),
          V("1e-40", "1e-40"));
    /* DOUBLE: the shortest text that reads back as the same double. */
    CHECK(c, tx, t, T_FLT, "d", VO("1e300", "1e300", "1e+300"),
          VO("-0.1", "-0.1", "-0.1"), V("1.5", "1.5"), V("-2.25", "-2.25"),
          VO("0.1", "0.1e0", "0.1"),
          VO("1.7976931348623157e308", NULL, "1.7976931348623157e+308"),
          VO("123456789012345678", NULL, "1.2345678901234568e+17"));
    /* What the server refuses as text for a double, so the client sends it
       for the server to refuse (Firebird 3.0.11 and 4.0.5). */
    {
        ffb_stmt *ins =
            prep(c, tx, "insert into %s (id, f, d) values (?, ?, ?)", T);
        OK(c, ffb_stmt_bind_double(ins, 1, 1));
        static const char *const cast[] = {"NaN", "inf", "0x1p3",
                                           "1,5", "--1", "1e"};
        for (size_t i = 0; i < N_ELEMS(cast); i++)
            server_refuses(c, tx, ins, 2, cast[i], FFB_GDS_CONVERT_ERROR,
                           "22018");
        static const char *const range[] = {"1e400", "1e-400", "0e500",
                                            "4.9406564584124654e-324",
                                            "2.2250738585072014e-308"};
        for (size_t i = 0; i < N_ELEMS(range); i++)
            server_refuses(c, tx, ins, 2, range[i],
                           FFB_GDS_NUMERIC_OUT_OF_RANGE, "22003");
        OK(c, ffb_stmt_bind_double(ins, 2, 1));
        server_refuses(c, tx, ins, 1, "3.5e38", FFB_GDS_NUMERIC_OUT_OF_RANGE,
                       "22003");
        /* Above FLT_MAX though C would round it to FLT_MAX. */
        server_refuses(c, tx, ins, 1, "3.4028235e38",
                       FFB_GDS_NUMERIC_OUT_OF_RANGE, "22003");
    }

    ffb_stmt *sel = prep(c, tx, "select f, d from %s where id = ?", T);
    static const dbl2 vals[] = {
        {1.5, 1e300},
        {-0.1, -0.1},
        {FLT_MAX, DBL_MAX},
        {FLT_MIN, DBL_MIN},
        {-0.0, 4.9406564584124654e-324},
    };
    for (size_t i = 0; i < N_ELEMS(vals); i++) {
        int id =
            insert_row(c, tx, T, "f, d", 2, bind_doubles, (void *)&vals[i]);
        fetch_id(c, tx, sel, id);
        double f = 0, d = 0;
        OK(c, ffb_stmt_get_double(sel, 0, &f));
        OK(c, ffb_stmt_get_double(sel, 1, &d));
        if (f != (double)(float)vals[i].f || d != vals[i].d)
            fail_msg("[%zu] got %.17g / %.17g, expected %.17g / %.17g", i, f, d,
                     (double)(float)vals[i].f, vals[i].d);
        int64_t iv;
        FAILS(c, ffb_stmt_get_int64(sel, 1, &iv), FFB_E_INVAL);
    }
    /* Exact numbers into floating columns. */
    ffb_stmt *ins =
        prep(c, tx, "insert into %s (id, f, d) values (?, ?, ?)", T);
    int id = next_id++;
    OK(c, ffb_stmt_bind_int64(ins, 0, id));
    OK(c, ffb_stmt_bind_int64(ins, 1, 3));
    OK(c, ffb_stmt_bind_numeric(ins, 2, -15, -1));
    OK(c, ffb_stmt_execute(ins, tx));
    fetch_id(c, tx, sel, id);
    expect_str(c, sel, 0, "FLOAT from 3", "3");
    expect_str(c, sel, 1, "DOUBLE from -1.5", "-1.5");
}

/* ---- DECFLOAT (Firebird 4+) ---------------------------------------------- */

static void test_decfloat(void **state) {
    target *t = *state;
    if (fb3_refuses(t, "DECFLOAT(16)"))
        return;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_DF];

    /* Lossless as text, in the server's own notation. */
    CHECK(c, tx, t, T_DF, "d16", V("1E+300", "'1E+300'"), V("-1.5", "'-1.5'"),
          VNOEQ("NaN", "'NaN'"), V("Infinity", "'Infinity'"),
          V("-Infinity", "'-Infinity'"), VO("inf", "'inf'", "Infinity"),
          V("1.000", "'1.000'"), V("-0", "'-0'"),
          V("1234567890123456", "'1234567890123456'"),
          V("9.999999999999999E+384", "'9.999999999999999E+384'"),
          V("1E-398", "'1E-398'"), V("0.000001", "'0.000001'"),
          V("1E-7", "'0.0000001'"), VO("12.5E+2", "'12.5E+2'", "1.25E+3"));
    CHECK(c, tx, t, T_DF, "d34",
          V("1234567890123456789012345678901234",
            "'1234567890123456789012345678901234'"),
          V("-1.234567890123456789012345678901234E+6144",
            "'-1.234567890123456789012345678901234E+6144'"),
          V("1E-6176", "'1E-6176'"), VNOEQ("NaN", "'NaN'"),
          V("-Infinity", "'-Infinity'"), V("1E+300", "'1E+300'"),
          V("-1.5", "'-1.5'"), V("0.1", "0.1"));

    ffb_stmt *ins =
        prep(c, tx, "insert into %s (id, d16, d34) values (?, ?, ?)", T);
    ffb_stmt *sel = prep(c, tx, "select d16, d34 from %s where id = ?", T);
    int id = next_id++;
    OK(c, ffb_stmt_bind_int64(ins, 0, id));
    OK(c, ffb_stmt_bind_numeric(ins, 1, 12345, -2));
    OK(c, ffb_stmt_bind_int64(ins, 2, INT64_MIN));
    OK(c, ffb_stmt_execute(ins, tx));
    fetch_id(c, tx, sel, id);
    expect_str(c, sel, 0, "DECFLOAT(16) from 12345 scale -2", "123.45");
    expect_str(c, sel, 1, "DECFLOAT(34) from INT64_MIN",
               "-9223372036854775808");
    id = next_id++;
    OK(c, ffb_stmt_bind_int64(ins, 0, id));
    OK(c, ffb_stmt_bind_int64(ins, 1, INT64_MIN)); /* 19 digits into 16 */
    OK(c, ffb_stmt_bind_double(ins, 2, -1.5));
    OK(c, ffb_stmt_execute(ins, tx));
    fetch_id(c, tx, sel, id);
    expect_str(c, sel, 0, "DECFLOAT(16) from INT64_MIN",
               "-9.223372036854776E+18");
    double d = 0;
    OK(c, ffb_stmt_get_double(sel, 1, &d));
    assert_true(d == -1.5);
    /* A double goes in as the server converts one (0.1 -> 16 digits). */
    id = next_id++;
    OK(c, ffb_stmt_bind_int64(ins, 0, id));
    OK(c, ffb_stmt_bind_double(ins, 1, 0.1));
    OK(c, ffb_stmt_bind_null(ins, 2));
    OK(c, ffb_stmt_execute(ins, tx));
    {
        ffb_stmt *srv = prep(c, tx,
                             "select d16, cast(cast(0.1e0 as double precision) "
                             "as decfloat(16)) from %s where id = ?",
                             T);
        fetch_id(c, tx, srv, id);
        expect_str(c, srv, 0, "DECFLOAT(16) from double 0.1",
                   "0.1000000000000000");
        expect_str(c, srv, 1, "server's DECFLOAT(16) from double 0.1",
                   "0.1000000000000000");
    }
    /* Beyond the range, or not a number: text the client cannot encode
       goes to the server, which refuses it (decfloat_overflow, or
       decfloat_invalid_operation + convert_error). */
    OK(c, ffb_stmt_bind_null(ins, 2));
    server_refuses(c, tx, ins, 1, "1E+385", 335545142u, "22003");
    server_refuses(c, tx, ins, 1, "9.9999999999999995E+384", 335545142u,
                   "22003");
    server_refuses(c, tx, ins, 1, "abc", FFB_GDS_CONVERT_ERROR, "22018");
    OK(c, ffb_stmt_bind_null(ins, 1));
    server_refuses(c, tx, ins, 2, "1E+6145", 335545142u, "22003");
}

/* Text with more digits than the format holds is rounded by the client as
   the server rounds the same literal: HALF_UP (Firebird's default, SET
   DECFLOAT ROUND), not IEEE half-even. Both rows must agree. */
static void test_decfloat_rounding(void **state) {
    target *t = *state;
    if (fb3_refuses(t, "DECFLOAT(34)"))
        return;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);

    CHECK(
        c, tx, t, T_DF, "d16",
        VO("1.2345678901234565", "'1.2345678901234565'", "1.234567890123457"),
        VO("-1.2345678901234565", "'-1.2345678901234565'",
           "-1.234567890123457"),
        VO("1.2345678901234575", "'1.2345678901234575'", "1.234567890123458"),
        VO("1.23456789012345649", "'1.23456789012345649'", "1.234567890123456"),
        VO("10000000000000005", "'10000000000000005'", "1.000000000000001E+16"),
        VO("99999999999999995", "'99999999999999995'", "1.000000000000000E+17"),
        VO("5E-399", "'5E-399'", "1E-398"),
        VO("25E-399", "'25E-399'", "3E-398"),
        VO("4E-399", "'4E-399'", "0E-398"));
    CHECK(c, tx, t, T_DF, "d34",
          VO("1.2345678901234567890123456789012345",
             "'1.2345678901234567890123456789012345'",
             "1.234567890123456789012345678901235"),
          VO("-10000000000000000000000000000000005",
             "'-10000000000000000000000000000000005'",
             "-1.000000000000000000000000000000001E+34"),
          VO("5E-6177", "'5E-6177'", "1E-6176"));
    /* The same comparison in one row: parameter vs. literal cast. */
    ffb_stmt *s = prep(c, tx,
                       "select cast(? as decfloat(16)), "
                       "cast('2.0000000000000005' as decfloat(16)) from "
                       "rdb$database");
    OK(c, ffb_stmt_bind_text(s, 0, "2.0000000000000005", (size_t)-1));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    const char *a, *b;
    size_t al, bl;
    OK(c, ffb_stmt_get_text(s, 0, &a, &al));
    char abuf[64];
    snprintf(abuf, sizeof(abuf), "%.*s", (int)al, a);
    OK(c, ffb_stmt_get_text(s, 1, &b, &bl));
    expect_bytes("client vs. server rounding", abuf, al, b, bl);
    assert_string_equal(abuf, "2.000000000000001");
}

/* ---- DATE, TIME, TIMESTAMP ----------------------------------------------- */

static void bind_dt_min(ffb_conn *c, ffb_stmt *s, void *d) {
    (void)d;
    OK(c, ffb_stmt_bind_date(s, 1, 1, 1, 1));
    OK(c, ffb_stmt_bind_time(s, 2, 0, 0, 0, 0));
    OK(c, ffb_stmt_bind_timestamp(s, 3, 1, 1, 1, 0, 0, 0, 0));
}

static void bind_dt_max(ffb_conn *c, ffb_stmt *s, void *d) {
    (void)d;
    OK(c, ffb_stmt_bind_date(s, 1, 9999, 12, 31));
    OK(c, ffb_stmt_bind_time(s, 2, 23, 59, 59, 9999));
    OK(c, ffb_stmt_bind_timestamp(s, 3, 9999, 12, 31, 23, 59, 59, 9999));
}

/* Cross kinds: a timestamp into DATE keeps the date, a date into
   TIMESTAMP is midnight, a timestamp into TIME keeps the time. */
static void bind_dt_cross(ffb_conn *c, ffb_stmt *s, void *d) {
    (void)d;
    OK(c, ffb_stmt_bind_timestamp(s, 1, 2024, 2, 29, 13, 45, 30, 1234));
    OK(c, ffb_stmt_bind_timestamp(s, 2, 2024, 2, 29, 13, 45, 30, 1234));
    OK(c, ffb_stmt_bind_date(s, 3, 1858, 11, 17));
}

static void expect_dt(ffb_conn *c, ffb_stmt *s, const int want[14]) {
    int y, mo, d, h, mi, sec, fr;
    OK(c, ffb_stmt_get_date(s, 0, &y, &mo, &d));
    assert_int_equal(y, want[0]);
    assert_int_equal(mo, want[1]);
    assert_int_equal(d, want[2]);
    OK(c, ffb_stmt_get_time(s, 1, &h, &mi, &sec, &fr));
    assert_int_equal(h, want[3]);
    assert_int_equal(mi, want[4]);
    assert_int_equal(sec, want[5]);
    assert_int_equal(fr, want[6]);
    OK(c, ffb_stmt_get_timestamp(s, 2, &y, &mo, &d, &h, &mi, &sec, &fr));
    for (int k = 0; k < 7; k++) {
        const int got[7] = {y, mo, d, h, mi, sec, fr};
        assert_int_equal(got[k], want[7 + k]);
    }
}

static void test_dates(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_DT];

    CHECK(c, tx, t, T_DT, "d", V("0001-01-01", "DATE '0001-01-01'"),
          V("1858-11-17", "DATE '1858-11-17'"),
          V("1858-11-16", "DATE '1858-11-16'"),
          V("2024-02-29", "DATE '2024-02-29'"),
          V("9999-12-31", "DATE '9999-12-31'"),
          V("1970-01-01", "DATE '1970-01-01'"));
    CHECK(c, tx, t, T_DT, "t", V("23:59:59.9999", "TIME '23:59:59.9999'"),
          VO("00:00:00", "TIME '00:00:00'", "00:00:00.0000"),
          V("00:00:00.0001", "TIME '00:00:00.0001'"),
          VO("12:34:56.789", "TIME '12:34:56.789'", "12:34:56.7890"),
          VO("13:45", "TIME '13:45'", "13:45:00.0000"));
    CHECK(c, tx, t, T_DT, "ts",
          VO("0001-01-01 00:00:00", "TIMESTAMP '0001-01-01 00:00:00'",
             "0001-01-01 00:00:00.0000"),
          V("9999-12-31 23:59:59.9999", "TIMESTAMP '9999-12-31 23:59:59.9999'"),
          V("2024-02-29 13:45:30.1234", "TIMESTAMP '2024-02-29 13:45:30.1234'"),
          V("1858-11-17 00:00:00.0001", "TIMESTAMP '1858-11-17 00:00:00.0001'"),
          VO("2024-02-29", "DATE '2024-02-29'", "2024-02-29 00:00:00.0000"));
    /* Forms only the server reads: sent as text, converted by its rules. */
    CHECK(c, tx, t, T_DT, "d",
          VO("29.02.2024", "DATE '29.02.2024'", "2024-02-29"),
          VO("1 JAN 2024", "DATE '1 JAN 2024'", "2024-01-01"),
          VO("2/29/2024", "DATE '2/29/2024'", "2024-02-29"),
          VO("29-FEB-2024", "DATE '29-FEB-2024'", "2024-02-29"));
    CHECK(c, tx, t, T_DT, "ts",
          VO("29.02.2024 13:45", "TIMESTAMP '29.02.2024 13:45'",
             "2024-02-29 13:45:00.0000"));

    ffb_stmt *sel = prep(c, tx, "select d, t, ts from %s where id = ?", T);
    int id = insert_row(c, tx, T, "d, t, ts", 3, bind_dt_min, NULL);
    fetch_id(c, tx, sel, id);
    expect_dt(c, sel,
              (const int[14]){1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0});
    expect_str(c, sel, 2, "timestamp min", "0001-01-01 00:00:00.0000");
    id = insert_row(c, tx, T, "d, t, ts", 3, bind_dt_max, NULL);
    fetch_id(c, tx, sel, id);
    expect_dt(c, sel,
              (const int[14]){9999, 12, 31, 23, 59, 59, 9999, 9999, 12, 31, 23,
                              59, 59, 9999});
    id = insert_row(c, tx, T, "d, t, ts", 3, bind_dt_cross, NULL);
    fetch_id(c, tx, sel, id);
    expect_dt(c, sel,
              (const int[14]){2024, 2, 29, 13, 45, 30, 1234, 1858, 11, 17, 0, 0,
                              0, 0});
    /* A time is not a date, a date not a number. */
    int y, mo, d;
    double dbl;
    FAILS(c, ffb_stmt_get_date(sel, 1, &y, &mo, &d), FFB_E_INVAL);
    FAILS(c, ffb_stmt_get_double(sel, 0, &dbl), FFB_E_INVAL);

    /* Invalid dates given as numbers are refused on the client; invalid
       text goes to the server, which refuses it. */
    ffb_stmt *ins =
        prep(c, tx, "insert into %s (id, d, t, ts) values (?, ?, ?, ?)", T);
    FAILS(c, ffb_stmt_bind_date(ins, 1, 2023, 2, 29), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_date(ins, 1, 0, 12, 31), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_time(ins, 2, 23, 59, 59, 10000), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_date(ins, 2, 2024, 1, 1), FFB_E_INVAL);
    expect_error(c, FFB_E_INVAL, FFB_GDS_CONVERT_ERROR, "22018",
                 "a date for a TIME");
    FAILS(c, ffb_stmt_bind_int64(ins, 3, 1), FFB_E_INVAL);
    expect_error(c, FFB_E_INVAL, FFB_GDS_CONVERT_ERROR, "22018",
                 "a number for a TIMESTAMP");
    OK(c, ffb_stmt_bind_null(ins, 2));
    OK(c, ffb_stmt_bind_null(ins, 3));
    server_refuses(c, tx, ins, 1, "2023-02-29", FFB_GDS_CONVERT_ERROR, "22018");
    server_refuses(c, tx, ins, 1, "10000-01-01", FFB_GDS_CONVERT_ERROR,
                   "22018");
    server_refuses(c, tx, ins, 1, "someday", FFB_GDS_CONVERT_ERROR, "22018");
    OK(c, ffb_stmt_bind_null(ins, 1));
    server_refuses(c, tx, ins, 2, "24:00:00", FFB_GDS_CONVERT_ERROR, "22018");
    server_refuses(c, tx, ins, 2, "12:00:00.12345", FFB_GDS_CONVERT_ERROR,
                   "22018");
    OK(c, ffb_stmt_bind_null(ins, 2));
    /* No T between date and time: Firebird 3 cannot convert it, 4 reads
       "T08:00" as a time zone. */
    if (t->version >= 4)
        server_refuses(c, tx, ins, 3, "2024-02-29T08:00", 335545214u, "22009");
    else
        server_refuses(c, tx, ins, 3, "2024-02-29T08:00", FFB_GDS_CONVERT_ERROR,
                       "22018");
}

/* The words the server reads for dates and times - today, yesterday,
   tomorrow, now - go to it as text and mean the server's clock, in the
   execute's one round trip. */
static void test_dates_server_words(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    ffb_stmt *s = prep(c, tx,
                       "select cast(? as date) - current_date, "
                       "datediff(second, cast(? as timestamp), "
                       "localtimestamp), cast(? as date) from rdb$database");
    static const struct {
        const char *word;
        int64_t days;
    } w[] = {{"today", 0},
             {"yesterday", -1},
             {"tomorrow", 1},
             {" TODAY ", 0},
             {"Yesterday", -1}};
    for (size_t i = 0; i < N_ELEMS(w); i++) {
        uint64_t b = it_rts(c);
        OK(c, ffb_stmt_bind_text(s, 0, w[i].word, (size_t)-1));
        OK(c, ffb_stmt_bind_text(s, 1, "now", (size_t)-1));
        OK(c, ffb_stmt_bind_text(s, 2, "29.02.2024", (size_t)-1));
        assert_int_equal(it_rts(c) - b, 0);
        OK(c, ffb_stmt_execute(s, tx));
        assert_int_equal(it_rts(c) - b, 1);
        assert_int_equal(ffb_stmt_fetch(s), 1);
        int64_t days = 99, secs = 99;
        OK(c, ffb_stmt_get_int64(s, 0, &days));
        OK(c, ffb_stmt_get_int64(s, 1, &secs));
        if (days != w[i].days)
            fail_msg("'%s' is %lld days from CURRENT_DATE, expected %lld",
                     w[i].word, (long long)days, (long long)w[i].days);
        /* 'now' is the server's clock, at most a few seconds ago. */
        if (secs < 0 || secs > 60)
            fail_msg("'now' is %lld s from LOCALTIMESTAMP", (long long)secs);
        expect_str(c, s, 2, "29.02.2024", "2024-02-29");
        expect_no_more_rows(c, s);
    }
}

/* ---- time zones (Firebird 4+) -------------------------------------------- */

/* in, literal, text read back, the same instant in UTC. */
typedef struct tzv {
    const char *in, *lit, *out, *utc;
} tzv;

static void check_tz(ffb_conn *c, ffb_tx *tx, const char *table,
                     const char *col, const tzv *v, size_t n) {
    ffb_stmt *ins =
        prep(c, tx, "insert into %s (id, %s) values (?, ?)", table, col);
    ffb_stmt *sel =
        prep(c, tx, "select %s, %s at time zone 'UTC' from %s where id = ?",
             col, col, table);
    ffb_stmt *eq =
        prep(c, tx, "select count(*) from %s where id in (?, ?) and %s = ?",
             table, col);
    for (size_t i = 0; i < n; i++) {
        int id = next_id++, id2 = next_id++;
        char what[160];
        OK(c, ffb_stmt_bind_int64(ins, 0, id));
        OK(c, ffb_stmt_bind_text(ins, 1, v[i].in, (size_t)-1));
        OK(c, ffb_stmt_execute(ins, tx));
        exec_imm(c, tx, "insert into %s (id, %s) values (%d, %s)", table, col,
                 id2, v[i].lit);
        for (int k = 0; k < 2; k++) {
            snprintf(what, sizeof(what), "%s \"%s\" as %s", col, v[i].in,
                     k ? "literal" : "parameter");
            fetch_id(c, tx, sel, k ? id2 : id);
            expect_str(c, sel, 0, what, v[i].out);
            expect_str(c, sel, 1, what, v[i].utc);
        }
        OK(c, ffb_stmt_bind_int64(eq, 0, id));
        OK(c, ffb_stmt_bind_int64(eq, 1, id2));
        OK(c, ffb_stmt_bind_text(eq, 2, v[i].in, (size_t)-1));
        OK(c, ffb_stmt_execute(eq, tx));
        assert_int_equal(ffb_stmt_fetch(eq), 1);
        int64_t cnt = 0;
        OK(c, ffb_stmt_get_int64(eq, 0, &cnt));
        assert_int_equal(cnt, 2);
    }
}

static void test_timezones(void **state) {
    target *t = *state;
    if (fb3_refuses(t, "TIMESTAMP WITH TIME ZONE"))
        return;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_TZ];

    /* TIME WITH TIME ZONE in a region is converted with the offset of
       2020-01-01 (winter: Prague +01:00, New York -05:00). */
    static const tzv times[] = {
        {"13:45:30.1234 Europe/Prague", "TIME '13:45:30.1234 Europe/Prague'",
         "13:45:30.1234 Europe/Prague", "12:45:30.1234 UTC"},
        {"08:00 America/New_York", "TIME '08:00 America/New_York'",
         "08:00:00.0000 America/New_York", "13:00:00.0000 UTC"},
        {"10:00 +02:00", "TIME '10:00 +02:00'", "10:00:00.0000 +02:00",
         "08:00:00.0000 UTC"},
        {"23:59:59.9999 -05:00", "TIME '23:59:59.9999 -05:00'",
         "23:59:59.9999 -05:00", "04:59:59.9999 UTC"},
        {"01:00 +02:00", "TIME '01:00 +02:00'", "01:00:00.0000 +02:00",
         "23:00:00.0000 UTC"},
    };
    check_tz(c, tx, T, "t", times, N_ELEMS(times));
    static const tzv stamps[] = {
        {"2024-07-01 12:00 Europe/Prague",
         "TIMESTAMP '2024-07-01 12:00 Europe/Prague'",
         "2024-07-01 12:00:00.0000 Europe/Prague",
         "2024-07-01 10:00:00.0000 UTC"},
        {"2024-01-01 12:00 Europe/Prague",
         "TIMESTAMP '2024-01-01 12:00 Europe/Prague'",
         "2024-01-01 12:00:00.0000 Europe/Prague",
         "2024-01-01 11:00:00.0000 UTC"},
        {"2024-01-01 12:00 America/New_York",
         "TIMESTAMP '2024-01-01 12:00 America/New_York'",
         "2024-01-01 12:00:00.0000 America/New_York",
         "2024-01-01 17:00:00.0000 UTC"},
        {"2024-07-01 12:00 America/New_York",
         "TIMESTAMP '2024-07-01 12:00 America/New_York'",
         "2024-07-01 12:00:00.0000 America/New_York",
         "2024-07-01 16:00:00.0000 UTC"},
        {"2024-02-29 23:30:00.0001 +02:00",
         "TIMESTAMP '2024-02-29 23:30:00.0001 +02:00'",
         "2024-02-29 23:30:00.0001 +02:00", "2024-02-29 21:30:00.0001 UTC"},
        {"2023-12-31 22:00 -05:00", "TIMESTAMP '2023-12-31 22:00 -05:00'",
         "2023-12-31 22:00:00.0000 -05:00", "2024-01-01 03:00:00.0000 UTC"},
        {"2024-01-01 01:00 +02:00", "TIMESTAMP '2024-01-01 01:00 +02:00'",
         "2024-01-01 01:00:00.0000 +02:00", "2023-12-31 23:00:00.0000 UTC"},
    };
    check_tz(c, tx, T, "ts", stamps, N_ELEMS(stamps));

    /* The typed getters give the local time of the value's zone. */
    ffb_stmt *sel = prep(c, tx, "select t, ts from %s where id = ?", T);
    int id = next_id++;
    exec_imm(c, tx,
             "insert into %s (id, t, ts) values (%d, TIME '13:45:30.1234 "
             "Europe/Prague', TIMESTAMP '2024-07-01 12:00 America/New_York')",
             T, id);
    fetch_id(c, tx, sel, id);
    int h, mi, s, fr, y, mo, d;
    OK(c, ffb_stmt_get_time(sel, 0, &h, &mi, &s, &fr));
    assert_int_equal(h, 13);
    assert_int_equal(mi, 45);
    assert_int_equal(s, 30);
    assert_int_equal(fr, 1234);
    OK(c, ffb_stmt_get_timestamp(sel, 1, &y, &mo, &d, &h, &mi, &s, &fr));
    assert_int_equal(y, 2024);
    assert_int_equal(mo, 7);
    assert_int_equal(d, 1);
    assert_int_equal(h, 12);
    assert_int_equal(mi, 0);

    /* Zone values are converted by the server: an unknown region is its
       error, and the connection goes on. */
    ffb_stmt *ins = prep(c, tx, "insert into %s (id, ts) values (?, ?)", T);
    OK(c, ffb_stmt_bind_int64(ins, 0, next_id++));
    OK(c, ffb_stmt_bind_text(ins, 1, "2024-01-01 12:00 Mars/Olympus_Mons",
                             (size_t)-1));
    FAILS(c, ffb_stmt_execute(ins, tx), FFB_E_SERVER);
    FAILS(c, ffb_stmt_bind_int64(ins, 1, 1), FFB_E_INVAL);
    OK(c, ffb_conn_ping(c));
}

/* ---- strings: UTF8, NONE, OCTETS ----------------------------------------- */

#define CLEF "\xF0\x9D\x84\x9E" /* U+1D11E, 4 bytes in UTF-8 */

static void test_strings(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_STR];

    CHECK(
        c, tx, t, T_STR, "v", V(CLEF, "'" CLEF "'"), V("", "''"),
        V("a\xC3\xA9\xE2\x82\xAC" CLEF "z", "'a\xC3\xA9\xE2\x82\xAC" CLEF "z'"),
        V(CLEF CLEF CLEF CLEF CLEF, "'" CLEF CLEF CLEF CLEF CLEF "'"),
        VO("abcde   ", "'abcde   '", "abcde"), V(" x ", "' x '"));
    /* CHAR(5): padded with blanks to 5 characters, whatever their size. */
    CHECK(c, tx, t, T_STR, "c", VO("a\xC3\xA9", "'a\xC3\xA9'", "a\xC3\xA9   "),
          VO("", "''", "     "), VO(CLEF, "'" CLEF "'", CLEF "    "),
          V(CLEF CLEF CLEF CLEF CLEF, "'" CLEF CLEF CLEF CLEF CLEF "'"),
          VO("abcde   ", "'abcde   '", "abcde"));
    /* NONE keeps the bytes it is given, UTF-8 or not. */
    CHECK(c, tx, t, T_STR, "n", V("\xC3\xA9", "'\xC3\xA9'"),
          V("\xFF\xFE\x80", "x'FFFE80'"), V("plain", "'plain'"));
    CHECK(c, tx, t, T_STR, "nc", VO("ab", "'ab'", "ab  "));
    /* OCTETS: binary, zero bytes included; CHAR pads with zeros. */
    CHECK(c, tx, t, T_STR, "vo",
          VB("\x00\x01\x00\xFF", "x'000100FF'", NULL, 4, 0),
          VB("\x00\x00\x00\x00\x00\x00\x00\x00", "x'0000000000000000'", NULL, 8,
             0),
          VB("", "''", NULL, 0, 0));
    CHECK(c, tx, t, T_STR, "o",
          VB("\x00\x01\x00\xFF", "x'000100FF'", "\x00\x01\x00\xFF\0\0\0\0", 4,
             8));

    /* Padding: get_text keeps it, get_text_trimmed drops it (blanks only;
       OCTETS zeros are data). The empty VARCHAR is not NULL. */
    int id = next_id++;
    exec_imm(c, tx,
             "insert into %s (id, c, v, nc, o) values (%d, 'a\xC3\xA9', '', "
             "'ab', x'0102')",
             T, id);
    ffb_stmt *sel = prep(c, tx, "select c, v, nc, o from %s where id = ?", T);
    fetch_id(c, tx, sel, id);
    expect_text(c, sel, 0, "CHAR(5) UTF8", "a\xC3\xA9   ", 6);
    expect_trimmed(c, sel, 0, "CHAR(5) UTF8 trimmed", "a\xC3\xA9", 3);
    assert_int_equal(ffb_stmt_is_null(sel, 1), 0);
    expect_text(c, sel, 1, "empty VARCHAR", "", 0);
    expect_trimmed(c, sel, 1, "empty VARCHAR trimmed", "", 0);
    expect_text(c, sel, 2, "CHAR(4) NONE", "ab  ", 4);
    expect_trimmed(c, sel, 2, "CHAR(4) NONE trimmed", "ab", 2);
    expect_text(c, sel, 3, "CHAR(8) OCTETS", "\x01\x02\0\0\0\0\0\0", 8);
    expect_trimmed(c, sel, 3, "CHAR(8) OCTETS trimmed", "\x01\x02\0\0\0\0\0\0",
                   8);
    /* The server agrees on what was stored. */
    ffb_stmt *len = prep(c, tx,
                         "select char_length(c), octet_length(c), "
                         "char_length(v), octet_length(o) from %s where id = ?",
                         T);
    fetch_id(c, tx, len, id);
    expect_str(c, len, 0, "char_length(c)", "5");
    expect_str(c, len, 1, "octet_length(c)", "6");
    expect_str(c, len, 2, "char_length(v)", "0");
    expect_str(c, len, 3, "octet_length(o)", "8");

    /* Strings that do not fit, or are not UTF-8, stop on the client. */
    ffb_stmt *ins =
        prep(c, tx, "insert into %s (id, c, v, vo) values (?, ?, ?, ?)", T);
    uint64_t b = it_rts(c);
    FAILS(c, ffb_stmt_bind_text(ins, 2, "abcdef", (size_t)-1), FFB_E_INVAL);
    FAILS(c,
          ffb_stmt_bind_text(ins, 2, CLEF CLEF CLEF CLEF CLEF CLEF, (size_t)-1),
          FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_text(ins, 1, "abcdef", (size_t)-1), FFB_E_INVAL);
    static const char *const bad_utf8[] = {
        "\xC3\x28",         /* truncated sequence */
        "caf\xE9",          /* Latin-1 e acute */
        "\xC0\xAF",         /* overlong */
        "\xED\xA0\x80",     /* surrogate */
        "\xF4\x90\x80\x80", /* beyond U+10FFFF */
        "\xF0\x9D\x84",     /* cut short */
    };
    for (size_t i = 0; i < N_ELEMS(bad_utf8); i++) {
        FAILS(c, ffb_stmt_bind_text(ins, 2, bad_utf8[i], (size_t)-1),
              FFB_E_INVAL);
        FAILS(c, ffb_stmt_bind_text(ins, 1, bad_utf8[i], (size_t)-1),
              FFB_E_INVAL);
    }
    FAILS(c, ffb_stmt_bind_bytes(ins, 3, "123456789", 9), FFB_E_INVAL);
    assert_int_equal(it_rts(c) - b, 0);
}

/* ---- WIN1252 and ISO8859_1 columns, WIN1252 attachments ------------------ */

static void skip_unless_intl(const target *t) {
    if (!t->intl) {
        /* The test servers install their character sets: a server without
           them is a broken test setup, not a reason to skip. */
        fail_msg("%s: WIN1252/ISO8859_1 unusable on this server: %s",
                 t->name, t->intl_why);
    }
}

/*
 * CHAR in a multi-byte character set is padded to its length in
 * characters, for every such set: the server pads to the byte length
 * (characters x the set's maximum bytes), the client drops the blanks
 * beyond the declared characters. Over a NONE attachment each value comes
 * in its column's own set; over UTF8 transliterated.
 */
static void test_char_padding_multibyte(void **state) {
    target *t = *state;
    if (!t->intl)
        skip();
    static const struct {
        const char *cs;
        const char *ch;   /* one character in `cs` */
        const char *utf8; /* the same character in UTF-8 */
    } sets[] = {
        {"SJIS_0208", "\x82\xA0", "\xE3\x81\x82"},
        {"CP943C", "\x82\xA0", "\xE3\x81\x82"},
        {"EUCJ_0208", "\xA4\xA2", "\xE3\x81\x82"},
        {"KSC_5601", "\xC7\xD1", "\xED\x95\x9C"},
        {"BIG_5", "\xA4\xA4", "\xE4\xB8\xAD"},
        {"GB_2312", "\xD6\xD0", "\xE4\xB8\xAD"},
        {"GBK", "\xD6\xD0", "\xE4\xB8\xAD"},
        {"GB18030", "\xD6\xD0", "\xE4\xB8\xAD"},
        {"GB18030", "\x81\x30\x89\x38", "\xC3\x9F"}, /* 4 bytes: U+00DF */
        {"UTF8", "\xC3\xA9", "\xC3\xA9"},
        {"UNICODE_FSS", "\xC3\xA9", "\xC3\xA9"},
    };
    for (int utf8 = 0; utf8 < 2; utf8++) {
        ffb_conn *c = open_conn(t, utf8 ? "UTF8" : "NONE");
        ffb_tx *tx = begin(c);
        for (size_t i = 0; i < N_ELEMS(sets); i++) {
            const char *ch = utf8 ? sets[i].utf8 : sets[i].ch;
            char want[32], what[96];
            /* CHAR(3): the character, 'a', one blank of padding. */
            snprintf(want, sizeof(want), "%sa ", ch);
            snprintf(what, sizeof(what), "CHAR(3) %s over %s", sets[i].cs,
                     utf8 ? "UTF8" : "NONE");
            /* The literal is written in the connection's character set. */
            char sql[512];
            snprintf(sql, sizeof(sql),
                     "select cast(_%s '%sa' as char(3) character set %s), "
                     "cast(_%s '%s%s' as char(2) character set %s), "
                     "cast(_%s '' as char(2) character set %s) from "
                     "rdb$database",
                     utf8 ? "UTF8" : sets[i].cs, ch, sets[i].cs,
                     utf8 ? "UTF8" : sets[i].cs, ch, ch, sets[i].cs,
                     utf8 ? "UTF8" : sets[i].cs, sets[i].cs);
            ffb_stmt *s = prep(c, tx, "%s", sql);
            OK(c, ffb_stmt_execute(s, tx));
            assert_int_equal(ffb_stmt_fetch(s), 1);
            expect_str(c, s, 0, what, want);
            snprintf(want, sizeof(want), "%sa", ch);
            expect_trimmed(c, s, 0, what, want, strlen(want));
            /* Two characters in CHAR(2): no padding at all. */
            snprintf(want, sizeof(want), "%s%s", ch, ch);
            expect_str(c, s, 1, what, want);
            /* Empty: two blanks, not 2 x the maximum bytes. */
            expect_str(c, s, 2, what, "  ");
            expect_no_more_rows(c, s);
        }
    }
}

static void test_charsets(void **state) {
    target *t = *state;
    skip_unless_intl(t);
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_CS];

    /* From a UTF8 attachment the server transliterates both ways. */
    CHECK(c, tx, t, T_CS, "w",
          V("\xC3\xA9\xE2\x82\xAC", "'\xC3\xA9\xE2\x82\xAC'"),
          V("a\xC3\xBF\xC5\x93", "'a\xC3\xBF\xC5\x93'"), V("", "''"));
    CHECK(c, tx, t, T_CS, "wc",
          VO("\xC3\xA9\xE2\x82\xAC", "'\xC3\xA9\xE2\x82\xAC'",
             "\xC3\xA9\xE2\x82\xAC "));
    CHECK(c, tx, t, T_CS, "l", V("\xC3\xA9", "'\xC3\xA9'"),
          V("\xC3\xBF\xC3\x80", "'\xC3\xBF\xC3\x80'"));
    /* Stored as single bytes. */
    int id = next_id++;
    exec_imm(
        c, tx,
        "insert into %s (id, w, wc, l) values (%d, '\xC3\xA9\xE2\x82\xAC', "
        "'\xC3\xA9\xE2\x82\xAC', '\xC3\xA9')",
        T, id);
    ffb_stmt *len = prep(c, tx,
                         "select octet_length(w), octet_length(l) from %s "
                         "where id = ?",
                         T);
    fetch_id(c, tx, len, id);
    expect_str(c, len, 0, "octet_length(w)", "2");
    expect_str(c, len, 1, "octet_length(l)", "1");
    /* A character the column cannot hold is the server's error. */
    ffb_stmt *ins = prep(c, tx, "insert into %s (id, l) values (?, ?)", T);
    OK(c, ffb_stmt_bind_int64(ins, 0, next_id++));
    OK(c, ffb_stmt_bind_text(ins, 1, "\xE2\x82\xAC", (size_t)-1));
    FAILS(c, ffb_stmt_execute(ins, tx), FFB_E_SERVER);
    OK(c, ffb_tx_commit(tx));

    /* A WIN1252 attachment reads and writes WIN1252 bytes: the WIN1252
       column, and a UTF8 one (transliterated by the server). */
    ffb_conn *w = open_conn(t, "WIN1252");
    ffb_tx *wtx = begin(w);
    ffb_stmt *ws = prep(w, wtx, "select w, wc, l from %s where id = ?", T);
    fetch_id(w, wtx, ws, id);
    expect_text(w, ws, 0, "w in a WIN1252 attachment", "\xE9\x80", 2);
    expect_text(w, ws, 1, "wc in a WIN1252 attachment", "\xE9\x80 ", 3);
    expect_text(w, ws, 2, "l in a WIN1252 attachment", "\xE9", 1);
    ffb_column_info ci;
    OK(w, ffb_stmt_column_info(ws, 0, &ci, sizeof(ci)));
    assert_int_equal(ci.charset, 53);
    assert_int_equal(ci.length, 5);
    int id2 = next_id++;
    ffb_stmt *wi =
        prep(w, wtx, "insert into %s (id, v) values (?, ?)", t->table[T_STR]);
    OK(w, ffb_stmt_bind_int64(wi, 0, id2));
    /* 5 single-byte characters fit VARCHAR(5) UTF8, described in bytes of
       the attachment charset. */
    OK(w, ffb_stmt_bind_text(wi, 1,
                             "\xE9\x80\xFF\x9C"
                             "a",
                             (size_t)-1));
    OK(w, ffb_stmt_execute(wi, wtx));
    int id3 = next_id++;
    ffb_stmt *wi2 = prep(w, wtx, "insert into %s (id, w) values (?, ?)", T);
    OK(w, ffb_stmt_bind_int64(wi2, 0, id3));
    OK(w, ffb_stmt_bind_text(wi2, 1, "\xE9\x80", 2));
    OK(w, ffb_stmt_execute(wi2, wtx));
    OK(w, ffb_tx_commit(wtx));

    ffb_tx *tx2 = begin(c);
    ffb_stmt *us =
        prep(c, tx2, "select v from %s where id = ?", t->table[T_STR]);
    fetch_id(c, tx2, us, id2);
    expect_str(c, us, 0, "UTF8 column written by a WIN1252 attachment",
               "\xC3\xA9\xE2\x82\xAC\xC3\xBF\xC5\x93"
               "a");
    ffb_stmt *us2 = prep(c, tx2, "select w from %s where id = ?", T);
    fetch_id(c, tx2, us2, id3);
    expect_str(c, us2, 0, "WIN1252 column written by a WIN1252 attachment",
               "\xC3\xA9\xE2\x82\xAC");
}

/* ---- BOOLEAN ------------------------------------------------------------- */

static void test_boolean(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_BOOL];

    CHECK(c, tx, t, T_BOOL, "b", V("true", "TRUE"), V("false", "FALSE"),
          VO(" True ", "true", "true"), VO("FALSE", "false", "false"));
    ffb_stmt *ins = prep(c, tx, "insert into %s (id, b) values (?, ?)", T);
    ffb_stmt *sel = prep(c, tx, "select b from %s where id = ?", T);
    const int vals[] = {1, 0, 7};
    for (size_t i = 0; i < N_ELEMS(vals); i++) {
        int id = next_id++, b = -1;
        OK(c, ffb_stmt_bind_int64(ins, 0, id));
        OK(c, ffb_stmt_bind_bool(ins, 1, vals[i]));
        OK(c, ffb_stmt_execute(ins, tx));
        fetch_id(c, tx, sel, id);
        OK(c, ffb_stmt_get_bool(sel, 0, &b));
        assert_int_equal(b, vals[i] != 0);
        expect_str(c, sel, 0, "boolean", vals[i] ? "true" : "false");
        int64_t iv;
        FAILS(c, ffb_stmt_get_int64(sel, 0, &iv), FFB_E_INVAL);
    }
    /* 7 went out as exactly 1, so it is TRUE for the server too. */
    ffb_stmt *cnt =
        prep(c, tx, "select count(*) from %s where id >= ? and b is true", T);
    OK(c, ffb_stmt_bind_int64(cnt, 0, next_id - 3));
    OK(c, ffb_stmt_execute(cnt, tx));
    assert_int_equal(ffb_stmt_fetch(cnt), 1);
    int64_t n = 0;
    OK(c, ffb_stmt_get_int64(cnt, 0, &n));
    assert_int_equal(n, 2);
    /* Only TRUE and FALSE: other text is the server's to refuse, a number
       the client's (convert_error, as the server has it). */
    server_refuses(c, tx, ins, 1, "yes", FFB_GDS_CONVERT_ERROR, "22018");
    server_refuses(c, tx, ins, 1, "1", FFB_GDS_CONVERT_ERROR, "22018");
    server_refuses(c, tx, ins, 1, "t", FFB_GDS_CONVERT_ERROR, "22018");
    FAILS(c, ffb_stmt_bind_int64(ins, 1, 1), FFB_E_INVAL);
    expect_error(c, FFB_E_INVAL, FFB_GDS_CONVERT_ERROR, "22018",
                 "1 for a BOOLEAN");
}

/* ---- blobs --------------------------------------------------------------- */

static void test_blobs(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    const char *T = t->table[T_BLOB];

    ffb_stmt *ins =
        prep(c, tx, "insert into %s (id, bt, bb) values (?, ?, ?)", T);
    int id = next_id++;
    OK(c, ffb_stmt_bind_int64(ins, 0, id));
    OK(c, ffb_stmt_bind_text(ins, 1, "hello " CLEF, (size_t)-1));
    OK(c, ffb_stmt_bind_bytes(ins, 2, "\x00\x01\x00\xFF", 4));
    OK(c, ffb_stmt_execute(ins, tx));
    int id2 = next_id++;
    exec_imm(c, tx, "insert into %s (id, bt, bb) values (%d, 'literal', x'00')",
             T, id2);

    ffb_stmt *sel = prep(c, tx,
                         "select bt, bb, cast(bt as varchar(20) character set "
                         "utf8), cast(bb as varchar(8) character set octets), "
                         "char_length(bt), octet_length(bb) from %s where id "
                         "= ?",
                         T);
    for (int k = 0; k < 2; k++) {
        fetch_id(c, tx, sel, k ? id2 : id);
        for (unsigned col = 0; col < 2; col++) {
            uint8_t bid[8] = {0}, zero[8] = {0};
            OK(c, ffb_stmt_get_blob_id(sel, col, bid));
            if (memcmp(bid, zero, 8) == 0)
                fail_msg("blob id of column %u is zero", col);
            const char *txt;
            FAILS(c, ffb_stmt_get_text(sel, col, &txt, NULL), FFB_E_INVAL);
        }
        if (k == 0) {
            expect_str(c, sel, 2, "text blob contents", "hello " CLEF);
            expect_text(c, sel, 3, "binary blob contents", "\x00\x01\x00\xFF",
                        4);
            expect_str(c, sel, 4, "char_length(bt)", "7");
            expect_str(c, sel, 5, "octet_length(bb)", "4");
        } else {
            expect_str(c, sel, 2, "text blob contents", "literal");
            expect_text(c, sel, 3, "binary blob contents", "\x00", 1);
        }
    }
    uint8_t bid[8];
    FAILS(c, ffb_stmt_get_blob_id(sel, 2, bid), FFB_E_INVAL);
    /* Text for a text blob must be valid in the attachment charset; the
       server checks it when it creates the blob. */
    OK(c, ffb_stmt_bind_int64(ins, 0, next_id++));
    OK(c, ffb_stmt_bind_text(ins, 1, "", 0));
    OK(c, ffb_stmt_bind_null(ins, 2));
    OK(c, ffb_stmt_execute(ins, tx));
    FAILS(c, ffb_stmt_bind_int64(ins, 1, 5), FFB_E_INVAL);
}

/* ---- NULL for every type ------------------------------------------------- */

static unsigned count_cols(const char *cols) {
    unsigned n = 1;
    int depth = 0;
    for (const char *p = cols; *p; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        else if (*p == ',' && depth == 0)
            n++;
    }
    return n;
}

static void test_nulls(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    for (int k = 0; k < T_COUNT; k++) {
        if (!table_active(t, k))
            continue;
        const char *T = t->table[k];
        unsigned n = count_cols(specs[k].cols);
        char qs[128] = "?";
        for (unsigned i = 0; i < n; i++)
            strcat(qs, ", ?");
        ffb_stmt *ins = prep(c, tx, "insert into %s values (%s)", T, qs);
        int id = next_id++, id2 = next_id++;
        OK(c, ffb_stmt_bind_int64(ins, 0, id));
        for (unsigned i = 1; i <= n; i++)
            OK(c, ffb_stmt_bind_null(ins, i));
        OK(c, ffb_stmt_execute(ins, tx));
        exec_imm(c, tx, "insert into %s (id) values (%d)", T, id2);
        ffb_stmt *sel =
            prep(c, tx, "select * from %s where id in (%d, %d)", T, id, id2);
        OK(c, ffb_stmt_execute(sel, tx));
        for (int r = 0; r < 2; r++) {
            assert_int_equal(ffb_stmt_fetch(sel), 1);
            assert_int_equal(ffb_stmt_column_count(sel), n + 1);
            assert_int_equal(ffb_stmt_is_null(sel, 0), 0);
            for (unsigned i = 1; i <= n; i++) {
                if (ffb_stmt_is_null(sel, i) != 1)
                    fail_msg("%s column %u is not NULL", T, i + 1);
                const char *txt;
                int64_t iv;
                double d;
                int bv;
                uint8_t bid[8];
                FAILS(c, ffb_stmt_get_text(sel, i, &txt, NULL), FFB_E_INVAL);
                FAILS(c, ffb_stmt_get_int64(sel, i, &iv), FFB_E_INVAL);
                FAILS(c, ffb_stmt_get_double(sel, i, &d), FFB_E_INVAL);
                FAILS(c, ffb_stmt_get_bool(sel, i, &bv), FFB_E_INVAL);
                FAILS(c, ffb_stmt_get_blob_id(sel, i, bid), FFB_E_INVAL);
            }
        }
        expect_no_more_rows(c, sel);
        /* `col IS NULL` with a NULL parameter. */
        ffb_stmt *isn = prep(c, tx,
                             "select count(*) from %s where id in (?, ?) and "
                             "? is null",
                             T);
        OK(c, ffb_stmt_bind_int64(isn, 0, id));
        OK(c, ffb_stmt_bind_int64(isn, 1, id2));
        OK(c, ffb_stmt_bind_null(isn, 2));
        OK(c, ffb_stmt_execute(isn, tx));
        assert_int_equal(ffb_stmt_fetch(isn), 1);
        int64_t cnt = 0;
        OK(c, ffb_stmt_get_int64(isn, 0, &cnt));
        assert_int_equal(cnt, 2);
    }
}

/* ---- conversion errors on the client ------------------------------------- */

/* The connection's error, field by field: the result code, the codes of
   the status vector in order (warnings none), the arguments of code
   `argc_at` (NULL: none checked), SQLCODE, SQLSTATE, and pieces the
   message must contain (NULL-terminated). */
static void expect_fields(ffb_conn *c, int code, const uint32_t *codes,
                          size_t ncodes, int sqlcode, const char *sqlstate,
                          size_t args_at, const char *const *args,
                          const char *const *pieces) {
    const ffb_error *e = ffb_conn_error(c);
    const char *m = ffb_error_message(e);
    assert_int_equal(ffb_error_code(e), code);
    if (ffb_error_count(e) != ncodes)
        fail_msg("%zu codes, expected %zu: %s", ffb_error_count(e), ncodes, m);
    for (size_t i = 0; i < ncodes; i++)
        if (ffb_error_gds_at(e, i) != codes[i])
            fail_msg("code %zu is %u (%s), expected %u: %s", i,
                     (unsigned)ffb_error_gds_at(e, i),
                     ffb_error_symbol_at(e, i), (unsigned)codes[i], m);
    assert_int_equal(ffb_error_gds(e), codes[0]);
    assert_int_equal(ffb_error_sqlcode(e), sqlcode);
    assert_string_equal(ffb_error_sqlstate(e), sqlstate);
    for (size_t j = 0; args && args[j]; j++) {
        const char *got = ffb_error_arg(e, args_at, j);
        if (!got || strcmp(got, args[j]) != 0)
            fail_msg("argument %zu of code %zu is %s, expected %s: %s", j,
                     args_at, got ? got : "(none)", args[j], m);
    }
    for (size_t j = 0; pieces && pieces[j]; j++)
        if (!strstr(m, pieces[j]))
            fail_msg("the message lacks \"%s\": %s", pieces[j], m);
}

#define CODES(...)                                                             \
    (const uint32_t[]){__VA_ARGS__}, N_ELEMS(((const uint32_t[]){__VA_ARGS__}))
#define STRS(...)                                                              \
    (const char *const[]) { __VA_ARGS__, NULL }
#define RANGE_CODES                                                            \
    CODES(FFB_GDS_DSQL_ERROR, 335544436u, FFB_GDS_ARITH_EXCEPT,                \
          FFB_GDS_NUMERIC_OUT_OF_RANGE)
#define TRUNC_CODES                                                            \
    CODES(FFB_GDS_DSQL_ERROR, 335544436u, FFB_GDS_ARITH_EXCEPT,                \
          FFB_GDS_STRING_TRUNCATION, 335545033u)

static void test_client_conversion_errors(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    ffb_stmt *s =
        prep(c, tx, "insert into %s (id, s, i, b) values (?, ?, ?, ?)",
             t->table[T_INT]);
    ffb_stmt *v = prep(c, tx, "insert into %s (id, v, n) values (?, ?, ?)",
                       t->table[T_STR]);
    ffb_stmt *num =
        prep(c, tx, "insert into %s (id, n93, d93) values (?, ?, ?)",
             t->table[T_NUM]);
    uint64_t b = it_rts(c);
    /* 2^40 does not fit a SMALLINT (nor an INTEGER). */
    FAILS(c, ffb_stmt_bind_int64(s, 1, 1LL << 40), FFB_E_INVAL);
    expect_fields(c, FFB_E_INVAL, RANGE_CODES, -303, "22003", 1, STRS("-303"),
                  STRS("parameter 2 (SMALLINT): 1099511627776 is out of range "
                       "(-32768 .. 32767)",
                       "[dsql_error, SQLSTATE 22003]"));
    FAILS(c, ffb_stmt_bind_numeric(s, 1, 1LL << 40, 0), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_text(s, 1, "1099511627776", (size_t)-1),
          FFB_E_INVAL);
    expect_fields(c, FFB_E_INVAL, RANGE_CODES, -303, "22003", 1, STRS("-303"),
                  STRS("\"1099511627776\" is out of range"));
    FAILS(c, ffb_stmt_bind_double(s, 1, 1099511627776.0), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_int64(s, 2, 1LL << 40), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_text(s, 1, "32768", (size_t)-1), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_text(s, 1, "-32769", (size_t)-1), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_text(s, 3, "9223372036854775808", (size_t)-1),
          FFB_E_INVAL);
    expect_fields(c, FFB_E_INVAL, RANGE_CODES, -303, "22003", 1, STRS("-303"),
                  STRS("parameter 4 (BIGINT)"));
    FAILS(c, ffb_stmt_bind_text(s, 3, "1e40", (size_t)-1), FFB_E_INVAL);
    FAILS(c, ffb_stmt_bind_numeric(s, 2, 1, 10), FFB_E_INVAL); /* 1e10 */
    /* The declared type, not its storage: DECIMAL(9,3) is an INTEGER. */
    FAILS(c, ffb_stmt_bind_numeric(num, 2, 12345678901, -3), FFB_E_INVAL);
    expect_fields(c, FFB_E_INVAL, RANGE_CODES, -303, "22003", 1, STRS("-303"),
                  STRS("parameter 3 (DECIMAL(9,3)): 12345678.901 is out of "
                       "range (-2147483.648 .. 2147483.647)"));
    FAILS(c, ffb_stmt_bind_text(num, 1, "-2147483.6485", (size_t)-1),
          FFB_E_INVAL);
    expect_fields(c, FFB_E_INVAL, RANGE_CODES, -303, "22003", 1, STRS("-303"),
                  STRS("parameter 2 (NUMERIC(9,3)): \"-2147483.6485\""));
    /* A boolean is no number: the server's convert_error. */
    FAILS(c, ffb_stmt_bind_bool(s, 2, 1), FFB_E_INVAL);
    expect_fields(c, FFB_E_INVAL,
                  CODES(FFB_GDS_DSQL_ERROR, 335544436u, FFB_GDS_CONVERT_ERROR),
                  -303, "22018", 2, STRS("BOOLEAN"),
                  STRS("parameter 3 (INTEGER): cannot take a boolean"));
    /* A 6-character string for VARCHAR(5): characters counted. */
    FAILS(c, ffb_stmt_bind_text(v, 1, "abcdef", (size_t)-1), FFB_E_INVAL);
    expect_fields(c, FFB_E_INVAL, TRUNC_CODES, -303, "22001", 4, STRS("5", "6"),
                  STRS("parameter 2 (VARCHAR(5) CHARACTER SET UTF8): "
                       "\"abcdef\" is 6 characters long, longer than the 5",
                       "[dsql_error, SQLSTATE 22001]"));
    FAILS(c,
          ffb_stmt_bind_text(v, 1,
                             "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3"
                             "\xA9\xC3\xA9",
                             (size_t)-1),
          FFB_E_INVAL);
    expect_fields(c, FFB_E_INVAL, TRUNC_CODES, -303, "22001", 4, STRS("5", "6"),
                  STRS("6 characters long"));
    /* Six 'é' over UTF8 are 12 bytes for a NONE VARCHAR(10), which counts
       bytes. */
    FAILS(c,
          ffb_stmt_bind_text(v, 2,
                             "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3"
                             "\xA9\xC3\xA9",
                             (size_t)-1),
          FFB_E_INVAL);
    expect_fields(c, FFB_E_INVAL, TRUNC_CODES, -303, "22001", 4,
                  STRS("10", "12"),
                  STRS("parameter 3 (VARCHAR(10) CHARACTER SET NONE)",
                       "12 bytes long, longer than the 10"));
    /* Not UTF-8. */
    FAILS(c, ffb_stmt_bind_text(v, 1, "\xFF", 1), FFB_E_INVAL);
    expect_fields(
        c, FFB_E_INVAL,
        CODES(FFB_GDS_DSQL_ERROR, 335544436u, FFB_GDS_MALFORMED_STRING), -303,
        "42000", 1, STRS("-303"), STRS("not valid UTF-8"));
    /* Nothing of this reached the server. */
    assert_int_equal(it_rts(c) - b, 0);
    /* Text that is no number goes to the server, whose error it is. */
    OK(c, ffb_stmt_bind_int64(s, 1, 1));
    OK(c, ffb_stmt_bind_int64(s, 3, 1));
    server_refuses(c, tx, s, 2, "abc", FFB_GDS_CONVERT_ERROR, "22018");
    expect_fields(c, FFB_E_SERVER,
                  CODES(FFB_GDS_DSQL_ERROR, 335544436u, FFB_GDS_CONVERT_ERROR),
                  -303, "22018", 2, STRS("abc"), STRS("\"abc\""));
    server_refuses(c, tx, s, 2, "", FFB_GDS_CONVERT_ERROR, "22018");
    server_refuses(c, tx, s, 2, "12x", FFB_GDS_CONVERT_ERROR, "22018");
    server_refuses(c, tx, s, 2, "NaN", FFB_GDS_CONVERT_ERROR, "22018");
    /* ... and what it accepts works: hexadecimal is Firebird's. */
    OK(c, ffb_stmt_bind_int64(s, 0, next_id++));
    OK(c, ffb_stmt_bind_text(s, 2, "0x10", (size_t)-1));
    OK(c, ffb_stmt_execute(s, tx));
    /* The statement still works, with the values bound before. */
    OK(c, ffb_stmt_bind_int64(v, 0, next_id++));
    OK(c, ffb_stmt_bind_text(v, 1, "ok", 2));
    OK(c, ffb_stmt_bind_null(v, 2));
    OK(c, ffb_stmt_execute(v, tx));
}

/*
 * The same conversions refused by libfastfb on the client and by the
 * server: each value goes once through a prepared statement's parameter
 * (the client converts, or sends the text for the server to convert) and
 * once by value through ffb_conn_execute_immediate_params(), which leaves
 * the conversion to the server. The error fields must be the same: result
 * aside, the codes in order, their arguments, SQLCODE and SQLSTATE.
 */
typedef struct cmpcase {
    const char *type; /* the parameter's declared type */
    ffb_value val;
    int client; /* 1: refused on the client; 0: sent as text */
    int min_version;
} cmpcase;

#define TXT(s_)                                                                \
    { .type = FFB_VALUE_TEXT, .p = (s_), .len = sizeof(s_) - 1 }
#define I64(i_)                                                                \
    { .type = FFB_VALUE_INT64, .i = (i_) }

static int bind_ffb_value(ffb_stmt *s, const ffb_value *v) {
    switch (v->type) {
    case FFB_VALUE_INT64:
        return ffb_stmt_bind_int64(s, 0, v->i);
    case FFB_VALUE_NUMERIC:
        return ffb_stmt_bind_numeric(s, 0, v->i, v->scale);
    case FFB_VALUE_DOUBLE:
        return ffb_stmt_bind_double(s, 0, v->d);
    case FFB_VALUE_BOOL:
        return ffb_stmt_bind_bool(s, 0, (int)v->i);
    case FFB_VALUE_BYTES:
        return ffb_stmt_bind_bytes(s, 0, v->p, v->len);
    default:
        return ffb_stmt_bind_text(s, 0, v->p, v->len);
    }
}

typedef struct errcopy {
    int code, sqlcode;
    char sqlstate[6];
    size_t n;
    uint32_t codes[8];
    char args[8][4][64];
    size_t nargs[8];
    char message[1024];
} errcopy;

static void copy_error(const ffb_error *e, errcopy *o) {
    memset(o, 0, sizeof(*o));
    o->code = ffb_error_code(e);
    o->sqlcode = ffb_error_sqlcode(e);
    snprintf(o->sqlstate, sizeof(o->sqlstate), "%s", ffb_error_sqlstate(e));
    o->n = ffb_error_count(e);
    snprintf(o->message, sizeof(o->message), "%s", ffb_error_message(e));
    for (size_t i = 0; i < o->n && i < 8; i++) {
        o->codes[i] = ffb_error_gds_at(e, i);
        o->nargs[i] = ffb_error_arg_count(e, i);
        for (size_t j = 0; j < o->nargs[i] && j < 4; j++)
            snprintf(o->args[i][j], sizeof(o->args[i][j]), "%s",
                     ffb_error_arg(e, i, j));
    }
}

static void test_client_errors_match_server(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    static const cmpcase cases[] = {
        {"smallint", I64(1LL << 40), 1, 3},
        {"smallint", TXT("99999"), 1, 3},
        {"integer", TXT("1e10"), 1, 3},
        {"integer", TXT("-2147483649"), 1, 3},
        {"bigint", TXT("9223372036854775808"), 1, 3},
        {"numeric(9,2)",
         {.type = FFB_VALUE_NUMERIC, .i = 1234567890123, .scale = -3},
         1,
         3},
        {"decimal(18,4)", TXT("1e15"), 1, 3},
        {"numeric(4,1)", TXT("-3276.9"), 1, 3},
        {"integer", {.type = FFB_VALUE_DOUBLE, .d = 1e300}, 1, 3},
        {"float", {.type = FFB_VALUE_DOUBLE, .d = 1e300}, 1, 3},
        {"int128", TXT("170141183460469231731687303715884105728"), 1, 4},
        {"varchar(5)", TXT("abcdef"), 1, 3},
        {"char(2)", TXT("\xC3\xA9\xC3\xA9\xC3\xA9"), 1, 3},
        {"varchar(4) character set none", TXT("\xC3\xA9\xC3\xA9\xC3\xA9"), 1,
         3},
        {"varchar(5)", TXT("a\xFF"), 1, 3},
        /* OCTETS pads with zero bytes: blanks beyond its length are
           excess. */
        {"varchar(4) character set octets",
         {.type = FFB_VALUE_BYTES, .p = "ab    ", .len = 6},
         1,
         3},
        {"char(2) character set octets",
         {.type = FFB_VALUE_BYTES, .p = "abc", .len = 3},
         1,
         3},
        {"integer", {.type = FFB_VALUE_BOOL, .i = 1}, 1, 3},
        {"date", I64(5), 1, 3},
        {"boolean", I64(5), 1, 3},
        {"time", I64(-7), 1, 3},
        /* Sent as text: the server's own conversion either way. */
        {"integer", TXT("abc"), 0, 3},
        {"numeric(9,2)", TXT("1.2.3"), 0, 3},
        {"double precision", TXT("NaN"), 0, 3},
        {"double precision", TXT("1e400"), 0, 3},
        {"float", TXT("3.5e38"), 0, 3},
        {"date", TXT("2024-02-30"), 0, 3},
        {"date", TXT("yesterday's"), 0, 3},
        {"time", TXT("25:00"), 0, 3},
        {"timestamp", TXT("2024-02-29T10:00"), 0, 3},
        {"boolean", TXT("maybe"), 0, 3},
        {"integer", {.type = FFB_VALUE_BYTES, .p = "abc", .len = 3}, 0, 3},
        {"date", {.type = FFB_VALUE_BYTES, .p = "12", .len = 2}, 0, 3},
        {"decfloat(16)", TXT("1e400"), 0, 4},
        {"decfloat(34)", TXT("abc"), 0, 4},
        {"time with time zone", TXT("12:00 Mars/Olympus"), 0, 4},
    };
    size_t compared = 0;
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        const cmpcase *k = &cases[i];
        if (t->version < k->min_version)
            continue;
        char sql[256], what[160];
        snprintf(sql, sizeof(sql), "execute block (x %s = ?) as begin end",
                 k->type);
        snprintf(what, sizeof(what), "[%zu] %s", i, k->type);
        /* The server converts the value it is given. */
        int rc = ffb_conn_execute_immediate_params(c, tx, sql, (size_t)-1,
                                                   &k->val, 1);
        if (rc != FFB_E_SERVER)
            fail_msg("%s: the server took the value (rc %d)", what, rc);
        errcopy srv, cli;
        copy_error(ffb_conn_error(c), &srv);
        /* libfastfb converts it, or sends it as text. */
        ffb_stmt *s = prep(c, tx, "%s", sql);
        uint64_t b = it_rts(c);
        rc = bind_ffb_value(s, &k->val);
        if (k->client) {
            if (rc != FFB_E_INVAL)
                fail_msg("%s: bind = %d, expected a client-side refusal", what,
                         rc);
        } else {
            OK(c, rc);
            rc = ffb_stmt_execute(s, tx);
            if (rc != FFB_E_SERVER)
                fail_msg("%s: execute = %d, expected the server's error", what,
                         rc);
        }
        assert_int_equal(it_rts(c) - b, k->client ? 0 : 1);
        copy_error(ffb_conn_error(c), &cli);
        if (cli.n != srv.n || cli.sqlcode != srv.sqlcode ||
            strcmp(cli.sqlstate, srv.sqlstate) != 0)
            fail_msg("%s: client %zu codes, SQLCODE %d, SQLSTATE %s (%s); "
                     "server %zu codes, SQLCODE %d, SQLSTATE %s (%s)",
                     what, cli.n, cli.sqlcode, cli.sqlstate, cli.message, srv.n,
                     srv.sqlcode, srv.sqlstate, srv.message);
        for (size_t j = 0; j < srv.n && j < 8; j++) {
            if (cli.codes[j] != srv.codes[j] || cli.nargs[j] != srv.nargs[j])
                fail_msg("%s: code %zu: client %u with %zu args, server %u "
                         "with %zu (%s)",
                         what, j, (unsigned)cli.codes[j], cli.nargs[j],
                         (unsigned)srv.codes[j], srv.nargs[j], srv.message);
            for (size_t a = 0; a < srv.nargs[j] && a < 4; a++)
                if (strcmp(cli.args[j][a], srv.args[j][a]) != 0)
                    fail_msg("%s: code %zu arg %zu: client \"%s\", server "
                             "\"%s\"",
                             what, j, a, cli.args[j][a], srv.args[j][a]);
        }
        compared++;
    }
    printf("# %s: %zu conversions give the same error fields from the client "
           "and from the server\n",
           t->name, compared);
}

/* The same comparison for parameters of ordinary statements (INSERT,
   UPDATE, DELETE: ffb_conn_execute_immediate_params() runs no SELECT):
   the value is the first parameter, an id the second. */
static void compare_errors(ffb_conn *c, ffb_tx *tx, const char *sql,
                           const ffb_value *val, int client, const char *what) {
    ffb_value vals[2] = {*val, {.type = FFB_VALUE_INT64, .i = next_id++}};
    int rc = ffb_conn_execute_immediate_params(c, tx, sql, (size_t)-1, vals, 2);
    if (rc != FFB_E_SERVER)
        fail_msg("%s: the server took the value (rc %d)", what, rc);
    errcopy srv, cli;
    copy_error(ffb_conn_error(c), &srv);
    ffb_stmt *s = prep(c, tx, "%s", sql);
    OK(c, ffb_stmt_bind_int64(s, 1, vals[1].i));
    uint64_t b = it_rts(c);
    rc = bind_ffb_value(s, val);
    if (client) {
        if (rc != FFB_E_INVAL)
            fail_msg("%s: bind = %d, expected a client-side refusal", what, rc);
    } else {
        OK(c, rc);
        rc = ffb_stmt_execute(s, tx);
        if (rc != FFB_E_SERVER)
            fail_msg("%s: execute = %d, expected the server's error", what, rc);
    }
    assert_int_equal(it_rts(c) - b, client ? 0 : 1);
    copy_error(ffb_conn_error(c), &cli);
    if (cli.n != srv.n || cli.sqlcode != srv.sqlcode ||
        strcmp(cli.sqlstate, srv.sqlstate) != 0)
        fail_msg("%s: client %zu codes, SQLCODE %d, SQLSTATE %s (%s); server "
                 "%zu codes, SQLCODE %d, SQLSTATE %s (%s)",
                 what, cli.n, cli.sqlcode, cli.sqlstate, cli.message, srv.n,
                 srv.sqlcode, srv.sqlstate, srv.message);
    for (size_t j = 0; j < srv.n && j < 8; j++) {
        if (cli.codes[j] != srv.codes[j] || cli.nargs[j] != srv.nargs[j])
            fail_msg("%s: code %zu: client %u, server %u (%s)", what, j,
                     (unsigned)cli.codes[j], (unsigned)srv.codes[j],
                     srv.message);
        for (size_t a = 0; a < srv.nargs[j] && a < 4; a++)
            if (strcmp(cli.args[j][a], srv.args[j][a]) != 0)
                fail_msg("%s: code %zu arg %zu: client \"%s\", server \"%s\"",
                         what, j, a, cli.args[j][a], srv.args[j][a]);
    }
}

static void test_client_errors_match_server_statements(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    static const struct {
        int table;
        const char *sql; /* %s: the table */
        ffb_value val;
        int client;
    } cases[] = {
        {T_INT, "insert into %s (s, id) values (?, ?)", TXT("99999"), 1},
        {T_INT, "insert into %s (b, id) values (?, ?)",
         TXT("-9223372036854775809"), 1},
        {T_INT, "update %s set i = ? where id = ?", I64(1LL << 33), 1},
        {T_NUM,
         "update %s set d93 = ? where id = ?",
         {.type = FFB_VALUE_NUMERIC, .i = 12345678901, .scale = -3},
         1},
        {T_NUM, "delete from %s where n42 = ? and id = ?", TXT("327.68"), 1},
        {T_STR, "insert into %s (v, id) values (?, ?)", TXT("abcdef"), 1},
        {T_STR, "update %s set n = ? where id = ?",
         TXT("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"), 1},
        {T_STR, "delete from %s where c = ? and id = ?", TXT("\xFF\xFE"), 1},
        {T_BOOL, "insert into %s (b, id) values (?, ?)", I64(2), 1},
        {T_DT, "insert into %s (d, id) values (?, ?)", I64(20240229), 1},
        {T_INT, "delete from %s where i = ? and id = ?", TXT("abc"), 0},
        {T_DT, "update %s set ts = ? where id = ?", TXT("2024-02-29 25:00"), 0},
        {T_BOOL, "delete from %s where b = ? and id = ?", TXT("yes"), 0},
        {T_FLT, "insert into %s (f, id) values (?, ?)", TXT("1e39"), 0},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        char sql[256], what[300];
        snprintf(sql, sizeof(sql), cases[i].sql, t->table[cases[i].table]);
        snprintf(what, sizeof(what), "[%zu] %s", i, sql);
        compare_errors(c, tx, sql, &cases[i].val, cases[i].client, what);
    }
    printf("# %s: %zu statements give the same error fields from the client "
           "and from the server\n",
           t->name, N_ELEMS(cases));
}

/* ---- getters ------------------------------------------------------------- */

static void test_getters(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    ffb_tx *tx = begin(c);
    ffb_stmt *s =
        prep(c, tx,
             "select cast('abc' as varchar(5)), cast(1.50 as "
             "numeric(9,2)), cast(2.00 as numeric(9,2)), "
             "cast('42' as varchar(5)), cast(-2.00 as numeric(18,4)), "
             "cast(' 7 ' as char(3)), cast('1.5' as varchar(5)), "
             "cast(1 as smallint) from rdb$database");
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    int64_t v = -1;
    double d;
    int b;
    FAILS(c, ffb_stmt_get_int64(s, 0, &v), FFB_E_INVAL); /* 'abc' */
    FAILS(c, ffb_stmt_get_int64(s, 1, &v), FFB_E_INVAL); /* 1.50 */
    OK(c, ffb_stmt_get_int64(s, 2, &v));                 /* 2.00 */
    assert_int_equal(v, 2);
    OK(c, ffb_stmt_get_int64(s, 3, &v)); /* '42' */
    assert_int_equal(v, 42);
    OK(c, ffb_stmt_get_int64(s, 4, &v));
    assert_int_equal(v, -2);
    OK(c, ffb_stmt_get_int64(s, 5, &v)); /* ' 7 ' */
    assert_int_equal(v, 7);
    FAILS(c, ffb_stmt_get_int64(s, 6, &v), FFB_E_INVAL); /* '1.5' */
    FAILS(c, ffb_stmt_get_double(s, 0, &d), FFB_E_INVAL);
    FAILS(c, ffb_stmt_get_bool(s, 7, &b), FFB_E_INVAL);
    FAILS(c, ffb_stmt_get_int64(s, 8, &v), FFB_E_INVAL); /* no column 9 */
    int64_t nv;
    int scale;
    FAILS(c, ffb_stmt_get_numeric(s, 0, &nv, &scale), FFB_E_INVAL);
    OK(c, ffb_stmt_get_numeric(s, 1, &nv, &scale));
    assert_int_equal(nv, 150);
    assert_int_equal(scale, -2);
    expect_str(c, s, 1, "1.50", "1.50");
    /* The failing getter names the column and both types. */
    FAILS(c, ffb_stmt_get_int64(s, 0, &v), FFB_E_INVAL);
    const char *m = ffb_error_message(ffb_conn_error(c));
    if (!strstr(m, "column 1") || !strstr(m, "VARCHAR"))
        fail_msg("message: %s", m);
}

/* ---- setup and teardown of the tables ------------------------------------ */

/* Run `sql` in a transaction of its own on `c`; DDL is done at commit.
   Returns 0 or the failing code, with the message in `why`. */
static int run_ddl(ffb_conn *c, const char *sql, int lock_timeout, char *why,
                   size_t why_size) {
    ffb_tx_options o = FFB_TX_OPTIONS_INIT;
    o.lock_timeout = lock_timeout;
    ffb_tx *tx = NULL;
    int rc = ffb_tx_begin(c, &o, &tx);
    if (rc == 0)
        rc = ffb_conn_execute_immediate(c, tx, sql, (size_t)-1);
    if (rc == 0)
        rc = ffb_tx_commit(tx);
    if (rc < 0 && why)
        snprintf(why, why_size, "%s", ffb_error_message(ffb_conn_error(c)));
    ffb_tx_free(tx);
    return rc;
}

static ffb_conn *plain_conn(const target *t, char *why, size_t why_size) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = t->dsn;
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.io_timeout_ms = 60000;
    ffb_conn *c = NULL;
    if (ffb_conn_new(&o, &c) < 0)
        return NULL;
    if (ffb_conn_connect(c) < 0) {
        snprintf(why, why_size, "%s", ffb_error_message(ffb_conn_error(c)));
        ffb_conn_free(c);
        return NULL;
    }
    return c;
}

/* Whether the server can use WIN1252 and ISO8859_1 (fbintl installed). */
static void probe_intl(target *t, ffb_conn *c) {
    ffb_tx *tx = NULL;
    ffb_stmt *s = NULL;
    int rc = ffb_tx_begin(c, NULL, &tx);
    if (rc == 0)
        rc = ffb_stmt_new(c, &s);
    if (rc == 0)
        rc = ffb_stmt_prepare(s, tx,
                              "select cast('a' as varchar(1) character set "
                              "win1252), cast('a' as varchar(1) character set "
                              "iso8859_1) from rdb$database",
                              (size_t)-1);
    if (rc == 0)
        rc = ffb_stmt_execute(s, tx);
    if (rc == 0)
        rc = ffb_stmt_fetch(s) == 1 ? 0 : -1;
    t->intl = rc == 0;
    if (!t->intl)
        snprintf(t->intl_why, sizeof(t->intl_why), "%s",
                 ffb_error_message(ffb_conn_error(c)));
    ffb_stmt_free(s);
    if (tx) {
        ffb_tx_rollback(tx);
        ffb_tx_free(tx);
    }
}

static int create_tables(target *t) {
    char why[1024] = "";
    ffb_conn *c = plain_conn(t, why, sizeof(why));
    if (!c) {
        fprintf(stderr, "%s: cannot connect: %s\n", t->name, why);
        return -1;
    }
    probe_intl(t, c);
    if (!t->intl)
        printf("# %s: WIN1252/ISO8859_1 are not usable on this server (%s); "
               "the charset test is skipped\n",
               t->name, t->intl_why);
    int failed = 0;
    for (int k = 0; k < T_COUNT && !failed; k++) {
        if (!table_active(t, k))
            continue;
        char sql[1024];
        snprintf(sql, sizeof(sql),
                 "create table %s (id integer not null primary key, %s)",
                 t->table[k], specs[k].cols);
        if (run_ddl(c, sql, 10, why, sizeof(why)) < 0) {
            fprintf(stderr, "%s: %s: %s\n", t->name, sql, why);
            failed = 1;
        } else {
            t->created[k] = 1;
        }
    }
    ffb_conn_close(c);
    ffb_conn_free(c);
    return failed ? -1 : 0;
}

/* Drop on a fresh connection; a transaction waits at most 10 s for a lock
   a failed test might still hold. */
static int drop_tables(target *t) {
    char why[1024] = "";
    ffb_conn *c = plain_conn(t, why, sizeof(why));
    if (!c) {
        fprintf(stderr, "%s: cannot connect to drop the tables: %s\n", t->name,
                why);
        return -1;
    }
    int failed = 0;
    for (int k = 0; k < T_COUNT; k++) {
        if (!t->created[k])
            continue;
        char sql[128];
        snprintf(sql, sizeof(sql), "drop table %s", t->table[k]);
        if (run_ddl(c, sql, 10, why, sizeof(why)) < 0) {
            fprintf(stderr, "%s: %s: %s\n", t->name, sql, why);
            failed = 1;
        } else {
            t->created[k] = 0;
        }
    }
    ffb_conn_close(c);
    ffb_conn_free(c);
    return failed ? -1 : 0;
}

int main(void) {
    static const char *const names[] = {"FB3", "FB4"};
    it_server sv[2];
    size_t n = it_servers(names, 2, sv);
    for (size_t i = 0; i < n; i++) {
        target *t = &targets[ntargets++];
        memcpy(t->name, sv[i].name, sizeof(t->name));
        memcpy(t->dsn, sv[i].dsn, sizeof(t->dsn));
        t->version = sv[i].version;
        for (int k = 0; k < T_COUNT; k++)
            snprintf(t->table[k], sizeof(t->table[k]), "T_TY_%s_%.15s_%d",
                     specs[k].key, sv[i].name, (int)getpid());
    }
    int failed = 0;
    for (size_t i = 0; i < ntargets; i++) {
        target *t = &targets[i];
#define T(fn) cmocka_unit_test_prestate_setup_teardown(fn, NULL, release_all, t)
        const struct CMUnitTest tests[] = {
            T(test_integers),
            T(test_numeric),
            T(test_int128),
            T(test_float),
            T(test_decfloat),
            T(test_decfloat_rounding),
            T(test_dates),
            T(test_dates_server_words),
            T(test_timezones),
            T(test_strings),
            T(test_charsets),
            T(test_char_padding_multibyte),
            T(test_boolean),
            T(test_blobs),
            T(test_nulls),
            T(test_client_conversion_errors),
            T(test_client_errors_match_server),
            T(test_client_errors_match_server_statements),
            T(test_getters),
        };
#undef T
        if (create_tables(t) == 0)
            failed += _cmocka_run_group_tests(t->name, tests, N_ELEMS(tests),
                                              NULL, NULL);
        else
            failed++;
        if (drop_tables(t) < 0)
            failed++;
    }
    return failed ? 1 : 0;
}
