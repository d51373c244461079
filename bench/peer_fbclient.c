/*
 * The libfbclient peer: Firebird's own client library (Debian's
 * libfbclient2, Firebird 3.0) through its legacy C API (ibase.h, isc_*),
 * the way a C application uses it - prepared statements with XSQLDA,
 * isc_dsql_fetch, blob segments of 64 KB. Wire encryption is required per
 * attachment with isc_dpb_config "WireCrypt = Required".
 *
 * The 3.0 client has no batch API (IBatch arrived with Firebird 4's OO
 * API), so the batch scenario uses the usual substitute: one prepared
 * EXECUTE BLOCK with BENCH_BATCH_CHUNK rows of parameters, executed once
 * per chunk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>
#include <stdatomic.h>

#include <ibase.h>

#include "bench.h"

#define SEGMENT 65535

typedef struct fbc_stmt {
    isc_stmt_handle h;
    XSQLDA *in;
    XSQLDA *out;
    char *in_buf;
    char *out_buf;
    short *in_ind;
    short *out_ind;
} fbc_stmt;

typedef struct fbc_peer {
    char dbname[600];
    char dpb[512];
    short dpb_len;
    isc_db_handle db;
    isc_tr_handle tx;
    fbc_stmt stmt;
    fbc_stmt stmt2;
    int batch_rows; /* rows per EXECUTE BLOCK prepared in stmt2 */
    unsigned char *blob_buf;
} fbc_peer;

static const char tpb[] = {isc_tpb_version3, isc_tpb_write,
                           isc_tpb_read_committed, isc_tpb_rec_version,
                           isc_tpb_wait};

