/*
 * The configuration parser: PostgREST's keys from a file's text and from
 * PGRST_* variables, strictly (every refusal names the key and where it
 * came from).
 */
#include <stdio.h>
#include <string.h>

#include "config.h"

static int fails;

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #c);    \
            fails++;                                                           \
        }                                                                      \
    } while (0)

static int parse(rest_config *c, const char *text, char *err, size_t n) {
    rest_config_defaults(c);
    return rest_config_parse_text(c, text, "f.conf", err, n);
}

static void test_full_file(void) {
    rest_config c;
    char err[256] = "";
    int rc = parse(&c,
                   "# a comment\n"
                   "db-uri = \"firebird://SYSDBA:mk%40x@db.example:3051//var/"
                   "db/x.fdb?wire_crypt=required&compress=true\"\n"
                   "db-schemas = public\n"
                   "db-anon-role = \"WEB_ANON\"\n"
                   "db-pool = 4\r\n"
                   "  db-max-rows = 100  \n"
                   "server-host = \"127.0.0.1\"\n"
                   "server-port = 3001\n"
                   "server-timing-enabled = true\n"
                   "db-tx-end = rollback-allow-override\n",
                   err, sizeof err);
    CHECK(rc == 0);
    CHECK(strcmp(c.db_user, "SYSDBA") == 0);
    CHECK(strcmp(c.db_password, "mk@x") == 0);
    CHECK(strcmp(c.db_host, "db.example") == 0);
    CHECK(strcmp(c.db_port, "3051") == 0);
    CHECK(strcmp(c.db_database, "/var/db/x.fdb") == 0);
    CHECK(c.db_wire_crypt == 2 && c.db_compress == 1);
    CHECK(strcmp(c.db_anon_role, "WEB_ANON") == 0);
    CHECK(c.db_pool == 4 && c.db_max_rows == 100);
    CHECK(c.server_port == 3001 && c.server_timing == 1);
    CHECK(c.db_tx_end == 3);
    rest_config_free(&c);
    CHECK(parse(&c, "", err, sizeof err) == 0 && c.db_tx_end == 0);
    rest_config_free(&c);
}

static void expect_error(const char *text, const char *want) {
    rest_config c;
    char err[256] = "";
    int rc = parse(&c, text, err, sizeof err);
    CHECK(rc < 0);
    if (!strstr(err, want)) {
        fprintf(stderr, "error \"%s\" lacks \"%s\"\n", err, want);
        fails++;
    }
    rest_config_free(&c);
}

static void test_env(void) {
    rest_config c;
    char err[256] = "";
    char *env[] = {"PGRST_DB_URI=firebird://u:p@h/employee",
                   "PGRST_SERVER_PORT=4000", "OTHER=1",
                   "PGRST_DB_POOL_ACQUISITION_TIMEOUT=3", NULL};
    rest_config_defaults(&c);
    CHECK(rest_config_load(&c, NULL, env, err, sizeof err) == 0);
    CHECK(strcmp(c.db_database, "employee") == 0);
    CHECK(c.db_port == NULL); /* the default, 3050 */
    CHECK(c.server_port == 4000 && c.db_pool_acquisition_timeout == 3);
    CHECK(c.db_embed_per_level == 0 && c.server_max_embed_depth == 8);
    rest_config_free(&c);
    char *emb[] = {"PGRST_DB_URI=firebird://u:p@h/e",
                   "PGRST_DB_EMBED_STRATEGY=per-level",
                   "PGRST_SERVER_MAX_EMBED_DEPTH=3", NULL};
    rest_config_defaults(&c);
    CHECK(rest_config_load(&c, NULL, emb, err, sizeof err) == 0);
    CHECK(c.db_embed_per_level == 1 && c.server_max_embed_depth == 3);
    rest_config_free(&c);
    char *bad[] = {"PGRST_DB_URI=firebird://u:p@h/e", "PGRST_DB_POOL=0", NULL};
    rest_config_defaults(&c);
    CHECK(rest_config_load(&c, NULL, bad, err, sizeof err) < 0);
    CHECK(strstr(err, "environment PGRST_DB_POOL: db-pool") != NULL);
    rest_config_free(&c);
    char *none[] = {NULL};
    rest_config_defaults(&c);
    CHECK(rest_config_load(&c, NULL, none, err, sizeof err) < 0);
    CHECK(strstr(err, "db-uri is required") != NULL);
    rest_config_free(&c);
}

static void test_aggregates(void) {
    rest_config c;
    char err[256] = "";
    CHECK(parse(&c, "db-pool = 2\n", err, sizeof err) == 0);
    CHECK(c.db_aggregates_enabled == 0); /* off, as in PostgREST */
    rest_config_free(&c);
    CHECK(parse(&c, "db-aggregates-enabled = true\n", err, sizeof err) == 0);
    CHECK(c.db_aggregates_enabled == 1);
    rest_config_free(&c);
}

/* jwt-cache-max-entries, db-prepared-statements(-max),
   server-request-timeout */
