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

/* ---- encoders ------------------------------------------------------------ */

void srv_response(ffbp_writer *w, uint16_t object, uint64_t blob_id,
                  const void *data, size_t len) {
    ffbp_put_i32(w, FFBP_OP_RESPONSE);
    ffbp_put_i16(w, object);
    ffbp_put_quad(w, blob_id);
    ffbp_put_cstring(w, data, len);
    ffbp_put_i32(w, FFBP_ARG_END);
}

void srv_error(ffbp_writer *w, uint32_t gds) {
    ffbp_put_i32(w, FFBP_OP_RESPONSE);
    ffbp_put_i16(w, 0);
    ffbp_put_quad(w, 0);
    ffbp_put_cstring(w, NULL, 0);
    ffbp_put_i32(w, FFBP_ARG_GDS);
    ffbp_put_u32(w, gds);
    ffbp_put_i32(w, FFBP_ARG_END);
}

void srv_fetch(ffbp_writer *w, int32_t status, uint16_t count,
               const void *msg, size_t len) {
    ffbp_put_i32(w, FFBP_OP_FETCH_RESPONSE);
    ffbp_put_i32(w, status);
    ffbp_put_i16(w, count);
    if (count)
        ffbp_put_raw(w, msg, len);
}

void srv_sql_response(ffbp_writer *w, uint16_t count, const void *msg,
                      size_t len) {
    ffbp_put_i32(w, FFBP_OP_SQL_RESPONSE);
    ffbp_put_i16(w, count);
    if (count)
        ffbp_put_raw(w, msg, len);
}

void srv_inline_blob(ffbp_writer *w, uint16_t tx, uint64_t id,
                     const void *info, size_t info_len, const void *data,
                     size_t data_len) {
    ffbp_put_i32(w, FFBP_OP_INLINE_BLOB);
    ffbp_put_i16(w, tx);
    ffbp_put_quad(w, id);
    ffbp_put_cstring(w, info, info_len);
    ffbp_put_cstring(w, data, data_len);
}

void srv_accept(ffbp_writer *w, int32_t op, int protocol, const char *plugin,
                const void *data, size_t data_len, int authenticated,
                const void *keys, size_t keys_len) {
    ffbp_put_i32(w, op);
    ffbp_put_i16(w, (uint16_t)(FFBP_PROTOCOL_FLAG | (unsigned)protocol));
    ffbp_put_i32(w, FFBP_ARCH_GENERIC);
    ffbp_put_i16(w, FFBP_PTYPE_LAZY_SEND);
    if (op == FFBP_OP_ACCEPT)
        return;
    ffbp_put_cstring(w, data, data_len);
    ffbp_put_cstring(w, plugin, plugin ? strlen(plugin) : 0);
    ffbp_put_i16(w, (uint16_t)authenticated);
    ffbp_put_cstring(w, keys, keys_len);
}

void srv_cont_auth(ffbp_writer *w, const void *data, size_t data_len,
                   const char *plugin, const void *keys, size_t keys_len) {
    ffbp_put_i32(w, FFBP_OP_CONT_AUTH);
    ffbp_put_cstring(w, data, data_len);
    ffbp_put_cstring(w, plugin, plugin ? strlen(plugin) : 0);
    ffbp_put_cstring(w, plugin, plugin ? strlen(plugin) : 0);
    ffbp_put_cstring(w, keys, keys_len);
}

typedef struct ibuf {
    uint8_t *p;
    size_t cap, len;
} ibuf;

static void ib_byte(ibuf *b, uint8_t c) {
    assert_true(b->len < b->cap);
    b->p[b->len++] = c;
}

static void ib_item(ibuf *b, uint8_t code, const void *v, size_t n) {
    assert_true(n < 65536 && b->len + 3 + n <= b->cap);
    b->p[b->len++] = code;
    b->p[b->len++] = (uint8_t)n;
    b->p[b->len++] = (uint8_t)(n >> 8);
    memcpy(b->p + b->len, v, n);
    b->len += n;
}

