/*
 * The socket transport (the default ffb__transport): the only file that
 * touches a socket. Sockets are non-blocking and every wait goes through
 * poll(), bounded by the time the blocking loop (lib/run.c) gives - the
 * engine's next deadline - so the engine decides every timeout, as it does
 * for any other transport. Bytes go through the byte pump like an
 * application's own I/O. SIGPIPE is avoided per send (MSG_NOSIGNAL).
 */
#define _GNU_SOURCE /* pipe2 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "lib/events.h"
#include "lib/internal.h"

/* The text of an errno value, thread-safe: strerror_r, which is the XSI
   one (int, the text in buf) or, with _GNU_SOURCE on glibc, the GNU one
   (char *, the text in buf or a static string); _Generic takes whichever
   this libc declares. */
static const char *xsi_text(int rc, char *buf) {
    return rc == 0 ? buf : NULL;
}

static const char *gnu_text(char *text, char *buf) {
    (void)buf;
    return text;
}

#define STRERROR_TEXT(call, buf)                                               \
    _Generic((call), int: xsi_text, char *: gnu_text)((call), (buf))

static const char *err_text(int e, char *buf, size_t size) {
    const char *t = STRERROR_TEXT(strerror_r(e, buf, size), buf);
    if (!t || !t[0]) {
        snprintf(buf, size, "error %d", e);
        t = buf;
    }
    return t;
}

/* Room for any strerror text. */
#define ERR_TEXT_SIZE 256

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int set_nonblocking(int fd) {
    int fl = fcntl(fd, F_GETFL, 0);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Connect one address within the deadline; returns fd or -errno. */
static int try_addr(const struct addrinfo *ai, int64_t deadline) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
    if (fd < 0)
        return -errno;
    if (set_nonblocking(fd) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            int e = errno;
            close(fd);
            return -e;
        }
        for (;;) {
            struct pollfd p = {fd, POLLOUT, 0};
            int t = -1;
            if (deadline >= 0) {
                int64_t left = deadline - now_ms();
                t = left > 0 ? (int)left : 0;
            }
            int n = poll(&p, 1, t);
            if (n < 0 && errno == EINTR)
                continue;
            if (n == 0) {
                close(fd);
                return -ETIMEDOUT;
            }
            int err = 0;
            socklen_t len = sizeof(err);
            if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                err = errno;
            if (err) {
                close(fd);
                return -err;
            }
            break;
        }
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    return fd;
}

/* The wake pipe (ffb_conn_cancel from another thread): made once, on the
   connection's own thread before its first wait, kept until it is freed;
   its write end is published last, with release order. */
static void make_wake_pipe(ffb_conn *conn) {
    if (__atomic_load_n(&conn->net.wake_wr, __ATOMIC_ACQUIRE) >= 0)
        return;
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0)
        return; /* no wake: a cancel then waits for the next wake-up */
    conn->net.wake_rd = fds[0];
    __atomic_store_n(&conn->net.wake_wr, fds[1], __ATOMIC_RELEASE);
}

static void net_wake(ffb_conn *conn, void *data) {
    (void)data;
    int fd = __atomic_load_n(&conn->net.wake_wr, __ATOMIC_ACQUIRE);
    if (fd >= 0) {
        char b = 1;
        ssize_t n = write(fd, &b, 1); /* a full pipe is awake already */
        (void)n;
    }
}

static void net_release(ffb_conn *conn, void *data) {
    (void)data;
    if (conn->net.wake_rd >= 0)
        close(conn->net.wake_rd);
    if (conn->net.wake_wr >= 0)
        close(conn->net.wake_wr);
    conn->net.wake_rd = conn->net.wake_wr = -1;
}

static void drain_wake(ffb_conn *conn) {
    char buf[64];
    while (read(conn->net.wake_rd, buf, sizeof(buf)) > 0)
        ;
}

static int net_connect(ffb_conn *conn, void *data, int timeout_ms) {
    (void)data;
    make_wake_pipe(conn);
    const char *host = conn->host, *port = conn->port;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g == EAI_SERVICE || (g != 0 && strcmp(port, "gds_db") == 0)) {
        /* fbclient falls back to 3050 when the service is unknown. */
        g = getaddrinfo(host, strcmp(port, "gds_db") == 0 ? "3050" : port,
                        &hints, &res);
    }
    if (g != 0)
        return ffb__error_set(&conn->err, FFB_E_IO,
                              "cannot resolve host \"%s\" port \"%s\": %s",
                              host, port, gai_strerror(g));
    int64_t deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
    int fd = -ECONNREFUSED;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = try_addr(ai, deadline);
        if (fd >= 0 || fd == -ETIMEDOUT)
            break;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        if (fd == -ETIMEDOUT)
            return ffb__error_set(&conn->err, FFB_E_TIMEOUT,
                                  "connecting to %s port %s timed out after "
                                  "%d ms",
                                  host, port, conn->connect_timeout_ms);
        char eb[ERR_TEXT_SIZE];
        return ffb__error_set(&conn->err, FFB_E_IO,
                              "cannot connect to %s port %s: %s", host, port,
                              err_text(-fd, eb, sizeof(eb)));
    }
    conn->net.fd = fd;
    return 0;
}

