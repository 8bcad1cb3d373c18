/* SipHash-2-4, written from the paper's description: four 64-bit words of state
 * keyed by k0/k1, two compression rounds per 8-byte word, the length in the last
 * word's top byte, four finalisation rounds. */
#include "util/siphash.h"

static inline uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

#define SIPROUND(v0, v1, v2, v3)                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = rotl(v1, 13);                                                                         \
        v1 ^= v0;                                                                                  \
        v0 = rotl(v0, 32);                                                                         \
        v2 += v3;                                                                                  \
        v3 = rotl(v3, 16);                                                                         \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = rotl(v3, 21);                                                                         \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = rotl(v1, 17);                                                                         \
        v1 ^= v2;                                                                                  \
        v2 = rotl(v2, 32);                                                                         \
    } while (0)

uint64_t weft__siphash24(const uint8_t key[WEFT_SIPHASH_KEY_LEN], const void *data, size_t len)
{
    const uint8_t *in = data;
    uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
    uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
    uint64_t v3 = 0x7465646279746573ULL ^ k1;
    size_t whole = len - len % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load_le64(in + i);
        v3 ^= m;
        SIPROUND(v0, v1, v2, v3);
        SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    for (size_t i = 0; i < len % 8; i++)
        b |= (uint64_t)in[whole + i] << (8 * i);
    v3 ^= b;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int i = 0; i < 4; i++)
        SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

int weft__memcmp_ct(const void *a, const void *b, size_t len)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= x[i] ^ y[i];
    return diff != 0;
}
