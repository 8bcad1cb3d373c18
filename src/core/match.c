/* Constant-time tag matching, after seed 000 ("A constant-time tag matching
 * algorithm", NewMadeleine): one hash table per receive class, a FIFO of posted
 * receives and a FIFO of unexpected messages per key, and a global posting
 * sequence number to interleave the classes. See match.h for the contract.
 *
 * Where this departs from the seed's pseudo-code:
 *  - the seed's Algorithm 2 swaps the any-source and any-tag lookups; here an
 *    any-source receive is indexed by (comm, tag) and an any-tag receive by
 *    (comm, source), as the text of the seed says;
 *  - every key includes the communicator, the wildcard table included, so a
 *    receive never matches a message of another communicator;
 *  - an entry goes back to its slab once both its FIFOs are empty, as soon
 *    as another entry of its table empties (each table parks the last empty
 *    one for reuse). NewMadeleine kept them for ever, so an application that
 *    used many distinct tags grew the tables without bound;
 *  - the tables grow and shrink with the number of live entries;
 *  - unexpected messages enter the three wildcard FIFOs lazily. Keeping them
 *    costs every message three more entries to find or make and, when it is
 *    taken, three unlinks that write into its neighbours: random cache lines
 *    that a job naming source and tag never reads. So while no wildcard
 *    receive or probe has looked since the unexpected queue was last empty,
 *    messages go into their exact-key FIFO only. The first wildcard post or
 *    peek indexes the waiting messages in arrival order (they carry an
 *    arrival number: a sort, O(U log U)), and from then on every message goes
 *    into all four FIFOs as the seed has it, until the queue is empty again.
 *    A message is indexed at most once, so this costs O(log U) per message
 *    amortised, and nothing for jobs without wildcards;
 *  - a message alone under its exact key has no entry: the message itself is
 *    a node of the exact-key table's bucket chain (its exact-key link then
 *    holds the chain's next node and a mark). A receive naming source and tag
 *    then goes from the bucket straight to the message, whose key shares a
 *    cache line with its data (core_int.h), where an entry put one more
 *    dependent cache miss in between; and the burst of distinct tags that
 *    makes the unexpected queue long allocates and frees no entry. A second
 *    message with the same key takes an entry, whose FIFO then holds both.
 *    A receive naming source and tag alone under its key is kept the same
 *    way, so a ping-pong on one tag posts, matches and unlinks with no entry
 *    at all, and an arrival reaches the receive from its bucket.
 */
#include <stdlib.h>

#include "util/util.h" /* before match.h: list.h uses weft_container_of */
#include "core/match.h"
#include "core/match_int.h"
#include "util/slab.h"
#include "weft/weft.h"

/* Smallest bucket array; a power of two, as are all sizes (index = hash & mask). */
#define TABLE_MIN_BUCKETS 16
/* Tables never shrink below WEFT_MATCH_SHRINK_FLOOR buckets (8 KiB each): a job
 * that posts thousands of receives in bursts would otherwise rehash down and up
 * again on every burst. */
#define TABLE_SHRINK_FLOOR WEFT_MATCH_SHRINK_FLOOR
/* Entries kept for reuse on a free list in front of their slab: a receive or an
 * unexpected message with a new key needs one (four while wildcard receives
 * look), so bursts of tens of thousands of distinct tags cost no call into
 * the slab once warm, and a ping-pong reuses one hot entry. At most 4 MiB
 * stays held after the largest burst. */
#define FREE_LIST_MAX 65536

/* A node of a bucket chain: an entry, or, in the exact-key table only, a
 * message (bit 0 set) or a posted receive (bit 1 set) alone under its key;
 * all three are 8-byte aligned at least. 0 ends a chain. */
typedef uintptr_t node_t;
#define NODE_MSG  ((uintptr_t)1)
#define NODE_RECV ((uintptr_t)2)
#define NODE_TAGS (NODE_MSG | NODE_RECV)
_Static_assert(_Alignof(weft__match_msg_t) >= 4 && _Alignof(weft__match_recv_t) >= 4,
               "a node's two low bits tell its kind");
/* A lone node's link is written through weft_list_t (the list helpers) and
 * read through uintptr_t (node_next): the build passes -fno-strict-aliasing
 * (CMakeLists.txt), and no function reads one type after writing the other
 * without a call in between. */

/* A key of one class's table and the two FIFOs that hang from it. The fields a
 * class does not use hold the wildcard value, so one comparison serves all.
 * Exactly one cache line, from a cache-line-aligned slab: a lookup that finds
 * its entry touches one line, and entries made in one burst lie together.
 * Bucket chains are singly linked: unlinking walks the node's chain from its
 * bucket (O(1) at the tables' load), which writes the bucket's line as a back
 * pointer would, but never the next node's; the room saved keeps the hash,
 * so a resize need not recompute it. */
