/* test_lattice.c — level(path) on hand-made policies, and both backends held
 * to it: the SBPL rules (sbpl_eval) and the bwrap template (bwrap_eval) must
 * give the lattice's answer on every probe, with a symbolic workspace. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwrap.h"
#include "lattice.h"
#include "sbpl.h"
#include "tap.h"

static const char facts_json[] =
    "{\"format\":1,\"target\":\"linux\",\"arch\":\"x86_64\",\"home\":\"/h\","
    "\"path_dirs\":[\"/usr/bin\"],\"system_read\":[\"/usr\",\"/etc\"],"
    "\"root_links\":{\"/bin\":\"usr/bin\"},\"firmlinks\":{},"
    "\"bwrap\":{\"version\":\"0.8.0\",\"disable_userns\":true},"
    "\"paths\":{\"/h\":{\"type\":\"dir\",\"realpath\":\"/h\"},"
    "\"/h/p\":{\"type\":\"dir\",\"realpath\":\"/h/p\"},"
    "\"/h/p/s\":{\"type\":\"dir\",\"realpath\":\"/h/p/s\"},"
    "\"/h/p/s/pub\":{\"type\":\"dir\",\"realpath\":\"/h/p/s/pub\"},"
    "\"/h/d\":{\"type\":\"dir\",\"realpath\":\"/h/d\"},"
    "\"/h/d/raw\":{\"type\":\"dir\",\"realpath\":\"/h/d/raw\"},"
    "\"/h/d/raw/x\":{\"type\":\"file\",\"realpath\":\"/h/d/raw/x\"},"
    "\"/h/link\":{\"type\":\"dir\",\"realpath\":\"/h/d\"},"
    "\"/h/k.pem\":{\"type\":\"file\",\"realpath\":\"/h/k.pem\"}}}";

typedef struct fixture {
    policy_t *pol;
    facts_t *facts;
    resolved_t *res;
} fixture_t;

static bool load(fixture_t *f, const char *toml)
{
    diag_list_t d = {0};
    f->pol = policy_build(source_new("t.toml", toml, strlen(toml)), TOML_1_1, &d);
    if (!f->pol) {
        buf_t b = BUF_INIT;
        diag_render_all(&b, &d, false);
        printf("# %s", buf_cstr(&b));
        buf_free(&b);
    }
    diag_list_free(&d);
    char *err = NULL;
    f->facts = facts_from_json(facts_json, sizeof facts_json - 1, &err);
    if (!f->pol || !f->facts) return false;
    f->res = lattice_resolve(f->pol, f->facts);
    return true;
}

static void unload(fixture_t *f)
{
    lattice_free(f->res);
    facts_free(f->facts);
    policy_free(f->pol);
}

static const roots_t roots = {"/ws", "/sc", NULL, false};

static void expect(fixture_t *f, const char *path, level_t want, const char *why)
{
    verdict_t v;
    level_t got = lattice_level_of(f->res, &roots, path, &v);
    char name[256];
    snprintf(name, sizeof name, "%s: %s is %s", why, path, policy_level_name(want));
    if (!CHECK(got == want, name)) printf("#   got %s (grant %s)\n", policy_level_name(got), v.grant ? v.grant->rule->written : "none");
}

static void test_carveouts(void)
{
    fixture_t f;
    if (!CHECK(load(&f, "[filesystem]\n"
                        "deny_read = [\"~\", \"~/p/s\"]\n"
                        "allow_read = [\"~/p\", \"~/p/s/pub\"]\n"
                        "allow_write = [\"~/d\", \"~/d/raw/scratch\"]\n"
                        "deny_write = [\"~/d/raw\"]\n"),
               "carveouts policy builds"))
        return;
    expect(&f, "/h", LVL_NONE, "deny_read ~");
    expect(&f, "/h/other", LVL_NONE, "below deny_read ~");
    expect(&f, "/h/p/x", LVL_READ, "allow_read deeper re-opens");
    expect(&f, "/h/p/s/key", LVL_NONE, "deny_read deeper closes again");
    expect(&f, "/h/p/s/pub/a", LVL_READ, "and allow_read reopens below it");
    expect(&f, "/h/d/new", LVL_WRITE, "allow_write");
    expect(&f, "/h/d/raw/x", LVL_READ, "deny_write caps");
    expect(&f, "/h/d/raw/scratch/y", LVL_READ, "a deeper grant never lifts a cap");
    expect(&f, "/usr/bin/env", LVL_READ, "system read set");
    expect(&f, "/bin/env", LVL_NONE, "the link itself is not a grant (resolved by the sandbox)");
    expect(&f, "/ws/a/b", LVL_WRITE, "workspace");
    expect(&f, "/ws/.git/hooks/pre-commit", LVL_READ, "git hooks protected");
    expect(&f, "/ws/.git/objects/x", LVL_WRITE, "the rest of .git is not");
    expect(&f, "/ws/sub/.bashrc", LVL_READ, "shell rc anywhere");
    expect(&f, "/sc/.mcp.json", LVL_READ, "agent config in scratch");
    expect(&f, "/tmp/x", LVL_NONE, "host /tmp");
    expect(&f, "/root", LVL_NONE, "unlisted");
    unload(&f);
}

static void test_ties_and_globs(void)
{
    fixture_t f;
    if (!CHECK(load(&f, "[filesystem]\n"
                        "allow_write = [\"/h/same\"]\n"
                        "allow_read = [\"/h/same\", \"~\"]\n"
                        "deny_read = [\"**/*.pem\", \"~/sec/*/k\"]\n"
                        "deny_write = [\"**/.env\", \"/h/lit\\\\*\"]\n"
                        "[protect]\ngit_hooks = false\n"),
               "ties and globs policy builds"))
        return;
    expect(&f, "/h/same/f", LVL_READ, "two grants on one path: the lower wins");
    expect(&f, "/h/k.pem", LVL_NONE, "deny_read glob");
    expect(&f, "/h/a/b/c.pem", LVL_NONE, "anywhere glob at depth");
    expect(&f, "/h/k.pem.txt", LVL_READ, "near miss");
    expect(&f, "/h/sec/a/k", LVL_NONE, "one-component star");
    expect(&f, "/h/sec/a/b/k", LVL_READ, "star does not cross '/'");
    expect(&f, "/ws/.env", LVL_READ, "deny_write anywhere glob in the workspace");
    expect(&f, "/ws/.envrc", LVL_WRITE, "near miss stays writable");
    expect(&f, "/h/lit*", LVL_READ, "escaped star: literal path");
    expect(&f, "/ws/.git/hooks/x", LVL_WRITE, "git_hooks off");
    expect(&f, "/ws/.git/config", LVL_READ, "git_config still on");
    unload(&f);
}

