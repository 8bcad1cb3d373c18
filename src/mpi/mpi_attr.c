/* Keyvals and attributes on communicators, datatypes and windows (MPI 3.1 §6.7),
 * with their copy and delete callbacks, and the predefined attributes of
 * MPI_COMM_WORLD (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_APPNUM,
 * MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE).
 */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpi/mpi_win_int.h"

int weft_mpi_unweighted_obj, weft_mpi_weights_empty_obj;

enum { KV_COMM, KV_TYPE, KV_WIN };

typedef struct keyval {
    int kind;
    bool in_use;
    bool freed; /* MPI_*_free_keyval called; goes when no attribute uses it */
    int users;  /* attributes holding it */
    void *copy_fn;
    void *delete_fn;
    void *extra_state;
} keyval_t;

static keyval_t *keyvals;
static int nkeyvals, capkeyvals;

/* Keyval handles are small positive integers: index + 1. */
static keyval_t *kv_get(int keyval, int kind)
{
    if (keyval < 1 || keyval > nkeyvals)
        return NULL;
    keyval_t *k = &keyvals[keyval - 1];
    return k->in_use && !k->freed && k->kind == kind ? k : NULL;
}

/* A keyval that attributes still use, freed or not: MPI_*_delete_attr takes
 * it, since deleting those attributes is how a program lets a freed keyval go
 * (MPI 3.1 §6.7.2). */
static keyval_t *kv_get_held(int keyval, int kind)
{
    if (keyval < 1 || keyval > nkeyvals)
        return NULL;
    keyval_t *k = &keyvals[keyval - 1];
    return k->in_use && k->kind == kind ? k : NULL;
}

static void kv_unuse(int keyval)
{
    keyval_t *k = &keyvals[keyval - 1];
    if (--k->users == 0 && k->freed)
        k->in_use = false;
}

static int kv_create(int kind, void *copy_fn, void *delete_fn, int *keyval, void *extra,
                     const char *fn)
{
    if (!keyval)
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    weft_lock_acquire(&weft__mpi.lock);
    int slot = -1;
    for (int i = 0; i < nkeyvals; i++)
        if (!keyvals[i].in_use) {
            slot = i;
            break;
        }
    if (slot < 0) {
        if (nkeyvals == capkeyvals) {
            int cap = capkeyvals ? 2 * capkeyvals : 16;
            keyval_t *t = realloc(keyvals, (size_t)cap * sizeof *t);
            if (!t) {
                weft_lock_release(&weft__mpi.lock);
                return weft__mpi_err(NULL, MPI_ERR_NO_MEM, fn);
            }
            keyvals = t;
            capkeyvals = cap;
        }
        slot = nkeyvals++;
    }
    keyvals[slot] = (keyval_t){.kind = kind,
                               .in_use = true,
                               .copy_fn = copy_fn,
                               .delete_fn = delete_fn,
                               .extra_state = extra};
    weft_lock_release(&weft__mpi.lock);
    *keyval = slot + 1;
    return MPI_SUCCESS;
}

