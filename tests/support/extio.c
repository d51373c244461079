#define _POSIX_C_SOURCE 200809L
#include "tests/support/extio.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

int extio_open(extio *x, ffb_conn *conn, const char *dsn) {
    memset(x, 0, sizeof(*x));
    x->fd = -1;
    x->conn = conn;
    char host[256], port[32];
    const char *slash = strchr(dsn, '/'), *colon = slash ? strchr(slash, ':')
                                                         : NULL;
    if (!slash || !colon || (size_t)(slash - dsn) >= sizeof(host) ||
        (size_t)(colon - slash - 1) >= sizeof(port))
        return -1;
    memcpy(host, dsn, (size_t)(slash - dsn));
    host[slash - dsn] = '\0';
    memcpy(port, slash + 1, (size_t)(colon - slash - 1));
    port[colon - slash - 1] = '\0';
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -1;
    int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
    x->fd = fd;
    return 0;
}

void extio_close(extio *x) {
    if (x->fd >= 0)
        close(x->fd);
    x->fd = -1;
}

int extio_pump(extio *x, int wait_ms) {
    ffb_conn *c = x->conn;
    x->turns++;
    const uint8_t *out;
    size_t n;
    while ((n = ffb_conn_output(c, &out)) > 0) {
        ssize_t k = send(x->fd, out, n, MSG_NOSIGNAL);
        if (k > 0) {
            x->writes++;
            ffb_conn_output_done(c, (size_t)k);
            continue;
        }
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (k < 0 && errno == EINTR)
            continue;
        return ffb_conn_feed_eof(c);
    }
    int64_t d = ffb_conn_deadline(c);
    int t = wait_ms;
    if (d >= 0) {
        int64_t left = d - ffb_now_ms();
        if (left < 0)
            left = 0;
        if (t < 0 || left < t)
            t = (int)left;
    }
    struct pollfd p = {x->fd, POLLIN, 0};
    if (ffb_conn_output(c, &out) > 0)
        p.events |= POLLOUT;
    int r = poll(&p, 1, t);
    if (r > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
        uint8_t buf[65536];
        ssize_t k = recv(x->fd, buf, sizeof(buf), 0);
        if (k > 0) {
            int rc = ffb_conn_feed(c, buf, (size_t)k);
            if (rc < 0)
                return rc;
        } else if (k == 0) {
            return ffb_conn_feed_eof(c);
        }
    }
    return ffb_conn_expire(c, ffb_now_ms());
}

int extio_connect(extio *x) {
    int rc = ffb_conn_start(x->conn);
    if (rc < 0)
        return rc;
    while ((rc = ffb_conn_step(x->conn)) == 0)
        if ((rc = extio_pump(x, 30000)) < 0)
            return rc;
    return rc;
}

int extio_next(extio *x, const ffb_result **res) {
    for (;;) {
        int rc = ffb_conn_next_result(x->conn, res);
        if (rc != FFB_E_AGAIN)
            return rc;
        if ((rc = extio_pump(x, 30000)) < 0)
            return rc;
    }
}

int extio_fetch(extio *x, ffb_stmt *stmt) {
    for (;;) {
        int rc = ffb_stmt_fetch(stmt);
        if (rc != FFB_E_AGAIN)
            return rc;
        rc = ffb_stmt_queue_fetch(stmt, NULL, NULL);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            const ffb_result *res;
            if ((rc = extio_next(x, &res)) < 0)
                return rc;
            if (rc == 1 && ffb_result_status(res) < 0)
                return ffb_result_status(res);
        }
    }
}
