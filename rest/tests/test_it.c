/*
 * ffb-rest against real Firebird 3.0 and 4.0 (instances fb3 and fb4 of
 * servers.env, wire encryption required). For each server the suite
 * makes its tables, starts ffb-rest itself on free ports (PGRST_*
 * variables), talks HTTP/1.1 to it with plain sockets, and checks the
 * status, the headers, the body and the round trips that Server-Timing
 * reports (db;desc="rt=N", read from the connection's counter before and
 * after the request) - exactly, with the reason beside each number.
 *
 *   test_rest_it <path of ffb-rest> [LeakSanitizer suppressions]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "include/fastfb.h"
#include "rest/jwt.h"
#include "tests/support/it.h"

typedef it_target target;

static const char *server_path;
static const char *lsan_supp; /* argv[2]: LeakSanitizer suppressions */
/* A server that did not stop cleanly (exit status 0 after SIGTERM: with
   ASan, leaks make it non-zero) fails the suite. */
static int server_exit_failed;

/* The running ffb-rest of the current target. */
static struct {
    pid_t pid;
    int port;
    int admin_port;
    int err_fd;
    char log[16384];
    size_t loglen;
} srv;

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int free_port(void) {
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &l) < 0)
        return -1;
    close(fd);
    return ntohs(a.sin_port);
}

/* ---- a tiny HTTP/1.1 client ---------------------------------------------- */

typedef struct resp {
    int status;
    char head[8192];
    char body[262144];
    size_t body_len;
} resp;

static int connect_to(int port) {
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Everything until the server closes (Connection: close), 10 s at most. */
static size_t read_all(int fd, char *buf, size_t cap) {
    size_t n = 0;
    int64_t end = now_ms() + 10000;
    while (n < cap) {
        struct pollfd p = {fd, POLLIN, 0};
        int64_t left = end - now_ms();
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        ssize_t r = read(fd, buf + n, cap - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    return n;
}

static void parse_resp(const char *raw, size_t n, resp *r) {
    memset(r, 0, sizeof *r);
    const char *sep = NULL;
    for (size_t i = 0; i + 3 < n; i++)
        if (memcmp(raw + i, "\r\n\r\n", 4) == 0) {
            sep = raw + i;
            break;
        }
    assert_non_null(sep);
    size_t hl = (size_t)(sep - raw);
    assert_true(hl < sizeof r->head);
    memcpy(r->head, raw, hl);
    r->head[hl] = '\0';
    assert_int_equal(sscanf(r->head, "HTTP/1.1 %d", &r->status), 1);
    r->body_len = n - hl - 4;
    assert_true(r->body_len < sizeof r->body);
    memcpy(r->body, sep + 4, r->body_len);
    r->body[r->body_len] = '\0';
}

/* Send `raw` as it is; parse what comes back. */
static void http_raw(int port, const char *raw, size_t len, resp *r) {
    static char buf[300000];
    int fd = connect_to(port);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, raw, len), (ssize_t)len);
    size_t n = read_all(fd, buf, sizeof buf);
    close(fd);
    parse_resp(buf, n, r);
}

/* `method path` with extra header lines ("Name: value\r\n" each). */
static void http(const char *method, const char *path, const char *hdrs,
                 resp *r) {
    char req[20000];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: "
                     "close\r\n%s\r\n",
                     method, path, hdrs ? hdrs : "");
    assert_true(n > 0 && (size_t)n < sizeof req);
    http_raw(srv.port, req, (size_t)n, r);
}

/* The value of header `name` ("" when absent). */
static const char *hdr(const resp *r, const char *name) {
    static char v[1024];
    size_t nl = strlen(name);
    v[0] = '\0';
    for (const char *p = strstr(r->head, "\r\n"); p; p = strstr(p, "\r\n")) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *s = p + nl + 1;
            while (*s == ' ')
                s++;
            const char *e = strstr(s, "\r\n");
            size_t vn = e ? (size_t)(e - s) : strlen(s);
            if (vn >= sizeof v)
                vn = sizeof v - 1;
            memcpy(v, s, vn);
            v[vn] = '\0';
            return v;
        }
    }
    return v;
}

/* The round trips of Server-Timing: db;desc="rt=N"; -1 when absent. */
static int rts(const resp *r) {
    int n;
    if (sscanf(hdr(r, "server-timing"), "db;desc=\"rt=%d\"", &n) != 1)
        return -1;
    return n;
}

#define EXPECT(r, st, want)                                                    \
    do {                                                                       \
        if ((r)->status != (st) || strcmp((r)->body, (want)) != 0)             \
            fprintf(stderr, "got %d %s\n", (r)->status, (r)->body);            \
        assert_int_equal((r)->status, (st));                                   \
        assert_string_equal((r)->body, (want));                                \
    } while (0)

/* ---- the server ------------------------------------------------------------
 */

static void env_of(const target *t, const char *what, char *out, size_t n) {
    char var[64];
    snprintf(var, sizeof var, "FFB_TEST_%s_%s", t->name, what);
    const char *v = getenv(var);
    snprintf(out, n, "%s", v ? v : "");
}

static void read_log(int64_t until_ms, const char *want) {
    while (now_ms() < until_ms) {
        struct pollfd p = {srv.err_fd, POLLIN, 0};
        if (poll(&p, 1, 100) > 0) {
            ssize_t r = read(srv.err_fd, srv.log + srv.loglen,
                             sizeof srv.log - 1 - srv.loglen);
            if (r <= 0)
                return;
            srv.loglen += (size_t)r;
            srv.log[srv.loglen] = '\0';
        }
        if (want && strstr(srv.log, want))
            return;
    }
}

