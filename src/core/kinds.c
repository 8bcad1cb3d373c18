/* The table of chunk kinds (kinds.h). */
#include "core/kinds.h"

const weft__kind_t *const weft__kinds[WEFT_CHUNK_KIND_MAX] = {
    [WEFT_CHUNK_EAGER] = &weft__kind_eager,   [WEFT_CHUNK_EAGER_SYNC] = &weft__kind_eager_sync,
    [WEFT_CHUNK_RDV] = &weft__kind_rdv,       [WEFT_CHUNK_RTR] = &weft__kind_rtr,
    [WEFT_CHUNK_RDATA] = &weft__kind_rdata,   [WEFT_CHUNK_ACK] = &weft__kind_ack,
    [WEFT_CHUNK_CREDIT] = &weft__kind_credit, [WEFT_CHUNK_COOP] = &weft__kind_coop,
    [WEFT_CHUNK_CANCEL] = &weft__kind_cancel, [WEFT_CHUNK_CANCEL_REPLY] = &weft__kind_cancel_reply,
};
