/* Wire format: every chunk kind round-trips, and every malformed header is
 * rejected. Also the pieces the engine builds on: wrap-safe sequence
 * comparison, intrusive lists and the wire-id table. */
#include "../common/test_util.h"
#include "core/core_int.h"
#include "core/wire.h"

static uint8_t pkt[4096];

/* Build a packet of one chunk (header + payload + padding). */
static size_t one_chunk(const uint8_t *hdr, size_t hdr_len, const void *payload, size_t len)
{
    size_t total = WEFT_WIRE_PKT_HDR + weft__wire_chunk_size(hdr_len, len);
    memset(pkt, 0, sizeof pkt);
    weft__wire_put_packet(pkt, 1, total);
    memcpy(pkt + WEFT_WIRE_PKT_HDR, hdr, hdr_len);
    if (len)
        memcpy(pkt + WEFT_WIRE_PKT_HDR + hdr_len, payload, len);
    return total;
}

static int decode_general(const void *buf, size_t len, weft__wire_chunk_t *out, int max)
{
    weft__wire_iter_t it;
    int rc = weft__wire_open(buf, len, &it);
    if (rc)
        return rc;
    int n = 0;
    weft__wire_chunk_t c;
    while ((rc = weft__wire_next(&it, &c)) == 1) {
        if (n < max)
            out[n] = c;
        n++;
    }
    return rc < 0 ? rc : n;
}

/* The general decoder's answer, checked against the lone-eager decoder the
 * engine tries first: that one takes exactly the well-formed packets of one
 * EAGER chunk, and decodes them the same. */
static int decode_all(const void *buf, size_t len, weft__wire_chunk_t *out, int max)
{
    weft__wire_chunk_t g, f;
    int rc = decode_general(buf, len, &g, 1);
    bool lone = buf && rc == 1 && g.kind == WEFT_CHUNK_EAGER;
    memset(&f, 0xa5, sizeof f);
    int fast = buf ? weft__wire_lone_eager(buf, len, &f) : 0;
    if (fast != (int)lone)
        fprintf(stderr, "lone-eager decoder says %d, general decoder %d (kind %d)\n", fast, rc,
                rc == 1 ? g.kind : -1);
    CHECK(fast == (int)lone);
    if (fast && lone)
        CHECK(f.kind == g.kind && f.flags == g.flags && f.seq == g.seq && f.tag == g.tag &&
              f.comm == g.comm && f.len == g.len && f.sreq == g.sreq && f.payload == g.payload &&
              f.rkey.len == 0);
    return decode_general(buf, len, out, max);
}

