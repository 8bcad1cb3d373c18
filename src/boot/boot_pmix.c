/* The PMIx backend: a process started by Open MPI's mpirun, srun --mpi=pmix or
 * PRRTE takes its rank, the job size and the key-value store from the PMIx
 * server of its launcher, so weft needs no weftrun there.
 *
 * weft's store rule is kept exactly: a put becomes visible, even to its own
 * rank, only when the next fence completes. PMIx alone does not give that: a
 * commit reaches the local server at once, so a rank still reading after fence k
 * could see a value put for fence k+1, and a client may keep a value it fetched.
 * So puts wait here, and fence number k publishes every key this rank ever put,
 * with its latest value, as "weft.<k>.<key>"; a get after fence k asks for
 * "weft.<k>.<key>". Each epoch's names are new, so nothing early or stale can
 * be read. Bootstrap stores a handful of keys per rank and fences a few times,
 * so publishing them again at each fence costs nothing that matters.
 *
 * A get must find a key without knowing who put it:
 * the engine's keys end in the rank that owns them ("addr.shm.3"), so that rank
 * is asked first, then every rank in order (the first that has it wins, the
 * lowest rank if several put the same key). Gets ask with PMIX_IMMEDIATE: a key
 * nobody put is "not found" at once, never a wait for data that will not come.
 */
#include <inttypes.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "weft/weft.h"
#include "boot/boot_int.h"
#include "boot/boot_proto.h"
#include "util/log.h"

#define KEY_PREFIX "weft."

/* "weft.<epoch>.<key>": the longest name fits PMIX_MAX_KEYLEN. */
#define PKEY_MAX (sizeof KEY_PREFIX + 11 + WEFT_BOOT_KEY_MAX)
_Static_assert(PKEY_MAX <= PMIX_MAX_KEYLEN, "PMIx key names are long enough");

/* A key this rank put, with its latest value. */
typedef struct own_key {
    char key[WEFT_BOOT_KEY_MAX + 1];
    void *value;
    size_t len;
} own_key_t;

struct weft_boot_pmix {
    pmix_proc_t me;
    int size;
    uint32_t epoch; /* fences completed */
    own_key_t *keys;
    size_t nkeys, cap;
};

int weft__boot_pmix_detected(void)
{
    return getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK") && !getenv("WEFT_BOOT_ADDR");
}

static int status_of(pmix_status_t rc)
{
    switch (rc) {
    case PMIX_SUCCESS:
        return WEFT_OK;
    case PMIX_ERR_NOT_FOUND:
        return WEFT_ENOTFOUND;
    case PMIX_ERR_PROC_ABORTED:
    case PMIX_ERR_PROC_ABORTING:
    case PMIX_ERR_PROC_ABORTED_BY_SIG:
    case PMIX_ERR_PROC_TERM_WO_SYNC:
    case PMIX_ERR_LOST_CONNECTION:
    case PMIX_ERR_UNREACH:
        return WEFT_EPEERDEAD;
    default:
        return WEFT_EBOOT;
    }
}

/* The namespace as a job id: [A-Za-z0-9_-] only; a long one keeps its head and
 * gets a hash of the whole, so two namespaces never share an id by truncation. */
static void job_id_of(const char *ns, char *out)
{
    size_t n = strlen(ns);
    size_t keep = n <= WEFT_BOOT_JOBID_MAX ? n : WEFT_BOOT_JOBID_MAX - 17;
    for (size_t i = 0; i < keep; i++) {
        char c = ns[i];
        out[i] =
            ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')
                ? c
                : '_';
    }
    out[keep] = 0;
    if (keep < n) {
        uint64_t h = 1469598103934665603ull; /* FNV-1a */
        for (size_t i = 0; i < n; i++)
            h = (h ^ (uint8_t)ns[i]) * 1099511628211ull;
        snprintf(out + keep, 18, "-%016" PRIx64, h);
    }
    if (!out[0])
        snprintf(out, WEFT_BOOT_JOBID_MAX + 1, "pmix");
}

static int get_bytes(const pmix_proc_t *proc, const char *key, void *value, size_t *len)
{
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &yes, PMIX_BOOL);
    pmix_value_t *v = NULL;
    pmix_status_t prc = PMIx_Get(proc, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (prc != PMIX_SUCCESS)
        return prc == PMIX_ERR_NOT_FOUND || prc == PMIX_ERR_NOT_AVAILABLE ? WEFT_ENOTFOUND
                                                                          : status_of(prc);
    int rc = WEFT_OK;
    if (v->type != PMIX_BYTE_OBJECT) {
        weft_log_error("boot: PMIx key %s is not a byte object", key);
        rc = WEFT_EBOOT;
    } else if (v->data.bo.size > *len) {
        *len = v->data.bo.size;
        rc = WEFT_ENOBUFS;
    } else {
        if (v->data.bo.size)
            memcpy(value, v->data.bo.bytes, v->data.bo.size);
        *len = v->data.bo.size;
    }
    PMIX_VALUE_RELEASE(v);
    return rc;
}

