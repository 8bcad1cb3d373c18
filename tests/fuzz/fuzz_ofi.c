/* Fuzz target: the ofi driver's decoders of what peers send, without
 * libfabric (it is loaded only when a driver starts). The first input byte's
 * low bit picks what the rest is fed to:
 *   0  the pure decoders: the rest as an address published by rank 0..3
 *      (its second byte says which), and as an rkey with the range to read;
 *   1  the receive path (weft__ofi_recv) of a driver of rank 0 in a job of
 *      four, whose tracks to ranks 1 and 2 are live (3 was never connected):
 *      the rest is a run of messages, each u8 flags (bit 0: remote data
 *      present), u32 remote data (sender rank << 8 | kind), u16 length, then
 *      that many bytes (fewer at the end). Packets must reach the engine in
 *      each sender's order, and each exactly once, or the sender be lost;
 *      what a track holds back must be ahead of its turn, each number once.
 * Nothing may crash, read or write outside a buffer, or leak. */
#include <stdlib.h>
#include <string.h>

#include "drivers/ofi/ofi_int.h"

#define NRANKS 4

static int delivered[NRANKS], lost[NRANKS];

static int up_packet(void *o, void *peer, const void *buf, size_t len)
{
    int r = (int)(intptr_t)peer;
    if (lost[r])
        abort(); /* no upcall names a lost track */
    delivered[r]++;
    /* Touch every byte: the sanitizers check the bounds. */
    volatile uint8_t x = 0;
    for (size_t i = 0; i < len; i++)
        x ^= ((const uint8_t *)buf)[i];
    (void)x;
    return len && ((const uint8_t *)buf)[0] == 0xFF ? WEFT_EPROTO : WEFT_OK;
}
static void up_send_done(void *o, void *p, void *c, int s) {}
static void up_rget_done(void *o, void *p, void *c, int s) {}
static void up_peer_lost(void *o, void *peer, int s)
{
    int r = (int)(intptr_t)peer;
    if (lost[r]++)
        abort(); /* once per track */
}

static uint32_t get32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void decoders(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    int peer = data[0] & 3;
    ofi_addr_t a;
    if (weft__ofi_addr_decode(data + 1, size - 1, peer, &a) == WEFT_OK &&
        (a.rank != (uint32_t)peer || a.name != data + 1 + OFI_ADDR_HDR || a.namelen == 0 ||
         a.namelen > OFI_NAME_MAX || a.namelen != size - 1 - OFI_ADDR_HDR))
        abort();
    /* An rkey: u8 length, then its bytes, then the u64 offset and length of
     * the read (zeros where the input ends). */
    uint8_t tail[1 + WEFT_RKEY_MAX + 16] = {0};
    memcpy(tail, data + 1, size - 1 < sizeof tail ? size - 1 : sizeof tail);
    weft_rkey_t rkey = {.len = tail[0] % (WEFT_RKEY_MAX + 1)};
    memcpy(rkey.bytes, tail + 1, WEFT_RKEY_MAX);
    uint64_t offset, len;
    memcpy(&offset, tail + 1 + WEFT_RKEY_MAX, 8);
    memcpy(&len, tail + 1 + WEFT_RKEY_MAX + 8, 8);
    ofi_rkey_t k;
    if (weft__ofi_rkey_decode(&rkey, offset, (size_t)len, &k) == WEFT_OK &&
        (rkey.len != sizeof k || offset > k.len || len > k.len - offset))
        abort();
}

static void receive(const uint8_t *data, size_t size)
{
    weft_driver_t d = {0};
    weft_track_t tracks[NRANKS] = {0}, *table[NRANKS] = {0};
    d.up = (weft_driver_upcalls_t){.packet = up_packet,
                                   .send_done = up_send_done,
                                   .rget_done = up_rget_done,
                                   .peer_lost = up_peer_lost};
    d.rank = 0;
    d.size = NRANKS;
    d.tracks = table;
    for (int r = 0; r < NRANKS; r++) {
        delivered[r] = lost[r] = 0;
        if (r == 3)
            continue;
        tracks[r].driver = &d;
        tracks[r].peer_cookie = (void *)(intptr_t)r;
        tracks[r].peer_rank = r;
        weft_list_init(&tracks[r].reads);
        table[r] = &tracks[r];
        d.nlive++;
    }
    size_t off = 0;
    while (size - off >= 7) {
        uint8_t flags = data[off];
        uint32_t rdata = get32(data + off + 1);
        size_t len = (size_t)data[off + 5] | (size_t)data[off + 6] << 8;
        off += 7;
        if (len > size - off)
            len = size - off;
        /* A buffer of its own, so that a read past its end is seen. */
        uint8_t *pkt = malloc(len ? len : 1);
        memcpy(pkt, data + off, len);
        off += len;
        int n = weft__ofi_recv(&d, flags & 1 ? FI_REMOTE_CQ_DATA : 0, rdata, pkt, len);
        free(pkt);
        if (n < 0)
            abort();
    }
    for (int r = 0; r < NRANKS; r++) {
        weft_track_t *t = &tracks[r];
        /* Each packet handed on moved the expected number on by one. */
        if (!lost[r] && (uint32_t)delivered[r] != t->rx_seq)
            abort();
        if (lost[r] && t->held)
            abort(); /* a lost track holds nothing */
        /* What a live track holds is ahead of its turn, in order, once. */
        uint32_t last = t->rx_seq;
        for (ofi_held_t *h = t->held; h; h = h->next) {
            if ((int32_t)(h->seq - last) <= 0)
                abort();
            last = h->seq;
        }
        while (t->held) {
            ofi_held_t *h = t->held;
            t->held = h->next;
            free(h);
        }
    }
    if (d.nlive != 3 - lost[0] - lost[1] - lost[2])
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setenv("WEFT_LOG", "off", 0); /* losing a peer that sends garbage is expected */
    if (size < 1)
        return 0;
    if (data[0] & 1)
        receive(data + 1, size - 1);
    else
        decoders(data + 1, size - 1);
    return 0;
}