static void test_roundtrip(void)
{
    uint8_t hdr[WEFT_WIRE_CHUNK_HDR_MAX];
    weft__wire_chunk_t c;
    const char payload[] = "hello, weft";
    size_t n;

    n = weft__wire_put_eager(hdr, false, 0xfffffffe, WEFT_TAG_MAX, 7, sizeof payload, 0);
    CHECK(n == WEFT_WIRE_EAGER_HDR);
    size_t len = one_chunk(hdr, n, payload, sizeof payload);
    CHECK(decode_all(pkt, len, &c, 1) == 1);
    CHECK(c.kind == WEFT_CHUNK_EAGER && c.seq == 0xfffffffe && c.tag == WEFT_TAG_MAX);
    CHECK(c.comm == 7 && c.len == sizeof payload && c.payload &&
          !memcmp(c.payload, payload, sizeof payload));

    n = weft__wire_put_eager(hdr, true, 1, 2, 3, 0, 0x123456789abcull);
    CHECK(n == WEFT_WIRE_EAGER_SYNC_HDR);
    len = one_chunk(hdr, n, NULL, 0);
    CHECK(decode_all(pkt, len, &c, 1) == 1);
    CHECK(c.kind == WEFT_CHUNK_EAGER_SYNC && c.sreq == 0x123456789abcull && c.len == 0 &&
          !c.payload);

    weft_rkey_t key = {.len = 24};
    for (int i = 0; i < 24; i++)
        key.bytes[i] = (uint8_t)(i * 7);
    n = weft__wire_put_rdv(hdr, 9, 10, 11, 1ull << 40, 99, &key);
    len = one_chunk(hdr, n, NULL, 0);
    CHECK(decode_all(pkt, len, &c, 1) == 1);
    CHECK(c.kind == WEFT_CHUNK_RDV && c.len == 1ull << 40 && c.sreq == 99);
    CHECK(c.rkey.len == 24 && !memcmp(c.rkey.bytes, key.bytes, 24) && !c.payload);

    n = weft__wire_put_rtr(hdr, 5, 6, 7);
    len = one_chunk(hdr, n, NULL, 0);
    CHECK(decode_all(pkt, len, &c, 1) == 1);
    CHECK(c.kind == WEFT_CHUNK_RTR && c.sreq == 5 && c.rreq == 6 && c.len == 7);

    n = weft__wire_put_rdata(hdr, 8, 4096, 3);
    len = one_chunk(hdr, n, "abc", 3);
    CHECK(decode_all(pkt, len, &c, 1) == 1);
    CHECK(c.kind == WEFT_CHUNK_RDATA && c.rreq == 8 && c.offset == 4096 && c.len == 3 &&
          !memcmp(c.payload, "abc", 3));

    n = weft__wire_put_ack(hdr, 77);
    len = one_chunk(hdr, n, NULL, 0);
    CHECK(decode_all(pkt, len, &c, 1) == 1 && c.kind == WEFT_CHUNK_ACK && c.sreq == 77);

    n = weft__wire_put_coop(hdr, 11, 3, 12, 3 << 20, 1 << 18, &key);
    CHECK(n == WEFT_WIRE_COOP_HDR);
    len = one_chunk(hdr, n, NULL, 0);
    CHECK(decode_all(pkt, len, &c, 1) == 1);
    CHECK(c.kind == WEFT_CHUNK_COOP && c.sreq == 11 && c.cell == 3 && c.gen == 12 &&
          c.len == 3 << 20 && c.piece == 1 << 18 && c.rkey.len == 24 &&
          !memcmp(c.rkey.bytes, key.bytes, 24));
    weft__le32_put(pkt + 16 + 40, 0); /* a COOP without a key is meaningless */
    CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
    weft__wire_put_coop(hdr, 11, 3, 12, 3 << 20, 0, &key);
    len = one_chunk(hdr, n, NULL, 0); /* nor one with pieces of zero bytes */
    CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);

    n = weft__wire_put_credit(hdr, 65536);
    len = one_chunk(hdr, n, NULL, 0);
    CHECK(decode_all(pkt, len, &c, 1) == 1 && c.kind == WEFT_CHUNK_CREDIT && c.bytes == 65536);

    n = weft__wire_put_cancel(hdr, 0x500000007ull, 0xfffffffe);
    CHECK(n == WEFT_WIRE_CANCEL_HDR);
    len = one_chunk(hdr, n, NULL, 0);
    CHECK(decode_all(pkt, len, &c, 1) == 1);
    CHECK(c.kind == WEFT_CHUNK_CANCEL && c.sreq == 0x500000007ull && c.seq == 0xfffffffe &&
          !c.taken && !c.payload);
    for (int taken = 0; taken < 2; taken++) {
        n = weft__wire_put_cancel_reply(hdr, 42, taken);
        CHECK(n == WEFT_WIRE_CANCEL_HDR);
        len = one_chunk(hdr, n, NULL, 0);
        CHECK(decode_all(pkt, len, &c, 1) == 1);
        CHECK(c.kind == WEFT_CHUNK_CANCEL_REPLY && c.sreq == 42 && c.taken == taken && c.seq == 0);
    }
}

