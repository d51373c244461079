/*
 * SRP client and login normalisation (lib/srp.c).
 *
 * Vectors:
 *  - docs/protocol/01-connection.md 6.4.8 (A, K, M for Srp/Srp256/Srp512);
 *  - the same inputs for Srp224/Srp384 and the edge cases (odd-length A,
 *    short S, K with a leading zero byte, 127-byte A, SHA1(I) with a
 *    leading zero byte): computed with an independent Python
 *    implementation of the 6.4.5 formulas (int/pow/hashlib), which
 *    reproduces the 6.4.8 values;
 *  - two live Firebird 5.0.4 handshakes: the salt and B of the
 *    op_cond_accept and the K and M in the headers of
 *    shared/fixtures/fb5/fb5-handshake-srp256-chacha64.conv (Srp256) and
 *    fb5-handshake-srp-arc4.conv (Srp, B with 255 hex digits).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/hex.h"

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "include/fastfb.h"
#include "lib/auth.h"

/* ---- helpers ---------------------------------------------------------- */


static void hexstr(const uint8_t *b, size_t n, char *out) {
    static const char d[] = "0123456789ABCDEF";
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[2 * n] = 0;
}

/* Server data of 6.4.4: LE16 salt length, salt, LE16 B length, B. */
static size_t server_data(const char *salt, const char *b, uint8_t *out,
                          size_t size) {
    size_t ls = strlen(salt);
    size_t lb = strlen(b);
    assert_true(4 + ls + lb <= size);
    out[0] = (uint8_t)ls;
    out[1] = (uint8_t)(ls >> 8);
    memcpy(out + 2, salt, ls);
    out[2 + ls] = (uint8_t)lb;
    out[3 + ls] = (uint8_t)(lb >> 8);
    memcpy(out + 4 + ls, b, lb);
    return 4 + ls + lb;
}

static void init_fixed(ffb__srp *s, int hash, const char *a_hex) {
    uint8_t a[160];
    size_t n = test_unhex(a_hex, a, sizeof(a));
    assert_int_equal(ffb__srp_init(s, hash, a, n), 0);
}

/* Run a proof and compare K and M. */
static void check_proof(int hash, const char *a_hex, const char *salt,
                        const char *b, const char *login, const char *password,
                        const char *want_k, const char *want_m) {
    ffb__srp s;
    uint8_t data[400];
    size_t len = server_data(salt, b, data, sizeof(data));
    char proof[129];
    size_t proof_len = 0;
    uint8_t K[20];
    char k_hex[41];

    init_fixed(&s, hash, a_hex);
    assert_int_equal(ffb__srp_proof(&s, data, len, login, strlen(login),
                                    password, strlen(password), proof,
                                    sizeof(proof), &proof_len, K),
                     0);
    hexstr(K, 20, k_hex);
    assert_string_equal(k_hex, want_k);
    assert_string_equal(proof, want_m);
    assert_int_equal(proof_len, strlen(want_m));
}

/* ---- 6.4.8 ------------------------------------------------------------- */

#define V_A_PRIV                                                               \
    "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D4393"
#define V_SALT "2E268803000000079A478A700000002D1A6979000000026E1601C000000054F"
#define V_A                                                                    \
    "712C5F8A2DB82464C4D640AE971025AA50AB64906D4F044F822E8AF8A58ADABBDBE1EFAB" \
    "A00BCCD4CDAA8A955BC43C3600BEAB9EBB9BD41ACC56E37F1A48F17293F24E876B53EEA6" \
    "A60712D3F943769056B63202416827B400E162A8C0938D482274307585E0BC1D9DD52EFA" \
    "7330B28E41B7CFCEFD9E8523FD11440EE5DE93A8"
#define V_B                                                                    \
    "38C2E70F0FA08BA23295868147F719C329900E5C91B8BB67DC33EE1C788D883551F0BCF2" \
    "E32C0E65EDBBC417F292C7E0D636514B387777BED759B4725DB386A90154ED118E3EA9E9" \
    "6FE0EA235FD704C6772FC32C5075C99A138BFDEA0CAA097ED7F28DDB3114EEBB937B3B17" \
    "1C22F706A506A9CC508EC53FC46196A87FC2559B"
#define V_K "BAF2AC1E2FE66C9B1E05A76380FE08C9161CBF78"
#define V_N                                                                    \
    "E67D2E994B2F900C3F41F08F5BB2627ED0D49EE1FE767A52EFCD565CD6E768812C3E1E9C" \
    "E8F0A8BEA6CB13CD29DDEBF7A96D4A93B55D488DF099A15C89DCB0640738EB2CBDD9A8F7" \
    "BAB561AB1B0DC1C6CDABF303264A08D1BCA932D1F1EE428B619D970F342ABA9A65793B8B" \
    "2F041AE5364350C16F735F56ECBCA87BD57B29E7"

