/*
 * The scripted server of tests/support/hostile.h.
 */
#include "tests/support/hostile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/check.h"

/* ---- transport ------------------------------------------------------------- */

void hostile_init(hostile *h) {
    memset(h, 0, sizeof(*h));
    h->now = 1000000; /* not 0: a deadline of 0 would look like none */
}

hostile H;
ffbp_writer W;

int hostile_setup(void **state) {
    (void)state;
    hostile_init(&H);
    ffbp_writer_init(&W, NULL);
    return 0;
}

int hostile_teardown(void **state) {
    (void)state;
    hostile_free(&H);
    ffbp_writer_free(&W);
    return 0;
}

void hostile_free(hostile *h) {
    for (size_t i = 0; i < h->nchunks; i++)
        free(h->chunk[i]);
    free(h->chunk);
    free(h->chunk_len);
    free(h->written);
    memset(h, 0, sizeof(*h));
}

void hostile_push_bytes(hostile *h, const void *p, size_t len) {
    if (h->nchunks == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 16;
        h->chunk = realloc(h->chunk, h->cap * sizeof(*h->chunk));
        h->chunk_len = realloc(h->chunk_len, h->cap * sizeof(*h->chunk_len));
        assert_non_null(h->chunk);
        assert_non_null(h->chunk_len);
    }
    uint8_t *c = malloc(len ? len : 1);
    assert_non_null(c);
    if (len)
        memcpy(c, p, len);
    h->chunk[h->nchunks] = c;
    h->chunk_len[h->nchunks] = len;
    h->nchunks++;
}

void hostile_push(hostile *h, ffbp_writer *w) {
    assert_false(w->failed);
    hostile_push_bytes(h, w->data, w->len);
    ffbp_writer_reset(w);
}

size_t hostile_pending(const hostile *h) { return h->nchunks - h->next; }

static int t_connect(ffb_conn *conn, void *data, int timeout_ms) {
    (void)conn;
    (void)data;
    (void)timeout_ms;
    return 0;
}

static int t_flush(ffb_conn *conn, void *data, int timeout_ms) {
    (void)timeout_ms;
    hostile *h = data;
    const uint8_t *out;
    size_t n = ffb_conn_output(conn, &out);
    if (h->written_len + n > h->written_cap) {
        h->written_cap = (h->written_len + n) * 2 + 64;
        h->written = realloc(h->written, h->written_cap);
        assert_non_null(h->written);
    }
    memcpy(h->written + h->written_len, out, n);
    h->written_len += n;
    h->flushes++;
    ffb_conn_output_done(conn, n);
    return 0;
}