static int put_bytes(const char *key, const void *value, size_t len)
{
    pmix_value_t v;
    pmix_byte_object_t bo = {.bytes = (char *)value, .size = len};
    PMIX_VALUE_CONSTRUCT(&v);
    /* PMIx copies the value: bo stays ours. */
    pmix_status_t prc = PMIx_Value_load(&v, &bo, PMIX_BYTE_OBJECT);
    if (prc == PMIX_SUCCESS)
        prc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    if (prc != PMIX_SUCCESS) {
        weft_log_error("boot: PMIx_Put %s: %s", key, PMIx_Error_string(prc));
        return status_of(prc);
    }
    return WEFT_OK;
}

static int fence_collect(void)
{
    pmix_status_t prc = PMIx_Commit();
    if (prc == PMIX_SUCCESS) {
        pmix_info_t info;
        bool yes = true;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        prc = PMIx_Fence(NULL, 0, &info, 1); /* NULL: every process of our namespace */
        PMIX_INFO_DESTRUCT(&info);
    }
    if (prc != PMIX_SUCCESS) {
        weft_log_error("boot: PMIx fence: %s", PMIx_Error_string(prc));
        return status_of(prc) == WEFT_ENOTFOUND ? WEFT_EBOOT : status_of(prc);
    }
    return WEFT_OK;
}

int weft__boot_pmix_init(weft_boot_pmix_t **out, int *rank, int *size, char *job_id,
                         uint8_t secret[WEFT_BOOT_SECRET_LEN])
{
    weft_boot_pmix_t *p = calloc(1, sizeof *p);
    if (!p)
        return WEFT_ENOMEM;
    pmix_status_t prc = PMIx_Init(&p->me, NULL, 0);
    if (prc != PMIX_SUCCESS) {
        weft_log_error("boot: PMIx_Init: %s", PMIx_Error_string(prc));
        free(p);
        return WEFT_EBOOT;
    }
    int rc = WEFT_EBOOT;
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, p->me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    prc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v);
    if (prc != PMIX_SUCCESS || v->type != PMIX_UINT32 || v->data.uint32 == 0 ||
        v->data.uint32 > INT32_MAX || p->me.rank >= v->data.uint32) {
        weft_log_error("boot: PMIx gives no usable job size: %s", PMIx_Error_string(prc));
        if (v)
            PMIX_VALUE_RELEASE(v);
        goto err_fini;
    }
    p->size = (int)v->data.uint32;
    PMIX_VALUE_RELEASE(v);

    /* The secret: rank 0 draws it, the others read it after one fence. PMIx keeps
     * the job's data to the job's processes. */
    static const char secret_key[] = KEY_PREFIX "job-secret";
    if (p->me.rank == 0) {
        if (getrandom(secret, WEFT_BOOT_SECRET_LEN, 0) != WEFT_BOOT_SECRET_LEN) {
            rc = WEFT_ESYS;
            goto err_fini;
        }
        if ((rc = put_bytes(secret_key, secret, WEFT_BOOT_SECRET_LEN)) != WEFT_OK)
            goto err_fini;
    }
    if ((rc = fence_collect()) != WEFT_OK)
        goto err_fini;
    if (p->me.rank != 0) {
        pmix_proc_t root;
        PMIX_LOAD_PROCID(&root, p->me.nspace, 0);
        size_t len = WEFT_BOOT_SECRET_LEN;
        rc = get_bytes(&root, secret_key, secret, &len);
        if (rc == WEFT_OK && len != WEFT_BOOT_SECRET_LEN)
            rc = WEFT_EBOOT;
        if (rc != WEFT_OK) {
            weft_log_error("boot: no job secret from rank 0 through PMIx: %s", weft_strerror(rc));
            goto err_fini;
        }
    }
    job_id_of(p->me.nspace, job_id);
    *rank = (int)p->me.rank;
    *size = p->size;
    *out = p;
    return WEFT_OK;

err_fini:
    PMIx_Finalize(NULL, 0);
    free(p);
    return rc;
}

int weft__boot_pmix_put(weft_boot_pmix_t *p, const char *key, const void *value, size_t len)
{
    own_key_t *e = NULL;
    for (size_t i = 0; i < p->nkeys && !e; i++)
        if (!strcmp(p->keys[i].key, key))
            e = &p->keys[i];
    void *copy = malloc(len ? len : 1);
    if (!copy)
        return WEFT_ENOMEM;
    if (len)
        memcpy(copy, value, len);
    if (!e) {
        if (p->nkeys == p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 16;
            own_key_t *n = realloc(p->keys, cap * sizeof *n);
            if (!n) {
                free(copy);
                return WEFT_ENOMEM;
            }
            p->keys = n;
            p->cap = cap;
        }
        e = &p->keys[p->nkeys++];
        snprintf(e->key, sizeof e->key, "%s", key);
    } else {
        free(e->value);
    }
    e->value = copy;
    e->len = len;
    return WEFT_OK;
}

