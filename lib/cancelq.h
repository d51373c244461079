/*
 * The queue of op_cancel kinds asked and not yet written: one 32-bit
 * word, shared between threads and changed only with __atomic, so that
 * any thread can add a kind without a lock (ffb_conn_cancel,
 * ffb_uv_conn_cancel) and the connection's own thread takes them all, in
 * order. Bits 24..27 count the kinds; kind i is in bits 3i..3i+2.
 * Header-only: libfastfb and libfastfb_uv each compile it in.
 */
#ifndef FFB_LIB_CANCELQ_H
#define FFB_LIB_CANCELQ_H

#include <stdint.h>

#define FFB__CANCEL_MAX 8

/* Add `kind` (1..7): 0, or -1 when FFB__CANCEL_MAX wait already. */
static inline int ffb__cancelq_push(uint32_t *q, int kind) {
    uint32_t old = __atomic_load_n(q, __ATOMIC_ACQUIRE), n;
    do {
        uint32_t count = old >> 24;
        if (count >= FFB__CANCEL_MAX)
            return -1;
        n = ((count + 1) << 24) | (old & 0xffffffu) |
            ((uint32_t)kind << (3 * count));
    } while (!__atomic_compare_exchange_n(q, &old, n, 1, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    return 0;
}

/* Take every kind, oldest first, into kinds[FFB__CANCEL_MAX]: how many. */
static inline unsigned ffb__cancelq_take(uint32_t *q, int *kinds) {
    if (__atomic_load_n(q, __ATOMIC_ACQUIRE) == 0)
        return 0;
    uint32_t v = __atomic_exchange_n(q, 0, __ATOMIC_ACQ_REL);
    unsigned count = v >> 24;
    for (unsigned i = 0; i < count; i++)
        kinds[i] = (int)((v >> (3 * i)) & 7u);
    return count;
}

#endif