static void ib_int(ibuf *b, uint8_t code, uint32_t v) {
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                     (uint8_t)(v >> 24)};
    ib_item(b, code, le, 4);
}

static void ib_side(ibuf *b, uint8_t side, uint32_t count, const srv_var *v,
                    size_t n, uint32_t first, uint32_t truncate_at) {
    ib_byte(b, side);
    ib_int(b, FFBP_INFO_SQL_DESCRIBE_VARS, count);
    for (size_t i = 0; i < n; i++) {
        uint32_t seq = first + (uint32_t)i;
        if (truncate_at && seq == truncate_at) {
            ib_byte(b, FFBP_INFO_TRUNCATED);
            return;
        }
        ib_int(b, FFBP_INFO_SQL_SQLDA_SEQ, seq);
        ib_int(b, FFBP_INFO_SQL_TYPE,
               (uint32_t)(v[i].sqltype | (v[i].nullable ? 1 : 0)));
        ib_int(b, FFBP_INFO_SQL_SUB_TYPE, (uint32_t)v[i].subtype);
        ib_int(b, FFBP_INFO_SQL_SCALE, (uint32_t)v[i].scale);
        ib_int(b, FFBP_INFO_SQL_LENGTH, (uint32_t)v[i].length);
        const char *name = v[i].name ? v[i].name : "C";
        ib_item(b, FFBP_INFO_SQL_FIELD, name, strlen(name));
        ib_item(b, FFBP_INFO_SQL_RELATION, "T", 1);
        ib_item(b, FFBP_INFO_SQL_OWNER, "SYSDBA", 6);
        ib_item(b, FFBP_INFO_SQL_ALIAS, name, strlen(name));
        ib_byte(b, FFBP_INFO_SQL_DESCRIBE_END);
    }
}

size_t srv_describe(uint8_t *buf, size_t cap, int stmt_type,
                    uint32_t out_count, const srv_var *out, size_t nout,
                    uint32_t first_out, uint32_t in_count, const srv_var *in,
                    size_t nin, uint32_t truncate_at) {
    ibuf b = {buf, cap, 0};
    if (stmt_type)
        ib_int(&b, FFBP_INFO_SQL_STMT_TYPE, (uint32_t)stmt_type);
    ib_side(&b, FFBP_INFO_SQL_SELECT, out_count, out, nout,
            first_out ? first_out : 1, truncate_at);
    if (truncate_at && truncate_at >= (first_out ? first_out : 1) &&
        truncate_at < (first_out ? first_out : 1) + nout)
        return b.len;
    ib_side(&b, FFBP_INFO_SQL_BIND, in_count, in, nin, 1, 0);
    ib_byte(&b, FFBP_INFO_END);
    return b.len;
}

/* ---- transport ------------------------------------------------------------- */

void hostile_init(hostile *h) { memset(h, 0, sizeof(*h)); }

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

static int t_connect(ffb_conn *conn, void *data) {
    (void)conn;
    (void)data;
    return 0;
}

static int t_flush(ffb_conn *conn, void *data) {
    hostile *h = data;
    size_t n = conn->out.len;
    if (h->written_len + n > h->written_cap) {
        h->written_cap = (h->written_len + n) * 2 + 64;
        h->written = realloc(h->written, h->written_cap);
        assert_non_null(h->written);
    }
    memcpy(h->written + h->written_len, conn->out.data, n);
    h->written_len += n;
    h->flushes++;
    ffb__engine_output_done(conn, n);
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

static int t_read(ffb_conn *conn, void *data) {
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
    int rc = ffb_conn_feed_eof(conn);
    return rc < 0 ? rc : FFB_E_CLOSED;
}

static void t_close(ffb_conn *conn, void *data) {
    (void)conn;
    (void)data;
}

static const ffb__transport hostile_transport = {t_connect, t_flush, t_read,
                                                 t_close};

void hostile_use(hostile *h, ffb_conn *conn) {
    ffb__conn_set_transport(conn, &hostile_transport, h);
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
    assert_int_equal(ffb_conn_new(&c, o), 0);
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
