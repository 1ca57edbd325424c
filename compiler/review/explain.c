/* explain.c — the policy in plain words, and answers to single questions
 * with the rule, the caps and the artifact lines behind them (explain.h).
 *
 * Every path answer is computed three times — lattice, SBPL evaluator,
 * bwrap mount evaluator — and printed with all three, so a reviewer sees the
 * enforcement, not a restatement of the config. A disagreement that is not
 * one of the documented Linux approximations is printed as a bug. The
 * overview is explain_overview.c's; explain_int.h holds what both share.
 */
#include "explain_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwrap.h"
#include "cmdlist.h"
#include "compile.h"
#include "fsutil.h"
#include "domain.h"
#include "jsonw.h"
#include "keys.h"
#include "netaddr.h"
#include "path.h"
#include "sbpl.h"

/* Where explain puts the scratch dir, below the target's home: where the
 * runtime keeps per-session dirs (never under /tmp, which is private). */
#define EXPLAIN_SCRATCH ".local/state/drun/explain/scratch"

/* ---- paths --------------------------------------------------------------------------------------------- */

const char *explain_show_path(const resolved_t *r, const roots_t *roots, const char *abs, arena_t *a)
{
    const char *bases[3] = {roots ? roots->workspace : NULL, roots ? roots->scratch : NULL, r->facts->home};
    const char *names[3] = {"${WORKSPACE}", "${SCRATCH}", "~"};
    for (int i = 0; i < 3; i++) {
        if (!bases[i] || !path_is_under(abs, bases[i]) || strcmp(bases[i], "/") == 0) continue;
        size_t n = strlen(bases[i]);
        return abs[n] ? path_join(names[i], abs + n + 1, a) : names[i];
    }
    return abs;
}

/* An absolute path from the current directory and s (lexically normalised). */
static const char *absolute(const char *s, arena_t *a)
{
    if (s[0] == '/') return path_normalize(s, a);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    return path_normalize(path_join(cwd, s, a), a);
}

/* The macOS counterpart of a Linux path: the same place relative to home. */
static const char *to_macos(explain_t *e, const char *lin)
{
    const char *lh = e->facts[TARGET_LINUX]->home, *mh = e->facts[TARGET_MACOS]->home;
    if (strcmp(lh, "/") != 0 && path_is_under(lin, lh)) {
        size_t n = strlen(lh);
        return path_join(mh, lin[n] ? lin + n + 1 : "", &e->a);
    }
    return lin;
}

/* ---- setup ------------------------------------------------------------------------------------------------ */

static bool load_facts(explain_t *e, const explain_opts_t *o, char **err)
{
    for (int t = 0; t < 2; t++)
        if (o->facts[t]) e->facts[t] = o->facts[t], e->facts_from[t] = "the given facts";
    for (int i = 0; i < 2; i++) {
        if (!o->facts_files[i]) continue;
        facts_t *f = facts_load(o->facts_files[i], err);
        if (!f) return false;
        if (e->facts[f->target]) {
            facts_free(f);
            continue;
        }
        e->facts[f->target] = f;
        e->own_facts[f->target] = true;
        e->facts_from[f->target] = o->facts_files[i];
    }
    for (int t = 0; t < 2; t++) {
        if (e->facts[t]) continue;
        if (!(e->facts[t] = compile_facts_for(e->pol, (target_t)t, NULL, err))) return false;
        e->own_facts[t] = true;
        e->facts_from[t] = t == TARGET_LINUX ? "this host (probed)" : "the built-in macOS facts";
    }
    return true;
}

/* The Linux workspace: its realpath when the facts are this host's, else
 * lexical (the facts file describes another machine). */
static const char *linux_workspace(explain_t *e, const explain_opts_t *o)
{
    const char *ws = o->workspace ? o->workspace : ".";
    char real[PATH_MAX];
    if (!e->bw_exec || !realpath(ws, real)) return absolute(ws, &e->a);
    return arena_strdup(&e->a, real);
}

/* The exec-time plan looks at what the session dirs hold, as the runtime's
 * does: give it a real, fresh, empty scratch dir (removed by explain_free),
 * like the one every session gets, under the state dir (never /tmp). */
static void make_scratch(explain_t *e)
{
    const char *xdg = getenv("XDG_STATE_HOME");
    const char *base = xdg && *xdg == '/' ? path_join(xdg, "drun/explain", &e->a)
                                          : path_join(e->facts[TARGET_LINUX]->home, ".local/state/drun/explain", &e->a);
    char *tmpl = xasprintf("%s/scratch-XXXXXX", base);
    fsutil_mkdirs(base, 0700); /* a failure shows at mkdtemp */
    char real[PATH_MAX];
    if (mkdtemp(tmpl)) {
        e->scratch_made = arena_strdup(&e->a, tmpl);
        e->roots[TARGET_LINUX].scratch = arena_strdup(&e->a, realpath(tmpl, real) ? real : tmpl);
    }
    free(tmpl);
}

