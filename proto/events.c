/* Event requests, EPBs and the aux connection's packets (reference 03,
   C.5). */
#include <string.h>

#include "proto/events.h"

void ffbp_put_connect_request(ffbp_writer *w, uint16_t db) {
    ffbp_put_i32(w, FFBP_OP_CONNECT_REQUEST);
    ffbp_put_i16(w, FFBP_P_REQ_ASYNC);
    ffbp_put_i16(w, db);
    ffbp_put_i32(w, 0); /* partner */
}

void ffbp_put_que_events(ffbp_writer *w, uint16_t db, const uint8_t *epb,
                         size_t epb_len, int32_t rid) {
    ffbp_put_i32(w, FFBP_OP_QUE_EVENTS);
    ffbp_put_i16(w, db);
    ffbp_put_cstring(w, epb, epb_len);
    ffbp_put_i32(w, 0); /* ast */
    ffbp_put_i32(w, 0); /* arg */
    ffbp_put_i32(w, rid);
}

void ffbp_put_cancel_events(ffbp_writer *w, uint16_t db, int32_t rid) {
    ffbp_put_i32(w, FFBP_OP_CANCEL_EVENTS);
    ffbp_put_i16(w, db);
    ffbp_put_i32(w, rid);
}

int ffbp_put_epb(ffbp_writer *w, const ffbp_epb_item *items, size_t n) {
    size_t total = 1;
    for (size_t i = 0; i < n; i++) {
        if (!items[i].name || items[i].len == 0 || items[i].len > 255)
            return FFBP_EBAD;
        total += 1 + items[i].len + 4;
        if (total > FFBP_EPB_MAX)
            return FFBP_EBAD;
    }
    uint8_t b = FFBP_EPB_VERSION1;
    ffbp_put_raw(w, &b, 1);
    for (size_t i = 0; i < n; i++) {
        uint8_t len = (uint8_t)items[i].len, c[4];
        uint32_t v = items[i].count;
        ffbp_put_raw(w, &len, 1);
        ffbp_put_raw(w, items[i].name, items[i].len);
        c[0] = (uint8_t)v;
        c[1] = (uint8_t)(v >> 8);
        c[2] = (uint8_t)(v >> 16);
        c[3] = (uint8_t)(v >> 24);
        ffbp_put_raw(w, c, 4);
    }
    return FFBP_OK;
}

int ffbp_epb_next(const uint8_t *p, size_t len, size_t *pos,
                  const uint8_t **name, size_t *name_len, uint32_t *count) {
    size_t i = *pos;
    if (len == 0)
        return 0;
    if (i == 0) {
        if (p[0] != FFBP_EPB_VERSION1)
            return FFBP_EBAD;
        i = 1;
    }
    if (i >= len)
        return 0;
    size_t n = p[i];
    if (len - i - 1 < n + 4)
        return FFBP_EBAD;
    *name = p + i + 1;
    *name_len = n;
    *count = ffbp_le_u32(p + i + 1 + n, 4);
    *pos = i + 1 + n + 4;
    return 1;
}

int ffbp_aux_port(const uint8_t *data, size_t len, uint16_t *port) {
    if (!data || len < 16 || len > 128)
        return FFBP_EBAD;
    uint16_t v = (uint16_t)(data[2] << 8 | data[3]);
    if (v == 0)
        return FFBP_EBAD;
    *port = v;
    return FFBP_OK;
}

static int get_event(ffbp_reader *r, ffbp_event *out) {
    uint16_t db;
    ffbp_bytes epb;
    int32_t ast, arg, rid;
    FFBP_TRY(ffbp_get_u16(r, &db));
    FFBP_TRY(ffbp_get_cstring(r, FFBP_EPB_MAX, &epb));
    FFBP_TRY(ffbp_get_i32(r, &ast));
    FFBP_TRY(ffbp_get_i32(r, &arg));
    FFBP_TRY(ffbp_get_i32(r, &rid));
    out->db = db;
    out->epb = epb;
    out->ast = ast;
    out->arg = arg;
    out->rid = rid;
    return FFBP_OK;
}

int ffbp_get_aux_packet(ffbp_reader *r, ffbp_event *out) {
    size_t save = r->pos;
    int32_t op;
    int rc = ffbp_get_i32(r, &op);
    if (rc != FFBP_OK)
        return rc;
    ffbp_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.op = op;
    switch (op) {
    case FFBP_OP_EVENT:
        rc = get_event(r, &ev);
        break;
    case FFBP_OP_DUMMY:
    case FFBP_OP_EXIT:
    case FFBP_OP_DISCONNECT:
        rc = FFBP_OK;
        break;
    default:
        rc = FFBP_EBAD;
        break;
    }
    if (rc != FFBP_OK) {
        r->pos = save;
        return rc;
    }
    *out = ev;
    return FFBP_OK;
}
