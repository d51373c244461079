/* Services API packets and buffers; reference 03, C.6. */
#include "proto/service.h"

#include <string.h>

#include "proto/proto.h"

void ffbp_put_service_start(ffbp_writer *w, const uint8_t *spb, size_t len) {
    ffbp_put_i32(w, FFBP_OP_SERVICE_START);
    ffbp_put_i16(w, 0); /* object: the server ignores it */
    ffbp_put_i16(w, 0); /* incarnation */
    ffbp_put_cstring(w, spb, len);
}

void ffbp_put_service_info(ffbp_writer *w, const uint8_t *send,
                           size_t send_len, const uint8_t *recv,
                           size_t recv_len, uint32_t buffer_len) {
    ffbp_put_i32(w, FFBP_OP_SERVICE_INFO);
    ffbp_put_i16(w, 0);
    ffbp_put_i16(w, 0);
    ffbp_put_cstring(w, send, send_len);
    ffbp_put_cstring(w, recv, recv_len);
    ffbp_put_u32(w, buffer_len);
}

void ffbp_put_cancel(ffbp_writer *w, int32_t kind) {
    ffbp_put_i32(w, FFBP_OP_CANCEL);
    ffbp_put_i32(w, kind);
}

/* ---- SpbStart ------------------------------------------------------------ */

static void le32(uint8_t *b, uint32_t v) {
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}

void ffbp_spb_begin(ffbp_spb *s, ffbp_writer *w, uint8_t action) {
    s->w = w;
    s->bad = 0;
    ffbp_put_raw(w, &action, 1);
}

void ffbp_spb_bytes(ffbp_spb *s, uint8_t tag, const void *p, size_t len) {
    if (len > 65535) {
        s->bad = 1;
        return;
    }
    uint8_t h[3] = {tag, (uint8_t)len, (uint8_t)(len >> 8)};
    ffbp_put_raw(s->w, h, 3);
    ffbp_put_raw(s->w, p, len);
}

void ffbp_spb_str(ffbp_spb *s, uint8_t tag, const char *str) {
    ffbp_spb_bytes(s, tag, str, str ? strlen(str) : 0);
}

void ffbp_spb_int(ffbp_spb *s, uint8_t tag, uint32_t v) {
    uint8_t b[5];
    b[0] = tag;
    le32(b + 1, v);
    ffbp_put_raw(s->w, b, 5);
}

void ffbp_spb_byte(ffbp_spb *s, uint8_t tag, uint8_t v) {
    uint8_t b[2] = {tag, v};
    ffbp_put_raw(s->w, b, 2);
}

void ffbp_spb_flag(ffbp_spb *s, uint8_t tag) { ffbp_put_raw(s->w, &tag, 1); }

void ffbp_put_svc_send_items(ffbp_writer *w, uint32_t timeout_s,
                             int with_data, const void *data, size_t len) {
    if (timeout_s) {
        uint8_t b[7] = {FFBP_SVC_INFO_TIMEOUT, 4, 0};
        le32(b + 3, timeout_s);
        ffbp_put_raw(w, b, 7);
    }
    if (with_data) {
        uint8_t h[3] = {FFBP_SVC_INFO_LINE, (uint8_t)len,
                        (uint8_t)(len >> 8)};
        ffbp_put_raw(w, h, 3);
        ffbp_put_raw(w, data, len);
    }
    uint8_t end = FFBP_SVC_INFO_END;
    ffbp_put_raw(w, &end, 1);
}

/* ---- the answer ---------------------------------------------------------- */

/* A 4-byte number without a length (isc_info_svc_version, _capabilities,
   _running, _stdin). */
static int get_num(const uint8_t *p, size_t len, size_t *i, int64_t *out) {
    if (*out != -1 || len - *i < 4)
        return FFBP_EBAD;
    *out = (int64_t)ffbp_le_u32(p + *i, 4);
    *i += 4;
    return 0;
}

/* uint16 LE length + bytes. */
static int get_str(const uint8_t *p, size_t len, size_t *i, ffbp_bytes *out) {
    if (out->p || len - *i < 2)
        return FFBP_EBAD;
    size_t n = (size_t)p[*i] | (size_t)p[*i + 1] << 8;
    if (len - *i - 2 < n)
        return FFBP_EBAD;
    out->p = p + *i + 2;
    out->len = n;
    *i += 2 + n;
    return 0;
}

