#include "tests/support/proxy.h"

#include <setjmp.h>
#include <stdarg.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"

static char proxy_path[PATH_MAX];

static int find_proxy(void) {
    const char *env = getenv("FFB_PROXY");
    if (env) {
        snprintf(proxy_path, sizeof(proxy_path), "%s", env);
        return access(proxy_path, X_OK) == 0;
    }
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

int it_proxy_line(it_proxy *p, char *line, size_t size) {
    int64_t deadline = ffb_now_ms() + 10000;
    for (;;) {
        char *nl = memchr(p->buf, '\n', p->len);
        if (nl) {
            size_t n = (size_t)(nl - p->buf);
            snprintf(line, size, "%.*s", (int)n, p->buf);
            p->len -= n + 1;
            memmove(p->buf, nl + 1, p->len);
            return 0;
        }
        int64_t left = deadline - ffb_now_ms();
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

void it_proxy_start(it_proxy *p, const char *dsn, const char *const *args) {
    if (!find_proxy()) {
        const char *req = getenv("FFB_TEST_REQUIRE_SERVER");
        if (req && strcmp(req, "1") == 0)
            fail_msg("ffb-proxy not found at %s", proxy_path);
        skip();
    }
    char up[64];
    const char *slash = strchr(dsn, '/'), *colon = strchr(dsn, ':');
    assert_true(slash && colon && colon > slash);
    snprintf(up, sizeof(up), "%.*s:%.*s", (int)(slash - dsn), dsn,
             (int)(colon - slash - 1), slash + 1);
    const char *argv[32];
    size_t n = 0;
    argv[n++] = proxy_path;
    argv[n++] = "--upstream";
    argv[n++] = up;
    argv[n++] = "--port";
    argv[n++] = "0";
    argv[n++] = "--quiet";
    argv[n++] = "--exit-on-stdin-eof";
    for (size_t i = 0; args[i] && n < 31; i++)
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
    if (it_proxy_line(p, line, sizeof(line)) < 0 ||
        sscanf(line, "port %d", &p->port) != 1)
        fail_msg("ffb-proxy did not report its port");
}

uint64_t it_proxy_turns(it_proxy *p) {
    assert_int_equal(kill(p->pid, SIGUSR1), 0);
    char line[1024];
    for (;;) {
        if (it_proxy_line(p, line, sizeof(line)) < 0)
            fail_msg("ffb-proxy did not answer SIGUSR1");
        if (strncmp(line, "stats ", 6) == 0 && strstr(line, " why=signal"))
            break;
    }
    const char *f = strstr(line, " turns=");
    assert_non_null(f);
    return strtoull(f + 7, NULL, 10);
}

unsigned it_proxy_command(it_proxy *p, const char *cmd) {
    char line[1024];
    size_t len = strlen(cmd);
    snprintf(line, sizeof(line), "%s\n", cmd);
    assert_int_equal(write(p->in_fd, line, len + 1), (ssize_t)(len + 1));
    for (;;) {
        if (it_proxy_line(p, line, sizeof(line)) < 0)
            fail_msg("ffb-proxy did not answer \"%s\"", cmd);
        unsigned n;
        char word[64];
        if (sscanf(line, "ok %63s %u", word, &n) == 2 && !strcmp(word, cmd))
            return n;
        if (strncmp(line, "error ", 6) == 0)
            fail_msg("ffb-proxy refused \"%s\"", cmd);
    }
}

void it_proxy_dsn(const it_proxy *p, const char *dsn, char *out, size_t size) {
    snprintf(out, size, "127.0.0.1/%d:%s", p->port, strchr(dsn, ':') + 1);
}

void it_proxy_stop(it_proxy *p) {
    close(p->in_fd);
    kill(p->pid, SIGTERM);
    int st;
    waitpid(p->pid, &st, 0);
    close(p->out_fd);
}
