/*
 * Resetting a connection for its next user (ffb_conn_reset and its queue
 * twin): every transaction still active is rolled back, in one write.
 *
 * Rolling back is all it takes on the server: Firebird closes the cursors
 * of a transaction and releases its blob handles when the transaction ends
 * (blobs being written are discarded, as with op_cancel_blob), and the
 * transaction's end handler marks them closed here (ffb__stmts_tx_ended,
 * ffb__blobs_tx_ended). Cursors opened by auto-commit executions (tx NULL)
 * run in a transaction of their own, which is in conn->txs too and so is
 * rolled back. Prepared statements and the statement cache are untouched.
 *
 * Transactions the application freed already are skipped: ffb_tx_free
 * queued their rollback, and auto-commit transactions whose commit is
 * queued are marked freed too; either request goes with this write when
 * one is made, or with the next request.
 *
 * Completion: each rollback's answer sets the `done` of the sync it
 * carries, so only the last rollback carries the caller's sync; the
 * answers come in order, so when it is in, all are. The earlier ones are
 * sent without a waiter and the blocking call checks afterwards that
 * every transaction it rolled back has ended.
 */
#include <string.h>

#include "lib/internal.h"

int ffb__tx_needs_rollback(const ffb_tx *tx) {
    /* A prepared transaction is left to its coordinator (two-phase
       commit: docs/transactions.md). */
    return !tx->freed && !tx->prepared &&
           (tx->state == FFB__TX_PENDING || tx->state == FFB__TX_ACTIVE);
}

/* Queue the rollbacks: 1 when there was none to queue, 0 when `sync`
   completes with the last one, or an error. */
int ffb__queue_reset(ffb_conn *conn, ffb__sync *sync, unsigned gen) {
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    ffb_tx *last = NULL;
    for (ffb_tx *tx = conn->txs; tx; tx = tx->next)
        if (ffb__tx_needs_rollback(tx))
            last = tx;
    if (!last)
        return 1;
    /* conn->txs is newest first: roll back in that order, ending with
       `last` (the oldest), which carries the sync. */
    for (ffb_tx *tx = conn->txs; tx; tx = tx->next) {
        if (!ffb__tx_needs_rollback(tx))
            continue;
        tx->reset_gen = gen;
        rc = ffb__tx_queue_end(tx, FFBP_OP_ROLLBACK, tx == last ? sync : NULL);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ffb__reset_check(ffb_conn *conn, unsigned gen) {
    for (ffb_tx *tx = conn->txs; tx; tx = tx->next)
        if (tx->reset_gen == gen && ffb__tx_needs_rollback(tx))
            return ffb__error_set(&conn->err, FFB_E_SERVER,
                                  "resetting the connection: a transaction "
                                  "could not be rolled back");
    return 0;
}

/* Only the last rollback carries the result: the others are checked when
   it completes. */
static void reset_finish(ffb_conn *conn, struct ffb_result *r) {
    if (r->sync.rc != 0)
        return;
    int rc = ffb__reset_check(conn, r->gen);
    if (rc < 0) {
        ffb_error *e = ffb__sync_error(conn, &r->sync);
        if (e != &conn->err)
            *e = conn->err;
        r->sync.rc = rc;
    }
}

int ffb_conn_queue_reset(ffb_conn *conn, ffb_cb cb, void *data) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    ffb__conn_error_clear(conn);
    int any = 0;
    for (ffb_tx *tx = conn->txs; tx && !any; tx = tx->next)
        any = ffb__tx_needs_rollback(tx);
    if (!any)
        return 1;
    struct ffb_result *r = ffb__result_new(conn, FFB_OP_RESET, cb, data);
    if (!r)
        return FFB_E_NOMEM;
    r->finish = reset_finish;
    r->gen = ++conn->reset_gen;
    rc = ffb__queue_reset(conn, &r->sync, r->gen);
    if (rc != 0 && !r->sync.done)
        ffb__result_drop(conn, r);
    return rc;
}
