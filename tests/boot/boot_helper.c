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
 *   abort                       rank 1 asks weftrun to end the job with code 7
 *   early-exit                  rank 1 leaves without fences (and without fini); the others
 *                               still complete their fences
 *   fini-early                  rank 1 leaves cleanly (fini) after one fence; the others go on
 *   shm                         leave a file /dev/shm/weft-<jobid>-leftover behind
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weft/weft.h"
#include "boot/boot.h"

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
        if (rank == 1) {
            weft__boot_abort(b, 7, "helper abort");
            sleep_forever(); /* weftrun ends us */
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
    fprintf(stderr, "boot_helper: unknown mode or arguments: %s\n", mode);
    return 2;
}
