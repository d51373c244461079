/*
 * ffb-proxy: a TCP proxy on libuv that makes a loopback link look like a
 * slow network, counts the client's turns, and breaks the stream on
 * request. See bench/README.md for the design and the stats format.
 *
 * Per connection there are two directions, up (client -> server) and down
 * (server -> client). Each direction is a FIFO of chunks:
 *
 *   read from the source --> faults --> bandwidth model --> due time
 *     --> FIFO --> (timerfd) --> one uv_write per chunk to the destination
 *
 * A chunk's due time is its arrival time plus the one-way delay, plus
 * jitter, and never earlier than the due time of the chunk before it, so
 * the byte order is kept. Each direction has a timerfd, armed with the
 * head's due time as an absolute CLOCK_MONOTONIC time (the clock of
 * uv_hrtime) and watched with a uv_poll_t, so a chunk leaves when the
 * kernel's high-resolution timer says it is due: tens of microseconds
 * late, never early. (A uv_timer_t has millisecond granularity on a loop
 * clock that may be stale: a 1 ms delay came out 1-2 ms, +50% on
 * average.) Chunks that arrived apart are written apart.
 *
 * Turns: a turn is a burst of client bytes read after server bytes were
 * written to the client (or the first client bytes of the connection).
 * Server bytes count as seen when they leave the delay line, which is
 * when the client can first read them, so requests a client pipelines
 * before any answer arrived stay one turn - the same rule as libfastfb's
 * round-trip counter.
 *
 * Connection states: CONNECTING (upstream connect in progress; client
 * bytes queue up), OPEN, CLOSING (handles closing; freed when the last
 * close callback has run). A direction ends when its EOF marker has been
 * delivered (shutdown of the destination); the connection closes when
 * both have ended, on any socket error, or when a fault says so.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

/* Reads stop while this many bytes wait in one direction; they resume
   below the low mark. */
#define QUEUE_HIGH (8u << 20)
#define QUEUE_LOW (4u << 20)
/* With a bandwidth cap, chunks are cut into segments of this size so a
   large burst arrives progressively, as over a real link. */
#define SEGMENT 1448
#define READ_BUF (256u << 10)
#define KEEP_CLOSED 32
#define NS_PER_MS UINT64_C(1000000)

enum dir_id { UP = 0, DOWN = 1 };
enum conn_state { ST_CONNECTING, ST_OPEN, ST_CLOSING };

typedef struct chunk {
    struct chunk *next;
    struct direction *dir;
    uv_write_t req;
    uint64_t due_ns;
    size_t len;
    int eof;         /* marker: shut the destination's write side */
    int close_after; /* fault: close the connection once written */
    unsigned char data[];
} chunk;

typedef struct direction {
    struct conn *conn;
    enum dir_id id;
    int tfd;          /* the timerfd of the head's due time, -1: none */
    uv_poll_t tpoll;  /* watching it */
    int tpoll_on;
    chunk *head, *tail;
    uint64_t last_due_ns;
    uint64_t link_free_ns;
    uint64_t bytes_in;  /* accepted from the source */
    uint64_t bytes_out; /* handed to the destination */
    uint64_t chunks;
    size_t queued; /* bytes in the FIFO or in uv_write */
    int reading;
    int eof_in; /* the source sent EOF (or a fault ended the stream) */
    int ended;  /* EOF delivered to the destination */
    int stalled;
    int close_pending; /* fault: close once the writes before it are done */
} direction;

typedef struct conn_stats {
    unsigned id;
    uint64_t turns;
    uint64_t bytes[2];
    const char *state;
} conn_stats;

typedef struct conn {
    struct conn *next;
    unsigned id;
    enum conn_state state;
    uv_tcp_t client;
    uv_tcp_t server;
    uv_connect_t connect_req;
    direction dir[2];
    int open_handles;
    int saw_server;
    uint64_t turns;
    int faulty;      /* the fault options apply to this connection */
    int fault_armed; /* offsets now count from fault_base */
    uint64_t fault_base;
    int64_t fault_at; /* the fault's offset (drawn with --fault-random) */
    int cut_turn;     /* --close-at-turn: this turn's bytes close it */
    int flipped;
    int held; /* accepted under "hold": upstream connect not started */
} conn;

typedef struct options {
    const char *listen_host;
    int port;
    const char *upstream;
    double delay_ms;
    double jitter_ms;
    double bandwidth_kbps;
    int64_t close_after;
    int64_t close_at_turn;
    int64_t stall_after;
    int64_t flip_at;
    enum dir_id fault_dir;
    uint64_t fault_turn;
    unsigned fault_conn;
    int fault_random;
    const char *stats_file;
    unsigned stats_interval_ms;
    uint64_t seed;
    int exit_on_stdin_eof;
    int quiet;
} options;

