/*
 * ffb-rest's HTTP/1.1 edge against real Firebird 3.0 and 4.0 (issue 13
 * items 2 and 5): limits (URL, headers, body) with PostgREST's error shape
 * or h2o's 4xx and what happens to the connection after each, keep-alive
 * with pipelined requests answered in order, chunked request bodies,
 * clients that leave mid-request and mid-response, bytes that are not HTTP
 * - and Firebird going away behind ffb-proxy (bench/): the request in
 * flight and the next ones get 503 PGRST001 with the reason, /ready says
 * 503, and serving resumes once the link is back. And the idle close of
 * cached statements (db-prepared-statements-idle) and the per-role cap
 * of the pool (db-pool-max-per-role).
 * Under ASan the server's clean exit at the end (no leak) is part of the
 * suite.
 *
 * The HTTP client and the server's start and stop are test_it.c's.
 *
 *   test_rest_http <path of ffb-rest> [LeakSanitizer suppressions]
 */
#define REST_IT_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"
#include "test_it.c"

#include "tests/support/proxy.h"

static char ht[80]; /* the exposed name of the table: ID, NAME, PAD */
#define HT_ROWS 3000 /* a full read is ~600 KB: more than socket buffers */

static int h_setup(void **state) {
    target *t = *state;
    char sql[1024];
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_H (ID INTEGER NOT NULL PRIMARY KEY, NAME "
             "VARCHAR(20), PAD VARCHAR(200))",
             t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "EXECUTE BLOCK AS DECLARE I INTEGER = 1; BEGIN WHILE (I <= %d) "
             "DO BEGIN INSERT INTO %s_H VALUES (:I, 'n' || :I, LPAD('', 180, "
             "'p')); I = I + 1; END END",
             HT_ROWS, t->table);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    snprintf(ht, sizeof ht, "%s_H", t->table);
    lower(ht);
    return start_server(t, NULL);
}

static int h_teardown(void **state) {
    target *t = *state;
    char sql[256];
    int st = stop_server();
    if (st != 0) {
        fprintf(stderr, "ffb-rest exited with %d; log:\n%s\n", st, srv.log);
        server_exit_failed = 1;
    }
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql, "DROP TABLE %s_H", t->table);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    return st == 0 ? 0 : -1;
}

/* ---- one kept-alive connection ------------------------------------------- */

typedef struct hconn {
    int fd;
    char buf[1 << 20];
    size_t len; /* read, not yet returned */
} hconn;

static hconn *hc_open(void) {
    hconn *h = calloc(1, sizeof *h);
    assert_non_null(h);
    h->fd = connect_to(srv.port);
    assert_true(h->fd >= 0);
    return h;
}

static void hc_close(hconn *h) {
    if (h->fd >= 0)
        close(h->fd);
    free(h);
}

static void hc_send(hconn *h, const char *s, size_t n) {
    assert_int_equal(write(h->fd, s, n), (ssize_t)n);
}

/* More bytes within `ms`: 1, or 0 at EOF or on time-out. */
static int hc_fill(hconn *h, int ms) {
    struct pollfd p = {h->fd, POLLIN, 0};
    if (h->len == sizeof h->buf || poll(&p, 1, ms) <= 0)
        return 0;
    ssize_t r = read(h->fd, h->buf + h->len, sizeof h->buf - h->len);
    if (r <= 0)
        return 0;
    h->len += (size_t)r;
    return 1;
}

/* The next response (Content-Length or chunked, as h2o sends them; none
   after a HEAD): 0, or -1 when the connection ended (or 10 s went by)
   before one was whole. */
