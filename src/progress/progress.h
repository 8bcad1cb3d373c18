/* The progress layer's interface for the engine: completion objects.
 *
 * Below core: it knows the public completion objects (weft/weft_comp.h) and
 * nothing of requests, gates or contexts but the public calls a waiter makes
 * progress with (weft_progress, weft_idle). The engine signals an object
 * through weft__comp_signal, with the entry in a node of its own, so that a
 * full queue can keep the entry without allocating (see weft__comp_signal).
 */
#ifndef WEFT_PROGRESS_H
#define WEFT_PROGRESS_H

#include <stdbool.h>

#include "weft/weft.h"

/* An entry on its way to a completion object, inside whatever produced it
 * (the engine embeds one in each request). */
typedef struct weft__comp_node {
    struct weft__comp_node *next; /* in a queue's overflow list, or a context's handler queue */
    weft_comp_t *comp;            /* the object to signal */
    /* Called by the queue that kept the node (below) once a pop has copied
     * its entry: the node's owner may then be freed. Any thread, no lock. */
    void (*release)(struct weft__comp_node *node);
    weft_comp_entry_t entry;
} weft__comp_node_t;

/* Whether comp is a completion object of a known kind (not NULL). */
bool weft__comp_valid(const weft_comp_t *comp);

/* Signal node->comp with node->entry: a counter, synchronizer or flag by an
 * atomic operation (and a futex wake where a waiter announced its sleep), a
 * queue by a push into its ring, a handler by a call. No function pointer
 * but the handler's. Lock-free except for a handler (whatever its function
 * does) and for a queue whose ring is full: then the node itself goes on the
 * queue's overflow list, under a small lock, and true is returned: the node
 * is the queue's until a pop calls node->release. false: the caller may
 * reuse or free the node at once. The engine calls it for a handler only
 * outside its locks. Thread-safe. */
bool weft__comp_signal(weft__comp_node_t *node);

/* Signal comp with a copy of entry, for a producer that frees its own
 * memory right after: a queue whose ring is full keeps a node allocated
 * here (freed by the pop that takes it); should that allocation fail, the
 * call waits for room in the ring. Thread-safe. */
void weft__comp_signal_copy(weft_comp_t *comp, const weft_comp_entry_t *entry);

#endif
