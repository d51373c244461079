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
#include "tools/tool.h"

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
    ffb_conn_options o;
    tool_options(&o);
    const char *args[2];
    int nargs = 0, verbose = 0, replace = 0;
    for (int i = 1; i < argc; i++) {
        if (tool_arg(&o, argc, argv, &i, args, &nargs))
            continue;
        if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "-r") == 0)
            replace = 1;
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
    return tool_finish("ffb-restore", c, rc);
}
