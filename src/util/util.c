/* Status strings and time. */
#include <string.h>
#include <time.h>

#include "weft/weft.h"
#include "util/util.h"

const char *weft_strerror(int status)
{
    switch (status) {
#define WEFT_STATUS_TEXT(name, value, text)                                                        \
    case value:                                                                                    \
        return text;
        WEFT_STATUS_LIST(WEFT_STATUS_TEXT)
#undef WEFT_STATUS_TEXT
    }
    return "unknown status";
}

const char *weft_status_name(int status)
{
    switch (status) {
#define WEFT_STATUS_NAME(name, value, text)                                                        \
    case value:                                                                                    \
        return #name;
        WEFT_STATUS_LIST(WEFT_STATUS_NAME)
#undef WEFT_STATUS_NAME
    }
    return "WEFT_?";
}

uint64_t weft__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int weft__name_plain(const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len == 0 || len > max)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}
