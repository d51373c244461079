/*
 * Fuzz target: the JSON request-body parser and the write planner (and
 * the form-body parser on the same bytes). The input is a body. Properties: no
 * crash, no over-read (the replay puts a guard page behind the input), a parse
 * either succeeds or fills a 400 PGRST102 error, every value is NUL-terminated
 * at its length, and every planned statement's SQL holds no byte of a value: no
 * quote at all (no literal is ever written) and one '?' per parameter.
 */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "fixture.h"
#include "tests/fuzz/fuzz.h"
#include "url.h"
#include "wsql.h"

static rest_schema schema;
static int ready;

static void check_plan(const rest_wplan *pl) {
    /* the one literal: the text of the block's own refusal (wsql.h) */
    static const char raise[] = "'FFB-REST:ROWS:'", more[] = "'FFB-REST:MORE:'";
    for (size_t i = 0; i < pl->nstmts; i++) {
        const char *sql = pl->stmts[i].sql.p;
        size_t marks = 0;
        for (const char *p = sql; *p; p++) {
            if (strncmp(p, raise, sizeof raise - 1) == 0 ||
                strncmp(p, more, sizeof more - 1) == 0) {
                p += sizeof raise - 2;
                continue;
            }
            FUZZ_CHECK(*p != '\'');
            marks += *p == '?';
        }
        FUZZ_CHECK(marks == pl->stmts[i].nparams);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) {
        fixture_schema(&schema);
        ready = 1;
    }
    rarena a;
    rest_body b;
    rest_err e;
    rest_body_limits lim = {64, 1000};
    rarena_init(&a, 8u << 20);
    /* the same bytes as a form body: one row of strings */
    if (rest_parse_form(&a, (const char *)data, size, &lim, &b, &e) == 0) {
        FUZZ_CHECK(b.nrows == 1 && b.nkeys <= lim.max_keys);
        for (size_t k = 0; k < b.nkeys; k++) {
            const rest_jval *v = rest_body_val(&b, 0, k);
            FUZZ_CHECK(v->kind == REST_J_STRING && v->text[v->len] == '\0');
        }
    } else {
        FUZZ_CHECK(e.status == 400 || e.status == 500);
    }
    if (rest_parse_body(&a, (const char *)data, size, &lim, &b, &e) < 0) {
        FUZZ_CHECK(e.status == 400);
        FUZZ_CHECK(strcmp(e.code, "PGRST102") == 0);
        rarena_free(&a);
        return 0;
    }
    FUZZ_CHECK(b.nkeys <= lim.max_keys && b.nrows <= lim.max_rows);
    for (size_t r = 0; r < b.nrows; r++)
        for (size_t k = 0; k < b.nkeys; k++) {
            const rest_jval *v = rest_body_val(&b, r, k);
            FUZZ_CHECK(v->kind >= REST_J_ABSENT && v->kind <= REST_J_FALSE);
            if (v->text)
                FUZZ_CHECK(v->text[v->len] == '\0');
        }
    rbuf dump;
    rbuf_init(&dump, 0);
    rest_body_dump(&b, &dump);
    rbuf_free(&dump);
    /* plan it as every kind of write on a table with every kind of
       column name the fixture has */
    static const char *const tables[] = {"books", "people", "events"};
    rest_query q, qput; /* PUT: the primary key's filter */
    memset(&q, 0, sizeof q);
    q.limit = -1;
    FUZZ_CHECK(rest_parse_query(&a, "id=eq.1", 7, NULL, 0, NULL, &qput, &e) ==
               0);
    for (int t = 0; t < 3; t++)
        for (int kind = 0; kind < 3; kind++)
            for (int ret = 0; ret < 3; ret++) {
                rest_wopts o = {0};
                o.kind = kind == 2 ? REST_W_PUT : kind;
                o.ret = ret;
                o.resolution = (t + ret) % 3;
                o.missing_default = ret == 1;
                o.singular = (t + kind + ret) % 2;
                o.max_block_params = 50;
                o.max_block_bytes = 4000;
                rest_wplan pl;
                if (rest_plan_write(&a, &schema, tables[t],
                                    kind == 2 ? &qput : &q, &b, &o, &pl,
                                    &e) < 0) {
                    FUZZ_CHECK(e.status >= 400 && e.status < 600);
                    continue;
                }
                check_plan(&pl);
                rest_wplan_free(&pl);
            }
    rarena_free(&a);
    return 0;
}
