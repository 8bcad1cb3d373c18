/* Seed 004's distributed-shared-memory exchange, 2 ranks: the client (rank
 * 1) asks the server (rank 0) for a page with a request of four small
 * fields; the server answers the page's number, whether it has it, and the
 * page. One round trip per page; the client asks for three pages per
 * measurement, as the seed did. Modes, each run in the same launch:
 *
 *   pack   weft_pack: the request as four express pieces, the answer as two
 *          express pieces and the page as a cheaper one. Whether the page
 *          rides in the answer's first packet or follows as a message of
 *          its own is WEFT_PACK_INLINE_MAX's (run the program once with it
 *          unset and once with 0 to compare aggregation);
 *   sr     the same exchange field by field over weft_sr: every field its
 *          own message, as a message-passing port without packing does.
 *
 *   weft_pack [--page S] [--rounds N] [--reps R]
 *
 * Prints "# mode page inline_max us_per_3_pages" and
 * csv,dsm_<mode>[_apart],<page>,us_per_3_pages,<median over R>. */
#include <stdbool.h>
#include <string.h>

#include "bench_common.h"
#include "bench_weft.h"
#include "weft/weft_pack.h"

#define COMM 0x4343u

static weft_ctx_t *ctx;
static int rank;
static size_t page = 8192;
static uint8_t *pagebuf;

typedef struct {
    int32_t id, num, diff, access;
} request_t;

/* ---- pack ---- */
static void pack_client(int32_t num)
{
    request_t q = {1, num, 0, 2};
    weft_pack_t *p;
    CHECK(weft_pack_begin(ctx, 0, COMM, 1, &p));
    CHECK(weft_pack(p, &q.id, sizeof q.id, WEFT_PACK_EXPRESS));
    CHECK(weft_pack(p, &q.num, sizeof q.num, WEFT_PACK_EXPRESS));
    CHECK(weft_pack(p, &q.diff, sizeof q.diff, WEFT_PACK_EXPRESS));
    CHECK(weft_pack(p, &q.access, sizeof q.access, WEFT_PACK_EXPRESS));
    CHECK(weft_pack_end(p));
    if (num < 0)
        return;
    weft_unpack_t *u;
    int32_t gnum, found;
    CHECK(weft_unpack_begin(ctx, 0, COMM, 2, &u));
    CHECK(weft_unpack(u, &gnum, sizeof gnum, WEFT_PACK_EXPRESS));
    CHECK(weft_unpack(u, &found, sizeof found, WEFT_PACK_EXPRESS));
    if (found)
        CHECK(weft_unpack(u, pagebuf, page, WEFT_PACK_CHEAPER));
    CHECK(weft_unpack_end(u));
}

static void pack_server(void)
{
    for (;;) {
        request_t q;
        weft_unpack_t *u;
        CHECK(weft_unpack_begin(ctx, WEFT_ANY_SOURCE, COMM, 1, &u));
        CHECK(weft_unpack(u, &q.id, sizeof q.id, WEFT_PACK_EXPRESS));
        CHECK(weft_unpack(u, &q.num, sizeof q.num, WEFT_PACK_EXPRESS));
        CHECK(weft_unpack(u, &q.diff, sizeof q.diff, WEFT_PACK_EXPRESS));
        CHECK(weft_unpack(u, &q.access, sizeof q.access, WEFT_PACK_EXPRESS));
        int src = weft_unpack_source(u);
        CHECK(weft_unpack_end(u));
        if (q.num < 0)
            return;
        int32_t found = 1;
        weft_pack_t *p;
        CHECK(weft_pack_begin(ctx, src, COMM, 2, &p));
        CHECK(weft_pack(p, &q.num, sizeof q.num, WEFT_PACK_EXPRESS));
        CHECK(weft_pack(p, &found, sizeof found, WEFT_PACK_EXPRESS));
        CHECK(weft_pack(p, pagebuf, page, WEFT_PACK_CHEAPER));
        CHECK(weft_pack_end(p));
    }
}

