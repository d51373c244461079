/*
 * ffb-backup: back a database up through the service manager, the gbak
 * stream coming to the client (isc_action_svc_backup to "stdout").
 *
 *   ffb-backup [-u user] [-p password] [-z] host[/port]:database out.fbk|-
 *
 * -z asks for wire compression. The user and password default to
 * ISC_USER / ISC_PASSWORD, then SYSDBA / masterkey.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fastfb.h>

static int usage(void) {
    fprintf(stderr, "usage: ffb-backup [-u user] [-p password] [-z] "
                    "host[/port]:database out.fbk|-\n");
    return 2;
}

int main(int argc, char **argv) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.user = getenv("ISC_USER") ? getenv("ISC_USER") : "SYSDBA";
    o.password = getenv("ISC_PASSWORD") ? getenv("ISC_PASSWORD") : "masterkey";
    const char *args[2];
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-u") == 0 && i + 1 < argc)
            o.user = argv[++i];
        else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc)
            o.password = argv[++i];
        else if (strcmp(argv[i], "-z") == 0)
            o.compress = 1;
        else if (nargs < 2 && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
            args[nargs++] = argv[i];
        else
            return usage();
    }
    if (nargs != 2)
        return usage();
    o.dsn = args[0];
    ffb_conn *c = NULL;
    int rc = ffb_conn_new(&o, &c);
    if (rc == 0)
        rc = ffb_svc_connect(c);
    if (rc == 0)
        rc = ffb_svc_backup_to_file(c, NULL, args[1]);
    if (rc < 0) {
        fprintf(stderr, "ffb-backup: %s\n",
                c ? ffb_error_message(ffb_conn_error(c)) : ffb_strerror(rc));
        ffb_conn_free(c);
        return 1;
    }
    ffb_svc_stats st;
    ffb_svc_last_stats(c, &st, sizeof(st));
    fprintf(stderr, "ffb-backup: %llu bytes in %llu queries\n",
            (unsigned long long)st.bytes_out, (unsigned long long)st.queries);
    ffb_conn_close(c);
    ffb_conn_free(c);
    return 0;
}