struct weft__match_entry {
    node_t next;   /* next in the bucket chain */
    uint32_t hash; /* key_hash of the key */
    uint32_t comm;
    int32_t source;
    uint64_t tag;
    weft_list_t recvs; /* posted receives (recv->link), in posting order */
    weft_list_t msgs;  /* unexpected messages (their link of this class), in arrival order */
};

_Static_assert(sizeof(weft__match_entry_t) == WEFT_CACHELINE, "an entry is one cache line");

/* Chained hashing: entries never move when the table is resized, so receives
 * and messages can keep a pointer to their entry and leave it in O(1). */
typedef struct table {
    node_t *buckets;
    size_t mask;  /* number of buckets - 1 */
    size_t count; /* nodes: live and parked entries, lone messages and receives */
} table_t;

struct weft__match {
    weft__match_counts_t counts; /* first: read inline (match.h) */
    table_t tables[WEFT_MATCH_NIDX];
    uint64_t next_seq;                    /* global posting order (seed 000) */
    size_t posted_class[WEFT_MATCH_NIDX]; /* lets arrive skip empty classes */
    uint64_t next_arrival;                /* arrival order of unexpected messages */
    bool wild_msgs;                       /* messages are in the wildcard FIFOs too (see above) */
    weft_slab_cache_t entries;            /* where entries live (one cache line each) */
    weft__match_entry_t *free_list;       /* chained through next (never a message) */
    /* Per table, the last entry that emptied, left in place (see
     * entry_release): a receive and its message that keep one key reuse it. */
    weft__match_entry_t *parked[WEFT_MATCH_NIDX];
    size_t free_count;
    long fail_after; /* test hook, < 0 when off */
};

/* The finaliser of MurmurHash3: every input bit reaches every output bit, so
 * tags 0, 1, 2... or multiples of 1024 spread over all buckets, low bits
 * included. */
static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* 32 bits: plenty for any table, and an entry keeps them in 4 bytes. The
 * multiplication spreads (comm, source) over all 64 bits before the tag joins
 * it, and one finaliser then mixes the three: every bit of each reaches the
 * low bits that pick a bucket. */
static inline uint32_t key_hash(uint32_t comm, int32_t source, uint64_t tag)
{
    uint64_t comm_source = ((uint64_t)comm << 32) | (uint32_t)source;
    return (uint32_t)mix64(tag ^ (comm_source * 0x9e3779b97f4a7c15ULL));
}

static inline int class_of(int32_t source, uint64_t tag)
{
    if (source == WEFT_MATCH_ANY_SOURCE)
        return tag == WEFT_MATCH_ANY_TAG ? WEFT_MATCH_IDX_ALL : WEFT_MATCH_IDX_TAG;
    return tag == WEFT_MATCH_ANY_TAG ? WEFT_MATCH_IDX_SRC : WEFT_MATCH_IDX_SPEC;
}

/* The key under which a message (comm, source, tag) is filed in table idx. */
static inline void message_key(int idx, int32_t *source, uint64_t *tag)
{
    if (idx == WEFT_MATCH_IDX_TAG || idx == WEFT_MATCH_IDX_ALL)
        *source = WEFT_MATCH_ANY_SOURCE;
    if (idx == WEFT_MATCH_IDX_SRC || idx == WEFT_MATCH_IDX_ALL)
        *tag = WEFT_MATCH_ANY_TAG;
}

/* A message's link in the FIFO of class idx, and back. */
static inline weft_list_t *msg_link(weft__match_msg_t *msg, int idx)
{
    return idx == WEFT_MATCH_IDX_SPEC ? &msg->link : &msg->wild[idx - 1];
}

static inline weft__match_msg_t *msg_of_link(weft_list_t *link, int idx)
{
    if (idx == WEFT_MATCH_IDX_SPEC)
        return weft_container_of(link, weft__match_msg_t, link);
    return weft_container_of(link - (idx - 1), weft__match_msg_t, wild); /* wild[0] */
}

static inline bool node_is_msg(node_t n)
{
    return n & NODE_MSG;
}

static inline bool node_is_recv(node_t n)
{
    return n & NODE_RECV;
}

static inline weft__match_entry_t *node_entry(node_t n)
{
    return (n & NODE_TAGS) ? NULL : (weft__match_entry_t *)n;
}

static inline weft__match_msg_t *node_msg(node_t n)
{
    return (weft__match_msg_t *)(n & ~NODE_MSG);
}

static inline weft__match_recv_t *node_recv(node_t n)
{
    return (weft__match_recv_t *)(n & ~NODE_RECV);
}

static inline node_t *node_next(node_t n)
{
    if (node_is_msg(n))
        return &node_msg(n)->chain.next;
    if (node_is_recv(n))
        return &node_recv(n)->chain.next;
    return &((weft__match_entry_t *)n)->next;
}

/* A message or receive alone under its key has bit 0 of chain.lone set (where
 * link.prev, an aligned pointer, lies otherwise) and, where a pointer has the
 * room, its hash above it, so leaving its chain or a resize needs no rehash. */
