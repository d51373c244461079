/*
 * Legacy_Auth hash (lib/legacy.c).
 *
 * Expected values: the system crypt(3) (libxcrypt) on Debian 12, through
 * Python 3.11's crypt.crypt(password, "9z") and Perl's crypt(), which both
 * gave the same strings; e.g. crypt("masterkey", "9z") = "9zQP3LMZ/MJh.".
 * OpenSSL's DES_fcrypt is an independent implementation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "lib/auth.h"

static void check(const char *password, size_t len, const char *want) {
    char out[12];
    memset(out, 'x', sizeof(out));
    assert_int_equal(ffb__legacy_hash(password, len, out), 0);
    assert_int_equal(out[11], '\0');
    assert_string_equal(out, want);
}

static void test_legacy_masterkey(void **state) {
    (void)state;
    check("masterkey", 9, "QP3LMZ/MJh.");
}

static void test_legacy_other_passwords(void **state) {
    (void)state;
    check("", 0, "retK2Kk/GLk");
    check("a", 1, "sMhH1U05.Ck");
    check("SYSDBA", 6, "1S6DteszQU.");
    check("pAss", 4, "NOFNetjjXqw");
    check("12345678", 8, "kR2aQutwZAE");
}

static void test_legacy_only_eight_bytes_count(void **state) {
    (void)state;
    check("masterke", 8, "QP3LMZ/MJh.");
    check("masterkeyXYZ-anything", 21, "QP3LMZ/MJh.");
}

static void test_legacy_low_seven_bits(void **state) {
    (void)state;
    /* UTF-8 "päss" = 70 C3 A4 73 73, low 7 bits "pC$ss" */
    check("p\xc3\xa4ss", 5, "IEVj7c85.hc");
    check("pC$ss", 5, "IEVj7c85.hc");
}

static void test_legacy_length_and_nul(void **state) {
    (void)state;
    /* len limits the password; a NUL ends it like in crypt(3) */
    check("masterkey", 1, "q3EeSkFaYik"); /* = crypt("m", "9z") */
    check("a\0bc", 4, "sMhH1U05.Ck");     /* = crypt("a", "9z") */
}

static void test_legacy_bad_args(void **state) {
    char out[12];
    (void)state;
    assert_int_equal(ffb__legacy_hash(NULL, 1, out), FFB_E_INVAL);
    assert_int_equal(ffb__legacy_hash("a", 1, NULL), FFB_E_INVAL);
    assert_int_equal(ffb__legacy_hash(NULL, 0, out), 0);
    assert_string_equal(out, "retK2Kk/GLk");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_legacy_masterkey),
        cmocka_unit_test(test_legacy_other_passwords),
        cmocka_unit_test(test_legacy_only_eight_bytes_count),
        cmocka_unit_test(test_legacy_low_seven_bits),
        cmocka_unit_test(test_legacy_length_and_nul),
        cmocka_unit_test(test_legacy_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
