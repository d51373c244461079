/*
 * Two-phase commit against real Firebird 3.0 and 4.0 servers: the plain
 * distributed commit over two databases, a prepare that fails (an ON
 * TRANSACTION COMMIT trigger) and rolls every participant back, and a
 * coordinator that dies between the phases: its prepared transactions
 * stay in limbo, are listed (isc_info_limbo) and finished by reconnecting
 * to them (op_reconnect). Every test makes its own two databases in the
 * instance's DB directory (the limbo transactions it leaves on purpose
 * must not reach the shared database) and drops them at the end.
 *
 * Round trips are asserted exactly, the reason beside each number.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "lib/internal.h"
#include "tests/support/it.h"

typedef it_target target;

/* isc_no_recon: "transaction is not in limbo" */
#define NO_RECON 335544353u

/* The DSN of this test's database `tag` on the target's server. */
static void db_dsn(const target *t, const char *tag, char *out, size_t size) {
    char var[64];
    snprintf(var, sizeof(var), "FFB_TEST_%s_DBDIR", t->name);
    const char *dir = getenv(var);
    if (!dir)
        fail_msg("%s is not set", var);
    const char *colon = strchr(t->dsn, ':');
    assert_non_null(colon);
    snprintf(out, size, "%.*s:%s/ffb_2pc_%s_%d_%s.fdb", (int)(colon - t->dsn),
             t->dsn, dir, t->name, (int)getpid(), tag);
}

static ffb_conn *open_dsn(const target *t, const char *dsn) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn;
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.compress = t->compress;
    o.io_timeout_ms = 60000;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    return c;
}

static ffb_conn *attach(const target *t, const char *dsn) {
    ffb_conn *c = open_dsn(t, dsn);
    OK(c, ffb_conn_connect(c));
    return c;
}

/* A new database with table T (id primary key, v). */
static ffb_conn *create_db(const target *t, const char *dsn) {
    ffb_conn *c = open_dsn(t, dsn);
    ffb_create_options co = FFB_CREATE_OPTIONS_INIT;
    co.overwrite = 1;
    OK(c, ffb_conn_create_database(c, &co));
    it_exec(c, "%s", "create table T (id integer primary key, v varchar(40))");
    return c;
}

static void drop_db(const target *t, const char *dsn) {
    ffb_conn *c = attach(t, dsn);
    OK(c, ffb_conn_drop_database(c));
    ffb_conn_free(c);
}

static int64_t count_rows(ffb_conn *c, const char *where) {
    char sql[256];
    snprintf(sql, sizeof(sql), "select count(*) from T%s%s",
             where ? " where " : "", where ? where : "");
    ffb_tx *tx;
    ffb_stmt *s;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_conn_prepare(c, tx, sql, (size_t)-1, &s));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    int64_t n = -1;
    OK(c, ffb_stmt_get_int64(s, 0, &n));
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    ffb_stmt_free(s);
    return n;
}

static void insert(ffb_conn *c, ffb_tx *tx, int id, const char *v) {
    char sql[128];
    snprintf(sql, sizeof(sql), "insert into T values (%d, '%s')", id, v);
    OK(c, ffb_conn_execute_immediate(c, tx, sql, (size_t)-1));
}

typedef struct pair {
    char dsn[2][600];
    ffb_conn *c[2];
} pair;

/* The pair of the running test: a test that fails leaves through a
   longjmp, and the teardown drops its databases. */
static pair *cur;
static const target *cur_t;

static void pair_make(const target *t, pair *p) {
    cur = p;
    cur_t = t;
    db_dsn(t, "a", p->dsn[0], sizeof(p->dsn[0]));
    db_dsn(t, "b", p->dsn[1], sizeof(p->dsn[1]));
    for (int i = 0; i < 2; i++)
        p->c[i] = create_db(t, p->dsn[i]);
}

static void pair_drop(const target *t, pair *p) {
    for (int i = 0; i < 2; i++) {
        if (p->c[i]) {
            ffb_conn_close(p->c[i]);
            ffb_conn_free(p->c[i]);
            p->c[i] = NULL;
        }
        drop_db(t, p->dsn[i]);
    }
    cur = NULL;
}

static int teardown(void **state) {
    (void)state;
    if (!cur)
        return 0;
    for (int i = 0; i < 2; i++) {
        ffb_conn_free(cur->c[i]);
        ffb_conn *c = open_dsn(cur_t, cur->dsn[i]);
        if (ffb_conn_connect(c) == 0)
            ffb_conn_drop_database(c);
        ffb_conn_free(c);
    }
    cur = NULL;
    return 0;
}

