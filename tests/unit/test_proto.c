/*
 * Packet encoders and decoders of proto/ (connect.c, response.c, pb.c,
 * describe.c) on byte vectors: the worked examples of the protocol
 * reference (shared/docs/protocol/01-connection.md 10.2, 11.2, 13.2,
 * 13.3) and packets recorded from Firebird 5.0.4 (tests/data/fb5, S and C
 * lines). Decoder inputs sit in front of a guard page; every vector is
 * also decoded truncated at every length, which must give FFBP_INCOMPLETE
 * with the cursor untouched.
 */
#include "tests/support/guard.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/hex.h"

#include "proto/proto.h"

/* ---- vectors ------------------------------------------------------------- */

/* fb5-handshake-srp256-plain.conv, S line 1 (364 bytes):
   op_cond_accept, protocol 19, Srp256 salt + B. */
static const char V_COND_ACCEPT[] =
    "00000062FFFF8013000000010000000500000144400036423643393843424543"
    "3835303646383034373837394638344135363346344233464431423544423331"
    "3237393131414234463131304535423836324330463600013842353637383530"
    "3231453144393437413241323846394130393838443142343437423846364432"
    "4337384138384144414538303431354537374441323633364534463141383132"
    "4344303043323141354138383744384446444138443143303642394642373531"
    "4630373839453535313230444543314342454534363842443738463442423635"
    "4241303539414434373530423534323233314645353441323432314643343831"
    "4238374341374142434339453341323344464535463534314537363746343533"
    "3344364237324235394341414345363337373546373732444639343036344445"
    "3639334136323646383136393639394239303130453946350000000653727032"
    "353600000000000000000000";

/* fb5-handshake-srp256-crypt-disabled.conv, S line 1:
   op_accept_data (flow B), 364 bytes. */
static const char V_ACCEPT_DATA[] =
    "0000005EFFFF8013000000010000000500000144400036423643393843424543"
    "3835303646383034373837394638344135363346344233464431423544423331"
    "3237393131414234463131304535423836324330463600013634383832344637"
    "3837313830414638463636393930364446383135353835344637313336303545"
    "3235343736453533453736363832423941464130463432433544393431353436"
    "4536353233364436353234354642444244343946383934334444364246374139"
    "3631364641464337454235313937444631324441323945353839433443394539"
    "4444334134354432363637303136304139344634393443323442344541374431"
    "4546394433373333373844343646423932393944304242454341343745323136"
    "4337354332423233303839373234374531444337433630384444353645414635"
    "4642463336383646303942384535343339414430463231380000000653727032"
    "353600000000000000000000";

/* fb5-handshake-srp256-plain.conv, S line 2: op_response
   to the proof, data = the key list with both IVs (112 bytes). */
static const char V_RESP_KEYS[] =
    "000000090000000000000000000000000000004D000953796D6D657472696301"
    "1443686143686136342043686143686120417263340311436861436861363400"
    "FC01408C24A85A0B031743686143686100AFBBA3E35016C2400B40257E000000"
    "00000000000000010000000000000000";

/* fb5-handshake-srp256-plain.conv, S line 4: op_response
   to op_info_database, 139 bytes of info items (172 bytes). */
static const char V_RESP_INFO[] =
    "000000090000000000000000000000000000008B0C1D00011B4C492D56362E33"
    "2E342E3138313220466972656269726420352E30674600021B4C492D56352E30"
    "2E342E3138313220466972656269726420352E30284C492D56352E302E342E31"
    "38313220466972656269726420352E302F7463702028766D292F5031398C0000"
    "840400000000000E0400002000003E0100036504000400000089020013000100"
    "000000010000000000000000";

/* fb5-errors.conv, connection 2, S line 2: op_cont_auth
   switching to Srp with stale salt + B (348 bytes). */
static const char V_CONT_AUTH[] =
    "0000005C00000144400036423643393843424543383530364638303437383739"
    "4638344135363346344233464431423544423331323739313141423446313130"
    "4535423836324330463600013641444538443436323330383631453531324146"
    "4142414543374241453438374344313533314533393938393244443444384138"
    "4544304544303030303031373739394343333139443242413643313930383531"
    "3031374636364531463136333446304641444145383232454436304331454643"
    "4530334235434233364637463930394243373546343034434245423332334138"
    "3436443138433741374245354530373333413138324345384138373537453830"
    "4535373046353935333035433034434541343143464436443438423736314344"
    "3443363345463246303832333243304441443537433541363632453232463834"
    "44393036413142464638303000000003537270000000000000000000";

/* fb5-errors.conv, connection 1, S line 4: two
   op_response, the second the syntax error of "SELEC" (128 bytes). */
static const char V_PREPARE_ERR[] =
    "0000000900000001000000000000000000000000000000010000000000000000"
    "000000090000000000000000000000000000000000000001140000F900000001"
    "1400007400000004FFFFFF98000000011400013A000000040000000100000004"
    "00000001000000011400003E000000020000000553454C454300000000000000";

/* fb5-errors.conv, connection 1, S line 6: three
   op_response, the second a unique key violation (152 bytes). */
static const char V_UNIQUE[] =
    "0000000900000002000000000000000000000000000000010000000000000000"
    "0000000900000002000000000000000000000000000000011400015900000002"
    "00000007494E5445475F380000000002000000045445525200000001140002F0"
    "000000020000000A2822494422203D2031290000000000000000000900000000"
    "000000000000000000000000000000010000000000000000";

/* fb5-errors.conv, connection 2, last S line:
   op_response isc_login (32 bytes). */
static const char V_LOGIN[] =
    "0000000900000000000000000000000000000000000000011400009800000000";

/* fb5-handshake-srp256-plain.conv, C line 1: op_connect (492 bytes). */
static const char C_CONNECT[] =
    "0000000100000000000000030000000100000008666978747572657300000007"
    "0000013A090653595344424108065372703235360A0A5372703235362C537270"
    "07FF003731324335463841324442383234363443344436343041453937313032"
    "3541413530414236343930364434463034344638323245384146384135384144"
    "4142424442453145464142413030424343443443444141384139353542433433"
    "4333363030424541423945424239424434314143433536453337463141343846"
    "3137323933463234453837364235334545413641363037313244334639343337"
    "3639303536423633323032343136383237423430304531363241384330393338"
    "4434383232373433303735383545304243314439444435324546413733333042"
    "3238453431423743464345464439453835323346443131343430454535444539"
    "3307030141380B04010000000105616C6963650407636C69656E743106000000"
    "FFFF800D00000001000000000000000500000008FFFF800E0000000100000000"
    "000000050000000AFFFF800F0000000100000000000000050000000CFFFF8010"
    "0000000100000000000000050000000EFFFF8011000000010000000000000005"
    "00000010FFFF801200000001000000000000000500000012FFFF801300000001"
    "000000000000000500000014";

/* fb5-handshake-srp256-plain.conv, C line 3: op_attach (64 bytes). */
static const char C_ATTACH[] =
    "000000130000000000000008666978747572657300000027011C065359534442"
    "413004555446384D004704921000004A0E666978747572652D636C69656E7400";

/* fb5-handshake-srp256-plain.conv, C line 4: op_info_database. */
static const char C_INFO[] =
    "000000280000000000000000000000090C67898C840E3E650100000000000400";

/* fb5-errors.conv, connection 2, C line 5:
   op_cont_auth with the Legacy_Auth hash (44 bytes). */
static const char C_CONT_AUTH[] =
    "0000005C0000000B776A775A4B714555596B6F000000000B4C65676163795F41"
    "757468000000000000000000";

/* 01-connection.md 13.2: op_connect of the worked example (496 bytes). */
static const char DOC_CONNECT[] =
    "000000010000000000000003000000010000000C2F64622F746573742E666462"
    "000000070000013A090653595344424108065372703235360A0A537270323536"
    "2C53727007FF0037313243354638413244423832343634433444363430414539"
    "3731303235414135304142363439303644344630343446383232453841463841"
    "3538414441424244424531454641424130304243434434434441413841393535"
    "4243343343333630304245414239454242394244343141434335364533374631"
    "4134384631373239334632344538373642353345454136413630373132443346"
    "3934333736393035364236333230323431363832374234303045313632413843"
    "3039333844343832323734333037353835453042433144394444353245464137"
    "3333304232384534314237434643454644394538353233464431313434304545"
    "354445393307030141380B04010000000105616C6963650407636C69656E7431"
    "06000000FFFF800D00000001000000000000000500000008FFFF800E00000001"
    "00000000000000050000000AFFFF800F0000000100000000000000050000000C"
    "FFFF80100000000100000000000000050000000EFFFF80110000000100000000"
    "0000000500000010FFFF801200000001000000000000000500000012FFFF8013"
    "00000001000000000000000500000014";

/* 01-connection.md 11.2: op_response to the attach of a missing file (116
   bytes): isc_io_error "open" "/srv/db/nope.fdb", isc_io_open_err,
   isc_arg_interpreted "No such file or directory". */