int weft__boot_pmix_fence(weft_boot_pmix_t *p)
{
    char pkey[PKEY_MAX];
    int rc = WEFT_OK;
    for (size_t i = 0; i < p->nkeys && rc == WEFT_OK; i++) {
        snprintf(pkey, sizeof pkey, KEY_PREFIX "%" PRIu32 ".%s", p->epoch + 1, p->keys[i].key);
        rc = put_bytes(pkey, p->keys[i].value, p->keys[i].len);
    }
    if (rc == WEFT_OK)
        rc = fence_collect();
    if (rc == WEFT_OK)
        p->epoch++;
    return rc;
}

/* The rank a key names by its last dot-separated part, or -1. */
static int key_owner(const char *key, int size)
{
    const char *dot = strrchr(key, '.');
    if (!dot || !dot[1])
        return -1;
    long r = 0;
    for (const char *c = dot + 1; *c; c++) {
        if (*c < '0' || *c > '9' || r > size)
            return -1;
        r = r * 10 + (*c - '0');
    }
    return r < size ? (int)r : -1;
}

int weft__boot_pmix_get(weft_boot_pmix_t *p, const char *key, void *value, size_t *len)
{
    char pkey[PKEY_MAX];
    snprintf(pkey, sizeof pkey, KEY_PREFIX "%" PRIu32 ".%s", p->epoch, key);
    int owner = key_owner(key, p->size);
    pmix_proc_t proc;
    PMIX_LOAD_NSPACE(proc.nspace, p->me.nspace);
    for (int i = -1; i < p->size; i++) {
        int r = i < 0 ? owner : i;
        if (r < 0 || (i >= 0 && r == owner))
            continue;
        proc.rank = (pmix_rank_t)r;
        size_t l = *len;
        int rc = get_bytes(&proc, pkey, value, &l);
        if (rc != WEFT_ENOTFOUND) {
            if (rc == WEFT_OK || rc == WEFT_ENOBUFS)
                *len = l;
            return rc;
        }
    }
    return WEFT_ENOTFOUND;
}

int weft__boot_pmix_abort(weft_boot_pmix_t *p, int code, const char *msg)
{
    /* Some PMIx servers (Open MPI 4.1's) end the job without printing the
     * message: say it ourselves first, so the user learns why. */
    fprintf(stderr, "weft: job aborted with status %d: %s\n", code, msg ? msg : "");
    fflush(stderr);
    /* NULL procs: the whole namespace. PMIx_Abort may not return. */
    pmix_status_t prc = PMIx_Abort(code, msg, NULL, 0);
    return prc == PMIX_SUCCESS ? WEFT_OK : status_of(prc);
}

/* PMIx_Spawn: the launcher starts the job in a namespace of its own, where
 * its processes join through PMIx as any (their MPI then finds its parents
 * through the environment given here). */
int weft__boot_pmix_spawn(weft_boot_pmix_t *p, const weft_boot_app_t *apps, int napps,
                          const char *hosts, const char *hostfile, const char *wdir)
{
    pmix_app_t *pa = calloc((size_t)napps, sizeof *pa);
    pmix_info_t *where = NULL;
    size_t nwhere = (hosts ? 1 : 0) + (hostfile ? 1 : 0);
    if (!pa || (nwhere && !(where = calloc(nwhere, sizeof *where)))) {
        free(pa);
        return WEFT_ENOMEM;
    }
    size_t k = 0;
    if (hosts)
        PMIX_INFO_LOAD(&where[k++], PMIX_HOST, hosts, PMIX_STRING);
    if (hostfile)
        PMIX_INFO_LOAD(&where[k++], PMIX_HOSTFILE, hostfile, PMIX_STRING);
    for (int a = 0; a < napps; a++) {
        /* Borrowed strings: PMIx_Spawn copies what it keeps. */
        pa[a].cmd = apps[a].argv[0];
        pa[a].argv = (char **)apps[a].argv;
        pa[a].env = (char **)apps[a].env;
        pa[a].cwd = (char *)wdir;
        pa[a].maxprocs = apps[a].np;
        pa[a].info = where;
        pa[a].ninfo = nwhere;
    }
    char ns[PMIX_MAX_NSLEN + 1] = "";
    pmix_status_t prc = PMIx_Spawn(NULL, 0, pa, (size_t)napps, ns);
    for (size_t i = 0; i < nwhere; i++)
        PMIX_INFO_DESTRUCT(&where[i]);
    free(where);
    free(pa);
    if (prc == PMIX_ERR_NOT_SUPPORTED)
        return WEFT_EUNSUPPORTED;
    if (prc != PMIX_SUCCESS) {
        weft_log_error("boot: PMIx_Spawn: %s", PMIx_Error_string(prc));
        return status_of(prc);
    }
    weft_log_info("boot: PMIx_Spawn started namespace %s", ns);
    return WEFT_OK;
}

void weft__boot_pmix_fini(weft_boot_pmix_t *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nkeys; i++)
        free(p->keys[i].value);
    free(p->keys);
    PMIx_Finalize(NULL, 0);
    free(p);
}
