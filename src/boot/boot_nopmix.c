/* The PMIx backend when weft was built without PMIx: a process that a PMIx
 * launcher started learns why it cannot join that job, instead of silently
 * running as a singleton next to copies of itself. */
#include <stdlib.h>

#include "weft/weft.h"
#include "boot/boot_int.h"
#include "util/log.h"

int weft__boot_pmix_detected(void)
{
    return getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK") && !getenv("WEFT_BOOT_ADDR");
}

int weft__boot_pmix_init(weft_boot_pmix_t **out, int *rank, int *size, char *job_id,
                         uint8_t secret[WEFT_BOOT_SECRET_LEN])
{
    weft_log_error("boot: started by a PMIx launcher (PMIX_NAMESPACE is set), but this weft was "
                   "built without PMIx (install libpmix-dev and rebuild, or use weftrun)");
    return WEFT_EUNSUPPORTED;
}

int weft__boot_pmix_put(weft_boot_pmix_t *p, const char *key, const void *value, size_t len)
{
    return WEFT_EUNSUPPORTED;
}

int weft__boot_pmix_fence(weft_boot_pmix_t *p)
{
    return WEFT_EUNSUPPORTED;
}

int weft__boot_pmix_get(weft_boot_pmix_t *p, const char *key, void *value, size_t *len)
{
    return WEFT_EUNSUPPORTED;
}

int weft__boot_pmix_abort(weft_boot_pmix_t *p, int code, const char *msg)
{
    return WEFT_EUNSUPPORTED;
}

int weft__boot_pmix_spawn(weft_boot_pmix_t *p, const weft_boot_app_t *apps, int napps,
                          const char *hosts, const char *hostfile, const char *wdir)
{
    return WEFT_EUNSUPPORTED;
}

void weft__boot_pmix_fini(weft_boot_pmix_t *p) {}
