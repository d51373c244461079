/*
 * ffb-rest's resource embedding against real Firebird 3.0 and 4.0: to-one,
 * to-many, many-to-many through a junction, hints, the ambiguity and
 * not-found errors, !inner, embedded filters/order/limit/offset, spread,
 * and three levels of nesting - each with its exact round trips (a warm
 * GET with embeds at any depth is 1: every level's statement is
 * restricted by a sub-select of its parent's rows, so all of them, the
 * transaction's start and its commit leave in one write).
 *
 * The HTTP client and the server's start and stop are test_it.c's.
 *
 *   test_rest_embed <path of ffb-rest> [LeakSanitizer suppressions]
 */
#define REST_IT_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"
#include "test_it.c"

/* REST_EMBED_STRATEGY=per-level runs the suite with db-embed-strategy =
   per-level: a round trip per depth instead of one in all */
static int per_level;

/* the exposed names of the tables */
static char au[80], bk[80], rv[80], tg[80], bt[80], bn[80], fkba[80];

static int e_setup(void **state) {
    target *t = *state;
    char sql[1024];
    ffb_conn *c = open_conn(t);
    const char *T = t->table;
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_AU (ID INTEGER NOT NULL PRIMARY KEY, NAME "
             "VARCHAR(20) NOT NULL)",
             T);
    exec_sql(c, sql);
    /* two foreign keys to the authors: embedding books from authors is
       ambiguous without a hint */
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_BK (ID INTEGER NOT NULL PRIMARY KEY, TITLE "
             "VARCHAR(20) NOT NULL, AUTHOR_ID INTEGER CONSTRAINT FK_%s_BA "
             "REFERENCES %s_AU (ID), EDITOR_ID INTEGER CONSTRAINT FK_%s_BE "
             "REFERENCES %s_AU (ID))",
             T, T, T, T, T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_RV (ID INTEGER NOT NULL PRIMARY KEY, BOOK_ID "
             "INTEGER NOT NULL REFERENCES %s_BK (ID), STARS INTEGER)",
             T, T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_TG (ID INTEGER NOT NULL PRIMARY KEY, NAME "
             "VARCHAR(20) NOT NULL)",
             T);
    exec_sql(c, sql);
    /* the junction: both foreign keys inside its primary key */
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_BT (BOOK_ID INTEGER NOT NULL REFERENCES %s_BK "
             "(ID), TAG_ID INTEGER NOT NULL REFERENCES %s_TG (ID), PRIMARY "
             "KEY (BOOK_ID, TAG_ID))",
             T, T, T);
    exec_sql(c, sql);
    /* a foreign key of two columns, to the junction's primary key */
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_BN (ID INTEGER NOT NULL PRIMARY KEY, B INTEGER "
             "NOT NULL, T INTEGER NOT NULL, NOTE VARCHAR(10), FOREIGN KEY (B, "
             "T) REFERENCES %s_BT (BOOK_ID, TAG_ID))",
             T, T);
    exec_sql(c, sql);
    static const char *const rows[] = {"_AU VALUES (1, 'Ann')",
                                       "_AU VALUES (2, 'Bob')",
                                       "_AU VALUES (3, 'Cyd')",
                                       "_BK VALUES (1, 'Alpha', 1, 2)",
                                       "_BK VALUES (2, 'Beta', 1, NULL)",
                                       "_BK VALUES (3, 'Gamma', 2, 1)",
                                       "_BK VALUES (4, 'Delta', NULL, NULL)",
                                       "_RV VALUES (1, 1, 5)",
                                       "_RV VALUES (2, 1, 3)",
                                       "_RV VALUES (3, 1, 4)",
                                       "_RV VALUES (4, 3, 2)",
                                       "_TG VALUES (1, 'fun')",
                                       "_TG VALUES (2, 'long')",
                                       "_TG VALUES (3, 'old')",
                                       "_BT VALUES (1, 1)",
                                       "_BT VALUES (1, 2)",
                                       "_BT VALUES (3, 2)",
                                       "_BN VALUES (1, 1, 2, 'n1')",
                                       "_BN VALUES (2, 1, 2, 'n2')",
                                       "_BN VALUES (3, 3, 2, 'n3')"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO %s%s", T, rows[i]);
        exec_sql(c, sql);
    }
    ffb_conn_close(c);
    ffb_conn_free(c);
    snprintf(au, sizeof au, "%s_au", T);
    snprintf(bk, sizeof bk, "%s_bk", T);
    snprintf(rv, sizeof rv, "%s_rv", T);
    snprintf(tg, sizeof tg, "%s_tg", T);
    snprintf(bt, sizeof bt, "%s_bt", T);
    snprintf(bn, sizeof bn, "%s_bn", T);
    lower(bt);
    lower(bn);
    snprintf(fkba, sizeof fkba, "fk_%s_ba", T);
    lower(au);
    lower(bk);
    lower(rv);
    lower(tg);
    lower(fkba);
    /* answers up to 100 rows in one fetch: the probe of test_it.c's
       server (3) would make most reads here longer than one */
    return start_server(t, "PGRST_DB_PROBE_ROWS=100");
}

static int e_teardown(void **state) {
    target *t = *state;
    char sql[256];
    static const char *const drop[] = {"_BN", "_BT", "_TG",
                                       "_RV", "_BK", "_AU"};
    int st = stop_server();
    if (st != 0) {
        fprintf(stderr, "ffb-rest exited with %d; log:\n%s\n", st, srv.log);
        server_exit_failed = 1;
    }
    ffb_conn *c = open_conn(t);
    for (size_t i = 0; i < 6; i++) {
        snprintf(sql, sizeof sql, "DROP TABLE %s%s", t->table, drop[i]);
        exec_sql(c, sql);
    }
    ffb_conn_close(c);
    ffb_conn_free(c);
    return st == 0 ? 0 : -1;
}

/* GET `p` twice: cold, then warm; both answers must be `want`.
   Pipelined (the default): cold, the statements prepared with the
   transaction's start: FB4 2 round trips, FB3 3 as it prepares only once
   the start is answered; warm 1: the start, every level's execute and
   fetch and the commit in one write.
   Per level: warm 1 + `depth` (the top level, then each depth restricted
   to its parent's keys; the commit rides with the deepest). */
static void get2d(const target *t, const char *p, const char *hdrs, int status,
                  const char *want, int depth) {
    resp r;
    http("GET", p, hdrs, &r);
    EXPECT(&r, status, want);
    /* per level, a depth's text depends on its number of keys (bucketed)
       and an earlier request may have prepared it: cold is not exact */
    if (!per_level)
        assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    http("GET", p, hdrs, &r);
    EXPECT(&r, status, want);
    assert_int_equal(rts(&r), per_level ? 1 + depth : 1);
}

static void get2(const target *t, const char *p, const char *hdrs, int status,
                 const char *want) {
    get2d(t, p, hdrs, status, want, 1);
}

static void test_embed_to_one(void **state) {
    target *t = *state;
    char p[512], w[1024];
    snprintf(p, sizeof p, "/%s?select=id,stars,%s(title)&order=id", rv, bk);
    snprintf(w, sizeof w,
             "[{\"id\":1,\"stars\":5,\"%s\":{\"title\":\"Alpha\"}},"
             "{\"id\":2,\"stars\":3,\"%s\":{\"title\":\"Alpha\"}},"
             "{\"id\":3,\"stars\":4,\"%s\":{\"title\":\"Alpha\"}},"
             "{\"id\":4,\"stars\":2,\"%s\":{\"title\":\"Gamma\"}}]",
             bk, bk, bk, bk);
    get2(t, p, NULL, 200, w);
    /* no match: null; hint by constraint and by column */
    snprintf(p, sizeof p,
             "/%s?select=id,a:%s!%s(name),e:%s!editor_id(name)&id=in.(1,3,4)",
             bk, au, fkba, au);
    get2(t, p, NULL, 200,
         "[{\"id\":1,\"a\":{\"name\":\"Ann\"},\"e\":{\"name\":\"Bob\"}},"
         "{\"id\":3,\"a\":{\"name\":\"Bob\"},\"e\":{\"name\":\"Ann\"}},"
         "{\"id\":4,\"a\":null,\"e\":null}]");
    /* the top level ordered by a to-one embed's column (NULLs first on
       desc, as PostgreSQL), paged */
    snprintf(p, sizeof p,
             "/%s?select=id,a:%s!%s(name)&order=a(name).desc,id&limit=3", bk,
             au, fkba);
    get2(t, p, NULL, 200,
         "[{\"id\":4,\"a\":null},{\"id\":3,\"a\":{\"name\":\"Bob\"}},"
         "{\"id\":1,\"a\":{\"name\":\"Ann\"}}]");
    /* spread: the author's columns in the review's object */
    snprintf(p, sizeof p, "/%s?select=stars,...%s(title)&id=eq.4", rv, bk);
    get2(t, p, NULL, 200, "[{\"stars\":2,\"title\":\"Gamma\"}]");
    /* singular */
    snprintf(p, sizeof p, "/%s?select=id,stars,b:%s(title)&id=eq.3", rv, bk);
    get2(t, p, "Accept: application/vnd.pgrst.object+json\r\n", 200,
         "{\"id\":3,\"stars\":4,\"b\":{\"title\":\"Alpha\"}}");
}

static void test_embed_to_many(void **state) {
    target *t = *state;
    char p[512];
    snprintf(p, sizeof p, "/%s?select=id,r:%s(stars)&r.order=stars.desc", bk,
             rv);
    get2(t, p, NULL, 200,
         "[{\"id\":1,\"r\":[{\"stars\":5},{\"stars\":4},{\"stars\":3}]},"
         "{\"id\":2,\"r\":[]},{\"id\":3,\"r\":[{\"stars\":2}]},"
         "{\"id\":4,\"r\":[]}]");
    /* the top level paged: the children of that page only */
    snprintf(p, sizeof p,
             "/%s?select=id,r:%s(stars)&order=title.desc&limit=2&r.order=stars",
             bk, rv);
    get2(t, p, NULL, 200,
         "[{\"id\":3,\"r\":[{\"stars\":2}]},{\"id\":4,\"r\":[]}]");
    /* hints on to-many: the same two tables by either key */
    snprintf(p, sizeof p,
             "/%s?select=id,w:%s!%s(id),e:%s!editor_id(id)&w.order=id&e."
             "order=id",
             au, bk, fkba, bk);
    get2(t, p, NULL, 200,
         "[{\"id\":1,\"w\":[{\"id\":1},{\"id\":2}],\"e\":[{\"id\":3}]},"
         "{\"id\":2,\"w\":[{\"id\":3}],\"e\":[{\"id\":1}]},"
         "{\"id\":3,\"w\":[],\"e\":[]}]");
}

static void test_embed_m2m(void **state) {
    target *t = *state;
    char p[512];
    snprintf(p, sizeof p, "/%s?select=id,t:%s(name)&t.order=name", bk, tg);
    get2(t, p, NULL, 200,
         "[{\"id\":1,\"t\":[{\"name\":\"fun\"},{\"name\":\"long\"}]},"
         "{\"id\":2,\"t\":[]},{\"id\":3,\"t\":[{\"name\":\"long\"}]},"
         "{\"id\":4,\"t\":[]}]");
    /* and back */
    snprintf(p, sizeof p, "/%s?select=name,b:%s(id)&b.order=id&id=lte.2", tg,
             bk);
    get2(t, p, NULL, 200,
         "[{\"name\":\"fun\",\"b\":[{\"id\":1}]},"
         "{\"name\":\"long\",\"b\":[{\"id\":1},{\"id\":3}]}]");
}

/* A foreign key of two columns (to the junction's primary key): both
   directions; per level keeps the sub-select for such keys (same rt). */
static void test_embed_two_column_key(void **state) {
    target *t = *state;
    char p[512];
    snprintf(p, sizeof p,
             "/%s?select=book_id,tag_id,n:%s(note)&n.order=note&order=book_id,"
             "tag_id",
             bt, bn);
    get2(t, p, NULL, 200,
         "[{\"book_id\":1,\"tag_id\":1,\"n\":[]},"
         "{\"book_id\":1,\"tag_id\":2,\"n\":[{\"note\":\"n1\"},{\"note\":"
         "\"n2\"}]},{\"book_id\":3,\"tag_id\":2,\"n\":[{\"note\":\"n3\"}]}]");
    snprintf(p, sizeof p, "/%s?select=note,j:%s(book_id)&id=gte.2", bn, bt);
    get2(t, p, NULL, 200,
         "[{\"note\":\"n2\",\"j\":{\"book_id\":1}},"
         "{\"note\":\"n3\",\"j\":{\"book_id\":3}}]");
}

static void test_embed_errors(void **state) {
    (void)state;
    resp r;
    char p[512];
    /* two foreign keys from books to authors: 300 PGRST201, before any
       SQL (no Server-Timing) */
    snprintf(p, sizeof p, "/%s?select=name,%s(title)", au, bk);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 300);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST201\""));
    assert_non_null(strstr(r.body, "one-to-many via FK_"));
    assert_int_equal(rts(&r), -1);
    /* no relationship: 400 PGRST200 */
    snprintf(p, sizeof p, "/%s?select=name,%s(name)", au, tg);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST200\""));
    assert_int_equal(rts(&r), -1);
    /* a hint that names nothing */
    snprintf(p, sizeof p, "/%s?select=name,%s!nope(title)", au, bk);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST200\""));
    /* a filter on an embed that select does not have */
    snprintf(p, sizeof p, "/%s?select=id&x.id=eq.1", bk);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST108\""));
    /* deeper than server-max-embed-depth (8) */
    snprintf(p, sizeof p, "/%s?select=a(b(c(d(e(f(g(h(i(*)))))))))", bk);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "embeds nest deeper than 8"));
}

