/*
 * Parameter binding and column getters: conversions between C values and
 * the wire form of each SQL type (reference 02, sections 9 and 10).
 *
 * Parameters are converted on the client to the described type, so a value
 * that cannot be converted never reaches the server. Text parameters travel
 * as blr_varying2 in the parameter's own character set, with its declared
 * length as limit. Two kinds go to the server as text and are converted
 * there: time zone values (they need the zone rules) and blob contents
 * (the server creates the blob).
 */
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/errmsg.h"
#include "lib/internal.h"
#include "lib/types.h"

#define MAX_VARYING 32765


static void be128(uint8_t *p, ffb__i128 v) {
    ffbp_be64_put(p, (uint64_t)((ffb__u128)v >> 64));
    ffbp_be64_put(p + 8, (uint64_t)v);
}

static ffb__i128 rd128(const uint8_t *p) {
    return (ffb__i128)((ffb__u128)ffbp_be64_get(p) << 64 | ffbp_be64_get(p + 8));
}

/* ---- number text in the "C" locale ------------------------------------- */

/* strtod and the %g conversions follow LC_NUMERIC (a de_DE application
   would get and be expected to give "2,5"). Number text on the wire and
   at the API is locale-independent, so both run with a "C" LC_NUMERIC
   installed for the calling thread only (uselocale), and the thread's
   previous locale is put back at once. The locale object is made once and
   kept for the life of the process; threads racing to make it agree on one
   and free the others. */
static _Atomic(locale_t) c_numeric_loc;

static locale_t c_numeric(void) {
    locale_t l = atomic_load_explicit(&c_numeric_loc, memory_order_acquire);
    if (l != (locale_t)0)
        return l;
    locale_t made = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (made == (locale_t)0)
        return (locale_t)0;
    locale_t expected = (locale_t)0;
    if (atomic_compare_exchange_strong_explicit(&c_numeric_loc, &expected,
                                                made, memory_order_acq_rel,
                                                memory_order_acquire))
        return made;
    freelocale(made);
    return expected;
}

/* snprintf(buf, size, "%.*g", prec, d) with '.' as decimal point. Returns
   snprintf's value, or -1 without a "C" locale object (out of memory). */
static int fmt_g(char *buf, size_t size, int prec, double d) {
    locale_t c = c_numeric();
    if (c == (locale_t)0)
        return -1;
    locale_t prev = uselocale(c);
    int n = snprintf(buf, size, "%.*g", prec, d);
    uselocale(prev);
    return n;
}

/* strtod with '.' as decimal point. Without a "C" locale object (out of
   memory) nothing is read: *end = s, which callers take as "not a number". */
static double parse_double(const char *s, char **end) {
    locale_t c = c_numeric();
    if (c == (locale_t)0) {
        *end = (char *)s;
        return 0;
    }
    locale_t prev = uselocale(c);
    double d = strtod(s, end);
    uselocale(prev);
    return d;
}

static const char *type_name(int sqltype) {
    switch (sqltype) {
    case FFBP_SQL_TEXT:
        return "CHAR";
    case FFBP_SQL_VARYING:
        return "VARCHAR";
    case FFBP_SQL_SHORT:
        return "SMALLINT";
    case FFBP_SQL_LONG:
        return "INTEGER";
    case FFBP_SQL_INT64:
        return "BIGINT";
    case FFBP_SQL_INT128:
        return "INT128";
    case FFBP_SQL_FLOAT:
        return "FLOAT";
    case FFBP_SQL_DOUBLE:
        return "DOUBLE PRECISION";
    case FFBP_SQL_DEC16:
        return "DECFLOAT(16)";
    case FFBP_SQL_DEC34:
        return "DECFLOAT(34)";
    case FFBP_SQL_TYPE_DATE:
        return "DATE";
    case FFBP_SQL_TYPE_TIME:
        return "TIME";
    case FFBP_SQL_TIMESTAMP:
        return "TIMESTAMP";
    case FFBP_SQL_TIME_TZ:
    case FFBP_SQL_TIME_TZ_EX:
        return "TIME WITH TIME ZONE";
    case FFBP_SQL_TIMESTAMP_TZ:
    case FFBP_SQL_TIMESTAMP_TZ_EX:
        return "TIMESTAMP WITH TIME ZONE";
    case FFBP_SQL_BOOLEAN:
        return "BOOLEAN";
    case FFBP_SQL_BLOB:
        return "BLOB";
    case FFBP_SQL_ARRAY:
        return "ARRAY";
    case FFBP_SQL_NULL:
        return "NULL";
    default:
        return "unknown type";
    }
}

static ffb__i128 pow10i(int n) {
    ffb__i128 v = 1;
    while (n-- > 0)
        v *= 10;
    return v;
}

/* ---- binding ------------------------------------------------------------------------ */

enum vkind { V_NUM, V_DOUBLE, V_BOOL, V_TEXT, V_BYTES, V_DATE, V_TIME, V_TS };

typedef struct value {
    int kind;
    ffb__i128 num;   /* V_NUM: unscaled */
    int scale;
    double d;
    int b;
    const char *s;   /* V_TEXT, V_BYTES */
    size_t len;
    int32_t date;
    uint32_t time;
} value;

/* The widest precision each integer storage holds: NUMERIC(p,s) and
   DECIMAL(p,s) are stored in SMALLINT (p <= 4), INTEGER (p <= 9), BIGINT
   (p <= 18) or INT128 (p <= 38), and the server checks a value against
   the storage's range, not the declared precision (which the describe
   does not carry). */
static int storage_precision(int sqltype) {
    switch (sqltype) {
    case FFBP_SQL_SHORT:
        return 4;
    case FFBP_SQL_LONG:
        return 9;
    case FFBP_SQL_INT64:
        return 18;
    case FFBP_SQL_INT128:
        return 38;
    default:
        return 0;
    }
}

/* The type of a described column or parameter as SQL would declare it:
   "NUMERIC(9,2)", "VARCHAR(5) CHARACTER SET UTF8", "INTEGER". Returns buf. */
static const char *decl_type(const ffb__col *c, char *buf, size_t size) {
    int p = storage_precision(c->sqltype);
    const char *cs = ffb__charset_name(c->charset);
    int bpc = ffb__charset_max_bytes(c->charset);
    if (p && (c->scale < 0 || c->subtype == 1 || c->subtype == 2)) {
        snprintf(buf, size, "%s(%d,%d)",
                 c->subtype == 2 ? "DECIMAL" : "NUMERIC", p, -c->scale);
    } else if (c->sqltype == FFBP_SQL_TEXT || c->sqltype == FFBP_SQL_VARYING) {
        snprintf(buf, size, "%s(%d) CHARACTER SET %s", type_name(c->sqltype),
                 c->length / (bpc > 0 ? bpc : 1), cs ? cs : "unknown");
    } else {
        snprintf(buf, size, "%s", type_name(c->sqltype));
    }
    return buf;
}

/* A value for a message: text quoted and cut at 64 bytes ("..." marks
   the cut), numbers bare. */
static const char *shown(const char *s, size_t len, int quote, char *buf,
                         size_t size) {
    const size_t max = 64;
    snprintf(buf, size, "%s%.*s%s%s", quote ? "\"" : "",
             (int)(len > max ? max : len), s, len > max ? "..." : "",
             quote ? "\"" : "");
    return buf;
}

