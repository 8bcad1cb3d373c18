/* Unit tests of the constant-time matcher (src/core/match.c, seed 000):
 * deterministic cases per receive class, a randomized differential test against
 * a linear reference matcher, memory (no live entries once drained) and a
 * 100000-receive scale check. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "core/match.h"
#include "core/match_int.h"
#include "weft/weft.h"

#define ANY_SRC WEFT_MATCH_ANY_SOURCE
#define ANY_TAG WEFT_MATCH_ANY_TAG

static int passed, failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            fprintf(stderr, "FAIL %s:%d (%s): %s\n", __FILE__, __LINE__, __func__, #cond);         \
        }                                                                                          \
    } while (0)

/* A receive request and a message as a caller would embed them. */
typedef struct test_recv {
    weft__match_recv_t match;
    int id;
} test_recv_t;

typedef struct test_msg {
    weft__match_msg_t match;
    int id;
} test_msg_t;

static test_recv_t *recv_of(weft__match_recv_t *r)
{
    return r ? weft_container_of(r, test_recv_t, match) : NULL;
}

static test_msg_t *msg_of(weft__match_msg_t *m)
{
    return m ? weft_container_of(m, test_msg_t, match) : NULL;
}

static void recv_set(test_recv_t *r, int id, uint32_t comm, int32_t source, uint64_t tag)
{
    memset(r, 0, sizeof(*r));
    r->id = id;
    r->match.comm = comm;
    r->match.source = source;
    r->match.tag = tag;
}

static void msg_set(test_msg_t *m, int id, uint32_t comm, int32_t source, uint64_t tag)
{
    memset(m, 0, sizeof(*m));
    m->id = id;
    m->match.comm = comm;
    m->match.source = source;
    m->match.tag = tag;
}

/* Post a receive that must not find an unexpected message. */
static void post_none(weft__match_t *m, test_recv_t *r)
{
    int err = -100;
    weft__match_msg_t *got = weft__match_post(m, &r->match, &err);
    CHECK(err == WEFT_OK);
    CHECK(got == NULL);
}

/* A message arrives; returns the receive it matched, or records it unexpected. */
static test_recv_t *deliver(weft__match_t *m, test_msg_t *msg)
{
    weft__match_recv_t *r =
        weft__match_arrive(m, msg->match.comm, msg->match.source, msg->match.tag);
    if (!r)
        CHECK(weft__match_add_unexpected(m, &msg->match) == WEFT_OK);
    return recv_of(r);
}

static weft__match_t *new_matcher(void)
{
    weft__match_t *m = NULL;
    int rc = weft__match_create(&m);
    if (rc != WEFT_OK || !m) {
        fprintf(stderr, "FAIL: weft__match_create returned %d\n", rc);
        exit(1);
    }
    return m;
}

static void check_empty(weft__match_t *m)
{
    CHECK(weft__match_check(m));
    CHECK(weft__match_posted_count(m) == 0);
    CHECK(weft__match_unexpected_count(m) == 0);
    CHECK(weft__match_entry_count(m) == 0);
    CHECK(weft__match_lone_count(m) == 0);
}

/* Each receive class, with the message arriving after and before the post. */
static void test_classes(void)
{
    static const struct {
        int32_t source;
        uint64_t tag;
    } classes[] = {{3, 7}, {ANY_SRC, 7}, {3, ANY_TAG}, {ANY_SRC, ANY_TAG}};
    for (size_t c = 0; c < WEFT_ARRAY_SIZE(classes); c++) {
        weft__match_t *m = new_matcher();
        test_recv_t r;
        test_msg_t msg, other;

        /* Posted first. A message it does not match stays unexpected. */
        recv_set(&r, 1, 5, classes[c].source, classes[c].tag);
        post_none(m, &r);
        CHECK(weft__match_posted_count(m) == 1);
        msg_set(&other, 9, 6, 3, 7); /* other comm: matches no class */
        CHECK(deliver(m, &other) == NULL);
        CHECK(weft__match_unexpected_count(m) == 1);
        msg_set(&msg, 2, 5, 3, 7);
        CHECK(deliver(m, &msg) == &r);
        CHECK(weft__match_posted_count(m) == 0);
        CHECK(!weft__match_cancel(m, &r.match));

        /* Arrived first. */
        msg_set(&msg, 3, 5, 3, 7);
        CHECK(deliver(m, &msg) == NULL);
        CHECK(weft__match_unexpected_count(m) == 2);
        recv_set(&r, 4, 5, classes[c].source, classes[c].tag);
        int err = -100;
        CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg);
        CHECK(err == WEFT_OK);
        CHECK(weft__match_posted_count(m) == 0);
        CHECK(weft__match_unexpected_count(m) == 1);
        CHECK(!weft__match_cancel(m, &r.match));

        weft__match_remove_msg(m, &other.match);
        check_empty(m);
        weft__match_destroy(m);
    }
}