static int start_server(const target *t, const char *extra_env) {
    char host[64], port[16], db[512], uri[700];
    int pfd[2];
    env_of(t, "HOST", host, sizeof host);
    env_of(t, "PORT", port, sizeof port);
    env_of(t, "DB", db, sizeof db);
    snprintf(uri, sizeof uri, "firebird://SYSDBA:masterkey@%s:%s/%s", host,
             port, db);
    srv.port = free_port();
    srv.admin_port = free_port();
    srv.loglen = 0;
    srv.log[0] = '\0';
    if (pipe(pfd) < 0)
        return -1;
    srv.pid = fork();
    if (srv.pid == 0) {
        char v[32];
        dup2(pfd[1], 2);
        close(pfd[0]);
        setenv("PGRST_DB_URI", uri, 1);
        snprintf(v, sizeof v, "%d", srv.port);
        setenv("PGRST_SERVER_PORT", v, 1);
        snprintf(v, sizeof v, "%d", srv.admin_port);
        setenv("PGRST_ADMIN_SERVER_PORT", v, 1);
        setenv("PGRST_SERVER_HOST", "127.0.0.1", 1);
        setenv("PGRST_SERVER_TIMING_ENABLED", "true", 1);
        /* one connection: every statement cache hit is certain (with more, a
           request may get the connection whose reset after the previous
           request is still running: the other one, cold) */
        setenv("PGRST_DB_POOL", "1", 1);
        setenv("PGRST_LOG_LEVEL", "info", 1);
        setenv("PGRST_SERVER_MAX_IN_LIST", "50", 1);
        setenv("PGRST_SERVER_MAX_URL_LENGTH", "2000", 1);
        setenv("PGRST_DB_PROBE_ROWS", "3", 1);
        /* NAME=value lines */
        for (const char *e = extra_env; e && *e;) {
            char kv[1024];
            const char *nl = strchr(e, '\n');
            size_t kn = nl ? (size_t)(nl - e) : strlen(e);
            snprintf(kv, sizeof kv, "%.*s", (int)kn, e);
            char *eq = strchr(kv, '=');
            if (eq) {
                *eq = '\0';
                setenv(kv, eq + 1, 1);
            }
            e += kn + (nl != NULL);
        }
        if (lsan_supp) {
            /* h2o's per-thread recycle lists (lsan.supp) */
            char lo[1200];
            const char *old = getenv("LSAN_OPTIONS");
            snprintf(lo, sizeof lo, "%s%ssuppressions=%s", old ? old : "",
                     old && *old ? ":" : "", lsan_supp);
            setenv("LSAN_OPTIONS", lo, 1);
        }
        execl(server_path, server_path, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    srv.err_fd = pfd[0];
    read_log(now_ms() + 30000, "listening on");
    if (!strstr(srv.log, "listening on")) {
        fprintf(stderr, "ffb-rest did not start:\n%s\n", srv.log);
        return -1;
    }
    return 0;
}

/* SIGTERM, then the exit status (0 expected: a clean stop). */
static int stop_server(void) {
    int st = 0;
    if (srv.pid <= 0)
        return -1;
    kill(srv.pid, SIGTERM);
    int64_t end = now_ms() + 15000;
    while (now_ms() < end) {
        pid_t w = waitpid(srv.pid, &st, WNOHANG);
        if (w == srv.pid) {
            srv.pid = 0;
            read_log(now_ms() + 100, NULL);
            close(srv.err_fd);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    kill(srv.pid, SIGKILL);
    waitpid(srv.pid, &st, 0);
    srv.pid = 0;
    close(srv.err_fd);
    return -2;
}

/* ---- the tables
 * --------------------------------------------------------------- */

static ffb_conn *open_conn(const target *t) {
    ffb_conn_options o;
    ffb_conn *c;
    ffb_conn_options_init(&o);
    o.dsn = t->dsn;
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.io_timeout_ms = 60000;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    int rc = ffb_conn_connect(c);
    if (rc < 0)
        fprintf(stderr, "connect %s: %s\n", t->dsn,
                ffb_error_message(ffb_conn_error(c)));
    assert_int_equal(rc, 0);
    return c;
}

static void exec_sql(ffb_conn *c, const char *sql) {
    ffb_tx *tx;
    assert_int_equal(ffb_tx_begin(c, NULL, &tx), 0);
    int rc = ffb_conn_execute_immediate(c, tx, sql, (size_t)-1);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", sql, ffb_error_message(ffb_conn_error(c)));
    assert_int_equal(rc, 0);
    rc = ffb_tx_commit(tx);
    if (rc < 0)
        fprintf(stderr, "%s: commit: %s\n", sql,
                ffb_error_message(ffb_conn_error(c)));
    assert_int_equal(rc, 0);
    ffb_tx_free(tx);
}

/* `sql` in its own transaction, a failure ignored (drops of what a failed
   run may have left). */
static void exec_sql_quiet(ffb_conn *c, const char *sql) {
    ffb_tx *tx;
    if (ffb_tx_begin(c, NULL, &tx) == 0) {
        if (ffb_conn_execute_immediate(c, tx, sql, (size_t)-1) == 0)
            ffb_tx_commit(tx);
        else
            ffb_tx_rollback(tx);
        ffb_tx_free(tx);
    }
}

static char tname[64];  /* the exposed (lower case) name of t->table */
static char t4name[64]; /* the FB4 types table */
static char tbname[80]; /* the blobs table */

static int setup(void **state) {
    target *t = *state;
    char sql[2048];
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, NAME "
             "VARCHAR(40) NOT NULL, PRICE NUMERIC(9,2), QTY SMALLINT, BIG "
             "BIGINT, RATIO DOUBLE PRECISION, OK BOOLEAN, D DATE, TM TIME, TS "
             "TIMESTAMP, CODE CHAR(4), BIN VARCHAR(4) CHARACTER SET OCTETS, "
             "TOTAL COMPUTED BY (PRICE * QTY))",
             t->table);
    exec_sql(c, sql);
    static const char *const rows[] = {
        "1, 'alpha', 12.50, 3, 9007199254740993, 0.1, TRUE, '2024-02-29', "
        "'13:45:30.1234', '2024-02-29 13:45:30.5', 'ab', x'00FF'",
        "2, 'Beta', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
        "NULL",
        "3, 'gamma \"q\"', 1.05, 1, -5, 1e300, FALSE, '1999-12-31', "
        "'00:00:00', '2000-01-01 00:00:00', 'abcd', x''",
        "4, 'tab\tand\\back', 7, 2, 0, -2.5, TRUE, NULL, NULL, NULL, NULL, "
        "NULL",
        "5, 'Tom Sawyer', NULL, 5, 1, 0, FALSE, NULL, NULL, NULL, NULL, NULL"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (%s)", t->table,
                 rows[i]);
        exec_sql(c, sql);
    }
    snprintf(tname, sizeof tname, "%s", t->table);
    for (char *p = tname; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    snprintf(tbname, sizeof tbname, "%s_BL", t->table);
    snprintf(
        sql, sizeof sql,
        "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, TXT BLOB SUB_TYPE "
        "TEXT, BIN BLOB SUB_TYPE BINARY)",
        tbname);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s VALUES (1, 'hello \"blob\"', x'0001FF')", tbname);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (2, NULL, NULL)", tbname);
    exec_sql(c, sql);
    /* 8000 bytes doubled 4 times: 128000, more than one read's 64 KiB */
    snprintf(
        sql, sizeof sql,
        "INSERT INTO %s VALUES (3, CAST(LPAD('', 8000, 'ab') AS BLOB SUB_TYPE "
        "TEXT), NULL)",
        tbname);
    exec_sql(c, sql);
    for (int i = 0; i < 4; i++) {
        snprintf(sql, sizeof sql, "UPDATE %s SET TXT = TXT || TXT WHERE ID = 3",
                 tbname);
        exec_sql(c, sql);
    }
    for (char *p = tbname; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    /* a child with a foreign key, a default and an identity column: for
       the schema cache */
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s_CH (ID INTEGER NOT NULL, SEQ INTEGER NOT NULL, "
             "PARENT_ID INTEGER CONSTRAINT FK_%s REFERENCES %s (ID), NOTE "
             "VARCHAR(10) DEFAULT 'x', G INTEGER GENERATED BY DEFAULT AS "
             "IDENTITY, \"Mixed Name\" CHAR(2), CONSTRAINT PK_%s PRIMARY KEY "
             "(ID, SEQ))",
             t->table, t->table, t->table, t->table);
    exec_sql(c, sql);
    t4name[0] = '\0';
    if (t->version >= 4) {
        snprintf(sql, sizeof sql,
                 "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, I128 "
                 "INT128, DF16 DECFLOAT(16), DF34 DECFLOAT(34), N38 "
                 "NUMERIC(38,4), TSZ TIMESTAMP WITH TIME ZONE, TMZ TIME WITH "
                 "TIME ZONE, TSR TIMESTAMP WITH TIME ZONE)",
                 t->btable);
        exec_sql(c, sql);
        snprintf(sql, sizeof sql,
                 "INSERT INTO %s VALUES (1, "
                 "170141183460469231731687303715884105727, 12.345, "
                 "-0.000001, 12345678901234567890123456789012.3456, "
                 "'2024-07-01 12:00:00 +02:00', '10:11:12.5 -03:30', "
                 "'2024-07-01 12:00:00 Europe/Prague')",
                 t->btable);
        exec_sql(c, sql);
        /* the same region in winter: the offset follows the instant */
        snprintf(sql, sizeof sql,
                 "INSERT INTO %s (ID, TSR) VALUES (2, '2024-01-15 12:00:00 "
                 "Europe/Prague')",
                 t->btable);
        exec_sql(c, sql);
        snprintf(t4name, sizeof t4name, "%s", t->btable);
        for (char *p = t4name; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
    }
    ffb_conn_close(c);
    ffb_conn_free(c);
    return start_server(t, NULL);
}

static void w_drop_quiet(ffb_conn *c, const target *t);  /* it_write.h */
static void wd_drop_quiet(ffb_conn *c, const target *t); /* it_wide.h */

static int teardown(void **state) {
    target *t = *state;
    char sql[256];
    int st = stop_server();
    if (st != 0) {
        fprintf(stderr, "ffb-rest exited with %d; log:\n%s\n", st, srv.log);
        server_exit_failed = 1;
    }
    ffb_conn *c = open_conn(t);
    w_drop_quiet(c, t);  /* left by a failed test_rest_write */
    wd_drop_quiet(c, t); /* ... test_rest_wide_answers */
    snprintf(sql, sizeof sql, "DROP TABLE %s_CH", t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "DROP TABLE %s", t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "DROP TABLE %s_BL", t->table);
    exec_sql(c, sql);
    if (t->version >= 4) {
        snprintf(sql, sizeof sql, "DROP TABLE %s", t->btable);
        exec_sql(c, sql);
    }
    ffb_conn_close(c);
    ffb_conn_free(c);
    return st == 0 ? 0 : -1;
}

/* ---- the tests
 * ------------------------------------------------------------------ */

static void path(char *out, size_t n, const char *table, const char *query) {
    snprintf(out, n, "/%s%s%s", table, query && *query ? "?" : "",
             query ? query : "");
}

static void test_rest_live_ready(void **state) {
    (void)state;
    resp r;
    char req[128];
    int n = snprintf(req, sizeof req,
                     "GET /live HTTP/1.1\r\nHost: x\r\nConnection: "
                     "close\r\n\r\n");
    http_raw(srv.admin_port, req, (size_t)n, &r);
    EXPECT(&r, 200, "");
    n = snprintf(req, sizeof req,
                 "GET /ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    http_raw(srv.admin_port, req, (size_t)n, &r);
    EXPECT(&r, 200, "");
    assert_non_null(strstr(srv.log, "schema cache:"));
}

/* A filtered, ordered page: cold, then warm. */
static void test_rest_get_filter_order(void **state) {
    target *t = *state;
    resp r;
    char p[512];
    path(p, sizeof p, tname,
         "select=id,name&id=gte.2&order=id.desc&limit=2&offset=1");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":4,\"name\":\"tab\\tand\\\\back\"},"
           "{\"id\":3,\"name\":\"gamma \\\"q\\\"\"}]");
    /* Cold: FB4 = 2 (transaction start + prepare; execute + fetch +
       commit). FB3 prepares only once the transaction's start is
       answered: 3 (start; prepare; execute + fetch + commit). */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    assert_string_equal(hdr(&r, "content-range"), "1-2/*");
    assert_string_equal(hdr(&r, "content-type"),
                        "application/json; charset=utf-8");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":4,\"name\":\"tab\\tand\\\\back\"},"
           "{\"id\":3,\"name\":\"gamma \\\"q\\\"\"}]");
    /* Warm: the statement is in the connection's cache: start, execute
       with its first fetch, and commit in one write = 1. */
    assert_int_equal(rts(&r), 1);
}

static void test_rest_get_operators(void **state) {
    (void)state;
    resp r;
    char p[512];
    static const struct {
        const char *q;
        const char *body;
    } cases[] = {
        {"select=id&name=like.*am*&order=id", "[{\"id\":3}]"},
        {"select=id&name=like.*BE*", "[]"}, /* like is case-sensitive */
        {"select=id&name=like.B_ta", "[{\"id\":2}]"},
        {"select=id&name=ilike.*BE*&order=id", "[{\"id\":2}]"},
        {"select=id&name=ilike.t*&order=id", "[{\"id\":4},{\"id\":5}]"},
        {"select=id&id=in.(1,3,99)&order=id", "[{\"id\":1},{\"id\":3}]"},
        {"select=id&id=in.()", "[]"},
        {"select=id&price=is.null&order=id", "[{\"id\":2},{\"id\":5}]"},
        {"select=id&ok=is.true&order=id", "[{\"id\":1},{\"id\":4}]"},
        {"select=id&ok=not.is.true&order=id", "[{\"id\":2},{\"id\":3},"
                                              "{\"id\":5}]"},
        {"select=id&qty=isdistinct.5&order=id", "[{\"id\":1},{\"id\":2},"
                                                "{\"id\":3},{\"id\":4}]"},
        {"select=id&id=neq.1&id=lt.4&order=id", "[{\"id\":2},{\"id\":3}]"},
        {"select=id&or=(id.eq.1,and(price.gt.5,qty.lte.2))&order=id",
         "[{\"id\":1},{\"id\":4}]"},
        {"select=id&not.or=(id.lt.3,id.gt.4)&order=id", "[{\"id\":3},"
                                                        "{\"id\":4}]"},
        {"select=id&name=eq.Tom%20Sawyer", "[{\"id\":5}]"},
        {"select=id&limit=0", "[]"},
        /* PostgreSQL's null order: nulls last on asc, first on desc */
        {"select=id&order=price.asc,id", "[{\"id\":3},{\"id\":4},{\"id\":1},"
                                         "{\"id\":2},{\"id\":5}]"},
        {"select=id&order=price.desc,id", "[{\"id\":2},{\"id\":5},{\"id\":1},"
                                          "{\"id\":4},{\"id\":3}]"},
        {"select=id&order=price.asc.nullsfirst,id.desc",
         "[{\"id\":5},{\"id\":2},{\"id\":3},{\"id\":4},{\"id\":1}]"},
        {"select=n:name,id::text&id=eq.1", "[{\"n\":\"alpha\",\"id\":\"1\"}]"},
        /* an injection attempt is a value like any other */
        {"select=id&name=eq.%27%29%3B%20DROP%20TABLE%20X%3B%20--", "[]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        path(p, sizeof p, tname, cases[i].q);
        http("GET", p, NULL, &r);
        if (strcmp(r.body, cases[i].body) != 0)
            fprintf(stderr, "case %s\n", cases[i].q);
        EXPECT(&r, 200, cases[i].body);
    }
}

static void test_rest_types(void **state) {
    target *t = *state;
    resp r;
    char p[512];
    path(p, sizeof p, tname, "id=eq.1");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":1,\"name\":\"alpha\",\"price\":12.50,\"qty\":3,"
           "\"big\":9007199254740993,\"ratio\":0.1,\"ok\":true,"
           "\"d\":\"2024-02-29\",\"tm\":\"13:45:30.1234\","
           "\"ts\":\"2024-02-29T13:45:30.5\",\"code\":\"ab  \","
           "\"bin\":\"\\\\x00ff\",\"total\":37.50}]");
    path(p, sizeof p, tname, "id=eq.3");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":3,\"name\":\"gamma \\\"q\\\"\",\"price\":1.05,\"qty\":1,"
           "\"big\":-5,\"ratio\":1e+300,\"ok\":false,\"d\":\"1999-12-31\","
           "\"tm\":\"00:00:00\",\"ts\":\"2000-01-01T00:00:00\","
           "\"code\":\"abcd\",\"bin\":\"\\\\x\",\"total\":1.05}]");
    path(p, sizeof p, tname, "id=eq.2");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":2,\"name\":\"Beta\",\"price\":null,\"qty\":null,"
           "\"big\":null,\"ratio\":null,\"ok\":null,\"d\":null,\"tm\":null,"
           "\"ts\":null,\"code\":null,\"bin\":null,\"total\":null}]");
    if (t->version < 4)
        return;
    path(p, sizeof p, t4name, "order=id");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":1,\"i128\":170141183460469231731687303715884105727,"
           "\"df16\":12.345,\"df34\":-0.000001,"
           "\"n38\":12345678901234567890123456789012.3456,"
           "\"tsz\":\"2024-07-01T12:00:00+02:00\","
           "\"tmz\":\"10:11:12.5-03:30\","
           "\"tsr\":\"2024-07-01T12:00:00+02:00\"},"
           "{\"id\":2,\"i128\":null,\"df16\":null,\"df34\":null,"
           "\"n38\":null,\"tsz\":null,\"tmz\":null,"
           "\"tsr\":\"2024-01-15T12:00:00+01:00\"}]");
}

