/* Unit tests of ffb-oltp: sysbench's random distributions (known answers
   taken from sysbench's own sb_rand.c, distribution properties) and the
   report layout (golden file). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oltp.h"

static int passed, failed;
#define T(cond, ...)                                                           \
    do {                                                                       \
        if (cond)                                                              \
            passed++;                                                          \
        else {                                                                 \
            failed++;                                                          \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                        \
            printf(__VA_ARGS__);                                               \
            printf("\n");                                                      \
        }                                                                      \
    } while (0)

#define N 400000

typedef uint32_t (*gen)(oltp_rng *, uint32_t, uint32_t);

/* Draw N values in [1, 1000]; counts per value in c[1..1000]. */
static void draw(gen g, uint64_t seed, unsigned *c, double *mean) {
    oltp_rng r = {0};
    oltp_rand_seed(&r, seed);
    memset(c, 0, 1001 * sizeof(*c));
    double s = 0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        uint32_t v = g(&r, 1, 1000);
        if (v < 1 || v > 1000)
            bad++;
        else
            c[v]++;
        s += v;
    }
    T(bad == 0, "%d values out of [1, 1000]", bad);
    *mean = s / N;
}

static double share(const unsigned *c, int lo, int hi) {
    unsigned long n = 0;
    for (int v = lo; v <= hi; v++)
        n += c[v];
    return (double)n / N;
}

