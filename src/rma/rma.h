/* The engine's side of the symmetric regions (rma.c): what the context
 * holds, and its release at finalize. */
#ifndef WEFT_RMA_INT_H
#define WEFT_RMA_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/weft_rma.h"

struct weft__rma;
/* Unmap the peers' regions and the heap; the static data stays. */
void weft__rma_fini(weft_ctx_t *ctx);

/* Where len bytes at addr lie in this process's regions: kind and offset
 * (false when they are not symmetric). */
bool weft__rma_locate(weft_ctx_t *ctx, const void *addr, size_t len, int *kind, uint64_t *off);
/* This process's bytes [off, off + len) of region kind, or NULL when out of
 * range. */
void *weft__rma_at(weft_ctx_t *ctx, int kind, uint64_t off, size_t len);

/* The server of the messages (rma_net.c): started with the first region,
 * before any peer can address it; stopped at the context's end. */
int weft__rma_net_start(weft_ctx_t *ctx);
/* Where the context keeps the server (rma.c owns the context's part). */
struct weft__rma_net **weft__rma_net_of(weft_ctx_t *ctx);
void weft__rma_net_fini(weft_ctx_t *ctx);
/* Run the server in every progress pass (on) or not (off: every process
 * maps this one's regions, so no request can come). */
void weft__rma_net_arm(weft_ctx_t *ctx, bool on);
/* Apply op at p (size 4 or 8): what weft_rma_amo does on mapped memory. */
uint64_t weft__rma_amo_local(void *p, size_t size, int op, uint64_t operand, uint64_t compare);

#endif
