/* progress/progress_queue.h: callbacks run in slot order, a serial run calls
 * each once, the 17th registration is refused and a freed slot is reused;
 * with 4 threads running a shared queue while another adds and removes a
 * callback over and over, no callback runs twice at once, and none runs
 * after its removal returned (its argument is poisoned right after). */
#include <pthread.h>
#include <stdatomic.h>

#include "../common/test_util.h"
#include "progress/progress_queue.h"

#define THREADS 4
#define ROUNDS  2000

static weft__pq_t q;
static atomic_int stop;

typedef struct {
    atomic_int inside; /* threads running it now */
    atomic_int dead;   /* set once removed: a call after is a bug */
    atomic_long calls;
    atomic_int bad;
} probe_t;

static int probe_cb(void *arg)
{
    probe_t *p = arg;
    if (atomic_fetch_add(&p->inside, 1) != 0 || atomic_load(&p->dead))
        atomic_store(&p->bad, 1);
    atomic_fetch_add(&p->calls, 1);
    atomic_fetch_sub(&p->inside, 1);
    return 1;
}

static int order[4], norder;
static int order_cb(void *arg)
{
    order[norder++] = (int)(intptr_t)arg;
    return 0;
}

static void *runner(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        weft__pq_run_shared(&q);
    return NULL;
}

int main(void)
{
    test_watchdog(120);
    weft__pq_init(&q);
    for (intptr_t i = 0; i < 3; i++)
        CHECK(weft__pq_add(&q, order_cb, (void *)i) == (int)i);
    CHECK(weft__pq_run_serial(&q) == 0);
    CHECK(norder == 3 && order[0] == 0 && order[1] == 1 && order[2] == 2);
    CHECK(weft__pq_remove(&q, 1) == WEFT_OK);
    CHECK(weft__pq_remove(&q, 1) == WEFT_EINVAL);
    norder = 0;
    weft__pq_run_serial(&q);
    CHECK(norder == 2 && order[0] == 0 && order[1] == 2);
    CHECK(weft__pq_add(&q, order_cb, (void *)7) == 1); /* the freed slot */
    int k = 3;
    while (weft__pq_add(&q, order_cb, NULL) >= 0)
        k++;
    CHECK(k == WEFT__PQ_MAX);
    CHECK(weft__pq_add(&q, NULL, NULL) == WEFT_EINVAL);
    for (int i = 0; i < WEFT__PQ_MAX; i++)
        CHECK(weft__pq_remove(&q, i) == WEFT_OK);
    CHECK(weft__pq_remove(&q, -1) == WEFT_EINVAL &&
          weft__pq_remove(&q, WEFT__PQ_MAX) == WEFT_EINVAL);

    /* Shared runs against adds and removes. */
    probe_t steady = {0};
    CHECK(weft__pq_add(&q, probe_cb, &steady) >= 0);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, runner, NULL) == 0);
    long churn_calls = 0;
    int churn_bad = 0;
    for (int r = 0; r < ROUNDS; r++) {
        probe_t *p = calloc(1, sizeof *p);
        int id = weft__pq_add(&q, probe_cb, p);
        CHECK(id >= 0);
        for (int i = 0; i < 4; i++) /* this thread runs it too */
            weft__pq_run_shared(&q);
        CHECK(weft__pq_remove(&q, id) == WEFT_OK);
        atomic_store(&p->dead, 1);
        /* Whatever ran it has left: a late call would see dead (or, once
         * freed, touch freed memory under ASan). */
        CHECK(atomic_load(&p->inside) == 0);
        churn_calls += atomic_load(&p->calls);
        churn_bad |= atomic_load(&p->bad);
        free(p);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK(!churn_bad);
    CHECK(!atomic_load(&steady.bad));
    CHECK(atomic_load(&steady.calls) > 0);
    printf("test_progress_queue: steady callback ran %ld times, churned ones %ld\n",
           atomic_load(&steady.calls), churn_calls);
    weft__pq_destroy(&q);
    return test_summary("test_progress_queue");
}
