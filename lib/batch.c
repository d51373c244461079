/*
 * Batch DML (include/fastfb.h "batch DML", docs/batch.md).
 *
 * Firebird 4+ (protocol 16+): the batch API of reference 03, C.4. A batch
 * object owns one server batch on its statement, created by the first
 * execute and kept open until ffb_batch_free() (the server resets it after
 * every op_batch_exec). The first execute confirms the op_batch_create with
 * op_batch_sync (op_ping on protocol 16) before any message is sent:
 * messages written behind a create that fails crash Firebird 5 (C.4.9).
 * Every later execute is one write: blob stream + messages + op_batch_exec,
 * whose op_batch_cs comes back behind the held answers of the rest.
 *
 * Rows are encoded when added, with the statement's described parameter
 * types (CHAR travels as VARCHAR of the same length, as in an ordinary
 * execute), and kept in the batch until the execute. They are cut into
 * parts that fit the server's buffer (aligned message length per row plus
 * the row's blobs); each part is one op_batch_exec: one round trip each
 * without multi_error (the batch stops at the first failing row), all in
 * one write with it. The commit option puts op_commit in the last write.
 *
 * Firebird 3 (protocol < 16): emulated with one op_execute (+ op_info_sql
 * for the row count) per row, every row in one write (the transport reads
 * the answers while it writes; writes are cut at FB3_WRITE_MAX bytes only
 * to bound memory). Every row written runs, also after a failing one. Blobs
 * added with ffb_batch_add_blob() are created first (op_create_blob2, one
 * round trip: their ids are needed in the messages), then written and
 * closed in the first write of rows.
 */
#include <stdio.h>
#include <string.h>

#include "lib/internal.h"
#include "proto/blob.h"

#define PACKET_MAX (128u * 1024u)       /* op_batch_msg / blob stream */
#define DEFAULT_BUFFER (16u * 1024u * 1024u)
#define MAX_BUFFER (256u * 1024u * 1024u)
/* 4.0 clamps the buffer to 64 MiB (DsqlBatch BUFFER_LIMIT * 4); parts are
   sized within that whatever was asked. */
#define SPLIT_LIMIT (64u * 1024u * 1024u)
#define DEFAULT_DETAILED 64u
#define MAX_DETAILED 256u
/* Request bytes staged for one Firebird 3 write. */
#define FB3_WRITE_MAX (32u * 1024u * 1024u)
#define SEGMENT_MAX 65535u
#define NO_ROW ((size_t)-1)

#define GDS_BAD_BATCH_HANDLE 335545159u

typedef struct bblob {
    size_t off, len;    /* in blob_data: raw bytes (stream) or
                           [uint16 LE length][bytes] records (segmented) */
    int segmented;
    uint32_t logical;   /* bytes in the server's blob buffer */
    size_t row;         /* the row that uses it, NO_ROW while unused */
    /* Firebird 3: the blob created for it */
    uint16_t handle;
    uint8_t real_id[8];
} bblob;

/* A blob id inside the encoded messages (patched on Firebird 3). */
typedef struct bref {
    size_t off;
    size_t blob;
} bref;

/* Rows executed by one op_batch_exec. */
typedef struct bpart {
    size_t first_row, nrows;
    uint64_t bytes;
} bpart;

typedef struct row_err {
    size_t row;
    ffb_error *err;
} row_err;

struct ffb_batch {
    ffb_conn *conn;
    ffb_stmt *stmt;
    int refs;
    int freed;
    ffb_batch *next;       /* conn->batches */

    /* options */
    int multi_error;
    int counts;
    int commit;
    uint32_t buffer_bytes; /* sent to the server */
    uint32_t limit;        /* used to cut parts */
    uint32_t detailed;

    /* message format */
    size_t n;
    ffbp_item *described; /* the statement's items when the batch was made */
    ffbp_item *items;     /* what the batch sends */
    ffbp_writer blr;
    uint32_t msglen, aligned;
    int has_blobs;
    uint8_t pb[64];
    size_t pb_len;

    int created; /* the server holds our batch (Firebird 4+) */
    int policy_sent; /* it was created with TAG_BLOB_POLICY */

    /* rows and blobs added since the last execute */
    ffbp_writer msgs;
    size_t *row_off;
    size_t nrows, rows_cap;
    bpart *parts;
    size_t nparts, parts_cap;
    bblob *blobs;
    size_t nblobs, blobs_cap;
    ffbp_writer blob_data;
    bref *brefs;
    size_t nbrefs, brefs_cap;
    size_t *scratch;   /* n entries: blob indices of the row being added */

    /* results of the last execute */
    size_t res_rows;
    int64_t *status;
    size_t status_cap;
    row_err *errs;
    size_t nerrs, errs_cap;
    int failed;        /* a row failed */
    size_t first_failed;
    int exec_failed;   /* an op_batch_exec was refused as a whole */

    /* the execution in progress: a held request of the connection whose
       steps are queued by the answers to the one before (see x_step) */
    int running;
    int phase;
    ffb_tx *x_tx;
    ffb__sync *x_done;  /* the caller's: completes when the execution ends */
    ffb__sync step;     /* the answers of the step in flight */
    int waiting;        /* a step was queued: its answers are owed */
    size_t x_part, x_row, x_blob;
    size_t *x_order, *x_start;
    ffb__pending *x_last; /* FB3: the last create queued so far */
};

/* ---- helpers ------------------------------------------------------------------ */

static int nomem(ffb_conn *conn) {
    return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
}

/* Grow an array to hold `need` elements. */
static int grow(ffb_conn *conn, void **arr, size_t *cap, size_t need,
                size_t elem) {
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    if (c > (size_t)-1 / elem)
        return nomem(conn);
    void *p = ffb__realloc(conn->alloc, *arr, c * elem);
    if (!p)
        return nomem(conn);
    *arr = p;
    *cap = c;
    return 0;
}

static int items_equal(const ffbp_item *a, const ffbp_item *b) {
    return a->blr == b->blr && a->scale == b->scale &&
           a->length == b->length && a->texttype == b->texttype &&
           a->subtype == b->subtype;
}

static void batch_destroy(ffb_batch *b);

void ffb__batches_destroy_all(ffb_conn *conn) {
    /* Answers owed on a broken connection never come to release their
       references: the connection's end releases the batches. */
    while (conn->batches)
        batch_destroy(conn->batches);
}

static void batch_unref(ffb_batch *b) {
    if (b && --b->refs == 0)
        batch_destroy(b);
}

void ffb__batch_ref(ffb_batch *b) { b->refs++; }
void ffb__batch_unref(ffb_batch *b) { batch_unref(b); }

/* The statement is still the one the batch was made for. */
static int check_stmt(ffb_batch *b) {
    ffb_stmt *s = b->stmt;
    ffb_conn *conn = b->conn;
    if (s->freed || !s->prepared || !s->has_handle)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the batch's statement is not prepared any "
                              "more");
    if (s->in.n != b->n)
        goto changed;
    for (size_t i = 0; i < b->n; i++)
        if (!items_equal(&s->in.items[i], &b->described[i]))
            goto changed;
    return 0;
changed:
    return ffb__error_set(&conn->err, FFB_E_STATE,
                          "the statement was prepared again with other "
                          "parameters; make a new batch");
}

/* Logical size of a blob in the server's blob stream (reference 03,
   C.4.5): 4-aligned header, BPB, data; segment words 2-aligned. */
static uint64_t blob_logical(const uint8_t *data, size_t len, int segmented) {
    uint64_t at = 16;
    if (segmented) {
        at += 4; /* BPB 01 03 01 00 */
        size_t pos = 0, l;
        const uint8_t *d;
        while (ffbp_segment_next(data, len, &pos, &d, &l) == 1) {
            at = (at + 1) & ~(uint64_t)1;
            at += 2 + l;
        }
    } else {
        at += len;
    }
    return (at + 3) & ~(uint64_t)3;
}

