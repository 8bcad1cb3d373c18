/* mpi.h — the MPI 3.1 interface of weft's MPI layer (MadMPI-style: MPI mapped
 * straight onto the engine's send/receive, matching and progress).
 *
 * Handles are pointers to library objects; the predefined ones are addresses of
 * objects inside libmpi. Every MPI_X has a PMPI_X twin (the profiling interface):
 * the library implements PMPI_X and MPI_X is a weak alias of it, so a tool may
 * define MPI_X itself and call PMPI_X.
 *
 * Thread safety: after MPI_Init_thread with MPI_THREAD_MULTIPLE every function
 * may be called from any thread, except where the standard says otherwise
 * (MPI_Init*, MPI_Finalize from the main thread). See docs/mpi.md for what
 * is implemented; process creation and ports return
 * MPI_ERR_UNSUPPORTED_OPERATION through the error handler. The
 * MPI_T functions follow the function list (mpi_functions.h), documented
 * there and in src/mpi/mpi_t.c.
 */
#ifndef WEFT_MPI_H
#define WEFT_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION    3
#define MPI_SUBVERSION 1
#define WEFT_MPI       1

#if defined(__GNUC__)
#define WEFT_MPI_API __attribute__((visibility("default")))
#else
#define WEFT_MPI_API
#endif

/* ---- handle types ---- */
typedef struct weft_mpi_comm *MPI_Comm;
typedef struct weft_mpi_group *MPI_Group;
typedef struct weft_mpi_datatype *MPI_Datatype;
typedef struct weft_mpi_request *MPI_Request;
typedef struct weft_mpi_op *MPI_Op;
typedef struct weft_mpi_errhandler *MPI_Errhandler;
typedef struct weft_mpi_info *MPI_Info;
typedef struct weft_mpi_win *MPI_Win;
typedef struct weft_mpi_file *MPI_File;
typedef struct weft_mpi_message *MPI_Message;
typedef struct weft_mpi_session *MPI_Session;

typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

/* The Fortran form of a status (MPI_Status_c2f/f2c): MPI_F_STATUS_SIZE
 * MPI_Fint, the public fields at these indices, the private ones after. */
#define MPI_F_STATUS_SIZE 6
#define MPI_F_SOURCE      0
#define MPI_F_TAG         1
#define MPI_F_ERROR       2

typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    /* Private to the library: bytes received and the cancelled flag. */
    int weft_cancelled;
    long long weft_count;
} MPI_Status;

/* For C code that takes a Fortran status argument: the values that mean "no
 * status wanted" (MPI_Status_c2f and MPI_Status_f2c refuse them). */
extern WEFT_MPI_API MPI_Fint *MPI_F_STATUS_IGNORE;
extern WEFT_MPI_API MPI_Fint *MPI_F_STATUSES_IGNORE;

/* ---- predefined objects (defined in libmpi) ---- */
#define WEFT_MPI_OBJ(type, name) extern WEFT_MPI_API struct type name;
WEFT_MPI_OBJ(weft_mpi_comm, weft_mpi_comm_world)
WEFT_MPI_OBJ(weft_mpi_comm, weft_mpi_comm_self)
WEFT_MPI_OBJ(weft_mpi_comm, weft_mpi_comm_null)
WEFT_MPI_OBJ(weft_mpi_group, weft_mpi_group_empty)
WEFT_MPI_OBJ(weft_mpi_group, weft_mpi_group_null)
WEFT_MPI_OBJ(weft_mpi_request, weft_mpi_request_null)
WEFT_MPI_OBJ(weft_mpi_errhandler, weft_mpi_errors_are_fatal)
WEFT_MPI_OBJ(weft_mpi_errhandler, weft_mpi_errors_return)
WEFT_MPI_OBJ(weft_mpi_errhandler, weft_mpi_errors_abort)
WEFT_MPI_OBJ(weft_mpi_errhandler, weft_mpi_errhandler_null)
WEFT_MPI_OBJ(weft_mpi_info, weft_mpi_info_null)
WEFT_MPI_OBJ(weft_mpi_info, weft_mpi_info_env)
WEFT_MPI_OBJ(weft_mpi_win, weft_mpi_win_null)
WEFT_MPI_OBJ(weft_mpi_file, weft_mpi_file_null)
WEFT_MPI_OBJ(weft_mpi_message, weft_mpi_message_null)
WEFT_MPI_OBJ(weft_mpi_message, weft_mpi_message_no_proc)
WEFT_MPI_OBJ(weft_mpi_datatype, weft_mpi_datatype_null)
WEFT_MPI_OBJ(weft_mpi_op, weft_mpi_op_null)
WEFT_MPI_OBJ(weft_mpi_session, weft_mpi_session_null)

