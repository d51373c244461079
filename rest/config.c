/* ffb-rest: configuration (file and environment), strict. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastfb.h"

static char *dupn(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static int replace(char **slot, const char *v, size_t n) {
    char *p = dupn(v, n);
    if (!p)
        return -1;
    free(*slot);
    *slot = p;
    return 0;
}

void rest_config_defaults(rest_config *c) {
    memset(c, 0, sizeof *c);
    c->db_pool = 10;
    c->db_pool_acquisition_timeout = 10;
    c->db_max_rows = -1;
    c->db_null_order_pg = 1;
    c->server_port = 3000;
    c->server_threads = 1;
    c->server_max_url = 8192;
    c->server_max_body = 1u << 20;
    c->server_max_headers = 16384;
    c->server_max_filters = 64;
    c->server_max_in_list = 1000;
    c->server_max_embed_depth = 8;
    c->log_level = 1;
    c->db_probe_rows = 1000;
    c->jwt_cache_max_entries = 1000;
    c->db_prepared_statements = 1;
    c->db_prepared_statements_max = 256;
    c->db_prepared_statements_idle = 300;
    c->server_request_timeout = 10;
    c->db_connect_timeout = 10;
    c->db_io_timeout = 30;
    replace(&c->server_host, "!4", 2);
    replace(&c->db_schemas, "public", 6);
}

void rest_config_free(rest_config *c) {
    free(c->db_user);
    free(c->db_password);
    free(c->db_host);
    free(c->db_port);
    free(c->db_database);
    free(c->db_schemas);
    free(c->db_anon_role);
    free(c->server_host);
    free(c->jwt_secret);
    free(c->jwt_aud);
    free(c->db_procedure_returns);
    free(c->jwt_role_claim_key);
    free(c->jwt_alg);
    free(c->db_pre_request);
    free(c->server_cors_allowed_origins);
    free(c->server_tls_cert_file);
    free(c->server_tls_key_file);
    memset(c, 0, sizeof *c);
}

static int fail(char *err, size_t errlen, const char *origin, const char *key,
                const char *why) {
    snprintf(err, errlen, "%s: %s: %s", origin, key, why);
    return -1;
}

static int parse_int(const char *v, long long lo, long long hi,
                     long long *out) {
    char *end;
    errno = 0;
    if (!*v || isspace((unsigned char)*v))
        return -1;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

static int parse_bool(const char *v, int *out) {
    if (strcmp(v, "true") == 0 || strcmp(v, "on") == 0 ||
        strcmp(v, "yes") == 0) {
        *out = 1;
        return 0;
    }
    if (strcmp(v, "false") == 0 || strcmp(v, "off") == 0 ||
        strcmp(v, "no") == 0) {
        *out = 0;
        return 0;
    }
    return -1;
}

static int hexv(int ch) {
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = tolower(ch);
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

/* Percent-decoded copy of s[0..n). */
static char *pct(const char *s, size_t n) {
    char *o = malloc(n + 1);
    size_t k = 0;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexv(s[i + 1]) >= 0 &&
            hexv(s[i + 2]) >= 0) {
            o[k++] = (char)(hexv(s[i + 1]) * 16 + hexv(s[i + 2]));
            i += 2;
        } else {
            o[k++] = s[i];
        }
    }
    o[k] = '\0';
    return o;
}

