/*
 * A schema cache as schema_load.c would build it for the tables of the
 * golden files and the fuzz target (RDB$FIELD_TYPE numbers as Firebird
 * stores them: 7 SMALLINT, 8 INTEGER, 16 BIGINT, 37 VARCHAR, 23 BOOLEAN).
 */
#ifndef FFB_REST_FIXTURE_H
#define FFB_REST_FIXTURE_H

#include "schema.h"

static rest_column *fixture_col(rest_table *t, const char *name, int type,
                                int notnull) {
    rest_column *c = rest_table_add_column(t, name);
    c->type = type;
    c->notnull = notnull;
    return c;
}

static void fixture_schema(rest_schema *s) {
    rest_schema_init(s);
    rest_table *b = rest_schema_table(s, "BOOKS", 0, 0);
    fixture_col(b, "ID", 8, 1);
    fixture_col(b, "TITLE", 37, 1);
    fixture_col(b, "PRICE", 8, 0)->scale = -2;
    fixture_col(b, "AUTHOR_ID", 8, 0);
    fixture_col(b, "MixedCase", 37, 0);
    fixture_col(b, "PRICE_WITH_TAX", 8, 0)->computed = 1;
    fixture_col(b, "IN_STOCK", 23, 0);
    rest_table_add_pk(b, "ID");
    rest_table_add_fk(b, "FK_BOOKS_AUTHOR", "AUTHORS", "AUTHOR_ID", "ID");
    rest_table *a = rest_schema_table(s, "AUTHORS", 0, 0);
    fixture_col(a, "ID", 8, 1);
    fixture_col(a, "NAME", 37, 1);
    rest_table_add_pk(a, "ID");
    rest_table *p = rest_schema_table(s, "people", 0, 0);
    fixture_col(p, "id", 8, 1);
    fixture_col(p, "Full Name", 37, 0);
    rest_table *e = rest_schema_table(s, "EVENTS", 0, 0);
    fixture_col(e, "ID", 8, 1);
    fixture_col(e, "AT", 29, 0);    /* TIMESTAMP WITH TIME ZONE */
    fixture_col(e, "DAILY", 28, 0); /* TIME WITH TIME ZONE */
    /* embeds: a one-to-many (REVIEWS), a junction (BOOK_TAGS: both FKs in
       its PK), and two FKs from ARTICLES to AUTHORS (ambiguous) */
    rest_table *r = rest_schema_table(s, "REVIEWS", 0, 0);
    fixture_col(r, "ID", 8, 1);
    fixture_col(r, "BOOK_ID", 8, 1);
    fixture_col(r, "STARS", 8, 0);
    rest_table_add_pk(r, "ID");
    rest_table_add_fk(r, "FK_REVIEWS_BOOK", "BOOKS", "BOOK_ID", "ID");
    rest_table *tg = rest_schema_table(s, "TAGS", 0, 0);
    fixture_col(tg, "ID", 8, 1);
    fixture_col(tg, "NAME", 37, 1);
    rest_table_add_pk(tg, "ID");
    rest_table *bt = rest_schema_table(s, "BOOK_TAGS", 0, 0);
    fixture_col(bt, "BOOK_ID", 8, 1);
    fixture_col(bt, "TAG_ID", 8, 1);
    rest_table_add_pk(bt, "BOOK_ID");
    rest_table_add_pk(bt, "TAG_ID");
    rest_table_add_fk(bt, "FK_BT_BOOK", "BOOKS", "BOOK_ID", "ID");
    rest_table_add_fk(bt, "FK_BT_TAG", "TAGS", "TAG_ID", "ID");
    /* a foreign key of two columns, to the junction */
    rest_table *tn = rest_schema_table(s, "TAG_NOTES", 0, 0);
    fixture_col(tn, "ID", 8, 1);
    fixture_col(tn, "B", 8, 1);
    fixture_col(tn, "T", 8, 1);
    fixture_col(tn, "NOTE", 37, 0);
    rest_table_add_pk(tn, "ID");
    rest_table_add_fk(tn, "FK_TN_BT", "BOOK_TAGS", "B", "BOOK_ID");
    rest_table_add_fk(tn, "FK_TN_BT", "BOOK_TAGS", "T", "TAG_ID");
    rest_table *ar = rest_schema_table(s, "ARTICLES", 0, 0);
    fixture_col(ar, "ID", 8, 1);
    fixture_col(ar, "WRITER_ID", 8, 0);
    fixture_col(ar, "EDITOR_ID", 8, 0);
    rest_table_add_pk(ar, "ID");
    rest_table_add_fk(ar, "FK_ART_WRITER", "AUTHORS", "WRITER_ID", "ID");
    rest_table_add_fk(ar, "FK_ART_EDITOR", "AUTHORS", "EDITOR_ID", "ID");
    rest_table *v = rest_schema_table(s, "CHEAP_BOOKS", 1, 1);
    fixture_col(v, "ID", 8, 0);
    fixture_col(v, "TITLE", 37, 0);
    /* selectable procedures (RPC reads): one annotated `@returns books`
       (its outputs have BOOKS's key and FK columns), one plain */
    rest_routine *rb = rest_schema_routine(s, "RET_BOOKS", REST_RT_SELECTABLE);
    rest_routine_add_arg(rb, "AUTHOR", 0);
    fixture_col(&rb->out, "ID", 8, 0);
    fixture_col(&rb->out, "TITLE", 37, 0);
    fixture_col(&rb->out, "AUTHOR_ID", 8, 0);
    rb->nout = 3;
    static const char d[] = "Books of an author.\n@returns books";
    rest_routine_set_returns(rb, d, sizeof d - 1);
    rest_routine *ti = rest_schema_routine(s, "TOP_IDS", REST_RT_SELECTABLE);
    rest_routine_add_arg(ti, "N", 1);
    fixture_col(&ti->out, "ID", 8, 0);
    ti->nout = 1;
    /* one linked by db-procedure-returns (no description) */
    rest_routine *cb = rest_schema_routine(s, "CFG_BOOKS", REST_RT_SELECTABLE);
    fixture_col(&cb->out, "ID", 8, 0);
    fixture_col(&cb->out, "TITLE", 37, 0);
    cb->nout = 2;
    s->returns_map = " cfg_books : books ";
    rest_schema_link_routines(s);
}

#endif