static void results_clear(ffb_batch *b) {
    for (size_t i = 0; i < b->nerrs; i++)
        ffb__free(b->conn->alloc, b->errs[i].err);
    b->nerrs = 0;
    b->res_rows = 0;
    b->failed = 0;
    b->first_failed = 0;
    b->exec_failed = 0;
}

/* Forget the rows and blobs of the round (after an execute). */
static void round_clear(ffb_batch *b) {
    ffbp_writer_reset(&b->msgs);
    ffbp_writer_reset(&b->blob_data);
    b->nrows = 0;
    b->nparts = 0;
    b->nblobs = 0;
    b->nbrefs = 0;
}

static void batch_destroy(ffb_batch *b) {
    ffb_conn *conn = b->conn;
    for (ffb_batch **pp = &conn->batches; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    results_clear(b);
    ffb__free(conn->alloc, b->errs);
    ffb__free(conn->alloc, b->status);
    ffb__free(conn->alloc, b->described);
    ffb__free(conn->alloc, b->items);
    ffb__free(conn->alloc, b->row_off);
    ffb__free(conn->alloc, b->parts);
    ffb__free(conn->alloc, b->blobs);
    ffb__free(conn->alloc, b->brefs);
    ffb__free(conn->alloc, b->scratch);
    ffbp_writer_free(&b->blr);
    ffbp_writer_free(&b->msgs);
    ffbp_writer_free(&b->blob_data);
    ffb__stmt_unref(b->stmt);
    ffb__obj_release(conn->alloc, b, "batch");
}

static void pb_int(ffb_batch *b, uint8_t tag, uint32_t v) {
    uint8_t *p = b->pb + b->pb_len;
    p[0] = tag;
    p[1] = 4;
    p[2] = p[3] = p[4] = 0;
    p[5] = (uint8_t)v;
    p[6] = (uint8_t)(v >> 8);
    p[7] = (uint8_t)(v >> 16);
    p[8] = (uint8_t)(v >> 24);
    b->pb_len += 9;
}

/* ---- new / free ------------------------------------------------------------------ */

int ffb_batch_new(ffb_stmt *stmt, const ffb_batch_options *opts,
                  ffb_batch **out) {
    if (!stmt || !out)
        return FFB_E_INVAL;
    ffb_conn *conn = stmt->conn;
    ffb_batch_options defaults = FFB_BATCH_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    if (opts->version != FFB_BATCH_OPTIONS_VERSION)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "ffb_batch_options.version must be "
                              "FFB_BATCH_OPTIONS_VERSION");
    if (opts->buffer_bytes > MAX_BUFFER)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "buffer_bytes must be at most 256 MiB");
    if (opts->detailed_errors < 0)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "detailed_errors must not be negative");
    int rc = ffb__need_ready(conn);
    if (rc < 0)
        return rc;
    if (stmt->freed || !stmt->prepared || !stmt->has_handle)
        return ffb__error_set(&conn->err, FFB_E_STATE,
                              "the statement is not prepared");
    if (stmt->in.n == 0)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "a batch needs a statement with parameters");
    if ((stmt->stmt_flags >= 0 && (stmt->stmt_flags & 1)) ||
        stmt->stmt_type == FFB_STMT_SELECT ||
        stmt->stmt_type == FFB_STMT_SELECT_FOR_UPDATE)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "a batch runs INSERT, UPDATE, DELETE, EXECUTE "
                              "PROCEDURE or EXECUTE BLOCK, not a statement "
                              "with a cursor");
    ffb__conn_error_clear(conn);

    ffb_batch *b = ffb__malloc(conn->alloc, sizeof(*b));
    if (!b)
        return nomem(conn);
    memset(b, 0, sizeof(*b));
    b->conn = conn;
    b->stmt = stmt;
    stmt->refs++;
    b->refs = 1;
    b->next = conn->batches;
    conn->batches = b;
    ffbp_writer_init(&b->blr, conn->alloc);
    ffbp_writer_init(&b->msgs, conn->alloc);
    ffbp_writer_init(&b->blob_data, conn->alloc);
    b->multi_error = opts->multi_error != 0;
    b->counts = !opts->no_record_counts;
    b->commit = opts->commit != 0;
    b->buffer_bytes = opts->buffer_bytes ? opts->buffer_bytes : DEFAULT_BUFFER;
    b->limit = b->buffer_bytes < SPLIT_LIMIT ? b->buffer_bytes : SPLIT_LIMIT;
    b->detailed = opts->detailed_errors ? (uint32_t)opts->detailed_errors
                                        : DEFAULT_DETAILED;
    if (b->detailed > MAX_DETAILED)
        b->detailed = MAX_DETAILED;

    size_t n = stmt->in.n;
    b->n = n;
    b->described = ffb__malloc(conn->alloc, n * sizeof(ffbp_item));
    b->items = ffb__malloc(conn->alloc, n * sizeof(ffbp_item));
    b->scratch = ffb__malloc(conn->alloc, n * sizeof(size_t));
    if (!b->described || !b->items || !b->scratch) {
        batch_unref(b);
        return nomem(conn);
    }
    memcpy(b->described, stmt->in.items, n * sizeof(ffbp_item));
    for (size_t i = 0; i < n; i++) {
        ffbp_item it = stmt->in.items[i];
        /* CHAR parameters are bound as VARCHAR of the same length and
           character set (lib/values.c); the server pads them. */
        if (it.blr == FFBP_BLR_TEXT2)
            it.blr = FFBP_BLR_VARYING2;
        if (it.blr == FFBP_BLR_BLOB2)
            b->has_blobs = 1;
        b->items[i] = it;
    }
    if (ffbp_put_blr(&b->blr, b->items, n) != FFBP_OK || b->blr.failed) {
        int nomem = b->blr.failed;
        batch_unref(b);
        if (nomem)
            return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
        return ffb__error_set(&conn->err, FFB_E_UNSUPPORTED,
                              "cannot describe the batch message in BLR");
    }
    b->msglen = ffbp_batch_msglen(b->items, n, &b->aligned);
    if (conn->protocol >= 16 && b->aligned > b->limit) {
        unsigned aligned = b->aligned;
        batch_unref(b);
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "buffer_bytes (%u) is smaller than one message "
                              "of the statement (%u bytes)",
                              (unsigned)opts->buffer_bytes, aligned);
    }

    *out = b;
    return 0;
}

static void free_send(ffb_conn *conn, void *obj) {
    ffb_batch *b = obj;
    if (b->created && conn->state == FFB__ST_READY && !b->stmt->freed &&
        b->stmt->has_handle) {
        /* Held back by a lazy server; rides with the next request. */
        ffbp_writer w;
        ffbp_writer_init(&w, conn->alloc);
        ffbp_put_object_op(&w, FFBP_OP_BATCH_RLS, b->stmt->handle);
        if (ffb__queue_fire_and_forget(conn, &w, FFBP_OP_BATCH_RLS, 1) < 0)
            ffb__conn_error_clear(conn);
        ffbp_writer_free(&w);
        b->created = 0;
    }
    round_clear(b);
    batch_unref(b);
}

static void free_drop(ffb_conn *conn, void *obj) {
    (void)conn;
    batch_unref(obj);
}

void ffb_batch_free(ffb_batch *b) {
    ffb__obj_check(b, "ffb_batch_free");
    if (!b || b->freed)
        return;
    b->freed = 1;
    ffb_conn *conn = b->conn;
    /* An execution of it (or anything else) still waits in the hold queue:
       its rows stay until it has run, and the release goes after it. */
    if (conn->held_head && conn->state == FFB__ST_READY &&
        ffb__engine_hold_call(conn, free_send, free_drop, b) == 0)
        return;
    free_send(conn, b);
}

