/* Moving typed data: iovecs for the engine, byte windows of the packed stream
 * (the staging path and pipelined transfers pack and unpack a window at a time),
 * MPI_Pack/Unpack, and the external32 representation (MPI 3.1 section 13.5.2).
 *
 * The packed stream of count elements is their basic data in type-map order,
 * which is the order of the flattened segments, element after element: a window
 * [offset, offset + len) starts in element offset / size and is found by walking
 * that element's segments.
 *
 * Thread safety: none of these functions touches shared state; the type must not
 * be freed meanwhile (callers hold a reference).
 */
#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "mpi/mpi_int.h"
#include "mpi/mpi_type_int.h"

/* ---------------------------------------------------------------- iovecs */

int weft__mpi_type_iov(MPI_Datatype t, const void *buf, size_t count, struct iovec *iov, int max)
{
    if (count == 0 || t->size == 0)
        return 0;
    if (t->contig) {
        if (max >= 1)
            iov[0] = (struct iovec){weft__mpi_at(buf, t->true_lb), count * t->size};
        return 1;
    }
    /* Count every entry, filling the first max: a caller that gets more than it
     * can pass knows to pack instead. The last segment of one element often
     * touches the first of the next (a vector of whole rows): merge those. */
    MPI_Aint ext = weft__mpi_type_extent(t), base = 0;
    long n = 0;
    char *end = NULL;
    for (size_t e = 0; e < count; e++, base += ext) {
        for (int s = 0; s < t->nsegs; s++) {
            char *p = weft__mpi_at(buf, base + t->segs[s].off);
            if (n > 0 && p == end) {
                if (n <= max)
                    iov[n - 1].iov_len += t->segs[s].len;
            } else {
                if (n < max)
                    iov[n] = (struct iovec){p, t->segs[s].len};
                if (++n == INT_MAX)
                    return INT_MAX;
            }
            end = p + t->segs[s].len;
        }
    }
    return (int)n;
}

/* ---------------------------------------------------------------- byte windows */

static void copy_window(MPI_Datatype t, const void *buf, size_t count, size_t offset, size_t len,
                        char *stream, bool pack)
{
    if (len == 0 || t->size == 0)
        return;
    if (t->contig) {
        char *p = weft__mpi_at(buf, t->true_lb + (MPI_Aint)offset);
        memcpy(pack ? stream : p, pack ? p : stream, len);
        return;
    }
    MPI_Aint ext = weft__mpi_type_extent(t);
    size_t e = offset / t->size, r = offset % t->size;
    MPI_Aint base = (MPI_Aint)e * ext;
    int s = 0;
    while (r >= t->segs[s].len)
        r -= t->segs[s++].len;
    while (len > 0) {
        size_t n = t->segs[s].len - r < len ? t->segs[s].len - r : len;
        char *p = weft__mpi_at(buf, base + t->segs[s].off + (MPI_Aint)r);
        memcpy(pack ? stream : p, pack ? p : stream, n);
        stream += n;
        len -= n;
        r = 0;
        if (++s == t->nsegs) {
            s = 0;
            base += ext;
        }
    }
    (void)count; /* callers keep offset + len within count * size */
}

void weft__mpi_type_pack(MPI_Datatype t, const void *buf, size_t count, size_t offset, size_t len,
                         void *out)
{
    copy_window(t, buf, count, offset, len, out, true);
}

void weft__mpi_type_unpack(MPI_Datatype t, void *buf, size_t count, size_t offset, size_t len,
                           const void *in)
{
    copy_window(t, buf, count, offset, len, (char *)in, false);
}

/* ---------------------------------------------------------------- MPI_Pack */

#define ERR(cls, fn) weft__mpi_err(NULL, (cls), (fn))

