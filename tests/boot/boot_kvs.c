/* The bootstrap store under weftrun (any number of ranks) or alone (singleton):
 * puts of every size up to the limit, fences, gets of every rank's keys,
 * missing keys, small buffers, several fences in a row, overwritten keys. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"
#include "boot/boot.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "boot_kvs: %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static const size_t sizes[] = {0, 1, 7, 100, 4096, 65535, WEFT_BOOT_VALUE_MAX};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* The byte at offset i of the value key k of rank r in epoch e. */
static uint8_t pattern(int r, int k, int e, size_t i)
{
    return (uint8_t)(i * 131 + (size_t)r * 17 + (size_t)k * 5 + (size_t)e * 3 + 1);
}

/* A key of the maximal length (255 bytes) that names rank r. */
static void long_key(char *key, int r)
{
    char tail[16];
    memset(key, 'k', WEFT_BOOT_KEY_MAX);
    int n = snprintf(tail, sizeof tail, "%d", r);
    memcpy(key + WEFT_BOOT_KEY_MAX - n, tail, (size_t)n);
    key[WEFT_BOOT_KEY_MAX] = 0;
}

static void fill(uint8_t *buf, size_t len, int r, int k, int e)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(r, k, e, i);
}

static int same(const uint8_t *buf, size_t len, int r, int k, int e)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern(r, k, e, i))
            return 0;
    return 1;
}

