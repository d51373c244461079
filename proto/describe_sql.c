/*
 * The statement describe: parsing a statement info answer (protocol
 * reference 02, 3.4 and 3.4.2; the algorithm of fbclient's
 * StatementMetadata::parse). The answer is an info buffer: items
 * code(1) len(2, LE) value(len), except the bare bytes 4 (select),
 * 5 (bind) and 8 (describe_end) and the markers 1 (end) and
 * 2 (truncated). Numbers are little-endian of the given length.
 */
#include "proto/sql.h"

#include <limits.h>
#include <string.h>

/* A cursor over the info buffer. */
typedef struct info {
    const uint8_t *p;
    size_t len;
    size_t pos;
} info;

/* Which side the describe items currently refer to. */
typedef struct side {
    uint32_t *count;
    ffbp_var *vars;
    size_t cap;
    int *have;
} side;

/* Read the length and the value of an item whose code was consumed. */
static int get_item(info *in, const uint8_t **v, size_t *n) {
    if (in->len - in->pos < 2)
        return FFBP_EBAD;
    size_t k = (size_t)in->p[in->pos] | (size_t)in->p[in->pos + 1] << 8;
    in->pos += 2;
    if (in->len - in->pos < k)
        return FFBP_EBAD;
    *v = in->p + in->pos;
    *n = k;
    in->pos += k;
    return FFBP_OK;
}

static int to_int(int64_t v) {
    if (v > INT_MAX)
        return INT_MAX;
    if (v < INT_MIN)
        return INT_MIN;
    return (int)v;
}

static ffbp_bytes view(const uint8_t *v, size_t n) {
    ffbp_bytes b = {v, (uint32_t)n}; /* n < 65536 */
    return b;
}

/* isc_info_error: the failing item byte and a 4-byte LE gds code. The
   first one with a code is kept (a memset-zeroed `d` works too). */
static void note_error(ffbp_sqlinfo *d, const uint8_t *v, size_t n) {
    if (d->error_code != 0)
        return;
    d->error_item = n >= 1 ? v[0] : 0;
    d->error_code = n >= 2 ? (int32_t)ffbp_le_u32(v + 1, n - 1) : 0;
}

/* Store one per-variable item into var (NULL: beyond the caller's
   capacity, or before any sqlda_seq). */
static void store_var_item(ffbp_var *var, uint8_t code, const uint8_t *v,
                           size_t n) {
    if (!var)
        return;
    int64_t num = ffbp_le_int(v, n);
    switch (code) {
    case FFBP_INFO_SQL_TYPE:
        var->sqltype = to_int(num) & ~1;
        var->nullable = (int)(num & 1);
        break;
    case FFBP_INFO_SQL_SUB_TYPE:
        var->subtype = to_int(num);
        break;
    case FFBP_INFO_SQL_SCALE:
        var->scale = to_int(num);
        break;
    case FFBP_INFO_SQL_LENGTH:
        var->length = to_int(num);
        break;
    case FFBP_INFO_SQL_NULL_IND:
        var->nullable = num != 0;
        break;
    case FFBP_INFO_SQL_FIELD:
        var->field = view(v, n);
        break;
    case FFBP_INFO_SQL_RELATION:
        var->relation = view(v, n);
        break;
    case FFBP_INFO_SQL_OWNER:
        var->owner = view(v, n);
        break;
    case FFBP_INFO_SQL_ALIAS:
        var->alias = view(v, n);
        break;
    case FFBP_INFO_SQL_RELATION_ALIAS:
        var->relation_alias = view(v, n);
        break;
    default: /* message_seq */
        break;
    }
}

static int is_var_item(uint8_t c) {
    return (c >= FFBP_INFO_SQL_SQLDA_SEQ && c <= FFBP_INFO_SQL_ALIAS) ||
           c == FFBP_INFO_SQL_RELATION_ALIAS || c == FFBP_INFO_ERROR;
}

/*
 * The per-variable items after describe_vars, up to the first byte that is
 * not one of them (left for the top level). Returns FFBP_OK, FFBP_EBAD, or
 * FFBP_INCOMPLETE when isc_info_truncated ends the answer.
 */
static int parse_vars(info *in, ffbp_sqlinfo *d, const side *s) {
    ffbp_var *cur = NULL;
    while (in->pos < in->len) {
        uint8_t c = in->p[in->pos];
        if (c == FFBP_INFO_SQL_DESCRIBE_END) {
            in->pos++;
            if (cur)
                cur->complete = 1;
            continue;
        }
        if (c == FFBP_INFO_TRUNCATED) {
            in->pos++;
            return FFBP_INCOMPLETE;
        }
        if (!is_var_item(c))
            return FFBP_OK;
        in->pos++;
        const uint8_t *v;
        size_t n;
        if (get_item(in, &v, &n) != FFBP_OK)
            return FFBP_EBAD;
        if (c == FFBP_INFO_SQL_SQLDA_SEQ) {
            int64_t seq = ffbp_le_int(v, n);
            if (seq < 1 || seq > (int64_t)*s->count)
                return FFBP_EBAD;
            cur = (size_t)(seq - 1) < s->cap ? &s->vars[seq - 1] : NULL;
        } else if (c == FFBP_INFO_ERROR) {
            note_error(d, v, n);
        } else {
            store_var_item(cur, c, v, n);
        }
    }
    return FFBP_OK;
}

