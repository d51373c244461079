/*
 * A connection pool shared by eight threads: each acquires a connection,
 * runs a query through the statement cache, and releases it (which rolls
 * back anything left open). Four connections serve them; a thread that
 * finds them all in use waits its turn (first come, first served).
 *
 *   example_pool_threads DSN [password]
 */
#include <pthread.h>
#include <stdio.h>

#include <fastfb.h>

static ffb_pool *pool;

static void *worker(void *arg) {
    int id = *(int *)arg;
    for (int i = 0; i < 100; i++) {
        ffb_conn *conn;
        if (ffb_pool_acquire(pool, -1, &conn) != 0) {
            ffb_pool_error_info e;
            ffb_pool_error(pool, &e, sizeof e);
            fprintf(stderr, "thread %d: %s\n", id, e.message);
            return NULL;
        }
        ffb_tx *tx;
        ffb_stmt *stmt;
        int64_t n = 0;
        if (ffb_tx_begin(conn, NULL, &tx) == 0 &&
            ffb_conn_prepare(conn, tx,
                             "select count(*) from rdb$relations where "
                             "rdb$relation_id < ?",
                             (size_t)-1, &stmt) == 0) {
            ffb_stmt_bind_int64(stmt, 0, i);
            if (ffb_stmt_execute(stmt, tx) == 0 && ffb_stmt_fetch(stmt) == 1)
                ffb_stmt_get_int64(stmt, 0, &n);
            ffb_stmt_free(stmt); /* back to the connection's cache */
            ffb_tx_commit(tx);
            ffb_tx_free(tx);
        } else {
            fprintf(stderr, "thread %d: %s\n", id,
                    ffb_error_message(ffb_conn_error(conn)));
        }
        ffb_pool_release(pool, conn);
        if (i == 99)
            printf("thread %d: %lld relations below id 99\n", id, (long long)n);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s host/port:database [password]\n", argv[0]);
        return 2;
    }
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = argv[1];
    o.password = argc > 2 ? argv[2] : "masterkey";
    ffb_pool_options po = FFB_POOL_OPTIONS_INIT;
    po.conn = &o;
    po.min_size = 1;
    po.max_size = 4;
    if (ffb_pool_new(&po, &pool) != 0) {
        ffb_pool_error_info e;
        ffb_pool_error(pool, &e, sizeof e);
        fprintf(stderr, "pool: %s\n", e.message);
        ffb_pool_free(pool);
        return 1;
    }
    enum { THREADS = 8 };
    pthread_t th[THREADS];
    int ids[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ids[i] = i + 1;
        pthread_create(&th[i], NULL, worker, &ids[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    ffb_pool_counters s;
    ffb_pool_stats(pool, &s, sizeof s);
    printf("%llu acquires served by %llu connections\n",
           (unsigned long long)s.acquired, (unsigned long long)s.created);
    ffb_pool_free(pool);
    return 0;
}