static int kv_free(int kind, int *keyval, const char *fn)
{
    if (!keyval)
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    weft_lock_acquire(&weft__mpi.lock);
    keyval_t *k = kv_get(*keyval, kind);
    if (!k) {
        weft_lock_release(&weft__mpi.lock);
        return weft__mpi_err(NULL, MPI_ERR_KEYVAL, fn);
    }
    k->freed = true;
    if (k->users == 0)
        k->in_use = false;
    weft_lock_release(&weft__mpi.lock);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* ---- attribute lists ---- */

static weft_mpi_attr_t **find(weft_mpi_attr_t **list, int keyval)
{
    for (weft_mpi_attr_t **pp = list; *pp; pp = &(*pp)->next)
        if ((*pp)->keyval == keyval)
            return pp;
    return NULL;
}

/* Take attribute *pp out of its list and return it. A delete callback may set or
 * delete other attributes of the same object (MPI 3.1 §6.7.2 allows it), so
 * the attribute it is called for leaves the list first: no pointer into the
 * list is held across the callback, and the callback cannot reach it again. */
static weft_mpi_attr_t *unlink_attr(weft_mpi_attr_t **pp)
{
    weft_mpi_attr_t *a = *pp;
    *pp = a->next;
    a->next = NULL;
    return a;
}

static void push_attr(weft_mpi_attr_t **list, weft_mpi_attr_t *a)
{
    a->next = *list;
    *list = a;
}

/* Call the delete callback of attribute a of object obj (a comm, type or win). */
static int call_delete(int kind, void *obj, weft_mpi_attr_t *a)
{
    keyval_t *k = &keyvals[a->keyval - 1];
    if (!k->delete_fn)
        return MPI_SUCCESS;
    switch (kind) {
    case KV_COMM:
        return ((MPI_Comm_delete_attr_function *)k->delete_fn)(obj, a->keyval, a->value,
                                                               k->extra_state);
    case KV_TYPE:
        return ((MPI_Type_delete_attr_function *)k->delete_fn)(obj, a->keyval, a->value,
                                                               k->extra_state);
    default:
        return ((MPI_Win_delete_attr_function *)k->delete_fn)(obj, a->keyval, a->value,
                                                              k->extra_state);
    }
}

/* Set attribute keyval of obj. held: the keyval is held by the attribute being
 * copied, so it is valid even when freed: a freed keyval lives on in the
 * attributes that use it, and those are copied by a dup (MPI 3.1 §6.7.2). */
static int attr_set(int kind, void *obj, weft_mpi_attr_t **list, int keyval, void *value, bool held)
{
    /* Callbacks may call MPI (even on this object), so they run unlocked; the
     * standard makes concurrent attribute calls on one object the user's
     * problem. They may create keyvals and so move the table: hold no pointer
     * into it across them. */
    if (!held) {
        weft_lock_acquire(&weft__mpi.lock);
        keyval_t *k = kv_get(keyval, kind);
        weft_lock_release(&weft__mpi.lock);
        if (!k)
            return MPI_ERR_KEYVAL;
    }
    weft_mpi_attr_t **pp = find(list, keyval);
    if (pp) {
        weft_mpi_attr_t *a = unlink_attr(pp);
        int rc = call_delete(kind, obj, a);
        if (rc == MPI_SUCCESS)
            a->value = value;
        push_attr(list, a);
        return rc;
    }
    weft_mpi_attr_t *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    a->keyval = keyval;
    a->value = value;
    push_attr(list, a);
    weft_lock_acquire(&weft__mpi.lock);
    keyvals[keyval - 1].users++;
    weft_lock_release(&weft__mpi.lock);
    return MPI_SUCCESS;
}

static int attr_delete(int kind, void *obj, weft_mpi_attr_t **list, int keyval)
{
    weft_lock_acquire(&weft__mpi.lock);
    keyval_t *k = kv_get_held(keyval, kind);
    weft_lock_release(&weft__mpi.lock);
    if (!k)
        return MPI_ERR_KEYVAL;
    weft_mpi_attr_t **pp = find(list, keyval);
    if (!pp)
        return MPI_ERR_KEYVAL;
    weft_mpi_attr_t *a = unlink_attr(pp);
    int rc = call_delete(kind, obj, a);
    if (rc) {
        push_attr(list, a); /* a failed callback leaves the attribute set */
        return rc;
    }
    free(a);
    weft_lock_acquire(&weft__mpi.lock);
    kv_unuse(keyval);
    weft_lock_release(&weft__mpi.lock);
    return MPI_SUCCESS;
}

static int delete_all(int kind, void *obj, weft_mpi_attr_t **list)
{
    /* Delete in reverse order of setting (§8.7.1 asks it for MPI_COMM_SELF at
     * finalize); the list is kept newest first, so walk it as it is. */
    while (*list) {
        weft_mpi_attr_t *a = unlink_attr(list);
        int rc = call_delete(kind, obj, a);
        if (rc) {
            push_attr(list, a);
            return rc;
        }
        weft_lock_acquire(&weft__mpi.lock);
        kv_unuse(a->keyval);
        weft_lock_release(&weft__mpi.lock);
        free(a);
    }
    return MPI_SUCCESS;
}

static int copy_all(int kind, void *from_obj, weft_mpi_attr_t *from, void *to_obj,
                    weft_mpi_attr_t **to)
{
    /* Copy oldest first so the new list keeps the same order: the list is
     * newest first, so walk it backwards through an array of every entry. */
    weft_mpi_attr_t *local[64], **stack = local;
    int n = 0, rc = MPI_SUCCESS;
    for (weft_mpi_attr_t *a = from; a; a = a->next)
        n++;
    if (n > (int)(sizeof local / sizeof *local) && !(stack = malloc(sizeof *stack * (size_t)n)))
        return MPI_ERR_NO_MEM;
    n = 0;
    for (weft_mpi_attr_t *a = from; a; a = a->next)
        stack[n++] = a;
    while (rc == MPI_SUCCESS && n-- > 0) {
        weft_mpi_attr_t *a = stack[n];
        keyval_t *k = &keyvals[a->keyval - 1];
        if (!k->copy_fn)
            continue;
        void *out = NULL;
        int flag = 0;
        switch (kind) {
        case KV_COMM:
            rc = ((MPI_Comm_copy_attr_function *)k->copy_fn)(from_obj, a->keyval, k->extra_state,
                                                             a->value, &out, &flag);
            break;
        case KV_TYPE:
            rc = ((MPI_Type_copy_attr_function *)k->copy_fn)(from_obj, a->keyval, k->extra_state,
                                                             a->value, &out, &flag);
            break;
        default:
            rc = ((MPI_Win_copy_attr_function *)k->copy_fn)(from_obj, a->keyval, k->extra_state,
                                                            a->value, &out, &flag);
            break;
        }
        if (rc == MPI_SUCCESS && flag)
            rc = attr_set(kind, to_obj, to, a->keyval, out, true);
    }
    if (stack != local)
        free(stack);
    return rc;
}

int weft__mpi_attrs_copy(MPI_Comm from, MPI_Comm to)
{
    return copy_all(KV_COMM, from, from->attrs, to, &to->attrs);
}

int weft__mpi_attrs_delete_all(MPI_Comm comm)
{
    return delete_all(KV_COMM, comm, &comm->attrs);
}

int weft__mpi_type_attrs_copy(MPI_Datatype from, MPI_Datatype to)
{
    return copy_all(KV_TYPE, from, from->attrs, to, &to->attrs);
}

int weft__mpi_type_attrs_delete_all(MPI_Datatype t)
{
    return delete_all(KV_TYPE, t, &t->attrs);
}

/* ---- predefined callbacks ---- */

int weft_mpi_null_copy_fn(MPI_Comm c, int k, void *e, void *in, void *out, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int weft_mpi_dup_fn(MPI_Comm c, int k, void *e, void *in, void *out, int *flag)
{
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int weft_mpi_null_delete_fn(MPI_Comm c, int k, void *v, void *e)
{
    return MPI_SUCCESS;
}

int weft_mpi_type_null_copy_fn(MPI_Datatype t, int k, void *e, void *in, void *out, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int weft_mpi_type_dup_fn(MPI_Datatype t, int k, void *e, void *in, void *out, int *flag)
{
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int weft_mpi_type_null_delete_fn(MPI_Datatype t, int k, void *v, void *e)
{
    return MPI_SUCCESS;
}

int weft_mpi_win_null_copy_fn(MPI_Win w, int k, void *e, void *in, void *out, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int weft_mpi_win_dup_fn(MPI_Win w, int k, void *e, void *in, void *out, int *flag)
{
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int weft_mpi_win_null_delete_fn(MPI_Win w, int k, void *v, void *e)
{
    return MPI_SUCCESS;
}

int weft_mpi_conversion_fn_null(void *userbuf, MPI_Datatype t, int count, void *filebuf,
                                MPI_Offset position, void *extra)
{
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

/* ---- communicators ---- */

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                            MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                            void *extra_state)
{
    return kv_create(KV_COMM, (void *)copy_fn, (void *)delete_fn, keyval, extra_state,
                     "MPI_Comm_create_keyval");
}
WEFT_MPI_ALIAS(Comm_create_keyval)

int PMPI_Comm_free_keyval(int *keyval)
{
    return kv_free(KV_COMM, keyval, "MPI_Comm_free_keyval");
}
WEFT_MPI_ALIAS(Comm_free_keyval)

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Comm_set_attr");
    rc = attr_set(KV_COMM, comm, &comm->attrs, keyval, attribute_val, false);
    return rc ? weft__mpi_err(comm, rc, "MPI_Comm_set_attr") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_set_attr)

/* Values of the predefined attributes: the standard hands out pointers. */
static int attr_tag_ub = INT_MAX, attr_host = MPI_PROC_NULL, attr_io = MPI_ANY_SOURCE,
           attr_wtime_global = 0, attr_appnum = 0, attr_universe, attr_lastused;

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Comm_get_attr");
    if (!attribute_val || !flag)
        return weft__mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_get_attr");
    int *pre = NULL;
    switch (keyval) {
    case MPI_TAG_UB:
        pre = &attr_tag_ub;
        break;
    case MPI_HOST:
        pre = &attr_host;
        break;
    case MPI_IO:
        pre = &attr_io;
        break;
    case MPI_WTIME_IS_GLOBAL:
        pre = &attr_wtime_global;
        break;
    case MPI_APPNUM: {
        /* Which program of the command line (weftrun's ':', or
         * MPI_Comm_spawn_multiple) this rank runs. */
        const char *e = getenv("WEFT_APPNUM");
        attr_appnum = e ? atoi(e) : 0;
        pre = &attr_appnum;
        break;
    }
    case MPI_UNIVERSE_SIZE: {
        /* The slots weftrun was given (or this machine's cpus): how many
         * processes MPI_Comm_spawn may start beside the job. */
        const char *e = getenv("WEFT_UNIVERSE_SIZE");
        long u = e ? atol(e) : sysconf(_SC_NPROCESSORS_ONLN);
        attr_universe = u > weft__mpi.world_size && u < INT_MAX ? (int)u : weft__mpi.world_size;
        pre = &attr_universe;
        break;
    }
    case MPI_LASTUSEDCODE:
        attr_lastused = weft__mpi_err_lastused();
        pre = &attr_lastused;
        break;
    default:
        break;
    }
    if (pre) {
        /* Predefined attributes are cached on every communicator (§8.1.1
         * says MPI_COMM_WORLD; copies by dup inherit them). */
        *(void **)attribute_val = pre;
        *flag = 1;
        return MPI_SUCCESS;
    }
    weft_lock_acquire(&weft__mpi.lock);
    keyval_t *k = kv_get(keyval, KV_COMM);
    weft_lock_release(&weft__mpi.lock);
    if (!k)
        return weft__mpi_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
    weft_mpi_attr_t **pp = find(&comm->attrs, keyval);
    *flag = pp != NULL;
    if (pp)
        *(void **)attribute_val = (*pp)->value;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_get_attr)

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    int rc = weft__mpi_check_comm(comm);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Comm_delete_attr");
    rc = attr_delete(KV_COMM, comm, &comm->attrs, keyval);
    return rc ? weft__mpi_err(comm, rc, "MPI_Comm_delete_attr") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Comm_delete_attr)

/* The MPI-1 names of the same (deprecated, still in MPI 3.1). */
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return kv_create(KV_COMM, (void *)copy_fn, (void *)delete_fn, keyval, extra_state,
                     "MPI_Keyval_create");
}
WEFT_MPI_ALIAS(Keyval_create)

int PMPI_Keyval_free(int *keyval)
{
    return kv_free(KV_COMM, keyval, "MPI_Keyval_free");
}
WEFT_MPI_ALIAS(Keyval_free)

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}
WEFT_MPI_ALIAS(Attr_put)

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
WEFT_MPI_ALIAS(Attr_get)

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return PMPI_Comm_delete_attr(comm, keyval);
}
WEFT_MPI_ALIAS(Attr_delete)

/* ---- datatypes ---- */

static int check_type_handle(MPI_Datatype t)
{
    return t && t->magic == WEFT_MPI_MAGIC_TYPE && t != MPI_DATATYPE_NULL ? MPI_SUCCESS
                                                                          : MPI_ERR_TYPE;
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
                            MPI_Type_delete_attr_function *delete_fn, int *keyval,
                            void *extra_state)
{
    return kv_create(KV_TYPE, (void *)copy_fn, (void *)delete_fn, keyval, extra_state,
                     "MPI_Type_create_keyval");
}
WEFT_MPI_ALIAS(Type_create_keyval)

int PMPI_Type_free_keyval(int *keyval)
{
    return kv_free(KV_TYPE, keyval, "MPI_Type_free_keyval");
}
WEFT_MPI_ALIAS(Type_free_keyval)

int PMPI_Type_set_attr(MPI_Datatype t, int keyval, void *attribute_val)
{
    int rc = check_type_handle(t);
    if (!rc)
        rc = attr_set(KV_TYPE, t, &t->attrs, keyval, attribute_val, false);
    return rc ? weft__mpi_err(NULL, rc, "MPI_Type_set_attr") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_set_attr)

int PMPI_Type_get_attr(MPI_Datatype t, int keyval, void *attribute_val, int *flag)
{
    int rc = check_type_handle(t);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Type_get_attr");
    if (!attribute_val || !flag)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Type_get_attr");
    weft_lock_acquire(&weft__mpi.lock);
    keyval_t *k = kv_get(keyval, KV_TYPE);
    weft_lock_release(&weft__mpi.lock);
    if (!k)
        return weft__mpi_err(NULL, MPI_ERR_KEYVAL, "MPI_Type_get_attr");
    weft_mpi_attr_t **pp = find(&t->attrs, keyval);
    *flag = pp != NULL;
    if (pp)
        *(void **)attribute_val = (*pp)->value;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype t, int keyval)
{
    int rc = check_type_handle(t);
    if (!rc)
        rc = attr_delete(KV_TYPE, t, &t->attrs, keyval);
    return rc ? weft__mpi_err(NULL, rc, "MPI_Type_delete_attr") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Type_delete_attr)

/* ---- windows ---- */

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                           MPI_Win_delete_attr_function *delete_fn, int *keyval, void *extra_state)
{
    return kv_create(KV_WIN, (void *)copy_fn, (void *)delete_fn, keyval, extra_state,
                     "MPI_Win_create_keyval");
}
WEFT_MPI_ALIAS(Win_create_keyval)

