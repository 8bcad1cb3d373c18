/* The timeline trace: per-thread event buffers, written as Chrome
 * trace-event JSON (util/trace.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "util/trace.h"

typedef struct trace_event {
    uint64_t t;
    uint32_t kind, phase;
    uint64_t a[5];
} trace_event_t;

typedef struct trace_buf {
    struct trace_buf *next;
    _Atomic uint64_t n; /* events written (release: the events before it are complete) */
    uint64_t cap;
    _Atomic uint64_t dropped;
    int tid;
    char name[32];
    trace_event_t ev[];
} trace_buf_t;

struct weft_tracer {
    uint64_t gen; /* which trace of the process (a thread's buffer is of one) */
    char *path;
    uint64_t cap;
    uint64_t mono0, real0; /* the clocks at start, so files of several hosts line up */
    pthread_mutex_t lock;  /* the list of buffers */
    trace_buf_t *bufs;
    int nthreads;
};

weft_tracer_t *weft__tracer;
static uint64_t trace_gen;
static _Thread_local trace_buf_t *my_buf;
static _Thread_local uint64_t my_gen;
/* A thread whose buffer could not be had drops everything into this one. */
static trace_buf_t no_buf;

/* Each kind: name, category, and the names of its arguments (NULL: unused);
 * a name starting with '$' is a string (a const char * that lives as long
 * as the process). */
static const struct {
    const char *name, *cat, *arg[5];
} kinds[WEFT_TR_NKINDS] = {
    [WEFT_TR_ISEND] = {"isend", "submit", {"peer", "tag", "length", "comm"}},
    [WEFT_TR_IRECV] = {"irecv", "submit", {"peer", "tag", "length", "comm"}},
    [WEFT_TR_PACKET] = {"packet", "packet", {"peer", "chunks", "bytes", "$strategy", "$driver"}},
    [WEFT_TR_LONE] = {"packet", "packet", {"peer", "bytes", "payload", NULL, "$driver"}},
    [WEFT_TR_ARRIVE] = {"arrive", "packet", {"peer", "bytes", NULL, NULL}},
    [WEFT_TR_MATCH] = {"match", "match", {"peer", "tag", "length", "expected"}},
    [WEFT_TR_UNEXPECTED] = {"unexpected", "match", {"peer", "tag", "length", "depth"}},
    [WEFT_TR_RDV] = {"rdv", "rendezvous", {"peer", "tag", "length", NULL}},
    [WEFT_TR_RTR] = {"rtr", "rendezvous", {"peer", "length", NULL, NULL}},
    [WEFT_TR_ACK] = {"rdv_ack", "rendezvous", {"peer", NULL, NULL, NULL}},
    [WEFT_TR_CREDIT_STALL] = {"credit_stall", "credit", {"peer", "length", NULL, NULL}},
    [WEFT_TR_PIECE] = {"piece", "rendezvous", {"peer", "bytes", "unlocked", NULL}},
    [WEFT_TR_WAIT] = {"wait", "wait", {NULL, NULL, NULL, NULL}},
    [WEFT_TR_CALLBACK] = {"callback", "progress", {"id", "events", "ns", NULL}},
    [WEFT_TR_SLEEP] = {"sleep", "wait", {NULL, NULL, NULL, NULL}},
};

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int weft__trace_start(const char *path, uint64_t events)
{
    if (!path || !*path || weft__tracer)
        return 0;
    weft_tracer_t *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        return -2;
    }
    t->cap = events ? events : 1;
    t->gen = ++trace_gen;
    t->mono0 = clock_ns(CLOCK_MONOTONIC);
    t->real0 = clock_ns(CLOCK_REALTIME);
    pthread_mutex_init(&t->lock, NULL);
    __atomic_store_n(&weft__tracer, t, __ATOMIC_RELEASE);
    return 0;
}

/* The calling thread's buffer in the current trace, made at its first event. */
static trace_buf_t *thread_buf(void)
{
    weft_tracer_t *t = __atomic_load_n(&weft__tracer, __ATOMIC_ACQUIRE);
    if (!t)
        return &no_buf; /* turned off since the caller looked: drop */
    if (my_buf && my_gen == t->gen)
        return my_buf;
    my_gen = t->gen;
    trace_buf_t *b = malloc(sizeof *b + t->cap * sizeof(trace_event_t));
    if (!b)
        return my_buf = &no_buf;
    atomic_init(&b->n, 0);
    atomic_init(&b->dropped, 0);
    b->cap = t->cap;
    pthread_mutex_lock(&t->lock);
    b->tid = t->nthreads++;
    snprintf(b->name, sizeof b->name, "thread %d", b->tid);
    b->next = t->bufs;
    t->bufs = b;
    pthread_mutex_unlock(&t->lock);
    return my_buf = b;
}

