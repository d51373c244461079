/* ffb-rest: the schema cache from RDB$ tables, on a libuv loop. */
#include "schema_load.h"

#include <stdio.h>
#include <string.h>

#include "fastfb_uv.h"

/* Tables and views with their columns, in RDB$FIELD_POSITION order. */
static const char q_columns[] =
    "SELECT TRIM(r.RDB$RELATION_NAME), r.RDB$VIEW_BLR IS NOT NULL, "
    "COALESCE(r.RDB$RELATION_TYPE, 0), TRIM(rf.RDB$FIELD_NAME), "
    "f.RDB$FIELD_TYPE, COALESCE(f.RDB$FIELD_SUB_TYPE, 0), "
    "COALESCE(f.RDB$FIELD_SCALE, 0), COALESCE(f.RDB$FIELD_LENGTH, 0), "
    "COALESCE(f.RDB$CHARACTER_LENGTH, 0), COALESCE(f.RDB$FIELD_PRECISION, 0), "
    "COALESCE(f.RDB$CHARACTER_SET_ID, -1), "
    "COALESCE(rf.RDB$NULL_FLAG, f.RDB$NULL_FLAG, 0), "
    "f.RDB$COMPUTED_BLR IS NOT NULL, "
    "(rf.RDB$DEFAULT_SOURCE IS NOT NULL OR f.RDB$DEFAULT_SOURCE IS NOT NULL), "
    "COALESCE(rf.RDB$IDENTITY_TYPE, -1) "
    "FROM RDB$RELATIONS r "
    "JOIN RDB$RELATION_FIELDS rf ON rf.RDB$RELATION_NAME = r.RDB$RELATION_NAME "
    "JOIN RDB$FIELDS f ON f.RDB$FIELD_NAME = rf.RDB$FIELD_SOURCE "
    "WHERE COALESCE(r.RDB$SYSTEM_FLAG, 0) = 0 "
    "ORDER BY r.RDB$RELATION_NAME, rf.RDB$FIELD_POSITION";

/* Primary keys and foreign keys (with the referenced columns), by
   constraint, in key order. */
static const char q_keys[] =
    "SELECT TRIM(rc.RDB$RELATION_NAME), TRIM(rc.RDB$CONSTRAINT_NAME), "
    "TRIM(rc.RDB$CONSTRAINT_TYPE), TRIM(s.RDB$FIELD_NAME), "
    "TRIM(rc2.RDB$RELATION_NAME), TRIM(s2.RDB$FIELD_NAME) "
    "FROM RDB$RELATION_CONSTRAINTS rc "
    "JOIN RDB$INDEX_SEGMENTS s ON s.RDB$INDEX_NAME = rc.RDB$INDEX_NAME "
    "LEFT JOIN RDB$REF_CONSTRAINTS ref "
    "ON ref.RDB$CONSTRAINT_NAME = rc.RDB$CONSTRAINT_NAME "
    "LEFT JOIN RDB$RELATION_CONSTRAINTS rc2 "
    "ON rc2.RDB$CONSTRAINT_NAME = ref.RDB$CONST_NAME_UQ "
    "LEFT JOIN RDB$INDEX_SEGMENTS s2 ON s2.RDB$INDEX_NAME = rc2.RDB$INDEX_NAME "
    "AND s2.RDB$FIELD_POSITION = s.RDB$FIELD_POSITION "
    "WHERE rc.RDB$CONSTRAINT_TYPE IN ('PRIMARY KEY', 'FOREIGN KEY') "
    "ORDER BY rc.RDB$RELATION_NAME, rc.RDB$CONSTRAINT_NAME, "
    "s.RDB$FIELD_POSITION";

/* Spec A8.3, db-request-context = auto: does any source text of the
   database mention `request.` (a view, trigger, routine, package, default
   or COMPUTED BY that reads RDB$GET_CONTEXT('USER_TRANSACTION',
   'request....'))? One row: the count. */
