/*
 * ffb-rest's transport and its untested settings against real Firebird 3
 * and 4 (included by test_it.c after it_settings.h): TLS
 * (server-tls-cert-file/-key-file with a self-signed certificate made
 * here by the openssl command) over HTTP/1.1 and h2 by ALPN, plain HTTP
 * to the TLS port, bad files refused at start; HTTP/2 without TLS (h2c
 * by prior knowledge and by Upgrade, several streams on one connection,
 * a stream reset while its statement runs); db-statement-timeout (FB4:
 * 500 57014; FB3: refused at start); db-connect-timeout/db-io-timeout;
 * db-anon-role; /ready through a relay this test starts and kills;
 * server-cors-allowed-origins; server-max-filters; PATCH and DELETE with
 * tx=rollback. curl (with HTTP/2, Debian's curl) is the TLS and h2
 * client; the stream reset is written as raw h2 frames.
 */

#include <sys/prctl.h>

/* ---- curl ----------------------------------------------------------------
 */

/* `curl -sS --max-time 20 <args>`: its stdout in `out`, its exit status */
static int curl_run(char *out, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int curl_run(char *out, size_t n, const char *fmt, ...) {
    char args[4096], cmd[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "curl -sS --max-time 20 %s", args);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t k = 0, r;
    while (k + 1 < n && (r = fread(out + k, 1, n - 1 - k, f)) > 0)
        k += r;
    out[k] = '\0';
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `curl -D - <args> URL`: the response (status line "HTTP/x NNN") in r;
   `ver` gets "1.1" or "2". */
static void curl_get(const char *args, const char *url, resp *r, char *ver) {
    static char out[300000];
    int rc = curl_run(out, sizeof out, "-D - %s '%s'", args, url);
    if (rc != 0)
        fprintf(stderr, "curl %s %s: exit %d\n%s\n", args, url, rc, out);
    assert_int_equal(rc, 0);
    memset(r, 0, sizeof *r);
    const char *sep = strstr(out, "\r\n\r\n");
    /* after an Upgrade, curl prints the 101 block first */
    if (sep && strncmp(out, "HTTP/1.1 101", 12) == 0) {
        memmove(out, sep + 4, strlen(sep + 4) + 1);
        sep = strstr(out, "\r\n\r\n");
    }
    assert_non_null(sep);
    size_t hl = (size_t)(sep - out);
    assert_true(hl < sizeof r->head);
    memcpy(r->head, out, hl);
    char v[8];
    assert_int_equal(sscanf(r->head, "HTTP/%7s %d", v, &r->status), 2);
    if (ver)
        strcpy(ver, v);
    r->body_len = strlen(sep + 4);
    assert_true(r->body_len < sizeof r->body);
    memcpy(r->body, sep + 4, r->body_len + 1);
}

/* ---- TLS -----------------------------------------------------------------
 */

static char tls_dir[64];

/* A self-signed RSA certificate for localhost in tls_dir (cert.pem,
   key.pem), and a second key (other.pem) that does not match it. */
static void tls_make_cert(void) {
    char cmd[600], out[4096];
    snprintf(tls_dir, sizeof tls_dir, "/tmp/ffbrest-tls-XXXXXX");
    assert_non_null(mkdtemp(tls_dir));
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "
             "/CN=localhost -keyout %s/key.pem -out %s/cert.pem 2>&1 && "
             "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 "
             "-out %s/other.pem 2>&1",
             tls_dir, tls_dir, tls_dir);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t k = fread(out, 1, sizeof out - 1, f);
    out[k] = '\0';
    int st = pclose(f);
    if (st != 0)
        fprintf(stderr, "openssl: %s\n", out);
    assert_int_equal(st, 0);
}

static void tls_remove_cert(void) {
    static const char *const f[] = {"cert.pem", "key.pem", "other.pem"};
    char p[128];
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", tls_dir, f[i]);
        unlink(p);
    }
    rmdir(tls_dir);
}

/* ffb-rest with the db-uri of `t` and `a`, `b` set (NAME=value): its exit
   status and its stderr (run_once with more variables). */
static int run_with(const target *t, const char *a, const char *b, char *out,
                    size_t n) {
    char host[64], port[16], db[512], uri[700];
    env_of(t, "HOST", host, sizeof host);
    env_of(t, "PORT", port, sizeof port);
    env_of(t, "DB", db, sizeof db);
    snprintf(uri, sizeof uri, "firebird://SYSDBA:masterkey@%s:%s/%s", host,
             port, db);
    setenv("PGRST_DB_URI", uri, 1);
    char kv[600];
    snprintf(kv, sizeof kv, "%s", a);
    char *eq = strchr(kv, '=');
    *eq = '\0';
    setenv(kv, eq + 1, 1);
    int rc = run_once(b, out, n);
    unsetenv(kv);
    unsetenv("PGRST_DB_URI");
    return rc;
}

static void admin_get(const char *p, resp *r) {
    char req[128];
    int n =
        snprintf(req, sizeof req,
                 "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", p);
    http_raw(srv.admin_port, req, (size_t)n, r);
}

/* The end of a test that changed the server's settings: stop it, drop
   what the test made (`fmt` with the table prefix; NULL: nothing), close
   `c`, and start the server again as setup() left it. */
static void tls_finish(const target *t, ffb_conn *c, const char *fmt) {
    char sql[256];
    assert_int_equal(stop_server(), 0);
    if (fmt) {
        snprintf(sql, sizeof sql, fmt, t->table);
        exec_sql(c, sql);
    }
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}

