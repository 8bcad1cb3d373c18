/* weftrun's key-value server against clients that lie: oversized lengths, bad
 * magic, a wrong job id, a wrong proof of the job secret, a rank that is already
 * connected, messages before HELLO, a connection that closes in the middle of a
 * message. Each bad connection must be closed (or refused), and the server must
 * go on serving the real ranks. Over a Unix socket or TCP, whichever
 * WEFT_BOOT_ADDR names (TCP when weftrun starts the ranks as remote ones). */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "weft/weft.h"
#include "boot/boot.h"
#include "boot/boot_proto.h"

static int failures;
/* The nonce of the last connection's CHALLENGE, and the job secret, for HELLOs
 * whose proof is right when the test wants it right. */
static uint8_t nonce[WEFT_BOOT_NONCE_LEN];
static uint8_t secret[WEFT_BOOT_SECRET_LEN]; /* a copy: it outlives the boot object */

static int recv_exact(int fd, uint8_t *p, size_t len);

/* A connection to weftrun, without reading anything. */
static int raw_connect_only(void)
{
    const char *addr = getenv("WEFT_BOOT_ADDR");
    if (addr && !strncmp(addr, "tcp:", 4)) {
        char host[128];
        const char *colon = strrchr(addr + 4, ':');
        if (!colon || (size_t)(colon - addr - 4) >= sizeof host)
            return -1;
        memcpy(host, addr + 4, (size_t)(colon - addr - 4));
        host[colon - addr - 4] = 0;
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
        if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
            return -1;
        int fd = socket(ai->ai_family, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
        freeaddrinfo(ai);
        return fd;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!addr || strncmp(addr, "unix:", 5) != 0 || strlen(addr + 5) >= sizeof sa.sun_path)
        return -1;
    strcpy(sa.sun_path, addr + 5);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A connection to weftrun whose CHALLENGE was read (into nonce). */
static int raw_connect(void)
{
    int fd = raw_connect_only();
    if (fd < 0)
        return -1;
    uint8_t m[WEFT_BOOT_PROTO_HDR_SIZE + WEFT_BOOT_NONCE_LEN];
    weft_boot_hdr_t h;
    if (recv_exact(fd, m, sizeof m) != 0 || weft__boot_hdr_decode(m, &h) != 0 ||
        h.type != WEFT_BOOT_MSG_CHALLENGE || h.body_len != WEFT_BOOT_NONCE_LEN) {
        fprintf(stderr, "boot_badclient: no CHALLENGE from the server\n");
        close(fd);
        return -1;
    }
    memcpy(nonce, m + WEFT_BOOT_PROTO_HDR_SIZE, sizeof nonce);
    return fd;
}

/* Wait (at most 10 s) for the server to close fd; return the bytes it sent first. */
static ssize_t wait_closed(int fd, uint8_t *reply, size_t cap)
{
    size_t got = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10000) != 1)
            return -1; /* still open: the server trusted us */
        ssize_t n = recv(fd, reply + got, cap - got, 0);
        if (n == 0)
            return (ssize_t)got;
        if (n < 0)
            return errno == ECONNRESET ? (ssize_t)got : -1;
        got += (size_t)n;
        if (got == cap)
            return -1;
    }
}

/* How a test case builds its message, once the connection's nonce is known. */
typedef size_t (*build_fn)(uint8_t *m, const char *jobid, uint32_t size);

