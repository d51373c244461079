/*
 * Shared format memory (ffb_formats) against real Firebird 3.0 and 4.0:
 * once connection A has prepared a text, the first ffb_conn_prepare() +
 * execute of it on connection B (never used before: spare handles rode
 * with its op_attach) is one round trip - prepare + execute + fetch
 * [+ commit] in one write. A wrong shared entry (ALTER TABLE on A) costs
 * B round trips, never a wrong answer. Shared between two threads, and
 * by default between the connections of a pool.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/it.h"

typedef it_target target;

static void fill(ffb_conn_options *o, const target *t, ffb_formats *f) {
    ffb_conn_options_init(o);
    o->dsn = t->dsn;
    o->user = "SYSDBA";
    o->password = "masterkey";
    o->compress = t->compress;
    o->io_timeout_ms = 60000;
    o->formats = f;
}

static ffb_conn *open_conn(const target *t, ffb_formats *f) {
    ffb_conn_options o;
    fill(&o, t, f);
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    OK(c, ffb_conn_connect(c));
    return c;
}

static void close_conn(ffb_conn *c) {
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

static int setup_target(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    it_exec(c, "create table %s (id integer primary key, name varchar(20))",
            t->table);
    it_exec(c,
            "execute block as declare i integer = 1; begin while (i <= 10) "
            "do begin insert into %s values (:i, 'name ' || :i); "
            "i = i + 1; end end",
            t->table);
    close_conn(c);
    return 0;
}

static int teardown_target(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, NULL);
    it_exec(c, "drop table %s", t->table);
    close_conn(c);
    return 0;
}

/* The tx for a prepare: Firebird 3 prepares only inside one. */
static ffb_tx *begin(ffb_conn *c) {
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    return tx;
}

/* ffb_conn_prepare(sql) + execute with id + one row: its first column as
   text; the round trips it took. */
static uint64_t run_select(ffb_conn *c, ffb_tx *tx, const char *sql, int id,
                           char *out, size_t n) {
    uint64_t r0 = it_rts(c);
    ffb_stmt *s;
    OK(c, ffb_conn_prepare(c, tx, sql, (size_t)-1, &s));
    OK(c, ffb_stmt_bind_int64(s, 0, id));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    const char *p;
    size_t len;
    OK(c, ffb_stmt_get_text(s, 0, &p, &len));
    snprintf(out, n, "%.*s", (int)len, p);
    ffb_stmt_free(s);
    return it_rts(c) - r0;
}

static void test_formats_select(void **state) {
    target *t = *state;
    ffb_formats *f = NULL;
    assert_int_equal(ffb_formats_new(0, &f), 0);
    ffb_conn *a = open_conn(t, f), *b = open_conn(t, f);
    ffb_formats_unref(f); /* the connections hold theirs */
    /* the spare handles rode with op_attach: no connect round trip more
       than without shared formats */
    ffb_conn *plain = open_conn(t, NULL);
    assert_int_equal(it_rts(b), it_rts(plain));
    close_conn(plain);
    char sql[256], name[64];
    snprintf(sql, sizeof sql, "select name from %s where id = ?", t->table);
    ffb_tx *ta = begin(a);
    uint64_t ra = run_select(a, ta, sql, 3, name, sizeof name);
    assert_string_equal(name, "name 3");
    /* cold: FB4 prepare (system transaction), execute + fetch = 2; FB3
       also reads its transaction's start first (it prepares only in a
       started one) = 3 */
    assert_int_equal(ra, t->version >= 4 ? 2 : 3);
    OK(a, ffb_tx_commit(ta));
    ffb_tx_free(ta);
    ffb_formats_stats st;
    assert_int_equal(ffb_formats_stats_get(f, &st, sizeof st), 0);
    assert_int_equal(st.entries, 1);
    /* B never ran anything: its lazy start, the prepare on a spare handle
       (allocated with its attach), execute and fetch in one write */
    ffb_tx *tb = begin(b);
    uint64_t rb = run_select(b, tb, sql, 4, name, sizeof name);
    assert_string_equal(name, "name 4");
    assert_int_equal(rb, 1); /* start, unprepare, prepare, execute, fetch */
    assert_int_equal(ffb_formats_stats_get(f, &st, sizeof st), 0);
    assert_int_equal(st.hits, 1);
    OK(b, ffb_tx_commit(tb));
    ffb_tx_free(tb);
    close_conn(a);
    close_conn(b);
}