/* `url` read twice with curl `args`: cold (FB4 2: the prepare rides with
   the start; FB3 3: it follows the start's answer), then warm 1 (start,
   execute, fetch, commit in one write), over HTTP version `v` both
   times. */
static void curl_cold_warm(const target *t, const char *args, const char *url,
                           const char *want, const char *v) {
    resp r;
    char ver[8];
    for (int i = 0; i < 2; i++) {
        curl_get(args, url, &r, ver);
        EXPECT(&r, 200, want);
        assert_string_equal(ver, v);
        assert_int_equal(rts(&r), i ? 1 : t->version == 3 ? 3 : 2);
    }
}

static void test_rest_tls(void **state) {
    target *t = *state;
    resp r;
    char p[256], url[400], ver[8], env[600], out[4096];
    tls_make_cert();
    snprintf(env, sizeof env,
             "PGRST_SERVER_TLS_CERT_FILE=%s/cert.pem\n"
             "PGRST_SERVER_TLS_KEY_FILE=%s/key.pem\n",
             tls_dir, tls_dir);
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, env), 0);
    assert_non_null(strstr(srv.log, "(1 thread, TLS)"));
    path(p, sizeof p, tname, "select=id,name&id=eq.2");
    snprintf(url, sizeof url, "https://localhost:%d%s", srv.port, p);

    /* HTTP/1.1 over TLS (ALPN http/1.1): TLS changes no round trip */
    curl_cold_warm(t, "-k --http1.1", url, "[{\"id\":2,\"name\":\"Beta\"}]",
                   "1.1");
    /* h2 by ALPN: the same answer, warm 1 */
    curl_get("-k --http2", url, &r, ver);
    EXPECT(&r, 200, "[{\"id\":2,\"name\":\"Beta\"}]");
    assert_string_equal(ver, "2");
    assert_int_equal(rts(&r), 1);
    assert_string_equal(hdr(&r, "content-type"),
                        "application/json; charset=utf-8");
    /* several streams on one TLS connection: three reads in parallel
       (curl multiplexes them over h2: one connect in all), each warm 1
       (the text is made warm first) */
    {
        char args[2400], pp[256], u[400];
        path(pp, sizeof pp, tname, "select=id&id=eq.3");
        snprintf(u, sizeof u, "https://localhost:%d%s", srv.port, pp);
        curl_get("-k --http2", u, &r, ver);
        EXPECT(&r, 200, "[{\"id\":3}]");
        int k = snprintf(args, sizeof args,
                         "-k --http2 --parallel --parallel-max 3 -w "
                         "'%%{http_code} %%{num_connects} %%{http_version} "
                         "%%header{server-timing}\\n'");
        for (int i = 0; i < 3; i++) {
            char q[64];
            snprintf(q, sizeof q, "select=id&id=eq.%d", i + 3);
            path(pp, sizeof pp, tname, q);
            k += snprintf(args + k, sizeof args - (size_t)k,
                          " -o %s/body%d 'https://localhost:%d%s'", tls_dir, i,
                          srv.port, pp);
        }
        assert_int_equal(curl_run(out, sizeof out, "%s", args), 0);
        int lines = 0, connects = 0;
        for (char *l = out; *l;) {
            int code, nc;
            char v[8], st[64];
            assert_int_equal(sscanf(l, "%d %d %7s %63s", &code, &nc, v, st), 4);
            assert_int_equal(code, 200);
            assert_string_equal(v, "2");
            assert_string_equal(st, "db;desc=\"rt=1\"");
            connects += nc;
            lines++;
            char *e = strchr(l, '\n');
            l = e ? e + 1 : l + strlen(l);
        }
        assert_int_equal(lines, 3);
        assert_int_equal(connects, 1);
        for (int i = 0; i < 3; i++) {
            char fn[128], want[32], got[64] = "";
            snprintf(fn, sizeof fn, "%s/body%d", tls_dir, i);
            FILE *f = fopen(fn, "r");
            assert_non_null(f);
            size_t gn = fread(got, 1, sizeof got - 1, f);
            got[gn] = '\0';
            fclose(f);
            unlink(fn);
            snprintf(want, sizeof want, "[{\"id\":%d}]", i + 3);
            assert_string_equal(got, want);
        }
    }
    /* the certificate is the one configured: verified against itself */
    char ca[200];
    snprintf(ca, sizeof ca, "--cacert %s/cert.pem --http2", tls_dir);
    curl_get(ca, url, &r, ver);
    EXPECT(&r, 200, "[{\"id\":2,\"name\":\"Beta\"}]");
    /* ... and refused without it (curl's exit 60: certificate problem) */
    assert_int_equal(
        curl_run(out, sizeof out, "-o /dev/null '%s' 2>/dev/null", url), 60);

    /* plain HTTP to the TLS port: no HTTP answer, the connection closed
       at once (the handshake fails), and the server serves on */
    int fd = connect_to(srv.port);
    assert_true(fd >= 0);
    const char *plain = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
    assert_int_equal(write(fd, plain, strlen(plain)), (ssize_t)strlen(plain));
    int64_t t0 = now_ms();
    size_t n = read_all(fd, out, sizeof out - 1);
    int64_t ms = now_ms() - t0;
    close(fd);
    out[n] = '\0';
    fprintf(stderr,
            "plain HTTP to the TLS port: %zu bytes, closed after "
            "%lld ms\n",
            n, (long long)ms);
    assert_true(n < 5 || memcmp(out, "HTTP/", 5) != 0);
    assert_true(ms < 5000);
    snprintf(url, sizeof url, "http://localhost:%d%s", srv.port, p);
    assert_int_equal(
        curl_run(out, sizeof out, "-o /dev/null '%s' 2>/dev/null", url),
        52); /* curl: empty reply from server */
    snprintf(url, sizeof url, "https://localhost:%d%s", srv.port, p);
    curl_get("-k", url, &r, ver);
    EXPECT(&r, 200, "[{\"id\":2,\"name\":\"Beta\"}]");
    /* the admin port stays plain HTTP */
    admin_get("/ready", &r);
    EXPECT(&r, 200, "");
    assert_int_equal(stop_server(), 0);

    /* refused at start, exit 2, before the database is asked anything:
       a missing certificate, a key of another pair (OpenSSL checks the
       pair as it loads the key), the certificate given as the key */
    static const struct {
        const char *cert, *key, *what, *why;
    } bad[] = {
        {"none.pem", "key.pem",
         "server-tls-cert-file: cannot load the certificate chain",
         "No such file or directory"},
        {"cert.pem", "other.pem",
         "server-tls-key-file: cannot load the private key",
         "key values mismatch"},
        {"cert.pem", "cert.pem",
         "server-tls-key-file: cannot load the private key", ""},
    };
    char a[300], b[300];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(a, sizeof a, "PGRST_SERVER_TLS_CERT_FILE=%s/%s", tls_dir,
                 bad[i].cert);
        snprintf(b, sizeof b, "PGRST_SERVER_TLS_KEY_FILE=%s/%s", tls_dir,
                 bad[i].key);
        assert_int_equal(run_with(t, a, b, out, sizeof out), 2);
        assert_non_null(strstr(out, bad[i].what));
        assert_non_null(strstr(out, bad[i].why));
    }
    /* half a pair */
    assert_int_equal(run_with(t, a, "PGRST_LOG_LEVEL=info", out, sizeof out),
                     2);
    assert_non_null(strstr(out, "ffb-rest: server-tls-cert-file is set but "
                                "server-tls-key-file is not"));
    assert_int_equal(run_with(t, b, "PGRST_LOG_LEVEL=info", out, sizeof out),
                     2);
    assert_non_null(strstr(out, "ffb-rest: server-tls-key-file is set but "
                                "server-tls-cert-file is not"));
    tls_remove_cert();
    assert_int_equal(start_server(t, NULL), 0);
}

