/*
 * Simple requests: those answered by one op_response (op_exec_immediate2:
 * an op_sql_response first) - ping, database and transaction info,
 * execute immediate, detach and drop. Each is queued with a completion
 * (ffb__simple, on a blocking call's stack or in a queued result); one
 * that names a transaction whose handle is still owed waits in the hold
 * queue. Nothing here waits: the blocking calls are in lib/conn.c and
 * lib/tx.c.
 */
#include <stdio.h>
#include <string.h>

#include "lib/internal.h"


static int simple_reply(ffb_conn *conn, const ffbp_packet *pkt,
                        ffb__pending *p) {
    ffb__simple *s = p->ctx;
    ffb__sync *sync = s->sync;
    if (pkt->op == FFBP_OP_SQL_RESPONSE && s->kind == FFB__SIMPLE_IMMEDIATE2 &&
        !s->sql_seen) {
        /* No output was asked for: no row may come. */
        s->sql_seen = 1;
        if (pkt->u.fetch.count != 0)
            return ffb__error_set(&conn->err, FFB_E_PROTO,
                                  "a row in the answer to op_exec_immediate2 "
                                  "that asked for none");
        return 1; /* the op_response follows */
    }
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return FFB_E_PROTO;
    s->object = r->object;
    int failed = 0;
    if (ffb__status_is_error(&r->status)) {
        uint32_t gds = ffb__status_first_gds(&r->status);
        if (!(s->allow_drdb && gds == FFBP_GDS_DRDB_COMPLETED_WITH_ERRS)) {
            ffb__sync_fail_status(conn, sync, FFB_E_SERVER, &r->status, NULL);
            failed = 1;
        }
    }
    if (!failed) {
        size_t n = r->data.len;
        if (n > s->data_size)
            n = s->data_size;
        if (n)
            memcpy(s->data, r->data.p, n);
        s->data_len = n;
        if (s->kind == FFB__SIMPLE_IMMEDIATE ||
            s->kind == FFB__SIMPLE_IMMEDIATE2)
            ffb__cache_invalidate(conn); /* it may have been DDL */
    }
    if (s->kind == FFB__SIMPLE_DETACH &&
        (!failed || p->op == FFBP_OP_DETACH ||
         p->op == FFBP_OP_SERVICE_DETACH)) {
        /* The attachment is gone (a refused detach closes it too; a
           refused drop leaves it attached): the end of the stream that
           follows is expected, and nothing may be sent any more. */
        conn->detaching = 1;
        conn->state = FFB__ST_CLOSED;
        ffb__inline_clear(conn);
    }
    if (sync)
        sync->done = 1;
    return 0;
}

int ffb__queue_simple(ffb_conn *conn, ffbp_writer *w, int32_t op,
                      ffb__simple *s) {
    int rc = ffb__queue_free(conn, w, 1);
    if (rc < 0)
        return rc;
    ffb__pending *p = ffb__engine_expect(conn, op, simple_reply, s);
    if (!p)
        return ffb__engine_fail(conn, FFB_E_NOMEM);
    if (op == FFBP_OP_EXEC_IMMEDIATE || op == FFBP_OP_EXEC_IMMEDIATE2) {
        static uint32_t none[1];
        p->off = p->len = none; /* its op_sql_response carries no row */
    }
    return 0;
}

/* Encode a request naming transaction handle `th`. */
static int simple_tx_send(ffb_conn *conn, uint16_t th, int32_t op,
                          const ffbp_writer *a, const ffbp_writer *b,
                          const ffbp_writer *c, uint32_t out_size,
                          ffb__simple *s) {
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    if (op == FFBP_OP_INFO_TRANSACTION) {
        ffbp_put_info(&w, op, th, 0, a->data, a->len, out_size);
    } else if (b->len) {
        op = FFBP_OP_EXEC_IMMEDIATE2;
        s->kind = FFB__SIMPLE_IMMEDIATE2;
        ffbp_put_exec_immediate2(&w, th, (uint16_t)conn->dialect,
                                 (const char *)a->data, a->len, b->data,
                                 b->len, c->data, c->len, conn->protocol);
    } else {
        s->kind = FFB__SIMPLE_IMMEDIATE;
        ffbp_put_exec_immediate(&w, th, (uint16_t)conn->dialect,
                                (const char *)a->data, a->len,
                                conn->protocol);
    }
    return ffb__queue_simple(conn, &w, op, s);
}

