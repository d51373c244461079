/*
 * libfastfb_uv - libfastfb on a libuv loop (docs/async.md).
 *
 * A connection made by ffb_uv_conn_new() is an ordinary libfastfb
 * connection with external I/O (FFB_IO_EXTERNAL) whose byte pump the
 * adapter drives from the loop: reads are fed to the connection as they
 * arrive, its output is written once per loop iteration, and its deadlines
 * (connect_timeout_ms, io_timeout_ms) run on one uv_timer_t. After
 * ffb_uv_connect() the application uses the ordinary queue functions of
 * fastfb.h (ffb_stmt_queue_execute(), ffb_tx_queue_commit(), ...) with
 * callbacks; it never calls ffb_conn_flush() and never waits. Everything
 * queued on a connection between two passes of the loop goes out in one
 * write: the adapter writes from a uv_prepare_t and a uv_check_t of the
 * connection, which run right before and right after the loop polls.
 *
 * Threads: every call on a connection, and every callback, is on the
 * loop's thread. Result callbacks run inside the adapter's read callback
 * (in ffb_conn_feed()), in queue order; they may queue more requests,
 * start other connections and call ffb_uv_close() on any connection,
 * including their own. Give every request a callback: a request queued
 * with a NULL callback keeps its result until ffb_conn_next_result()
 * takes it (which never waits here: FFB_E_AGAIN while none is complete),
 * and counts as pending for ffb_uv_close().
 *
 * Failures: when an attached connection breaks (the server closed the
 * stream, a read or write failed, io_timeout_ms passed, bytes made no
 * sense), every request pending completes with the code and the error
 * that broke it (FFB_E_TIMEOUT, FFB_E_CLOSED, FFB_E_IO, ...), in queue
 * order, inside the adapter's callback that saw it, and the adapter closes
 * its socket at once; ffb_conn_error() names the cause until the next call
 * on the connection. The connection is then
 * closed (ffb_conn_is_attached() is 0, queue calls fail with FFB_E_STATE),
 * and ffb_uv_close() reports the cause as its status.
 *
 * Lifetime: a connection made here is freed only by ffb_uv_close(), never
 * by ffb_conn_free(). Its I/O-driver pointer (ffb_conn_set_io_data()) is
 * the adapter's. The blocking calls of fastfb.h return FFB_E_STATE on it.
 */
#ifndef FASTFB_UV_H
#define FASTFB_UV_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "fastfb.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Called once when a connect started by ffb_uv_connect() or
 * ffb_uv_create_database() ends: `status` 0 when attached, else the code
 * (ffb_conn_error() says why). After a failure the connection can only be
 * closed.
 */
typedef void (*ffb_uv_connect_cb)(ffb_conn *conn, int status, void *data);

/**
 * Called last by ffb_uv_close(), when every libuv handle of the
 * connection has reported closed. `status` says how the attachment ended:
 * 0 when the server confirmed the detach (or there was no attachment),
 * else FFB_E_CANCELLED (requests were pending, or a connect was in
 * progress: the close was abrupt), FFB_E_SERVER (the server refused the
 * detach), FFB_E_TIMEOUT (no answer to the detach in time), or the code
 * that broke or failed the connection earlier. `conn` is valid during the
 * callback (its error and statistics can be read) and freed when it
 * returns.
 */
typedef void (*ffb_uv_close_cb)(ffb_conn *conn, int status, void *data);

/**
 * How long ffb_uv_close() waits for the answer to its op_detach when the
 * connection has no io_timeout_ms: then it closes abruptly.
 */
#define FFB_UV_DETACH_TIMEOUT_MS 10000

/**
 * Create a connection on `loop`. `opts` as for ffb_conn_new() (NULL: the
 * defaults); its `io` is ignored (always FFB_IO_EXTERNAL). Does no I/O: it
 * initialises the connection's timer, prepare and check handles on `loop`.
 *
 * Ownership: close it with ffb_uv_close() (never ffb_conn_free()); the
 * loop must outlive it.
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (`loop` or `out` NULL, or options ffb_conn_new()
 * refuses: then `*out` is still a connection whose ffb_conn_error() says
 * which option is wrong; connecting it returns that error, and it is
 * closed with ffb_uv_close()), FFB_E_NOMEM (`*out` untouched).
 * Since: 0.2
 */
FFB_API int ffb_uv_conn_new(uv_loop_t *loop, const ffb_conn_options *opts,
                            ffb_conn **out);

