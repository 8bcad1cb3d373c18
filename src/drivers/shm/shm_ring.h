/* The single-producer single-consumer ring of the shm driver.
 *
 * A ring is an array of 64-byte slots. A record is an 8-byte header {flag, length}
 * followed by the packet, padded to whole slots; it never wraps around the end of
 * the array: when it would, the writer first writes a "skip" record that covers
 * the slots up to the end. The flag of a record that starts at absolute slot index
 * h is (h + 1) truncated to 32 bits (1 instead of 0), so a reader at h knows
 * exactly which value means "ready".
 *
 * Ordering (C11): the writer stores the length and the packet bytes, then the flag
 * with release; the reader loads the flag with acquire, uses the record, clears
 * the flag word of every slot it covered (so bytes of an old packet can never pass
 * for a header in a later lap), then stores its tail with release. The writer
 * loads the tail with acquire only when its cached tail says the ring is full, so
 * the two sides share a cache line only when the ring is really full.
 *
 * The design follows the classic "FastForward" / Lamport SPSC queue line of work
 * (Giacomoni et al., PPoPP 2008) with the per-slot sequence flag of Vyukov's
 * bounded queue, restricted to one producer.
 */
#ifndef WEFT_SHM_RING_H
#define WEFT_SHM_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "drivers/shm/shm_int.h"
#include "weft/weft.h"

#define SHM_SLOT     64u
#define SHM_REC_HDR  8u
#define SHM_LEN_SKIP 0xffffffffu

struct shm_slot {
    _Alignas(SHM_SLOT) _Atomic uint32_t flag;
    /* Bytes of the record, header included (>= 8); SHM_LEN_SKIP for a skip record.
     * Atomic (relaxed) only so that the reader reads it exactly once. */
    _Atomic uint32_t length;
    uint8_t data[SHM_SLOT - SHM_REC_HDR];
};
_Static_assert(sizeof(struct shm_slot) == SHM_SLOT, "slot must be one cache line");

static inline uint32_t shm_ring_flag(uint64_t slot)
{
    uint32_t f = (uint32_t)(slot + 1);
    return f ? f : 1;
}

static inline uint64_t shm_rec_slots(size_t record_bytes)
{
    return ((uint64_t)record_bytes + SHM_SLOT - 1) / SHM_SLOT;
}

/* A record's flag: released, and sequentially consistent when the reader
 * has a doorbell (bell: its look at the rings before it sleeps, shm_bell.c). */
static inline void shm_ring_publish(shm_slot_t *s, uint32_t flag, bool bell)
{
    if (WEFT_LIKELY(!bell))
        atomic_store_explicit(&s->flag, flag, memory_order_release);
    else
        atomic_store_explicit(&s->flag, flag, memory_order_seq_cst);
}

/* Append one record of total packet bytes gathered from iov. WEFT_EAGAIN (and
 * nothing written) when it does not fit now. total <= max_packet was checked.
 * bell: the reader has a doorbell (t->peer_asleep), read once by the caller. */
static inline int shm_ring_write(weft_track_t *t, const struct iovec *iov, int iovcnt, size_t total,
                                 bool bell)
{
    const uint64_t mask = t->tx_mask;
    const uint64_t nslots = mask + 1;
    uint64_t head = t->tx_head;
    uint64_t pos = head & mask;
    uint64_t need = shm_rec_slots(total + SHM_REC_HDR);
    uint64_t skip = (pos + need > nslots) ? nslots - pos : 0;
    uint64_t end = head + skip + need;

    if (WEFT_UNLIKELY(end - t->tx_tail_cache > nslots)) {
        t->tx_tail_cache = atomic_load_explicit(t->tx_tail, memory_order_acquire);
        if (end - t->tx_tail_cache > nslots)
            return WEFT_EAGAIN;
    }
    shm_slot_t *s = &t->tx_slots[pos];
    if (WEFT_UNLIKELY(skip)) {
        atomic_store_explicit(&s->length, SHM_LEN_SKIP, memory_order_relaxed);
        shm_ring_publish(s, shm_ring_flag(head), bell);
        head += skip;
        s = &t->tx_slots[0];
    }
    atomic_store_explicit(&s->length, (uint32_t)(total + SHM_REC_HDR), memory_order_relaxed);
    uint8_t *p = s->data;
    /* iov_base may be NULL for an empty entry: weft__copy then reads nothing. */
    if (WEFT_LIKELY(iovcnt == 1)) {
        weft__copy(p, iov[0].iov_base, total);
    } else {
        for (int i = 0; i < iovcnt; i++) {
            weft__copy(p, iov[i].iov_base, iov[i].iov_len);
            p += iov[i].iov_len;
        }
    }
    shm_ring_publish(s, shm_ring_flag(head), bell);
    t->tx_head = head + need;
    return WEFT_OK;
}

#endif
