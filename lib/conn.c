/*
 * Connection objects: options, lifecycle, and the public calls of the
 * connection layer (connect, create, detach, drop, ping, info, stats).
 * Blocking calls are "queue + flush + wait for the answer" on the engine.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/internal.h"
#include "lib/wirecrypt.h"

#define DEFAULT_PLUGINS "Srp256,Srp,Legacy_Auth"
#define DEFAULT_CIPHERS "ChaCha64,ChaCha,Arc4"

const char *ffb_version(void) { return "0.1.0"; }

void ffb_conn_options_init(ffb_conn_options *opts) {
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->version = FFB_CONN_OPTIONS_VERSION;
}

/* ---- option parsing --------------------------------------------------------- */

static int known_auth_plugin(const char *s, size_t n) {
    static const char *const names[] = {"Srp",    "Srp224",      "Srp256",
                                        "Srp384", "Srp512",      "Legacy_Auth"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
            return 1;
    return 0;
}

/* Split a list at spaces, tabs, commas and semicolons (the server's rule). */
static int parse_list(const char *list, char (*out)[FFB__PLUGIN_NAME],
                      size_t max, size_t *n, int (*known)(const char *, size_t),
                      ffb_error *err, const char *what) {
    *n = 0;
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';')
            p++;
        const char *s = p;
        while (*p && *p != ' ' && *p != '\t' && *p != ',' && *p != ';')
            p++;
        size_t len = (size_t)(p - s);
        if (len == 0)
            continue;
        if (!known(s, len))
            return ffb__error_set(err, FFB_E_INVAL, "unknown %s \"%.*s\"",
                                  what, (int)len, s);
        if (*n == max || len >= FFB__PLUGIN_NAME)
            return ffb__error_set(err, FFB_E_INVAL, "too many %ss", what);
        memcpy(out[*n], s, len);
        out[*n][len] = '\0';
        (*n)++;
    }
    return 0;
}

/*
 * Split a DSN into host, port and path:
 *   inet://host:port/path, inet4://..., inet6://[addr]:port/path,
 *   host/port:path, host:path, [addr]/port:path, or a bare path.
 */
static int parse_dsn(const char *dsn, char **host, char **port, char **path,
                     const ffb_allocator *a, ffb_error *err) {
    const char *h = NULL, *pt = NULL, *pa = NULL;
    size_t hl = 0, ptl = 0;
    const char *rest = NULL;
    if (strncmp(dsn, "inet://", 7) == 0)
        rest = dsn + 7;
    else if (strncmp(dsn, "inet4://", 8) == 0 || strncmp(dsn, "inet6://", 8) == 0)
        rest = dsn + 8;
    if (rest) {
        if (*rest == '[') {
            const char *e = strchr(rest, ']');
            if (!e)
                goto bad;
            h = rest + 1;
            hl = (size_t)(e - h);
            rest = e + 1;
        } else {
            h = rest;
            while (*rest && *rest != ':' && *rest != '/')
                rest++;
            hl = (size_t)(rest - h);
        }
        if (*rest == ':') {
            pt = ++rest;
            while (*rest && *rest != '/')
                rest++;
            ptl = (size_t)(rest - pt);
        }
        if (*rest != '/' || rest[1] == '\0')
            goto bad;
        pa = rest + 1;
    } else if (dsn[0] == '[') {
        const char *e = strchr(dsn, ']');
        if (!e)
            goto bad;
        h = dsn + 1;
        hl = (size_t)(e - h);
        rest = e + 1;
        if (*rest == '/') {
            pt = ++rest;
            while (*rest && *rest != ':')
                rest++;
            ptl = (size_t)(rest - pt);
        }
        if (*rest != ':' || rest[1] == '\0')
            goto bad;
        pa = rest + 1;
    } else {
        const char *colon = dsn[0] == '/' ? NULL : strchr(dsn, ':');
        if (!colon) {
            pa = dsn; /* bare path or alias on localhost */
        } else {
            const char *slash = memchr(dsn, '/', (size_t)(colon - dsn));
            h = dsn;
            hl = (size_t)((slash ? slash : colon) - dsn);
            if (slash) {
                pt = slash + 1;
                ptl = (size_t)(colon - pt);
            }
            pa = colon + 1;
        }
    }
    if (!*pa || (h && hl == 0) || (pt && ptl == 0))
        goto bad;
    char *hh = NULL, *pp = NULL, *aa = NULL;
    if (h) {
        hh = ffb__malloc(a, hl + 1);
        if (hh) {
            memcpy(hh, h, hl);
            hh[hl] = '\0';
        }
    }
    if (pt) {
        pp = ffb__malloc(a, ptl + 1);
        if (pp) {
            memcpy(pp, pt, ptl);
            pp[ptl] = '\0';
        }
    }
    aa = ffb__strdup(a, pa);
    if ((h && !hh) || (pt && !pp) || !aa) {
        ffb__free(a, hh);
        ffb__free(a, pp);
        ffb__free(a, aa);
        return ffb__error_set(err, FFB_E_NOMEM, "out of memory");
    }
    *host = hh;
    *port = pp;
    *path = aa;
    return 0;
bad:
    return ffb__error_set(err, FFB_E_INVAL,
                          "cannot parse the connection string \"%s\" (expected "
                          "host[/port]:path, inet://host:port/path or a path)",
                          dsn);
}

