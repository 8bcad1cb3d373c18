/* MPI I/O (MPI 3.1 chapter 13) on POSIX files.
 *
 * Every process of the file's communicator opens the file itself; data moves
 * with pread/pwrite at the offsets the view gives, so any file system the
 * processes share (a local disk for one node, NFS or a parallel file system
 * for several) works as it does for POSIX programs.
 *
 * - The view: the stream of data bytes a process reads or writes is mapped
 *   onto the filetype's segments, tiled from disp every extent bytes
 *   (view_map). A filetype whose tiles form one range maps by addition.
 *   Memory that is not contiguous is packed into (or unpacked from) a staging
 *   buffer, STAGE bytes at a time, so a large access needs no large buffer.
 * - Positions are counted in etypes of the view: explicit offsets, the
 *   individual file pointer (per handle), the shared file pointer (per open
 *   file: 8 bytes in a side file ".<name>.weft-sp-<id>" in the file's own
 *   directory, made at its first use and removed at close, read and moved
 *   under an fcntl lock, so it works wherever the file system honours fcntl
 *   locks, as NFS does).
 * - Collective writes of small interleaved pieces (write_all, write_at_all)
 *   go through two-phase I/O (mpi_file_tp.c): the ranks exchange their
 *   pieces so that each writes one part of the file in few large writes.
 *   Other collective calls (..._all reads, ordered, set_view, set_size...)
 *   need no data exchange: each process does its own part (reads of small
 *   pieces go through the sieve). The ordered calls agree
 *   on their places with an exclusive scan, and the calls that change the
 *   file for everyone (set_size, preallocate, the shared pointer's moves) are
 *   done by rank 0 and followed by a barrier.
 * - Non-blocking calls and split collectives complete at once: their request
 *   (or the _end call) hands over the status.
 * - Atomic mode (MPI_File_set_atomicity) holds an fcntl lock over the range
 *   an access spans while it runs, so concurrent accesses see each other
 *   whole.
 * - Data representations: "native" and "internal" (the same here), and
 *   "external32": the view's etype and filetype are rebuilt as the file sees
 *   them (MPI_LONG in 4 bytes, pairs without padding: mpi_type_pack.c), so
 *   positions and extents are the file's, and MPI_File_get_type_extent gives
 *   the file's extent; data goes through the staging buffer and is
 *   converted there (big-endian, long double as binary128). Names given to
 *   MPI_Register_datarep are recorded, but a view in one is refused with
 *   MPI_ERR_UNSUPPORTED_DATAREP (no conversion through user functions).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mpi/mpi_file_int.h"
#include "mpi/mpi_int.h"
#include "mpi/mpi_type_int.h"

#define STAGE ((size_t)4 << 20) /* staging bytes per step for non-contiguous memory */

/* ---------------------------------------------------------------- errors */

static bool file_ok(MPI_File fh)
{
    return fh && fh != MPI_FILE_NULL && fh->magic == WEFT_MPI_MAGIC_FILE;
}

/* The checks every call on an open file starts with. */
#define FILE_CHECK(fh, fn)                                                                         \
    do {                                                                                           \
        if (!file_ok(fh))                                                                          \
            return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_FILE, fn);                            \
    } while (0)

/* A path as the program gave it, less a file-system prefix ("ufs:", "nfs:"...)
 * that MPI programs may put in front of a name for other implementations. */