/* The exec-time plan as this host's sandbox will have it: bwrap skips a
 * --bind-try or --ro-bind-try whose source does not exist (a grant on a
 * path this host does not have), so nothing is mounted there and the mounts
 * around it decide; evaluating the op as if it mounted would answer "allow"
 * for a path the sandbox does not have. Such ops leave the plan explain
 * evaluates and are kept in e->bw_skipped, to be named in the answer. */
static void drop_skipped_binds(explain_t *e)
{
    size_t keep = 0;
    for (size_t i = 0; i < e->bw->ops.n; i++) {
        const bw_op_t *op = &e->bw->ops.v[i];
        bool try = strcmp(op->opt, "--bind-try") == 0 || strcmp(op->opt, "--ro-bind-try") == 0;
        char *src = try ? bwrap_word_value(op->a, &e->roots[TARGET_LINUX], NULL) : NULL;
        struct stat st;
        if (src && stat(src, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) vec_push(&e->bw_skipped, *op);
        else e->bw->ops.v[keep++] = *op;
        free(src);
    }
    e->bw->ops.n = keep;
}

/* The skipped bind whose destination holds path (the deepest), or NULL. */
static const bw_op_t *skipped_bind(const explain_t *e, const char *path)
{
    const bw_op_t *best = NULL;
    for (size_t i = 0; i < e->bw_skipped.n; i++) {
        const bw_op_t *op = &e->bw_skipped.v[i];
        if (op->b.kind == BW_LIT && path_is_under(path, op->b.s) && (!best || strlen(op->b.s) > strlen(best->b.s)))
            best = op;
    }
    return best;
}

explain_t *explain_new(const policy_t *p, const explain_opts_t *o, char **err)
{
    *err = NULL;
    explain_t *e = xcalloc(1, sizeof *e);
    e->pol = p;
    if (!load_facts(e, o, err)) goto fail;
    for (int t = 0; t < 2; t++) e->res[t] = lattice_resolve(p, e->facts[t]);
    e->bw_exec = strcmp(e->facts_from[TARGET_LINUX], "this host (probed)") == 0;
    const char *ws = linux_workspace(e, o);
    if (!ws) {
        *err = xstrdup("cannot make the workspace path absolute (the current directory is unknown)");
        goto fail;
    }
    for (int t = 0; t < 2; t++) {
        const char *w = t == TARGET_LINUX ? ws : to_macos(e, ws);
        e->roots[t].workspace = lattice_real_path(e->res[t], w, &e->a);
        e->roots[t].scratch = lattice_real_path(e->res[t], path_join(e->facts[t]->home, EXPLAIN_SCRATCH, &e->a), &e->a);
    }
    if (e->bw_exec) make_scratch(e);
    sbpl_build(e->res[TARGET_MACOS], e->res[TARGET_MACOS]->facts, &e->diags, &e->sbpl);
    e->bw = bwrap_plan(e->res[TARGET_LINUX], e->bw_exec ? &e->roots[TARGET_LINUX] : NULL, &e->bw_err);
    if (e->bw && e->bw_exec) drop_skipped_binds(e);
    return e;
fail:
    explain_free(e);
    return NULL;
}

void explain_free(explain_t *e)
{
    if (!e) return;
    for (int t = 0; t < 2; t++) {
        lattice_free(e->res[t]);
        if (e->own_facts[t]) facts_free(e->facts[t]);
    }
    sbpl_free(e->sbpl);
    bwrap_free(e->bw);
    vec_free(&e->bw_skipped);
    free(e->bw_err);
    if (e->scratch_made) rmdir(e->scratch_made);
    diag_list_free(&e->diags);
    arena_free(&e->a);
    free(e);
}

/* ---- rules as text --------------------------------------------------------------------------------------------- */

/* "profiles/x.toml:8:15 filesystem.allow_read \"~\"" or a built-in's origin. */
static void rule_text(buf_t *out, const rule_t *r)
{
    if (r->src) {
        srcpos_t p = source_pos(r->src, r->span.start);
        buf_printf(out, "%s:%u:%u %s \"%s\"", r->src->name, p.line, p.col, policy_rule_kind_key(r->kind), r->written);
        return;
    }
    switch (r->kind) {
    case RK_WORKSPACE: buf_adds(out, "the session workspace (always writable)"); return;
    case RK_SCRATCH: buf_adds(out, "the session scratch dir (always writable)"); return;
    case RK_SYSTEM: buf_printf(out, "the system read set \"%s\"", r->written); return;
    case RK_PATH_DIR: buf_printf(out, "the $PATH directory \"%s\" (read_path_dirs)", r->written); return;
    case RK_RUNTIME: buf_printf(out, "runtime-owned \"%s\" (%s): hidden whatever the grants", r->written, r->origin); return;
    default: buf_printf(out, "%s \"%s\"", r->origin ? r->origin : policy_rule_kind_key(r->kind), r->written); return;
    }
}

/* "file", "line", "column" of the byte at off in src; all three null when
 * there is no source (a built-in rule). */
static void json_at(jw_t *j, source_t *src, uint32_t off)
{
    srcpos_t p = src ? source_pos(src, off) : (srcpos_t){0};
    jw_key(j, "file");
    jw_str(j, src ? src->name : NULL);
    jw_key(j, "line");
    if (src) jw_int(j, p.line);
    else jw_null(j);
    jw_key(j, "column");
    if (src) jw_int(j, p.col);
    else jw_null(j);
}

static void rule_json(jw_t *j, const rule_t *r, level_t lvl)
{
    jw_obj(j);
    json_at(j, r->src, r->span.start);
    jw_key(j, "key");
    jw_str(j, r->src || r->kind == RK_RUNTIME ? policy_rule_kind_key(r->kind) : (r->origin ? r->origin : policy_rule_kind_key(r->kind)));
    if (r->kind == RK_RUNTIME) { /* SPEC §13: why the runtime owns it */
        jw_key(j, "why");
        jw_str(j, r->origin);
    }
    jw_key(j, "value");
    jw_str(j, r->written);
    jw_key(j, "level");
    jw_str(j, policy_level_name(lvl));
    jw_end(j);
}

/* ---- one path on one target ------------------------------------------------------------------------------------ */

typedef struct tanswer {
    const char *path; /* the concrete path on the target */
    verdict_t why;    /* the lattice */
    level_t enforced; /* what the artifact does */
    const sbpl_rule_t *rd, *wr;
    const bw_op_t *op;
    const bw_op_t *skipped; /* linux: the -try bind of a grant this host lacks, over the path */
    bool private_tmp;
    const char *differs;    /* NULL, or why the artifact is not the lattice */
    bool documented;        /* differs for a documented reason */
} tanswer_t;

/* A query path in policy terms: a base and the rest below it. */
typedef struct qpath {
    path_base_t base;
    const char *rel;
} qpath_t;

static bool parse_qpath(explain_t *e, const char *s, qpath_t *q, char **err)
{
    static const struct {
        const char *pre;
        path_base_t base;
    } pre[] = {{"${WORKSPACE}", PB_WORKSPACE}, {"${SCRATCH}", PB_SCRATCH}, {"${HOME}", PB_HOME}, {"~", PB_HOME}};
    if (!*s) {
        *err = xstrdup("an empty path");
        return false;
    }
    q->base = PB_WORKSPACE; /* a relative path is relative to the workspace */
    const char *rest = s;
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++) {
        size_t n = strlen(pre[i].pre);
        if (strncmp(s, pre[i].pre, n) == 0 && (s[n] == '\0' || s[n] == '/')) {
            q->base = pre[i].base;
            rest = s + n;
            break;
        }
    }
    if (rest == s && s[0] == '/') {
        const char *abs = path_normalize(s, &e->a);
        const roots_t *r = &e->roots[TARGET_LINUX];
        const char *bases[3] = {r->workspace, r->scratch, e->facts[TARGET_LINUX]->home};
        path_base_t kinds[3] = {PB_WORKSPACE, PB_SCRATCH, PB_HOME};
        q->base = PB_ROOT;
        q->rel = abs + 1;
        for (int i = 0; i < 3; i++) {
            if (strcmp(bases[i], "/") == 0 || !path_is_under(abs, bases[i])) continue;
            size_t n = strlen(bases[i]);
            q->base = kinds[i];
            q->rel = abs[n] ? abs + n + 1 : "";
            break;
        }
        return true;
    }
    const char *norm = path_normalize(path_join("/", rest, &e->a), &e->a);
    q->rel = norm + 1;
    return true;
}

