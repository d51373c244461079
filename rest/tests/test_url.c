/*
 * The URL parser against golden/url.txt: each case is a query string
 * ("> "), an optional Range header ("R "), and the tree the parser builds
 * or the PostgREST error it answers with.
 */
#include "golden.h"
#include "url.h"

static void run_case(const char *in, rbuf *out) {
    char qs[8192], range[256];
    rarena a;
    rest_query q;
    rest_err e;
    rest_limits lim = {8, 5, 3, 3}; /* small, so that the limits are tested */
    const char *s = golden_tag(in, "> ", qs, sizeof qs);
    const char *r = golden_tag(in, "R ", range, sizeof range);
    if (!s)
        s = "";
    rarena_init(&a, 1u << 20);
    if (rest_parse_query(&a, s, strlen(s), r, r ? strlen(r) : 0, &lim, &q, &e) <
        0)
        rbuf_printf(out, "! %d %s %s | %s | %s", e.status, e.code, e.message,
                    e.details, e.hint);
    else
        rest_query_dump(&q, out);
    rarena_free(&a);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_url golden/url.txt\n");
        return 2;
    }
    return golden_run(argv[1], run_case);
}
