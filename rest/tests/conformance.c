/*
 * The conformance table of spec §A18: one row per behaviour of a v1
 * feature of §A2, ported from PostgREST's test/spec (InsertSpec,
 * UpdateSpec, DeleteSpec, RangeSpec, RollbackSpec, CorsSpec, RpcSpec,
 * ...) onto tables of our own on Firebird 3 and 4. A row is a request
 * (method, path and query, header lines, body) and what must come back:
 * the status, header lines (exact, or "~" for a substring, or "!" for
 * absent), the body compared as JSON (structurally: key order and
 * spacing do not matter; "" = empty body; NULL = not checked) and the
 * round trips of Server-Timing for FB4 and FB3 (-1: no Server-Timing, the
 * request never reached the database), with the reason.
 *
 * "%T" in a path or body is the exposed name of the suite's main table,
 * "%E" an empty table, "%P" a procedure returning nothing, "%F" a
 * function. Rows run in order (writes change what later rows see).
 * A row with `pending` set names a feature another branch builds: it is
 * listed, not run, and not counted as passing.
 *
 * The HTTP client and the server's start and stop are test_it.c's.
 *
 *   test_rest_conformance <path of ffb-rest> [LeakSanitizer suppressions]
 */
#define REST_IT_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"
#include "test_it.c"

typedef struct row {
    const char *feature; /* the §A2 feature */
    const char *method, *path, *hdrs, *body;
    int status;
    const char *want_hdrs; /* "Name: value\n" lines; "Name~ part"; "!Name" */
    const char *want_body;
    int rt4, rt3;
    const char *why;
    const char *pending; /* feature being built elsewhere: not run */
} row;

#define JSON "Content-Type: application/json\r\n"
#define ROLLBACK "Prefer: tx=rollback\r\n"

