/* Dynamic processes (MPI 3.1 chapter 10): ports, accept and connect, join,
 * the name service, spawn (its start: mpi_spawn.c), disconnect.
 *
 * Every way two jobs meet ends the same way (meet, below): the roots of the
 * two sides hold a connected socket; each side gathers its members' link
 * cards (weft/weft_link.h) and used-id bitmaps at its root, the roots swap them,
 * each root hands its members the other side's cards, every member links to
 * every process of the other side, and all agree on two context ids free at
 * every member of both sides: one for the intercommunicator, one for the two
 * local_comms (disjoint, so they share it, as MPI_Intercomm_create does).
 * The side that accepted comes first in the order both list their union in
 * (inter_first), since world ranks compare nothing across jobs.
 *
 * Ports: MPI_Open_port listens on a TCP socket (the interface WEFT_TCP_IF
 * names, as the tcp driver's) and names it "weft-port:HOST:PORT:SECRET", a
 * fresh 128-bit secret in hex. MPI_Comm_accept takes the next connection and
 * shakes hands: the server sends a nonce, the client its nonce and a SipHash
 * proof of the secret on both, the server its verdict and its own proof. A
 * connection that fails is refused, said on one line, and the accept goes on
 * with the next; the client of a wrong port name learns it from the verdict
 * (MPI_ERR_PORT). The secret never crosses the wire; the links' secret is a
 * SipHash of the port's on both nonces.
 *
 * Spawn: the root opens a port, starts a job with weftrun (WEFT_WEFTRUN,
 * which weftrun sets, else the one built or installed with this library, else
 * PATH; with WEFT_SPAWN=launcher under a PMIx launcher, PMIx_Spawn instead),
 * giving it the port in WEFT_PARENT_PORT and a pipe (--lifeline-fd)
 * whose end, when this process dies, ends that job; its ranks' MPI_Init
 * connects to the port over their MPI_COMM_WORLD, and the parents accept. A
 * job that ends before it connected fails the spawn (MPI_ERR_SPAWN, every
 * errcode). MPI_Finalize waits for the jobs this process spawned to end
 * (finalize is collective over connected processes), then closes their
 * pipes.
 *
 * Names: MPI_Publish_name writes the port name in a file named after the
 * service (hex) in WEFT_NAME_DIR, by default $TMPDIR/weft-names-UID (made
 * 0700): every job of the user on this machine, or on any machine that
 * shares that directory, finds it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weft/weft_link.h"
#include "mpi/mpi_dynproc_int.h"
#include "util/iface.h"
#include "util/siphash.h"

/* ---------------------------------------------------------------- state */

pthread_mutex_t weft__dyn_lock = PTHREAD_MUTEX_INITIALIZER;
port_t *weft__dyn_ports;
spawned_t *weft__dyn_spawned;
MPI_Comm weft__dyn_parent = NULL; /* with a reference of ours */

void weft__dyn_say(const char *fmt, const char *a, const char *b)
{
    char line[1024];
    snprintf(line, sizeof line, fmt, a, b);
    weft__mpi_say(line);
}

/* ---------------------------------------------------------------- sockets */

/* Wait until fd is ready for events, moving MPI's progress meanwhile (other
 * traffic of this process goes on while a root waits for its peer); -1
 * past deadline_ns (0: none). */
static int sock_wait(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        if (deadline_ns && weft__now_ns() > deadline_ns)
            return -1;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, POLL_SLICE_MS);
        if (n > 0)
            return (p.revents & (POLLERR | POLLNVAL)) && !(p.revents & events) ? -1 : 0;
        if (n < 0 && errno != EINTR)
            return -1;
        weft__mpi_progress();
    }
}

/* Send len bytes at buf over fd (out), or receive them into it, by
 * deadline_ns (0: none), moving collectives and the engine while it waits. */