static int hc_read_as(hconn *h, resp *r, int head) {
    int64_t end = now_ms() + 4000;
    for (;;) {
        char *sep = NULL;
        for (size_t i = 0; i + 3 < h->len; i++)
            if (memcmp(h->buf + i, "\r\n\r\n", 4) == 0) {
                sep = h->buf + i;
                break;
            }
        if (sep) {
            size_t hl = (size_t)(sep - h->buf) + 4;
            memset(r, 0, sizeof *r);
            assert_true(hl - 4 < sizeof r->head);
            memcpy(r->head, h->buf, hl - 4);
            assert_int_equal(sscanf(r->head, "HTTP/1.1 %d", &r->status), 1);
            const char *cl = hdr(r, "content-length");
            if (head) {
                memmove(h->buf, h->buf + hl, h->len - hl);
                h->len -= hl;
                return 0;
            }
            if (*cl) {
                size_t bl = (size_t)strtoul(cl, NULL, 10);
                if (h->len >= hl + bl) {
                    assert_true(bl < sizeof r->body);
                    memcpy(r->body, h->buf + hl, bl);
                    r->body_len = bl;
                    memmove(h->buf, h->buf + hl + bl, h->len - hl - bl);
                    h->len -= hl + bl;
                    return 0;
                }
            } else if (strcasecmp(hdr(r, "transfer-encoding"), "chunked") ==
                       0) {
                /* size CRLF data CRLF ... 0 CRLF CRLF */
                size_t at = hl, bl = 0;
                int whole = 0;
                for (;;) {
                    char *nl = memchr(h->buf + at, '\n', h->len - at);
                    if (!nl)
                        break;
                    size_t n = (size_t)strtoul(h->buf + at, NULL, 16);
                    size_t data = (size_t)(nl - h->buf) + 1;
                    if (h->len < data + n + 2)
                        break;
                    if (n == 0) {
                        whole = h->len >= data + 2;
                        at = data + 2;
                        break;
                    }
                    assert_true(bl + n < sizeof r->body);
                    memcpy(r->body + bl, h->buf + data, n);
                    bl += n;
                    at = data + n + 2;
                }
                if (whole) {
                    r->body_len = bl;
                    memmove(h->buf, h->buf + at, h->len - at);
                    h->len -= at;
                    return 0;
                }
            } else {
                /* no length: the body runs to the end of the connection */
                while (hc_fill(h, 2000))
                    ;
                size_t bl = h->len - hl;
                assert_true(bl < sizeof r->body);
                memcpy(r->body, h->buf + hl, bl);
                r->body_len = bl;
                h->len = 0;
                return 0;
            }
        }
        int64_t left = end - now_ms();
        if (left <= 0 || !hc_fill(h, (int)left))
            return -1;
    }
}

static int hc_read(hconn *h, resp *r) { return hc_read_as(h, r, 0); }

/* The server closed the connection (EOF within 5 s, nothing more sent). */
static int hc_closed(hconn *h) {
    size_t before = h->len;
    while (hc_fill(h, 5000))
        ;
    struct pollfd p = {h->fd, POLLIN, 0};
    char c;
    return h->len == before && poll(&p, 1, 0) == 1 &&
           read(h->fd, &c, 1) == 0;
}

/* A GET of `q` on the table over `h`, kept alive. */
static void hc_get(hconn *h, const char *q, resp *r) {
    char req[4096];
    int n = snprintf(req, sizeof req, "GET /%s?%s HTTP/1.1\r\nHost: x\r\n\r\n",
                     ht, q);
    hc_send(h, req, (size_t)n);
    assert_int_equal(hc_read(h, r), 0);
}

/* The connection still serves: a read of row `id`, warm. */
static void hc_usable(hconn *h, int id) {
    resp r;
    char q[64], want[64];
    snprintf(q, sizeof q, "select=id,name&id=eq.%d", id);
    snprintf(want, sizeof want, "[{\"id\":%d,\"name\":\"n%d\"}]", id, id);
    hc_get(h, q, &r);
    EXPECT(&r, 200, want);
}

/* A fresh connection still serves (the server survived the last test). */
static void still_serving(void) {
    hconn *h = hc_open();
    hc_usable(h, 7);
    hc_close(h);
}

