/* ffb-rest: the JSON row writer and error bodies. */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes escaped for a JSON string, without the quotes. */
static void escape(rbuf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        rbuf_add(b, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            rbuf_adds(b, "\\\"");
            break;
        case '\\':
            rbuf_adds(b, "\\\\");
            break;
        case '\n':
            rbuf_adds(b, "\\n");
            break;
        case '\r':
            rbuf_adds(b, "\\r");
            break;
        case '\t':
            rbuf_adds(b, "\\t");
            break;
        default: {
            char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            rbuf_add(b, u, 6);
        }
        }
    }
    rbuf_add(b, s + run, n - run);
}

void json_string(rbuf *b, const char *s, size_t n) {
    rbuf_addc(b, '"');
    escape(b, s, n);
    rbuf_addc(b, '"');
}

/* The length of the UTF-8 sequence at s (n > 0 bytes), or 0 when it is
   not one (RFC 3629: no overlong form, no surrogate, at most U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    unsigned cp = c & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void json_text(rbuf *b, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0, i = 0;
    rbuf_addc(b, '"');
    while (i < n) {
        size_t l = utf8_len(u + i, n - i);
        if (l) {
            i += l;
            continue;
        }
        escape(b, s + run, i - run);
        rbuf_adds(b, "\\ufffd");
        run = ++i;
    }
    escape(b, s + run, n - run);
    rbuf_addc(b, '"');
}

void json_double(rbuf *b, double d) {
    char tmp[40];
    if (!isfinite(d)) {
        rbuf_adds(b, "null");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    rbuf_adds(b, tmp);
}

int json_is_number(const char *s, size_t n) {
    size_t i = 0;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n || s[i] < '0' || s[i] > '9')
        return 0;
    if (s[i] == '0' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9')
        return 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    return i == n;
}

/* `v` as printf's "%0<w>d" would write it, at `out` (room for 12 bytes
   or w, whichever is more); returns the length. printf costs ~1,500
   instructions a call, and every date and time of a row took one. */
