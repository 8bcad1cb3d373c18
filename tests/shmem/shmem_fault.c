/* Bad input to OpenSHMEM: the process says which call failed and why, and
 * the whole job ends (shmem_fault.sh checks the message, the exit status and
 * that nothing is left in /dev/shm). argv[1] names the mistake; PE 1 (or
 * PE 0 alone) makes it while the others wait in a barrier. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (me == 0) {
        const char *job = getenv("WEFT_JOBID");
        printf("job %s\n", job ? job : "?");
        fflush(stdout);
    }
    long *heap = shmem_malloc(64);
    long local = 0;
    shmem_barrier_all();
    if (me == (npes > 1 ? 1 : 0)) {
        if (!strcmp(what, "address"))
            shmem_long_p(&local, 1, 0); /* a stack variable is not symmetric */
        else if (!strcmp(what, "pe"))
            shmem_long_p(heap, 1, npes);
        else if (!strcmp(what, "range"))
            shmem_putmem(heap, heap, (size_t)1 << 40, 0); /* far past the heap's end */
        else if (!strcmp(what, "free"))
            shmem_free(&local);
        else if (!strcmp(what, "ctx")) {
            shmem_ctx_t ctx;
            shmem_ctx_create(0, &ctx);
            shmem_ctx_destroy(ctx);
            shmem_ctx_long_p(ctx, heap, 1, 0);
        } else if (!strcmp(what, "heap")) {
            /* The standard returns NULL for an exhausted heap; this program
             * treats that as fatal, as most do. */
            if (!shmem_malloc((size_t)1 << 40))
                shmem_global_exit(3);
        }
    }
    shmem_barrier_all(); /* the others wait here until the job ends */
    shmem_finalize();
    return 0;
}