#define MPI_COMM_WORLD       (&weft_mpi_comm_world)
#define MPI_COMM_SELF        (&weft_mpi_comm_self)
#define MPI_COMM_NULL        (&weft_mpi_comm_null)
#define MPI_GROUP_EMPTY      (&weft_mpi_group_empty)
#define MPI_GROUP_NULL       (&weft_mpi_group_null)
#define MPI_REQUEST_NULL     (&weft_mpi_request_null)
#define MPI_ERRORS_ARE_FATAL (&weft_mpi_errors_are_fatal)
#define MPI_ERRORS_RETURN    (&weft_mpi_errors_return)
#define MPI_ERRORS_ABORT     (&weft_mpi_errors_abort)
#define MPI_ERRHANDLER_NULL  (&weft_mpi_errhandler_null)
#define MPI_INFO_NULL        (&weft_mpi_info_null)
#define MPI_INFO_ENV         (&weft_mpi_info_env)
#define MPI_WIN_NULL         (&weft_mpi_win_null)
#define MPI_FILE_NULL        (&weft_mpi_file_null)
#define MPI_MESSAGE_NULL     (&weft_mpi_message_null)
#define MPI_MESSAGE_NO_PROC  (&weft_mpi_message_no_proc)
#define MPI_DATATYPE_NULL    (&weft_mpi_datatype_null)
#define MPI_SESSION_NULL     (&weft_mpi_session_null)
#define MPI_OP_NULL          (&weft_mpi_op_null)

/* Predefined datatypes: X(MPI name, object name). The library defines each object
 * with its C type; the list is shared so that the two never disagree. */
/* clang-format off */
#define WEFT_MPI_PREDEFINED_TYPES(X)                                                                                                                                                                             \
    X(MPI_CHAR, char)                                                                                                                                                                                            \
    X(MPI_SHORT, short)                                                                                                                                                                                          \
    X(MPI_INT, int)                                                                                                                                                                                              \
    X(MPI_LONG, long)                                                                                                                                                                                            \
    X(MPI_LONG_LONG_INT, long_long_int)                                                                                                                                                                          \
    X(MPI_SIGNED_CHAR, signed_char)                                                                                                                                                                              \
    X(MPI_UNSIGNED_CHAR, unsigned_char)                                                                                                                                                                          \
    X(                     \
            MPI_UNSIGNED_SHORT, unsigned_short)                                                                                                                                     \
    X(MPI_UNSIGNED, unsigned)                                                                                                                                                                                    \
    X(MPI_UNSIGNED_LONG, unsigned_long)                                                                                                                                                                          \
    X(MPI_UNSIGNED_LONG_LONG, unsigned_long_long)                                                                                                                                                                \
    X(   \
                MPI_FLOAT, float)                                                                                                                                                                     \
    X(MPI_DOUBLE, double)                                                                                                                                                                                        \
    X(MPI_LONG_DOUBLE, long_double)                                                                                                                                                                              \
    X(MPI_WCHAR, wchar)                                                                                                                                                                                          \
    X(MPI_C_BOOL, c_bool)                                                                                                                                                                                        \
    X(MPI_INT8_T, int8_t)                                                                                                                                                                                        \
    X(                 \
                    MPI_INT16_T, int16_t)                                                                                                                                               \
    X(MPI_INT32_T, int32_t)                                                                                                                                                                                      \
    X(MPI_INT64_T, int64_t)                                                                                                                                                                                      \
    X(MPI_UINT8_T, uint8_t)                                                                                                                                                                                      \
    X(MPI_UINT16_T, uint16_t)                                                                                                                                                                                    \
    X(MPI_UINT32_T, uint32_t)                                                                                                                                                                                    \
    X( \
                        MPI_UINT64_T, uint64_t)                                                                                                                                                         \
    X(MPI_AINT, aint)                                                                                                                                                                                            \
    X(MPI_COUNT, count)                                                                                                                                                                                          \
    X(MPI_OFFSET, offset)                                                                                                                                                                                        \
    X(MPI_C_FLOAT_COMPLEX, c_float_complex)                                                                                                                                                                      \
    X(           \
                            MPI_C_DOUBLE_COMPLEX, c_double_complex)                                                                                                                           \
    X(MPI_C_LONG_DOUBLE_COMPLEX,   \
                                                                      c_long_double_complex)                                                                                \
    X(MPI_BYTE, byte)                                                                                                                                                                                            \
    X(MPI_PACKED, packed)                                                                                                                                                                                        \
    X(MPI_CXX_BOOL, cxx_bool)                                                                                                                                                                                    \
    X(   \
                                MPI_CXX_FLOAT_COMPLEX,                                             \
                                cxx_float_complex)                                               \
    X(MPI_CXX_DOUBLE_COMPLEX, cxx_double_complex)                                                                                                                                                                \
    X(MPI_CXX_LONG_DOUBLE_COMPLEX,                                     \
                                  cxx_long_double_complex)                                                                              \
    X(MPI_FLOAT_INT, float_int)                                                                                                                                                                                  \
    X(MPI_DOUBLE_INT, double_int)                                                                                                                                                                                \
    X(MPI_LONG_INT, long_int)                                                                                                                                                                                    \
    X(MPI_2INT, 2int)                                                                                                                                                                                            \
    X(MPI_SHORT_INT, short_int)                                                                                                                                                                                  \
    X(           \
                                            MPI_LONG_DOUBLE_INT, long_double_int)                                                                                                             \
    X(MPI_CHARACTER, \
                                                                                    character)                                                                                            \
    X(MPI_LOGICAL,                                         \
                                              logical)                                                                                              \
    X(MPI_INTEGER,                              \
                                                         integer)                                                                                              \
    X(MPI_REAL, real)                                                                                                                                                                                            \
    X(MPI_DOUBLE_PRECISION, double_precision)                                                                                                                                                                    \
    X(       \
                                                    MPI_COMPLEX,                                   \
                                                    complex)                                 \
    X(MPI_DOUBLE_COMPLEX, double_complex)                                                                                                                                                                        \
    X(MPI_INTEGER1, integer1)                                                                                                                                                                                    \
    X(                   \
                                                        MPI_INTEGER2,                              \
                                                        integer2)                \
    X(MPI_INTEGER4, integer4)                                                                                                                                                                                    \
    X(MPI_INTEGER8, integer8)                                                                                                                                                                                    \
    X(               \
                                                            MPI_REAL4, real4)                                                                                                             \
    X(MPI_REAL8, real8)                                                                                                                                                                                          \
    X(MPI_REAL16,                          \
                                                              real16)                                                                                               \
    X(MPI_COMPLEX8, complex8)                                                                                                                                                                                    \
    X(MPI_COMPLEX16, complex16)                                                                                                                                                                                  \
    X(MPI_COMPLEX32, complex32)                                                                                                                                                                                  \
    X( \
                                                                        MPI_2INTEGER, 2integer)                                                                                                         \
    X(MPI_2REAL, 2real)                                                                                                                                                                                          \
    X(     \
                                                                            MPI_2DOUBLE_PRECISION, \
                                                                            2double_precision)
