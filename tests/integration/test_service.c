/*
 * The Services API against real Firebird 3.0 and 4.0 servers: server
 * information, statistics (gstat -h), firebird.log, validation, sweep,
 * properties read back through database info, a backup of a table with
 * blobs streamed to the client and restored from the client into a new
 * database (row count and checksum compared), data mode after a streamed
 * backup, and cancel (FB4 stops a trace session; FB3 refuses clearly).
 * Round trips are asserted exactly, the reason beside each number.
 *
 * Runs against fb3 (wire crypt required), fb3e (zlib), fb4, fb4e (zlib).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/extio.h"
#include "tests/support/it.h"

typedef it_target target;

#define ROWS 300
#define GDS_SYS_REQUEST 335544373u

/* The database path of the target's dsn ("host/port:path"). */
static const char *db_path(const target *t) {
    const char *p = strchr(t->dsn, ':');
    return p ? p + 1 : t->dsn;
}

static ffb_conn *new_conn(const target *t, const char *dsn) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn ? dsn : t->dsn;
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.compress = t->compress;
    o.io_timeout_ms = 120000;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    return c;
}

/* A service attachment: 3 round trips with wire encryption (op_connect;
   op_cont_auth + op_crypt; op_service_attach), as a database connect. */
static ffb_conn *svc_open(const target *t) {
    ffb_conn *c = new_conn(t, NULL);
    OK(c, ffb_svc_connect(c));
    assert_int_equal(it_rts(c), 3);
    return c;
}