static void test_rest_count_exact(void **state) {
    target *t = *state;
    resp r;
    char p[512];
    path(p, sizeof p, tname, "select=id&order=id&limit=2");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 206, "[{\"id\":1},{\"id\":2}]");
    /* Cold: two statements to prepare (page and count), in one write:
       FB4 2, FB3 3 (the prepares wait for the start's answer). */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    assert_string_equal(hdr(&r, "content-range"), "0-1/5");
    assert_string_equal(hdr(&r, "preference-applied"), "count=exact");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 206, "[{\"id\":1},{\"id\":2}]");
    /* Warm: start, page, count, commit in one write = 1. */
    assert_int_equal(rts(&r), 1);
    /* the whole table: 200 */
    path(p, sizeof p, tname, "select=id&id=gt.3&order=id");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":4},{\"id\":5}]");
    assert_string_equal(hdr(&r, "content-range"), "0-1/2");
    /* an offset past the end: 416 PGRST103 */
    path(p, sizeof p, tname, "select=id&offset=9&limit=1");
    http("GET", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 416,
           "{\"code\":\"PGRST103\",\"message\":\"Requested range not "
           "satisfiable\",\"details\":\"An offset of 9 was requested, but "
           "there are only 5 rows.\",\"hint\":null}");
    assert_string_equal(hdr(&r, "content-range"), "*/5");
}

static void test_rest_range_header(void **state) {
    (void)state;
    resp r;
    char p[512];
    path(p, sizeof p, tname, "select=id&order=id");
    http("GET", p, "Range-Unit: items\r\nRange: 1-2\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":2},{\"id\":3}]");
    assert_string_equal(hdr(&r, "content-range"), "1-2/*");
    http("GET", p, "Range: 3-\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":4},{\"id\":5}]");
    assert_string_equal(hdr(&r, "content-range"), "3-4/*");
    http("GET", p, "Range: 7-9\r\n", &r);
    EXPECT(&r, 200, "[]");
    assert_string_equal(hdr(&r, "content-range"), "*/*");
    http("GET", p, "Range: 5-2\r\n", &r);
    assert_int_equal(r.status, 416);
    assert_non_null(strstr(r.body, "\"PGRST103\""));
}

static void test_rest_singular_head(void **state) {
    (void)state;
    resp r;
    char p[512];
    path(p, sizeof p, tname, "select=id,name&id=eq.5");
    http("GET", p, "Accept: application/vnd.pgrst.object+json\r\n", &r);
    EXPECT(&r, 200, "{\"id\":5,\"name\":\"Tom Sawyer\"}");
    assert_string_equal(hdr(&r, "content-type"),
                        "application/vnd.pgrst.object+json; charset=utf-8");
    /* warm: this statement text ran before? No: a new text, so cold */
    assert_true(rts(&r) >= 2);
    path(p, sizeof p, tname, "select=id&id=lt.3");
    http("GET", p, "Accept: application/vnd.pgrst.object+json\r\n", &r);
    EXPECT(&r, 406,
           "{\"code\":\"PGRST116\",\"message\":\"JSON object requested, "
           "multiple (or no) rows returned\",\"details\":\"The result "
           "contains 2 rows\",\"hint\":null}");
    path(p, sizeof p, tname, "select=id&id=eq.99");
    http("GET", p, "Accept: application/vnd.pgrst.object+json\r\n", &r);
    assert_int_equal(r.status, 406);
    assert_non_null(strstr(r.body, "The result contains 0 rows"));
    path(p, sizeof p, tname, "select=id");
    http("GET", p, "Accept: text/csv\r\n", &r);
    assert_int_equal(r.status, 406);
    assert_non_null(strstr(r.body, "\"PGRST107\""));
    /* HEAD: the headers of the GET, no body */
    path(p, sizeof p, tname, "select=id&order=id&limit=2");
    http("HEAD", p, "Prefer: count=exact\r\n", &r);
    EXPECT(&r, 206, "");
    assert_string_equal(hdr(&r, "content-range"), "0-1/5");
}

static void test_rest_errors(void **state) {
    target *t = *state;
    resp r;
    char p[4096];
    http("GET", "/no_such_table", NULL, &r);
    EXPECT(&r, 404,
           "{\"code\":\"PGRST205\",\"message\":\"Could not find the table "
           "'no_such_table' in the schema cache\",\"details\":null,"
           "\"hint\":null}");
    assert_string_equal(hdr(&r, "proxy-status"), "ffb-rest; error=PGRST205");
    path(p, sizeof p, tname, "id=zz.1");
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"PGRST100\""));
    path(p, sizeof p, tname, "select=nope");
    http("GET", p, NULL, &r);
    char want[256];
    snprintf(want, sizeof want,
             "{\"code\":\"42703\",\"message\":\"column %s.nope does not "
             "exist\",\"details\":null,\"hint\":null}",
             tname);
    EXPECT(&r, 400, want);
    /* a value the column's type refuses: the text goes to the server,
       which converts it with its own rules (libfastfb sends text it cannot
       convert exactly as text), so the error is the server's and arrives
       with the execute: 1 round trip */
    path(p, sizeof p, tname, "id=eq.abc");
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"code\":\"22018\""));
    assert_non_null(strstr(r.body, "cannot convert the string \\\"abc\\\""));
    assert_int_equal(rts(&r), 1);
    /* a date the server refuses: its conversion error and SQLSTATE; it
       comes with the execute's answer (this text is cold: FB4 2, FB3 3) */
    path(p, sizeof p, tname, "d=eq.2024-13-45");
    http("GET", p, NULL, &r);
    EXPECT(&r, 400,
           "{\"code\":\"22018\",\"message\":\"SQL error (SQLCODE -303)\","
           "\"details\":\"cannot convert the string \\\"2024-13-45\\\" to "
           "the required type\",\"hint\":null}");
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    /* an error of the server's: its SQLSTATE and message; it comes with
       the execute's answer (this text is cold: FB4 2, FB3 3) */
    path(p, sizeof p, tname, "name=like.abc%5C");
    http("GET", p, NULL, &r);
    EXPECT(&r, 400,
           "{\"code\":\"22025\",\"message\":\"bad ESCAPE sequence\","
           "\"details\":null,\"hint\":null}");
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    /* IN list over server-max-in-list (50) */
    char q[1024] = "id=in.(";
    for (int i = 0; i < 51; i++)
        snprintf(q + strlen(q), sizeof q - strlen(q), "%s%d", i ? "," : "", i);
    strcat(q, ")");
    path(p, sizeof p, tname, q);
    http("GET", p, NULL, &r);
    EXPECT(&r, 400,
           "{\"code\":\"PGRST100\",\"message\":\"an in.() list has more "
           "than 50 items\",\"details\":null,\"hint\":null}");
    /* a URL over server-max-url-length (2000) */
    char longq[2100];
    memset(longq, 'a', sizeof longq - 1);
    longq[sizeof longq - 1] = '\0';
    memcpy(longq, "name=eq.", 8);
    path(p, sizeof p, tname, longq);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 414);
    assert_non_null(strstr(r.body, "longer than 2000 bytes"));
    /* an empty POST body: PGRST102 (PUT: it_write.h) */
    path(p, sizeof p, tname, NULL);
    http("POST", p, "Content-Length: 0\r\n", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"PGRST102\""));
    http("GET", "/rpc/f", NULL, &r);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body, "\"PGRST202\""));
    http("GET", "/a/b", NULL, &r);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body, "\"PGRST125\""));
}

/* Garbage, a client that leaves mid-request, pipelined requests: the
   server answers what it can and keeps serving. */