static const char DOC_IO_ERROR[] =
    "0000000900000000000000000000000000000000000000011400001800000002"
    "000000046F70656E00000002000000102F7372762F64622F6E6F70652E666462"
    "000000011400019E00000005000000194E6F20737563682066696C65206F7220"
    "6469726563746F727900000000000000";

/* 01-connection.md 13.3: op_cont_auth with the Srp256 proof (92 bytes). */
static const char DOC_CONT_AUTH[] =
    "0000005C00000040343335433637434536363145423338324543343536333636"
    "303646443946373034394535394642433446393538443832323939323343353831"
    "41364634413233"
    "0000000653727032353600000000000000000000";

/* 01-connection.md 13.3: op_crypt ChaCha / Symmetric (32 bytes). */
static const char DOC_CRYPT[] =
    "000000600000000643686143686100000000000953796D6D6574726963000000";

/* 01-connection.md 10.2: op_attach of /db/test.fdb with the flow-B DPB
   (version 1, 109 bytes; 140 bytes in all). */
static const char DOC_ATTACH[] =
    "00000013000000000000000C2F64622F746573742E6664620000006D011C0653"
    "59534442413004555446383F04030000004D005606537270323536550A537270"
    "3235362C53727054403433354336374345363631454233383245433435363336"
    "3630364644394637303439453539464243344639353844383232393932334335"
    "383141364634413233000000";

/* 01-connection.md 5.1-5.3, complete server answers. */
static const char DOC_REJECT[] = "00000004";
static const char DOC_ACCEPT_P10[] = "000000030000000A0000000100000005";
static const char DOC_ACCEPT_P19[] = "00000003FFFF80130000000100000005";
static const char DOC_ACCEPT_DATA_LEGACY[] =
    "0000005EFFFF8013000000010000010500000000000000000000000100000000";
static const char DOC_WIRECRYPT_INCOMPATIBLE[] =
    "0000000900000000000000000000000000000000000000011400"
    "02E800000000";
static const char DOC_LOGIN_ERROR[] =
    "0000000900000000000000000000000000000000000000011400"
    "031200000000";
/* 11.1: the minimal successful response. */
static const char DOC_SUCCESS[] =
    "0000000900000000000000000000000000000000000000010000000000000000";

/* A of the SRP test vector (6.4.8), as sent in CNCT_specific_data. */
static const char A_HEX[] =
    "712C5F8A2DB82464C4D640AE971025AA50AB64906D4F044F822E8AF8A58ADABB"
    "DBE1EFABA00BCCD4CDAA8A955BC43C3600BEAB9EBB9BD41ACC56E37F1A48F172"
    "93F24E876B53EEA6A60712D3F943769056B63202416827B400E162A8C0938D48"
    "2274307585E0BC1D9DD52EFA7330B28E41B7CFCEFD9E8523FD11440EE5DE93A8";
/* The Srp256 proof M of the test vector (13.3, 10.2). */
static const char PROOF_M[] =
    "435C67CE661EB382EC45636606FD9F7049E59FBC4F958D8229923C581A6F4A23";

/* ---- helpers ------------------------------------------------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t len;
} bytes;


/* Hex to bytes (tests/support/hex.c). */
static bytes unhex(const char *h) {
    bytes b;
    b.p = test_unhex_alloc(h, &b.len);
    return b;
}

static void bytes_free(bytes *b) {
    free(b->p);
    b->p = NULL;
    b->len = 0;
}

static void assert_writer_equals(const ffbp_writer *w, const bytes *want) {
    assert_false(w->failed);
    if (w->len != want->len)
        fail_msg("encoded %zu bytes, expected %zu", w->len, want->len);
    for (size_t i = 0; i < want->len; i++)
        if (w->data[i] != want->p[i])
            fail_msg("byte %zu (0x%zX): encoded %02X, expected %02X", i, i,
                     w->data[i], want->p[i]);
}

/* One packet decoded from a guard-page copy. */
#define NARGS 16
typedef struct decoded {
    guard_buf g;
    ffbp_reader r;
    ffbp_packet pkt;
    ffbp_status_arg args[NARGS];
} decoded;

static int decode_n(decoded *d, const bytes *v, size_t len, int protocol,
                    size_t cap) {
    memset(d, 0, sizeof(*d));
    const uint8_t *p = guard_copy(&d->g, v->p, len);
    ffbp_reader_init(&d->r, p, len);
    return ffbp_get_packet(&d->r, protocol, &d->pkt, cap ? d->args : NULL, cap);
}

static int decode(decoded *d, const bytes *v, int protocol) {
    return decode_n(d, v, v->len, protocol, NARGS);
}

static void decoded_free(decoded *d) { guard_release(&d->g); }

/* A view equals a C string. */
static void assert_view(ffbp_bytes b, const char *s) {
    size_t n = strlen(s);
    if (b.len != n || (n && memcmp(b.p, s, n) != 0))
        fail_msg("view \"%.*s\" (%u bytes), expected \"%s\"", (int)b.len,
                 b.p ? (const char *)b.p : "", (unsigned)b.len, s);
}

static void assert_arg(const ffbp_status_arg *a, int32_t type, int32_t num,
                       const char *str) {
    assert_int_equal(a->type, type);
    if (str) {
        assert_int_equal(a->len, strlen(str));
        assert_memory_equal(a->str, str, a->len);
    } else {
        assert_int_equal(a->num, num);
        assert_null(a->str);
    }
}

/* Every proper prefix of one packet: FFBP_INCOMPLETE, cursor untouched. */
static void assert_prefixes_incomplete(const uint8_t *p, size_t len,
                                       int protocol) {
    for (size_t n = 0; n < len; n++) {
        guard_buf g;
        const uint8_t *q = guard_copy(&g, p, n);
        ffbp_reader r;
        ffbp_reader_init(&r, q, n);
        ffbp_packet pkt;
        memset(&pkt, 0, sizeof(pkt));
        ffbp_status_arg args[4];
        int rc = ffbp_get_packet(&r, protocol, &pkt, args, 4);
        if (rc != FFBP_INCOMPLETE || r.pos != 0)
            fail_msg("prefix of %zu of %zu bytes: rc %d, pos %zu", n, len, rc,
                     r.pos);
        guard_release(&g);
    }
}

/* Decode a stream packet by packet; check each packet's prefixes. Returns
   the number of packets; the whole stream must be consumed. */
static size_t assert_stream_truncations(const char *hex, int protocol) {
    bytes v = unhex(hex);
    ffbp_reader r;
    ffbp_reader_init(&r, v.p, v.len);
    size_t n = 0;
    while (ffbp_reader_left(&r)) {
        size_t start = r.pos;
        ffbp_packet pkt;
        ffbp_status_arg args[NARGS];
        int rc = ffbp_get_packet(&r, protocol, &pkt, args, NARGS);
        if (rc != FFBP_OK)
            fail_msg("packet %zu at %zu: rc %d", n, start, rc);
        assert_prefixes_incomplete(v.p + start, r.pos - start, protocol);
        n++;
    }
    bytes_free(&v);
    return n;
}

/* The user identification block, built the way lib/handshake.c does. */
static void put_user_id(ffbp_writer *w, const char *login, const char *plugin,
                        const char *list, const char *data, int32_t crypt,
                        const char *os_user, const char *host) {
    ffbp_pb pb;
    ffbp_pb_begin(&pb, w, FFBP_PB_UNTAGGED);
    ffbp_pb_str(&pb, FFBP_CNCT_LOGIN, login);
    ffbp_pb_str(&pb, FFBP_CNCT_PLUGIN_NAME, plugin);
    ffbp_pb_str(&pb, FFBP_CNCT_PLUGIN_LIST, list);
    size_t len = strlen(data);
    for (size_t off = 0, seq = 0; off < len; seq++) {
        size_t n = len - off > 254 ? 254 : len - off;
        uint8_t part[255];
        part[0] = (uint8_t)seq;
        memcpy(part + 1, data + off, n);
        ffbp_pb_bytes(&pb, FFBP_CNCT_SPECIFIC_DATA, part, n + 1);
        off += n;
    }
    ffbp_pb_int(&pb, FFBP_CNCT_CLIENT_CRYPT, crypt);
    ffbp_pb_str(&pb, FFBP_CNCT_USER, os_user);
    ffbp_pb_str(&pb, FFBP_CNCT_HOST, host);
    ffbp_pb_flag(&pb, FFBP_CNCT_USER_VERIFICATION);
    assert_false(pb.bad);
}

static void put_connect_example(ffbp_writer *w, const char *file, int compress,
                                int min, int max) {
    ffbp_writer uid;
    ffbp_writer_init(&uid, NULL);
    put_user_id(&uid, "SYSDBA", "Srp256", "Srp256,Srp", A_HEX, 1, "alice",
                "client1");
    ffbp_connect c = {file, strlen(file), uid.data, uid.len,
                      min,  max,          compress};
    ffbp_put_connect(w, &c);
    ffbp_writer_free(&uid);
}