static void close_conn(ffb_conn *c) {
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

static int64_t q1(ffb_conn *c, const char *sql, int col) {
    ffb_tx *tx;
    ffb_stmt *s;
    int64_t n = -1;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    OK(c, ffb_stmt_get_int64(s, (unsigned)col, &n));
    ffb_stmt_free(s);
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    return n;
}

/* A 4-byte database info item (op_info_database). */
static int64_t db_info_int(ffb_conn *c, uint8_t item) {
    uint8_t buf[64];
    size_t n = 0;
    OK(c, ffb_conn_info_raw(c, &item, 1, buf, sizeof(buf), &n));
    /* item, uint16 length (1 or 4), little-endian value. */
    assert_true(n >= 4 && buf[0] == item && buf[2] == 0);
    size_t len = buf[1];
    assert_true((len == 1 || len == 4) && n >= 3 + len);
    int64_t v = 0;
    for (size_t i = 0; i < len; i++)
        v |= (int64_t)buf[3 + i] << (8 * i);
    return v;
}

/* Lines collected from an action. */
typedef struct lines {
    size_t n;
    char text[16384];
    size_t len;
    ffb_conn *conn; /* for the cancel tests */
    int cancel_rc;
    int cancel_at;  /* call ffb_svc_cancel at this line (1-based) */
    int stop_at;    /* return non-zero at this line */
} lines;

static int on_line(const char *line, size_t len, void *data) {
    lines *l = data;
    l->n++;
    if (l->len + len + 1 < sizeof(l->text)) {
        memcpy(l->text + l->len, line, len);
        l->len += len;
        l->text[l->len++] = '\n';
        l->text[l->len] = '\0';
    }
    if (l->cancel_at && (int)l->n == l->cancel_at)
        l->cancel_rc = ffb_svc_cancel(l->conn);
    return l->stop_at && (int)l->n == l->stop_at;
}

static void test_server_info(void **state) {
    target *t = *state;
    ffb_conn *c = svc_open(t);
    ffb_svc_info si;
    OK(c, ffb_svc_server_info(c, &si, sizeof(si)));
    assert_int_equal(it_rts(c), 4); /* one op_service_info */
    assert_int_equal(si.version, 2);
    assert_non_null(strstr(si.server_version,
                           t->version == 3 ? "Firebird 3.0" : "Firebird 4.0"));
    assert_non_null(strstr(si.implementation, "Firebird/"));
    assert_true(si.capabilities >= 0);
    assert_true(si.env[0] != '\0');
    assert_true(si.env_lock[0] != '\0');
    assert_true(si.env_msg[0] != '\0');
    assert_true(si.user_dbpath[0] != '\0');
    assert_true(si.attachments >= 0 && si.databases >= 0);
    /* A database connection is not a service attachment. */
    ffb_conn *d = new_conn(t, NULL);
    OK(d, ffb_conn_connect(d));
    assert_int_equal(ffb_svc_server_info(d, &si, sizeof(si)), FFB_E_STATE);
    close_conn(d);
    close_conn(c);
}

static void test_stats_header(void **state) {
    target *t = *state;
    ffb_conn *c = svc_open(t);
    lines l = {0};
    OK(c, ffb_svc_db_stats(c, db_path(t), FFB_SVC_STATS_HEADER, on_line, &l));
    assert_true(l.n > 10);
    assert_non_null(strstr(l.text, "Database header page information"));
    ffb_svc_stats st;
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    /* op_service_start + the first query in one write, then one round
       trip per query: the server answers when its 1 KiB output buffer is
       full or the service has ended (src/jrd/svc.cpp Service::get), so
       the -h text (about 1.5 KiB) takes 2 or 3 queries. */
    assert_int_equal(it_rts(c), 3 + st.queries);
    assert_true(st.queries >= 1 && st.queries <= 4);
    assert_int_equal(st.lines, l.n);
    /* A missing database: the start fails, one query drains it (2). */
    char bad[600];
    snprintf(bad, sizeof(bad), "%s.missing", db_path(t));
    uint64_t before = it_rts(c);
    assert_int_equal(ffb_svc_db_stats(c, bad, FFB_SVC_STATS_HEADER, NULL, NULL),
                     FFB_E_SERVER);
    /* The start (or, racily on FB3, the first query) fails; the drain
       asks until the failed service has ended: start + first query in
       one write, then one round trip per query. */
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(it_rts(c) - before, st.queries);
    assert_true(st.queries >= 1 && st.queries <= 3);
    /* The attachment is usable again. */
    memset(&l, 0, sizeof(l));
    OK(c, ffb_svc_db_stats(c, db_path(t), FFB_SVC_STATS_HEADER, on_line, &l));
    assert_true(l.n > 10);
    close_conn(c);
}

static void test_fb_log(void **state) {
    target *t = *state;
    ffb_conn *c = svc_open(t);
    lines l = {0};
    int rc = ffb_svc_fb_log(c, on_line, &l);
    if (rc == FFB_E_SERVER &&
        ffb_error_gds(ffb_conn_error(c)) == GDS_SYS_REQUEST) {
        /* The FB4 installation may have no log file yet: the server says
           "fopen" failed (reference 03, C.6.3) - a clean error. */
        print_message("%s: no firebird.log: %s\n", t->name,
                      ffb_error_message(ffb_conn_error(c)));
    } else {
        OK(c, rc);
        assert_true(l.n > 0);
        ffb_svc_stats st;
        OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
        /* 1 start + the queries, each one round trip. */
        assert_int_equal(it_rts(c), 3 + st.queries);
    }
    close_conn(c);
}

/* The table of known rows (with blobs) in the shared test database. */
static void fill_table(ffb_conn *c, const target *t) {
    it_exec(c,
            "create table %s (id integer not null primary key, name "
            "varchar(40), b blob sub_type text)",
            t->table);
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "execute block as declare i int = 0; begin while (i < %d) do "
             "begin insert into %s (id, name, b) values (:i, 'row ' || :i, "
             "rpad('', 1000 + mod(:i, 97) * 30, 'blob' || :i)); i = i + 1; "
             "end end",
             ROWS, t->table);
    ffb_tx *tx;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_conn_execute_immediate(c, tx, sql, (size_t)-1));
    OK(c, ffb_tx_commit(tx));
    ffb_tx_free(tx);
}

static void checksum(ffb_conn *c, const target *t, int64_t out[3]) {
    char sql[512];
    snprintf(sql, sizeof(sql),
             "select count(*), sum(char_length(b)) + sum(id), "
             "sum(mod(hash(b), 1000003) + mod(hash(name), 1009)) from %s",
             t->table);
    for (int i = 0; i < 3; i++)
        out[i] = q1(c, sql, i);
}

typedef struct stream {
    uint8_t *p;
    size_t len, cap, pos;
    size_t chunks;
} stream;

static int on_data(const uint8_t *p, size_t len, void *data) {
    stream *s = data;
    if (s->len + len > s->cap) {
        s->cap = (s->len + len) * 2;
        s->p = realloc(s->p, s->cap);
        assert_non_null(s->p);
    }
    memcpy(s->p + s->len, p, len);
    s->len += len;
    s->chunks++;
    return 0;
}