/* Shared checks of the pack family; *bytes gets count * size. */
static int pack_args(int count, MPI_Datatype t, const void *buf, MPI_Count *bytes)
{
    int err = weft__mpi_check_count(count);
    if (!err)
        err = weft__mpi_check_type(t);
    if (!err)
        err = weft__mpi_check_buf(buf, count, t);
    if (!err)
        *bytes = (MPI_Count)count * (MPI_Count)t->size;
    return err;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    static const char fn[] = "MPI_Pack";
    MPI_Count bytes;
    int err = pack_args(incount, datatype, inbuf, &bytes);
    if (!err && (!position || *position < 0 || outsize < 0 || (bytes && !outbuf)))
        err = MPI_ERR_ARG;
    if (!err && bytes > (MPI_Count)outsize - *position)
        err = MPI_ERR_TRUNCATE;
    if (err)
        return weft__mpi_err(comm, err, fn);
    weft__mpi_type_pack(datatype, inbuf, (size_t)incount, 0, (size_t)bytes,
                        (char *)outbuf + *position);
    *position += (int)bytes;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Pack)

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Unpack";
    MPI_Count bytes;
    int err = pack_args(outcount, datatype, outbuf, &bytes);
    if (!err && (!position || *position < 0 || insize < 0 || (bytes && !inbuf)))
        err = MPI_ERR_ARG;
    if (!err && bytes > (MPI_Count)insize - *position)
        err = MPI_ERR_TRUNCATE;
    if (err)
        return weft__mpi_err(comm, err, fn);
    weft__mpi_type_unpack(datatype, outbuf, (size_t)outcount, 0, (size_t)bytes,
                          (const char *)inbuf + *position);
    *position += (int)bytes;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Unpack)

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    int err = weft__mpi_check_count(incount);
    if (!err)
        err = weft__mpi_check_type(datatype);
    if (!err && !size)
        err = MPI_ERR_ARG;
    if (err)
        return weft__mpi_err(comm, err, "MPI_Pack_size");
    /* Homogeneous: the packed form is the data itself, no header. */
    MPI_Count bytes = (MPI_Count)incount * (MPI_Count)datatype->size;
    if (bytes > INT_MAX)
        return weft__mpi_err(comm, MPI_ERR_COUNT, "MPI_Pack_size");
    *size = (int)bytes;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Pack_size)

/* ---------------------------------------------------------------- external32 */

/* external32 (MPI 3.1 §13.5.2, table 13.2): big-endian, long double as IEEE
 * binary128, no padding, and three types narrower than on LP64: MPI_LONG and
 * MPI_UNSIGNED_LONG are 4 bytes, MPI_WCHAR 2. MPI_Pack_external and file views
 * in external32 (mpi_file.c) both convert a native packed element into its
 * external image, whose size can differ. Narrowing keeps the low bytes (as
 * MPICH does); widening sign-extends MPI_LONG. */
_Static_assert(sizeof(long) == 8 && sizeof(wchar_t) == 4 && sizeof(long double) == 16 &&
                   sizeof(_Bool) == 1 && sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8,
               "external32 conversion assumes an LP64 ABI (x86-64, aarch64)");

static void swap_bytes(unsigned char *p, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (size_t i = 0; i < n / 2; i++) {
        unsigned char c = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = c;
    }
#else
    (void)p, (void)n;
#endif
}

/* One long double, native <-> binary128 big-endian. */
static void convert_long_double(unsigned char *p, bool to_external)
{
#if defined(__SIZEOF_FLOAT128__) && LDBL_MANT_DIG == 64
    long double v;
    __float128 q;
    if (to_external) {
        memcpy(&v, p, sizeof v);
        q = (__float128)v; /* exact: 64-bit mantissa into 113 bits */
        memcpy(p, &q, sizeof q);
        swap_bytes(p, 16);
    } else {
        swap_bytes(p, 16);
        memcpy(&q, p, sizeof q);
        v = (long double)q;
        memset(p, 0, 16);
        memcpy(p, &v, sizeof v);
    }
#else
    /* long double is binary128 already (aarch64): byte order only. */
    (void)to_external;
    swap_bytes(p, 16);
#endif
}

