/* MPI reduction operations in-process, without MPI_Init: every predefined
 * operation on every predefined type (allowed per MPI 3.1 section 5.9.2, values
 * checked; MPI_ERR_OP otherwise), MINLOC/MAXLOC ties, derived types built of one
 * predefined type (contiguous, strided, pairs with holes), user operations. */
#include <complex.h>
#include <mpi.h>

#include "../common/test_util.h"
#include "mpi/mpi_int.h"

/* Collectives, topologies and intercommunicators are other parts' (mpi_coll*.c,
 * mpi_topo.c, mpi_intercomm.c); until they are on this branch, the rest of the
 * layer links against these stand-ins, which these tests never reach. */
__attribute__((weak)) int weft__mpi_topo_dup(const weft_mpi_topo_t *t, weft_mpi_topo_t **out)
{
    return MPI_ERR_INTERN;
}
__attribute__((weak)) void weft__mpi_topo_free(weft_mpi_topo_t *t) {}
__attribute__((weak)) int weft__mpi_intercomm_dup(MPI_Comm comm, MPI_Comm *out)
{
    return MPI_ERR_INTERN;
}
__attribute__((weak)) int PMPI_Barrier(MPI_Comm comm)
{
    return MPI_ERR_INTERN;
}

/* The standard's classes, written out here independently of the library;
 * MPI_CHAR counts as a C integer, as in Open MPI and MPICH. */
enum { K_INT, K_FLOAT, K_COMPLEX, K_LOGICAL, K_BYTE, K_PAIR, K_OTHER };

static int kind_of(MPI_Datatype t)
{
    const MPI_Datatype ints[] = {
        MPI_INT,         MPI_LONG,          MPI_SHORT,         MPI_UNSIGNED_SHORT,
        MPI_UNSIGNED,    MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG,
        MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_INT8_T,        MPI_INT16_T,
        MPI_INT32_T,     MPI_INT64_T,       MPI_UINT8_T,       MPI_UINT16_T,
        MPI_UINT32_T,    MPI_UINT64_T,      MPI_INTEGER,       MPI_INTEGER1,
        MPI_INTEGER2,    MPI_INTEGER4,      MPI_INTEGER8,      MPI_AINT,
        MPI_OFFSET,      MPI_COUNT,         MPI_CHAR};
    const MPI_Datatype floats[] = {
        MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION,
        MPI_REAL4, MPI_REAL8,  MPI_REAL16};
    const MPI_Datatype complexes[] = {
        MPI_C_FLOAT_COMPLEX,   MPI_C_DOUBLE_COMPLEX,   MPI_C_LONG_DOUBLE_COMPLEX,
        MPI_CXX_FLOAT_COMPLEX, MPI_CXX_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX,
        MPI_COMPLEX,           MPI_DOUBLE_COMPLEX,     MPI_COMPLEX8,
        MPI_COMPLEX16,         MPI_COMPLEX32};
    const MPI_Datatype logicals[] = {MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL};
    const MPI_Datatype pairs[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
                                  MPI_2INT,      MPI_SHORT_INT,  MPI_LONG_DOUBLE_INT,
                                  MPI_2INTEGER,  MPI_2REAL,      MPI_2DOUBLE_PRECISION};
    struct {
        int kind;
        const MPI_Datatype *list;
        size_t n;
    } all[] = {{K_INT, ints, sizeof ints / sizeof ints[0]},
               {K_FLOAT, floats, sizeof floats / sizeof floats[0]},
               {K_COMPLEX, complexes, sizeof complexes / sizeof complexes[0]},
               {K_LOGICAL, logicals, sizeof logicals / sizeof logicals[0]},
               {K_PAIR, pairs, sizeof pairs / sizeof pairs[0]}};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        for (size_t i = 0; i < all[k].n; i++)
            if (all[k].list[i] == t)
                return all[k].kind;
    return t == MPI_BYTE ? K_BYTE : K_OTHER;
}

static bool allowed(MPI_Op op, int kind)
{
    if (op == MPI_MAX || op == MPI_MIN)
        return kind == K_INT || kind == K_FLOAT;
    if (op == MPI_SUM || op == MPI_PROD)
        return kind == K_INT || kind == K_FLOAT || kind == K_COMPLEX;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return kind == K_INT || kind == K_LOGICAL;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return kind == K_INT || kind == K_BYTE;
    if (op == MPI_MINLOC || op == MPI_MAXLOC)
        return kind == K_PAIR;
    return true; /* REPLACE, NO_OP */
}