static int on_input(uint8_t *buf, size_t size, size_t *got, void *data) {
    stream *s = data;
    size_t n = s->len - s->pos < size ? s->len - s->pos : size;
    memcpy(buf, s->p + s->pos, n);
    s->pos += n;
    *got = n;
    return 0;
}

/* What test_backup_restore made, dropped by the teardown if the test
   failed half-way. */
static char made_dsn[900];
static char made_src[900];
static ffb_conn *made_conns[2]; /* the test's database connections */

static void drop_db(const target *t, char *dsn) {
    if (!dsn[0])
        return;
    ffb_conn *r = new_conn(t, dsn);
    if (ffb_conn_connect(r) == 0)
        ffb_conn_drop_database(r);
    ffb_conn_free(r);
    dsn[0] = '\0';
}

static int teardown(void **state) {
    target *t = *state;
    for (int i = 0; i < 2; i++) {
        ffb_conn_free(made_conns[i]); /* a failure left them attached */
        made_conns[i] = NULL;
    }
    drop_db(t, made_dsn);
    drop_db(t, made_src);
    return 0;
}

typedef struct restore_io {
    stream *s;
    lines *l;
} restore_io;

static int r_input(uint8_t *buf, size_t size, size_t *got, void *data) {
    return on_input(buf, size, got, ((restore_io *)data)->s);
}

static int r_line(const char *line, size_t len, void *data) {
    return on_line(line, len, ((restore_io *)data)->l);
}

