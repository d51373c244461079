/*
 * The REST benchmarks' datasets (suite restbench): seed (bookstore, at
 * --scale 20) and chinook_gen (full size) into fresh databases on Firebird
 * 3.0 and 4.0, then the row counts and value rules of spec A16 read back,
 * the routines' answers, the roles and grants, idempotency (a second run
 * changes nothing, --force reloads the same content), the refusal of a
 * database the tool did not load, and the committed .sql files equal to
 * --print-schema. The databases are dropped at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/fastfb.h"
#include "tests/support/it.h"

#define SCALE 20

static char g_user[64] = "SYSDBA", g_password[128] = "masterkey";

/* host/port:DBDIR/ffbtest_restbench_<name>_<pid>_<what>.fdb */
static void db_dsn(const it_target *t, const char *what, char *out,
                   size_t size) {
    char var[64];
    snprintf(var, sizeof(var), "FFB_TEST_%s_DBDIR", t->name);
    const char *dir = getenv(var);
    if (!dir)
        fail_msg("%s is not set (servers.env)", var);
    const char *colon = strchr(t->dsn, ':');
    assert_non_null(colon);
    snprintf(out, size, "%.*s:%s/ffbtest_restbench_%s_%d_%s.fdb",
             (int)(colon - t->dsn), t->dsn, dir, t->name, (int)getpid(), what);
}

static void set_login(const it_target *t) {
    char var[64];
    snprintf(var, sizeof(var), "FFB_TEST_%s_USER", t->name);
    if (getenv(var))
        snprintf(g_user, sizeof(g_user), "%s", getenv(var));
    snprintf(var, sizeof(var), "FFB_TEST_%s_PASSWORD", t->name);
    if (getenv(var))
        snprintf(g_password, sizeof(g_password), "%s", getenv(var));
    /* The loaders read these (no password on their command line). */
    setenv("ISC_USER", g_user, 1);
    setenv("ISC_PASSWORD", g_password, 1);
}

/* Run `tool args` (-q added); its stdout goes to `out`; returns the exit
   status. */
static int run_tool(const char *tool, const char *args, char *out,
                    size_t size) {
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "'%s' -q %s", tool, args);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, size - 1, f);
    out[n] = 0;
    int st = pclose(f);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* Connections a failed check may leave open (freed by the teardown, so
   that it can drop the databases). */
static ffb_conn *g_conns[8];

static void track(ffb_conn *c) {
    for (size_t i = 0; i < 8; i++)
        if (!g_conns[i]) {
            g_conns[i] = c;
            return;
        }
    fail_msg("more than 8 connections open");
}

static void untrack(ffb_conn *c) {
    for (size_t i = 0; i < 8; i++)
        if (g_conns[i] == c)
            g_conns[i] = NULL;
}

static void detach(ffb_conn *c) {
    untrack(c);
    OK(c, ffb_conn_close(c));
    ffb_conn_free(c);
}

static ffb_conn *attach(const char *dsn) {
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn;
    o.user = g_user;
    o.password = g_password;
    o.io_timeout_ms = 120000;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    track(c);
    OK(c, ffb_conn_connect(c));
    return c;
}

/* Drop `dsn` if it exists (after a failed test). */
static int drop_if_there(void **state) {
    const it_target *t = *state;
    for (size_t i = 0; i < 8; i++) {
        ffb_conn_free(g_conns[i]);
        g_conns[i] = NULL;
    }
    static const char *const what[] = {"bookstore", "chinook", "foreign"};
    for (size_t i = 0; i < 3; i++) {
        char dsn[600];
        db_dsn(t, what[i], dsn, sizeof(dsn));
        ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
        o.dsn = dsn;
        o.user = g_user;
        o.password = g_password;
        ffb_conn *c = NULL;
        if (ffb_conn_new(&o, &c) == 0 && ffb_conn_connect(c) == 0)
            ffb_conn_drop_database(c);
        ffb_conn_free(c);
    }
    return 0;
}

static void drop(const char *dsn) {
    ffb_conn *c = attach(dsn);
    untrack(c);
    OK(c, ffb_conn_drop_database(c));
    ffb_conn_free(c);
}