static inline uintptr_t lone_word(uint32_t hash)
{
    return ((uintptr_t)hash << 1) | 1;
}

static inline bool is_lone(uintptr_t word)
{
    return word & 1;
}

static inline uint32_t lone_hash(uintptr_t word, uint32_t comm, int32_t source, uint64_t tag)
{
    if (sizeof(uintptr_t) >= sizeof(uint64_t))
        return (uint32_t)(word >> 1);
    return key_hash(comm, source, tag);
}

static int table_init(table_t *t)
{
    t->buckets = calloc(TABLE_MIN_BUCKETS, sizeof(*t->buckets));
    if (!t->buckets)
        return WEFT_ENOMEM;
    t->mask = TABLE_MIN_BUCKETS - 1;
    t->count = 0;
    return WEFT_OK;
}

static inline void bucket_insert(node_t *head, node_t n)
{
    *node_next(n) = *head;
    *head = n;
}

/* Where the chain of the bucket of hash points at node n. */
static inline node_t *bucket_pos(table_t *t, node_t n, uint32_t hash)
{
    node_t *pos = &t->buckets[hash & t->mask];
    while (*pos != n)
        pos = node_next(*pos);
    return pos;
}

/* The key and the mark of a lone node (a message or a receive). */
static inline void lone_key(node_t n, uint32_t *comm, int32_t *source, uint64_t *tag,
                            uintptr_t *mark)
{
    if (node_is_msg(n)) {
        const weft__match_msg_t *msg = node_msg(n);
        *comm = msg->comm;
        *source = msg->source;
        *tag = msg->tag;
        *mark = msg->chain.lone;
    } else {
        const weft__match_recv_t *recv = node_recv(n);
        *comm = recv->comm;
        *source = recv->source;
        *tag = recv->tag;
        *mark = recv->chain.lone;
    }
}

static inline uint32_t node_hash(node_t n)
{
    if (node_entry(n))
        return node_entry(n)->hash;
    uint32_t comm;
    int32_t source;
    uint64_t tag;
    uintptr_t mark;
    lone_key(n, &comm, &source, &tag, &mark);
    return lone_hash(mark, comm, source, tag);
}

/* Rehash into nbuckets buckets. If the new array cannot be had, keep the old
 * one: lookups stay correct, only the chains get longer, so growth never turns
 * into an error for the caller. */
static __attribute__((noinline, cold)) void table_resize(table_t *t, size_t nbuckets)
{
    node_t *buckets = calloc(nbuckets, sizeof(*buckets));
    if (!buckets)
        return;
    for (size_t i = 0; i <= t->mask; i++) {
        node_t n = t->buckets[i];
        while (n) {
            node_t next = *node_next(n);
            bucket_insert(&buckets[node_hash(n) & (nbuckets - 1)], n);
            n = next;
        }
    }
    free(t->buckets);
    t->buckets = buckets;
    t->mask = nbuckets - 1;
}

/* The node of a key: its entry, or a message or receive alone under it; 0 if
 * none. */
static inline node_t table_find(const table_t *t, uint32_t hash, uint32_t comm, int32_t source,
                                uint64_t tag)
{
    for (node_t n = t->buckets[hash & t->mask]; n; n = *node_next(n)) {
        if (node_is_msg(n)) {
            const weft__match_msg_t *msg = node_msg(n);
            if (msg->tag == tag && msg->source == source && msg->comm == comm)
                return n;
        } else if (node_is_recv(n)) {
            const weft__match_recv_t *recv = node_recv(n);
            if (recv->tag == tag && recv->source == source && recv->comm == comm)
                return n;
        } else {
            const weft__match_entry_t *e = node_entry(n);
            if (e->hash == hash && e->tag == tag && e->source == source && e->comm == comm)
                return n;
        }
    }
    return 0;
}

/* The entry of a key, NULL if it has none (what is alone under it has none). */
static inline weft__match_entry_t *table_lookup(const table_t *t, uint32_t hash, uint32_t comm,
                                                int32_t source, uint64_t tag)
{
    return node_entry(table_find(t, hash, comm, source, tag));
}

/* Chain a new node in: grow at load 3/4, so chains stay O(1) on average. */
static inline void table_add(table_t *t, node_t n, uint32_t hash)
{
    if ((t->count + 1) * 4 > (t->mask + 1) * 3)
        table_resize(t, (t->mask + 1) * 2);
    bucket_insert(&t->buckets[hash & t->mask], n);
    t->count++;
}

/* Take a node out of its chain. Shrink at load 1/32, in one step, to load 1/4
 * at most: far from the growth threshold, so an insert/remove pattern around
 * one size cannot make every call rehash and resizing stays amortised O(1).
 * Draining a burst of N keys then rehashes once, walking N/32 nodes, where
 * halving at load 1/8 rehashed at every halving and walked about N/2 nodes,
 * each a cache line the drain had left. */
static __attribute__((noinline, cold)) void table_shrink(table_t *t)
{
    size_t target = TABLE_SHRINK_FLOOR;
    while (target < t->count * 4)
        target *= 2;
    table_resize(t, target);
}