static void test_formats_insert_autocommit(void **state) {
    target *t = *state;
    ffb_formats *f = NULL;
    assert_int_equal(ffb_formats_new(0, &f), 0);
    ffb_conn *a = open_conn(t, f), *b = open_conn(t, f);
    ffb_formats_unref(f);
    char sql[256];
    snprintf(sql, sizeof sql, "insert into %s values (?, ?)", t->table);
    ffb_conn *cs[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        ffb_conn *c = cs[k];
        /* Firebird 4 prepares without a transaction; 3 in one that is
           then only read from (its start rides along) */
        ffb_tx *ptx = t->version >= 4 ? NULL : begin(c);
        uint64_t r0 = it_rts(c);
        ffb_stmt *s;
        OK(c, ffb_conn_prepare(c, ptx, sql, (size_t)-1, &s));
        OK(c, ffb_stmt_bind_int64(s, 0, 100 + k));
        OK(c, ffb_stmt_bind_text(s, 1, "ins", (size_t)-1));
        OK(c, ffb_stmt_execute(s, NULL)); /* auto-commit */
        assert_int_equal(ffb_stmt_rows_affected(s), 1);
        /* A cold (as the select), B: prepare + own transaction's start +
           execute + row count + commit in one write */
        assert_int_equal(it_rts(c) - r0,
                         k ? 1 : t->version >= 4 ? 2 : 3);
        ffb_stmt_free(s);
        if (ptx) {
            OK(c, ffb_tx_commit(ptx));
            ffb_tx_free(ptx);
        }
    }
    /* both rows are there, committed */
    char name[64];
    ffb_tx *tx = begin(a);
    char q[256];
    snprintf(q, sizeof q, "select count(*) from %s where id in (100, ?)",
             t->table);
    run_select(a, tx, q, 101, name, sizeof name);
    assert_string_equal(name, "2");
    OK(a, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    it_exec(a, "delete from %s where id >= 100", t->table);
    close_conn(a);
    close_conn(b);
}

static void test_formats_execute_block(void **state) {
    target *t = *state;
    ffb_formats *f = NULL;
    assert_int_equal(ffb_formats_new(0, &f), 0);
    ffb_conn *a = open_conn(t, f), *b = open_conn(t, f);
    ffb_formats_unref(f);
    char sql[512], name[64];
    snprintf(sql, sizeof sql,
             "execute block (i integer = ?) returns (n varchar(30)) as "
             "begin select name from %s where id = :i into :n; suspend; end",
             t->table);
    ffb_tx *ta = begin(a);
    uint64_t ra = run_select(a, ta, sql, 5, name, sizeof name);
    assert_string_equal(name, "name 5");
    OK(a, ffb_tx_commit(ta));
    ffb_tx_free(ta);
    ffb_tx *tb = begin(b);
    uint64_t rb = run_select(b, tb, sql, 6, name, sizeof name);
    assert_string_equal(name, "name 6");
    assert_int_equal(ra, t->version >= 4 ? 2 : 3); /* cold */
    assert_int_equal(rb, 1);                       /* shared */
    OK(b, ffb_tx_commit(tb));
    ffb_tx_free(tb);
    close_conn(a);
    close_conn(b);
}

/* DDL on A: B's entry is stale, the describe check catches it. */
static void test_formats_alter(void **state) {
    target *t = *state;
    ffb_formats *f = NULL;
    assert_int_equal(ffb_formats_new(0, &f), 0);
    ffb_conn *a = open_conn(t, f), *b = open_conn(t, f), *c = open_conn(t, f);
    ffb_formats_unref(f);
    it_exec(a, "create table %s (id integer primary key, v smallint)",
            t->btable);
    it_exec(a, "insert into %s values (1, 7)", t->btable);
    char sql[256], name[64];
    snprintf(sql, sizeof sql, "select * from %s where id = ?", t->btable);
    ffb_tx *tx = begin(a);
    run_select(a, tx, sql, 1, name, sizeof name);
    OK(a, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    /* the type of v changes, a column is added: */
    it_exec(a, "alter table %s alter v type varchar(10)", t->btable);
    it_exec(a, "alter table %s add w varchar(5) default 'w' not null",
            t->btable);
    it_exec(a, "update %s set v = 'seven'", t->btable);
    tx = begin(b);
    uint64_t r0 = it_rts(b);
    ffb_stmt *s;
    OK(b, ffb_conn_prepare(b, tx, sql, (size_t)-1, &s));
    OK(b, ffb_stmt_bind_int64(s, 0, 1));
    OK(b, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_column_count(s), 3);
    assert_int_equal(ffb_stmt_fetch(s), 1);
    const char *p;
    size_t len;
    OK(b, ffb_stmt_get_text(s, 1, &p, &len));
    assert_int_equal(len, 5);
    assert_memory_equal(p, "seven", 5);
    OK(b, ffb_stmt_get_text(s, 2, &p, &len));
    assert_memory_equal(p, "w", 1);
    assert_int_equal(ffb_stmt_fetch(s), 0);
    /* the write with the stale formats (its rows refused: they came in
       the new ones), then the execute again: 2 */
    assert_int_equal(it_rts(b) - r0, 2);
    ffb_stmt_free(s);
    OK(b, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    /* a rename keeps the types: only the names differ, and C sees the
       new one (B stored the 3-column describe) */
    it_exec(a, "alter table %s alter w to w2", t->btable);
    tx = begin(c);
    r0 = it_rts(c);
    OK(c, ffb_conn_prepare(c, tx, sql, (size_t)-1, &s));
    OK(c, ffb_stmt_bind_int64(s, 0, 1));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    assert_string_equal(ffb_stmt_column_name(s, 2), "W2");
    /* same types: the rows decode as they are, the names are taken
       from the describe: 1 */
    assert_int_equal(it_rts(c) - r0, 1);
    ffb_stmt_free(s);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    close_conn(b);
    close_conn(c);
    it_exec(a, "drop table %s", t->btable);
    close_conn(a);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB4"};
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats_select),
        cmocka_unit_test(test_formats_insert_autocommit),
        cmocka_unit_test(test_formats_execute_block),
        cmocka_unit_test(test_formats_alter),
    };
    return it_main("FMTS", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), setup_target,
                   teardown_target);
}
