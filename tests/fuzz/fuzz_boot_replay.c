/* Runs the store protocol's fuzz target without libFuzzer, like fuzz_replay.c
 * does for the engine's: on the files given as arguments, or on built-in
 * seeds (what a rank sends weftrun, with a valid proof; what weftrun answers
 * a rank, for several runs of store calls) and deterministic mutations of
 * them. --write-corpus DIR writes the seeds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"
#include "boot/boot_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern const char fuzz_boot_jobid[];
extern const uint8_t fuzz_boot_secret[WEFT_BOOT_SECRET_LEN];
extern const uint8_t fuzz_boot_nonce[WEFT_BOOT_NONCE_LEN];

#define NSEEDS 7

static uint8_t *msg(uint8_t *p, uint16_t type, const void *body, size_t len)
{
    weft__boot_hdr_encode(p, type, (uint32_t)len);
    if (len)
        memcpy(p + WEFT_BOOT_PROTO_HDR_SIZE, body, len);
    return p + WEFT_BOOT_PROTO_HDR_SIZE + len;
}

static uint8_t *status(uint8_t *p, uint16_t type, int32_t st)
{
    uint8_t b[4];
    weft__boot_put32(b, (uint32_t)st);
    return msg(p, type, b, 4);
}

static uint8_t *get_reply(uint8_t *p, int32_t st, const char *value)
{
    uint8_t b[64];
    size_t vlen = value ? strlen(value) : 0;
    weft__boot_put32(b, (uint32_t)st);
    weft__boot_put32(b + 4, (uint32_t)vlen);
    if (vlen)
        memcpy(b + 8, value, vlen);
    return msg(p, WEFT_BOOT_MSG_GET_REPLY, b, 8 + vlen);
}

static uint8_t *hello(uint8_t *p, uint16_t type, uint32_t rank)
{
    uint8_t b[128], proof[WEFT_BOOT_PROOF_LEN];
    size_t idlen = strlen(fuzz_boot_jobid);
    weft__boot_proof(fuzz_boot_secret, fuzz_boot_nonce, fuzz_boot_jobid, idlen, rank, proof);
    return msg(p, type, b, weft__boot_hello_encode(b, rank, 2, fuzz_boot_jobid, idlen, proof));
}

static size_t seed(int k, uint8_t *buf)
{
    uint8_t *p = buf + 1, b[64];
    /* Store calls of the client mode, two bits each: fence, get into 8
     * bytes, get into 64 KiB, abort. */
    enum { FENCE, GET_SMALL, GET_BIG, ABORT };
    switch (k) {
    case 0: /* server: a rank's whole life on its store connection */
        buf[0] = 0;
        p = hello(p, WEFT_BOOT_MSG_HELLO, 1);
        weft__boot_put16(b, 3);
        memcpy(b + 2, "key", 3);
        weft__boot_put32(b + 5, 5);
        memcpy(b + 9, "value", 5);
        p = msg(p, WEFT_BOOT_MSG_PUT, b, 14);
        p = msg(p, WEFT_BOOT_MSG_FENCE, NULL, 0);
        p = msg(p, WEFT_BOOT_MSG_GET, b, 5);
        p = msg(p, WEFT_BOOT_MSG_BYE, NULL, 0);
        break;
    case 1: /* server: a lifeline, then an abort */
        buf[0] = 0;
        p = hello(p, WEFT_BOOT_MSG_LIFELINE, 0);
        weft__boot_put32(b, 3);
        weft__boot_put16(b + 4, 4);
        memcpy(b + 6, "oops", 4);
        p = msg(p, WEFT_BOOT_MSG_ABORT, b, 10);
        break;
    case 2: /* server: one body, as every decoder reads it */
        buf[0] = 0;
        weft__boot_put16(p, 3);
        memcpy(p + 2, "key", 3);
        weft__boot_put32(p + 5, 0);
        p += 9;
        break;
    case 3: /* client: handshake, get, fence, get, abort */
        buf[0] = 1;
        *p++ = GET_SMALL | FENCE << 2 | GET_BIG << 4 | ABORT << 6;
        p = msg(p, WEFT_BOOT_MSG_CHALLENGE, fuzz_boot_nonce, WEFT_BOOT_NONCE_LEN);
        p = status(p, WEFT_BOOT_MSG_HELLO_REPLY, WEFT_OK);
        p = get_reply(p, WEFT_OK, "value");
        p = status(p, WEFT_BOOT_MSG_FENCE_REPLY, WEFT_OK);
        p = get_reply(p, WEFT_ENOTFOUND, NULL);
        p = status(p, WEFT_BOOT_MSG_ABORT_REPLY, WEFT_OK);
        break;
    case 4: /* client: a value larger than the buffer, a failed fence */
        buf[0] = 1;
        *p++ = GET_SMALL | FENCE << 2 | GET_BIG << 4 | FENCE << 6;
        p = msg(p, WEFT_BOOT_MSG_CHALLENGE, fuzz_boot_nonce, WEFT_BOOT_NONCE_LEN);
        p = status(p, WEFT_BOOT_MSG_HELLO_REPLY, WEFT_OK);
        p = get_reply(p, WEFT_OK, "a value of more than 8 bytes");
        p = status(p, WEFT_BOOT_MSG_FENCE_REPLY, WEFT_EPEERDEAD);
        p = get_reply(p, WEFT_OK, "");
        p = status(p, WEFT_BOOT_MSG_FENCE_REPLY, WEFT_OK);
        break;
    case 5: /* client: refused */
        buf[0] = 1;
        *p++ = 0;
        p = msg(p, WEFT_BOOT_MSG_CHALLENGE, fuzz_boot_nonce, WEFT_BOOT_NONCE_LEN);
        p = status(p, WEFT_BOOT_MSG_HELLO_REPLY, WEFT_EPERM);
        break;
    default: /* client: the job ends under it */
        buf[0] = 1;
        *p++ = FENCE;
        p = msg(p, WEFT_BOOT_MSG_CHALLENGE, fuzz_boot_nonce, WEFT_BOOT_NONCE_LEN);
        p = status(p, WEFT_BOOT_MSG_HELLO_REPLY, WEFT_OK);
        p = msg(p, WEFT_BOOT_MSG_END, NULL, 0);
        break;
    }
    return (size_t)(p - buf);
}

