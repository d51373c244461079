/*
 * Connection layer against real Firebird 3.0 and 4.0 servers, started by
 * tests/servers/fbservers.sh (settings per instance in servers.env). For
 * every instance: auth plugin x client wire-crypt level x compression, with
 * the exact round trips; Legacy_Auth; wrong password; create, info, ping,
 * detach and drop; I/O errors.
 *
 * Without FFB_TEST_SERVERS the test is skipped (exit 77) unless
 * FFB_TEST_REQUIRE_SERVER=1, which makes that a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/it.h"

typedef struct server {
    char name[16];
    char host[64], port[16], dbdir[256], db[256];
    int version; /* 3 or 4 */
    int keyholder; /* 1: the server runs a database-crypt key holder */
    char auth[128];
    char wirecrypt[16]; /* Required | Enabled | Disabled */
    char user[32], password[64];
    char legacy_user[32], legacy_password[64];
    char srp_user[32], srp_password[64];
} server;

static server servers[8];
static size_t nservers;

static void env_copy(char *dst, size_t size, const char *inst,
                     const char *key) {
    char var[96], up[16];
    size_t i;
    for (i = 0; inst[i] && i < sizeof(up) - 1; i++)
        up[i] = (char)(inst[i] >= 'a' && inst[i] <= 'z' ? inst[i] - 32
                                                        : inst[i]);
    up[i] = '\0';
    snprintf(var, sizeof(var), "FFB_TEST_%s_%s", up, key);
    const char *v = getenv(var);
    snprintf(dst, size, "%s", v ? v : "");
}

static void load_servers(void) {
    const char *list = getenv("FFB_TEST_SERVERS");
    if (!list)
        return;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *tok = strtok(buf, " "); tok && nservers < 8;
         tok = strtok(NULL, " ")) {
        server *s = &servers[nservers++];
        char v[16];
        snprintf(s->name, sizeof(s->name), "%s", tok);
        env_copy(s->host, sizeof(s->host), tok, "HOST");
        env_copy(s->port, sizeof(s->port), tok, "PORT");
        env_copy(s->dbdir, sizeof(s->dbdir), tok, "DBDIR");
        env_copy(s->db, sizeof(s->db), tok, "DB");
        env_copy(v, sizeof(v), tok, "VERSION");
        s->version = atoi(v);
        env_copy(s->auth, sizeof(s->auth), tok, "AUTH");
        env_copy(s->wirecrypt, sizeof(s->wirecrypt), tok, "WIRECRYPT");
        env_copy(v, sizeof(v), tok, "KEYHOLDER");
        s->keyholder = atoi(v);
        env_copy(s->user, sizeof(s->user), tok, "USER");
        env_copy(s->password, sizeof(s->password), tok, "PASSWORD");
        env_copy(s->legacy_user, sizeof(s->legacy_user), tok, "LEGACY_USER");
        env_copy(s->legacy_password, sizeof(s->legacy_password), tok,
                 "LEGACY_PASSWORD");
        env_copy(s->srp_user, sizeof(s->srp_user), tok, "SRP_USER");
        env_copy(s->srp_password, sizeof(s->srp_password), tok,
                 "SRP_PASSWORD");
    }
}

static int server_level(const server *s) {
    if (strcmp(s->wirecrypt, "Required") == 0)
        return FFB_CRYPT_REQUIRED;
    if (strcmp(s->wirecrypt, "Disabled") == 0)
        return FFB_CRYPT_DISABLED;
    return FFB_CRYPT_ENABLED;
}

static int server_has_plugin(const server *s, const char *p) {
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", s->auth);
    for (char *t = strtok(buf, ", "); t; t = strtok(NULL, ", "))
        if (strcmp(t, p) == 0)
            return 1;
    return 0;
}

static ffb_conn *make_conn(const server *s, const char *db, const char *user,
                           const char *password, const char *plugins,
                           int crypt, int compress) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.host = s->host;
    o.port = s->port;
    o.database = db;
    o.user = user;
    o.password = password;
    o.auth_plugins = plugins;
    o.wire_crypt = crypt;
    o.compress = compress;
    o.connect_timeout_ms = 30000;
    o.io_timeout_ms = 30000;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    return c;
}

/* ---- the matrix ------------------------------------------------------------ */

typedef struct mcase {
    const server *s;
    const char *plugin; /* first plugin of the client's list */
    int crypt;
    int compress;
    char name[320];
} mcase;

static mcase mcases[512];
static size_t nmcases;

static const char *level_name(int l) {
    return l == FFB_CRYPT_DISABLED   ? "Disabled"
           : l == FFB_CRYPT_REQUIRED ? "Required"
                                     : "Enabled";
}

