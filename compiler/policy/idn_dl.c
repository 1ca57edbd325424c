/* idn_dl.c — libidn2, opened on the first international name.
 * Linking it would load it (and libunistring) before main in every binary
 * that links the compiler, about 0.7 ms per start on the benchmark VM, and few
 * policies name an international domain. The same library and the same calls;
 * a host without it rejects such a name rather than guess at its A-label. */
#include "idn.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static idn_api_t api;
static char error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_idn2(void)
{
    void *h = dlopen("libidn2.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        *(void **)&api.lookup_u8 = dlsym(h, "idn2_lookup_u8");
        *(void **)&api.strerror = dlsym(h, "idn2_strerror");
        *(void **)&api.free = dlsym(h, "idn2_free");
    }
    if (!api.lookup_u8 || !api.strerror || !api.free) {
        const char *e = dlerror();
        snprintf(error, sizeof error, "%s", e ? e : "libidn2.so.0 lacks idn2_lookup_u8");
        api.lookup_u8 = NULL;
    }
}

const idn_api_t *idn_api(const char **why)
{
    pthread_once(&once, open_idn2);
    *why = api.lookup_u8 ? NULL : error;
    return api.lookup_u8 ? &api : NULL;
}
