/*
 * bench/ffb-proxy (bench/README.md) for the integration suites: start it
 * in front of a server, read its port, its turn count and the answers to
 * its stdin commands (cut, refuse, hold, open), stop it.
 */
#ifndef FFB_TEST_PROXY_H
#define FFB_TEST_PROXY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct it_proxy {
    pid_t pid;
    int out_fd, in_fd; /* its stdout; its stdin (closing it ends it) */
    char buf[4096];
    size_t len;
    int port;
} it_proxy;

/*
 * ffb-proxy (FFB_PROXY, else ../bench/ffb-proxy beside the test binary)
 * forwarding to the server of `dsn` ("host/port:path"), with `args`
 * (NULL-terminated) after --port 0 --quiet --exit-on-stdin-eof. When the
 * proxy is not built the test is skipped, or fails under
 * FFB_TEST_REQUIRE_SERVER=1. The caller ignores SIGPIPE.
 */
void it_proxy_start(it_proxy *p, const char *dsn, const char *const *args);

/* The next line of its stdout (10 s at most): 0, or -1. */
int it_proxy_line(it_proxy *p, char *line, size_t size);

/* The client turns it counted over all connections (SIGUSR1). */
uint64_t it_proxy_turns(it_proxy *p);

/* Send a stdin command and wait for its "ok" line: the connections it
   affected ("cut": closed; "open": held ones let through). */
unsigned it_proxy_command(it_proxy *p, const char *cmd);

/* `dsn` with the proxy's address instead of the server's. */
void it_proxy_dsn(const it_proxy *p, const char *dsn, char *out, size_t size);

void it_proxy_stop(it_proxy *p);

#endif