static int bind_fail(ffb_stmt *stmt, unsigned idx, const char *fmt,
                     const char *what) {
    char t[96];
    return ffb__error_set(
        &stmt->conn->err, FFB_E_INVAL, "parameter %u (%s): %s %s", idx + 1,
        decl_type(&stmt->in.cols[idx], t, sizeof(t)), fmt, what);
}

/*
 * Conversions refused on the client report the status vector the server
 * gives when it converts the same value in an input message (seen on
 * Firebird 3.0.11 and 4.0.5 by sending the value in the type the server
 * then converts; tests/integration/test_types.c compares them):
 *   dsql_error, sqlerr(-303), then
 *   C_RANGE      arith_except, numeric_out_of_range          22003
 *   C_TRUNC      arith_except, string_truncation,
 *                trunc_limits(limit, actual)                  22001
 *   C_CAST       convert_error(arg)                           22018
 *   C_MALFORMED  malformed_string                             42000
 * so ffb_error_gds() is isc_dsql_error, ffb_error_sqlcode() -303 and
 * ffb_error_sqlstate() the class of the failure, as from the server. The
 * result code stays FFB_E_INVAL: nothing was sent. The first line of the
 * message names the parameter, its declared type and the value.
 */
enum conv { C_RANGE, C_TRUNC, C_CAST, C_MALFORMED };

#if defined(__GNUC__)
__attribute__((format(printf, 7, 8)))
#endif
static int
conv_fail(ffb_stmt *stmt, unsigned idx, int kind, const char *arg, long limit,
          long actual, const char *fmt, ...) {
    char t[96], line[512];
    int n = snprintf(line, sizeof(line), "parameter %u (%s): ", idx + 1,
                     decl_type(&stmt->in.cols[idx], t, sizeof(t)));
    if (n > 0 && (size_t)n < sizeof(line)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
        va_end(ap);
    }
    ffbp_status_arg a[10];
    size_t k = 0;
    a[k++] = (ffbp_status_arg){FFBP_ARG_GDS, (int32_t)FFB__GDS_CODE_DSQL_ERROR,
                               NULL, 0};
    a[k++] =
        (ffbp_status_arg){FFBP_ARG_GDS, (int32_t)FFB__GDS_CODE_SQLERR, NULL, 0};
    a[k++] = (ffbp_status_arg){FFBP_ARG_NUMBER, -303, NULL, 0};
    switch (kind) {
    case C_RANGE:
    case C_TRUNC:
        a[k++] = (ffbp_status_arg){
            FFBP_ARG_GDS, (int32_t)FFB__GDS_CODE_ARITH_EXCEPT, NULL, 0};
        if (kind == C_RANGE) {
            a[k++] = (ffbp_status_arg){
                FFBP_ARG_GDS, (int32_t)FFB__GDS_CODE_NUMERIC_OUT_OF_RANGE, NULL,
                0};
            break;
        }
        a[k++] = (ffbp_status_arg){
            FFBP_ARG_GDS, (int32_t)FFB__GDS_CODE_STRING_TRUNCATION, NULL, 0};
        a[k++] = (ffbp_status_arg){
            FFBP_ARG_GDS, (int32_t)FFB__GDS_CODE_TRUNC_LIMITS, NULL, 0};
        a[k++] = (ffbp_status_arg){FFBP_ARG_NUMBER, (int32_t)limit, NULL, 0};
        a[k++] = (ffbp_status_arg){FFBP_ARG_NUMBER, (int32_t)actual, NULL, 0};
        break;
    case C_CAST:
        a[k++] = (ffbp_status_arg){
            FFBP_ARG_GDS, (int32_t)FFB__GDS_CODE_CONVERT_ERROR, NULL, 0};
        a[k++] = (ffbp_status_arg){FFBP_ARG_STRING, 0,
                                   (const uint8_t *)(arg ? arg : ""),
                                   (uint32_t)strlen(arg ? arg : "")};
        break;
    default:
        a[k++] = (ffbp_status_arg){
            FFBP_ARG_GDS, (int32_t)FFB__GDS_CODE_MALFORMED_STRING, NULL, 0};
        break;
    }
    ffbp_status st = {a, sizeof(a) / sizeof(a[0]), k, k};
    return ffb__error_from_status(&stmt->conn->err, FFB_E_INVAL, &st, line);
}

/* `pa` is bind_value's working copy of the parameter: its old buffer still
   belongs to the bound parameter and is freed by bind_value only once the
   new value is complete (a failed bind leaves the old binding intact). */
static int store_bytes(ffb_stmt *stmt, ffb__param *pa, const char *s,
                       size_t len) {
    uint8_t *p = ffb__malloc(stmt->conn->alloc, len ? len : 1);
    if (!p)
        return ffb__fatal(stmt->conn, FFB_E_NOMEM, "out of memory");
    if (len)
        memcpy(p, s, len);
    pa->data = p;
    pa->len = len;
    return 0;
}

/* Text for a text column: checked against the declared length of the
   column, counted as the server counts it - characters of the column's
   character set, bytes for NONE and OCTETS. Trailing pad characters
   (blanks; zero bytes for OCTETS) beyond the length are dropped, as the
   server drops them (it keeps the ones that fit: 'abc   ' into VARCHAR(5)
   is 'abc  '); anything else beyond it is a truncation error. */
static int bind_text_col(ffb_stmt *stmt, unsigned idx, ffb__param *pa,
                         const char *s, size_t len, int bytes) {
    const ffb__col *c = &stmt->in.cols[idx];
    int cs = bytes ? 1 : c->charset;
    int bpc = ffb__charset_max_bytes(cs);
    if (bpc <= 0)
        bpc = 1;
    int utf8 = cs == 4 || cs == 3;
    long chars = ffb__mb_chars(cs, s, len);
    if (chars < 0)
        return conv_fail(stmt, idx, C_MALFORMED, NULL, 0, 0,
                         "the text is not valid UTF-8");
    long max_chars = c->length / bpc;
    const char *unit =
        bpc == 1 && !utf8 && (c->charset == 0 || c->charset == 1 || bytes)
            ? "bytes"
            : "characters";
    if (chars > max_chars) {
        /* The pad character: a blank, a zero byte for OCTETS. */
        char pad = c->charset == 1 ? '\0' : ' ';
        size_t keep = ffb__mb_skip(cs, s, len, max_chars), end = len;
        while (end > keep && s[end - 1] == pad)
            end--;
        if (end > keep) {
            char sv[80];
            return conv_fail(stmt, idx, C_TRUNC, NULL, max_chars, chars,
                             "%s is %ld %s long, longer than the %ld the "
                             "parameter holds",
                             shown(s, len, 1, sv, sizeof(sv)), chars, unit,
                             max_chars);
        }
        len = keep;
    }
    if (len > MAX_VARYING)
        return bind_fail(stmt, idx, "a string", "longer than 32765 bytes");
    pa->item.blr = FFBP_BLR_VARYING2;
    pa->item.texttype = (uint16_t)c->subtype;
    pa->item.length = (uint16_t)c->length;
    pa->item.scale = 0;
    pa->item.subtype = 0;
    return store_bytes(stmt, pa, s, len);
}