static void test_srp_hash_of_names(void **state) {
    (void)state;
    assert_int_equal(ffb__srp_hash_of("Srp", 3), FFB__SRP_SHA1);
    assert_int_equal(ffb__srp_hash_of("Srp224", 6), FFB__SRP_SHA224);
    assert_int_equal(ffb__srp_hash_of("Srp256", 6), FFB__SRP_SHA256);
    assert_int_equal(ffb__srp_hash_of("Srp384", 6), FFB__SRP_SHA384);
    assert_int_equal(ffb__srp_hash_of("Srp512", 6), FFB__SRP_SHA512);
    assert_int_equal(ffb__srp_hash_of("Srp256", 3), FFB__SRP_SHA1);
    assert_int_equal(ffb__srp_hash_of("srp256", 6), 0);
    assert_int_equal(ffb__srp_hash_of("SRP", 3), 0);
    assert_int_equal(ffb__srp_hash_of("Srp2560", 7), 0);
    assert_int_equal(ffb__srp_hash_of("Sr", 2), 0);
    assert_int_equal(ffb__srp_hash_of("Legacy_Auth", 11), 0);
    assert_int_equal(ffb__srp_hash_of("", 0), 0);
    assert_int_equal(ffb__srp_hash_of(NULL, 0), 0);
}

static void test_srp_init_vector_a(void **state) {
    ffb__srp s;
    uint8_t a[64];
    size_t n = test_unhex(V_A_PRIV, a, sizeof(a));
    (void)state;
    assert_int_equal(ffb__srp_init(&s, FFB__SRP_SHA256, a, n), 0);
    assert_int_equal(s.proof_hash, FFB__SRP_SHA256);
    assert_string_equal(s.A_hex, V_A);
    assert_int_equal(s.A_hex_len, 256);
    assert_int_equal(s.a_len, 32);
    assert_memory_equal(s.a, a, 32);
}

static void test_srp_init_fixed_leading_zeros_minimal(void **state) {
    ffb__srp s;
    (void)state;
    init_fixed(&s, FFB__SRP_SHA1, "0000" V_A_PRIV);
    assert_int_equal(s.a_len, 32);
    assert_string_equal(s.A_hex, V_A);
}

static void test_srp_init_odd_length_a(void **state) {
    ffb__srp s;
    (void)state;
    /* a + 29: A has 255 hex digits (Python reference). */
    init_fixed(
        &s, FFB__SRP_SHA256,
        "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D43B0");
    assert_int_equal(s.A_hex_len, 255);
    assert_string_equal(
        s.A_hex,
        "B0F4F725236448C37A352C69C929BF2DE8A5B6E6F4F3D244A405A40D1DACE497F62567"
        "17783F3280D41A44DE5E7009CAE274089151865F6B836E45253EA49CA736C55BFF5CB8"
        "9381DDC72D9E147305E5B4468B8DEE23B4347C8BAF3AA5B02E5B14B0CA9C803EE14D1C"
        "63F236B4F65CF385FC28DFEBA9E269914CEC1DD80E73F");
}

static void test_srp_init_rejects_bad_key(void **state) {
    ffb__srp s;
    uint8_t zero[4] = {0, 0, 0, 0};
    uint8_t n[128];
    uint8_t big[129];
    uint8_t one = 1;
    (void)state;
    test_unhex(V_N, n, sizeof(n));
    assert_int_equal(ffb__srp_init(&s, FFB__SRP_SHA1, zero, sizeof(zero)),
                     FFB_E_INVAL);
    assert_int_equal(ffb__srp_init(&s, FFB__SRP_SHA1, n, sizeof(n)),
                     FFB_E_INVAL); /* a == N */
    memset(big, 0xFF, sizeof(big));
    assert_int_equal(ffb__srp_init(&s, FFB__SRP_SHA1, big, sizeof(big)),
                     FFB_E_INVAL); /* a > N */
    n[127]--; /* N - 1: A = 2^(N-1) mod N = 1, refused as trivial */
    assert_int_equal(ffb__srp_init(&s, FFB__SRP_SHA1, n, sizeof(n)),
                     FFB_E_INVAL);
    n[127]--; /* N - 2: A = (N + 1) / 2 */
    assert_int_equal(ffb__srp_init(&s, FFB__SRP_SHA1, n, sizeof(n)), 0);
    assert_string_equal(
        s.A_hex,
        "733E974CA597C8061FA0F847ADD9313F686A4F70FF3B3D2977E6AB2E6B73B440"
        "961F0F4E7478545F536589E694EEF5FBD4B6A549DAAEA446F84CD0AE44EE5832"
        "039C75965EECD47BDD5AB0D58D86E0E366D5F98193250468DE549968F8F72145"
        "B0CECB879A155D4D32BC9DC597820D729B21A860B7B9AFAB765E543DEABD94F4");
    assert_int_equal(ffb__srp_init(&s, 0, &one, 1), FFB_E_INVAL);
    assert_int_equal(ffb__srp_init(&s, 6, &one, 1), FFB_E_INVAL);
    assert_int_equal(ffb__srp_init(NULL, FFB__SRP_SHA1, &one, 1), FFB_E_INVAL);
    /* a = 1: A = 2, fine */
    assert_int_equal(ffb__srp_init(&s, FFB__SRP_SHA1, &one, 1), 0);
    assert_string_equal(s.A_hex, "2");
}

