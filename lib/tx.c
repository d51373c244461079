/*
 * Transactions. A start is lazy: op_transaction waits in the stage and
 * travels with the next request, which refers to the new transaction as
 * "the object allocated last" (0xFFFF) while that still holds (reference
 * 02, 7.4 and 7.8: one-shot plans).
 */
#include <stdio.h>
#include <string.h>

#include "lib/internal.h"
#include "proto/twopc.h"

/* TPB tags (isc_tpb_*). */
enum {
    TPB_VERSION3 = 3,
    TPB_CONSISTENCY = 1,
    TPB_CONCURRENCY = 2,
    TPB_WAIT = 6,
    TPB_NOWAIT = 7,
    TPB_READ = 8,
    TPB_WRITE = 9,
    TPB_LOCK_READ = 10,
    TPB_LOCK_WRITE = 11,
    TPB_READ_COMMITTED = 15,
    TPB_AUTOCOMMIT = 16,
    TPB_REC_VERSION = 17,
    TPB_NO_REC_VERSION = 18,
    TPB_NO_AUTO_UNDO = 20,
    TPB_LOCK_TIMEOUT = 21,
    TPB_READ_CONSISTENCY = 22
};

void ffb_tx_options_init(ffb_tx_options *opts) {
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->version = FFB_TX_OPTIONS_VERSION;
}

static int build_tpb(ffb_conn *conn, const ffb_tx_options *o, ffbp_writer *w) {
    uint8_t b[8];
    size_t n = 0;
    b[n++] = TPB_VERSION3;
    switch (o->isolation) {
    case FFB_ISO_READ_COMMITTED:
        b[n++] = TPB_READ_COMMITTED;
        b[n++] = TPB_REC_VERSION;
        break;
    case FFB_ISO_SNAPSHOT:
        b[n++] = TPB_CONCURRENCY;
        break;
    case FFB_ISO_SERIALIZABLE:
        b[n++] = TPB_CONSISTENCY;
        break;
    case FFB_ISO_READ_COMMITTED_NO_REC_VERSION:
        b[n++] = TPB_READ_COMMITTED;
        b[n++] = TPB_NO_REC_VERSION;
        break;
    case FFB_ISO_READ_CONSISTENCY:
        b[n++] = TPB_READ_COMMITTED;
        b[n++] = TPB_READ_CONSISTENCY;
        break;
    default:
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "unknown isolation level %d", o->isolation);
    }
    b[n++] = o->read_only ? TPB_READ : TPB_WRITE;
    ffbp_put_raw(w, b, n);
    if (o->lock_timeout == 0) {
        b[0] = TPB_WAIT;
        ffbp_put_raw(w, b, 1);
    } else if (o->lock_timeout < 0) {
        b[0] = TPB_NOWAIT;
        ffbp_put_raw(w, b, 1);
    } else {
        if (o->lock_timeout > 32767)
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "lock_timeout must be at most 32767 s");
        uint8_t t[5] = {TPB_WAIT, TPB_LOCK_TIMEOUT, 2,
                        (uint8_t)o->lock_timeout,
                        (uint8_t)(o->lock_timeout >> 8)};
        ffbp_put_raw(w, t, 5);
    }
    if (o->autocommit) {
        b[0] = TPB_AUTOCOMMIT;
        ffbp_put_raw(w, b, 1);
    }
    if (o->no_auto_undo) {
        b[0] = TPB_NO_AUTO_UNDO;
        ffbp_put_raw(w, b, 1);
    }
    for (size_t i = 0; i < o->nreservations; i++) {
        const ffb_tx_reservation *r = &o->reservations[i];
        size_t len = r->table ? strlen(r->table) : 0;
        if (len == 0 || len > 252)
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "reserved table name must be 1..252 bytes");
        if (r->mode != 0 && (r->mode < 3 || r->mode > 5))
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "reservation mode must be 0, 3, 4 or 5");
        uint8_t h[2] = {(uint8_t)(r->write ? TPB_LOCK_WRITE : TPB_LOCK_READ),
                        (uint8_t)len};
        ffbp_put_raw(w, h, 2);
        ffbp_put_raw(w, r->table, len);
        if (r->mode) {
            b[0] = (uint8_t)r->mode;
            ffbp_put_raw(w, b, 1);
        }
    }
    return w->failed ? ffb__fatal(conn, FFB_E_NOMEM, "out of memory")
                     : 0;
}