/* Wait for `events` at most timeout_ms (-1: no limit): 1 when some came,
   0 when the time ran out or the wait was woken (ffb__io_wake: the loop
   then looks at what was asked). */
static int wait_fd(ffb_conn *conn, short events, int timeout_ms) {
    for (;;) {
        struct pollfd p[2] = {{conn->net.fd, events, 0},
                              {conn->net.wake_rd, POLLIN, 0}};
        int n = poll(p, conn->net.wake_rd >= 0 ? 2 : 1, timeout_ms);
        conn->net.revents = p[0].revents;
        if (n > 0 && p[1].revents) {
            drain_wake(conn);
            return 0;
        }
        if (n > 0)
            return 1;
        if (n == 0)
            return 0;
        if (errno == EINTR)
            continue;
        char eb[ERR_TEXT_SIZE];
        return ffb__error_set(&conn->err, FFB_E_IO, "poll failed: %s",
                              err_text(errno, eb, sizeof(eb)));
    }
}

/* Read what is available now, without waiting. */
static int read_some(ffb_conn *conn) {
    uint8_t buf[65536];
    ssize_t n = recv(conn->net.fd, buf, sizeof(buf), 0);
    if (n > 0)
        return ffb_conn_feed(conn, buf, (size_t)n);
    if (n == 0)
        return ffb_conn_feed_eof(conn) < 0 ? conn->err.code : FFB_E_CLOSED;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return 0;
    char eb[ERR_TEXT_SIZE];
    return ffb__error_set(&conn->err, FFB_E_IO,
                          "reading from the server failed: %s",
                          err_text(errno, eb, sizeof(eb)));
}

static int net_flush(ffb_conn *conn, void *data, int timeout_ms) {
    (void)data;
    const uint8_t *p;
    size_t len;
    while ((len = ffb_conn_output(conn, &p)) > 0) {
        ssize_t n = send(conn->net.fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            ffb_conn_output_done(conn, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* Keep reading while writing: a long pipeline's answers must
               not fill both directions' buffers and block both sides
               (reference 02, 7.7 rule 7). */
            int rc = wait_fd(conn, POLLOUT | POLLIN, timeout_ms);
            if (rc <= 0)
                return rc; /* the loop asks the engine about the time */
            if (conn->net.revents & POLLIN) {
                rc = read_some(conn);
                if (rc < 0)
                    return rc;
            }
            continue;
        }
        char eb[ERR_TEXT_SIZE];
        return ffb__error_set(&conn->err, FFB_E_IO,
                              "writing to the server failed: %s",
                              err_text(errno, eb, sizeof(eb)));
    }
    return 0;
}

static int net_read(ffb_conn *conn, void *data, int timeout_ms) {
    (void)data;
    uint8_t buf[65536];
    for (;;) {
        ssize_t n = recv(conn->net.fd, buf, sizeof(buf), 0);
        if (n > 0)
            return ffb_conn_feed(conn, buf, (size_t)n);
        if (n == 0)
            return ffb_conn_feed_eof(conn) < 0 ? conn->err.code : FFB_E_CLOSED;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int rc = wait_fd(conn, POLLIN, timeout_ms);
            if (rc <= 0)
                return rc;
            continue;
        }
        char eb[ERR_TEXT_SIZE];
        return ffb__error_set(&conn->err, FFB_E_IO,
                              "reading from the server failed: %s",
                              err_text(errno, eb, sizeof(eb)));
    }
}

static void net_close(ffb_conn *conn, void *data) {
    (void)data;
    if (conn->net.fd >= 0) {
        close(conn->net.fd);
        conn->net.fd = -1;
    }
}

const ffb__transport ffb__net_transport = {
    net_connect, net_flush, net_read, net_close, net_wake, net_release};

/* ---- the aux connection of events (lib/events.c, reference 03 C.5.2) ---- */

/* Plain TCP, no handshake, never written to. The address is the one the
   main socket is connected to (as fbclient's aux_connect does: the address
   in the server's answer is its own view, wrong behind NAT); the host name
   again only when the main connection is not a socket of this driver. */
