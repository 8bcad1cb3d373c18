/* Many outstanding requests: every rank posts about 2000 receives (specific
 * source and tag) and 2000 sends spread over its peers, with sizes from 0 B to
 * 256 KiB so eager and rendezvous messages mix in one stream, then completes
 * them all. Phase 1 posts the receives first and uses waitall; phase 2 sends
 * first (most messages arrive unexpected), posts the receives in reverse
 * order and completes everything through a testany loop. Every byte is
 * checked, and so is every status. Some sends and receives use iovecs.
 * Optional argument: messages per rank. */

#include "../common/test_util.h"

#define MAX_LEN (256u << 10)

static int nranks, nmsg;

/* Deterministic size of message j from src to dst: mostly small, some around
 * the rendezvous threshold, a few large. */
static size_t msg_len(int src, int dst, int j, int phase)
{
    uint64_t h = (uint64_t)src * 1000003u + (uint64_t)dst * 10007u + (uint64_t)j * 31u +
                 (uint64_t)phase * 7777777u;
    h = test_byte(h, 0) | ((uint64_t)test_byte(h, 1) << 8) | ((uint64_t)test_byte(h, 2) << 16) |
        ((uint64_t)test_byte(h, 3) << 24);
    unsigned cls = h % 100;
    h >>= 7;
    if (j % 97 == 0)
        return 0;
    if (cls < 78)
        return h % 1025;
    if (cls < 95)
        return 1024 + h % (40u << 10);
    return (64u << 10) + h % (MAX_LEN - (64u << 10) + 1);
}

static uint64_t msg_key(int src, int dst, int j, int phase)
{
    return ((uint64_t)phase << 60) | ((uint64_t)src << 40) | ((uint64_t)dst << 24) | (uint64_t)j;
}

/* Messages this rank sends: nmsg spread round-robin over the other ranks (or to
 * itself when alone). Message k of this rank goes to peer_of(k), as its
 * (k / npeers)-th message to that peer. */
static int peer_of(int me, int k)
{
    if (nranks == 1)
        return me;
    int p = k % (nranks - 1);
    return p >= me ? p + 1 : p;
}

/* Some messages go as iovecs: the buffer in three pieces, one of them empty
 * (the scattered rendezvous path cannot use a single-copy read). */
static int split3(uint8_t *buf, size_t len, struct iovec *iov)
{
    size_t a = len / 3;
    iov[0] = (struct iovec){buf, a};
    iov[1] = (struct iovec){buf + a, 0};
    iov[2] = (struct iovec){buf + a, len - a};
    return 3;
}

static int post_send(weft_ctx_t *ctx, int k, int peer, uint32_t comm, uint64_t tag, uint8_t *buf,
                     size_t len, weft_request_t **req)
{
    if (k % 5 == 1) {
        struct iovec iov[3];
        int n = split3(buf, len, iov);
        return weft_sr_isendv(ctx, peer, comm, tag, iov, n, req);
    }
    return weft_sr_isend(ctx, peer, comm, tag, buf, len, req);
}

static int post_recv(weft_ctx_t *ctx, int k, int peer, uint32_t comm, uint64_t tag, uint8_t *buf,
                     size_t len, weft_request_t **req)
{
    if (k % 7 == 2) {
        struct iovec iov[3];
        int n = split3(buf, len, iov);
        return weft_sr_irecvv(ctx, peer, comm, tag, iov, n, req);
    }
    return weft_sr_irecv(ctx, peer, comm, tag, buf, len, req);
}

typedef struct slot {
    uint8_t *buf;
    size_t len;
    int peer;
    int j;
} slot_t;

static void check_recv(const slot_t *s, const weft_status_t *st, int rc, int me, int phase,
                       uint32_t comm)
{
    CHECK(rc == WEFT_OK);
    CHECK(st->source == s->peer && st->tag == (uint64_t)s->j && st->comm == comm &&
          st->length == s->len && st->error == WEFT_OK);
    long bad = test_verify(s->buf, s->len, msg_key(s->peer, me, s->j, phase));
    if (bad >= 0)
        fprintf(stderr, "[rank %d] phase %d: message %d from %d (%zu B): wrong byte at %ld\n", me,
                phase, s->j, s->peer, s->len, bad);
    CHECK(bad < 0);
    CHECK(s->buf[s->len] == 0x5A);
}