static void tx_destroy(ffb_tx *tx) {
    ffb_conn *conn = tx->conn;
    for (ffb_tx **pp = &conn->txs; *pp; pp = &(*pp)->next)
        if (*pp == tx) {
            *pp = tx->next;
            break;
        }
    if (conn->last_obj == tx) {
        conn->last_kind = FFB__LAST_OTHER;
        conn->last_obj = NULL;
    }
    ffb__free(conn->alloc, tx->start_err);
    ffb__obj_release(conn->alloc, tx, "transaction");
}

void ffb__txs_destroy_all(ffb_conn *conn) {
    while (conn->txs)
        tx_destroy(conn->txs);
}

void ffb__tx_unref(ffb_tx *tx) {
    if (tx && --tx->refs == 0)
        tx_destroy(tx);
}

/* Answer to op_transaction. */
static int start_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    ffb_tx *tx = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r) {
        ffb__tx_unref(tx);
        return FFB_E_PROTO;
    }
    tx->refs--; /* the reply's reference; tx stays alive while user holds it */
    if (ffb__status_is_error(&r->status)) {
        tx->state = FFB__TX_FAILED;
        if (!tx->start_err)
            tx->start_err = ffb__malloc(conn->alloc, sizeof(ffb_error));
        if (tx->start_err)
            ffb__error_from_status(tx->start_err, FFB_E_SERVER, &r->status,
                                   "starting the transaction failed");
        if (p->sync)
            ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, &r->status,
                                  "starting the transaction failed");
    } else if (tx->state == FFB__TX_PENDING) {
        tx->state = FFB__TX_ACTIVE;
        tx->handle = r->object;
    }
    tx->answered = 1;
    if (p->sync)
        p->sync->done = 1;
    if (tx->refs == 0)
        tx_destroy(tx);
    return 0;
}

int ffb_tx_begin(ffb_conn *conn, const ffb_tx_options *opts, ffb_tx **out) {
    if (!conn || !out)
        return FFB_E_INVAL;
    ffb_tx_options defaults = FFB_TX_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    if (opts->version != FFB_TX_OPTIONS_VERSION)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "ffb_tx_options.version must be "
                              "FFB_TX_OPTIONS_VERSION");
    if (conn->state != FFB__ST_READY)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the connection is not attached");
    ffb__conn_error_clear(conn);
    /* Encoded, copied to the stage and freed here: on the stack. */
    uint8_t tpb_buf[64], pkt_buf[128];
    ffbp_writer tpb, w;
    ffbp_writer_init_buf(&tpb, conn->alloc, tpb_buf, sizeof(tpb_buf));
    int rc = build_tpb(conn, opts, &tpb);
    if (rc < 0) {
        ffbp_writer_free(&tpb);
        return rc;
    }
    ffbp_writer_init_buf(&w, conn->alloc, pkt_buf, sizeof(pkt_buf));
    ffbp_put_transaction(&w, conn->db_handle, tpb.data, tpb.len);
    ffbp_writer_free(&tpb);
    rc = ffb__tx_start(conn, &w, FFBP_OP_TRANSACTION, out);
    ffbp_writer_free(&w);
    return rc;
}

int ffb__tx_start(ffb_conn *conn, const ffbp_writer *w, int32_t op,
                  ffb_tx **out) {
    if (w->failed)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    ffb_tx *tx = ffb__malloc(conn->alloc, sizeof(*tx));
    if (!tx)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    memset(tx, 0, sizeof(*tx));
    tx->conn = conn;
    tx->state = FFB__TX_PENDING;
    tx->refs = 2; /* the caller, and the answer owed */
    tx->prepared = op == FFBP_OP_RECONNECT; /* a limbo transaction */
    int rc = ffb__engine_queue(conn, w, 1);
    if (rc == 0 && !ffb__engine_expect(conn, op, start_reply, tx))
        rc = FFB_E_NOMEM;
    if (rc < 0) {
        /* The packet may be staged already: the connection cannot be kept
           consistent without its reply handler. */
        ffb__free(conn->alloc, tx);
        return ffb__engine_fail(conn, rc == FFB_E_NOMEM ? FFB_E_NOMEM : rc);
    }
    tx->next = conn->txs;
    conn->txs = tx;
    conn->last_kind = FFB__LAST_TX;
    conn->last_obj = tx;
    *out = tx;
    return 0;
}