/* ---- HTTP/2 without TLS (h2c) ---------------------------------------------
 */

/* A selectable procedure that counts to N before its one row: the slow
   statement of the h2 reset and of the statement timeout. */
static void slow_proc(ffb_conn *c, const target *t, int create) {
    char sql[512];
    if (!create) {
        snprintf(sql, sizeof sql, "DROP PROCEDURE %s_SLOW", t->table);
        exec_sql_quiet(c, sql);
        return;
    }
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s_SLOW (N INTEGER) RETURNS (X INTEGER) AS "
             "DECLARE I INTEGER = 0; BEGIN WHILE (I < N) DO I = I + 1; "
             "X = I; SUSPEND; END",
             t->table);
    exec_sql(c, sql);
}

static size_t hpack_str(unsigned char *o, const char *s) {
    size_t n = strlen(s), k = 0;
    /* a 7-bit prefix integer, no Huffman */
    if (n < 127) {
        o[k++] = (unsigned char)n;
    } else {
        o[k++] = 127;
        size_t m = n - 127;
        while (m >= 128) {
            o[k++] = (unsigned char)(m % 128 + 128);
            m /= 128;
        }
        o[k++] = (unsigned char)m;
    }
    memcpy(o + k, s, n);
    return k + n;
}

static size_t h2_frame(unsigned char *o, int type, int flags, uint32_t sid,
                       const unsigned char *pl, size_t n) {
    o[0] = (unsigned char)(n >> 16);
    o[1] = (unsigned char)(n >> 8);
    o[2] = (unsigned char)n;
    o[3] = (unsigned char)type;
    o[4] = (unsigned char)flags;
    o[5] = (unsigned char)(sid >> 24);
    o[6] = (unsigned char)(sid >> 16);
    o[7] = (unsigned char)(sid >> 8);
    o[8] = (unsigned char)sid;
    if (n)
        memcpy(o + 9, pl, n);
    return 9 + n;
}

/* HEADERS (END_STREAM | END_HEADERS) of `GET path` on stream `sid`:
   static-table :method GET (2) and :scheme http (6), literal :path (4)
   and :authority (1) without indexing. */
static size_t h2_get(unsigned char *o, uint32_t sid, const char *path) {
    unsigned char hb[1024];
    size_t k = 0;
    hb[k++] = 0x82;
    hb[k++] = 0x86;
    hb[k++] = 0x04;
    k += hpack_str(hb + k, path);
    hb[k++] = 0x01;
    k += hpack_str(hb + k, "localhost");
    return h2_frame(o, 1, 0x5, sid, hb, k);
}

static int h2_read_n(int fd, unsigned char *b, size_t n, int64_t end) {
    size_t k = 0;
    while (k < n) {
        struct pollfd pf = {fd, POLLIN, 0};
        int64_t left = end - now_ms();
        if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
            return -1;
        ssize_t r = read(fd, b + k, n - k);
        if (r <= 0)
            return -1;
        k += (size_t)r;
    }
    return 0;
}