/* ---- the tests ------------------------------------------------------------ */

/* Over server-max-url-length (2000 here) and server-max-header-size (16384,
   the default): PostgREST's error shape, 414 and 431, and the connection
   stays usable (ours, not h2o's, refuse them: the request was read whole).
   A body over server-max-body (1 MiB, the default): h2o's 413 before the
   body is read, then it closes the connection cleanly - with a length, and
   chunked once the chunks pass the limit. */
static void test_http_limits(void **state) {
    (void)state;
    resp r;
    static char req[40000];
    hconn *h = hc_open();
    hc_usable(h, 1);
    /* the URL: 2100 bytes of query */
    int n = snprintf(req, sizeof req, "GET /%s?name=eq.", ht);
    memset(req + n, 'a', 2100);
    n += 2100;
    n += snprintf(req + n, sizeof req - (size_t)n,
                  " HTTP/1.1\r\nHost: x\r\n\r\n");
    hc_send(h, req, (size_t)n);
    assert_int_equal(hc_read(h, &r), 0);
    EXPECT(&r, 414,
           "{\"code\":\"PGRST100\",\"message\":\"The URL is longer than 2000 "
           "bytes\",\"details\":null,\"hint\":null}");
    assert_string_equal(hdr(&r, "content-type"),
                        "application/json; charset=utf-8");
    hc_usable(h, 2);
    /* the headers: two of 9000 bytes */
    n = snprintf(req, sizeof req, "GET /%s HTTP/1.1\r\nHost: x\r\n", ht);
    for (int k = 0; k < 2; k++) {
        n += snprintf(req + n, sizeof req - (size_t)n, "X-Big-%d: ", k);
        memset(req + n, 'b', 9000);
        n += 9000;
        n += snprintf(req + n, sizeof req - (size_t)n, "\r\n");
    }
    n += snprintf(req + n, sizeof req - (size_t)n, "\r\n");
    hc_send(h, req, (size_t)n);
    assert_int_equal(hc_read(h, &r), 0);
    EXPECT(&r, 431,
           "{\"code\":\"PGRST100\",\"message\":\"The request's headers are "
           "longer than 16384 bytes\",\"details\":null,\"hint\":null}");
    hc_usable(h, 3);
    /* the body, announced: 413 at once, then the connection is closed */
    n = snprintf(req, sizeof req,
                 "POST /%s HTTP/1.1\r\nHost: x\r\nContent-Type: "
                 "application/json\r\nContent-Length: 2000000\r\n\r\n",
                 ht);
    hc_send(h, req, (size_t)n);
    assert_int_equal(hc_read(h, &r), 0);
    assert_int_equal(r.status, 413);
    assert_true(hc_closed(h));
    hc_close(h);
    /* chunked: 64 KiB chunks up to 1.1 MiB; h2o stops at the limit */
    h = hc_open();
    n = snprintf(req, sizeof req,
                 "POST /%s HTTP/1.1\r\nHost: x\r\nContent-Type: "
                 "application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                 ht);
    hc_send(h, req, (size_t)n);
    static char chunk[65536 + 16];
    int cn = snprintf(chunk, sizeof chunk, "10000\r\n");
    memset(chunk + cn, ' ', 65536);
    memcpy(chunk + cn + 65536, "\r\n", 2);
    for (int k = 0; k < 18; k++)
        if (write(h->fd, chunk, (size_t)cn + 65538) < 0)
            break; /* closed under us: fine, the answer is read below */
    assert_int_equal(hc_read(h, &r), 0);
    assert_int_equal(r.status, 413);
    assert_true(hc_closed(h));
    hc_close(h);
    still_serving();
}

/* Keep-alive: 20 requests written at once on one connection (reads of
   different rows, a 404, an error of the parser, a HEAD, a write) are
   answered in order, each warm read costing 1 round trip. */
static void test_http_pipelined(void **state) {
    (void)state;
    resp r;
    static char req[20000];
    size_t n = 0;
    hconn *h = hc_open();
    hc_usable(h, 1); /* the text is prepared: warm below */
    for (int i = 1; i <= 20; i++) {
        if (i == 5)
            n += (size_t)snprintf(req + n, sizeof req - n,
                                  "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
        else if (i == 9)
            n += (size_t)snprintf(req + n, sizeof req - n,
                                  "GET /%s?id=zz.1 HTTP/1.1\r\nHost: x\r\n\r\n",
                                  ht);
        else if (i == 13)
            n += (size_t)snprintf(
                req + n, sizeof req - n,
                "HEAD /%s?select=id,name&id=eq.13 HTTP/1.1\r\nHost: x\r\n\r\n",
                ht);
        else if (i == 17)
            n += (size_t)snprintf(
                req + n, sizeof req - n,
                "PATCH /%s?id=eq.17 HTTP/1.1\r\nHost: x\r\nContent-Type: "
                "application/json\r\nContent-Length: 14\r\nPrefer: "
                "return=representation\r\n\r\n{\"name\":\"n17\"}",
                ht);
        else
            n += (size_t)snprintf(
                req + n, sizeof req - n,
                "GET /%s?select=id,name&id=eq.%d HTTP/1.1\r\nHost: x\r\n\r\n",
                ht, i);
    }
    hc_send(h, req, n);
    for (int i = 1; i <= 20; i++) {
        char want[128];
        assert_int_equal(hc_read_as(h, &r, i == 13), 0);
        if (i == 5) {
            assert_int_equal(r.status, 404);
            assert_non_null(strstr(r.body, "\"PGRST205\""));
            continue;
        }
        if (i == 9) {
            assert_int_equal(r.status, 400);
            assert_non_null(strstr(r.body, "\"PGRST100\""));
            continue;
        }
        if (i == 13) {
            /* HEAD: the headers of the GET, no body */
            assert_int_equal(r.status, 200);
            assert_string_equal(hdr(&r, "content-range"), "0-0/*");
            assert_int_equal(rts(&r), 1); /* warm */
            continue;
        }
        snprintf(want, sizeof want, "[{\"id\":%d,\"name\":\"n%d\"}]", i, i);
        if (i == 17) {
            /* the PATCH's row as it is now (cold or warm: not asserted) */
            assert_int_equal(r.status, 200);
            assert_non_null(strstr(r.body, "\"id\":17"));
            continue;
        }
        EXPECT(&r, 200, want);
        /* warm: start, execute, fetch and commit in one write */
        assert_int_equal(rts(&r), 1);
    }
    hc_usable(h, 21);
    hc_close(h);
}

/* A chunked request body (chunks splitting the JSON anywhere, a chunk
   extension, a trailer) is the same body as with a length. */
static void test_http_chunked(void **state) {
    (void)state;
    resp r;
    char req[2048];
    hconn *h = hc_open();
    int n = snprintf(req, sizeof req,
                     "POST /%s HTTP/1.1\r\nHost: x\r\nContent-Type: "
                     "application/json\r\nPrefer: return=representation\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n"
                     "5\r\n[{\"id\r\n"
                     "c;ext=1\r\n\":90001,\"nam\r\n"
                     "1\r\ne\r\n"
                     "10\r\n\":\"chunky\"},{\"id\r\n"
                     "15\r\n\":90002,\"name\":\"c2\"}]\r\n"
                     "0\r\nX-Trailer: t\r\n\r\n",
                     ht);
    hc_send(h, req, (size_t)n);
    assert_int_equal(hc_read(h, &r), 0);
    EXPECT(&r, 201,
           "[{\"id\":90001,\"name\":\"chunky\",\"pad\":null},"
           "{\"id\":90002,\"name\":\"c2\",\"pad\":null}]");
    /* and the connection goes on: the rows are there */
    hc_get(h, "select=id,name&id=gt.90000&order=id", &r);
    EXPECT(&r, 200,
           "[{\"id\":90001,\"name\":\"chunky\"},{\"id\":90002,\"name\":\"c2\"}]");
    n = snprintf(req, sizeof req,
                 "DELETE /%s?id=gt.90000 HTTP/1.1\r\nHost: x\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                 ht);
    hc_send(h, req, (size_t)n);
    assert_int_equal(hc_read(h, &r), 0);
    assert_int_equal(r.status, 204);
    hc_usable(h, 4);
    hc_close(h);
}

/* Clients that leave: with half a request line, after the headers of a
   body they never send, after half the body, while their read waits for
   the one pooled connection, and while their 600 KB answer is being
   written. The server keeps serving (and, under ASan, exits with nothing
   leaked at the end). */
static void test_http_disconnects(void **state) {
    (void)state;
    char req[1024];
    static char buf[4096];
    for (int k = 0; k < 3; k++) {
        int fd = connect_to(srv.port);
        assert_true(fd >= 0);
        int n;
        if (k == 0)
            n = snprintf(req, sizeof req, "GET /%s?sel", ht);
        else if (k == 1)
            n = snprintf(req, sizeof req,
                         "POST /%s HTTP/1.1\r\nHost: x\r\nContent-Type: "
                         "application/json\r\nContent-Length: 40\r\n\r\n",
                         ht);
        else
            n = snprintf(req, sizeof req,
                         "POST /%s HTTP/1.1\r\nHost: x\r\nContent-Type: "
                         "application/json\r\nContent-Length: 40\r\n\r\n"
                         "{\"id\":1,",
                         ht);
        assert_int_equal(write(fd, req, (size_t)n), n);
        close(fd);
    }
    /* five full reads queued on the pool of one connection, all gone */
    int fds[5];
    for (int k = 0; k < 5; k++) {
        fds[k] = connect_to(srv.port);
        assert_true(fds[k] >= 0);
        int n = snprintf(req, sizeof req,
                         "GET /%s?order=id HTTP/1.1\r\nHost: x\r\n\r\n", ht);
        assert_int_equal(write(fds[k], req, (size_t)n), n);
    }
    for (int k = 0; k < 5; k++)
        close(fds[k]);
    /* mid-response: the first 4 KB of the answer, then gone (a reset:
       unread data) */
    for (int k = 0; k < 5; k++) {
        int fd = connect_to(srv.port);
        assert_true(fd >= 0);
        int n = snprintf(req, sizeof req,
                         "GET /%s?order=id HTTP/1.1\r\nHost: x\r\n\r\n", ht);
        assert_int_equal(write(fd, req, (size_t)n), n);
        size_t got = 0;
        int64_t end = now_ms() + 10000;
        while (got < sizeof buf && now_ms() < end) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 1000) <= 0)
                continue;
            ssize_t r = read(fd, buf + got, sizeof buf - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        assert_true(got == sizeof buf);
        assert_memory_equal(buf, "HTTP/1.1 200", 12);
        close(fd);
    }
    /* the whole answer still comes to a client that stays */
    hconn *h = hc_open();
    resp r;
    char q[64];
    snprintf(q, sizeof q, "order=id&select=id,name");
    hc_get(h, q, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "{\"id\":3000,\"name\":\"n3000\"}]"));
    hc_usable(h, 5);
    hc_close(h);
}

/* Bytes that are not HTTP/1.1: each gets 400 (h2o's parser) or, when h2o
   still waits for the end of a request, the connection closed by
   server-request-timeout (2 s here); never a crash or a hang; then the
   server serves. */
static void test_http_garbage(void **state) {
    target *t = *state;
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, "PGRST_SERVER_REQUEST_TIMEOUT=2"), 0);
#define BYTES(s) {s, sizeof s - 1}
    static const struct {
        const char *bytes;
        size_t n;
    } cases[] = {
        BYTES("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"), /* TLS */
        BYTES("\0\0\0\0\0\0\0\0\r\n\r\n"),
        BYTES("GET / HTTP/9.9\r\n\r\n"),
        BYTES("GET /x HTTP/1.1\r\nNo colon here\r\n\r\n"),
        BYTES("GET /x HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"),
        BYTES("GET /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
              "Transfer-Encoding: chunked\r\n\r\nzz\r\n"),
        BYTES("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nqq\r\n"
              "\r\n"),
        BYTES("\xff\xfe\xfd GARBAGE \x80\x81\r\n\r\n"),
    };
