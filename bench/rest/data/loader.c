/*
 * The shared part of the dataset loaders (loader.h).
 */
#include "loader.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *g_prog = "loader";

static int fail(dl_ctx *c, const char *what) {
    fprintf(stderr, "%s: %s: %s\n", g_prog, what,
            ffb_error_message(ffb_conn_error(c->conn)));
    return -1;
}

static void usage(FILE *f, const char *prog, const char *what) {
    fprintf(
        f,
        "usage: %s [options] DSN\n"
        "Load %s into the Firebird database DSN (host/port:path),\n"
        "creating it when it does not exist. A complete load of the same\n"
        "dataset is left alone (run twice = the same content).\n"
        "\n"
        "  -u USER            user (default $ISC_USER, else SYSDBA)\n"
        "  -p PASSWORD        password (default $ISC_PASSWORD, else "
        "masterkey)\n"
        "  --force            drop the database and load it again\n"
        "  --check            only say whether a complete load is there\n"
        "                     (exit 0 yes, 3 no)\n"
        "  --scale N          divide the big tables by N (tests; N must\n"
        "                     divide 1000; default 1 = the spec's counts)\n"
        "  --page-size N      page size of a new database (default 8192)\n"
        "  --forced-writes on|off  of a new database (default: the "
        "server's)\n"
        "  -q                 no progress bar, only the summary line\n"
        "  --print-schema     print the schema as an isql script, exit\n"
        "  --pg-copy FILE     write the PostgreSQL twin (DDL and COPY text\n"
        "                     of the same rows; - = stdout) instead of\n"
        "                     loading Firebird; no DSN needed\n"
        "  -h, --help         this text\n",
        prog, what);
}

int dl_parse_args(int argc, char **argv, const char *prog, const char *what,
                  dl_opts *o) {
    g_prog = prog;
    memset(o, 0, sizeof(*o));
    o->scale = 1;
    o->page_size = 8192;
    o->forced_writes = -1;
    o->user = getenv("ISC_USER") ? getenv("ISC_USER") : "SYSDBA";
    o->password = getenv("ISC_PASSWORD") ? getenv("ISC_PASSWORD") : "masterkey";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout, prog, what);
            return 1;
        } else if (strcmp(a, "--force") == 0) {
            o->force = 1;
        } else if (strcmp(a, "--check") == 0) {
            o->check_only = 1;
        } else if (strcmp(a, "-q") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--print-schema") == 0) {
            o->print_schema = 1;
        } else if ((strcmp(a, "-u") == 0 || strcmp(a, "-p") == 0 ||
                    strcmp(a, "--scale") == 0 ||
                    strcmp(a, "--page-size") == 0 ||
                    strcmp(a, "--forced-writes") == 0 ||
                    strcmp(a, "--pg-copy") == 0)) {
            if (!v) {
                fprintf(stderr, "%s: %s needs a value\n", prog, a);
                return 2;
            }
            i++;
            if (strcmp(a, "-u") == 0) {
                o->user = v;
            } else if (strcmp(a, "--pg-copy") == 0) {
                o->pg_copy = v;
            } else if (strcmp(a, "-p") == 0) {
                o->password = v;
            } else if (strcmp(a, "--forced-writes") == 0) {
                if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
                    fprintf(stderr, "%s: --forced-writes takes on or off\n",
                            prog);
                    return 2;
                }
                o->forced_writes = strcmp(v, "on") == 0;
            } else {
                char *end;
                long n = strtol(v, &end, 10);
                int scale = strcmp(a, "--scale") == 0;
                if (*end || n <= 0 || (scale && 1000 % n != 0) ||
                    (!scale && n != 4096 && n != 8192 && n != 16384 &&
                     n != 32768)) {
                    fprintf(stderr, "%s: bad %s '%s' (%s)\n", prog, a, v,
                            scale ? "a divisor of 1000"
                                  : "4096, 8192, 16384 or 32768");
                    return 2;
                }
                if (scale)
                    o->scale = (int)n;
                else
                    o->page_size = (int)n;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "%s: unknown option %s\n", prog, a);
            usage(stderr, prog, what);
            return 2;
        } else if (o->dsn) {
            fprintf(stderr, "%s: one DSN only\n", prog);
            return 2;
        } else {
            o->dsn = a;
        }
    }
    if (!o->dsn && !o->print_schema && !o->pg_copy) {
        usage(stderr, prog, what);
        return 2;
    }
    return 0;
}