static void test_backup_restore(void **state) {
    target *t = *state;
    /* Source and target are databases of this test, in the server's
       directory for them (a backup of the shared database would race
       with the DDL of other suites: "table id N does not exist"). */
    const char *dir = NULL;
    char env[64];
    snprintf(env, sizeof(env), "FFB_TEST_%s_DBDIR", t->name);
    dir = getenv(env);
    assert_non_null(dir);
    size_t host_len = (size_t)(strchr(t->dsn, ':') - t->dsn);
    char srcdb[700], newdb[700], newdsn[900];
    snprintf(srcdb, sizeof(srcdb), "%s/svcsrc_%s_%ld.fdb", dir, t->name,
             (long)getpid());
    snprintf(made_src, sizeof(made_src), "%.*s:%s", (int)host_len, t->dsn,
             srcdb);
    snprintf(newdb, sizeof(newdb), "%s/svc_%s_%ld.fdb", dir, t->name,
             (long)getpid());
    snprintf(newdsn, sizeof(newdsn), "%.*s:%s", (int)host_len, t->dsn, newdb);
    ffb_conn *d = new_conn(t, made_src);
    made_conns[0] = d;
    ffb_create_options co = FFB_CREATE_OPTIONS_INIT;
    OK(d, ffb_conn_create_database(d, &co));
    fill_table(d, t);
    int64_t want[3];
    checksum(d, t, want);
    assert_int_equal(want[0], ROWS);

    /* Backup streamed to the client. */
    ffb_conn *c = svc_open(t);
    stream s = {0};
    OK(c, ffb_svc_backup(c, srcdb, 0, on_data, &s));
    ffb_svc_stats st;
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    print_message("%s: backup %zu bytes, %llu queries, %llu round trips\n",
                  t->name, s.len, (unsigned long long)st.queries,
                  (unsigned long long)(it_rts(c) - 3));
    /* The start and the first query share a write; then four queries
       stay in flight, and the follow-ups of a write's answers leave
       together: 1 + ceil((queries - 1) / 4). (The servers answer about
       2 KiB per query: their output buffer is 1 KiB, C.6.5.) */
    assert_int_equal(it_rts(c) - 3, 1 + (st.queries - 1 + 3) / 4);
    assert_int_equal(st.bytes_out, s.len);
    assert_true(s.len > (size_t)ROWS * 1000); /* the blobs are in it */
    assert_true(s.p[0] == 0x00 && s.p[1] == 0x02); /* gbak header */
    /* Data mode (C.6.5): text actions are refused before anything is
       sent; a sweep is not text and still works. */
    uint64_t before = it_rts(c);
    assert_int_equal(
        ffb_svc_db_stats(c, srcdb, FFB_SVC_STATS_HEADER, NULL, NULL),
        FFB_E_STATE);
    assert_non_null(strstr(ffb_error_message(ffb_conn_error(c)), "data mode"));
    assert_int_equal(it_rts(c), before);
    close_conn(c);

    /* Restore from the client into a new database. */
    snprintf(made_dsn, sizeof(made_dsn), "%s", newdsn);
    c = svc_open(t);
    lines l = {0};
    restore_io rio = {&s, &l};
    OK(c, ffb_svc_restore(c, newdb, 0, r_input, r_line, &rio));
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(st.bytes_in, s.len);
    assert_int_equal(it_rts(c), 3 + st.queries);
    assert_true(l.n > 5); /* verbose gbak lines */
    assert_non_null(strstr(l.text, "gbak"));
    close_conn(c);

    ffb_conn *r = new_conn(t, newdsn);
    made_conns[1] = r;
    OK(r, ffb_conn_connect(r));
    int64_t got[3];
    checksum(r, t, got);
    assert_int_equal(got[0], want[0]);
    assert_int_equal(got[1], want[1]);
    assert_int_equal(got[2], want[2]);
    OK(r, ffb_conn_close(r));

    /* Properties round trip on the new database: the sweep interval read
       back through database info (isc_info_sweep_interval 31). */
    c = svc_open(t);
    ffb_svc_properties pr;
    ffb_svc_properties_init(&pr);
    pr.sweep_interval = 12345;
    OK(c, ffb_svc_set_properties(c, newdb, &pr));
    /* Start + first query in one write; a second query when the first
       answer came before the service had ended. */
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(it_rts(c), 3 + st.queries);
    assert_true(st.queries == 1 || st.queries == 2);
    /* gfix takes one switch group per action: write mode on its own
       (with the sweep interval: gfix_incmp_sw). */
    ffb_svc_properties_init(&pr);
    pr.forced_writes = 0;
    pr.sweep_interval = 1;
    assert_int_equal(ffb_svc_set_properties(c, newdb, &pr), FFB_E_SERVER);
    expect_msg(c, "gfix_incmp_sw");
    ffb_svc_properties_init(&pr);
    pr.forced_writes = 0;
    uint64_t rts0 = it_rts(c);
    OK(c, ffb_svc_set_properties(c, newdb, &pr));
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(it_rts(c) - rts0, st.queries);
    ffb_svc_properties_init(&pr);
    assert_int_equal(ffb_svc_set_properties(c, newdb, &pr), FFB_E_INVAL);
    /* Sweep: 1 (the query waits until the sweep has ended). */
    rts0 = it_rts(c);
    OK(c, ffb_svc_sweep(c, newdb));
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(it_rts(c) - rts0, st.queries);
    assert_true(st.queries == 1 || st.queries == 2);
    /* Online validation (FB3+): its report. */
    memset(&l, 0, sizeof(l));
    rts0 = it_rts(c);
    OK(c, ffb_svc_validate(c, newdb, on_line, &l));
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(it_rts(c) - rts0, st.queries); /* start rides along */
    assert_non_null(strstr(l.text, "Validation started"));
    assert_non_null(strstr(l.text, "Validation finished"));
    /* Offline-style validation through repair: no output, no error. */
    OK(c, ffb_svc_repair(c, newdb,
                         FFB_SVC_REPAIR_VALIDATE | FFB_SVC_REPAIR_FULL, NULL,
                         NULL));
    close_conn(c);

    OK(r, ffb_conn_connect(r));
    assert_int_equal(db_info_int(r, 31), 12345); /* isc_info_sweep_interval */
    assert_int_equal(db_info_int(r, 52), 0);     /* isc_info_forced_writes */
    assert_int_equal(db_info_int(r, 63), 0);     /* isc_info_db_read_only */
    OK(r, ffb_conn_close(r));

    /* Read-only and back; full shutdown (forced at once) and online. */
    c = svc_open(t);
    ffb_svc_properties_init(&pr);
    pr.read_only = 1;
    OK(c, ffb_svc_set_properties(c, newdb, &pr));
    OK(r, ffb_conn_connect(r));
    assert_int_equal(db_info_int(r, 63), 1);
    OK(r, ffb_conn_close(r));
    pr.read_only = 0;
    OK(c, ffb_svc_set_properties(c, newdb, &pr));
    ffb_svc_properties_init(&pr);
    pr.shutdown = FFB_SVC_MODE_FULL;
    pr.shutdown_timeout = 0;
    OK(c, ffb_svc_set_properties(c, newdb, &pr));
    assert_int_equal(ffb_conn_connect(r), FFB_E_SERVER); /* shut down */
    expect_msg(r, "shutdown");
    ffb_svc_properties_init(&pr);
    pr.online = FFB_SVC_MODE_NORMAL;
    OK(c, ffb_svc_set_properties(c, newdb, &pr));
    close_conn(c);
    OK(r, ffb_conn_connect(r));
    assert_int_equal(db_info_int(r, 63), 0);
    OK(r, ffb_conn_drop_database(r));
    ffb_conn_free(r);
    made_conns[1] = NULL;
    made_dsn[0] = '\0';

    OK(d, ffb_conn_drop_database(d));
    ffb_conn_free(d);
    made_conns[0] = NULL;
    made_src[0] = '\0';
    free(s.p);
}