/**
 * Connect and attach without blocking: resolve the host with
 * uv_getaddrinfo(), connect TCP to each address in turn (TCP_NODELAY and
 * keepalive on), then authenticate, start wire encryption and compression
 * as negotiated, and attach. connect_timeout_ms covers all of it, from
 * this call; it and io_timeout_ms run on the connection's timer. `cb`
 * runs once, on the loop, when it ends.
 *
 * Round trips: as ffb_conn_connect() (3 with wire encryption, 2 without;
 * resolution and the TCP connect are not counted).
 * Returns: 0 (`cb` will be called), or, without calling `cb`:
 * FFB_E_INVAL (not a connection of ffb_uv_conn_new(), `cb` NULL, or the
 * options ffb_uv_conn_new() refused), FFB_E_STATE (already connecting,
 * connected or closing), FFB_E_IO (libuv refused to start the lookup; the
 * connection is then broken), FFB_E_NOMEM.
 * The status given to `cb`: 0, FFB_E_IO (the name did not resolve, or no
 * address accepted the TCP connect: the message names the host, the port
 * and libuv's reason), FFB_E_TIMEOUT, FFB_E_AUTH, FFB_E_CRYPT,
 * FFB_E_SERVER (the attach was refused), FFB_E_CLOSED, FFB_E_PROTO,
 * FFB_E_NOMEM, FFB_E_CANCELLED (ffb_uv_close() was called first).
 * Since: 0.2
 */
FFB_API int ffb_uv_connect(ffb_conn *conn, ffb_uv_connect_cb cb, void *data);

/**
 * Like ffb_uv_connect(), but creates the database (op_create), as
 * ffb_conn_create_database(); `copts` may be NULL for the defaults and is
 * copied.
 *
 * Round trips: as ffb_uv_connect().
 * Returns: as ffb_uv_connect(); FFB_E_INVAL also for a bad `copts`. The
 * status given to `cb` is FFB_E_SERVER when the file exists or the path is
 * not allowed.
 * Since: 0.2
 */
FFB_API int ffb_uv_create_database(ffb_conn *conn,
                                   const ffb_create_options *copts,
                                   ffb_uv_connect_cb cb, void *data);

/**
 * Close the connection and free it, in two phases as libuv handles close.
 * When it is attached and nothing is pending, the detach is polite:
 * op_detach is written and its answer awaited (at most io_timeout_ms, or
 * FFB_UV_DETACH_TIMEOUT_MS without one). Otherwise the close is abrupt:
 * a connect in progress ends with FFB_E_CANCELLED (its callback runs),
 * every request still pending completes with FFB_E_CANCELLED (callbacks
 * run, in queue order), and the socket is closed. Then every libuv handle
 * of the connection is closed, and when the last has reported closed `cb`
 * (may be NULL) runs - always last - and the memory is freed, with the
 * statements, transactions, blobs and batches of the connection (as by
 * ffb_conn_free()): none of them may be used afterwards.
 *
 * The work starts on the next pass of the loop (also when this is called
 * from a callback of this connection), so it never happens inside a call
 * of the application's; the loop is kept alive until it is done.
 *
 * Round trips: 1 for a polite detach (op_detach), 0 otherwise.
 * Returns: 0 (`cb` will be called), or, without calling `cb`: FFB_E_INVAL
 * (not a connection of ffb_uv_conn_new()), FFB_E_STATE (already closing).
 * Since: 0.2
 */
FFB_API int ffb_uv_close(ffb_conn *conn, ffb_uv_close_cb cb, void *data);

/**
 * The loop of a connection made by ffb_uv_conn_new(), or NULL for any
 * other connection (or NULL).
 *
 * Round trips: 0. Since: 0.2
 */
FFB_API uv_loop_t *ffb_uv_conn_loop(const ffb_conn *conn);

/** The adapter's own counters of one connection (the wire's are in
    ffb_conn_stats()). */
typedef struct ffb_uv_stats {
    uint64_t writes;      /* batches of output handed to the socket: one per
                             loop pass that had something to write (a
                             uv_try_write, and a uv_write for what it could
                             not take, count as one) */
    uint64_t reads;       /* read callbacks that brought bytes */
    uint64_t timer_fires; /* times the deadline timer ran */
    uint64_t queued;      /* writes the socket did not take at once:
                             copied and given to uv_write */
} ffb_uv_stats;

