/* weft — a thread-aware communication engine for clusters of multicore nodes.
 *
 * This is the native interface: a context, then tagged send/receive ("sr") with
 * wildcards, probes and cancellation; completion objects are in weft_comp.h
 * (included below). Every function returns a status from the
 * list below: 0 is success, a positive value means "still in progress", a
 * negative value is an error. weft_strerror() turns a status into a sentence.
 *
 * Thread safety: unless a function says otherwise, it may be called from any
 * thread when the context was created with WEFT_THREAD_MULTIPLE; at lower levels
 * the caller guarantees what the level promises (one thread, or one at a time).
 */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

/* The status list: name, value, sentence. */
#define WEFT_STATUS_LIST(X)                                                                        \
    X(WEFT_OK, 0, "success")                                                                       \
    X(WEFT_INPROGRESS, 1, "operation in progress")                                                 \
    X(WEFT_EINVAL, -1, "invalid argument")                                                         \
    X(WEFT_ENOMEM, -2, "out of memory")                                                            \
    X(WEFT_EAGAIN, -3, "resource temporarily unavailable, try again")                              \
    X(WEFT_ENOBUFS, -4, "no buffer space available")                                               \
    X(WEFT_ETRUNC, -5, "message truncated: longer than the posted receive buffer")                 \
    X(WEFT_ECANCELED, -6, "operation canceled")                                                    \
    X(WEFT_EPEERDEAD, -7, "peer process died or its connection was lost")                          \
    X(WEFT_EPROTO, -8, "malformed packet or protocol violation from a peer")                       \
    X(WEFT_ERANK, -9, "invalid rank")                                                              \
    X(WEFT_ETAG, -10, "invalid tag")                                                               \
    X(WEFT_EUNSUPPORTED, -11, "operation not supported")                                           \
    X(WEFT_ESYS, -12, "system call failed")                                                        \
    X(WEFT_EBOOT, -13, "bootstrap (launcher key-value store) failed")                              \
    X(WEFT_ENOTFOUND, -14, "not found")                                                            \
    X(WEFT_ESTATE, -15, "object in the wrong state for this operation")                            \
    X(WEFT_ETIMEDOUT, -16, "timed out")                                                            \
    X(WEFT_EPERM, -17, "operation not permitted")                                                  \
    X(WEFT_EMEMBER, -18, "another member of the collective failed")

typedef enum weft_status_code {
#define WEFT_STATUS_ENUM(name, value, text) name = value,
    WEFT_STATUS_LIST(WEFT_STATUS_ENUM)
#undef WEFT_STATUS_ENUM
} weft_status_code_t;

/* The sentence for a status (never NULL; unknown values give "unknown status").
 * Thread-safe. */
WEFT_API const char *weft_strerror(int status);

/* The status name ("WEFT_ETRUNC") for a status, or "WEFT_?" if unknown. Thread-safe. */
WEFT_API const char *weft_status_name(int status);

/* Thread levels, as in MPI. The lock kind inside weft follows the level. */
typedef enum weft_thread_level {
    WEFT_THREAD_SINGLE = 0,
    WEFT_THREAD_FUNNELED = 1,
    WEFT_THREAD_SERIALIZED = 2,
    WEFT_THREAD_MULTIPLE = 3,
} weft_thread_level_t;

typedef struct weft_ctx weft_ctx_t;
typedef struct weft_request weft_request_t;

/* What a completed receive (or a probe) reports. */
typedef struct weft_status {
    int source;    /* rank of the sender */
    uint32_t comm; /* communicator id the message was sent on */
    uint64_t tag;  /* tag of the message */
    size_t length; /* bytes received (for a probe: bytes the message carries) */
    int error;     /* WEFT_OK, or the request's error (WEFT_ETRUNC, WEFT_ECANCELED...) */
} weft_status_t;

/* Fields of weft_init_params_t that the caller has set. */
enum {
    WEFT_INIT_FIELD_THREAD_LEVEL = 1u << 0,
    WEFT_INIT_FIELD_DRIVERS = 1u << 1,
};

struct weft_driver_ops; /* a driver (src/drivers/driver.h, for driver authors) */

typedef struct weft_init_params {
    uint64_t field_mask; /* which of the fields below are set (WEFT_INIT_FIELD_*) */
    int thread_level;    /* requested weft_thread_level_t; default WEFT_THREAD_SINGLE */
    /* Drivers of the program's own, beside the built-in ones: the context
     * chooses among all of them by what each says of itself (reach,
     * preference; WEFT_DRIVERS may name them). Every rank must pass the same. */
    const struct weft_driver_ops *const *drivers;
    int ndrivers;
} weft_init_params_t;