static inline void table_remove(table_t *t, node_t n, uint32_t hash)
{
    node_t *pos = bucket_pos(t, n, hash);
    *pos = *node_next(n);
    t->count--;
    size_t nbuckets = t->mask + 1;
    if (WEFT_UNLIKELY(nbuckets > TABLE_SHRINK_FLOOR && t->count * 32 < nbuckets))
        table_shrink(t);
}

static weft__match_entry_t *entry_alloc(weft__match_t *m)
{
    if (m->fail_after >= 0) {
        if (m->fail_after == 0)
            return NULL;
        m->fail_after--;
    }
    weft__match_entry_t *e = m->free_list;
    if (e) {
        m->free_list = node_entry(e->next);
        m->free_count--;
        return e;
    }
    return weft_slab_alloc(&m->entries);
}

/* Out of line, so the callers' fast path keeps few registers live. */
static __attribute__((noinline, cold)) void entry_free_slab(weft__match_t *m,
                                                            weft__match_entry_t *e)
{
    weft_slab_free(&m->entries, e);
}

static inline void entry_free(weft__match_t *m, weft__match_entry_t *e)
{
    if (WEFT_UNLIKELY(m->free_count >= FREE_LIST_MAX)) {
        entry_free_slab(m, e);
        return;
    }
    e->next = (node_t)m->free_list;
    m->free_list = e;
    m->free_count++;
}

/* A new empty entry for a key, not in any table yet; NULL when out of memory. */
static weft__match_entry_t *entry_new(weft__match_t *m, uint32_t hash, uint32_t comm,
                                      int32_t source, uint64_t tag)
{
    weft__match_entry_t *e = entry_alloc(m);
    if (!e)
        return NULL;
    e->hash = hash;
    e->comm = comm;
    e->source = source;
    e->tag = tag;
    weft_list_init(&e->recvs);
    weft_list_init(&e->msgs);
    return e;
}

/* The entry for a key of a wildcard table idx (where nothing is ever alone
 * under a key), created if absent. */
static int entry_get(weft__match_t *m, int idx, uint32_t hash, uint32_t comm, int32_t source,
                     uint64_t tag, weft__match_entry_t **out)
{
    table_t *t = &m->tables[idx];
    weft__match_entry_t *e = table_lookup(t, hash, comm, source, tag);
    if (e) {
        if (e == m->parked[idx])
            m->parked[idx] = NULL;
        *out = e;
        return WEFT_OK;
    }
    e = entry_new(m, hash, comm, source, tag);
    if (!e)
        return WEFT_ENOMEM;
    table_add(t, (node_t)e, hash);
    *out = e;
    return WEFT_OK;
}

/* Put a new entry in the chain where the lone node n of its key was; the
 * caller then moves n into the entry's FIFO. */
static void entry_replace(table_t *t, node_t n, uint32_t hash, weft__match_entry_t *e)
{
    e->next = *node_next(n);
    *bucket_pos(t, n, hash) = (node_t)e;
}

/* Take an empty entry out of its table and free it. */
static void entry_drop(weft__match_t *m, int idx, weft__match_entry_t *e)
{
    table_remove(&m->tables[idx], (node_t)e, e->hash);
    entry_free(m, e);
}

/* Drop an entry once nothing hangs from it. The entry that empties last is
 * parked: left in its table, so the next receive or message with its key finds
 * it there, and the one parked before it is dropped. A ping-pong or a loop on
 * one tag then makes and drops no entry per message, and a table never holds
 * more than one empty entry, so memory stays proportional to what is pending. */
static inline void entry_release(weft__match_t *m, int idx, weft__match_entry_t *e)
{
    if (!weft_list_empty(&e->recvs) || !weft_list_empty(&e->msgs))
        return;
    weft__match_entry_t *old = m->parked[idx];
    m->parked[idx] = e;
    if (old)
        entry_drop(m, idx, old);
}

/* The same for the roll-back of a failed operation: what it emptied goes at
 * once, so failing again makes and fails the same allocations. */
static void entry_release_now(weft__match_t *m, int idx, weft__match_entry_t *e)
{
    if (!weft_list_empty(&e->recvs) || !weft_list_empty(&e->msgs))
        return;
    if (m->parked[idx] == e)
        m->parked[idx] = NULL;
    entry_drop(m, idx, e);
}

/* Like a message, a receive keeps no pointer to its entry: alone in its FIFO,
 * both its neighbours are the entry's list head. */
