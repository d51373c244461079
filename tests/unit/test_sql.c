/*
 * Statements and data on the wire (proto/msg.c, proto/sql.c,
 * proto/describe_sql.c): the worked example of reference 02 section 11
 * byte for byte, every type of 9.4 (BLR, encoding, decoding), the null
 * bitmaps of 9.1, the describe parser on answers recorded from Firebird
 * 5.0.4 (tests/data/fb5) and on hand-built truncated describes. Decoder
 * inputs sit in front of a guard page, and every vector cut short must
 * give FFBP_INCOMPLETE with the cursor untouched.
 */
#include "tests/support/guard.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/hex.h"

#include "proto/proto.h"
#include "proto/sql.h"

/* ---- helpers ------------------------------------------------------------ */

/* A reader over a guard-page copy of `v`. */
typedef struct gvec {
    guard_buf g;
    ffbp_reader r;
} gvec;

static void gvec_init(gvec *gv, const uint8_t *v, size_t len) {
    const uint8_t *p = guard_copy(&gv->g, v, len);
    ffbp_reader_init(&gv->r, p, len);
}

static void gvec_free(gvec *gv) { guard_release(&gv->g); }



static void assert_bytes(const uint8_t *got, size_t got_len,
                         const uint8_t *want, size_t want_len) {
    size_t i = 0;
    while (i < got_len && i < want_len && got[i] == want[i])
        i++;
    if (i == got_len && i == want_len)
        return;
    fprintf(stderr, "bytes differ at offset %zu (got %zu bytes, want %zu)\n", i,
            got_len, want_len);
    for (size_t k = i < 8 ? 0 : i - 8; k < i + 8; k++) {
        fprintf(stderr, "  %4zu: got %s%02X  want %s%02X\n", k,
                k < got_len ? "" : "--", k < got_len ? got[k] : 0,
                k < want_len ? "" : "--", k < want_len ? want[k] : 0);
    }
    fail();
}

static void assert_hex(const uint8_t *got, size_t got_len, const char *hex) {
    size_t n;
    uint8_t *want = test_unhex_alloc(hex, &n);
    assert_bytes(got, got_len, want, n);
    free(want);
}

static void assert_view(ffbp_bytes b, const char *s) {
    assert_int_equal(b.len, strlen(s));
    if (b.len)
        assert_memory_equal(b.p, s, b.len);
    else
        assert_true(b.p != NULL || b.len == 0);
}

/* A decoder under test, on a reader. */
typedef int (*decode_fn)(ffbp_reader *r, void *ctx);

/* The vector decodes with FFBP_OK consuming exactly `len` bytes, and every
   shorter prefix is FFBP_INCOMPLETE with the cursor untouched (all on
   guard-page copies). The last decode is from `v` itself, so the views in
   ctx point into it. */
static void check_vector(const uint8_t *v, size_t len, decode_fn fn,
                         void *ctx) {
    for (size_t cut = 0; cut < len; cut++) {
        gvec g;
        gvec_init(&g, v, cut);
        assert_int_equal(fn(&g.r, ctx), FFBP_INCOMPLETE);
        assert_int_equal(g.r.pos, 0);
        gvec_free(&g);
    }
    gvec g;
    gvec_init(&g, v, len);
    assert_int_equal(fn(&g.r, ctx), FFBP_OK);
    assert_int_equal(g.r.pos, len);
    gvec_free(&g);
    ffbp_reader r;
    ffbp_reader_init(&r, v, len);
    assert_int_equal(fn(&r, ctx), FFBP_OK);
    assert_int_equal(r.pos, len);
}

static void check_ebad(const uint8_t *v, size_t len, decode_fn fn, void *ctx) {
    gvec g;
    gvec_init(&g, v, len);
    assert_int_equal(fn(&g.r, ctx), FFBP_EBAD);
    assert_int_equal(g.r.pos, 0);
    gvec_free(&g);
}

/* Decoder contexts. */
#define MAXN 128
typedef struct msg_ctx {
    const ffbp_item *items;
    size_t n;
    uint32_t off[MAXN], len[MAXN];
    const uint8_t *msg;
    size_t msg_len;
    ffbp_fetch_response fr;
} msg_ctx;

static int dec_message(ffbp_reader *r, void *ctx) {
    msg_ctx *c = ctx;
    return ffbp_get_message(r, c->items, c->n, c->off, c->len, &c->msg,
                            &c->msg_len);
}

static int dec_fetch(ffbp_reader *r, void *ctx) {
    msg_ctx *c = ctx;
    return ffbp_get_fetch_response(r, c->items, c->n, c->off, c->len, &c->fr);
}

static int dec_sql(ffbp_reader *r, void *ctx) {
    msg_ctx *c = ctx;
    return ffbp_get_sql_response(r, c->items, c->n, c->off, c->len, &c->fr);
}

typedef struct pkt_ctx {
    ffbp_packet pkt;
    ffbp_status_arg args[16];
} pkt_ctx;

static int dec_packet(ffbp_reader *r, void *ctx) {
    pkt_ctx *c = ctx;
    return ffbp_get_packet(r, 19, &c->pkt, c->args, 16);
}

/* Decode the next packet of a stream with `fn`, also checking all its
   truncations; advances *pos. */
static void stream_next(const uint8_t *s, size_t len, size_t *pos, decode_fn fn,
                        void *ctx) {
    ffbp_reader r;
    ffbp_reader_init(&r, s + *pos, len - *pos);
    assert_int_equal(fn(&r, ctx), FFBP_OK);
    check_vector(s + *pos, r.pos, fn, ctx);
    *pos += r.pos;
}

/* The next packet is a successful op_response; returns its object. */
static uint16_t stream_ok_response(const uint8_t *s, size_t len, size_t *pos,
                                   pkt_ctx *pc) {
    stream_next(s, len, pos, dec_packet, pc);
    assert_int_equal(pc->pkt.op, FFBP_OP_RESPONSE);
    assert_true(pc->pkt.u.response.status.n >= 1);
    assert_int_equal(pc->pkt.u.response.status.args[0].type, FFBP_ARG_GDS);
    assert_int_equal(pc->pkt.u.response.status.args[0].num, 0);
    return pc->pkt.u.response.object;
}

static int32_t be32(const uint8_t *p) {
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                     (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

/* Items of a describe side, through the 8.3 table. */
static void items_from_vars(const ffbp_var *v, size_t n, ffbp_item *items) {
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ffbp_item_from_sql(v[i].sqltype, v[i].subtype,
                                            v[i].scale, v[i].length, &items[i]),
                         FFBP_OK);
}

/* ---- the worked example (section 11) ------------------------------------ */

static const char sql_11[] = "select id, name from t where id = ?";

static const char write1_11[] =
    "00 00 00 3E 00 00 00 00"
    "00 00 00 44 00 00 00 01 FF FF FF FF 00 00 00 03 00 00 00 23"
    "73 65 6C 65 63 74 20 69 64 2C 20 6E 61 6D 65 20 66 72 6F 6D"
    "20 74 20 77 68 65 72 65 20 69 64 20 3D 20 3F 00"
    "00 00 00 1C"
    "15 1B"
    "05 07 09 0B 0C 0D 0E 10 11 12 13 19 08"
    "04 07 09 0B 0C 0D 0E 10 11 12 13 19 08"
    "00 00 FF FF";

/* The describe of 11.2 (210 bytes). */
static const char describe_11[] = "15 04 00 01 00 00 00"
                                  "1B 04 00 03 00 00 00"
                                  "05"
                                  "07 04 00 01 00 00 00"
                                  "09 04 00 01 00 00 00"
                                  "0B 04 00 F0 01 00 00"
                                  "0C 04 00 00 00 00 00"
                                  "0D 04 00 00 00 00 00"
                                  "0E 04 00 04 00 00 00"
                                  "10 00 00 11 00 00 12 00 00 13 00 00 19 00 00"
                                  "08"
                                  "04"
                                  "07 04 00 02 00 00 00"
                                  "09 04 00 01 00 00 00"
                                  "0B 04 00 F0 01 00 00"
                                  "0C 04 00 00 00 00 00"
                                  "0D 04 00 00 00 00 00"
                                  "0E 04 00 04 00 00 00"
                                  "10 02 00 49 44"
                                  "11 01 00 54"
                                  "12 06 00 53 59 53 44 42 41"
                                  "13 02 00 49 44"
                                  "19 00 00"
                                  "08"
                                  "09 04 00 02 00 00 00"
                                  "0B 04 00 C1 01 00 00"
                                  "0C 04 00 04 00 00 00"
                                  "0D 04 00 00 00 00 00"
                                  "0E 04 00 50 00 00 00"
                                  "10 04 00 4E 41 4D 45"
                                  "11 01 00 54"
                                  "12 06 00 53 59 53 44 42 41"
                                  "13 04 00 4E 41 4D 45"
                                  "19 00 00"
                                  "08"
                                  "01";

static const char write2_11[] =
    "00 00 00 3F 00 00 00 02 00 00 00 01"
    "00 00 00 0C 05 02 04 00 02 00 08 00 07 00 FF 4C"
    "00 00 00 00 00 00 00 01"
    "00 00 00 00 00 00 00 2A"
    "00 00 00 00 00 00 00 00 00 00 00 00"
    "00 00 00 41 00 00 00 02"
    "00 00 00 13 05 02 04 00 04 00 08 00 07 00 26 04 00 50 00 07 00 FF 4C 00"
    "00 00 00 00 00 00 00 C8";

static const char answers2_11[] =
    "00 00 00 09 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00"
    "00 00 00 01 00 00 00 00 00 00 00 00"
    "00 00 00 42 00 00 00 00 00 00 00 01"
    "00 00 00 00"
    "00 00 00 2A"
    "00 00 00 05 41 6C 69 63 65 00 00 00"
    "00 00 00 42 00 00 00 64 00 00 00 00";

static void test_sql_describe_items_list(void **state) {
    (void)state;
    size_t n;
    const uint8_t *items = ffbp_describe_items(&n);
    assert_hex(items, n,
               "15 1B 05 07 09 0B 0C 0D 0E 10 11 12 13 08"
               "04 07 09 0B 0C 0D 0E 10 11 12 13 08");
}

static void test_sql_worked_example_write1(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    /* The reference's example asks for relation_alias (0x19) too;
       libfastfb itself sends fbclient's list (test_sql_describe_items_list). */
    static const uint8_t items[] = {0x15, 0x1B, 0x05, 0x07, 0x09, 0x0B, 0x0C,
                                    0x0D, 0x0E, 0x10, 0x11, 0x12, 0x13, 0x19,
                                    0x08, 0x04, 0x07, 0x09, 0x0B, 0x0C, 0x0D,
                                    0x0E, 0x10, 0x11, 0x12, 0x13, 0x19, 0x08};
    size_t n = sizeof(items);
    ffbp_put_object_op(&w, FFBP_OP_ALLOCATE_STATEMENT, 0);
    ffbp_put_prepare(&w, 1, 0xFFFF, 3, sql_11, strlen(sql_11), items, n, 65535,
                     19);
    assert_int_equal(w.len, 100);
    assert_hex(w.data, w.len, write1_11);
    ffbp_writer_free(&w);
}

/* The 11.2 describe, parsed: returns it in *d with the arrays given. */
static void check_describe_11(const ffbp_sqlinfo *d) {
    assert_int_equal(d->stmt_type, 1);
    assert_int_equal(d->stmt_flags, 3);
    assert_int_equal(d->batch_fetch, -1);
    assert_int_equal(d->records[0], -1);
    assert_int_equal(d->error_item, -1);
    assert_int_equal(d->truncated, 0);
    assert_true(d->have_in && d->have_out);
    assert_int_equal(d->in_count, 1);
    assert_int_equal(d->out_count, 2);
    const ffbp_var *p = &d->in[0];
    assert_int_equal(p->sqltype, FFBP_SQL_LONG);
    assert_int_equal(p->nullable, 0);
    assert_int_equal(p->subtype, 0);
    assert_int_equal(p->scale, 0);
    assert_int_equal(p->length, 4);
    assert_view(p->field, "");
    assert_view(p->relation_alias, "");
    assert_true(p->complete);
    const ffbp_var *c = &d->out[0];
    assert_int_equal(c->sqltype, FFBP_SQL_LONG);
    assert_int_equal(c->nullable, 0);
    assert_int_equal(c->length, 4);
    assert_view(c->field, "ID");
    assert_view(c->relation, "T");
    assert_view(c->owner, "SYSDBA");
    assert_view(c->alias, "ID");
    assert_view(c->relation_alias, "");
    assert_true(c->complete);
    c = &d->out[1];
    assert_int_equal(c->sqltype, FFBP_SQL_VARYING);
    assert_int_equal(c->nullable, 1);
    assert_int_equal(c->subtype, 4);
    assert_int_equal(c->scale, 0);
    assert_int_equal(c->length, 80);
    assert_view(c->field, "NAME");
    assert_view(c->relation, "T");
    assert_view(c->owner, "SYSDBA");
    assert_view(c->alias, "NAME");
    assert_true(c->complete);
    assert_int_equal(ffbp_sqlinfo_incomplete(d, 0), 0);
    assert_int_equal(ffbp_sqlinfo_incomplete(d, 1), 0);
}

static void test_sql_worked_example_answers1(void **state) {
    (void)state;
    size_t dlen;
    uint8_t *data = test_unhex_alloc(describe_11, &dlen);
    assert_int_equal(dlen, 210);

    /* op_response (allocate, object 2) + op_response (prepare, object 4,
       data = the describe + 2 pad bytes) */
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    const uint8_t ok_status[12] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    ffbp_put_i32(&w, FFBP_OP_RESPONSE);
    ffbp_put_i16(&w, 2);
    ffbp_put_quad(&w, 0);
    ffbp_put_cstring(&w, NULL, 0);
    ffbp_put_raw(&w, ok_status, 12);
    assert_int_equal(w.len, 32);
    ffbp_put_i32(&w, FFBP_OP_RESPONSE);
    ffbp_put_i16(&w, 4);
    ffbp_put_quad(&w, 0);
    ffbp_put_cstring(&w, data, dlen);
    ffbp_put_raw(&w, ok_status, 12);
    assert_hex(w.data + 32, 20,
               "00 00 00 09 00 00 00 04 00 00 00 00"
               "00 00 00 00 00 00 00 D2");

    size_t pos = 0;
    pkt_ctx pc;
    assert_int_equal(stream_ok_response(w.data, w.len, &pos, &pc), 2);
    assert_int_equal(stream_ok_response(w.data, w.len, &pos, &pc), 4);
    assert_int_equal(pos, w.len);
    ffbp_bytes resp = pc.pkt.u.response.data;
    assert_bytes(resp.p, resp.len, data, dlen);

    ffbp_var in[2], out[4];
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, in, 2, out, 4);
    assert_int_equal(ffbp_parse_describe(resp.p, resp.len, &d), FFBP_OK);
    check_describe_11(&d);
    ffbp_writer_free(&w);
    free(data);
}