/*
 * A value sent as text and converted by the server: the parameter's item
 * in the input message becomes a VARCHAR of the text's length (character
 * set NONE, so the bytes reach the converter as they are), which the
 * server converts to the described type with its own rules. The message
 * format travels with every execution, so this costs nothing extra.
 */
static int bind_as_text(ffb_stmt *stmt, ffb__param *pa, const char *s,
                        size_t len, int charset) {
    if (len > MAX_VARYING)
        return ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                              "value longer than 32765 bytes");
    pa->item.blr = FFBP_BLR_VARYING2;
    pa->item.texttype = (uint16_t)charset;
    pa->item.length = (uint16_t)(len ? len : 1);
    pa->item.scale = 0;
    pa->item.subtype = 0;
    return store_bytes(stmt, pa, s, len);
}

/* The shortest %.<prec>g text that reads back as the same value (as a
   float when `is_float`). Every decimal of FLT_DIG (DBL_DIG) digits reads
   back as itself, so for a normal number the search starts there; a
   subnormal has fewer significant bits and may need fewer digits (1e-45
   is the smallest float). */
static int fmt_shortest(char *buf, size_t size, double d, int is_float) {
    int lo = is_float ? FLT_DIG : DBL_DIG, hi = is_float ? 9 : 17, n = -1;
    if (!isfinite(d))
        return fmt_g(buf, size, hi, d);
    if (d != 0 && fabs(d) < (is_float ? FLT_MIN : DBL_MIN))
        lo = 1;
    for (int prec = lo; prec <= hi; prec++) {
        char *end;
        n = fmt_g(buf, size, prec, d);
        if (n < 0 || (size_t)n >= size)
            return n;
        double back = parse_double(buf, &end);
        if (is_float ? (float)back == (float)d : back == d)
            break;
    }
    return n;
}

/* Render a value as text, for text columns and messages. */
static int value_text(const value *v, char *buf, size_t size, size_t *len) {
    int n;
    switch (v->kind) {
    case V_NUM:
        n = ffb__dec_format(v->num, v->scale, buf, size);
        break;
    case V_DOUBLE:
        n = fmt_shortest(buf, size, v->d, 0);
        break;
    case V_BOOL:
        n = snprintf(buf, size, "%s", v->b ? "TRUE" : "FALSE");
        break;
    case V_DATE:
        n = ffb__date_format(v->date, buf, size);
        break;
    case V_TIME:
        n = ffb__time_format(v->time, buf, size);
        break;
    case V_TS:
        n = ffb__timestamp_format(v->date, v->time, buf, size);
        break;
    case V_TEXT:
    case V_BYTES:
        n = snprintf(buf, size, "%.*s", (int)(v->len < 64 ? v->len : 64), v->s);
        break;
    default:
        return -1;
    }
    if (n < 0 || (size_t)n >= size)
        return -1;
    *len = (size_t)n;
    return 0;
}

/* A value the type cannot take (a boolean for an INTEGER, a number for a
   DATE): the server's convert_error, whose argument is the value as text
   - for a boolean the word BOOLEAN, as the server has it. */
static int cast_fail(ffb_stmt *stmt, unsigned idx, const value *v) {
    char text[80];
    size_t tlen = 0;
    if (v->kind == V_BOOL)
        snprintf(text, sizeof(text), "BOOLEAN");
    else if (value_text(v, text, sizeof(text), &tlen) < 0)
        snprintf(text, sizeof(text), "?");
    static const char *const kinds[] = {"a number", "a double",   "a boolean",
                                        "text",     "bytes",      "a date",
                                        "a time",   "a timestamp"};
    return conv_fail(stmt, idx, C_CAST, text, 0, 0, "cannot take %s (%s)",
                     kinds[v->kind], text);
}

/* The value does not fit the type's range. */
static int range_fail(ffb_stmt *stmt, unsigned idx, const value *v) {
    const ffb__col *c = &stmt->in.cols[idx];
    char text[80], sv[100], lim[120] = "";
    size_t tlen = 0;
    if (value_text(v, text, sizeof(text), &tlen) < 0)
        snprintf(text, sizeof(text), "the value");
    int p = storage_precision(c->sqltype);
    if (p && p < 38) {
        ffb__i128 hi = c->sqltype == FFBP_SQL_SHORT  ? INT16_MAX
                       : c->sqltype == FFBP_SQL_LONG ? INT32_MAX
                                                     : INT64_MAX;
        char a[48], b[48];
        ffb__dec_format(-hi - 1, c->scale, a, sizeof(a));
        ffb__dec_format(hi, c->scale, b, sizeof(b));
        snprintf(lim, sizeof(lim), " (%s .. %s)", a, b);
    }
    return conv_fail(stmt, idx, C_RANGE, NULL, 0, 0, "%s is out of range%s",
                     v->kind == V_TEXT ? shown(v->s, v->len, 1, sv, sizeof(sv))
                                       : shown(text, tlen, 0, sv, sizeof(sv)),
                     lim);
}

static int int_range(int sqltype, ffb__i128 v) {
    switch (sqltype) {
    case FFBP_SQL_SHORT:
        return v >= -32768 && v <= 32767;
    case FFBP_SQL_LONG:
        return v >= INT32_MIN && v <= INT32_MAX;
    case FFBP_SQL_INT64:
        return v >= INT64_MIN && v <= INT64_MAX;
    default:
        return 1;
    }
}

/*
 * Text for FLOAT / DOUBLE PRECISION that the client converts itself
 * (correctly rounded, with strtod): the plain decimal form the server reads
 * too - [blanks][sign]digits[.digits][e[sign]digits][blanks], a digit on
 * one side of the point at least - at most 40 characters, an exponent of at
 * most two digits, and a value whose magnitude is zero or within 1e-290 ..
 * 1e290 (FLT_MIN .. FLT_MAX for FLOAT). Everything else goes to the server
 * as text, which accepts or refuses it by its own rules: "NaN", "inf" and
 * hex are conversion errors there, "1e400", "1e-310", "0e500" and
 * 2.2250738585072014e-308 out of range, a FLOAT beyond 3.4e38 too, a
 * fraction of 50 digits a truncation, while FLOAT takes 1e-40 (seen on
 * Firebird 3.0.11 and 4.0.5). Returns 1 with *out set, or 0.
 */
static int float_text(const char *s, size_t len, int is_float, double *out) {
    char buf[48];
    size_t i = 0, n = len;
    while (i < n && s[i] == ' ')
        i++;
    while (n > i && s[n - 1] == ' ')
        n--;
    if (n - i == 0 || n - i > 40)
        return 0;
    size_t j = i, digits = 0;
    if (s[j] == '+' || s[j] == '-')
        j++;
    for (; j < n && s[j] >= '0' && s[j] <= '9'; j++)
        digits++;
    if (j < n && s[j] == '.')
        for (j++; j < n && s[j] >= '0' && s[j] <= '9'; j++)
            digits++;
    if (digits == 0)
        return 0;
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        j++;
        if (j < n && (s[j] == '+' || s[j] == '-'))
            j++;
        while (j < n && s[j] == '0')
            j++;
        size_t e = j;
        while (j < n && s[j] >= '0' && s[j] <= '9')
            j++;
        if (j - e > 2 || (j == e && (s[j - 1] < '0' || s[j - 1] > '9')))
            return 0;
    }
    if (j != n)
        return 0;
    memcpy(buf, s + i, n - i);
    buf[n - i] = '\0';
    char *end;
    double d = parse_double(buf, &end);
    if (*end != '\0' || !isfinite(d))
        return 0;
    double a = fabs(d);
    if (a != 0 &&
        (is_float ? a > FLT_MAX || a < FLT_MIN : a > 1e290 || a < 1e-290))
        return 0;
    *out = d;
    return 1;
}

