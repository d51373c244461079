/*
 * The JSON writer's pure parts: string escaping, doubles, the number check
 * used for DECFLOAT text, bytea hex, time zone text, and error bodies.
 * (Every Firebird type through a real server: rest_it's test_rest_types.)
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

static int fails;

static void expect(const char *what, rbuf *b, const char *want) {
    const char *got = rbuf_cstr(b);
    if (!got || strcmp(got, want) != 0) {
        fprintf(stderr, "%s: got [%s] want [%s]\n", what, got ? got : "(null)",
                want);
        fails++;
    }
    rbuf_reset(b);
}

int main(void) {
    rbuf b;
    rbuf_init(&b, 0);
    json_string(&b, "a\"b\\c\n\r\t\x01\x1f end",
                strlen("a\"b\\c\n\r\t\x01\x1f end"));
    expect("escapes", &b, "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u001f end\"");
    json_string(&b, "\xc5\xbelu\xc5\xa5ou\xc4\x8dk\xc3\xbd", 13);
    expect("utf-8 kept", &b, "\"\xc5\xbelu\xc5\xa5ou\xc4\x8dk\xc3\xbd\"");
    json_string(&b, "a\0b", 3);
    expect("NUL", &b, "\"a\\u0000b\"");
    /* json_text: valid UTF-8 kept, any other byte U+FFFD (an error quoting
       the request's bytes stays valid JSON) */
    json_text(&b, "\xc5\xbe\xf0\x9f\x98\x80\"", 7);
    expect("text utf-8 kept", &b, "\"\xc5\xbe\xf0\x9f\x98\x80\\\"\"");
    json_text(&b, "a\xb0\xc0\xaf" "b\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82", 14);
    expect("text invalid", &b,
           "\"a\\ufffd\\ufffd\\ufffdb\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
           "\\ufffd\\ufffd\\ufffd\\ufffd\"");

    static const struct {
        double d;
        const char *want;
    } dbl[] = {{0.1, "0.1"},
               {1e300, "1e+300"},
               {-2.5, "-2.5"},
               {5e-324, "4.94065645841247e-324"},
               {1.0 / 3, "0.3333333333333333"},
               {123456789.0, "123456789"},
               {0.0, "0"}};
    /* the fewest digits from 15 to 17 that read back the same */
    for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++) {
        json_double(&b, dbl[i].d);
        expect("double", &b, dbl[i].want);
    }
    json_double(&b, NAN);
    expect("nan", &b, "null");

    /* rest_fmt_i64 (buf.c: the Content-Range and Server-Timing numbers) */
    static const struct {
        int64_t v;
        const char *want;
    } ints[] = {{0, "0"},
                {7, "7"},
                {-1, "-1"},
                {1000000, "1000000"},
                {INT64_MAX, "9223372036854775807"},
                {INT64_MIN, "-9223372036854775808"}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        char d[22];
        memset(d, 'x', sizeof d);
        size_t n = rest_fmt_i64(d, ints[i].v);
        if (n != strlen(ints[i].want) || strcmp(d, ints[i].want) != 0) {
            fprintf(stderr, "rest_fmt_i64: got [%.21s] (%zu) want [%s]\n", d,
                    n, ints[i].want);
            fails++;
        }
    }
    json_double(&b, INFINITY);
    expect("inf", &b, "null");

    static const char *const good[] = {
        "0",
        "-0",
        "12.345",
        "-0.000001",
        "1E+300",
        "1e-5",
        "170141183460469231731687303715884105727"};
    static const char *const bad[] = {"NaN", "Infinity", "-Infinity", "sNaN",
                                      "01",  "1.",       ".5",        "1e",
                                      "+1",  "",         "-"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!json_is_number(good[i], strlen(good[i]))) {
            fprintf(stderr, "number refused: %s\n", good[i]);
            fails++;
        }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (json_is_number(bad[i], strlen(bad[i]))) {
            fprintf(stderr, "not a number accepted: %s\n", bad[i]);
            fails++;
        }

    json_hex(&b, "\x00\x01\xff", 3);
    expect("hex", &b, "\"\\\\x0001ff\"");
    json_hex(&b, "", 0);
    expect("hex empty", &b, "\"\\\\x\"");

    static const struct {
        const char *in;
        const char *want;
    } tz[] = {
        {"2024-07-01 12:00:00.0000 +02:00", "\"2024-07-01T12:00:00+02:00\""},
        {"2024-07-01 12:00:00.5000 -03:30", "\"2024-07-01T12:00:00.5-03:30\""},
        {"2024-07-01 12:00:00.1234 Europe/Prague",
         "\"2024-07-01T12:00:00.1234[Europe/Prague]\""},
        {"10:11:12.5000 -03:30", "\"10:11:12.5-03:30\""},
        {"10:11:12.0000 America/Argentina/Buenos_Aires",
         "\"10:11:12[America/Argentina/Buenos_Aires]\""},
        {"00:00:00 +00:00", "\"00:00:00+00:00\""},
    };
    for (size_t i = 0; i < sizeof tz / sizeof tz[0]; i++) {
        json_tz_text(&b, tz[i].in, strlen(tz[i].in));
        expect(tz[i].in, &b, tz[i].want);
    }

    rest_err e;
    rest_err_set(&e, 406, "PGRST116", "The result contains 2 rows",
                 "JSON object requested, multiple (or no) rows returned");
    json_error(&b, &e, 0);
    expect("error", &b,
           "{\"code\":\"PGRST116\",\"message\":\"JSON object requested, "
           "multiple (or no) rows returned\",\"details\":\"The result "
           "contains 2 rows\",\"hint\":null}");
    json_error(&b, &e, 1);
    expect("error minimal", &b,
           "{\"code\":\"PGRST116\",\"message\":\"JSON object requested, "
           "multiple (or no) rows returned\"}");
    rest_err_set(&e, 400, "PGRST100", NULL, "say \"%s\"", "x");
    json_error(&b, &e, 0);
    expect("error nulls", &b,
           "{\"code\":\"PGRST100\",\"message\":\"say \\\"x\\\"\",\"details\":"
           "null,\"hint\":null}");
    rbuf_free(&b);
    printf("%d failed\n", fails);
    return fails != 0;
}
