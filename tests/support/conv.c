#include "tests/support/conv.h"
#include "tests/support/hex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


size_t conv_unhex(const char *hex, uint8_t *out, size_t size) {
    size_t n = 0;
    while (hex[0] && hex[1] && n < size) {
        int hi = test_hexval((unsigned char)hex[0]);
        int lo = test_hexval((unsigned char)hex[1]);
        if (hi < 0 || lo < 0)
            break;
        out[n++] = (uint8_t)(hi << 4 | lo);
        hex += 2;
    }
    return n;
}

const char *conv_data_path(const char *name, char *buf, size_t size) {
    const char *dir = getenv("FFB_TEST_DATA");
    snprintf(buf, size, "%s/%s", dir ? dir : FFB_TEST_DATA_DIR, name);
    return buf;
}

void conv_load(conv *cv, const char *path) {
    memset(cv, 0, sizeof(*cv));
    cv->name = path;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        abort();
    }
    size_t cap = 0, lineno = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    while ((got = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = '\0';
        if (got == 0 || line[0] == '#')
            continue;
        conv_line l = {0, NULL, 0, (int)lineno};
        if (strcmp(line, "@ connect") == 0)
            l.kind = CONV_CONNECT;
        else if (strcmp(line, "@ eof") == 0)
            l.kind = CONV_EOF;
        else if (strcmp(line, "@ close") == 0)
            l.kind = CONV_CLOSE;
        else if (got > 2 && line[1] == ' ' &&
                 strchr("CScs", line[0]) != NULL) {
            l.kind = line[0] == 'C'   ? CONV_C
                     : line[0] == 'S' ? CONV_S
                     : line[0] == 'c' ? CONV_C_PLAIN
                                      : CONV_S_PLAIN;
            size_t hexlen = (size_t)got - 2;
            l.bytes = malloc(hexlen / 2 + 1);
            l.len = conv_unhex(line + 2, l.bytes, hexlen / 2);
            if (l.len * 2 != hexlen) {
                fprintf(stderr, "%s:%zu: bad hex\n", path, lineno);
                abort();
            }
        } else {
            fprintf(stderr, "%s:%zu: unknown line\n", path, lineno);
            abort();
        }
        if (cv->n == cap) {
            cap = cap ? cap * 2 : 64;
            cv->lines = realloc(cv->lines, cap * sizeof(*cv->lines));
        }
        cv->lines[cv->n++] = l;
    }
    free(line);
    fclose(f);
}

void conv_free(conv *cv) {
    for (size_t i = 0; i < cv->n; i++)
        free(cv->lines[i].bytes);
    free(cv->lines);
    free(cv->written);
    memset(cv, 0, sizeof(*cv));
}

void conv_seek_connection(conv *cv, int k) {
    int seen = -1;
    while (cv->pos < cv->n) {
        if (cv->lines[cv->pos++].kind == CONV_CONNECT && ++seen == k)
            return;
    }
    fprintf(stderr, "%s: no connection %d\n", cv->name, k);
    abort();
}

/* Skip the optional c/s check lines. */
static const conv_line *next_line(conv *cv) {
    while (cv->pos < cv->n && (cv->lines[cv->pos].kind == CONV_C_PLAIN ||
                               cv->lines[cv->pos].kind == CONV_S_PLAIN))
        cv->pos++;
    return cv->pos < cv->n ? &cv->lines[cv->pos] : NULL;
}

static void mismatch(conv *cv, const conv_line *l, const char *what) {
    if (cv->failure[0])
        return;
    size_t i = 0;
    if (l && l->kind == CONV_C)
        while (i < l->len && i < cv->written_len &&
               l->bytes[i] == cv->written[i])
            i++;
    snprintf(cv->failure, sizeof(cv->failure),
             "%s line %d: %s (client wrote %zu bytes, recorded %zu, first "
             "difference at byte %zu)",
             cv->name, l ? l->lineno : -1, what, cv->written_len,
             l ? l->len : 0, i);
}

