/*
 * A parameterised query: prepare once, bind, execute, read typed values.
 *
 *   example_query DSN [password]
 */
#include <stdio.h>

#include <fastfb.h>

static int fail(ffb_conn *conn, const char *what) {
    const ffb_error *e = ffb_conn_error(conn);
    fprintf(stderr, "%s: %s (SQLSTATE %s)\n", what, ffb_error_message(e),
            ffb_error_sqlstate(e));
    ffb_conn_free(conn);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s host/port:database [password]\n", argv[0]);
        return 2;
    }
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = argv[1];
    o.password = argc > 2 ? argv[2] : "masterkey";
    ffb_conn *conn;
    if (ffb_conn_new(&o, &conn) != 0) /* FFB_E_INVAL: conn says why */
        return conn ? fail(conn, "options") : 2;
    if (ffb_conn_connect(conn) != 0)
        return fail(conn, "connect");

    ffb_tx *tx;
    ffb_stmt *stmt;
    if (ffb_tx_begin(conn, NULL, &tx) != 0 || ffb_stmt_new(conn, &stmt) != 0)
        return fail(conn, "setup");
    const char *sql = "select rdb$relation_id, rdb$relation_name, "
                      "rdb$system_flag = 1 from rdb$relations "
                      "where rdb$relation_id < ? order by 1";
    if (ffb_stmt_prepare(stmt, tx, sql, (size_t)-1) != 0)
        return fail(conn, "prepare");
    if (ffb_stmt_bind_int64(stmt, 0, 10) != 0)
        return fail(conn, "bind");
    if (ffb_stmt_execute(stmt, tx) != 0)
        return fail(conn, "execute");
    int rc;
    while ((rc = ffb_stmt_fetch(stmt)) == 1) {
        int64_t id;
        const char *name;
        size_t len;
        int system;
        ffb_stmt_get_int64(stmt, 0, &id);
        ffb_stmt_get_text_trimmed(stmt, 1, &name, &len);
        ffb_stmt_get_bool(stmt, 2, &system);
        printf("%3lld  %-31.*s %s\n", (long long)id, (int)len, name,
               system ? "system" : "user");
    }
    if (rc < 0)
        return fail(conn, "fetch");
    ffb_stats st;
    ffb_conn_stats(conn, &st, sizeof(st));
    printf("round trips so far: %llu\n", (unsigned long long)st.round_trips);
    ffb_stmt_free(stmt);
    ffb_tx_commit(tx);
    ffb_tx_free(tx);
    ffb_conn_close(conn);
    ffb_conn_free(conn);
    return 0;
}
