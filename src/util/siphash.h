/* SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit pseudo-random
 * function. weft uses it as a message authentication code in connection
 * handshakes: a side proves it knows the job secret by hashing the other side's
 * fresh nonce under it, so the secret itself never crosses the network.
 */
#ifndef WEFT_UTIL_SIPHASH_H
#define WEFT_UTIL_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_SIPHASH_KEY_LEN 16

/* The SipHash-2-4 of data[0..len) under a 16-byte key. Thread-safe (pure). */
uint64_t weft__siphash24(const uint8_t key[WEFT_SIPHASH_KEY_LEN], const void *data, size_t len);

/* Compare two byte strings in time that does not depend on where they differ:
 * returns 0 when equal. Thread-safe (pure). */
int weft__memcmp_ct(const void *a, const void *b, size_t len);

#endif
