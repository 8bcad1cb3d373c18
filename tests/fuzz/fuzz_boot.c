/* Fuzz target: the launcher's store protocol (src/boot/boot_proto.h), both
 * ways. The first input byte's low bit picks what the rest is fed to:
 *   0  the server's side, as weftrun's conn_process reads a connection: the
 *      rest is cut into messages (weft__boot_msg_frame) and each body goes to
 *      the decoder of its type, HELLO's then to the proof check; every
 *      decoder also gets the whole rest as a body, and the job id and key
 *      checks get it as a name;
 *   1  the client's side (src/boot/boot.c): the rest, after one byte that
 *      picks four store calls, is what a server sends on a fresh connection
 *      (one end of a socketpair): the handshake, then the replies to those
 *      calls. The client must fail cleanly or return sane values.
 * Whatever a decoder accepts must lie inside the bytes it was given and be
 * within the protocol's limits. Nothing may crash, overflow or leak. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "weft/weft.h"
#include "boot/boot_int.h"
#include "boot/boot_proto.h"

/* The job both sides believe in; the replay program's seeds use the same. */
const char fuzz_boot_jobid[] = "fuzz-job";
const uint8_t fuzz_boot_secret[WEFT_BOOT_SECRET_LEN] = "fuzz-secret-1234";
const uint8_t fuzz_boot_nonce[WEFT_BOOT_NONCE_LEN] = "nonce-0123456789";

static void inside(const uint8_t *p, size_t len, const uint8_t *body, size_t body_len)
{
    if (p < body || len > body_len || p - body > (ptrdiff_t)(body_len - len))
        abort();
}

/* Every server-side decoder on one body; what they accept must hold together. */
static void body(uint16_t type, const uint8_t *p, uint32_t len)
{
    weft_boot_hello_t h;
    if ((type == 0 || type == WEFT_BOOT_MSG_HELLO || type == WEFT_BOOT_MSG_LIFELINE) &&
        !weft__boot_hello_decode(p, len, &h)) {
        if (h.jobid_len > WEFT_BOOT_JOBID_MAX)
            abort();
        inside(h.jobid, h.jobid_len, p, len);
        inside(h.proof, WEFT_BOOT_PROOF_LEN, p, len);
        /* What decodes encodes back to the same bytes. */
        uint8_t again[4 + 4 + 2 + WEFT_BOOT_JOBID_MAX + WEFT_BOOT_PROOF_LEN];
        size_t n = weft__boot_hello_encode(again, h.rank, h.size, (const char *)h.jobid,
                                           h.jobid_len, h.proof);
        if (n != len || memcmp(again, p, n) != 0)
            abort();
        if (!weft__boot_hello_verify(&h, fuzz_boot_jobid, fuzz_boot_secret, fuzz_boot_nonce)) {
            /* Accepted: it names the job and carries the proof. */
            uint8_t proof[WEFT_BOOT_PROOF_LEN];
            weft__boot_proof(fuzz_boot_secret, fuzz_boot_nonce, fuzz_boot_jobid,
                             strlen(fuzz_boot_jobid), h.rank, proof);
            if (h.jobid_len != strlen(fuzz_boot_jobid) || memcmp(proof, h.proof, sizeof proof))
                abort();
        }
    }
    weft_boot_put_t put;
    if ((type == 0 || type == WEFT_BOOT_MSG_PUT) && !weft__boot_put_decode(p, len, &put)) {
        if (!weft__boot_key_valid(put.key, put.key_len) || put.value_len > WEFT_BOOT_VALUE_MAX)
            abort();
        inside(put.key, put.key_len, p, len);
        inside(put.value, put.value_len, p, len);
    }
    const uint8_t *key;
    uint16_t klen;
    if ((type == 0 || type == WEFT_BOOT_MSG_GET) && !weft__boot_get_decode(p, len, &key, &klen)) {
        if (!weft__boot_key_valid(key, klen))
            abort();
        inside(key, klen, p, len);
    }
    weft_boot_abort_t ab;
    if ((type == 0 || type == WEFT_BOOT_MSG_ABORT) && !weft__boot_abort_decode(p, len, &ab)) {
        if (ab.msg_len > WEFT_BOOT_ABORT_MSG_MAX)
            abort();
        inside(ab.msg, ab.msg_len, p, len);
    }
    /* The client's decoders, on the same bytes. */
    int status;
    if (weft__boot_status_decode(p, len, &status) == 0 && len != 4)
        abort();
    weft_boot_get_reply_t reply;
    if (weft__boot_get_reply_decode(p, len, &reply) == 0) {
        if (reply.status != 0 && reply.value_len != 0)
            abort();
        inside(reply.value, reply.value_len, p, len);
    }
}

static void server(const uint8_t *data, size_t size)
{
    weft__boot_jobid_valid((const char *)data, size);
    weft__boot_key_valid(data, size);
    body(0, data, (uint32_t)size);
    size_t off = 0;
    for (;;) {
        weft_boot_hdr_t h;
        long total = weft__boot_msg_frame(data + off, size - off, &h);
        if (total <= 0) {
            /* Bad header, or not all there: then it is not, whatever the header. */
            if (total == 0 && size - off >= WEFT_BOOT_PROTO_HDR_SIZE &&
                weft__boot_hdr_decode(data + off, &h) == 0 &&
                size - off >= WEFT_BOOT_PROTO_HDR_SIZE + (size_t)h.body_len)
                abort();
            return;
        }
        if ((size_t)total != WEFT_BOOT_PROTO_HDR_SIZE + h.body_len ||
            (long)h.body_len > weft__boot_body_max(h.type) || (size_t)total > size - off)
            abort();
        body(h.type, data + off + WEFT_BOOT_PROTO_HDR_SIZE, h.body_len);
        off += (size_t)total;
    }
}

static void client(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    unsigned calls = data[0];
    data++, size--;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        abort();
    /* All of the server's bytes are there before the client reads, then the
     * end of the stream: a client that waits for more sees it closed. */
    if (size && send(sv[1], data, size, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
        abort();
    shutdown(sv[1], SHUT_WR);
    weft_boot_t *b;
    if (weft__boot_join_fd(sv[0], 1, 2, fuzz_boot_jobid, fuzz_boot_secret, &b) != WEFT_OK) {
        close(sv[0]);
        close(sv[1]);
        return;
    }
    static uint8_t value[WEFT_BOOT_VALUE_MAX];
    for (int i = 0; i < 4; i++, calls >>= 2) {
        size_t len = (calls & 3) == 1 ? 8 : sizeof value;
        int rc;
        switch (calls & 3) {
        case 0:
            weft__boot_fence(b);
            break;
        case 1:
        case 2:
            rc = weft__boot_get(b, "key", value, &len);
            if ((rc == WEFT_OK && len > ((calls & 3) == 1 ? 8 : sizeof value)) ||
                (rc == WEFT_ENOBUFS && len > WEFT_BOOT_VALUE_MAX))
                abort();
            break;
        case 3:
            weft__boot_abort(b, 3, "fuzz");
            break;
        }
    }
    weft__boot_fini(b); /* closes sv[0] */
    close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setenv("WEFT_LOG", "off", 0); /* refusing garbage is the expected outcome */
    if (size < 1)
        return 0;
    if (data[0] & 1)
        client(data + 1, size - 1);
    else
        server(data + 1, size - 1);
    return 0;
}