static const char *strip_prefix(const char *name)
{
    static const char *const prefixes[] = {"ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:", "xfs:"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return name + strlen(prefixes[i]);
    return name;
}

/* ---------------------------------------------------------------- the view */

static void view_release(MPI_File fh)
{
    weft__mpi_type_release(fh->etype);
    weft__mpi_type_release(fh->filetype);
    weft__mpi_type_release(fh->user_etype);
    weft__mpi_type_release(fh->user_filetype);
    free(fh->pos);
    fh->pos = NULL;
}

/* Install a view: etype and filetype as the file sees them, and as the
 * program gave them; the caller has checked the types. */
static int view_set(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                    MPI_Datatype user_etype, MPI_Datatype user_filetype)
{
    size_t *pos = malloc(((size_t)filetype->nsegs + 1) * sizeof *pos);
    if (!pos)
        return MPI_ERR_NO_MEM;
    pos[0] = 0;
    for (int i = 0; i < filetype->nsegs; i++)
        pos[i + 1] = pos[i] + filetype->segs[i].len;
    weft__mpi_type_retain(etype);
    weft__mpi_type_retain(filetype);
    weft__mpi_type_retain(user_etype);
    weft__mpi_type_retain(user_filetype);
    if (fh->pos)
        view_release(fh);
    fh->disp = disp;
    fh->etype = etype;
    fh->filetype = filetype;
    fh->user_etype = user_etype;
    fh->user_filetype = user_filetype;
    fh->esize = etype->size;
    fh->fsize = filetype->size;
    fh->fextent = weft__mpi_type_extent(filetype);
    fh->dense = filetype->contig && (MPI_Aint)filetype->size == fh->fextent &&
                filetype->true_lb == filetype->lb;
    fh->pos = pos;
    fh->fp = 0;
    return MPI_SUCCESS;
}

/* How many data bytes of the view lie before file offset `end` (the view's
 * size of a file of `end` bytes). */
static MPI_Offset view_bytes_before(const struct weft_mpi_file *fh, MPI_Offset end)
{
    if (fh->dense) {
        MPI_Offset first = fh->disp + fh->filetype->true_lb;
        return end > first ? end - first : 0;
    }
    if (end <= fh->disp)
        return 0;
    MPI_Offset rel = end - fh->disp, tiles = rel / fh->fextent, rem = rel - tiles * fh->fextent;
    MPI_Offset n = tiles * (MPI_Offset)fh->fsize;
    for (int i = 0; i < fh->filetype->nsegs; i++) {
        const weft_mpi_seg_t *s = &fh->filetype->segs[i];
        if (s->off >= rem)
            break;
        n += rem - s->off < (MPI_Offset)s->len ? rem - s->off : (MPI_Offset)s->len;
    }
    return n;
}

/* The position, in etypes, just past the end of the file as the view sees it. */
static int view_eof(MPI_File fh, MPI_Offset *out)
{
    struct stat st;
    if (fstat(fh->fd, &st) != 0)
        return errno_class(errno);
    MPI_Offset bytes = view_bytes_before(fh, st.st_size);
    *out = (bytes + (MPI_Offset)fh->esize - 1) / (MPI_Offset)fh->esize;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- data access */

/* pread all of [off, off + n) into mem, or up to the end of the file; the
 * bytes read, or -1 with errno set. */
static ssize_t read_full(int fd, char *mem, size_t n, MPI_Offset off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, mem + got, n - got, off + (MPI_Offset)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Data sieving for reads: pieces of the view shorter than SIEVE_RUN are read
 * in one pread of the file range that holds them (at most SIEVE bytes, gaps
 * included), then copied out; where pieces are small, many system calls
 * become one. Reads only: a write would have to read, merge and write back a
 * range other processes may be writing. */
#define SIEVE     ((size_t)1 << 20)
#define SIEVE_RUN ((MPI_Offset)8192)

/* Read data bytes [p + *done, p + len) of the view through the sieve, one
 * window's worth; *eof set when the file ended inside it. */
static int sieve_read(MPI_File fh, char *mem, MPI_Offset p, size_t len, size_t *done, char *sieve,
                      bool *eof)
{
    MPI_Offset run, start = view_map(fh, p + (MPI_Offset)*done, &run), end = start;
    /* The window: whole pieces, in file order, while they fit in SIEVE bytes
     * of file; data bytes [*done, stop) of the access. A view whose tiles
     * overlap (allowed on a file not open for writing) can go back in the
     * file: the window ends before such a piece, which starts the next. */
    size_t stop = *done;
    for (size_t q = *done; q < len;) {
        MPI_Offset o = view_map(fh, p + (MPI_Offset)q, &run);
        MPI_Offset n = (MPI_Offset)(len - q) < run ? (MPI_Offset)(len - q) : run;
        if (q > *done && (o < end || o + n - start > (MPI_Offset)SIEVE))
            break;
        end = o + n;
        q += (size_t)n;
        stop = q;
    }
    ssize_t got = read_full(fh->fd, sieve, (size_t)(end - start), start);
    if (got < 0)
        return errno_class(errno);
    *eof = got < end - start;
    while (*done < stop) {
        MPI_Offset o = view_map(fh, p + (MPI_Offset)*done, &run);
        MPI_Offset n = (MPI_Offset)(stop - *done) < run ? (MPI_Offset)(stop - *done) : run;
        MPI_Offset have = start + got - o; /* of this piece, before the end of the file */
        if (have <= 0)
            break;
        if (have < n)
            n = have;
        memcpy(mem + *done, sieve + (o - start), (size_t)n);
        *done += (size_t)n;
    }
    return MPI_SUCCESS;
}

/* Move len bytes between mem and the file at data bytes [p, p + len) of the
 * view, one system call per range the view keeps together (reads of small
 * pieces go through the sieve). A read stops at the end of the file; *done
 * says how many bytes moved. */
static int move(MPI_File fh, bool write, char *mem, MPI_Offset p, size_t len, size_t *done)
{
    *done = 0;
    char *sieve = NULL;
    while (*done < len) {
        MPI_Offset run;
        MPI_Offset off = view_map(fh, p + (MPI_Offset)*done, &run);
        size_t n = len - *done;
        if (!write && run < SIEVE_RUN && (MPI_Offset)n > run &&
            (sieve || (sieve = malloc(SIEVE)))) {
            bool eof = false;
            int err = sieve_read(fh, mem, p, len, done, sieve, &eof);
            if (err || eof) {
                free(sieve);
                return err;
            }
            continue;
        }
        /* Grow the range while the next piece of the view follows on. */
        while ((MPI_Offset)n > run) {
            MPI_Offset more;
            MPI_Offset next = view_map(fh, p + (MPI_Offset)*done + run, &more);
            if (next != off + run)
                break;
            run += more;
        }
        if ((MPI_Offset)n > run)
            n = (size_t)run;
        while (n > 0) {
            ssize_t r =
                write ? pwrite(fh->fd, mem + *done, n, off) : pread(fh->fd, mem + *done, n, off);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) { /* an error, or the end of the file (never on a write) */
                free(sieve);
                return r < 0 ? errno_class(errno) : MPI_SUCCESS;
            }
            *done += (size_t)r;
            off += r;
            n -= (size_t)r;
        }
    }
    free(sieve);
    return MPI_SUCCESS;
}

/* Lock (type F_RDLCK / F_WRLCK) or unlock (F_UNLCK) the file bytes that data
 * bytes [p, p + len) of the view span. */
static int range_lock(MPI_File fh, short type, MPI_Offset p, MPI_Offset len)
{
    MPI_Offset run, first = view_map(fh, p, &run), last = view_map(fh, p + len - 1, &run);
    struct flock fl = {
        .l_type = type, .l_whence = SEEK_SET, .l_start = first, .l_len = last - first + 1};
    if (last < first) { /* tiles that overlap go back: the whole file */
        fl.l_start = 0;
        fl.l_len = 0;
    }
    while (fcntl(fh->fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return errno_class(errno);
    return MPI_SUCCESS;
}

/* The status of an access of elements of type that moved `moved` bytes of
 * the file: its count is in the memory's bytes (whole elements where the
 * file's images have another size). */
static void status_moved(const struct weft_mpi_file *fh, MPI_Status *status, MPI_Datatype type,
                         MPI_Offset moved)
{
    size_t fb = file_bytes(fh, type);
    MPI_Offset bytes = moved;
    if (fb != type->size)
        bytes = fb ? moved / (MPI_Offset)fb * (MPI_Offset)type->size : 0;
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->weft_cancelled = 0;
    status->weft_count = bytes;
}

/* The checks of a data access: an error class, or MPI_SUCCESS. */
static int access_check(MPI_File fh, bool write, const void *buf, int count, MPI_Datatype type)
{
    int err = weft__mpi_check_count(count);
    if (!err)
        err = weft__mpi_check_type(type);
    if (!err)
        err = weft__mpi_check_buf(buf, count, type);
    if (err)
        return err;
    if (write && (fh->amode & MPI_MODE_RDONLY))
        return MPI_ERR_READ_ONLY;
    if (!write && (fh->amode & MPI_MODE_WRONLY))
        return MPI_ERR_ACCESS;
    if (file_bytes(fh, type) % fh->esize)
        return MPI_ERR_TYPE; /* the data must be whole etypes (§13.3) */
    return MPI_SUCCESS;
}

/* Read or write count elements of type at buf, at position `at` (etypes) of
 * the view; *moved gets the bytes moved. */
static int data_access(MPI_File fh, bool write, MPI_Offset at, void *buf, int count,
                       MPI_Datatype type, MPI_Offset *moved)
{
    *moved = 0;
    size_t total = (size_t)count * file_bytes(fh, type);
    if (total == 0)
        return MPI_SUCCESS;
    if (at < 0)
        return MPI_ERR_ARG;
    MPI_Offset p = at * (MPI_Offset)fh->esize;
    int err = MPI_SUCCESS;
    /* fcntl locks are the process's: threads of one process take turns on
     * the file first, so that one's unlock never frees another's range. */
    bool atomic = fh->atomic; /* read once: the unlock pairs with the lock */
    if (atomic) {
        pthread_mutex_lock(&fh->atomic_lock);
        if ((err = range_lock(fh, write ? F_WRLCK : F_RDLCK, p, (MPI_Offset)total))) {
            pthread_mutex_unlock(&fh->atomic_lock);
            return err;
        }
    }
    size_t done = 0;
    bool ext = fh->external32;
    if (type->contig && !ext) {
        err = move(fh, write, weft__mpi_at(buf, type->true_lb), p, total, &done);
    } else if (!ext) {
        size_t step = total < STAGE ? total : STAGE;
        char *stage = malloc(step);
        if (!stage)
            err = MPI_ERR_NO_MEM;
        while (!err && done < total) {
            size_t n = total - done < step ? total - done : step, got;
            if (write)
                weft__mpi_type_pack(type, buf, (size_t)count, done, n, stage);
            err = move(fh, write, stage, p + (MPI_Offset)done, n, &got);
            if (!write)
                weft__mpi_type_unpack(type, buf, (size_t)count, done, got, stage);
            done += got;
            if (got < n)
                break; /* end of file */
        }
        free(stage);
    } else {
        /* external32 converts whole elements, whose file images may be
         * smaller or larger than their native packing: a step holds whole
         * elements on both sides. A piece of an element at the end of the
         * file is counted but not converted. */
        size_t xs = file_bytes(fh, type), big = xs > type->size ? xs : type->size;
        size_t per = STAGE / big ? STAGE / big : 1;
        if (per > (size_t)count)
            per = (size_t)count;
        char *native = malloc(per * type->size + 1), *stage = malloc(per * xs + 1);
        if (!native || !stage)
            err = MPI_ERR_NO_MEM;
        for (size_t e = 0; !err && e < (size_t)count; e += per) {
            size_t k = (size_t)count - e < per ? (size_t)count - e : per, got;
            if (write) {
                weft__mpi_type_pack(type, buf, (size_t)count, e * type->size, k * type->size,
                                    native);
                weft__mpi_type_external_conv(type, k, native, stage, true);
            }
            err = move(fh, write, stage, p + (MPI_Offset)done, k * xs, &got);
            if (!write) {
                size_t whole = got / xs;
                weft__mpi_type_external_conv(type, whole, native, stage, false);
                weft__mpi_type_unpack(type, buf, (size_t)count, e * type->size, whole * type->size,
                                      native);
            }
            done += got;
            if (got < k * xs)
                break; /* end of file */
        }
        free(native);
        free(stage);
    }
    if (atomic) {
        int e = range_lock(fh, F_UNLCK, p, (MPI_Offset)total);
        pthread_mutex_unlock(&fh->atomic_lock);
        if (!err)
            err = e;
    }
    *moved = (MPI_Offset)done;
    return err;
}

/* ---------------------------------------------------------------- the shared file pointer */

/* Open the side file at first use (the caller holds fh->lock). */
static int shared_fd(MPI_File fh)
{
    if (fh->sp_fd < 0) {
        fh->sp_fd = open(fh->sp_name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fh->sp_fd < 0)
            return errno_class(errno);
    }
    return MPI_SUCCESS;
}

/* Read the shared pointer and add delta to it, atomically across processes;
 * *old gets its value before. */
static int shared_fetch_add(MPI_File fh, MPI_Offset delta, MPI_Offset *old)
{
    pthread_mutex_lock(&fh->lock);
    int err = shared_fd(fh);
    if (err) {
        pthread_mutex_unlock(&fh->lock);
        return err;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};
    while (fcntl(fh->sp_fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR) {
            pthread_mutex_unlock(&fh->lock);
            return errno_class(errno);
        }
    int64_t v = 0;
    ssize_t r = pread(fh->sp_fd, &v, sizeof v, 0);
    if (r != (ssize_t)sizeof v)
        v = 0; /* a side file not written yet */
    if (r < 0)
        err = errno_class(errno);
    *old = v;
    if (!err && delta) {
        v += delta;
        if (pwrite(fh->sp_fd, &v, sizeof v, 0) != (ssize_t)sizeof v)
            err = errno_class(errno);
    }
    fl.l_type = F_UNLCK;
    fcntl(fh->sp_fd, F_SETLK, &fl);
    pthread_mutex_unlock(&fh->lock);
    return err;
}

/* Set the shared pointer (rank 0 of a collective call). */
static int shared_set(MPI_File fh, MPI_Offset v)
{
    pthread_mutex_lock(&fh->lock);
    int err = shared_fd(fh);
    int64_t w = v;
    if (!err && pwrite(fh->sp_fd, &w, sizeof w, 0) != (ssize_t)sizeof w)
        err = errno_class(errno);
    pthread_mutex_unlock(&fh->lock);
    return err;
}

/* ---------------------------------------------------------------- open, close, delete */

static bool amode_valid(int amode)
{
    int rw = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_WRONLY) + !!(amode & MPI_MODE_RDWR);
    if (rw != 1)
        return false;
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return false;
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return false;
    int known = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | MPI_MODE_CREATE |
                MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_APPEND |
                MPI_MODE_SEQUENTIAL;
    return !(amode & ~known);
}

static int open_flags(int amode)
{
    int flags = O_CLOEXEC;
    if (amode & MPI_MODE_RDONLY)
        flags |= O_RDONLY;
    else if (amode & MPI_MODE_WRONLY)
        flags |= O_WRONLY;
    else
        flags |= O_RDWR;
    return flags;
}

/* The side file's name: next to the file, unique to this open. */
static char *side_name(const char *path, MPI_Comm comm)
{
    uint64_t id[2] = {0, 0};
    if (comm->rank == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        id[0] = (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec;
        id[1] = (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&id;
    }
    PMPI_Bcast(id, 2, MPI_UINT64_T, 0, comm);
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(path) + 64;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%.*s.%s.weft-sp-%016llx%08llx", dirlen, path, base,
                 (unsigned long long)id[0], (unsigned long long)(id[1] & 0xffffffffu));
    return s;
}

static void file_free(MPI_File fh)
{
    if (fh->fd >= 0)
        close(fh->fd);
    if (fh->sp_fd >= 0)
        close(fh->sp_fd);
    if (fh->pos)
        view_release(fh);
    if (fh->comm)
        PMPI_Comm_free(&fh->comm);
    if (fh->info)
        PMPI_Info_free(&fh->info);
    if (fh->errhandler)
        weft__mpi_errh_release(fh->errhandler);
    pthread_mutex_destroy(&fh->lock);
    pthread_mutex_destroy(&fh->atomic_lock);
    free(fh->tp_buf[0]);
    free(fh->tp_buf[1]);
    free(fh->name);
    free(fh->sp_name);
    fh->magic = WEFT_MPI_MAGIC_DEAD;
    free(fh);
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char fn[] = "MPI_File_open";
    if (weft__mpi_check_init())
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_OTHER, fn);
    if (weft__mpi_check_comm(comm) || comm->inter)
        return weft__mpi_err(comm, MPI_ERR_COMM, fn);
    if (!fh || !filename)
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_ARG, fn);
    *fh = MPI_FILE_NULL;
    if (info != MPI_INFO_NULL && (!info || info->magic != WEFT_MPI_MAGIC_INFO))
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_INFO, fn);
    if (!amode_valid(amode))
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_AMODE, fn);
    MPI_File f = calloc(1, sizeof *f);
    if (!f)
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_NO_MEM, fn);
    f->magic = WEFT_MPI_MAGIC_FILE;
    f->fd = f->sp_fd = -1;
    f->amode = amode;
    pthread_mutex_init(&f->lock, NULL);
    pthread_mutex_init(&f->atomic_lock, NULL);
    int err = PMPI_Comm_dup(comm, &f->comm);
    if (err) {
        f->comm = NULL;
        file_free(f);
        return weft__mpi_err_file(MPI_FILE_NULL, err, fn);
    }
    const char *path = strip_prefix(filename);
    f->name = strdup(filename);
    f->sp_name = side_name(path, f->comm);
    err = info == MPI_INFO_NULL ? PMPI_Info_create(&f->info) : PMPI_Info_dup(info, &f->info);
    if (err)
        f->info = NULL;
    if (!err && (!f->name || !f->sp_name))
        err = MPI_ERR_NO_MEM;
    if (!err)
        err = view_set(f, 0, MPI_BYTE, MPI_BYTE, MPI_BYTE, MPI_BYTE);
    /* Rank 0 creates the file (and alone sees MPI_MODE_EXCL), then the others
     * open what it made; every process returns the worst class any met. */
    int flags = open_flags(amode);
    if (f->comm->rank == 0 && !err) {
        int cflags =
            flags | (amode & MPI_MODE_CREATE ? O_CREAT : 0) | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
        f->fd = open(path, cflags, 0666);
        if (f->fd < 0)
            err = errno_class(errno);
    }
    int first = err;
    PMPI_Bcast(&first, 1, MPI_INT, 0, f->comm);
    if (f->comm->rank != 0 && !err && !first) {
        f->fd = open(path, flags);
        if (f->fd < 0)
            err = errno_class(errno);
    }
    int worst = err ? err : first;
    PMPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, f->comm);
    if (!err)
        err = worst;
    if (err) {
        file_free(f);
        return weft__mpi_err_file(MPI_FILE_NULL, err, fn);
    }
    if (amode & MPI_MODE_APPEND) { /* both pointers start at the end (§13.2.1) */
        MPI_Offset eof = 0;
        view_eof(f, &eof);
        f->fp = eof;
        if (f->comm->rank == 0 && eof)
            shared_set(f, eof);
        PMPI_Barrier(f->comm);
    }
    f->errhandler = weft__mpi_file_default_errh();
    *fh = f;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_open)

