/* Keyvals freed while attributes still use them (MPI 3.1 §6.7.2): the
 * attributes live on, a dup still copies them through the copy callback, and
 * the delete callback runs when each object goes. A dup whose copy callback
 * fails returns the error and a null handle. A dup copies any number of
 * attributes. A delete callback may delete and set other attributes of the
 * same object, in MPI_Comm_delete_attr, MPI_Comm_set_attr, MPI_Comm_free and at
 * MPI_Finalize for MPI_COMM_SELF. */
#include "mpitest.h"

static int copies, deletes;
static long deleted_sum;

static int comm_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int comm_delete(MPI_Comm c, int k, void *value, void *extra)
{
    deletes++;
    deleted_sum += (long)(MPI_Aint)value;
    return MPI_SUCCESS;
}

static int type_copy(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int type_delete(MPI_Datatype t, int k, void *value, void *extra)
{
    deletes++;
    deleted_sum += (long)(MPI_Aint)value;
    return MPI_SUCCESS;
}

static int type_copy_fails(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    return MPI_ERR_OTHER;
}

static void comm_keyval_freed(void)
{
    MPI_Comm a, b, c;
    int key;
    copies = deletes = 0;
    deleted_sum = 0;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_MUST(MPI_Comm_create_keyval(comm_copy, comm_delete, &key, NULL));
    MPI_MUST(MPI_Comm_set_attr(a, key, (void *)(MPI_Aint)10));
    MPI_MUST(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID);
    /* The attribute is still on a: duplicates copy it, twice over. */
    MPI_MUST(MPI_Comm_dup(a, &b));
    MPI_MUST(MPI_Comm_dup(b, &c));
    CHECK(copies == 2);
    MPI_MUST(MPI_Comm_free(&a));
    MPI_MUST(MPI_Comm_free(&c));
    MPI_MUST(MPI_Comm_free(&b));
    CHECK(deletes == 3 && deleted_sum == 10 + 11 + 12);

    /* Deleting the attributes of a freed keyval, through a saved copy of its
     * handle, is how a program lets it go on objects it keeps. */
    int saved;
    deletes = 0;
    MPI_MUST(MPI_Comm_create_keyval(comm_copy, comm_delete, &key, NULL));
    saved = key;
    MPI_MUST(MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void *)(MPI_Aint)5));
    MPI_MUST(MPI_Comm_free_keyval(&key));
    MPI_MUST(MPI_Comm_delete_attr(MPI_COMM_WORLD, saved));
    CHECK(deletes == 1);
}

static void type_keyval_freed(void)
{
    MPI_Datatype a, b;
    int key;
    copies = deletes = 0;
    deleted_sum = 0;
    MPI_MUST(MPI_Type_contiguous(2, MPI_INT, &a));
    MPI_MUST(MPI_Type_create_keyval(type_copy, type_delete, &key, NULL));
    MPI_MUST(MPI_Type_set_attr(a, key, (void *)(MPI_Aint)20));
    MPI_MUST(MPI_Type_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID);
    MPI_MUST(MPI_Type_dup(a, &b));
    CHECK(copies == 1);
    MPI_MUST(MPI_Type_free(&a));
    MPI_MUST(MPI_Type_free(&b));
    CHECK(deletes == 2 && deleted_sum == 20 + 21);
}

