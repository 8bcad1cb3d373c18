/* weftrun: start N ranks of a program on this machine, or on several hosts
 * through a remote shell (--hosts, --hostfile, --rsh), and serve them the
 * bootstrap key-value store (put / fence / get) over a Unix socket, and over TCP
 * for ranks on other hosts.
 *
 * One thread, one epoll loop: the listening sockets, one connection per rank
 * (plus a lifeline per remote rank), a signalfd for SIGCHLD and the terminating
 * signals, and (with --tag-output) the ranks' stdout/stderr pipes. Nothing blocks
 * except epoll_wait, so a rank that stalls, sends half a message or disappears
 * never stalls the others.
 *
 * Every connection starts with a CHALLENGE; the client must answer with a HELLO
 * that proves it knows the job secret (boot_proto.h). That matters on TCP, where
 * anybody on the network may connect: a stranger is refused, logged, and the job
 * goes on.
 *
 * Failure policy: a rank fails when it exits non-zero (other than 77, "skip"),
 * dies of a signal, aborts the job, or exits 0 after joining the store (HELLO)
 * without leaving it (BYE, which weft__boot_fini sends): a rank that exits
 * without finalizing leaves its peers waiting for it. The first failure in time
 * is reported on one line, saying how the rank failed; the others get SIGTERM,
 * then SIGKILL after a grace period, and weftrun exits with that rank's code
 * (128+signal for a signal, 1 for an exit without finalizing). --keep-going lets
 * the survivors run to their end instead, and reports each later failure too.
 *
 * "First in time" needs care: when a rank dies, its peers may notice on their
 * own links before weftrun sees anything (an exiting process's descriptors are
 * released last-opened first, so its store connection, opened first, closes
 * last), and abort. So an abort is reported only after ABORT_GRACE_NS, and its
 * reply (after which weft_abort exits) waits as long: a rank that dies in that
 * time, other than one that aborted, is taken to have died before the abort. A
 * rank whose store connection closed without BYE is taken to have died then,
 * and any failure after it waits for its exit status (at most HOLD_NS), so that
 * the rank that failed first is the one named, with how it failed.
 *
 * Exit code 77 means "skip" to ctest, so a failed job never exits 77 (an abort
 * with code 77 exits 1); 77 is the job's code only when every rank exited 0 or
 * 77 and none failed.
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT end the job (forwarded to the
 * ranks, SIGKILL after the grace period or a second signal). SIGUSR1, SIGUSR2
 * and SIGALRM are forwarded to every rank on this machine and the job goes on,
 * as Open MPI's mpirun and Slurm's srun do: batch systems send them ahead of the
 * end of a job's time so that the application can checkpoint; a rank that does
 * not handle them dies of them, as it would alone. They do not reach ranks on
 * other hosts: killing their remote shell would only kill the shell.
 *
 * The wire protocol is in src/boot/boot_proto.h; weftrun needs only that header.
 */
#include <dirent.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "weft/weft.h"
#include "weftrun_place.h"
#include "boot/boot_proto.h"
#include "util/siphash.h"

#ifndef WEFT_VERSION
#define WEFT_VERSION "unknown"
#endif

#define MAX_RANKS      65536
#define MAX_APPS       64
#define KILL_GRACE_NS  (2 * 1000000000ull)
#define DRAIN_GRACE_NS (1 * 1000000000ull)
/* How long a failure's report waits for the exit status of a rank whose store
 * connection closed before it (see the header comment), and how long a rank that
 * exited 0 has for the rest of its store connection (a BYE on its way over TCP)
 * to arrive. Both take microseconds to milliseconds; this is far beyond. */
#define HOLD_NS (5 * 1000000000ull)
/* How long an abort waits for the death that may have caused it to show (see
 * the header comment): microseconds on an idle machine, the time for a dying
 * process to be scheduled on a loaded one. The job's end waits as long. */
#define ABORT_GRACE_NS (1 * 1000000000ull)
/* Stop reading a connection whose replies pile up beyond this, until it reads
 * them: a rank that sends gets without reading cannot make us grow forever. */
#define TX_HIGH_WATER (1u << 20)
/* A bound on the whole store, so a runaway rank cannot eat the machine. */
#define STORE_BYTES_MAX  (1ull << 30)
#define EXIT_USAGE       2
#define EXIT_SKIP        77
#define EXIT_TIMEOUT     124
#define EXIT_CANNOT_EXEC 127
#define LINE_MAX_TAGGED  4096
/* Connections waiting for their HELLO over TCP, where anybody may connect: one
 * that has not proved itself within HANDSHAKE_NS is closed (a rank answers the
 * challenge within a round trip; 5 s leaves room for a loaded host), and at
 * most HANDSHAKE_PER_ADDR from one address and HANDSHAKE_MAX in all may wait,
 * each raised by two (store and lifeline) per remote rank, so that a job's own
 * ranks fit. Over the bound, the oldest waiting connection of that address (or
 * of all) is closed: a rank's is young, a silent stranger's only ages, so
 * strangers cannot keep ranks out, even from a rank's own host. Connections on
 * the Unix socket are exempt: only our user can reach its directory, and they
 * are our own ranks, which must never wait behind strangers. */
#define HANDSHAKE_NS       (5 * 1000000000ull)
#define HANDSHAKE_MAX      256
#define HANDSHAKE_PER_ADDR 16
/* At most this many TCP connections accepted per wake-up, so a flood of them
 * does not hold up the ranks on the Unix socket. */
#define ACCEPT_BATCH 64
/* Lines about strangers' connections (refused, closed): at most this many a
 * second, then one line that counts the rest, so a flood cannot flood the
 * terminal or the batch system's log. */
#define STRANGER_LINES     10
#define MAX_HOSTS          MAX_RANKS
#define DEFAULT_RSH        "ssh -o BatchMode=yes -o ConnectTimeout=30"
#define SSH_EXIT_FAILURE   255
#define WEFT_MIN_U64(a, b) ((a) < (b) ? (a) : (b))

/* What an epoll event points at: each object starts with its kind. */
enum source_kind { SRC_SIGNAL, SRC_LISTEN, SRC_LISTEN_TCP, SRC_CONN, SRC_OUTPUT, SRC_SPAWNER };

/* What a connection is: waiting for its HELLO, a rank's store client, or a
 * rank's lifeline (which only ever receives END). */
enum conn_kind { CONN_HANDSHAKE, CONN_REFUSED, CONN_STORE, CONN_LIFELINE };

struct source {
    enum source_kind kind;
};

/* When something happened, as far as weftrun can tell: the epoll batch it came
 * in, then a rank's death before any other news of the same batch (its peers'
 * reactions to it come after it), then the order of handling. */
struct when {
    uint64_t batch;
    int prio; /* WHEN_DEATH or WHEN_OTHER */
    uint64_t seq;
};
enum { WHEN_DEATH, WHEN_OTHER };

struct conn {
    struct source src;
    int fd;
    enum conn_kind kind;
    int rank; /* -1 until a valid HELLO */
    uint8_t nonce[WEFT_BOOT_NONCE_LEN];
    uint64_t handshake_deadline_ns;
    bool tcp;
    int family;
    uint8_t addr[16]; /* the peer's IP address, for the per-address bound */
    char peer[64];    /* "tcp 10.0.0.2:41234" or "unix", for messages */
    bool dead;
    bool close_after_flush;
    bool reading;    /* EPOLLIN registered */
    bool processing; /* inside conn_process: do not re-enter */
    uint32_t events;
    uint8_t *rx;
    size_t rx_len;
    uint8_t *tx;
    size_t tx_len, tx_off, tx_cap;
    struct conn *next_dead;
    struct conn *prev, *next; /* every live connection, to close them at the end */
};

struct output {
    struct source src;
    int fd; /* read end of the rank's pipe, -1 once closed */
    int rank;
    int dest_fd; /* 1 or 2 */
    size_t len;
    char buf[LINE_MAX_TAGGED];
};

struct rank {
    char **prog; /* its program and arguments (its app's, with ':') */
    int app;     /* which app of the command line (0 without ':') */
    pid_t pid;   /* 0 if never started; for a remote rank, its remote shell's */
    int host;    /* index in g.hosts, or -1 without --hosts/--hostfile */
    bool remote;
    bool connected_once; /* said HELLO at least once */
    bool running;
    int wstatus;
    struct conn *conn;
    struct conn *lifeline;
    bool in_fence;
    bool said_bye;
    bool departed; /* left cleanly: counts as present at every later fence */
    bool failed;
    /* Its store connection closed without BYE while it ran: it probably died
     * then (lost_at), before weftrun saw its exit status. */
    bool lost;
    struct when lost_at;
    uint64_t lost_ns;
    struct when exited_at;
    /* Exited 0 with its store connection still open: judged when it closes. */
    bool exit_waiting;
    uint64_t exit_wait_until_ns;
    bool unfinalized;    /* exited 0 after HELLO without BYE */
    bool report_pending; /* failed at failed_at; reported once nothing earlier is unknown */
    bool abort_waiting;  /* sent ABORT; its reply waits until the abort is decided */
    struct when failed_at;
    struct output out[2];
    /* Placement: the rank is the host_index-th of host_count on its host;
     * a rank of this machine is bound to cpus when bound. */
    int host_index, host_count;
    bool bound;
    cpu_set_t cpus;
};

/* A host of --hosts or --hostfile. */
struct host {
    char *name;
    int slots;  /* 0: not given (1 for placement) */
    bool local; /* "localhost" or this machine's name: ranks are forked */
};

/* The store: a chained hash table. Each entry has the value committed by the
 * last fence and possibly a pending one, committed by the next. */
struct entry {
    struct entry *next;
    struct entry *next_pending;
    char *key;
    uint8_t *value;
    size_t len;
    bool has_value;
    bool is_pending;
    uint8_t *pending_value;
    size_t pending_len;
};

static struct {
    /* options */
    int nranks;
    double timeout_s;
    bool keep_going;
    bool tag_output;
    char **set_env; /* "VAR=val" or "VAR" (forward) */
    int nset_env;
    char **prog_argv;
    /* The apps of an MPMD command line (prog : -n K prog2 ...): each one's
     * program and arguments and its number of ranks. */
    struct app {
        char **argv;
        int n;
    } apps[MAX_APPS];
    int napps;
    /* --lifeline-fd: the pipe from the MPI process that spawned this job
     * (MPI_Comm_spawn); its end (that process died) ends the job. */
    int spawner_fd;
    struct source spawner_src;
    struct host *hosts;
    int nhosts;
    bool map_by_node;
    weftrun_place_t place;
    bool place_applied;  /* this machine's topology is the real one: bind */
    char self_exe[4096]; /* for remote ranks' weftrun --placed */
    const char *rsh;     /* --rsh, split on blanks into rsh_argv */
    char **rsh_argv;
    int rsh_argc;
    bool rsh_shell;            /* the remote side is a shell (ssh, rsh): quote, secret on stdin */
    const char *boot_addr_opt; /* --boot-addr */
    char tcp_addr[128];        /* "tcp:IP:PORT" handed to remote ranks */
    int tcp_listen_fd;
    struct source tcp_listen_src;
    int nhandshakes; /* TCP connections waiting for their HELLO */
    int handshake_max, handshake_per_addr;
    long handshakes_dropped;     /* closed for silence or over the bound */
    uint64_t stranger_window_ns; /* start of the current second of stranger_msg */
    int stranger_lines;
    long stranger_quiet; /* lines not shown in that second */

    /* job */
    char jobid[WEFT_BOOT_JOBID_MAX + 1];
    char secret[2 * WEFT_BOOT_SECRET_LEN + 1]; /* hex, handed to ranks only */
    /* The socket path must fit in sun_path (108 bytes), so the directory is
     * limited to leave room for "/boot.sock". */
    char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path) - 16];
    int epfd, sigfd, listen_fd;
    struct source sig_src, listen_src;
    sigset_t old_mask;
    struct rank *ranks;
    int running;
    int started;
    int in_fence;

    /* store */
    struct entry **buckets;
    size_t nbuckets, nentries;
    uint64_t store_bytes;
    struct entry *pending;

    /* ending */
    bool ending;
    bool killed_hard;
    bool warned_remote_signal;
    uint64_t kill_at_ns;
    bool exit_code_set;
    int exit_code;
    /* Failures waiting to be reported (decide_failures): ranks with
     * report_pending, and cause: an abort or one of weftrun's own reasons. */
    uint64_t batch, seq;
    int npending;
    int nexit_waiting;
    bool cause_pending;
    struct when cause_at;
    uint64_t cause_ns;
    bool cause_is_abort;
    int cause_code;
    char cause_line[WEFT_BOOT_ABORT_MSG_MAX + 512];
    bool poll_again; /* decide after one more look at what epoll has */
    uint64_t hold_until_ns;
    uint64_t deadline_ns;
    struct conn *dead_conns;
    struct conn *conns;
} g = {.nranks = 1, .epfd = -1, .sigfd = -1, .listen_fd = -1, .tcp_listen_fd = -1};

