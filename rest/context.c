/* ffb-rest: the request context (context.h). */
#include "context.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

void rest_ctx_add(rest_ctx *c, rarena *a, const char *prefix, const char *name,
                  size_t nlen, int lower, const char *value, size_t vlen) {
    size_t pl = strlen(prefix);
    if (c->n == REST_CTX_MAX || vlen > REST_CTX_VALUE_MAX ||
        pl + nlen > REST_CTX_NAME_MAX) {
        c->dropped++;
        return;
    }
    char *nm = rarena_alloc(a, pl + nlen + 1);
    char *v = rarena_strndup(a, value, vlen);
    if (!nm || !v) {
        c->dropped++;
        return;
    }
    memcpy(nm, prefix, pl);
    for (size_t i = 0; i < nlen; i++)
        nm[pl + i] = lower ? (char)tolower((unsigned char)name[i]) : name[i];
    c->name[c->n] = nm;
    c->name_len[c->n] = pl + nlen;
    c->value[c->n] = v;
    c->value_len[c->n] = vlen;
    c->n++;
}

void rest_ctx_add_claims(rest_ctx *c, rarena *a, const char *json, size_t len) {
    rest_ctx_add(c, a, "request.jwt.claims", "", 0, 0, json, len);
    char eb[64];
    yajl_val v = yajl_tree_parse(json, eb, sizeof eb);
    if (!YAJL_IS_OBJECT(v)) {
        yajl_tree_free(v);
        return;
    }
    for (size_t i = 0; i < v->u.object.len; i++) {
        const char *k = v->u.object.keys[i];
        yajl_val x = v->u.object.values[i];
        const char *t = NULL;
        if (YAJL_IS_STRING(x))
            t = x->u.string;
        else if (YAJL_IS_NUMBER(x))
            t = YAJL_GET_NUMBER(x);
        else if (YAJL_IS_TRUE(x))
            t = "true";
        else if (YAJL_IS_FALSE(x))
            t = "false";
        if (t)
            rest_ctx_add(c, a, "request.jwt.claim.", k, strlen(k), 0, t,
                         strlen(t));
    }
    yajl_tree_free(v);
}

void rest_ctx_add_cookies(rest_ctx *c, rarena *a, const char *v, size_t n) {
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == ';'))
            i++;
        size_t ks = i;
        while (i < n && v[i] != '=' && v[i] != ';')
            i++;
        size_t ke = i;
        if (i < n && v[i] == '=') {
            size_t vs = ++i;
            while (i < n && v[i] != ';')
                i++;
            if (ke > ks)
                rest_ctx_add(c, a, "request.cookie.", v + ks, ke - ks, 0,
                             v + vs, i - vs);
        }
    }
}

size_t rest_ctx_slots(size_t n) {
    return (n + REST_CTX_SLOTS - 1) / REST_CTX_SLOTS * REST_CTX_SLOTS;
}

void rest_ctx_sql(rbuf *out, size_t n, const char *pre) {
    rbuf_adds(out, "EXECUTE BLOCK");
    for (size_t i = 0; i < n; i++)
        rbuf_printf(out,
                    "%sN%zu VARCHAR(%d) CHARACTER SET UTF8 = ?, V%zu "
                    "VARCHAR(%d) CHARACTER SET UTF8 = ?",
                    i ? ", " : " (", i, REST_CTX_NAME_MAX, i,
                    REST_CTX_VALUE_MAX);
    rbuf_adds(out, n ? ") AS DECLARE R INTEGER; BEGIN" : " AS BEGIN");
    for (size_t i = 0; i < n; i++)
        rbuf_printf(out,
                    " IF (:N%zu IS NOT NULL) THEN R = "
                    "RDB$SET_CONTEXT('USER_TRANSACTION', :N%zu, :V%zu);",
                    i, i, i);
    if (pre && *pre) {
        /* an unquoted name is upper case in Firebird; a name that is not
           a plain identifier is used verbatim */
        int plain = isalpha((unsigned char)pre[0]);
        for (const char *p = pre; plain && *p; p++)
            plain = isalnum((unsigned char)*p) || *p == '_' || *p == '$';
        rbuf_adds(out, " EXECUTE PROCEDURE \"");
        for (const char *p = pre; *p; p++) {
            if (*p == '"')
                rbuf_addc(out, '"');
            rbuf_addc(out, plain ? (char)toupper((unsigned char)*p) : *p);
        }
        rbuf_adds(out, "\";");
    }
    rbuf_adds(out, " END");
}

int rest_ctx_texts_init(rest_ctx_texts *t, const char *pre) {
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < REST_CTX_BUCKETS; i++) {
        rbuf b;
        rbuf_init(&b, 0);
        rest_ctx_sql(&b, i * REST_CTX_SLOTS, pre);
        const char *s = rbuf_cstr(&b);
        t->sql[i] = s ? strdup(s) : NULL;
        t->len[i] = b.len;
        rbuf_free(&b);
        if (!t->sql[i]) {
            rest_ctx_texts_free(t);
            return -1;
        }
    }
    return 0;
}

void rest_ctx_texts_free(rest_ctx_texts *t) {
    for (size_t i = 0; i < REST_CTX_BUCKETS; i++) {
        free(t->sql[i]);
        t->sql[i] = NULL;
    }
}
