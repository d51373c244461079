/*
 * The write planner against golden/wsql.txt: each case is a method, path
 * and query string ("> POST /table?query"), optional "P " Prefer and
 * "B " body lines, and the statements with their parameters, the output
 * keys, or the error. The schema is tests/fixture.h. Also the body
 * parser's own cases (method BODY: the parsed rows; FORM: a form body).
 */
#include "body.h"
#include "fixture.h"
#include "golden.h"
#include "url.h"
#include "wsql.h"

static rest_schema schema;

static void run_case(const char *in, rbuf *out) {
    static char line[8192], prefer[512], body[8192], lim[64], acc[64], xtra[64];
    rarena a;
    rest_query q;
    rest_body b;
    rest_wplan plan;
    rest_err e;
    const char *s = golden_tag(in, "> ", line, sizeof line);
    const char *p = golden_tag(in, "P ", prefer, sizeof prefer);
    const char *bd = golden_tag(in, "B ", body, sizeof body);
    const char *l = golden_tag(in, "L ", lim, sizeof lim);
    /* "A object": Accept: the singular object; "X stream" or "X <rows>":
       the representation's fallback shape, or the rows kept */
    const char *ac = golden_tag(in, "A ", acc, sizeof acc);
    const char *x = golden_tag(in, "X ", xtra, sizeof xtra);
    if (!s)
        s = "";
    char method[16] = "";
    const char *sp = strchr(line, ' ');
    size_t ml = sp ? (size_t)(sp - line) : strlen(line);
    if (ml < sizeof method) {
        memcpy(method, line, ml);
        method[ml] = '\0';
    }
    const char *path = sp ? sp + 2 : ""; /* past " /" */
    char tname[256];
    const char *qm = strchr(path, '?');
    size_t tl = qm ? (size_t)(qm - path) : strlen(path);
    if (tl >= sizeof tname)
        tl = sizeof tname - 1;
    memcpy(tname, path, tl);
    tname[tl] = '\0';
    const char *qs = qm ? qm + 1 : "";
    rarena_init(&a, 4u << 20);
    rest_prefer pf;
    rest_parse_prefer(p, p ? strlen(p) : 0, &pf);
    rest_wopts o = {0};
    o.kind = strcmp(method, "PATCH") == 0    ? REST_W_UPDATE
             : strcmp(method, "DELETE") == 0 ? REST_W_DELETE
             : strcmp(method, "PUT") == 0    ? REST_W_PUT
                                             : REST_W_INSERT;
    o.ret = pf.ret;
    o.resolution = pf.resolution;
    o.missing_default = pf.missing_default;
    o.singular = ac != NULL;
    if (x && strcmp(x, "stream") == 0)
        o.repr_stream = 1;
    else if (x)
        sscanf(x, "%zu", &o.repr_rows);
    if (l)
        sscanf(l, "%zu %zu %zu", &o.max_block_params, &o.max_block_bytes,
               &o.max_block_contexts);
    if (strcmp(method, "BODY") == 0 || strcmp(method, "FORM") == 0) {
        int form = method[0] == 'F';
        if ((form ? rest_parse_form : rest_parse_body)(
                &a, bd ? bd : "", bd ? strlen(bd) : 0, NULL, &b, &e) < 0)
            rbuf_printf(out, "! %d %s %s | %s", e.status, e.code, e.message,
                        e.details);
        else
            rest_body_dump(&b, out);
        rarena_free(&a);
        return;
    }
    int rc = rest_write_params(&a, qs, strlen(qs), &o.columns, &o.on_conflict);
    if (rc == 0)
        rc = rest_parse_query(&a, qs, strlen(qs), NULL, 0, NULL, &q, &e);
    if (rc == 0 && bd)
        rc = rest_parse_body(&a, bd, strlen(bd), NULL, &b, &e);
    if (rc == 0)
        rc = rest_plan_write(&a, &schema, tname, &q, bd ? &b : NULL, &o, &plan,
                             &e);
    if (rc < 0) {
        rbuf_printf(out, "! %d %s %s | %s", e.status, e.code, e.message,
                    e.details);
    } else {
        rest_wplan_dump(&plan, out);
        rest_wplan_free(&plan);
    }
    rarena_free(&a);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_wsql golden/wsql.txt\n");
        return 2;
    }
    fixture_schema(&schema);
    int rc = golden_run(argv[1], run_case);
    rest_schema_free(&schema);
    return rc;
}