static int sock_move_by(int fd, char *p, size_t len, uint64_t deadline_ns, bool out)
{
    while (len) {
        if (sock_wait(fd, out ? POLLOUT : POLLIN, deadline_ns) != 0)
            return -1;
        ssize_t n =
            out ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int sock_write_by(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
    return sock_move_by(fd, (char *)buf, len, deadline_ns, true);
}

static int sock_read_by(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
    return sock_move_by(fd, buf, len, deadline_ns, false);
}

static int sock_write(int fd, const void *buf, size_t len)
{
    return sock_write_by(fd, buf, len, 0);
}

static int sock_read(int fd, void *buf, size_t len)
{
    return sock_read_by(fd, buf, len, 0);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void draw(uint8_t *out, size_t len)
{
    if (getrandom(out, len, 0) == (ssize_t)len)
        return;
    for (size_t i = 0; i < len; i++) /* no entropy source: unique, if guessable */
        out[i] = (uint8_t)(weft__now_ns() >> (i % 8 * 8)) ^ (uint8_t)getpid();
}

/* SipHash of the port secret on role and both nonces (server's first). */
static uint64_t port_mac(const uint8_t *secret, char role, const uint8_t *ns, const uint8_t *nc)
{
    uint8_t in[1 + 2 * NONCE_LEN];
    in[0] = (uint8_t)role;
    memcpy(in + 1, ns, NONCE_LEN);
    memcpy(in + 1 + NONCE_LEN, nc, NONCE_LEN);
    return weft__siphash24(secret, in, sizeof in);
}

static void link_secret(const uint8_t *secret, const uint8_t *ns, const uint8_t *nc, uint8_t *out)
{
    uint64_t a = port_mac(secret, 'L', ns, nc), b = port_mac(secret, 'M', ns, nc);
    memcpy(out, &a, 8);
    memcpy(out + 8, &b, 8);
}

/* The port handshake (see the top). 0, or -1 with why. */
static int port_server_auth(int fd, const uint8_t *secret, uint8_t *lsecret, const char **why)
{
    uint8_t ns[NONCE_LEN], hello[8 + NONCE_LEN], proof[8 + NONCE_LEN + 8], verdict[16];
    draw(ns, sizeof ns);
    put32(hello, HS_MAGIC);
    put32(hello + 4, 1);
    memcpy(hello + 8, ns, NONCE_LEN);
    /* A caller that says nothing must not hold the accept: 10 s to prove. */
    uint64_t by = weft__now_ns() + 10000000000ull;
    *why = "closed, or silent for 10 s, during the handshake";
    if (sock_write_by(fd, hello, sizeof hello, by) || sock_read_by(fd, proof, sizeof proof, by))
        return -1;
    uint64_t want = port_mac(secret, 'C', ns, proof + 8), got;
    memcpy(&got, proof + 8 + NONCE_LEN, 8);
    bool ok = get32(proof) == HS_MAGIC && get32(proof + 4) == 1 &&
              weft__memcmp_ct(&want, &got, sizeof want) == 0;
    put32(verdict, ok ? 0 : 1);
    put32(verdict + 4, 0);
    uint64_t mine = ok ? port_mac(secret, 'S', ns, proof + 8) : 0;
    memcpy(verdict + 8, &mine, 8);
    if (sock_write_by(fd, verdict, sizeof verdict, by) != 0)
        return -1;
    if (!ok) {
        *why = "it does not know the port's secret";
        return -1;
    }
    link_secret(secret, ns, proof + 8, lsecret);
    return 0;
}

static int port_client_auth(int fd, const uint8_t *secret, uint8_t *lsecret, const char **why)
{
    uint8_t hello[8 + NONCE_LEN], proof[8 + NONCE_LEN + 8], verdict[16], nc[NONCE_LEN];
    *why = "the port closed the connection during the handshake";
    if (sock_read(fd, hello, sizeof hello) != 0)
        return -1;
    if (get32(hello) != HS_MAGIC || get32(hello + 4) != 1) {
        *why = "what answers there is not a weft MPI port";
        return -1;
    }
    draw(nc, sizeof nc);
    put32(proof, HS_MAGIC);
    put32(proof + 4, 1);
    memcpy(proof + 8, nc, NONCE_LEN);
    uint64_t mac = port_mac(secret, 'C', hello + 8, nc);
    memcpy(proof + 8 + NONCE_LEN, &mac, 8);
    if (sock_write(fd, proof, sizeof proof) || sock_read(fd, verdict, sizeof verdict))
        return -1;
    if (get32(verdict) != 0) {
        *why = "the port refused us: its secret is not the one in this port name";
        return -1;
    }
    uint64_t want = port_mac(secret, 'S', hello + 8, nc), got;
    memcpy(&got, verdict + 8, 8);
    if (weft__memcmp_ct(&want, &got, sizeof want) != 0) {
        *why = "the port does not know its own secret (not the port this name gave)";
        return -1;
    }
    link_secret(secret, hello + 8, nc, lsecret);
    return 0;
}

/* ---------------------------------------------------------------- port names */

static void hex(const uint8_t *in, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", in[i]);
}

static int unhex(const char *in, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(in + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return in[2 * n] ? -1 : 0;
}

/* "weft-port:HOST:PORT:SECRET" (an IPv6 HOST in brackets) into an address and
 * the secret; -1 if it is not one. */
static int port_parse(const char *name, struct sockaddr_storage *ss, socklen_t *len,
                      uint8_t *secret)
{
    if (!name || strncmp(name, PORT_PREFIX, strlen(PORT_PREFIX)) != 0)
        return -1;
    char buf[MPI_MAX_PORT_NAME];
    snprintf(buf, sizeof buf, "%s", name + strlen(PORT_PREFIX));
    char *host = buf, *rest;
    if (*host == '[') {
        host++;
        if (!(rest = strchr(host, ']')) || rest[1] != ':')
            return -1;
        *rest = 0;
        rest += 2;
    } else {
        if (!(rest = strchr(host, ':')))
            return -1;
        *rest++ = 0;
    }
    char *sec = strchr(rest, ':');
    if (!sec)
        return -1;
    *sec++ = 0;
    char *end;
    long port = strtol(rest, &end, 10);
    if (*end || end == rest || port < 1 || port > 65535 || unhex(sec, secret, SECRET_LEN))
        return -1;
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        *len = sizeof *s4;
    } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        *len = sizeof *s6;
    } else {
        return -1;
    }
    return 0;
}

/* A port name for logs: without its secret ("weft-port:HOST:PORT:..."). */
static const char *port_shown(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s", name ? name : "(null)");
    char *c = strrchr(buf, ':');
    if (c && !strncmp(buf, PORT_PREFIX, strlen(PORT_PREFIX)) && (size_t)(c - buf) + 4 < len)
        strcpy(c + 1, "...");
    return buf;
}

/* A new listening port (not yet listed). */
port_t *weft__dyn_port_new(void)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char ifname[64];
    if (weft__iface_pick(getenv("WEFT_TCP_IF"), &ss, &len, ifname, sizeof ifname) != WEFT_OK)
        return NULL;
    port_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p->fd < 0 || bind(p->fd, (struct sockaddr *)&ss, len) != 0 || listen(p->fd, 64) != 0 ||
        getsockname(p->fd, (struct sockaddr *)&ss, &len) != 0) {
        weft__dyn_say("MPI_Open_port: cannot listen: %s%s", strerror(errno), "");
        if (p->fd >= 0)
            close(p->fd);
        free(p);
        return NULL;
    }
    char host[INET6_ADDRSTRLEN], sec[2 * SECRET_LEN + 1];
    unsigned port;
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
        port = ntohs(s6->sin6_port);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
        port = ntohs(s4->sin_port);
    }
    draw(p->secret, SECRET_LEN);
    hex(p->secret, SECRET_LEN, sec);
    snprintf(p->name, sizeof p->name,
             ss.ss_family == AF_INET6 ? PORT_PREFIX "[%s]:%u:%s" : PORT_PREFIX "%s:%u:%s", host,
             port, sec);
    return p;
}