static void test_srp_init_random(void **state) {
    ffb__srp s1;
    ffb__srp s2;
    int i;
    (void)state;
    for (i = 0; i < 20; i++) {
        size_t j;
        assert_int_equal(ffb__srp_init(&s1, FFB__SRP_SHA256, NULL, 0), 0);
        assert_true(s1.a_len > 0 && s1.a_len <= 128);
        assert_true(s1.a[0] != 0);
        assert_true(s1.A_hex_len > 0 && s1.A_hex_len <= 256);
        assert_int_equal(strlen(s1.A_hex), s1.A_hex_len);
        assert_true(s1.A_hex[0] != '0');
        for (j = 0; j < s1.A_hex_len; j++)
            assert_non_null(strchr("0123456789ABCDEF", s1.A_hex[j]));
    }
    assert_int_equal(ffb__srp_init(&s2, FFB__SRP_SHA256, NULL, 0), 0);
    assert_true(s1.a_len != s2.a_len || memcmp(s1.a, s2.a, s1.a_len) != 0);
    assert_string_not_equal(s1.A_hex, s2.A_hex);
    /* a random key gives the same A when used as fixed key */
    {
        ffb__srp s3;
        assert_int_equal(ffb__srp_init(&s3, FFB__SRP_SHA256, s1.a, s1.a_len),
                         0);
        assert_string_equal(s3.A_hex, s1.A_hex);
    }
}

static void test_srp_proof_vector_srp(void **state) {
    (void)state;
    check_proof(FFB__SRP_SHA1, V_A_PRIV, V_SALT, V_B, "SYSDBA", "masterkey",
                V_K, "1014C1B9791A96D7CB9C925E035E57A8CE26284A");
}

static void test_srp_proof_vector_srp256(void **state) {
    (void)state;
    check_proof(
        FFB__SRP_SHA256, V_A_PRIV, V_SALT, V_B, "SYSDBA", "masterkey", V_K,
        "435C67CE661EB382EC45636606FD9F7049E59FBC4F958D8229923C581A6F4A23");
}

static void test_srp_proof_vector_srp512(void **state) {
    (void)state;
    check_proof(FFB__SRP_SHA512, V_A_PRIV, V_SALT, V_B, "SYSDBA", "masterkey",
                V_K,
                "5B7B0FAFDAD484292D16A977D179359C4BF7F03CEEDE70EAB4FFE80E168899"
                "86FE23F89B1AFA792EF6FADCCBC21F6CE03877A673757AA2E470ED7C7F5A78"
                "FA15");
}

static void test_srp_proof_srp224_srp384(void **state) {
    (void)state;
    check_proof(FFB__SRP_SHA224, V_A_PRIV, V_SALT, V_B, "SYSDBA", "masterkey",
                V_K,
                "D26CB07D5E5036883DC9CC94A600718847F22213C9EFF53BF9923F36");
    /* 95 digits: the digest starts with 0x0E, no leading zero written */
    check_proof(FFB__SRP_SHA384, V_A_PRIV, V_SALT, V_B, "SYSDBA", "masterkey",
                V_K,
                "ECAF3F5F822694744981C957515F1A00CCE0ACE6BDE5FDB7972C78CCEAD12A"
                "362664AAC20413E39564FC61E6DCCC335");
}