static options opt = {
    .listen_host = "127.0.0.1",
    .close_after = -1,
    .close_at_turn = -1,
    .stall_after = -1,
    .flip_at = -1,
    .fault_dir = DOWN,
};

static uv_loop_t *loop;
static uv_tcp_t listener;
/* What happens to new connections, set by the stdin commands. */
static enum { ADMIT_OPEN, ADMIT_REFUSE, ADMIT_HOLD } admit;
static struct sockaddr_storage upstream_addr;
static conn *conns;
static unsigned next_conn_id = 1;
static uint64_t rng_state;
static unsigned char read_buf[READ_BUF];
static int read_buf_busy;

static struct {
    uint64_t seq;
    uint64_t accepted;
    uint64_t active;
    uint64_t turns;
    uint64_t bytes[2];
    uint64_t chunks[2];
    uint64_t faults;
    uint64_t start_ns;
} totals;

static conn_stats closed_ring[KEEP_CLOSED];
static size_t closed_count;

static void pump(direction *d);
static void conn_close(conn *c);

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("ffb-proxy: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void note(const char *fmt, ...) {
    if (opt.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("ffb-proxy: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static double rng_unit(void) {
    /* xorshift64*: reproducible jitter with --seed. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    uint64_t x = rng_state * 2685821657736338717ull;
    return (double)(x >> 11) / 9007199254740992.0;
}

/* ---- stats ----------------------------------------------------------- */

static int format_totals(char *buf, size_t size, const char *why) {
    uint64_t now = uv_hrtime();
    return snprintf(
        buf, size,
        "stats seq=%" PRIu64 " why=%s time_ms=%" PRIu64 " conns=%" PRIu64
        " active=%" PRIu64 " turns=%" PRIu64 " c2s_bytes=%" PRIu64
        " s2c_bytes=%" PRIu64 " c2s_chunks=%" PRIu64 " s2c_chunks=%" PRIu64
        " faults=%" PRIu64,
        totals.seq, why, (uint64_t)((now - totals.start_ns) / NS_PER_MS),
        totals.accepted, totals.active, totals.turns, totals.bytes[UP],
        totals.bytes[DOWN], totals.chunks[UP], totals.chunks[DOWN],
        totals.faults);
}

static void print_conn(FILE *f, const conn_stats *s) {
    fprintf(f,
            "conn id=%u turns=%" PRIu64 " c2s_bytes=%" PRIu64
            " s2c_bytes=%" PRIu64 " state=%s\n",
            s->id, s->turns, s->bytes[UP], s->bytes[DOWN], s->state);
}

static conn_stats snapshot(const conn *c) {
    conn_stats s = {c->id,
                    c->turns,
                    {c->dir[UP].bytes_in, c->dir[DOWN].bytes_in},
                    c->state == ST_CONNECTING ? "connecting"
                    : c->state == ST_OPEN     ? "open"
                                              : "closing"};
    return s;
}

/* The stats file is replaced atomically (write, then rename), so a
   reader never sees half a file. */
static void write_stats_file(const char *line) {
    if (!opt.stats_file)
        return;
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp%d", opt.stats_file, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        note("cannot write %s: %s", tmp, strerror(errno));
        return;
    }
    fprintf(f, "%s\n", line);
    for (const conn *c = conns; c; c = c->next) {
        conn_stats s = snapshot(c);
        print_conn(f, &s);
    }
    size_t n = closed_count < KEEP_CLOSED ? closed_count : KEEP_CLOSED;
    for (size_t i = 0; i < n; i++) {
        size_t k = (closed_count - n + i) % KEEP_CLOSED;
        print_conn(f, &closed_ring[k]);
    }
    if (fclose(f) != 0 || rename(tmp, opt.stats_file) != 0)
        note("cannot write %s: %s", opt.stats_file, strerror(errno));
}

static void emit_stats(const char *why, int to_stdout) {
    char line[1024];
    totals.seq++;
    format_totals(line, sizeof(line), why);
    write_stats_file(line);
    if (to_stdout) {
        printf("%s\n", line);
        fflush(stdout);
    }
}

/* ---- connections ------------------------------------------------------ */

static void release(conn *c) {
    if (--c->open_handles > 0)
        return;
    for (int i = 0; i < 2; i++) {
        chunk *k = c->dir[i].head;
        while (k) {
            chunk *n = k->next;
            free(k);
            k = n;
        }
    }
    conn **pp = &conns;
    while (*pp != c)
        pp = &(*pp)->next;
    *pp = c->next;
    conn_stats s = snapshot(c);
    s.state = "closed";
    closed_ring[closed_count++ % KEEP_CLOSED] = s;
    totals.active--;
    free(c);
}

static void on_stream_closed(uv_handle_t *h) { release(h->data); }

static void on_timer_closed(uv_handle_t *h) {
    direction *d = h->data;
    if (d->tfd >= 0)
        close(d->tfd);
    d->tfd = -1;
    release(d->conn);
}

static void conn_close(conn *c) {
    if (c->state == ST_CLOSING)
        return;
    c->state = ST_CLOSING;
    /* Pending writes complete with UV_ECANCELED before the close callback
       of their stream, so chunks in flight are freed there. */
    uv_close((uv_handle_t *)&c->client, on_stream_closed);
    uv_close((uv_handle_t *)&c->server, on_stream_closed);
    uv_close((uv_handle_t *)&c->dir[UP].tpoll, on_timer_closed);
    uv_close((uv_handle_t *)&c->dir[DOWN].tpoll, on_timer_closed);
}

static uv_stream_t *source_of(direction *d) {
    conn *c = d->conn;
    return (uv_stream_t *)(d->id == UP ? &c->client : &c->server);
}

static uv_stream_t *dest_of(direction *d) {
    conn *c = d->conn;
    return (uv_stream_t *)(d->id == UP ? &c->server : &c->client);
}

/* A direction whose source stalled will never end by itself: once the
   other direction has ended, the connection is closed. */
static void check_finished(conn *c) {
    direction *u = &c->dir[UP], *d = &c->dir[DOWN];
    int up_done = u->ended || u->stalled;
    int down_done = d->ended || d->stalled;
    if (up_done && down_done && u->queued == 0 && d->queued == 0)
        conn_close(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)h;
    (void)suggested;
    /* One loop thread and the data is copied out in on_read, so a single
       buffer serves every stream. */
    if (read_buf_busy) {
        *buf = uv_buf_init(NULL, 0);
        return;
    }
    read_buf_busy = 1;
    *buf = uv_buf_init((char *)read_buf, READ_BUF);
}

static chunk *chunk_new(direction *d, const unsigned char *p, size_t len) {
    chunk *k = malloc(sizeof(*k) + len);
    if (!k)
        die("out of memory");
    memset(k, 0, sizeof(*k));
    k->dir = d;
    k->len = len;
    if (len)
        memcpy(k->data, p, len);
    return k;
}

static uint64_t delay_ns(void) {
    double ms = opt.delay_ms;
    if (opt.jitter_ms > 0)
        ms += opt.jitter_ms * rng_unit();
    return (uint64_t)(ms * (double)NS_PER_MS);
}

/* Give the chunk its due time and append it. With a bandwidth cap the
   link is a queue: a chunk starts transmitting when the link is free and
   arrives its serialisation time plus the delay later. */
static void enqueue(direction *d, chunk *k, uint64_t now) {
    uint64_t sent = now;
    if (opt.bandwidth_kbps > 0 && k->len) {
        uint64_t start = d->link_free_ns > now ? d->link_free_ns : now;
        double tx = (double)k->len * 8.0 * 1e6 / opt.bandwidth_kbps;
        sent = start + (uint64_t)tx;
        d->link_free_ns = sent;
    }
    k->due_ns = sent + delay_ns();
    if (k->due_ns < d->last_due_ns)
        k->due_ns = d->last_due_ns;
    d->last_due_ns = k->due_ns;
    k->next = NULL;
    if (d->tail)
        d->tail->next = k;
    else
        d->head = k;
    d->tail = k;
    d->queued += k->len;
}

static void enqueue_bytes(direction *d, const unsigned char *p, size_t len,
                          int close_after) {
    uint64_t now = uv_hrtime();
    size_t seg = opt.bandwidth_kbps > 0 ? SEGMENT : len;
    if (seg == 0)
        seg = 1;
    size_t off = 0;
    do {
        size_t n = len - off < seg ? len - off : seg;
        chunk *k = chunk_new(d, p + off, n);
        off += n;
        k->close_after = close_after && off == len;
        enqueue(d, k, now);
    } while (off < len);
    d->bytes_in += len;
    d->chunks++;
    totals.bytes[d->id] += len;
    totals.chunks[d->id]++;
}

static void pause_source(direction *d) {
    if (d->reading) {
        uv_read_stop(source_of(d));
        d->reading = 0;
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void resume_source(direction *d) {
    if (d->reading || d->eof_in || d->stalled || d->conn->state == ST_CLOSING)
        return;
    if (d->id == DOWN && d->conn->state != ST_OPEN)
        return;
    if (uv_read_start(source_of(d), on_alloc, on_read) == 0)
        d->reading = 1;
}

/* Faults act on the offsets of one direction's byte stream, counted from
   the connection's start or, with --fault-turn K, from the moment turn K
   began. Returns how many of the `len` bytes at `pos` may pass, and sets
   `*close_after` / stalls the direction when the stream ends here. */
static size_t apply_faults(direction *d, unsigned char *p, size_t len,
                           int *close_after) {
    conn *c = d->conn;
    *close_after = 0;
    if (!c->faulty || d->id != opt.fault_dir || !c->fault_armed)
        return len;
    uint64_t rel = d->bytes_in - c->fault_base;
    int64_t at = c->fault_at; /* only one of the faults is set */
    if (opt.flip_at >= 0 && !c->flipped && (uint64_t)at >= rel &&
        (uint64_t)at < rel + len) {
        p[at - (int64_t)rel] ^= 0xFF;
        c->flipped = 1;
        totals.faults++;
        note("conn %u: flipped %s byte %" PRId64, c->id,
             d->id == UP ? "c2s" : "s2c", at);
    }
    if (opt.close_after >= 0 && (uint64_t)at <= rel + len) {
        uint64_t keep = (uint64_t)at > rel ? (uint64_t)at - rel : 0;
        *close_after = 1;
        totals.faults++;
        note("conn %u: closing after %" PRId64 " %s bytes", c->id, at,
             d->id == UP ? "c2s" : "s2c");
        return (size_t)keep;
    }
    if (opt.stall_after >= 0 && (uint64_t)at <= rel + len) {
        uint64_t keep = (uint64_t)at > rel ? (uint64_t)at - rel : 0;
        d->stalled = 1;
        totals.faults++;
        note("conn %u: stalling %s after %" PRId64 " bytes", c->id,
             d->id == UP ? "c2s" : "s2c", at);
        return (size_t)keep;
    }
    return len;
}

static void count_turn(conn *c) {
    if (!c->saw_server)
        return;
    c->saw_server = 0;
    c->turns++;
    totals.turns++;
    if (c->faulty && !c->fault_armed && c->turns == opt.fault_turn) {
        c->fault_armed = 1;
        c->fault_base = c->dir[opt.fault_dir].bytes_in;
    }
    /* --close-at-turn: turns count from --fault-turn (0 = that turn). */
    if (opt.close_at_turn >= 0 && c->faulty && c->fault_armed &&
        c->turns >= opt.fault_turn &&
        (int64_t)(c->turns - opt.fault_turn) == c->fault_at)
        c->cut_turn = 1;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    conn *c = s->data;
    direction *d = &c->dir[s == (uv_stream_t *)&c->client ? UP : DOWN];
    if (buf->base == (char *)read_buf)
        read_buf_busy = 0;
    if (nread == 0 || c->state == ST_CLOSING)
        return;
    if (nread == UV_EOF) {
        pause_source(d);
        if (d->eof_in)
            return;
        d->eof_in = 1;
        chunk *k = chunk_new(d, NULL, 0);
        k->eof = 1;
        enqueue(d, k, uv_hrtime());
        pump(d);
        return;
    }
    if (nread < 0) {
        note("conn %u: %s: %s", c->id, d->id == UP ? "client" : "server",
             uv_strerror((int)nread));
        conn_close(c);
        return;
    }
    if (d->eof_in || d->stalled)
        return;
    if (d->id == UP)
        count_turn(c);
    if (c->cut_turn) {
        /* The client began the turn the fault names: none of it is
           forwarded, and both sockets close. The server had answered
           every earlier turn, so it is idle when its socket ends. */
        totals.faults++;
        note("conn %u: closing at turn %" PRIu64, c->id, c->turns);
        conn_close(c);
        return;
    }
    int close_after;
    size_t len = apply_faults(d, (unsigned char *)buf->base, (size_t)nread,
                              &close_after);
    if (len || close_after)
        enqueue_bytes(d, (unsigned char *)buf->base, len, close_after);
    if (close_after) {
        d->eof_in = 1;
        pause_source(d);
    } else if (d->stalled) {
        pause_source(d);
        check_finished(c);
    } else if (d->queued > QUEUE_HIGH) {
        pause_source(d);
    }
    pump(d);
}

static void on_written(uv_write_t *req, int status) {
    chunk *k = req->data;
    direction *d = k->dir;
    conn *c = d->conn;
    d->queued -= k->len;
    int close_after = k->close_after;
    free(k);
    if (c->state == ST_CLOSING)
        return;
    if (status < 0) {
        note("conn %u: writing to the %s: %s", c->id,
             d->id == UP ? "server" : "client", uv_strerror(status));
        conn_close(c);
        return;
    }
    if (close_after || (d->close_pending && d->queued == 0)) {
        conn_close(c);
        return;
    }
    if (d->queued < QUEUE_LOW)
        resume_source(d);
    check_finished(c);
}

static void on_shutdown(uv_shutdown_t *req, int status) {
    conn *c = req->data;
    free(req);
    if (status < 0 && status != UV_ECANCELED && c->state != ST_CLOSING)
        conn_close(c);
}

static void deliver(direction *d, chunk *k) {
    conn *c = d->conn;
    if (k->eof) {
        d->ended = 1;
        free(k);
        uv_shutdown_t *req = malloc(sizeof(*req));
        if (!req)
            die("out of memory");
        req->data = c;
        if (uv_shutdown(req, dest_of(d), on_shutdown) < 0) {
            free(req);
            conn_close(c);
            return;
        }
        check_finished(c);
        return;
    }
    if (k->len == 0 && k->close_after) {
        free(k);
        if (d->queued == 0)
            conn_close(c);
        else
            d->close_pending = 1;
        return;
    }
    if (d->id == DOWN && k->len)
        c->saw_server = 1;
    d->bytes_out += k->len;
    k->req.data = k;
    uv_buf_t b = uv_buf_init((char *)k->data, (unsigned)k->len);
    int rc = uv_write(&k->req, dest_of(d), &b, 1, on_written);
    if (rc < 0) {
        d->queued -= k->len;
        free(k);
        note("conn %u: write: %s", c->id, uv_strerror(rc));
        conn_close(c);
    }
}

static void on_timer(uv_poll_t *p, int status, int events) {
    (void)status;
    (void)events;
    direction *d = p->data;
    uint64_t expirations;
    while (read(d->tfd, &expirations, sizeof expirations) < 0 && errno == EINTR)
        ;
    pump(d);
}

/* Deliver every chunk that is due, in order; arm the timer for the next. */
static void pump(direction *d) {
    conn *c = d->conn;
    while (d->head && c->state != ST_CLOSING) {
        /* Client bytes wait for the upstream connection. */
        if (d->id == UP && c->state != ST_OPEN)
            return;
        uint64_t now = uv_hrtime();
        chunk *k = d->head;
        if (k->due_ns > now) {
            struct itimerspec it = {0};
            it.it_value.tv_sec = (time_t)(k->due_ns / 1000000000u);
            it.it_value.tv_nsec = (long)(k->due_ns % 1000000000u);
            if (timerfd_settime(d->tfd, TFD_TIMER_ABSTIME, &it, NULL) < 0)
                die("timerfd_settime: %s", strerror(errno));
            if (!d->tpoll_on) { /* stays on: an unarmed timerfd is quiet */
                uv_poll_start(&d->tpoll, UV_READABLE, on_timer);
                d->tpoll_on = 1;
            }
            return;
        }
        d->head = k->next;
        if (!d->head)
            d->tail = NULL;
        deliver(d, k);
    }
}

static void on_upstream(uv_connect_t *req, int status) {
    conn *c = req->data;
    if (c->state == ST_CLOSING)
        return;
    if (status < 0) {
        note("conn %u: upstream %s: %s", c->id, opt.upstream,
             uv_strerror(status));
        conn_close(c);
        return;
    }
    c->state = ST_OPEN;
    uv_tcp_nodelay(&c->server, 1);
    resume_source(&c->dir[DOWN]);
    pump(&c->dir[UP]);
}

static void connect_upstream(conn *c) {
    c->held = 0;
    c->connect_req.data = c;
    int rc =
        uv_tcp_connect(&c->connect_req, &c->server,
                       (const struct sockaddr *)&upstream_addr, on_upstream);
    if (rc < 0) {
        note("conn %u: upstream %s: %s", c->id, opt.upstream, uv_strerror(rc));
        conn_close(c);
    }
}

static void on_accept(uv_stream_t *server, int status) {
    if (status < 0) {
        note("accept: %s", uv_strerror(status));
        return;
    }
    conn *c = calloc(1, sizeof(*c));
    if (!c)
        die("out of memory");
    c->id = next_conn_id++;
    c->state = ST_CONNECTING;
    c->saw_server = 1; /* the first client bytes are a turn */
    c->faulty = opt.fault_conn == 0 || opt.fault_conn == c->id;
    c->fault_armed = opt.fault_turn == 0;
    c->fault_at = opt.close_after >= 0     ? opt.close_after
                  : opt.close_at_turn >= 0 ? opt.close_at_turn
                  : opt.stall_after >= 0   ? opt.stall_after
                                           : opt.flip_at;
    if (opt.fault_random && c->fault_at > 0)
        c->fault_at = (int64_t)(rng_unit() * (double)(c->fault_at + 1));
    uv_tcp_init(loop, &c->client);
    uv_tcp_init(loop, &c->server);
    c->client.data = c->server.data = c;
    for (int i = 0; i < 2; i++) {
        direction *d = &c->dir[i];
        d->conn = c;
        d->id = (enum dir_id)i;
        d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (d->tfd < 0 || uv_poll_init(loop, &d->tpoll, d->tfd) < 0)
            die("timerfd: %s", strerror(errno));
        d->tpoll.data = d;
    }
    c->open_handles = 4;
    c->next = conns;
    conns = c;
    totals.accepted++;
    totals.active++;
    if (uv_accept(server, (uv_stream_t *)&c->client) < 0) {
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->client, 1);
    if (admit == ADMIT_REFUSE) { /* the client sees the stream end */
        conn_close(c);
        return;
    }
    c->held = admit == ADMIT_HOLD;
    if (!c->held)
        connect_upstream(c);
    if (c->state == ST_CONNECTING)
        resume_source(&c->dir[UP]);
}

/* ---- process ------------------------------------------------------------ */

static void on_usr1(uv_signal_t *s, int signum) {
    (void)s;
    (void)signum;
    emit_stats("signal", 1);
}

static void finish(const char *why) {
    emit_stats(why, !opt.quiet || opt.stats_file == NULL);
    exit(0);
}

static void on_term(uv_signal_t *s, int signum) {
    (void)s;
    finish(signum == SIGINT ? "sigint" : "sigterm");
}

static void on_stats_timer(uv_timer_t *t) {
    (void)t;
    emit_stats("interval", 0);
}

static void on_stdin_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    static char b[256];
    (void)h;
    (void)suggested;
    *buf = uv_buf_init(b, sizeof(b));
}

/* One command line from stdin (bench/README.md, "Commands"); answered
   with "ok COMMAND N" on stdout once done (N: connections affected). */
static void command(const char *line) {
    unsigned n = 0;
    if (!strcmp(line, "cut")) {
        for (conn *c = conns; c; c = c->next)
            if (c->state != ST_CLOSING) {
                conn_close(c);
                n++;
            }
        totals.faults += n;
    } else if (!strcmp(line, "refuse")) {
        admit = ADMIT_REFUSE;
    } else if (!strcmp(line, "hold")) {
        admit = ADMIT_HOLD;
    } else if (!strcmp(line, "open")) {
        admit = ADMIT_OPEN;
        for (conn *c = conns; c; c = c->next)
            if (c->held && c->state == ST_CONNECTING) {
                connect_upstream(c);
                n++;
            }
    } else {
        note("unknown command \"%s\"", line);
        printf("error %s\n", line);
        fflush(stdout);
        return;
    }
    printf("ok %s %u\n", line, n);
    fflush(stdout);
}

static void on_stdin(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    static char line[256];
    static size_t len;
    (void)s;
    if (nread < 0)
        finish("stdin-eof");
    for (ssize_t i = 0; i < nread; i++) {
        char ch = buf->base[i];
        if (ch == '\n') {
            line[len] = 0;
            len = 0;
            command(line);
        } else if (len < sizeof(line) - 1) {
            line[len++] = ch;
        }
    }
}

static void usage(FILE *f) {
    fputs(
        "usage: ffb-proxy --upstream HOST:PORT [options]\n"
        "\n"
        "A TCP proxy for network-condition tests of Firebird clients. It\n"
        "listens on HOST:PORT (--listen, --port), forwards every connection\n"
        "to --upstream, delays each direction, counts the client's turns,\n"
        "and can inject faults. The first line on stdout is \"port N\".\n"
        "\n"
        "  --upstream HOST:PORT    server to forward to (required;\n"
        "                          [v6addr]:port for IPv6)\n"
        "  --listen HOST           address to listen on (127.0.0.1)\n"
        "  --port N                port to listen on; 0 = any free (0)\n"
        "  --delay-ms MS           one-way delay per direction (0; fractions\n"
        "                          allowed)\n"
        "  --jitter-ms MS          extra random delay 0..MS per chunk; order\n"
        "                          is kept\n"
        "  --bandwidth-kbps K      per-direction rate in kbit/s (0 = none)\n"
        "  --close-after-bytes N   close the connection after N bytes\n"
        "  --close-at-turn N       close the connection when the client\n"
        "                          begins turn N (counted from --fault-turn),\n"
        "                          forwarding none of it: the server had\n"
        "                          answered everything before (idle)\n"
        "  --stall-after-bytes N   forward N bytes, then nothing more (the\n"
        "                          connection stays open)\n"
        "  --flip-byte-at N        invert the byte at offset N\n"
        "  --fault-dir s2c|c2s     stream the fault offsets count in (s2c)\n"
        "  --fault-turn K          offsets count from the start of turn K\n"
        "                          (0 = from the connection's start)\n"
        "  --fault-conn K          faults only on the K-th connection\n"
        "                          (0 = every connection)\n"
        "  --fault-random          each connection's fault offset is drawn\n"
        "                          from 0..N (see --seed)\n"
        "  --stats-file PATH       counters, replaced atomically on SIGUSR1,\n"
        "                          every --stats-interval-ms and on exit\n"
        "  --stats-interval-ms MS  periodic stats-file updates (0 = off)\n"
        "  --seed N                jitter and --fault-random seed\n"
        "                          (default: time)\n"
        "  --exit-on-stdin-eof     exit when stdin closes (for test\n"
        "                          harnesses: no orphan proxies); stdin\n"
        "                          lines are then commands: cut (close\n"
        "                          every connection), refuse / hold (new\n"
        "                          connections are closed at once / not\n"
        "                          forwarded), open (back to normal, held\n"
        "                          ones forwarded); each answered \"ok ...\"\n"
        "  --quiet                 no diagnostics on stderr\n"
        "  --help                  this text\n"
        "\n"
        "Signals: SIGUSR1 prints a \"stats ...\" line on stdout (and updates\n"
        "the stats file); SIGTERM/SIGINT write the final stats and exit.\n"
        "A turn is a burst of client bytes after server bytes reached the\n"
        "client (or the first client bytes). See bench/README.md.\n",
        f);
}

static int64_t parse_int(const char *name, const char *v) {
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || *end || end == v || n < 0)
        die("%s: not a non-negative integer: \"%s\"", name, v);
    return (int64_t)n;
}

static double parse_num(const char *name, const char *v) {
    char *end;
    errno = 0;
    double n = strtod(v, &end);
    if (errno || *end || end == v || n < 0)
        die("%s: not a non-negative number: \"%s\"", name, v);
    return n;
}

static void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char name[64];
        const char *v = NULL;
        const char *eq = strchr(a, '=');
        if (eq && (size_t)(eq - a) < sizeof(name)) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = 0;
            v = eq + 1;
        } else {
            snprintf(name, sizeof(name), "%s", a);
        }
        if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(name, "--quiet")) {
            opt.quiet = 1;
            continue;
        }
        if (!strcmp(name, "--exit-on-stdin-eof")) {
            opt.exit_on_stdin_eof = 1;
            continue;
        }
        if (!strcmp(name, "--fault-random")) {
            opt.fault_random = 1;
            continue;
        }
        if (!v) {
            if (i + 1 >= argc) {
                usage(stderr);
                die("%s needs a value", name);
            }
            v = argv[++i];
        }
        if (!strcmp(name, "--upstream"))
            opt.upstream = v;
        else if (!strcmp(name, "--listen"))
            opt.listen_host = v;
        else if (!strcmp(name, "--port"))
            opt.port = (int)parse_int(name, v);
        else if (!strcmp(name, "--delay-ms"))
            opt.delay_ms = parse_num(name, v);
        else if (!strcmp(name, "--jitter-ms"))
            opt.jitter_ms = parse_num(name, v);
        else if (!strcmp(name, "--bandwidth-kbps"))
            opt.bandwidth_kbps = parse_num(name, v);
        else if (!strcmp(name, "--close-after-bytes"))
            opt.close_after = parse_int(name, v);
        else if (!strcmp(name, "--close-at-turn"))
            opt.close_at_turn = parse_int(name, v);
        else if (!strcmp(name, "--stall-after-bytes"))
            opt.stall_after = parse_int(name, v);
        else if (!strcmp(name, "--flip-byte-at"))
            opt.flip_at = parse_int(name, v);
        else if (!strcmp(name, "--fault-turn"))
            opt.fault_turn = (uint64_t)parse_int(name, v);
        else if (!strcmp(name, "--fault-conn"))
            opt.fault_conn = (unsigned)parse_int(name, v);
        else if (!strcmp(name, "--stats-file"))
            opt.stats_file = v;
        else if (!strcmp(name, "--stats-interval-ms"))
            opt.stats_interval_ms = (unsigned)parse_int(name, v);
        else if (!strcmp(name, "--seed"))
            opt.seed = (uint64_t)parse_int(name, v);
        else if (!strcmp(name, "--fault-dir")) {
            if (!strcmp(v, "s2c"))
                opt.fault_dir = DOWN;
            else if (!strcmp(v, "c2s"))
                opt.fault_dir = UP;
            else
                die("--fault-dir: s2c or c2s, not \"%s\"", v);
        } else {
            usage(stderr);
            die("unknown option \"%s\"", name);
        }
    }
    if (!opt.upstream) {
        usage(stderr);
        die("--upstream is required");
    }
    if (opt.port > 65535)
        die("--port: out of range");
    if ((opt.close_after >= 0) + (opt.close_at_turn >= 0) +
            (opt.stall_after >= 0) + (opt.flip_at >= 0) >
        1)
        die("one fault per proxy: --close-after-bytes, --close-at-turn, "
            "--stall-after-bytes, --flip-byte-at");
}