static void test_one_at_a_time(void **state) {
    target *t = *state;
    ffb_conn *c = svc_open(t);
    lines l = {0};
    /* A queued action on a blocking connection is refused while another
       runs: driven by the queue twin, the second is refused at once. */
    static const uint8_t log[] = {12}; /* isc_action_svc_get_fb_log */
    ffb_svc_io io = FFB_SVC_IO_INIT;
    io.on_line = on_line;
    io.data = &l;
    OK(c, ffb_svc_queue_run(c, log, sizeof(log), &io, NULL, NULL));
    uint64_t before = it_rts(c);
    assert_int_equal(ffb_svc_queue_run(c, log, sizeof(log), &io, NULL, NULL),
                     FFB_E_STATE);
    assert_non_null(
        strstr(ffb_error_message(ffb_conn_error(c)), "one at a time"));
    /* The first one runs to its end in the next blocking call. */
    const ffb_result *res;
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_SVC_ACTION);
    assert_true(it_rts(c) > before);
    /* The queue twins of the built-ins: statistics and server info
       queued together; the info waits behind the action (one at a time)
       and is refused, the statistics arrive as a result. */
    memset(&l, 0, sizeof(l));
    OK(c, ffb_svc_queue_db_stats(c, db_path(t), FFB_SVC_STATS_HEADER, on_line,
                                 &l, NULL, NULL));
    ffb_svc_info si;
    assert_int_equal(ffb_svc_queue_server_info(c, &si, sizeof(si), NULL, NULL),
                     FFB_E_STATE);
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_SVC_ACTION);
    assert_int_equal(ffb_result_status(res), 0);
    assert_non_null(strstr(l.text, "Database header page information"));
    OK(c, ffb_svc_queue_server_info(c, &si, sizeof(si), NULL, NULL));
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_SVC_INFO);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(si.version, 2);
    /* A backup queued: its stream arrives while the result is awaited
       (metadata only, isc_spb_bkp_metadata_only: the shared database's
       data changes under other suites). */
    stream s = {0};
    OK(c, ffb_svc_queue_backup(c, db_path(t), 0x04, on_data, &s, NULL, NULL));
    assert_int_equal(ffb_conn_next_result(c, &res), 1);
    assert_int_equal(ffb_result_status(res), 0);
    assert_true(s.len > 0 && s.p[0] == 0x00 && s.p[1] == 0x02);
    free(s.p);
    close_conn(c);
}

