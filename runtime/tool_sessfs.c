/* tool_sessfs.c — session_mount and session_export (SPEC §14), and the set-up
 * of a new session (its checkpoint store, create_session's mounts, its
 * first checkpoint).
 *
 * The host side is mountin.c and export.c; this file asks the policy: the
 * allowlist is mount_allowlist as the sandbox's resolved policy has it, a
 * file is mounted only when the sandbox could read it (deny_read), and a
 * file is exported only when the sandbox could write its workspace path and
 * no cap below write matches its host path (protected names, deny_write).
 * The policy is the one sandboxed commands run under: when it cannot be
 * evaluated, nothing crosses.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access.h"
#include "beneath.h"
#include "drun_policy.h"
#include "sessfs.h"
#include "sesstools.h"
#include "tree.h"

#define MEASURE_ENTRIES 10000000ULL

typedef struct hostpol {
    const resolved_t *res; /* NULL: cannot be evaluated (fail closed) */
    char ws[PATH_MAX], sc[PATH_MAX];
    roots_t roots;
    VEC(char *) allow; /* mount_allowlist, resolved (borrowed from res) */
} hostpol_t;

static void hostpol_init(tool_call_t *tc, session_t *s, hostpol_t *h)
{
    memset(h, 0, sizeof *h);
    if (!tc->lp || !tc->lp->sbx || !realpath(s->workspace, h->ws) || !realpath(s->scratch, h->sc))
        return;
    h->res = sandbox_resolved(tc->lp->sbx);
    h->roots = (roots_t){.workspace = h->ws, .scratch = h->sc};
    for (size_t i = 0; h->res && i < h->res->grants.n; i++) {
        const rrule_t *g = &h->res->grants.v[i];
        if (g->rule->kind == RK_MOUNT && g->base == PB_ROOT && g->level >= LVL_READ)
            vec_push(&h->allow, (char *)g->path);
    }
}

static void hostpol_free(hostpol_t *h) { vec_free(&h->allow); }

static level_t host_level(const hostpol_t *h, const char *abs, verdict_t *v)
{
    return h->res ? lattice_level_of(h->res, &h->roots, abs, v) : LVL_NONE;
}

static bool readable(void *ctx, const char *abs)
{
    return host_level(ctx, abs, NULL) >= LVL_READ;
}

/* The words for the cap that keeps a path below write. */
static char *cap_reason(const verdict_t *v, const char *where)
{
    const rrule_t *low = NULL;
    for (unsigned i = 0; i < v->ncaps; i++)
        if (v->caps[i]->level < LVL_WRITE && (!low || v->caps[i]->level < low->level))
            low = v->caps[i];
    const rule_t *r = low ? low->rule : (v->grant ? v->grant->rule : NULL);
    const char *kind = !r                         ? "no rule grants it"
                       : r->origin                ? r->origin
                       : r->kind == RK_DENY_WRITE ? "filesystem.deny_write"
                       : r->kind == RK_DENY_READ  ? "filesystem.deny_read"
                                                  : "the policy";
    return xasprintf("%s: protected by the policy (%s%s%s%s)", where, kind, r ? " \"" : "",
                     r && r->written ? r->written : "", r ? "\"" : "");
}

/* ---- git repositories on the export's way (SPEC §14, §16) ---------------------------------
 *
 * An export must not hand the host's git code to run: the structural rule
 * of the sandbox's access-time layer (decide_path: D/config and D/hooks of
 * any D that is a repository by its structure) is asked of the workspace
 * path and of the host destination, with a probe that looks at both the
 * host tree beneath output_dir (by fd, no symlink followed) and what the
 * checkpoint holds, so a repository the export itself builds counts before
 * its first file lands. git's own reading of a repository is looser than
 * HEAD + objects/ + refs/ as directories (symlinks, a commondir), so the
 * probe counts any directory holding a HEAD of any type: more repositories
 * than git would see, never fewer. */

typedef struct gitprobe {
    const hostpol_t *h;
    const export_tree_t *t; /* NULL: the host only, by absolute path */
    const char *out;        /* output_dir as opened (abs minus rel) */
    size_t outlen;
    bool host_only;         /* ignore what the checkpoint holds */
} gitprobe_t;