static void test_symlinks_and_session(void)
{
    fixture_t g;
    if (!CHECK(load(&g, "[filesystem]\nallow_read = [\"~/link\", \"${WORKSPACE}/vendor\"]\n"
                        "deny_read = [\"${WORKSPACE}/secret\"]\n"),
               "symlink/session policy builds"))
        return;
    expect(&g, "/h/d/x", LVL_READ, "a grant on a symlink applies to its target");
    expect(&g, "/ws/secret/a", LVL_NONE, "workspace-relative deny_read");
    expect(&g, "/ws/vendor/a", LVL_READ, "workspace-relative read-only grant");
    expect(&g, "/ws/src", LVL_WRITE, "rest of the workspace");
    unload(&g);
}

/* Both backends against the lattice on many paths (template: symbolic
 * workspace; session paths exist only at their roots). */
static void test_backends_agree(void)
{
    fixture_t f;
    if (!CHECK(load(&f, "[filesystem]\n"
                        "deny_read = [\"~\", \"~/p/s\", \"**/*.pem\"]\n"
                        "allow_read = [\"~/p\", \"~/p/s/pub\"]\n"
                        "allow_write = [\"~/d\"]\n"
                        "deny_write = [\"~/d/raw\"]\n"),
               "agreement policy builds"))
        return;
    diag_list_t d = {0};
    sbpl_t *sb;
    sbpl_build(f.res, f.res->facts, &d, &sb);
    bwrap_t *bw;
    bwrap_build(f.res, f.res->facts, &d, &bw);
    CHECK(sb && bw, "both backends build");
    const char *paths[] = {"/h", "/h/x", "/h/p", "/h/p/f", "/h/p/s", "/h/p/s/k", "/h/p/s/pub", "/h/p/s/pub/z",
                           "/h/d", "/h/d/f", "/h/d/raw", "/h/d/raw/x", "/usr/lib/x", "/etc/hosts", "/ws/f",
                           "/ws/deep/er/f", "/sc/f", "/var/x", "/h/p/k.pem", "/h/d/k.pem"};
    int sb_bad = 0, bw_bad = 0;
    for (size_t i = 0; i < sizeof paths / sizeof *paths && sb && bw; i++) {
        level_t want = lattice_level_of(f.res, &roots, paths[i], NULL);
        level_t s = sbpl_eval(sb, &roots, paths[i], NULL, NULL);
        bool priv;
        /* globs are expanded at exec time on Linux: skip glob-capped paths for the template */
        level_t b = bwrap_eval(bw, &roots, paths[i], NULL, &priv);
        if (s != want) printf("# sbpl %s: %s, lattice %s\n", paths[i], policy_level_name(s), policy_level_name(want)), sb_bad++;
        if (!strstr(paths[i], ".pem") && b != want)
            printf("# bwrap %s: %s, lattice %s\n", paths[i], policy_level_name(b), policy_level_name(want)), bw_bad++;
    }
    CHECK(sb_bad == 0, "SBPL rules give the lattice's level on every probe");
    CHECK(bw_bad == 0, "bwrap template gives the lattice's level on every probe");
    sbpl_free(sb);
    bwrap_free(bw);
    diag_list_free(&d);
    unload(&f);
}

