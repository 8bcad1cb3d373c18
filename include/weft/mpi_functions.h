/* Every function of weft's MPI interface, as WEFT_MPI_FN(return type, name without
 * the MPI_ prefix, (parameters)). mpi.h declares each as MPI_name and PMPI_name;
 * the library and its tests reuse the list, so a function cannot be declared and
 * left undefined without a test failing. No include guard: included with
 * different definitions of WEFT_MPI_FN. */

/* Environment (MPI 3.1 chapter 8) and threads (12.4) */
WEFT_MPI_FN(int, Init, (int *argc, char ***argv))
WEFT_MPI_FN(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
WEFT_MPI_FN(int, Finalize, (void))
WEFT_MPI_FN(int, Initialized, (int *flag))
WEFT_MPI_FN(int, Finalized, (int *flag))
WEFT_MPI_FN(int, Abort, (MPI_Comm comm, int errorcode))
WEFT_MPI_FN(int, Query_thread, (int *provided))
WEFT_MPI_FN(int, Is_thread_main, (int *flag))
WEFT_MPI_FN(double, Wtime, (void))
WEFT_MPI_FN(double, Wtick, (void))
WEFT_MPI_FN(int, Get_processor_name, (char *name, int *resultlen))
WEFT_MPI_FN(int, Get_version, (int *version, int *subversion))
WEFT_MPI_FN(int, Get_library_version, (char *version, int *resultlen))
WEFT_MPI_FN(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
WEFT_MPI_FN(int, Free_mem, (void *base))
WEFT_MPI_FN(int, Pcontrol, (const int level, ...))

/* Errors */
WEFT_MPI_FN(int, Comm_create_errhandler,
            (MPI_Comm_errhandler_function * comm_errhandler_fn, MPI_Errhandler *errhandler))
WEFT_MPI_FN(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
WEFT_MPI_FN(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
WEFT_MPI_FN(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
WEFT_MPI_FN(int, Win_create_errhandler,
            (MPI_Win_errhandler_function * win_errhandler_fn, MPI_Errhandler *errhandler))
WEFT_MPI_FN(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
WEFT_MPI_FN(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
WEFT_MPI_FN(int, Win_call_errhandler, (MPI_Win win, int errorcode))
WEFT_MPI_FN(int, File_create_errhandler,
            (MPI_File_errhandler_function * file_errhandler_fn, MPI_Errhandler *errhandler))
WEFT_MPI_FN(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
WEFT_MPI_FN(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler))
WEFT_MPI_FN(int, File_call_errhandler, (MPI_File fh, int errorcode))
WEFT_MPI_FN(int, Errhandler_free, (MPI_Errhandler * errhandler))
WEFT_MPI_FN(int, Error_string, (int errorcode, char *string, int *resultlen))
WEFT_MPI_FN(int, Error_class, (int errorcode, int *errorclass))
WEFT_MPI_FN(int, Add_error_class, (int *errorclass))
WEFT_MPI_FN(int, Add_error_code, (int errorclass, int *errorcode))
WEFT_MPI_FN(int, Add_error_string, (int errorcode, const char *string))

/* Point-to-point (chapter 3) */
WEFT_MPI_FN(int, Send,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
WEFT_MPI_FN(int, Recv,
            (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status))
WEFT_MPI_FN(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count))
WEFT_MPI_FN(int, Bsend,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
WEFT_MPI_FN(int, Ssend,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
WEFT_MPI_FN(int, Rsend,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
WEFT_MPI_FN(int, Buffer_attach, (void *buffer, int size))
WEFT_MPI_FN(int, Buffer_detach, (void *buffer_addr, int *size))
WEFT_MPI_FN(int, Isend,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Ibsend,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Issend,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Irsend,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Irecv,
            (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Wait, (MPI_Request * request, MPI_Status *status))
WEFT_MPI_FN(int, Test, (MPI_Request * request, int *flag, MPI_Status *status))
WEFT_MPI_FN(int, Request_free, (MPI_Request * request))
WEFT_MPI_FN(int, Waitany,
            (int count, MPI_Request array_of_requests[], int *index, MPI_Status *status))
WEFT_MPI_FN(int, Testany,
            (int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status))
WEFT_MPI_FN(int, Waitall,
            (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]))
WEFT_MPI_FN(int, Testall,
            (int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]))
WEFT_MPI_FN(int, Waitsome,
            (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
             MPI_Status array_of_statuses[]))
WEFT_MPI_FN(int, Testsome,
            (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
             MPI_Status array_of_statuses[]))
WEFT_MPI_FN(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status))
WEFT_MPI_FN(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
WEFT_MPI_FN(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
WEFT_MPI_FN(int, Improbe,
            (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
             MPI_Status *status))
WEFT_MPI_FN(int, Mprobe,
            (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status))
WEFT_MPI_FN(int, Mrecv,
            (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status))
WEFT_MPI_FN(int, Imrecv,
            (void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
             MPI_Request *request))
WEFT_MPI_FN(int, Cancel, (MPI_Request * request))
WEFT_MPI_FN(int, Test_cancelled, (const MPI_Status *status, int *flag))
WEFT_MPI_FN(int, Send_init,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Bsend_init,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Ssend_init,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Rsend_init,
            (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Recv_init,
            (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Start, (MPI_Request * request))
WEFT_MPI_FN(int, Startall, (int count, MPI_Request array_of_requests[]))
WEFT_MPI_FN(int, Sendrecv,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
             void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
             MPI_Comm comm, MPI_Status *status))
WEFT_MPI_FN(int, Sendrecv_replace,
            (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
             int recvtag, MPI_Comm comm, MPI_Status *status))
/* MPI 4.0 §3.10.2 */
WEFT_MPI_FN(int, Isendrecv,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
             void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
             MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Isendrecv_replace,
            (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
             int recvtag, MPI_Comm comm, MPI_Request *request))

/* Partitioned communication (MPI 4.0 §4) */
WEFT_MPI_FN(int, Psend_init,
            (const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest,
             int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Precv_init,
            (void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Pready, (int partition, MPI_Request request))
WEFT_MPI_FN(int, Pready_range, (int partition_low, int partition_high, MPI_Request request))
WEFT_MPI_FN(int, Pready_list, (int length, const int array_of_partitions[], MPI_Request request))
WEFT_MPI_FN(int, Parrived, (MPI_Request request, int partition, int *flag))

/* Generalized requests and status helpers (chapter 12) */
WEFT_MPI_FN(int, Grequest_start,
            (MPI_Grequest_query_function * query_fn, MPI_Grequest_free_function *free_fn,
             MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request))
WEFT_MPI_FN(int, Grequest_complete, (MPI_Request request))
WEFT_MPI_FN(int, Status_set_elements, (MPI_Status * status, MPI_Datatype datatype, int count))
WEFT_MPI_FN(int, Status_set_elements_x,
            (MPI_Status * status, MPI_Datatype datatype, MPI_Count count))
WEFT_MPI_FN(int, Status_set_cancelled, (MPI_Status * status, int flag))
/* MPI 4.1 §3.2.5: the public fields through functions. */
WEFT_MPI_FN(int, Status_get_source, (const MPI_Status *status, int *source))
WEFT_MPI_FN(int, Status_set_source, (MPI_Status * status, int source))
WEFT_MPI_FN(int, Status_get_tag, (const MPI_Status *status, int *tag))
WEFT_MPI_FN(int, Status_set_tag, (MPI_Status * status, int tag))
WEFT_MPI_FN(int, Status_get_error, (const MPI_Status *status, int *error))
WEFT_MPI_FN(int, Status_set_error, (MPI_Status * status, int error))

/* Datatypes (chapter 4) */
WEFT_MPI_FN(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_vector,
            (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_hvector,
            (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
             MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_indexed,
            (int count, const int array_of_blocklengths[], const int array_of_displacements[],
             MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_hindexed,
            (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
             MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_indexed_block,
            (int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
             MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_hindexed_block,
            (int count, int blocklength, const MPI_Aint array_of_displacements[],
             MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_struct,
            (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
             const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_subarray,
            (int ndims, const int array_of_sizes[], const int array_of_subsizes[],
             const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_darray,
            (int size, int rank, int ndims, const int array_of_gsizes[],
             const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
             int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_resized,
            (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_commit, (MPI_Datatype * datatype))
WEFT_MPI_FN(int, Type_free, (MPI_Datatype * datatype))
WEFT_MPI_FN(int, Type_size, (MPI_Datatype datatype, int *size))
WEFT_MPI_FN(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
WEFT_MPI_FN(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent))
WEFT_MPI_FN(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
WEFT_MPI_FN(int, Type_get_true_extent,
            (MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent))
WEFT_MPI_FN(int, Type_get_true_extent_x,
            (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent))
WEFT_MPI_FN(int, Type_get_envelope,
            (MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
             int *combiner))
WEFT_MPI_FN(int, Type_get_contents,
            (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
             int array_of_integers[], MPI_Aint array_of_addresses[],
             MPI_Datatype array_of_datatypes[]))
WEFT_MPI_FN(int, Type_match_size, (int typeclass, int size, MPI_Datatype *datatype))
WEFT_MPI_FN(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_f90_real, (int p, int r, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_set_name, (MPI_Datatype datatype, const char *type_name))
WEFT_MPI_FN(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen))
WEFT_MPI_FN(int, Get_address, (const void *location, MPI_Aint *address))
WEFT_MPI_FN(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
WEFT_MPI_FN(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
WEFT_MPI_FN(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count))
WEFT_MPI_FN(int, Get_elements_x,
            (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
WEFT_MPI_FN(int, Pack,
            (const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm))
WEFT_MPI_FN(int, Unpack,
            (const void *inbuf, int insize, int *position, void *outbuf, int outcount,
             MPI_Datatype datatype, MPI_Comm comm))
WEFT_MPI_FN(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size))
WEFT_MPI_FN(int, Pack_external,
            (const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
             void *outbuf, MPI_Aint outsize, MPI_Aint *position))
WEFT_MPI_FN(int, Unpack_external,
            (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
             void *outbuf, int outcount, MPI_Datatype datatype))
WEFT_MPI_FN(int, Pack_external_size,
            (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size))

/* Collectives (chapter 5) */
WEFT_MPI_FN(int, Barrier, (MPI_Comm comm))
WEFT_MPI_FN(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
WEFT_MPI_FN(int, Gather,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
WEFT_MPI_FN(int, Gatherv,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             MPI_Comm comm))
WEFT_MPI_FN(int, Scatter,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
WEFT_MPI_FN(int, Scatterv,
            (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
WEFT_MPI_FN(int, Allgather,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
WEFT_MPI_FN(int, Allgatherv,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
WEFT_MPI_FN(int, Alltoall,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
WEFT_MPI_FN(int, Alltoallv,
            (const void *sendbuf, const int sendcounts[], const int sdispls[],
             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
             MPI_Datatype recvtype, MPI_Comm comm))
WEFT_MPI_FN(int, Alltoallw,
            (const void *sendbuf, const int sendcounts[], const int sdispls[],
             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
             const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
WEFT_MPI_FN(int, Reduce,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             int root, MPI_Comm comm))
WEFT_MPI_FN(int, Allreduce,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm))
WEFT_MPI_FN(int, Reduce_local,
            (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))
WEFT_MPI_FN(int, Reduce_scatter_block,
            (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm))
WEFT_MPI_FN(int, Reduce_scatter,
            (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
             MPI_Op op, MPI_Comm comm))
WEFT_MPI_FN(int, Scan,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm))
WEFT_MPI_FN(int, Exscan,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm))
WEFT_MPI_FN(int, Ibarrier, (MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Ibcast,
            (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Igather,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Igatherv,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Iscatter,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Iscatterv,
            (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Iallgather,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Iallgatherv,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Ialltoall,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Ialltoallv,
            (const void *sendbuf, const int sendcounts[], const int sdispls[],
             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Ialltoallw,
            (const void *sendbuf, const int sendcounts[], const int sdispls[],
             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
             const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Ireduce,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             int root, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Iallreduce,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Ireduce_scatter_block,
            (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Ireduce_scatter,
            (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
             MPI_Op op, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Iscan,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Iexscan,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Op_create, (MPI_User_function * user_fn, int commute, MPI_Op *op))
WEFT_MPI_FN(int, Op_free, (MPI_Op * op))
WEFT_MPI_FN(int, Op_commutative, (MPI_Op op, int *commute))

/* Persistent collectives (MPI 4.0 §6.13): the non-blocking ones' arguments,
 * then info and the request. */
WEFT_MPI_FN(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Bcast_init,
            (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
             MPI_Request *request))
WEFT_MPI_FN(int, Gather_init,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
             MPI_Request *request))
WEFT_MPI_FN(int, Gatherv_init,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Scatter_init,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
             MPI_Request *request))
WEFT_MPI_FN(int, Scatterv_init,
            (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
             MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Allgather_init,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
             MPI_Request *request))
WEFT_MPI_FN(int, Allgatherv_init,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
             MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Alltoall_init,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
             MPI_Request *request))
WEFT_MPI_FN(int, Alltoallv_init,
            (const void *sendbuf, const int sendcounts[], const int sdispls[],
             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Alltoallw_init,
            (const void *sendbuf, const int sendcounts[], const int sdispls[],
             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
             const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
             MPI_Request *request))
WEFT_MPI_FN(int, Reduce_init,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Allreduce_init,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Reduce_scatter_block_init,
            (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Reduce_scatter_init,
            (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
             MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Scan_init,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Exscan_init,
            (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Neighbor_allgather_init,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
             MPI_Request *request))
WEFT_MPI_FN(int, Neighbor_allgatherv_init,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
             MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Neighbor_alltoall_init,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
             MPI_Request *request))
WEFT_MPI_FN(int, Neighbor_alltoallv_init,
            (const void *sendbuf, const int sendcounts[], const int sdispls[],
             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
WEFT_MPI_FN(int, Neighbor_alltoallw_init,
            (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
             MPI_Request *request))

/* Groups, communicators, attributes, names (chapter 6) */
WEFT_MPI_FN(int, Group_size, (MPI_Group group, int *size))
WEFT_MPI_FN(int, Group_rank, (MPI_Group group, int *rank))
WEFT_MPI_FN(int, Group_translate_ranks,
            (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]))
WEFT_MPI_FN(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result))
WEFT_MPI_FN(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
WEFT_MPI_FN(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
WEFT_MPI_FN(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
WEFT_MPI_FN(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
WEFT_MPI_FN(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
WEFT_MPI_FN(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
WEFT_MPI_FN(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
WEFT_MPI_FN(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
WEFT_MPI_FN(int, Group_free, (MPI_Group * group))
WEFT_MPI_FN(int, Comm_size, (MPI_Comm comm, int *size))
WEFT_MPI_FN(int, Comm_rank, (MPI_Comm comm, int *rank))
WEFT_MPI_FN(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
WEFT_MPI_FN(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
WEFT_MPI_FN(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
WEFT_MPI_FN(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request))
WEFT_MPI_FN(int, Comm_idup_with_info,
            (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request))
WEFT_MPI_FN(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
WEFT_MPI_FN(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm))
WEFT_MPI_FN(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
WEFT_MPI_FN(int, Comm_split_type,
            (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm))
WEFT_MPI_FN(int, Comm_free, (MPI_Comm * comm))
WEFT_MPI_FN(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
WEFT_MPI_FN(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used))
WEFT_MPI_FN(int, Comm_test_inter, (MPI_Comm comm, int *flag))
WEFT_MPI_FN(int, Comm_remote_size, (MPI_Comm comm, int *size))
WEFT_MPI_FN(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
WEFT_MPI_FN(int, Intercomm_create,
            (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
             MPI_Comm *newintercomm))
WEFT_MPI_FN(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))
WEFT_MPI_FN(int, Comm_create_keyval,
            (MPI_Comm_copy_attr_function * comm_copy_attr_fn,
             MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
             void *extra_state))
WEFT_MPI_FN(int, Comm_free_keyval, (int *comm_keyval))
WEFT_MPI_FN(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val))
WEFT_MPI_FN(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag))
WEFT_MPI_FN(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
WEFT_MPI_FN(int, Keyval_create,
            (MPI_Copy_function * copy_fn, MPI_Delete_function *delete_fn, int *keyval,
             void *extra_state))
WEFT_MPI_FN(int, Keyval_free, (int *keyval))
WEFT_MPI_FN(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
WEFT_MPI_FN(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
WEFT_MPI_FN(int, Attr_delete, (MPI_Comm comm, int keyval))
WEFT_MPI_FN(int, Type_create_keyval,
            (MPI_Type_copy_attr_function * type_copy_attr_fn,
             MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
             void *extra_state))
WEFT_MPI_FN(int, Type_free_keyval, (int *type_keyval))
WEFT_MPI_FN(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val))
WEFT_MPI_FN(int, Type_get_attr,
            (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag))
WEFT_MPI_FN(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))
WEFT_MPI_FN(int, Win_create_keyval,
            (MPI_Win_copy_attr_function * win_copy_attr_fn,
             MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state))
WEFT_MPI_FN(int, Win_free_keyval, (int *win_keyval))
WEFT_MPI_FN(int, Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val))
WEFT_MPI_FN(int, Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag))
WEFT_MPI_FN(int, Win_delete_attr, (MPI_Win win, int win_keyval))
WEFT_MPI_FN(int, Comm_set_name, (MPI_Comm comm, const char *comm_name))
WEFT_MPI_FN(int, Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen))
WEFT_MPI_FN(int, Win_set_name, (MPI_Win win, const char *win_name))
WEFT_MPI_FN(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen))

/* Topologies (chapter 7) */
WEFT_MPI_FN(int, Cart_create,
            (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
             MPI_Comm *comm_cart))
WEFT_MPI_FN(int, Dims_create, (int nnodes, int ndims, int dims[]))
WEFT_MPI_FN(int, Graph_create,
            (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
             MPI_Comm *comm_graph))
WEFT_MPI_FN(int, Dist_graph_create_adjacent,
            (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
             int outdegree, const int destinations[], const int destweights[], MPI_Info info,
             int reorder, MPI_Comm *comm_dist_graph))
WEFT_MPI_FN(int, Dist_graph_create,
            (MPI_Comm comm_old, int n, const int sources[], const int degrees[],
             const int destinations[], const int weights[], MPI_Info info, int reorder,
             MPI_Comm *comm_dist_graph))
WEFT_MPI_FN(int, Topo_test, (MPI_Comm comm, int *status))
WEFT_MPI_FN(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
WEFT_MPI_FN(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]))
WEFT_MPI_FN(int, Cartdim_get, (MPI_Comm comm, int *ndims))
WEFT_MPI_FN(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
WEFT_MPI_FN(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
WEFT_MPI_FN(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
WEFT_MPI_FN(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
WEFT_MPI_FN(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
WEFT_MPI_FN(int, Dist_graph_neighbors_count,
            (MPI_Comm comm, int *indegree, int *outdegree, int *weighted))
WEFT_MPI_FN(int, Dist_graph_neighbors,
            (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
             int destinations[], int destweights[]))
WEFT_MPI_FN(int, Cart_shift,
            (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest))
WEFT_MPI_FN(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm))
WEFT_MPI_FN(int, Cart_map,
            (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank))
WEFT_MPI_FN(int, Graph_map,
            (MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank))
WEFT_MPI_FN(int, Neighbor_allgather,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
WEFT_MPI_FN(int, Neighbor_allgatherv,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
WEFT_MPI_FN(int, Neighbor_alltoall,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
WEFT_MPI_FN(int, Neighbor_alltoallv,
            (const void *sendbuf, const int sendcounts[], const int sdispls[],
             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
             MPI_Datatype recvtype, MPI_Comm comm))
WEFT_MPI_FN(int, Neighbor_alltoallw,
            (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
WEFT_MPI_FN(int, Ineighbor_allgather,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Ineighbor_allgatherv,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
             MPI_Request *request))
WEFT_MPI_FN(int, Ineighbor_alltoall,
            (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Ineighbor_alltoallv,
            (const void *sendbuf, const int sendcounts[], const int sdispls[],
             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FN(int, Ineighbor_alltoallw,
            (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
             MPI_Request *request))

/* Info (chapter 9) */
WEFT_MPI_FN(int, Info_create, (MPI_Info * info))
WEFT_MPI_FN(int, Info_create_env, (int argc, char *argv[], MPI_Info *info))
WEFT_MPI_FN(int, Info_set, (MPI_Info info, const char *key, const char *value))
WEFT_MPI_FN(int, Info_delete, (MPI_Info info, const char *key))
WEFT_MPI_FN(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag))
WEFT_MPI_FN(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag))
WEFT_MPI_FN(int, Info_get_string,
            (MPI_Info info, const char *key, int *buflen, char *value, int *flag))
WEFT_MPI_FN(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
WEFT_MPI_FN(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
WEFT_MPI_FN(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
WEFT_MPI_FN(int, Info_free, (MPI_Info * info))

/* Process creation and ports (chapter 10): unsupported, see docs/mpi.md */
WEFT_MPI_FN(int, Comm_spawn,
            (const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
             MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]))
WEFT_MPI_FN(int, Comm_spawn_multiple,
            (int count, char *array_of_commands[], char **array_of_argv[],
             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
             MPI_Comm *intercomm, int array_of_errcodes[]))
WEFT_MPI_FN(int, Comm_get_parent, (MPI_Comm * parent))
WEFT_MPI_FN(int, Open_port, (MPI_Info info, char *port_name))
WEFT_MPI_FN(int, Close_port, (const char *port_name))
WEFT_MPI_FN(int, Comm_accept,
            (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
WEFT_MPI_FN(int, Comm_connect,
            (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
WEFT_MPI_FN(int, Publish_name, (const char *service_name, MPI_Info info, const char *port_name))
WEFT_MPI_FN(int, Unpublish_name, (const char *service_name, MPI_Info info, const char *port_name))
WEFT_MPI_FN(int, Lookup_name, (const char *service_name, MPI_Info info, char *port_name))
WEFT_MPI_FN(int, Comm_disconnect, (MPI_Comm * comm))
WEFT_MPI_FN(int, Comm_join, (int fd, MPI_Comm *intercomm))

/* One-sided (chapter 11) */
WEFT_MPI_FN(int, Win_create,
            (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
WEFT_MPI_FN(int, Win_allocate,
            (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
             MPI_Win *win))
WEFT_MPI_FN(int, Win_allocate_shared,
            (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
             MPI_Win *win))
WEFT_MPI_FN(int, Win_shared_query,
            (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr))
WEFT_MPI_FN(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
WEFT_MPI_FN(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
WEFT_MPI_FN(int, Win_detach, (MPI_Win win, const void *base))
WEFT_MPI_FN(int, Win_free, (MPI_Win * win))
WEFT_MPI_FN(int, Win_get_group, (MPI_Win win, MPI_Group *group))
WEFT_MPI_FN(int, Win_set_info, (MPI_Win win, MPI_Info info))
WEFT_MPI_FN(int, Win_get_info, (MPI_Win win, MPI_Info *info_used))
WEFT_MPI_FN(int, Put,
            (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win))
WEFT_MPI_FN(int, Get,
            (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
WEFT_MPI_FN(int, Accumulate,
            (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Op op, MPI_Win win))
WEFT_MPI_FN(int, Get_accumulate,
            (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
             MPI_Win win))
WEFT_MPI_FN(int, Fetch_and_op,
            (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
             MPI_Aint target_disp, MPI_Op op, MPI_Win win))
WEFT_MPI_FN(int, Compare_and_swap,
            (const void *origin_addr, const void *compare_addr, void *result_addr,
             MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
WEFT_MPI_FN(int, Rput,
            (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win, MPI_Request *request))
WEFT_MPI_FN(int, Rget,
            (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request *request))
WEFT_MPI_FN(int, Raccumulate,
            (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Op op, MPI_Win win, MPI_Request *request))
WEFT_MPI_FN(int, Rget_accumulate,
            (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
             MPI_Win win, MPI_Request *request))
WEFT_MPI_FN(int, Win_fence, (int assert, MPI_Win win))
WEFT_MPI_FN(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
WEFT_MPI_FN(int, Win_complete, (MPI_Win win))
WEFT_MPI_FN(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
WEFT_MPI_FN(int, Win_wait, (MPI_Win win))
WEFT_MPI_FN(int, Win_test, (MPI_Win win, int *flag))
WEFT_MPI_FN(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
WEFT_MPI_FN(int, Win_lock_all, (int assert, MPI_Win win))
WEFT_MPI_FN(int, Win_unlock, (int rank, MPI_Win win))
WEFT_MPI_FN(int, Win_unlock_all, (MPI_Win win))
WEFT_MPI_FN(int, Win_flush, (int rank, MPI_Win win))
WEFT_MPI_FN(int, Win_flush_all, (MPI_Win win))
WEFT_MPI_FN(int, Win_flush_local, (int rank, MPI_Win win))
WEFT_MPI_FN(int, Win_flush_local_all, (MPI_Win win))
WEFT_MPI_FN(int, Win_sync, (MPI_Win win))

/* I/O (chapter 13), mpi_file.c: POSIX files under views, individual and
 * shared file pointers; the non-blocking and split collective calls complete
 * at once. */
WEFT_MPI_FN(int, File_open,
            (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))
WEFT_MPI_FN(int, File_close, (MPI_File * fh))
WEFT_MPI_FN(int, File_delete, (const char *filename, MPI_Info info))
WEFT_MPI_FN(int, File_set_size, (MPI_File fh, MPI_Offset size))
WEFT_MPI_FN(int, File_preallocate, (MPI_File fh, MPI_Offset size))
WEFT_MPI_FN(int, File_get_size, (MPI_File fh, MPI_Offset *size))
WEFT_MPI_FN(int, File_get_group, (MPI_File fh, MPI_Group *group))
WEFT_MPI_FN(int, File_get_amode, (MPI_File fh, int *amode))
WEFT_MPI_FN(int, File_set_info, (MPI_File fh, MPI_Info info))
WEFT_MPI_FN(int, File_get_info, (MPI_File fh, MPI_Info *info_used))
WEFT_MPI_FN(int, File_set_view,
            (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
             const char *datarep, MPI_Info info))
WEFT_MPI_FN(int, File_get_view,
            (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
             char *datarep))
#define WEFT_MPI_FILE_AT(name, buf_t)                                                              \
    WEFT_MPI_FN(int, name,                                                                         \
                (MPI_File fh, MPI_Offset offset, buf_t buf, int count, MPI_Datatype datatype,      \
                 MPI_Status *status))
#define WEFT_MPI_FILE_IAT(name, buf_t)                                                             \
    WEFT_MPI_FN(int, name,                                                                         \
                (MPI_File fh, MPI_Offset offset, buf_t buf, int count, MPI_Datatype datatype,      \
                 MPI_Request *request))
#define WEFT_MPI_FILE_FP(name, buf_t)                                                              \
    WEFT_MPI_FN(int, name,                                                                         \
                (MPI_File fh, buf_t buf, int count, MPI_Datatype datatype, MPI_Status *status))
#define WEFT_MPI_FILE_IFP(name, buf_t)                                                             \
    WEFT_MPI_FN(int, name,                                                                         \
                (MPI_File fh, buf_t buf, int count, MPI_Datatype datatype, MPI_Request *request))
WEFT_MPI_FILE_AT(File_read_at, void *)
WEFT_MPI_FILE_AT(File_read_at_all, void *)
WEFT_MPI_FILE_AT(File_write_at, const void *)
WEFT_MPI_FILE_AT(File_write_at_all, const void *)
WEFT_MPI_FILE_IAT(File_iread_at, void *)
WEFT_MPI_FILE_IAT(File_iread_at_all, void *)
WEFT_MPI_FILE_IAT(File_iwrite_at, const void *)
WEFT_MPI_FILE_IAT(File_iwrite_at_all, const void *)
WEFT_MPI_FILE_FP(File_read, void *)
WEFT_MPI_FILE_FP(File_read_all, void *)
WEFT_MPI_FILE_FP(File_write, const void *)
WEFT_MPI_FILE_FP(File_write_all, const void *)
WEFT_MPI_FILE_IFP(File_iread, void *)
WEFT_MPI_FILE_IFP(File_iread_all, void *)
WEFT_MPI_FILE_IFP(File_iwrite, const void *)
WEFT_MPI_FILE_IFP(File_iwrite_all, const void *)
WEFT_MPI_FILE_FP(File_read_shared, void *)
WEFT_MPI_FILE_FP(File_write_shared, const void *)
WEFT_MPI_FILE_IFP(File_iread_shared, void *)
WEFT_MPI_FILE_IFP(File_iwrite_shared, const void *)
WEFT_MPI_FILE_FP(File_read_ordered, void *)
WEFT_MPI_FILE_FP(File_write_ordered, const void *)
#undef WEFT_MPI_FILE_AT
#undef WEFT_MPI_FILE_IAT
#undef WEFT_MPI_FILE_FP
#undef WEFT_MPI_FILE_IFP
WEFT_MPI_FN(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence))
WEFT_MPI_FN(int, File_get_position, (MPI_File fh, MPI_Offset *offset))
WEFT_MPI_FN(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
WEFT_MPI_FN(int, File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
WEFT_MPI_FN(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))
WEFT_MPI_FN(int, File_read_at_all_begin,
            (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype))
WEFT_MPI_FN(int, File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
WEFT_MPI_FN(int, File_write_at_all_begin,
            (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype))
WEFT_MPI_FN(int, File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
WEFT_MPI_FN(int, File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
WEFT_MPI_FN(int, File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
WEFT_MPI_FN(int, File_write_all_begin,
            (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
WEFT_MPI_FN(int, File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
WEFT_MPI_FN(int, File_read_ordered_begin,
            (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
WEFT_MPI_FN(int, File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
WEFT_MPI_FN(int, File_write_ordered_begin,
            (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
WEFT_MPI_FN(int, File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
WEFT_MPI_FN(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent))
WEFT_MPI_FN(int, Register_datarep,
            (const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
             MPI_Datarep_conversion_function *write_conversion_fn,
             MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state))
WEFT_MPI_FN(int, File_set_atomicity, (MPI_File fh, int flag))
WEFT_MPI_FN(int, File_get_atomicity, (MPI_File fh, int *flag))
WEFT_MPI_FN(int, File_sync, (MPI_File fh))

/* Sessions (MPI 4.0 §11.3): process sets mpi://WORLD and mpi://SELF, groups
 * from them, communicators from groups. */
WEFT_MPI_FN(int, Session_init, (MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session))
WEFT_MPI_FN(int, Session_finalize, (MPI_Session * session))
WEFT_MPI_FN(int, Session_get_info, (MPI_Session session, MPI_Info *info_used))
WEFT_MPI_FN(int, Session_get_num_psets, (MPI_Session session, MPI_Info info, int *npset_names))
WEFT_MPI_FN(int, Session_get_nth_pset,
            (MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name))
WEFT_MPI_FN(int, Session_get_pset_info,
            (MPI_Session session, const char *pset_name, MPI_Info *info))
WEFT_MPI_FN(int, Group_from_session_pset,
            (MPI_Session session, const char *pset_name, MPI_Group *newgroup))
WEFT_MPI_FN(int, Comm_create_from_group,
            (MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
             MPI_Comm *newcomm))
WEFT_MPI_FN(int, Intercomm_create_from_groups,
            (MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader,
             const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
             MPI_Comm *newintercomm))
WEFT_MPI_FN(int, Session_create_errhandler,
            (MPI_Session_errhandler_function * session_errhandler_fn, MPI_Errhandler *errhandler))
WEFT_MPI_FN(int, Session_set_errhandler, (MPI_Session session, MPI_Errhandler errhandler))
WEFT_MPI_FN(int, Session_get_errhandler, (MPI_Session session, MPI_Errhandler *errhandler))
WEFT_MPI_FN(int, Session_call_errhandler, (MPI_Session session, int errorcode))

/* Handle conversion */
WEFT_MPI_FN(MPI_Fint, Comm_c2f, (MPI_Comm comm))
WEFT_MPI_FN(MPI_Comm, Comm_f2c, (MPI_Fint comm))
WEFT_MPI_FN(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
WEFT_MPI_FN(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
WEFT_MPI_FN(MPI_Fint, Group_c2f, (MPI_Group group))
WEFT_MPI_FN(MPI_Group, Group_f2c, (MPI_Fint group))
WEFT_MPI_FN(MPI_Fint, Request_c2f, (MPI_Request request))
WEFT_MPI_FN(MPI_Request, Request_f2c, (MPI_Fint request))
WEFT_MPI_FN(MPI_Fint, Op_c2f, (MPI_Op op))
WEFT_MPI_FN(MPI_Op, Op_f2c, (MPI_Fint op))
WEFT_MPI_FN(MPI_Fint, Info_c2f, (MPI_Info info))
WEFT_MPI_FN(MPI_Info, Info_f2c, (MPI_Fint info))
WEFT_MPI_FN(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
WEFT_MPI_FN(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
WEFT_MPI_FN(MPI_Fint, Session_c2f, (MPI_Session session))
WEFT_MPI_FN(MPI_Session, Session_f2c, (MPI_Fint session))
WEFT_MPI_FN(MPI_Fint, Win_c2f, (MPI_Win win))
WEFT_MPI_FN(MPI_Win, Win_f2c, (MPI_Fint win))
WEFT_MPI_FN(MPI_Fint, File_c2f, (MPI_File file))
WEFT_MPI_FN(MPI_File, File_f2c, (MPI_Fint file))
WEFT_MPI_FN(MPI_Fint, Message_c2f, (MPI_Message message))
WEFT_MPI_FN(MPI_Message, Message_f2c, (MPI_Fint message))
WEFT_MPI_FN(int, Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status))
WEFT_MPI_FN(int, Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status))

/* The tools information interface (14.3): callable before MPI_Init and after
 * MPI_Finalize; errors are returned, never given to an error handler. */
WEFT_MPI_FN(int, T_init_thread, (int required, int *provided))
WEFT_MPI_FN(int, T_finalize, (void))
WEFT_MPI_FN(int, T_enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len))
WEFT_MPI_FN(int, T_enum_get_item,
            (MPI_T_enum enumtype, int index, int *value, char *name, int *name_len))
WEFT_MPI_FN(int, T_cvar_get_num, (int *num_cvar))
WEFT_MPI_FN(int, T_cvar_get_info,
            (int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
             MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope))
WEFT_MPI_FN(int, T_cvar_get_index, (const char *name, int *cvar_index))
WEFT_MPI_FN(int, T_cvar_handle_alloc,
            (int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count))
WEFT_MPI_FN(int, T_cvar_handle_free, (MPI_T_cvar_handle * handle))
WEFT_MPI_FN(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf))
WEFT_MPI_FN(int, T_cvar_write, (MPI_T_cvar_handle handle, const void *buf))
WEFT_MPI_FN(int, T_pvar_get_num, (int *num_pvar))
WEFT_MPI_FN(int, T_pvar_get_info,
            (int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
             MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
             int *readonly, int *continuous, int *atomic))
WEFT_MPI_FN(int, T_pvar_get_index, (const char *name, int var_class, int *pvar_index))
WEFT_MPI_FN(int, T_pvar_session_create, (MPI_T_pvar_session * session))
WEFT_MPI_FN(int, T_pvar_session_free, (MPI_T_pvar_session * session))
WEFT_MPI_FN(int, T_pvar_handle_alloc,
            (MPI_T_pvar_session session, int pvar_index, void *obj_handle,
             MPI_T_pvar_handle *handle, int *count))
WEFT_MPI_FN(int, T_pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle))
WEFT_MPI_FN(int, T_pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
WEFT_MPI_FN(int, T_pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
WEFT_MPI_FN(int, T_pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
WEFT_MPI_FN(int, T_pvar_write,
            (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf))
WEFT_MPI_FN(int, T_pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
WEFT_MPI_FN(int, T_pvar_readreset,
            (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
WEFT_MPI_FN(int, T_category_get_num, (int *num_cat))
WEFT_MPI_FN(int, T_category_get_info,
            (int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
             int *num_pvars, int *num_categories))
WEFT_MPI_FN(int, T_category_get_index, (const char *name, int *cat_index))
WEFT_MPI_FN(int, T_category_get_cvars, (int cat_index, int len, int indices[]))
WEFT_MPI_FN(int, T_category_get_pvars, (int cat_index, int len, int indices[]))
WEFT_MPI_FN(int, T_category_get_categories, (int cat_index, int len, int indices[]))
WEFT_MPI_FN(int, T_category_changed, (int *stamp))

/* Removed in MPI 3.0 (MPI 3.1 §16.2) and still called by old programs (HPL,
 * and so HPCC, among them), as MPICH keeps them: each is its MPI-2 successor.
 * MPI_LB and MPI_UB markers are not there: use MPI_Type_create_resized. */
WEFT_MPI_FN(int, Address, (void *location, MPI_Aint *address))
WEFT_MPI_FN(int, Type_hvector,
            (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
             MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_hindexed,
            (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
             MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_struct,
            (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
             MPI_Datatype array_of_types[], MPI_Datatype *newtype))
WEFT_MPI_FN(int, Type_extent, (MPI_Datatype datatype, MPI_Aint *extent))
WEFT_MPI_FN(int, Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement))
WEFT_MPI_FN(int, Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement))
WEFT_MPI_FN(int, Errhandler_create, (MPI_Handler_function * function, MPI_Errhandler *errhandler))
WEFT_MPI_FN(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
WEFT_MPI_FN(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))
