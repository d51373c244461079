/*
 * Streaming a large cursor: rows are read batch by batch while the next
 * batches are already on their way (read-ahead); memory stays bounded.
 *
 *   example_stream DSN [password] [rows]
 */
#include <stdio.h>
#include <stdlib.h>

#include <fastfb.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s host/port:database [password] [rows]\n",
                argv[0]);
        return 2;
    }
    long rows = argc > 3 ? atol(argv[3]) : 100000;
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
    ffb_tx *tx;
    ffb_stmt *stmt;
    ffb_tx_begin(conn, NULL, &tx);
    ffb_stmt_new(conn, &stmt);
    /* A large result: a cross join of a system table with itself. */
    const char *sql = "select a.rdb$type, a.rdb$type_name, b.rdb$type_name "
                      "from rdb$types a cross join rdb$types b rows ?";
    if (ffb_stmt_prepare(stmt, tx, sql, (size_t)-1) != 0 ||
        ffb_stmt_bind_int64(stmt, 0, rows) != 0 ||
        ffb_stmt_execute(stmt, tx) != 0) {
        fprintf(stderr, "%s\n", ffb_error_message(ffb_conn_error(conn)));
        ffb_conn_free(conn);
        return 1;
    }
    long n = 0;
    int64_t sum = 0, v;
    int rc;
    while ((rc = ffb_stmt_fetch(stmt)) == 1) {
        ffb_stmt_get_int64(stmt, 0, &v);
        sum += v;
        n++;
    }
    if (rc < 0) {
        fprintf(stderr, "fetch: %s\n", ffb_error_message(ffb_conn_error(conn)));
        ffb_conn_free(conn);
        return 1;
    }
    ffb_stats st;
    ffb_conn_stats(conn, &st, sizeof(st));
    printf("%ld rows, sum %lld, %llu round trips in all, %.1f MiB received\n",
           n, (long long)sum, (unsigned long long)st.round_trips,
           (double)st.bytes_received / (1024.0 * 1024.0));
    ffb_stmt_free(stmt);
    ffb_tx_commit(tx);
    ffb_tx_free(tx);
    ffb_conn_close(conn);
    ffb_conn_free(conn);
    return 0;
}
