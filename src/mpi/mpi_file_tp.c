/* Two-phase collective writes (MPI_File_write_all, MPI_File_write_at_all).
 *
 * Where the ranks of a file write small interleaved pieces (a strided view
 * of a few bytes a block, as a distributed array written in its natural
 * order gives), writing each piece on its own costs one system call per
 * block. A collective write whose pieces are small (a mean under TP_PIECE
 * bytes) and close together (the range they span at most TP_SPREAD times the
 * bytes written) moves in two phases instead, after ROMIO's collective
 * buffering (Thakur, Gropp, Lusk, "Data sieving and collective I/O in
 * ROMIO", 1999):
 *   1. the range that the ranks' accesses span is cut in one domain per
 *      rank; each rank sends its pieces (offsets, then data) to the ranks
 *      whose domains they fall in, with two all-to-all exchanges;
 *   2. each rank places what it received in a buffer of its domain and
 *      writes each run its pieces make together with one pwrite, leaving
 *      the gaps between runs untouched (no read-modify-write).
 * Atomic mode, sparse or large accesses and views whose pieces do not climb
 * through the file keep the independent path: every rank votes, and all
 * take the same path. */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/mpi_file_int.h"

#define TP_PIECE  ((MPI_Offset)4096)     /* mean piece below which two phases pay */
#define TP_SPREAD 4                      /* span / bytes written, at most */
#define TP_DOMAIN ((MPI_Offset)64 << 20) /* bytes of file per rank, at most */
#define TP_KEEP   ((size_t)8 << 20)      /* buffers kept from one call to the next */

typedef struct piece {
    long long off, len; /* sent as two MPI_LONG_LONG */
} piece_t;

/* The file pieces of data bytes [p, p + len) of the view, merged where they
 * follow on; *sorted cleared where one starts before the previous one ends.
 * NULL when out of memory. */
static piece_t *pieces_of(MPI_File fh, MPI_Offset p, MPI_Offset len, size_t *n, bool *sorted)
{
    size_t cap = 16;
    piece_t *v = malloc(cap * sizeof *v);
    *n = 0;
    *sorted = true;
    for (MPI_Offset q = 0; v && q < len;) {
        MPI_Offset run, off = view_map(fh, p + q, &run);
        if (run > len - q)
            run = len - q;
        if (*n && v[*n - 1].off + v[*n - 1].len == off) {
            v[*n - 1].len += run;
        } else {
            if (*n && off < v[*n - 1].off + v[*n - 1].len)
                *sorted = false;
            if (*n == cap) {
                piece_t *w = realloc(v, 2 * cap * sizeof *v);
                if (!w) {
                    free(v);
                    return NULL;
                }
                v = w;
                cap *= 2;
            }
            v[(*n)++] = (piece_t){off, run};
        }
        q += run;
    }
    return v;
}

/* Two-phase buffer k of the file, at least len bytes; NULL when out of memory.
 * Kept between calls: fresh pages at every call would cost more than the
 * data's copy. */
static void *scratch(MPI_File fh, int k, size_t len)
{
    if (fh->tp_len[k] < len) {
        free(fh->tp_buf[k]);
        fh->tp_buf[k] = malloc(len);
        fh->tp_len[k] = fh->tp_buf[k] ? len : 0;
    }
    return fh->tp_buf[k];
}

/* Give back the buffers that are larger than a file keeps. */
static void scratch_trim(MPI_File fh)
{
    for (int k = 0; k < 2; k++) {
        if (fh->tp_len[k] > TP_KEEP) {
            free(fh->tp_buf[k]);
            fh->tp_buf[k] = NULL;
            fh->tp_len[k] = 0;
        }
    }
}

/* A source's pieces, in file order (every rank sends its own that way). */
typedef struct cursor {
    const piece_t *at, *end;
} cursor_t;