/* Whether ranks are placed (or their binding reported) at all: not with
 * --bind-to none alone. */
static bool placing(void)
{
    return g.place.policy.bind != WEFT_TOPO_NONE || g.place.policy.map_given || g.place.report;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "weftrun: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    /* One write, so the line does not interleave with the ranks' output. */
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}

/* The summary of the lines stranger_msg did not show, once their second is
 * over (or at the end: force). Returns when it is due, UINT64_MAX if never. */
static uint64_t stranger_flush(uint64_t now, bool force)
{
    if (g.stranger_quiet == 0)
        return UINT64_MAX;
    uint64_t due = g.stranger_window_ns + 1000000000ull;
    if (!force && now < due)
        return due;
    msg("refused or closed %ld more connections from strangers in the last %.1f s",
        g.stranger_quiet, (double)(now - g.stranger_window_ns) / 1e9);
    g.stranger_quiet = 0;
    return UINT64_MAX;
}

/* A line about a connection that has not proved the job secret. */
static void stranger_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void stranger_msg(const char *fmt, ...)
{
    uint64_t now = now_ns();
    if (now >= g.stranger_window_ns + 1000000000ull) {
        stranger_flush(now, true);
        g.stranger_window_ns = now;
        g.stranger_lines = 0;
    }
    if (g.stranger_lines >= STRANGER_LINES) {
        g.stranger_quiet++;
        return;
    }
    g.stranger_lines++;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    msg("%s", line);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: weftrun [options] -n N program [args...] [: -n M program2 [args...]]...\n"
            "Start N ranks of program on this machine, or on several hosts, connected\n"
            "by weft's bootstrap.\n"
            "\n"
            "  -n, -np, --np N   number of ranks (default 1)\n"
            "  --hosts LIST      run on these hosts: host[:slots],... (see below)\n"
            "  --hostfile FILE   hosts from FILE, one per line: 'host', 'host:K' or\n"
            "                    'host slots=K'; '#' starts a comment\n"
            "  --map-by slot     fill each host up to its slots, in order (default)\n"
            "  --map-by node     one rank per host in turn (round-robin)\n"
            "  --map-by OBJ[:pe=N]  within a host, ranks round-robin over the objects\n"
            "                    (hwthread, core, l3cache, numa, package), N cpus each\n"
            "  --bind-to OBJ     bind each rank to the objects that hold its cpus:\n"
            "                    none, hwthread, core, l3cache, numa, package\n"
            "                    (:overload-allowed: too many ranks leave them unbound)\n"
            "  --report-bindings print each rank's binding (bitmap and picture)\n"
            "  --rsh CMD         start ranks on other hosts with 'CMD host env VAR=value...\n"
            "                    program args' (default $WEFT_RSH, else '%s';\n"
            "                    e.g. --rsh \"ip netns exec\"); CMD is split at blanks\n"
            "  --boot-addr IP    address (IP or IP:PORT) where ranks on other hosts reach\n"
            "                    weftrun (default: the address that routes to the first\n"
            "                    remote host, else this machine's first non-loopback one)\n"
            "  -x VAR            forward VAR from weftrun's environment to the ranks\n"
            "  -x VAR=value      set VAR=value in the ranks' environment\n"
            "  --timeout SEC     end the job (exit %d) if it runs longer than SEC seconds\n"
            "  --keep-going      when a rank fails, let the others run to their end\n"
            "  --tag-output      prefix each line of output with [rank]\n"
            "  -h, --help        show this help\n"
            "  --version         show the version\n"
            "\n"
            "Each rank finds WEFT_RANK, WEFT_SIZE, WEFT_JOBID and WEFT_BOOT_ADDR in its\n"
            "environment. weftrun exits 0 if every rank exits 0, 77 if ranks exit 77\n"
            "(skip) and the rest 0, otherwise with the first failing rank's status\n"
            "(128+signal if it was killed).\n"
            "\n"
            "SIGINT, SIGTERM, SIGHUP and SIGQUIT end the job; SIGUSR1, SIGUSR2 and\n"
            "SIGALRM are forwarded to the ranks on this machine and the job goes on.\n"
            "\n"
            "Hosts: a host named localhost or like this machine runs its ranks here;\n"
            "others through --rsh. Slots default to 1; when the ranks outnumber the\n"
            "slots, placement starts again at the first host. The ranks of a host get\n"
            "WEFT_NODE_ID=<host> (ranks share memory only within a host). Remote ranks\n"
            "get the WEFT_* variables set here and those of -x on their command line,\n"
            "reach weftrun over TCP, proving the job secret, and die when the job ends\n"
            "(their lifeline to weftrun). With an ssh-like --rsh (ssh, rsh) the secret\n"
            "goes on the remote shell's stdin; otherwise in its environment.\n"
            "\n"
            "Placement: by default the cores a host's ranks may use are shared out among\n"
            "them, as many each as fit, none across a package, and each rank is bound to\n"
            "its own; with more ranks than cores, ranks are not bound. --map-by OBJ\n"
            "binds to OBJ unless --bind-to says otherwise; pe=N binds to the N cores.\n"
            "Ranks on other hosts are placed there by 'weftrun --placed' (weftrun must\n"
            "be at the same path on those hosts, unless --bind-to none).\n",
            DEFAULT_RSH, EXIT_TIMEOUT);
}

/* Set the job's exit code once: the first cause of failure is the one reported.
 * A failed job must not look skipped, whatever code the failure carried. */
static void set_exit_code(int code)
{
    if (!g.exit_code_set) {
        g.exit_code_set = true;
        g.exit_code = code == EXIT_SKIP ? 1 : code;
    }
}

static struct when when_now(int prio)
{
    return (struct when){.batch = g.batch, .prio = prio, .seq = ++g.seq};
}

static bool when_before(struct when a, struct when b)
{
    if (a.batch != b.batch)
        return a.batch < b.batch;
    if (a.prio != b.prio)
        return a.prio < b.prio;
    return a.seq < b.seq;
}

/* A failure that is not a rank's death (an abort, a full store, descriptors
 * running out): it ends the job once reported. The earliest one counts. */
static void propose_cause(bool abort, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void propose_cause(bool abort, int code, const char *fmt, ...)
{
    if (g.ending || g.cause_pending)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g.cause_line, sizeof g.cause_line, fmt, ap);
    va_end(ap);
    g.cause_pending = true;
    g.cause_at = when_now(WHEN_OTHER);
    g.cause_ns = now_ns();
    g.cause_is_abort = abort;
    g.cause_code = code;
    g.npending++;
}

/* When rank r's death (its store connection closing, its exit) happened: while
 * an abort waits, before it, unless r is one of those that aborted. */
static struct when death_when(int r)
{
    struct when w = when_now(WHEN_DEATH);
    if (g.cause_pending && g.cause_is_abort && !g.ranks[r].abort_waiting &&
        g.cause_at.batch < w.batch)
        w.batch = g.cause_at.batch;
    return w;
}

/* How messages name a rank: "rank 2 (pid 1234)" on this machine alone, with the
 * host when the job has hosts: "rank 2 on host h1 (pid 1234)", the pid being
 * that of the remote shell for a remote rank. */
static const char *rank_name(int r, char *buf, size_t len)
{
    const struct rank *rk = &g.ranks[r];
    if (rk->host < 0)
        snprintf(buf, len, "rank %d (pid %ld)", r, (long)rk->pid);
    else
        snprintf(buf, len, "rank %d on host %s (pid %ld)", r, g.hosts[rk->host].name,
                 (long)rk->pid);
    return buf;
}

static void conn_send(struct conn *c, uint16_t type, const void *b1, size_t l1, const void *b2,
                      size_t l2);
static void send_status(struct conn *c, uint16_t type, int status);

static void signal_ranks(int sig)
{
    for (int r = 0; r < g.nranks; r++)
        if (g.ranks[r].running)
            kill(g.ranks[r].pid, sig);
}

/* Tell every remote rank that the job ends: killing its remote shell may not
 * reach it (ssh), its lifeline does. */
static void end_lifelines(void)
{
    for (int r = 0; r < g.nranks; r++)
        if (g.ranks[r].lifeline)
            conn_send(g.ranks[r].lifeline, WEFT_BOOT_MSG_END, NULL, 0, NULL, 0);
}

/* Once the job ends, what else failed is its end, not news. */
static void drop_pending(void)
{
    for (int r = 0; r < g.nranks; r++) {
        struct rank *rk = &g.ranks[r];
        rk->report_pending = false;
        if (rk->abort_waiting) {
            rk->abort_waiting = false;
            if (rk->conn)
                send_status(rk->conn, WEFT_BOOT_MSG_ABORT_REPLY, WEFT_OK);
        }
    }
    g.cause_pending = false;
    g.npending = 0;
}

static void end_job(void)
{
    if (g.ending)
        return;
    g.ending = true;
    drop_pending();
    end_lifelines();
    signal_ranks(SIGTERM);
    g.kill_at_ns = now_ns() + KILL_GRACE_NS;
}

/* ---- the store ---- */

static uint64_t hash_key(const uint8_t *key, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ key[i]) * 1099511628211ull;
    return h;
}

static struct entry *store_find(const uint8_t *key, size_t klen, uint64_t h)
{
    for (struct entry *e = g.buckets[h % g.nbuckets]; e; e = e->next)
        if (strlen(e->key) == klen && !memcmp(e->key, key, klen))
            return e;
    return NULL;
}

static int store_grow(void)
{
    size_t n = g.nbuckets * 2;
    struct entry **b = calloc(n, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < g.nbuckets; i++) {
        struct entry *e = g.buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            size_t j = hash_key((uint8_t *)e->key, strlen(e->key)) % n;
            e->next = b[j];
            b[j] = e;
        }
    }
    free(g.buckets);
    g.buckets = b;
    g.nbuckets = n;
    return 0;
}

/* Record a put, to be committed by the next fence. -1 if out of memory or over
 * the store's bound. */
static int store_put(const uint8_t *key, size_t klen, const uint8_t *value, size_t vlen)
{
    if (g.store_bytes + klen + vlen > STORE_BYTES_MAX)
        return -1;
    uint64_t h = hash_key(key, klen);
    struct entry *e = store_find(key, klen, h);
    if (!e) {
        if (g.nentries >= g.nbuckets && store_grow() != 0)
            return -1;
        e = calloc(1, sizeof *e);
        if (!e || !(e->key = malloc(klen + 1))) {
            free(e);
            return -1;
        }
        memcpy(e->key, key, klen);
        e->key[klen] = 0;
        size_t i = h % g.nbuckets;
        e->next = g.buckets[i];
        g.buckets[i] = e;
        g.nentries++;
        g.store_bytes += klen;
    }
    uint8_t *v = malloc(vlen ? vlen : 1);
    if (!v)
        return -1;
    if (vlen)
        memcpy(v, value, vlen);
    if (e->is_pending) {
        g.store_bytes -= e->pending_len;
        free(e->pending_value);
    } else {
        e->is_pending = true;
        e->next_pending = g.pending;
        g.pending = e;
    }
    e->pending_value = v;
    e->pending_len = vlen;
    g.store_bytes += vlen;
    return 0;
}

static void store_commit(void)
{
    struct entry *e = g.pending, *next;
    for (; e; e = next) {
        next = e->next_pending;
        if (e->has_value) {
            g.store_bytes -= e->len;
            free(e->value);
        }
        e->value = e->pending_value;
        e->len = e->pending_len;
        e->has_value = true;
        e->pending_value = NULL;
        e->is_pending = false;
        e->next_pending = NULL;
    }
    g.pending = NULL;
}

static void store_free(void)
{
    for (size_t i = 0; i < g.nbuckets; i++) {
        struct entry *e = g.buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            free(e->key);
            free(e->value);
            free(e->pending_value);
            free(e);
        }
    }
    free(g.buckets);
    g.buckets = NULL;
}