static const row rows[] = {
    /* ---- reads ---- */
    {"GET/HEAD tables", "GET", "/%T?order=id", NULL, NULL, 200,
     "Content-Type: application/json; charset=utf-8\nContent-Range: 0-2/*\n",
     "[{\"id\":1,\"name\":\"a\"},{\"id\":2,\"name\":\"b\"},{\"id\":3,"
     "\"name\":\"c\"}]",
     2, 3, "cold: the prepare with the start, then execute+fetch+commit", NULL},
    {"GET/HEAD tables", "GET", "/%T?order=id", NULL, NULL, 200,
     "Content-Range: 0-2/*\n", NULL, 1, 1,
     "warm: start, execute+fetch, commit in one write", NULL},
    {"GET/HEAD tables", "HEAD", "/%T?order=id", NULL, NULL, 200,
     "Content-Range: 0-2/*\n", "", 1, 1, "HEAD is the warm GET without a body",
     NULL},
    {"select", "GET", "/%T?select=name&id=eq.2", NULL, NULL, 200, NULL,
     "[{\"name\":\"b\"}]", 2, 3, "cold (a new text)", NULL},
    {"rename", "GET", "/%T?select=n:name&id=eq.2", NULL, NULL, 200, NULL,
     "[{\"n\":\"b\"}]", 1, 1, "warm: the SQL of select=name (the alias is the writer's key)", NULL},
    {"cast", "GET", "/%T?select=id::text&id=eq.2", NULL, NULL, 200, NULL,
     "[{\"id\":\"2\"}]", 2, 3, "cold", NULL},
    {"filters", "GET", "/%T?id=gte.2&name=like.*c&order=id", NULL, NULL, 200,
     NULL, "[{\"id\":3,\"name\":\"c\"}]", 2, 3, "cold", NULL},
    {"filters", "GET", "/%T?id=in.(1,3)&order=id", NULL, NULL, 200, NULL,
     "[{\"id\":1,\"name\":\"a\"},{\"id\":3,\"name\":\"c\"}]", 2, 3, "cold",
     NULL},
    {"filters", "GET", "/%T?name=is.null", NULL, NULL, 200, NULL, "[]", 2, 3,
     "cold", NULL},
    {"filters", "GET", "/%T?name=match.a", NULL, NULL, 400, NULL, NULL, -1, -1,
     "refused by the parser (regex is not v1)", NULL},
    {"logic", "GET", "/%T?or=(id.eq.1,id.eq.3)&order=id.desc", NULL, NULL,
     200, NULL, "[{\"id\":3,\"name\":\"c\"},{\"id\":1,\"name\":\"a\"}]", 2, 3,
     "cold", NULL},
    {"logic", "GET", "/%T?id=not.eq.1&order=id", NULL, NULL, 200, NULL,
     "[{\"id\":2,\"name\":\"b\"},{\"id\":3,\"name\":\"c\"}]", 2, 3, "cold",
     NULL},
    {"order", "GET", "/%T?order=name.desc.nullslast&limit=1", NULL, NULL, 200,
     "Content-Range: 0-0/*\n", "[{\"id\":3,\"name\":\"c\"}]", 2, 3, "cold",
     NULL},
    /* RangeSpec */
    {"limit/offset/Range", "GET", "/%T?order=id", "Range: 1-1\r\n", NULL, 200,
     "Content-Range: 1-1/*\n", "[{\"id\":2,\"name\":\"b\"}]", 1, 1, "warm: offset and limit are parameters of the first row's text", NULL},
    {"limit/offset/Range", "GET", "/%T?order=id&offset=1&limit=5", NULL, NULL,
     200, "Content-Range: 1-2/*\n", NULL, 1, 1,
     "warm: the same text as Range 1-1 with other parameters", NULL},
    /* as PostgREST: with a known total (Prefer: count=exact) */
    {"count=exact", "GET", "/%E?offset=1", "Prefer: count=exact\r\n", NULL, 416,
     "Content-Range: */0\n",
     "{\"code\":\"PGRST103\",\"message\":\"Requested range not satisfiable\","
     "\"details\":\"An offset of 1 was requested, but there are only 0 rows.\","
     "\"hint\":null}",
     2, 3, "cold: the read and its COUNT(*) prepared, run in one write", NULL},
    {"limit/offset/Range", "GET", "/%E", NULL, NULL, 200,
     "Content-Range: */*\n", "[]", 1, 1, "warm: the read of the row before, without its count", NULL},
    {"count=exact", "GET", "/%T?order=id&limit=2", "Prefer: count=exact\r\n",
     NULL, 206, "Content-Range: 0-1/3\nPreference-Applied: count=exact\n",
     NULL, 2, 3, "cold: the COUNT(*) prepared too; it rides with the read in one write", NULL},
    {"count=exact", "GET", "/%T?order=id", "Prefer: count=exact\r\n", NULL,
     200, "Content-Range: 0-2/3\n", NULL, 1, 1, "warm: read and COUNT(*) in one write", NULL},
    {"count=planned/estimated", "GET", "/%T?limit=1", "Prefer: count=planned\r\n",
     NULL, 206, "Content-Range~ 0-0/\nPreference-Applied: count=planned\n",
     NULL, -2, -2, "the estimate", "count=planned"},
    {"count=planned/estimated", "GET", "/%T?limit=1",
     "Prefer: count=estimated\r\n", NULL, 206,
     "Content-Range: 0-0/3\nPreference-Applied: count=estimated\n", NULL, -2, -2, "below db-max-rows: exact", "count=estimated"},
    {"aggregates", "GET", "/%T?select=id.sum()", NULL, NULL, 200, NULL,
     "[{\"sum\":6}]", -2, -2, "one statement", "aggregates"},
    {"aggregates", "GET", "/%T?select=count()", NULL, NULL, 200, NULL,
     "[{\"count\":3}]", -2, -2, "one statement", "aggregates"},
    {"singular", "GET", "/%T?id=eq.1",
     "Accept: application/vnd.pgrst.object+json\r\n", NULL, 200,
     "Content-Type~ application/vnd.pgrst.object+json\n",
     "{\"id\":1,\"name\":\"a\"}", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered)", NULL},
    {"singular", "GET", "/%T",
     "Accept: application/vnd.pgrst.object+json\r\n", NULL, 406, NULL,
     "{\"code\":\"PGRST116\",\"message\":\"JSON object requested, multiple "
     "(or no) rows returned\",\"details\":\"The result contains 3 rows\","
     "\"hint\":null}",
     2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered)", NULL},
    /* ---- writes (InsertSpec) ---- */
    {"POST single", "POST", "/%T", JSON, "{\"id\":10,\"name\":\"x\"}", 201,
     "!Content-Type\n!Location\n", "", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); cold block", NULL},
    {"POST single", "POST", "/%T", JSON "Prefer: return=representation\r\n",
     "{\"id\":11,\"name\":\"y\"}", 201,
     "Content-Type: application/json; charset=utf-8\n"
     "Preference-Applied: return=representation\n",
     "[{\"id\":11,\"name\":\"y\"}]", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); block with its rows", NULL},
    {"return=", "POST", "/%T", JSON "Prefer: return=headers-only\r\n",
     "{\"id\":12,\"name\":\"z\"}", 201, "Location~ id=eq.12\n", "", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); headers-only: Location from the PK", NULL},
    {"POST bulk", "POST", "/%T", JSON,
     "[{\"id\":13,\"name\":\"p\"},{\"id\":14}]", 400, NULL,
     "{\"code\":\"PGRST102\",\"message\":\"All object keys must match\","
     "\"details\":null,\"hint\":null}",
     -1, -1, "refused before the database", NULL},
    {"POST bulk", "POST", "/%T", JSON,
     "[{\"id\":13,\"name\":\"p\"},{\"id\":14,\"name\":\"q\"}]", 201, NULL, "",
     2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); one block of two inserts", NULL},
    {"columns=", "POST", "/%T?columns=id", JSON,
     "[{\"id\":15,\"name\":\"ignored\",\"other\":1}]", 201, NULL, "", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); only id inserted", NULL},
    {"columns=", "GET", "/%T?id=eq.15", NULL, NULL, 200, NULL,
     "[{\"id\":15,\"name\":null}]", 1, 1, "warm: the id=eq text of an earlier row", NULL},
    {"missing=default", "POST", "/%D", JSON "Prefer: missing=default\r\n",
     "[{\"id\":1},{\"id\":2,\"v\":5}]", 201, NULL, "", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered)",
     NULL},
    {"missing=default", "GET", "/%D?order=id", NULL, NULL, 200, NULL,
     "[{\"id\":1,\"v\":7},{\"id\":2,\"v\":5}]", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); DEFAULT 7 used",
     NULL},
    {"upsert", "POST", "/%T",
     JSON "Prefer: resolution=merge-duplicates,return=representation\r\n",
     "{\"id\":10,\"name\":\"m\"}", 201,
     "Preference-Applied: resolution=merge-duplicates, return=representation\n",
     "[{\"id\":10,\"name\":\"m\"}]", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); UPDATE OR INSERT", NULL},
    {"upsert", "POST", "/%T?on_conflict=id",
     JSON "Prefer: resolution=ignore-duplicates,return=representation\r\n",
     "{\"id\":10,\"name\":\"n\"}", 201, NULL, "[]", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); the duplicate ignored", NULL},
    /* UpdateSpec */
    {"PATCH", "PATCH", "/%T?id=eq.11", JSON, "{\"name\":\"u\"}", 204,
     "Content-Range: 0-0/*\n!Content-Type\n", "", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); UPDATE, row count",
     NULL},
    {"PATCH", "PATCH", "/%T?id=eq.999", JSON, "{\"name\":\"u\"}", 204,
     "Content-Range: */*\n", "", 1, 1, "warm: the text of the row before", NULL},
    {"PATCH", "PATCH", "/%T?id=eq.11",
     JSON "Prefer: return=representation\r\n", "{\"name\":\"v\"}", 200,
     "Content-Range: 0-0/*\n", "[{\"id\":11,\"name\":\"v\"}]", 3, 4, "cold (+1 FB4, +2 FB3) and the commit once the block's last row is in (1)", NULL},
    /* DeleteSpec */
    {"DELETE", "DELETE", "/%T?id=eq.12", NULL, NULL, 204,
     "Content-Range: */*\n", "", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); DELETE, row count", NULL},
    {"DELETE", "DELETE", "/%T?id=eq.13", "Prefer: count=exact\r\n", NULL, 204,
     "Content-Range: */1\n", "", 1, 1, "warm: the text of the row before; the count rides with it", NULL},
    /* PUT */
    {"PUT", "PUT", "/%T?id=eq.20", JSON, "{\"id\":20,\"name\":\"w\"}", 204,
     NULL, "", -2, -2, "UPDATE OR INSERT by the PK", "PUT"},
    /* RollbackSpec */
    {"tx=rollback", "POST", "/%T", JSON ROLLBACK, "{\"id\":30,\"name\":\"r\"}",
     201, "Preference-Applied: tx=rollback\n", "", 1, 1,
     "warm: the single-object block; its rollback in the same write", NULL},
    {"tx=rollback", "POST", "/%T",
     JSON "Prefer: tx=rollback, return=representation\r\n",
     "{\"id\":31,\"name\":\"r\"}", 201,
     "Preference-Applied: return=representation, tx=rollback\n",
     "[{\"id\":31,\"name\":\"r\"}]", 1, 1,
     "warm: the block of the return=representation row above; the rollback in the same write", NULL},
    /* two Prefer header lines are one list (RFC 9110 5.3) */
    {"tx=rollback", "POST", "/%T", JSON ROLLBACK "Prefer: return=representation\r\n",
     "{\"id\":33,\"name\":\"r\"}", 201,
     "Preference-Applied: return=representation, tx=rollback\n",
     "[{\"id\":33,\"name\":\"r\"}]", 1, 1, "warm",
     "bug: only the first Prefer header line is read"},
    {"tx=rollback", "POST", "/%T", JSON "Prefer: tx=commit\r\n",
     "{\"id\":32,\"name\":\"r\"}", 201, "Preference-Applied: tx=commit\n",
     "", 1, 1, "warm: the single-object block and its commit", NULL},
    {"tx=rollback", "GET", "/%T?id=eq.30", NULL, NULL, 200, NULL, "[]", 1, 1, "warm: start, execute+fetch, commit in one write", NULL},
    /* ---- RPC (RpcSpec) ---- */
    {"RPC", "POST", "/rpc/%F", JSON, "{\"a\":2}", 200, NULL, "3", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); a function: bare value", NULL},
    {"RPC", "GET", "/rpc/%F?a=4", NULL, NULL, 200, NULL, "5", 1, 1, "warm: the call text of the POST", NULL},
    {"RPC void", "POST", "/rpc/%P", JSON, "{\"a\":1}", 204,
     "!Content-Type\n", "", 2, 3, "cold: a text this connection has not prepared (FB3 prepares only once the start is answered); void: 204 without Content-Type", NULL},
    {"RPC", "PUT", "/rpc/%F", JSON, "{}", 405, NULL, NULL, -1, -1,
     "PGRST101 before the database", NULL},
    {"RPC table", "GET", "/rpc/%S?id=gt.1", NULL, NULL, 200, NULL,
     "[{\"id\":2},{\"id\":3}]", 2, 3, "cold: the procedure read as a table, a new text; filters on the result", NULL},
    {"RPC table", "GET", "/rpc/%S?id=gt.1", NULL, NULL, 200, "Content-Range: 0-1/*\n",
     "[{\"id\":2},{\"id\":3}]", 1, 1, "warm: start, the procedure's read with its rows, commit in one write", NULL},
    /* ---- CORS, OPTIONS, OpenAPI (CorsSpec) ---- */
    {"CORS", "OPTIONS", "/%T",
     "Origin: http://example.com\r\nAccess-Control-Request-Method: POST\r\n"
     "Access-Control-Request-Headers: Foo,Bar\r\n",
     NULL, 200,
     "Access-Control-Allow-Origin: *\n"
     "Access-Control-Allow-Methods: GET, POST, PATCH, PUT, DELETE, OPTIONS, "
     "HEAD\n"
     "Access-Control-Allow-Headers~ Authorization\n"
     "Access-Control-Max-Age: 86400\n",
     NULL, -1, -1, "a preflight: no database work", NULL},
    {"CORS", "GET", "/%T?id=eq.1", "Origin: http://example.com\r\n", NULL, 200,
     "Access-Control-Allow-Origin: *\n"
     "Access-Control-Expose-Headers: Content-Encoding, Content-Location, "
     "Content-Range, Content-Type, Date, Location, Server, "
     "Transfer-Encoding, Range-Unit\n",
     NULL, 1, 1, "warm: start, execute+fetch, commit in one write", NULL},
    {"OPTIONS", "OPTIONS", "/%T", NULL, NULL, 200,
     "Allow: OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE\n", NULL, -1, -1,
     "no transaction", "PUT"},
    {"OpenAPI", "GET", "/", NULL, NULL, 200,
     "Content-Type~ application/openapi+json\n", NULL, -1, -1,
     "from the schema cache", NULL},
    /* ---- auth and errors ---- */
    {"errors", "GET", "/nosuchtable", NULL, NULL, 404,
     "Proxy-Status~ error=PGRST205\n", NULL, -1, -1, "unknown table", NULL},
    {"errors", "GET", "/%T?nosuchcol=eq.1", NULL, NULL, 400, NULL, NULL, -1,
     -1, "unknown column", NULL},
    {"errors", "POST", "/%T", JSON, "{\"id\":1,\"name\":\"dup\"}", 409, NULL,
     NULL, 1, 1, "warm: the single-object block; the error comes with the execute", NULL},
    /* as PostgREST: a token sent to a server without jwt-secret */
    {"JWT", "GET", "/%T", "Authorization: Bearer a.b\r\n", NULL, 500, NULL,
     "{\"code\":\"PGRST300\",\"message\":\"Server lacks JWT secret\","
     "\"details\":null,\"hint\":null}",
     -1, -1, "refused before the database", NULL},
    {"live/ready", "GET", "/live@admin", NULL, NULL, 200, NULL, NULL, -1, -1,
     "admin server", NULL},
};

