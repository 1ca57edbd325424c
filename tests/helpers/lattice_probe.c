/* lattice_probe.c — what the compiler's own deciders say about a list of paths.
 *
 * For each absolute path on stdin (one per line) prints one line
 *   LATTICE SBPL BWRAP PATH
 * where LATTICE is lattice_level_of() (lattice.h), SBPL is sbpl_eval() on the
 * structured profile sbpl_build() makes from the same resolved policy, and
 * BWRAP is bwrap_eval() on a bwrap plan ("-" when no plan was asked for).
 * LATTICE and SBPL are asked about the object the path names on the target
 * (lattice_real_path: firmlinks, merged-/usr links, the symlinks the facts
 * know), as the kernel resolves a path before a sandbox rule sees it; BWRAP
 * about the path as written, since bwrap_eval() follows the sandbox's own
 * symlinks and a host symlink exists inside only where its directory is
 * mounted.
 * tests/suites/51-sbpl-eval holds these, the independent SBPL text evaluator
 * (sbpl_eval.c) and the hand-written probes (tests/enforce/probes/) to one truth.
 *
 *   lattice-probe CONFIG --workspace DIR --scratch DIR
 *                 [--target linux|macos] [--facts FILE] [--plan none|template|exec]
 *
 * --facts names a facts file (its target must match --target); without it
 * the facts come from this host's probe (Linux: $HOME and $PATH of this
 * process) or the built-in macOS defaults. --plan template evaluates the
 * compile-time bwrap.args template with the roots substituted; --plan exec
 * evaluates the exec-time plan, which reads the live filesystem at the roots.
 * Exit: 0, or 2 with a message when the policy or the plan cannot be built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwrap.h"
#include "compile.h"
#include "lattice.h"
#include "path.h"
#include "policy.h"
#include "sbpl.h"

static void usage(void)
{
    fprintf(stderr, "usage: lattice-probe CONFIG --workspace DIR --scratch DIR [--target linux|macos] "
                    "[--facts FILE] [--plan none|template|exec] < paths\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *config = NULL, *ws = NULL, *sc = NULL, *facts_file = NULL, *plan = "none";
    target_t target = TARGET_LINUX;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && strcmp(a, "--workspace") == 0) ws = argv[++i];
        else if (i + 1 < argc && strcmp(a, "--scratch") == 0) sc = argv[++i];
        else if (i + 1 < argc && strcmp(a, "--facts") == 0) facts_file = argv[++i];
        else if (i + 1 < argc && strcmp(a, "--plan") == 0) plan = argv[++i];
        else if (i + 1 < argc && strcmp(a, "--target") == 0) {
            const char *t = argv[++i];
            if (strcmp(t, "linux") == 0) target = TARGET_LINUX;
            else if (strcmp(t, "macos") == 0) target = TARGET_MACOS;
            else usage();
        } else if (a[0] != '-' && !config) config = a;
        else usage();
    }
    if (!config || !ws || !sc) usage();
    if (strcmp(plan, "none") != 0 && strcmp(plan, "template") != 0 && strcmp(plan, "exec") != 0) usage();
    if (strcmp(plan, "none") != 0 && target != TARGET_LINUX) {
        fprintf(stderr, "lattice-probe: a bwrap plan needs --target linux\n");
        return 2;
    }

    diag_list_t d = {0};
    char *err = NULL;
    policy_t *p = policy_load(config, &d, &err);
    if (!p) {
        buf_t b = BUF_INIT;
        diag_render_all(&b, &d, false);
        fprintf(stderr, "lattice-probe: %s\n%s", err ? err : "the policy is rejected", buf_cstr(&b));
        return 2;
    }
    const char *files[2] = {facts_file, NULL};
    facts_t *f = compile_facts_for(p, target, files, &err);
    if (!f) {
        fprintf(stderr, "lattice-probe: facts: %s\n", err);
        return 2;
    }
    if (f->target != target) {
        fprintf(stderr, "lattice-probe: the facts are for %s\n", facts_target_name(f->target));
        return 2;
    }
    resolved_t *r = lattice_resolve(p, f);
    sbpl_t *s;
    if (!sbpl_build(r, f, &d, &s)) {
        fprintf(stderr, "lattice-probe: sbpl_build failed\n");
        return 2;
    }
    roots_t roots = {ws, sc, NULL, false};
    bwrap_t *b = NULL;
    if (strcmp(plan, "none") != 0) {
        b = bwrap_plan(r, strcmp(plan, "exec") == 0 ? &roots : NULL, &err);
        if (!b) {
            fprintf(stderr, "lattice-probe: bwrap_plan: %s\n", err);
            return 2;
        }
    }

    char line[8192];
    arena_t a = ARENA_INIT;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (!*line) continue;
        const char *path = path_normalize(line, &a);
        if (!path) {
            fprintf(stderr, "lattice-probe: not an absolute path: %s\n", line);
            return 2;
        }
        const char *real = lattice_real_path(r, path, &a);
        level_t lv = lattice_level_of(r, &roots, real, NULL);
        level_t sv = sbpl_eval(s, &roots, real, NULL, NULL);
        printf("%s %s %s %s\n", policy_level_name(lv), policy_level_name(sv), b ? policy_level_name(bwrap_eval(b, &roots, path, NULL, NULL)) : "-",
               line);
    }
    arena_free(&a);
    bwrap_free(b);
    sbpl_free(s);
    lattice_free(r);
    facts_free(f);
    policy_free(p);
    diag_list_free(&d);
    return 0;
}