/* ---- connections ---- */

static void conn_update_events(struct conn *c)
{
    uint32_t ev = 0;
    c->reading = !c->close_after_flush && c->tx_len - c->tx_off < TX_HIGH_WATER;
    if (c->reading)
        ev |= EPOLLIN;
    if (c->tx_len > c->tx_off)
        ev |= EPOLLOUT;
    if (ev != c->events) {
        struct epoll_event e = {.events = ev, .data.ptr = c};
        epoll_ctl(g.epfd, EPOLL_CTL_MOD, c->fd, &e);
        c->events = ev;
    }
}

static void rank_lost(int r);
static void conn_process(struct conn *c);

static void conn_close(struct conn *c)
{
    if (c->dead)
        return;
    c->dead = true;
    if (c->prev)
        c->prev->next = c->next;
    else
        g.conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    epoll_ctl(g.epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    /* Freed after the current batch of events, which may still name it. */
    c->next_dead = g.dead_conns;
    g.dead_conns = c;
    if (c->kind == CONN_HANDSHAKE && c->tcp)
        g.nhandshakes--;
    if (c->kind == CONN_LIFELINE && g.ranks[c->rank].lifeline == c)
        g.ranks[c->rank].lifeline = NULL; /* the rank's exit status tells the rest */
    if (c->kind == CONN_STORE && g.ranks[c->rank].conn == c) {
        g.ranks[c->rank].conn = NULL;
        rank_lost(c->rank);
    }
}

static void conn_flush(struct conn *c)
{
    while (c->tx_off < c->tx_len) {
        ssize_t n = send(c->fd, c->tx + c->tx_off, c->tx_len - c->tx_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            conn_close(c); /* the rank is gone; its exit status will tell why */
            return;
        }
        c->tx_off += (size_t)n;
    }
    if (c->tx_off == c->tx_len) {
        c->tx_off = c->tx_len = 0;
        if (c->close_after_flush) {
            conn_close(c);
            return;
        }
    }
    bool was_reading = c->reading;
    conn_update_events(c);
    /* Messages that arrived while we stopped reading are already buffered, and
     * epoll will not report them again. */
    if (!was_reading && c->reading && c->rx_len >= WEFT_BOOT_PROTO_HDR_SIZE)
        conn_process(c);
}

/* Queue a message; it leaves when the socket takes it. */
static void conn_send(struct conn *c, uint16_t type, const void *b1, size_t l1, const void *b2,
                      size_t l2)
{
    if (c->dead)
        return;
    size_t need = c->tx_len + WEFT_BOOT_PROTO_HDR_SIZE + l1 + l2;
    if (need > c->tx_cap) {
        if (c->tx_off > 0) { /* reclaim what was already sent */
            memmove(c->tx, c->tx + c->tx_off, c->tx_len - c->tx_off);
            c->tx_len -= c->tx_off;
            c->tx_off = 0;
            need = c->tx_len + WEFT_BOOT_PROTO_HDR_SIZE + l1 + l2;
        }
        if (need > c->tx_cap) {
            size_t cap = c->tx_cap ? c->tx_cap : 4096;
            while (cap < need)
                cap *= 2;
            uint8_t *t = realloc(c->tx, cap);
            if (!t) {
                msg("out of memory for a reply to rank %d; closing its connection", c->rank);
                conn_close(c);
                return;
            }
            c->tx = t;
            c->tx_cap = cap;
        }
    }
    weft__boot_hdr_encode(c->tx + c->tx_len, type, (uint32_t)(l1 + l2));
    c->tx_len += WEFT_BOOT_PROTO_HDR_SIZE;
    if (l1)
        memcpy(c->tx + c->tx_len, b1, l1);
    c->tx_len += l1;
    if (l2)
        memcpy(c->tx + c->tx_len, b2, l2);
    c->tx_len += l2;
    conn_flush(c);
}

static void send_status(struct conn *c, uint16_t type, int status)
{
    uint8_t b[4];
    weft__boot_put32(b, (uint32_t)status);
    conn_send(c, type, b, 4, NULL, 0);
}

/* A rank counts as present at a fence when it is in it or left the job cleanly.
 * A fence completes when every rank is present; it fails (WEFT_EPEERDEAD) as soon
 * as a rank has failed, because its keys will never come. */
static void check_fence(void)
{
    if (g.in_fence == 0)
        return;
    bool failed = false, complete = true;
    for (int r = 0; r < g.nranks; r++) {
        struct rank *rk = &g.ranks[r];
        failed |= rk->failed;
        if (!rk->in_fence && !rk->departed)
            complete = false;
    }
    if (!failed && !complete)
        return;
    if (!failed)
        store_commit();
    for (int r = 0; r < g.nranks; r++) {
        struct rank *rk = &g.ranks[r];
        if (!rk->in_fence)
            continue;
        rk->in_fence = false;
        if (rk->conn)
            send_status(rk->conn, WEFT_BOOT_MSG_FENCE_REPLY, failed ? WEFT_EPEERDEAD : WEFT_OK);
    }
    g.in_fence = 0;
}

static void rank_failed(int r)
{
    g.ranks[r].failed = true;
    if (g.ranks[r].in_fence) {
        g.ranks[r].in_fence = false;
        g.in_fence--;
    }
    check_fence();
}

/* The rank's connection closed. Without a BYE, whether it left cleanly or died is
 * decided by its exit status; until then it simply is not present. */
static void exit_verdict(int r);

static void rank_lost(int r)
{
    struct rank *rk = &g.ranks[r];
    if (rk->in_fence) {
        rk->in_fence = false;
        g.in_fence--;
    }
    if (rk->said_bye) {
        rk->departed = true;
    } else if (rk->running && !rk->lost) {
        rk->lost = true;
        rk->lost_at = death_when(r);
        rk->lost_ns = now_ns();
    }
    check_fence();
    if (rk->exit_waiting)
        exit_verdict(r);
}

static void protocol_error(struct conn *c, const char *why)
{
    if (c->rank >= 0)
        msg("rank %d sent a malformed message (%s); closing its connection", c->rank, why);
    else
        stranger_msg("a client (%s) sent a malformed message (%s); closing its connection", c->peer,
                     why);
    conn_close(c);
}

/* HELLO (the rank's store connection) or LIFELINE. The job id, the proof and the
 * rank are all checked before the connection counts for anything. */
static void handle_hello(struct conn *c, uint16_t type, const uint8_t *p, uint32_t len)
{
    weft_boot_hello_t hello;
    const char *bad = weft__boot_hello_decode(p, len, &hello);
    if (bad)
        return protocol_error(c, bad);
    uint32_t rank = hello.rank;
    uint32_t size = hello.size;
    bool lifeline = type == WEFT_BOOT_MSG_LIFELINE;
    int status = WEFT_OK;
    const char *why = NULL;
    uint8_t secret[WEFT_BOOT_SECRET_LEN];
    for (int i = 0; i < WEFT_BOOT_SECRET_LEN; i++) {
        unsigned v;
        sscanf(g.secret + 2 * i, "%2x", &v);
        secret[i] = (uint8_t)v;
    }
    if ((why = weft__boot_hello_verify(&hello, g.jobid, secret, c->nonce)) != NULL) {
        status = WEFT_EPERM;
    } else if (size != (uint32_t)g.nranks || rank >= size) {
        status = WEFT_ERANK;
        why = "wrong rank or job size";
    } else if (!g.ranks[rank].running ||
               (lifeline ? g.ranks[rank].lifeline != NULL : g.ranks[rank].conn != NULL)) {
        status = WEFT_ESTATE;
        why = "that rank is already connected or not running";
    }
    memset(secret, 0, sizeof secret);
    if (c->tcp)
        g.nhandshakes--;
    if (status != WEFT_OK) {
        /* While the job ends, ranks that were just ended may still say HELLO: not news. */
        if (!(g.ending && status == WEFT_ESTATE))
            stranger_msg("refused a %sconnection from %s claiming rank %" PRIu32 " of %" PRIu32
                         ": %s",
                         lifeline ? "lifeline " : "", c->peer, rank, size, why);
        c->kind = CONN_REFUSED; /* no longer counted as waiting */
        c->close_after_flush = true;
        send_status(c, WEFT_BOOT_MSG_HELLO_REPLY, status);
        return;
    }
    struct rank *rk = &g.ranks[rank];
    c->rank = (int)rank;
    if (lifeline) {
        c->kind = CONN_LIFELINE;
        rk->lifeline = c;
        send_status(c, WEFT_BOOT_MSG_HELLO_REPLY, WEFT_OK);
        /* A rank that connects while the job already ends must hear it too. */
        if (g.ending)
            conn_send(c, WEFT_BOOT_MSG_END, NULL, 0, NULL, 0);
        return;
    }
    c->kind = CONN_STORE;
    rk->conn = c;
    rk->connected_once = true;
    /* A rank may leave (BYE) and join again with a new context. */
    rk->said_bye = false;
    rk->departed = false;
    rk->lost = false;
    send_status(c, WEFT_BOOT_MSG_HELLO_REPLY, WEFT_OK);
}

static void handle_put(struct conn *c, const uint8_t *p, uint32_t len)
{
    weft_boot_put_t put;
    const char *bad = weft__boot_put_decode(p, len, &put);
    if (bad)
        return protocol_error(c, bad);
    if (store_put(put.key, put.key_len, put.value, put.value_len) != 0)
        propose_cause(false, 1, "the key-value store is full or out of memory");
}

static void handle_get(struct conn *c, const uint8_t *p, uint32_t len)
{
    const uint8_t *key;
    uint16_t klen;
    const char *bad = weft__boot_get_decode(p, len, &key, &klen);
    if (bad)
        return protocol_error(c, bad);
    struct entry *e = store_find(key, klen, hash_key(key, klen));
    uint8_t head[8];
    if (!e || !e->has_value) {
        weft__boot_put32(head, (uint32_t)WEFT_ENOTFOUND);
        weft__boot_put32(head + 4, 0);
        conn_send(c, WEFT_BOOT_MSG_GET_REPLY, head, 8, NULL, 0);
        return;
    }
    weft__boot_put32(head, WEFT_OK);
    weft__boot_put32(head + 4, (uint32_t)e->len);
    conn_send(c, WEFT_BOOT_MSG_GET_REPLY, head, 8, e->value, e->len);
}

static void handle_abort(struct conn *c, const uint8_t *p, uint32_t len)
{
    weft_boot_abort_t ab;
    const char *bad = weft__boot_abort_decode(p, len, &ab);
    if (bad)
        return protocol_error(c, bad);
    int32_t code = ab.code;
    uint16_t mlen = ab.msg_len;
    /* Print the message as text even if it is not: it goes to a terminal. */
    char text[WEFT_BOOT_ABORT_MSG_MAX + 1];
    for (uint16_t i = 0; i < mlen; i++) {
        uint8_t ch = ab.msg[i];
        text[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    text[mlen] = 0;
    /* An exit code is 8 bits; an abort must not look like success. */
    int exit_code = (code > 0 && code < 256) ? code : 1;
    if (g.ending) {
        send_status(c, WEFT_BOOT_MSG_ABORT_REPLY, WEFT_OK);
        return;
    }
    char name[256];
    propose_cause(true, exit_code, "%s aborted the job with code %d: %s",
                  rank_name(c->rank, name, sizeof name), (int)code, text);
    g.ranks[c->rank].abort_waiting = true; /* replied to when the job ends */
}

static void handle_msg(struct conn *c, const weft_boot_hdr_t *h, const uint8_t *body)
{
    if (c->kind == CONN_HANDSHAKE) {
        if (h->type != WEFT_BOOT_MSG_HELLO && h->type != WEFT_BOOT_MSG_LIFELINE)
            return protocol_error(c, "first message is not HELLO");
        return handle_hello(c, h->type, body, h->body_len);
    }
    if (c->kind == CONN_REFUSED) /* only its reply is left to flush */
        return protocol_error(c, "message after a refused HELLO");
    if (c->kind == CONN_LIFELINE)
        return protocol_error(c, "message on a lifeline");
    struct rank *rk = &g.ranks[c->rank];
    if (rk->in_fence)
        return protocol_error(c, "message while waiting in a fence");
    switch (h->type) {
    case WEFT_BOOT_MSG_PUT:
        return handle_put(c, body, h->body_len);
    case WEFT_BOOT_MSG_FENCE:
        rk->in_fence = true;
        g.in_fence++;
        return check_fence();
    case WEFT_BOOT_MSG_GET:
        return handle_get(c, body, h->body_len);
    case WEFT_BOOT_MSG_ABORT:
        return handle_abort(c, body, h->body_len);
    case WEFT_BOOT_MSG_BYE:
        rk->said_bye = true;
        c->close_after_flush = true;
        return conn_flush(c);
    default:
        return protocol_error(c, "unexpected message type");
    }
}

/* Handle every complete message in the receive buffer, as long as we are
 * reading (replies may pile up and stop us). */
static void conn_process(struct conn *c)
{
    if (c->processing)
        return; /* the outer call goes on with the buffer */
    c->processing = true;
    size_t off = 0;
    while (!c->dead && c->reading) {
        weft_boot_hdr_t h;
        long total = weft__boot_msg_frame(c->rx + off, c->rx_len - off, &h);
        if (total < 0) {
            protocol_error(c, "bad header");
            break;
        }
        if (total == 0)
            break;
        handle_msg(c, &h, c->rx + off + WEFT_BOOT_PROTO_HDR_SIZE);
        off += (size_t)total;
    }
    c->processing = false;
    if (c->dead)
        return;
    memmove(c->rx, c->rx + off, c->rx_len - off);
    c->rx_len -= off;
}

static void conn_readable(struct conn *c)
{
    /* Room for the largest message: a complete one is never stuck for lack of space. */
    const size_t cap = WEFT_BOOT_PROTO_HDR_SIZE + WEFT_BOOT_PROTO_BODY_MAX;
    while (!c->dead && c->reading) {
        ssize_t n = recv(c->fd, c->rx + c->rx_len, cap - c->rx_len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                conn_close(c);
            return;
        }
        if (n == 0) { /* closed, possibly in the middle of a message: drop the rest */
            conn_close(c);
            return;
        }
        c->rx_len += (size_t)n;
        conn_process(c);
    }
}

/* About how many descriptors the job needs here: one connection per rank, a
 * lifeline per remote rank, two pipes per rank with --tag-output, and a few of
 * weftrun's own. For messages only. */
static long fds_needed(void)
{
    long n = 16;
    for (int r = 0; r < g.nranks; r++)
        n += 1 + (g.ranks[r].remote ? 1 : 0) + (g.tag_output ? 2 : 0);
    return n;
}

/* What failed (doing: "accepting rank connections") and why, saying which limit
 * and how to raise it when descriptors ran out: "Too many open files" alone does
 * not say whose. */
static const char *fd_hint(int err, const char *doing, char *buf, size_t len)
{
    struct rlimit rl;
    if (err == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0)
        snprintf(buf, len,
                 "out of file descriptors %s (ulimit -n is %llu; %d ranks need about %ld); "
                 "raise it with ulimit -n",
                 doing, (unsigned long long)rl.rlim_cur, g.nranks, fds_needed());
    else if (err == ENFILE)
        snprintf(buf, len, "the system is out of file descriptors %s (%s)", doing, strerror(err));
    else
        snprintf(buf, len, "%s: %s", doing, strerror(err));
    return buf;
}

/* Stop watching the listening sockets. Without a descriptor to accept into, a
 * pending connection keeps the socket readable, and the loop would spin on it
 * while the ranks are ended; nothing more can join a job that ends anyway. */
static void stop_listening(void)
{
    if (g.listen_fd >= 0)
        epoll_ctl(g.epfd, EPOLL_CTL_DEL, g.listen_fd, NULL);
    if (g.tcp_listen_fd >= 0)
        epoll_ctl(g.epfd, EPOLL_CTL_DEL, g.tcp_listen_fd, NULL);
}

/* Close the oldest TCP connection waiting for its HELLO, from the address of
 * like (from any address if like is NULL). False if none waits. */
static bool drop_oldest_handshake(const struct conn *like, const char *why)
{
    struct conn *oldest = NULL;
    for (struct conn *c = g.conns; c; c = c->next) {
        if (c->kind != CONN_HANDSHAKE || !c->tcp)
            continue;
        if (like && (c->family != like->family || memcmp(c->addr, like->addr, sizeof c->addr)))
            continue;
        if (!oldest || c->handshake_deadline_ns < oldest->handshake_deadline_ns)
            oldest = c;
    }
    if (!oldest)
        return false;
    stranger_msg("closed a connection from %s that had not said HELLO: %s", oldest->peer, why);
    g.handshakes_dropped++;
    conn_close(oldest);
    return true;
}

/* Make room for c, a new TCP connection (not yet counted or listed). */
static void bound_handshakes(const struct conn *c)
{
    int same = 0;
    for (struct conn *o = g.conns; o; o = o->next)
        if (o->kind == CONN_HANDSHAKE && o->tcp && o->family == c->family &&
            !memcmp(o->addr, c->addr, sizeof o->addr))
            same++;
    if (same >= g.handshake_per_addr)
        drop_oldest_handshake(c, "too many connections from its address are waiting");
    if (g.nhandshakes >= g.handshake_max)
        drop_oldest_handshake(NULL, "too many connections are waiting");
}

static void accept_conns(int listen_fd, bool tcp)
{
    for (int accepted = 0; !tcp || accepted < ACCEPT_BATCH; accepted++) {
        struct sockaddr_storage ss;
        socklen_t sslen = sizeof ss;
        int fd = accept4(listen_fd, (struct sockaddr *)&ss, &sslen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            /* Strangers' connections must not be what keeps ranks out. */
            if ((errno == EMFILE || errno == ENFILE) &&
                drop_oldest_handshake(NULL, "out of file descriptors"))
                continue;
            if (errno == EMFILE || errno == ENFILE) {
                /* A rank cannot join, so the job cannot run: fail it now, once. */
                char why[256];
                fd_hint(errno, "accepting rank connections", why, sizeof why);
                stop_listening();
                propose_cause(false, 1, "%s", why);
                return;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                msg("accept: %s", strerror(errno));
            return;
        }
        char peer[64] = "unix";
        int family = 0;
        uint8_t addr[16] = {0};
        if (tcp) {
            char ip[INET6_ADDRSTRLEN] = "?";
            int port = 0;
            if (ss.ss_family == AF_INET) {
                struct sockaddr_in *a = (struct sockaddr_in *)&ss;
                inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
                port = ntohs(a->sin_port);
                memcpy(addr, &a->sin_addr, 4);
            } else if (ss.ss_family == AF_INET6) {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
                inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
                port = ntohs(a->sin6_port);
                memcpy(addr, &a->sin6_addr, 16);
            }
            family = ss.ss_family;
            snprintf(peer, sizeof peer, "tcp %s port %d", ip, port);
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        struct conn *c = calloc(1, sizeof *c);
        if (c)
            c->rx = malloc(WEFT_BOOT_PROTO_HDR_SIZE + WEFT_BOOT_PROTO_BODY_MAX);
        if (!c || !c->rx ||
            getrandom(c->nonce, sizeof c->nonce, GRND_NONBLOCK) != (ssize_t)sizeof c->nonce) {
            if (c)
                free(c->rx);
            free(c);
            close(fd);
            msg("cannot accept a connection: out of memory or randomness");
            continue;
        }
        c->src.kind = SRC_CONN;
        c->fd = fd;
        c->kind = CONN_HANDSHAKE;
        c->rank = -1;
        c->events = EPOLLIN;
        c->reading = true;
        /* Our own ranks on the Unix socket wait as long as they need. */
        c->handshake_deadline_ns = tcp ? now_ns() + HANDSHAKE_NS : UINT64_MAX;
        c->tcp = tcp;
        c->family = family;
        memcpy(c->addr, addr, sizeof addr);
        memcpy(c->peer, peer, sizeof peer);
        if (tcp)
            bound_handshakes(c);
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(g.epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
            close(fd);
            free(c->rx);
            free(c);
            continue;
        }
        c->next = g.conns;
        if (g.conns)
            g.conns->prev = c;
        g.conns = c;
        if (tcp)
            g.nhandshakes++;
        /* The nonce goes first: the client's HELLO must prove the secret over it. */
        conn_send(c, WEFT_BOOT_MSG_CHALLENGE, c->nonce, sizeof c->nonce, NULL, 0);
    }
}

/* Close connections that did not say HELLO in time; returns the next deadline
 * (UINT64_MAX if none is waiting). */
static uint64_t expire_handshakes(uint64_t now)
{
    uint64_t next = UINT64_MAX;
    if (g.nhandshakes == 0)
        return next;
    for (struct conn *c = g.conns, *n; c; c = n) {
        n = c->next;
        if (c->kind != CONN_HANDSHAKE || !c->tcp)
            continue;
        if (now >= c->handshake_deadline_ns) {
            stranger_msg("closed a connection from %s: no HELLO within %llu s", c->peer,
                         (unsigned long long)(HANDSHAKE_NS / 1000000000ull));
            g.handshakes_dropped++;
            conn_close(c);
        } else if (c->handshake_deadline_ns < next) {
            next = c->handshake_deadline_ns;
        }
    }
    return next;
}

static void free_dead_conns(void)
{
    while (g.dead_conns) {
        struct conn *c = g.dead_conns;
        g.dead_conns = c->next_dead;
        free(c->rx);
        free(c->tx);
        free(c);
    }
}

/* ---- rank output (--tag-output) ---- */

static void write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* our own output is gone; nothing better to do */
        p += n;
        len -= (size_t)n;
    }
}

static void emit_line(struct output *o, const char *line, size_t len)
{
    char buf[LINE_MAX_TAGGED + 32];
    int n = snprintf(buf, sizeof buf, "[%d] ", o->rank);
    memcpy(buf + n, line, len);
    buf[n + len] = '\n';
    write_all(o->dest_fd, buf, (size_t)n + len + 1);
}

static void output_close(struct output *o)
{
    if (o->fd < 0)
        return;
    if (o->len)
        emit_line(o, o->buf, o->len);
    o->len = 0;
    epoll_ctl(g.epfd, EPOLL_CTL_DEL, o->fd, NULL);
    close(o->fd);
    o->fd = -1;
}

static void output_readable(struct output *o)
{
    for (;;) {
        ssize_t n = read(o->fd, o->buf + o->len, sizeof o->buf - o->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            output_close(o);
            return;
        }
        o->len += (size_t)n;
        size_t start = 0;
        for (size_t i = 0; i < o->len; i++) {
            if (o->buf[i] == '\n') {
                emit_line(o, o->buf + start, i - start);
                start = i + 1;
            }
        }
        if (start == 0 && o->len == sizeof o->buf) { /* a very long line: cut it */
            emit_line(o, o->buf, o->len);
            start = o->len;
        }
        memmove(o->buf, o->buf + start, o->len - start);
        o->len -= start;
    }
}

static bool outputs_open(void)
{
    for (int r = 0; r < g.nranks; r++)
        if (g.ranks[r].out[0].fd >= 0 || g.ranks[r].out[1].fd >= 0)
            return true;
    return false;
}

/* ---- ranks ---- */

static const char *describe_exit(int wstatus, char *buf, size_t len, int *code)
{
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        snprintf(buf, len, "was killed by signal %d (%s)", sig, strsignal(sig));
        *code = 128 + sig;
    } else {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(wstatus));
        *code = WEXITSTATUS(wstatus);
    }
    return buf;
}

static void exit_verdict(int r);
static void reap_children(void);

static void rank_exited(int r, int wstatus)
{
    struct rank *rk = &g.ranks[r];
    rk->running = false;
    rk->wstatus = wstatus;
    rk->exited_at = death_when(r);
    g.running--;
    /* A BYE sent just before the exit may still be unread: read it first. */
    if (rk->conn)
        conn_readable(rk->conn);
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && rk->conn && !rk->said_bye) {
        /* Still open: over TCP the rest (a BYE) may arrive after the remote
         * shell's exit status. Judged when it closes, or after HOLD_NS. */
        rk->exit_waiting = true;
        rk->exit_wait_until_ns = now_ns() + HOLD_NS;
        g.nexit_waiting++;
        return;
    }
    exit_verdict(r);
}

