/* Counters per gate and per strategy: the public read-out, and the lines
 * WEFT_STATS=1 prints at finalize, so a person can see what the scheduler did
 * (how many chunks each packet carried, how often sends waited to share one). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core_int.h"
#include "util/param.h"

/* Fill the groups of out that its field_mask names from one gate's counters,
 * adding to what is there (sum) or replacing it. Under the gate's lock: a
 * thread may be sending on it without the engine lock. */
static void fill(weft_gate_counters_t *out, weft__gate_t *g, bool sum)
{
    weft__gate_lock(g);
    const weft__gate_stats_t *st = &g->stats;
    if (out->field_mask & WEFT_GATE_COUNTERS_V2)
        out->sent_unlocked += st->sent_unlocked;
    if (out->field_mask & WEFT_GATE_COUNTERS_V3) {
        out->pieces_moved += atomic_load_explicit(&g->pieces_moved, memory_order_relaxed);
        out->pieces_unlocked += atomic_load_explicit(&g->pieces_unlocked, memory_order_relaxed);
    }
    if (out->field_mask & WEFT_GATE_COUNTERS_V4)
        out->pieces_refused += atomic_load_explicit(&g->pieces_refused, memory_order_relaxed);
    if (!(out->field_mask & WEFT_GATE_COUNTERS_V1)) {
        weft__gate_unlock(g);
        return;
    }
    if (!sum) {
        snprintf(out->strategy, sizeof out->strategy, "%s", g->strategy->name);
        snprintf(out->driver, sizeof out->driver, "%s", g->drv_ops ? g->drv_ops->name : "");
    }
    out->packets_sent += st->packets_sent;
    out->chunks_sent += st->chunks_sent;
    if (st->max_chunks > out->max_chunks_per_packet)
        out->max_chunks_per_packet = st->max_chunks;
    out->wire_bytes_sent += st->wire_bytes_sent;
    out->messages_sent += st->messages_sent;
    out->msg_bytes_sent += st->msg_bytes_sent;
    out->rdv_sent += st->rdv_sent;
    out->ctrl_sent += st->ctrl_sent;
    out->rdata_bytes_sent += st->rdata_bytes_sent;
    out->held += st->held;
    out->packets_received += st->packets_received;
    out->chunks_received += st->chunks_received;
    out->wire_bytes_received += st->wire_bytes_received;
    weft__gate_unlock(g);
}

void weft__counters_sum(struct weft_ctx *ctx, weft_counters_t *out)
{
    *out = ctx->counters;
    for (int r = 0; r < atomic_load(&ctx->npeers); r++) {
        weft__gate_t *g = &ctx->gates[r];
        weft__gate_lock(g);
        out->packets_sent += g->stats.packets_sent;
        out->chunks_sent += g->stats.chunks_sent;
        out->eager_sent += g->sent.eager;
        out->rdv_sent += g->sent.rdv;
        out->bytes_sent += g->sent.bytes;
        out->credit_stalls += g->sent.credit_stalls;
        weft__gate_unlock(g);
    }
}

/* Clear the groups the caller has and we know; the mask becomes what we fill.
 * A caller's struct ends with the last group it names: nothing beyond it is
 * written. */
static int start(weft_gate_counters_t *out)
{
    uint64_t mask = out->field_mask & WEFT_GATE_COUNTERS_ALL;
    if (!mask)
        return WEFT_EINVAL;
    size_t end = (mask & WEFT_GATE_COUNTERS_V4)   ? sizeof *out
                 : (mask & WEFT_GATE_COUNTERS_V3) ? offsetof(weft_gate_counters_t, pieces_refused)
                 : (mask & WEFT_GATE_COUNTERS_V2) ? offsetof(weft_gate_counters_t, pieces_moved)
                                                  : offsetof(weft_gate_counters_t, sent_unlocked);
    memset(out, 0, end);
    out->field_mask = mask;
    return WEFT_OK;
}

int weft_counters_gate(weft_ctx_t *ctx, int peer, weft_gate_counters_t *out)
{
    if (!ctx || !out)
        return WEFT_EINVAL;
    if (!weft__peer_valid(ctx, peer))
        return WEFT_ERANK;
    int rc = start(out);
    if (rc)
        return rc;
    weft_lock_acquire(&ctx->lock);
    fill(out, &ctx->gates[peer], false);
    weft_lock_release(&ctx->lock);
    return WEFT_OK;
}

int weft_counters_strategy(weft_ctx_t *ctx, const char *strategy, weft_gate_counters_t *out)
{
    if (!ctx || !strategy || !out)
        return WEFT_EINVAL;
    const weft__strategy_ops_t *st = weft__strategy_find(strategy);
    if (!st)
        return WEFT_EINVAL;
    int rc = start(out);
    if (rc)
        return rc;
    snprintf(out->strategy, sizeof out->strategy, "%s", st->name);
    weft_lock_acquire(&ctx->lock);
    for (int r = 0; r < atomic_load(&ctx->npeers); r++)
        if (ctx->gates[r].strategy == st)
            fill(out, &ctx->gates[r], true);
    weft_lock_release(&ctx->lock);
    return WEFT_OK;
}

