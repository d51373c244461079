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
 * "%T" in a path, header, body or expected answer is the exposed name of
 * the suite's main table, "%E" an empty table, "%P" a procedure returning
 * nothing, "%F" a function (the rest: subst() below). Rows run in order
 * (writes change what later rows see). A row with `pending` set names a
 * feature another branch builds: it is listed, not run, and not counted
 * as passing. An expected body starting with "~" is a part of the raw
 * body.
 *
 * Steps (method "SQL", "SERVER", "SIGUSR1"; not counted as rows) change
 * the setting between rows: SQL runs its path as a statement on a
 * connection of the suite's own; SERVER restarts ffb-rest as the user
 * FFBTEST with the JWT secret and its header field's NAME=value lines
 * (the table starts as SYSDBA without a secret); SIGUSR1 signals the
 * server and waits for its log to say the schema cache was reloaded.
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
     "[{\"n\":\"b\"}]", 1, 1,
     "warm: the SQL of select=name (the alias is the writer's key)", NULL},
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
    {"logic", "GET", "/%T?or=(id.eq.1,id.eq.3)&order=id.desc", NULL, NULL, 200,
     NULL, "[{\"id\":3,\"name\":\"c\"},{\"id\":1,\"name\":\"a\"}]", 2, 3,
     "cold", NULL},
    {"logic", "GET", "/%T?id=not.eq.1&order=id", NULL, NULL, 200, NULL,
     "[{\"id\":2,\"name\":\"b\"},{\"id\":3,\"name\":\"c\"}]", 2, 3, "cold",
     NULL},
    {"order", "GET", "/%T?order=name.desc.nullslast&limit=1", NULL, NULL, 200,
     "Content-Range: 0-0/*\n", "[{\"id\":3,\"name\":\"c\"}]", 2, 3, "cold",
     NULL},
    /* RangeSpec */
    {"limit/offset/Range", "GET", "/%T?order=id", "Range: 1-1\r\n", NULL, 200,
     "Content-Range: 1-1/*\n", "[{\"id\":2,\"name\":\"b\"}]", 1, 1,
     "warm: offset and limit are parameters of the first row's text", NULL},
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
     "Content-Range: */*\n", "[]", 1, 1,
     "warm: the read of the row before, without its count", NULL},
    {"count=exact", "GET", "/%T?order=id&limit=2", "Prefer: count=exact\r\n",
     NULL, 206, "Content-Range: 0-1/3\nPreference-Applied: count=exact\n", NULL,
     2, 3,
     "cold: the COUNT(*) prepared too; it rides with the read in one write",
     NULL},
    {"count=exact", "GET", "/%T?order=id", "Prefer: count=exact\r\n", NULL, 200,
     "Content-Range: 0-2/3\n", NULL, 1, 1,
     "warm: read and COUNT(*) in one write", NULL},
    {"count=planned/estimated", "GET", "/%T?limit=1",
     "Prefer: count=planned\r\n", NULL, 206,
     "Content-Range: 0-0/3\nPreference-Applied: count=planned\n", NULL, 2, 3,
     "cold: the estimate's statement (the PK index's RDB$STATISTICS after "
     "c_setup's SET STATISTICS: 1/3, so 3 rows) prepared with the page's, "
     "then both and the commit in one write",
     NULL},
    {"count=planned/estimated", "GET", "/%T?limit=1",
     "Prefer: count=estimated\r\n", NULL, 206,
     "Content-Range: 0-0/3\nPreference-Applied: count=estimated\n", NULL, 1, 1,
     "warm: no db-max-rows, so the exact count: the page of the row before "
     "and the COUNT(*) of the count=exact rows, in one write",
     NULL},
    {"aggregates", "GET", "/%T?select=id.sum()", NULL, NULL, 200, NULL,
     "[{\"sum\":6}]", 2, 3,
     "cold: one statement (db-aggregates-enabled = true in this table's "
     "server); the prepare with the start",
     NULL},
    {"aggregates", "GET", "/%T?select=count()", NULL, NULL, 200, NULL,
     "[{\"count\":3}]", 2, 3, "cold: another statement", NULL},
    {"singular", "GET", "/%T?id=eq.1",
     "Accept: application/vnd.pgrst.object+json\r\n", NULL, 200,
     "Content-Type~ application/vnd.pgrst.object+json\n",
     "{\"id\":1,\"name\":\"a\"}", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered)",
     NULL},
    {"singular", "GET", "/%T", "Accept: application/vnd.pgrst.object+json\r\n",
     NULL, 406, NULL,
     "{\"code\":\"PGRST116\",\"message\":\"JSON object requested, multiple "
     "(or no) rows returned\",\"details\":\"The result contains 3 rows\","
     "\"hint\":null}",
     1, 1,
     "warm: the text of the limit=1 count rows above (singular reads at "
     "most 2 rows: the limit is a parameter)",
     NULL},
    /* ---- writes (InsertSpec) ---- */
    {"POST single", "POST", "/%T", JSON, "{\"id\":10,\"name\":\"x\"}", 201,
     "!Content-Type\n!Location\n", "", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); cold block",
     NULL},
    {"POST single", "POST", "/%T", JSON "Prefer: return=representation\r\n",
     "{\"id\":11,\"name\":\"y\"}", 201,
     "Content-Type: application/json; charset=utf-8\n"
     "Preference-Applied: return=representation\n",
     "[{\"id\":11,\"name\":\"y\"}]", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); block with its rows",
     NULL},
    {"return=", "POST", "/%T", JSON "Prefer: return=headers-only\r\n",
     "{\"id\":12,\"name\":\"z\"}", 201, "Location~ id=eq.12\n", "", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); headers-only: Location from the PK",
     NULL},
    {"POST bulk", "POST", "/%T", JSON,
     "[{\"id\":13,\"name\":\"p\"},{\"id\":14}]", 400, NULL,
     "{\"code\":\"PGRST102\",\"message\":\"All object keys must match\","
     "\"details\":null,\"hint\":null}",
     -1, -1, "refused before the database", NULL},
    {"POST bulk", "POST", "/%T", JSON,
     "[{\"id\":13,\"name\":\"p\"},{\"id\":14,\"name\":\"q\"}]", 201, NULL, "",
     2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); one block of two inserts",
     NULL},
    {"columns=", "POST", "/%T?columns=id", JSON,
     "[{\"id\":15,\"name\":\"ignored\",\"other\":1}]", 201, NULL, "", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); only id inserted",
     NULL},
    {"columns=", "GET", "/%T?id=eq.15", NULL, NULL, 200, NULL,
     "[{\"id\":15,\"name\":null}]", 1, 1,
     "warm: the id=eq text of an earlier row", NULL},
    {"missing=default", "POST", "/%D", JSON "Prefer: missing=default\r\n",
     "[{\"id\":1},{\"id\":2,\"v\":5}]", 201, NULL, "", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered)",
     NULL},
    {"missing=default", "GET", "/%D?order=id", NULL, NULL, 200, NULL,
     "[{\"id\":1,\"v\":7},{\"id\":2,\"v\":5}]", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); DEFAULT 7 used",
     NULL},
    {"upsert", "POST", "/%T",
     JSON "Prefer: resolution=merge-duplicates,return=representation\r\n",
     "{\"id\":10,\"name\":\"m\"}", 201,
     "Preference-Applied: resolution=merge-duplicates, return=representation\n",
     "[{\"id\":10,\"name\":\"m\"}]", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); UPDATE OR INSERT",
     NULL},
    {"upsert", "POST", "/%T?on_conflict=id",
     JSON "Prefer: resolution=ignore-duplicates,return=representation\r\n",
     "{\"id\":10,\"name\":\"n\"}", 201, NULL, "[]", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); the duplicate ignored",
     NULL},
    /* UpdateSpec */
    {"PATCH", "PATCH", "/%T?id=eq.11", JSON, "{\"name\":\"u\"}", 204,
     "Content-Range: 0-0/*\n!Content-Type\n", "", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); UPDATE, row count",
     NULL},
    {"PATCH", "PATCH", "/%T?id=eq.999", JSON, "{\"name\":\"u\"}", 204,
     "Content-Range: */*\n", "", 1, 1, "warm: the text of the row before",
     NULL},
    {"PATCH", "PATCH", "/%T?id=eq.11", JSON "Prefer: return=representation\r\n",
     "{\"name\":\"v\"}", 200, "Content-Range: 0-0/*\n",
     "[{\"id\":11,\"name\":\"v\"}]", 2, 3,
     "cold (+1 FB4, +2 FB3); the block writes its rows (up to 16) before "
     "it suspends the first, so the commit rides with its execute",
     NULL},
    /* the singular object on a write: other than one row is 406 and
       nothing written; the block counts and refuses itself, so the end
       rides with it */
    {"singular", "PATCH", "/%T?id=in.(10,11)",
     JSON "Accept: application/vnd.pgrst.object+json\r\n", "{\"name\":\"s\"}",
     406, NULL,
     "{\"code\":\"PGRST116\",\"message\":\"JSON object requested, "
     "multiple (or no) rows returned\",\"details\":\"The result contains 2 "
     "rows\",\"hint\":null}",
     2, 3,
     "cold (+1 FB4, +2 FB3); the block's refusal undoes both rows and the "
     "commit behind it commits nothing",
     NULL},
    {"singular", "PATCH", "/%T?id=in.(998,999)",
     JSON "Accept: application/vnd.pgrst.object+json\r\n", "{\"name\":\"s\"}",
     406, NULL,
     "{\"code\":\"PGRST116\",\"message\":\"JSON object requested, "
     "multiple (or no) rows returned\",\"details\":\"The result contains 0 "
     "rows\",\"hint\":null}",
     1, 1, "warm: the block of the row before; the 406 with its commit", NULL},
    {"singular", "GET", "/%T?id=in.(10,11)&order=id", NULL, NULL, 200, NULL,
     "[{\"id\":10,\"name\":\"m\"},{\"id\":11,\"name\":\"v\"}]", 1, 1,
     "warm (the in.(a,b)&order=id text of an earlier read): nothing of the "
     "refused PATCH was written",
     NULL},
    /* DeleteSpec */
    {"DELETE", "DELETE", "/%T?id=eq.12", NULL, NULL, 204,
     "Content-Range: */*\n", "", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); DELETE, row count",
     NULL},
    {"DELETE", "DELETE", "/%T?id=eq.13", "Prefer: count=exact\r\n", NULL, 204,
     "Content-Range: */1\n", "", 1, 1,
     "warm: the text of the row before; the count rides with it", NULL},
    /* PUT */
    {"PUT", "PUT", "/%T?id=eq.20", JSON, "{\"id\":20,\"name\":\"w\"}", 204,
     NULL, "", 2, 3,
     "cold: UPDATE OR INSERT by the PK, prepared with the start, then "
     "executed with the commit",
     NULL},
    /* RollbackSpec */
    {"tx=rollback", "POST", "/%T", JSON ROLLBACK, "{\"id\":30,\"name\":\"r\"}",
     201, "Preference-Applied: tx=rollback\n", "", 1, 1,
     "warm: the single-object block; its rollback in the same write", NULL},
    {"tx=rollback", "POST", "/%T",
     JSON "Prefer: tx=rollback, return=representation\r\n",
     "{\"id\":31,\"name\":\"r\"}", 201,
     "Preference-Applied: return=representation, tx=rollback\n",
     "[{\"id\":31,\"name\":\"r\"}]", 1, 1,
     "warm: the block of the return=representation row above; the rollback in "
     "the same write",
     NULL},
    /* two Prefer header lines are one list (RFC 9110 5.3) */
    {"tx=rollback", "POST", "/%T",
     JSON ROLLBACK "Prefer: return=representation\r\n",
     "{\"id\":33,\"name\":\"r\"}", 201,
     "Preference-Applied: return=representation, tx=rollback\n",
     "[{\"id\":33,\"name\":\"r\"}]", 1, 1, "warm", NULL},
    {"tx=rollback", "POST", "/%T", JSON "Prefer: tx=commit\r\n",
     "{\"id\":32,\"name\":\"r\"}", 201, "Preference-Applied: tx=commit\n", "",
     1, 1, "warm: the single-object block and its commit", NULL},
    {"tx=rollback", "GET", "/%T?id=eq.30", NULL, NULL, 200, NULL, "[]", 1, 1,
     "warm: start, execute+fetch, commit in one write", NULL},
    /* ---- RPC (RpcSpec) ---- */
    {"RPC", "POST", "/rpc/%F", JSON, "{\"a\":2}", 200, NULL, "3", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); a function: bare value",
     NULL},
    {"RPC", "GET", "/rpc/%F?a=4", NULL, NULL, 200, NULL, "5", 1, 1,
     "warm: the call text of the POST", NULL},
    {"RPC void", "POST", "/rpc/%P", JSON, "{\"a\":1}", 204, "!Content-Type\n",
     "", 2, 3,
     "cold: a text this connection has not prepared (FB3 prepares only once "
     "the start is answered); void: 204 without Content-Type",
     NULL},
    {"RPC", "PUT", "/rpc/%F", JSON, "{}", 405, NULL, NULL, -1, -1,
     "PGRST101 before the database", NULL},
    {"RPC table", "GET", "/rpc/%S?id=gt.1", NULL, NULL, 200, NULL,
     "[{\"id\":2},{\"id\":3}]", 2, 3,
     "cold: the procedure read as a table, a new text; filters on the result",
     NULL},
    {"RPC table", "GET", "/rpc/%S?id=gt.1", NULL, NULL, 200,
     "Content-Range: 0-1/*\n", "[{\"id\":2},{\"id\":3}]", 1, 1,
     "warm: start, the procedure's read with its rows, commit in one write",
     NULL},
    {"RPC table", "GET", "/rpc/%S?id=gt.1",
     "Prefer: return=minimal\r\nPrefer: count=exact\r\n", NULL, 200,
     "Content-Range: 0-1/2\nPreference-Applied: count=exact\n",
     "[{\"id\":2},{\"id\":3}]", 2, 3,
     "cold: the count of the procedure's filtered rows, a new text; the "
     "second Prefer line read",
     NULL},
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
     "no transaction", NULL},
    {"OpenAPI", "GET", "/", NULL, NULL, 200,
     "Content-Type~ application/openapi+json\n", NULL, -1, -1,
     "from the schema cache", NULL},
    /* ---- auth and errors ---- */
    {"errors", "GET", "/nosuchtable", NULL, NULL, 404,
     "Proxy-Status~ error=PGRST205\n", NULL, -1, -1, "unknown table", NULL},
    {"errors", "GET", "/%T?nosuchcol=eq.1", NULL, NULL, 400, NULL, NULL, -1, -1,
     "unknown column", NULL},
    {"errors", "POST", "/%T", JSON, "{\"id\":1,\"name\":\"dup\"}", 409, NULL,
     NULL, 1, 1,
     "warm: the single-object block; the error comes with the execute", NULL},
    /* as PostgREST: a token sent to a server without jwt-secret */
    {"JWT", "GET", "/%T", "Authorization: Bearer a.b\r\n", NULL, 500, NULL,
     "{\"code\":\"PGRST300\",\"message\":\"Server lacks JWT secret\","
     "\"details\":null,\"hint\":null}",
     -1, -1, "refused before the database", NULL},
    {"live/ready", "GET", "/live@admin", NULL, NULL, 200, NULL, NULL, -1, -1,
     "admin server", NULL},
    /* two Prefer lines on a write: both honoured */
    {"PATCH", "PATCH", "/%T?id=eq.11",
     JSON "Prefer: return=representation\r\nPrefer: count=exact\r\n",
     "{\"name\":\"t\"}", 200,
     "Content-Range: 0-0/1\nPreference-Applied: return=representation, "
     "count=exact\n",
     "[{\"id\":11,\"name\":\"t\"}]", 1, 1,
     "warm: the block of the representation PATCH above, its rows and "
     "the commit in one write",
     NULL},
    {"count=exact", "GET", "/%T?order=id&limit=1",
     "Prefer: return=representation\r\nPrefer: count=exact\r\n", NULL, 206,
     "Content-Range: 0-0/9\nPreference-Applied: count=exact\n", NULL, 1, 1,
     "warm: the count=exact text of a row above (limit is a parameter)", NULL},

    /* ---- embeds (resource_embedding.rst; books %B have two FKs to
       authors %A: author %K and editor) ---- */
    {"embed many-to-one", "GET", "/%B?select=id,a:%A!%K(name)&order=id", NULL,
     NULL, 200, NULL,
     "[{\"id\":1,\"a\":{\"name\":\"Ann\"}},{\"id\":2,\"a\":{\"name\":\"Ann\"}},"
     "{\"id\":3,\"a\":null}]",
     2, 3,
     "cold: both levels prepared with the start (FB3: after it), then "
     "executed with the commit",
     NULL},
    {"embed many-to-one", "GET", "/%B?select=id,a:%A!%K(name)&order=id", NULL,
     NULL, 200, "Content-Range: 0-2/*\n", NULL, 1, 1,
     "warm: the start, both levels (the child restricted by a sub-select of "
     "the parent's page) and the commit in one write",
     NULL},
    {"embed hints", "GET", "/%B?select=id,e:%A!editor_id(name)&id=lt.3", NULL,
     NULL, 200, NULL,
     "[{\"id\":1,\"e\":{\"name\":\"Bob\"}},{\"id\":2,\"e\":null}]", 2, 3,
     "cold: a hint by column, new texts", NULL},
    {"embed hints", "GET", "/%B?select=id,%A(name)", NULL, NULL, 300,
     "Proxy-Status~ error=PGRST201\n",
     "~\"message\":\"Could not embed because more than one relationship was "
     "found for '%B' and '%A'\"",
     -1, -1, "ambiguous (two FKs): refused by the planner", NULL},
    {"embed hints", "GET", "/%A?select=name,%G(name)", NULL, NULL, 400,
     "Proxy-Status~ error=PGRST200\n", NULL, -1, -1,
     "no relationship: refused by the planner", NULL},
    {"embed one-to-many", "GET",
     "/%B?select=id,r:%R(stars)&r.order=stars&order=id", NULL, NULL, 200, NULL,
     "[{\"id\":1,\"r\":[{\"stars\":3},{\"stars\":5}]},{\"id\":2,\"r\":[{"
     "\"stars\":4}]},{\"id\":3,\"r\":[]}]",
     2, 3, "cold: two levels prepared, then one write", NULL},
    {"embed one-to-many", "GET",
     "/%B?select=id,r:%R(stars)&r.order=stars&order=id", NULL, NULL, 200, NULL,
     NULL, 1, 1, "warm: one write", NULL},
    {"embed many-to-many", "GET",
     "/%B?select=id,%G(name)&%G.order=name&order=id", NULL, NULL, 200, NULL,
     "[{\"id\":1,\"%G\":[{\"name\":\"fun\"},{\"name\":\"old\"}]},{\"id\":2,"
     "\"%G\":[{\"name\":\"old\"}]},{\"id\":3,\"%G\":[]}]",
     2, 3, "cold: the junction joined in the child level's statement", NULL},
    {"embed !inner", "GET",
     "/%B?select=id,r:%R!inner(stars)&r.stars=gte.4&order=id", NULL, NULL, 200,
     NULL,
     "[{\"id\":1,\"r\":[{\"stars\":5}]},{\"id\":2,\"r\":[{\"stars\":4}]}]", 2,
     3, "cold: the parent restricted by an EXISTS on the filtered child", NULL},
    {"embedded filters/order/limit", "GET",
     "/%B?select=id,r:%R(stars)&r.stars=gte.5&order=id", NULL, NULL, 200, NULL,
     "[{\"id\":1,\"r\":[{\"stars\":5}]},{\"id\":2,\"r\":[]},{\"id\":3,\"r\":"
     "[]}]",
     2, 3, "cold: without !inner the parents stay, their arrays filtered",
     NULL},
    {"embedded filters/order/limit", "GET",
     "/%B?select=id,r:%R(stars)&r.order=stars.desc&r.limit=1&order=id", NULL,
     NULL, 200, NULL,
     "[{\"id\":1,\"r\":[{\"stars\":5}]},{\"id\":2,\"r\":[{\"stars\":4}]},{"
     "\"id\":3,\"r\":[]}]",
     2, 3, "cold: the limit per parent", NULL},
    {"embed nesting", "GET",
     "/%A?select=name,b:%B!%K(title,r:%R(stars))&b.order=title&b.r.order="
     "stars&order=id",
     NULL, NULL, 200, NULL,
     "[{\"name\":\"Ann\",\"b\":[{\"title\":\"Alpha\",\"r\":[{\"stars\":3},{"
     "\"stars\":5}]},{\"title\":\"Beta\",\"r\":[{\"stars\":4}]}]},{\"name\":"
     "\"Bob\",\"b\":[]}]",
     2, 3, "cold: three levels, all prepared with the start", NULL},
    {"embed nesting", "GET",
     "/%A?select=name,b:%B!%K(title,r:%R(stars))&b.order=title&b.r.order="
     "stars&order=id",
     NULL, NULL, 200, NULL, NULL, 1, 1,
     "warm: three levels and the commit in one write", NULL},

    /* ---- COMPUTED BY columns as computed fields (dbl = price * 2) ---- */
    {"computed fields", "GET", "/%B?select=id,dbl&dbl=gt.10&order=dbl.desc",
     NULL, NULL, 200, NULL, "[{\"id\":1,\"dbl\":20},{\"id\":2,\"dbl\":12}]", 2,
     3, "cold: selected, filtered and ordered as a column", NULL},
    {"computed fields", "GET", "/%B?id=eq.3", NULL, NULL, 200, NULL,
     "[{\"id\":3,\"title\":\"Gamma\",\"author_id\":null,\"editor_id\":null,"
     "\"price\":null,\"dbl\":null}]",
     2, 3, "cold; in * (PostgREST leaves computed fields out of *)", NULL},

    /* ---- schema reload (admin POST /reload, SIGUSR1) ---- */
    {"-", "SQL", "CREATE TABLE %N (ID INTEGER)", NULL, NULL, 0, NULL, NULL, 0,
     0, NULL, NULL},
    {"schema reload", "GET", "/%N", NULL, NULL, 404,
     "Proxy-Status~ error=PGRST205\n", NULL, -1, -1,
     "not in the schema cache yet", NULL},
    {"schema reload", "POST", "/reload@admin", NULL, "", 200, NULL,
     "~schema cache reloaded", -1, -1,
     "the admin port, answered once the new "
     "cache is in place",
     NULL},
    {"schema reload", "GET", "/%N", NULL, NULL, 200, NULL, "[]", 2, 3,
     "cold: the reload replaced the pools", NULL},
    /* request context (db-request-context, default auto): a view that reads
       it, and one SIGUSR1 reload to see the view */
    {"-", "SQL",
     "CREATE VIEW %V (M, P, W, S, C, J, R) AS SELECT "
     "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.method'), "
     "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.path'), "
     "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.header.x-who'), "
     "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.jwt.claim.sub'), "
     "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.cookie.sid'), "
     "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.jwt.claims'), "
     "CURRENT_ROLE FROM RDB$DATABASE",
     NULL, NULL, 0, NULL, NULL, 0, 0, NULL, NULL},
    {"-", "SQL", "GRANT SELECT ON %V TO ROLE %O", NULL, NULL, 0, NULL, NULL, 0,
     0, NULL, NULL},
    {"-", "SIGUSR1", "", NULL, NULL, 0, NULL, NULL, 0, 0, NULL, NULL},
    {"schema reload", "GET", "/%V", "X-Who: me\r\n", NULL, 200, NULL,
     "[{\"m\":\"GET\",\"p\":\"/"
     "%V\",\"w\":\"me\",\"s\":null,\"c\":null,\"j\":null,\"r\":\"NONE\"}]",
     2, 3,
     "cold: the new cache has the view (and, auto, its reading of "
     "request.: the context block prepared with the view's statement)",
     NULL},
    {"request context", "GET", "/%V", "X-Who: me\r\n", NULL, 200, NULL,
     "[{\"m\":\"GET\",\"p\":\"/"
     "%V\",\"w\":\"me\",\"s\":null,\"c\":null,\"j\":null,\"r\":\"NONE\"}]",
     1, 1,
     "warm: the start, the context block, the read and the commit in "
     "one write",
     NULL},

    /* ---- JWT roles, as FFBTEST (granted %O; %q exists, not granted) ---- */
    {"-", "SERVER", "", "PGRST_DB_REQUEST_CONTEXT=never\n", NULL, 0, NULL, NULL,
     0, 0, NULL, NULL},
    {"JWT", "GET", "/%V", NULL, NULL, 401, "WWW-Authenticate: Bearer\n",
     "{\"code\":\"PGRST302\",\"message\":\"Anonymous access is disabled\","
     "\"details\":null,\"hint\":null}",
     -1, -1, "no token, no db-anon-role: refused before the database", NULL},
    {"JWT roles", "GET", "/%V", "%a", NULL, 200, NULL,
     "[{\"m\":null,\"p\":null,\"w\":null,\"s\":null,\"c\":null,\"j\":null,"
     "\"r\":\"%O\"}]",
     2, 3,
     "cold: the role's first request on the loop; its pool's first "
     "connection is checked before the request has it (SELECT CURRENT_ROLE, "
     "not in Server-Timing), then the prepare with the start (FB3: after "
     "it) and the execute + fetch + commit",
     NULL},
    {"request context", "GET", "/%V", "%aX-Who: me\r\n", NULL, 200, NULL,
     "[{\"m\":null,\"p\":null,\"w\":null,\"s\":null,\"c\":null,\"j\":null,"
     "\"r\":\"%O\"}]",
     1, 1, "warm; never: no context block, the view reads NULLs", NULL},
    {"JWT roles", "GET", "/%T", "%a", NULL, 403, NULL, "~\"code\":\"42501\"", 1,
     2,
     "the role may not read the table: the prepare's error, with the start "
     "(FB3: after it)",
     NULL},
    {"JWT roles", "GET", "/%V", "%b", NULL, 403, NULL,
     "{\"code\":\"42501\",\"message\":\"permission denied to set role "
     "\\\"%q\\\"\",\"details\":null,\"hint\":null}",
     0, 0,
     "a role not granted: the verdict of its pool's check (not in "
     "Server-Timing: it ran before the request had a connection)",
     NULL},
    {"JWT roles", "GET", "/%V", "%c", NULL, 401, "WWW-Authenticate: Bearer\n",
     "{\"code\":\"22023\",\"message\":\"role \\\"%z\\\" does not exist\","
     "\"details\":null,\"hint\":null}",
     0, 0,
     "a role that does not exist: the same check (401 as PostgREST 13; 12 "
     "said 400)",
     NULL},
    {"JWT", "GET", "/%V", "%x", NULL, 401, "WWW-Authenticate~ JWT expired\n",
     "{\"code\":\"PGRST303\",\"message\":\"JWT expired\",\"details\":null,"
     "\"hint\":null}",
     -1, -1, "refused before the database", NULL},
    {"JWT", "GET", "/%V", "%w", NULL, 401, "WWW-Authenticate~ invalid_token\n",
     "~\"code\":\"PGRST301\"", -1, -1, "a wrong signature: before the database",
     NULL},
    {"-", "SERVER", "",
     "PGRST_DB_REQUEST_CONTEXT=always\nPGRST_DB_ANON_ROLE=%o\n"
     "PGRST_DB_PRE_REQUEST=%X\n",
     NULL, 0, NULL, NULL, 0, 0, NULL, NULL},
    {"JWT roles", "GET", "/%V", "X-Who: anon\r\n", NULL, 200, NULL,
     "[{\"m\":\"GET\",\"p\":\"/"
     "%V\",\"w\":\"anon\",\"s\":null,\"c\":null,\"j\":null,\"r\":\"%O\"}]",
     2, 3,
     "db-anon-role: the loop's own pool attached with the role; cold "
     "(always: the block prepared with the view's statement)",
     NULL},
    {"request context", "GET", "/%V", "%aX-Who: me\r\nCookie: a=1; sid=abc\r\n",
     NULL, 200, NULL,
     "[{\"m\":\"GET\",\"p\":\"/%V\",\"w\":\"me\",\"s\":\"u1\",\"c\":"
     "\"abc\",\"j\":\"%C\",\"r\":\"%O\"}]",
     1, 1,
     "warm: the token's role is db-anon-role, the same pool, whose "
     "connection prepared the view and the block for the row before",
     NULL},
    {"JWT roles", "GET", "/%V", "%b", NULL, 403, NULL, "~\"code\":\"42501\"", 0,
     0, "a token's role not granted: refused, never served as db-anon-role",
     NULL},
    {"db-pre-request", "GET", "/%V", "%aX-Deny: 1\r\n", NULL, 400, NULL,
     "~{\"code\":\"P0001\",\"message\":\"denied by pre-request\","
     "\"details\":\"%Y; At procedure '%X'",
     1, 1,
     "warm: the block calls the procedure, which raises; the "
     "read behind it in the same write is not run",
     NULL},
    {"JWT roles", "GET", "/%T", NULL, NULL, 401, "WWW-Authenticate: Bearer\n",
     "~\"code\":\"42501\"", 1, 2,
     "anonymous without the grant: 401 as PostgREST's 42501 for anon; the "
     "prepare's error with the start (FB3: after it)",
     NULL},
};

