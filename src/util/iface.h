/* The local address to listen on (iface.c). */
#ifndef WEFT_UTIL_IFACE_H
#define WEFT_UTIL_IFACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "util/util.h"
#include "weft/weft.h"

/* Pick the local address to listen on from spec (WEFT_TCP_IF: an interface
 * name or a CIDR; NULL or empty: the first non-loopback interface that is
 * up, else loopback). Fills *ss (port 0), *sslen and a name for logs.
 * WEFT_OK, or an error (logged): WEFT_EINVAL for a spec that is neither,
 * WEFT_ENOTFOUND when it matches nothing. */
WEFT_INTERNAL int weft__iface_pick(const char *spec, struct sockaddr_storage *ss, socklen_t *sslen,
                                   char *name, size_t namelen);

#endif