static int cipher_known(const char *s, size_t n) {
    return ffb__cipher_known(s, n);
}

static void free_options(ffb_conn *c) {
    if (c->password)
        OPENSSL_cleanse(c->password, strlen(c->password));
    char **fields[] = {&c->host,    &c->port,    &c->database,
                       &c->user,    &c->password, &c->role,
                       &c->charset, &c->os_user, &c->client_host,
                       &c->process_name};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        ffb__free(c->alloc, *fields[i]);
        *fields[i] = NULL;
    }
}

static int set_str(ffb_conn *c, char **dst, const char *v, const char *def) {
    const char *s = v ? v : def;
    ffb__free(c->alloc, *dst);
    *dst = NULL;
    if (!s)
        return 0;
    *dst = ffb__strdup(c->alloc, s);
    return *dst ? 0 : FFB_E_NOMEM;
}

static int apply_options(ffb_conn *c, const ffb_conn_options *o,
                         ffb_error *err) {
    int rc = 0;
    char *dh = NULL, *dp = NULL, *dpath = NULL;
    if (o->dsn) {
        rc = parse_dsn(o->dsn, &dh, &dp, &dpath, c->alloc, err);
        if (rc < 0)
            return rc;
    }
    rc |= set_str(c, &c->host, o->host ? o->host : dh, "localhost");
    rc |= set_str(c, &c->port, o->port ? o->port : dp, "3050");
    rc |= set_str(c, &c->database, o->database ? o->database : dpath, NULL);
    ffb__free(c->alloc, dh);
    ffb__free(c->alloc, dp);
    ffb__free(c->alloc, dpath);
    rc |= set_str(c, &c->user, o->user, "SYSDBA");
    rc |= set_str(c, &c->password, o->password, "");
    rc |= set_str(c, &c->role, o->role, NULL);
    rc |= set_str(c, &c->charset, o->charset, "UTF8");

    char user[128], host[256], name[512];
    int pid;
    ffb__os_identity(user, sizeof(user), host, sizeof(host), &pid, name,
                     sizeof(name));
    rc |= set_str(c, &c->os_user, o->os_user, user);
    rc |= set_str(c, &c->client_host, o->client_host, host);
    rc |= set_str(c, &c->process_name, o->process_name, name);
    c->process_id = o->process_id ? o->process_id : pid;
    if (rc)
        return ffb__error_set(err, FFB_E_NOMEM, "out of memory");
    if (!c->database || !c->database[0])
        return ffb__error_set(err, FFB_E_INVAL,
                              "no database given (set dsn or database)");

    rc = parse_list(o->auth_plugins ? o->auth_plugins : DEFAULT_PLUGINS,
                    c->plugins, FFB__MAX_PLUGINS, &c->nplugins,
                    known_auth_plugin, err, "authentication plugin");
    if (rc < 0)
        return rc;
    if (c->nplugins == 0)
        return ffb__error_set(err, FFB_E_INVAL,
                              "the authentication plugin list is empty");
    c->plugin_list[0] = '\0';
    for (size_t i = 0; i < c->nplugins; i++) {
        if (i)
            strcat(c->plugin_list, ",");
        strcat(c->plugin_list, c->plugins[i]);
    }
    rc = parse_list(o->wire_crypt_plugins ? o->wire_crypt_plugins
                                          : DEFAULT_CIPHERS,
                    c->ciphers, 4, &c->nciphers, cipher_known, err,
                    "wire-crypt plugin");
    if (rc < 0)
        return rc;
    if (o->wire_crypt != FFB_CRYPT_ENABLED &&
        o->wire_crypt != FFB_CRYPT_DISABLED &&
        o->wire_crypt != FFB_CRYPT_REQUIRED)
        return ffb__error_set(err, FFB_E_INVAL,
                              "wire_crypt must be FFB_CRYPT_ENABLED, "
                              "FFB_CRYPT_DISABLED or FFB_CRYPT_REQUIRED");
    if (o->io != FFB_IO_BLOCKING && o->io != FFB_IO_EXTERNAL)
        return ffb__error_set(err, FFB_E_INVAL, "io must be 0 or 1");
    if (o->dialect != 0 && o->dialect != 1 && o->dialect != 3)
        return ffb__error_set(err, FFB_E_INVAL, "dialect must be 1 or 3");
    c->wire_crypt = o->wire_crypt;
    c->compress = o->compress != 0;
    c->io = o->io;
    c->connect_timeout_ms = o->connect_timeout_ms;
    c->io_timeout_ms = o->io_timeout_ms;
    c->dialect = o->dialect ? o->dialect : 3;
    c->pipeline_crypt = !o->no_pipeline_crypt;
    if (o->min_protocol != 0 && (o->min_protocol < 10 || o->min_protocol > 13))
        return ffb__error_set(err, FFB_E_INVAL,
                              "min_protocol must be between 10 and 13");
    c->min_protocol = o->min_protocol ? o->min_protocol : FFBP_PROTOCOL_MIN;
    c->inline_size = o->inline_blob_size == 0  ? 65535
                     : o->inline_blob_size < 0 ? 0
                     : o->inline_blob_size > 65535
                         ? 65535
                         : (uint32_t)o->inline_blob_size;
    c->inline_budget = o->blob_cache_bytes ? o->blob_cache_bytes
                                           : 10u * 1024u * 1024u;
    if (o->fetch_size < 0 || o->fetch_size > 65535)
        return ffb__error_set(err, FFB_E_INVAL,
                              "fetch_size must be 0..65535");
    c->fetch_size = o->fetch_size;
    if (o->max_packet_size && o->max_packet_size < 65536)
        return ffb__error_set(err, FFB_E_INVAL,
                              "max_packet_size must be 0 (64 MiB) or at "
                              "least 65536");
    c->max_packet = o->max_packet_size ? o->max_packet_size
                                       : (size_t)64 * 1024 * 1024;
    c->crypt_key_cb = o->crypt_key_cb;
    c->crypt_key_data = o->crypt_key_data;
    c->cache_size = o->stmt_cache_size == 0 ? 32
                    : o->stmt_cache_size < 0 ? 0
                                             : o->stmt_cache_size;
    return 0;
}

