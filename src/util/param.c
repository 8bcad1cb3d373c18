/* WEFT_* parameters: the table of what the engine itself reads from the
 * environment (each driver lists its own: weft_driver_ops_t.params), so that
 * docs/parameters.md (generated from it) and weft-info never drift from the
 * code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/param.h"
#include "util/util.h"

static const weft_param_desc_t params[] = {
    {"WEFT_LOG", "warn", "log level: off, error, warn, info or debug"},
    {"WEFT_DRIVERS", "self,shm,ofi,tcp",
     "drivers allowed (self always is): shm within a node; between nodes ofi where libfabric "
     "offers a native fabric (InfiniBand, Omni-Path, Slingshot, EFA...), else tcp. Naming ofi "
     "uses it with any provider (its tcp or shm too); WEFT_DRIVERS=tcp or =ofi forces that "
     "driver within a node too"},
    {"WEFT_STRATEGY", "driver's own",
     "packet scheduling strategy of every gate: default (one chunk per packet) or aggreg (control "
     "chunks, then every pending message that fits, in one packet) or split_balance (aggreg's "
     "packets on rail 0, and large messages read in parts over the rails of a multi-rail gate, "
     "WEFT_TCP_RAILS); unset: aggreg on tcp and on ofi over a sockets provider (tcp, sockets, "
     "udp), default on shm, self and ofi's other providers"},
    {"WEFT_STATS", "0",
     "1: at finalize, print one line per gate with traffic to stderr (packets, chunks per "
     "packet, bytes, rendezvous)"},
    {"WEFT_EAGER_CREDITS", "4M",
     "bytes of eager data a peer may have in flight to this rank before its sends turn to "
     "rendezvous (bounds unexpected-message memory per peer)"},
    {"WEFT_RDV_THRESHOLD", "driver's own",
     "payload size above which messages go by rendezvous (shm: 32K, tcp: 64K)"},
    {"WEFT_RDV_SPLIT", "64K",
     "rendezvous at least this large move cooperatively where peers share memory (shm): in "
     "pieces, by whichever side is inside the library, and a receive posted early is published "
     "so that its sender can write the data while the receiver computes"},
    {"WEFT_RDV_PIECE", "256K", "bytes per piece of a cooperative rendezvous"},
    {"WEFT_BCAST_PIECE", "256K",
     "bytes per piece of a dynamic broadcast (weft_bcast_dynamic), forwarded as each arrives"},
    {"WEFT_BCAST_INLINE", "4096",
     "a dynamic broadcast of up to this many bytes carries its data in its routing message"},
    {"WEFT_LINKS_MAX", "1024",
     "most processes of other jobs one process may link to (MPI dynamic processes)"},
    {"WEFT_WAIT", "yield",
     "how threads wait: yield (every waiter polls, yielding its core between polls after "
     "WEFT_SPIN_US without an event), spin (every waiter polls, never yields), fixed_spin "
     "(one thread polls for all; the others spin WEFT_SPIN_US, then sleep on a futex until "
     "their request completes), block (as fixed_spin, sleeping at once)"},
    {"WEFT_SPIN_US", "10",
     "fixed_spin: how long a waiter spins before it sleeps; yield and fixed_spin: a polling "
     "thread yields its core after this long without any event. Unset, it is 0 on a node "
     "with more ranks than cpus"},
    {"WEFT_RMA_MAP", "1",
     "0: do not map the symmetric memory of processes on this node; every one-sided "
     "operation then goes through the engine's messages, as between nodes (the same value on "
     "every rank)"},
    {"WEFT_PROGRESS_THREAD", "0",
     "1: a progress thread moves transfers while every application thread computes: it sleeps "
     "on the drivers' doorbells where every driver in use has one (shm, tcp, ofi's tcp), "
     "else polls at idle priority (SCHED_IDLE)"},
    {"WEFT_PROGRESS_CPU", "auto",
     "where the progress thread runs: a cpu number; none (anywhere the process may run); auto: "
     "a rank bound within one core gets it on that core's other hardware threads (else on the "
     "core itself, at idle priority), an unbound rank on a core left over by the ranks of its "
     "node, if any (cores found with hwloc)"},
    {"WEFT_RAIL_BW", "measured",
     "bandwidth of each rail in MB/s, comma-separated (rail 0 first): the fixed shares in "
     "which split_balance cuts a large message; unset: each receiver measures its rails as "
     "parts arrive and follows what it measured"},
    {"WEFT_PACK_INLINE_MAX", "8192",
     "weft_pack: cheaper pieces up to this many bytes travel in their message's first packet "
     "(copied out of it by the receiver); larger ones, and every one when 0, as messages of "
     "their own (by rendezvous when large). Read at the process's first pack"},
    {"WEFT_TRACE", "unset",
     "path: each rank writes a timeline of what the engine did (Chrome trace-event JSON, for "
     "Perfetto or chrome://tracing) to path.<rank>.json, or to path with %r replaced by the "
     "rank, at finalize; tools/weft-trace merges and summarizes them"},
    {"WEFT_TRACE_EVENTS", "262144",
     "events each thread's trace buffer holds; a full buffer drops the rest (counted in the "
     "file and logged)"},
    {"WEFT_NODE_ID", "host name + boot id", "which ranks share a node (and so use shm)"},
    {"WEFT_SEQ_START", "0", "first per-peer sequence number (test hook for wrap-around)"},
};

const weft_param_desc_t *weft__param_engine_table(size_t *count)
{
    *count = WEFT_ARRAY_SIZE(params);
    return params;
}

/* Overrides, by name; noverrides spares the walk when there are none (the
 * usual case). Written only while no engine runs (see param.h). */
typedef struct override {
    struct override *next;
    char *name, *value;
} override_t;
static override_t *overrides;
static size_t noverrides;

static override_t *override_find(const char *name)
{
    for (override_t *o = overrides; o; o = o->next)
        if (!strcmp(o->name, name))
            return o;
    return NULL;
}

int weft__param_override(const char *name, const char *value)
{
    override_t *o = override_find(name);
    char *copy = NULL;
    if (value && !(copy = strdup(value)))
        return -2;
    if (!o) {
        if (!copy)
            return 0;
        if (!(o = calloc(1, sizeof *o)) || !(o->name = strdup(name))) {
            free(o);
            free(copy);
            return -2;
        }
        o->next = overrides;
        overrides = o;
    }
    if (o->value)
        noverrides--;
    free(o->value);
    o->value = copy;
    if (copy)
        noverrides++;
    return 0;
}

static const char *lookup(const char *name)
{
    if (noverrides) {
        override_t *o = override_find(name);
        if (o && o->value)
            return o->value;
    }
    return getenv(name);
}

const char *weft__param_value(const char *name)
{
    return lookup(name);
}

uint64_t weft__param_size(const char *name, uint64_t deflt)
{
    const char *v = lookup(name);
    if (!v || !*v)
        return deflt;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(v, &end, 0);
    if (errno || end == v)
        goto bad;
    switch (*end) {
    case 'k':
    case 'K':
        x <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        x <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        x <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end)
        goto bad;
    return x;
bad:
    weft_log_warn("ignoring %s=%s (not a size); using %llu", name, v, (unsigned long long)deflt);
    return deflt;
}

const char *weft__param_str(const char *name, const char *deflt)
{
    const char *v = lookup(name);
    return (v && *v) ? v : deflt;
}
