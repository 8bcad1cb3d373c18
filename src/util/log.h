/* Logging to stderr, prefixed with the rank. Level from WEFT_LOG
 * (off, error, warn, info, debug; default warn). */
#ifndef WEFT_LOG_H
#define WEFT_LOG_H

enum {
    WEFT_LOG_OFF = -1,
    WEFT_LOG_ERROR = 0,
    WEFT_LOG_WARN = 1,
    WEFT_LOG_INFO = 2,
    WEFT_LOG_DEBUG = 3
};

/* The level in force (read once from WEFT_LOG). */
int weft__log_level(void);
/* Forget the level read, so the next message reads WEFT_LOG again (after an
 * override of it, see param.h). */
void weft__log_reread(void);
/* Rank shown in the prefix; -1 until the bootstrap knows it. */
void weft__log_set_rank(int rank);
void weft__log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define weft_log_error(...)                                                                        \
    do {                                                                                           \
        if (weft__log_level() >= WEFT_LOG_ERROR)                                                   \
            weft__log(WEFT_LOG_ERROR, __VA_ARGS__);                                                \
    } while (0)
#define weft_log_warn(...)                                                                         \
    do {                                                                                           \
        if (weft__log_level() >= WEFT_LOG_WARN)                                                    \
            weft__log(WEFT_LOG_WARN, __VA_ARGS__);                                                 \
    } while (0)
#define weft_log_info(...)                                                                         \
    do {                                                                                           \
        if (weft__log_level() >= WEFT_LOG_INFO)                                                    \
            weft__log(WEFT_LOG_INFO, __VA_ARGS__);                                                 \
    } while (0)
#define weft_log_debug(...)                                                                        \
    do {                                                                                           \
        if (weft__log_level() >= WEFT_LOG_DEBUG)                                                   \
            weft__log(WEFT_LOG_DEBUG, __VA_ARGS__);                                                \
    } while (0)

#endif