int PMPI_File_close(MPI_File *fh)
{
    static const char fn[] = "MPI_File_close";
    if (!fh)
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_ARG, fn);
    MPI_File f = *fh;
    FILE_CHECK(f, fn);
    /* Every process is done with the file before it goes. */
    PMPI_Barrier(f->comm);
    int err = MPI_SUCCESS;
    if (f->comm->rank == 0) {
        if (unlink(f->sp_name) != 0 && errno != ENOENT)
            err = errno_class(errno);
        if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(strip_prefix(f->name)) != 0)
            err = errno_class(errno);
    }
    if (close(f->fd) != 0 && !err)
        err = MPI_ERR_IO;
    f->fd = -1;
    file_free(f);
    *fh = MPI_FILE_NULL;
    return weft__mpi_err_file(MPI_FILE_NULL, err, fn);
}
WEFT_MPI_ALIAS(File_close)

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    static const char fn[] = "MPI_File_delete";
    if (!filename)
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_ARG, fn);
    if (info != MPI_INFO_NULL && (!info || info->magic != WEFT_MPI_MAGIC_INFO))
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_INFO, fn);
    if (unlink(strip_prefix(filename)) != 0)
        return weft__mpi_err_file(MPI_FILE_NULL, errno_class(errno), fn);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_delete)