/* Wildcards for receives and probes. */
#define WEFT_ANY_SOURCE (-1)
#define WEFT_ANY_TAG    UINT64_MAX
/* The largest tag a message may carry (WEFT_ANY_TAG is reserved). */
#define WEFT_TAG_MAX (UINT64_MAX - 1)

/* Create a context and join the job: the rank and size come from the launcher
 * (weftrun), or the process runs as a job of size 1 when started alone. Every
 * rank of the job must call it; it returns when all peers are reachable.
 * params may be NULL for defaults. Errors: WEFT_EBOOT (launcher unreachable),
 * WEFT_ENOMEM, WEFT_ESYS, WEFT_EINVAL. Call it once per context; several contexts
 * may live in one process only when each belongs to its own job. */
WEFT_API int weft_init(const weft_init_params_t *params, weft_ctx_t **ctx_out);

/* Leave the job and free the context. Waits until this rank's pending sends have
 * left and every rank reached finalize, so no peer loses a message. Requests
 * still in flight are freed: their handles must not be used afterwards (a request
 * that completed but was never waited on or tested stays the caller's, so wait
 * on everything before finalize). Returns WEFT_EPEERDEAD when a rank of the job
 * failed before reaching finalize; the context is freed all the same. Not
 * thread-safe: call it from one thread once all others have stopped using the
 * context. */
WEFT_API int weft_finalize(weft_ctx_t *ctx);

/* The process's shared context, for front ends that may live side by side in
 * one program (MPI and OpenSHMEM): the first call joins the job as
 * weft_init(params) does; later calls return the same context and ignore
 * params (its thread level is the first caller's: weft_thread_level says
 * which). Every successful call is matched by one weft_world_release; the
 * last one finalizes the context, as weft_finalize does, and its status is
 * returned. Thread-safe. Errors: those of weft_init; WEFT_EINVAL from
 * release for a context that is not the shared one, or released too often. */
WEFT_API int weft_world_acquire(const weft_init_params_t *params, weft_ctx_t **ctx_out);
WEFT_API int weft_world_release(weft_ctx_t *ctx);

/* This process's rank, and the number of ranks of the job. Thread-safe. */
WEFT_API int weft_rank(const weft_ctx_t *ctx);
WEFT_API int weft_size(const weft_ctx_t *ctx);

/* The lowest rank running on this process's node (ranks share a node when their
 * node ids match: host name and boot id, or WEFT_NODE_ID). Thread-safe. */
WEFT_API int weft_node_leader(const weft_ctx_t *ctx);

/* The instance of a hardware resource type that this process runs within,
 * for placement decisions (MPI_COMM_TYPE_HW_GUIDED is built on it). type is
 * a hwloc type name ("Machine", "Package", "NUMANode", "L3Cache", "L2Cache",
 * "L1Cache", "Core", "PU"; any case, "hwloc://" in front allowed; also
 * "socket", "hwthread", "numa", "l1" to "l3", "node"). On success *index is
 * the instance's logical index on this node (hwloc's order), the one whose
 * cpus hold every cpu this process may run on. WEFT_ENOTFOUND when the
 * process may run on cpus of several instances (it is not bound within one)
 * or the machine has none of that type, WEFT_EINVAL for an unknown name,
 * WEFT_EUNSUPPORTED for a type weft cannot see without hwloc (built without
 * it, weft knows "Machine" and "PU" only), WEFT_ESYS when the topology or
 * the binding cannot be read. Needs no context; reads the topology at each
 * call (milliseconds). Thread-safe. */
WEFT_API int weft_hw_instance(const char *type, int *index);

/* The thread level the context provides. Thread-safe. */
WEFT_API int weft_thread_level(const weft_ctx_t *ctx);

/* End the whole job: the launcher is asked to stop every rank with exit status
 * code (0 is turned into 1) and to print msg; this process exits in any case.
 * Never returns. Thread-safe. */
WEFT_API void weft_abort(weft_ctx_t *ctx, int code, const char *msg) __attribute__((noreturn));

/* Advance communication once: poll the drivers, run the scheduler. Returns the
 * number of events handled (>= 0) or an error. */
WEFT_API int weft_progress(weft_ctx_t *ctx);

/* The WEFT_* parameters weft reads from the environment: the engine's and
 * each built-in driver's, each with its default (as text) and a sentence. */
