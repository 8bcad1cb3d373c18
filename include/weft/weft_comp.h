/* weft — completion objects.
 *
 * An operation started with a completion object (weft_sr_isend_comp,
 * weft_sr_irecv_comp) returns no request: when it completes, the engine
 * signals the object once with an entry (the caller's user_context and the
 * operation's status) and frees its own request. The objects:
 *
 *   flag     one operation: done or not, and its entry (weft_flag_t);
 *   counter  counts completions (and, apart, the failed ones) (weft_counter_t);
 *   queue    a completion queue of entries, many producers and many consumers,
 *            lock-free (weft_cq_t);
 *   sync     a synchronizer: complete after n signals (weft_sync_t);
 *   handler  a function the engine calls with the entry (weft_handler_t).
 *
 * Every object starts with a weft_comp_t; pass that (weft_counter_comp(),
 * weft_cq_comp(), ...) to an operation. None needs a context: a program may
 * also signal them itself (weft_cq_push) or wait on them from a thread that
 * never calls weft.
 *
 * Lifetime: an object must stay valid (not freed, not re-initialised) until
 * every operation that signals it has completed. Operations still in flight
 * at weft_finalize complete there with WEFT_ECANCELED, so their objects must
 * still be valid then.
 *
 * Errors of an operation (WEFT_ETRUNC, WEFT_EPEERDEAD, WEFT_ECANCELED...)
 * arrive in the entry's error; the object is signaled whatever the outcome,
 * so nothing waits for ever on an operation that failed.
 *
 * Handlers never run while the engine holds a lock: a completion found
 * inside the engine is queued, and its handler runs in the thread that
 * leaves the engine after a progress pass (weft_progress, any wait or test,
 * the progress thread), right after it released the lock; one found in the
 * call that starts the operation runs before that call returns. A handler
 * may call weft (post more operations, signal other objects), but should be
 * short: it delays the thread that progresses. Handlers of operations that
 * weft_finalize cancels run inside weft_finalize: they must not call weft.
 *
 * Waiting functions (weft_counter_wait, weft_sync_wait, weft_flag_wait,
 * weft_cq_wait_pop) take a context, which may be NULL. With a context the
 * waiting thread makes progress (weft_progress) and rests between polls as
 * weft_idle says. With NULL it spins a little, then sleeps on a futex until
 * a signal wakes it: then some other thread must make the progress (a
 * progress thread, WEFT_PROGRESS_THREAD=1, or another thread inside weft).
 */
#ifndef WEFT_WEFT_COMP_H
#define WEFT_WEFT_COMP_H

#include "weft.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WEFT_COMP_ALIGNED __attribute__((aligned(64)))
#else
#define WEFT_COMP_ALIGNED
#endif

/* The kind of a completion object (weft_comp_t.kind). */
typedef enum weft_comp_kind {
    WEFT_COMP_FLAG = 1,
    WEFT_COMP_COUNTER = 2,
    WEFT_COMP_CQ = 3,
    WEFT_COMP_SYNC = 4,
    WEFT_COMP_HANDLER = 5,
} weft_comp_kind_t;

/* The common start of every completion object: its kind. Set by the
 * object's init or create; read-only after that. */
typedef struct weft_comp {
    uint32_t kind;     /* weft_comp_kind_t */
    uint32_t reserved; /* 0 */
} weft_comp_t;

/* What the engine tells a completion object about one operation. */
typedef struct weft_comp_entry {
    void *user_context; /* as given when the operation started */
    int error;          /* WEFT_OK, or the operation's error (WEFT_ETRUNC, WEFT_EPEERDEAD...) */
    int source;         /* a receive: the sender's rank; a send: this rank */
    uint64_t tag;       /* the message's tag */
    size_t length;      /* bytes received (at most the buffer's size), or sent */
} weft_comp_entry_t;

/* ---- flag ----------------------------------------------------------------
 * One operation: set when it completes, with its entry. The request-returning
 * calls (weft_sr_isend...) use a flag of their own inside the request; this
 * one is for a caller that wants a flag it owns. */
typedef struct weft_flag {
    weft_comp_t comp;
    uint64_t private_[7]; /* done word, waiters, the entry */
} WEFT_COMP_ALIGNED weft_flag_t;

/* Make f ready for one operation (not set). WEFT_EINVAL if f is NULL. Not
 * thread-safe against signals of f: call it with no operation in flight. */