static const char *qpath_on(explain_t *e, target_t t, const qpath_t *q)
{
    const char *base = q->base == PB_ROOT        ? "/"
                       : q->base == PB_HOME      ? e->facts[t]->home
                       : q->base == PB_WORKSPACE ? e->roots[t].workspace
                                                 : e->roots[t].scratch;
    return lattice_real_path(e->res[t], path_join(base, q->rel, &e->a), &e->a);
}

/* The remount that flips the mount op decided by, if any ("--remount-ro X"). */
static const bw_op_t *remount_of(const bwrap_t *b, const bw_op_t *by)
{
    if (!by) return NULL;
    bw_word_t dest = by->nargs == 2 ? by->b : by->a;
    for (size_t i = 0; i < b->ops.n; i++) {
        const bw_op_t *o = &b->ops.v[i];
        if (strcmp(o->opt, "--remount-ro") == 0 && o->a.kind == dest.kind && strcmp(o->a.s, dest.s) == 0) return o;
    }
    return NULL;
}

static bool has_glob_cap(const verdict_t *v)
{
    for (unsigned i = 0; i < v->ncaps; i++)
        if (v->caps[i]->glob) return true;
    return false;
}

/* Why an artifact decides differently from the lattice, when it does. */
/* The literal deny_read that decided v, when the facts say its path is missing. */
static const rrule_t *missing_deny(const explain_t *e, const verdict_t *v, arena_t *a)
{
    const rrule_t *g = v->grant;
    if (!g || g->level != LVL_NONE || g->base != PB_ROOT) return NULL;
    return facts_lookup(e->facts[TARGET_LINUX], g->path, a).type == PT_MISSING ? g : NULL;
}