static void recv_unlink(weft__match_t *m, weft__match_recv_t *recv)
{
    if (is_lone(recv->chain.lone)) { /* names source and tag: the exact-key table */
        table_remove(&m->tables[WEFT_MATCH_IDX_SPEC], (node_t)recv | NODE_RECV,
                     lone_hash(recv->chain.lone, recv->comm, recv->source, recv->tag));
        recv->link.next = recv->link.prev = NULL;
        m->posted_class[WEFT_MATCH_IDX_SPEC]--;
        m->counts.posted--;
        return;
    }
    int idx = class_of(recv->source, recv->tag);
    weft_list_t *prev = recv->link.prev, *next = recv->link.next;
    prev->next = next;
    next->prev = prev;
    recv->link.next = recv->link.prev = NULL;
    if (prev == next)
        entry_release(m, idx, weft_container_of(prev, weft__match_entry_t, recvs));
    m->posted_class[idx]--;
    m->counts.posted--;
}

int weft__match_create(weft__match_t **out)
{
    weft__match_t *m = calloc(1, sizeof(*m));
    if (!m)
        return WEFT_ENOMEM;
    /* Empty slabs go back at once: the free list is what keeps entries. */
    if (weft_slab_init(&m->entries, sizeof(weft__match_entry_t), 0) != WEFT_OK) {
        free(m);
        return WEFT_ENOMEM;
    }
    int idx;
    for (idx = 0; idx < WEFT_MATCH_NIDX; idx++)
        if (table_init(&m->tables[idx]) != WEFT_OK)
            goto err_free_tables;
    m->fail_after = -1;
    *out = m;
    return WEFT_OK;

err_free_tables:
    while (idx-- > 0)
        free(m->tables[idx].buckets);
    weft_slab_fini(&m->entries);
    free(m);
    return WEFT_ENOMEM;
}

void weft__match_destroy(weft__match_t *m)
{
    if (!m)
        return;
    for (int idx = 0; idx < WEFT_MATCH_NIDX; idx++)
        free(m->tables[idx].buckets);
    weft_slab_fini(&m->entries); /* every entry, live or not */
    free(m);
}

/* The oldest receive posted under a key of table idx; NULL if none. */
static inline weft__match_recv_t *first_posted(const weft__match_t *m, int idx, uint32_t hash,
                                               uint32_t comm, int32_t source, uint64_t tag)
{
    node_t n = table_find(&m->tables[idx], hash, comm, source, tag);
    if (node_is_recv(n))
        return node_recv(n);
    weft__match_entry_t *e = node_entry(n);
    return !e || weft_list_empty(&e->recvs)
               ? NULL
               : weft_list_entry(e->recvs.next, weft__match_recv_t, link);
}

/* Seed 000, Algorithm 1: look at the head of the posted FIFO of each class the
 * message could match and take the receive posted first. */
weft__match_recv_t *weft__match_first_recv(weft__match_t *m, uint32_t comm, int32_t source,
                                           uint64_t tag)
{
    if (m->counts.posted == 0 || source < 0 || tag == WEFT_MATCH_ANY_TAG)
        return NULL;
    if (m->posted_class[WEFT_MATCH_IDX_SPEC] == m->counts.posted) {
        /* Only receives naming source and tag are posted: one lookup. */
        return first_posted(m, WEFT_MATCH_IDX_SPEC, key_hash(comm, source, tag), comm, source, tag);
    }
    weft__match_recv_t *best = NULL;
    for (int idx = 0; idx < WEFT_MATCH_NIDX; idx++) {
        if (m->posted_class[idx] == 0)
            continue;
        int32_t key_source = source;
        uint64_t key_tag = tag;
        message_key(idx, &key_source, &key_tag);
        weft__match_recv_t *head =
            first_posted(m, idx, key_hash(comm, key_source, key_tag), comm, key_source, key_tag);
        if (head && (!best || head->seq < best->seq))
            best = head;
    }
    return best;
}

weft__match_recv_t *weft__match_arrive(weft__match_t *m, uint32_t comm, int32_t source,
                                       uint64_t tag)
{
    weft__match_recv_t *best = weft__match_first_recv(m, comm, source, tag);
    if (best)
        recv_unlink(m, best);
    return best;
}

/* Put a message at the tail of its three wildcard FIFOs. Finds or creates the
 * three entries before linking anything, so a failure leaves the structure
 * exactly as it was. */
static int link_wild(weft__match_t *m, weft__match_msg_t *msg)
{
    weft__match_entry_t *entries[WEFT_MATCH_NIDX];
    int idx, rc = WEFT_OK;
    for (idx = WEFT_MATCH_IDX_SPEC + 1; idx < WEFT_MATCH_NIDX; idx++) {
        int32_t key_source = msg->source;
        uint64_t key_tag = msg->tag;
        message_key(idx, &key_source, &key_tag);
        rc = entry_get(m, idx, key_hash(msg->comm, key_source, key_tag), msg->comm, key_source,
                       key_tag, &entries[idx]);
        if (rc != WEFT_OK)
            goto err_release_entries;
    }
    for (idx = WEFT_MATCH_IDX_SPEC + 1; idx < WEFT_MATCH_NIDX; idx++)
        weft_list_push_back(&entries[idx]->msgs, msg_link(msg, idx));
    return WEFT_OK;

err_release_entries:
    while (--idx > WEFT_MATCH_IDX_SPEC)
        entry_release_now(m, idx, entries[idx]); /* frees only the empty ones */
    return rc;
}