void weft__dyn_port_free(port_t *p)
{
    close(p->fd);
    free(p);
}

/* The open port of that name, taken off the list while an accept uses it (put
 * back by port_put): NULL if this process has none. */
static port_t *port_take(const char *name)
{
    pthread_mutex_lock(&weft__dyn_lock);
    port_t **pp = &weft__dyn_ports, *p;
    while ((p = *pp) && strcmp(p->name, name) != 0)
        pp = &p->next;
    if (p)
        *pp = p->next;
    pthread_mutex_unlock(&weft__dyn_lock);
    return p;
}

static void port_put(port_t *p)
{
    pthread_mutex_lock(&weft__dyn_lock);
    p->next = weft__dyn_ports;
    weft__dyn_ports = p;
    pthread_mutex_unlock(&weft__dyn_lock);
}

/* Accept on p until a client passes the handshake, or pid (a spawned job's
 * weftrun, when > 0) ends first. The connected socket, or -1. */
int weft__dyn_port_accept(port_t *p, pid_t pid, uint8_t *lsecret, int *status)
{
    for (;;) {
        struct pollfd pf = {.fd = p->fd, .events = POLLIN};
        int n = poll(&pf, 1, POLL_SLICE_MS);
        if (n == 0 || (n < 0 && errno == EINTR)) {
            weft__mpi_progress();
            if (pid > 0 && waitpid(pid, status, WNOHANG) == pid)
                return -1;
            continue;
        }
        if (n < 0)
            return -1;
        int fd = accept4(p->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const char *why;
        if (port_server_auth(fd, p->secret, lsecret, &why) == 0)
            return fd;
        char shown[MPI_MAX_PORT_NAME];
        weft__dyn_say("MPI_Comm_accept: refused a connection to %s: %s",
                      port_shown(p->name, shown, sizeof shown), why);
        close(fd);
    }
}

/* ---------------------------------------------------------------- meeting */

/* What each member gives its root. */
typedef struct contrib {
    int32_t err; /* MPI error class of its link card, 0 */
    uint32_t pad;
    uint64_t mask[CTX_WORDS];
    uint8_t card[WEFT_LINK_CARD_LEN];
} contrib_t;

/* What the roots swap (then n cards). */
typedef struct side_msg {
    uint32_t magic;
    int32_t err;
    uint32_t n;
    uint32_t pad;
    uint64_t mask[CTX_WORDS];
} side_msg_t;

/* What a root tells its members (then nremote cards). */
typedef struct verdict {
    int32_t err;
    int32_t k, k_local;
    int32_t nremote;
    uint8_t secret[WEFT_LINK_SECRET_LEN];
} verdict_t;

/* The two lowest ids clear in mask, or -1. */
static int two_free(const uint64_t *mask, int *k1, int *k2)
{
    int found = 0;
    for (int b = 0; b < WEFT_MPI_CTX_BITS && found < 2; b++)
        if (!(mask[b / 64] & (1ull << (b % 64)))) {
            if (found++ == 0)
                *k1 = b;
            else
                *k2 = b;
        }
    return found == 2 ? 0 : -1;
}

/* The root's swap with the other side: send ours, receive theirs. A peer
 * that lies about its size is an error of the protocol. */
static int root_swap(int fd, const side_msg_t *mine, const void *cards, side_msg_t *theirs,
                     uint8_t **their_cards)
{
    *their_cards = NULL;
    if (sock_write(fd, mine, sizeof *mine) ||
        (mine->n && sock_write(fd, cards, (size_t)mine->n * WEFT_LINK_CARD_LEN)) ||
        sock_read(fd, theirs, sizeof *theirs))
        return MPI_ERR_PORT;
    if (theirs->magic != MEET_MAGIC || theirs->n > (1u << 20))
        return MPI_ERR_PORT;
    if (!theirs->n)
        return MPI_SUCCESS;
    *their_cards = malloc((size_t)theirs->n * WEFT_LINK_CARD_LEN);
    if (!*their_cards)
        return MPI_ERR_NO_MEM;
    if (sock_read(fd, *their_cards, (size_t)theirs->n * WEFT_LINK_CARD_LEN) != 0)
        return MPI_ERR_PORT;
    return MPI_SUCCESS;
}

/* Meet the other side: collective over comm; at root, fd is the socket to
 * the other side's root (-1 with root_err set when the root could not get
 * one) and lsecret the links' secret. first: this side comes first in the
 * union's order. An MPI error class, the same at every member. */
int weft__dyn_meet(MPI_Comm comm, int root, int fd, int root_err, bool first,
                   const uint8_t *lsecret, MPI_Comm *out)
{
    weft_ctx_t *ctx = weft__mpi.ctx;
    int me = comm->rank, n = comm->size, rc = MPI_SUCCESS;
    bool is_root = me == root;
    contrib_t mine;
    memset(&mine, 0, sizeof mine);
    contrib_t *all = is_root ? malloc((size_t)n * sizeof *all) : NULL;
    uint8_t *rcards = NULL, *cards = NULL;
    int *peers = NULL;
    MPI_Group remote = NULL;
    verdict_t v;
    memset(&v, 0, sizeof v);
    if (weft_link_card(ctx, mine.card) != WEFT_OK)
        mine.err = MPI_ERR_OTHER;
    bool have_ids = false;
    for (int round = 0;; round++) {
        weft_lock_acquire(&weft__mpi.lock);
        memcpy(mine.mask, weft__mpi.ctx_mask, sizeof mine.mask);
        weft_lock_release(&weft__mpi.lock);
        if (is_root && !all)
            root_err = MPI_ERR_NO_MEM;
        int grc = PMPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                              root, comm);
        if ((rc = grc))
            break;
        if (is_root) {
            side_msg_t sm = {.magic = MEET_MAGIC, .err = root_err, .n = (uint32_t)n}, rm;
            if (!cards)
                cards = malloc((size_t)n * WEFT_LINK_CARD_LEN);
            if (!cards && !sm.err)
                sm.err = MPI_ERR_NO_MEM;
            for (int i = 0; i < n && cards; i++) {
                sm.err = sm.err ? sm.err : all[i].err;
                for (int w = 0; w < CTX_WORDS; w++)
                    sm.mask[w] |= all[i].mask[w];
                memcpy(cards + (size_t)i * WEFT_LINK_CARD_LEN, all[i].card, WEFT_LINK_CARD_LEN);
            }
            v.err = sm.err;
            if (round > 0)
                sm.n = 0; /* the cards went in the first round */
            if (fd >= 0) {
                uint8_t *got = NULL;
                int src = root_swap(fd, &sm, cards, &rm, &got);
                v.err = v.err ? v.err : src ? src : rm.err;
                if (!v.err && round == 0) {
                    v.nremote = (int32_t)rm.n;
                    rcards = got;
                    got = NULL;
                    memcpy(v.secret, lsecret, sizeof v.secret);
                }
                free(got);
                if (!v.err) {
                    for (int w = 0; w < CTX_WORDS; w++)
                        sm.mask[w] |= rm.mask[w];
                    if (two_free(sm.mask, &v.k, &v.k_local) != 0)
                        v.err = weft__mpi_ctx_exhausted();
                }
            }
        }
        if ((rc = PMPI_Bcast(&v, (int)sizeof v, MPI_BYTE, root, comm)))
            break;
        if (v.err) {
            rc = v.err;
            break;
        }
        if (round == 0) {
            /* The other side's cards, and links to every process on it. */
            if (!is_root && !(rcards = malloc((size_t)v.nremote * WEFT_LINK_CARD_LEN + 1)))
                rc = MPI_ERR_NO_MEM; /* still in the broadcast: all must take part */
            uint8_t dummy;
            if ((rc =
                     PMPI_Bcast(rcards ? (void *)rcards : &dummy,
                                rcards ? v.nremote * WEFT_LINK_CARD_LEN : 0, MPI_BYTE, root, comm)))
                break;
            peers = malloc((size_t)(v.nremote ? v.nremote : 1) * sizeof *peers);
            /* Every connection up before anybody returns: a process of the
             * other side that dies later is then seen at once. */
            if (!rc && (!peers || weft_link_open(ctx, v.nremote, rcards, v.secret, peers) ||
                        weft_link_wait(ctx, v.nremote, peers)))
                rc = MPI_ERR_OTHER;
        }
        /* Take both ids, or neither, and confirm, all on both sides: 1 took
         * them, 0 another thread had one (try again), -1 failed (linking). */
        int ok = rc ? -1 : weft__mpi_ctx_try_take(v.k, v.k_local), all_ok = 0;
        if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
            all_ok = -1; /* no way back from here: the members disagree */
        if (is_root) {
            int8_t b = (int8_t)all_ok, theirs = -1;
            if (sock_write(fd, &b, 1) || sock_read(fd, &theirs, 1))
                theirs = -1; /* the other side is gone */
            all_ok = b < theirs ? b : theirs;
        }
        if (PMPI_Bcast(&all_ok, 1, MPI_INT, root, comm) != MPI_SUCCESS)
            all_ok = -1;
        if (all_ok == 1) {
            have_ids = true;
            break;
        }
        if (ok == 1) {
            weft__mpi_ctx_give(v.k);
            weft__mpi_ctx_give(v.k_local);
        }
        if (all_ok < 0) {
            rc = rc ? rc : MPI_ERR_OTHER;
            break;
        }
    }
    if (have_ids) {
        if (!(remote = weft__mpi_group_new(v.nremote, peers))) {
            weft__mpi_ctx_give(v.k);
            weft__mpi_ctx_give(v.k_local);
            rc = MPI_ERR_NO_MEM;
        } else if (!(rc = weft__mpi_intercomm_build(comm->group, remote, v.k, v.k_local, out))) {
            (*out)->inter_first = first ? 1 : -1;
            weft__mpi_comm_inherit_errh(*out, comm);
        }
        weft__mpi_group_release(remote);
    }
    free(all);
    free(cards);
    free(rcards);
    free(peers);
    return rc;
}

