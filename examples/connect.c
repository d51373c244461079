/*
 * Connect to a Firebird server (optionally creating the database), print
 * what was negotiated and the round trips each step cost, then detach (or
 * drop the database).
 *
 *   example_connect [options] DSN
 *     --user U --password P     login (default SYSDBA / masterkey)
 *     --create                  create the database instead of attaching
 *     --drop                    drop the database at the end
 *     --compress                ask for zlib compression
 *     --crypt disabled|enabled|required    wire encryption (default enabled)
 *     --plugins LIST            authentication plugins, e.g. Srp256,Srp
 *     --ciphers LIST            wire-crypt plugins, e.g. ChaCha,Arc4
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fastfb.h>

static uint64_t rt(ffb_conn *conn) {
    ffb_stats st;
    ffb_conn_stats(conn, &st, sizeof(st));
    return st.round_trips;
}

static int die(ffb_conn *conn, const char *what) {
    const ffb_error *e = ffb_conn_error(conn);
    fprintf(stderr, "%s failed: %s (%s)\n", what, ffb_error_message(e),
            ffb_err_name(ffb_error_code(e)));
    ffb_conn_free(conn);
    return 1;
}

int main(int argc, char **argv) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    int create = 0, drop = 0;
    o.user = "SYSDBA";
    o.password = "masterkey";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--user") == 0 && v)
            o.user = argv[++i];
        else if (strcmp(a, "--password") == 0 && v)
            o.password = argv[++i];
        else if (strcmp(a, "--plugins") == 0 && v)
            o.auth_plugins = argv[++i];
        else if (strcmp(a, "--ciphers") == 0 && v)
            o.wire_crypt_plugins = argv[++i];
        else if (strcmp(a, "--create") == 0)
            create = 1;
        else if (strcmp(a, "--drop") == 0)
            drop = 1;
        else if (strcmp(a, "--compress") == 0)
            o.compress = 1;
        else if (strcmp(a, "--crypt") == 0 && v) {
            ++i;
            o.wire_crypt = strcmp(v, "disabled") == 0   ? FFB_CRYPT_DISABLED
                           : strcmp(v, "required") == 0 ? FFB_CRYPT_REQUIRED
                                                        : FFB_CRYPT_ENABLED;
        } else if (a[0] != '-')
            o.dsn = a;
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (!o.dsn) {
        fprintf(stderr, "usage: %s [options] host/port:path\n", argv[0]);
        return 2;
    }

    ffb_conn *conn;
    if (ffb_conn_new(&o, &conn) != 0) {
        /* With FFB_E_INVAL the connection says which option is wrong. */
        fprintf(stderr, "options: %s\n",
                conn ? ffb_error_message(ffb_conn_error(conn))
                     : "out of memory");
        ffb_conn_free(conn);
        return 2;
    }
    if (create) {
        ffb_create_options co = FFB_CREATE_OPTIONS_INIT;
        co.charset = "UTF8";
        co.page_size = 8192;
        co.overwrite = 1;
        if (ffb_conn_create_database(conn, &co) != 0)
            return die(conn, "create database");
    } else if (ffb_conn_connect(conn) != 0) {
        return die(conn, "connect");
    }
    uint64_t rt_connect = rt(conn);

    ffb_db_info info;
    if (ffb_conn_db_info(conn, &info, sizeof(info)) != 0)
        return die(conn, "database info");
    uint64_t rt_info = rt(conn) - rt_connect;

    printf("server version   : %s\n", info.server_version);
    printf("ODS              : %d.%d, page size %d, dialect %d\n",
           info.ods_major, info.ods_minor, info.page_size, info.dialect);
    printf("protocol version : %d\n", ffb_conn_protocol(conn));
    printf("auth plugin      : %s\n", ffb_conn_auth_plugin(conn));
    printf("wire crypt       : %s\n",
           ffb_conn_wire_crypt(conn)[0] ? ffb_conn_wire_crypt(conn) : "none");
    printf("compression      : %s\n",
           ffb_conn_is_compressed(conn) ? "zlib" : "off");
    printf("round trips      : %s %llu, info %llu",
           create ? "create" : "connect+attach",
           (unsigned long long)rt_connect, (unsigned long long)rt_info);

    uint64_t before = rt(conn);
    int rc = drop ? ffb_conn_drop_database(conn) : ffb_conn_close(conn);
    if (rc != 0)
        return die(conn, drop ? "drop database" : "detach");
    printf(", %s %llu\n", drop ? "drop" : "detach",
           (unsigned long long)(rt(conn) - before));
    ffb_conn_free(conn);
    return 0;
}