/* CANCEL and CANCEL_REPLY: every field is checked on receipt. */
static void test_cancel_malformed(void)
{
    uint8_t hdr[WEFT_WIRE_CHUNK_HDR_MAX];
    weft__wire_chunk_t c;
    for (int kind = 0; kind < 2; kind++) {
        size_t n =
            kind ? weft__wire_put_cancel_reply(hdr, 9, true) : weft__wire_put_cancel(hdr, 9, 3);
        size_t len = one_chunk(hdr, n, NULL, 0);
        CHECK(decode_all(pkt, len, &c, 1) == 1);
        uint8_t save[128];
        memcpy(save, pkt, sizeof save);
        pkt[16 + 4] = 1; /* the reserved word after the kind */
        CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
        memcpy(pkt, save, sizeof save);
        pkt[16 + 20] = 1; /* the reserved word at the end */
        CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
        memcpy(pkt, save, sizeof save);
        weft__le64_put(pkt + 16 + 8, 0); /* no request to answer */
        CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
        /* Cut short: the header does not fit what arrived. */
        memcpy(pkt, save, sizeof save);
        weft__le64_put(pkt + 8, len - 8);
        CHECK(decode_all(pkt, len - 8, &c, 1) == WEFT_EPROTO);
    }
    /* A reply is yes or no. */
    size_t n = weft__wire_put_cancel_reply(hdr, 9, false);
    size_t len = one_chunk(hdr, n, NULL, 0);
    weft__le32_put(pkt + 16 + 16, 2);
    CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
    /* Any sequence number may be named (it wraps). */
    n = weft__wire_put_cancel(hdr, 9, UINT32_MAX);
    len = one_chunk(hdr, n, NULL, 0);
    CHECK(decode_all(pkt, len, &c, 1) == 1 && c.seq == UINT32_MAX);
}

static void test_multi_chunk(void)
{
    /* ACK + EAGER(5 bytes, padded) + CREDIT in one packet. */
    uint8_t *p = pkt + WEFT_WIRE_PKT_HDR;
    p += weft__wire_put_ack(p, 1);
    size_t n = weft__wire_put_eager(p, false, 0, 42, 0, 5, 0);
    memcpy(p + n, "12345", 5);
    p += weft__wire_chunk_size(n, 5);
    p += weft__wire_put_credit(p, 9);
    size_t len = (size_t)(p - pkt);
    weft__wire_put_packet(pkt, 3, len);
    weft__wire_chunk_t c[3];
    CHECK(decode_all(pkt, len, c, 3) == 3);
    CHECK(c[0].kind == WEFT_CHUNK_ACK && c[1].kind == WEFT_CHUNK_EAGER &&
          c[2].kind == WEFT_CHUNK_CREDIT && c[1].tag == 42 && c[2].bytes == 9);
    /* The same bytes announcing 2 or 4 chunks are refused. */
    weft__wire_put_packet(pkt, 2, len);
    CHECK(decode_all(pkt, len, c, 3) == WEFT_EPROTO);
    weft__wire_put_packet(pkt, 4, len);
    CHECK(decode_all(pkt, len, c, 3) == WEFT_EPROTO);
}

static void test_malformed(void)
{
    uint8_t hdr[WEFT_WIRE_CHUNK_HDR_MAX];
    weft__wire_chunk_t c;
    size_t n = weft__wire_put_eager(hdr, false, 1, 2, 3, 16, 0);
    uint8_t data[16] = {0};
    size_t len = one_chunk(hdr, n, data, sizeof data);
    CHECK(decode_all(pkt, len, &c, 1) == 1);

    uint8_t save[4096];
    memcpy(save, pkt, sizeof save);
    struct {
        size_t off;
        uint8_t val;
        const char *what;
    } edits[] = {
        {0, 'X', "magic"},
        {4, WEFT_WIRE_VERSION - 1, "version (the previous one)"},
        {5, 1, "packet flags"},
        {16, 0, "chunk kind 0"},
        {16, 99, "unknown chunk kind"},
        {17, 1, "chunk flags"},
        {18, 1, "chunk reserved"},
        {16 + 20, 1, "message reserved word"},
        {16 + 31, 0x80, "payload length beyond the packet"},
    };
    for (size_t i = 0; i < WEFT_ARRAY_SIZE(edits); i++) {
        memcpy(pkt, save, sizeof save);
        pkt[edits[i].off] = edits[i].val;
        int rc = decode_all(pkt, len, &c, 1);
        if (rc != WEFT_EPROTO)
            fprintf(stderr, "malformed %s was accepted\n", edits[i].what);
        CHECK(rc == WEFT_EPROTO);
    }
    /* Length field disagreeing with what arrived, both ways; truncations. */
    memcpy(pkt, save, sizeof save);
    CHECK(decode_all(pkt, len - 8, &c, 1) == WEFT_EPROTO);
    CHECK(decode_all(pkt, len + 8, &c, 1) == WEFT_EPROTO);
    for (size_t cut = 0; cut < len; cut++) {
        weft__le64_put(pkt + 8, cut);
        CHECK(decode_all(pkt, cut, &c, 1) == WEFT_EPROTO);
    }
    CHECK(decode_all(NULL, 0, &c, 1) == WEFT_EPROTO);
    /* A payload length of 2^64-1 must not wrap any bounds check. */
    memcpy(pkt, save, sizeof save);
    weft__le64_put(pkt + 16 + 24, UINT64_MAX);
    CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
    /* A message tag equal to the wildcard is not a tag. */
    memcpy(pkt, save, sizeof save);
    weft__le64_put(pkt + 16 + 8, UINT64_MAX);
    CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
    /* An rkey longer than the field. */
    weft_rkey_t key = {.len = 8};
    n = weft__wire_put_rdv(hdr, 1, 2, 3, 100, 4, &key);
    len = one_chunk(hdr, n, NULL, 0);
    CHECK(decode_all(pkt, len, &c, 1) == 1);
    weft__le32_put(pkt + 16 + 40, WEFT_RKEY_MAX + 1);
    CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
}

