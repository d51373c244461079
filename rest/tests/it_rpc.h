/*
 * RPC reads of selectable procedures against real Firebird 3 and 4
 * (included by test_it.c after test_rest_rpc's helpers): a procedure read
 * as a table - filters, select with renames, order, limit/offset, counts,
 * singular - and `@returns <table>` in its description, which embeds as a
 * read of that table does (PostgREST's k6 RPCGETSingle and
 * RPCGETSingleEmbed, spec A17.2), one round trip warm; a POST with a
 * query string; Prefer: params=single-object.
 *
 * Data: artists 1..10 ("Artist n"), albums 1..20 (album a by artist
 * a % 10 + 1, "Album a"), two tracks per album (id a*10+k, "T a.k",
 * genre k), genres 1 Rock, 2 Jazz.
 */

/* `fmt` with every %s the table prefix. */
static void rr_sql(ffb_conn *c, const char *fmt, const char *T) {
    char sql[1024];
    snprintf(sql, sizeof sql, fmt, T, T, T, T, T, T, T);
    exec_sql(c, sql);
}

static const char *const rr_drops[] = {
    "DROP PROCEDURE %s_ECHO",       "DROP PROCEDURE %s_BLOBS",
    "DROP PROCEDURE %s_RET_ALBUMS", "DROP PROCEDURE %s_RET_ARTISTS",
    "DROP TABLE %s_TRACK",          "DROP TABLE %s_ALBUM",
    "DROP TABLE %s_GENRE",          "DROP TABLE %s_ARTIST"};

/* What a failed run left behind, dropped (errors ignored). */
static void rr_drop_quiet(ffb_conn *c, const char *T) {
    for (size_t i = 0; i < sizeof rr_drops / sizeof rr_drops[0]; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, rr_drops[i], T);
        exec_sql_quiet(c, sql);
    }
}

/* The JSON of album `a` with its tracks (ordered) and their genres. */
static void rr_album(char *out, size_t n, const char *tl, int a) {
    int k = snprintf(out, n,
                     "{\"album_id\":%d,\"title\":\"Album %d\",\"artist_id\":%d,"
                     "\"%s_track\":[",
                     a, a, a % 10 + 1, tl);
    for (int g = 1; g <= 2; g++)
        k += snprintf(out + k, n - (size_t)k,
                      "%s{\"track_id\":%d,\"name\":\"T %d.%d\",\"album_id\":%d,"
                      "\"genre_id\":%d,\"%s_genre\":{\"genre_id\":%d,"
                      "\"name\":\"%s\"}}",
                      g > 1 ? "," : "", a * 10 + g, a, g, a, g, tl, g,
                      g == 1 ? "Rock" : "Jazz");
    snprintf(out + k, n - (size_t)k, "]}");
}