int weft_counters_progress(weft_ctx_t *ctx, weft_progress_counters_t *out)
{
    if (!ctx || !out || !(out->field_mask & WEFT_PROGRESS_COUNTERS_ALL))
        return WEFT_EINVAL;
    weft_progress_counters_t c = {
        .field_mask = WEFT_PROGRESS_COUNTERS_V1,
        .running = ctx->progress_running,
        .events = atomic_load_explicit(&ctx->progress_events, memory_order_relaxed),
        .sleeps = atomic_load_explicit(&ctx->progress_sleeps, memory_order_relaxed),
        .woken = atomic_load_explicit(&ctx->progress_woken, memory_order_relaxed),
        .kicked = atomic_load_explicit(&ctx->progress_kicked, memory_order_relaxed),
        .wait_sleeps = atomic_load_explicit(&ctx->wait_sleeps, memory_order_relaxed),
        .wait_woken = atomic_load_explicit(&ctx->wait_woken, memory_order_relaxed),
    };
    /* A caller built before V2 has a struct that ends before it. */
    size_t len = offsetof(weft_progress_counters_t, wait_sleeps);
    if (out->field_mask & WEFT_PROGRESS_COUNTERS_V2) {
        c.field_mask |= WEFT_PROGRESS_COUNTERS_V2;
        len = sizeof c;
    }
    memcpy(out, &c, len);
    return WEFT_OK;
}

void weft__stats_print(struct weft_ctx *ctx)
{
    if (weft__param_size("WEFT_STATS", 0) == 0)
        return;
    /* Printed after the thread has stopped (finalize stops it first). */
    if (weft__param_size("WEFT_PROGRESS_THREAD", 0)) {
        weft_progress_counters_t pc = {.field_mask = WEFT_PROGRESS_COUNTERS_ALL};
        weft_counters_progress(ctx, &pc);
        char line[256];
        int n = snprintf(line, sizeof line,
                         "weft[%d] stats: progress thread: %llu events, %llu sleeps on doorbells "
                         "(%llu woken by one, %llu kicked)\n",
                         ctx->rank, (unsigned long long)pc.events, (unsigned long long)pc.sleeps,
                         (unsigned long long)pc.woken, (unsigned long long)pc.kicked);
        if (n > 0) {
            ssize_t w = write(2, line, WEFT_MIN((size_t)n, sizeof line - 1));
            (void)w;
        }
    }
    for (int r = 0; r < atomic_load(&ctx->npeers); r++) {
        weft__gate_t *g = &ctx->gates[r];
        weft__gate_lock(g);
        weft__gate_stats_t copy = g->stats;
        weft__gate_unlock(g);
        const weft__gate_stats_t *st = &copy;
        if (!st->packets_sent && !st->packets_received)
            continue;
        char line[512];
        double per = st->packets_sent ? (double)st->chunks_sent / (double)st->packets_sent : 0;
        int n = snprintf(
            line, sizeof line,
            "weft[%d] stats: gate %d %s/%s: sent %llu packets %llu chunks (%.2f/packet, max "
            "%llu) %llu messages (%llu rdv) %llu msg bytes %llu wire bytes %llu ctrl %llu "
            "held %llu unlocked; received %llu packets %llu chunks %llu wire bytes; moved %llu "
            "pieces (%llu unlocked, %llu refused)\n",
            ctx->rank, r, g->drv_ops ? g->drv_ops->name : "-", g->strategy->name,
            (unsigned long long)st->packets_sent, (unsigned long long)st->chunks_sent, per,
            (unsigned long long)st->max_chunks, (unsigned long long)st->messages_sent,
            (unsigned long long)st->rdv_sent, (unsigned long long)st->msg_bytes_sent,
            (unsigned long long)st->wire_bytes_sent, (unsigned long long)st->ctrl_sent,
            (unsigned long long)st->held, (unsigned long long)st->sent_unlocked,
            (unsigned long long)st->packets_received, (unsigned long long)st->chunks_received,
            (unsigned long long)st->wire_bytes_received,
            (unsigned long long)atomic_load_explicit(&g->pieces_moved, memory_order_relaxed),
            (unsigned long long)atomic_load_explicit(&g->pieces_unlocked, memory_order_relaxed),
            (unsigned long long)atomic_load_explicit(&g->pieces_refused, memory_order_relaxed));
        if (n > 0) {
            /* One write per line: lines of several ranks do not interleave. */
            ssize_t w = write(2, line, WEFT_MIN((size_t)n, sizeof line - 1));
            (void)w;
        }
    }
}