static void test_sql_worked_example_write2(void **state) {
    (void)state;
    /* The BLRs from the describe of 11.2 through the 8.3 table. */
    size_t dlen;
    uint8_t *data = test_unhex_alloc(describe_11, &dlen);
    ffbp_var in[1], out[2];
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, in, 1, out, 2);
    assert_int_equal(ffbp_parse_describe(data, dlen, &d), FFBP_OK);
    ffbp_item in_items[1], out_items[2];
    items_from_vars(in, 1, in_items);
    items_from_vars(out, 2, out_items);

    ffbp_writer blr_in, blr_out, msg, w;
    ffbp_writer_init(&blr_in, NULL);
    ffbp_writer_init(&blr_out, NULL);
    ffbp_writer_init(&msg, NULL);
    ffbp_writer_init(&w, NULL);
    assert_int_equal(ffbp_put_blr(&blr_in, in_items, 1), FFBP_OK);
    assert_hex(blr_in.data, blr_in.len, "05 02 04 00 02 00 08 00 07 00 FF 4C");
    assert_int_equal(ffbp_put_blr(&blr_out, out_items, 2), FFBP_OK);
    assert_hex(blr_out.data, blr_out.len,
               "05 02 04 00 04 00 08 00 07 00 26 04 00 50 00 07 00 FF 4C");

    size_t bm = ffbp_msg_begin(&msg, 1);
    assert_int_equal(bm, 0);
    ffbp_put_i32(&msg, 42);
    assert_hex(msg.data, msg.len, "00 00 00 00 00 00 00 2A");

    ffbp_execute e = {0};
    e.op = FFBP_OP_EXECUTE;
    e.stmt = 2;
    e.tx = 1;
    e.in_blr = blr_in.data;
    e.in_blr_len = blr_in.len;
    e.in_msg = msg.data;
    e.in_msg_len = msg.len;
    ffbp_put_execute(&w, &e, 19);
    ffbp_put_fetch(&w, 2, blr_out.data, blr_out.len, 200);
    assert_int_equal(w.len, 96);
    assert_hex(w.data, w.len, write2_11);

    /* Protocol 16-17 drop the last two int32 of the execute, 18 the last
       one, 13-15 all three. */
    const int protos[] = {13, 15, 16, 17, 18, 19, 20};
    const size_t lens[] = {44, 44, 48, 48, 52, 56, 56};
    size_t wlen;
    uint8_t *want = test_unhex_alloc(write2_11, &wlen);
    for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
        ffbp_writer_reset(&w);
        ffbp_put_execute(&w, &e, protos[i]);
        /* the tail fields are all zero here */
        assert_bytes(w.data, w.len, want, lens[i]);
    }
    free(want);
    /* With a NULL parameter the message is 01 00 00 00 and no value. */
    ffbp_writer_reset(&msg);
    bm = ffbp_msg_begin(&msg, 1);
    ffbp_msg_set_null(&msg, bm, 0);
    assert_hex(msg.data, msg.len, "01 00 00 00");

    ffbp_writer_free(&blr_in);
    ffbp_writer_free(&blr_out);
    ffbp_writer_free(&msg);
    ffbp_writer_free(&w);
    free(data);
}

static const ffbp_item items_11_out[2] = {
    {FFBP_BLR_LONG, 0, 0, 0, 0},
    {FFBP_BLR_VARYING2, 0, 80, 4, 0},
};

static void test_sql_worked_example_answers2(void **state) {
    (void)state;
    size_t len;
    uint8_t *s = test_unhex_alloc(answers2_11, &len);
    size_t pos = 0;
    pkt_ctx pc;
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 1);

    msg_ctx mc = {items_11_out, 2, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    stream_next(s, len, &pos, dec_fetch, &mc);
    assert_int_equal(mc.fr.status, 0);
    assert_int_equal(mc.fr.count, 1);
    assert_int_equal(mc.fr.msg_len, 20);
    assert_ptr_equal(mc.fr.msg, s + 44);
    assert_int_equal(mc.off[0], 4);
    assert_int_equal(mc.len[0], 4);
    assert_int_equal(be32(mc.fr.msg + mc.off[0]), 42);
    assert_int_equal(mc.off[1], 12);
    assert_int_equal(mc.len[1], 5);
    assert_memory_equal(mc.fr.msg + mc.off[1], "Alice", 5);

    stream_next(s, len, &pos, dec_fetch, &mc);
    assert_int_equal(mc.fr.status, 100);
    assert_int_equal(mc.fr.count, 0);
    assert_null(mc.fr.msg);
    assert_int_equal(mc.fr.msg_len, 0);
    assert_int_equal(pos, len);
    free(s);

    /* Had NAME been NULL. */
    s = test_unhex_alloc("00 00 00 42 00 00 00 00 00 00 00 01 02 00 00 00 00 00 00 2A",
              &len);
    pos = 0;
    stream_next(s, len, &pos, dec_fetch, &mc);
    assert_int_equal(mc.fr.count, 1);
    assert_int_equal(mc.off[0], 4);
    assert_int_equal(mc.off[1], FFBP_NULL_OFFSET);
    assert_int_equal(mc.len[1], 0);
    free(s);

    /* More rows beyond the batch: status 0, no row. */
    s = test_unhex_alloc("00 00 00 42 00 00 00 00 00 00 00 00", &len);
    pos = 0;
    stream_next(s, len, &pos, dec_fetch, &mc);
    assert_int_equal(mc.fr.status, 0);
    assert_int_equal(mc.fr.count, 0);
    free(s);
}

/* ffbp_describe renders the answers that carry messages. */
static void test_sql_describe_line_fetch(void **state) {
    (void)state;
    size_t len;
    uint8_t *s = test_unhex_alloc(answers2_11, &len);
    ffbp_packet pkt;
    memset(&pkt, 0, sizeof(pkt));
    ffbp_reader r;
    ffbp_reader_init(&r, s + 32, len - 32);
    uint32_t off[2], vlen[2];
    assert_int_equal(
        ffbp_get_fetch_response(&r, items_11_out, 2, off, vlen, &pkt.u.fetch),
        FFBP_OK);
    pkt.op = FFBP_OP_FETCH_RESPONSE;
    char line[128];
    ffbp_describe(line, sizeof(line), &pkt);
    assert_string_equal(line, "op_fetch_response status=0 count=1 msg=20");
    assert_int_equal(
        ffbp_get_fetch_response(&r, items_11_out, 2, off, vlen, &pkt.u.fetch),
        FFBP_OK);
    ffbp_describe(line, sizeof(line), &pkt);
    assert_string_equal(line, "op_fetch_response status=100 count=0 msg=0");
    pkt.op = FFBP_OP_SQL_RESPONSE;
    pkt.u.fetch.status = 0;
    ffbp_describe(line, sizeof(line), &pkt);
    assert_string_equal(line, "op_sql_response status=0 count=0 msg=0");
    free(s);
}

/* ---- every type of 9.4 ----------------------------------------------------
 */

enum value_kind {
    K_I16,  /* ffbp_put_i16(ival) */
    K_I32,  /* ffbp_put_i32(ival) */
    K_I64,  /* ffbp_put_i64(ival) */
    K_F32,  /* ffbp_put_u32(bits of (float)dval) */
    K_F64,  /* ffbp_put_i64(bits of dval) */
    K_QUAD, /* ffbp_put_quad(ival) */
    K_RAW,  /* ffbp_put_opaque(value): multi-part and DPD types */
    K_TEXT, /* ffbp_put_opaque(value), value padded to the length */
    K_VARY, /* ffbp_put_u32(k) + ffbp_put_opaque(value) */
    K_NULL  /* no value, null bit set */
};

typedef struct type_case {
    const char *name;
    int sqltype, subtype, scale, length; /* describe */
    const char *blr;                     /* type descriptor, no 07 00 */
    int kind;
    int64_t ival;
    double dval;
    const char *value; /* K_RAW, K_TEXT, K_VARY */
    const char *wire;  /* one value after the bitmap, padding included */
} type_case;