/* Convert n basic elements of type b at p, in place (native sizes). */
static void convert_basic(unsigned char *p, size_t n, MPI_Datatype b, bool to_external)
{
    size_t size = b->size;
    bool is_ld = (b->basic == WEFT_MPI_B_FLOAT && size == 16) ||
                 (b->basic == WEFT_MPI_B_COMPLEX && size == 32);
    size_t part = b->basic == WEFT_MPI_B_COMPLEX ? size / 2 : size;
    if (b->basic == WEFT_MPI_B_NONE && b != MPI_WCHAR)
        return; /* characters and packed bytes */
    if (part == 1)
        return;
    for (size_t i = 0; i < n * (size / part); i++, p += part) {
        if (is_ld)
            convert_long_double(p, to_external);
        else
            swap_bytes(p, part);
    }
}

/* The size of basic type b in MPI_Pack_external's stream (table 13.2). */
static size_t packed_ext_size(MPI_Datatype b)
{
    if (b == MPI_LONG || b == MPI_UNSIGNED_LONG)
        return 4;
    if (b == MPI_WCHAR)
        return 2;
    return b->size;
}

static size_t packed_ext_elem_size(MPI_Datatype t)
{
    size_t n = 0;
    for (int r = 0; r < t->nruns; r++)
        n += t->runs[r].n * packed_ext_size(t->runs[r].type);
    return n;
}

/* One element of t: its native packed form at nat <-> its external32 form at
 * ext. The native side is scratch: it is converted in place on the way. */
static void convert_element(MPI_Datatype t, unsigned char *nat, unsigned char *ext,
                            bool to_external)
{
    for (int r = 0; r < t->nruns; r++) {
        MPI_Datatype b = t->runs[r].type;
        size_t n = t->runs[r].n, xs = packed_ext_size(b);
        if (xs == b->size) {
            if (to_external) {
                convert_basic(nat, n, b, true);
                memcpy(ext, nat, n * xs);
            } else {
                memcpy(nat, ext, n * xs);
                convert_basic(nat, n, b, false);
            }
        } else {
            /* A narrow external integer: big-endian, the low xs bytes. */
            bool sign = b == MPI_LONG;
            for (size_t i = 0; i < n; i++) {
                uint64_t v = 0;
                if (to_external) {
                    memcpy(&v, nat + i * b->size, b->size);
                    for (size_t k = 0; k < xs; k++)
                        ext[i * xs + k] = (unsigned char)(v >> (8 * (xs - 1 - k)));
                } else {
                    for (size_t k = 0; k < xs; k++)
                        v = v << 8 | ext[i * xs + k];
                    if (sign && (v >> (8 * xs - 1)) & 1)
                        v |= ~(uint64_t)0 << (8 * xs);
                    memcpy(nat + i * b->size, &v, b->size);
                }
            }
        }
        nat += n * b->size;
        ext += n * xs;
    }
}

size_t weft__mpi_type_ext_size(MPI_Datatype t)
{
    return packed_ext_elem_size(t);
}

void weft__mpi_type_external_conv(MPI_Datatype t, size_t count, void *native, void *ext,
                                  bool to_external)
{
    unsigned char *n = native, *x = ext;
    size_t xs = packed_ext_elem_size(t);
    for (size_t e = 0; e < count; e++, n += t->size, x += xs)
        convert_element(t, n, x, to_external);
}

/* ---- the types of a view in external32, as the file sees them ----
 *
 * A view's etype and filetype describe the file in its representation
 * (§13.5.1): a count-based constructor scales with the external sizes of its
 * children, a byte displacement (hvector, hindexed, struct, resized) is taken
 * as it is. So the file's type is the same construction over the children's
 * file types, where a predefined type becomes one of its external size:
 * MPI_LONG a 4-byte integer, a value/index pair a struct without padding. */

static MPI_Datatype ext_named(MPI_Datatype t)
{
    if (t == MPI_LONG)
        return MPI_INT32_T;
    if (t == MPI_UNSIGNED_LONG)
        return MPI_UINT32_T;
    if (t == MPI_WCHAR)
        return MPI_UINT16_T;
    return t;
}

