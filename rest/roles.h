/*
 * ffb-rest: a pool per Firebird role on each loop (spec rest.md A8.2).
 * Firebird 3 cannot change the role of an attachment, and Firebird 4's
 * SET ROLE is per attachment too, so each role a request runs as gets its
 * own libfastfb pool whose connections attach with isc_dpb_sql_role_name.
 *
 * Firebird does not refuse a role the user was not granted: it attaches
 * with CURRENT_ROLE = NONE (verified live on 3.0.11 and 4.0.5, SYSDBA
 * included). So the first use of a role on a loop asks the server, on one
 * of the role's connections, `SELECT CURRENT_ROLE` and whether the role
 * exists; a role that does not exist is PostgreSQL's 22023 (401, as
 * PostgREST 13), one not granted its 42501 (403), as PostgREST answers for
 * `SET ROLE`. The answer
 * is kept until the schema cache is reloaded.
 */
#ifndef FFB_REST_ROLES_H
#define FFB_REST_ROLES_H

#include "server.h"
#include "url.h"

/* Statuses of the callback besides libfastfb's: the role's verdict. */
#define REST_E_ROLE_MISSING (-20001)
#define REST_E_ROLE_DENIED (-20002)

/* The most roles one loop keeps pools for. */
#define REST_MAX_ROLES 64

/* A connection of `role`'s pool (NULL: the loop's pool, no role, or the
   anonymous role when `anon` says so) for `cb`, which gets that pool in its
   first argument (give the connection back to it). The first request of a
   role costs the check's round trips before `cb` (not counted in its
   Server-Timing). 0, or -1 with `err` (then `cb` is not called). */
int rest_roles_acquire(rest_loop *lp, const char *role, int has_jwt,
                       int timeout_ms, ffb_uv_acquire_cb cb, void *data,
                       rest_err *err);

/* The error of a failed acquire (`status` of the callback): the role's
   verdict (22023, 401; 42501, 403 with a token, 401 without), the pool's
   timeout (504 PGRST003) or its connect error (503 PGRST001). */
void rest_roles_acquire_error(ffb_uv_pool *pool, int status, const char *role,
                              int has_jwt, rest_err *e);

/* Close every role pool of the loop (the loop's own pool is main.c's). */
void rest_roles_close(rest_loop *lp);
/* Pools still closing. */
int rest_roles_open(const rest_loop *lp);
/* Schema reload: close every role pool (their cached statements go) and
   start again with no role known, so each is checked again. */
void rest_roles_reset(rest_loop *lp);
/* Free the table once the loop has stopped. */
void rest_roles_free(rest_loop *lp);

#endif
