/* idn.h — where domain.c gets libidn2 from. Two providers with one symbol:
 * idn_dl.c (in the library) opens libidn2.so.0 on the first international
 * name; idn_static.c (linked before the library into the static drun-policy)
 * gives the functions linked in. Whichever object the link names first wins. */
#ifndef DRUN_IDN_H
#define DRUN_IDN_H

#include <stdint.h>

typedef struct idn_api {
    int (*lookup_u8)(const uint8_t *, uint8_t **, int);
    const char *(*strerror)(int);
    void (*free)(void *);
} idn_api_t;

/* The functions, or NULL with *why saying why they cannot be had (not freed
 * by the caller; the same answer for the life of the process). */
const idn_api_t *idn_api(const char **why);

#endif
