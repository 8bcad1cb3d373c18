/* Private to src/core and the unit tests: introspection of the matcher's hash
 * tables (seed 000, "A constant-time tag matching algorithm"). Not thread-safe;
 * the caller holds the same lock as for the rest of match.h. */
#ifndef WEFT_MATCH_INT_H
#define WEFT_MATCH_INT_H

#include <stddef.h>

#include "core/match.h"

/* Live hash entries over the four tables. An entry lives only while its posted
 * FIFO or its unexpected FIFO is non-empty, so after everything has matched,
 * been cancelled or been removed this is 0 (a parked entry, below, is not
 * live). */
size_t weft__match_entry_count(const weft__match_t *m);
/* Unexpected messages and posted receives naming source and tag alone under
 * their exact key: they sit in the exact-key table's bucket chains without an
 * entry (not counted by weft__match_entry_count). */
size_t weft__match_lone_count(const weft__match_t *m); /* walks the table */
/* Walk the exact-key table and check what its chains must hold: every node in
 * the bucket of its hash, one node per key, a lone node's mark and hash
 * right, and the counts (nodes, receives naming source and tag) equal to what
 * the chains hold. False at the first violation. O(buckets + nodes). */
bool weft__match_check(const weft__match_t *m);
/* Empty entries left in the tables for reuse: at most one per table, the last
 * one that emptied (not counted by weft__match_entry_count). */
size_t weft__match_parked_count(const weft__match_t *m);

/* Tables never shrink below this many buckets (see match.c). */
#define WEFT_MATCH_SHRINK_FLOOR 1024
/* Buckets over the four tables: they grow with the entries and shrink back
 * (down to WEFT_MATCH_SHRINK_FLOOR each) when the entries go. */
size_t weft__match_bucket_count(const weft__match_t *m);

/* Test hook: let the next `after` entry acquisitions succeed, then make every
 * one fail as if out of memory, so the WEFT_ENOMEM roll-back paths can be
 * exercised. A negative value turns the hook off (the default). */
void weft__match_fail_allocs_after(weft__match_t *m, long after);

#endif