/* ---------------------------------------------------------------- size, info, group, mode */

/* Rank 0 changes the file for everyone, then all wait for it; a process
 * returns its own error, else rank 0's. */
static int by_rank0(MPI_File fh, int err)
{
    int first = err;
    PMPI_Bcast(&first, 1, MPI_INT, 0, fh->comm);
    return err ? err : first;
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    static const char fn[] = "MPI_File_set_size";
    FILE_CHECK(fh, fn);
    if (size < 0)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    if (fh->amode & MPI_MODE_RDONLY)
        return weft__mpi_err_file(fh, MPI_ERR_READ_ONLY, fn);
    int err = MPI_SUCCESS;
    if (fh->comm->rank == 0 && ftruncate(fh->fd, size) != 0)
        err = errno_class(errno);
    return weft__mpi_err_file(fh, by_rank0(fh, err), fn);
}
WEFT_MPI_ALIAS(File_set_size)

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    static const char fn[] = "MPI_File_preallocate";
    FILE_CHECK(fh, fn);
    if (size < 0)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    if (fh->amode & MPI_MODE_RDONLY)
        return weft__mpi_err_file(fh, MPI_ERR_READ_ONLY, fn);
    int err = MPI_SUCCESS;
    if (fh->comm->rank == 0 && size > 0) {
        int e = posix_fallocate(fh->fd, 0, size);
        /* A file system without allocation: extending the size is what the
         * program can observe (§13.2.5 lets the file grow to size). */
        if (e == EOPNOTSUPP || e == EINVAL) {
            struct stat st;
            e = fstat(fh->fd, &st) != 0                             ? errno
                : st.st_size < size && ftruncate(fh->fd, size) != 0 ? errno
                                                                    : 0;
        }
        if (e)
            err = errno_class(e);
    }
    return weft__mpi_err_file(fh, by_rank0(fh, err), fn);
}
WEFT_MPI_ALIAS(File_preallocate)

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char fn[] = "MPI_File_get_size";
    FILE_CHECK(fh, fn);
    if (!size)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    struct stat st;
    if (fstat(fh->fd, &st) != 0)
        return weft__mpi_err_file(fh, errno_class(errno), fn);
    *size = st.st_size;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_get_size)

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char fn[] = "MPI_File_get_group";
    FILE_CHECK(fh, fn);
    if (!group)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    return weft__mpi_err_file(fh, PMPI_Comm_group(fh->comm, group), fn);
}
WEFT_MPI_ALIAS(File_get_group)

