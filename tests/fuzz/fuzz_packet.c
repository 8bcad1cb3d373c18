/* Fuzz target: the engine's whole receive path. Each input is handed to a
 * fresh singleton context as a packet from a peer, with receives posted and a
 * rendezvous send outstanding, so chunks that name requests (RTR, RDATA, ACK)
 * can reach live ones. Nothing may crash, leak or overflow a buffer. */
#include <stdlib.h>

#include "core/core_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_ctx_t *ctx;
    setenv("WEFT_LOG", "off", 0); /* rejecting garbage is the expected outcome */
    if (weft_init(NULL, &ctx) != WEFT_OK)
        abort();
    static uint8_t small[64], big[100000], sendbuf[100000];
    weft_request_t *r1, *r2, *s1;
    weft_sr_irecv(ctx, WEFT_ANY_SOURCE, 0, WEFT_ANY_TAG, small, sizeof small, &r1);
    weft_sr_irecv(ctx, 0, 1, 5, big, sizeof big, &r2);
    weft_sr_isend(ctx, 0, 2, 9, sendbuf, sizeof sendbuf, &s1);
    /* Copy the input: the driver hands packets in its own buffer. */
    uint8_t *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    weft__proto_packet(ctx, &ctx->gates[0], copy, size);
    free(copy);
    /* Requests the packet completed are retired; finalize frees the rest. */
    weft_request_t *reqs[] = {r1, r2, s1};
    for (int i = 0; i < 3; i++) {
        int flag;
        weft_sr_test(ctx, reqs[i], &flag, NULL);
    }
    weft_finalize(ctx);
    return 0;
}
