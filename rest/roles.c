/* ffb-rest: a pool per Firebird role (roles.h). */
#include "roles.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { RS_UNKNOWN, RS_CHECKING, RS_OK, RS_MISSING, RS_DENIED };

typedef struct role_wait {
    struct role_wait *next;
    ffb_uv_acquire_cb cb;
    void *data;
    int timeout_ms;
} role_wait;

typedef struct rest_role {
    char name[64]; /* upper case, as Firebird stores an unquoted name */
    ffb_uv_pool *pool;
    int state;
    int closing;
    int borrowed; /* the loop's own pool (the anonymous role's) */
    role_wait *waiters;
    rest_loop *lp;
    /* the check */
    ffb_conn *conn;
    ffb_tx *tx;
    ffb_stmt *stmt;
    int verdict;
} rest_role;

struct rest_roles {
    rest_role *r[REST_MAX_ROLES];
    size_t n;
    int open;                 /* pools not yet closed */
    struct rest_roles *older; /* tables before a reload, closing */
};

static struct rest_roles *roles_of(rest_loop *lp) {
    if (!lp->roles)
        lp->roles = calloc(1, sizeof *lp->roles);
    return lp->roles;
}

/* Hand the waiters their connections (RS_OK) or the verdict. */
static void wake(rest_role *ro, int status) {
    role_wait *w = ro->waiters;
    ro->waiters = NULL;
    while (w) {
        role_wait *nx = w->next;
        if (status == 0 &&
            ffb_uv_pool_acquire(ro->pool, w->timeout_ms, w->cb, w->data) == 0) {
            free(w);
            w = nx;
            continue;
        }
        w->cb(ro->pool, NULL, status ? status : FFB_E_STATE, w->data);
        free(w);
        w = nx;
    }
}

static void check_done(rest_role *ro, int status) {
    if (ro->stmt)
        ffb_stmt_free(ro->stmt);
    if (ro->tx)
        ffb_tx_free(ro->tx);
    ro->stmt = NULL;
    ro->tx = NULL;
    if (ro->conn) {
        if (status < 0 && status != REST_E_ROLE_MISSING &&
            status != REST_E_ROLE_DENIED)
            ffb_uv_pool_discard(ro->pool, ro->conn);
        else
            ffb_uv_pool_release(ro->pool, ro->conn);
        ro->conn = NULL;
    }
    ro->state = status == 0                     ? RS_OK
                : status == REST_E_ROLE_MISSING ? RS_MISSING
                : status == REST_E_ROLE_DENIED  ? RS_DENIED
                                                : RS_UNKNOWN;
    wake(ro, status);
}

static void on_check_commit(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    rest_role *ro = data;
    int st = ffb_result_status(res);
    check_done(ro, st < 0 ? st : ro->verdict);
}

static void on_check_exec(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    rest_role *ro = data;
    if (ffb_result_status(res) < 0) {
        ro->verdict = ffb_result_status(res);
        return; /* the commit's answer follows */
    }
    const char *cur = NULL;
    size_t n = 0;
    int64_t exists = 0;
    if (ffb_stmt_fetch(ro->stmt) != 1 ||
        ffb_stmt_get_text_trimmed(ro->stmt, 0, &cur, &n) < 0 ||
        ffb_stmt_get_int64(ro->stmt, 1, &exists) < 0) {
        ro->verdict = FFB_E_PROTO;
        return;
    }
    if (n == strlen(ro->name) && memcmp(cur, ro->name, n) == 0)
        ro->verdict = 0;
    else
        ro->verdict = exists ? REST_E_ROLE_DENIED : REST_E_ROLE_MISSING;
    ffb_stmt_close_cursor(ro->stmt);
}

static void check_run(rest_role *ro) {
    int rc = ffb_stmt_bind_text(ro->stmt, 0, ro->name, strlen(ro->name));
    if (rc == 0)
        rc = ffb_stmt_queue_execute(ro->stmt, ro->tx, on_check_exec, ro);
    if (rc == 0)
        rc = ffb_tx_queue_commit(ro->tx, on_check_commit, ro);
    if (rc < 0)
        check_done(ro, rc);
}