/* ---- adding rows and blobs --------------------------------------------------- */

static const char *type_name(int sqltype) {
    switch (sqltype) {
    case FFBP_SQL_TIME_TZ:
    case FFBP_SQL_TIME_TZ_EX:
        return "TIME WITH TIME ZONE";
    case FFBP_SQL_TIMESTAMP_TZ:
    case FFBP_SQL_TIMESTAMP_TZ_EX:
        return "TIMESTAMP WITH TIME ZONE";
    default:
        return NULL;
    }
}

static uint64_t id_value(const uint8_t id[8]) {
    return (uint64_t)ffbp_be32_get(id) << 32 | ffbp_be32_get(id + 4);
}

/* Check a bound parameter against the batch format. */
static int check_param(ffb_batch *b, size_t i, size_t *blob_out) {
    ffb_conn *conn = b->conn;
    const ffb__param *pa = &b->stmt->params[i];
    *blob_out = NO_ROW;
    if (!pa->set)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "parameter %zu of %zu is not bound", i + 1,
                              b->n);
    if (pa->is_null)
        return 0;
    const ffbp_item *it = &b->items[i];
    if (!items_equal(&pa->item, it)) {
        int sqltype = b->stmt->in.cols[i].sqltype;
        if (it->blr == FFBP_BLR_BLOB2)
            return ffb__error_set(
                &conn->err, FFB_E_INVAL,
                "parameter %zu (BLOB): in a batch a blob parameter takes an "
                "id from ffb_batch_add_blob(), bound with "
                "ffb_stmt_bind_blob_id(), or NULL - not the blob's contents",
                i + 1);
        const char *tn = type_name(sqltype);
        if (tn)
            return ffb__error_set(
                &conn->err, FFB_E_INVAL,
                "parameter %zu (%s) is bound as text, which the server "
                "converts; a batch sends every row in the described type "
                "and cannot carry it",
                i + 1, tn);
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "parameter %zu is bound with a type other than "
                              "the described one; every row of a batch uses "
                              "the described types",
                              i + 1);
    }
    if (it->blr == FFBP_BLR_QUAD)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "parameter %zu (ARRAY): a batch takes arrays "
                              "only as NULL",
                              i + 1);
    if (it->blr != FFBP_BLR_BLOB2)
        return 0;
    uint64_t id = id_value(pa->fixed);
    if (id == 0 || id > b->nblobs)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "parameter %zu (BLOB): the id is not one "
                              "ffb_batch_add_blob() returned since the last "
                              "execute of this batch",
                              i + 1);
    size_t k = (size_t)(id - 1);
    if (b->blobs[k].row != NO_ROW)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "parameter %zu (BLOB): blob %zu is already used "
                              "by row %zu; a batch blob goes into one row "
                              "only",
                              i + 1, k + 1, b->blobs[k].row + 1);
    for (size_t j = 0; j < i; j++)
        if (b->scratch[j] == k)
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "parameter %zu (BLOB): blob %zu is already "
                                  "used by parameter %zu of this row",
                                  i + 1, k + 1, j + 1);
    *blob_out = k;
    return 0;
}

/* Rows and blobs belong to the next execution once the last has ended. */
static int not_running(ffb_batch *b) {
    if (!b->running)
        return 0;
    return ffb__error_set(&b->conn->err, FFB_E_STATE,
                          "the batch's execution has not ended: add rows "
                          "once its result is in");
}

int ffb_batch_add(ffb_batch *b) {
    if (!b || b->freed)
        return FFB_E_INVAL;
    ffb_conn *conn = b->conn;
    int rc = not_running(b);
    if (rc == 0)
        rc = check_stmt(b);
    if (rc < 0)
        return rc;
    uint64_t need = b->aligned;
    for (size_t i = 0; i < b->n; i++) {
        rc = check_param(b, i, &b->scratch[i]);
        if (rc < 0)
            return rc;
        if (b->scratch[i] != NO_ROW)
            need += b->blobs[b->scratch[i]].logical;
    }
    if (conn->protocol >= 16 && need > b->limit)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "the row and its blobs (%llu bytes) do not fit "
                              "the batch's server buffer (%u bytes): raise "
                              "buffer_bytes",
                              (unsigned long long)need, (unsigned)b->limit);
    /* Room for the row, a new part if the server buffer would overflow. */
    if ((rc = grow(conn, (void **)&b->row_off, &b->rows_cap, b->nrows + 1,
                   sizeof(size_t))) < 0 ||
        (rc = grow(conn, (void **)&b->parts, &b->parts_cap, b->nparts + 1,
                   sizeof(bpart))) < 0 ||
        (rc = grow(conn, (void **)&b->brefs, &b->brefs_cap,
                   b->nbrefs + b->n, sizeof(bref))) < 0)
        return rc;
    bpart *pt = b->nparts ? &b->parts[b->nparts - 1] : NULL;
    if (!pt || (pt->nrows > 0 && pt->bytes + need > b->limit)) {
        pt = &b->parts[b->nparts++];
        pt->first_row = b->nrows;
        pt->nrows = 0;
        pt->bytes = 0;
    }

    /* Encode the message (protocol 13+ form, as op_execute sends it). */
    size_t start = b->msgs.len, nbrefs = b->nbrefs;
    ffbp_writer *w = &b->msgs;
    size_t bm = ffbp_msg_begin(w, b->n);
    for (size_t i = 0; i < b->n; i++) {
        const ffb__param *pa = &b->stmt->params[i];
        if (pa->is_null) {
            ffbp_msg_set_null(w, bm, i);
            continue;
        }
        if (pa->item.blr == FFBP_BLR_BLOB2) {
            /* the id is replaced by the batch blob's at execute */
            b->brefs[b->nbrefs].off = w->len;
            b->brefs[b->nbrefs].blob = b->scratch[i];
            b->nbrefs++;
        }
        ffb__put_param(w, pa);
    }
    if (w->failed) {
        w->failed = 0;
        w->len = start;
        b->nbrefs = nbrefs;
        if (pt->nrows == 0)
            b->nparts--;
        return nomem(conn);
    }
    b->row_off[b->nrows] = start;
    for (size_t i = 0; i < b->n; i++)
        if (b->scratch[i] != NO_ROW)
            b->blobs[b->scratch[i]].row = b->nrows;
    b->nrows++;
    pt->nrows++;
    pt->bytes += need;
    return 0;
}

/* A blob of `n` pieces: segments of a segmented blob (each split at 65535
   bytes), or consecutive chunks of a stream blob. */
