/* sandbox.c — compile a policy for this Linux host (or load reviewed
 * artifacts), plan one run and spawn it.
 *
 * The bwrap vector is planned per run (the session part depends on what the
 * workspace holds) and handed to bwrap through --args, never on the command
 * line, so no argument ever meets the kernel's 128 KiB per-argument limit.
 * The seccomp program goes through --seccomp. Nothing is built by a shell.
 * The workspace (and a session's scratch dir) is bound from an fd opened
 * before the plan (--bind-fd: bwrap checks that the path it mounts is that
 * inode), the blocks of missing files from one empty file by fd; without
 * the access-time layer, every other bind of a host path too (bind_fd.c).
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf.h"
#include "bwrap.h"
#include "compile.h"
#include "digest.h"
#include "fslayer.h"
#include "fuse_exec.h"
#include "lattice.h"
#include "fsutil.h"
#include "jsonr.h"
#include "seccomp_filter.h"

extern char **environ;

/* bwrap refuses more arguments than this (its MAX_ARGS), all of --args included. */
#define BWRAP_MAX_ARGS 9000

/* Finds an executable in $PATH (or the usual places when PATH is unset). */
static char *find_exec(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    char *copy = xstrdup(path), *save = NULL, *found = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        if (*d != '/') continue;
        char *cand = xasprintf("%s/%s", d, name);
        if (access(cand, X_OK) == 0) found = cand;
        else free(cand);
    }
    free(copy);
    return found;
}

char *sandbox_find_bwrap(void) { return find_exec("bwrap"); }

static bool finish_new(sandbox_t *s, char **err)
{
    s->res = lattice_resolve(s->pol, s->facts);
    s->bwrap_bin = find_exec("bwrap");
    if (!s->bwrap_bin) {
        *err = xstrdup("bubblewrap (bwrap) is not installed: apt-get install bubblewrap");
        return false;
    }
    /* Not root: the command starts through prlimit, which sets RLIMIT_NPROC
     * inside the user namespace (set outside, it would count all of the
     * caller's processes) and exits 127/126 like a shell when the command
     * cannot be run. As root the kernel does not apply NPROC, so no shim:
     * sandbox_spawn looks the command up itself (one process start less). */
    if (geteuid() != 0 && access("/usr/bin/prlimit", X_OK) == 0) {
        s->shim[0] = xstrdup("/usr/bin/prlimit");
        s->shim[1] = xasprintf("--nproc=%lld", (long long)policy_get(s->pol, S_MAX_PROCESSES));
        s->shim[2] = xstrdup("--");
    }
    return true;
}

sandbox_t *sandbox_new(const policy_t *p, const facts_t *f, diag_list_t *diags, char **err)
{
    (void)diags;
    *err = NULL;
    sandbox_t *s = xcalloc(1, sizeof *s);
    s->pol = p;
    if (f) {
        s->facts = (facts_t *)f;
    } else {
        const char *none[2] = {NULL, NULL};
        if (!(s->facts = compile_facts_for(p, TARGET_LINUX, none, err))) goto fail;
        s->owns_facts = true;
    }
    seccomp_opts_t so = {SECCOMP_X86_64, policy_get(p, S_ALLOW_UNIX_SOCKETS) != 0};
    if (!seccomp_arch_from_name(s->facts->arch, &so.arch)) {
        *err = xasprintf("no seccomp filter for architecture '%s'", s->facts->arch);
        goto fail;
    }
    if (!seccomp_program(&so, &s->seccomp, err)) goto fail;
    if (!finish_new(s, err)) goto fail;
    return s;
fail:
    sandbox_free(s);
    return NULL;
}

