/* The dynamic broadcast (weft_bcast.h) between real processes:
 *
 *   every rank as the root, to every other rank, in the three tree shapes,
 *   0 B to 1 MiB (inline, one piece, many pieces by rendezvous), the
 *   receivers' plain receives posted before the broadcast starts, after it
 *   ended (the data forwarded through ranks that had posted nothing), or as
 *   a wildcard receive; each message checked byte by byte, its status
 *   naming the root;
 *   a subset of the ranks with priorities, the others getting nothing;
 *   every rank broadcasting at once, interleaved, distinct tags;
 *   the counters: a rank inside a tree forwarded;
 *   bad arguments;
 *   "death": rank 1, an intermediate of a chain, dies; the ranks below it
 *   get the data all the same (the root serves them), and the root's
 *   completion names rank 1; "death_mid": the same, rank 1 dying once it
 *   has the data, while the ranks below still read its pieces;
 *   "death_root": the root dies once its broadcast started: every other
 *   rank's receive ends (whole, or WEFT_EPEERDEAD).
 */
#include <stdlib.h>

#include "../common/test_util.h"
#include "weft/weft_bcast.h"

#define COMM 11u
#define NOTE 0x7bu

static weft_ctx_t *ctx;
static int rank, size;

static const size_t sizes[] = {0, 8, 4096, 5000, 70000, 300000, 1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static uint64_t key(int root, uint64_t tag)
{
    return (uint64_t)root << 40 | tag;
}

/* Root: broadcast len bytes to ranks[0..n) and wait for the completion. */
static int bcast(const int *ranks, const int *prio, int n, size_t len, uint64_t tag, uint32_t tree,
                 weft_comp_entry_t *entry)
{
    uint8_t *buf = malloc(len ? len : 1);
    test_fill(buf, len, key(rank, tag));
    weft_flag_t f;
    weft_flag_init(&f);
    weft_bcast_opts_t o = {.tree = tree, .arity = 3};
    int rc =
        weft_bcast_dynamic(ctx, buf, len, ranks, prio, n, COMM, tag, &o, weft_flag_comp(&f), &f);
    if (rc == WEFT_OK) {
        weft_flag_wait(&f, ctx, entry);
        CHECK(entry->user_context == &f);
        CHECK(entry->tag == tag && entry->length == len);
    }
    free(buf);
    return rc;
}

static void check_msg(const uint8_t *buf, size_t len, int root, uint64_t tag,
                      const weft_status_t *st)
{
    CHECK(st->source == root);
    CHECK(st->tag == tag);
    CHECK(st->length == len);
    CHECK(st->error == WEFT_OK);
    long bad = test_verify(buf, len, key(root, tag));
    if (bad >= 0)
        fprintf(stderr, "[rank %d] broadcast from %d tag %llu (%zu B): byte %ld wrong\n", rank,
                root, (unsigned long long)tag, len, bad);
    CHECK(bad < 0);
}

/* A destination's plain receive from root 0, checked. */
static void recv_check(size_t len, uint64_t tag)
{
    uint8_t *buf = malloc(len);
    weft_request_t *req;
    weft_status_t st;
    MUST(weft_sr_irecv(ctx, 0, COMM, tag, buf, len, &req));
    MUST(weft_sr_wait(ctx, req, &st));
    check_msg(buf, len, 0, tag, &st);
    free(buf);
}

/* Every rank broadcasts to all the others in turn; mode 0: receives posted
 * first, 1: posted once the root's completion came, 2: wildcard source. */
static void all_to_all(uint32_t tree, int mode, uint64_t tag0)
{
    int *others = malloc((size_t)size * sizeof *others);
    for (int root = 0; root < size; root++) {
        for (size_t z = 0; z < NSIZES; z++) {
            uint64_t tag = tag0 + (uint64_t)root * 100 + z;
            size_t len = sizes[z];
            if (rank == root) {
                int n = 0;
                for (int r = 0; r < size; r++)
                    if (r != root)
                        others[n++] = r;
                if (mode != 1)
                    test_barrier(ctx, NOTE, 1); /* the receives are posted */
                weft_comp_entry_t e;
                MUST(bcast(others, NULL, n, len, tag, tree, &e));
                CHECK(e.error == WEFT_OK && e.source == root);
                if (mode == 1)
                    test_barrier(ctx, NOTE, 1); /* it was delivered everywhere */
                continue;
            }
            uint8_t *buf = malloc(len + 16);
            weft_request_t *req = NULL;
            weft_status_t st;
            if (mode != 1) {
                MUST(weft_sr_irecv(ctx, mode == 2 ? WEFT_ANY_SOURCE : root, COMM, tag, buf,
                                   len + 16, &req));
                test_barrier(ctx, NOTE, 1);
            } else {
                test_barrier(ctx, NOTE, 1);
                int flag = 0;
                MUST(weft_sr_iprobe(ctx, root, COMM, tag, &flag, &st));
                CHECK(flag); /* arrived before anything was posted */
                MUST(weft_sr_irecv(ctx, root, COMM, tag, buf, len + 16, &req));
            }
            MUST(weft_sr_wait(ctx, req, &st));
            check_msg(buf, len, root, tag, &st);
            free(buf);
        }
        test_barrier(ctx, NOTE, 2);
    }
    free(others);
}

/* Root 0 to the odd ranks, in reverse priority; even ranks get nothing. */
static void subset(void)
{
    const uint64_t tag = 5000;
    const size_t len = 200000;
    if (rank == 0) {
        int ranks[64], prio[64], n = 0;
        for (int r = size - 1; r > 0; r--)
            if (r % 2) {
                ranks[n] = r;
                prio[n++] = r; /* the highest rank first */
            }
        weft_comp_entry_t e;
        MUST(bcast(ranks, prio, n, len, tag, WEFT_BCAST_BINOMIAL, &e));
        CHECK(e.error == WEFT_OK);
    } else if (rank % 2) {
        recv_check(len, tag);
    }
    test_barrier(ctx, NOTE, 3);
    if (rank % 2 == 0 && rank) {
        int flag = 1;
        weft_status_t st;
        /* Others may be broadcasting already (interleaved): this tag only. */
        MUST(weft_sr_iprobe(ctx, WEFT_ANY_SOURCE, COMM, tag, &flag, &st));
        CHECK(!flag);
    }
}

/* Every rank broadcasts to all the others at once; then receives. */
static void interleaved(void)
{
    const size_t len = 150000;
    int *others = malloc((size_t)size * sizeof *others);
    int n = 0;
    for (int r = 0; r < size; r++)
        if (r != rank)
            others[n++] = r;
    uint8_t *mine = malloc(len);
    test_fill(mine, len, key(rank, 6000 + (uint64_t)rank));
    weft_counter_t done;
    weft_counter_init(&done, 0);
    for (int k = 0; k < 3; k++) /* three at once from each root, three tags */
        MUST(weft_bcast_dynamic(ctx, mine, len, others, NULL, n, COMM, 6000 + (uint64_t)rank, NULL,
                                weft_counter_comp(&done), NULL));
    uint8_t *buf = malloc(len);
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < size; r++) {
            if (r == rank)
                continue;
            weft_request_t *req;
            weft_status_t st;
            MUST(weft_sr_irecv(ctx, r, COMM, 6000 + (uint64_t)r, buf, len, &req));
            MUST(weft_sr_wait(ctx, req, &st));
            check_msg(buf, len, r, 6000 + (uint64_t)r, &st);
        }
    weft_counter_wait(&done, 3, ctx);
    CHECK(weft_counter_errors(&done) == 0);
    test_barrier(ctx, NOTE, 4);
    free(buf);
    free(mine);
    free(others);
}

