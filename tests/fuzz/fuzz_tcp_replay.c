/* Runs the tcp fuzz target without libFuzzer, like fuzz_replay.c does for the
 * engine's: on the files given as arguments, or on built-in seeds (valid
 * handshake messages and frame runs, for each of the target's three modes)
 * and deterministic mutations of them. --write-corpus DIR writes the seeds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/tcp/tcp_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NSEEDS 7

static size_t seed(int k, uint8_t *buf)
{
    uint8_t *p = buf + 1;
    tcp_hs_msg_t m = {.client_rank = 1, .server_rank = 0, .size = 2, .proof = 0x1234};
    memset(m.nonce, 7, sizeof m.nonce);
    tcp_get_t g = {.slot = 0, .gen = 1, .offset = 10, .len = 100};
    switch (k) {
    case 0: /* decoders: a HELLO */
        buf[0] = 0;
        m.type = TCP_HS_HELLO;
        p += weft__tcp_hs_encode(p, &m);
        break;
    case 1: /* decoders: a CHALLENGE */
        buf[0] = 0;
        m.type = TCP_HS_CHALLENGE;
        p += weft__tcp_hs_encode(p, &m);
        break;
    case 2: { /* decoders: an address */
        buf[0] = 0;
        tcp_addr_t a = {.family = AF_INET6, .port = 4000, .rank = 3};
        p += weft__tcp_addr_encode(p, &a);
        break;
    }
    case 3: /* handshake: HELLO then a PROOF */
        buf[0] = 1;
        m.type = TCP_HS_HELLO;
        p += weft__tcp_hs_encode(p, &m);
        m.type = TCP_HS_PROOF;
        p += weft__tcp_hs_encode(p, &m);
        break;
    case 4: /* frames: two packets */
        buf[0] = 2;
        weft__tcp_frame_encode(p, TCP_FRAME_PKT, 8, 0);
        memcpy(p + TCP_FRAME_HDR, "packet!!", 8);
        p += TCP_FRAME_HDR + 8;
        weft__tcp_frame_encode(p, TCP_FRAME_PKT, 0, 0);
        p += TCP_FRAME_HDR;
        break;
    case 5: /* frames: a GET of the exposed region */
        buf[0] = 2;
        weft__tcp_frame_encode(p, TCP_FRAME_GET, TCP_GET_BODY, 77);
        weft__tcp_get_encode(p + TCP_FRAME_HDR, &g);
        p += TCP_FRAME_HDR + TCP_GET_BODY;
        break;
    default: /* frames: the DATA answering our rget, then a packet */
        buf[0] = 2;
        weft__tcp_frame_encode(p, TCP_FRAME_DATA, 100, 1);
        memset(p + TCP_FRAME_HDR, 0x33, 100);
        p += TCP_FRAME_HDR + 100;
        weft__tcp_frame_encode(p, TCP_FRAME_PKT, 3, 0);
        memcpy(p + TCP_FRAME_HDR, "end", 3);
        p += TCP_FRAME_HDR + 3;
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
    /* The handshake mode costs real connections and a time-out: fewer of it. */
    static const int mutations[NSEEDS] = {3000, 3000, 3000, 60, 400, 400, 400};
    uint64_t x = 0x243F6A8885A308D3ull;
    long runs = 0;
    for (int k = 0; k < NSEEDS; k++) {
        size_t len = seed(k, buf);
        LLVMFuzzerTestOneInput(buf, len);
        runs++;
        for (int m = 0; m < mutations[k]; m++) {
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
    printf("fuzz tcp replay: %ld inputs, 0 crashes\n", runs);
    return 0;
}