static void expect_closed(const char *what, build_fn build, const char *jobid, uint32_t size,
                          int expect_status)
{
    uint8_t msg[512];
    int fd = raw_connect();
    size_t len = fd >= 0 ? build(msg, jobid, size) : 0;
    if (fd < 0) {
        fprintf(stderr, "boot_badclient: %s: cannot connect\n", what);
        failures++;
        return;
    }
    if (len && send(fd, msg, len, MSG_NOSIGNAL) != (ssize_t)len)
        fprintf(stderr, "boot_badclient: %s: short send (fine if already closed)\n", what);
    uint8_t reply[256];
    ssize_t n = wait_closed(fd, reply, sizeof reply);
    close(fd);
    if (n < 0) {
        fprintf(stderr, "boot_badclient: %s: the server did not close the connection\n", what);
        failures++;
        return;
    }
    if (expect_status) {
        weft_boot_hdr_t h;
        if (n != WEFT_BOOT_PROTO_HDR_SIZE + 4 || weft__boot_hdr_decode(reply, &h) != 0 ||
            h.type != WEFT_BOOT_MSG_HELLO_REPLY ||
            (int32_t)weft__boot_get32(reply + WEFT_BOOT_PROTO_HDR_SIZE) != expect_status) {
            fprintf(stderr, "boot_badclient: %s: expected a refusal (%d), got %zd bytes\n", what,
                    expect_status, n);
            failures++;
            return;
        }
    }
    printf("boot_badclient: %s: refused\n", what);
}

/* A HELLO whose proof is right for the nonce of the last connection. */
static size_t hello(uint8_t *m, uint32_t rank, uint32_t size, const char *jobid)
{
    size_t l = strlen(jobid);
    uint8_t proof[WEFT_BOOT_PROOF_LEN];
    weft__boot_proof(secret, nonce, jobid, l, rank, proof);
    size_t body = weft__boot_hello_encode(m + 12, rank, size, jobid, l, proof);
    weft__boot_hdr_encode(m, WEFT_BOOT_MSG_HELLO, (uint32_t)body);
    return 12 + body;
}

static int recv_exact(int fd, uint8_t *p, size_t len)
{
    while (len > 0) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 10000) != 1)
            return -1;
        ssize_t n = recv(fd, p, len, 0);
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Send, without blocking, as much of the pipelined GETs (n of them, each the len
 * bytes at m) as the socket takes now; *sent counts the bytes sent so far. Once our
 * replies pass its high-water mark the server stops reading us until we read them,
 * and the socket holds only a few hundred small messages (the kernel charges each
 * one a whole buffer), so a blocking send here could wait forever on a server that
 * waits for us to read: the sends must go on between the reads. */
static int send_gets(int fd, const uint8_t *m, size_t len, size_t n, size_t *sent)
{
    while (*sent < n * len) {
        size_t off = *sent % len;
        ssize_t k = send(fd, m + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        *sent += (size_t)k;
    }
    return 0;
}

static int pipelined_gets(const uint8_t *big)
{
    enum { NGETS = 400 }; /* 25 MiB: more than any socket buffer holds */
    static uint8_t reply[WEFT_BOOT_PROTO_HDR_SIZE + WEFT_BOOT_PROTO_BODY_MAX];
    uint8_t m[64];
    int fd = -1;
    /* The server may not have processed our BYE yet: then it says "already connected". */
    for (int tries = 0; tries < 100; tries++) {
        fd = raw_connect();
        if (fd < 0)
            break;
        size_t l = hello(m, 1, (uint32_t)atoi(getenv("WEFT_SIZE")), getenv("WEFT_JOBID"));
        if (send(fd, m, l, MSG_NOSIGNAL) != (ssize_t)l || recv_exact(fd, reply, 16) != 0)
            goto err;
        if ((int32_t)weft__boot_get32(reply + 12) == WEFT_OK)
            break;
        close(fd);
        fd = -1;
        usleep(10000);
    }
    if (fd < 0)
        goto err;
    weft__boot_hdr_encode(m, WEFT_BOOT_MSG_GET, 5);
    weft__boot_put16(m + 12, 3);
    memcpy(m + 14, "big", 3);
    size_t sent = 0;
    if (send_gets(fd, m, 17, NGETS, &sent) != 0)
        goto err;
    usleep(200000); /* let the replies pile up on the server's side */
    for (int i = 0; i < NGETS; i++) {
        /* Send the rest as the server takes them; wait only for GET i itself. */
        if (send_gets(fd, m, 17, NGETS, &sent) != 0)
            goto err;
        while (sent < (size_t)(i + 1) * 17) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            if (poll(&pf, 1, 10000) != 1 || send_gets(fd, m, 17, NGETS, &sent) != 0)
                goto err;
        }
        weft_boot_hdr_t h;
        if (recv_exact(fd, reply, 12) != 0 || weft__boot_hdr_decode(reply, &h) != 0 ||
            h.type != WEFT_BOOT_MSG_GET_REPLY || h.body_len != 8 + WEFT_BOOT_VALUE_MAX ||
            recv_exact(fd, reply + 12, h.body_len) != 0 ||
            weft__boot_get32(reply + 12) != WEFT_OK ||
            memcmp(reply + 20, big, WEFT_BOOT_VALUE_MAX) != 0) {
            fprintf(stderr, "boot_badclient: pipelined get %d: bad reply\n", i);
            goto err;
        }
    }
    /* Leave as weft__boot_fini does: an exit without BYE is a failure. */
    weft__boot_hdr_encode(m, WEFT_BOOT_MSG_BYE, 0);
    send(fd, m, WEFT_BOOT_PROTO_HDR_SIZE, MSG_NOSIGNAL);
    close(fd);
    printf("boot_badclient: %d pipelined gets of 64 KiB ok\n", NGETS);
    return 0;

err:
    fprintf(stderr, "boot_badclient: pipelined gets failed\n");
    if (fd >= 0)
        close(fd);
    return -1;
}