/* Every single-bit corruption of the len-byte packet in pkt, and every length
 * cut, judged alike by both decoders (decode_all compares them); pkt is left
 * as it was. */
static void flips_and_cuts(size_t len)
{
    weft__wire_chunk_t c;
    uint8_t save[256];
    memcpy(save, pkt, len);
    for (size_t bit = 0; bit < len * 8; bit++) {
        memcpy(pkt, save, len);
        pkt[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        decode_all(pkt, len, &c, 1);
    }
    memcpy(pkt, save, len);
    for (size_t cut = 0; cut <= len + 8; cut++)
        decode_all(pkt, cut, &c, 1);
    memcpy(pkt, save, len);
}

/* Small eager packets, through flips_and_cuts. */
static void test_lone_eager_flips(void)
{
    uint8_t hdr[WEFT_WIRE_CHUNK_HDR_MAX];
    weft__wire_chunk_t c;
    static const size_t sizes[] = {0, 1, 7, 8, 9, 16, 100};
    uint8_t data[100];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 13 + 1);
    for (size_t s = 0; s < WEFT_ARRAY_SIZE(sizes); s++) {
        size_t n = weft__wire_put_eager(hdr, false, 41, 1234, 5, sizes[s], 0);
        size_t len = one_chunk(hdr, n, data, sizes[s]);
        CHECK(decode_all(pkt, len, &c, 1) == 1);
        CHECK(weft__wire_lone_eager(pkt, len, &c) == 1 && c.len == sizes[s] && c.seq == 41);
        flips_and_cuts(len);
    }
}

/* The short form: a lone message in 20 bytes of header, taken alike by both
 * decoders; every bit flip and length cut judged alike; a wrong version,
 * flags or the wildcard tag rejected. */
static void test_short(void)
{
    weft__wire_chunk_t c;
    static const size_t sizes[] = {0, 1, 8, 13, WEFT_WIRE_SHORT_MAX};
    uint8_t data[WEFT_WIRE_SHORT_MAX];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7 + 3);
    for (size_t s = 0; s < WEFT_ARRAY_SIZE(sizes); s++) {
        memset(pkt, 0, sizeof pkt);
        size_t h = weft__wire_put_short(pkt, 0xfffffffe, WEFT_TAG_MAX, 9);
        CHECK(h == WEFT_WIRE_SHORT_HDR);
        memcpy(pkt + h, data, sizes[s]);
        size_t len = h + sizes[s];
        CHECK(decode_all(pkt, len, &c, 1) == 1);
        CHECK(c.kind == WEFT_CHUNK_EAGER && c.seq == 0xfffffffe && c.tag == WEFT_TAG_MAX &&
              c.comm == 9 && c.len == sizes[s] && c.sreq == 0);
        CHECK(sizes[s] ? c.payload == pkt + h && !memcmp(c.payload, data, sizes[s])
                       : c.payload == NULL);
        if (sizes[s] > 16)
            continue; /* flips and cuts of the small ones are enough */
        flips_and_cuts(len);
    }
    size_t len = weft__wire_put_short(pkt, 1, 2, 3) + 4;
    pkt[2] = WEFT_WIRE_VERSION - 1;
    CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
    weft__wire_put_short(pkt, 1, 2, 3);
    pkt[3] = 1;
    CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
    weft__wire_put_short(pkt, 1, UINT64_MAX, 3);
    CHECK(decode_all(pkt, len, &c, 1) == WEFT_EPROTO);
    CHECK(decode_all(pkt, WEFT_WIRE_SHORT_HDR - 1, &c, 1) == WEFT_EPROTO);
}

