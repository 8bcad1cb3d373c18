/* weft — incremental messages: pack and unpack, piece by piece.
 *
 * A message is built of pieces: the sender opens it to a rank, a
 * communicator and a tag, packs pieces one after the other and ends it; the
 * receiver opens the next such message from a rank (or any), unpacks the
 * pieces in the same order and ends it. Each piece has a mode:
 *
 *   WEFT_PACK_EXPRESS  on the receiver, the piece is in place when
 *                      weft_unpack returns, so what follows may depend on
 *                      it (read a length, allocate, unpack the body into
 *                      the new buffer);
 *   WEFT_PACK_CHEAPER  the piece is in place once weft_unpack_end returns:
 *                      weft may aggregate it with others, defer it, or move
 *                      it by rendezvous with no copy, at its choice.
 *
 * The sender's mode steers how a piece travels; the receiver's says when it
 * must be in place (an express unpack of a piece packed cheaper waits for
 * it). Pieces travel once the sender ends the message (or has packed
 * WEFT_PACK_GROUP of them): the message's first packet carries the small
 * pieces and a description of all, with express ones first in line; cheaper
 * pieces up to WEFT_PACK_INLINE_MAX bytes (8192 by default; 0: none) join
 * it, and larger pieces follow as messages of their own, received straight
 * into the receiver's buffer. Messages of several packs to one peer share
 * packets where the gate's strategy aggregates (WEFT_STRATEGY=aggreg).
 *
 * A pack's buffers must stay untouched until weft_pack_end returns, except
 * pieces of up to 64 bytes, which are copied when packed. A sender must not
 * wait for its receiver inside a pack: the receiver may be waiting for the
 * pack's first packet, which leaves at weft_pack_end.
 *
 * A message of pieces is one message of the engine's on (comm, tag),
 * ordered with the sender's other packs there (a plain weft_sr_irecv must
 * not take it); its large pieces and continuations travel on communicator
 * id 0xffffff16, this layer's own, under a tag unique to the pack. So packs
 * and unpacks on the same peer and tag may run in several threads at once:
 * each unpack takes one whole message. A pack and an unpack are each used by
 * one thread at a time.
 */
#ifndef WEFT_WEFT_PACK_H
#define WEFT_WEFT_PACK_H

#include "weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Modes of a piece. */
#define WEFT_PACK_EXPRESS 1
#define WEFT_PACK_CHEAPER 2

/* The most pieces one description carries; a longer pack sends its pieces
 * in groups of this many (the receiver follows on its own). */
#define WEFT_PACK_GROUP 64

typedef struct weft_pack weft_pack_t;
typedef struct weft_unpack weft_unpack_t;

/* Open a message to rank dest on communicator comm with tag (<=
 * WEFT_TAG_MAX). WEFT_EINVAL (NULL argument), WEFT_ERANK, WEFT_ETAG,
 * WEFT_ENOMEM. */
WEFT_API int weft_pack_begin(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag,
                             weft_pack_t **pack_out);

/* Add len bytes at ptr as the message's next piece, with mode
 * WEFT_PACK_EXPRESS or WEFT_PACK_CHEAPER. Zero-length pieces are pieces.
 * WEFT_EINVAL (bad mode, NULL ptr with len > 0), or the error of an earlier
 * group's sending (WEFT_EPEERDEAD...), which weft_pack_end also returns. */
WEFT_API int weft_pack(weft_pack_t *pack, const void *ptr, size_t len, int mode);

/* Send what remains, wait until every piece has left (the buffers may be
 * reused) and free the pack. Pieces sent by rendezvous leave once the
 * receiver has unpacked them. WEFT_OK, or the first error of the message's
 * sends (WEFT_EPEERDEAD: dest died). NULL is WEFT_EINVAL. */
WEFT_API int weft_pack_end(weft_pack_t *pack);

/* Wait for the next message of pieces from rank src (or WEFT_ANY_SOURCE)
 * on (comm, tag) (WEFT_ANY_TAG: any) and open it. WEFT_EINVAL, WEFT_ERANK,
 * WEFT_ETAG, WEFT_ENOMEM, WEFT_EPEERDEAD (src died), WEFT_EPROTO (the
 * message found was not made by weft_pack). */
WEFT_API int weft_unpack_begin(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag,
                               weft_unpack_t **unpack_out);

/* The rank that sent the message, and its tag. */
WEFT_API int weft_unpack_source(const weft_unpack_t *unpack);
WEFT_API uint64_t weft_unpack_tag(const weft_unpack_t *unpack);

/* The length of the next piece, in *len, without taking it (waits for the
 * next group's description where needed). WEFT_ENOTFOUND when every piece
 * has been unpacked. */
WEFT_API int weft_unpack_next(weft_unpack_t *unpack, size_t *len);

/* Take the next piece into len bytes at ptr; mode as the receiver needs it
 * (WEFT_PACK_EXPRESS: in place when the call returns; WEFT_PACK_CHEAPER:
 * once weft_unpack_end returns). A piece longer than len gives WEFT_ETRUNC
 * (from this call for an express piece, else perhaps from weft_unpack_end)
 * and what fitted; a shorter one fills the start of the buffer.
 * WEFT_ENOTFOUND when every piece has been unpacked; WEFT_EINVAL;
 * WEFT_EPEERDEAD. */
WEFT_API int weft_unpack(weft_unpack_t *unpack, void *ptr, size_t len, int mode);

/* Wait until every cheaper piece is in place and free the unpack. Pieces
 * left unpacked are received and dropped, and then the result is
 * WEFT_ETRUNC; else the first error of the message's cheaper pieces, or
 * WEFT_OK. NULL is WEFT_EINVAL. */
WEFT_API int weft_unpack_end(weft_unpack_t *unpack);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_PACK_H */
