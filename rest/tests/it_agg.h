/*
 * ffb-rest's aggregates against real Firebird 3 and 4 (included by
 * test_it.c after it_write.h, whose helpers it uses): PGRST123 with
 * db-aggregates-enabled = false (the default), then, with a server
 * restarted with it true: count(), sum/avg/min/max/count of columns,
 * renames, casts before and after the aggregate, the automatic GROUP BY,
 * filters, order on a grouped column, count=exact of the groups, and the
 * round trips of each (Server-Timing).
 *
 * The rows of setup(): id 1..5, price 12.50 NULL 1.05 7 NULL, qty 3 NULL
 * 1 2 5, ok TRUE NULL FALSE TRUE FALSE.
 */

static void test_rest_aggregates(void **state) {
    target *t = *state;
    resp r;
    char p[512];
    /* off (PostgREST's default): refused before the database */
    path(p, sizeof p, tname, "select=ok,count()");
    http("GET", p, NULL, &r);
    EXPECT(&r, 400,
           "{\"code\":\"PGRST123\",\"message\":\"Use of aggregate functions "
           "is not allowed\",\"details\":null,\"hint\":null}");
    assert_int_equal(rts(&r), -1); /* no connection was taken */
    path(p, sizeof p, tname, "select=price.sum()");
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "PGRST123"));

    w_restart(t, "PGRST_DB_AGGREGATES_ENABLED=true");
    /* grouped by ok (nullable: NULLS LAST as PostgreSQL); the average of
       a NUMERIC(9,2) exact (Firebird's own would truncate to 2 places) */
    path(p, sizeof p, tname,
         "select=ok,count(),price.avg(),qty.sum()&order=ok");
    static const char grouped[] =
        "[{\"ok\":false,\"count\":2,\"avg\":1.05,\"sum\":6},"
        "{\"ok\":true,\"count\":2,\"avg\":9.75,\"sum\":5},"
        "{\"ok\":null,\"count\":1,\"avg\":null,\"sum\":null}]";
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, grouped);
    /* cold: FB4 2 (start + prepare; execute + fetch + commit), FB3 3 (its
       prepare waits for the start's answer) */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    assert_string_equal(hdr(&r, "content-range"), "0-2/*");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, grouped);
    /* warm: start, execute with its fetch, commit in one write */
    assert_int_equal(rts(&r), 1);

    /* no GROUP BY: one row; renames, a cast of the aggregate, the
       average of an integer column (2 for 1, 2, 3, 5 would be 2 in
       Firebird: 2.75 here), min/max keep the column's type */
    path(p, sizeof p, tname,
         "select=n:count()::text,total:price.sum(),lo:price.min(),"
         "hi:id.max(),qty.avg(),priced:price.count()");
    static const char one[] = "[{\"n\":\"5\",\"total\":20.55,\"lo\":1.05,"
                              "\"hi\":5,\"avg\":2.75,\"priced\":3}]";
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, one);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, one);
    assert_int_equal(rts(&r), 1);

    /* a cast before the aggregate; a filter (WHERE before GROUP BY) */
    path(p, sizeof p, tname, "select=s:qty::numeric(10,2).sum()&price=gt.5");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"s\":5.00}]");
    path(p, sizeof p, tname, "select=count()&id=gt.9");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"count\":0}]");

    /* count=exact counts the groups; the page and the count in the same
       write: warm 1 */
    path(p, sizeof p, tname, "select=ok,count()&order=ok.desc&limit=2");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 206, "[{\"ok\":null,\"count\":1},{\"ok\":true,\"count\":2}]");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 206, "[{\"ok\":null,\"count\":1},{\"ok\":true,\"count\":2}]");
    assert_string_equal(hdr(&r, "content-range"), "0-1/3");
    assert_int_equal(rts(&r), 1);

    /* order on a column that is not grouped: Firebird's own error */
    path(p, sizeof p, tname, "select=ok,count()&order=name");
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"42000\""));
    /* an unknown column, an unknown function, an embed */
    path(p, sizeof p, tname, "select=nope.sum()");
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"42703\""));
    path(p, sizeof p, tname, "select=price.median()");
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST100\""));
    w_restart(t, NULL);
}

/* SET STATISTICS INDEX of <table>'s primary key (its name is made by
   Firebird: RDB$PRIMARYn). */
static void c_set_statistics(ffb_conn *c, const char *table) {
    char sql[768];
    snprintf(sql, sizeof sql,
             "EXECUTE BLOCK AS DECLARE N VARCHAR(63); BEGIN SELECT "
             "RDB$INDEX_NAME FROM RDB$RELATION_CONSTRAINTS WHERE "
             "RDB$RELATION_NAME = '%s' AND RDB$CONSTRAINT_TYPE = 'PRIMARY "
             "KEY' INTO :N; EXECUTE STATEMENT 'SET STATISTICS INDEX ' || "
             "TRIM(N); END",
             table);
    exec_sql(c, sql);
}