static void expect_limbo(ffb_conn *c, const int64_t *want, size_t nwant) {
    int64_t ids[8];
    size_t n = 99;
    uint64_t r0 = it_rts(c);
    assert_int_equal(ffb_conn_limbo(c, ids, 8, &n), 0);
    assert_int_equal(it_rts(c) - r0, 1); /* one op_info_database */
    assert_int_equal(n, nwant);
    for (size_t i = 0; i < nwant; i++)
        assert_int_equal(ids[i], want[i]);
}

/* The plain distributed commit: a start on each database (lazy: it rides
   with the insert, 1 round trip each), phase one on both (prepare with a
   message and the transaction number asked in the same write: 1 round
   trip each, the two overlapping), phase two (1 each). */
static void test_dtx_commit(void **state) {
    target *t = *state;
    static pair p; /* outlives a failure: the teardown reads it */
    memset(&p, 0, sizeof(p));
    pair_make(t, &p);
    uint64_t r0[2] = {it_rts(p.c[0]), it_rts(p.c[1])};
    ffb_dtx *d;
    OK(p.c[0], ffb_dtx_begin(p.c, 2, NULL, &d));
    assert_int_equal(ffb_dtx_count(d), 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(it_rts(p.c[i]) - r0[i], 0); /* begin: queued only */
        insert(p.c[i], ffb_dtx_tx(d, i), 1, i ? "b" : "a");
        assert_int_equal(it_rts(p.c[i]) - r0[i], 1); /* start + insert */
    }
    assert_int_equal(ffb_dtx_tx_id(d, 0), 0);
    static const char msg[] = "ffb coordinator test_dtx_commit";
    OK(p.c[0], ffb_dtx_prepare(d, msg, sizeof(msg) - 1));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(it_rts(p.c[i]) - r0[i], 2); /* info + prepare2 */
        assert_true(ffb_dtx_tx_id(d, i) > 0);
        assert_int_equal(ffb_tx_is_prepared(ffb_dtx_tx(d, i)), 1);
    }
    /* A second prepare is refused without a word to the server. */
    assert_int_equal(ffb_dtx_prepare(d, NULL, 0), FFB_E_STATE);
    assert_int_equal(ffb_dtx_failed(d), 0);
    OK(p.c[0], ffb_dtx_commit(d));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(it_rts(p.c[i]) - r0[i], 3); /* commit */
        assert_int_equal(ffb_tx_is_active(ffb_dtx_tx(d, i)), 0);
        assert_int_equal(ffb_tx_is_prepared(ffb_dtx_tx(d, i)), 0);
    }
    assert_int_equal(ffb_dtx_failed(d), -1);
    assert_int_equal(ffb_dtx_commit(d), FFB_E_STATE);
    ffb_dtx_free(d);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(count_rows(p.c[i], NULL), 1);
        expect_limbo(p.c[i], NULL, 0);
    }

    /* ffb_dtx_commit without ffb_dtx_prepare: both phases (2 round trips
       each: info + prepare, then commit). */
    OK(p.c[0], ffb_dtx_begin(p.c, 2, NULL, &d));
    for (int i = 0; i < 2; i++)
        insert(p.c[i], ffb_dtx_tx(d, i), 2, "x");
    uint64_t r1[2] = {it_rts(p.c[0]), it_rts(p.c[1])};
    OK(p.c[0], ffb_dtx_commit(d));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(it_rts(p.c[i]) - r1[i], 2);
        assert_int_equal(count_rows(p.c[i], NULL), 2);
    }
    ffb_dtx_free(d);

    /* Single transaction: prepare (op_prepare, no message) then roll
       back the prepared transaction: 1 round trip each. */
    ffb_tx *tx;
    OK(p.c[0], ffb_tx_begin(p.c[0], NULL, &tx));
    insert(p.c[0], tx, 3, "single");
    uint64_t r2 = it_rts(p.c[0]);
    OK(p.c[0], ffb_tx_prepare(tx, NULL, 0));
    assert_int_equal(it_rts(p.c[0]) - r2, 1); /* op_prepare */
    assert_int_equal(ffb_tx_is_prepared(tx), 1);
    assert_int_equal(ffb_tx_prepare(tx, NULL, 0), FFB_E_STATE);
    OK(p.c[0], ffb_tx_rollback(tx));
    assert_int_equal(it_rts(p.c[0]) - r2, 2); /* op_rollback */
    ffb_tx_free(tx);
    assert_int_equal(count_rows(p.c[0], "id = 3"), 0);

    /* Queued: start, insert, prepare2 and commit in one write (1 round
       trip). */
    OK(p.c[0], ffb_tx_begin(p.c[0], NULL, &tx));
    r2 = it_rts(p.c[0]);
    OK(p.c[0], ffb_conn_queue_execute_immediate(
                   p.c[0], tx, "insert into T values (4, 'queued')",
                   (size_t)-1, NULL, 0, NULL, NULL));
    OK(p.c[0], ffb_tx_queue_prepare(tx, "q", 1, NULL, NULL));
    OK(p.c[0], ffb_tx_queue_commit(tx, NULL, NULL));
    const ffb_result *res;
    int ops[] = {FFB_OP_EXECUTE_IMMEDIATE, FFB_OP_TX_PREPARE, FFB_OP_COMMIT};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(ffb_conn_next_result(p.c[0], &res), 1);
        assert_int_equal(ffb_result_op(res), ops[k]);
        assert_int_equal(ffb_result_status(res), 0);
    }
    assert_int_equal(it_rts(p.c[0]) - r2, 1);
    ffb_tx_free(tx);
    assert_int_equal(count_rows(p.c[0], "id = 4"), 1);
    pair_drop(t, &p);
}

