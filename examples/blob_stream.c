/*
 * Blob streaming: write a blob from standard input in pieces, store it in a
 * row, read it back in pieces to standard output.
 *
 *   some-command | example_blob_stream DSN [password] > copy
 */
#include <stdio.h>

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
    ffb_tx_begin(conn, NULL, &tx);

    /* Write: buffered, re-framed into segments, sent when closed (or every
       few MiB for large inputs). */
    ffb_blob_options bo = FFB_BLOB_OPTIONS_INIT;
    bo.stream = 1;
    ffb_blob *b;
    if (ffb_blob_create(conn, tx, &bo, &b) != 0)
        return fail(conn, "create");
    char buf[65536];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
        if (ffb_blob_write(b, buf, n) != 0)
            return fail(conn, "write");
        total += n;
    }
    uint8_t id[8];
    if (ffb_blob_close(b, id) != 0)
        return fail(conn, "close");
    ffb_blob_free(b);

    /* Read it back in pieces: the open, its info and the first read go in
       one write; the rest comes in one more. */
    if (ffb_blob_open(conn, tx, id, 0, &b) != 0)
        return fail(conn, "open");
    size_t back = 0;
    for (;;) {
        if (ffb_blob_read(b, buf, sizeof(buf), &n) != 0)
            return fail(conn, "read");
        if (n == 0)
            break;
        fwrite(buf, 1, n, stdout);
        back += n;
    }
    ffb_blob_free(b);
    ffb_stats st;
    ffb_conn_stats(conn, &st, sizeof(st));
    fprintf(stderr, "%zu bytes written, %zu read back, %llu round trips\n",
            total, back, (unsigned long long)st.round_trips);
    ffb_tx_rollback(tx);
    ffb_tx_free(tx);
    ffb_conn_close(conn);
    ffb_conn_free(conn);
    return 0;
}