/* A rule on an absolute path at or below the session dir that holds path,
 * among the rules that decided it: the compile-time artifacts assume the
 * session dirs hold no path the policy names. */
static const rrule_t *rule_in_session(const explain_t *e, target_t t, const tanswer_t *a)
{
    const roots_t *r = &e->roots[t];
    const char *root = r->workspace && path_is_under(a->path, r->workspace) ? r->workspace
                       : r->scratch && path_is_under(a->path, r->scratch)   ? r->scratch
                                                                            : NULL;
    if (!root) return NULL;
    const rrule_t *g = a->why.grant;
    if (g && g->base == PB_ROOT && !g->glob && path_is_under(g->path, root)) return g;
    for (unsigned i = 0; i < a->why.ncaps; i++) {
        const rrule_t *c = a->why.caps[i];
        if (c->base == PB_ROOT && !c->glob && path_is_under(c->path, root)) return c;
    }
    return NULL;
}

/* A runtime-owned cap among those that decided v (SPEC §13). */
static bool runtime_owned_cap(const verdict_t *v)
{
    for (unsigned i = 0; i < v->ncaps; i++)
        if (v->caps[i]->rule->kind == RK_RUNTIME) return true;
    return false;
}

static void classify(explain_t *e, tanswer_t *a, target_t t)
{
    level_t lat = a->why.level;
    if (a->enforced == lat) return;
    if (rule_in_session(e, t, a) && (t == TARGET_MACOS || !e->bw_exec)) {
        /* Why this is a bug on macOS but documented on Linux: the Linux
         * template is replaced by the exec-time plan, which sees where the
         * workspace is; a compiled SBPL profile is what macOS runs. */
        if (t == TARGET_MACOS) {
            a->differs = "the SBPL profile orders its rules when it is compiled, before the workspace is known: a "
                         "rule on a path inside the workspace comes before the workspace's own rule, which then wins "
                         "on macOS (a limitation of the SBPL backend; keep policy paths out of the workspace)";
            a->documented = false;
        } else {
            a->differs = "the bwrap.args template plans fresh, empty session dirs that hold no path the policy names; "
                         "the exec-time plan (drun-policy run, drun-mcp) follows this workspace: ask without a Linux "
                         "facts file to see it";
            a->documented = true;
        }
        return;
    }
    if (t == TARGET_LINUX && a->enforced > lat && !e->bw_exec && runtime_owned_cap(&a->why)) {
        a->differs = "runtime-owned (the runtime's own state, config or tokens): the runner hides it at every run "
                     "whatever the grants, but the bwrap.args template leaves it out (the set belongs to the process "
                     "that runs the sandbox); ask without a Linux facts file to see the exec-time plan";
        a->documented = true;
        return;
    }
    if (t == TARGET_LINUX && a->enforced > lat && missing_deny(e, &a->why, &e->a)) {
        a->differs = "wider on Linux: the facts say the denied path does not exist, so the plan mounts nothing over "
                     "it; if it appears while a session runs, that session sees it (lint: deny-path-missing)";
        a->documented = true;
        return;
    }
    if (t == TARGET_LINUX && a->skipped) {
        a->differs = "stricter on this host: the granted path does not exist here, so bwrap skips its bind "
                     "(--bind-try mounts nothing when the source is missing) and the sandbox has no such path, "
                     "nor can it make one; the lattice answers for the path as the policy names it";
        a->documented = true;
        return;
    }
    if (t == TARGET_LINUX && a->enforced < lat && a->op && a->op->note && strstr(a->op->note, "block")) {
        a->differs = "stricter on Linux: bwrap blocks a protected path that does not exist yet at its first "
                     "missing component (an empty read-only directory, or /dev/null for a file), and this path "
                     "is at or below that component";
        a->documented = true;
    } else if (t == TARGET_LINUX && a->enforced > lat && has_glob_cap(&a->why)) {
        a->differs = "wider on Linux: bwrap expands glob caps when the session starts and cannot cover a path "
                     "that does not exist yet at a new place (lint: unenforceable-on-target)";
        a->documented = true;
    } else {
        a->differs = "the artifact and the lattice disagree for no documented reason: this is a bug in "
                     "drun-policy, please report it";
    }
}

static void eval_target(explain_t *e, target_t t, const qpath_t *q, tanswer_t *a)
{
    memset(a, 0, sizeof *a);
    a->path = qpath_on(e, t, q);
    lattice_level_of(e->res[t], &e->roots[t], a->path, &a->why);
    if (t == TARGET_MACOS) {
        a->enforced = e->sbpl ? sbpl_eval(e->sbpl, &e->roots[t], a->path, &a->rd, &a->wr) : LVL_NONE;
    } else {
        a->enforced = e->bw ? bwrap_eval(e->bw, &e->roots[t], a->path, &a->op, &a->private_tmp) : LVL_NONE;
        if (a->enforced < a->why.level) a->skipped = skipped_bind(e, a->path);
    }
    classify(e, a, t);
}

