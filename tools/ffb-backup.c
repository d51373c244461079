/*
 * ffb-backup: back a database up through the service manager, the gbak
 * stream coming to the client (isc_action_svc_backup to "stdout").
 *
 *   ffb-backup [-u user] [-p password] [-z] host[/port]:database out.fbk|-
 *
 * -z asks for wire compression. The user and password default to
 * ISC_USER / ISC_PASSWORD, then SYSDBA / masterkey.
 */
#include "tools/tool.h"

static int usage(void) {
    fprintf(stderr, "usage: ffb-backup [-u user] [-p password] [-z] "
                    "host[/port]:database out.fbk|-\n");
    return 2;
}

int main(int argc, char **argv) {
    ffb_conn_options o;
    tool_options(&o);
    const char *args[2];
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        if (tool_arg(&o, argc, argv, &i, args, &nargs))
            continue;
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
    return tool_finish("ffb-backup", c, rc);
}