/* ---- test allocator ------------------------------------------------------ */

typedef struct test_alloc {
    int calls;
    int fail_at;
    int live;
} test_alloc;

static void *ta_malloc(size_t n, void *data) {
    test_alloc *t = data;
    if (++t->calls == t->fail_at)
        return NULL;
    void *p = malloc(n);
    t->live += p != NULL;
    return p;
}

static void *ta_realloc(void *p, size_t n, void *data) {
    test_alloc *t = data;
    if (++t->calls == t->fail_at)
        return NULL;
    void *q = realloc(p, n);
    t->live += q && !p;
    return q;
}

static void ta_free(void *p, void *data) {
    test_alloc *t = data;
    t->live -= p != NULL;
    free(p);
}

/* ---- encoders ------------------------------------------------------------ */

static void test_connect_matches_worked_example(void **state) {
    (void)state;
    bytes want = unhex(DOC_CONNECT);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    put_connect_example(&w, "/db/test.fdb", 0, 13, 19);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    bytes_free(&want);
}

static void test_connect_matches_recording(void **state) {
    (void)state;
    bytes want = unhex(C_CONNECT);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    put_connect_example(&w, "fixtures", 0, FFBP_PROTOCOL_MIN,
                        FFBP_PROTOCOL_MAX);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    bytes_free(&want);
}

static void test_connect_compress_sets_pflag_on_every_entry(void **state) {
    (void)state;
    bytes want = unhex(DOC_CONNECT);
    /* Entries start at 0x164, 20 bytes each; max type is at +12. */
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(want.p[0x164 + 20 * i + 15], 0x05);
        want.p[0x164 + 20 * i + 14] = 0x01;
    }
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    put_connect_example(&w, "/db/test.fdb", 1, 13, 19);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    bytes_free(&want);
}

static void test_connect_without_versions(void **state) {
    (void)state;
    bytes want = unhex(DOC_CONNECT);
    want.p[0x23] = 0; /* p_cnct_count */
    want.len = 0x164; /* up to the end of the user-id block */
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    put_connect_example(&w, "/db/test.fdb", 0, 19, 13);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    bytes_free(&want);
}

static void test_connect_fails_cleanly_without_memory(void **state) {
    (void)state;
    bytes want = unhex(DOC_CONNECT);
    bytes uid = {want.p + 0x28, 314};
    for (int n = 1;; n++) {
        test_alloc t = {0, n, 0};
        ffb_allocator a = {ta_malloc, ta_realloc, ta_free, &t};
        ffbp_writer w;
        ffbp_writer_init(&w, &a);
        ffbp_connect c = {"/db/test.fdb", 12, uid.p, uid.len, 13, 19, 0};
        ffbp_put_connect(&w, &c);
        int failed = w.failed;
        if (!failed)
            assert_writer_equals(&w, &want);
        ffbp_writer_free(&w);
        assert_int_equal(t.live, 0);
        if (!failed)
            break;
        assert_true(n < 50);
    }
    bytes_free(&want);
}

static void test_cont_auth_matches_worked_example(void **state) {
    (void)state;
    bytes want = unhex(DOC_CONT_AUTH);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_cont_auth(&w, PROOF_M, strlen(PROOF_M), "Srp256", 6, "", 0);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    bytes_free(&want);
}

static void test_cont_auth_matches_recording(void **state) {
    (void)state;
    bytes want = unhex(C_CONT_AUTH);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_cont_auth(&w, "wjwZKqEUYko", 11, "Legacy_Auth", 11, NULL, 0);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    bytes_free(&want);
}

static void test_crypt_matches_worked_example(void **state) {
    (void)state;
    bytes want = unhex(DOC_CRYPT);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_crypt(&w, "ChaCha", 6, "Symmetric", 9);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    bytes_free(&want);
}

static void test_attach_matches_flow_b_example(void **state) {
    (void)state;
    bytes want = unhex(DOC_ATTACH);
    ffbp_writer dpb, w;
    ffbp_writer_init(&dpb, NULL);
    ffbp_pb pb;
    ffbp_pb_begin(&pb, &dpb, FFBP_PB_V1);
    ffbp_pb_str(&pb, FFBP_DPB_USER_NAME, "SYSDBA");
    ffbp_pb_str(&pb, FFBP_DPB_LC_CTYPE, "UTF8");
    ffbp_pb_int(&pb, FFBP_DPB_SQL_DIALECT, 3);
    ffbp_pb_flag(&pb, FFBP_DPB_UTF8_FILENAME);
    ffbp_pb_str(&pb, FFBP_DPB_AUTH_PLUGIN_NAME, "Srp256");
    ffbp_pb_str(&pb, FFBP_DPB_AUTH_PLUGIN_LIST, "Srp256,Srp");
    ffbp_pb_bytes(&pb, FFBP_DPB_SPECIFIC_AUTH_DATA, PROOF_M, strlen(PROOF_M));
    assert_false(pb.bad);
    assert_int_equal(dpb.len, 109);
    ffbp_writer_init(&w, NULL);
    ffbp_put_attach(&w, FFBP_OP_ATTACH, 0, "/db/test.fdb", 12, dpb.data,
                    dpb.len);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    ffbp_writer_free(&dpb);
    bytes_free(&want);
}

/* The DPB of every recording (tests/data/fb5/README.md). */
static void put_recorded_dpb(ffbp_writer *dpb) {
    ffbp_pb pb;
    ffbp_pb_begin(&pb, dpb, FFBP_PB_V1);
    ffbp_pb_str(&pb, FFBP_DPB_USER_NAME, "SYSDBA");
    ffbp_pb_str(&pb, FFBP_DPB_LC_CTYPE, "UTF8");
    ffbp_pb_flag(&pb, FFBP_DPB_UTF8_FILENAME);
    ffbp_pb_int(&pb, FFBP_DPB_PROCESS_ID, 4242);
    ffbp_pb_str(&pb, FFBP_DPB_PROCESS_NAME, "fixture-client");
    assert_false(pb.bad);
}

static void test_attach_matches_recording(void **state) {
    (void)state;
    bytes want = unhex(C_ATTACH);
    ffbp_writer dpb, w;
    ffbp_writer_init(&dpb, NULL);
    put_recorded_dpb(&dpb);
    ffbp_writer_init(&w, NULL);
    ffbp_put_attach(&w, FFBP_OP_ATTACH, 0, "fixtures", 8, dpb.data, dpb.len);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    ffbp_writer_free(&dpb);
    bytes_free(&want);
}

static void test_attach_op_and_object_sign_extended(void **state) {
    (void)state;
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x52, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00,
        0x0B, 's',  'e',  'r',  'v',  'i',  'c',  'e',  '_',  'm',  'g',
        'r',  0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x02, 0x00, 0x00};
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    static const uint8_t spb[] = {0x02, 0x02};
    ffbp_put_attach(&w, FFBP_OP_SERVICE_ATTACH, 0xFFFF, "service_mgr", 11, spb,
                    2);
    assert_int_equal(w.len, sizeof(want));
    assert_memory_equal(w.data, want, sizeof(want));
    ffbp_writer_free(&w);
}

static void test_object_ops(void **state) {
    (void)state;
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x15, 0x00, 0x00, 0x00, 0x00, /* recorded detach */
        0x00, 0x00, 0x00, 0x51, 0xFF, 0xFF, 0xFF, 0xFF, /* drop, 0xFFFF */
        0x00, 0x00, 0x00, 0x53, 0x00, 0x00, 0x00, 0x07, /* svc detach 7 */
        0x00, 0x00, 0x00, 0x06,                         /* disconnect */
        0x00, 0x00, 0x00, 0x5D,                         /* ping */
        0x00, 0x00, 0x00, 0x47,                         /* dummy */
    };
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_object_op(&w, FFBP_OP_DETACH, 0);
    ffbp_put_object_op(&w, FFBP_OP_DROP_DATABASE, 0xFFFF);
    ffbp_put_object_op(&w, FFBP_OP_SERVICE_DETACH, 7);
    ffbp_put_empty_op(&w, FFBP_OP_DISCONNECT);
    ffbp_put_empty_op(&w, FFBP_OP_PING);
    ffbp_put_empty_op(&w, FFBP_OP_DUMMY);
    assert_int_equal(w.len, sizeof(want));
    assert_memory_equal(w.data, want, sizeof(want));
    ffbp_writer_free(&w);
}

static void test_info_matches_recording(void **state) {
    (void)state;
    static const uint8_t items[] = {0x0C, 0x67, 0x89, 0x8C, 0x84,
                                    0x0E, 0x3E, 0x65, 0x01};
    bytes want = unhex(C_INFO);
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_put_info(&w, FFBP_OP_INFO_DATABASE, 0, 0, items, sizeof(items), 1024);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    bytes_free(&want);
}

