/*
 * ffbp_get_svc_answer (an op_service_info answer, reference 03, C.6.4) on
 * arbitrary bytes.
 *
 * Properties: 0 or FFBP_EBAD, nothing else; on success every view lies
 * inside the input, numbers are -1 (absent) or 32-bit unsigned values, at
 * most FFBP_SVC_MAX_DBNAMES names are kept, and decoding is deterministic;
 * a success is also one for the prefix that ends at its isc_info_end (the
 * bytes after it are never read).
 */
#include <string.h>

#include "proto/service.h"
#include "tests/fuzz/fuzz.h"

static void check_view(const uint8_t *p, size_t len, ffbp_bytes v) {
    FUZZ_CHECK(fuzz_inside(p, len, v.p, v.len));
}

static void check_num(int64_t v) {
    FUZZ_CHECK(v == -1 || (v >= 0 && v <= 0xFFFFFFFFll));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ffbp_svc_answer a, b;
    int rc = ffbp_get_svc_answer(data, size, &a);
    FUZZ_CHECK(rc == 0 || rc == FFBP_EBAD);
    FUZZ_CHECK(ffbp_get_svc_answer(data, size, &b) == rc);
    if (rc != 0)
        return 0;
    FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
    check_num(a.version);
    check_num(a.capabilities);
    check_num(a.running);
    check_num(a.stdin_wanted);
    check_num(a.num_att);
    check_num(a.num_db);
    check_view(data, size, a.server_version);
    check_view(data, size, a.implementation);
    check_view(data, size, a.user_dbpath);
    check_view(data, size, a.env);
    check_view(data, size, a.env_lock);
    check_view(data, size, a.env_msg);
    FUZZ_CHECK(a.ndbnames <= FFBP_SVC_MAX_DBNAMES);
    for (size_t i = 0; i < a.ndbnames; i++)
        check_view(data, size, a.dbnames[i]);
    if (a.has_output) {
        FUZZ_CHECK(a.output_item == FFBP_SVC_INFO_LINE ||
                   a.output_item == FFBP_SVC_INFO_TO_EOF);
        check_view(data, size, a.output);
        FUZZ_CHECK(a.output.p != NULL);
    } else {
        FUZZ_CHECK(a.output.p == NULL && a.output.len == 0);
    }
    if (a.ended) {
        /* The end marker is the last byte read: find the shortest prefix
           that still decodes to the same answer. */
        for (size_t n = 1; n <= size; n++) {
            ffbp_svc_answer c;
            if (ffbp_get_svc_answer(data, n, &c) == 0 && c.ended) {
                FUZZ_CHECK(memcmp(&a, &c, sizeof(a)) == 0);
                break;
            }
        }
    }
    return 0;
}