static void test_srp_proof_minimal_encodings(void **state) {
    (void)state;
    /* A with 255 hex digits */
    check_proof(
        FFB__SRP_SHA256,
        "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D43B0",
        V_SALT, V_B, "SYSDBA", "masterkey",
        "F6711996A9BF7E53111E05F63071BE64A2576B03",
        "96F000554EEA1E68A52A45E98BB64FD058D2208D7719C6888C5D806F6366C64C");
    /* S shorter than 128 bytes */
    check_proof(
        FFB__SRP_SHA256,
        "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D43B7",
        V_SALT, V_B, "SYSDBA", "masterkey",
        "695F8875220E80C97A916699923BE9DC25603426",
        "44C39D048B6390C2BF6A9BFE18E276BE748AAC41FC1875D6C665AB8A5D32D09F");
    /* K starts with a zero byte: hashed raw into M */
    check_proof(
        FFB__SRP_SHA256,
        "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D43DE",
        V_SALT, V_B, "SYSDBA", "masterkey",
        "00DE357C32FBBADB27920B6275A25BAFA2697854",
        "506CBE544543DDB71ECFF857E79765F2466D6992ACAE2B76EE35F285216D8959");
    /* A of 127 bytes (254 digits) */
    check_proof(
        FFB__SRP_SHA256,
        "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D46E1",
        V_SALT, V_B, "SYSDBA", "masterkey",
        "6D8E087C474E8E981544B3E13B2C13A0E1DF1877",
        "D0BDDAF38A6810E06FE7DD65703698524FEDA1B9A0A64CC2CFC745C81D9101CC");
    /* a 128-byte private key (Python reference also checked that the
     * server side, (A * v^u)^b mod N with b of 6.4.8, gives the same K) */
    check_proof(
        FFB__SRP_SHA256,
        "C3F6F0E8DEBDF860122D08A4CD8AAD62F92BE240D2E7D1D8870888E4D820FE67"
        "23307E1C8BB14C389101A10AA6D1018B3FC3F9E549B20BA10E4D74084E87A90A"
        "3A92EB62E0D42371C63D0E699C5FE558FC0791DEF0C2CE60F66D817A8226B171"
        "830DD3ABACA08C803F191D963E25B1C30034CF6EDE57BCE36905A2223DA4492B",
        V_SALT, V_B, "SYSDBA", "masterkey",
        "ED11CE9EC19FD9513DCC1444407787558F653E84",
        "294FD5CF93BE3ADBCE426298DFB6211BABB3D9ED8D5F8D865FF155D18F5D4B5D");
    /* SHA1("USER171") = 00179F41...: n2 is hashed as 19 bytes */
    check_proof(FFB__SRP_SHA1, V_A_PRIV, V_SALT, V_B, "USER171", "masterkey",
                "1A7508CB733E719F45F0A020C4C1E57E07B6AED9",
                "A2BECE6E6114A6FBCF812EE345C583EAC450950A");
}

/* Live FB 5.0.4 handshakes (see the file comment). */
#define FB5_SALT                                                               \
    "6B6C98CBEC8506F8047879F84A563F4B3FD1B5DB3127911AB4F110E5B862C0F6"
#define FB5_B_CHACHA64                                                         \
    "7A67F1C0CAD610DB63AD69601F36D373565D114A4F6569E12414B324BB636603EBEA02A2" \
    "DA4DFC4459079268340419755B7C86CCEB8FE4E610982AB7EAB84D2D7F39E87C6F15D62A" \
    "6079D03FA1F35A7DE9F5AC0AFE3D0CB2E5037A194CBDCC9977E7B3832952419050DC6F1C" \
    "E3BB1F88923922B235362974E7AEEFE25B7896CE"
#define FB5_B_ARC4                                                             \
    "7BAEC467029E15829E7379853A6D332F920E36994D0A11AB1371ADD2BDF4A9E66E505E32" \
    "93705052B7FF199CC8E79C123F8089A0A37193B0179C6789A30B0EA740D317488C74D0C5" \
    "CDDC10426711829BACEAC07FB11384E933900F2AA190C98CA0024ABAB58D0B9C6BC0DBCE" \
    "19CFA9310D8677F4CE473B759D78C395358F503"

static void test_srp_proof_fb5_srp256(void **state) {
    (void)state;
    check_proof(
        FFB__SRP_SHA256, V_A_PRIV, FB5_SALT, FB5_B_CHACHA64, "SYSDBA",
        "masterkey", "2FDF075E6FA183E3D96B9C5244D93290F165241C",
        "47781050714B42382D359AAAD558ABF0984AA3E7733FCB57573CEB567D211610");
}

static void test_srp_proof_fb5_srp_odd_b(void **state) {
    (void)state;
    assert_int_equal(strlen(FB5_B_ARC4), 255);
    check_proof(FFB__SRP_SHA1, V_A_PRIV, FB5_SALT, FB5_B_ARC4, "SYSDBA",
                "masterkey", "B4FAB384B6C0C159575729E4F1F6EA6F8184026C",
                "37781ABE883EB062D90C905688EB9210910822F7");
    /* the same B with a leading zero and in lower case */
    {
        char b[257];
        size_t i;
        b[0] = '0';
        for (i = 0; i < 255; i++) {
            char c = FB5_B_ARC4[i];
            b[i + 1] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
        }
        b[256] = 0;
        check_proof(FFB__SRP_SHA1, V_A_PRIV, FB5_SALT, b, "SYSDBA", "masterkey",
                    "B4FAB384B6C0C159575729E4F1F6EA6F8184026C",
                    "37781ABE883EB062D90C905688EB9210910822F7");
    }
}

