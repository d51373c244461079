/*
 * Every reply handler of an attached connection, driven by real blocking
 * API calls: prepare (and describe continuations), execute and fetch with
 * read-ahead, DML row counts, execute2, blob reads, seeks and inline blobs,
 * blob writes, batches, transactions and their info, database info, plans,
 * execute immediate, ping, the statement cache's lazy prepare, the
 * pipeline (queue / flush / next result, with and without callbacks) and
 * the queue twins (requests held until a handle is known, the prepare
 * chain, queued fetches, blob reads, plans, immediate with parameters,
 * batches, detach, and requests cancelled by a close).
 *
 * A scripted transport (ffb__conn_set_transport) serves the server side.
 * Up to the scenario's point under test an auto-responder answers every
 * request the client has flushed (it reads the connection's queue of
 * replies owed, so the prefix is always exactly right for the client), with
 * the answers a Firebird server gives, encoded by tests/support/srv.c. From
 * that point on every read takes the next piece of the fuzz input; when the
 * input runs out the server "closes the connection" (ffb_conn_feed_eof), so
 * nothing can hang.
 *
 * Input: byte 0 scenario, byte 1 protocol (bits 0-1: 16, 17, 19, 19) and
 * scenario flags (bits 2-7), byte 2 feeding: 0 = records (each read is
 * [uint16 big-endian length][bytes]), n = chunks of n bytes; then the
 * server's bytes.
 *
 * Properties: no crash, leak or sanitizer report; every call returns one of
 * its documented codes; a fatal code (<= FFB_E_FATAL) leaves the connection
 * broken with a message; a broken connection stays broken; the client never
 * keeps reading after EOF (a loop) and never reads more than the input can
 * feed.
 *
 * Environment:
 *   FFB_FUZZ_SQL_ONLY=1,3,7   run only these scenarios (others return)
 *   FFB_FUZZ_SQL_TRACE=1      print every read, answer and call
 *   FFB_FUZZ_SQL_LAX=nobreak,state,unsup,colinfo  do not stop on these known classes of
 *                             finding (see check()), to explore past them
 *   FFB_FUZZ_SQL_GEN=DIR      write the seed corpus (one valid answer stream
 *                             per scenario and variant, named by SHA-256)
 *                             into DIR, check each replays cleanly, exit
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "lib/internal.h"
#include "tests/fuzz/fuzz.h"
#include "tests/support/srv.h"

/* ---- scenarios ------------------------------------------------------------ */

enum {
    SC_PREPARE,    /* prepare + describe continuation, then use it */
    SC_SELECT,     /* execute a SELECT, fetch every row (read-ahead) */
    SC_DML,        /* INSERT with parameters, row counts (op_info_sql) */
    SC_EXEC2,      /* EXECUTE PROCEDURE / RETURNING: op_execute2 */
    SC_BLOB_READ,  /* open, info, read, seek, read_all */
    SC_BLOB_ROWS,  /* blobs of fetched rows (inline on protocol 19) */
    SC_BLOB_WRITE, /* create, write, close / cancel, bind the id */
    SC_BATCH,      /* op_batch_* with blobs, row statuses */
    SC_TX,         /* start, info, commit/rollback (retaining) */
    SC_DBINFO,     /* ffb_conn_db_info, ffb_conn_info_raw */
    SC_PLAN,       /* ffb_stmt_plan, legacy and explained */
    SC_IMMEDIATE,  /* ffb_conn_execute_immediate */
    SC_PING,       /* ping, detach */
    SC_PIPELINE,   /* queue executes + commit, flush, next result */
    SC_CACHE,      /* ffb_conn_prepare: cache hit, lazy remembered prepare */
    SC_QUEUE,      /* the queue twins: held requests, chains, cancelled */
    NSCENARIOS
};

static const char *const sc_names[NSCENARIOS] = {
    "prepare", "select", "dml",      "exec2", "blob_read",
    "blob_rows", "blob_write", "batch", "tx", "dbinfo",
    "plan",    "immediate", "ping",  "pipeline", "cache", "queue"};

/* Flags (byte 1, bits 2..7). */
#define F_A 0x04 /* small fetch size / conn_prepare / multi_error ... */
#define F_B 0x08 /* callbacks / commit option / big write ... */
#define F_C 0x10 /* errors in the valid answers / second round ... */

/* ---- described statements ------------------------------------------------- */

typedef struct spec {
    int stmt_type;
    const srv_var *out;
    size_t nout;
    const srv_var *in;
    size_t nin;
    uint32_t truncate_at; /* 0: the describe fits one answer */
} spec;

#define V(t, sub, sc, len, nm) {FFBP_SQL_##t, sub, sc, len, 1, nm}

static const srv_var COLS[] = {
    V(LONG, 0, 0, 4, "ID"),
    V(INT64, 0, -2, 8, "AMOUNT"),
    V(VARYING, 4, 0, 40, "NAME"),
    V(TEXT, 0, 0, 8, "CODE"),
    V(TIMESTAMP, 0, 0, 8, "TS"),
    V(TYPE_DATE, 0, 0, 4, "D"),
    V(TYPE_TIME, 0, 0, 4, "T"),
    V(DOUBLE, 0, 0, 8, "RATE"),
    V(SHORT, 0, 0, 2, "SMALL"),
    V(BOOLEAN, 0, 0, 1, "FLAG"),
    V(INT128, 0, 0, 16, "HUGE"),
    V(BLOB, 0, 0, 8, "BIN"),
    V(BLOB, 1, 4, 8, "MEMO"),
    V(FLOAT, 0, 0, 4, "F"),
};
#define NCOLS (sizeof(COLS) / sizeof(COLS[0]))

/* 40 columns: the describe is truncated at column 23. */
static srv_var WIDE[40];

static const srv_var BLOB_COLS[] = {
    V(LONG, 0, 0, 4, "ID"),
    V(BLOB, 0, 0, 8, "BIN"),
    V(BLOB, 1, 4, 8, "MEMO"),
    V(VARYING, 4, 0, 20, "NAME"),
};

static const srv_var INS_PARAMS[] = {
    V(LONG, 0, 0, 4, "ID"),
    V(VARYING, 4, 0, 40, "NAME"),
    V(TIMESTAMP, 0, 0, 8, "TS"),
    V(BLOB, 1, 4, 8, "MEMO"),
    V(INT64, 0, -2, 8, "AMOUNT"),
};

static const srv_var PROC_OUT[] = {
    V(LONG, 0, 0, 4, "NEW_ID"),
    V(VARYING, 4, 0, 32, "STATUS"),
    V(BLOB, 0, 0, 8, "DOC"),
    V(TIMESTAMP, 0, 0, 8, "AT"),
};

static const srv_var ONE_INT[] = {V(LONG, 0, 0, 4, "ID")};

#define ARR(a) a, sizeof(a) / sizeof(a[0])

static const spec SP_SELECT = {FFB_STMT_SELECT, ARR(COLS), ARR(ONE_INT), 0};
static spec SP_WIDE = {FFB_STMT_SELECT, WIDE, 40, ARR(ONE_INT), 23};
/* ... truncated at column 2: the continuation is the larger answer. */
static spec SP_WIDE2 = {FFB_STMT_SELECT, WIDE, 40, ARR(ONE_INT), 2};
static const spec SP_BLOBS = {FFB_STMT_SELECT, ARR(BLOB_COLS), NULL, 0, 0};
static const spec SP_INSERT = {FFB_STMT_INSERT, NULL, 0, ARR(INS_PARAMS), 0};
static const spec SP_INS1 = {FFB_STMT_INSERT, NULL, 0, ARR(ONE_INT), 0};
static const spec SP_PROC = {FFB_STMT_EXEC_PROCEDURE, ARR(PROC_OUT),
                             ARR(ONE_INT), 0};
static const spec SP_SEL3 = {FFB_STMT_SELECT, COLS, 3, NULL, 0, 0};

/* ---- blobs served ---------------------------------------------------------- */

/* Length, kind and bytes of the blob with a given id: up to 4300 bytes,
   stream when the id is odd. */
static size_t blob_len(uint64_t id) { return 100 + (size_t)(id % 7) * 700; }
static int blob_stream(uint64_t id) { return (int)(id & 1); }
static uint8_t blob_byte(uint64_t id, size_t i) {
    return (uint8_t)(id * 31 + i * 7 + (i >> 8));
}
#define SEG 600       /* segment size of segmented blobs */
#define GET_CHUNK 1500 /* bytes per op_get_segment answer */
#define INLINE_MAX 2000

static void blob_info(uint8_t *b, size_t *n, uint64_t id) {
    size_t len = blob_len(id);
    uint32_t segs = blob_stream(id) ? 1 : (uint32_t)((len + SEG - 1) / SEG);
    uint32_t maxseg = blob_stream(id) ? (uint32_t)len : (len < SEG ? (uint32_t)len : SEG);
    uint32_t v[3] = {segs, maxseg, (uint32_t)len};
    uint8_t items[3] = {4, 5, 6};
    size_t k = 0;
    for (int i = 0; i < 3; i++) {
        b[k++] = items[i];
        b[k++] = 4;
        b[k++] = 0;
        for (int j = 0; j < 4; j++)
            b[k++] = (uint8_t)(v[i] >> (8 * j));
    }
    b[k++] = 7;
    b[k++] = 1;
    b[k++] = 0;
    b[k++] = (uint8_t)blob_stream(id);
    b[k++] = FFBP_INFO_END;
    *n = k;
}

