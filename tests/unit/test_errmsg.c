/*
 * lib/errmsg.c: gds code table, message formatting, SQLCODE/SQLSTATE rules
 * (docs/protocol/01-connection.md, 11.3 and 11.4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <stdlib.h>

#include "lib/errmsg.h"
#include "lib/internal.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

enum {
    ARITH_EXCEPT = 335544321u,
    DEADLOCK = 335544336u,
    IO_ERROR = 335544344u,
    LOCK_CONFLICT = 335544345u,
    RANDOM = 335544382u,
    SQLERR = 335544436u,
    UPDATE_CONFLICT = 335544451u,
    FOREIGN_KEY = 335544466u,
    LOGIN = 335544472u,
    DSQL_ERROR = 335544569u,
    DSQL_COMMAND_ERR = 335544570u,
    DSQL_FIELD_ERR = 335544578u,
    DSQL_TOKEN_UNK_ERR = 335544634u,
    UNIQUE_KEY_VIOLATION = 335544665u,
    CONVERT_ERROR = 335544334u,
    STRING_TRUNCATION = 335544914u,
    DSQL_DBKEY_FROM_NON_TABLE = 336003074u,
    NBACKUP_3 = 337117187u, /* a message Firebird gives no symbol */
};

static void check_entry(uint32_t code, const char *symbol, int sqlcode,
                        const char *sqlstate) {
    const struct ffb__gds_entry *e = ffb__gds_lookup(code);

    assert_non_null(e);
    assert_int_equal(e->code, code);
    assert_string_equal(e->symbol, symbol);
    assert_int_equal(e->sqlcode, sqlcode);
    assert_string_equal(e->sqlstate, sqlstate);
    assert_non_null(e->text);
}

static void test_errmsg_lookup_known_codes(void **state) {
    (void)state;
    check_entry(LOGIN, "login", -902, "28000");
    check_entry(UNIQUE_KEY_VIOLATION, "unique_key_violation", -803, "23000");
    check_entry(DSQL_ERROR, "dsql_error", -902, "42000");
    check_entry(DEADLOCK, "deadlock", -913, "40001");
    check_entry(IO_ERROR, "io_error", -902, "08001");
    check_entry(DSQL_TOKEN_UNK_ERR, "dsql_token_unk_err", -104, "42000");
    check_entry(STRING_TRUNCATION, "string_truncation", -802, "22001");
    check_entry(DSQL_DBKEY_FROM_NON_TABLE, "dsql_dbkey_from_non_table", -607,
                "HY000");
    assert_int_equal(ffb__gds_lookup(UNIQUE_KEY_VIOLATION)->nargs, 2);
    assert_string_equal(ffb__gds_lookup(FFB__GDS_CODE_RANDOM)->symbol,
                        "random");
    assert_string_equal(ffb__gds_lookup(FFB__GDS_CODE_SQLERR)->symbol,
                        "sqlerr");
}

static void test_errmsg_lookup_unknown_code(void **state) {
    (void)state;
    assert_null(ffb__gds_lookup(0));
    assert_null(ffb__gds_lookup(1));
    assert_null(ffb__gds_lookup(335544320u + 16000u));
    assert_null(ffb__gds_lookup(UINT32_MAX));
}

static void test_errmsg_lookup_unnamed_code(void **state) {
    const struct ffb__gds_entry *e = ffb__gds_lookup(NBACKUP_3);

    (void)state;
    assert_non_null(e);
    assert_null(e->symbol);
    assert_null(e->text);
    assert_int_equal(e->sqlcode, -999);
    assert_string_equal(e->sqlstate, "");
}