/* ---- bad server data --------------------------------------------------- */

static int proof_rc(const uint8_t *data, size_t len) {
    ffb__srp s;
    char proof[129];
    size_t proof_len;
    uint8_t K[20];
    init_fixed(&s, FFB__SRP_SHA256, V_A_PRIV);
    return ffb__srp_proof(&s, data, len, "SYSDBA", 6, "masterkey", 9, proof,
                          sizeof(proof), &proof_len, K);
}

static int proof_rc_b(const char *salt, const char *b) {
    uint8_t data[400];
    size_t len = server_data(salt, b, data, sizeof(data));
    return proof_rc(data, len);
}

static void test_srp_proof_bad_lengths(void **state) {
    uint8_t data[400];
    size_t len;
    (void)state;

    memset(data, 0, sizeof(data));
    assert_int_equal(proof_rc(data, 0), FFB_E_AUTH);
    assert_int_equal(proof_rc((const uint8_t *)"", 0), FFB_E_AUTH);
    assert_int_equal(proof_rc((const uint8_t *)"\x01", 1), FFB_E_PROTO);
    assert_int_equal(proof_rc((const uint8_t *)"\x00\x00\x00", 3), FFB_E_PROTO);

    /* the valid 323-byte reply, then broken variants */
    len = server_data(V_SALT, V_B, data, sizeof(data));
    assert_int_equal(len, 323);
    assert_int_equal(proof_rc(data, len), 0);
    assert_int_equal(proof_rc(data, len - 1), FFB_E_PROTO); /* Lb too big */
    data[len] = '0';
    assert_int_equal(proof_rc(data, len + 1), FFB_E_PROTO); /* Lb too small */
    data[0] = 0x41;                                         /* salt length 65 */
    assert_int_equal(proof_rc(data, len), FFB_E_PROTO);
    data[0] = 0x3F;
    data[1] = 0x01; /* salt length 319 */
    assert_int_equal(proof_rc(data, len), FFB_E_PROTO);
    data[1] = 0x00;
    data[2 + 63 + 1] = 0x02; /* B length 512 */
    assert_int_equal(proof_rc(data, len), FFB_E_PROTO);

    /* over 324 bytes in total, even if consistent */
    {
        char b[300];
        memset(b, '1', 259);
        b[259] = 0;
        /* 4 + 63 + 258 = 325 */
        b[258] = 0;
        assert_int_equal(proof_rc_b(V_SALT, b), FFB_E_PROTO);
        b[257] = 0; /* 324: fine (B < N? 0x111... with 257 digits is > N) */
        assert_int_equal(proof_rc_b(V_SALT, b), 0);
    }
    /* salt length 64 + B 256 = 324: the normal maximum */
    assert_int_equal(proof_rc_b(FB5_SALT, FB5_B_CHACHA64), 0);
    /* empty salt is accepted (not our business) */
    assert_int_equal(proof_rc_b("", V_B), 0);
}

static void test_srp_proof_bad_hex(void **state) {
    char b[257];
    const char *bad = "G-gx :\x80";
    size_t i;
    (void)state;
    for (i = 0; bad[i] != 0; i++) {
        strcpy(b, V_B);
        b[100] = bad[i];
        assert_int_equal(proof_rc_b(V_SALT, b), FFB_E_PROTO);
        strcpy(b, V_B);
        b[0] = bad[i];
        assert_int_equal(proof_rc_b(V_SALT, b), FFB_E_PROTO);
    }
    /* a NUL inside the counted text */
    {
        uint8_t data[400];
        size_t len = server_data(V_SALT, V_B, data, sizeof(data));
        data[len - 1] = 0;
        assert_int_equal(proof_rc(data, len), FFB_E_PROTO);
    }
    /* a leading '-' or "0x" is not hex either */
    assert_int_equal(proof_rc_b(V_SALT, "-2"), FFB_E_PROTO);
    assert_int_equal(proof_rc_b(V_SALT, "0x12345"), FFB_E_PROTO);
}