WEFT_API int weft_flag_init(weft_flag_t *f);

/* WEFT_OK once f was signaled, with the entry copied to *entry (may be
 * NULL); WEFT_INPROGRESS before. WEFT_EINVAL if f is NULL. Makes no progress.
 * Thread-safe. */
WEFT_API int weft_flag_test(weft_flag_t *f, weft_comp_entry_t *entry);

/* Wait until f is signaled (see the top of this file for ctx), then as
 * weft_flag_test. Thread-safe. */
WEFT_API int weft_flag_wait(weft_flag_t *f, weft_ctx_t *ctx, weft_comp_entry_t *entry);

/* Make a signaled flag ready for the next operation. WEFT_EINVAL if f is
 * NULL, WEFT_ESTATE if it was not signaled (an operation may still signal
 * it). Not thread-safe against waiters of f. */
WEFT_API int weft_flag_reset(weft_flag_t *f);

static inline weft_comp_t *weft_flag_comp(weft_flag_t *f)
{
    return &f->comp;
}

/* ---- counter -------------------------------------------------------------
 * A 64-bit count of completions, failed ones included (so a wait for n
 * never hangs on a failure), and apart the count of those that failed. One
 * cache line of its own. */
typedef struct weft_counter {
    weft_comp_t comp;
    uint64_t private_[7]; /* value, errors, waiters */
} WEFT_COMP_ALIGNED weft_counter_t;

/* Start c at value, with no errors counted. WEFT_EINVAL if c is NULL. Not
 * thread-safe against signals of c. */
WEFT_API int weft_counter_init(weft_counter_t *c, uint64_t value);

/* The count: the initial value plus every completion signaled since. 0 if c
 * is NULL. Thread-safe. */
WEFT_API uint64_t weft_counter_get(const weft_counter_t *c);

/* How many of those completions carried an error. 0 if c is NULL.
 * Thread-safe. */
WEFT_API uint64_t weft_counter_errors(const weft_counter_t *c);

/* Wait until the count is at least value (see the top of this file for
 * ctx). WEFT_OK, or WEFT_EINVAL if c is NULL. Thread-safe. */
WEFT_API int weft_counter_wait(weft_counter_t *c, uint64_t value, weft_ctx_t *ctx);

static inline weft_comp_t *weft_counter_comp(weft_counter_t *c)
{
    return &c->comp;
}

/* ---- synchronizer --------------------------------------------------------
 * Complete once n signals arrived: a window of n operations. It keeps the
 * first error among them. */
typedef struct weft_sync {
    weft_comp_t comp;
    uint64_t private_[7]; /* signals left, n, first error, waiters */
} WEFT_COMP_ALIGNED weft_sync_t;

/* Arm s for n signals (n == 0: complete at once). WEFT_EINVAL if s is NULL.
 * Not thread-safe against signals of s. Signals past the n-th are counted
 * and change nothing. */
WEFT_API int weft_sync_init(weft_sync_t *s, uint32_t n);

/* WEFT_INPROGRESS while fewer than n signals arrived; once complete WEFT_OK,
 * or the first error a signal carried. WEFT_EINVAL if s is NULL. Makes no
 * progress. Thread-safe. */
WEFT_API int weft_sync_test(weft_sync_t *s);

/* Wait until s is complete (see the top of this file for ctx); returns what
 * weft_sync_test then returns. Thread-safe. */
WEFT_API int weft_sync_wait(weft_sync_t *s, weft_ctx_t *ctx);

/* Arm a complete s again for as many signals as its init said, its error
 * cleared. WEFT_EINVAL if s is NULL, WEFT_ESTATE if s is not complete
 * (operations may still signal it). Not thread-safe against waiters of s. */
WEFT_API int weft_sync_reset(weft_sync_t *s);

static inline weft_comp_t *weft_sync_comp(weft_sync_t *s)
{
    return &s->comp;
}

/* ---- handler -------------------------------------------------------------
 * fn(entry, arg) is called once per completion, never under an engine lock
 * (see the top of this file); entry is valid during the call only. */
typedef void (*weft_handler_fn_t)(const weft_comp_entry_t *entry, void *arg);

typedef struct weft_handler {
    weft_comp_t comp;
    weft_handler_fn_t fn;
    void *arg;
} weft_handler_t;

