/* Logging. The level is read once; the rank prefix is per process because log
 * lines go to the process's stderr, which weftrun forwards. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/param.h"

/* The level plus 2, so that 0 means "not read yet" and 1 means "off". */
static atomic_int log_level;
static atomic_int log_rank = -1;

int weft__log_level(void)
{
    int level = atomic_load_explicit(&log_level, memory_order_relaxed);
    if (level)
        return level - 2;
    const char *v = weft__param_str("WEFT_LOG", NULL);
    level = WEFT_LOG_WARN;
    if (v) {
        if (!strcmp(v, "off"))
            level = WEFT_LOG_OFF;
        else if (!strcmp(v, "error"))
            level = WEFT_LOG_ERROR;
        else if (!strcmp(v, "info"))
            level = WEFT_LOG_INFO;
        else if (!strcmp(v, "debug"))
            level = WEFT_LOG_DEBUG;
    }
    atomic_store_explicit(&log_level, level + 2, memory_order_relaxed);
    return level;
}

void weft__log_reread(void)
{
    atomic_store_explicit(&log_level, 0, memory_order_relaxed);
}

void weft__log_set_rank(int rank)
{
    atomic_store_explicit(&log_rank, rank, memory_order_relaxed);
}

void weft__log(int level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    char line[1024];
    int rank = atomic_load_explicit(&log_rank, memory_order_relaxed);
    int n;
    if (rank >= 0)
        n = snprintf(line, sizeof line, "weft[%d:%d] %s: ", rank, (int)getpid(), names[level & 3]);
    else
        n = snprintf(line, sizeof line, "weft[%d] %s: ", (int)getpid(), names[level & 3]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof line)
        n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line - 1)
        n = sizeof line - 2;
    line[n++] = '\n';
    /* One write per line so lines of several ranks do not interleave. */
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}