/* Segment records ([uint16 LE length][bytes]) of bytes [from, to). */
static void blob_records(ffbp_writer *w, uint64_t id, size_t from, size_t to) {
    size_t seg = blob_stream(id) ? GET_CHUNK : SEG;
    while (from < to) {
        size_t n = to - from;
        if (!blob_stream(id)) {
            /* Segments are fixed by the blob: [k*SEG, (k+1)*SEG). */
            size_t end = (from / SEG + 1) * SEG;
            if (n > end - from)
                n = end - from;
        } else if (n > seg) {
            n = seg;
        }
        uint8_t h[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
        ffbp_put_raw(w, h, 2);
        for (size_t i = 0; i < n; i++) {
            uint8_t c = blob_byte(id, from + i);
            ffbp_put_raw(w, &c, 1);
        }
        from += n;
    }
}

/* ---- the scripted server ---------------------------------------------------- */

#define MAXOBJ 32

typedef struct fz {
    ffb_conn *conn;
    int protocol;
    unsigned flags;
    int scenario;
    /* fuzz input */
    const uint8_t *in;
    size_t in_len, in_pos;
    size_t chunk; /* 0 = records */
    int fuzzing;  /* reads come from the input */
    int gen;      /* generating: the auto-responder answers all; record */
    ffbp_writer rec;
    size_t fuzz_reads, eof_reads, auto_reads;
    int trace;
    /* the previous call's view */
    int was_broken, ever_broken;
    /* auto-responder state */
    uint16_t next_tx, next_stmt, next_blob;
    uint64_t next_blob_id;
    const spec *desc;     /* answer to the next prepare */
    int plan;             /* op_info_sql asks for the plan: 1, explained 2 */
    uint32_t cursor_rows; /* rows of the next cursor */
    uint32_t batch_rows;  /* messages of the next op_batch_exec */
    const ffb_stmt *batch_stmt;
    int64_t seek_abs;
    int answer_errors;    /* the valid answers include server errors */
    uint32_t rows_cap;    /* rows per op_fetch answer: at most the smallest
                             count the client may have asked */
    struct {
        const void *obj;
        const spec *sp;
        uint32_t left, row;
        int64_t pos;
        uint64_t id;
    } obj[MAXOBJ];
    size_t nobj;
} fz;

static fz F;

static void *obj_slot(const void *obj) {
    for (size_t i = 0; i < F.nobj; i++)
        if (F.obj[i].obj == obj)
            return &F.obj[i];
    FUZZ_CHECK(F.nobj < MAXOBJ);
    memset(&F.obj[F.nobj], 0, sizeof(F.obj[0]));
    F.obj[F.nobj].obj = obj;
    return &F.obj[F.nobj++];
}
#define SLOT(o) ((__typeof__(&F.obj[0]))obj_slot(o))

static void put_u32le(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static size_t put_info_int(uint8_t *b, uint8_t item, uint32_t v) {
    b[0] = item;
    b[1] = 4;
    b[2] = 0;
    put_u32le(b + 3, v);
    return 7;
}

static size_t put_info_str(uint8_t *b, uint8_t item, const char *s) {
    size_t n = strlen(s);
    b[0] = item;
    b[1] = (uint8_t)(n + 2);
    b[2] = 0;
    b[3] = 1; /* one string */
    b[4] = (uint8_t)n;
    memcpy(b + 5, s, n);
    return 5 + n;
}

/* One value of a row message. */
static void put_value(ffbp_writer *w, const ffbp_item *it, uint32_t row,
                      size_t col, uint64_t blob_id) {
    uint8_t b[64];
    uint32_t x = row * 10 + (uint32_t)col;
    switch (it->blr) {
    case FFBP_BLR_SHORT:
        ffbp_put_i32(w, (int16_t)(x * 3));
        break;
    case FFBP_BLR_LONG:
        ffbp_put_i32(w, (int32_t)(x * 1000 + 7));
        break;
    case FFBP_BLR_INT64:
        ffbp_put_i64(w, (int64_t)x * 123456789 - 5);
        break;
    case FFBP_BLR_FLOAT: {
        float v = (float)x / 4;
        uint32_t u;
        memcpy(&u, &v, 4);
        ffbp_put_u32(w, u);
        break;
    }
    case FFBP_BLR_DOUBLE: {
        double v = (double)x / 3;
        int64_t u;
        memcpy(&u, &v, 8);
        ffbp_put_i64(w, u);
        break;
    }
    case FFBP_BLR_SQL_DATE:
        ffbp_put_i32(w, (int32_t)(58000 + x));
        break;
    case FFBP_BLR_SQL_TIME:
        ffbp_put_u32(w, (x * 10007u) % 864000000u);
        break;
    case FFBP_BLR_TIMESTAMP:
        ffbp_put_i32(w, (int32_t)(59000 + x));
        ffbp_put_u32(w, (x * 99991u) % 864000000u);
        break;
    case FFBP_BLR_BOOL:
        b[0] = (uint8_t)(x & 1);
        ffbp_put_opaque(w, b, 1);
        break;
    case FFBP_BLR_INT128:
        memset(b, x & 1 ? 0xFF : 0, 16);
        b[15] = (uint8_t)x;
        ffbp_put_opaque(w, b, 16);
        break;
    case FFBP_BLR_QUAD:
    case FFBP_BLR_BLOB2:
        ffbp_put_quad(w, blob_id);
        break;
    case FFBP_BLR_TEXT:
    case FFBP_BLR_TEXT2: {
        uint8_t t[256];
        size_t n = it->length < sizeof(t) ? it->length : sizeof(t);
        for (size_t i = 0; i < n; i++)
            t[i] = (uint8_t)('A' + (x + i) % 26);
        if (n < it->length) { /* longer than we fill: blanks */
            ffbp_put_raw(w, t, n);
            for (size_t i = n; i < it->length; i++)
                ffbp_put_raw(w, " ", 1);
            size_t pad = ffbp_pad(it->length);
            ffbp_put_raw(w, "\0\0\0", pad);
        } else {
            ffbp_put_opaque(w, t, n);
        }
        break;
    }
    case FFBP_BLR_VARYING:
    case FFBP_BLR_VARYING2: {
        uint8_t t[64];
        size_t n = 3 + x % 12;
        if (n > it->length)
            n = it->length;
        for (size_t i = 0; i < n; i++)
            t[i] = (uint8_t)('a' + (x + i) % 26);
        ffbp_put_u32(w, (uint32_t)n);
        ffbp_put_opaque(w, t, n);
        break;
    }
    default: {
        size_t n = ffbp_item_wire_size(it);
        memset(b, 0, sizeof(b));
        ffbp_put_opaque(w, b, n < sizeof(b) ? n : sizeof(b));
        break;
    }
    }
}

/* A row (op_fetch_response / op_sql_response), with the inline blobs it
   references in front of it on protocol 19. */
static void put_row(ffbp_writer *w, const ffb__pending *p, uint32_t row,
                    uint16_t txh, int inl, int sql_response) {
    ffbp_writer m;
    ffbp_writer_init(&m, NULL);
    size_t n = p->nitems;
    size_t bm = ffbp_msg_begin(&m, n);
    for (size_t i = 0; i < n; i++) {
        const ffbp_item *it = &p->items[i];
        if (i > 0 && (row + i) % 5 == 0) {
            ffbp_msg_set_null(&m, bm, i);
            continue;
        }
        uint64_t id = (uint64_t)(0x100 + i) << 32 | (row + 1);
        if (it->blr == FFBP_BLR_BLOB2 && inl && blob_len(id) <= INLINE_MAX) {
            uint8_t info[64];
            size_t ilen;
            blob_info(info, &ilen, id);
            ffbp_writer d;
            ffbp_writer_init(&d, NULL);
            blob_records(&d, id, 0, blob_len(id));
            srv_inline_blob(w, txh, id, info, ilen, d.data, d.len);
            ffbp_writer_free(&d);
        }
        put_value(&m, it, row, i, id);
    }
    FUZZ_CHECK(!m.failed);
    if (sql_response)
        srv_sql_response(w, 1, m.data, m.len);
    else
        srv_fetch(w, 0, 1, m.data, m.len);
    ffbp_writer_free(&m);
}

static void put_describe(ffbp_writer *w, const spec *sp, uint32_t from) {
    static uint8_t buf[16384];
    size_t n;
    if (from <= 1)
        n = srv_describe(buf, sizeof(buf), sp->stmt_type, (uint32_t)sp->nout,
                         sp->out, sp->nout, 1, (uint32_t)sp->nin, sp->in,
                         sp->nin, sp->truncate_at);
    else /* the continuation: the rest of the select side, the bind side */
        n = srv_describe(buf, sizeof(buf), 0, (uint32_t)sp->nout,
                         sp->out + from - 1, sp->nout - (from - 1), from,
                         (uint32_t)sp->nin, sp->in, sp->nin, 0);
    srv_response(w, 0, 0, buf, n);
}

static void put_status_error(ffbp_writer *w, uint32_t gds) { srv_error(w, gds); }

static uint16_t tx_handle_of(const ffb_tx *tx) {
    return tx && tx->state == FFB__TX_ACTIVE ? tx->handle : 7;
}

/* The answer a server gives to one request. */
static void answer(ffbp_writer *w, const ffb__pending *p) {
    ffb_conn *c = F.conn;
    uint8_t b[1024];
    size_t n = 0;
    switch (p->op) {
    case FFBP_OP_TRANSACTION:
        srv_response(w, F.next_tx++, 0, NULL, 0);
        break;
    case FFBP_OP_ALLOCATE_STATEMENT:
        srv_response(w, F.next_stmt++, 0, NULL, 0);
        break;
    case FFBP_OP_PREPARE_STATEMENT: {
        const spec *sp = F.desc ? F.desc : &SP_SELECT;
        SLOT(p->ctx)->sp = sp;
        put_describe(w, sp, 1);
        break;
    }
    case FFBP_OP_INFO_SQL: {
        const ffb_stmt *s = p->ctx;
        if (s->describe_incomplete) {
            const spec *sp = SLOT(s)->sp ? SLOT(s)->sp : &SP_SELECT;
            uint32_t from = ffbp_sqlinfo_incomplete(&s->desc, 1);
            put_describe(w, sp, from ? from : 1);
        } else if (F.plan) {
            const char *plan = F.plan == 2
                                   ? "Select Expression\n    -> Table \"T\" "
                                     "Full Scan"
                                   : "\nPLAN (T NATURAL)";
            size_t pl = strlen(plan);
            b[n++] = F.plan == 2 ? FFBP_INFO_SQL_EXPLAIN_PLAN
                                 : FFBP_INFO_SQL_GET_PLAN;
            b[n++] = (uint8_t)pl;
            b[n++] = 0;
            memcpy(b + n, plan, pl);
            n += pl;
            b[n++] = FFBP_INFO_END;
            srv_response(w, 0, 0, b, n);
        } else { /* isc_info_sql_records */
            uint8_t r[64];
            size_t k = 0;
            k += put_info_int(r + k, 13, 0);
            k += put_info_int(r + k, 14, s->stmt_type == FFB_STMT_INSERT);
            k += put_info_int(r + k, 15, s->stmt_type == FFB_STMT_UPDATE);
            k += put_info_int(r + k, 16, 0);
            r[k++] = FFBP_INFO_END;
            b[n++] = FFBP_INFO_SQL_RECORDS;
            b[n++] = (uint8_t)k;
            b[n++] = 0;
            memcpy(b + n, r, k);
            n += k;
            b[n++] = FFBP_INFO_END;
            srv_response(w, 0, 0, b, n);
        }
        break;
    }
    case FFBP_OP_EXECUTE: {
        const ffb_stmt *s = p->ctx;
        SLOT(s)->left = F.cursor_rows;
        srv_response(w, 0, 0, NULL, 0);
        break;
    }
    case FFBP_OP_EXECUTE2: {
        const ffb_stmt *s = p->ctx;
        uint32_t row = SLOT(s)->row++;
        if (p->items && p->nitems)
            put_row(w, p, row, tx_handle_of(p->tx),
                    F.protocol >= 19 && s->inline_size > 0, 1);
        else
            srv_sql_response(w, 0, NULL, 0);
        srv_response(w, 0, 0, NULL, 0);
        break;
    }
    case FFBP_OP_FETCH: {
        const ffb_stmt *s = p->ctx;
        uint32_t per = s->fetch_count ? s->fetch_count : 1;
        if (per > F.rows_cap)
            per = F.rows_cap;
        __typeof__(&F.obj[0]) st = SLOT(s);
        uint16_t txh = tx_handle_of(s->cursor_tx);
        int inl = F.protocol >= 19 && s->inline_size > 0;
        uint32_t k = 0;
        while (k < per && st->left > 0) {
            put_row(w, p, st->row++, txh, inl, 0);
            st->left--;
            k++;
        }
        srv_fetch(w, st->left ? 0 : 100, 0, NULL, 0);
        break;
    }
    case FFBP_OP_INFO_TRANSACTION:
        n += put_info_int(b + n, 4, 4242);
        b[n++] = FFBP_INFO_END;
        srv_response(w, 0, 0, b, n);
        break;
    case FFBP_OP_INFO_DATABASE:
        n += put_info_str(b + n, FFBP_INFO_FIREBIRD_VERSION,
                          "LI-V5.0.3.1683 Firebird 5.0");
        n += put_info_str(b + n, FFBP_INFO_ISC_VERSION,
                          "LI-V6.3.3.1683 Firebird 5.0");
        n += put_info_int(b + n, FFBP_INFO_ODS_VERSION, 13);
        n += put_info_int(b + n, FFBP_INFO_ODS_MINOR_VERSION, 1);
        n += put_info_int(b + n, FFBP_INFO_PAGE_SIZE, 8192);
        n += put_info_int(b + n, FFBP_INFO_DB_SQL_DIALECT, 3);
        n += put_info_int(b + n, FFBP_INFO_ATTACHMENT_ID, 77);
        b[n++] = FFBP_INFO_END;
        srv_response(w, 0, 0, b, n);
        break;
    case FFBP_OP_OPEN_BLOB2:
    case FFBP_OP_CREATE_BLOB2: {
        const ffb_blob *bl = p->ctx;
        __typeof__(&F.obj[0]) st = SLOT(bl);
        st->pos = 0;
        st->id = p->op == FFBP_OP_OPEN_BLOB2 ? bl->id : F.next_blob_id++;
        srv_response(w, F.next_blob++, p->op == FFBP_OP_CREATE_BLOB2 ? st->id : 0,
                     NULL, 0);
        break;
    }
    case FFBP_OP_INFO_BLOB: {
        const ffb_blob *bl = p->ctx;
        blob_info(b, &n, SLOT(bl)->id);
        srv_response(w, 0, 0, b, n);
        break;
    }
    case FFBP_OP_GET_SEGMENT: {
        const ffb_blob *bl = p->ctx;
        __typeof__(&F.obj[0]) st = SLOT(bl);
        size_t len = blob_len(st->id);
        size_t from = (size_t)st->pos, to = from + GET_CHUNK;
        if (to > len)
            to = len;
        if (from >= len) {
            srv_response(w, 2, 0, NULL, 0);
            break;
        }
        ffbp_writer d;
        ffbp_writer_init(&d, NULL);
        blob_records(&d, st->id, from, to);
        st->pos = (int64_t)to;
        srv_response(w, 0, 0, d.data, d.len);
        ffbp_writer_free(&d);
        break;
    }
    case FFBP_OP_SEEK_BLOB: {
        const ffb_blob *bl = p->ctx;
        SLOT(bl)->pos = F.seek_abs;
        srv_response(w, 0, (uint64_t)(uint32_t)F.seek_abs, NULL, 0);
        break;
    }
    case FFBP_OP_BATCH_EXEC: {
        uint32_t rows = F.batch_rows;
        int fail = (F.flags & F_C) && rows > 1;
        ffbp_put_i32(w, FFBP_OP_BATCH_CS);
        ffbp_put_i16(w, F.batch_stmt ? F.batch_stmt->handle : 3);
        ffbp_put_u32(w, rows);
        ffbp_put_u32(w, rows);
        ffbp_put_u32(w, (uint32_t)fail);
        ffbp_put_u32(w, 0);
        for (uint32_t i = 0; i < rows; i++)
            ffbp_put_i32(w, fail && i == 1 ? -1 : 1);
        if (fail) {
            ffbp_put_u32(w, 1);
            ffbp_put_i32(w, FFBP_ARG_GDS);
            ffbp_put_u32(w, FFB_GDS_UNIQUE_KEY_VIOLATION);
            ffbp_put_i32(w, FFBP_ARG_STRING);
            ffbp_put_cstring(w, "PK_T", 4);
            ffbp_put_i32(w, FFBP_ARG_END);
        }
        break;
    }
    case FFBP_OP_EXEC_IMMEDIATE2:
        ffbp_put_i32(w, FFBP_OP_SQL_RESPONSE);
        ffbp_put_i16(w, 0);
        /* then the op_response */
        __attribute__((fallthrough));
    case FFBP_OP_EXEC_IMMEDIATE:
        if (F.answer_errors)
            put_status_error(w, 335544569u); /* dsql_error */
        else
            srv_response(w, 0, 0, NULL, 0);
        break;
    default:
        /* op_response for everything else: frees, closes, commits,
           segments, batch create/msg/blob stream/sync/release, ping... */
        srv_response(w, 0, 0, NULL, 0);
        break;
    }
    (void)c;
}

/* Everything owed, or the handshake's next answer. */
static void auto_answer(ffbp_writer *w) {
    ffb_conn *c = F.conn;
    if (c->state == FFB__ST_HANDSHAKE) {
        if (c->hs == FFB__HS_ACCEPT)
            srv_accept(w, FFBP_OP_ACCEPT, F.protocol, NULL, NULL, 0, 0, NULL,
                       0);
        else
            srv_response(w, 1, 0, NULL, 0);
        return;
    }
    size_t owed = c->fifo_len - c->fifo_unsent;
    if (owed == 0 && c->detaching) {
        srv_response(w, 0, 0, NULL, 0); /* op_detach */
        return;
    }
    for (size_t i = 0; i < owed; i++) {
        const ffb__pending *p = &c->fifo[(c->fifo_head + i) % c->fifo_cap];
        if (F.trace)
            fprintf(stderr, "  owed %s%s\n", ffbp_op_name(p->op),
                    p->deferred ? " (deferred)" : "");
        answer(w, p);
    }
}

static int t_connect(ffb_conn *conn, void *data, int timeout_ms) {
    (void)conn;
    (void)data;
    (void)timeout_ms;
    return 0;
}

static int t_flush(ffb_conn *conn, void *data, int timeout_ms) {
    (void)timeout_ms;
    (void)data;
    const uint8_t *out;
    ffb_conn_output_done(conn, ffb_conn_output(conn, &out));
    return 0;
}

static int eof(ffb_conn *conn) {
    /* A client that keeps reading after EOF loops. */
    FUZZ_CHECK(++F.eof_reads < 1000);
    int rc = ffb_conn_feed_eof(conn);
    return rc < 0 ? rc : FFB_E_CLOSED;
}

static int t_read(ffb_conn *conn, void *data, int timeout_ms) {
    (void)timeout_ms;
    (void)data;
    if (!F.fuzzing || F.gen) {
        /* A loop the (valid) server drives. */
        FUZZ_CHECK(++F.auto_reads < 100000);
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        if (F.trace)
            fprintf(stderr, "read (auto) fifo %zu\n", conn->fifo_len);
        auto_answer(&w);
        FUZZ_CHECK(!w.failed);
        if (w.len == 0) {
            ffbp_writer_free(&w);
            if (F.trace)
                fprintf(stderr, "  nothing owed: EOF\n");
            return eof(conn);
        }
        if (F.fuzzing) { /* generating: keep it as records */
            for (size_t off = 0; off < w.len; off += 65535) {
                size_t k = w.len - off < 65535 ? w.len - off : 65535;
                uint8_t h[2] = {(uint8_t)(k >> 8), (uint8_t)k};
                ffbp_put_raw(&F.rec, h, 2);
                ffbp_put_raw(&F.rec, w.data + off, k);
            }
        }
        int rc = ffb_conn_feed(conn, w.data, w.len);
        ffbp_writer_free(&w);
        return rc;
    }
    F.fuzz_reads++;
    if (F.trace)
        fprintf(stderr, "read (fuzz) at %zu of %zu, fifo %zu\n", F.in_pos,
                F.in_len, conn->fifo_len);
    const uint8_t *p;
    size_t n;
    if (F.chunk == 0) {
        if (F.in_len - F.in_pos < 2)
            return eof(conn);
        n = (size_t)F.in[F.in_pos] << 8 | F.in[F.in_pos + 1];
        F.in_pos += 2;
        if (n > F.in_len - F.in_pos)
            n = F.in_len - F.in_pos;
    } else {
        if (F.in_pos == F.in_len)
            return eof(conn);
        n = F.in_len - F.in_pos < F.chunk ? F.in_len - F.in_pos : F.chunk;
    }
    p = F.in + F.in_pos;
    F.in_pos += n;
    return ffb_conn_feed(conn, p, n);
}

static void t_close(ffb_conn *conn, void *data) {
    (void)conn;
    (void)data;
}

static const ffb__transport fz_transport = {t_connect, t_flush, t_read,
                                            t_close, NULL, NULL};

/* ---- checked calls ----------------------------------------------------------- */

/* Allowed non-fatal results besides 0 (fatal codes are always allowed). */
#define A_ONE (1u << 0)
#define A_INVAL (1u << 1)
#define A_STATE (1u << 2)
#define A_SERVER (1u << 4)
#define A_UNSUP (1u << 5) /* also: a describe with a type that has no
                               message form (prepare, execute) */
#define A_ABORTED (1u << 8)
#define A_REQ (A_STATE | A_SERVER) /* a blocking request */

/* FFB_FUZZ_SQL_LAX: known findings not to stop on (exploring past them):
   "nobreak" a fatal code on a connection left unbroken, "state" an
   undocumented code from a call on a broken connection, "unsup"
   FFB_E_UNSUPPORTED where it is not documented, "colinfo" the describe
   of a statement whose prepare failed (not read). */
static int lax_nobreak, lax_state, lax_unsup, lax_colinfo;

/* Say once per call site that a known finding was passed over. */
static void lax_note(int line, const char *what, const char *kind, int rc) {
    static unsigned char seen[4096];
    if (line >= 0 && line < (int)sizeof(seen) && !seen[line]) {
        seen[line] = 1;
        fprintf(stderr, "LAX %s: fuzz_sql.c:%d: %s = %s: %s\n", kind, line,
                what, ffb_err_name(rc),
                ffb_error_message(ffb_conn_error(F.conn)));
    }
}

static int check(int rc, unsigned allowed, const char *what, int line) {
    ffb_conn *c = F.conn;
    int broken = ffb_conn_is_broken(c);
    const ffb_error *e = ffb_conn_error(c);
    if (F.trace)
        fprintf(stderr, "%d: %s = %d%s %s\n", line, what, rc,
                broken ? " (broken)" : "", rc < 0 ? ffb_error_message(e) : "");
    int ok = rc == 0 || (rc == 1 && (allowed & A_ONE)) ||
             (rc <= FFB_E_FATAL && rc >= FFB_E_NOMEM) ||
             (rc < 0 && rc >= FFB_E_ABORTED && (allowed & (1u << -rc)));
    if (!ok && lax_state && F.was_broken)
        lax_note(line, what, "state", rc);
    else if (!ok && lax_unsup && rc == FFB_E_UNSUPPORTED)
        lax_note(line, what, "unsup", rc);
    else if (!ok) {
        fprintf(stderr, "fuzz_sql.c:%d: %s returned %d (%s), not documented: "
                        "%s\n",
                line, what, rc, ffb_err_name(rc), ffb_error_message(e));
        abort();
    }
    if (rc <= FFB_E_FATAL && lax_nobreak && !broken)
        lax_note(line, what, "nobreak", rc);
    else if (rc <= FFB_E_FATAL) {
        if (!broken)
            fprintf(stderr, "fuzz_sql.c:%d: %s returned %s (%s) but the "
                            "connection is not broken\n",
                    line, what, ffb_err_name(rc), ffb_error_message(e));
        FUZZ_CHECK(broken);
        FUZZ_CHECK(ffb_error_code(e) < 0);
        FUZZ_CHECK(ffb_error_message(e)[0] != '\0');
        FUZZ_CHECK(ffb_conn_wants(c) == 0);
    }
    if (F.was_broken && !broken)
        fprintf(stderr, "fuzz_sql.c:%d: %s: the connection is no longer "
                        "broken\n",
                line, what);
    FUZZ_CHECK(!F.was_broken || broken);
    F.was_broken = broken;
    F.ever_broken |= broken;
    FUZZ_CHECK(strlen(ffb_error_message(e)) < FFB__ERR_MESSAGE);
    return rc;
}

#define CALL(allowed, expr) check((expr), (allowed), #expr, __LINE__)
/* Before the point under test every call must succeed. */
#define PRE(expr)                                                              \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        if (rc_ < 0) {                                                         \
            fprintf(stderr, "fuzz_sql.c:%d: prefix call %s = %d: %s\n",        \
                    __LINE__, #expr, rc_,                                      \
                    ffb_error_message(ffb_conn_error(F.conn)));                \
            abort();                                                           \
        }                                                                      \
    } while (0)

