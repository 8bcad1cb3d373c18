/* Small rank programs for test_weftrun.sh, one per launcher behaviour:
 *   info                        print rank, size, job id, boot address; a line on stderr
 *   exit RANK CODE OTHERS       RANK exits CODE; the others exit OTHERS, or sleep if "sleep"
 *   sleep                       print "sleeping rank R pid P", then sleep forever
 *   kill-self RANK              all ranks join a fence, then RANK kills itself (SIGKILL)
 *                               and the others sleep forever
 *   env VAR VALUE [VAR VALUE]   exit 1 unless each VAR is set to VALUE
 *   keep-going                  rank 1 exits 5 at once; the others print "survivor R done"
 *                               after a second and exit 0
 *   fence-dead                  rank 1 is killed; the others' fence must fail (EPEERDEAD)
 *   abort [CODE]                rank 1 asks weftrun to end the job with code CODE (7)
 *   early-exit                  rank 1 exits 0 without fences and without fini: a failure,
 *                               the others' fence fails
 *   fini-early                  rank 1 leaves cleanly (fini) after one fence; the others go on
 *   shm                         leave a file /dev/shm/weft-<jobid>-leftover behind
 *   where                       print "rank R node NODE addr ADDR" (WEFT_NODE_ID, boot address)
 *   boot-sleep                  join the job (a remote rank gets its lifeline), fence, print
 *                               "sleeping rank R pid P", then sleep forever
 *   wait-file FILE              join, print "rank R addr ADDR jobid J", wait until FILE
 *                               exists, fence, and exit 0 (a job that lasts as long as a test
 *                               wants)
 *   peer exit0|kill             rank 1 listens on a Unix socket, the others connect to it
 *                               (their own link, like a transport's); then rank 1 leaves,
 *                               by exit(0) without finalizing or by SIGKILL, and the others,
 *                               seeing their link close, abort the job with code 77 at once
 *   signal NAME                 catch signal NAME (USR1, USR2, ALRM), print "rank R waiting
 *                               for SIGNAME", and once it came "rank R got SIGNAME"; exit 0,
 *                               or 1 if it did not come within 60 s
 *   silent IP:PORT N SRC...     not a rank: open N connections to weftrun's TCP port from
 *                               each local address SRC, say nothing, print "holding K" (K
 *                               connections opened), then hold them until killed
 *   stranger HOST:PORT JOBID    not a rank: connect to weftrun's TCP port as a stranger would
 *                               (garbage, a HELLO with a guessed proof, a half handshake);
 *                               print one line per refusal, then hold the half handshake open
 *                               until killed
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weft/weft.h"
#include "boot/boot.h"
#include "boot/boot_proto.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    (void)sig;
    got_signal = 1;
}

/* Wait for a signal that weftrun forwards: the handler is installed before the
 * line that tells the test to send it. */
static int wait_signal(const char *name, int rank)
{
    int sig = !strcmp(name, "USR1")   ? SIGUSR1
              : !strcmp(name, "USR2") ? SIGUSR2
              : !strcmp(name, "ALRM") ? SIGALRM
                                      : 0;
    if (!sig) {
        fprintf(stderr, "boot_helper: unknown signal %s\n", name);
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    printf("rank %d waiting for SIG%s\n", rank, name);
    for (int i = 0; i < 600 && !got_signal; i++)
        usleep(100000); /* the signal cuts it short */
    if (!got_signal) {
        fprintf(stderr, "boot_helper: rank %d: no SIG%s within 60 s\n", rank, name);
        return 1;
    }
    printf("rank %d got SIG%s\n", rank, name);
    return 0;
}

static int env_rank(void)
{
    const char *r = getenv("WEFT_RANK");
    return r ? atoi(r) : 0;
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

static weft_boot_t *boot_or_die(void)
{
    weft_boot_t *b;
    int rc = weft__boot_init(&b);
    if (rc != WEFT_OK) {
        fprintf(stderr, "boot_helper: init: %s\n", weft_strerror(rc));
        exit(1);
    }
    return b;
}

static int fence_or_die(weft_boot_t *b)
{
    int rc = weft__boot_fence(b);
    if (rc != WEFT_OK) {
        fprintf(stderr, "boot_helper: rank %d: fence: %s\n", weft__boot_rank(b), weft_strerror(rc));
        exit(1);
    }
    return rc;
}

static int tcp_connect(const char *hostport)
{
    char host[128];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host)
        return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = 0;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
        return -1;
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

/* Read until the server closes (at most 10 s): 0 if it did, -1 if it did not. */
static int closed_by_server(int fd)
{
    uint8_t buf[256];
    size_t got = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10000) != 1)
            return -1;
        ssize_t n = recv(fd, buf + got, sizeof buf - got, 0);
        if (n < 0 && errno != ECONNRESET)
            return -1;
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got == sizeof buf)
            return -1;
    }
    return 0;
}