static size_t pad_int(char *out, int v, int w) {
    char d[10];
    int k = 0, neg = v < 0;
    unsigned u = neg ? 0u - (unsigned)v : (unsigned)v;
    size_t n = 0;
    do {
        d[k++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (neg)
        out[n++] = '-';
    for (int i = k + neg; i < w; i++)
        out[n++] = '0';
    while (k)
        out[n++] = d[--k];
    return n;
}

/* "\"Y-M-D", "\"H:M:S" or "\"Y-M-DTH:M:S" (printf's %04d and %02d) */
static void date_time(rbuf *b, int date, int y, int m, int d, int time, int h,
                      int mi, int se) {
    char t[96];
    size_t n = 0;
    t[n++] = '"';
    if (date) {
        n += pad_int(t + n, y, 4);
        t[n++] = '-';
        n += pad_int(t + n, m, 2);
        t[n++] = '-';
        n += pad_int(t + n, d, 2);
    }
    if (date && time)
        t[n++] = 'T';
    if (time) {
        n += pad_int(t + n, h, 2);
        t[n++] = ':';
        n += pad_int(t + n, mi, 2);
        t[n++] = ':';
        n += pad_int(t + n, se, 2);
    }
    rbuf_add(b, t, n);
}

static void frac4(rbuf *b, int frac) {
    if (frac <= 0)
        return;
    char f[16];
    f[0] = '.';
    size_t n = 1 + pad_int(f + 1, frac % 10000, 4);
    while (n > 1 && f[n - 1] == '0')
        n--;
    rbuf_add(b, f, n);
}

void json_hex(rbuf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    rbuf_adds(b, "\"\\\\x");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        rbuf_addc(b, hex[c >> 4]);
        rbuf_addc(b, hex[c & 15]);
    }
    rbuf_addc(b, '"');
}

/*
 * A time zone value as libfastfb formats it ("2024-07-01 12:00:00.0000
 * +02:00" or "... Europe/Prague") as ISO 8601: 'T' between date and time,
 * the offset right after the time. A region zone has no offset getter in
 * libfastfb yet: it is kept as an RFC 9557 suffix "[Europe/Prague]".
 */
void json_tz_text(rbuf *b, const char *s, size_t n) {
    const char *sp = memchr(s, ' ', n);
    const char *zone = NULL;
    size_t base = n;
    /* the zone is after the last space */
    for (size_t i = n; i > 0; i--)
        if (s[i - 1] == ' ') {
            zone = s + i;
            base = i - 1;
            break;
        }
    rbuf_addc(b, '"');
    /* date part (timestamps) */
    size_t i = 0;
    if (sp && sp - s < (long)base && memchr(s, '-', (size_t)(sp - s))) {
        rbuf_add(b, s, (size_t)(sp - s));
        rbuf_addc(b, 'T');
        i = (size_t)(sp - s) + 1;
    }
    /* time, without trailing zeros of the fraction */
    size_t tend = base;
    const char *dot = memchr(s + i, '.', tend - i);
    if (dot) {
        size_t e = tend;
        while (e > (size_t)(dot - s) + 1 && s[e - 1] == '0')
            e--;
        if (e == (size_t)(dot - s) + 1)
            e--;
        tend = e;
    }
    rbuf_add(b, s + i, tend - i);
    if (zone) {
        size_t zn = n - (size_t)(zone - s);
        if (zn && (zone[0] == '+' || zone[0] == '-'))
            rbuf_add(b, zone, zn);
        else {
            rbuf_addc(b, '[');
            rbuf_add(b, zone, zn);
            rbuf_addc(b, ']');
        }
    }
    rbuf_addc(b, '"');
}

int json_column(rbuf *b, ffb_stmt *stmt, unsigned col,
                const ffb_column_info *ci) {
    const char *s;
    size_t n;
    int rc = ffb_stmt_is_null(stmt, col);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        rbuf_adds(b, "null");
        return 0;
    }
    switch (ci->sqltype) {
    case FFB_SQL_SHORT:
    case FFB_SQL_LONG:
    case FFB_SQL_INT64:
    case FFB_SQL_INT128:
        /* integers and NUMERIC/DECIMAL: the library prints the scaled
           integer exactly ("12.50") */
        rc = ffb_stmt_get_text(stmt, col, &s, &n);
        if (rc < 0)
            return rc;
        rbuf_add(b, s, n);
        return 0;
    case FFB_SQL_DEC16:
    case FFB_SQL_DEC34:
        rc = ffb_stmt_get_text(stmt, col, &s, &n);
        if (rc < 0)
            return rc;
        if (json_is_number(s, n))
            rbuf_add(b, s, n);
        else
            rbuf_adds(b, "null"); /* NaN, Infinity */
        return 0;
    case FFB_SQL_FLOAT:
    case FFB_SQL_DOUBLE: {
        double d;
        rc = ffb_stmt_get_double(stmt, col, &d);
        if (rc < 0)
            return rc;
        json_double(b, d);
        return 0;
    }
    case FFB_SQL_BOOLEAN: {
        int v;
        rc = ffb_stmt_get_bool(stmt, col, &v);
        if (rc < 0)
            return rc;
        rbuf_adds(b, v ? "true" : "false");
        return 0;
    }
    case FFB_SQL_TEXT:
    case FFB_SQL_VARYING:
        rc = ffb_stmt_get_text(stmt, col, &s, &n);
        if (rc < 0)
            return rc;
        if (ci->charset == 1) /* OCTETS: bytea's text form */
            json_hex(b, s, n);
        else
            json_string(b, s, n);
        return 0;
    case FFB_SQL_TYPE_DATE: {
        int y, m, d;
        rc = ffb_stmt_get_date(stmt, col, &y, &m, &d);
        if (rc < 0)
            return rc;
        date_time(b, 1, y, m, d, 0, 0, 0, 0);
        rbuf_addc(b, '"');
        return 0;
    }
    case FFB_SQL_TYPE_TIME: {
        int h, mi, se, fr;
        rc = ffb_stmt_get_time(stmt, col, &h, &mi, &se, &fr);
        if (rc < 0)
            return rc;
        date_time(b, 0, 0, 0, 0, 1, h, mi, se);
        frac4(b, fr);
        rbuf_addc(b, '"');
        return 0;
    }
    case FFB_SQL_TIMESTAMP: {
        int y, m, d, h, mi, se, fr;
        rc = ffb_stmt_get_timestamp(stmt, col, &y, &m, &d, &h, &mi, &se, &fr);
        if (rc < 0)
            return rc;
        date_time(b, 1, y, m, d, 1, h, mi, se);
        frac4(b, fr);
        rbuf_addc(b, '"');
        return 0;
    }
    case FFB_SQL_TIME_TZ:
    case FFB_SQL_TIME_TZ_EX:
    case FFB_SQL_TIMESTAMP_TZ:
    case FFB_SQL_TIMESTAMP_TZ_EX:
        rc = ffb_stmt_get_text(stmt, col, &s, &n);
        if (rc < 0)
            return rc;
        json_tz_text(b, s, n);
        return 0;
    default:
        return FFB_E_UNSUPPORTED;
    }
}