static void on_check_prepared(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    rest_role *ro = data;
    if (ffb_result_status(res) < 0) {
        check_done(ro, ffb_result_status(res));
        return;
    }
    check_run(ro);
}

static const char CHECK_SQL[] =
    "SELECT CURRENT_ROLE, (SELECT COUNT(*) FROM RDB$ROLES WHERE "
    "RDB$ROLE_NAME = CAST(? AS VARCHAR(63))) FROM RDB$DATABASE";

static void on_check_conn(ffb_uv_pool *pool, ffb_conn *conn, int status,
                          void *data) {
    (void)pool;
    rest_role *ro = data;
    if (status < 0) {
        ro->state = RS_UNKNOWN;
        wake(ro, status);
        return;
    }
    ro->conn = conn;
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    to.read_only = 1;
    to.isolation = FFB_ISO_READ_COMMITTED;
    int rc = ffb_tx_begin(conn, &to, &ro->tx);
    if (rc == 0)
        rc = ffb_conn_queue_prepare(conn, ro->tx, CHECK_SQL,
                                    sizeof CHECK_SQL - 1, &ro->stmt,
                                    on_check_prepared, ro);
    if (rc == 1)
        check_run(ro);
    else if (rc < 0)
        check_done(ro, rc);
}

static rest_role *find_or_add(rest_loop *lp, const char *name, rest_err *err) {
    struct rest_roles *rs = roles_of(lp);
    char up[64];
    size_t n = strlen(name);
    if (!rs) {
        rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
        return NULL;
    }
    /* Firebird's unquoted names: letters, digits, _ and $, up to 63 */
    int ok = n > 0 && n < sizeof up && isalpha((unsigned char)name[0]);
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char ch = (unsigned char)name[i];
        ok = isalnum(ch) || ch == '_' || ch == '$';
        up[i] = (char)toupper(ch);
    }
    if (!ok) {
        rest_err_set(err, 400, "22023", NULL, "role \"%.80s\" does not exist",
                     name);
        return NULL;
    }
    up[n] = '\0';
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->r[i]->name, up) == 0)
            return rs->r[i];
    if (rs->n == REST_MAX_ROLES) {
        rest_err_set(err, 500, "PGRST000", NULL,
                     "more than %d roles in use on one server thread",
                     REST_MAX_ROLES);
        return NULL;
    }
    rest_role *ro = calloc(1, sizeof *ro);
    if (!ro) {
        rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
        return NULL;
    }
    memcpy(ro->name, up, n + 1);
    ro->lp = lp;
    const char *anon = lp->app->cfg->db_anon_role;
    if (anon && strcasecmp(anon, up) == 0) {
        /* the loop's pool attaches with the anonymous role already */
        ro->pool = lp->pool;
        ro->borrowed = 1;
        rs->r[rs->n++] = ro;
        return ro;
    }
    ffb_conn_options co = lp->app->conn_opts;
    co.role = ro->name;
    ffb_pool_options po = FFB_POOL_OPTIONS_INIT;
    po.conn = &co;
    po.max_size = lp->pool_share;
    /* db-pool-max-per-role: one role cannot take more than its share */
    int cap = lp->app->cfg->db_pool_max_per_role;
    if (cap > 0) {
        int nl = lp->app->nloops > 0 ? lp->app->nloops : 1;
        size_t per = (size_t)((cap + nl - 1) / nl);
        if (per < po.max_size)
            po.max_size = per;
    }
    po.min_size = 0;
    po.acquire_timeout_ms = lp->app->cfg->db_pool_acquisition_timeout * 1000;
    if (ffb_uv_pool_new(&lp->loop, &po, &ro->pool) < 0) {
        free(ro);
        rest_err_set(err, 503, "PGRST001", NULL,
                     "cannot create the connection pool of role %s", up);
        return NULL;
    }
    rs->r[rs->n++] = ro;
    rs->open++;
    return ro;
}

