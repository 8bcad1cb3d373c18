/* Fuzz target: the wire decoder, the first code to touch bytes from a peer.
 * Whatever the input, decoding must stay inside the buffer and every chunk it
 * accepts must be self-consistent. */
#include <stdlib.h>

#include "core/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft__wire_iter_t it;
    weft__wire_chunk_t c;
    if (weft__wire_open(data, size, &it) != WEFT_OK)
        return 0;
    int rc;
    while ((rc = weft__wire_next(&it, &c)) == 1) {
        if (c.kind == 0 || c.kind >= WEFT_CHUNK_KIND_MAX)
            abort();
        if (c.payload && (c.payload < data || c.len > (uint64_t)(data + size - c.payload)))
            abort();
        if (c.rkey.len > WEFT_RKEY_MAX)
            abort();
    }
    return 0;
}