static int bind_value(ffb_stmt *stmt, unsigned idx, const value *v) {
    if (!stmt)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    if (!stmt->prepared)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the statement is not prepared");
    if (idx >= stmt->in.n)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "parameter %u does not exist (the statement "
                              "has %zu)",
                              idx + 1, stmt->in.n);
    const ffb__col *c = &stmt->in.cols[idx];
    ffb__param *pa = &stmt->params[idx];
    ffb__param tmp = *pa;
    tmp.item = stmt->in.items[idx];
    tmp.is_null = 0;
    tmp.set = 1;
    int rc = 0;
    ffb__i128 iv = 0;
    char text[128];
    size_t tlen;
    int as_text = 0; /* the server converts the text */

    /* Bytes for a type that is not text: the server converts OCTETS as it
       converts text (Firebird 3.0.11: bytes '12' are 12 for an INTEGER,
       'abc' a conversion error), so they go to it as they are. */
    if (v->kind == V_BYTES && c->sqltype != FFBP_SQL_TEXT &&
        c->sqltype != FFBP_SQL_VARYING && c->sqltype != FFBP_SQL_BLOB &&
        c->sqltype != FFBP_SQL_NULL && c->sqltype != FFBP_SQL_ARRAY &&
        c->sqltype != FFBP_SQL_QUAD) {
        if ((rc = bind_as_text(stmt, &tmp, v->s, v->len, 1)) < 0)
            return rc;
        goto bound;
    }

    switch (c->sqltype) {
    case FFBP_SQL_SHORT:
    case FFBP_SQL_LONG:
    case FFBP_SQL_INT64:
    case FFBP_SQL_INT128: {
        int overflow = 0;
        if (v->kind == V_NUM) {
            if (ffb__dec_rescale(v->num, v->scale, c->scale, &iv) < 0)
                return range_fail(stmt, idx, v);
        } else if (v->kind == V_DOUBLE) {
            if (!isfinite(v->d))
                return range_fail(stmt, idx, v);
            double x = v->d * (double)pow10i(-c->scale);
            if (fabs(x) > 1.7e38)
                return range_fail(stmt, idx, v);
            x = x < 0 ? -floor(-x + 0.5) : floor(x + 0.5);
            iv = (ffb__i128)x;
        } else if (v->kind == V_TEXT) {
            if (ffb__dec_parse(v->s, v->len, c->scale, &iv, &overflow) < 0) {
                if (overflow) /* a number, too big even for 128 bits */
                    return range_fail(stmt, idx, v);
                as_text = 1; /* "0x10", "abc": the server decides */
                break;
            }
        } else {
            return cast_fail(stmt, idx, v);
        }
        if (!int_range(c->sqltype, iv))
            return range_fail(stmt, idx, v);
        if (c->sqltype == FFBP_SQL_INT64)
            ffbp_be64_put(tmp.fixed, (uint64_t)(int64_t)iv);
        else if (c->sqltype == FFBP_SQL_INT128)
            be128(tmp.fixed, iv);
        else
            ffbp_be32_put(tmp.fixed, (uint32_t)(int32_t)iv);
        break;
    }
    case FFBP_SQL_FLOAT:
    case FFBP_SQL_DOUBLE: {
        int is_float = c->sqltype == FFBP_SQL_FLOAT;
        double d;
        if (v->kind == V_DOUBLE) {
            d = v->d;
        } else if (v->kind == V_NUM) {
            d = (double)v->num / (double)pow10i(-v->scale);
            if (v->scale > 0)
                d = (double)v->num * (double)pow10i(v->scale);
        } else if (v->kind == V_TEXT) {
            if (!float_text(v->s, v->len, is_float, &d)) {
                as_text = 1;
                break;
            }
        } else {
            return cast_fail(stmt, idx, v);
        }
        if (is_float && isfinite(d) && fabs(d) > FLT_MAX)
            return range_fail(stmt, idx, v);
        if (is_float) {
            float f = (float)d;
            uint32_t u;
            memcpy(&u, &f, 4);
            ffbp_be32_put(tmp.fixed, u);
        } else {
            uint64_t u;
            memcpy(&u, &d, 8);
            ffbp_be64_put(tmp.fixed, u);
        }
        break;
    }
    case FFBP_SQL_DEC16:
    case FFBP_SQL_DEC34: {
        const char *s = v->s;
        size_t n = v->len;
        if (v->kind != V_TEXT) {
            if (v->kind == V_NUM) {
                int k = ffb__dec_format(v->num, 0, text, sizeof(text) - 8);
                if (k < 0 || (size_t)k >= sizeof(text) - 8)
                    return range_fail(stmt, idx, v);
                tlen = (size_t)k + (size_t)snprintf(text + k, 8, "E%d", v->scale);
            } else if (v->kind == V_DOUBLE) {
                int k = fmt_g(text, sizeof(text), 17, v->d);
                if (k < 0 || (size_t)k >= sizeof(text))
                    return range_fail(stmt, idx, v);
                tlen = (size_t)k;
            } else {
                return cast_fail(stmt, idx, v);
            }
            s = text;
            n = tlen;
        }
        rc = c->sqltype == FFBP_SQL_DEC16 ? ffb__dec64_parse(s, n, tmp.fixed)
                                          : ffb__dec128_parse(s, n, tmp.fixed);
        if (rc < 0) {
            if (v->kind != V_TEXT)
                return range_fail(stmt, idx, v);
            as_text = 1;
            rc = 0;
        }
        break;
    }
    case FFBP_SQL_TYPE_DATE:
    case FFBP_SQL_TYPE_TIME:
    case FFBP_SQL_TIMESTAMP: {
        int32_t date = 0;
        uint32_t time = 0;
        if (v->kind == V_TEXT) {
            if (c->sqltype == FFBP_SQL_TYPE_TIME)
                rc = ffb__time_parse(v->s, v->len, &time);
            else if (c->sqltype == FFBP_SQL_TYPE_DATE)
                rc = ffb__date_parse(v->s, v->len, &date);
            else
                rc = ffb__timestamp_parse(v->s, v->len, &date, &time);
            if (rc < 0) { /* '29.02.2024', 'yesterday', '1 JAN 2024' ... */
                as_text = 1;
                rc = 0;
                break;
            }
        } else if (v->kind == V_DATE && c->sqltype != FFBP_SQL_TYPE_TIME) {
            date = v->date;
        } else if (v->kind == V_TIME && c->sqltype == FFBP_SQL_TYPE_TIME) {
            time = v->time;
        } else if (v->kind == V_TS) {
            date = v->date;
            time = v->time;
        } else {
            return cast_fail(stmt, idx, v);
        }
        if (c->sqltype == FFBP_SQL_TYPE_DATE) {
            ffbp_be32_put(tmp.fixed, (uint32_t)date);
        } else if (c->sqltype == FFBP_SQL_TYPE_TIME) {
            ffbp_be32_put(tmp.fixed, time);
        } else {
            ffbp_be32_put(tmp.fixed, (uint32_t)date);
            ffbp_be32_put(tmp.fixed + 4, time);
        }
        break;
    }
    case FFBP_SQL_TIME_TZ:
    case FFBP_SQL_TIME_TZ_EX:
    case FFBP_SQL_TIMESTAMP_TZ:
    case FFBP_SQL_TIMESTAMP_TZ_EX:
        if (v->kind != V_TEXT)
            return bind_fail(stmt, idx, "takes text with a zone,",
                             "e.g. \"2024-07-01 12:00 Europe/Prague\"");
        as_text = 1;
        break;
    case FFBP_SQL_BOOLEAN:
        if (v->kind == V_BOOL) {
            tmp.fixed[0] = v->b ? 1 : 0;
        } else if (v->kind == V_TEXT) {
            size_t a = 0, n = v->len;
            while (a < n && v->s[a] == ' ')
                a++;
            while (n > a && v->s[n - 1] == ' ')
                n--;
            if (n - a == 4 && strncasecmp(v->s + a, "true", 4) == 0) {
                tmp.fixed[0] = 1;
            } else if (n - a == 5 && strncasecmp(v->s + a, "false", 5) == 0) {
                tmp.fixed[0] = 0;
            } else {
                as_text = 1;
                break;
            }
        } else {
            return cast_fail(stmt, idx, v);
        }
        tmp.fixed[1] = tmp.fixed[2] = tmp.fixed[3] = 0;
        break;
    case FFBP_SQL_TEXT:
    case FFBP_SQL_VARYING:
        if (v->kind == V_TEXT || v->kind == V_BYTES) {
            rc = bind_text_col(stmt, idx, &tmp, v->s, v->len,
                               v->kind == V_BYTES || c->charset == 1);
        } else {
            if (value_text(v, text, sizeof(text), &tlen) < 0)
                return bind_fail(stmt, idx, "cannot take", "this value");
            rc = bind_text_col(stmt, idx, &tmp, text, tlen, 0);
        }
        if (rc < 0)
            return rc;
        break;
    case FFBP_SQL_BLOB:
        if (v->kind != V_TEXT && v->kind != V_BYTES)
            return bind_fail(stmt, idx, "takes text or bytes", "(contents)");
        /* The server creates the blob from the value (reference 02, 8.4). */
        rc = bind_as_text(stmt, &tmp, v->s, v->len,
                          c->subtype == 1 ? c->charset : 1);
        if (rc < 0)
            return rc;
        break;
    case FFBP_SQL_NULL:
        /* `? IS NULL`: only the null bit carries information. */
        break;
    default:
        return bind_fail(stmt, idx, "type", "not supported for binding");
    }
    if (as_text && (rc = bind_as_text(stmt, &tmp, v->s, v->len, 0)) < 0)
        return rc;
