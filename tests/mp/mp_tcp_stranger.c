/* Strangers at a rank's tcp port (run with WEFT_DRIVERS=tcp, 2 ranks, a short
 * WEFT_TCP_HANDSHAKE_MS). Rank 1 reads rank 0's published address (addr.tcp.0,
 * from the job's key-value store) and, while rank 0 keeps progressing, plays
 * five strangers against it:
 *   1. garbage bytes instead of a HELLO;
 *   2. a well-formed HELLO, then a PROOF that is not SipHash under the secret;
 *   3. a HELLO and then silence (a half handshake);
 *   4. a connection that sends nothing at all (slow loris);
 *   5. a HELLO with another protocol version;
 *   6. a connection rank 0 accepts, whose deadline passes while rank 0 is
 *      out of the library (it sleeps, as a computing rank does), and which
 *      sends a byte meanwhile: rank 0's next poll finds both the byte's event
 *      and the expired deadline for the same connection.
 * Each must be closed by rank 0 (EOF or reset seen here within a bounded time),
 * rank 0 must log one "refused a connection from <address>" line for each (the
 * ctest wrapper counts them), and the job's own traffic afterwards must be
 * intact. With the argument "flood", rank 1 plays FLOOD garbage strangers one
 * after the other instead: each is closed, and rank 0 logs at most 10 lines a
 * second about them, then how many more it refused (the wrapper checks). */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include "../common/test_util.h"
#include "core/core_int.h"
#include "drivers/tcp/tcp_int.h"

static int dial(const tcp_addr_t *a)
{
    struct sockaddr_storage ss;
    socklen_t len = weft__tcp_addr_sockaddr(a, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) != 0) {
        perror("stranger: connect");
        exit(1);
    }
    return fd;
}

/* Read until the other side closes; true if it did within limit seconds.
 * *got receives the bytes it sent first. */
static bool closed_within(int fd, double limit, size_t *got)
{
    double end = test_now_s() + limit;
    *got = 0;
    for (;;) {
        double left = end - test_now_s();
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        char buf[256];
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET))
            return true;
        if (r < 0 && errno != EINTR)
            return true;
        if (r > 0)
            *got += (size_t)r;
    }
}

static void send_bytes(int fd, const void *buf, size_t len)
{
    CHECK(send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len);
}

static void hello(uint8_t *buf, uint32_t client, uint32_t server, uint32_t size)
{
    tcp_hs_msg_t m = {
        .type = TCP_HS_HELLO, .client_rank = client, .server_rank = server, .size = size};
    memset(m.nonce, 0x42, sizeof m.nonce);
    weft__tcp_hs_encode(buf, &m);
}

enum { FLOOD = 300 };

/* Rank 1's flood of garbage strangers at rank 0's address. */
static void flood(const tcp_addr_t *a)
{
    uint8_t msg[TCP_HELLO_LEN];
    memset(msg, 0x5A, sizeof msg);
    int closed = 0;
    for (int i = 0; i < FLOOD; i++) {
        size_t got;
        int fd = dial(a);
        send_bytes(fd, msg, sizeof msg);
        closed += closed_within(fd, 10, &got) && got == 0;
        close(fd);
    }
    CHECK(closed == FLOOD);
}