static void begin_fuzz(void) {
    if (F.trace)
        fprintf(stderr, "---- point under test ----\n");
    F.fuzzing = 1;
}

static volatile uint8_t sink;
static void touch(const void *p, size_t n) {
    const uint8_t *b = p;
    uint8_t x = 0;
    for (size_t i = 0; i < n; i++)
        x ^= b[i];
    sink = x;
}

/* Every getter on every column of the current row. */
static void read_row(ffb_stmt *s) {
    unsigned n = ffb_stmt_column_count(s);
    for (unsigned i = 0; i < n + 1; i++) {
        int64_t v;
        int scale;
        double d;
        int y, mo, da, h, mi, se, fr, bo;
        const char *t;
        size_t len;
        uint8_t id[8];
        CALL(A_ONE | A_INVAL | A_STATE, ffb_stmt_is_null(s, i));
        CALL(A_INVAL | A_STATE, ffb_stmt_get_int64(s, i, &v));
        CALL(A_INVAL | A_STATE, ffb_stmt_get_numeric(s, i, &v, &scale));
        CALL(A_INVAL | A_STATE, ffb_stmt_get_double(s, i, &d));
        CALL(A_INVAL | A_STATE, ffb_stmt_get_bool(s, i, &bo));
        if (CALL(A_INVAL | A_STATE, ffb_stmt_get_text(s, i, &t, &len)) == 0)
            touch(t, len);
        if (CALL(A_INVAL | A_STATE,
                 ffb_stmt_get_text_trimmed(s, i, &t, &len)) == 0)
            touch(t, len);
        CALL(A_INVAL | A_STATE, ffb_stmt_get_date(s, i, &y, &mo, &da));
        CALL(A_INVAL | A_STATE, ffb_stmt_get_time(s, i, &h, &mi, &se, &fr));
        CALL(A_INVAL | A_STATE, ffb_stmt_get_timestamp(s, i, &y, &mo, &da, &h,
                                                       &mi, &se, &fr));
        CALL(A_INVAL | A_STATE, ffb_stmt_get_blob_id(s, i, id));
    }
}