/* An arriving message goes to the oldest matching receive, whatever its class. */
static void test_oldest_first(void)
{
    weft__match_t *m = new_matcher();
    test_recv_t any, spec, src, tag;
    test_msg_t msg[4];

    recv_set(&any, 1, 0, ANY_SRC, ANY_TAG);
    recv_set(&spec, 2, 0, 1, 10);
    post_none(m, &any);
    post_none(m, &spec);
    msg_set(&msg[0], 0, 0, 1, 10);
    msg_set(&msg[1], 1, 0, 1, 10);
    CHECK(deliver(m, &msg[0]) == &any); /* older than spec */
    CHECK(deliver(m, &msg[1]) == &spec);
    check_empty(m);

    /* Four classes posted newest-specific-first: each message takes the oldest. */
    recv_set(&src, 3, 0, 1, ANY_TAG);
    recv_set(&tag, 4, 0, ANY_SRC, 10);
    recv_set(&spec, 5, 0, 1, 10);
    recv_set(&any, 6, 0, ANY_SRC, ANY_TAG);
    post_none(m, &src);
    post_none(m, &tag);
    post_none(m, &spec);
    post_none(m, &any);
    for (int i = 0; i < 4; i++)
        msg_set(&msg[i], i, 0, 1, 10);
    CHECK(deliver(m, &msg[0]) == &src);
    CHECK(deliver(m, &msg[1]) == &tag);
    CHECK(deliver(m, &msg[2]) == &spec);
    CHECK(deliver(m, &msg[3]) == &any);
    check_empty(m);

    /* A message only some classes match skips the older ones it does not. */
    recv_set(&spec, 7, 0, 2, 10); /* other source */
    recv_set(&src, 8, 0, 1, 11);  /* wrong: SPEC with tag 11 */
    recv_set(&tag, 9, 0, ANY_SRC, 10);
    post_none(m, &spec);
    post_none(m, &src);
    post_none(m, &tag);
    msg_set(&msg[0], 0, 0, 1, 10);
    CHECK(deliver(m, &msg[0]) == &tag);
    CHECK(weft__match_cancel(m, &spec.match));
    CHECK(weft__match_cancel(m, &src.match));
    check_empty(m);

    /* Unexpected messages: a wildcard receive takes the oldest over all keys. */
    msg_set(&msg[0], 0, 0, 2, 20);
    msg_set(&msg[1], 1, 0, 1, 10);
    msg_set(&msg[2], 2, 0, 1, 20);
    for (int i = 0; i < 3; i++)
        CHECK(deliver(m, &msg[i]) == NULL);
    int err;
    recv_set(&src, 10, 0, 1, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &src.match, &err)) == &msg[1]);
    recv_set(&tag, 11, 0, ANY_SRC, 20);
    CHECK(msg_of(weft__match_post(m, &tag.match, &err)) == &msg[0]);
    recv_set(&any, 12, 0, ANY_SRC, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &any.match, &err)) == &msg[2]);
    check_empty(m);
    weft__match_destroy(m);
}

/* No receive class ever crosses communicators. */
static void test_comm_isolation(void)
{
    weft__match_t *m = new_matcher();
    test_recv_t r[4];
    test_msg_t msg[4];
    int err;

    recv_set(&r[0], 0, 1, 0, 5);
    recv_set(&r[1], 1, 1, ANY_SRC, 5);
    recv_set(&r[2], 2, 1, 0, ANY_TAG);
    recv_set(&r[3], 3, 1, ANY_SRC, ANY_TAG);
    for (int i = 0; i < 4; i++)
        post_none(m, &r[i]);
    msg_set(&msg[0], 0, 2, 0, 5);
    CHECK(deliver(m, &msg[0]) == NULL);
    msg_set(&msg[1], 1, 0, 0, 5);
    CHECK(deliver(m, &msg[1]) == NULL);
    CHECK(weft__match_posted_count(m) == 4);
    CHECK(weft__match_unexpected_count(m) == 2);
    CHECK(weft__match_peek(m, 1, ANY_SRC, ANY_TAG) == NULL);
    CHECK(msg_of(weft__match_peek(m, 2, ANY_SRC, ANY_TAG)) == &msg[0]);
    CHECK(msg_of(weft__match_peek(m, 0, 0, 5)) == &msg[1]);
    for (int i = 0; i < 4; i++)
        CHECK(weft__match_cancel(m, &r[i].match));

    /* Posts on comm 3 do not take comm 2's or comm 0's messages either. */
    recv_set(&r[0], 4, 3, ANY_SRC, ANY_TAG);
    post_none(m, &r[0]);
    CHECK(weft__match_cancel(m, &r[0].match));
    recv_set(&r[0], 5, 2, ANY_SRC, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &r[0].match, &err)) == &msg[0]);
    recv_set(&r[0], 6, 0, 0, 5);
    CHECK(msg_of(weft__match_post(m, &r[0].match, &err)) == &msg[1]);
    check_empty(m);
    weft__match_destroy(m);
}

/* Extreme tag values: 0 and the largest tag that is not the wildcard. */
static void test_tag_values(void)
{
    weft__match_t *m = new_matcher();
    test_recv_t r;
    test_msg_t msg;

    recv_set(&r, 0, 0, 0, ANY_TAG);
    post_none(m, &r);
    msg_set(&msg, 0, 0, 0, UINT64_MAX - 1);
    CHECK(deliver(m, &msg) == &r);
    recv_set(&r, 1, 0, 0, 0);
    post_none(m, &r);
    msg_set(&msg, 1, 0, 0, 0);
    CHECK(deliver(m, &msg) == &r);
    recv_set(&r, 2, UINT32_MAX, INT32_MAX, UINT64_MAX - 1);
    post_none(m, &r);
    msg_set(&msg, 2, UINT32_MAX, INT32_MAX, UINT64_MAX - 1);
    CHECK(deliver(m, &msg) == &r);

    /* The wildcards are never message values. */
    recv_set(&r, 3, 0, ANY_SRC, ANY_TAG);
    post_none(m, &r);
    CHECK(weft__match_arrive(m, 0, 0, ANY_TAG) == NULL);
    CHECK(weft__match_arrive(m, 0, ANY_SRC, 1) == NULL);
    msg_set(&msg, 3, 0, 0, ANY_TAG);
    CHECK(weft__match_add_unexpected(m, &msg.match) == WEFT_EINVAL);
    msg_set(&msg, 4, 0, ANY_SRC, 1);
    CHECK(weft__match_add_unexpected(m, &msg.match) == WEFT_EINVAL);
    CHECK(weft__match_cancel(m, &r.match));
    check_empty(m);
    weft__match_destroy(m);
}