typedef struct weft_param {
    const char *name;  /* "WEFT_EAGER_CREDITS" */
    const char *deflt; /* default value, as text */
    const char *help;  /* one sentence */
} weft_param_t;

/* The table of every parameter; *count gets its length. The table lives as
 * long as the process. Thread-safe. */
WEFT_API const weft_param_t *weft_param_table(size_t *count);

/* Override parameter `name`: the value wins over the environment for every
 * later read (a context started after this call reads it); value NULL
 * removes the override. Errors: WEFT_EINVAL (name NULL), WEFT_ENOMEM. Not
 * thread-safe, and not while a context is running: a read may hold the
 * string an override replaces. */
WEFT_API int weft_param_set(const char *name, const char *value);

/* The value in effect of parameter `name`: its override, else the
 * environment's, else NULL. Thread-safe against other reads. */
WEFT_API const char *weft_param_get(const char *name);

/* A progress callback: advances some work of the caller's (a front end's
 * schedules, forwarding, retries) and returns how many events it handled
 * (> 0 when it did work, 0 when it found nothing). */
typedef int (*weft_progress_fn)(void *arg);

/* Register fn(arg) with the context's progress: from now on every
 * weft_progress call, every thread waiting in weft (wait, test, idle loops)
 * and the progress thread run it after their pass over the drivers, without
 * the engine lock held, so it may call any weft function. It never runs
 * twice at once (a thread that finds it running skips it), nor inside
 * itself. *id_out names it for weft_progress_unregister. Errors: WEFT_EINVAL,
 * WEFT_ENOBUFS (16 callbacks are registered already). Thread-safe. */
WEFT_API int weft_progress_register(weft_ctx_t *ctx, weft_progress_fn fn, void *arg, int *id_out);

/* Unregister callback id; returns once no thread runs it, so its argument
 * may be freed after. Must not be called from inside that callback.
 * Errors: WEFT_EINVAL (no such callback). Thread-safe. */
WEFT_API int weft_progress_unregister(weft_ctx_t *ctx, int id);

/* Turn callback id off (on = 0) or back on: an owner with nothing to advance
 * for a while turns it off, and passes skip it at the cost of one load; a
 * callback starts on. Turning it on is seen by every pass that starts after
 * the call; a pass that started before turning it off may still run it once.
 * Errors: WEFT_EINVAL. Thread-safe. */
WEFT_API int weft_progress_arm(weft_ctx_t *ctx, int id, int on);

/* Whether the context runs a progress thread (WEFT_PROGRESS_THREAD=1): then
 * progress callbacks run on it too, concurrently with the application's
 * threads at any thread level. Thread-safe. */
WEFT_API int weft_progress_thread_running(const weft_ctx_t *ctx);

/* The state of a caller's own polling loop (weft_progress, test, iprobe...):
 * zero it before the loop, and again after a poll that found what the loop
 * waits for if the loop goes on. */
typedef struct weft_idle {
    unsigned spins;
    int yielding;
    uint64_t since;
} weft_idle_t;

/* Call between two polls that found nothing: the thread waits as the library's
 * own waits do (WEFT_WAIT, WEFT_SPIN_US). It spins, and once it has been idle
 * for the waiting policy's patience (WEFT_SPIN_US, or none under
 * WEFT_WAIT=block) it yields its core between polls, so a peer or a thread
 * sharing the core can run. When WEFT_SPIN_US is 0 (set so, or left unset on a
 * node with more ranks than cpus) it yields at every call. Under
 * WEFT_WAIT=spin it never yields. Under WEFT_WAIT=block and fixed_spin, below
 * WEFT_THREAD_MULTIPLE and without a progress thread, it sleeps instead of
 * yielding, on the drivers' doorbells where every driver in use has one,
 * until something arrives (or 10 ms pass): only the caller's own polls can
 * then complete what its loop waits for. Thread-safe (each thread its own
 * state). */
WEFT_API void weft_idle(weft_ctx_t *ctx, weft_idle_t *state);

/* Start a send of len bytes at buf to rank dest, on communicator comm with tag
 * (<= WEFT_TAG_MAX). The buffer must stay untouched until the request completes.
 * *req_out receives the request, to be completed by wait/test. Errors:
 * WEFT_ERANK, WEFT_ETAG, WEFT_EINVAL (NULL buffer with len > 0, NULL req_out),
 * WEFT_EPEERDEAD, WEFT_ENOMEM. */
WEFT_API int weft_sr_isend(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag, const void *buf,
                           size_t len, weft_request_t **req_out);

