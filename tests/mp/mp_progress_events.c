/* The progress thread sleeps on the drivers' doorbells (progress.c) and moves
 * a transfer while both ranks compute, on a driver with one: shm, tcp, or ofi
 * over libfabric's tcp provider. Run with WEFT_PROGRESS_THREAD=1 and
 * WEFT_DRIVERS naming the driver on 2 ranks:
 *
 *   mp_progress_events [DRIVER]     (default tcp: the gates' driver, checked)
 *
 * 1. Both away: rank 1 posts a receive of a large message (rendezvous) and
 *    rank 0 sends it; from then on neither rank calls weft. Rank 1 watches
 *    its buffer until every byte is in and says so through a file; rank 0
 *    keeps its core busy until then. Rank 0 sends only once rank 1's thread
 *    has gone to sleep (another file), so a doorbell must wake it. Only the
 *    two progress threads can have done the handshake and moved the data,
 *    while the ranks' own threads took the cores. The receiver's thread must
 *    have slept on its doorbell and been woken by it (it polls at idle
 *    priority otherwise, and would starve); the sender's must have handled
 *    events.
 * 2. The same with a small message: the eager path (the sender's own call
 *    sends it; the receiver's progress thread takes it).
 * 3. The counters: running, a field_mask with no known group refused.
 * Each waiting side gives up after 20 s, and the check fails. The large
 * message's arrival may find the receiver's thread awake between two sleeps
 * (a timeout ended one: rare, but a loaded machine makes it likelier), and
 * then no doorbell rings; so step 1 runs again, up to ATTEMPTS times, until
 * one arrival woke the thread. Without a working doorbell none ever does. */
#include <fcntl.h>
#include <sys/stat.h>

#include "../common/test_util.h"

#define SIZE      (8u << 20)
#define GIVE_UP_S 20.0
#define ATTEMPTS  3

static void sync_ranks(weft_ctx_t *ctx, int peer, uint64_t tag)
{
    char a = 1, b = 0;
    weft_request_t *r[2];
    MUST(weft_sr_irecv(ctx, peer, 1, tag, &b, 1, &r[0]));
    MUST(weft_sr_isend(ctx, peer, 1, tag, &a, 1, &r[1]));
    MUST(weft_sr_waitall(ctx, 2, r, NULL));
}

/* Busy outside weft until the file exists: the core stays taken. */
static void compute_until_flag(const char *flag)
{
    double start = test_now_s(), next = 0;
    struct stat sb;
    bool seen = false;
    while (!seen && test_now_s() - start < GIVE_UP_S) {
        double now = test_now_s();
        if (now >= next) {
            seen = stat(flag, &sb) == 0;
            next = now + 0.001;
        }
    }
    CHECK(seen);
}

