/*
 * One direction of a wire cipher (docs/protocol/01-connection.md 7.3):
 * Arc4, ChaCha, ChaCha64. A connection keeps two of these, one per
 * direction, keyed identically. Implemented in lib/wirecrypt.c.
 */
#ifndef FFB_WIRECRYPT_H
#define FFB_WIRECRYPT_H

#include <stddef.h>
#include <stdint.h>

#include "include/fastfb.h"

typedef struct ffb__cipher ffb__cipher;

/*
 * Create the cipher state for `plugin` (NUL-terminated):
 *   "Arc4"     key = K raw (RC4, no discard); iv must be empty (iv_len 0);
 *   "ChaCha"   key = SHA-256(K); iv 16 bytes: nonce = bytes 0..11, initial
 *              32-bit block counter = bytes 12..15 big-endian; a 12-byte iv
 *              means counter 0;
 *   "ChaCha64" key = SHA-256(K); iv 8 bytes, 64-bit block counter from 0.
 * K is the SRP session key (20 bytes). The ChaCha plugins refuse keys
 * shorter than 16 bytes, as Firebird does; Arc4 needs at least one byte.
 * alloc may be NULL (libc). `*out` is set only on success.
 *
 * Returns 0, FFB_E_INVAL (NULL arguments, unknown plugin, key or iv length
 * not valid for the plugin), FFB_E_CRYPT (OpenSSL failure), FFB_E_NOMEM.
 */
int ffb__cipher_new(ffb__cipher **out, const ffb_allocator *alloc,
                    const char *plugin, const uint8_t *key, size_t key_len,
                    const uint8_t *iv, size_t iv_len);

/*
 * XOR len bytes with the next len bytes of the keystream; in == out is
 * allowed (other overlaps are not). The keystream position carries over
 * between calls. Returns 0, or FFB_E_CRYPT (OpenSSL failure, or ChaCha's
 * 32-bit block counter exhausted after 256 GiB, where Firebird breaks the
 * connection too); after an error the state is unusable.
 */
int ffb__cipher_apply(ffb__cipher *c, const uint8_t *in, uint8_t *out,
                      size_t len);

/* Free the state (wiping the key schedule). NULL is allowed. */
void ffb__cipher_free(ffb__cipher *c);

/* 1 if `plugin` (len bytes, exact, case-sensitive) is a cipher we have. */
int ffb__cipher_known(const char *plugin, size_t len);

#endif