static void test_rest_bad_clients(void **state) {
    (void)state;
    resp r;
    char p[512];
    static const char garbage[] = "\x01\x02NOT HTTP AT ALL\r\n\r\n";
    http_raw(srv.port, garbage, sizeof garbage - 1, &r);
    assert_int_equal(r.status, 400);
    /* leave right after sending a request that needs the database */
    for (int i = 0; i < 5; i++) {
        int fd = connect_to(srv.port);
        char req[256];
        int n =
            snprintf(req, sizeof req,
                     "GET /%s?select=id HTTP/1.1\r\nHost: x\r\n\r\n", tname);
        assert_int_equal(write(fd, req, (size_t)n), n);
        close(fd);
    }
    /* a half request, then gone */
    int fd = connect_to(srv.port);
    assert_int_equal(write(fd, "GET /x HTTP/1.1\r\nHo", 19), 19);
    close(fd);
    /* a body over server-max-body (1 MiB here, the default): 413 before
       anything is read */
    char big[256];
    int bn = snprintf(big, sizeof big,
                      "POST /%s HTTP/1.1\r\nHost: x\r\nContent-Length: "
                      "5000000\r\nConnection: close\r\n\r\n",
                      tname);
    http_raw(srv.port, big, (size_t)bn, &r);
    assert_int_equal(r.status, 413);
    /* headers over server-max-header-size (16384, the default) */
    static char hbig[20000];
    int hn = snprintf(hbig, sizeof hbig,
                      "GET /%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                      "X-Big: ",
                      tname);
    memset(hbig + hn, 'a', 17000);
    memcpy(hbig + hn + 17000, "\r\n\r\n", 4);
    http_raw(srv.port, hbig, (size_t)hn + 17004, &r);
    EXPECT(&r, 431,
           "{\"code\":\"PGRST100\",\"message\":\"The request's headers are "
           "longer than 16384 bytes\",\"details\":null,\"hint\":null}");
    /* two pipelined requests on one connection, answered in order */
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "GET /%s?select=id&id=eq.1 HTTP/1.1\r\nHost: x\r\n\r\n"
                     "GET /%s?select=id&id=eq.2 HTTP/1.1\r\nHost: x\r\n"
                     "Connection: close\r\n\r\n",
                     tname, tname);
    static char buf[65536];
    fd = connect_to(srv.port);
    assert_int_equal(write(fd, req, (size_t)n), n);
    size_t got = read_all(fd, buf, sizeof buf - 1);
    close(fd);
    buf[got] = '\0';
    char *a = strstr(buf, "[{\"id\":1}]");
    char *b = strstr(buf, "[{\"id\":2}]");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(a < b);
    path(p, sizeof p, tname, "select=id&id=eq.1");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":1}]");
    /* warm: the pipelined requests ran the same text: 1 */
    assert_int_equal(rts(&r), 1);
    /* now the connection used last has it: 1 */
    assert_int_equal(rts(&r), 1);
}

/* A read without a limit asks for db-probe-rows + 1 rows (3 + 1 here) so
   that its answer and the commit ride in one write; a longer answer is
   read again without the probe. */
static void test_rest_probe(void **state) {
    (void)state;
    resp r;
    char p[512];
    path(p, sizeof p, tname, "select=id&id=lt.4&order=id");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":1},{\"id\":2},{\"id\":3}]");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":1},{\"id\":2},{\"id\":3}]");
    /* warm, 3 rows fit the probe: start + execute + fetch + commit = 1 */
    assert_int_equal(rts(&r), 1);
    path(p, sizeof p, tname, "select=id&order=id");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":1},{\"id\":2},{\"id\":3},{\"id\":4},"
           "{\"id\":5}]");
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":1},{\"id\":2},{\"id\":3},{\"id\":4},"
           "{\"id\":5}]");
    assert_string_equal(hdr(&r, "content-range"), "0-4/*");
    /* warm, 5 rows > probe 3: the probe (start, execute, fetch 4 rows,
       commit) 1; the read without it: start + execute + fetch 1, then
       its commit once the rows are all in, 1: 3 */
    assert_int_equal(rts(&r), 3);
}

/* Blob columns: text as a string, binary as bytea's hex text. Firebird 3
   and 4 do not send blobs with their rows, so the page's blobs are opened
   and read after it (one write for all), then the commit. */
static void test_rest_blobs(void **state) {
    (void)state;
    resp r;
    char p[512];
    path(p, sizeof p, tbname, "id=lt.3&order=id");
    http("GET", p, NULL, &r);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"id\":1,\"txt\":\"hello \\\"blob\\\"\",\"bin\":\"\\\\x0001ff\"},"
           "{\"id\":2,\"txt\":null,\"bin\":null}]");
    /* warm: execute + fetch (1); every blob's open, info and first 64 KiB
       in one write (1); the commit (1) */
    assert_int_equal(rts(&r), 3);
    path(p, sizeof p, tbname, "select=txt&id=eq.1");
    http("GET", p, NULL, &r);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"txt\":\"hello \\\"blob\\\"\"}]");
    assert_int_equal(rts(&r), 3); /* as above, one blob */
    path(p, sizeof p, tbname, "select=txt&id=eq.3");
    http("GET", p, NULL, &r);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 200);
    /* [{"txt":"abab...(128000)"}] */
    assert_int_equal(r.body_len, 128000 + 12);
    assert_memory_equal(r.body, "[{\"txt\":\"abab", 13);
    assert_memory_equal(r.body + r.body_len - 5, "ab\"}]", 5);
    /* measured: the 128000 bytes come with the open's answer and the
       read-ahead it asks for at once (1), as the execute (1) and the
       commit (1) */
    assert_int_equal(rts(&r), 3);
}

/* server-threads = 2: two loops, two listeners on one port
   (SO_REUSEPORT), a pool each; every request is answered, whichever loop
   the kernel gives its connection to, and the server stops cleanly. */
static void test_rest_two_threads(void **state) {
    target *t = *state;
    resp r;
    char p[512];
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, "PGRST_SERVER_THREADS=2"), 0);
    assert_non_null(strstr(srv.log, "(2 threads)"));
    path(p, sizeof p, tname, "select=id&id=eq.4");
    for (int i = 0; i < 20; i++) {
        http("GET", p, NULL, &r);
        EXPECT(&r, 200, "[{\"id\":4}]");
        /* 1 warm, or the first on a loop: cold (FB4 2, FB3 3) */
        assert_true(rts(&r) == 1 || rts(&r) == (t->version == 3 ? 3 : 2));
    }
    assert_int_equal(stop_server(), 0);
    assert_int_equal(start_server(t, NULL), 0);
}

/* Run ffb-rest with `var` set (NAME=value) until it exits; its exit
   status, and its stderr in `out`. */
