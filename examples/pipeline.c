/*
 * A pipeline: start a transaction, run two statements and commit in one
 * write, then take the results in order. One round trip in all.
 *
 *   example_pipeline DSN [password]
 */
#include <stdio.h>

#include <fastfb.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s host/port:database [password]\n", argv[0]);
        return 2;
    }
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = argv[1];
    o.password = argc > 2 ? argv[2] : "masterkey";
    ffb_conn *conn;
    if (ffb_conn_new(&o, &conn) != 0 || ffb_conn_connect(conn) != 0) {
        fprintf(stderr, "connect: %s\n",
                conn ? ffb_error_message(ffb_conn_error(conn)) : "out of memory");
        ffb_conn_free(conn);
        return 1;
    }
    /* Two statements prepared once (through the statement cache). */
    ffb_tx *tx;
    ffb_stmt *count_rel, *count_fld;
    ffb_tx_begin(conn, NULL, &tx);
    if (ffb_conn_prepare(conn, tx, "select count(*) from rdb$relations",
                         (size_t)-1, &count_rel) != 0 ||
        ffb_conn_prepare(conn, tx, "select count(*) from rdb$fields",
                         (size_t)-1, &count_fld) != 0) {
        fprintf(stderr, "prepare: %s\n", ffb_error_message(ffb_conn_error(conn)));
        ffb_conn_free(conn);
        return 1;
    }
    ffb_tx_commit(tx);
    ffb_tx_free(tx);

    ffb_stats before, after;
    ffb_conn_stats(conn, &before, sizeof(before));
    /* Queue: start, execute, execute, commit. Nothing is sent yet. */
    ffb_tx_begin(conn, NULL, &tx);
    ffb_stmt_queue_execute(count_rel, tx, NULL, "relations");
    ffb_stmt_queue_execute(count_fld, tx, NULL, "fields");
    ffb_tx_queue_commit(tx, NULL, "commit");
    ffb_conn_flush(conn);

    const ffb_result *res;
    while (ffb_conn_next_result(conn, &res) == 1) {
        const char *what = ffb_result_data(res);
        if (ffb_result_status(res) < 0) {
            printf("%s failed: %s\n", what,
                   ffb_error_message(ffb_result_error(res)));
            continue;
        }
        ffb_stmt *s = ffb_result_stmt(res);
        int64_t n;
        if (s && ffb_stmt_fetch(s) == 1 && ffb_stmt_get_int64(s, 0, &n) == 0)
            printf("%-10s %lld\n", what, (long long)n);
        else
            printf("%-10s ok\n", what);
    }
    ffb_conn_stats(conn, &after, sizeof(after));
    printf("round trips for the pipeline: %llu\n",
           (unsigned long long)(after.round_trips - before.round_trips));
    ffb_tx_free(tx);
    ffb_stmt_free(count_rel);
    ffb_stmt_free(count_fld);
    ffb_conn_close(conn);
    ffb_conn_free(conn);
    return 0;
}