static const char q_context[] =
    "SELECT COUNT(*) FROM ("
    "SELECT RDB$PROCEDURE_SOURCE s FROM RDB$PROCEDURES "
    "WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0 "
    "UNION ALL SELECT RDB$FUNCTION_SOURCE FROM RDB$FUNCTIONS "
    "WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0 "
    "UNION ALL SELECT RDB$TRIGGER_SOURCE FROM RDB$TRIGGERS "
    "WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0 "
    "UNION ALL SELECT RDB$VIEW_SOURCE FROM RDB$RELATIONS "
    "WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0 "
    "UNION ALL SELECT RDB$PACKAGE_BODY_SOURCE FROM RDB$PACKAGES "
    "WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0 "
    "UNION ALL SELECT RDB$DEFAULT_SOURCE FROM RDB$FIELDS "
    "WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0 "
    "UNION ALL SELECT RDB$COMPUTED_SOURCE FROM RDB$FIELDS "
    "WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0 "
    "UNION ALL SELECT RDB$DEFAULT_SOURCE FROM RDB$RELATION_FIELDS "
    "WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0"
    ") WHERE s CONTAINING 'request.'";

/* Procedures (RDB$PROCEDURE_TYPE 1 selectable, 2 executable) with their
   parameters (RDB$PARAMETER_TYPE 0 in, 1 out) in order, and PSQL
   functions with their arguments (the return value is the argument at
   RDB$RETURN_ARGUMENT); outside packages. One query, kind 3 a function.
   An output parameter's type (columns 6-13, as q_columns) makes it a
   column of the procedure read as a table; column 14 is the text of the
   description from its `@returns` on (rest_routine_set_returns). */
static const char q_routines[] =
    "SELECT TRIM(p.RDB$PROCEDURE_NAME), COALESCE(p.RDB$PROCEDURE_TYPE, 1), "
    "TRIM(pp.RDB$PARAMETER_NAME), COALESCE(pp.RDB$PARAMETER_TYPE, -1), "
    "COALESCE(pp.RDB$PARAMETER_NUMBER, -1), "
    "(pp.RDB$DEFAULT_SOURCE IS NOT NULL OR f.RDB$DEFAULT_SOURCE IS NOT NULL), "
    "f.RDB$FIELD_TYPE, COALESCE(f.RDB$FIELD_SUB_TYPE, 0), "
    "COALESCE(f.RDB$FIELD_SCALE, 0), COALESCE(f.RDB$FIELD_LENGTH, 0), "
    "COALESCE(f.RDB$CHARACTER_LENGTH, 0), COALESCE(f.RDB$FIELD_PRECISION, 0), "
    "COALESCE(f.RDB$CHARACTER_SET_ID, -1), "
    "COALESCE(pp.RDB$NULL_FLAG, f.RDB$NULL_FLAG, 0), "
    "IIF(POSITION('@returns' IN p.RDB$DESCRIPTION) > 0, "
    "CAST(SUBSTRING(p.RDB$DESCRIPTION FROM "
    "POSITION('@returns' IN p.RDB$DESCRIPTION) FOR 300) "
    "AS VARCHAR(300) CHARACTER SET UTF8), NULL) "
    "FROM RDB$PROCEDURES p LEFT JOIN RDB$PROCEDURE_PARAMETERS pp "
    "ON pp.RDB$PROCEDURE_NAME = p.RDB$PROCEDURE_NAME "
    "AND pp.RDB$PACKAGE_NAME IS NULL "
    "LEFT JOIN RDB$FIELDS f ON f.RDB$FIELD_NAME = pp.RDB$FIELD_SOURCE "
    "WHERE COALESCE(p.RDB$SYSTEM_FLAG, 0) = 0 AND p.RDB$PACKAGE_NAME IS NULL "
    "UNION ALL "
    "SELECT TRIM(fn.RDB$FUNCTION_NAME), 3, TRIM(a.RDB$ARGUMENT_NAME), "
    "IIF(a.RDB$ARGUMENT_POSITION = fn.RDB$RETURN_ARGUMENT, 1, 0), "
    "a.RDB$ARGUMENT_POSITION, "
    "(a.RDB$DEFAULT_SOURCE IS NOT NULL OR f.RDB$DEFAULT_SOURCE IS NOT NULL), "
    "NULL, 0, 0, 0, 0, 0, -1, 0, NULL "
    "FROM RDB$FUNCTIONS fn JOIN RDB$FUNCTION_ARGUMENTS a "
    "ON a.RDB$FUNCTION_NAME = fn.RDB$FUNCTION_NAME "
    "AND a.RDB$PACKAGE_NAME IS NULL "
    "LEFT JOIN RDB$FIELDS f ON f.RDB$FIELD_NAME = a.RDB$FIELD_SOURCE "
    "WHERE COALESCE(fn.RDB$SYSTEM_FLAG, 0) = 0 AND fn.RDB$PACKAGE_NAME IS NULL "
    "AND COALESCE(fn.RDB$LEGACY_FLAG, 0) = 0 "
    "ORDER BY 1, 2, 4, 5";