static size_t h2_preface(unsigned char *w) {
    memcpy(w, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
    return 24 + h2_frame(w + 24, 4, 0, 0, NULL, 0); /* empty SETTINGS */
}

typedef struct h2_stream {
    uint32_t sid;
    int status; /* 200 when HEADERS start with 0x88, else -1 */
    char body[512];
    size_t len;
    int done;
} h2_stream;

static int h2_other_frames; /* HEADERS/DATA of streams not asked for */

/* Frames until every stream of `st` has ended (DATA with END_STREAM),
   SETTINGS acknowledged; -1 on a timeout, a close or a GOAWAY. */
static int h2_collect(int fd, h2_stream *st, size_t n, int ms) {
    int64_t end = now_ms() + ms;
    size_t done = 0;
    h2_other_frames = 0;
    while (done < n) {
        unsigned char fh[9], pl[16384];
        if (h2_read_n(fd, fh, 9, end) < 0)
            return -1;
        size_t len = (size_t)fh[0] << 16 | (size_t)fh[1] << 8 | fh[2];
        uint32_t sid = (uint32_t)(fh[5] & 0x7f) << 24 | (uint32_t)fh[6] << 16 |
                       (uint32_t)fh[7] << 8 | fh[8];
        if (len > sizeof pl || h2_read_n(fd, pl, len, end) < 0)
            return -1;
        if (fh[3] == 7)
            return -1; /* GOAWAY */
        if (fh[3] == 4 && !(fh[4] & 1)) {
            unsigned char ack[9];
            h2_frame(ack, 4, 1, 0, NULL, 0);
            if (write(fd, ack, 9) != 9)
                return -1;
        }
        if (fh[3] > 1)
            continue;
        h2_stream *s = NULL;
        for (size_t i = 0; i < n; i++)
            if (st[i].sid == sid)
                s = &st[i];
        if (!s) {
            h2_other_frames++;
            continue;
        }
        if (fh[3] == 1)
            s->status = len > 0 && pl[0] == 0x88 ? 200 : -1;
        if (fh[3] == 0 && s->len + len < sizeof s->body) {
            memcpy(s->body + s->len, pl, len);
            s->len += len;
            s->body[s->len] = '\0';
        }
        if ((fh[4] & 1) && !s->done) { /* END_STREAM */
            s->done = 1;
            done++;
        }
    }
    return 0;
}

static void test_rest_h2(void **state) {
    target *t = *state;
    resp r;
    char p[256], url[400], ver[8], out[8192];
    ffb_conn *c = open_conn(t);
    slow_proc(c, t, 1);
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, NULL), 0);
    path(p, sizeof p, tname, "select=id,name&id=eq.1");
    snprintf(url, sizeof url, "http://localhost:%d%s", srv.port, p);

    /* prior knowledge: cold, then warm 1 */
    curl_cold_warm(t, "--http2-prior-knowledge", url,
                   "[{\"id\":1,\"name\":\"alpha\"}]", "2");
    /* Upgrade: h2c from HTTP/1.1 (101, then the answer over h2) */
    curl_get("--http2", url, &r, ver);
    EXPECT(&r, 200, "[{\"id\":1,\"name\":\"alpha\"}]");
    assert_string_equal(ver, "2");
    assert_int_equal(rts(&r), 1);
    /* an error over h2: PostgREST's body and status */
    char bad[400];
    snprintf(bad, sizeof bad, "http://localhost:%d/no_such_table", srv.port);
    curl_get("--http2-prior-knowledge", bad, &r, ver);
    EXPECT(&r, 404,
           "{\"code\":\"PGRST205\",\"message\":\"Could not find the table "
           "'no_such_table' in the schema cache\",\"details\":null,"
           "\"hint\":null}");

    /* two requests on one connection by Upgrade (curl 7.88's reuse of a
       prior-knowledge connection fails on its side: curl/curl#10634) */
    int k = curl_run(out, sizeof out,
                     "--http2 -o /dev/null -o /dev/null -w '%%{http_code} "
                     "%%{num_connects} %%{http_version} "
                     "%%header{server-timing}\\n' '%s' '%s'",
                     url, url);
    assert_int_equal(k, 0);
    assert_string_equal(out, "200 1 2 db;desc=\"rt=1\"\n"
                             "200 0 2 db;desc=\"rt=1\"\n");

    /* three streams at once on one connection (raw frames): each
       answered, warm 1 each - the one pooled connection serves them in
       turn */
    int fd = connect_to(srv.port);
    assert_true(fd >= 0);
    unsigned char w[4096];
    size_t wn = h2_preface(w);
    for (int i = 0; i < 3; i++) {
        char q[64], pp[256];
        snprintf(q, sizeof q, "select=id&id=eq.%d", i + 3);
        path(pp, sizeof pp, tname, q);
        wn += h2_get(w + wn, (uint32_t)(2 * i + 1), pp);
    }
    assert_int_equal(write(fd, w, wn), (ssize_t)wn);
    h2_stream st[3] = {{.sid = 1}, {.sid = 3}, {.sid = 5}};
    assert_int_equal(h2_collect(fd, st, 3, 10000), 0);
    for (int i = 0; i < 3; i++) {
        char want[32];
        snprintf(want, sizeof want, "[{\"id\":%d}]", i + 3);
        assert_int_equal(st[i].status, 200);
        assert_string_equal(st[i].body, want);
    }
    close(fd);

    /* a stream reset while its statement runs: stream 1 asks for the slow
       procedure (6M steps: 1-2 s here), RST_STREAM (CANCEL) 200 ms later,
       stream 3 asks for a row on the same connection - it is answered (after
       the slow statement has ended: one pooled connection), and so is the next
       client */
    char sp[128];
    snprintf(sp, sizeof sp, "/rpc/%s_slow?n=%d", tname, 6000000);
    fd = connect_to(srv.port);
    assert_true(fd >= 0);
    wn = h2_preface(w);
    wn += h2_get(w + wn, 1, sp);
    assert_int_equal(write(fd, w, wn), (ssize_t)wn);
    nanosleep(&(struct timespec){0, 200000000}, NULL);
    unsigned char cancel[4] = {0, 0, 0, 8};
    wn = h2_frame(w, 3, 0, 1, cancel, 4); /* RST_STREAM (CANCEL) */
    wn += h2_get(w + wn, 3, p);
    int64_t t0 = now_ms();
    assert_int_equal(write(fd, w, wn), (ssize_t)wn);
    h2_stream s3[1] = {{.sid = 3}}; /* stream 1 must stay silent */
    int hc = h2_collect(fd, s3, 1, 30000);
    if (hc != 0) {
        read_log(now_ms() + 500, NULL);
        fprintf(stderr,
                "h2 reset: no answer on stream 3; ffb-rest's log:\n%s\n",
                srv.log);
    }
    assert_int_equal(hc, 0);
    fprintf(stderr,
            "stream 3 answered %lld ms after the reset of stream 1 "
            "(%d frames of stream 1)\n",
            (long long)(now_ms() - t0), h2_other_frames);
    close(fd);
    assert_int_equal(s3[0].status, 200);
    assert_string_equal(s3[0].body, "[{\"id\":1,\"name\":\"alpha\"}]");
    assert_int_equal(h2_other_frames, 0); /* nothing for the reset stream */
    curl_get("--http2-prior-knowledge", url, &r, ver);
    EXPECT(&r, 200, "[{\"id\":1,\"name\":\"alpha\"}]");
    assert_int_equal(rts(&r), 1);
    http("GET", p, NULL, &r); /* and HTTP/1.1 */
    EXPECT(&r, 200, "[{\"id\":1,\"name\":\"alpha\"}]");

    tls_finish(t, c, "DROP PROCEDURE %s_SLOW");
}

