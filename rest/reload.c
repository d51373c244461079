/* ffb-rest: schema cache reload (reload.h). */
#include "reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roles.h"
#include "schema_load.h"

typedef struct reload_wait {
    struct reload_wait *next;
    rest_reload_cb cb;
    void *data;
} reload_wait;

typedef struct retired {
    struct retired *next;
    rest_schema *schema;
} retired;

struct rest_reload {
    rest_app *app;
    uv_async_t done;
    uv_thread_t thread;
    int running;
    int again; /* asked for while running: one more after this one */
    reload_wait *waiters;
    reload_wait *next_waiters;
    /* the thread's result */
    rest_schema *fresh;
    int rc;
    char msg[512];
    retired *old;
};

static void worker(void *arg) {
    struct rest_reload *rl = arg;
    uv_loop_t loop;
    uint64_t rts = 0;
    rest_schema *s = calloc(1, sizeof *s);
    rl->msg[0] = '\0';
    if (!s) {
        rl->rc = -1;
        snprintf(rl->msg, sizeof rl->msg, "out of memory");
    } else {
        rest_schema_init(s);
        s->returns_map = rl->app->cfg->db_procedure_returns;
        uv_loop_init(&loop);
        rl->rc = rest_schema_load(&loop, &rl->app->conn_opts, s, &rts, rl->msg,
                                  sizeof rl->msg);
        uv_loop_close(&loop);
        if (rl->rc < 0) {
            rest_schema_free(s);
            free(s);
            s = NULL;
        } else {
            size_t ncols = 0;
            for (size_t i = 0; i < s->ntables; i++)
                ncols += s->tables[i].ncols;
            snprintf(rl->msg, sizeof rl->msg,
                     "schema cache reloaded: %zu tables and views, %zu "
                     "columns, read in %llu round trips",
                     s->ntables, ncols, (unsigned long long)rts);
        }
    }
    rl->fresh = s;
    uv_async_send(&rl->done);
}

static void start(struct rest_reload *rl) {
    rl->running = 1;
    if (uv_thread_create(&rl->thread, worker, rl) != 0) {
        rl->running = 0;
        reload_wait *w = rl->waiters;
        rl->waiters = NULL;
        while (w) {
            reload_wait *nx = w->next;
            if (w->cb)
                w->cb(w->data, -1, "cannot start the reload thread");
            free(w);
            w = nx;
        }
    }
}

static void on_done(uv_async_t *a) {
    struct rest_reload *rl = a->data;
    rest_app *app = rl->app;
    if (!rl->running)
        return;
    uv_thread_join(&rl->thread);
    rl->running = 0;
    if (rl->rc == 0 && rl->fresh) {
        retired *r = calloc(1, sizeof *r);
        if (r) {
            r->schema = rl->fresh;
            r->next = rl->old;
            rl->old = r;
        }
        __atomic_store_n(&app->schema, rl->fresh, __ATOMIC_RELEASE);
        for (int i = 0; i < app->nloops; i++)
            uv_async_send(&app->loops[i].reset);
    }
    if (app->cfg->log_level >= 3 || rl->rc < 0)
        fprintf(stderr, "ffb-rest: %s\n", rl->msg);
    reload_wait *w = rl->waiters;
    rl->waiters = NULL;
    while (w) {
        reload_wait *nx = w->next;
        if (w->cb)
            w->cb(w->data, rl->rc, rl->msg);
        free(w);
        w = nx;
    }
    if (rl->again) {
        rl->again = 0;
        rl->waiters = rl->next_waiters;
        rl->next_waiters = NULL;
        start(rl);
    }
}

int rest_reload_init(rest_app *app, rest_loop *loop0) {
    struct rest_reload *rl = calloc(1, sizeof *rl);
    if (!rl)
        return -1;
    rl->app = app;
    uv_async_init(&loop0->loop, &rl->done, on_done);
    rl->done.data = rl;
    app->reload = rl;
    return 0;
}

void rest_reload_request(rest_app *app, rest_reload_cb cb, void *data) {
    struct rest_reload *rl = app->reload;
    reload_wait *w = calloc(1, sizeof *w);
    if (!rl || !w) {
        free(w);
        if (cb)
            cb(data, -1, "out of memory");
        return;
    }
    w->cb = cb;
    w->data = data;
    if (rl->running) {
        /* the running one read the catalog maybe before the change that
           made this one ask: one more after it */
        w->next = rl->next_waiters;
        rl->next_waiters = w;
        rl->again = 1;
        return;
    }
    w->next = rl->waiters;
    rl->waiters = w;
    start(rl);
}

static void on_old_pool_closed(ffb_uv_pool *pool, void *data) {
    (void)pool;
    rest_loop *lp = data;
    lp->old_pools_open--;
}

void rest_reload_reset_loop(rest_loop *lp) {
    if (lp->stopping)
        return;
    ffb_pool_options po = FFB_POOL_OPTIONS_INIT;
    po.conn = &lp->app->conn_opts;
    po.max_size = lp->pool_share;
    po.min_size = 0;
    po.acquire_timeout_ms = lp->app->cfg->db_pool_acquisition_timeout * 1000;
    ffb_uv_pool *fresh;
    if (ffb_uv_pool_new(&lp->loop, &po, &fresh) < 0)
        return; /* keep the old pool: its statements stay cached */
    ffb_uv_pool *old = lp->pool;
    lp->pool = fresh;
    rest_roles_reset(lp);
    if (old && ffb_uv_pool_close(old, on_old_pool_closed, lp) == 0)
        lp->old_pools_open++;
}

int rest_reload_open(const rest_loop *lp) { return lp->old_pools_open; }

void rest_reload_close(rest_app *app) {
    struct rest_reload *rl = app->reload;
    if (!rl)
        return;
    if (rl->running) {
        uv_thread_join(&rl->thread);
        rl->running = 0;
        if (rl->fresh) {
            rest_schema_free(rl->fresh);
            free(rl->fresh);
            rl->fresh = NULL;
        }
    }
    uv_close((uv_handle_t *)&rl->done, NULL);
}

void rest_reload_free(rest_app *app) {
    struct rest_reload *rl = app->reload;
    if (!rl)
        return;
    for (retired *r = rl->old; r;) {
        retired *nx = r->next;
        rest_schema_free(r->schema);
        free(r->schema);
        free(r);
        r = nx;
    }
    reload_wait *lists[2] = {rl->waiters, rl->next_waiters};
    for (int i = 0; i < 2; i++)
        for (reload_wait *w = lists[i]; w;) {
            reload_wait *nx = w->next;
            free(w);
            w = nx;
        }
    free(rl);
    app->reload = NULL;
}