/* Sorted, every code reachable, every text reachable and complete. */
static void test_errmsg_table_consistent(void **state) {
    size_t n = ffb__gds_count();
    size_t texts = 0;

    (void)state;
    assert_true(n > 2500);
    assert_null(ffb__gds_at(n));
    for (size_t i = 0; i < n; i++) {
        const struct ffb__gds_entry *e = ffb__gds_at(i);

        assert_non_null(e);
        assert_true((e->code & 0x14000000u) == 0x14000000u);
        if (i > 0)
            assert_true(ffb__gds_at(i - 1)->code < e->code);
        assert_ptr_equal(ffb__gds_lookup(e->code), e);
        assert_true(e->nargs <= 9);
        if (e->text != NULL) {
            unsigned used = 0;

            texts++;
            for (const char *p = e->text; *p != '\0'; p++) {
                if (p[0] == '@' && p[1] == '@')
                    p++;
                else if (p[0] == '@' && p[1] >= '1' && p[1] <= '9')
                    used |= 1u << (p[1] - '0');
            }
            /* Exactly @1..@nargs, so no server argument is dropped. */
            if (used != ((1u << (e->nargs + 1)) - 2u))
                fail_msg("text of %s uses the wrong arguments", e->symbol);
        }
    }
    assert_int_equal(texts, ffb__gds_text_count());
}

/* Every code of 01-connection.md 11.4, plus common ones, has our text. */
static void test_errmsg_common_codes_have_text(void **state) {
    static const struct {
        uint32_t code;
        const char *symbol;
    } common[] = {
        {335544321u, "arith_except"},
        {335544323u, "bad_db_format"},
        {335544324u, "bad_db_handle"},
        {335544325u, "bad_dpb_content"},
        {335544326u, "bad_dpb_form"},
        {335544332u, "bad_trans_handle"},
        {335544336u, "deadlock"},
        {335544342u, "integ_fail"},
        {335544344u, "io_error"},
        {335544345u, "lock_conflict"},
        {335544347u, "not_valid"},
        {335544349u, "no_dup"},
        {335544352u, "no_priv"},
        {335544361u, "read_only_trans"},
        {335544373u, "sys_request"},
        {335544375u, "unavailable"},
        {335544378u, "wish_list"},
        {335544382u, "random"},
        {335544421u, "connect_reject"},
        {335544436u, "sqlerr"},
        {335544451u, "update_conflict"},
        {335544466u, "foreign_key"},
        {335544472u, "login"},
        {335544510u, "lock_timeout"},
        {335544528u, "shutdown"},
        {335544558u, "check_constraint"},
        {335544569u, "dsql_error"},
        {335544665u, "unique_key_violation"},
        {335544667u, "drdb_completed_with_errs"},
        {335544721u, "network_error"},
        {335544722u, "net_connect_err"},
        {335544726u, "net_read_err"},
        {335544727u, "net_write_err"},
        {335544734u, "io_open_err"},
        {335544741u, "lost_db_connection"},
        {335544794u, "cancelled"},
        {335544856u, "att_shutdown"},
        {335544882u, "long_login"},
        {335545017u, "async_active"},
        {335545029u, "missing_data_structures"},
        {335545061u, "multi_segment"},
        {335545062u, "login_changed"},
        {335545063u, "auth_handshake_limit"},
        {335545064u, "wirecrypt_incompatible"},
        {335545065u, "miss_wirecrypt"},
        {335545066u, "wirecrypt_key"},
        {335545067u, "wirecrypt_plugin"},
        {335545069u, "auth_data"},
        {335545070u, "auth_datalength"},
        {335545106u, "login_error"},
        {335545127u, "cfg_stmt_timeout"},
        {335545128u, "att_stmt_timeout"},
        {335545129u, "req_stmt_timeout"},
        {335545130u, "att_shut_killed"},
        {335545131u, "att_shut_idle"},
        {335545132u, "att_shut_db_down"},
        {335545133u, "att_shut_engine"},
        {335545173u, "deflate_init"},
        {335545174u, "inflate_init"},
        {335545179u, "multi_segment_dup"},
        {335545180u, "non_plugin_protocol"},
        {335545278u, "quoted_str_bad"},
        {335545279u, "quoted_str_miss"},
        /* common SQL/runtime codes beyond that table */
        {335544334u, "convert_error"},
        {335544914u, "string_truncation"},
        {335544916u, "numeric_out_of_range"},
        {335544570u, "dsql_command_err"},
        {335544578u, "dsql_field_err"},
        {335544580u, "dsql_relation_err"},
        {335544634u, "dsql_token_unk_err"},
        {335544880u, "not_valid_for"},
        {335544351u, "no_meta_update"},
        {335544364u, "req_sync"},
        {335544485u, "bad_stmt_handle"},
        {335544585u, "dsql_stmt_handle"},
        {335544328u, "bad_segstr_handle"},
        {335544838u, "foreign_key_target_doesnt_exist"},
        {335544839u, "foreign_key_references_present"},
        {335544878u, "concurrent_transaction"},
    };

    (void)state;
    for (size_t i = 0; i < N(common); i++) {
        const struct ffb__gds_entry *e = ffb__gds_lookup(common[i].code);

        assert_non_null(e);
        assert_string_equal(e->symbol, common[i].symbol);
        if (e->text == NULL)
            fail_msg("no text for %s", e->symbol);
    }
}