/* ---- the runner ---------------------------------------------------------- */

static char n_t[80], n_e[80], n_d[80], n_p[80], n_f[80], n_s[80];

static void subst(char *out, size_t n, const char *in) {
    size_t o = 0;
    for (; in && *in && o + 1 < n; in++) {
        const char *r = NULL;
        if (*in == '%' && in[1]) {
            switch (in[1]) {
            case 'T': r = n_t; break;
            case 'E': r = n_e; break;
            case 'D': r = n_d; break;
            case 'P': r = n_p; break;
            case 'F': r = n_f; break;
            case 'S': r = n_s; break;
            }
        }
        if (r) {
            o += (size_t)snprintf(out + o, n - o, "%s", r);
            if (o >= n)
                o = n - 1;
            in++;
        } else
            out[o++] = *in;
    }
    out[o] = '\0';
}

static int json_eq(yajl_val a, yajl_val b) {
    if (!a || !b)
        return a == b;
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case yajl_t_string:
        return strcmp(a->u.string, b->u.string) == 0;
    case yajl_t_number:
        return strcmp(a->u.number.r, b->u.number.r) == 0;
    case yajl_t_array:
        if (a->u.array.len != b->u.array.len)
            return 0;
        for (size_t i = 0; i < a->u.array.len; i++)
            if (!json_eq(a->u.array.values[i], b->u.array.values[i]))
                return 0;
        return 1;
    case yajl_t_object:
        if (a->u.object.len != b->u.object.len)
            return 0;
        for (size_t i = 0; i < a->u.object.len; i++) {
            size_t j = 0;
            while (j < b->u.object.len &&
                   strcmp(a->u.object.keys[i], b->u.object.keys[j]) != 0)
                j++;
            if (j == b->u.object.len ||
                !json_eq(a->u.object.values[i], b->u.object.values[j]))
                return 0;
        }
        return 1;
    default:
        return 1; /* true, false, null: the type says it all */
    }
}