/* isc_info_sql_records: nested code(1) len(2) value items, ended by
   isc_info_end. */
static int parse_records(ffbp_sqlinfo *d, const uint8_t *v, size_t n) {
    info in = {v, n, 0};
    while (in.pos < in.len) {
        uint8_t c = in.p[in.pos++];
        if (c == FFBP_INFO_END || c == FFBP_INFO_TRUNCATED)
            break;
        const uint8_t *x;
        size_t k;
        if (get_item(&in, &x, &k) != FFBP_OK)
            return FFBP_EBAD;
        /* isc_info_req_select_count 13 .. delete_count 16 */
        if (c >= 13 && c <= 16)
            d->records[c - 13] = ffbp_le_int(x, k);
    }
    return FFBP_OK;
}

/* A top-level item with a length (code consumed). */
static int parse_item(info *in, ffbp_sqlinfo *d, uint8_t c, const side *s) {
    const uint8_t *v;
    size_t n;
    if (get_item(in, &v, &n) != FFBP_OK)
        return FFBP_EBAD;
    int64_t num = ffbp_le_int(v, n);
    switch (c) {
    case FFBP_INFO_SQL_DESCRIBE_VARS:
    case FFBP_INFO_SQL_NUM_VARIABLES:
        if (!s || num < 0 || num > (int64_t)UINT32_MAX)
            return FFBP_EBAD;
        *s->count = (uint32_t)num;
        if (c == FFBP_INFO_SQL_NUM_VARIABLES)
            return FFBP_OK;
        *s->have = 1;
        return parse_vars(in, d, s);
    case FFBP_INFO_SQL_STMT_TYPE:
        d->stmt_type = to_int(num);
        return FFBP_OK;
    case FFBP_INFO_SQL_STMT_FLAGS:
        d->stmt_flags = to_int(num);
        return FFBP_OK;
    case FFBP_INFO_SQL_BATCH_FETCH:
        d->batch_fetch = to_int(num);
        return FFBP_OK;
    case FFBP_INFO_SQL_GET_PLAN:
    case FFBP_INFO_SQL_EXPLAIN_PLAN:
        d->plan = view(v, n);
        return FFBP_OK;
    case FFBP_INFO_SQL_RECORDS:
        return parse_records(d, v, n);
    case FFBP_INFO_ERROR:
        note_error(d, v, n);
        return FFBP_OK;
    default: /* unknown item: skipped by its length */
        return FFBP_OK;
    }
}

int ffbp_parse_describe(const uint8_t *p, size_t len, ffbp_sqlinfo *d) {
    info in = {p, len, 0};
    side in_side = {&d->in_count, d->in, d->in ? d->in_cap : 0, &d->have_in};
    side out_side = {&d->out_count, d->out, d->out ? d->out_cap : 0,
                     &d->have_out};
    const side *target = NULL;
    d->truncated = 0;
    while (in.pos < in.len) {
        uint8_t c = in.p[in.pos++];
        int rc = FFBP_OK;
        switch (c) {
        case FFBP_INFO_END:
            return FFBP_OK;
        case FFBP_INFO_TRUNCATED:
            d->truncated = 1;
            return FFBP_OK;
        case FFBP_INFO_SQL_SELECT:
            target = &out_side;
            break;
        case FFBP_INFO_SQL_BIND:
            target = &in_side;
            break;
        case FFBP_INFO_SQL_DESCRIBE_END:
            break;
        default:
            rc = parse_item(&in, d, c, target);
            break;
        }
        if (rc == FFBP_INCOMPLETE) {
            d->truncated = 1;
            return FFBP_OK;
        }
        if (rc != FFBP_OK)
            return rc;
    }
    return FFBP_OK;
}

void ffbp_sqlinfo_init(ffbp_sqlinfo *d, ffbp_var *in, size_t in_cap,
                       ffbp_var *out, size_t out_cap) {
    memset(d, 0, sizeof(*d));
    d->stmt_flags = -1;
    d->batch_fetch = -1;
    for (size_t i = 0; i < 4; i++)
        d->records[i] = -1;
    d->error_item = -1;
    d->in = in;
    d->in_cap = in ? in_cap : 0;
    d->out = out;
    d->out_cap = out ? out_cap : 0;
    if (d->in_cap)
        memset(in, 0, d->in_cap * sizeof(*in));
    if (d->out_cap)
        memset(out, 0, d->out_cap * sizeof(*out));
}

uint32_t ffbp_sqlinfo_incomplete(const ffbp_sqlinfo *d, int select) {
    uint32_t count = select ? d->out_count : d->in_count;
    const ffbp_var *vars = select ? d->out : d->in;
    size_t cap = select ? d->out_cap : d->in_cap;
    for (uint32_t i = 0; i < count; i++)
        if (i >= cap || !vars[i].complete)
            return i + 1;
    return 0;
}
