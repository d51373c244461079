/*
 * Two-phase commit (docs/transactions.md): the prepare of a transaction,
 * reconnecting to a limbo transaction, the limbo list's decoder, and the
 * distributed transaction object. The phases of a dtx wait in
 * lib/blocking.c; here each participant's requests are queued and their
 * answers recorded.
 */
#include <string.h>

#include "lib/internal.h"
#include "proto/twopc.h"

/* isc_info_tra_id */
#define TRA_ID_ITEM 4
/* The message is stored through a 16-bit length (src/jrd/tra.cpp,
   TRA_prepare). */
#define PREPARE_MSG_MAX 65535

int ffb__prepare_msg_check(ffb_tx *tx, const void *msg, size_t len) {
    ffb_conn *conn = tx->conn;
    if ((!msg && len) || len > PREPARE_MSG_MAX)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "the prepare message must be at most %d bytes",
                              PREPARE_MSG_MAX);
    int rc = ffb__tx_end_check(tx);
    if (rc < 0)
        return rc;
    if (tx->prepared)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the transaction is prepared already: commit "
                              "or roll it back");
    return 0;
}

int ffb_tx_queue_prepare(ffb_tx *tx, const void *msg, size_t len, ffb_cb cb,
                         void *data) {
    if (!tx)
        return FFB_E_INVAL;
    ffb_conn *conn = tx->conn;
    ffb__conn_error_clear(conn);
    int rc = ffb__prepare_msg_check(tx, msg, len);
    if (rc < 0)
        return rc;
    struct ffb_result *r = ffb__result_new(conn, FFB_OP_TX_PREPARE, cb, data);
    if (!r)
        return FFB_E_NOMEM;
    r->tx = tx;
    tx->refs++;
    rc = ffb__tx_queue_prepare(tx, msg, len, &r->sync);
    if (rc != 0 && !r->sync.done)
        ffb__result_drop(conn, r);
    return rc;
}

int ffb_tx_is_prepared(const ffb_tx *tx) {
    return tx && tx->prepared && ffb_tx_is_active(tx);
}

int ffb_conn_reconnect_tx(ffb_conn *conn, int64_t id, ffb_tx **out) {
    if (!conn || !out || id <= 0)
        return FFB_E_INVAL;
    if (conn->state != FFB__ST_READY)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the connection is not attached");
    ffb__conn_error_clear(conn);
    /* Should the server refuse the reconnect, 0xFFFF in the commit behind
       it would still name the object allocated before: a live transaction
       there would be committed in its place. Then the commit waits for
       the reconnect's answer instead. */
    const ffb_tx *prev = conn->last_kind == FFB__LAST_TX ? conn->last_obj
                                                         : NULL;
    int guard = prev && ffb_tx_is_active(prev);
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_reconnect(&w, conn->db_handle, id);
    int rc = ffb__tx_start(conn, &w, FFBP_OP_RECONNECT, out);
    ffbp_writer_free(&w);
    if (rc == 0)
        (*out)->no_last = guard;
    return rc;
}

int ffb_limbo_parse(const uint8_t *answer, size_t len, int64_t *ids,
                    size_t max, size_t *count) {
    if ((!answer && len) || (!ids && max) || !count)
        return FFB_E_INVAL;
    int more = 0;
    if (ffbp_limbo_decode(answer, len, ids, max, count, &more) != FFBP_OK)
        return FFB_E_PROTO;
    return more;
}

/* ---- the distributed transaction -------------------------------------- */

int ffb_dtx_begin(ffb_conn *const *conns, size_t n, const ffb_tx_options *opts,
                  ffb_dtx **out) {
    if (!conns || !out || n == 0 || n > FFB__DTX_MAX)
        return FFB_E_INVAL;
    for (size_t i = 0; i < n; i++) {
        if (!conns[i])
            return FFB_E_INVAL;
        if (conns[i]->state != FFB__ST_READY)
            return ffb__error_set(&conns[i]->err, FFB_E_STATE,
                                  "the connection is not attached");
    }
    const ffb_allocator *a = conns[0]->alloc;
    ffb_dtx *d = ffb__malloc(a, sizeof(*d));
    ffb__dtx_part *p = ffb__malloc(a, n * sizeof(*p));
    if (!d || !p) {
        ffb__free(a, d);
        ffb__free(a, p);
        return FFB_E_NOMEM;
    }
    memset(d, 0, sizeof(*d));
    memset(p, 0, n * sizeof(*p));
    d->alloc = a;
    d->n = n;
    d->p = p;
    d->state = FFB__DTX_ACTIVE;
    d->failed = -1;
    for (size_t i = 0; i < n; i++) {
        int rc = ffb_tx_begin(conns[i], opts, &p[i].tx);
        if (rc < 0) {
            d->n = i;
            ffb_dtx_free(d);
            return rc;
        }
    }
    *out = d;
    return 0;
}