/* dir relative to root ("" for root itself), or NULL when not beneath it. */
static const char *under(const char *dir, const char *root, size_t n)
{
    if (strncmp(dir, root, n) || (dir[n] && dir[n] != '/'))
        return NULL;
    return dir[n] == '/' ? dir + n + 1 : dir + n;
}

/* Does dir/name exist (on the host or, unless host_only, in the
 * checkpoint)? rel: dir relative to output_dir; NULL: dfd is dir, opened
 * by absolute path. */
static bool gp_has(const gitprobe_t *g, const char *rel, int dfd, const char *name)
{
    struct stat st;
    if (!rel)
        return dfd >= 0 && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    char *p = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
    bool host, any = export_tree_has(g->t, p, &host);
    free(p);
    return g->host_only ? host : any;
}

/* A HEAD of any type makes a repository, as for the access-time layer:
 * git's objects/ and refs/ may be symlinks or live where a commondir
 * points, so they are not required. */
static bool gp_repo_at(const gitprobe_t *g, const char *rel, int dfd)
{
    return gp_has(g, rel, dfd, "HEAD");
}

/* decide_repo_fn: is dir (absolute: in the workspace, beneath output_dir,
 * or elsewhere on the host) a repository by its structure? */
static bool gp_is_repo(void *ctx, const char *dir)
{
    const gitprobe_t *g = ctx;
    const char *rel = NULL;
    if (g->t) {
        rel = under(dir, g->h->ws, strlen(g->h->ws));
        if (!rel)
            rel = under(dir, g->out, g->outlen);
    }
    if (rel)
        return gp_repo_at(g, rel, -1);
    /* an ancestor of output_dir (or of the workspace): looked at by fd,
     * with no symlink followed on the way from / */
    int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    int dfd = root < 0 ? -1 : beneath_open(root, dir + 1, O_PATH | O_DIRECTORY, 0);
    bool r = dfd >= 0 && gp_repo_at(g, NULL, dfd);
    if (dfd >= 0)
        close(dfd);
    if (root >= 0)
        close(root);
    return r;
}

/* A file whose content points git at another directory: never exported
 * (a gitfile ".git", a worktree's commondir or gitdir, config.worktree). */
static const char *redirection(const char *rel)
{
    const char *b = strrchr(rel, '/');
    b = b ? b + 1 : rel;
    if (!strcmp(b, ".git"))
        return "a gitfile (.git as a file) points git at another directory: not exported";
    if (!strcmp(b, "commondir") || !strcmp(b, "gitdir") || !strcmp(b, "config.worktree"))
        return "a git redirection file (commondir, gitdir, config.worktree) points git at "
               "another directory's config and hooks: not exported";
    return NULL;
}

/* Would writing rel make a host directory that already holds a config or
 * hooks (and is no repository yet) a repository by its structure? The
 * reason, or NULL. */
static char *completes(const gitprobe_t *g, const char *rel)
{
    gitprobe_t host = *g;
    host.host_only = true;
    buf_t d = BUF_INIT;
    char *why = NULL;
    for (const char *p = rel; *p && !why;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        const char *dir = buf_cstr(&d);
        if ((decide_completes_repo_name(name) || !strcmp(name, "commondir")) &&
            !gp_repo_at(&host, dir, -1) &&
            (gp_has(&host, dir, -1, "config") || gp_has(&host, dir, -1, "hooks")))
            why = xasprintf("on the host: %s would make \"%s\" a git repository around the "
                            "config or hooks already there (protect.git_config)",
                            name, d.len ? dir : ".");
        if (d.len)
            buf_addc(&d, '/');
        buf_add(&d, p, len);
        p = e ? e + 1 : p + len;
    }
    buf_free(&d);
    return why;
}

static char *struct_reason(const fs_verdict_t *v, const char *where)
{
    buf_t b = BUF_INIT;
    buf_printf(&b, "%s: protected by the policy (", where);
    decide_rule_text(v, &b);
    buf_addc(&b, ')');
    return buf_detach(&b, NULL);
}