/* Whether rank r, which exited, failed; if so, its report waits in
 * decide_failures for anything earlier that is not known yet. */
static void exit_verdict(int r)
{
    struct rank *rk = &g.ranks[r];
    if (rk->exit_waiting) {
        rk->exit_waiting = false;
        g.nexit_waiting--;
    }
    int st = rk->wstatus;
    rk->unfinalized = WIFEXITED(st) && WEXITSTATUS(st) == 0 && rk->connected_once && !rk->said_bye;
    bool ok =
        WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == EXIT_SKIP) && !rk->unfinalized;
    if (ok) {
        rk->departed = true;
        check_fence();
        return;
    }
    if (!g.ending) {
        /* Ranks we are already terminating are not news. */
        rk->report_pending = true;
        rk->failed_at = rk->lost ? rk->lost_at : rk->exited_at;
        g.npending++;
    }
    rank_failed(r);
}

static void report_rank(int r)
{
    struct rank *rk = &g.ranks[r];
    char what[128], name[256], note[1024] = "";
    int code;
    describe_exit(rk->wstatus, what, sizeof what, &code);
    if (rk->unfinalized) {
        snprintf(what, sizeof what, "exited with status 0 without finalizing");
        code = 1;
    }
    if (rk->remote && WIFEXITED(rk->wstatus) && WEXITSTATUS(rk->wstatus) == SSH_EXIT_FAILURE)
        snprintf(note, sizeof note,
                 " (255: the remote shell '%s' could not reach the host, lost it, or the rank "
                 "died of a signal there)",
                 g.rsh_argv[0]);
    else if (rk->remote && !rk->connected_once && g.handshakes_dropped > 0)
        /* Not the remote shell's fault, most likely. */
        snprintf(note, sizeof note,
                 " and never connected to weftrun: weftrun closed %ld connection(s) on its TCP "
                 "port that had not said HELLO (too many waiting, or silent for %llu s), maybe "
                 "this rank's; strangers on the network?",
                 g.handshakes_dropped, (unsigned long long)(HANDSHAKE_NS / 1000000000ull));
    else if (rk->remote && !rk->connected_once)
        snprintf(note, sizeof note,
                 " and never connected to weftrun (check that '%.256s %.256s' starts it and "
                 "that the host reaches %.127s)",
                 g.rsh, g.hosts[rk->host].name, g.tcp_addr + 4);
    msg("%s %s%s; %s", rank_name(r, name, sizeof name), what, note,
        g.keep_going ? "waiting for the other ranks (--keep-going)" : "ending the job");
    set_exit_code(code);
    if (!g.keep_going)
        end_job();
}