static const type_case type_cases[] = {
    {"SMALLINT", 500, 0, 0, 2, "07 00", K_I16, 12345, 0, NULL, "00 00 30 39"},
    {"SMALLINT", 500, 0, 0, 2, "07 00", K_I16, -2, 0, NULL, "FF FF FF FE"},
    {"INTEGER", 496, 0, 0, 4, "08 00", K_I32, 123456789, 0, NULL,
     "07 5B CD 15"},
    {"INTEGER", 496, 0, 0, 4, "08 00", K_I32, -1, 0, NULL, "FF FF FF FF"},
    {"BIGINT", 580, 0, 0, 8, "10 00", K_I64, 1234567890123456789LL, 0, NULL,
     "11 22 10 F4 7D E9 81 15"},
    {"BIGINT", 580, 0, 0, 8, "10 00", K_I64, INT64_MIN, 0, NULL,
     "80 00 00 00 00 00 00 00"},
    {"INT128", 32752, 0, 0, 16, "1A 00", K_RAW, 0, 0,
     "00 ED C4 E5 7E 66 9E B5 2D 3A 8E 6E 7C 9F 4B 87",
     "00 ED C4 E5 7E 66 9E B5 2D 3A 8E 6E 7C 9F 4B 87"},
    {"INT128", 32752, 0, 0, 16, "1A 00", K_RAW, 0, 0,
     "FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF FE",
     "FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF FE"},
    {"NUMERIC(4,2)", 500, 1, -2, 2, "07 FE", K_I16, 1234, 0, NULL,
     "00 00 04 D2"},
    {"NUMERIC(4,2)", 500, 1, -2, 2, "07 FE", K_I16, -1, 0, NULL, "FF FF FF FF"},
    {"DECIMAL(4,2)", 496, 2, -2, 4, "08 FE", K_I32, -1234, 0, NULL,
     "FF FF FB 2E"},
    {"DECIMAL(4,2)", 496, 2, -2, 4, "08 FE", K_I32, 9999, 0, NULL,
     "00 00 27 0F"},
    {"NUMERIC(9,3)", 496, 1, -3, 4, "08 FD", K_I32, 123456789, 0, NULL,
     "07 5B CD 15"},
    {"DECIMAL(9,3)", 496, 2, -3, 4, "08 FD", K_I32, -123456789, 0, NULL,
     "F8 A4 32 EB"},
    {"NUMERIC(18,4)", 580, 1, -4, 8, "10 FC", K_I64, 123456789012345678LL, 0,
     NULL, "01 B6 9B 4B A6 30 F3 4E"},
    {"DECIMAL(18,4)", 580, 2, -4, 8, "10 FC", K_I64, -15000, 0, NULL,
     "FF FF FF FF FF FF C5 68"},
    {"NUMERIC(19,2)", 32752, 1, -2, 16, "1A FE", K_RAW, 0, 0,
     "00 00 00 00 00 00 00 00 00 00 00 00 00 00 04 D2",
     "00 00 00 00 00 00 00 00 00 00 00 00 00 00 04 D2"},
    {"NUMERIC(38,10)", 32752, 1, -10, 16, "1A F6", K_RAW, 0, 0,
     "09 49 B0 F6 F0 02 33 13 C4 49 90 4E CC 67 45 15",
     "09 49 B0 F6 F0 02 33 13 C4 49 90 4E CC 67 45 15"},
    {"DECIMAL(38,10)", 32752, 2, -10, 16, "1A F6", K_RAW, 0, 0,
     "FF FF FF FF FF FF FF FF FF FF FF FC 81 EE 2A 00",
     "FF FF FF FF FF FF FF FF FF FF FF FC 81 EE 2A 00"},
    {"FLOAT", 482, 0, 0, 4, "0A", K_F32, 0, 1.5, NULL, "3F C0 00 00"},
    {"FLOAT", 482, 0, 0, 4, "0A", K_F32, 0, -0.1, NULL, "BD CC CC CD"},
    {"DOUBLE", 480, 0, 0, 8, "1B", K_F64, 0, -2.25, NULL,
     "C0 02 00 00 00 00 00 00"},
    {"DOUBLE", 480, 0, 0, 8, "1B", K_F64, 0, 1e300, NULL,
     "7E 37 E4 3C 88 00 75 9C"},
    {"DECFLOAT(16)", 32760, 0, 0, 8, "18", K_RAW, 0, 0,
     "22 38 00 00 00 00 00 01", "22 38 00 00 00 00 00 01"},
    {"DECFLOAT(16)", 32760, 0, 0, 8, "18", K_RAW, 0, 0,
     "A2 34 00 00 00 00 00 15", "A2 34 00 00 00 00 00 15"},
    {"DECFLOAT(16)", 32760, 0, 0, 8, "18", K_RAW, 0, 0,
     "42 E8 00 00 00 00 00 01", "42 E8 00 00 00 00 00 01"},
    {"DECFLOAT(16)", 32760, 0, 0, 8, "18", K_RAW, 0, 0,
     "7C 00 00 00 00 00 00 00", "7C 00 00 00 00 00 00 00"},
    {"DECFLOAT(16)", 32760, 0, 0, 8, "18", K_RAW, 0, 0,
     "78 00 00 00 00 00 00 00", "78 00 00 00 00 00 00 00"},
    {"DECFLOAT(34)", 32762, 0, 0, 16, "19", K_RAW, 0, 0,
     "22 08 00 00 00 00 00 00 00 00 00 00 00 00 00 01",
     "22 08 00 00 00 00 00 00 00 00 00 00 00 00 00 01"},
    {"DECFLOAT(34)", 32762, 0, 0, 16, "19", K_RAW, 0, 0,
     "A2 07 C0 00 00 00 00 00 00 00 00 00 00 00 00 15",
     "A2 07 C0 00 00 00 00 00 00 00 00 00 00 00 00 15"},
    {"DECFLOAT(34)", 32762, 0, 0, 16, "19", K_RAW, 0, 0,
     "22 53 00 00 00 00 00 00 00 00 00 00 00 00 00 01",
     "22 53 00 00 00 00 00 00 00 00 00 00 00 00 00 01"},
    {"DECFLOAT(34)", 32762, 0, 0, 16, "19", K_RAW, 0, 0,
     "7C 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
     "7C 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"},
    {"DECFLOAT(34)", 32762, 0, 0, 16, "19", K_RAW, 0, 0,
     "F8 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
     "F8 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"},
    {"DATE", 570, 0, 0, 4, "0C", K_I32, -678575, 0, NULL, "FF F5 A5 51"},
    {"DATE", 570, 0, 0, 4, "0C", K_I32, 0, 0, NULL, "00 00 00 00"},
    {"DATE", 570, 0, 0, 4, "0C", K_I32, 60369, 0, NULL, "00 00 EB D1"},
    {"DATE", 570, 0, 0, 4, "0C", K_I32, 2973483, 0, NULL, "00 2D 5F 2B"},
    {"TIME", 560, 0, 0, 4, "0D", K_I32, 495301234, 0, NULL, "1D 85 B2 72"},
    {"TIME", 560, 0, 0, 4, "0D", K_I32, 863999999, 0, NULL, "33 7F 97 FF"},
    {"TIMESTAMP", 510, 0, 0, 8, "23", K_RAW, 0, 0, "FF F5 A5 51 00 00 00 00",
     "FF F5 A5 51 00 00 00 00"},
    {"TIMESTAMP", 510, 0, 0, 8, "23", K_RAW, 0, 0, "00 2D 5F 2B 33 7F 97 FF",
     "00 2D 5F 2B 33 7F 97 FF"},
    {"TIME WITH TIME ZONE", 32756, 0, 0, 8, "1C", K_RAW, 0, 0,
     "1B 60 61 72 FF FF FE 23", "1B 60 61 72 FF FF FE 23"},
    {"TIME WITH TIME ZONE", 32756, 0, 0, 8, "1C", K_RAW, 0, 0,
     "11 2A 88 00 00 00 06 17", "11 2A 88 00 00 00 06 17"},
    {"TIME WITH TIME ZONE (EX)", 32750, 0, 0, 8, "1E", K_RAW, 0, 0,
     "1B 60 61 72 FF FF FE 23 00 00 00 3C",
     "1B 60 61 72 FF FF FE 23 00 00 00 3C"},
    {"TIME WITH TIME ZONE (EX)", 32750, 0, 0, 8, "1E", K_RAW, 0, 0,
     "11 2A 88 00 00 00 06 17 00 00 00 78",
     "11 2A 88 00 00 00 06 17 00 00 00 78"},
    {"TIMESTAMP WITH TIME ZONE", 32754, 0, 0, 12, "1D", K_RAW, 0, 0,
     "00 00 EC 4C 15 75 2A 00 FF FF FE 23",
     "00 00 EC 4C 15 75 2A 00 FF FF FE 23"},
    {"TIMESTAMP WITH TIME ZONE", 32754, 0, 0, 12, "1D", K_RAW, 0, 0,
     "00 00 EB 96 24 7A 61 00 00 00 04 73",
     "00 00 EB 96 24 7A 61 00 00 00 04 73"},
    {"TIMESTAMP WITH TIME ZONE (EX)", 32748, 0, 0, 12, "1F", K_RAW, 0, 0,
     "00 00 EC 4C 15 75 2A 00 FF FF FE 23 00 00 00 78",
     "00 00 EC 4C 15 75 2A 00 FF FF FE 23 00 00 00 78"},
    {"TIMESTAMP WITH TIME ZONE (EX)", 32748, 0, 0, 12, "1F", K_RAW, 0, 0,
     "00 00 EB 96 24 7A 61 00 00 00 04 73 FF FF FE D4",
     "00 00 EB 96 24 7A 61 00 00 00 04 73 FF FF FE D4"},
    {"BOOLEAN", 32764, 0, 0, 1, "17", K_RAW, 0, 0, "01", "01 00 00 00"},
    {"BOOLEAN", 32764, 0, 0, 1, "17", K_RAW, 0, 0, "00", "00 00 00 00"},
    {"CHAR(5) UTF8", 452, 4, 0, 20, "0F 04 00 14 00", K_TEXT, 0, 0,
     "61 C3 A9 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20",
     "61 C3 A9 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20"},
    {"VARCHAR(5) UTF8", 448, 4, 0, 20, "26 04 00 14 00", K_VARY, 0, 0,
     "61 C3 A9", "00 00 00 03 61 C3 A9 00"},
    {"CHAR(5) NONE", 452, 0, 0, 5, "0F 00 00 05 00", K_TEXT, 0, 0,
     "61 62 20 20 20", "61 62 20 20 20 00 00 00"},
    {"VARCHAR(5) NONE", 448, 0, 0, 5, "26 00 00 05 00", K_VARY, 0, 0, "61 62",
     "00 00 00 02 61 62 00 00"},
    {"CHAR(5) OCTETS", 452, 1, 0, 5, "0F 01 00 05 00", K_TEXT, 0, 0,
     "01 02 00 00 00", "01 02 00 00 00 00 00 00"},
    {"VARCHAR(5) OCTETS", 448, 1, 0, 5, "26 01 00 05 00", K_VARY, 0, 0, "01 02",
     "00 00 00 02 01 02 00 00"},
    {"CHAR(5) WIN1252 (UTF8 attachment)", 452, 4, 0, 20, "0F 04 00 14 00",
     K_TEXT, 0, 0,
     "E2 82 AC 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20",
     "E2 82 AC 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20"},
    {"CHAR(5) WIN1252 (WIN1252 attachment)", 452, 53, 0, 5, "0F 35 00 05 00",
     K_TEXT, 0, 0, "80 20 20 20 20", "80 20 20 20 20 00 00 00"},
    {"BLOB SUB_TYPE BINARY", 520, 0, 0, 8, "11 00 00 00 00", K_QUAD,
     0x0000008000000000LL, 0, NULL, "00 00 00 80 00 00 00 00"},
    {"BLOB SUB_TYPE TEXT UTF8", 520, 1, 4, 8, "11 01 00 04 00", K_QUAD,
     0x00000080000001E0LL, 0, NULL, "00 00 00 80 00 00 01 E0"},
    {"BLOB SUB_TYPE -5", 520, -5, 0, 8, "11 FB FF 00 00", K_QUAD,
     0x0000008000000000LL, 0, NULL, "00 00 00 80 00 00 00 00"},
    {"? IS NULL", 32766, 0, 0, 0, "0E 00 00", K_NULL, 0, 0, NULL, ""},
    {"? IS NULL, not NULL", 32766, 0, 0, 0, "0E 00 00", K_TEXT, 0, 0, "", ""},
    {"NUMERIC(15,2) dialect 1", 480, 0, -2, 8, "1B", K_F64, 0, 1.25, NULL,
     "3F F4 00 00 00 00 00 00"},
};

#define NCASES (sizeof(type_cases) / sizeof(type_cases[0]))

/* Append the value of `tc` to a message. */
static void put_value(ffbp_writer *w, const type_case *tc) {
    size_t n = 0;
    uint8_t *v = tc->value ? test_unhex_alloc(tc->value, &n) : NULL;
    switch (tc->kind) {
    case K_I16:
        ffbp_put_i16(w, (uint16_t)tc->ival);
        break;
    case K_I32:
        ffbp_put_i32(w, (int32_t)tc->ival);
        break;
    case K_I64:
        ffbp_put_i64(w, tc->ival);
        break;
    case K_F32: {
        float f = (float)tc->dval;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        ffbp_put_u32(w, bits);
        break;
    }
    case K_F64: {
        uint64_t bits;
        memcpy(&bits, &tc->dval, 8);
        ffbp_put_i64(w, (int64_t)bits);
        break;
    }
    case K_QUAD:
        ffbp_put_quad(w, (uint64_t)tc->ival);
        break;
    case K_RAW:
    case K_TEXT:
        ffbp_put_opaque(w, v, n);
        break;
    case K_VARY:
        ffbp_put_u32(w, (uint32_t)n);
        ffbp_put_opaque(w, v, n);
        break;
    default:
        break;
    }
    free(v);
}

static void test_sql_types_blr(void **state) {
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        const type_case *tc = &type_cases[i];
        ffbp_item it;
        assert_int_equal(ffbp_item_from_sql(tc->sqltype | 1, tc->subtype,
                                            tc->scale, tc->length, &it),
                         FFBP_OK);
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        assert_int_equal(ffbp_put_blr(&w, &it, 1), FFBP_OK);
        char want[128];
        snprintf(want, sizeof(want), "05 02 04 00 02 00 %s 07 00 FF 4C",
                 tc->blr);
        assert_hex(w.data, w.len, want);
        ffbp_item back[1];
        assert_int_equal(ffbp_parse_blr(w.data, w.len, back, 1), 1);
        assert_memory_equal(&back[0], &it, sizeof(it));
        ffbp_writer_free(&w);
    }
}

static void test_sql_types_encode_decode(void **state) {
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        const type_case *tc = &type_cases[i];
        ffbp_item it;
        assert_int_equal(ffbp_item_from_sql(tc->sqltype, tc->subtype, tc->scale,
                                            tc->length, &it),
                         FFBP_OK);
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        size_t bm = ffbp_msg_begin(&w, 1);
        if (tc->kind == K_NULL)
            ffbp_msg_set_null(&w, bm, 0);
        else
            put_value(&w, tc);
        char want[256];
        snprintf(want, sizeof(want), "%s %s",
                 tc->kind == K_NULL ? "01 00 00 00" : "00 00 00 00", tc->wire);
        assert_hex(w.data, w.len, want);

        msg_ctx mc = {&it, 1, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
        check_vector(w.data, w.len, dec_message, &mc);
        assert_int_equal(mc.msg_len, w.len);
        size_t wire_len;
        uint8_t *wire = test_unhex_alloc(tc->wire, &wire_len);
        if (tc->kind == K_NULL) {
            assert_int_equal(mc.off[0], FFBP_NULL_OFFSET);
            assert_int_equal(mc.len[0], 0);
        } else if (tc->kind == K_VARY) {
            assert_int_equal(mc.off[0], 8);
            assert_int_equal(mc.len[0], be32(wire));
            assert_memory_equal(mc.msg + 8, wire + 4, mc.len[0]);
        } else {
            assert_int_equal(mc.off[0], 4);
            assert_int_equal(mc.len[0], ffbp_item_wire_size(&it));
            assert_true(mc.len[0] <= wire_len);
            assert_int_equal(wire_len, mc.len[0] + ffbp_pad(mc.len[0]));
            assert_memory_equal(mc.msg + 4, wire, mc.len[0]);
        }
        free(wire);
        ffbp_writer_free(&w);
    }
}

/* All the sample types in one message, every third one NULL. */
static void test_sql_types_one_message(void **state) {
    (void)state;
    ffbp_item items[NCASES];
    size_t n = 0;
    for (size_t i = 0; i < NCASES; i++)
        assert_int_equal(ffbp_item_from_sql(type_cases[i].sqltype,
                                            type_cases[i].subtype,
                                            type_cases[i].scale,
                                            type_cases[i].length, &items[n++]),
                         FFBP_OK);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    size_t bm = ffbp_msg_begin(&w, n);
    assert_int_equal(w.len, ((n + 7) / 8 + 3) / 4 * 4);
    size_t expect_off[NCASES];
    for (size_t i = 0; i < n; i++) {
        if (i % 3 == 1 || type_cases[i].kind == K_NULL) {
            ffbp_msg_set_null(&w, bm, i);
            expect_off[i] = FFBP_NULL_OFFSET;
            continue;
        }
        expect_off[i] = w.len + (type_cases[i].kind == K_VARY ? 4 : 0);
        put_value(&w, &type_cases[i]);
    }
    assert_int_equal(w.len % 4, 0);

    ffbp_writer blr;
    ffbp_writer_init(&blr, NULL);
    assert_int_equal(ffbp_put_blr(&blr, items, n), FFBP_OK);
    ffbp_item back[NCASES];
    assert_int_equal(ffbp_parse_blr(blr.data, blr.len, back, NCASES), (int)n);
    assert_memory_equal(back, items, n * sizeof(items[0]));

    msg_ctx mc = {back, n, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    check_vector(w.data, w.len, dec_message, &mc);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mc.off[i], expect_off[i]);
    ffbp_writer_free(&w);
    ffbp_writer_free(&blr);
}

/* The rest of table 8.3: the types 9.4 does not sample. */
static void test_sql_item_from_sql_table(void **state) {
    (void)state;
    const struct {
        int sqltype, subtype, scale, length;
        const char *blr;
        size_t wire;
    } t[] = {
        {530, 0, 0, 8, "0B", 8},     /* SQL_D_FLOAT */
        {540, 0, 0, 8, "09 00", 8},  /* SQL_ARRAY */
        {550, 0, -3, 8, "09 FD", 8}, /* SQL_QUAD */
        {448, 0x0304, 0, 80, "26 04 03 50 00", 84},
        {520, 1, 53, 8, "11 01 00 35 00", 8},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        ffbp_item it;
        assert_int_equal(ffbp_item_from_sql(t[i].sqltype, t[i].subtype,
                                            t[i].scale, t[i].length, &it),
                         FFBP_OK);
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        assert_int_equal(ffbp_put_blr(&w, &it, 1), FFBP_OK);
        char want[128];
        snprintf(want, sizeof(want), "05 02 04 00 02 00 %s 07 00 FF 4C",
                 t[i].blr);
        assert_hex(w.data, w.len, want);
        assert_int_equal(ffbp_item_wire_size(&it), t[i].wire);
        ffbp_writer_free(&w);
    }
    /* no BLR for these */
    ffbp_item it;
    const int bad[] = {0, 1, 449 + 1000, 454, 32766 + 2, -500};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(ffbp_item_from_sql(bad[i], 0, 0, 4, &it), FFBP_EBAD);
    assert_int_equal(ffbp_item_from_sql(448, 4, 0, 70000, &it), FFBP_EBAD);
    assert_int_equal(ffbp_item_from_sql(452, 4, 0, -1, &it), FFBP_EBAD);
    assert_int_equal(ffbp_item_from_sql(496, 0, -200, 4, &it), FFBP_EBAD);
    assert_int_equal(ffbp_item_from_sql(520, 70000, 0, 8, &it), FFBP_EBAD);
}