static void print_list(FILE *f, const dl_sql *l) {
    for (; l->text; l++) {
        if (strchr(l->text, ';'))
            fprintf(f, "SET TERM ^ ;\n%s^\nSET TERM ; ^\n", l->text);
        else
            fprintf(f, "%s;\n", l->text);
    }
}

void dl_print_schema(FILE *f, const char *title, const dl_sql *pre,
                     const dl_sql *post) {
    fprintf(f,
            "-- %s\n"
            "-- Generated by `%s --print-schema`: edit the program, not "
            "this file.\n"
            "-- Run with isql on a new UTF8 database (page size 8192 or "
            "16384).\n"
            "-- The loader creates the tables, loads the rows, then adds "
            "the keys.\n\n",
            title, g_prog);
    print_list(f, pre);
    fprintf(f, "\n-- (the rows are loaded here)\n\n");
    print_list(f, post);
}

/* ---- opening ------------------------------------------------------------ */

static int new_conn(dl_ctx *c) {
    ffb_conn_free(c->conn);
    c->conn = NULL;
    ffb_conn_options co = FFB_CONN_OPTIONS_INIT;
    co.dsn = c->o.dsn;
    co.user = c->o.user;
    co.password = c->o.password;
    co.charset = "UTF8";
    if (ffb_conn_new(&co, &c->conn) != 0) {
        if (!c->conn) {
            fprintf(stderr, "%s: out of memory\n", g_prog);
            return -1;
        }
        return fail(c, "connection options");
    }
    return 0;
}

/* Run a query giving one row of integers: 1 (row read), 0 (none), -1. */
static int query_ints(dl_ctx *c, const char *sql, int64_t *out, unsigned n,
                      int quiet) {
    ffb_tx *tx = NULL;
    ffb_stmt *s = NULL;
    int rc = -1;
    if (ffb_tx_begin(c->conn, NULL, &tx) != 0 ||
        ffb_stmt_new(c->conn, &s) != 0 ||
        ffb_stmt_prepare(s, tx, sql, (size_t)-1) != 0 ||
        ffb_stmt_execute(s, tx) != 0) {
        if (!quiet)
            fail(c, sql);
        goto out;
    }
    int f = ffb_stmt_fetch(s);
    if (f < 0) {
        fail(c, sql);
        goto out;
    }
    rc = f;
    for (unsigned i = 0; f == 1 && i < n; i++)
        if (ffb_stmt_is_null(s, i))
            out[i] = 0;
        else
            ffb_stmt_get_int64(s, i, &out[i]);
out:
    ffb_stmt_free(s);
    if (tx) {
        ffb_tx_rollback(tx);
        ffb_tx_free(tx);
    }
    return rc;
}

static int exec1(dl_ctx *c, const char *sql) {
    ffb_tx *tx;
    if (ffb_tx_begin(c->conn, NULL, &tx) != 0)
        return fail(c, "start a transaction");
    int rc = ffb_conn_execute_immediate(c->conn, tx, sql, (size_t)-1);
    if (rc != 0) {
        fail(c, sql);
        ffb_tx_rollback(tx);
        ffb_tx_free(tx);
        return -1;
    }
    rc = ffb_tx_commit(tx);
    ffb_tx_free(tx);
    return rc ? fail(c, "commit") : 0;
}