/* As weft_sr_isend, but the request completes only once the receiver matched the
 * message (MPI's synchronous mode). */
WEFT_API int weft_sr_issend(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag, const void *buf,
                            size_t len, weft_request_t **req_out);

/* As weft_sr_isend, with the data gathered from iovcnt pieces (iovcnt >= 0; the
 * iov array itself may be reused as soon as the call returns). */
WEFT_API int weft_sr_isendv(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag,
                            const struct iovec *iov, int iovcnt, weft_request_t **req_out);

/* Post a receive of at most len bytes into buf from rank src (or WEFT_ANY_SOURCE)
 * on communicator comm with tag (or WEFT_ANY_TAG). Messages are matched in the
 * order they were sent by each peer (non-overtaking) and receives in the order
 * they were posted. A longer message completes the request with WEFT_ETRUNC and
 * writes nothing past len. Errors as for weft_sr_isend. */
WEFT_API int weft_sr_irecv(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, void *buf,
                           size_t len, weft_request_t **req_out);

/* As weft_sr_irecv, scattering into iovcnt pieces (the array may be reused at once). */
WEFT_API int weft_sr_irecvv(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag,
                            const struct iovec *iov, int iovcnt, weft_request_t **req_out);

/* Wait until req completes, fill *status (may be NULL) and free the request.
 * Returns the request's own result: WEFT_OK, or WEFT_ETRUNC, WEFT_ECANCELED,
 * WEFT_EPEERDEAD... (also in status->error). A NULL request returns WEFT_OK at once. */
WEFT_API int weft_sr_wait(weft_ctx_t *ctx, weft_request_t *req, weft_status_t *status);

/* If req has completed, set *flag to 1, fill *status and free the request;
 * otherwise make progress and set *flag to 0. Returns the request's result when
 * completed, WEFT_OK when not yet completed. */
WEFT_API int weft_sr_test(weft_ctx_t *ctx, weft_request_t *req, int *flag, weft_status_t *status);

/* As weft_sr_test, without making progress: for a caller that looks at many
 * requests and progresses once between two looks (MPI_Testany over N
 * requests costs one progress pass, not N). */
WEFT_API int weft_sr_check(weft_ctx_t *ctx, weft_request_t *req, int *flag, weft_status_t *status);

/* Whether req (not NULL) has completed: one load, inline, with no progress
 * and nothing retired (a request's first word is its completion flag). For
 * scans over many requests that retire the done ones with weft_sr_check.
 * Thread-safe. */
static inline int weft_sr_done(const weft_request_t *req)
{
    return __atomic_load_n((const int *)(const void *)req, __ATOMIC_ACQUIRE) != 0;
}

/* Wait for all n requests (NULL entries are skipped and reqs[i] is set to NULL
 * as each completes). statuses may be NULL. Returns WEFT_OK, or the first error
 * among the requests (every request is still completed and freed). */
WEFT_API int weft_sr_waitall(weft_ctx_t *ctx, int n, weft_request_t **reqs,
                             weft_status_t *statuses);

/* If any of the n requests has completed, free it, set reqs[*index] to NULL,
 * *index to its position and *flag to 1; else make progress and set *flag to 0.
 * With no non-NULL request, *flag is 1 and *index is -1. */
WEFT_API int weft_sr_testany(weft_ctx_t *ctx, int n, weft_request_t **reqs, int *index, int *flag,
                             weft_status_t *status);

/* Block until a message matching (src, comm, tag) is available to receive and
 * describe it in *status without receiving it. */
WEFT_API int weft_sr_probe(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag,
                           weft_status_t *status);

/* As weft_sr_probe, but return at once with *flag telling whether one was found. */
WEFT_API int weft_sr_iprobe(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, int *flag,
                            weft_status_t *status);

/* A message taken out of matching by weft_sr_improbe, to be received by
 * weft_sr_imrecvv: no other receive can take it in between (MPI's matched
 * probe, for threads that probe and receive concurrently). */
typedef struct weft_message weft_message_t;

/* As weft_sr_iprobe, but a message found is removed from matching and returned
 * in *msg (with its description in *status); it must then be received with
 * weft_sr_imrecvv. */
WEFT_API int weft_sr_improbe(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, int *flag,
                             weft_message_t **msg, weft_status_t *status);

/* Receive a message returned by weft_sr_improbe into iovcnt pieces; completes
 * like a receive (WEFT_ETRUNC when the message is longer). msg is consumed even
 * on error, except WEFT_EINVAL for bad arguments. */
