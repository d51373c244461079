/* ffb-oltp's fbclient driver (oltp_drv.h): Firebird's own client library,
   loaded with dlopen as the sysbench Firebird Edition does, through the
   legacy ISC API (Debian 12's libfbclient2 is Firebird 3.0). The types and
   constants below are our own declarations of that stable C ABI; when
   ibase.h (firebird-dev) is there at build time they are checked against
   it, and the tool builds without it.

   Per sysbench statement: SELECT = isc_dsql_execute + isc_dsql_fetch to
   the end + isc_dsql_free_statement(DSQL_close); DML = isc_dsql_execute +
   isc_dsql_sql_info(isc_info_sql_records) for the row count (what the
   Edition's getAffectedRecords() asks); auto-commit = start + DML + count +
   commit; BEGIN/COMMIT = isc_start_transaction (concurrency, wait, write:
   the Edition's empty TPB) / isc_commit_transaction. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oltp_drv.h"

typedef intptr_t fbc_status;     /* ISC_STATUS: a long */
typedef unsigned int fbc_handle; /* FB_API_HANDLE */

typedef struct fbc_var { /* XSQLVAR */
    short sqltype, sqlscale, sqlsubtype, sqllen;
    char *sqldata;
    short *sqlind;
    short sqlname_length;
    char sqlname[32];
    short relname_length;
    char relname[32];
    short ownname_length;
    char ownname[32];
    short aliasname_length;
    char aliasname[32];
} fbc_var;

typedef struct fbc_da { /* XSQLDA */
    short version;
    char sqldaid[8];
    int sqldabc;
    short sqln, sqld;
    fbc_var sqlvar[1];
} fbc_da;

enum {
    FBC_DA_VERSION1 = 1,
    FBC_DIALECT3 = 3,
    FBC_CLOSE = 1,
    FBC_DROP = 2,
    FBC_TEXT = 452,
    FBC_VARYING = 448,
    FBC_SHORT = 500,
    FBC_LONG = 496,
    FBC_INT64 = 580,
    FBC_DOUBLE = 480,
    FBC_DPB_V1 = 1,
    FBC_DPB_USER = 28,
    FBC_DPB_PASSWORD = 29,
    FBC_DPB_LC_CTYPE = 48,
    FBC_TPB_V3 = 3,
    FBC_TPB_CONCURRENCY = 2,
    FBC_TPB_WAIT = 6,
    FBC_TPB_WRITE = 9,
    FBC_INFO_END = 1,
    FBC_INFO_SQL_RECORDS = 23,
    FBC_REQ_INSERT = 14,
    FBC_REQ_UPDATE = 15,
    FBC_REQ_DELETE = 16,
};

#define FBC_DA_SIZE(n) (sizeof(fbc_da) + ((n)-1) * sizeof(fbc_var))

#if defined(__has_include)
#if __has_include(<ibase.h>)
#include <ibase.h>
_Static_assert(sizeof(fbc_status) == sizeof(ISC_STATUS), "ISC_STATUS");
_Static_assert(sizeof(fbc_handle) == sizeof(isc_db_handle), "handle");
_Static_assert(sizeof(fbc_var) == sizeof(XSQLVAR), "XSQLVAR");
_Static_assert(offsetof(fbc_var, sqldata) == offsetof(XSQLVAR, sqldata), "");
_Static_assert(offsetof(fbc_var, sqlind) == offsetof(XSQLVAR, sqlind), "");
_Static_assert(offsetof(fbc_var, aliasname) == offsetof(XSQLVAR, aliasname),
               "");
_Static_assert(sizeof(fbc_da) == sizeof(XSQLDA), "XSQLDA");
_Static_assert(offsetof(fbc_da, sqln) == offsetof(XSQLDA, sqln), "");
_Static_assert(offsetof(fbc_da, sqlvar) == offsetof(XSQLDA, sqlvar), "");
_Static_assert(FBC_TEXT == SQL_TEXT && FBC_VARYING == SQL_VARYING &&
                   FBC_INT64 == SQL_INT64 && FBC_LONG == SQL_LONG &&
                   FBC_SHORT == SQL_SHORT && FBC_DOUBLE == SQL_DOUBLE,
               "SQL types");