/* clang-format on */

#define WEFT_MPI_TYPE_DECL(mpi, obj) WEFT_MPI_OBJ(weft_mpi_datatype, weft_mpi_type_##obj)
WEFT_MPI_PREDEFINED_TYPES(WEFT_MPI_TYPE_DECL)
#undef WEFT_MPI_TYPE_DECL

#define MPI_CHAR                    (&weft_mpi_type_char)
#define MPI_SHORT                   (&weft_mpi_type_short)
#define MPI_INT                     (&weft_mpi_type_int)
#define MPI_LONG                    (&weft_mpi_type_long)
#define MPI_LONG_LONG_INT           (&weft_mpi_type_long_long_int)
#define MPI_LONG_LONG               MPI_LONG_LONG_INT
#define MPI_SIGNED_CHAR             (&weft_mpi_type_signed_char)
#define MPI_UNSIGNED_CHAR           (&weft_mpi_type_unsigned_char)
#define MPI_UNSIGNED_SHORT          (&weft_mpi_type_unsigned_short)
#define MPI_UNSIGNED                (&weft_mpi_type_unsigned)
#define MPI_UNSIGNED_LONG           (&weft_mpi_type_unsigned_long)
#define MPI_UNSIGNED_LONG_LONG      (&weft_mpi_type_unsigned_long_long)
#define MPI_FLOAT                   (&weft_mpi_type_float)
#define MPI_DOUBLE                  (&weft_mpi_type_double)
#define MPI_LONG_DOUBLE             (&weft_mpi_type_long_double)
#define MPI_WCHAR                   (&weft_mpi_type_wchar)
#define MPI_C_BOOL                  (&weft_mpi_type_c_bool)
#define MPI_INT8_T                  (&weft_mpi_type_int8_t)
#define MPI_INT16_T                 (&weft_mpi_type_int16_t)
#define MPI_INT32_T                 (&weft_mpi_type_int32_t)
#define MPI_INT64_T                 (&weft_mpi_type_int64_t)
#define MPI_UINT8_T                 (&weft_mpi_type_uint8_t)
#define MPI_UINT16_T                (&weft_mpi_type_uint16_t)
#define MPI_UINT32_T                (&weft_mpi_type_uint32_t)
#define MPI_UINT64_T                (&weft_mpi_type_uint64_t)
#define MPI_AINT                    (&weft_mpi_type_aint)
#define MPI_COUNT                   (&weft_mpi_type_count)
#define MPI_OFFSET                  (&weft_mpi_type_offset)
#define MPI_C_FLOAT_COMPLEX         (&weft_mpi_type_c_float_complex)
#define MPI_C_COMPLEX               MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX        (&weft_mpi_type_c_double_complex)
#define MPI_C_LONG_DOUBLE_COMPLEX   (&weft_mpi_type_c_long_double_complex)
#define MPI_BYTE                    (&weft_mpi_type_byte)
#define MPI_PACKED                  (&weft_mpi_type_packed)
#define MPI_CXX_BOOL                (&weft_mpi_type_cxx_bool)
#define MPI_CXX_FLOAT_COMPLEX       (&weft_mpi_type_cxx_float_complex)
#define MPI_CXX_DOUBLE_COMPLEX      (&weft_mpi_type_cxx_double_complex)
#define MPI_CXX_LONG_DOUBLE_COMPLEX (&weft_mpi_type_cxx_long_double_complex)
#define MPI_FLOAT_INT               (&weft_mpi_type_float_int)
#define MPI_DOUBLE_INT              (&weft_mpi_type_double_int)
#define MPI_LONG_INT                (&weft_mpi_type_long_int)
#define MPI_2INT                    (&weft_mpi_type_2int)
#define MPI_SHORT_INT               (&weft_mpi_type_short_int)
#define MPI_LONG_DOUBLE_INT         (&weft_mpi_type_long_double_int)
#define MPI_CHARACTER               (&weft_mpi_type_character)
#define MPI_LOGICAL                 (&weft_mpi_type_logical)
#define MPI_INTEGER                 (&weft_mpi_type_integer)
#define MPI_REAL                    (&weft_mpi_type_real)
#define MPI_DOUBLE_PRECISION        (&weft_mpi_type_double_precision)
#define MPI_COMPLEX                 (&weft_mpi_type_complex)
#define MPI_DOUBLE_COMPLEX          (&weft_mpi_type_double_complex)
#define MPI_INTEGER1                (&weft_mpi_type_integer1)
#define MPI_INTEGER2                (&weft_mpi_type_integer2)
#define MPI_INTEGER4                (&weft_mpi_type_integer4)
#define MPI_INTEGER8                (&weft_mpi_type_integer8)
#define MPI_INTEGER16               MPI_DATATYPE_NULL
#define MPI_REAL2                   MPI_DATATYPE_NULL
#define MPI_REAL4                   (&weft_mpi_type_real4)
#define MPI_REAL8                   (&weft_mpi_type_real8)
#define MPI_REAL16                  (&weft_mpi_type_real16)
#define MPI_COMPLEX4                MPI_DATATYPE_NULL
#define MPI_COMPLEX8                (&weft_mpi_type_complex8)
#define MPI_COMPLEX16               (&weft_mpi_type_complex16)
#define MPI_COMPLEX32               (&weft_mpi_type_complex32)
#define MPI_2INTEGER                (&weft_mpi_type_2integer)
#define MPI_2REAL                   (&weft_mpi_type_2real)
#define MPI_2DOUBLE_PRECISION       (&weft_mpi_type_2double_precision)

