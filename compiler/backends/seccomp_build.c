/* seccomp_build.c — the seccomp backend on the backends' shared signature:
 * a resolved policy and its facts → the program bwrap loads (seccomp.bpf).
 * The filter itself is seccomp_filter.c's (the embedded programs) and
 * seccomp_libseccomp.c's (how they are made).
 */
#include "seccomp_filter.h"

#include <stdlib.h>

#include "lattice.h"

bool seccomp_build(const resolved_t *r, const facts_t *f, diag_list_t *diags, buf_t *out)
{
    seccomp_opts_t so = {SECCOMP_X86_64, policy_get(r->pol, S_ALLOW_UNIX_SOCKETS) != 0};
    if (!seccomp_arch_from_name(f->arch, &so.arch)) {
        diag_add(diags, SEV_ERROR, NULL, NULL, (span_t){0, 0},
                 "no seccomp filter for architecture '%s' (x86_64 and aarch64 are supported)", f->arch);
        return false;
    }
    char *err = NULL;
    bool ok = seccomp_program(&so, out, &err);
    if (!ok) diag_add(diags, SEV_ERROR, NULL, NULL, (span_t){0, 0}, "%s", err);
    free(err);
    return ok;
}