/* The test cases: each builds its message for the nonce just received. */
static size_t b_4gib(uint8_t *m, const char *id, uint32_t size)
{
    weft__boot_hdr_encode(m, WEFT_BOOT_MSG_PUT, 0xffffffffu);
    return 12;
}

static size_t b_over(uint8_t *m, const char *id, uint32_t size)
{
    weft__boot_hdr_encode(m, WEFT_BOOT_MSG_PUT, WEFT_BOOT_PROTO_BODY_MAX + 1);
    return 12;
}

static size_t b_unknown(uint8_t *m, const char *id, uint32_t size)
{
    weft__boot_hdr_encode(m, 999, 0);
    return 12;
}

static size_t b_magic(uint8_t *m, const char *id, uint32_t size)
{
    memcpy(m, "GET / HTTP/1.0\r\n\r\n", 18);
    return 18;
}

static size_t b_fence(uint8_t *m, const char *id, uint32_t size)
{
    weft__boot_hdr_encode(m, WEFT_BOOT_MSG_FENCE, 0);
    return 12;
}

static size_t b_wrong_job(uint8_t *m, const char *id, uint32_t size)
{
    return hello(m, 1, size, "someone-else");
}

static size_t b_wrong_proof(uint8_t *m, const char *id, uint32_t size)
{
    size_t l = hello(m, 1, size, id);
    m[l - 1] ^= 1; /* one bit of the proof */
    return l;
}

static size_t b_other_nonce(uint8_t *m, const char *id, uint32_t size)
{
    memset(nonce, 0, sizeof nonce); /* what a replayed or guessed HELLO would hold */
    return hello(m, 1, size, id);
}

static size_t b_lifeline_wrong(uint8_t *m, const char *id, uint32_t size)
{
    size_t l = hello(m, 1, size, id);
    weft__boot_hdr_encode(m, WEFT_BOOT_MSG_LIFELINE, (uint32_t)(l - 12));
    m[l - 3] ^= 0x80;
    return l;
}

static size_t b_already(uint8_t *m, const char *id, uint32_t size)
{
    return hello(m, 1, size, id);
}

static size_t b_range(uint8_t *m, const char *id, uint32_t size)
{
    return hello(m, size, size, id);
}

static size_t b_wrong_size(uint8_t *m, const char *id, uint32_t size)
{
    return hello(m, 0, 1000, id);
}

/* HELLO with a job id length that runs past the body. */
static size_t b_id_past(uint8_t *m, const char *id, uint32_t size)
{
    size_t l = hello(m, 1, size, id);
    weft__boot_put16(m + 20, 200);
    return l;
}

/* A version 1 HELLO: no proof. */
static size_t b_proof_cut(uint8_t *m, const char *id, uint32_t size)
{
    size_t l = hello(m, 1, size, id) - WEFT_BOOT_PROOF_LEN;
    weft__boot_hdr_encode(m, WEFT_BOOT_MSG_HELLO, (uint32_t)(l - 12));
    return l;
}