/* The integers of the one row `sql` gives (NULL reads as -1). */
static void row_ints(ffb_conn *c, const char *sql, int64_t *out, unsigned n) {
    ffb_tx *tx;
    ffb_stmt *s;
    OK(c, ffb_tx_begin(c, NULL, &tx));
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    assert_int_equal(ffb_stmt_column_count(s), n);
    OK(c, ffb_stmt_execute(s, tx));
    int f = ffb_stmt_fetch(s);
    if (f != 1)
        fail_msg("%s: no row (%d)", sql, f);
    for (unsigned i = 0; i < n; i++) {
        if (ffb_stmt_is_null(s, i))
            out[i] = -1;
        else
            OK(c, ffb_stmt_get_int64(s, i, &out[i]));
    }
    ffb_stmt_free(s);
    OK(c, ffb_tx_rollback(tx));
    ffb_tx_free(tx);
}

static int64_t one(ffb_conn *c, const char *sql) {
    int64_t v;
    row_ints(c, sql, &v, 1);
    return v;
}

#define EXPECT(c, sql, want)                                                   \
    do {                                                                       \
        int64_t got_ = one((c), (sql));                                        \
        if (got_ != (int64_t)(want))                                           \
            fail_msg("%s:%d: %s gave %lld, expected %lld", __FILE__, __LINE__, \
                     (sql), (long long)got_, (long long)(want));               \
    } while (0)