static void test_sql_wire_sizes(void **state) {
    (void)state;
    const struct {
        uint8_t blr;
        size_t size;
    } t[] = {
        {FFBP_BLR_SHORT, 4},
        {FFBP_BLR_LONG, 4},
        {FFBP_BLR_QUAD, 8},
        {FFBP_BLR_FLOAT, 4},
        {FFBP_BLR_D_FLOAT, 8},
        {FFBP_BLR_SQL_DATE, 4},
        {FFBP_BLR_SQL_TIME, 4},
        {FFBP_BLR_INT64, 8},
        {FFBP_BLR_BLOB2, 8},
        {FFBP_BLR_BOOL, 1},
        {FFBP_BLR_DEC64, 8},
        {FFBP_BLR_DEC128, 16},
        {FFBP_BLR_INT128, 16},
        {FFBP_BLR_DOUBLE, 8},
        {FFBP_BLR_SQL_TIME_TZ, 8},
        {FFBP_BLR_TIMESTAMP_TZ, 12},
        {FFBP_BLR_EX_TIME_TZ, 12},
        {FFBP_BLR_EX_TIMESTAMP_TZ, 16},
        {FFBP_BLR_TIMESTAMP, 8},
        {40, 0},
        {0, 0},
        {255, 0},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        ffbp_item it = {t[i].blr, 0, 0, 0, 0};
        assert_int_equal(ffbp_item_wire_size(&it), t[i].size);
    }
    ffbp_item text = {FFBP_BLR_TEXT2, 0, 5, 0, 0};
    assert_int_equal(ffbp_item_wire_size(&text), 5);
    ffbp_item vary = {FFBP_BLR_VARYING, 0, 5, 0, 0};
    assert_int_equal(ffbp_item_wire_size(&vary), 9);
}

/* ---- null bitmaps (9.1) ----------------------------------------------------
 */

static const ffbp_item long_item = {FFBP_BLR_LONG, 0, 0, 0, 0};

static int bit(uint64_t mask, size_t i) { return i < 64 && ((mask >> i) & 1); }

/* n INTEGER columns, column i = i unless bit i of null_mask is set. */
static void build_longs(ffbp_writer *w, size_t n, uint64_t null_mask) {
    size_t bm = ffbp_msg_begin(w, n);
    for (size_t i = 0; i < n; i++) {
        if (bit(null_mask, i))
            ffbp_msg_set_null(w, bm, i);
        else
            ffbp_put_i32(w, (int32_t)i);
    }
}