/* A query that gives one int of an open file. */
static int file_int(MPI_File fh, int *out, int value, const char *fn)
{
    FILE_CHECK(fh, fn);
    if (!out)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    *out = value;
    return MPI_SUCCESS;
}

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    return file_int(fh, amode, file_ok(fh) ? fh->amode : 0, "MPI_File_get_amode");
}
WEFT_MPI_ALIAS(File_get_amode)

/* Add the hints of info to the file's (hints weft has no use for are kept and
 * given back, as §13.2.8 allows). */
static int info_merge(MPI_File fh, MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    if (!info || info->magic != WEFT_MPI_MAGIC_INFO)
        return MPI_ERR_INFO;
    for (int i = 0; i < info->n; i++) {
        int err = PMPI_Info_set(fh->info, info->keys[i], info->values[i]);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_info";
    FILE_CHECK(fh, fn);
    return weft__mpi_err_file(fh, info_merge(fh, info), fn);
}
WEFT_MPI_ALIAS(File_set_info)

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char fn[] = "MPI_File_get_info";
    FILE_CHECK(fh, fn);
    if (!info_used)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    return weft__mpi_err_file(fh, PMPI_Info_dup(fh->info, info_used), fn);
}
WEFT_MPI_ALIAS(File_get_info)

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    static const char fn[] = "MPI_File_set_atomicity";
    FILE_CHECK(fh, fn);
    /* Collective with the same flag everywhere: what was written before is
     * in place for every process once all have switched. */
    PMPI_Barrier(fh->comm);
    fh->atomic = flag != 0;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_set_atomicity)

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    return file_int(fh, flag, file_ok(fh) && fh->atomic, "MPI_File_get_atomicity");
}
WEFT_MPI_ALIAS(File_get_atomicity)

int PMPI_File_sync(MPI_File fh)
{
    static const char fn[] = "MPI_File_sync";
    FILE_CHECK(fh, fn);
    int err =
        fsync(fh->fd) != 0 && errno != EINVAL && errno != EROFS ? errno_class(errno) : MPI_SUCCESS;
    PMPI_Barrier(fh->comm);
    return weft__mpi_err_file(fh, err, fn);
}
WEFT_MPI_ALIAS(File_sync)

/* ---------------------------------------------------------------- views */

static bool datarep_native(const char *datarep)
{
    return datarep && (!strcmp(datarep, "native") || !strcmp(datarep, "internal"));
}

/* The displacements of a view's type must be non-negative and non-decreasing,
 * and on a file open for writing its regions must not overlap (§13.3). */
static bool view_type_ok(MPI_Datatype t, bool writable)
{
    MPI_Aint at = 0, end = 0;
    for (int i = 0; i < t->nsegs; i++) {
        if (t->segs[i].off < at || (writable && t->segs[i].off < end))
            return false;
        at = t->segs[i].off;
        end = at + (MPI_Aint)t->segs[i].len;
    }
    return true;
}

/* The etype and filetype of a view; the filetype is made of whole etypes. */
static int filetype_check(MPI_File fh, MPI_Datatype etype, MPI_Datatype filetype)
{
    if (etype->size == 0 || filetype->size == 0 || filetype->size % etype->size)
        return MPI_ERR_TYPE;
    if (weft__mpi_type_extent(filetype) <= 0)
        return MPI_ERR_TYPE;
    bool writable = !(fh->amode & MPI_MODE_RDONLY);
    if (!view_type_ok(etype, writable) || !view_type_ok(filetype, writable))
        return MPI_ERR_TYPE;
    /* Tiled every extent, a filetype whose data spans more than its extent
     * overlaps the next tile. */
    const weft_mpi_seg_t *seg = filetype->segs;
    int n = filetype->nsegs;
    if (writable && n > 0 &&
        seg[n - 1].off + (MPI_Aint)seg[n - 1].len - seg[0].off > weft__mpi_type_extent(filetype))
        return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_view";
    FILE_CHECK(fh, fn);
    if (weft__mpi_check_type(etype) || weft__mpi_check_type(filetype))
        return weft__mpi_err_file(fh, MPI_ERR_TYPE, fn);
    if (!datarep)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    bool ext = datarep && !strcmp(datarep, "external32");
    if (!datarep_native(datarep) && !ext)
        return weft__mpi_err_file(fh, MPI_ERR_UNSUPPORTED_DATAREP, fn);
    int err = filetype_check(fh, etype, filetype);
    if (err)
        return weft__mpi_err_file(fh, err, fn);
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        /* Only with MPI_MODE_SEQUENTIAL: the view starts where the shared
         * pointer is (a byte offset under the old view). */
        if (!(fh->amode & MPI_MODE_SEQUENTIAL))
            return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
        MPI_Offset sp = 0, run;
        if ((err = shared_fetch_add(fh, 0, &sp)))
            return weft__mpi_err_file(fh, err, fn);
        disp = view_map(fh, sp * (MPI_Offset)fh->esize, &run);
    } else if (disp < 0) {
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    }
    if ((err = info_merge(fh, info)))
        return weft__mpi_err_file(fh, err, fn);
    /* In external32 the file has its own sizes: the view is made of the
     * types as it sees them (checked again: no padding can make tiles meet). */
    MPI_Datatype fe = etype, ff = filetype;
    if (ext) {
        err = weft__mpi_type_ext_file(etype, &fe);
        if (!err && (err = weft__mpi_type_ext_file(filetype, &ff)))
            weft__mpi_type_release(fe);
        if (!err && (err = filetype_check(fh, fe, ff))) {
            weft__mpi_type_release(fe);
            weft__mpi_type_release(ff);
        }
    }
    /* Everyone is past the old view before the shared pointer goes to 0. */
    PMPI_Barrier(fh->comm);
    if (err) /* the same types everywhere: every rank fails alike */
        return weft__mpi_err_file(fh, err, fn);
    pthread_mutex_lock(&fh->lock);
    err = view_set(fh, disp, fe, ff, etype, filetype);
    if (!err)
        fh->external32 = ext;
    pthread_mutex_unlock(&fh->lock);
    if (ext) {
        weft__mpi_type_release(fe);
        weft__mpi_type_release(ff);
    }
    if (fh->comm->rank == 0 && !err)
        err = shared_set(fh, 0);
    return weft__mpi_err_file(fh, by_rank0(fh, err), fn);
}
WEFT_MPI_ALIAS(File_set_view)