bound:
    /* tmp.data is a new buffer (text forms) or still the old one. */
    if (tmp.item.blr != FFBP_BLR_VARYING2 && tmp.item.blr != FFBP_BLR_VARYING &&
        tmp.item.blr != FFBP_BLR_TEXT && tmp.item.blr != FFBP_BLR_TEXT2) {
        tmp.data = NULL;
        tmp.len = 0;
    }
    if (pa->data != tmp.data)
        ffb__free(conn->alloc, pa->data);
    *pa = tmp;
    return 0;
}

int ffb_stmt_bind_null(ffb_stmt *stmt, unsigned idx) {
    if (!stmt)
        return FFB_E_INVAL;
    if (!stmt->prepared)
        return ffb__error_set(&stmt->conn->err, FFB_E_STATE,
                              "the statement is not prepared");
    if (idx >= stmt->in.n)
        return ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                              "parameter %u does not exist", idx + 1);
    ffb__param *pa = &stmt->params[idx];
    ffb__free(stmt->conn->alloc, pa->data);
    memset(pa, 0, sizeof(*pa));
    pa->set = 1;
    pa->is_null = 1;
    pa->item = stmt->in.items[idx];
    return 0;
}

int ffb_stmt_bind_int64(ffb_stmt *stmt, unsigned idx, int64_t v) {
    value x = {.kind = V_NUM, .num = v, .scale = 0};
    return bind_value(stmt, idx, &x);
}

int ffb_stmt_bind_numeric(ffb_stmt *stmt, unsigned idx, int64_t v, int scale) {
    if (scale < -38 || scale > 38)
        return stmt ? ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                                     "scale must be within -38..38")
                    : FFB_E_INVAL;
    value x = {.kind = V_NUM, .num = v, .scale = scale};
    return bind_value(stmt, idx, &x);
}

int ffb_stmt_bind_double(ffb_stmt *stmt, unsigned idx, double v) {
    value x = {.kind = V_DOUBLE, .d = v};
    return bind_value(stmt, idx, &x);
}

int ffb_stmt_bind_bool(ffb_stmt *stmt, unsigned idx, int v) {
    value x = {.kind = V_BOOL, .b = v != 0};
    return bind_value(stmt, idx, &x);
}

int ffb_stmt_bind_text(ffb_stmt *stmt, unsigned idx, const char *s,
                       size_t len) {
    if (!s)
        return FFB_E_INVAL;
    value x = {.kind = V_TEXT, .s = s, .len = len == (size_t)-1 ? strlen(s) : len};
    return bind_value(stmt, idx, &x);
}

int ffb_stmt_bind_bytes(ffb_stmt *stmt, unsigned idx, const void *p,
                        size_t len) {
    if (!p && len)
        return FFB_E_INVAL;
    value x = {.kind = V_BYTES, .s = p ? p : "", .len = len};
    return bind_value(stmt, idx, &x);
}

int ffb_stmt_bind_date(ffb_stmt *stmt, unsigned idx, int year, int month,
                       int day) {
    value x = {.kind = V_DATE};
    if (ffb__date_encode(year, month, day, &x.date) < 0)
        return stmt ? ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                                     "parameter %u: %04d-%02d-%02d is not a "
                                     "valid date",
                                     idx + 1, year, month, day)
                    : FFB_E_INVAL;
    return bind_value(stmt, idx, &x);
}

int ffb_stmt_bind_time(ffb_stmt *stmt, unsigned idx, int hour, int min,
                       int sec, int frac) {
    value x = {.kind = V_TIME};
    if (ffb__time_encode(hour, min, sec, frac, &x.time) < 0)
        return stmt ? ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                                     "parameter %u: not a valid time",
                                     idx + 1)
                    : FFB_E_INVAL;
    return bind_value(stmt, idx, &x);
}

int ffb_stmt_bind_timestamp(ffb_stmt *stmt, unsigned idx, int year, int month,
                            int day, int hour, int min, int sec, int frac) {
    value x = {.kind = V_TS};
    if (ffb__date_encode(year, month, day, &x.date) < 0 ||
        ffb__time_encode(hour, min, sec, frac, &x.time) < 0)
        return stmt ? ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                                     "parameter %u: not a valid timestamp",
                                     idx + 1)
                    : FFB_E_INVAL;
    return bind_value(stmt, idx, &x);
}