/* Integers of any size and sign, through int64_t. */
static void iset(void *buf, int i, MPI_Datatype t, int64_t v)
{
    char *p = (char *)buf + i * t->size;
    switch (t->size) {
    case 1: {
        int8_t x = (int8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case 2: {
        int16_t x = (int16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default:
        memcpy(p, &v, 8);
    }
}

static int64_t iget(const void *buf, int i, MPI_Datatype t, bool is_signed)
{
    const char *p = (const char *)buf + i * t->size;
    switch (t->size) {
    case 1: {
        int8_t x;
        memcpy(&x, p, 1);
        return is_signed ? (int64_t)x : (int64_t)(uint8_t)x;
    }
    case 2: {
        int16_t x;
        memcpy(&x, p, 2);
        return is_signed ? (int64_t)x : (int64_t)(uint16_t)x;
    }
    case 4: {
        int32_t x;
        memcpy(&x, p, 4);
        return is_signed ? (int64_t)x : (int64_t)(uint32_t)x;
    }
    default: {
        int64_t x;
        memcpy(&x, p, 8);
        return x;
    }
    }
}

static const MPI_Op all_ops[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                                 MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                                 MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
#define NOPS ((int)(sizeof all_ops / sizeof all_ops[0]))

static void test_integers(MPI_Datatype t)
{
    static const int64_t a[] = {5, 3, 0, 7}, b[] = {2, 3, 6, 0};
    static const int64_t want[][4] = {
        {5, 3, 6, 7}, {2, 3, 0, 0}, {7, 6, 6, 7}, {10, 9, 0, 0}, {1, 1, 0, 0}, /* max..land */
        {0, 3, 0, 0}, {1, 1, 1, 1}, {7, 3, 6, 7}, {0, 0, 1, 1},  {7, 0, 6, 7}, /* band..bxor */
    };
    bool is_signed = t->basic == WEFT_MPI_B_INT;
    for (int o = 0; o < 10; o++) {
        char in[32], inout[32];
        for (int i = 0; i < 4; i++) {
            iset(in, i, t, a[i]);
            iset(inout, i, t, b[i]);
        }
        CHECK(MPI_Reduce_local(in, inout, 4, t, all_ops[o]) == MPI_SUCCESS);
        bool ok = true;
        for (int i = 0; i < 4; i++)
            ok = ok && iget(inout, i, t, is_signed) == want[o][i];
        if (!ok)
            fprintf(stderr, "%s: op %d wrong\n", t->name, o);
        CHECK(ok);
    }
    /* Sign matters for MAX and MIN; sums wrap. */
    char in[8], inout[8];
    iset(in, 0, t, -1);
    iset(inout, 0, t, 1);
    MPI_Reduce_local(in, inout, 1, t, MPI_MAX);
    CHECK(iget(inout, 0, t, is_signed) == (is_signed ? 1 : iget(in, 0, t, false)));
    iset(in, 0, t, -1);
    iset(inout, 0, t, 2);
    MPI_Reduce_local(in, inout, 1, t, MPI_SUM);
    CHECK(iget(inout, 0, t, false) == 1);
}

#define FLOAT_CASE(T)                                                                              \
    do {                                                                                           \
        T in[4], inout[4];                                                                         \
        static const double a[] = {1.5, -2, 3, 0.5}, b[] = {2.5, -3, 3, 4};                        \
        static const double want[4][4] = {                                                         \
            {2.5, -2, 3, 4}, {1.5, -3, 3, 0.5}, {4, -5, 6, 4.5}, {3.75, 6, 9, 2}};                 \
        for (int o = 0; o < 4; o++) {                                                              \
            for (int i = 0; i < 4; i++)                                                            \
                in[i] = (T)a[i], inout[i] = (T)b[i];                                               \
            CHECK(MPI_Reduce_local(in, inout, 4, t, all_ops[o]) == MPI_SUCCESS);                   \
            for (int i = 0; i < 4; i++)                                                            \
                CHECK(inout[i] == (T)want[o][i]);                                                  \
        }                                                                                          \
    } while (0)

#define COMPLEX_CASE(T, R)                                                                         \
    do {                                                                                           \
        T in[2] = {__builtin_complex((R)1, (R)2), __builtin_complex((R)0, (R)1)};                  \
        T inout[2] = {__builtin_complex((R)3, (R)-1), __builtin_complex((R)0, (R)1)};              \
        CHECK(MPI_Reduce_local(in, inout, 2, t, MPI_SUM) == MPI_SUCCESS);                          \
        CHECK(inout[0] == __builtin_complex((R)4, (R)1) &&                                         \
              inout[1] == __builtin_complex((R)0, (R)2));                                          \
        inout[0] = __builtin_complex((R)3, (R)-1);                                                 \
        inout[1] = __builtin_complex((R)0, (R)1);                                                  \
        CHECK(MPI_Reduce_local(in, inout, 2, t, MPI_PROD) == MPI_SUCCESS);                         \
        CHECK(inout[0] == __builtin_complex((R)5, (R)5) && inout[1] == (T)-1);                     \
    } while (0)

static void test_logicals(MPI_Datatype t)
{
    static const int64_t a[] = {1, 1, 0, 0}, b[] = {1, 0, 2, 0};
    static const int64_t want[3][4] = {{1, 0, 0, 0}, {1, 1, 1, 0}, {0, 1, 1, 0}};
    const MPI_Op ops[] = {MPI_LAND, MPI_LOR, MPI_LXOR};
    for (int o = 0; o < 3; o++) {
        char in[16], inout[16];
        for (int i = 0; i < 4; i++) {
            iset(in, i, t, a[i]);
            iset(inout, i, t, t->size == 1 && b[i] ? 1 : b[i]); /* _Bool holds 0 or 1 */
        }
        CHECK(MPI_Reduce_local(in, inout, 4, t, ops[o]) == MPI_SUCCESS);
        for (int i = 0; i < 4; i++)
            CHECK(iget(inout, i, t, false) == want[o][i]);
    }
}

#define PAIR_CASE(S)                                                                               \
    do {                                                                                           \
        S in[3], inout[3], w[3];                                                                   \
        memset(in, 0, sizeof in), memset(inout, 0, sizeof inout), memset(w, 0, sizeof w);          \
        in[0].v = 3, in[0].k = 1, in[1].v = 2, in[1].k = 5, in[2].v = 2, in[2].k = 2;              \
        inout[0].v = 3, inout[0].k = 0, inout[1].v = 1, inout[1].k = 4, inout[2].v = 2,            \
        inout[2].k = 7;                                                                            \
        memcpy(w, inout, sizeof w);                                                                \
        CHECK(MPI_Reduce_local(in, w, 3, t, MPI_MINLOC) == MPI_SUCCESS);                           \
        CHECK(w[0].v == 3 && w[0].k == 0 && w[1].v == 1 && w[1].k == 4 && w[2].v == 2 &&           \
              w[2].k == 2);                                                                        \
        memcpy(w, inout, sizeof w);                                                                \
        CHECK(MPI_Reduce_local(in, w, 3, t, MPI_MAXLOC) == MPI_SUCCESS);                           \
        CHECK(w[0].v == 3 && w[0].k == 0 && w[1].v == 2 && w[1].k == 5 && w[2].v == 2 &&           \
              w[2].k == 2);                                                                        \
    } while (0)

#define PAIR_T(VT, KT)                                                                             \
    struct {                                                                                       \
        VT v;                                                                                      \
        KT k;                                                                                      \
    }

static void test_pair(MPI_Datatype t)
{
    if (t == MPI_FLOAT_INT)
        PAIR_CASE(PAIR_T(float, int));
    else if (t == MPI_DOUBLE_INT)
        PAIR_CASE(PAIR_T(double, int));
    else if (t == MPI_LONG_INT)
        PAIR_CASE(PAIR_T(long, int));
    else if (t == MPI_2INT || t == MPI_2INTEGER)
        PAIR_CASE(PAIR_T(int, int));
    else if (t == MPI_SHORT_INT)
        PAIR_CASE(PAIR_T(short, int));
    else if (t == MPI_LONG_DOUBLE_INT)
        PAIR_CASE(PAIR_T(long double, int));
    else if (t == MPI_2REAL)
        PAIR_CASE(PAIR_T(float, float));
    else if (t == MPI_2DOUBLE_PRECISION)
        PAIR_CASE(PAIR_T(double, double));
    else
        CHECK(!"unknown pair type");
}

static void test_every_type(void)
{
    int tested = 0;
#define EACH(mpi, obj)                                                                             \
    {                                                                                              \
        MPI_Datatype t = mpi;                                                                      \
        int kind = kind_of(t);                                                                     \
        for (int o = 0; o < NOPS; o++) {                                                           \
            _Alignas(16) char in[64] = {0}, inout[64] = {0};                                       \
            int rc = MPI_Reduce_local(in, inout, 1, t, all_ops[o]);                                \
            if (rc != (allowed(all_ops[o], kind) ? MPI_SUCCESS : MPI_ERR_OP))                      \
                fprintf(stderr, "%s op %d: rc %d\n", #mpi, o, rc);                                 \
            CHECK(rc == (allowed(all_ops[o], kind) ? MPI_SUCCESS : MPI_ERR_OP));                   \
        }                                                                                          \
        switch (kind) {                                                                            \
        case K_INT:                                                                                \
            test_integers(t);                                                                      \
            break;                                                                                 \
        case K_FLOAT:                                                                              \
            if (t->size == 4)                                                                      \
                FLOAT_CASE(float);                                                                 \
            else if (t->size == 8)                                                                 \
                FLOAT_CASE(double);                                                                \
            else                                                                                   \
                FLOAT_CASE(long double);                                                           \
            break;                                                                                 \
        case K_COMPLEX:                                                                            \
            if (t->size == 8)                                                                      \
                COMPLEX_CASE(float _Complex, float);                                               \
            else if (t->size == 16)                                                                \
                COMPLEX_CASE(double _Complex, double);                                             \
            else                                                                                   \
                COMPLEX_CASE(long double _Complex, long double);                                   \
            break;                                                                                 \
        case K_LOGICAL:                                                                            \
            test_logicals(t);                                                                      \
            break;                                                                                 \
        case K_PAIR:                                                                               \
            test_pair(t);                                                                          \
            break;                                                                                 \
        }                                                                                          \
        tested++;                                                                                  \
    }
    WEFT_MPI_PREDEFINED_TYPES(EACH)
#undef EACH
    CHECK(tested == 62);

    /* Bytes take bitwise operations only. */
    unsigned char in[2] = {0xf0, 0x0f}, inout[2] = {0x3c, 0xff};
    MPI_Reduce_local(in, inout, 2, MPI_BYTE, MPI_BXOR);
    CHECK(inout[0] == 0xcc && inout[1] == 0xf0);
    MPI_Reduce_local(in, inout, 2, MPI_BYTE, MPI_BAND);
    CHECK(inout[0] == 0xc0 && inout[1] == 0x00);
    MPI_Reduce_local(in, inout, 2, MPI_BYTE, MPI_BOR);
    CHECK(inout[0] == 0xf0 && inout[1] == 0x0f);

    /* The examples the standard names. */
    double d[2] = {1, 2}, e[2] = {3, 4};
    CHECK(MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_BAND) == MPI_ERR_OP);
    CHECK(MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_LAND) == MPI_ERR_OP);
    CHECK(MPI_Reduce_local(d, e, 1, MPI_DOUBLE, MPI_MINLOC) == MPI_ERR_OP);
    CHECK(MPI_Reduce_local(d, e, 1, MPI_2INT, MPI_SUM) == MPI_ERR_OP);
    CHECK(e[0] == 3 && e[1] == 4);
    CHECK(MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_REPLACE) == MPI_SUCCESS);
    CHECK(e[0] == 1 && e[1] == 2);
    e[0] = 9;
    CHECK(MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_NO_OP) == MPI_SUCCESS && e[0] == 9);
    CHECK(MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_OP_NULL) == MPI_ERR_OP);
    CHECK(MPI_Reduce_local(d, e, -1, MPI_DOUBLE, MPI_SUM) == MPI_ERR_COUNT);
    CHECK(MPI_Reduce_local(d, e, 1, MPI_DATATYPE_NULL, MPI_SUM) == MPI_ERR_TYPE);
}

static void test_derived(void)
{
    MPI_Datatype t;

    /* Contiguous ints: one call over everything. */
    MPI_Type_contiguous(4, MPI_INT, &t);
    MPI_Type_commit(&t);
    int a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {10, 20, 30, 40, 50, 60, 70, 80};
    CHECK(MPI_Reduce_local(a, b, 2, t, MPI_SUM) == MPI_SUCCESS);
    for (int i = 0; i < 8; i++)
        CHECK(b[i] == 11 * (i + 1));
    MPI_Type_free(&t);

    /* A strided vector: the holes stay untouched. */
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    double x[6] = {1, 100, 2, 100, 3, 100}, y[6] = {1, -1, 1, -1, 1, -1};
    CHECK(MPI_Reduce_local(x, y, 2, t, MPI_MAX) == MPI_SUCCESS);
    /* extent of vector(2,1,2) is 3 doubles: elements at 0, 2 and 3, 5 */
    CHECK(y[0] == 1 && y[1] == -1 && y[2] == 2 && y[3] == 100 && y[4] == 1 && y[5] == 100);
    MPI_Type_free(&t);

    /* Pairs with holes inside a derived layout (MPI_SHORT_INT in a vector). */
    struct si {
        short v;
        int k;
    } p[4] = {{5, 1}, {0, 0}, {7, 9}, {0, 0}}, q[4] = {{5, 0}, {-1, -1}, {8, 2}, {-1, -1}};
    MPI_Type_vector(2, 1, 2, MPI_SHORT_INT, &t);
    MPI_Type_commit(&t);
    CHECK(t->reduce_type == MPI_SHORT_INT);
    CHECK(MPI_Reduce_local(p, q, 1, t, MPI_MAXLOC) == MPI_SUCCESS);
    CHECK(q[0].v == 5 && q[0].k == 0 && q[2].v == 8 && q[2].k == 2);
    CHECK(q[1].v == -1 && q[1].k == -1 && q[3].v == -1);
    q[0].k = 3;
    CHECK(MPI_Reduce_local(p, q, 1, t, MPI_MINLOC) == MPI_SUCCESS);
    CHECK(q[0].v == 5 && q[0].k == 1 && q[2].v == 7 && q[2].k == 9);
    MPI_Type_free(&t);

    /* A struct of two types has no reduce type: only REPLACE and NO_OP. */
    struct {
        int i;
        double d;
    } s1 = {1, 2}, s2 = {3, 4};
    int bl[] = {1, 1};
    MPI_Aint disp[] = {offsetof(__typeof__(s1), i), offsetof(__typeof__(s1), d)};
    MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, disp, ty, &t);
    MPI_Type_commit(&t);
    CHECK(MPI_Reduce_local(&s1, &s2, 1, t, MPI_SUM) == MPI_ERR_OP);
    CHECK(MPI_Reduce_local(&s1, &s2, 1, t, MPI_REPLACE) == MPI_SUCCESS);
    CHECK(s2.i == 1 && s2.d == 2);
    MPI_Type_free(&t);
}

