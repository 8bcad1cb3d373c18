/* Fuzz target: the wire decoder, the first code to touch bytes from a peer.
 * Whatever the input, decoding must stay inside the buffer and every chunk it
 * accepts must be self-consistent; the lone-eager decoder the engine tries
 * first must accept exactly the packets of one well-formed EAGER chunk, and
 * decode them as the general decoder does. */
#include <stdlib.h>

#include "core/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft__wire_iter_t it;
    weft__wire_chunk_t c, first = {0}, fast = {0};
    int lone = weft__wire_lone_eager(data, size, &fast);
    if (weft__wire_open(data, size, &it) != WEFT_OK) {
        if (lone)
            abort();
        return 0;
    }
    int rc, n = 0;
    while ((rc = weft__wire_next(&it, &c)) == 1) {
        if (n++ == 0)
            first = c;
        if (c.kind == 0 || c.kind >= WEFT_CHUNK_KIND_MAX)
            abort();
        if (c.payload && (c.payload < data || c.len > (uint64_t)(data + size - c.payload)))
            abort();
        if (c.rkey.len > WEFT_RKEY_MAX)
            abort();
    }
    bool one_eager = rc == 0 && n == 1 && first.kind == WEFT_CHUNK_EAGER;
    if (lone != one_eager)
        abort();
    if (lone && (fast.seq != first.seq || fast.tag != first.tag || fast.comm != first.comm ||
                 fast.len != first.len || fast.payload != first.payload))
        abort();
    return 0;
}
