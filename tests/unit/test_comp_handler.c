/* The handler (progress_comp.c): init refuses a missing function; each
 * signal calls the function once, with the entry and the argument given at
 * init, in the signaling thread. weft__comp_valid knows the kinds. */
#include "comp_test.h"

typedef struct seen {
    int calls;
    weft_comp_entry_t last;
    pthread_t thread;
} seen_t;

static void on_done(const weft_comp_entry_t *e, void *arg)
{
    seen_t *s = arg;
    s->calls++;
    s->last = *e;
    s->thread = pthread_self();
}

static void *signal_from_thread(void *arg)
{
    comp_signal(arg, (void *)0x1234, WEFT_EPEERDEAD, 1, 5, 0);
    return NULL;
}

int main(void)
{
    test_watchdog(100);
    weft_handler_t h;
    seen_t s = {0};
    CHECK(weft_handler_init(NULL, on_done, &s) == WEFT_EINVAL);
    CHECK(weft_handler_init(&h, NULL, &s) == WEFT_EINVAL);
    MUST(weft_handler_init(&h, on_done, &s));
    CHECK(weft_handler_comp(&h)->kind == WEFT_COMP_HANDLER && weft__comp_valid(&h.comp));
    int uc;
    comp_signal(weft_handler_comp(&h), &uc, WEFT_OK, 2, 40, 100);
    CHECK(s.calls == 1 && entry_is(&s.last, &uc, WEFT_OK, 2, 40, 100));
    CHECK(pthread_equal(s.thread, pthread_self()));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, signal_from_thread, weft_handler_comp(&h)) == 0);
    pthread_join(t, NULL);
    CHECK(s.calls == 2 && entry_is(&s.last, (void *)0x1234, WEFT_EPEERDEAD, 1, 5, 0));
    CHECK(pthread_equal(s.thread, t));

    CHECK(!weft__comp_valid(NULL));
    weft_comp_t bad = {.kind = 0};
    CHECK(!weft__comp_valid(&bad));
    bad.kind = WEFT_COMP_HANDLER + 1;
    CHECK(!weft__comp_valid(&bad));
    return comp_summary("test_comp_handler");
}