/* ---- a relay to Firebird that this test starts, stops and kills --------
 */

static struct {
    pid_t pid;
    int port;
} relay;

/* Forward every connection to 127.0.0.1 (host of `t`):port of `t`, in a
   child process, on relay.port (chosen on the first start, kept after). */
static void relay_start(const target *t) {
    char host[64], port[16];
    env_of(t, "HOST", host, sizeof host);
    env_of(t, "PORT", port, sizeof port);
    if (!relay.port)
        relay.port = free_port();
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)relay.port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(ls >= 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(ls, 16), 0);
    relay.pid = fork();
    assert_true(relay.pid >= 0);
    if (relay.pid > 0) {
        close(ls);
        return;
    }
    /* gone with the test, whatever happens to it; and off its pipes */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 1);
    dup2(devnull, 2);
    struct sockaddr_in fb;
    memset(&fb, 0, sizeof fb);
    fb.sin_family = AF_INET;
    fb.sin_port = htons((uint16_t)atoi(port));
    inet_pton(AF_INET, host, &fb.sin_addr);
    enum { MAXP = 32 };
    struct pollfd pf[1 + 2 * MAXP];
    int np = 0; /* pairs: pf[1 + 2i] client, pf[2 + 2i] server */
    for (;;) {
        pf[0].fd = ls;
        pf[0].events = POLLIN;
        for (int i = 1; i <= 2 * np; i++)
            pf[i].events = POLLIN;
        if (poll(pf, (nfds_t)(1 + 2 * np), -1) < 0)
            continue;
        if ((pf[0].revents & POLLIN) && np < MAXP) {
            int c = accept(ls, NULL, NULL);
            int s = socket(AF_INET, SOCK_STREAM, 0);
            if (c >= 0 && s >= 0 &&
                connect(s, (struct sockaddr *)&fb, sizeof fb) == 0) {
                pf[1 + 2 * np].fd = c;
                pf[2 + 2 * np].fd = s;
                pf[1 + 2 * np].revents = pf[2 + 2 * np].revents = 0;
                np++;
            } else {
                if (c >= 0)
                    close(c);
                if (s >= 0)
                    close(s);
            }
        }
        for (int i = 0; i < np; i++) {
            for (int d = 0; d < 2; d++) {
                struct pollfd *from = &pf[1 + 2 * i + d];
                int to = pf[1 + 2 * i + !d].fd;
                if (!from->revents)
                    continue;
                char buf[65536];
                ssize_t r = read(from->fd, buf, sizeof buf);
                ssize_t w = 0;
                while (r > 0 && w < r) {
                    ssize_t k = write(to, buf + w, (size_t)(r - w));
                    if (k <= 0)
                        break;
                    w += k;
                }
                if (r <= 0 || w < r) {
                    /* one side ended: end the pair */
                    close(pf[1 + 2 * i].fd);
                    close(pf[2 + 2 * i].fd);
                    pf[1 + 2 * i] = pf[2 * np - 1];
                    pf[2 + 2 * i] = pf[2 * np];
                    np--;
                    i--;
                    break;
                }
            }
        }
    }
}