/* Why row `r` failed ("" when it passed). */
static void check_row(const target *t, const row *w, char *why, size_t wn) {
    char p[1024], b[4096], req[8192];
    resp *r = malloc(sizeof *r);
    assert_non_null(r);
    why[0] = '\0';
    subst(p, sizeof p, w->path);
    subst(b, sizeof b, w->body);
    int port = srv.port;
    char *at = strstr(p, "@admin");
    if (at) {
        *at = '\0';
        port = srv.admin_port;
    }
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: "
                     "close\r\n%s",
                     w->method, p, w->hdrs ? w->hdrs : "");
    if (w->body)
        n += snprintf(req + n, sizeof req - (size_t)n,
                      "Content-Length: %zu\r\n\r\n%s", strlen(b), b);
    else
        n += snprintf(req + n, sizeof req - (size_t)n, "\r\n");
    http_raw(port, req, (size_t)n, r);
    if (r->status != w->status)
        snprintf(why, wn, "status %d, want %d (%.200s)", r->status, w->status,
                 r->body);
    /* the headers */
    for (const char *h = w->want_hdrs; !why[0] && h && *h;) {
        const char *nl = strchr(h, '\n');
        char line[512], name[128];
        snprintf(line, sizeof line, "%.*s", (int)(nl ? nl - h : (long)strlen(h)),
                 h);
        h = nl ? nl + 1 : h + strlen(h);
        if (line[0] == '!') {
            if (hdr(r, line + 1)[0])
                snprintf(why, wn, "header %s present: %s", line + 1,
                         hdr(r, line + 1));
            continue;
        }
        char *sep = strpbrk(line, ":~");
        if (!sep)
            continue;
        int sub = *sep == '~';
        snprintf(name, sizeof name, "%.*s", (int)(sep - line), line);
        const char *want = sep + 1;
        while (*want == ' ')
            want++;
        const char *got = hdr(r, name);
        if (sub ? strstr(got, want) == NULL : strcmp(got, want) != 0)
            snprintf(why, wn, "%s: \"%s\", want %s\"%s\"", name, got,
                     sub ? "a part " : "", want);
    }
    /* the body */
    if (!why[0] && w->want_body) {
        if (!w->want_body[0]) {
            if (r->body_len)
                snprintf(why, wn, "a body: %.200s", r->body);
        } else {
            char eb[256];
            yajl_val g = yajl_tree_parse(r->body, eb, sizeof eb);
            yajl_val e = yajl_tree_parse(w->want_body, eb, sizeof eb);
            assert_non_null(e); /* the table's own JSON */
            if (!g || !json_eq(g, e))
                snprintf(why, wn, "body %.300s", r->body);
            yajl_tree_free(g);
            yajl_tree_free(e);
        }
    }
    /* the round trips */
    int want_rt = t->version >= 4 ? w->rt4 : w->rt3;
    if (!why[0] && rts(r) != want_rt)
        snprintf(why, wn, "rt=%d, want %d (%s)", rts(r), want_rt, w->why);
    free(r);
}