static void test_settings(void) {
    rest_config c;
    char err[256] = "";
    CHECK(parse(&c, "db-pool = 2\n", err, sizeof err) == 0);
    CHECK(c.jwt_cache_max_entries == 1000); /* PostgREST's default */
    rest_config_free(&c);
    CHECK(parse(&c, "jwt-cache-max-entries = 0\n", err, sizeof err) == 0);
    CHECK(c.jwt_cache_max_entries == 0);
    rest_config_free(&c);
    CHECK(parse(&c, "jwt-cache-max-entries = 5\n", err, sizeof err) == 0);
    CHECK(c.jwt_cache_max_entries == 5);
    rest_config_free(&c);
    expect_error(
        "jwt-cache-max-entries = -1\n",
        "jwt-cache-max-entries: expected an integer from 0 to 1000000");
    /* ours: db-prepared-statements-idle (300 s), db-pool-max-per-role
       (0: db-pool) */
    CHECK(parse(&c, "db-pool = 2\n", err, sizeof err) == 0);
    CHECK(c.db_prepared_statements_idle == 300);
    CHECK(c.db_pool_max_per_role == 0);
    rest_config_free(&c);
    CHECK(parse(&c, "db-prepared-statements-idle = 0\ndb-pool-max-per-role = 3\n",
                err, sizeof err) == 0);
    CHECK(c.db_prepared_statements_idle == 0);
    CHECK(c.db_pool_max_per_role == 3);
    rest_config_free(&c);
    expect_error("db-prepared-statements-idle = -1\n",
                 "db-prepared-statements-idle: expected an integer from 0 to "
                 "86400");
    expect_error("db-pool-max-per-role = 5000\n",
                 "db-pool-max-per-role: expected an integer from 0 to 4096");
}

/* ffb-rest's transport keys: TLS files (both or neither, checked once
   the file and the environment are read) and the Firebird timeouts. */
static void test_transport(void) {
    rest_config c;
    char err[256] = "";
    CHECK(parse(&c, "", err, sizeof err) == 0);
    CHECK(c.db_connect_timeout == 10 && c.db_io_timeout == 30 &&
          c.db_statement_timeout == 0 && !c.server_tls_cert_file);
    rest_config_free(&c);
    CHECK(parse(&c,
                "db-connect-timeout = 0\ndb-io-timeout = 3600\n"
                "db-statement-timeout = 250\n"
                "server-tls-cert-file = \"/c.pem\"\n"
                "server-tls-key-file = /k.pem\n",
                err, sizeof err) == 0);
    CHECK(c.db_connect_timeout == 0 && c.db_io_timeout == 3600 &&
          c.db_statement_timeout == 250);
    CHECK(strcmp(c.server_tls_cert_file, "/c.pem") == 0 &&
          strcmp(c.server_tls_key_file, "/k.pem") == 0);
    rest_config_free(&c);
    expect_error("db-io-timeout = 3601\n",
                 "db-io-timeout: expected seconds from 0 (none) to 3600");
    expect_error("db-statement-timeout = -5\n",
                 "db-statement-timeout: expected milliseconds");
    char *half[] = {"PGRST_DB_URI=firebird://u:p@h/e",
                    "PGRST_SERVER_TLS_KEY_FILE=/k.pem", NULL};
    rest_config_defaults(&c);
    CHECK(rest_config_load(&c, NULL, half, err, sizeof err) < 0);
    CHECK(strstr(err, "server-tls-key-file is set but server-tls-cert-file "
                      "is not") != NULL);
    rest_config_free(&c);
    char *both[] = {"PGRST_DB_URI=firebird://u:p@h/e",
                    "PGRST_SERVER_TLS_KEY_FILE=/k.pem",
                    "PGRST_SERVER_TLS_CERT_FILE=/c.pem", NULL};
    rest_config_defaults(&c);
    CHECK(rest_config_load(&c, NULL, both, err, sizeof err) == 0);
    rest_config_free(&c);
}

int main(void) {
    test_full_file();
    test_aggregates();
    test_settings();
    test_env();
    test_transport();
    expect_error("nonsense\n", "f.conf:1: expected key = value");
    expect_error("\n\nbogus-key = 1\n", "f.conf:3: bogus-key: unknown");
    expect_error("jwt-alg = none\n", "jwt-alg: expected HS256, HS384 or HS512");
    expect_error("db-request-context = sometimes\n",
                 "db-request-context: expected auto, always or never");
    expect_error("openapi-mode = follow-privileges\n",
                 "follow-privileges is not implemented yet");
    expect_error("openapi-mode = x\n",
                 "expected ignore-privileges or disabled");
    expect_error("jwt-secret-is-base64 = 2\n", "expected true or false");
    expect_error("db-pool = 0\n", "db-pool: expected an integer");
    expect_error("db-pool = 5x\n", "db-pool: expected an integer");
    expect_error("server-port = 70000\n", "server-port: expected a port");
    expect_error("db-uri = \"postgres://a@b/c\"\n", "db-uri: expected fire");
    expect_error("db-uri = \"firebird://a@b\"\n", "no database");
    expect_error("db-uri = \"firebird://a@b:x/c\"\n", "bad port");
    expect_error("db-uri = \"firebird://a@b/c?zip=1\"\n", "unknown option");
    expect_error("db-schemas = \"a,b\"\n", "one schema");
    expect_error("db-aggregates-enabled = yes please\n",
                 "db-aggregates-enabled: expected true or false");
    expect_error("server-timing-enabled = maybe\n", "expected true or false");
    expect_error("db-anon-role = \"open\n", "bad quoted value");
    expect_error("db-embed-strategy = lateral\n",
                 "db-embed-strategy: expected pipelined or per-level");
    expect_error("server-max-embed-depth = 0\n",
                 "server-max-embed-depth: expected an integer from 1 to 32");
    expect_error("db-tx-end = never\n", "db-tx-end: expected commit");
    printf("%d failed\n", fails);
    return fails != 0;
}
