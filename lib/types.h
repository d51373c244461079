/*
 * Value conversions between Firebird's wire representations and what
 * applications use: exact decimals, DECFLOAT (DPD), dates and times, time
 * zones, character sets. Pure functions, no allocation, no I/O.
 * Reference: protocol part 02, sections 9 and 10.
 */
#ifndef FFB_LIB_TYPES_H
#define FFB_LIB_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* 128-bit integers: a GCC/Clang extension on 64-bit targets. */
__extension__ typedef __int128 ffb__i128;
__extension__ typedef unsigned __int128 ffb__u128;

/* ---- exact decimals --------------------------------------------------------- */

/*
 * Parse decimal text ("-12.345", "+7", ".5", "1e3", "1.5E-2"; leading and
 * trailing blanks allowed) into an integer scaled by 10^-scale (scale <= 0
 * is the usual case: scale -2 turns "12.345" into 1235). Excess fractional
 * digits are rounded half away from zero, as Firebird does. Returns 0, or
 * FFB_E_INVAL with *overflow = 0 (not a number) or *overflow = 1 (the
 * scaled value does not fit in 128 bits); `overflow` may be NULL.
 */
int ffb__dec_parse(const char *s, size_t len, int scale, ffb__i128 *out,
                   int *overflow);

/* Format v x 10^scale as decimal text ("-12.34", scale 0 gives "-1234",
   positive scales append zeros). Returns the length written (snprintf
   semantics: the full length even when truncated). */
int ffb__dec_format(ffb__i128 v, int scale, char *out, size_t size);

/* Rescale v from scale `from` to scale `to` (rounding half away from zero
   when digits are dropped). Returns 0 or FFB_E_INVAL on overflow. */
int ffb__dec_rescale(ffb__i128 v, int from, int to, ffb__i128 *out);

/* ---- DECFLOAT (IEEE 754-2008 decimal64/decimal128, DPD, big-endian) ---------- */

/*
 * To text: "1", "-1.5", "1E+300", "NaN", "sNaN", "Infinity", "-Infinity",
 * "-0", keeping trailing zeros ("1.000"); the same forms Firebird prints.
 * Returns the length (snprintf semantics).
 */
int ffb__dec64_format(const uint8_t be[8], char *out, size_t size);
int ffb__dec128_format(const uint8_t be[16], char *out, size_t size);

/*
 * From text: decimal with optional exponent, "NaN", "sNaN", "Inf",
 * "Infinity" (any case, optional sign). More digits than the format holds
 * (16 / 34) are rounded HALF_UP (ties away from zero), as Firebird rounds
 * by default; an exponent out of range is
 * FFB_E_INVAL. Returns 0 or FFB_E_INVAL.
 */
int ffb__dec64_parse(const char *s, size_t len, uint8_t be[8]);
int ffb__dec128_parse(const char *s, size_t len, uint8_t be[16]);

/* ---- dates and times ---------------------------------------------------------- */

/* Days since 1858-11-17 (Firebird's date) <-> proleptic Gregorian date.
   Valid range 0001-01-01 .. 9999-12-31; ffb__date_encode returns
   FFB_E_INVAL outside it or for an impossible date. */
int ffb__date_encode(int year, int month, int day, int32_t *out);
void ffb__date_decode(int32_t days, int *year, int *month, int *day);

/* Time of day in 1/10000 s (0 .. 863999999). */
int ffb__time_encode(int hour, int min, int sec, int frac10000, uint32_t *out);
void ffb__time_decode(uint32_t t, int *hour, int *min, int *sec,
                      int *frac10000);

/*
 * Text forms. Formatting: "YYYY-MM-DD", "HH:MM:SS.ffff",
 * "YYYY-MM-DD HH:MM:SS.ffff" (4 fraction digits, always). Parsing accepts
 * "YYYY-MM-DD", an optional time part after one blank (not 'T': Firebird
 * refuses it), "HH:MM[:SS[.f...]]"
 * with 1-4 fraction digits (more are an error). Returns 0 / FFB_E_INVAL;
 * format functions return the length.
 */
int ffb__date_format(int32_t days, char *out, size_t size);
int ffb__time_format(uint32_t t, char *out, size_t size);
int ffb__timestamp_format(int32_t days, uint32_t t, char *out, size_t size);
int ffb__date_parse(const char *s, size_t len, int32_t *out);
int ffb__time_parse(const char *s, size_t len, uint32_t *out);
int ffb__timestamp_parse(const char *s, size_t len, int32_t *days,
                         uint32_t *t);

/* ---- time zones --------------------------------------------------------------- */

/*
 * Firebird time zone ids: offsets are 1439 + minutes (0 .. 2878, i.e.
 * -23:59 .. +23:59); named zones count down from 65535 in the order of
 * Firebird's table (src/common/TimeZones.h, generated into
 * lib/tz_table.h). ffb__tz_name writes "+02:00" / "-05:00" for offset ids
 * and the name for named ids; returns the length, or -1 for an unknown id.
 * ffb__tz_parse accepts a name (case-insensitive) or "+hh:mm" / "-hh:mm" /
 * "GMT"; returns 0 or FFB_E_INVAL.
 */
int ffb__tz_name(uint16_t id, char *out, size_t size);
int ffb__tz_parse(const char *s, size_t len, uint16_t *id);
/* 1 when id is an offset zone; *minutes = its offset. */
int ffb__tz_is_offset(uint16_t id, int *minutes);

/* ---- character sets ------------------------------------------------------------ */

/* Firebird character set ids (RDB$CHARACTER_SETS), names and the maximum
   bytes per character: NONE 0/1, OCTETS 1/1, ASCII 2/1, UNICODE_FSS 3/3,
   UTF8 4/4, ... WIN1252 53/1, ... */
int ffb__charset_id(const char *name, size_t len);      /* -1 if unknown */
const char *ffb__charset_name(int id);                   /* NULL if unknown */
int ffb__charset_max_bytes(int id);                      /* 0 if unknown */

/* Number of UTF-8 characters in s, or -1 when s is not valid UTF-8
   (overlong forms, surrogates, > U+10FFFF rejected). */
long ffb__utf8_chars(const char *s, size_t len);

/*
 * Characters of text in character set `charset` (UTF8/UNICODE_FSS
 * validated: -1 when not valid UTF-8; single-byte and unknown sets: one
 * per byte; the other multi-byte sets - SJIS_0208, EUCJ_0208, KSC_5601,
 * BIG_5, GB_2312, GBK, CP943C, GB18030 - by their lead bytes). A
 * character cut short at the end counts as one.
 */
long ffb__mb_chars(int charset, const char *s, size_t len);

/* Bytes taken by the first `nchars` characters of s (all of it when it
   has fewer), by the same rules. */
size_t ffb__mb_skip(int charset, const char *s, size_t len, long nchars);

/* Length of s without trailing blanks (0x20); for CHAR padding. */
size_t ffb__rtrim_len(const char *s, size_t len);

#endif