int PMPI_Win_free_keyval(int *keyval)
{
    return kv_free(KV_WIN, keyval, "MPI_Win_free_keyval");
}
WEFT_MPI_ALIAS(Win_free_keyval)

int PMPI_Win_set_attr(MPI_Win win, int keyval, void *attribute_val)
{
    int rc = weft__win_check(win);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_set_attr");
    if (keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL)
        return weft__mpi_err_win(win, MPI_ERR_KEYVAL, "MPI_Win_set_attr");
    rc = attr_set(KV_WIN, win, &win->attrs, keyval, attribute_val, false);
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_set_attr") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_set_attr)

int PMPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    int rc = weft__win_check(win);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_get_attr");
    if (!attribute_val || !flag)
        return weft__mpi_err_win(win, MPI_ERR_ARG, "MPI_Win_get_attr");
    /* The predefined ones (§11.2.6): the base itself, pointers to the rest,
     * kept in the window so that they live as long as it. */
    void *pre = NULL;
    static const int model = MPI_WIN_UNIFIED;
    switch (keyval) {
    case MPI_WIN_BASE:
        pre = win->base;
        break;
    case MPI_WIN_SIZE:
        pre = &win->bytes;
        break;
    case MPI_WIN_DISP_UNIT:
        pre = &win->disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        pre = &win->flavor;
        break;
    case MPI_WIN_MODEL:
        pre = (void *)&model;
        break;
    default:
        break;
    }
    if (keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL) {
        *(void **)attribute_val = pre;
        *flag = 1;
        return MPI_SUCCESS;
    }
    weft_lock_acquire(&weft__mpi.lock);
    keyval_t *k = kv_get(keyval, KV_WIN);
    weft_lock_release(&weft__mpi.lock);
    if (!k)
        return weft__mpi_err_win(win, MPI_ERR_KEYVAL, "MPI_Win_get_attr");
    weft_mpi_attr_t **pp = find(&win->attrs, keyval);
    *flag = pp != NULL;
    if (pp)
        *(void **)attribute_val = (*pp)->value;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_get_attr)

int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
    int rc = weft__win_check(win);
    if (rc)
        return weft__mpi_err_win(win, rc, "MPI_Win_delete_attr");
    rc = attr_delete(KV_WIN, win, &win->attrs, keyval);
    return rc ? weft__mpi_err_win(win, rc, "MPI_Win_delete_attr") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Win_delete_attr)

int weft__win_attrs_delete_all(MPI_Win win)
{
    return delete_all(KV_WIN, win, &win->attrs);
}