static void test_matrix(void **state) {
    const mcase *m = *state;
    const server *s = m->s;
    char plugins[64];
    snprintf(plugins, sizeof(plugins), "%s,%s", m->plugin,
             strcmp(m->plugin, "Srp") == 0 ? "Srp256" : "Srp");
    ffb_conn *c =
        make_conn(s, s->db, s->user, s->password, plugins, m->crypt,
                  m->compress);
    int rc = ffb_conn_connect(c);
    int srv = server_level(s);
    int broken = (srv == FFB_CRYPT_REQUIRED && m->crypt == FFB_CRYPT_DISABLED) ||
                 (srv == FFB_CRYPT_DISABLED && m->crypt == FFB_CRYPT_REQUIRED);
    if (broken) {
        /* The server refuses at op_connect: isc_wirecrypt_incompatible. */
        assert_int_equal(rc, FFB_E_CRYPT);
        assert_int_equal(ffb_error_gds(ffb_conn_error(c)),
                         FFB_GDS_WIRECRYPT_INCOMPATIBLE);
        assert_non_null(strstr(ffb_error_message(ffb_conn_error(c)),
                               "incompatible"));
        assert_int_equal(it_rts(c), 1);
        ffb_conn_free(c);
        return;
    }
    if (rc != 0)
        fail_msg("%s: connect failed: %s", m->name,
                 ffb_error_message(ffb_conn_error(c)));
    int encrypted = m->crypt != FFB_CRYPT_DISABLED &&
                    srv != FFB_CRYPT_DISABLED;
    /* The client's first plugin is in the server's list, so the server
       swaps it to the front and starts with it: no switch. Encrypted:
       op_connect; op_cont_auth + op_crypt; op_attach = 3. Clear (flow B):
       op_connect; op_attach with the proof in the DPB = 2. A server with a
       database-crypt key holder plugin (fb4k) asks the client for a key
       in every attach, even of a database that is not encrypted: its
       op_crypt_key_callback is answered (empty, no callback set) and the
       attach's answer follows = 1 more. */
    assert_int_equal(it_rts(c), (encrypted ? 3 : 2) + (s->keyholder ? 1 : 0));
    assert_int_equal(ffb_conn_protocol(c), s->version == 3 ? 15 : 17);
    assert_string_equal(ffb_conn_auth_plugin(c), m->plugin);
    /* FB3 has only Arc4; FB4 (protocol 17) offers ChaCha64 first. */
    assert_string_equal(ffb_conn_wire_crypt(c),
                        !encrypted ? "" : s->version == 3 ? "Arc4" : "ChaCha64");
    assert_int_equal(ffb_conn_is_compressed(c), m->compress);

    uint64_t before = it_rts(c);
    assert_int_equal(ffb_conn_ping(c), 0);
    assert_int_equal(it_rts(c) - before, 1); /* op_ping */
    ffb_db_info info;
    before = it_rts(c);
    assert_int_equal(ffb_conn_db_info(c, &info, sizeof(info)), 0);
    assert_int_equal(it_rts(c) - before, 1); /* op_info_database */
    assert_int_equal(info.server_major, s->version);
    assert_int_equal(info.dialect, 3);
    assert_int_equal(info.page_size, 8192);
    before = it_rts(c);
    assert_int_equal(ffb_conn_close(c), 0);
    assert_int_equal(it_rts(c) - before, 1); /* op_detach; op_disconnect has no
                                              answer */
    assert_false(ffb_conn_is_attached(c));
    ffb_conn_free(c);
}

/* ---- single cases per server ------------------------------------------------ */

typedef struct scase {
    const server *s;
    char name[320];
} scase;

static scase scases[64];
static size_t nscases;

static void test_wrong_password(void **state) {
    const scase *sc = *state;
    const server *s = sc->s;
    ffb_conn *c = make_conn(s, s->db, s->srp_user, "definitely-wrong",
                            "Srp256,Srp", FFB_CRYPT_ENABLED, 0);
    int rc = ffb_conn_connect(c);
    assert_int_equal(rc, FFB_E_AUTH);
    const char *msg = ffb_error_message(ffb_conn_error(c));
    assert_non_null(strstr(msg, s->srp_user)); /* the message names the user */
    assert_false(ffb_conn_is_attached(c));
    ffb_conn_free(c);
}