static const char *asp(arena_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *asp(arena_t *a, const char *fmt, ...)
{
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    return arena_strdup(a, b);
}

/* facts_probe_paths records a batch at once (appended, sorted at the end)
 * and resolves paths below a missing one without asking the filesystem: on
 * a real tree with a symlinked dir, a missing dir with many paths below it,
 * duplicates and a path already known, every record is what one probe per
 * path gives, the list is sorted without duplicates, and a second batch
 * keeps the first's records. */
static void test_facts_probe_batch(void)
{
    char tmpl[] = "/tmp/drun-probe.XXXXXX", p[256], q[256];
    const char *d = mkdtemp(tmpl);
    if (!d) {
        CHECK(false, "facts_probe_paths: mkdtemp");
        return;
    }
    snprintf(p, sizeof p, "%s/real", d);
    int ok = mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/real/sub", d);
    ok |= mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/real", d);
    snprintf(q, sizeof q, "%s/link", d);
    ok |= symlink(p, q);
    CHECK(ok == 0, "facts_probe_paths: the fixture tree is made");

    facts_t *f = facts_macos_default(); /* a few records already, sorted */
    size_t before = f->paths.n;
    arena_t a = ARENA_INIT;
    VEC(const char *) in = {0};
    for (int i = 0; i < 400; i++) { /* 400 paths below one missing dir, out of order */
        vec_push(&in, asp(&a, "%s/link/gone/w%d/.bashrc", d, (i * 7) % 400));
        vec_push(&in, asp(&a, "%s/link/gone/w%d", d, (i * 7) % 400));
    }
    vec_push(&in, asp(&a, "%s/link/gone", d));
    vec_push(&in, asp(&a, "%s/link/sub", d));
    vec_push(&in, asp(&a, "%s/link/sub", d)); /* twice */
    vec_push(&in, "/Users/user");             /* already recorded */
    vec_push(&in, (const char *)NULL);
    facts_probe_paths(f, in.v);

    bool sorted = true;
    for (size_t i = 1; i < f->paths.n; i++) sorted &= strcmp(f->paths.v[i - 1].path, f->paths.v[i].path) < 0;
    CHECK(sorted, "facts_probe_paths: the list is sorted, without duplicates");
    /* 802 paths below the link, each with its realpath below real/ */
    CHECK(f->paths.n == before + 1604, "facts_probe_paths: every new path once, and where it leads");
    path_fact_t e = facts_lookup(f, asp(&a, "%s/link/gone/w123/.bashrc", d), &a);
    CHECK(e.type == PT_MISSING && !strcmp(e.realpath, asp(&a, "%s/real/gone/w123/.bashrc", d)),
          "facts_probe_paths: below a missing dir, missing, resolved through the link");
    e = facts_lookup(f, asp(&a, "%s/link/gone", d), &a);
    CHECK(e.type == PT_MISSING && !strcmp(e.realpath, asp(&a, "%s/real/gone", d)),
          "facts_probe_paths: a missing dir below a link resolves through it");
    e = facts_lookup(f, asp(&a, "%s/real/sub", d), &a);
    CHECK(e.type == PT_DIR && !strcmp(e.realpath, e.path), "facts_probe_paths: a symlink's target is recorded");
    e = facts_lookup(f, "/Users/user", &a);
    CHECK(e.type == PT_DIR && !strcmp(e.realpath, "/Users/user"), "facts_probe_paths: a known record is kept");

    VEC(const char *) more = {0}; /* a second batch: the first's records stay, found */
    vec_push(&more, asp(&a, "%s/link/gone/w5/x", d));
    vec_push(&more, asp(&a, "%s/link/gone/w5", d));
    vec_push(&more, (const char *)NULL);
    size_t mid = f->paths.n;
    facts_probe_paths(f, more.v);
    e = facts_lookup(f, asp(&a, "%s/link/gone/w5/x", d), &a);
    CHECK(f->paths.n == mid + 2 && e.type == PT_MISSING && !strcmp(e.realpath, asp(&a, "%s/real/gone/w5/x", d)),
          "facts_probe_paths: a second batch adds only what is new");
    vec_free(&more);
    vec_free(&in);
    arena_free(&a);
    facts_free(f);
    snprintf(p, sizeof p, "%s/link", d);
    unlink(p);
    snprintf(p, sizeof p, "%s/real/sub", d);
    rmdir(p);
    snprintf(p, sizeof p, "%s/real", d);
    rmdir(p);
    rmdir(d);
}

/* facts_set_path keeps the list sorted as it goes (the probe adds paths in
 * any order, thousands for a large policy): every path is found, a second
 * set replaces the first, ancestors derive. */
static void test_facts_insert(void)
{
    facts_t *f = facts_macos_default();
    char path[64], real[64];
    for (int i = 0; i < 3000; i++) { /* a stride through 0..2999: no order at all */
        int k = (int)(((long)i * 1237) % 3000);
        snprintf(path, sizeof path, "/srv/d%d", k);
        snprintf(real, sizeof real, "/real/d%d", k);
        facts_set_path(f, path, k % 2 ? PT_FILE : PT_DIR, real);
    }
    facts_set_path(f, "/srv/d7", PT_FILE, "/elsewhere");
    bool sorted = true;
    for (size_t i = 1; i < f->paths.n; i++) sorted &= strcmp(f->paths.v[i - 1].path, f->paths.v[i].path) < 0;
    CHECK(sorted, "facts_set_path: the path list stays sorted, without duplicates");
    arena_t a = ARENA_INIT;
    bool all = true;
    for (int k = 0; k < 3000; k++) {
        snprintf(path, sizeof path, "/srv/d%d", k);
        snprintf(real, sizeof real, "/real/d%d", k);
        path_fact_t p = facts_lookup(f, path, &a);
        all &= k == 7 ? (p.type == PT_FILE && !strcmp(p.realpath, "/elsewhere"))
                      : (p.type == (k % 2 ? PT_FILE : PT_DIR) && !strcmp(p.realpath, real));
    }
    CHECK(all, "facts_set_path: 3,000 paths added out of order are each found, the replaced one replaced");
    path_fact_t below = facts_lookup(f, "/srv/d12/sub", &a);
    CHECK_STR(below.realpath, "/real/d12/sub", "facts_lookup: below a recorded directory, derived from it");
    arena_free(&a);
    facts_free(f);
}

/* Runtime-owned paths (SPEC §13): caps at none whatever the grants, on
 * Linux; a session root inside one stays the session's; a runtime-owned
 * path inside the workspace stays dark; the compile-time template leaves
 * them to the runner. Registers into the process-wide set: runs last. */
static void test_runtime_owned(void)
{
    lattice_owned_add("/h/cfg.toml", "the config in force");
    fixture_t f;
    if (!CHECK(load(&f, "[filesystem]\nallow_write = [\"~\"]\n"), "runtime-owned policy builds")) return;
    expect(&f, "/h/other", LVL_WRITE, "allow_write ~");
    expect(&f, "/h/.drun", LVL_NONE, "runtime-owned ~/.drun under allow_write ~");
    expect(&f, "/h/.drun/config.toml", LVL_NONE, "below runtime-owned ~/.drun");
    expect(&f, "/h/.local/state/drun/sessions/x", LVL_NONE, "below the default state dir");
    expect(&f, "/h/.local/state", LVL_WRITE, "an ancestor of the state dir keeps its grant (it is pinned, not hidden)");
    expect(&f, "/h/.cache/drun/bwrap-probe", LVL_NONE, "the bwrap probe cache");
    expect(&f, "/h/cfg.toml", LVL_NONE, "a registered config");
    verdict_t v;
    lattice_level_of(f.res, &roots, "/h/.drun/config.toml", &v);
    bool named = false;
    for (unsigned i = 0; i < v.ncaps; i++) named |= v.caps[i]->rule->kind == RK_RUNTIME && v.caps[i]->rule->origin;
    CHECK(named, "the verdict names a runtime-owned cap with its reason");

    const roots_t in_state = {"/h/.local/state/drun/sessions/A/workspace", "/h/.local/state/drun/sessions/A/scratch",
                              NULL, false};
    CHECK(lattice_level_of(f.res, &in_state, "/h/.local/state/drun/sessions/A/workspace/f", NULL) == LVL_WRITE,
          "the session's own workspace inside the state dir stays writable to it");
    CHECK(lattice_level_of(f.res, &in_state, "/h/.local/state/drun/sessions/A/scratch", NULL) == LVL_WRITE,
          "the session's own scratch dir inside the state dir stays writable to it");
    CHECK(lattice_level_of(f.res, &in_state, "/h/.local/state/drun/sessions/B/workspace/f", NULL) == LVL_NONE,
          "another session's workspace stays dark");
    const roots_t home_ws = {"/h", "/sc", NULL, false};
    CHECK(lattice_level_of(f.res, &home_ws, "/h/.drun/config.toml", NULL) == LVL_NONE,
          "a runtime-owned path inside the workspace stays dark (the workspace is not exempt)");

    char *err = NULL;
    bwrap_t *bw = bwrap_plan(f.res, NULL, &err);
    bool clean = bw != NULL;
    for (size_t i = 0; bw && i < bw->ops.n; i++) {
        buf_t t = BUF_INIT;
        bwrap_op_text(&bw->ops.v[i], &t);
        if (strstr(buf_cstr(&t), "/h/.drun") || strstr(buf_cstr(&t), "/h/cfg.toml")) clean = false;
        buf_free(&t);
    }
    CHECK(clean, "the bwrap.args template leaves the runtime-owned paths to the runner");
    bwrap_free(bw);
    free(err);
    unload(&f);
}

int main(void)
{
    test_facts_insert();
    test_facts_probe_batch();
    test_carveouts();
    test_ties_and_globs();
    test_symlinks_and_session();
    test_backends_agree();
    test_runtime_owned();
    return tap_done();
}