static int feed(ffb_conn *conn, hostile *h, const uint8_t *p, size_t len) {
    size_t step = h->feed_piece ? h->feed_piece : len;
    for (size_t off = 0; off < len; off += step) {
        size_t n = len - off < step ? len - off : step;
        int rc = ffb_conn_feed(conn, p + off, n);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int t_read(ffb_conn *conn, void *data, int timeout_ms) {
    hostile *h = data;
    size_t max = h->max_reads ? h->max_reads : 100000;
    if (++h->reads > max)
        fail_msg("the client read %zu times: a loop the server drives", max);
    if (h->next < h->nchunks) {
        size_t i = h->next++;
        return feed(conn, h, h->chunk[i], h->chunk_len[i]);
    }
    if (h->gen) {
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        int more = h->gen(h, &w, h->gen_calls++);
        int rc = 0;
        if (more)
            rc = feed(conn, h, w.data, w.len);
        ffbp_writer_free(&w);
        if (more)
            return rc;
    }
    if (h->stall) {
        if (timeout_ms < 0)
            fail_msg("the client waits without a deadline on a silent "
                     "server: it would hang");
        h->stalls++;
        h->now += timeout_ms;
        return 0;
    }
    int rc = ffb_conn_feed_eof(conn);
    return rc < 0 ? rc : FFB_E_CLOSED;
}

static void t_close(ffb_conn *conn, void *data) {
    (void)conn;
    (void)data;
}

static const ffb__transport hostile_transport = {t_connect, t_flush, t_read,
                                                 t_close, NULL, NULL};

static int64_t h_clock(void *data) { return ((hostile *)data)->now; }

void hostile_use(hostile *h, ffb_conn *conn) {
    ffb__conn_set_transport(conn, &hostile_transport, h);
    ffb__conn_set_clock(conn, h_clock, h);
}

void hostile_options(ffb_conn_options *o) {
    *o = (ffb_conn_options)FFB_CONN_OPTIONS_INIT;
    o->dsn = "hostile/3050:db";
    o->user = "SYSDBA";
    o->password = "masterkey";
    o->wire_crypt = FFB_CRYPT_DISABLED;
    o->os_user = "u";
    o->client_host = "h";
    o->process_name = "p";
    o->process_id = 1;
}

ffb_conn *hostile_attach(hostile *h, int protocol,
                         const ffb_conn_options *o) {
    ffb_conn_options def;
    if (!o) {
        hostile_options(&def);
        o = &def;
    }
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(o, &c), 0);
    hostile_use(h, c);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    srv_accept(&w, FFBP_OP_ACCEPT, protocol, NULL, NULL, 0, 0, NULL, 0);
    hostile_push(h, &w);
    srv_response(&w, 1, 0, NULL, 0);
    hostile_push(h, &w);
    ffbp_writer_free(&w);
    int rc = ffb_conn_connect(c);
    if (rc != 0)
        fail_msg("scripted attach failed: %d %s", rc,
                 ffb_error_message(ffb_conn_error(c)));
    assert_int_equal(ffb_conn_protocol(c), protocol);
    return c;
}

ffb_conn *hostile_ext_attach(int protocol) {
    ffb_conn_options o;
    hostile_options(&o);
    o.io = FFB_IO_EXTERNAL;
    ffb_conn *c = NULL;
    OK(c, ffb_conn_new(&o, &c));
    OK(c, ffb_conn_start(c));
    const uint8_t *out;
    ffb_conn_output_done(c, ffb_conn_output(c, &out));
    srv_accept(&W, FFBP_OP_ACCEPT, protocol, NULL, NULL, 0, 0, NULL, 0);
    OK(c, ffb_conn_feed(c, W.data, W.len));
    ffbp_writer_reset(&W);
    ffb_conn_output_done(c, ffb_conn_output(c, &out));
    srv_response(&W, 1, 0, NULL, 0);
    OK(c, ffb_conn_feed(c, W.data, W.len));
    ffbp_writer_reset(&W);
    assert_int_equal(ffb_conn_step(c), 1);
    return c;
}

/* ---- failing allocator ------------------------------------------------------ */

static int fa_refuse(fail_alloc *fa) {
    fa->calls++;
    if (fa->fail_at &&
        (fa->calls == fa->fail_at || (fa->fail_all && fa->calls > fa->fail_at))) {
        fa->failed = 1;
        return 1;
    }
    return 0;
}

static void *fa_malloc(size_t size, void *data) {
    fail_alloc *fa = data;
    if (fa_refuse(fa))
        return NULL;
    void *p = malloc(size ? size : 1);
    if (p)
        fa->live++;
    return p;
}

static void *fa_realloc(void *ptr, size_t size, void *data) {
    fail_alloc *fa = data;
    if (fa_refuse(fa))
        return NULL;
    void *p = realloc(ptr, size ? size : 1);
    if (p && !ptr)
        fa->live++;
    return p;
}

static void fa_free(void *ptr, void *data) {
    fail_alloc *fa = data;
    if (ptr)
        fa->live--;
    free(ptr);
}

void fail_alloc_install(fail_alloc *fa, ffb_allocator *out) {
    out->malloc = fa_malloc;
    out->realloc = fa_realloc;
    out->free = fa_free;
    out->data = fa;
}