/* ---- the runner ---------------------------------------------------------- */

/* what %<letter> stands for (c_setup fills them) */
static struct {
    char letter;
    char val[640];
} names[] = {
    {'T', ""}, /* the main table */
    {'E', ""}, /* an empty table */
    {'D', ""}, /* a table with a DEFAULT */
    {'P', ""}, /* a procedure returning nothing */
    {'F', ""}, /* a function */
    {'S', ""}, /* a selectable procedure */
    {'A', ""}, /* authors */
    {'B', ""}, /* books: two FKs to authors, a COMPUTED BY column */
    {'R', ""}, /* reviews of books */
    {'G', ""}, /* tags, many-to-many with books through %J */
    {'J', ""}, /* the junction */
    {'K', ""}, /* the FK from books to their author */
    {'N', ""}, /* a table made after the start (reload) */
    {'V', ""}, /* the view reading the request context */
    {'o', ""}, /* the role FFBTEST is granted, as a token names it */
    {'O', ""}, /* the same, as Firebird's CURRENT_ROLE says it */
    {'q', ""}, /* a role that exists, not granted */
    {'z', ""}, /* a role that does not exist */
    {'a', ""}, /* Authorization line: role %o, sub u1 */
    {'b', ""}, /* Authorization line: role %q */
    {'c', ""}, /* Authorization line: role %z */
    {'x', ""}, /* Authorization line: an expired token */
    {'w', ""}, /* Authorization line: a wrong signature */
    {'X', ""}, /* the db-pre-request procedure: raises on X-Deny */
    {'Y', ""}, /* the exception it raises */
    {'C', ""}, /* the claims of %a as JSON text in a JSON string */
};
#define NNAMES (sizeof names / sizeof names[0])