int main(int argc, char **argv)
{
    static uint8_t buf[4096], mut[4096];
    if (argc > 2 && !strcmp(argv[1], "--write-corpus")) {
        for (int k = 0; k < NSEEDS; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/seed%d", argv[2], k);
            FILE *f = fopen(path, "wb");
            if (!f)
                return 1;
            fwrite(buf, 1, seed(k, buf), f);
            fclose(f);
        }
        return 0;
    }
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            FILE *f = fopen(argv[i], "rb");
            if (!f)
                return 1;
            size_t n = fread(buf, 1, sizeof buf, f);
            fclose(f);
            LLVMFuzzerTestOneInput(buf, n);
        }
        return 0;
    }
    uint64_t x = 0x243F6A8885A308D3ull;
    long runs = 0;
    for (int k = 0; k < NSEEDS; k++) {
        size_t len = seed(k, buf);
        LLVMFuzzerTestOneInput(buf, len);
        runs++;
        for (int m = 0; m < 3000; m++) {
            memcpy(mut, buf, len);
            size_t n = len;
            int edits = 1 + (int)(x % 4);
            for (int e = 0; e < edits; e++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                size_t at = 1 + x % (len - 1); /* keep the mode byte */
                mut[at] = (uint8_t)(x >> 40);
            }
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            if (x % 5 == 0)
                n = 1 + x % (len + 16);
            if (n > len)
                memset(mut + len, (int)(x >> 8), n - len);
            LLVMFuzzerTestOneInput(mut, n);
            runs++;
        }
    }
    printf("fuzz boot replay: %ld inputs, 0 crashes\n", runs);
    return 0;
}
