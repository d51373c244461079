/*
 * The 128-bit integer runtime that 32-bit x86 toolchains do not ship, for
 * the i386 build of tests/run-all.sh (stage 3b) only. Never part of the
 * library.
 *
 * libfastfb uses __int128 (lib/types.h). gcc has no __int128 on i386;
 * clang has it with -fforce-enable-int128 and inlines +, -, *, shifts and
 * (clang >= 15) division, but calls the usual helpers for the rest, and
 * neither libgcc nor compiler-rt provides them on i386. These are those
 * helpers, in portable C that uses no 128-bit division or conversion
 * itself: division and remainder by shift and subtract, conversions
 * to and from double through the 64-bit ones (correctly rounded: the bits
 * shifted out are kept as a sticky bit).
 *
 * Built by run-all.sh with the cross file's compiler and flags, and linked
 * into everything the i386 build links (c_link_args).
 */
#if !defined(__SIZEOF_INT128__)
#error "compile with clang -m32 -fforce-enable-int128"
#endif

#include <stdint.h>
#include <string.h>

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

/* The names and signatures the compiler calls. */
u128 __udivti3(u128 a, u128 b);
u128 __umodti3(u128 a, u128 b);
i128 __divti3(i128 a, i128 b);
i128 __modti3(i128 a, i128 b);
double __floatuntidf(u128 a);
double __floattidf(i128 a);
u128 __fixunsdfti(double d);
i128 __fixdfti(double d);
float __floatuntisf(u128 a);
float __floattisf(i128 a);

static uint64_t hi64(u128 v) {
    return (uint64_t)(v >> 64);
}

static int clz128(u128 v) {
    uint64_t h = hi64(v);
    return h ? __builtin_clzll(h) : 64 + __builtin_clzll((uint64_t)v);
}

/* a / b and a % b; b != 0. */
static u128 udivmod(u128 a, u128 b, u128 *rem) {
    if (b == 0)
        __builtin_trap();
    if (hi64(a) == 0 && hi64(b) == 0) {
        uint64_t x = (uint64_t)a, y = (uint64_t)b;
        *rem = x % y;
        return x / y;
    }
    if (b > a) {
        *rem = a;
        return 0;
    }
    int shift = clz128(b) - clz128(a);
    b <<= shift;
    u128 q = 0;
    for (int i = 0; i <= shift; i++) {
        q <<= 1;
        if (a >= b) {
            a -= b;
            q |= 1;
        }
        b >>= 1;
    }
    *rem = a;
    return q;
}

static u128 uabs(i128 v) {
    return v < 0 ? -(u128)v : (u128)v;
}

u128 __udivti3(u128 a, u128 b) {
    u128 r;
    return udivmod(a, b, &r);
}

u128 __umodti3(u128 a, u128 b) {
    u128 r;
    udivmod(a, b, &r);
    return r;
}

i128 __divti3(i128 a, i128 b) {
    u128 r, q = udivmod(uabs(a), uabs(b), &r);
    return (i128)((a < 0) != (b < 0) ? -q : q);
}

i128 __modti3(i128 a, i128 b) {
    u128 r;
    udivmod(uabs(a), uabs(b), &r);
    return (i128)(a < 0 ? -r : r);
}

/* v as 64 bits and a power of two: v ~ m * 2^s, the dropped bits ORed into
   the lowest bit of m so that one rounding of m is the rounding of v. */
static uint64_t squeeze(u128 v, int *s) {
    int bits = 128 - clz128(v);
    *s = bits > 64 ? bits - 64 : 0;
    if (*s == 0)
        return (uint64_t)v;
    u128 lost = v & (((u128)1 << *s) - 1);
    return (uint64_t)(v >> *s) | (lost != 0);
}

static double two_to(int s) { /* 0 <= s <= 64: exact */
    return s == 64 ? 18446744073709551616.0 : (double)((uint64_t)1 << s);
}

double __floatuntidf(u128 a) {
    int s;
    uint64_t m = squeeze(a, &s);
    volatile double d = (double)m; /* rounded to double here (x87) */
    return d * two_to(s);
}

double __floattidf(i128 a) {
    double d = __floatuntidf(uabs(a));
    return a < 0 ? -d : d;
}

float __floatuntisf(u128 a) {
    int s;
    uint64_t m = squeeze(a, &s);
    volatile float f = (float)m;
    return (float)((double)f * two_to(s));
}

float __floattisf(i128 a) {
    float f = __floatuntisf(uabs(a));
    return a < 0 ? -f : f;
}

/* Truncation toward zero; out of range saturates (the C behaviour is
   undefined), NaN gives 0. */
u128 __fixunsdfti(double d) {
    if (!(d >= 1.0))
        return 0;
    if (d < 18446744073709551616.0)
        return (uint64_t)d;
    uint64_t bits;
    memcpy(&bits, &d, sizeof(bits));
    int e = (int)((bits >> 52) & 0x7FF) - 1075; /* d = mant * 2^e */
    if (e > 75)
        return ~(u128)0;
    uint64_t mant = (bits & ((UINT64_C(1) << 52) - 1)) | UINT64_C(1) << 52;
    return (u128)mant << e; /* e >= 12 here */
}

i128 __fixdfti(double d) {
    const i128 max = (i128)(~(u128)0 >> 1);
    if (d != d)
        return 0;
    u128 u = __fixunsdfti(d < 0 ? -d : d);
    if (u > (u128)max)
        return d < 0 ? -max - 1 : max;
    return d < 0 ? -(i128)u : (i128)u;
}