int ffb_stmt_bind_blob_id(ffb_stmt *stmt, unsigned idx, const uint8_t id[8]) {
    if (!stmt || !id)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    if (!stmt->prepared)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the statement is not prepared");
    if (idx >= stmt->in.n)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "parameter %u does not exist", idx + 1);
    if (stmt->in.cols[idx].sqltype != FFBP_SQL_BLOB &&
        stmt->in.cols[idx].sqltype != FFBP_SQL_QUAD &&
        stmt->in.cols[idx].sqltype != FFBP_SQL_ARRAY)
        return bind_fail(stmt, idx, "takes no", "blob id");
    ffb__param *pa = &stmt->params[idx];
    ffb__free(conn->alloc, pa->data);
    memset(pa, 0, sizeof(*pa));
    pa->set = 1;
    pa->item = stmt->in.items[idx];
    memcpy(pa->fixed, id, 8);
    return 0;
}

void ffb_stmt_clear_bindings(ffb_stmt *stmt) {
    if (!stmt || !stmt->params)
        return;
    for (size_t i = 0; i < stmt->in.n; i++) {
        ffb__free(stmt->conn->alloc, stmt->params[i].data);
        memset(&stmt->params[i], 0, sizeof(stmt->params[i]));
    }
}

/* ---- getters ---------------------------------------------------------------------- */

/* The current row's value of `col`: 0 with p/len, 1 for NULL, < 0 error. */
static int cell(const ffb_stmt *stmt, unsigned col, const uint8_t **p,
                uint32_t *len) {
    if (!stmt)
        return FFB_E_INVAL;
    if (stmt->cur == 0 || stmt->cur > stmt->nrows)
        return ffb__error_set(&stmt->conn->err, FFB_E_STATE,
                              "no current row (call ffb_stmt_fetch first)");
    if (col >= stmt->out.n)
        return ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                              "column %u does not exist (the statement has "
                              "%zu)",
                              col + 1, stmt->out.n);
    const ffb__row *r = &stmt->rowv[stmt->cur - 1];
    uint32_t off = stmt->row_off[r->offs + col];
    if (off == FFBP_NULL_OFFSET)
        return 1;
    *p = stmt->rows.data + r->pos + off;
    *len = stmt->row_len[r->offs + col];
    return 0;
}

static int get_fail(const ffb_stmt *stmt, unsigned col, const char *want) {
    char t[96];
    return ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                          "column %u (%s, %s) cannot be read as %s", col + 1,
                          ffb_stmt_column_name(stmt, col),
                          decl_type(&stmt->out.cols[col], t, sizeof(t)), want);
}

static int null_fail(const ffb_stmt *stmt, unsigned col) {
    return ffb__error_set(&stmt->conn->err, FFB_E_INVAL,
                          "column %u (%s) is NULL", col + 1,
                          ffb_stmt_column_name(stmt, col));
}

int ffb_stmt_is_null(const ffb_stmt *stmt, unsigned col) {
    const uint8_t *p;
    uint32_t len;
    int rc = cell(stmt, col, &p, &len);
    return rc < 0 ? rc : rc == 1;
}

/* An exact number: integer types (with scale), INT128. */
static int get_exact(const ffb_stmt *stmt, unsigned col, const uint8_t *p,
                     ffb__i128 *v, int *scale) {
    const ffbp_item *it = &stmt->out.items[col];
    *scale = it->scale;
    switch (it->blr) {
    case FFBP_BLR_SHORT:
    case FFBP_BLR_LONG:
        *v = (int32_t)ffbp_be32_get(p);
        return 0;
    case FFBP_BLR_INT64:
        *v = (int64_t)ffbp_be64_get(p);
        return 0;
    case FFBP_BLR_INT128:
        *v = rd128(p);
        return 0;
    default:
        return -1;
    }
}

/* Local date/time of a (possibly zoned) date/time column. */
static int get_datetime(const ffb_stmt *stmt, unsigned col, const uint8_t *p,
                        int32_t *date, uint32_t *time, int *has_date,
                        int *has_time, uint16_t *zone) {
    const ffbp_item *it = &stmt->out.items[col];
    int64_t offset = 0;
    *has_date = *has_time = 0;
    *zone = 0xFFFF;
    switch (it->blr) {
    case FFBP_BLR_SQL_DATE:
        *date = (int32_t)ffbp_be32_get(p);
        *has_date = 1;
        return 0;
    case FFBP_BLR_SQL_TIME:
        *time = ffbp_be32_get(p);
        *has_time = 1;
        return 0;
    case FFBP_BLR_TIMESTAMP:
        *date = (int32_t)ffbp_be32_get(p);
        *time = ffbp_be32_get(p + 4);
        *has_date = *has_time = 1;
        return 0;
    case FFBP_BLR_EX_TIME_TZ:
        *time = ffbp_be32_get(p);
        *zone = (uint16_t)ffbp_be32_get(p + 4);
        offset = (int16_t)(uint16_t)ffbp_be32_get(p + 8);
        *has_time = 1;
        break;
    case FFBP_BLR_EX_TIMESTAMP_TZ:
        *date = (int32_t)ffbp_be32_get(p);
        *time = ffbp_be32_get(p + 4);
        *zone = (uint16_t)ffbp_be32_get(p + 8);
        offset = (int16_t)(uint16_t)ffbp_be32_get(p + 12);
        *has_date = *has_time = 1;
        break;
    default:
        return -1;
    }
    /* UTC + offset = local time. */
    int64_t t = (int64_t)*time + offset * 60 * 10000;
    const int64_t day = 86400LL * 10000;
    int64_t d = 0;
    while (t < 0) {
        t += day;
        d--;
    }
    while (t >= day) {
        t -= day;
        d++;
    }
    *time = (uint32_t)t;
    if (*has_date)
        *date += (int32_t)d;
    return 0;
}

int ffb_stmt_get_int64(const ffb_stmt *stmt, unsigned col, int64_t *out) {
    const uint8_t *p = NULL;
    uint32_t len = 0;
    int rc = cell(stmt, col, &p, &len);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return null_fail(stmt, col);
    ffb__i128 v;
    int scale;
    if (get_exact(stmt, col, p, &v, &scale) == 0) {
        if (scale < 0) {
            ffb__i128 f = pow10i(-scale);
            if (v % f != 0)
                return get_fail(stmt, col, "an integer (it has a fraction)");
            v /= f;
        } else if (scale > 0) {
            if (ffb__dec_rescale(v, scale, 0, &v) < 0)
                return get_fail(stmt, col, "a 64-bit integer (out of range)");
        }
        if (v < INT64_MIN || v > INT64_MAX)
            return get_fail(stmt, col, "a 64-bit integer (out of range)");
        *out = (int64_t)v;
        return 0;
    }
    const ffbp_item *it = &stmt->out.items[col];
    if (it->blr == FFBP_BLR_TEXT || it->blr == FFBP_BLR_TEXT2 ||
        it->blr == FFBP_BLR_VARYING || it->blr == FFBP_BLR_VARYING2) {
        ffb__i128 a, b;
        int of = 0;
        if (ffb__dec_parse((const char *)p, len, 0, &a, &of) == 0 &&
            ffb__dec_parse((const char *)p, len, -4, &b, &of) == 0 &&
            a * 10000 == b && a >= INT64_MIN && a <= INT64_MAX) {
            *out = (int64_t)a;
            return 0;
        }
        return get_fail(stmt, col, "an integer (the text is not one)");
    }
    return get_fail(stmt, col, "an integer");
}

