/* explain_int.h — what explain.c (answers) and explain_overview.c (the
 * whole policy) share: the state of one explain run and two small helpers.
 */
#ifndef DRUN_EXPLAIN_INT_H
#define DRUN_EXPLAIN_INT_H

#include "bwrap.h"
#include "explain.h"
#include "sbpl.h"

struct explain {
    const policy_t *pol;
    facts_t *facts[2];         /* indexed by target_t */
    bool own_facts[2];
    const char *facts_from[2]; /* "golden/facts-linux.json", "this host (probed)", ... */
    resolved_t *res[2];
    roots_t roots[2];          /* concrete session roots per target */
    sbpl_t *sbpl;              /* NULL when the profile could not be built */
    bwrap_t *bw;               /* NULL when the plan failed: bw_err */
    char *bw_err;
    bool bw_exec;              /* exec-time plan (live filesystem) rather than the template */
    VEC(bw_op_t) bw_skipped;   /* exec-time plan: the -try binds bwrap skips here (source missing) */
    const char *scratch_made;  /* the empty scratch dir made for the exec-time plan, or NULL */
    diag_list_t diags;
    arena_t a;
};

/* A path of target t as explain shows it (~/x, ${WORKSPACE}/x). */
static inline const char *show(explain_t *e, target_t t, const char *abs)
{
    return explain_show_path(e->res[t], &e->roots[t], abs, &e->a);
}

/* Does level l allow a read, or a write? */
static inline bool allowed(level_t l, bool write) { return write ? l == LVL_WRITE : l >= LVL_READ; }

#endif
