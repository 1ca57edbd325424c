/* idn_static.c — libidn2 linked in: the static drun-policy (Makefile) names
 * this object before the library, so idn_dl.c's dlopen is never linked into a
 * binary that has no dynamic loader to serve it. */
#include "idn.h"

#include <idn2.h>

static const idn_api_t api = {idn2_lookup_u8, idn2_strerror, idn2_free};

const idn_api_t *idn_api(const char **why)
{
    *why = NULL;
    return &api;
}