/* ---------------------------------------------------------------- checks */

int weft__dyn_check_root(MPI_Comm comm, int root, MPI_Comm *out)
{
    int rc = weft__mpi_check_init();
    if (!rc)
        rc = weft__mpi_check_comm(comm);
    if (!rc && comm->inter)
        rc = MPI_ERR_COMM;
    if (!rc && (root < 0 || root >= comm->size))
        rc = MPI_ERR_ROOT;
    if (!rc && !out)
        rc = MPI_ERR_ARG;
    return rc;
}

/* ---------------------------------------------------------------- ports */

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    int rc = weft__mpi_check_init();
    if (rc || !port_name)
        return weft__mpi_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Open_port");
    port_t *p = weft__dyn_port_new();
    if (!p)
        return weft__mpi_err(NULL, MPI_ERR_OTHER, "MPI_Open_port");
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s", p->name);
    port_put(p);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Open_port)

int PMPI_Close_port(const char *port_name)
{
    int rc = weft__mpi_check_init();
    if (rc || !port_name)
        return weft__mpi_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Close_port");
    port_t *p = port_take(port_name);
    if (!p)
        return weft__mpi_err(NULL, MPI_ERR_PORT, "MPI_Close_port");
    weft__dyn_port_free(p);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Close_port)

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    int rc = weft__dyn_check_root(comm, root, newcomm);
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Comm_accept");
    *newcomm = MPI_COMM_NULL;
    int fd = -1, root_err = MPI_SUCCESS;
    uint8_t lsecret[SECRET_LEN] = {0};
    if (comm->rank == root) {
        port_t *p = port_name ? port_take(port_name) : NULL;
        if (!p) {
            char shown[MPI_MAX_PORT_NAME];
            weft__dyn_say("MPI_Comm_accept: %s is not a port this process opened (MPI_Open_port)%s",
                          port_shown(port_name, shown, sizeof shown), "");
            root_err = MPI_ERR_PORT;
        } else {
            fd = weft__dyn_port_accept(p, 0, lsecret, NULL);
            port_put(p);
            if (fd < 0)
                root_err = MPI_ERR_PORT;
        }
    }
    rc = weft__dyn_meet(comm, root, fd, root_err, true, lsecret, newcomm);
    if (fd >= 0)
        close(fd);
    return rc ? weft__mpi_err(comm, rc, "MPI_Comm_accept") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_accept)