static void test_cancel(void)
{
    weft__match_t *m = new_matcher();
    test_recv_t a, b, never;
    test_msg_t msg;

    recv_set(&never, 0, 0, 1, 1);
    CHECK(!weft__match_cancel(m, &never.match));
    recv_set(&a, 1, 0, 1, 1);
    recv_set(&b, 2, 0, 1, 1);
    post_none(m, &a);
    post_none(m, &b);
    CHECK(weft__match_posted_count(m) == 2);
    CHECK(weft__match_cancel(m, &a.match));
    CHECK(!weft__match_cancel(m, &a.match));
    CHECK(weft__match_posted_count(m) == 1);
    msg_set(&msg, 0, 0, 1, 1);
    CHECK(deliver(m, &msg) == &b); /* the cancelled one is gone */
    CHECK(!weft__match_cancel(m, &b.match));
    check_empty(m);
    weft__match_destroy(m);
}

static void test_peek_remove(void)
{
    weft__match_t *m = new_matcher();
    test_msg_t msg[3];

    CHECK(weft__match_peek(m, 0, ANY_SRC, ANY_TAG) == NULL);
    msg_set(&msg[0], 0, 0, 1, 1);
    msg_set(&msg[1], 1, 0, 2, 1);
    msg_set(&msg[2], 2, 0, 1, 2);
    for (int i = 0; i < 3; i++)
        CHECK(deliver(m, &msg[i]) == NULL);
    CHECK(weft__match_unexpected_count(m) == 3);
    CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, ANY_TAG)) == &msg[0]);
    CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, ANY_TAG)) == &msg[0]); /* left in place */
    CHECK(msg_of(weft__match_peek(m, 0, 1, ANY_TAG)) == &msg[0]);
    CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, 2)) == &msg[2]);
    CHECK(msg_of(weft__match_peek(m, 0, 2, 1)) == &msg[1]);
    CHECK(weft__match_peek(m, 0, 2, 2) == NULL);
    CHECK(weft__match_peek(m, 1, ANY_SRC, ANY_TAG) == NULL);
    CHECK(weft__match_unexpected_count(m) == 3);

    weft__match_remove_msg(m, &msg[0].match);
    CHECK(weft__match_unexpected_count(m) == 2);
    weft__match_remove_msg(m, &msg[0].match); /* twice: harmless */
    CHECK(weft__match_unexpected_count(m) == 2);
    CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, ANY_TAG)) == &msg[1]);
    CHECK(msg_of(weft__match_peek(m, 0, 1, ANY_TAG)) == &msg[2]);
    CHECK(weft__match_peek(m, 0, 1, 1) == NULL);
    weft__match_remove_msg(m, weft__match_peek(m, 0, ANY_SRC, 1));
    weft__match_remove_msg(m, weft__match_peek(m, 0, ANY_SRC, ANY_TAG));
    check_empty(m);
    weft__match_destroy(m);
}

/* Out of memory while creating entries: nothing is posted or recorded, no entry
 * is leaked, and the matcher works again once memory returns. */
static void test_enomem(void)
{
    weft__match_t *m = new_matcher();
    test_recv_t r;
    test_msg_t msg, second;
    int err;

    /* No wildcard receive has looked: a message alone under its key needs no
     * entry, so it is recorded even when no memory can be had. */
    weft__match_fail_allocs_after(m, 0);
    msg_set(&msg, 0, 0, 1, 1);
    CHECK(weft__match_add_unexpected(m, &msg.match) == WEFT_OK);
    CHECK(weft__match_lone_count(m) == 1 && weft__match_entry_count(m) == 0);
    /* A second message with that key needs the entry whose FIFO keeps both in
     * order: without it, nothing changes. */
    msg_set(&second, 1, 0, 1, 1);
    CHECK(weft__match_add_unexpected(m, &second.match) == WEFT_ENOMEM);
    CHECK(!weft__match_msg_inside(&second.match));
    CHECK(weft__match_unexpected_count(m) == 1);
    CHECK(weft__match_lone_count(m) == 1 && weft__match_entry_count(m) == 0);
    weft__match_fail_allocs_after(m, -1);
    CHECK(weft__match_add_unexpected(m, &second.match) == WEFT_OK);
    CHECK(weft__match_lone_count(m) == 0 && weft__match_entry_count(m) == 1);
    recv_set(&r, 0, 0, 1, 1);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg && err == WEFT_OK);
    recv_set(&r, 1, 0, 1, 1);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &second && err == WEFT_OK);
    check_empty(m);
    /* A receive alone under its key needs no entry either; a second one with
     * that key needs the entry whose FIFO keeps both in posting order. */
    weft__match_fail_allocs_after(m, 0);
    test_recv_t later;
    recv_set(&r, 2, 0, 1, 2);
    post_none(m, &r);
    CHECK(weft__match_lone_count(m) == 1 && weft__match_entry_count(m) == 0);
    recv_set(&later, 3, 0, 1, 2);
    CHECK(weft__match_post(m, &later.match, &err) == NULL);
    CHECK(err == WEFT_ENOMEM);
    CHECK(!weft__match_cancel(m, &later.match));
    CHECK(weft__match_posted_count(m) == 1);
    CHECK(weft__match_lone_count(m) == 1 && weft__match_entry_count(m) == 0);
    weft__match_fail_allocs_after(m, -1);
    post_none(m, &later);
    CHECK(weft__match_lone_count(m) == 0 && weft__match_entry_count(m) == 1);
    msg_set(&msg, 2, 0, 1, 2);
    CHECK(deliver(m, &msg) == &r);
    msg_set(&second, 3, 0, 1, 2);
    CHECK(deliver(m, &second) == &later);
    check_empty(m);

    weft__match_fail_allocs_after(m, -1);
    msg_set(&msg, 0, 0, 1, 1);
    CHECK(deliver(m, &msg) == NULL);
    /* An existing entry needs no allocation: posting still works. */
    weft__match_fail_allocs_after(m, 0);
    recv_set(&r, 1, 0, 1, 1);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg);
    CHECK(err == WEFT_OK);
    weft__match_fail_allocs_after(m, -1);
    check_empty(m);
    weft__match_destroy(m);
}

