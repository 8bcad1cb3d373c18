/* Bootstrap client: talks to weftrun's key-value server over a Unix socket (a
 * rank on weftrun's machine) or TCP (a rank on another host), or keeps a private
 * in-memory store when the process runs alone (a singleton), or leaves the store
 * to PMIx when a PMIx launcher started it (boot_pmix.c).
 *
 * The client holds no cache: every get asks the server, so what a rank reads is
 * always what the server committed at the last fence, never a stale copy. Both
 * stores follow the same rule (a put becomes visible only when the fence after
 * it completes) so that code which works alone also works under weftrun.
 *
 * Not thread-safe: the engine uses the store at init and finalize only, from one
 * thread. The only state is in the weft_boot_t object.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "weft/weft.h"
#include "boot/boot.h"
#include "boot/boot_int.h"
#include "boot/boot_proto.h"
#include "util/log.h"

/* How long a rank waits for a TCP connection to weftrun to open. */
#define CONNECT_TIMEOUT_MS 30000
/* After the lifeline ends: SIGTERM, then SIGKILL this much later. */
#define LIFELINE_GRACE_S 2

/* One key of the singleton store. */
typedef struct kv_entry {
    char *key;
    void *value;
    size_t len;
} kv_entry_t;

typedef struct kv_table {
    kv_entry_t *entries;
    size_t count;
    size_t cap;
} kv_table_t;

struct weft_boot {
    int rank;
    int size;
    int fd;                 /* connection to weftrun; -1 for a singleton or PMIx */
    weft_boot_pmix_t *pmix; /* started by a PMIx launcher */
    char job_id[WEFT_BOOT_JOBID_MAX + 1];
    uint8_t secret[WEFT_BOOT_SECRET_LEN];
    /* Message buffers, sized for the largest message, allocated once so that a
     * put or get never allocates. */
    uint8_t *tx;
    uint8_t *rx;
    /* Singleton store: what puts added since the last fence, and what fences
     * committed. A linear table is enough: a singleton has a handful of keys. */
    kv_table_t pending;
    kv_table_t committed;
};

/* ---- singleton store ---- */

static kv_entry_t *table_find(kv_table_t *t, const char *key)
{
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->entries[i].key, key))
            return &t->entries[i];
    return NULL;
}

/* Set key to a copy of value (taking ownership of key_copy and value_copy). */
static int table_set(kv_table_t *t, char *key_copy, void *value_copy, size_t len)
{
    kv_entry_t *e = table_find(t, key_copy);
    if (e) {
        free(e->key);
        free(e->value);
        e->key = key_copy;
        e->value = value_copy;
        e->len = len;
        return WEFT_OK;
    }
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        kv_entry_t *n = realloc(t->entries, cap * sizeof *n);
        if (!n)
            return WEFT_ENOMEM;
        t->entries = n;
        t->cap = cap;
    }
    t->entries[t->count++] = (kv_entry_t){.key = key_copy, .value = value_copy, .len = len};
    return WEFT_OK;
}

static void table_clear(kv_table_t *t)
{
    for (size_t i = 0; i < t->count; i++) {
        free(t->entries[i].key);
        free(t->entries[i].value);
    }
    free(t->entries);
    *t = (kv_table_t){0};
}

static int local_put(weft_boot_t *b, const char *key, const void *value, size_t len)
{
    char *k = strdup(key);
    /* malloc(0) may return NULL; keep one byte so NULL always means failure. */
    void *v = malloc(len ? len : 1);
    if (!k || !v)
        goto err_free;
    if (len)
        memcpy(v, value, len);
    if (table_set(&b->pending, k, v, len) != WEFT_OK)
        goto err_free;
    return WEFT_OK;

err_free:
    free(k);
    free(v);
    return WEFT_ENOMEM;
}

