/*
 * ffb-rest: the schema cache (spec rest.md A13) as data: tables, views,
 * columns, primary and foreign keys. Built by schema_load.c from the RDB$
 * tables (or by a test from a fixture); immutable afterwards, so every
 * loop thread reads the same one.
 */
#ifndef FFB_REST_SCHEMA_H
#define FFB_REST_SCHEMA_H

#include <stddef.h>

typedef struct rest_column {
    char *name;    /* as stored */
    char *exposed; /* A4.1: all upper case -> lower case, else verbatim */
    int type;      /* RDB$FIELD_TYPE (7 smallint, 8 integer, 16 bigint...) */
    int subtype;
    int scale;
    int length;
    int charlen;
    int precision;
    int charset; /* -1: none */
    int notnull;
    int computed; /* COMPUTED BY */
    int has_default;
    int identity; /* RDB$IDENTITY_TYPE, -1: not an identity */
} rest_column;

typedef struct rest_fk {
    char *name;      /* the constraint: a future embed hint */
    char *ref_table; /* stored name */
    size_t ncols;
    char **cols; /* stored names, in key order */
    char **ref_cols;
} rest_fk;

typedef struct rest_table {
    char *name;
    char *exposed;
    int is_view;
    int rel_type; /* RDB$RELATION_TYPE: 0 persistent, 1 view, 4/5 GTT */
    rest_column *cols;
    size_t ncols;
    size_t cap_cols;
    size_t *pk; /* column indexes, key order */
    size_t npk;
    rest_fk *fks;
    size_t nfks;
    /* A selectable procedure read as a table (RPC): its outputs as the
       columns, and with `@returns <table>` in its description that
       table's name, primary key and foreign keys (so embeds resolve as
       on the table). The SQL reads FROM "<proc>"(?, ...) "<name>"; the
       argument values (NULL: SQL NULL) are set per request on a copy. */
    const char *proc;
    const char *const *proc_vals;
    size_t proc_nvals;
} rest_table;

/* A procedure or a PSQL function (spec A7). */
typedef struct rest_arg {
    char *name;    /* stored */
    char *exposed; /* A4.1 */
    int has_default;
} rest_arg;

enum { REST_RT_SELECTABLE = 1, REST_RT_EXECUTABLE = 2, REST_RT_FUNCTION = 3 };

typedef struct rest_routine {
    char *name;
    char *exposed;
    int kind;     /* REST_RT_* */
    rest_arg *in; /* in RDB$PARAMETER_NUMBER / RDB$ARGUMENT_POSITION order */
    size_t nin;
    size_t cap_in;
    size_t nout; /* procedure outputs (a function: 1) */
    /* a selectable procedure: its outputs as a table (rest_table.proc),
       linked to `returns` by rest_schema_link_routines */
    rest_table out;
    char *returns; /* `@returns <table>` of RDB$DESCRIPTION (stored name
                      as written, or upper-cased unquoted), NULL: none */
} rest_routine;

typedef struct rest_schema {
    rest_table *tables;
    size_t ntables;
    size_t cap;
    /* a source text of the database mentions `request.` (spec A8.3:
       db-request-context = auto sends the request context) */
    int reads_request_context;
    /* db-procedure-returns ("proc:table, proc:table"), set before the
       load; wins over a description's @returns */
    const char *returns_map;
    rest_routine *routines; /* procedures and functions (outside packages) */
    size_t nroutines;
    size_t cap_routines;
    int protocol; /* the loader's wire protocol (16+: statement timeouts) */
} rest_schema;

void rest_schema_init(rest_schema *s);
void rest_schema_free(rest_schema *s);

/* The table `name` (stored), created when missing; NULL on no memory. */
rest_table *rest_schema_table(rest_schema *s, const char *name, int is_view,
                              int rel_type);
/* Append a column (stored name); NULL on no memory. */
rest_column *rest_table_add_column(rest_table *t, const char *name);
/* Key column `col` at position `pos` of the primary key; -1 when unknown. */
int rest_table_add_pk(rest_table *t, const char *col);
/* A foreign-key column pair (the fk is created by name on first use). */
int rest_table_add_fk(rest_table *t, const char *fk, const char *ref_table,
                      const char *col, const char *ref_col);

/* Lookups by the name a client gives (A4.1: its upper-case form first,
   then exactly). NULL when unknown. */
const rest_table *rest_schema_find(const rest_schema *s, const char *name);
const rest_column *rest_table_find(const rest_table *t, const char *name);

/* The routine `name` (stored, with `kind`), created when missing; NULL on
   no memory. */
rest_routine *rest_schema_routine(rest_schema *s, const char *name, int kind);
/* Append an input argument; -1 on no memory. */
int rest_routine_add_arg(rest_routine *r, const char *name, int has_default);
/* By the name a client gives (as rest_schema_find). */
const rest_routine *rest_schema_find_routine(const rest_schema *s,
                                             const char *name);
const rest_arg *rest_routine_find_arg(const rest_routine *r, const char *name,
                                      size_t *pos);

/* Set `r->returns` from a description text: the name after the first
   "@returns" (unquoted: letters, digits, `_`, `$`, taken in upper case;
   or "quoted" as is). 0, or -1 on no memory; no annotation is not an
   error. */
int rest_routine_set_returns(rest_routine *r, const char *desc, size_t n);
/* Once every table and routine is in: `returns_map` sets `returns` of
   the procedures it names (names as a client gives them, A4.1; -2 for a
   malformed map or one naming no procedure), then each selectable
   procedure's `out` table takes its `returns` table's name, primary key and
   foreign keys (those whose columns are all outputs of the procedure). A
   `returns` naming no table is left unlinked (the procedure reads as itself).
   -1 on no memory. */
int rest_schema_link_routines(rest_schema *s);

/* The cache as text, a line per table, column and key (ffb-rest
   --schema, tests). */
struct rbuf;
void rest_schema_dump(const rest_schema *s, struct rbuf *out);

/* The exposed form of a stored name (A4.1), malloc'd. */
char *rest_expose_name(const char *stored);

#endif
