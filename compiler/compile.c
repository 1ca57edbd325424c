/* compile.c — the compile driver and the manifest (policy.json).
 *
 * Everything here is deterministic for the same policy and facts; the
 * manifest's only clock reading is the source mtime, which honours
 * SOURCE_DATE_EPOCH so that golden files are reproducible.
 */
#include "compile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf.h"
#include "digest.h"
#include "fsutil.h"
#include "glob.h"
#include "jsonw.h"
#include "keys.h"
#include "path.h"
#include "ppath.h"
#include "seccomp_filter.h"

/* ---- facts ---------------------------------------------------------------------------------------------- */

/* Paths worth probing for p: its literal rule paths, and for every writable
 * grant the literal tails of "anywhere" caps (R/.git, R/.git/hooks ...), so
 * the template knows what exists there. */
static void probe_paths_of(const resolved_t *r, void *vec, arena_t *a)
{
    VEC(const char *) *v = vec;
    for (size_t i = 0; i < r->grants.n; i++)
        if (r->grants.v[i].base == PB_ROOT) vec_push(v, r->grants.v[i].lexical);
    for (size_t i = 0; i < r->caps.n; i++) {
        const rrule_t *c = &r->caps.v[i];
        if (c->base != PB_ROOT) continue;
        if (!c->glob) {
            vec_push(v, c->lexical);
            continue;
        }
        if (strncmp(c->path, "/**/", 4) != 0 || glob_has_wildcard(c->path + 4)) continue;
        const char *tail = glob_unescape(c->path + 4, a);
        for (size_t k = 0; k < r->grants.n; k++) {
            const rrule_t *g = &r->grants.v[k];
            if (g->base != PB_ROOT || g->level != LVL_WRITE) continue;
            /* every prefix of the tail: R/.git, then R/.git/hooks */
            for (const char *s = tail;;) {
                const char *slash = strchr(s, '/');
                size_t n = slash ? (size_t)(slash - tail) : strlen(tail);
                vec_push(v, path_join(g->path, arena_strndup(a, tail, n), a));
                if (!slash) break;
                s = slash + 1;
            }
        }
    }
}

facts_t *compile_facts_for(const policy_t *p, target_t t, const char *const files[2], char **err)
{
    for (int i = 0; i < 2; i++) {
        if (!files || !files[i]) continue;
        facts_t *f = facts_load(files[i], err);
        if (!f) return NULL;
        if (f->target == t) return f;
        facts_free(f);
    }
    facts_t *f = facts_probe(t, NULL);
    if (t == TARGET_MACOS) return f; /* built-in macOS facts: nothing to probe here */
    resolved_t *r = lattice_resolve(p, f);
    VEC(const char *) paths = {0};
    arena_t a = ARENA_INIT;
    probe_paths_of(r, &paths, &a);
    vec_push(&paths, (const char *)NULL);
    facts_probe_paths(f, paths.v);
    vec_free(&paths);
    arena_free(&a);
    lattice_free(r);
    return f;
}

/* ---- the manifest ---------------------------------------------------------------------------------------- */

static void at_json(jw_t *j, source_t *src, span_t span)
{
    if (!src || (span.start == 0 && span.end == 0)) {
        jw_null(j);
        return;
    }
    srcpos_t p = source_pos(src, span.start);
    jw_obj(j);
    jw_key(j, "file");
    jw_str(j, src->name);
    jw_key(j, "line");
    jw_int(j, p.line);
    jw_key(j, "column");
    jw_int(j, p.col);
    jw_end(j);
}

static void strs_json(jw_t *j, const char *key, const str_entry_t *v, size_t n, source_t *src)
{
    jw_key(j, key);
    jw_arr(j);
    for (size_t i = 0; i < n; i++) {
        jw_obj(j);
        jw_key(j, "value");
        jw_str(j, v[i].s);
        jw_key(j, "at");
        at_json(j, src, v[i].span);
        jw_end(j);
    }
    jw_end(j);
}