static void refused(void *ctx, const export_tree_t *t, const char *rel, const char *abs,
                    char **reason)
{
    const hostpol_t *h = ctx;
    if (!h->res) {
        *reason = xstrdup("the policy cannot be evaluated");
        return;
    }
    const char *redir = redirection(rel);
    if (redir) {
        *reason = xstrdup(redir);
        return;
    }
    size_t outlen = strlen(abs) - strlen(rel) - 1;
    char *out = xstrndup(abs, outlen);
    gitprobe_t g = {.h = h, .t = t, .out = out, .outlen = outlen};
    verdict_t v;
    fs_verdict_t fv;
    char *wp = xasprintf("%s/%s", h->ws, rel);
    if (host_level(h, wp, &v) < LVL_WRITE)
        *reason = cap_reason(&v, "in the workspace");
    else if (decide_path(h->res, &h->roots, wp, gp_is_repo, &g, &fv) < LVL_WRITE)
        *reason = struct_reason(&fv, "in the workspace");
    free(wp);
    if (*reason)
        goto out;
    host_level(h, abs, &v);
    for (unsigned i = 0; i < v.ncaps; i++)
        if (v.caps[i]->level < LVL_WRITE) {
            *reason = cap_reason(&v, "on the host");
            goto out;
        }
    /* the host destination as the access-time layer would decide it were
     * output_dir the workspace: its caps and the structural rule */
    roots_t hr = {.workspace = out, .scratch = h->sc};
    if (decide_path(h->res, &hr, abs, gp_is_repo, &g, &fv) < LVL_WRITE)
        *reason = struct_reason(&fv, "on the host");
    else
        *reason = completes(&g, rel);
out:
    free(out);
}

/* Is host directory dir (or an ancestor) under a cap below write (the
 * runtime-owned state dir, a deny_write or protected tree), or inside a
 * repository's hooks or config by its structure? The reason, or NULL. */
static char *dir_capped(const hostpol_t *h, const char *dir)
{
    verdict_t v;
    host_level(h, dir, &v);
    for (unsigned i = 0; i < v.ncaps; i++)
        if (v.caps[i]->level < LVL_WRITE)
            return cap_reason(&v, "on the host");
    gitprobe_t g = {.h = h};
    fs_verdict_t fv;
    roots_t hr = {.workspace = dir, .scratch = h->sc};
    if (decide_path(h->res, &hr, dir, gp_is_repo, &g, &fv) < LVL_WRITE && fv.builtin)
        return struct_reason(&fv, "on the host");
    return NULL;
}

/* ---- mounting ------------------------------------------------------------------------------ */

static uint64_t budget_of(tool_call_t *tc, session_t *s)
{
    tree_usage_t u;
    tree_measure(s->ws_fd, MEASURE_ENTRIES, &u);
    uint64_t limit = (uint64_t)tools_setting(tc, S_MAX_WORKSPACE_MB) * 1024 * 1024;
    return u.bytes >= limit ? 0 : limit - u.bytes;
}

/* Copies host path src to target (NULL: its basename) in s; fills o (the
 * mount's result). false after tools_fail. Caller holds s->write_mu. */