static void describe_all(ffb_stmt *s) {
    (void)ffb_stmt_type(s);
    (void)ffb_stmt_has_cursor(s);
    unsigned n = ffb_stmt_column_count(s), m = ffb_stmt_param_count(s);
    ffb_column_info ci;
    for (unsigned i = 0; i <= n; i++) {
        if (CALL(A_INVAL, ffb_stmt_column_info(s, i, &ci, sizeof(ci))) == 0) {
            touch(ci.field, strlen(ci.field));
            touch(ci.relation, strlen(ci.relation));
            touch(ci.owner, strlen(ci.owner));
            touch(ci.alias, strlen(ci.alias));
            touch(ci.relation_alias, strlen(ci.relation_alias));
        }
        const char *nm = ffb_stmt_column_name(s, i);
        touch(nm, strlen(nm));
    }
    for (unsigned i = 0; i <= m; i++)
        CALL(A_INVAL, ffb_stmt_param_info(s, i, &ci, sizeof(ci)));
}

/* Fetch every row (at most `max`), reading each. */
static void fetch_all(ffb_stmt *s, int max) {
    for (int i = 0; i < max; i++) {
        int rc = CALL(A_ONE | A_STATE | A_SERVER, ffb_stmt_fetch(s));
        if (rc != 1)
            break;
        read_row(s);
    }
}

