/*
 * Services API packets and buffers (reference 03, C.6): op_service_start
 * and op_service_info requests, the "SpbStart" parameter block of an
 * action, and the op_service_info answer. Pure: no allocation, no state.
 */
#ifndef FFB_PROTO_SERVICE_H
#define FFB_PROTO_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/xdr.h"

/* Service actions (isc_action_svc_*, consts_pub.h). */
enum {
    FFBP_SVC_BACKUP = 1,
    FFBP_SVC_RESTORE = 2,
    FFBP_SVC_REPAIR = 3,
    FFBP_SVC_PROPERTIES = 8,
    FFBP_SVC_DB_STATS = 11,
    FFBP_SVC_GET_FB_LOG = 12,
    FFBP_SVC_TRACE_START = 22,
    FFBP_SVC_TRACE_STOP = 23,
    FFBP_SVC_VALIDATE = 30
};

/* SPB tags (isc_spb_*). Attach block: */
enum {
    FFBP_SPB_VERSION = 2,      /* isc_spb_version: "02 02" */
    FFBP_SPB_VERSION3 = 3,     /* wide form: tag, uint32 LE length */
    FFBP_SPB_USER_NAME = 28,
    FFBP_SPB_PASSWORD_ENC = 30,
    FFBP_SPB_SQL_ROLE_NAME = 60,
    FFBP_SPB_PROCESS_ID = 110,
    FFBP_SPB_SPECIFIC_AUTH_DATA = 111,
    FFBP_SPB_PROCESS_NAME = 112,
    FFBP_SPB_AUTH_PLUGIN_NAME = 116,
    FFBP_SPB_AUTH_PLUGIN_LIST = 117,
    FFBP_SPB_UTF8_FILENAME = 118
};
/* Start block arguments (meaning depends on the action). */
enum {
    FFBP_SPB_DBNAME = 106,
    FFBP_SPB_VERBOSE = 107,
    FFBP_SPB_OPTIONS = 108,
    FFBP_SPB_BKP_FILE = 5,
    FFBP_SPB_PRP_PAGE_BUFFERS = 5,
    FFBP_SPB_PRP_SWEEP_INTERVAL = 6,
    FFBP_SPB_PRP_SHUTDOWN_DB = 7,
    FFBP_SPB_PRP_WRITE_MODE = 12,   /* byte: 37 async, 38 sync */
    FFBP_SPB_PRP_ACCESS_MODE = 13,  /* byte: 39 read-only, 40 read-write */
    FFBP_SPB_PRP_FORCE_SHUTDOWN = 41,
    FFBP_SPB_PRP_SHUTDOWN_MODE = 44, /* byte: 1 multi, 2 single, 3 full */
    FFBP_SPB_PRP_ONLINE_MODE = 45,   /* byte: 0 normal, 1 multi, 2 single */
    FFBP_SPB_TRC_ID = 1,
    FFBP_SPB_TRC_NAME = 2,
    FFBP_SPB_TRC_CFG = 3,
    FFBP_SPB_STS_TABLE = 64
};
/* Option flags. */
enum {
    FFBP_SPB_PRP_DB_ONLINE = 0x200,
    FFBP_SPB_RPR_VALIDATE_DB = 0x01,
    FFBP_SPB_RPR_SWEEP_DB = 0x02,
    FFBP_SPB_RPR_FULL = 0x80,
    FFBP_SPB_RES_REPLACE = 0x1000,
    FFBP_SPB_RES_CREATE = 0x2000
};

/* op_service_info items (isc_info_svc_*, inf_pub.h). */
enum {
    FFBP_SVC_INFO_END = 1,
    FFBP_SVC_INFO_TRUNCATED = 2,
    FFBP_SVC_INFO_DATA_NOT_READY = 4,
    FFBP_SVC_INFO_SVR_DB_INFO = 50,
    FFBP_SVC_INFO_VERSION = 54,
    FFBP_SVC_INFO_SERVER_VERSION = 55,
    FFBP_SVC_INFO_IMPLEMENTATION = 56,
    FFBP_SVC_INFO_CAPABILITIES = 57,
    FFBP_SVC_INFO_USER_DBPATH = 58,
    FFBP_SVC_INFO_GET_ENV = 59,
    FFBP_SVC_INFO_GET_ENV_LOCK = 60,
    FFBP_SVC_INFO_GET_ENV_MSG = 61,
    FFBP_SVC_INFO_LINE = 62,
    FFBP_SVC_INFO_TO_EOF = 63,
    FFBP_SVC_INFO_TIMEOUT = 64,
    FFBP_SVC_INFO_RUNNING = 67,
    FFBP_SVC_INFO_STDIN = 78,
    FFBP_SVC_INFO_FLAG_END = 127
};