/* Report the pending failures in the order they happened, each once nothing
 * that may have happened before it is still unknown: a rank whose store
 * connection closed earlier (lost) and whose exit status has not come, or a
 * rank that exited 0 with its connection still open. batch_full: epoll may hold
 * more of the same moment, so look again first. final: the loop is over; report
 * what there is. */
static void decide_failures(bool batch_full, bool final)
{
    if (g.npending == 0)
        return;
    if (batch_full && !final) {
        g.poll_again = true;
        return;
    }
    reap_children();
    uint64_t now = now_ns();
    g.hold_until_ns = UINT64_MAX;
    while (g.npending > 0) {
        int first = -1;
        struct when at = g.cause_at;
        for (int r = 0; r < g.nranks; r++) {
            struct rank *rk = &g.ranks[r];
            if (!rk->report_pending)
                continue;
            if ((first < 0 && !g.cause_pending) || when_before(rk->failed_at, at)) {
                first = r;
                at = rk->failed_at;
            }
        }
        if (first < 0 && g.cause_is_abort && !final && now < g.cause_ns + ABORT_GRACE_NS) {
            g.hold_until_ns = g.cause_ns + ABORT_GRACE_NS;
            return;
        }
        for (int r = 0; r < g.nranks && !final; r++) {
            struct rank *rk = &g.ranks[r];
            bool lost = rk->running && rk->lost && now < rk->lost_ns + HOLD_NS &&
                        when_before(rk->lost_at, at);
            bool exit_unknown = rk->exit_waiting && when_before(rk->exited_at, at);
            if (lost || exit_unknown) {
                uint64_t until = lost ? rk->lost_ns + HOLD_NS : rk->exit_wait_until_ns;
                g.hold_until_ns = WEFT_MIN_U64(g.hold_until_ns, until);
                return;
            }
        }
        g.npending--;
        if (first >= 0) {
            g.ranks[first].report_pending = false;
            report_rank(first);
        } else {
            g.cause_pending = false;
            msg("%s; ending the job", g.cause_line);
            set_exit_code(g.cause_code);
            end_job();
        }
    }
}

/* Ranks that exited 0 and whose store connection did not close in time are
 * judged on what arrived. */
static uint64_t expire_exit_waits(uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (int r = 0; g.nexit_waiting > 0 && r < g.nranks; r++) {
        if (!g.ranks[r].exit_waiting)
            continue;
        if (now >= g.ranks[r].exit_wait_until_ns)
            exit_verdict(r);
        else
            next = WEFT_MIN_U64(next, g.ranks[r].exit_wait_until_ns);
    }
    return next;
}

static void reap_children(void)
{
    for (;;) {
        int wstatus;
        pid_t pid = waitpid(-1, &wstatus, WNOHANG);
        if (pid <= 0)
            return;
        for (int r = 0; r < g.nranks; r++) {
            if (g.ranks[r].pid == pid && g.ranks[r].running) {
                rank_exited(r, wstatus);
                break;
            }
        }
    }
}

/* SIGUSR1, SIGUSR2, SIGALRM: for the application, not for weftrun (see the
 * header comment). */
static void forward_signal(int sig)
{
    bool remote = false;
    for (int r = 0; r < g.nranks; r++) {
        if (!g.ranks[r].running)
            continue;
        if (g.ranks[r].remote)
            remote = true;
        else
            kill(g.ranks[r].pid, sig);
    }
    if (remote && !g.warned_remote_signal) {
        g.warned_remote_signal = true;
        msg("forwarded signal %d (%s) to the ranks on this machine; ranks on other hosts do "
            "not get it",
            sig, strsignal(sig));
    }
}

static void handle_signals(void)
{
    struct signalfd_siginfo si;
    while (read(g.sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD)
            continue; /* reaped below, whichever child it was */
        if (sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGALRM) {
            forward_signal(sig);
            continue;
        }
        if (!g.ending) {
            msg("received signal %d (%s); ending the job", sig, strsignal(sig));
            set_exit_code(128 + sig);
            g.ending = true;
            drop_pending();
            end_lifelines();
            /* Forward the signal itself, so ranks see what the user sent. */
            signal_ranks(sig);
            g.kill_at_ns = now_ns() + KILL_GRACE_NS;
        } else if (!g.killed_hard) {
            /* A second interrupt: the user does not want to wait. */
            signal_ranks(SIGKILL);
            g.killed_hard = true;
        }
    }
    reap_children();
}

static void free_argv(char **argv)
{
    for (char **a = argv; *a; a++)
        free(*a);
    free(argv);
}

/* s quoted for a POSIX shell: in single quotes, each ' written as '\''. */
static char *shell_quote(const char *s)
{
    size_t n = 3;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 4 : 1;
    char *q = malloc(n), *o = q;
    if (!q)
        return NULL;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = 0;
    return q;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
    char *out;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&out, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : out;
}

extern char **environ;

/* The variables a remote rank gets on its command line: the job description,
 * every WEFT_* parameter set here (so WEFT_LOG=debug weftrun ... reaches remote
 * ranks as it reaches local ones), then -x. NULL-terminated, or NULL. */
static char **remote_env(int r, int *count)
{
    int cap = 8 + g.nset_env;
    for (char **e = environ; *e; e++)
        cap++;
    char **v = calloc((size_t)cap + 1, sizeof *v);
    int n = 0;
    if (!v)
        return NULL;
    const struct host *h = &g.hosts[g.ranks[r].host];
    v[n++] = str_printf("WEFT_RANK=%d", r);
    v[n++] = str_printf("WEFT_SIZE=%d", g.nranks);
    v[n++] = str_printf("WEFT_JOBID=%s", g.jobid);
    v[n++] = str_printf("WEFT_BOOT_ADDR=%s", g.tcp_addr);
    v[n++] = str_printf("WEFT_NODE_ID=%s", h->name);
    static const char *const ours[] = {"WEFT_RANK=",      "WEFT_SIZE=",       "WEFT_JOBID=",
                                       "WEFT_BOOT_ADDR=", "WEFT_JOB_SECRET=", "WEFT_NODE_ID="};
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "WEFT_", 5) != 0)
            continue;
        bool skip = false;
        for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
            skip |= !strncmp(*e, ours[i], strlen(ours[i]));
        if (!skip)
            v[n++] = strdup(*e);
    }
    for (int i = 0; i < g.nset_env; i++) {
        const char *x = g.set_env[i];
        if (strchr(x, '='))
            v[n++] = strdup(x);
        else if (getenv(x))
            v[n++] = str_printf("%s=%s", x, getenv(x));
    }
    for (int i = 0; i < n; i++) {
        if (!v[i]) {
            for (int j = 0; j < n; j++)
                free(v[j]);
            free(v);
            return NULL;
        }
    }
    *count = n;
    return v;
}

/* The command line of a remote rank: CMD host env VAR=value... prog args. When
 * the remote side is a shell (ssh), the words after the host are quoted for it,
 * and a small sh -c reads the secret from stdin first. */
static char **remote_argv(int r)
{
    int nenv = 0;
    char **env = remote_env(r, &nenv);
    if (!env)
        return NULL;
    int nprog = 0;
    while (g.ranks[r].prog[nprog])
        nprog++;
    int nwords = 1 + nenv + 7 + nprog; /* env VARS... [weftrun --placed ...] prog args */
    char **argv = calloc((size_t)(g.rsh_argc + 1 + nwords + 2), sizeof *argv);
    if (!argv)
        goto err;
    int n = 0;
    for (int i = 0; i < g.rsh_argc; i++)
        if (!(argv[n++] = strdup(g.rsh_argv[i])))
            goto err;
    if (!(argv[n++] = strdup(g.hosts[g.ranks[r].host].name)))
        goto err;
    const char **words = calloc((size_t)nwords, sizeof *words);
    if (!words)
        goto err;
    int w = 0;
    words[w++] = "env";
    for (int i = 0; i < nenv; i++)
        words[w++] = env[i];
    char index[16], count[16];
    if (placing()) {
        /* Placed on its host, with that host's topology (weftrun_place.c). */
        snprintf(index, sizeof index, "%d", g.ranks[r].host_index);
        snprintf(count, sizeof count, "%d", g.ranks[r].host_count);
        words[w++] = g.self_exe;
        words[w++] = "--placed";
        words[w++] = index;
        words[w++] = count;
        words[w++] = g.place.map_by ? g.place.map_by : "-";
        words[w++] = g.place.bind_to ? g.place.bind_to : "-";
        words[w++] = g.place.report ? "1" : "0";
    }
    for (int i = 0; i < nprog; i++)
        words[w++] = g.ranks[r].prog[i];
    if (!g.rsh_shell) {
        for (int i = 0; i < w; i++)
            if (!(argv[n++] = strdup(words[i])))
                goto err_words;
    } else {
        /* One string for the remote shell: whatever the user's login shell, it
         * only has to understand single quotes; sh does the rest. */
        size_t len = 0;
        char **q = calloc((size_t)w, sizeof *q);
        if (!q)
            goto err_words;
        bool ok = true;
        for (int i = 0; i < w; i++) {
            ok &= (q[i] = shell_quote(words[i])) != NULL;
            len += (q[i] ? strlen(q[i]) : 0) + 1;
        }
        static const char pre[] = "sh -c 'IFS= read -r WEFT_JOB_SECRET && export "
                                  "WEFT_JOB_SECRET && exec \"$0\" \"$@\"'";
        char *cmd = ok ? malloc(sizeof pre + len + 1) : NULL;
        if (cmd) {
            char *o = cmd + sprintf(cmd, "%s", pre);
            for (int i = 0; i < w; i++)
                o += sprintf(o, " %s", q[i]);
        }
        for (int i = 0; i < w; i++)
            free(q[i]);
        free(q);
        if (!(argv[n++] = cmd))
            goto err_words;
    }
    free(words);
    free_argv(env);
    return argv;

err_words:
    free(words);
err:
    free_argv(env);
    if (argv)
        free_argv(argv);
    return NULL;
}

/* Fork and exec one rank. Returns 0, or -1 if the program cannot be run (then
 * the error is printed and the job is ending). */