/* Bind every parameter from its described type. */
static void bind_all(ffb_stmt *s, int k) {
    unsigned m = ffb_stmt_param_count(s);
    for (unsigned i = 0; i < m; i++) {
        ffb_column_info ci;
        if (ffb_stmt_param_info(s, i, &ci, sizeof(ci)) < 0)
            break;
        int rc;
        switch (ci.sqltype) {
        case FFB_SQL_VARYING:
        case FFB_SQL_TEXT:
            rc = ffb_stmt_bind_text(s, i, "fuzz", (size_t)-1);
            break;
        case FFB_SQL_TIMESTAMP:
            rc = ffb_stmt_bind_timestamp(s, i, 2024, 2, 29, 13, 45, 30, 1234);
            break;
        case FFB_SQL_BLOB: {
            static const uint8_t id[8] = {0, 0, 0, 0x81, 0, 0, 0, 2};
            rc = ffb_stmt_bind_blob_id(s, i, id);
            break;
        }
        default:
            rc = ffb_stmt_bind_int64(s, i, 100 + k);
            break;
        }
        CALL(A_INVAL | A_STATE, rc);
        if (k % 3 == 2 && i == m - 1 && m > 1)
            CALL(A_INVAL | A_STATE, ffb_stmt_bind_null(s, i));
    }
}

static ffb_stmt *prepare(ffb_tx *tx, const spec *sp, const char *sql) {
    ffb_stmt *s = NULL;
    F.desc = sp;
    PRE(ffb_stmt_new(F.conn, &s));
    PRE(ffb_stmt_prepare(s, tx, sql, (size_t)-1));
    return s;
}

/* ---- scenarios --------------------------------------------------------------- */

static void sc_prepare(ffb_conn *c) {
    ffb_tx *tx;
    ffb_stmt *s = NULL;
    PRE(ffb_tx_begin(c, NULL, &tx));
    begin_fuzz();
    F.desc = F.flags & F_B ? &SP_WIDE2 : &SP_WIDE;
    F.cursor_rows = 3;
    int rc;
    if (F.flags & F_A) {
        rc = CALL(A_INVAL | A_REQ | A_UNSUP, ffb_conn_prepare(c, tx, "select * from w",
                                                    (size_t)-1, &s));
    } else {
        PRE(ffb_stmt_new(c, &s));
        rc = CALL(A_INVAL | A_REQ | A_UNSUP,
                  ffb_stmt_prepare(s, tx, "select * from w", (size_t)-1));
    }
    if (s) {
        if (rc == 0 || !lax_colinfo)
            describe_all(s);
        if (rc == 0) {
            bind_all(s, 0);
            if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx)) == 0)
                fetch_all(s, 100);
        }
        if (F.flags & F_C) {
            /* Prepared again over the open cursor: closed in the same
               write. */
            F.desc = &SP_SELECT;
            if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_prepare(s, tx, "select * from t",
                                                       (size_t)-1)) == 0 ||
                !lax_colinfo)
                describe_all(s);
        }
        ffb_stmt_free(s);
    }
    CALL(A_REQ, ffb_tx_commit(tx));
    ffb_tx_free(tx);
}

static void sc_select(ffb_conn *c) {
    ffb_tx *tx;
    PRE(ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(tx, &SP_SELECT, "select * from t where id > ?");
    describe_all(s);
    if (F.flags & F_A)
        PRE(ffb_stmt_set_fetch_size(s, 2));
    PRE(ffb_stmt_bind_int64(s, 0, 5));
    F.cursor_rows = F.flags & F_C ? 0 : 21;
    begin_fuzz();
    if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx)) == 0)
        fetch_all(s, 10000);
    (void)ffb_stmt_rows_affected(s);
    CALL(0, ffb_stmt_close_cursor(s));
    /* Again: a second cursor, closed early by the commit. */
    F.cursor_rows = 9;
    if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx)) == 0)
        fetch_all(s, 3);
    CALL(A_REQ, ffb_tx_commit(tx));
    CALL(A_ONE | A_STATE | A_SERVER, ffb_stmt_fetch(s));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
}

static void sc_dml(ffb_conn *c) {
    ffb_tx *tx;
    PRE(ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(tx, &SP_INSERT, "insert into t values (?,?,?,?,?)");
    bind_all(s, 0);
    begin_fuzz();
    CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx));
    (void)ffb_stmt_rows_affected(s);
    bind_all(s, 2);
    CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx));
    (void)ffb_stmt_rows_affected(s);
    CALL(A_ONE | A_STATE | A_SERVER, ffb_stmt_fetch(s));
    CALL(A_REQ, ffb_tx_commit_retaining(tx));
    ffb_stmt_clear_bindings(s);
    CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx));
    CALL(A_REQ, ffb_tx_rollback(tx));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
}

static void sc_exec2(ffb_conn *c) {
    ffb_tx *tx;
    PRE(ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(tx, &SP_PROC, "execute procedure p(?)");
    PRE(ffb_stmt_bind_int64(s, 0, 1));
    begin_fuzz();
    for (int k = 0; k < 2; k++) {
        if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx)) == 0)
            fetch_all(s, 3);
        else
            CALL(A_ONE | A_STATE | A_SERVER, ffb_stmt_fetch(s));
        uint8_t id[8];
        if (ffb_stmt_get_blob_id(s, 2, id) == 0) {
            ffb_blob *b;
            if (CALL(A_INVAL | A_STATE, ffb_blob_open(c, tx, id, 0, &b)) == 0) {
                const uint8_t *d;
                size_t len;
                if (CALL(A_REQ, ffb_blob_read_all(b, &d, &len)) == 0)
                    touch(d, len);
                ffb_blob_free(b);
            }
        }
    }
    CALL(A_REQ, ffb_tx_commit(tx));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
}

/* Read one open blob every way. */
static void read_blob(ffb_blob *b, uint64_t id, int seek) {
    ffb_blob_info bi;
    uint8_t buf[700];
    size_t got;
    int64_t pos = 0;
    CALL(A_REQ, ffb_blob_get_info(b, &bi, sizeof(bi)));
    for (int i = 0; i < 3; i++) {
        if (CALL(A_REQ, ffb_blob_read(b, buf, sizeof(buf), &got)) < 0)
            break;
        FUZZ_CHECK(got <= sizeof(buf));
        touch(buf, got);
        pos += (int64_t)got;
        if (got == 0)
            break;
    }
    if (seek) {
        int64_t len = (int64_t)blob_len(id), np;
        F.seek_abs = pos + 10 > len ? len : pos + 10;
        CALL(A_INVAL | A_REQ, ffb_blob_seek(b, 1, 10, &np));
        CALL(A_REQ, ffb_blob_read(b, buf, 100, &got));
        F.seek_abs = len - 5;
        CALL(A_INVAL | A_REQ, ffb_blob_seek(b, 2, -5, &np));
        F.seek_abs = 0;
        CALL(A_INVAL | A_REQ, ffb_blob_seek(b, 0, 0, &np));
    }
    const uint8_t *d;
    size_t len;
    if (CALL(A_REQ, ffb_blob_read_all(b, &d, &len)) == 0)
        touch(d, len);
    CALL(A_REQ, ffb_blob_read(b, buf, sizeof(buf), &got));
    CALL(A_REQ, ffb_blob_get_info(b, &bi, sizeof(bi)));
}

static void id_bytes(uint64_t v, uint8_t b[8]) {
    for (int i = 7; i >= 0; i--, v >>= 8)
        b[i] = (uint8_t)v;
}

static void sc_blob_read(ffb_conn *c) {
    ffb_tx *tx;
    int64_t tid;
    PRE(ffb_tx_begin(c, NULL, &tx));
    PRE(ffb_tx_id(tx, &tid));
    begin_fuzz();
    static const uint64_t ids[] = {0x0000008100000003ull, 0x0000008100000002ull,
                                   0x0000008100000005ull};
    ffb_blob *bl[3] = {0};
    uint8_t id[8];
    /* Three opens queued, read in one round trip. */
    for (int i = 0; i < 3; i++) {
        id_bytes(ids[i], id);
        CALL(A_INVAL | A_STATE,
             ffb_blob_open(c, tx, id, i == 1 ? 100 : 0, &bl[i]));
    }
    for (int i = 0; i < 2; i++)
        if (bl[i])
            read_blob(bl[i], ids[i], i == 0);
    for (int i = 0; i < 3; i++)
        ffb_blob_free(bl[i]); /* the third: closed unread */
    CALL(A_REQ, ffb_tx_commit(tx));
    ffb_tx_free(tx);
}