static void policy_json(jw_t *j, const policy_t *p)
{
    jw_obj(j);
    jw_key(j, "filesystem");
    jw_arr(j);
    for (size_t i = 0; i < p->rules.n; i++) {
        const rule_t *r = &p->rules.v[i];
        buf_t norm = BUF_INIT;
        ppath_format(&r->path, &norm);
        jw_obj(j);
        jw_key(j, "key");
        jw_str(j, policy_rule_kind_key(r->kind));
        jw_key(j, "written");
        jw_str(j, r->written);
        jw_key(j, "path");
        jw_str(j, buf_cstr(&norm));
        jw_key(j, "glob");
        jw_bool(j, r->path.glob);
        jw_key(j, r->cap ? "cap" : "grant");
        jw_str(j, policy_level_name(r->level));
        jw_key(j, "at");
        at_json(j, p->src, r->span);
        jw_end(j);
        buf_free(&norm);
    }
    jw_end(j);
    jw_key(j, "domain_allowlist");
    jw_arr(j);
    for (size_t i = 0; i < p->domains.n; i++) {
        jw_obj(j);
        jw_key(j, "value");
        jw_str(j, p->domains.v[i].written);
        jw_key(j, "normalized");
        jw_str(j, p->domains.v[i].pattern);
        jw_key(j, "at");
        at_json(j, p->domains_present ? p->src : NULL, p->domains.v[i].span);
        jw_end(j);
    }
    jw_end(j);
    /* the proxy's lists (SPEC §15), when the policy gives commands network */
    if (p->command_domains.n) {
        jw_key(j, "network.command_domains");
        jw_arr(j);
    }
    for (size_t i = 0; i < p->command_domains.n; i++) {
        jw_obj(j);
        jw_key(j, "value");
        jw_str(j, p->command_domains.v[i].written);
        jw_key(j, "normalized");
        jw_str(j, p->command_domains.v[i].pattern);
        jw_key(j, "at");
        at_json(j, p->src, p->command_domains.v[i].span);
        jw_end(j);
    }
    if (p->command_domains.n) {
        jw_end(j);
        jw_key(j, "network.command_ports");
        jw_arr(j);
        for (size_t i = 0; i < p->command_ports.n; i++) jw_int(j, p->command_ports.v[i]);
        jw_end(j);
    }
    strs_json(j, "bash_command_denylist", p->cmd_deny.v, p->cmd_deny.n, p->src);
    strs_json(j, "bash_command_allowlist", p->cmd_allow.v, p->cmd_allow.n, p->src);
    strs_json(j, "env_allowlist", p->env_allowlist.v, p->env_allowlist.n, p->src);
    strs_json(j, "env.passthrough", p->env_passthrough.v, p->env_passthrough.n, p->src);
    jw_key(j, "env.set");
    jw_arr(j);
    for (size_t i = 0; i < p->env_set.n; i++) {
        jw_obj(j);
        jw_key(j, "name");
        jw_str(j, p->env_set.v[i].name);
        jw_key(j, "value");
        jw_str(j, p->env_set.v[i].value);
        jw_key(j, "at");
        at_json(j, p->src, p->env_set.v[i].span);
        jw_end(j);
    }
    jw_end(j);
    jw_key(j, "settings");
    jw_obj(j);
    for (int i = 0; i < S_COUNT; i++) {
        const setting_info_t *si = &policy_settings[i];
        char q[96];
        snprintf(q, sizeof q, "%s%s%s", si->table ? si->table : "", si->table ? "." : "", si->key);
        jw_key(j, q);
        if (si->boolean) jw_bool(j, p->set[i].v != 0);
        else jw_int(j, p->set[i].v);
    }
    jw_end(j);
    jw_end(j);
}

static void source_mtime(const policy_t *p, buf_t *out)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    time_t t = 0;
    if (sde && *sde) t = (time_t)strtoll(sde, NULL, 10);
    else if (p->path) {
        struct stat st;
        if (stat(p->path, &st) == 0) t = st.st_mtime;
    }
    struct tm tm;
    gmtime_r(&t, &tm);
    char s[32];
    strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    buf_adds(out, s);
}

