/* Runs a fuzz target without libFuzzer: on the files given as arguments, or on
 * built-in seed packets (one of every chunk kind, an aggregated one and a short one) and a fixed
 * number of deterministic mutations of them. This keeps every fuzz target exercised by the ordinary
 * test suite on any compiler; the coverage-guided runs use clang's libFuzzer on the same target
 * (see tests/fuzz/CMakeLists.txt). With
 * --write-corpus DIR it writes the seeds as files, to start libFuzzer from. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NSEEDS 13

static size_t seed(int kind, uint8_t *buf)
{
    uint8_t *p = buf + WEFT_WIRE_PKT_HDR;
    weft_rkey_t key = {.len = 16};
    switch (kind) {
    case 12:
        /* The short form: no packet header. */
        p = buf + weft__wire_put_short(buf, 3, 5, 1);
        memcpy(p, "payload!", 8);
        return WEFT_WIRE_SHORT_HDR + 8;
    case 0:
        p += weft__wire_put_eager(p, false, 0, 5, 1, 8, 0);
        memcpy(p, "payload!", 8);
        p += 8;
        break;
    case 1:
        p += weft__wire_put_eager(p, true, 0, 3, 0, 0, (1ull << 32) | 0);
        break;
    case 2:
        p += weft__wire_put_rdv(p, 0, 5, 1, 50000, 7, &key);
        break;
    case 3:
        p += weft__wire_put_rtr(p, (1ull << 32) | 0, 3, 100000);
        break;
    case 4:
        p += weft__wire_put_rdata(p, (1ull << 32) | 1, 0, 8);
        memcpy(p, "fragment", 8);
        p += 8;
        break;
    case 5:
        p += weft__wire_put_ack(p, (1ull << 32) | 0);
        break;
    case 6:
        p += weft__wire_put_coop(p, (1ull << 32) | 0, 1, 0, 8192, 4096, &key);
        break;
    case 7:
        p += weft__wire_put_coop(p, (1ull << 32) | 1, 2, 1, 4096, 4096, &key);
        break;
    case 8:
        p += weft__wire_put_credit(p, 4096);
        p += weft__wire_put_ack(p, 12);
        break;
    case 10:
        p += weft__wire_put_cancel(p, (1ull << 32) | 0, 0);
        break;
    case 11:
        p += weft__wire_put_cancel_reply(p, (1ull << 32) | 0, true);
        p += weft__wire_put_cancel_reply(p, (1ull << 32) | 1, false);
        break;
    default:
        /* As aggreg builds one: control chunks, then messages of several tags
         * and communicators in sequence order, then rendezvous data. */
        p += weft__wire_put_ack(p, (1ull << 32) | 0);
        p += weft__wire_put_rtr(p, (1ull << 32) | 0, 3, 100000);
        for (uint32_t i = 0; i < 3; i++) {
            p += weft__wire_put_eager(p, false, i, 5 + i, i % 2, 5, 0);
            memcpy(p, "chunk\0\0\0", 8);
            p += 8;
        }
        p += weft__wire_put_rdv(p, 3, 5, 1, 50000, 7, &key);
        p += weft__wire_put_rdata(p, (1ull << 32) | 1, 0, 8);
        memcpy(p, "fragment", 8);
        p += 8;
        break;
    }
    size_t len = (size_t)(p - buf);
    weft__wire_put_packet(buf, kind == 8 || kind == 11 ? 2 : kind == 9 ? 7 : 1, len);
    return len;
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
            /* A few random byte edits, sometimes a length change. */
            int edits = 1 + (int)(x % 4);
            for (int e = 0; e < edits; e++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                mut[x % len] = (uint8_t)(x >> 40);
            }
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            if (x % 5 == 0)
                n = x % (len + 16);
            if (n > len)
                memset(mut + len, (int)(x >> 8), n - len);
            LLVMFuzzerTestOneInput(mut, n);
            runs++;
        }
    }
    printf("fuzz replay: %ld inputs, 0 crashes\n", runs);
    return 0;
}