static void sc_blob_rows(ffb_conn *c) {
    ffb_tx *tx;
    PRE(ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(tx, &SP_BLOBS, "select id, bin, memo, name from b");
    if (F.flags & F_A)
        PRE(ffb_stmt_set_inline_blob_size(s, 1000));
    F.cursor_rows = 6;
    begin_fuzz();
    ffb_blob *keep = NULL;
    uint8_t keep_id[8];
    if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx)) == 0) {
        for (int r = 0; r < 50; r++) {
            if (CALL(A_ONE | A_STATE | A_SERVER, ffb_stmt_fetch(s)) != 1)
                break;
            for (unsigned col = 1; col <= 2; col++) {
                uint8_t id[8];
                if (ffb_stmt_get_blob_id(s, col, id) != 0)
                    continue;
                ffb_blob *b;
                if (CALL(A_INVAL | A_STATE, ffb_blob_open(c, tx, id, 0, &b)))
                    continue;
                uint64_t v = 0;
                for (int i = 0; i < 8; i++)
                    v = v << 8 | id[i];
                if (!keep && r == 1) {
                    keep = b; /* read after the commit */
                    memcpy(keep_id, id, 8);
                    continue;
                }
                read_blob(b, v, r % 2 == 0);
                ffb_blob_free(b);
            }
        }
    }
    CALL(A_REQ, ffb_tx_commit_retaining(tx));
    CALL(A_REQ, ffb_tx_commit(tx));
    if (keep) {
        uint8_t buf[64];
        size_t got;
        CALL(A_REQ, ffb_blob_read(keep, buf, sizeof(buf), &got));
        ffb_blob_free(keep);
        ffb_blob *b;
        CALL(A_INVAL | A_STATE, ffb_blob_open(c, tx, keep_id, 0, &b));
    }
    ffb_stmt_free(s);
    ffb_tx_free(tx);
}

static uint8_t big[1100 * 1024];

static void sc_blob_write(ffb_conn *c) {
    ffb_tx *tx;
    PRE(ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(tx, &SP_INSERT, "insert into t values (?,?,?,?,?)");
    begin_fuzz();
    ffb_blob *b;
    uint8_t id[8] = {0};
    static const uint8_t small[100] = {1, 2, 3};
    if (CALL(A_INVAL | A_STATE, ffb_blob_create(c, tx, NULL, &b)) == 0) {
        CALL(A_INVAL | A_STATE, ffb_blob_write(b, small, sizeof(small)));
        CALL(A_INVAL | A_STATE, ffb_blob_write(b, big, 70000));
        if (F.flags & F_B)
            CALL(A_INVAL | A_STATE, ffb_blob_write(b, big, sizeof(big)));
        CALL(A_INVAL | A_STATE, ffb_blob_write(b, small, 0));
        CALL(A_REQ, ffb_blob_close(b, id));
        CALL(A_INVAL | A_STATE, ffb_blob_write(b, small, 1));
        ffb_blob_free(b);
    }
    ffb_blob_options bo = FFB_BLOB_OPTIONS_INIT;
    bo.stream = 1;
    bo.subtype = 1;
    if (CALL(A_INVAL | A_STATE, ffb_blob_create(c, tx, &bo, &b)) == 0) {
        CALL(A_INVAL | A_STATE, ffb_blob_write(b, "text", 4));
        CALL(A_REQ, ffb_blob_cancel(b));
        ffb_blob_free(b);
    }
    /* A created blob freed before its close: cancelled with the next
       request. */
    if (CALL(A_INVAL | A_STATE, ffb_blob_create(c, tx, &bo, &b)) == 0) {
        CALL(A_INVAL | A_STATE, ffb_blob_write(b, small, 10));
        ffb_blob_free(b);
    }
    bind_all(s, 0);
    CALL(A_INVAL | A_STATE, ffb_stmt_bind_blob_id(s, 3, id));
    CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx));
    CALL(A_REQ, ffb_tx_commit(tx));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
}

static void sc_batch(ffb_conn *c) {
    ffb_tx *tx;
    PRE(ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(tx, &SP_INSERT, "insert into t values (?,?,?,?,?)");
    begin_fuzz();
    ffb_batch_options bo = FFB_BATCH_OPTIONS_INIT;
    bo.multi_error = (F.flags & F_A) != 0;
    bo.commit = (F.flags & F_B) != 0;
    ffb_batch *b;
    F.batch_stmt = s;
    if (CALL(A_INVAL | A_STATE, ffb_batch_new(s, &bo, &b)) == 0) {
        for (int round = 0; round < 2; round++) {
            int rows = round ? 2 : 4;
            uint32_t added = 0;
            for (int i = 0; i < rows; i++) {
                bind_all(s, i);
                CALL(A_INVAL | A_STATE, ffb_stmt_bind_null(s, 3));
                uint8_t id[8];
                if (i % 2 == 0 &&
                    CALL(A_INVAL | A_STATE,
                         ffb_batch_add_blob(b, "blob data", 9, i % 4 == 0,
                                            id)) == 0)
                    CALL(A_INVAL | A_STATE, ffb_stmt_bind_blob_id(s, 3, id));
                if (i == 3) {
                    const void *segs[2] = {"ab", "cde"};
                    size_t lens[2] = {2, 3};
                    if (CALL(A_INVAL | A_STATE, ffb_batch_add_blob_segments(
                                                    b, segs, lens, 2, id)) == 0)
                        CALL(A_INVAL | A_STATE,
                             ffb_stmt_bind_blob_id(s, 3, id));
                }
                if (CALL(A_INVAL | A_STATE, ffb_batch_add(b)) == 0)
                    added++;
            }
            F.batch_rows = added;
            CALL(A_REQ, ffb_batch_execute(b, tx));
            size_t n = ffb_batch_row_count(b);
            for (size_t i = 0; i <= n + 1; i++) {
                (void)ffb_batch_row_status(b, i);
                const ffb_error *e = ffb_batch_row_error(b, i);
                if (e)
                    touch(ffb_error_message(e), strlen(ffb_error_message(e)));
            }
            if (bo.commit)
                break;
        }
        ffb_batch_free(b);
    }
    if (!bo.commit)
        CALL(A_REQ, ffb_tx_commit(tx));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
}

static void sc_tx(ffb_conn *c) {
    begin_fuzz();
    ffb_tx *tx = NULL;
    ffb_tx_options to = FFB_TX_OPTIONS_INIT;
    static const ffb_tx_reservation res[] = {{"T", 1, 4}, {"U", 0, 3}};
    to.isolation = FFB_ISO_SNAPSHOT;
    to.lock_timeout = 5;
    to.reservations = res;
    to.nreservations = 2;
    int64_t id;
    uint8_t out[64];
    size_t olen = 0;
    static const uint8_t items[] = {4, 5, 6, 7, 8, 1};
    if (CALL(A_INVAL | A_STATE, ffb_tx_begin(c, &to, &tx)) == 0) {
        CALL(A_REQ, ffb_tx_id(tx, &id));
        if (CALL(A_INVAL | A_REQ, ffb_tx_info_raw(tx, items, sizeof(items),
                                                  out, sizeof(out), &olen)) == 0)
            FUZZ_CHECK(olen <= sizeof(out));
        CALL(A_REQ, ffb_tx_commit_retaining(tx));
        CALL(A_REQ, ffb_tx_rollback_retaining(tx));
        (void)ffb_tx_is_active(tx);
        CALL(A_REQ, ffb_tx_commit(tx));
        CALL(A_REQ, ffb_tx_commit(tx)); /* ended: FFB_E_STATE */
        CALL(A_REQ, ffb_tx_id(tx, &id));
        ffb_tx_free(tx);
    }
    if (CALL(A_INVAL | A_STATE, ffb_tx_begin(c, NULL, &tx)) == 0) {
        CALL(A_REQ, ffb_tx_rollback(tx));
        ffb_tx_free(tx);
    }
    /* Freed active: the rollback rides with the next request. */
    if (CALL(A_INVAL | A_STATE, ffb_tx_begin(c, NULL, &tx)) == 0) {
        CALL(A_REQ, ffb_tx_id(tx, &id));
        ffb_tx_free(tx);
    }
    CALL(A_REQ, ffb_conn_ping(c));
}

static void sc_dbinfo(ffb_conn *c) {
    begin_fuzz();
    ffb_db_info di;
    if (CALL(A_REQ, ffb_conn_db_info(c, &di, sizeof(di))) == 0) {
        FUZZ_CHECK(memchr(di.server_version, 0, sizeof(di.server_version)));
        FUZZ_CHECK(memchr(di.implementation, 0, sizeof(di.implementation)));
    }
    static const uint8_t items[] = {FFBP_INFO_PAGE_SIZE, 4, 5, 6, 101, 1};
    uint8_t out[16];
    size_t olen = 99;
    if (CALL(A_INVAL | A_REQ, ffb_conn_info_raw(c, items, sizeof(items), out,
                                                sizeof(out), &olen)) == 0)
        FUZZ_CHECK(olen <= sizeof(out));
    uint8_t out2[1024];
    if (CALL(A_INVAL | A_REQ, ffb_conn_info_raw(c, items, sizeof(items), out2,
                                                sizeof(out2), &olen)) == 0)
        FUZZ_CHECK(olen <= sizeof(out2));
    CALL(A_REQ, ffb_conn_ping(c));
    if (CALL(A_REQ, ffb_conn_db_info(c, &di, sizeof(di))) == 0)
        FUZZ_CHECK(memchr(di.server_version, 0, sizeof(di.server_version)));
}

static void sc_plan(ffb_conn *c) {
    ffb_tx *tx;
    PRE(ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *s = prepare(tx, &SP_SEL3, "select a, b, c from t");
    begin_fuzz();
    const char *plan;
    F.plan = 1;
    if (CALL(A_INVAL | A_REQ, ffb_stmt_plan(s, FFB_PLAN_LEGACY, &plan)) == 0)
        touch(plan, strlen(plan));
    F.plan = 2;
    if (CALL(A_INVAL | A_REQ, ffb_stmt_plan(s, FFB_PLAN_EXPLAINED, &plan)) == 0)
        touch(plan, strlen(plan));
    F.plan = 0;
    F.cursor_rows = 2;
    if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(s, tx)) == 0)
        fetch_all(s, 10);
    CALL(A_REQ, ffb_tx_commit(tx));
    ffb_stmt_free(s);
    ffb_tx_free(tx);
}

