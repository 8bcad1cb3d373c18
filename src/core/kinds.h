/* The table of chunk kinds: what each kind of chunk on the wire is, how its
 * fields are decoded and what the engine does when one arrives.
 *
 * wire.c frames packets and checks what every chunk shares (its kind, flags
 * and reserved bytes, the bounds of its header and payload); everything
 * particular to a kind is in its entry, defined in the file of the protocol
 * that owns it: messages, rendezvous and ACK in proto.c, credit in
 * proto_credit.c, cancel in proto_cancel.c, cooperative rendezvous in
 * coop.c. Adding a kind: a value in weft__kind_t (wire.h), an entry in
 * its protocol's file, a line in the table (kinds.c); no switch to edit. */
#ifndef WEFT_CORE_KINDS_H
#define WEFT_CORE_KINDS_H

#include "core/wire.h"

struct weft_ctx;
struct weft__gate;

typedef struct weft__kind {
    const char *name;
    uint8_t hdr;  /* header bytes */
    bool message; /* a user message: bytes 4-7 hold its sequence number (else zero) */
    bool flags;   /* may have a flags byte (else zero) */
    /* Decode the kind's fields from its header p (hdr bytes, which arrived;
     * the shared checks are done and the other fields of c cleared) into c,
     * and say how many payload bytes follow it. 0 or WEFT_EPROTO: the decoder
     * checks every field it reads. */
    int (*decode)(const uint8_t *p, weft__wire_chunk_t *c, uint64_t *payload);
    /* Act on a decoded chunk from gate g, under the engine lock. 0, or an
     * error that rejects the rest of its packet (WEFT_EPROTO: a lie). */
    int (*handle)(struct weft_ctx *ctx, struct weft__gate *g, const weft__wire_chunk_t *c);
} weft__kind_t;

/* Indexed by kind; NULL for a value no kind has. */
extern const weft__kind_t *const weft__kinds[WEFT_CHUNK_KIND_MAX];

static inline const weft__kind_t *weft__kind_get(uint8_t kind)
{
    return kind < WEFT_CHUNK_KIND_MAX ? weft__kinds[kind] : NULL;
}

/* The entries, each defined by its protocol. */
extern const weft__kind_t weft__kind_eager, weft__kind_eager_sync, weft__kind_rdv;
extern const weft__kind_t weft__kind_rtr, weft__kind_rdata, weft__kind_ack;
extern const weft__kind_t weft__kind_credit, weft__kind_coop;
extern const weft__kind_t weft__kind_cancel, weft__kind_cancel_reply;

#endif