static void relay_kill(void) {
    if (relay.pid > 0) {
        kill(relay.pid, SIGKILL);
        waitpid(relay.pid, NULL, 0);
        relay.pid = 0;
    }
}

/* db-io-timeout, db-connect-timeout and /ready through the relay: a
   stalled wire (the relay stopped) breaks the request after the I/O
   timeout; the database gone (the relay killed) makes /ready 503 and a
   request 503; the relay back, both recover. */
static void test_rest_ready_timeouts(void **state) {
    target *t = *state;
    resp r;
    char p[256], env[1200], db[512], out[4096];
    path(p, sizeof p, tname, "select=id&id=eq.4");
    env_of(t, "DB", db, sizeof db);
    relay.port = 0; /* a fresh port per server */

    /* bad values, refused at start naming the key */
    assert_int_equal(run_with(t, "PGRST_DB_IO_TIMEOUT=soon",
                              "PGRST_LOG_LEVEL=info", out, sizeof out),
                     2);
    assert_non_null(strstr(out, "environment PGRST_DB_IO_TIMEOUT: "
                                "db-io-timeout: expected seconds from 0 "
                                "(none) to 3600"));
    assert_int_equal(run_with(t, "PGRST_DB_CONNECT_TIMEOUT=-1",
                              "PGRST_LOG_LEVEL=info", out, sizeof out),
                     2);
    assert_non_null(strstr(out, "db-connect-timeout: expected seconds"));
    assert_int_equal(run_with(t, "PGRST_DB_STATEMENT_TIMEOUT=1.5",
                              "PGRST_LOG_LEVEL=info", out, sizeof out),
                     2);
    assert_non_null(strstr(out, "db-statement-timeout: expected "
                                "milliseconds"));

    relay_start(t);
    assert_int_equal(stop_server(), 0);
    snprintf(env, sizeof env,
             "PGRST_DB_URI=firebird://SYSDBA:masterkey@127.0.0.1:%d/%s\n"
             /* connects get 5 s: a login under ASan on a loaded
                machine can take more than 1 */
             "PGRST_DB_IO_TIMEOUT=1\nPGRST_DB_CONNECT_TIMEOUT=5\n",
             relay.port, db);
    assert_int_equal(start_server(t, env), 0);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":4}]");
    admin_get("/ready", &r);
    EXPECT(&r, 200, "");

    /* the wire stalls: the request's answer never comes; after
       db-io-timeout (1 s) the connection breaks: 504 PGRST003 */
    kill(relay.pid, SIGSTOP);
    int64_t t0 = now_ms();
    http("GET", p, NULL, &r);
    int64_t ms = now_ms() - t0;
    fprintf(stderr, "stalled wire: %d after %lld ms: %s\n", r.status,
            (long long)ms, r.body);
    assert_int_equal(r.status, 504);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST003\""));
    assert_true(ms >= 900 && ms < 5000);
    /* /ready now needs a new connection, whose handshake stalls too:
       /ready waits 2 s for it: 503 */
    t0 = now_ms();
    admin_get("/ready", &r);
    ms = now_ms() - t0;
    fprintf(stderr, "/ready with the wire stalled: %d after %lld ms\n",
            r.status, (long long)ms);
    EXPECT(&r, 503, "");
    assert_true(ms < 5000);

    /* the database unreachable (the relay killed: connections refused):
       /ready 503 at once, a request 503 PGRST001 */
    kill(relay.pid, SIGCONT);
    relay_kill();
    t0 = now_ms();
    admin_get("/ready", &r);
    EXPECT(&r, 503, "");
    http("GET", p, NULL, &r);
    fprintf(stderr,
            "database unreachable: /ready 503 and GET %d in %lld ms: "
            "%s\n",
            r.status, (long long)(now_ms() - t0), r.body);
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST001\""));
    admin_get("/live", &r);
    EXPECT(&r, 200, ""); /* alive, not ready */

    /* the database back: ready again, and serving (a new connection:
       cold) */
    relay_start(t);
    t0 = now_ms();
    do
        admin_get("/ready", &r); /* as a health check polls it */
    while (r.status != 200 && now_ms() - t0 < 15000);
    fprintf(stderr, "database back: /ready %d after %lld ms\n", r.status,
            (long long)(now_ms() - t0));
    EXPECT(&r, 200, "");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":4}]");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":4}]");
    assert_int_equal(rts(&r), 1);
    assert_int_equal(stop_server(), 0);
    relay_kill();

    /* db-connect-timeout at start: a listener that never answers (the
       relay stopped: the kernel accepts, nobody speaks) */
    relay_start(t);
    kill(relay.pid, SIGSTOP);
    setenv("PGRST_DB_CONNECT_TIMEOUT", "1", 1);
    char uri[700];
    snprintf(uri, sizeof uri,
             "PGRST_DB_URI=firebird://SYSDBA:masterkey@127.0.0.1:%d/%s",
             relay.port, db);
    t0 = now_ms();
    int rc = run_once(uri, out, sizeof out);
    ms = now_ms() - t0;
    unsetenv("PGRST_DB_CONNECT_TIMEOUT");
    unsetenv("PGRST_DB_URI");
    fprintf(stderr, "connect timeout at start: exit %d after %lld ms: %s", rc,
            (long long)ms, out);
    kill(relay.pid, SIGCONT);
    relay_kill();
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "schema cache"));
    assert_true(ms >= 900 && ms < 5000);
    assert_int_equal(start_server(t, NULL), 0);
}