static int add_blob_parts(ffb_batch *b, const void *const *parts,
                          const size_t *lens, size_t n, int segmented,
                          uint8_t id_out[8]) {
    if (!b || b->freed || ((!parts || !lens) && n) || !id_out)
        return FFB_E_INVAL;
    ffb_conn *conn = b->conn;
    if (not_running(b) < 0)
        return conn->err.code;
    if (!b->has_blobs)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "the batch's statement has no blob parameters");
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (!parts[i] && lens[i])
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "blob part %zu is NULL but %zu bytes long",
                                  i, lens[i]);
        if (lens[i] > 0x7FFFFFFFu - 65536u - len) /* no wrap-around */
            return ffb__error_set(&conn->err, FFB_E_INVAL,
                                  "a batch blob must be smaller than 2 GiB");
        len += lens[i];
    }
    int rc = grow(conn, (void **)&b->blobs, &b->blobs_cap, b->nblobs + 1,
                  sizeof(bblob));
    if (rc < 0)
        return rc;
    ffbp_writer *w = &b->blob_data;
    size_t off = w->len;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = parts[i];
        if (segmented) {
            /* [uint16 LE length][bytes], at most 65535 bytes each. */
            size_t at = 0;
            do {
                size_t k = lens[i] - at < SEGMENT_MAX ? lens[i] - at
                                                      : SEGMENT_MAX;
                uint8_t h[2] = {(uint8_t)k, (uint8_t)(k >> 8)};
                ffbp_put_raw(w, h, 2);
                ffbp_put_raw(w, p + at, k);
                at += k;
            } while (at < lens[i]);
        } else if (lens[i]) {
            ffbp_put_raw(w, p, lens[i]);
        }
    }
    if (w->failed) {
        w->failed = 0;
        w->len = off;
        return nomem(conn);
    }
    uint64_t logical = blob_logical(w->data + off, w->len - off, segmented);
    if (conn->protocol >= 16 && logical + b->aligned > b->limit) {
        w->len = off;
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "a blob of %zu bytes does not fit the batch's "
                              "server buffer (%u bytes): raise buffer_bytes",
                              len, (unsigned)b->limit);
    }
    bblob *bl = &b->blobs[b->nblobs++];
    memset(bl, 0, sizeof(*bl));
    bl->off = off;
    bl->len = w->len - off;
    bl->segmented = segmented != 0;
    bl->logical = (uint32_t)logical;
    bl->row = NO_ROW;
    /* Batch blob ids: low word 1, 2, 3... (restarting after each
       execute), high word 0, as fbclient numbers them. */
    ffbp_be32_put(id_out, (uint32_t)((uint64_t)b->nblobs >> 32));
    ffbp_be32_put(id_out + 4, (uint32_t)b->nblobs);
    return 0;
}

int ffb_batch_add_blob(ffb_batch *b, const void *data, size_t len,
                       int segmented, uint8_t id_out[8]) {
    const void *parts[1] = {data ? data : ""};
    return add_blob_parts(b, parts, &len, len || segmented ? 1 : 0, segmented,
                          id_out);
}

int ffb_batch_add_blob_segments(ffb_batch *b, const void *const *segments,
                                const size_t *lens, size_t n,
                                uint8_t id_out[8]) {
    return add_blob_parts(b, segments, lens, n, 1, id_out);
}

/* ---- results --------------------------------------------------------------------- */

static int results_reserve(ffb_batch *b) {
    int rc = grow(b->conn, (void **)&b->status, &b->status_cap, b->nrows,
                  sizeof(int64_t));
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < b->nrows; i++)
        b->status[i] = -2;
    return 0;
}

static void row_failed(ffb_batch *b, size_t row) {
    b->status[row] = -1;
    if (!b->failed || row < b->first_failed) {
        b->failed = 1;
        b->first_failed = row;
    }
}

/* Keep the error of a failed row (up to `detailed` per execute). */
static int keep_row_error(ffb_batch *b, size_t row, const ffbp_status *st) {
    ffb_conn *conn = b->conn;
    if (b->nerrs >= b->detailed)
        return 0;
    int rc = grow(conn, (void **)&b->errs, &b->errs_cap, b->nerrs + 1,
                  sizeof(row_err));
    if (rc < 0)
        return rc;
    ffb_error *e = ffb__malloc(conn->alloc, sizeof(*e));
    if (!e)
        return nomem(conn);
    ffb__error_from_status(e, FFB_E_SERVER, st, NULL);
    /* Kept sorted by row (answers come in row order). */
    size_t at = b->nerrs;
    while (at > 0 && b->errs[at - 1].row > row)
        at--;
    memmove(&b->errs[at + 1], &b->errs[at],
            (b->nerrs - at) * sizeof(row_err));
    b->errs[at].row = row;
    b->errs[at].err = e;
    b->nerrs++;
    return 0;
}

static const row_err *find_error(const ffb_batch *b, size_t row) {
    size_t lo = 0, hi = b->nerrs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->errs[mid].row < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->nerrs && b->errs[lo].row == row ? &b->errs[lo] : NULL;
}

size_t ffb_batch_row_count(const ffb_batch *b) { return b ? b->res_rows : 0; }

int64_t ffb_batch_row_status(const ffb_batch *b, size_t i) {
    if (!b || i >= b->res_rows)
        return FFB_E_INVAL;
    return b->status[i];
}

const ffb_error *ffb_batch_row_error(const ffb_batch *b, size_t i) {
    if (!b || i >= b->res_rows)
        return NULL;
    const row_err *e = find_error(b, i);
    return e ? e->err : NULL;
}

/* ---- reply handlers -------------------------------------------------------------- */


static int finish(ffb__pending *p, int rc) {
    if (p->sync && p->completes)
        p->sync->done = 1;
    batch_unref(p->ctx);
    return rc;
}

/* A request failed: record it in the write's sync (first failure wins);
   a request in a transaction whose start failed reports that. */
static void fail(ffb_conn *conn, ffb__pending *p, const ffbp_status *st,
                 const char *prefix) {
    if (!p->sync || p->sync->rc != 0)
        return;
    if (p->tx && p->tx->state == FFB__TX_FAILED && p->tx->start_err) {
        ffb_error *e = ffb__sync_error(conn, p->sync);
        *e = *p->tx->start_err;
        e->code = FFB_E_ABORTED;
        p->sync->rc = FFB_E_ABORTED;
        return;
    }
    ffb__sync_fail_status(conn, p->sync, FFB_E_SERVER, st, prefix);
}

static int status_has(const ffbp_status *st, uint32_t gds) {
    for (size_t i = 0; i < st->n; i++)
        if (st->args[i].type == FFBP_ARG_GDS && (uint32_t)st->args[i].num == gds)
            return 1;
    return 0;
}

/* op_batch_create, op_batch_msg, op_batch_blob_stream, op_batch_sync,
   op_ping, and the Firebird 3 blob requests: a plain op_response. */
static int plain_reply(ffb_conn *conn, const ffbp_packet *pkt,
                       ffb__pending *p) {
    ffb_batch *b = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return finish(p, FFB_E_PROTO);
    const char *what = NULL;
    switch (p->op) {
    case FFBP_OP_BATCH_CREATE:
        what = "creating the batch failed";
        break;
    case FFBP_OP_BATCH_MSG:
        what = "adding rows to the batch failed";
        break;
    case FFBP_OP_BATCH_BLOB_STREAM:
        what = "adding blobs to the batch failed";
        break;
    case FFBP_OP_CREATE_BLOB2:
        what = "creating a blob of the batch failed";
        break;
    case FFBP_OP_CLOSE_BLOB:
    case FFBP_OP_PUT_SEGMENT:
    case FFBP_OP_BATCH_SEGMENTS:
        what = "writing a blob of the batch failed";
        break;
    default:
        break;
    }
    if (ffb__status_is_error(&r->status)) {
        fail(conn, p, &r->status, what);
        if (status_has(&r->status, GDS_BAD_BATCH_HANDLE) ||
            p->op == FFBP_OP_BATCH_CREATE)
            b->created = 0;
        return finish(p, 0);
    }
    if (p->op == FFBP_OP_BATCH_CREATE) {
        b->created = 1;
    } else if (p->op == FFBP_OP_CREATE_BLOB2) {
        bblob *bl = &b->blobs[p->gen];
        bl->handle = r->object;
        ffbp_be32_put(bl->real_id, (uint32_t)(r->blob_id >> 32));
        ffbp_be32_put(bl->real_id + 4, (uint32_t)r->blob_id);
    }
    return finish(p, 0);
}