/* Take a message out of one FIFO (now: a roll-back, see entry_release_now). */
static void unlink_msg(weft__match_t *m, weft__match_msg_t *msg, int idx, bool now)
{
    weft_list_t *l = msg_link(msg, idx), *prev = l->prev, *next = l->next;
    prev->next = next;
    next->prev = prev;
    l->next = l->prev = NULL;
    /* Alone in its FIFO: both neighbours are the entry's list head, and the
     * entry may go. Otherwise the FIFO still holds a message. */
    if (prev != next)
        return;
    weft__match_entry_t *e = weft_container_of(prev, weft__match_entry_t, msgs);
    if (now)
        entry_release_now(m, idx, e);
    else
        entry_release(m, idx, e);
}

static void unlink_wild(weft__match_t *m, weft__match_msg_t *msg, bool now)
{
    for (int idx = WEFT_MATCH_IDX_SPEC + 1; idx < WEFT_MATCH_NIDX; idx++)
        unlink_msg(m, msg, idx, now);
}

/* Call fn on every message inside: the exact-key table holds them all, alone
 * in a chain or in an entry's FIFO. */
static void each_msg(const weft__match_t *m, void (*fn)(weft__match_msg_t *, void *), void *arg)
{
    const table_t *t = &m->tables[WEFT_MATCH_IDX_SPEC];
    for (size_t i = 0; i <= t->mask; i++)
        for (node_t n = t->buckets[i]; n; n = *node_next(n)) {
            if (node_is_msg(n)) {
                fn(node_msg(n), arg);
                continue;
            }
            weft__match_entry_t *e = node_entry(n);
            if (!e)
                continue; /* a posted receive */
            for (weft_list_t *pos = e->msgs.next; pos != &e->msgs; pos = pos->next)
                fn(msg_of_link(pos, WEFT_MATCH_IDX_SPEC), arg);
        }
}

static void collect_msg(weft__match_msg_t *msg, void *arg)
{
    weft__match_msg_t ***end = arg;
    *(*end)++ = msg;
}

static int by_arrival(const void *a, const void *b)
{
    uint64_t x = (*(weft__match_msg_t *const *)a)->arrival;
    uint64_t y = (*(weft__match_msg_t *const *)b)->arrival;
    return (x > y) - (x < y);
}

/* A wildcard receive or probe is about to read the wildcard FIFOs: fill them
 * with the messages waiting, in arrival order, if they are not kept yet. The
 * exact-key FIFOs hold every message, so the exact-key table lists them. */
static __attribute__((noinline)) int wild_index(weft__match_t *m)
{
    if (m->wild_msgs)
        return WEFT_OK;
    if (m->counts.unexpected == 0) {
        m->wild_msgs = true;
        return WEFT_OK;
    }
    weft__match_msg_t **msgs = malloc(m->counts.unexpected * sizeof(*msgs));
    if (!msgs)
        return WEFT_ENOMEM;
    weft__match_msg_t **end = msgs;
    each_msg(m, collect_msg, &end);
    size_t n = (size_t)(end - msgs);
    qsort(msgs, n, sizeof(*msgs), by_arrival);
    for (size_t i = 0; i < n; i++) {
        int rc = link_wild(m, msgs[i]);
        if (rc != WEFT_OK) {
            while (i-- > 0)
                unlink_wild(m, msgs[i], true);
            free(msgs);
            return rc;
        }
    }
    free(msgs);
    m->wild_msgs = true;
    return WEFT_OK;
}

/* Seed 000, Algorithm 1, last step: the message goes at the tail of its
 * exact-key FIFO, and of the three wildcard FIFOs while they are kept, so a
 * receive of any class finds it at its own key. The first message of a key
 * with no entry goes into the bucket chain alone; the second makes the entry,
 * which takes the first one's place in the chain and both in its FIFO. */
int weft__match_add_unexpected(weft__match_t *m, weft__match_msg_t *msg)
{
    if (msg->source < 0 || msg->tag == WEFT_MATCH_ANY_TAG)
        return WEFT_EINVAL;
    table_t *t = &m->tables[WEFT_MATCH_IDX_SPEC];
    uint32_t hash = key_hash(msg->comm, msg->source, msg->tag);
    node_t n = table_find(t, hash, msg->comm, msg->source, msg->tag);
    if (node_is_recv(n) || (node_entry(n) && !weft_list_empty(&node_entry(n)->recvs)))
        return WEFT_EINVAL; /* a receive waits for it: weft__match_arrive first */
    weft__match_msg_t *first = node_is_msg(n) ? node_msg(n) : NULL; /* alone so far */
    weft__match_entry_t *e = node_entry(n);
    if (e && e == m->parked[WEFT_MATCH_IDX_SPEC])
        m->parked[WEFT_MATCH_IDX_SPEC] = NULL;
    int rc;
    if (m->wild_msgs && (rc = link_wild(m, msg)) != WEFT_OK) {
        if (e)
            entry_release_now(m, WEFT_MATCH_IDX_SPEC, e); /* frees it only if empty */
        return rc;
    }
    if (first) {
        e = entry_new(m, hash, msg->comm, msg->source, msg->tag);
        if (!e) {
            if (m->wild_msgs)
                unlink_wild(m, msg, true);
            return WEFT_ENOMEM;
        }
        entry_replace(t, n, hash, e);
        weft_list_push_back(&e->msgs, &first->link);
    }
    if (e) {
        weft_list_push_back(&e->msgs, &msg->link);
    } else {
        msg->chain.lone = lone_word(hash);
        table_add(t, (node_t)msg | NODE_MSG, hash);
    }
    msg->arrival = m->next_arrival++;
    m->counts.unexpected++;
    return WEFT_OK;
}