static bool ext_differs(MPI_Datatype t)
{
    if (t->predefined) {
        if (t->basic == WEFT_MPI_B_PAIR)
            return packed_ext_elem_size(t) != (size_t)weft__mpi_type_extent(t) ||
                   ext_differs(t->runs[0].type) || (t->nruns > 1 && ext_differs(t->runs[1].type));
        return ext_named(t) != t;
    }
    for (int i = 0; i < t->ntypes; i++)
        if (ext_differs(t->types[i]))
            return true;
    return false;
}

static int ext_build(MPI_Datatype t, MPI_Datatype *out);

/* A predefined value/index pair without padding, its members at their
 * external sizes. */
static int ext_pair(MPI_Datatype t, MPI_Datatype *out)
{
    MPI_Datatype v = t->runs[0].type, k = t->nruns > 1 ? t->runs[1].type : v;
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, (MPI_Aint)packed_ext_size(v)};
    MPI_Datatype ty[2] = {ext_named(v), ext_named(k)}, st;
    int err = PMPI_Type_create_struct(2, bl, d, ty, &st);
    if (err)
        return err;
    err = PMPI_Type_create_resized(st, 0, (MPI_Aint)packed_ext_elem_size(t), out);
    PMPI_Type_free(&st);
    return err;
}

static int ext_rebuild(MPI_Datatype t, MPI_Datatype *kids, MPI_Datatype *out)
{
    const int *i = t->ints;
    const MPI_Aint *a = t->addrs;
    switch (t->combiner) {
    case MPI_COMBINER_DUP:
        return PMPI_Type_dup(kids[0], out);
    case MPI_COMBINER_CONTIGUOUS:
        return PMPI_Type_contiguous(i[0], kids[0], out);
    case MPI_COMBINER_VECTOR:
        return PMPI_Type_vector(i[0], i[1], i[2], kids[0], out);
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_HVECTOR_INTEGER:
        return PMPI_Type_create_hvector(i[0], i[1], a[0], kids[0], out);
    case MPI_COMBINER_INDEXED:
        return PMPI_Type_indexed(i[0], i + 1, i + 1 + i[0], kids[0], out);
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_HINDEXED_INTEGER:
        return PMPI_Type_create_hindexed(i[0], i + 1, a, kids[0], out);
    case MPI_COMBINER_INDEXED_BLOCK:
        return PMPI_Type_create_indexed_block(i[0], i[1], i + 2, kids[0], out);
    case MPI_COMBINER_HINDEXED_BLOCK:
        return PMPI_Type_create_hindexed_block(i[0], i[1], a, kids[0], out);
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_STRUCT_INTEGER:
        return PMPI_Type_create_struct(i[0], i + 1, a, kids, out);
    case MPI_COMBINER_SUBARRAY: {
        int n = i[0];
        return PMPI_Type_create_subarray(n, i + 1, i + 1 + n, i + 1 + 2 * n, i[1 + 3 * n], kids[0],
                                         out);
    }
    case MPI_COMBINER_DARRAY: {
        int n = i[2];
        return PMPI_Type_create_darray(i[0], i[1], n, i + 3, i + 3 + n, i + 3 + 2 * n,
                                       i + 3 + 3 * n, i[3 + 4 * n], kids[0], out);
    }
    case MPI_COMBINER_RESIZED:
        return PMPI_Type_create_resized(kids[0], a[0], a[1], out);
    default:
        return MPI_ERR_TYPE; /* the F90 combiners hold no type that changes */
    }
}

