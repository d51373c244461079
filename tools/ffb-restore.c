/*
 * ffb-restore: restore a gbak stream sent from the client through the
 * service manager (isc_action_svc_restore from "stdin") into a new
 * database.
 *
 *   ffb-restore [-u user] [-p password] [-z] [-v] [-r] in.fbk|-
 *               host[/port]:newdatabase
 *
 * -v prints gbak's verbose lines on stderr, -r replaces an existing
 * database (default: it must not exist), -z asks for wire compression.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fastfb.h>

static int usage(void) {
    fprintf(stderr, "usage: ffb-restore [-u user] [-p password] [-z] [-v] "
                    "[-r] in.fbk|- host[/port]:newdatabase\n");
    return 2;
}

static int print_line(const char *line, size_t len, void *data) {
    (void)data;
    fprintf(stderr, "%.*s\n", (int)len, line);
    return 0;
}

int main(int argc, char **argv) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.user = getenv("ISC_USER") ? getenv("ISC_USER") : "SYSDBA";
    o.password = getenv("ISC_PASSWORD") ? getenv("ISC_PASSWORD") : "masterkey";
    const char *args[2];
    int nargs = 0, verbose = 0, replace = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-u") == 0 && i + 1 < argc)
            o.user = argv[++i];
        else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc)
            o.password = argv[++i];
        else if (strcmp(argv[i], "-z") == 0)
            o.compress = 1;
        else if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "-r") == 0)
            replace = 1;
        else if (nargs < 2 && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
            args[nargs++] = argv[i];
        else
            return usage();
    }
    if (nargs != 2)
        return usage();
    o.dsn = args[1];
    ffb_conn *c = NULL;
    int rc = ffb_conn_new(&o, &c);
    if (rc == 0)
        rc = ffb_svc_connect(c);
    if (rc == 0)
        rc = ffb_svc_restore_from_file(c, args[0], NULL, replace,
                                       verbose ? print_line : NULL, NULL);
    if (rc < 0) {
        fprintf(stderr, "ffb-restore: %s\n",
                c ? ffb_error_message(ffb_conn_error(c)) : ffb_strerror(rc));
        ffb_conn_free(c);
        return 1;
    }
    ffb_svc_stats st;
    ffb_svc_last_stats(c, &st, sizeof(st));
    fprintf(stderr, "ffb-restore: %llu bytes in %llu queries\n",
            (unsigned long long)st.bytes_in, (unsigned long long)st.queries);
    ffb_conn_close(c);
    ffb_conn_free(c);
    return 0;
}