/* Predefined reduction operations: X(MPI name, object name). */
/* clang-format off */
#define WEFT_MPI_PREDEFINED_OPS(X) \
    X(MPI_MAX, max)                \
    X(MPI_MIN, min)                \
    X(MPI_SUM, sum)                \
    X(MPI_PROD, prod)              \
    X(MPI_LAND, land)              \
    X(MPI_BAND, band)              \
    X(MPI_LOR, lor)                \
    X(MPI_BOR, bor)                \
    X(MPI_LXOR, lxor)              \
    X(MPI_BXOR, bxor)              \
    X(MPI_MINLOC, minloc)          \
    X(MPI_MAXLOC, maxloc)          \
    X(MPI_REPLACE, replace)        \
    X(MPI_NO_OP, no_op)
/* clang-format on */

#define WEFT_MPI_OP_DECL(mpi, obj) WEFT_MPI_OBJ(weft_mpi_op, weft_mpi_op_##obj)
WEFT_MPI_PREDEFINED_OPS(WEFT_MPI_OP_DECL)
#undef WEFT_MPI_OP_DECL

#define MPI_MAX     (&weft_mpi_op_max)
#define MPI_MIN     (&weft_mpi_op_min)
#define MPI_SUM     (&weft_mpi_op_sum)
#define MPI_PROD    (&weft_mpi_op_prod)
#define MPI_LAND    (&weft_mpi_op_land)
#define MPI_BAND    (&weft_mpi_op_band)
#define MPI_LOR     (&weft_mpi_op_lor)
#define MPI_BOR     (&weft_mpi_op_bor)
#define MPI_LXOR    (&weft_mpi_op_lxor)
#define MPI_BXOR    (&weft_mpi_op_bxor)
#define MPI_MINLOC  (&weft_mpi_op_minloc)
#define MPI_MAXLOC  (&weft_mpi_op_maxloc)
#define MPI_REPLACE (&weft_mpi_op_replace)
#define MPI_NO_OP   (&weft_mpi_op_no_op)