/* The fence of a job of one: commit the pending keys. */
static int local_fence(weft_boot_t *b)
{
    /* Grow the committed table first, so that the commit cannot fail halfway. */
    size_t need = b->committed.count + b->pending.count;
    if (need > b->committed.cap) {
        kv_entry_t *n = realloc(b->committed.entries, need * sizeof *n);
        if (!n)
            return WEFT_ENOMEM;
        b->committed.entries = n;
        b->committed.cap = need;
    }
    for (size_t i = 0; i < b->pending.count; i++) {
        kv_entry_t *e = &b->pending.entries[i];
        (void)table_set(&b->committed, e->key, e->value, e->len);
    }
    b->pending.count = 0; /* ownership moved to committed */
    return WEFT_OK;
}

static int local_get(weft_boot_t *b, const char *key, void *value, size_t *len)
{
    kv_entry_t *e = table_find(&b->committed, key);
    if (!e)
        return WEFT_ENOTFOUND;
    if (e->len > *len) {
        *len = e->len;
        return WEFT_ENOBUFS;
    }
    if (e->len)
        memcpy(value, e->value, e->len);
    *len = e->len;
    return WEFT_OK;
}

/* ---- connection to weftrun ---- */

static int send_all(int fd, const uint8_t *buf, size_t len)
{
    while (len > 0) {
        /* MSG_NOSIGNAL: a dead launcher must give an error, not kill us with SIGPIPE. */
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            weft_log_error("boot: cannot write to the launcher: %s", strerror(errno));
            return WEFT_EBOOT;
        }
        buf += n;
        len -= (size_t)n;
    }
    return WEFT_OK;
}

static int recv_all(int fd, uint8_t *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = recv(fd, buf, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            weft_log_error("boot: lost the connection to the launcher: %s",
                           n == 0 ? "closed by the launcher" : strerror(errno));
            return WEFT_EBOOT;
        }
        buf += n;
        len -= (size_t)n;
    }
    return WEFT_OK;
}

static int send_msg(weft_boot_t *b, uint16_t type, size_t body_len)
{
    weft__boot_hdr_encode(b->tx, type, (uint32_t)body_len);
    return send_all(b->fd, b->tx, WEFT_BOOT_PROTO_HDR_SIZE + body_len);
}

/* Receive one message of the expected type into b->rx; *body_len receives its
 * length. Anything else from the launcher is a protocol error. */
static int recv_msg(weft_boot_t *b, uint16_t type, uint32_t *body_len)
{
    weft_boot_hdr_t hdr;
    int rc = recv_all(b->fd, b->rx, WEFT_BOOT_PROTO_HDR_SIZE);
    if (rc != WEFT_OK)
        return rc;
    if (weft__boot_hdr_decode(b->rx, &hdr) != 0 || hdr.type != type) {
        weft_log_error("boot: malformed reply from the launcher (type %u, length %" PRIu32 ")",
                       (unsigned)hdr.type, hdr.body_len);
        return WEFT_EBOOT;
    }
    rc = recv_all(b->fd, b->rx, hdr.body_len);
    if (rc != WEFT_OK)
        return rc;
    *body_len = hdr.body_len;
    return WEFT_OK;
}

/* Receive a reply whose body is a single i32 status. */
static int recv_status(weft_boot_t *b, uint16_t type, int *status)
{
    uint32_t len;
    int rc = recv_msg(b, type, &len);
    if (rc != WEFT_OK)
        return rc;
    if (weft__boot_status_decode(b->rx, len, status) != 0) {
        weft_log_error("boot: malformed reply from the launcher (length %" PRIu32 ")", len);
        return WEFT_EBOOT;
    }
    return WEFT_OK;
}

/* Parse a non-negative decimal integer that fits in an int; -1 if malformed. */
static int parse_int(const char *s)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > INT_MAX)
        return -1;
    return (int)v;
}

