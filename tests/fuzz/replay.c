/*
 * The "fuzz replay" suite: runs every file of the given corpus directories
 * (or single files) through the LLVMFuzzerTestOneInput it is linked with,
 * in any build (gcc too), so a crash found once stays fixed. Each input is
 * copied in front of a guard page first, so an over-read faults even
 * without a sanitizer. Files are run in name order.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"
#include "tests/support/guard.h"

static int read_file(const char *path, uint8_t **out, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (!b) {
            fclose(f);
            return -1;
        }
        n += fread(b + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        uint8_t *nb = realloc(b, cap);
        if (!nb)
            free(b);
        b = nb;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(b);
        return -1;
    }
    *out = b;
    *len = n;
    return 0;
}

static int run_file(const char *path) {
    uint8_t *b;
    size_t len;
    if (read_file(path, &b, &len) < 0) {
        fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    guard_buf g;
    const uint8_t *p = guard_copy(&g, b, len);
    free(b);
    LLVMFuzzerTestOneInput(p, len);
    guard_release(&g);
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Returns the number of inputs run, or -1. */
static long run_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof(*names));
            if (!nn)
                abort();
            names = nn;
        }
        size_t l = strlen(dir) + 1 + strlen(e->d_name) + 1;
        names[n] = malloc(l);
        if (!names[n])
            abort();
        snprintf(names[n], l, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), by_name);
    long done = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(names[i]) < 0)
                done = -1;
            else if (done >= 0)
                done++;
        }
        free(names[i]);
    }
    free(names);
    return done;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        long n;
        if (S_ISDIR(st.st_mode)) {
            n = run_dir(argv[i]);
        } else {
            n = run_file(argv[i]) < 0 ? -1 : 1;
        }
        if (n < 0)
            return 1;
        printf("%s: %ld inputs\n", argv[i], n);
        total += n;
    }
    if (total == 0) {
        fprintf(stderr, "replay: no inputs (empty corpus?)\n");
        return 1;
    }
    return 0;
}