int main(int argc, char **argv)
{
    test_watchdog(290); /* ctest bounds each variant; ten times a loaded ASan run */
    nmsg = argc > 1 ? atoi(argv[1]) : 2000;
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    test_rank = weft_rank(ctx);
    nranks = weft_size(ctx);
    int me = test_rank;
    int npeers = nranks > 1 ? nranks - 1 : 1;
    int per_peer = (nmsg + npeers - 1) / npeers;
    nmsg = per_peer * npeers; /* every peer gets as many as it expects */

    slot_t *sends = calloc((size_t)nmsg, sizeof *sends);
    slot_t *recvs = calloc((size_t)nmsg, sizeof *recvs);
    weft_request_t **reqs = calloc((size_t)nmsg * 2, sizeof *reqs);
    weft_status_t *sts = calloc((size_t)nmsg * 2, sizeof *sts);
    if (!sends || !recvs || !reqs || !sts)
        return 1;

    for (int phase = 1; phase <= 2; phase++) {
        uint32_t comm = (uint32_t)phase;
        /* What this rank sends and what it expects: as many messages from each
         * peer as it sends to each. */
        for (int k = 0; k < nmsg; k++) {
            int p = peer_of(me, k), j = k / npeers;
            slot_t *s = &sends[k];
            s->peer = p;
            s->j = j;
            s->len = msg_len(me, p, j, phase);
            s->buf = malloc(s->len + 1);
            test_fill(s->buf, s->len, msg_key(me, p, j, phase));
            slot_t *r = &recvs[k];
            r->peer = p;
            r->j = j;
            r->len = msg_len(p, me, j, phase);
            r->buf = malloc(r->len + 1);
            memset(r->buf, 0x5A, r->len + 1);
            if (!s->buf || !r->buf)
                return 1;
        }
        if (phase == 1) {
            /* Receives first, then sends, then one waitall over all of them. */
            for (int k = 0; k < nmsg; k++)
                MUST(post_recv(ctx, k, recvs[k].peer, comm, (uint64_t)recvs[k].j, recvs[k].buf,
                               recvs[k].len, &reqs[k]));
            for (int k = 0; k < nmsg; k++)
                MUST(post_send(ctx, k, sends[k].peer, comm, (uint64_t)sends[k].j, sends[k].buf,
                               sends[k].len, &reqs[nmsg + k]));
            int rc = weft_sr_waitall(ctx, 2 * nmsg, reqs, sts);
            CHECK(rc == WEFT_OK);
            for (int k = 0; k < 2 * nmsg; k++)
                CHECK(reqs[k] == NULL);
            for (int k = 0; k < nmsg; k++) {
                check_recv(&recvs[k], &sts[k], sts[k].error, me, phase, comm);
                CHECK(sts[nmsg + k].error == WEFT_OK);
            }
        } else {
            /* Sends first, receives in reverse order, completion by testany. */
            for (int k = 0; k < nmsg; k++)
                MUST(post_send(ctx, k, sends[k].peer, comm, (uint64_t)sends[k].j, sends[k].buf,
                               sends[k].len, &reqs[nmsg + k]));
            /* Poll a while first, so that messages arrive before their
             * receives: eager ones are kept aside, rendezvous as descriptors. */
            weft_idle_t idle = {0};
            for (int i = 0; i < 2000; i++)
                if (weft_progress(ctx) <= 0)
                    weft_idle(ctx, &idle); /* the waiting policy's idle step */
            for (int k = nmsg - 1; k >= 0; k--)
                MUST(post_recv(ctx, k, recvs[k].peer, comm, (uint64_t)recvs[k].j, recvs[k].buf,
                               recvs[k].len, &reqs[k]));
            int left = 2 * nmsg;
            idle = (weft_idle_t){0};
            long calls = 0;
            while (left > 0) {
                int index = -2, flag = 0;
                weft_status_t st;
                int rc = weft_sr_testany(ctx, 2 * nmsg, reqs, &index, &flag, &st);
                calls++;
                if (!flag) {
                    CHECK(rc == WEFT_OK);
                    weft_idle(ctx, &idle); /* oversubscribed: lets the peers run */
                    continue;
                }
                idle = (weft_idle_t){0};
                if (index < 0 || index >= 2 * nmsg) {
                    CHECK(index >= 0 && index < 2 * nmsg);
                    break;
                }
                CHECK(reqs[index] == NULL);
                left--;
                if (index < nmsg) {
                    check_recv(&recvs[index], &st, rc, me, phase, comm);
                } else {
                    CHECK(rc == WEFT_OK && st.error == WEFT_OK);
                }
            }
            int index = 0, flag = 0;
            CHECK(weft_sr_testany(ctx, 2 * nmsg, reqs, &index, &flag, NULL) == WEFT_OK &&
                  flag == 1 && index == -1);
            (void)calls;
        }
        for (int k = 0; k < nmsg; k++) {
            free(sends[k].buf);
            free(recvs[k].buf);
        }
    }

    weft_counters_t c;
    MUST(weft_counters_get(ctx, &c));
    CHECK(nranks == 1 || (c.eager_sent > 0 && c.rdv_sent > 0));
    if (me == 0)
        printf("mp_many: %d ranks, %d messages per rank per phase; eager %llu, rendezvous %llu, "
               "unexpected peak %llu\n",
               nranks, nmsg, (unsigned long long)c.eager_sent, (unsigned long long)c.rdv_sent,
               (unsigned long long)c.unexpected_max);
    MUST(weft_finalize(ctx));
    free(sends);
    free(recvs);
    free(reqs);
    free(sts);
    return test_summary("mp_many");
}