/* db-statement-timeout: FB4 cancels a slow statement with PostgREST's
   500 57014 and serves on; FB3 (protocol 15) refuses the key at start. */
static void test_rest_stmt_timeout(void **state) {
    target *t = *state;
    resp r;
    char p[256], sp[160], out[4096];
    if (t->version == 3) {
        assert_int_equal(run_with(t, "PGRST_DB_STATEMENT_TIMEOUT=300",
                                  "PGRST_LOG_LEVEL=info", out, sizeof out),
                         2);
        assert_non_null(strstr(out, "db-statement-timeout: the server speaks "
                                    "wire protocol 15; statement timeouts "
                                    "need protocol 16 (Firebird 4 or "
                                    "later)"));
        return;
    }
    ffb_conn *c = open_conn(t);
    slow_proc(c, t, 1);
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, "PGRST_DB_STATEMENT_TIMEOUT=300\n"), 0);
    /* a fast call of the same procedure: answered (cold: FB4 2) */
    snprintf(sp, sizeof sp, "/rpc/%s_slow?n=10", tname);
    http("GET", sp, NULL, &r);
    EXPECT(&r, 200, "[{\"x\":10}]");
    assert_int_equal(rts(&r), 2);
    /* about 10 s of counting: cancelled by the server after 300 ms */
    snprintf(sp, sizeof sp, "/rpc/%s_slow?n=40000000", tname);
    for (int i = 0; i < 2; i++) {
        int64_t t0 = now_ms();
        http("GET", sp, NULL, &r);
        int64_t ms = now_ms() - t0;
        fprintf(stderr, "statement timeout: %d after %lld ms (rt %d): %s\n",
                r.status, (long long)ms, rts(&r), r.body);
        assert_int_equal(r.status, 500);
        assert_non_null(strstr(r.body,
                               "{\"code\":\"57014\",\"message\":\"canceling "
                               "statement due to statement timeout\","
                               "\"details\":\""));
        assert_true(ms >= 250 && ms < 5000);
        /* the text was prepared above: start, execute, fetch and the
           end in one write: 1; the connection stays usable (not
           replaced), so the second call is warm too */
        assert_int_equal(rts(&r), 1);
    }
    /* served on */
    path(p, sizeof p, tname, "select=id&id=eq.5");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":5}]");
    snprintf(sp, sizeof sp, "/rpc/%s_slow?n=10", tname);
    http("GET", sp, NULL, &r);
    EXPECT(&r, 200, "[{\"x\":10}]");
    assert_int_equal(rts(&r), 1); /* the same connection, still warm */
    tls_finish(t, c, "DROP PROCEDURE %s_SLOW");
}

/* db-anon-role: without a token every request runs under the role (as
   the user FFBTEST, who has no grant of its own): the table the role may
   read answers, the other one gets PostgREST's anonymous 401 42501. */
static void test_rest_anon_role(void **state) {
    target *t = *state;
    resp r;
    char sql[256], role[40], env[1400], extra[120], p[256], want[400];
    ffb_conn *c = open_conn(t);
    snprintf(role, sizeof role, "R%dN", (int)getpid());
    snprintf(sql, sizeof sql, "CREATE ROLE %s", role);
    exec_sql_quiet(c, sql);
    snprintf(sql, sizeof sql, "GRANT SELECT ON %s TO ROLE %s", t->table, role);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT %s TO USER FFBTEST", role);
    exec_sql(c, sql);
    assert_int_equal(stop_server(), 0);
    snprintf(extra, sizeof extra, "PGRST_DB_ANON_ROLE=%s\n", role);
    ffbtest_env(t, extra, env, sizeof env);
    assert_int_equal(start_server(t, env), 0);
    path(p, sizeof p, tname, "select=id&id=eq.3");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":3}]");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":3}]");
    assert_int_equal(rts(&r), 1); /* warm: the role costs nothing */
    /* the blobs table: no grant to the role - an anonymous request
       refused by a privilege is PostgREST's 401 42501 (403 with a
       token), with WWW-Authenticate: Bearer */
    char lb[80];
    snprintf(lb, sizeof lb, "%s_bl", tname);
    path(p, sizeof p, lb, "select=id");
    http("GET", p, NULL, &r);
    fprintf(stderr, "anonymous, no grant: %d %s\n", r.status, r.body);
    assert_int_equal(r.status, 401);
    snprintf(want, sizeof want,
             "{\"code\":\"42501\",\"message\":\"permission denied: no "
             "SELECT access to TABLE %s_BL\",\"details\":%s,\"hint\":null}",
             t->table,
             /* FB4 adds a line naming the user */
             t->version == 3 ? "null" : "\"the effective user is FFBTEST\"");
    EXPECT(&r, 401, want);
    assert_string_equal(hdr(&r, "www-authenticate"), "Bearer");
    /* a write the role has no grant for: the same */
    path(p, sizeof p, tname, "id=eq.3");
    http("DELETE", p, NULL, &r);
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body, "\"code\":\"42501\""));
    assert_non_null(strstr(r.body, "no DELETE access"));
    /* and the granted read still works */
    path(p, sizeof p, tname, "select=id&id=eq.3");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":3}]");
    tls_finish(t, c, NULL);
    snprintf(sql, sizeof sql, "DROP ROLE %s", role);
    c = open_conn(t);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
}