/* The root's connection to a port: the socket, or -1 with the error said. */
static int port_connect(const char *port_name, uint8_t *lsecret, const char *fn)
{
    struct sockaddr_storage ss;
    socklen_t len;
    uint8_t secret[SECRET_LEN];
    if (port_parse(port_name, &ss, &len, secret) != 0) {
        weft__dyn_say("%s: '%s' is not a weft port name (weft-port:HOST:PORT:SECRET)", fn,
                      port_name ? port_name : "(null)");
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) != 0) {
        char line[MPI_MAX_PORT_NAME + 256];
        char shown[MPI_MAX_PORT_NAME];
        snprintf(line, sizeof line, "%s: port %s: cannot reach it: %s (closed, or never opened)",
                 fn, port_shown(port_name, shown, sizeof shown), strerror(errno));
        weft__mpi_say(line);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const char *why;
    if (port_client_auth(fd, secret, lsecret, &why) != 0) {
        char line[MPI_MAX_PORT_NAME + 256], shown[MPI_MAX_PORT_NAME];
        snprintf(line, sizeof line, "%s: port %s: %s", fn,
                 port_shown(port_name, shown, sizeof shown), why);
        weft__mpi_say(line);
        close(fd);
        return -1;
    }
    return fd;
}

/* MPI_Comm_connect's work, reporting nothing (MPI_Init's parent uses it). */
int weft__dyn_connect_to(const char *port_name, int root, MPI_Comm comm, MPI_Comm *newcomm,
                         const char *fn)
{
    int fd = -1, root_err = MPI_SUCCESS;
    uint8_t lsecret[SECRET_LEN] = {0};
    if (comm->rank == root && (fd = port_connect(port_name, lsecret, fn)) < 0)
        root_err = MPI_ERR_PORT;
    int rc = weft__dyn_meet(comm, root, fd, root_err, false, lsecret, newcomm);
    if (fd >= 0)
        close(fd);
    return rc;
}

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    int rc = weft__dyn_check_root(comm, root, newcomm);
    if (rc)
        return weft__mpi_err(comm, rc, "MPI_Comm_connect");
    *newcomm = MPI_COMM_NULL;
    rc = weft__dyn_connect_to(port_name, root, comm, newcomm, "MPI_Comm_connect");
    return rc ? weft__mpi_err(comm, rc, "MPI_Comm_connect") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_connect)

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    int rc = weft__mpi_check_init();
    if (rc || !intercomm)
        return weft__mpi_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Comm_join");
    *intercomm = MPI_COMM_NULL;
    /* Both sides draw a nonce and half a key; the lower nonce comes first;
     * the socket, which the two processes trust, carries the key. */
    uint8_t mine[2 * NONCE_LEN], theirs[2 * NONCE_LEN], key[SECRET_LEN];
    draw(mine, sizeof mine);
    if (sock_write(fd, mine, sizeof mine) || sock_read(fd, theirs, sizeof theirs))
        return weft__mpi_err(NULL, MPI_ERR_OTHER, "MPI_Comm_join");
    int order = memcmp(mine, theirs, NONCE_LEN);
    if (order == 0)
        return weft__mpi_err(NULL, MPI_ERR_OTHER, "MPI_Comm_join");
    for (int i = 0; i < SECRET_LEN; i++)
        key[i] = mine[NONCE_LEN + i] ^ theirs[NONCE_LEN + i];
    rc = weft__dyn_meet(MPI_COMM_SELF, 0, fd, MPI_SUCCESS, order < 0, key, intercomm);
    return rc ? weft__mpi_err(NULL, rc, "MPI_Comm_join") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_join)