static char *name_of(char letter) {
    for (size_t i = 0; i < NNAMES; i++)
        if (names[i].letter == letter)
            return names[i].val;
    return NULL;
}

static void subst(char *out, size_t n, const char *in) {
    size_t o = 0;
    for (; in && *in && o + 1 < n; in++) {
        const char *r = *in == '%' && in[1] ? name_of(in[1]) : NULL;
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
    char p[1024], b[4096], req[8192], hs[4096], wh[2048], wb[4096];
    resp *r = malloc(sizeof *r);
    assert_non_null(r);
    why[0] = '\0';
    subst(p, sizeof p, w->path);
    subst(b, sizeof b, w->body);
    subst(hs, sizeof hs, w->hdrs);
    subst(wh, sizeof wh, w->want_hdrs);
    subst(wb, sizeof wb, w->want_body);
    int port = srv.port;
    char *at = strstr(p, "@admin");
    if (at) {
        *at = '\0';
        port = srv.admin_port;
    }
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: "
                     "close\r\n%s",
                     w->method, p, hs);
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
    for (const char *h = w->want_hdrs ? wh : NULL; !why[0] && h && *h;) {
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
        if (!wb[0]) {
            if (r->body_len)
                snprintf(why, wn, "a body: %.200s", r->body);
        } else if (wb[0] == '~') {
            if (!strstr(r->body, wb + 1))
                snprintf(why, wn, "body %.300s", r->body);
        } else {
            char eb[256];
            yajl_val g = yajl_tree_parse(r->body, eb, sizeof eb);
            yajl_val e = yajl_tree_parse(wb, eb, sizeof eb);
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

static void set_name(char letter, const char *fmt, const char *a) {
    char *v = name_of(letter);
    snprintf(v, sizeof names[0].val, fmt, a);
}

static int c_setup(void **state) {
    target *t = *state;
    char sql[2048];
    ffb_conn *c = open_conn(t);
    const char *T = t->table;
    static const char *const ddl[] = {
        "CREATE TABLE %1$s (ID INTEGER NOT NULL PRIMARY KEY, NAME "
        "VARCHAR(20))",
        "CREATE TABLE %1$s_E (ID INTEGER NOT NULL PRIMARY KEY)",
        "CREATE TABLE %1$s_D (ID INTEGER NOT NULL PRIMARY KEY, V INTEGER "
        "DEFAULT 7)",
        "CREATE PROCEDURE %1$s_P (A INTEGER) AS BEGIN END",
        "CREATE FUNCTION %1$s_F (A INTEGER) RETURNS INTEGER AS BEGIN RETURN "
        "A + 1; END",
        "CREATE PROCEDURE %1$s_S RETURNS (ID INTEGER) AS BEGIN FOR SELECT ID "
        "FROM %1$s WHERE ID < 4 ORDER BY ID INTO :ID DO SUSPEND; END",
        "INSERT INTO %1$s SELECT 1, 'a' FROM RDB$DATABASE UNION ALL SELECT "
        "2, 'b' FROM RDB$DATABASE UNION ALL SELECT 3, 'c' FROM RDB$DATABASE",
        /* the embeds' tables */
        "CREATE TABLE %1$s_A (ID INTEGER NOT NULL PRIMARY KEY, NAME "
        "VARCHAR(20))",
        "CREATE TABLE %1$s_B (ID INTEGER NOT NULL PRIMARY KEY, TITLE "
        "VARCHAR(20), AUTHOR_ID INTEGER CONSTRAINT FK_%1$s_BA REFERENCES "
        "%1$s_A (ID), EDITOR_ID INTEGER REFERENCES %1$s_A (ID), PRICE "
        "INTEGER, DBL COMPUTED BY (PRICE * 2))",
        "CREATE TABLE %1$s_R (ID INTEGER NOT NULL PRIMARY KEY, BOOK_ID "
        "INTEGER NOT NULL REFERENCES %1$s_B (ID), STARS INTEGER)",
        "CREATE TABLE %1$s_G (ID INTEGER NOT NULL PRIMARY KEY, NAME "
        "VARCHAR(20))",
        "CREATE TABLE %1$s_J (B INTEGER NOT NULL REFERENCES %1$s_B (ID), G "
        "INTEGER NOT NULL REFERENCES %1$s_G (ID), PRIMARY KEY (B, G))",
        /* the rows in one statement (a statement is ~10 ms of this
           suite's time) */
        "EXECUTE BLOCK AS BEGIN "
        "INSERT INTO %1$s_A VALUES (1, 'Ann'); "
        "INSERT INTO %1$s_A VALUES (2, 'Bob'); "
        "INSERT INTO %1$s_B VALUES (1, 'Alpha', 1, 2, 10); "
        "INSERT INTO %1$s_B VALUES (2, 'Beta', 1, NULL, 6); "
        "INSERT INTO %1$s_B VALUES (3, 'Gamma', NULL, NULL, NULL); "
        "INSERT INTO %1$s_R VALUES (1, 1, 5); "
        "INSERT INTO %1$s_R VALUES (2, 1, 3); "
        "INSERT INTO %1$s_R VALUES (3, 2, 4); "
        "INSERT INTO %1$s_G VALUES (1, 'fun'); "
        "INSERT INTO %1$s_G VALUES (2, 'old'); "
        "INSERT INTO %1$s_J VALUES (1, 1); "
        "INSERT INTO %1$s_J VALUES (1, 2); "
        "INSERT INTO %1$s_J VALUES (2, 2); END",
        /* the roles: FFBTEST is granted _RA, not _RB */
        "CREATE ROLE %1$s_RA",
        "CREATE ROLE %1$s_RB",
        "GRANT %1$s_RA TO USER FFBTEST",
    };
    for (size_t i = 0; i < sizeof ddl / sizeof ddl[0]; i++) {
        snprintf(sql, sizeof sql, ddl[i], T);
        exec_sql(c, sql);
    }
    /* count=planned reads the primary key's selectivity */
    c_set_statistics(c, T);
    char pr[80], ex[80], ra[80];
    snprintf(pr, sizeof pr, "%s_PR", T);
    snprintf(ex, sizeof ex, "%s_X", T);
    snprintf(ra, sizeof ra, "%s_RA", T);
    make_pre_request(c, pr, ex, ra);
    ffb_conn_free(c);
    char low[80];
    snprintf(low, sizeof low, "%s", T);
    lower(low);
    static const struct {
        char letter;
        const char *fmt;
    } fmts[] = {{'T', "%s"},   {'E', "%s_e"}, {'D', "%s_d"},  {'P', "%s_p"},
                {'F', "%s_f"}, {'S', "%s_s"}, {'A', "%s_a"},  {'B', "%s_b"},
                {'R', "%s_r"}, {'G', "%s_g"}, {'J', "%s_j"},  {'K', "fk_%s_ba"},
                {'N', "%s_n"}, {'V', "%s_v"}, {'o', "%s_ra"}, {'q', "%s_rb"},
                {'z', "%s_rz"}};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++)
        set_name(fmts[i].letter, fmts[i].fmt, low);
    set_name('O', "%s_RA", T);
    set_name('X', "%s_PR", T);
    set_name('Y', "%s_X", T);
    char claims[256];
    snprintf(claims, sizeof claims, "{\"role\":\"%s\",\"sub\":\"u1\"}",
             name_of('o'));
    bearer("HS256", claims, JWT_SECRET, name_of('a'), sizeof names[0].val);
    snprintf(name_of('C'), sizeof names[0].val,
             "{\\\"role\\\":\\\"%s\\\",\\\"sub\\\":\\\"u1\\\"}", name_of('o'));
    snprintf(claims, sizeof claims, "{\"role\":\"%s\"}", name_of('q'));
    bearer("HS256", claims, JWT_SECRET, name_of('b'), sizeof names[0].val);
    snprintf(claims, sizeof claims, "{\"role\":\"%s\"}", name_of('z'));
    bearer("HS256", claims, JWT_SECRET, name_of('c'), sizeof names[0].val);
    snprintf(claims, sizeof claims, "{\"role\":\"%s\",\"exp\":1000}",
             name_of('o'));
    bearer("HS256", claims, JWT_SECRET, name_of('x'), sizeof names[0].val);
    snprintf(claims, sizeof claims, "{\"role\":\"%s\"}", name_of('o'));
    bearer("HS256", claims, "not-the-secret-not-the-secret-0123456789",
           name_of('w'), sizeof names[0].val);
    return start_server(t, "PGRST_DB_TX_END=commit-allow-override\n"
                           "PGRST_DB_AGGREGATES_ENABLED=true");
}

static int c_teardown(void **state) {
    target *t = *state;
    char sql[256];
    if (stop_server() != 0)
        server_exit_failed = 1;
    ffb_conn *c = open_conn(t);
    /* quiet: a failed run may not have made them all */
    static const char *const drop[] = {
        "VIEW %s_V",     "TABLE %s_N",     "PROCEDURE %s_PR", "EXCEPTION %s_X",
        "ROLE %s_RA",    "ROLE %s_RB",     "TABLE %s_J",      "TABLE %s_R",
        "TABLE %s_G",    "TABLE %s_B",     "TABLE %s_A",      "PROCEDURE %s_S",
        "FUNCTION %s_F", "PROCEDURE %s_P", "TABLE %s_D",      "TABLE %s_E",
        "TABLE %s"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++) {
        char f[64];
        snprintf(f, sizeof f, "DROP %s", drop[i]);
        snprintf(sql, sizeof sql, f, t->table);
        exec_sql_quiet(c, sql);
    }
    ffb_conn_free(c);
    return 0;
}

/* A step between rows (SQL, SERVER, SIGUSR1); 0 when done. */
static int run_step(const target *t, const row *w) {
    char a[2048];
    if (strcmp(w->method, "SQL") == 0) {
        subst(a, sizeof a, w->path);
        ffb_conn *c = open_conn(t);
        exec_sql(c, a);
        ffb_conn_free(c);
        return 0;
    }
    if (strcmp(w->method, "SERVER") == 0) {
        char env[3072];
        if (stop_server() != 0)
            server_exit_failed = 1;
        subst(a, sizeof a, w->hdrs);
        ffbtest_env(t, a, env, sizeof env);
        return start_server(t, env);
    }
    if (strcmp(w->method, "SIGUSR1") == 0) {
        /* what the server wrote before (the admin reload's line) first */
        read_log(now_ms() + 20, NULL);
        size_t from = srv.loglen;
        kill(srv.pid, SIGUSR1);
        int64_t end = now_ms() + 10000;
        while (!strstr(srv.log + from, "schema cache reloaded") &&
               now_ms() < end)
            read_log(now_ms() + 20, NULL);
        return strstr(srv.log + from, "schema cache reloaded") ? 0 : -1;
    }
    return -1;
}

static int is_step(const row *w) { return w->status == 0; }

static void test_conformance(void **state) {
    target *t = *state;
    const size_t nrows = sizeof rows / sizeof rows[0];
    size_t pass = 0, fail = 0, pend = 0, steps = 0;
    char *passed = calloc(nrows, 1);
    assert_non_null(passed);
    printf("conformance on %s (Firebird %d):\n", t->name, t->version);
    for (size_t i = 0; i < nrows; i++) {
        const row *w = &rows[i];
        if (is_step(w)) {
            char a[160];
            subst(a, sizeof a, w->path[0] ? w->path : w->hdrs);
            int64_t t0 = now_ms();
            assert_int_equal(run_step(t, w), 0);
            printf("  STEP    %s %.100s (%lld ms)\n", w->method, a,
                   (long long)(now_ms() - t0));
            steps++;
            continue;
        }
        if (w->pending) {
            printf("  PENDING %-24s %s %s (feature \"%s\")\n", w->feature,
                   w->method, w->path, w->pending);
            pend++;
            continue;
        }
        char why[700];
        int64_t t0 = now_ms();
        check_row(t, w, why, sizeof why);
        if (getenv("RESTC_TIMES"))
            printf("  %lld ms\n", (long long)(now_ms() - t0));
        printf("  %s %-24s %s %s%s%s\n", why[0] ? "FAIL" : "PASS", w->feature,
               w->method, w->path, why[0] ? ": " : "", why);
        why[0] ? fail++ : pass++;
        passed[i] = !why[0];
    }
    /* rows per feature */
    printf("rows per §A2 feature (passing/all):\n");
    for (size_t i = 0; i < nrows; i++) {
        size_t j = 0;
        while (j < i && (is_step(&rows[j]) ||
                         strcmp(rows[j].feature, rows[i].feature) != 0))
            j++;
        if (j < i || is_step(&rows[i]))
            continue;
        size_t all = 0, ok = 0;
        for (size_t k = i; k < nrows; k++)
            if (!is_step(&rows[k]) &&
                strcmp(rows[k].feature, rows[i].feature) == 0) {
                all++;
                ok += passed[k];
            }
        printf("  %-28s %zu/%zu\n", rows[i].feature, ok, all);
    }
    printf("%s: %zu passed, %zu failed, %zu pending of %zu rows (%zu steps)\n",
           t->name, pass, fail, pend, nrows - steps, steps);
    fflush(stdout);
    free(passed);
    assert_int_equal(fail, 0);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_conformance)};
    return rest_it_run(argc, argv, "test_rest_conformance", "RESTC", tests, 1,
                       c_setup, c_teardown);
}
