/* MPI_Info (MPI 3.1 §9): an ordered list of (key, value) strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/mpi_int.h"

struct weft_mpi_info weft_mpi_info_null = {.magic = WEFT_MPI_MAGIC_INFO, .predefined = true};
/* MPI_INFO_ENV: how this process was started (§8.7.2), filled at first use. */
struct weft_mpi_info weft_mpi_info_env = {.magic = WEFT_MPI_MAGIC_INFO, .predefined = true};

static bool valid(MPI_Info info)
{
    return info && info->magic == WEFT_MPI_MAGIC_INFO && info != MPI_INFO_NULL;
}

static int find(MPI_Info info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (!strcmp(info->keys[i], key))
            return i;
    return -1;
}

static int check_key(const char *key)
{
    if (!key)
        return MPI_ERR_INFO_KEY;
    size_t len = strlen(key);
    return len == 0 || len > MPI_MAX_INFO_KEY ? MPI_ERR_INFO_KEY : MPI_SUCCESS;
}

static int set(MPI_Info info, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = find(info, key);
    if (i >= 0) {
        free(info->values[i]);
        info->values[i] = v;
        return MPI_SUCCESS;
    }
    if (info->n == info->cap) {
        int cap = info->cap ? 2 * info->cap : 8;
        char **k = realloc(info->keys, (size_t)cap * sizeof *k);
        if (k)
            info->keys = k;
        char **vv = realloc(info->values, (size_t)cap * sizeof *vv);
        if (vv)
            info->values = vv;
        if (!k || !vv) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        info->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    info->keys[info->n] = k;
    info->values[info->n] = v;
    info->n++;
    return MPI_SUCCESS;
}

/* The job's size as the launcher gave it, so known before MPI_Init too: the
 * world's size, else weftrun's WEFT_SIZE, else 1 for a process started alone;
 * false under a PMIx launcher before MPI_Init (it tells only at init). */
static bool env_maxprocs(char *n, size_t cap)
{
    int size = weft__mpi.world_size;
    const char *s = getenv("WEFT_SIZE");
    if (size <= 0 && s)
        size = atoi(s);
    if (size <= 0 && !getenv("PMIX_RANK"))
        size = 1;
    if (size <= 0)
        return false;
    snprintf(n, cap, "%d", size);
    return true;
}

/* What MPI_INFO_ENV and MPI_Info_create_env share: host and maxprocs. */
static int env_common(MPI_Info info)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    PMPI_Get_processor_name(host, &len);
    int rc = set(info, "host", host);
    char n[32];
    if (!rc && env_maxprocs(n, sizeof n))
        rc = set(info, "maxprocs", n);
    return rc;
}

/* MPI_INFO_ENV: complete (thread_level too) once MPI_Init ran; before, what
 * is known already, refilled at the next use. */