/* op_batch_cs of part p->gen (or an op_response refusing the execute). */
static int cs_reply(ffb_conn *conn, const ffbp_packet *pkt, ffb__pending *p) {
    ffb_batch *b = p->ctx;
    if (pkt->op != FFBP_OP_BATCH_CS) {
        const ffbp_response *r = ffb__reply_response(conn, pkt, p);
        if (!r)
            return finish(p, FFB_E_PROTO);
        if (!ffb__status_is_error(&r->status))
            /* Only an error may take the place of op_batch_cs. */
            return finish(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                            "expected op_batch_cs, got an "
                                            "op_response without an error"));
        fail(conn, p, &r->status, "executing the batch failed");
        if (status_has(&r->status, GDS_BAD_BATCH_HANDLE))
            b->created = 0;
        b->exec_failed = 1;
        /* Refused as a whole (e.g. a blob stream error): its rows report
           -1 without an error of their own; those before the point of
           failure may have run (there is no batch-level savepoint). */
        const bpart *pt = &b->parts[p->gen];
        for (size_t i = 0; i < pt->nrows; i++)
            b->status[pt->first_row + i] = -1;
        if (b->res_rows < pt->first_row + pt->nrows)
            b->res_rows = pt->first_row + pt->nrows;
        return finish(p, 0);
    }
    const ffbp_batch_cs *cs = &pkt->u.batch_cs;
    const bpart *pt = &b->parts[p->gen];
    if (cs->reccount > pt->nrows ||
        (cs->updates != 0 && cs->updates != cs->reccount))
        return finish(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                        "op_batch_cs reports %u messages (%u "
                                        "counts) for %zu sent",
                                        cs->reccount, cs->updates,
                                        pt->nrows));
    size_t base = pt->first_row;
    for (uint32_t i = 0; i < cs->reccount; i++) {
        int64_t v = -2;
        if (cs->updates)
            v = (int32_t)ffbp_be32_get(cs->counts + 4 * (size_t)i);
        if (v == -1)
            row_failed(b, base + i);
        else
            b->status[base + i] = v;
    }
    ffbp_reader r;
    ffbp_reader_init(&r, cs->detail, cs->detail_len);
    ffbp_status_arg args[64];
    for (uint32_t v = 0; v < cs->vectors; v++) {
        uint32_t pos;
        ffbp_status st = {args, sizeof(args) / sizeof(args[0]), 0, 0};
        if (ffbp_get_u32(&r, &pos) != FFBP_OK ||
            ffbp_get_status(&r, &st) != FFBP_OK || pos >= cs->reccount)
            return finish(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                            "malformed op_batch_cs"));
        row_failed(b, base + pos);
        if (keep_row_error(b, base + pos, &st) < 0)
            return finish(p, FFB_E_NOMEM);
    }
    for (uint32_t e = 0; e < cs->errors; e++) {
        uint32_t pos = ffbp_be32_get(cs->simple + 4 * (size_t)e);
        if (pos >= cs->reccount)
            return finish(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                            "malformed op_batch_cs"));
        row_failed(b, base + pos);
    }
    b->res_rows = base + cs->reccount;
    if (b->multi_error && cs->reccount < pt->nrows) {
        /* Messages the server did not take (an op_batch_msg refused):
           later parts ran, so these rows are in range; they failed. */
        for (size_t i = base + cs->reccount; i < base + pt->nrows; i++)
            row_failed(b, i);
        b->res_rows = base + pt->nrows;
    }
    return finish(p, 0);
}

/* Firebird 3: op_execute / op_execute2 of row p->gen. */
static int row_exec_reply(ffb_conn *conn, const ffbp_packet *pkt,
                          ffb__pending *p) {
    ffb_batch *b = p->ctx;
    if (pkt->op == FFBP_OP_SQL_RESPONSE && p->op == FFBP_OP_EXECUTE2) {
        if (++p->got > 1) /* one output row, then op_response */
            return finish(p, ffb__error_set(&conn->err, FFB_E_PROTO,
                                            "the server sent more than one "
                                            "op_sql_response to op_execute2"));
        return 1; /* output of EXECUTE PROCEDURE: not kept */
    }
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return finish(p, FFB_E_PROTO);
    if (ffb__status_is_error(&r->status)) {
        if (p->tx && p->tx->state == FFB__TX_FAILED) {
            fail(conn, p, &r->status, NULL);
            return finish(p, 0);
        }
        row_failed(b, p->gen);
        if (keep_row_error(b, p->gen, &r->status) < 0)
            return finish(p, FFB_E_NOMEM);
    }
    return finish(p, 0);
}

/* Firebird 3: op_info_sql(records) after row p->gen. */
static int row_records_reply(ffb_conn *conn, const ffbp_packet *pkt,
                             ffb__pending *p) {
    ffb_batch *b = p->ctx;
    const ffbp_response *r = ffb__reply_response(conn, pkt, p);
    if (!r)
        return finish(p, FFB_E_PROTO);
    if (!ffb__status_is_error(&r->status) && b->status[p->gen] != -1) {
        ffbp_sqlinfo d;
        memset(&d, 0, sizeof(d));
        d.records[0] = d.records[1] = d.records[2] = d.records[3] = -1;
        if (ffbp_parse_describe(r->data.p, r->data.len, &d) == FFBP_OK &&
            (d.records[1] >= 0 || d.records[2] >= 0 || d.records[3] >= 0)) {
            int64_t n = 0;
            for (int i = 1; i < 4; i++)
                if (d.records[i] > 0)
                    n += d.records[i];
            b->status[p->gen] = n;
        }
    }
    return finish(p, 0);
}

/* ---- sending ---------------------------------------------------------------------- */

/* Queue the packet in `w` with a handler; the pending entry is returned
   (NULL: the connection is broken). */
static ffb__pending *queue_req(ffb_batch *b, ffbp_writer *w, int32_t op,
                          ffb__reply_fn fn, int deferred, ffb__sync *sync,
                          ffb_tx *tx) {
    ffb_conn *conn = b->conn;
    int rc = ffb__engine_queue(conn, w, !deferred);
    ffbp_writer_reset(w);
    if (rc < 0) {
        ffb__engine_fail(conn, rc);
        return NULL;
    }
    ffb__pending *p = ffb__engine_expect(conn, op, fn, b);
    if (!p) {
        ffb__engine_fail(conn, FFB_E_NOMEM);
        return NULL;
    }
    p->deferred = deferred;
    p->sync = sync;
    p->tx = tx;
    b->refs++;
    return p;
}

static int broken(ffb_conn *conn) {
    return conn->err.code < 0 ? conn->err.code : FFB_E_FATAL;
}

/* End the step whose last request is `p`: with the commit option and on
   the last part, op_commit(tx) rides in it and its answer completes the
   step. The step's execute named the transaction just before, so the
   commit can always name it too. */
static int end_step(ffb_batch *b, ffb_tx *tx, ffb__pending *p, int last) {
    if (!(b->commit && last)) {
        p->completes = 1;
        return 0;
    }
    int rc = ffb__tx_send_end(tx, FFBP_OP_COMMIT, &b->step);
    if (rc == FFB__LATER)
        rc = ffb__fatal(b->conn, FFB_E_PROTO,
                        "internal error: the batch's commit cannot name its "
                        "transaction");
    return rc;
}

/* Firebird 4+: op_batch_create + op_batch_sync (op_ping on 16), answered
   before any message travels (reference 03, C.4.9). */