int ffb__conn_set_test_srp_key(ffb_conn *conn, const uint8_t *a, size_t len) {
    if (len > sizeof(conn->test_a) || (!a && len))
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "the test SRP key is at most 128 bytes");
    if (len)
        memcpy(conn->test_a, a, len);
    conn->test_a_len = len;
    return 0;
}

/* What the engine hands over, and to whom. */
static void install_hooks(ffb_conn *c) {
    c->on_results = ffb__results_poll;
    c->on_inline_blob = ffb__inline_store;
    c->on_handshake = ffb__hs_packet;
    c->on_hs_wipe = ffb__hs_wipe;
    c->on_crypt_key = ffb__hs_crypt_key;
    c->on_spares = ffb__spares_queue;
}

/* The attachment ended (or a new one begins): the events object forgets
   its aux connection (lib/events.c closes it). */
static void attach_end(ffb_conn *c, int destroy) {
    if (c->on_attach_end)
        c->on_attach_end(c, destroy);
}

/* A connection that only carries why its options were refused. */
static ffb_conn *refused(ffb_conn *c, int code, const char *why) {
    if (!c) {
        c = malloc(sizeof(*c));
        if (!c)
            return NULL;
        memset(c, 0, sizeof(*c));
    }
    if (why)
        ffb__error_set(&c->err, code, "%s", why);
    else if (c->err.code == 0)
        ffb__error_set(&c->err, code, "invalid connection options");
    c->net.fd = -1;
    c->aux_fd = -1;
    c->net.wake_rd = c->net.wake_wr = -1;
    ffb__conn_set_transport(c, NULL, NULL);
    install_hooks(c);
    c->hs_deadline = -1;
    c->state = FFB__ST_CLOSED;
    c->bad_options = 1;
    return c;
}