static void env_fill(void)
{
    static atomic_int filled;
    if (atomic_load(&filled))
        return;
    if (atomic_load(&weft__mpi.initialized) != 1) {
        env_common(&weft_mpi_info_env);
        return;
    }
    if (atomic_exchange(&filled, 1))
        return;
    env_common(&weft_mpi_info_env);
    set(&weft_mpi_info_env, "thread_level",
        (const char *[]){"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                         "MPI_THREAD_MULTIPLE"}[weft__mpi.thread_level & 3]);
}

int PMPI_Info_create(MPI_Info *info)
{
    if (!info)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_create");
    MPI_Info i = calloc(1, sizeof *i);
    if (!i)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_create");
    i->magic = WEFT_MPI_MAGIC_INFO;
    *info = i;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_create)

/* MPI 4.0 §11.2.3: a new info object describing how this process was started,
 * callable before MPI_Init and after MPI_Finalize: command and argv (from the
 * arguments given; argc 0 or argv NULL leaves them out), maxprocs, host and
 * wdir. The requested thread level is MPI_INFO_ENV's (known only at init). */
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    static const char fn[] = "MPI_Info_create_env";
    if (!info || argc < 0)
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    MPI_Info i = MPI_INFO_NULL;
    int rc = PMPI_Info_create(&i);
    if (rc)
        return rc;
    rc = env_common(i);
    if (!rc && argc > 0 && argv && argv[0] && argv[0][0])
        rc = set(i, "command", argv[0]);
    if (!rc && argc > 1 && argv) {
        /* The arguments, space-separated, cut to what a value may hold. */
        char v[MPI_MAX_INFO_VAL + 1];
        size_t len = 0;
        for (int a = 1; a < argc && argv[a]; a++) {
            int w = snprintf(v + len, sizeof v - len, "%s%s", a > 1 ? " " : "", argv[a]);
            if (w < 0 || (size_t)w >= sizeof v - len) {
                len = sizeof v - 1;
                break;
            }
            len += (size_t)w;
        }
        if (len > 0)
            rc = set(i, "argv", v);
    }
    char wdir[MPI_MAX_INFO_VAL + 1];
    if (!rc && getcwd(wdir, sizeof wdir))
        rc = set(i, "wdir", wdir);
    if (rc) {
        PMPI_Info_free(&i);
        return weft__mpi_err(NULL, rc, fn);
    }
    *info = i;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_create_env)

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    if (!valid(info) || info->predefined)
        return weft__mpi_err(NULL, MPI_ERR_INFO, "MPI_Info_set");
    int rc = check_key(key);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Info_set");
    if (!value || strlen(value) > MPI_MAX_INFO_VAL || !*value)
        return weft__mpi_err(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set");
    rc = set(info, key, value);
    return rc ? weft__mpi_err(NULL, rc, "MPI_Info_set") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_set)

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    if (!valid(info) || info->predefined)
        return weft__mpi_err(NULL, MPI_ERR_INFO, "MPI_Info_delete");
    int rc = check_key(key);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Info_delete");
    int i = find(info, key);
    if (i < 0)
        return weft__mpi_err(NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete");
    free(info->keys[i]);
    free(info->values[i]);
    memmove(&info->keys[i], &info->keys[i + 1], (size_t)(info->n - i - 1) * sizeof(char *));
    memmove(&info->values[i], &info->values[i + 1], (size_t)(info->n - i - 1) * sizeof(char *));
    info->n--;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_delete)

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    if (info == MPI_INFO_ENV)
        env_fill();
    if (!valid(info))
        return weft__mpi_err(NULL, MPI_ERR_INFO, "MPI_Info_get");
    int rc = check_key(key);
    if (rc)
        return weft__mpi_err(NULL, rc, "MPI_Info_get");
    if (valuelen < 0 || !flag || (!value && valuelen > 0))
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_get");
    int i = find(info, key);
    *flag = i >= 0;
    if (i >= 0) {
        /* valuelen excludes the terminator: at most valuelen characters. */
        size_t n = strlen(info->values[i]);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, info->values[i], n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_get)

/* MPI 4.0: as MPI_Info_get, with the buffer's size (terminator included) in
 * *buflen, which comes back as the size the whole value needs. A value longer
 * than the buffer is cut to *buflen - 1 characters; *buflen == 0 reads nothing. */
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get_string";
    if (info == MPI_INFO_ENV)
        env_fill();
    if (!valid(info))
        return weft__mpi_err(NULL, MPI_ERR_INFO, fn);
    int rc = check_key(key);
    if (rc)
        return weft__mpi_err(NULL, rc, fn);
    if (!buflen || *buflen < 0 || !flag || (!value && *buflen > 0))
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    int i = find(info, key);
    *flag = i >= 0;
    if (i < 0)
        return MPI_SUCCESS;
    size_t n = strlen(info->values[i]);
    if (*buflen > 0) {
        size_t room = (size_t)*buflen - 1;
        size_t k = n < room ? n : room;
        memcpy(value, info->values[i], k);
        value[k] = '\0';
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_get_string)

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    if (info == MPI_INFO_ENV)
        env_fill();
    if (!valid(info))
        return weft__mpi_err(NULL, MPI_ERR_INFO, "MPI_Info_get_valuelen");
    int rc = check_key(key);
    if (rc || !valuelen || !flag)
        return weft__mpi_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Info_get_valuelen");
    int i = find(info, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(info->values[i]);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_get_valuelen)

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    if (info == MPI_INFO_ENV)
        env_fill();
    if (!valid(info) || !nkeys)
        return weft__mpi_err(NULL, !nkeys ? MPI_ERR_ARG : MPI_ERR_INFO, "MPI_Info_get_nkeys");
    *nkeys = info->n;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_get_nkeys)

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    if (info == MPI_INFO_ENV)
        env_fill();
    if (!valid(info))
        return weft__mpi_err(NULL, MPI_ERR_INFO, "MPI_Info_get_nthkey");
    if (n < 0 || n >= info->n || !key)
        return weft__mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey");
    snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", info->keys[n]);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_get_nthkey)

int weft__mpi_info_dup_internal(MPI_Info in, MPI_Info *out)
{
    MPI_Info i = calloc(1, sizeof *i);
    if (!i)
        return MPI_ERR_NO_MEM;
    i->magic = WEFT_MPI_MAGIC_INFO;
    for (int k = 0; k < in->n; k++) {
        if (set(i, in->keys[k], in->values[k]) != MPI_SUCCESS) {
            weft__mpi_info_release(i);
            return MPI_ERR_NO_MEM;
        }
    }
    *out = i;
    return MPI_SUCCESS;
}

void weft__mpi_info_release(MPI_Info info)
{
    if (!info || info->predefined)
        return;
    for (int k = 0; k < info->n; k++) {
        free(info->keys[k]);
        free(info->values[k]);
    }
    free(info->keys);
    free(info->values);
    info->magic = WEFT_MPI_MAGIC_DEAD;
    free(info);
}

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    if (info == MPI_INFO_ENV)
        env_fill();
    if (!valid(info) || !newinfo)
        return weft__mpi_err(NULL, !newinfo ? MPI_ERR_ARG : MPI_ERR_INFO, "MPI_Info_dup");
    int rc = weft__mpi_info_dup_internal(info, newinfo);
    return rc ? weft__mpi_err(NULL, rc, "MPI_Info_dup") : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_dup)

int PMPI_Info_free(MPI_Info *info)
{
    if (!info || !valid(*info) || (*info)->predefined)
        return weft__mpi_err(NULL, MPI_ERR_INFO, "MPI_Info_free");
    weft__mpi_info_release(*info);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Info_free)
