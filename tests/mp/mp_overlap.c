/* Truly asynchronous rendezvous on shared memory (coop.c): a large message
 * moves while its peer computes, without the peer entering the library.
 *
 * 1. Receiver away: rank 1 posts a receive, tells rank 0 to go, and from then
 *    on never calls weft until the data is in its buffer; rank 0's isend +
 *    wait must move every byte (it claims the published receive).
 * 2. Sender away: rank 0 sends, tells rank 1 to go, and never calls weft until
 *    rank 1 says (through a file, outside weft) that its receive completed;
 *    rank 1's wait must move every byte by itself.
 *    Every piece rank 1 moved, it copied after releasing the engine lock
 *    (the gate's pieces_unlocked counts them).
 * 3. A published receive that nobody claimed can still be canceled, and the
 *    message then goes to the next receive.
 * 4. Sender away, two threads of the receiver: each waits for a large message
 *    of its own, and they copy pieces side by side, outside the engine lock
 *    (TSan checks the sharing); every piece of both messages is moved by
 *    rank 1, and every one unlocked.
 * Each waiting side gives up after 20 s, and the check fails.
 * Runs on 2 ranks of one node, at WEFT_THREAD_MULTIPLE. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include "../common/test_util.h"

#define SIZE      (4u << 20)
#define GIVE_UP_S 20.0

/* Pieces rank 1 moved of messages from rank 0: all, and those unlocked. */
static void pieces(weft_ctx_t *ctx, uint64_t *moved, uint64_t *unlocked)
{
    weft_gate_counters_t gc = {.field_mask = WEFT_GATE_COUNTERS_ALL};
    MUST(weft_counters_gate(ctx, 0, &gc));
    CHECK(gc.field_mask & WEFT_GATE_COUNTERS_V3);
    *moved = gc.pieces_moved;
    *unlocked = gc.pieces_unlocked;
}

/* The pieces of a message of SIZE bytes (WEFT_RDV_PIECE, default 256 KiB). */
static uint64_t pieces_of_size(void)
{
    const char *e = getenv("WEFT_RDV_PIECE");
    uint64_t piece = e ? strtoull(e, NULL, 0) : 256u << 10;
    return (SIZE + piece - 1) / piece;
}

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

/* Say "done" to the other rank outside weft. */
static void touch(const char *flag)
{
    int fd = open(flag, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
}

/* Wait (outside weft) for the other rank's "done". */
static void wait_flag(const char *flag)
{
    double start = test_now_s();
    struct stat sb;
    bool seen = false;
    while (!(seen = stat(flag, &sb) == 0) && test_now_s() - start < GIVE_UP_S)
        usleep(1000);
    CHECK(seen);
}

static void sender_away(weft_ctx_t *ctx, int me, uint8_t *buf, const char *flag)
{
    weft_request_t *r;
    weft_status_t st;
    if (me == 0) {
        test_fill(buf, SIZE, 20);
        MUST(weft_sr_isend(ctx, 1, 0, 20, buf, SIZE, &r));
        go(ctx, 1, 21);
        wait_flag(flag);
        MUST(weft_sr_wait(ctx, r, NULL));
        unlink(flag);
    } else {
        memset(buf, 0, SIZE);
        wait_go(ctx, 0, 21);
        uint64_t moved0, unlocked0, moved, unlocked;
        pieces(ctx, &moved0, &unlocked0);
        MUST(weft_sr_irecv(ctx, 0, 0, 20, buf, SIZE, &r));
        MUST(weft_sr_wait(ctx, r, &st));
        touch(flag);
        CHECK(st.length == SIZE && test_verify(buf, SIZE, 20) < 0);
        pieces(ctx, &moved, &unlocked);
        CHECK(moved - moved0 == pieces_of_size());
        CHECK(unlocked - unlocked0 == moved - moved0);
    }
}

typedef struct waiter {
    pthread_t thread;
    weft_ctx_t *ctx;
    uint8_t *buf;
    uint64_t tag;
    bool ok; /* checked by the main thread (the checks' counts are not atomic) */
} waiter_t;

static void *wait_one(void *arg)
{
    waiter_t *w = arg;
    weft_request_t *r;
    weft_status_t st;
    memset(w->buf, 0, SIZE);
    MUST(weft_sr_irecv(w->ctx, 0, 0, w->tag, w->buf, SIZE, &r));
    MUST(weft_sr_wait(w->ctx, r, &st));
    w->ok = st.length == SIZE && test_verify(w->buf, SIZE, w->tag) < 0;
    return NULL;
}

static void two_waiters(weft_ctx_t *ctx, int me, uint8_t *buf, uint8_t *buf2, const char *flag)
{
    weft_request_t *r[2];
    if (me == 0) {
        test_fill(buf, SIZE, 40);
        test_fill(buf2, SIZE, 41);
        MUST(weft_sr_isend(ctx, 1, 0, 40, buf, SIZE, &r[0]));
        MUST(weft_sr_isend(ctx, 1, 0, 41, buf2, SIZE, &r[1]));
        go(ctx, 1, 42);
        wait_flag(flag);
        MUST(weft_sr_waitall(ctx, 2, r, NULL));
        unlink(flag);
    } else {
        wait_go(ctx, 0, 42);
        uint64_t moved0, unlocked0, moved, unlocked;
        pieces(ctx, &moved0, &unlocked0);
        waiter_t w[2] = {{.ctx = ctx, .buf = buf, .tag = 40}, {.ctx = ctx, .buf = buf2, .tag = 41}};
        for (int i = 0; i < 2; i++)
            CHECK(pthread_create(&w[i].thread, NULL, wait_one, &w[i]) == 0);
        for (int i = 0; i < 2; i++)
            pthread_join(w[i].thread, NULL);
        touch(flag);
        CHECK(w[0].ok && w[1].ok);
        pieces(ctx, &moved, &unlocked);
        CHECK(moved - moved0 == 2 * pieces_of_size());
        CHECK(unlocked - unlocked0 == moved - moved0);
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
    weft_init_params_t params = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                                 .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&params, &ctx));
    int me = test_rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "mp_overlap runs on 2 ranks\n");
        return 2;
    }
    uint8_t *buf = malloc(SIZE), *buf2 = malloc(SIZE);
    char flag[128];
    snprintf(flag, sizeof flag, "%s/weft-mp-overlap-%d",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getppid());
    receiver_away(ctx, me, buf);
    sender_away(ctx, me, buf, flag);
    cancel_published(ctx, me, buf);
    two_waiters(ctx, me, buf, buf2, flag);
    MUST(weft_finalize(ctx));
    free(buf);
    free(buf2);
    return test_summary("mp_overlap");
}
