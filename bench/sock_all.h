/* All of a buffer through a non-blocking socket, busy-polling as a polling
 * engine does: the loops of bench/raw_tcp.c and of weft_pingpong --floor over
 * tcp. Header only, so that raw_tcp.c still builds alone. */
#ifndef WEFT_BENCH_SOCK_ALL_H
#define WEFT_BENCH_SOCK_ALL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Send (out) or receive len bytes at p; 0, or -1 with errno set (0 when the
 * peer closed). */
static inline int bench_sock_all(int fd, bool out, void *p, size_t len)
{
    char *b = p;
    while (len) {
        ssize_t n =
            out ? send(fd, b, len, MSG_DONTWAIT | MSG_NOSIGNAL) : recv(fd, b, len, MSG_DONTWAIT);
        if (n > 0) {
            b += n;
            len -= (size_t)n;
        } else if (n == 0) {
            errno = 0;
            return -1;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

#endif
