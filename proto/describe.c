/* Op names and one-line packet descriptions for errors and tracing. */
#include "proto/proto.h"

#include <stdio.h>

/* Arguments for "%.*s" from a view that may be empty (p == NULL). */
#define VIEW(b) (int)(b).len, (b).p ? (const char *)(b).p : ""

static const char *const op_names[FFBP_OP_MAX + 1] = {
    [FFBP_OP_VOID] = "op_void",
    [FFBP_OP_CONNECT] = "op_connect",
    [FFBP_OP_EXIT] = "op_exit",
    [FFBP_OP_ACCEPT] = "op_accept",
    [FFBP_OP_REJECT] = "op_reject",
    [FFBP_OP_PROTOCOL] = "op_protocol",
    [FFBP_OP_DISCONNECT] = "op_disconnect",
    [FFBP_OP_RESPONSE] = "op_response",
    [FFBP_OP_ATTACH] = "op_attach",
    [FFBP_OP_CREATE] = "op_create",
    [FFBP_OP_DETACH] = "op_detach",
    [FFBP_OP_COMPILE] = "op_compile",
    [FFBP_OP_START] = "op_start",
    [FFBP_OP_START_AND_SEND] = "op_start_and_send",
    [FFBP_OP_SEND] = "op_send",
    [FFBP_OP_RECEIVE] = "op_receive",
    [FFBP_OP_UNWIND] = "op_unwind",
    [FFBP_OP_RELEASE] = "op_release",
    [FFBP_OP_TRANSACTION] = "op_transaction",
    [FFBP_OP_COMMIT] = "op_commit",
    [FFBP_OP_ROLLBACK] = "op_rollback",
    [FFBP_OP_PREPARE] = "op_prepare",
    [FFBP_OP_RECONNECT] = "op_reconnect",
    [FFBP_OP_CREATE_BLOB] = "op_create_blob",
    [FFBP_OP_OPEN_BLOB] = "op_open_blob",
    [FFBP_OP_GET_SEGMENT] = "op_get_segment",
    [FFBP_OP_PUT_SEGMENT] = "op_put_segment",
    [FFBP_OP_CANCEL_BLOB] = "op_cancel_blob",
    [FFBP_OP_CLOSE_BLOB] = "op_close_blob",
    [FFBP_OP_INFO_DATABASE] = "op_info_database",
    [FFBP_OP_INFO_REQUEST] = "op_info_request",
    [FFBP_OP_INFO_TRANSACTION] = "op_info_transaction",
    [FFBP_OP_INFO_BLOB] = "op_info_blob",
    [FFBP_OP_BATCH_SEGMENTS] = "op_batch_segments",
    [FFBP_OP_QUE_EVENTS] = "op_que_events",
    [FFBP_OP_CANCEL_EVENTS] = "op_cancel_events",
    [FFBP_OP_COMMIT_RETAINING] = "op_commit_retaining",
    [FFBP_OP_PREPARE2] = "op_prepare2",
    [FFBP_OP_EVENT] = "op_event",
    [FFBP_OP_CONNECT_REQUEST] = "op_connect_request",
    [FFBP_OP_AUX_CONNECT] = "op_aux_connect",
    [FFBP_OP_DDL] = "op_ddl",
    [FFBP_OP_OPEN_BLOB2] = "op_open_blob2",
    [FFBP_OP_CREATE_BLOB2] = "op_create_blob2",
    [FFBP_OP_GET_SLICE] = "op_get_slice",
    [FFBP_OP_PUT_SLICE] = "op_put_slice",
    [FFBP_OP_SLICE] = "op_slice",
    [FFBP_OP_SEEK_BLOB] = "op_seek_blob",
    [FFBP_OP_ALLOCATE_STATEMENT] = "op_allocate_statement",
    [FFBP_OP_EXECUTE] = "op_execute",
    [FFBP_OP_EXEC_IMMEDIATE] = "op_exec_immediate",
    [FFBP_OP_FETCH] = "op_fetch",
    [FFBP_OP_FETCH_RESPONSE] = "op_fetch_response",
    [FFBP_OP_FREE_STATEMENT] = "op_free_statement",
    [FFBP_OP_PREPARE_STATEMENT] = "op_prepare_statement",
    [FFBP_OP_SET_CURSOR] = "op_set_cursor",
    [FFBP_OP_INFO_SQL] = "op_info_sql",
    [FFBP_OP_DUMMY] = "op_dummy",
    [FFBP_OP_RESPONSE_PIGGYBACK] = "op_response_piggyback",
    [FFBP_OP_START_AND_RECEIVE] = "op_start_and_receive",
    [FFBP_OP_START_SEND_AND_RECEIVE] = "op_start_send_and_receive",
    [FFBP_OP_EXEC_IMMEDIATE2] = "op_exec_immediate2",
    [FFBP_OP_EXECUTE2] = "op_execute2",
    [FFBP_OP_INSERT] = "op_insert",
    [FFBP_OP_SQL_RESPONSE] = "op_sql_response",
    [FFBP_OP_TRANSACT] = "op_transact",
    [FFBP_OP_TRANSACT_RESPONSE] = "op_transact_response",
    [FFBP_OP_DROP_DATABASE] = "op_drop_database",
    [FFBP_OP_SERVICE_ATTACH] = "op_service_attach",
    [FFBP_OP_SERVICE_DETACH] = "op_service_detach",
    [FFBP_OP_SERVICE_INFO] = "op_service_info",
    [FFBP_OP_SERVICE_START] = "op_service_start",
    [FFBP_OP_ROLLBACK_RETAINING] = "op_rollback_retaining",
    [FFBP_OP_UPDATE_ACCOUNT_INFO] = "op_update_account_info",
    [FFBP_OP_AUTHENTICATE_USER] = "op_authenticate_user",
    [FFBP_OP_PARTIAL] = "op_partial",
    [FFBP_OP_TRUSTED_AUTH] = "op_trusted_auth",
    [FFBP_OP_CANCEL] = "op_cancel",
    [FFBP_OP_CONT_AUTH] = "op_cont_auth",
    [FFBP_OP_PING] = "op_ping",
    [FFBP_OP_ACCEPT_DATA] = "op_accept_data",
    [FFBP_OP_ABORT_AUX_CONNECTION] = "op_abort_aux_connection",
    [FFBP_OP_CRYPT] = "op_crypt",
    [FFBP_OP_CRYPT_KEY_CALLBACK] = "op_crypt_key_callback",
    [FFBP_OP_COND_ACCEPT] = "op_cond_accept",
    [FFBP_OP_BATCH_CREATE] = "op_batch_create",
    [FFBP_OP_BATCH_MSG] = "op_batch_msg",
    [FFBP_OP_BATCH_EXEC] = "op_batch_exec",
    [FFBP_OP_BATCH_RLS] = "op_batch_rls",
    [FFBP_OP_BATCH_CS] = "op_batch_cs",
    [FFBP_OP_BATCH_REGBLOB] = "op_batch_regblob",
    [FFBP_OP_BATCH_BLOB_STREAM] = "op_batch_blob_stream",
    [FFBP_OP_BATCH_SET_BPB] = "op_batch_set_bpb",
    [FFBP_OP_REPL_DATA] = "op_repl_data",
    [FFBP_OP_REPL_REQ] = "op_repl_req",
    [FFBP_OP_BATCH_CANCEL] = "op_batch_cancel",
    [FFBP_OP_BATCH_SYNC] = "op_batch_sync",
    [FFBP_OP_INFO_BATCH] = "op_info_batch",
    [FFBP_OP_FETCH_SCROLL] = "op_fetch_scroll",
    [FFBP_OP_INFO_CURSOR] = "op_info_cursor",
    [FFBP_OP_INLINE_BLOB] = "op_inline_blob",
};

