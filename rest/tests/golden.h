/*
 * Golden-file runner shared by the URL-parser and SQL-generator tests.
 *
 * A golden file is a sequence of cases separated by blank lines. A case
 * is input lines (each starting with a tag the test knows, such as "> "
 * for a query string or "R " for a Range header) followed by the expected
 * output lines, each starting with "= ". Lines starting with '#' are
 * comments. With REST_GOLDEN_UPDATE=1 the file is rewritten with what the
 * code produces now (review the diff before committing it).
 */
#ifndef FFB_REST_GOLDEN_H
#define FFB_REST_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* Runs `fn` on every case: `in` has the input lines (tags kept), and fn
   appends its output (lines without "= ") to `out`. Returns failures. */
typedef void (*golden_fn)(const char *in, rbuf *out);

static int golden_run(const char *path, golden_fn fn) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    int update = getenv("REST_GOLDEN_UPDATE") != NULL;
    rbuf newf, in, want, got;
    rbuf_init(&newf, 0);
    rbuf_init(&in, 0);
    rbuf_init(&want, 0);
    rbuf_init(&got, 0);
    int fails = 0, cases = 0;
    char *p = text;
    for (;;) {
        /* one case: up to a blank line or the end */
        rbuf_reset(&in);
        rbuf_reset(&want);
        rbuf comments;
        rbuf_init(&comments, 0);
        while (*p) {
            char *e = strchr(p, '\n');
            size_t ln = e ? (size_t)(e - p) : strlen(p);
            if (ln == 0) {
                p = e ? e + 1 : p + ln;
                if (in.len)
                    break;
                continue;
            }
            if (p[0] == '#')
                rbuf_add(&comments, p, ln + 1);
            else if (ln >= 2 && p[0] == '=' && p[1] == ' ') {
                rbuf_add(&want, p + 2, ln - 2);
                rbuf_addc(&want, '\n');
            } else {
                rbuf_add(&in, p, ln);
                rbuf_addc(&in, '\n');
            }
            p = e ? e + 1 : p + ln;
        }
        if (comments.len)
            rbuf_add(&newf, comments.p, comments.len);
        rbuf_free(&comments);
        if (!in.len)
            break;
        cases++;
        rbuf_reset(&got);
        fn(rbuf_cstr(&in), &got);
        if (got.len && got.p[got.len - 1] != '\n')
            rbuf_addc(&got, '\n');
        rbuf_add(&newf, in.p, in.len);
        for (size_t i = 0; i < got.len;) {
            const char *e = memchr(got.p + i, '\n', got.len - i);
            size_t ln = (size_t)(e - (got.p + i));
            rbuf_adds(&newf, "= ");
            rbuf_add(&newf, got.p + i, ln);
            rbuf_addc(&newf, '\n');
            i += ln + 1;
        }
        rbuf_addc(&newf, '\n');
        if (got.len != want.len || memcmp(got.p, want.p, got.len) != 0) {
            fails++;
            fprintf(stderr, "FAIL %s\ninput:\n%s\nwant:\n%.*s\ngot:\n%.*s\n",
                    path, in.p, (int)want.len, want.p ? want.p : "",
                    (int)got.len, got.p);
        }
    }
    if (update) {
        f = fopen(path, "wb");
        if (f) {
            fwrite(newf.p, 1, newf.len, f);
            fclose(f);
        }
        fails = 0;
    }
    printf("%s: %d cases, %d failed\n", path, cases, fails);
    rbuf_free(&newf);
    rbuf_free(&in);
    rbuf_free(&want);
    rbuf_free(&got);
    return fails || cases == 0;
}

/* The text after `tag` on the first input line that has it (NULL: none);
   the line's end is cut at '\n' into `buf`. */
static const char *golden_tag(const char *in, const char *tag, char *buf,
                              size_t bufn) {
    size_t tn = strlen(tag);
    for (const char *p = in; *p;) {
        const char *e = strchr(p, '\n');
        size_t ln = e ? (size_t)(e - p) : strlen(p);
        if (ln >= tn && memcmp(p, tag, tn) == 0) {
            size_t vn = ln - tn;
            if (vn >= bufn)
                vn = bufn - 1;
            memcpy(buf, p + tn, vn);
            buf[vn] = '\0';
            return buf;
        }
        p = e ? e + 1 : p + ln;
    }
    return NULL;
}

#endif