static void touch(const char *flag)
{
    int fd = open(flag, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
}

/* Whether buf holds the pattern key. It reads bytes the progress thread may
 * be writing: that is what this test watches, so ThreadSanitizer is told not
 * to look (the wait that follows orders the final check). */
__attribute__((no_sanitize("thread"))) static bool holds(const volatile uint8_t *buf, size_t len,
                                                         uint64_t key)
{
    if (buf[len - 1] != test_byte(key, len - 1))
        return false;
    for (size_t i = 0; i < len; i++)
        if (buf[i] != test_byte(key, i))
            return false;
    return true;
}

/* Busy outside weft until buf holds the pattern key. */
static bool compute_until_data(const uint8_t *buf, size_t len, uint64_t key)
{
    double start = test_now_s();
    while (test_now_s() - start < GIVE_UP_S)
        if (holds(buf, len, key))
            return true;
    return false;
}

static void progress_counters(weft_ctx_t *ctx, weft_progress_counters_t *pc)
{
    *pc = (weft_progress_counters_t){.field_mask = WEFT_PROGRESS_COUNTERS_ALL};
    MUST(weft_counters_progress(ctx, pc));
    CHECK(pc->field_mask == WEFT_PROGRESS_COUNTERS_ALL);
}

/* Busy outside weft until this rank's progress thread has gone to sleep
 * since *before said (reading the counters makes no progress). */
static void compute_until_asleep(weft_ctx_t *ctx, const weft_progress_counters_t *before)
{
    double start = test_now_s();
    weft_progress_counters_t now;
    do
        progress_counters(ctx, &now);
    while (now.sleeps == before->sleeps && test_now_s() - start < GIVE_UP_S);
    CHECK(now.sleeps > before->sleeps);
}

/* Returns, at both ranks, whether rank 1's thread was woken by a doorbell. */
static bool both_away(weft_ctx_t *ctx, int me, uint8_t *buf, size_t len, uint64_t key,
                      const char *go, const char *done)
{
    weft_progress_counters_t before, after;
    weft_request_t *r;
    weft_status_t st;
    if (me == 1) {
        memset(buf, 0, len);
        MUST(weft_sr_irecv(ctx, 0, 0, key, buf, len, &r));
    } else {
        test_fill(buf, len, key);
    }
    sync_ranks(ctx, 1 - me, key); /* the receive is posted */
    progress_counters(ctx, &before);
    if (me == 0) {
        /* Sent once the receiver's thread sleeps: its doorbell must wake it. */
        compute_until_flag(go);
        MUST(weft_sr_isend(ctx, 1, 0, key, buf, len, &r));
        compute_until_flag(done);
        MUST(weft_sr_wait(ctx, r, NULL));
    } else {
        compute_until_asleep(ctx, &before);
        touch(go);
        bool full = compute_until_data(buf, len, key);
        touch(done);
        CHECK(full);
        MUST(weft_sr_wait(ctx, r, &st));
        CHECK(st.length == len && st.source == 0 && st.tag == key);
        CHECK(test_verify(buf, len, key) < 0);
    }
    progress_counters(ctx, &after);
    CHECK(after.running == 1);
    /* The receiver's thread slept before the message came (go) and took it;
     * a large one rings its doorbell again and again while it streams in. A
     * small message leaves the sender at once; a large one needs the
     * sender's thread for the handshake and the data. */
    bool large = len >= 65536;
    if (me == 1) {
        CHECK(after.sleeps > before.sleeps);
        CHECK(after.events > before.events);
    } else if (large) {
        CHECK(after.events > before.events);
    }
    /* Both are past the flags; rank 0 learns whether rank 1 was woken. */
    char woken = me == 1 && after.woken > before.woken, got = 0;
    weft_request_t *x[2];
    MUST(weft_sr_irecv(ctx, 1 - me, 1, key + 1, &got, 1, &x[0]));
    MUST(weft_sr_isend(ctx, 1 - me, 1, key + 1, &woken, 1, &x[1]));
    MUST(weft_sr_waitall(ctx, 2, x, NULL));
    if (me == 0) {
        unlink(go);
        unlink(done);
    }
    return me == 1 ? woken : got;
}

int main(int argc, char **argv)
{
    const char *want_driver = argc > 1 ? argv[1] : "tcp";
    weft_ctx_t *ctx;
    MUST(weft_init(NULL, &ctx));
    int me = test_rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "mp_progress_events runs on 2 ranks\n");
        return 2;
    }
    weft_progress_counters_t pc = {.field_mask = 0};
    CHECK(weft_counters_progress(ctx, &pc) == WEFT_EINVAL);
    CHECK(weft_counters_progress(NULL, &pc) == WEFT_EINVAL);
    progress_counters(ctx, &pc);
    if (!pc.running) {
        fprintf(stderr, "mp_progress_events needs WEFT_PROGRESS_THREAD=1\n");
        return 2;
    }
    weft_gate_counters_t gc = {.field_mask = WEFT_GATE_COUNTERS_V1};
    MUST(weft_counters_gate(ctx, 1 - me, &gc));
    CHECK(!strcmp(gc.driver, want_driver));
    uint8_t *buf = malloc(SIZE);
    char go[128], done[128];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(go, sizeof go, "%s/weft-mp-progress-events-%d.go", dir, (int)getppid());
    snprintf(done, sizeof done, "%s/weft-mp-progress-events-%d.done", dir, (int)getppid());
    bool woken = false;
    for (int a = 0; a < ATTEMPTS && !woken; a++)
        woken = both_away(ctx, me, buf, SIZE, 100 + 10 * (uint64_t)a, go, done);
    if (me == 1)
        CHECK(woken);
    both_away(ctx, me, buf, 100, 20, go, done);
    MUST(weft_finalize(ctx));
    free(buf);
    return test_summary("mp_progress_events");
}
