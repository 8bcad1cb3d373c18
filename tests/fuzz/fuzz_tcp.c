/* Fuzz target: the tcp driver's decoders of bytes from the network. The first
 * input byte picks what the rest is fed to:
 *   0  the pure decoders: every handshake message type, a run of frame
 *      headers and GET bodies, an address blob;
 *   1  a connection to a live driver's listening port that sends the rest as
 *      its handshake (the accept side's state machine; the driver must close
 *      it and stay sound);
 *   2  an established track (one end of a socketpair, the peer's end written
 *      with the rest): frames, GETs against an exposed region, DATA against an
 *      rget in flight. The driver must drop the peer or deliver sane packets.
 * Nothing may crash, read or write outside a buffer, or leak. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/tcp/tcp_int.h"

static int lost;
static int up_packet(void *o, void *p, const void *buf, size_t len)
{
    /* Touch every byte: the sanitizers check the bounds. */
    volatile uint8_t x = 0;
    for (size_t i = 0; i < len; i++)
        x ^= ((const uint8_t *)buf)[i];
    (void)x;
    return len && ((const uint8_t *)buf)[0] == 0xFF ? WEFT_EPROTO : WEFT_OK;
}
static void up_send_done(void *o, void *p, void *c, int s) {}
static void up_rget_done(void *o, void *p, void *c, int s) {}
static void up_peer_lost(void *o, void *p, int s)
{
    lost++;
}

static void decoders(const uint8_t *data, size_t size)
{
    tcp_hs_msg_t m;
    for (uint16_t type = 0; type <= 7; type++)
        if (weft__tcp_hs_decode(data, size, type, &m) == WEFT_OK &&
            (tcp_hs_is_link(type) ? m.server_id == 0 || m.client_id <= m.server_id
                                  : m.client_rank <= m.server_rank || m.client_rank >= m.size))
            abort();
    for (size_t off = 0; off + TCP_FRAME_HDR <= size; off += TCP_FRAME_HDR) {
        tcp_frame_t f;
        if (weft__tcp_frame_decode(data + off, TCP_MAX_PACKET_DEFAULT, &f) == WEFT_OK &&
            f.type == TCP_FRAME_PKT && f.length > TCP_MAX_PACKET_DEFAULT)
            abort();
        if (off + TCP_FRAME_HDR + TCP_GET_BODY <= size) {
            tcp_get_t g;
            weft__tcp_get_decode(data + off + TCP_FRAME_HDR, &g);
        }
    }
    tcp_addr_t a;
    if (weft__tcp_addr_decode(data, size, &a) == WEFT_OK) {
        struct sockaddr_storage ss;
        weft__tcp_addr_sockaddr(&a, &ss);
    }
}

static weft_driver_t *driver(void)
{
    static const uint8_t secret[WEFT_DRV_SECRET_LEN] = "fuzz-secret-1234";
    static const int node[2] = {0, 1};
    weft_driver_params_t p = {.rank = 0,
                              .size = 2,
                              .job_id = "fuzz",
                              .job_secret = secret,
                              .node_ranks = node,
                              .node_size = 1,
                              .node_index = 0};
    weft_driver_upcalls_t up = {.owner = NULL,
                                .packet = up_packet,
                                .send_done = up_send_done,
                                .rget_done = up_rget_done,
                                .peer_lost = up_peer_lost};
    setenv("WEFT_LOG", "off", 0);
    setenv("WEFT_TCP_IF", "lo", 0);
    setenv("WEFT_TCP_HANDSHAKE_MS", "50", 0);
    weft_driver_t *d;
    if (weft__driver_tcp_ops.init(&p, &up, &d) != WEFT_OK)
        abort();
    return d;
}

/* Open rank 1's track (it connects to us: nothing is dialled). */
static weft_track_t *track(weft_driver_t *d)
{
    uint8_t blob[TCP_ADDR_LEN];
    tcp_addr_t a = {.family = AF_INET, .port = 9, .rank = 1, .addr = {127, 0, 0, 1}};
    weft__tcp_addr_encode(blob, &a);
    weft_track_t *t;
    weft_track_caps_t caps;
    if (weft__driver_tcp_ops.connect(d, 1, blob, sizeof blob, NULL, &t, &caps) != WEFT_OK)
        abort();
    return t;
}

static void feed(int fd, const uint8_t *data, size_t size)
{
    while (size) {
        ssize_t w = send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w <= 0)
            break;
        data += w;
        size -= (size_t)w;
    }
    shutdown(fd, SHUT_WR);
}

static void handshake(const uint8_t *data, size_t size)
{
    weft_driver_t *d = driver();
    track(d);
    struct sockaddr_storage ss;
    socklen_t len = weft__tcp_addr_sockaddr(&d->addr, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) != 0)
        abort();
    feed(fd, data, size);
    /* Until the driver has accepted and closed it (EOF, time-out after 50 ms). */
    for (int i = 0; i < 2000; i++) {
        weft__driver_tcp_ops.poll(d);
        char b[64];
        ssize_t r = recv(fd, b, sizeof b, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
            break;
        usleep(100);
    }
    close(fd);
    weft__driver_tcp_ops.fini(d);
}

static void frames(const uint8_t *data, size_t size)
{
    weft_driver_t *d = driver();
    weft_track_t *t = track(d);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    if (weft__tcp_track_up(d, t, sv[0]) != WEFT_OK)
        abort();
    /* A region (slot 0, generation 1, 4096 bytes) for GETs to hit, and an
     * rget in flight (id 1, 100 bytes) for DATA to answer. */
    static uint8_t region[4096], local[200];
    weft_rkey_t key;
    weft__driver_tcp_ops.expose(d, region, sizeof region, &key);
    struct iovec v[2] = {{local, 60}, {local + 100, 100}};
    weft__driver_tcp_ops.rget(t, v, 2, &key, 0, 100, NULL);
    feed(sv[1], data, size);
    lost = 0;
    for (int i = 0; i < 64 && !lost; i++) {
        weft__driver_tcp_ops.poll(d);
        char b[4096];
        while (recv(sv[1], b, sizeof b, MSG_DONTWAIT) > 0)
            ; /* what the driver answers */
    }
    close(sv[1]);
    weft__driver_tcp_ops.fini(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0:
        decoders(data + 1, size - 1);
        break;
    case 1:
        handshake(data + 1, size - 1);
        break;
    default:
        frames(data + 1, size - 1);
        break;
    }
    return 0;
}