/**
 * Copy the adapter's counters of `conn` into `out`. `out_size` is
 * sizeof(ffb_uv_stats) as the caller knows it.
 *
 * Round trips: 0.
 * Returns: 0, FFB_E_INVAL (NULL arguments, or not a connection of
 * ffb_uv_conn_new()).
 * Since: 0.2
 */
FFB_API int ffb_uv_conn_stats(const ffb_conn *conn, ffb_uv_stats *out,
                              size_t out_size);

/* ---- cancellation (docs/cancel.md) -------------------------------------- */

/**
 * ffb_conn_cancel() from ANY thread on a connection of ffb_uv_conn_new():
 * the kind (enum ffb_cancel_kind) is recorded and the loop is woken
 * (uv_async_send); on the loop's thread the adapter then writes op_cancel
 * ahead of anything else queued. On the loop's thread ffb_conn_cancel()
 * itself may be used as well (it writes at the next pass of the loop).
 * It may be called until ffb_uv_close() is called, never after.
 * Round trips: 0 (op_cancel is never answered).
 * Returns: 0, FFB_E_INVAL (not a connection of ffb_uv_conn_new(), or an
 * unknown kind), FFB_E_AGAIN (8 requests already wait for the loop).
 * Requests the loop takes while the connection is not attached are
 * dropped.
 * Since: 0.2
 */
FFB_API int ffb_uv_conn_cancel(ffb_conn *conn, int kind);

/* ---- the pool ---------------------------------------------------------- */

/**
 * A pool of adapter connections on one loop: the policy of the blocking
 * ffb_pool (the same core: most recently used idle connection first, FIFO
 * waiters with deadlines, validation of connections idle for
 * validate_after_ms, idle eviction above min_size, max_lifetime_ms, a
 * backoff while connects fail), with every connect, ping, reset and close
 * done on the loop without blocking. All calls and callbacks are on the
 * loop's thread.
 */
typedef struct ffb_uv_pool ffb_uv_pool;

/**
 * The outcome of ffb_uv_pool_acquire(), called once, on the loop, never
 * inside the acquire call itself: `status` 0 with `conn` (the pool's; give
 * it back with ffb_uv_pool_release() or ffb_uv_pool_discard()), else
 * `conn` NULL and FFB_E_TIMEOUT, the code of the connect that failed for
 * this waiter (ffb_uv_pool_error() has its message), or FFB_E_CANCELLED
 * (the pool is closing).
 */
typedef void (*ffb_uv_acquire_cb)(ffb_uv_pool *pool, ffb_conn *conn, int status,
                                  void *data);

/** Called last by ffb_uv_pool_close(), when everything is closed. */
typedef void (*ffb_uv_pool_close_cb)(ffb_uv_pool *pool, void *data);

/**
 * Create a pool on `loop` with the options of ffb_pool_new() (opts->conn
 * is copied with its strings; its `io` is ignored). Does no I/O itself:
 * min_size connections are opened from the first pass of the loop.
 *
 * Ownership: close it with ffb_uv_pool_close(); the loop must outlive it.
 * Round trips: 0 (each connection later costs a connect).
 * Returns: 0, FFB_E_INVAL (NULL arguments, wrong versions, min_size above
 * max_size or max_size above 4096; `*out` untouched), FFB_E_NOMEM.
 * Since: 0.2
 */
FFB_API int ffb_uv_pool_new(uv_loop_t *loop, const ffb_pool_options *opts,
                            ffb_uv_pool **out);

/**
 * Ask for a connection; `cb` gets it (or why not) on a later pass of the
 * loop. `timeout_ms`: -1 = the pool's acquire_timeout_ms, 0 = only an
 * idle one that needs no validation ping (else FFB_E_TIMEOUT at once), n =
 * at most n ms. Waiters are
 * served in the order they asked. A connection that broke while idle in
 * the pool (the server went away) is never handed out: it is discarded and
 * replaced, and the waiter gets another (or, past its timeout,
 * FFB_E_TIMEOUT).
 *
 * Round trips: 0 for an idle connection used recently; 1 (op_ping) for one
 * idle validate_after_ms or longer; a connect (2 or 3) for a new one.
 * Returns: 0 (`cb` will be called), or without calling it: FFB_E_INVAL
 * (NULL pool or callback, timeout below -1), FFB_E_STATE (closing),
 * FFB_E_NOMEM.
 * Since: 0.2
 */