static void test_cancel(void **state) {
    target *t = *state;
    ffb_conn *c = svc_open(t);
    uint64_t before = it_rts(c);
    assert_int_equal(ffb_svc_cancel(c), FFB_E_STATE); /* nothing runs */
    assert_int_equal(it_rts(c), before);
    if (t->version == 3) {
        /* FB3 ignores op_cancel on a service (C.6.7): refused clearly,
           from a callback of a running action, which ends normally. */
        lines l = {0};
        l.conn = c;
        l.cancel_at = 1;
        OK(c, ffb_svc_db_stats(c, db_path(t), FFB_SVC_STATS_HEADER, on_line,
                               &l));
        assert_int_equal(l.cancel_rc, FFB_E_UNSUPPORTED);
        /* A callback asking to stop: the action runs to its end, output
           dropped, and says why. */
        lines m = {0};
        m.stop_at = 1;
        assert_int_equal(ffb_svc_db_stats(c, db_path(t), FFB_SVC_STATS_HEADER,
                                          on_line, &m),
                         FFB_E_UNSUPPORTED);
        assert_int_equal(m.n, 1);
        expect_msg(c, "ignores op_cancel");
        close_conn(c);
        return;
    }
    /* FB4: a trace session runs until stopped; cancel it at its first
       line ("Trace session ID n started"). */
    char cfg[] = "database\n{\n\tenabled = true\n}\n";
    uint8_t spb[256];
    size_t n = 0;
    spb[n++] = 22; /* isc_action_svc_trace_start */
    spb[n++] = 2;  /* isc_spb_trc_name */
    spb[n++] = 7;
    spb[n++] = 0;
    memcpy(spb + n, "ffbtest", 7);
    n += 7;
    spb[n++] = 3; /* isc_spb_trc_cfg */
    spb[n++] = (uint8_t)strlen(cfg);
    spb[n++] = 0;
    memcpy(spb + n, cfg, strlen(cfg));
    n += strlen(cfg);
    lines l = {0};
    l.conn = c;
    l.cancel_at = 1;
    ffb_svc_io io = FFB_SVC_IO_INIT;
    io.on_line = on_line;
    io.data = &l;
    io.wait_s = 1;
    assert_int_equal(ffb_svc_run(c, spb, n, &io), FFB_E_CANCELLED);
    assert_int_equal(l.cancel_rc, 0);
    assert_non_null(strstr(l.text, "Trace session ID"));
    /* Firebird 4.0.5 closes the service attachment once the cancelled
       service has ended, reporting isc_att_shutdown with the cancel: the
       next request sees the end of the stream, or the shutdown. */
    ffb_svc_info si;
    int rc = ffb_svc_server_info(c, &si, sizeof(si));
    assert_true(rc == 0 || rc == FFB_E_CLOSED || rc == FFB_E_SHUTDOWN);
    ffb_conn_free(c);
    /* The trace session is gone: a new attachment lists none named so. */
    c = svc_open(t);
    static const uint8_t list[] = {26}; /* isc_action_svc_trace_list */
    memset(&l, 0, sizeof(l));
    io.wait_s = 0;
    OK(c, ffb_svc_run(c, list, sizeof(list), &io));
    assert_null(strstr(l.text, "ffbtest"));
    close_conn(c);
}

static void on_svc_connect(ffb_conn *c, const ffb_result *res, void *data) {
    (void)c;
    int *st = data;
    *st = ffb_result_status(res) == 0 ? 1 : -1;
}

/* The application's own I/O: connect, server info and statistics through
   the queue twins and the byte pump, with the blocking round trips. */
static void test_external_io(void **state) {
    target *t = *state;
    ffb_conn_options o;
    it_options(t, &o);
    o.io = FFB_IO_EXTERNAL;
    o.io_timeout_ms = 60000;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    extio x;
    assert_int_equal(extio_open(&x, c, t->dsn), 0);
    int connected = 0;
    OK(c, ffb_svc_queue_connect(c, on_svc_connect, &connected));
    while (connected == 0)
        assert_true(extio_pump(&x, 30000) >= 0);
    assert_int_equal(connected, 1);
    assert_int_equal(it_rts(c), 3); /* as ffb_svc_connect */
    /* The blocking calls refuse external I/O. */
    ffb_svc_info si;
    assert_int_equal(ffb_svc_server_info(c, &si, sizeof(si)), FFB_E_STATE);
    const ffb_result *res;
    OK(c, ffb_svc_queue_server_info(c, &si, sizeof(si), NULL, NULL));
    assert_int_equal(extio_next(&x, &res), 1);
    assert_int_equal(ffb_result_status(res), 0);
    assert_int_equal(it_rts(c), 4);
    assert_int_equal(si.version, 2);
    lines l = {0};
    OK(c, ffb_svc_queue_db_stats(c, db_path(t), FFB_SVC_STATS_HEADER, on_line,
                                 &l, NULL, NULL));
    assert_int_equal(extio_next(&x, &res), 1);
    assert_int_equal(ffb_result_op(res), FFB_OP_SVC_ACTION);
    assert_int_equal(ffb_result_status(res), 0);
    assert_non_null(strstr(l.text, "Database header page information"));
    ffb_svc_stats st;
    OK(c, ffb_svc_last_stats(c, &st, sizeof(st)));
    assert_int_equal(it_rts(c), 4 + st.queries);
    extio_close(&x);
    ffb_conn_free(c);
}

int main(void) {
    static const char *const names[] = {"FB3", "FB3E", "FB4", "FB4E"};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_info),
        cmocka_unit_test(test_stats_header),
        cmocka_unit_test(test_fb_log),
        cmocka_unit_test(test_backup_restore),
        cmocka_unit_test(test_one_at_a_time),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_external_io),
    };
    return it_main("SVC", names, sizeof(names) / sizeof(names[0]), tests,
                   sizeof(tests) / sizeof(tests[0]), NULL, teardown);
}