/* Out of memory with the wildcard FIFOs in play: indexing the waiting messages
 * for the first wildcard receive, and adding a message while they are kept. */
static void test_enomem_wild(void)
{
    weft__match_t *m = new_matcher();
    test_recv_t r;
    test_msg_t old[2], msg;
    int err;

    msg_set(&old[0], 0, 0, 1, 7);
    msg_set(&old[1], 1, 0, 2, 8);
    CHECK(deliver(m, &old[0]) == NULL);
    CHECK(deliver(m, &old[1]) == NULL);
    CHECK(weft__match_entry_count(m) == 0 && weft__match_lone_count(m) == 2);
    /* Indexing two messages makes 5 entries: (0,1,*), (0,*,*), (0,*,7), (0,2,*),
     * (0,*,8). Failing at any of them posts nothing and leaves them unindexed. */
    for (long after = 0; after < 5; after++) {
        weft__match_fail_allocs_after(m, after);
        recv_set(&r, 0, 0, ANY_SRC, 8);
        CHECK(weft__match_post(m, &r.match, &err) == NULL);
        CHECK(err == WEFT_ENOMEM);
        CHECK(!weft__match_cancel(m, &r.match));
        CHECK(weft__match_entry_count(m) == 0);
        CHECK(weft__match_unexpected_count(m) == 2);
        /* A probe still finds the oldest message, by walking. */
        CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, ANY_TAG)) == &old[0]);
        CHECK(msg_of(weft__match_peek(m, 0, 2, ANY_TAG)) == &old[1]);
        CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, 8)) == &old[1]);
        CHECK(weft__match_peek(m, 0, 3, ANY_TAG) == NULL);
        CHECK(weft__match_entry_count(m) == 0);
    }
    weft__match_fail_allocs_after(m, -1);
    CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, ANY_TAG)) == &old[0]);
    CHECK(weft__match_entry_count(m) == 5);
    /* The wildcard FIFOs are kept now: a message with a new source and tag needs
     * two new entries, (0,3,*) and (0,*,9) (the communicator's exists, and the
     * message is alone under its exact key), and a failure at either records
     * nothing. */
    for (long after = 0; after < 2; after++) {
        weft__match_fail_allocs_after(m, after);
        msg_set(&msg, 2, 0, 3, 9);
        CHECK(weft__match_add_unexpected(m, &msg.match) == WEFT_ENOMEM);
        CHECK(weft__match_unexpected_count(m) == 2);
        CHECK(weft__match_entry_count(m) == 5 && weft__match_lone_count(m) == 2);
    }
    /* A second message under old[0]'s key needs its exact-key entry only. */
    weft__match_fail_allocs_after(m, 0);
    msg_set(&msg, 2, 0, 1, 7);
    CHECK(weft__match_add_unexpected(m, &msg.match) == WEFT_ENOMEM);
    CHECK(weft__match_unexpected_count(m) == 2);
    CHECK(weft__match_entry_count(m) == 5 && weft__match_lone_count(m) == 2);
    weft__match_fail_allocs_after(m, -1);
    CHECK(weft__match_add_unexpected(m, &msg.match) == WEFT_OK);
    CHECK(weft__match_entry_count(m) == 6 && weft__match_lone_count(m) == 1);
    recv_set(&r, 0, 0, ANY_SRC, 8);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &old[1]);
    recv_set(&r, 1, 0, ANY_SRC, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &old[0]);
    recv_set(&r, 2, 0, 1, 7);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg);
    check_empty(m);
    /* A message whose exact-key entry is parked, with the wildcard FIFOs
     * kept and its wildcard entries still to make: a failure there records
     * nothing, and the emptied entry goes at once (a roll-back). */
    msg_set(&old[0], 0, 0, 5, 5);
    CHECK(deliver(m, &old[0]) == NULL);
    msg_set(&old[1], 1, 0, 5, 5);
    CHECK(deliver(m, &old[1]) == NULL);                                 /* (0,5,5) gets its entry */
    CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, ANY_TAG)) == &old[0]); /* FIFOs kept */
    for (int k = 0; k < 2; k++) {
        recv_set(&r, k, 0, 5, 5);
        CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &old[k]);
    }
    check_empty(m);
    /* (0,6,6) taken by a wildcard receive parks its wildcard entries in place
     * of (0,5,*) and (0,*,5); (0,7,7) then keeps the wildcard FIFOs again. */
    msg_set(&old[0], 2, 0, 6, 6);
    CHECK(deliver(m, &old[0]) == NULL);
    recv_set(&r, 2, 0, ANY_SRC, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &old[0]);
    msg_set(&old[0], 2, 0, 7, 7);
    CHECK(deliver(m, &old[0]) == NULL);
    CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, ANY_TAG)) == &old[0]);
    size_t entries = weft__match_entry_count(m), parked = weft__match_parked_count(m);
    weft__match_fail_allocs_after(m, 0);
    msg_set(&msg, 3, 0, 5, 5);
    CHECK(weft__match_add_unexpected(m, &msg.match) == WEFT_ENOMEM);
    CHECK(!weft__match_msg_inside(&msg.match));
    CHECK(weft__match_unexpected_count(m) == 1 && weft__match_check(m));
    CHECK(weft__match_entry_count(m) == entries);
    CHECK(weft__match_parked_count(m) == parked - 1); /* (0,5,5)'s went */
    weft__match_fail_allocs_after(m, -1);
    CHECK(weft__match_add_unexpected(m, &msg.match) == WEFT_OK);
    recv_set(&r, 3, 0, ANY_SRC, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &old[0]);
    recv_set(&r, 4, 0, ANY_SRC, 5);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg);
    check_empty(m);
    weft__match_destroy(m);
}