int json_tz_column(rbuf *b, ffb_stmt *stmt, unsigned col,
                   const ffb_column_info *ci, unsigned hcol) {
    int y = 0, mo = 0, d = 0, h, mi, se, fr, rc;
    int64_t oh, om;
    rc = ffb_stmt_is_null(stmt, col);
    if (rc != 0) {
        if (rc == 1)
            rbuf_adds(b, "null");
        return rc < 0 ? rc : 0;
    }
    int ts = ci->sqltype == FFB_SQL_TIMESTAMP_TZ ||
             ci->sqltype == FFB_SQL_TIMESTAMP_TZ_EX;
    if (ts)
        rc = ffb_stmt_get_timestamp(stmt, col, &y, &mo, &d, &h, &mi, &se, &fr);
    else
        rc = ffb_stmt_get_time(stmt, col, &h, &mi, &se, &fr);
    if (rc == 0)
        rc = ffb_stmt_get_int64(stmt, hcol, &oh);
    if (rc == 0)
        rc = ffb_stmt_get_int64(stmt, hcol + 1, &om);
    if (rc < 0)
        return rc;
    date_time(b, ts, y, mo, d, 1, h, mi, se);
    frac4(b, fr);
    int neg = oh < 0 || om < 0;
    char z[32];
    size_t zn = 0;
    z[zn++] = neg ? '-' : '+';
    zn += pad_int(z + zn, (int)(oh < 0 ? -oh : oh), 2);
    z[zn++] = ':';
    zn += pad_int(z + zn, (int)(om < 0 ? -om : om), 2);
    z[zn++] = '"';
    rbuf_add(b, z, zn);
    return 0;
}

static void str_or_null(rbuf *b, const char *s) {
    if (s && *s)
        json_text(b, s, strlen(s));
    else
        rbuf_adds(b, "null");
}

void json_error(rbuf *b, const rest_err *e, int minimal) {
    rbuf_adds(b, "{\"code\":");
    json_text(b, e->code, strlen(e->code));
    rbuf_adds(b, ",\"message\":");
    json_text(b, e->message, strlen(e->message));
    if (!minimal) {
        rbuf_adds(b, ",\"details\":");
        str_or_null(b, e->details);
        rbuf_adds(b, ",\"hint\":");
        str_or_null(b, e->hint);
    }
    rbuf_addc(b, '}');
}

/* A10's table, by gds code first, then by SQLSTATE class. */
static int http_status(const ffb_error *fe, const char *state, int has_jwt) {
    static const struct {
        uint32_t gds;
        int status;
    } by_gds[] = {
        {335544665u, 409}, /* unique_key_violation */
        {335544349u, 409}, /* no_dup */
        {335544466u, 409}, /* foreign_key */
        {335544347u, 400}, /* not_valid (not null / validation) */
        {335544558u, 400}, /* check_constraint */
        {335544361u, 405}, /* read_only_trans */
        {335544352u, 0},   /* no_priv: 401/403 below */
        {335544517u, 400}, /* except (user EXCEPTION) */
        {335544336u, 500}, /* deadlock */
        {335544345u, 500}, /* lock_conflict */
        {335544856u, 503}, /* att_shutdown */
        {335544721u, 503}, /* network_error */
        {335544528u, 503}, /* shutdown */
    };
    for (size_t i = 0; fe && i < sizeof by_gds / sizeof by_gds[0]; i++)
        if (ffb_error_has(fe, by_gds[i].gds)) {
            if (by_gds[i].status == 0)
                return has_jwt ? 403 : 401;
            return by_gds[i].status;
        }
    if (!state || !*state)
        return 400;
    if (strncmp(state, "08", 2) == 0)
        return 503;
    if (strcmp(state, "42S02") == 0)
        return 404;
    if (strncmp(state, "28", 2) == 0)
        return has_jwt ? 403 : 401;
    if (strncmp(state, "40", 2) == 0 || strcmp(state, "HY008") == 0)
        return 500;
    if (strcmp(state, "25006") == 0)
        return 405;
    return 400;
}

/* One "- text [symbol, SQLSTATE x]" line without its dash and bracket. */
static size_t server_line(const char *p, size_t n, const char **out) {
    if (n < 2 || p[0] != '-' || p[1] != ' ')
        return 0;
    p += 2;
    n -= 2;
    if (n && p[n - 1] == ']') {
        for (size_t i = n; i > 0; i--)
            if (p[i - 1] == '[') {
                n = i - 1;
                break;
            }
    }
    while (n && p[n - 1] == ' ')
        n--;
    *out = p;
    return n;
}

/* The server's lines of `msg`: line `first` (0-based; the first one when
   there are fewer) is the message, the others the details, in order. */