static int queue_create(ffb_batch *b, ffbp_writer *w) {
    ffb_conn *conn = b->conn;
    /* Parameter block: version 1, wide tags, 4-byte values (C.4.2); the
       limits only when they differ from the server's defaults, the blob
       policy only when this round carries blobs (as fbclient). */
    b->pb[0] = FFBP_BATCH_VERSION1;
    b->pb_len = 1;
    pb_int(b, FFBP_BATCH_TAG_MULTIERROR, (uint32_t)b->multi_error);
    pb_int(b, FFBP_BATCH_TAG_RECORD_COUNTS, (uint32_t)b->counts);
    if (b->buffer_bytes != DEFAULT_BUFFER)
        pb_int(b, FFBP_BATCH_TAG_BUFFER_BYTES_SIZE, b->buffer_bytes);
    if (b->detailed != DEFAULT_DETAILED)
        pb_int(b, FFBP_BATCH_TAG_DETAILED_ERRORS, b->detailed);
    b->policy_sent = b->nblobs > 0;
    if (b->policy_sent)
        pb_int(b, FFBP_BATCH_TAG_BLOB_POLICY, 3 /* BLOB_STREAM */);
    ffbp_put_batch_create(w, b->stmt->handle, b->blr.data, b->blr.len,
                          b->msglen, b->pb, b->pb_len);
    if (!queue_req(b, w, FFBP_OP_BATCH_CREATE, plain_reply, 1, &b->step,
                   NULL))
        return broken(conn);
    int op = conn->protocol >= 17 ? FFBP_OP_BATCH_SYNC : FFBP_OP_PING;
    ffbp_put_empty_op(w, op);
    ffb__pending *p = queue_req(b, w, op, plain_reply, 0, &b->step, NULL);
    if (!p)
        return broken(conn);
    p->completes = 1;
    return 0;
}

/* The part holding `row`: parts are contiguous row ranges, in order. */
static size_t part_of_row(const ffb_batch *b, size_t row) {
    size_t lo = 0, hi = b->nparts;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->parts[mid].first_row <= row)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Blob indices of each part, in order (counting sort by part). */
static int blobs_by_part(ffb_batch *b, size_t **order, size_t **start) {
    ffb_conn *conn = b->conn;
    *order = ffb__malloc(conn->alloc, (b->nblobs ? b->nblobs : 1) *
                                          sizeof(size_t));
    *start = ffb__malloc(conn->alloc, (b->nparts + 1) * sizeof(size_t));
    if (!*order || !*start) {
        ffb__free(conn->alloc, *order);
        ffb__free(conn->alloc, *start);
        return nomem(conn);
    }
    size_t *st = *start;
    memset(st, 0, (b->nparts + 1) * sizeof(size_t));
    /* part of a row: parts are contiguous row ranges */
    for (size_t i = 0; i < b->nblobs; i++) {
        if (b->blobs[i].row == NO_ROW)
            continue;
        st[part_of_row(b, b->blobs[i].row) + 1]++;
    }
    for (size_t p = 0; p < b->nparts; p++)
        st[p + 1] += st[p];
    size_t *fill = ffb__malloc(conn->alloc, (b->nparts + 1) * sizeof(size_t));
    if (!fill) {
        ffb__free(conn->alloc, *order);
        ffb__free(conn->alloc, *start);
        return nomem(conn);
    }
    memcpy(fill, st, (b->nparts + 1) * sizeof(size_t));
    for (size_t i = 0; i < b->nblobs; i++) {
        if (b->blobs[i].row == NO_ROW)
            continue;
        (*order)[fill[part_of_row(b, b->blobs[i].row)]++] = i;
    }
    ffb__free(conn->alloc, fill);
    return 0;
}

static size_t row_end(const ffb_batch *b, size_t row) {
    return row + 1 < b->nrows ? b->row_off[row + 1] : b->msgs.len;
}

static const uint8_t BPB_SEGMENTED[] = {1, 3, 1, 0}; /* isc_bpb_type 0 */
static const uint8_t BPB_STREAM[] = {1, 3, 1, 1};    /* isc_bpb_type 1 */

/* Queue the blob stream of part `k`: whole blobs, packets of about
   PACKET_MAX logical bytes (a larger blob goes alone). */
static int queue_blob_stream(ffb_batch *b, ffbp_writer *w, const size_t *order,
                             size_t from, size_t to, ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    ffbp_stream_blob sb[64];
    size_t nsb = 0;
    uint64_t bytes = 0;
    for (size_t i = from; i <= to; i++) {
        if (nsb && (i == to || nsb == sizeof(sb) / sizeof(sb[0]) ||
                    bytes + b->blobs[order[i]].logical > PACKET_MAX)) {
            if (ffbp_put_batch_blob_stream(w, b->stmt->handle, sb, nsb) !=
                FFBP_OK)
                return ffb__error_set(&conn->err, FFB_E_INVAL,
                                      "cannot encode the batch blob stream");
            if (!queue_req(b, w, FFBP_OP_BATCH_BLOB_STREAM, plain_reply, 1, sync,
                      NULL))
                return broken(conn);
            nsb = 0;
            bytes = 0;
        }
        if (i == to)
            break;
        const bblob *bl = &b->blobs[order[i]];
        ffbp_stream_blob *s = &sb[nsb++];
        s->id = (uint64_t)order[i] + 1;
        s->bpb = bl->segmented ? BPB_SEGMENTED : NULL;
        s->bpb_len = bl->segmented ? sizeof(BPB_SEGMENTED) : 0;
        s->data = b->blob_data.data + bl->off;
        s->len = bl->len;
        s->segmented = bl->segmented;
        bytes += bl->logical;
    }
    return 0;
}

/* Queue the messages of rows [first, first + n) in op_batch_msg packets of
   up to PACKET_MAX bytes. */
static int queue_messages(ffb_batch *b, ffbp_writer *w, size_t first,
                          size_t n, ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    size_t r = first, end = first + n;
    while (r < end) {
        size_t from = b->row_off[r], to = row_end(b, r);
        size_t count = 1;
        r++;
        while (r < end && row_end(b, r) - from <= PACKET_MAX) {
            to = row_end(b, r);
            count++;
            r++;
        }
        ffbp_put_batch_msg(w, b->stmt->handle, (uint32_t)count,
                           b->msgs.data + from, to - from);
        if (!queue_req(b, w, FFBP_OP_BATCH_MSG, plain_reply, 1, sync, NULL))
            return broken(conn);
    }
    return 0;
}

/* Firebird 3: the data and close of every created blob. */
static int fb3_write_blobs(ffb_batch *b, ffbp_writer *w, ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    for (size_t i = 0; i < b->nblobs; i++) {
        const bblob *bl = &b->blobs[i];
        if (bl->row == NO_ROW)
            continue;
        const uint8_t *d = b->blob_data.data + bl->off;
        if (bl->len) {
            /* op_batch_segments carries the records as they are; a stream
               blob takes its bytes in one op_put_segment (any size). */
            int op = bl->segmented ? FFBP_OP_BATCH_SEGMENTS
                                   : FFBP_OP_PUT_SEGMENT;
            ffbp_put_segment(w, op, bl->handle,
                             (uint16_t)(bl->len > 0xFFFF ? 0xFFFF : bl->len),
                             d, bl->len);
            if (!queue_req(b, w, op, plain_reply, 0, sync, NULL))
                return broken(conn);
        }
        ffbp_put_object_op(w, FFBP_OP_CLOSE_BLOB, bl->handle);
        if (!queue_req(b, w, FFBP_OP_CLOSE_BLOB, plain_reply, 0, sync, NULL))
            return broken(conn);
    }
    return 0;
}

/*
 * The execution as a sequence of steps, each queued when the answers to
 * the one before are in (the engine calls x_send after every answer while
 * the execution is the head of the hold queue: requests made after it
 * wait behind it, so a commit queued after the execute follows it on the
 * wire). A step returns STEP_QUEUED (its answers are owed), STEP_NEXT (go
 * on to the next phase now), FFB__LATER (the transaction's handle is not
 * known yet) or STEP_END (b->step.rc says how it ended).
 */
enum { STEP_NEXT = 2, STEP_QUEUED = 3, STEP_END = 4 };
enum { X_START = 0, X_CREATED, X_PARTS, X_PART_DONE, X_DRAIN,   /* FB4 */
       X3_BLOBS, X3_BLOBS_DONE, X3_CHUNK, X3_CHUNK_DONE };       /* FB3 */

