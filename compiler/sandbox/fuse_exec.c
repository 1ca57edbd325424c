/* fuse_exec.c — the access-time layer's daemon starts as a fresh program.
 *
 * The runner that starts a layer may have threads (drun-mcp serves several
 * calls at once). A child forked from it holds copies of every lock those
 * threads held at that instant — the allocator's, a logger's, a registry's
 * — and the first time it takes one, it waits forever; its FUSE mounts
 * then never answer, and every access of the sandbox hangs in the kernel
 * (seen: bwrap in D state in fuse_get_req under load). So the (vforked)
 * child does only what is safe there (sigaction, fcntl, execve) and runs this same
 * binary again, "/proc/self/exe --drun-fuse-daemon FD", which reads what
 * it serves from a sealed memfd: the policy's source text, the host facts,
 * the runtime-owned paths, the session roots, the trees (their fds are
 * inherited) and the sandbox user, as JSON, then a NUL, then the facts
 * file as facts_to_json wrote it (not a JSON string inside the spec: a
 * policy of thousands of write grants has megabytes of facts, and escaping
 * them into a string to parse twice took seconds). It builds the resolved
 * policy the same way the runner did, and refuses to serve (fail closed: the run does not
 * start) unless its digest is the runner's.
 */
#include "fuse_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buf.h"
#include "digest.h"
#include "facts.h"
#include "fsutil.h"
#include "jsonr.h"
#include "policy.h"
#include "sbx_int.h"

#define DAEMON_FLAG "--drun-fuse-daemon"

/* One rule's line of the text both sides digest. */
static void digest_rule(buf_t *b, int set, const rrule_t *x)
{
    buf_printf(b, "%d %d %d %d %d %d %s\x1f%s\x1f%s\x1f%s\n", set, (int)x->base, (int)x->level, x->cap, x->glob,
               x->anywhere, x->path, x->lexical ? x->lexical : "", x->rule && x->rule->written ? x->rule->written : "",
               x->rule && x->rule->origin ? x->rule->origin : "");
}

/* The resolved rules as one text, for the digest both sides compare. */
static void digest_resolved(const resolved_t *r, char hex[65])
{
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < r->grants.n; i++) digest_rule(&b, 0, &r->grants.v[i]);
    for (size_t i = 0; i < r->caps.n; i++) digest_rule(&b, 1, &r->caps.v[i]);
    digest_sha256_hex(b.p ? b.p : "", b.len, hex);
    buf_free(&b);
}

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

/* ---- the runner's side ---------------------------------------------------------------------------------------- */