static void test_srp_proof_trivial_b(void **state) {
    char b[300];
    (void)state;
    assert_int_equal(proof_rc_b(V_SALT, ""), FFB_E_AUTH);
    assert_int_equal(proof_rc_b(V_SALT, "0"), FFB_E_AUTH);
    assert_int_equal(proof_rc_b(V_SALT, "1"), FFB_E_AUTH);
    assert_int_equal(proof_rc_b(V_SALT, "0001"), FFB_E_AUTH);
    assert_int_equal(proof_rc_b(V_SALT, "2"), 0);
    assert_int_equal(proof_rc_b(V_SALT, V_N), FFB_E_AUTH); /* N mod N = 0 */
    strcpy(b, V_N);
    b[255] = 'F'; /* N - 7 + 15 = N + 8: mod N = 8, fine */
    assert_int_equal(proof_rc_b(V_SALT, b), 0);
    b[255] = '8'; /* N + 1 */
    assert_int_equal(proof_rc_b(V_SALT, b), FFB_E_AUTH);
    /* 2N with a leading zero digit (258 digits, so a short salt) */
    strcpy(b, "01CCFA5D32965F20187E83E11EB764C4FDA1A93DC3FCECF4A5DF9AACB9ADCED1"
              "02587C3D39D1E1517D4D96279A53BBD7EF52DA95276ABA911BE13342B913B960"
              "C80E71D6597BB351EF756AC356361B838D9B57E6064C9411A3795265A3E3DC85"
              "16C33B2E1E68557534CAF277165E0835CA6C86A182DEE6BEADD97950F7AAF653"
              "CE");
    assert_int_equal(proof_rc_b("AB", b), FFB_E_AUTH);
}

static void test_srp_proof_bad_args(void **state) {
    ffb__srp s;
    uint8_t data[400];
    size_t len = server_data(V_SALT, V_B, data, sizeof(data));
    char proof[129];
    size_t proof_len = 0;
    uint8_t K[20];
    (void)state;
    init_fixed(&s, FFB__SRP_SHA256, V_A_PRIV);
    /* 64 digits need 65 bytes */
    assert_int_equal(ffb__srp_proof(&s, data, len, "SYSDBA", 6, "masterkey", 9,
                                    proof, 64, &proof_len, K),
                     FFB_E_INVAL);
    assert_int_equal(ffb__srp_proof(&s, data, len, "SYSDBA", 6, "masterkey", 9,
                                    proof, 65, &proof_len, K),
                     0);
    assert_int_equal(proof_len, 64);
    assert_int_equal(ffb__srp_proof(NULL, data, len, "SYSDBA", 6, "masterkey",
                                    9, proof, sizeof(proof), &proof_len, K),
                     FFB_E_INVAL);
    assert_int_equal(ffb__srp_proof(&s, data, len, NULL, 6, "masterkey", 9,
                                    proof, sizeof(proof), &proof_len, K),
                     FFB_E_INVAL);
    assert_int_equal(ffb__srp_proof(&s, NULL, len, "SYSDBA", 6, "masterkey", 9,
                                    proof, sizeof(proof), &proof_len, K),
                     FFB_E_INVAL);
    s.proof_hash = 9;
    assert_int_equal(ffb__srp_proof(&s, data, len, "SYSDBA", 6, "masterkey", 9,
                                    proof, sizeof(proof), &proof_len, K),
                     FFB_E_INVAL);
    /* empty login and password are legal inputs */
    init_fixed(&s, FFB__SRP_SHA256, V_A_PRIV);
    assert_int_equal(ffb__srp_proof(&s, data, len, NULL, 0, NULL, 0, proof,
                                    sizeof(proof), &proof_len, K),
                     0);
}

/*
 * Random keys against the server side of 6.4.6, written here with plain
 * BIGNUM calls: v = g^x, b = the 6.4.8 private key (so B is V_B),
 * S = (A * v^u)^b mod N. Server and client must agree on K every time.
 */
static void sha1_2(const void *p1, size_t n1, const void *p2, size_t n2,
                   uint8_t out[20]) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    assert_non_null(ctx);
    assert_int_equal(EVP_DigestInit_ex(ctx, EVP_sha1(), NULL), 1);
    assert_int_equal(EVP_DigestUpdate(ctx, p1, n1), 1);
    if (n2 > 0)
        assert_int_equal(EVP_DigestUpdate(ctx, p2, n2), 1);
    assert_int_equal(EVP_DigestFinal_ex(ctx, out, NULL), 1);
    EVP_MD_CTX_free(ctx);
}