/* The oldest message inside under key (comm, source, tag) of table idx, left
 * in place; NULL if none. */
static inline weft__match_msg_t *first_msg(const weft__match_t *m, int idx, uint32_t hash,
                                           uint32_t comm, int32_t source, uint64_t tag)
{
    node_t n = table_find(&m->tables[idx], hash, comm, source, tag);
    if (!n)
        return NULL;
    if (node_is_msg(n))
        return node_msg(n);
    weft__match_entry_t *e = node_entry(n);
    return !e || weft_list_empty(&e->msgs) ? NULL : msg_of_link(e->msgs.next, idx);
}

/* Post a receive naming source and tag under its key, no message matching it:
 * alone in the bucket chain if the key has nothing yet; into the key's entry
 * if it has one; with a receive alone under the key, into a new entry that
 * takes that receive's place in the chain and holds both in order. */
static int post_spec(weft__match_t *m, weft__match_recv_t *recv, uint32_t hash)
{
    table_t *t = &m->tables[WEFT_MATCH_IDX_SPEC];
    node_t n = table_find(t, hash, recv->comm, recv->source, recv->tag);
    if (!n) {
        recv->chain.lone = lone_word(hash);
        table_add(t, (node_t)recv | NODE_RECV, hash);
        return WEFT_OK;
    }
    weft__match_entry_t *e = node_entry(n); /* never a message: it would have matched */
    if (node_is_recv(n)) {
        e = entry_new(m, hash, recv->comm, recv->source, recv->tag);
        if (!e)
            return WEFT_ENOMEM;
        entry_replace(t, n, hash, e);
        weft_list_push_back(&e->recvs, &node_recv(n)->link);
    } else if (e == m->parked[WEFT_MATCH_IDX_SPEC]) {
        m->parked[WEFT_MATCH_IDX_SPEC] = NULL;
    }
    weft_list_push_back(&e->recvs, &recv->link);
    return WEFT_OK;
}

/* Post a wildcard receive at the tail of its key's entry. */
static int post_wild(weft__match_t *m, weft__match_recv_t *recv, int idx, uint32_t hash)
{
    weft__match_entry_t *e;
    int rc = entry_get(m, idx, hash, recv->comm, recv->source, recv->tag, &e);
    if (rc == WEFT_OK)
        weft_list_push_back(&e->recvs, &recv->link);
    return rc;
}

/* Seed 000, Algorithm 2: a receive looks only at the unexpected FIFO of its own
 * class and key, whose head is the oldest message it can match. */
weft__match_msg_t *weft__match_post(weft__match_t *m, weft__match_recv_t *recv, int *err)
{
    int idx = class_of(recv->source, recv->tag);
    uint32_t hash = key_hash(recv->comm, recv->source, recv->tag);
    if (m->counts.unexpected > 0) {
        if (idx != WEFT_MATCH_IDX_SPEC) {
            int rc = wild_index(m);
            if (rc != WEFT_OK) {
                *err = rc;
                return NULL;
            }
        }
        weft__match_msg_t *msg = first_msg(m, idx, hash, recv->comm, recv->source, recv->tag);
        if (msg) {
            weft__match_remove_msg(m, msg);
            recv->link.next = recv->link.prev = NULL; /* not posted */
            *err = WEFT_OK;
            return msg;
        }
    }
    int rc = idx == WEFT_MATCH_IDX_SPEC ? post_spec(m, recv, hash) : post_wild(m, recv, idx, hash);
    if (rc != WEFT_OK) {
        *err = rc;
        return NULL;
    }
    recv->seq = m->next_seq++;
    m->posted_class[idx]++;
    m->counts.posted++;
    *err = WEFT_OK;
    return NULL;
}

/* A wildcard probe's key and the oldest waiting message it matches so far. */
typedef struct walk {
    uint32_t comm;
    int32_t source;
    uint64_t tag;
    weft__match_msg_t *best;
} walk_t;

static void walk_msg(weft__match_msg_t *msg, void *arg)
{
    walk_t *w = arg;
    if (msg->comm != w->comm || (w->source >= 0 && msg->source != w->source) ||
        (w->tag != WEFT_MATCH_ANY_TAG && msg->tag != w->tag))
        return;
    if (!w->best || msg->arrival < w->best->arrival)
        w->best = msg;
}

