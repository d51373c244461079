/*
 * Answers longer than one fetch answer, against real Firebird 3 and 4
 * (included by test_it.c, whose helpers it uses). Firebird ends an
 * op_fetch answer before the rows asked for once it has written 16
 * network packets (16 x 8 KiB by default) and more than 10 rows
 * (fastfb.h, ffb_stmt_row_wire_max()): a commit that rode with the fetch
 * would close the cursor behind the first answer. Reads are then read
 * again with the commit after their rows; a write's end rides only when
 * its rows come whole; a POST to a selectable procedure runs once.
 *
 * <T>_WD holds 200 rows of an id and 1,000 'x' (VARCHAR(1000) of UTF8:
 * 4,024 bytes a row at most on the wire, about 1,016 as sent: the first
 * answer of a long read holds 129 rows). The server runs with
 * db-probe-rows = 1000 here; at the end it is started again as setup()
 * left it.
 */

static char twdname[80]; /* the exposed name of <T>_WD */

static const char *const wd_drops[] = {"DROP PROCEDURE %s_WDP",
                                       "DROP PROCEDURE %s_WDN",
                                       "DROP SEQUENCE %s_WDG",
                                       "DROP TABLE %s_WD"};

static void wd_drop_quiet(ffb_conn *c, const target *t) {
    for (size_t i = 0; i < sizeof wd_drops / sizeof wd_drops[0]; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, wd_drops[i], t->table);
        exec_sql_quiet(c, sql);
    }
}

/* A body of `n` objects {"id":first+i,"pad":<1000 x>} or {"i":1+i}:
   checks the ids in order, each pad whole. */
static void wd_check_rows(const resp *r, int first, int n, int wide) {
    const char *p = r->body;
    assert_true(*p == '[');
    p++;
    for (int i = 0; i < n; i++) {
        char head[64];
        int k = wide ? snprintf(head, sizeof head, "{\"id\":%d,\"pad\":\"",
                                first + i)
                     : snprintf(head, sizeof head, "{\"i\":%d}", first + i);
        if (strncmp(p, head, (size_t)k) != 0)
            fail_msg("row %d: %.60s", i, p);
        p += k;
        if (wide) {
            for (int j = 0; j < 1000; j++)
                if (p[j] != 'x')
                    fail_msg("row %d: pad cut at %d", i, j);
            p += 1000;
            assert_memory_equal(p, "\"}", 2);
            p += 2;
        }
        assert_true(*p == (i + 1 < n ? ',' : ']'));
        p++;
    }
    assert_int_equal((size_t)(p - r->body), r->body_len);
}

/* GET `p` twice (the first prepares): 200 and ids 1..n, each pad whole. */
static void wd_get_warm(const char *p, int n, resp *r) {
    http("GET", p, NULL, r);
    http("GET", p, NULL, r);
    assert_int_equal(r->status, 200);
    wd_check_rows(r, 1, n, 1);
}

static int64_t wd_sequence(const target *t) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT GEN_ID(%s_WDG, 0) FROM RDB$DATABASE",
             t->table);
    ffb_conn *c = open_conn(t);
    ffb_tx *tx;
    ffb_stmt *s;
    int64_t v = -1;
    assert_int_equal(ffb_tx_begin(c, NULL, &tx), 0);
    assert_int_equal(ffb_stmt_new(c, &s), 0);
    assert_int_equal(ffb_stmt_prepare(s, tx, sql, (size_t)-1), 0);
    assert_int_equal(ffb_stmt_execute(s, tx), 0);
    assert_int_equal(ffb_stmt_fetch(s), 1);
    assert_int_equal(ffb_stmt_get_int64(s, 0, &v), 0);
    ffb_stmt_free(s);
    assert_int_equal(ffb_tx_commit(tx), 0);
    ffb_tx_free(tx);
    ffb_conn_close(c);
    ffb_conn_free(c);
    return v;
}

/* A bulk POST of ids first..first+n-1 with return=representation. */
static void wd_post(int first, int n, resp *r) {
    static char body[300000];
    size_t k = 0;
    body[k++] = '[';
    for (int i = 0; i < n; i++) {
        k += (size_t)snprintf(body + k, sizeof body - k, "%s{\"id\":%d,\"pad\":\"",
                              i ? "," : "", first + i);
        memset(body + k, 'x', 1000);
        k += 1000;
        body[k++] = '"';
        body[k++] = '}';
    }
    body[k++] = ']';
    body[k] = '\0';
    char p[256];
    path(p, sizeof p, twdname, NULL);
    http_json("POST", p, "Prefer: return=representation\r\n", body, r);
}