/* A message recorded while a receive naming its source and tag is posted
 * (the caller skipped weft__match_arrive) is refused, whether the receive is
 * alone under the key or shares an entry, and nothing changes. */
static void test_add_without_arrive(void)
{
    weft__match_t *m = new_matcher();
    test_recv_t r[2];
    test_msg_t msg;
    for (int k = 0; k < 2; k++) {
        recv_set(&r[k], k, 0, 1, 1);
        post_none(m, &r[k]);
        msg_set(&msg, k, 0, 1, 1);
        CHECK(weft__match_add_unexpected(m, &msg.match) == WEFT_EINVAL);
        CHECK(!weft__match_msg_inside(&msg.match));
        CHECK(weft__match_unexpected_count(m) == 0 && weft__match_check(m));
    }
    for (int k = 0; k < 2; k++)
        CHECK(recv_of(weft__match_arrive(m, 0, 1, 1)) == &r[k]);
    check_empty(m);
    weft__match_destroy(m);
}

/* The entry that empties last stays parked in its table: receives or
 * messages with its key reuse it without an allocation, the next entry that
 * empties in the same table replaces it, and a table parks one at most. An
 * exact key gets an entry only for a second receive or message: one alone
 * under its key needs none. */
static void test_parked_entry(void)
{
    weft__match_t *m = new_matcher();
    test_recv_t r[2];
    test_msg_t msg[2];
    int err;

    recv_set(&r[0], 0, 0, 1, 5);
    post_none(m, &r[0]);
    recv_set(&r[1], 1, 0, 1, 5);
    post_none(m, &r[1]);
    CHECK(weft__match_entry_count(m) == 1 && weft__match_lone_count(m) == 0);
    msg_set(&msg[0], 0, 0, 1, 5);
    CHECK(deliver(m, &msg[0]) == &r[0]);
    msg_set(&msg[1], 1, 0, 1, 5);
    CHECK(deliver(m, &msg[1]) == &r[1]);
    check_empty(m);
    CHECK(weft__match_parked_count(m) == 1);
    /* Every allocation fails now, yet key (0, 1, 5) is served by the parked
     * entry, posted or unexpected, however many wait. */
    weft__match_fail_allocs_after(m, 0);
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 2; k++) {
            recv_set(&r[k], 2 * i + k, 0, 1, 5);
            post_none(m, &r[k]);
            CHECK(weft__match_entry_count(m) == 1 && weft__match_parked_count(m) == 0);
            CHECK(weft__match_lone_count(m) == 0);
        }
        for (int k = 0; k < 2; k++) {
            msg_set(&msg[k], 2 * i + k, 0, 1, 5);
            CHECK(deliver(m, &msg[k]) == &r[k]);
        }
        for (int k = 0; k < 2; k++)
            CHECK(deliver(m, &msg[k]) == NULL); /* unexpected, same entry */
        CHECK(weft__match_lone_count(m) == 0);
        for (int k = 0; k < 2; k++)
            CHECK(msg_of(weft__match_post(m, &r[k].match, &err)) == &msg[k] && err == WEFT_OK);
        check_empty(m);
        CHECK(weft__match_parked_count(m) == 1);
    }
    /* A new key: its first receive goes alone, its second needs an entry. */
    recv_set(&r[0], 9, 0, 1, 6);
    post_none(m, &r[0]);
    CHECK(weft__match_lone_count(m) == 1 && weft__match_entry_count(m) == 0);
    recv_set(&r[1], 10, 0, 1, 6);
    CHECK(weft__match_post(m, &r[1].match, &err) == NULL && err == WEFT_ENOMEM);
    CHECK(!weft__match_cancel(m, &r[1].match));
    weft__match_fail_allocs_after(m, -1);
    post_none(m, &r[1]);
    CHECK(weft__match_entry_count(m) == 1 && weft__match_lone_count(m) == 0);
    CHECK(weft__match_parked_count(m) == 1);
    /* Its entry empties: it replaces the parked one, which goes. */
    for (int k = 0; k < 2; k++) {
        msg_set(&msg[k], 9 + k, 0, 1, 6);
        CHECK(deliver(m, &msg[k]) == &r[k]);
    }
    check_empty(m);
    CHECK(weft__match_parked_count(m) == 1);
    weft__match_fail_allocs_after(m, 0);
    recv_set(&r[0], 11, 0, 1, 5);
    post_none(m, &r[0]);
    recv_set(&r[1], 12, 0, 1, 5);
    CHECK(weft__match_post(m, &r[1].match, &err) == NULL && err == WEFT_ENOMEM);
    CHECK(weft__match_cancel(m, &r[0].match));
    for (int k = 0; k < 2; k++) {
        recv_set(&r[k], 13 + k, 0, 1, 6);
        post_none(m, &r[k]);
    }
    CHECK(weft__match_entry_count(m) == 1 && weft__match_lone_count(m) == 0);
    CHECK(weft__match_cancel(m, &r[1].match));
    CHECK(weft__match_cancel(m, &r[0].match));
    weft__match_fail_allocs_after(m, -1);
    /* Wildcard receives park in their own tables, one each. */
    test_recv_t any;
    recv_set(&any, 15, 0, ANY_SRC, ANY_TAG);
    post_none(m, &any);
    recv_set(&r[0], 16, 0, 1, ANY_TAG);
    post_none(m, &r[0]);
    CHECK(weft__match_cancel(m, &r[0].match));
    CHECK(weft__match_cancel(m, &any.match));
    check_empty(m);
    CHECK(weft__match_parked_count(m) == 3);
    weft__match_destroy(m);
}

