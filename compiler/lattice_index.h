/* lattice_index.h — a resolved policy's rules filed by path, so that
 * level(path) costs time proportional to the path's depth, not to the
 * number of rules.
 *
 * lattice_level_of() reads every grant and cap; a tool that asks it about
 * each rule's path (lint, diff) is quadratic in the number of rules. The
 * index files each rule under its anchor (a grant's or literal cap's
 * absolute path, a glob's literal head); a question about P gathers the
 * rules filed under P and its ancestors, in their original order, and asks
 * lattice_level_of() about those alone, so that the answer (level and
 * verdict) is lattice_level_of()'s own.
 */
#ifndef DRUN_LATTICE_INDEX_H
#define DRUN_LATTICE_INDEX_H

#include "lattice.h"

typedef struct lattice_index lattice_index_t;

/* Files r's rules with their paths taken from roots. r and roots are
 * borrowed and must outlive the index (and not change while it lives). */
lattice_index_t *lattice_index_build(const resolved_t *r, const roots_t *roots);
void lattice_index_free(lattice_index_t *ix);

/* lattice_level_of(r, roots, path, why), from the index: the same level and
 * the same verdict (its rules point into r). path is absolute and
 * normalised. Not reentrant: the index keeps scratch space. */
level_t lattice_index_level_of(lattice_index_t *ix, const char *path, verdict_t *why);

/* The highest level a grant at or below path gives, or -1 when none does. */
long lattice_index_level_below(const lattice_index_t *ix, const char *path);

#endif