/* Phase one fails on the second database (its ON TRANSACTION COMMIT
   trigger raises an exception, which a prepare runs): both participants
   are rolled back (1 more round trip each), nothing is in limbo. */
static void test_dtx_prepare_fails(void **state) {
    target *t = *state;
    static pair p; /* outlives a failure: the teardown reads it */
    memset(&p, 0, sizeof(p));
    pair_make(t, &p);
    it_exec(p.c[1], "%s", "create exception E_2PC 'refused by the trigger'");
    it_exec(p.c[1], "%s",
            "create trigger TR_2PC on transaction commit as begin "
            "if (exists(select 1 from T where id < 0)) then "
            "exception E_2PC; end");
    ffb_dtx *d;
    OK(p.c[0], ffb_dtx_begin(p.c, 2, NULL, &d));
    insert(p.c[0], ffb_dtx_tx(d, 0), 1, "a");
    insert(p.c[1], ffb_dtx_tx(d, 1), -1, "refused");
    uint64_t r0[2] = {it_rts(p.c[0]), it_rts(p.c[1])};
    assert_int_equal(ffb_dtx_prepare(d, "m", 1), FFB_E_SERVER);
    assert_int_equal(ffb_dtx_failed(d), 1);
    const ffb_error *e = ffb_dtx_error(d);
    assert_non_null(e);
    assert_non_null(strstr(ffb_error_message(e), "refused by the trigger"));
    for (int i = 0; i < 2; i++) {
        /* info + prepare, then the rollback of every participant */
        assert_int_equal(it_rts(p.c[i]) - r0[i], 2);
        assert_int_equal(ffb_tx_is_active(ffb_dtx_tx(d, i)), 0);
    }
    assert_int_equal(ffb_dtx_commit(d), FFB_E_STATE);
    ffb_dtx_free(d);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(count_rows(p.c[i], NULL), 0);
        expect_limbo(p.c[i], NULL, 0);
    }
    pair_drop(t, &p);
}

/* Lose the connection the way a crash does: the socket closes with
   nothing more said (no op_detach, no op_disconnect), then the
   connection object is freed. */
static void crash(ffb_conn *c) {
    shutdown(c->net.fd, SHUT_RDWR);
    ffb_conn_free(c);
}

/* The coordinator dies between the phases. The server keeps both
   prepared transactions in limbo; a recovering coordinator lists them on
   each database (1 round trip), reconnects to each and finishes it -
   here commits database a's and rolls back database b's (op_reconnect
   travels with the commit or rollback: 1 round trip each). */