static void test_sql_null_bitmap_9_columns(void **state) {
    (void)state;
    ffbp_item items[9];
    for (size_t i = 0; i < 9; i++)
        items[i] = long_item;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    build_longs(&w, 9, 1u << 1 | 1u << 4 | 1u << 7);
    assert_hex(w.data, w.len,
               "92 00 00 00 00 00 00 00 00 00 00 02 00 00 00 03"
               "00 00 00 05 00 00 00 06 00 00 00 08");
    msg_ctx mc = {items, 9, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    check_vector(w.data, w.len, dec_message, &mc);
    for (size_t i = 0, at = 4; i < 9; i++) {
        if (i == 1 || i == 4 || i == 7) {
            assert_int_equal(mc.off[i], FFBP_NULL_OFFSET);
            continue;
        }
        assert_int_equal(mc.off[i], at);
        assert_int_equal(be32(mc.msg + at), (int32_t)i);
        at += 4;
    }
    ffbp_writer_free(&w);
}

static void test_sql_null_bitmap_35_columns(void **state) {
    (void)state;
    ffbp_item items[35];
    for (size_t i = 0; i < 35; i++)
        items[i] = long_item;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    build_longs(&w, 35, ((uint64_t)1 << 35) - 2); /* columns 1-34 NULL */
    assert_hex(w.data, w.len, "FE FF FF FF 07 00 00 00 00 00 00 00");
    msg_ctx mc = {items, 35, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    check_vector(w.data, w.len, dec_message, &mc);
    assert_int_equal(mc.off[0], 8);
    for (size_t i = 1; i < 35; i++)
        assert_int_equal(mc.off[i], FFBP_NULL_OFFSET);
    ffbp_writer_free(&w);
}

static void test_sql_null_bitmap_sizes(void **state) {
    (void)state;
    const size_t cols[] = {1, 7, 8, 9, 31, 32, 33, 40, 64, 65};
    const size_t bytes[] = {4, 4, 4, 4, 4, 4, 8, 8, 8, 12};
    ffbp_item items[65];
    for (size_t i = 0; i < 65; i++)
        items[i] = long_item;
    for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        uint64_t mask = 0;
        for (size_t i = 2; i < cols[k]; i += 3) /* every third NULL */
            mask |= (uint64_t)1 << i;
        size_t bm = ffbp_msg_begin(&w, cols[k]);
        assert_int_equal(w.len, bytes[k]);
        ffbp_writer_reset(&w);
        build_longs(&w, cols[k], mask);
        (void)bm;
        msg_ctx mc = {items, cols[k], {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
        check_vector(w.data, w.len, dec_message, &mc);
        size_t nonnull = 0;
        for (size_t i = 0; i < cols[k]; i++) {
            int is_null = bit(mask, i);
            assert_int_equal(mc.off[i] == FFBP_NULL_OFFSET, is_null);
            nonnull += !is_null;
        }
        assert_int_equal(w.len, bytes[k] + 4 * nonnull);
        ffbp_writer_free(&w);
    }
}

/* Unused bits and padding of the bitmap are ignored on decode. */
static void test_sql_null_bitmap_unused_bits(void **state) {
    (void)state;
    ffbp_item items[2] = {long_item, long_item};
    size_t len;
    uint8_t *v = test_unhex_alloc("FD FF FF FF 00 00 00 07", &len);
    msg_ctx mc = {items, 2, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    check_vector(v, len, dec_message, &mc);
    /* FD: column 0 NULL, column 1 not; the other bits and the FF padding
       mean nothing */
    assert_int_equal(mc.off[0], FFBP_NULL_OFFSET);
    assert_int_equal(mc.off[1], 4);
    assert_int_equal(be32(mc.msg + 4), 7);
    free(v);
}

static void test_sql_message_set_null_bounds(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    size_t bm = ffbp_msg_begin(&w, 3);
    ffbp_msg_set_null(&w, bm, 40); /* beyond the writer: ignored */
    ffbp_msg_set_null(&w, bm, 2);
    assert_hex(w.data, w.len, "04 00 00 00");
    /* zero items: no bitmap */
    ffbp_writer_reset(&w);
    assert_int_equal(ffbp_msg_begin(&w, 0), 0);
    assert_int_equal(w.len, 0);
    ffbp_msg_set_null(&w, 0, 0);
    /* a large bitmap */
    assert_int_equal(ffbp_msg_begin(&w, 1000), 0);
    assert_int_equal(w.len, 128);
    for (size_t i = 0; i < w.len; i++)
        assert_int_equal(w.data[i], 0);
    ffbp_writer_free(&w);
}

/* ---- malformed messages and answers -----------------------------------------
 */

static void test_sql_message_varying_too_long(void **state) {
    (void)state;
    ffbp_item items[1] = {{FFBP_BLR_VARYING2, 0, 3, 4, 0}};
    size_t len;
    uint8_t *v = test_unhex_alloc("00 00 00 00 00 00 00 05 61 62 63 64 65 00 00 00", &len);
    msg_ctx mc = {items, 1, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    check_ebad(v, len, dec_message, &mc);
    /* ... also when the value bytes are not there yet */
    check_ebad(v, 8, dec_message, &mc);
    /* a sign-extended 16-bit length is not a length */
    v[4] = v[5] = 0xFF;
    v[7] = 0x02;
    check_ebad(v, len, dec_message, &mc);
    /* exactly the maximum is fine */
    v[4] = v[5] = 0;
    v[7] = 0x03;
    check_vector(v, 12, dec_message, &mc);
    assert_int_equal(mc.len[0], 3);
    free(v);
}

static void test_sql_message_unknown_blr(void **state) {
    (void)state;
    ffbp_item items[2] = {long_item, {40, 0, 5, 0, 0}}; /* blr_cstring */
    size_t len;
    uint8_t *v = test_unhex_alloc("00 00 00 00 00 00 00 01 61 62 63 64 65 00 00 00", &len);
    msg_ctx mc = {items, 2, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    check_ebad(v, len, dec_message, &mc);
    /* NULL: never looked at */
    v[0] = 2;
    gvec g;
    gvec_init(&g, v, 8);
    assert_int_equal(dec_message(&g.r, &mc), FFBP_OK);
    assert_int_equal(g.r.pos, 8);
    gvec_free(&g);
    free(v);
}

static void test_sql_fetch_response_malformed(void **state) {
    (void)state;
    msg_ctx mc = {items_11_out, 2, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    size_t len;
    /* another op */
    uint8_t *v = test_unhex_alloc("00 00 00 09 00 00 00 00 00 00 00 00", &len);
    check_ebad(v, len, dec_fetch, &mc);
    check_ebad(v, 4, dec_fetch, &mc); /* decided on the op alone */
    free(v);
    /* op_sql_response is not op_fetch_response, and the reverse */
    v = test_unhex_alloc("00 00 00 4E 00 00 00 00", &len);
    check_ebad(v, len, dec_fetch, &mc);
    free(v);
    v = test_unhex_alloc("00 00 00 42 00 00 00 00 00 00 00 00", &len);
    check_ebad(v, len, dec_sql, &mc);
    free(v);
    /* count 2 */
    v = test_unhex_alloc("00 00 00 42 00 00 00 00 00 00 00 02"
              "00 00 00 00 00 00 00 01 00 00 00 00",
              &len);
    check_ebad(v, len, dec_fetch, &mc);
    free(v);
    /* a row whose VARYING is over its maximum */
    v = test_unhex_alloc("00 00 00 42 00 00 00 00 00 00 00 01 00 00 00 00"
              "00 00 00 2A 00 00 00 51",
              &len);
    check_ebad(v, len, dec_fetch, &mc);
    free(v);
    v = test_unhex_alloc("00 00 00 4E 00 00 00 01 00 00 00 00 00 00 00 2A 00 00 00 51",
              &len);
    check_ebad(v, len, dec_sql, &mc);
    free(v);
}

static void test_sql_sql_response(void **state) {
    (void)state;
    msg_ctx mc = {items_11_out, 2, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    size_t len;
    uint8_t *v = test_unhex_alloc("00 00 00 4E 00 00 00 01 00 00 00 00 00 00 00 2A"
                       "00 00 00 05 41 6C 69 63 65 00 00 00",
                       &len);
    check_vector(v, len, dec_sql, &mc);
    assert_int_equal(mc.fr.status, 0);
    assert_int_equal(mc.fr.count, 1);
    assert_non_null(mc.fr.msg);
    assert_int_equal(mc.fr.msg_len, 20);
    assert_int_equal(mc.off[1], 12);
    assert_int_equal(mc.len[1], 5);
    free(v);
    v = test_unhex_alloc("00 00 00 4E 00 00 00 00", &len);
    check_vector(v, len, dec_sql, &mc);
    assert_int_equal(mc.fr.count, 0);
    assert_null(mc.fr.msg);
    free(v);
    /* the count as a sign-extended short */
    v = test_unhex_alloc("00 00 00 4E FF FF 00 00", &len);
    check_vector(v, len, dec_sql, &mc);
    free(v);
}

/* off / len / msg outputs are optional. */
static void test_sql_message_null_outputs(void **state) {
    (void)state;
    size_t len;
    uint8_t *v = test_unhex_alloc("00 00 00 00 00 00 00 2A 00 00 00 05 41 6C 69 63 65 "
                       "00 00 00",
                       &len);
    ffbp_reader r;
    ffbp_reader_init(&r, v, len);
    assert_int_equal(
        ffbp_get_message(&r, items_11_out, 2, NULL, NULL, NULL, NULL), FFBP_OK);
    assert_int_equal(r.pos, len);
    free(v);
}

/* ---- BLR
 * ---------------------------------------------------------------------- */

static void test_sql_blr_empty_and_limits(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    assert_int_equal(ffbp_put_blr(&w, NULL, 0), FFBP_OK);
    assert_int_equal(w.len, 0);
    ffbp_item bad[2] = {long_item, {40, 0, 5, 0, 0}};
    assert_int_equal(ffbp_put_blr(&w, bad, 2), FFBP_EBAD);
    assert_int_equal(w.len, 0); /* nothing appended */
    static ffbp_item many[32768];
    for (size_t i = 0; i < 32768; i++)
        many[i] = long_item;
    assert_int_equal(ffbp_put_blr(&w, many, 32768), FFBP_EBAD);
    assert_int_equal(w.len, 0);
    assert_int_equal(ffbp_put_blr(&w, many, 32767), FFBP_OK);
    assert_int_equal(w.len, 6 + 32767 * 4 + 2);
    assert_hex(w.data, 6, "05 02 04 00 FE FF");
    assert_int_equal(ffbp_parse_blr(w.data, w.len, NULL, 0), 32767);
    ffbp_writer_free(&w);
    assert_int_equal(ffbp_parse_blr(NULL, 0, NULL, 0), 0);
}

static void test_sql_blr_parse_recorded(void **state) {
    (void)state;
    /* fb5-inline-blobs header: ID blr_long, T blr_blob2 1/4, B blr_blob2 0/0 */
    size_t len;
    uint8_t *b = test_unhex_alloc("05 02 04 00 06 00 08 00 07 00 11 01 00 04 00 07 00 "
                       "11 00 00 00 00 07 00 FF 4C",
                       &len);
    ffbp_item it[3];
    assert_int_equal(ffbp_parse_blr(b, len, it, 3), 3);
    assert_int_equal(it[0].blr, FFBP_BLR_LONG);
    assert_int_equal(it[1].blr, FFBP_BLR_BLOB2);
    assert_int_equal(it[1].subtype, 1);
    assert_int_equal(it[1].texttype, 4);
    assert_int_equal(it[2].subtype, 0);
    /* capacity 1: counted, one stored */
    ffbp_item one[1];
    assert_int_equal(ffbp_parse_blr(b, len, one, 1), 3);
    assert_int_equal(one[0].blr, FFBP_BLR_LONG);
    free(b);
    /* fb5-batch header */
    b = test_unhex_alloc("05 02 04 00 08 00 08 00 07 00 26 04 00 50 00 07 00 08 00 07 00 "
              "11 00 00 00 00 07 00 FF 4C",
              &len);
    ffbp_item four[4];
    assert_int_equal(ffbp_parse_blr(b, len, four, 4), 4);
    assert_int_equal(four[1].blr, FFBP_BLR_VARYING2);
    assert_int_equal(four[1].length, 80);
    free(b);
    /* blr_version4 and plain text / varying */
    b = test_unhex_alloc("04 02 04 00 04 00 0E 05 00 07 00 25 0A 00 07 00 FF 4C", &len);
    ffbp_item two[2];
    assert_int_equal(ffbp_parse_blr(b, len, two, 2), 2);
    assert_int_equal(two[0].blr, FFBP_BLR_TEXT);
    assert_int_equal(two[0].length, 5);
    assert_int_equal(two[1].blr, FFBP_BLR_VARYING);
    assert_int_equal(two[1].length, 10);
    free(b);
}

static void test_sql_blr_parse_malformed(void **state) {
    (void)state;
    const char *bad[] = {
        "06 02 04 00 02 00 08 00 07 00 FF 4C",    /* version 6 */
        "05 03 04 00 02 00 08 00 07 00 FF 4C",    /* not blr_begin */
        "05 02 05 00 02 00 08 00 07 00 FF 4C",    /* not blr_message */
        "05 02 04 00 03 00 08 00 07 00 FF 4C",    /* odd count */
        "05 02 04 00 02 00 08 00 07 01 FF 4C",    /* null indicator 07 01 */
        "05 02 04 00 02 00 08 00 08 00 FF 4C",    /* null indicator 08 00 */
        "05 02 04 00 02 00 28 05 00 07 00 FF 4C", /* blr_cstring */
        "05 02 04 00 02 00 08 00 07 00 FF 4C 00", /* trailing byte */
        "05 02 04 00 02 00 08 00 07 00 FF 4D",    /* not blr_eoc */
        "05 02 04 00 04 00 08 00 07 00 FF 4C",    /* count too high */
        "05 02 04 00 00 00 08 00 07 00 FF 4C",    /* count too low */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t len;
        uint8_t *b = test_unhex_alloc(bad[i], &len);
        ffbp_item it[4];
        assert_int_equal(ffbp_parse_blr(b, len, it, 4), FFBP_EBAD);
        free(b);
    }
    /* every truncation of a good BLR is malformed, never an over-read */
    size_t len;
    uint8_t *b = test_unhex_alloc("05 02 04 00 08 00 08 00 07 00 26 04 00 50 00 07 00 "
                       "08 00 07 00 11 00 00 00 00 07 00 FF 4C",
                       &len);
    for (size_t cut = 1; cut < len; cut++) {
        guard_buf g;
        const uint8_t *p = guard_copy(&g, b, cut);
        ffbp_item it[4];
        assert_int_equal(ffbp_parse_blr(p, cut, it, 4), FFBP_EBAD);
        guard_release(&g);
    }
    free(b);
}

/* ---- request encoders
 * ---------------------------------------------------------- */

static void test_sql_put_free_statement(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_free_statement(&w, 2, FFBP_DSQL_CLOSE);
    assert_hex(w.data, w.len, "00 00 00 43 00 00 00 02 00 00 00 01");
    ffbp_writer_reset(&w);
    ffbp_put_free_statement(&w, 0xFFFF, FFBP_DSQL_DROP);
    assert_hex(w.data, w.len, "00 00 00 43 FF FF FF FF 00 00 00 02");
    ffbp_writer_free(&w);
}

static void test_sql_put_transaction(void **state) {
    (void)state;
    const uint8_t tpb[] = {3, 2, 9, 6};
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_transaction(&w, 0, tpb, sizeof(tpb));
    assert_hex(w.data, w.len,
               "00 00 00 1D 00 00 00 00 00 00 00 04 03 02 09 06");
    ffbp_writer_reset(&w);
    ffbp_put_transaction(&w, 0, NULL, 0); /* server defaults */
    assert_hex(w.data, w.len, "00 00 00 1D 00 00 00 00 00 00 00 00");
    ffbp_writer_free(&w);
}

static void test_sql_put_prepare_protocol_20(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_prepare(&w, 1, 2, 3, "select 1", 8, NULL, 0, 100, 20);
    assert_hex(w.data, w.len,
               "00 00 00 44 00 00 00 01 00 00 00 02 00 00 00 03"
               "00 00 00 08 73 65 6C 65 63 74 20 31 00 00 00 00"
               "00 00 00 64 00 00 00 00");
    ffbp_writer_reset(&w);
    ffbp_put_prepare(&w, 1, 2, 3, "select 1", 8, NULL, 0, 100, 19);
    assert_int_equal(w.len, 36);
    ffbp_writer_free(&w);
}

static void test_sql_put_exec_immediate(void **state) {
    (void)state;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_exec_immediate(&w, 1, 3, "commit", 6, 19);
    assert_hex(w.data, w.len,
               "00 00 00 40 00 00 00 01 00 00 00 00 00 00 00 03"
               "00 00 00 06 63 6F 6D 6D 69 74 00 00"
               "00 00 00 00 00 00 00 00");
    ffbp_writer_reset(&w);
    ffbp_put_exec_immediate(&w, 0xFFFF, 3, "commit", 6, 20);
    assert_hex(w.data, w.len,
               "00 00 00 40 FF FF FF FF 00 00 00 00 00 00 00 03"
               "00 00 00 06 63 6F 6D 6D 69 74 00 00"
               "00 00 00 00 00 00 00 00 00 00 00 00");
    ffbp_writer_free(&w);
}

static void test_sql_put_execute2(void **state) {
    (void)state;
    const uint8_t in_blr[] = {5, 2, 4, 0, 2, 0, 8, 0, 7, 0, 0xFF, 0x4C};
    const uint8_t out_blr[] = {5,    2, 4, 0,    4, 0, 8, 0,    7,   0,
                               0x26, 4, 0, 0x50, 0, 7, 0, 0xFF, 0x4C};
    const uint8_t msg[] = {0, 0, 0, 0, 0, 0, 0, 0x2A};
    ffbp_execute e = {0};
    e.op = FFBP_OP_EXECUTE2;
    e.stmt = 2;
    e.tx = 1;
    e.in_blr = in_blr;
    e.in_blr_len = sizeof(in_blr);
    e.in_msg = msg;
    e.in_msg_len = sizeof(msg);
    e.out_blr = out_blr;
    e.out_blr_len = sizeof(out_blr);
    e.timeout_ms = 1000;
    e.cursor_flags = 0;
    e.inline_blob_size = 65535;
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_execute(&w, &e, 19);
    assert_hex(w.data, w.len,
               "00 00 00 4C 00 00 00 02 00 00 00 01"
               "00 00 00 0C 05 02 04 00 02 00 08 00 07 00 FF 4C"
               "00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 2A"
               "00 00 00 13 05 02 04 00 04 00 08 00 07 00 26 04 00 50 00 "
               "07 00 FF 4C 00"
               "00 00 00 00"
               "00 00 03 E8 00 00 00 00 00 00 FF FF");
    /* no input message, protocol 15 */
    e.in_blr = NULL;
    e.in_blr_len = 0;
    e.in_msg = NULL;
    ffbp_writer_reset(&w);
    ffbp_put_execute(&w, &e, 15);
    assert_hex(w.data, w.len,
               "00 00 00 4C 00 00 00 02 00 00 00 01 00 00 00 00"
               "00 00 00 00 00 00 00 00"
               "00 00 00 13 05 02 04 00 04 00 08 00 07 00 26 04 00 50 00 "
               "07 00 FF 4C 00"
               "00 00 00 00");
    ffbp_writer_free(&w);
}

static void test_sql_continue_items(void **state) {
    (void)state;
    uint8_t out[32];
    size_t n = ffbp_describe_continue_items(out, 1, 2);
    assert_hex(out, n, "14 02 02 00 04 07 09 0B 0C 0D 0E 10 11 12 13 08");
    n = ffbp_describe_continue_items(out, 0, 0x1234);
    assert_hex(out, n, "14 02 34 12 05 07 09 0B 0C 0D 0E 10 11 12 13 08");
    n = ffbp_describe_continue_items(out, 1, 0x10000);
    assert_hex(out, n,
               "14 04 00 00 01 00 04 07 09 0B 0C 0D 0E 10 11 12 13 08");
    assert_true(n <= 32);
}

/* ---- recorded vectors (tests/data/fb5, Firebird 5.0.4, protocol 19) ----- */

typedef struct conv_vec {
    const char *file;
    int line;
    const char *hex;
} conv_vec;

/* fb5-errors.conv line 88 (C, 84 bytes): op_allocate_statement;
   op_prepare_statement */
static const char errors_88_C[] =
    "0000003E000000000000004400000000FFFFFFFF000000030000001253454C45"
    "432049442046524F4D205445525200000000001A151B0507090B0C0D0E101112"
    "13080407090B0C0D0E101112130800000000FB80";

/* fb5-errors.conv line 91 (S, 128 bytes): op_response to
   op_allocate_statement; op_response to op_prepare_statement */
static const char errors_91_S[] =
    "0000000900000001000000000000000000000000000000010000000000000000"
    "000000090000000000000000000000000000000000000001140000F900000001"
    "1400007400000004FFFFFF98000000011400013A000000040000000100000004"
    "00000001000000011400003E000000020000000553454C454300000000000000";

/* fb5-errors.conv line 94 (C, 100 bytes): op_prepare_statement */
static const char errors_94_C[] =
    "0000004400000000000000010000000300000029494E5345525420494E544F20"
    "54455252202849442C204E414D45292056414C55455320283F2C203F29000000"
    "0000001A151B0507090B0C0D0E10111213080407090B0C0D0E10111213080000"
    "0000FB80";

/* fb5-errors.conv line 96 (S, 160 bytes): op_response to
   op_prepare_statement */
static const char errors_96_S[] =
    "000000090000000000000000000000000000007F150400020000001B04000200"
    "00000507040002000000090400010000000B0400F00100000C0400000000000D"
    "0400000000000E04000400000010000011000012000013000008090400020000"
    "000B0400C10100000C0400040000000D0400000000000E040050000000100000"
    "1100001200001300000804070400000000000100000000010000000000000000";

/* fb5-errors.conv line 98 (C, 104 bytes): op_transaction; op_execute;
   op_rollback */
static const char errors_98_C[] =
    "0000001D0000000000000004030209060000003F00000001FFFFFFFF00000013"
    "0502040004000800070026040050000700FF4C00000000000000000100000000"
    "00000001000000096475706C696361746500000000000000000000000000FFFF"
    "0000001FFFFFFFFF";

/* fb5-errors.conv line 102 (S, 152 bytes): op_response to op_transaction;
   op_response to op_execute; op_response to op_rollback */
static const char errors_102_S[] =
    "0000000900000002000000000000000000000000000000010000000000000000"
    "0000000900000002000000000000000000000000000000011400015900000002"
    "00000007494E5445475F380000000002000000045445525200000001140002F0"
    "000000020000000A2822494422203D2031290000000000000000000900000000"
    "000000000000000000000000000000010000000000000000";

/* fb5-scroll.conv line 58 (C, 104 bytes): op_allocate_statement;
   op_prepare_statement */
static const char scroll_58_C[] =
    "0000003E000000000000004400000000FFFFFFFF000000030000002853454C45"
    "43542049442C204E414D452046524F4D20545343524F4C4C204F524445522042"
    "592049440000001A151B0507090B0C0D0E10111213080407090B0C0D0E101112"
    "130800000000FB80";

/* fb5-scroll.conv line 61 (S, 232 bytes): op_response to
   op_allocate_statement; op_response to op_prepare_statement */
static const char scroll_61_S[] =
    "0000000900000001000000000000000000000000000000010000000000000000"
    "00000009000000040000000000000000000000A5150400010000001B04000300"
    "000005070400000000000407040002000000090400010000000B0400F0010000"
    "0C0400000000000D0400000000000E0400040000001002004944110700545343"
    "524F4C4C120600535953444241130200494408090400020000000B0400C10100"
    "000C0400040000000D0400000000000E0400500000001004004E414D45110700"
    "545343524F4C4C1206005359534442411304004E414D45080100000000000001"
    "0000000000000000";

/* fb5-scroll.conv line 64 (C, 100 bytes): op_transaction; op_execute;
   op_fetch_scroll */
static const char scroll_64_C[] =
    "0000001D0000000000000004030209060000003F00000001FFFFFFFF00000000"
    "000000000000000000000000000000010000FFFF000000700000000100000013"
    "0502040004000800070026040050000700FF4C00000000000000000100000000"
    "00000000";

/* fb5-scroll.conv line 68 (S, 108 bytes): op_response to op_transaction;
   op_response to op_execute; op_fetch_response; op_fetch_response */
static const char scroll_68_S[] =
    "0000000900000002000000000000000000000000000000010000000000000000"
    "0000000900000002000000000000000000000000000000010000000000000000"
    "000000420000000000000001000000000000000100000005726F772031000000"
    "000000420000000000000000";

/* fb5-scroll.conv line 79 (S, 108 bytes): op_fetch_response;
   op_fetch_response; op_fetch_response; op_fetch_response */
static const char scroll_79_S[] =
    "000000420000000000000001000000000000000200000005726F772032000000"
    "000000420000000000000001000000000000000300000005726F772033000000"
    "000000420000000000000001000000000000000400000005726F772034000000"
    "000000420000000000000000";

/* fb5-scroll.conv line 137 (C, 20 bytes): op_free_statement; op_commit */
static const char scroll_137_C[] = "0000004300000001000000010000001E00000002";

/* fb5-inline-blobs.conv line 74 (C, 104 bytes): op_allocate_statement;
   op_prepare_statement */
static const char inline_blobs_74_C[] =
    "0000003E000000000000004400000000FFFFFFFF000000030000002653454C45"
    "43542049442C20542C20422046524F4D2054424C4F42204F5244455220425920"
    "494400000000001A151B0507090B0C0D0E10111213080407090B0C0D0E101112"
    "130800000000FB80";

/* fb5-inline-blobs.conv line 77 (S, 280 bytes): op_response to
   op_allocate_statement; op_response to op_prepare_statement */
static const char inline_blobs_77_S[] =
    "0000000900000001000000000000000000000000000000010000000000000000"
    "00000009000000040000000000000000000000D8150400010000001B04000300"
    "000005070400000000000407040003000000090400010000000B0400F0010000"
    "0C0400000000000D0400000000000E040004000000100200494411050054424C"
    "4F42120600535953444241130200494408090400020000000B0400090200000C"
    "0400010000000D0400040000000E0400080000001001005411050054424C4F42"
    "1206005359534442411301005408090400030000000B0400090200000C040000"
    "0000000D0400000000000E0400080000001001004211050054424C4F42120600"
    "535953444241130100420801000000010000000000000000";

/* fb5-inline-blobs.conv line 80 (C, 108 bytes): op_transaction; op_execute;
   op_fetch; op_commit */
static const char inline_blobs_80_C[] =
    "0000001D0000000000000004030209060000003F00000001FFFFFFFF00000000"
    "000000000000000000000000000000000000FFFF00000041000000010000001A"
    "050204000600080007001101000400070011000000000700FF4C000000000000"
    "000000640000001EFFFFFFFF";

/* fb5-inline-blobs.conv line 101 (C, 104 bytes): op_allocate_statement;
   op_prepare_statement */
static const char inline_blobs_101_C[] =
    "0000003E000000000000004400000000FFFFFFFF000000030000002753454C45"
    "43542049442C20542C20422046524F4D2054424C4F4220574845524520494420"
    "3D203F000000001A151B0507090B0C0D0E10111213080407090B0C0D0E101112"
    "130800000000FB80";

/* fb5-inline-blobs.conv line 104 (S, 328 bytes): op_response to
   op_allocate_statement; op_response to op_prepare_statement */
static const char inline_blobs_104_S[] =
    "0000000900000002000000000000000000000000000000010000000000000000"
    "0000000900000004000000000000000000000108150400010000001B04000300"
    "00000507040001000000090400010000000B0400F00100000C0400000000000D"
    "0400000000000E04000400000010000011000012000013000008040704000300"
    "0000090400010000000B0400F00100000C0400000000000D0400000000000E04"
    "0004000000100200494411050054424C4F421206005359534442411302004944"
    "08090400020000000B0400090200000C0400010000000D0400040000000E0400"
    "080000001001005411050054424C4F4212060053595344424113010054080904"
    "00030000000B0400090200000C0400000000000D0400000000000E0400080000"
    "001001004211050054424C4F4212060053595344424113010042080100000001"
    "0000000000000000";

/* fb5-inline-blobs.conv line 107 (C, 120 bytes): op_transaction; op_execute;
   op_fetch */
static const char inline_blobs_107_C[] =
    "0000001D0000000000000004030209060000003F00000002FFFFFFFF0000000C"
    "05020400020008000700FF4C0000000000000001000000000000000500000000"
    "000000000000FFFF00000041000000020000001A050204000600080007001101"
    "000400070011000000000700FF4C00000000000000000064";

/* fb5-inline-blobs.conv line 111 (S, 112 bytes): op_response to
   op_transaction; op_response to op_execute; op_fetch_response;
   op_fetch_response */
static const char inline_blobs_111_S[] =
    "0000000900000003000000000000000000000000000000010000000000000000"
    "0000000900000003000000000000000000000000000000010000000000000000"
    "000000420000000000000001000000000000000500000080000001E600000080"
    "000001E7000000420000006400000000";

/* fb5-inline-blobs.conv line 153 (S, 272 bytes): op_response to
   op_transaction; op_response to op_execute; op_fetch_response;
   op_fetch_response; op_fetch_response; op_fetch_response;
   op_fetch_response; op_fetch_response; op_response to op_commit */
static const char inline_blobs_153_S[] =
    "0000000900000003000000000000000000000000000000010000000000000000"
    "0000000900000003000000000000000000000000000000010000000000000000"
    "0000004200000000000000010600000000000001000000420000000000000001"
    "000000000000000200000080000001E000000080000001E10000004200000000"
    "00000001000000000000000300000080000001E200000080000001E300000042"
    "0000000000000001000000000000000400000080000001E400000080000001E5"
    "000000420000000000000001000000000000000500000080000001E600000080"
    "000001E700000042000000640000000000000009000000000000000000000000"
    "00000000000000010000000000000000";

/* fb5-batch.conv line 66 (C, 120 bytes): op_allocate_statement;
   op_prepare_statement */
static const char batch_66_C[] =
    "0000003E000000000000004400000000FFFFFFFF0000000300000037494E5345"
    "525420494E544F20544241544348202849442C204E414D452C204E2C20422920"
    "56414C55455320283F2C203F2C203F2C203F29000000001A151B0507090B0C0D"
    "0E10111213080407090B0C0D0E101112130800000000FB80";

/* fb5-batch.conv line 69 (S, 288 bytes): op_response to
   op_allocate_statement; op_response to op_prepare_statement */
static const char batch_69_S[] =
    "0000000900000001000000000000000000000000000000010000000000000000"
    "00000009000000000000000000000000000000DF150400020000001B04000200"
    "00000507040004000000090400010000000B0400F00100000C0400000000000D"
    "0400000000000E04000400000010000011000012000013000008090400020000"
    "000B0400C10100000C0400040000000D0400000000000E040050000000100000"
    "11000012000013000008090400030000000B0400F10100000C0400000000000D"
    "0400000000000E04000400000010000011000012000013000008090400040000"
    "000B0400090200000C0400000000000D0400000000000E040008000000100000"
    "1100001200001300000804070400000000000100000000010000000000000000";

static const conv_vec conv_vecs[] = {
    {"fb5-errors.conv", 88, errors_88_C},
    {"fb5-errors.conv", 91, errors_91_S},
    {"fb5-errors.conv", 94, errors_94_C},
    {"fb5-errors.conv", 96, errors_96_S},
    {"fb5-errors.conv", 98, errors_98_C},
    {"fb5-errors.conv", 102, errors_102_S},
    {"fb5-scroll.conv", 58, scroll_58_C},
    {"fb5-scroll.conv", 61, scroll_61_S},
    {"fb5-scroll.conv", 64, scroll_64_C},
    {"fb5-scroll.conv", 68, scroll_68_S},
    {"fb5-scroll.conv", 79, scroll_79_S},
    {"fb5-scroll.conv", 137, scroll_137_C},
    {"fb5-inline-blobs.conv", 74, inline_blobs_74_C},
    {"fb5-inline-blobs.conv", 77, inline_blobs_77_S},
    {"fb5-inline-blobs.conv", 80, inline_blobs_80_C},
    {"fb5-inline-blobs.conv", 101, inline_blobs_101_C},
    {"fb5-inline-blobs.conv", 104, inline_blobs_104_S},
    {"fb5-inline-blobs.conv", 107, inline_blobs_107_C},
    {"fb5-inline-blobs.conv", 111, inline_blobs_111_S},
    {"fb5-inline-blobs.conv", 153, inline_blobs_153_S},
    {"fb5-batch.conv", 66, batch_66_C},
    {"fb5-batch.conv", 69, batch_69_S},
};

/* ---- the recorded conversations -------------------------------------------
 */

static uint8_t *conv_bytes(const char *hex, size_t *len) {
    return test_unhex_alloc(hex, len);
}

/* fbclient's item list and buffer, as the recordings used them. */
static const char fbclient_items[] =
    "15 1B 05 07 09 0B 0C 0D 0E 10 11 12 13 08 04 07 09 0B 0C 0D 0E 10 11 12 "
    "13 08";

static void test_sql_conv_prepare_requests(void **state) {
    (void)state;
    const struct {
        const char *vec;
        int allocate;
        uint16_t stmt;
        const char *sql;
    } t[] = {
        {errors_88_C, 1, 0xFFFF, "SELEC ID FROM TERR"},
        {errors_94_C, 0, 1, "INSERT INTO TERR (ID, NAME) VALUES (?, ?)"},
        {scroll_58_C, 1, 0xFFFF, "SELECT ID, NAME FROM TSCROLL ORDER BY ID"},
        {inline_blobs_74_C, 1, 0xFFFF,
         "SELECT ID, T, B FROM TBLOB ORDER BY ID"},
        {inline_blobs_101_C, 1, 0xFFFF,
         "SELECT ID, T, B FROM TBLOB WHERE ID = ?"},
        {batch_66_C, 1, 0xFFFF,
         "INSERT INTO TBATCH (ID, NAME, N, B) VALUES (?, ?, ?, ?)"},
    };
    size_t ilen;
    uint8_t *items = test_unhex_alloc(fbclient_items, &ilen);
    assert_int_equal(ilen, 26);
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        if (t[i].allocate)
            ffbp_put_object_op(&w, FFBP_OP_ALLOCATE_STATEMENT, 0);
        ffbp_put_prepare(&w, 0, t[i].stmt, 3, t[i].sql, strlen(t[i].sql), items,
                         ilen, 64384, 19);
        size_t len;
        uint8_t *want = conv_bytes(t[i].vec, &len);
        assert_bytes(w.data, w.len, want, len);
        free(want);
        ffbp_writer_free(&w);
    }
    free(items);
}

/* Parse the prepare answer(s) of a recorded S line (optionally behind the
   deferred allocate answer) into d; returns the packet buffer (caller
   frees: the views point into it). */
static uint8_t *conv_describe(const char *vec, int allocate, ffbp_sqlinfo *d,
                              uint16_t *prep_object) {
    size_t len, pos = 0;
    uint8_t *s = conv_bytes(vec, &len);
    pkt_ctx pc;
    if (allocate)
        assert_int_not_equal(stream_ok_response(s, len, &pos, &pc), 0);
    *prep_object = stream_ok_response(s, len, &pos, &pc);
    assert_int_equal(pos, len);
    ffbp_bytes data = pc.pkt.u.response.data;
    assert_int_equal(ffbp_parse_describe(data.p, data.len, d), FFBP_OK);
    assert_int_equal(d->truncated, 0);
    assert_int_equal(ffbp_sqlinfo_incomplete(d, 0), 0);
    assert_int_equal(ffbp_sqlinfo_incomplete(d, 1), 0);
    return s;
}

static void check_var(const ffbp_var *v, int sqltype, int nullable, int subtype,
                      int scale, int length, const char *field,
                      const char *relation) {
    assert_int_equal(v->sqltype, sqltype);
    assert_int_equal(v->nullable, nullable);
    assert_int_equal(v->subtype, subtype);
    assert_int_equal(v->scale, scale);
    assert_int_equal(v->length, length);
    assert_view(v->field, field);
    assert_view(v->relation, relation);
    assert_view(v->owner, *relation ? "SYSDBA" : "");
    assert_view(v->alias, field);
    assert_int_equal(v->relation_alias.len, 0); /* not asked for */
    assert_true(v->complete);
}

static void check_blr(const ffbp_var *v, size_t n, const char *hex) {
    ffbp_item items[8];
    assert_true(n <= 8);
    items_from_vars(v, n, items);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    assert_int_equal(ffbp_put_blr(&w, items, n), FFBP_OK);
    assert_hex(w.data, w.len, hex);
    ffbp_writer_free(&w);
}

static const char blr_long_varchar80[] =
    "05 02 04 00 04 00 08 00 07 00 26 04 00 50 00 07 00 FF 4C";
static const char blr_tblob[] =
    "05 02 04 00 06 00 08 00 07 00 11 01 00 04 00 07 00 11 00 00 00 00 07 00 "
    "FF 4C";
static const char blr_long[] = "05 02 04 00 02 00 08 00 07 00 FF 4C";
static const char blr_tbatch[] =
    "05 02 04 00 08 00 08 00 07 00 26 04 00 50 00 07 00 08 00 07 00 11 00 00 "
    "00 00 07 00 FF 4C";

static void test_sql_conv_describe_insert(void **state) {
    (void)state;
    ffbp_var in[4], out[4];
    ffbp_sqlinfo d;
    uint16_t obj;
    ffbp_sqlinfo_init(&d, in, 4, out, 4);
    uint8_t *s = conv_describe(errors_96_S, 0, &d, &obj);
    assert_int_equal(obj, 0); /* INSERT: no STMT_DEFER_EXECUTE */
    assert_int_equal(d.stmt_type, 2);
    assert_int_equal(d.stmt_flags, 2);
    assert_true(d.have_in && d.have_out);
    assert_int_equal(d.in_count, 2);
    assert_int_equal(d.out_count, 0);
    check_var(&in[0], FFBP_SQL_LONG, 0, 0, 0, 4, "", "");
    check_var(&in[1], FFBP_SQL_VARYING, 1, 4, 0, 80, "", "");
    check_blr(in, 2, blr_long_varchar80);
    free(s);
}

static void test_sql_conv_describe_scroll(void **state) {
    (void)state;
    ffbp_var in[4], out[4];
    ffbp_sqlinfo d;
    uint16_t obj;
    ffbp_sqlinfo_init(&d, in, 4, out, 4);
    uint8_t *s = conv_describe(scroll_61_S, 1, &d, &obj);
    assert_int_equal(obj, 4); /* SELECT: STMT_DEFER_EXECUTE */
    assert_int_equal(d.stmt_type, 1);
    assert_int_equal(d.stmt_flags, 3);
    assert_int_equal(d.in_count, 0);
    assert_int_equal(d.out_count, 2);
    check_var(&out[0], FFBP_SQL_LONG, 0, 0, 0, 4, "ID", "TSCROLL");
    check_var(&out[1], FFBP_SQL_VARYING, 1, 4, 0, 80, "NAME", "TSCROLL");
    check_blr(out, 2, blr_long_varchar80);
    free(s);
}

static void test_sql_conv_describe_blobs(void **state) {
    (void)state;
    ffbp_var in[4], out[4];
    ffbp_sqlinfo d;
    uint16_t obj;
    ffbp_sqlinfo_init(&d, in, 4, out, 4);
    uint8_t *s = conv_describe(inline_blobs_77_S, 1, &d, &obj);
    assert_int_equal(d.stmt_type, 1);
    assert_int_equal(d.in_count, 0);
    assert_int_equal(d.out_count, 3);
    check_var(&out[0], FFBP_SQL_LONG, 0, 0, 0, 4, "ID", "TBLOB");
    check_var(&out[1], FFBP_SQL_BLOB, 1, 1, 4, 8, "T", "TBLOB");
    check_var(&out[2], FFBP_SQL_BLOB, 1, 0, 0, 8, "B", "TBLOB");
    check_blr(out, 3, blr_tblob);
    free(s);

    ffbp_sqlinfo_init(&d, in, 4, out, 4);
    s = conv_describe(inline_blobs_104_S, 1, &d, &obj);
    assert_int_equal(d.in_count, 1);
    assert_int_equal(d.out_count, 3);
    check_var(&in[0], FFBP_SQL_LONG, 0, 0, 0, 4, "", "");
    check_var(&out[1], FFBP_SQL_BLOB, 1, 1, 4, 8, "T", "TBLOB");
    check_blr(in, 1, blr_long);
    check_blr(out, 3, blr_tblob);
    free(s);
}

static void test_sql_conv_describe_batch(void **state) {
    (void)state;
    ffbp_var in[4], out[4];
    ffbp_sqlinfo d;
    uint16_t obj;
    ffbp_sqlinfo_init(&d, in, 4, out, 4);
    uint8_t *s = conv_describe(batch_69_S, 1, &d, &obj);
    assert_int_equal(d.stmt_type, 2);
    assert_int_equal(d.stmt_flags, 2);
    assert_int_equal(d.in_count, 4);
    assert_int_equal(d.out_count, 0);
    check_var(&in[0], FFBP_SQL_LONG, 0, 0, 0, 4, "", "");
    check_var(&in[1], FFBP_SQL_VARYING, 1, 4, 0, 80, "", "");
    check_var(&in[2], FFBP_SQL_LONG, 1, 0, 0, 4, "", "");
    check_var(&in[3], FFBP_SQL_BLOB, 1, 0, 0, 8, "", "");
    check_blr(in, 4, blr_tbatch);
    free(s);
}

/* The failed prepare: no describe at all. */
static void test_sql_conv_prepare_error(void **state) {
    (void)state;
    size_t len, pos = 0;
    uint8_t *s = conv_bytes(errors_91_S, &len);
    pkt_ctx pc;
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 1);
    stream_next(s, len, &pos, dec_packet, &pc);
    assert_int_equal(pos, len);
    assert_int_equal(pc.pkt.op, FFBP_OP_RESPONSE);
    assert_int_equal(pc.pkt.u.response.status.args[0].num, 335544569);
    assert_int_equal(pc.pkt.u.response.data.len, 0);
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, NULL, 0, NULL, 0);
    assert_int_equal(ffbp_parse_describe(pc.pkt.u.response.data.p, 0, &d),
                     FFBP_OK);
    assert_int_equal(d.stmt_type, 0);
    assert_int_equal(d.stmt_flags, -1);
    assert_false(d.have_in || d.have_out);
    free(s);
}

static void test_sql_conv_execute_requests(void **state) {
    (void)state;
    const uint8_t tpb[] = {3, 2, 9, 6};
    size_t len;
    uint8_t *want, *blr;
    ffbp_writer w, msg;
    ffbp_writer_init(&w, NULL);
    ffbp_writer_init(&msg, NULL);
    ffbp_execute e = {0};
    e.op = FFBP_OP_EXECUTE;
    e.tx = 0xFFFF;
    e.inline_blob_size = 65535;

    /* fb5-errors: op_transaction + op_execute(1, "duplicate") +
       op_rollback(FFFF) */
    size_t blr_len;
    blr = test_unhex_alloc(blr_long_varchar80, &blr_len);
    ffbp_msg_begin(&msg, 2);
    ffbp_put_i32(&msg, 1);
    ffbp_put_u32(&msg, 9);
    ffbp_put_opaque(&msg, "duplicate", 9);
    ffbp_put_transaction(&w, 0, tpb, sizeof(tpb));
    e.stmt = 1;
    e.in_blr = blr;
    e.in_blr_len = blr_len;
    e.in_msg = msg.data;
    e.in_msg_len = msg.len;
    ffbp_put_execute(&w, &e, 19);
    ffbp_put_object_op(&w, FFBP_OP_ROLLBACK, 0xFFFF);
    want = conv_bytes(errors_98_C, &len);
    assert_bytes(w.data, w.len, want, len);
    free(want);
    free(blr);

    /* fb5-scroll: op_transaction + op_execute(cursor flags 1), then
       op_fetch_scroll (112) */
    ffbp_writer_reset(&w);
    ffbp_put_transaction(&w, 0, tpb, sizeof(tpb));
    e.in_blr = NULL;
    e.in_blr_len = 0;
    e.in_msg = NULL;
    e.cursor_flags = 1;
    ffbp_put_execute(&w, &e, 19);
    e.cursor_flags = 0;
    want = conv_bytes(scroll_64_C, &len);
    assert_true(len > w.len + 4);
    assert_bytes(w.data, w.len, want, w.len);
    assert_int_equal(be32(want + w.len), FFBP_OP_FETCH_SCROLL);
    free(want);

    /* fb5-inline-blobs: op_transaction + op_execute + op_fetch(100) +
       op_commit(FFFF) */
    ffbp_writer_reset(&w);
    blr = test_unhex_alloc(blr_tblob, &blr_len);
    ffbp_put_transaction(&w, 0, tpb, sizeof(tpb));
    ffbp_put_execute(&w, &e, 19);
    ffbp_put_fetch(&w, 1, blr, blr_len, 100);
    ffbp_put_object_op(&w, FFBP_OP_COMMIT, 0xFFFF);
    want = conv_bytes(inline_blobs_80_C, &len);
    assert_bytes(w.data, w.len, want, len);
    free(want);

    /* ... and with the parameter ID = 5 on statement 2 */
    size_t in_len;
    uint8_t *in_blr = test_unhex_alloc(blr_long, &in_len);
    ffbp_writer_reset(&w);
    ffbp_writer_reset(&msg);
    ffbp_msg_begin(&msg, 1);
    ffbp_put_i32(&msg, 5);
    ffbp_put_transaction(&w, 0, tpb, sizeof(tpb));
    e.stmt = 2;
    e.in_blr = in_blr;
    e.in_blr_len = in_len;
    e.in_msg = msg.data;
    e.in_msg_len = msg.len;
    ffbp_put_execute(&w, &e, 19);
    ffbp_put_fetch(&w, 2, blr, blr_len, 100);
    want = conv_bytes(inline_blobs_107_C, &len);
    assert_bytes(w.data, w.len, want, len);
    free(want);
    free(in_blr);
    free(blr);

    /* fb5-scroll: op_free_statement(DSQL_close) + op_commit */
    ffbp_writer_reset(&w);
    ffbp_put_free_statement(&w, 1, FFBP_DSQL_CLOSE);
    ffbp_put_object_op(&w, FFBP_OP_COMMIT, 2);
    want = conv_bytes(scroll_137_C, &len);
    assert_bytes(w.data, w.len, want, len);
    free(want);

    ffbp_writer_free(&w);
    ffbp_writer_free(&msg);
}

static const ffbp_item items_tblob[3] = {
    {FFBP_BLR_LONG, 0, 0, 0, 0},
    {FFBP_BLR_BLOB2, 0, 0, 4, 1},
    {FFBP_BLR_BLOB2, 0, 0, 0, 0},
};

static void expect_row_scroll(msg_ctx *mc, int id) {
    char name[16];
    snprintf(name, sizeof(name), "row %d", id);
    assert_int_equal(mc->fr.status, 0);
    assert_int_equal(mc->fr.count, 1);
    assert_int_equal(be32(mc->fr.msg + mc->off[0]), id);
    assert_int_equal(mc->len[1], strlen(name));
    assert_memory_equal(mc->fr.msg + mc->off[1], name, mc->len[1]);
}

static void test_sql_conv_fetch_scroll_rows(void **state) {
    (void)state;
    size_t len, pos = 0;
    uint8_t *s = conv_bytes(scroll_68_S, &len);
    pkt_ctx pc;
    msg_ctx mc = {items_11_out, 2, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 2);
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 2);
    stream_next(s, len, &pos, dec_fetch, &mc);
    expect_row_scroll(&mc, 1);
    stream_next(s, len, &pos, dec_fetch, &mc);
    assert_int_equal(mc.fr.status, 0);
    assert_int_equal(mc.fr.count, 0);
    assert_int_equal(pos, len);
    free(s);

    pos = 0;
    s = conv_bytes(scroll_79_S, &len);
    for (int id = 2; id <= 4; id++) {
        stream_next(s, len, &pos, dec_fetch, &mc);
        expect_row_scroll(&mc, id);
    }
    stream_next(s, len, &pos, dec_fetch, &mc);
    assert_int_equal(mc.fr.count, 0);
    assert_int_equal(pos, len);
    free(s);
}

static void expect_row_blob(msg_ctx *mc, int id, int null_blobs) {
    assert_int_equal(mc->fr.status, 0);
    assert_int_equal(mc->fr.count, 1);
    assert_int_equal(be32(mc->fr.msg + mc->off[0]), id);
    for (int k = 1; k <= 2; k++) {
        if (null_blobs) {
            assert_int_equal(mc->off[k], FFBP_NULL_OFFSET);
            continue;
        }
        assert_int_equal(mc->len[k], 8);
        const uint8_t *q = mc->fr.msg + mc->off[k];
        assert_int_equal(be32(q), 0x80);
        /* ids 0x1E0 .. 0x1E7: two per row from row 2 */
        assert_int_equal(be32(q + 4), 0x1E0 + 2 * (id - 2) + (k - 1));
    }
}

static void test_sql_conv_fetch_blob_rows(void **state) {
    (void)state;
    size_t len, pos = 0;
    uint8_t *s = conv_bytes(inline_blobs_111_S, &len);
    pkt_ctx pc;
    msg_ctx mc = {items_tblob, 3, {0}, {0}, NULL, 0, {0, 0, NULL, 0}};
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 3);
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 3);
    stream_next(s, len, &pos, dec_fetch, &mc);
    expect_row_blob(&mc, 5, 0);
    stream_next(s, len, &pos, dec_fetch, &mc);
    assert_int_equal(mc.fr.status, 100);
    assert_int_equal(mc.fr.count, 0);
    assert_int_equal(pos, len);
    free(s);

    /* inline blob size 0: the five rows without op_inline_blob packets */
    pos = 0;
    s = conv_bytes(inline_blobs_153_S, &len);
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 3);
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 3);
    for (int id = 1; id <= 5; id++) {
        stream_next(s, len, &pos, dec_fetch, &mc);
        expect_row_blob(&mc, id, id == 1);
    }
    stream_next(s, len, &pos, dec_fetch, &mc);
    assert_int_equal(mc.fr.status, 100);
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 0); /* commit */
    assert_int_equal(pos, len);
    free(s);
}