static void build_manifest(compiled_t *c)
{
    const policy_t *p = c->pol;
    /* reserved once, as the SBPL text (sbpl_build): some 320 bytes a rule */
    buf_reserve(&c->manifest, 16384 + p->src->len * 2 + p->rules.n * 512);
    jw_t j;
    jw_init(&j, &c->manifest, true);
    jw_obj(&j);
    jw_key(&j, "format");
    jw_int(&j, 1);
    jw_key(&j, "compiler");
    jw_str(&j, "drun-policy " DRUN_VERSION);
    jw_key(&j, "source");
    jw_obj(&j);
    char hex[65];
    digest_sha256_hex(p->src->text, p->src->len, hex);
    jw_key(&j, "path");
    jw_str(&j, p->path ? p->path : "<default>");
    jw_key(&j, "sha256");
    jw_str(&j, hex);
    jw_key(&j, "size");
    jw_int(&j, (int64_t)p->src->len);
    buf_t mt = BUF_INIT;
    source_mtime(p, &mt);
    jw_key(&j, "mtime");
    jw_str(&j, buf_cstr(&mt));
    buf_free(&mt);
    jw_key(&j, "text"); /* lets drun-mcp --artifacts rebuild the policy with no config file */
    jw_strn(&j, p->src->text, p->src->len);
    jw_end(&j);
    jw_key(&j, "facts");
    jw_obj(&j);
    for (int t = 0; t < 2; t++) {
        if (!c->facts[t]) continue;
        buf_t fj = BUF_INIT;
        facts_to_json(c->facts[t], &fj);
        buf_truncate(&fj, fj.len - 1); /* drop the newline */
        jw_key(&j, facts_target_name((target_t)t));
        /* re-indent the embedded object by writing it compactly */
        jw_raw(&j, buf_cstr(&fj));
        buf_free(&fj);
    }
    jw_end(&j);
    jw_key(&j, "policy");
    policy_json(&j, p);
    jw_key(&j, "artifacts");
    jw_obj(&j);
    if (c->sbpl) {
        digest_sha256_hex(c->sbpl->text.p, c->sbpl->text.len, hex);
        jw_key(&j, "policy.sb");
        jw_str(&j, hex);
    }
    if (c->bwrap) {
        digest_sha256_hex(c->bwrap_args.p, c->bwrap_args.len, hex);
        jw_key(&j, "bwrap.args");
        jw_str(&j, hex);
        digest_sha256_hex(c->seccomp.p, c->seccomp.len, hex);
        jw_key(&j, "seccomp.bpf");
        jw_str(&j, hex);
        digest_sha256_hex(c->seccomp_txt.p, c->seccomp_txt.len, hex);
        jw_key(&j, "seccomp.txt");
        jw_str(&j, hex);
    }
    jw_end(&j);
    jw_end(&j);
    buf_addc(&c->manifest, '\n');
}

/* ---- compile --------------------------------------------------------------------------------------------- */

static facts_t *facts_of(const policy_t *p, target_t t, const compile_opts_t *o, const char *const *json, char **err)
{
    if (json) return facts_from_json(json[t], strlen(json[t]), err);
    return compile_facts_for(p, t, o->facts_files, err);
}

/* The Linux backends say what stops them as one diagnostic with no
 * location; the compile driver hands it on as *err, which its callers print
 * as a line of their own ("drun-policy compile: ..."), apart from the
 * policy's located diagnostics. Frees bd (reusable after). */
static bool unlocated(bool ok, diag_list_t *bd, char **err)
{
    if (!ok && bd->n && !*err) *err = xstrdup(bd->v[bd->n - 1].msg);
    diag_list_free(bd);
    return ok;
}

static compiled_t *compile_with(const policy_t *p, const compile_opts_t *o, const char *const *json, diag_list_t *diags,
                                char **err);

compiled_t *compile_policy(const policy_t *p, const compile_opts_t *o, diag_list_t *diags, char **err)
{
    return compile_with(p, o, NULL, diags, err);
}

compiled_t *compile_policy_facts_json(const policy_t *p, const char *const facts_json[2], diag_list_t *diags, char **err)
{
    compile_opts_t o = {facts_json[TARGET_LINUX] != NULL, facts_json[TARGET_MACOS] != NULL, {NULL, NULL}};
    return compile_with(p, &o, facts_json, diags, err);
}