/* ---- constants ---- */
#define MPI_ANY_SOURCE     (-1)
#define MPI_PROC_NULL      (-2)
#define MPI_ROOT           (-3)
#define MPI_ANY_TAG        (-1)
#define MPI_UNDEFINED      (-32766)
#define MPI_KEYVAL_INVALID (-1)
#define MPI_BSEND_OVERHEAD 128
#define MPI_LOCK_EXCLUSIVE 1
#define MPI_LOCK_SHARED    2

#define MPI_BOTTOM          ((void *)0)
#define MPI_IN_PLACE        ((void *)1)
#define MPI_STATUS_IGNORE   ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL       ((char **)0)
#define MPI_ARGVS_NULL      ((char ***)0)
extern WEFT_MPI_API int weft_mpi_unweighted_obj, weft_mpi_weights_empty_obj;
#define MPI_UNWEIGHTED    (&weft_mpi_unweighted_obj)
#define MPI_WEIGHTS_EMPTY (&weft_mpi_weights_empty_obj)

#define MPI_MAX_PROCESSOR_NAME         256
#define MPI_MAX_ERROR_STRING           512
#define MPI_MAX_OBJECT_NAME            128
#define MPI_MAX_INFO_KEY               255
#define MPI_MAX_INFO_VAL               1024
#define MPI_MAX_PSET_NAME_LEN          256
#define MPI_MAX_STRINGTAG_LEN          256
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_PORT_NAME              1024
#define MPI_MAX_DATAREP_STRING         128

/* Results of comparisons. */
enum { MPI_IDENT = 0, MPI_CONGRUENT = 1, MPI_SIMILAR = 2, MPI_UNEQUAL = 3 };
/* Topologies. */
enum { MPI_GRAPH = 1, MPI_CART = 2, MPI_DIST_GRAPH = 3 };
/* Thread levels. */
enum {
    MPI_THREAD_SINGLE = 0,
    MPI_THREAD_FUNNELED = 1,
    MPI_THREAD_SERIALIZED = 2,
    MPI_THREAD_MULTIPLE = 3
};
/* Communicator split types (the hardware ones are MPI 4.0's; each also a
 * macro, so that programs can test for them with #ifdef). */