static void test_embed_inner_filters(void **state) {
    target *t = *state;
    char p[512];
    /* !inner: only books with a review of 4 stars or more */
    snprintf(p, sizeof p,
             "/%s?select=id,r:%s!inner(stars)&r.stars=gte.4&r.order=stars", bk,
             rv);
    get2(t, p, NULL, 200, "[{\"id\":1,\"r\":[{\"stars\":4},{\"stars\":5}]}]");
    /* !inner with a page and a count: the count rides in the same write */
    snprintf(p, sizeof p,
             "/%s?select=id,a:%s!%s!inner(name)&a.name=eq.Ann&limit=1", bk, au,
             fkba);
    resp r;
    get2(t, p, "Prefer: count=exact\r\n", 206,
         "[{\"id\":1,\"a\":{\"name\":\"Ann\"}}]");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    assert_string_equal(hdr(&r, "content-range"), "0-0/2");
    /* a filter without !inner: the embed is empty, the parent stays */
    snprintf(p, sizeof p, "/%s?select=id,r:%s(stars)&r.stars=gt.4&id=lte.2", bk,
             rv);
    get2(t, p, NULL, 200,
         "[{\"id\":1,\"r\":[{\"stars\":5}]},{\"id\":2,\"r\":[]}]");
    /* embedded limit and offset: per parent */
    snprintf(p, sizeof p,
             "/%s?select=id,r:%s(stars)&r.order=stars.desc&r.limit=2&r.offset="
             "1&id=lte.3",
             bk, rv);
    get2(t, p, NULL, 200,
         "[{\"id\":1,\"r\":[{\"stars\":4},{\"stars\":3}]},{\"id\":2,\"r\":[]},"
         "{\"id\":3,\"r\":[]}]");
}