int ffb__aux_connect(ffb_conn *conn, uint16_t port, int timeout_ms, int *fd) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int64_t deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
    int got = -ECONNREFUSED;
    if (conn->net.fd >= 0 &&
        getpeername(conn->net.fd, (struct sockaddr *)&ss, &sl) == 0 &&
        (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)) {
        if (ss.ss_family == AF_INET)
            ((struct sockaddr_in *)&ss)->sin_port = htons(port);
        else
            ((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
        struct addrinfo ai;
        memset(&ai, 0, sizeof(ai));
        ai.ai_family = ss.ss_family;
        ai.ai_socktype = SOCK_STREAM;
        ai.ai_addr = (struct sockaddr *)&ss;
        ai.ai_addrlen = sl;
        got = try_addr(&ai, deadline);
    } else {
        char ps[8];
        snprintf(ps, sizeof(ps), "%u", (unsigned)port);
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof(hints));
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        int g = getaddrinfo(conn->host, ps, &hints, &res);
        if (g != 0)
            return ffb__error_set(&conn->err, FFB_E_IO,
                                  "cannot resolve host \"%s\" for the aux "
                                  "connection: %s",
                                  conn->host, gai_strerror(g));
        for (struct addrinfo *a = res; a; a = a->ai_next) {
            got = try_addr(a, deadline);
            if (got >= 0 || got == -ETIMEDOUT)
                break;
        }
        freeaddrinfo(res);
    }
    if (got < 0) {
        char eb[ERR_TEXT_SIZE];
        return ffb__error_set(&conn->err,
                              got == -ETIMEDOUT ? FFB_E_TIMEOUT : FFB_E_IO,
                              "cannot open the aux connection (events) to "
                              "port %u: %s",
                              (unsigned)port, err_text(-got, eb, sizeof(eb)));
    }
    *fd = got;
    return 0;
}

int ffb__aux_recv(ffb_conn *conn, int fd, uint8_t *buf, size_t size,
                  int timeout_ms) {
    int64_t deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
    for (;;) {
        ssize_t n = recv(fd, buf, size, 0);
        if (n > 0)
            return n > 0x7fffffff ? 0x7fffffff : (int)n;
        if (n == 0)
            return FFB_E_CLOSED;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            char eb[ERR_TEXT_SIZE];
            return ffb__error_set(&conn->err, FFB_E_IO,
                                  "reading the aux connection failed: %s",
                                  err_text(errno, eb, sizeof(eb)));
        }
        int t = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0)
                return 0;
            t = left > 0x7fffffff ? 0x7fffffff : (int)left;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int k = poll(&p, 1, t);
        if (k == 0)
            return 0;
        if (k < 0 && errno != EINTR) {
            char eb[ERR_TEXT_SIZE];
            return ffb__error_set(&conn->err, FFB_E_IO, "poll failed: %s",
                                  err_text(errno, eb, sizeof(eb)));
        }
    }
}

void ffb__aux_close(int fd) {
    if (fd >= 0)
        close(fd);
}

/* The effective user's login name into user (empty when unknown), with
   getpwuid_r: getpwuid's answer is shared by all threads. The entry's
   strings go to a stack buffer, or a larger heap one (libc's: no allocator
   reaches here) when sysconf asks for more or they do not fit (ERANGE),
   up to 1 MiB. */
static void login_name(char *user, size_t user_size) {
    char stack_buf[4096];
    char *buf = stack_buf, *heap = NULL;
    size_t size = sizeof(stack_buf);
    long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
    struct passwd pwd, *pw = NULL;
    int rc;
    user[0] = '\0';
    if (hint > 0 && (size_t)hint > size && hint <= 1L << 20) {
        size = (size_t)hint;
        buf = heap = malloc(size);
        if (!buf)
            return;
    }
    while ((rc = getpwuid_r(geteuid(), &pwd, buf, size, &pw)) == ERANGE &&
           size < (size_t)1 << 20) {
        size *= 2;
        char *b = realloc(heap, size);
        if (!b)
            break;
        buf = heap = b;
    }
    if (rc == 0 && pw && pw->pw_name)
        snprintf(user, user_size, "%s", pw->pw_name);
    free(heap);
}

void ffb__os_identity(char *user, size_t user_size, char *host,
                      size_t host_size, int *pid, char *name,
                      size_t name_size) {
    const char *u = getenv("USER");
    if (u && *u)
        snprintf(user, user_size, "%s", u);
    else
        login_name(user, user_size);
    if (gethostname(host, host_size) != 0)
        host[0] = '\0';
    host[host_size - 1] = '\0';
    /* ASCII only, whatever LC_CTYPE says: host names are ASCII. */
    for (char *p = host; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    *pid = (int)getpid();
    ssize_t n = readlink("/proc/self/exe", name, name_size - 1);
    name[n > 0 ? (size_t)n : 0] = '\0';
}