int main(void)
{
    weft_boot_t *b;
    int rc = weft__boot_init(&b);
    if (rc != WEFT_OK) {
        fprintf(stderr, "boot_kvs: init failed: %s\n", weft_strerror(rc));
        return 1;
    }
    int rank = weft__boot_rank(b), size = weft__boot_size(b);
    const char *id = weft__boot_job_id(b);
    CHECK(rank >= 0 && rank < size, "rank %d size %d", rank, size);
    CHECK(id && *id &&
              strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789_-") == strlen(id),
          "job id '%s'", id ? id : "(null)");
    const char *addr = getenv("WEFT_BOOT_ADDR");
    if (getenv("PMIX_NAMESPACE") && (!addr || !*addr))
        CHECK(rank >= 0 && rank < size, "PMIx: rank %d of %d", rank, size); /* under mpirun */
    else if (!addr || !*addr)
        CHECK(rank == 0 && size == 1, "singleton is rank %d of %d", rank, size);
    else
        CHECK(!strcmp(id, getenv("WEFT_JOBID")), "job id %s", id);

    uint8_t *buf = malloc(WEFT_BOOT_VALUE_MAX + 1);
    if (!buf)
        return 1;
    char key[WEFT_BOOT_KEY_MAX + 2];

    /* Every size, from every rank. */
    for (size_t k = 0; k < NSIZES; k++) {
        snprintf(key, sizeof key, "kvs-%d-%zu", rank, k);
        fill(buf, sizes[k], rank, (int)k, 0);
        rc = weft__boot_put(b, key, buf, sizes[k]);
        CHECK(rc == WEFT_OK, "put %s: %s", key, weft_strerror(rc));
    }
    /* A key of the maximal length. */
    long_key(key, rank);
    rc = weft__boot_put(b, key, &rank, sizeof rank);
    CHECK(rc == WEFT_OK, "put of a 255-byte key: %s", weft_strerror(rc));

    /* Bad arguments are refused, and do not break the connection. */
    rc = weft__boot_put(b, "too-big", buf, WEFT_BOOT_VALUE_MAX + 1);
    CHECK(rc == WEFT_EINVAL, "put of 64 KiB + 1: %s", weft_strerror(rc));
    memset(key, 'k', WEFT_BOOT_KEY_MAX + 1);
    key[WEFT_BOOT_KEY_MAX + 1] = 0;
    rc = weft__boot_put(b, key, "x", 1);
    CHECK(rc == WEFT_EINVAL, "put of a 256-byte key: %s", weft_strerror(rc));
    rc = weft__boot_put(b, "", "x", 1);
    CHECK(rc == WEFT_EINVAL, "put of an empty key: %s", weft_strerror(rc));

    /* Not visible before the fence, not even to the rank that put it. */
    size_t len = WEFT_BOOT_VALUE_MAX;
    snprintf(key, sizeof key, "kvs-%d-1", rank);
    rc = weft__boot_get(b, key, buf, &len);
    CHECK(rc == WEFT_ENOTFOUND, "get before fence: %s", weft_strerror(rc));

    rc = weft__boot_fence(b);
    CHECK(rc == WEFT_OK, "fence: %s", weft_strerror(rc));

    for (int r = 0; r < size; r++) {
        for (size_t k = 0; k < NSIZES; k++) {
            snprintf(key, sizeof key, "kvs-%d-%zu", r, k);
            len = WEFT_BOOT_VALUE_MAX + 1;
            memset(buf, 0xee, len);
            rc = weft__boot_get(b, key, buf, &len);
            CHECK(rc == WEFT_OK, "get %s: %s", key, weft_strerror(rc));
            CHECK(rc != WEFT_OK || len == sizes[k], "get %s: length %zu, expected %zu", key, len,
                  sizes[k]);
            CHECK(rc != WEFT_OK || same(buf, len, r, (int)k, 0), "get %s: wrong bytes", key);
            if (sizes[k] > 1) { /* too small a buffer: told the size, nothing written */
                len = sizes[k] - 1;
                memset(buf, 0xee, 4);
                rc = weft__boot_get(b, key, buf, &len);
                CHECK(rc == WEFT_ENOBUFS, "get %s into a small buffer: %s", key, weft_strerror(rc));
                CHECK(len == sizes[k], "ENOBUFS told %zu, expected %zu", len, sizes[k]);
                CHECK(buf[0] == 0xee, "ENOBUFS wrote into the buffer");
            }
        }
        long_key(key, r);
        int v = -1;
        len = sizeof v;
        rc = weft__boot_get(b, key, &v, &len);
        CHECK(rc == WEFT_OK && v == r, "long key of rank %d: %s, %d", r, weft_strerror(rc), v);
    }
    len = 16;
    rc = weft__boot_get(b, "no-such-key", buf, &len);
    CHECK(rc == WEFT_ENOTFOUND, "missing key: %s", weft_strerror(rc));
    len = 0;
    rc = weft__boot_get(b, "kvs-0-0", NULL, &len);
    CHECK(rc == WEFT_OK && len == 0, "empty value into no buffer: %s", weft_strerror(rc));

    /* Several fences in a row: each publishes what came before it; a key put
     * again holds its latest value; a fence with no puts is fine. */
    for (int e = 1; e <= 5; e++) {
        uint8_t small[64];
        fill(small, sizeof small, rank, 0, e);
        snprintf(key, sizeof key, "epoch-%d-%d", e, rank);
        rc = weft__boot_put(b, key, small, sizeof small);
        CHECK(rc == WEFT_OK, "put %s: %s", key, weft_strerror(rc));
        snprintf(key, sizeof key, "latest-%d", rank);
        rc = weft__boot_put(b, key, &e, sizeof e);
        CHECK(rc == WEFT_OK, "put %s: %s", key, weft_strerror(rc));
        rc = weft__boot_fence(b);
        CHECK(rc == WEFT_OK, "fence %d: %s", e, weft_strerror(rc));
        if (e == 3) {
            rc = weft__boot_fence(b);
            CHECK(rc == WEFT_OK, "empty fence: %s", weft_strerror(rc));
        }
        for (int r = 0; r < size; r++) {
            int peer = (rank + r) % size;
            snprintf(key, sizeof key, "epoch-%d-%d", e, peer);
            len = sizeof small;
            rc = weft__boot_get(b, key, small, &len);
            CHECK(rc == WEFT_OK && len == sizeof small && same(small, len, peer, 0, e),
                  "get %s: %s", key, weft_strerror(rc));
            snprintf(key, sizeof key, "latest-%d", peer);
            int v = 0;
            len = sizeof v;
            rc = weft__boot_get(b, key, &v, &len);
            CHECK(rc == WEFT_OK && v == e, "get %s: %s, %d instead of %d", key, weft_strerror(rc),
                  v, e);
        }
    }

    /* Every rank checks before anyone leaves. */
    rc = weft__boot_fence(b);
    CHECK(rc == WEFT_OK, "last fence: %s", weft_strerror(rc));
    weft__boot_fini(b);
    free(buf);
    if (failures) {
        fprintf(stderr, "boot_kvs: rank %d of %d: %d failures\n", rank, size, failures);
        return 1;
    }
    printf("boot_kvs: rank %d of %d ok\n", rank, size);
    return 0;
}
