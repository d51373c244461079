/*
 * Legacy_Auth client data (docs/protocol/01-connection.md 6.5): the
 * traditional Unix DES crypt(3) of the password with the fixed salt "9z"
 * (Firebird's LEGACY_PASSWORD_SALT), without the 2-character salt prefix.
 *
 * DES_fcrypt() belongs to OpenSSL's low-level DES API, deprecated since 3.0
 * but still built into libcrypto (no provider involved). It is thread-safe
 * (writes into the caller's buffer) and matches crypt(3): only the first 8
 * bytes count, each by its low 7 bits.
 */
#define OPENSSL_SUPPRESS_DEPRECATED

#include "lib/auth.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/des.h>

#include "include/fastfb.h"

#define LEGACY_SALT "9z"

int ffb__legacy_hash(const char *password, size_t len, char out[12]) {
    char key[9];
    char ret[14];
    size_t n = 0;

    if ((password == NULL && len != 0) || out == NULL)
        return FFB_E_INVAL;
    /* crypt(3) reads a C string: it stops at a NUL and after 8 bytes. */
    while (n < len && n < 8 && password[n] != '\0') {
        key[n] = password[n];
        n++;
    }
    key[n] = '\0';
    memset(ret, 0, sizeof(ret));
    if (DES_fcrypt(key, LEGACY_SALT, ret) == NULL || ret[13] != '\0' ||
        strlen(ret) != 13) {
        OPENSSL_cleanse(key, sizeof(key));
        return FFB_E_CRYPT;
    }
    memcpy(out, ret + 2, 11);
    out[11] = '\0';
    OPENSSL_cleanse(key, sizeof(key));
    OPENSSL_cleanse(ret, sizeof(ret));
    return 0;
}