/* Silent strangers from several source addresses (127.0.0.2 and so on are this
 * machine's too): connect, read nothing, send nothing. */
static int silent(const char *hostport, int n, char **srcs, int nsrc)
{
    char host[64];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host)
        return 2;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = 0;
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &to.sin_addr) != 1)
        return 2;
    int held = 0;
    for (int i = 0; i < nsrc; i++) {
        struct sockaddr_in from = {.sin_family = AF_INET};
        if (inet_pton(AF_INET, srcs[i], &from.sin_addr) != 1)
            return 2;
        for (int k = 0; k < n; k++) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            if (fd < 0 || bind(fd, (struct sockaddr *)&from, sizeof from) != 0 ||
                connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
                fprintf(stderr, "silent: from %s: %s\n", srcs[i], strerror(errno));
                if (fd >= 0)
                    close(fd);
                break;
            }
            held++;
        }
    }
    printf("holding %d\n", held);
    for (;;)
        pause();
}

static int stranger(const char *addr, const char *jobid)
{
    /* Garbage: not even a header. */
    int fd = tcp_connect(addr);
    if (fd < 0 || send(fd, "GET / HTTP/1.0\r\n\r\n", 18, MSG_NOSIGNAL) != 18 ||
        closed_by_server(fd) != 0) {
        fprintf(stderr, "stranger: garbage was not refused\n");
        return 1;
    }
    close(fd);
    printf("stranger: garbage refused\n");

    /* The right job id (strangers may learn it) with a proof under a guessed key. */
    uint8_t m[256], challenge[WEFT_BOOT_PROTO_HDR_SIZE + WEFT_BOOT_NONCE_LEN];
    uint8_t key[WEFT_BOOT_SECRET_LEN] = {0}, proof[WEFT_BOOT_PROOF_LEN];
    fd = tcp_connect(addr);
    if (fd < 0 || recv(fd, challenge, sizeof challenge, MSG_WAITALL) != sizeof challenge)
        return 1;
    size_t l = strlen(jobid);
    weft__boot_proof(key, challenge + WEFT_BOOT_PROTO_HDR_SIZE, jobid, l, 0, proof);
    size_t body = weft__boot_hello_encode(m + WEFT_BOOT_PROTO_HDR_SIZE, 0, 2, jobid, l, proof);
    weft__boot_hdr_encode(m, WEFT_BOOT_MSG_HELLO, (uint32_t)body);
    int eperm = WEFT_EPERM;
    if (send(fd, m, WEFT_BOOT_PROTO_HDR_SIZE + body, MSG_NOSIGNAL) < 0) {
        close(fd);
        return 1;
    }
    uint8_t reply[WEFT_BOOT_PROTO_HDR_SIZE + 4];
    weft_boot_hdr_t h;
    if (recv(fd, reply, sizeof reply, MSG_WAITALL) != sizeof reply ||
        weft__boot_hdr_decode(reply, &h) != 0 || h.type != WEFT_BOOT_MSG_HELLO_REPLY ||
        (int32_t)weft__boot_get32(reply + WEFT_BOOT_PROTO_HDR_SIZE) != eperm ||
        recv(fd, reply, 1, 0) != 0) {
        fprintf(stderr, "stranger: a wrong proof was not refused\n");
        return 1;
    }
    close(fd);
    printf("stranger: wrong proof refused\n");

    /* Half a handshake: read the challenge, answer nothing, stay. */
    fd = tcp_connect(addr);
    if (fd < 0 || recv(fd, challenge, sizeof challenge, MSG_WAITALL) != sizeof challenge)
        return 1;
    printf("stranger: holding a half handshake\n");
    for (;;)
        pause();
}