static int run_once(const char *var, char *out, size_t outn) {
    int pfd[2];
    if (pipe(pfd) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char kv[512];
        dup2(pfd[1], 2);
        close(pfd[0]);
        snprintf(kv, sizeof kv, "%s", var);
        char *eq = strchr(kv, '=');
        *eq = '\0';
        setenv(kv, eq + 1, 1);
        execl(server_path, server_path, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < outn && (r = read(pfd[0], out + n, outn - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(pfd[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ffb-rest --schema: the schema cache read from the RDB$ tables. */
static void test_rest_schema_cache(void **state) {
    target *t = *state;
    char host[64], port[16], db[512], uri[700], out[65536], want[512];
    int pfd[2];
    env_of(t, "HOST", host, sizeof host);
    env_of(t, "PORT", port, sizeof port);
    env_of(t, "DB", db, sizeof db);
    snprintf(uri, sizeof uri, "firebird://SYSDBA:masterkey@%s:%s/%s", host,
             port, db);
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        setenv("PGRST_DB_URI", uri, 1);
        execl(server_path, server_path, "--schema", (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < sizeof out &&
           (r = read(pfd[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(pfd[0]);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    static const char *const lines[] = {
        "table %s (%s) pk(id)\n",
        "  column id type=8 subtype=0 scale=0 length=4 charset=-1 not-null\n",
        "  column price type=8 subtype=1 scale=-2 length=4 charset=-1\n",
        "  column name type=37 subtype=0 scale=0 length=160 charset=4 "
        "not-null\n",
        /* RDB$FIELD_SUB_TYPE of a COMPUTED BY NUMERIC: 0 on FB3, 1 on FB4 */
        "  column total type=16 subtype=%d scale=-2 length=8 charset=-1 "
        "computed\n",
        "table %s_ch (%s_CH) pk(id,seq)\n",
        "  column note type=37 subtype=0 scale=0 length=40 charset=4 default\n",
        "  column g type=8 subtype=0 scale=0 length=4 charset=-1 not-null "
        "identity\n",
        "  column Mixed Name type=14 subtype=0 scale=0 length=8 charset=4\n",
        "  fk FK_%s (PARENT_ID) -> %s (ID)\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        if (i == 0 || i == 5)
            snprintf(want, sizeof want, lines[i], tname, t->table);
        else if (i == 9)
            snprintf(want, sizeof want, lines[i], t->table, t->table);
        else if (i == 4)
            snprintf(want, sizeof want, lines[i], t->version == 3 ? 0 : 1);
        else
            snprintf(want, sizeof want, "%s", lines[i]);
        if (!strstr(out, want))
            fprintf(stderr, "missing: [%s] in\n%s\n", want, out);
        assert_non_null(strstr(out, want));
    }
}

/* Start-up failures: a bad configuration exits 2 naming the key and
   where it came from; an unreachable database exits 1 naming why. */
static void test_rest_bad_start(void **state) {
    (void)state;
    char out[2048];
    unsetenv("PGRST_DB_URI");
    assert_int_equal(run_once("PGRST_DB_POOL=0", out, sizeof out), 2);
    assert_non_null(strstr(out, "environment PGRST_DB_POOL: db-pool: "
                                "expected an integer from 1 to 4096"));
    assert_int_equal(run_once("PGRST_DB_CHANNEL_ENABLED=true", out, sizeof out),
                     2);
    assert_non_null(strstr(out, "db-channel-enabled: not implemented yet"));
    assert_int_equal(run_once("PGRST_SERVER_PORT=3000", out, sizeof out), 2);
    assert_non_null(strstr(out, "db-uri is required"));
    int port = free_port(); /* nothing listens there */
    char uri[128];
    snprintf(uri, sizeof uri, "PGRST_DB_URI=firebird://u:p@127.0.0.1:%d//x",
             port);
    assert_int_equal(run_once(uri, out, sizeof out), 1);
    assert_non_null(strstr(out, "schema cache: connect: cannot connect"));
}

#include "it_write.h"
/* after it_write.h, whose helpers it uses */
#include "it_agg.h"
/* after it_write.h too */
#include "it_wide.h"

/* REST_TEST_SERVERS="FB3,FB4E" picks other instances of servers.env
   (default FB3 and FB4). */
static size_t pick_servers(const char *pick[8]) {
    static char list[128];
    size_t npick = 0;
    const char *env = getenv("REST_TEST_SERVERS");
    if (env && *env) {
        snprintf(list, sizeof list, "%s", env);
        for (char *tok = strtok(list, ","); tok && npick < 8;
             tok = strtok(NULL, ","))
            pick[npick++] = tok;
    } else {
        pick[npick++] = "FB3";
        pick[npick++] = "FB4";
    }
    return npick;
}

/* ASCII upper to lower case in place (Firebird's names to PostgREST's) */
static void lower(char *s) {
    for (; *s; s++)
        *s = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
}

/* The main of every live ffb-rest suite: argv is <ffb-rest> [lsan.supp];
   runs the tests on the servers pick_servers chooses, and fails when a
   server process exited badly. */
static int rest_it_run(int argc, char **argv, const char *prog,
                       const char *suite, const struct CMUnitTest *tests,
                       size_t ntests, CMFixtureFunction setup,
                       CMFixtureFunction teardown) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s <ffb-rest> [lsan.supp]\n", prog);
        return 2;
    }
    server_path = argv[1];
    lsan_supp = argc == 3 ? argv[2] : NULL;
    signal(SIGPIPE, SIG_IGN);
    if (getenv("REST_IT_FILTER")) /* a glob of test names, by hand */
        cmocka_set_test_filter(getenv("REST_IT_FILTER"));
    const char *pick[8];
    size_t npick = pick_servers(pick);
    int rc = it_main(suite, pick, npick, tests, ntests, setup, teardown);
    return rc ? rc : server_exit_failed;
}

/* A request to the admin port. */
static void admin(const char *method, const char *path, resp *r) {
    char req[256];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                     "Connection: close\r\n\r\n",
                     method, path);
    http_raw(srv.admin_port, req, (size_t)n, r);
}

/* ---- JWT and roles (issue 13 item 3) ------------------------------------ */

#define JWT_SECRET "it-secret-it-secret-it-secret-0123456789"

/* "Authorization: Bearer <HS256 token of `claims`>\r\n" */
static void bearer(const char *alg, const char *claims, const char *key,
                   char *out, size_t n) {
    char tok[2048];
    assert_true(rest_jwt_sign(alg, claims, strlen(claims),
                              (const unsigned char *)key, strlen(key), tok,
                              sizeof tok) > 0);
    int w = snprintf(out, n, "Authorization: Bearer %s\r\n", tok);
    assert_true(w > 0 && (size_t)w < n);
}

/* The exception <tx> and the db-pre-request procedure <tp> that raises it
   when the request has an X-Deny header, executable by `role`. */
static void make_pre_request(ffb_conn *c, const char *tp, const char *tx,
                             const char *role) {
    char sql[512];
    snprintf(sql, sizeof sql, "CREATE EXCEPTION %s 'denied by pre-request'",
             tx);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s AS BEGIN IF (RDB$GET_CONTEXT("
             "'USER_TRANSACTION', 'request.header.x-deny') IS NOT NULL) THEN "
             "EXCEPTION %s; END",
             tp, tx);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT EXECUTE ON PROCEDURE %s TO ROLE %s", tp,
             role);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT USAGE ON EXCEPTION %s TO PROCEDURE %s", tx,
             tp);
    exec_sql(c, sql);
}

/* PGRST_DB_URI as FFBTEST on `t`'s server, the JWT secret, then `extra`. */
static void ffbtest_env(const target *t, const char *extra, char *env,
                        size_t n) {
    char host[64], port[16], db[512];
    env_of(t, "HOST", host, sizeof host);
    env_of(t, "PORT", port, sizeof port);
    env_of(t, "DB", db, sizeof db);
    snprintf(env, n,
             "PGRST_DB_URI=firebird://FFBTEST:ffbpass@%s:%s/%s\n"
             "PGRST_JWT_SECRET=" JWT_SECRET "\n%s",
             host, port, db, extra);
}

#ifndef REST_IT_NO_MAIN /* test_embed.c, conformance.c reuse the helpers above \
                         */

/* A non-SYSDBA user (FFBTEST of servers.env) with role <pid>A, granted
   SELECT on one table only; role <pid>B exists but is not granted. */
static void test_rest_jwt_roles(void **state) {
    target *t = *state;
    char sql[512], ta[80], tb[80], ra[40], rb[40], p[256], h[2400];
    char env[1400], claims[256], lra[40];
    memset(env, 0, sizeof env);
    resp r;
    int pid = (int)getpid();
    snprintf(ta, sizeof ta, "%s_JA", t->table);
    snprintf(tb, sizeof tb, "%s_JB", t->table);
    snprintf(ra, sizeof ra, "R%dA", pid);
    snprintf(rb, sizeof rb, "R%dB", pid);
    snprintf(lra, sizeof lra, "r%da", pid);
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY)", ta);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY)", tb);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (7)", ta);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "CREATE ROLE %s", ra);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "CREATE ROLE %s", rb);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT SELECT ON %s TO ROLE %s", ta, ra);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT %s TO USER FFBTEST", ra);
    exec_sql(c, sql);
    /* the request context: a view reads it (db-request-context = auto
       finds `request.` in its source), a db-pre-request procedure may
       refuse the request */
    char tv[80], tp[80], tx[80];
    snprintf(tv, sizeof tv, "%s_CV", t->table);
    snprintf(tp, sizeof tp, "%s_PRE", t->table);
    snprintf(tx, sizeof tx, "%s_EX", t->table);
    snprintf(sql, sizeof sql,
             "CREATE VIEW %s (M, P, SUB, H, L) AS SELECT "
             "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.method'), "
             "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.path'), "
             "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.jwt.claim.sub'), "
             "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.header.x-test'), "
             "RDB$GET_CONTEXT('USER_TRANSACTION', 'request.header.x-long') "
             "FROM RDB$DATABASE",
             tv);
    exec_sql(c, sql);
    make_pre_request(c, tp, tx, ra);
    snprintf(sql, sizeof sql, "GRANT SELECT ON %s TO ROLE %s", tv, ra);
    exec_sql(c, sql);
    assert_int_equal(stop_server(), 0);
    char pre[120];
    snprintf(pre, sizeof pre, "PGRST_DB_PRE_REQUEST=%s", tp);
    ffbtest_env(t, pre, env, sizeof env);
    assert_int_equal(start_server(t, env), 0);
    char la[80], lb[80];
    snprintf(la, sizeof la, "%s", ta);
    snprintf(lb, sizeof lb, "%s", tb);
    for (char *q = la; *q; q++)
        *q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
    for (char *q = lb; *q; q++)
        *q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);

    /* no token, no db-anon-role: PostgREST's 401, no database work */
    path(p, sizeof p, la, NULL);
    http("GET", p, NULL, &r);
    EXPECT(&r, 401,
           "{\"code\":\"PGRST302\",\"message\":\"Anonymous access is "
           "disabled\",\"details\":null,\"hint\":null}");
    assert_string_equal(hdr(&r, "www-authenticate"), "Bearer");
    assert_int_equal(rts(&r), -1);

    /* the granted role, named in lower case as PostgreSQL roles are */
    snprintf(claims, sizeof claims, "{\"role\":\"%s\",\"exp\":%lld}", lra,
             (long long)time(NULL) + 600);
    bearer("HS256", claims, JWT_SECRET, h, sizeof h);
    http("GET", p, h, &r);
    EXPECT(&r, 200, "[{\"id\":7}]");
    /* the role's first request on the loop: its pool's first connection
       is checked (SELECT CURRENT_ROLE, not counted here), then cold: the
       prepare with the start (FB4 1) or after it (FB3 2), the execute +
       fetch + commit (1) */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    http("GET", p, h, &r);
    EXPECT(&r, 200, "[{\"id\":7}]");
    assert_int_equal(rts(&r), 1); /* warm: one write */
    /* the context rode in those writes: the view sees it */
    char lv[80], hx[3000], lng[400];
    snprintf(lv, sizeof lv, "%s", tv);
    for (char *q = lv; *q; q++)
        *q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
    snprintf(claims, sizeof claims, "{\"role\":\"%s\",\"sub\":\"u1\"}", lra);
    bearer("HS256", claims, JWT_SECRET, h, sizeof h);
    memset(lng, 'x', 300);
    lng[300] = '\0';
    /* x-long is 300 bytes: more than VARCHAR(255), left out (NULL) */
    snprintf(hx, sizeof hx, "%sX-Test: hello\r\nX-Long: %s\r\n", h, lng);
    char pv[256];
    path(pv, sizeof pv, lv, NULL);
    http("GET", pv, hx, &r);
    char want[512];
    snprintf(want, sizeof want,
             "[{\"m\":\"GET\",\"p\":\"/%s\",\"sub\":\"u1\",\"h\":\"hello\","
             "\"l\":null}]",
             lv);
    EXPECT(&r, 200, want);
    /* cold: the block's prepare rides with the view's */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    http("GET", pv, hx, &r);
    EXPECT(&r, 200, want);
    assert_int_equal(rts(&r), 1); /* warm: block, execute, commit: one write */
    /* db-pre-request refuses: its exception (isc_except, 400) */
    snprintf(hx, sizeof hx, "%sX-Deny: 1\r\n", h);
    http("GET", pv, hx, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "denied by pre-request"));
    assert_int_equal(rts(&r), 1); /* all in the same write still */
    /* "bearer" in lower case is the same scheme */
    char hl[2400];
    snprintf(hl, sizeof hl, "authorization: bearer %s", h + 22);
    http("GET", p, hl, &r);
    assert_int_equal(r.status, 200);

    /* the other table: the role has no SELECT on it; with a token that is
       403 (no_priv: Firebird's SQLSTATE 28000, sent as PostgreSQL's
       42501) */
    path(p, sizeof p, lb, NULL);
    http("GET", p, h, &r);
    if (r.status != 403)
        fprintf(stderr, "got %d %s\n", r.status, r.body);
    assert_int_equal(r.status, 403);
    assert_non_null(strstr(r.body, "\"code\":\"42501\""));
    if (!strstr(r.body, "no SELECT access to TABLE"))
        fprintf(stderr, "body %s\n", r.body);
    assert_non_null(strstr(r.body, "no SELECT access to TABLE"));
    /* the prepare fails: FB4 1 (with the start), FB3 2 (start, prepare) */
    assert_int_equal(rts(&r), t->version == 3 ? 2 : 1);

    /* a role that exists but is not granted: Firebird would attach with
       NONE; ffb-rest refuses (PostgreSQL's SET ROLE error), no fallback */
    snprintf(claims, sizeof claims, "{\"role\":\"%s\"}", rb);
    bearer("HS256", claims, JWT_SECRET, h, sizeof h);
    path(p, sizeof p, la, NULL);
    for (int i = 0; i < 2; i++) { /* checked, then remembered */
        http("GET", p, h, &r);
        char want[200];
        snprintf(want, sizeof want,
                 "{\"code\":\"42501\",\"message\":\"permission denied to "
                 "set role \\\"%s\\\"\",\"details\":null,\"hint\":null}",
                 rb);
        EXPECT(&r, 403, want);
    }
    /* a role that does not exist */
    snprintf(claims, sizeof claims, "{\"role\":\"nosuch%d\"}", pid);
    bearer("HS256", claims, JWT_SECRET, h, sizeof h);
    http("GET", p, h, &r);
    assert_int_equal(r.status, 401); /* PostgREST 13's status */
    assert_string_equal(hdr(&r, "www-authenticate"), "Bearer");
    assert_non_null(strstr(r.body, "\"code\":\"22023\""));
    assert_non_null(strstr(r.body, "does not exist"));
    /* a role name Firebird could not take unquoted */
    bearer("HS256", "{\"role\":\"a b\"}", JWT_SECRET, h, sizeof h);
    http("GET", p, h, &r);
    assert_int_equal(r.status, 400);

    /* refusals of the token itself: 401 with WWW-Authenticate */
    snprintf(claims, sizeof claims, "{\"role\":\"%s\",\"exp\":%lld}", lra,
             (long long)time(NULL) - 60);
    bearer("HS256", claims, JWT_SECRET, h, sizeof h);
    http("GET", p, h, &r);
    EXPECT(&r, 401,
           "{\"code\":\"PGRST303\",\"message\":\"JWT expired\","
           "\"details\":null,\"hint\":null}");
    assert_string_equal(hdr(&r, "www-authenticate"),
                        "Bearer error=\"invalid_token\", "
                        "error_description=\"JWT expired\"");
    assert_string_equal(hdr(&r, "proxy-status"), "ffb-rest; error=PGRST303");
    snprintf(claims, sizeof claims, "{\"role\":\"%s\"}", lra);
    bearer("none", claims, JWT_SECRET, h, sizeof h);
    http("GET", p, h, &r);
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body, "Wrong or unsupported encoding algorithm"));
    bearer("HS256", claims, "wrong-secret-wrong-secret-wrong-secret", h,
           sizeof h);
    http("GET", p, h, &r);
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body, "JWT cryptographic operation failed"));
    assert_string_equal(hdr(&r, "www-authenticate"),
                        "Bearer error=\"invalid_token\", "
                        "error_description=\"JWT cryptographic operation "
                        "failed\"");
    /* no role claim and no db-anon-role */
    bearer("HS256", "{\"sub\":\"x\"}", JWT_SECRET, h, sizeof h);
    http("GET", p, h, &r);
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body, "PGRST302"));
    http("GET", p, "Authorization: Bearer a.b\r\n", &r);
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body, "Expected 3 parts in JWT; got 2"));

    /* db-request-context = never: the view sees nothing; the
       pre-request still runs */
    assert_int_equal(stop_server(), 0);
    char env2[1600];
    snprintf(env2, sizeof env2, "%s\nPGRST_DB_REQUEST_CONTEXT=never", env);
    assert_int_equal(start_server(t, env2), 0);
    snprintf(claims, sizeof claims, "{\"role\":\"%s\",\"sub\":\"u1\"}", lra);
    bearer("HS256", claims, JWT_SECRET, h, sizeof h);
    http("GET", pv, h, &r);
    EXPECT(&r, 200,
           "[{\"m\":null,\"p\":null,\"sub\":null,\"h\":null,\"l\":null}]");
    snprintf(hx, sizeof hx, "%sX-Deny: 1\r\n", h);
    http("GET", pv, hx, &r);
    assert_int_equal(r.status, 200); /* never: the header is not set */

    assert_int_equal(stop_server(), 0);
    snprintf(sql, sizeof sql, "DROP VIEW %s", tv);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "DROP PROCEDURE %s", tp);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "DROP EXCEPTION %s", tx);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "DROP TABLE %s", ta);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "DROP TABLE %s", tb);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "DROP ROLE %s", ra);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "DROP ROLE %s", rb);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    /* the view is gone: db-request-context = auto finds nothing again */
    assert_int_equal(start_server(t, NULL), 0);
}

