/*
 * Events (lib/events.c): the object behind ffb_events and the halves the
 * blocking calls (lib/blocking.c) and the aux socket driver (lib/net.c)
 * use. Not installed.
 */
#ifndef FFB_LIB_EVENTS_H
#define FFB_LIB_EVENTS_H

#include "lib/internal.h"

enum ffb__aux_state {
    FFB__AUX_NONE = 0,  /* no op_connect_request on this attachment yet */
    FFB__AUX_REQUESTED, /* op_connect_request queued, answer owed */
    FFB__AUX_PORT,      /* the port is known: connect now */
    FFB__AUX_OPEN,      /* connected (blocking I/O), or bytes fed */
    FFB__AUX_FAILED,    /* refused, unusable answer, connect failed,
                           garbage: unusable on this attachment */
    FFB__AUX_GONE       /* end of file / op_exit: the attachment is gone */
};

/* A registered name. Kept until the events object is freed (an
   unregistered one is inactive and can be registered again). */
typedef struct ffb__evreg {
    char name[256];
    size_t len;
    ffb_event_cb cb;
    void *data;
    uint32_t count;   /* the count the server sent last (c + 1) */
    int baseline;     /* the first answer came */
    int32_t rid;      /* its op_que_events on the server, 0: none */
    int active;
    ffb__sync *baseline_sync; /* a queued registration completes when its
                                 baseline arrives */
    struct ffb__evreg *next;
} ffb__evreg;

struct ffb_events {
    ffb_conn *conn;
    ffb__evreg *regs;
    int32_t next_rid;
    int aux_state;
    uint16_t aux_port;
    int aux_fd;          /* blocking I/O: the driver's socket, else -1 */
    ffbp_writer in;      /* aux bytes not parsed yet */
    int owed;            /* answers owed on the main connection */
    int requeue_failed;  /* a re-registration was refused */
    int in_callback;
    ffb__sync cr_sync;   /* the op_connect_request's */
};

/* Queue a registration (and op_connect_request when the attachment has
   no aux connection): 0 when `sync` completes with its answer (with
   `at_baseline`: once the baseline has arrived on the aux connection too), 1 when the
   name was registered already (its callback replaced), or an error. */
int ffb__events_queue_register(ffb_events *ev, const char *name,
                               ffb_event_cb cb, void *data, ffb__sync *sync,
                               int at_baseline);
/* op_cancel_events: 0 queued, 1 nothing to send. */
int ffb__events_queue_unregister(ffb_events *ev, const char *name,
                                 ffb__sync *sync);
/* Every active name: 0 when `sync` completes with the last answer
   (every cancel records its failure there), 1 nothing to send. */
int ffb__events_cancel_all(ffb_events *ev, ffb__sync *sync);
/* A blocking call's `sync` (on its stack) is no longer waited for: no
   request or registration may complete it after the call returned. */
void ffb__events_forget_sync(ffb_conn *conn, ffb__sync *sync);
/* The name's first answer (the baseline) came, or it is not registered. */
int ffb__events_has_baseline(ffb_events *ev, const char *name);
/* Until condition for ffb__run: no answer owed to `ev`. */
int ffb__events_owed_none(ffb_conn *conn, const void *ev);
/* Aux bytes in (len 0: end of file): callbacks counted in *calls; the
   count, or an error. */
int ffb__events_input(ffb_events *ev, const uint8_t *p, size_t len,
                      int *calls);
/* The driver connected the aux socket `fd` / could not. */
void ffb__events_aux_open(ffb_events *ev, int fd);
int ffb__events_aux_failed(ffb_events *ev);
void ffb__events_destroy(ffb_events *ev);

/* The aux socket driver (lib/net.c). Connect to `port` on the main
   connection's peer address (the host otherwise): 0 with *fd, or an error
   in conn->err. */
int ffb__aux_connect(ffb_conn *conn, uint16_t port, int timeout_ms, int *fd);
/* Wait up to timeout_ms (-1: no limit) and read: bytes read (> 0), 0 when
   the time ran out, FFB_E_CLOSED at end of file, FFB_E_IO. */
int ffb__aux_recv(ffb_conn *conn, int fd, uint8_t *buf, size_t size,
                  int timeout_ms);
void ffb__aux_close(int fd);

#endif