#undef BYTES
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        hconn *h = hc_open();
        hc_send(h, cases[k].bytes, cases[k].n);
        resp r;
        int64_t t0 = now_ms();
        if (hc_read(h, &r) == 0) {
            if (r.status != 400)
                fprintf(stderr, "case %zu: %d\n", k, r.status);
            assert_int_equal(r.status, 400);
        } else {
            /* no answer: h2o waited for the rest (the last case) */
            assert_int_equal(k, sizeof cases / sizeof cases[0] - 1);
        }
        /* then closed (h2o does not go on after a bad request), within
           the request timeout */
        assert_true(hc_closed(h));
        assert_true(now_ms() - t0 < 8000);
        hc_close(h);
    }
    /* a request line of 200 KB and no end: h2o gives up */
    hconn *h = hc_open();
    static char line[200000];
    memcpy(line, "GET /", 5);
    memset(line + 5, 'A', sizeof line - 5);
    ssize_t w = write(h->fd, line, sizeof line);
    (void)w; /* may be cut short by the close */
    resp r;
    int64_t t0 = now_ms();
    if (hc_read(h, &r) == 0)
        assert_true(r.status >= 400 && r.status <= 499);
    assert_true(hc_closed(h));
    assert_true(now_ms() - t0 < 8000);
    hc_close(h);
    still_serving();
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, NULL), 0);
}