/* The text of the one row, one column `sql` gives. */
static void row_text(ffb_conn *c, ffb_tx *tx, const char *sql, char *out,
                     size_t size) {
    ffb_stmt *s;
    OK(c, ffb_stmt_new(c, &s));
    OK(c, ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    OK(c, ffb_stmt_execute(s, tx));
    assert_int_equal(ffb_stmt_fetch(s), 1);
    const char *p;
    size_t len;
    OK(c, ffb_stmt_get_text_trimmed(s, 0, &p, &len));
    snprintf(out, size, "%.*s", (int)len, p);
    ffb_stmt_free(s);
}

/* A digest of every generated value of the bookstore (HASH is in 3.0). */
static const char bookstore_digest_sql[] =
    "SELECT "
    "(SELECT SUM(MOD(HASH(first_name || '|' || last_name || '|' || country "
    "|| '|' || CAST(born AS VARCHAR(12))), 1000003)) FROM authors), "
    "(SELECT SUM(MOD(HASH(title || '|' || isbn || '|' || language || '|' || "
    "CAST(created_at AS VARCHAR(30))), 1000003) + pages + published_year + "
    "CAST(price * 100 AS BIGINT) + author_id) FROM books), "
    "(SELECT SUM(book_id * tag_id) FROM book_tags), "
    "(SELECT SUM(MOD(HASH(email || name || CAST(created_at AS VARCHAR(30))), "
    "1000003)) FROM customers), "
    "(SELECT SUM(MOD(HASH(status || CAST(ordered_at AS VARCHAR(30))), "
    "1000003) + CAST(total * 100 AS BIGINT) + customer_id) FROM orders), "
    "(SELECT SUM(book_id * line_no + quantity + CAST(unit_price * 100 AS "
    "BIGINT)) FROM order_items) "
    "FROM RDB$DATABASE";

static void check_bookstore(const char *dsn, int64_t digest[6]) {
    ffb_conn *c = attach(dsn);
    const int authors = 2000 / SCALE, books = 100000 / SCALE,
              customers = 5000 / SCALE, orders = 50000 / SCALE;
    char sql[512];

    /* Row counts (spec A16.1, divided by --scale except tags). */
    EXPECT(c, "SELECT COUNT(*) FROM tags", 100);
    EXPECT(c, "SELECT COUNT(*) FROM authors", authors);
    EXPECT(c, "SELECT COUNT(*) FROM books", books);
    EXPECT(c, "SELECT COUNT(*) FROM book_tags", 2 * books);
    EXPECT(c, "SELECT COUNT(*) FROM customers", customers);
    EXPECT(c, "SELECT COUNT(*) FROM orders", orders);
    EXPECT(c, "SELECT COUNT(*) FROM order_items", 2 * orders);
    EXPECT(c,
           "SELECT complete FROM dataset_info WHERE name = 'bookstore' "
           "AND scale = 20",
           1);

    /* Value rules. */
    EXPECT(c,
           "SELECT COUNT(*) FROM tags WHERE name <> 'tag' || "
           "LPAD(id, 3, '0')",
           0);
    EXPECT(c, "SELECT COUNT(*) FROM books WHERE author_id = 1", 50);
    EXPECT(c,
           "SELECT MIN(n) FROM (SELECT COUNT(*) n FROM books GROUP BY "
           "author_id)",
           50);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM books WHERE author_id <> 1 + MOD(id - 1, "
             "%d) OR isbn <> '978' || LPAD(id, 10, '0')",
             authors);
    EXPECT(c, sql, 0);
    EXPECT(c,
           "SELECT COUNT(*) FROM books WHERE published_year NOT BETWEEN "
           "1950 AND 2024 OR pages NOT BETWEEN 80 AND 900 OR price NOT "
           "BETWEEN 5 AND 80",
           0);
    /* Both ends of the year range are drawn at this size. */
    EXPECT(c, "SELECT MIN(published_year) FROM books", 1950);
    EXPECT(c, "SELECT MAX(published_year) FROM books", 2024);
    EXPECT(c,
           "SELECT COUNT(*) FROM authors WHERE born NOT BETWEEN "
           "DATE '1900-01-01' AND DATE '1995-12-31' OR CHAR_LENGTH("
           "first_name) NOT BETWEEN 5 AND 12 OR CHAR_LENGTH(last_name) NOT "
           "BETWEEN 5 AND 12",
           0);
    /* 3..6 words: 2..5 spaces. */
    EXPECT(c,
           "SELECT COUNT(*) FROM books WHERE CHAR_LENGTH(title) - "
           "CHAR_LENGTH(REPLACE(title, ' ', '')) NOT BETWEEN 2 AND 5",
           0);
    /* A word is in about 6.9% of titles (5,000 books: 4%..10%). */
    int64_t alpha = one(c, "SELECT COUNT(*) FROM books WHERE title "
                           "CONTAINING 'alpha'");
    int64_t zephyr = one(c, "SELECT COUNT(*) FROM books WHERE title "
                            "CONTAINING 'zephyr'");
    assert_in_range(alpha, books * 4 / 100, books * 10 / 100);
    assert_in_range(zephyr, books * 4 / 100, books * 10 / 100);
    /* Book i's tags: 1 + 7i mod 100 and 1 + (13i+5) mod 100. */
    EXPECT(c,
           "SELECT COUNT(*) FROM books b WHERE (SELECT COUNT(*) FROM "
           "book_tags t WHERE t.book_id = b.id AND t.tag_id IN "
           "(1 + MOD(b.id * 7, 100), 1 + MOD(b.id * 13 + 5, 100))) <> 2",
           0);
    EXPECT(c,
           "SELECT tag_id FROM book_tags WHERE book_id = 77 ORDER BY "
           "tag_id ROWS 1",
           1 + (77 * 13 + 5) % 100); /* 7 (the other: 1 + 539 mod 100 = 40) */
    /* Customers, orders, items. */
    EXPECT(c,
           "SELECT COUNT(*) FROM customers WHERE email <> 'c' || id || "
           "'@example.com'",
           0);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM orders WHERE customer_id <> 1 + MOD(id - "
             "1, %d) OR ordered_at < TIMESTAMP '2020-01-01 00:00:00' OR "
             "ordered_at >= TIMESTAMP '2026-01-01 00:00:00'",
             customers);
    EXPECT(c, sql, 0);
    EXPECT(c,
           "SELECT COUNT(*) FROM orders o WHERE total <> (SELECT "
           "SUM(quantity * unit_price) FROM order_items i WHERE "
           "i.order_id = o.id)",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM order_items i JOIN books b ON b.id = "
           "i.book_id WHERE i.unit_price <> b.price OR i.quantity NOT "
           "BETWEEN 1 AND 3 OR i.line_no NOT IN (1, 2)",
           0);

    /* Computed column, functions, the context view. */
    EXPECT(c,
           "SELECT COUNT(*) FROM authors WHERE full_name IS DISTINCT "
           "FROM first_name || ' ' || last_name",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$RELATION_FIELDS rf JOIN RDB$FIELDS "
           "f ON f.RDB$FIELD_NAME = rf.RDB$FIELD_SOURCE WHERE "
           "rf.RDB$RELATION_NAME = 'AUTHORS' AND rf.RDB$FIELD_NAME = "
           "'FULL_NAME' AND f.RDB$COMPUTED_BLR IS NOT NULL",
           1);
    EXPECT(c, "SELECT author_book_count(1) FROM RDB$DATABASE", 50);
    EXPECT(c, "SELECT author_book_count(0) FROM RDB$DATABASE", 0);
    {
        ffb_tx *tx;
        char v[64];
        OK(c, ffb_tx_begin(c, NULL, &tx));
        row_text(c, tx,
                 "SELECT RDB$SET_CONTEXT('USER_TRANSACTION', "
                 "'request.jwt.claim.sub', 'bench') FROM RDB$DATABASE",
                 v, sizeof(v));
        row_text(c, tx, "SELECT current_sub() FROM RDB$DATABASE", v, sizeof(v));
        assert_string_equal(v, "bench");
        row_text(c, tx, "SELECT sub FROM request_context", v, sizeof(v));
        assert_string_equal(v, "bench");
        row_text(c, tx, "SELECT full_name FROM authors WHERE id = 1", v,
                 sizeof(v));
        assert_non_null(strchr(v, ' '));
        /* The identity goes on after the loaded ids. */
        int64_t id = 0;
        ffb_stmt *s;
        OK(c, ffb_stmt_new(c, &s));
        OK(c, ffb_stmt_prepare(s, tx,
                               "INSERT INTO tags (name) VALUES "
                               "('new') RETURNING id",
                               (size_t)-1));
        OK(c, ffb_stmt_execute(s, tx));
        assert_int_equal(ffb_stmt_fetch(s), 1);
        OK(c, ffb_stmt_get_int64(s, 0, &id));
        /* 4.0: 101, 3.0: 102 (RESTART WITH 101), one more for each
           earlier check (a rolled-back insert keeps its id used). */
        assert_in_range(id, 101, 103);
        ffb_stmt_free(s);
        OK(c, ffb_tx_rollback(tx));
        ffb_tx_free(tx);
    }

    /* Keys and indexes: 7 primary, 3 unique, 6 foreign keys; every index
       has statistics; price unindexed. */
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$RELATION_CONSTRAINTS WHERE "
           "RDB$CONSTRAINT_TYPE = 'PRIMARY KEY' AND RDB$RELATION_NAME "
           "<> 'DATASET_INFO'",
           7);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$RELATION_CONSTRAINTS WHERE "
           "RDB$CONSTRAINT_TYPE = 'UNIQUE'"
           "AND RDB$RELATION_NAME IN (SELECT RDB$RELATION_NAME FROM "
           "RDB$RELATIONS WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0)",
           3);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$RELATION_CONSTRAINTS WHERE "
           "RDB$CONSTRAINT_TYPE = 'FOREIGN KEY'"
           "AND RDB$RELATION_NAME IN (SELECT RDB$RELATION_NAME FROM "
           "RDB$RELATIONS WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0)",
           6);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$INDICES WHERE COALESCE("
           "RDB$SYSTEM_FLAG, 0) = 0 AND RDB$RELATION_NAME <> "
           "'DATASET_INFO' AND (RDB$STATISTICS IS NULL OR RDB$STATISTICS "
           "<= 0)",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$INDEX_SEGMENTS WHERE "
           "RDB$FIELD_NAME = 'PRICE'",
           0);

    /* Roles and grants: web_user may change every table and run both
       functions; web_anon reads. */
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$ROLES WHERE RDB$ROLE_NAME IN "
           "('WEB_USER', 'WEB_ANON')",
           2);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$RELATIONS r WHERE COALESCE("
           "r.RDB$SYSTEM_FLAG, 0) = 0 AND r.RDB$VIEW_BLR IS NULL AND "
           "r.RDB$RELATION_NAME <> 'DATASET_INFO' AND (SELECT COUNT("
           "DISTINCT RDB$PRIVILEGE) FROM RDB$USER_PRIVILEGES p WHERE "
           "p.RDB$USER = 'WEB_USER' AND p.RDB$RELATION_NAME = "
           "r.RDB$RELATION_NAME AND p.RDB$PRIVILEGE IN ('S', 'I', 'U', "
           "'D')) = 4",
           7);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$USER_PRIVILEGES WHERE RDB$PRIVILEGE "
           "= 'X' AND RDB$USER IN ('WEB_USER', 'WEB_ANON') AND "
           "RDB$RELATION_NAME IN ('CURRENT_SUB', 'AUTHOR_BOOK_COUNT')",
           4);

    row_ints(c, bookstore_digest_sql, digest, 6);
    detach(c);
}

