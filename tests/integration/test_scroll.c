/*
 * Scrollable cursors against Firebird 3.0 and 4.0, which speak protocols
 * 15-17: every scrollable-cursor call is refused with FFB_E_UNSUPPORTED
 * before anything is written, and the connection stays usable. (The
 * Firebird 5 side is tests/engine/test_replay_scroll.c, replaying a
 * recorded 5.0.4 conversation byte for byte.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/it.h"

typedef it_target target;

static ffb_conn *open_conn(const target *t) {
    return it_connect(t, 0);
}

static uint64_t sent(const ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.bytes_sent + st.packets_sent;
}

static void refused(ffb_conn *c, int rc) {
    assert_int_equal(rc, FFB_E_UNSUPPORTED);
    assert_int_equal(ffb_error_code(ffb_conn_error(c)), FFB_E_UNSUPPORTED);
    assert_non_null(
        strstr(ffb_error_message(ffb_conn_error(c)), "protocol 18"));
    assert_int_equal(ffb_conn_is_broken(c), 0);
}

static void test_refused_below_protocol_18(void **state) {
    const target *t = *state;
    ffb_conn *c = open_conn(t);
    assert_true(ffb_conn_protocol(c) < 18);
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_stmt_prepare(s, tx,
                           "SELECT RDB$RELATION_ID FROM RDB$RELATIONS "
                           "WHERE RDB$RELATION_ID < 3 ORDER BY 1",
                           (size_t)-1));

    uint64_t b = it_rts(c), bytes = sent(c);
    refused(c, ffb_stmt_set_scrollable(s, 1));
    assert_int_equal(ffb_stmt_set_scrollable(s, 0), 0); /* forward-only: ok */
    /* A forward-only cursor is open: the scroll calls are still refused
       for the protocol, not for the cursor. */
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(it_rts(c) - b, 1); /* execute + first fetch */
    b = it_rts(c);
    bytes = sent(c);
    assert_int_equal(ffb_stmt_is_scrollable(s), 0);
    refused(c, ffb_stmt_fetch_scroll(s, FFB_FETCH_LAST, 0, 1));
    int64_t n = 0;
    refused(c, ffb_stmt_record_count(s, &n));
    refused(c,
            ffb_stmt_queue_fetch_scroll(s, FFB_FETCH_FIRST, 0, 1, NULL, NULL));
    refused(c, ffb_stmt_queue_record_count(s, NULL, NULL));
    assert_int_equal(ffb_conn_pending(c), 0); /* no result was queued */
    assert_int_equal(sent(c), bytes);         /* nothing was written */
    assert_int_equal(it_rts(c) - b, 0);

    /* Usable after: the cursor reads on from where it was. */
    int64_t id, want = 0;
    while (ffb_stmt_fetch(s) == 1) {
        OK(c, ffb_stmt_get_int64(s, 0, &id));
        assert_int_equal(id, want++);
    }
    assert_int_equal(want, 3);
    assert_int_equal(it_rts(c) - b, 0); /* the 3 rows came with the execute */
    OK(c, ffb_conn_ping(c));
    assert_int_equal(it_rts(c) - b, 1);
    ffb_stmt_free(s);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB4", "FB3E", "FB4E"};
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_below_protocol_18),
    };
    return it_main("SCROLL", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
