/* The slow paths of lock.h's mutex kind: the futex calls. Out of line, so
 * that the inline fast paths stay a few instructions. */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/lock.h"

void weft__lock_sleep(atomic_int *word)
{
    /* Returns at once if the word is no longer 2 (EAGAIN), on a wake, or on
     * a signal: the caller tries again in every case. */
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void weft__lock_wake(atomic_int *word)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