_Static_assert(FBC_DPB_USER == isc_dpb_user_name &&
                   FBC_DPB_PASSWORD == isc_dpb_password &&
                   FBC_DPB_LC_CTYPE == isc_dpb_lc_ctype &&
                   FBC_TPB_CONCURRENCY == isc_tpb_concurrency &&
                   FBC_TPB_WAIT == isc_tpb_wait &&
                   FBC_TPB_WRITE == isc_tpb_write &&
                   FBC_INFO_SQL_RECORDS == isc_info_sql_records &&
                   FBC_REQ_UPDATE == isc_info_req_update_count &&
                   FBC_CLOSE == DSQL_close && FBC_DROP == DSQL_drop,
               "constants");
#endif
#endif

/* ---- the library ------------------------------------------------------ */

static struct {
    fbc_status (*attach)(fbc_status *, short, const char *, fbc_handle *, short,
                         const char *);
    fbc_status (*detach)(fbc_status *, fbc_handle *);
    fbc_status (*start)(fbc_status *, fbc_handle *, short, ...);
    fbc_status (*commit)(fbc_status *, fbc_handle *);
    fbc_status (*rollback)(fbc_status *, fbc_handle *);
    fbc_status (*alloc)(fbc_status *, fbc_handle *, fbc_handle *);
    fbc_status (*prepare)(fbc_status *, fbc_handle *, fbc_handle *,
                          unsigned short, const char *, unsigned short,
                          fbc_da *);
    fbc_status (*describe_bind)(fbc_status *, fbc_handle *, unsigned short,
                                fbc_da *);
    fbc_status (*describe)(fbc_status *, fbc_handle *, unsigned short,
                           fbc_da *);
    fbc_status (*execute)(fbc_status *, fbc_handle *, fbc_handle *,
                          unsigned short, const fbc_da *);
    fbc_status (*fetch)(fbc_status *, fbc_handle *, unsigned short,
                        const fbc_da *);
    fbc_status (*free_stmt)(fbc_status *, fbc_handle *, unsigned short);
    fbc_status (*sql_info)(fbc_status *, fbc_handle *, short, const char *,
                           short, char *);
    fbc_status (*exec_immediate)(fbc_status *, fbc_handle *, fbc_handle *,
                                 unsigned short, const char *, unsigned short,
                                 const fbc_da *);
    int (*sqlcode)(const fbc_status *);
    int (*interpret)(char *, unsigned int, const fbc_status **);
    void (*client_version)(char *);
    void *lib;
    char path[256];
} L;

/* Load libfbclient once (under load_mu: every thread's connect calls
   it). Returns 0, or -1 with `err` set. */
static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;