static int create_db(dl_ctx *c) {
    if (new_conn(c) != 0)
        return -1;
    ffb_create_options cr = FFB_CREATE_OPTIONS_INIT;
    cr.page_size = c->o.page_size;
    cr.charset = "UTF8";
    cr.force_write = c->o.forced_writes;
    if (ffb_conn_create_database(c->conn, &cr) != 0)
        return fail(c, "create the database");
    return 0;
}

int dl_open(dl_ctx *c, const char *dataset, int version, uint64_t total_rows) {
    c->dataset = dataset;
    c->version = version;
    c->total_rows = total_rows;
    c->tty = !c->o.quiet && isatty(2);
    c->last_pct = -1;
    if (new_conn(c) != 0)
        return -1;
    int attached = ffb_conn_connect(c->conn) == 0;
    if (!attached) {
        const ffb_error *e = ffb_conn_error(c->conn);
        if (ffb_error_code(e) != FFB_E_SERVER ||
            !ffb_error_has(e, FFB_GDS_IO_ERROR))
            return fail(c, "attach");
        if (c->o.check_only)
            return 0;
    }
    int need_drop = 0;
    if (attached) {
        char sql[256];
        int64_t v[3] = {0, 0, 0};
        snprintf(sql, sizeof(sql),
                 "SELECT version, scale, complete FROM dataset_info "
                 "WHERE name = '%s'",
                 dataset);
        int r = query_ints(c, sql, v, 3, 1);
        if (r < 0) {
            if (ffb_conn_is_broken(c->conn))
                return fail(c, "read dataset_info");
            int64_t ntab = 0;
            if (query_ints(c,
                           "SELECT COUNT(*) FROM RDB$RELATIONS "
                           "WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0",
                           &ntab, 1, 0) < 0)
                return -1;
            if (c->o.check_only)
                return 0;
            if (ntab > 0 && !c->o.force) {
                fprintf(stderr,
                        "%s: %s holds %lld tables but no dataset_info: not "
                        "a database this tool loaded; refusing to touch it "
                        "(--force drops and reloads it)\n",
                        g_prog, c->o.dsn, (long long)ntab);
                return -1;
            }
            need_drop = ntab > 0;
        } else if (r == 1 && v[0] == version && v[1] == c->o.scale &&
                   v[2] == 1) {
            if (!c->o.force) {
                if (!c->o.quiet || c->o.check_only)
                    printf("%s: %s already holds a complete load "
                           "(version %d, scale %d): nothing to do%s\n",
                           dataset, c->o.dsn, version, c->o.scale,
                           c->o.check_only ? "" : " (--force reloads)");
                ffb_conn_close(c->conn);
                return 1;
            }
            need_drop = 1;
        } else {
            if (c->o.check_only)
                return 0;
            if (!c->o.quiet)
                printf("%s: %s holds a partial or different load: "
                       "dropping it\n",
                       dataset, c->o.dsn);
            need_drop = 1;
        }
        if (need_drop || c->o.force) {
            if (ffb_conn_drop_database(c->conn) != 0)
                return fail(c, "drop the database (is something still "
                               "attached to it?)");
            attached = 0;
        }
    }
    if (!attached && create_db(c) != 0)
        return -1;
    char sql[512];
    if (exec1(c, "CREATE TABLE dataset_info (name VARCHAR(20) NOT NULL "
                 "PRIMARY KEY, version INTEGER NOT NULL, scale INTEGER NOT "
                 "NULL, complete SMALLINT NOT NULL, total_rows BIGINT NOT "
                 "NULL, load_seconds DOUBLE PRECISION)") != 0)
        return -1;
    snprintf(sql, sizeof(sql),
             "INSERT INTO dataset_info VALUES ('%s', %d, %d, 0, %llu, NULL)",
             dataset, version, c->o.scale, (unsigned long long)total_rows);
    if (exec1(c, sql) != 0)
        return -1;
    c->t0_ms = ffb_now_ms();
    return 0;
}

int dl_ddl(dl_ctx *c, const dl_sql *list) {
    for (; list->text; list++)
        if (exec1(c, list->text) != 0)
            return -1;
    return 0;
}