/* Restore the min-heap of n cursors (by their next piece's offset) below i. */
static void heap_down(cursor_t *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < n && h[l].at->off < h[m].at->off)
            m = l;
        if (l + 1 < n && h[l + 1].at->off < h[m].at->off)
            m = l + 1;
        if (m == i)
            return;
        cursor_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static int write_full(int fd, const char *mem, size_t n, MPI_Offset off)
{
    while (n > 0) {
        ssize_t r = pwrite(fd, mem, n, off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? errno_class(errno) : MPI_ERR_IO;
        mem += r;
        off += r;
        n -= (size_t)r;
    }
    return MPI_SUCCESS;
}

/* The owner's phase: place the pieces gathered from every rank (source s
 * sent count[s] of them from pc + first[s]; their data one after the other
 * in `data`) in its domain [ds, ds + span), then write each run they make
 * together, found by merging the sources' ordered pieces (n log np). Where
 * ranks' pieces overlap, the later rank's data stands (the standard leaves
 * overlapping collective writes undefined). */
static int write_domain(MPI_File fh, const piece_t *pc, const int *first, const int *count, int np,
                        const char *data, MPI_Offset ds, MPI_Offset span)
{
    size_t n = 0;
    for (int s = 0; s < np; s++)
        n += (size_t)count[s];
    if (n == 0)
        return MPI_SUCCESS;
    char *dom = scratch(fh, 0, (size_t)span);
    cursor_t *heap = malloc((size_t)np * sizeof *heap);
    if (!dom || !heap) {
        free(heap);
        return MPI_ERR_NO_MEM;
    }
    int err = MPI_SUCCESS, hn = 0;
    for (size_t i = 0; i < n && !err; i++) {
        if (pc[i].off < ds || pc[i].len > ds + span - pc[i].off) {
            err = MPI_ERR_INTERN; /* a sender cut its pieces wrong */
            break;
        }
        memcpy(dom + (pc[i].off - ds), data, (size_t)pc[i].len);
        data += pc[i].len;
    }
    for (int s = 0; s < np; s++)
        if (count[s])
            heap[hn++] = (cursor_t){pc + first[s], pc + first[s] + count[s]};
    for (int i = hn / 2 - 1; i >= 0; i--)
        heap_down(heap, hn, i);
    long long start = -1, end = -1;
    while (hn && !err) {
        const piece_t *p = heap[0].at++;
        if (heap[0].at == heap[0].end)
            heap[0] = heap[--hn];
        heap_down(heap, hn, 0);
        if (start >= 0 && p->off <= end) { /* the run goes on */
            if (p->off + p->len > end)
                end = p->off + p->len;
            continue;
        }
        if (start >= 0)
            err = write_full(fh->fd, dom + (start - ds), (size_t)(end - start), start);
        start = p->off;
        end = p->off + p->len;
    }
    if (!err && start >= 0)
        err = write_full(fh->fd, dom + (start - ds), (size_t)(end - start), start);
    free(heap);
    return err;
}

/* Counts and displacements of the two exchanges, one int per rank each. */
typedef struct plan {
    int *pc_s, *pc_sd, *pc_r, *pc_rd; /* long longs of pieces sent and received */
    int *b_s, *b_sd, *b_r, *b_rd;     /* bytes of data */
} plan_t;

/* The exchanges' counts from each owner's share (cnt: pieces' long longs and
 * bytes per owner, 2 ints each; rcnt the same received); *rp and *rb the long
 * longs and bytes this rank receives. */
static void plan_make(plan_t *pl, int *cnt, int *rcnt, int np, long long *rp, long long *rb)
{
    int *a = rcnt + 2 * np;
    *pl =
        (plan_t){a, a + np, a + 2 * np, a + 3 * np, a + 4 * np, a + 5 * np, a + 6 * np, a + 7 * np};
    int sp = 0, sb = 0;
    *rp = *rb = 0;
    for (int d = 0; d < np; d++) {
        pl->pc_s[d] = cnt[2 * d], pl->pc_sd[d] = sp, sp += pl->pc_s[d];
        pl->b_s[d] = cnt[2 * d + 1], pl->b_sd[d] = sb, sb += pl->b_s[d];
        pl->pc_r[d] = rcnt[2 * d], pl->pc_rd[d] = (int)*rp, *rp += pl->pc_r[d];
        pl->b_r[d] = rcnt[2 * d + 1], pl->b_rd[d] = (int)*rb, *rb += pl->b_r[d];
    }
}

int weft__mpi_file_tp_write(MPI_File fh, MPI_Offset at, const void *buf, int count,
                            MPI_Datatype type, int err, MPI_Offset *moved)
{
    MPI_Comm c = fh->comm;
    int np = c->size;
    *moved = 0;
    MPI_Offset total = err ? 0 : (MPI_Offset)count * (MPI_Offset)file_bytes(fh, type);
    size_t n = 0;
    bool sorted = true;
    piece_t *pc = total ? pieces_of(fh, at * (MPI_Offset)fh->esize, total, &n, &sorted) : NULL;
    if (total && !pc) {
        err = MPI_ERR_NO_MEM;
        total = 0;
        n = 0;
    }
    /* Per owner, 2 ints sent and 2 received, then the 8 arrays of plan_t. */
    int *cnt = calloc(12 * (size_t)np, sizeof *cnt);
    /* Every rank learns the span of all accesses, the bytes and pieces in
     * all, and whether any rank cannot take part. */
    long long mins[2] = {n ? pc[0].off : LLONG_MAX,
                         n ? -(pc[n - 1].off + pc[n - 1].len) : LLONG_MAX};
    long long sums[3] = {total, (long long)n, !cnt || !sorted};
    PMPI_Allreduce(MPI_IN_PLACE, mins, 2, MPI_LONG_LONG, MPI_MIN, c);
    PMPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_LONG_LONG, MPI_SUM, c);
    long long gmin = mins[0], gmax = -mins[1], all = sums[0];
    long long dsize = all ? (gmax - gmin + np - 1) / np : 0;
    /* One owner receives at most `all` bytes, so the int counts hold. */
    if (np < 2 || fh->atomic || sums[2] || !all || all / sums[1] >= TP_PIECE ||
        gmax - gmin > TP_SPREAD * all || dsize > TP_DOMAIN || all > INT_MAX / 4) {
        free(pc);
        free(cnt);
        return 1;
    }
    /* This rank's data as one stream, in file order. */
    char *stage = NULL;
    const char *src = NULL;
    if (total && type->contig && !fh->external32) {
        src = weft__mpi_at(buf, type->true_lb);
    } else if (total && !fh->external32) {
        stage = malloc((size_t)total);
        if (stage)
            weft__mpi_type_pack(type, buf, (size_t)count, 0, (size_t)total, stage);
        src = stage;
    } else if (total) {
        /* The native packing first, then its external32 images. */
        size_t native_len = (size_t)count * type->size;
        char *native = malloc(native_len + 1);
        stage = native ? malloc((size_t)total) : NULL;
        if (stage) {
            weft__mpi_type_pack(type, buf, (size_t)count, 0, native_len, native);
            weft__mpi_type_external_conv(type, (size_t)count, native, stage, true);
        }
        free(native);
        src = stage;
    }
    /* Pieces cut at the domains' edges (each edge cuts at most one piece),
     * counted per owner. */
    piece_t *out = malloc((n + (size_t)np) * sizeof *out);
    if (total && (!src || !out)) {
        err = MPI_ERR_NO_MEM;
        n = 0; /* this rank takes part with nothing */
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        for (long long off = pc[i].off, end = pc[i].off + pc[i].len; off < end;) {
            int d = (int)((off - gmin) / dsize);
            long long dend = gmin + (long long)(d + 1) * dsize, e = end < dend ? end : dend;
            out[m++] = (piece_t){off, e - off};
            cnt[2 * d] += 2;
            cnt[2 * d + 1] += (int)(e - off);
            off = e;
        }
    }
    int *rcnt = cnt + 2 * np;
    PMPI_Alltoall(cnt, 2, MPI_INT, rcnt, 2, MPI_INT, c);
    plan_t pl;
    long long rp, rb;
    plan_make(&pl, cnt, rcnt, np, &rp, &rb);
    piece_t *in = malloc((size_t)rp / 2 * sizeof *in + 1);
    char *data = scratch(fh, 1, (size_t)rb + 1);
    /* Every rank has its buffers before any data moves. */
    int lerr = !in || !data ? MPI_ERR_NO_MEM : MPI_SUCCESS, ok = !lerr;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c);
    if (ok) {
        PMPI_Alltoallv(out, pl.pc_s, pl.pc_sd, MPI_LONG_LONG, in, pl.pc_r, pl.pc_rd, MPI_LONG_LONG,
                       c);
        PMPI_Alltoallv(src, pl.b_s, pl.b_sd, MPI_BYTE, data, pl.b_r, pl.b_rd, MPI_BYTE, c);
        long long ds = gmin + (long long)c->rank * dsize, de = ds + dsize;
        if (de > gmax)
            de = gmax;
        /* Pieces per source: half the long longs (reuses the sent-count
         * arrays, done with). */
        for (int r = 0; r < np; r++) {
            pl.pc_s[r] = pl.pc_r[r] / 2;
            pl.pc_sd[r] = pl.pc_rd[r] / 2;
        }
        lerr = write_domain(fh, in, pl.pc_sd, pl.pc_s, np, data, ds, de > ds ? de - ds : 0);
    } else if (!lerr) {
        lerr = MPI_ERR_NO_MEM; /* another rank's: nothing was written */
    }
    /* Every rank learns whether any owner failed: its data may be lost. */
    int worst = lerr;
    PMPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, c);
    scratch_trim(fh);
    free(pc);
    free(stage);
    free(out);
    free(cnt);
    free(in);
    if (!err && !worst)
        *moved = total;
    return err ? err : worst;
}