enum { MPI_COMM_TYPE_SHARED = 1, MPI_COMM_TYPE_HW_GUIDED = 2, MPI_COMM_TYPE_HW_UNGUIDED = 3 };
#define MPI_COMM_TYPE_SHARED      MPI_COMM_TYPE_SHARED
#define MPI_COMM_TYPE_HW_GUIDED   MPI_COMM_TYPE_HW_GUIDED
#define MPI_COMM_TYPE_HW_UNGUIDED MPI_COMM_TYPE_HW_UNGUIDED
/* Datatype combiners. */
enum {
    MPI_COMBINER_NAMED = 1,
    MPI_COMBINER_DUP,
    MPI_COMBINER_CONTIGUOUS,
    MPI_COMBINER_VECTOR,
    MPI_COMBINER_HVECTOR,
    MPI_COMBINER_INDEXED,
    MPI_COMBINER_HINDEXED,
    MPI_COMBINER_INDEXED_BLOCK,
    MPI_COMBINER_HINDEXED_BLOCK,
    MPI_COMBINER_STRUCT,
    MPI_COMBINER_SUBARRAY,
    MPI_COMBINER_DARRAY,
    MPI_COMBINER_F90_REAL,
    MPI_COMBINER_F90_COMPLEX,
    MPI_COMBINER_F90_INTEGER,
    MPI_COMBINER_RESIZED,
    MPI_COMBINER_HVECTOR_INTEGER,
    MPI_COMBINER_HINDEXED_INTEGER,
    MPI_COMBINER_STRUCT_INTEGER
};
enum { MPI_ORDER_C = 56, MPI_ORDER_FORTRAN = 57 };
enum { MPI_DISTRIBUTE_BLOCK = 121, MPI_DISTRIBUTE_CYCLIC = 122, MPI_DISTRIBUTE_NONE = 123 };
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)
enum { MPI_TYPECLASS_INTEGER = 1, MPI_TYPECLASS_REAL = 2, MPI_TYPECLASS_COMPLEX = 3 };
/* One-sided assertion modes and window attributes. */
enum {
    MPI_MODE_NOCHECK = 1024,
    MPI_MODE_NOSTORE = 2048,
    MPI_MODE_NOPUT = 4096,
    MPI_MODE_NOPRECEDE = 8192,
    MPI_MODE_NOSUCCEED = 16384
};
enum {
    MPI_WIN_FLAVOR_CREATE = 1,
    MPI_WIN_FLAVOR_ALLOCATE,
    MPI_WIN_FLAVOR_DYNAMIC,
    MPI_WIN_FLAVOR_SHARED
};
enum { MPI_WIN_SEPARATE = 1, MPI_WIN_UNIFIED = 2 };
/* File access modes and seek whence. */
enum {
    MPI_MODE_RDONLY = 2,
    MPI_MODE_RDWR = 8,
    MPI_MODE_WRONLY = 4,
    MPI_MODE_CREATE = 1,
    MPI_MODE_EXCL = 64,
    MPI_MODE_DELETE_ON_CLOSE = 16,
    MPI_MODE_UNIQUE_OPEN = 32,
    MPI_MODE_APPEND = 128,
    MPI_MODE_SEQUENTIAL = 256
};
enum { MPI_SEEK_SET = 600, MPI_SEEK_CUR = 602, MPI_SEEK_END = 604 };
#define MPI_DISPLACEMENT_CURRENT (-54278278)

/* Predefined attribute keys. */
enum {
    MPI_TAG_UB = 0x64400001,
    MPI_HOST,
    MPI_IO,
    MPI_WTIME_IS_GLOBAL,
    MPI_APPNUM,
    MPI_UNIVERSE_SIZE,
    MPI_LASTUSEDCODE,
    MPI_WIN_BASE,
    MPI_WIN_SIZE,
    MPI_WIN_DISP_UNIT,
    MPI_WIN_CREATE_FLAVOR,
    MPI_WIN_MODEL
};