/* ---- loading ------------------------------------------------------------ */

static void progress(dl_ctx *c, int final) {
    if (!c->tty)
        return;
    int pct = c->total_rows ? (int)(c->done_rows * 100 / c->total_rows) : 100;
    if (pct == c->last_pct && !final)
        return;
    c->last_pct = pct;
    char bar[41];
    int fill = pct * 40 / 100;
    for (int i = 0; i < 40; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[40] = 0;
    fprintf(stderr, "\r%-14s [%s] %3d%%  %llu/%llu rows", c->table, bar, pct,
            (unsigned long long)c->done_rows,
            (unsigned long long)c->total_rows);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

int dl_table_begin(dl_ctx *c, const char *table, const char *insert_sql,
                   uint64_t rows) {
    c->table = table;
    c->table_rows = 0;
    c->table_total = rows;
    c->in_batch = 0;
    if (c->pg) {
        /* "INSERT INTO t (a, b) VALUES ..." -> "COPY t (a, b) FROM stdin;" */
        const char *open = strchr(insert_sql, '(');
        const char *close = open ? strchr(open, ')') : NULL;
        if (!close) {
            fprintf(stderr, "%s: no column list in %s\n", g_prog, insert_sql);
            return -1;
        }
        fprintf(c->pg, "COPY %s %.*s FROM stdin;\n", table,
                (int)(close - open + 1), open);
        return 0;
    }
    if (ffb_tx_begin(c->conn, NULL, &c->tx) != 0 ||
        ffb_stmt_new(c->conn, &c->stmt) != 0)
        return fail(c, table);
    if (ffb_stmt_prepare(c->stmt, c->tx, insert_sql, (size_t)-1) != 0)
        return fail(c, insert_sql);
    ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
    if (ffb_batch_new(c->stmt, &bo, &c->batch) != 0)
        return fail(c, "batch");
    return 0;
}

static int bound(dl_ctx *c, int rc, unsigned idx) {
    if (rc == 0)
        return 0;
    char what[96];
    snprintf(what, sizeof(what), "%s row %llu parameter %u", c->table,
             (unsigned long long)c->table_rows + 1, idx + 1);
    return fail(c, what);
}

/* --pg-copy: keep the field's COPY text. */
static int pg_field(dl_ctx *c, unsigned idx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int pg_field(dl_ctx *c, unsigned idx, const char *fmt, ...) {
    if (idx >= DL_MAX_PARAMS) {
        fprintf(stderr, "%s: parameter %u of %s: too many\n", g_prog, idx + 1,
                c->table);
        return -1;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->pgv[idx], sizeof(c->pgv[idx]), fmt, ap);
    va_end(ap);
    if (idx + 1 > c->pgn)
        c->pgn = idx + 1;
    return 0;
}

int dl_int(dl_ctx *c, unsigned idx, int64_t v) {
    if (c->pg)
        return pg_field(c, idx, "%lld", (long long)v);
    return bound(c, ffb_stmt_bind_int64(c->stmt, idx, v), idx);
}

int dl_num(dl_ctx *c, unsigned idx, int64_t unscaled, int scale) {
    if (c->pg) {
        if (scale != -2) {
            fprintf(stderr, "%s: --pg-copy: only scale -2\n", g_prog);
            return -1;
        }
        return pg_field(c, idx, "%s%lld.%02lld", unscaled < 0 ? "-" : "",
                        (long long)(unscaled < 0 ? -unscaled : unscaled) / 100,
                        (long long)(unscaled < 0 ? -unscaled : unscaled) % 100);
    }
    return bound(c, ffb_stmt_bind_numeric(c->stmt, idx, unscaled, scale), idx);
}

int dl_text(dl_ctx *c, unsigned idx, const char *s) {
    if (c->pg) {
        /* COPY text escapes: backslash, tab, newline, carriage return. */
        char buf[256];
        size_t o = 0;
        for (; *s && o + 3 < sizeof(buf); s++) {
            char e = *s == '\\'   ? '\\'
                     : *s == '\t' ? 't'
                     : *s == '\n' ? 'n'
                     : *s == '\r' ? 'r'
                                  : 0;
            if (e) {
                buf[o++] = '\\';
                buf[o++] = e;
            } else {
                buf[o++] = *s;
            }
        }
        buf[o] = 0;
        return pg_field(c, idx, "%s", buf);
    }
    return bound(c, ffb_stmt_bind_text(c->stmt, idx, s, strlen(s)), idx);
}

int dl_null(dl_ctx *c, unsigned idx) {
    if (c->pg)
        return pg_field(c, idx, "\\N");
    return bound(c, ffb_stmt_bind_null(c->stmt, idx), idx);
}

int dl_date(dl_ctx *c, unsigned idx, int y, int m, int d) {
    if (c->pg)
        return pg_field(c, idx, "%04d-%02d-%02d", y, m, d);
    return bound(c, ffb_stmt_bind_date(c->stmt, idx, y, m, d), idx);
}

int dl_ts(dl_ctx *c, unsigned idx, int y, int m, int d, int hh, int mi,
          int ss) {
    if (c->pg)
        return pg_field(c, idx, "%04d-%02d-%02d %02d:%02d:%02d", y, m, d, hh,
                        mi, ss);
    return bound(
        c, ffb_stmt_bind_timestamp(c->stmt, idx, y, m, d, hh, mi, ss, 0), idx);
}

static int run_batch(dl_ctx *c) {
    if (c->in_batch == 0)
        return 0;
    int rc = ffb_batch_execute(c->batch, c->tx);
    if (rc == FFB_E_SERVER) {
        for (size_t i = 0; i < ffb_batch_row_count(c->batch); i++) {
            if (ffb_batch_row_status(c->batch, i) != -1)
                continue;
            const ffb_error *e = ffb_batch_row_error(c->batch, i);
            fprintf(stderr, "%s: %s row %llu: %s\n", g_prog, c->table,
                    (unsigned long long)(c->table_rows - c->in_batch + i + 1),
                    e ? ffb_error_message(e) : "failed (no detail)");
            return -1;
        }
    }
    if (rc != 0)
        return fail(c, c->table);
    if (ffb_batch_row_count(c->batch) != c->in_batch) {
        fprintf(stderr, "%s: %s: %zu of %zu rows executed\n", g_prog, c->table,
                ffb_batch_row_count(c->batch), c->in_batch);
        return -1;
    }
    c->done_rows += c->in_batch;
    c->in_batch = 0;
    progress(c, 0);
    return 0;
}

int dl_row(dl_ctx *c) {
    if (c->pg) {
        for (unsigned i = 0; i < c->pgn; i++)
            fprintf(c->pg, "%s%s", i ? "\t" : "", c->pgv[i]);
        fputc('\n', c->pg);
        c->pgn = 0;
        c->table_rows++;
        c->done_rows++;
        return 0;
    }
    if (ffb_batch_add(c->batch) != 0)
        return fail(c, c->table);
    c->in_batch++;
    c->table_rows++;
    return c->in_batch == DL_BATCH_ROWS ? run_batch(c) : 0;
}

int dl_table_end(dl_ctx *c) {
    if (c->pg) {
        fprintf(c->pg, "\\.\n\n");
        if (c->table_rows != c->table_total) {
            fprintf(stderr, "%s: %s: %llu rows generated, %llu expected\n",
                    g_prog, c->table, (unsigned long long)c->table_rows,
                    (unsigned long long)c->table_total);
            return -1;
        }
        return 0;
    }
    if (run_batch(c) != 0)
        return -1;
    ffb_batch_free(c->batch);
    c->batch = NULL;
    ffb_stmt_free(c->stmt);
    c->stmt = NULL;
    int rc = ffb_tx_commit(c->tx);
    ffb_tx_free(c->tx);
    c->tx = NULL;
    if (rc != 0)
        return fail(c, "commit");
    /* The rows the table holds now, read back. */
    char sql[128];
    int64_t n = -1;
    snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", c->table);
    if (query_ints(c, sql, &n, 1, 0) != 1)
        return -1;
    if ((uint64_t)n != c->table_total || c->table_rows != c->table_total) {
        fprintf(stderr,
                "%s: %s holds %lld rows, %llu generated, %llu "
                "expected\n",
                g_prog, c->table, (long long)n,
                (unsigned long long)c->table_rows,
                (unsigned long long)c->table_total);
        return -1;
    }
    if (!c->tty && !c->o.quiet)
        printf("  %-14s %8llu rows\n", c->table,
               (unsigned long long)c->table_total);
    return 0;
}

int dl_finish(dl_ctx *c) {
    if (c->done_rows != c->total_rows) {
        fprintf(stderr, "%s: %llu rows loaded, %llu expected\n", g_prog,
                (unsigned long long)c->done_rows,
                (unsigned long long)c->total_rows);
        return -1;
    }
    double secs = (double)(ffb_now_ms() - c->t0_ms) / 1000.0;
    char sql[256];
    snprintf(sql, sizeof(sql),
             "UPDATE dataset_info SET complete = 1, load_seconds = %.3f "
             "WHERE name = '%s'",
             secs, c->dataset);
    if (exec1(c, sql) != 0 ||
        exec1(c, "GRANT SELECT ON dataset_info TO PUBLIC") != 0)
        return -1;
    if (c->tty) {
        c->table = "done";
        progress(c, 1);
    }
    printf("%s: %llu rows (scale %d) loaded into %s in %.2f s "
           "(%.0f rows/s, keys and statistics included)\n",
           c->dataset, (unsigned long long)c->total_rows, c->o.scale, c->o.dsn,
           secs, secs > 0 ? (double)c->total_rows / secs : 0.0);
    if (ffb_conn_close(c->conn) != 0)
        return fail(c, "detach");
    return 0;
}

static int pg_run(dl_ctx *c, const char *dataset, uint64_t total_rows,
                  int (*load)(dl_ctx *c, void *arg), void *arg,
                  const char *pg_pre, const char *pg_post) {
    if (!pg_pre) {
        fprintf(stderr, "%s: %s has no PostgreSQL twin (--pg-copy)\n", g_prog,
                dataset);
        return 2;
    }
    int to_stdout = strcmp(c->o.pg_copy, "-") == 0;
    c->pg = to_stdout ? stdout : fopen(c->o.pg_copy, "w");
    if (!c->pg) {
        fprintf(stderr, "%s: %s: cannot write\n", g_prog, c->o.pg_copy);
        return 1;
    }
    c->total_rows = total_rows;
    fputs(pg_pre, c->pg);
    int rc = load(c, arg);
    if (rc == 0 && c->done_rows != total_rows) {
        fprintf(stderr, "%s: %llu rows generated, %llu expected\n", g_prog,
                (unsigned long long)c->done_rows,
                (unsigned long long)total_rows);
        rc = -1;
    }
    if (rc == 0)
        fputs(pg_post, c->pg);
    if (fflush(c->pg) != 0 || ferror(c->pg))
        rc = -1;
    if (!to_stdout && fclose(c->pg) != 0)
        rc = -1;
    c->pg = NULL;
    if (rc == 0 && !c->o.quiet)
        fprintf(stderr, "%s: %llu rows (scale %d) written as COPY text to %s\n",
                dataset, (unsigned long long)total_rows, c->o.scale,
                c->o.pg_copy);
    return rc == 0 ? 0 : 1;
}

int dl_run(dl_ctx *c, const char *dataset, int version, uint64_t total_rows,
           const dl_sql *pre, int (*load)(dl_ctx *c, void *arg), void *arg,
           const dl_sql *post, const char *pg_pre, const char *pg_post) {
    if (c->o.pg_copy)
        return pg_run(c, dataset, total_rows, load, arg, pg_pre, pg_post);
    int rc = 1;
    int r = dl_open(c, dataset, version, total_rows);
    if (r == 1) {
        rc = 0;
    } else if (r == 0 && c->o.check_only) {
        printf("%s: %s holds no complete load\n", dataset, c->o.dsn);
        rc = 3;
    } else if (r == 0 && dl_ddl(c, pre) == 0 && load(c, arg) == 0 &&
               dl_ddl(c, post) == 0 && dl_finish(c) == 0) {
        rc = 0;
    }
    dl_close(c);
    return rc;
}

void dl_close(dl_ctx *c) {
    ffb_batch_free(c->batch);
    ffb_stmt_free(c->stmt);
    ffb_tx_free(c->tx);
    ffb_conn_free(c->conn);
    memset(c, 0, sizeof(*c));
}

/* ---- generated values --------------------------------------------------- */

void dl_day_to_date(int y0, int n, int *y, int *m, int *d) {
    static const int mdays[12] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
    int year = y0;
    for (;;) {
        int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        int len = 365 + leap;
        if (n < len) {
            int mon = 0;
            for (;;) {
                int ml = mdays[mon] + (mon == 1 && leap);
                if (n < ml)
                    break;
                n -= ml;
                mon++;
            }
            *y = year;
            *m = mon + 1;
            *d = n + 1;
            return;
        }
        n -= len;
        year++;
    }
}

void dl_names(int salt, int n, char (*out)[16]) {
    /* 20 heads of 3 letters and 20 tails of 2..9: head i%20 with tail
       (i/20 + 7*salt) % 20 gives up to 400 distinct words of 5..12. */
    static const char *const head[20] = {
        "Bar", "Cel", "Dor", "Elm", "Fal", "Gor", "Hal", "Isk", "Jor", "Kel",
        "Lor", "Mar", "Nel", "Orv", "Pel", "Qua", "Ras", "Sol", "Tam", "Vel"};
    static const char *const tail[20] = {
        "an",   "ina",   "ton",    "ardo",  "elle",   "mund",   "wick",
        "ossa", "ander", "ington", "ette",  "ovich",  "sen",    "quist",
        "aro",  "haven", "ley",    "brook", "enberg", "amstead"};
    for (int i = 0; i < n && i < 400; i++)
        snprintf(out[i], 16, "%s%s", head[i % 20],
                 tail[(i / 20 + 7 * salt) % 20]);
}

/* 50 title words; none is a substring of another, so an ilike search for
   one finds exactly the titles holding it. */
const char *const dl_vocab[50] = {
    "alpha",  "bravo",   "charlie", "delta",   "echo",    "foxtrot", "golf",
    "hotel",  "india",   "juliett", "kilo",    "lima",    "mike",    "november",
    "oscar",  "papa",    "quebec",  "romeo",   "sierra",  "tango",   "uniform",
    "victor", "whiskey", "xray",    "yankee",  "zulu",    "amber",   "basalt",
    "cobalt", "dune",    "ember",   "fjord",   "glacier", "harbor",  "iris",
    "jasper", "kestrel", "lagoon",  "meadow",  "nebula",  "orchid",  "prairie",
    "quartz", "raven",   "saffron", "thistle", "umber",   "velvet",  "willow",
    "zephyr"};

void dl_words(dl_prng *p, int nw, char *out, size_t size) {
    int used[8];
    size_t len = 0;
    out[0] = 0;
    for (int w = 0; w < nw && w < 8; w++) {
        int k;
        for (;;) {
            k = (int)dl_range(p, 0, 49);
            int dup = 0;
            for (int j = 0; j < w; j++)
                dup |= used[j] == k;
            if (!dup)
                break;
        }
        used[w] = k;
        int n = snprintf(out + len, size - len, "%s%c%s", w ? " " : "",
                         dl_vocab[k][0] - 'a' + 'A', dl_vocab[k] + 1);
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
    }
}
