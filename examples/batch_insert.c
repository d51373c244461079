/*
 * Batch insert: 1,000 rows with a NULL every seventh row, a blob every
 * tenth, one duplicate key in the middle, sent as one batch with multi_error
 * so the other rows still go in; per-row results printed for the failures.
 *
 *   example_batch_insert host/port:database [password]
 */
#include <stdio.h>
#include <string.h>

#include <fastfb.h>

static int fail(ffb_conn *conn, const char *what) {
    fprintf(stderr, "%s: %s\n", what, ffb_error_message(ffb_conn_error(conn)));
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
    if (ffb_tx_begin(conn, NULL, &tx) != 0)
        return fail(conn, "begin");
    static const char ddl[] = "recreate table example_batch (id integer "
                              "primary key, name varchar(40), doc blob)";
    if (ffb_conn_execute_immediate(conn, tx, ddl, sizeof(ddl) - 1) != 0)
        return fail(conn, "create table");
    if (ffb_tx_commit(tx) != 0) /* DDL is visible once committed */
        return fail(conn, "commit");
    ffb_tx_free(tx);

    if (ffb_tx_begin(conn, NULL, &tx) != 0)
        return fail(conn, "begin");
    ffb_stmt *s;
    if (ffb_stmt_new(conn, &s) != 0 ||
        ffb_stmt_prepare(s, tx,
                         "insert into example_batch (id, name, doc) "
                         "values (?, ?, ?)",
                         (size_t)-1) != 0)
        return fail(conn, "prepare");

    ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
    bo.multi_error = 1; /* go on after a failing row */
    bo.commit = 1;      /* commit in the write of the batch */
    ffb_batch *b;
    if (ffb_batch_new(s, &bo, &b) != 0)
        return fail(conn, "batch");
    for (int i = 1; i <= 1000; i++) {
        char name[40];
        snprintf(name, sizeof(name), "row %d", i);
        ffb_stmt_bind_int64(s, 0, i == 500 ? 499 : i); /* 500: duplicate */
        if (i % 7 == 0)
            ffb_stmt_bind_null(s, 1);
        else
            ffb_stmt_bind_text(s, 1, name, strlen(name));
        if (i % 10 == 0) {
            /* The blob travels inside the batch: no round trip of its own. */
            uint8_t id[8];
            if (ffb_batch_add_blob(b, name, strlen(name), 0, id) != 0)
                return fail(conn, "blob");
            ffb_stmt_bind_blob_id(s, 2, id);
        } else {
            ffb_stmt_bind_null(s, 2);
        }
        if (ffb_batch_add(b) != 0)
            return fail(conn, "add");
    }

    ffb_stats st0, st1;
    ffb_conn_stats(conn, &st0, sizeof(st0));
    int rc = ffb_batch_execute(b, tx);
    ffb_conn_stats(conn, &st1, sizeof(st1));
    if (rc != 0 && rc != FFB_E_SERVER)
        return fail(conn, "execute");
    size_t ok = 0;
    for (size_t i = 0; i < ffb_batch_row_count(b); i++) {
        int64_t n = ffb_batch_row_status(b, i);
        if (n >= 0) {
            ok++;
            continue;
        }
        const ffb_error *e = ffb_batch_row_error(b, i);
        printf("row %zu failed: %s\n", i + 1,
               e ? ffb_error_message(e) : "(no detail kept)");
    }
    printf("%zu of %zu rows inserted and committed in %llu round trips\n",
           ok, ffb_batch_row_count(b),
           (unsigned long long)(st1.round_trips - st0.round_trips));
    ffb_batch_free(b);
    ffb_tx_free(tx);
    ffb_stmt_free(s);
    ffb_conn_close(conn);
    ffb_conn_free(conn);
    return 0;
}