int fuse_exec_spec_write(const fuse_exec_spec_t *s, char **err)
{
    const policy_t *p = s->r->pol;
    json_t *o = json_object();
    json_object_set_new(o, "parent", json_integer(s->parent));
    json_object_set_new(o, "ready_w", json_integer(s->ready_w));
    json_object_set_new(o, "log_fd", json_integer(s->log_fd));
    json_object_set_new(o, "guard_r", json_integer(s->guard_r));
    json_t *trees = json_array();
    for (size_t i = 0; i < s->ntrees; i++) {
        const fuse_exec_tree_t *t = &s->trees[i];
        json_t *jt = json_object();
        json_object_set_new(jt, "path", json_string(t->path));
        json_object_set_new(jt, "name", json_string(t->name));
        json_object_set_new(jt, "mnt", json_string(t->mnt));
        json_object_set_new(jt, "backing", str_or_null(t->backing));
        json_object_set_new(jt, "fd", json_integer(t->fd));
        json_array_append_new(trees, jt);
    }
    json_object_set_new(o, "trees", trees);
    json_t *pol = json_object();
    json_object_set_new(pol, "default", json_boolean(p->is_default));
    json_object_set_new(pol, "name", str_or_null(p->src ? p->src->name : NULL));
    json_object_set_new(pol, "path", str_or_null(p->path));
    json_object_set_new(pol, "text", p->src ? json_stringn(p->src->text, p->src->len) : json_null());
    json_object_set_new(o, "policy", pol);
    json_t *owned = json_array();
    const char *why, *path;
    for (size_t i = 0; (path = lattice_owned_at(i, &why)); i++)
        json_array_append_new(owned, json_pack("[ss]", path, why ? why : ""));
    json_object_set_new(o, "owned", owned);
    json_t *roots = json_object();
    json_object_set_new(roots, "workspace", str_or_null(s->roots->workspace));
    json_object_set_new(roots, "scratch", str_or_null(s->roots->scratch));
    json_object_set_new(roots, "scratch_tmpfs", json_boolean(s->roots->scratch_tmpfs));
    json_t *hide = json_array();
    for (size_t i = 0; s->roots->hide && s->roots->hide[i]; i++) json_array_append_new(hide, json_string(s->roots->hide[i]));
    json_object_set_new(roots, "hide", hide);
    json_object_set_new(o, "roots", roots);
    uid_t uid;
    gid_t gid;
    sandbox_user(&uid, &gid);
    json_object_set_new(o, "user",
                        json_pack("{sbsIsI}", "drop", hoststate_ident()->drop, "uid", (json_int_t)uid, "gid",
                                  (json_int_t)gid));
    char hex[65];
    digest_resolved(s->r, hex);
    json_object_set_new(o, "digest", json_string(hex));

    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    buf_t fb = BUF_INIT; /* the facts, after the spec's NUL */
    facts_to_json(s->r->facts, &fb);
    int fd = memfd_create("drun-fuse-spec", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    size_t len = text ? strlen(text) + 1 : 0; /* with its NUL */
    bool ok = fd >= 0 && text && fsutil_write_all(fd, text, len) && fsutil_write_all(fd, fb.p ? fb.p : "", fb.len) &&
              fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0;
    if (!ok) *err = xasprintf("cannot start the filesystem layer: %s", text ? strerror(errno) : "out of memory");
    free(text);
    buf_free(&fb);
    if (!ok && fd >= 0) close(fd);
    return ok ? fd : -1;
}

void fuse_exec_argv(int spec_fd, fuse_exec_argv_t *a)
{
    snprintf(a->fd, sizeof a->fd, "%d", spec_fd);
    a->argv[0] = "drun-fuse";
    a->argv[1] = DAEMON_FLAG;
    a->argv[2] = a->fd;
    a->argv[3] = NULL;
}

/* In the vfork child, which shares the runner's memory: only
 * async-signal-safe calls, writing nothing of the runner's. No handler of
 * the runner may run here (it would write the runner's state): every
 * handled signal goes back to its default (as the exec would make it
 * anyway; ignored ones stay ignored, as across the exec) before the
 * runner's mask returns. */
static _Noreturn void exec_child(const fuse_exec_argv_t *a, const int *fds, size_t n, const sigset_t *mask)
{
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) {
            sa.sa_handler = SIG_DFL;
            sa.sa_flags = 0;
            if (sigaction(sig, &sa, NULL) != 0) _exit(126);
        }
    }
    if (sigprocmask(SIG_SETMASK, mask, NULL) != 0) _exit(126);
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0 && fcntl(fds[i], F_SETFD, 0) != 0) _exit(126); /* the child's own fd table */
    extern char **environ;
    execve("/proc/self/exe", (char *const *)a->argv, environ);
    _exit(127);
}

/* vfork, not fork (as spawn.c starts bwrap): the child only clears
 * close-on-exec and execs, and a fork of the runner (drun-mcp: large,
 * threaded, and under ASan larger still) copies its page tables and then
 * pays a copy-on-write fault on every page either side writes next — once
 * per run. The calling thread waits until the exec. In its own function so
 * that no variable of the caller lives across it. */
__attribute__((noinline)) pid_t fuse_exec_start(const fuse_exec_argv_t *a, const int *fds, size_t n)
{
    sigset_t all, mask;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &mask); /* nothing runs a handler until the child reset them */
    pid_t pid = vfork();
    if (pid == 0) exec_child(a, fds, n, &mask);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    errno = saved;
    return pid;
}

/* ---- the daemon's side ---------------------------------------------------------------------------------------- */