static int ext_build(MPI_Datatype t, MPI_Datatype *out)
{
    if (!ext_differs(t)) {
        weft__mpi_type_retain(t);
        *out = t;
        return MPI_SUCCESS;
    }
    if (t->predefined) {
        if (t->basic == WEFT_MPI_B_PAIR)
            return ext_pair(t, out);
        *out = ext_named(t);
        weft__mpi_type_retain(*out);
        return MPI_SUCCESS;
    }
    MPI_Datatype local[8] = {0};
    MPI_Datatype *kids = t->ntypes <= 8 ? local : calloc((size_t)t->ntypes, sizeof *kids);
    if (!kids)
        return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS, made = 0;
    for (; made < t->ntypes && !err; made++)
        err = ext_build(t->types[made], &kids[made]);
    if (err)
        made--;
    if (!err)
        err = ext_rebuild(t, kids, out);
    for (int k = 0; k < made; k++)
        weft__mpi_type_release(kids[k]);
    if (kids != local)
        free(kids);
    if (!err)
        err = PMPI_Type_commit(out);
    return err;
}

int weft__mpi_type_ext_file(MPI_Datatype t, MPI_Datatype *out)
{
    return ext_build(t, out);
}

static int check_datarep(const char *datarep)
{
    return datarep && strcmp(datarep, "external32") == 0 ? MPI_SUCCESS
                                                         : MPI_ERR_UNSUPPORTED_DATAREP;
}

/* The checks MPI_Pack_external and MPI_Unpack_external share; *bytes is the
 * external32 size of count elements of t. */
static int external_args(const char *datarep, int count, MPI_Datatype t, const void *buf,
                         const void *stream, MPI_Aint streamsize, const MPI_Aint *position,
                         MPI_Count *bytes)
{
    MPI_Count native;
    int err = check_datarep(datarep);
    if (!err)
        err = pack_args(count, t, buf, &native);
    if (err)
        return err;
    *bytes = (MPI_Count)count * (MPI_Count)packed_ext_elem_size(t);
    if (!position || *position < 0 || streamsize < 0 || (*bytes && !stream))
        return MPI_ERR_ARG;
    if (*bytes > (MPI_Count)streamsize - *position)
        return MPI_ERR_TRUNCATE;
    return MPI_SUCCESS;
}

/* Convert count elements one at a time through a native scratch element. */
static int external_move(MPI_Datatype t, void *userbuf, int count, unsigned char *ext,
                         bool to_external)
{
    unsigned char stack[256];
    unsigned char *tmp = t->size <= sizeof stack ? stack : malloc(t->size);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    size_t xsize = packed_ext_elem_size(t);
    for (int e = 0; e < count; e++, ext += xsize) {
        size_t off = (size_t)e * t->size;
        if (to_external) {
            weft__mpi_type_pack(t, userbuf, (size_t)count, off, t->size, tmp);
            convert_element(t, tmp, ext, true);
        } else {
            convert_element(t, tmp, ext, false);
            weft__mpi_type_unpack(t, userbuf, (size_t)count, off, t->size, tmp);
        }
    }
    if (tmp != stack)
        free(tmp);
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    static const char fn[] = "MPI_Pack_external";
    MPI_Count bytes;
    int err = external_args(datarep, incount, datatype, inbuf, outbuf, outsize, position, &bytes);
    if (!err && bytes)
        err = external_move(datatype, (void *)inbuf, incount, (unsigned char *)outbuf + *position,
                            true);
    if (err)
        return ERR(err, fn);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Pack_external)

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    static const char fn[] = "MPI_Unpack_external";
    MPI_Count bytes;
    int err = external_args(datarep, outcount, datatype, outbuf, inbuf, insize, position, &bytes);
    if (!err && bytes)
        err = external_move(datatype, outbuf, outcount, (unsigned char *)inbuf + *position, false);
    if (err)
        return ERR(err, fn);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Unpack_external)

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    int err = check_datarep(datarep);
    if (!err)
        err = weft__mpi_check_count(incount);
    if (!err)
        err = weft__mpi_check_type(datatype);
    if (!err && !size)
        err = MPI_ERR_ARG;
    if (err)
        return ERR(err, "MPI_Pack_external_size");
    *size = (MPI_Aint)incount * (MPI_Aint)packed_ext_elem_size(datatype);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Pack_external_size)
