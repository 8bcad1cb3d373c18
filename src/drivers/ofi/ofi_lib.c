/* libfabric, loaded on the driver's first start (ofi_int.h says why). The
 * library stays loaded until the process ends: providers keep threads and
 * handlers that an unload would pull from under them. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "drivers/ofi/ofi_int.h"
#include "util/log.h"
#include "util/param.h"

weft__ofi_lib_t weft__fi;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc = WEFT_EUNSUPPORTED;
static char why[512]; /* why it is not loaded */

/* A function of the library, or NULL (why says so). */
static void *sym(void *h, const char *lib, const char *name)
{
    void *f = dlsym(h, name);
    if (!f)
        snprintf(why, sizeof why, "%s has no %s", lib, name);
    return f;
}

static void load(void)
{
    const char *lib = weft__param_str("WEFT_OFI_LIBRARY", "libfabric.so.1");
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof why, "cannot load %s (%s)", lib, dlerror());
        return;
    }
    /* Its default functions are its newest: they fill structures at least
     * as large as the headers weft was built with, never smaller. */
    uint32_t (*version)(void) = (__typeof__(version))sym(h, lib, "fi_version");
    if (!version)
        return;
    uint32_t v = version(), built = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
    if (FI_MAJOR(v) != FI_MAJOR(built) || v < built) {
        snprintf(why, sizeof why, "%s is libfabric %u.%u; weft was built for %u.%u or a later 1.x",
                 lib, FI_MAJOR(v), FI_MINOR(v), FI_MAJOR(built), FI_MINOR(built));
        return;
    }
    weft__ofi_lib_t f;
#define LOAD(field, name) (f.field = (__typeof__(f.field))sym(h, lib, name))
    if (!LOAD(getinfo, "fi_getinfo") || !LOAD(freeinfo, "fi_freeinfo") ||
        !LOAD(dupinfo, "fi_dupinfo") || !LOAD(fabric, "fi_fabric") ||
        !LOAD(strerror, "fi_strerror"))
        return;
#undef LOAD
    weft__fi = f;
    weft_log_debug("ofi: loaded %s, libfabric %u.%u", lib, FI_MAJOR(v), FI_MINOR(v));
    load_rc = WEFT_OK;
}

int weft__ofi_load(const char **reason)
{
    pthread_once(&once, load);
    *reason = why;
    return load_rc;
}