static bool do_mount(tool_call_t *tc, session_t *s, const char *src, const char *target, json_t *o)
{
    buf_t rel = BUF_INIT;
    const char *why;
    if (!target) {
        const char *b = strrchr(src, '/');
        target = b && b[1] ? b + 1 : src;
    }
    bool norm = beneath_normalize(target, &rel, &why);
    if (!norm || !rel.len) {
        tools_fail(tc, "target \"%s\" is refused: %s.", target,
                   norm ? "give a path inside the workspace, not the workspace itself" : why);
        buf_free(&rel);
        return false;
    }
    if (!access_require(tc, s, rel.p, LVL_WRITE, "target: ")) {
        buf_free(&rel);
        return false;
    }
    hostpol_t h;
    hostpol_init(tc, s, &h);
    mountin_req_t r = {
        .allow = h.allow.v,
        .nallow = h.allow.n,
        .source = src,
        .ws_fd = s->ws_fd,
        .target = rel.p,
        .budget = budget_of(tc, s),
        .own = sesstools_owner(),
        .readable = readable,
        .ctx = &h,
    };
    mountin_res_t res = {0};
    char *err = NULL;
    bool ok = h.res && mountin_copy(&r, &res, &err) == 0;
    if (!h.res)
        tools_fail(tc, "session_mount is refused: the policy cannot be evaluated for this "
                       "session, so nothing is copied in.");
    else if (!ok)
        tools_fail(tc, "Mount refused, nothing was copied: %s.", err);
    if (ok) {
        tools_json_bytes(o, "source", res.source, strlen(res.source));
        tools_json_bytes(o, "target", rel.p, rel.len);
        json_object_set_new(o, "files", json_integer((json_int_t)res.files));
        json_object_set_new(o, "symlinks", json_integer((json_int_t)res.links));
        json_object_set_new(o, "bytes", json_integer((json_int_t)res.bytes));
        json_t *sk = jsonrpc_add_array(o, "skipped");
        for (size_t i = 0; i < res.skipped.n; i++) {
            json_t *e = json_object();
            tools_json_bytes(e, "path", res.skipped.v[i].path, strlen(res.skipped.v[i].path));
            json_object_set_new(e, "reason", jsonrpc_string(res.skipped.v[i].reason));
            json_array_append_new(sk, e);
        }
        buf_printf(&tc->text, "Mounted %s at %s: %llu files, %llu symlinks, %llu bytes copied",
                   res.source, rel.p, (unsigned long long)res.files,
                   (unsigned long long)res.links, (unsigned long long)res.bytes);
        if (res.skipped.n)
            buf_printf(&tc->text, "; %zu left out:", res.skipped.n);
        for (size_t i = 0; i < res.skipped.n && i < 20; i++)
            buf_printf(&tc->text, "\n  %s (%s)", res.skipped.v[i].path, res.skipped.v[i].reason);
        buf_adds(&tc->text, "\n");
    }
    mountin_res_free(&res);
    free(err);
    hostpol_free(&h);
    buf_free(&rel);
    return ok;
}

bool sesstools_setup(tool_call_t *tc, session_t *s, const json_t *mounts)
{
    char fam[48], *err = NULL;
    sesstools_family(s->id, fam);
    s->ckpt = ckpt_create(sessions_rootfd(tc->srv->sessions), sessions_root(tc->srv->sessions),
                          fam, &err);
    if (!s->ckpt) {
        tools_fail(tc, "The session's checkpoint store cannot be made: %s.", err);
        free(err);
        return false;
    }
    json_t *arr = jsonrpc_add_array(tc->out, "mounts");
    buf_t sum = BUF_INIT;
    size_t i;
    const json_t *m;
    bool ok = true;
    pthread_mutex_lock(&s->write_mu);
    json_array_foreach(mounts, i, m) {
        json_t *o = json_object();
        ok = do_mount(tc, s, json_string_value(m), NULL, o);
        json_array_append_new(arr, o);
        if (!ok)
            break;
        buf_printf(&sum, "%s%s", sum.len ? ", " : "mounted ", json_string_value(m));
    }
    pthread_mutex_unlock(&s->write_mu);
    if (ok) {
        int64_t id = ckpt_record(s->ckpt, s->ws_fd, "create_session", buf_cstr(&sum), true,
                                 tools_setting(tc, S_MAX_CHECKPOINTS), &err);
        if (id < 0) {
            tools_fail(tc, "The session's first checkpoint failed: %s.", err);
            free(err);
            ok = false;
        } else {
            json_object_set_new(tc->out, "checkpoint_id", json_integer(id));
        }
    }
    buf_free(&sum);
    return ok;
}

static void run_mount(tool_call_t *tc, const json_t *args)
{
    session_t *s = tools_session(tc, args);
    if (!s)
        return;
    const char *src = tools_arg_str(args, "path", "");
    pthread_mutex_lock(&s->write_mu);
    bool ok = do_mount(tc, s, src, tools_arg_str(args, "target", NULL), tc->out);
    pthread_mutex_unlock(&s->write_mu);
    if (ok) {
        json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
        sesstools_checkpoint(tc, s, "session_mount", src);
    }
    sessions_put(s);
}

