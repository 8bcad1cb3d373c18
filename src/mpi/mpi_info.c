/* MPI_Info (MPI 3.1 §9): an ordered list of (key, value) strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void env_fill(void)
{
    static atomic_int filled;
    if (atomic_exchange(&filled, 1))
        return;
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    PMPI_Get_processor_name(host, &len);
    set(&weft_mpi_info_env, "host", host);
    char n[32];
    snprintf(n, sizeof n, "%d", weft__mpi.world_size);
    set(&weft_mpi_info_env, "maxprocs", n);
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
