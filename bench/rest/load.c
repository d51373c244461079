/*
 * ffb-rest-load: the load tool of the REST benchmarks (bench/rest/README.md,
 * spec rest.md A17.3). One libuv loop; per scenario `-c` closed-loop
 * HTTP/1.1 keep-alive clients (responses parsed with http-parser), a
 * warm-up, then `-d` seconds measured. Every answer, warm-up included, is
 * checked for its status and its shape (scen.c); a wrong answer counts as
 * an error and fails the run. Latency goes into a log-linear histogram
 * (1 ns resolution below 2 µs, then 1024 sub-buckets per power of two:
 * 3 significant digits) from which p50/p95/p99 are read; the client's CPU
 * (getrusage) is divided by the requests; the round trips of each request
 * come from ffb-rest's `Server-Timing: db;desc="rt=N"`.
 *
 * `-direct DSN` runs the same SQL through libfastfb's async API on the
 * same loop (`-c` connections, one transaction per request, every
 * statement, its parameters and the end in one write when the answer is
 * bounded), checked the same way: the limit the REST layer is measured
 * against, the twin of PostgREST's pgbench script. With both, every
 * scenario runs on REST, then direct, and REST/direct is printed.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <http_parser.h>
#include <uv.h>

#include <fastfb_uv.h>

#include "jwt.h"
#include "load.h"

/* ---- buffers ------------------------------------------------------------ */

void lb_put(lbuf *b, const void *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->len + n + 1)
            c *= 2;
        char *p = realloc(b->p, c);
        if (!p) {
            fprintf(stderr, "ffb-rest-load: out of memory\n");
            exit(3);
        }
        b->p = p;
        b->cap = c;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void lb_puts(lbuf *b, const char *s) { lb_put(b, s, strlen(s)); }

void lb_printf(lbuf *b, const char *fmt, ...) {
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        lb_put(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big)
        exit(3);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    lb_put(b, big, (size_t)n);
    free(big);
}

/* ---- the histogram (log-linear, HDR style) ------------------------------ */

#define H_LIN 2048 /* exact below this many ns */
#define H_SUB 1024 /* sub-buckets per power of two above */
#define H_POW 26   /* up to 2^(11+26) ns, about 137 s */
#define H_N (H_LIN + H_POW * H_SUB)

typedef struct hist {
    uint64_t c[H_N];
    uint64_t n, max;
} hist;

static size_t h_index(uint64_t v) {
    if (v < H_LIN)
        return (size_t)v;
    int b = 63 - __builtin_clzll(v); /* >= 11 */
    int shift = b - 10;
    size_t i =
        H_LIN + (size_t)(shift - 1) * H_SUB + (size_t)((v >> shift) - H_SUB);
    return i < H_N ? i : H_N - 1;
}

/* the middle of bucket i */
static uint64_t h_value(size_t i) {
    if (i < H_LIN)
        return i;
    size_t shift = (i - H_LIN) / H_SUB + 1;
    uint64_t sub = (i - H_LIN) % H_SUB + H_SUB;
    return (sub << shift) + ((uint64_t)1 << shift) / 2;
}

static void h_add(hist *h, uint64_t v) {
    h->c[h_index(v)]++;
    h->n++;
    if (v > h->max)
        h->max = v;
}

static uint64_t h_pct(const hist *h, double p) {
    if (!h->n)
        return 0;
    uint64_t want = (uint64_t)ceil(p / 100.0 * (double)h->n);
    if (want < 1)
        want = 1;
    uint64_t acc = 0;
    for (size_t i = 0; i < H_N; i++) {
        acc += h->c[i];
        if (acc >= want)
            return h_value(i) < h->max ? h_value(i) : h->max;
    }
    return h->max;
}

/* ---- one scenario's measurement ----------------------------------------- */

#define RT_SLOTS 18 /* 0..16, then "more" */

typedef struct meter {
    int phase; /* 0 warm-up, 1 measured, 2 stopping */
    uint64_t t0, t1;
    struct rusage ru0, ru1;
    double srv0, srv1; /* the server's CPU seconds (-server-pid), -1: none */
    hist *h;
    uint64_t n, errors, bytes;
    uint64_t rt[RT_SLOTS], rt_none, rt_sum;
    uint64_t all_checked; /* every answer, warm-up included */
    int warmed;           /* clients that completed a request */
    char msgs[3][400];
    int nmsgs;
    int fatal;
} meter;

static void m_error(meter *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void m_error(meter *m, const char *fmt, ...) {
    m->errors++;
    if (m->nmsgs >= 3)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->msgs[m->nmsgs++], sizeof m->msgs[0], fmt, ap);
    va_end(ap);
}

/* a completed request: rt < 0 means none was reported */
static void m_done(meter *m, uint64_t lat_ns, long rt, size_t bytes) {
    m->all_checked++;
    if (m->phase != 1)
        return;
    h_add(m->h, lat_ns);
    m->n++;
    m->bytes += bytes;
    if (rt < 0) {
        m->rt_none++;
    } else {
        m->rt[rt < RT_SLOTS - 1 ? rt : RT_SLOTS - 1]++;
        m->rt_sum += (uint64_t)rt;
    }
}

typedef struct result {
    const lscen *s;
    const char *mode;
    int c;
    double secs, rps, p50, p95, p99, max, kbps, cpu_us, srv_us, rt_mean;
    uint64_t n, errors, rt_none;
    long rt_min, rt_max;
    int failed;
} result;

static double ms_of(uint64_t ns) { return (double)ns / 1e6; }

static double tv_us(const struct timeval *t) {
    return (double)t->tv_sec * 1e6 + (double)t->tv_usec;
}

static void m_result(const meter *m, const lscen *s, const char *mode, int c,
                     result *r) {
    memset(r, 0, sizeof *r);
    r->s = s;
    r->mode = mode;
    r->c = c;
    r->secs = (double)(m->t1 - m->t0) / 1e9;
    r->n = m->n;
    r->errors = m->errors;
    r->rps = r->secs > 0 ? (double)m->n / r->secs : 0;
    r->p50 = ms_of(h_pct(m->h, 50));
    r->p95 = ms_of(h_pct(m->h, 95));
    r->p99 = ms_of(h_pct(m->h, 99));
    r->max = ms_of(m->h->max);
    r->kbps = r->secs > 0 ? (double)m->bytes / 1024.0 / r->secs : 0;
    double cpu = tv_us(&m->ru1.ru_utime) + tv_us(&m->ru1.ru_stime) -
                 tv_us(&m->ru0.ru_utime) - tv_us(&m->ru0.ru_stime);
    r->cpu_us = m->n ? cpu / (double)m->n : 0;
    r->srv_us = m->srv0 >= 0 && m->srv1 >= 0 && m->n
                    ? (m->srv1 - m->srv0) * 1e6 / (double)m->n
                    : -1;
    uint64_t nrt = m->n - m->rt_none;
    r->rt_none = m->rt_none;
    r->rt_mean = nrt ? (double)m->rt_sum / (double)nrt : -1;
    r->rt_min = r->rt_max = -1;
    for (long i = 0; i < RT_SLOTS; i++)
        if (m->rt[i]) {
            if (r->rt_min < 0)
                r->rt_min = i;
            r->rt_max = i;
        }
    r->failed = m->errors > 0 || m->fatal || m->n == 0;
}