/* The caller's own handle on a type of the view: derived types are new
 * handles (§13.3: the program frees them), predefined ones themselves. */
static int view_type_out(MPI_Datatype t, MPI_Datatype *out)
{
    if (t->predefined) {
        *out = t;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(t, out);
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep)
{
    static const char fn[] = "MPI_File_get_view";
    FILE_CHECK(fh, fn);
    if (!disp || !etype || !filetype || !datarep)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    int err = view_type_out(fh->user_etype, etype);
    if (!err && (err = view_type_out(fh->user_filetype, filetype)) && !fh->user_etype->predefined)
        PMPI_Type_free(etype);
    if (err)
        return weft__mpi_err_file(fh, err, fn);
    *disp = fh->disp;
    strcpy(datarep, fh->external32 ? "external32" : "native");
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_get_view)

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    static const char fn[] = "MPI_File_get_type_extent";
    FILE_CHECK(fh, fn);
    if (!weft__mpi_type_valid(datatype))
        return weft__mpi_err_file(fh, MPI_ERR_TYPE, fn);
    if (!extent)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    /* native: as in memory; external32: the extent of the type the file
     * sees (§13.5.1: byte displacements as given, counts scaled). */
    if (!fh->external32) {
        *extent = weft__mpi_type_extent(datatype);
        return MPI_SUCCESS;
    }
    MPI_Datatype f;
    int err = weft__mpi_type_ext_file(datatype, &f);
    if (err)
        return weft__mpi_err_file(fh, err, fn);
    *extent = weft__mpi_type_extent(f);
    weft__mpi_type_release(f);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_get_type_extent)

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char fn[] = "MPI_File_get_byte_offset";
    FILE_CHECK(fh, fn);
    if (offset < 0 || !disp)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    MPI_Offset run;
    *disp = view_map(fh, offset * (MPI_Offset)fh->esize, &run);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_get_byte_offset)

/* The names of data representations registered by the program. */
static struct datarep {
    char *name;
    struct datarep *next;
} * datareps;
static pthread_mutex_t datarep_lock = PTHREAD_MUTEX_INITIALIZER;

int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    static const char fn[] = "MPI_Register_datarep";
    if (!datarep || !dtype_file_extent_fn)
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_ARG, fn);
    if (strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_ARG, fn);
    if (datarep_native(datarep) || !strcmp(datarep, "external32"))
        return weft__mpi_err_file(MPI_FILE_NULL, MPI_ERR_DUP_DATAREP, fn);
    /* The name is taken (§13.5.3: a second registration is MPI_ERR_DUP_DATAREP);
     * MPI_File_set_view still refuses it with MPI_ERR_UNSUPPORTED_DATAREP, as
     * weft has no conversion through user functions. */
    int err = MPI_SUCCESS;
    pthread_mutex_lock(&datarep_lock);
    for (struct datarep *d = datareps; d && !err; d = d->next)
        if (!strcmp(d->name, datarep))
            err = MPI_ERR_DUP_DATAREP;
    if (!err) {
        struct datarep *d = malloc(sizeof *d);
        if (d && (d->name = strdup(datarep))) {
            d->next = datareps;
            datareps = d;
        } else {
            free(d);
            err = MPI_ERR_NO_MEM;
        }
    }
    pthread_mutex_unlock(&datarep_lock);
    return weft__mpi_err_file(MPI_FILE_NULL, err, fn);
}
WEFT_MPI_ALIAS(Register_datarep)

/* ---------------------------------------------------------------- positions */

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek";
    FILE_CHECK(fh, fn);
    MPI_Offset base = 0;
    int err = MPI_SUCCESS;
    pthread_mutex_lock(&fh->lock);
    if (whence == MPI_SEEK_CUR)
        base = fh->fp;
    else if (whence == MPI_SEEK_END)
        err = view_eof(fh, &base);
    else if (whence != MPI_SEEK_SET)
        err = MPI_ERR_ARG;
    if (!err && base + offset < 0)
        err = MPI_ERR_ARG;
    if (!err)
        fh->fp = base + offset;
    pthread_mutex_unlock(&fh->lock);
    return weft__mpi_err_file(fh, err, fn);
}
WEFT_MPI_ALIAS(File_seek)

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position";
    FILE_CHECK(fh, fn);
    if (!offset)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    pthread_mutex_lock(&fh->lock);
    *offset = fh->fp;
    pthread_mutex_unlock(&fh->lock);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(File_get_position)

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek_shared";
    FILE_CHECK(fh, fn);
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    /* Collective: every process has finished its shared accesses before the
     * pointer moves, and none starts a new one before it has. */
    PMPI_Barrier(fh->comm);
    int err = MPI_SUCCESS;
    if (fh->comm->rank == 0) {
        MPI_Offset base = 0;
        if (whence == MPI_SEEK_CUR)
            err = shared_fetch_add(fh, 0, &base);
        else if (whence == MPI_SEEK_END)
            err = view_eof(fh, &base);
        if (!err && base + offset < 0)
            err = MPI_ERR_ARG;
        if (!err)
            err = shared_set(fh, base + offset);
    }
    return weft__mpi_err_file(fh, by_rank0(fh, err), fn);
}
WEFT_MPI_ALIAS(File_seek_shared)

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position_shared";
    FILE_CHECK(fh, fn);
    if (!offset)
        return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
    return weft__mpi_err_file(fh, shared_fetch_add(fh, 0, offset), fn);
}
WEFT_MPI_ALIAS(File_get_position_shared)

/* ---------------------------------------------------------------- the data access calls */

