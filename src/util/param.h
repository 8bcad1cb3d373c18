/* WEFT_* parameters read from the environment. Every parameter is declared in
 * a table, with its default and a sentence, so weft-info can list them: the
 * engine's in param.c, each driver's in its ops (weft_driver_ops_t.params). */
#ifndef WEFT_PARAM_H
#define WEFT_PARAM_H

#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

/* A parameter's description: weft_param_t of the public API. */
typedef weft_param_t weft_param_desc_t;

/* The table of the engine's own parameters (drivers list theirs); *count
 * receives its length. core/params.h joins them all. */
const weft_param_desc_t *weft__param_engine_table(size_t *count);

/* Read an unsigned size ("64K", "4M", "1G" suffixes allowed), or the default
 * when unset or malformed (a malformed value is logged once). */
uint64_t weft__param_size(const char *name, uint64_t deflt);
/* Read a string, or deflt when unset. */
const char *weft__param_str(const char *name, const char *deflt);

/* Overrides (the MPI tools interface writes them): a value set here wins over
 * the environment for every later read of that name. value NULL removes the
 * override. Not for a process whose engine is running: a read may hold the
 * string an override replaces. Returns 0, -2 without memory. */
int weft__param_override(const char *name, const char *value);
/* The value in effect: the override, else the environment, else NULL. */
const char *weft__param_value(const char *name);

#endif