static int spawn_rank(int r)
{
    struct rank *rk = &g.ranks[r];
    int outp[2][2] = {{-1, -1}, {-1, -1}};
    int errp[2] = {-1, -1};
    int secretp[2] = {-1, -1};
    char **argv = rk->prog;
    if (rk->remote) {
        if (!(argv = remote_argv(r)))
            goto err_sys;
        /* Through a remote shell the secret travels on the rank's stdin, never on
         * a command line that every user of both machines can read. */
        if (g.rsh_shell) {
            char line[sizeof g.secret + 1];
            int n = snprintf(line, sizeof line, "%s\n", g.secret);
            if (pipe2(secretp, O_CLOEXEC) != 0 || write(secretp[1], line, (size_t)n) != n)
                goto err_sys;
            close(secretp[1]);
            secretp[1] = -1;
        }
    }
    if (pipe2(errp, O_CLOEXEC) != 0)
        goto err_sys;
    if (g.tag_output) {
        for (int i = 0; i < 2; i++) {
            if (pipe2(outp[i], O_CLOEXEC) != 0)
                goto err_sys;
        }
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        goto err_sys;
    if (pid == 0) {
        /* Child. Only async-signal-safe work would be required in a threaded
         * parent; weftrun has one thread, so setenv and friends are fine. */
        int err;
        close(errp[0]);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(EXIT_CANNOT_EXEC); /* weftrun already died: do not run orphaned */
        sigprocmask(SIG_SETMASK, &g.old_mask, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (g.tag_output) {
            if (dup2(outp[0][1], 1) < 0 || dup2(outp[1][1], 2) < 0)
                goto child_err;
        }
        if (secretp[0] >= 0) {
            if (dup2(secretp[0], 0) < 0)
                goto child_err;
        } else if (r != 0) { /* stdin goes to rank 0 only, like mpirun */
            int fd = open("/dev/null", O_RDONLY);
            if (fd >= 0 && fd != 0) {
                dup2(fd, 0);
                close(fd);
            }
        }
        if (rk->remote) {
            /* Everything else is on the command line (remote_argv); the secret
             * reaches a remote shell on stdin and any other command (ip netns
             * exec) through the environment it passes on. */
            setenv("WEFT_JOB_SECRET", g.secret, 1);
            execvp(argv[0], argv);
            goto child_err;
        }
        char num[32];
        snprintf(num, sizeof num, "%d", r);
        setenv("WEFT_RANK", num, 1);
        snprintf(num, sizeof num, "%d", g.nranks);
        setenv("WEFT_SIZE", num, 1);
        setenv("WEFT_JOBID", g.jobid, 1);
        setenv("WEFT_JOB_SECRET", g.secret, 1);
        char addr[sizeof g.sock_path + 8];
        snprintf(addr, sizeof addr, "unix:%s", g.sock_path);
        setenv("WEFT_BOOT_ADDR", addr, 1);
        if (rk->host >= 0) /* before -x, which may override it */
            setenv("WEFT_NODE_ID", g.hosts[rk->host].name, 1);
        snprintf(num, sizeof num, "%d", rk->app);
        setenv("WEFT_APPNUM", num, 1);
        for (int i = 0; i < g.nset_env; i++) {
            /* "-x VAR" alone forwards VAR, which the child inherits anyway. */
            if (strchr(g.set_env[i], '=') && putenv(g.set_env[i]) != 0)
                goto child_err;
        }
        /* Bound before exec: the program's first touch of memory and its
         * first threads are already where they will run. */
        if (rk->bound && sched_setaffinity(0, sizeof rk->cpus, &rk->cpus) != 0)
            goto child_err;
        execvp(rk->prog[0], rk->prog);
    child_err:
        err = errno;
        ssize_t w = write(errp[1], &err, sizeof err);
        (void)w;
        _exit(EXIT_CANNOT_EXEC);
    }

    close(errp[1]);
    if (secretp[0] >= 0)
        close(secretp[0]);
    if (argv != rk->prog)
        free_argv(argv);
    rk->pid = pid;
    rk->running = true;
    g.running++;
    g.started++;
    if (g.tag_output) {
        for (int i = 0; i < 2; i++) {
            close(outp[i][1]);
            struct output *o = &rk->out[i];
            o->src.kind = SRC_OUTPUT;
            o->fd = outp[i][0];
            o->rank = r;
            o->dest_fd = i + 1;
            fcntl(o->fd, F_SETFL, O_NONBLOCK);
            struct epoll_event e = {.events = EPOLLIN, .data.ptr = o};
            epoll_ctl(g.epfd, EPOLL_CTL_ADD, o->fd, &e);
        }
    }
    /* The pipe closes at exec (success) or carries errno (failure). */
    int child_errno = 0;
    ssize_t n;
    do
        n = read(errp[0], &child_errno, sizeof child_errno);
    while (n < 0 && errno == EINTR);
    close(errp[0]);
    if (n == (ssize_t)sizeof child_errno) {
        msg("cannot run '%s': %s", rk->remote ? g.rsh_argv[0] : rk->prog[0], strerror(child_errno));
        set_exit_code(EXIT_CANNOT_EXEC);
        end_job();
        return -1;
    }
    return 0;

err_sys:;
    char why[256], doing[64];
    snprintf(doing, sizeof doing, "starting rank %d", r);
    msg("%s", fd_hint(errno, doing, why, sizeof why));
    for (int i = 0; i < 2; i++)
        if (secretp[i] >= 0)
            close(secretp[i]);
    if (argv && argv != rk->prog)
        free_argv(argv);
    if (errp[0] >= 0) {
        close(errp[0]);
        close(errp[1]);
    }
    for (int i = 0; i < 2; i++) {
        if (outp[i][0] >= 0) {
            close(outp[i][0]);
            close(outp[i][1]);
        }
    }
    set_exit_code(1);
    end_job();
    return -1;
}

/* ---- setup and cleanup ---- */

static int make_jobid(void)
{
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
        rnd = (uint32_t)now_ns() ^ ((uint32_t)getpid() << 16);
    snprintf(g.jobid, sizeof g.jobid, "w%ld-%08" PRIx32, (long)getpid(), rnd);
    /* The secret must not be guessable: no fallback to the clock. */
    uint8_t key[WEFT_BOOT_SECRET_LEN];
    if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key)
        return -1;
    for (size_t i = 0; i < sizeof key; i++)
        snprintf(g.secret + 2 * i, 3, "%02x", key[i]);
    return 0;
}

static int setup_socket(void)
{
    /* A private directory (0700) holds the socket, so only our user can connect,
     * and the name cannot be taken over by someone else. */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) + sizeof "/weftrun-XXXXXX" > sizeof g.dir)
        tmp = "/tmp";
    snprintf(g.dir, sizeof g.dir, "%s/weftrun-XXXXXX", tmp);
    if (!mkdtemp(g.dir)) {
        if (strcmp(tmp, "/tmp") != 0) {
            snprintf(g.dir, sizeof g.dir, "/tmp/weftrun-XXXXXX");
            if (mkdtemp(g.dir))
                goto made;
        }
        msg("cannot create a temporary directory in %s: %s", tmp, strerror(errno));
        g.dir[0] = 0;
        return -1;
    }
made:
    snprintf(g.sock_path, sizeof g.sock_path, "%s/boot.sock", g.dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, g.sock_path, strlen(g.sock_path) + 1);
    g.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (g.listen_fd < 0 || bind(g.listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(g.listen_fd, g.nranks < SOMAXCONN ? SOMAXCONN : g.nranks) != 0) {
        msg("cannot listen on %s: %s", g.sock_path, strerror(errno));
        return -1;
    }
    return 0;
}

static void cleanup_files(void)
{
    if (g.listen_fd >= 0)
        close(g.listen_fd);
    if (g.tcp_listen_fd >= 0)
        close(g.tcp_listen_fd);
    if (g.dir[0]) {
        unlink(g.sock_path);
        if (rmdir(g.dir) != 0)
            msg("cannot remove %s: %s", g.dir, strerror(errno));
    }
    /* The shm driver unlinks its segments once mapped; a rank that died early
     * may not have. Its segments are named /dev/shm/weft-<jobid>-... */
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    char prefix[WEFT_BOOT_JOBID_MAX + 8];
    int plen = snprintf(prefix, sizeof prefix, "weft-%s", g.jobid);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, prefix, (size_t)plen) != 0)
            continue;
        /* Our job id is a prefix of no other (fixed-width random part), but check
         * that the name does not continue the id, to be sure. */
        char next = de->d_name[plen];
        if (next == 0 || next == '-' || next == '.' || next == '_')
            unlinkat(dirfd(d), de->d_name, 0);
    }
    closedir(d);
}

static bool valid_env_name(const char *s, size_t len)
{
    if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    }
    return true;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "weftrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return -1;
}

/* ---- hosts ---- */

/* A host name is what the remote shell gets as its first argument, so it must not
 * look like an option ("-oProxyCommand=...") or hold blanks or shell syntax. */
static bool valid_host_name(const char *s, size_t len)
{
    if (len == 0 || len > 255 || s[0] == '-' || s[0] == '.')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_' || c == '@'))
            return false;
    }
    return true;
}

/* Add host "name" (len bytes) with slots (0: not given). -1 with *err set. */
static int add_host(const char *name, size_t len, int slots, const char **err)
{
    if (!valid_host_name(name, len)) {
        *err = "bad host name (letters, digits, '.', '-', '_', '@'; not starting with '-')";
        return -1;
    }
    if (g.nhosts >= MAX_HOSTS) {
        *err = "too many hosts";
        return -1;
    }
    struct host *h = realloc(g.hosts, (size_t)(g.nhosts + 1) * sizeof *h);
    if (!h) {
        *err = "out of memory";
        return -1;
    }
    g.hosts = h;
    h = &g.hosts[g.nhosts];
    if (!(h->name = strndup(name, len))) {
        *err = "out of memory";
        return -1;
    }
    h->slots = slots;
    h->local = false;
    g.nhosts++;
    return 0;
}

/* A slot count: 1 to MAX_RANKS. -1 if malformed. */
static int parse_slots(const char *s, size_t len)
{
    if (len == 0 || len > 6)
        return -1;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= 1 && v <= MAX_RANKS ? v : -1;
}

/* "host" or "host:K" (len bytes). */
static int add_host_spec(const char *spec, size_t len, const char **err)
{
    const char *colon = memchr(spec, ':', len);
    int slots = 0;
    if (colon) {
        slots = parse_slots(colon + 1, len - (size_t)(colon + 1 - spec));
        if (slots < 0) {
            *err = "bad slot count after ':' (1 or more)";
            return -1;
        }
        len = (size_t)(colon - spec);
    }
    return add_host(spec, len, slots, err);
}

/* --hosts a,b:2,c */
static int parse_hosts(const char *list)
{
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *err;
        if (add_host_spec(p, len, &err) != 0) {
            fprintf(stderr, "weftrun: --hosts '%s': '%.*s': %s\n", list, (int)len, p, err);
            return -1;
        }
        if (!e)
            return 0;
        p = e + 1;
    }
}

/* --hostfile: one host per line, "host", "host:K" or "host slots=K"; blank lines
 * and everything after '#' are ignored. Errors name the file and the line. */
static int parse_hostfile(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "weftrun: --hostfile %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        const char *err = NULL;
        size_t l = strlen(line);
        if (l == sizeof line - 1 && line[l - 1] != '\n') {
            err = "line too long";
            goto bad;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *save, *tok = strtok_r(line, " \t\r\n", &save);
        if (!tok)
            continue;
        if (add_host_spec(tok, strlen(tok), &err) != 0)
            goto bad;
        for (char *t; (t = strtok_r(NULL, " \t\r\n", &save));) {
            int slots;
            if (!strncmp(t, "slots=", 6) && (slots = parse_slots(t + 6, strlen(t + 6))) > 0) {
                g.hosts[g.nhosts - 1].slots = slots;
            } else {
                err = !strncmp(t, "slots=", 6) ? "bad slots= value (1 or more)"
                                               : "unknown field (expected slots=K)";
                fprintf(stderr, "weftrun: hostfile %s line %d: '%s': %s\n", path, lineno, t, err);
                rc = -1;
                break;
            }
        }
        continue;
    bad:
        fprintf(stderr, "weftrun: hostfile %s line %d: %s\n", path, lineno, err);
        rc = -1;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "weftrun: --hostfile %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && g.nhosts == 0) {
        fprintf(stderr, "weftrun: hostfile %s names no host\n", path);
        rc = -1;
    }
    return rc;
}

