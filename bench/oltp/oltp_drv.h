/* ffb-oltp's driver interface: the workloads (oltp.c) run every statement
   through one of these, so both drivers run the same statements under the
   same transaction rules with the same checks (bench/oltp/README.md). */
#ifndef FFB_OLTP_DRV_H
#define FFB_OLTP_DRV_H
#include <stdint.h>

#include "oltp.h"

#define OLTP_HB 1024 /* sysbench's latency histogram buckets */

typedef struct oltp_thr {
    int tid;
    void *d; /* the driver's connection state */
    oltp_rng rng;
    uint64_t reads, writes, others, events, errors, bulk_n;
    uint64_t hist[OLTP_HB];
    double lat_min, lat_max, lat_sum, busy;
    uint64_t rt0, rt1;
    int failed;
    char err[512];
} oltp_thr;

/* Calls return 0 (done), 1 (retry the event: SQLCODE -913 lock/update
   conflict or -803 unique violation, already rolled back by the caller)
   or -1 (fatal; t->err says why). `slot` names a statement prepared with
   prepare(); `tx` 1 = the explicit transaction of begin(), 0 = the
   implicit one SELECTs keep open (select) or auto-commit (dml). */
typedef struct oltp_drv {
    const char *name;
    int (*connect)(oltp_thr *t, int nslots);
    void (*disconnect)(oltp_thr *t);
    int (*prepare)(oltp_thr *t, int slot, const char *sql);
    void (*bind_int)(oltp_thr *t, int slot, unsigned idx, int64_t v);
    void (*bind_text)(oltp_thr *t, int slot, unsigned idx, const char *s);
    int (*begin)(oltp_thr *t);
    int (*commit)(oltp_thr *t);
    /* roll back the explicit transaction if one is open, and end the
       implicit one (after a retryable error) */
    void (*rollback)(oltp_thr *t);
    /* run a SELECT, read every row; *rows = rows read; `check` 1: column
       0 must pass oltp_check_c() (sysbench's c values) */
    int (*select)(oltp_thr *t, int slot, int tx, int check, long long *rows);
    int (*dml)(oltp_thr *t, int slot, int tx, int64_t *affected);
    /* sysbench's unprepared con:query() INSERT, auto-committed */
    int (*insert_sql)(oltp_thr *t, const char *sql, int64_t *affected);
    /* bulk_insert: add the bound row of `slot`; flush = send and commit */
    int (*bulk_add)(oltp_thr *t, int slot);
    int (*bulk_flush)(oltp_thr *t);
    void (*end_implicit)(oltp_thr *t); /* commit the implicit transaction */
    /* the driver's own round-trip counter, or UINT64_MAX: none */
    uint64_t (*round_trips)(oltp_thr *t);
    /* pipelined mode (NULL: not offered): queue, then run all queued in
       one write and check the answers as select()/dml() do */
    int (*q_select)(oltp_thr *t, int slot, int check, long long want_max,
                    int want_exact);
    int (*q_dml)(oltp_thr *t, int slot);
    int (*q_run)(oltp_thr *t);
    /* one line: client library, version, server, protocol, wire crypt */
    void (*describe)(oltp_thr *t, char *buf, size_t size);
} oltp_drv;

extern const oltp_drv oltp_drv_ffb, oltp_drv_fbclient;
extern const oltp_opts *oltp_o; /* the parsed options */

/* sysbench's c value: 10 groups of 11 digits joined by '-' (119
   characters), blank-padded to any length. 1 = that shape. */
int oltp_check_c(const char *s, size_t len);
/* Fatal error text (keeps the first); returns -1. */
int oltp_fatal(oltp_thr *t, const char *what, const char *msg);
/* 1 for the SQLCODEs the Edition retries (-913, -803). */
int oltp_retryable(int sqlcode);
#endif