static int connect_unix(const char *path, int *fd_out)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!*path || strlen(path) >= sizeof sa.sun_path) {
        weft_log_error("boot: WEFT_BOOT_ADDR names an unusable socket path '%s'", path);
        return WEFT_EBOOT;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        weft_log_error("boot: socket: %s", strerror(errno));
        return WEFT_EBOOT;
    }
    int rc;
    do
        rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        weft_log_error("boot: cannot reach the launcher at %s: %s", path, strerror(errno));
        close(fd);
        return WEFT_EBOOT;
    }
    *fd_out = fd;
    return WEFT_OK;
}

/* "HOST:PORT" or "[V6]:PORT", numeric only: weftrun writes the address it
 * listens on, so no name service is involved on the rank's side. */
static int connect_tcp(const char *hostport, int *fd_out)
{
    char host[128];
    const char *port;
    if (hostport[0] == '[') {
        const char *close_br = strchr(hostport, ']');
        if (!close_br || close_br[1] != ':' || (size_t)(close_br - hostport - 1) >= sizeof host)
            goto err_addr;
        memcpy(host, hostport + 1, (size_t)(close_br - hostport - 1));
        host[close_br - hostport - 1] = 0;
        port = close_br + 2;
    } else {
        const char *colon = strrchr(hostport, ':');
        if (!colon || (size_t)(colon - hostport) >= sizeof host)
            goto err_addr;
        memcpy(host, hostport, (size_t)(colon - hostport));
        host[colon - hostport] = 0;
        port = colon + 1;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai;
    if (!*host || !*port || getaddrinfo(host, port, &hints, &ai) != 0)
        goto err_addr;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        weft_log_error("boot: socket: %s", strerror(errno));
        freeaddrinfo(ai);
        return WEFT_EBOOT;
    }
    /* Non-blocking connect with a bound: an unreachable launcher must give an
     * error in seconds, not after the kernel's minutes of SYN retries. */
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int n;
        do
            n = poll(&p, 1, CONNECT_TIMEOUT_MS);
        while (n < 0 && errno == EINTR);
        socklen_t len = sizeof err;
        if (n == 0)
            err = ETIMEDOUT;
        else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
    }
    if (err) {
        weft_log_error("boot: cannot reach the launcher at tcp:%s: %s", hostport, strerror(err));
        close(fd);
        return WEFT_EBOOT;
    }
    /* Back to blocking: the client waits for each reply anyway. Fences are
     * round trips, so no Nagle delay. */
    int one = 1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *fd_out = fd;
    return WEFT_OK;

err_addr:
    weft_log_error("boot: WEFT_BOOT_ADDR='tcp:%s' is not a numeric HOST:PORT", hostport);
    return WEFT_EBOOT;
}

static int connect_launcher(const char *addr, int *fd_out)
{
    if (!strncmp(addr, "unix:", 5))
        return connect_unix(addr + 5, fd_out);
    if (!strncmp(addr, "tcp:", 4))
        return connect_tcp(addr + 4, fd_out);
    weft_log_error("boot: WEFT_BOOT_ADDR='%s' is neither unix:/path nor tcp:HOST:PORT", addr);
    return WEFT_EBOOT;
}

/* The handshake on a fresh connection: the server's CHALLENGE, then our HELLO (or
 * LIFELINE) with the proof that we know the job secret, then its verdict. */
