/*
 * Checks shared by the cmocka suites (include after <cmocka.h>).
 */
#ifndef FFB_TEST_CHECK_H
#define FFB_TEST_CHECK_H

#include <string.h>

#include "include/fastfb.h"

/* `expr` (a libfastfb call) must not fail; the message names it. */
#define OK(conn, expr)                                                         \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ < 0)                                                           \
            fail_msg("%s:%d: %s = %d: %s", __FILE__, __LINE__, #expr, rc_,     \
                     ffb_error_message(ffb_conn_error(conn)));                 \
    } while (0)

/* The connection's error message contains `needle`. */
static inline void expect_msg(ffb_conn *c, const char *needle) {
    const char *msg = ffb_error_message(ffb_conn_error(c));
    if (!strstr(msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", msg, needle);
}

#endif