/* Completions into a queue too small for them: the entries beyond its ring
 * wait on its overflow list, after the broadcast's own state is gone. */
static void small_queue(void)
{
    enum { NB = 6 };
    int *others = malloc((size_t)size * sizeof *others);
    int n = 0;
    for (int r = 0; r < size; r++)
        if (r != rank)
            others[n++] = r;
    uint64_t data = key(rank, 7000);
    weft_cq_t *cq;
    MUST(weft_cq_create(2, &cq));
    for (int k = 0; k < NB; k++)
        MUST(weft_bcast_dynamic(ctx, &data, sizeof data, others, NULL, n, COMM, 7000 + (uint64_t)k,
                                NULL, weft_cq_comp(cq), (void *)(uintptr_t)(k + 1)));
    for (int k = 0; k < NB; k++)
        for (int r = 0; r < size; r++) {
            if (r == rank)
                continue;
            uint64_t got = 0;
            weft_request_t *req;
            weft_status_t st;
            MUST(weft_sr_irecv(ctx, r, COMM, 7000 + (uint64_t)k, &got, sizeof got, &req));
            MUST(weft_sr_wait(ctx, req, &st));
            CHECK(got == key(r, 7000) && st.source == r);
        }
    test_barrier(ctx, NOTE, 6); /* the roots' completions come meanwhile */
    unsigned seen = 0;
    for (int k = 0; k < (n ? NB : 0); k++) {
        weft_comp_entry_t e;
        MUST(weft_cq_wait_pop(cq, ctx, &e));
        CHECK(e.error == WEFT_OK && e.length == sizeof data);
        seen |= 1u << ((uintptr_t)e.user_context - 1);
    }
    CHECK(seen == (n ? (1u << NB) - 1 : 0));
    MUST(weft_cq_free(cq));
    free(others);
}

