/* WEFT_* parameters read from the environment. Every parameter is declared in
 * param.c's table, with its default and a sentence, so weft-info can list them. */
#ifndef WEFT_PARAM_H
#define WEFT_PARAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct weft_param_desc {
    const char *name;  /* "WEFT_EAGER_CREDITS" */
    const char *deflt; /* default value, as text */
    const char *help;  /* one sentence */
} weft_param_desc_t;

/* The table of every parameter weft reads; *count receives its length. */
const weft_param_desc_t *weft__param_table(size_t *count);

/* Read an unsigned size ("64K", "4M", "1G" suffixes allowed), or the default
 * when unset or malformed (a malformed value is logged once). */
uint64_t weft__param_size(const char *name, uint64_t deflt);
/* Read a string, or deflt when unset. */
const char *weft__param_str(const char *name, const char *deflt);

/* Overrides (the MPI tools interface writes them): a value set here wins over
 * the environment for every later read. Index in weft__param_table; value
 * NULL removes the override. Not for a process whose engine is running: a
 * read may hold the string an override replaces. Returns 0, -1 for a bad
 * index, -2 without memory. */
int weft__param_set(size_t index, const char *value);
/* The value in effect: the override, else the environment, else NULL. */
const char *weft__param_get(size_t index);

#endif