/* server-cors-allowed-origins, server-max-filters and PATCH/DELETE with
   tx=rollback (db-tx-end = commit-allow-override), on one server. */
static void test_rest_origins_filters_rollback(void **state) {
    target *t = *state;
    resp r;
    char p[512], sql[256];
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql, "DROP TABLE %s_E", t->table);
    exec_sql_quiet(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_E (ID INTEGER NOT NULL PRIMARY KEY, NAME "
             "VARCHAR(20))",
             t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s_E SELECT 1, 'one' FROM RDB$DATABASE UNION ALL "
             "SELECT 2, 'two' FROM RDB$DATABASE",
             t->table);
    exec_sql(c, sql);
    assert_int_equal(stop_server(), 0);
    assert_int_equal(
        start_server(t, "PGRST_SERVER_CORS_ALLOWED_ORIGINS=https://a.example, "
                        "https://b.example\n"
                        "PGRST_SERVER_MAX_FILTERS=3\n"
                        "PGRST_DB_TX_END=commit-allow-override\n"),
        0);
    path(p, sizeof p, tname, "select=id&id=eq.1");

    /* a listed origin: echoed, with credentials (wai-cors) */
    http("GET", p, "Origin: https://b.example\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":1}]");
    assert_string_equal(hdr(&r, "access-control-allow-origin"),
                        "https://b.example");
    assert_string_equal(hdr(&r, "access-control-allow-credentials"), "true");
    assert_true(*hdr(&r, "access-control-expose-headers"));
    http("GET", p, "Origin: https://a.example\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":1}]");
    assert_string_equal(hdr(&r, "access-control-allow-origin"),
                        "https://a.example");
    assert_int_equal(rts(&r), 1);
    /* another origin: answered, without CORS headers (the browser then
       refuses it) */
    http("GET", p, "Origin: https://evil.example\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":1}]");
    assert_string_equal(hdr(&r, "access-control-allow-origin"), "");
    assert_string_equal(hdr(&r, "access-control-allow-credentials"), "");
    /* a prefix or a suffix of a listed origin is not it */
    http("GET", p, "Origin: https://b.exampl\r\n", &r);
    assert_string_equal(hdr(&r, "access-control-allow-origin"), "");
    http("GET", p, "Origin: https://b.example.evil\r\n", &r);
    assert_string_equal(hdr(&r, "access-control-allow-origin"), "");
    /* preflights: listed 200 with the methods, no database work;
       unlisted: no CORS headers */
    http("OPTIONS", p,
         "Origin: https://a.example\r\nAccess-Control-Request-Method: "
         "PATCH\r\n",
         &r);
    EXPECT(&r, 200, "");
    assert_string_equal(hdr(&r, "access-control-allow-origin"),
                        "https://a.example");
    assert_string_equal(hdr(&r, "access-control-allow-methods"),
                        "GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD");
    assert_int_equal(rts(&r), -1);
    http("OPTIONS", p,
         "Origin: https://evil.example\r\nAccess-Control-Request-Method: "
         "PATCH\r\n",
         &r);
    assert_string_equal(hdr(&r, "access-control-allow-origin"), "");
    assert_string_equal(hdr(&r, "access-control-allow-methods"), "");

    /* server-max-filters = 3: three answer, a fourth is refused before
       the database (an or= tree counts its leaves) */
    path(p, sizeof p, tname, "select=id&id=gt.0&id=lt.9&name=neq.x");
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 200);
    path(p, sizeof p, tname, "select=id&id=gt.0&id=lt.9&name=neq.x&qty=gt.0");
    http("GET", p, NULL, &r);
    EXPECT(&r, 400,
           "{\"code\":\"PGRST100\",\"message\":\"the request has more than 3 "
           "filters\",\"details\":null,\"hint\":null}");
    assert_int_equal(rts(&r), -1);
    path(p, sizeof p, tname, "select=id&id=gt.0&or=(id.eq.1,id.eq.2,id.eq.3)");
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "more than 3 filters"));

    /* PATCH and DELETE with tx=rollback: 204, nothing kept; warm, the
       start, the statement and the rollback go in one write: 1 */
    char te[96];
    snprintf(te, sizeof te, "%s_e", tname);
    for (int i = 0; i < 4; i++) {
        int del = i % 2; /* PATCH of row 1, DELETE of row 2, twice */
        path(p, sizeof p, te, del ? "id=eq.2" : "id=eq.1");
        if (del)
            http("DELETE", p, "Prefer: tx=rollback\r\n", &r);
        else
            http_json("PATCH", p, "Prefer: tx=rollback\r\n",
                      "{\"name\":\"changed\"}", &r);
        EXPECT(&r, 204, "");
        assert_string_equal(hdr(&r, "preference-applied"), "tx=rollback");
        if (i >= 2)
            assert_int_equal(rts(&r), 1);
    }
    /* with return=representation: the changed row, still rolled back */
    path(p, sizeof p, te, "id=eq.2");
    http("DELETE", p, "Prefer: tx=rollback, return=representation\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":2,\"name\":\"two\"}]");
    path(p, sizeof p, te, "select=id,name&order=id");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":1,\"name\":\"one\"},{\"id\":2,\"name\":\"two\"}]");

    tls_finish(t, c, "DROP TABLE %s_E");
}
