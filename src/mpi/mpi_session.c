/* Sessions (MPI 4.0 §11.3): MPI without MPI_Init.
 *
 * A session is a handle on the MPI instance (mpi_env.c): MPI_Session_init
 * starts it, or joins it when MPI_Init or another session did; the last of
 * the world model and the sessions to finalize ends it. The process sets are
 * the two MPI 4.0 names: mpi://WORLD (every process of the job) and
 * mpi://SELF. A group from a process set makes a communicator with
 * MPI_Comm_create_from_group, collective over the group only: an
 * MPI_Comm_create_group over the instance's world, named by the string tag
 * (weft__mpi_comm_from_group). MPI_Intercomm_create_from_groups makes each
 * side's communicator that way and joins them by their leaders through the
 * world.
 *
 * The string tag is hashed to 31 bits: two different tags used at once by
 * overlapping groups could meet only if their hashes were equal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpi/mpi_int.h"

struct weft_mpi_session weft_mpi_session_null = {.magic = WEFT_MPI_MAGIC_SESSION};

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
enum { NPSETS = sizeof psets / sizeof psets[0] };

static const char *const level_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                          "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

static int check_session(MPI_Session s)
{
    return s && s->magic == WEFT_MPI_MAGIC_SESSION && s != MPI_SESSION_NULL ? MPI_SUCCESS
                                                                            : MPI_ERR_SESSION;
}

static bool valid_info(MPI_Info info)
{
    return info && info->magic == WEFT_MPI_MAGIC_INFO;
}

/* The thread level info asks for (its "thread_level" hint, as MPI_Init_thread
 * names them), else the default. */
static int asked_level(MPI_Info info)
{
    char value[64];
    int len = sizeof value, flag = 0;
    if (info != MPI_INFO_NULL &&
        PMPI_Info_get_string(info, "thread_level", &len, value, &flag) == MPI_SUCCESS && flag)
        for (int l = 0; l < 4; l++)
            if (!strcmp(value, level_names[l]))
                return l;
    return weft__mpi_default_level();
}

/* The index of process set name (case aside, as MPICH takes them), or -1. */
static int pset_index(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (!strcasecmp(name, psets[i]))
            return i;
    return -1;
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    static const char fn[] = "MPI_Session_init";
    if (!session)
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    *session = MPI_SESSION_NULL;
    if (!valid_info(info))
        return weft__mpi_err(NULL, MPI_ERR_INFO, fn);
    if (!weft__mpi_errh_fits(errhandler, WEFT_MPI_ERRH_SESSION))
        return weft__mpi_err(NULL, MPI_ERR_ARG, fn);
    MPI_Session s = calloc(1, sizeof *s);
    if (!s)
        return weft__mpi_err(NULL, MPI_ERR_NO_MEM, fn);
    s->magic = WEFT_MPI_MAGIC_SESSION;
    weft__mpi_errh_retain(errhandler);
    s->errhandler = errhandler;
    int rc = weft__mpi_instance_up(asked_level(info), fn);
    if (rc) {
        /* Errors of the init go to the handler given (§11.3.1). */
        weft__mpi_err_session(s, rc, fn);
        weft__mpi_errh_release(s->errhandler);
        free(s);
        return rc;
    }
    rc = info == MPI_INFO_NULL ? PMPI_Info_create(&s->info) : PMPI_Info_dup(info, &s->info);
    if (!rc)
        rc = PMPI_Info_set(s->info, "thread_level", level_names[weft__mpi.thread_level]);
    if (rc) {
        MPI_Session dead = s;
        PMPI_Session_finalize(&dead);
        return weft__mpi_err(NULL, rc, fn);
    }
    *session = s;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Session_init)

int PMPI_Session_finalize(MPI_Session *session)
{
    static const char fn[] = "MPI_Session_finalize";
    int rc = session ? check_session(*session) : MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_session(session ? *session : NULL, rc, fn);
    MPI_Session s = *session;
    if (s->info)
        PMPI_Info_free(&s->info);
    weft__mpi_errh_release(s->errhandler);
    s->magic = WEFT_MPI_MAGIC_DEAD;
    free(s);
    *session = MPI_SESSION_NULL;
    rc = weft__mpi_instance_down();
    return rc ? weft__mpi_err(NULL, rc, fn) : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Session_finalize)

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Session_get_info";
    int rc = check_session(session);
    if (!rc && !info_used)
        rc = MPI_ERR_ARG;
    if (!rc)
        rc = PMPI_Info_dup(session->info, info_used);
    return weft__mpi_err_session(session, rc, fn);
}
WEFT_MPI_ALIAS(Session_get_info)

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    int rc = check_session(session);
    if (!rc && !valid_info(info))
        rc = MPI_ERR_INFO;
    if (!rc && !npset_names)
        rc = MPI_ERR_ARG;
    if (!rc)
        *npset_names = NPSETS;
    return weft__mpi_err_session(session, rc, "MPI_Session_get_num_psets");
}
WEFT_MPI_ALIAS(Session_get_num_psets)

/* With *pset_len 0, the length the name needs (its terminating null
 * included); else the name, cut to *pset_len - 1 characters. */
