/*
 * ffb-rest's settings against real Firebird 3 and 4 (included by
 * test_it.c after the JWT helpers): the JWT cache (jwt-cache-max-entries)
 * - a cached token is still refused once its exp (with the 30 s skew) has
 * passed - and with the cache off.
 */

static void test_rest_jwt_cache(void **state) {
    target *t = *state;
    char sql[256], role[40], lrole[40], claims[256], h[2400], p[256];
    resp r;
    ffb_conn *c = open_conn(t);
    snprintf(role, sizeof role, "R%dC", (int)getpid());
    snprintf(lrole, sizeof lrole, "r%dc", (int)getpid());
    snprintf(sql, sizeof sql, "CREATE ROLE %s", role);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT %s TO USER SYSDBA", role);
    exec_sql(c, sql);
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, "PGRST_JWT_SECRET=" JWT_SECRET "\n"), 0);
    path(p, sizeof p, tname, "select=id&id=eq.1");

    /* a token that expires in 2 s (exp 28 s ago, PostgREST's 30 s skew):
       accepted, then from the cache */
    int64_t exp = (int64_t)time(NULL) - 28;
    snprintf(claims, sizeof claims, "{\"role\":\"%s\",\"exp\":%lld}", lrole,
             (long long)exp);
    bearer("HS256", claims, JWT_SECRET, h, sizeof h);
    for (int i = 0; i < 2; i++) {
        http("GET", p, h, &r);
        EXPECT(&r, 200, "[{\"id\":1}]");
    }
    /* once exp + 30 s has passed, the cached token is refused as expired */
    while ((int64_t)time(NULL) - 30 <= exp)
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    for (int i = 0; i < 2; i++) {
        http("GET", p, h, &r);
        EXPECT(&r, 401,
               "{\"code\":\"PGRST303\",\"message\":\"JWT expired\",\"details\":"
               "null,\"hint\":null}");
        assert_string_equal(hdr(&r, "www-authenticate"),
                            "Bearer error=\"invalid_token\", "
                            "error_description=\"JWT expired\"");
        assert_int_equal(rts(&r), -1); /* refused before the database */
    }
    /* a token without exp, cached: the same answer every time */
    snprintf(claims, sizeof claims, "{\"role\":\"%s\"}", lrole);
    bearer("HS256", claims, JWT_SECRET, h, sizeof h);
    for (int i = 0; i < 3; i++) {
        http("GET", p, h, &r);
        EXPECT(&r, 200, "[{\"id\":1}]");
        if (i)
            assert_int_equal(rts(&r), 1); /* warm, the token costs nothing */
    }

    /* the cache off: tokens verified every time, the same answers */
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, "PGRST_JWT_SECRET=" JWT_SECRET "\n"
                                     "PGRST_JWT_CACHE_MAX_ENTRIES=0\n"),
                     0);
    for (int i = 0; i < 2; i++) {
        http("GET", p, h, &r);
        EXPECT(&r, 200, "[{\"id\":1}]");
    }
    assert_int_equal(stop_server(), 0);
    snprintf(sql, sizeof sql, "DROP ROLE %s", role);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}