/* A rank leaves; its peers notice on their own link before
 * weftrun has its exit status, and abort. weftrun must name the rank that left. */
static int peer(weft_boot_t *b, const char *how)
{
    int rank = weft__boot_rank(b), size = weft__boot_size(b);
    const char *tmp = getenv("TMPDIR");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/peer-%s", tmp && *tmp ? tmp : "/tmp",
             weft__boot_job_id(b));
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || (rank == 1 &&
                   (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, size) != 0))) {
        perror("boot_helper: peer socket");
        return 1;
    }
    fence_or_die(b); /* rank 1 listens before the others connect */
    if (rank == 1) {
        for (int i = 0; i < size - 1; i++)
            if (accept(fd, NULL, NULL) < 0) {
                perror("boot_helper: accept");
                return 1;
            }
        unlink(sa.sun_path);
        if (!strcmp(how, "kill"))
            raise(SIGKILL);
        _exit(0); /* without weft__boot_fini (nor LeakSanitizer's exit check) */
    }
    char c;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        perror("boot_helper: connect");
        return 1;
    }
    while (read(fd, &c, 1) < 0 && errno == EINTR)
        ;
    weft__boot_abort(b, 77, "rank 1 went away");
    sleep_forever();
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: boot_helper MODE [args]\n");
        return 2;
    }
    const char *mode = argv[1];
    int rank = env_rank();
    setvbuf(stdout, NULL, _IOLBF, 0);

    if (!strcmp(mode, "info")) {
        weft_boot_t *b = boot_or_die();
        printf("rank %d size %d jobid %s addr %s\n", weft__boot_rank(b), weft__boot_size(b),
               weft__boot_job_id(b), getenv("WEFT_BOOT_ADDR") ? getenv("WEFT_BOOT_ADDR") : "-");
        fprintf(stderr, "stderr from rank %d\n", weft__boot_rank(b));
        fence_or_die(b);
        weft__boot_fini(b);
        return 0;
    }
    if (!strcmp(mode, "exit") && argc == 5) {
        if (rank == atoi(argv[2]))
            return atoi(argv[3]);
        if (!strcmp(argv[4], "sleep"))
            sleep_forever();
        return atoi(argv[4]);
    }
    if (!strcmp(mode, "sleep")) {
        printf("sleeping rank %d pid %ld\n", rank, (long)getpid());
        sleep_forever();
    }
    if (!strcmp(mode, "kill-self") && argc == 3) {
        weft_boot_t *b = boot_or_die();
        printf("sleeping rank %d pid %ld\n", rank, (long)getpid());
        fence_or_die(b);
        if (rank == atoi(argv[2]))
            raise(SIGKILL);
        sleep_forever();
    }
    if (!strcmp(mode, "env")) {
        for (int i = 2; i + 1 < argc; i += 2) {
            const char *v = getenv(argv[i]);
            if (!v || strcmp(v, argv[i + 1]) != 0) {
                fprintf(stderr, "boot_helper: rank %d: %s is '%s', expected '%s'\n", rank, argv[i],
                        v ? v : "(unset)", argv[i + 1]);
                return 1;
            }
        }
        printf("rank %d env ok\n", rank);
        return 0;
    }
    if (!strcmp(mode, "keep-going")) {
        if (rank == 1)
            return 5;
        sleep(1);
        printf("survivor %d done\n", rank);
        return 0;
    }
    if (!strcmp(mode, "fence-dead")) {
        weft_boot_t *b = boot_or_die();
        if (rank == 1)
            raise(SIGKILL);
        int rc = weft__boot_fence(b);
        if (rc != WEFT_EPEERDEAD) {
            fprintf(stderr, "boot_helper: rank %d: fence gave %s, expected WEFT_EPEERDEAD\n", rank,
                    weft_strerror(rc));
            return 1;
        }
        printf("rank %d: fence reported a dead peer\n", rank);
        weft__boot_fini(b);
        return 0;
    }
    if (!strcmp(mode, "abort")) {
        weft_boot_t *b = boot_or_die();
        if (weft__boot_rank(b) == 1) { /* from the store: under PMIx there is no WEFT_RANK */
            weft__boot_abort(b, argc > 2 ? atoi(argv[2]) : 7, "helper abort");
            /* As weft_abort does: under PMIx leave at once once the launcher
             * knows (Open MPI 4.1's mpirun may crash or hang when it has to
             * kill the aborting process itself); weftrun ends us. */
            if (getenv("PMIX_RANK"))
                _exit(argc > 2 ? atoi(argv[2]) : 7);
            sleep_forever();
        }
        weft__boot_fence(b); /* never completes: rank 1 does not come */
        sleep_forever();
    }
    if (!strcmp(mode, "early-exit") || !strcmp(mode, "fini-early")) {
        weft_boot_t *b = boot_or_die();
        int fini = !strcmp(mode, "fini-early");
        if (rank == 1 && !fini)
            _exit(0);
        fence_or_die(b);
        if (rank == 1) {
            weft__boot_fini(b);
            sleep(1);
            return 0;
        }
        int rc = weft__boot_put(b, "after", &rank, sizeof rank);
        if (rc == WEFT_OK)
            rc = weft__boot_fence(b);
        if (rc == WEFT_OK)
            rc = weft__boot_fence(b);
        if (rc != WEFT_OK) {
            fprintf(stderr, "boot_helper: rank %d: %s\n", rank, weft_strerror(rc));
            return 1;
        }
        printf("rank %d fences ok\n", rank);
        weft__boot_fini(b);
        return 0;
    }
    if (!strcmp(mode, "shm")) {
        char path[256];
        snprintf(path, sizeof path, "/dev/shm/weft-%s-leftover", getenv("WEFT_JOBID"));
        int fd = open(path, O_CREAT | O_WRONLY, 0600);
        if (fd < 0) {
            perror(path);
            return 77;
        }
        close(fd);
        printf("%s\n", path);
        return 0;
    }
    if (!strcmp(mode, "where")) {
        weft_boot_t *b = boot_or_die();
        const char *node = getenv("WEFT_NODE_ID");
        printf("rank %d node %s addr %s\n", weft__boot_rank(b), node ? node : "-",
               getenv("WEFT_BOOT_ADDR"));
        fence_or_die(b);
        weft__boot_fini(b);
        return 0;
    }
    if (!strcmp(mode, "boot-sleep")) {
        weft_boot_t *b = boot_or_die();
        fence_or_die(b);
        printf("sleeping rank %d pid %ld\n", rank, (long)getpid());
        sleep_forever();
    }
    if (!strcmp(mode, "wait-file") && argc == 3) {
        weft_boot_t *b = boot_or_die();
        printf("rank %d addr %s jobid %s\n", rank, getenv("WEFT_BOOT_ADDR"), weft__boot_job_id(b));
        while (access(argv[2], F_OK) != 0)
            usleep(20000);
        fence_or_die(b);
        weft__boot_fini(b);
        return 0;
    }
    if (!strcmp(mode, "peer") && argc == 3)
        return peer(boot_or_die(), argv[2]);
    if (!strcmp(mode, "signal") && argc == 3)
        return wait_signal(argv[2], rank);
    if (!strcmp(mode, "silent") && argc >= 5)
        return silent(argv[2], atoi(argv[3]), argv + 4, argc - 4);
    if (!strcmp(mode, "stranger") && argc == 4)
        return stranger(argv[2], argv[3]);
    fprintf(stderr, "boot_helper: unknown mode or arguments: %s\n", mode);
    return 2;
}