int ffb_stmt_get_numeric(const ffb_stmt *stmt, unsigned col, int64_t *value,
                         int *scale) {
    const uint8_t *p = NULL;
    uint32_t len;
    int rc = cell(stmt, col, &p, &len);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return null_fail(stmt, col);
    ffb__i128 v;
    int s;
    if (get_exact(stmt, col, p, &v, &s) < 0)
        return get_fail(stmt, col, "an exact number");
    if (v < INT64_MIN || v > INT64_MAX)
        return get_fail(stmt, col,
                        "a 64-bit numeric (out of range: read it as text)");
    *value = (int64_t)v;
    *scale = s;
    return 0;
}

int ffb_stmt_get_double(const ffb_stmt *stmt, unsigned col, double *out) {
    const uint8_t *p = NULL;
    uint32_t len;
    int rc = cell(stmt, col, &p, &len);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return null_fail(stmt, col);
    const ffbp_item *it = &stmt->out.items[col];
    ffb__i128 v;
    int scale;
    if (get_exact(stmt, col, p, &v, &scale) == 0) {
        *out = scale <= 0 ? (double)v / (double)pow10i(-scale)
                          : (double)v * (double)pow10i(scale);
        return 0;
    }
    if (it->blr == FFBP_BLR_FLOAT) {
        uint32_t u = ffbp_be32_get(p);
        float f;
        memcpy(&f, &u, 4);
        *out = f;
        return 0;
    }
    if (it->blr == FFBP_BLR_DOUBLE || it->blr == FFBP_BLR_D_FLOAT) {
        uint64_t u = ffbp_be64_get(p);
        memcpy(out, &u, 8);
        return 0;
    }
    if (it->blr == FFBP_BLR_DEC64 || it->blr == FFBP_BLR_DEC128) {
        char buf[64];
        int n = it->blr == FFBP_BLR_DEC64 ? ffb__dec64_format(p, buf, sizeof(buf))
                                          : ffb__dec128_format(p, buf, sizeof(buf));
        if (n <= 0 || (size_t)n >= sizeof(buf))
            return get_fail(stmt, col, "a double");
        /* A signalling NaN reads as a quiet one (strtod knows only NaN). */
        char *s = buf + (buf[0] == '-');
        if (s[0] == 's')
            memmove(s, s + 1, strlen(s));
        char *end;
        double d = parse_double(buf, &end);
        if (end == buf)
            return get_fail(stmt, col, "a double");
        *out = d;
        return 0;
    }
    return get_fail(stmt, col, "a double");
}

int ffb_stmt_get_bool(const ffb_stmt *stmt, unsigned col, int *out) {
    const uint8_t *p = NULL;
    uint32_t len;
    int rc = cell(stmt, col, &p, &len);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return null_fail(stmt, col);
    if (stmt->out.items[col].blr != FFBP_BLR_BOOL)
        return get_fail(stmt, col, "a boolean");
    *out = p[0] != 0; /* any non-zero byte reads as true (reference 9.2) */
    return 0;
}

static int text_buf(ffb_stmt *stmt, size_t need) {
    if (need <= stmt->textbuf_cap)
        return 0;
    char *b = ffb__realloc(stmt->conn->alloc, stmt->textbuf, need);
    if (!b)
        return ffb__fatal(stmt->conn, FFB_E_NOMEM, "out of memory");
    stmt->textbuf = b;
    stmt->textbuf_cap = need;
    return 0;
}

/* CHAR in a multi-byte character set arrives blank-padded to its byte
   length, characters x the set's maximum bytes per character (reference
   02, 10.5): CHAR(5) 'ab' in UTF8 comes as 'ab' + 18 blanks, CHAR(2) in
   SJIS_0208 as 4 bytes. The value is padded to its declared number of
   characters only, so the blanks beyond that are cut - one rule for every
   multi-byte set (UTF8, UNICODE_FSS, SJIS_0208, EUCJ_0208, KSC_5601,
   BIG_5, GB_2312, GBK, CP943C, GB18030), whatever the connection
   character set. */
static size_t char_value_len(const ffb__col *c, const uint8_t *p, size_t len) {
    int bpc = ffb__charset_max_bytes(c->charset);
    if (bpc <= 1 || c->length <= 0)
        return len;
    size_t i = ffb__mb_skip(c->charset, (const char *)p, len, c->length / bpc);
    for (size_t k = i; k < len; k++)
        if (p[k] != ' ')
            return len; /* not just padding: leave it as it came */
    return i;
}

int ffb_stmt_get_text(ffb_stmt *stmt, unsigned col, const char **out,
                      size_t *len_out) {
    const uint8_t *p = NULL;
    uint32_t len = 0;
    int rc = cell(stmt, col, &p, &len);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return null_fail(stmt, col);
    if (!out)
        return FFB_E_INVAL;
    const ffbp_item *it = &stmt->out.items[col];
    switch (it->blr) {
    case FFBP_BLR_TEXT:
    case FFBP_BLR_TEXT2:
        len = (uint32_t)char_value_len(&stmt->out.cols[col], p, len);
        /* fall through */
    case FFBP_BLR_VARYING:
    case FFBP_BLR_VARYING2:
        *out = (const char *)p; /* zero-copy: valid until the next fetch */
        if (len_out)
            *len_out = len;
        return 0;
    default:
        break;
    }
    if ((rc = text_buf(stmt, 160)) < 0)
        return rc;
    char *b = stmt->textbuf;
    size_t size = stmt->textbuf_cap;
    int n = -1;
    ffb__i128 v;
    int scale;
    if (get_exact(stmt, col, p, &v, &scale) == 0) {
        n = ffb__dec_format(v, scale, b, size);
    } else {
        switch (it->blr) {
        case FFBP_BLR_FLOAT: {
            uint32_t u = ffbp_be32_get(p);
            float f;
            memcpy(&f, &u, 4);
            n = fmt_shortest(b, size, (double)f, 1); /* 0.1f: "0.1" */
            break;
        }
        case FFBP_BLR_DOUBLE:
        case FFBP_BLR_D_FLOAT: {
            uint64_t u = ffbp_be64_get(p);
            double d;
            memcpy(&d, &u, 8);
            n = fmt_shortest(b, size, d, 0);
            break;
        }
        case FFBP_BLR_DEC64:
            n = ffb__dec64_format(p, b, size);
            break;
        case FFBP_BLR_DEC128:
            n = ffb__dec128_format(p, b, size);
            break;
        case FFBP_BLR_BOOL:
            n = snprintf(b, size, "%s", p[0] ? "true" : "false");
            break;
        case FFBP_BLR_SQL_DATE:
        case FFBP_BLR_SQL_TIME:
        case FFBP_BLR_TIMESTAMP:
        case FFBP_BLR_EX_TIME_TZ:
        case FFBP_BLR_EX_TIMESTAMP_TZ: {
            int32_t date = 0;
            uint32_t time = 0;
            int hd, ht;
            uint16_t zone;
            get_datetime(stmt, col, p, &date, &time, &hd, &ht, &zone);
            if (hd && ht)
                n = ffb__timestamp_format(date, time, b, size);
            else if (hd)
                n = ffb__date_format(date, b, size);
            else
                n = ffb__time_format(time, b, size);
            if (n > 0 && zone != 0xFFFF && (size_t)n + 2 < size) {
                b[n++] = ' ';
                int z = ffb__tz_name(zone, b + n, size - (size_t)n);
                if (z < 0)
                    z = snprintf(b + n, size - (size_t)n, "zone %u",
                                 (unsigned)zone);
                n += z;
            }
            break;
        }
        case FFBP_BLR_BLOB2:
        case FFBP_BLR_QUAD:
            return get_fail(stmt, col, "text (read blobs with the blob API)");
        default:
            return get_fail(stmt, col, "text");
        }
    }
    if (n < 0 || (size_t)n >= size)
        return get_fail(stmt, col, "text (formatting failed)");
    *out = b;
    if (len_out)
        *len_out = (size_t)n;
    return 0;
}