/* Where an access takes its position from (ORDERED: the ordered calls). */
enum where { AT, INDIVIDUAL, SHARED, ORDERED };

/* One access: checks, position, data, pointer update, status. */
static int file_access(MPI_File fh, enum where where, bool write, MPI_Offset offset,
                       const void *buf, int count, MPI_Datatype type, MPI_Status *status,
                       const char *fn)
{
    FILE_CHECK(fh, fn);
    int err = access_check(fh, write, buf, count, type);
    if (err)
        return weft__mpi_err_file(fh, err, fn);
    MPI_Offset moved = 0,
               etypes = (MPI_Offset)count * (MPI_Offset)(file_bytes(fh, type) / fh->esize);
    switch (where) {
    case AT:
        if (offset < 0)
            return weft__mpi_err_file(fh, MPI_ERR_ARG, fn);
        err = data_access(fh, write, offset, (void *)buf, count, type, &moved);
        break;
    case INDIVIDUAL:
        pthread_mutex_lock(&fh->lock);
        err = data_access(fh, write, fh->fp, (void *)buf, count, type, &moved);
        fh->fp += moved / (MPI_Offset)fh->esize;
        pthread_mutex_unlock(&fh->lock);
        break;
    case SHARED:
        /* The pointer moves by what was asked for: the space is this
         * process's even where a read finds the file shorter. */
        err = shared_fetch_add(fh, etypes, &offset);
        if (!err)
            err = data_access(fh, write, offset, (void *)buf, count, type, &moved);
        break;
    case ORDERED: /* file_ordered's */
        err = MPI_ERR_INTERN;
        break;
    }
    if (err)
        return weft__mpi_err_file(fh, err, fn);
    status_moved(fh, status, type, moved);
    return MPI_SUCCESS;
}

/* MPI_File_write_all and write_at_all: two-phase where it suits every rank's
 * access, else each rank's own writes. */
static int file_write_all(MPI_File fh, enum where where, MPI_Offset offset, const void *buf,
                          int count, MPI_Datatype type, MPI_Status *status, const char *fn)
{
    FILE_CHECK(fh, fn);
    int err = access_check(fh, true, buf, count, type);
    if (!err && where == AT && offset < 0)
        err = MPI_ERR_ARG;
    /* The pointer's lock is not held through the collective: a thread of
     * this process that another rank's entry waits for may need it. */
    MPI_Offset at = offset, moved = 0;
    if (where == INDIVIDUAL) {
        pthread_mutex_lock(&fh->lock);
        at = fh->fp;
        pthread_mutex_unlock(&fh->lock);
    }
    int rc = weft__mpi_file_tp_write(fh, at, buf, count, type, err, &moved);
    if (rc == 1)
        rc = err ? err : data_access(fh, true, at, (void *)buf, count, type, &moved);
    if (where == INDIVIDUAL) {
        pthread_mutex_lock(&fh->lock);
        fh->fp += moved / (MPI_Offset)fh->esize;
        pthread_mutex_unlock(&fh->lock);
    }
    if (rc)
        return weft__mpi_err_file(fh, rc, fn);
    status_moved(fh, status, type, moved);
    return MPI_SUCCESS;
}

/* A non-blocking access: done now, its status kept by an already complete
 * request. */
static int file_iaccess(MPI_File fh, enum where where, bool write, MPI_Offset offset,
                        const void *buf, int count, MPI_Datatype type, MPI_Request *request,
                        const char *fn)
{
    FILE_CHECK(fh, fn);
    if (!request)
        return weft__mpi_err_file(fh, MPI_ERR_REQUEST, fn);
    MPI_Status st;
    weft__mpi_status_empty(&st);
    int err = file_access(fh, where, write, offset, buf, count, type, &st, fn);
    if (err)
        return err;
    MPI_Request r = weft__mpi_req_alloc(WEFT_MPI_REQ_DONE, fh->comm);
    if (!r)
        return weft__mpi_err_file(fh, MPI_ERR_NO_MEM, fn);
    r->complete = true;
    r->status = st;
    *request = r;
    return MPI_SUCCESS;
}

/* The ordered calls: the processes' accesses follow each other in rank order
 * from the shared pointer, which then lies past all of them. */
static int file_ordered(MPI_File fh, bool write, const void *buf, int count, MPI_Datatype type,
                        MPI_Status *status, const char *fn)
{
    FILE_CHECK(fh, fn);
    int err = access_check(fh, write, buf, count, type);
    long long mine = err ? 0 : (long long)count * (long long)(file_bytes(fh, type) / fh->esize);
    long long before = 0, total = 0, base = 0;
    PMPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, fh->comm);
    PMPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, fh->comm);
    int err0 = MPI_SUCCESS;
    if (fh->comm->rank == 0) {
        before = 0; /* Exscan leaves rank 0's result undefined */
        MPI_Offset old = 0;
        err0 = shared_fetch_add(fh, total, &old);
        base = old;
    }
    PMPI_Bcast(&base, 1, MPI_LONG_LONG, 0, fh->comm);
    err0 = by_rank0(fh, err0);
    if (err || err0)
        return weft__mpi_err_file(fh, err ? err : err0, fn);
    MPI_Offset moved = 0;
    err = data_access(fh, write, base + before, (void *)buf, count, type, &moved);
    if (err)
        return weft__mpi_err_file(fh, err, fn);
    status_moved(fh, status, type, moved);
    return MPI_SUCCESS;
}

/* Split collectives: _begin does the access and keeps its status for _end
 * (one split collective at a time per file, §13.4.5, which lets the begin
 * call do the whole collective: writes go through file_write_all). */
static int split_begin(MPI_File fh, enum where where, bool write, MPI_Offset offset,
                       const void *buf, int count, MPI_Datatype type, const char *fn)
{
    FILE_CHECK(fh, fn);
    if (fh->split)
        return weft__mpi_err_file(fh, MPI_ERR_OTHER, fn);
    MPI_Status st;
    weft__mpi_status_empty(&st);
    int err;
    if (where == ORDERED)
        err = file_ordered(fh, write, buf, count, type, &st, fn);
    else if (write && where != SHARED) /* write_all_begin, write_at_all_begin */
        err = file_write_all(fh, where, offset, buf, count, type, &st, fn);
    else
        err = file_access(fh, where, write, offset, buf, count, type, &st, fn);
    if (err)
        return err;
    fh->split = true;
    fh->split_status = st;
    return MPI_SUCCESS;
}

