/*
 * ffb-rest: schema cache reload (spec rest.md A13), on SIGUSR1 and on
 * `POST /reload` of the admin port. The catalog is read again on a thread
 * of its own (its own loop and connection: the server loops never wait);
 * the new cache is then published and every loop replaces its pools: the
 * old ones close their idle connections at once and the others when their
 * requests give them back, so every cached prepared statement goes (a
 * DROP no longer waits for them) and every role is checked again.
 * Requests already running finish with the cache they started with; old
 * caches are freed at exit. Reloads asked for while one runs share it.
 */
#ifndef FFB_REST_RELOAD_H
#define FFB_REST_RELOAD_H

#include "server.h"

typedef void (*rest_reload_cb)(void *data, int rc, const char *message);

/* On loop 0, before it runs. */
int rest_reload_init(rest_app *app, rest_loop *loop0);
/* On loop 0: ask for a reload; `cb` (may be NULL) gets its outcome on
   loop 0. */
void rest_reload_request(rest_app *app, rest_reload_cb cb, void *data);
/* On every loop (its `reset` async): new pools in place of the old. */
void rest_reload_reset_loop(rest_loop *lp);
/* Pools of earlier generations still closing on `lp`. */
int rest_reload_open(const rest_loop *lp);
/* At exit, after the loops: free the caches published by reloads. */
void rest_reload_free(rest_app *app);
/* On loop 0 when it stops. */
void rest_reload_close(rest_app *app);

#endif