static void check_chinook(const char *dsn, int64_t *digest) {
    ffb_conn *c = attach(dsn);
    static const struct {
        const char *table;
        int rows;
    } counts[] = {
        {"artist", 275},        {"album", 347},    {"track", 3503},
        {"genre", 25},          {"media_type", 5}, {"employee", 8},
        {"actor", 203},         {"customer", 59},  {"invoice", 412},
        {"invoice_line", 2240}, {"playlist", 18},  {"playlist_track", 8715}};
    char sql[512];
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", counts[i].table);
        EXPECT(c, sql, counts[i].rows);
    }
    /* Albums belong to artists 1..204; artist 1 has 2 (1 and 205). */
    EXPECT(c,
           "SELECT COUNT(*) FROM album WHERE artist_id <> 1 + "
           "MOD(album_id - 1, 204)",
           0);
    EXPECT(c, "SELECT COUNT(*) FROM album WHERE artist_id = 1", 2);
    EXPECT(c,
           "SELECT COUNT(*) FROM track WHERE album_id <> 1 + "
           "MOD(track_id - 1, 347) OR genre_id <> 1 + MOD(track_id - 1, "
           "25) OR media_type_id <> 1 + MOD(track_id - 1, 5)",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM (SELECT album_id, COUNT(*) n FROM track "
           "GROUP BY album_id) WHERE n NOT IN (10, 11)",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM track WHERE CHAR_LENGTH(name) NOT "
           "BETWEEN 10 AND 40 OR milliseconds NOT BETWEEN 150000 AND "
           "400000 OR bytes NOT BETWEEN milliseconds * 33 AND "
           "milliseconds * 33 + 999",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM track WHERE (composer IS NULL) <> "
           "(MOD(track_id, 4) = 0) OR CHAR_LENGTH(composer) NOT BETWEEN "
           "15 AND 60",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM track WHERE unit_price <> CASE WHEN "
           "MOD(track_id, 10) = 0 THEN 1.99 ELSE 0.99 END",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM invoice v WHERE total <> (SELECT "
           "SUM(unit_price * quantity) FROM invoice_line l WHERE "
           "l.invoice_id = v.invoice_id)",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM (SELECT playlist_id, COUNT(*) n FROM "
           "playlist_track GROUP BY playlist_id) WHERE n NOT IN (484, "
           "485)",
           0);
    /* employee: no key, no index (as postgrest-benchmark's). */
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$RELATION_CONSTRAINTS WHERE "
           "RDB$RELATION_NAME = 'EMPLOYEE' AND RDB$CONSTRAINT_TYPE IN "
           "('PRIMARY KEY', 'FOREIGN KEY', 'UNIQUE')",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$INDICES WHERE RDB$RELATION_NAME = "
           "'EMPLOYEE'",
           0);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$RELATION_CONSTRAINTS WHERE "
           "RDB$CONSTRAINT_TYPE = 'FOREIGN KEY'"
           "AND RDB$RELATION_NAME IN (SELECT RDB$RELATION_NAME FROM "
           "RDB$RELATIONS WHERE COALESCE(RDB$SYSTEM_FLAG, 0) = 0)",
           9);
    /* The routines. */
    EXPECT(c, "SELECT add_them(1, 2, 3, 4, 5) FROM RDB$DATABASE", 15);
    EXPECT(c, "SELECT COUNT(*) FROM ret_artists", 275);
    EXPECT(c, "SELECT COUNT(*) FROM ret_artists WHERE artist_id = 7", 1);
    EXPECT(c, "SELECT COUNT(*) FROM ret_albums WHERE artist_id = 1", 2);
    EXPECT(c, "SELECT COUNT(*) FROM ret_albums WHERE artist_id = 276", 0);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$PROCEDURES WHERE (RDB$PROCEDURE_NAME "
           "= 'RET_ALBUMS' AND CAST(RDB$DESCRIPTION AS VARCHAR(40)) = "
           "'@returns album') OR (RDB$PROCEDURE_NAME = 'RET_ARTISTS' AND "
           "CAST(RDB$DESCRIPTION AS VARCHAR(40)) = '@returns artist')",
           2);
    EXPECT(c,
           "SELECT COUNT(*) FROM RDB$ROLES WHERE RDB$ROLE_NAME IN "
           "('WEB_USER', 'WEB_ANON', 'POSTGRES')",
           3);
    *digest = one(c, "SELECT (SELECT SUM(MOD(HASH(name || '|' || COALESCE("
                     "composer, '-') || '|' || bytes), 1000003)) FROM track) "
                     "+ (SELECT SUM(MOD(HASH(title), 1000003)) FROM album) "
                     "+ (SELECT SUM(MOD(HASH(email || COALESCE(company, '') "
                     "|| address), 1000003)) FROM customer) + (SELECT "
                     "SUM(track_id * invoice_line_id) FROM invoice_line) + "
                     "(SELECT SUM(MOD(HASH(last_name || CAST(last_update AS "
                     "VARCHAR(30))), 1000003)) FROM actor) FROM "
                     "RDB$DATABASE");
    detach(c);
}