const char *ffbp_op_name(int32_t op) {
    if (op >= 0 && op <= FFBP_OP_MAX && op_names[op])
        return op_names[op];
    return "op_unknown";
}

int ffbp_describe(char *out, size_t size, const ffbp_packet *pkt) {
    const char *name = ffbp_op_name(pkt->op);
    switch (pkt->op) {
    case FFBP_OP_ACCEPT:
    case FFBP_OP_ACCEPT_DATA:
    case FFBP_OP_COND_ACCEPT: {
        const ffbp_accept *a = &pkt->u.accept;
        return snprintf(out, size,
                        "%s version=%u arch=%d type=0x%X data=%u plugin=\"%.*s\" "
                        "authenticated=%u keys=%u",
                        name, (unsigned)(a->version & FFBP_PROTOCOL_MASK),
                        (int)a->arch, (unsigned)a->type, (unsigned)a->data.len,
                        VIEW(a->plugin),
                        (unsigned)a->authenticated, (unsigned)a->keys.len);
    }
    case FFBP_OP_RESPONSE:
    case FFBP_OP_RESPONSE_PIGGYBACK: {
        const ffbp_response *r = &pkt->u.response;
        uint32_t gds = 0;
        for (size_t i = 0; i < r->status.n; i++)
            if (r->status.args[i].type == FFBP_ARG_GDS &&
                r->status.args[i].num != 0) {
                gds = (uint32_t)r->status.args[i].num;
                break;
            }
        return snprintf(out, size,
                        "%s object=%u blob_id=0x%016llX data=%u status=%zu%s%u",
                        name, (unsigned)r->object,
                        (unsigned long long)r->blob_id, (unsigned)r->data.len,
                        r->status.total, " gds=", gds);
    }
    case FFBP_OP_CONT_AUTH: {
        const ffbp_cont_auth *c = &pkt->u.cont_auth;
        return snprintf(out, size,
                        "%s data=%u name=\"%.*s\" list=\"%.*s\" keys=%u", name,
                        (unsigned)c->data.len, VIEW(c->name), VIEW(c->list), (unsigned)c->keys.len);
    }
    case FFBP_OP_FETCH_RESPONSE:
    case FFBP_OP_SQL_RESPONSE: {
        const ffbp_fetch_response *f = &pkt->u.fetch;
        return snprintf(out, size, "%s status=%d count=%u msg=%zu", name,
                        (int)f->status, (unsigned)f->count, f->msg_len);
    }
    case FFBP_OP_CRYPT_KEY_CALLBACK:
        return snprintf(out, size, "%s data=%u reply_size=%d", name,
                        (unsigned)pkt->u.crypt_cb.data.len,
                        (int)pkt->u.crypt_cb.reply_size);
    default:
        return snprintf(out, size, "%s (%d)", name, (int)pkt->op);
    }
}