static void bad_input(void)
{
    weft_flag_t f;
    weft_flag_init(&f);
    int r1 = (rank + 1) % size, two[2] = {r1, r1};
    uint8_t b[8] = {0};
    CHECK(weft_bcast_dynamic(NULL, b, 8, &r1, NULL, 1, COMM, 1, NULL, weft_flag_comp(&f), NULL) ==
          WEFT_EINVAL);
    CHECK(weft_bcast_dynamic(ctx, b, 8, &r1, NULL, 1, COMM, 1, NULL, NULL, NULL) == WEFT_EINVAL);
    CHECK(weft_bcast_dynamic(ctx, NULL, 8, &r1, NULL, 1, COMM, 1, NULL, weft_flag_comp(&f), NULL) ==
          WEFT_EINVAL);
    CHECK(weft_bcast_dynamic(ctx, b, 8, NULL, NULL, 1, COMM, 1, NULL, weft_flag_comp(&f), NULL) ==
          WEFT_EINVAL);
    CHECK(weft_bcast_dynamic(ctx, b, 8, &r1, NULL, -1, COMM, 1, NULL, weft_flag_comp(&f), NULL) ==
          WEFT_EINVAL);
    CHECK(weft_bcast_dynamic(ctx, b, 8, &r1, NULL, 1, COMM, WEFT_ANY_TAG, NULL, weft_flag_comp(&f),
                             NULL) == WEFT_EINVAL);
    weft_bcast_opts_t bad_tree = {.tree = 7};
    CHECK(weft_bcast_dynamic(ctx, b, 8, &r1, NULL, 1, COMM, 1, &bad_tree, weft_flag_comp(&f),
                             NULL) == WEFT_EINVAL);
    int out = size;
    CHECK(weft_bcast_dynamic(ctx, b, 8, &out, NULL, 1, COMM, 1, NULL, weft_flag_comp(&f), NULL) ==
          WEFT_ERANK);
    CHECK(weft_bcast_dynamic(ctx, b, 8, &rank, NULL, 1, COMM, 1, NULL, weft_flag_comp(&f), NULL) ==
          WEFT_ERANK);
    if (size > 1)
        CHECK(weft_bcast_dynamic(ctx, b, 8, two, NULL, 2, COMM, 1, NULL, weft_flag_comp(&f),
                                 NULL) == WEFT_EINVAL);
    weft_bcast_opts_t tiny = {.piece = 1};
    CHECK(weft_bcast_dynamic(ctx, b, 70000, &r1, NULL, size > 1, COMM, 1, &tiny, weft_flag_comp(&f),
                             NULL) == WEFT_EUNSUPPORTED);
    /* No destination: done at once. */
    weft_comp_entry_t e;
    MUST(weft_bcast_dynamic(ctx, b, 8, NULL, NULL, 0, COMM, 1, NULL, weft_flag_comp(&f), &f));
    MUST(weft_flag_wait(&f, ctx, &e));
    CHECK(e.error == WEFT_OK && e.user_context == &f);
    weft_bcast_counters_t c;
    CHECK(weft_bcast_counters_get(NULL, &c) == WEFT_EINVAL);
    CHECK(weft_bcast_counters_get(ctx, NULL) == WEFT_EINVAL);
}

/* mid: rank 1 dies once it has the data, while it still forwards it (its
 * pieces still being read below it) and before it acknowledged. */
