/* C/Fortran handle conversion (MPI 3.1 §17.2.4): fixed indices of predefined
 * handles, round trips of created ones, stable indices, unknown indices give
 * the null handle; status conversion with a count beyond 32 bits. */
#include "topo_check.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) == 0);
    CHECK(MPI_Comm_c2f(MPI_COMM_SELF) == 1);
    CHECK(MPI_Comm_c2f(MPI_COMM_NULL) == 2);
    CHECK(MPI_Comm_f2c(0) == MPI_COMM_WORLD && MPI_Comm_f2c(1) == MPI_COMM_SELF);
    CHECK(MPI_Comm_f2c(2) == MPI_COMM_NULL && MPI_Comm_f2c(123456) == MPI_COMM_NULL);
    CHECK(MPI_Comm_f2c(-1) == MPI_COMM_NULL);
    MPI_Comm dup;
    MUSTMPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Fint fd = MPI_Comm_c2f(dup);
    CHECK(fd > 2 && MPI_Comm_c2f(dup) == fd && MPI_Comm_f2c(fd) == dup);
    MPI_Comm_free(&dup);

    CHECK(MPI_Group_c2f(MPI_GROUP_NULL) == 0 && MPI_Group_c2f(MPI_GROUP_EMPTY) == 1);
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Fint fg = MPI_Group_c2f(g);
    CHECK(fg > 1 && MPI_Group_f2c(fg) == g && MPI_Group_f2c(99999) == MPI_GROUP_NULL);
    MPI_Group_free(&g);

    /* Datatypes: the order of WEFT_MPI_PREDEFINED_TYPES from 1 (MPI_CHAR
     * first, MPI_SHORT then MPI_INT). */
    CHECK(MPI_Type_c2f(MPI_DATATYPE_NULL) == 0);
    CHECK(MPI_Type_c2f(MPI_CHAR) == 1 && MPI_Type_c2f(MPI_INT) == 3);
    CHECK(MPI_Type_f2c(3) == MPI_INT && MPI_Type_f2c(-5) == MPI_DATATYPE_NULL);
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);

    CHECK(MPI_Op_c2f(MPI_OP_NULL) == 0 && MPI_Op_c2f(MPI_MAX) == 1 && MPI_Op_c2f(MPI_SUM) == 3);
    CHECK(MPI_Op_f2c(3) == MPI_SUM && MPI_Op_f2c(1000) == MPI_OP_NULL);

    CHECK(MPI_Errhandler_c2f(MPI_ERRHANDLER_NULL) == 0);
    CHECK(MPI_Errhandler_c2f(MPI_ERRORS_ARE_FATAL) == 1);
    CHECK(MPI_Errhandler_c2f(MPI_ERRORS_RETURN) == 2);
    CHECK(MPI_Errhandler_f2c(2) == MPI_ERRORS_RETURN);

    CHECK(MPI_Info_c2f(MPI_INFO_NULL) == 0 && MPI_Info_c2f(MPI_INFO_ENV) == 1);
    MPI_Info info;
    MUSTMPI(MPI_Info_create(&info));
    MPI_Fint fi = MPI_Info_c2f(info);
    CHECK(fi > 1 && MPI_Info_f2c(fi) == info);
    MPI_Info_free(&info);

    CHECK(MPI_Request_c2f(MPI_REQUEST_NULL) == 0 && MPI_Request_f2c(0) == MPI_REQUEST_NULL);
    int v = 42, got = 0;
    MPI_Request r;
    MUSTMPI(MPI_Irecv(&got, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &r));
    MPI_Fint fr = MPI_Request_c2f(r);
    CHECK(fr > 0);
    MPI_Request back = MPI_Request_f2c(fr);
    CHECK(back == r);
    MUSTMPI(MPI_Send(&v, 1, MPI_INT, 0, 9, MPI_COMM_SELF));
    MUSTMPI(MPI_Wait(&back, MPI_STATUS_IGNORE));
    CHECK(got == 42);

    CHECK(MPI_Win_c2f(MPI_WIN_NULL) == 0 && MPI_Win_f2c(7) == MPI_WIN_NULL);
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(7) == MPI_FILE_NULL);
    CHECK(MPI_Message_c2f(MPI_MESSAGE_NULL) == 0 && MPI_Message_c2f(MPI_MESSAGE_NO_PROC) == 1);
    CHECK(MPI_Message_f2c(1) == MPI_MESSAGE_NO_PROC && MPI_Message_f2c(2) == MPI_MESSAGE_NULL);

    /* Status: the public fields at MPI_F_*, the count whole. */
    MPI_Status st = {.MPI_SOURCE = 3, .MPI_TAG = 77, .MPI_ERROR = MPI_ERR_TRUNCATE}, st2;
    MPI_Status_set_cancelled(&st, 1);
    st.weft_count = (5ll << 32) + 12345;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MUSTMPI(MPI_Status_c2f(&st, f));
    CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 77 && f[MPI_F_ERROR] == MPI_ERR_TRUNCATE);
    memset(&st2, 0, sizeof st2);
    MUSTMPI(MPI_Status_f2c(f, &st2));
    int flag = 0;
    MPI_Test_cancelled(&st2, &flag);
    CHECK(st2.MPI_SOURCE == 3 && st2.MPI_TAG == 77 && st2.MPI_ERROR == MPI_ERR_TRUNCATE);
    CHECK(flag && st2.weft_count == st.weft_count);
    CHECK_CLASS(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG);
    return t_finish("mpi_handle");
}