int ffb_conn_new(const ffb_conn_options *opts, ffb_conn **out) {
    if (!out)
        return FFB_E_INVAL;
    *out = NULL;
    if (!opts) {
        *out = refused(NULL, FFB_E_INVAL, "no options given (opts is NULL)");
        return *out ? FFB_E_INVAL : FFB_E_NOMEM;
    }
    if (opts->version != FFB_CONN_OPTIONS_VERSION) {
        char why[128];
        snprintf(why, sizeof(why),
                 "ffb_conn_options.version is %u; this library takes %u "
                 "(FFB_CONN_OPTIONS_INIT or ffb_conn_options_init() sets it)",
                 opts->version, (unsigned)FFB_CONN_OPTIONS_VERSION);
        *out = refused(NULL, FFB_E_INVAL, why);
        return *out ? FFB_E_INVAL : FFB_E_NOMEM;
    }
    const ffb_allocator *a = opts->allocator;
    if (a && (!a->malloc || !a->realloc || !a->free)) {
        *out = refused(NULL, FFB_E_INVAL,
                       "allocator: malloc, realloc and free must all be set");
        return *out ? FFB_E_INVAL : FFB_E_NOMEM;
    }
    ffb_conn *c = a ? a->malloc(sizeof(*c), a->data) : malloc(sizeof(*c));
    if (!c)
        return FFB_E_NOMEM;
    memset(c, 0, sizeof(*c));
    if (a) {
        c->alloc_copy = *a;
        c->alloc = &c->alloc_copy;
    }
    c->net.fd = -1;
    c->aux_fd = -1;
    c->net.wake_rd = c->net.wake_wr = -1;
    ffb__conn_set_transport(c, NULL, NULL); /* sockets */
    install_hooks(c);
    c->hs_deadline = -1;
    ffbp_writer_init(&c->stage, c->alloc);
    ffbp_writer_init(&c->out, c->alloc);
    ffbp_writer_init(&c->wire_in, c->alloc);
    ffbp_writer_init(&c->in, c->alloc);
    int rc = apply_options(c, opts, &c->err);
    if (rc == FFB_E_NOMEM) {
        free_options(c);
        if (a)
            a->free(c, a->data);
        else
            free(c);
        return rc;
    }
    if (rc < 0) {
        /* Kept, with the error naming the option: the caller reads it from
           ffb_conn_error() and frees the connection, which never
           connects. */
        free_options(c);
        *out = refused(c, rc, NULL);
        return rc;
    }
    if (opts->formats && c->cache_size > 0)
        /* without a statement cache nothing is remembered: not shared
           either */
        ffb__formats_attach(c, opts->formats);
    c->state = FFB__ST_NEW;
    *out = c;
    return 0;
}

int ffb__conn_free_refused(ffb_conn *conn) {
    if (!conn->in_callback)
        return 0;
    /* The library call that runs the callback still uses the connection:
       freeing it now would pull it from under that call. */
    ffb__error_set(&conn->err, FFB_E_STATE,
                   "ffb_conn_free() inside a result callback is ignored; "
                   "free the connection after the call that delivered the "
                   "result returns");
    return 1;
}