/* ---- parameter block builder --------------------------------------------- */

static void test_pb_v1_recorded_dpb(void **state) {
    (void)state;
    bytes att = unhex(C_ATTACH);
    ffbp_writer dpb;
    ffbp_writer_init(&dpb, NULL);
    put_recorded_dpb(&dpb);
    /* op, object, "fixtures", then the DPB's length and bytes. */
    assert_int_equal(dpb.len, 39);
    assert_int_equal(att.p[23], 39);
    assert_memory_equal(dpb.data, att.p + 24, 39);
    assert_int_equal(dpb.data[0], FFBP_DPB_VERSION1);
    ffbp_writer_free(&dpb);
    bytes_free(&att);
}

static void test_pb_v2_example(void **state) {
    (void)state;
    /* 10.2: "02 1C 06 00 00 00 SYSDBA 3F 04 00 00 00 03 00 00 00 4D 00 00
       00 00" */
    bytes want = unhex("021C0600000053595344424"
                       "13F04000000030000004D00000000");
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_pb pb;
    ffbp_pb_begin(&pb, &w, FFBP_PB_V2);
    ffbp_pb_str(&pb, FFBP_DPB_USER_NAME, "SYSDBA");
    ffbp_pb_int(&pb, FFBP_DPB_SQL_DIALECT, 3);
    ffbp_pb_flag(&pb, FFBP_DPB_UTF8_FILENAME);
    assert_false(pb.bad);
    assert_writer_equals(&w, &want);
    ffbp_writer_free(&w);
    bytes_free(&want);
}

static void test_pb_untagged_has_no_header(void **state) {
    (void)state;
    static const uint8_t want[] = {0x09, 0x06, 'S',  'Y',  'S',  'D',
                                   'B',  'A',  0x0B, 0x04, 0x01, 0x00,
                                   0x00, 0x00, 0x06, 0x00};
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_pb pb;
    ffbp_pb_begin(&pb, &w, FFBP_PB_UNTAGGED);
    assert_int_equal(w.len, 0);
    ffbp_pb_str(&pb, FFBP_CNCT_LOGIN, "SYSDBA");
    ffbp_pb_int(&pb, FFBP_CNCT_CLIENT_CRYPT, 1);
    ffbp_pb_flag(&pb, FFBP_CNCT_USER_VERIFICATION);
    assert_int_equal(w.len, sizeof(want));
    assert_memory_equal(w.data, want, sizeof(want));
    ffbp_writer_free(&w);
}

static void test_pb_item_over_255_bytes_sets_bad(void **state) {
    (void)state;
    static const int kinds[] = {FFBP_PB_UNTAGGED, FFBP_PB_V1};
    uint8_t big[256];
    memset(big, 'x', sizeof(big));
    for (size_t k = 0; k < 2; k++) {
        ffbp_writer w;
        ffbp_writer_init(&w, NULL);
        ffbp_pb pb;
        ffbp_pb_begin(&pb, &w, kinds[k]);
        size_t hdr = w.len;
        ffbp_pb_bytes(&pb, 7, big, 255); /* fits */
        assert_false(pb.bad);
        assert_int_equal(w.len, hdr + 2 + 255);
        assert_int_equal(w.data[hdr + 1], 0xFF);
        ffbp_pb_bytes(&pb, 7, big, 256); /* does not: nothing written */
        assert_true(pb.bad);
        assert_int_equal(w.len, hdr + 257);
        ffbp_pb_flag(&pb, 6); /* later items still go out; bad stays */
        assert_true(pb.bad);
        assert_int_equal(w.len, hdr + 259);
        ffbp_writer_free(&w);
    }
}

static void test_pb_v2_long_item(void **state) {
    (void)state;
    uint8_t big[300];
    memset(big, 'y', sizeof(big));
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_pb pb;
    ffbp_pb_begin(&pb, &w, FFBP_PB_V2);
    ffbp_pb_bytes(&pb, FFBP_DPB_SPECIFIC_AUTH_DATA, big, sizeof(big));
    assert_false(pb.bad);
    static const uint8_t hdr[] = {0x02, 0x54, 0x2C, 0x01, 0x00, 0x00};
    assert_int_equal(w.len, sizeof(hdr) + sizeof(big));
    assert_memory_equal(w.data, hdr, sizeof(hdr));
    assert_memory_equal(w.data + sizeof(hdr), big, sizeof(big));
    ffbp_writer_free(&w);
}

static void test_pb_int_and_null_string(void **state) {
    (void)state;
    static const uint8_t want[] = {0x01, 0x05, 0x04, 0xFE, 0xFF,
                                   0xFF, 0xFF, 0x3C, 0x00};
    ffbp_writer w;
    ffbp_writer_init(&w, NULL);
    ffbp_pb pb;
    ffbp_pb_begin(&pb, &w, FFBP_PB_V1);
    ffbp_pb_int(&pb, FFBP_DPB_NUM_BUFFERS, -2);
    ffbp_pb_str(&pb, FFBP_DPB_SQL_ROLE_NAME, NULL);
    assert_int_equal(w.len, sizeof(want));
    assert_memory_equal(w.data, want, sizeof(want));
    ffbp_writer_free(&w);
}

/* ---- parameter block iteration ------------------------------------------- */

typedef struct item {
    uint8_t tag;
    const char *data; /* NULL: don't compare */
    size_t len;
} item;

static void assert_pb_items(const uint8_t *v, size_t len, int kind,
                            size_t start, const item *want, size_t n) {
    guard_buf g;
    const uint8_t *p = guard_copy(&g, v, len);
    size_t pos = start;
    for (size_t i = 0; i < n; i++) {
        uint8_t tag;
        const uint8_t *d;
        size_t dl;
        int rc = ffbp_pb_next(p, len, kind, &pos, &tag, &d, &dl);
        if (rc != 1)
            fail_msg("item %zu: rc %d", i, rc);
        assert_int_equal(tag, want[i].tag);
        assert_int_equal(dl, want[i].len);
        if (want[i].data)
            assert_memory_equal(d, want[i].data, dl);
    }
    uint8_t tag;
    const uint8_t *d;
    size_t dl;
    assert_int_equal(ffbp_pb_next(p, len, kind, &pos, &tag, &d, &dl), 0);
    assert_int_equal(pos, len);
    /* The end is sticky. */
    assert_int_equal(ffbp_pb_next(p, len, kind, &pos, &tag, &d, &dl), 0);
    guard_release(&g);
}

static void test_pb_next_v1_dpb(void **state) {
    (void)state;
    bytes att = unhex(C_ATTACH);
    static const item want[] = {
        {0x1C, "SYSDBA", 6},
        {0x30, "UTF8", 4},
        {0x4D, "", 0},
        {0x47, "\x92\x10\x00\x00", 4},
        {0x4A, "fixture-client", 14},
    };
    assert_pb_items(att.p + 24, 39, FFBP_PB_V1, 0, want, 5);
    /* Starting one past the version byte is the same. */
    assert_pb_items(att.p + 24, 39, FFBP_PB_V1, 1, want, 5);
    assert_true(ffbp_le_int((const uint8_t *)want[3].data, 4) == 4242);
    bytes_free(&att);
}

static void test_pb_next_v2(void **state) {
    (void)state;
    bytes v = unhex("021C0600000053595344424"
                    "13F04000000030000004D00000000");
    static const item want[] = {
        {0x1C, "SYSDBA", 6},
        {0x3F, "\x03\x00\x00\x00", 4},
        {0x4D, "", 0},
    };
    assert_pb_items(v.p, v.len, FFBP_PB_V2, 0, want, 3);
    bytes_free(&v);
}

static void test_pb_next_user_id_block(void **state) {
    (void)state;
    bytes c = unhex(DOC_CONNECT);
    static const item want[] = {
        {FFBP_CNCT_LOGIN, "SYSDBA", 6},
        {FFBP_CNCT_PLUGIN_NAME, "Srp256", 6},
        {FFBP_CNCT_PLUGIN_LIST, "Srp256,Srp", 10},
        {FFBP_CNCT_SPECIFIC_DATA, NULL, 255},
        {FFBP_CNCT_SPECIFIC_DATA,
         "\x01"
         "A8",
         3},
        {FFBP_CNCT_CLIENT_CRYPT, "\x01\x00\x00\x00", 4},
        {FFBP_CNCT_USER, "alice", 5},
        {FFBP_CNCT_HOST, "client1", 7},
        {FFBP_CNCT_USER_VERIFICATION, "", 0},
    };
    assert_int_equal(c.p[0x27], 0x3A); /* 314 bytes */
    assert_pb_items(c.p + 0x28, 314, FFBP_PB_UNTAGGED, 0, want, 9);
    bytes_free(&c);
}