static int set_uri(rest_config *c, const char *v, const char *origin, char *err,
                   size_t errlen) {
    static const char scheme[] = "firebird://";
    const char *key = "db-uri";
    if (strncmp(v, scheme, sizeof scheme - 1) != 0)
        return fail(err, errlen, origin, key,
                    "expected firebird://user:password@host:port/database");
    const char *p = v + sizeof scheme - 1;
    const char *slash = strchr(p, '/');
    if (!slash || !slash[1])
        return fail(err, errlen, origin, key, "no database after the host");
    const char *at = memchr(p, '@', (size_t)(slash - p));
    const char *host = p;
    free(c->db_user);
    free(c->db_password);
    c->db_user = c->db_password = NULL;
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        size_t un = colon ? (size_t)(colon - p) : (size_t)(at - p);
        c->db_user = pct(p, un);
        if (colon)
            c->db_password = pct(colon + 1, (size_t)(at - colon - 1));
        host = at + 1;
    }
    const char *hend = slash;
    const char *port = NULL;
    if (*host == '[') {
        const char *rb = memchr(host, ']', (size_t)(slash - host));
        if (!rb)
            return fail(err, errlen, origin, key, "unterminated [IPv6]");
        if (rb + 1 < slash && rb[1] == ':')
            port = rb + 2;
        hend = rb + 1;
    } else {
        const char *colon = memchr(host, ':', (size_t)(slash - host));
        if (colon) {
            port = colon + 1;
            hend = colon;
        }
    }
    if (hend == host)
        return fail(err, errlen, origin, key, "no host");
    if (replace(&c->db_host, host, (size_t)(hend - host)) < 0)
        return -1;
    free(c->db_port);
    c->db_port = NULL;
    if (port) {
        long long x;
        char *ps = dupn(port, (size_t)(slash - port));
        int bad = !ps || parse_int(ps, 1, 65535, &x) < 0;
        if (bad) {
            free(ps);
            return fail(err, errlen, origin, key, "bad port");
        }
        c->db_port = ps;
    }
    const char *db = slash + 1;
    const char *q = strchr(db, '?');
    free(c->db_database);
    c->db_database = pct(db, q ? (size_t)(q - db) : strlen(db));
    if (!c->db_database || !*c->db_database)
        return fail(err, errlen, origin, key, "no database");
    c->db_wire_crypt = FFB_CRYPT_ENABLED;
    c->db_compress = 0;
    while (q && *q) {
        const char *opt = q + 1;
        const char *amp = strchr(opt, '&');
        size_t on = amp ? (size_t)(amp - opt) : strlen(opt);
        char buf[64];
        if (on >= sizeof buf)
            return fail(err, errlen, origin, key, "option too long");
        memcpy(buf, opt, on);
        buf[on] = '\0';
        if (strcmp(buf, "wire_crypt=enabled") == 0)
            c->db_wire_crypt = FFB_CRYPT_ENABLED;
        else if (strcmp(buf, "wire_crypt=disabled") == 0)
            c->db_wire_crypt = FFB_CRYPT_DISABLED;
        else if (strcmp(buf, "wire_crypt=required") == 0)
            c->db_wire_crypt = FFB_CRYPT_REQUIRED;
        else if (strcmp(buf, "compress=true") == 0)
            c->db_compress = 1;
        else if (strcmp(buf, "compress=false") == 0)
            c->db_compress = 0;
        else if (on) {
            char why[200];
            snprintf(why, sizeof why,
                     "unknown option \"%s\" (wire_crypt=enabled|disabled|"
                     "required, compress=true|false)",
                     buf);
            return fail(err, errlen, origin, key, why);
        }
        q = amp;
    }
    return 0;
}

/* PostgREST keys that ffb-rest knows but does not do yet: refusing them
   is safer than running without (a JWT secret ignored would let every
   request in). */
static const char *const later[] = {"db-plan-enabled", "db-extra-search-path",
                                    "db-root-spec",    "db-pre-config",
                                    "db-channel",      "db-channel-enabled"};

