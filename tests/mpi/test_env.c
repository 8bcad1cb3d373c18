/* Environment and errors: init state, thread levels, versions, time, processor
 * name, memory, error classes/strings/user codes, error handlers (return,
 * user function), and argument errors reported with the right class. */
#include "mpitest.h"

static int handler_calls, handler_code;
static void my_handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
}

static void environment(void)
{
    int flag = 0, v, sv, len, provided;
    MPI_MUST(MPI_Initialized(&flag));
    CHECK(flag == 1);
    MPI_MUST(MPI_Finalized(&flag));
    CHECK(flag == 0);
    MPI_MUST(MPI_Get_version(&v, &sv));
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION && v == 3 && sv == 1);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_MUST(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && (int)strlen(lib) == len);
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_MUST(MPI_Get_processor_name(host, &len));
    CHECK(len > 0 && (int)strlen(host) == len);
    MPI_MUST(MPI_Query_thread(&provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
    MPI_MUST(MPI_Is_thread_main(&flag));
    CHECK(flag == 1);
    double t0 = MPI_Wtime(), tick = MPI_Wtick();
    CHECK(tick > 0 && tick < 1e-3);
    CHECK(MPI_Wtime() >= t0);
    void *mem = NULL;
    MPI_MUST(MPI_Alloc_mem(1000, MPI_INFO_NULL, &mem));
    CHECK(mem != NULL && ((uintptr_t)mem % 64) == 0);
    memset(mem, 1, 1000);
    MPI_MUST(MPI_Free_mem(mem));
    int *tag_ub;
    MPI_MUST(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && *tag_ub >= 32767);
    int *usize;
    MPI_MUST(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    CHECK(flag && *usize >= mt_size);
}

static void error_codes(void)
{
    char s[MPI_MAX_ERROR_STRING];
    int len, cls;
    MPI_MUST(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len));
    CHECK(strstr(s, "truncated") != NULL && len == (int)strlen(s));
    MPI_MUST(MPI_Error_class(MPI_ERR_RANK, &cls));
    CHECK(cls == MPI_ERR_RANK);
    int newclass, newcode;
    MPI_MUST(MPI_Add_error_class(&newclass));
    CHECK(newclass > MPI_ERR_LASTCODE);
    MPI_MUST(MPI_Add_error_code(newclass, &newcode));
    MPI_MUST(MPI_Add_error_string(newcode, "weft test error"));
    MPI_MUST(MPI_Error_class(newcode, &cls));
    CHECK(cls == newclass);
    MPI_MUST(MPI_Error_string(newcode, s, &len));
    CHECK(!strcmp(s, "weft test error"));
    int *last, flag;
    MPI_MUST(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= newcode);
}

static void bad_arguments(void)
{
    MPI_MUST(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x = 0;
    CHECK(mt_class(MPI_Send(&x, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD)) == MPI_ERR_RANK);
    CHECK(mt_class(MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD)) == MPI_ERR_RANK);
    CHECK(mt_class(MPI_Send(&x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD)) == MPI_ERR_TAG);
    CHECK(mt_class(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_COUNT);
    CHECK(mt_class(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_TYPE);
    CHECK(mt_class(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL)) == MPI_ERR_COMM);
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK(mt_class(MPI_Irecv(&x, 1, MPI_INT, mt_size + 3, 0, MPI_COMM_WORLD, &r)) == MPI_ERR_RANK);
    CHECK(mt_class(MPI_Start(&r)) == MPI_ERR_REQUEST);
    int flag;
    CHECK(mt_class(MPI_Iprobe(0, -5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE)) == MPI_ERR_TAG);
    MPI_Comm bad = MPI_COMM_NULL;
    CHECK(mt_class(MPI_Comm_free(&bad)) == MPI_ERR_COMM);
    MPI_Comm world = MPI_COMM_WORLD;
    CHECK(mt_class(MPI_Comm_free(&world)) == MPI_ERR_COMM);
    /* A user handler is called with the code, and the code is returned. */
    MPI_Errhandler eh;
    MPI_MUST(MPI_Comm_create_errhandler(my_handler, &eh));
    MPI_MUST(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    int rc = MPI_Send(&x, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD);
    CHECK(mt_class(rc) == MPI_ERR_RANK && handler_calls == 1 && handler_code == rc);
    MPI_MUST(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER);
    MPI_Errhandler got;
    MPI_MUST(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == eh);
    MPI_MUST(MPI_Errhandler_free(&got));
    MPI_MUST(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL);
    /* Still attached to the world: freeing the handle does not detach it. */
    rc = MPI_Send(&x, 1, MPI_INT, -9, 0, MPI_COMM_WORLD);
    CHECK(handler_calls == 3);
    MPI_MUST(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* Files: the default handler is MPI_ERRORS_RETURN, on MPI_FILE_NULL. */
    MPI_File fh;
    rc = MPI_File_open(MPI_COMM_SELF, "/nonexistent/x", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc != MPI_SUCCESS);
    /* A window's creation reports its errors on the communicator. */
    MPI_MUST(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Win win;
    rc = MPI_Win_create(&x, sizeof x, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CHECK(mt_class(rc) == MPI_ERR_DISP && win == MPI_WIN_NULL);
    MPI_MUST(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    int flag;
    MPI_Initialized(&flag);
    if (flag)
        return 1;
    mt_init_multiple(&argc, &argv);
    environment();
    error_codes();
    bad_arguments();
    int rc = mt_finish("env");
    MPI_Finalized(&flag);
    return flag ? rc : 1;
}
