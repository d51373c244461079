/*
 * Listen for Firebird events (POST_EVENT) and print each notification as
 * it arrives: the name and how many times it was posted since the last
 * one. Stops after --count notifications or --seconds without any.
 *
 *   example_event_listener [options] DSN NAME...
 *     --user U --password P     login (default SYSDBA / masterkey)
 *     --count N                 stop after N notifications (default: never)
 *     --seconds S               stop after S seconds of silence (default 0:
 *                               never)
 *
 * Post one from isql:
 *   EXECUTE BLOCK AS BEGIN POST_EVENT 'NAME'; END; COMMIT;
 *
 * The notifications come on a second TCP connection that the server
 * announces; it is plain TCP even when the main connection is encrypted
 * (docs/events.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fastfb.h>

static int die(ffb_conn *conn, const char *what) {
    const ffb_error *e = ffb_conn_error(conn);
    fprintf(stderr, "%s failed: %s (%s)\n", what, ffb_error_message(e),
            ffb_err_name(ffb_error_code(e)));
    ffb_conn_free(conn);
    return 1;
}

static long seen;

static void on_event(ffb_events *ev, const char *name, uint32_t count,
                     void *data) {
    (void)ev;
    (void)data;
    seen++;
    printf("%s: %u\n", name, (unsigned)count);
    fflush(stdout);
}

int main(int argc, char **argv) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.user = "SYSDBA";
    o.password = "masterkey";
    long max = -1;
    int seconds = 0, first_name = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--user") == 0 && i + 1 < argc)
            o.user = argv[++i];
        else if (strcmp(argv[i], "--password") == 0 && i + 1 < argc)
            o.password = argv[++i];
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            max = atol(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atoi(argv[++i]);
        else if (!o.dsn)
            o.dsn = argv[i];
        else if (!first_name)
            first_name = i;
    }
    if (!o.dsn || !first_name) {
        fprintf(stderr, "usage: %s [options] DSN NAME...\n", argv[0]);
        return 2;
    }
    ffb_conn *conn = NULL;
    if (ffb_conn_new(&o, &conn) != 0)
        return die(conn, "options");
    if (ffb_conn_connect(conn) != 0)
        return die(conn, "connect");
    ffb_events *ev = NULL;
    if (ffb_events_new(conn, &ev) != 0)
        return die(conn, "ffb_events_new");
    for (int i = first_name; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] == '-') {
            i++; /* an option and its value */
            continue;
        }
        /* 2 round trips each; the first also opens the aux connection. */
        if (ffb_events_register(ev, argv[i], on_event, NULL) != 0)
            return die(conn, "ffb_events_register");
        printf("listening for %s\n", argv[i]);
    }
    fflush(stdout);
    while (max < 0 || seen < max) {
        int rc = ffb_events_wait(ev, seconds > 0 ? seconds * 1000 : -1);
        if (rc == FFB_E_TIMEOUT) {
            printf("no event for %d s\n", seconds);
            break;
        }
        if (rc < 0)
            return die(conn, "ffb_events_wait");
    }
    ffb_events_free(ev); /* cancels the registrations: 1 round trip */
    int rc = ffb_conn_close(conn);
    ffb_conn_free(conn);
    return rc == 0 ? 0 : 1;
}