static void split_message(rest_err *e, const char *msg, int first) {
    size_t dl = 0;
    int have = 0, nlines = 0, line = 0;
    for (const char *p = msg; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *t;
        nlines += server_line(p, n, &t) > 0;
        p = nl ? nl + 1 : p + n;
    }
    if (first >= nlines)
        first = 0;
    for (const char *p = msg; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *t;
        size_t tn = server_line(p, n, &t);
        if (tn && !have && line++ == first) {
            snprintf(e->message, sizeof e->message, "%.*s", (int)tn, t);
            have = 1;
        } else if (tn && dl < sizeof e->details - 1) {
            int w = snprintf(e->details + dl, sizeof e->details - dl, "%s%.*s",
                             dl ? "; " : "", (int)tn, t);
            if (w > 0)
                dl += (size_t)w;
            if (dl >= sizeof e->details)
                dl = sizeof e->details - 1;
        }
        p = nl ? nl + 1 : p + n;
    }
    if (!have) {
        /* no server lines: the first line is the message, the rest the
           details */
        const char *nl = strchr(msg, '\n');
        size_t mlen = nl ? (size_t)(nl - msg) : strlen(msg);
        snprintf(e->message, sizeof e->message, "%.*s", (int)mlen, msg);
        if (nl) {
            snprintf(e->details, sizeof e->details, "%s", nl + 1);
            for (char *q = e->details; *q; q++)
                if (*q == '\n')
                    *q = ';';
        }
    }
}

/* PostgreSQL's SQLSTATE of an integrity error (spec A10): clients test
   for 23505 and friends, Firebird reports 23000 for every one; and of no
   permission (42501, Firebird's 28000), as PostgREST sends it. */
static const char *pg_state(const ffb_error *fe) {
    static const struct {
        uint32_t gds;
        const char *state;
    } map[] = {
        {335544665u, "23505"}, /* unique_key_violation */
        {335544349u, "23505"}, /* no_dup */
        {335544466u, "23503"}, /* foreign_key */
        {335544558u, "23514"}, /* check_constraint */
        {335544347u, "23502"}, /* not_valid: NOT NULL (and domain checks) */
        {335544352u, "42501"}, /* no_priv (Firebird: 28000) */
        {335544517u, "P0001"}, /* except: a user EXCEPTION (HY000) */
    };
    for (size_t i = 0; fe && i < sizeof map / sizeof map[0]; i++)
        if (ffb_error_has(fe, map[i].gds))
            return map[i].state;
    return NULL;
}

void rest_err_from_ffb(rest_err *e, int code, const ffb_error *fe,
                       int has_jwt) {
    memset(e, 0, sizeof *e);
    const char *state = fe ? ffb_error_sqlstate(fe) : NULL;
    const char *msg = fe ? ffb_error_message(fe) : NULL;
    if (!msg || !*msg)
        msg = ffb_strerror(code);
    /* libfastfb's text is "what failed\n- server message [symbol,
       SQLSTATE x]\n- ...": the server's first message is the message
       (A10), the others the details; without them, the whole text */
    /* a user EXCEPTION (isc_except): Firebird's first line is its name,
       the second its text; as PostgreSQL's RAISE EXCEPTION (P0001, 400)
       the text is the message and the name goes to the details */
    int except = code == FFB_E_SERVER && fe && ffb_error_has(fe, 335544517u);
    split_message(e, msg, except);
    const char *pg = code == FFB_E_SERVER ? pg_state(fe) : NULL;
    if (pg) {
        /* integrity errors (Firebird says 23000 for all of them) and
           no permission (28000; PostgreSQL's insufficient_privilege) */
        snprintf(e->code, sizeof e->code, "%s", pg);
        e->status = http_status(fe, state, has_jwt);
    } else if (code == FFB_E_SERVER && state && *state) {
        snprintf(e->code, sizeof e->code, "%s", state);
        e->status = http_status(fe, state, has_jwt);
    } else if (code == FFB_E_SERVER) {
        snprintf(e->code, sizeof e->code, "FB%u", (unsigned)ffb_error_gds(fe));
        e->status = http_status(fe, NULL, has_jwt);
    } else if (code == FFB_E_INVAL) {
        /* a value the client sent does not convert to the column's type:
           libfastfb refuses it before anything is sent */
        snprintf(e->code, sizeof e->code, "22018");
        e->status = 400;
    } else if (code == FFB_E_STMT_TIMEOUT) {
        /* db-statement-timeout: PostgreSQL's query_canceled, which
           PostgREST answers with 500; Firebird's text in the details */
        snprintf(e->details, sizeof e->details, "%s", e->message);
        snprintf(e->message, sizeof e->message,
                 "canceling statement due to statement timeout");
        snprintf(e->code, sizeof e->code, "57014");
        e->status = 500;
    } else if (code == FFB_E_TIMEOUT) {
        snprintf(e->code, sizeof e->code, "PGRST003");
        e->status = 504;
    } else {
        /* the connection broke or could not be made */
        snprintf(e->code, sizeof e->code, "PGRST001");
        e->status = 503;
    }
}