static int held_simple_send(ffb_conn *conn, ffb__held *h) {
    uint16_t th = 0;
    int rc = h->tx ? ffb__tx_handle(h->tx, &th) : 0;
    if (rc == FFB__LATER)
        return rc;
    if (rc == 0)
        rc = simple_tx_send(conn, th, h->op, &h->text, &h->blr, &h->msg,
                            h->out_size, h->simple);
    ffb__held_done(conn, h, rc);
    return 0;
}

int ffb__queue_simple_tx(ffb_conn *conn, ffb_tx *tx, int32_t op,
                         ffbp_writer *a, ffbp_writer *b, ffbp_writer *c,
                         uint32_t out_size, ffb__simple *s) {
    uint16_t th = 0;
    int rc = conn->held_head ? FFB__LATER : tx ? ffb__tx_handle(tx, &th) : 0;
    if (rc == 0)
        rc = simple_tx_send(conn, th, op, a, b, c, out_size, s);
    if (rc != FFB__LATER) {
        ffbp_writer_free(a);
        ffbp_writer_free(b);
        ffbp_writer_free(c);
        return rc;
    }
    ffb__held *h = ffb__malloc(conn->alloc, sizeof(*h));
    if (!h) {
        ffbp_writer_free(a);
        ffbp_writer_free(b);
        ffbp_writer_free(c);
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    }
    memset(h, 0, sizeof(*h));
    h->text = *a;
    h->blr = *b;
    h->msg = *c;
    h->op = op;
    h->out_size = out_size;
    h->simple = s;
    ffb__held_push(conn, h, held_simple_send, ffb__held_drop, NULL, tx,
                   s->sync);
    return 0;
}

int ffb__queue_release(ffb_conn *conn, int drop, ffb__simple *s) {
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (conn->held_head)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "requests wait for answers still owed: "
                              "detach once their results are in");
    int op = drop ? FFBP_OP_DROP_DATABASE : FFBP_OP_DETACH;
    if (conn->service) {
        if (drop)
            return ffb__error_set(&conn->err, FFB_E_STATE,
                                  "a service attachment has no database "
                                  "to drop");
        op = FFBP_OP_SERVICE_DETACH;
    }
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_object_op(&w, op, conn->db_handle);
    s->kind = FFB__SIMPLE_DETACH;
    s->allow_drdb = drop;
    return ffb__queue_simple(conn, &w, op, s);
}


int ffb__queue_ping(ffb_conn *conn, ffb__simple *s) {
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (conn->protocol < 13)
        return ffb__error_set(&conn->err, FFB_E_UNSUPPORTED,
                              "op_ping needs protocol 13 (Firebird 3.0); the "
                              "server speaks protocol %d",
                              conn->protocol);
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_empty_op(&w, FFBP_OP_PING);
    return ffb__queue_simple(conn, &w, FFBP_OP_PING, s);
}


int ffb__queue_db_info(ffb_conn *conn, const uint8_t *items, size_t items_len,
                       size_t out_size, ffb__simple *s) {
    if ((!items && items_len) || items_len > 65535 || out_size > 0x7FFFFFFF)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "info items: at most 65535, answer at most 2 GiB");
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_info(&w, FFBP_OP_INFO_DATABASE, conn->db_handle, 0, items,
                  items_len, (uint32_t)out_size);
    return ffb__queue_simple(conn, &w, FFBP_OP_INFO_DATABASE, s);
}


int ffb__queue_immediate(ffb_conn *conn, ffb_tx *tx, const char *sql,
                         size_t len, const ffb_value *params, size_t n,
                         ffb__simple *s) {
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (len == (size_t)-1)
        len = strlen(sql);
    if (len == 0 || len > 10 * 1024 * 1024)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "SQL text must be 1 byte to 10 MiB long");
    if (n && !params)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "%zu parameters announced, none given", n);
    if (tx && tx->conn != conn)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "transaction of another connection");
    ffbp_writer a, b, c;
    ffbp_writer_init(&a, conn->alloc);
    ffbp_writer_init(&b, conn->alloc);
    ffbp_writer_init(&c, conn->alloc);
    ffbp_put_raw(&a, sql, len);
    if ((rc = ffb__values_input(conn, params, n, &b, &c)) < 0 ||
        (a.failed && (rc = ffb__fatal(conn, FFB_E_NOMEM, "out of memory")))) {
        ffbp_writer_free(&a);
        ffbp_writer_free(&b);
        ffbp_writer_free(&c);
        return rc;
    }
    return ffb__queue_simple_tx(conn, tx, FFBP_OP_EXEC_IMMEDIATE, &a, &b, &c, 0,
                                s);
}