int main(void)
{
    if (!getenv("WEFT_BOOT_ADDR")) {
        fprintf(stderr, "boot_badclient: needs weftrun; skipped\n");
        return 77;
    }
    weft_boot_t *b;
    int rc = weft__boot_init(&b);
    if (rc != WEFT_OK) {
        fprintf(stderr, "boot_badclient: init: %s\n", weft_strerror(rc));
        return 1;
    }
    int rank = weft__boot_rank(b), size = weft__boot_size(b);
    memcpy(secret, weft__boot_secret(b), sizeof secret);
    /* Everyone is connected before rank 0 impersonates rank 1. */
    rc = weft__boot_fence(b);

    if (rank == 0 && rc == WEFT_OK) {
        const char *id = weft__boot_job_id(b);
        uint32_t sz = (uint32_t)size;
        expect_closed("4 GiB body length", b_4gib, id, sz, 0);
        expect_closed("body one byte over the limit", b_over, id, sz, 0);
        expect_closed("unknown type", b_unknown, id, sz, 0);
        expect_closed("bad magic", b_magic, id, sz, 0);
        expect_closed("FENCE before HELLO", b_fence, id, sz, 0);
        expect_closed("wrong job id", b_wrong_job, id, sz, WEFT_EPERM);
        expect_closed("wrong proof", b_wrong_proof, id, sz, WEFT_EPERM);
        expect_closed("proof for another nonce", b_other_nonce, id, sz, WEFT_EPERM);
        expect_closed("lifeline with a wrong proof", b_lifeline_wrong, id, sz, WEFT_EPERM);
        expect_closed("rank already connected", b_already, id, sz, WEFT_ESTATE);
        expect_closed("rank out of range", b_range, id, sz, WEFT_ERANK);
        expect_closed("wrong size", b_wrong_size, id, sz, WEFT_ERANK);
        expect_closed("job id length past the body", b_id_past, id, sz, 0);
        expect_closed("HELLO with the proof cut off", b_proof_cut, id, sz, 0);
        uint8_t m[512];

        /* Half a header, then gone; and a header promising more than comes. */
        int fd = raw_connect();
        if (fd >= 0) {
            send(fd, m, 5, MSG_NOSIGNAL);
            close(fd);
        }
        fd = raw_connect();
        if (fd >= 0) {
            weft__boot_hdr_encode(m, WEFT_BOOT_MSG_PUT, 300);
            send(fd, m, 40, MSG_NOSIGNAL);
            close(fd);
        }
        printf("boot_badclient: half messages sent\n");
    }

    /* The server still serves the real ranks. */
    static uint8_t big[WEFT_BOOT_VALUE_MAX];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7 + 3);
    if (rc == WEFT_OK && rank == 0)
        rc = weft__boot_put(b, "big", big, sizeof big);
    if (rc == WEFT_OK)
        rc = weft__boot_put(b, "after", &rank, sizeof rank);
    if (rc == WEFT_OK)
        rc = weft__boot_fence(b);
    for (int r = 0; rc == WEFT_OK && r < size; r++) {
        int v = -1;
        size_t len = sizeof v;
        rc = weft__boot_fence(b);
        if (rc == WEFT_OK)
            rc = weft__boot_get(b, "after", &v, &len);
        if (rc == WEFT_OK && (len != sizeof v || v < 0 || v >= size))
            rc = WEFT_EPROTO;
    }
    if (rc != WEFT_OK) {
        fprintf(stderr, "boot_badclient: rank %d: %s\n", rank, weft_strerror(rc));
        failures++;
    }
    weft__boot_fini(b);

    /* A rank that leaves may join again. Rank 1 does, by hand, and sends many gets
     * of the 64 KiB value, as many as the socket takes, before reading any reply:
     * the server must stop reading it for a while (the replies exceed its high-water
     * mark), not grow or stall, and resume once the replies are read. */
    if (rank == 1 && size >= 2 && rc == WEFT_OK && pipelined_gets(big) != 0)
        failures++;
    if (failures)
        return 1;
    printf("boot_badclient: rank %d ok\n", rank);
    return 0;
}