static int user_calls, user_len;
static MPI_Datatype user_type;

/* inout = in - inout: not commutative, so the order of operands shows. */
static void minus(void *in, void *inout, int *len, MPI_Datatype *type)
{
    user_calls++;
    user_len = *len;
    user_type = *type;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i] - ((int *)inout)[i];
}

static void test_user(void)
{
    MPI_Op op;
    int commute;
    CHECK(MPI_Op_create(minus, 0, &op) == MPI_SUCCESS);
    CHECK(MPI_Op_commutative(op, &commute) == MPI_SUCCESS && commute == 0);
    CHECK(MPI_Op_commutative(MPI_SUM, &commute) == MPI_SUCCESS && commute == 1);
    int a[3] = {10, 20, 30}, b[3] = {1, 2, 3};
    CHECK(MPI_Reduce_local(a, b, 3, MPI_INT, op) == MPI_SUCCESS);
    CHECK(b[0] == 9 && b[1] == 18 && b[2] == 27);
    CHECK(user_calls == 1 && user_len == 3 && user_type == MPI_INT);
    CHECK(weft__mpi_op_apply(op, a, b, 0, MPI_INT) == MPI_SUCCESS && user_calls == 1);

    /* A pending collective's reference outlives Op_free. */
    weft__mpi_op_retain(op);
    MPI_Op held = op;
    CHECK(MPI_Op_free(&op) == MPI_SUCCESS && op == MPI_OP_NULL);
    CHECK(weft__mpi_op_apply(held, a, b, 3, MPI_INT) == MPI_SUCCESS && b[0] == 1);
    weft__mpi_op_release(held);

    CHECK(MPI_Op_free(&(MPI_Op){MPI_SUM}) == MPI_ERR_OP);
    CHECK(MPI_Op_free(&op) == MPI_ERR_OP); /* MPI_OP_NULL */
    CHECK(MPI_Op_create(NULL, 1, &op) == MPI_ERR_ARG);
}

int main(void)
{
    test_watchdog(60);
    /* Errors are returned to be checked. Before MPI_Init they go to MPI_COMM_SELF
     * (or the communicator named), whose handler cannot be set through the API
     * yet: set it in the objects. */
    MPI_COMM_SELF->errhandler = MPI_ERRORS_RETURN;
    MPI_COMM_WORLD->errhandler = MPI_ERRORS_RETURN;
    test_every_type();
    test_derived();
    test_user();
    return test_summary("mpi_op");
}