/* op_cancel kinds (fb_cancel_*). */
enum { FFBP_CANCEL_RAISE = 3 };

/* op_service_start: short object, short incarnation, cstring SPB-start
   (no buffer length field; reference 03, C.6.1). */
void ffbp_put_service_start(ffbp_writer *w, const uint8_t *spb, size_t len);

/* op_service_info: short object, short incarnation, cstring send items,
   cstring receive items, int32 buffer length (<= 65535: the service layer
   takes it modulo 65536). */
void ffbp_put_service_info(ffbp_writer *w, const uint8_t *send,
                           size_t send_len, const uint8_t *recv,
                           size_t recv_len, uint32_t buffer_len);

/* op_cancel: int32 kind. Never answered. */
void ffbp_put_cancel(ffbp_writer *w, int32_t kind);

/*
 * The "SpbStart" block: action byte, then arguments whose form depends on
 * the tag - string (uint16 LE length + bytes), int (4 bytes LE), byte,
 * flag (no value). `bad` is set when a string is longer than 65535.
 */
typedef struct ffbp_spb {
    ffbp_writer *w;
    int bad;
} ffbp_spb;
void ffbp_spb_begin(ffbp_spb *s, ffbp_writer *w, uint8_t action);
void ffbp_spb_str(ffbp_spb *s, uint8_t tag, const char *str);
void ffbp_spb_bytes(ffbp_spb *s, uint8_t tag, const void *p, size_t len);
void ffbp_spb_int(ffbp_spb *s, uint8_t tag, uint32_t v);
void ffbp_spb_byte(ffbp_spb *s, uint8_t tag, uint8_t v);
void ffbp_spb_flag(ffbp_spb *s, uint8_t tag);

/* The send list of a query: isc_info_svc_timeout (seconds; 0 = none) and
   stdin data (`data` may be NULL with `len` 0 and `with_data` set: the
   empty item that ends the input), then isc_info_end. */
void ffbp_put_svc_send_items(ffbp_writer *w, uint32_t timeout_s,
                             int with_data, const void *data, size_t len);

/* The database list of isc_info_svc_svr_db_info: at most this many names
   are reported (the count is still exact). */
#define FFBP_SVC_MAX_DBNAMES 8

/*
 * A decoded op_service_info answer (reference 03, C.6.4). Fields of items
 * that were not in the answer keep their "absent" values: numbers -1,
 * views {NULL, 0}. Views point into the buffer.
 */
typedef struct ffbp_svc_answer {
    int64_t version, capabilities, running, stdin_wanted;
    ffbp_bytes server_version, implementation, user_dbpath, env, env_lock,
        env_msg;
    /* isc_info_svc_svr_db_info. */
    int64_t num_att, num_db;
    size_t ndbnames;                 /* names in the answer */
    ffbp_bytes dbnames[FFBP_SVC_MAX_DBNAMES];
    /* Output: isc_info_svc_line or isc_info_svc_to_eof. */
    int has_output;
    uint8_t output_item;
    ffbp_bytes output;
    int timeout;     /* isc_info_svc_timeout marker */
    int not_ready;   /* isc_info_data_not_ready */
    int truncated;   /* isc_info_truncated */
    int ended;       /* isc_info_end seen */
} ffbp_svc_answer;

/*
 * Decode the answer `p`/`len` to a query of the current SPB format, up to
 * isc_info_end or isc_info_truncated (bytes after them are ignored).
 * Returns 0, or FFBP_EBAD for an unknown item, a length past the end, a
 * malformed nested block, a number item of a wrong length or an item that
 * appears twice. Nothing is written to `out` on failure... except that its
 * contents are unspecified: the caller discards it.
 */
int ffbp_get_svc_answer(const uint8_t *p, size_t len, ffbp_svc_answer *out);

#endif
