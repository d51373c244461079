/*
 * libfastfb through ffb-proxy (bench/proxy.c) in front of the Firebird 4.0
 * server (instance fb4 of servers.env, wire encryption required):
 *
 *  - with 20 ms each way, the library's round-trip counter equals the
 *    turns the proxy counts, phase by phase (connect + attach, a warm
 *    select, the one-shot pipeline), and every phase lasts at least
 *    round trips x 40 ms;
 *  - faults: a connection closed mid-fetch or between two turns, a
 *    flipped byte and a stalled stream end in clean fatal errors within
 *    the I/O timeout, never a hang.
 *
 * The proxy is found through FFB_PROXY or next to this test's build
 * directory (bench/ffb-proxy); without it (no libuv) the test is skipped.
 * Without FFB_TEST_SERVERS the test is skipped (exit 77) unless
 * FFB_TEST_REQUIRE_SERVER=1, which makes that a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/it.h"

#define DELAY_MS 20
#define WIDE_ROWS 10000
#define WIDE_LEN 300

static char proxy_path[PATH_MAX];
static char upstream[64];
static char db_path[512];
static char table[64];      /* 100 narrow rows */
static char wide_table[64]; /* WIDE_ROWS rows of WIDE_LEN characters */

/* ---- the proxy process -------------------------------------------------- */

typedef struct proxy {
    pid_t pid;
    int out_fd;     /* its stdout */
    int in_fd;      /* its stdin: closing it makes the proxy exit */
    char buf[4096]; /* unread stdout */
    size_t len;
    int port;
} proxy;