FFB_API int ffb_uv_pool_acquire(ffb_uv_pool *pool, int timeout_ms,
                                ffb_uv_acquire_cb cb, void *data);

/**
 * Give a connection back. It is reset without blocking
 * (ffb_conn_queue_reset(): active transactions rolled back, prepared
 * statements kept), then handed to the oldest waiter or kept idle. A
 * connection that is broken, has requests still pending, fails its reset
 * or is past max_lifetime_ms is closed instead (and replaced as needed).
 * The application's ffb_tx, ffb_stmt and ffb_blob objects of the
 * connection stay valid until the pool closes the connection: free them
 * before the release.
 *
 * Round trips: 0 when no transaction is active, else 1 (the rollbacks, in
 * one write).
 * Returns: 0, FFB_E_INVAL (NULL, or not a connection handed out by this
 * pool).
 * Since: 0.2
 */
FFB_API int ffb_uv_pool_release(ffb_uv_pool *pool, ffb_conn *conn);

/**
 * Give a connection back to be closed (the application saw it fail or
 * left it in a state it cannot undo). Round trips: 0.
 * Returns: as ffb_uv_pool_release(). Since: 0.2
 */
FFB_API int ffb_uv_pool_discard(ffb_uv_pool *pool, ffb_conn *conn);

/**
 * Counters and gauges (the ffb_pool_counters of the blocking pool);
 * `out_size` is sizeof(ffb_pool_counters) as the caller knows it.
 * Round trips: 0. Returns: 0, FFB_E_INVAL. Since: 0.2
 */
FFB_API int ffb_uv_pool_stats(const ffb_uv_pool *pool, ffb_pool_counters *out,
                              size_t out_size);

/**
 * The pool's last failure (a connect that failed, with the connection's
 * code, gds code, SQLSTATE and message; an acquire that timed out; a
 * foreign release). Round trips: 0. Returns: 0, FFB_E_INVAL.
 * Since: 0.2
 */
FFB_API int ffb_uv_pool_error(const ffb_uv_pool *pool, ffb_pool_error_info *out,
                              size_t out_size);

/** The pool's loop (NULL for NULL). Round trips: 0. Since: 0.2 */
FFB_API uv_loop_t *ffb_uv_pool_loop(const ffb_uv_pool *pool);

/**
 * Close the pool: waiting acquires complete with FFB_E_CANCELLED, idle
 * connections are closed (politely: op_detach), connections still handed
 * out are closed when they come back; when the last is closed and the
 * pool's handles have reported closed, `cb` (may be NULL) runs and the
 * pool is freed.
 *
 * Round trips: 1 per idle connection (its detach), in parallel.
 * Returns: 0 (`cb` will be called), FFB_E_INVAL, FFB_E_STATE (already
 * closing).
 * Since: 0.2
 */
FFB_API int ffb_uv_pool_close(ffb_uv_pool *pool, ffb_uv_pool_close_cb cb,
                              void *data);

/* ---- events on the loop ------------------------------------------------ */

/**
 * Register an event name on a connection of this adapter (its events
 * object made with ffb_events_new()), as ffb_events_queue_register():
 * when the server announces the aux port the adapter connects it on the
 * loop (uv_tcp, plain TCP even when the main connection is encrypted, to
 * the address the main stream is connected to) and reads it; event
 * callbacks run on the loop, inside the adapter's read callback, and the
 * re-registrations go out with the connection's next write. `done` runs
 * when the server holds the registration and its baseline has arrived:
 * every post committed after that is delivered. If the aux connect fails
 * the server is told (ffb_events_aux_abort()) and `done` gets the
 * server's isc_net_event_connect_err. The aux connection is closed with
 * the connection (ffb_uv_close(), a break); unregister with
 * ffb_events_queue_unregister().
 * Round trips: as ffb_events_register() (2: op_connect_request +
 * op_que_events, then the baseline's re-registration), counted when they
 * happen on the loop.
 * Returns: 0, 1 (registered already: the callback is replaced, `done` is
 * not called), FFB_E_INVAL (not a connection of this adapter),
 * FFB_E_STATE (not attached, closing), and as ffb_events_queue_register().
 * Since: 0.2
 */
FFB_API int ffb_uv_events_register(ffb_events *ev, const char *name,
                                   ffb_event_cb cb, void *data, ffb_cb done,
                                   void *done_data);

#ifdef __cplusplus
}
#endif

#endif /* FASTFB_UV_H */
