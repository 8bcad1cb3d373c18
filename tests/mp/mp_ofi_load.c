/* libfabric is loaded only by a process whose ofi driver starts.
 *
 *   mp_ofi_load absent    a job on one node (shm between its ranks): after
 *                         init and a message each way, libfabric is not in
 *                         this process's memory map
 *   mp_ofi_load loaded    WEFT_DRIVERS=ofi: it is, and messages move over it
 *   mp_ofi_load refused   WEFT_DRIVERS=ofi with WEFT_OFI_LIBRARY naming no
 *                         libfabric: weft_init fails with an error, cleanly
 *
 * Needs 2 ranks: a job of one starts no network driver. */
#include "../common/test_util.h"

static bool libfabric_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) {
        perror("/proc/self/maps");
        exit(1);
    }
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "/libfabric.so") != NULL;
    fclose(f);
    return found;
}

/* A message each way between ranks 0 and 1, its bytes checked. */
static void exchange(weft_ctx_t *ctx)
{
    char out[64], in[64];
    int peer = 1 - test_rank;
    test_fill(out, sizeof out, (uint64_t)test_rank);
    weft_request_t *r[2];
    MUST(weft_sr_irecv(ctx, peer, 0, 5, in, sizeof in, &r[0]));
    MUST(weft_sr_isend(ctx, peer, 0, 5, out, sizeof out, &r[1]));
    MUST(weft_sr_wait(ctx, r[0], NULL));
    MUST(weft_sr_wait(ctx, r[1], NULL));
    CHECK(test_verify(in, sizeof in, (uint64_t)peer) < 0);
}

int main(int argc, char **argv)
{
    test_watchdog(60);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "refused")) {
        weft_ctx_t *ctx = NULL;
        int rc = weft_init(NULL, &ctx);
        CHECK(rc != WEFT_OK && ctx == NULL);
        CHECK(!libfabric_mapped());
        if (rc == WEFT_OK)
            weft_finalize(ctx);
        test_rank = 0;
        return test_summary("mp_ofi_load refused");
    }
    bool want = !strcmp(mode, "loaded");
    if (!want && strcmp(mode, "absent")) {
        fprintf(stderr, "usage: mp_ofi_load absent|loaded|refused\n");
        return 2;
    }
    weft_ctx_t *ctx = test_init("mp_ofi_load", 2);
    if (test_rank <= 1)
        exchange(ctx);
    bool mapped = libfabric_mapped();
    if (mapped != want)
        fprintf(stderr, "[rank %d] libfabric is%s mapped\n", test_rank, mapped ? "" : " not");
    CHECK(mapped == want);
    MUST(weft_finalize(ctx));
    return test_summary("mp_ofi_load");
}
