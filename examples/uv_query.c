/*
 * A query with a parameter on a libuv loop (libfastfb_uv): connect, start
 * a transaction and prepare in one write, bind the parameter once the
 * statement is described and queue the execution, read the rows as they
 * arrive (a streaming cursor: fetches queued when the buffered rows run
 * out), then a polite close - all from callbacks, while a timer keeps
 * ticking to show that nothing blocks.
 *
 *   example_uv_query DSN [password] [first relation id]
 */
#include <stdio.h>
#include <stdlib.h>

#include <fastfb_uv.h>

typedef struct app {
    ffb_tx *tx;
    ffb_stmt *stmt;
    int rows;
    int ticks;
    int failed;
    int64_t first_id;
    uv_timer_t tick;
} app;

static void closed(ffb_conn *conn, int status, void *data) {
    app *a = data;
    ffb_stats st;
    ffb_conn_stats(conn, &st, sizeof(st));
    printf("%d rows, %llu round trips; the timer ticked %d times; closed "
           "(%s)\n",
           a->rows, (unsigned long long)st.round_trips, a->ticks,
           status == 0 ? "detached" : ffb_err_name(status));
    uv_close((uv_handle_t *)&a->tick, NULL);
}

static void finish(ffb_conn *conn, app *a, const char *what,
                   const ffb_error *e) {
    if (e) {
        fprintf(stderr, "%s: %s\n", what, ffb_error_message(e));
        a->failed = 1;
    }
    ffb_stmt_free(a->stmt); /* both ride with the detach */
    ffb_tx_free(a->tx);
    a->stmt = NULL;
    a->tx = NULL;
    ffb_uv_close(conn, closed, a);
}

static void rows(ffb_conn *conn, const ffb_result *res, void *data);

/* Print what is buffered; when it runs out, queue the next fetch. */
static void drain(ffb_conn *conn, app *a) {
    int rc;
    while ((rc = ffb_stmt_fetch(a->stmt)) == 1) {
        int64_t id;
        const char *name;
        size_t len;
        ffb_stmt_get_int64(a->stmt, 0, &id);
        ffb_stmt_get_text_trimmed(a->stmt, 1, &name, &len);
        printf("%3lld  %.*s\n", (long long)id, (int)len, name);
        a->rows++;
    }
    if (rc == FFB_E_AGAIN) { /* nothing buffered: ask for more */
        rc = ffb_stmt_queue_fetch(a->stmt, rows, a);
        if (rc == 0)
            return; /* rows() runs when they are in */
        if (rc == 1) {
            drain(conn, a);
            return;
        }
    }
    finish(conn, a, "fetch", rc < 0 ? ffb_conn_error(conn) : NULL);
}

static void rows(ffb_conn *conn, const ffb_result *res, void *data) {
    app *a = data;
    if (ffb_result_status(res) < 0) {
        finish(conn, a, "rows", ffb_result_error(res));
        return;
    }
    drain(conn, a);
}

/* Described: the parameter can be bound now; the execution goes out
   when this callback returns. */
static void prepared(ffb_conn *conn, const ffb_result *res, void *data) {
    app *a = data;
    if (ffb_result_status(res) < 0) {
        finish(conn, a, "prepare", ffb_result_error(res));
        return;
    }
    if (ffb_stmt_bind_int64(a->stmt, 0, a->first_id) != 0 ||
        ffb_stmt_queue_execute(a->stmt, a->tx, rows, a) != 0)
        finish(conn, a, "execute", ffb_conn_error(conn));
}

static void connected(ffb_conn *conn, int status, void *data) {
    app *a = data;
    if (status < 0) {
        finish(conn, a, "connect", ffb_conn_error(conn));
        return;
    }
    printf("attached: protocol %d, %s%s\n", ffb_conn_protocol(conn),
           ffb_conn_wire_crypt(conn)[0] ? ffb_conn_wire_crypt(conn)
                                        : "not encrypted",
           ffb_conn_is_compressed(conn) ? ", zlib" : "");
    const char *sql = "select rdb$relation_id, rdb$relation_name "
                      "from rdb$relations where rdb$relation_id >= ? "
                      "order by 1";
    /* Queued together; they leave in one write when this callback
       returns. */
    if (ffb_tx_begin(conn, NULL, &a->tx) != 0 ||
        ffb_stmt_new(conn, &a->stmt) != 0 ||
        ffb_stmt_queue_prepare(a->stmt, a->tx, sql, (size_t)-1, prepared, a) !=
            0)
        finish(conn, a, "queue", ffb_conn_error(conn));
}

static void ticked(uv_timer_t *t) { ((app *)t->data)->ticks++; }

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s host/port:database [password]\n", argv[0]);
        return 2;
    }
    uv_loop_t *loop = uv_default_loop();
    app a = {0};
    a.first_id = argc > 3 ? atoll(argv[3]) : 0;
    uv_timer_init(loop, &a.tick);
    a.tick.data = &a;
    uv_timer_start(&a.tick, ticked, 1, 1);
    uv_unref((uv_handle_t *)&a.tick); /* the connection keeps the loop */

    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = argv[1];
    o.password = argc > 2 ? argv[2] : "masterkey";
    o.connect_timeout_ms = 10000;
    o.io_timeout_ms = 30000;
    ffb_conn *conn;
    int rc = ffb_uv_conn_new(loop, &o, &conn);
    if (rc == FFB_E_NOMEM)
        return 1;
    if (rc == 0)
        rc = ffb_uv_connect(conn, connected, &a);
    if (rc != 0) { /* the callback will not run */
        fprintf(stderr, "connect: %s\n",
                ffb_error_message(ffb_conn_error(conn)));
        a.failed = 1;
        ffb_uv_close(conn, closed, &a);
    }
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return a.failed;
}