void ffb__conn_destroy(ffb_conn *conn) {
    conn->hs_sync = NULL; /* its result is freed below */
    attach_end(conn, 1);
    ffb__results_cancel(conn);
    ffb__cache_free_all(conn);
    ffb__arrays_free_all(conn);
    ffb__engine_reset(conn);
    ffb__results_free_all(conn);
    ffb__blobs_destroy_all(conn);
    ffb__batches_destroy_all(conn);
    ffb__stmts_destroy_all(conn);
    ffb__txs_destroy_all(conn);
    ffb__svc_reset(conn);
    ffb__formats_detach(conn);
    ffbp_writer_free(&conn->stage);
    ffbp_writer_free(&conn->out);
    ffbp_writer_free(&conn->wire_in);
    ffbp_writer_free(&conn->in);
    ffb__free(conn->alloc, conn->fifo);
    free_options(conn);
    ffb__io_release(conn);
    const ffb_allocator *a = conn->alloc;
    if (a) {
        ffb_allocator copy = *a;
        copy.free(conn, copy.data);
    } else {
        ffb__obj_release(NULL, conn, "connection");
    }
}

/* ---- connect ------------------------------------------------------------------ */

/* The connect (TCP and the whole handshake) must end within
   connect_timeout_ms from now. */
static void start_clock(ffb_conn *conn) {
    conn->hs_deadline = conn->connect_timeout_ms > 0
                            ? ffb__now(conn) + conn->connect_timeout_ms
                            : -1;
}

void ffb__connect_begin(ffb_conn *conn) {
    ffb__cache_free_all(conn); /* statements of an earlier attachment */
    ffb__svc_reset(conn);
    ffb__blobs_destroy_all(conn);
    attach_end(conn, 0);
    ffb__engine_reset(conn);
    ffb__conn_error_clear(conn);
    conn->state = FFB__ST_NEW;
    start_clock(conn);
}

int ffb__connect_end(ffb_conn *conn, int rc) {
    if (rc == 0 && conn->hs_rc < 0)
        rc = conn->hs_rc;
    if (rc == 0 && conn->state != FFB__ST_READY)
        rc = ffb__error_set(&conn->err, FFB_E_PROTO,
                            "handshake ended without an attachment");
    if (rc < 0) {
        if (conn->err.code == 0)
            ffb__error_set(&conn->err, rc, "%s", ffb_strerror(rc));
        conn->state = FFB__ST_CLOSED;
    }
    return rc;
}

int ffb__connect_retry(const ffb_conn *conn, int rc) {
    return rc == FFB_E_CLOSED && conn->crypt_pipelined &&
           conn->pipeline_crypt && conn->hs == FFB__HS_FAILED;
}

/* The create options are of this library's version. */
static int copts_check(ffb_conn *conn, const ffb_create_options *copts) {
    if (copts && copts->version != FFB_CREATE_OPTIONS_VERSION)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "ffb_create_options.version is %u; this "
                              "library takes %u (FFB_CREATE_OPTIONS_INIT "
                              "sets it)",
                              copts->version,
                              (unsigned)FFB_CREATE_OPTIONS_VERSION);
    return 0;
}

/* The create options are of this version and name a page size and a
   dialect Firebird has. */
static int create_check(ffb_conn *conn, const ffb_create_options *copts) {
    int rc = copts_check(conn, copts);
    if (rc < 0)
        return rc;
    if (copts && copts->page_size != 0 && copts->page_size != 4096 &&
        copts->page_size != 8192 && copts->page_size != 16384 &&
        copts->page_size != 32768)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "page_size must be 4096, 8192, 16384 or 32768");
    if (copts && copts->dialect != 0 && copts->dialect != 1 &&
        copts->dialect != 3)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "dialect must be 1 or 3");
    return 0;
}

int ffb__connect_check(ffb_conn *conn, int create,
                       const ffb_create_options *copts) {
    int rc = create ? create_check(conn, copts) : 0;
    if (rc < 0)
        return rc;
    if (conn->bad_options)
        return conn->err.code; /* why ffb_conn_new refused the options */
    if (conn->io != FFB_IO_BLOCKING)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "this connection uses external I/O: use "
                              "ffb_conn_start()");
    if (conn->state != FFB__ST_NEW && conn->state != FFB__ST_CLOSED)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the connection is already %s",
                              conn->state == FFB__ST_BROKEN ? "broken"
                                                            : "connected");
    return 0;
}