/* ---- Firebird going away ------------------------------------------------ */

/* A request on a fresh connection with `Connection: close`. */
static void get_close(const char *q, resp *r) {
    char p[256];
    path(p, sizeof p, ht, q);
    http("GET", p, NULL, r);
}

/* ffb-rest connected through ffb-proxy (50 ms each way): the proxy cuts
   every connection while a read is in flight, then refuses new ones, then
   lets them through again. */
static void test_http_firebird_away(void **state) {
    target *t = *state;
    it_proxy px;
    static const char *const args[] = {"--delay-ms", "50", NULL};
    it_proxy_start(&px, t->dsn, args);
    char host[64], db[512], env[1024];
    env_of(t, "DB", db, sizeof db);
    (void)host;
    snprintf(env, sizeof env,
             "PGRST_DB_URI=firebird://SYSDBA:masterkey@127.0.0.1:%d/%s\n"
             "PGRST_DB_POOL_ACQUISITION_TIMEOUT=3",
             px.port, db);
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, env), 0);
    resp r;
    get_close("select=id&id=eq.1", &r);
    get_close("select=id&id=eq.1", &r);
    EXPECT(&r, 200, "[{\"id\":1}]");
    assert_int_equal(rts(&r), 1); /* warm */

    /* in flight: the read's one round trip takes 100 ms; cut at ~40 */
    int fd = connect_to(srv.port);
    assert_true(fd >= 0);
    char req[256];
    int n = snprintf(req, sizeof req,
                     "GET /%s?select=id&id=eq.2 HTTP/1.1\r\nHost: x\r\n"
                     "Connection: close\r\n\r\n",
                     ht);
    assert_int_equal(write(fd, req, (size_t)n), n);
    struct timespec ts = {0, 40000000};
    nanosleep(&ts, NULL);
    assert_true(it_proxy_command(&px, "cut") >= 1);
    static char buf[65536];
    size_t got = read_all(fd, buf, sizeof buf);
    close(fd);
    parse_resp(buf, got, &r);
    if (r.status != 503)
        fprintf(stderr, "in flight: %d %s\n", r.status, r.body);
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST001\""));
    assert_string_equal(hdr(&r, "proxy-status"), "ffb-rest; error=PGRST001");

    /* refused: the pool cannot connect; the answer says why */
    it_proxy_command(&px, "refuse");
    get_close("select=id&id=eq.3", &r);
    if (r.status != 503)
        fprintf(stderr, "refused: %d %s\n", r.status, r.body);
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(r.body, "\"code\":\"PGRST001\""));
    assert_non_null(strstr(r.body, "\"details\":\""));
    admin("GET", "/ready", &r);
    assert_int_equal(r.status, 503);
    admin("GET", "/live", &r);
    assert_int_equal(r.status, 200);

    /* back: serving resumes (the pool reconnects; its retry may wait) */
    it_proxy_command(&px, "open");
    int64_t end = now_ms() + 20000;
    do {
        get_close("select=id&id=eq.3", &r);
        if (r.status == 200)
            break;
        assert_int_equal(r.status, 503);
        nanosleep(&ts, NULL);
    } while (now_ms() < end);
    EXPECT(&r, 200, "[{\"id\":3}]");
    get_close("select=id&id=eq.3", &r);
    EXPECT(&r, 200, "[{\"id\":3}]");
    assert_int_equal(rts(&r), 1); /* warm again on the new connection */
    admin("GET", "/ready", &r);
    assert_int_equal(r.status, 200);

    assert_int_equal(stop_server(), 0);
    it_proxy_stop(&px);
    assert_int_equal(start_server(t, NULL), 0);
}