static void test_errmsg_format_with_args(void **state) {
    const char *args[] = {"INTEG_8", "TERR"};
    char buf[256];
    int len;

    (void)state;
    len = ffb__gds_format(buf, sizeof buf, UNIQUE_KEY_VIOLATION, args, 2);
    assert_int_equal(len, (int)strlen(buf));
    assert_non_null(strstr(buf, "\"INTEG_8\""));
    assert_non_null(strstr(buf, "\"TERR\""));
    assert_true(strstr(buf, "\"INTEG_8\"") < strstr(buf, "\"TERR\""));
    assert_null(strchr(buf, '@'));

    const char *io[] = {"open", "/srv/db/nope.fdb"};
    len = ffb__gds_format(buf, sizeof buf, IO_ERROR, io, 2);
    assert_int_equal(len, (int)strlen(buf));
    assert_non_null(strstr(buf, "\"open\""));
    assert_non_null(strstr(buf, "\"/srv/db/nope.fdb\""));

    const char *pos[] = {"1", "8"};
    ffb__gds_format(buf, sizeof buf, DSQL_TOKEN_UNK_ERR, pos, 2);
    assert_non_null(strstr(buf, "line 1, column 8"));
}

static void test_errmsg_format_missing_args(void **state) {
    const char *args[] = {"INTEG_8"};
    const char *with_null[] = {"INTEG_8", NULL};
    char buf[256];
    char buf2[256];

    (void)state;
    ffb__gds_format(buf, sizeof buf, UNIQUE_KEY_VIOLATION, args, 1);
    assert_non_null(strstr(buf, "INTEG_8"));
    assert_non_null(strstr(buf, "<missing argument 2>"));
    assert_null(strstr(buf, "<missing argument 1>"));

    ffb__gds_format(buf2, sizeof buf2, UNIQUE_KEY_VIOLATION, with_null, 2);
    assert_string_equal(buf, buf2);

    ffb__gds_format(buf, sizeof buf, UNIQUE_KEY_VIOLATION, NULL, 0);
    assert_non_null(strstr(buf, "<missing argument 1>"));
    assert_non_null(strstr(buf, "<missing argument 2>"));
}

static void test_errmsg_format_without_text(void **state) {
    const char *args[] = {"arg1", "42", "-7", "4x"};
    char buf[256];
    int len;

    (void)state;
    /* isc_dsql_dbkey_from_non_table has a symbol; use a code that has no
       text of ours: jrd_bugchk symbol rdb$triggers_rdb$flags_corrupt. */
    len = ffb__gds_format(buf, sizeof buf, 336527664u, args, 4);
    assert_string_equal(buf, "rdb$triggers_rdb$flags_corrupt: \"arg1\", 42, "
                             "-7, \"4x\"");
    assert_int_equal(len, (int)strlen(buf));

    ffb__gds_format(buf, sizeof buf, 336527664u, NULL, 0);
    assert_string_equal(buf, "rdb$triggers_rdb$flags_corrupt");

    ffb__gds_format(buf, sizeof buf, NBACKUP_3, args, 1);
    assert_string_equal(buf, "Firebird error 337117187: \"arg1\"");
}