static int handshake(weft_boot_t *b, int fd, uint16_t type)
{
    int saved = b->fd;
    b->fd = fd; /* send_msg and recv_msg work on b->fd */
    uint32_t len;
    int rc = recv_msg(b, WEFT_BOOT_MSG_CHALLENGE, &len);
    if (rc != WEFT_OK)
        goto out;
    if (len != WEFT_BOOT_NONCE_LEN) {
        weft_log_error("boot: malformed challenge from the launcher");
        rc = WEFT_EBOOT;
        goto out;
    }
    uint8_t nonce[WEFT_BOOT_NONCE_LEN], proof[WEFT_BOOT_PROOF_LEN];
    memcpy(nonce, b->rx, sizeof nonce);
    size_t idlen = strlen(b->job_id);
    weft__boot_proof(b->secret, nonce, b->job_id, idlen, (uint32_t)b->rank, proof);
    size_t body = weft__boot_hello_encode(b->tx + WEFT_BOOT_PROTO_HDR_SIZE, (uint32_t)b->rank,
                                          (uint32_t)b->size, b->job_id, idlen, proof);
    if ((rc = send_msg(b, type, body)) != WEFT_OK)
        goto out;
    int status;
    if ((rc = recv_status(b, WEFT_BOOT_MSG_HELLO_REPLY, &status)) != WEFT_OK)
        goto out;
    if (status != WEFT_OK) {
        weft_log_error("boot: the launcher refused rank %d: %s", b->rank, weft_strerror(status));
        rc = WEFT_EBOOT;
    }
out:
    b->fd = saved;
    return rc;
}

/* ---- the lifeline ----
 *
 * A rank on another host is started through a remote shell (ssh), and killing the
 * local ssh client does not reach it. So such a rank keeps a second connection
 * to weftrun, its lifeline, read by a thread that does nothing else: when weftrun
 * says END, or the connection closes (weftrun died, its host died: keepalive),
 * the thread ends the process: SIGTERM, and SIGKILL if that did not do it.
 *
 * The lifeline belongs to the process, not to a weft_boot_t: it must outlive
 * weft__boot_fini (a rank that finalized may still compute, and must still die
 * with the job) and a second init must not open a second one. That is the one
 * piece of process-wide state here, and it is set once. */
static atomic_int lifeline_started;

static void *lifeline_watch(void *arg)
{
    int fd = (int)(intptr_t)arg;
    uint8_t hdr[WEFT_BOOT_PROTO_HDR_SIZE];
    size_t got = 0;
    const char *why = "weftrun ended the job";
    /* Whatever arrives, the outcome is the same; only END is expected, and only
     * the reason in the message differs. */
    for (;;) {
        ssize_t n = recv(fd, hdr + got, sizeof hdr - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            why = "lost the connection to weftrun";
            break;
        }
        got += (size_t)n;
        if (got == sizeof hdr)
            break;
    }
    weft_log_warn("boot: %s; this process ends", why);
    kill(getpid(), SIGTERM);
    sleep(LIFELINE_GRACE_S);
    kill(getpid(), SIGKILL);
    return NULL;
}

static int lifeline_start(weft_boot_t *b, const char *addr)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&lifeline_started, &expected, 1,
                                                 memory_order_acq_rel, memory_order_acquire))
        return WEFT_OK; /* this process already has one */
    int fd = -1;
    int rc = connect_launcher(addr, &fd);
    if (rc == WEFT_OK)
        rc = handshake(b, fd, WEFT_BOOT_MSG_LIFELINE);
    if (rc != WEFT_OK)
        goto err;
    /* A host that vanishes sends no FIN: keepalive notices within a minute. */
    int one = 1, idle = 30, intvl = 5, cnt = 6;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    /* The watcher takes no signal meant for the application's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&t, &attr, lifeline_watch, (void *)(intptr_t)fd);
    if (err == EINVAL) {
        /* The program's static TLS does not fit a small stack (OpenBLAS
         * has much): the default size then. */
        pthread_attr_setstacksize(&attr, 8u << 20);
        err = pthread_create(&t, &attr, lifeline_watch, (void *)(intptr_t)fd);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (err) {
        weft_log_error("boot: cannot start the lifeline thread: %s", strerror(err));
        rc = WEFT_ESYS;
        goto err;
    }
    return WEFT_OK;

err:
    if (fd >= 0)
        close(fd);
    atomic_store_explicit(&lifeline_started, 0, memory_order_release);
    return rc;
}

