/* test_lattice_index.c — the lattice index (lattice_index.h) gives
 * lattice_level_of()'s own answer: the same level, the same deciding grant
 * and the same caps in the same order, on both targets, for generated
 * policies (grants and caps at nested paths and their ancestors, globs
 * anchored and "**" ones, escapes, session paths, symlinks, firmlinks,
 * merged-/usr links, [protect] patterns, runtime-owned paths with a session
 * inside them) and many probe paths each; and lattice_index_level_below()
 * agrees with a scan of the grants. One test point per policy and roots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lattice.h"
#include "lattice_index.h"
#include "path.h"
#include "tap.h"

static const char linux_facts[] =
    "{\"format\":1,\"target\":\"linux\",\"arch\":\"x86_64\",\"home\":\"/h\","
    "\"path_dirs\":[\"/usr/bin\",\"/h/a/bin\"],\"system_read\":[\"/usr\",\"/etc\"],"
    "\"root_links\":{\"/bin\":\"usr/bin\"},\"firmlinks\":{},"
    "\"bwrap\":{\"version\":\"0.8.0\",\"disable_userns\":true},"
    "\"paths\":{\"/h\":{\"type\":\"dir\",\"realpath\":\"/h\"},"
    "\"/h/a\":{\"type\":\"dir\",\"realpath\":\"/h/a\"},"
    "\"/h/link\":{\"type\":\"dir\",\"realpath\":\"/h/a/b\"},"
    "\"/h/a/link\":{\"type\":\"dir\",\"realpath\":\"/srv\"}}}";

static const char macos_facts[] =
    "{\"format\":1,\"target\":\"macos\",\"arch\":\"aarch64\",\"home\":\"/h\","
    "\"path_dirs\":[\"/usr/bin\"],\"system_read\":[\"/usr\",\"/private/etc\"],"
    "\"root_links\":{},\"firmlinks\":{\"/tmp\":\"/private/tmp\",\"/etc\":\"/private/etc\"},"
    "\"bwrap\":{\"version\":\"\",\"disable_userns\":false},"
    "\"paths\":{\"/h\":{\"type\":\"dir\",\"realpath\":\"/h\"},"
    "\"/h/link\":{\"type\":\"dir\",\"realpath\":\"/h/a/b\"}}}";

/* A small deterministic generator: the same policies on every run. */
static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned pick(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* Where entries start: home, the root, the session roots (symbolic and as
 * plain paths, so that two bases reach one path), a symlink, a firmlink, a
 * merged-/usr link, a system dir, the runtime-owned dir. */
static const char *const bases[] = {"~", "~/a", "~/link", "/", "${WORKSPACE}", "${SCRATCH}", "/ws",
                                    "/sc", "/tmp", "/bin", "/usr", "/srv/state", "/srv", "/h/a/link",
                                    "/etc"};
#define NBASES (sizeof bases / sizeof *bases)
static const char *const names[] = {"a", "b", ".git", "hooks", "x.pem", ".env", "c"};
#define NNAMES (sizeof names / sizeof *names)
/* glob components (caps only); "\\\\*" is TOML for \*, an escaped star */
static const char *const wild[] = {"*", "**", "?", "*.pem", "b*", "\\\\*", ".g?t"};
#define NWILD (sizeof wild / sizeof *wild)

static void add_path(buf_t *b, bool cap)
{
    unsigned depth = pick(4);
    const char *base = cap && pick(5) == 0 ? "**" : bases[pick(NBASES)];
    buf_adds(b, base);
    if (base[0] == '*') depth = 1 + pick(2); /* anywhere: "**" + "/NAME..." */
    /* a glob below a session root is refused: write "**" + "/PATTERN" */
    bool globs = cap && base[0] != '$';
    for (unsigned i = 0; i < depth; i++) {
        bool w = globs && pick(4) == 0;
        buf_printf(b, "/%s", w ? wild[pick(NWILD)] : names[pick(NNAMES)]);
    }
}

static void gen_policy(buf_t *b, unsigned nrules)
{
    static const char *const keys[] = {"allow_read", "allow_write", "deny_read", "deny_write"};
    buf_truncate(b, 0);
    if (pick(3) == 0) {
        /* a third with every [protect] pattern on: the "**" caps every path meets */
    } else {
        buf_adds(b, "[protect]\ngit_hooks = false\ngit_config = false\nshell_rc = false\n"
                    "editor_dirs = false\nagent_config = false\n");
    }
    buf_adds(b, "[filesystem]\n");
    for (int k = 0; k < 4; k++) {
        buf_printf(b, "%s = [", keys[k]);
        unsigned n = pick(nrules / 2 + 1);
        for (unsigned i = 0; i < n; i++) {
            buf_adds(b, i ? ", \"" : "\"");
            add_path(b, k >= 2);
            buf_addc(b, '"');
        }
        buf_adds(b, "]\n");
    }
}

typedef VEC(const char *) paths_t;

/* Probe paths: every base's real form and a few names below it, the rules'
 * own paths, their parents and what lies below them. */
static void gen_probes(const resolved_t *r, const roots_t *roots, arena_t *a, paths_t *out)
{
    static const char *const tops[] = {"/", "/h", "/h/a", "/h/a/b", "/ws", "/sc",
                                       "/private", "/tmp", "/private/tmp", "/usr", "/srv", "/srv/state",
                                       "/etc", "/private/etc", "/nowhere"};
    for (size_t i = 0; i < sizeof tops / sizeof *tops; i++) {
        vec_push(out, tops[i]);
        for (size_t k = 0; k < NNAMES; k++) {
            const char *p = path_join(tops[i], names[k], a);
            vec_push(out, p);
            vec_push(out, path_join(p, names[pick(NNAMES)], a));
            vec_push(out, path_join(path_join(p, names[pick(NNAMES)], a), names[pick(NNAMES)], a));
        }
    }
    if (roots->workspace) vec_push(out, path_join(roots->workspace, ".git/hooks/x", a));
    for (int gc = 0; gc < 2; gc++) {
        const rrule_t *v = gc ? r->caps.v : r->grants.v;
        size_t n = gc ? r->caps.n : r->grants.n;
        for (size_t i = 0; i < n; i++) {
            const char *abs = lattice_rule_abs(&v[i], roots, a);
            if (!abs) continue;
            if (v[i].glob) {
                /* an instance: each wildcard an 'x', each "**" dropped */
                buf_t s = BUF_INIT;
                for (const char *c = abs; *c; c++) {
                    if (c[0] == '*' && c[1] == '*') c += c[2] == '/' ? 2 : 1;
                    else if (*c == '\\' && c[1]) buf_addc(&s, *++c);
                    else buf_addc(&s, *c == '*' || *c == '?' ? 'x' : *c);
                }
                abs = path_normalize(s.len ? buf_cstr(&s) : "/", a);
                buf_free(&s);
            }
            vec_push(out, abs);
            vec_push(out, path_join(abs, names[pick(NNAMES)], a));
            const char *slash = strrchr(abs, '/');
            if (slash && slash != abs) vec_push(out, arena_strndup(a, abs, (size_t)(slash - abs)));
        }
    }
}

static long below_scan(const resolved_t *r, const roots_t *roots, const char *path, arena_t *a)
{
    long best = -1;
    for (size_t i = 0; i < r->grants.n; i++) {
        const char *abs = lattice_rule_abs(&r->grants.v[i], roots, a);
        if (abs && path_is_under(abs, path) && (long)r->grants.v[i].level > best) best = r->grants.v[i].level;
    }
    return best;
}

static bool same_verdict(const verdict_t *x, const verdict_t *y)
{
    if (x->level != y->level || x->grant_level != y->grant_level || x->grant != y->grant || x->ncaps != y->ncaps)
        return false;
    for (unsigned i = 0; i < x->ncaps; i++)
        if (x->caps[i] != y->caps[i]) return false;
    return true;
}

/* Every probe, indexed and direct; the first difference is shown. */
static bool agree(const resolved_t *r, const roots_t *roots, size_t *nprobes)
{
    arena_t a = ARENA_INIT;
    paths_t probes = {0};
    gen_probes(r, roots, &a, &probes);
    lattice_index_t *ix = lattice_index_build(r, roots);
    bool ok = true;
    for (size_t i = 0; i < probes.n && ok; i++) {
        const char *p = path_normalize(probes.v[i], &a);
        verdict_t want, got;
        lattice_level_of(r, roots, p, &want);
        lattice_index_level_of(ix, p, &got);
        long bw = below_scan(r, roots, p, &a), bg = lattice_index_level_below(ix, p);
        if (!same_verdict(&want, &got)) {
            printf("# %s: direct %s (grant %s, %u caps), indexed %s (grant %s, %u caps)\n", p,
                   policy_level_name(want.level), want.grant ? want.grant->rule->written : "none", want.ncaps,
                   policy_level_name(got.level), got.grant ? got.grant->rule->written : "none", got.ncaps);
            ok = false;
        } else if (bw != bg) {
            printf("# %s: level below %ld by scan, %ld indexed\n", p, bw, bg);
            ok = false;
        }
    }
    *nprobes += probes.n;
    lattice_index_free(ix);
    vec_free(&probes);
    arena_free(&a);
    return ok;
}

/* The session roots: apart, inside the runtime-owned dir (the session
 * stays visible there), none (session rules match nothing). */
static const roots_t roots_v[] = {
    {"/ws", "/sc", NULL, false},
    {"/srv/state/sessions/1/ws", "/srv/state/sessions/1/sc", NULL, false},
    {NULL, NULL, NULL, false},
};

static void test_generated(facts_t *facts[2], unsigned npol, unsigned nrules)
{
    buf_t toml = BUF_INIT;
    size_t rejected = 0, nprobes = 0, maxcaps = 0;
    for (unsigned n = 0; n < npol; n++) {
        gen_policy(&toml, nrules);
        diag_list_t d = {0};
        policy_t *pol = policy_build(source_new("t.toml", toml.p, toml.len), TOML_1_1, &d);
        if (!pol) {
            buf_t e = BUF_INIT;
            diag_render_all(&e, &d, false);
            printf("# %s", buf_cstr(&e));
            buf_free(&e);
        }
        diag_list_free(&d);
        if (!pol) {
            rejected++;
            continue;
        }
        for (int t = 0; t < 2; t++) {
            resolved_t *r = lattice_resolve(pol, facts[t]);
            for (size_t k = 0; k < sizeof roots_v / sizeof *roots_v; k++) {
                size_t before = nprobes;
                bool ok = agree(r, &roots_v[k], &nprobes);
                char name[160];
                snprintf(name, sizeof name, "policy %u (%zu grants, %zu caps), %s, roots %zu: %zu probes agree", n,
                         r->grants.n, r->caps.n, t ? "macos" : "linux", k, nprobes - before);
                if (!CHECK(ok, name)) printf("# the policy:\n%s", buf_cstr(&toml));
                if (r->caps.n > maxcaps) maxcaps = r->caps.n;
            }
            lattice_free(r);
        }
        policy_free(pol);
    }
    buf_free(&toml);
    /* the generator must keep producing policies the compiler accepts */
    CHECK(rejected * 4 < npol, "most generated policies build");
    printf("# %u policies (%zu rejected), %zu probes, up to %zu caps\n", npol, rejected, nprobes, maxcaps);
}

/* More than 16 caps on one path: the verdict keeps the first 16, in order. */
static void test_many_caps(facts_t *facts[2])
{
    buf_t toml = BUF_INIT;
    buf_adds(&toml, "[filesystem]\nallow_write = [\"~/a\"]\ndeny_write = [");
    for (int i = 0; i < 24; i++) buf_printf(&toml, "%s\"~/a%s\"", i ? ", " : "", i % 2 ? "/b" : "");
    buf_adds(&toml, ", \"**/b\", \"~/*/b\"]\n");
    diag_list_t d = {0};
    policy_t *pol = policy_build(source_new("t.toml", toml.p, toml.len), TOML_1_1, &d);
    diag_list_free(&d);
    if (!CHECK(pol, "the many-caps policy builds")) return;
    resolved_t *r = lattice_resolve(pol, facts[0]);
    size_t n = 0;
    CHECK(agree(r, &roots_v[0], &n), "26 caps on ~/a/b: the same first 16, in order");
    lattice_free(r);
    policy_free(pol);
    buf_free(&toml);
}

/* A deep path (the index walks its ancestors back from the end, looking up
 * only those as long as some anchor): grants and caps at several depths of it. */
static void test_deep(facts_t *facts[2])
{
    buf_t deep = BUF_INIT, toml = BUF_INIT;
    for (int i = 0; i < 400; i++) buf_printf(&deep, "/%s", i % 7 ? "x" : "yy");
    const char *d = buf_cstr(&deep);
    buf_printf(&toml, "[filesystem]\nallow_write = [\"%.*s\", \"%.*s\"]\n", 301, d, 1200, d);
    buf_printf(&toml, "deny_write = [\"%.*s\", \"%s\", \"%.*s/*\"]\ndeny_read = [\"%.*s/yy\"]\n", 600, d, d, 900, d,
               1000, d);
    diag_list_t dl = {0};
    policy_t *pol = policy_build(source_new("t.toml", toml.p, toml.len), TOML_1_1, &dl);
    diag_list_free(&dl);
    if (CHECK(pol, "the deep policy builds")) {
        for (int t = 0; t < 2; t++) {
            resolved_t *r = lattice_resolve(pol, facts[t]);
            size_t n = 0;
            CHECK(agree(r, &roots_v[0], &n), t ? "a path of 400 components, macos" : "a path of 400 components, linux");
            lattice_free(r);
        }
        policy_free(pol);
    }
    buf_free(&deep);
    buf_free(&toml);
}

int main(void)
{
    char *err = NULL;
    facts_t *facts[2] = {facts_from_json(linux_facts, sizeof linux_facts - 1, &err),
                         facts_from_json(macos_facts, sizeof macos_facts - 1, &err)};
    if (!CHECK(facts[0] && facts[1], "facts load")) {
        printf("# %s\n", err ? err : "");
        return tap_done();
    }
    /* a registered runtime-owned dir (Linux), with sessions inside it */
    lattice_owned_add("/srv/state", "the test's state dir");
    test_many_caps(facts);
    test_deep(facts);
    test_generated(facts, 16, 12);
    test_generated(facts, 4, 60);
    facts_free(facts[0]);
    facts_free(facts[1]);
    return tap_done();
}