/* Messages that arrived while no wildcard receive looked are indexed in
 * arrival order when the first one comes, across keys and sources; messages
 * arriving after that go into every FIFO at once; an empty queue stops it. */
static void test_lazy_wild(void)
{
    weft__match_t *m = new_matcher();
    test_recv_t r;
    test_msg_t msg[6];
    int err;

    msg_set(&msg[0], 0, 0, 0, 5);
    msg_set(&msg[1], 1, 0, 1, 3);
    msg_set(&msg[2], 2, 0, 0, 3);
    msg_set(&msg[3], 3, 0, 1, 5);
    for (int i = 0; i < 4; i++)
        CHECK(deliver(m, &msg[i]) == NULL);
    CHECK(weft__match_entry_count(m) == 0 && weft__match_lone_count(m) == 4);
    recv_set(&r, 0, 0, ANY_SRC, 3);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg[1]);
    msg_set(&msg[4], 4, 0, 0, 7);
    CHECK(deliver(m, &msg[4]) == NULL);
    recv_set(&r, 1, 0, 0, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg[0]);
    CHECK(msg_of(weft__match_peek(m, 0, ANY_SRC, ANY_TAG)) == &msg[2]);
    recv_set(&r, 2, 0, 0, 3);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg[2]);
    recv_set(&r, 3, 0, ANY_SRC, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg[3]);
    recv_set(&r, 4, 0, 0, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg[4]);
    check_empty(m);
    /* Empty again: the next message takes no entry at all. */
    msg_set(&msg[5], 5, 0, 1, 9);
    CHECK(deliver(m, &msg[5]) == NULL);
    CHECK(weft__match_entry_count(m) == 0 && weft__match_lone_count(m) == 1);
    recv_set(&r, 5, 0, ANY_SRC, ANY_TAG);
    CHECK(msg_of(weft__match_post(m, &r.match, &err)) == &msg[5]);
    check_empty(m);
    weft__match_destroy(m);
}

/* ---- Differential test against a linear reference matcher ---- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    /* splitmix64: small, deterministic per seed */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint32_t rng_below(uint32_t n)
{
    return (uint32_t)(rng() % n);
}

static bool recv_matches(const weft__match_recv_t *r, uint32_t comm, int32_t source, uint64_t tag)
{
    return r->comm == comm && (r->source == ANY_SRC || r->source == source) &&
           (r->tag == ANY_TAG || r->tag == tag);
}

/* The reference: posted receives in posting order, unexpected messages in
 * arrival order, each operation a linear scan. Obviously right, O(n). */
typedef struct ref {
    test_recv_t **posted;
    size_t nposted;
    test_msg_t **unexpected;
    size_t nunexpected;
} ref_t;

static void ref_remove_at(void **array, size_t *n, size_t i)
{
    memmove(&array[i], &array[i + 1], (*n - i - 1) * sizeof(*array));
    (*n)--;
}

static test_recv_t *ref_arrive(ref_t *ref, const test_msg_t *msg)
{
    for (size_t i = 0; i < ref->nposted; i++) {
        test_recv_t *r = ref->posted[i];
        if (recv_matches(&r->match, msg->match.comm, msg->match.source, msg->match.tag)) {
            ref_remove_at((void **)ref->posted, &ref->nposted, i);
            return r;
        }
    }
    return NULL;
}

static size_t ref_find_msg(const ref_t *ref, const weft__match_recv_t *pattern)
{
    for (size_t i = 0; i < ref->nunexpected; i++) {
        const test_msg_t *msg = ref->unexpected[i];
        if (recv_matches(pattern, msg->match.comm, msg->match.source, msg->match.tag))
            return i;
    }
    return SIZE_MAX;
}

static bool ref_cancel(ref_t *ref, const test_recv_t *r)
{
    for (size_t i = 0; i < ref->nposted; i++) {
        if (ref->posted[i] == r) {
            ref_remove_at((void **)ref->posted, &ref->nposted, i);
            return true;
        }
    }
    return false;
}