/* ---- db-prepared-statements-idle ----------------------------------------- */

/* (The monitoring tables would show the statements and attachments on
   the server, but a MON$ query on the shared Firebird 3.0.11 instance was
   followed by its crash - an assertion in pthread_mutex_lock - so these
   tests count from ffb-rest's log and ffb-proxy's connections instead.)

   db-prepared-statements-idle = 1: cached statements unused for 1 s are
   freed (ffb-rest's log says how many) when their connection is next used,
   the free riding with that request (no round trip of its own), and its
   next use prepares it again with its execute (libfastfb remembered its
   formats and kept its handle: 1, on FB3 too - the prepare names the
   lazy start 0xFFFF on the kept handle). */
static void test_http_stmt_idle(void **state) {
    target *t = *state;
    int cold = t->version == 3 ? 3 : 2; /* start+prepare (FB3: 2) + execute */
    char p[256], q[256];
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, "PGRST_DB_PREPARED_STATEMENTS_IDLE=1"), 0);
    path(p, sizeof p, ht, "select=pad&id=eq.1");
    path(q, sizeof q, ht, "select=name&id=eq.2");
    resp r;
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(rts(&r), cold);
    http("GET", p, NULL, &r);
    assert_int_equal(rts(&r), 1); /* kept */
    http("GET", q, NULL, &r);
    assert_int_equal(rts(&r), cold);
    read_log(now_ms() + 100, NULL);
    assert_null(strstr(srv.log, "unused for 1 s freed"));
    struct timespec ts = {1, 300000000};
    nanosleep(&ts, NULL);
    /* both idle for 1.3 s: freed as q's request gets the connection (the
       frees go with its first write; their handles are kept as spares);
       q prepared anew on one of them */
    http("GET", q, NULL, &r);
    EXPECT(&r, 200, "[{\"name\":\"n2\"}]");
    assert_int_equal(rts(&r), 1);
    read_log(now_ms() + 2000, "freed");
    assert_non_null(strstr(srv.log, "2 prepared statements unused for 1 s "
                                    "freed"));
    http("GET", q, NULL, &r);
    assert_int_equal(rts(&r), 1); /* q, used just now, is kept */
    /* p again: prepared anew on the other spare handle */
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"pad\":\"pppp"));
    assert_int_equal(rts(&r), 1);
    http("GET", p, NULL, &r);
    assert_int_equal(rts(&r), 1);
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, NULL), 0);
}