static int load_locked(char *err, size_t size) {
    if (L.lib)
        return L.interpret ? 0 : (snprintf(err, size, "%s", L.path), -1);
    /* --fb-client names the one to load; else Debian's runtime name, then
       the development symlink */
    const char *want[2] = {"libfbclient.so.2", "libfbclient.so"};
    if (oltp_o->fb_client)
        want[0] = oltp_o->fb_client, want[1] = NULL;
    for (int i = 0; i < 2 && !L.lib; i++)
        if (want[i] && (L.lib = dlopen(want[i], RTLD_NOW | RTLD_LOCAL)))
            snprintf(L.path, sizeof(L.path), "%s", want[i]);
    if (!L.lib) {
        snprintf(err, size,
                 "cannot load libfbclient (Debian: libfbclient2; "
                 "or --fb-client=PATH): %s",
                 dlerror());
        return -1;
    }
    struct {
        void **fn;
        const char *name;
    } syms[] = {
        {(void **)&L.attach, "isc_attach_database"},
        {(void **)&L.detach, "isc_detach_database"},
        {(void **)&L.start, "isc_start_transaction"},
        {(void **)&L.commit, "isc_commit_transaction"},
        {(void **)&L.rollback, "isc_rollback_transaction"},
        {(void **)&L.alloc, "isc_dsql_allocate_statement"},
        {(void **)&L.prepare, "isc_dsql_prepare"},
        {(void **)&L.describe_bind, "isc_dsql_describe_bind"},
        {(void **)&L.describe, "isc_dsql_describe"},
        {(void **)&L.execute, "isc_dsql_execute"},
        {(void **)&L.fetch, "isc_dsql_fetch"},
        {(void **)&L.free_stmt, "isc_dsql_free_statement"},
        {(void **)&L.sql_info, "isc_dsql_sql_info"},
        {(void **)&L.exec_immediate, "isc_dsql_execute_immediate"},
        {(void **)&L.sqlcode, "isc_sqlcode"},
        {(void **)&L.interpret, "fb_interpret"},
        {(void **)&L.client_version, "isc_get_client_version"},
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
        if (!(*syms[i].fn = dlsym(L.lib, syms[i].name))) {
            snprintf(err, size, "%.200s: no %.40s", L.path, syms[i].name);
            L.interpret = NULL; /* a later caller fails the same way */
            snprintf(L.path, sizeof(L.path), "%s", err);
            return -1;
        }
    return 0;
}

static int load(char *err, size_t size) {
    pthread_mutex_lock(&load_mu);
    int rc = load_locked(err, size);
    pthread_mutex_unlock(&load_mu);
    return rc;
}

/* ---- per-thread state ------------------------------------------------- */

#define PBUF 512 /* bytes per bound parameter (c is 119) */

typedef struct fstmt {
    fbc_handle h;
    fbc_da *in, *out;
    char *ibuf, *obuf;
    short *oind;
    int is_select;
} fstmt;

typedef struct fbc_d {
    fbc_handle db, tx, itx;
    fstmt *st;
    int nst, bulk_rows, bulk_slot;
    fbc_handle btx;
    fbc_status sv[20];
} fbc_d;

#define D(t) ((fbc_d *)(t)->d)

/* 1 = retry (-913/-803), -1 = fatal with fb_interpret's text */
static int sfail(oltp_thr *t, const char *what) {
    fbc_status *sv = D(t)->sv;
    if (oltp_retryable(L.sqlcode(sv)))
        return 1;
    char msg[400] = "", part[256];
    const fbc_status *v = sv;
    size_t used = 0;
    while (used < sizeof(msg) - 2 && L.interpret(part, sizeof(part), &v) > 0)
        used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s%s",
                                 used ? "; " : "", part);
    return oltp_fatal(t, what, msg);
}
#define SV D(t)->sv
#define FAILED (SV[0] == 1 && SV[1] != 0)
#define CK(call, what)                                                         \
    do {                                                                       \
        call;                                                                  \
        if (FAILED)                                                            \
            return sfail(t, what);                                             \
    } while (0)

static void dpb_add(char *dpb, short *len, char tag, const char *v) {
    size_t l = strlen(v);
    if (l > 255 || *len + 2 + l > 1024)
        return;
    dpb[(*len)++] = tag;
    dpb[(*len)++] = (char)l;
    memcpy(dpb + *len, v, l);
    *len = (short)(*len + (short)l);
}

static int c_connect(oltp_thr *t, int nslots) {
    char err[256];
    if (load(err, sizeof(err)))
        return oltp_fatal(t, "fbclient", err);
    fbc_d *d = calloc(1, sizeof(*d));
    if (!d || !(d->st = calloc((size_t)nslots, sizeof(*d->st))))
        return oltp_fatal(t, "connect", "out of memory");
    t->d = d;
    d->nst = nslots;
    char dpb[1024];
    short len = 0;
    dpb[len++] = FBC_DPB_V1;
    dpb_add(dpb, &len, FBC_DPB_USER, oltp_o->user);
    dpb_add(dpb, &len, FBC_DPB_PASSWORD, oltp_o->password);
    dpb_add(dpb, &len, FBC_DPB_LC_CTYPE, "UTF8");
    CK(L.attach(SV, 0, oltp_o->dsn, &d->db, len, dpb), "isc_attach_database");
    return 0;
}

static void free_stmt(oltp_thr *t, fstmt *s) {
    if (s->h)
        L.free_stmt(SV, &s->h, FBC_DROP);
    free(s->in);
    free(s->out);
    free(s->ibuf);
    free(s->obuf);
    free(s->oind);
    memset(s, 0, sizeof(*s));
}