static int start(ffb_conn *conn, int create,
                 const ffb_create_options *copts) {
    if (!conn)
        return FFB_E_INVAL;
    if (conn->bad_options)
        return conn->err.code;
    if (conn->io != FFB_IO_EXTERNAL)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "ffb_conn_start() needs io = FFB_IO_EXTERNAL");
    if (conn->state != FFB__ST_NEW && conn->state != FFB__ST_CLOSED)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the connection is already started");
    attach_end(conn, 0);
    ffb__engine_reset(conn);
    ffb__svc_reset(conn);
    ffb__conn_error_clear(conn);
    conn->hs_sync = NULL; /* queue_start() sets it after this */
    start_clock(conn);
    return ffb__hs_start(conn, create, copts);
}

int ffb_conn_start(ffb_conn *conn) { return start(conn, 0, NULL); }

static int queue_start(ffb_conn *conn, int create,
                       const ffb_create_options *copts, ffb_cb cb,
                       void *data) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = create == 1 ? create_check(conn, copts) : 0;
    if (rc == 0)
        rc = start(conn, create, copts);
    if (rc < 0)
        return rc;
    struct ffb_result *r = ffb__result_new(
        conn, create == 1 ? FFB_OP_CREATE_DATABASE : FFB_OP_CONNECT, cb, data);
    if (!r)
        return ffb__engine_break(conn, FFB_E_NOMEM);
    conn->hs_sync = &r->sync;
    return 0;
}

/* The service manager's handshake (lib/service.c has the rest). */
int ffb_svc_queue_connect(ffb_conn *conn, ffb_cb cb, void *data) {
    return queue_start(conn, FFB__HS_SERVICE, NULL, cb, data);
}

int ffb_conn_queue_connect(ffb_conn *conn, ffb_cb cb, void *data) {
    return queue_start(conn, 0, NULL, cb, data);
}

int ffb_conn_queue_create_database(ffb_conn *conn,
                                   const ffb_create_options *copts, ffb_cb cb,
                                   void *data) {
    return queue_start(conn, 1, copts, cb, data);
}

int ffb_conn_start_create(ffb_conn *conn, const ffb_create_options *copts) {
    if (!conn)
        return FFB_E_INVAL;
    int rc = create_check(conn, copts);
    return rc < 0 ? rc : start(conn, 1, copts);
}

int ffb_conn_step(ffb_conn *conn) {
    if (!conn)
        return FFB_E_INVAL;
    if (conn->state == FFB__ST_READY)
        return 1;
    if (conn->state == FFB__ST_BROKEN)
        return ffb__broken_code(conn);
    if (conn->hs == FFB__HS_FAILED)
        return conn->hs_rc ? conn->hs_rc : FFB_E_PROTO;
    return 0;
}

int ffb__conn_queue_goodbye(ffb_conn *conn) {
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    ffbp_put_empty_op(&w, FFBP_OP_DISCONNECT);
    int rc = ffb__engine_queue(conn, &w, 0);
    if (rc == 0)
        rc = ffb__engine_flush(conn);
    ffbp_writer_free(&w);
    return rc;
}

void ffb__conn_closed(ffb_conn *conn) {
    conn->state = FFB__ST_CLOSED;
    attach_end(conn, 0);
    ffb__inline_clear(conn); /* transaction handles mean nothing now */
}

int ffb__nothing_held(ffb_conn *conn, const void *arg) {
    (void)arg;
    return conn->held_head == NULL;
}

/* Calls that end the attachment are refused inside a result callback:
   the call running the callback still reads answers owed. */
int ffb__not_in_callback(ffb_conn *conn, const char *what) {
    if (!conn->in_callback)
        return 0;
    return ffb__error_set(&conn->err, FFB_E_STATE,
                          "%s inside a result callback; call it after the "
                          "call that delivered the result returns",
                          what);
}

void ffb__conn_close_now(ffb_conn *conn) {
    /* What is still queued can no longer be answered (a queued connect's
       result too: the handshake cannot finish now). */
    conn->hs_sync = NULL;
    ffb__results_cancel(conn);
    if (conn->state != FFB__ST_NEW)
        conn->state = FFB__ST_CLOSED;
    ffb__inline_clear(conn);
    attach_end(conn, 0);
}