/* Which hosts are this machine, and which host each rank runs on. */
static void place_ranks(void)
{
    char self[256] = "";
    gethostname(self, sizeof self - 1);
    size_t short_len = strcspn(self, ".");
    for (int h = 0; h < g.nhosts; h++) {
        const char *n = g.hosts[h].name;
        g.hosts[h].local = !strcmp(n, "localhost") || !strcmp(n, "127.0.0.1") ||
                           (self[0] && !strcmp(n, self)) ||
                           (self[0] && strlen(n) == short_len && !strncmp(n, self, short_len));
    }
    int total = 0;
    for (int h = 0; h < g.nhosts; h++)
        total += g.hosts[h].slots ? g.hosts[h].slots : 1;
    for (int r = 0; r < g.nranks; r++) {
        int h = 0;
        if (g.map_by_node) {
            h = r % g.nhosts;
        } else {
            /* By slot: fill the hosts in order; past the last slot, again. */
            int q = r % total;
            while (q >= (g.hosts[h].slots ? g.hosts[h].slots : 1)) {
                q -= g.hosts[h].slots ? g.hosts[h].slots : 1;
                h++;
            }
        }
        g.ranks[r].host = h;
        g.ranks[r].remote = !g.hosts[h].local;
    }
}

/* ---- TCP listener for ranks on other hosts ---- */

/* The local address that routes to host (a UDP connect sends nothing). */
static int route_addr(const char *host, struct sockaddr_storage *ss, socklen_t *len)
{
    const char *at = strrchr(host, '@'); /* user@host for ssh */
    if (at)
        host = at + 1;
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai;
    if (getaddrinfo(host, "9", &hints, &ai) != 0)
        return -1;
    int rc = -1;
    for (struct addrinfo *a = ai; a && rc != 0; a = a->ai_next) {
        int fd = socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        *len = sizeof *ss;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
            getsockname(fd, (struct sockaddr *)ss, len) == 0)
            rc = 0;
        close(fd);
    }
    freeaddrinfo(ai);
    return rc;
}

/* This machine's first IPv4 address that is up and not loopback. */
static int first_if_addr(struct sockaddr_storage *ss, socklen_t *len)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return -1;
    int rc = -1;
    for (struct ifaddrs *i = ifs; i && rc != 0; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK))
            continue;
        memcpy(ss, i->ifa_addr, sizeof(struct sockaddr_in));
        *len = sizeof(struct sockaddr_in);
        rc = 0;
    }
    freeifaddrs(ifs);
    return rc;
}

/* --boot-addr: "IP", "IP:PORT", "[IPv6]" or "[IPv6]:PORT". */
static int parse_boot_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
    char host[INET6_ADDRSTRLEN + 2];
    const char *port = NULL;
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        if (!e || (size_t)(e - s - 1) >= sizeof host || (e[1] && e[1] != ':'))
            return -1;
        memcpy(host, s + 1, (size_t)(e - s - 1));
        host[e - s - 1] = 0;
        port = e[1] ? e + 2 : NULL;
    } else {
        const char *c = strchr(s, ':');
        if (c && strchr(c + 1, ':'))
            c = NULL; /* a bare IPv6 address */
        size_t l = c ? (size_t)(c - s) : strlen(s);
        if (l >= sizeof host)
            return -1;
        memcpy(host, s, l);
        host[l] = 0;
        port = c ? c + 1 : NULL;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV},
                    *ai;
    if (getaddrinfo(host, port ? port : "0", &hints, &ai) != 0)
        return -1;
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

static int setup_tcp(void)
{
    struct sockaddr_storage ss = {0};
    socklen_t len = 0;
    const char *first_remote = NULL;
    for (int r = 0; r < g.nranks && !first_remote; r++)
        if (g.ranks[r].remote)
            first_remote = g.hosts[g.ranks[r].host].name;
    if (g.boot_addr_opt) {
        if (parse_boot_addr(g.boot_addr_opt, &ss, &len) != 0) {
            msg("--boot-addr '%s' is not a numeric IP or IP:PORT", g.boot_addr_opt);
            return -1;
        }
    } else if (route_addr(first_remote, &ss, &len) == 0) {
        /* The route's source address: the one the remote host can answer. */
        if (ss.ss_family == AF_INET)
            ((struct sockaddr_in *)&ss)->sin_port = 0;
        else
            ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
    } else if (first_if_addr(&ss, &len) == 0) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof ip);
        msg("cannot resolve host '%s'; ranks on other hosts will reach weftrun at %s "
            "(choose with --boot-addr)",
            first_remote, ip);
    } else {
        msg("cannot choose an address where ranks on other hosts reach weftrun; use "
            "--boot-addr");
        return -1;
    }
    g.tcp_listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (g.tcp_listen_fd >= 0)
        setsockopt(g.tcp_listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    void *a = ss.ss_family == AF_INET ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
                                      : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
    inet_ntop(ss.ss_family, a, ip, sizeof ip);
    if (g.tcp_listen_fd < 0 || bind(g.tcp_listen_fd, (struct sockaddr *)&ss, len) != 0 ||
        listen(g.tcp_listen_fd, g.nranks < SOMAXCONN ? SOMAXCONN : g.nranks) != 0 ||
        getsockname(g.tcp_listen_fd, (struct sockaddr *)&ss, &len) != 0) {
        msg("cannot listen on TCP address %s: %s", ip, strerror(errno));
        return -1;
    }
    port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                         : ((struct sockaddr_in6 *)&ss)->sin6_port);
    snprintf(g.tcp_addr, sizeof g.tcp_addr, ss.ss_family == AF_INET ? "tcp:%s:%d" : "tcp:[%s]:%d",
             ip, port);
    g.tcp_listen_src.kind = SRC_LISTEN_TCP;
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &g.tcp_listen_src};
    epoll_ctl(g.epfd, EPOLL_CTL_ADD, g.tcp_listen_fd, &e);
    return 0;
}

/* --rsh CMD: split at blanks; an ssh-like command gets quoted words (its remote
 * side is a shell) and the secret on stdin. */
static int setup_rsh(void)
{
    /* A job that MPI_Comm_spawn starts inherits its parents' --rsh. */
    const char *cmd = g.rsh ? g.rsh : getenv("WEFT_RSH") ? getenv("WEFT_RSH") : DEFAULT_RSH;
    g.rsh = cmd;
    g.rsh_argv = calloc(strlen(cmd) / 2 + 2, sizeof *g.rsh_argv);
    char *copy = strdup(cmd);
    if (!g.rsh_argv || !copy) {
        free(copy);
        return -1;
    }
    char *save;
    for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
        g.rsh_argv[g.rsh_argc++] = t; /* copy is kept for the job's life */
    if (g.rsh_argc == 0) {
        free(copy);
        free(g.rsh_argv);
        g.rsh_argv = NULL;
        fprintf(stderr, "weftrun: --rsh is empty\n");
        return -1;
    }
    const char *base = strrchr(g.rsh_argv[0], '/');
    base = base ? base + 1 : g.rsh_argv[0];
    g.rsh_shell = !strcmp(base, "ssh") || !strcmp(base, "rsh");
    return 0;
}

/* Parse the command line; 1 if weftrun should exit 0 (help, version), -1 on a
 * usage error, 0 to run. */
/* A whole decimal number in [lo, hi]: 0, or -1. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The apps of the command line from argv[i]: 'prog args [: -n K prog2 args
 * [: ...]]', the first app's ranks from -n. Each ':' becomes the end of the
 * app before it. */
static int parse_apps(int argc, char **argv, int i)
{
    g.apps[0].argv = argv + i;
    g.apps[0].n = g.nranks;
    g.napps = 1;
    long total = g.nranks;
    for (; i < argc; i++) {
        if (strcmp(argv[i], ":") != 0)
            continue;
        argv[i] = NULL;
        if (g.napps == MAX_APPS)
            return usage_error("%s", "at most 64 programs separated by ':'");
        long n;
        if (i + 2 >= argc || (strcmp(argv[i + 1], "-n") && strcmp(argv[i + 1], "-np")))
            return usage_error("%s", "after ':', give '-n N program [args...]'");
        if (parse_long(argv[i + 2], 1, MAX_RANKS, &n) != 0)
            return usage_error("bad number of ranks '%s'", argv[i + 2]);
        total += n;
        if (total > MAX_RANKS)
            return usage_error("%s", "more than 65536 ranks in all");
        if (i + 3 >= argc || !strcmp(argv[i + 3], ":"))
            return usage_error("%s", "no program after ':'");
        g.apps[g.napps].argv = argv + i + 3;
        g.apps[g.napps].n = (int)n;
        g.napps++;
        i += 2;
    }
    g.nranks = (int)total;
    return 0;
}

