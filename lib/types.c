/*
 * Value conversions (lib/types.h): exact decimals on 128-bit integers,
 * DECFLOAT in DPD, dates and times, time zone ids, character sets, UTF-8.
 * Reference: docs/protocol/02-statements.md sections 9.2, 9.4 and 10.
 *
 * Everything here is a pure function of its arguments: no allocation, no
 * locale, no global state. Text output follows snprintf: at most size - 1
 * characters and a NUL are written (nothing when size is 0, out may then
 * be NULL) and the full length is returned.
 *
 * DECFLOAT (IEEE 754-2008 decimal64 / decimal128, DPD coefficient,
 * big-endian; 02-statements.md 9.2):
 * - Formatting is decNumber's to-scientific-string, which is what Firebird
 *   prints (Decimal64::toString calls decDoubleToString): plain notation
 *   when the exponent is <= 0 and the adjusted exponent is >= -6
 *   ("1.000", "0.000001", "-0"), otherwise one digit, the rest after a
 *   point, and E+n / E-n ("1E+300", "1.5E-7", "0E+2"). NaN payloads are
 *   printed after the name ("NaN12"), a set sign bit as "-" ("-NaN").
 * - Parsing rounds to 16 / 34 significant digits HALF_UP (a dropped part
 *   of exactly one half goes away from zero) in one step (no double
 *   rounding), including the subnormal range: a value whose
 *   exponent would fall below Etiny (-398 / -6176) is rounded to that
 *   exponent and may become zero, as decNumber does with Underflow not
 *   trapped (Firebird's default DECFLOAT TRAPS are Division_by_zero,
 *   Invalid_operation, Overflow). Exponents above the largest encodable
 *   one (369 / 6111) are brought down by padding the coefficient with
 *   zeros when it has room ("1E+384" is 1.000000000000000E+384, decNumber's
 *   clamp = 1). A value whose adjusted exponent exceeds emax (384 / 6144)
 *   after rounding is FFB_E_INVAL (Overflow is trapped by Firebird too).
 *   A zero's exponent is clamped into range silently. NaN payloads may
 *   have at most 15 / 33 digits.
 *   HALF_UP is Firebird's default session rounding (SET DECFLOAT ROUND,
 *   src/common/DecFloat.h), so a parameter bound as text gets the value
 *   the server makes of the same literal (checked live on Firebird 4.0:
 *   '1.2345678901234565' -> 1.234567890123457 as DECFLOAT(16)). A session
 *   that changes SET DECFLOAT ROUND is not followed.
 * - Non-canonical encodings (the 24 redundant declets, coefficient bits
 *   under Infinity, exponent bits under NaN) are read as decNumber reads
 *   them; encoding always produces the canonical form.
 */
#include "lib/types.h"

#include <limits.h>
#include <string.h>

#include "include/fastfb.h"
#include "lib/charset_table.h"
#include "lib/tz_table.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))
#define U128_ONE ((ffb__u128)1)
#define U128_MAX (~(ffb__u128)0)
#define I128_MAX_MAG ((U128_ONE << 127) - 1) /* 2^127 - 1 */
#define I128_MIN_MAG (U128_ONE << 127)       /* |-2^127| */
/* Exponents in text are saturated here; far outside every valid range. */
#define EXP_SATURATE 1000000000000000LL

/* ---- small helpers ------------------------------------------------------- */

/* snprintf-style output buffer. */
struct sbuf {
    char *out;
    size_t size;
    size_t len;
};

static void sb_init(struct sbuf *b, char *out, size_t size) {
    b->out = out;
    b->size = out ? size : 0;
    b->len = 0;
}

static void sb_putc(struct sbuf *b, char c) {
    if (b->len + 1 < b->size)
        b->out[b->len] = c;
    b->len++;
}

static void sb_putn(struct sbuf *b, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        sb_putc(b, s[i]);
}

static void sb_puts(struct sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

/* n copies of c without looping over the part that does not fit. */
static void sb_rep(struct sbuf *b, char c, size_t n) {
    size_t fit = 0;

    if (b->len + 1 < b->size)
        fit = b->size - 1 - b->len;
    if (fit > n)
        fit = n;
    for (size_t i = 0; i < fit; i++)
        b->out[b->len + i] = c;
    b->len += n;
}

/* Unsigned decimal, zero-padded to at least `width` digits. */
static void sb_uint(struct sbuf *b, unsigned long v, int width) {
    char tmp[24];
    int n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < width && n < (int)sizeof(tmp))
        tmp[n++] = '0';
    while (n > 0)
        sb_putc(b, tmp[--n]);
}