static void c_disconnect(oltp_thr *t) {
    fbc_d *d = D(t);
    if (!d)
        return;
    for (int i = 0; i < d->nst; i++)
        free_stmt(t, &d->st[i]);
    fbc_handle *txs[3] = {&d->tx, &d->itx, &d->btx};
    for (int i = 0; i < 3; i++)
        if (*txs[i])
            L.rollback(SV, txs[i]);
    if (d->db)
        L.detach(SV, &d->db);
    free(d->st);
    free(d);
    t->d = NULL;
}

static const char TPB[] = {FBC_TPB_V3, FBC_TPB_CONCURRENCY, FBC_TPB_WAIT,
                           FBC_TPB_WRITE};

static int start(oltp_thr *t, fbc_handle *tx) {
    CK(L.start(SV, tx, 1, &D(t)->db, (int)sizeof(TPB), TPB),
       "isc_start_transaction");
    return 0;
}

static fbc_handle *implicit(oltp_thr *t) {
    if (!D(t)->itx && start(t, &D(t)->itx))
        return NULL;
    return &D(t)->itx;
}

static fbc_da *new_da(int n) {
    fbc_da *da = calloc(1, FBC_DA_SIZE(n));
    if (da) {
        da->version = FBC_DA_VERSION1;
        da->sqln = (short)n;
    }
    return da;
}

#define OOM(p)                                                                 \
    do {                                                                       \
        if (!(p))                                                              \
            return oltp_fatal(t, "prepare", "out of memory");                  \
    } while (0)

/* Describe into s->in / s->out (describe_bind when `bind`), growing the
   SQLDA when the statement has more than its first guess of 8. */
static int describe(oltp_thr *t, fstmt *s, int bind) {
    fbc_da **da = bind ? &s->in : &s->out;
    for (int round = 0; round < 2; round++) {
        if (round) {
            int n = (*da)->sqld;
            if (n <= (*da)->sqln)
                break;
            free(*da);
            OOM(*da = new_da(n));
        }
        if (bind)
            CK(L.describe_bind(SV, &s->h, FBC_DA_VERSION1, *da),
               "describe_bind");
        else
            CK(L.describe(SV, &s->h, FBC_DA_VERSION1, *da), "describe");
    }
    return 0;
}

/* Allocate, prepare (in the implicit transaction), describe both sides,
   and lay out buffers for the output columns. */
static int c_prepare(oltp_thr *t, int slot, const char *sql) {
    fstmt *s = &D(t)->st[slot];
    fbc_handle *tx = implicit(t);
    if (!tx)
        return -1;
    OOM(s->out = new_da(8));
    OOM(s->in = new_da(8));
    CK(L.alloc(SV, &D(t)->db, &s->h), "isc_dsql_allocate_statement");
    CK(L.prepare(SV, tx, &s->h, 0, sql, FBC_DIALECT3, NULL), sql);
    if (describe(t, s, 0) || describe(t, s, 1))
        return -1;
    int n = s->out->sqld, np = s->in->sqld;
    s->is_select = n > 0;
    size_t off = 0;
    for (int i = 0; i < n; i++)
        off += ((size_t)s->out->sqlvar[i].sqllen + 2 + 7) & ~(size_t)7;
    OOM(s->obuf = calloc(1, off + 8));
    OOM(s->oind = calloc((size_t)n + 1, sizeof(short)));
    off = 0;
    for (int i = 0; i < n; i++) {
        fbc_var *v = &s->out->sqlvar[i];
        v->sqldata = s->obuf + off;
        v->sqlind = &s->oind[i];
        off += ((size_t)v->sqllen + 2 + 7) & ~(size_t)7;
    }
    OOM(s->ibuf = calloc((size_t)np + 1, PBUF));
    for (int i = 0; i < np; i++) {
        s->in->sqlvar[i].sqldata = s->ibuf + (size_t)i * PBUF;
        s->in->sqlvar[i].sqlind = NULL;
    }
    return 0;
}