static const char *json_str(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* Checks dir/name against the manifest's sha256 and loads it into out. */
static bool load_checked(const char *dir, const char *name, const json_t *hashes, buf_t *out, char **err)
{
    char *path = xasprintf("%s/%s", dir, name);
    bool ok = fsutil_read_file(path, out, err);
    free(path);
    if (!ok) return false;
    const char *want = json_str(hashes, name);
    char hex[65];
    digest_sha256_hex(out->p ? out->p : "", out->len, hex);
    if (!want || strcmp(want, hex) != 0) {
        *err = xasprintf("%s/%s does not match the sha256 in policy.json: the artifacts were changed after "
                         "they were compiled",
                         dir, name);
        return false;
    }
    return true;
}

sandbox_t *sandbox_from_artifacts(const char *dir, char **err)
{
    *err = NULL;
    sandbox_t *s = xcalloc(1, sizeof *s);
    buf_t man = BUF_INIT, args = BUF_INIT;
    json_t *root = NULL;
    char *mpath = xasprintf("%s/policy.json", dir);
    bool ok = fsutil_read_file(mpath, &man, err);
    free(mpath);
    if (!ok) goto fail;
    root = jsonr_load(man.p, man.len, NULL);
    const json_t *src = json_object_get(root, "source");
    const json_t *hashes = json_object_get(root, "artifacts");
    const json_t *facts = json_object_get(json_object_get(root, "facts"), "linux");
    const char *text = json_str(src, "text"), *sha = json_str(src, "sha256"), *name = json_str(src, "path");
    if (!root || !text || !sha || !json_is_object(facts) || !json_is_object(hashes)) {
        *err = xasprintf("%s/policy.json is not a drun-policy manifest with Linux artifacts", dir);
        goto fail;
    }
    char hex[65];
    digest_sha256_hex(text, strlen(text), hex);
    if (strcmp(hex, sha) != 0) {
        *err = xasprintf("%s/policy.json: the embedded source does not match its sha256", dir);
        goto fail;
    }
    diag_list_t d = {0};
    s->owned_pol = policy_build(source_new(name ? name : "<artifacts>", text, strlen(text)), TOML_1_1, &d);
    if (!s->owned_pol) {
        buf_t b = BUF_INIT;
        diag_render_all(&b, &d, false);
        *err = xasprintf("%s/policy.json: the embedded source no longer compiles:\n%s", dir, buf_cstr(&b));
        buf_free(&b);
        diag_list_free(&d);
        goto fail;
    }
    diag_list_free(&d);
    if (name) s->owned_pol->path = arena_strdup(&s->owned_pol->arena, name);
    s->pol = s->owned_pol;
    char *ftext = json_dumps(facts, JSON_COMPACT);
    s->facts = ftext ? facts_from_json(ftext, strlen(ftext), err) : NULL;
    if (!ftext) *err = xstrdup("out of memory");
    free(ftext);
    if (!s->facts) goto fail;
    s->owns_facts = true;
    if (!load_checked(dir, "bwrap.args", hashes, &args, err) || !load_checked(dir, "seccomp.bpf", hashes, &s->seccomp, err))
        goto fail;
    size_t bad_pc;
    const char *why;
    if (!bpf_check(s->seccomp.p, s->seccomp.len, &bad_pc, &why)) {
        *err = xasprintf("%s/seccomp.bpf is not a valid seccomp program (instruction %zu: %s)", dir, bad_pc, why);
        goto fail;
    }
    /* The reviewed vector must be exactly what this compiler plans from the
     * reviewed source and facts; otherwise what runs is not what was read. */
    if (!finish_new(s, err)) goto fail;
    bwrap_t *b = bwrap_plan(s->res, NULL, err);
    if (!b) goto fail;
    buf_t again = BUF_INIT;
    bwrap_render(b, &again);
    bwrap_free(b);
    bool same = again.len == args.len && (args.len == 0 || memcmp(again.p, args.p, args.len) == 0);
    buf_free(&again);
    if (!same) {
        *err = xasprintf("%s/bwrap.args differs from what drun-policy %s compiles from the same source and "
                         "facts: recompile the artifacts with this version",
                         dir, DRUN_VERSION);
        goto fail;
    }
    buf_free(&man);
    buf_free(&args);
    json_decref(root);
    return s;
fail:
    buf_free(&man);
    buf_free(&args);
    json_decref(root);
    sandbox_free(s);
    return NULL;
}

int sandbox_helper_main(int argc, char **argv) { return fuse_exec_daemon_main(argc, argv); }

const policy_t *sandbox_policy(const sandbox_t *s) { return s->pol; }
const resolved_t *sandbox_resolved(const sandbox_t *s) { return s->res; }

void sandbox_free(sandbox_t *s)
{
    if (!s) return;
    lattice_free(s->res);
    if (s->owns_facts) facts_free(s->facts);
    policy_free(s->owned_pol);
    buf_free(&s->seccomp);
    free(s->bwrap_bin);
    for (int i = 0; i < 4; i++) free(s->shim[i]);
    free(s);
}

/* ---- planning one run -------------------------------------------------------------------------------------- */

void sbx_free_strvec(strvec_t *v)
{
    for (size_t i = 0; i < v->n; i++) free(v->v[i]);
    vec_free(v);
}

static bool session_roots(const sbx_exec_t *x, char **err)
{
    if (!x->workspace || x->workspace[0] != '/' || !x->scratch || x->scratch[0] != '/') {
        *err = xstrdup("the workspace and the scratch dir must be absolute paths");
        return false;
    }
    return true;
}

/* Where bwrap finds the fds spawn.c places (spawn_fds_t). */
#define EMPTY_SRC "/proc/self/fd/6"

/* The first bind of DIR on itself ("--bind DIR DIR", or --ro-bind, or
 * their -try forms when a policy rule names the same path) becomes
 * "--bind-fd FD DIR" (--ro-bind-fd): the directory bwrap mounts is the one
 * opened before the plan (bwrap checks that what it resolves is that inode,
 * and closes the fd, so the command never holds a descriptor of a host
 * directory). False when the plan has no such bind: the fd would stay open
 * into the sandbox. */
static bool bind_by_fd(strvec_t *v, size_t from, const char *dir, const char *fd)
{
    for (size_t i = from; i + 2 < v->n; i++) {
        const char *o = v->v[i];
        bool rw = !strcmp(o, "--bind") || !strcmp(o, "--bind-try");
        bool ro = !strcmp(o, "--ro-bind") || !strcmp(o, "--ro-bind-try");
        if ((!rw && !ro) || strcmp(v->v[i + 1], dir) != 0 || strcmp(v->v[i + 2], dir) != 0) continue;
        free(v->v[i]);
        free(v->v[i + 1]);
        v->v[i] = xstrdup(rw ? "--bind-fd" : "--ro-bind-fd");
        v->v[i + 1] = xstrdup(fd);
        return true;
    }
    return false;
}

/* The options of one run (after "from" in *v): the plan's, with the
 * workspace and scratch dir bound by fd, and the empty file closed before
 * the command starts (--sync-fd: bwrap keeps it in its monitor only). */
static bool run_options(const bwrap_t *b, const roots_t *roots, const sbx_exec_t *x, const fsl_t *layer, strvec_t *v,
                        char **err)
{
    size_t from = v->n;
    bwrap_argv(b, roots, x->host_env ? x->host_env : environ, EMPTY_SRC, v);
    if (!bind_by_fd(v, from, roots->workspace, "7") ||
        (!x->scratch_tmpfs && !bind_by_fd(v, from, roots->scratch, "8"))) {
        *err = xasprintf("the plan does not bind the workspace %s: refusing to run", roots->workspace);
        return false;
    }
    if (layer) fslayer_rewrite(layer, v, from); /* served trees: from their FUSE mounts */
    vec_push(v, xstrdup("--sync-fd"));
    vec_push(v, xstrdup("6"));
    if (SBX_PROXIED(x)) { /* proxy.h: the relay's binary by fd, and where the proxy is */
        vec_push(v, xstrdup("--ro-bind-fd"));
        vec_push(v, xasprintf("%d", SBX_FD_RELAY));
        vec_push(v, xstrdup(SBX_RELAY_PATH));
        for (const char *const *e = proxy_env(); *e; e++) {
            const char *eq = strchr(*e, '=');
            vec_push(v, xstrdup("--setenv"));
            vec_push(v, xstrndup(*e, (size_t)(eq - *e)));
            vec_push(v, xstrdup(eq + 1));
        }
    }
    const sbx_ident_t *id = hoststate_ident();
    if (id->drop) sbx_drop_unreachable(v, from, id->uid, id->gid);
    return true;
}

char **sandbox_argv(const sandbox_t *s, const sbx_exec_t *x, size_t *argc, char **err)
{
    if (!session_roots(x, err)) return NULL;
    roots_t roots = {x->workspace, x->scratch, x->hide, x->scratch_tmpfs};
    bwrap_t *b = bwrap_plan(s->res, &roots, err);
    if (!b) return NULL;
    strvec_t v = {0};
    vec_push(&v, xstrdup(s->bwrap_bin));
    bool ok = run_options(b, &roots, x, NULL, &v, err);
    bwrap_free(b);
    if (!ok) {
        sbx_free_strvec(&v);
        return NULL;
    }
    *argc = v.n;
    vec_push(&v, (char *)NULL);
    return v.v;
}

void sandbox_argv_free(char **argv, size_t argc)
{
    if (!argv) return;
    for (size_t i = 0; i < argc; i++) free(argv[i]);
    free(argv);
}

/* What a shell would say before running argv[0] in the sandbox: 0 when it
 * can be run, 127 (not found) or 126 (not executable) with *err. The
 * sandbox's PATH holds host directories, and its workspace is the host's. */
static int precheck_command(const sandbox_t *s, const char *ws, const char *cmd, char **err)
{
    if (!cmd || !*cmd) {
        *err = xstrdup("an empty command");
        return 127;
    }
    if (strchr(cmd, '/')) {
        char *path = cmd[0] == '/' ? xstrdup(cmd) : xasprintf("%s/%s", ws, cmd);
        struct stat st;
        int rc = stat(path, &st) != 0 ? 127 : ((!S_ISREG(st.st_mode) || access(path, X_OK) != 0) ? 126 : 0);
        free(path);
        if (rc) *err = xasprintf("%s: %s", cmd, rc == 127 ? "No such file or directory" : "Permission denied");
        return rc;
    }
    const facts_t *f = s->facts;
    bool pathdirs = policy_get(s->pol, S_READ_PATH_DIRS) && f->path_dirs.n;
    static const char *const std[] = {"/usr/local/bin", "/usr/bin", "/bin"};
    size_t n = pathdirs ? f->path_dirs.n : 3;
    for (size_t i = 0; i < n; i++) {
        char *path = xasprintf("%s/%s", pathdirs ? f->path_dirs.v[i] : std[i], cmd);
        struct stat st;
        bool ok = stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
        free(path);
        if (ok) return 0;
    }
    *err = xasprintf("%s: command not found", cmd);
    return 127;
}

/* The residue's names: relative to the workspace when below it (cleanup
 * works beneath the workspace fd), else absolute. */
static void residue_names(const bwrap_t *b, const char *ws, strvec_t *out)
{
    size_t n = strlen(ws);
    for (size_t i = 0; i < b->residue.n; i++) {
        const char *p = b->residue.v[i].path;
        bool below = strncmp(p, ws, n) == 0 && p[n] == '/' && p[n + 1];
        vec_push(out, xstrdup(below ? p + n + 1 : p));
    }
}

/* The run's options, packed for --args: "--seccomp 4 --json-status-fd 5 OPTIONS...".
 * Without the layer, every other bind of a host path goes by fd too
 * (bind_fd.c), its fds in *binds; with it, every tree a sandbox can write
 * is bound from the layer's own mount (runtime-owned, dark in every
 * sandbox), and *binds stays empty. */
static bool pack_options(const bwrap_t *b, const roots_t *roots, const sbx_exec_t *x, const fsl_t *layer,
                         buf_t *packed, sbx_binds_t *binds, char **err)
{
    strvec_t args = {0};
    const char *head[] = {"--seccomp", "4", "--json-status-fd", "5"};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++) vec_push(&args, xstrdup(head[i]));
    bool ok = run_options(b, roots, x, layer, &args, err);
    size_t ncmd = 0;
    for (char *const *c = x->argv; *c; c++) ncmd++;
    if (ok && args.n + ncmd + 8 > BWRAP_MAX_ARGS) {
        *err = xasprintf("this policy needs %zu bwrap arguments here, and bwrap takes at most %d: "
                         "fewer rules (a common parent instead of many siblings)",
                         args.n + ncmd + 8, BWRAP_MAX_ARGS);
        ok = false;
    }
    if (ok && !layer)
        ok = sbx_binds_by_fd(&args, sizeof head / sizeof *head, b, x->workspace_fd, roots->workspace, binds, err);
    for (size_t i = 0; ok && i < args.n; i++) buf_add(packed, args.v[i], strlen(args.v[i]) + 1);
    sbx_free_strvec(&args);
    return ok;
}