int rest_config_set(rest_config *c, const char *key, const char *v,
                    const char *origin, char *err, size_t errlen) {
    long long x;
    int b;
    if (strcmp(key, "db-uri") == 0)
        return set_uri(c, v, origin, err, errlen);
    if (strcmp(key, "db-schemas") == 0) {
        if (strchr(v, ','))
            return fail(err, errlen, origin, key,
                        "Firebird before 6 has one schema: give one name");
        return replace(&c->db_schemas, v, strlen(v));
    }
    if (strcmp(key, "db-anon-role") == 0)
        return replace(&c->db_anon_role, v, strlen(v));
    if (strcmp(key, "jwt-secret") == 0)
        return replace(&c->jwt_secret, v, strlen(v));
    if (strcmp(key, "jwt-aud") == 0)
        return replace(&c->jwt_aud, v, strlen(v));
    if (strcmp(key, "jwt-role-claim-key") == 0)
        return replace(&c->jwt_role_claim_key, v, strlen(v));
    if (strcmp(key, "jwt-alg") == 0) {
        if (strcmp(v, "HS256") && strcmp(v, "HS384") && strcmp(v, "HS512"))
            return fail(err, errlen, origin, key,
                        "expected HS256, HS384 or HS512");
        return replace(&c->jwt_alg, v, strlen(v));
    }
    if (strcmp(key, "jwt-secret-is-base64") == 0) {
        if (parse_bool(v, &b) < 0)
            return fail(err, errlen, origin, key, "expected true or false");
        c->jwt_secret_is_base64 = b;
        return 0;
    }
    if (strcmp(key, "server-cors-allowed-origins") == 0)
        return replace(&c->server_cors_allowed_origins, v, strlen(v));
    if (strcmp(key, "openapi-mode") == 0) {
        if (strcmp(v, "ignore-privileges") == 0)
            c->openapi_mode = 0;
        else if (strcmp(v, "disabled") == 0)
            c->openapi_mode = 1;
        else if (strcmp(v, "follow-privileges") == 0)
            return fail(err, errlen, origin, key,
                        "follow-privileges is not implemented yet by "
                        "ffb-rest (ignore-privileges is its default)");
        else
            return fail(err, errlen, origin, key,
                        "expected ignore-privileges or disabled");
        return 0;
    }
    if (strcmp(key, "db-pre-request") == 0)
        return replace(&c->db_pre_request, v, strlen(v));
    if (strcmp(key, "db-request-context") == 0) {
        static const char *const m[] = {"auto", "always", "never"};
        for (int i = 0; i < 3; i++)
            if (strcmp(v, m[i]) == 0) {
                c->db_request_context = i;
                return 0;
            }
        return fail(err, errlen, origin, key, "expected auto, always or never");
    }
    if (strcmp(key, "db-pool") == 0) {
        if (parse_int(v, 1, 4096, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 1 to 4096");
        c->db_pool = (int)x;
        return 0;
    }
    if (strcmp(key, "db-pool-acquisition-timeout") == 0) {
        if (parse_int(v, 1, 3600, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected seconds from 1 to 3600");
        c->db_pool_acquisition_timeout = (int)x;
        return 0;
    }
    if (strcmp(key, "db-max-rows") == 0) {
        if (parse_int(v, 0, 1000000000LL, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected a non-negative integer");
        c->db_max_rows = x;
        return 0;
    }
    if (strcmp(key, "db-probe-rows") == 0) {
        if (parse_int(v, 1, 9999, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 1 to 9999");
        c->db_probe_rows = x;
        return 0;
    }
    if (strcmp(key, "db-tx-end") == 0) {
        static const char *const ends[] = {"commit", "commit-allow-override",
                                           "rollback",
                                           "rollback-allow-override"};
        for (int i = 0; i < 4; i++)
            if (strcmp(v, ends[i]) == 0) {
                c->db_tx_end = i;
                return 0;
            }
        return fail(err, errlen, origin, key,
                    "expected commit, commit-allow-override, rollback or "
                    "rollback-allow-override");
    }
    if (strcmp(key, "db-null-order") == 0) {
        if (strcmp(v, "postgres") == 0)
            c->db_null_order_pg = 1;
        else if (strcmp(v, "firebird") == 0)
            c->db_null_order_pg = 0;
        else
            return fail(err, errlen, origin, key,
                        "expected postgres or firebird");
        return 0;
    }
    if (strcmp(key, "db-aggregates-enabled") == 0) {
        if (parse_bool(v, &b) < 0)
            return fail(err, errlen, origin, key, "expected true or false");
        c->db_aggregates_enabled = b;
        return 0;
    }
    if (strcmp(key, "server-host") == 0)
        return replace(&c->server_host, v, strlen(v));
    if (strcmp(key, "server-port") == 0 ||
        strcmp(key, "admin-server-port") == 0) {
        if (parse_int(v, 0, 65535, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected a port from 0 to 65535");
        if (key[0] == 's')
            c->server_port = (int)x;
        else
            c->admin_server_port = (int)x;
        return 0;
    }
    if (strcmp(key, "server-threads") == 0) {
        if (parse_int(v, 1, 256, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 1 to 256");
        c->server_threads = (int)x;
        return 0;
    }
    if (strcmp(key, "server-timing-enabled") == 0) {
        if (parse_bool(v, &c->server_timing) < 0)
            return fail(err, errlen, origin, key, "expected true or false");
        return 0;
    }
    if (strcmp(key, "server-max-header-size") == 0) {
        if (parse_int(v, 256, 1 << 20, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected bytes from 256 to 1048576");
        c->server_max_headers = (size_t)x;
        return 0;
    }
    if (strcmp(key, "server-max-body") == 0) {
        if (parse_int(v, 1, 1LL << 30, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected bytes from 1 to 1073741824");
        c->server_max_body = (size_t)x;
        return 0;
    }
    if (strcmp(key, "db-embed-strategy") == 0) {
        if (strcmp(v, "pipelined") == 0)
            c->db_embed_per_level = 0;
        else if (strcmp(v, "per-level") == 0)
            c->db_embed_per_level = 1;
        else
            return fail(err, errlen, origin, key,
                        "expected pipelined or per-level");
        return 0;
    }
    if (strcmp(key, "server-max-embed-depth") == 0) {
        if (parse_int(v, 1, 32, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 1 to 32");
        c->server_max_embed_depth = (size_t)x;
        return 0;
    }
    if (strcmp(key, "server-max-url-length") == 0 ||
        strcmp(key, "server-max-filters") == 0 ||
        strcmp(key, "server-max-in-list") == 0) {
        if (parse_int(v, 1, 1000000, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 1 to 1000000");
        if (strcmp(key, "server-max-url-length") == 0)
            c->server_max_url = (size_t)x;
        else if (strcmp(key, "server-max-filters") == 0)
            c->server_max_filters = (size_t)x;
        else
            c->server_max_in_list = (size_t)x;
        return 0;
    }
    if (strcmp(key, "client-error-verbosity") == 0) {
        if (strcmp(v, "verbose") == 0)
            c->client_error_minimal = 0;
        else if (strcmp(v, "minimal") == 0)
            c->client_error_minimal = 1;
        else
            return fail(err, errlen, origin, key,
                        "expected verbose or minimal");
        return 0;
    }
    if (strcmp(key, "log-level") == 0) {
        static const char *const lv[] = {"crit", "error", "warn", "info"};
        for (int i = 0; i < 4; i++)
            if (strcmp(v, lv[i]) == 0) {
                c->log_level = i;
                return 0;
            }
        return fail(err, errlen, origin, key,
                    "expected crit, error, warn or info");
    }
    if (strcmp(key, "db-procedure-returns") == 0)
        return replace(&c->db_procedure_returns, v, strlen(v));
    if (strcmp(key, "db-prepared-statements") == 0) {
        if (parse_bool(v, &b) < 0)
            return fail(err, errlen, origin, key, "expected true or false");
        c->db_prepared_statements = b;
        return 0;
    }
    if (strcmp(key, "db-prepared-statements-max") == 0) {
        if (parse_int(v, 1, 65536, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 1 to 65536");
        c->db_prepared_statements_max = (int)x;
        return 0;
    }
    if (strcmp(key, "db-pool-max-per-role") == 0) {
        if (parse_int(v, 0, 4096, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 0 to 4096");
        c->db_pool_max_per_role = (int)x;
        return 0;
    }
    if (strcmp(key, "db-prepared-statements-idle") == 0) {
        if (parse_int(v, 0, 86400, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 0 to 86400");
        c->db_prepared_statements_idle = (int)x;
        return 0;
    }
    if (strcmp(key, "server-request-timeout") == 0) {
        if (parse_int(v, 1, 3600, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 1 to 3600");
        c->server_request_timeout = (int)x;
        return 0;
    }
    if (strcmp(key, "server-tls-cert-file") == 0)
        return replace(&c->server_tls_cert_file, v, strlen(v));
    if (strcmp(key, "server-tls-key-file") == 0)
        return replace(&c->server_tls_key_file, v, strlen(v));
    if (strcmp(key, "db-connect-timeout") == 0 ||
        strcmp(key, "db-io-timeout") == 0) {
        if (parse_int(v, 0, 3600, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected seconds from 0 (none) to 3600");
        if (strcmp(key, "db-connect-timeout") == 0)
            c->db_connect_timeout = (int)x;
        else
            c->db_io_timeout = (int)x;
        return 0;
    }
    if (strcmp(key, "db-statement-timeout") == 0) {
        if (parse_int(v, 0, 86400000, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected milliseconds from 0 (none) to 86400000");
        c->db_statement_timeout = (int)x;
        return 0;
    }
    if (strcmp(key, "jwt-cache-max-entries") == 0) {
        if (parse_int(v, 0, 1000000, &x) < 0)
            return fail(err, errlen, origin, key,
                        "expected an integer from 0 to 1000000");
        c->jwt_cache_max_entries = (long)x;
        return 0;
    }
    for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
        if (strcmp(key, later[i]) == 0)
            return fail(err, errlen, origin, key,
                        "not implemented yet by ffb-rest");
    return fail(err, errlen, origin, key, "unknown configuration key");
}

static const char *skip_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

int rest_config_parse_text(rest_config *c, const char *text, const char *origin,
                           char *err, size_t errlen) {
    const char *p = text;
    int line = 0;
    while (*p) {
        const char *e = strchr(p, '\n');
        if (!e)
            e = p + strlen(p);
        line++;
        char where[300];
        snprintf(where, sizeof where, "%s:%d", origin, line);
        const char *s = skip_ws(p, e);
        const char *le = e;
        if (le > s && le[-1] == '\r')
            le--;
        if (s < le && *s != '#') {
            const char *eq = memchr(s, '=', (size_t)(le - s));
            if (!eq) {
                snprintf(err, errlen, "%s: expected key = value", where);
                return -1;
            }
            const char *ke = eq;
            while (ke > s && (ke[-1] == ' ' || ke[-1] == '\t'))
                ke--;
            const char *v = skip_ws(eq + 1, le);
            const char *ve = le;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            char *val;
            if (ve > v && *v == '"') {
                /* "..." with \" and \\ */
                char *o = malloc((size_t)(ve - v) + 1);
                size_t k = 0;
                const char *q = v + 1;
                if (!o)
                    return -1;
                while (q < ve && *q != '"') {
                    if (*q == '\\' && q + 1 < ve)
                        q++;
                    o[k++] = *q++;
                }
                o[k] = '\0';
                if (q >= ve || q + 1 != ve) {
                    free(o);
                    snprintf(err, errlen, "%s: bad quoted value", where);
                    return -1;
                }
                val = o;
            } else {
                val = dupn(v, (size_t)(ve - v));
            }
            char *key = dupn(s, (size_t)(ke - s));
            int rc = key && val
                         ? rest_config_set(c, key, val, where, err, errlen)
                         : -1;
            free(key);
            free(val);
            if (rc < 0)
                return -1;
        }
        p = *e ? e + 1 : e;
    }
    return 0;
}

int rest_config_load(rest_config *c, const char *path, char *const *envp,
                     char *err, size_t errlen) {
    if (path) {
        FILE *f = fopen(path, "rb");
        if (!f) {
            snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
            return -1;
        }
        char *text = NULL;
        size_t n = 0, cap = 0;
        for (;;) {
            if (n + 4096 + 1 > cap) {
                cap = cap ? cap * 2 : 8192;
                char *t = realloc(text, cap);
                if (!t || cap > (1u << 20)) {
                    free(t ? t : text);
                    fclose(f);
                    snprintf(err, errlen, "%s: too large", path);
                    return -1;
                }
                text = t;
            }
            size_t r = fread(text + n, 1, 4096, f);
            n += r;
            if (r < 4096)
                break;
        }
        fclose(f);
        text[n] = '\0';
        int rc = rest_config_parse_text(c, text, path, err, errlen);
        free(text);
        if (rc < 0)
            return -1;
    }
    for (char *const *e = envp; e && *e; e++) {
        if (strncmp(*e, "PGRST_", 6) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        char key[128], origin[160];
        size_t kn = (size_t)(eq - *e) - 6;
        if (kn == 0 || kn >= sizeof key)
            continue;
        for (size_t i = 0; i < kn; i++) {
            char ch = (*e)[6 + i];
            key[i] = ch == '_' ? '-' : (char)tolower((unsigned char)ch);
        }
        key[kn] = '\0';
        snprintf(origin, sizeof origin, "environment PGRST_%.*s", (int)kn,
                 *e + 6);
        if (rest_config_set(c, key, eq + 1, origin, err, errlen) < 0)
            return -1;
    }
    if (!c->db_host || !c->db_database) {
        snprintf(err, errlen,
                 "db-uri is required (file key db-uri or "
                 "PGRST_DB_URI)");
        return -1;
    }
    if (!c->server_tls_cert_file != !c->server_tls_key_file) {
        snprintf(err, errlen,
                 "%s is set but %s is not: TLS needs both (or neither, "
                 "for plain HTTP)",
                 c->server_tls_cert_file ? "server-tls-cert-file"
                                         : "server-tls-key-file",
                 c->server_tls_cert_file ? "server-tls-key-file"
                                         : "server-tls-cert-file");
        return -1;
    }
    return 0;
}