static void test_seq_wrap(void)
{
    CHECK(weft__seq_before(1, 2));
    CHECK(!weft__seq_before(2, 1));
    CHECK(!weft__seq_before(5, 5));
    CHECK(weft__seq_before(0xffffffffu, 0));
    CHECK(weft__seq_before(0xfffffff0u, 0x10));
    CHECK(!weft__seq_before(0x10, 0xfffffff0u));
    uint32_t s = 0xfffffffdu;
    for (int i = 0; i < 10; i++, s++)
        CHECK(weft__seq_before(s, s + 1) && !weft__seq_before(s + 1, s));
}

typedef struct item {
    int v;
    weft_list_t link;
} item_t;

static void test_list(void)
{
    weft_list_t l;
    weft_list_init(&l);
    CHECK(weft_list_empty(&l) && weft_list_pop_front(&l) == NULL);
    item_t it[5];
    for (int i = 0; i < 5; i++) {
        it[i].v = i;
        weft_list_push_back(&l, &it[i].link);
    }
    weft_list_remove(&it[2].link);
    weft_list_remove(&it[2].link); /* twice is harmless */
    weft_list_push_front(&l, &it[2].link);
    int want[] = {2, 0, 1, 3, 4}, k = 0;
    weft_list_t *e;
    while ((e = weft_list_pop_front(&l)))
        CHECK(weft_list_entry(e, item_t, link)->v == want[k++]);
    CHECK(k == 5 && weft_list_empty(&l));
}

static void test_handles(void)
{
    weft__handles_t h = {.free_head = UINT32_MAX};
    struct weft_request reqs[200];
    uint64_t ids[200];
    for (int i = 0; i < 200; i++)
        CHECK(weft__handle_add(&h, &reqs[i], &ids[i]) == WEFT_OK);
    for (int i = 0; i < 200; i++)
        CHECK(weft__handle_get(&h, ids[i]) == &reqs[i]);
    CHECK(weft__handle_get(&h, 0) == NULL);
    weft__handle_remove(&h, ids[7]);
    CHECK(weft__handle_get(&h, ids[7]) == NULL); /* stale */
    uint64_t again;
    CHECK(weft__handle_add(&h, &reqs[7], &again) == WEFT_OK);
    CHECK(again != ids[7] && (uint32_t)again == (uint32_t)ids[7]);
    CHECK(weft__handle_get(&h, ids[7]) == NULL && weft__handle_get(&h, again) == &reqs[7]);
    /* Forged ids: slot out of range, wrong generation. */
    CHECK(weft__handle_get(&h, (1ull << 32) | 100000u) == NULL);
    CHECK(weft__handle_get(&h, ids[3] + (5ull << 32)) == NULL);
    weft__handle_remove(&h, ids[3] + (5ull << 32)); /* ignored */
    CHECK(weft__handle_get(&h, ids[3]) == &reqs[3]);
    weft__handles_fini(&h);
}

int main(void)
{
    test_watchdog(60);
    test_roundtrip();
    test_multi_chunk();
    test_malformed();
    test_cancel_malformed();
    test_lone_eager_flips();
    test_short();
    test_seq_wrap();
    test_list();
    test_handles();
    return test_summary("test_wire");
}