/* The execute error answer carries the transaction handle. */
static void test_sql_conv_execute_error(void **state) {
    (void)state;
    size_t len, pos = 0;
    uint8_t *s = conv_bytes(errors_102_S, &len);
    pkt_ctx pc;
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 2);
    stream_next(s, len, &pos, dec_packet, &pc);
    assert_int_equal(pc.pkt.u.response.object, 2);
    assert_int_equal(pc.pkt.u.response.status.args[0].num, 335544665);
    assert_int_equal(stream_ok_response(s, len, &pos, &pc), 0);
    assert_int_equal(pos, len);
    free(s);
}

/* The embedded vectors are the lines of the .conv files in tests/data/fb5
   (or $FFB_TEST_DATA); a missing file fails the test. */
static FILE *open_conv(const char *name) {
    char path[1024];
    const char *dir = getenv("FFB_TEST_DATA");
    snprintf(path, sizeof(path), "%s/%s", dir ? dir : FFB_TEST_DATA_DIR,
             name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    return f;
}

static void test_sql_conv_vectors_match_files(void **state) {
    (void)state;
    size_t checked = 0;
    char *line = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < sizeof(conv_vecs) / sizeof(conv_vecs[0]); i++) {
        FILE *f = open_conv(conv_vecs[i].file);
        int no = 0;
        ssize_t got = -1;
        while (no < conv_vecs[i].line && (got = getline(&line, &cap, f)) >= 0)
            no++;
        fclose(f);
        assert_int_equal(no, conv_vecs[i].line);
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = '\0';
        assert_true(got > 2);
        assert_true(line[0] == 'C' || line[0] == 'S');
        assert_string_equal(line + 2, conv_vecs[i].hex);
        checked++;
    }
    free(line);
    assert_true(checked > 0);
}

