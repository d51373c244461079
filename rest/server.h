/* ffb-rest: one server thread (loop, h2o context, pool) and the request
   handlers. */
#ifndef FFB_REST_SERVER_H
#define FFB_REST_SERVER_H

#include <h2o.h>
#include <uv.h>

#include "config.h"
#include "fastfb_uv.h"
#include "schema.h"

typedef struct rest_app {
    const rest_config *cfg;
    const struct rest_jwt_key *jwt; /* NULL: no jwt-secret */
    const rest_schema *schema;
    ffb_conn_options conn_opts;
    h2o_globalconf_t h2o;
    h2o_hostconf_t *host;
    h2o_hostconf_t *admin_host;
    struct rest_loop *loops; /* for the reload (reload.c) */
    int nloops;
    struct rest_reload *reload;
    SSL_CTX *ssl_ctx; /* server-tls-cert-file: TLS on the main port */
    /* the request context blocks' texts (context.h); NULL: each request
       builds its own */
    const struct rest_ctx_texts *ctx_texts;
} rest_app;

typedef struct rest_loop {
    rest_app *app;
    int index;
    uv_loop_t loop;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept;
    h2o_accept_ctx_t admin_accept;
    h2o_hostconf_t *hosts[2];
    h2o_hostconf_t *admin_hosts[2];
    uv_tcp_t listener;
    uv_tcp_t admin_listener;
    int has_admin;
    ffb_uv_pool *pool;                /* no role, or db-anon-role */
    size_t pool_share;                /* connections per pool on this loop */
    struct rest_roles *roles;         /* a pool per JWT role (roles.c) */
    struct rest_jwt_cache *jwt_cache; /* jwt-cache-max-entries (jwtcache.h) */
    uv_async_t stop;
    uv_async_t reset; /* a reload published a new schema cache */
    uv_signal_t sigusr1;
    int old_pools_open; /* pools replaced by a reload, still closing */
    uv_signal_t sigterm;
    uv_signal_t sigint;
    int stopping;
    uv_thread_t thread;
} rest_loop;

/* The schema cache in use: a reload (SIGUSR1, POST /reload on the admin
   port) publishes a new one; the old ones are kept until exit, so a
   request may go on with the one it started with. */
static inline const rest_schema *app_schema(const rest_app *app) {
    return __atomic_load_n(&app->schema, __ATOMIC_ACQUIRE);
}

/* The handlers registered on the app's host configurations. */
void rest_register_handlers(rest_app *app);

#endif