/* seed --pg-copy: the PostgreSQL twin holds the same rows: each COPY
   block's line count, and book 77 and order 2500 field by field against
   the Firebird load. */
static void check_pg_twin(const char *dsn) {
    char path[256], args[512], out[4096];
    snprintf(path, sizeof(path), "/tmp/ffbtest_restbench_%d_pg.sql",
             (int)getpid());
    snprintf(args, sizeof(args), "--scale 20 --pg-copy '%s'", path);
    assert_int_equal(run_tool(FFB_BENCH_SEED, args, out, sizeof(out)), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static const struct {
        const char *copy;
        long rows;
    } blocks[] = {{"COPY tags ", 100},        {"COPY authors ", 100},
                  {"COPY books ", 5000},      {"COPY book_tags ", 10000},
                  {"COPY customers ", 250},   {"COPY orders ", 2500},
                  {"COPY order_items ", 5000}};
    char line[1024], book77[1024] = "", order2500[1024] = "";
    size_t b = 0;
    long n = -1;
    while (fgets(line, sizeof(line), f)) {
        if (n < 0) {
            if (b < 7 &&
                strncmp(line, blocks[b].copy, strlen(blocks[b].copy)) == 0)
                n = 0;
            continue;
        }
        if (strcmp(line, "\\.\n") == 0) {
            if (n != blocks[b].rows)
                fail_msg("%s: %ld rows, expected %ld", blocks[b].copy, n,
                         blocks[b].rows);
            b++;
            n = -1;
            continue;
        }
        n++;
        if (b == 2 && n == 77)
            snprintf(book77, sizeof(book77), "%s", line);
        if (b == 5 && n == 2500)
            snprintf(order2500, sizeof(order2500), "%s", line);
    }
    fclose(f);
    unlink(path);
    assert_int_equal(b, 7);

    ffb_conn *c = attach(dsn);
    ffb_tx *tx;
    char want[1024];
    OK(c, ffb_tx_begin(c, NULL, &tx));
    row_text(c, tx,
             "SELECT id || ASCII_CHAR(9) || author_id || "
             "ASCII_CHAR(9) || title || ASCII_CHAR(9) || isbn || "
             "ASCII_CHAR(9) || published_year || ASCII_CHAR(9) || "
             "pages || ASCII_CHAR(9) || price || ASCII_CHAR(9) || "
             "language || ASCII_CHAR(9) || LEFT(CAST(created_at AS "
             "VARCHAR(30)), 19) || ASCII_CHAR(10) FROM books WHERE id "
             "= 77",
             want, sizeof(want));
    assert_string_equal(book77, want);
    row_text(c, tx,
             "SELECT id || ASCII_CHAR(9) || customer_id || "
             "ASCII_CHAR(9) || LEFT(CAST(ordered_at AS VARCHAR(30)), "
             "19) || ASCII_CHAR(9) || status || ASCII_CHAR(9) || total "
             "|| ASCII_CHAR(10) FROM orders WHERE id = 2500",
             want, sizeof(want));
    assert_string_equal(order2500, want);
    OK(c, ffb_tx_rollback(tx));
    ffb_tx_free(tx);
    detach(c);
}

/* seed or chinook_gen: load, check, run again (nothing to do), --check,
   --force (same content), drop. */
static void load_twice(const it_target *t, const char *tool, const char *what,
                       const char *scale_arg) {
    char dsn[600], args[800], out[4096];
    set_login(t);
    db_dsn(t, what, dsn, sizeof(dsn));
    snprintf(args, sizeof(args), "%s '%s'", scale_arg, dsn);
    char check_args[1024];
    snprintf(check_args, sizeof(check_args), "--check %s", args);
    /* No database yet: --check says so (3) and creates nothing. */
    assert_int_equal(run_tool(tool, check_args, out, sizeof(out)), 3);
    int rc = run_tool(tool, args, out, sizeof(out));
    if (rc != 0)
        fail_msg("%s %s: exit %d: %s", tool, args, rc, out);
    assert_non_null(strstr(out, "loaded into"));
    int64_t d1[6], d2[6], d3[6];
    int bookstore = strcmp(what, "bookstore") == 0;
    if (bookstore) {
        check_bookstore(dsn, d1);
        check_pg_twin(dsn);
    } else {
        check_chinook(dsn, d1);
    }

    ffb_conn *c = attach(dsn);
    int64_t secs1 = one(c, "SELECT CAST(load_seconds * 1000 AS BIGINT) FROM "
                           "dataset_info");
    detach(c);

    /* Second run: a complete load is found and left alone. */
    assert_int_equal(run_tool(tool, args, out, sizeof(out)), 0);
    assert_null(strstr(out, "loaded into"));
    assert_int_equal(run_tool(tool, check_args, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "already holds a complete load"));
    c = attach(dsn);
    assert_int_equal(one(c, "SELECT CAST(load_seconds * 1000 AS BIGINT) "
                            "FROM dataset_info"),
                     secs1);
    detach(c);
    if (bookstore)
        check_bookstore(dsn, d2);
    else
        check_chinook(dsn, d2);

    /* --force: dropped, loaded again, the same values. */
    snprintf(check_args, sizeof(check_args), "--force %s", args);
    assert_int_equal(run_tool(tool, check_args, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "loaded into"));
    if (bookstore)
        check_bookstore(dsn, d3);
    else
        check_chinook(dsn, d3);
    size_t nd = bookstore ? 6 : 1;
    for (size_t i = 0; i < nd; i++) {
        assert_int_equal(d1[i], d2[i]);
        assert_int_equal(d1[i], d3[i]);
    }
    drop(dsn);
}

static void test_bookstore(void **state) {
    load_twice(*state, FFB_BENCH_SEED, "bookstore", "--scale 20");
}

static void test_chinook(void **state) {
    load_twice(*state, FFB_BENCH_CHINOOK_GEN, "chinook", "");
}

/* A database with tables the tool did not load is refused, untouched. */
static void test_refuses_foreign(void **state) {
    const it_target *t = *state;
    char dsn[600], args[800], out[4096];
    set_login(t);
    db_dsn(t, "foreign", dsn, sizeof(dsn));
    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = dsn;
    o.user = g_user;
    o.password = g_password;
    ffb_conn *c = NULL;
    assert_int_equal(ffb_conn_new(&o, &c), 0);
    OK(c, ffb_conn_create_database(c, NULL));
    it_exec(c, "CREATE TABLE %s (x INTEGER)", "keep_me");
    detach(c);
    snprintf(args, sizeof(args), "--scale 1000 '%s' 2>&1", dsn);
    assert_int_equal(run_tool(FFB_BENCH_SEED, args, out, sizeof(out)), 1);
    assert_non_null(strstr(out, "no dataset_info"));
    c = attach(dsn);
    EXPECT(c, "SELECT COUNT(*) FROM keep_me", 0);
    untrack(c);
    OK(c, ffb_conn_drop_database(c));
    ffb_conn_free(c);
}

/* bookstore.sql and chinook.sql are what --print-schema prints. */
static void same_as_file(const char *tool, const char *path) {
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "'%s' --print-schema | cmp - '%s'", tool, path);
    if (system(cmd) != 0)
        fail_msg("%s differs from %s --print-schema (regenerate it)", path,
                 tool);
}

static void test_schema_files(void **state) {
    (void)state;
    same_as_file(FFB_BENCH_SEED, FFB_BENCH_DATA_DIR "/bookstore.sql");
    same_as_file(FFB_BENCH_CHINOOK_GEN, FFB_BENCH_DATA_DIR "/chinook.sql");
}

int main(void) {
    static const char *const names[] = {"FB3", "FB4"};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_bookstore, drop_if_there),
        cmocka_unit_test_teardown(test_chinook, drop_if_there),
        cmocka_unit_test_teardown(test_refuses_foreign, drop_if_there),
        cmocka_unit_test(test_schema_files),
    };
    return it_main("restbench", names, 2, tests,
                   sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