weft__match_msg_t *weft__match_peek(weft__match_t *m, uint32_t comm, int32_t source, uint64_t tag)
{
    if (m->counts.unexpected == 0)
        return NULL;
    int idx = class_of(source, tag);
    if (idx != WEFT_MATCH_IDX_SPEC && wild_index(m) != WEFT_OK) {
        /* No memory for the wildcard FIFOs: walk every message instead. */
        walk_t w = {comm, source, tag, NULL};
        each_msg(m, walk_msg, &w);
        return w.best;
    }
    return first_msg(m, idx, key_hash(comm, source, tag), comm, source, tag);
}

void weft__match_remove_msg(weft__match_t *m, weft__match_msg_t *msg)
{
    if (!weft__match_msg_inside(msg))
        return; /* not (or no longer) in the structure */
    if (is_lone(msg->chain.lone)) {
        table_remove(&m->tables[WEFT_MATCH_IDX_SPEC], (node_t)msg | NODE_MSG,
                     lone_hash(msg->chain.lone, msg->comm, msg->source, msg->tag));
        msg->link.next = msg->link.prev = NULL;
    } else {
        unlink_msg(m, msg, WEFT_MATCH_IDX_SPEC, false);
    }
    /* Every message inside is in the wildcard FIFOs exactly while they are
     * kept, so the flag says it without reading the message's wildcard links
     * (a cache line a receive naming source and tag would not read). */
    if (m->wild_msgs)
        unlink_wild(m, msg, false);
    /* An empty queue needs no wildcard FIFOs: the next wildcard post or peek
     * starts them again, with nothing to index. */
    if (--m->counts.unexpected == 0)
        m->wild_msgs = false;
}

bool weft__match_cancel(weft__match_t *m, weft__match_recv_t *recv)
{
    if (!recv->link.prev)
        return false;
    recv_unlink(m, recv);
    return true;
}

size_t weft__match_posted_count(const weft__match_t *m)
{
    return m->counts.posted;
}

size_t weft__match_unexpected_count(const weft__match_t *m)
{
    return m->counts.unexpected;
}

size_t weft__match_entry_count(const weft__match_t *m)
{
    size_t n = 0;
    for (int idx = 0; idx < WEFT_MATCH_NIDX; idx++)
        n += m->tables[idx].count - (m->parked[idx] != NULL);
    return n - weft__match_lone_count(m);
}

size_t weft__match_lone_count(const weft__match_t *m)
{
    const table_t *t = &m->tables[WEFT_MATCH_IDX_SPEC];
    size_t lone = 0;
    for (size_t i = 0; i <= t->mask; i++)
        for (node_t n = t->buckets[i]; n; n = *node_next(n))
            lone += !node_entry(n);
    return lone;
}

size_t weft__match_parked_count(const weft__match_t *m)
{
    size_t n = 0;
    for (int idx = 0; idx < WEFT_MATCH_NIDX; idx++)
        n += m->parked[idx] != NULL;
    return n;
}

size_t weft__match_bucket_count(const weft__match_t *m)
{
    size_t n = 0;
    for (int idx = 0; idx < WEFT_MATCH_NIDX; idx++)
        n += m->tables[idx].mask + 1;
    return n;
}

void weft__match_fail_allocs_after(weft__match_t *m, long after)
{
    m->fail_after = after < 0 ? -1 : after;
}

bool weft__match_check(const weft__match_t *m)
{
    const table_t *t = &m->tables[WEFT_MATCH_IDX_SPEC];
    size_t nodes = 0, recvs = 0;
    for (size_t i = 0; i <= t->mask; i++)
        for (node_t n = t->buckets[i]; n; n = *node_next(n)) {
            uint32_t hash = node_hash(n), comm;
            int32_t source;
            uint64_t tag;
            const weft__match_entry_t *e = node_entry(n);
            if ((hash & t->mask) != i)
                return false;
            nodes++;
            if (!e) {
                uintptr_t mark;
                lone_key(n, &comm, &source, &tag, &mark);
                if (!is_lone(mark) || hash != key_hash(comm, source, tag))
                    return false;
                recvs += node_is_recv(n);
            } else {
                comm = e->comm;
                source = e->source;
                tag = e->tag;
                if (hash != key_hash(comm, source, tag) ||
                    (!weft_list_empty(&e->recvs) && !weft_list_empty(&e->msgs)))
                    return false;
                for (const weft_list_t *pos = e->recvs.next; pos != &e->recvs; pos = pos->next)
                    recvs++;
            }
            /* One node per key: a lookup of its key finds this one, the
             * first of the chain with it. */
            if (table_find(t, hash, comm, source, tag) != n)
                return false;
        }
    return nodes == t->count && recvs == m->posted_class[WEFT_MATCH_IDX_SPEC];
}