/* ---- sr: field by field ---- */
static void sr_client(int32_t num)
{
    request_t q = {1, num, 0, 2};
    int32_t *f = &q.id;
    weft_request_t *r[4];
    for (int k = 0; k < 4; k++)
        CHECK(weft_sr_isend(ctx, 0, COMM + 1, 1, &f[k], sizeof f[k], &r[k]));
    CHECK(weft_sr_waitall(ctx, 4, r, NULL));
    if (num < 0)
        return;
    int32_t gnum, found;
    bench_recv_wait(ctx, 0, COMM + 1, 2, &gnum, sizeof gnum);
    bench_recv_wait(ctx, 0, COMM + 1, 2, &found, sizeof found);
    if (found)
        bench_recv_wait(ctx, 0, COMM + 1, 2, pagebuf, page);
}

static void sr_server(void)
{
    for (;;) {
        int32_t f[4];
        weft_status_t st;
        weft_request_t *r;
        CHECK(weft_sr_irecv(ctx, WEFT_ANY_SOURCE, COMM + 1, 1, &f[0], sizeof f[0], &r));
        CHECK(weft_sr_wait(ctx, r, &st));
        for (int k = 1; k < 4; k++)
            bench_recv_wait(ctx, st.source, COMM + 1, 1, &f[k], sizeof f[k]);
        if (f[1] < 0)
            return;
        int32_t found = 1;
        weft_request_t *s[3];
        CHECK(weft_sr_isend(ctx, st.source, COMM + 1, 2, &f[1], sizeof f[1], &s[0]));
        CHECK(weft_sr_isend(ctx, st.source, COMM + 1, 2, &found, sizeof found, &s[1]));
        CHECK(weft_sr_isend(ctx, st.source, COMM + 1, 2, pagebuf, page, &s[2]));
        CHECK(weft_sr_waitall(ctx, 3, s, NULL));
    }
}

/* Microseconds per three pages, over rounds measurements. */
static double run(bool packed, int rounds)
{
    bench_handshake(ctx, 1 - rank, COMM + 2);
    double t = 0;
    if (rank == 1) {
        for (int i = 0; i < 10; i++) /* warm up */
            packed ? pack_client(i) : sr_client(i);
        double t0 = bench_now_us();
        for (int i = 0; i < 3 * rounds; i++)
            packed ? pack_client(i) : sr_client(i);
        t = (bench_now_us() - t0) / rounds;
        packed ? pack_client(-1) : sr_client(-1);
    } else {
        packed ? pack_server() : sr_server();
    }
    bench_handshake(ctx, 1 - rank, COMM + 2);
    return t;
}

int main(int argc, char **argv)
{
    int rounds = 2000, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--page") && i + 1 < argc)
            page = bench_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: weft_pack [--page S] [--rounds N] [--reps R]\n");
            return 2;
        }
    }
    if (rounds < 1 || reps < 1 || reps > 64 || page < 1) {
        fprintf(stderr, "weft_pack: rounds >= 1, 1 to 64 reps, a page of at least 1 byte\n");
        return 2;
    }
    CHECK(weft_init(NULL, &ctx));
    rank = weft_rank(ctx);
    if (weft_size(ctx) != 2) {
        fprintf(stderr, "weft_pack: run it with 2 ranks\n");
        return 2;
    }
    bench_pin_by_rank(rank);
    pagebuf = calloc(1, page);
    const char *im = weft_param_get("WEFT_PACK_INLINE_MAX");
    bool apart = im && strtoull(im, NULL, 0) == 0;
    if (rank == 1)
        printf("# mode page inline_max us_per_3_pages\n");
    static const char *const modes[] = {"pack", "sr"};
    double v[2][64];
    for (int r = 0; r < reps; r++)
        for (int m = 0; m < 2; m++) /* alternating, so drift hits both */
            v[m][r] = run(m == 0, rounds);
    for (int m = 0; m < 2 && rank == 1; m++) {
        double med = bench_median(v[m], reps);
        printf("%-5s %7zu %10s %12.3f\n", modes[m], page, im ? im : "8192", med);
        char name[32];
        snprintf(name, sizeof name, "dsm_%s%s", modes[m], m == 0 && apart ? "_apart" : "");
        bench_csv(name, (double)page, "us_per_3_pages", med);
    }
    free(pagebuf);
    CHECK(weft_finalize(ctx));
    return 0;
}
