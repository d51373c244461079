/*
 * ffb-rest: a PostgREST-compatible REST server for Firebird (docs/rest.md).
 *
 * One process; `server-threads` threads, each with its own libuv loop, its
 * own listening socket on the same port (SO_REUSEPORT: the kernel spreads
 * connections), an h2o context on that loop and a libfastfb pool on it.
 * Nothing on a loop blocks: HTTP and Firebird I/O are both driven by it.
 * The schema cache is read once at start (on a loop of its own, before
 * the server threads start) and is read-only afterwards.
 *
 *   ffb-rest [config-file]
 *   ffb-rest --schema [config-file]   print the schema cache and exit
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <h2o.h>
#include <h2o/socket/uv-binding.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "buf.h"
#include "config.h"
#include "context.h"
#include "jwt.h"
#include "jwtcache.h"
#include "reload.h"
#include "roles.h"
#include "schema_load.h"
#include "server.h"

extern char **environ;

static void logf_(const rest_config *cfg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void logf_(const rest_config *cfg, int level, const char *fmt, ...) {
    va_list ap;
    if (level > cfg->log_level)
        return;
    va_start(ap, fmt);
    fputs("ffb-rest: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A listening socket with SO_REUSEPORT (libuv 1.44 has no flag for it),
   handed to libuv with uv_tcp_open. */
