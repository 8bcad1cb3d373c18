/* The engine's side of the symmetric regions (rma.c): what the context
 * holds, and its release at finalize. */
#ifndef WEFT_RMA_INT_H
#define WEFT_RMA_INT_H

#include "weft/weft_rma.h"

struct weft__rma;
/* Unmap the peers' regions and the heap; the static data stays. */
void weft__rma_fini(weft_ctx_t *ctx);

#endif
