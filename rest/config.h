/*
 * ffb-rest: PostgREST's configuration keys (spec rest.md A14), from a
 * file of `key = value` lines and from PGRST_* environment variables
 * (PGRST_DB_URI for db-uri...; the environment wins). Parsed strictly:
 * an unknown key, a bad value or a key of a feature not built yet is an
 * error that names the key and where it came from.
 */
#ifndef FFB_REST_CONFIG_H
#define FFB_REST_CONFIG_H

#include <stddef.h>

typedef struct rest_config {
    /* db-uri: firebird://user:password@host:port/database?wire_crypt=...
       (the database is the path without its first '/': an alias, or an
       absolute path written with two slashes) */
    char *db_user;
    char *db_password;
    char *db_host;
    char *db_port;
    char *db_database;
    int db_wire_crypt; /* enum ffb_crypt_level */
    int db_compress;
    char *db_schemas;   /* accepted; Firebird before 6 has one schema */
    char *db_anon_role; /* the Firebird role of anonymous requests */
    int db_pool;        /* connections per server thread... in total */
    int db_pool_max_per_role; /* ours: connections of one JWT role's pool,
                                 in total (split over the threads as
                                 db-pool); 0: db-pool */
    int db_pool_acquisition_timeout; /* seconds */
    long long db_max_rows;           /* -1: none */
    int db_null_order_pg;            /* db-null-order = postgres|firebird */
    int db_aggregates_enabled;       /* db-aggregates-enabled */
    char *server_host;
    int server_port;
    int server_threads;
    int server_timing;         /* server-timing-enabled */
    int admin_server_port;     /* 0: none */
    int client_error_minimal;  /* client-error-verbosity */
    size_t server_max_url;     /* server-max-url-length */
    size_t server_max_body;    /* server-max-body: h2o refuses a longer
                                  request body (413) before reading it */
    size_t server_max_headers; /* server-max-header-size: all header
                                  names and values, bytes */
    size_t server_max_filters; /* server-max-filters */
    size_t server_max_in_list; /* server-max-in-list */
    int log_level;             /* 0 crit 1 error 2 warn 3 info */
    long long db_probe_rows;   /* ffb-rest's own: reads without a
                                  limit ask for this + 1 rows */
    int db_tx_end;             /* db-tx-end: 0 commit, 1 commit-allow-override,
                                  2 rollback, 3 rollback-allow-override */

    /* embeds (ffb-rest's own keys) */
    size_t server_max_embed_depth; /* server-max-embed-depth */
    int db_embed_per_level;        /* db-embed-strategy = per-level */
    /* JWT (rest/jwt.h): the key is built from these after loading */
    char *jwt_secret; /* NULL: no JWT; "@file" reads a file */
    int jwt_secret_is_base64;
    char *jwt_aud;
    char *jwt_role_claim_key;       /* NULL: .role */
    char *jwt_alg;                  /* ffb-rest's own; NULL: HS256 */
    long jwt_cache_max_entries;     /* per server thread; 0: no cache */
    int db_prepared_statements;     /* PostgREST's: 0 = no statement cache */
    int db_prepared_statements_max; /* ours: statements per connection */
    int db_prepared_statements_idle; /* ours: seconds unused before a cached
                                        statement is freed; 0: never */
    int server_request_timeout;     /* ours: seconds (h2o http1 req_timeout) */
    char *db_procedure_returns;     /* "proc:table, ..." (@returns) */
    int db_request_context;         /* 0 auto, 1 always, 2 never (A8.3) */
    char *db_pre_request;           /* a procedure run before each request */
    char *server_cors_allowed_origins; /* NULL: any origin (`*`) */
    int openapi_mode;                  /* 0 ignore-privileges, 1 disabled */
    /* ffb-rest's own (PostgREST serves no TLS and has no such keys) */
    char *server_tls_cert_file; /* PEM chain; both or neither */
    char *server_tls_key_file;  /* PEM private key */
    int db_connect_timeout;     /* seconds: TCP connect + handshake; 0 none */
    int db_io_timeout;          /* seconds the wire may stand still; 0 none */
    int db_statement_timeout;   /* ms per statement (Firebird 4+); 0 none */
} rest_config;

void rest_config_defaults(rest_config *c);
void rest_config_free(rest_config *c);

/* Apply one key; `origin` names where it came from for the message.
   Returns 0, or -1 with `err` (a sentence). */
int rest_config_set(rest_config *c, const char *key, const char *value,
                    const char *origin, char *err, size_t errlen);
/* The file's lines (NULL path: none), then the environment. */
int rest_config_load(rest_config *c, const char *path, char *const *envp,
                     char *err, size_t errlen);
/* Text of a whole file; used by the loader and tests. */
int rest_config_parse_text(rest_config *c, const char *text, const char *origin,
                           char *err, size_t errlen);

#endif