WEFT_API int weft_sr_imrecvv(weft_ctx_t *ctx, weft_message_t *msg, const struct iovec *iov,
                             int iovcnt, weft_request_t **req_out);

/* Cancel a request whose message no receive has matched yet (MPI_Cancel).
 *
 * A receive: a posted receive that has not matched is canceled at once: it
 * completes with WEFT_ECANCELED and the call returns WEFT_OK. WEFT_ESTATE if it
 * had already matched (it completes normally).
 *
 * A send (also a synchronous one, and also an eager send that has already
 * completed locally but has not been waited on or tested yet): only the
 * receiver knows whether its message matched, so the call asks it and returns
 * WEFT_INPROGRESS; the request then completes either with WEFT_ECANCELED (the
 * receiver removed the message while it was still unmatched, eager data or
 * rendezvous announcement alike: no receive there will ever see it, and the
 * next matching receive takes the next message) or as sent (WEFT_OK: it had
 * matched, its data is delivered). A second cancel of the same send returns
 * WEFT_INPROGRESS again. WEFT_ESTATE if the send is known to have matched (an
 * answer from the receiver arrived) or has failed; WEFT_ENOMEM.
 * If the peer dies before answering, the send completes with WEFT_EPEERDEAD.
 *
 * Either way the request must still be waited on or tested. Thread-safe, but
 * not concurrently with a wait or test of the same request. */
WEFT_API int weft_sr_cancel(weft_ctx_t *ctx, weft_request_t *req);

/* Counters of one context, for observability and tests. */
typedef struct weft_counters {
    uint64_t packets_sent, packets_received;
    uint64_t chunks_sent, chunks_received;
    uint64_t bytes_sent, bytes_received; /* payload bytes of user messages */
    uint64_t eager_sent, rdv_sent;       /* user messages by protocol */
    uint64_t rdv_rget, rdv_rtr;          /* rendezvous by single-copy get / by RTR + data */
    uint64_t rdv_coop;      /* rendezvous moved in pieces by either side (shared memory) */
    uint64_t rdv_published; /* receives published so that their sender may move the data */
    uint64_t rdv_claimed;   /* our rendezvous that claimed a peer's published receive */
    uint64_t unexpected, unexpected_max; /* arrivals before their receive; peak depth */
    uint64_t credit_stalls;              /* eager sends turned into rendezvous for lack of credit */
} weft_counters_t;

/* Copy the context's counters into *out. Thread-safe. */
WEFT_API int weft_counters_get(weft_ctx_t *ctx, weft_counters_t *out);

/* Counters of one gate (the engine's link to one peer) as its packet
 * scheduling strategy sees them, or summed over the gates of one strategy.
 *
 * The struct grows at its end, in groups: before the call, set field_mask to
 * the WEFT_GATE_COUNTERS_* groups your struct has (WEFT_GATE_COUNTERS_ALL of
 * the header you compile against); the library fills only those, and on
 * return field_mask says which groups it filled. So a program built against
 * this header keeps working with a later library, and the other way round. */
#define WEFT_GATE_COUNTERS_V1 (1ull << 0)
#define WEFT_GATE_COUNTERS_V2 (1ull << 1)
#define WEFT_GATE_COUNTERS_V3 (1ull << 2)
#define WEFT_GATE_COUNTERS_V4 (1ull << 3)
#define WEFT_GATE_COUNTERS_ALL                                                                     \
    (WEFT_GATE_COUNTERS_V1 | WEFT_GATE_COUNTERS_V2 | WEFT_GATE_COUNTERS_V3 | WEFT_GATE_COUNTERS_V4)

