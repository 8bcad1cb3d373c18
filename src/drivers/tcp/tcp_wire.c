/* Encode and decode what the tcp driver puts on the wire: handshake messages,
 * frame headers, GET bodies and the address blob. Like core/wire.c, the
 * decoders are the one place where bytes from the network become values, so
 * they check every field: magic, version, type, reserved fields zero, lengths
 * against their bounds. They are pure (no I/O), so a fuzzer can drive them. */
#include <stdio.h>
#include <string.h>

#include "drivers/tcp/tcp_int.h"
#include "util/siphash.h"

size_t weft__tcp_hs_size(uint16_t type)
{
    switch (type) {
    case TCP_HS_HELLO:
    case TCP_HS_LHELLO:
        return TCP_HELLO_LEN;
    case TCP_HS_CHALLENGE:
    case TCP_HS_LCHAL:
        return TCP_CHAL_LEN;
    case TCP_HS_PROOF:
    case TCP_HS_LPROOF:
        return TCP_PROOF_LEN;
    default:
        return 0;
    }
}

/* Common prefix: magic, version, type, client rank, server rank, size,
 * reserved (a link's: client id, server id). */
#define HS_PREFIX 24

static bool hs_has_nonce(uint16_t type)
{
    return type == TCP_HS_HELLO || type == TCP_HS_CHALLENGE || type == TCP_HS_LHELLO ||
           type == TCP_HS_LCHAL;
}

size_t weft__tcp_hs_encode(uint8_t *buf, const tcp_hs_msg_t *m)
{
    size_t n = weft__tcp_hs_size(m->type);
    memset(buf, 0, n);
    tcp_le32_put(buf, TCP_HS_MAGIC);
    tcp_le16_put(buf + 4, TCP_HS_VERSION);
    tcp_le16_put(buf + 6, m->type);
    if (tcp_hs_is_link(m->type)) {
        tcp_le64_put(buf + 8, m->client_id);
        tcp_le64_put(buf + 16, m->server_id);
    } else {
        tcp_le32_put(buf + 8, m->client_rank);
        tcp_le32_put(buf + 12, m->server_rank);
        tcp_le32_put(buf + 16, m->size);
        tcp_le32_put(buf + 20, 0);
    }
    if (hs_has_nonce(m->type))
        memcpy(buf + HS_PREFIX, m->nonce, TCP_NONCE_LEN);
    if (m->type == TCP_HS_CHALLENGE || m->type == TCP_HS_LCHAL)
        tcp_le64_put(buf + HS_PREFIX + TCP_NONCE_LEN, m->proof);
    if (m->type == TCP_HS_PROOF || m->type == TCP_HS_LPROOF)
        tcp_le64_put(buf + HS_PREFIX, m->proof);
    return n;
}

int weft__tcp_hs_decode(const uint8_t *buf, size_t len, uint16_t expect, tcp_hs_msg_t *m)
{
    size_t n = weft__tcp_hs_size(expect);
    if (n == 0 || len != n)
        return WEFT_EPROTO;
    if (tcp_le32_get(buf) != TCP_HS_MAGIC || tcp_le16_get(buf + 4) != TCP_HS_VERSION ||
        tcp_le16_get(buf + 6) != expect)
        return WEFT_EPROTO;
    memset(m, 0, sizeof *m);
    m->type = expect;
    if (tcp_hs_is_link(expect)) {
        /* The higher id connects; 0 names nobody. */
        m->client_id = tcp_le64_get(buf + 8);
        m->server_id = tcp_le64_get(buf + 16);
        if (m->server_id == 0 || m->client_id <= m->server_id)
            return WEFT_EPROTO;
    } else {
        if (tcp_le32_get(buf + 20) != 0)
            return WEFT_EPROTO;
        m->client_rank = tcp_le32_get(buf + 8);
        m->server_rank = tcp_le32_get(buf + 12);
        m->size = tcp_le32_get(buf + 16);
        if (m->client_rank > INT32_MAX || m->server_rank > INT32_MAX || m->size > INT32_MAX ||
            m->client_rank >= m->size || m->server_rank >= m->size ||
            m->client_rank <= m->server_rank)
            return WEFT_EPROTO;
    }
    if (hs_has_nonce(expect))
        memcpy(m->nonce, buf + HS_PREFIX, TCP_NONCE_LEN);
    if (expect == TCP_HS_CHALLENGE || expect == TCP_HS_LCHAL)
        m->proof = tcp_le64_get(buf + HS_PREFIX + TCP_NONCE_LEN);
    if (expect == TCP_HS_PROOF || expect == TCP_HS_LPROOF) {
        m->proof = tcp_le64_get(buf + HS_PREFIX);
        for (size_t i = HS_PREFIX + 8; i < n; i++)
            if (buf[i])
                return WEFT_EPROTO;
    }
    return WEFT_OK;
}