void weft__trace_emit(int kind, int phase, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                      uint64_t e5)
{
    trace_buf_t *buf = thread_buf();
    uint64_t n = atomic_load_explicit(&buf->n, memory_order_relaxed);
    if (WEFT_UNLIKELY(n >= buf->cap)) {
        if (buf != &no_buf)
            atomic_fetch_add_explicit(&buf->dropped, 1, memory_order_relaxed);
        return;
    }
    trace_event_t *e = &buf->ev[n];
    e->t = clock_ns(CLOCK_MONOTONIC);
    e->kind = (uint32_t)kind;
    e->phase = (uint32_t)phase;
    e->a[0] = a;
    e->a[1] = b;
    e->a[2] = c;
    e->a[3] = d;
    e->a[4] = e5;
    atomic_store_explicit(&buf->n, n + 1, memory_order_release);
}

void weft__trace_thread_name(const char *name)
{
    if (!weft__trace_on())
        return;
    trace_buf_t *b = thread_buf();
    if (b != &no_buf)
        snprintf(b->name, sizeof b->name, "%s", name);
}

/* JSON string contents: the names written here are plain, but a node id is
 * the host's. */
static void put_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
}

static void put_event(FILE *f, int rank, const trace_buf_t *b, const trace_event_t *e)
{
    static const char ph[] = {'i', 'B', 'E'};
    const char *name = e->kind < WEFT_TR_NKINDS ? kinds[e->kind].name : "?";
    const char *cat = e->kind < WEFT_TR_NKINDS ? kinds[e->kind].cat : "?";
    fprintf(f,
            ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"%c\",\"ts\":%llu.%03llu,\"pid\":%d,"
            "\"tid\":%d",
            name, cat, ph[e->phase < 3 ? e->phase : 0], (unsigned long long)(e->t / 1000),
            (unsigned long long)(e->t % 1000), rank, b->tid);
    if (e->phase == WEFT_TR_I)
        fputs(",\"s\":\"t\"", f);
    if (e->phase != WEFT_TR_E && e->kind < WEFT_TR_NKINDS) {
        const char sep0 = '{';
        char sep = sep0;
        for (int i = 0; i < 5; i++) {
            const char *an = kinds[e->kind].arg[i];
            if (!an)
                continue;
            if (sep == sep0)
                fputs(",\"args\":", f);
            if (an[0] == '$') {
                fprintf(f, "%c\"%s\":\"", sep, an + 1);
                put_str(f, e->a[i] ? (const char *)(uintptr_t)e->a[i] : "");
                fputc('"', f);
            } else {
                fprintf(f, "%c\"%s\":%lld", sep, an, (long long)e->a[i]);
            }
            sep = ',';
        }
        if (sep != sep0)
            fputc('}', f);
    }
    fputc('}', f);
}

static char *file_name(const char *path, int rank)
{
    char r[16];
    snprintf(r, sizeof r, "%d", rank);
    const char *pct = strstr(path, "%r");
    size_t n = strlen(path) + strlen(r) + 8;
    char *out = malloc(n);
    if (!out)
        return NULL;
    if (pct)
        snprintf(out, n, "%.*s%s%s", (int)(pct - path), path, r, pct + 2);
    else
        snprintf(out, n, "%s.%s.json", path, r);
    return out;
}

int weft__trace_finish(int rank, int size, const char *node)
{
    weft_tracer_t *t = __atomic_exchange_n(&weft__tracer, NULL, __ATOMIC_ACQ_REL);
    if (!t)
        return 0;
    int rc = 0;
    char *name = file_name(t->path, rank);
    FILE *f = name ? fopen(name, "w") : NULL;
    if (!f) {
        weft_log_error("WEFT_TRACE: cannot write %s: %s", name ? name : t->path, strerror(errno));
        rc = -1;
    }
    uint64_t dropped = 0;
    pthread_mutex_lock(&t->lock);
    if (f) {
        fprintf(f,
                "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                "\"tid\":0,\"args\":{\"name\":\"rank %d\"}}",
                rank, rank);
        fprintf(f,
                ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"sort_index\":%d}}",
                rank, rank);
    }
    for (trace_buf_t *b = t->bufs; b; b = b->next) {
        uint64_t n = atomic_load_explicit(&b->n, memory_order_acquire);
        dropped += atomic_load_explicit(&b->dropped, memory_order_relaxed);
        if (!f)
            continue;
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"name\":\"",
                rank, b->tid);
        put_str(f, b->name);
        fputs("\"}}", f);
        for (uint64_t i = 0; i < n; i++)
            put_event(f, rank, b, &b->ev[i]);
    }
    if (f) {
        fprintf(f,
                "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"weft_rank\":%d,"
                "\"weft_size\":%d,\"node\":\"",
                rank, size);
        put_str(f, node ? node : "");
        fprintf(f, "\",\"mono_ns\":%llu,\"real_ns\":%llu,\"dropped\":%llu}}\n",
                (unsigned long long)t->mono0, (unsigned long long)t->real0,
                (unsigned long long)dropped);
        if (fclose(f) != 0) {
            weft_log_error("WEFT_TRACE: cannot write %s: %s", name, strerror(errno));
            rc = -1;
        }
    }
    if (dropped)
        weft_log_warn("WEFT_TRACE: %llu events dropped (full buffers: WEFT_TRACE_EVENTS)",
                      (unsigned long long)dropped);
    for (trace_buf_t *b = t->bufs, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_destroy(&t->lock);
    free(name);
    free(t->path);
    free(t);
    return rc;
}