int ffb__tx_handle(ffb_tx *tx, uint16_t *out) {
    ffb_conn *conn = tx->conn;
    switch (tx->state) {
    case FFB__TX_ACTIVE:
        *out = tx->handle;
        return 0;
    case FFB__TX_PENDING:
        if (!tx->no_last && conn->last_kind == FFB__LAST_TX &&
            conn->last_obj == tx) {
            *out = 0xFFFF; /* the object allocated last */
            return 0;
        }
        /* Something was allocated after the start: the request waits for
           the start's answer (rule 7.7-8 of the reference says how callers
           avoid it). */
        return FFB__LATER;
    case FFB__TX_FAILED:
        if (tx->start_err) {
            conn->err = *tx->start_err;
            return conn->err.code;
        }
        return ffb__error_set(&conn->err, FFB_E_SERVER,
                              "the transaction could not be started");
    default:
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the transaction has ended");
    }
}


/* Answer to commit/rollback and the retaining variants. */
static int end_reply(ffb_conn *conn, const ffbp_packet *pkt, ffb__pending *p) {
    ffb_tx *tx = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r) {
        ffb__tx_unref(tx);
        return FFB_E_PROTO;
    }
    if (ffb__status_is_error(&r->status)) {
        tx->end_queued = 0; /* still active: its cursors too */
        if (p->sync) {
            if (tx->state == FFB__TX_FAILED && tx->start_err &&
                p->sync->rc == 0) {
                /* Only a consequence of the failed start. */
                ffb_error *e = ffb__sync_error(conn, p->sync);
                *e = *tx->start_err;
                e->code = FFB_E_ABORTED;
                p->sync->rc = FFB_E_ABORTED;
            } else {
                ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, &r->status,
                                      NULL);
            }
        }
    } else if (p->op == FFBP_OP_PREPARE || p->op == FFBP_OP_PREPARE2) {
        tx->prepared = 1;
    } else if (p->op == FFBP_OP_COMMIT || p->op == FFBP_OP_ROLLBACK) {
        tx->state = FFB__TX_ENDED;
        ffb__stmts_tx_ended(conn, tx);
        ffb__blobs_tx_ended(conn, tx);
    }
    if (p->sync)
        p->sync->done = 1;
    ffb__tx_unref(tx);
    return 0;
}

/* Encode the end of a transaction whose handle is known (or 0xFFFF);
   op_prepare2 carries `msg`. */
static int send_end(ffb_tx *tx, int op, uint16_t h, ffb__sync *sync,
                    const ffbp_writer *msg) {
    ffb_conn *conn = tx->conn;
    uint8_t buf[64]; /* copied to the stage and freed here */
    ffbp_writer w;
    ffbp_writer_init_buf(&w, conn->alloc, buf, sizeof(buf));
    if (op == FFBP_OP_PREPARE2)
        ffbp_put_prepare2(&w, h, msg->data, msg->len);
    else
        ffbp_put_object_op(&w, op, h);
    int rc = ffb__engine_queue(conn, &w, 1);
    ffbp_writer_free(&w);
    if (rc < 0)
        return ffb__engine_fail(conn, rc);
    ffb__pending *p = ffb__engine_expect(conn, op, end_reply, tx);
    if (!p)
        return ffb__engine_fail(conn, FFB_E_NOMEM);
    p->sync = sync;
    tx->refs++;
    if (op == FFBP_OP_COMMIT || op == FFBP_OP_ROLLBACK)
        tx->end_queued = 1;
    return 0;
}

int ffb__tx_send_end(ffb_tx *tx, int op, ffb__sync *sync) {
    uint16_t h = 0;
    int rc = ffb__tx_handle(tx, &h);
    return rc != 0 ? rc : send_end(tx, op, h, sync, NULL);
}

void ffb__held_done(ffb_conn *conn, ffb__held *h, int rc) {
    if (rc < 0)
        ffb__sync_fail(conn, h->sync,
                       h->tx && h->tx->state == FFB__TX_FAILED ? FFB_E_ABORTED
                                                              : rc);
    ffb__stmt_unref(h->stmt);
    ffb__tx_unref(h->tx);
}

void ffb__held_push(ffb_conn *conn, ffb__held *h,
                    int (*send)(ffb_conn *, ffb__held *),
                    void (*drop)(ffb_conn *, ffb__held *, int),
                    ffb_stmt *stmt, ffb_tx *tx, ffb__sync *sync) {
    h->send = send;
    h->drop = drop;
    h->sync = sync;
    h->stmt = stmt;
    if (stmt)
        stmt->refs++;
    h->tx = tx;
    if (tx)
        tx->refs++;
    ffb__engine_hold(conn, h);
}

