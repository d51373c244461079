/*
 * What ffb-backup and ffb-restore share: the login options and the end of
 * a run. Header-only, included by each tool.
 */
#ifndef FFB_TOOLS_TOOL_H
#define FFB_TOOLS_TOOL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fastfb.h>

/* Defaults: ISC_USER / ISC_PASSWORD, then SYSDBA / masterkey. */
static void tool_options(ffb_conn_options *o) {
    ffb_conn_options def = FFB_CONN_OPTIONS_INIT;
    *o = def;
    o->user = getenv("ISC_USER") ? getenv("ISC_USER") : "SYSDBA";
    o->password =
        getenv("ISC_PASSWORD") ? getenv("ISC_PASSWORD") : "masterkey";
}

/* -u, -p and -z at argv[*i] (1: taken), and the positional arguments
   ("-" counts as one) into args (2: taken); 0: not ours. */
static int tool_arg(ffb_conn_options *o, int argc, char **argv, int *i,
                    const char **args, int *nargs) {
    const char *a = argv[*i];
    if (strcmp(a, "-u") == 0 && *i + 1 < argc) {
        o->user = argv[++*i];
        return 1;
    }
    if (strcmp(a, "-p") == 0 && *i + 1 < argc) {
        o->password = argv[++*i];
        return 1;
    }
    if (strcmp(a, "-z") == 0) {
        o->compress = 1;
        return 1;
    }
    if (*nargs < 2 && (a[0] != '-' || strcmp(a, "-") == 0)) {
        args[(*nargs)++] = a;
        return 2;
    }
    return 0;
}

/* Report the run, close the attachment; the exit status. */
static int tool_finish(const char *name, ffb_conn *c, int rc) {
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", name,
                c ? ffb_error_message(ffb_conn_error(c)) : ffb_strerror(rc));
        ffb_conn_free(c);
        return 1;
    }
    ffb_svc_stats st;
    ffb_svc_last_stats(c, &st, sizeof(st));
    fprintf(stderr, "%s: %llu bytes out, %llu bytes in, %llu queries\n", name,
            (unsigned long long)st.bytes_out, (unsigned long long)st.bytes_in,
            (unsigned long long)st.queries);
    ffb_conn_close(c);
    ffb_conn_free(c);
    return 0;
}

#endif
