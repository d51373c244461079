/* ffb-oltp internals shared with the unit tests (bench/oltp/oltp.c). */
#ifndef FFB_OLTP_H
#define FFB_OLTP_H
#include <stdint.h>
#include <stdio.h>

typedef struct oltp_opts {
    long long tables, table_size, threads, time, events, report_interval,
        rand_seed, range_size, point_selects, simple_ranges, sum_ranges,
        order_ranges, distinct_ranges, index_updates, non_index_updates,
        delete_inserts, random_points, number_of_ranges, delta, percentile;
    int range_selects, auto_inc, skip_trx, create_secondary;
    long long proxy_pid;
    const char *rand_type, *dsn, *user, *password, *driver, *mode, *out,
        *ps_mode, *fb_client, *proxy_stats;
} oltp_opts;

typedef struct oltp_rng {
    uint64_t s[2];

} oltp_rng;

/* A thread's stream as sysbench's sb_rand_thread_init() makes it:
   srandom(seed), then two 64-bit words from four random() calls. */
void oltp_rand_seed(oltp_rng *r, uint64_t seed);
/* sb_rand_uniform_double(): [0, 1) from the top 52 bits */
double oltp_rand_double(oltp_rng *r);
uint64_t oltp_rand_next(oltp_rng *r);
uint32_t oltp_rand_uniform(oltp_rng *r, uint32_t a, uint32_t b);
uint32_t oltp_rand_gaussian(oltp_rng *r, uint32_t a, uint32_t b);
uint32_t oltp_rand_special(oltp_rng *r, uint32_t a, uint32_t b);
uint32_t oltp_rand_pareto(oltp_rng *r, uint32_t a, uint32_t b);
uint32_t oltp_rand_zipfian(oltp_rng *r, uint32_t a, uint32_t b);
void oltp_rand_str(oltp_rng *r, const char *tmpl, char *out);

typedef struct oltp_report_in {
    uint64_t reads, writes, others, events, errors, reconnects;
    double elapsed, lat_min, lat_max, lat_sum, lat_pct;
    int percentile;
    double ev_avg, ev_sd, et_avg, et_sd;
    double rt_per_event, cpu_us_per_event; /* < 0: not printed */
} oltp_report_in;

void oltp_report(FILE *f, const oltp_report_in *r);
double oltp_percentile(const uint64_t *hist, double pct);
int oltp_main(int argc, char **argv);
#endif