typedef struct loader {
    rest_schema *schema;
    ffb_conn *conn;
    ffb_tx *tx;
    ffb_stmt *cols;
    ffb_stmt *keys;
    ffb_stmt *ctx;
    ffb_stmt *routines;
    int pending; /* statements whose rows are not all read */
    int rc;
    int done;
    uint64_t rt0;
    uint64_t rt;
    char *err;
    size_t errlen;
} loader;

static void fail(loader *l, int rc, const char *what) {
    if (l->rc == 0) {
        const ffb_error *e = ffb_conn_error(l->conn);
        l->rc = rc;
        snprintf(l->err, l->errlen, "schema cache: %s: %s", what,
                 e && ffb_error_message(e) ? ffb_error_message(e)
                                           : ffb_strerror(rc));
    }
}

static void text(ffb_stmt *st, unsigned col, char *out, size_t outn) {
    const char *s;
    size_t n;
    out[0] = '\0';
    if (ffb_stmt_is_null(st, col) == 1 ||
        ffb_stmt_get_text(st, col, &s, &n) < 0)
        return;
    if (n >= outn)
        n = outn - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

static int i32(ffb_stmt *st, unsigned col) {
    int64_t v = 0;
    int b;
    if (ffb_stmt_is_null(st, col) == 1)
        return 0;
    if (ffb_stmt_get_bool(st, col, &b) == 0)
        return b;
    if (ffb_stmt_get_int64(st, col, &v) < 0)
        return 0;
    return (int)v;
}

/* A column's type from the 8 columns from `at` on (q_columns' order:
   type, sub type, scale, length, character length, precision, character
   set, null flag). */
static void col_type(ffb_stmt *st, unsigned at, rest_column *c) {
    c->type = i32(st, at);
    c->subtype = i32(st, at + 1);
    c->scale = i32(st, at + 2);
    c->length = i32(st, at + 3);
    c->charlen = i32(st, at + 4);
    c->precision = i32(st, at + 5);
    c->charset = i32(st, at + 6);
    c->notnull = i32(st, at + 7) != 0;
}

static int column_row(loader *l) {
    char rel[256], name[256];
    ffb_stmt *st = l->cols;
    text(st, 0, rel, sizeof rel);
    text(st, 3, name, sizeof name);
    rest_table *t = rest_schema_table(l->schema, rel, i32(st, 1), i32(st, 2));
    rest_column *c = t ? rest_table_add_column(t, name) : NULL;
    if (!c)
        return FFB_E_NOMEM;
    col_type(st, 4, c);
    c->computed = i32(st, 12);
    c->has_default = i32(st, 13);
    c->identity = i32(st, 14);
    return 0;
}

static int key_row(loader *l) {
    char rel[256], cname[256], ctype[32], col[256], rrel[256], rcol[256];
    ffb_stmt *st = l->keys;
    text(st, 0, rel, sizeof rel);
    text(st, 1, cname, sizeof cname);
    text(st, 2, ctype, sizeof ctype);
    text(st, 3, col, sizeof col);
    text(st, 4, rrel, sizeof rrel);
    text(st, 5, rcol, sizeof rcol);
    rest_table *t = NULL;
    for (size_t i = 0; i < l->schema->ntables; i++)
        if (strcmp(l->schema->tables[i].name, rel) == 0)
            t = &l->schema->tables[i];
    if (!t)
        return 0; /* a system table's key */
    if (strcmp(ctype, "PRIMARY KEY") == 0)
        return rest_table_add_pk(t, col) < 0 ? FFB_E_NOMEM : 0;
    return rest_table_add_fk(t, cname, rrel, col, rcol) < 0 ? FFB_E_NOMEM : 0;
}

static int context_row(loader *l) {
    int64_t n = 0;
    if (ffb_stmt_get_int64(l->ctx, 0, &n) == 0)
        l->schema->reads_request_context = n > 0;
    return 0;
}

static int routine_row(loader *l) {
    char name[256], arg[256];
    ffb_stmt *st = l->routines;
    text(st, 0, name, sizeof name);
    int kind = i32(st, 1);
    text(st, 2, arg, sizeof arg);
    int ptype = i32(st, 3);
    if (kind != REST_RT_SELECTABLE && kind != REST_RT_EXECUTABLE &&
        kind != REST_RT_FUNCTION)
        return 0;
    rest_routine *r = rest_schema_routine(l->schema, name, kind);
    if (!r)
        return FFB_E_NOMEM;
    if (ptype == 1) {
        r->nout++;
        if (kind == REST_RT_SELECTABLE && arg[0]) {
            rest_column *c = rest_table_add_column(&r->out, arg);
            if (!c)
                return FFB_E_NOMEM;
            col_type(st, 6, c);
        }
    }
    if (!r->returns && ffb_stmt_is_null(st, 14) == 0) {
        char desc[1024];
        text(st, 14, desc, sizeof desc);
        if (rest_routine_set_returns(r, desc, strlen(desc)) < 0)
            return FFB_E_NOMEM;
    }
    if (ptype == 0 && arg[0] && rest_routine_add_arg(r, arg, i32(st, 5)) < 0)
        return FFB_E_NOMEM;
    return 0;
}

static void on_closed(ffb_conn *conn, int status, void *data) {
    (void)conn;
    (void)status;
    loader *l = data;
    l->done = 1;
}

static void finish(loader *l) {
    ffb_stats st;
    ffb_conn_stats(l->conn, &st, sizeof st);
    l->rt = st.round_trips - l->rt0;
    ffb_stmt_free(l->cols);
    ffb_stmt_free(l->keys);
    ffb_stmt_free(l->ctx);
    ffb_stmt_free(l->routines);
    ffb_tx_free(l->tx);
    l->cols = l->keys = l->ctx = l->routines = NULL;
    l->tx = NULL;
    ffb_uv_close(l->conn, on_closed, l);
}

static void on_commit(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    loader *l = data;
    if (ffb_result_status(res) < 0)
        fail(l, ffb_result_status(res), "commit");
    finish(l);
}

static void one_done(loader *l) {
    if (--l->pending > 0)
        return;
    if (l->rc == 0 && ffb_tx_queue_commit(l->tx, on_commit, l) == 0)
        return;
    finish(l);
}

static void on_rows(ffb_conn *conn, const ffb_result *res, void *data);

static void drain(loader *l, ffb_stmt *st) {
    for (;;) {
        int rc = ffb_stmt_fetch(st);
        if (rc == 1) {
            rc = st == l->cols   ? column_row(l)
                 : st == l->keys ? key_row(l)
                 : st == l->ctx  ? context_row(l)
                                 : routine_row(l);
            if (rc < 0) {
                fail(l, rc, "out of memory");
                one_done(l);
                return;
            }
            continue;
        }
        if (rc == FFB_E_AGAIN) {
            rc = ffb_stmt_queue_fetch(st, on_rows, l);
            if (rc == 0)
                return; /* more rows on their way */
            if (rc == 1)
                continue;
        }
        if (rc < 0)
            fail(l, rc, "fetch");
        one_done(l);
        return;
    }
}

static void on_rows(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    loader *l = data;
    ffb_stmt *st = ffb_result_stmt(res);
    if (ffb_result_status(res) < 0) {
        fail(l, ffb_result_status(res), "catalog query");
        one_done(l);
        return;
    }
    drain(l, st);
}

static void on_prepared(ffb_conn *conn, const ffb_result *res, void *data) {
    (void)conn;
    loader *l = data;
    if (ffb_result_status(res) < 0)
        fail(l, ffb_result_status(res), "prepare of a catalog query");
}

static void on_connected(ffb_conn *conn, int status, void *data) {
    loader *l = data;
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    if (status < 0) {
        fail(l, status, "connect");
        ffb_uv_close(conn, on_closed, l);
        return;
    }
    ffb_stats st;
    ffb_conn_stats(conn, &st, sizeof st);
    l->rt0 = st.round_trips;
    l->schema->protocol = ffb_conn_protocol(conn);
    to.read_only = 1;
    to.isolation = FFB_ISO_READ_COMMITTED;
    int rc = ffb_tx_begin(conn, &to, &l->tx);
    if (rc == 0)
        rc = ffb_stmt_new(conn, &l->cols);
    if (rc == 0)
        rc = ffb_stmt_new(conn, &l->keys);
    if (rc == 0)
        rc = ffb_stmt_new(conn, &l->ctx);
    if (rc == 0)
        rc = ffb_stmt_new(conn, &l->routines);
    /* Every prepare goes out in one write; every execution in the next. */
    if (rc == 0)
        rc = ffb_stmt_queue_prepare(l->cols, l->tx, q_columns, (size_t)-1,
                                    on_prepared, l);
    if (rc == 0)
        rc = ffb_stmt_queue_prepare(l->keys, l->tx, q_keys, (size_t)-1,
                                    on_prepared, l);
    if (rc == 0)
        rc = ffb_stmt_queue_prepare(l->ctx, l->tx, q_context, (size_t)-1,
                                    on_prepared, l);
    if (rc == 0)
        rc = ffb_stmt_queue_prepare(l->routines, l->tx, q_routines, (size_t)-1,
                                    on_prepared, l);
    if (rc == 0)
        rc = ffb_stmt_queue_execute(l->cols, l->tx, on_rows, l);
    if (rc == 0) {
        l->pending = 1;
        rc = ffb_stmt_queue_execute(l->keys, l->tx, on_rows, l);
        if (rc == 0)
            l->pending = 2;
    }
    if (rc == 0) {
        rc = ffb_stmt_queue_execute(l->ctx, l->tx, on_rows, l);
        if (rc == 0)
            l->pending = 3;
    }
    if (rc == 0) {
        rc = ffb_stmt_queue_execute(l->routines, l->tx, on_rows, l);
        if (rc == 0)
            l->pending = 4;
    }
    if (rc < 0) {
        fail(l, rc, "queueing the catalog queries");
        if (l->pending == 0)
            finish(l);
    }
}

int rest_schema_load(uv_loop_t *loop, const ffb_conn_options *opts,
                     rest_schema *out, uint64_t *round_trips, char *err,
                     size_t errlen) {
    loader l;
    memset(&l, 0, sizeof l);
    l.schema = out;
    l.err = err;
    l.errlen = errlen;
    int rc = ffb_uv_conn_new(loop, opts, &l.conn);
    if (rc == 0)
        rc = ffb_uv_connect(l.conn, on_connected, &l);
    if (rc < 0) {
        snprintf(err, errlen, "schema cache: cannot connect: %s",
                 ffb_strerror(rc));
        if (l.conn)
            ffb_uv_close(l.conn, NULL, NULL);
        uv_run(loop, UV_RUN_DEFAULT);
        return rc;
    }
    while (!l.done && uv_run(loop, UV_RUN_ONCE))
        ;
    uv_run(loop, UV_RUN_DEFAULT);
    if (round_trips)
        *round_trips = l.rt;
    int lk = l.rc == 0 ? rest_schema_link_routines(out) : 0;
    if (lk == -2) {
        snprintf(err, errlen,
                 "db-procedure-returns: expected proc:table, ... naming "
                 "selectable procedures");
        return FFB_E_INVAL;
    }
    if (lk < 0) {
        snprintf(err, errlen, "schema cache: out of memory");
        return FFB_E_NOMEM;
    }
    return l.rc;
}