static int parse_args(int argc, char **argv)
{
    int i = 1;
    g.set_env = calloc((size_t)argc, sizeof *g.set_env);
    if (!g.set_env)
        return -1;
    for (; i < argc; i++) {
        char *a = argv[i];
        char *val = NULL;
        if (a[0] != '-')
            break;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        /* --opt=value is accepted for the long options. */
        char name[32];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq) {
            size_t l = (size_t)(eq - a);
            if (l >= sizeof name)
                return usage_error("unknown option '%s'", a);
            memcpy(name, a, l);
            name[l] = 0;
            val = (char *)eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        bool takes_value = !strcmp(name, "-n") || !strcmp(name, "-np") || !strcmp(name, "--np") ||
                           !strcmp(name, "-x") || !strcmp(name, "--timeout") ||
                           !strcmp(name, "--hosts") || !strcmp(name, "--hostfile") ||
                           !strcmp(name, "--rsh") || !strcmp(name, "--boot-addr") ||
                           !strcmp(name, "--map-by") || !strcmp(name, "--bind-to") ||
                           !strcmp(name, "--lifeline-fd");
        if (takes_value && !val) {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs a value", a);
            val = argv[++i];
        } else if (!takes_value && val) {
            return usage_error("option '%s' takes no value", a);
        }
        if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(name, "--version")) {
            printf("weftrun (weft) %s\n", WEFT_VERSION);
            return 1;
        } else if (!strcmp(name, "-n") || !strcmp(name, "-np") || !strcmp(name, "--np")) {
            long n;
            if (parse_long(val, 1, MAX_RANKS, &n) != 0)
                return usage_error("bad number of ranks '%s'", val);
            g.nranks = (int)n;
        } else if (!strcmp(name, "-x")) {
            const char *e = strchr(val, '=');
            size_t l = e ? (size_t)(e - val) : strlen(val);
            if (!valid_env_name(val, l))
                return usage_error("bad variable name in '-x %s'", val);
            if (!e && !getenv(val))
                fprintf(stderr, "weftrun: warning: -x %s: not set here, not forwarded\n", val);
            g.set_env[g.nset_env++] = val;
        } else if (!strcmp(name, "--timeout")) {
            char *end;
            errno = 0;
            double t = strtod(val, &end);
            if (errno || *end || end == val || !(t > 0) || t > 1e7)
                return usage_error("bad timeout '%s' (seconds > 0)", val);
            g.timeout_s = t;
        } else if (!strcmp(name, "--hosts") || !strcmp(name, "--hostfile")) {
            if (g.nhosts > 0)
                return usage_error("%s", "give --hosts or --hostfile once");
            if ((!strcmp(name, "--hosts") ? parse_hosts(val) : parse_hostfile(val)) != 0)
                return usage_error("%s", "bad host list");
        } else if (!strcmp(name, "--rsh")) {
            g.rsh = val;
        } else if (!strcmp(name, "--boot-addr")) {
            g.boot_addr_opt = val;
        } else if (!strcmp(name, "--map-by")) {
            g.place.map_by = val;
        } else if (!strcmp(name, "--bind-to")) {
            g.place.bind_to = val;
        } else if (!strcmp(name, "--report-bindings")) {
            g.place.report = true;
        } else if (!strcmp(name, "--lifeline-fd")) {
            /* Hidden: MPI_Comm_spawn's, the read end of a pipe from the
             * spawning process. */
            long fd;
            if (parse_long(val, 3, INT32_MAX, &fd) != 0)
                return usage_error("bad descriptor '%s'", val);
            g.spawner_fd = (int)fd;
        } else if (!strcmp(name, "--keep-going")) {
            g.keep_going = true;
        } else if (!strcmp(name, "--tag-output")) {
            g.tag_output = true;
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    char err[256];
    if (weft__topo_policy_parse(g.place.map_by, g.place.bind_to, &g.place.policy, &g.map_by_node,
                                err, sizeof err) != 0)
        return usage_error("%s", err);
    if (i >= argc)
        return usage_error("%s", "no program to run");
    g.prog_argv = argv + i;
    return parse_apps(argc, argv, i);
}

/* Ranks need one descriptor each here (two more with --tag-output). */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* The pipe from the process that spawned this job: nothing is ever written
 * on it, so readable means that process is gone (every descriptor of it
 * closed), and the job, which MPI_Comm_spawn made for it, ends. */
static void spawner_event(void)
{
    char c;
    ssize_t r = read(g.spawner_fd, &c, 1);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    epoll_ctl(g.epfd, EPOLL_CTL_DEL, g.spawner_fd, NULL);
    close(g.spawner_fd);
    g.spawner_fd = -1;
    if (g.running == 0 || g.ending)
        return;
    msg("the MPI process that spawned this job is gone; ending the job");
    set_exit_code(EXIT_FAILURE);
    end_job();
}

static void event_loop(void)
{
    struct epoll_event events[64];
    uint64_t drain_until = 0;
    for (;;) {
        uint64_t now = now_ns();
        uint64_t exit_wait = g.nexit_waiting ? expire_exit_waits(now) : UINT64_MAX;
        if (g.running == 0 && g.nexit_waiting == 0) {
            decide_failures(false, true);
            /* Give the output pipes a moment to drain: a grandchild that keeps them
             * open must not keep weftrun alive. */
            if (!outputs_open())
                return;
            if (!drain_until)
                drain_until = now + DRAIN_GRACE_NS;
            else if (now >= drain_until)
                return;
        }
        if (!g.ending && g.deadline_ns && now >= g.deadline_ns) {
            propose_cause(false, EXIT_TIMEOUT, "the job ran longer than --timeout %g s",
                          g.timeout_s);
            g.deadline_ns = 0; /* proposed once; the report may wait (decide_failures) */
            decide_failures(false, false);
        }
        if (g.ending && !g.killed_hard && now >= g.kill_at_ns) {
            signal_ranks(SIGKILL);
            g.killed_hard = true;
        }

        uint64_t wake = WEFT_MIN_U64(expire_handshakes(now), exit_wait);
        wake = WEFT_MIN_U64(wake, stranger_flush(now, false));
        if (g.npending > 0)
            wake = WEFT_MIN_U64(wake, g.hold_until_ns);
        if (g.poll_again) {
            g.poll_again = false;
            wake = now;
        }
        if (!g.ending && g.deadline_ns && g.deadline_ns < wake)
            wake = g.deadline_ns;
        if (g.ending && !g.killed_hard && g.kill_at_ns < wake)
            wake = g.kill_at_ns;
        if (drain_until && drain_until < wake)
            wake = drain_until;
        int timeout_ms = -1;
        if (wake != UINT64_MAX)
            timeout_ms =
                wake <= now ? 0 : (int)WEFT_MIN_U64((wake - now + 999999) / 1000000, 3600000);

        int n = epoll_wait(g.epfd, events, 64, timeout_ms);
        g.batch++;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            msg("epoll_wait: %s", strerror(errno));
            set_exit_code(1);
            end_job();
            continue;
        }
        for (int i = 0; i < n; i++) {
            struct source *s = events[i].data.ptr;
            uint32_t ev = events[i].events;
            switch (s->kind) {
            case SRC_SIGNAL:
                handle_signals();
                break;
            case SRC_SPAWNER:
                spawner_event();
                break;
            case SRC_LISTEN:
                accept_conns(g.listen_fd, false);
                break;
            case SRC_LISTEN_TCP:
                accept_conns(g.tcp_listen_fd, true);
                break;
            case SRC_CONN: {
                struct conn *c = (struct conn *)s;
                if (!c->dead && (ev & EPOLLOUT))
                    conn_flush(c);
                if (!c->dead && (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                    conn_readable(c);
                break;
            }
            case SRC_OUTPUT: {
                struct output *o = (struct output *)s;
                if (o->fd >= 0)
                    output_readable(o);
                break;
            }
            }
        }
        decide_failures(n == (int)(sizeof events / sizeof events[0]), false);
        free_dead_conns();
    }
}

/* Each rank's index among the ranks of its host; the ranks of this machine
 * mapped, checked and reported before any starts. 0, or -1 (said). */
static int place_all(void)
{
    int *count = calloc((size_t)g.nhosts + 1, sizeof *count);
    if (!count) {
        msg("out of memory");
        return -1;
    }
    /* Every rank forked here shares this machine, whatever host name put it
     * here: they are counted together (slot -1). */
    for (int r = 0; r < g.nranks; r++) {
        int h = g.ranks[r].remote ? g.ranks[r].host : -1;
        g.ranks[r].host_index = count[h + 1]++;
    }
    for (int r = 0; r < g.nranks; r++)
        g.ranks[r].host_count = count[(g.ranks[r].remote ? g.ranks[r].host : -1) + 1];
    int nlocal = count[0];
    free(count);
    if (!placing() || nlocal == 0)
        return 0;
    cpu_set_t *sets = calloc((size_t)nlocal, sizeof *sets);
    bool *bound = calloc((size_t)nlocal, sizeof *bound);
    char err[512];
    int rc = -1;
    if (!sets || !bound) {
        msg("out of memory");
        goto out;
    }
    if (weftrun_place_host(&g.place, nlocal, sets, bound, &g.place_applied, err, sizeof err) != 0) {
        msg("cannot place %d ranks on this host: %s", nlocal, err);
        goto out;
    }
    char self[256] = "localhost";
    gethostname(self, sizeof self - 1);
    for (int r = 0; r < g.nranks; r++) {
        struct rank *rk = &g.ranks[r];
        if (rk->remote)
            continue;
        rk->cpus = sets[rk->host_index];
        rk->bound = bound[rk->host_index] && g.place_applied;
        if (g.place.report)
            weftrun_place_report(stderr, rk->host >= 0 ? g.hosts[rk->host].name : self, r,
                                 &rk->cpus, bound[rk->host_index], g.place_applied, &g.place,
                                 nlocal);
    }
    rc = 0;
out:
    weftrun_place_free(&g.place);
    free(sets);
    free(bound);
    return rc;
}

/* What the ranks' MPI reads for MPI_Comm_spawn, in weftrun's own
 * environment so that local and remote ranks alike get it: where this
 * weftrun is (WEFT_WEFTRUN: a spawned job is started by another), and the
 * universe size (WEFT_UNIVERSE_SIZE: the hosts' slots, or this machine's
 * cpus, and never fewer than the ranks). */
static void export_job_facts(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        setenv("WEFT_WEFTRUN", exe, 1);
    }
    long universe = 0;
    for (int h = 0; h < g.nhosts; h++)
        universe += g.hosts[h].slots ? g.hosts[h].slots : 1;
    if (g.nhosts == 0)
        universe = sysconf(_SC_NPROCESSORS_ONLN);
    if (universe < g.nranks)
        universe = g.nranks;
    char num[32];
    snprintf(num, sizeof num, "%ld", universe);
    setenv("WEFT_UNIVERSE_SIZE", num, 1);
    if (g.rsh)
        setenv("WEFT_RSH", g.rsh, 1); /* for the --hosts of jobs the ranks spawn */
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--placed"))
        return weftrun_placed_main(argc, argv);
    int rc = parse_args(argc, argv);
    if (rc != 0)
        return rc > 0 ? 0 : EXIT_USAGE;

    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    g.ranks = calloc((size_t)g.nranks, sizeof *g.ranks);
    g.nbuckets = 64;
    g.buckets = calloc(g.nbuckets, sizeof *g.buckets);
    if (!g.ranks || !g.buckets) {
        msg("out of memory");
        return 1;
    }
    for (int r = 0, a = 0, first = 0; r < g.nranks; r++) {
        if (r - first == g.apps[a].n)
            first = r, a++;
        g.ranks[r].prog = g.apps[a].argv;
        g.ranks[r].app = a;
        g.ranks[r].out[0].fd = g.ranks[r].out[1].fd = -1;
        g.ranks[r].host = -1;
    }
    bool any_remote = false;
    if (g.nhosts > 0) {
        if (setup_rsh() != 0)
            return EXIT_USAGE;
        place_ranks();
        for (int r = 0; r < g.nranks; r++)
            any_remote |= g.ranks[r].remote;
    }
    export_job_facts();
    if (any_remote && placing()) {
        ssize_t n = readlink("/proc/self/exe", g.self_exe, sizeof g.self_exe - 1);
        if (n <= 0) {
            msg("cannot find weftrun's own path for remote placement: %s", strerror(errno));
            return 1;
        }
        g.self_exe[n] = '\0';
    }
    if (place_all() != 0)
        return EXIT_USAGE;
    /* Room for every remote rank's two connections, on one host and in all. */
    int *per_host = calloc((size_t)(g.nhosts > 0 ? g.nhosts : 1), sizeof *per_host);
    if (!per_host) {
        msg("out of memory");
        return 1;
    }
    int most = 0, nremote = 0;
    for (int r = 0; r < g.nranks; r++) {
        if (!g.ranks[r].remote)
            continue;
        nremote++;
        if (++per_host[g.ranks[r].host] > most)
            most = per_host[g.ranks[r].host];
    }
    free(per_host);
    g.handshake_per_addr = HANDSHAKE_PER_ADDR + 2 * most;
    g.handshake_max = HANDSHAKE_MAX + 2 * nremote;
    if (make_jobid() != 0) {
        msg("cannot draw a job secret: %s", strerror(errno));
        return 1;
    }

    /* Signals arrive through a signalfd, in the event loop, instead of handlers
     * that would have to be async-signal-safe. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGQUIT);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGUSR2);
    sigaddset(&mask, SIGALRM);
    sigprocmask(SIG_BLOCK, &mask, &g.old_mask);
    g.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    g.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (g.sigfd < 0 || g.epfd < 0) {
        msg("cannot set up the event loop: %s", strerror(errno));
        return 1;
    }
    if (setup_socket() != 0 || (any_remote && setup_tcp() != 0)) {
        cleanup_files();
        return 1;
    }
    g.sig_src.kind = SRC_SIGNAL;
    g.listen_src.kind = SRC_LISTEN;
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &g.sig_src};
    epoll_ctl(g.epfd, EPOLL_CTL_ADD, g.sigfd, &e);
    e = (struct epoll_event){.events = EPOLLIN, .data.ptr = &g.listen_src};
    epoll_ctl(g.epfd, EPOLL_CTL_ADD, g.listen_fd, &e);
    if (g.spawner_fd > 0) {
        g.spawner_src.kind = SRC_SPAWNER;
        e = (struct epoll_event){.events = EPOLLIN, .data.ptr = &g.spawner_src};
        if (epoll_ctl(g.epfd, EPOLL_CTL_ADD, g.spawner_fd, &e) != 0) {
            msg("--lifeline-fd %d: %s", g.spawner_fd, strerror(errno));
            cleanup_files();
            return 1;
        }
        fcntl(g.spawner_fd, F_SETFD, FD_CLOEXEC);
    }

    if (g.timeout_s > 0)
        g.deadline_ns = now_ns() + (uint64_t)(g.timeout_s * 1e9);

    /* Ranks stay in weftrun's process group, so Ctrl-C in a terminal reaches them
     * all directly; signals sent to weftrun alone are forwarded. */
    for (int r = 0; r < g.nranks && !g.ending; r++) {
        if (spawn_rank(r) != 0)
            break;
    }

    event_loop();

    for (int r = 0; r < g.nranks; r++) {
        output_close(&g.ranks[r].out[0]);
        output_close(&g.ranks[r].out[1]);
    }
    while (g.conns)
        conn_close(g.conns);
    free_dead_conns();
    stranger_flush(now_ns(), true);
    cleanup_files();
    store_free();

    int code = 0;
    if (g.exit_code_set) {
        code = g.exit_code;
    } else {
        for (int r = 0; r < g.nranks; r++)
            if (WIFEXITED(g.ranks[r].wstatus) && WEXITSTATUS(g.ranks[r].wstatus) == EXIT_SKIP)
                code = EXIT_SKIP;
    }
    free(g.ranks);
    free(g.set_env);
    for (int h = 0; h < g.nhosts; h++)
        free(g.hosts[h].name);
    free(g.hosts);
    if (g.rsh_argv)
        free(g.rsh_argv[0]); /* the copy of --rsh its words point into */
    free(g.rsh_argv);
    return code;
}