static void sc_immediate(ffb_conn *c) {
    ffb_tx *tx;
    PRE(ffb_tx_begin(c, NULL, &tx));
    begin_fuzz();
    F.answer_errors = (F.flags & F_C) != 0;
    CALL(A_INVAL | A_REQ,
         ffb_conn_execute_immediate(c, tx, "update t set a = 1", (size_t)-1));
    CALL(A_INVAL | A_REQ, ffb_conn_execute_immediate(
                              c, NULL, "set bind of decfloat to legacy",
                              (size_t)-1));
    CALL(A_REQ, ffb_tx_commit(tx));
    ffb_tx_free(tx);
    if (CALL(A_INVAL | A_STATE, ffb_tx_begin(c, NULL, &tx)) == 0) {
        CALL(A_INVAL | A_REQ, ffb_conn_execute_immediate(
                                  c, tx, "create table x (a int)", (size_t)-1));
        CALL(A_REQ, ffb_tx_rollback(tx));
        ffb_tx_free(tx);
    }
}

static void sc_ping(ffb_conn *c) {
    begin_fuzz();
    for (int i = 0; i < 3; i++)
        CALL(A_REQ | A_UNSUP, ffb_conn_ping(c));
}

typedef struct cbrec {
    int calls;
} cbrec;

static void on_result(ffb_conn *conn, const ffb_result *res, void *data) {
    cbrec *r = data;
    r->calls++;
    FUZZ_CHECK(conn == F.conn);
    int st = ffb_result_status(res);
    FUZZ_CHECK(st == 0 || (st < 0 && st >= FFB_E_ABORTED &&
                           st != FFB_E_AGAIN) ||
               (st <= FFB_E_FATAL && st >= FFB_E_NOMEM));
    const ffb_error *e = ffb_result_error(res);
    FUZZ_CHECK((st == 0) == (e == NULL));
    if (e)
        touch(ffb_error_message(e), strlen(ffb_error_message(e)));
    (void)ffb_result_op(res);
    (void)ffb_result_stmt(res);
    (void)ffb_result_rows_affected(res);
    (void)ffb_result_data(res);
}

static void drain_results(ffb_conn *c, int cb) {
    const ffb_result *res;
    cbrec dummy = {0};
    for (int i = 0; i < 100; i++) {
        int rc = CALL(A_ONE, ffb_conn_next_result(c, &res));
        if (rc != 1)
            break;
        FUZZ_CHECK(!cb);
        on_result(c, res, &dummy);
    }
    FUZZ_CHECK(ffb_conn_pending(c) == 0 || ffb_conn_is_broken(c));
}

static void sc_pipeline(ffb_conn *c) {
    ffb_tx *tx;
    PRE(ffb_tx_begin(c, NULL, &tx));
    ffb_stmt *ins = prepare(tx, &SP_INS1, "insert into t values (?)");
    ffb_stmt *sel = prepare(tx, &SP_SEL3, "select a, b, c from t");
    if (F.flags & F_A)
        PRE(ffb_stmt_set_fetch_size(sel, 2));
    begin_fuzz();
    int cb = (F.flags & F_B) != 0;
    cbrec rec = {0};
    F.cursor_rows = 5;
    for (int i = 0; i < 3; i++) {
        CALL(A_INVAL | A_STATE, ffb_stmt_bind_int64(ins, 0, i));
        CALL(A_INVAL | A_STATE,
             ffb_stmt_queue_execute(ins, tx, cb ? on_result : NULL, &rec));
    }
    CALL(A_INVAL | A_STATE,
         ffb_stmt_queue_execute(sel, tx, cb ? on_result : NULL, &rec));
    /* Queued again before its answer: refused. */
    CALL(A_INVAL | A_STATE, ffb_stmt_queue_execute(sel, tx, NULL, NULL));
    CALL(A_INVAL | A_STATE,
         ffb_tx_queue_commit_retaining(tx, cb ? on_result : NULL, &rec));
    CALL(0, ffb_conn_flush(c));
    drain_results(c, cb);
    fetch_all(sel, 100);
    /* A blocking call behind queued requests. */
    CALL(A_INVAL | A_STATE, ffb_stmt_queue_execute(ins, tx, NULL, NULL));
    CALL(A_REQ, ffb_conn_ping(c));
    drain_results(c, 0);
    CALL(A_INVAL | A_STATE,
         ffb_tx_queue_rollback(tx, cb ? on_result : NULL, &rec));
    CALL(0, ffb_conn_flush(c));
    drain_results(c, cb);
    CALL(A_INVAL | A_STATE, ffb_tx_queue_commit(tx, NULL, NULL));
    drain_results(c, 0);
    ffb_stmt_free(ins);
    ffb_stmt_free(sel);
    ffb_tx_free(tx);
}

static void sc_cache(ffb_conn *c) {
    ffb_tx *tx;
    ffb_stmt *a = NULL, *b = NULL;
    PRE(ffb_tx_begin(c, NULL, &tx));
    F.desc = &SP_SELECT;
    PRE(ffb_conn_prepare(c, tx, "select * from t where id > ?", (size_t)-1,
                         &a));
    ffb_stmt_free(a); /* back to the cache */
    F.desc = &SP_INS1;
    PRE(ffb_conn_prepare(c, tx, "insert into t values (?)", (size_t)-1, &b));
    ffb_stmt_free(b); /* the cache holds one: the select is remembered */
    begin_fuzz();
    /* The remembered select: prepared with its first execute. */
    F.desc = F.flags & F_C ? &SP_SEL3 : &SP_SELECT;
    F.cursor_rows = 4;
    a = NULL;
    if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_conn_prepare(c, tx,
                                               "select * from t where id > ?",
                                               (size_t)-1, &a)) == 0) {
        describe_all(a);
        CALL(A_INVAL | A_STATE, ffb_stmt_bind_int64(a, 0, 1));
        if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(a, tx)) == 0) {
            describe_all(a);
            fetch_all(a, 100);
        }
        ffb_stmt_free(a);
    }
    /* A hit. */
    F.desc = &SP_SELECT;
    a = NULL;
    if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_conn_prepare(c, tx,
                                               "select * from t where id > ?",
                                               (size_t)-1, &a)) == 0) {
        bind_all(a, 1);
        if (CALL(A_INVAL | A_REQ | A_UNSUP, ffb_stmt_execute(a, tx)) == 0)
            fetch_all(a, 2);
        ffb_stmt_free(a);
    }
    CALL(A_REQ, ffb_tx_commit(tx));
    ffb_tx_free(tx);
}

static void sc_queue(ffb_conn *c) {
    int cb = (F.flags & F_B) != 0;
    cbrec rec = {0};
    ffb_cb f = cb ? on_result : NULL;
    ffb_tx *tx1, *tx2;
    PRE(ffb_tx_begin(c, NULL, &tx1));
    PRE(ffb_tx_begin(c, NULL, &tx2)); /* tx1 is no longer the last */
    begin_fuzz();
    F.answer_errors = (F.flags & F_C) != 0;
    F.desc = &SP_SELECT;
    F.cursor_rows = F.flags & F_A ? 0 : 7;
    ffb_stmt *s = NULL;
    if (CALL(A_INVAL | A_STATE, ffb_stmt_new(c, &s)) == 0) {
        /* The prepare and the execution behind it, both queued. */
        CALL(A_INVAL | A_STATE,
             ffb_stmt_queue_prepare(s, tx1, "select * from t where id > ?",
                                    (size_t)-1, f, &rec));
        CALL(A_INVAL | A_STATE, ffb_stmt_queue_execute(s, tx1, f, &rec));
    }
    uint8_t info[64];
    static const uint8_t items[] = {4, 1};
    CALL(A_INVAL | A_STATE,
         ffb_tx_queue_info(tx1, items, sizeof(items), info, sizeof(info), f,
                           &rec));
    ffb_value v[2];
    memset(v, 0, sizeof(v));
    v[0].type = FFB_VALUE_INT64;
    v[0].i = 1;
    v[1].type = FFB_VALUE_TEXT;
    v[1].p = "x";
    v[1].len = 1;
    CALL(A_INVAL | A_STATE,
         ffb_conn_queue_execute_immediate(c, tx2, "update t set a = ?",
                                          (size_t)-1, v, 2, f, &rec));
    CALL(A_INVAL | A_STATE | A_UNSUP, ffb_conn_queue_ping(c, f, &rec));
    CALL(0, ffb_conn_flush(c));
    drain_results(c, cb);
    if (s) {
        for (int i = 0; i < 50; i++) {
            int rc = CALL(A_ONE | A_STATE | A_SERVER, ffb_stmt_fetch(s));
            if (rc != 1)
                break;
            if (i == 2 && CALL(A_ONE | A_STATE,
                               ffb_stmt_queue_fetch(s, f, &rec)) == 0)
                drain_results(c, cb);
        }
        int prc = CALL(A_ONE | A_INVAL | A_STATE,
                       ffb_stmt_queue_plan(s, FFB_PLAN_LEGACY, f, &rec));
        drain_results(c, cb);
        const char *plan;
        if (prc >= 0)
            CALL(A_REQ, ffb_stmt_plan(s, FFB_PLAN_LEGACY, &plan));
        ffb_stmt_free(s);
    }
    /* Held behind a start, then cancelled by the close. */
    ffb_tx *tx3;
    if (CALL(A_INVAL | A_STATE, ffb_tx_begin(c, NULL, &tx3)) == 0) {
        ffb_tx *tx4;
        if (CALL(A_INVAL | A_STATE, ffb_tx_begin(c, NULL, &tx4)) == 0) {
            CALL(A_INVAL | A_STATE, ffb_tx_queue_commit(tx3, f, &rec));
            ffb_tx_free(tx4);
        }
        ffb_tx_free(tx3);
    }
    if (F.flags & F_A) {
        CALL(A_INVAL | A_STATE, ffb_conn_queue_detach(c, f, &rec));
        CALL(0, ffb_conn_flush(c));
        drain_results(c, cb);
    }
    ffb_tx_free(tx1);
    ffb_tx_free(tx2);
    /* The close ends a broken connection too (it is closed then, not
       broken): not through check(), which holds broken ones broken. */
    int crc = ffb_conn_close(c);
    FUZZ_CHECK(crc == 0 || crc == FFB_E_SERVER || crc <= FFB_E_FATAL);
    FUZZ_CHECK(!ffb_conn_is_broken(c) || crc <= FFB_E_FATAL);
    F.was_broken = ffb_conn_is_broken(c);
    /* Everything queued completed (answered, failed or cancelled). */
    const ffb_result *res;
    for (int i = 0; i < 100 && ffb_conn_next_result(c, &res) == 1; i++)
        FUZZ_CHECK(ffb_result_status(res) <= 0);
    FUZZ_CHECK(ffb_conn_pending(c) == 0);
}