/* Fail closed (SPEC §13): a protection that depends on a host fact is never
 * dropped because the fact is unknown. --disable-userns is emitted only when
 * the facts say bwrap has it, so an unknown bwrap would silently give a
 * vector without it: refuse instead. True when the facts are complete. */
static bool linux_facts_complete(const facts_t *f, diag_list_t *diags)
{
    if (f->bwrap_version && *f->bwrap_version) return true;
    diag_add(diags, SEV_ERROR, NULL, NULL, (span_t){0, 0},
             "%s: bwrap's version is unknown (no bwrap on PATH, or it did not answer --version and --help), so "
             "whether the sandbox can be kept from making user namespaces (--disable-userns) is unknown; install "
             "bubblewrap on the host that compiles, or compile with --facts FILE written by `drun-policy facts` "
             "on the host that runs the sandbox",
             f->origin);
    return false;
}

static compiled_t *compile_with(const policy_t *p, const compile_opts_t *o, const char *const *json, diag_list_t *diags,
                                char **err)
{
    compiled_t *c = xcalloc(1, sizeof *c);
    c->pol = p;
    if (o->macos_target) {
        if (!(c->facts[TARGET_MACOS] = facts_of(p, TARGET_MACOS, o, json, err))) goto fail;
        c->res[TARGET_MACOS] = lattice_resolve(p, c->facts[TARGET_MACOS]);
        if (!sbpl_build(c->res[TARGET_MACOS], c->facts[TARGET_MACOS], diags, &c->sbpl)) goto fail;
    }
    if (o->linux_target) {
        if (!(c->facts[TARGET_LINUX] = facts_of(p, TARGET_LINUX, o, json, err))) goto fail;
        if (!linux_facts_complete(c->facts[TARGET_LINUX], diags)) goto fail;
        const facts_t *f = c->facts[TARGET_LINUX];
        c->res[TARGET_LINUX] = lattice_resolve(p, f);
        diag_list_t bd = {0};
        if (!unlocated(bwrap_build(c->res[TARGET_LINUX], f, &bd, &c->bwrap), &bd, err)) goto fail;
        bwrap_render(c->bwrap, &c->bwrap_args);
        if (!unlocated(seccomp_build(c->res[TARGET_LINUX], f, &bd, &c->seccomp), &bd, err)) goto fail;
        bpf_disasm(c->seccomp.p, c->seccomp.len, &c->seccomp_txt);
    }
    build_manifest(c);
    return c;
fail:
    if (!*err && diag_count(diags, SEV_ERROR) == 0) *err = xstrdup("compilation failed");
    compile_free(c);
    return NULL;
}

void compile_free(compiled_t *c)
{
    if (!c) return;
    for (int t = 0; t < 2; t++) {
        lattice_free(c->res[t]);
        facts_free(c->facts[t]);
    }
    sbpl_free(c->sbpl);
    bwrap_free(c->bwrap);
    buf_free(&c->bwrap_args);
    buf_free(&c->seccomp);
    buf_free(&c->seccomp_txt);
    buf_free(&c->manifest);
    free(c);
}

bool compile_write(const compiled_t *c, const char *dir, char **err)
{
    if (!fsutil_mkdirs(dir, 0755)) {
        *err = xasprintf("%s: cannot create: %s", dir, strerror(errno));
        return false;
    }
    struct {
        const char *name;
        const buf_t *b;
        bool want;
    } files[] = {
        {"policy.sb", c->sbpl ? &c->sbpl->text : NULL, c->sbpl != NULL},
        {"bwrap.args", &c->bwrap_args, c->bwrap != NULL},
        {"seccomp.bpf", &c->seccomp, c->bwrap != NULL},
        {"seccomp.txt", &c->seccomp_txt, c->bwrap != NULL},
        {"policy.json", &c->manifest, true}, /* last: it names the others' hashes */
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        if (!files[i].want) continue;
        char *path = xasprintf("%s/%s", dir, files[i].name);
        bool ok = fsutil_write_atomic(path, files[i].b->p ? files[i].b->p : "", files[i].b->len, err);
        free(path);
        if (!ok) return false;
    }
    return true;
}