/* Arguments beyond those a text uses follow it: none is lost. */
static void test_errmsg_format_extra_args(void **state) {
    const char *args[] = {"5", "6", "spare", "7"};
    char buf[256];
    int len;

    (void)state;
    /* trunc_limits: "expected length @1, actual @2". */
    len = ffb__gds_format(buf, sizeof buf, 335545033u, args, 4);
    assert_string_equal(buf, "expected length 5, actual 6 (\"spare\", 7)");
    assert_int_equal(len, (int)strlen(buf));
    len = ffb__gds_format(buf, sizeof buf, 335545033u, args, 2);
    assert_string_equal(buf, "expected length 5, actual 6");
    /* A text without arguments (numeric_out_of_range) given one. */
    ffb__gds_format(buf, sizeof buf, 335544916u, args + 2, 1);
    assert_non_null(strstr(buf, "out of range (\"spare\")"));
}

/* Our wording covers every named code of the engine (JRD), DSQL, DYN and
   SQLERR facilities - what a connection meets: DSQL errors (with
   isc_dsql_error and isc_sqlerr), DDL (DYN), constraints, locks, security,
   I/O - except the write-ahead log and journal codes of InterBase, which
   Firebird no longer raises. */
static void test_errmsg_server_codes_have_text(void **state) {
    static const char *const obsolete[] = {
        "no_wal_no_jrn", "walw_err", "logh_small", "logh_inv_version",
        "logh_open_flag", "logh_open_flag2", "logh_diff_dbname",
        "logf_unexpected_eof", "logr_incomplete", "logr_header_small",
        "logb_small", "wal_illegal_attach", "wal_invalid_wpb",
        "wal_err_rollover", "no_wal", "drop_wal", "wal_subsys_error",
        "wal_subsys_corrupt", "no_archive", "wal_bugcheck", "wal_cant_expand",
        "cache_restart", "jrn_present", "wal_err_rollover2",
        "wal_err_jrn_comm", "wal_err_expansion", "wal_err_setup",
        "wal_err_ww_sync", "wal_err_ww_start", "wal_cache_err", "no_jrn",
        "start_cm_for_wal", "wal_ovflow_log_required", "wal_shadow_err",
        "jrn_format_err", "log_redef", "log_too_small", "partition_too_small",
        "partition_not_supp", "log_length_spec"};
    size_t missing = 0, checked = 0, skipped = 0;

    (void)state;
    for (size_t i = 0; i < ffb__gds_count(); i++) {
        const struct ffb__gds_entry *e = ffb__gds_at(i);
        unsigned facility = (e->code >> 16) & 0x1F;
        if (e->symbol == NULL ||
            (facility != 0 && facility != 7 && facility != 8 && facility != 13))
            continue;
        int old = 0;
        for (size_t k = 0; k < sizeof obsolete / sizeof obsolete[0]; k++)
            old |= strcmp(e->symbol, obsolete[k]) == 0;
        if (old) {
            skipped++;
            continue;
        }
        checked++;
        if (e->text == NULL) {
            print_error("no text for %u (%s, SQLSTATE %s)\n",
                        (unsigned)e->code, e->symbol, e->sqlstate);
            missing++;
        }
    }
    assert_int_equal(skipped, sizeof obsolete / sizeof obsolete[0]);
    assert_true(checked > 1000);
    assert_int_equal(missing, 0);
}

static void test_errmsg_format_unknown_code(void **state) {
    const char *args[] = {"x", "12"};
    char buf[128];
    int len;

    (void)state;
    len = ffb__gds_format(buf, sizeof buf, 123456u, args, 2);
    assert_string_equal(buf, "unknown Firebird error 123456: \"x\", 12");
    assert_int_equal(len, (int)strlen(buf));

    ffb__gds_format(buf, sizeof buf, 123456u, NULL, 0);
    assert_string_equal(buf, "unknown Firebird error 123456");
}