/*
 * isc_info_svc_svr_db_info: { isc_spb_num_att (5) int32 | isc_spb_num_db
 * (6) int32 | isc_spb_dbname (106) uint16 len + name }*, then
 * isc_info_flag_end (127).
 */
static int get_db_info(const uint8_t *p, size_t len, size_t *i,
                       ffbp_svc_answer *out) {
    if (out->num_att != -1 || out->num_db != -1 || out->ndbnames)
        return FFBP_EBAD;
    for (;;) {
        if (*i >= len)
            return FFBP_EBAD;
        uint8_t tag = p[(*i)++];
        if (tag == FFBP_SVC_INFO_FLAG_END)
            return 0;
        if (tag == 5 || tag == 6) {
            int64_t *v = tag == 5 ? &out->num_att : &out->num_db;
            if (get_num(p, len, i, v) < 0)
                return FFBP_EBAD;
        } else if (tag == 106) {
            ffbp_bytes name = {0};
            if (get_str(p, len, i, &name) < 0)
                return FFBP_EBAD;
            if (out->ndbnames < FFBP_SVC_MAX_DBNAMES)
                out->dbnames[out->ndbnames++] = name;
        } else {
            return FFBP_EBAD;
        }
    }
}

int ffbp_get_svc_answer(const uint8_t *p, size_t len, ffbp_svc_answer *out) {
    memset(out, 0, sizeof(*out));
    out->version = out->capabilities = out->running = out->stdin_wanted = -1;
    out->num_att = out->num_db = -1;
    if (!p && len)
        return FFBP_EBAD;
    size_t i = 0;
    while (i < len) {
        uint8_t item = p[i++];
        int rc = 0;
        switch (item) {
        case FFBP_SVC_INFO_END:
            out->ended = 1;
            return 0;
        case FFBP_SVC_INFO_TRUNCATED:
            out->truncated = 1;
            break;
        case FFBP_SVC_INFO_DATA_NOT_READY:
            out->not_ready = 1;
            break;
        case FFBP_SVC_INFO_TIMEOUT:
            out->timeout = 1;
            break;
        case FFBP_SVC_INFO_VERSION:
            rc = get_num(p, len, &i, &out->version);
            break;
        case FFBP_SVC_INFO_CAPABILITIES:
            rc = get_num(p, len, &i, &out->capabilities);
            break;
        case FFBP_SVC_INFO_RUNNING:
            rc = get_num(p, len, &i, &out->running);
            break;
        case FFBP_SVC_INFO_STDIN:
            rc = get_num(p, len, &i, &out->stdin_wanted);
            break;
        case FFBP_SVC_INFO_SERVER_VERSION:
            rc = get_str(p, len, &i, &out->server_version);
            break;
        case FFBP_SVC_INFO_IMPLEMENTATION:
            rc = get_str(p, len, &i, &out->implementation);
            break;
        case FFBP_SVC_INFO_USER_DBPATH:
            rc = get_str(p, len, &i, &out->user_dbpath);
            break;
        case FFBP_SVC_INFO_GET_ENV:
            rc = get_str(p, len, &i, &out->env);
            break;
        case FFBP_SVC_INFO_GET_ENV_LOCK:
            rc = get_str(p, len, &i, &out->env_lock);
            break;
        case FFBP_SVC_INFO_GET_ENV_MSG:
            rc = get_str(p, len, &i, &out->env_msg);
            break;
        case FFBP_SVC_INFO_LINE:
        case FFBP_SVC_INFO_TO_EOF:
            if (out->has_output)
                return FFBP_EBAD;
            rc = get_str(p, len, &i, &out->output);
            out->has_output = 1;
            out->output_item = item;
            /* An empty chunk is {p != NULL, 0}: get_str checked it is
               the first. */
            break;
        case FFBP_SVC_INFO_SVR_DB_INFO:
            rc = get_db_info(p, len, &i, out);
            break;
        default:
            return FFBP_EBAD;
        }
        if (rc < 0)
            return FFBP_EBAD;
    }
    return 0;
}