/* Parameters travel as the application's own types (BIGINT, CHAR(n)); the
   server converts, as it does for any ISC application. */
static void c_bind_int(oltp_thr *t, int slot, unsigned i, int64_t v) {
    fbc_var *p = &D(t)->st[slot].in->sqlvar[i];
    p->sqltype = FBC_INT64;
    p->sqlscale = 0;
    p->sqllen = 8;
    memcpy(p->sqldata, &v, 8);
}

static void c_bind_text(oltp_thr *t, int slot, unsigned i, const char *s) {
    fbc_var *p = &D(t)->st[slot].in->sqlvar[i];
    size_t l = strlen(s);
    if (l > PBUF)
        l = PBUF;
    p->sqltype = FBC_TEXT;
    p->sqllen = (short)l;
    memcpy(p->sqldata, s, l);
}

static int c_begin(oltp_thr *t) { return start(t, &D(t)->tx); }

static int c_commit(oltp_thr *t) {
    CK(L.commit(SV, &D(t)->tx), "isc_commit_transaction");
    return 0;
}

static void c_rollback(oltp_thr *t) {
    fbc_d *d = D(t);
    fbc_status keep[20];
    memcpy(keep, d->sv, sizeof(keep));
    if (d->tx)
        L.rollback(SV, &d->tx);
    if (d->itx)
        L.rollback(SV, &d->itx);
    d->tx = d->itx = 0;
    memcpy(d->sv, keep, sizeof(keep));
}

static void c_end_implicit(oltp_thr *t) {
    if (t->d && D(t)->itx)
        L.commit(SV, &D(t)->itx);
}

static int c_select(oltp_thr *t, int slot, int tx, int check, long long *rows) {
    fstmt *s = &D(t)->st[slot];
    fbc_handle *h = tx ? &D(t)->tx : implicit(t);
    if (!h)
        return -1;
    CK(L.execute(SV, h, &s->h, FBC_DA_VERSION1, s->in), "isc_dsql_execute");
    fbc_status r;
    *rows = 0;
    while ((r = L.fetch(SV, &s->h, FBC_DA_VERSION1, s->out)) == 0) {
        ++*rows;
        if (check) {
            fbc_var *v = &s->out->sqlvar[0];
            const char *c = v->sqldata;
            size_t len = (size_t)v->sqllen;
            if ((v->sqltype & ~1) == FBC_VARYING) {
                len = *(unsigned short *)(void *)v->sqldata;
                c += 2;
            }
            if ((v->sqltype & 1 && *v->sqlind < 0) || !oltp_check_c(c, len)) {
                L.free_stmt(SV, &s->h, FBC_CLOSE);
                return oltp_fatal(t, "select", "c is not sysbench's CHAR(120)");
            }
        }
    }
    if (r != 100) {
        int rc = sfail(t, "isc_dsql_fetch");
        fbc_status keep[20];
        memcpy(keep, SV, sizeof(keep));
        L.free_stmt(SV, &s->h, FBC_CLOSE);
        memcpy(SV, keep, sizeof(keep));
        return rc;
    }
    CK(L.free_stmt(SV, &s->h, FBC_CLOSE), "isc_dsql_free_statement");
    return 0;
}

/* The row count of the last execution: isc_info_sql_records. */
static int affected(oltp_thr *t, fstmt *s, int64_t *n) {
    static const char items[] = {FBC_INFO_SQL_RECORDS, FBC_INFO_END};
    unsigned char buf[64];
    CK(L.sql_info(SV, &s->h, (short)sizeof(items), items, (short)sizeof(buf),
                  (char *)buf),
       "isc_dsql_sql_info");
    *n = 0;
    if (buf[0] != FBC_INFO_SQL_RECORDS)
        return oltp_fatal(t, "isc_dsql_sql_info", "no isc_info_sql_records");
    size_t end = 3 + (size_t)(buf[1] | buf[2] << 8);
    for (size_t p = 3;
         p + 3 <= end && p + 3 <= sizeof(buf) && buf[p] != FBC_INFO_END;) {
        int tag = buf[p];
        size_t l = (size_t)(buf[p + 1] | buf[p + 2] << 8);
        if (p + 3 + l > sizeof(buf))
            break;
        int64_t v = 0;
        for (size_t k = 0; k < l && k < 8; k++)
            v |= (int64_t)buf[p + 3 + k] << (8 * k);
        if (tag == FBC_REQ_INSERT || tag == FBC_REQ_UPDATE ||
            tag == FBC_REQ_DELETE)
            *n += v;
        p += 3 + l;
    }
    return 0;
}

