/*
 * ffb_conn_cache_trim() against real Firebird 3.0 and 4.0: statements of
 * the connection's cache unused for the given time are freed with no round
 * trip of their own (the free rides with the next request), one in use
 * stays, and the next prepare of a freed text rides with its execute (a
 * warm miss, 1 round trip) and reads the right rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/it.h"

typedef it_target target;

static ffb_conn *open_conn(const target *t, int cache) {
    return it_connect(t, cache);
}

static int setup_target(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, 0);
    char sql[512];
    snprintf(sql, sizeof(sql),
             "create table %s (id integer primary key, name varchar(20))",
             t->table);
    it_exec(c, "%s", sql);
    snprintf(sql, sizeof(sql),
             "execute block as declare i integer = 1; begin while (i <= 10) "
             "do begin insert into %s values (:i, 'name ' || :i); i = i + 1; "
             "end end",
             t->table);
    it_exec(c, "%s", sql);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
    return 0;
}

static int teardown_target(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, 0);
    it_exec(c, "drop table %s", t->table);
    ffb_conn_close(c);
    ffb_conn_free(c);
    return 0;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Execute `s` with id = `id`, fetch its one row: its name. */
static void run_one(ffb_conn *c, ffb_tx *tx, ffb_stmt *s, int id,
                    char *name, size_t n) {
    OK(c, ffb_stmt_bind_int64(s, 0, id));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    const char *p;
    size_t len;
    OK(c, ffb_stmt_get_text(s, 0, &p, &len));
    snprintf(name, n, "%.*s", (int)len, p);
    assert_int_equal(ffb_stmt_fetch(s), 0);
}

static void test_cache_trim_idle(void **state) {
    target *t = *state;
    ffb_conn *c = open_conn(t, 8);
    ffb_tx *tx = it_active_tx(c);
    char a[256], b[256], name[64];
    snprintf(a, sizeof(a), "select name from %s where id = ?", t->table);
    snprintf(b, sizeof(b), "select name from %s where id = ? + 1", t->table);
    ffb_stmt *sa, *sb;
    OK(c, ffb_conn_prepare(c, tx, a, (size_t)-1, &sa));
    ffb_stmt_free(sa);
    OK(c, ffb_conn_prepare(c, tx, b, (size_t)-1, &sb));
    ffb_stmt_free(sb);
    assert_int_equal(ffb_conn_cache_trim(NULL, 0), FFB_E_INVAL);
    assert_int_equal(ffb_conn_cache_trim(c, -1), FFB_E_INVAL);
    /* both were given back just now */
    assert_int_equal(ffb_conn_cache_trim(c, 60000), 0);
    sleep_ms(150);
    /* A used again (a hit), B not: B alone is idle for 100 ms */
    uint64_t r0 = it_rts(c);
    OK(c, ffb_conn_prepare(c, tx, a, (size_t)-1, &sa));
    ffb_stmt_free(sa);
    assert_int_equal(ffb_conn_cache_trim(c, 100), 1);
    assert_int_equal(it_rts(c) - r0, 0); /* the hit and the trim: nothing sent */
    /* A's execute + fetch: 1, B's free riding in the same write */
    OK(c, ffb_conn_prepare(c, tx, a, (size_t)-1, &sa));
    run_one(c, tx, sa, 3, name, sizeof name);
    assert_string_equal(name, "name 3");
    assert_int_equal(it_rts(c) - r0, 1);
    /* B again: its formats were remembered and its handle kept, so the
       prepare rides with the execute: prepare + execute + fetch = 1 */
    r0 = it_rts(c);
    OK(c, ffb_conn_prepare(c, tx, b, (size_t)-1, &sb));
    assert_int_equal(it_rts(c) - r0, 0);
    run_one(c, tx, sb, 3, name, sizeof name);
    assert_string_equal(name, "name 4");
    assert_int_equal(it_rts(c) - r0, 1);
    /* B freed again, and a new text C takes its spare handle: B's next
       prepare has no spare at hand; it is still queued (0 now, the
       allocation in the same write), but the execute then costs a round
       trip more (measured: 2 in all, as a plain miss) */
    ffb_stmt_free(sb);
    assert_int_equal(ffb_conn_cache_trim(c, 0), 1); /* A is in use */
    char csql[256];
    ffb_stmt *sc;
    snprintf(csql, sizeof(csql), "select name from %s where id = ? + 2",
             t->table);
    OK(c, ffb_conn_prepare(c, tx, csql, (size_t)-1, &sc));
    run_one(c, tx, sc, 1, name, sizeof name);
    assert_string_equal(name, "name 3");
    ffb_stmt_free(sc);
    r0 = it_rts(c);
    OK(c, ffb_conn_prepare(c, tx, b, (size_t)-1, &sb));
    assert_int_equal(it_rts(c) - r0, 0);
    run_one(c, tx, sb, 5, name, sizeof name);
    assert_string_equal(name, "name 6");
    assert_int_equal(it_rts(c) - r0, 2);
    /* A is still checked out: trim(0) frees B and C only; then A, given
       back */
    ffb_stmt_free(sb);
    assert_int_equal(ffb_conn_cache_trim(c, 0), 2);
    ffb_stmt_free(sa);
    assert_int_equal(ffb_conn_cache_trim(c, 0), 1);
    assert_int_equal(ffb_conn_cache_trim(c, 0), 0);
    /* the three frees ride with the commit: 1 */
    r0 = it_rts(c);
    OK(c, ffb_tx_commit(tx));
    assert_int_equal(it_rts(c) - r0, 1);
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB4"};
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_trim_idle),
    };
    return it_main("CTRIM", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), setup_target,
                   teardown_target);
}
