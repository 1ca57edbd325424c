/* compile.h — the compile driver: policy + facts → every artifact of SPEC §5
 * (policy.sb, bwrap.args, seccomp.bpf, seccomp.txt, policy.json), and the
 * atomic write of an artifact directory.
 */
#ifndef DRUN_COMPILE_H
#define DRUN_COMPILE_H

#include "bwrap.h"
#include "facts.h"
#include "lattice.h"
#include "policy.h"
#include "sbpl.h"

typedef struct compile_opts {
    bool linux_target;          /* build bwrap.args + seccomp.bpf */
    bool macos_target;          /* build policy.sb */
    const char *facts_files[2]; /* --facts files (each names its target); NULL: probe */
} compile_opts_t;

typedef struct compiled {
    const policy_t *pol; /* borrowed */
    facts_t *facts[2];   /* indexed by target_t; NULL when not built */
    resolved_t *res[2];
    sbpl_t *sbpl;        /* macOS profile */
    bwrap_t *bwrap;      /* Linux template */
    buf_t bwrap_args;    /* bwrap.args */
    buf_t seccomp;       /* seccomp.bpf */
    buf_t seccomp_txt;   /* its disassembly */
    buf_t manifest;      /* policy.json */
} compiled_t;

/* Facts for compiling p for target t: from the matching file of files (NULL
 * entries ignored), else probed on this host (Linux) or the built-in macOS
 * defaults. The probe records every path the policy names. */
facts_t *compile_facts_for(const policy_t *p, target_t t, const char *const files[2], char **err);

/* Compiles p. NULL with diags or *err (caller frees) on failure; nothing is
 * written anywhere. */
compiled_t *compile_policy(const policy_t *p, const compile_opts_t *o, diag_list_t *diags, char **err);
void compile_free(compiled_t *c);

/* As compile_policy, for the targets whose facts are given as JSON text
 * (by target_t; NULL: that target is not built). check recompiles with the
 * facts a manifest recorded. */
compiled_t *compile_policy_facts_json(const policy_t *p, const char *const facts_json[2], diag_list_t *diags,
                                      char **err);

/* Writes the built artifacts into dir (created if missing), each to a temp
 * file renamed into place, so a reader never sees half of one. */
bool compile_write(const compiled_t *c, const char *dir, char **err);

#endif