static int step_fail(ffb_batch *b, int rc) {
    if (b->step.rc == 0) {
        ffb_error *e = ffb__sync_error(b->conn, &b->step);
        if (e != &b->conn->err)
            *e = b->conn->err;
        b->step.rc = rc;
    }
    return STEP_END;
}

/* A step failed on the client after some of its requests were queued:
   their answers are still owed and would land in the next execution. An
   op_batch_sync (op_ping on protocol 16) behind them is answered after all
   of them - deferred ones included - and ends the execution. */
static int step_fail_drain(ffb_batch *b, ffbp_writer *w, int rc) {
    ffb_conn *conn = b->conn;
    step_fail(b, rc);
    int owed = 0;
    for (size_t i = 0; i < conn->fifo_len && !owed; i++)
        owed = conn->fifo[(conn->fifo_head + i) % conn->fifo_cap].ctx == b;
    if (!owed || conn->state != FFB__ST_READY)
        return STEP_END;
    ffbp_writer_reset(w);
    int op = conn->protocol >= 17 ? FFBP_OP_BATCH_SYNC : FFBP_OP_PING;
    ffbp_put_empty_op(w, op);
    ffb__pending *p = queue_req(b, w, op, plain_reply, 0, &b->step, NULL);
    if (!p)
        return STEP_END;
    p->completes = 1;
    b->phase = X_DRAIN;
    return STEP_QUEUED;
}

/* Firebird 4+. */
static int step_fb4(ffb_batch *b, ffbp_writer *w) {
    ffb_conn *conn = b->conn;
    ffb_tx *tx = b->x_tx;
    int rc;
    switch (b->phase) {
    case X_START:
        if (b->created && b->nblobs > 0 && !b->policy_sent) {
            /* Created without a blob policy: release it (the answer is
               held back and rides along) and create it again with one. */
            ffbp_put_object_op(w, FFBP_OP_BATCH_RLS, b->stmt->handle);
            rc = ffb__queue_fire_and_forget(conn, w, FFBP_OP_BATCH_RLS, 1);
            ffbp_writer_reset(w);
            if (rc < 0)
                return step_fail(b, rc);
            b->created = 0;
        }
        b->phase = X_CREATED;
        if (b->created)
            return STEP_NEXT;
        return (rc = queue_create(b, w)) < 0 ? step_fail(b, rc) : STEP_QUEUED;
    case X_CREATED:
        if (b->step.rc < 0) {
            if (b->stmt->prepare_err && b->step.rc == FFB_E_SERVER) {
                /* The lazy prepare in front failed: that is the cause. */
                ffb_error *e = ffb__sync_error(conn, &b->step);
                *e = *b->stmt->prepare_err;
            }
            return STEP_END;
        }
        if (!b->created) {
            ffb__error_set(&conn->err, FFB_E_PROTO,
                           "the server confirmed no batch");
            return step_fail(b, FFB_E_PROTO);
        }
        if ((rc = blobs_by_part(b, &b->x_order, &b->x_start)) < 0)
            return step_fail(b, rc);
        b->x_part = 0;
        b->phase = X_PARTS;
        return STEP_NEXT;
    case X_PARTS:
        /* Without multi_error each part waits for the one before (the
           batch stops at the first failing row); with it every part goes
           in one write: the server runs the op_batch_exec of a part before
           it reads the messages of the next. */
        for (;;) {
            size_t k = b->x_part;
            const bpart *pt = &b->parts[k];
            uint16_t txh;
            if ((rc = ffb__tx_handle(tx, &txh)) != 0)
                return rc == FFB__LATER ? rc : step_fail(b, rc);
            if ((rc = queue_blob_stream(b, w, b->x_order, b->x_start[k],
                                        b->x_start[k + 1], &b->step)) < 0 ||
                (rc = queue_messages(b, w, pt->first_row, pt->nrows,
                                     &b->step)) < 0)
                return step_fail_drain(b, w, rc);
            ffbp_put_batch_exec(w, b->stmt->handle, txh);
            ffb__pending *p = queue_req(b, w, FFBP_OP_BATCH_EXEC, cs_reply, 0,
                                        &b->step, tx);
            if (!p)
                return step_fail(b, broken(conn));
            p->gen = (uint32_t)k;
            int last = k + 1 == b->nparts;
            if (!last && b->multi_error) {
                b->x_part++;
                continue;
            }
            if ((rc = end_step(b, tx, p, last)) < 0)
                return step_fail_drain(b, w, rc);
            b->phase = X_PART_DONE;
            return STEP_QUEUED;
        }
    case X_DRAIN:
        return STEP_END; /* step_fail said why */
    default: /* X_PART_DONE */
        if (b->step.rc < 0 || b->failed)
            return STEP_END; /* the server stopped at the failed row */
        if (++b->x_part == b->nparts)
            return STEP_END;
        b->phase = X_PARTS;
        return STEP_NEXT;
    }
}

/* Firebird 3: the blobs the rows use are created first (their ids go into
   the messages); then the rows go as op_execute, in writes of up to
   FB3_WRITE_MAX bytes. */