int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    int rc = check_session(session);
    if (!rc && !valid_info(info))
        rc = MPI_ERR_INFO;
    if (!rc &&
        (n < 0 || n >= NPSETS || !pset_len || *pset_len < 0 || (*pset_len > 0 && !pset_name)))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_session(session, rc, "MPI_Session_get_nth_pset");
    size_t len = strlen(psets[n]);
    if (*pset_len == 0) {
        *pset_len = (int)len + 1;
        return MPI_SUCCESS;
    }
    size_t room = (size_t)*pset_len - 1;
    size_t cut = len < room ? len : room;
    memcpy(pset_name, psets[n], cut);
    pset_name[cut] = '\0';
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Session_get_nth_pset)

/* The process set's size, as the "mpi_size" key (§11.3.2). */
int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    static const char fn[] = "MPI_Session_get_pset_info";
    int rc = check_session(session);
    int i = pset_index(pset_name);
    if (!rc && (i < 0 || !info))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_session(session, rc, fn);
    char size[16];
    snprintf(size, sizeof size, "%d", i == 0 ? weft__mpi.world_size : 1);
    if (!(rc = PMPI_Info_create(info)) && (rc = PMPI_Info_set(*info, "mpi_size", size)))
        PMPI_Info_free(info);
    return weft__mpi_err_session(session, rc, fn);
}
WEFT_MPI_ALIAS(Session_get_pset_info)

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_from_session_pset";
    int rc = check_session(session);
    int i = pset_index(pset_name);
    if (!rc && (i < 0 || !newgroup))
        rc = MPI_ERR_ARG;
    if (!rc)
        rc = PMPI_Comm_group(i == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF, newgroup);
    return weft__mpi_err_session(session, rc, fn);
}
WEFT_MPI_ALIAS(Group_from_session_pset)

/* The hints and the error handler a communicator made from groups takes
 * (MPI_ERRHANDLER_NULL: MPI_ERRORS_ARE_FATAL, the default). */
static int from_groups_adopt(MPI_Comm c, MPI_Info info, MPI_Errhandler errhandler)
{
    int rc = PMPI_Comm_set_errhandler(c, errhandler == MPI_ERRHANDLER_NULL ? MPI_ERRORS_ARE_FATAL
                                                                           : errhandler);
    if (!rc && info != MPI_INFO_NULL)
        rc = PMPI_Comm_set_info(c, info);
    return rc;
}

/* The checks the two calls share; the error class, or MPI_SUCCESS. */
static int from_groups_check(const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                             MPI_Comm *newcomm)
{
    if (atomic_load(&weft__mpi.initialized) != 1)
        return MPI_ERR_OTHER;
    if (!stringtag || !newcomm)
        return MPI_ERR_ARG;
    if (!valid_info(info))
        return MPI_ERR_INFO;
    if (errhandler != MPI_ERRHANDLER_NULL && !weft__mpi_errh_fits(errhandler, WEFT_MPI_ERRH_COMM))
        return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_from_group";
    int rc = from_groups_check(stringtag, info, errhandler, newcomm);
    if (!rc)
        rc = weft__mpi_comm_from_group(group, stringtag, newcomm);
    if (!rc && (rc = from_groups_adopt(*newcomm, info, errhandler)))
        PMPI_Comm_free(newcomm);
    /* No communicator to report on: the handler given takes the error. */
    return weft__mpi_err_handler(errhandler, rc, fn);
}
WEFT_MPI_ALIAS(Comm_create_from_group)

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    int rc = from_groups_check(stringtag, info, errhandler, newintercomm);
    if (!rc && (!local_group || local_group->magic != WEFT_MPI_MAGIC_GROUP || !remote_group ||
                remote_group->magic != WEFT_MPI_MAGIC_GROUP))
        rc = MPI_ERR_GROUP;
    if (!rc && (local_leader < 0 || local_leader >= local_group->size || remote_leader < 0 ||
                remote_leader >= remote_group->size))
        rc = MPI_ERR_RANK;
    MPI_Comm local = MPI_COMM_NULL;
    if (!rc)
        rc = weft__mpi_comm_from_group(local_group, stringtag, &local);
    if (!rc) {
        /* The local communicator's errors come back here, not to a handler. */
        PMPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
        rc = PMPI_Intercomm_create(local, local_leader, MPI_COMM_WORLD,
                                   remote_group->ranks[remote_leader],
                                   (int)weft__mpi_stringtag_hash(stringtag), newintercomm);
        PMPI_Comm_free(&local);
    }
    if (!rc && (rc = from_groups_adopt(*newintercomm, info, errhandler)))
        PMPI_Comm_free(newintercomm);
    return weft__mpi_err_handler(errhandler, rc, fn);
}
WEFT_MPI_ALIAS(Intercomm_create_from_groups)

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Session_set_errhandler";
    int rc = check_session(session);
    if (!rc && !weft__mpi_errh_fits(errhandler, WEFT_MPI_ERRH_SESSION))
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_session(session, rc, fn);
    weft__mpi_errh_replace(&session->errhandler, errhandler);
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Session_set_errhandler)

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    int rc = check_session(session);
    if (!rc && !errhandler)
        rc = MPI_ERR_ARG;
    if (rc)
        return weft__mpi_err_session(session, rc, "MPI_Session_get_errhandler");
    weft__mpi_errh_retain(session->errhandler);
    *errhandler = session->errhandler;
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Session_get_errhandler)

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    int rc = check_session(session);
    if (rc)
        return weft__mpi_err_session(session, rc, "MPI_Session_call_errhandler");
    weft__mpi_err_session(session, errorcode, "MPI_Session_call_errhandler");
    return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(Session_call_errhandler)