static void test_other_srp_user(void **state) {
    const scase *sc = *state;
    const server *s = sc->s;
    /* Lower-case login: normalised to FFBTEST for the SRP proof. */
    char lower[32];
    size_t i;
    for (i = 0; s->srp_user[i] && i < sizeof(lower) - 1; i++)
        lower[i] = (char)(s->srp_user[i] >= 'A' && s->srp_user[i] <= 'Z'
                              ? s->srp_user[i] + 32
                              : s->srp_user[i]);
    lower[i] = '\0';
    ffb_conn *c = make_conn(s, s->db, lower, s->srp_password, NULL,
                            FFB_CRYPT_ENABLED, 0);
    int rc = ffb_conn_connect(c);
    if (rc != 0)
        fail_msg("%s: %s", sc->name, ffb_error_message(ffb_conn_error(c)));
    assert_int_equal(ffb_conn_close(c), 0);
    ffb_conn_free(c);
}

static void test_legacy_auth(void **state) {
    const scase *sc = *state;
    const server *s = sc->s;
    if (!s->legacy_user[0] || !server_has_plugin(s, "Legacy_Auth"))
        fail_msg("%s has no legacy user configured", s->name);
    ffb_conn *c = make_conn(s, s->db, s->legacy_user, s->legacy_password,
                            "Legacy_Auth,Srp256,Srp", FFB_CRYPT_ENABLED, 0);
    int rc = ffb_conn_connect(c);
    if (server_level(s) == FFB_CRYPT_REQUIRED) {
        /* Legacy_Auth yields no session key: the attach is refused with
           isc_miss_wirecrypt. op_connect; op_attach = 2. */
        assert_int_equal(rc, FFB_E_CRYPT);
        assert_int_equal(ffb_error_gds(ffb_conn_error(c)),
                         FFB_GDS_MISS_WIRECRYPT);
        assert_int_equal(it_rts(c), 2);
    } else {
        if (rc != 0)
            fail_msg("%s: %s", sc->name,
                     ffb_error_message(ffb_conn_error(c)));
        /* op_accept_data says authenticated; op_attach = 2. */
        assert_int_equal(it_rts(c), 2);
        assert_string_equal(ffb_conn_auth_plugin(c), "Legacy_Auth");
        assert_string_equal(ffb_conn_wire_crypt(c), "");
        assert_int_equal(ffb_conn_close(c), 0);
    }
    ffb_conn_free(c);

    /* A client that requires encryption refuses Legacy_Auth itself. */
    c = make_conn(s, s->db, s->legacy_user, s->legacy_password,
                  "Legacy_Auth", FFB_CRYPT_REQUIRED, 0);
    rc = ffb_conn_connect(c);
    assert_int_equal(rc, FFB_E_CRYPT);
    ffb_conn_free(c);
}

static void test_create_drop(void **state) {
    const scase *sc = *state;
    const server *s = sc->s;
    char path[512];
    snprintf(path, sizeof(path), "%s/ffb_create_%d.fdb", s->dbdir,
             (int)getpid());
    ffb_conn *c = make_conn(s, path, s->user, s->password, NULL,
                            FFB_CRYPT_ENABLED, 1);
    ffb_create_options co = FFB_CREATE_OPTIONS_INIT;
    co.page_size = 16384;
    co.charset = "UTF8";
    co.overwrite = 1;
    int rc = ffb_conn_create_database(c, &co);
    if (rc != 0)
        fail_msg("%s: create %s: %s", sc->name, path,
                 ffb_error_message(ffb_conn_error(c)));
    ffb_db_info info;
    assert_int_equal(ffb_conn_db_info(c, &info, sizeof(info)), 0);
    assert_int_equal(info.page_size, 16384);
    assert_int_equal(info.dialect, 3);
    assert_int_equal(info.ods_major, s->version == 3 ? 12 : 13);
    uint64_t before = it_rts(c);
    assert_int_equal(ffb_conn_drop_database(c), 0);
    assert_int_equal(it_rts(c) - before, 1); /* op_drop_database */
    ffb_conn_free(c);

    /* The file is gone: attaching fails with the server's I/O error. */
    c = make_conn(s, path, s->user, s->password, NULL, FFB_CRYPT_ENABLED, 0);
    rc = ffb_conn_connect(c);
    assert_int_equal(rc, FFB_E_SERVER);
    assert_int_equal(ffb_error_gds(ffb_conn_error(c)), FFB_GDS_IO_ERROR);
    assert_non_null(strstr(ffb_error_message(ffb_conn_error(c)), path));
    ffb_conn_free(c);
}

