/* util/lock.h, every kind: a try fails on a held lock and succeeds once it
 * is released; threads that increment a plain counter under the lock lose no
 * increment (4 threads: on a 2-core machine holders are preempted, and
 * waiters of the mutex kind sleep on its futex); a thread that
 * sleeps on a held mutex is woken by the release, and the word goes back to
 * free once nobody holds or waits. */
#include <pthread.h>
#include <time.h>

#include "../common/test_util.h"
#include "util/lock.h"

#define THREADS 4
#define ROUNDS  200000

static weft_lock_t lock;
static long counter; /* plain on purpose: only the lock orders the increments */
static atomic_int entered;

static void *hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        /* Mix both ways in: a try that fails falls back to an acquire. */
        if (i % 3 || !weft_lock_try(&lock))
            weft_lock_acquire(&lock);
        counter++;
        weft_lock_release(&lock);
    }
    return NULL;
}

static void *take_once(void *arg)
{
    (void)arg;
    weft_lock_acquire(&lock);
    atomic_store(&entered, 1);
    weft_lock_release(&lock);
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void check_kind(weft_lock_kind_t kind)
{
    weft_lock_init(&lock, kind);
    CHECK(weft_lock_try(&lock));
    CHECK(!weft_lock_try(&lock));
    weft_lock_release(&lock);
    CHECK(weft_lock_try(&lock));
    weft_lock_release(&lock);

    counter = 0;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, hammer, NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(counter == (long)THREADS * ROUNDS);
    CHECK(atomic_load(&lock.word) == 0);

    /* A waiter on a held lock enters only after the release. */
    atomic_store(&entered, 0);
    weft_lock_acquire(&lock);
    pthread_t w;
    CHECK(pthread_create(&w, NULL, take_once, NULL) == 0);
    sleep_ms(50);
    /* The mutex's waiter marks the word before it sleeps (within 10 s even
     * on a loaded machine). */
    for (int i = 0; kind == WEFT_LOCK_MUTEX && i < 1000 && atomic_load(&lock.word) != 2; i++)
        sleep_ms(10);
    if (kind == WEFT_LOCK_MUTEX)
        CHECK(atomic_load(&lock.word) == 2);
    CHECK(atomic_load(&entered) == 0);
    weft_lock_release(&lock);
    pthread_join(w, NULL);
    CHECK(atomic_load(&entered) == 1);
    CHECK(atomic_load(&lock.word) == 0);
    weft_lock_destroy(&lock);
}

int main(void)
{
    weft_lock_init(&lock, WEFT_LOCK_NONE);
    CHECK(weft_lock_try(&lock) && weft_lock_try(&lock)); /* no lock at all */
    weft_lock_acquire(&lock);
    weft_lock_release(&lock);
    check_kind(WEFT_LOCK_SPIN);
    check_kind(WEFT_LOCK_MUTEX);
    return test_summary("test_lock");
}
