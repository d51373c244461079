/*
 * The SQL generator against golden/sql.txt: each case is a path and query
 * string ("> /table?query"), optional "R " Range and "P " Prefer lines,
 * an "A off" line (db-aggregates-enabled = false; else true), an
 * "F proc a,b" line (read the selectable procedure proc with these
 * arguments, "-" for a null, instead of the path's table), and the SQL,
 * its parameters, the JSON keys and the count query the
 * planner makes, or the error. The schema is tests/fixture.h.
 */
#include "fixture.h"
#include "golden.h"
#include "sql.h"
#include "url.h"

static rest_schema schema;

static void run_case(const char *in, rbuf *out) {
    char line[8192], range[256], prefer[256], maxrows[32], probe[32];
    rarena a;
    rest_query q;
    rest_plan plan;
    rest_err e;
    const char *s = golden_tag(in, "> /", line, sizeof line);
    const char *r = golden_tag(in, "R ", range, sizeof range);
    const char *p = golden_tag(in, "P ", prefer, sizeof prefer);
    const char *m = golden_tag(in, "M ", maxrows, sizeof maxrows);
    if (!s)
        s = "";
    char *qm = strchr(line, '?');
    const char *qs = "";
    if (qm) {
        *qm = '\0';
        qs = qm + 1;
    }
    rarena_init(&a, 1u << 20);
    const char *pr = golden_tag(in, "X ", probe, sizeof probe);
    char aggs[32];
    rest_plan_opts o = {m ? atoll(m) : -1,
                        1,
                        p && strstr(p, "count=exact") != NULL,
                        pr ? atoll(pr) : 0,
                        !golden_tag(in, "A ", aggs, sizeof aggs),
                        0,
                        0,
                        NULL};
    char fn[256];
    rest_table ft;
    const char *fv[8];
    if (golden_tag(in, "F ", fn, sizeof fn)) {
        char *args = strchr(fn, ' ');
        if (args)
            *args++ = '\0';
        const rest_routine *rt = rest_schema_find_routine(&schema, fn);
        if (rt) {
            ft = rt->out;
            ft.proc_nvals = 0;
            for (char *t = args ? strtok(args, ",") : NULL;
                 t && ft.proc_nvals < 8; t = strtok(NULL, ","))
                fv[ft.proc_nvals++] = strcmp(t, "-") == 0 ? NULL : t;
            ft.proc_vals = fv;
            o.table = &ft;
        }
    }
    if (p && strstr(p, "nulls=firebird"))
        o.null_order_pg = 0;
    if (p && strstr(p, "count=planned"))
        rest_plan_count_opts(&o, REST_COUNT_PLANNED);
    if (p && strstr(p, "count=estimated"))
        rest_plan_count_opts(&o, REST_COUNT_ESTIMATED);
    if (rest_parse_query(&a, qs, strlen(qs), r, r ? strlen(r) : 0, NULL, &q,
                         &e) < 0 ||
        rest_plan_read(&a, &schema, line, &q, &o, &plan, &e) < 0) {
        rbuf_printf(out, "! %d %s %s | %s", e.status, e.code, e.message,
                    e.details);
    } else {
        rest_plan_dump(&plan, out);
        rest_plan_free(&plan);
    }
    rarena_free(&a);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_sql golden/sql.txt\n");
        return 2;
    }
    fixture_schema(&schema);
    /* db-procedure-returns refused: malformed, or naming no selectable
       procedure (-2); a table that does not exist leaves it unlinked */
    static const char *const maps[] = {"p",       "p:",         ":books",
                                       "q:books", "p:books, x", "p:books,"};
    static const int want[] = {-2, -2, -2, -2, -2, 0};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        rest_schema s2;
        rest_schema_init(&s2);
        rest_schema_routine(&s2, "P", REST_RT_SELECTABLE);
        s2.returns_map = maps[i];
        int lk = rest_schema_link_routines(&s2);
        if (lk != want[i]) {
            fprintf(stderr, "db-procedure-returns \"%s\": %d, want %d\n",
                    maps[i], lk, want[i]);
            return 1;
        }
        rest_schema_free(&s2);
    }
    int rc = golden_run(argv[1], run_case);
    rest_schema_free(&schema);
    return rc;
}