static int sb_finish(struct sbuf *b) {
    if (b->size)
        b->out[b->len < b->size ? b->len : b->size - 1] = '\0';
    return b->len > INT_MAX ? -1 : (int)b->len;
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Strip blanks at both ends; returns the new start, updates *len. */
static const char *trim(const char *s, size_t *len) {
    size_t n = s ? *len : 0;

    while (n && is_blank(*s)) {
        s++;
        n--;
    }
    while (n && is_blank(s[n - 1]))
        n--;
    *len = n;
    return s;
}

/* s[0..len) equals the NUL-terminated `word`, ignoring ASCII case. */
static int ascii_ieq(const char *s, size_t len, const char *word) {
    size_t i;

    for (i = 0; i < len; i++) {
        if (word[i] == '\0' || ascii_lower(s[i]) != ascii_lower(word[i]))
            return 0;
    }
    return word[i] == '\0';
}

static ffb__u128 pow10_u128(int n) {
    ffb__u128 p = 1;

    while (n-- > 0)
        p *= 10;
    return p;
}

/* Decimal digits of m into buf (no leading zeros, "0" for 0). */
static int u128_digits(ffb__u128 m, char buf[40]) {
    const uint64_t e19 = 10000000000000000000u;
    uint64_t part[3];
    int np = 0;
    int n = 0;

    do {
        part[np++] = (uint64_t)(m % e19);
        m /= e19;
    } while (m);
    for (int i = np - 1; i >= 0; i--) {
        char tmp[20];
        int k = 0;
        uint64_t v = part[i];

        do {
            tmp[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        if (i != np - 1) {
            while (k < 19)
                tmp[k++] = '0';
        }
        while (k > 0)
            buf[n++] = tmp[--k];
    }
    return n;
}

static ffb__u128 i128_magnitude(ffb__i128 v) {
    return v < 0 ? (ffb__u128)0 - (ffb__u128)v : (ffb__u128)v;
}

/* -m or m as a signed value; m must be within the signed range. */
static ffb__i128 i128_from_magnitude(ffb__u128 m, int neg) {
    if (!neg)
        return (ffb__i128)m;
    if (m == I128_MIN_MAG)
        return -(ffb__i128)I128_MAX_MAG - 1;
    return -(ffb__i128)m;
}

/* ---- decimal text scanning (shared by exact decimals and DECFLOAT) ------- */

struct num {
    int neg;
    const char *ip; /* integer digits */
    size_t ni;
    const char *fp; /* fraction digits */
    size_t nf;
    long long exp; /* explicit exponent, saturated at +-EXP_SATURATE */
    size_t lead;   /* leading zeros of the digit sequence ip ++ fp */
    size_t nsig;   /* significant digits after them (0 for a zero) */
};

static int num_digit(const struct num *n, size_t k) {
    return k < n->ni ? n->ip[k] - '0' : n->fp[k - n->ni] - '0';
}

/* [sign] (digits [. [digits]] | . digits) [(e|E) [sign] digits] */
static int scan_number(const char *s, size_t len, struct num *n) {
    size_t i = 0;

    memset(n, 0, sizeof(*n));
    if (i < len && (s[i] == '+' || s[i] == '-'))
        n->neg = s[i++] == '-';
    n->ip = s + i;
    while (i < len && is_digit(s[i]))
        i++;
    n->ni = (size_t)(s + i - n->ip);
    n->fp = s + i;
    if (i < len && s[i] == '.') {
        i++;
        n->fp = s + i;
        while (i < len && is_digit(s[i]))
            i++;
        n->nf = (size_t)(s + i - n->fp);
    }
    if (n->ni + n->nf == 0)
        return FFB_E_INVAL;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        int eneg = 0;
        size_t start;

        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        start = i;
        while (i < len && is_digit(s[i])) {
            if (n->exp < EXP_SATURATE)
                n->exp = n->exp * 10 + (s[i] - '0');
            i++;
        }
        if (i == start)
            return FFB_E_INVAL;
        if (eneg)
            n->exp = -n->exp;
    }
    if (i != len)
        return FFB_E_INVAL;
    while (n->lead < n->ni + n->nf && num_digit(n, n->lead) == 0)
        n->lead++;
    n->nsig = n->ni + n->nf - n->lead;
    return 0;
}

/* Exponent of the last digit: explicit exponent minus fraction digits. */
static long long num_exp(const struct num *n) {
    long long nf =
        n->nf > (size_t)EXP_SATURATE ? EXP_SATURATE : (long long)n->nf;
    return n->exp - nf;
}

/* The first `keep` significant digits as an integer (keep <= 39), checked
   against `limit`; returns 0 or 1 on overflow. */
static int num_take(const struct num *n, size_t keep, ffb__u128 limit,
                    ffb__u128 *out) {
    ffb__u128 m = 0;

    for (size_t k = 0; k < keep; k++) {
        unsigned d = (unsigned)num_digit(n, n->lead + k);

        if (m > (limit - d) / 10)
            return 1;
        m = m * 10 + d;
    }
    *out = m;
    return 0;
}

/* ---- exact decimals ------------------------------------------------------ */

int ffb__dec_parse(const char *s, size_t len, int scale, ffb__i128 *out,
                   int *overflow) {
    struct num n;
    ffb__u128 m = 0;
    ffb__u128 limit;
    long long shift;
    int dummy;

    if (!overflow)
        overflow = &dummy;
    *overflow = 0;
    if (!s || !out)
        return FFB_E_INVAL;
    s = trim(s, &len);
    if (scan_number(s, len, &n) < 0)
        return FFB_E_INVAL;
    limit = n.neg ? I128_MIN_MAG : I128_MAX_MAG;
    /* value = sig * 10^(num_exp); wanted: round(value * 10^-scale) */
    shift = num_exp(&n) - scale;
    if (n.nsig == 0) {
        *out = 0;
        return 0;
    }
    if (shift >= 0) {
        if ((long long)n.nsig + shift > 39 || num_take(&n, n.nsig, limit, &m))
            goto overflowed;
        for (long long k = 0; k < shift; k++) {
            if (m > limit / 10)
                goto overflowed;
            m *= 10;
        }
    } else {
        long long keep = (long long)n.nsig + shift;
        int rd = 0;

        if (keep > 39)
            goto overflowed;
        if (keep > 0 && num_take(&n, (size_t)keep, limit, &m))
            goto overflowed;
        if (keep >= 0)
            rd = num_digit(&n, n.lead + (size_t)keep);
        if (rd >= 5) { /* half away from zero: the magnitude goes up */
            if (m == limit)
                goto overflowed;
            m++;
        }
    }
    *out = i128_from_magnitude(m, n.neg);
    return 0;

overflowed:
    *overflow = 1;
    return FFB_E_INVAL;
}

int ffb__dec_format(ffb__i128 v, int scale, char *out, size_t size) {
    struct sbuf b;
    char d[40];
    int nd = u128_digits(i128_magnitude(v), d);

    sb_init(&b, out, size);
    if (v < 0)
        sb_putc(&b, '-');
    if (scale >= 0) {
        sb_putn(&b, d, (size_t)nd);
        if (v != 0)
            sb_rep(&b, '0', (size_t)scale);
    } else {
        size_t frac = (size_t)(-(long long)scale);

        if ((size_t)nd > frac) {
            sb_putn(&b, d, (size_t)nd - frac);
            sb_putc(&b, '.');
            sb_putn(&b, d + (size_t)nd - frac, frac);
        } else {
            sb_putc(&b, '0');
            sb_putc(&b, '.');
            sb_rep(&b, '0', frac - (size_t)nd);
            sb_putn(&b, d, (size_t)nd);
        }
    }
    return sb_finish(&b);
}

int ffb__dec_rescale(ffb__i128 v, int from, int to, ffb__i128 *out) {
    ffb__u128 m = i128_magnitude(v);
    ffb__u128 limit = v < 0 ? I128_MIN_MAG : I128_MAX_MAG;
    long long diff = (long long)from - to;

    if (!out)
        return FFB_E_INVAL;
    if (diff > 0) {
        if (m != 0) {
            ffb__u128 p;

            if (diff > 38)
                return FFB_E_INVAL;
            p = pow10_u128((int)diff);
            if (m > limit / p)
                return FFB_E_INVAL;
            m *= p;
        }
    } else if (diff < 0) {
        if (diff < -38) {
            m = 0; /* |v| < 2^127 < 0.5 * 10^39 */
        } else {
            ffb__u128 p = pow10_u128((int)-diff);
            ffb__u128 r = m % p;

            m /= p;
            if (r >= p - r) /* remainder >= half: away from zero */
                m++;
        }
    }
    *out = i128_from_magnitude(m, v < 0);
    return 0;
}

/* ---- DPD declets --------------------------------------------------------- */

/*
 * Three digits d1 d2 d3 (BCD bits abcd efgh ijkm) <-> ten bits pqr stu v
 * wxy, IEEE 754-2008 table 3.3/3.4. a, e, i say which digits are 8 or 9;
 * those keep only their low bit (d, h, m).
 */
static unsigned dpd_encode(unsigned n) {
    unsigned d1 = n / 100, d2 = n / 10 % 10, d3 = n % 10;
    unsigned bcd = d1 & 7, fgh = d2 & 7, jkm = d3 & 7;
    unsigned d = d1 & 1, h = d2 & 1, m = d3 & 1;
    unsigned fg = (d2 >> 1) & 3, jk = (d3 >> 1) & 3;

    switch ((d1 >> 3) << 2 | (d2 >> 3) << 1 | (d3 >> 3)) {
    case 0: /* all small */
        return bcd << 7 | fgh << 4 | jkm;
    case 1: /* d3 large */
        return bcd << 7 | fgh << 4 | 0x8 | m;
    case 2: /* d2 large */
        return bcd << 7 | (jk << 1 | h) << 4 | 0xA | m;
    case 3: /* d2, d3 large */
        return bcd << 7 | (0x4 | h) << 4 | 0xE | m;
    case 4: /* d1 large */
        return (jk << 1 | d) << 7 | fgh << 4 | 0xC | m;
    case 5: /* d1, d3 large */
        return (fg << 1 | d) << 7 | (0x2 | h) << 4 | 0xE | m;
    case 6: /* d1, d2 large */
        return (jk << 1 | d) << 7 | h << 4 | 0xE | m;
    default: /* all large */
        return d << 7 | (0x6 | h) << 4 | 0xE | m;
    }
}

static unsigned dpd_decode(unsigned x) {
    unsigned pqr = (x >> 7) & 7, stu = (x >> 4) & 7;
    unsigned pq = pqr >> 1, r = pqr & 1, st = stu >> 1, u = stu & 1;
    unsigned y = x & 1;
    unsigned d1, d2, d3;

    if (!(x & 0x8)) {
        d1 = pqr;
        d2 = stu;
        d3 = x & 7;
    } else {
        switch ((x >> 1) & 3) {
        case 0:
            d1 = pqr;
            d2 = stu;
            d3 = 8 | y;
            break;
        case 1:
            d1 = pqr;
            d2 = 8 | u;
            d3 = st << 1 | y;
            break;
        case 2:
            d1 = 8 | r;
            d2 = stu;
            d3 = pq << 1 | y;
            break;
        default:
            switch (st) {
            case 0:
                d1 = 8 | r;
                d2 = 8 | u;
                d3 = pq << 1 | y;
                break;
            case 1:
                d1 = 8 | r;
                d2 = pq << 1 | u;
                d3 = 8 | y;
                break;
            case 2:
                d1 = pqr;
                d2 = 8 | u;
                d3 = 8 | y;
                break;
            default: /* pq are ignored: the redundant encodings */
                d1 = 8 | r;
                d2 = 8 | u;
                d3 = 8 | y;
                break;
            }
        }
    }
    return d1 * 100 + d2 * 10 + d3;
}

/* ---- DECFLOAT ------------------------------------------------------------ */

struct dfmt {
    int bytes;   /* 8 or 16 */
    int digits;  /* precision */
    int ecbits;  /* exponent continuation bits */
    int declets; /* coefficient continuation declets */
    int bias;    /* = -Etiny, the smallest exponent of the last digit */
    int emax;    /* largest adjusted exponent */
};

static const struct dfmt fmt64 = {8, 16, 8, 5, 398, 384};
static const struct dfmt fmt128 = {16, 34, 12, 11, 6176, 6144};

enum { DF_FINITE, DF_INF, DF_NAN, DF_SNAN };

struct dfval {
    int kind;
    int neg;
    ffb__u128 coef; /* the payload for NaNs */
    int exp;        /* of the last digit; finite only */
};

static int df_elimit(const struct dfmt *f) { return f->emax - f->digits + 1; }

static ffb__u128 df_cont(const struct dfmt *f, ffb__u128 w) {
    ffb__u128 c = 0;

    for (int i = f->declets - 1; i >= 0; i--)
        c = c * 1000 + dpd_decode((unsigned)(w >> (10 * i)) & 0x3FF);
    return c;
}

static void df_unpack(const struct dfmt *f, const uint8_t *be,
                      struct dfval *v) {
    int bits = f->bytes * 8;
    ffb__u128 w = 0;
    unsigned comb, ec, emsb, ld;

    for (int i = 0; i < f->bytes; i++)
        w = w << 8 | be[i];
    v->neg = (int)(w >> (bits - 1)) & 1;
    comb = (unsigned)(w >> (bits - 6)) & 0x1F;
    ec = (unsigned)(w >> (bits - 6 - f->ecbits)) & ((1u << f->ecbits) - 1);
    v->exp = 0;
    if ((comb >> 1) == 0xF) {
        v->coef = 0;
        v->kind = DF_INF;
        if (comb & 1) {
            v->kind = (ec >> (f->ecbits - 1)) & 1 ? DF_SNAN : DF_NAN;
            v->coef = df_cont(f, w);
        }
        return;
    }
    if ((comb >> 3) == 3) {
        emsb = (comb >> 1) & 3;
        ld = 8 | (comb & 1);
    } else {
        emsb = comb >> 3;
        ld = comb & 7;
    }
    v->kind = DF_FINITE;
    v->exp = (int)(emsb << f->ecbits | ec) - f->bias;
    v->coef = ld * pow10_u128(3 * f->declets) + df_cont(f, w);
}

/* v must be canonical: coef < 10^digits (payload < 10^(digits-1)) and,
   for finite values, -bias <= exp <= elimit. */
static void df_pack(const struct dfmt *f, const struct dfval *v, uint8_t *be) {
    int bits = f->bytes * 8;
    ffb__u128 w = 0;
    ffb__u128 c = v->coef;
    unsigned comb, ec = 0;

    for (int i = 0; i < f->declets; i++) {
        w |= (ffb__u128)dpd_encode((unsigned)(c % 1000)) << (10 * i);
        c /= 1000;
    }
    if (v->kind == DF_FINITE) {
        unsigned e = (unsigned)(v->exp + f->bias);
        unsigned emsb = e >> f->ecbits;
        unsigned ld = (unsigned)c;

        ec = e & ((1u << f->ecbits) - 1);
        comb = ld < 8 ? emsb << 3 | ld : 0x18 | emsb << 1 | (ld & 1);
    } else if (v->kind == DF_INF) {
        comb = 0x1E;
        w = 0;
    } else {
        comb = 0x1F;
        if (v->kind == DF_SNAN)
            ec = 1u << (f->ecbits - 1);
    }
    w |= (ffb__u128)ec << (bits - 6 - f->ecbits);
    w |= (ffb__u128)comb << (bits - 6);
    w |= (ffb__u128)(v->neg ? 1 : 0) << (bits - 1);
    for (int i = f->bytes - 1; i >= 0; i--) {
        be[i] = (uint8_t)w;
        w >>= 8;
    }
}

static int df_format(const struct dfmt *f, const uint8_t *be, char *out,
                     size_t size) {
    struct sbuf b;
    struct dfval v;
    char d[40];
    int nd;
    long ae;

    sb_init(&b, out, size);
    if (!be)
        return sb_finish(&b);
    df_unpack(f, be, &v);
    if (v.neg)
        sb_putc(&b, '-');
    if (v.kind == DF_INF) {
        sb_puts(&b, "Infinity");
        return sb_finish(&b);
    }
    if (v.kind != DF_FINITE) {
        sb_puts(&b, v.kind == DF_SNAN ? "sNaN" : "NaN");
        if (v.coef) {
            nd = u128_digits(v.coef, d);
            sb_putn(&b, d, (size_t)nd);
        }
        return sb_finish(&b);
    }
    nd = u128_digits(v.coef, d);
    ae = (long)v.exp + nd - 1;
    if (v.exp <= 0 && ae >= -6) {
        long ip = (long)nd + v.exp; /* digits before the point */

        if (v.exp == 0) {
            sb_putn(&b, d, (size_t)nd);
        } else if (ip > 0) {
            sb_putn(&b, d, (size_t)ip);
            sb_putc(&b, '.');
            sb_putn(&b, d + ip, (size_t)(nd - ip));
        } else {
            sb_puts(&b, "0.");
            sb_rep(&b, '0', (size_t)-ip);
            sb_putn(&b, d, (size_t)nd);
        }
    } else {
        sb_putc(&b, d[0]);
        if (nd > 1) {
            sb_putc(&b, '.');
            sb_putn(&b, d + 1, (size_t)nd - 1);
        }
        sb_putc(&b, 'E');
        sb_putc(&b, ae < 0 ? '-' : '+');
        sb_uint(&b, (unsigned long)(ae < 0 ? -ae : ae), 1);
    }
    return sb_finish(&b);
}

/* "Inf", "Infinity", "NaN[digits]", "sNaN[digits]" after the sign. */
static int df_parse_special(const struct dfmt *f, const char *s, size_t len,
                            struct dfval *v) {
    size_t skip;

    if (ascii_ieq(s, len, "inf") || ascii_ieq(s, len, "infinity")) {
        v->kind = DF_INF;
        return 0;
    }
    if (len >= 3 && ascii_ieq(s, 3, "nan")) {
        v->kind = DF_NAN;
        skip = 3;
    } else if (len >= 4 && ascii_ieq(s, 4, "snan")) {
        v->kind = DF_SNAN;
        skip = 4;
    } else {
        return 1; /* not special */
    }
    s += skip;
    len -= skip;
    while (len && *s == '0') {
        s++;
        len--;
    }
    if (len > (size_t)f->digits - 1)
        return FFB_E_INVAL;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return FFB_E_INVAL;
        v->coef = v->coef * 10 + (unsigned)(s[i] - '0');
    }
    return 0;
}

static int df_parse(const struct dfmt *f, const char *s, size_t len,
                    uint8_t *be) {
    struct dfval v;
    struct num n;
    long long q0, q, drop, keep;
    const long long etiny = -f->bias, elimit = df_elimit(f);
    int rc;

    if (!s || !be)
        return FFB_E_INVAL;
    memset(&v, 0, sizeof(v));
    s = trim(s, &len);
    if (len && (*s == '+' || *s == '-')) {
        v.neg = *s == '-';
        rc = df_parse_special(f, s + 1, len - 1, &v);
    } else {
        rc = df_parse_special(f, s, len, &v);
    }
    if (rc <= 0) {
        if (rc == 0)
            df_pack(f, &v, be);
        return rc;
    }
    if (scan_number(s, len, &n) < 0)
        return FFB_E_INVAL;
    v.kind = DF_FINITE;
    q0 = num_exp(&n);
    if (n.nsig == 0) {
        q = q0 < etiny ? etiny : q0 > elimit ? elimit : q0;
        v.exp = (int)q;
        df_pack(f, &v, be);
        return 0;
    }
    /* Round once, to whichever is coarser: the precision or Etiny. */
    drop = (long long)n.nsig - f->digits;
    if (etiny - q0 > drop)
        drop = etiny - q0;
    if (drop < 0)
        drop = 0;
    keep = (long long)n.nsig - drop;
    if (keep > 0)
        (void)num_take(&n, (size_t)keep, U128_MAX, &v.coef);
    /* HALF_UP: only the first dropped digit decides (when keep < 0 every
       dropped digit lies below the rounding position, which holds 0). */
    if (drop > 0 && keep >= 0 && num_digit(&n, n.lead + (size_t)keep) >= 5)
        v.coef++;
    q = q0 + drop;
    if (v.coef == pow10_u128(f->digits)) {
        v.coef /= 10;
        q++;
    }
    if (q > elimit) {
        char d[40];
        int nd = u128_digits(v.coef, d);

        if (v.coef != 0 && q + nd - 1 > f->emax)
            return FFB_E_INVAL; /* overflow */
        if (v.coef != 0)
            v.coef *= pow10_u128((int)(q - elimit));
        q = elimit;
    }
    v.exp = (int)q;
    df_pack(f, &v, be);
    return 0;
}

int ffb__dec64_format(const uint8_t be[8], char *out, size_t size) {
    return df_format(&fmt64, be, out, size);
}

int ffb__dec128_format(const uint8_t be[16], char *out, size_t size) {
    return df_format(&fmt128, be, out, size);
}

int ffb__dec64_parse(const char *s, size_t len, uint8_t be[8]) {
    return df_parse(&fmt64, s, len, be);
}

int ffb__dec128_parse(const char *s, size_t len, uint8_t be[16]) {
    return df_parse(&fmt128, s, len, be);
}

/* ---- dates and times ----------------------------------------------------- */

enum {
    MJD_TO_MARCH0 = 2400001 - 1721119, /* day 0 of 0000-03-01 based count */
    DAYS_400Y = 146097,
    TIME_HOUR = 36000000,
    TIME_MIN = 600000,
    TIME_SEC = 10000,
    TIME_DAY = 864000000,
};

static int is_leap(int y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int y, int m) {
    static const unsigned char dm[12] = {31, 28, 31, 30, 31, 30,
                                         31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

int ffb__date_encode(int year, int month, int day, int32_t *out) {
    long m, y, c, ya;

    if (!out || year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 ||
        day > days_in_month(year, month))
        return FFB_E_INVAL;
    /* NoThrowTimeStamp::encode_date (02-statements.md 10.1) */
    if (month > 2) {
        m = month - 3;
        y = year;
    } else {
        m = month + 9;
        y = year - 1;
    }
    c = y / 100;
    ya = y - 100 * c;
    *out = (int32_t)((146097 * c) / 4 + (1461 * ya) / 4 + (153 * m + 2) / 5 +
                     day + 1721119 - 2400001);
    return 0;
}

void ffb__date_decode(int32_t days, int *year, int *month, int *day) {
    /* NoThrowTimeStamp::decode_date, after shifting whole 400-year cycles
       so that the count is positive for any int32 (proleptic Gregorian
       beyond the valid range, years <= 0 included). */
    long long nday = (long long)days + MJD_TO_MARCH0;
    long long cycles = 0, century, d, y;
    int mon, dd;

    if (nday < 1) {
        cycles = (1 - nday) / DAYS_400Y + 1;
        nday += cycles * DAYS_400Y;
    }
    century = (4 * nday - 1) / DAYS_400Y;
    nday = 4 * nday - 1 - DAYS_400Y * century;
    d = nday / 4;
    nday = (4 * d + 3) / 1461;
    d = 4 * d + 3 - 1461 * nday;
    d = (d + 4) / 4;
    mon = (int)((5 * d - 3) / 153);
    d = 5 * d - 3 - 153 * mon;
    dd = (int)((d + 5) / 5);
    y = 100 * century + nday - 400 * cycles;
    if (mon < 10) {
        mon += 3;
    } else {
        mon -= 9;
        y++;
    }
    if (year)
        *year = (int)y;
    if (month)
        *month = mon;
    if (day)
        *day = dd;
}

int ffb__time_encode(int hour, int min, int sec, int frac10000, uint32_t *out) {
    if (!out || hour < 0 || hour > 23 || min < 0 || min > 59 || sec < 0 ||
        sec > 59 || frac10000 < 0 || frac10000 > 9999)
        return FFB_E_INVAL;
    *out = (uint32_t)hour * TIME_HOUR + (uint32_t)min * TIME_MIN +
           (uint32_t)sec * TIME_SEC + (uint32_t)frac10000;
    return 0;
}

void ffb__time_decode(uint32_t t, int *hour, int *min, int *sec,
                      int *frac10000) {
    if (hour)
        *hour = (int)(t / TIME_HOUR);
    if (min)
        *min = (int)(t / TIME_MIN % 60);
    if (sec)
        *sec = (int)(t / TIME_SEC % 60);
    if (frac10000)
        *frac10000 = (int)(t % TIME_SEC);
}

static void put_date(struct sbuf *b, int32_t days) {
    int y, m, d;

    ffb__date_decode(days, &y, &m, &d);
    if (y < 0)
        sb_putc(b, '-');
    sb_uint(b, (unsigned long)(y < 0 ? -(long)y : y), 4);
    sb_putc(b, '-');
    sb_uint(b, (unsigned long)m, 2);
    sb_putc(b, '-');
    sb_uint(b, (unsigned long)d, 2);
}

static void put_time(struct sbuf *b, uint32_t t) {
    int h, m, s, f;

    ffb__time_decode(t, &h, &m, &s, &f);
    sb_uint(b, (unsigned long)h, 2);
    sb_putc(b, ':');
    sb_uint(b, (unsigned long)m, 2);
    sb_putc(b, ':');
    sb_uint(b, (unsigned long)s, 2);
    sb_putc(b, '.');
    sb_uint(b, (unsigned long)f, 4);
}

int ffb__date_format(int32_t days, char *out, size_t size) {
    struct sbuf b;

    sb_init(&b, out, size);
    put_date(&b, days);
    return sb_finish(&b);
}

int ffb__time_format(uint32_t t, char *out, size_t size) {
    struct sbuf b;

    sb_init(&b, out, size);
    put_time(&b, t);
    return sb_finish(&b);
}

int ffb__timestamp_format(int32_t days, uint32_t t, char *out, size_t size) {
    struct sbuf b;

    sb_init(&b, out, size);
    put_date(&b, days);
    sb_putc(&b, ' ');
    put_time(&b, t);
    return sb_finish(&b);
}

/* min..max digits at *p as a number; advances *p. */
static int take_uint(const char **p, const char *end, int min, int max,
                     int *out) {
    int n = 0, v = 0;

    while (*p < end && is_digit(**p) && n < max) {
        v = v * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    if (n < min || (*p < end && is_digit(**p)))
        return FFB_E_INVAL;
    *out = v;
    return 0;
}

static int take_char(const char **p, const char *end, char c) {
    if (*p < end && **p == c) {
        (*p)++;
        return 0;
    }
    return FFB_E_INVAL;
}

/* "Y[YYY]-M[M]-D[D]" */
static int take_date(const char **p, const char *end, int32_t *out) {
    int y, m, d;

    if (take_uint(p, end, 1, 4, &y) < 0 || take_char(p, end, '-') < 0 ||
        take_uint(p, end, 1, 2, &m) < 0 || take_char(p, end, '-') < 0 ||
        take_uint(p, end, 1, 2, &d) < 0)
        return FFB_E_INVAL;
    return ffb__date_encode(y, m, d, out);
}

/* "H[H]:M[M][:S[S][.f[f[f[f]]]]]" */
static int take_time(const char **p, const char *end, uint32_t *out) {
    int h, m, s = 0, f = 0;

    if (take_uint(p, end, 1, 2, &h) < 0 || take_char(p, end, ':') < 0 ||
        take_uint(p, end, 1, 2, &m) < 0)
        return FFB_E_INVAL;
    if (take_char(p, end, ':') == 0) {
        if (take_uint(p, end, 1, 2, &s) < 0)
            return FFB_E_INVAL;
        if (take_char(p, end, '.') == 0) {
            const char *start = *p;

            if (take_uint(p, end, 1, 4, &f) < 0)
                return FFB_E_INVAL;
            for (long k = *p - start; k < 4; k++)
                f *= 10;
        }
    }
    return ffb__time_encode(h, m, s, f, out);
}

int ffb__date_parse(const char *s, size_t len, int32_t *out) {
    const char *end;
    int32_t d;

    if (!s || !out)
        return FFB_E_INVAL;
    s = trim(s, &len);
    end = s + len;
    if (take_date(&s, end, &d) < 0 || s != end)
        return FFB_E_INVAL;
    *out = d;
    return 0;
}

int ffb__time_parse(const char *s, size_t len, uint32_t *out) {
    const char *end;
    uint32_t t;

    if (!s || !out)
        return FFB_E_INVAL;
    s = trim(s, &len);
    end = s + len;
    if (take_time(&s, end, &t) < 0 || s != end)
        return FFB_E_INVAL;
    *out = t;
    return 0;
}

int ffb__timestamp_parse(const char *s, size_t len, int32_t *days,
                         uint32_t *t) {
    const char *end;
    int32_t d;
    uint32_t tm = 0;

    if (!s || !days || !t)
        return FFB_E_INVAL;
    s = trim(s, &len);
    end = s + len;
    if (take_date(&s, end, &d) < 0)
        return FFB_E_INVAL;
    if (s != end) {
        /* Only the blank: Firebird refuses "2024-02-29T10:00" (3.0:
           conversion error; 4.0 reads "T10:00" as a time zone). */
        if (*s != ' ')
            return FFB_E_INVAL;
        s++;
        if (take_time(&s, end, &tm) < 0 || s != end)
            return FFB_E_INVAL;
    }
    *days = d;
    *t = tm;
    return 0;
}

/* ---- time zones ---------------------------------------------------------- */

enum {
    TZ_ONE_DAY = 24 * 60 - 1, /* 1439: id of +00:00 */
    TZ_MAX_OFFSET_ID = 2 * TZ_ONE_DAY,
};

int ffb__tz_is_offset(uint16_t id, int *minutes) {
    if (id > TZ_MAX_OFFSET_ID)
        return 0;
    if (minutes)
        *minutes = (int)id - TZ_ONE_DAY;
    return 1;
}

int ffb__tz_name(uint16_t id, char *out, size_t size) {
    struct sbuf b;
    int minutes;

    sb_init(&b, out, size);
    if (ffb__tz_is_offset(id, &minutes)) {
        sb_putc(&b, minutes < 0 ? '-' : '+');
        if (minutes < 0)
            minutes = -minutes;
        sb_uint(&b, (unsigned long)(minutes / 60), 2);
        sb_putc(&b, ':');
        sb_uint(&b, (unsigned long)(minutes % 60), 2);
        return sb_finish(&b);
    }
    if (65535 - id >= FFB__TZ_NAMED_COUNT)
        return -1;
    sb_puts(&b, ffb__tz_names[65535 - id]);
    return sb_finish(&b);
}

int ffb__tz_parse(const char *s, size_t len, uint16_t *id) {
    if (!s || !id)
        return FFB_E_INVAL;
    s = trim(s, &len);
    if (len && (*s == '+' || *s == '-')) {
        const char *p = s + 1, *end = s + len;
        int h, m;
        int neg = *s == '-';

        if (take_uint(&p, end, 1, 2, &h) < 0 || take_char(&p, end, ':') < 0 ||
            take_uint(&p, end, 1, 2, &m) < 0 || p != end || h > 23 || m > 59)
            return FFB_E_INVAL;
        *id = (uint16_t)(TZ_ONE_DAY + (neg ? -1 : 1) * (h * 60 + m));
        return 0;
    }
    for (size_t i = 0; i < FFB__TZ_NAMED_COUNT; i++) {
        if (ascii_ieq(s, len, ffb__tz_names[i])) {
            *id = (uint16_t)(65535 - i);
            return 0;
        }
    }
    return FFB_E_INVAL;
}

/* ---- character sets ------------------------------------------------------ */

static const struct ffb__charset_def *charset_by_id(int id) {
    for (size_t i = 0; i < N_ELEMS(ffb__charsets); i++) {
        if (ffb__charsets[i].id == id)
            return &ffb__charsets[i];
    }
    return NULL;
}

int ffb__charset_id(const char *name, size_t len) {
    if (!name)
        return -1;
    name = trim(name, &len);
    for (size_t i = 0; i < N_ELEMS(ffb__charsets); i++) {
        if (ascii_ieq(name, len, ffb__charsets[i].name))
            return ffb__charsets[i].id;
    }
    for (size_t i = 0; i < N_ELEMS(ffb__charset_aliases); i++) {
        if (ascii_ieq(name, len, ffb__charset_aliases[i].name))
            return ffb__charset_aliases[i].id;
    }
    return -1;
}

const char *ffb__charset_name(int id) {
    const struct ffb__charset_def *cs = charset_by_id(id);

    return cs ? cs->name : NULL;
}

int ffb__charset_max_bytes(int id) {
    const struct ffb__charset_def *cs = charset_by_id(id);

    return cs ? cs->max_bytes : 0;
}

/* ---- UTF-8 --------------------------------------------------------------- */

long ffb__utf8_chars(const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    long n = 0;
    size_t i = 0;

    if (!s)
        return len ? -1 : 0;
    while (i < len) {
        unsigned c = p[i];
        unsigned lo = 0x80, hi = 0xBF;
        size_t extra;

        if (c < 0x80) {
            i++;
            n++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            extra = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            extra = 2;
            if (c == 0xE0)
                lo = 0xA0; /* overlong */
            else if (c == 0xED)
                hi = 0x9F; /* surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            extra = 3;
            if (c == 0xF0)
                lo = 0x90; /* overlong */
            else if (c == 0xF4)
                hi = 0x8F; /* > U+10FFFF */
        } else {
            return -1; /* continuation byte, C0/C1, F5..FF */
        }
        if (len - i <= extra)
            return -1;
        if (p[i + 1] < lo || p[i + 1] > hi)
            return -1;
        for (size_t k = 2; k <= extra; k++) {
            if (p[i + k] < 0x80 || p[i + k] > 0xBF)
                return -1;
        }
        i += extra + 1;
        n++;
    }
    return n;
}

size_t ffb__rtrim_len(const char *s, size_t len) {
    if (!s)
        return 0;
    while (len && s[len - 1] == ' ')
        len--;
    return len;
}

/* ---- characters in multi-byte character sets ----------------------------- */

/* Bytes of the character that starts at p[0] (at most `left`), in the
   encoding of character set `id`; 1 for single-byte sets and for bytes that
   do not start a longer character. The lead-byte ranges are the encodings'
   own (Shift-JIS, EUC, Big5, GBK, GB18030); blanks (0x20) are never a
   trailing byte in any of them, so padding is always found. */
static size_t mb_char_size(int id, const unsigned char *p, size_t left) {
    unsigned c = p[0];
    size_t n = 1;

    switch (id) {
    case 3: /* UNICODE_FSS */
    case 4: /* UTF8 */
        if (c >= 0xF0)
            n = 4;
        else if (c >= 0xE0)
            n = 3;
        else if (c >= 0xC0)
            n = 2;
        break;
    case 5:  /* SJIS_0208 */
    case 68: /* CP943C */
        if ((c >= 0x81 && c <= 0x9F) || (c >= 0xE0 && c <= 0xFC))
            n = 2;
        break;
    case 6:  /* EUCJ_0208 */
    case 44: /* KSC_5601 */
    case 56: /* BIG_5 */
    case 57: /* GB_2312 */
    case 67: /* GBK */
        if (c >= 0x80)
            n = 2;
        break;
    case 69: /* GB18030: 2 bytes, or 4 when the second is a digit */
        if (c >= 0x81 && c <= 0xFE)
            n = left >= 2 && p[1] >= 0x30 && p[1] <= 0x39 ? 4 : 2;
        break;
    default:
        break;
    }
    return n < left ? n : left;
}

size_t ffb__mb_skip(int charset, const char *s, size_t len, long nchars) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    if (!s)
        return 0;
    while (i < len && nchars-- > 0)
        i += mb_char_size(charset, p + i, len - i);
    return i;
}

long ffb__mb_chars(int charset, const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    long n = 0;
    size_t i = 0;

    if (!s)
        return 0;
    if (charset == 3 || charset == 4)
        return ffb__utf8_chars(s, len);
    if (ffb__charset_max_bytes(charset) <= 1)
        return (long)len;
    while (i < len) {
        i += mb_char_size(charset, p + i, len - i);
        n++;
    }
    return n;
}