#define SKIPPED_SCHEMA                                                                       \
    "\"skipped\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": {" \
    "\"path\": {\"type\": \"string\"}, \"reason\": {\"type\": \"string\"}}, \"required\": "  \
    "[\"path\", \"reason\"]}}"

const tool_def_t tool_session_mount = {
    .name = "session_mount",
    .title = "Copy a host file or tree into a session",
    .description =
        "Copies a host file or directory tree into the workspace (at target, default its "
        "basename). Only paths inside the operator's mount_allowlist are accepted (an empty "
        "list allows none); symlinks inside are copied as symlinks, never followed; files the "
        "policy hides are left out (listed in skipped); max_workspace_mb holds. The host is "
        "never changed: export results with session_export.",
    .input_schema = "{\"type\": \"object\", \"properties\": {" SESS_ID_SCHEMA ", "
                    "\"path\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4096, "
                    "\"description\": \"absolute host path inside mount_allowlist\"}, "
                    "\"target\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4096, "
                    "\"description\": \"workspace-relative destination (default: the "
                    "basename of path); must not exist\"}}, "
                    "\"required\": [\"session_id\", \"path\"], \"additionalProperties\": false}",
    .output_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                     "\"string\"}, \"source\": {\"type\": \"string\"}, \"target\": {\"type\": "
                     "\"string\"}, \"files\": {\"type\": \"integer\"}, \"symlinks\": {\"type\": "
                     "\"integer\"}, \"bytes\": {\"type\": \"integer\"}, " SKIPPED_SCHEMA ", "
                     "\"checkpoint_id\": {\"type\": \"integer\"}}, \"required\": [\"session_id\", "
                     "\"source\", \"target\", \"files\", \"skipped\"]}",
    .needs_policy = true,
    .run = run_mount,
};

/* ---- export -------------------------------------------------------------------------------- */

static bool get_paths(tool_call_t *tc, const json_t *args, ckpt_paths_t *out)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(args, "paths"), i, e) {
        buf_t rel = BUF_INIT;
        const char *why;
        if (!beneath_normalize(json_string_value(e), &rel, &why)) {
            tools_fail(tc, "paths[%zu] \"%s\" is refused: %s.", i, json_string_value(e), why);
            buf_free(&rel);
            return false;
        }
        vec_push(out, buf_detach(&rel, NULL));
    }
    return true;
}

static void add_list(json_t *o, const char *key, const ckpt_paths_t *p)
{
    json_t *a = jsonrpc_add_array(o, key);
    for (size_t i = 0; i < p->n; i++)
        tools_json_bytes(a, NULL, p->v[i], strlen(p->v[i]));
}

static void render_export(tool_call_t *tc, const export_res_t *res, bool dry)
{
    json_t *sk = jsonrpc_add_array(tc->out, "skipped");
    for (size_t i = 0; i < res->skipped.n; i++) {
        json_t *e = json_object();
        tools_json_bytes(e, "path", res->skipped.v[i].path, strlen(res->skipped.v[i].path));
        json_object_set_new(e, "reason", jsonrpc_string(res->skipped.v[i].reason));
        json_array_append_new(sk, e);
    }
    add_list(tc->out, "written", &res->written);
    add_list(tc->out, "removed", &res->removed);
    tools_json_bytes(tc->out, "output_dir", res->output_dir, strlen(res->output_dir));
    json_object_set_new(tc->out, "dry_run", json_boolean(dry));
    buf_printf(&tc->text, "%s %s: %zu file%s written, %zu removed, %zu skipped.",
               dry ? "Dry run, nothing changed on the host; an export to" : "Exported to",
               res->output_dir, res->written.n, res->written.n == 1 ? "" : "s",
               res->removed.n, res->skipped.n);
    for (size_t i = 0; i < res->skipped.n && i < 50; i++)
        buf_printf(&tc->text, "\n  skipped %s: %s", res->skipped.v[i].path,
                   res->skipped.v[i].reason);
    if (dry) {
        tools_json_bytes(tc->out, "diff", res->diff.p ? res->diff.p : "", res->diff.len);
        if (res->diff.len) {
            buf_adds(&tc->text, "\n");
            buf_add(&tc->text, res->diff.p, res->diff.len);
        }
    }
}