/* The secret is 2*WEFT_BOOT_SECRET_LEN hex digits, nothing else. */
static int parse_secret(const char *hex, uint8_t *out)
{
    if (!hex || strlen(hex) != 2 * WEFT_BOOT_SECRET_LEN)
        return WEFT_EINVAL;
    for (int i = 0; i < 2 * WEFT_BOOT_SECRET_LEN; i++) {
        int c = hex[i], v;
        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v = c - 'A' + 10;
        else
            return WEFT_EINVAL;
        if (i % 2 == 0)
            out[i / 2] = (uint8_t)(v << 4);
        else
            out[i / 2] |= (uint8_t)v;
    }
    return WEFT_OK;
}

static int alloc_buffers(weft_boot_t *b)
{
    b->tx = malloc(WEFT_BOOT_PROTO_HDR_SIZE + WEFT_BOOT_PROTO_BODY_MAX);
    b->rx = malloc(WEFT_BOOT_PROTO_HDR_SIZE + WEFT_BOOT_PROTO_BODY_MAX);
    return b->tx && b->rx ? WEFT_OK : WEFT_ENOMEM;
}

/* Read the job description weftrun put in the environment. */
static int init_from_env(weft_boot_t *b, const char *addr)
{
    const char *id = getenv("WEFT_JOBID");
    b->rank = parse_int(getenv("WEFT_RANK"));
    b->size = parse_int(getenv("WEFT_SIZE"));
    if (b->rank < 0 || b->size <= 0 || b->rank >= b->size) {
        weft_log_error(
            "boot: WEFT_BOOT_ADDR is set but WEFT_RANK/WEFT_SIZE are missing or invalid");
        return WEFT_EBOOT;
    }
    if (!id || !weft__boot_jobid_valid(id, strlen(id))) {
        weft_log_error("boot: WEFT_JOBID is missing or not made of [A-Za-z0-9_-]");
        return WEFT_EBOOT;
    }
    memcpy(b->job_id, id, strlen(id) + 1);
    if (parse_secret(getenv("WEFT_JOB_SECRET"), b->secret) != WEFT_OK) {
        weft_log_error("boot: WEFT_JOB_SECRET is missing or not %d hex digits",
                       2 * WEFT_BOOT_SECRET_LEN);
        return WEFT_EBOOT;
    }
    if (alloc_buffers(b) != WEFT_OK)
        return WEFT_ENOMEM;
    int rc = connect_launcher(addr, &b->fd);
    if (rc == WEFT_OK)
        rc = handshake(b, b->fd, WEFT_BOOT_MSG_HELLO);
    /* Only a rank on another host needs a lifeline: weftrun signals its local
     * ranks itself, and they die with it (PR_SET_PDEATHSIG). */
    if (rc == WEFT_OK && !strncmp(addr, "tcp:", 4))
        rc = lifeline_start(b, addr);
    return rc;
}