/* Make h call fn(entry, arg). WEFT_EINVAL if h or fn is NULL. Not
 * thread-safe against signals of h. */
WEFT_API int weft_handler_init(weft_handler_t *h, weft_handler_fn_t fn, void *arg);

static inline weft_comp_t *weft_handler_comp(weft_handler_t *h)
{
    return &h->comp;
}

/* ---- completion queue ----------------------------------------------------
 * A bounded ring of entries, many producers and many consumers, lock-free
 * (D. Vyukov's bounded MPMC queue: a sequence number per slot). A producer
 * that finds the ring full gets WEFT_EAGAIN from weft_cq_push; the engine
 * never loses an entry: when the ring is full it keeps the completed
 * operation itself in an overflow list under a small lock, which pops drain,
 * in order, once the ring is empty. Each thread that pops gets the entries of
 * one producer in the order they were pushed. */
typedef struct weft_cq weft_cq_t;

/* A queue whose ring holds capacity entries, rounded up to a power of two
 * (at least 2). WEFT_EINVAL for capacity 0, above 2^30, or a NULL cq_out;
 * WEFT_ENOMEM. Thread-safe. */
WEFT_API int weft_cq_create(size_t capacity, weft_cq_t **cq_out);

/* Free cq and the entries still in it. NULL is a no-op. WEFT_OK. Not
 * thread-safe: no operation may signal cq any more, no thread use it. */
WEFT_API int weft_cq_free(weft_cq_t *cq);

/* The queue as a completion object, for weft_sr_isend_comp and the like.
 * Thread-safe. */
WEFT_API weft_comp_t *weft_cq_comp(weft_cq_t *cq);

/* Add *entry. WEFT_OK, WEFT_EAGAIN when the ring is full (nothing added),
 * WEFT_EINVAL for a NULL argument. Lock-free, thread-safe. */
WEFT_API int weft_cq_push(weft_cq_t *cq, const weft_comp_entry_t *entry);

/* Take the oldest entry into *entry: WEFT_OK, WEFT_EAGAIN when there is none
 * (also, for an instant, while a producer is still writing the oldest one),
 * WEFT_EINVAL for a NULL argument. Makes no progress. Lock-free while the
 * overflow list is empty; thread-safe. */
WEFT_API int weft_cq_pop(weft_cq_t *cq, weft_comp_entry_t *entry);

/* Take up to max entries into entries[0..]: the number taken (0 when none),
 * or WEFT_EINVAL for a NULL cq or entries, or max < 0. Thread-safe. */
WEFT_API int weft_cq_pop_batch(weft_cq_t *cq, weft_comp_entry_t *entries, int max);

/* Wait until an entry is there (see the top of this file for ctx) and take
 * it as weft_cq_pop. WEFT_OK, or WEFT_EINVAL for a NULL cq or entry.
 * Thread-safe. */
WEFT_API int weft_cq_wait_pop(weft_cq_t *cq, weft_ctx_t *ctx, weft_comp_entry_t *entry);

/* ---- operations that signal a completion object ---------------------------
 * As weft_sr_isend and weft_sr_irecv, but with no request: when the
 * operation completes, the engine signals comp once with an entry holding
 * user_context and the operation's status, and frees what it used. A
 * message that completes at once (a small send the driver copies, a receive
 * whose message was already here) is signaled before the call returns. The
 * buffer belongs to the operation until comp is signaled. Errors as for
 * weft_sr_isend / weft_sr_irecv, and WEFT_EINVAL for a NULL comp or one of
 * no known kind; on an error returned here nothing is signaled. Thread-safe
 * as the calls they follow. */
WEFT_API int weft_sr_isend_comp(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag,
                                const void *buf, size_t len, weft_comp_t *comp, void *user_context);
WEFT_API int weft_sr_irecv_comp(weft_ctx_t *ctx, int src, uint32_t comm, uint64_t tag, void *buf,
                                size_t len, weft_comp_t *comp, void *user_context);

/* As weft_sr_isend_comp, with the data gathered from iovcnt pieces (the
 * array may be reused when the call returns). */
WEFT_API int weft_sr_isendv_comp(weft_ctx_t *ctx, int dest, uint32_t comm, uint64_t tag,
                                 const struct iovec *iov, int iovcnt, weft_comp_t *comp,
                                 void *user_context);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_COMP_H */