/* isc_info_firebird_version / isc_info_isc_version: count, then counted
   strings. Takes the first. */
static void info_first_string(const uint8_t *d, size_t n, char *out,
                              size_t size) {
    out[0] = '\0';
    if (n < 2 || d[0] == 0)
        return;
    size_t len = d[1];
    if (len > n - 2)
        len = n - 2;
    if (len >= size)
        len = size - 1;
    memcpy(out, d + 2, len);
    out[len] = '\0';
}

size_t ffb__db_info_items(const uint8_t **items) {
    static const uint8_t list[] = {
        FFBP_INFO_FIREBIRD_VERSION, FFBP_INFO_ISC_VERSION,
        FFBP_INFO_ODS_VERSION,      FFBP_INFO_ODS_MINOR_VERSION,
        FFBP_INFO_PAGE_SIZE,        FFBP_INFO_DB_SQL_DIALECT,
        FFBP_INFO_ATTACHMENT_ID,    FFBP_INFO_END};
    *items = list;
    return sizeof(list);
}

int ffb__db_info_parse(ffb_conn *conn, const uint8_t *buf, size_t len,
                       ffb_db_info *out) {
    int rc = 0;
    memset(out, 0, sizeof(*out));
    size_t pos = 0, n;
    uint8_t item;
    const uint8_t *d;
    while ((rc = ffbp_info_next(buf, len, &pos, &item, &d, &n)) == 1) {
        switch (item) {
        case FFBP_INFO_FIREBIRD_VERSION:
            info_first_string(d, n, out->server_version,
                              sizeof(out->server_version));
            break;
        case FFBP_INFO_ISC_VERSION:
            info_first_string(d, n, out->implementation,
                              sizeof(out->implementation));
            break;
        case FFBP_INFO_ODS_VERSION:
            out->ods_major = (int)ffbp_le_int(d, n);
            break;
        case FFBP_INFO_ODS_MINOR_VERSION:
            out->ods_minor = (int)ffbp_le_int(d, n);
            break;
        case FFBP_INFO_PAGE_SIZE:
            out->page_size = (int)ffbp_le_int(d, n);
            break;
        case FFBP_INFO_DB_SQL_DIALECT:
            out->dialect = (int)ffbp_le_int(d, n);
            break;
        case FFBP_INFO_ATTACHMENT_ID:
            out->attachment_id = ffbp_le_int(d, n);
            break;
        default:
            break;
        }
    }
    if (rc < 0)
        return ffb__engine_fail(
            conn, ffb__error_set(&conn->err, FFB_E_PROTO,
                                 "malformed info buffer in the answer to "
                                 "op_info_database"));
    /* "LI-V4.0.5.3140 Firebird 4.0": the digits after the V. */
    const char *v = strchr(out->server_version, 'V');
    if (v)
        sscanf(v + 1, "%d.%d", &out->server_major, &out->server_minor);
    return 0;
}

/* ---- accessors ------------------------------------------------------------------ */

const ffb_error *ffb_conn_error(const ffb_conn *conn) {
    return conn ? &conn->err : NULL;
}

int ffb_conn_is_broken(const ffb_conn *conn) {
    return conn && conn->state == FFB__ST_BROKEN;
}

int ffb_conn_is_attached(const ffb_conn *conn) {
    return conn && conn->state == FFB__ST_READY;
}

int ffb_conn_protocol(const ffb_conn *conn) { return conn ? conn->protocol : 0; }

const char *ffb_conn_auth_plugin(const ffb_conn *conn) {
    return conn ? conn->auth_used : "";
}

const char *ffb_conn_wire_crypt(const ffb_conn *conn) {
    return conn ? conn->crypt_used : "";
}

int ffb_conn_is_compressed(const ffb_conn *conn) {
    return conn && conn->compressed;
}

int ffb_conn_stats(const ffb_conn *conn, ffb_stats *out, size_t out_size) {
    if (!conn || !out)
        return FFB_E_INVAL;
    return ffb__give(out, out_size, &conn->stats, sizeof(conn->stats));
}

void ffb_conn_reset_stats(ffb_conn *conn) {
    if (conn)
        memset(&conn->stats, 0, sizeof(conn->stats));
}