static void type_dup_copy_fails(void)
{
    MPI_Datatype a, b = MPI_INT;
    int key;
    MPI_MUST(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_MUST(MPI_Type_contiguous(3, MPI_INT, &a));
    MPI_MUST(MPI_Type_create_keyval(type_copy_fails, MPI_TYPE_NULL_DELETE_FN, &key, NULL));
    MPI_MUST(MPI_Type_set_attr(a, key, (void *)(MPI_Aint)1));
    int rc = MPI_Type_dup(a, &b);
    CHECK(rc != MPI_SUCCESS);
    CHECK(b == MPI_DATATYPE_NULL);
    MPI_MUST(MPI_Type_delete_attr(a, key));
    MPI_MUST(MPI_Type_free_keyval(&key));
    MPI_MUST(MPI_Type_free(&a));
    MPI_MUST(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* A dup copies every attribute, however many there are, oldest first. */
static void comm_dup_many(void)
{
    enum { N = 300 };
    static int keys[N];
    for (int i = 0; i < N; i++) {
        MPI_MUST(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &keys[i], NULL));
        MPI_MUST(MPI_Comm_set_attr(MPI_COMM_WORLD, keys[i], (void *)(MPI_Aint)(i + 1)));
    }
    MPI_Comm d;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int found = 0;
    for (int i = 0; i < N; i++) {
        void *v = NULL;
        int flag = 0;
        MPI_MUST(MPI_Comm_get_attr(d, keys[i], &v, &flag));
        found += flag && (MPI_Aint)v == i + 1;
    }
    CHECK(found == N);
    MPI_MUST(MPI_Comm_free(&d));
    for (int i = 0; i < N; i++) {
        MPI_MUST(MPI_Comm_delete_attr(MPI_COMM_WORLD, keys[i]));
        MPI_MUST(MPI_Comm_free_keyval(&keys[i]));
    }
}

/* Delete callbacks that change the object's other attributes (MPI 3.1 §6.7.2
 * allows it): the keys set before and after the one being deleted are deleted
 * from inside its callback, and a new one is set. */
enum { CHAIN = 4 };
static int chain_keys[CHAIN], chain_deletes, chain_extra_key = MPI_KEYVAL_INVALID;

static void chain_set(MPI_Comm c)
{
    for (int i = 0; i < CHAIN; i++)
        MPI_MUST(MPI_Comm_set_attr(c, chain_keys[i], (void *)(MPI_Aint)(i + 1)));
}

static int chain_has(MPI_Comm c, int key)
{
    void *v;
    int flag = 0;
    MPI_MUST(MPI_Comm_get_attr(c, key, &v, &flag));
    return flag;
}

static int chain_delete(MPI_Comm c, int k, void *value, void *extra)
{
    chain_deletes++;
    if (k != chain_keys[1])
        return MPI_SUCCESS;
    /* The middle key's callback takes its neighbours with it. */
    int rc = MPI_SUCCESS;
    for (int i = 0; i <= 2 && rc == MPI_SUCCESS; i += 2)
        if (chain_has(c, chain_keys[i]))
            rc = MPI_Comm_delete_attr(c, chain_keys[i]);
    if (rc == MPI_SUCCESS && chain_extra_key != MPI_KEYVAL_INVALID)
        rc = MPI_Comm_set_attr(c, chain_extra_key, (void *)(MPI_Aint)99);
    return rc;
}

static void delete_callback_deletes_others(void)
{
    for (int i = 0; i < CHAIN; i++)
        MPI_MUST(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, chain_delete, &chain_keys[i], NULL));
    MPI_MUST(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, chain_delete, &chain_extra_key, NULL));
    MPI_Comm a;
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &a));

    /* MPI_Comm_delete_attr: the callback deletes keys 0 and 2, sets the extra. */
    chain_set(a);
    chain_deletes = 0;
    MPI_MUST(MPI_Comm_delete_attr(a, chain_keys[1]));
    CHECK(chain_deletes == 3);
    CHECK(!chain_has(a, chain_keys[0]) && !chain_has(a, chain_keys[1]) &&
          !chain_has(a, chain_keys[2]));
    CHECK(chain_has(a, chain_keys[3]) && chain_has(a, chain_extra_key));
    MPI_MUST(MPI_Comm_delete_attr(a, chain_keys[3]));
    MPI_MUST(MPI_Comm_delete_attr(a, chain_extra_key));
    MPI_MUST(MPI_Comm_free(&a));

    /* MPI_Comm_set_attr over key 1 runs its callback on the old value. */
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    chain_set(a);
    chain_deletes = 0;
    MPI_MUST(MPI_Comm_set_attr(a, chain_keys[1], (void *)(MPI_Aint)7));
    CHECK(chain_deletes == 3);
    void *v = NULL;
    int flag = 0;
    MPI_MUST(MPI_Comm_get_attr(a, chain_keys[1], &v, &flag));
    CHECK(flag && (MPI_Aint)v == 7);
    CHECK(!chain_has(a, chain_keys[0]) && !chain_has(a, chain_keys[2]));
    MPI_MUST(MPI_Comm_free(&a));

    /* MPI_Comm_free deletes everything, whatever the callbacks do meanwhile. */
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    chain_set(a);
    chain_deletes = 0;
    MPI_MUST(MPI_Comm_free(&a));
    CHECK(chain_deletes == CHAIN + 1); /* the four keys and the extra one set meanwhile */

    /* At MPI_Finalize, MPI_COMM_SELF's attributes go the same way (no extra). */
    chain_extra_key = MPI_KEYVAL_INVALID;
    chain_set(MPI_COMM_SELF);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    comm_keyval_freed();
    type_keyval_freed();
    type_dup_copy_fails();
    comm_dup_many();
    delete_callback_deletes_others();
    return mt_finish("test_attr_keyval");
}
