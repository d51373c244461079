/*
 * What the integration suites share: the servers of servers.env, the
 * round-trip counter, and a few steps every suite takes.
 */
#ifndef FFB_TEST_IT_H
#define FFB_TEST_IT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "include/fastfb.h"

#include "tests/support/check.h"

/* One instance of tests/servers/fbservers.sh, from FFB_TEST_<NAME>_*. */
typedef struct it_server {
    char name[16];
    char dsn[512];
    int version;
    int compress; /* FB4E: the suites run it with zlib on */
} it_server;

/*
 * The instances named in `names` (for example "FB3", "FB4", "FB4E") that
 * servers.env describes, in that order; returns how many. Without
 * servers.env in the environment the process exits 77 (meson: skipped),
 * or 1 when FFB_TEST_REQUIRE_SERVER=1 (CI); with none of the names it
 * exits 1.
 */
size_t it_servers(const char *const *names, size_t nnames, it_server *out);

/* What an integration suite runs against: one server instance, and the
   tables the suite makes there (named after the suite, the instance and
   the process). */
typedef struct it_target {
    char name[16];
    char dsn[512];
    int version;
    int compress;
    char table[64];  /* T_<SUITE>_<NAME>_<pid> */
    char btable[64]; /* T_<SUITE>B_<NAME>_<pid>, for a second table */
} it_target;

/*
 * A suite's main: `tests` (their initial state is ignored) run against
 * each instance of `names` that servers.env describes, each test getting
 * the it_target as its state, with setup/teardown (may be NULL) around
 * each instance's group - they get the target too. Returns the exit code.
 */
int it_main(const char *suite, const char *const *names, size_t nnames,
            const struct CMUnitTest *tests, size_t ntests,
            int (*setup)(void **), int (*teardown)(void **));

/* FFB_CONN_OPTIONS_INIT with what every suite's connection to `t` needs:
   its dsn, SYSDBA, its compression (FB4E) and a 120 s I/O timeout. */
void it_options(const it_target *t, ffb_conn_options *o);

/* A new connection with options `o`, connected (a failure fails the
   test). */
ffb_conn *it_open(const ffb_conn_options *o);

/* it_open() with it_options(t); `stmt_cache_size` as that option (0:
   the default). */
ffb_conn *it_connect(const it_target *t, int stmt_cache_size);

/* The connection's round-trip counter. */
uint64_t it_rts(const ffb_conn *c);

/* Execute `sql` (printf format with `arg`) in its own committed
   transaction. */
void it_exec(ffb_conn *c, const char *fmt, const char *arg);

/* POST_EVENT `name` (at most 64 bytes) `times` times (1..20) in one
   EXECUTE BLOCK, committed. */
void it_post_event(ffb_conn *c, const char *name, int times);

/* A started transaction whose handle is known (its start was read). */
ffb_tx *it_active_tx(ffb_conn *c);

#endif
