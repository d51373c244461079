/*
 * Back a database up to the client and restore it into a new database,
 * both through the service manager, the stream held in memory; print the
 * server's version first and the cost of each step.
 *
 *   example_backup_restore [--user U --password P] SOURCE_DSN NEW_PATH
 *
 * SOURCE_DSN is "host[/port]:database"; NEW_PATH is the new database's
 * path on the same server (it must not exist).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fastfb.h>

typedef struct buffer {
    unsigned char *p;
    size_t len, cap, pos;
} buffer;

static int keep(const uint8_t *p, size_t len, void *data) {
    buffer *b = data;
    if (b->len + len > b->cap) {
        size_t cap = (b->len + len) * 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q)
            return 1; /* cancel the backup */
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, len);
    b->len += len;
    return 0;
}

static int give(uint8_t *buf, size_t size, size_t *got, void *data) {
    buffer *b = data;
    size_t n = b->len - b->pos < size ? b->len - b->pos : size;
    memcpy(buf, b->p + b->pos, n);
    b->pos += n;
    *got = n; /* 0 at the end */
    return 0;
}

static uint64_t rt(ffb_conn *conn) {
    ffb_stats st;
    ffb_conn_stats(conn, &st, sizeof(st));
    return st.round_trips;
}

static ffb_conn *service(const ffb_conn_options *o) {
    ffb_conn *c = NULL;
    if (ffb_conn_new(o, &c) < 0 || ffb_svc_connect(c) < 0) {
        fprintf(stderr, "service attach: %s\n",
                c ? ffb_error_message(ffb_conn_error(c)) : "out of memory");
        ffb_conn_free(c);
        return NULL;
    }
    return c;
}

int main(int argc, char **argv) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.user = "SYSDBA";
    o.password = "masterkey";
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "--user") == 0)
            o.user = argv[i + 1];
        else if (strcmp(argv[i], "--password") == 0)
            o.password = argv[i + 1];
    }
    if (argc - i != 2) {
        fprintf(stderr, "usage: %s [--user U --password P] SOURCE_DSN "
                        "NEW_PATH\n", argv[0]);
        return 2;
    }
    o.dsn = argv[i];
    const char *target = argv[i + 1];

    ffb_conn *c = service(&o);
    if (!c)
        return 1;
    ffb_svc_info si;
    if (ffb_svc_server_info(c, &si, sizeof(si)) == 0)
        printf("server %s (%s)\n", si.server_version, si.implementation);
    buffer b = {0};
    int rc = ffb_svc_backup(c, NULL, 0, keep, &b);
    ffb_svc_stats st;
    ffb_svc_last_stats(c, &st, sizeof(st));
    printf("backup: %d, %zu bytes, %llu queries, %llu round trips so far\n",
           rc, b.len, (unsigned long long)st.queries,
           (unsigned long long)rt(c));
    if (rc < 0)
        fprintf(stderr, "%s\n", ffb_error_message(ffb_conn_error(c)));
    ffb_conn_close(c); /* after a streamed backup: a new attachment */
    ffb_conn_free(c);
    if (rc < 0) {
        free(b.p);
        return 1;
    }

    if (!(c = service(&o))) {
        free(b.p);
        return 1;
    }
    rc = ffb_svc_restore(c, target, 0, give, NULL, &b);
    ffb_svc_last_stats(c, &st, sizeof(st));
    printf("restore into %s: %d, %llu bytes sent, %llu queries\n", target,
           rc, (unsigned long long)st.bytes_in,
           (unsigned long long)st.queries);
    if (rc < 0)
        fprintf(stderr, "%s\n", ffb_error_message(ffb_conn_error(c)));
    ffb_conn_close(c);
    ffb_conn_free(c);
    free(b.p);
    return rc < 0;
}