static void test_srp_random_keys_match_server(void **state) {
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *n = NULL, *b = NULL, *A = NULL, *B = NULL;
    BIGNUM *x = BN_new(), *v = BN_new(), *u = BN_new(), *t = BN_new();
    BIGNUM *g = BN_new();
    uint8_t data[400];
    size_t len = server_data(V_SALT, V_B, data, sizeof(data));
    uint8_t h[20];
    int i;
    (void)state;
    assert_non_null(ctx);
    assert_non_null(g);
    assert_true(BN_hex2bn(&n, V_N) > 0);
    assert_true(BN_hex2bn(&b, V_A_PRIV) > 0);
    assert_true(BN_hex2bn(&B, V_B) > 0);
    assert_true(BN_set_word(g, 2));
    sha1_2("SYSDBA:masterkey", 16, NULL, 0, h);
    sha1_2(V_SALT, strlen(V_SALT), h, 20, h);
    assert_non_null(BN_bin2bn(h, 20, x));
    assert_true(BN_mod_exp(v, g, x, n, ctx));

    for (i = 0; i < 16; i++) {
        ffb__srp s;
        char proof[129];
        size_t proof_len;
        uint8_t K[20];
        uint8_t K_server[20];
        uint8_t ab[128];
        uint8_t bb[128];
        uint8_t sb[128];
        int a_len;
        int b_len;
        int s_len;
        assert_int_equal(ffb__srp_init(&s, FFB__SRP_SHA256, NULL, 0), 0);
        assert_int_equal(ffb__srp_proof(&s, data, len, "SYSDBA", 6, "masterkey",
                                        9, proof, sizeof(proof), &proof_len, K),
                         0);
        assert_int_equal(proof_len, strlen(proof));
        assert_true(proof_len <= 64);
        /* server */
        assert_true(BN_hex2bn(&A, s.A_hex) > 0);
        a_len = BN_bn2bin(A, ab);
        b_len = BN_bn2bin(B, bb);
        sha1_2(ab, (size_t)a_len, bb, (size_t)b_len, h);
        assert_non_null(BN_bin2bn(h, 20, u));
        assert_true(BN_mod_exp(t, v, u, n, ctx));
        assert_true(BN_mod_mul(t, A, t, n, ctx));
        assert_true(BN_mod_exp(t, t, b, n, ctx));
        s_len = BN_bn2bin(t, sb);
        sha1_2(sb, (size_t)s_len, NULL, 0, K_server);
        assert_memory_equal(K, K_server, 20);
    }
    BN_free(n);
    BN_free(b);
    BN_free(A);
    BN_free(B);
    BN_free(x);
    BN_free(v);
    BN_free(u);
    BN_free(t);
    BN_free(g);
    BN_CTX_free(ctx);
}

/* ---- login normalisation (6.4.2) --------------------------------------- */

static void norm_ok(const char *in, const char *want) {
    char out[64];
    size_t out_len = 99;
    assert_int_equal(
        ffb__login_normalize(in, strlen(in), out, sizeof(out), &out_len), 0);
    assert_string_equal(out, want);
    assert_int_equal(out_len, strlen(want));
}

static void norm_err(const char *in) {
    char out[64];
    size_t out_len = 0;
    assert_int_equal(
        ffb__login_normalize(in, strlen(in), out, sizeof(out), &out_len),
        FFB_E_INVAL);
}

static void test_login_unquoted(void **state) {
    (void)state;
    norm_ok("sysdba", "SYSDBA");
    norm_ok("SYSDBA", "SYSDBA");
    norm_ok("SysDba", "SYSDBA");
    norm_ok("user_1$x", "USER_1$X");
    norm_ok("_a", "_A");
    norm_ok("$a", "$A");
    norm_ok("", "");
    /* anything else: unchanged */
    norm_ok("kudashkina.ard", "kudashkina.ard");
    norm_ok("my-user", "my-user");
    norm_ok("two words", "two words");
    norm_ok("1abc", "1abc"); /* digit first */
    norm_ok("\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9");
    norm_ok("abc\xc3\xa9", "abc\xc3\xa9");
    norm_ok("a\"b", "a\"b");
}

static void test_login_quoted(void **state) {
    (void)state;
    norm_ok("\"Quoted\"\"x\"", "Quoted\"x");
    norm_ok("\"sysdba\"", "sysdba");
    norm_ok("\"\"", "");
    norm_ok("\"\"\"\"", "\"");
    norm_ok("\"a'b\"", "a'b");
    norm_ok("\"kudashkina.ard\"", "kudashkina.ard");
    /* single quotes: upper-cased when an identifier */
    norm_ok("'sysdba'", "SYSDBA");
    norm_ok("'kudashkina.ard'", "kudashkina.ard");
    norm_ok("'1abc'", "1abc");
    norm_ok("'a1'", "A1");
    norm_ok("'it''s'", "IT'S"); /* escaped quote keeps the upper-casing */
    norm_ok("''", "");
    norm_ok("'a\"b'", "a\"b");
}

static void test_login_quote_errors(void **state) {
    char out[8];
    size_t out_len;
    (void)state;
    norm_err("\"abc");
    norm_err("\"");
    norm_err("'");
    norm_err("'abc''");
    norm_err("\"abc\"x");
    norm_err("\"abc\" ");
    norm_err("'abc'x");
    /* out too small */
    assert_int_equal(ffb__login_normalize("sysdba", 6, out, 6, &out_len),
                     FFB_E_INVAL);
    assert_int_equal(ffb__login_normalize("sysdba", 6, out, 7, &out_len), 0);
    assert_string_equal(out, "SYSDBA");
    assert_int_equal(ffb__login_normalize(NULL, 1, out, 7, &out_len),
                     FFB_E_INVAL);
    assert_int_equal(ffb__login_normalize(NULL, 0, out, 7, &out_len), 0);
    assert_string_equal(out, "");
}