static void test_no_pipelined_crypt(void **state) {
    const scase *sc = *state;
    const server *s = sc->s;
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.host = s->host;
    o.port = s->port;
    o.database = s->db;
    o.user = s->user;
    o.password = s->password;
    o.no_pipeline_crypt = 1;
    o.wire_crypt_plugins = "Arc4";
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(ffb_conn_connect(c), 0);
    /* fbclient's way: op_connect; op_cont_auth; op_crypt; op_attach. */
    assert_int_equal(it_rts(c), 4);
    assert_string_equal(ffb_conn_wire_crypt(c), "Arc4");
    assert_int_equal(ffb_conn_close(c), 0);
    ffb_conn_free(c);
}

/* ---- errors without a server ----------------------------------------------- */

static void test_closed_port(void **state) {
    (void)state;
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = "127.0.0.1/1:/nowhere.fdb";
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(ffb_conn_connect(c), FFB_E_IO);
    assert_non_null(strstr(ffb_error_message(ffb_conn_error(c)),
                           "Connection refused"));
    ffb_conn_free(c);
}

static void test_unknown_host(void **state) {
    (void)state;
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = "no-such-host.invalid:/x.fdb";
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    assert_int_equal(ffb_conn_connect(c), FFB_E_IO);
    assert_non_null(strstr(ffb_error_message(ffb_conn_error(c)),
                           "no-such-host.invalid"));
    ffb_conn_free(c);
}

static int set_state(void **state, void *p) {
    *state = p;
    return 0;
}
static int setup_m(void **state) { (void)state; return 0; }

int main(void) {
    load_servers();
    if (nservers == 0) {
        if (getenv("FFB_TEST_REQUIRE_SERVER") &&
            strcmp(getenv("FFB_TEST_REQUIRE_SERVER"), "1") == 0) {
            fprintf(stderr, "FFB_TEST_REQUIRE_SERVER=1 but no servers are "
                            "configured (FFB_TEST_SERVERS unset)\n");
            return 1;
        }
        fprintf(stderr, "no Firebird servers configured; skipping\n");
        return 77;
    }
    (void)set_state;
    (void)setup_m;
    static struct CMUnitTest tests[1024];
    size_t n = 0;
    static const char *const plugins[] = {"Srp256", "Srp", "Srp224",
                                          "Srp384", "Srp512"};
    static const int levels[] = {FFB_CRYPT_DISABLED, FFB_CRYPT_ENABLED,
                                 FFB_CRYPT_REQUIRED};
    for (size_t i = 0; i < nservers; i++) {
        const server *s = &servers[i];
        for (size_t p = 0; p < sizeof(plugins) / sizeof(plugins[0]); p++) {
            if (!server_has_plugin(s, plugins[p]))
                continue;
            for (size_t l = 0; l < 3; l++)
                for (int z = 0; z < 2; z++) {
                    mcase *m = &mcases[nmcases++];
                    m->s = s;
                    m->plugin = plugins[p];
                    m->crypt = levels[l];
                    m->compress = z;
                    snprintf(m->name, sizeof(m->name),
                             "%.15s/%s/client-crypt-%s/%s", s->name, plugins[p],
                             level_name(levels[l]), z ? "zlib" : "plain");
                    tests[n] = (struct CMUnitTest){m->name, test_matrix, NULL,
                                                   NULL, m};
                    n++;
                }
        }
        struct {
            const char *what;
            CMUnitTestFunction fn;
        } singles[] = {{"wrong-password", test_wrong_password},
                       {"srp-user-lowercase", test_other_srp_user},
                       {"legacy-auth", test_legacy_auth},
                       {"create-info-drop", test_create_drop},
                       {"no-pipelined-crypt", test_no_pipelined_crypt}};
        for (size_t k = 0; k < sizeof(singles) / sizeof(singles[0]); k++) {
            if (singles[k].fn == test_legacy_auth &&
                (!s->legacy_user[0] || !server_has_plugin(s, "Legacy_Auth")))
                continue;
            if (singles[k].fn == test_no_pipelined_crypt &&
                server_level(s) == FFB_CRYPT_DISABLED)
                continue;
            scase *sc = &scases[nscases++];
            sc->s = s;
            snprintf(sc->name, sizeof(sc->name), "%.15s/%s", s->name,
                     singles[k].what);
            tests[n++] = (struct CMUnitTest){sc->name, singles[k].fn, NULL,
                                             NULL, sc};
        }
    }
    tests[n++] = (struct CMUnitTest){"closed-port", test_closed_port, NULL,
                                     NULL, NULL};
    tests[n++] = (struct CMUnitTest){"unknown-host", test_unknown_host, NULL,
                                     NULL, NULL};
    return _cmocka_run_group_tests("integration", tests, n, NULL, NULL);
}
