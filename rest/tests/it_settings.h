/*
 * ffb-rest's settings against real Firebird 3 and 4 (included by
 * test_it.c after the JWT helpers): the JWT cache (jwt-cache-max-entries)
 * - a cached token is still refused once its exp (with the 30 s skew) has
 * passed - and with the cache off; db-prepared-statements (false: no
 * statement kept, every request cold) and db-prepared-statements-max;
 * server-request-timeout (a silent client and an idle kept-alive
 * connection are closed after it).
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

/* ms until the server closes `fd` (read gives 0), at most 10 s; -1 when
   it did not. */
static int64_t ms_to_close(int fd) {
    char buf[4096];
    int64_t t0 = now_ms();
    while (now_ms() - t0 < 10000) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 200) < 0)
            return -1;
        if (p.revents) {
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0)
                return now_ms() - t0;
        }
    }
    return -1;
}

static void test_rest_settings(void **state) {
    target *t = *state;
    resp r;
    char p[256], q[256];
    int cold = t->version == 3 ? 3 : 2; /* FB3 prepares after the start */
    path(p, sizeof p, tname, "select=id&id=eq.2");
    path(q, sizeof q, tname, "select=name&id=eq.2");

    /* db-prepared-statements = false (PostgREST's key): nothing is kept,
       so the same read is cold every time */
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, "PGRST_DB_PREPARED_STATEMENTS=false\n"),
                     0);
    for (int i = 0; i < 3; i++) {
        http("GET", p, NULL, &r);
        EXPECT(&r, 200, "[{\"id\":2}]");
        assert_int_equal(rts(&r), cold);
    }

    /* db-prepared-statements-max = 1: one text kept; another one takes
       its place */
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, "PGRST_DB_PREPARED_STATEMENTS_MAX=1\n"),
                     0);
    http("GET", p, NULL, &r);
    assert_int_equal(rts(&r), cold);
    http("GET", p, NULL, &r);
    assert_int_equal(rts(&r), 1); /* kept */
    http("GET", q, NULL, &r);
    EXPECT(&r, 200, "[{\"name\":\"Beta\"}]");
    assert_int_equal(rts(&r), cold);
    http("GET", q, NULL, &r);
    assert_int_equal(rts(&r), 1);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":2}]");
    /* p left the cache; libfastfb remembers its formats (4 x the cache
       size), so its prepare rides with its execute on the handle p left
       spare: 1, on FB3 too (the lazy start is named 0xFFFF by the
       prepare, nothing being allocated behind it) */
    assert_int_equal(rts(&r), 1);

    /* server-request-timeout = 1: a client that sends nothing, and a
       kept-alive connection idle after an answer, are closed after 1 s
       (h2o 2.2 has one timer for both) */
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, "PGRST_SERVER_REQUEST_TIMEOUT=1\n"), 0);
    int fd = connect_to(srv.port);
    assert_true(fd >= 0);
    int64_t ms = ms_to_close(fd);
    close(fd);
    fprintf(stderr, "silent client closed after %lld ms\n", (long long)ms);
    assert_true(ms >= 900 && ms < 3000);
    fd = connect_to(srv.port);
    assert_true(fd >= 0);
    char req[512];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", p);
    assert_int_equal(write(fd, req, (size_t)n), n);
    ms = ms_to_close(fd); /* the answer, then the idle close */
    close(fd);
    fprintf(stderr, "idle kept-alive connection closed after %lld ms\n",
            (long long)ms);
    assert_true(ms >= 900 && ms < 3000);
    /* a half-sent request: the same */
    fd = connect_to(srv.port);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "GET / HTTP/1.1\r\nHo", 18), 18);
    ms = ms_to_close(fd);
    close(fd);
    fprintf(stderr, "half-sent request closed after %lld ms\n", (long long)ms);
    assert_true(ms >= 900 && ms < 3000);
    /* the server serves on */
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":2}]");

    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, NULL), 0);
}