int main(int argc, char **argv)
{
    bool flooding = argc > 1 && !strcmp(argv[1], "flood");
    test_watchdog(100);
    weft_ctx_t *ctx = test_init("mp_tcp_stranger", 2);
    if (flooding) {
        /* Rank 0 progresses in test_note until rank 1 is done. */
        if (test_rank == 0) {
            test_note(ctx, 1, false, 7, 1);
        } else if (test_rank == 1) {
            uint8_t blob[WEFT_ADDR_MAX];
            size_t len = sizeof blob;
            tcp_addr_t a;
            MUST(weft__boot_get(ctx->boot, "addr.tcp.0", blob, &len));
            MUST(weft__tcp_addr_decode(blob, len, &a));
            flood(&a);
            test_note(ctx, 0, true, 7, 1);
        }
        MUST(weft_finalize(ctx));
        return test_summary("mp_tcp_stranger");
    }
    if (test_rank == 0) {
        /* The victim: keeps progressing while rank 1 plays strangers 1 to 5
         * and opens the sixth, then leaves the library for longer than the
         * handshake time, then progresses again until rank 1 is done. */
        test_note(ctx, 1, false, 7, 1);
        struct timespec nap = {.tv_sec = 2, .tv_nsec = 500000000};
        nanosleep(&nap, NULL);
        test_note(ctx, 1, false, 7, 2);
    } else if (test_rank == 1) {
        uint8_t blob[WEFT_ADDR_MAX];
        size_t len = sizeof blob;
        tcp_addr_t a;
        MUST(weft__boot_get(ctx->boot, "addr.tcp.0", blob, &len));
        MUST(weft__tcp_addr_decode(blob, len, &a));
        uint8_t msg[TCP_HS_MAX];
        size_t got;
        int fd;

        /* 1. Garbage. */
        fd = dial(&a);
        memset(msg, 0xA5, sizeof msg);
        send_bytes(fd, msg, TCP_HELLO_LEN);
        CHECK(closed_within(fd, 5, &got) && got == 0);
        close(fd);

        /* 2. A HELLO, then a wrong PROOF. */
        fd = dial(&a);
        hello(msg, 1, 0, 2);
        send_bytes(fd, msg, TCP_HELLO_LEN);
        uint8_t chal[TCP_CHAL_LEN];
        CHECK(recv(fd, chal, sizeof chal, MSG_WAITALL) == (ssize_t)sizeof chal);
        tcp_hs_msg_t p = {.type = TCP_HS_PROOF,
                          .client_rank = 1,
                          .server_rank = 0,
                          .size = 2,
                          .proof = 0x0123456789abcdefull};
        weft__tcp_hs_encode(msg, &p);
        send_bytes(fd, msg, TCP_PROOF_LEN);
        CHECK(closed_within(fd, 5, &got) && got == 0);
        close(fd);

        /* 3. A HELLO and then silence: closed after the handshake timeout. */
        fd = dial(&a);
        hello(msg, 1, 0, 2);
        send_bytes(fd, msg, TCP_HELLO_LEN);
        CHECK(closed_within(fd, 10, &got) && got == TCP_CHAL_LEN); /* 10 x the timeout */
        close(fd);

        /* 4. Nothing at all. */
        fd = dial(&a);
        CHECK(closed_within(fd, 10, &got) && got == 0);
        close(fd);

        /* 5. Another version. */
        fd = dial(&a);
        hello(msg, 1, 0, 2);
        msg[4] = 99;
        send_bytes(fd, msg, TCP_HELLO_LEN);
        CHECK(closed_within(fd, 5, &got) && got == 0);
        close(fd);

        /* 6. Accepted while rank 0 progresses; then rank 0 sleeps past the
         * handshake deadline, and a byte arrives meanwhile. */
        fd = dial(&a);
        struct timespec wait = {.tv_sec = 0, .tv_nsec = 300000000};
        nanosleep(&wait, NULL); /* rank 0 accepts it */
        test_note(ctx, 0, true, 7, 1);
        wait.tv_nsec = 500000000;
        nanosleep(&wait, NULL);
        send_bytes(fd, msg, 1);
        CHECK(closed_within(fd, 10, &got) && got == 0);
        close(fd);

        test_note(ctx, 0, true, 7, 2);
    }
    /* The job itself is unharmed: a round of real traffic, eager and
     * rendezvous, both ways. */
    static uint8_t sbuf[1 << 20], rbuf[1 << 20];
    if (test_rank < 2) {
        int peer = 1 - test_rank;
        for (size_t len = 1; len <= sizeof sbuf; len *= 16) {
            weft_request_t *s, *r;
            weft_status_t st;
            test_fill(sbuf, len, (uint64_t)(len + (size_t)test_rank));
            MUST(weft_sr_irecv(ctx, peer, 0, len, rbuf, len, &r));
            MUST(weft_sr_isend(ctx, peer, 0, len, sbuf, len, &s));
            MUST(weft_sr_wait(ctx, s, NULL));
            MUST(weft_sr_wait(ctx, r, &st));
            CHECK(st.length == len && test_verify(rbuf, len, (uint64_t)(len + (size_t)peer)) < 0);
        }
    }
    weft_counters_t c;
    MUST(weft_counters_get(ctx, &c));
    MUST(weft_finalize(ctx));
    return test_summary("mp_tcp_stranger");
}