static void test_embed_nested(void **state) {
    target *t = *state;
    char p[1024];
    /* three levels: authors -> books -> reviews -> book */
    snprintf(p, sizeof p,
             "/%s?select=name,b:%s!%s(title,r:%s(stars,k:%s(id)))&b.order="
             "title&b.r.order=stars&id=eq.1",
             au, bk, fkba, rv, bk);
    get2d(t, p, NULL, 200,
          "[{\"name\":\"Ann\",\"b\":[{\"title\":\"Alpha\",\"r\":[{\"stars\":3,"
          "\"k\":{\"id\":1}},{\"stars\":4,\"k\":{\"id\":1}},{\"stars\":5,"
          "\"k\":{\"id\":1}}]},{\"title\":\"Beta\",\"r\":[]}]}]",
          3);
    /* siblings at two levels, a filter at the second */
    snprintf(
        p, sizeof p,
        "/%s?select=id,t:%s(name),r:%s(stars,b:%s(title,t:%s(name)))&r."
        "stars=lt.4&r.order=stars&t.order=name&r.b.t.order=name&id=in.(1,3)",
        bk, tg, rv, bk, tg);
    get2d(t, p, NULL, 200,
          "[{\"id\":1,\"t\":[{\"name\":\"fun\"},{\"name\":\"long\"}],\"r\":[{"
          "\"stars\":3,\"b\":{\"title\":\"Alpha\",\"t\":[{\"name\":\"fun\"},{"
          "\"name\":\"long\"}]}}]},{\"id\":3,\"t\":[{\"name\":\"long\"}],\"r\":"
          "[{\"stars\":2,\"b\":{\"title\":\"Gamma\",\"t\":[{\"name\":\"long\"}]"
          "}}]}]",
          3);
}

