/* Private to the dynamic processes (mpi_dynproc.c: ports, accept and
 * connect, join, names; mpi_spawn.c: spawn, and the parent at init). */
#ifndef WEFT_MPI_DYNPROC_INT_H
#define WEFT_MPI_DYNPROC_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mpi/mpi_int.h"

#define PORT_PREFIX   "weft-port:"
#define SECRET_LEN    16
#define NONCE_LEN     16
#define HS_MAGIC      0x54525057u /* "WPRT" */
#define MEET_MAGIC    0x5445454du /* "MEET" */
#define CTX_WORDS     64
#define POLL_SLICE_MS 10

/* An open port, and a job this process spawned (its lifeline pipe). */
typedef struct port {
    struct port *next;
    int fd;
    uint8_t secret[SECRET_LEN];
    char name[MPI_MAX_PORT_NAME];
} port_t;

typedef struct spawned {
    struct spawned *next;
    pid_t pid;
    int lifeline; /* write end: closed when the job has ended, or at our exit */
} spawned_t;

/* Under weft__dyn_lock: the open ports, the spawned jobs, the parent
 * intercommunicator (with a reference of ours). */
extern pthread_mutex_t weft__dyn_lock;
extern port_t *weft__dyn_ports;
extern spawned_t *weft__dyn_spawned;
extern MPI_Comm weft__dyn_parent;

/* A line on stderr: fmt with a and b. */
void weft__dyn_say(const char *fmt, const char *a, const char *b);
/* A new listening port (not yet listed); NULL, said, on failure. */
port_t *weft__dyn_port_new(void);
void weft__dyn_port_free(port_t *p);
/* Accept on p until a client passes the handshake, or pid (a spawned job's
 * weftrun, 0: none) ends (*status its wait status): the connected socket,
 * lsecret the links' secret; -1 when pid ended. */
int weft__dyn_port_accept(port_t *p, pid_t pid, uint8_t *lsecret, int *status);
/* Meet the other side, collective over comm (see mpi_dynproc.c): at root,
 * fd the socket to the other root (-1 with root_err set), lsecret the
 * links' secret; first: this side comes first. An MPI error class, the
 * same at every member. */
int weft__dyn_meet(MPI_Comm comm, int root, int fd, int root_err, bool first,
                   const uint8_t *lsecret, MPI_Comm *out);
/* The checks of a rooted call on an intracommunicator, out not NULL. */
int weft__dyn_check_root(MPI_Comm comm, int root, MPI_Comm *out);
/* MPI_Comm_connect's work, reporting nothing (MPI_Init's parent uses it). */
int weft__dyn_connect_to(const char *port_name, int root, MPI_Comm comm, MPI_Comm *newcomm,
                         const char *fn);

#endif
