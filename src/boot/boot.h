/* Bootstrap: who am I, who are my peers, and a key-value store to exchange
 * addresses.
 *
 * Under weftrun the process finds in its environment:
 *   WEFT_RANK, WEFT_SIZE   its rank and the job size
 *   WEFT_JOBID             a job identifier unique on this machine
 *   WEFT_BOOT_ADDR         "unix:/path/to/socket" of weftrun's key-value server
 *   WEFT_JOB_SECRET        32 hex digits known only to the job's processes
 * A process without WEFT_BOOT_ADDR is a singleton: rank 0 of a job of size 1,
 * whose store lives in memory.
 *
 * The store is put / fence / get: each rank puts its keys, then all ranks call
 * fence (a barrier that also publishes every key put before it), then any rank may
 * get any key. Keys are strings of at most 255 bytes, values at most 64 KiB.
 * Not thread-safe: the engine uses it at init and finalize only.
 */
#ifndef WEFT_BOOT_H
#define WEFT_BOOT_H

#include <stddef.h>
#include <stdint.h>

typedef struct weft_boot weft_boot_t;

#define WEFT_BOOT_KEY_MAX   255
#define WEFT_BOOT_VALUE_MAX 65536

/* Connect to the launcher (or make a singleton store). WEFT_EBOOT if the
 * environment names a launcher that cannot be reached or answers badly. */
int weft__boot_init(weft_boot_t **out);
int weft__boot_rank(const weft_boot_t *b);
int weft__boot_size(const weft_boot_t *b);
/* Job identifier: never empty, usable in file names ([A-Za-z0-9_-] only). */
const char *weft__boot_job_id(const weft_boot_t *b);
/* A secret shared by the processes of this job only, WEFT_BOOT_SECRET_LEN bytes.
 * Drivers that accept connections from the network prove job membership with it
 * (a stranger cannot know it). Under weftrun it comes from WEFT_JOB_SECRET; a
 * singleton draws a random one. */
#define WEFT_BOOT_SECRET_LEN 16
const uint8_t *weft__boot_secret(const weft_boot_t *b);
/* Publish key = value (visible to others after the next fence). */
int weft__boot_put(weft_boot_t *b, const char *key, const void *value, size_t len);
/* Wait until every rank of the job reached this fence. */
int weft__boot_fence(weft_boot_t *b);
/* Fetch a key published before the last fence. *len is the buffer size in, the
 * value's size out. WEFT_ENOTFOUND if absent, WEFT_ENOBUFS if the buffer is small
 * (then *len holds the size needed). */
int weft__boot_get(weft_boot_t *b, const char *key, void *value, size_t *len);
/* Ask the launcher to end the whole job with this exit code and message
 * (best effort; used by fatal error paths of front ends such as MPI_Abort). */
int weft__boot_abort(weft_boot_t *b, int code, const char *msg);
/* One program of a job to start: np processes of argv (argv[0] the command,
 * NULL-terminated), each with env ("VAR=value", NULL-terminated) added. */
typedef struct weft_boot_app {
    char *const *argv;
    int np;
    char *const *env;
} weft_boot_app_t;
/* Ask the launcher to start a new job of napps programs, on hosts (a comma
 * list) or hostfile, in wdir (each NULL: the launcher's choice). WEFT_OK once
 * it started; WEFT_EUNSUPPORTED when this launcher cannot (weftrun, which
 * MPI_Comm_spawn runs itself instead, or a singleton); another error when it
 * tried and failed. */
int weft__boot_spawn(weft_boot_t *b, const weft_boot_app_t *apps, int napps, const char *hosts,
                     const char *hostfile, const char *wdir);
void weft__boot_fini(weft_boot_t *b);

#endif