static void run_export(tool_call_t *tc, const json_t *args)
{
    ckpt_paths_t paths = {0};
    if (!get_paths(tc, args, &paths))
        goto out;
    session_t *s = tools_session(tc, args);
    if (!s)
        goto out;
    if (!s->ckpt) {
        tools_fail(tc, "session %s has no checkpoint store; create a new session.", s->id);
        sessions_put(s);
        goto out;
    }
    char rb[32], idb[32];
    const char *ref = sesstools_arg_ref(args, "checkpoint", rb);
    if (!ref) {
        /* The workspace as it is now: recorded first, exported from the store. */
        sesstools_checkpoint(tc, s, "session_export", "changes found before the export");
        snprintf(idb, sizeof idb, "%lld", (long long)ckpt_head(s->ckpt));
        ref = idb;
    }
    hostpol_t h;
    hostpol_init(tc, s, &h);
    bool dry = tools_arg_bool(args, "dry_run", false);
    export_req_t r = {
        .allow = h.allow.v,
        .nallow = h.allow.n,
        .output_dir = tools_arg_str(args, "output_dir", ""),
        .paths = paths.v,
        .npaths = paths.n,
        .checkpoint = ref,
        .dry_run = dry,
        .delete_extra = tools_arg_bool(args, "delete", false),
        .refused = refused,
        .ctx = &h,
    };
    export_res_t res = {0};
    char *err = NULL, *capped = NULL;
    if (!h.res) {
        tools_fail(tc, "session_export is refused: the policy cannot be evaluated for this "
                       "session, so nothing is written.");
    } else if ((capped = dir_capped(&h, r.output_dir))) {
        /* the state dir, another session, a protected tree: not even a mkdir there */
        tools_fail(tc, "Export refused, nothing was written: output_dir \"%s\" is %s.", r.output_dir,
                   capped);
    } else if (export_run(s->ckpt, &r, &res, &err) < 0) {
        tools_fail(tc, "Export refused, nothing was written: %s.", err);
        export_res_free(&res);
    } else {
        json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
        json_object_set_new(tc->out, "exported_checkpoint", jsonrpc_string(ref));
        render_export(tc, &res, dry);
        export_res_free(&res);
    }
    free(err);
    free(capped);
    hostpol_free(&h);
    sessions_put(s);
out:
    for (size_t i = 0; i < paths.n; i++)
        free(paths.v[i]);
    vec_free(&paths);
}

const tool_def_t tool_session_export = {
    .name = "session_export",
    .title = "Write a session's files to the host",
    .description =
        "Writes the workspace (or the listed paths, at a checkpoint) into a host directory "
        "inside mount_allowlist. Nothing is written through a symlink, no \"..\" is accepted, "
        "and files the policy protects (protected names such as .bashrc or .git/hooks, "
        "deny_write matches) and symlinks are skipped with the reason. delete removes files "
        "of output_dir the export does not hold; dry_run lists what would happen, with a "
        "diff, and writes nothing.",
    /* clang-format off */
    .input_schema =
        "{\"type\": \"object\", \"properties\": {" SESS_ID_SCHEMA ", "
        "\"output_dir\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4096, "
        "\"description\": \"absolute host directory inside mount_allowlist (made when "
        "missing)\"}, "
        "\"paths\": {\"type\": \"array\", \"maxItems\": 1024, \"items\": {\"type\": \"string\", "
        "\"minLength\": 1, \"maxLength\": 4096}, \"description\": \"workspace-relative files or "
        "directories to export (default: all)\"}, "
        SESS_REF_SCHEMA("checkpoint", "what to export (default: the workspace now)") ", "
        "\"dry_run\": {\"type\": \"boolean\", \"description\": \"list and diff only\"}, "
        "\"delete\": {\"type\": \"boolean\", \"description\": \"remove files of output_dir "
        "(within paths) that the export does not hold\"}}, "
        "\"required\": [\"session_id\", \"output_dir\"], \"additionalProperties\": false}",
    /* clang-format on */
    .output_schema =
        "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
        "\"output_dir\": {\"type\": \"string\"}, \"exported_checkpoint\": {\"type\": "
        "\"string\"}, \"dry_run\": {\"type\": \"boolean\"}, "
        "\"written\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
        "\"removed\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, " SKIPPED_SCHEMA
        ", \"diff\": {\"type\": \"string\"}, \"checkpoint_id\": {\"type\": \"integer\"}}, "
        "\"required\": [\"session_id\", \"output_dir\", \"written\", \"skipped\", \"removed\"]}",
    .needs_policy = true,
    .destructive = true,
    .run = run_export,
};