static void test_crash_recover(void **state) {
    target *t = *state;
    static pair p; /* outlives a failure: the teardown reads it */
    memset(&p, 0, sizeof(p));
    pair_make(t, &p);
    ffb_dtx *d;
    OK(p.c[0], ffb_dtx_begin(p.c, 2, NULL, &d));
    for (int i = 0; i < 2; i++)
        insert(p.c[i], ffb_dtx_tx(d, i), 7, "in doubt");
    /* In the format Firebird's own coordinator writes and gfix reads (a
       transaction description record: version 1, then items of byte tag,
       byte length, value): the host site. The server's blob filter for
       RDB$TRANSACTION_DESCRIPTION renders it as text. */
    static const char msg[] = "\x01\x01\x07" "ffbhost";
    OK(p.c[0], ffb_dtx_prepare(d, msg, sizeof(msg) - 1));
    int64_t id[2] = {ffb_dtx_tx_id(d, 0), ffb_dtx_tx_id(d, 1)};
    assert_true(id[0] > 0 && id[1] > 0);
    /* Freeing the dtx leaves prepared transactions alone: nothing is
       queued for them. Then the crash: neither commit nor rollback. */
    ffb_dtx_free(d);
    for (int i = 0; i < 2; i++)
        assert_int_equal(p.c[i]->stage.len, 0);
    for (int i = 0; i < 2; i++) {
        crash(p.c[i]);
        p.c[i] = NULL;
    }

    ffb_conn **c = p.c;
    for (int i = 0; i < 2; i++) {
        c[i] = attach(t, p.dsn[i]);
        /* The listing waits until the server has ended the dead
           attachment; then the prepared transaction is in limbo. */
        expect_limbo(c[i], &id[i], 1);
        /* The prepare's message is stored with it. */
        char sql[200];
        snprintf(sql, sizeof(sql),
                 "select rdb$transaction_state, cast(rdb$transaction_"
                 "description as varchar(100)) from rdb$transactions "
                 "where rdb$transaction_id = %lld", (long long)id[i]);
        ffb_tx *rt;
        ffb_stmt *s;
        OK(c[i], ffb_tx_begin(c[i], NULL, &rt));
        OK(c[i], ffb_conn_prepare(c[i], rt, sql, (size_t)-1, &s));
        OK(c[i], ffb_stmt_execute(s, rt));
        assert_int_equal(ffb_stmt_fetch(s), 1);
        int64_t st = 0;
        const char *text;
        size_t tlen;
        OK(c[i], ffb_stmt_get_int64(s, 0, &st));
        assert_int_equal(st, 1); /* limbo */
        OK(c[i], ffb_stmt_get_text(s, 1, &text, &tlen));
        char buf[128];
        snprintf(buf, sizeof(buf), "%.*s", (int)tlen, text);
        if (!strstr(buf, "version: 1") || !strstr(buf, "Host site: ffbhost"))
            fail_msg("description \"%s\"", buf);
        ffb_stmt_free(s);
        OK(c[i], ffb_tx_commit(rt));
        ffb_tx_free(rt);
    }
    /* Reconnecting to a number not in limbo: the commit behind it fails
       with the server's refusal (isc_no_recon), nothing else changes. */
    ffb_tx *tx;
    OK(c[0], ffb_conn_reconnect_tx(c[0], id[0] + 1000, &tx));
    uint64_t r0 = it_rts(c[0]);
    assert_int_equal(ffb_tx_commit(tx), FFB_E_ABORTED);
    assert_int_equal(it_rts(c[0]) - r0, 1); /* reconnect + commit */
    assert_int_equal(ffb_error_gds(ffb_conn_error(c[0])), NO_RECON);
    ffb_tx_free(tx);
    expect_limbo(c[0], &id[0], 1);

    /* Recover: commit a's, roll back b's. On b another transaction is
       active and was allocated last: had the reconnect failed, 0xFFFF
       would name it, so the rollback waits for the reconnect's answer
       (2 round trips) and that transaction is untouched. */
    ffb_tx *other = it_active_tx(c[1]);
    for (int i = 0; i < 2; i++) {
        OK(c[i], ffb_conn_reconnect_tx(c[i], id[i], &tx));
        assert_int_equal(ffb_tx_is_prepared(tx), 1);
        r0 = it_rts(c[i]);
        OK(c[i], i == 0 ? ffb_tx_commit(tx) : ffb_tx_rollback(tx));
        /* a: reconnect + commit in one write; b: reconnect, rollback */
        assert_int_equal(it_rts(c[i]) - r0, i == 0 ? 1 : 2);
        assert_int_equal(ffb_tx_is_active(tx), 0);
        ffb_tx_free(tx);
        expect_limbo(c[i], NULL, 0);
    }
    assert_int_equal(ffb_tx_is_active(other), 1);
    OK(c[1], ffb_tx_commit(other));
    ffb_tx_free(other);
    assert_int_equal(count_rows(c[0], "id = 7"), 1);
    assert_int_equal(count_rows(c[1], "id = 7"), 0);
    /* The finished transaction cannot be reconnected to again. */
    OK(c[0], ffb_conn_reconnect_tx(c[0], id[0], &tx));
    assert_int_equal(ffb_tx_rollback(tx), FFB_E_ABORTED);
    ffb_tx_free(tx);
    pair_drop(t, &p);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB3E", "FB4", "FB4E"};
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_dtx_commit, teardown),
        cmocka_unit_test_teardown(test_dtx_prepare_fails, teardown),
        cmocka_unit_test_teardown(test_crash_recover, teardown),
    };
    return it_main("TWOPC", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
