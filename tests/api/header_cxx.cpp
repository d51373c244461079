/*
 * The public header compiled as C++ (syntax only; meson's project is C).
 * Redeclaring functions with C linkage after the include is an error unless
 * the header already gave them C linkage, so this proves the extern "C"
 * guards as well as C++ compatibility of every declaration.
 */
#include "fastfb.h"

extern "C" {
FFB_API const char *ffb_version(void);
FFB_API int ffb_conn_new(const ffb_conn_options *opts, ffb_conn **out);
FFB_API void ffb_conn_free(ffb_conn *conn);
FFB_API const ffb_error *ffb_conn_error(const ffb_conn *conn);
FFB_API const char *ffb_error_message(const ffb_error *err);
FFB_API int ffb_conn_stats(const ffb_conn *conn, ffb_stats *out,
                           size_t out_size);
FFB_API size_t ffb_conn_output(ffb_conn *conn, const uint8_t **bytes_out);
}

/* Function pointers of the expected C types. */
static const char *(*const version_fn)(void) = ffb_version;
static const char *(*const strerror_fn)(int) = ffb_strerror;

int api_from_cxx();
int api_from_cxx() {
    ffb_conn_options opts; /* FFB_CONN_OPTIONS_INIT is C99 only */
    ffb_conn_options_init(&opts);
    opts.database = "employee";
    opts.wire_crypt = FFB_CRYPT_REQUIRED;
    opts.io = FFB_IO_EXTERNAL;
    ffb_allocator alloc = {0, 0, 0, 0};
    (void)alloc;

    ffb_conn *conn = 0;
    int rc = ffb_conn_new(&opts, &conn);
    if (rc <= FFB_E_FATAL || rc == FFB_E_INVAL)
        return rc;
    ffb_stats st;
    ffb_conn_stats(conn, &st, sizeof(st));
    unsigned wants = ffb_conn_wants(conn);
    if (wants & (FFB_WANT_READ | FFB_WANT_WRITE))
        ffb_conn_step(conn);
    const ffb_error *err = ffb_conn_error(conn);
    uint32_t gds = ffb_error_gds(err);
    if (gds == FFB_GDS_UNIQUE_KEY_VIOLATION)
        return 1;
    ffb_db_info info;
    (void)info;
    ffb_create_options copts;
    copts.page_size = 8192;
    (void)copts;
    enum ffb_code code = FFB_E_NOMEM;
    (void)code;
    ffb_conn_free(conn);
    return version_fn()[0] + strerror_fn(FFB_OK)[0];
}