static void test_errmsg_format_truncates(void **state) {
    const char *args[] = {"INTEG_8", "TERR"};
    char full[256];
    char small[8];
    int want;

    (void)state;
    want = ffb__gds_format(full, sizeof full, UNIQUE_KEY_VIOLATION, args, 2);
    assert_true(want > 10);

    memset(small, 'Z', sizeof small);
    assert_int_equal(
        ffb__gds_format(small, sizeof small, UNIQUE_KEY_VIOLATION, args, 2),
        want);
    assert_int_equal(small[sizeof small - 1], '\0');
    assert_memory_equal(small, full, sizeof small - 1);

    memset(small, 'Z', sizeof small);
    assert_int_equal(ffb__gds_format(small, 1, UNIQUE_KEY_VIOLATION, args, 2),
                     want);
    assert_int_equal(small[0], '\0');
    assert_int_equal(small[1], 'Z');

    assert_int_equal(ffb__gds_format(NULL, 0, UNIQUE_KEY_VIOLATION, args, 2),
                     want);

    /* Truncation inside the symbol/argument fallback too. */
    const char *a2[] = {"abcdef"};
    want = ffb__gds_format(NULL, 0, 123u, a2, 1);
    assert_int_equal(want, (int)strlen("unknown Firebird error 123: "
                                       "\"abcdef\""));
    assert_int_equal(ffb__gds_format(small, 5, 123u, a2, 1), want);
    assert_string_equal(small, "unkn");
}

static void test_errmsg_sqlcode_from_sqlerr(void **state) {
    const uint32_t codes[] = {DSQL_ERROR, SQLERR, DSQL_TOKEN_UNK_ERR};

    (void)state;
    assert_int_equal(ffb__status_sqlcode(codes, N(codes), 1, -104), -104);
}

static void test_errmsg_sqlcode_from_table(void **state) {
    const uint32_t codes[] = {UNIQUE_KEY_VIOLATION, DSQL_ERROR};
    const uint32_t generic_first[] = {0x14000000u | (13u << 16) | 1u, DEADLOCK};
    const uint32_t unknown[] = {123u, 0x14000000u | (13u << 16) | 1u};

    (void)state;
    assert_int_equal(ffb__status_sqlcode(codes, N(codes), 0, 0), -803);
    /* SQLERR 1 has no SQLCODE (-999): the next code decides. */
    assert_int_equal(ffb__status_sqlcode(generic_first, 2, 0, 0), -913);
    assert_int_equal(ffb__status_sqlcode(unknown, 2, 0, 0), -999);
}

static void test_errmsg_sqlcode_success(void **state) {
    const uint32_t ok[] = {0};

    (void)state;
    assert_int_equal(ffb__status_sqlcode(ok, 1, 0, 0), 0);
    assert_int_equal(ffb__status_sqlcode(NULL, 0, 0, 0), 0);
}

static void test_errmsg_sqlstate_generic_kept(void **state) {
    /* dsql_error, sqlerr and dsql_token_unk_err: all generic 42000 (the
       table gives token_unk_err 42000, not a specific 42xxx). */
    const uint32_t codes[] = {DSQL_ERROR, SQLERR, DSQL_TOKEN_UNK_ERR};

    (void)state;
    assert_string_equal(ffb__status_sqlstate(codes, N(codes), NULL), "42000");
}

static void test_errmsg_sqlstate_specific_wins(void **state) {
    /* dsql_error 42000 (generic), dsql_field_err 42S22 (specific). */
    const uint32_t codes[] = {DSQL_ERROR, SQLERR, DSQL_FIELD_ERR};
    /* arith_except 22000 (generic), then string_truncation 22001. */
    const uint32_t trunc[] = {ARITH_EXCEPT, STRING_TRUNCATION};
    /* The first generic one is used when nothing specific follows. */
    const uint32_t two_generic[] = {ARITH_EXCEPT, DSQL_ERROR};
    /* isc_random is skipped even though its SQLSTATE is HY000. */
    const uint32_t random_first[] = {RANDOM, DSQL_ERROR};

    (void)state;
    assert_string_equal(ffb__status_sqlstate(codes, N(codes), NULL), "42S22");
    assert_string_equal(ffb__status_sqlstate(trunc, 2, NULL), "22001");
    assert_string_equal(ffb__status_sqlstate(two_generic, 2, NULL), "22000");
    assert_string_equal(ffb__status_sqlstate(random_first, 2, NULL), "42000");
}