typedef struct proxy_stats {
    uint64_t turns;
    uint64_t c2s_bytes;
    uint64_t s2c_bytes;
} proxy_stats;

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One line of the proxy's stdout, waiting at most until `deadline`. */
static int read_line(proxy *p, char *line, size_t size, int64_t deadline) {
    for (;;) {
        char *nl = memchr(p->buf, '\n', p->len);
        if (nl) {
            size_t n = (size_t)(nl - p->buf);
            snprintf(line, size, "%.*s", (int)n, p->buf);
            p->len -= n + 1;
            memmove(p->buf, nl + 1, p->len);
            return 0;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0 || p->len == sizeof(p->buf))
            return -1;
        struct pollfd pf = {p->out_fd, POLLIN, 0};
        int r = poll(&pf, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t n = read(p->out_fd, p->buf + p->len, sizeof(p->buf) - p->len);
        if (n <= 0)
            return -1;
        p->len += (size_t)n;
    }
}

/* Start ffb-proxy in front of the fb4 server with `args` (NULL-ended). */
static void proxy_start(proxy *p, const char *const *args) {
    const char *argv[32];
    size_t n = 0;
    argv[n++] = proxy_path;
    argv[n++] = "--upstream";
    argv[n++] = upstream;
    argv[n++] = "--port";
    argv[n++] = "0";
    argv[n++] = "--quiet";
    argv[n++] = "--exit-on-stdin-eof";
    for (size_t i = 0; args && args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;

    int out[2], in[2];
    assert_int_equal(pipe(out), 0);
    assert_int_equal(pipe(in), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execv(proxy_path, (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->out_fd = out[0];
    p->in_fd = in[1];
    char line[256];
    if (read_line(p, line, sizeof(line), now_ms() + 10000) < 0 ||
        sscanf(line, "port %d", &p->port) != 1)
        fail_msg("ffb-proxy did not report its port");
}

static uint64_t field(const char *line, const char *key) {
    char pat[64];
    snprintf(pat, sizeof(pat), " %s=", key);
    const char *f = strstr(line, pat);
    if (!f)
        fail_msg("no %s in \"%s\"", key, line);
    return strtoull(f + strlen(pat), NULL, 10);
}

/* SIGUSR1 makes the proxy print one "stats ... why=signal" line. Every
   client byte of a finished exchange has been read by then: the answer
   could not have come otherwise. */
static proxy_stats proxy_query(proxy *p) {
    assert_int_equal(kill(p->pid, SIGUSR1), 0);
    char line[1024];
    int64_t deadline = now_ms() + 10000;
    for (;;) {
        if (read_line(p, line, sizeof(line), deadline) < 0)
            fail_msg("ffb-proxy did not answer SIGUSR1");
        if (strncmp(line, "stats ", 6) == 0 && strstr(line, " why=signal"))
            break;
    }
    proxy_stats s = {field(line, "turns"), field(line, "c2s_bytes"),
                     field(line, "s2c_bytes")};
    return s;
}

static void proxy_stop(proxy *p) {
    close(p->in_fd);
    kill(p->pid, SIGTERM);
    int st;
    waitpid(p->pid, &st, 0);
    close(p->out_fd);
}

/* ---- helpers --------------------------------------------------------------
 */

static ffb_conn *new_conn(int port, int io_timeout_ms) {
    char dsn[600];
    snprintf(dsn, sizeof(dsn), "127.0.0.1/%d:%s", port, db_path);
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn;
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.wire_crypt = FFB_CRYPT_REQUIRED;
    o.io_timeout_ms = io_timeout_ms;
    o.connect_timeout_ms = 10000;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    return c;
}

static void exec_sql(ffb_conn *c, const char *sql) { it_exec(c, "%s", sql); }

static ffb_stmt *prepare(ffb_conn *c, ffb_tx *tx, const char *fmt,
                         const char *tab) {
    char sql[512];
    snprintf(sql, sizeof(sql), fmt, tab);
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    return s;
}

static int count_rows(ffb_conn *c, ffb_stmt *s) {
    int n = 0, r;
    while ((r = ffb_stmt_fetch(s)) == 1)
        n++;
    OK(c, r);
    return n;
}

static int is_one_of(int rc, int a, int b, int c) {
    return rc == a || rc == b || rc == c;
}

/* Directly to the server: setting up is not under test. */
static ffb_conn *direct_conn(void) {
    char dsn[600];
    snprintf(dsn, sizeof(dsn), "%s:%s", upstream, db_path);
    *strchr(dsn, ':') = '/';
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn;
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.io_timeout_ms = 60000;
    ffb_conn *c = NULL;
    if (ffb_conn_new(&o, &c) != 0)
        return NULL;
    if (ffb_conn_connect(c) != 0) {
        fprintf(stderr, "%s\n", ffb_error_message(ffb_conn_error(c)));
        ffb_conn_free(c);
        return NULL;
    }
    return c;
}

static int setup_tables(void **state) {
    (void)state;
    ffb_conn *c = direct_conn();
    if (!c)
        return -1;
    char sql[512];
    snprintf(sql, sizeof(sql),
             "create table %s (id integer primary key, name varchar(20))",
             table);
    exec_sql(c, sql);
    snprintf(sql, sizeof(sql),
             "execute block as declare i integer = 1; begin while (i <= 100) "
             "do begin insert into %s values (:i, 'name ' || :i); "
             "i = i + 1; end end",
             table);
    exec_sql(c, sql);
    snprintf(sql, sizeof(sql),
             "create table %s (id integer primary key, pad varchar(%d))",
             wide_table, WIDE_LEN);
    exec_sql(c, sql);
    snprintf(sql, sizeof(sql),
             "execute block as declare i integer = 1; begin while (i <= %d) "
             "do begin insert into %s values (:i, rpad(:i, %d, '*')); "
             "i = i + 1; end end",
             WIDE_ROWS, wide_table, WIDE_LEN);
    exec_sql(c, sql);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
    return 0;
}

static int teardown_tables(void **state) {
    (void)state;
    ffb_conn *c = direct_conn();
    if (!c)
        return -1;
    char sql[128];
    snprintf(sql, sizeof(sql), "drop table %s", table);
    exec_sql(c, sql);
    snprintf(sql, sizeof(sql), "drop table %s", wide_table);
    exec_sql(c, sql);
    ffb_conn_close(c);
    ffb_conn_free(c);
    return 0;
}

/* ---- counts and delay --------------------------------------------------- */

/* One phase: the library's round trips, the proxy's turns, the time. */
typedef struct phase {
    uint64_t rts;
    proxy_stats px;
    int64_t t;
} phase;

static phase mark(proxy *p, const ffb_conn *c) {
    phase m;
    m.rts = c ? it_rts(c) : 0;
    m.px = proxy_query(p);
    m.t = now_ms();
    return m;
}

/* Compare the counters over a phase and check its duration. */
static uint64_t check_phase(const char *what, const phase *a, const phase *b,
                            uint64_t expect) {
    uint64_t lib = b->rts - a->rts;
    uint64_t turns = b->px.turns - a->px.turns;
    int64_t ms = b->t - a->t;
    printf("# %-22s library %llu round trips, proxy %llu turns, %lld ms\n",
           what, (unsigned long long)lib, (unsigned long long)turns,
           (long long)ms);
    if (lib != expect || turns != expect)
        fail_msg("%s: expected %llu round trips, library counted %llu, proxy "
                 "%llu",
                 what, (unsigned long long)expect, (unsigned long long)lib,
                 (unsigned long long)turns);
    if (ms < (int64_t)lib * 2 * DELAY_MS)
        fail_msg("%s: %lld ms for %llu round trips: the delay is short", what,
                 (long long)ms, (unsigned long long)lib);
    return lib;
}

static void test_proxy_counts_match_library(void **state) {
    (void)state;
    proxy p;
    const char *const args[] = {"--delay-ms", "20", NULL};
    proxy_start(&p, args);
    ffb_conn *c = new_conn(p.port, 30000);
    uint64_t total = 0;

    /* op_connect; op_cont_auth + op_crypt; op_attach. */
    phase a = mark(&p, NULL);
    OK(c, ffb_conn_connect(c));
    phase b = mark(&p, c);
    total += check_phase("connect + attach", &a, &b, 3);

    /* op_transaction + op_info_transaction; then allocate + prepare. */
    ffb_tx *tx;
    int64_t id;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_tx_id(tx, &id));
    ffb_stmt *s =
        prepare(c, tx, "select id, name from %s where id <= ?", table);
    OK(c, ffb_stmt_bind_int64(s, 0, 50));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(count_rows(c, s), 50);
    a = mark(&p, c);
    total += check_phase("cold select", &b, &a, 3);

    /* Warm: close of the old cursor + op_execute + op_fetch in one write;
       the 50 rows come in the first batch. */
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(count_rows(c, s), 50);
    b = mark(&p, c);
    total += check_phase("warm select", &a, &b, 1);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    a = mark(&p, c);
    total += check_phase("commit", &b, &a, 1);

    /* One-shot: op_transaction, op_execute(0xFFFF), op_fetch and
       op_commit(0xFFFF) in one write. */
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_stmt_bind_int64(s, 0, 19));
    OK(c, ffb_stmt_queue_execute(s, tx, NULL, NULL));
    OK(c, ffb_tx_queue_commit(tx, NULL, NULL));
    OK(c, ffb_conn_flush(c));
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(count_rows(c, s), 19);
    b = mark(&p, c);
    total += check_phase("one-shot pipeline", &a, &b, 1);
    ffb_tx_free(tx);
    ffb_stmt_free(s);

    /* Detach costs the library 1 round trip; the proxy also sees the
       op_disconnect that follows it, which expects no answer. */
    uint64_t before = it_rts(c);
    OK(c, ffb_conn_close(c));
    a = mark(&p, NULL);
    assert_int_equal(it_rts(c) - before, 1);
    assert_int_equal(a.px.turns - b.px.turns, 2);
    total += 1;

    printf("# total: %llu round trips\n", (unsigned long long)total);
    ffb_conn_free(c);
    proxy_stop(&p);
}

/* A whole-program view: the time from connect to detach is at least the
   library's round trips x 2 x delay. */
static void test_proxy_total_time(void **state) {
    (void)state;
    proxy p;
    const char *const args[] = {"--delay-ms", "20", NULL};
    proxy_start(&p, args);
    ffb_conn *c = new_conn(p.port, 30000);
    int64_t t0 = now_ms();
    OK(c, ffb_conn_connect(c));
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(c, tx, "select id, name from %s", table);
    for (int i = 0; i < 3; i++) {
        OK(c, ffb_stmt_execute(s, tx));
        assert_int_equal(count_rows(c, s), 100);
    }
    ffb_stmt_free(s);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    uint64_t n = it_rts(c);
    int64_t ms = now_ms() - t0;
    proxy_stats px = proxy_query(&p);
    printf("# session: %llu round trips (proxy %llu turns) in %lld ms\n",
           (unsigned long long)n, (unsigned long long)px.turns, (long long)ms);
    assert_int_equal(px.turns, n);
    assert_true(ms >= (int64_t)n * 2 * DELAY_MS);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
    proxy_stop(&p);
}

/* A long cursor with read-ahead: reported, not asserted - the two counts
   can differ when a fetch is sent while an answer the proxy has already
   delivered still waits unread in the client's socket. */
static void test_proxy_scan_reported(void **state) {
    (void)state;
    proxy p;
    const char *const args[] = {"--delay-ms", "20", NULL};
    proxy_start(&p, args);
    ffb_conn *c = new_conn(p.port, 30000);
    OK(c, ffb_conn_connect(c));
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(c, tx, "select id, pad from %s", wide_table);
    phase a = mark(&p, c);
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(count_rows(c, s), WIDE_ROWS);
    phase b = mark(&p, c);
    printf("# scan of %d wide rows: library %llu round trips, proxy %llu "
           "turns, %llu bytes, %lld ms\n",
           WIDE_ROWS, (unsigned long long)(b.rts - a.rts),
           (unsigned long long)(b.px.turns - a.px.turns),
           (unsigned long long)(b.px.s2c_bytes - a.px.s2c_bytes),
           (long long)(b.t - a.t));
    assert_true(b.t - a.t >= (int64_t)(b.rts - a.rts) * 2 * DELAY_MS);
    ffb_stmt_free(s);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
    proxy_stop(&p);
}

/* ---- faults -----------------------------------------------------------------
 */

/* Execute the wide scan and fetch until an error; returns the code and
   the rows read before it. */
static int scan_until_error(ffb_conn *c, int *rows) {
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(c, tx, "select id, pad from %s", wide_table);
    int rc = ffb_stmt_execute(s, tx);
    *rows = 0;
    if (rc == 0) {
        while ((rc = ffb_stmt_fetch(s)) == 1)
            (*rows)++;
    }
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    return rc;
}

static void test_fault_close_mid_fetch(void **state) {
    (void)state;
    proxy p;
    /* The result is about 3.2 MB; handshake and prepare are a few KB. */
    const char *const args[] = {"--close-after-bytes", "1000000", NULL};
    proxy_start(&p, args);
    ffb_conn *c = new_conn(p.port, 5000);
    OK(c, ffb_conn_connect(c));
    int64_t t0 = now_ms();
    int rows;
    int rc = scan_until_error(c, &rows);
    printf("# closed after 1000000 bytes: %s after %d rows, %lld ms: %s\n",
           ffb_err_name(rc), rows, (long long)(now_ms() - t0),
           ffb_error_message(ffb_conn_error(c)));
    assert_true(rc == FFB_E_IO || rc == FFB_E_CLOSED);
    assert_true(rows > 0 && rows < WIDE_ROWS);
    assert_true(ffb_conn_is_broken(c));
    assert_true(now_ms() - t0 < 5000);
    ffb_conn_free(c);
    proxy_stop(&p);
}

/* A count from `table` in its own transaction, committed: its last turn
   is the commit's. */
static int count_then_commit(ffb_conn *c, int64_t *n) {
    ffb_tx *tx = NULL;
    ffb_stmt *s = NULL;
    char sql[128];
    snprintf(sql, sizeof sql, "select count(*) from %s", table);
    int rc = ffb_tx_begin(c, NULL, &tx);
    if (rc == 0)
        rc = ffb_stmt_new(c, &s);
    if (rc == 0)
        rc = ffb_stmt_prepare(s, tx, sql, (size_t)-1);
    if (rc == 0)
        rc = ffb_stmt_execute(s, tx);
    if (rc == 0)
        rc = ffb_stmt_fetch(s) == 1 ? 0 : FFB_E_STATE;
    if (rc == 0)
        rc = ffb_stmt_get_int64(s, 0, n);
    if (rc == 0)
        rc = ffb_tx_commit(tx);
    ffb_stmt_free(s);
    ffb_tx_free(tx);
    return rc;
}

/* --close-at-turn: the connection is closed when the client begins the
   named turn, none of it forwarded - the earlier turns were all answered.
   The turns of the connect and of the query are learnt through a proxy
   without faults first; then the query's commit is cut. */
static void test_fault_close_at_turn(void **state) {
    (void)state;
    proxy p;
    const char *const none[] = {NULL};
    proxy_start(&p, none);
    ffb_conn *c = new_conn(p.port, 5000);
    OK(c, ffb_conn_connect(c));
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof st);
    uint64_t connect_turns = st.round_trips;
    int64_t n = 0;
    OK(c, count_then_commit(c, &n));
    assert_int_equal(n, 100);
    ffb_conn_stats(c, &st, sizeof st);
    uint64_t query_turns = st.round_trips - connect_turns;
    ffb_conn_free(c);
    proxy_stop(&p);
    assert_true(query_turns >= 2); /* at least the query, then the commit */

    /* Turns count from the query's first: its last (the commit) is cut. */
    char from[32], at[32];
    snprintf(from, sizeof from, "%llu", (unsigned long long)connect_turns + 1);
    snprintf(at, sizeof at, "%llu", (unsigned long long)query_turns - 1);
    const char *const args[] = {"--close-at-turn", at, "--fault-turn", from,
                                NULL};
    proxy_start(&p, args);
    c = new_conn(p.port, 5000);
    OK(c, ffb_conn_connect(c));
    ffb_stats before;
    ffb_conn_stats(c, &before, sizeof before);
    n = 0;
    int rc = count_then_commit(c, &n);
    printf("# connect %llu turns, query and commit %llu: cut at the commit: "
           "%s after %lld rows counted: %s\n",
           (unsigned long long)connect_turns, (unsigned long long)query_turns,
           ffb_err_name(rc), (long long)n,
           ffb_error_message(ffb_conn_error(c)));
    assert_int_equal(rc, FFB_E_CLOSED);
    assert_int_equal(n, 100); /* every turn before the cut was answered */
    assert_true(ffb_conn_is_broken(c));
    ffb_stats after;
    ffb_conn_stats(c, &after, sizeof after);
    /* the turns before the cut; the commit's got EOF, not an answer, and a
       round trip counts when answer bytes arrive */
    assert_int_equal(after.round_trips - before.round_trips, query_turns - 1);
    ffb_conn_free(c);
    proxy_stop(&p);
}

static void test_fault_stall_times_out(void **state) {
    (void)state;
    proxy p;
    const char *const args[] = {"--stall-after-bytes", "1000000", NULL};
    proxy_start(&p, args);
    ffb_conn *c = new_conn(p.port, 1000);
    OK(c, ffb_conn_connect(c));
    int64_t t0 = now_ms();
    int rows;
    int rc = scan_until_error(c, &rows);
    int64_t ms = now_ms() - t0;
    printf("# stalled after 1000000 bytes: %s after %d rows, %lld ms\n",
           ffb_err_name(rc), rows, (long long)ms);
    assert_int_equal(rc, FFB_E_TIMEOUT);
    assert_true(rows > 0 && rows < WIDE_ROWS);
    assert_true(ffb_conn_is_broken(c));
    assert_true(ms >= 1000 && ms < 10000);
    ffb_conn_free(c);
    proxy_stop(&p);
}

/* The first byte from the server is the high byte of op_accept's op code:
   inverted, the packet is nothing the client knows. */
static void test_fault_flip_first_server_byte(void **state) {
    (void)state;
    proxy p;
    const char *const args[] = {"--flip-byte-at", "0", NULL};
    proxy_start(&p, args);
    ffb_conn *c = new_conn(p.port, 5000);
    int rc = ffb_conn_connect(c);
    printf("# flipped s2c byte 0: %s: %s\n", ffb_err_name(rc),
           ffb_error_message(ffb_conn_error(c)));
    assert_true(is_one_of(rc, FFB_E_PROTO, FFB_E_CRYPT, FFB_E_CLOSED));
    assert_false(ffb_conn_is_attached(c));
    ffb_conn_free(c);
    proxy_stop(&p);
}

/* After connect (3 turns) the 4th turn is the prepare; offset 0 of its
   answer is the op code's high byte, encrypted - a stream cipher flips
   the same plaintext bit. */
static void test_fault_flip_encrypted_answer(void **state) {
    (void)state;
    proxy p;
    const char *const args[] = {"--fault-turn", "4", "--flip-byte-at", "0",
                                NULL};
    proxy_start(&p, args);
    ffb_conn *c = new_conn(p.port, 5000);
    OK(c, ffb_conn_connect(c));
    assert_string_not_equal(ffb_conn_wire_crypt(c), "");
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    int rc =
        ffb_stmt_prepare(s, NULL, "select 1 from rdb$database", (size_t)-1);
    printf("# flipped the first byte of an encrypted answer: %s: %s\n",
           ffb_err_name(rc), ffb_error_message(ffb_conn_error(c)));
    assert_true(is_one_of(rc, FFB_E_PROTO, FFB_E_CRYPT, FFB_E_CLOSED));
    assert_true(ffb_conn_is_broken(c));
    ffb_stmt_free(s);
    ffb_conn_free(c);
    proxy_stop(&p);
}

/* A flipped byte in a request: the server cannot parse it and drops the
   connection, or answers with something the client cannot match. */
static void test_fault_flip_request(void **state) {
    (void)state;
    proxy p;
    const char *const args[] = {
        "--fault-dir", "c2s", "--fault-turn", "4", "--flip-byte-at", "0", NULL};
    proxy_start(&p, args);
    ffb_conn *c = new_conn(p.port, 5000);
    OK(c, ffb_conn_connect(c));
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    int64_t t0 = now_ms();
    int rc =
        ffb_stmt_prepare(s, NULL, "select 1 from rdb$database", (size_t)-1);
    printf("# flipped the first byte of an encrypted request: %s in %lld "
           "ms: %s\n",
           ffb_err_name(rc), (long long)(now_ms() - t0),
           ffb_error_message(ffb_conn_error(c)));
    assert_true(is_one_of(rc, FFB_E_PROTO, FFB_E_CRYPT, FFB_E_CLOSED) ||
                rc == FFB_E_IO);
    assert_true(ffb_conn_is_broken(c));
    ffb_stmt_free(s);
    ffb_conn_free(c);
    proxy_stop(&p);
}

/* ---- main -------------------------------------------------------------------
 */

static int find_proxy(void) {
    const char *env = getenv("FFB_PROXY");
    if (env) {
        snprintf(proxy_path, sizeof(proxy_path), "%s", env);
        return access(proxy_path, X_OK) == 0;
    }
    /* This test is <build>/tests/test_it_proxy; the proxy is
       <build>/bench/ffb-proxy. */
    char self[PATH_MAX - 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return 0;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    snprintf(proxy_path, sizeof(proxy_path), "%s/../bench/ffb-proxy", self);
    return access(proxy_path, X_OK) == 0;
}

int main(void) {
    const char *req = getenv("FFB_TEST_REQUIRE_SERVER");
    int required = req && strcmp(req, "1") == 0;
    const char *port = getenv("FFB_TEST_FB4_PORT");
    const char *db = getenv("FFB_TEST_FB4_DB");
    const char *host = getenv("FFB_TEST_FB4_HOST");
    if (!getenv("FFB_TEST_SERVERS") || !port || !db) {
        if (required) {
            fprintf(stderr, "FFB_TEST_REQUIRE_SERVER=1 but no fb4 server\n");
            return 1;
        }
        return 77;
    }
    if (!find_proxy()) {
        fprintf(stderr, "ffb-proxy not built (libuv missing?): skipped\n");
        return 77;
    }
    signal(SIGPIPE, SIG_IGN);
    snprintf(upstream, sizeof(upstream), "%s:%s", host ? host : "127.0.0.1",
             port);
    snprintf(db_path, sizeof(db_path), "%s", db);
    snprintf(table, sizeof(table), "T_PROXY_%d", (int)getpid());
    snprintf(wide_table, sizeof(wide_table), "T_PROXYW_%d", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proxy_counts_match_library),
        cmocka_unit_test(test_proxy_total_time),
        cmocka_unit_test(test_proxy_scan_reported),
        cmocka_unit_test(test_fault_close_mid_fetch),
        cmocka_unit_test(test_fault_close_at_turn),
        cmocka_unit_test(test_fault_stall_times_out),
        cmocka_unit_test(test_fault_flip_first_server_byte),
        cmocka_unit_test(test_fault_flip_encrypted_answer),
        cmocka_unit_test(test_fault_flip_request),
    };
    return cmocka_run_group_tests_name("fb4 through ffb-proxy", tests,
                                       setup_tables, teardown_tables);
}