bool explain_path_levels(explain_t *e, const char *path, explain_levels_t *out, char **err)
{
    qpath_t q;
    if (!parse_qpath(e, path, &q, err)) return false;
    for (int t = 0; t < 2; t++) {
        tanswer_t a;
        eval_target(e, (target_t)t, &q, &a);
        out->lattice[t] = a.why.level;
        out->enforced[t] = a.enforced;
        out->explained[t] = a.differs == NULL || a.documented;
    }
    return true;
}

/* ---- artifact lines --------------------------------------------------------------------------------------------- */

/* Line n (1-based) of text, into a. */
static const char *line_at(const buf_t *text, unsigned n, arena_t *a)
{
    const char *p = text->p ? text->p : "";
    for (unsigned i = 1; i < n && p; i++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (!p) return "";
    return arena_strndup(a, p, strcspn(p, "\n"));
}

static unsigned deny_default_line(const sbpl_t *s)
{
    const char *p = s->text.p ? strstr(s->text.p, "(deny default)") : NULL;
    unsigned n = 1;
    for (const char *c = s->text.p; p && c < p; c++) n += *c == '\n';
    return p ? n : 0;
}

/* The SBPL lines behind a decision: the rule that decided reading and, for
 * a write question, the one that decided writing. */
static void sbpl_lines(explain_t *e, const tanswer_t *a, bool write, const char *out[2], unsigned lines[2])
{
    out[0] = out[1] = NULL;
    lines[0] = lines[1] = 0;
    if (!e->sbpl) {
        out[0] = "policy.sb could not be built";
        return;
    }
    const sbpl_rule_t *rules[2] = {a->rd, write ? a->wr : NULL};
    int n = write && a->wr != a->rd ? 2 : 1;
    for (int i = 0; i < n; i++) {
        unsigned ln = rules[i] ? rules[i]->line : deny_default_line(e->sbpl);
        if (!rules[i] && i == 1 && !a->rd) continue; /* one (deny default) is enough */
        lines[i] = ln;
        out[i] = line_at(&e->sbpl->text, ln, &e->a);
    }
}

static const char *op_text(explain_t *e, const bw_op_t *op)
{
    buf_t b = BUF_INIT;
    bwrap_op_text(op, &b);
    const char *s = arena_strdup(&e->a, buf_cstr(&b));
    buf_free(&b);
    return s;
}

static const char *bwrap_summary(explain_t *e, const tanswer_t *a)
{
    if (!e->bw) return arena_strdup(&e->a, e->bw_err ? e->bw_err : "the Linux sandbox could not be planned");
    if (!a->op) return "no mount covers it: the path does not exist in the sandbox (bwrap starts from an empty root)";
    return op_text(e, a->op);
}

/* ---- the answer to a path question ------------------------------------------------------------------------------- */

static const char *word(bool ok) { return ok ? "allow" : "deny"; }

static void path_text(explain_t *e, bool write, const char *arg, tanswer_t a[2], buf_t *out)
{
    const verdict_t *v = &a[TARGET_LINUX].why;
    buf_printf(out, "%s %s: %s\n", write ? "write" : "read", arg, word(allowed(v->level, write)));
    buf_printf(out, "  level:  %s (lattice, linux)", policy_level_name(v->level));
    if (v->level != v->grant_level) buf_printf(out, "; the grant gives %s, a cap lowers it", policy_level_name(v->grant_level));
    buf_addc(out, '\n');
    buf_adds(out, "  grant:  ");
    if (v->grant) rule_text(out, v->grant->rule), buf_printf(out, " -> %s", policy_level_name(v->grant->level));
    else buf_adds(out, "none: no rule grants this path or a parent, so it is not in the sandbox");
    buf_addc(out, '\n');
    for (unsigned i = 0; i < v->ncaps; i++) {
        buf_adds(out, i ? "          " : "  caps:   ");
        rule_text(out, v->caps[i]->rule);
        buf_printf(out, " -> at most %s\n", policy_level_name(v->caps[i]->level));
    }
    for (int t = 0; t < 2; t++) {
        const tanswer_t *x = &a[t];
        bool ok = allowed(x->enforced, write);
        buf_printf(out, "  %s:%s %s  %s\n", facts_target_name((target_t)t), t ? "  " : "  ", word(ok), show(e, (target_t)t, x->path));
        if (strcmp(show(e, (target_t)t, x->path), x->path) != 0) buf_printf(out, "          path %s\n", x->path);
        if (x->why.level != v->level || (x->why.grant && v->grant && x->why.grant->rule->kind != v->grant->rule->kind)) {
            buf_printf(out, "          lattice on %s: %s (", facts_target_name((target_t)t), policy_level_name(x->why.level));
            if (x->why.grant) rule_text(out, x->why.grant->rule);
            else buf_adds(out, "no grant");
            buf_adds(out, ")\n");
        }
        if (t == TARGET_LINUX) {
            buf_printf(out, "          bwrap.args%s: %s", e->bw_exec ? " (exec-time plan)" : "", bwrap_summary(e, x));
            if (x->op && x->op->note) buf_printf(out, "  (%s)", x->op->note);
            buf_addc(out, '\n');
            const bw_op_t *rm = e->bw ? remount_of(e->bw, x->op) : NULL;
            if (rm) buf_printf(out, "                      %s\n", op_text(e, rm));
            if (x->skipped) buf_printf(out, "          skipped here: %s  (its source does not exist)\n", op_text(e, x->skipped));
            if (x->private_tmp)
                buf_adds(out, "          the sandbox has its own /tmp, /dev and /proc there: the host's files are not "
                              "reachable\n");
        } else {
            const char *lines[2];
            unsigned nums[2];
            sbpl_lines(e, x, write, lines, nums);
            for (int i = 0; i < 2; i++)
                if (lines[i]) buf_printf(out, "          policy.sb:%u: %s\n", nums[i], lines[i]);
        }
        if (x->differs) buf_printf(out, "          differs from the lattice (%s): %s\n", policy_level_name(x->why.level), x->differs);
    }
}

static void target_json(explain_t *e, jw_t *j, target_t t, const tanswer_t *x, bool write)
{
    jw_obj(j);
    jw_key(j, "decision");
    jw_str(j, word(allowed(x->enforced, write)));
    jw_key(j, "level");
    jw_str(j, policy_level_name(x->enforced));
    jw_key(j, "lattice");
    jw_str(j, policy_level_name(x->why.level));
    jw_key(j, "path");
    jw_str(j, x->path);
    if (t == TARGET_LINUX) {
        jw_key(j, "artifact");
        jw_str(j, bwrap_summary(e, x));
        jw_key(j, "file");
        jw_str(j, "bwrap.args");
        jw_key(j, "plan");
        jw_str(j, e->bw_exec ? "exec" : "template");
        jw_key(j, "note");
        jw_str(j, x->op ? x->op->note : NULL);
        const bw_op_t *rm = e->bw ? remount_of(e->bw, x->op) : NULL;
        jw_key(j, "remount");
        jw_str(j, rm ? op_text(e, rm) : NULL);
        jw_key(j, "private");
        jw_bool(j, x->private_tmp);
        if (x->skipped) {
            jw_key(j, "skipped"); /* the bind bwrap skips on this host: its source does not exist */
            jw_str(j, op_text(e, x->skipped));
        }
    } else {
        const char *lines[2];
        unsigned nums[2];
        sbpl_lines(e, x, write, lines, nums);
        jw_key(j, "artifact");
        jw_str(j, lines[1] ? lines[1] : lines[0]);
        jw_key(j, "file");
        jw_str(j, "policy.sb");
        jw_key(j, "line");
        jw_int(j, lines[1] ? nums[1] : nums[0]);
        jw_key(j, "lines");
        jw_arr(j);
        for (int i = 0; i < 2; i++)
            if (lines[i]) {
                jw_obj(j);
                jw_key(j, "line");
                jw_int(j, nums[i]);
                jw_key(j, "text");
                jw_str(j, lines[i]);
                jw_end(j);
            }
        jw_end(j);
    }
    jw_key(j, "differs");
    jw_str(j, x->differs);
    jw_key(j, "documented");
    jw_bool(j, x->differs == NULL || x->documented);
    jw_end(j);
}

static void path_json(explain_t *e, bool write, const char *arg, tanswer_t a[2], jw_t *j)
{
    const verdict_t *v = &a[TARGET_LINUX].why;
    jw_obj(j);
    jw_key(j, "query");
    jw_obj(j);
    jw_key(j, write ? "write" : "read");
    jw_str(j, arg);
    jw_end(j);
    jw_key(j, "decision");
    jw_str(j, word(allowed(v->level, write)));
    jw_key(j, "level");
    jw_str(j, policy_level_name(v->level));
    jw_key(j, "rule");
    if (v->grant) rule_json(j, v->grant->rule, v->grant->level);
    else jw_null(j);
    jw_key(j, "caps");
    jw_arr(j);
    for (unsigned i = 0; i < v->ncaps; i++) rule_json(j, v->caps[i]->rule, v->caps[i]->level);
    jw_end(j);
    jw_key(j, "workspace");
    jw_str(j, e->roots[TARGET_LINUX].workspace);
    jw_key(j, "scratch"); /* explain's choice: every session gets a fresh one */
    jw_str(j, e->roots[TARGET_LINUX].scratch);
    jw_key(j, "targets");
    jw_obj(j);
    for (int t = 0; t < 2; t++) {
        jw_key(j, facts_target_name((target_t)t));
        target_json(e, j, (target_t)t, &a[t], write);
    }
    jw_end(j);
    jw_end(j);
}

/* ---- exec and fetch ------------------------------------------------------------------------------------------------- */

static const str_entry_t *cmd_entry(const policy_t *p, cmdlist_kind_t list, long entry)
{
    if (entry < 0) return NULL;
    if (list == CMDLIST_DENY && (size_t)entry < p->cmd_deny.n) return &p->cmd_deny.v[entry];
    if (list == CMDLIST_ALLOW && (size_t)entry < p->cmd_allow.n) return &p->cmd_allow.v[entry];
    return NULL;
}

static void entry_json(jw_t *j, const policy_t *p, const char *key, const char *value, span_t span, bool located)
{
    jw_obj(j);
    json_at(j, located ? p->src : NULL, span.start);
    jw_key(j, "key");
    jw_str(j, key);
    jw_key(j, "value");
    jw_str(j, value);
    jw_end(j);
}

static void entry_text(buf_t *out, const policy_t *p, const char *key, const char *value, span_t span, bool located)
{
    if (located && p->src) {
        srcpos_t s = source_pos(p->src, span.start);
        buf_printf(out, "%s:%u:%u ", p->src->name, s.line, s.col);
    }
    buf_printf(out, "%s \"%s\"", key, value);
}

static void runtime_targets(jw_t *j, bool ok, const char *what)
{
    jw_key(j, "targets");
    jw_obj(j);
    for (int t = 0; t < 2; t++) {
        jw_key(j, facts_target_name((target_t)t));
        jw_obj(j);
        jw_key(j, "decision");
        jw_str(j, word(ok));
        jw_key(j, "artifact");
        jw_str(j, what);
        jw_end(j);
    }
    jw_end(j);
}

static void explain_exec(explain_t *e, const char *cmd, buf_t *out, jw_t *j)
{
    const policy_t *p = e->pol;
    VEC(const char *) deny = {0}, allow = {0};
    for (size_t i = 0; i < p->cmd_deny.n; i++) vec_push(&deny, p->cmd_deny.v[i].s);
    for (size_t i = 0; i < p->cmd_allow.n; i++) vec_push(&allow, p->cmd_allow.v[i].s);
    cmdlist_verdict_t v = cmdlist_check(cmd, strlen(cmd), deny.v, deny.n, allow.v, allow.n);
    vec_free(&deny);
    vec_free(&allow);
    const str_entry_t *ent = cmd_entry(p, v.list, v.entry);
    const char *key = v.list == CMDLIST_DENY ? "bash_command_denylist" : "bash_command_allowlist";
    static const char runtime[] = "drun-mcp session_bash: the command lists are checked before a command starts "
                                  "(not in the OS artifacts; the sandbox contains whatever runs)";
    if (j) {
        jw_obj(j);
        jw_key(j, "query");
        jw_obj(j);
        jw_key(j, "exec");
        jw_str(j, cmd);
        jw_end(j);
        jw_key(j, "decision");
        jw_str(j, word(v.allowed));
        jw_key(j, "rule");
        if (ent) entry_json(j, p, key, ent->s, ent->span, true);
        else jw_null(j);
        jw_key(j, "caps");
        jw_arr(j);
        jw_end(j);
        jw_key(j, "command");
        jw_str(j, v.command);
        jw_key(j, "reason");
        jw_str(j, v.reason);
        runtime_targets(j, v.allowed, runtime);
        jw_end(j);
    } else {
        buf_printf(out, "exec %s: %s\n", cmd, word(v.allowed));
        if (v.command) buf_printf(out, "  command: %s\n", v.command);
        buf_adds(out, "  rule:    ");
        if (ent) entry_text(out, p, key, ent->s, ent->span, true);
        else if (!p->cmd_deny.n && !p->cmd_allow.n) buf_adds(out, "no command lists: every command may start");
        else buf_adds(out, v.list == CMDLIST_NONE && !v.allowed ? "the command could not be split into words" : "no entry matched");
        buf_printf(out, "\n  reason:  %s\n  linux, macos: %s\n", v.reason, runtime);
    }
    cmdlist_verdict_free(&v);
}

/* The host of an http(s) URL, or NULL with *why. Minimal on purpose: the
 * runtime parses with libcurl and re-checks every redirect; this answers
 * for the URL as written. */
static char *url_host(const char *url, const char **why, bool *scheme_ok)
{
    *scheme_ok = false;
    const char *colon = strstr(url, "://");
    if (!colon) {
        *why = "not a URL (scheme://host/...)";
        return NULL;
    }
    size_t sl = (size_t)(colon - url);
    *scheme_ok = (sl == 4 && strncasecmp(url, "http", 4) == 0) || (sl == 5 && strncasecmp(url, "https", 5) == 0);
    const char *h = colon + 3, *end = h + strcspn(h, "/?#");
    const char *at = memchr(h, '@', (size_t)(end - h));
    if (at) h = at + 1;
    const char *stop;
    if (*h == '[') {
        stop = memchr(h, ']', (size_t)(end - h));
        if (!stop) {
            *why = "an IPv6 address without its closing ']'";
            return NULL;
        }
        return xstrndup(h + 1, (size_t)(stop - h - 1));
    }
    stop = memchr(h, ':', (size_t)(end - h));
    if (!stop) stop = end;
    if (stop == h) {
        *why = "no host in the URL";
        return NULL;
    }
    return xstrndup(h, (size_t)(stop - h));
}

typedef struct fetch_answer {
    bool ok;
    const char *reason;
    const domain_rule_t *entry;
    char *host;
} fetch_answer_t;

static void fetch_decide(const policy_t *p, const char *url, fetch_answer_t *f, arena_t *a)
{
    memset(f, 0, sizeof *f);
    bool scheme_ok;
    const char *why = NULL;
    char *raw = url_host(url, &why, &scheme_ok);
    if (!raw) {
        f->reason = why;
        return;
    }
    if (!scheme_ok) {
        f->reason = "session_fetch speaks http and https only";
        free(raw);
        return;
    }
    char *err = NULL;
    if (!domain_host_normalize(raw, &f->host, &err)) {
        f->reason = arena_strdup(a, err ? err : "a host name that cannot be normalised");
        free(err);
        free(raw);
        return;
    }
    free(raw);
    bool priv_ok = policy_get(p, S_ALLOW_PRIVATE_ADDRESSES) != 0;
    const char *local = netaddr_local_name(f->host);
    netaddr_t ad;
    if (domain_host_is_ip(f->host) && netaddr_parse(f->host, &ad)) {
        netaddr_class_t c = netaddr_classify(&ad, NULL);
        if (c != NETADDR_PUBLIC && !priv_ok) {
            buf_t b = BUF_INIT;
            buf_printf(&b, "%s is a %s address, refused unless [network] allow_private_addresses = true", f->host,
                       netaddr_class_name(c));
            f->reason = arena_strdup(a, buf_cstr(&b));
            buf_free(&b);
            return;
        }
    } else if (local && !priv_ok) {
        buf_t b = BUF_INIT;
        buf_printf(&b, "%s names %s, refused unless [network] allow_private_addresses = true", f->host, local);
        f->reason = arena_strdup(a, buf_cstr(&b));
        buf_free(&b);
        return;
    }
    f->ok = policy_domain_allowed(p, f->host, &f->entry);
    if (!f->ok) f->reason = "no domain_allowlist entry matches the host";
    else
        f->reason = priv_ok ? "the host matches; the address it resolves to is not checked "
                              "(allow_private_addresses = true)"
                            : "the host matches; at fetch time the address it resolves to must be public "
                              "(loopback, private, link-local and metadata addresses are refused), and every "
                              "redirect is checked again";
}

static void explain_fetch(explain_t *e, const char *url, buf_t *out, jw_t *j)
{
    const policy_t *p = e->pol;
    fetch_answer_t f;
    fetch_decide(p, url, &f, &e->a);
    static const char runtime[] = "drun-mcp session_fetch (outside the sandbox); sandboxed commands have no network "
                                  "at all on either target";
    if (j) {
        jw_obj(j);
        jw_key(j, "query");
        jw_obj(j);
        jw_key(j, "fetch");
        jw_str(j, url);
        jw_end(j);
        jw_key(j, "decision");
        jw_str(j, word(f.ok));
        jw_key(j, "host");
        jw_str(j, f.host);
        jw_key(j, "rule");
        if (f.entry) entry_json(j, p, "domain_allowlist", f.entry->written, f.entry->span, p->domains_present);
        else jw_null(j);
        jw_key(j, "caps");
        jw_arr(j);
        jw_end(j);
        jw_key(j, "reason");
        jw_str(j, f.reason);
        runtime_targets(j, f.ok, runtime);
        jw_end(j);
    } else {
        buf_printf(out, "fetch %s: %s\n", url, word(f.ok));
        if (f.host) buf_printf(out, "  host:    %s\n", f.host);
        if (f.entry) {
            buf_adds(out, "  rule:    ");
            entry_text(out, p, "domain_allowlist", f.entry->written, f.entry->span, p->domains_present);
            if (!p->domains_present) buf_adds(out, " (drun's default list: the config has no domain_allowlist)");
            buf_addc(out, '\n');
        }
        buf_printf(out, "  reason:  %s\n  linux, macos: %s\n", f.reason, runtime);
    }
    free(f.host);
}

bool explain_query(explain_t *e, explain_q_t q, const char *arg, buf_t *text, jw_t *j, char **err)
{
    if (q == EQ_EXEC) {
        explain_exec(e, arg, text, j);
        return true;
    }
    if (q == EQ_FETCH) {
        explain_fetch(e, arg, text, j);
        return true;
    }
    qpath_t qp;
    if (!parse_qpath(e, arg, &qp, err)) return false;
    tanswer_t a[2];
    for (int t = 0; t < 2; t++) eval_target(e, (target_t)t, &qp, &a[t]);
    if (j) path_json(e, q == EQ_WRITE, arg, a, j);
    else path_text(e, q == EQ_WRITE, arg, a, text);
    return true;
}
