/*
 * Error objects: result codes, status vectors turned into messages,
 * SQLSTATE and SQLCODE. The texts per gds code come from lib/errmsg.c.
 */
#include <stdio.h>
#include <string.h>

#include "lib/errmsg.h"
#include "lib/internal.h"

static const struct {
    int code;
    const char *name;
    const char *text;
} codes[] = {
#define FFB__ERRNO_ROW(name, value, text) {value, "FFB_" #name, text},
    FFB_ERRNO_MAP(FFB__ERRNO_ROW)
#undef FFB__ERRNO_ROW
};

const char *ffb_strerror(int code) {
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (codes[i].code == code)
            return codes[i].text;
    return "unknown error code";
}

const char *ffb_err_name(int code) {
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (codes[i].code == code)
            return codes[i].name;
    return "FFB_E_UNKNOWN";
}

void ffb__error_clear(ffb_error *err) {
    err->code = 0;
    err->ncodes = 0;
    err->nargs = 0;
    err->pool_len = 0;
    err->sqlstate[0] = '\0';
    err->sqlcode = 0;
    err->message[0] = '\0';
}

int ffb__error_set(ffb_error *err, int code, const char *fmt, ...) {
    ffb__error_clear(err);
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return code;
}

/* Copy a string argument into the pool; NULL when the pool is full. */
static const char *pool_add(ffb_error *err, const char *p, size_t len) {
    size_t room = sizeof(err->pool) - err->pool_len;
    if (room == 0)
        return NULL;
    if (len >= room)
        len = room - 1;
    char *d = err->pool + err->pool_len;
    memcpy(d, p, len);
    d[len] = '\0';
    err->pool_len += len + 1;
    return d;
}

int ffb__status_is_error(const ffbp_status *st) {
    return ffb__status_first_gds(st) != 0;
}

uint32_t ffb__status_first_gds(const ffbp_status *st) {
    for (size_t i = 0; i < st->n; i++) {
        if (st->args[i].type == FFBP_ARG_GDS)
            return (uint32_t)st->args[i].num;
        if (st->args[i].type == FFBP_ARG_INTERPRETED)
            return 1; /* a bare interpreted message is an error too */
        if (st->args[i].type == FFBP_ARG_WARNING)
            return 0;
    }
    return 0;
}

static void append(char *buf, size_t size, size_t *len, const char *s) {
    if (*len >= size - 1)
        return;
    int n = snprintf(buf + *len, size - *len, "%s", s);
    if (n > 0)
        *len = (size_t)n >= size - *len ? size - 1 : *len + (size_t)n;
}

/* The gds codes that have an FFB_E_* code of their own (docs/cancel.md). */
#define GDS_CANCELLED 335544794u
#define GDS_CFG_STMT_TIMEOUT 335545127u
#define GDS_ATT_STMT_TIMEOUT 335545128u
#define GDS_REQ_STMT_TIMEOUT 335545129u
#define GDS_ATT_SHUTDOWN 335544856u

int ffb__status_code(const ffbp_status *st, int code) {
    if (code != FFB_E_SERVER)
        return code;
    uint32_t first = 0;
    for (size_t i = 0; i < st->n; i++) {
        const ffbp_status_arg *a = &st->args[i];
        if (a->type != FFBP_ARG_GDS || a->num == 0)
            continue;
        uint32_t g = (uint32_t)a->num;
        if (!first) {
            first = g;
            if (g == GDS_ATT_SHUTDOWN)
                return FFB_E_SHUTDOWN;
            if (g != GDS_CANCELLED)
                return code;
            continue;
        }
        if (g == GDS_CFG_STMT_TIMEOUT || g == GDS_ATT_STMT_TIMEOUT ||
            g == GDS_REQ_STMT_TIMEOUT)
            return FFB_E_STMT_TIMEOUT;
    }
    return first == GDS_CANCELLED ? FFB_E_CANCELLED : code;
}

