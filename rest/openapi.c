/* ffb-rest: the OpenAPI document (openapi.h). */
#include "openapi.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

void rest_openapi_type(const rest_column *c, const char **type,
                       const char **format) {
    int scaled = c->scale < 0;
    switch (c->type) {
    case 7:
        *type = scaled ? "number" : "integer";
        *format = scaled ? "numeric" : "smallint";
        return;
    case 8:
        *type = scaled ? "number" : "integer";
        *format = scaled ? "numeric" : "integer";
        return;
    case 16:
        *type = scaled ? "number" : "integer";
        *format = scaled ? "numeric" : "bigint";
        return;
    case 26:
        *type = scaled ? "number" : "integer";
        *format = scaled ? "numeric" : "int128";
        return;
    case 10:
        *type = "number";
        *format = "real";
        return;
    case 27:
        *type = "number";
        *format = "double precision";
        return;
    case 24:
    case 25:
        *type = "number";
        *format = "decfloat";
        return;
    case 23:
        *type = "boolean";
        *format = "boolean";
        return;
    case 12:
        *type = "string";
        *format = "date";
        return;
    case 13:
        *type = "string";
        *format = "time without time zone";
        return;
    case 28:
        *type = "string";
        *format = "time with time zone";
        return;
    case 35:
        *type = "string";
        *format = "timestamp without time zone";
        return;
    case 29:
        *type = "string";
        *format = "timestamp with time zone";
        return;
    case 14:
        *type = "string";
        *format = c->charset == 1 ? "bytea" : "character";
        return;
    case 37:
        *type = "string";
        *format = c->charset == 1 ? "bytea" : "character varying";
        return;
    case 261:
        *type = "string";
        *format = c->subtype == 1 ? "text" : "bytea";
        return;
    default:
        *type = "string";
        *format = "unknown";
        return;
    }
}

static void str(rbuf *b, const char *s) { json_string(b, s, strlen(s)); }