static int listen_fd(const char *host, int port, char *err, size_t errlen) {
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof ss);
    const char *h = host;
    if (strcmp(h, "!4") == 0 || strcmp(h, "*4") == 0 || strcmp(h, "*") == 0)
        h = "0.0.0.0";
    else if (strcmp(h, "!6") == 0 || strcmp(h, "*6") == 0)
        h = "::";
    else if (strcmp(h, "localhost") == 0)
        h = "127.0.0.1";
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, h, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        sl = sizeof *s4;
    } else if (inet_pton(AF_INET6, h, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        sl = sizeof *s6;
    } else {
        snprintf(err, errlen, "server-host: not an address: %s", host);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 511) < 0) {
        snprintf(err, errlen, "cannot listen on %s port %d: %s", host, port,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* server-tls-cert-file / server-tls-key-file: an OpenSSL context for the
   main port (TLS 1.2 and later; ALPN offers h2 and http/1.1, libh2o's
   list). NULL with `err` when a file does not load or the key does not
   match the certificate. */
static SSL_CTX *tls_ctx_new(const rest_config *cfg, char *err, size_t errlen) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    const char *what = "cannot create the TLS context";
    char ossl[256] = "";
    unsigned long e;
    if (!ctx)
        goto fail;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    what = "server-tls-cert-file: cannot load the certificate chain";
    if (SSL_CTX_use_certificate_chain_file(ctx, cfg->server_tls_cert_file) != 1)
        goto fail;
    what = "server-tls-key-file: cannot load the private key";
    if (SSL_CTX_use_PrivateKey_file(ctx, cfg->server_tls_key_file,
                                    SSL_FILETYPE_PEM) != 1)
        goto fail;
    what = "server-tls-key-file: the key does not match the certificate";
    if (SSL_CTX_check_private_key(ctx) != 1)
        goto fail;
    h2o_ssl_register_alpn_protocols(ctx, h2o_alpn_protocols);
    return ctx;
fail:
    e = ERR_peek_error(); /* the first: the cause */
    if (e)
        ERR_error_string_n(e, ossl, sizeof ossl);
    snprintf(err, errlen, "%s (%s, %s)%s%s", what, cfg->server_tls_cert_file,
             cfg->server_tls_key_file, *ossl ? ": " : "", ossl);
    ERR_clear_error();
    SSL_CTX_free(ctx);
    return NULL;
}

static void on_sock_close(uv_handle_t *h) { free(h); }

static void accept_on(uv_stream_t *listener, h2o_accept_ctx_t *actx) {
    uv_tcp_t *conn = malloc(sizeof *conn);
    if (!conn)
        return;
    uv_tcp_init(listener->loop, conn);
    if (uv_accept(listener, (uv_stream_t *)conn) != 0) {
        uv_close((uv_handle_t *)conn, on_sock_close);
        return;
    }
    uv_tcp_nodelay(conn, 1);
    h2o_socket_t *sock =
        h2o_uv_socket_create((uv_stream_t *)conn, on_sock_close);
    h2o_accept(actx, sock);
}

static void on_connection(uv_stream_t *listener, int status) {
    rest_loop *lp = listener->data;
    if (status == 0)
        accept_on(listener, &lp->accept);
}

static void on_admin_connection(uv_stream_t *listener, int status) {
    rest_loop *lp = listener->data;
    if (status == 0)
        accept_on(listener, &lp->admin_accept);
}

static rest_loop *loops;
static int nloops;

static void on_closed_handle(uv_handle_t *h) { (void)h; }

static void pool_closed(ffb_uv_pool *pool, void *data) {
    (void)pool;
    rest_loop *lp = data;
    lp->pool = NULL;
}

static void stop_loop(rest_loop *lp) {
    if (lp->stopping)
        return;
    lp->stopping = 1;
    uv_close((uv_handle_t *)&lp->listener, on_closed_handle);
    if (lp->has_admin)
        uv_close((uv_handle_t *)&lp->admin_listener, on_closed_handle);
    uv_close((uv_handle_t *)&lp->stop, on_closed_handle);
    uv_close((uv_handle_t *)&lp->reset, on_closed_handle);
    if (lp->index == 0) {
        uv_close((uv_handle_t *)&lp->sigterm, on_closed_handle);
        uv_close((uv_handle_t *)&lp->sigint, on_closed_handle);
        uv_close((uv_handle_t *)&lp->sigusr1, on_closed_handle);
        rest_reload_close(lp->app);
    }
    if (lp->pool)
        ffb_uv_pool_close(lp->pool, pool_closed, lp);
    rest_roles_close(lp);
    /* keep-alive HTTP connections end with the loop */
    uv_stop(&lp->loop);
}

static void on_stop(uv_async_t *a) { stop_loop(a->data); }

static void on_reset(uv_async_t *a) { rest_reload_reset_loop(a->data); }

static void on_sigusr1(uv_signal_t *s, int signum) {
    (void)signum;
    rest_loop *lp0 = s->data;
    rest_reload_request(lp0->app, NULL, NULL);
}

static void on_signal(uv_signal_t *s, int signum) {
    (void)signum;
    rest_loop *lp0 = s->data;
    for (int i = 1; i < nloops; i++)
        uv_async_send(&loops[i].stop);
    stop_loop(lp0);
}

static int loop_init(rest_app *app, rest_loop *lp, int index, char *err,
                     size_t errlen) {
    const rest_config *cfg = app->cfg;
    lp->app = app;
    lp->index = index;
    uv_loop_init(&lp->loop);
    h2o_context_init(&lp->ctx, &lp->loop, &app->h2o);
    lp->hosts[0] = app->host;
    lp->accept.ctx = &lp->ctx;
    lp->accept.hosts = lp->hosts;
    lp->accept.ssl_ctx = app->ssl_ctx; /* NULL: plain HTTP */
    int fd = listen_fd(cfg->server_host, cfg->server_port, err, errlen);
    if (fd < 0)
        return -1;
    uv_tcp_init(&lp->loop, &lp->listener);
    uv_tcp_open(&lp->listener, fd);
    lp->listener.data = lp;
    if (uv_listen((uv_stream_t *)&lp->listener, 511, on_connection) != 0) {
        snprintf(err, errlen, "uv_listen failed");
        return -1;
    }
    if (index == 0 && app->admin_host) {
        lp->admin_hosts[0] = app->admin_host;
        lp->admin_accept.ctx = &lp->ctx;
        lp->admin_accept.hosts = lp->admin_hosts;
        fd = listen_fd(cfg->server_host, cfg->admin_server_port, err, errlen);
        if (fd < 0)
            return -1;
        uv_tcp_init(&lp->loop, &lp->admin_listener);
        uv_tcp_open(&lp->admin_listener, fd);
        lp->admin_listener.data = lp;
        uv_listen((uv_stream_t *)&lp->admin_listener, 511, on_admin_connection);
        lp->has_admin = 1;
    }
    uv_async_init(&lp->loop, &lp->stop, on_stop);
    lp->stop.data = lp;
    uv_async_init(&lp->loop, &lp->reset, on_reset);
    lp->reset.data = lp;
    if (index == 0) {
        uv_signal_init(&lp->loop, &lp->sigterm);
        uv_signal_init(&lp->loop, &lp->sigint);
        lp->sigterm.data = lp->sigint.data = lp;
        uv_signal_start(&lp->sigterm, on_signal, SIGTERM);
        uv_signal_start(&lp->sigint, on_signal, SIGINT);
        uv_signal_init(&lp->loop, &lp->sigusr1);
        lp->sigusr1.data = lp;
        uv_signal_start(&lp->sigusr1, on_sigusr1, SIGUSR1);
        if (rest_reload_init(app, lp) < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (app->jwt && cfg->jwt_cache_max_entries > 0) {
        lp->jwt_cache = rest_jwt_cache_new((size_t)cfg->jwt_cache_max_entries);
        if (!lp->jwt_cache) {
            snprintf(err, errlen, "out of memory (jwt-cache-max-entries)");
            return -1;
        }
    }
    ffb_pool_options po = FFB_POOL_OPTIONS_INIT;
    po.conn = &app->conn_opts;
    int share = (cfg->db_pool + nloops - 1) / nloops;
    po.max_size = (size_t)(share > 0 ? share : 1);
    lp->pool_share = po.max_size;
    po.min_size = 0;
    po.acquire_timeout_ms = cfg->db_pool_acquisition_timeout * 1000;
    if (ffb_uv_pool_new(&lp->loop, &po, &lp->pool) < 0) {
        snprintf(err, errlen, "cannot create the connection pool");
        return -1;
    }
    return 0;
}

static void on_grace(uv_timer_t *t) { (void)t; }

static void run_loop(void *arg) {
    rest_loop *lp = arg;
    uv_run(&lp->loop, UV_RUN_DEFAULT);
    /* After uv_stop: let the pool detach its connections (h2o's own
       timers keep the loop alive, so wait for the pool, at most 5 s). */
    uv_timer_t grace;
    uv_timer_init(&lp->loop, &grace);
    uv_timer_start(&grace, on_grace, 50, 50);
    uint64_t end = uv_now(&lp->loop) + 5000;
    while ((lp->pool || rest_roles_open(lp) || rest_reload_open(lp)) &&
           uv_now(&lp->loop) < end)
        uv_run(&lp->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&grace, NULL);
    uv_run(&lp->loop, UV_RUN_NOWAIT);
}

int main(int argc, char **argv) {
    rest_config cfg;
    char err[512];
    rest_app app;
    int dump = argc >= 2 && strcmp(argv[1], "--schema") == 0;
    if (dump) {
        argv++;
        argc--;
    }
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: ffb-rest [--schema] [config-file]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    rest_config_defaults(&cfg);
    if (rest_config_load(&cfg, argc == 2 ? argv[1] : NULL, environ, err,
                         sizeof err) < 0) {
        fprintf(stderr, "ffb-rest: %s\n", err);
        rest_config_free(&cfg);
        return 2;
    }
    memset(&app, 0, sizeof app);
    app.cfg = &cfg;
    rest_jwt_key jwt;
    if (cfg.jwt_secret) {
        if (rest_jwt_key_init(&jwt, cfg.jwt_secret, cfg.jwt_secret_is_base64,
                              cfg.jwt_alg, cfg.jwt_aud, cfg.jwt_role_claim_key,
                              err, sizeof err) < 0) {
            fprintf(stderr, "ffb-rest: %s\n", err);
            rest_config_free(&cfg);
            return 2;
        }
        app.jwt = &jwt;
    }
    ffb_conn_options *co = &app.conn_opts;
    ffb_conn_options_init(co);
    co->host = cfg.db_host;
    co->port = cfg.db_port;
    co->database = cfg.db_database;
    co->user = cfg.db_user;
    co->password = cfg.db_password;
    co->role = cfg.db_anon_role;
    co->wire_crypt = cfg.db_wire_crypt;
    co->compress = cfg.db_compress;
    co->connect_timeout_ms = cfg.db_connect_timeout * 1000;
    co->io_timeout_ms = cfg.db_io_timeout * 1000;
    /* db-prepared-statements = false: nothing kept (every request
       prepares its statements: cold round trips) */
    co->stmt_cache_size =
        cfg.db_prepared_statements ? cfg.db_prepared_statements_max : -1;
    /* One format memory for the process: every connection of every
       loop's pool (and the role connections) shares what any of them
       prepared, so a text's first use on another connection rides its
       prepare with its execute (1 round trip). Given back at exit (the
       pools hold their own references); out of memory, each pool makes
       its own. */
    if (cfg.db_prepared_statements && ffb_formats_new(0, &co->formats) < 0)
        co->formats = NULL;

    /* TLS files are checked before the database is asked anything */
    if (cfg.server_tls_cert_file) {
        app.ssl_ctx = tls_ctx_new(&cfg, err, sizeof err);
        if (!app.ssl_ctx) {
            fprintf(stderr, "ffb-rest: %s\n", err);
            ffb_formats_unref(app.conn_opts.formats);
            rest_config_free(&cfg);
            return 2;
        }
    }

    /* The schema cache, before anything is served. */
    rest_schema schema;
    rest_schema_init(&schema);
    schema.returns_map = cfg.db_procedure_returns;
    uv_loop_t boot;
    uint64_t rts = 0;
    uv_loop_init(&boot);
    int rc = rest_schema_load(&boot, co, &schema, &rts, err, sizeof err);
    uv_loop_close(&boot);
    if (rc < 0) {
        fprintf(stderr, "ffb-rest: %s\n", err);
        SSL_CTX_free(app.ssl_ctx);
        rest_schema_free(&schema);
        ffb_formats_unref(app.conn_opts.formats);
        rest_config_free(&cfg);
        return 1;
    }
    if (cfg.db_statement_timeout > 0 && schema.protocol < 16) {
        fprintf(stderr,
                "ffb-rest: db-statement-timeout: the server speaks wire "
                "protocol %d; statement timeouts need protocol 16 "
                "(Firebird 4 or later)\n",
                schema.protocol);
        SSL_CTX_free(app.ssl_ctx);
        rest_schema_free(&schema);
        ffb_formats_unref(app.conn_opts.formats);
        rest_config_free(&cfg);
        return 2;
    }
    size_t ncols = 0;
    for (size_t i = 0; i < schema.ntables; i++)
        ncols += schema.tables[i].ncols;
    logf_(&cfg, 3,
          "schema cache: %zu tables and views, %zu columns, read in %llu "
          "round trips",
          schema.ntables, ncols, (unsigned long long)rts);
    app.schema = &schema;
    if (dump) {
        rbuf out;
        rbuf_init(&out, 0);
        rest_schema_dump(&schema, &out);
        fwrite(out.p ? out.p : "", 1, out.len, stdout);
        rbuf_free(&out);
        SSL_CTX_free(app.ssl_ctx);
        rest_schema_free(&schema);
        ffb_formats_unref(app.conn_opts.formats);
        rest_config_free(&cfg);
        return 0;
    }

    rest_ctx_texts ctx_texts;
    if (rest_ctx_texts_init(&ctx_texts, cfg.db_pre_request) == 0)
        app.ctx_texts = &ctx_texts;

    h2o_config_init(&app.h2o);
    /* h2o's default is 1 GiB: a body longer than this gets 413 before it
       is read */
    app.h2o.max_request_entity_size = cfg.server_max_body;
    /* h2o 2.2's one HTTP/1 timer: the time to send a request's headers,
       and a kept-alive connection's idle time before the next request */
    app.h2o.http1.req_timeout = (uint64_t)cfg.server_request_timeout * 1000;
    app.host = h2o_config_register_host(
        &app.h2o, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    if (cfg.admin_server_port)
        app.admin_host = h2o_config_register_host(
            &app.h2o, h2o_iovec_init(H2O_STRLIT("admin")), 65535);
    rest_register_handlers(&app);

    nloops = cfg.server_threads;
    loops = calloc((size_t)nloops, sizeof *loops);
    if (!loops)
        return 1;
    app.loops = loops;
    app.nloops = nloops;
    for (int i = 0; i < nloops; i++)
        if (loop_init(&app, &loops[i], i, err, sizeof err) < 0) {
            fprintf(stderr, "ffb-rest: %s\n", err);
            return 1;
        }
    /* the test harness waits for this line */
    fprintf(stderr, "ffb-rest: listening on %s port %d (%d thread%s%s)\n",
            cfg.server_host, cfg.server_port, nloops, nloops == 1 ? "" : "s",
            app.ssl_ctx ? ", TLS" : "");
    fflush(stderr);
    for (int i = 1; i < nloops; i++)
        uv_thread_create(&loops[i].thread, run_loop, &loops[i]);
    run_loop(&loops[0]);
    for (int i = 1; i < nloops; i++)
        uv_thread_join(&loops[i].thread);
    for (int i = 0; i < nloops; i++) {
        h2o_context_dispose(&loops[i].ctx);
        uv_run(&loops[i].loop, UV_RUN_NOWAIT);
        /* h2o may leave a handle open: the process ends anyway */
        (void)uv_loop_close(&loops[i].loop);
        rest_roles_free(&loops[i]);
        rest_jwt_cache_free(loops[i].jwt_cache);
    }
    free(loops);
    rest_reload_free(&app);
    if (app.ctx_texts)
        rest_ctx_texts_free(&ctx_texts);
    if (app.jwt)
        rest_jwt_key_free(&jwt);
    h2o_config_dispose(&app.h2o);
    SSL_CTX_free(app.ssl_ctx);
    rest_schema_free(&schema);
    ffb_formats_unref(app.conn_opts.formats);
    rest_config_free(&cfg);
    return 0;
}