size_t ffb_dtx_count(const ffb_dtx *d) { return d ? d->n : 0; }

ffb_tx *ffb_dtx_tx(const ffb_dtx *d, size_t i) {
    return d && i < d->n ? d->p[i].tx : NULL;
}

int64_t ffb_dtx_tx_id(const ffb_dtx *d, size_t i) {
    return d && i < d->n ? d->p[i].id : 0;
}

int ffb_dtx_failed(const ffb_dtx *d) { return d ? d->failed : -1; }

const ffb_error *ffb_dtx_error(const ffb_dtx *d) {
    return d && d->failed >= 0 ? &d->err : NULL;
}

int ffb__dtx_check(ffb_dtx *d, int what) {
    d->failed = -1;
    const char *why = NULL;
    switch (what) {
    case FFB__DTX_PREPARE:
        if (d->state != FFB__DTX_ACTIVE)
            why = "the distributed transaction is not active";
        break;
    case FFB__DTX_COMMIT:
        if (d->state == FFB__DTX_ENDED)
            why = "the distributed transaction has ended";
        break;
    default:
        if (d->state == FFB__DTX_ENDED)
            why = "the distributed transaction has ended";
        else if (d->state == FFB__DTX_COMMITTING)
            why = "a participant may have committed: finish with "
                  "ffb_dtx_commit()";
        break;
    }
    if (!why)
        return 0;
    ffb__error_set(&d->err, FFB_E_STATE, "%s", why);
    d->failed = 0;
    return FFB_E_STATE;
}

int ffb__dtx_queue(ffb_dtx *d, size_t i, int what, const void *msg,
                   size_t len) {
    static const uint8_t items[] = {TRA_ID_ITEM, FFBP_INFO_END};
    ffb__dtx_part *p = &d->p[i];
    ffb_conn *conn = p->tx->conn;
    memset(&p->sync, 0, sizeof(p->sync));
    if (what != FFB__DTX_PREPARE && !ffb_tx_is_active(p->tx))
        return 1; /* ended already (a commit that succeeded before), or
                     never started */
    ffb__conn_error_clear(conn);
    int rc = ffb__need_blocking(conn);
    if (rc < 0)
        return rc;
    if (what == FFB__DTX_PREPARE) {
        if ((rc = ffb__prepare_msg_check(p->tx, msg, len)) < 0)
            return rc;
        /* The number, for the coordinator's record, in the same write. */
        memset(&p->isync, 0, sizeof(p->isync));
        memset(&p->info, 0, sizeof(p->info));
        p->info.sync = &p->isync;
        p->info.data = p->idbuf;
        p->info.data_size = sizeof(p->idbuf);
        rc = ffb__tx_queue_info(p->tx, items, sizeof(items),
                                sizeof(p->idbuf), &p->info);
        if (rc < 0)
            return rc;
        return ffb__tx_queue_prepare(p->tx, msg, len, &p->sync);
    }
    return ffb__tx_queue_end(p->tx, what == FFB__DTX_COMMIT
                                        ? FFBP_OP_COMMIT
                                        : FFBP_OP_ROLLBACK,
                             &p->sync);
}

int ffb__dtx_answer(ffb_dtx *d, size_t i, int what, int rc) {
    ffb__dtx_part *p = &d->p[i];
    ffb_conn *conn = p->tx->conn;
    if (rc == 0 && what == FFB__DTX_PREPARE) {
        /* The info's answer came before the prepare's. */
        size_t pos = 0, n;
        uint8_t item;
        const uint8_t *v;
        int got = 0;
        if (p->isync.done && p->isync.rc == 0)
            while (ffbp_info_next(p->idbuf, p->info.data_len, &pos, &item,
                                  &v, &n) == 1)
                if (item == TRA_ID_ITEM && n >= 1 && n <= 8) {
                    p->id = ffbp_le_int(v, n);
                    got = 1;
                }
        if (!got)
            rc = ffb__fatal(conn, FFB_E_PROTO,
                            "op_info_transaction answer without "
                            "isc_info_tra_id");
    }
    if (rc < 0 && d->failed < 0) {
        d->failed = (int)i;
        d->err = conn->err;
    }
    return rc;
}

void ffb_dtx_free(ffb_dtx *d) {
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        ffb_tx_free(d->p[i].tx);
    ffb__free(d->alloc, d->p);
    ffb__free(d->alloc, d);
}
