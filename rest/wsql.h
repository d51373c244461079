/*
 * ffb-rest: SQL for writes (spec rest.md A6) from a parsed request body,
 * the URL's filters and the schema cache. Pure: no I/O. Every value is a
 * parameter; every identifier comes from the schema cache, double-quoted.
 *
 * Shapes (docs/rest.md "Writes"):
 * - POST (any number of rows, upsert or not): one EXECUTE BLOCK whose
 *   inputs are typed `TYPE OF COLUMN "T"."C"`, with one INSERT (UPDATE OR
 *   INSERT ... MATCHING for merge-duplicates; IF NOT EXISTS ... INSERT for
 *   ignore-duplicates) per row. One statement, so a failing row undoes
 *   every row, as PostgreSQL's one INSERT does. Its output is the rows
 *   (RETURNING ... INTO; SUSPEND) for return=representation and
 *   headers-only, else one row with the count of inserted rows.
 *   Large bodies are cut into several blocks (chunks).
 * - PATCH / DELETE, minimal: UPDATE / DELETE ... WHERE <filters> (the row
 *   count comes with the execute's answer).
 * - PATCH / DELETE, representation: EXECUTE BLOCK with FOR SELECT ... AS
 *   CURSOR C ... UPDATE/DELETE ... WHERE CURRENT OF C; SUSPEND (Firebird 3
 *   and 4 return at most one row from a searched UPDATE ... RETURNING).
 * - PUT (PostgREST's single-row upsert, the whole primary key as eq
 *   filters): EXECUTE BLOCK whose first outputs are M (the body's key is
 *   the URL's, compared typed in the block; 0: nothing written, PGRST115)
 *   and I (the row did not exist: inserted), then UPDATE OR INSERT ...
 *   MATCHING (<pk>) [RETURNING ... INTO]; one row out.
 */
#ifndef FFB_REST_WSQL_H
#define FFB_REST_WSQL_H

#include <stddef.h>

#include "body.h"
#include "buf.h"
#include "schema.h"
#include "url.h"

enum rest_wkind { REST_W_INSERT = 0, REST_W_UPDATE, REST_W_DELETE, REST_W_PUT };
enum rest_wret { REST_RET_MINIMAL = 0, REST_RET_HEADERS, REST_RET_REPR };
enum rest_wres { REST_RES_NONE = 0, REST_RES_MERGE, REST_RES_IGNORE };

typedef struct rest_wopts {
    int kind;                /* enum rest_wkind */
    int ret;                 /* enum rest_wret */
    int resolution;          /* enum rest_wres */
    int missing_default;     /* Prefer: missing=default */
    const char *columns;     /* columns= (decoded), NULL: none */
    const char *on_conflict; /* on_conflict= (decoded), NULL: none */
    /* limits of one EXECUTE BLOCK; a larger body becomes several. The
       real limit is Firebird's 256 table contexts per statement (measured
       on 3.0.11 and 4.0.5: an INSERT takes 1, IF NOT EXISTS + INSERT 2,
       UPDATE OR INSERT 3); 32000 inputs and a 1.6 MB input message were
       taken, so the other two only bound the work per statement */
    size_t max_block_params;   /* inputs (0: 8000) */
    size_t max_block_bytes;    /* SQL text and estimated input message
                                  (0: 512 KiB each) */
    size_t max_block_contexts; /* table contexts (0: 256) */
    /* Accept: the singular object: the block itself refuses a write of
       other than one row, raising REST_WRAISE_ROWS (POST of one block,
       PATCH, DELETE) */
    int singular;
    /* PATCH/DELETE representation: rows the block keeps in variables
       before it suspends the first (0: 16; fewer when a row's outputs
       are large); a write of more raises REST_WRAISE_MORE. With
       repr_stream, the old shape: each row suspended as it is written
       (then the end must wait for the block's end: an error after a
       SUSPEND does not undo the rows before it) */
    size_t repr_rows;
    int repr_stream;
} rest_wopts;

