/* suggest.h — "did you mean" for keys, options and rule IDs. */
#ifndef DRUN_SUGGEST_H
#define DRUN_SUGGEST_H

#include <stddef.h>

/* Optimal-string-alignment distance (Levenshtein plus adjacent swaps). */
size_t suggest_distance(const char *a, const char *b);

/* The candidate closest to word when it is close enough to be a plausible
 * typo (distance <= max(1, len/3)), else NULL. cands is NULL-terminated;
 * the result points into it. Ties go to the first candidate. */
const char *suggest(const char *word, const char *const *cands);

#endif