int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    int rc = weft__mpi_check_init();
    if (rc || !comm)
        return weft__mpi_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Comm_disconnect");
    if ((rc = weft__mpi_check_comm(*comm)) || (*comm)->predefined)
        return weft__mpi_err(*comm, rc ? rc : MPI_ERR_COMM, "MPI_Comm_disconnect");
    MPI_Comm c = *comm;
    /* The processes of other jobs in it may end from now on without that
     * being news (the other side may be gone the moment the barrier lets it
     * go); its pending traffic completes first (§10.5.4). */
    MPI_Group groups[2] = {c->group, c->inter ? c->remote_group : NULL};
    for (int g = 0; g < 2; g++)
        for (int i = 0; groups[g] && i < groups[g]->size; i++)
            weft_link_quiet(weft__mpi.ctx, groups[g]->ranks[i]);
    if ((rc = PMPI_Barrier(c)))
        return rc;
    pthread_mutex_lock(&weft__dyn_lock);
    if (weft__dyn_parent == c) {
        weft__dyn_parent = NULL;
        weft__mpi_comm_release(c);
    }
    pthread_mutex_unlock(&weft__dyn_lock);
    return PMPI_Comm_free(comm);
}
WEFT_MPI_ALIAS(Comm_disconnect)

int PMPI_Comm_get_parent(MPI_Comm *out)
{
    if (!out)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Comm_get_parent");
    pthread_mutex_lock(&weft__dyn_lock);
    *out = weft__dyn_parent && !weft__dyn_parent->freed ? weft__dyn_parent : MPI_COMM_NULL;
    pthread_mutex_unlock(&weft__dyn_lock);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_get_parent)