static int ival(const json_t *o, const char *k) { return (int)json_integer_value(json_object_get(o, k)); }
static const char *sval(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* Rebuilds the policy the runner resolved; NULL when it does not compile. */
static policy_t *rebuild_policy(const json_t *pol)
{
    if (json_is_true(json_object_get(pol, "default"))) return policy_default();
    const json_t *text = json_object_get(pol, "text");
    if (!json_is_string(text)) return NULL;
    const char *name = sval(pol, "name");
    diag_list_t d = {0};
    policy_t *p = policy_build(source_new(name ? name : "<config>", json_string_value(text), json_string_length(text)),
                               TOML_1_1, &d);
    diag_list_free(&d);
    const char *path = sval(pol, "path");
    if (p && path) p->path = arena_strdup(&p->arena, path);
    return p;
}

static _Noreturn void refuse(int ready_w, const char *why)
{
    if (ready_w >= 0) {
        ssize_t w = write(ready_w, why, strlen(why));
        (void)w;
    }
    _exit(1);
}

int fuse_exec_daemon_main(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[1], DAEMON_FLAG) != 0) return -1;
    int spec_fd = atoi(argv[2]);
    buf_t b = BUF_INIT;
    char chunk[65536];
    ssize_t n;
    while ((n = pread(spec_fd, chunk, sizeof chunk, (off_t)b.len)) > 0) buf_add(&b, chunk, (size_t)n);
    close(spec_fd);
    const char *nul = b.len ? memchr(b.p, '\0', b.len) : NULL;
    json_t *o = nul ? jsonr_load(b.p, (size_t)(nul - b.p), NULL) : NULL;
    if (!o) _exit(1); /* no ready pipe known: the runner reads EOF and reports it */
    int ready_w = ival(o, "ready_w");

    const json_t *owned = json_object_get(o, "owned");
    for (size_t i = 0; i < json_array_size(owned); i++) {
        const json_t *e = json_array_get(owned, i);
        lattice_owned_add(json_string_value(json_array_get(e, 0)), json_string_value(json_array_get(e, 1)));
    }
    const json_t *user = json_object_get(o, "user");
    if (json_is_true(json_object_get(user, "drop"))) {
        char spec[64], *err = NULL;
        snprintf(spec, sizeof spec, "%lld:%lld", (long long)json_integer_value(json_object_get(user, "uid")),
                 (long long)json_integer_value(json_object_get(user, "gid")));
        if (!sandbox_use_user(spec, &err)) refuse(ready_w, "the filesystem layer cannot take the sandbox user");
    }
    policy_t *p = rebuild_policy(json_object_get(o, "policy"));
    char *err = NULL;
    facts_t *f = facts_from_json(nul + 1, b.len - (size_t)(nul + 1 - b.p), &err);
    buf_free(&b);
    if (!p || !f) refuse(ready_w, "the filesystem layer cannot rebuild the policy it serves");
    resolved_t *r = lattice_resolve(p, f);
    char hex[65];
    digest_resolved(r, hex);
    const char *want = sval(o, "digest");
    if (!want || strcmp(want, hex) != 0)
        refuse(ready_w, "the filesystem layer's policy is not the runner's (the config or a runtime-owned path "
                        "changed while the run started)");

    const json_t *jr = json_object_get(o, "roots");
    const json_t *jh = json_object_get(jr, "hide");
    const char **hide = NULL;
    if (json_array_size(jh)) {
        hide = xcalloc(json_array_size(jh) + 1, sizeof *hide);
        for (size_t i = 0; i < json_array_size(jh); i++) hide[i] = json_string_value(json_array_get(jh, i));
    }
    roots_t roots = {sval(jr, "workspace"), sval(jr, "scratch"), hide,
                     json_is_true(json_object_get(jr, "scratch_tmpfs"))};

    const json_t *jt = json_object_get(o, "trees");
    size_t nt = json_array_size(jt);
    fuse_exec_tree_t *trees = xcalloc(nt ? nt : 1, sizeof *trees);
    for (size_t i = 0; i < nt; i++) {
        const json_t *t = json_array_get(jt, i);
        trees[i] = (fuse_exec_tree_t){sval(t, "path"), sval(t, "name"), sval(t, "mnt"), sval(t, "backing"), ival(t, "fd")};
        if (!trees[i].path || !trees[i].name || !trees[i].mnt) refuse(ready_w, "the filesystem layer's spec is bad");
    }
    fuse_exec_spec_t s = {(pid_t)ival(o, "parent"), ready_w, ival(o, "log_fd"), ival(o, "guard_r"), trees, nt, r, &roots};
    fuse_serve_daemon(&s);
}