int ffb_stmt_get_text_trimmed(ffb_stmt *stmt, unsigned col, const char **out,
                              size_t *len_out) {
    size_t len = 0;
    int rc = ffb_stmt_get_text(stmt, col, out, &len);
    if (rc < 0)
        return rc;
    const ffbp_item *it = &stmt->out.items[col];
    if ((it->blr == FFBP_BLR_TEXT || it->blr == FFBP_BLR_TEXT2) &&
        stmt->out.cols[col].charset != 1 /* OCTETS pads with zeros */)
        len = ffb__rtrim_len(*out, len);
    if (len_out)
        *len_out = len;
    return 0;
}

static int get_dt(const ffb_stmt *stmt, unsigned col, int32_t *date,
                  uint32_t *time, int need_date, int need_time) {
    const uint8_t *p = NULL;
    uint32_t len;
    int rc = cell(stmt, col, &p, &len);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return null_fail(stmt, col);
    int hd, ht;
    uint16_t zone;
    *date = 0;
    *time = 0;
    if (get_datetime(stmt, col, p, date, time, &hd, &ht, &zone) < 0 ||
        (need_date && !hd) || (need_time && !ht))
        return get_fail(stmt, col,
                        need_date && need_time ? "a timestamp"
                        : need_date            ? "a date"
                                               : "a time");
    return 0;
}

int ffb_stmt_get_date(const ffb_stmt *stmt, unsigned col, int *year,
                      int *month, int *day) {
    int32_t d = 0;
    uint32_t t;
    int rc = get_dt(stmt, col, &d, &t, 1, 0);
    if (rc < 0)
        return rc;
    ffb__date_decode(d, year, month, day);
    return 0;
}

int ffb_stmt_get_time(const ffb_stmt *stmt, unsigned col, int *hour, int *min,
                      int *sec, int *frac) {
    int32_t d;
    uint32_t t;
    int rc = get_dt(stmt, col, &d, &t, 0, 1);
    if (rc < 0)
        return rc;
    ffb__time_decode(t, hour, min, sec, frac);
    return 0;
}

int ffb_stmt_get_timestamp(const ffb_stmt *stmt, unsigned col, int *year,
                           int *month, int *day, int *hour, int *min,
                           int *sec, int *frac) {
    int32_t d = 0;
    uint32_t t = 0;
    int rc = get_dt(stmt, col, &d, &t, 1, 0);
    if (rc < 0)
        return rc;
    ffb__date_decode(d, year, month, day);
    ffb__time_decode(t, hour, min, sec, frac);
    return 0;
}

int ffb_stmt_get_blob_id(const ffb_stmt *stmt, unsigned col, uint8_t out[8]) {
    const uint8_t *p = NULL;
    uint32_t len;
    int rc = cell(stmt, col, &p, &len);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return null_fail(stmt, col);
    const ffbp_item *it = &stmt->out.items[col];
    if (it->blr != FFBP_BLR_BLOB2 && it->blr != FFBP_BLR_QUAD)
        return get_fail(stmt, col, "a blob id");
    memcpy(out, p, 8);
    return 0;
}

/* ---- parameters without a describe (execute immediate) ------------------------- */

int ffb__values_input(ffb_conn *conn, const ffb_value *v, size_t n,
                      ffbp_writer *blr, ffbp_writer *msg) {
    if (n == 0)
        return 0;
    if (n > 32767)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "at most 32767 parameters (%zu given)", n);
    ffbp_item *items = ffb__malloc(conn->alloc, n * sizeof(*items));
    if (!items)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        ffbp_item it = {FFBP_BLR_LONG, 0, 0, 0, 0};
        switch (v[i].type) {
        case FFB_VALUE_NULL:
            break;
        case FFB_VALUE_INT64:
            it.blr = FFBP_BLR_INT64;
            break;
        case FFB_VALUE_NUMERIC:
            if (v[i].scale > 0 || v[i].scale < -18) {
                ffb__free(conn->alloc, items);
                return ffb__error_set(&conn->err, FFB_E_INVAL,
                                      "parameter %zu: scale %d is not in "
                                      "-18..0",
                                      i + 1, v[i].scale);
            }
            it.blr = FFBP_BLR_INT64;
            it.scale = (int8_t)v[i].scale;
            break;
        case FFB_VALUE_DOUBLE:
            it.blr = FFBP_BLR_DOUBLE;
            break;
        case FFB_VALUE_BOOL:
            it.blr = FFBP_BLR_BOOL;
            break;
        case FFB_VALUE_TEXT:
        case FFB_VALUE_BYTES:
            if ((!v[i].p && v[i].len) || v[i].len > 32765) {
                ffb__free(conn->alloc, items);
                return ffb__error_set(&conn->err, FFB_E_INVAL,
                                      "parameter %zu: text of %zu bytes "
                                      "(at most 32765, and not NULL)",
                                      i + 1, v[i].len);
            }
            /* blr_varying is text in the connection character set;
               bytes are OCTETS. */
            it.blr = v[i].type == FFB_VALUE_TEXT ? FFBP_BLR_VARYING
                                                 : FFBP_BLR_VARYING2;
            it.texttype = v[i].type == FFB_VALUE_BYTES ? 1 : 0;
            it.length = (uint16_t)(v[i].len ? v[i].len : 1);
            break;
        default:
            ffb__free(conn->alloc, items);
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "parameter %zu: unknown value type %d",
                                  i + 1, v[i].type);
        }
        items[i] = it;
    }
    int rc = ffbp_put_blr(blr, items, n);
    ffb__free(conn->alloc, items);
    if (rc != FFBP_OK)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "cannot build the parameter BLR");
    size_t bm = ffbp_msg_begin(msg, n);
    for (size_t i = 0; i < n; i++) {
        uint8_t b[8];
        switch (v[i].type) {
        case FFB_VALUE_NULL:
            ffbp_msg_set_null(msg, bm, i); /* and no value follows */
            break;
        case FFB_VALUE_INT64:
        case FFB_VALUE_NUMERIC:
            ffbp_put_i64(msg, v[i].i);
            break;
        case FFB_VALUE_DOUBLE: {
            uint64_t bits;
            memcpy(&bits, &v[i].d, 8);
            ffbp_be64_put(b, bits);
            ffbp_put_opaque(msg, b, 8);
            break;
        }
        case FFB_VALUE_BOOL:
            b[0] = v[i].i ? 1 : 0;
            ffbp_put_opaque(msg, b, 1);
            break;
        default: /* TEXT, BYTES */
            ffbp_put_u32(msg, (uint32_t)v[i].len);
            ffbp_put_opaque(msg, v[i].p, v[i].len);
            break;
        }
    }
    if (blr->failed || msg->failed)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    return 0;
}
