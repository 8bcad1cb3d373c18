/* Links: the processes of another job as peers.
 *
 * Two jobs that meet (MPI's ports and spawn are built on this) exchange the
 * cards of their processes over any channel they trust and open a link to
 * each process of the other job. A linked process is then a peer like a rank
 * of the job: weft_sr_isend and weft_sr_irecv name it by its peer number,
 * numbered after the job's ranks (weft_size, weft_size + 1, ...) in the order
 * this process linked them; the number means something in this process
 * only. A process linked twice (two meetings of the same jobs) keeps its
 * first number. Links go through the tcp driver, opened for them if the job
 * did not need it: from then on a progress pass polls it too.
 *
 * The two processes of a link prove to each other that they know a secret
 * the two jobs share (WEFT_LINK_SECRET_LEN bytes, which the caller agrees on:
 * MPI derives it from the port's secret), so a stranger who reads the cards
 * cannot pose as either.
 *
 * Every function is thread-safe.
 */
#ifndef WEFT_LINK_H
#define WEFT_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a card: what a process of another job needs to link to this one. */
#define WEFT_LINK_CARD_LEN   128
#define WEFT_LINK_SECRET_LEN 16

/* Fill card with this process's card (opening the tcp driver the first
 * time). WEFT_EUNSUPPORTED when no driver offers links. */
WEFT_API int weft_link_card(weft_ctx_t *ctx, uint8_t card[WEFT_LINK_CARD_LEN]);

/* The process id a card names: random, unique across jobs, never 0 (0 when
 * the bytes are not a card). */
WEFT_API uint64_t weft_link_card_id(const uint8_t card[WEFT_LINK_CARD_LEN]);

/* Link to the n processes whose cards lie one after the other at cards (all
 * of another job), with the secret both jobs share: peers[i] is the peer
 * number of the process of card i (this process's rank for its own card).
 * The connections come up in the background: sends to a peer wait for its.
 * WEFT_EPROTO for a malformed card, WEFT_ENOBUFS past WEFT_LINKS_MAX
 * linked processes (peers[] then holds the numbers of the cards before). */
WEFT_API int weft_link_open(weft_ctx_t *ctx, int n, const uint8_t *cards,
                            const uint8_t secret[WEFT_LINK_SECRET_LEN], int *peers);

/* Wait (making progress) until the connections to the n peers are up:
 * WEFT_OK, or WEFT_EPEERDEAD as soon as one is lost (its process died, or
 * never connected within WEFT_TCP_CONNECT_MS). After it, a peer that dies
 * is seen at once, as a rank of the job is. */
WEFT_API int weft_link_wait(weft_ctx_t *ctx, int n, const int *peers);

/* Peers in all: the job's ranks and the processes linked so far. */
WEFT_API int weft_link_npeers(weft_ctx_t *ctx);

/* Whether peer is a linked process (not a rank of the job). */
WEFT_API bool weft_link_is_linked(weft_ctx_t *ctx, int peer);

/* Say that the end of linked process peer is expected (its job may end
 * now): its loss is then no error, and not logged. Linking it again undoes
 * this. Nothing for a peer that is not linked. */
WEFT_API void weft_link_quiet(weft_ctx_t *ctx, int peer);

/* One program of a job for weft_launch: np processes of argv (argv[0] the
 * command, NULL-terminated), each with env ("VAR=value", NULL-terminated)
 * added to its environment. */
typedef struct weft_launch_app {
    char *const *argv;
    int np;
    char *const *env;
} weft_launch_app_t;

/* Ask the launcher that started this job to start another one of napps
 * programs, on hosts (a comma list) or from hostfile, in wdir (each NULL:
 * the launcher's choice); its processes then meet this one by any means
 * (MPI_Comm_spawn gives them a port in the environment). WEFT_OK once it
 * started; WEFT_EUNSUPPORTED when this launcher cannot: under weftrun and
 * alone, start weftrun (MPI_Comm_spawn does); another error when the
 * launcher tried and failed. */
WEFT_API int weft_launch(weft_ctx_t *ctx, const weft_launch_app_t *apps, int napps,
                         const char *hosts, const char *hostfile, const char *wdir);

#ifdef __cplusplus
}
#endif

#endif