/* ---- OpenSSL allocation failures --------------------------------------- */

/* Installed with CRYPTO_set_mem_functions() before OpenSSL allocates. */
static long ossl_calls;
static long ossl_fail_at; /* fail the Nth call (1-based); 0 = never */

static void *t_malloc(size_t n, const char *file, int line) {
    (void)file;
    (void)line;
    if (++ossl_calls == ossl_fail_at)
        return NULL;
    return malloc(n);
}

static void *t_realloc(void *p, size_t n, const char *file, int line) {
    (void)file;
    (void)line;
    if (++ossl_calls == ossl_fail_at)
        return NULL;
    return realloc(p, n);
}

static void t_free(void *p, const char *file, int line) {
    (void)file;
    (void)line;
    free(p);
}

/*
 * Fail each OpenSSL allocation of init + proof in turn: every run must
 * either fail cleanly with FFB_E_CRYPT or give the right answer. Leaks on
 * these paths show up under valgrind / LeakSanitizer.
 */
static void test_srp_openssl_alloc_failures(void **state) {
    uint8_t a[32];
    uint8_t data[400];
    size_t len = server_data(V_SALT, V_B, data, sizeof(data));
    long n;
    int failures = 0;
    (void)state;
    test_unhex(V_A_PRIV, a, sizeof(a));
    for (n = 1; n < 100000; n++) {
        ffb__srp s;
        char proof[129];
        size_t proof_len = 0;
        uint8_t K[20];
        char k_hex[41];
        int rc;
        ossl_calls = 0;
        ossl_fail_at = n;
        rc = ffb__srp_init(&s, FFB__SRP_SHA256, a, sizeof(a));
        if (rc == 0)
            rc = ffb__srp_proof(&s, data, len, "SYSDBA", 6, "masterkey", 9,
                                proof, sizeof(proof), &proof_len, K);
        ossl_fail_at = 0;
        if (rc != 0) {
            assert_int_equal(rc, FFB_E_CRYPT);
            failures++;
            continue;
        }
        hexstr(K, 20, k_hex);
        assert_string_equal(k_hex, V_K);
        assert_string_equal(proof, "435C67CE661EB382EC45636606FD9F7049E59FBC"
                                   "4F958D8229923C581A6F4A23");
        if (ossl_calls < n)
            break; /* no allocation was failed: done */
    }
    assert_true(failures > 0);
    assert_true(n < 100000);
    /* the random path too */
    for (n = 1; n < 100000; n++) {
        ffb__srp s;
        int rc;
        ossl_calls = 0;
        ossl_fail_at = n;
        rc = ffb__srp_init(&s, FFB__SRP_SHA1, NULL, 0);
        ossl_fail_at = 0;
        if (rc != 0) {
            assert_int_equal(rc, FFB_E_CRYPT);
            continue;
        }
        if (ossl_calls < n)
            break;
    }
    assert_true(n < 100000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_srp_hash_of_names),
        cmocka_unit_test(test_srp_init_vector_a),
        cmocka_unit_test(test_srp_init_fixed_leading_zeros_minimal),
        cmocka_unit_test(test_srp_init_odd_length_a),
        cmocka_unit_test(test_srp_init_rejects_bad_key),
        cmocka_unit_test(test_srp_init_random),
        cmocka_unit_test(test_srp_proof_vector_srp),
        cmocka_unit_test(test_srp_proof_vector_srp256),
        cmocka_unit_test(test_srp_proof_vector_srp512),
        cmocka_unit_test(test_srp_proof_srp224_srp384),
        cmocka_unit_test(test_srp_proof_minimal_encodings),
        cmocka_unit_test(test_srp_proof_fb5_srp256),
        cmocka_unit_test(test_srp_proof_fb5_srp_odd_b),
        cmocka_unit_test(test_srp_proof_bad_lengths),
        cmocka_unit_test(test_srp_proof_bad_hex),
        cmocka_unit_test(test_srp_proof_trivial_b),
        cmocka_unit_test(test_srp_proof_bad_args),
        cmocka_unit_test(test_srp_random_keys_match_server),
        cmocka_unit_test(test_login_unquoted),
        cmocka_unit_test(test_login_quoted),
        cmocka_unit_test(test_login_quote_errors),
        cmocka_unit_test(test_srp_openssl_alloc_failures),
    };
    /* before OpenSSL allocates anything */
    if (!CRYPTO_set_mem_functions(t_malloc, t_realloc, t_free))
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