static void test_pb_next_key_list(void **state) {
    (void)state;
    bytes v = unhex(V_RESP_KEYS);
    decoded d;
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    ffbp_bytes k = d.pkt.u.response.data;
    assert_int_equal(k.len, 77);
    static const item want[] = {
        {FFBP_TAG_KEY_TYPE, "Symmetric", 9},
        {FFBP_TAG_KEY_PLUGINS, "ChaCha64 ChaCha Arc4", 20},
        {FFBP_TAG_PLUGIN_SPECIFIC, "ChaCha64\0\xFC\x01\x40\x8C\x24\xA8\x5A\x0B",
         17},
        {FFBP_TAG_PLUGIN_SPECIFIC, NULL, 23},
    };
    assert_pb_items(k.p, k.len, FFBP_PB_UNTAGGED, 0, want, 4);
    decoded_free(&d);
    bytes_free(&v);
}

static int pb_next_rc(const char *hex, int kind) {
    bytes v = unhex(hex);
    guard_buf g;
    const uint8_t *p = guard_copy(&g, v.p, v.len);
    size_t pos = 0;
    uint8_t tag;
    const uint8_t *d;
    size_t dl;
    int rc;
    while ((rc = ffbp_pb_next(p, v.len, kind, &pos, &tag, &d, &dl)) == 1)
        assert_true(pos <= v.len);
    guard_release(&g);
    bytes_free(&v);
    return rc;
}

static void test_pb_next_wrong_version_bad(void **state) {
    (void)state;
    assert_int_equal(pb_next_rc("021C00", FFBP_PB_V1), FFBP_EBAD);
    assert_int_equal(pb_next_rc("011C0000000000", FFBP_PB_V2), FFBP_EBAD);
    assert_int_equal(pb_next_rc("00", FFBP_PB_V1), FFBP_EBAD);
}

static void test_pb_next_empty_and_header_only(void **state) {
    (void)state;
    assert_int_equal(pb_next_rc("", FFBP_PB_UNTAGGED), 0);
    assert_int_equal(pb_next_rc("", FFBP_PB_V1), 0);
    assert_int_equal(pb_next_rc("", FFBP_PB_V2), 0);
    assert_int_equal(pb_next_rc("01", FFBP_PB_V1), 0);
    assert_int_equal(pb_next_rc("02", FFBP_PB_V2), 0);
}

static void test_pb_next_overruns_bad(void **state) {
    (void)state;
    /* Data longer than the block. */
    assert_int_equal(pb_next_rc("011C065359", FFBP_PB_V1), FFBP_EBAD);
    assert_int_equal(pb_next_rc("0906535953444241"
                                "0801",
                                FFBP_PB_UNTAGGED),
                     FFBP_EBAD);
    /* Item header cut. */
    assert_int_equal(pb_next_rc("09", FFBP_PB_UNTAGGED), FFBP_EBAD);
    assert_int_equal(pb_next_rc("011C", FFBP_PB_V1), FFBP_EBAD);
    assert_int_equal(pb_next_rc("021C060000", FFBP_PB_V2), FFBP_EBAD);
    /* 4-byte lengths that would wrap. */
    assert_int_equal(pb_next_rc("021CFFFFFFFF78", FFBP_PB_V2), FFBP_EBAD);
    assert_int_equal(pb_next_rc("021CFAFFFFFF78", FFBP_PB_V2), FFBP_EBAD);
}

/* ---- info buffers -------------------------------------------------------- */

