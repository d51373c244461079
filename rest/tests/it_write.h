/*
 * ffb-rest's writes against real Firebird 3 and 4 (included by
 * test_it.c, whose helpers it uses): POST single and bulk, columns=,
 * missing=default, upsert, PATCH, DELETE, every Prefer: return=, tx= with
 * db-tx-end = commit-allow-override, the integrity errors with
 * PostgreSQL's SQLSTATEs, and the round trips of each (Server-Timing).
 *
 * The table <T>_W is made here and the server restarted so that its
 * schema cache has it (and db-tx-end set); at the end it is stopped, the
 * table dropped, and the server started again as setup() left it.
 */

static char twname[80]; /* the exposed name of <T>_W */

/* `method path` with a JSON body. */
static void http_json(const char *method, const char *p, const char *hdrs,
                      const char *body, resp *r) {
    static char req[300000];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: "
                     "close\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n%s\r\n%s",
                     method, p, strlen(body), hdrs ? hdrs : "", body);
    assert_true(n > 0 && (size_t)n < sizeof req);
    http_raw(srv.port, req, (size_t)n, r);
}

static void wpath(char *out, size_t n, const char *query) {
    path(out, n, twname, query);
}

/* The table's rows as GET gives them (ordered by id). */
static void w_rows(const char *select, const char *filter, resp *r) {
    char q[512], p[640];
    snprintf(q, sizeof q, "select=%s&order=id%s%s", select,
             filter && *filter ? "&" : "", filter ? filter : "");
    wpath(p, sizeof p, q);
    http("GET", p, NULL, r);
    assert_int_equal(r->status, 200);
}

/* Stop the server; one that does not exit 0 fails the suite. */
static void w_stop(void) {
    int st = stop_server();
    if (st != 0) {
        fprintf(stderr, "ffb-rest exited with %d; log:\n%s\n", st, srv.log);
        server_exit_failed = 1;
    }
}

static void w_restart(const target *t, const char *env) {
    w_stop();
    assert_int_equal(start_server(t, env), 0);
}

static void w_drop_quiet(ffb_conn *c, const target *t) {
    char sql[256];
    /* <T>_W, and <T>_C of it_agg.h */
    for (int i = 0; i < 2; i++) {
        snprintf(sql, sizeof sql, "DROP TABLE %s_%c", t->table, "WC"[i]);
        exec_sql_quiet(c, sql);
    }
}

static void w_setup(const target *t) {
    char sql[1024];
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_W (ID INTEGER NOT NULL PRIMARY KEY, NAME "
             "VARCHAR(40) NOT NULL, PRICE NUMERIC(18,4) CHECK (PRICE >= 0), "
             "N INTEGER DEFAULT 7, OK BOOLEAN, U VARCHAR(10) UNIQUE, PARENT "
             "INTEGER REFERENCES %s (ID), TXT BLOB SUB_TYPE TEXT)",
             t->table, t->table);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    snprintf(twname, sizeof twname, "%s_w", tname);
    w_restart(t, "PGRST_DB_TX_END=commit-allow-override");
}

static void w_teardown(const target *t) {
    char sql[256];
    w_stop();
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql, "DROP TABLE %s_W", t->table);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}

/* The limit the planner cuts blocks at (wsql.h): Firebird's 256 table
   contexts per statement. A block of `rows` statements of `kind` (0
   INSERT, 1 UPDATE OR INSERT, 2 IF NOT EXISTS + INSERT) prepared on `c`:
   0, or the error's SQLSTATE as a number (54001). */
static int w_block_prepares(ffb_conn *c, const target *t, int rows, int kind) {
    static char sql[200000];
    size_t n = (size_t)snprintf(sql, sizeof sql,
                                "EXECUTE BLOCK (P0 TYPE OF COLUMN %s_W.ID = "
                                "?) RETURNS (N INTEGER) AS BEGIN N = 0;",
                                t->table);
    for (int i = 0; i < rows && n < sizeof sql - 400; i++) {
        if (kind == 0)
            n += (size_t)snprintf(sql + n, sizeof sql - n,
                                  " INSERT INTO %s_W (ID, NAME) VALUES (:P0, "
                                  "'x');",
                                  t->table);
        else if (kind == 1)
            n += (size_t)snprintf(sql + n, sizeof sql - n,
                                  " UPDATE OR INSERT INTO %s_W (ID, NAME) "
                                  "VALUES (:P0, 'x') MATCHING (ID);",
                                  t->table);
        else
            n += (size_t)snprintf(sql + n, sizeof sql - n,
                                  " IF (NOT EXISTS (SELECT 1 FROM %s_W WHERE "
                                  "ID = :P0)) THEN INSERT INTO %s_W (ID, "
                                  "NAME) VALUES (:P0, 'x');",
                                  t->table, t->table);
    }
    snprintf(sql + n, sizeof sql - n, " SUSPEND; END");
    ffb_tx *tx;
    ffb_stmt *st;
    assert_int_equal(ffb_tx_begin(c, NULL, &tx), 0);
    assert_int_equal(ffb_stmt_new(c, &st), 0);
    int rc = ffb_stmt_prepare(st, tx, sql, (size_t)-1);
    const char *state = rc < 0 ? ffb_error_sqlstate(ffb_conn_error(c)) : NULL;
    int out = rc == 0 ? 0 : state ? atoi(state) : -1;
    ffb_stmt_free(st);
    ffb_tx_rollback(tx);
    ffb_tx_free(tx);
    return out;
}