/* More rows than db-probe-rows without a limit: the probe read (1),
   then the read again without it: every level executed (1) and the commit
   once all rows are in (1) = 3 warm, as a read without embeds. */
static void test_embed_probe(void **state) {
    target *t = *state;
    stop_server();
    assert_int_equal(start_server(t, "PGRST_DB_PROBE_ROWS=3"), 0);
    resp r;
    char p[512];
    snprintf(p, sizeof p, "/%s?select=id,b:%s(id)", rv, bk);
    const char *want =
        "[{\"id\":1,\"b\":{\"id\":1}},{\"id\":2,\"b\":{\"id\":1}},"
        "{\"id\":3,\"b\":{\"id\":1}},{\"id\":4,\"b\":{\"id\":3}}]";
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, want);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, want);
    /* per level: the probe read and its commit (2: the commit waits for
       the level below, which is not read once the probe overflowed), then
       the top level (1) and the level with the commit (1) */
    assert_int_equal(rts(&r), per_level ? 4 : 3);
    /* HEAD: the same statements, no body */
    http("HEAD", p, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(rts(&r), per_level ? 4 : 3);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embed_to_one),
        cmocka_unit_test(test_embed_to_many),
        cmocka_unit_test(test_embed_m2m),
        cmocka_unit_test(test_embed_two_column_key),
        cmocka_unit_test(test_embed_errors),
        cmocka_unit_test(test_embed_inner_filters),
        cmocka_unit_test(test_embed_nested),
        cmocka_unit_test(test_embed_probe),
    };
    const char *strategy = getenv("REST_EMBED_STRATEGY");
    if (strategy && strcmp(strategy, "per-level") == 0) {
        per_level = 1;
        setenv("PGRST_DB_EMBED_STRATEGY", "per-level", 1); /* inherited */
    }
    return rest_it_run(argc, argv, "test_rest_embed", "RESTE", tests,
                       sizeof tests / sizeof tests[0], e_setup, e_teardown);
}
