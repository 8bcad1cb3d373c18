/* Ports between two jobs started apart (dynport.sh): the server job opens a
 * port and publishes it under a service name, the client job looks it up,
 * is refused with a wrong secret and a name that is no port, and waits while
 * a silent stranger holds the accept, then connects;
 * both talk over the intercommunicator and disconnect. "join": two ranks of
 * one job make an intercommunicator of a socket (MPI_Comm_join). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpitest.h"

static void talk(MPI_Comm inter, int side)
{
    int rank, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    int buf[256], got[256];
    for (int r = 0; r < rsize; r++) {
        mt_fill(buf, 256, side * 1000 + rank * 10 + r);
        MPI_MUST(MPI_Sendrecv(buf, 256, MPI_INT, r, 5, got, 256, MPI_INT, r, 5, inter,
                              MPI_STATUS_IGNORE));
        CHECK(mt_verify(got, 256, (1 - side) * 1000 + r * 10 + rank));
    }
    int one = 1, n = 0;
    MPI_MUST(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, inter));
    CHECK(n == rsize);
}

static int server(const char *service)
{
    char port[MPI_MAX_PORT_NAME] = "";
    if (mt_rank == 0) {
        MPI_MUST(MPI_Open_port(MPI_INFO_NULL, port));
        CHECK(strncmp(port, "weft-port:", 10) == 0);
        MPI_MUST(MPI_Publish_name(service, MPI_INFO_NULL, port));
        /* Published once only. */
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK(mt_class(MPI_Publish_name(service, MPI_INFO_NULL, port)) == MPI_ERR_SERVICE);
    }
    MPI_Comm inter;
    MPI_MUST(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    talk(inter, 0);
    MPI_MUST(MPI_Comm_disconnect(&inter));
    if (mt_rank == 0) {
        MPI_MUST(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
        char again[MPI_MAX_PORT_NAME];
        CHECK(mt_class(MPI_Lookup_name(service, MPI_INFO_NULL, again)) == MPI_ERR_NAME);
        CHECK(mt_class(MPI_Unpublish_name(service, MPI_INFO_NULL, port)) == MPI_ERR_SERVICE);
        MPI_MUST(MPI_Close_port(port));
        CHECK(mt_class(MPI_Close_port(port)) == MPI_ERR_PORT);
    }
    return mt_finish("dynport server");
}

/* A TCP connection to the port's address (weft-port:IPv4:PORT:SECRET) that
 * sends nothing; -1 if it cannot be made. */
static int silent_stranger(const char *port)
{
    char host[64];
    int pnum;
    if (sscanf(port, "weft-port:%63[0-9.]:%d:", host, &pnum) != 2)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)pnum)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int client(const char *service)
{
    int stranger = -1;
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (mt_rank == 0) {
        /* The server publishes when it is up: look until it has. */
        int rc = MPI_ERR_NAME;
        for (int i = 0; i < 6000 && rc != MPI_SUCCESS; i++) {
            rc = MPI_Lookup_name(service, MPI_INFO_NULL, port);
            if (rc != MPI_SUCCESS)
                usleep(10000);
        }
        CHECK(rc == MPI_SUCCESS);
        /* A stranger that connects and says nothing: the server's accept
         * gives up on it (10 s) and takes the next connection. */
        stranger = silent_stranger(port);
        CHECK(stranger >= 0);
        /* The same port with another secret: refused, and the server's
         * accept goes on with the next connection. */
        char wrong[MPI_MAX_PORT_NAME];
        snprintf(wrong, sizeof wrong, "%s", port);
        size_t l = strlen(wrong);
        wrong[l - 1] = wrong[l - 1] == '0' ? '1' : '0';
        MPI_Comm bad = MPI_COMM_WORLD;
        CHECK(mt_class(MPI_Comm_connect(wrong, MPI_INFO_NULL, 0, MPI_COMM_SELF, &bad)) ==
              MPI_ERR_PORT);
        CHECK(bad == MPI_COMM_NULL);
        CHECK(mt_class(MPI_Comm_connect("no-such-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &bad)) ==
              MPI_ERR_PORT);
    }
    MPI_Comm inter;
    MPI_MUST(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    if (stranger >= 0)
        close(stranger);
    talk(inter, 1);
    MPI_MUST(MPI_Comm_disconnect(&inter));
    return mt_finish("dynport client");
}

static int join(void)
{
    if (mt_size != 2) {
        MPI_Finalize();
        return 77;
    }
    int fd = -1;
    if (mt_rank == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        CHECK(bind(l, (struct sockaddr *)&a, len) == 0 && listen(l, 1) == 0 &&
              getsockname(l, (struct sockaddr *)&a, &len) == 0);
        int port = ntohs(a.sin_port);
        MPI_MUST(MPI_Send(&port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        int port;
        MPI_MUST(MPI_Recv(&port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                                .sin_port = htons((uint16_t)port)};
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    }
    CHECK(fd >= 0);
    MPI_Comm inter;
    MPI_MUST(MPI_Comm_join(fd, &inter));
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(rsize == 1);
    talk(inter, mt_rank);
    MPI_MUST(MPI_Comm_disconnect(&inter));
    close(fd);
    return mt_finish("dynport join");
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (argc > 2 && !strcmp(argv[1], "server"))
        return server(argv[2]);
    if (argc > 2 && !strcmp(argv[1], "client"))
        return client(argv[2]);
    if (argc > 1 && !strcmp(argv[1], "join"))
        return join();
    fprintf(stderr, "usage: dynport server|client SERVICE | join\n");
    MPI_Finalize();
    return 2;
}