/* ---- JWT and the request context with writes and embeds ------------------ */

/* As FFBTEST with role <pid>W (JWT): a parent table <T>_JW (the role may
   read and write it; a trigger fills NAME from the request context) and
   a child <T>_JWC (read only). The combined cases: a write under the
   token's role, a write with the context block in front, an embed read
   with a token, each warm in one round trip; with db-pre-request a write
   waits for the block's answer (2), and a refusal writes nothing. */
static void test_rest_jwt_writes_embeds(void **state) {
    target *t = *state;
    char sql[700], tw[80], twc[80], lw[80], lwc[80], rw[40], lrw[40];
    char tp[80], tx[80], env[1400], env2[1600];
    char claims[256], h[2400], hx[2600], p[256], want[512];
    resp r;
    int pid = (int)getpid();
    snprintf(tw, sizeof tw, "%s_JW", t->table);
    snprintf(twc, sizeof twc, "%s_JWC", t->table);
    snprintf(tp, sizeof tp, "%s_JPRE", t->table);
    snprintf(tx, sizeof tx, "%s_JEX", t->table);
    snprintf(rw, sizeof rw, "R%dW", pid);
    snprintf(lw, sizeof lw, "%s", tw);
    snprintf(lwc, sizeof lwc, "%s", twc);
    snprintf(lrw, sizeof lrw, "%s", rw);
    lower(lw);
    lower(lwc);
    lower(lrw);
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, NAME "
             "VARCHAR(40))",
             tw);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, W_ID INTEGER "
             "REFERENCES %s (ID))",
             twc, tw);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE TRIGGER %s_BI FOR %s BEFORE INSERT AS BEGIN IF (NEW.NAME "
             "IS NULL) THEN NEW.NAME = RDB$GET_CONTEXT('USER_TRANSACTION', "
             "'request.header.x-who'); END",
             tw, tw);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (1, 'one')", tw);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (10, 1)", twc);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (11, 1)", twc);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "CREATE ROLE %s", rw);
    exec_sql(c, sql);
    make_pre_request(c, tp, tx, rw);
    /* a procedure that writes, for RPC POST */
    char tr[80], lr[80];
    snprintf(tr, sizeof tr, "%s_JINS", t->table);
    snprintf(lr, sizeof lr, "%s", tr);
    lower(lr);
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s (I INTEGER) AS BEGIN INSERT INTO %s (ID, "
             "NAME) VALUES (:I, 'rpc'); END",
             tr, tw);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT INSERT ON %s TO PROCEDURE %s", tw, tr);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT EXECUTE ON PROCEDURE %s TO ROLE %s", tr,
             rw);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO ROLE %s", tw, rw);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT SELECT ON %s TO ROLE %s", twc, rw);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "GRANT %s TO USER FFBTEST", rw);
    exec_sql(c, sql);
    assert_int_equal(stop_server(), 0);
    ffbtest_env(t, "PGRST_DB_REQUEST_CONTEXT=always", env, sizeof env);
    assert_int_equal(start_server(t, env), 0);
    snprintf(claims, sizeof claims, "{\"role\":\"%s\"}", lrw);
    bearer("HS256", claims, JWT_SECRET, h, sizeof h);

    /* a write with a token, under the token's role, the context block in
       front (db-request-context = always): the trigger reads X-Who */
    path(p, sizeof p, lw, NULL);
    snprintf(hx, sizeof hx, "%sX-Who: ctx-a\r\n", h);
    http_json("POST", p, hx, "{\"id\":2}", &r);
    EXPECT(&r, 201, "");
    /* the role's first request: its check is not counted; then cold:
       block and INSERT prepared with the start (FB4 1) or after it (FB3
       2), then block + execute + commit (1) */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    snprintf(hx, sizeof hx, "%sX-Who: ctx-b\r\n", h);
    http_json("POST", p, hx, "{\"id\":3}", &r);
    EXPECT(&r, 201, "");
    /* warm: start, the context block, the INSERT block, the commit in one
       write */
    assert_int_equal(rts(&r), 1);
    /* PATCH and DELETE with the token: warm after their cold first */
    char pq[256];
    path(pq, sizeof pq, lw, "id=eq.3");
    http_json("PATCH", pq, h, "{\"name\":\"patched\"}", &r);
    EXPECT(&r, 204, "");
    http_json("PATCH", pq, h, "{\"name\":\"patched2\"}", &r);
    EXPECT(&r, 204, "");
    assert_int_equal(rts(&r), 1); /* warm: block, UPDATE, commit */
    /* the rows: the trigger saw the header of each write */
    path(p, sizeof p, lw, "select=id,name&order=id");
    http("GET", p, h, &r);
    EXPECT(&r, 200,
           "[{\"id\":1,\"name\":\"one\"},{\"id\":2,\"name\":\"ctx-a\"},"
           "{\"id\":3,\"name\":\"patched2\"}]");
    /* the role may not write the child table: the server refuses it under
       the role (no_priv, 403 with a token) */
    path(p, sizeof p, lwc, NULL);
    http_json("POST", p, h, "{\"id\":12,\"w_id\":1}", &r);
    if (r.status != 403)
        fprintf(stderr, "got %d %s\n", r.status, r.body);
    assert_int_equal(r.status, 403);
    assert_non_null(strstr(r.body, "no INSERT access"));

    /* an embed read with a token: the block in front of the top level,
       the child level and the commit in the same write */
    char eq[160];
    snprintf(eq, sizeof eq, "select=id,%s(id)&id=eq.1", lwc);
    path(p, sizeof p, lw, eq);
    http("GET", p, h, &r);
    snprintf(want, sizeof want, "[{\"id\":1,\"%s\":[{\"id\":10},{\"id\":11}]}]",
             lwc);
    EXPECT(&r, 200, want);
    http("GET", p, h, &r);
    EXPECT(&r, 200, want);
    assert_int_equal(rts(&r), 1); /* warm: block, both levels, commit */

    /* with db-pre-request: a write's end waits for the block's answer */
    assert_int_equal(stop_server(), 0);
    snprintf(env2, sizeof env2, "%s\nPGRST_DB_PRE_REQUEST=%s", env, tp);
    assert_int_equal(start_server(t, env2), 0);
    path(p, sizeof p, lw, NULL);
    http_json("POST", p, h, "{\"id\":4}", &r);
    EXPECT(&r, 201, "");
    http_json("POST", p, h, "{\"id\":5}", &r);
    EXPECT(&r, 201, "");
    /* warm: start, block (+ procedure), INSERT block (1); the commit once
       the block's answer is in (1) */
    assert_int_equal(rts(&r), 2);
    /* the procedure refuses: the INSERT sent behind the block is rolled
       back */
    snprintf(hx, sizeof hx, "%sX-Deny: 1\r\n", h);
    http_json("POST", p, hx, "{\"id\":6}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "denied by pre-request"));
    assert_int_equal(rts(&r), 2); /* as above, the end a rollback */
    http_json("POST", p, hx, "{\"id\":6}", &r);
    assert_int_equal(r.status, 400);
    /* RPC POST of a procedure that writes: the same rule */
    char rp[120];
    snprintf(rp, sizeof rp, "/rpc/%s", lr);
    http_json("POST", rp, h, "{\"i\":7}", &r);
    EXPECT(&r, 204, "");
    http_json("POST", rp, h, "{\"i\":8}", &r);
    EXPECT(&r, 204, "");
    /* warm: start, block, the call (1); the commit once the block's answer
       is in (1) */
    assert_int_equal(rts(&r), 2);
    http_json("POST", rp, hx, "{\"i\":9}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "denied by pre-request"));
    assert_int_equal(rts(&r), 2); /* the end a rollback */
    /* PATCH with representation: the end waits anyway, so the block
       streams its rows (no refusal of a 17th row, the procedure runs
       once): warm 2 */
    path(p, sizeof p, lw, "select=id,name&id=gt.3");
    for (int k = 0; k < 2; k++) {
        snprintf(hx, sizeof hx, "%sPrefer: return=representation\r\n", h);
        http_json("PATCH", p, hx, "{\"name\":\"pre\"}", &r);
        EXPECT(&r, 200,
               "[{\"id\":4,\"name\":\"pre\"},{\"id\":5,\"name\":\"pre\"},"
               "{\"id\":7,\"name\":\"pre\"},{\"id\":8,\"name\":\"pre\"}]");
        if (k)
            assert_int_equal(rts(&r), 2);
    }
    /* the singular object: 406, the rows unchanged, warm 2 */
    snprintf(hx, sizeof hx, "%sAccept: application/vnd.pgrst.object+json\r\n",
             h);
    for (int k = 0; k < 2; k++) {
        http_json("PATCH", p, hx, "{\"name\":\"no\"}", &r);
        assert_int_equal(r.status, 406);
        assert_non_null(strstr(r.body, "The result contains 4 rows"));
        if (k)
            assert_int_equal(rts(&r), 2);
    }
    path(p, sizeof p, lw, "select=id&id=gt.3&order=id&name=eq.pre");
    http("GET", p, h, &r);
    EXPECT(&r, 200, "[{\"id\":4},{\"id\":5},{\"id\":7},{\"id\":8}]");

    assert_int_equal(stop_server(), 0);
    const char *drops[] = {"DROP PROCEDURE %s", "DROP TABLE %s",
                           "DROP TABLE %s",     "DROP PROCEDURE %s",
                           "DROP EXCEPTION %s", "DROP ROLE %s"};
    const char *what[] = {tr, twc, tw, tp, tx, rw};
    for (size_t i = 0; i < 6; i++) {
        snprintf(sql, sizeof sql, drops[i], what[i]);
        exec_sql(c, sql);
    }
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}

/* ---- CORS, OPTIONS, OpenAPI, schema reload (issue 13 item 5) ------------ */

static void test_rest_cors_options(void **state) {
    (void)state;
    resp r;
    char p[256];
    path(p, sizeof p, tname, NULL);
    /* a preflight: answered without the database */
    http("OPTIONS", p,
         "Origin: http://example.com\r\nAccess-Control-Request-Method: "
         "POST\r\nAccess-Control-Request-Headers: Foo, bar, accept\r\n",
         &r);
    EXPECT(&r, 200, "");
    assert_string_equal(hdr(&r, "access-control-allow-origin"), "*");
    assert_string_equal(hdr(&r, "access-control-allow-methods"),
                        "GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD");
    assert_string_equal(hdr(&r, "access-control-allow-headers"),
                        "Authorization, Foo, bar, accept, Accept-Language, "
                        "Content-Language");
    assert_string_equal(hdr(&r, "access-control-max-age"), "86400");
    assert_int_equal(rts(&r), -1);
    /* a read with Origin */
    path(p, sizeof p, tname, "select=id&id=eq.4");
    http("GET", p, NULL, &r); /* warms the statement (a restart before) */
    http("GET", p, "Origin: http://example.com\r\n", &r);
    EXPECT(&r, 200, "[{\"id\":4}]");
    assert_string_equal(hdr(&r, "access-control-allow-origin"), "*");
    assert_string_equal(hdr(&r, "access-control-expose-headers"),
                        "Content-Encoding, Content-Location, Content-Range, "
                        "Content-Type, Date, Location, Server, "
                        "Transfer-Encoding, Range-Unit");
    assert_int_equal(rts(&r), 1); /* warm: CORS costs nothing */
    /* errors carry them too */
    http("GET", "/nosuchtable", "Origin: http://example.com\r\n", &r);
    assert_int_equal(r.status, 404);
    assert_string_equal(hdr(&r, "access-control-allow-origin"), "*");
    /* no Origin: no CORS headers */
    http("GET", p, NULL, &r);
    assert_string_equal(hdr(&r, "access-control-allow-origin"), "");
    /* OPTIONS without a preflight: Allow */
    path(p, sizeof p, tname, NULL);
    http("OPTIONS", p, NULL, &r);
    EXPECT(&r, 200, "");
    assert_string_equal(hdr(&r, "allow"),
                        "OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE");
    assert_int_equal(rts(&r), -1);
    http("OPTIONS", "/", NULL, &r);
    assert_string_equal(hdr(&r, "allow"), "OPTIONS,GET,HEAD");
    http("OPTIONS", "/nosuchtable", NULL, &r);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body, "PGRST205"));
}