/* Error classes. */
enum {
    MPI_SUCCESS = 0,
    MPI_ERR_BUFFER,
    MPI_ERR_COUNT,
    MPI_ERR_TYPE,
    MPI_ERR_TAG,
    MPI_ERR_COMM,
    MPI_ERR_RANK,
    MPI_ERR_REQUEST,
    MPI_ERR_ROOT,
    MPI_ERR_GROUP,
    MPI_ERR_OP,
    MPI_ERR_TOPOLOGY,
    MPI_ERR_DIMS,
    MPI_ERR_ARG,
    MPI_ERR_UNKNOWN,
    MPI_ERR_TRUNCATE,
    MPI_ERR_OTHER,
    MPI_ERR_INTERN,
    MPI_ERR_IN_STATUS,
    MPI_ERR_PENDING,
    MPI_ERR_KEYVAL,
    MPI_ERR_NO_MEM,
    MPI_ERR_BASE,
    MPI_ERR_INFO_KEY,
    MPI_ERR_INFO_VALUE,
    MPI_ERR_INFO_NOKEY,
    MPI_ERR_SPAWN,
    MPI_ERR_PORT,
    MPI_ERR_SERVICE,
    MPI_ERR_NAME,
    MPI_ERR_WIN,
    MPI_ERR_SIZE,
    MPI_ERR_DISP,
    MPI_ERR_INFO,
    MPI_ERR_LOCKTYPE,
    MPI_ERR_ASSERT,
    MPI_ERR_RMA_CONFLICT,
    MPI_ERR_RMA_SYNC,
    MPI_ERR_RMA_RANGE,
    MPI_ERR_RMA_ATTACH,
    MPI_ERR_RMA_SHARED,
    MPI_ERR_RMA_FLAVOR,
    MPI_ERR_FILE,
    MPI_ERR_NOT_SAME,
    MPI_ERR_AMODE,
    MPI_ERR_UNSUPPORTED_DATAREP,
    MPI_ERR_UNSUPPORTED_OPERATION,
    MPI_ERR_NO_SUCH_FILE,
    MPI_ERR_FILE_EXISTS,
    MPI_ERR_BAD_FILE,
    MPI_ERR_ACCESS,
    MPI_ERR_NO_SPACE,
    MPI_ERR_QUOTA,
    MPI_ERR_READ_ONLY,
    MPI_ERR_FILE_IN_USE,
    MPI_ERR_DUP_DATAREP,
    MPI_ERR_CONVERSION,
    MPI_ERR_IO,
    MPI_T_ERR_MEMORY,
    MPI_T_ERR_NOT_INITIALIZED,
    MPI_T_ERR_CANNOT_INIT,
    MPI_T_ERR_INVALID_INDEX,
    MPI_T_ERR_INVALID_ITEM,
    MPI_T_ERR_INVALID_HANDLE,
    MPI_T_ERR_OUT_OF_HANDLES,
    MPI_T_ERR_OUT_OF_SESSIONS,
    MPI_T_ERR_INVALID_SESSION,
    MPI_T_ERR_CVAR_SET_NOT_NOW,
    MPI_T_ERR_CVAR_SET_NEVER,
    MPI_T_ERR_PVAR_NO_STARTSTOP,
    MPI_T_ERR_PVAR_NO_WRITE,
    MPI_T_ERR_PVAR_NO_ATOMIC,
    MPI_T_ERR_INVALID_NAME,
    MPI_T_ERR_INVALID,
    MPI_ERR_SESSION,         /* MPI 4.0: an invalid session */
    MPI_ERR_PROC_ABORTED,    /* MPI 4.0: a peer was aborted */
    MPI_ERR_VALUE_TOO_LARGE, /* MPI 4.0: a value does not fit its output argument */
    /* The fault-tolerance extension's class (as in Open MPI's and MPICH's
     * ULFM): a process the operation involves died or lost its connection,
     * or, in a collective, a member stopped on such an error and the
     * operation could not complete here. A collective never returns
     * MPI_SUCCESS with a result that misses a failed member. */
    MPIX_ERR_PROC_FAILED,
    MPI_ERR_LASTCODE
};
#define MPIX_ERR_PROC_FAILED MPIX_ERR_PROC_FAILED

/* ---- callback types ---- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void *attribute_val, void *extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state,
                                       void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val,
                                         void *extra_state);
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                              void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *error_code, ...);
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *error_code, ...);
typedef void MPI_File_errhandler_function(MPI_File *file, int *error_code, ...);
typedef void MPI_Session_errhandler_function(MPI_Session *session, int *error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
/* MPI-1's name, for MPI_Errhandler_create (removed in MPI 3.0, kept for old programs). */
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state);
typedef int MPI_Datarep_conversion_function(void *userbuf, MPI_Datatype datatype, int count,
                                            void *filebuf, MPI_Offset position, void *extra_state);

/* Predefined attribute callbacks. */
WEFT_MPI_API int weft_mpi_null_copy_fn(MPI_Comm, int, void *, void *, void *, int *);
WEFT_MPI_API int weft_mpi_dup_fn(MPI_Comm, int, void *, void *, void *, int *);
WEFT_MPI_API int weft_mpi_null_delete_fn(MPI_Comm, int, void *, void *);
WEFT_MPI_API int weft_mpi_type_null_copy_fn(MPI_Datatype, int, void *, void *, void *, int *);
WEFT_MPI_API int weft_mpi_type_dup_fn(MPI_Datatype, int, void *, void *, void *, int *);
WEFT_MPI_API int weft_mpi_type_null_delete_fn(MPI_Datatype, int, void *, void *);
WEFT_MPI_API int weft_mpi_win_null_copy_fn(MPI_Win, int, void *, void *, void *, int *);
WEFT_MPI_API int weft_mpi_win_dup_fn(MPI_Win, int, void *, void *, void *, int *);
WEFT_MPI_API int weft_mpi_win_null_delete_fn(MPI_Win, int, void *, void *);
WEFT_MPI_API int weft_mpi_conversion_fn_null(void *, MPI_Datatype, int, void *, MPI_Offset, void *);
#define MPI_NULL_COPY_FN        weft_mpi_null_copy_fn
#define MPI_DUP_FN              weft_mpi_dup_fn
#define MPI_NULL_DELETE_FN      weft_mpi_null_delete_fn
#define MPI_COMM_NULL_COPY_FN   weft_mpi_null_copy_fn
#define MPI_COMM_DUP_FN         weft_mpi_dup_fn
#define MPI_COMM_NULL_DELETE_FN weft_mpi_null_delete_fn
#define MPI_TYPE_NULL_COPY_FN   weft_mpi_type_null_copy_fn
#define MPI_TYPE_DUP_FN         weft_mpi_type_dup_fn
#define MPI_TYPE_NULL_DELETE_FN weft_mpi_type_null_delete_fn
#define MPI_WIN_NULL_COPY_FN    weft_mpi_win_null_copy_fn
#define MPI_WIN_DUP_FN          weft_mpi_win_dup_fn
#define MPI_WIN_NULL_DELETE_FN  weft_mpi_win_null_delete_fn
#define MPI_CONVERSION_FN_NULL  weft_mpi_conversion_fn_null