void rest_roles_acquire_error(ffb_uv_pool *pool, int status, const char *role,
                              int has_jwt, rest_err *e) {
    ffb_pool_error_info pe;
    if (status == REST_E_ROLE_MISSING)
        /* 401, as PostgREST since 13 (its issue 3601; 400 before) */
        rest_err_set(e, 401, "22023", NULL, "role \"%s\" does not exist", role);
    else if (status == REST_E_ROLE_DENIED)
        rest_err_set(e, has_jwt ? 403 : 401, "42501", NULL,
                     "permission denied to set role \"%s\"", role);
    else if (status == FFB_E_TIMEOUT)
        rest_err_set(e, 504, "PGRST003", NULL,
                     "Timed out acquiring connection from connection pool.");
    else {
        rest_err_set(e, 503, "PGRST001", NULL,
                     "Database client error. Retrying the connection.");
        if (pool && ffb_uv_pool_error(pool, &pe, sizeof pe) == 0)
            snprintf(e->details, sizeof e->details, "%s", pe.message);
    }
}

int rest_roles_acquire(rest_loop *lp, const char *role, int has_jwt,
                       int timeout_ms, ffb_uv_acquire_cb cb, void *data,
                       rest_err *err) {
    if (!role) {
        if (ffb_uv_pool_acquire(lp->pool, timeout_ms, cb, data) < 0) {
            rest_err_set(err, 503, "PGRST001", NULL,
                         "Database client error. Retrying the connection.");
            return -1;
        }
        return 0;
    }
    rest_role *ro = find_or_add(lp, role, err);
    if (!ro)
        return -1;
    switch (ro->state) {
    case RS_MISSING:
    case RS_DENIED:
        rest_roles_acquire_error(NULL,
                                 ro->state == RS_MISSING ? REST_E_ROLE_MISSING
                                                         : REST_E_ROLE_DENIED,
                                 role, has_jwt, err);
        return -1;
    case RS_OK:
        if (ffb_uv_pool_acquire(ro->pool, timeout_ms, cb, data) < 0) {
            rest_err_set(err, 503, "PGRST001", NULL,
                         "Database client error. Retrying the connection.");
            return -1;
        }
        return 0;
    default:
        break;
    }
    role_wait *w = calloc(1, sizeof *w);
    if (!w) {
        rest_err_set(err, 500, "PGRST000", NULL, "out of memory");
        return -1;
    }
    w->cb = cb;
    w->data = data;
    w->timeout_ms = timeout_ms;
    w->next = ro->waiters;
    ro->waiters = w;
    if (ro->state == RS_UNKNOWN) {
        ro->state = RS_CHECKING;
        if (ffb_uv_pool_acquire(ro->pool, timeout_ms, on_check_conn, ro) < 0) {
            ro->state = RS_UNKNOWN;
            ro->waiters = w->next;
            free(w);
            rest_err_set(err, 503, "PGRST001", NULL,
                         "Database client error. Retrying the connection.");
            return -1;
        }
    }
    return 0;
}

static void on_role_pool_closed(ffb_uv_pool *pool, void *data) {
    (void)pool;
    struct rest_roles *rs = data;
    rs->open--;
}

static void close_table(struct rest_roles *rs) {
    for (size_t i = 0; i < rs->n; i++) {
        rest_role *ro = rs->r[i];
        if (ro->closing || ro->borrowed)
            continue;
        ro->closing = 1;
        if (ffb_uv_pool_close(ro->pool, on_role_pool_closed, rs) < 0)
            rs->open--;
    }
}

void rest_roles_close(rest_loop *lp) {
    for (struct rest_roles *rs = lp->roles; rs; rs = rs->older)
        close_table(rs);
}

void rest_roles_reset(rest_loop *lp) {
    struct rest_roles *rs = lp->roles;
    if (!rs)
        return;
    close_table(rs);
    struct rest_roles *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return; /* the old table stays: its pools are closing, a request
                   of its roles gets an error until the next reload */
    fresh->older = rs;
    lp->roles = fresh;
}

int rest_roles_open(const rest_loop *lp) {
    int n = 0;
    for (const struct rest_roles *rs = lp->roles; rs; rs = rs->older)
        n += rs->open;
    return n;
}

void rest_roles_free(rest_loop *lp) {
    struct rest_roles *rs = lp->roles;
    while (rs) {
        struct rest_roles *older = rs->older;
        for (size_t i = 0; i < rs->n; i++)
            free(rs->r[i]);
        free(rs);
        rs = older;
    }
    lp->roles = NULL;
}