static void test_info_next_recorded_db_info(void **state) {
    (void)state;
    bytes v = unhex(V_RESP_INFO);
    decoded d;
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    ffbp_bytes b = d.pkt.u.response.data;
    assert_int_equal(b.len, 139);
    static const uint8_t items[] = {0x0C, 0x67, 0x8C, 0x84,
                                    0x0E, 0x3E, 0x65, 0x89};
    static const size_t lens[] = {29, 70, 0, 4, 4, 1, 4, 2};
    size_t pos = 0;
    uint8_t it;
    const uint8_t *data;
    size_t n;
    for (size_t i = 0; i < 8; i++) {
        assert_int_equal(ffbp_info_next(b.p, b.len, &pos, &it, &data, &n), 1);
        assert_int_equal(it, items[i]);
        assert_int_equal(n, lens[i]);
        if (it == 0x0C)
            assert_memory_equal(data,
                                "\x01\x1B"
                                "LI-V6.3.4.1812",
                                16);
        if (it == FFBP_INFO_PAGE_SIZE)
            assert_true(ffbp_le_int(data, n) == 8192);
        if (it == FFBP_INFO_DB_SQL_DIALECT)
            assert_true(ffbp_le_int(data, n) == 3);
        if (it == 0x89) /* fb_info_protocol_version */
            assert_true(ffbp_le_int(data, n) == 19);
    }
    /* isc_info_end */
    assert_int_equal(ffbp_info_next(b.p, b.len, &pos, &it, &data, &n), 0);
    assert_int_equal(pos, 138);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_info_next_truncated_item(void **state) {
    (void)state;
    static const uint8_t v[] = {0x0E, 0x04, 0x00, 0x00, 0x20,
                                0x00, 0x00, 0x02, 0x3E, 0x01};
    guard_buf g;
    const uint8_t *p = guard_copy(&g, v, sizeof(v));
    size_t pos = 0;
    uint8_t it;
    const uint8_t *data;
    size_t n;
    assert_int_equal(ffbp_info_next(p, sizeof(v), &pos, &it, &data, &n), 1);
    assert_int_equal(it, FFBP_INFO_PAGE_SIZE);
    assert_true(ffbp_le_int(data, n) == 8192);
    assert_int_equal(ffbp_info_next(p, sizeof(v), &pos, &it, &data, &n), 1);
    assert_int_equal(it, FFBP_INFO_TRUNCATED);
    assert_null(data);
    assert_int_equal(n, 0);
    assert_int_equal(pos, sizeof(v)); /* whatever follows is ignored */
    assert_int_equal(ffbp_info_next(p, sizeof(v), &pos, &it, &data, &n), 0);
    guard_release(&g);
}

static int info_rc(const char *hex) {
    bytes v = unhex(hex);
    guard_buf g;
    const uint8_t *p = guard_copy(&g, v.p, v.len);
    size_t pos = 0;
    uint8_t it;
    const uint8_t *data;
    size_t n;
    int rc;
    while ((rc = ffbp_info_next(p, v.len, &pos, &it, &data, &n)) == 1)
        assert_true(pos <= v.len);
    guard_release(&g);
    bytes_free(&v);
    return rc;
}

static void test_info_next_overruns_bad(void **state) {
    (void)state;
    assert_int_equal(info_rc("0E0400002000"), FFBP_EBAD);
    assert_int_equal(info_rc("0E04"), FFBP_EBAD);
    assert_int_equal(info_rc("0E"), FFBP_EBAD);
    assert_int_equal(info_rc("3E010003FFFF00"), FFBP_EBAD);
}

static void test_info_next_end(void **state) {
    (void)state;
    assert_int_equal(info_rc(""), 0);
    assert_int_equal(info_rc("01"), 0);
    assert_int_equal(info_rc("01FFFFFF"), 0);   /* after the end: ignored */
    assert_int_equal(info_rc("3E010003"), 0);   /* no end byte: fine */
    assert_int_equal(info_rc("3E00000100"), 0); /* empty item */
}

/* ---- decoders: the accept family ----------------------------------------- */

static void test_packet_cond_accept_recorded(void **state) {
    (void)state;
    bytes v = unhex(V_COND_ACCEPT);
    decoded d;
    assert_int_equal(decode(&d, &v, 0), FFBP_OK);
    assert_int_equal(d.r.pos, 364);
    assert_int_equal(d.pkt.op, FFBP_OP_COND_ACCEPT);
    const ffbp_accept *a = &d.pkt.u.accept;
    assert_int_equal(a->version, FFBP_PROTOCOL(19));
    assert_int_equal(a->arch, FFBP_ARCH_GENERIC);
    assert_int_equal(a->type, FFBP_PTYPE_LAZY_SEND);
    assert_int_equal(a->data.len, 324);
    /* salt: 2-byte LE length 64, then B: 2-byte LE length 256 */
    assert_int_equal(a->data.p[0], 0x40);
    assert_int_equal(a->data.p[1], 0x00);
    assert_int_equal(a->data.p[66], 0x00);
    assert_int_equal(a->data.p[67], 0x01);
    assert_view(a->plugin, "Srp256");
    assert_int_equal(a->authenticated, 0);
    assert_int_equal(a->keys.len, 0);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_accept_data_recorded(void **state) {
    (void)state;
    bytes v = unhex(V_ACCEPT_DATA);
    decoded d;
    assert_int_equal(decode(&d, &v, 0), FFBP_OK);
    assert_int_equal(d.r.pos, v.len);
    assert_int_equal(d.pkt.op, FFBP_OP_ACCEPT_DATA);
    const ffbp_accept *a = &d.pkt.u.accept;
    assert_int_equal(a->version & FFBP_PROTOCOL_MASK, 19);
    assert_int_equal(a->data.len, 324);
    assert_view(a->plugin, "Srp256");
    assert_int_equal(a->authenticated, 0);
    assert_int_equal(a->keys.len, 0);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_accept_plain(void **state) {
    (void)state;
    bytes v = unhex(DOC_ACCEPT_P19);
    decoded d;
    assert_int_equal(decode(&d, &v, 0), FFBP_OK);
    assert_int_equal(d.r.pos, 16);
    assert_int_equal(d.pkt.op, FFBP_OP_ACCEPT);
    assert_int_equal(d.pkt.u.accept.version, 0x8013);
    assert_int_equal(d.pkt.u.accept.type, 5);
    assert_null(d.pkt.u.accept.data.p);
    assert_int_equal(d.pkt.u.accept.data.len, 0);
    assert_null(d.pkt.u.accept.plugin.p);
    assert_null(d.pkt.u.accept.keys.p);
    assert_int_equal(d.pkt.u.accept.authenticated, 0);
    decoded_free(&d);
    bytes_free(&v);

    v = unhex(DOC_ACCEPT_P10);
    assert_int_equal(decode(&d, &v, 0), FFBP_OK);
    assert_int_equal(d.pkt.u.accept.version, 10);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_accept_data_legacy_authenticated(void **state) {
    (void)state;
    bytes v = unhex(DOC_ACCEPT_DATA_LEGACY);
    decoded d;
    assert_int_equal(decode(&d, &v, 0), FFBP_OK);
    assert_int_equal(d.r.pos, 32);
    const ffbp_accept *a = &d.pkt.u.accept;
    assert_int_equal(d.pkt.op, FFBP_OP_ACCEPT_DATA);
    assert_int_equal(a->type, FFBP_PFLAG_COMPRESS | FFBP_PTYPE_LAZY_SEND);
    assert_int_equal(a->authenticated, 1);
    assert_int_equal(a->data.len, 0);
    assert_int_equal(a->plugin.len, 0);
    assert_int_equal(a->keys.len, 0);
    decoded_free(&d);
    bytes_free(&v);
}

/* ---- decoders: op_response ----------------------------------------------- */

static void test_packet_response_key_list(void **state) {
    (void)state;
    bytes v = unhex(V_RESP_KEYS);
    decoded d;
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    assert_int_equal(d.r.pos, 112);
    assert_int_equal(d.pkt.op, FFBP_OP_RESPONSE);
    const ffbp_response *r = &d.pkt.u.response;
    assert_int_equal(r->object, 0);
    assert_true(r->blob_id == 0);
    assert_int_equal(r->data.len, 77);
    assert_memory_equal(r->data.p, "\x00\x09Symmetric", 11);
    /* Success: isc_arg_gds 0, isc_arg_end. */
    assert_int_equal(r->status.total, 1);
    assert_int_equal(r->status.n, 1);
    assert_ptr_equal(r->status.args, d.args);
    assert_arg(&r->status.args[0], FFBP_ARG_GDS, 0, NULL);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_response_io_error_vector(void **state) {
    (void)state;
    bytes v = unhex(DOC_IO_ERROR);
    decoded d;
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    assert_int_equal(d.r.pos, v.len);
    const ffbp_status *st = &d.pkt.u.response.status;
    assert_int_equal(st->total, 5);
    assert_int_equal(st->n, 5);
    assert_arg(&st->args[0], FFBP_ARG_GDS, 335544344, NULL);
    assert_arg(&st->args[1], FFBP_ARG_STRING, 0, "open");
    assert_arg(&st->args[2], FFBP_ARG_STRING, 0, "/srv/db/nope.fdb");
    assert_arg(&st->args[3], FFBP_ARG_GDS, 335544734, NULL);
    assert_arg(&st->args[4], FFBP_ARG_INTERPRETED, 0,
               "No such file or directory");
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_response_status_array_smaller(void **state) {
    (void)state;
    bytes v = unhex(DOC_IO_ERROR);
    decoded d;
    assert_int_equal(decode_n(&d, &v, v.len, 19, 2), FFBP_OK);
    const ffbp_status *st = &d.pkt.u.response.status;
    assert_int_equal(st->total, 5);
    assert_int_equal(st->n, 2);
    assert_arg(&st->args[1], FFBP_ARG_STRING, 0, "open");
    decoded_free(&d);

    /* No array at all: counted, not stored. */
    assert_int_equal(decode_n(&d, &v, v.len, 19, 0), FFBP_OK);
    assert_int_equal(d.pkt.u.response.status.total, 5);
    assert_int_equal(d.pkt.u.response.status.n, 0);
    assert_int_equal(d.pkt.u.response.status.cap, 0);
    assert_int_equal(d.r.pos, v.len);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_response_connect_errors(void **state) {
    (void)state;
    static const struct {
        const char *hex;
        int32_t gds;
    } cases[] = {
        {DOC_WIRECRYPT_INCOMPATIBLE, 335545064},
        {DOC_LOGIN_ERROR, 335545106},
        {V_LOGIN, 335544472},
    };
    for (size_t i = 0; i < 3; i++) {
        bytes v = unhex(cases[i].hex);
        decoded d;
        assert_int_equal(decode(&d, &v, 0), FFBP_OK);
        assert_int_equal(d.r.pos, 32);
        assert_int_equal(d.pkt.u.response.status.total, 1);
        assert_arg(&d.pkt.u.response.status.args[0], FFBP_ARG_GDS, cases[i].gds,
                   NULL);
        decoded_free(&d);
        bytes_free(&v);
    }
}

static void test_packet_responses_recorded_errors(void **state) {
    (void)state;
    /* Syntax error: isc_dsql_error, isc_sqlerr -104, token unknown (1, 1),
       isc_random "SELEC". */
    bytes v = unhex(V_PREPARE_ERR);
    decoded d;
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    assert_int_equal(d.pkt.u.response.object, 1);
    assert_int_equal(d.pkt.u.response.status.total, 1);
    size_t first = d.r.pos;
    ffbp_packet p2;
    ffbp_status_arg args[NARGS];
    assert_int_equal(ffbp_get_packet(&d.r, 19, &p2, args, NARGS), FFBP_OK);
    assert_int_equal(d.r.pos, v.len);
    assert_true(first == 32);
    const ffbp_status *st = &p2.u.response.status;
    assert_int_equal(st->total, 8);
    assert_arg(&args[0], FFBP_ARG_GDS, 335544569, NULL);
    assert_arg(&args[1], FFBP_ARG_GDS, 335544436, NULL);
    assert_arg(&args[2], FFBP_ARG_NUMBER, -104, NULL);
    assert_arg(&args[3], FFBP_ARG_GDS, 335544634, NULL);
    assert_arg(&args[4], FFBP_ARG_NUMBER, 1, NULL);
    assert_arg(&args[5], FFBP_ARG_NUMBER, 1, NULL);
    assert_arg(&args[6], FFBP_ARG_GDS, 335544382, NULL);
    assert_arg(&args[7], FFBP_ARG_STRING, 0, "SELEC");
    decoded_free(&d);
    bytes_free(&v);

    /* Unique key violation, answer object = the transaction. */
    v = unhex(V_UNIQUE);
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    assert_int_equal(d.pkt.u.response.object, 2);
    assert_int_equal(ffbp_get_packet(&d.r, 19, &p2, args, NARGS), FFBP_OK);
    assert_int_equal(p2.u.response.object, 2);
    st = &p2.u.response.status;
    assert_int_equal(st->total, 5);
    assert_arg(&args[0], FFBP_ARG_GDS, 335544665, NULL);
    assert_arg(&args[1], FFBP_ARG_STRING, 0, "INTEG_8");
    assert_arg(&args[2], FFBP_ARG_STRING, 0, "TERR");
    assert_arg(&args[3], FFBP_ARG_GDS, 335545072, NULL);
    assert_arg(&args[4], FFBP_ARG_STRING, 0, "(\"ID\" = 1)");
    assert_int_equal(ffbp_get_packet(&d.r, 19, &p2, args, NARGS), FFBP_OK);
    assert_int_equal(p2.u.response.status.total, 1);
    assert_int_equal(d.r.pos, v.len);
    assert_int_equal(ffbp_get_packet(&d.r, 19, &p2, args, NARGS),
                     FFBP_INCOMPLETE);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_response_sqlstate_warning_and_handle(void **state) {
    (void)state;
    /* Object FFFF (sent sign-extended), a blob id, isc_arg_sql_state and a
       warning group, as op_response_piggyback. */
    bytes v = unhex("00000048"
                    "FFFFFFFF"
                    "00000081"
                    "80000002" /* */
                    "00000003"
                    "61626300" /* data */
                    "00000001"
                    "14000159" /* gds */
                    "00000013"
                    "00000005"
                    "32333030"
                    "30000000" /* 23000 */
                    "00000012"
                    "1400017E" /* warning */
                    "00000004"
                    "FFFFFFFF" /* number */
                    "00000007"
                    "00000002" /* unix */
                    "00000011"
                    "00000005" /* win32 */
                    "00000000");
    decoded d;
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    assert_int_equal(d.r.pos, v.len);
    assert_int_equal(d.pkt.op, FFBP_OP_RESPONSE_PIGGYBACK);
    const ffbp_response *r = &d.pkt.u.response;
    assert_int_equal(r->object, 0xFFFF);
    assert_true(r->blob_id == UINT64_C(0x0000008180000002));
    assert_view(r->data, "abc");
    assert_int_equal(r->status.total, 6);
    assert_arg(&d.args[0], FFBP_ARG_GDS, 335544665, NULL);
    assert_arg(&d.args[1], FFBP_ARG_SQL_STATE, 0, "23000");
    assert_arg(&d.args[2], FFBP_ARG_WARNING, 335544702, NULL);
    assert_arg(&d.args[3], FFBP_ARG_NUMBER, -1, NULL);
    assert_arg(&d.args[4], FFBP_ARG_UNIX, 2, NULL);
    assert_arg(&d.args[5], FFBP_ARG_WIN32, 5, NULL);
    decoded_free(&d);
    bytes_free(&v);
}

/* ---- decoders: the other connection-layer packets ------------------------ */

static void test_packet_cont_auth_recorded(void **state) {
    (void)state;
    bytes v = unhex(V_CONT_AUTH);
    decoded d;
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    assert_int_equal(d.r.pos, 348);
    assert_int_equal(d.pkt.op, FFBP_OP_CONT_AUTH);
    const ffbp_cont_auth *c = &d.pkt.u.cont_auth;
    assert_int_equal(c->data.len, 324);
    assert_view(c->name, "Srp");
    assert_view(c->list, "");
    assert_view(c->keys, "");
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_crypt_key_callback_by_protocol(void **state) {
    (void)state;
    bytes v = unhex("00000061000000046B65793F00000020");
    static const int protos[] = {0, 14, 15, 19};
    for (size_t i = 0; i < 4; i++) {
        decoded d;
        assert_int_equal(decode(&d, &v, protos[i]), FFBP_OK);
        assert_int_equal(d.r.pos, 16);
        assert_int_equal(d.pkt.op, FFBP_OP_CRYPT_KEY_CALLBACK);
        assert_view(d.pkt.u.crypt_cb.data, "key?");
        assert_int_equal(d.pkt.u.crypt_cb.reply_size, 32);
        decoded_free(&d);
    }
    /* Protocol 13 after the accept: no p_cc_reply. */
    decoded d;
    assert_int_equal(decode(&d, &v, 13), FFBP_OK);
    assert_int_equal(d.r.pos, 12);
    assert_int_equal(d.pkt.u.crypt_cb.reply_size, -1);
    decoded_free(&d);
    assert_int_equal(decode_n(&d, &v, 12, 13, NARGS), FFBP_OK);
    decoded_free(&d);
    assert_int_equal(decode_n(&d, &v, 12, 19, NARGS), FFBP_INCOMPLETE);
    assert_int_equal(d.r.pos, 0);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_empty_bodies(void **state) {
    (void)state;
    static const struct {
        const char *hex;
        int32_t op;
    } cases[] = {
        {DOC_REJECT, FFBP_OP_REJECT},
        {"00000047", FFBP_OP_DUMMY},
        {"00000006", FFBP_OP_DISCONNECT},
    };
    for (size_t i = 0; i < 3; i++) {
        bytes v = unhex(cases[i].hex);
        decoded d;
        assert_int_equal(decode(&d, &v, 0), FFBP_OK);
        assert_int_equal(d.r.pos, 4);
        assert_int_equal(d.pkt.op, cases[i].op);
        decoded_free(&d);
        bytes_free(&v);
    }
}

static void test_packet_trusted_auth(void **state) {
    (void)state;
    bytes v = unhex("0000005A0000000301020300");
    decoded d;
    assert_int_equal(decode(&d, &v, 0), FFBP_OK);
    assert_int_equal(d.r.pos, 12);
    assert_int_equal(d.pkt.u.trusted.len, 3);
    assert_memory_equal(d.pkt.u.trusted.p, "\x01\x02\x03", 3);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_dummy_between_responses(void **state) {
    (void)state;
    bytes v = unhex("00000047"
                    "0000000900000000000000000000000000000000"
                    "000000010000000000000000"
                    "00000047");
    ffbp_reader r;
    ffbp_reader_init(&r, v.p, v.len);
    static const int32_t ops[] = {FFBP_OP_DUMMY, FFBP_OP_RESPONSE,
                                  FFBP_OP_DUMMY};
    for (size_t i = 0; i < 3; i++) {
        ffbp_packet pkt;
        assert_int_equal(ffbp_get_packet(&r, 19, &pkt, NULL, 0), FFBP_OK);
        assert_int_equal(pkt.op, ops[i]);
    }
    assert_int_equal(r.pos, v.len);
    bytes_free(&v);
}

/* ---- truncation ---------------------------------------------------------- */

static void test_packet_every_truncation_incomplete(void **state) {
    (void)state;
    static const struct {
        const char *hex;
        int protocol;
        size_t packets;
    } cases[] = {
        {V_COND_ACCEPT, 0, 1},
        {V_ACCEPT_DATA, 0, 1},
        {V_RESP_KEYS, 19, 1},
        {V_RESP_INFO, 19, 1},
        {V_CONT_AUTH, 19, 1},
        {V_PREPARE_ERR, 19, 2},
        {V_UNIQUE, 19, 3},
        {V_LOGIN, 0, 1},
        {DOC_REJECT, 0, 1},
        {DOC_ACCEPT_P10, 0, 1},
        {DOC_ACCEPT_P19, 0, 1},
        {DOC_ACCEPT_DATA_LEGACY, 0, 1},
        {DOC_WIRECRYPT_INCOMPATIBLE, 0, 1},
        {DOC_LOGIN_ERROR, 0, 1},
        {DOC_SUCCESS, 19, 1},
        {DOC_IO_ERROR, 19, 1},
        {"00000061000000046B65793F00000020", 0, 1},
        {"00000061000000046B65793F", 13, 1},
        {"0000005A0000000301020300", 0, 1},
        {"00000047", 19, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(
            assert_stream_truncations(cases[i].hex, cases[i].protocol),
            cases[i].packets);
}

static void test_packet_incomplete_keeps_cursor_mid_buffer(void **state) {
    (void)state;
    /* A complete response, then half of the next one: the second decode
       leaves the cursor after the first packet. */
    bytes v = unhex(V_UNIQUE);
    for (size_t cut = 33; cut < 120; cut++) {
        guard_buf g;
        const uint8_t *p = guard_copy(&g, v.p, cut);
        ffbp_reader r;
        ffbp_reader_init(&r, p, cut);
        ffbp_packet pkt;
        ffbp_status_arg args[4];
        assert_int_equal(ffbp_get_packet(&r, 19, &pkt, args, 4), FFBP_OK);
        assert_int_equal(r.pos, 32);
        assert_int_equal(ffbp_get_packet(&r, 19, &pkt, args, 4),
                         FFBP_INCOMPLETE);
        assert_int_equal(r.pos, 32);
        guard_release(&g);
    }
    bytes_free(&v);
}

/* ---- malformed ----------------------------------------------------------- */

static void assert_bad(const char *hex, int protocol, int32_t op) {
    bytes v = unhex(hex);
    decoded d;
    int rc = decode(&d, &v, protocol);
    if (rc != FFBP_EBAD)
        fail_msg("%s: rc %d, expected FFBP_EBAD", hex, rc);
    assert_int_equal(d.r.pos, 0);
    assert_int_equal(d.pkt.op, op);
    decoded_free(&d);
    bytes_free(&v);
}

static void test_packet_bad_status_arg_types(void **state) {
    (void)state;
    /* isc_arg_cstring (3) never travels; neither do vms (6), domain (8),
       netware (16), unknown or negative codes. */
    static const char *const types[] = {"00000003", "00000006", "00000008",
                                        "00000010", "00000063", "FFFFFFFF"};
    for (size_t i = 0; i < 6; i++) {
        char hex[200];
        snprintf(hex, sizeof(hex),
                 "00000009000000000000000000000000000000000000000114000098"
                 "%s0000000161000000000000000000000000",
                 types[i]);
        assert_bad(hex, 19, FFBP_OP_RESPONSE);
    }
}

static void test_packet_huge_lengths_bad(void **state) {
    (void)state;
    /* op_response data over 64 MiB or 2 GiB: bad at once, without the
       bytes being there. */
    assert_bad("000000090000000000000000000000007FFFFFFF", 19,
               FFBP_OP_RESPONSE);
    assert_bad("0000000900000000000000000000000004000001", 19,
               FFBP_OP_RESPONSE);
    assert_bad("00000009000000000000000000000000FFFE0000", 19,
               FFBP_OP_RESPONSE);
    /* A status string over xdr_string's 65535 bytes. */
    assert_bad("000000090000000000000000000000000000000000000002"
               "00010000",
               19, FFBP_OP_RESPONSE);
    /* Auth data, plugin name and keys over 1 MiB. */
    assert_bad("00000062FFFF80130000000100000005"
               "00100001",
               0, FFBP_OP_COND_ACCEPT);
    assert_bad("0000005EFFFF80130000000100000005"
               "00000000"
               "00100001",
               0, FFBP_OP_ACCEPT_DATA);
    assert_bad("00000062FFFF80130000000100000005"
               "00000000"
               "00000000"
               "00000000"
               "7FFFFFFF",
               0, FFBP_OP_COND_ACCEPT);
    assert_bad("0000005C"
               "00000000"
               "00000000"
               "00000000"
               "80000000",
               19, FFBP_OP_CONT_AUTH);
    assert_bad("00000061"
               "00100001",
               0, FFBP_OP_CRYPT_KEY_CALLBACK);
    assert_bad("0000005A"
               "7FFFFFFF",
               0, FFBP_OP_TRUSTED_AUTH);
}

static void test_packet_unknown_op_bad(void **state) {
    (void)state;
    /* Statement-layer and unknown ops are not this decoder's. */
    assert_bad("00000042000000000000000000000000", 19, FFBP_OP_FETCH_RESPONSE);
    assert_bad("00000001", 0, FFBP_OP_CONNECT);
    assert_bad("000003E8", 0, 1000);
    assert_bad("FFFFFFFF", 0, -1);
    assert_bad("00000000", 0, FFBP_OP_VOID);
}

/* ---- ffbp_get_status on its own ------------------------------------------ */

static void test_status_alone_all_or_nothing(void **state) {
    (void)state;
    bytes v = unhex(DOC_IO_ERROR);
    const uint8_t *sv = v.p + 20; /* after op, object, blob id, data */
    size_t len = v.len - 20;
    for (size_t n = 0; n <= len; n++) {
        guard_buf g;
        const uint8_t *p = guard_copy(&g, sv, n);
        ffbp_reader r;
        ffbp_reader_init(&r, p, n);
        ffbp_status_arg args[8];
        ffbp_status st = {args, 8, 0, 0};
        int rc = ffbp_get_status(&r, &st);
        if (n < len) {
            assert_int_equal(rc, FFBP_INCOMPLETE);
            assert_int_equal(r.pos, 0);
        } else {
            assert_int_equal(rc, FFBP_OK);
            assert_int_equal(r.pos, len);
            assert_int_equal(st.total, 5);
            assert_int_equal(st.n, 5);
        }
        guard_release(&g);
    }
    bytes_free(&v);
}

static void test_status_alone_bad_type_leaves_cursor(void **state) {
    (void)state;
    bytes v = unhex("000000011400009800000003000000016100000000000000");
    ffbp_reader r;
    ffbp_reader_init(&r, v.p, v.len);
    ffbp_status st = {NULL, 0, 0, 0};
    assert_int_equal(ffbp_get_status(&r, &st), FFBP_EBAD);
    assert_int_equal(r.pos, 0);
    bytes_free(&v);
}

/* ---- describe ------------------------------------------------------------ */

static void test_describe_packets(void **state) {
    (void)state;
    char line[256];
    bytes v = unhex(V_COND_ACCEPT);
    decoded d;
    assert_int_equal(decode(&d, &v, 0), FFBP_OK);
    ffbp_describe(line, sizeof(line), &d.pkt);
    assert_string_equal(line, "op_cond_accept version=19 arch=1 type=0x5 "
                              "data=324 plugin=\"Srp256\" authenticated=0 "
                              "keys=0");
    decoded_free(&d);
    bytes_free(&v);

    v = unhex(DOC_IO_ERROR);
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    ffbp_describe(line, sizeof(line), &d.pkt);
    assert_string_equal(line, "op_response object=0 "
                              "blob_id=0x0000000000000000 data=0 status=5 "
                              "gds=335544344");
    /* A small buffer is cut, still terminated. */
    char tiny[12];
    int n = ffbp_describe(tiny, sizeof(tiny), &d.pkt);
    assert_true(n > (int)sizeof(tiny));
    assert_string_equal(tiny, "op_response");
    decoded_free(&d);
    bytes_free(&v);

    v = unhex(V_CONT_AUTH);
    assert_int_equal(decode(&d, &v, 19), FFBP_OK);
    ffbp_describe(line, sizeof(line), &d.pkt);
    assert_string_equal(line,
                        "op_cont_auth data=324 name=\"Srp\" list=\"\" keys=0");
    decoded_free(&d);
    bytes_free(&v);
}

static void test_op_names(void **state) {
    (void)state;
    assert_string_equal(ffbp_op_name(FFBP_OP_RESPONSE), "op_response");
    assert_string_equal(ffbp_op_name(FFBP_OP_COND_ACCEPT), "op_cond_accept");
    assert_string_equal(ffbp_op_name(FFBP_OP_INLINE_BLOB), "op_inline_blob");
    assert_string_equal(ffbp_op_name(7), "op_unknown");
    assert_string_equal(ffbp_op_name(FFBP_OP_MAX + 1), "op_unknown");
    assert_string_equal(ffbp_op_name(-1), "op_unknown");
    assert_string_equal(ffbp_op_name(INT32_MIN), "op_unknown");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_matches_worked_example),
        cmocka_unit_test(test_connect_matches_recording),
        cmocka_unit_test(test_connect_compress_sets_pflag_on_every_entry),
        cmocka_unit_test(test_connect_without_versions),
        cmocka_unit_test(test_connect_fails_cleanly_without_memory),
        cmocka_unit_test(test_cont_auth_matches_worked_example),
        cmocka_unit_test(test_cont_auth_matches_recording),
        cmocka_unit_test(test_crypt_matches_worked_example),
        cmocka_unit_test(test_attach_matches_flow_b_example),
        cmocka_unit_test(test_attach_matches_recording),
        cmocka_unit_test(test_attach_op_and_object_sign_extended),
        cmocka_unit_test(test_object_ops),
        cmocka_unit_test(test_info_matches_recording),
        cmocka_unit_test(test_pb_v1_recorded_dpb),
        cmocka_unit_test(test_pb_v2_example),
        cmocka_unit_test(test_pb_untagged_has_no_header),
        cmocka_unit_test(test_pb_item_over_255_bytes_sets_bad),
        cmocka_unit_test(test_pb_v2_long_item),
        cmocka_unit_test(test_pb_int_and_null_string),
        cmocka_unit_test(test_pb_next_v1_dpb),
        cmocka_unit_test(test_pb_next_v2),
        cmocka_unit_test(test_pb_next_user_id_block),
        cmocka_unit_test(test_pb_next_key_list),
        cmocka_unit_test(test_pb_next_wrong_version_bad),
        cmocka_unit_test(test_pb_next_empty_and_header_only),
        cmocka_unit_test(test_pb_next_overruns_bad),
        cmocka_unit_test(test_info_next_recorded_db_info),
        cmocka_unit_test(test_info_next_truncated_item),
        cmocka_unit_test(test_info_next_overruns_bad),
        cmocka_unit_test(test_info_next_end),
        cmocka_unit_test(test_packet_cond_accept_recorded),
        cmocka_unit_test(test_packet_accept_data_recorded),
        cmocka_unit_test(test_packet_accept_plain),
        cmocka_unit_test(test_packet_accept_data_legacy_authenticated),
        cmocka_unit_test(test_packet_response_key_list),
        cmocka_unit_test(test_packet_response_io_error_vector),
        cmocka_unit_test(test_packet_response_status_array_smaller),
        cmocka_unit_test(test_packet_response_connect_errors),
        cmocka_unit_test(test_packet_responses_recorded_errors),
        cmocka_unit_test(test_packet_response_sqlstate_warning_and_handle),
        cmocka_unit_test(test_packet_cont_auth_recorded),
        cmocka_unit_test(test_packet_crypt_key_callback_by_protocol),
        cmocka_unit_test(test_packet_empty_bodies),
        cmocka_unit_test(test_packet_trusted_auth),
        cmocka_unit_test(test_packet_dummy_between_responses),
        cmocka_unit_test(test_packet_every_truncation_incomplete),
        cmocka_unit_test(test_packet_incomplete_keeps_cursor_mid_buffer),
        cmocka_unit_test(test_packet_bad_status_arg_types),
        cmocka_unit_test(test_packet_huge_lengths_bad),
        cmocka_unit_test(test_packet_unknown_op_bad),
        cmocka_unit_test(test_status_alone_all_or_nothing),
        cmocka_unit_test(test_status_alone_bad_type_leaves_cursor),
        cmocka_unit_test(test_describe_packets),
        cmocka_unit_test(test_op_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