static void test_rest_openapi(void **state) {
    (void)state;
    resp r;
    http("GET", "/", "Accept: application/openapi+json\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(hdr(&r, "content-type"),
                        "application/openapi+json; charset=utf-8");
    assert_int_equal(rts(&r), -1); /* from the schema cache alone */
    char eb[128];
    yajl_val doc = yajl_tree_parse(r.body, eb, sizeof eb);
    if (!doc)
        fprintf(stderr, "not JSON: %s\n%.400s\n", eb, r.body);
    assert_non_null(doc);
    const char *sw[] = {"swagger", NULL};
    yajl_val v = yajl_tree_get(doc, sw, yajl_t_string);
    assert_non_null(v);
    assert_string_equal(YAJL_GET_STRING(v), "2.0");
    char pth[128];
    snprintf(pth, sizeof pth, "/%s", tname);
    const char *pp[] = {"paths", pth,           "get", "responses",
                        "200",   "description", NULL};
    v = yajl_tree_get(doc, pp, yajl_t_string);
    assert_non_null(v);
    const char *pk[] = {"definitions", tname,         "properties",
                        "id",          "description", NULL};
    v = yajl_tree_get(doc, pk, yajl_t_string);
    assert_non_null(v);
    assert_string_equal(YAJL_GET_STRING(v),
                        "Note:\nThis is a Primary Key.<pk/>");
    const char *nm[] = {"definitions", tname,       "properties",
                        "name",        "maxLength", NULL};
    v = yajl_tree_get(doc, nm, yajl_t_number);
    assert_non_null(v);
    assert_int_equal(YAJL_GET_INTEGER(v), 40);
    const char *pr[] = {"definitions", tname,    "properties",
                        "price",       "format", NULL};
    v = yajl_tree_get(doc, pr, yajl_t_string);
    assert_string_equal(YAJL_GET_STRING(v), "numeric");
    const char *rq[] = {"definitions", tname, "required", NULL};
    v = yajl_tree_get(doc, rq, yajl_t_array);
    assert_non_null(v);
    assert_int_equal(v->u.array.len, 2); /* id, name: NOT NULL, no default */
    assert_string_equal(YAJL_GET_STRING(v->u.array.values[1]), "name");
    yajl_tree_free(doc);
    http("GET", "/", "Accept: text/csv\r\n", &r);
    assert_int_equal(r.status, 406);
    http("HEAD", "/", NULL, &r);
    assert_int_equal(r.status, 200);
}

static void test_rest_reload(void **state) {
    target *t = *state;
    resp r;
    char sql[256], p[256], low[80];
    ffb_conn *c = open_conn(t);
    snprintf(sql, sizeof sql, "CREATE TABLE %s_RL (ID INTEGER)", t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s_RL VALUES (1)", t->table);
    exec_sql(c, sql);
    snprintf(low, sizeof low, "%s_rl", tname);
    path(p, sizeof p, low, NULL);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 404); /* not in the cache yet */
    admin("GET", "/reload", &r);
    assert_int_equal(r.status, 405);
    admin("POST", "/reload", &r);
    if (r.status != 200)
        fprintf(stderr, "reload: %d %s\n", r.status, r.body);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "schema cache reloaded:"));
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"id\":1}]");
    /* a new pool (the reload replaced it: no statement cached): cold */
    assert_int_equal(rts(&r), t->version == 3 ? 3 : 2);
    http("GET", p, NULL, &r);
    assert_int_equal(rts(&r), 1);
    /* SIGUSR1 */
    snprintf(sql, sizeof sql, "CREATE TABLE %s_RM (ID INTEGER)", t->table);
    exec_sql(c, sql);
    snprintf(low, sizeof low, "%s_rm", tname);
    path(p, sizeof p, low, NULL);
    kill(srv.pid, SIGUSR1);
    int64_t end = now_ms() + 10000;
    do {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
        http("GET", p, NULL, &r);
    } while (r.status != 200 && now_ms() < end);
    EXPECT(&r, 200, "[]");
    /* the live server still serves the rest */
    http("GET", "/live", NULL, &r);
    /* the statements of the new tables go with the server */
    assert_int_equal(stop_server(), 0);
    snprintf(sql, sizeof sql, "DROP TABLE %s_RL", t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "DROP TABLE %s_RM", t->table);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}

/* ---- RPC (issue 13 item 5) ---------------------------------------------- */

static void rpc_post(const char *path, const char *json, resp *r) {
    char h[256];
    snprintf(h, sizeof h,
             "Content-Type: application/json\r\nContent-Length: %zu\r\n",
             strlen(json));
    char req[4096];
    int n = snprintf(req, sizeof req,
                     "POST %s HTTP/1.1\r\nHost: localhost\r\nConnection: "
                     "close\r\n%s\r\n%s",
                     path, h, json);
    http_raw(srv.port, req, (size_t)n, r);
}