int weft__boot_init(weft_boot_t **out)
{
    if (!out)
        return WEFT_EINVAL;
    weft_boot_t *b = calloc(1, sizeof *b);
    if (!b)
        return WEFT_ENOMEM;
    b->fd = -1;

    const char *addr = getenv("WEFT_BOOT_ADDR");
    if (addr && *addr) {
        int rc = init_from_env(b, addr);
        if (rc != WEFT_OK) {
            weft__boot_fini(b);
            return rc;
        }
    } else if (weft__boot_pmix_detected()) {
        int rc = weft__boot_pmix_init(&b->pmix, &b->rank, &b->size, b->job_id, b->secret);
        if (rc != WEFT_OK) {
            weft__boot_fini(b);
            return rc;
        }
    } else {
        /* A singleton: the id only has to be unique on this machine, and pid plus
         * the clock is (two live processes never share a pid). */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(b->job_id, sizeof b->job_id, "s%ld-%" PRIx64, (long)getpid(),
                 (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
        b->rank = 0;
        b->size = 1;
        if (getrandom(b->secret, sizeof b->secret, 0) != (ssize_t)sizeof b->secret) {
            weft__boot_fini(b);
            return WEFT_ESYS;
        }
    }
    weft__log_set_rank(b->rank);
    *out = b;
    return WEFT_OK;
}

int weft__boot_join_fd(int fd, int rank, int size, const char *job_id,
                       const uint8_t secret[WEFT_BOOT_SECRET_LEN], weft_boot_t **out)
{
    if (fd < 0 || rank < 0 || size <= 0 || rank >= size || !job_id ||
        !weft__boot_jobid_valid(job_id, strlen(job_id)) || !secret || !out)
        return WEFT_EINVAL;
    weft_boot_t *b = calloc(1, sizeof *b);
    if (!b)
        return WEFT_ENOMEM;
    b->fd = -1; /* the caller's until the handshake succeeds */
    b->rank = rank;
    b->size = size;
    memcpy(b->job_id, job_id, strlen(job_id) + 1);
    memcpy(b->secret, secret, WEFT_BOOT_SECRET_LEN);
    int rc = alloc_buffers(b);
    if (rc == WEFT_OK)
        rc = handshake(b, fd, WEFT_BOOT_MSG_HELLO);
    if (rc != WEFT_OK) {
        weft__boot_fini(b);
        return rc;
    }
    b->fd = fd;
    *out = b;
    return WEFT_OK;
}

const uint8_t *weft__boot_secret(const weft_boot_t *b)
{
    return b->secret;
}

int weft__boot_rank(const weft_boot_t *b)
{
    return b->rank;
}

int weft__boot_size(const weft_boot_t *b)
{
    return b->size;
}

const char *weft__boot_job_id(const weft_boot_t *b)
{
    return b->job_id;
}

static int check_key(const char *key)
{
    if (!key)
        return WEFT_EINVAL;
    size_t klen = strnlen(key, WEFT_BOOT_KEY_MAX + 1);
    if (klen == 0 || klen > WEFT_BOOT_KEY_MAX)
        return WEFT_EINVAL;
    return WEFT_OK;
}

int weft__boot_put(weft_boot_t *b, const char *key, const void *value, size_t len)
{
    if (!b || check_key(key) != WEFT_OK || len > WEFT_BOOT_VALUE_MAX || (len && !value))
        return WEFT_EINVAL;
    if (b->pmix)
        return weft__boot_pmix_put(b->pmix, key, value, len);
    if (b->fd < 0)
        return local_put(b, key, value, len);

    size_t klen = strlen(key);
    uint8_t *p = b->tx + WEFT_BOOT_PROTO_HDR_SIZE;
    weft__boot_put16(p, (uint16_t)klen);
    memcpy(p + 2, key, klen);
    weft__boot_put32(p + 2 + klen, (uint32_t)len);
    if (len)
        memcpy(p + 6 + klen, value, len);
    /* No reply: puts are pipelined, and the fence that follows reports failures. */
    return send_msg(b, WEFT_BOOT_MSG_PUT, 6 + klen + len);
}

int weft__boot_fence(weft_boot_t *b)
{
    if (!b)
        return WEFT_EINVAL;
    if (b->pmix)
        return weft__boot_pmix_fence(b->pmix);
    if (b->fd < 0)
        return local_fence(b);
    int rc = send_msg(b, WEFT_BOOT_MSG_FENCE, 0);
    if (rc != WEFT_OK)
        return rc;
    int status;
    rc = recv_status(b, WEFT_BOOT_MSG_FENCE_REPLY, &status);
    if (rc != WEFT_OK)
        return rc;
    if (status != WEFT_OK)
        weft_log_warn("boot: fence failed: %s", weft_strerror(status));
    return status;
}

int weft__boot_get(weft_boot_t *b, const char *key, void *value, size_t *len)
{
    if (!b || !len || check_key(key) != WEFT_OK || (*len && !value))
        return WEFT_EINVAL;
    if (b->pmix)
        return weft__boot_pmix_get(b->pmix, key, value, len);
    if (b->fd < 0)
        return local_get(b, key, value, len);

    size_t klen = strlen(key);
    uint8_t *p = b->tx + WEFT_BOOT_PROTO_HDR_SIZE;
    weft__boot_put16(p, (uint16_t)klen);
    memcpy(p + 2, key, klen);
    int rc = send_msg(b, WEFT_BOOT_MSG_GET, 2 + klen);
    if (rc != WEFT_OK)
        return rc;
    uint32_t body_len;
    rc = recv_msg(b, WEFT_BOOT_MSG_GET_REPLY, &body_len);
    if (rc != WEFT_OK)
        return rc;
    weft_boot_get_reply_t reply;
    if (weft__boot_get_reply_decode(b->rx, body_len, &reply) != 0)
        goto err_proto;
    if (reply.status != WEFT_OK)
        return reply.status == WEFT_ENOTFOUND ? WEFT_ENOTFOUND : WEFT_EBOOT;
    if (reply.value_len > *len) {
        *len = reply.value_len;
        return WEFT_ENOBUFS;
    }
    if (reply.value_len)
        memcpy(value, reply.value, reply.value_len);
    *len = reply.value_len;
    return WEFT_OK;

err_proto:
    weft_log_error("boot: malformed GET reply from the launcher");
    return WEFT_EBOOT;
}

int weft__boot_abort(weft_boot_t *b, int code, const char *msg)
{
    if (!b)
        return WEFT_EINVAL;
    if (!msg)
        msg = "";
    if (b->pmix)
        return weft__boot_pmix_abort(b->pmix, code, msg);
    if (b->fd < 0) {
        /* Alone there is nobody to end but ourselves, which the caller does. */
        return WEFT_OK;
    }
    size_t mlen = strlen(msg); /* a C string; the launcher gets its first bytes */
    if (mlen > WEFT_BOOT_ABORT_MSG_MAX)
        mlen = WEFT_BOOT_ABORT_MSG_MAX;
    uint8_t *p = b->tx + WEFT_BOOT_PROTO_HDR_SIZE;
    weft__boot_put32(p, (uint32_t)code);
    weft__boot_put16(p + 4, (uint16_t)mlen);
    memcpy(p + 6, msg, mlen);
    int rc = send_msg(b, WEFT_BOOT_MSG_ABORT, 6 + mlen);
    if (rc != WEFT_OK)
        return rc;
    /* Wait for the launcher to acknowledge, so that the message is printed and the
     * job's exit code is set before the caller exits on its own. The launcher may
     * well kill us before the reply arrives; that is the point. */
    int status;
    rc = recv_status(b, WEFT_BOOT_MSG_ABORT_REPLY, &status);
    return rc != WEFT_OK ? rc : status;
}

int weft__boot_spawn(weft_boot_t *b, const weft_boot_app_t *apps, int napps, const char *hosts,
                     const char *hostfile, const char *wdir)
{
    if (b->pmix)
        return weft__boot_pmix_spawn(b->pmix, apps, napps, hosts, hostfile, wdir);
    return WEFT_EUNSUPPORTED;
}

void weft__boot_fini(weft_boot_t *b)
{
    if (!b)
        return;
    if (b->fd >= 0) {
        /* Say goodbye so the launcher counts this rank out of later fences rather
         * than treating the closed connection as a failure. Best effort. */
        uint8_t bye[WEFT_BOOT_PROTO_HDR_SIZE];
        weft__boot_hdr_encode(bye, WEFT_BOOT_MSG_BYE, 0);
        ssize_t n = send(b->fd, bye, sizeof bye, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)n;
        close(b->fd);
    }
    weft__boot_pmix_fini(b->pmix);
    free(b->tx);
    free(b->rx);
    table_clear(&b->pending);
    table_clear(&b->committed);
    free(b);
}