static void test_rest_write(void **state) {
    target *t = *state;
    resp r;
    char p[1024], want[4096];
    static char big[200000];
    size_t n;
    w_setup(t);

    /* ---- POST one object, return=minimal (the default) ---- */
    wpath(p, sizeof p, NULL);
    http_json("POST", p, NULL,
              "{\"id\":1,\"name\":\"one\",\"price\":12345678901234.5678}", &r);
    EXPECT(&r, 201, "");
    assert_string_equal(hdr(&r, "content-range"), "*/*");
    assert_string_equal(hdr(&r, "content-type"), "");
    assert_string_equal(hdr(&r, "location"), "");
    /* Cold: FB4 = 2 (transaction start + prepare of the block; execute +
       fetch + commit); FB3 = 3 (it prepares only once the start is
       answered: start; prepare; execute + fetch + commit). */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    http_json("POST", p, NULL, "{\"id\":2,\"name\":\"two\",\"price\":0.0001}",
              &r);
    EXPECT(&r, 201, "");
    /* Warm: start, execute of the cached block with its fetch (the
       count), commit: one write = 1. */
    assert_int_equal(rts(&r), 1);
    w_rows("id,name,price,n", NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":1,\"name\":\"one\",\"price\":12345678901234.5678,"
           "\"n\":7},{\"id\":2,\"name\":\"two\",\"price\":0.0001,"
           "\"n\":7}]");

    /* ---- return=representation, select=, a text blob ---- */
    wpath(p, sizeof p, "select=id,label:name,n,txt");
    http_json("POST", p, "Prefer: return=representation, missing=default\r\n",
              "{\"id\":3,\"name\":\"three\",\"txt\":\"a \\\"blob\\\"\"}", &r);
    EXPECT(&r, 201,
           "[{\"id\":3,\"label\":\"three\",\"n\":7,\"txt\":\"a "
           "\\\"blob\\\"\"}]");
    assert_string_equal(hdr(&r, "content-type"),
                        "application/json; charset=utf-8");
    assert_string_equal(hdr(&r, "preference-applied"),
                        "return=representation, missing=default");
    assert_string_equal(hdr(&r, "content-range"), "*/*");
    /* cold (another block): FB4 2, FB3 3 as above */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);

    /* a text blob longer than the representation's 8191 characters: the
       server's truncation error, and nothing written */
    n = (size_t)snprintf(big, sizeof big,
                         "{\"id\":90,\"name\":\"long\",\"txt\":\"");
    memset(big + n, 'x', 9000);
    n += 9000;
    snprintf(big + n, sizeof big - n, "\"}");
    wpath(p, sizeof p, "select=id,txt");
    http_json("POST", p, "Prefer: return=representation\r\n", big, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"22001\""));
    assert_non_null(strstr(r.body, "expected length 8191, actual 9000"));
    /* without representation it is written (and was not before: no 409) */
    wpath(p, sizeof p, NULL);
    http_json("POST", p, NULL, big, &r);
    EXPECT(&r, 201, "");
    wpath(p, sizeof p, "id=eq.90");
    http("DELETE", p, NULL, &r);
    EXPECT(&r, 204, "");

    /* ---- return=headers-only: Location from the primary key ---- */
    wpath(p, sizeof p, NULL);
    http_json("POST", p, "Prefer: return=headers-only\r\n",
              "{\"id\":4,\"name\":\"four\"}", &r);
    EXPECT(&r, 201, "");
    snprintf(want, sizeof want, "/%s?id=eq.4", twname);
    assert_string_equal(hdr(&r, "location"), want);
    http_json("POST", p, "Prefer: return=headers-only\r\n",
              "{\"id\":5,\"name\":\"five\"}", &r);
    EXPECT(&r, 201, "");
    assert_int_equal(rts(&r), 1); /* warm: one write */

    /* ---- bulk: 100 objects in one block ---- */
    n = 0;
    n += (size_t)snprintf(big + n, sizeof big - n, "[");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(big + n, sizeof big - n,
                              "%s{\"id\":%d,\"name\":\"bulk %d\",\"ok\":%s}",
                              i ? "," : "", 100 + i, i,
                              i % 2 ? "true" : "false");
    snprintf(big + n, sizeof big - n, "]");
    wpath(p, sizeof p, NULL);
    http_json("POST", p, "Prefer: count=exact\r\n", big, &r);
    EXPECT(&r, 201, "");
    assert_string_equal(hdr(&r, "content-range"), "*/100");
    assert_string_equal(hdr(&r, "preference-applied"), "count=exact");
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2); /* cold */
    /* the same shape again with other ids: warm, 1 round trip for 100
       rows (start, the block's execute and fetch, commit: one write) */
    n = 0;
    n += (size_t)snprintf(big + n, sizeof big - n, "[");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(big + n, sizeof big - n,
                              "%s{\"id\":%d,\"name\":\"bulk %d\",\"ok\":%s}",
                              i ? "," : "", 200 + i, i, "null");
    snprintf(big + n, sizeof big - n, "]");
    http_json("POST", p, "Prefer: count=exact\r\n", big, &r);
    EXPECT(&r, 201, "");
    assert_string_equal(hdr(&r, "content-range"), "*/100");
    assert_int_equal(rts(&r), 1);
    w_rows("id,ok", "id=in.(100,101,299)", &r);
    EXPECT(&r, 200,
           "[{\"id\":100,\"ok\":false},{\"id\":101,\"ok\":true},"
           "{\"id\":299,\"ok\":null}]");

    /* 1000 objects: a block takes 256 INSERTs (Firebird's 256 table
       contexts per statement), so the body is cut into 4 blocks; one
       failing block must undo the others, so the commit waits for their
       answers */
    n = 0;
    n += (size_t)snprintf(big + n, sizeof big - n, "[");
    for (int i = 0; i < 1000; i++)
        n += (size_t)snprintf(big + n, sizeof big - n,
                              "%s{\"id\":%d,\"name\":\"many %d\",\"ok\":true}",
                              i ? "," : "", 1000 + i, i);
    snprintf(big + n, sizeof big - n, "]");
    http_json("POST", p, "Prefer: count=exact\r\n", big, &r);
    EXPECT(&r, 201, "");
    assert_string_equal(hdr(&r, "content-range"), "*/1000");
    int cold_many = rts(&r);
    wpath(p, sizeof p, "id=gte.1000");
    http("DELETE", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 204, "");
    assert_string_equal(hdr(&r, "content-range"), "*/1000");
    wpath(p, sizeof p, NULL);
    http_json("POST", p, "Prefer: count=exact\r\n", big, &r);
    EXPECT(&r, 201, "");
    /* cold: FB4 3 (start and the prepares of the two block texts; the
       executes; the commit), FB3 4 (the start is answered before it
       prepares) */
    assert_int_equal(cold_many, t->version == 3 ? 4 : 3);
    /* warm: start, every block's execute with its fetch (1); the commit
       once all are answered (1) */
    assert_int_equal(rts(&r), 2);
    wpath(p, sizeof p, "id=gte.1000");
    http("DELETE", p, NULL, &r);
    EXPECT(&r, 204, "");
    wpath(p, sizeof p, NULL);

    /* 100 upserts: UPDATE OR INSERT takes 3 table contexts, so 85 rows
       per block: 2 blocks */
    n = 0;
    n += (size_t)snprintf(big + n, sizeof big - n, "[");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(big + n, sizeof big - n,
                              "%s{\"id\":%d,\"name\":\"upsert %d\"}",
                              i ? "," : "", 150 + i, i);
    snprintf(big + n, sizeof big - n, "]");
    http_json("POST", p, "Prefer: resolution=merge-duplicates, count=exact\r\n",
              big, &r);
    EXPECT(&r, 201, "");
    assert_string_equal(hdr(&r, "content-range"), "*/100");
    http_json("POST", p, "Prefer: resolution=merge-duplicates, count=exact\r\n",
              big, &r);
    EXPECT(&r, 201, "");
    assert_string_equal(hdr(&r, "content-range"), "*/100");
    /* warm: both blocks' executes in one write (1), the commit once both
       are answered (1) */
    assert_int_equal(rts(&r), 2);
    w_rows("id,name", "id=in.(149,150,199,200,249)", &r);
    EXPECT(&r, 200,
           "[{\"id\":149,\"name\":\"bulk 49\"},{\"id\":150,\"name\":"
           "\"upsert 0\"},{\"id\":199,\"name\":"
           "\"upsert 49\"},{\"id\":200,\"name\":\"upsert 50\"},{\"id\":249,"
           "\"name\":\"upsert 99\"}]");

    /* keys that differ: PGRST102, nothing sent */
    http_json("POST", p, NULL, "[{\"id\":6,\"name\":\"a\"},{\"id\":7}]", &r);
    EXPECT(&r, 400,
           "{\"code\":\"PGRST102\",\"message\":\"All object keys must "
           "match\",\"details\":null,\"hint\":null}");
    assert_int_equal(rts(&r), -1);

    /* columns= with missing=default: absent keys take the default */
    wpath(p, sizeof p, "columns=id,name,n");
    http_json("POST", p, "Prefer: missing=default, return=representation\r\n",
              "[{\"id\":6,\"name\":\"six\",\"extra\":1},"
              "{\"id\":7,\"name\":\"seven\",\"n\":null}]",
              &r);
    EXPECT(&r, 201,
           "[{\"id\":6,\"name\":\"six\",\"price\":null,\"n\":7,\"ok\":null,"
           "\"u\":null,\"parent\":null,\"txt\":null},{\"id\":7,\"name\":"
           "\"seven\",\"price\":null,\"n\":null,\"ok\":null,\"u\":null,"
           "\"parent\":null,\"txt\":null}]");

    /* ---- integrity errors, PostgreSQL's codes ---- */
    wpath(p, sizeof p, NULL);
    http_json("POST", p, NULL, "{\"id\":1,\"name\":\"dup\",\"price\":1}", &r);
    assert_int_equal(r.status, 409);
    assert_non_null(strstr(r.body, "\"code\":\"23505\""));
    assert_int_equal(rts(&r), 1); /* warm: the error comes with the execute */
    http_json("POST", p, NULL, "{\"id\":8,\"name\":null}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"23502\""));
    http_json("POST", p, NULL, "{\"id\":8,\"name\":\"x\",\"parent\":999}", &r);
    assert_int_equal(r.status, 409);
    assert_non_null(strstr(r.body, "\"code\":\"23503\""));
    http_json("POST", p, NULL, "{\"id\":8,\"name\":\"x\",\"price\":-1}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"23514\""));
    /* a bulk whose second row fails: the block undoes the first one */
    http_json("POST", p, NULL,
              "[{\"id\":9,\"name\":\"nine\"},{\"id\":1,\"name\":\"dup\"}]", &r);
    assert_int_equal(r.status, 409);
    w_rows("id", "id=eq.9", &r);
    EXPECT(&r, 200, "[]");
    /* an unknown column: PGRST204 before the database */
    http_json("POST", p, NULL, "{\"id\":9,\"nope\":1}", &r);
    snprintf(want, sizeof want,
             "{\"code\":\"PGRST204\",\"message\":\"Could not find the "
             "'nope' column of '%s' in the schema cache\",\"details\":null,"
             "\"hint\":null}",
             twname);
    EXPECT(&r, 400, want);
    http_json("POST", p, NULL, "{\"id\":", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST102\""));

    /* ---- upsert ---- */
    http_json("POST", p,
              "Prefer: resolution=merge-duplicates, return=representation\r\n",
              "[{\"id\":1,\"name\":\"uno\"},{\"id\":10,\"name\":\"ten\"}]", &r);
    EXPECT(&r, 201,
           "[{\"id\":1,\"name\":\"uno\",\"price\":12345678901234.5678,\"n\":"
           "7,\"ok\":null,\"u\":null,\"parent\":null,\"txt\":null},"
           "{\"id\":10,\"name\":\"ten\",\"price\":null,\"n\":7,\"ok\":"
           "null,\"u\":null,\"parent\":null,\"txt\":null}]");
    assert_string_equal(hdr(&r, "preference-applied"),
                        "resolution=merge-duplicates, return=representation");
    http_json(
        "POST", p,
        "Prefer: resolution=ignore-duplicates, return=representation\r\n",
        "[{\"id\":1,\"name\":\"ignored\"},{\"id\":11,\"name\":\"eleven\"}]",
        &r);
    /* only the inserted row comes back, as PostgreSQL's ON CONFLICT DO
       NOTHING ... RETURNING gives */
    EXPECT(&r, 201,
           "[{\"id\":11,\"name\":\"eleven\",\"price\":null,\"n\":7,\"ok\":"
           "null,\"u\":null,\"parent\":null,\"txt\":null}]");
    /* on_conflict= another unique column */
    wpath(p, sizeof p, "on_conflict=u");
    http_json("POST", p, "Prefer: resolution=merge-duplicates\r\n",
              "{\"id\":12,\"name\":\"twelve\",\"u\":\"k\"}", &r);
    EXPECT(&r, 201, "");
    http_json("POST", p, "Prefer: resolution=merge-duplicates\r\n",
              "{\"id\":12,\"name\":\"twelve again\",\"u\":\"k\"}", &r);
    EXPECT(&r, 201, "");
    w_rows("id,name", "u=eq.k", &r);
    EXPECT(&r, 200, "[{\"id\":12,\"name\":\"twelve again\"}]");

    /* ---- PATCH ---- */
    wpath(p, sizeof p, "id=in.(1,2)");
    http_json("PATCH", p, NULL, "{\"n\":42,\"ok\":true}", &r);
    EXPECT(&r, 204, "");
    assert_string_equal(hdr(&r, "content-range"), "0-1/*");
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2); /* cold */
    wpath(p, sizeof p, "id=in.(3,4)");
    http_json("PATCH", p, "Prefer: count=exact\r\n", "{\"n\":43,\"ok\":false}",
              &r);
    EXPECT(&r, 204, "");
    assert_string_equal(hdr(&r, "content-range"), "0-1/2");
    /* warm: start, UPDATE with its row count, commit: one write */
    assert_int_equal(rts(&r), 1);
    wpath(p, sizeof p, "id=eq.12345");
    http_json("PATCH", p, NULL, "{\"n\":1}", &r);
    EXPECT(&r, 204, "");
    assert_string_equal(hdr(&r, "content-range"), "*/*");
    wpath(p, sizeof p, "select=id,n&id=lte.2&name=like.*n*");
    http_json("PATCH", p, "Prefer: return=representation\r\n", "{\"n\":44}",
              &r);
    EXPECT(&r, 200, "[{\"id\":1,\"n\":44}]");
    assert_string_equal(hdr(&r, "content-range"), "0-0/*");
    http_json("PATCH", p, "Prefer: return=representation\r\n", "{\"n\":45}",
              &r);
    EXPECT(&r, 200, "[{\"id\":1,\"n\":45}]");
    /* warm, 1: the block writes every row (up to 16) before it
       suspends the first, so its first fetch has them all and its end,
       and an error undoes all it wrote: the commit rides behind */
    assert_int_equal(rts(&r), 1);
    /* an error in PATCH: the check constraint */
    wpath(p, sizeof p, "id=eq.1");
    http_json("PATCH", p, NULL, "{\"price\":-5}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"23514\""));

    /* ---- tx=rollback (db-tx-end = commit-allow-override) ---- */
    wpath(p, sizeof p, "id=eq.2");
    http_json("PATCH", p, "Prefer: tx=rollback, return=representation\r\n",
              "{\"name\":\"rolled back\"}", &r);
    EXPECT(&r, 200,
           "[{\"id\":2,\"name\":\"rolled back\",\"price\":0.0001,\"n\":42,"
           "\"ok\":true,\"u\":null,\"parent\":null,\"txt\":null}]");
    assert_string_equal(hdr(&r, "preference-applied"),
                        "return=representation, tx=rollback");
    w_rows("name", "id=eq.2", &r);
    EXPECT(&r, 200, "[{\"name\":\"two\"}]");
    wpath(p, sizeof p, NULL);
    http_json("POST", p, "Prefer: tx=rollback\r\n",
              "{\"id\":13,\"name\":\"never\"}", &r);
    EXPECT(&r, 201, "");
    http_json("POST", p, "Prefer: tx=rollback\r\n",
              "{\"id\":13,\"name\":\"never\"}", &r);
    EXPECT(&r, 201, "");
    /* warm with a rollback: start, execute, rollback in one write = 1 */
    assert_int_equal(rts(&r), 1);
    assert_string_equal(hdr(&r, "preference-applied"), "tx=rollback");
    w_rows("id", "id=eq.13", &r);
    EXPECT(&r, 200, "[]");

    /* ---- the singular object (Accept: application/vnd.pgrst.object+json) */
    wpath(p, sizeof p, "select=id,name");
    http_json("POST", p,
              "Accept: application/vnd.pgrst.object+json\r\n"
              "Prefer: return=representation\r\n",
              "{\"id\":14,\"name\":\"single\"}", &r);
    EXPECT(&r, 201, "{\"id\":14,\"name\":\"single\"}");
    assert_string_equal(hdr(&r, "content-type"),
                        "application/vnd.pgrst.object+json; charset=utf-8");
    http_json("POST", p,
              "Accept: application/vnd.pgrst.object+json\r\n"
              "Prefer: return=representation\r\n",
              "{\"id\":15,\"name\":\"single\"}", &r);
    EXPECT(&r, 201, "{\"id\":15,\"name\":\"single\"}");
    /* warm, 1: the block counts the rows and refuses other than one
       itself (undoing what it wrote), so the commit rides behind */
    assert_int_equal(rts(&r), 1);
    /* two rows: 406, and nothing changed */
    wpath(p, sizeof p, "name=eq.single");
    http_json("PATCH", p, "Accept: application/vnd.pgrst.object+json\r\n",
              "{\"name\":\"double\"}", &r);
    EXPECT(&r, 406,
           "{\"code\":\"PGRST116\",\"message\":\"JSON object requested, "
           "multiple (or no) rows returned\",\"details\":\"The result "
           "contains 2 rows\",\"hint\":null}");
    w_rows("id", "name=eq.single", &r);
    EXPECT(&r, 200, "[{\"id\":14},{\"id\":15}]");
    wpath(p, sizeof p, "id=in.(14,15)");
    http("DELETE", p, NULL, &r);
    EXPECT(&r, 204, "");

    /* ---- a form body (application/x-www-form-urlencoded): one row ---- */
    wpath(p, sizeof p, "select=id,name,n");
    http("POST", p,
         "Content-Type: application/x-www-form-urlencoded\r\n"
         "Prefer: return=representation\r\nContent-Length: 33\r\n\r\n"
         "id=16&name=form+%C3%A9t%C3%A9&n=3",
         &r);
    EXPECT(&r, 201, "[{\"id\":16,\"name\":\"form \u00e9t\u00e9\",\"n\":3}]");
    path(p, sizeof p, twname, "id=eq.16");
    http("DELETE", p, NULL, &r);
    EXPECT(&r, 204, "");

    /* ---- DELETE ---- */
    wpath(p, sizeof p, "id=gte.100&id=lt.150");
    http("DELETE", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 204, "");
    assert_string_equal(hdr(&r, "content-range"), "*/50");
    wpath(p, sizeof p, "id=gte.150&id=lt.200");
    http("DELETE", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 204, "");
    assert_string_equal(hdr(&r, "content-range"), "*/50");
    assert_int_equal(rts(&r), 1); /* warm: start, DELETE, commit */
    wpath(p, sizeof p, "id=gte.200");
    http("DELETE", p, NULL, &r);
    EXPECT(&r, 204, "");
    assert_string_equal(hdr(&r, "content-range"), "*/*");
    wpath(p, sizeof p, "select=id,name&or=(id.eq.10,id.eq.11)");
    http("DELETE", p, "Prefer: return=representation\r\n", &r);
    EXPECT(&r, 200,
           "[{\"id\":10,\"name\":\"ten\"},{\"id\":11,\"name\":\"eleven\"}]");
    /* an FK violation on DELETE: a row of <T> that <T>_W refers to */
    wpath(p, sizeof p, NULL);
    http_json("PATCH", p, "", "{\"parent\":1}", &r);
    EXPECT(&r, 204, "");
    path(p, sizeof p, tname, "id=eq.1");
    http("DELETE", p, NULL, &r);
    assert_int_equal(r.status, 409);
    assert_non_null(strstr(r.body, "\"code\":\"23503\""));
    /* a COMPUTED BY column: the server refuses the block's prepare */
    path(p, sizeof p, tname, NULL);
    http_json("POST", p, NULL, "{\"id\":99,\"name\":\"x\",\"total\":1}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"42000\""));
    assert_non_null(strstr(r.body, "read-only"));
    /* FB4: the start and the prepare (refused) in one write, then the
       rollback = 2; FB3: the start first = 3 */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    /* not JSON */
    wpath(p, sizeof p, NULL);
    http("POST", p, "Content-Type: text/csv\r\nContent-Length: 1\r\n\r\nx", &r);
    assert_int_equal(r.status, 415);
    w_rows("id", NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":1},{\"id\":2},{\"id\":3},{\"id\":4},{\"id\":5},{\"id\":"
           "6},{\"id\":7},{\"id\":12}]");

    /* the block limits the planner uses are the server's: 256 INSERTs,
       128 IF NOT EXISTS + INSERT, 85 UPDATE OR INSERT prepare; one more
       is 54001 "too many contexts of tables, procedures or views" */
    ffb_conn *c = open_conn(t);
    assert_int_equal(w_block_prepares(c, t, 256, 0), 0);
    assert_int_equal(w_block_prepares(c, t, 257, 0), 54001);
    assert_int_equal(w_block_prepares(c, t, 128, 2), 0);
    assert_int_equal(w_block_prepares(c, t, 129, 2), 54001);
    assert_int_equal(w_block_prepares(c, t, 85, 1), 0);
    assert_int_equal(w_block_prepares(c, t, 86, 1), 54001);
    ffb_conn_close(c);
    ffb_conn_free(c);
    w_teardown(t);
}