/* Compare what the client wrote with the next C line. */
static int check_written(conv *cv) {
    const conv_line *l = next_line(cv);
    if (!l || l->kind != CONV_C) {
        mismatch(cv, l, "client wrote, recording expects no write here");
        return -1;
    }
    if (l->len != cv->written_len ||
        memcmp(l->bytes, cv->written, l->len) != 0) {
        mismatch(cv, l, "client bytes differ from the recording");
        return -1;
    }
    cv->pos++;
    cv->written_len = 0;
    return 0;
}

static int t_connect(ffb_conn *conn, void *data, int timeout_ms) {
    (void)conn;
    (void)data;
    (void)timeout_ms;
    return 0;
}

static int t_flush(ffb_conn *conn, void *data, int timeout_ms) {
    (void)timeout_ms;
    conv *cv = data;
    const uint8_t *out;
    size_t n = ffb_conn_output(conn, &out);
    if (cv->written_len + n > cv->written_cap) {
        cv->written_cap = (cv->written_len + n) * 2;
        cv->written = realloc(cv->written, cv->written_cap);
    }
    memcpy(cv->written + cv->written_len, out, n);
    cv->written_len += n;
    ffb_conn_output_done(conn, n);
    return 0;
}

static int t_read(ffb_conn *conn, void *data, int timeout_ms) {
    (void)timeout_ms;
    conv *cv = data;
    if (cv->written_len && check_written(cv) < 0)
        return ffb__error_set(&conn->err, FFB_E_IO, "replay: %s",
                              cv->failure);
    const conv_line *l = next_line(cv);
    if (l && l->kind == CONV_EOF) {
        cv->pos++;
        return ffb_conn_feed_eof(conn) < 0 ? conn->err.code : FFB_E_CLOSED;
    }
    if (!l || l->kind != CONV_S) {
        mismatch(cv, l, "client waits for data, recording has none");
        return ffb__error_set(&conn->err, FFB_E_IO, "replay: %s",
                              cv->failure);
    }
    cv->pos++;
    size_t step = cv->chunk ? cv->chunk : l->len;
    for (size_t off = 0; off < l->len; off += step) {
        size_t n = l->len - off < step ? l->len - off : step;
        int rc = ffb_conn_feed(conn, l->bytes + off, n);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void t_close(ffb_conn *conn, void *data) {
    conv *cv = data;
    (void)conn;
    if (cv->written_len)
        check_written(cv);
    const conv_line *l = next_line(cv);
    if (!l || (l->kind != CONV_EOF && l->kind != CONV_CLOSE))
        mismatch(cv, l, "client closed, recording goes on");
    else
        cv->pos++;
}

const ffb__transport conv_transport = {t_connect, t_flush, t_read, t_close,
                                      NULL, NULL};

void conv_options(ffb_conn_options *o) {
    static uint8_t a[32];
    conv_unhex(CONV_FIXED_A, a, sizeof(a));
    *o = (ffb_conn_options)FFB_CONN_OPTIONS_INIT;
    o->database = "fixtures";
    o->host = "recorded";
    o->user = "SYSDBA";
    o->password = "masterkey";
    o->charset = "UTF8";
    o->auth_plugins = "Srp256,Srp";
    o->os_user = "alice";
    o->client_host = "client1";
    o->process_id = 4242;
    o->process_name = "fixture-client";
}

void conv_use(ffb_conn *conn, conv *cv) {
    static uint8_t a[32];
    conv_unhex(CONV_FIXED_A, a, sizeof(a));
    ffb__conn_set_transport(conn, &conv_transport, cv);
    if (ffb__conn_set_test_srp_key(conn, a, sizeof(a)) != 0) {
        fprintf(stderr, "conv: the fixed SRP key was refused\n");
        abort();
    }
}