static int step_fb3(ffb_batch *b, ffbp_writer *w) {
    ffb_conn *conn = b->conn;
    ffb_stmt *s = b->stmt;
    ffb_tx *tx = b->x_tx;
    int rc;
    switch (b->phase) {
    case X_START: {
        int used = 0;
        for (size_t i = 0; i < b->nblobs && !used; i++)
            used = b->blobs[i].row != NO_ROW;
        b->x_blob = 0;
        b->x_last = NULL;
        b->x_row = 0;
        b->phase = used ? X3_BLOBS : X3_CHUNK;
        b->x_part = used; /* the blobs' data is still to be written */
        return STEP_NEXT;
    }
    case X3_BLOBS:
        for (; b->x_blob < b->nblobs; b->x_blob++) {
            size_t i = b->x_blob;
            if (b->blobs[i].row == NO_ROW)
                continue;
            /* The first create may name a lazily started transaction as
               the last object; it allocates a blob, so later ones need the
               handle (the step waits for it). */
            uint16_t txh;
            if ((rc = ffb__tx_handle(tx, &txh)) != 0)
                return rc == FFB__LATER ? rc : step_fail(b, rc);
            const bblob *bl = &b->blobs[i];
            ffbp_put_blob_open(w, FFBP_OP_CREATE_BLOB2,
                               bl->segmented ? BPB_SEGMENTED : BPB_STREAM, 4,
                               txh, 0);
            ffb__pending *p = queue_req(b, w, FFBP_OP_CREATE_BLOB2,
                                        plain_reply, 0, &b->step, tx);
            if (!p)
                return step_fail(b, broken(conn));
            p->gen = (uint32_t)i;
            conn->last_kind = FFB__LAST_OTHER;
            conn->last_obj = NULL;
        }
        /* The last create completes the step. */
        for (size_t i = conn->fifo_len; i-- > 0;) {
            ffb__pending *p =
                &conn->fifo[(conn->fifo_head + i) % conn->fifo_cap];
            if (p->op == FFBP_OP_CREATE_BLOB2 && p->ctx == b) {
                p->completes = 1;
                break;
            }
        }
        b->phase = X3_BLOBS_DONE;
        return STEP_QUEUED;
    case X3_BLOBS_DONE:
        if (b->step.rc < 0)
            return STEP_END;
        for (size_t i = 0; i < b->nbrefs; i++)
            memcpy(b->msgs.data + b->brefs[i].off,
                   b->blobs[b->brefs[i].blob].real_id, 8);
        b->phase = X3_CHUNK;
        return STEP_NEXT;
    case X3_CHUNK: {
        uint16_t txh;
        if ((rc = ffb__tx_handle(tx, &txh)) != 0)
            return rc == FFB__LATER ? rc : step_fail(b, rc);
        if (b->x_part && (rc = fb3_write_blobs(b, w, &b->step)) < 0)
            return step_fail_drain(b, w, rc);
        b->x_part = 0;
        int records = b->counts && (s->stmt_type == FFB_STMT_INSERT ||
                                    s->stmt_type == FFB_STMT_UPDATE ||
                                    s->stmt_type == FFB_STMT_DELETE);
        int exec2 = s->out.n > 0;
        size_t staged = conn->stage.len;
        ffb__pending *p = NULL;
        size_t row = b->x_row;
        for (; row < b->nrows && conn->stage.len - staged < FB3_WRITE_MAX;
             row++) {
            ffbp_execute e;
            memset(&e, 0, sizeof(e));
            e.op = exec2 ? FFBP_OP_EXECUTE2 : FFBP_OP_EXECUTE;
            e.stmt = s->handle;
            e.tx = txh;
            e.in_blr = b->blr.data;
            e.in_blr_len = b->blr.len;
            e.in_msg = b->msgs.data + b->row_off[row];
            e.in_msg_len = row_end(b, row) - b->row_off[row];
            e.out_blr = s->out.blr;
            e.out_blr_len = s->out.blr_len;
            ffbp_put_execute(w, &e, conn->protocol);
            p = queue_req(b, w, e.op, row_exec_reply, 0, &b->step, tx);
            if (!p)
                return step_fail(b, broken(conn));
            p->gen = (uint32_t)row;
            if (exec2) {
                p->items = s->out.items;
                p->nitems = s->out.n;
                p->off = s->scratch_off;
                p->len = s->scratch_len;
            }
            if (records) {
                static const uint8_t items[] = {FFBP_INFO_SQL_RECORDS,
                                                FFBP_INFO_END};
                ffbp_put_info(w, FFBP_OP_INFO_SQL, s->handle, 0, items,
                              sizeof(items), 64);
                p = queue_req(b, w, FFBP_OP_INFO_SQL, row_records_reply, 0,
                              &b->step, tx);
                if (!p)
                    return step_fail(b, broken(conn));
                p->gen = (uint32_t)row;
            }
        }
        b->x_row = row;
        if ((rc = end_step(b, tx, p, row == b->nrows)) < 0)
            return step_fail_drain(b, w, rc);
        b->phase = X3_CHUNK_DONE;
        return STEP_QUEUED;
    }
    default: /* X3_CHUNK_DONE */
        b->res_rows = b->x_row;
        if (b->step.rc < 0)
            return STEP_END;
        if (!b->multi_error && b->failed)
            return STEP_END; /* rows already written ran; no more go */
        if (b->x_row == b->nrows)
            return STEP_END;
        b->phase = X3_CHUNK;
        return STEP_NEXT;
    }
}

/* The execution ended: its outcome goes to the caller's sync. */
static void x_end(ffb_batch *b) {
    ffb_conn *conn = b->conn;
    int rc = b->step.rc;
    ffb__sync *done = b->x_done;
    round_clear(b);
    ffb__free(conn->alloc, b->x_order);
    ffb__free(conn->alloc, b->x_start);
    b->x_order = b->x_start = NULL;
    if (rc < 0) {
        ffb_error *e = ffb__sync_error(conn, done);
        const ffb_error *why = b->step.err ? b->step.err : &conn->err;
        if (e != why)
            *e = *why;
        done->rc = rc;
    } else if (b->failed) {
        const row_err *re = find_error(b, b->first_failed);
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "row %zu of the batch failed",
                 b->first_failed + 1);
        ffb_error *e = ffb__sync_error(conn, done);
        if (re) {
            /* The row's error, its message saying which row. */
            *e = *re->err;
            size_t pl = strlen(prefix), ml = strlen(re->err->message);
            if (pl + 2 + ml >= sizeof(e->message))
                ml = sizeof(e->message) - pl - 3;
            memcpy(e->message, prefix, pl);
            memcpy(e->message + pl, ": ", 2);
            memcpy(e->message + pl + 2, re->err->message, ml);
            e->message[pl + 2 + ml] = '\0';
        } else {
            ffb__error_set(e, FFB_E_SERVER, "%s", prefix);
        }
        done->rc = FFB_E_SERVER;
    }
    done->done = 1;
    ffb__free(conn->alloc, b->step.err);
    memset(&b->step, 0, sizeof(b->step));
    b->running = 0;
    ffb__tx_unref(b->x_tx);
    b->x_tx = NULL;
}

static int x_send(ffb_conn *conn, ffb__held *h) {
    ffb_batch *b = h->obj;
    if (b->waiting && !b->step.done)
        return FFB__LATER; /* the step's answers are owed */
    b->waiting = 0;
    b->step.done = 0;
    ffbp_writer w;
    ffbp_writer_init(&w, conn->alloc);
    int rc;
    do
        rc = conn->protocol >= 16 ? step_fb4(b, &w) : step_fb3(b, &w);
    while (rc == STEP_NEXT);
    ffbp_writer_free(&w);
    if (rc == STEP_QUEUED) {
        b->waiting = 1;
        return FFB__LATER;
    }
    if (rc == FFB__LATER)
        return rc;
    x_end(b);
    batch_unref(b);
    return 0;
}

static void x_drop(ffb_conn *conn, ffb__held *h, int rc) {
    ffb_batch *b = h->obj;
    ffb__sync_fail(conn, b->x_done, rc);
    b->running = 0;
    ffb__free(conn->alloc, b->step.err);
    memset(&b->step, 0, sizeof(b->step));
    ffb__free(conn->alloc, b->x_order);
    ffb__free(conn->alloc, b->x_start);
    b->x_order = b->x_start = NULL;
    ffb__tx_unref(b->x_tx);
    b->x_tx = NULL;
    batch_unref(b);
}

int ffb__batch_queue_execute(ffb_batch *b, ffb_tx *tx, ffb__sync *sync) {
    ffb_conn *conn = b->conn;
    if (tx->conn != conn)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "transaction of another connection");
    int rc = ffb__need_ready(conn);
    if (rc == 0 && b->running)
        rc = ffb__error_set(&conn->err, FFB_E_STATE,
                            "the batch's previous execution has not ended");
    if (rc == 0)
        rc = check_stmt(b);
    if (rc < 0)
        return rc;
    if (b->nrows > 0xFFFFFFFFu)
        return ffb__error_set(&conn->err, FFB_E_INVAL,
                              "a batch holds at most 2^32 - 1 rows");
    results_clear(b);
    if (b->nrows == 0) {
        round_clear(b);
        if (!b->commit) {
            sync->done = 1;
            return 0;
        }
        /* Nothing to run, but the transaction ends as asked. */
        return ffb__tx_queue_end(tx, FFBP_OP_COMMIT, sync);
    }
    if ((rc = results_reserve(b)) < 0)
        return rc;
    ffb__held *h = ffb__malloc(conn->alloc, sizeof(*h));
    if (!h)
        return ffb__fatal(conn, FFB_E_NOMEM, "out of memory");
    memset(h, 0, sizeof(*h));
    h->send = x_send;
    h->drop = x_drop;
    h->obj = b;
    h->sync = sync;
    b->refs++; /* the execution's */
    b->running = 1;
    b->phase = X_START;
    b->waiting = 0;
    memset(&b->step, 0, sizeof(b->step));
    b->step.own_err = 1;
    b->x_done = sync;
    b->x_tx = tx;
    tx->refs++;
    ffb__engine_hold(conn, h);
    ffb__engine_release(conn); /* its first step, unless others wait */
    return 0;
}

ffb_conn *ffb__batch_conn(const ffb_batch *b) {
    return b->freed ? NULL : b->conn;
}