static int c_setup(void **state) {
    target *t = *state;
    char sql[1024];
    ffb_conn *c = open_conn(t);
    const char *T = t->table;
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, NAME "
             "VARCHAR(20))",
             T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "CREATE TABLE %s_E (ID INTEGER NOT NULL PRIMARY KEY)",
             T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_D (ID INTEGER NOT NULL PRIMARY KEY, V INTEGER "
             "DEFAULT 7)",
             T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "CREATE PROCEDURE %s_P (A INTEGER) AS BEGIN END",
             T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE FUNCTION %s_F (A INTEGER) RETURNS INTEGER AS BEGIN RETURN "
             "A + 1; END",
             T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s_S RETURNS (ID INTEGER) AS BEGIN FOR SELECT ID "
             "FROM %s WHERE ID < 4 ORDER BY ID INTO :ID DO SUSPEND; END",
             T, T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s SELECT 1, 'a' FROM RDB$DATABASE UNION ALL SELECT "
             "2, 'b' FROM RDB$DATABASE UNION ALL SELECT 3, 'c' FROM RDB$DATABASE",
             T);
    exec_sql(c, sql);
    ffb_conn_free(c);
    snprintf(n_t, sizeof n_t, "%s", T);
    lower(n_t);
    snprintf(n_e, sizeof n_e, "%s_e", n_t);
    snprintf(n_d, sizeof n_d, "%s_d", n_t);
    snprintf(n_p, sizeof n_p, "%s_p", n_t);
    snprintf(n_f, sizeof n_f, "%s_f", n_t);
    snprintf(n_s, sizeof n_s, "%s_s", n_t);
    return start_server(t, "PGRST_DB_TX_END=commit-allow-override");
}