/* Roll back `h` if still open, keeping the status of the failure. */
static void rollback_keep(oltp_thr *t, fbc_handle *h) {
    if (!*h)
        return;
    fbc_status keep[20];
    memcpy(keep, SV, sizeof(keep));
    L.rollback(SV, h);
    *h = 0;
    memcpy(SV, keep, sizeof(keep));
}

/* Commit the auto-commit transaction `a` after rc == 0; roll it back
   otherwise. */
static int ac_end(oltp_thr *t, fbc_handle *a, int rc) {
    if (!rc) {
        L.commit(SV, a);
        if (FAILED)
            rc = sfail(t, "isc_commit_transaction");
    }
    rollback_keep(t, a);
    return rc;
}

static int c_dml(oltp_thr *t, int slot, int tx, int64_t *n) {
    fstmt *s = &D(t)->st[slot];
    fbc_handle a = 0, *h = tx ? &D(t)->tx : &a;
    int rc;
    if (!tx && (rc = start(t, &a)))
        return rc;
    L.execute(SV, h, &s->h, FBC_DA_VERSION1, s->in);
    rc = FAILED ? sfail(t, "isc_dsql_execute") : affected(t, s, n);
    return tx ? rc : ac_end(t, &a, rc);
}

/* sysbench's unprepared query(): start + execute immediate + commit; the
   row count of an execute-immediate INSERT is 1 when it succeeds. */
static int c_insert_sql(oltp_thr *t, const char *sql, int64_t *n) {
    fbc_handle a = 0;
    int rc = start(t, &a);
    if (rc)
        return rc;
    L.exec_immediate(SV, &D(t)->db, &a, 0, sql, FBC_DIALECT3, NULL);
    rc = ac_end(t, &a, FAILED ? sfail(t, "isc_dsql_execute_immediate") : 0);
    *n = rc ? 0 : 1;
    return rc;
}

/* The 3.0 client has no batch API: one execution per row in a
   transaction committed every 1,000 rows (sysbench's generic bulk path
   with needs_commit). */
static int c_bulk_add(oltp_thr *t, int slot) {
    fbc_d *d = D(t);
    int rc;
    if (!d->btx && (rc = start(t, &d->btx)))
        return rc;
    CK(L.execute(SV, &d->btx, &d->st[slot].h, FBC_DA_VERSION1, d->st[slot].in),
       "isc_dsql_execute");
    d->bulk_rows++;
    return 0;
}

static int c_bulk_flush(oltp_thr *t) {
    fbc_d *d = D(t);
    if (!d->btx)
        return 0;
    CK(L.commit(SV, &d->btx), "isc_commit_transaction");
    d->bulk_rows = 0;
    return 0;
}

static uint64_t c_round_trips(oltp_thr *t) {
    (void)t;
    return UINT64_MAX; /* libfbclient counts none: use ffb-proxy's turns */
}

static void c_describe(oltp_thr *t, char *buf, size_t size) {
    (void)t;
    char v[128] = "";
    L.client_version(v);
    snprintf(buf, size, "fbclient %s (%s, ISC API)", v, L.path);
}

const oltp_drv oltp_drv_fbclient = {
    .name = "fbclient",
    .connect = c_connect,
    .disconnect = c_disconnect,
    .prepare = c_prepare,
    .bind_int = c_bind_int,
    .bind_text = c_bind_text,
    .begin = c_begin,
    .commit = c_commit,
    .rollback = c_rollback,
    .select = c_select,
    .dml = c_dml,
    .insert_sql = c_insert_sql,
    .bulk_add = c_bulk_add,
    .bulk_flush = c_bulk_flush,
    .end_implicit = c_end_implicit,
    .round_trips = c_round_trips,
    .describe = c_describe,
};
