/* The driver registry: the drivers this library has built in, and the joined
 * table of every WEFT_* parameter (the engine's and each driver's).
 *
 * The engine chooses drivers by what they say of themselves
 * (weft_driver_ops_t: reach, preference, native_only, rails_param,
 * strategy), never by name; a program adds drivers of its own to one context
 * through weft_init's params (WEFT_INIT_FIELD_DRIVERS). */
#ifndef WEFT_CORE_REGISTRY_H
#define WEFT_CORE_REGISTRY_H

#include <stddef.h>

#include "drivers/driver.h"
#include "util/param.h"

/* The built-in drivers, in order of preference between nodes; *count gets
 * their number. */
const weft_driver_ops_t *const *weft__drivers_builtin(size_t *count);

/* Every parameter: the engine's, then each built-in driver's, in that
 * order; *count gets their number. Thread-safe (built once). */
const weft_param_desc_t *weft__param_table(size_t *count);
/* Override parameter `index` of that table (see weft__param_override):
 * 0, -1 for a bad index, -2 without memory. */
int weft__param_set(size_t index, const char *value);
/* The value in effect of parameter `index`, or NULL (unset or bad index). */
const char *weft__param_get(size_t index);

#endif