static void resolve(const char *hostport, int passive,
                    struct sockaddr_storage *out) {
    char host[256];
    const char *port;
    const char *colon = strrchr(hostport, ':');
    if (!passive) {
        if (!colon || colon == hostport)
            die("--upstream: expected HOST:PORT, got \"%s\"", hostport);
        size_t hl = (size_t)(colon - hostport);
        if (hostport[0] == '[' && hl >= 2 && hostport[hl - 1] == ']') {
            hostport++;
            hl -= 2;
        }
        if (hl >= sizeof(host))
            die("--upstream: host too long");
        memcpy(host, hostport, hl);
        host[hl] = 0;
        port = colon + 1;
    } else {
        snprintf(host, sizeof(host), "%s", hostport);
        port = "0";
    }
    struct addrinfo hints, *res;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g != 0)
        die("cannot resolve \"%s\": %s", hostport, gai_strerror(g));
    memcpy(out, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
}

int main(int argc, char **argv) {
    parse_args(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    loop = uv_default_loop();
    totals.start_ns = uv_hrtime();
    rng_state = opt.seed ? opt.seed : (uint64_t)time(NULL) ^ totals.start_ns;
    if (!rng_state)
        rng_state = 1;

    /* Handlers first: a harness may signal as soon as it reads the port. */
    uv_signal_t sig_usr1, sig_term, sig_int;
    uv_signal_init(loop, &sig_usr1);
    uv_signal_start(&sig_usr1, on_usr1, SIGUSR1);
    uv_signal_init(loop, &sig_term);
    uv_signal_start(&sig_term, on_term, SIGTERM);
    uv_signal_init(loop, &sig_int);
    uv_signal_start(&sig_int, on_term, SIGINT);

    resolve(opt.upstream, 0, &upstream_addr);
    struct sockaddr_storage bind_addr;
    resolve(opt.listen_host, 1, &bind_addr);
    if (bind_addr.ss_family == AF_INET)
        ((struct sockaddr_in *)&bind_addr)->sin_port =
            htons((uint16_t)opt.port);
    else
        ((struct sockaddr_in6 *)&bind_addr)->sin6_port =
            htons((uint16_t)opt.port);

    uv_tcp_init(loop, &listener);
    int rc = uv_tcp_bind(&listener, (const struct sockaddr *)&bind_addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&listener, 128, on_accept);
    if (rc < 0)
        die("cannot listen on %s port %d: %s", opt.listen_host, opt.port,
            uv_strerror(rc));
    struct sockaddr_storage name;
    int namelen = sizeof(name);
    uv_tcp_getsockname(&listener, (struct sockaddr *)&name, &namelen);
    int port = name.ss_family == AF_INET
                   ? ntohs(((struct sockaddr_in *)&name)->sin_port)
                   : ntohs(((struct sockaddr_in6 *)&name)->sin6_port);
    printf("port %d\n", port);
    fflush(stdout);
    note("listening on %s port %d, forwarding to %s, delay %g ms, jitter %g "
         "ms, bandwidth %g kbit/s",
         opt.listen_host, port, opt.upstream, opt.delay_ms, opt.jitter_ms,
         opt.bandwidth_kbps);

    uv_timer_t stats_timer;
    if (opt.stats_interval_ms) {
        uv_timer_init(loop, &stats_timer);
        uv_timer_start(&stats_timer, on_stats_timer, opt.stats_interval_ms,
                       opt.stats_interval_ms);
    }
    uv_pipe_t in;
    if (opt.exit_on_stdin_eof) {
        uv_pipe_init(loop, &in, 0);
        if (uv_pipe_open(&in, 0) < 0 ||
            uv_read_start((uv_stream_t *)&in, on_stdin_alloc, on_stdin) < 0)
            die("--exit-on-stdin-eof: stdin is not a pipe");
    }
    emit_stats("start", 0);
    uv_run(loop, UV_RUN_DEFAULT);
    return 0;
}
