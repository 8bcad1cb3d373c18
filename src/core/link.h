/* Links: processes of other jobs as peers (MPI dynamic processes).
 *
 * Two jobs that meet (at an MPI port, or a spawned job and its parents)
 * exchange the cards of their processes and open a link to each process of
 * the other job. A linked process is a peer like a rank of the job: a gate,
 * numbered after the job's ranks (size, size+1, ...) in the order this
 * process linked them, so its number means something in this process only;
 * point-to-point traffic to and from it is the engine's usual, matched by
 * source as any other. A process linked twice (two connections between the
 * same jobs) keeps its first gate. Links go through the network driver that
 * offers them (tcp), opened for them if the job did not need it.
 *
 * Called under no lock, from any thread; they take the engine lock.
 */
#ifndef WEFT_CORE_LINK_H
#define WEFT_CORE_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/weft.h"

/* A card: what a process of another job needs to link to this one. */
#define WEFT_LINK_CARD_LEN   128
#define WEFT_LINK_SECRET_LEN 16

/* This process's card (opens the link driver the first time). */
int weft__link_card(weft_ctx_t *ctx, uint8_t card[WEFT_LINK_CARD_LEN]);
/* The process id a card names (0 if it is not a card). */
uint64_t weft__link_card_id(const uint8_t card[WEFT_LINK_CARD_LEN]);
/* Link to the n processes whose cards follow each other at cards, all of
 * another job, with the secret both jobs share: peers[i] is the peer number
 * of cards[i] (its gate's, as in weft_sr_isend). The tracks come up in the
 * background: sends wait for them. WEFT_EPROTO for a malformed card,
 * WEFT_ENOBUFS past WEFT_LINKS_MAX linked processes. */
int weft__link_open(weft_ctx_t *ctx, int n, const uint8_t *cards,
                    const uint8_t secret[WEFT_LINK_SECRET_LEN], int *peers);
/* Peers in all: the job's ranks and the linked processes. */
int weft__link_npeers(weft_ctx_t *ctx);
/* Whether peer is a linked process (not a rank of the job). */
bool weft__link_is_linked(weft_ctx_t *ctx, int peer);
/* A linked peer whose end is expected (disconnected): its loss is no error. */
void weft__link_quiet(weft_ctx_t *ctx, int peer);

#endif
