/*
 * Parameter binding and column text (lib/values.c) and the multi-byte
 * character counting (lib/types.c) on arbitrary input, without a server.
 * Byte 0 picks a described type (low 4 bits) and what to do (bits 4-5:
 * bind as text, bind as bytes, read as a CHAR column of that type's
 * character set, count characters); the rest is the value.
 *
 * Properties: a bind returns 0 or FFB_E_INVAL and never crashes; a failed
 * bind leaves the parameter unbound, with a message and, when it carries a
 * status vector, isc_dsql_error first and a SQLSTATE of class 22 or 42;
 * a successful one keeps its text within 32765 bytes, and text sent for
 * the server is the input itself. A CHAR value reads as a prefix of its
 * bytes with only blanks cut. Counting and skipping characters agree.
 */
#include <string.h>

#include "include/fastfb.h"
#include "lib/internal.h"
#include "lib/types.h"
#include "tests/fuzz/fuzz.h"

typedef struct var {
    int sqltype, scale, length, charset, numeric;
} var;

static const var types[16] = {
    {FFBP_SQL_SHORT, 0, 2, 0, 0},     {FFBP_SQL_LONG, -2, 4, 0, 2},
    {FFBP_SQL_INT64, -4, 8, 0, 1},    {FFBP_SQL_INT128, -10, 16, 0, 1},
    {FFBP_SQL_FLOAT, 0, 4, 0, 0},     {FFBP_SQL_DOUBLE, 0, 8, 0, 0},
    {FFBP_SQL_DEC16, 0, 8, 0, 0},     {FFBP_SQL_TYPE_DATE, 0, 4, 0, 0},
    {FFBP_SQL_TIMESTAMP, 0, 8, 0, 0}, {FFBP_SQL_BOOLEAN, 0, 1, 0, 0},
    {FFBP_SQL_VARYING, 0, 20, 4, 0},  {FFBP_SQL_TEXT, 0, 6, 5, 0},
    {FFBP_SQL_TEXT, 0, 12, 69, 0},    {FFBP_SQL_VARYING, 0, 8, 0, 0},
    {FFBP_SQL_TEXT, 0, 9, 3, 0},      {FFBP_SQL_TEXT, 0, 4, 56, 0},
};

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
    FUZZ_CHECK(ffbp_item_from_sql(v->sqltype, c->subtype, v->scale, v->length,
                                  it) == FFBP_OK);
}

static void check_bind(ffb_stmt *s, ffb__param *pa, int rc, const char *p,
                       size_t n) {
    const ffb_error *e = ffb_conn_error(s->conn);
    FUZZ_CHECK(rc == 0 || rc == FFB_E_INVAL);
    if (rc < 0) {
        FUZZ_CHECK(!pa->set);
        FUZZ_CHECK(ffb_error_message(e)[0] != '\0');
        if (ffb_error_count(e) > 0) {
            const char *st = ffb_error_sqlstate(e);
            FUZZ_CHECK(ffb_error_gds(e) == FFB_GDS_DSQL_ERROR);
            FUZZ_CHECK(ffb_error_sqlcode(e) == -303);
            FUZZ_CHECK(strncmp(st, "22", 2) == 0 || strcmp(st, "42000") == 0);
        }
        return;
    }
    FUZZ_CHECK(pa->set && !pa->is_null);
    if (pa->item.blr == FFBP_BLR_VARYING2) {
        FUZZ_CHECK(pa->len <= 32765 && pa->len <= n);
        FUZZ_CHECK(pa->len == 0 || memcmp(pa->data, p, pa->len) == 0);
    }
    ffb__free(s->conn->alloc, pa->data);
    memset(pa, 0, sizeof(*pa));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    const var *v = &types[data[0] & 15];
    int what = (data[0] >> 4) & 3;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;

    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = "localhost:/nowhere.fdb";
    ffb_conn *conn = NULL;
    if (ffb_conn_new(&o, &conn) != 0)
        return 0;
    ffb_stmt s;
    ffb__col col;
    ffbp_item item;
    ffb__param pa;
    memset(&s, 0, sizeof(s));
    memset(&pa, 0, sizeof(pa));
    col_from(&col, &item, v);
    s.conn = conn;
    s.prepared = 1;

    if (what == 0 || what == 1) {
        s.in.n = 1;
        s.in.cols = &col;
        s.in.items = &item;
        s.params = &pa;
        int rc = what == 0 ? ffb_stmt_bind_text(&s, 0, p, n)
                           : ffb_stmt_bind_bytes(&s, 0, p, n);
        check_bind(&s, &pa, rc, p, n);
    } else if (what == 2) {
        /* The input as a CHAR column of the type's set (its length is
           the input's). */
        var cv = {FFBP_SQL_TEXT, 0, (int)(n > 32767 ? 32767 : n), v->charset,
                  0};
        uint32_t off = 0, len = (uint32_t)cv.length;
        ffb__row row = {0};
        row.len = len;
        col_from(&col, &item, &cv);
        s.out.n = 1;
        s.out.cols = &col;
        s.out.items = &item;
        s.rows.data = (uint8_t *)(uintptr_t)p;
        s.rows.len = len;
        s.rowv = &row;
        s.nrows = 1;
        s.cur = 1;
        s.row_off = &off;
        s.row_len = &len;
        const char *t = NULL;
        size_t tl = 0;
        if (len > 0 && ffb_stmt_get_text(&s, 0, &t, &tl) == 0) {
            FUZZ_CHECK(t == p && tl <= len);
            for (size_t i = tl; i < len; i++)
                FUZZ_CHECK(p[i] == ' ');
        }
    } else {
        int cs = v->charset;
        long chars = ffb__mb_chars(cs, p, n);
        size_t all = ffb__mb_skip(cs, p, n, chars < 0 ? 0 : chars);
        FUZZ_CHECK(all <= n);
        if (chars >= 0) {
            FUZZ_CHECK(all == n);
            size_t half = ffb__mb_skip(cs, p, n, chars / 2);
            FUZZ_CHECK(half <= all);
            if (cs != 3 && cs != 4)
                FUZZ_CHECK(ffb__mb_chars(cs, p, half) == chars / 2);
        }
    }
    ffb__free(conn->alloc, s.textbuf);
    ffb_conn_free(conn);
    return 0;
}