static int c_teardown(void **state) {
    target *t = *state;
    char sql[256];
    if (stop_server() != 0)
        server_exit_failed = 1;
    ffb_conn *c = open_conn(t);
    static const char *const drop[] = {"PROCEDURE %s_S", "FUNCTION %s_F",
                                       "PROCEDURE %s_P", "TABLE %s_D",
                                       "TABLE %s_E", "TABLE %s"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++) {
        char f[64];
        snprintf(f, sizeof f, "DROP %s", drop[i]);
        snprintf(sql, sizeof sql, f, t->table);
        exec_sql(c, sql);
    }
    ffb_conn_free(c);
    return 0;
}

static void test_conformance(void **state) {
    target *t = *state;
    const size_t nrows = sizeof rows / sizeof rows[0];
    size_t pass = 0, fail = 0, pend = 0;
    printf("conformance on %s (Firebird %d):\n", t->name, t->version);
    for (size_t i = 0; i < nrows; i++) {
        const row *w = &rows[i];
        if (w->pending) {
            printf("  PENDING %-24s %s %s (feature \"%s\")\n", w->feature,
                   w->method, w->path, w->pending);
            pend++;
            continue;
        }
        char why[700];
        check_row(t, w, why, sizeof why);
        printf("  %s %-24s %s %s%s%s\n", why[0] ? "FAIL" : "PASS", w->feature,
               w->method, w->path, why[0] ? ": " : "", why);
        why[0] ? fail++ : pass++;
    }
    /* rows per feature */
    printf("rows per §A2 feature (passing/all):\n");
    for (size_t i = 0; i < nrows; i++) {
        size_t j = 0;
        while (j < i && strcmp(rows[j].feature, rows[i].feature) != 0)
            j++;
        if (j < i)
            continue;
        size_t all = 0, pending = 0;
        for (size_t k = i; k < nrows; k++)
            if (strcmp(rows[k].feature, rows[i].feature) == 0) {
                all++;
                pending += rows[k].pending != NULL;
            }
        printf("  %-24s %zu%s\n", rows[i].feature, all,
               pending ? " (pending)" : "");
    }
    printf("%s: %zu passed, %zu failed, %zu pending of %zu rows\n", t->name,
           pass, fail, pend, nrows);
    fflush(stdout);
    assert_int_equal(fail, 0);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_conformance)};
    return rest_it_run(argc, argv, "test_rest_conformance", "RESTC", tests, 1,
                       c_setup, c_teardown);
}