int ffb__error_from_status(ffb_error *err, int code, const ffbp_status *st,
                           const char *prefix) {
    ffb__error_clear(err);
    code = ffb__status_code(st, code);
    err->code = code;
    const char *server_state = NULL;
    int have_sqlerr = 0;
    int32_t sqlerr_num = 0;
    uint32_t errcodes[FFB__ERR_MAX_CODES] = {0};
    size_t nerr = 0;
    int in_sqlerr = 0;

    for (size_t i = 0; i < st->n; i++) {
        const ffbp_status_arg *a = &st->args[i];
        switch (a->type) {
        case FFBP_ARG_GDS:
        case FFBP_ARG_WARNING:
        case FFBP_ARG_INTERPRETED:
            in_sqlerr = 0;
            if (a->type == FFBP_ARG_GDS && a->num == 0)
                break; /* the success marker in front of warnings */
            if (err->ncodes >= FFB__ERR_MAX_CODES)
                break;
            err->codes[err->ncodes] =
                a->type == FFBP_ARG_INTERPRETED ? 0 : (uint32_t)a->num;
            err->warning[err->ncodes] = a->type == FFBP_ARG_WARNING;
            err->arg_first[err->ncodes] = (uint8_t)err->nargs;
            err->arg_count[err->ncodes] = 0;
            err->ncodes++;
            if (a->type == FFBP_ARG_GDS && nerr < FFB__ERR_MAX_CODES)
                errcodes[nerr++] = (uint32_t)a->num;
            if (a->type == FFBP_ARG_GDS &&
                (uint32_t)a->num == FFB__GDS_CODE_SQLERR)
                in_sqlerr = 1;
            if (a->type == FFBP_ARG_INTERPRETED &&
                err->nargs < FFB__ERR_MAX_ARGS) {
                const char *s = pool_add(err, (const char *)a->str, a->len);
                if (s) {
                    err->arg_off[err->nargs++] = (uint16_t)(s - err->pool);
                    err->arg_count[err->ncodes - 1] = 1;
                }
            }
            break;
        case FFBP_ARG_STRING:
        case FFBP_ARG_NUMBER:
        case FFBP_ARG_UNIX:
        case FFBP_ARG_WIN32:
        case FFBP_ARG_NEXT_MACH: {
            if (a->type == FFBP_ARG_NUMBER && in_sqlerr && !have_sqlerr) {
                have_sqlerr = 1;
                sqlerr_num = a->num;
            }
            if (err->ncodes == 0 || err->nargs >= FFB__ERR_MAX_ARGS)
                break;
            char num[16];
            const char *s;
            if (a->type == FFBP_ARG_STRING) {
                s = pool_add(err, (const char *)a->str, a->len);
            } else {
                snprintf(num, sizeof(num), "%ld", (long)a->num);
                s = pool_add(err, num, strlen(num));
            }
            if (s && err->arg_count[err->ncodes - 1] < 255) {
                err->arg_off[err->nargs++] = (uint16_t)(s - err->pool);
                err->arg_count[err->ncodes - 1]++;
            }
            break;
        }
        case FFBP_ARG_SQL_STATE:
            if (a->len == 5) {
                memcpy(err->sqlstate, a->str, 5);
                err->sqlstate[5] = '\0';
                server_state = err->sqlstate;
            }
            break;
        default:
            break;
        }
    }
    err->sqlcode = ffb__status_sqlcode(errcodes, nerr, have_sqlerr, sqlerr_num);
    if (!server_state) {
        const char *s = ffb__status_sqlstate(errcodes, nerr, NULL);
        snprintf(err->sqlstate, sizeof(err->sqlstate), "%s", s);
    }

    size_t len = 0;
    char *m = err->message;
    size_t size = sizeof(err->message);
    m[0] = '\0';
    if (prefix)
        append(m, size, &len, prefix);
    for (size_t i = 0; i < err->ncodes; i++) {
        if (len)
            append(m, size, &len, "\n- ");
        if (err->codes[i] == 0) { /* interpreted text */
            if (err->arg_count[i])
                append(m, size, &len, err->pool + err->arg_off[err->arg_first[i]]);
            continue;
        }
        if (err->warning[i])
            append(m, size, &len, "warning: ");
        if (len < size - 1) {
            const char *args[FFB__ERR_MAX_ARGS];
            size_t na = err->arg_count[i];
            for (size_t k = 0; k < na; k++)
                args[k] = err->pool + err->arg_off[err->arg_first[i] + k];
            int n = ffb__gds_format(m + len, size - len, err->codes[i], args,
                                    na);
            if (n > 0)
                len = (size_t)n >= size - len ? size - 1 : len + (size_t)n;
        }
    }
    if (err->ncodes && err->codes[0]) {
        const struct ffb__gds_entry *e = ffb__gds_lookup(err->codes[0]);
        char tail[96];
        snprintf(tail, sizeof(tail), " [%s, SQLSTATE %s]",
                 e && e->symbol ? e->symbol : "unknown", err->sqlstate);
        append(m, size, &len, tail);
    }
    return code;
}

/* ---- public accessors ---------------------------------------------------- */

int ffb_error_code(const ffb_error *err) { return err ? err->code : 0; }

uint32_t ffb_error_gds(const ffb_error *err) {
    for (size_t i = 0; err && i < err->ncodes; i++)
        if (!err->warning[i] && err->codes[i])
            return err->codes[i];
    return 0;
}

size_t ffb_error_count(const ffb_error *err) { return err ? err->ncodes : 0; }

uint32_t ffb_error_gds_at(const ffb_error *err, size_t i) {
    return err && i < err->ncodes ? err->codes[i] : 0;
}

const char *ffb_error_symbol_at(const ffb_error *err, size_t i) {
    if (!err || i >= err->ncodes)
        return "";
    const struct ffb__gds_entry *e = ffb__gds_lookup(err->codes[i]);
    return e && e->symbol ? e->symbol : "";
}

size_t ffb_error_arg_count(const ffb_error *err, size_t i) {
    return err && i < err->ncodes ? err->arg_count[i] : 0;
}

const char *ffb_error_arg(const ffb_error *err, size_t i, size_t j) {
    if (!err || i >= err->ncodes || j >= err->arg_count[i])
        return NULL;
    return err->pool + err->arg_off[err->arg_first[i] + j];
}

const char *ffb_error_sqlstate(const ffb_error *err) {
    return err ? err->sqlstate : "";
}

int ffb_error_sqlcode(const ffb_error *err) { return err ? err->sqlcode : 0; }

const char *ffb_error_message(const ffb_error *err) {
    if (!err)
        return "";
    if (err->message[0] == '\0' && err->code != 0)
        return ffb_strerror(err->code);
    return err->message;
}

int ffb_error_has(const ffb_error *err, uint32_t gds) {
    for (size_t i = 0; err && i < err->ncodes; i++)
        if (err->codes[i] == gds)
            return 1;
    return 0;
}