/* The 406 of a singular write of `n` rows. */
static void w_expect_406(const resp *r, int n) {
    char want[256];
    snprintf(want, sizeof want,
             "{\"code\":\"PGRST116\",\"message\":\"JSON object requested, "
             "multiple (or no) rows returned\",\"details\":\"The result "
             "contains %d rows\",\"hint\":null}",
             n);
    EXPECT(r, 406, want);
}

/* A singular write of `n` rows, twice: 406 PGRST116 each time, the
   second warm 1 (the block's refusal and the commit in one write). */
static void w_406_twice(const char *method, const char *p, const char *hdrs,
                        const char *body, int n) {
    for (int k = 0; k < 2; k++) {
        resp r;
        http_json(method, p, hdrs, body, &r);
        w_expect_406(&r, n);
        if (k)
            assert_int_equal(rts(&r), 1);
    }
}

/* "[{"id":a,"n":v},...]" for ids a..b */
static void w_ids_n(char *out, size_t cap, int a, int b, int v) {
    size_t k = (size_t)snprintf(out, cap, "[");
    for (int i = a; i <= b && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s{\"id\":%d,\"n\":%d}",
                              i > a ? "," : "", i, v);
    if (k < cap)
        snprintf(out + k, cap - k, "]");
}

/*
 * The writes whose end rides with the statement (1 round trip warm)
 * because the block itself makes a failure undo everything: the rows of
 * a representation are written before the first is suspended (a
 * SUSPEND ends the statement's savepoint of what came before it, so a
 * row failing behind a suspended one would stay written, verified on
 * 3.0.11 and 4.0.5), and a singular write counts its rows and refuses
 * other than one itself. PATCH/DELETE representations of more than the
 * 16 rows a block keeps go again with the streaming block.
 */
static void test_rest_write_one_rt(void **state) {
    target *t = *state;
    resp r;
    char p[512], want[8192];
    static char big[100000];
    size_t n = 0;
    w_setup(t);
    wpath(p, sizeof p, NULL);
    n += (size_t)snprintf(big + n, sizeof big - n, "[");
    for (int i = 1; i <= 30; i++)
        n += (size_t)snprintf(big + n, sizeof big - n,
                              "%s{\"id\":%d,\"name\":\"r%d\",\"n\":1}",
                              i > 1 ? "," : "", i, i);
    snprintf(big + n, sizeof big - n, "]");
    http_json("POST", p, NULL, big, &r);
    EXPECT(&r, 201, "");

    /* ---- POST with representation: a failing third row undoes the
       two before it (main's block suspended each row after its INSERT,
       and the commit riding behind kept rows 40 and 41) ---- */
    wpath(p, sizeof p, "select=id");
    for (int k = 0; k < 2; k++) {
        http_json("POST", p, "Prefer: return=representation\r\n",
                  "[{\"id\":40,\"name\":\"a\"},{\"id\":41,\"name\":\"b\"},"
                  "{\"id\":1,\"name\":\"dup\"}]",
                  &r);
        assert_int_equal(r.status, 409);
        assert_non_null(strstr(r.body, "\"code\":\"23505\""));
        /* cold FB4 2 / FB3 3; warm 1: the error and the commit (of
           nothing) in one write */
        assert_int_equal(rts(&r), k ? 1 : t->version == 3 ? 3 : 2);
    }
    wpath(p, sizeof p, NULL);
    http_json("POST", p, "Prefer: return=headers-only\r\n",
              "[{\"id\":42,\"name\":\"a\"},{\"id\":1,\"name\":\"dup\"}]", &r);
    assert_int_equal(r.status, 409);
    w_rows("id", "id=in.(40,41,42)", &r);
    EXPECT(&r, 200, "[]");

    /* ---- PATCH with representation, up to 16 rows: 1 warm ---- */
    wpath(p, sizeof p, "select=id,n&id=lte.3");
    http_json("PATCH", p, "Prefer: return=representation\r\n", "{\"n\":50}",
              &r);
    w_ids_n(want, sizeof want, 1, 3, 50);
    EXPECT(&r, 200, want);
    http_json("PATCH", p, "Prefer: return=representation\r\n", "{\"n\":51}",
              &r);
    w_ids_n(want, sizeof want, 1, 3, 51);
    EXPECT(&r, 200, want);
    assert_string_equal(hdr(&r, "content-range"), "0-2/*");
    assert_int_equal(rts(&r), 1); /* start, execute + fetch, commit */
    /* the second row fails (the unique U, taken by the first): nothing
       of the first stays */
    wpath(p, sizeof p, "select=id,u&id=lte.3");
    for (int k = 0; k < 2; k++) {
        http_json("PATCH", p, "Prefer: return=representation\r\n",
                  "{\"u\":\"same\"}", &r);
        assert_int_equal(r.status, 409);
        assert_non_null(strstr(r.body, "\"code\":\"23505\""));
        if (k)
            assert_int_equal(rts(&r), 1);
    }
    w_rows("id,u", "id=lte.3", &r);
    EXPECT(&r, 200,
           "[{\"id\":1,\"u\":null},{\"id\":2,\"u\":null},{\"id\":3,\"u\":"
           "null}]");

    /* ---- more than 16 rows: the block refuses (undoing all), the
       request goes again with the streaming block ---- */
    wpath(p, sizeof p, "select=id,n&id=lte.20");
    http_json("PATCH", p, "Prefer: return=representation\r\n", "{\"n\":60}",
              &r);
    w_ids_n(want, sizeof want, 1, 20, 60);
    EXPECT(&r, 200, want);
    /* the keeping block warm (1), then the streaming one cold: FB4 start
       + prepare, execute + fetch, commit (3); FB3 4 */
    assert_int_equal(rts(&r), t->version == 3 ? 5 : 4);
    http_json("PATCH", p, "Prefer: return=representation\r\n", "{\"n\":61}",
              &r);
    w_ids_n(want, sizeof want, 1, 20, 61);
    EXPECT(&r, 200, want);
    assert_string_equal(hdr(&r, "content-range"), "0-19/*");
    /* warm: the refused block (1), the streaming block's execute + fetch
       (1), its commit once every row is in (1) */
    assert_int_equal(rts(&r), 3);
    http_json("PATCH", p, "Prefer: return=representation, tx=rollback\r\n",
              "{\"n\":70}", &r);
    w_ids_n(want, sizeof want, 1, 20, 70);
    EXPECT(&r, 200, want);
    assert_string_equal(hdr(&r, "preference-applied"),
                        "return=representation, tx=rollback");
    assert_int_equal(rts(&r), 3);
    w_rows("id,n", "id=lte.20", &r);
    w_ids_n(want, sizeof want, 1, 20, 61);
    EXPECT(&r, 200, want);

    /* ---- DELETE with representation ---- */
    wpath(p, sizeof p, "select=id&id=gt.28");
    http("DELETE", p, "Prefer: return=representation\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":29},{\"id\":30}]");
    wpath(p, sizeof p, "select=id&id=gt.26");
    http("DELETE", p, "Prefer: return=representation\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":27},{\"id\":28}]");
    assert_int_equal(rts(&r), 1);
    wpath(p, sizeof p, "select=id&id=gt.8");
    http("DELETE", p, "Prefer: return=representation, tx=rollback\r\n", &r);
    n = (size_t)snprintf(want, sizeof want, "[");
    for (int i = 9; i <= 26; i++)
        n += (size_t)snprintf(want + n, sizeof want - n, "%s{\"id\":%d}",
                              i > 9 ? "," : "", i);
    snprintf(want + n, sizeof want - n, "]");
    EXPECT(&r, 200, want);
    /* 18 rows: the refused block (1), the streaming one cold (FB4 3,
       FB3 4) */
    assert_int_equal(rts(&r), t->version == 3 ? 5 : 4);
    http("DELETE", p, "Prefer: return=representation\r\n", &r);
    EXPECT(&r, 200, want);
    assert_int_equal(rts(&r), 3);
    w_rows("id", "id=gt.6", &r);
    EXPECT(&r, 200, "[{\"id\":7},{\"id\":8}]");

    /* ---- the singular object: the block refuses other than one row
       itself, so the end rides: 1 warm, the 406 too ---- */
    const char *acc = "Accept: application/vnd.pgrst.object+json\r\n";
    wpath(p, sizeof p, "id=lte.2");
    w_406_twice("PATCH", p, acc, "{\"n\":80}", 2);
    wpath(p, sizeof p, "id=lte.0");
    http_json("PATCH", p, acc, "{\"n\":80}", &r);
    w_expect_406(&r, 0);
    assert_int_equal(rts(&r), 1);
    w_rows("id,n", "id=lte.2", &r);
    w_ids_n(want, sizeof want, 1, 2, 61);
    EXPECT(&r, 200, want);
    wpath(p, sizeof p, "id=eq.1");
    http_json("PATCH", p, acc, "{\"n\":81}", &r);
    EXPECT(&r, 204, "");
    http_json("PATCH", p, acc, "{\"n\":82}", &r);
    EXPECT(&r, 204, "");
    assert_int_equal(rts(&r), 1);
    /* with the representation */
    char hd[256];
    snprintf(hd, sizeof hd, "%sPrefer: return=representation\r\n", acc);
    wpath(p, sizeof p, "select=id,n&id=eq.1");
    http_json("PATCH", p, hd, "{\"n\":83}", &r);
    EXPECT(&r, 200, "{\"id\":1,\"n\":83}");
    assert_string_equal(hdr(&r, "content-type"),
                        "application/vnd.pgrst.object+json; charset=utf-8");
    http_json("PATCH", p, hd, "{\"n\":84}", &r);
    EXPECT(&r, 200, "{\"id\":1,\"n\":84}");
    assert_int_equal(rts(&r), 1);
    wpath(p, sizeof p, "select=id,n&id=lte.2");
    w_406_twice("PATCH", p, hd, "{\"n\":85}", 2);
    /* DELETE */
    wpath(p, sizeof p, "id=lte.2");
    w_406_twice("DELETE", p, acc, "", 2);
    wpath(p, sizeof p, "select=id&id=lte.2");
    w_406_twice("DELETE", p, hd, "", 2);
    w_rows("id,n", "id=lte.2", &r);
    EXPECT(&r, 200, "[{\"id\":1,\"n\":84},{\"id\":2,\"n\":61}]");
    wpath(p, sizeof p, "select=id&id=eq.2");
    http("DELETE", p, hd, &r);
    EXPECT(&r, 200, "{\"id\":2}");
    /* POST: two objects are 406, none written */
    wpath(p, sizeof p, NULL);
    w_406_twice("POST", p, acc,
                "[{\"id\":50,\"name\":\"a\"},{\"id\":51,\"name\":\"b\"}]", 2);
    wpath(p, sizeof p, "select=id,name");
    w_406_twice("POST", p, hd,
                "[{\"id\":50,\"name\":\"a\"},{\"id\":51,\"name\":\"b\"}]", 2);
    /* ignore-duplicates that inserts none: 0 rows */
    http_json("POST", p,
              "Accept: application/vnd.pgrst.object+json\r\nPrefer: "
              "return=representation, resolution=ignore-duplicates\r\n",
              "{\"id\":1,\"name\":\"a\"}", &r);
    w_expect_406(&r, 0);
    /* one object, rolled back: answered, not kept */
    snprintf(hd, sizeof hd, "%sPrefer: return=representation, tx=rollback\r\n",
             acc);
    for (int k = 0; k < 2; k++) {
        http_json("POST", p, hd, "{\"id\":52,\"name\":\"c\"}", &r);
        EXPECT(&r, 201, "{\"id\":52,\"name\":\"c\"}");
        assert_string_equal(hdr(&r, "preference-applied"),
                            "return=representation, tx=rollback");
        /* cold FB4 2 / FB3 3; warm: start, execute + fetch, rollback */
        assert_int_equal(rts(&r), k ? 1 : t->version == 3 ? 3 : 2);
    }
    w_rows("id", "id=gte.40", &r);
    EXPECT(&r, 200, "[]");

    /* ---- merge-duplicates of 86..300 rows: several blocks, the commit
       waits for their answers (2 warm; a block cannot undo another) ---- */
    for (int rows = 86; rows <= 300; rows += 214) {
        for (int k = 0; k < 3; k++) {
            n = (size_t)snprintf(big, sizeof big, "[");
            for (int i = 0; i < rows; i++)
                n += (size_t)snprintf(
                    big + n, sizeof big - n, "%s{\"id\":%d,\"name\":%s}",
                    i ? "," : "", 1000 + i,
                    k == 2 && i == rows - 1 ? "null" : "\"m\"");
            snprintf(big + n, sizeof big - n, "]");
            wpath(p, sizeof p, NULL);
            http_json("POST", p,
                      "Prefer: resolution=merge-duplicates, count=exact\r\n",
                      big, &r);
            if (k < 2) {
                EXPECT(&r, 201, "");
                snprintf(want, sizeof want, "*/%d", rows);
                assert_string_equal(hdr(&r, "content-range"), want);
            } else {
                /* the last row (in the last block) fails: NOT NULL */
                assert_int_equal(r.status, 400);
                assert_non_null(strstr(r.body, "\"code\":\"23502\""));
            }
            if (k)
                assert_int_equal(rts(&r), 2);
        }
        wpath(p, sizeof p, "id=gte.1000");
        http("DELETE", p, "Prefer: count=exact\r\n", &r);
        snprintf(want, sizeof want, "*/%d", rows);
        assert_string_equal(hdr(&r, "content-range"), want);
    }
    /* the failing body wrote nothing */
    w_rows("id", "id=gte.1000", &r);
    EXPECT(&r, 200, "[]");
    w_teardown(t);
}

/*
 * PUT, PostgREST's single-row upsert: the whole primary key as eq filters
 * (405 PGRST105 otherwise, 400 PGRST114 with limit/offset), the body's key
 * compared typed with the URL's in the block (400 PGRST115, nothing
 * written), 201 when the row was new and 200 when it was updated with
 * return=representation, 204 without; one round trip warm with the
 * commit, tx=rollback undoing it.
 */
static void test_rest_put(void **state) {
    target *t = *state;
    resp r;
    char p[512];
    w_setup(t);
    wpath(p, sizeof p, "id=eq.20&select=id,name,n");
    http_json("PUT", p, "Prefer: return=representation\r\n",
              "{\"id\":20,\"name\":\"put\"}", &r);
    /* new: 201; n not in the body: its default */
    EXPECT(&r, 201, "[{\"id\":20,\"name\":\"put\",\"n\":7}]");
    assert_string_equal(hdr(&r, "content-range"), "");
    assert_string_equal(hdr(&r, "preference-applied"), "return=representation");
    /* cold: FB4 2 (start + prepare; execute + fetch + commit), FB3 3 */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    http_json("PUT", p, "Prefer: return=representation\r\n",
              "{\"id\":20,\"name\":\"put2\"}", &r);
    EXPECT(&r, 200, "[{\"id\":20,\"name\":\"put2\",\"n\":7}]");
    /* warm: start, the block's execute with its row, commit: one write */
    assert_int_equal(rts(&r), 1);
    /* the object */
    http_json("PUT", p,
              "Prefer: return=representation\r\nAccept: "
              "application/vnd.pgrst.object+json\r\n",
              "{\"id\":20,\"name\":\"put3\"}", &r);
    EXPECT(&r, 200, "{\"id\":20,\"name\":\"put3\",\"n\":7}");
    assert_int_equal(rts(&r), 1);

    /* minimal: 204; only the body's columns are updated */
    wpath(p, sizeof p, "id=eq.20");
    http_json("PUT", p, NULL, "{\"id\":20,\"n\":1,\"name\":\"m\"}", &r);
    EXPECT(&r, 204, "");
    http_json("PUT", p, NULL, "{\"id\":20,\"n\":2,\"name\":\"m2\"}", &r);
    EXPECT(&r, 204, "");
    assert_int_equal(rts(&r), 1);
    /* a typed comparison: 021 is 21 as an INTEGER */
    wpath(p, sizeof p, "id=eq.021");
    http_json("PUT", p, NULL, "{\"id\":21,\"name\":\"typed\"}", &r);
    EXPECT(&r, 204, "");
    w_rows("id,name,n", "id=gte.20", &r);
    EXPECT(&r, 200,
           "[{\"id\":20,\"name\":\"m2\",\"n\":2},"
           "{\"id\":21,\"name\":\"typed\",\"n\":7}]");

    /* the body's key is not the URL's: 400 PGRST115, nothing written */
    wpath(p, sizeof p, "id=eq.22");
    http_json("PUT", p, NULL, "{\"id\":23,\"name\":\"x\"}", &r);
    EXPECT(&r, 400,
           "{\"code\":\"PGRST115\",\"message\":\"Payload values do not "
           "match URL in primary key column(s)\",\"details\":null,"
           "\"hint\":null}");
    http_json("PUT", p, NULL, "{\"id\":23,\"name\":\"x\"}", &r);
    assert_int_equal(r.status, 400);
    assert_int_equal(rts(&r), 1); /* found by the block, in the one write */
    http_json("PUT", p, NULL, "{\"name\":\"no key\"}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"PGRST115\""));
    assert_int_equal(rts(&r), -1); /* found before the database */
    w_rows("id", "id=in.(22,23)", &r);
    EXPECT(&r, 200, "[]");

    /* tx=rollback (db-tx-end = commit-allow-override): nothing kept */
    wpath(p, sizeof p, "id=eq.20");
    http_json("PUT", p, "Prefer: tx=rollback\r\n",
              "{\"id\":20,\"n\":3,\"name\":\"gone\"}", &r);
    EXPECT(&r, 204, "");
    assert_string_equal(hdr(&r, "preference-applied"), "tx=rollback");
    w_rows("name", "id=eq.20", &r);
    EXPECT(&r, 200, "[{\"name\":\"m2\"}]");
    /* an integrity error: NOT NULL, 23502 */
    http_json("PUT", p, NULL, "{\"id\":20,\"name\":null}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"23502\""));

    /* PostgREST's refusals, before the database */
    const char *const bad[] = {"name=eq.m2",    "id=eq.20&name=eq.m2",
                               "id=not.eq.20",  "id=in.(20)",
                               "or=(id.eq.20)", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wpath(p, sizeof p, bad[i]);
        http_json("PUT", p, NULL, "{\"id\":20,\"name\":\"x\"}", &r);
        EXPECT(&r, 405,
               "{\"code\":\"PGRST105\",\"message\":\"Filters must include "
               "all and only primary key columns with 'eq' "
               "operators\",\"details\":null,\"hint\":null}");
        assert_int_equal(rts(&r), -1);
    }
    wpath(p, sizeof p, "id=eq.20&limit=1");
    http_json("PUT", p, NULL, "{\"id\":20,\"name\":\"x\"}", &r);
    EXPECT(&r, 400,
           "{\"code\":\"PGRST114\",\"message\":\"limit/offset querystring "
           "parameters are not allowed for PUT\",\"details\":null,"
           "\"hint\":null}");
    w_teardown(t);
}
