/* Truly asynchronous rendezvous on shared memory (coop.c): a large message
 * moves while its peer computes, without the peer entering the library.
 *
 * 1. Receiver away: rank 1 posts a receive, tells rank 0 to go, and from then
 *    on never calls weft until the data is in its buffer; rank 0's isend +
 *    wait must move every byte (it claims the published receive).
 * 2. Sender away: rank 0 sends, tells rank 1 to go, and never calls weft until
 *    rank 1 says (through a file, outside weft) that its receive completed;
 *    rank 1's wait must move every byte by itself.
 * 3. A published receive that nobody claimed can still be canceled, and the
 *    message then goes to the next receive.
 * Each waiting side gives up after 20 s, and the check fails.
 * Runs on 2 ranks of one node. */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "../common/test_util.h"

#define SIZE      (4u << 20)
#define GIVE_UP_S 20.0

static void go(weft_ctx_t *ctx, int peer, uint64_t tag)
{
    char b = 1;
    weft_request_t *r;
    MUST(weft_sr_isend(ctx, peer, 0, tag, &b, 1, &r));
    MUST(weft_sr_wait(ctx, r, NULL));
}

static void wait_go(weft_ctx_t *ctx, int peer, uint64_t tag)
{
    char b = 0;
    weft_request_t *r;
    MUST(weft_sr_irecv(ctx, peer, 0, tag, &b, 1, &r));
    MUST(weft_sr_wait(ctx, r, NULL));
}

static void receiver_away(weft_ctx_t *ctx, int me, uint8_t *buf)
{
    weft_status_t st;
    weft_request_t *r;
    if (me == 1) {
        memset(buf, 0, SIZE);
        MUST(weft_sr_irecv(ctx, 0, 0, 10, buf, SIZE, &r));
        go(ctx, 0, 11);
        /* Away from the library: only look at the buffer. */
        double start = test_now_s();
        bool full = false;
        while (!full && test_now_s() - start < GIVE_UP_S) {
            __asm__ volatile("" ::: "memory");
            full = buf[SIZE - 1] == test_byte(10, SIZE - 1) && test_verify(buf, SIZE, 10) < 0;
        }
        CHECK(full);
        MUST(weft_sr_wait(ctx, r, &st));
        CHECK(st.length == SIZE && st.source == 0 && st.tag == 10);
        CHECK(test_verify(buf, SIZE, 10) < 0);
    } else {
        test_fill(buf, SIZE, 10);
        wait_go(ctx, 1, 11);
        MUST(weft_sr_isend(ctx, 1, 0, 10, buf, SIZE, &r));
        MUST(weft_sr_wait(ctx, r, NULL));
        weft_counters_t c;
        MUST(weft_counters_get(ctx, &c));
        CHECK(c.rdv_claimed == 1);
    }
}

static void sender_away(weft_ctx_t *ctx, int me, uint8_t *buf, const char *flag)
{
    weft_request_t *r;
    weft_status_t st;
    if (me == 0) {
        test_fill(buf, SIZE, 20);
        MUST(weft_sr_isend(ctx, 1, 0, 20, buf, SIZE, &r));
        go(ctx, 1, 21);
        double start = test_now_s();
        struct stat sb;
        bool seen = false;
        while (!(seen = stat(flag, &sb) == 0) && test_now_s() - start < GIVE_UP_S)
            usleep(1000);
        CHECK(seen);
        MUST(weft_sr_wait(ctx, r, NULL));
        unlink(flag);
    } else {
        memset(buf, 0, SIZE);
        wait_go(ctx, 0, 21);
        MUST(weft_sr_irecv(ctx, 0, 0, 20, buf, SIZE, &r));
        MUST(weft_sr_wait(ctx, r, &st));
        int fd = open(flag, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        CHECK(fd >= 0);
        if (fd >= 0)
            close(fd);
        CHECK(st.length == SIZE && test_verify(buf, SIZE, 20) < 0);
    }
}

static void cancel_published(weft_ctx_t *ctx, int me, uint8_t *buf)
{
    weft_request_t *r;
    weft_status_t st;
    if (me == 1) {
        MUST(weft_sr_irecv(ctx, 0, 0, 30, buf, SIZE, &r));
        MUST(weft_sr_cancel(ctx, r));
        CHECK(weft_sr_wait(ctx, r, &st) == WEFT_ECANCELED);
        memset(buf, 0, SIZE);
        MUST(weft_sr_irecv(ctx, 0, 0, 30, buf, SIZE, &r));
        go(ctx, 0, 31);
        MUST(weft_sr_wait(ctx, r, &st));
        CHECK(st.length == SIZE && test_verify(buf, SIZE, 30) < 0);
    } else {
        test_fill(buf, SIZE, 30);
        wait_go(ctx, 1, 31);
        MUST(weft_sr_isend(ctx, 1, 0, 30, buf, SIZE, &r));
        MUST(weft_sr_wait(ctx, r, NULL));
    }
}

int main(void)
{
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    int me = test_rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "mp_overlap runs on 2 ranks\n");
        return 2;
    }
    uint8_t *buf = malloc(SIZE);
    char flag[128];
    snprintf(flag, sizeof flag, "%s/weft-mp-overlap-%d",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getppid());
    receiver_away(ctx, me, buf);
    sender_away(ctx, me, buf, flag);
    cancel_published(ctx, me, buf);
    MUST(weft_finalize(ctx));
    free(buf);
    return test_summary("mp_overlap");
}