/* A write the block refused itself: a conversion error of the text
   "FFB-REST:ROWS:<n>" (singular: n rows instead of one) or
   "FFB-REST:MORE:<n>" (more rows than repr_rows). Firebird cannot raise
   an exception with a message without a CREATE EXCEPTION, and a
   conversion error carries the text as its first argument (isc
   convert_error, 335544334, SQLSTATE 22018). */
#define REST_WRAISE_GDS 335544334u
enum rest_wraise { REST_WRAISE_NONE = 0, REST_WRAISE_ROWS, REST_WRAISE_MORE };
/* The kind of `arg` (the error's first argument), *n its row count. */
int rest_wraise_parse(const char *arg, long long *n);

typedef struct rest_wparam {
    int kind; /* enum rest_jkind (ABSENT is bound as NULL) */
    const char *text;
    size_t len;
} rest_wparam;

typedef struct rest_wstmt {
    rbuf sql;
    rest_wparam *params;
    size_t nparams;
    int cursor;     /* an EXECUTE BLOCK with outputs: fetch its rows */
    size_t nrows;   /* rows it inserts (POST); 0 otherwise */
    int fetch_rows; /* the size of its first fetch */
    /* no SUSPEND before its last write, and every row and its end come
       in the first fetch: an error undoes all it did (the statement's
       savepoint), so the transaction's end may ride behind it. (A
       SUSPEND ends the savepoint of what came before it: an error after
       one leaves those rows written, verified on 3.0.11 and 4.0.5.) */
    int atomic;
} rest_wstmt;

typedef struct rest_wplan {
    const rest_table *t;
    rest_wstmt *stmts;
    size_t nstmts;
    /* output columns of the cursor: JSON keys (representation) or the
       primary key (headers-only: the Location); count_only: one INTEGER */
    const char **keys;
    const rest_column **outcols;
    size_t nkeys;
    int count_only;       /* POST minimal: the block returns the count */
    int resolution_used;  /* resolution applied (a key to match exists) */
    int noop;             /* nothing to do (PATCH {}, POST []) */
    int put;              /* PUT: the cursor's columns 0 and 1 are M and I
                             (wsql.h), the keys' columns follow */
    int singular_checked; /* the block refuses other than one row */
    size_t repr_rows;     /* PATCH/DELETE: the rows it keeps (0: it
                             streams them) */
} rest_wplan;

/*
 * Plan a write to `name`. `body` is NULL for DELETE. Returns 0, or -1 with
 * `err`: 404 PGRST205 unknown table; 400 PGRST204 unknown column in the
 * body or columns=; 400 42703 unknown column in a filter or select=;
 * 400 PGRST102 keys of a bulk body that differ (without columns=), a PATCH
 * body that is not one object; 400 PGRST127 what is not supported; PUT:
 * 400 PGRST114 limit/offset, 405 PGRST105 filters other than the primary
 * key's eq, 400 PGRST115 a body without the key.
 */
int rest_plan_write(rarena *arena, const rest_schema *schema, const char *name,
                    const rest_query *q, const rest_body *body,
                    const rest_wopts *opts, rest_wplan *plan, rest_err *err);
void rest_wplan_free(rest_wplan *plan);

/* The Prefer header's preferences that writes use (unknown ones are
   ignored, as PostgREST does with handling=lenient). */
typedef struct rest_prefer {
    int ret; /* enum rest_wret */
    int has_ret;
    int resolution; /* enum rest_wres */
    int missing_default;
    int tx; /* 0: not given, 1: commit, 2: rollback */
    int count_exact;
    int params_single; /* params=single-object (RPC) */
} rest_prefer;

void rest_parse_prefer(const char *v, size_t n, rest_prefer *out);

/* columns= and on_conflict= of the query string `qs` (not decoded),
   percent-decoded into `a`; NULL when absent. Returns 0, -1 on no
   memory. */
int rest_write_params(rarena *a, const char *qs, size_t n, const char **columns,
                      const char **on_conflict);

/* Every statement with its parameters as text (golden files). */
void rest_wplan_dump(const rest_wplan *plan, rbuf *out);

#endif
