/* Intrusive doubly-linked lists: O(1) insert and removal, no allocation. */
#ifndef WEFT_LIST_H
#define WEFT_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

typedef struct weft_list {
    struct weft_list *next, *prev;
} weft_list_t;

#define WEFT_LIST_INIT(name)                                                                       \
    {                                                                                              \
        &(name), &(name)                                                                           \
    }

static inline void weft_list_init(weft_list_t *l)
{
    l->next = l->prev = l;
}

static inline bool weft_list_empty(const weft_list_t *l)
{
    return l->next == l;
}

static inline void weft_list__insert(weft_list_t *e, weft_list_t *prev, weft_list_t *next)
{
    next->prev = e;
    e->next = next;
    e->prev = prev;
    prev->next = e;
}

static inline void weft_list_push_back(weft_list_t *l, weft_list_t *e)
{
    weft_list__insert(e, l->prev, l);
}

static inline void weft_list_push_front(weft_list_t *l, weft_list_t *e)
{
    weft_list__insert(e, l, l->next);
}

/* Remove e from whatever list holds it; e is left self-linked, so removing it
 * twice is harmless. */
static inline void weft_list_remove(weft_list_t *e)
{
    e->next->prev = e->prev;
    e->prev->next = e->next;
    e->next = e->prev = e;
}

static inline weft_list_t *weft_list_front(const weft_list_t *l)
{
    return weft_list_empty(l) ? NULL : l->next;
}

static inline weft_list_t *weft_list_pop_front(weft_list_t *l)
{
    weft_list_t *e = weft_list_front(l);
    if (e)
        weft_list_remove(e);
    return e;
}

#define weft_list_entry(ptr, type, member) weft_container_of(ptr, type, member)

#define weft_list_for_each_safe(pos, tmp, head)                                                    \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head);                               \
         (pos) = (tmp), (tmp) = (pos)->next)

#endif
