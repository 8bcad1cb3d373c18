/* Which local address the tcp driver (and an MPI port) listens on.
 *
 * WEFT_TCP_IF is either an interface name ("eth0", "veth1", "lo") or a CIDR
 * ("10.77.0.0/24", "fd00::/64", "::1/128"): the first address of that
 * interface, or the first address of any up interface inside the prefix.
 * Without it: the first up, non-loopback interface that has an address (IPv4
 * preferred over IPv6 on the same interface, global IPv6 over link-local),
 * else loopback. Every rank of a job should see the same networks; a rank that
 * picks an address its peers cannot reach fails at connection, with the
 * address in the log. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/iface.h"
#include "util/log.h"

typedef struct cidr {
    int family;
    uint8_t addr[16];
    int bits;
} cidr_t;

static int parse_cidr(const char *spec, cidr_t *c)
{
    char buf[INET6_ADDRSTRLEN + 8];
    const char *slash = strchr(spec, '/');
    if (!slash || (size_t)(slash - spec) >= sizeof buf)
        return -1;
    memcpy(buf, spec, (size_t)(slash - spec));
    buf[slash - spec] = 0;
    char *end;
    long bits = strtol(slash + 1, &end, 10);
    if (*end || end == slash + 1 || bits < 0)
        return -1;
    memset(c, 0, sizeof *c);
    if (inet_pton(AF_INET, buf, c->addr) == 1) {
        c->family = AF_INET;
        if (bits > 32)
            return -1;
    } else if (inet_pton(AF_INET6, buf, c->addr) == 1) {
        c->family = AF_INET6;
        if (bits > 128)
            return -1;
    } else {
        return -1;
    }
    c->bits = (int)bits;
    return 0;
}

static const uint8_t *addr_bytes(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
    return (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
}

static bool in_cidr(const struct sockaddr *sa, const cidr_t *c)
{
    if (sa->sa_family != c->family)
        return false;
    const uint8_t *a = addr_bytes(sa);
    int bits = c->bits;
    for (int i = 0; bits > 0; i++, bits -= 8) {
        uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
        if ((a[i] & mask) != (c->addr[i] & mask))
            return false;
    }
    return true;
}

static bool usable(const struct ifaddrs *ifa)
{
    return ifa->ifa_addr && (ifa->ifa_flags & IFF_UP) &&
           (ifa->ifa_addr->sa_family == AF_INET || ifa->ifa_addr->sa_family == AF_INET6);
}

/* Preference of an address on one interface: IPv4, then global IPv6, then
 * link-local IPv6. Lower is better. */
static int rank_of(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return 0;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    return IN6_IS_ADDR_LINKLOCAL(a) ? 2 : 1;
}

static void take(const struct ifaddrs *ifa, struct sockaddr_storage *ss, socklen_t *sslen,
                 char *name, size_t namelen)
{
    memset(ss, 0, sizeof *ss);
    if (ifa->ifa_addr->sa_family == AF_INET) {
        memcpy(ss, ifa->ifa_addr, sizeof(struct sockaddr_in));
        ((struct sockaddr_in *)ss)->sin_port = 0;
        *sslen = sizeof(struct sockaddr_in);
    } else {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        memcpy(ss, ifa->ifa_addr, sizeof(struct sockaddr_in6));
        s6->sin6_port = 0;
        if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) && !s6->sin6_scope_id)
            s6->sin6_scope_id = if_nametoindex(ifa->ifa_name);
        *sslen = sizeof(struct sockaddr_in6);
    }
    snprintf(name, namelen, "%s", ifa->ifa_name);
}

int weft__iface_pick(const char *spec, struct sockaddr_storage *ss, socklen_t *sslen, char *name,
                     size_t namelen)
{
    struct ifaddrs *list;
    if (getifaddrs(&list) != 0) {
        weft_log_error("tcp: getifaddrs: %s", strerror(errno));
        return WEFT_ESYS;
    }
    cidr_t cidr;
    bool by_cidr = spec && strchr(spec, '/');
    if (by_cidr && parse_cidr(spec, &cidr) != 0) {
        weft_log_error("tcp: WEFT_TCP_IF=%s is neither an interface name nor a CIDR", spec);
        freeifaddrs(list);
        return WEFT_EINVAL;
    }
    const struct ifaddrs *best = NULL;
    int best_rank = 99;
    for (int pass = 0; pass < 2 && !best; pass++) {
        for (const struct ifaddrs *ifa = list; ifa; ifa = ifa->ifa_next) {
            if (!usable(ifa))
                continue;
            bool loop = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
            if (spec) {
                if (by_cidr ? !in_cidr(ifa->ifa_addr, &cidr) : strcmp(ifa->ifa_name, spec) != 0)
                    continue;
            } else if (loop != (pass == 1)) {
                continue; /* pass 0: non-loopback only; pass 1: loopback */
            }
            /* Without a spec, stay on the first interface found. */
            if (best && !spec && strcmp(best->ifa_name, ifa->ifa_name) != 0)
                continue;
            int r = rank_of(ifa->ifa_addr);
            if (r < best_rank) {
                best = ifa;
                best_rank = r;
            }
        }
        if (spec)
            break;
    }
    int rc = WEFT_OK;
    if (best) {
        take(best, ss, sslen, name, namelen);
    } else {
        weft_log_error("tcp: no usable address matches WEFT_TCP_IF=%s", spec ? spec : "(unset)");
        rc = WEFT_ENOTFOUND;
    }
    freeifaddrs(list);
    return rc;
}