static void random_key(uint32_t *comm, int32_t *source, uint64_t *tag)
{
    /* Small ranges so that matches are frequent; tags include 0 and big values. */
    static const uint64_t tags[] = {0, 1, 2, 1024, 2048, (uint64_t)1 << 40, UINT64_MAX - 1};
    *comm = rng_below(3);
    *source = (int32_t)rng_below(4);
    *tag = tags[rng_below(WEFT_ARRAY_SIZE(tags))];
}

/* One random sequence; returns false at the first disagreement. rare_wild:
 * one post in 32 is a wildcard (instead of three in four), so the unexpected
 * queue grows long before a wildcard receive makes the matcher index it. */
static bool differential_run(uint64_t seed, int nops, bool rare_wild)
{
    rng_state = seed;
    weft__match_t *m = new_matcher();
    test_recv_t *recvs = calloc((size_t)nops, sizeof(*recvs));
    test_msg_t *msgs = calloc((size_t)nops, sizeof(*msgs));
    ref_t ref = {
        .posted = calloc((size_t)nops, sizeof(test_recv_t *)),
        .unexpected = calloc((size_t)nops, sizeof(test_msg_t *)),
    };
    int nrecvs = 0, nmsgs = 0;
    bool ok = recvs && msgs && ref.posted && ref.unexpected;
    if (!ok)
        fprintf(stderr, "FAIL: out of memory in differential test\n");

    for (int op = 0; ok && op < nops; op++) {
        uint32_t kind = rng_below(100);
        uint32_t comm;
        int32_t source;
        uint64_t tag;
        random_key(&comm, &source, &tag);
        if (kind < 40) { /* post, of a random class */
            test_recv_t *r = &recvs[nrecvs];
            uint32_t cls = rare_wild ? (rng_below(32) ? 0 : 1 + rng_below(3)) : rng_below(4);
            recv_set(r, nrecvs++, comm, (cls & 1) ? ANY_SRC : source, (cls & 2) ? ANY_TAG : tag);
            size_t want = ref_find_msg(&ref, &r->match);
            int err = -100;
            test_msg_t *got = msg_of(weft__match_post(m, &r->match, &err));
            test_msg_t *expect = NULL;
            if (want != SIZE_MAX) {
                expect = ref.unexpected[want];
                ref_remove_at((void **)ref.unexpected, &ref.nunexpected, want);
            } else {
                ref.posted[ref.nposted++] = r;
            }
            if (err != WEFT_OK || got != expect) {
                fprintf(stderr, "FAIL seed %" PRIu64 " op %d post: got msg %d, want %d\n", seed, op,
                        got ? got->id : -1, expect ? expect->id : -1);
                ok = false;
            }
        } else if (kind < 80) { /* arrival */
            test_msg_t *msg = &msgs[nmsgs];
            msg_set(msg, nmsgs++, comm, source, tag);
            test_recv_t *expect = ref_arrive(&ref, msg);
            test_recv_t *got = recv_of(weft__match_arrive(m, comm, source, tag));
            if (!got) {
                if (weft__match_add_unexpected(m, &msg->match) != WEFT_OK) {
                    fprintf(stderr, "FAIL seed %" PRIu64 " op %d add_unexpected\n", seed, op);
                    ok = false;
                }
            }
            if (!expect)
                ref.unexpected[ref.nunexpected++] = msg;
            if (got != expect) {
                fprintf(stderr, "FAIL seed %" PRIu64 " op %d arrive: got recv %d, want %d\n", seed,
                        op, got ? got->id : -1, expect ? expect->id : -1);
                ok = false;
            }
        } else if (kind < 90) { /* cancel a random receive, posted or not */
            if (nrecvs == 0)
                continue;
            test_recv_t *r = &recvs[rng_below((uint32_t)nrecvs)];
            bool expect = ref_cancel(&ref, r);
            bool got = weft__match_cancel(m, &r->match);
            if (got != expect) {
                fprintf(stderr, "FAIL seed %" PRIu64 " op %d cancel recv %d: got %d, want %d\n",
                        seed, op, r->id, got, expect);
                ok = false;
            }
        } else if (kind < 99) { /* peek, then maybe remove */
            weft__match_recv_t pattern = {.comm = comm,
                                          .source = rng_below(2) ? ANY_SRC : source,
                                          .tag = rng_below(2) ? ANY_TAG : tag};
            size_t want = ref_find_msg(&ref, &pattern);
            test_msg_t *expect = want == SIZE_MAX ? NULL : ref.unexpected[want];
            test_msg_t *got =
                msg_of(weft__match_peek(m, pattern.comm, pattern.source, pattern.tag));
            if (got != expect) {
                fprintf(stderr, "FAIL seed %" PRIu64 " op %d peek: got msg %d, want %d\n", seed, op,
                        got ? got->id : -1, expect ? expect->id : -1);
                ok = false;
            } else if (got && rng_below(2)) {
                weft__match_remove_msg(m, &got->match);
                ref_remove_at((void **)ref.unexpected, &ref.nunexpected, want);
            }
        } else { /* drain everything now and then, so entries are freed and reused */
            while (ref.nposted > 0) {
                test_recv_t *r = ref.posted[ref.nposted - 1];
                ref.nposted--;
                ok = ok && weft__match_cancel(m, &r->match);
            }
            while (ref.nunexpected > 0) {
                weft__match_remove_msg(m, &ref.unexpected[0]->match);
                ref_remove_at((void **)ref.unexpected, &ref.nunexpected, 0);
            }
            if (!ok || weft__match_entry_count(m) != 0 || weft__match_lone_count(m) != 0) {
                fprintf(stderr, "FAIL seed %" PRIu64 " op %d drain: %zu entries left\n", seed, op,
                        weft__match_entry_count(m));
                ok = false;
            }
        }
        if (ok && !weft__match_check(m)) {
            fprintf(stderr, "FAIL seed %" PRIu64 " op %d: exact-key chains inconsistent\n", seed,
                    op);
            ok = false;
        }
        if (ok && (weft__match_posted_count(m) != ref.nposted ||
                   weft__match_unexpected_count(m) != ref.nunexpected)) {
            fprintf(stderr,
                    "FAIL seed %" PRIu64 " op %d counts: posted %zu/%zu unexpected %zu/%zu\n", seed,
                    op, weft__match_posted_count(m), ref.nposted, weft__match_unexpected_count(m),
                    ref.nunexpected);
            ok = false;
        }
    }

    /* Drain the rest through the public calls; nothing may stay behind. */
    if (ok) {
        for (size_t i = 0; i < ref.nposted; i++)
            ok = ok && weft__match_cancel(m, &ref.posted[i]->match);
        for (uint32_t comm = 0; comm < 3; comm++) {
            weft__match_msg_t *msg;
            while ((msg = weft__match_peek(m, comm, ANY_SRC, ANY_TAG)))
                weft__match_remove_msg(m, msg);
        }
        if (!ok || weft__match_posted_count(m) || weft__match_unexpected_count(m) ||
            weft__match_entry_count(m) || weft__match_lone_count(m)) {
            fprintf(stderr, "FAIL seed %" PRIu64 " final drain: %zu entries left\n", seed,
                    weft__match_entry_count(m));
            ok = false;
        }
    }
    weft__match_destroy(m);
    free(ref.posted);
    free(ref.unexpected);
    free(recvs);
    free(msgs);
    return ok;
}