/* ---- db-pool-max-per-role --------------------------------------------------- */

/* Six reads of one JWT role at once: answered (200 each); then the
   connections ffb-rest holds through the proxy (only the role's pool has
   any: no request ran without the token), counted by cutting them. */
static unsigned role_burst(it_proxy *px, const char *auth) {
    char req[4096];
    int fds[6];
    int n = snprintf(req, sizeof req,
                     "GET /%s?select=id,pad&order=id&limit=500 HTTP/1.1\r\n"
                     "Host: x\r\nConnection: close\r\n%s\r\n",
                     ht, auth);
    for (int k = 0; k < 6; k++) {
        fds[k] = connect_to(srv.port);
        assert_true(fds[k] >= 0);
        assert_int_equal(write(fds[k], req, (size_t)n), n);
    }
    static char buf[300000];
    for (int k = 0; k < 6; k++) {
        resp r;
        size_t got = read_all(fds[k], buf, sizeof buf);
        close(fds[k]);
        parse_resp(buf, got, &r);
        if (r.status != 200)
            fprintf(stderr, "role read: %d %s\n", r.status, r.body);
        assert_int_equal(r.status, 200);
        assert_non_null(strstr(r.body, "{\"id\":500,"));
    }
    return it_proxy_command(px, "cut");
}

