/*
 * The limbo list (ffbp_limbo_decode, ffb_limbo_parse): an op_info_database
 * answer to isc_info_limbo.
 *
 * Properties: decoding ends with FFBP_OK or FFBP_EBAD; on FFBP_EBAD nothing
 * is written; on FFBP_OK at most `max` numbers are stored, each positive
 * and equal to the clump's little-endian value, and a smaller `max` gives
 * a prefix of the same list with `more` set; the public wrapper agrees.
 */
#include <string.h>

#include "include/fastfb.h"
#include "proto/twopc.h"
#include "tests/fuzz/fuzz.h"

#define CAP 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int64_t ids[CAP + 1], few[CAP + 1];
    size_t count = 12345, nfew = 12345;
    int more = 7, fmore = 7;
    for (size_t i = 0; i <= CAP; i++)
        ids[i] = few[i] = -77;
    int rc = ffbp_limbo_decode(data, size, ids, CAP, &count, &more);
    FUZZ_CHECK(rc == FFBP_OK || rc == FFBP_EBAD);
    if (rc == FFBP_EBAD) {
        FUZZ_CHECK(count == 12345 && more == 7);
        for (size_t i = 0; i <= CAP; i++)
            FUZZ_CHECK(ids[i] == -77);
        size_t c = 0;
        FUZZ_CHECK(ffb_limbo_parse(data, size, few, CAP, &c) == FFB_E_PROTO);
        return 0;
    }
    FUZZ_CHECK(count <= CAP && (more == 0 || more == 1));
    FUZZ_CHECK(ids[CAP] == -77);
    for (size_t i = 0; i < count; i++)
        FUZZ_CHECK(ids[i] > 0);
    /* Every stored number is a clump of item 16, in order. */
    size_t pos = 0, n, k = 0;
    uint8_t item;
    const uint8_t *d;
    while (k < count && ffbp_info_next(data, size, &pos, &item, &d, &n) == 1) {
        FUZZ_CHECK(item == FFBP_INFO_LIMBO && n >= 1 && n <= 8);
        FUZZ_CHECK(fuzz_inside(data, size, d, n));
        FUZZ_CHECK(ffbp_le_int(d, n) == ids[k]);
        k++;
    }
    FUZZ_CHECK(k == count);
    /* Half the room: a prefix, and `more` when something did not fit. */
    size_t half = count / 2;
    FUZZ_CHECK(ffbp_limbo_decode(data, size, few, half, &nfew, &fmore) ==
               FFBP_OK);
    FUZZ_CHECK(nfew == half);
    FUZZ_CHECK(memcmp(few, ids, half * sizeof(ids[0])) == 0);
    FUZZ_CHECK(fmore == (half < count || more));
    size_t c = 0;
    int prc = ffb_limbo_parse(data, size, few, CAP, &c);
    FUZZ_CHECK(prc == more && c == count);
    return 0;
}
