/*
 * The node-firebird peer: a long-lived `node bench/node/peer.js` child,
 * driven over its stdin/stdout one line at a time. peer.js does the work
 * and times its own run phase (process.hrtime), so the pipe between the
 * two processes is not measured.
 *
 *   > setup <scenario> <n>     < ok | na <why> | err <message>
 *   > run                      < ok <nanoseconds> <cpu nanoseconds> | err <message>
 *   > teardown                 < ok | err <message>
 *   > info                     < ok <text>
 *   > csetup <clients>         < ok | na <why> | err <message>
 *   > crun <ms>                < ok <ns> <cpu ns> <queries> <p50 ns> <p99 ns>
 *                                | err <message>
 *   > cteardown                < ok | err <message>
 *   > quit
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* Long enough for a full run at 10 ms of delay, short of forever. */
#define REPLY_TIMEOUT_MS 120000

typedef struct node_peer {
    pid_t pid;
    int to_fd;
    int from_fd;
    char buf[8192];
    size_t len;
} node_peer;

static int send_line(peer *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int send_line(peer *p, const char *fmt, ...) {
    node_peer *s = p->st;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(line) - 1)
        return bench_fail(p, PEER_ERR, "command too long");
    line[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t w = write(s->to_fd, line + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return bench_fail(p, PEER_ERR, "node peer: write: %s",
                              strerror(errno));
        off += (int)w;
    }
    return PEER_OK;
}

/* Read one reply line; map "ok"/"na"/"err" to PEER_*, the rest to `rest`. */
static int read_reply(peer *p, char *rest, size_t size) {
    node_peer *s = p->st;
    uint64_t deadline = bench_now_ns() + (uint64_t)REPLY_TIMEOUT_MS * 1000000u;
    for (;;) {
        char *nl = memchr(s->buf, '\n', s->len);
        if (nl) {
            *nl = '\0';
            char line[sizeof(s->buf)];
            snprintf(line, sizeof(line), "%s", s->buf);
            s->len -= (size_t)(nl + 1 - s->buf);
            memmove(s->buf, nl + 1, s->len);
            char *sp = strchr(line, ' ');
            const char *arg = sp ? sp + 1 : "";
            if (sp)
                *sp = '\0';
            if (!strcmp(line, "ok")) {
                snprintf(rest, size, "%s", arg);
                return PEER_OK;
            }
            if (!strcmp(line, "na"))
                return bench_fail(p, PEER_NA, "%s", arg);
            return bench_fail(p, PEER_ERR, "%s", arg);
        }
        uint64_t now = bench_now_ns();
        if (now >= deadline || s->len == sizeof(s->buf))
            return bench_fail(p, PEER_ERR, "node peer: no answer");
        struct pollfd pf = {s->from_fd, POLLIN, 0};
        int r = poll(&pf, 1, (int)((deadline - now) / 1000000u) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        ssize_t n = read(s->from_fd, s->buf + s->len, sizeof(s->buf) - s->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return bench_fail(p, PEER_ERR, "node peer exited");
        s->len += (size_t)n;
    }
}

static int node_start(peer *p, const bench_cfg *cfg) {
    node_peer *s = calloc(1, sizeof(*s));
    if (!s)
        return bench_fail(p, PEER_ERR, "out of memory");
    p->st = s;
    char script[1024], port[16];
    snprintf(script, sizeof(script), "%s/peer.js", cfg->node_dir);
    snprintf(port, sizeof(port), "%d", cfg->port);
    if (access(script, R_OK) != 0)
        return bench_fail(p, PEER_NA, "%s missing", script);
    int to[2], from[2];
    if (pipe(to) < 0 || pipe(from) < 0)
        return bench_fail(p, PEER_ERR, "pipe: %s", strerror(errno));
    fflush(NULL);
    s->pid = fork();
    if (s->pid < 0)
        return bench_fail(p, PEER_ERR, "fork: %s", strerror(errno));
    if (s->pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        setenv("FFB_BENCH_HOST", cfg->host, 1);
        setenv("FFB_BENCH_PORT", port, 1);
        setenv("FFB_BENCH_DB", cfg->db, 1);
        setenv("FFB_BENCH_USER", cfg->user, 1);
        setenv("FFB_BENCH_PASSWORD", cfg->password, 1);
        execlp(cfg->node_bin, cfg->node_bin, script, (char *)NULL);
        fprintf(stderr, "cannot run %s: %s\n", cfg->node_bin, strerror(errno));
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    fcntl(to[1], F_SETFD, FD_CLOEXEC);
    fcntl(from[0], F_SETFD, FD_CLOEXEC);
    s->to_fd = to[1];
    s->from_fd = from[0];
    char rest[256];
    if (send_line(p, "hello") != PEER_OK)
        return PEER_ERR;
    return read_reply(p, rest, sizeof(rest));
}

static int node_setup(peer *p, int sc, int n) {
    char rest[64];
    if (send_line(p, "setup %s %d", bench_scenarios[sc].name, n) != PEER_OK)
        return PEER_ERR;
    return read_reply(p, rest, sizeof(rest));
}

static int node_run(peer *p, int sc, int n, run_result *out) {
    (void)sc;
    (void)n;
    char rest[64];
    out->lib_rts = -1;
    if (send_line(p, "run") != PEER_OK)
        return PEER_ERR;
    int rc = read_reply(p, rest, sizeof(rest));
    if (rc == PEER_OK) {
        char *end;
        out->ns = strtoull(rest, &end, 10);
        /* The node process's own CPU (process.cpuUsage()). */
        out->cpu_ns = (int64_t)strtoull(end, NULL, 10);
    }
    return rc;
}

static int node_teardown(peer *p, int sc) {
    (void)sc;
    char rest[64];
    if (send_line(p, "teardown") != PEER_OK)
        return PEER_ERR;
    return read_reply(p, rest, sizeof(rest));
}

static int node_info(peer *p, char *buf, size_t size) {
    if (send_line(p, "info") != PEER_OK)
        return PEER_ERR;
    return read_reply(p, buf, size);
}

static void node_stop(peer *p) {
    node_peer *s = p->st;
    if (!s)
        return;
    if (s->pid > 0) {
        send_line(p, "quit");
        close(s->to_fd);
        close(s->from_fd);
        /* Give it a moment to detach, then make sure. */
        for (int i = 0; i < 200; i++) {
            if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
                s->pid = 0;
                break;
            }
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
        if (s->pid > 0) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
        }
    }
    free(s);
    p->st = NULL;
}

/* The concurrency scenario: N connections on node's one event loop. */
static int node_conc_setup(peer *p, int clients) {
    char rest[64];
    if (send_line(p, "csetup %d", clients) != PEER_OK)
        return PEER_ERR;
    return read_reply(p, rest, sizeof(rest));
}

static int node_conc_run(peer *p, int clients, int ms, conc_result *out) {
    char rest[256];
    (void)clients;
    out->lib_rts = -1;
    if (send_line(p, "crun %d", ms) != PEER_OK)
        return PEER_ERR;
    int rc = read_reply(p, rest, sizeof(rest));
    if (rc == PEER_OK) {
        unsigned long long v[5];
        if (sscanf(rest, "%llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4]) != 5)
            return bench_fail(p, PEER_ERR, "node peer: bad crun reply: %s",
                              rest);
        out->ns = v[0];
        out->cpu_ns = (int64_t)v[1];
        out->queries = v[2];
        out->p50_ns = v[3];
        out->p99_ns = v[4];
    }
    return rc;
}

static int node_conc_teardown(peer *p) {
    char rest[64];
    if (send_line(p, "cteardown") != PEER_OK)
        return PEER_ERR;
    return read_reply(p, rest, sizeof(rest));
}

const peer_ops bench_node_ops = {
    .start = node_start,
    .setup = node_setup,
    .run = node_run,
    .teardown = node_teardown,
    .info = node_info,
    .stop = node_stop,
    .conc_setup = node_conc_setup,
    .conc_run = node_conc_run,
    .conc_teardown = node_conc_teardown,
};