static void test_rest_rpc_read(void **state) {
    target *t = *state;
    resp r;
    char p[600], want[4096], a1[1024], a2[1024];
    const char *T = t->table, *tl = tname;
    int cold = t->version == 3 ? 3 : 2; /* FB3 prepares after the start */
    ffb_conn *c = open_conn(t);
    assert_int_equal(stop_server(), 0);
    rr_drop_quiet(c, T);
    rr_sql(c,
           "CREATE TABLE %s_ARTIST (ARTIST_ID INTEGER NOT NULL PRIMARY KEY, "
           "NAME VARCHAR(40))",
           T);
    rr_sql(c,
           "CREATE TABLE %s_GENRE (GENRE_ID INTEGER NOT NULL PRIMARY KEY, "
           "NAME VARCHAR(40))",
           T);
    rr_sql(c,
           "CREATE TABLE %s_ALBUM (ALBUM_ID INTEGER NOT NULL PRIMARY KEY, "
           "TITLE VARCHAR(60), ARTIST_ID INTEGER REFERENCES %s_ARTIST)",
           T);
    rr_sql(c,
           "CREATE TABLE %s_TRACK (TRACK_ID INTEGER NOT NULL PRIMARY KEY, "
           "NAME VARCHAR(60), ALBUM_ID INTEGER REFERENCES %s_ALBUM, "
           "GENRE_ID INTEGER REFERENCES %s_GENRE)",
           T);
    rr_sql(c,
           "EXECUTE BLOCK AS DECLARE I INTEGER = 1; BEGIN "
           "INSERT INTO %s_GENRE VALUES (1, 'Rock'); "
           "INSERT INTO %s_GENRE VALUES (2, 'Jazz'); "
           "WHILE (I <= 10) DO BEGIN INSERT INTO %s_ARTIST VALUES (:I, "
           "'Artist ' || :I); I = I + 1; END I = 1; "
           "WHILE (I <= 20) DO BEGIN INSERT INTO %s_ALBUM VALUES (:I, "
           "'Album ' || :I, MOD(:I, 10) + 1); "
           "INSERT INTO %s_TRACK VALUES (:I * 10 + 1, 'T ' || :I || '.1', :I, "
           "1); INSERT INTO %s_TRACK VALUES (:I * 10 + 2, 'T ' || :I || "
           "'.2', :I, 2); I = I + 1; END END",
           T);
    rr_sql(c,
           "CREATE PROCEDURE %s_RET_ARTISTS RETURNS (ARTIST_ID INTEGER, "
           "NAME VARCHAR(40)) AS BEGIN FOR SELECT ARTIST_ID, NAME FROM "
           "%s_ARTIST INTO :ARTIST_ID, :NAME DO SUSPEND; END",
           T);
    rr_sql(c,
           "CREATE PROCEDURE %s_RET_ALBUMS (MIN_ID INTEGER = 0) RETURNS "
           "(ALBUM_ID INTEGER, TITLE VARCHAR(60), ARTIST_ID INTEGER) AS "
           "BEGIN FOR SELECT ALBUM_ID, TITLE, ARTIST_ID FROM %s_ALBUM WHERE "
           "ALBUM_ID >= :MIN_ID INTO :ALBUM_ID, :TITLE, :ARTIST_ID DO "
           "SUSPEND; END",
           T);
    rr_sql(c,
           "COMMENT ON PROCEDURE %s_RET_ALBUMS IS 'Albums.\n@returns %s_album'",
           T);
    rr_sql(c,
           "CREATE PROCEDURE %s_BLOBS RETURNS (ID INTEGER, B BLOB SUB_TYPE "
           "TEXT) AS BEGIN ID = 1; B = 'hello'; SUSPEND; ID = 2; B = NULL; "
           "SUSPEND; END",
           T);
    rr_sql(c,
           "CREATE PROCEDURE %s_ECHO (J VARCHAR(200)) RETURNS (J2 "
           "VARCHAR(200)) AS BEGIN J2 = J; END",
           T);
    assert_int_equal(start_server(t, NULL), 0);

    /* RPCGETSingle: a filter on the result */
    snprintf(p, sizeof p, "/rpc/%s_ret_artists?select=*&artist_id=eq.5", tl);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"artist_id\":5,\"name\":\"Artist 5\"}]");
    assert_string_equal(hdr(&r, "content-range"), "0-0/*");
    assert_int_equal(rts(&r), cold);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"artist_id\":5,\"name\":\"Artist 5\"}]");
    assert_int_equal(rts(&r), 1); /* warm: start, execute + rows, commit */
    /* renames, order, limit and offset, count=exact (206: a part) */
    snprintf(p, sizeof p,
             "/rpc/%s_ret_artists?select=id:artist_id,n:name&order=artist_id."
             "desc&limit=2&offset=1",
             tl);
    http("GET", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 206,
           "[{\"id\":9,\"n\":\"Artist 9\"},{\"id\":8,\"n\":\"Artist 8\"}]");
    assert_string_equal(hdr(&r, "content-range"), "1-2/10");
    assert_int_equal(rts(&r), cold); /* the count rides along */
    http("GET", p, "Prefer: count=exact\r\n", &r);
    assert_int_equal(r.status, 206);
    assert_int_equal(rts(&r), 1);
    /* or=, in, singular */
    snprintf(p, sizeof p,
             "/rpc/%s_ret_artists?or=(artist_id.eq.2,name.eq.Artist%%203)&"
             "order=artist_id",
             tl);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"artist_id\":2,\"name\":\"Artist 2\"},{\"artist_id\":3,"
           "\"name\":\"Artist 3\"}]");
    snprintf(p, sizeof p, "/rpc/%s_ret_artists?artist_id=in.(4)", tl);
    http("GET", p, "Accept: application/vnd.pgrst.object+json\r\n", &r);
    EXPECT(&r, 200, "{\"artist_id\":4,\"name\":\"Artist 4\"}");
    /* an unknown column of the result: 42703 before the database */
    snprintf(p, sizeof p, "/rpc/%s_ret_artists?nope=eq.1", tl);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "42703"));
    assert_int_equal(rts(&r), -1);

    /* RPCGETSingleEmbed: @returns album embeds as album does */
    snprintf(p, sizeof p,
             "/rpc/%s_ret_albums?select=album_id,title,artist_id,%s_track(*,"
             "%s_genre(*))&artist_id=eq.7&%s_track.order=track_id",
             tl, tl, tl, tl);
    rr_album(a1, sizeof a1, tl, 6);
    rr_album(a2, sizeof a2, tl, 16);
    snprintf(want, sizeof want, "[%s,%s]", a1, a2);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, want);
    assert_int_equal(rts(&r), cold); /* every level prepared together */
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, want);
    /* warm: the top level, both embed levels and the commit in one write */
    assert_int_equal(rts(&r), 1);
    /* the k6 scenario's own URL (no embedded order): the same albums */
    snprintf(p, sizeof p,
             "/rpc/%s_ret_albums?select=album_id,title,artist_id,%s_track(*,"
             "%s_genre(*))&artist_id=eq.7",
             tl, tl, tl);
    http("GET", p, NULL, &r);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(rts(&r), 1);
    assert_non_null(strstr(r.body, "\"title\":\"Album 16\""));
    assert_non_null(strstr(r.body, "\"name\":\"T 6.2\",\"album_id\":6,"
                                   "\"genre_id\":2"));
    assert_null(strstr(r.body, "Album 7"));
    /* an argument and a filter; a to-one embed of the annotated table */
    snprintf(p, sizeof p,
             "/rpc/%s_ret_albums?min_id=10&artist_id=eq.7&select=title,"
             "a:%s_artist(name)",
             tl, tl);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"title\":\"Album 16\",\"a\":{\"name\":\"Artist 7\"}}]");
    /* a procedure without @returns has no relationships */
    snprintf(p, sizeof p, "/rpc/%s_ret_artists?select=*,%s_album(*)", tl, tl);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "PGRST200"));

    /* blob outputs, as blob columns of a read: the execute + fetch (1),
       the blob's open and read (1), the commit (1) */
    snprintf(p, sizeof p, "/rpc/%s_blobs?order=id", tl);
    http("GET", p, NULL, &r);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":1,\"b\":\"hello\"},{\"id\":2,\"b\":null}]");
    assert_int_equal(rts(&r), 3);

    /* db-procedure-returns links a procedure without a description */
    assert_int_equal(stop_server(), 0);
    char env[256];
    snprintf(env, sizeof env,
             "PGRST_DB_PROCEDURE_RETURNS=%s_ret_artists:%s_artist\n", tl, tl);
    assert_int_equal(start_server(t, env), 0);
    snprintf(p, sizeof p,
             "/rpc/%s_ret_artists?select=name,%s_album(title)&artist_id=eq.7&"
             "%s_album.order=album_id",
             tl, tl, tl);
    http("GET", p, NULL, &r);
    snprintf(want, sizeof want,
             "[{\"name\":\"Artist 7\",\"%s_album\":[{\"title\":\"Album "
             "6\"},{\"title\":\"Album 16\"}]}]",
             tl);
    EXPECT(&r, 200, want);
    http("GET", p, NULL, &r);
    assert_int_equal(rts(&r), 1);
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, NULL), 0);

    /* POST: arguments from the body, the query string on the result */
    snprintf(p, sizeof p,
             "/rpc/%s_ret_albums?select=album_id&artist_id=eq.7&order=album_"
             "id.desc",
             tl);
    rpc_post(p, "{\"min_id\":1}", &r);
    EXPECT(&r, 200, "[{\"album_id\":16},{\"album_id\":6}]");

    /* Prefer: params=single-object: the body is the one argument */
    snprintf(p, sizeof p, "/rpc/%s_echo", tl);
    {
        char h[256], req[1024];
        const char *body = "{\"a\":[1,2],\"b\":\"x\"}";
        snprintf(h, sizeof h,
                 "Content-Type: application/json\r\nPrefer: "
                 "params=single-object\r\nContent-Length: %zu\r\n",
                 strlen(body));
        int n = snprintf(req, sizeof req,
                         "POST %s HTTP/1.1\r\nHost: localhost\r\nConnection: "
                         "close\r\n%s\r\n%s",
                         p, h, body);
        http_raw(srv.port, req, (size_t)n, &r);
        EXPECT(&r, 200, "{\"j2\":\"{\\\"a\\\":[1,2],\\\"b\\\":\\\"x\\\"}\"}");
        /* a procedure without exactly one argument cannot take it */
        n = snprintf(req, sizeof req,
                     "POST /rpc/%s_ret_artists HTTP/1.1\r\nHost: localhost\r\n"
                     "Connection: close\r\n%s\r\n%s",
                     tl, h, body);
        http_raw(srv.port, req, (size_t)n, &r);
        assert_int_equal(r.status, 404);
        assert_non_null(strstr(r.body, "PGRST202"));
    }

    assert_int_equal(stop_server(), 0);
    for (size_t i = 0; i < sizeof rr_drops / sizeof rr_drops[0]; i++)
        rr_sql(c, rr_drops[i], T);
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}
