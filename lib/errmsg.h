/*
 * Firebird status codes ("gds codes"): symbol, SQLCODE, SQLSTATE and
 * libfastfb's own message text per code, and the rules that turn a status
 * vector into one SQLCODE and one SQLSTATE.
 *
 * The facts (symbol, SQLCODE, SQLSTATE) are generated from Firebird's
 * message headers into lib/errmsg_table.h by tools/gen_errmsg.py; the texts
 * are our own wording, written in lib/errmsg.c. Reference:
 * docs/protocol/01-connection.md, 11.2-11.4; STYLE.md section 4.
 *
 * Everything here is const data and pure functions: no allocation, no
 * mutable state, safe from any thread.
 */
#ifndef FFB_ERRMSG_H
#define FFB_ERRMSG_H

#include <stddef.h>
#include <stdint.h>

/* Status codes the rules below treat specially. */
#define FFB__GDS_CODE_RANDOM 335544382u /* isc_random: "@1" */
#define FFB__GDS_CODE_SQLERR 335544436u /* isc_sqlerr: SQLCODE in its arg */

/* Codes the client raises itself for conversions refused before sending
   (lib/values.c); lib/errmsg.c checks them against the generated table. */
#define FFB__GDS_CODE_ARITH_EXCEPT 335544321u
#define FFB__GDS_CODE_CONVERT_ERROR 335544334u
#define FFB__GDS_CODE_DSQL_ERROR 335544569u
#define FFB__GDS_CODE_MALFORMED_STRING 335544849u
#define FFB__GDS_CODE_STRING_TRUNCATION 335544914u
#define FFB__GDS_CODE_NUMERIC_OUT_OF_RANGE 335544916u
#define FFB__GDS_CODE_TRUNC_LIMITS 335545033u

struct ffb__gds_entry {
    uint32_t code;      /* 0x14000000 | facility << 16 | number */
    const char *symbol; /* without "isc_"; NULL for unnamed messages */
    int16_t sqlcode;    /* -999 when Firebird has none (generic) */
    char sqlstate[6];   /* "42000"; "" when Firebird has none */
    uint8_t nargs;      /* highest @n Firebird's message uses (0..9) */
    const char *text;   /* our wording with @1..@9, or NULL */
};

/*
 * The entry for `code`, or NULL if the code is not in the table (binary
 * search). The pointer is to static const data.
 */
const struct ffb__gds_entry *ffb__gds_lookup(uint32_t code);

/* Table walking, for tests: number of codes, the i-th (by code, as
   ffb__gds_lookup returns it; NULL when i is out of range), and how many
   of them have our text. */
size_t ffb__gds_count(void);
const struct ffb__gds_entry *ffb__gds_at(size_t i);
size_t ffb__gds_text_count(void);

/*
 * Formats one code's message into `out` (snprintf-like).
 *
 * - Code with our text: the text with @1..@9 replaced by args[0..8]
 *   ("@@" gives "@"); an absent argument (index >= nargs, or a NULL
 *   pointer) prints "<missing argument n>".
 * - Known code without our text: the symbol, then every argument:
 *   `dsql_some_thing: "arg1", 42`. Arguments that are decimal integers are
 *   printed bare, others in double quotes. Unnamed codes print
 *   "Firebird error <code>" in place of the symbol.
 * - Unknown code: "unknown Firebird error <code>", then the arguments the
 *   same way.
 *
 * Arguments are the isc_arg_string / isc_arg_number values of the code's
 * group, in order, numbers already converted to decimal text.
 * Returns the length of the whole message (excluding the NUL), which may be
 * more than out_size - 1 when truncated; -1 if that does not fit in an int.
 * When out_size > 0 the output is always NUL-terminated; out may be NULL
 * when out_size is 0.
 */
int ffb__gds_format(char *out, size_t out_size, uint32_t code,
                    const char *const *args, size_t nargs);

/*
 * The SQLCODE of a status vector (gds__sqlcode, 01-connection.md 11.3).
 * `codes` are the vector's isc_arg_gds codes in order (not the warnings).
 * If the vector has isc_sqlerr, pass have_sqlerr = 1 and its number
 * argument: that is the answer. Otherwise the first code whose table
 * SQLCODE is not -999 gives it; else -999. Success (n == 0 or codes[0] ==
 * 0) gives 0.
 */
int ffb__status_sqlcode(const uint32_t *codes, size_t n, int have_sqlerr,
                        int32_t sqlerr_number);

/*
 * The SQLSTATE of a status vector (fb_sqlstate, 01-connection.md 11.3):
 * the server's isc_arg_sql_state when given (non-NULL, non-empty);
 * otherwise the table SQLSTATE of the first code (skipping isc_random,
 * isc_sqlerr, unknown codes and codes whose SQLSTATE is "" or "00000")
 * that is not one of the generic 22000, 42000, HY000; failing that the
 * first generic one seen; else "HY000". Success (n == 0 or codes[0] == 0)
 * gives "00000".
 * Returns server_sqlstate_or_null itself or a static string.
 */
const char *ffb__status_sqlstate(const uint32_t *codes, size_t n,
                                 const char *server_sqlstate_or_null);

#endif /* FFB_ERRMSG_H */
