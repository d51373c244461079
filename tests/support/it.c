#include "tests/support/it.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

size_t it_servers(const char *const *names, size_t nnames, it_server *out) {
    if (!getenv("FFB_TEST_SERVERS")) {
        const char *req = getenv("FFB_TEST_REQUIRE_SERVER");
        if (req && strcmp(req, "1") == 0) {
            fprintf(stderr, "FFB_TEST_REQUIRE_SERVER=1 but no servers.env "
                            "in the environment\n");
            exit(1);
        }
        fprintf(stderr, "no Firebird servers configured: skipped\n");
        exit(77);
    }
    size_t n = 0;
    for (size_t i = 0; i < nnames; i++) {
        char var[64];
        snprintf(var, sizeof(var), "FFB_TEST_%s_PORT", names[i]);
        const char *port = getenv(var);
        snprintf(var, sizeof(var), "FFB_TEST_%s_DB", names[i]);
        const char *db = getenv(var);
        snprintf(var, sizeof(var), "FFB_TEST_%s_VERSION", names[i]);
        const char *ver = getenv(var);
        snprintf(var, sizeof(var), "FFB_TEST_%s_HOST", names[i]);
        const char *host = getenv(var);
        if (!port || !db || !ver)
            continue;
        it_server *s = &out[n++];
        snprintf(s->name, sizeof(s->name), "%s", names[i]);
        snprintf(s->dsn, sizeof(s->dsn), "%s/%s:%s",
                 host ? host : "127.0.0.1", port, db);
        s->version = atoi(ver);
        s->compress = strcmp(names[i], "FB4E") == 0;
    }
    if (n == 0) {
        fprintf(stderr, "servers.env describes none of the instances this "
                        "suite needs\n");
        exit(1);
    }
    return n;
}

void it_options(const it_target *t, ffb_conn_options *o) {
    *o = (ffb_conn_options)FFB_CONN_OPTIONS_INIT;
    o->dsn = t->dsn;
    o->user = "SYSDBA";
    o->password = "masterkey";
    o->compress = t->compress;
    o->io_timeout_ms = 120000;
}

ffb_conn *it_open(const ffb_conn_options *o) {
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(o, &c), 0);
    OK(c, ffb_conn_connect(c));
    return c;
}

ffb_conn *it_connect(const it_target *t, int stmt_cache_size) {
    ffb_conn_options o;
    it_options(t, &o);
    o.stmt_cache_size = stmt_cache_size;
    return it_open(&o);
}

uint64_t it_rts(const ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

/* The suites run in parallel against the same databases: DDL of two of
   them at once can conflict on the system tables (update conflict,
   SQLSTATE 40001, at the commit). Such a statement is tried again, up to
   10 times; every other error fails the test. */
void it_exec(ffb_conn *c, const char *fmt, const char *arg) {
    char sql[1024];
    snprintf(sql, sizeof(sql), fmt, arg);
    for (int attempt = 1;; attempt++) {
        ffb_tx *tx;
        OK(c, ffb_tx_begin(c, NULL, &tx));
        int rc = ffb_conn_execute_immediate(c, tx, sql, (size_t)-1);
        if (rc == 0)
            rc = ffb_tx_commit(tx);
        if (rc == FFB_E_SERVER && attempt < 10 &&
            strcmp(ffb_error_sqlstate(ffb_conn_error(c)), "40001") == 0) {
            if (ffb_tx_is_active(tx))
                OK(c, ffb_tx_rollback(tx));
            ffb_tx_free(tx);
            fprintf(stderr, "%s: update conflict (attempt %d), again\n",
                    sql, attempt);
            nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
            continue;
        }
        OK(c, rc);
        ffb_tx_free(tx);
        return;
    }
}

void it_post_event(ffb_conn *c, const char *name, int times) {
    char sql[2048];
    int n = snprintf(sql, sizeof(sql), "EXECUTE BLOCK AS BEGIN ");
    for (int i = 0; i < times && i < 20; i++)
        n += snprintf(sql + n, sizeof(sql) - (size_t)n, "POST_EVENT '%.*s'; ",
                      64, name);
    snprintf(sql + n, sizeof(sql) - (size_t)n, "END");
    it_exec(c, "%s", sql);
}

ffb_tx *it_active_tx(ffb_conn *c) {
    ffb_tx *tx;
    int64_t id;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_tx_id(tx, &id));
    return tx;
}

int it_main(const char *suite, const char *const *names, size_t nnames,
            const struct CMUnitTest *tests, size_t ntests,
            int (*setup)(void **), int (*teardown)(void **)) {
    it_server sv[8];
    if (nnames > 8)
        nnames = 8;
    size_t n = it_servers(names, nnames, sv);
    struct CMUnitTest *group = malloc(ntests * sizeof(*group));
    if (!group)
        return 1;
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        it_target t;
        memset(&t, 0, sizeof(t));
        memcpy(t.name, sv[i].name, sizeof(t.name));
        memcpy(t.dsn, sv[i].dsn, sizeof(t.dsn));
        t.version = sv[i].version;
        t.compress = sv[i].compress;
        snprintf(t.table, sizeof(t.table), "T_%s_%.15s_%d", suite,
                 sv[i].name, (int)getpid());
        snprintf(t.btable, sizeof(t.btable), "T_%sB_%.15s_%d", suite,
                 sv[i].name, (int)getpid());
        for (size_t k = 0; k < ntests; k++) {
            group[k] = tests[k];
            group[k].initial_state = &t;
        }
        void *st = &t;
        if (setup)
            setup(&st);
        failed += _cmocka_run_group_tests(t.name, group, ntests, NULL, NULL);
        if (teardown)
            teardown(&st);
    }
    free(group);
    return failed ? 1 : 0;
}
