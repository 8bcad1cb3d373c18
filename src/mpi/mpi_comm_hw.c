/* MPI_Comm_split_type: communicators of the processes that share a node
 * (MPI_COMM_TYPE_SHARED) or a hardware resource (MPI 4.0 §7.4.2).
 *
 * - Shared memory: ranks share memory when they are on one node, the
 *   engine's node id, which the shm driver also uses; the colour is the
 *   lowest world rank on the node.
 * - MPI_COMM_TYPE_HW_GUIDED: the info key "mpi_hw_resource_type" names the
 *   resource ("mpi_shared_memory", or a hwloc type such as "L3Cache",
 *   "Core", "hwloc://NUMANode"; weft_hw_instance). A process gets the
 *   communicator of the processes of its node that run within the same
 *   instance of it: two splits, by node and then by instance. A process not
 *   bound within one instance, a missing key, or a resource weft does not
 *   know give MPI_COMM_NULL (and MPI_SUCCESS), as the standard asks.
 * - MPI_COMM_TYPE_HW_UNGUIDED: the first level of the hierarchy, from the
 *   node down to the hardware thread, whose split gives every process that
 *   gets a communicator a strict subset of comm's group. The level's name is
 *   put under "mpi_hw_resource_type" in the new communicator's info, and in
 *   the info argument when one is given (MPICH's test suite reads it
 *   there). MPI_COMM_NULL where no level divides comm.
 * Every process of comm goes through the same splits (MPI_UNDEFINED where it
 * has no instance), so each is collective whatever a process finds. The
 * hardware types take intracommunicators only. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mpi/mpi_int.h"

#define HW_KEY    "mpi_hw_resource_type"
#define HW_SHARED "mpi_shared_memory"

/* The levels an unguided split tries, from the node down. */
static const char *const hw_levels[] = {HW_SHARED, "Package", "NUMANode", "L3Cache",
                                        "L2Cache", "L1Cache", "Core",     "PU"};

static int split_shared(MPI_Comm comm, int key, MPI_Comm *newcomm, const char *fn)
{
    int color = weft_node_leader(weft__mpi.ctx);
    if (color < 0)
        return weft__mpi_err(comm, MPI_ERR_INTERN, fn);
    return weft__mpi_comm_split(comm, color, key, newcomm, fn);
}

/* The processes of comm on this node within this process's instance of
 * resource type (MPI_COMM_NULL where it has none). */
static int split_resource(MPI_Comm comm, const char *type, int key, MPI_Comm *newcomm,
                          const char *fn)
{
    if (!strcasecmp(type, HW_SHARED))
        return split_shared(comm, key, newcomm, fn);
    int index = 0;
    int color = weft_hw_instance(type, &index) == WEFT_OK ? index : MPI_UNDEFINED;
    MPI_Comm node;
    int rc = split_shared(comm, key, &node, fn);
    if (rc)
        return rc;
    rc = weft__mpi_comm_split(node, color, key, newcomm, fn);
    PMPI_Comm_free(&node);
    return rc;
}

/* Put the resource's name under HW_KEY in the communicator's info. */
static int name_resource(MPI_Comm c, const char *type)
{
    MPI_Info info;
    int rc = PMPI_Comm_get_info(c, &info);
    if (rc)
        return rc;
    if (!(rc = PMPI_Info_set(info, HW_KEY, type)))
        rc = PMPI_Comm_set_info(c, info);
    PMPI_Info_free(&info);
    return rc;
}

static int split_guided(MPI_Comm comm, int key, MPI_Info info, MPI_Comm *newcomm, const char *fn)
{
    char type[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    if (info != MPI_INFO_NULL) {
        int rc = PMPI_Info_get(info, HW_KEY, MPI_MAX_INFO_VAL, type, &flag);
        if (rc)
            return weft__mpi_err(comm, rc, fn);
    }
    if (!flag) /* no resource named: nobody gets a communicator */
        return weft__mpi_comm_split(comm, MPI_UNDEFINED, key, newcomm, fn);
    int rc = split_resource(comm, type, key, newcomm, fn);
    if (!rc && *newcomm != MPI_COMM_NULL && (rc = name_resource(*newcomm, type)))
        return weft__mpi_err(comm, rc, fn);
    return rc;
}

static int split_unguided(MPI_Comm comm, int key, MPI_Info info, MPI_Comm *newcomm, const char *fn)
{
    *newcomm = MPI_COMM_NULL;
    for (size_t l = 0; l < sizeof hw_levels / sizeof *hw_levels; l++) {
        MPI_Comm c;
        int rc = split_resource(comm, hw_levels[l], key, &c, fn);
        if (rc)
            return rc;
        /* The level serves when the largest group it makes is smaller than
         * comm's, and somebody has one. */
        int size = 0;
        if (c != MPI_COMM_NULL)
            PMPI_Comm_size(c, &size);
        PMPI_Allreduce(MPI_IN_PLACE, &size, 1, MPI_INT, MPI_MAX, comm);
        if (size > 0 && size < comm->size) {
            *newcomm = c;
            if (c != MPI_COMM_NULL && (rc = name_resource(c, hw_levels[l])))
                return weft__mpi_err(comm, rc, fn);
            if (c != MPI_COMM_NULL && info != MPI_INFO_NULL)
                PMPI_Info_set(info, HW_KEY, hw_levels[l]);
            return MPI_SUCCESS;
        }
        if (c != MPI_COMM_NULL)
            PMPI_Comm_free(&c);
    }
    return MPI_SUCCESS;
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split_type";
    int rc = weft__mpi_check_comm(comm);
    if (rc || !newcomm)
        return weft__mpi_err(comm, rc ? rc : MPI_ERR_ARG, fn);
    if (!info || info->magic != WEFT_MPI_MAGIC_INFO)
        return weft__mpi_err(comm, MPI_ERR_INFO, fn);
    switch (split_type) {
    case MPI_UNDEFINED:
        return weft__mpi_comm_split(comm, MPI_UNDEFINED, key, newcomm, fn);
    case MPI_COMM_TYPE_SHARED:
        return split_shared(comm, key, newcomm, fn);
    case MPI_COMM_TYPE_HW_GUIDED:
        if (comm->inter)
            return weft__mpi_err(comm, MPI_ERR_COMM, fn);
        return split_guided(comm, key, info, newcomm, fn);
    case MPI_COMM_TYPE_HW_UNGUIDED:
        if (comm->inter)
            return weft__mpi_err(comm, MPI_ERR_COMM, fn);
        return split_unguided(comm, key, info, newcomm, fn);
    default:
        return weft__mpi_err(comm, MPI_ERR_ARG, fn);
    }
}
WEFT_MPI_ALIAS(Comm_split_type)