/* ---------------------------------------------------------------- names */

/* The file of a service: WEFT_NAME_DIR (or $TMPDIR/weft-names-UID, made
 * 0700) / hex of the name. -1 when the directory cannot be made. */
static int name_path(const char *service, char *out, size_t len)
{
    const char *dir = getenv("WEFT_NAME_DIR");
    char def[PATH_MAX];
    if (!dir || !*dir) {
        const char *tmp = getenv("TMPDIR");
        snprintf(def, sizeof def, "%s/weft-names-%u", tmp && *tmp ? tmp : "/tmp",
                 (unsigned)getuid());
        if (mkdir(def, 0700) != 0 && errno != EEXIST)
            return -1;
        dir = def;
    }
    size_t sl = strlen(service);
    if (sl == 0 || strlen(dir) + 2 * sl + 8 > len || 2 * sl > NAME_MAX - 4)
        return -1;
    int n = snprintf(out, len, "%s/", dir);
    hex((const uint8_t *)service, sl, out + n);
    return 0;
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    int rc = weft__mpi_check_init();
    if (rc || !service_name || !port_name)
        return weft__mpi_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Publish_name");
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    if (name_path(service_name, path, sizeof path) != 0)
        return weft__mpi_err(NULL, MPI_ERR_SERVICE, "MPI_Publish_name");
    /* Written whole, then linked in place: a lookup never reads half a name,
     * and a name published already stays (link fails). */
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t len = strlen(port_name);
    bool ok = fd >= 0 && write(fd, port_name, len) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    ok = ok && link(tmp, path) == 0;
    int err = errno;
    unlink(tmp);
    if (!ok) {
        if (err == EEXIST)
            weft__dyn_say("MPI_Publish_name: '%s' is published already%s", service_name, "");
        return weft__mpi_err(NULL, MPI_ERR_SERVICE, "MPI_Publish_name");
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Publish_name)

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    int rc = weft__mpi_check_init();
    if (rc || !service_name || !port_name)
        return weft__mpi_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Unpublish_name");
    char path[PATH_MAX], have[MPI_MAX_PORT_NAME];
    if (name_path(service_name, path, sizeof path) != 0)
        return weft__mpi_err(NULL, MPI_ERR_SERVICE, "MPI_Unpublish_name");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, have, sizeof have - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 0)
        return weft__mpi_err(NULL, MPI_ERR_SERVICE, "MPI_Unpublish_name");
    have[n] = 0;
    if (strcmp(have, port_name) != 0 || unlink(path) != 0)
        return weft__mpi_err(NULL, MPI_ERR_SERVICE, "MPI_Unpublish_name");
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Unpublish_name)

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    int rc = weft__mpi_check_init();
    if (rc || !service_name || !port_name)
        return weft__mpi_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Lookup_name");
    char path[PATH_MAX];
    int fd =
        name_path(service_name, path, sizeof path) == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    ssize_t n = fd >= 0 ? read(fd, port_name, MPI_MAX_PORT_NAME - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return weft__mpi_err(NULL, MPI_ERR_NAME, "MPI_Lookup_name");
    port_name[n] = 0;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Lookup_name)