/* Hands the plan to the waiting bwrap e, or (none, past a pipe's size, or
 * bind sources by fd, which only a bwrap started now can inherit) to a
 * fresh one reading sealed memory. NULL with *err; e is gone then. */
static sbx_early_t *hand_over(const sandbox_t *s, const sbx_exec_t *x, sbx_early_t *e, const buf_t *packed,
                              const sbx_binds_t *binds, char **err)
{
    /* the last moment the host path is read: it must still be the directory
     * the fd is (bwrap's --bind-fd checks it again as it mounts) */
    if (!hoststate_same_dir(x->workspace, x->workspace_fd)) {
        *err = xasprintf("the workspace %s was replaced while the run was planned: refusing to run", x->workspace);
        sandbox_early_abort(e);
        return NULL;
    }
    if (e && !binds->n && sbx_early_feed(s, e, packed)) return e;
    /* that bwrap is gone, or the options are more than a pipe takes at
     * once: a fresh one that reads them, complete, from memory */
    sandbox_early_abort(e);
    return sbx_start_loaded(s, x, packed, binds, err);
}

int sandbox_spawn(const sandbox_t *s, const sbx_exec_t *x0, pid_t *pid, sbx_residue_t **residue, char **err)
{
    *err = NULL;
    *residue = NULL;
    sbx_early_t *e = x0->early;
    sbx_residue_t *r = xcalloc(1, sizeof *r);
    r->status_fd = r->lock_fd = -1;
    /* the workspace, held by fd from here on: bwrap binds it, cleanup works
     * beneath it */
    r->ws_fd = session_roots(x0, err) ? hoststate_open_dir("workspace", x0->workspace, x0->workspace_fd, err) : -1;
    if (r->ws_fd < 0) {
        sandbox_early_abort(e);
        sandbox_cleanup(r);
        return -1;
    }
    sbx_exec_t x = *x0;
    x.workspace_fd = r->ws_fd;
    /* bwrap loads while the run is planned, unless the caller started it
     * earlier still (without a shim: one this sandbox needs means anew; and
     * not for a root caller: its bwrap runs as the sandbox user, whose
     * limits only the child itself can set, before it drops root, and a
     * bwrap started before the policy was known has none). Not without
     * the access-time layer either: the mount fallback hands bwrap its host
     * binds by fd (bind_fd.c), opened after the plan, which a bwrap already
     * started cannot inherit; hand_over would only kill it and start anew. */
    bool drop = hoststate_ident()->drop;
    const char *no_layer = NULL;
    bool layer = fslayer_available(&no_layer);
    if (e && (drop || !layer || e->shim != (s->shim[0] != NULL) || e->relay != SBX_PROXIED(&x))) {
        sandbox_early_abort(e);
        e = NULL;
    }
    if (!e && layer && !(e = sbx_prestart(s->bwrap_bin, s->shim, &x, drop ? s : NULL, err))) {
        sandbox_cleanup(r);
        return -1;
    }
    if (!s->shim[0]) {
        int rc = precheck_command(s, x.workspace, x.argv[0], err);
        if (rc) {
            sandbox_early_abort(e);
            sandbox_cleanup(r);
            return rc;
        }
    }
    /* the shared lock comes before the plan: a run that is cleaning up holds
     * it exclusively, so nothing is planned on placeholders about to go */
    r->lock_fd = hoststate_workspace_lock(r->ws_fd, &r->pending);
    roots_t roots = {x.workspace, x.scratch, x.hide, x.scratch_tmpfs};
    /* the access-time layer (SPEC §16) serves the user's trees: the mount
     * plan then leaves the caps it enforces to it (no walk, no blocks) */
    r->layer = fslayer_begin(s->res, &roots, r->ws_fd, layer ? NULL : no_layer, err);
    if (*err) {
        sandbox_early_abort(e);
        sandbox_cleanup(r);
        return -1;
    }
    resolved_t *view = r->layer ? fslayer_view(r->layer, s->res, &roots) : NULL;
    bwrap_t *b = bwrap_plan(view ? view : s->res, &roots, err);
    buf_t packed = BUF_INIT;
    sbx_binds_t binds = {NULL, 0};
    bool ok = b && pack_options(b, &roots, &x, r->layer, &packed, &binds, err);
    if (ok) residue_names(b, x.workspace, &r->paths);
    /* a root caller's bwrap runs as the sandbox user, which may not write
     * where a grant leads (root's own dirs): the mount points are made here,
     * beneath the workspace fd (cleanup removes them as bwrap-made ones) */
    for (size_t i = 0; ok && drop && i < r->paths.n; i++) placeholders_make(r->ws_fd, r->paths.v[i], b->residue.v[i].dir);
    bwrap_free(b);
    fslayer_view_free(view);
    /* bwrap never ran on a failure: nothing of this plan was made */
    e = ok ? hand_over(s, &x, e, &packed, &binds, err) : (sandbox_early_abort(e), NULL);
    sbx_binds_close(&binds); /* bwrap has its own copies, which it closes as it mounts them */
    buf_free(&packed);
    if (!e) {
        sbx_free_strvec(&r->paths);
        sandbox_cleanup(r);
        return -1;
    }
    r->status_fd = e->status_fd;
    e->status_fd = -1;
    *pid = e->pid;
    fslayer_watch(r->layer, e->pid); /* the daemon dead: bwrap killed, the run ends */
    if (e->ws_fd >= 0) close(e->ws_fd);
    if (e->sc_fd >= 0) close(e->sc_fd);
    free(e);
    *residue = r;
    return 0;
}
