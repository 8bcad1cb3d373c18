/* Private to src/boot: the PMIx backend that boot.c uses when a PMIx launcher
 * (Open MPI's mpirun, srun --mpi=pmix, PRRTE) started the process. Built from
 * boot_pmix.c when CMake finds PMIx (WEFT_PMIX), else from boot_nopmix.c, whose
 * functions say that PMIx support was not built. */
#ifndef WEFT_BOOT_INT_H
#define WEFT_BOOT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"

typedef struct weft_boot_pmix weft_boot_pmix_t;

/* Join a job over fd, an open stream to a launcher's store: the handshake
 * (CHALLENGE, HELLO with the proof under secret, HELLO_REPLY) as
 * weft__boot_init does it, then a store that talks over fd and closes it in
 * weft__boot_fini. On failure fd stays the caller's. It lets the fuzz target
 * (tests/fuzz/fuzz_boot.c) feed the client any server bytes without a
 * launcher; weft__boot_init is what everything else calls. */
int weft__boot_join_fd(int fd, int rank, int size, const char *job_id,
                       const uint8_t secret[WEFT_BOOT_SECRET_LEN], weft_boot_t **out);

/* Was this process started by a PMIx launcher? (PMIX_NAMESPACE and PMIX_RANK set,
 * WEFT_BOOT_ADDR not: weftrun's own ranks never take this path.) */
int weft__boot_pmix_detected(void);
/* Join the PMIx job: rank, size, a job id made of the namespace ([A-Za-z0-9_-],
 * at most WEFT_BOOT_JOBID_MAX bytes), and the job secret, which rank 0 draws and
 * shares through PMIx before this returns (it costs one fence). */
int weft__boot_pmix_init(weft_boot_pmix_t **out, int *rank, int *size, char *job_id,
                         uint8_t secret[WEFT_BOOT_SECRET_LEN]);
/* Publish a key (committed and exchanged by the next fence). */
int weft__boot_pmix_put(weft_boot_pmix_t *p, const char *key, const void *value, size_t len);
/* Commit the puts and wait for every process of the job, collecting the data. */
int weft__boot_pmix_fence(weft_boot_pmix_t *p);
/* Same contract as weft__boot_get. */
int weft__boot_pmix_get(weft_boot_pmix_t *p, const char *key, void *value, size_t *len);
int weft__boot_pmix_abort(weft_boot_pmix_t *p, int code, const char *msg);
/* Same contract as weft__boot_spawn, through PMIx_Spawn. */
int weft__boot_pmix_spawn(weft_boot_pmix_t *p, const weft_boot_app_t *apps, int napps,
                          const char *hosts, const char *hostfile, const char *wdir);
void weft__boot_pmix_fini(weft_boot_pmix_t *p);

#endif
