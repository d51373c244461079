/*
 * Fuzz target: the URL parser and the SQL planner. The input's first line
 * is the query string, the rest a Range header. Properties: no crash, no
 * over-read (the replay puts a guard page behind the input), a parse
 * either succeeds or fills a PostgREST error with an HTTP status, and a
 * plan's SQL never holds a byte of a value (every value a parameter: the
 * input's bytes only reach the SQL through schema identifiers). The
 * plans are of four tables and of a selectable procedure (RPC read, its
 * argument a parameter); the whole input is also a procedure description
 * for the `@returns` parser (a name of at most 255 bytes, or none).
 */
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "fixture.h"
#include "sql.h"
#include "tests/fuzz/fuzz.h"
#include "url.h"

static rest_schema schema;
static int ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) {
        fixture_schema(&schema);
        ready = 1;
    }
    const char *s = (const char *)data;
    rest_routine rt;
    memset(&rt, 0, sizeof rt);
    FUZZ_CHECK(rest_routine_set_returns(&rt, s, size) == 0);
    FUZZ_CHECK(!rt.returns || (rt.returns[0] && strlen(rt.returns) < 256));
    free(rt.returns);
    const char *nl = memchr(s, '\n', size);
    size_t qn = nl ? (size_t)(nl - s) : size;
    const char *range = nl ? nl + 1 : NULL;
    size_t rn = nl ? size - qn - 1 : 0;
    static const char *const tables[] = {"books", "people", "cheap_books",
                                         "authors"};
    rarena a;
    rest_query q;
    rest_err e;
    rest_limits lim = REST_LIMITS_DEFAULT;
    rarena_init(&a, 4u << 20);
    if (rest_parse_query(&a, s, qn, range, rn, &lim, &q, &e) < 0) {
        FUZZ_CHECK(e.status >= 400 && e.status < 600);
        FUZZ_CHECK(e.code[0] != '\0' && e.message[0] != '\0');
        rarena_free(&a);
        return 0;
    }
    FUZZ_CHECK(q.nleaves <= lim.max_filters);
    rbuf dump;
    rbuf_init(&dump, 0);
    rest_query_dump(&q, &dump);
    rbuf_free(&dump);
    const rest_routine *proc = rest_schema_find_routine(&schema, "ret_books");
    rest_table pt = proc->out;
    const char *pv[1] = {"1"};
    pt.proc_vals = pv;
    pt.proc_nvals = 1;
    for (size_t t = 0; t < 5; t++) {
        rest_plan plan;
        rest_plan_opts o = {t == 0 ? 100 : -1,
                            (int)(t & 1),
                            1,
                            t == 2 ? 5 : 0,
                            t != 1,
                            0,
                            0,
                            NULL};
        if (t == 3) {
            o.max_rows = 50;
            rest_plan_count_opts(&o, REST_COUNT_ESTIMATED);
        }
        if (t == 4)
            o.table = &pt;
        if (rest_plan_read(&a, &schema, t == 4 ? "ret_books" : tables[t], &q,
                           &o, &plan, &e) < 0) {
            /* 300: PGRST201, an ambiguous embed */
            FUZZ_CHECK(e.status == 300 || (e.status >= 400 && e.status < 600));
            continue;
        }
        /* the page's statement and every embed level's */
        size_t nlev = plan.embed ? plan.embed->nlevels : 0;
        for (size_t l = 0; l <= nlev; l++) {
            const rest_plan *pl = l ? &plan.embed->levels[l - 1]->plan : &plan;
            /* no quote can come from the input except inside identifiers,
               which come from the schema: the SQL has no single quote but
               the ESCAPE '\' of like/ilike */
            const char *sql = pl->sql.p;
            for (const char *p = strchr(sql, '\''); p;
                 p = strchr(p + 1, '\'')) {
                FUZZ_CHECK(p[1] == '\\' && p[2] == '\'');
                p += 2;
            }
            size_t marks = 0;
            for (const char *p = sql; *p; p++)
                marks += *p == '?';
            FUZZ_CHECK(marks == pl->nparams);
        }
        rest_plan_free(&plan);
    }
    rarena_free(&a);
    return 0;
}