int main(int argc, char **argv) {
    static unsigned c[1001];
    double mean;

    /* the same seed gives the same stream; another seed another one */
    oltp_rng a = {0}, b = {0};
    oltp_rand_seed(&a, 7);
    oltp_rand_seed(&b, 7);
    int same = 1;
    for (int i = 0; i < 100; i++)
        same &= oltp_rand_next(&a) == oltp_rand_next(&b);
    T(same, "seed 7 twice gives different streams");
    oltp_rand_seed(&b, 8);
    T(oltp_rand_next(&a) != oltp_rand_next(&b), "seeds 7 and 8 agree");

    /* Known answers: the first five values on [1, 10000] from the state
       {0x0123456789abcdef, 0xfedcba9876543210}, as sysbench's sb_rand.c
       (master for uniform, gaussian, pareto, zipfian; 1.0.20 for special)
       gives them - computed by its own functions (bench/oltp/README.md
       "Random numbers"). */
    static const uint32_t ka[5][5] = {
        {10000, 9669, 6359, 4861, 5738}, /* uniform */
        {5597, 6758, 5558, 5171, 2926},  /* gaussian */
        {5051, 5048, 5014, 4999, 5008},  /* special */
        {10000, 7839, 382, 55, 182},     /* pareto */
        {1, 1, 191, 668, 334}};          /* zipfian */
    gen gens[5] = {oltp_rand_uniform, oltp_rand_gaussian, oltp_rand_special,
                   oltp_rand_pareto, oltp_rand_zipfian};
    for (int k = 0; k < 5; k++) {
        oltp_rng r = {{0x0123456789abcdefULL, 0xfedcba9876543210ULL}};
        int okk = 1;
        for (int i = 0; i < 5; i++)
            okk &= gens[k](&r, 1, 10000) == ka[k][i];
        T(okk, "distribution %d differs from sysbench's known answers", k);
    }
    /* sysbench seeds a thread with srandom(seed) and four random() */
    srandom(42);
    uint64_t w0 = (uint64_t)random() << 32, w1 = (uint64_t)random();
    uint64_t w2 = (uint64_t)random() << 32, w3 = (uint64_t)random();
    oltp_rand_seed(&a, 42);
    T(a.s[0] == (w0 | w1) && a.s[1] == (w2 | w3), "seed differs from "
      "sb_rand_thread_init");

    /* uniform: flat; every value within 25 % (5 sd) of N/1000 */
    draw(oltp_rand_uniform, 1, c, &mean);
    int flat = 1;
    for (int v = 1; v <= 1000; v++)
        flat &= fabs(c[v] - N / 1000.0) < 0.25 * N / 1000.0;
    T(flat, "uniform is not flat");
    T(fabs(mean - 500.5) < 2, "uniform mean %.2f", mean);
    T(c[1] > 0 && c[1000] > 0, "uniform misses the ends");

    /* gaussian (mean of 12 uniforms): centred, narrow (sd = 288.7/sqrt 12
       = 83.3, so +-83 holds about 68 %) */
    draw(oltp_rand_gaussian, 2, c, &mean);
    T(fabs(mean - 500) < 2, "gaussian mean %.2f", mean);
    double g1 = share(c, 417, 583);
    T(g1 > 0.64 && g1 < 0.72, "gaussian +-1 sd holds %.3f", g1);

    /* special (1.0.20): 75 % in the central 1 % plus the gaussian's share
       of it; sysbench maps the same draw that chose the branch (in [0.25,
       1)) onto [t/2 - t/200, t/2 + t/200 + 1), t = 999: values 498..506 */
    draw(oltp_rand_special, 3, c, &mean);
    double sp = share(c, 498, 506);
    T(sp > 0.75 && sp < 0.79, "special's central 1 %% holds %.3f", sp);

    /* pareto h = 0.2: 80 % of the values in the first 20 % */
    draw(oltp_rand_pareto, 4, c, &mean);
    double pa = share(c, 1, 200);
    T(pa > 0.78 && pa < 0.82, "pareto's first 20 %% holds %.3f", pa);

    /* zipfian exp 0.8: the value 1 is the most frequent and the counts
       fall with the rank; P(1) = 1 / zeta(1000, 0.8) */
    draw(oltp_rand_zipfian, 5, c, &mean);
    double zeta = 0;
    for (int i = 1; i <= 1000; i++)
        zeta += 1.0 / pow(i, 0.8);
    T(fabs((double)c[1] / N - 1.0 / zeta) < 0.003, "zipfian P(1) %.4f",
      (double)c[1] / N);
    T(c[1] > c[2] && c[2] > c[5] && c[5] > c[50] && c[50] > c[900],
      "zipfian counts do not fall: %u %u %u %u %u", c[1], c[2], c[5], c[50],
      c[900]);

    /* sb_rand_str: '#' a digit, '@' a letter, the rest kept */
    char out[64];
    oltp_rng r = {0};
    oltp_rand_seed(&r, 9);
    oltp_rand_str(&r, "###-@@@-x", out);
    int shape = strlen(out) == 9 && out[3] == '-' && out[7] == '-' &&
                out[8] == 'x';
    for (int i = 0; i < 3; i++)
        shape &= out[i] >= '0' && out[i] <= '9' && out[4 + i] >= 'a' &&
                 out[4 + i] <= 'z';
    T(shape, "rand_str gave %s", out);

    /* percentile: sysbench's 1024 log buckets; 95 of 100 values at 1 ms,
       5 at 10 ms: the 95th is the bucket of 1 ms (within one bucket) */
    static uint64_t h[1024];
    double mult = 1023 / (log(100000.0) - log(0.001));
    h[(int)floor((log(1.0) - log(0.001)) * mult + 0.5)] = 95;
    h[(int)floor((log(10.0) - log(0.001)) * mult + 0.5)] = 5;
    double p95 = oltp_percentile(h, 95), p99 = oltp_percentile(h, 99);
    T(fabs(p95 - 1.0) < 0.01, "p95 %.4f", p95);
    T(fabs(p99 - 10.0) < 0.1, "p99 %.4f", p99);

    /* the report, byte for byte against the golden file */
    oltp_report_in in = {
        .reads = 202941, .writes = 210780, .others = 31242, .events = 15606,
        .errors = 76, .reconnects = 0, .elapsed = 600.4331, .lat_min = 1.22,
        .lat_max = 3154.81, .lat_sum = 6003750.30, .lat_pct = 1032.01,
        .percentile = 95, .ev_avg = 1612.4, .ev_sd = 33.4, .et_avg = 600.375,
        .et_sd = 0.04, .rt_per_event = 19, .cpu_us_per_event = 812.5};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    oltp_report(f, &in);
    fclose(f);
    const char *gp = argc > 1 ? argv[1] : "golden_report.txt";
    FILE *g = fopen(gp, "rb");
    static char want[8192];
    size_t wl = g ? fread(want, 1, sizeof(want) - 1, g) : 0;
    if (g)
        fclose(g);
    T(g && wl == len && !memcmp(want, buf, len),
      "report differs from %s:\n%s", gp, buf);
    free(buf);

    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