typedef struct weft_gate_counters {
    uint64_t field_mask; /* in: groups the caller's struct has; out: groups filled */
    /* WEFT_GATE_COUNTERS_V1 */
    char strategy[16];     /* the gate's strategy: "default", "aggreg" */
    char driver[16];       /* the driver of the gate's track ("self", "shm", "tcp"); "" for a sum */
    uint64_t packets_sent; /* packets the driver took */
    uint64_t chunks_sent;  /* chunks in them: chunks_sent / packets_sent per packet */
    uint64_t max_chunks_per_packet; /* most chunks one packet carried */
    uint64_t wire_bytes_sent;       /* packet bytes, headers included */
    uint64_t messages_sent;         /* user messages (eager or rendezvous request) */
    uint64_t msg_bytes_sent;        /* their payload bytes, whatever the protocol */
    uint64_t rdv_sent;              /* of those messages, sent by rendezvous */
    uint64_t ctrl_sent;             /* control chunks: ACK, RTR, CREDIT, RTP, DONE */
    uint64_t rdata_bytes_sent;      /* rendezvous data streamed in packets (after an RTR) */
    uint64_t held;                  /* sends that waited to share a packet (aggreg's hold) */
    uint64_t packets_received;      /* packets that arrived from the peer */
    uint64_t chunks_received;       /* chunks in them */
    uint64_t wire_bytes_received;   /* their bytes, headers included */
    /* WEFT_GATE_COUNTERS_V2 */
    /* Messages a thread sent while another thread held the engine: under the
     * gate's lock alone, on a track that allows it (shared memory), without
     * waiting for the engine's holder. */
    uint64_t sent_unlocked;
    /* WEFT_GATE_COUNTERS_V3 */
    /* Pieces of large messages on shared memory (moved in pieces by whichever
     * side is in the library) that this process moved, either way; and of
     * those, the pieces a waiting thread copied after releasing the engine
     * lock, so that other threads kept the engine meanwhile. */
    uint64_t pieces_moved;
    uint64_t pieces_unlocked;
    /* WEFT_GATE_COUNTERS_V4 */
    /* Pieces this process tried to copy and the kernel refused (the peer
     * made itself non-dumpable, say): the peer copied them instead, or, when
     * it was refused too, they failed. After the first refusal on a gate
     * this side tries no more, so this stays small. */
    uint64_t pieces_refused;
} weft_gate_counters_t;

/* Fill *out with the counters of the gate to rank peer (see above for
 * field_mask). WEFT_EINVAL for a NULL argument or a field_mask with no group
 * this library knows, WEFT_ERANK for a rank outside the job. Thread-safe. */
WEFT_API int weft_counters_gate(weft_ctx_t *ctx, int peer, weft_gate_counters_t *out);

/* Fill *out with the counters summed over every gate whose strategy is named
 * strategy (all zero if none is; max_chunks_per_packet is the maximum).
 * WEFT_EINVAL for a NULL argument, an unknown strategy name or a field_mask
 * with no known group. Thread-safe. */
WEFT_API int weft_counters_strategy(weft_ctx_t *ctx, const char *strategy,
                                    weft_gate_counters_t *out);

/* What the progress thread (WEFT_PROGRESS_THREAD=1) did, in groups as the
 * gate counters (set field_mask first; it says on return what was filled).
 * All zero when the context has no progress thread. V2: how waiting
 * application threads slept on the doorbells (WEFT_WAIT=block or
 * fixed_spin without a progress thread). */
#define WEFT_PROGRESS_COUNTERS_V1  (1ull << 0)
#define WEFT_PROGRESS_COUNTERS_V2  (1ull << 1)
#define WEFT_PROGRESS_COUNTERS_ALL (WEFT_PROGRESS_COUNTERS_V1 | WEFT_PROGRESS_COUNTERS_V2)

typedef struct weft_progress_counters {
    uint64_t field_mask; /* in: groups the caller's struct has; out: groups filled */
    /* WEFT_PROGRESS_COUNTERS_V1 */
    uint64_t running; /* 1 while the thread runs */
    uint64_t events;  /* events (arrivals, completions) its polls handled */
    /* Times it slept on the drivers' doorbells instead of polling (where
     * every driver in use has one: tcp), and of those sleeps, the ones a
     * doorbell ended and the ones a kick ended (a submission deferred while
     * another thread held the engine, a send held to share a packet, the
     * shutdown); the rest ended by a 10 ms timeout. */
    uint64_t sleeps;
    uint64_t woken;
    uint64_t kicked;
    /* WEFT_PROGRESS_COUNTERS_V2 */
    /* Times a waiting application thread, having polled WEFT_SPIN_US in vain
     * (at once under block), slept on the drivers' doorbells (where every
     * driver in use has one), and of those, the ones a doorbell ended. */
    uint64_t wait_sleeps;
    uint64_t wait_woken;
} weft_progress_counters_t;

/* Fill *out (see above for field_mask). WEFT_EINVAL for a NULL argument or a
 * field_mask with no group this library knows. Thread-safe. */
WEFT_API int weft_counters_progress(weft_ctx_t *ctx, weft_progress_counters_t *out);

#ifdef __cplusplus
}
#endif

/* Completion objects: flags, counters, queues, synchronizers, handlers. */
#include "weft_comp.h"

#endif /* WEFT_WEFT_H */