/* db-pool-max-per-role = 1 with db-pool = 4: six reads of one role at once
   are all answered on the one connection the role may have, while
   without the cap the same burst opens more than one (the six wait for the
   role's check together and are handed out at once: up to the pool's 4).
   ffb-rest talks to Firebird through ffb-proxy, which counts them. */
static void test_http_role_cap(void **state) {
    target *t = *state;
    char role[40], sql[256], auth[2400], claims[128], env[1600], db[512];
    it_proxy px;
    static const char *const args[] = {NULL};
    it_proxy_start(&px, t->dsn, args);
    env_of(t, "DB", db, sizeof db);
    snprintf(role, sizeof role, "R%dH", (int)getpid());
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql, "CREATE ROLE %s", role);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT %s TO SYSDBA", role);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    snprintf(claims, sizeof claims, "{\"role\":\"%s\"}", role);
    bearer("HS256", claims, JWT_SECRET, auth, sizeof auth);
    for (int capped = 1; capped >= 0; capped--) {
        snprintf(env, sizeof env,
                 "PGRST_DB_URI=firebird://SYSDBA:masterkey@127.0.0.1:%d/%s\n"
                 "PGRST_JWT_SECRET=" JWT_SECRET "\nPGRST_DB_POOL=4\n%s",
                 px.port, db, capped ? "PGRST_DB_POOL_MAX_PER_ROLE=1" : "");
        assert_int_equal(stop_server(), 0);
        assert_int_equal(start_server(t, env), 0);
        unsigned n = role_burst(&px, auth);
        fprintf(stderr, "%s: %u connection(s) of the role\n",
                capped ? "db-pool-max-per-role = 1" : "no cap", n);
        if (capped)
            assert_int_equal(n, 1);
        else
            assert_true(n > 1 && n <= 4);
    }
    assert_int_equal(stop_server(), 0);
    it_proxy_stop(&px);
    c = open_conn(t);
    snprintf(sql, sizeof sql, "DROP ROLE %s", role);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_limits),
        cmocka_unit_test(test_http_pipelined),
        cmocka_unit_test(test_http_chunked),
        cmocka_unit_test(test_http_disconnects),
        cmocka_unit_test(test_http_garbage),
        cmocka_unit_test(test_http_firebird_away),
        cmocka_unit_test(test_http_stmt_idle),
        cmocka_unit_test(test_http_role_cap),
    };
    return rest_it_run(argc, argv, "test_rest_http", "RESTH", tests,
                       sizeof tests / sizeof tests[0], h_setup, h_teardown);
}