static void test_rest_rpc(void **state) {
    target *t = *state;
    resp r;
    char sql[700], p[256], n[80];
    int cold = t->version == 3 ? 3 : 2; /* FB3 prepares after the start */
    ffb_conn *c = open_conn(t);
    assert_int_equal(stop_server(), 0);
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s_SP (N INTEGER, STEP INTEGER = 1) RETURNS (I "
             "INTEGER, SQ BIGINT) AS DECLARE K INTEGER = 1; BEGIN WHILE (K <= "
             "N) DO BEGIN I = K; SQ = K * K; SUSPEND; K = K + STEP; END END",
             t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s_EP (A INTEGER, B INTEGER) RETURNS (S "
             "INTEGER, P INTEGER) AS BEGIN S = A + B; P = A * B; END",
             t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE FUNCTION %s_ADD (A INTEGER, B INTEGER) RETURNS INTEGER AS "
             "BEGIN RETURN A + B; END",
             t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql, "CREATE TABLE %s_RW (X INTEGER)", t->table);
    exec_sql(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s_WP (X INTEGER) AS BEGIN INSERT INTO %s_RW "
             "VALUES (:X); END",
             t->table, t->table);
    exec_sql(c, sql);
    assert_int_equal(start_server(t, NULL), 0);

    /* a selectable procedure: rows; the trailing STEP takes its default */
    snprintf(n, sizeof n, "%s_sp", tname);
    snprintf(p, sizeof p, "/rpc/%s?n=3", n);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"i\":1,\"sq\":1},{\"i\":2,\"sq\":4},{\"i\":3,\"sq\":9}]");
    assert_string_equal(hdr(&r, "content-range"), "0-2/*");
    assert_int_equal(rts(&r), cold);
    http("GET", p, NULL, &r);
    assert_int_equal(rts(&r), 1); /* warm: start, execute + rows, commit */
    snprintf(p, sizeof p, "/rpc/%s?N=5&step=2", n);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200,
           "[{\"i\":1,\"sq\":1},{\"i\":3,\"sq\":9},{\"i\":5,\"sq\":25}]");
    /* 5 rows: more than db-probe-rows (3 here): the probe (FETCH NEXT 4:
       its rows and the end in one fetch, the commit rode with it) (1),
       then without the limit, fetching everything before the commit: the
       execute with its rows (1), the commit (1). The first time the second
       text is prepared: FB4 +1 (with the start), FB3 +2 (after it) */
    snprintf(p, sizeof p, "/rpc/%s?n=5", n);
    for (int i = 0; i < 3; i++) {
        http("GET", p, NULL, &r);
        assert_int_equal(r.status, 200);
        assert_non_null(strstr(r.body, "[{\"i\":1,\"sq\":1},{\"i\":2,\"sq\":4},"
                                       "{\"i\":3,\"sq\":9},{\"i\":4,\"sq\":16},"
                                       "{\"i\":5,\"sq\":25}]"));
        assert_int_equal(rts(&r), i ? 3 : t->version == 3 ? 5 : 4);
    }
    /* POST: arguments from the body */
    snprintf(p, sizeof p, "/rpc/%s", n);
    rpc_post(p, "{\"n\":2}", &r);
    EXPECT(&r, 200, "[{\"i\":1,\"sq\":1},{\"i\":2,\"sq\":4}]");
    /* count=exact: the COUNT(*) of the procedure's rows rides with the
       read (postgrest-js reads it after the '/'; '*' was its count NaN);
       its text is new the first time (cold) */
    snprintf(p, sizeof p, "/rpc/%s?n=2", n);
    for (int i = 0; i < 2; i++) {
        http("GET", p, "Prefer: count=exact\r\n", &r);
        assert_int_equal(r.status, 200);
        assert_string_equal(hdr(&r, "content-range"), "0-1/2");
        assert_string_equal(hdr(&r, "preference-applied"), "count=exact");
        assert_int_equal(rts(&r), i ? 1 : cold);
    }
    /* select, order and filters on the result (it_rpc.h has more): a
       POST's query string, a GET's filter-shaped key that is no argument */
    snprintf(p, sizeof p, "/rpc/%s?select=i", n);
    rpc_post(p, "{\"n\":2}", &r);
    EXPECT(&r, 200, "[{\"i\":1},{\"i\":2}]");
    snprintf(p, sizeof p, "/rpc/%s?i=eq.1", n);
    rpc_post(p, "{\"n\":2}", &r);
    EXPECT(&r, 200, "[{\"i\":1,\"sq\":1}]");
    snprintf(p, sizeof p, "/rpc/%s?n=3&i=not.in.(1)&order=sq.desc", n);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "[{\"i\":3,\"sq\":9},{\"i\":2,\"sq\":4}]");
    /* argument errors: PGRST202 before the database */
    snprintf(p, sizeof p, "/rpc/%s?step=2", n);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body, "PGRST202"));
    assert_int_equal(rts(&r), -1);
    snprintf(p, sizeof p, "/rpc/%s?n=1&bogus=1", n);
    http("GET", p, NULL, &r);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body, "n, bogus"));
    http("GET", "/rpc/nosuchroutine", NULL, &r);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body, "PGRST202"));
    snprintf(p, sizeof p, "/rpc/%s?n=1", n);
    http("PUT", p, NULL, &r);
    assert_int_equal(r.status, 405);
    assert_non_null(strstr(r.body, "PGRST101"));
    snprintf(p, sizeof p, "/rpc/%s", n);
    rpc_post(p, "[1]", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "PGRST102"));

    /* an executable procedure: one object */
    snprintf(p, sizeof p, "/rpc/%s_ep", tname);
    rpc_post(p, "{\"a\":2,\"b\":5}", &r);
    EXPECT(&r, 200, "{\"s\":7,\"p\":10}");
    assert_int_equal(rts(&r), cold);
    rpc_post(p, "{\"a\":3,\"b\":null}", &r);
    EXPECT(&r, 200, "{\"s\":null,\"p\":null}");
    assert_int_equal(rts(&r), 1); /* warm */
    /* a function: the bare value */
    snprintf(p, sizeof p, "/rpc/%s_add?a=2&b=40", tname);
    http("GET", p, NULL, &r);
    EXPECT(&r, 200, "42");
    assert_int_equal(rts(&r), cold);
    http("GET", p, NULL, &r);
    assert_int_equal(rts(&r), 1);
    snprintf(p, sizeof p, "/rpc/%s_add", tname);
    rpc_post(p, "{\"a\":\"x\",\"b\":1}", &r);
    assert_int_equal(r.status, 400); /* the server's conversion error */
    assert_non_null(strstr(r.body, "22018"));
    /* a procedure that writes: GET is read-only (405), POST commits */
    snprintf(p, sizeof p, "/rpc/%s_wp?x=1", tname);
    http("GET", p, NULL, &r);
    if (r.status != 405)
        fprintf(stderr, "got %d %s\n", r.status, r.body);
    assert_int_equal(r.status, 405);
    assert_non_null(strstr(r.body, "25006"));
    snprintf(p, sizeof p, "/rpc/%s_wp", tname);
    rpc_post(p, "{\"x\":9}", &r);
    EXPECT(&r, 204, "");
    /* warm: the GET prepared the same text; start, execute, commit */
    assert_int_equal(rts(&r), 1);
    rpc_post(p, "{\"x\":10}", &r);
    assert_int_equal(r.status, 204);
    assert_int_equal(rts(&r), 1);
    ffb_tx *tx;
    ffb_stmt *st;
    int64_t cnt = 0;
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s_RW", t->table);
    assert_int_equal(ffb_tx_begin(c, NULL, &tx), 0);
    assert_int_equal(ffb_conn_prepare(c, tx, sql, (size_t)-1, &st), 0);
    assert_int_equal(ffb_stmt_execute(st, tx), 0);
    assert_int_equal(ffb_stmt_fetch(st), 1);
    ffb_stmt_get_int64(st, 0, &cnt);
    assert_int_equal(cnt, 2);
    ffb_stmt_free(st);
    ffb_tx_commit(tx);
    ffb_tx_free(tx);
    /* OPTIONS */
    http("OPTIONS", p, NULL, &r);
    assert_string_equal(hdr(&r, "allow"), "OPTIONS,GET,HEAD,POST");

    assert_int_equal(stop_server(), 0);
    static const char *const drops[] = {"PROCEDURE %s_SP", "PROCEDURE %s_EP",
                                        "FUNCTION %s_ADD", "PROCEDURE %s_WP",
                                        "TABLE %s_RW"};
    for (size_t i = 0; i < sizeof drops / sizeof drops[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, drops[i], t->table);
        snprintf(sql, sizeof sql, "DROP %s", what);
        exec_sql(c, sql);
    }
    ffb_conn_close(c);
    ffb_conn_free(c);
    assert_int_equal(start_server(t, NULL), 0);
}

#include "it_rpc.h"
#include "it_settings.h"
#include "it_tls.h"

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_live_ready),
        cmocka_unit_test(test_rest_get_filter_order),
        cmocka_unit_test(test_rest_get_operators),
        cmocka_unit_test(test_rest_types),
        cmocka_unit_test(test_rest_count_exact),
        cmocka_unit_test(test_rest_range_header),
        cmocka_unit_test(test_rest_singular_head),
        cmocka_unit_test(test_rest_errors),
        cmocka_unit_test(test_rest_bad_clients),
        cmocka_unit_test(test_rest_probe),
        cmocka_unit_test(test_rest_wide_answers),
        cmocka_unit_test(test_rest_blobs),
        cmocka_unit_test(test_rest_two_threads),
        cmocka_unit_test(test_rest_bad_start),
        cmocka_unit_test(test_rest_schema_cache),
        cmocka_unit_test(test_rest_write),
        cmocka_unit_test(test_rest_put),
        cmocka_unit_test(test_rest_write_one_rt),
        cmocka_unit_test(test_rest_aggregates),
        cmocka_unit_test(test_rest_count_planned),
        cmocka_unit_test(test_rest_jwt_roles),
        cmocka_unit_test(test_rest_jwt_writes_embeds),
        cmocka_unit_test(test_rest_cors_options),
        cmocka_unit_test(test_rest_openapi),
        cmocka_unit_test(test_rest_reload),
        cmocka_unit_test(test_rest_rpc),
        cmocka_unit_test(test_rest_rpc_read),
        cmocka_unit_test(test_rest_jwt_cache),
        cmocka_unit_test(test_rest_settings),
        cmocka_unit_test(test_rest_tls),
        cmocka_unit_test(test_rest_h2),
        cmocka_unit_test(test_rest_ready_timeouts),
        cmocka_unit_test(test_rest_stmt_timeout),
        cmocka_unit_test(test_rest_anon_role),
        cmocka_unit_test(test_rest_origins_filters_rollback),
    };
    return rest_it_run(argc, argv, "test_rest_it", "REST", tests,
                       sizeof tests / sizeof tests[0], setup, teardown);
}
#endif
