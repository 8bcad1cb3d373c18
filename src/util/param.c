/* WEFT_* parameters: the one table of everything weft reads from the
 * environment, so that the README and weft-info never drift from the code. */
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
    {"WEFT_WAIT", "yield",
     "how threads wait: yield (every waiter polls, yielding its core between polls after "
     "WEFT_SPIN_US without an event), spin (every waiter polls, never yields), fixed_spin "
     "(one thread polls for all; the others spin WEFT_SPIN_US, then sleep on a futex until "
     "their request completes), block (as fixed_spin, sleeping at once)"},
    {"WEFT_SPIN_US", "10",
     "fixed_spin: how long a waiter spins before it sleeps; yield and fixed_spin: a polling "
     "thread yields its core after this long without any event. Unset, it is 0 on a node "
     "with more ranks than cpus"},
    {"WEFT_PROGRESS_THREAD", "0",
     "1: a progress thread at idle priority (SCHED_IDLE) polls whenever the engine is free, so "
     "transfers advance while every application thread computes"},
    {"WEFT_PROGRESS_CPU", "auto",
     "where the progress thread runs: a cpu number; none (anywhere the process may run); auto: "
     "a rank bound within one core gets it on that core's other hardware threads (else on the "
     "core itself, at idle priority), an unbound rank on a core left over by the ranks of its "
     "node, if any (cores found with hwloc)"},
    {"WEFT_SHM_RING", "256K", "bytes of each per-peer shared-memory ring"},
    {"WEFT_SHM_CMA", "1", "use single-copy process_vm_readv for large shm messages (0: copy path)"},
    {"WEFT_PEER_CHECK_MS", "200", "how often a waiting rank checks that its shm peers are alive"},
    {"WEFT_TCP_IF", "first up non-loopback interface, else lo",
     "tcp: interface name (eth0) or CIDR (10.77.0.0/24, fd00::/64) to listen on; with "
     "WEFT_TCP_RAILS, a comma-separated list gives rail i the i-th entry"},
    {"WEFT_TCP_TIMEOUT_MS", "10000",
     "tcp: a silent peer is declared dead after this long (keepalive + TCP_USER_TIMEOUT)"},
    {"WEFT_TCP_HANDSHAKE_MS", "5000",
     "tcp: an accepted connection must prove job membership within this time"},
    {"WEFT_TCP_RAILS", "1",
     "tcp: rails (connections) per peer, 1-4, one tcp instance each, rail i on WEFT_TCP_IF's "
     "i-th entry or all on its only one; rail 0 carries every packet; with "
     "WEFT_STRATEGY=split_balance large messages are read in parts over the first two"},
    {"WEFT_RAIL_BW", "measured",
     "bandwidth of each rail in MB/s, comma-separated (rail 0 first): the fixed shares in "
     "which split_balance cuts a large message; unset: each receiver measures its rails as "
     "parts arrive and follows what it measured"},
    {"WEFT_TCP_CONNECT_MS", "30000", "tcp: how long init waits for every connection to come up"},
    {"WEFT_OFI_PROVIDER", "the first libfabric offers",
     "ofi: libfabric provider (verbs, psm3, cxi, efa, tcp, shm, \"tcp;ofi_rxm\"...)"},
    {"WEFT_OFI_DOMAIN", "the provider's first",
     "ofi: libfabric domain (a NIC, or for the tcp provider an interface: eth0, lo)"},
    {"WEFT_OFI_LIBRARY", "libfabric.so.1",
     "ofi: the libfabric to load when the driver first starts (a name or a path)"},
    {"WEFT_OFI_RMA", "1",
     "ofi: 0 moves rendezvous data by copy (sender streams it) instead of fi_read"},
    {"WEFT_OFI_PACKET", "64K", "ofi: largest packet (eager messages up to half of it)"},
    {"WEFT_OFI_RX_DEPTH", "64", "ofi: receive buffers (one packet each) posted at all times"},
    {"WEFT_OFI_TX_DEPTH", "64", "ofi: send buffers (one packet each) for packets in flight"},
    {"WEFT_OFI_MR_CACHE", "64",
     "ofi: idle memory registrations kept for reuse (providers that do not pin memory)"},
    {"WEFT_OFI_PING_MS", "1000", "ofi: keepalive period to each peer (finds dead peers)"},
    {"WEFT_OFI_TIMEOUT_MS", "10000",
     "ofi: a peer whose keepalive stays unsent this long is declared dead"},
    {"WEFT_NODE_ID", "host name + boot id", "which ranks share a node (and so use shm)"},
    {"WEFT_SEQ_START", "0", "first per-peer sequence number (test hook for wrap-around)"},
};

const weft_param_desc_t *weft__param_table(size_t *count)
{
    *count = WEFT_ARRAY_SIZE(params);
    return params;
}

/* Overrides, one slot per table entry; noverrides spares the lookup when
 * there are none (the usual case). */
static char *overrides[WEFT_ARRAY_SIZE(params)];
static size_t noverrides;

int weft__param_set(size_t index, const char *value)
{
    if (index >= WEFT_ARRAY_SIZE(params))
        return -1;
    char *copy = NULL;
    if (value && !(copy = strdup(value)))
        return -2;
    if (overrides[index])
        noverrides--;
    free(overrides[index]);
    overrides[index] = copy;
    if (copy)
        noverrides++;
    return 0;
}

const char *weft__param_get(size_t index)
{
    if (index >= WEFT_ARRAY_SIZE(params))
        return NULL;
    return overrides[index] ? overrides[index] : getenv(params[index].name);
}

static const char *lookup(const char *name)
{
    if (noverrides)
        for (size_t i = 0; i < WEFT_ARRAY_SIZE(params); i++)
            if (overrides[i] && !strcmp(params[i].name, name))
                return overrides[i];
    return getenv(name);
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