static int status_fail(peer *p, const ISC_STATUS *st, const char *what) {
    char msg[512];
    size_t used = 0;
    const ISC_STATUS *v = st;
    int n = snprintf(p->err, sizeof(p->err), "%s:", what);
    used = n > 0 ? (size_t)n : 0;
    while (used < sizeof(p->err) - 2 && fb_interpret(msg, sizeof(msg), &v)) {
        n = snprintf(p->err + used, sizeof(p->err) - used, " %s", msg);
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    return PEER_ERR;
}

#define CHECK(p, st, expr)                                                     \
    do {                                                                       \
        if ((expr) != 0)                                                       \
            return status_fail(p, st, #expr);                                  \
    } while (0)

static void dpb_add(fbc_peer *s, char tag, const char *v) {
    size_t len = strlen(v);
    if ((size_t)s->dpb_len + 2 + len > sizeof(s->dpb) || len > 255)
        return;
    s->dpb[s->dpb_len++] = tag;
    s->dpb[s->dpb_len++] = (char)len;
    memcpy(s->dpb + s->dpb_len, v, len);
    s->dpb_len = (short)(s->dpb_len + (short)len);
}

static int fbc_start(peer *p, const bench_cfg *cfg) {
    fbc_peer *s = calloc(1, sizeof(*s));
    if (!s)
        return bench_fail(p, PEER_ERR, "out of memory");
    s->blob_buf = malloc(BENCH_BLOB_LARGE);
    if (!s->blob_buf) {
        free(s);
        return bench_fail(p, PEER_ERR, "out of memory");
    }
    snprintf(s->dbname, sizeof(s->dbname), "%s/%d:%s", cfg->host, cfg->port,
             cfg->db);
    s->dpb[s->dpb_len++] = isc_dpb_version1;
    dpb_add(s, isc_dpb_user_name, cfg->user);
    dpb_add(s, isc_dpb_password, cfg->password);
    dpb_add(s, isc_dpb_lc_ctype, "UTF8");
    const char *w = cfg->wire_crypt ? cfg->wire_crypt : "required";
    dpb_add(s, isc_dpb_config,
            w[0] == 'd'   ? "WireCrypt = Disabled"
            : w[0] == 'e' ? "WireCrypt = Enabled"
                          : "WireCrypt = Required");
    p->st = s;
    return PEER_OK;
}

static int attach(peer *p, isc_db_handle *db) {
    fbc_peer *s = p->st;
    ISC_STATUS_ARRAY st;
    *db = 0;
    CHECK(p, st, isc_attach_database(st, 0, s->dbname, db, s->dpb_len, s->dpb));
    return PEER_OK;
}

static int start_tx(peer *p) {
    fbc_peer *s = p->st;
    ISC_STATUS_ARRAY st;
    s->tx = 0;
    CHECK(p, st,
          isc_start_transaction(st, &s->tx, 1, &s->db,
                                (unsigned short)sizeof(tpb), tpb));
    return PEER_OK;
}

static int commit_tx(peer *p) {
    fbc_peer *s = p->st;
    ISC_STATUS_ARRAY st;
    CHECK(p, st, isc_commit_transaction(st, &s->tx));
    return PEER_OK;
}

/* ---- statements with XSQLDA -----------------------------------------------
 */

static XSQLDA *sqlda_new(int n) {
    XSQLDA *d = calloc(1, XSQLDA_LENGTH(n > 0 ? n : 1));
    if (d) {
        d->version = SQLDA_VERSION1;
        d->sqln = (ISC_SHORT)(n > 0 ? n : 1);
    }
    return d;
}

static size_t var_size(const XSQLVAR *v) {
    size_t n = (size_t)v->sqllen;
    if ((v->sqltype & ~1) == SQL_VARYING)
        n += 2;
    return (n + 7) & ~(size_t)7;
}

/* One buffer for all the values of `d`, one for the null indicators. */
static int sqlda_bind_buffers(XSQLDA *d, char **buf, short **ind) {
    size_t total = 0;
    for (int i = 0; i < d->sqld; i++)
        total += var_size(&d->sqlvar[i]);
    *buf = calloc(1, total ? total : 1);
    *ind = calloc((size_t)(d->sqld ? d->sqld : 1), sizeof(short));
    if (!*buf || !*ind)
        return -1;
    size_t off = 0;
    for (int i = 0; i < d->sqld; i++) {
        d->sqlvar[i].sqldata = *buf + off;
        d->sqlvar[i].sqlind = &(*ind)[i];
        off += var_size(&d->sqlvar[i]);
    }
    return 0;
}

static void stmt_free(fbc_stmt *t) {
    ISC_STATUS_ARRAY st;
    if (t->h)
        isc_dsql_free_statement(st, &t->h, DSQL_drop);
    free(t->in);
    free(t->out);
    free(t->in_buf);
    free(t->out_buf);
    free(t->in_ind);
    free(t->out_ind);
    memset(t, 0, sizeof(*t));
}

static int stmt_prepare(peer *p, fbc_stmt *t, const char *sql) {
    fbc_peer *s = p->st;
    ISC_STATUS_ARRAY st;
    memset(t, 0, sizeof(*t));
    t->out = sqlda_new(8);
    if (!t->out)
        return bench_fail(p, PEER_ERR, "out of memory");
    CHECK(p, st, isc_dsql_allocate_statement(st, &s->db, &t->h));
    CHECK(p, st, isc_dsql_prepare(st, &s->tx, &t->h, 0, sql, 3, t->out));
    if (t->out->sqld > t->out->sqln) {
        int n = t->out->sqld;
        free(t->out);
        t->out = sqlda_new(n);
        if (!t->out)
            return bench_fail(p, PEER_ERR, "out of memory");
        CHECK(p, st, isc_dsql_describe(st, &t->h, 1, t->out));
    }
    t->in = sqlda_new(1);
    if (!t->in)
        return bench_fail(p, PEER_ERR, "out of memory");
    CHECK(p, st, isc_dsql_describe_bind(st, &t->h, 1, t->in));
    if (t->in->sqld > t->in->sqln) {
        int n = t->in->sqld;
        free(t->in);
        t->in = sqlda_new(n);
        if (!t->in)
            return bench_fail(p, PEER_ERR, "out of memory");
        CHECK(p, st, isc_dsql_describe_bind(st, &t->h, 1, t->in));
    }
    if (sqlda_bind_buffers(t->out, &t->out_buf, &t->out_ind) < 0 ||
        sqlda_bind_buffers(t->in, &t->in_buf, &t->in_ind) < 0)
        return bench_fail(p, PEER_ERR, "out of memory");
    return PEER_OK;
}

static int set_int(peer *p, XSQLVAR *v, int64_t x) {
    *v->sqlind = 0;
    switch (v->sqltype & ~1) {
    case SQL_LONG: {
        ISC_LONG y = (ISC_LONG)x;
        memcpy(v->sqldata, &y, sizeof(y));
        return PEER_OK;
    }
    case SQL_INT64: {
        ISC_INT64 y = x;
        memcpy(v->sqldata, &y, sizeof(y));
        return PEER_OK;
    }
    default:
        return bench_fail(p, PEER_ERR, "parameter type %d", v->sqltype);
    }
}

static int set_text(peer *p, XSQLVAR *v, const char *text) {
    size_t len = strlen(text);
    if ((v->sqltype & ~1) != SQL_VARYING || len > (size_t)v->sqllen)
        return bench_fail(p, PEER_ERR, "text parameter");
    *v->sqlind = 0;
    short l = (short)len;
    memcpy(v->sqldata, &l, 2);
    memcpy(v->sqldata + 2, text, len);
    return PEER_OK;
}

static int stmt_exec(peer *p, fbc_stmt *t) {
    fbc_peer *s = p->st;
    ISC_STATUS_ARRAY st;
    CHECK(p, st,
          isc_dsql_execute(st, &s->tx, &t->h, 1, t->in->sqld ? t->in : NULL));
    return PEER_OK;
}

/* 1 = a row, 0 = end, PEER_ERR. */
static int stmt_fetch(peer *p, fbc_stmt *t) {
    ISC_STATUS_ARRAY st;
    ISC_STATUS r = isc_dsql_fetch(st, &t->h, 1, t->out);
    if (r == 0)
        return 1;
    if (r == 100)
        return 0;
    return status_fail(p, st, "isc_dsql_fetch");
}

static int stmt_close(peer *p, fbc_stmt *t) {
    ISC_STATUS_ARRAY st;
    CHECK(p, st, isc_dsql_free_statement(st, &t->h, DSQL_close));
    return PEER_OK;
}

static int64_t get_int(const XSQLVAR *v) {
    if ((v->sqltype & ~1) == SQL_LONG) {
        ISC_LONG y;
        memcpy(&y, v->sqldata, sizeof(y));
        return y;
    }
    ISC_INT64 y;
    memcpy(&y, v->sqldata, sizeof(y));
    return y;
}

/* Read the current row of BENCH_T the way an application would. */
static int read_row(peer *p, const fbc_stmt *t, int64_t *id_out) {
    const XSQLVAR *v = t->out->sqlvar;
    *id_out = get_int(&v[0]);
    short len;
    memcpy(&len, v[1].sqldata, 2);
    int64_t amount = get_int(&v[2]);
    struct tm tm;
    isc_decode_timestamp((ISC_TIMESTAMP *)v[3].sqldata, &tm);
    if (len < 5 || amount != *id_out || v[2].sqlscale != -2)
        return bench_fail(p, PEER_ERR, "unexpected row %lld",
                          (long long)*id_out);
    return PEER_OK;
}

/* ---- scenarios -------------------------------------------------------------
 */

static const char *sql_for(int sc) {
    switch (sc) {
    case SC_SELECT_AC:
    case SC_SELECT_TX:
    case SC_SELECT_PIPE:
        return SQL_POINT;
    case SC_SCAN:
        return SQL_SCAN;
    case SC_INSERT_ROWS:
    case SC_INSERT_PIPE:
        return SQL_INSERT;
    case SC_BLOB_RW:
        return SQL_BLOB_INSERT;
    case SC_BLOB_SCAN:
        return SQL_BLOB_SCAN;
    default:
        return NULL;
    }
}

/* EXECUTE BLOCK with `rows` rows of (id, name, amount) parameters. */
static char *batch_sql(int rows) {
    size_t size = 200 + (size_t)rows * 160;
    char *sql = malloc(size);
    if (!sql)
        return NULL;
    size_t n = (size_t)snprintf(sql, size, "execute block (");
    for (int i = 0; i < rows; i++)
        n += (size_t)snprintf(sql + n, size - n,
                              "%si%d integer = ?, n%d varchar(40) = ?, "
                              "a%d numeric(18,2) = ?",
                              i ? ", " : "", i, i, i);
    n += (size_t)snprintf(sql + n, size - n, ") as begin ");
    for (int i = 0; i < rows; i++)
        n += (size_t)snprintf(sql + n, size - n,
                              "insert into BENCH_INS (id, name, amount) "
                              "values (:i%d, :n%d, :a%d); ",
                              i, i, i);
    snprintf(sql + n, size - n, "end");
    return sql;
}

static int fbc_setup(peer *p, int sc, int n) {
    fbc_peer *s = p->st;
    (void)n;
    if (sc == SC_CONNECT)
        return PEER_OK;
    if (attach(p, &s->db) != PEER_OK)
        return PEER_ERR;
    if (start_tx(p) != PEER_OK)
        return PEER_ERR;
    if (sql_for(sc) && stmt_prepare(p, &s->stmt, sql_for(sc)) != PEER_OK)
        return PEER_ERR;
    if (sc == SC_BLOB_RW &&
        stmt_prepare(p, &s->stmt2, SQL_BLOB_SELECT) != PEER_OK)
        return PEER_ERR;
    if (sc == SC_INSERT_BATCH) {
        s->batch_rows = n < BENCH_BATCH_CHUNK ? n : BENCH_BATCH_CHUNK;
        char *sql = batch_sql(s->batch_rows);
        if (!sql)
            return bench_fail(p, PEER_ERR, "out of memory");
        int rc = stmt_prepare(p, &s->stmt2, sql);
        free(sql);
        if (rc != PEER_OK)
            return rc;
    }
    return commit_tx(p);
}

static int run_connect(peer *p, int n) {
    for (int i = 0; i < n; i++) {
        isc_db_handle db;
        ISC_STATUS_ARRAY st;
        if (attach(p, &db) != PEER_OK)
            return PEER_ERR;
        CHECK(p, st, isc_detach_database(st, &db));
    }
    return PEER_OK;
}

static int point_select_id(peer *p, int64_t want) {
    fbc_peer *s = p->st;
    int64_t id;
    if (set_int(p, &s->stmt.in->sqlvar[0], want) != PEER_OK ||
        stmt_exec(p, &s->stmt) != PEER_OK)
        return PEER_ERR;
    int r = stmt_fetch(p, &s->stmt);
    if (r != 1)
        return r < 0 ? r : bench_fail(p, PEER_ERR, "no row");
    if (read_row(p, &s->stmt, &id) != PEER_OK)
        return PEER_ERR;
    if (id != want)
        return bench_fail(p, PEER_ERR, "got row %lld", (long long)id);
    r = stmt_fetch(p, &s->stmt);
    if (r != 0)
        return r < 0 ? r : bench_fail(p, PEER_ERR, "more than one row");
    return stmt_close(p, &s->stmt);
}

static int point_select(peer *p, int i) {
    return point_select_id(p, bench_point_id(i));
}

static int run_select_ac(peer *p, int n) {
    for (int i = 0; i < n; i++) {
        if (start_tx(p) != PEER_OK || point_select(p, i) != PEER_OK ||
            commit_tx(p) != PEER_OK)
            return PEER_ERR;
    }
    return PEER_OK;
}

static int run_select_tx(peer *p, int n) {
    if (start_tx(p) != PEER_OK)
        return PEER_ERR;
    for (int i = 0; i < n; i++)
        if (point_select(p, i) != PEER_OK)
            return PEER_ERR;
    return commit_tx(p);
}

static int run_scan(peer *p, int n) {
    fbc_peer *s = p->st;
    if (start_tx(p) != PEER_OK)
        return PEER_ERR;
    for (int i = 0; i < n; i++) {
        if (stmt_exec(p, &s->stmt) != PEER_OK)
            return PEER_ERR;
        int64_t sum = 0, id;
        int rows = 0, r;
        while ((r = stmt_fetch(p, &s->stmt)) == 1) {
            if (read_row(p, &s->stmt, &id) != PEER_OK)
                return PEER_ERR;
            sum += id;
            rows++;
        }
        if (r < 0)
            return PEER_ERR;
        if (rows != BENCH_ROWS ||
            sum != (int64_t)BENCH_ROWS * (BENCH_ROWS + 1) / 2)
            return bench_fail(p, PEER_ERR, "scan: %d rows", rows);
        if (stmt_close(p, &s->stmt) != PEER_OK)
            return PEER_ERR;
    }
    return commit_tx(p);
}

static int bind_ins_row(peer *p, XSQLVAR *v, int i) {
    char name[32];
    snprintf(name, sizeof(name), "row %d", i);
    if (set_int(p, &v[0], i + 1) != PEER_OK ||
        set_text(p, &v[1], name) != PEER_OK ||
        set_int(p, &v[2], bench_ins_amount(i)) != PEER_OK)
        return PEER_ERR;
    if (v[2].sqlscale != -2)
        return bench_fail(p, PEER_ERR, "amount scale %d", v[2].sqlscale);
    return PEER_OK;
}

static int run_insert_rows(peer *p, int n) {
    fbc_peer *s = p->st;
    if (start_tx(p) != PEER_OK)
        return PEER_ERR;
    for (int i = 0; i < n; i++)
        if (bind_ins_row(p, s->stmt.in->sqlvar, i) != PEER_OK ||
            stmt_exec(p, &s->stmt) != PEER_OK)
            return PEER_ERR;
    return commit_tx(p);
}

/* The EXECUTE BLOCK prepared by setup, once per chunk of rows. */
static int run_insert_batch(peer *p, int n) {
    fbc_peer *s = p->st;
    if (n % s->batch_rows != 0)
        return bench_fail(p, PEER_ERR, "%d rows: not a multiple of %d", n,
                          s->batch_rows);
    if (start_tx(p) != PEER_OK)
        return PEER_ERR;
    for (int done = 0; done < n; done += s->batch_rows) {
        for (int k = 0; k < s->batch_rows; k++)
            if (bind_ins_row(p, s->stmt2.in->sqlvar + 3 * k, done + k) !=
                PEER_OK)
                return PEER_ERR;
        if (stmt_exec(p, &s->stmt2) != PEER_OK)
            return PEER_ERR;
    }
    return commit_tx(p);
}

/* Read a whole blob in segments of up to 64 KB; returns its length. */
static int read_blob(peer *p, ISC_QUAD *id, int64_t key, size_t want) {
    fbc_peer *s = p->st;
    ISC_STATUS_ARRAY st;
    isc_blob_handle bh = 0;
    CHECK(p, st, isc_open_blob2(st, &s->db, &s->tx, &bh, id, 0, NULL));
    size_t got = 0;
    for (;;) {
        unsigned short len = 0;
        size_t room = BENCH_BLOB_LARGE - got;
        if (room == 0)
            break; /* longer than any blob written: caught below */
        unsigned short ask = room < SEGMENT ? (unsigned short)room : SEGMENT;
        ISC_STATUS r =
            isc_get_segment(st, &bh, &len, ask, (char *)s->blob_buf + got);
        if (r != 0 && r != isc_segment) {
            if (r == isc_segstr_eof)
                break;
            return status_fail(p, st, "isc_get_segment");
        }
        got += len;
    }
    CHECK(p, st, isc_close_blob(st, &bh));
    if (got != want || s->blob_buf[0] != bench_blob_byte(key, 0) ||
        s->blob_buf[got - 1] != bench_blob_byte(key, got - 1))
        return bench_fail(p, PEER_ERR, "blob %lld: %zu bytes, wrong content",
                          (long long)key, got);
    return PEER_OK;
}

static int run_blob_rw(peer *p, int n) {
    fbc_peer *s = p->st;
    ISC_STATUS_ARRAY st;
    for (int i = 0; i < n; i++) {
        int64_t key = i + 1;
        for (size_t k = 0; k < BENCH_BLOB_LARGE; k++)
            s->blob_buf[k] = bench_blob_byte(key, k);
        if (start_tx(p) != PEER_OK)
            return PEER_ERR;
        isc_blob_handle bh = 0;
        XSQLVAR *v = s->stmt.in->sqlvar;
        ISC_QUAD *quad = (ISC_QUAD *)v[1].sqldata;
        CHECK(p, st, isc_create_blob2(st, &s->db, &s->tx, &bh, quad, 0, NULL));
        for (size_t off = 0; off < BENCH_BLOB_LARGE; off += SEGMENT) {
            size_t len = BENCH_BLOB_LARGE - off < SEGMENT
                             ? BENCH_BLOB_LARGE - off
                             : SEGMENT;
            CHECK(p, st,
                  isc_put_segment(st, &bh, (unsigned short)len,
                                  (char *)s->blob_buf + off));
        }
        CHECK(p, st, isc_close_blob(st, &bh));
        *v[1].sqlind = 0;
        if (set_int(p, &v[0], key) != PEER_OK ||
            stmt_exec(p, &s->stmt) != PEER_OK)
            return PEER_ERR;
        if (set_int(p, &s->stmt2.in->sqlvar[0], key) != PEER_OK ||
            stmt_exec(p, &s->stmt2) != PEER_OK || stmt_fetch(p, &s->stmt2) != 1)
            return bench_fail(p, PEER_ERR, "blob %lld: not found: %s",
                              (long long)key, p->err);
        ISC_QUAD rid;
        memcpy(&rid, s->stmt2.out->sqlvar[0].sqldata, sizeof(rid));
        if (read_blob(p, &rid, key, BENCH_BLOB_LARGE) != PEER_OK ||
            stmt_close(p, &s->stmt2) != PEER_OK || commit_tx(p) != PEER_OK)
            return PEER_ERR;
    }
    return PEER_OK;
}

static int run_blob_scan(peer *p, int n) {
    fbc_peer *s = p->st;
    if (start_tx(p) != PEER_OK)
        return PEER_ERR;
    if (set_int(p, &s->stmt.in->sqlvar[0], n) != PEER_OK ||
        stmt_exec(p, &s->stmt) != PEER_OK)
        return PEER_ERR;
    int rows = 0, r;
    while ((r = stmt_fetch(p, &s->stmt)) == 1) {
        int64_t id = get_int(&s->stmt.out->sqlvar[0]);
        ISC_QUAD q;
        memcpy(&q, s->stmt.out->sqlvar[1].sqldata, sizeof(q));
        if (read_blob(p, &q, id, BENCH_BLOB_SMALL) != PEER_OK)
            return PEER_ERR;
        rows++;
    }
    if (r < 0)
        return PEER_ERR;
    if (rows != n)
        return bench_fail(p, PEER_ERR, "blob scan: %d rows", rows);
    if (stmt_close(p, &s->stmt) != PEER_OK)
        return PEER_ERR;
    return commit_tx(p);
}

static int fbc_run(peer *p, int sc, int n, run_result *out) {
    int rc;
    out->lib_rts = -1;
    uint64_t t0 = bench_now_ns();
    switch (sc) {
    case SC_CONNECT:
        rc = run_connect(p, n);
        break;
    case SC_SELECT_AC:
        rc = run_select_ac(p, n);
        break;
    case SC_SELECT_TX:
    case SC_SELECT_PIPE: /* the legacy API is blocking: one by one */
        rc = run_select_tx(p, n);
        break;
    case SC_SCAN:
        rc = run_scan(p, n);
        break;
    case SC_INSERT_ROWS:
    case SC_INSERT_PIPE: /* the legacy API is blocking: one by one */
        rc = run_insert_rows(p, n);
        break;
    case SC_INSERT_BATCH:
        rc = run_insert_batch(p, n);
        break;
    case SC_BLOB_RW:
        rc = run_blob_rw(p, n);
        break;
    case SC_BLOB_SCAN:
        rc = run_blob_scan(p, n);
        break;
    default:
        return bench_fail(p, PEER_ERR, "unknown scenario");
    }
    out->ns = bench_now_ns() - t0;
    return rc;
}

static int exec_immediate(peer *p, const char *sql) {
    fbc_peer *s = p->st;
    ISC_STATUS_ARRAY st;
    if (start_tx(p) != PEER_OK)
        return PEER_ERR;
    CHECK(p, st,
          isc_dsql_execute_immediate(st, &s->db, &s->tx, 0, sql, 3, NULL));
    return commit_tx(p);
}

static int fbc_teardown(peer *p, int sc) {
    fbc_peer *s = p->st;
    ISC_STATUS_ARRAY st;
    int rc = PEER_OK;
    if (s->tx)
        isc_rollback_transaction(st, &s->tx);
    s->tx = 0;
    if (s->db && (sc == SC_INSERT_ROWS || sc == SC_INSERT_PIPE ||
                  sc == SC_INSERT_BATCH))
        rc = exec_immediate(p, SQL_CLEAN_INS);
    if (s->db && sc == SC_BLOB_RW)
        rc = exec_immediate(p, SQL_CLEAN_BLOBW);
    stmt_free(&s->stmt);
    stmt_free(&s->stmt2);
    if (s->db)
        isc_detach_database(st, &s->db);
    s->db = 0;
    return rc;
}

static int fbc_info(peer *p, char *buf, size_t size) {
    fbc_peer *s = p->st;
    char ver[128] = "";
    isc_get_client_version(ver);
    if (attach(p, &s->db) != PEER_OK || start_tx(p) != PEER_OK ||
        stmt_prepare(p, &s->stmt, SQL_WIRE_INFO) != PEER_OK ||
        stmt_exec(p, &s->stmt) != PEER_OK || stmt_fetch(p, &s->stmt) != 1) {
        fbc_teardown(p, -1);
        return PEER_ERR;
    }
    const XSQLVAR *v = s->stmt.out->sqlvar;
    char plugin[64] = "off";
    if (!(v[0].sqltype & 1) || *v[0].sqlind == 0) {
        short len;
        memcpy(&len, v[0].sqldata, 2);
        snprintf(plugin, sizeof(plugin), "%.*s", (int)len, v[0].sqldata + 2);
    }
    char proto[64] = "?";
    if (*v[2].sqlind == 0) {
        short len;
        memcpy(&len, v[2].sqldata, 2);
        snprintf(proto, sizeof(proto), "%.*s", (int)len, v[2].sqldata + 2);
    }
    snprintf(buf, size, "fbclient %s, protocol %s, wire crypt %s", ver, proto,
             plugin);
    fbc_teardown(p, -1);
    return PEER_OK;
}

static void fbc_stop(peer *p) {
    fbc_peer *s = p->st;
    if (!s)
        return;
    fbc_teardown(p, -1);
    free(s->blob_buf);
    free(s);
    p->st = NULL;
}

/* ---- the concurrency scenario ---------------------------------------------
 *
 * N threads, one attachment each (attached and prepared in setup, from
 * this thread; the 3.0 client is thread-safe, and each attachment is used
 * by one thread at a time). Each thread runs what select_ac runs per
 * query - start, execute, fetch to the end, close, commit - with a random
 * id, until the time is up.
 */

typedef struct fbc_client {
    peer pc; /* a copy of the peer with this client's state and error */
    fbc_peer st;
    pthread_t th;
    int started;
    atomic_int finished;
    int stuck; /* abandoned in a call that never returned */
    int rc;
    uint64_t rng;
    uint64_t end_ns;
    lat_log lat;
} fbc_client;

typedef struct fbc_conc {
    fbc_client *c;
    int n;
} fbc_conc;

static fbc_conc conc_state;

static int fbc_conc_teardown(peer *p) {
    ISC_STATUS_ARRAY st;
    (void)p;
    int stuck = 0;
    for (int i = 0; i < conc_state.n; i++) {
        fbc_client *c = &conc_state.c[i];
        if (c->stuck) {
            stuck = 1; /* its thread may still be in libfbclient */
            continue;
        }
        if (c->st.tx)
            isc_rollback_transaction(st, &c->st.tx);
        stmt_free(&c->st.stmt);
        if (c->st.db)
            isc_detach_database(st, &c->st.db);
        bench_lat_free(&c->lat);
    }
    if (!stuck) /* else left to the threads that still use it */
        free(conc_state.c);
    conc_state.c = NULL;
    conc_state.n = 0;
    return PEER_OK;
}

static int fbc_conc_setup(peer *p, int clients) {
    fbc_peer *s = p->st;
    conc_state.c = calloc((size_t)clients, sizeof(*conc_state.c));
    if (!conc_state.c)
        return bench_fail(p, PEER_ERR, "out of memory");
    conc_state.n = clients;
    for (int i = 0; i < clients; i++) {
        fbc_client *c = &conc_state.c[i];
        memcpy(c->st.dbname, s->dbname, sizeof(s->dbname));
        memcpy(c->st.dpb, s->dpb, sizeof(s->dpb));
        c->st.dpb_len = s->dpb_len;
        c->pc = *p;
        c->pc.st = &c->st;
        c->rng = bench_rand_seed(i);
        if (attach(&c->pc, &c->st.db) != PEER_OK ||
            start_tx(&c->pc) != PEER_OK ||
            stmt_prepare(&c->pc, &c->st.stmt, SQL_POINT) != PEER_OK ||
            commit_tx(&c->pc) != PEER_OK)
            return bench_fail(p, PEER_ERR, "client %d: %s", i, c->pc.err);
    }
    return PEER_OK;
}

static int client_query(void *arg) {
    fbc_client *c = arg;
    return start_tx(&c->pc) != PEER_OK ||
                   point_select_id(&c->pc, bench_rand_id(&c->rng)) !=
                       PEER_OK ||
                   commit_tx(&c->pc) != PEER_OK
               ? PEER_ERR
               : PEER_OK;
}

static void *fbc_client_main(void *arg) {
    fbc_client *c = arg;
    c->rc = bench_run_queries(&c->pc, &c->lat, c->end_ns, client_query, c);
    atomic_store(&c->finished, 1);
    return NULL;
}

static int fbc_conc_run(peer *p, int clients, int ms, conc_result *out) {
    int rc = PEER_OK;
    uint64_t t0 = bench_now_ns();
    out->lib_rts = -1;
    for (int i = 0; i < clients && i < conc_state.n; i++) {
        fbc_client *c = &conc_state.c[i];
        c->end_ns = t0 + (uint64_t)ms * 1000000u;
        if (pthread_create(&c->th, NULL, fbc_client_main, c) != 0) {
            rc = bench_fail(p, PEER_ERR, "pthread_create failed");
            break;
        }
        c->started = 1;
    }
    /* libfbclient has no I/O timeout: a server that stops answering would
       keep a thread in its call for ever. Wait at most a minute past the
       end, then give up on the clients still inside a call (their
       attachments are left alone) and fail the run. */
    uint64_t deadline = t0 + ((uint64_t)ms + 60000u) * 1000000u;
    for (int i = 0; i < conc_state.n; i++) {
        fbc_client *c = &conc_state.c[i];
        while (c->started && !atomic_load(&c->finished) &&
               bench_now_ns() < deadline) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
        if (c->started && !atomic_load(&c->finished)) {
            c->stuck = 1;
            pthread_detach(c->th);
            c->started = 0;
            if (rc == PEER_OK)
                rc = bench_fail(p, PEER_ERR,
                                "client %d: no answer from the server "
                                "60 s after the end of the run",
                                i);
        }
    }
    lat_log all = {0};
    for (int i = 0; i < conc_state.n; i++) {
        fbc_client *c = &conc_state.c[i];
        if (!c->started)
            continue;
        pthread_join(c->th, NULL);
        c->started = 0;
        rc = bench_client_joined(p, rc, i, &c->pc, c->rc, &all, &c->lat);
    }
    out->ns = bench_now_ns() - t0;
    bench_conc_latencies(out, &all);
    return rc;
}

const peer_ops bench_fbclient_ops = {
    .start = fbc_start,
    .setup = fbc_setup,
    .run = fbc_run,
    .teardown = fbc_teardown,
    .info = fbc_info,
    .stop = fbc_stop,
    .conc_setup = fbc_conc_setup,
    .conc_run = fbc_conc_run,
    .conc_teardown = fbc_conc_teardown,
};