/* ---- options and shared state ------------------------------------------- */

typedef struct opts {
    const char *url, *k6_url, *direct, *k6_direct, *user, *password;
    int c;
    double dur, warm;
    const char *only, *suite, *out, *label, *token, *secret;
    int check_rt;
    int srv_pid, k6_srv_pid; /* -server-pid, -k6-server-pid: ffb-rest's */
    const char *alt, *k6_alt; /* -alternate, -k6-alternate: server B */
    int alt_pid, k6_alt_pid;  /* -alternate-pid, -k6-alternate-pid */
    int runs;                 /* -runs: measured runs per side */
    uint64_t seed;
    int scale;
} opts;

static opts O = {.c = 16,
                 .dur = 10,
                 .warm = 2,
                 .suite = "all",
                 .label = "",
                 .secret = "reallyreallyreallyreallyverysafe",
                 .seed = 1,
                 .scale = 1,
                 .runs = 1};
static uv_loop_t *loop;
static lenv env;
static uv_timer_t timer;
static meter M;
static hist H;
static const lscen *cur;
static int cur_srv_pid; /* the server of the scenario being run, 0: none */

/* user + system CPU seconds of process `pid` (/proc/PID/stat), -1 */
static double proc_cpu(int pid) {
    if (pid <= 0)
        return -1;
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *q = strrchr(buf, ')'); /* the name may hold spaces */
    unsigned long long ut = 0, st = 0;
    if (!q || sscanf(q + 2,
                     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                     "%llu %llu",
                     &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}
static void (*on_stop)(void); /* the engine's: close or park connections */

static void timer_cb(uv_timer_t *t) {
    (void)t;
    if (M.phase == 0) {
        if (M.warmed < O.c && !M.fatal) {
            /* the warm-up lasts until every client had an answer (its
               connection and its first, cold, prepare are behind it) */
            uv_timer_start(&timer, timer_cb, 50, 0);
            return;
        }
        M.phase = 1;
        memset(&H, 0, sizeof H);
        M.t0 = uv_hrtime();
        getrusage(RUSAGE_SELF, &M.ru0);
        M.srv0 = proc_cpu(cur_srv_pid);
        uv_timer_start(&timer, timer_cb, (uint64_t)(O.dur * 1000), 0);
    } else if (M.phase == 1) {
        if (M.n < 1 && !M.fatal) {
            /* a slow scenario (GETAllEmbed in a short round): measure
               until one request completed */
            uv_timer_start(&timer, timer_cb, 50, 0);
            return;
        }
        M.phase = 2;
        M.t1 = uv_hrtime();
        getrusage(RUSAGE_SELF, &M.ru1);
        M.srv1 = proc_cpu(cur_srv_pid);
        on_stop();
    }
}

static void start_meter(void) {
    memset(&M, 0, sizeof M);
    M.h = &H;
    M.srv0 = M.srv1 = -1;
    uv_timer_start(&timer, timer_cb, (uint64_t)(O.warm * 1000), 0);
}

/* the scenario is over once every client is idle (or failed) */
static void stop_all(void) {
    if (M.phase < 2) { /* a fatal error before the end */
        M.phase = 2;
        M.t1 = uv_hrtime();
        getrusage(RUSAGE_SELF, &M.ru1);
        M.srv1 = -1;
    }
    uv_timer_stop(&timer);
    uv_stop(loop);
}

/* ---- the HTTP clients ---------------------------------------------------- */

typedef struct hconn {
    uv_tcp_t tcp;
    uv_connect_t creq;
    uv_write_t wreq;
    int idx, open, busy, closed;
    lbuf out, body;
    http_parser parser;
    char field[64];
    size_t flen;
    lbuf val;
    int in_value, complete;
    long rt;
    char crange[96], pref[128];
    uint64_t t_send, bytes, ndone;
    lreq q;
    dl_prng rng;
} hconn;

static hconn *hc;
static int nh, h_alive;
static struct sockaddr_storage h_addr;
static http_parser_settings hps;
static char rbuf_static[1 << 18];

static void h_send(hconn *h);
static void h_close(hconn *h);

static void h_header_done(hconn *h) {
    if (!h->in_value)
        return;
    h->field[h->flen < sizeof h->field ? h->flen : sizeof h->field - 1] = 0;
    const char *v = h->val.p ? h->val.p : "";
    if (strcasecmp(h->field, "server-timing") == 0) {
        const char *p = strstr(v, "rt=");
        h->rt = p ? strtol(p + 3, NULL, 10) : -2;
    } else if (strcasecmp(h->field, "content-range") == 0) {
        snprintf(h->crange, sizeof h->crange, "%s", v);
    } else if (strcasecmp(h->field, "preference-applied") == 0) {
        snprintf(h->pref, sizeof h->pref, "%s", v);
    }
    h->flen = 0;
    h->val.len = 0;
    if (h->val.p)
        h->val.p[0] = 0;
    h->in_value = 0;
}

static int hp_field(http_parser *p, const char *at, size_t n) {
    hconn *h = p->data;
    h_header_done(h);
    for (size_t i = 0; i < n && h->flen < sizeof h->field - 1; i++)
        h->field[h->flen++] = at[i];
    return 0;
}
static int hp_value(http_parser *p, const char *at, size_t n) {
    hconn *h = p->data;
    h->in_value = 1;
    lb_put(&h->val, at, n);
    return 0;
}
static int hp_headers(http_parser *p) {
    h_header_done(p->data);
    return 0;
}
static int hp_body(http_parser *p, const char *at, size_t n) {
    lb_put(&((hconn *)p->data)->body, at, n);
    return 0;
}
static int hp_complete(http_parser *p) {
    ((hconn *)p->data)->complete = 1;
    http_parser_pause(p, 1);
    return 0;
}

static void h_check(hconn *h) {
    lresp rs = {.status = (int)h->parser.status_code,
                .body = h->body.p ? h->body.p : "",
                .body_len = h->body.len,
                .content_range = h->crange[0] ? h->crange : NULL,
                .pref_applied = h->pref[0] ? h->pref : NULL};
    uint64_t lat = uv_hrtime() - h->t_send;
    char err[300] = "";
    int bad = 0;
    if (rs.status != cur->expect_status) {
        snprintf(err, sizeof err, "status %d, expected %d: %.200s", rs.status,
                 cur->expect_status, rs.body);
        bad = 1;
    } else if (cur->expect_rt >= 0 && h->rt < 0) {
        snprintf(err, sizeof err,
                 "no Server-Timing rt (server-timing-enabled "
                 "= true?)");
        bad = 1;
    } else {
        yajl_val root = NULL;
        if (rs.body_len) {
            char ebuf[128];
            root = yajl_tree_parse(rs.body, ebuf, sizeof ebuf);
            if (!root) {
                snprintf(err, sizeof err, "body is not JSON (%s)", ebuf);
                bad = 1;
            }
        }
        if (!bad && cur->check(&env, &h->q, &rs, root, err, sizeof err) < 0)
            bad = 1;
        yajl_tree_free(root);
    }
    if (bad)
        m_error(&M, "%s [conn %d, v=%lld]: %s", cur->name, h->idx,
                (long long)h->q.v, err);
    if (h->ndone++ == 0)
        M.warmed++;
    m_done(&M, lat, h->rt, h->bytes);
}

static void h_closed(uv_handle_t *hd) {
    hconn *h = hd->data;
    h->closed = 1;
    if (--h_alive == 0)
        stop_all();
}

static void h_close(hconn *h) {
    if (h->open < 0)
        return;
    h->open = -1;
    uv_close((uv_handle_t *)&h->tcp, h_closed);
}

static void h_alloc(uv_handle_t *hd, size_t sz, uv_buf_t *b) {
    (void)hd, (void)sz;
    b->base = rbuf_static;
    b->len = sizeof rbuf_static;
}

static void h_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
    hconn *h = s->data;
    if (n < 0) {
        if (h->busy)
            m_error(&M, "%s [conn %d]: the server closed the connection (%s)",
                    cur->name, h->idx, uv_strerror((int)n));
        if (h->busy)
            M.fatal = 1;
        h_close(h);
        return;
    }
    size_t off = 0;
    h->bytes += (size_t)n;
    while (off < (size_t)n) {
        size_t used = http_parser_execute(&h->parser, &hps, b->base + off,
                                          (size_t)n - off);
        off += used;
        if (HTTP_PARSER_ERRNO(&h->parser) == HPE_PAUSED) {
            http_parser_pause(&h->parser, 0);
        } else if (HTTP_PARSER_ERRNO(&h->parser) != HPE_OK) {
            m_error(&M, "%s [conn %d]: bad HTTP answer (%s)", cur->name, h->idx,
                    http_errno_description(HTTP_PARSER_ERRNO(&h->parser)));
            M.fatal = 1;
            h_close(h);
            return;
        }
        if (h->complete) {
            h->complete = 0;
            h->busy = 0;
            h_check(h);
            if (off < (size_t)n) {
                m_error(&M, "%s [conn %d]: bytes after the answer", cur->name,
                        h->idx);
                M.fatal = 1;
                h_close(h);
                return;
            }
            if (M.phase < 2 && !M.fatal)
                h_send(h);
            else
                h_close(h);
            return;
        }
        if (used == 0)
            break;
    }
}

static void h_written(uv_write_t *w, int st) {
    hconn *h = w->data;
    if (st < 0) {
        m_error(&M, "%s [conn %d]: write failed (%s)", cur->name, h->idx,
                uv_strerror(st));
        M.fatal = 1;
        h_close(h);
    }
}

static void h_send(hconn *h) {
    h->out.len = 0;
    h->body.len = 0;
    h->crange[0] = h->pref[0] = 0;
    h->rt = -1;
    h->bytes = 0;
    h->q.seq++;
    cur->build(&env, &h->q, &h->rng, &h->out);
    uv_buf_t b = uv_buf_init(h->out.p, (unsigned)h->out.len);
    h->busy = 1;
    h->t_send = uv_hrtime();
    h->wreq.data = h;
    int rc = uv_write(&h->wreq, (uv_stream_t *)&h->tcp, &b, 1, h_written);
    if (rc < 0) {
        m_error(&M, "%s: write: %s", cur->name, uv_strerror(rc));
        M.fatal = 1;
        h_close(h);
    }
}

static void h_connected(uv_connect_t *c, int st) {
    hconn *h = c->data;
    if (st < 0) {
        m_error(&M, "%s [conn %d]: connect: %s", cur->name, h->idx,
                uv_strerror(st));
        M.fatal = 1;
        h_close(h);
        return;
    }
    h->open = 1;
    uv_read_start((uv_stream_t *)&h->tcp, h_alloc, h_read);
    if (!M.fatal)
        h_send(h);
    else
        h_close(h);
}

static void h_stop(void) {
    for (int i = 0; i < nh; i++)
        if (!hc[i].busy && hc[i].open == 1)
            h_close(&hc[i]);
}

static int resolve(const char *url, struct sockaddr_storage *out, char *host,
                   size_t hn) {
    const char *p = url;
    if (strncmp(p, "http://", 7) == 0)
        p += 7;
    char h[256];
    snprintf(h, sizeof h, "%s", p);
    char *slash = strchr(h, '/');
    if (slash)
        *slash = 0;
    snprintf(host, hn, "%s", h);
    char *colon = strrchr(h, ':');
    const char *port = "80";
    if (colon) {
        *colon = 0;
        port = colon + 1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM},
                    *ai;
    if (getaddrinfo(h, port, &hints, &ai) != 0) {
        fprintf(stderr, "ffb-rest-load: cannot resolve %s\n", url);
        return -1;
    }
    memcpy(out, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    return 0;
}

static void run_rest(const lscen *s, const char *url) {
    char host[256];
    cur = s;
    if (resolve(url, &h_addr, host, sizeof host) < 0) {
        memset(&M, 0, sizeof M);
        M.h = &H;
        m_error(&M, "%s: cannot resolve %s", s->name, url);
        M.fatal = 1;
        return;
    }
    env.host = host;
    start_meter();
    on_stop = h_stop;
    nh = O.c;
    h_alive = nh;
    hc = calloc((size_t)nh, sizeof *hc);
    for (int i = 0; i < nh; i++) {
        hconn *h = &hc[i];
        h->idx = i;
        h->q.conn = i;
        h->rng.s = O.seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * 7919 + 1;
        http_parser_init(&h->parser, HTTP_RESPONSE);
        h->parser.data = h;
        uv_tcp_init(loop, &h->tcp);
        uv_tcp_nodelay(&h->tcp, 1);
        h->tcp.data = h;
        h->creq.data = h;
        uv_tcp_connect(&h->creq, &h->tcp, (struct sockaddr *)&h_addr,
                       h_connected);
    }
    uv_run(loop, UV_RUN_DEFAULT);
    for (int i = 0; i < nh; i++) {
        free(hc[i].out.p);
        free(hc[i].body.p);
        free(hc[i].val.p);
    }
    free(hc);
    hc = NULL;
}

/* One blocking request (k6's teardown); the status, or -1. */
static int http_once(const char *url, const char *method, const char *path,
                     const char *extra) {
    struct sockaddr_storage a;
    char host[256];
    if (resolve(url, &a, host, sizeof host) < 0)
        return -1;
    int fd = socket(a.ss_family, SOCK_STREAM, 0);
    if (fd < 0 ||
        connect(fd, (struct sockaddr *)&a,
                a.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                        : sizeof(struct sockaddr_in)) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char req[1024];
    int n =
        snprintf(req, sizeof req,
                 "%s %s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n",
                 method, path, host, extra ? extra : "");
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    char buf[512];
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got < 12)
        return -1;
    buf[got] = 0;
    return atoi(buf + 9);
}

/* ---- the direct twin ---------------------------------------------------- */

typedef struct dslot {
    struct dconn *d;
    int k;
} dslot;

typedef struct dconn {
    ffb_conn *conn;
    int idx, ready, busy, ended_queued;
    int waiting; /* prepares still to come */
    int pending; /* executes and fetches still to come */
    ffb_tx *tx;
    ffb_stmt *st[LD_MAX_STMTS];
    dslot slot[LD_MAX_STMTS];
    ldplan plan;
    ldrows rows[LD_MAX_STMTS];
    char err[300];
    int failed;
    uint64_t t_send, rt0, ndone;
    lreq q;
    dl_prng rng;
} dconn;

static dconn *dc;
static int nd, d_ready, d_busy, d_connect_failed;

static uint64_t d_rts(ffb_conn *c) {
    ffb_stats s;
    ffb_conn_stats(c, &s, sizeof s);
    return s.round_trips;
}

static void d_fail(dconn *d, const char *what, const ffb_error *e) {
    if (d->failed++)
        return;
    snprintf(d->err, sizeof d->err, "%s: %s", what,
             e ? ffb_error_message(e) : "?");
}

static void d_send(dconn *d);

static void d_finish(dconn *d) {
    for (int k = 0; k < d->plan.nstmts; k++) {
        ffb_stmt_free(d->st[k]);
        d->st[k] = NULL;
    }
    ffb_tx_free(d->tx);
    d->tx = NULL;
    uint64_t lat = uv_hrtime() - d->t_send;
    long rt = (long)(d_rts(d->conn) - d->rt0);
    char err[300] = "";
    if (d->failed)
        snprintf(err, sizeof err, "%s", d->err);
    else if (cur->dcheck(&env, &d->q, d->rows, err, sizeof err) < 0)
        d->failed = 1;
    if (d->failed)
        m_error(&M, "%s direct [conn %d, v=%lld]: %s", cur->name, d->idx,
                (long long)d->q.v, err);
    if (d->ndone++ == 0)
        M.warmed++;
    m_done(&M, lat, rt, 0);
    d->busy = 0;
    if (M.phase < 2 && !M.fatal)
        d_send(d);
    else if (--d_busy == 0)
        stop_all();
}

static void d_on_end(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    dconn *d = data;
    if (ffb_result_status(res) < 0)
        d_fail(d, "end", ffb_result_error(res));
    d_finish(d);
}

static void d_queue_end(dconn *d) {
    d->ended_queued = 1;
    int rc = d->plan.rollback ? ffb_tx_queue_rollback(d->tx, d_on_end, d)
                              : ffb_tx_queue_commit(d->tx, d_on_end, d);
    if (rc < 0) {
        d_fail(d, "queue end", ffb_conn_error(d->conn));
        d_finish(d);
    }
}

static void d_step_done(dconn *d) {
    if (--d->pending > 0)
        return;
    if (!d->ended_queued)
        d_queue_end(d);
}

static void d_rows(dslot *sl);

static void d_on_fetch(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    dslot *sl = data;
    if (ffb_result_status(res) < 0) {
        d_fail(sl->d, "fetch", ffb_result_error(res));
        d_step_done(sl->d);
        return;
    }
    d_rows(sl);
}

/* read the buffered rows of statement k; more are fetched when the plan
   is not bounded (the end then waits for them) */
static void d_rows(dslot *sl) {
    dconn *d = sl->d;
    ffb_stmt *st = d->st[sl->k];
    ldrows *r = &d->rows[sl->k];
    for (;;) {
        int rc = ffb_stmt_fetch(st);
        if (rc == 1) {
            if (r->nrows == 0)
                for (unsigned c = 0; c < 4 && c < ffb_stmt_column_count(st);
                     c++) {
                    int64_t v = 0;
                    if (ffb_stmt_is_null(st, c) == 0 &&
                        ffb_stmt_get_int64(st, c, &v) < 0)
                        v = 0;
                    r->first[c] = v;
                }
            int64_t v0 = 0, v1 = 0;
            if (ffb_stmt_get_int64(st, 0, &v0) == 0)
                r->sum0 += v0;
            if (ffb_stmt_column_count(st) > 1 &&
                ffb_stmt_get_int64(st, 1, &v1) == 0)
                r->sum1 += v1;
            if (cur->drow)
                cur->drow(&env, &d->q, sl->k, st, r);
            r->nrows++;
            continue;
        }
        if (rc == FFB_E_AGAIN) {
            if (d->plan.bounded) {
                d_fail(d, "rows", NULL);
                snprintf(d->err, sizeof d->err,
                         "statement %d: rows did not fit the first fetch",
                         sl->k + 1);
                break;
            }
            if (ffb_stmt_queue_fetch(st, d_on_fetch, sl) >= 0)
                return; /* more to come */
            d_fail(d, "queue fetch", ffb_conn_error(d->conn));
            break;
        }
        if (rc < 0)
            d_fail(d, "fetch", ffb_conn_error(d->conn));
        break;
    }
    d_step_done(d);
}

static void d_on_exec(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    dslot *sl = data;
    dconn *d = sl->d;
    if (ffb_result_status(res) < 0) {
        d_fail(d, "execute", ffb_result_error(res));
        d_step_done(d);
        return;
    }
    if (ffb_stmt_column_count(d->st[sl->k]) == 0) {
        int64_t a = ffb_result_rows_affected(res);
        d->rows[sl->k].nrows += a > 0 ? a : 0;
        d_step_done(d);
        return;
    }
    d_rows(sl);
}

static int d_bind(ffb_stmt *st, const ldstmt *s) {
    for (int i = 0; i < s->nparams; i++) {
        const ldparam *p = &s->p[i];
        int rc = p->is_text
                     ? ffb_stmt_bind_text(st, (unsigned)i, p->text, (size_t)-1)
                     : ffb_stmt_bind_int64(st, (unsigned)i, p->i);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* every statement usable: bind, execute (repeatedly for bulk DML), end */
static void d_run(dconn *d) {
    if (d->failed) { /* a prepare failed */
        d_queue_end(d);
        return;
    }
    d->pending = 1; /* held until everything is queued */
    for (int k = 0; k < d->plan.nstmts; k++) {
        ldstmt *s = &d->plan.s[k];
        ffb_stmt *st = d->st[k];
        ffb_stmt_set_fetch_size(st, 10000);
        int reps = s->repeat > 0 ? s->repeat : 1;
        for (int r = 0; r < reps; r++) {
            if (s->vary) {
                char *t = s->p[s->vary - 1].text;
                size_t l = strlen(t);
                t[l - 2] = (char)('0' + r / 10 % 10);
                t[l - 1] = (char)('0' + r % 10);
            }
            if (d_bind(st, s) < 0 ||
                ffb_stmt_queue_execute(st, d->tx, d_on_exec, &d->slot[k]) < 0) {
                d_fail(d, "bind/execute", ffb_conn_error(d->conn));
                break;
            }
            d->pending++;
        }
    }
    if (d->plan.bounded || d->failed)
        d_queue_end(d);
    d_step_done(d);
}

static void d_on_prep(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    dconn *d = data;
    if (ffb_result_status(res) < 0)
        d_fail(d, "prepare", ffb_result_error(res));
    if (--d->waiting == 0)
        d_run(d);
}

static void d_send(dconn *d) {
    memset(&d->plan, 0, sizeof d->plan);
    memset(d->rows, 0, sizeof d->rows);
    d->failed = 0;
    d->err[0] = 0;
    d->ended_queued = 0;
    d->q.seq++;
    cur->dplan(&env, &d->q, &d->rng, &d->plan);
    d->busy = 1;
    d->t_send = uv_hrtime();
    d->rt0 = d_rts(d->conn);
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    to.read_only = d->plan.read_only;
    to.lock_timeout = 10;
    if (ffb_tx_begin(d->conn, &to, &d->tx) < 0) {
        d_fail(d, "begin", ffb_conn_error(d->conn));
        M.fatal = 1;
        d_finish(d);
        return;
    }
    d->waiting = 1;
    for (int k = 0; k < d->plan.nstmts; k++) {
        d->slot[k].d = d;
        d->slot[k].k = k;
        const char *sql = d->plan.s[k].sql;
        int rc = ffb_conn_queue_prepare(d->conn, d->tx, sql, strlen(sql),
                                        &d->st[k], d_on_prep, d);
        if (rc < 0) {
            d_fail(d, "prepare", ffb_conn_error(d->conn));
            M.fatal = 1;
            break;
        }
        if (rc == 0)
            d->waiting++;
    }
    if (--d->waiting == 0)
        d_run(d);
}

static void d_stop(void) { /* the busy ones stop once answered */
}

static void d_connected(ffb_conn *c, int st, void *data) {
    dconn *d = data;
    if (st < 0) {
        fprintf(stderr, "ffb-rest-load: direct connect: %s\n",
                ffb_error_message(ffb_conn_error(c)));
        d_connect_failed = 1;
    } else {
        d->ready = 1;
    }
    if (++d_ready == nd)
        uv_stop(loop);
}

static void d_closed(ffb_conn *c, int st, void *data) {
    (void)c, (void)st, (void)data;
    if (--d_ready == 0)
        uv_stop(loop);
}

static int d_open(const char *dsn) {
    nd = O.c;
    dc = calloc((size_t)nd, sizeof *dc);
    d_ready = 0;
    d_connect_failed = 0;
    ffb_conn_options co = FFB_CONN_OPTIONS_INIT;
    co.dsn = dsn;
    co.user = O.user;
    co.password = O.password;
    co.stmt_cache_size = 64;
    co.io_timeout_ms = 60000;
    co.connect_timeout_ms = 30000;
    for (int i = 0; i < nd; i++) {
        dconn *d = &dc[i];
        d->idx = i;
        d->q.conn = i;
        d->rng.s = O.seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * 7919 + 1;
        if (ffb_uv_conn_new(loop, &co, &d->conn) < 0 ||
            ffb_uv_connect(d->conn, d_connected, d) < 0) {
            fprintf(stderr, "ffb-rest-load: direct: %s\n",
                    ffb_error_message(ffb_conn_error(d->conn)));
            d_connect_failed = 1;
            d_ready++;
        }
    }
    if (d_ready < nd)
        uv_run(loop, UV_RUN_DEFAULT);
    return d_connect_failed ? -1 : 0;
}

static void d_close_all(void) {
    d_ready = 0;
    for (int i = 0; i < nd; i++)
        if (dc[i].conn && ffb_uv_close(dc[i].conn, d_closed, NULL) == 0)
            d_ready++;
    if (d_ready)
        uv_run(loop, UV_RUN_DEFAULT);
    free(dc);
    dc = NULL;
    nd = 0;
}

static void run_direct(const lscen *s) {
    cur = s;
    start_meter();
    on_stop = d_stop;
    d_busy = nd;
    for (int i = 0; i < nd; i++) {
        dc[i].ndone = 0;
        d_send(&dc[i]);
    }
    uv_run(loop, UV_RUN_DEFAULT);
}

/* a blocking connection for the one-off statements below; NULL after a
   failure (printed) */
static ffb_conn *blocking_conn(const char *dsn) {
    ffb_conn_options co = FFB_CONN_OPTIONS_INIT;
    co.dsn = dsn;
    co.user = O.user;
    co.password = O.password;
    ffb_conn *c = NULL;
    int rc = ffb_conn_new(&co, &c);
    if (rc == 0)
        rc = ffb_conn_connect(c);
    if (rc == 0)
        return c;
    fprintf(stderr, "ffb-rest-load: %s: %s\n", dsn,
            c ? ffb_error_message(ffb_conn_error(c)) : "no memory");
    ffb_conn_free(c);
    return NULL;
}

/* one statement in its own transaction (k6's teardown of the direct
   twin, run.sh's grants) */
static int direct_sql(const char *dsn, const char *sql) {
    ffb_conn *c = blocking_conn(dsn);
    if (!c)
        return -1;
    ffb_tx *tx = NULL;
    int rc = ffb_tx_begin(c, NULL, &tx);
    if (rc == 0)
        rc = ffb_conn_execute_immediate(c, tx, sql, strlen(sql));
    if (rc == 0)
        rc = ffb_tx_commit(tx);
    if (rc < 0)
        fprintf(stderr, "ffb-rest-load: %s: %s\n", sql,
                ffb_error_message(ffb_conn_error(c)));
    ffb_tx_free(tx);
    ffb_conn_free(c);
    return rc < 0 ? -1 : 0;
}

static int drop_db(const char *dsn) {
    ffb_conn *c = blocking_conn(dsn);
    if (!c)
        return 1;
    int rc = ffb_conn_drop_database(c);
    if (rc < 0)
        fprintf(stderr, "ffb-rest-load: drop %s: %s\n", dsn,
                ffb_error_message(ffb_conn_error(c)));
    ffb_conn_free(c);
    return rc < 0 ? 1 : 0;
}

/* ---- tokens ------------------------------------------------------------- */

static char *sign(const char *claims) {
    char *t = malloc(4096);
    if (!t || rest_jwt_sign("HS256", claims, strlen(claims),
                            (const unsigned char *)O.secret, strlen(O.secret),
                            t, 4096) < 0) {
        fprintf(stderr, "ffb-rest-load: cannot sign a token\n");
        exit(2);
    }
    return t;
}

#define NUNIQ 20000
static void make_tokens(int need_uniq) {
    env.fb_token =
        O.token ? O.token : sign("{\"role\":\"web_user\",\"sub\":\"bench\"}");
    env.k6_token =
        sign("{\"sub\":\"1234567890\",\"name\":\"John Doe\",\"iat\":"
             "1516239022,\"role\":\"postgres\",\"custom\":{\"email\":"
             "\"john@doe.com\",\"phone\":\"+1 555 0100\",\"company\":"
             "\"Doe Inc\",\"uuid\":\"9b2f5a7e-3c1d-4e8f-a6b0-1d2c3e4f5a6b\"}}");
    if (!need_uniq)
        return;
    /* k6 makes 20,000 tokens in setup() with exp = now + 30; ours live as
       long as the whole run (the JWT cache is what they measure) */
    long exp = (long)time(NULL) + 3600 * 6;
    env.uniq_tokens = calloc(NUNIQ, sizeof *env.uniq_tokens);
    env.nuniq = NUNIQ;
    dl_prng r = {O.seed * 31 + 7};
    for (int i = 0; i < NUNIQ; i++) {
        char c[512];
        snprintf(c, sizeof c,
                 "{\"sub\":\"user%llu\",\"role\":\"postgres\",\"exp\":%ld,"
                 "\"custom\":{\"email\":\"u%llu@example.com\"}}",
                 (unsigned long long)(dl_next(&r) % 1000000000ull), exp,
                 (unsigned long long)(dl_next(&r) % 1000000000ull));
        env.uniq_tokens[i] = sign(c);
    }
}

/* ---- selection and output ----------------------------------------------- */

static int is_name(const char *t) {
    for (size_t i = 0; i < nlscens; i++)
        if (strcasecmp(t, lscens[i].name) == 0)
            return 1;
    return 0;
}

/* -only: a comma-separated list of FbREST numbers (1..14), names, or
   prefixes of names (at least 3 characters, when no name is equal) */
static int selected(size_t i) {
    const lscen *s = &lscens[i];
    if (strcmp(O.suite, "all") != 0 && strcmp(O.suite, s->suite) != 0)
        return 0;
    if (!O.only)
        return 1;
    char list[1024];
    snprintf(list, sizeof list, "%s", O.only);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
        while (*t == ' ')
            t++;
        char *end = t + strlen(t);
        while (end > t && end[-1] == ' ')
            *--end = 0;
        if (!*t)
            continue;
        char *e;
        long num = strtol(t, &e, 10);
        if (*e == 0 && strcmp(s->suite, "fbrest") == 0 && (size_t)num == i + 1)
            return 1;
        if (strcasecmp(t, s->name) == 0)
            return 1;
        if (strlen(t) >= 3 && !is_name(t) &&
            strncasecmp(t, s->name, strlen(t)) == 0)
            return 1;
    }
    return 0;
}

static void fmt_rt(const result *r, char *out, size_t n) {
    if (r->rt_min < 0)
        snprintf(out, n, "-");
    else if (r->rt_min == r->rt_max)
        snprintf(out, n, "%ld", r->rt_min);
    else
        snprintf(out, n, "%.2f (%ld-%ld)", r->rt_mean, r->rt_min, r->rt_max);
    if (r->rt_none && r->rt_min >= 0)
        snprintf(out + strlen(out), n - strlen(out), " +%llu none",
                 (unsigned long long)r->rt_none);
}

/* The run of `n` whose req/s is the median (the lower middle of an even
   count); *list gets "a, b, c" (every run's req/s) when n > 1. The
   returned row is all zero when the side did not run. */
static const result *median(const result *r, size_t n, char **list) {
    static const result none;
    if (!r[0].s)
        return &none;
    size_t idx[64], m = n < 64 ? n : 64;
    for (size_t i = 0; i < m; i++)
        idx[i] = i;
    for (size_t i = 1; i < m; i++) /* insertion sort by req/s */
        for (size_t k = i; k > 0 && r[idx[k]].rps < r[idx[k - 1]].rps; k--) {
            size_t t = idx[k];
            idx[k] = idx[k - 1];
            idx[k - 1] = t;
        }
    if (n > 1) {
        lbuf b = {0};
        for (size_t i = 0; i < m; i++)
            lb_printf(&b, "%s%.0f", i ? ", " : "", r[i].rps);
        *list = b.p;
    }
    return &r[idx[(m - 1) / 2]];
}

static void print_table(FILE *f, const result *rest, const result *alt,
                        const result *dir, char **runs, size_t n,
                        int have_rest, int have_alt, int have_dir) {
    int many = runs && O.runs > 1;
    fprintf(f, "| Scenario | req/s | p50 ms | p95 ms | p99 ms | errors | KB/s "
               "| RT/req | client CPU µs/req | server CPU µs/req |");
    if (many)
        fprintf(f, " runs req/s |");
    if (have_rest && have_alt)
        fprintf(f, " B req/s | B p50 ms | B RT | B server CPU µs/req | B/A |");
    if (have_rest && have_alt && many)
        fprintf(f, " B runs |");
    if (have_rest && have_dir)
        fprintf(f, " direct req/s | direct p50 ms | direct RT | direct CPU "
                   "µs/req | REST/direct |");
    if (have_rest && have_dir && many)
        fprintf(f, " direct runs |");
    fprintf(f, "\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    if (many)
        fprintf(f, "---|");
    if (have_rest && have_alt)
        fprintf(f, "---:|---:|---:|---:|---:|");
    if (have_rest && have_alt && many)
        fprintf(f, "---|");
    if (have_rest && have_dir)
        fprintf(f, "---:|---:|---:|---:|---:|");
    if (have_rest && have_dir && many)
        fprintf(f, "---|");
    fprintf(f, "\n");
    for (size_t i = 0; i < n; i++) {
        const result *r = have_rest ? &rest[i] : &dir[i];
        char rt[64];
        fmt_rt(r, rt, sizeof rt);
        char srv[32] = "-";
        if (r->srv_us >= 0)
            snprintf(srv, sizeof srv, "%.0f", r->srv_us);
        fprintf(f,
                "| %s | %.0f | %.2f | %.2f | %.2f | %llu | %.0f | %s | %.0f | "
                "%s |",
                r->s->name, r->rps, r->p50, r->p95, r->p99,
                (unsigned long long)r->errors, r->kbps, rt, r->cpu_us, srv);
        if (many) {
            const char *l = runs[3 * i + (have_rest ? 0 : 2)];
            fprintf(f, " %s |", l ? l : "-");
        }
        for (int side = 1; side <= 2; side++) {
            const result *o = side == 1 ? &alt[i] : &dir[i];
            if (!have_rest || !(side == 1 ? have_alt : have_dir))
                continue;
            if (o->s) {
                char ort[64], osrv[32] = "-";
                fmt_rt(o, ort, sizeof ort);
                if (side == 1 && o->srv_us >= 0)
                    snprintf(osrv, sizeof osrv, "%.0f", o->srv_us);
                else if (side == 2)
                    snprintf(osrv, sizeof osrv, "%.0f", o->cpu_us);
                double ratio = side == 1 ? (r->rps > 0 ? o->rps / r->rps : 0)
                                         : (o->rps > 0 ? r->rps / o->rps : 0);
                fprintf(f, " %.0f | %.2f | %s | %s | %.2f |", o->rps, o->p50,
                        ort, osrv, ratio);
            } else {
                fprintf(f, " - | - | - | - | - |");
            }
            if (many) {
                const char *l = runs[3 * i + side];
                fprintf(f, " %s |", l ? l : "-");
            }
        }
        fprintf(f, "\n");
    }
}

static void tsv_line(FILE *f, const result *r, size_t run) {
    fprintf(f,
            "%s\t%s\t%s\t%s\t%d\t%.3f\t%llu\t%llu\t%.1f\t%.3f\t%.3f\t%.3f\t%."
            "3f\t%.1f\t%.1f\t%.3f\t%ld\t%ld\t%.1f\t%zu\n",
            O.label, r->mode, r->s->suite, r->s->name, r->c, r->secs,
            (unsigned long long)r->n, (unsigned long long)r->errors, r->rps,
            r->p50, r->p95, r->p99, r->max, r->kbps, r->cpu_us, r->rt_mean,
            r->rt_min, r->rt_max, r->srv_us, run + 1);
}

static int check_rt(const lscen *s, const result *r);

/* One measured run of `s` on the ffb-rest at `url` (mode "rest" or
   "alternate"): k6's teardown, the errors, -check-rt, the TSV line and the
   progress line. -1 when it failed. */
static int one_rest(const lscen *s, const char *url, int pid,
                    const char *mode, size_t run, FILE *tsv, result *out) {
    int bad = 0;
    cur_srv_pid = pid;
    run_rest(s, url);
    m_result(&M, s, mode, O.c, out);
    if (s->teardown) {
        int st = http_once(url, "DELETE", s->teardown,
                           "Prefer: count=exact\r\n");
        if (st != 204) {
            m_error(&M, "%s: teardown DELETE: status %d", s->name, st);
            out->failed = 1;
            out->errors++;
        }
    }
    for (int k = 0; k < M.nmsgs; k++)
        fprintf(stderr, "ERROR %s\n", M.msgs[k]);
    if (out->failed) {
        bad = 1;
        if (!M.nmsgs)
            fprintf(stderr, "ERROR %s: no request completed\n", s->name);
    }
    if (O.check_rt && check_rt(s, out) < 0)
        bad = 1;
    if (tsv)
        tsv_line(tsv, out, run);
    fprintf(stderr, "%-28s %-6s %8.0f req/s  p50 %.2f ms  rt %.2f  %s\n",
            s->name, strcmp(mode, "rest") ? "B" : "rest", out->rps, out->p50,
            out->rt_mean, out->failed ? "FAILED" : "ok");
    return bad ? -1 : 0;
}

/* One measured run of `s`'s direct twin on the open connections to `dd`. */
static int one_direct(const lscen *s, const char *dd, size_t run, FILE *tsv,
                      result *out) {
    cur_srv_pid = 0;
    run_direct(s);
    m_result(&M, s, "direct", O.c, out);
    if (s->teardown &&
        direct_sql(dd, "DELETE FROM EMPLOYEE WHERE TITLE = 'Load Tester'") < 0)
        out->failed = 1;
    for (int k = 0; k < M.nmsgs; k++)
        fprintf(stderr, "ERROR %s\n", M.msgs[k]);
    if (out->failed && !M.nmsgs)
        fprintf(stderr, "ERROR %s direct: no request completed\n", s->name);
    if (tsv)
        tsv_line(tsv, out, run);
    fprintf(stderr, "%-28s direct %8.0f req/s  p50 %.2f ms  rt %.2f  %s\n",
            s->name, out->rps, out->p50, out->rt_mean,
            out->failed ? "FAILED" : "ok");
    return out->failed ? -1 : 0;
}

/* -check-rt: every measured request's round trips within the target */
static int check_rt(const lscen *s, const result *r) {
    long lo = s->rt_hi ? s->rt_lo : s->expect_rt,
         hi = s->rt_hi ? s->rt_hi : s->expect_rt;
    if (lo < 0) { /* no database work: no Server-Timing at all */
        if (r->rt_none == r->n)
            return 0;
        fprintf(stderr,
                "ERROR %s: Server-Timing on a request without "
                "database work\n",
                s->name);
        return -1;
    }
    if (r->n > 0 && r->rt_none == 0 && r->rt_min >= lo && r->rt_max <= hi) {
        if (s->rt_why)
            fprintf(stderr,
                    "NOTE %s: %ld..%ld round trips, not the issue's "
                    "%ld: %s\n",
                    s->name, r->rt_min, r->rt_max, (long)s->expect_rt,
                    s->rt_why);
        return 0;
    }
    fprintf(stderr,
            "ERROR %s: round trips %ld..%ld (%llu without "
            "Server-Timing), target %ld..%ld\n",
            s->name, r->rt_min, r->rt_max, (unsigned long long)r->rt_none, lo,
            hi);
    return -1;
}

static double parse_secs(const char *s) {
    char *e;
    double v = strtod(s, &e);
    if (*e == 'm' && e[1] == 's')
        v /= 1000;
    else if (*e == 'm')
        v *= 60;
    return v;
}

static void usage(void) {
    fprintf(
        stderr,
        "usage: ffb-rest-load [-url URL] [-k6-url URL] [-c N] [-d SECS] "
        "[-warmup SECS]\n"
        "         [-only LIST] [-suite fbrest|k6|all] [-token JWT] "
        "[-jwt-secret S] [-scale N]\n"
        "         [-direct DSN] [-k6-direct DSN] [-u USER] [-p PASSWORD] "
        "[-seed N]\n"
        "         [-out DIR] [-label TEXT] [-check-rt] [-server-pid PID] "
        "[-k6-server-pid PID]\n"
        "         [-runs N] [-alternate URL_B] [-k6-alternate URL_B] "
        "[-alternate-pid PID] [-k6-alternate-pid PID]\n"
        "       ffb-rest-load -drop-db DSN | -exec DSN SQL   (run.sh, tests)\n"
        "  -url: the ffb-rest serving the bookstore (FirebirdREST's 14), "
        "-k6-url: the one serving Chinook (k6)\n"
        "  -direct/-k6-direct: the same SQL through libfastfb "
        "(host/port:path)\n"
        "  -check-rt: fail when a request's round trips differ from the "
        "target\n"
        "  -runs N: every side (REST, B, direct) N times, alternated; the "
        "tables show each side's median run\n"
        "  -alternate URL_B: a second ffb-rest measured beside -url (column "
        "B/A)\n");
    exit(2);
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    O.user = getenv("ISC_USER") ? getenv("ISC_USER") : "SYSDBA";
    O.password = getenv("ISC_PASSWORD") ? getenv("ISC_PASSWORD") : "masterkey";
    const char *drop = NULL, *exec_dsn = NULL, *exec_sql = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && v && (i++, 1))
        if (ARG("-url"))
            O.url = v;
        else if (ARG("-k6-url"))
            O.k6_url = v;
        else if (ARG("-c"))
            O.c = atoi(v);
        else if (ARG("-d"))
            O.dur = parse_secs(v);
        else if (ARG("-warmup"))
            O.warm = parse_secs(v);
        else if (ARG("-only"))
            O.only = v;
        else if (ARG("-suite"))
            O.suite = v;
        else if (ARG("-token"))
            O.token = v;
        else if (ARG("-jwt-secret"))
            O.secret = v;
        else if (ARG("-scale"))
            O.scale = atoi(v);
        else if (ARG("-direct"))
            O.direct = v;
        else if (ARG("-k6-direct"))
            O.k6_direct = v;
        else if (ARG("-u"))
            O.user = v;
        else if (ARG("-p"))
            O.password = v;
        else if (ARG("-server-pid"))
            O.srv_pid = atoi(v);
        else if (ARG("-k6-server-pid"))
            O.k6_srv_pid = atoi(v);
        else if (ARG("-alternate"))
            O.alt = v;
        else if (ARG("-k6-alternate"))
            O.k6_alt = v;
        else if (ARG("-alternate-pid"))
            O.alt_pid = atoi(v);
        else if (ARG("-k6-alternate-pid"))
            O.k6_alt_pid = atoi(v);
        else if (ARG("-runs"))
            O.runs = atoi(v);
        else if (ARG("-seed"))
            O.seed = strtoull(v, NULL, 10);
        else if (ARG("-out"))
            O.out = v;
        else if (ARG("-label"))
            O.label = v;
        else if (ARG("-drop-db"))
            drop = v;
        else if (strcmp(a, "-exec") == 0 && i + 2 < argc) {
            exec_dsn = argv[i + 1];
            exec_sql = argv[i + 2];
            i += 2;
        } else if (strcmp(a, "-check-rt") == 0)
            O.check_rt = 1;
        else
            usage();
#undef ARG
    }
    if (drop)
        return drop_db(drop);
    if (exec_dsn)
        return direct_sql(exec_dsn, exec_sql) < 0 ? 1 : 0;
    if (O.c < 1 || O.c > 1000 || O.dur <= 0 || O.warm < 0 || O.scale < 1 ||
        O.runs < 1 || O.runs > 64 ||
        1000 % O.scale != 0 ||
        (strcmp(O.suite, "all") && strcmp(O.suite, "fbrest") &&
         strcmp(O.suite, "k6")))
        usage();
    if (!O.url && !O.k6_url && !O.direct && !O.k6_direct)
        usage();
    env.sz.books = 100000 / O.scale;
    env.sz.authors = 2000 / O.scale;
    env.sz.customers = 5000 / O.scale;

    size_t sel[64], nsel = 0;
    int need_uniq = 0;
    for (size_t i = 0; i < nlscens; i++) {
        if (!selected(i))
            continue;
        int fb = strcmp(lscens[i].suite, "fbrest") == 0;
        const char *url = fb ? O.url : O.k6_url;
        const char *dd = fb ? O.direct : O.k6_direct;
        if (!url && !(dd && lscens[i].dplan)) {
            fprintf(stderr, "ffb-rest-load: %s: skipped (no %s given)\n",
                    lscens[i].name, fb ? "-url/-direct" : "-k6-url/-k6-direct");
            continue;
        }
        sel[nsel++] = i;
        if (strstr(lscens[i].name, "UniqueJWT"))
            need_uniq = 1;
    }
    if (!nsel) {
        fprintf(stderr, "ffb-rest-load: no scenario selected\n");
        return 2;
    }
    make_tokens(need_uniq);
    hps.on_header_field = hp_field;
    hps.on_header_value = hp_value;
    hps.on_headers_complete = hp_headers;
    hps.on_body = hp_body;
    hps.on_message_complete = hp_complete;
    loop = uv_default_loop();
    uv_timer_init(loop, &timer);

    /* per side (REST, -alternate's REST, direct) and run: the results;
       the table shows each side's median run */
    size_t nrun = (size_t)O.runs;
    result *all = calloc(3 * nsel * nrun, sizeof *all);
#define RES(side, j, k) (&all[((side)*nsel + (j)) * nrun + (k)])
    int have_rest = 0, have_alt = 0, have_dir = 0, failed = 0;
    FILE *tsv = NULL;
    if (O.out) {
        mkdir(O.out, 0777);
        char p[1024];
        snprintf(p, sizeof p, "%s/raw.tsv", O.out);
        int fresh = access(p, F_OK) != 0;
        tsv = fopen(p, "a");
        if (tsv && fresh)
            fprintf(tsv,
                    "label\tmode\tsuite\tscenario\tc\tseconds\trequests\t"
                    "errors\treq_s\tp50_ms\tp95_ms\tp99_ms\tmax_ms\tkb_s\t"
                    "cpu_us_req\trt_mean\trt_min\trt_max\tsrv_cpu_us_req\t"
                    "run\n");
    }
    for (int pass = 0; pass < 2; pass++) { /* 0: bookstore, 1: Chinook */
        const char *dd = pass == 0 ? O.direct : O.k6_direct;
        const char *url = pass == 0 ? O.url : O.k6_url;
        const char *alt = pass == 0 ? O.alt : O.k6_alt;
        int pid = pass == 0 ? O.srv_pid : O.k6_srv_pid;
        int alt_pid = pass == 0 ? O.alt_pid : O.k6_alt_pid;
        int opened = 0;
        for (size_t j = 0; j < nsel; j++) {
            const lscen *s = &lscens[sel[j]];
            if ((strcmp(s->suite, "fbrest") == 0) != (pass == 0))
                continue;
            /* A, B, direct, A, B, direct, ...: drift in the machine
               falls on every side alike (spec A17.3's -alternate) */
            for (size_t k = 0; k < nrun; k++) {
                if (url) {
                    have_rest = 1;
                    if (one_rest(s, url, pid, "rest", k, tsv,
                                 RES(0, j, k)) < 0)
                        failed = 1;
                }
                if (url && alt) {
                    have_alt = 1;
                    if (one_rest(s, alt, alt_pid, "alternate", k, tsv,
                                 RES(1, j, k)) < 0)
                        failed = 1;
                }
                if (dd && s->dplan) {
                    if (!opened) {
                        if (d_open(dd) < 0) {
                            fprintf(stderr,
                                    "ffb-rest-load: direct connections to "
                                    "%s failed\n",
                                    dd);
                            failed = 1;
                            d_close_all();
                            dd = NULL;
                            continue;
                        }
                        opened = 1;
                    }
                    have_dir = 1;
                    if (one_direct(s, dd, k, tsv, RES(2, j, k)) < 0)
                        failed = 1;
                }
            }
        }
        if (opened)
            d_close_all();
    }
    /* the table: the REST rows (beside them the alternate's and the direct
       ones), in the scenarios' order; direct-only when no URL was given */
    result *tr = calloc(nsel, sizeof *tr), *ta = calloc(nsel, sizeof *ta),
           *td = calloc(nsel, sizeof *td);
    char **runs = calloc(3 * nsel, sizeof *runs);
    size_t nt = 0;
    for (size_t j = 0; j < nsel; j++) {
        if (have_rest && !RES(0, j, 0)->s)
            continue;
        if (!have_rest && !RES(2, j, 0)->s)
            continue;
        tr[nt] = *median(RES(0, j, 0), nrun, &runs[3 * nt]);
        ta[nt] = *median(RES(1, j, 0), nrun, &runs[3 * nt + 1]);
        td[nt] = *median(RES(2, j, 0), nrun, &runs[3 * nt + 2]);
        nt++;
    }
#undef RES
    char how[160] = "";
    if (nrun > 1)
        snprintf(how, sizeof how, ", the median of %zu alternated runs",
                 nrun);
    printf("\n%s%s(c=%d, %g s measured after %g s warm-up%s%s)\n\n", O.label,
           *O.label ? " " : "", O.c, O.dur, O.warm, how,
           O.check_rt ? ", round trips checked" : "");
    print_table(stdout, tr, ta, td, runs, nt, have_rest, have_alt, have_dir);
    if (O.out) {
        char p[1024];
        snprintf(p, sizeof p, "%s/results.md", O.out);
        FILE *f = fopen(p, "a");
        if (f) {
            fprintf(f, "\n### %s (c=%d, %g s after %g s warm-up%s)\n\n",
                    O.label, O.c, O.dur, O.warm, how);
            print_table(f, tr, ta, td, runs, nt, have_rest, have_alt,
                        have_dir);
            fclose(f);
        }
    }
    for (size_t i = 0; i < 3 * nsel; i++)
        free(runs[i]);
    free(runs);
    free(ta);
    if (tsv)
        fclose(tsv);
    if (failed)
        fprintf(stderr, "ffb-rest-load: FAILED (wrong answers, errors or "
                        "round trips above)\n");
    free(all);
    free(tr);
    free(td);
    return failed ? 1 : 0;
}