uint64_t weft__tcp_hs_proof(const uint8_t *secret, char role, uint32_t client_rank,
                            uint32_t server_rank, const uint8_t *nc, const uint8_t *ns,
                            const char *job_id)
{
    /* role | client rank | server rank | client nonce | server nonce | job id: the
     * role byte keeps a server's proof from serving as a client's, the nonces
     * make it fresh, the ranks and job id bind it to this one connection. */
    uint8_t in[1 + 8 + 2 * TCP_NONCE_LEN + TCP_JOBID_MAX];
    size_t jl = strnlen(job_id, TCP_JOBID_MAX);
    in[0] = (uint8_t)role;
    tcp_le32_put(in + 1, client_rank);
    tcp_le32_put(in + 5, server_rank);
    memcpy(in + 9, nc, TCP_NONCE_LEN);
    memcpy(in + 9 + TCP_NONCE_LEN, ns, TCP_NONCE_LEN);
    memcpy(in + 9 + 2 * TCP_NONCE_LEN, job_id, jl);
    return weft__siphash24(secret, in, 9 + 2 * TCP_NONCE_LEN + jl);
}

uint64_t weft__tcp_hs_link_proof(const uint8_t *secret, char role, uint64_t client, uint64_t server,
                                 const uint8_t *nc, const uint8_t *ns)
{
    /* The ids take the job id's place, in a form no job id has (a job id is
     * [A-Za-z0-9_-]), so a job's proof never serves a link's. */
    char ids[48];
    snprintf(ids, sizeof ids, "link:%016llx:%016llx", (unsigned long long)client,
             (unsigned long long)server);
    return weft__tcp_hs_proof(secret, role, 0, 0, nc, ns, ids);
}

void weft__tcp_frame_encode(uint8_t *buf, uint8_t type, uint32_t length, uint64_t aux)
{
    buf[0] = TCP_FRAME_VERSION;
    buf[1] = type;
    buf[2] = buf[3] = 0;
    tcp_le32_put(buf + 4, length);
    tcp_le64_put(buf + 8, aux);
}

int weft__tcp_frame_decode(const uint8_t *buf, size_t max_pkt, tcp_frame_t *f)
{
    if (buf[0] != TCP_FRAME_VERSION || buf[2] || buf[3])
        return WEFT_EPROTO;
    f->type = buf[1];
    f->length = tcp_le32_get(buf + 4);
    f->aux = tcp_le64_get(buf + 8);
    switch (f->type) {
    case TCP_FRAME_PKT:
        return f->length <= max_pkt && f->aux == 0 ? WEFT_OK : WEFT_EPROTO;
    case TCP_FRAME_GET:
        return f->length == TCP_GET_BODY ? WEFT_OK : WEFT_EPROTO;
    case TCP_FRAME_DATA:
        return WEFT_OK; /* checked against the GET it answers */
    default:
        return WEFT_EPROTO;
    }
}

void weft__tcp_get_encode(uint8_t *buf, const tcp_get_t *g)
{
    tcp_le32_put(buf, g->slot);
    tcp_le32_put(buf + 4, g->gen);
    tcp_le64_put(buf + 8, g->offset);
    tcp_le64_put(buf + 16, g->len);
}

void weft__tcp_get_decode(const uint8_t *buf, tcp_get_t *g)
{
    g->slot = tcp_le32_get(buf);
    g->gen = tcp_le32_get(buf + 4);
    g->offset = tcp_le64_get(buf + 8);
    g->len = tcp_le64_get(buf + 16);
}

size_t weft__tcp_addr_encode(uint8_t *buf, const tcp_addr_t *a)
{
    memset(buf, 0, TCP_ADDR_LEN);
    tcp_le32_put(buf, TCP_ADDR_MAGIC);
    tcp_le16_put(buf + 4, TCP_ADDR_VERSION);
    buf[6] = a->family == AF_INET6 ? 6 : 4;
    tcp_le16_put(buf + 8, a->port);
    tcp_le32_put(buf + 12, (uint32_t)a->rank);
    tcp_le32_put(buf + 16, a->scope_id);
    memcpy(buf + 20, a->addr, 16);
    return TCP_ADDR_LEN;
}

int weft__tcp_addr_decode(const uint8_t *buf, size_t len, tcp_addr_t *a)
{
    if (len != TCP_ADDR_LEN || tcp_le32_get(buf) != TCP_ADDR_MAGIC ||
        tcp_le16_get(buf + 4) != TCP_ADDR_VERSION || (buf[6] != 4 && buf[6] != 6) || buf[7] ||
        tcp_le16_get(buf + 10) || tcp_le32_get(buf + 36) || tcp_le16_get(buf + 8) == 0)
        return WEFT_EPROTO;
    memset(a, 0, sizeof *a);
    a->family = buf[6] == 6 ? AF_INET6 : AF_INET;
    a->port = tcp_le16_get(buf + 8);
    a->rank = (int32_t)tcp_le32_get(buf + 12);
    a->scope_id = tcp_le32_get(buf + 16);
    memcpy(a->addr, buf + 20, 16);
    return a->rank >= 0 ? WEFT_OK : WEFT_EPROTO;
}

socklen_t weft__tcp_addr_sockaddr(const tcp_addr_t *a, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (a->family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(a->port);
        s6->sin6_scope_id = a->scope_id;
        memcpy(&s6->sin6_addr, a->addr, 16);
        return sizeof *s6;
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    s4->sin_family = AF_INET;
    s4->sin_port = htons(a->port);
    memcpy(&s4->sin_addr, a->addr, 4);
    return sizeof *s4;
}
