/* Private types of the tcp driver: wire formats (handshake messages, frames,
 * address blob, rkey), connection and driver objects. See README.md here. */
#ifndef WEFT_TCP_INT_H
#define WEFT_TCP_INT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "drivers/driver.h"
#include "util/iface.h"
#include "util/list.h"
#include "util/util.h"

/* ---- Little-endian fixed-width fields (drivers cannot use core/wire.h) ---------- */
static inline void tcp_le16_put(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void tcp_le32_put(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void tcp_le64_put(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t tcp_le16_get(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t tcp_le32_get(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t tcp_le64_get(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* ---- Handshake (tcp_wire.c) -------------------------------------------------------
 *
 * The higher rank (client) connects to the lower one (server):
 *   client -> server  HELLO      magic, version, type, client rank, server rank, job size,
 *                                reserved (0), client nonce (16 bytes)
 *   server -> client  CHALLENGE  the same fields with the server's nonce, then
 *                                proof_s = SipHash(secret, 'S' | ranks | nc | ns | job id)
 *   client -> server  PROOF      magic, version, type, client rank, server rank, reserved,
 *                                proof_c = SipHash(secret, 'C' | ranks | nc | ns | job id)
 * Each side proves it knows the job secret on a nonce the other side just drew,
 * so the secret never crosses the wire and a recorded proof is useless later.
 *
 * A link (a track to a process of another job, weft_drv_link_t) shakes hands
 * the same way with LHELLO, LCHALLENGE and LPROOF, of the same lengths: the
 * bytes of the two ranks, the size and the reserved field hold the client's
 * and the server's 64-bit ids instead (the higher id connects), and the proofs
 * are made with the link's secret, the ids standing for the job id. */
#define TCP_HS_MAGIC     0x50435457u /* "WTCP" */
#define TCP_HS_VERSION   1u
#define TCP_HS_HELLO     1u
#define TCP_HS_CHALLENGE 2u
#define TCP_HS_PROOF     3u
#define TCP_HS_LHELLO    4u
#define TCP_HS_LCHAL     5u
#define TCP_HS_LPROOF    6u
#define TCP_NONCE_LEN    16
#define TCP_HELLO_LEN    40
#define TCP_CHAL_LEN     48
#define TCP_PROOF_LEN    32
#define TCP_HS_MAX       TCP_CHAL_LEN
#define TCP_JOBID_MAX    255

typedef struct tcp_hs_msg {
    uint16_t type;
    uint32_t client_rank, server_rank, size;
    uint64_t client_id, server_id; /* link messages, instead of the ranks and size */
    uint8_t nonce[TCP_NONCE_LEN];  /* HELLO, CHALLENGE */
    uint64_t proof;                /* CHALLENGE, PROOF */
} tcp_hs_msg_t;

/* Whether a handshake message type is one of a link's. */
static inline bool tcp_hs_is_link(uint16_t type)
{
    return type >= TCP_HS_LHELLO && type <= TCP_HS_LPROOF;
}
/* Size of a handshake message of this type, 0 if the type is unknown. */
WEFT_INTERNAL size_t weft__tcp_hs_size(uint16_t type);
WEFT_INTERNAL size_t weft__tcp_hs_encode(uint8_t *buf, const tcp_hs_msg_t *m);
/* Decode exactly weft__tcp_hs_size(expect) bytes; WEFT_EPROTO on any bad field. */
WEFT_INTERNAL int weft__tcp_hs_decode(const uint8_t *buf, size_t len, uint16_t expect,
                                      tcp_hs_msg_t *m);
/* The proof of one side ('S' or 'C') for one connection. */
WEFT_INTERNAL uint64_t weft__tcp_hs_proof(const uint8_t *secret, char role, uint32_t client_rank,
                                          uint32_t server_rank, const uint8_t *nc,
                                          const uint8_t *ns, const char *job_id);
/* The same for a link between the processes of ids client and server. */
WEFT_INTERNAL uint64_t weft__tcp_hs_link_proof(const uint8_t *secret, char role, uint64_t client,
                                               uint64_t server, const uint8_t *nc,
                                               const uint8_t *ns);

/* ---- Frames (after the handshake) ------------------------------------------------
 *
 * Every frame starts with a 16-byte header:
 *   u8 version, u8 type, u16 reserved (0), u32 length, u64 aux
 * PKT   length = engine packet bytes that follow; aux = 0
 * GET   length = 24; aux = requester's op id; body: u32 slot, u32 gen, u64 offset, u64 len
 * DATA  length = bytes that follow (the answer to a GET); aux = the GET's op id
 */
#define TCP_FRAME_VERSION 1u
#define TCP_FRAME_HDR     16
#define TCP_FRAME_PKT     1u
#define TCP_FRAME_GET     2u
#define TCP_FRAME_DATA    3u
#define TCP_GET_BODY      24

typedef struct tcp_frame {
    uint8_t type;
    uint32_t length;
    uint64_t aux;
} tcp_frame_t;

typedef struct tcp_get {
    uint32_t slot, gen;
    uint64_t offset, len;
} tcp_get_t;

WEFT_INTERNAL void weft__tcp_frame_encode(uint8_t *buf, uint8_t type, uint32_t length,
                                          uint64_t aux);
/* Decode a frame header; max_pkt bounds a PKT's length, max_data a DATA's.
 * WEFT_EPROTO on any bad field. */
WEFT_INTERNAL int weft__tcp_frame_decode(const uint8_t *buf, size_t max_pkt, tcp_frame_t *f);
WEFT_INTERNAL void weft__tcp_get_encode(uint8_t *buf, const tcp_get_t *g);
WEFT_INTERNAL void weft__tcp_get_decode(const uint8_t *buf, tcp_get_t *g);

/* ---- Address blob and rkey ------------------------------------------------------- */
#define TCP_ADDR_MAGIC   0x41504354u /* "TCPA" */
#define TCP_ADDR_VERSION 1u
#define TCP_ADDR_LEN     40 /* magic, version, family, port, rank, scope, addr[16], reserved */

typedef struct tcp_addr {
    int family; /* AF_INET or AF_INET6 */
    uint16_t port;
    int32_t rank;
    uint32_t scope_id;
    uint8_t addr[16];
} tcp_addr_t;

WEFT_INTERNAL size_t weft__tcp_addr_encode(uint8_t *buf, const tcp_addr_t *a);
WEFT_INTERNAL int weft__tcp_addr_decode(const uint8_t *buf, size_t len, tcp_addr_t *a);
/* Fill a sockaddr from an address blob; returns its length. */
WEFT_INTERNAL socklen_t weft__tcp_addr_sockaddr(const tcp_addr_t *a, struct sockaddr_storage *ss);

#define TCP_RKEY_LEN 16 /* u32 slot, u32 generation, u64 length */

/* ---- Objects ---------------------------------------------------------------------- */

/* Limits. */
#define TCP_MAX_PACKET_DEFAULT (128u << 10)
#define TCP_RDV_DEFAULT        (64u << 10)
#define TCP_MAX_IOV            128
/* Accepted connections not yet authenticated, beyond the job's size: refused. */
#define TCP_MAX_HANDSHAKES 64

/* Something queued for writing on a connection: an engine packet, a GET, or the
 * DATA answering a peer's GET. Its iovec is our own (the header) plus, for
 * PKT, the track's copy of the caller's iovec (pkt_iov): the caller's buffers
 * stay valid until send_done, its iovec array need not. */
typedef struct tcp_txop {
    weft_list_t link;
    uint8_t kind; /* TCP_FRAME_* */
    bool heap;    /* malloc'd, freed once written */
    void *cookie; /* PKT: the engine's send cookie */
    uint8_t hdr[TCP_FRAME_HDR + TCP_GET_BODY];
    size_t hdr_len;
    const struct iovec *iov; /* payload, after the header */
    int iovcnt;
    int iov_i;        /* next payload entry to write (-1: still in the header) */
    size_t done;      /* bytes of the current part (header or iov[iov_i]) written */
    size_t left;      /* bytes of the frame still to write */
    struct iovec one; /* DATA: the single region slice */
} tcp_txop_t;

/* An rget waiting for its DATA frame. */
typedef struct tcp_getop {
    weft_list_t link;
    uint64_t id;
    uint64_t len;
    void *cookie;
    struct iovec *iov; /* our copy of the caller's iovec */
    int iovcnt;
    struct iovec iov_inline[4];
    tcp_txop_t tx; /* the GET frame */
} tcp_getop_t;

enum {
    TCP_C_CONNECTING = 1, /* client: non-blocking connect under way */
    TCP_C_HELLO_SENT,     /* client: waiting for CHALLENGE */
    TCP_C_WAIT_HELLO,     /* server: accepted, waiting for HELLO */
    TCP_C_WAIT_PROOF,     /* server: CHALLENGE sent, waiting for PROOF */
    TCP_C_UP,             /* established: frames */
};

/* Receiving state of an established connection. */
enum {
    TCP_RX_HDR = 0, /* between frames */
    TCP_RX_DATA,    /* payload of a DATA frame, read straight into the rget's iovec */
};

typedef struct tcp_conn {
    int fd;
    int state;
    struct weft_driver *driver;
    struct weft_track *track; /* NULL for a server connection until its HELLO names it */
    /* A server connection whose LHELLO named a link: the track it will bring
     * up once the proof is in. */
    struct weft_track *link_track;
    /* Its LHELLO names a link this process has not opened yet (the peer's
     * job learned of it first): it waits, with no events, until link()
     * opens it (weft__tcp_hs_unpark) or its deadline. */
    bool parked;
    weft_list_t hs_link; /* in driver->handshakes while not up */
    /* Closed (weft__tcp_hs_close): its fd is gone and it waits in
     * driver->hs_closed for the end of the poll pass, whose epoll events
     * may still name it. */
    bool closed;
    bool accepted; /* a server connection: counted in driver->naccepted */
    struct tcp_conn *next_closed;
    uint64_t deadline_ns; /* handshake must end by then */
    char peer_name[64];   /* address:port, for logs */
    uint8_t nonce_mine[TCP_NONCE_LEN], nonce_peer[TCP_NONCE_LEN];
    uint32_t client_rank, server_rank;
    bool link; /* a link's handshake: the ids below name the two sides */
    uint64_t client_id, server_id;
    /* Handshake bytes: one message at a time in each direction. */
    uint8_t hs_in[TCP_HS_MAX];
    size_t hs_in_len;
    uint8_t hs_out[TCP_HS_MAX];
    size_t hs_out_len, hs_out_done;
} tcp_conn_t;

struct weft_track {
    /* Hot in send() and poll(). */
    _Alignas(WEFT_CACHELINE) int fd; /* -1 until up, and after loss */
    bool up;
    bool lost;
    bool want_out;     /* EPOLLOUT is armed */
    weft_list_t txq;   /* tcp_txop_t, oldest first */
    int pkt_queued;    /* engine packets in txq (0 or 1) */
    tcp_txop_t pkt_op; /* the engine packet waiting in txq */
    /* A copy of the queued packet's iovec: the driver contract lets the caller
     * reuse its iovec array as soon as send() returns, only the buffers must
     * stay until send_done. */
    struct iovec pkt_iov[TCP_MAX_IOV];
    int rx_state;
    uint8_t *rx_buf; /* frames read ahead */
    size_t rx_cap, rx_start, rx_end;
    tcp_getop_t *rx_get; /* RX_DATA: the get being filled */
    int rx_iov_i;
    size_t rx_iov_off, rx_left;
    weft_list_t gets; /* tcp_getop_t waiting for DATA, in GET order */
    struct weft_driver *driver;
    void *peer_cookie;
    /* Cold. */
    int peer_rank;  /* -1 on a link */
    bool is_client; /* we connect (our rank, or our id on a link, is higher) */
    /* A link to a process of another job (weft_drv_link_t), in driver->links. */
    bool link;
    uint64_t link_mine, link_peer;
    /* A link that waits for its peer to connect (we are the server): by
     * then, or the peer is taken for lost (it may have died before). */
    uint64_t link_deadline_ns;
    uint8_t link_secret[WEFT_DRV_SECRET_LEN];
    weft_list_t link_node;
    tcp_conn_t *conn; /* handshake in progress */
    tcp_addr_t addr;
    uint64_t next_get_id;
};

typedef struct tcp_region {
    const uint8_t *buf;
    size_t len;
    uint32_t gen;
    bool used;
    uint32_t next_free; /* when unused: the next free slot + 1, 0 at the end */
} tcp_region_t;

struct weft_driver {
    _Alignas(WEFT_CACHELINE) int epfd;
    int listen_fd;
    int nup;              /* established tracks */
    weft_track_t *single; /* the one track up, when only one is: polled directly */
    uint64_t events;      /* upcalls made, for poll's count */
    weft_driver_upcalls_t up;
    tcp_region_t *regions;
    uint32_t nregions;
    uint32_t free_region; /* the first free slot + 1, 0 when none: O(1) expose */
    /* Cold. */
    int rank, size;
    char job_id[TCP_JOBID_MAX + 1];
    uint8_t secret[WEFT_DRV_SECRET_LEN];
    weft_track_t **tracks;  /* by rank, NULL when not connected through tcp */
    weft_list_t links;      /* link tracks (weft_track_t.link_node) */
    int links_waiting;      /* of which waiting for their peer (link_deadline_ns) */
    weft_list_t handshakes; /* tcp_conn_t not yet up */
    int nhandshakes;
    int naccepted; /* of which accepted, not authenticated yet (bounded) */
    /* Lines about refused strangers: at most TCP_REFUSE_LINES a second, then
     * a count (a flood of strangers must not flood the log). */
    uint64_t refuse_window_ns;
    unsigned refuse_lines;
    uint64_t refuse_quiet;
    tcp_conn_t *hs_closed; /* closed connections not yet freed (weft__tcp_hs_reap) */
    uint64_t hs_timeout_ns;
    uint64_t connect_timeout_ns;
    uint32_t user_timeout_ms;
    size_t max_packet;
    size_t rdv_threshold;
    uint32_t polls;
    tcp_addr_t addr;
    char if_name[64];
};

/* epoll user data: a tagged pointer (low bit set for a handshake connection). */
static inline uint64_t tcp_ev_track(weft_track_t *t)
{
    return (uint64_t)(uintptr_t)t;
}
static inline uint64_t tcp_ev_conn(tcp_conn_t *c)
{
    return (uint64_t)(uintptr_t)c | 1u;
}

/* tcp_conn.c: established connections. */
WEFT_INTERNAL int weft__tcp_track_up(weft_driver_t *d, weft_track_t *t, int fd);
WEFT_INTERNAL int weft__tcp_send(weft_track_t *t, const struct iovec *iov, int iovcnt,
                                 void *cookie);
/* Read and write what one track can without asking epoll first. */
WEFT_INTERNAL void weft__tcp_track_poll(weft_driver_t *d, weft_track_t *t);
WEFT_INTERNAL void weft__tcp_track_event(weft_driver_t *d, weft_track_t *t, uint32_t events);
WEFT_INTERNAL void weft__tcp_track_lose(weft_driver_t *d, weft_track_t *t, int status,
                                        const char *why);
WEFT_INTERNAL void weft__tcp_track_free(weft_track_t *t);
WEFT_INTERNAL void weft__tcp_tx_queue(weft_track_t *t, tcp_txop_t *op);

/* tcp_handshake.c */
WEFT_INTERNAL int weft__tcp_hs_connect(weft_driver_t *d, weft_track_t *t);
WEFT_INTERNAL void weft__tcp_hs_accept(weft_driver_t *d);
WEFT_INTERNAL void weft__tcp_hs_event(weft_driver_t *d, tcp_conn_t *c, uint32_t events);
WEFT_INTERNAL void weft__tcp_hs_expire(weft_driver_t *d, uint64_t now);
/* Give the parked connections another look: a link was just opened. */
WEFT_INTERNAL void weft__tcp_hs_unpark(weft_driver_t *d);
/* Close a connection that is not up (or leave it for a track): its fd is
 * closed and it leaves the handshake list at once, but its memory waits for
 * weft__tcp_hs_reap, because events of the poll pass that closed it may still
 * name it (an expired handshake, a track lost while its other events wait);
 * an event on a closed connection is ignored. */
WEFT_INTERNAL void weft__tcp_hs_close(weft_driver_t *d, tcp_conn_t *c);
/* Free the connections closed since the last reap: at the end of a poll pass
 * and at fini. */
WEFT_INTERNAL void weft__tcp_hs_reap(weft_driver_t *d);

/* Log a refused connection from peer, rate-limited; with peer NULL, only
 * say how many went unlogged (at the end). */
WEFT_INTERNAL void weft__tcp_refused(weft_driver_t *d, const char *peer, const char *why);

/* tcp_region.c */
WEFT_INTERNAL int weft__tcp_expose(weft_driver_t *d, const void *buf, size_t len,
                                   weft_rkey_t *rkey);
WEFT_INTERNAL void weft__tcp_unexpose(weft_driver_t *d, const weft_rkey_t *rkey);
WEFT_INTERNAL int weft__tcp_rget(weft_track_t *t, const struct iovec *local, int iovcnt,
                                 const weft_rkey_t *rkey, uint64_t offset, size_t len,
                                 void *cookie);
/* A peer's GET: answer with DATA from the region, or WEFT_EPROTO. */
WEFT_INTERNAL int weft__tcp_serve_get(weft_driver_t *d, weft_track_t *t, uint64_t id,
                                      const tcp_get_t *g);

#endif
