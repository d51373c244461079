/*
 * Client side of the authentication plugins: SRP (Srp, Srp224, Srp256,
 * Srp384, Srp512) and Legacy_Auth. Pure computations, no I/O.
 *
 * Reference: docs/protocol/01-connection.md, 6.4 (SRP) and 6.5
 * (Legacy_Auth). Implemented in lib/srp.c and lib/legacy.c with OpenSSL.
 */
#ifndef FFB_AUTH_H
#define FFB_AUTH_H

#include <stddef.h>
#include <stdint.h>

enum {
    FFB__SRP_SHA1 = 1,
    FFB__SRP_SHA224,
    FFB__SRP_SHA256,
    FFB__SRP_SHA384,
    FFB__SRP_SHA512
};

/*
 * One SRP handshake of the client. Holds the private key: wipe it
 * (OPENSSL_cleanse or equivalent) when the handshake is over.
 */
typedef struct ffb__srp {
    int proof_hash; /* FFB__SRP_*: the hash of the proof M */
    uint8_t a[128]; /* private key a, big-endian, minimal */
    size_t a_len;
    char A_hex[260]; /* hex(A): upper case, no leading zeros, NUL-ended */
    size_t A_hex_len;
} ffb__srp;

/*
 * Map a plugin name ("Srp", "Srp224", "Srp256", "Srp384", "Srp512") to
 * FFB__SRP_*; 0 if the name is not an SRP plugin. Exact and case-sensitive.
 */
int ffb__srp_hash_of(const char *plugin, size_t len);

/*
 * Step 1 (6.4.3). With fixed_a == NULL: a fresh private key from the CSPRNG
 * (RAND_bytes, 128 bytes reduced mod N, never 0). Otherwise the given key
 * (test hook; big-endian, leading zeros allowed; must be nonzero and < N).
 * Computes A = g^a mod N and its hex text (the client data of step 1).
 *
 * Returns 0, FFB_E_INVAL (bad proof_hash, bad fixed key), FFB_E_CRYPT
 * (OpenSSL failure, including its allocation failures).
 */
int ffb__srp_init(ffb__srp *s, int proof_hash, const uint8_t *fixed_a,
                  size_t fixed_a_len);

/*
 * Step 3 (6.4.5). `data`/`len` is the server data of 6.4.4 (salt + B),
 * `login` the login already normalised (ffb__login_normalize), `password`
 * the UTF-8 password. Writes hex(M) (upper case, no leading zeros,
 * NUL-terminated) to proof_hex, its length to *proof_len, and the 20-byte
 * session key to K.
 *
 * Validation of the server data, as fbclient does it (6.4.4): empty data ->
 * FFB_E_AUTH; total length over 324, salt length over 64, B length not
 * exactly the rest, or a non-hex character in B -> FFB_E_PROTO; B mod N < 2
 * -> FFB_E_AUTH. The salt is hashed as the text received and not checked.
 * B may have an odd number of hex digits and leading zeros.
 *
 * Returns 0, those codes, FFB_E_INVAL (bad arguments, proof_hex_size too
 * small: 129 always suffices), FFB_E_CRYPT.
 */
int ffb__srp_proof(const ffb__srp *s, const uint8_t *data, size_t len,
                   const char *login, size_t login_len, const char *password,
                   size_t password_len, char *proof_hex, size_t proof_hex_size,
                   size_t *proof_len, uint8_t K[20]);

/*
 * Firebird's login normalisation (fb_utils::dpbItemUpper, 6.4.2):
 * an unquoted identifier (ASCII letters, `_`, `$`, digits except first) is
 * upper-cased; any other unquoted name is unchanged; "double" or 'single'
 * quotes are stripped with doubled quotes collapsed, and a single-quoted
 * identifier is upper-cased. Text after the closing quote or a missing
 * closing quote -> FFB_E_INVAL. Writes out (NUL-terminated) and *out_len;
 * FFB_E_INVAL if out_size is too small (len + 1 always suffices).
 */
int ffb__login_normalize(const char *in, size_t len, char *out, size_t out_size,
                         size_t *out_len);

/*
 * Legacy_Auth client data (6.5): the 11 characters of the traditional DES
 * crypt(3) of the password with salt "9z", after the salt. Only the first
 * 8 bytes of the password count (low 7 bits each); a NUL byte ends it as in
 * crypt(3). `out` gets 11 characters and a NUL.
 *
 * Returns 0, FFB_E_INVAL (NULL arguments), FFB_E_CRYPT.
 */
int ffb__legacy_hash(const char *password, size_t len, char out[12]);

#endif