static void test_differential(void)
{
    for (uint64_t seed = 1; seed <= 200; seed++)
        CHECK(differential_run(seed, 5000, false));
    for (uint64_t seed = 1; seed <= 100; seed++)
        CHECK(differential_run(seed, 5000, true));
}

/* ---- Scale ---- */

static void shuffle(uint64_t *a, size_t n)
{
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(rng() % (i + 1));
        uint64_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* 100000 receives of distinct tags, then their messages in shuffled order; and
 * the same with the messages first. Tags are multiples of 1024, the pattern a
 * weak hash folds onto a few buckets. */
static void test_scale(void)
{
    enum { N = 100000 };
    weft__match_t *m = new_matcher();
    test_recv_t *recvs = calloc(N, sizeof(*recvs));
    test_msg_t *msgs = calloc(N, sizeof(*msgs));
    uint64_t *order = calloc(N, sizeof(*order));
    if (!recvs || !msgs || !order) {
        fprintf(stderr, "FAIL: out of memory in scale test\n");
        failed++;
        goto out;
    }
    size_t buckets_empty = weft__match_bucket_count(m);
    rng_state = 12345;

    for (int i = 0; i < N; i++) {
        recv_set(&recvs[i], i, 7, 1, (uint64_t)i * 1024);
        post_none(m, &recvs[i]);
        order[i] = (uint64_t)i;
    }
    CHECK(weft__match_posted_count(m) == N);
    CHECK(weft__match_lone_count(m) == N && weft__match_entry_count(m) == 0);
    CHECK(weft__match_bucket_count(m) >= N); /* it grew */
    shuffle(order, N);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        uint64_t k = order[i];
        weft__match_recv_t *r = weft__match_arrive(m, 7, 1, k * 1024);
        bad += recv_of(r) != &recvs[k];
    }
    CHECK(bad == 0);
    check_empty(m);
    /* and shrank back to the floor (no table keeps 100000 buckets) */
    size_t buckets_drained = weft__match_bucket_count(m);
    CHECK(buckets_drained <= WEFT_MATCH_NIDX * WEFT_MATCH_SHRINK_FLOOR);
    CHECK(buckets_drained >= buckets_empty);

    for (int i = 0; i < N; i++) {
        msg_set(&msgs[i], i, 7, 1, (uint64_t)i * 1024);
        CHECK(deliver(m, &msgs[i]) == NULL);
        order[i] = (uint64_t)i;
    }
    CHECK(weft__match_unexpected_count(m) == N);
    CHECK(weft__match_lone_count(m) == N && weft__match_entry_count(m) == 0);
    CHECK(weft__match_bucket_count(m) >= N); /* lone messages grow the table too */
    shuffle(order, N);
    bad = 0;
    for (int i = 0; i < N; i++) {
        uint64_t k = order[i];
        int err;
        recv_set(&recvs[k], (int)k, 7, 1, k * 1024);
        bad += msg_of(weft__match_post(m, &recvs[k].match, &err)) != &msgs[k] || err != WEFT_OK;
    }
    CHECK(bad == 0);
    check_empty(m);
    /* the unexpected burst grew the exact-key table; it is back at the floor */
    CHECK(weft__match_bucket_count(m) <= WEFT_MATCH_NIDX * WEFT_MATCH_SHRINK_FLOOR);

out:
    weft__match_destroy(m);
    free(recvs);
    free(msgs);
    free(order);
}

int main(void)
{
    test_classes();
    test_oldest_first();
    test_comm_isolation();
    test_tag_values();
    test_cancel();
    test_peek_remove();
    test_enomem();
    test_enomem_wild();
    test_add_without_arrive();
    test_parked_entry();
    test_lazy_wild();
    test_differential();
    test_scale();
    printf("test_match: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