/* A JSON string of printf text (names are at most 252 bytes each). */
static void strf(rbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void strf(rbuf *b, const char *fmt, ...) {
    char tmp[1200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    json_string(b, tmp,
                n < 0                    ? 0
                : (size_t)n < sizeof tmp ? (size_t)n
                                         : sizeof tmp - 1);
}

static void key(rbuf *b, const char *k) {
    str(b, k);
    rbuf_addc(b, ':');
}

static void param(rbuf *b, const char *id, const char *name, const char *desc,
                  const char *in, const char *extra) {
    key(b, id);
    rbuf_adds(b, "{\"name\":");
    str(b, name);
    rbuf_adds(b, ",\"description\":");
    str(b, desc);
    rbuf_adds(b, ",\"required\":false,\"in\":");
    str(b, in);
    rbuf_adds(b, ",\"type\":\"string\"");
    if (extra)
        rbuf_adds(b, extra);
    rbuf_addc(b, '}');
}

static void ref(rbuf *b, const char *what, int *first) {
    rbuf_printf(b, "%s{\"$ref\":\"#/parameters/%s\"}", *first ? "" : ",", what);
    *first = 0;
}

static void row_filters(rbuf *b, const rest_table *t, int *first) {
    for (size_t c = 0; c < t->ncols; c++) {
        rbuf_printf(b, "%s{\"$ref\":", *first ? "" : ",");
        *first = 0;
        strf(b, "#/parameters/rowFilter.%s.%s", t->exposed, t->cols[c].exposed);
        rbuf_addc(b, '}');
    }
}

static void body_ref(rbuf *b, const rest_table *t, int *first) {
    rbuf_printf(b, "%s{\"$ref\":", *first ? "" : ",");
    *first = 0;
    strf(b, "#/parameters/body.%s", t->exposed);
    rbuf_addc(b, '}');
}

static void table_path(rbuf *b, const rest_table *t) {
    int f = 1;
    strf(b, "/%s", t->exposed);
    rbuf_adds(b, ":{\"get\":{\"tags\":[");
    str(b, t->exposed);
    rbuf_adds(b, "],\"parameters\":[");
    row_filters(b, t, &f);
    ref(b, "select", &f);
    ref(b, "order", &f);
    ref(b, "range", &f);
    ref(b, "rangeUnit", &f);
    ref(b, "offset", &f);
    ref(b, "limit", &f);
    ref(b, "preferCount", &f);
    rbuf_adds(b, "],\"responses\":{\"200\":{\"description\":\"OK\",\"schema\":"
                 "{\"type\":\"array\",\"items\":{\"$ref\":");
    strf(b, "#/definitions/%s", t->exposed);
    rbuf_adds(b, "}}},\"206\":{\"description\":\"Partial Content\"}}}");
    if (!t->is_view) {
        rbuf_adds(b, ",\"post\":{\"tags\":[");
        str(b, t->exposed);
        rbuf_adds(b, "],\"parameters\":[");
        f = 1;
        body_ref(b, t, &f);
        ref(b, "select", &f);
        ref(b, "preferPost", &f);
        rbuf_adds(b,
                  "],\"responses\":{\"201\":{\"description\":\"Created\"}}}");
        static const char *const verbs[] = {"patch", "delete"};
        for (int v = 0; v < 2; v++) {
            rbuf_printf(b, ",\"%s\":{\"tags\":[", verbs[v]);
            str(b, t->exposed);
            rbuf_adds(b, "],\"parameters\":[");
            f = 1;
            row_filters(b, t, &f);
            if (v == 0)
                body_ref(b, t, &f);
            ref(b, "preferReturn", &f);
            rbuf_adds(b, "],\"responses\":{\"204\":{\"description\":\"No "
                         "Content\"}}}");
        }
    }
    rbuf_addc(b, '}');
}

static int is_pk(const rest_table *t, size_t c) {
    for (size_t k = 0; k < t->npk; k++)
        if (t->pk[k] == c)
            return 1;
    return 0;
}

static void definition(rbuf *b, const rest_schema *s, const rest_table *t) {
    key(b, t->exposed);
    rbuf_adds(b, "{\"type\":\"object\",\"properties\":{");
    for (size_t c = 0; c < t->ncols; c++) {
        const rest_column *col = &t->cols[c];
        const char *ty, *fmt;
        rest_openapi_type(col, &ty, &fmt);
        if (c)
            rbuf_addc(b, ',');
        key(b, col->exposed);
        rbuf_adds(b, "{\"type\":");
        str(b, ty);
        rbuf_adds(b, ",\"format\":");
        str(b, fmt);
        if ((col->type == 14 || col->type == 37) && col->charset != 1 &&
            col->charlen > 0)
            rbuf_printf(b, ",\"maxLength\":%d", col->charlen);
        /* PostgREST's notes on keys */
        rbuf note;
        rbuf_init(&note, 0);
        if (is_pk(t, c))
            rbuf_adds(&note, "Note:\nThis is a Primary Key.<pk/>");
        for (size_t f = 0; f < t->nfks; f++)
            for (size_t k = 0; k < t->fks[f].ncols; k++)
                if (strcmp(t->fks[f].cols[k], col->name) == 0) {
                    const rest_table *rt =
                        rest_schema_find(s, t->fks[f].ref_table);
                    const rest_column *rc =
                        rt ? rest_table_find(rt, t->fks[f].ref_cols[k]) : NULL;
                    const char *rtn = rt ? rt->exposed : t->fks[f].ref_table;
                    const char *rcn = rc ? rc->exposed : t->fks[f].ref_cols[k];
                    if (note.len == 0)
                        rbuf_adds(&note, "Note:");
                    rbuf_printf(&note,
                                "\nThis is a Foreign Key to `%s.%s`.<fk "
                                "table='%s' column='%s'/>",
                                rtn, rcn, rtn, rcn);
                }
        if (note.len) {
            rbuf_adds(b, ",\"description\":");
            const char *ns = rbuf_cstr(&note);
            json_string(b, ns ? ns : "", note.len);
        }
        rbuf_free(&note);
        rbuf_addc(b, '}');
    }
    rbuf_adds(b, "}");
    int first = 1;
    for (size_t c = 0; c < t->ncols; c++) {
        const rest_column *col = &t->cols[c];
        if (!col->notnull || col->has_default || col->computed ||
            col->identity >= 0)
            continue;
        rbuf_adds(b, first ? ",\"required\":[" : ",");
        first = 0;
        str(b, col->exposed);
    }
    if (!first)
        rbuf_addc(b, ']');
    rbuf_addc(b, '}');
}

void rest_openapi(const rest_schema *s, const rest_config *cfg, rbuf *b) {
    const char *host = cfg->server_host;
    if (host[0] == '!' || host[0] == '*')
        host = strchr(host, '6') ? "::" : "0.0.0.0";
    rbuf_adds(b, "{\"swagger\":\"2.0\",\"info\":{\"title\":\"ffb-rest API\","
                 "\"description\":\"This is a dynamic API generated by "
                 "ffb-rest\",\"version\":\"0.2\"},\"host\":");
    strf(b, "%s:%d", host, cfg->server_port);
    rbuf_adds(b, ",\"basePath\":\"/\",\"schemes\":[\"http\"],\"consumes\":["
                 "\"application/json\",\"application/vnd.pgrst.object+json\"],"
                 "\"produces\":[\"application/json\",\"application/"
                 "vnd.pgrst.object+json\"],\"paths\":{\"/\":{\"get\":{"
                 "\"tags\":[\"Introspection\"],\"summary\":\"OpenAPI "
                 "description (this document)\",\"produces\":[\"application/"
                 "openapi+json\",\"application/json\"],\"responses\":{\"200\":"
                 "{\"description\":\"OK\"}}}}");
    for (size_t i = 0; i < s->ntables; i++) {
        rbuf_addc(b, ',');
        table_path(b, &s->tables[i]);
    }
    rbuf_adds(b, "},\"definitions\":{");
    for (size_t i = 0; i < s->ntables; i++) {
        if (i)
            rbuf_addc(b, ',');
        definition(b, s, &s->tables[i]);
    }
    rbuf_adds(b, "},\"parameters\":{");
    static const char pref[] = "Preference";
    param(b, "preferParams", "Prefer", pref, "header",
          ",\"enum\":[\"params=single-object\"]");
    rbuf_addc(b, ',');
    param(b, "preferReturn", "Prefer", pref, "header",
          ",\"enum\":[\"return=representation\",\"return=minimal\","
          "\"return=none\"]");
    rbuf_addc(b, ',');
    param(b, "preferCount", "Prefer", pref, "header",
          ",\"enum\":[\"count=none\"]");
    rbuf_addc(b, ',');
    param(b, "preferPost", "Prefer", pref, "header",
          ",\"enum\":[\"return=representation\",\"return=minimal\","
          "\"return=none\",\"resolution=ignore-duplicates\","
          "\"resolution=merge-duplicates\"]");
    rbuf_addc(b, ',');
    param(b, "select", "select", "Filtering Columns", "query", NULL);
    rbuf_addc(b, ',');
    param(b, "on_conflict", "on_conflict", "On Conflict", "query", NULL);
    rbuf_addc(b, ',');
    param(b, "order", "order", "Ordering", "query", NULL);
    rbuf_addc(b, ',');
    param(b, "range", "Range", "Limiting and Pagination", "header", NULL);
    rbuf_addc(b, ',');
    param(b, "rangeUnit", "Range-Unit", "Limiting and Pagination", "header",
          ",\"default\":\"items\"");
    rbuf_addc(b, ',');
    param(b, "offset", "offset", "Limiting and Pagination", "query", NULL);
    rbuf_addc(b, ',');
    param(b, "limit", "limit", "Limiting and Pagination", "query", NULL);
    for (size_t i = 0; i < s->ntables; i++) {
        const rest_table *t = &s->tables[i];
        rbuf_addc(b, ',');
        strf(b, "body.%s", t->exposed);
        rbuf_adds(b, ":{\"name\":");
        str(b, t->exposed);
        rbuf_adds(b, ",\"description\":");
        str(b, t->exposed);
        rbuf_adds(b,
                  ",\"required\":false,\"in\":\"body\",\"schema\":{\"$ref\":");
        strf(b, "#/definitions/%s", t->exposed);
        rbuf_adds(b, "}}");
        for (size_t c = 0; c < t->ncols; c++) {
            const char *ty, *fmt;
            rest_openapi_type(&t->cols[c], &ty, &fmt);
            rbuf_addc(b, ',');
            strf(b, "rowFilter.%s.%s", t->exposed, t->cols[c].exposed);
            rbuf_adds(b, ":{\"name\":");
            str(b, t->cols[c].exposed);
            rbuf_adds(b, ",\"required\":false,\"in\":\"query\",\"type\":"
                         "\"string\",\"format\":");
            str(b, fmt);
            rbuf_addc(b, '}');
        }
    }
    rbuf_adds(b, "},\"externalDocs\":{\"description\":\"PostgREST "
                 "Documentation\",\"url\":\"https://postgrest.org/en/v12/"
                 "references/api.html\"}}");
}