/* ---- the tools information interface (MPI_T, MPI 3.1 §14.3) ----
 * Control variables are weft's WEFT_* parameters (strings, MPI_CHAR); a
 * write before MPI_Init takes effect at MPI_Init, later ones answer
 * MPI_T_ERR_CVAR_SET_NOT_NOW. Performance variables are the engine's
 * counters (MPI_UNSIGNED_LONG_LONG), continuous. See docs/mpi.md ("The MPI_T tools interface"). */
typedef struct weft_mpi_t_enum *MPI_T_enum;
typedef struct weft_mpi_t_cvar_handle *MPI_T_cvar_handle;
typedef struct weft_mpi_t_pvar_handle *MPI_T_pvar_handle;
typedef struct weft_mpi_t_pvar_session *MPI_T_pvar_session;
#define MPI_T_ENUM_NULL         ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL  ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL  ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_ALL_HANDLES  ((MPI_T_pvar_handle)(intptr_t)-1)

enum {
    MPI_T_VERBOSITY_USER_BASIC = 221,
    MPI_T_VERBOSITY_USER_DETAIL,
    MPI_T_VERBOSITY_USER_ALL,
    MPI_T_VERBOSITY_TUNER_BASIC,
    MPI_T_VERBOSITY_TUNER_DETAIL,
    MPI_T_VERBOSITY_TUNER_ALL,
    MPI_T_VERBOSITY_MPIDEV_BASIC,
    MPI_T_VERBOSITY_MPIDEV_DETAIL,
    MPI_T_VERBOSITY_MPIDEV_ALL
};
enum {
    MPI_T_BIND_NO_OBJECT = 9700,
    MPI_T_BIND_MPI_COMM,
    MPI_T_BIND_MPI_DATATYPE,
    MPI_T_BIND_MPI_ERRHANDLER,
    MPI_T_BIND_MPI_FILE,
    MPI_T_BIND_MPI_GROUP,
    MPI_T_BIND_MPI_OP,
    MPI_T_BIND_MPI_REQUEST,
    MPI_T_BIND_MPI_WIN,
    MPI_T_BIND_MPI_MESSAGE,
    MPI_T_BIND_MPI_INFO
};
enum {
    MPI_T_SCOPE_CONSTANT = 60438,
    MPI_T_SCOPE_READONLY,
    MPI_T_SCOPE_LOCAL,
    MPI_T_SCOPE_GROUP,
    MPI_T_SCOPE_GROUP_EQ,
    MPI_T_SCOPE_ALL,
    MPI_T_SCOPE_ALL_EQ
};
enum {
    MPI_T_PVAR_CLASS_STATE = 240,
    MPI_T_PVAR_CLASS_LEVEL,
    MPI_T_PVAR_CLASS_SIZE,
    MPI_T_PVAR_CLASS_PERCENTAGE,
    MPI_T_PVAR_CLASS_HIGHWATERMARK,
    MPI_T_PVAR_CLASS_LOWWATERMARK,
    MPI_T_PVAR_CLASS_COUNTER,
    MPI_T_PVAR_CLASS_AGGREGATE,
    MPI_T_PVAR_CLASS_TIMER,
    MPI_T_PVAR_CLASS_GENERIC
};

/* ---- functions: each declared as MPI_X and PMPI_X ---- */
#define WEFT_MPI_FN(ret, name, args)                                                               \
    WEFT_MPI_API ret MPI_##name args;                                                              \
    WEFT_MPI_API ret PMPI_##name args;
#include "weft/mpi_functions.h"
#undef WEFT_MPI_FN

#ifdef __cplusplus
}
#endif

#endif
