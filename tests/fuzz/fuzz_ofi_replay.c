/* Runs the ofi driver's fuzz target without libFuzzer, like fuzz_replay.c
 * does for the engine's: on the files given as arguments, or on built-in
 * seeds (a published address, an rkey with a range to read; runs of received
 * messages in order, out of order, from strangers and ranks that are not
 * there, repeated, repeated while held, and malformed) and deterministic mutations of them.
 * --write-corpus DIR writes the seeds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/ofi/ofi_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NSEEDS 7

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* One received message as the receive mode reads it; seq < 0: no sequence
 * number (a body shorter than a packet's header). */
static uint8_t *message(uint8_t *p, bool remote_data, uint32_t rank, int kind, long seq,
                        const char *body)
{
    size_t blen = strlen(body), len = (seq >= 0 ? OFI_PKT_HDR : 0) + blen;
    *p++ = remote_data;
    put32(p, rank << OFI_DATA_RANK_SHIFT | (uint32_t)kind);
    p[4] = (uint8_t)len;
    p[5] = (uint8_t)(len >> 8);
    p += 6;
    if (seq >= 0) {
        put32(p, (uint32_t)seq);
        p += OFI_PKT_HDR;
    }
    memcpy(p, body, blen);
    return p + blen;
}

static size_t seed(int k, uint8_t *buf)
{
    uint8_t *p = buf + 1;
    switch (k) {
    case 0: /* decoders: the address rank 1 published */
        buf[0] = 0;
        *p++ = 1;
        put32(p, 1);
        put32(p + 4, 4242);
        memcpy(p + OFI_ADDR_HDR, "endpoint-name-16", 16);
        p += OFI_ADDR_HDR + 16;
        break;
    case 1: { /* decoders: an rkey and a read inside its region */
        buf[0] = 0;
        *p++ = 0;
        ofi_rkey_t key = {.addr = 0x7f0000001000, .key = 77, .len = 100, .slot = 3};
        uint64_t range[2] = {10, 50};
        *p++ = sizeof key;
        memset(p, 0, WEFT_RKEY_MAX);
        memcpy(p, &key, sizeof key);
        p += WEFT_RKEY_MAX;
        memcpy(p, range, sizeof range);
        p += sizeof range;
        break;
    }
    case 2: /* receive: packets in order from two ranks */
        buf[0] = 1;
        p = message(p, true, 1, OFI_MSG_PACKET, 0, "first");
        p = message(p, true, 2, OFI_MSG_PACKET, 0, "other");
        p = message(p, true, 1, OFI_MSG_PACKET, 1, "second");
        break;
    case 3: /* receive: out of order, held, then handed on */
        buf[0] = 1;
        p = message(p, true, 2, OFI_MSG_PACKET, 2, "third");
        p = message(p, true, 2, OFI_MSG_PACKET, 1, "second");
        p = message(p, true, 2, OFI_MSG_PACKET, 0, "first");
        p = message(p, true, 1, OFI_MSG_PACKET, 5, "held at the end");
        break;
    case 4: /* receive: a keepalive, a stranger, ranks not there, a repeat */
        buf[0] = 1;
        p = message(p, true, 1, OFI_MSG_PING, -1, "");
        p = message(p, false, 1, OFI_MSG_PACKET, 0, "stranger");
        p = message(p, true, 3, OFI_MSG_PACKET, 0, "never connected");
        p = message(p, true, 9, OFI_MSG_PACKET, 0, "no such rank");
        p = message(p, true, 1, OFI_MSG_PACKET, 0, "once");
        p = message(p, true, 1, OFI_MSG_PACKET, 0, "twice");
        p = message(p, true, 1, OFI_MSG_PACKET, 1, "after it was lost");
        break;
    case 6: /* receive: a number repeated while ahead (the peer is lost) */
        buf[0] = 1;
        p = message(p, true, 1, OFI_MSG_PACKET, 1, "a");
        p = message(p, true, 1, OFI_MSG_PACKET, 1, "b");
        p = message(p, true, 1, OFI_MSG_PACKET, 0, "c");
        p = message(p, true, 1, OFI_MSG_PACKET, 3, "d");
        p = message(p, true, 1, OFI_MSG_PACKET, 2, "e");
        break;
    default: /* receive: a malformed packet, a packet shorter than its header */
        buf[0] = 1;
        p = message(p, true, 1, OFI_MSG_PACKET, 0, "\xff malformed");
        p = message(p, true, 2, OFI_MSG_PACKET, -1, "ab");
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
    printf("fuzz ofi replay: %ld inputs, 0 crashes\n", runs);
    return 0;
}
