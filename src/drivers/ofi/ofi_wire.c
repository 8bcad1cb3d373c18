/* The ofi driver's decoders of what peers send outside its packets' bodies:
 * the address a rank publishes through the store, and the rkey that names a
 * region to read. Both come from another process, so every length is checked
 * before a byte is used. */
#include <string.h>

#include "drivers/ofi/ofi_int.h"

static uint32_t get32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int weft__ofi_addr_decode(const void *addr, size_t len, int peer_rank, ofi_addr_t *out)
{
    const uint8_t *a = addr;
    /* u32 rank, u32 pid, then the endpoint's name (ofi_address). */
    if (len <= OFI_ADDR_HDR || len > WEFT_ADDR_MAX || get32(a) != (uint32_t)peer_rank)
        return WEFT_EPROTO;
    out->rank = get32(a);
    out->pid = get32(a + 4);
    out->name = a + OFI_ADDR_HDR;
    out->namelen = len - OFI_ADDR_HDR;
    return WEFT_OK;
}

int weft__ofi_rkey_decode(const weft_rkey_t *rkey, uint64_t offset, size_t len, ofi_rkey_t *out)
{
    ofi_rkey_t k;
    if (rkey->len != sizeof k)
        return WEFT_EINVAL;
    memcpy(&k, rkey->bytes, sizeof k);
    if (offset > k.len || len > k.len - offset)
        return WEFT_EINVAL;
    *out = k;
    return WEFT_OK;
}
