/* Private to MPI I/O (mpi_file.c, mpi_file_tp.c): the view's map and the
 * error classes of system calls, shared by the independent and the two-phase
 * paths. */
#ifndef WEFT_MPI_FILE_INT_H
#define WEFT_MPI_FILE_INT_H

#include <errno.h>
#include <stdint.h>

#include "mpi/mpi_int.h"
#include "mpi/mpi_type_int.h"

/* The error class of a failed system call on a file. */
static inline int errno_class(int e)
{
    switch (e) {
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOSPC:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return MPI_ERR_BAD_FILE;
    case ETXTBSY:
        return MPI_ERR_FILE_IN_USE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

/* The bytes count elements of t take in the file: their external32 images in
 * a view in external32, else their data. */
static inline size_t file_bytes(const struct weft_mpi_file *fh, MPI_Datatype t)
{
    return fh->external32 ? weft__mpi_type_ext_size(t) : t->size;
}

/* The file offset of data byte p of the view, and how many data bytes follow
 * it there without a gap. */
static inline MPI_Offset view_map(const struct weft_mpi_file *fh, MPI_Offset p, MPI_Offset *run)
{
    if (fh->dense) {
        *run = INT64_MAX;
        return fh->disp + fh->filetype->true_lb + p;
    }
    MPI_Offset tile = p / (MPI_Offset)fh->fsize;
    size_t in = (size_t)(p - tile * (MPI_Offset)fh->fsize);
    /* The last segment starting at or before `in` (segments of length 0 are
     * passed over: pos does not grow across them). */
    int lo = 0, hi = fh->filetype->nsegs - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (fh->pos[mid] <= in)
            lo = mid;
        else
            hi = mid - 1;
    }
    const weft_mpi_seg_t *s = &fh->filetype->segs[lo];
    size_t into = in - fh->pos[lo];
    *run = (MPI_Offset)(s->len - into);
    return fh->disp + tile * fh->fextent + s->off + (MPI_Offset)into;
}

/* A collective write of count elements of type at position `at` (etypes) of
 * fh's view by two-phase I/O, called by every rank of the file (err: this
 * rank's argument error; it then takes part with nothing). Returns 1 when the
 * access does not suit two-phase I/O and every rank must write on its own;
 * else an error class, with *moved set to the bytes this rank wrote. */
int weft__mpi_file_tp_write(MPI_File fh, MPI_Offset at, const void *buf, int count,
                            MPI_Datatype type, int err, MPI_Offset *moved);

#endif