static void test_errmsg_sqlstate_server_wins(void **state) {
    const uint32_t codes[] = {UNIQUE_KEY_VIOLATION};

    (void)state;
    assert_string_equal(ffb__status_sqlstate(codes, 1, "23505"), "23505");
    assert_string_equal(ffb__status_sqlstate(codes, 1, ""), "23000");
    assert_string_equal(ffb__status_sqlstate(codes, 1, NULL), "23000");
}

static void test_errmsg_sqlstate_defaults(void **state) {
    const uint32_t ok[] = {0};
    const uint32_t unknown[] = {123u, RANDOM, SQLERR};

    (void)state;
    assert_string_equal(ffb__status_sqlstate(ok, 1, NULL), "00000");
    assert_string_equal(ffb__status_sqlstate(NULL, 0, NULL), "00000");
    assert_string_equal(ffb__status_sqlstate(unknown, 3, NULL), "HY000");
}

/* An error object copied by value (a transaction's start error into the
   connection's, a result's own error) keeps its arguments when the
   original is overwritten or freed: they live in the copy's own pool. */
static void test_error_copy_keeps_args(void **state) {
    (void)state;
    ffbp_status_arg a[2] = {
        {FFBP_ARG_GDS, (int32_t)335544580u /* dsql_relation_err */, NULL, 0},
        {FFBP_ARG_STRING, 0, (const uint8_t *)"T_COPY", 6},
    };
    ffbp_status st = {a, 2, 2, 2};
    ffb_error *orig = malloc(sizeof(*orig));
    ffb_error *copy = malloc(sizeof(*copy));
    assert_non_null(orig);
    assert_non_null(copy);
    ffb__error_clear(orig);
    ffb__error_from_status(orig, FFB_E_SERVER, &st, NULL);
    assert_string_equal(ffb_error_arg(orig, 0, 0), "T_COPY");
    *copy = *orig;
    /* The original is reused for another error (as conn->err is). */
    a[1].str = (const uint8_t *)"OTHER!";
    ffb__error_clear(orig);
    ffb__error_from_status(orig, FFB_E_SERVER, &st, NULL);
    assert_string_equal(ffb_error_arg(orig, 0, 0), "OTHER!");
    assert_string_equal(ffb_error_arg(copy, 0, 0), "T_COPY");
    assert_non_null(strstr(ffb_error_message(copy), "T_COPY"));
    free(orig);
    assert_string_equal(ffb_error_arg(copy, 0, 0), "T_COPY");
    free(copy);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_copy_keeps_args),
        cmocka_unit_test(test_errmsg_lookup_known_codes),
        cmocka_unit_test(test_errmsg_lookup_unknown_code),
        cmocka_unit_test(test_errmsg_lookup_unnamed_code),
        cmocka_unit_test(test_errmsg_table_consistent),
        cmocka_unit_test(test_errmsg_common_codes_have_text),
        cmocka_unit_test(test_errmsg_format_with_args),
        cmocka_unit_test(test_errmsg_format_missing_args),
        cmocka_unit_test(test_errmsg_format_without_text),
        cmocka_unit_test(test_errmsg_format_extra_args),
        cmocka_unit_test(test_errmsg_server_codes_have_text),
        cmocka_unit_test(test_errmsg_format_unknown_code),
        cmocka_unit_test(test_errmsg_format_truncates),
        cmocka_unit_test(test_errmsg_sqlcode_from_sqlerr),
        cmocka_unit_test(test_errmsg_sqlcode_from_table),
        cmocka_unit_test(test_errmsg_sqlcode_success),
        cmocka_unit_test(test_errmsg_sqlstate_generic_kept),
        cmocka_unit_test(test_errmsg_sqlstate_specific_wins),
        cmocka_unit_test(test_errmsg_sqlstate_server_wins),
        cmocka_unit_test(test_errmsg_sqlstate_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