static int split_end(MPI_File fh, MPI_Status *status, const char *fn)
{
    FILE_CHECK(fh, fn);
    if (!fh->split)
        return weft__mpi_err_file(fh, MPI_ERR_OTHER, fn);
    fh->split = false;
    if (status != MPI_STATUS_IGNORE)
        *status = fh->split_status;
    return MPI_SUCCESS;
}

/* Each family of calls, written once: blocking (collective or not), then
 * non-blocking. */
#define FILE_AT(Name, fname, cbuf, write)                                                          \
    int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, cbuf void *buf, int count,                \
                         MPI_Datatype datatype, MPI_Status *status)                                \
    {                                                                                              \
        return file_access(fh, AT, write, offset, buf, count, datatype, status, fname);            \
    }                                                                                              \
    WEFT_MPI_ALIAS(File_##Name)
#define FILE_IAT(Name, fname, cbuf, write)                                                         \
    int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, cbuf void *buf, int count,                \
                         MPI_Datatype datatype, MPI_Request *request)                              \
    {                                                                                              \
        return file_iaccess(fh, AT, write, offset, buf, count, datatype, request, fname);          \
    }                                                                                              \
    WEFT_MPI_ALIAS(File_##Name)
#define FILE_FP(Name, fname, cbuf, write, where)                                                   \
    int PMPI_File_##Name(MPI_File fh, cbuf void *buf, int count, MPI_Datatype datatype,            \
                         MPI_Status *status)                                                       \
    {                                                                                              \
        return file_access(fh, where, write, 0, buf, count, datatype, status, fname);              \
    }                                                                                              \
    WEFT_MPI_ALIAS(File_##Name)
#define FILE_IFP(Name, fname, cbuf, write, where)                                                  \
    int PMPI_File_##Name(MPI_File fh, cbuf void *buf, int count, MPI_Datatype datatype,            \
                         MPI_Request *request)                                                     \
    {                                                                                              \
        return file_iaccess(fh, where, write, 0, buf, count, datatype, request, fname);            \
    }                                                                                              \
    WEFT_MPI_ALIAS(File_##Name)

FILE_AT(read_at, "MPI_File_read_at", , false)
FILE_AT(read_at_all, "MPI_File_read_at_all", , false)
FILE_AT(write_at, "MPI_File_write_at", const, true)
FILE_IAT(iread_at, "MPI_File_iread_at", , false)
FILE_IAT(iread_at_all, "MPI_File_iread_at_all", , false)
FILE_IAT(iwrite_at, "MPI_File_iwrite_at", const, true)
FILE_IAT(iwrite_at_all, "MPI_File_iwrite_at_all", const, true)
FILE_FP(read, "MPI_File_read", , false, INDIVIDUAL)
FILE_FP(read_all, "MPI_File_read_all", , false, INDIVIDUAL)
FILE_FP(write, "MPI_File_write", const, true, INDIVIDUAL)
FILE_IFP(iread, "MPI_File_iread", , false, INDIVIDUAL)
FILE_IFP(iread_all, "MPI_File_iread_all", , false, INDIVIDUAL)
FILE_IFP(iwrite, "MPI_File_iwrite", const, true, INDIVIDUAL)
FILE_IFP(iwrite_all, "MPI_File_iwrite_all", const, true, INDIVIDUAL)
FILE_FP(read_shared, "MPI_File_read_shared", , false, SHARED)
FILE_FP(write_shared, "MPI_File_write_shared", const, true, SHARED)
FILE_IFP(iread_shared, "MPI_File_iread_shared", , false, SHARED)
FILE_IFP(iwrite_shared, "MPI_File_iwrite_shared", const, true, SHARED)

int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                           MPI_Datatype datatype, MPI_Status *status)
{
    return file_write_all(fh, AT, offset, buf, count, datatype, status, "MPI_File_write_at_all");
}
WEFT_MPI_ALIAS(File_write_at_all)

int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    return file_write_all(fh, INDIVIDUAL, 0, buf, count, datatype, status, "MPI_File_write_all");
}
WEFT_MPI_ALIAS(File_write_all)

int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return file_ordered(fh, false, buf, count, datatype, status, "MPI_File_read_ordered");
}
WEFT_MPI_ALIAS(File_read_ordered)

int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return file_ordered(fh, true, buf, count, datatype, status, "MPI_File_write_ordered");
}
WEFT_MPI_ALIAS(File_write_ordered)

int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                MPI_Datatype datatype)
{
    return split_begin(fh, AT, false, offset, buf, count, datatype, "MPI_File_read_at_all_begin");
}
WEFT_MPI_ALIAS(File_read_at_all_begin)

int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                 MPI_Datatype datatype)
{
    return split_begin(fh, AT, true, offset, buf, count, datatype, "MPI_File_write_at_all_begin");
}
WEFT_MPI_ALIAS(File_write_at_all_begin)

#define SPLIT_BEGIN(Name, fname, cbuf, write, where)                                               \
    int PMPI_File_##Name(MPI_File fh, cbuf void *buf, int count, MPI_Datatype datatype)            \
    {                                                                                              \
        return split_begin(fh, where, write, 0, buf, count, datatype, fname);                      \
    }                                                                                              \
    WEFT_MPI_ALIAS(File_##Name)

SPLIT_BEGIN(read_all_begin, "MPI_File_read_all_begin", , false, INDIVIDUAL)
SPLIT_BEGIN(write_all_begin, "MPI_File_write_all_begin", const, true, INDIVIDUAL)
SPLIT_BEGIN(read_ordered_begin, "MPI_File_read_ordered_begin", , false, ORDERED)
SPLIT_BEGIN(write_ordered_begin, "MPI_File_write_ordered_begin", const, true, ORDERED)

#define SPLIT_END(Name, fname, cbuf)                                                               \
    int PMPI_File_##Name(MPI_File fh, cbuf void *buf, MPI_Status *status)                          \
    {                                                                                              \
        (void)buf;                                                                                 \
        return split_end(fh, status, fname);                                                       \
    }                                                                                              \
    WEFT_MPI_ALIAS(File_##Name)

SPLIT_END(read_at_all_end, "MPI_File_read_at_all_end", )
SPLIT_END(write_at_all_end, "MPI_File_write_at_all_end", const)
SPLIT_END(read_all_end, "MPI_File_read_all_end", )
SPLIT_END(write_all_end, "MPI_File_write_all_end", const)
SPLIT_END(read_ordered_end, "MPI_File_read_ordered_end", )
SPLIT_END(write_ordered_end, "MPI_File_write_ordered_end", const)