void ffb__held_drop(ffb_conn *conn, ffb__held *h, int rc) {
    ffb__sync_fail(conn, h->sync, rc);
    ffb__held_done(conn, h, 0);
}

static int held_end_send(ffb_conn *conn, ffb__held *h) {
    uint16_t th;
    int rc = ffb__tx_handle(h->tx, &th);
    if (rc == FFB__LATER)
        return rc;
    if (rc == 0)
        rc = send_end(h->tx, h->op, th, h->sync, &h->text);
    ffb__held_done(conn, h, rc);
    return 0;
}

/* op_prepare2's message is `msg` (len bytes). */
static int queue_end(ffb_tx *tx, int op, const void *msg, size_t len,
                     ffb__sync *sync) {
    ffb_conn *conn = tx->conn;
    uint16_t h = 0;
    int rc = conn->held_head ? FFB__LATER : ffb__tx_handle(tx, &h);
    if (rc < 0)
        return rc;
    ffbp_writer m = {0};
    m.data = (uint8_t *)(uintptr_t)msg;
    m.len = len;
    if (rc == 0)
        return send_end(tx, op, h, sync, &m);
    /* Its handle is not known yet, or requests before it wait; its
       cursors already get no read-ahead (send_end() marks the rest). */
    if (op == FFBP_OP_COMMIT || op == FFBP_OP_ROLLBACK)
        tx->end_queued = 1;
    ffb__held *hd = ffb__malloc(conn->alloc, sizeof(*hd));
    if (!hd)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    memset(hd, 0, sizeof(*hd));
    hd->op = op;
    ffbp_writer_init(&hd->text, conn->alloc);
    if (len)
        ffbp_put_raw(&hd->text, msg, len);
    if (hd->text.failed) {
        ffbp_writer_free(&hd->text);
        ffb__free(conn->alloc, hd);
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    }
    ffb__held_push(conn, hd, held_end_send, ffb__held_drop, NULL, tx, sync);
    return 0;
}

int ffb__tx_queue_end(ffb_tx *tx, int op, ffb__sync *sync) {
    return queue_end(tx, op, NULL, 0, sync);
}

int ffb__tx_queue_prepare(ffb_tx *tx, const void *msg, size_t len,
                          ffb__sync *sync) {
    return queue_end(tx, len ? FFBP_OP_PREPARE2 : FFBP_OP_PREPARE, msg, len,
                     sync);
}

int ffb__tx_end_check(ffb_tx *tx) {
    ffb_conn *conn = tx->conn;
    if (conn->state != FFB__ST_READY)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the connection is not attached");
    if (tx->state == FFB__TX_ENDED)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the transaction has already ended");
    return 0;
}

int ffb_tx_is_active(const ffb_tx *tx) {
    return tx && (tx->state == FFB__TX_PENDING || tx->state == FFB__TX_ACTIVE);
}

int ffb__tx_queue_info(ffb_tx *tx, const uint8_t *items, size_t items_len,
                       size_t out_size, ffb__simple *s) {
    ffb_conn *conn = tx->conn;
    if (tx->state == FFB__TX_ENDED)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the transaction has ended");
    ffbp_writer a, b, c;
    ffbp_writer_init(&a, conn->alloc);
    ffbp_writer_init(&b, conn->alloc);
    ffbp_writer_init(&c, conn->alloc);
    ffbp_put_raw(&a, items, items_len);
    if (a.failed) {
        ffbp_writer_free(&a);
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    }
    return ffb__queue_simple_tx(conn, tx, FFBP_OP_INFO_TRANSACTION, &a, &b, &c,
                                (uint32_t)out_size, s);
}

void ffb_tx_free(ffb_tx *tx) {
    ffb__obj_check(tx, "ffb_tx_free");
    if (!tx || tx->freed)
        return;
    ffb_conn *conn = tx->conn;
    tx->freed = 1;
    if ((tx->state == FFB__TX_PENDING || tx->state == FFB__TX_ACTIVE) &&
        conn->state == FFB__ST_READY && !tx->prepared) {
        /* Roll back with the next request; nobody waits for the answer.
           A prepared one is left in limbo: only its coordinator decides
           (docs/transactions.md). */
        if (ffb__tx_queue_end(tx, FFBP_OP_ROLLBACK, NULL) < 0)
            ffb__conn_error_clear(conn);
    }
    ffb__tx_unref(tx);
}