static void c_insert(ffb_conn *c, const char *table, int from, int to) {
    char sql[512];
    snprintf(sql, sizeof sql,
             "EXECUTE BLOCK AS DECLARE I INTEGER = %d; BEGIN WHILE (I <= %d) "
             "DO BEGIN INSERT INTO %s VALUES (:I, MOD(:I, 3)); I = I + 1; END "
             "END",
             from, to, table);
    exec_sql(c, sql);
}

/*
 * Prefer: count=planned and count=estimated on a table of its own
 * (<T>_C, 5 rows, then 30, then 40) with db-max-rows = 10. The estimate is
 * the primary key index's selectivity (RDB$STATISTICS, rows =
 * 1/selectivity), read in the same write as the page: 0 until statistics
 * are computed (the index was built on an empty table), so "*"; after SET
 * STATISTICS the rows then, whatever came since (an estimate); estimated
 * is the count up to db-max-rows, else the larger of the count of
 * db-max-rows + 1 rows and the estimate, as PostgREST.
 */
static void test_rest_count_planned(void **state) {
    target *t = *state;
    resp r;
    char sql[256], tc[80], tcl[80], p[512];
    ffb_conn *c = open_conn(t);
    snprintf(tc, sizeof tc, "%s_C", t->table);
    snprintf(tcl, sizeof tcl, "%s_c", tname);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, G INTEGER)",
             tc);
    exec_sql(c, sql);
    c_insert(c, tc, 1, 5);
    w_restart(t, "PGRST_DB_MAX_ROWS=10");

    path(p, sizeof p, tcl, "select=id&order=id&limit=2");
    http("GET", p, "Prefer: count=planned\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":1},{\"id\":2}]");
    /* cold: the page's and the estimate's prepares in one write: FB4 2,
       FB3 3 (its prepares wait for the start's answer) */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    assert_string_equal(hdr(&r, "content-range"), "0-1/*");
    assert_string_equal(hdr(&r, "preference-applied"), "count=planned");
    http("GET", p, "Prefer: count=planned\r\n", &r);
    assert_string_equal(hdr(&r, "content-range"), "0-1/*");
    assert_int_equal(rts(&r), 1); /* page, estimate and commit: one write */

    c_set_statistics(c, tc); /* 5 rows */
    http("GET", p, "Prefer: count=planned\r\n", &r);
    EXPECT(&r, 206, "[{\"id\":1},{\"id\":2}]");
    assert_string_equal(hdr(&r, "content-range"), "0-1/5");
    assert_int_equal(rts(&r), 1);

    c_insert(c, tc, 6, 30); /* the statistics still say 5 */
    http("GET", p, "Prefer: count=planned\r\n", &r);
    assert_string_equal(hdr(&r, "content-range"), "0-1/5");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    assert_string_equal(hdr(&r, "content-range"), "0-1/30");
    /* estimated, more than db-max-rows: max(11 counted, 5 estimated) */
    path(p, sizeof p, tcl, "select=id&id=gt.3&order=id&limit=2");
    http("GET", p, "Prefer: count=estimated\r\n", &r);
    EXPECT(&r, 206, "[{\"id\":4},{\"id\":5}]");
    assert_string_equal(hdr(&r, "content-range"), "0-1/11");
    assert_string_equal(hdr(&r, "preference-applied"), "count=estimated");
    http("GET", p, "Prefer: count=estimated\r\n", &r);
    /* warm: page, the count of at most 11 rows, the estimate, commit */
    assert_int_equal(rts(&r), 1);
    /* 5 rows are at most db-max-rows: the count */
    path(p, sizeof p, tcl, "select=id&id=lte.5&order=id&limit=2");
    http("GET", p, "Prefer: count=estimated\r\n", &r);
    EXPECT(&r, 206, "[{\"id\":1},{\"id\":2}]");
    assert_string_equal(hdr(&r, "content-range"), "0-1/5");

    c_set_statistics(c, tc); /* 30 rows */
    path(p, sizeof p, tcl, "select=id&id=gt.3&order=id&limit=2");
    http("GET", p, "Prefer: count=estimated\r\n", &r);
    assert_string_equal(hdr(&r, "content-range"), "0-1/30");
    assert_int_equal(rts(&r), 1);
    /* planned whatever the filters (an upper bound, while fresh) */
    path(p, sizeof p, tcl, "select=id&id=lte.2&order=id");
    http("GET", p, "Prefer: count=planned\r\n", &r);
    EXPECT(&r, 206, "[{\"id\":1},{\"id\":2}]");
    assert_string_equal(hdr(&r, "content-range"), "0-1/30");
    c_insert(c, tc, 31, 40);
    http("GET", p, "Prefer: count=planned\r\n", &r);
    assert_string_equal(hdr(&r, "content-range"), "0-1/30");
    path(p, sizeof p, tcl, "select=id&order=id&limit=2");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    assert_string_equal(hdr(&r, "content-range"), "0-1/40");

    w_stop();
    snprintf(sql, sizeof sql, "DROP TABLE %s", tc);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}