static void test_rest_wide_answers(void **state) {
    target *t = *state;
    const char *T = t->table;
    char sql[1024], p[512];
    resp r;
    ffb_conn *c = open_conn(t);
    wd_drop_quiet(c, t);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_WD (ID INTEGER NOT NULL PRIMARY KEY, PAD "
             "VARCHAR(1000))",
             T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "EXECUTE BLOCK AS DECLARE I INTEGER = 1; BEGIN WHILE (I <= 200) "
             "DO BEGIN INSERT INTO %s_WD VALUES (:I, LPAD('', 1000, 'x')); "
             "I = I + 1; END END",
             T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "CREATE SEQUENCE %s_WDG", T);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s_WDP RETURNS (ID INTEGER, PAD VARCHAR(1000)) "
             "AS BEGIN FOR SELECT ID, PAD FROM %s_WD WHERE ID <= 200 ORDER BY "
             "ID INTO :ID, :PAD DO SUSPEND; END",
             T, T);
    exec_sql(c, sql);
    /* counts its calls in the sequence, then returns 1..N */
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s_WDN (N INTEGER) RETURNS (I INTEGER) AS "
             "DECLARE X BIGINT; BEGIN X = GEN_ID(%s_WDG, 1); I = 0; WHILE "
             "(I < N) DO BEGIN I = I + 1; SUSPEND; END END",
             T, T);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    snprintf(twdname, sizeof twdname, "%s_wd", tname);
    w_restart(t, "PGRST_DB_PROBE_ROWS=1000");

    /* 100 rows, about 101 KB: one answer, the commit with it: 1 warm */
    path(p, sizeof p, twdname, "order=id&limit=100");
    wd_get_warm(p, 100, &r);
    assert_int_equal(rts(&r), 1);

    /* 200 rows: warm, the first answer (129 rows) with the commit behind
       it (1); read again: start + execute + the first answer (1), the
       rest (1), the commit (1) = 4 */
    path(p, sizeof p, twdname, "order=id&limit=200");
    wd_get_warm(p, 200, &r);
    assert_int_equal(rts(&r), 4);
    /* no limit: the probe of 1001 rows ends early the same way: 4 */
    path(p, sizeof p, twdname, "order=id");
    wd_get_warm(p, 200, &r);
    assert_string_equal(hdr(&r, "content-range"), "0-199/*");
    assert_int_equal(rts(&r), 4);

    /* RPC by GET (read-only): as a read, 4 */
    snprintf(p, sizeof p, "/rpc/%s_wdp", tname);
    wd_get_warm(p, 200, &r);
    assert_int_equal(rts(&r), 4);

    /* RPC by POST may write: called once (the sequence counts the calls),
       its 1005 rows - more than the probe - all fetched before the
       commit: start + execute + the first 1000 (the fetch size of an
       unbounded call) (1), the last 5 and the end (1), the commit (1) */
    int64_t calls = wd_sequence(t);
    snprintf(p, sizeof p, "/rpc/%s_wdn", tname);
    http_json("POST", p, NULL, "{\"n\":1005}", &r);
    http_json("POST", p, NULL, "{\"n\":1005}", &r);
    assert_int_equal(r.status, 200);
    wd_check_rows(&r, 1, 1005, 0);
    assert_int_equal(rts(&r), 3);
    assert_int_equal(wd_sequence(t) - calls, 2);

    /* Writes returning their rows: 8 rows (with the count's 2, a fetch
       of 10: always whole) ride with the commit: 1 warm */
    wd_post(1001, 8, &r);
    wd_post(1101, 8, &r);
    assert_int_equal(r.status, 201);
    wd_check_rows(&r, 1101, 8, 1);
    assert_int_equal(rts(&r), 1);
    /* 40 rows: 42 x 4,024 bytes could pass 120 KiB, so the commit waits
       for the rows (1), then goes (1) */
    wd_post(2001, 40, &r);
    wd_post(2101, 40, &r);
    assert_int_equal(r.status, 201);
    wd_check_rows(&r, 2101, 40, 1);
    assert_int_equal(rts(&r), 2);
    /* 200 rows, about 200 KB: the commit waits for them. Measured on 3.0.11
       and 4.0.5: the block's 200 rows all came in its first answer (the
       16-packet cut did not end it, as it ends a select's), so execute +
       rows (1), the commit (1) - every row in the response, every row
       stored */
    wd_post(3001, 200, &r);
    wd_post(3301, 200, &r);
    assert_int_equal(r.status, 201);
    wd_check_rows(&r, 3301, 200, 1);
    assert_int_equal(rts(&r), 2);
    path(p, sizeof p, twdname, "select=id&id=gt.3000&order=id&limit=1000");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(hdr(&r, "content-range"), "0-399/400");

    w_stop();
    c = open_conn(t);
    wd_drop_quiet(c, t);
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}
