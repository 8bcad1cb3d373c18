/* SipHash-2-4 against the reference vectors of the SipHash paper (key 00..0f,
 * messages 00..(n-1)), and the constant-time comparison. */
#include "../common/test_util.h"
#include "util/siphash.h"

int main(void)
{
    uint8_t key[16], msg[64];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (uint8_t)i;
    /* Vectors from the reference implementation's vectors.h (outputs read as
     * little-endian 64-bit words). */
    static const struct {
        size_t len;
        uint64_t out;
    } v[] = {
        {0, 0x726fdb47dd0e0e31ULL}, {1, 0x74f839c593dc67fdULL},  {7, 0xab0200f58b01d137ULL},
        {8, 0x93f5f5799a932462ULL}, {15, 0xa129ca6149be45e5ULL}, {63, 0x958a324ceb064572ULL},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint64_t h = weft__siphash24(key, msg, v[i].len);
        if (h != v[i].out)
            fprintf(stderr, "siphash len %zu: got %016llx want %016llx\n", v[i].len,
                    (unsigned long long)h, (unsigned long long)v[i].out);
        CHECK(h == v[i].out);
    }
    /* A different key gives a different hash. */
    key[0] ^= 1;
    CHECK(weft__siphash24(key, msg, 8) != 0x93f5f5799a932462ULL); /* the key matters */
    CHECK(weft__memcmp_ct("abcd", "abcd", 4) == 0);
    CHECK(weft__memcmp_ct("abcd", "abce", 4) != 0);
    return test_summary("siphash");
}