static int death(bool mid)
{
    const size_t len = mid ? 4u << 20 : 300000;
    const uint64_t tag = 9000;
    test_barrier(ctx, NOTE, 49); /* every rank is up (tcp: connected) before one dies */
    if (rank == 1 && mid) {
        uint8_t *buf = malloc(len);
        weft_request_t *req;
        weft_status_t st;
        MUST(weft_sr_irecv(ctx, 0, COMM, tag, buf, len, &req));
        MUST(weft_sr_wait(ctx, req, &st));
        _exit(9);
    }
    if (rank == 1) {
        test_note(ctx, 0, true, NOTE, 50);
        _exit(9);
    }
    if (rank == 0) {
        if (!mid)
            test_note(ctx, 1, false, NOTE, 50);
        int ranks[64], n = 0;
        for (int r = 1; r < size; r++)
            ranks[n++] = r;
        weft_comp_entry_t e;
        MUST(bcast(ranks, NULL, n, len, tag, WEFT_BCAST_CHAIN, &e));
        CHECK(e.error == WEFT_EPEERDEAD);
        CHECK(e.source == 1);
        weft_bcast_counters_t c;
        MUST(weft_bcast_counters_get(ctx, &c));
        CHECK(c.dead == 1);
        CHECK(c.redone >= 1);
        if (test_failed == 0)
            printf("rank 0: bcast death seen, %llu ranks served again\n",
                   (unsigned long long)c.redone);
        fflush(stdout);
        for (int r = 2; r < size; r++) /* the survivors may end now */
            test_note(ctx, r, true, NOTE, 51);
    } else {
        recv_check(len, tag);
        /* A destination that ended its job before the root asked it again
         * could only be counted among the dead: stay until the root knows. */
        test_note(ctx, 0, false, NOTE, 51);
    }
    weft_finalize(ctx);
    return test_summary("mp_bcast");
}

/* The root dies as soon as its broadcast started: every destination's
 * receive ends, whole or with WEFT_EPEERDEAD, and none waits for ever. */
static int death_root(void)
{
    const size_t len = 4u << 20;
    const uint64_t tag = 9100;
    test_barrier(ctx, NOTE, 48);
    if (rank == 0) {
        uint8_t *buf = malloc(len);
        test_fill(buf, len, key(0, tag));
        int ranks[64], n = 0;
        for (int r = 1; r < size; r++)
            ranks[n++] = r;
        weft_flag_t f;
        weft_flag_init(&f);
        weft_bcast_opts_t o = {.tree = WEFT_BCAST_CHAIN};
        MUST(weft_bcast_dynamic(ctx, buf, len, ranks, NULL, n, COMM, tag, &o, weft_flag_comp(&f),
                                NULL));
        for (int i = 0; i < 50; i++)
            weft_progress(ctx);
        _exit(9);
    }
    uint8_t *buf = malloc(len);
    weft_request_t *req;
    weft_status_t st;
    MUST(weft_sr_irecv(ctx, 0, COMM, tag, buf, len, &req));
    int rc = weft_sr_wait(ctx, req, &st);
    CHECK(rc == WEFT_OK || rc == WEFT_EPEERDEAD);
    if (rc == WEFT_OK)
        check_msg(buf, len, 0, tag, &st);
    free(buf);
    if (rank == size - 1 && test_failed == 0)
        printf("rank %d: bcast root death seen (%s)\n", rank, weft_status_name(rc));
    fflush(stdout);
    weft_finalize(ctx);
    return test_summary("mp_bcast");
}

int main(int argc, char **argv)
{
    test_watchdog(240);
    weft_init_params_t ip = {.field_mask = WEFT_INIT_FIELD_THREAD_LEVEL,
                             .thread_level = WEFT_THREAD_MULTIPLE};
    MUST(weft_init(&ip, &ctx));
    rank = test_rank = weft_rank(ctx);
    size = weft_size(ctx);
    if (size > 64) {
        printf("mp_bcast: at most 64 ranks; skipped\n");
        weft_finalize(ctx);
        return 77;
    }
    if (argc > 1 && strncmp(argv[1], "death", 5) == 0) {
        if (size < 4) {
            printf("mp_bcast death: needs 4 ranks; skipped\n");
            weft_finalize(ctx);
            return 77;
        }
        if (strcmp(argv[1], "death_root") == 0)
            return death_root();
        return death(strcmp(argv[1], "death_mid") == 0);
    }
    const uint32_t trees[] = {WEFT_BCAST_BINOMIAL, WEFT_BCAST_KARY, WEFT_BCAST_CHAIN};
    for (int t = 0; t < 3; t++)
        for (int mode = 0; mode < 3; mode++)
            all_to_all(trees[t], mode, (uint64_t)(t * 3 + mode) * 10000 + 100000);
    subset();
    interleaved();
    small_queue();
    bad_input();
    weft_bcast_counters_t c;
    MUST(weft_bcast_counters_get(ctx, &c));
    CHECK(c.started >= NSIZES * 9);
    CHECK(c.received >= (uint64_t)(size - 1) * NSIZES * 9);
    if (size >= 3) /* in root 0's chain every rank but the last forwards */
        CHECK(rank == 0 || rank == size - 1 || c.forwarded > 0);
    CHECK(c.dead == 0 && c.redone == 0);
    test_barrier(ctx, NOTE, 5);
    MUST(weft_finalize(ctx));
    return test_summary("mp_bcast");
}