/* ---- the describe parser --------------------------------------------------
 */

/* Parse hex in front of a guard page, then once more from a heap copy
   that outlives the call (*keep, the caller frees it) so the views in `d`
   stay valid; both parses must agree. */
static int parse_hex(const char *hex, ffbp_sqlinfo *d, uint8_t **keep) {
    size_t len;
    uint8_t *b = test_unhex_alloc(hex, &len);
    guard_buf g;
    const uint8_t *p = guard_copy(&g, b, len);
    int rc = ffbp_parse_describe(p, len, d);
    guard_release(&g);
    assert_int_equal(ffbp_parse_describe(b, len, d), rc);
    *keep = b;
    return rc;
}

static void test_sql_describe_truncated_and_continued(void **state) {
    (void)state;
    ffbp_var in[2], out[3];
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, in, 2, out, 3);
    uint8_t *b1, *b2;
    assert_int_equal(parse_hex("15 04 00 01 00 00 00"
                               "1B 04 00 03 00 00 00"
                               "05 07 04 00 00 00 00 00"
                               "04 07 04 00 03 00 00 00"
                               "09 04 00 01 00 00 00 0B 04 00 F0 01 00 00"
                               "0E 04 00 04 00 00 00 10 02 00 49 44 08"
                               "09 04 00 02 00 00 00 0B 04 00 C1 01 00 00"
                               "0C 04 00 04 00 00 00"
                               "02",
                               &d, &b1),
                     FFBP_OK);
    assert_int_equal(d.truncated, 1);
    assert_int_equal(d.stmt_type, 1);
    assert_int_equal(d.in_count, 0);
    assert_int_equal(d.out_count, 3);
    assert_true(out[0].complete);
    assert_view(out[0].field, "ID");
    assert_false(out[1].complete);
    assert_int_equal(out[1].sqltype, FFBP_SQL_VARYING);
    assert_false(out[2].complete);
    assert_int_equal(ffbp_sqlinfo_incomplete(&d, 0), 0);
    uint32_t start = ffbp_sqlinfo_incomplete(&d, 1);
    assert_int_equal(start, 2);

    uint8_t items[32];
    size_t n = ffbp_describe_continue_items(items, 1, start);
    assert_hex(items, n, "14 02 02 00 04 07 09 0B 0C 0D 0E 10 11 12 13 08");

    /* the answer to op_info_sql with those items */
    assert_int_equal(parse_hex("04 07 04 00 03 00 00 00"
                               "09 04 00 02 00 00 00 0B 04 00 C1 01 00 00"
                               "0C 04 00 04 00 00 00 0E 04 00 50 00 00 00"
                               "10 04 00 4E 41 4D 45 19 01 00 41 08"
                               "09 04 00 03 00 00 00 0B 04 00 09 02 00 00"
                               "0C 04 00 01 00 00 00 0D 04 00 04 00 00 00"
                               "0E 04 00 08 00 00 00 10 01 00 54 19 00 00 08"
                               "01",
                               &d, &b2),
                     FFBP_OK);
    assert_int_equal(d.truncated, 0);
    assert_int_equal(d.stmt_type, 1); /* kept from the first answer */
    assert_int_equal(d.stmt_flags, 3);
    assert_int_equal(d.out_count, 3);
    assert_true(out[0].complete && out[1].complete && out[2].complete);
    assert_view(out[0].field, "ID"); /* still a view into the first answer */
    assert_int_equal(out[1].sqltype, FFBP_SQL_VARYING);
    assert_int_equal(out[1].nullable, 1);
    assert_int_equal(out[1].length, 80);
    assert_view(out[1].field, "NAME");
    assert_view(out[1].relation_alias, "A");
    assert_int_equal(out[2].sqltype, FFBP_SQL_BLOB);
    assert_int_equal(out[2].subtype, 1);
    assert_int_equal(out[2].scale, 4);
    assert_view(out[2].field, "T");
    assert_int_equal(ffbp_sqlinfo_incomplete(&d, 1), 0);
    free(b1);
    free(b2);
}

