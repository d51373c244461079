/*
 * The libuv adapter's public header compiled as C++ (syntax only), as
 * header_cxx.cpp does for fastfb.h: redeclaring with C linkage proves the
 * extern "C" guards.
 */
#include "fastfb_uv.h"

extern "C" {
FFB_API int ffb_uv_conn_new(uv_loop_t *loop, const ffb_conn_options *opts,
                            ffb_conn **out);
FFB_API int ffb_uv_connect(ffb_conn *conn, ffb_uv_connect_cb cb, void *data);
FFB_API int ffb_uv_close(ffb_conn *conn, ffb_uv_close_cb cb, void *data);
FFB_API uv_loop_t *ffb_uv_conn_loop(const ffb_conn *conn);
}

static void on_connect(ffb_conn *, int, void *) {}
static void on_close(ffb_conn *, int, void *) {}

int uv_api_from_cxx(uv_loop_t *loop);
int uv_api_from_cxx(uv_loop_t *loop) {
    ffb_conn_options opts;
    ffb_conn_options_init(&opts);
    opts.database = "employee";
    ffb_conn *conn = nullptr;
    int rc = ffb_uv_conn_new(loop, &opts, &conn);
    if (rc == 0)
        rc = ffb_uv_connect(conn, on_connect, nullptr);
    ffb_uv_stats st;
    if (rc == 0)
        rc = ffb_uv_conn_stats(conn, &st, sizeof(st));
    return rc == 0 ? ffb_uv_close(conn, on_close, nullptr) : rc;
}
