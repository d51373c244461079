/*
 * ffb-rest: what every request on a pooled connection shares: reads
 * (handler.c), writes (write.c) and RPC (rpc.c). A request gets a
 * connection of its role's pool (roles.h), begins a transaction, queues
 * its prepares (counted: the last answer calls `prepared`), its request
 * context block, its statements and the transaction's end, and then
 * finishes: its statements are freed (`done`, which may start it again
 * on the same connection), the connection goes back to the pool (or is
 * discarded after a 5xx), the response is sent with the round trips since
 * the connection was got, and the request is freed.
 *
 * The kinds put a rest_req first in their own struct; the callbacks get
 * the rest_req back.
 */
#ifndef FFB_REST_REQ_H
#define FFB_REST_REQ_H

#include "auth.h"
#include "server.h"
#include "url.h"

typedef struct rest_req rest_req;

typedef struct rest_req_ops {
    /* the connection is here (conn, rt0 set): begin */
    void (*start)(rest_req *r);
    /* every prepare queued with rest_req_prepare is answered */
    void (*prepared)(rest_req *r);
    /* the transaction's end is answered; NULL: rest_req_finish */
    void (*ended)(rest_req *r);
    /* the database work is over: free the statements (the connection is
       still held); 1: it went again on the same connection instead */
    int (*done)(rest_req *r);
    /* send the answer (r->req is set); `used_db`: a connection was got */
    void (*respond)(rest_req *r, uint64_t rts, int used_db);
    /* free what the kind owns, then the struct */
    void (*destroy)(rest_req *r);
} rest_req_ops;

struct rest_req_slot;

struct rest_req {
    const rest_req_ops *ops;
    h2o_req_t *req; /* NULL: the client left, the answer is dropped */
    struct rest_req_slot *slot;
    rest_app *app;
    rest_loop *lp;
    rarena arena;
    rest_runas as; /* its role and request context (auth.h) */
    ffb_conn *conn;
    ffb_uv_pool *pool; /* the role's: where the connection goes back */
    ffb_tx *tx;
    uint64_t rt0;
    int head;
    int again;   /* the probe overflowed: the end's error does not count */
    int waiting; /* prepares not answered */
    int failed;
    rest_err err; /* the first failure */
};

void rest_req_init(rest_req *r, const rest_req_ops *ops, rest_app *app,
                   h2o_req_t *req, int head, size_t arena_cap);

/* Keep the first failure: a libfastfb code with its error (or the
   connection's, or a result's). */
void rest_req_fail(rest_req *r, int code, const ffb_error *e);
void rest_req_fail_conn(rest_req *r, int code);
/* -1 (and the failure kept) when `res` failed, else 0. */
int rest_req_check(rest_req *r, const ffb_result *res);

/* Who it runs as and its context (rest_runas_request), then a slot in
   the h2o request's pool that forgets the request when the client goes,
   and a connection of the role's pool for ops->start: 0, or -1 with
   `err` (nothing started; the caller answers and frees). */
int rest_req_runas(rest_req *r, rest_err *err);
int rest_req_acquire(rest_req *r, rest_err *err);

/* Begin r->tx (lock timeout 10 s). */
int rest_req_begin(rest_req *r, int read_only, int isolation);
/* Queue a prepare in r->tx whose answer is counted in r->waiting: 1
   (cached, nothing queued), 0 (queued) or < 0. */
int rest_req_prepare(rest_req *r, const char *sql, size_t len, ffb_stmt **st);
/* db-statement-timeout on `st` (a statement just prepared or taken from
   the cache); 0 round trips. */
void rest_req_stmt_timeout(const rest_app *app, ffb_stmt *st);
/* The request context's block (r->as), in front of the statements in the
   same write: 0 (queued, or none), or < 0 with nothing queued. */
int rest_req_queue_ctx(rest_req *r);
/* Commit (or roll back) r->tx; its answer calls ops->ended. 0, or < 0
   with the failure kept (nothing queued). */
int rest_req_queue_end(rest_req *r, int rollback);

/* Free the context block's statement and the transaction (a kind that
   goes again on the same connection does it in ops->done). */
void rest_req_drop_tx(rest_req *r);
/* The end: ops->done, the connection back, ops->respond, ops->destroy. */
void rest_req_finish(rest_req *r);
/* Server-Timing: db;desc="rt=N" when server-timing-enabled. */
void rest_req_timing(rest_req *r, uint64_t rts);
/* The kept failure as the answer. */
void rest_req_send_error(rest_req *r);
/* Server-Timing when `used_db`, then the failure as the answer when
   there is one (a `body` over its cap is 500 "the response is too
   large"): 1 when sent, 0 when the kind answers. */
int rest_req_respond_head(rest_req *r, uint64_t rts, int used_db,
                          const rbuf *body);
/* The shared part of ops->destroy (the slot, the arena). */
void rest_req_free(rest_req *r);

#endif