/* isc_info_truncated inside the per-variable items, right after a
   describe_end, and at the top level after a plan. */
static void test_sql_describe_truncated_places(void **state) {
    (void)state;
    ffbp_var out[2];
    ffbp_sqlinfo d;
    uint8_t *b;
    ffbp_sqlinfo_init(&d, NULL, 0, out, 2);
    assert_int_equal(parse_hex("04 07 04 00 02 00 00 00"
                               "09 04 00 01 00 00 00 08 02",
                               &d, &b),
                     FFBP_OK);
    assert_int_equal(d.truncated, 1);
    assert_true(out[0].complete);
    assert_int_equal(ffbp_sqlinfo_incomplete(&d, 1), 2);
    free(b);

    ffbp_sqlinfo_init(&d, NULL, 0, out, 2);
    assert_int_equal(
        parse_hex("16 0A 00 50 4C 41 4E 20 28 54 20 2E 2E 02", &d, &b),
        FFBP_OK);
    assert_int_equal(d.truncated, 1);
    assert_view(d.plan, "PLAN (T ..");
    free(b);
}

static void test_sql_describe_capacity(void **state) {
    (void)state;
    size_t len;
    uint8_t *data = test_unhex_alloc(describe_11, &len);
    ffbp_var out1[1];
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, NULL, 0, out1, 1);
    assert_int_equal(ffbp_parse_describe(data, len, &d), FFBP_OK);
    assert_int_equal(d.in_count, 1);
    assert_int_equal(d.out_count, 2);
    assert_view(out1[0].field, "ID");
    assert_int_equal(ffbp_sqlinfo_incomplete(&d, 0), 1);
    assert_int_equal(ffbp_sqlinfo_incomplete(&d, 1), 2);
    /* the caller grows its arrays and parses the same buffer again */
    ffbp_var in[1], out[2];
    ffbp_sqlinfo_init(&d, in, d.in_count, out, d.out_count);
    assert_int_equal(ffbp_parse_describe(data, len, &d), FFBP_OK);
    check_describe_11(&d);
    free(data);
}

static void test_sql_describe_other_items(void **state) {
    (void)state;
    ffbp_var in[1], out[1];
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, in, 1, out, 1);
    uint8_t *b;
    assert_int_equal(
        parse_hex("15 04 00 03 00 00 00" /* stmt_type update */
                  "18 04 00 01 00 00 00" /* batch_fetch */
                  "16 10 00 50 4C 41 4E 20 28 54 20 4E 41 54 55 52 41 4C 29"
                  "17 1D 00 0D 04 00 05 00 00 00 0E 04 00 01 00 00 00"
                  "0F 04 00 02 00 00 00 10 04 00 00 00 00 00 01"
                  "03 05 00 1E 51 01 00 14" /* isc_infunk for 30 */
                  "1C 04 00 10 27 00 00"    /* unknown: skipped */
                  "08"                      /* stray describe_end */
                  "05 06 04 00 01 00 00 00" /* num_variables */
                  "04 07 04 00 01 00 00 00"
                  "09 04 00 01 00 00 00 0A 00 00 0B 04 00 F0 01 00 00"
                  "0F 04 00 01 00 00 00"    /* null_ind */
                  "03 05 00 20 51 01 00 14" /* second error */
                  "08 01 FF FF",            /* bytes after end */
                  &d, &b),
        FFBP_OK);
    assert_int_equal(d.stmt_type, 3);
    assert_int_equal(d.batch_fetch, 1);
    assert_int_equal(d.stmt_flags, -1);
    assert_view(d.plan, "PLAN (T NATURAL)");
    assert_int_equal(d.records[0], 5);
    assert_int_equal(d.records[1], 1);
    assert_int_equal(d.records[2], 2);
    assert_int_equal(d.records[3], 0);
    assert_int_equal(d.error_item, 0x1E);
    assert_int_equal(d.error_code, 335544657);
    assert_int_equal(d.in_count, 1);
    assert_false(d.have_in);
    assert_true(d.have_out);
    assert_int_equal(out[0].sqltype, FFBP_SQL_LONG);
    assert_int_equal(out[0].nullable, 1);
    assert_true(out[0].complete);
    assert_int_equal(d.truncated, 0);
    free(b);
}

static void test_sql_describe_records_after_execute(void **state) {
    (void)state;
    /* op_info_sql(isc_info_sql_records) after an UPDATE of 3 rows */
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, NULL, 0, NULL, 0);
    uint8_t *b;
    assert_int_equal(parse_hex("17 1D 00 0F 04 00 03 00 00 00 10 04 00 00 00 "
                               "00 00 0D 04 00 03 00 00 00 0E 04 00 00 00 00 "
                               "00 01 01",
                               &d, &b),
                     FFBP_OK);
    assert_int_equal(d.records[0], 3);
    assert_int_equal(d.records[1], 0);
    assert_int_equal(d.records[2], 3);
    assert_int_equal(d.records[3], 0);
    free(b);
}

static void test_sql_describe_malformed(void **state) {
    (void)state;
    const char *bad[] = {
        "04 07 04 00 01 00 00 00 09 04 00 00 00 00 00 08 01", /* seq 0 */
        "04 07 04 00 01 00 00 00 09 04 00 02 00 00 00 08 01", /* seq > count */
        "04 07 04 00 00 00 00 00 09 04 00 01 00 00 00 08 01", /* count 0 */
        "04 07 04 00 01 00 00 00 09 00 00 08 01",             /* seq empty */
        "07 04 00 01 00 00 00 01",                /* describe_vars, no side */
        "04 07 04 00 FF FF FF FF 01",             /* negative count */
        "15 04 00 01 00 00",                      /* value past the end */
        "15 04",                                  /* length past the end */
        "15",                                     /* no length */
        "04 07 04 00 01 00 00 00 09 04 00 01 00", /* per-variable item */
        "04 07 04 00 01 00 00 00 09",             /* per-variable length */
        "17 04 00 0D 04 00 05 01",                /* nested records item */
        "17 02 00 0D 04",                         /* nested length */
        "05 06 04 00 FE FF FF FF 01",             /* negative num_variables */
        "06 04 00 01 00 00 00 01",                /* num_variables, no side */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ffbp_var in[2], out[2];
        ffbp_sqlinfo d;
        ffbp_sqlinfo_init(&d, in, 2, out, 2);
        uint8_t *b;
        assert_int_equal(parse_hex(bad[i], &d, &b), FFBP_EBAD);
        free(b);
    }
}

static void test_sql_describe_markers(void **state) {
    (void)state;
    ffbp_sqlinfo d;
    ffbp_sqlinfo_init(&d, NULL, 0, NULL, 0);
    assert_int_equal(ffbp_parse_describe(NULL, 0, &d), FFBP_OK);
    uint8_t *b;
    assert_int_equal(parse_hex("01", &d, &b), FFBP_OK);
    assert_int_equal(d.truncated, 0);
    free(b);
    assert_int_equal(parse_hex("02", &d, &b), FFBP_OK);
    assert_int_equal(d.truncated, 1);
    free(b);
    /* bind / select markers alone */
    assert_int_equal(parse_hex("05 04 08 01", &d, &b), FFBP_OK);
    assert_int_equal(d.truncated, 0);
    assert_false(d.have_in || d.have_out);
    free(b);
    /* sequence numbers of up to 8 bytes, and beyond the capacity */
    ffbp_var out[1];
    ffbp_sqlinfo_init(&d, NULL, 0, out, 1);
    assert_int_equal(parse_hex("04 07 02 00 02 00 09 01 00 02 0B 02 00 F0 01 08"
                               "09 08 00 01 00 00 00 00 00 00 00 0B 02 00 C1 "
                               "01 08 01",
                               &d, &b),
                     FFBP_OK);
    assert_int_equal(d.out_count, 2);
    assert_int_equal(out[0].sqltype, FFBP_SQL_VARYING);
    assert_true(out[0].complete);
    assert_int_equal(ffbp_sqlinfo_incomplete(&d, 1), 2);
    free(b);
}

/* Every prefix of a real describe parses cleanly or is malformed - never an
   over-read (guard page). */
static void every_prefix(const uint8_t *p, size_t len) {
    for (size_t cut = 0; cut <= len; cut++) {
        guard_buf g;
        const uint8_t *q = guard_copy(&g, p, cut);
        ffbp_var in[4], out[4];
        ffbp_sqlinfo d;
        ffbp_sqlinfo_init(&d, in, 4, out, 4);
        int rc = ffbp_parse_describe(q, cut, &d);
        assert_true(rc == FFBP_OK || rc == FFBP_EBAD);
        if (cut == len) {
            assert_int_equal(rc, FFBP_OK);
            assert_int_equal(ffbp_sqlinfo_incomplete(&d, 0), 0);
            assert_int_equal(ffbp_sqlinfo_incomplete(&d, 1), 0);
        }
        guard_release(&g);
    }
}

static void test_sql_describe_every_prefix(void **state) {
    (void)state;
    size_t len;
    uint8_t *data = test_unhex_alloc(describe_11, &len);
    every_prefix(data, len);
    free(data);
    const char *vecs[] = {errors_96_S, scroll_61_S, inline_blobs_77_S,
                          inline_blobs_104_S, batch_69_S};
    for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) {
        size_t slen, pos = 0;
        uint8_t *s = test_unhex_alloc(vecs[i], &slen);
        ffbp_reader r;
        ffbp_packet pkt;
        ffbp_status_arg args[4];
        memset(&pkt, 0, sizeof(pkt));
        ffbp_reader_init(&r, s, slen);
        while (ffbp_get_packet(&r, 19, &pkt, args, 4) == FFBP_OK)
            pos = r.pos;
        assert_int_equal(pos, slen);
        every_prefix(pkt.u.response.data.p, pkt.u.response.data.len);
        free(s);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sql_describe_items_list),
        cmocka_unit_test(test_sql_worked_example_write1),
        cmocka_unit_test(test_sql_worked_example_answers1),
        cmocka_unit_test(test_sql_worked_example_write2),
        cmocka_unit_test(test_sql_worked_example_answers2),
        cmocka_unit_test(test_sql_describe_line_fetch),
        cmocka_unit_test(test_sql_types_blr),
        cmocka_unit_test(test_sql_types_encode_decode),
        cmocka_unit_test(test_sql_types_one_message),
        cmocka_unit_test(test_sql_item_from_sql_table),
        cmocka_unit_test(test_sql_wire_sizes),
        cmocka_unit_test(test_sql_null_bitmap_9_columns),
        cmocka_unit_test(test_sql_null_bitmap_35_columns),
        cmocka_unit_test(test_sql_null_bitmap_sizes),
        cmocka_unit_test(test_sql_null_bitmap_unused_bits),
        cmocka_unit_test(test_sql_message_set_null_bounds),
        cmocka_unit_test(test_sql_message_varying_too_long),
        cmocka_unit_test(test_sql_message_unknown_blr),
        cmocka_unit_test(test_sql_message_null_outputs),
        cmocka_unit_test(test_sql_fetch_response_malformed),
        cmocka_unit_test(test_sql_sql_response),
        cmocka_unit_test(test_sql_blr_empty_and_limits),
        cmocka_unit_test(test_sql_blr_parse_recorded),
        cmocka_unit_test(test_sql_blr_parse_malformed),
        cmocka_unit_test(test_sql_put_free_statement),
        cmocka_unit_test(test_sql_put_transaction),
        cmocka_unit_test(test_sql_put_prepare_protocol_20),
        cmocka_unit_test(test_sql_put_exec_immediate),
        cmocka_unit_test(test_sql_put_execute2),
        cmocka_unit_test(test_sql_continue_items),
        cmocka_unit_test(test_sql_conv_prepare_requests),
        cmocka_unit_test(test_sql_conv_describe_insert),
        cmocka_unit_test(test_sql_conv_describe_scroll),
        cmocka_unit_test(test_sql_conv_describe_blobs),
        cmocka_unit_test(test_sql_conv_describe_batch),
        cmocka_unit_test(test_sql_conv_prepare_error),
        cmocka_unit_test(test_sql_conv_execute_requests),
        cmocka_unit_test(test_sql_conv_fetch_scroll_rows),
        cmocka_unit_test(test_sql_conv_fetch_blob_rows),
        cmocka_unit_test(test_sql_conv_execute_error),
        cmocka_unit_test(test_sql_conv_vectors_match_files),
        cmocka_unit_test(test_sql_describe_truncated_and_continued),
        cmocka_unit_test(test_sql_describe_truncated_places),
        cmocka_unit_test(test_sql_describe_capacity),
        cmocka_unit_test(test_sql_describe_other_items),
        cmocka_unit_test(test_sql_describe_records_after_execute),
        cmocka_unit_test(test_sql_describe_malformed),
        cmocka_unit_test(test_sql_describe_markers),
        cmocka_unit_test(test_sql_describe_every_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
