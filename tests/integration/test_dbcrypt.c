/*
 * Database encryption keys against a real Firebird 4.0 server with the
 * sample crypt plugins Firebird ships (fbSampleDbCrypt, fbSampleKeyHolder:
 * the key is one byte, asked from the client with an empty request and
 * room for 1 byte). tests/servers/fbservers.sh starts the instance fb4k
 * with "KeyHolderPlugin = fbSampleKeyHolder"; this suite makes its own
 * database there (FFB_TEST_FB4K_*, or any database path on such a server
 * in FFB_TEST_DBCRYPT_DSN, see docs/crypto.md). Without either it is
 * skipped (exit 77), and with FFB_TEST_REQUIRE_SERVER=1 that is a failure.
 * It creates the database, encrypts it, and attaches with the right key,
 * a wrong one, none, and a refusing callback.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/check.h"

#define GDS_DB_CRYPT_KEY 335545204u  /* the attachment lacks the key */
#define GDS_BAD_CRYPT_KEY 335545108u /* crypt key is not valid */

static const char *dsn;

typedef struct key {
    int value; /* < 0: refuse */
    int calls;
    size_t size, req_len;
} key;

static int key_cb(void *data, const uint8_t *request, size_t request_len,
                  uint8_t *reply, size_t reply_size) {
    (void)request;
    key *k = data;
    k->calls++;
    k->size = reply_size;
    k->req_len = request_len;
    if (k->value < 0)
        return -1;
    reply[0] = (uint8_t)k->value;
    return 1;
}

static ffb_conn *conn_with(key *k) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn;
    o.user = getenv("FFB_TEST_DBCRYPT_USER") ? getenv("FFB_TEST_DBCRYPT_USER")
                                             : "SYSDBA";
    o.password = getenv("FFB_TEST_DBCRYPT_PASSWORD")
                     ? getenv("FFB_TEST_DBCRYPT_PASSWORD")
                     : "masterkey";
    o.io_timeout_ms = 60000;
    if (k) {
        o.crypt_key_cb = key_cb;
        o.crypt_key_data = k;
    }
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    return c;
}

static uint64_t rts(const ffb_conn *c) {
    ffb_stats st;
    ffb_conn_stats(c, &st, sizeof(st));
    return st.round_trips;
}

static int64_t query(ffb_conn *c, const char *sql) {
    ffb_tx *tx;
    ffb_stmt *s;
    int64_t v = -1;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_conn_prepare(c, tx, sql, (size_t)-1, &s));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    OK(c, ffb_stmt_get_int64(s, 0, &v));
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    ffb_stmt_free(s);
    return v;
}

static void exec(ffb_conn *c, const char *sql) {
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_conn_execute_immediate(c, tx, sql, (size_t)-1));
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
}

static void test_encrypted_database(void **state) {
    (void)state;
    /* Create (the key holder asks at once) and encrypt. */
    key k = {.value = 0x5a};
    ffb_conn *c = conn_with(&k);
    ffb_create_options co = FFB_CREATE_OPTIONS_INIT;
    co.overwrite = 1;
    OK(c, ffb_conn_create_database(c, &co));
    assert_true(k.calls >= 1);
    assert_int_equal(k.size, 1);    /* the sample asks for one byte */
    assert_int_equal(k.req_len, 0); /* with no data */
    exec(c, "create table K (id integer)");
    exec(c, "insert into K values (42)");
    exec(c, "alter database encrypt with \"fbSampleDbCrypt\"");
    int64_t state_now = 0;
    for (int i = 0; i < 100 && state_now != 1; i++) {
        state_now = query(c, "select mon$crypt_state from mon$database");
        if (state_now != 1) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    assert_int_equal(state_now, 1); /* encrypted */
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);

    /* The right key: op_connect, op_attach, the key's answer. */
    k.calls = 0;
    c = conn_with(&k);
    OK(c, ffb_conn_connect(c));
    assert_int_equal(k.calls, 1);
    assert_int_equal(rts(c), 3);
    assert_int_equal(query(c, "select id from K"), 42);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);

    /* No callback: empty answers, the server refuses the attach. */
    c = conn_with(NULL);
    assert_int_equal(ffb_conn_connect(c), FFB_E_SERVER);
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)), GDS_DB_CRYPT_KEY);
    ffb_conn_free(c);

    /* A wrong key. */
    key wrong = {.value = 0x11};
    c = conn_with(&wrong);
    assert_int_equal(ffb_conn_connect(c), FFB_E_SERVER);
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)), GDS_BAD_CRYPT_KEY);
    ffb_conn_free(c);

    /* The application refuses. */
    key refuse = {.value = -1};
    c = conn_with(&refuse);
    assert_int_equal(ffb_conn_connect(c), FFB_E_CRYPT);
    assert_int_equal(refuse.calls, 1);
    ffb_conn_free(c);

    /* Drop it (with the key). */
    c = conn_with(&k);
    OK(c, ffb_conn_connect(c));
    OK(c, ffb_conn_drop_database(c));
    ffb_conn_free(c);
}

int main(void) {
    static char own[600];
    dsn = getenv("FFB_TEST_DBCRYPT_DSN");
    const char *port = getenv("FFB_TEST_FB4K_PORT");
    const char *dir = getenv("FFB_TEST_FB4K_DBDIR");
    if ((!dsn || !*dsn) && port && dir) {
        snprintf(own, sizeof own, "127.0.0.1/%s:%s/kc_%ld.fdb", port, dir,
                 (long)getpid());
        dsn = own;
    }
    if (!dsn || !*dsn) {
        const char *req = getenv("FFB_TEST_REQUIRE_SERVER");
        int required = req && strcmp(req, "1") == 0;
        fprintf(stderr, "no server with the sample key holder (fb4k of "
                        "tests/servers/fbservers.sh, or "
                        "FFB_TEST_DBCRYPT_DSN): %s\n",
                required ? "FAILED (FFB_TEST_REQUIRE_SERVER=1)" : "skipped");
        return required ? 1 : 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encrypted_database),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