static void (*const sc_fn[NSCENARIOS])(ffb_conn *) = {
    sc_prepare, sc_select, sc_dml,      sc_exec2,     sc_blob_read,
    sc_blob_rows, sc_blob_write, sc_batch, sc_tx,     sc_dbinfo,
    sc_plan,    sc_immediate, sc_ping,   sc_pipeline, sc_cache, sc_queue};

/* ---- one run ------------------------------------------------------------------ */

static const int protocols[4] = {16, 17, 19, 19};

static int allowed(int sc) {
    const char *only = getenv("FFB_FUZZ_SQL_ONLY");
    if (!only || !*only)
        return 1;
    for (const char *p = only; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        if (v == sc)
            return 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* Run one input; returns 1 when the conversation ended with a polite
   close (for the generator's check). */
static int run(const uint8_t *data, size_t size, int gen) {
    if (size < 3)
        return 0;
    int sc = data[0] % NSCENARIOS;
    if (!gen && !allowed(sc))
        return 0;
    memset(&F, 0, sizeof(F));
    F.scenario = sc;
    F.protocol = protocols[data[1] & 3];
    F.flags = data[1] & ~3u;
    F.chunk = data[2];
    F.in = data + 3;
    F.in_len = size - 3;
    F.gen = gen;
    F.trace = getenv("FFB_FUZZ_SQL_TRACE") != NULL;
    F.next_tx = 7;
    F.next_stmt = 3;
    F.next_blob = 20;
    F.next_blob_id = 0x0000009000000001ull;
    ffbp_writer_init(&F.rec, NULL);
    for (size_t i = 0; i < 40; i++)
        WIDE[i] = COLS[i % NCOLS];

    ffb_conn_options o = FFB_CONN_OPTIONS_INIT;
    o.dsn = "fuzz/3050:db";
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.auth_plugins = "Legacy_Auth";
    o.wire_crypt = FFB_CRYPT_DISABLED;
    o.os_user = "u";
    o.client_host = "h";
    o.process_name = "p";
    o.process_id = 1;
    if (sc == SC_CACHE)
        o.stmt_cache_size = 1;
    F.rows_cap = F.flags & F_A ? 2 : 8;
    if (sc == SC_SELECT && (F.flags & F_B)) {
        o.fetch_size = 3;
        if (F.rows_cap > 3)
            F.rows_cap = 3;
    }
    ffb_conn *c = NULL;
    FUZZ_CHECK(ffb_conn_new(&o, &c) == 0);
    F.conn = c;
    ffb__conn_set_transport(c, &fz_transport, NULL);
    PRE(ffb_conn_connect(c));
    FUZZ_CHECK(ffb_conn_protocol(c) == F.protocol);

    sc_fn[sc](c);

    /* Closed either way: a failed close leaves the connection closed
       (state closed, not broken), so it is checked apart. */
    int rc = ffb_conn_close(c);
    if (F.trace)
        fprintf(stderr, "close = %d %s\n", rc,
                ffb_error_message(ffb_conn_error(c)));
    FUZZ_CHECK(rc == 0 || rc == FFB_E_SERVER ||
               (rc <= FFB_E_FATAL && rc >= FFB_E_NOMEM));
    FUZZ_CHECK(!ffb_conn_is_attached(c));
    FUZZ_CHECK(rc == 0 || ffb_error_message(ffb_conn_error(c))[0] != '\0');
    int clean = rc == 0 && !F.ever_broken;
    if (F.trace)
        fprintf(stderr, "scenario %s, protocol %d, flags %02x: %zu of %zu "
                        "bytes, %zu reads, close %d\n",
                sc_names[sc], F.protocol, F.flags, F.in_pos, F.in_len,
                F.fuzz_reads, rc);
    ffb_conn_free(c);
    return clean;
}

/* ---- the seed corpus ---------------------------------------------------------- */

static void gen_one(const char *dir, int sc, unsigned pflags, int chunk) {
    uint8_t hdr[3] = {(uint8_t)sc, (uint8_t)pflags, 0};
    FUZZ_CHECK(run(hdr, 3, 1) == 1);
    ffbp_writer seed;
    ffbp_writer_init(&seed, NULL);
    hdr[2] = (uint8_t)chunk;
    ffbp_put_raw(&seed, hdr, 3);
    if (chunk == 0) {
        ffbp_put_raw(&seed, F.rec.data, F.rec.len);
    } else { /* the same bytes without the record headers */
        for (size_t pos = 0; pos + 2 <= F.rec.len;) {
            size_t n = (size_t)F.rec.data[pos] << 8 | F.rec.data[pos + 1];
            ffbp_put_raw(&seed, F.rec.data + pos + 2, n);
            pos += 2 + n;
        }
    }
    ffbp_writer_free(&F.rec);
    FUZZ_CHECK(!seed.failed);
    /* The seed must replay as a clean conversation. */
    uint8_t *copy = malloc(seed.len);
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, seed.data, seed.len);
    int clean = run(copy, seed.len, 0);
    size_t used = F.in_pos, len = F.in_len;
    free(copy);
    if (!clean || used != len) {
        fprintf(stderr, "seed %s/%02x/%d does not replay cleanly (%zu of %zu "
                        "bytes used)\n",
                sc_names[sc], pflags, chunk, used, len);
        abort();
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    FUZZ_CHECK(EVP_Digest(seed.data, seed.len, md, &mdlen, EVP_sha256(),
                          NULL) == 1);
    char path[4096];
    int k = snprintf(path, sizeof(path), "%s/", dir);
    for (unsigned i = 0; i < mdlen; i++)
        k += snprintf(path + k, sizeof(path) - (size_t)k, "%02x", md[i]);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        abort();
    }
    FUZZ_CHECK(fwrite(seed.data, 1, seed.len, f) == seed.len);
    fclose(f);
    printf("%-10s protocol %d flags %02x chunk %3d: %6zu bytes  %s\n",
           sc_names[sc], protocols[pflags & 3], pflags & ~3u, chunk, seed.len,
           path + strlen(dir) + 1);
    ffbp_writer_free(&seed);
}

static void gen_all(const char *dir) {
    static const unsigned scen_flags[NSCENARIOS][4] = {
        [SC_PREPARE] = {F_A, F_B, F_C, 0},
        [SC_SELECT] = {F_A, F_B, F_C, 0},
        [SC_PIPELINE] = {F_A, F_B, F_A | F_B, 0},
        [SC_BATCH] = {F_A, F_B, F_C, F_A | F_C},
        [SC_BLOB_ROWS] = {F_A, 0, 0, 0},
        [SC_BLOB_WRITE] = {F_B, 0, 0, 0},
        [SC_IMMEDIATE] = {F_C, 0, 0, 0},
        [SC_CACHE] = {F_C, 0, 0, 0},
    };
    for (int sc = 0; sc < NSCENARIOS; sc++) {
        /* Plain, on each protocol. */
        for (unsigned p = 0; p < 3; p++)
            gen_one(dir, sc, p, 0);
        for (int i = 0; i < 4 && scen_flags[sc][i]; i++)
            gen_one(dir, sc, 2 | scen_flags[sc][i], 0);
        /* Byte by byte. */
        gen_one(dir, sc, 2, 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int checked;
    if (!checked) {
        checked = 1;
        memset(big, 'x', sizeof(big));
        const char *lax = getenv("FFB_FUZZ_SQL_LAX");
        lax_nobreak = lax && strstr(lax, "nobreak") != NULL;
        lax_state = lax && strstr(lax, "state") != NULL;
        lax_unsup = lax && strstr(lax, "unsup") != NULL;
        lax_colinfo = lax && strstr(lax, "colinfo") != NULL;
        const char *dir = getenv("FFB_FUZZ_SQL_GEN");
        if (dir && *dir) {
            gen_all(dir);
            exit(0);
        }
    }
    run(data, size, 0);
    return 0;
}
