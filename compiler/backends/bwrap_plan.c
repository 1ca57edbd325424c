/* bwrap_plan.c — the bubblewrap planner (SPEC §7): a resolved policy → the
 * ops of the vector, at compile time (the template) or at exec time (the
 * live filesystem), and bwrap_build, the backend's entry. The text form and
 * the concrete argv are bwrap_args.c's; the evaluator explain uses is
 * bwrap_eval.c's.
 *
 * See bwrap.h for the two phases. Locations are keyed by absolute path when
 * known, else symbolically ("W:rel", "S:rel") in a compile-time template,
 * where the workspace and scratch dir are taken to be fresh and empty and to
 * hold none of the absolute rules (they are leaves: drun-mcp makes them new).
 */
#include "bwrap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glob.h"
#include "path.h"

/* The sandbox's uid and gid: never 0, even when the runtime is root. */
#define SANDBOX_UID "1000"
#define SANDBOX_GID "1000"

enum {
    PH_FLAGS,
    PH_MOUNT,
    PH_CAP,
    PH_TAIL
};

typedef struct loc {
    path_base_t base; /* PB_ROOT, PB_WORKSPACE, PB_SCRATCH */
    const char *rel;  /* ROOT: the absolute path; session: below the root */
    const char *abs;  /* concrete absolute path; NULL for a template's session path */
    const char *key;  /* map key: abs when known, else "W:rel" / "S:rel" */
} loc_t;

typedef enum {
    EX_MISSING,
    EX_DIR,
    EX_FILE,
    EX_OTHER,
    EX_LINK
} ex_t;

typedef struct item {
    int phase;
    int order;      /* template: 0 root paths, 1 workspace, 2 scratch */
    unsigned depth; /* components below the order's root */
    const char *key;
    size_t seq;     /* insertion order, the last tie-break */
    bw_op_t op;
} item_t;

typedef struct plan {
    const resolved_t *r;
    const roots_t *roots; /* NULL: template */
    arena_t *a;
    VEC(item_t) items;
    size_t seq;
    strmap_t grant_at;              /* key -> index into r->grants */
    strmap_t litcap_at;             /* key -> lowest literal cap level there */
    strmap_t seen;                  /* op dedupe */
    strmap_t hidden;                /* keys hidden whole by a deny_read glob or a block */
    strmap_t ex_seen;               /* exec plans: abs path -> ex_t, so that each path is
                                       looked at once (the blocks of the protected names walk
                                       down from / for every name, under two roots) */
    VEC(const char *) wmounts;      /* keys of writable phase-1 mounts */
    VEC(struct ro_cap { const char *key; const rrule_t *origin; }) ro_caps; /* cap-read targets */
    bw_residues_t *residue;
    bwrap_t *out;                   /* the plan being made */
    strmap_t unlisted;              /* exec plans: dirs hidden because they could not be listed */
    size_t unlisted_n;
    size_t walked;
    char *err;
    char *upbuf; /* scratch for ancestor lookups (FOR_KEY_AND_UP) */
    size_t upcap;
} plan_t;

/* ---- locations ------------------------------------------------------------------------- */

static const char *symkey(plan_t *p, path_base_t base, const char *rel)
{
    buf_t b = BUF_INIT;
    buf_addc(&b, base == PB_WORKSPACE ? 'W' : 'S');
    buf_addc(&b, ':');
    buf_adds(&b, rel);
    const char *k = arena_strdup(p->a, buf_cstr(&b));
    buf_free(&b);
    return k;
}

static loc_t loc_make(plan_t *p, path_base_t base, const char *rel)
{
    loc_t l = {base, rel, NULL, NULL};
    if (base == PB_ROOT) l.abs = rel;
    else if (p->roots) l.abs = path_join(base == PB_WORKSPACE ? p->roots->workspace : p->roots->scratch, rel, p->a);
    l.key = l.abs ? l.abs : symkey(p, base, rel);
    return l;
}

/* A concrete absolute path, expressed against the session root it is in. */
static loc_t loc_abs(plan_t *p, const char *abs)
{
    if (p->roots) {
        const char *rt[2] = {p->roots->workspace, p->roots->scratch};
        for (int i = 0; i < 2; i++) {
            if (!rt[i] || !path_is_under(abs, rt[i])) continue;
            size_t n = strlen(rt[i]);
            loc_t l = {i ? PB_SCRATCH : PB_WORKSPACE, abs[n] ? abs + n + 1 : "", abs, abs};
            return l;
        }
    }
    return loc_make(p, PB_ROOT, abs);
}

static loc_t loc_rule(plan_t *p, const rrule_t *g) { return loc_make(p, g->base, g->path); }

/* The location a key names. */
static loc_t key_loc(plan_t *p, const char *key)
{
    if (key[0] == '/') return loc_abs(p, key);
    return loc_make(p, key[0] == 'W' ? PB_WORKSPACE : PB_SCRATCH, key + 2);
}

/* The key of the parent, or NULL at a root. */
static const char *parent_key(plan_t *p, const char *key)
{
    if (key[0] == '/') {
        if (!key[1]) return NULL;
        const char *s = strrchr(key, '/');
        return s == key ? "/" : arena_strndup(p->a, key, (size_t)(s - key));
    }
    if (!key[2]) return NULL; /* "W:" is the session root */
    const char *s = strrchr(key + 2, '/');
    return s ? arena_strndup(p->a, key, (size_t)(s - key)) : arena_strndup(p->a, key, 2);
}

static unsigned key_depth(const char *key)
{
    if (key[0] == '/') return path_depth(key);
    if (!key[2]) return 0;
    unsigned d = 1;
    for (const char *s = key + 2; *s; s++) d += *s == '/';
    return d;
}

static bool key_under(const char *key, const char *anc)
{
    if (key[0] == '/' || anc[0] == '/') return key[0] == anc[0] && path_is_under(key, anc);
    if (key[0] != anc[0]) return false;
    if (!anc[2]) return true;
    size_t n = strlen(anc);
    return strncmp(key, anc, n) == 0 && (key[n] == '\0' || key[n] == '/');
}

static bw_word_t word_lit(const char *s) { return (bw_word_t){BW_LIT, s}; }

static bw_word_t word_of(loc_t l)
{
    switch (l.base) {
    case PB_WORKSPACE: return (bw_word_t){BW_WORKSPACE, l.rel};
    case PB_SCRATCH: return (bw_word_t){BW_SCRATCH, l.rel};
    default: return word_lit(l.rel);
    }
}

/* ---- what exists ------------------------------------------------------------------------- */

/* Below a tmpfs scratch, which bwrap mounts fresh on the empty host dir. */
static bool in_tmpfs_scratch(const plan_t *p, const char *abs)
{
    return p->roots && p->roots->scratch_tmpfs && abs && path_is_under(abs, p->roots->scratch);
}

static ex_t exists(plan_t *p, loc_t l)
{
    if (in_tmpfs_scratch(p, l.abs)) return strcmp(l.abs, p->roots->scratch) == 0 ? EX_DIR : EX_MISSING;
    if (p->roots && l.abs) {
        long seen = strmap_get(&p->ex_seen, l.abs);
        if (seen >= 0) return (ex_t)seen;
        struct stat st;
        ex_t e = lstat(l.abs, &st) != 0 ? EX_MISSING
                 : S_ISLNK(st.st_mode)  ? EX_LINK
                 : S_ISDIR(st.st_mode)  ? EX_DIR
                 : S_ISREG(st.st_mode)  ? EX_FILE
                                        : EX_OTHER;
        const char *k = arena_strdup(p->a, l.abs); /* l.abs may be a walk buffer */
        strmap_put(&p->ex_seen, k, (long)e);
        if (e != EX_MISSING && e != EX_LINK) {     /* the runner binds by fd what this saw (bind_fd.c) */
            strmap_put(&p->out->seen_at, k, (long)p->out->seen.n);
            vec_push(&p->out->seen, ((bw_seen_t){k, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino}));
        }
        return e;
    }
    if (!l.abs) return *l.rel ? EX_MISSING : EX_DIR; /* template: fresh, empty session dirs */
    path_fact_t f = facts_lookup(p->r->facts, l.abs, p->a);
    switch (f.type) {
    case PT_DIR: return EX_DIR;
    case PT_FILE: return EX_FILE;
    case PT_OTHER: return EX_OTHER;
    default: return EX_MISSING;
    }
}

/* ---- levels, fast ----------------------------------------------------------------------------- */

/* Cuts a key in place to its parent: "/a/b" -> "/a" -> "/", "W:a/b" -> "W:a"
 * -> "W:". False at a root. */
static bool cut_to_parent(char *k)
{
    if (k[0] == '/') {
        if (!k[1]) return false;
        char *s = strrchr(k, '/');
        if (s == k) s[1] = '\0';
        else *s = '\0';
        return true;
    }
    if (!k[2]) return false;
    char *s = strrchr(k + 2, '/');
    *(s ? s : k + 2) = '\0';
    return true;
}

/* The key and its ancestors, deepest first, in one reused buffer (these
 * lookups run for every location the plan touches: no allocation each). */
#define FOR_KEY_AND_UP(p, key, k) \
    for (char *k = strcpy(up_buf(p, key), key), *k##_go = k; k##_go; k##_go = cut_to_parent(k) ? k : NULL)

static char *up_buf(plan_t *p, const char *key)
{
    size_t n = strlen(key) + 1;
    if (p->upcap < n) {
        p->upbuf = xrealloc(p->upbuf, n);
        p->upcap = n;
    }
    return p->upbuf;
}

static const rrule_t *grant_for(plan_t *p, const char *key)
{
    FOR_KEY_AND_UP(p, key, k) {
        long i = strmap_get(&p->grant_at, k);
        if (i >= 0) return &p->r->grants.v[i];
    }
    return NULL;
}

static level_t grant_level(plan_t *p, const char *key)
{
    const rrule_t *g = grant_for(p, key);
    return g ? g->level : LVL_NONE;
}

static level_t level_at(plan_t *p, loc_t l)
{
    level_t lv = grant_level(p, l.key);
    if (lv > LVL_NONE && p->litcap_at.n) {
        FOR_KEY_AND_UP(p, l.key, k) {
            long c = strmap_get(&p->litcap_at, k);
            if (c >= 0 && (level_t)c < lv) lv = (level_t)c;
        }
    }
    if (l.abs)
        for (size_t i = 0; i < p->r->caps.n && lv > LVL_NONE; i++) {
            const rrule_t *c = &p->r->caps.v[i];
            if (c->glob && c->level < lv && glob_match_prefix(c->path, l.abs)) lv = c->level;
        }
    return lv;
}

static bool is_hidden(plan_t *p, const char *key)
{
    if (!p->hidden.n) return false;
    FOR_KEY_AND_UP(p, key, k) {
        long h = strmap_get(&p->hidden, k);
        /* a runtime-owned dir (2) hides all but the session's own dirs in it */
        if (h == 2 && key[0] == '/' && lattice_exempt_from_dark(p->roots, k, key)) continue;
        if (h >= 0) return true;
    }
    return false;
}

/* ---- adding ops ------------------------------------------------------------------------------- */

/* Where an op goes in the vector: by phase, then (mount phases) order and
 * depth of its key, parent first, so a deeper mount lands on a shallower. */
typedef struct slot {
    int phase;       /* PH_* */
    const char *key; /* the location's key; NULL for flags */
    int order;       /* template: 0 root paths, 1 workspace, 2 scratch */
} slot_t;

static const slot_t FLAGS_SLOT = {PH_FLAGS, NULL, 0};

static void add_op(plan_t *p, slot_t at, bw_op_t op)
{
    buf_t k = BUF_INIT;
    buf_addc(&k, (char)('0' + at.phase));
    buf_adds(&k, at.key ? at.key : "");
    buf_addc(&k, '\n');
    bwrap_op_text(&op, &k);
    const char *dk = arena_strdup(p->a, buf_cstr(&k));
    buf_free(&k);
    if (strmap_put(&p->seen, dk, 1) >= 0) return; /* the same op twice adds nothing */
    item_t it = {at.phase, at.order, at.key ? key_depth(at.key) : 0, at.key ? at.key : "", p->seq++, op};
    vec_push(&p->items, it);
}

static int order_of(plan_t *p, loc_t l)
{
    if (p->roots || l.base == PB_ROOT) return 0;
    return l.base == PB_WORKSPACE ? 1 : 2;
}

static slot_t slot_at(plan_t *p, int phase, loc_t l) { return (slot_t){phase, l.key, order_of(p, l)}; }

static void flag(plan_t *p, const char *opt)
{
    add_op(p, FLAGS_SLOT, (bw_op_t){opt, word_lit(""), word_lit(""), 0, NULL, NULL});
}

static void flag1(plan_t *p, const char *opt, bw_word_t a)
{
    add_op(p, FLAGS_SLOT, (bw_op_t){opt, a, word_lit(""), 1, NULL, NULL});
}

static void flag2(plan_t *p, const char *opt, bw_word_t a, bw_word_t b)
{
    add_op(p, FLAGS_SLOT, (bw_op_t){opt, a, b, 2, NULL, NULL});
}

static void mount1(plan_t *p, int phase, loc_t l, const char *opt, const rrule_t *o, const char *note)
{
    add_op(p, slot_at(p, phase, l), (bw_op_t){opt, word_of(l), word_lit(""), 1, o, note});
}

static void mount2(plan_t *p, loc_t l, const char *opt, bw_word_t src, const rrule_t *o, const char *note)
{
    add_op(p, slot_at(p, PH_MOUNT, l), (bw_op_t){opt, src, word_of(l), 2, o, note});
}

static bool fail(plan_t *p, const char *fmt, const char *path)
{
    if (!p->err) p->err = xasprintf(fmt, path);
    return false;
}

/* ---- the pieces ----------------------------------------------------------------------------------- */

static void plan_flags(plan_t *p)
{
    const resolved_t *r = p->r;
    const policy_t *pol = r->pol;
    /* every namespace, the network included; no way back into the host's */
    flag(p, "--unshare-all");
    flag(p, "--unshare-user");
    if (r->facts->bwrap_disable_userns) flag(p, "--disable-userns");
    flag(p, "--die-with-parent"); /* no orphan sandbox when the runtime dies */
    flag(p, "--new-session");     /* no TIOCSTI into the caller's terminal */
    flag1(p, "--cap-drop", word_lit("ALL"));
    flag1(p, "--uid", word_lit(SANDBOX_UID));
    flag1(p, "--gid", word_lit(SANDBOX_GID));
    flag1(p, "--hostname", word_lit("drun-sandbox"));
    /* the environment starts empty: host tokens never leak in */
    flag(p, "--clearenv");
    buf_t path = BUF_INIT;
    if (policy_get(pol, S_READ_PATH_DIRS) && r->facts->path_dirs.n) {
        for (size_t i = 0; i < r->facts->path_dirs.n; i++)
            buf_printf(&path, "%s%s", i ? ":" : "", r->facts->path_dirs.v[i]);
    } else {
        buf_adds(&path, "/usr/local/bin:/usr/bin:/bin");
    }
    flag2(p, "--setenv", word_lit("PATH"), word_lit(arena_strdup(p->a, buf_cstr(&path))));
    buf_free(&path);
    flag2(p, "--setenv", word_lit("HOME"), (bw_word_t){BW_SCRATCH, ""});
    flag2(p, "--setenv", word_lit("TMPDIR"), (bw_word_t){BW_SCRATCH, ""});
    for (size_t i = 0; i < pol->env_passthrough.n; i++)
        flag2(p, "--setenv", word_lit(pol->env_passthrough.v[i].s), (bw_word_t){BW_ENV, pol->env_passthrough.v[i].s});
    for (size_t i = 0; i < pol->env_set.n; i++)
        flag2(p, "--setenv", word_lit(pol->env_set.v[i].name), word_lit(pol->env_set.v[i].value));
}

static void plan_base_mounts(plan_t *p)
{
    loc_t dev = loc_make(p, PB_ROOT, "/dev"), proc = loc_make(p, PB_ROOT, "/proc"),
          tmp = loc_make(p, PB_ROOT, "/tmp");
    mount1(p, PH_MOUNT, dev, "--dev", NULL, "a minimal /dev");
    mount1(p, PH_MOUNT, proc, "--proc", NULL, "this sandbox's processes only (own PID namespace)");
    /* Sysctl writes are checked against the writer's uid, not its
     * capabilities. When the runtime is root the sandbox uid maps to host
     * uid 0, which may write /proc/sys/kernel/core_pattern: a host root
     * escape. bwrap's own read-only cover of /proc/sys is skipped because
     * the directory itself is not writable, so bind it read-only here. */
    mount2(p, loc_make(p, PB_ROOT, "/proc/sys"), "--ro-bind", word_lit("/proc/sys"), NULL,
           "sysctls read-only (a root runtime's sandbox uid is host uid 0)");
    /* a private /tmp, mounted before anything under /tmp (drun's tmpfs came
     * after the workspace bind and hid it) */
    mount1(p, PH_MOUNT, tmp, "--tmpfs", NULL, "a private /tmp, discarded at exit");
    for (size_t i = 0; i < p->r->facts->root_links.n; i++) {
        const link_fact_t *l = &p->r->facts->root_links.v[i];
        /* merged /usr: recreate /bin -> usr/bin rather than binding a symlink */
        mount2(p, loc_make(p, PB_ROOT, l->link), "--symlink", word_lit(l->target), NULL, "merged /usr link");
    }
}

/* Self-binds the ancestors of key strictly below its writable grant root, so
 * they are mount points: a mount point cannot be renamed, so the protected
 * path cannot be moved away and a fresh one put in its place. */
static bool pin_ancestors(plan_t *p, loc_t l, const rrule_t *origin)
{
    const rrule_t *g = grant_for(p, l.key);
    if (!g || g->level != LVL_WRITE) return true;
    loc_t gl = loc_rule(p, g);
    VEC(const char *) chain = {0};
    for (const char *k = parent_key(p, l.key); k && !(strcmp(k, gl.key) == 0); k = parent_key(p, k)) {
        if (!key_under(k, gl.key)) break;
        vec_push(&chain, k);
    }
    bool ok = true;
    for (size_t i = chain.n; i-- > 0 && ok;) {
        const char *k = chain.v[i];
        loc_t a = key_loc(p, k);
        ex_t e = exists(p, a);
        if (e == EX_LINK) ok = fail(p, "'%s' is a symbolic link above a protected path; remove the link", a.abs);
        else if (e == EX_DIR) {
            mount2(p, a, "--bind", word_of(a), origin, "pinned: a mount point cannot be renamed");
            vec_push(&p->wmounts, a.key);
        }
    }
    vec_free(&chain);
    return ok;
}

/* Names that are directories when they exist (a block of one is an empty
 * read-only directory rather than /dev/null). ".drun" and "drun" are the
 * runtime's own dirs (~/.drun, ~/.local/state/drun, ~/.cache/drun): a block
 * bwrap leaves behind there is then the empty dir the user would make. */
static bool dir_like(const char *key)
{
    static const char *const names[] = {".git", ".claude", ".vscode", ".idea", "hooks", "commands", "agents",
                                        ".drun", "drun"};
    const char *base = strrchr(key, '/');
    base = base ? base + 1 : key + 2;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(base, names[i]) == 0) return true;
    return false;
}

/* Blocks a missing path at its first missing component with an empty
 * directory that phase 2 makes read-only — only where it could be created. */
static bool block_missing(plan_t *p, loc_t t, const rrule_t *origin)
{
    /* walk down from the deepest existing ancestor */
    VEC(const char *) chain = {0};
    for (const char *k = t.key; k; k = parent_key(p, k)) vec_push(&chain, k);
    loc_t c = t;
    bool found = false;
    for (size_t i = chain.n; i-- > 0;) {
        const char *k = chain.v[i];
        loc_t l = key_loc(p, k);
        ex_t e = exists(p, l);
        if (e == EX_MISSING) {
            c = l;
            found = true;
            break;
        }
        if (e == EX_LINK) {
            vec_free(&chain);
            return fail(p, "'%s' is a symbolic link above a protected path; remove the link", l.abs ? l.abs : l.key);
        }
        if (e != EX_DIR) break; /* a file in the way: nothing can be created below */
    }
    vec_free(&chain);
    if (!found) return true;
    const char *pk = parent_key(p, c.key);
    loc_t parent = key_loc(p, pk);
    if (is_hidden(p, c.key) || level_at(p, parent) != LVL_WRITE) return true; /* cannot be created anyway */
    if (!pin_ancestors(p, c, origin)) return false;
    bool dir = false;
    if (strcmp(c.key, t.key) == 0 && !dir_like(c.key) && origin->level == LVL_NONE) {
        /* a hidden name (deny_read): /dev/null, mounted nodev, cannot be
         * opened at all: neither read nor written, as "none" says */
        mount2(p, c, "--ro-bind", word_lit("/dev/null"), origin, "blocks a missing hidden file: cannot be opened");
    } else if (strcmp(c.key, t.key) == 0 && !dir_like(c.key)) {
        /* The protected file itself becomes an empty read-only file: git and
         * shells read ~/.gitconfig and ~/.bashrc, so it must read (as empty);
         * writing fails. (/dev/null would be mounted nodev: unreadable.) */
        add_op(p, slot_at(p, PH_MOUNT, c), (bw_op_t){"--perms", word_lit("0444"), word_lit(""), 1, NULL, NULL});
        mount2(p, c, "--ro-bind-data", (bw_word_t){BW_EMPTY_FD, ""}, origin,
               "blocks a missing protected file: an empty read-only file");
    } else {
        mount1(p, PH_MOUNT, c, "--tmpfs", origin, "blocks the first missing component of a protected path");
        mount1(p, PH_CAP, c, "--remount-ro", origin, "blocks the first missing component of a protected path");
        dir = true;
    }
    strmap_put(&p->hidden, c.key, 1);
    /* what bwrap creates in a tmpfs scratch goes with it */
    if (p->roots && c.abs && !in_tmpfs_scratch(p, c.abs))
        vec_push(p->residue, ((bw_residue_t){xstrdup(c.abs), dir}));
    return true;
}

/* Hides an existing path entirely (a literal deny_read inside a visible
 * parent, or a deny_read glob match): an empty read-only directory, or
 * /dev/null for a file. */
static bool hide(plan_t *p, loc_t t, ex_t e, const rrule_t *origin, bool whole)
{
    if (e == EX_LINK) return fail(p, "'%s' is a symbolic link where a hidden path must be; remove the link", t.abs ? t.abs : t.key);
    if (e == EX_DIR) {
        mount1(p, PH_MOUNT, t, "--tmpfs", origin, "hidden: an empty directory");
        mount1(p, PH_CAP, t, "--remount-ro", origin, "hidden: read-only");
    } else {
        mount2(p, t, "--ro-bind", word_lit("/dev/null"), origin, "hidden: reads as empty");
    }
    if (whole) strmap_put(&p->hidden, t.key, 1);
    return true;
}

/* Applies a cap to one existing or missing target. */
static bool apply_cap(plan_t *p, loc_t t, const rrule_t *c)
{
    if (is_hidden(p, t.key)) return true;
    ex_t e = exists(p, t);
    level_t before = grant_level(p, t.key);
    if (c->level == LVL_NONE) {
        if (before == LVL_NONE) return true;
        if (e == EX_MISSING) return block_missing(p, t, c);
        return hide(p, t, e, c, true);
    }
    if (before != LVL_WRITE) return true; /* not writable anyway */
    if (e == EX_MISSING) return block_missing(p, t, c);
    if (e == EX_LINK) return fail(p, "'%s' is a symbolic link where a write-protected path must be; remove the link", t.abs ? t.abs : t.key);
    if (!pin_ancestors(p, t, c)) return false;
    mount2(p, t, "--bind", word_of(t), c, "made a mount point, then remounted read-only");
    vec_push(&p->wmounts, t.key);
    struct ro_cap rc = {t.key, c};
    vec_push(&p->ro_caps, rc);
    return true;
}

/* The literal tail after a glob's last wildcard component ("" if none), and
 * whether the head holds "**". */
static const char *glob_tail(const char *pattern, size_t *head_len, bool *dstar)
{
    const char *last_wild = pattern, *s = pattern, *b, *e;
    *dstar = false;
    while (path_next_comp(&s, &b, &e)) {
        if (glob_comp_wild(b, e)) last_wild = e;
        if (e - b == 2 && b[0] == '*' && b[1] == '*') *dstar = true;
    }
    *head_len = (size_t)(last_wild - pattern);
    return *last_wild == '/' ? last_wild + 1 : last_wild;
}

/* A missing commondir cannot be blocked by a mount: the block would be an
 * empty file (or directory), and git dies on a commondir it cannot read,
 * in every repository. Only the layer refuses making one (SPEC §16); an
 * existing one is capped read-only like any match. */
static bool tail_is_commondir(const char *tail)
{
    const char *base = strrchr(tail, '/');
    return strcmp(base ? base + 1 : tail, "commondir") == 0;
}

/* At a writable directory d: block glob caps' literal tails that are missing
 * below it. A tail under a "**" head is blocked only at a walk root or where
 * part of it exists (a repo's .git without hooks), not in every directory. */
static bool tail_blocks(plan_t *p, loc_t d, bool is_root)
{
    for (size_t i = 0; i < p->r->caps.n; i++) {
        const rrule_t *c = &p->r->caps.v[i];
        if (!c->glob) continue;
        size_t hl;
        bool dstar;
        const char *tail = glob_tail(c->path, &hl, &dstar);
        if (!*tail || glob_has_wildcard(tail)) continue;
        const char *head = arena_strndup(p->a, c->path, hl);
        bool head_any = strcmp(head, "/**") == 0;
        if (d.abs ? !glob_match(head, d.abs) : !head_any) continue;
        const char *first_end = strchr(tail, '/');
        const char *first = first_end ? arena_strndup(p->a, tail, (size_t)(first_end - tail)) : tail;
        loc_t f = d.abs ? loc_abs(p, path_join(d.abs, first, p->a)) : loc_make(p, d.base, path_join_rel(d.rel, first, p->a));
        if (dstar && !is_root && exists(p, f) == EX_MISSING) continue;
        if (tail_is_commondir(tail)) continue;
        loc_t t = d.abs ? loc_abs(p, path_join(d.abs, glob_unescape(tail, p->a), p->a))
                        : loc_make(p, d.base, path_join_rel(d.rel, glob_unescape(tail, p->a), p->a));
        if (exists(p, t) == EX_MISSING && !block_missing(p, t, c)) return false;
    }
    return true;
}

/* A runtime-owned path (SPEC §13), at exec time: hidden whatever the grants,
 * as a deny_read hides (an empty read-only tmpfs, /dev/null, or a block at
 * the first missing component, so that it cannot be created either: a new
 * ~/.drun/config.toml would be the next run's policy). Its ancestors below
 * its write grant root are pinned (made mount points, which cannot be
 * renamed or removed from inside), so the sandbox cannot move the state dir
 * away and rebuild it as links to host directories for the runtime to trust.
 * The session's own dirs inside stay visible (is_hidden exempts them). */
static bool darken(plan_t *p, loc_t t, const rrule_t *c)
{
    if (grant_level(p, t.key) == LVL_NONE) return true; /* no grant shows it: dark already */
    if (is_hidden(p, t.key)) return true;               /* inside another one (the config in ~/.drun) */
    ex_t e = exists(p, t);
    if (e == EX_MISSING) return block_missing(p, t, c);
    if (e == EX_LINK) {
        /* registered paths are resolved, so this is a default below home
         * that is a link (~/.drun -> dotfiles/drun): its target is hidden
         * where it is registered by the caller; the link itself cannot be
         * covered by a mount, so it must not be replaceable */
        const char *pk = parent_key(p, t.key);
        if (pk && level_at(p, key_loc(p, pk)) == LVL_WRITE)
            return fail(p, "'%s' is a symbolic link in a writable directory; the runtime's own paths must not be "
                           "(a sandbox could point it elsewhere): make it a directory, or narrow the grant",
                        t.abs);
        return true;
    }
    if (!pin_ancestors(p, t, c)) return false;
    if (e == EX_DIR) {
        mount1(p, PH_MOUNT, t, "--tmpfs", c, "runtime-owned: hidden (an empty directory)");
        mount1(p, PH_CAP, t, "--remount-ro", c, "runtime-owned: hidden (read-only)");
    } else {
        mount2(p, t, "--ro-bind", word_lit("/dev/null"), c, "runtime-owned: hidden (reads as empty)");
    }
    strmap_put(&p->hidden, t.key, 2);
    return true;
}

/* The runtime's own directories (other sessions' workspaces) stay dark even
 * under a grant that covers them (allow_read = ["~"] covers the state dir):
 * an empty tmpfs, made read-only in phase 2; the session's own directories
 * inside are deeper, so they are mounted after it. */
static void plan_hidden_dirs(plan_t *p)
{
    if (!p->roots || !p->roots->hide) return;
    for (const char *const *h = p->roots->hide; *h; h++) {
        loc_t l = loc_make(p, PB_ROOT, *h);
        if (exists(p, l) != EX_DIR || level_at(p, l) == LVL_NONE) continue;
        mount1(p, PH_MOUNT, l, "--tmpfs", NULL, "the runtime's state: other sessions are not visible");
        mount1(p, PH_CAP, l, "--remount-ro", NULL, "the runtime's state: other sessions are not visible");
    }
}

/* ---- the exec-time walk: glob caps under the user's grants ------------------------------------------- */

typedef struct walker {
    plan_t *p;
    strmap_t roots; /* walk roots (abs), so a nested root is walked once, by itself */
} walker_t;

static bool glob_cap_applies(const rrule_t *c, level_t root_level)
{
    return c->glob && (c->level == LVL_NONE ? root_level >= LVL_READ : root_level == LVL_WRITE);
}

static bool walk_dir(walker_t *w, int pfd, const char *dir, level_t lvl, unsigned depth, bool is_root);

/* Visits one existing path: applies every glob cap that matches it; says
 * whether to descend. */
static bool visit(walker_t *w, const char *path, ex_t e, level_t lvl, bool *descend)
{
    plan_t *p = w->p;
    *descend = e == EX_DIR;
    for (size_t i = 0; i < p->r->caps.n; i++) {
        const rrule_t *c = &p->r->caps.v[i];
        if (!glob_cap_applies(c, lvl) || !glob_match(c->path, path)) continue;
        if (e == EX_LINK)
            return fail(p, "'%s' is a symbolic link matching a protected pattern; remove the link", path);
        if (!apply_cap(p, loc_abs(p, path), c)) return false;
        if (c->level == LVL_NONE) *descend = false; /* hidden whole */
    }
    return true;
}

static _Thread_local bwrap_notice_fn notice_fn;
static _Thread_local void *notice_ctx;

void bwrap_set_notice_sink(bwrap_notice_fn fn, void *ctx)
{
    notice_fn = fn;
    notice_ctx = ctx;
}

static void notice(const char *msg)
{
    if (notice_fn) notice_fn(notice_ctx, msg);
    else fprintf(stderr, "drun-policy: %s\n", msg);
}

/* Fail closed (SPEC §13): a directory the planner cannot list may still be
 * traversed by name inside (mode 0311 lets anyone reach a known name), so
 * the patterns it cannot check there would be skipped. It is hidden whole
 * instead, an empty read-only directory, and the run says so. */
static bool hide_unlisted(plan_t *p, const char *dir, int why)
{
    loc_t l = loc_abs(p, arena_strdup(p->a, dir));
    mount1(p, PH_MOUNT, l, "--tmpfs", NULL, "cannot be listed to check the policy's patterns: hidden");
    mount1(p, PH_CAP, l, "--remount-ro", NULL, "cannot be listed to check the policy's patterns: hidden");
    strmap_put(&p->hidden, l.key, 1);
    strmap_put(&p->unlisted, l.key, 1);
    /* one line each, but never a flood: a hostile tree can hold thousands */
    if (++p->unlisted_n <= BW_NOTICES_MAX) {
        char *msg = xasprintf("'%s' cannot be listed (%s) to check the policy's patterns below it: it is hidden in "
                              "the sandbox (an empty read-only directory)",
                              dir, strerror(why));
        notice(msg);
        free(msg);
    }
    return true;
}

/* ---- repositories by their structure (SPEC §16, without the layer) ---------------------------------------- */

/* The built-in [protect] cap with that origin (its first pattern): the
 * origin named for a structural cap. NULL when [protect] turns it off. */
static const rrule_t *protect_cap(plan_t *p, const char *origin)
{
    for (size_t i = 0; i < p->r->caps.n; i++) {
        const rrule_t *c = &p->r->caps.v[i];
        if (c->rule->kind == RK_PROTECT && c->rule->origin && strcmp(c->rule->origin, origin) == 0) return c;
    }
    return NULL;
}

static bool plan_writable(void *ctx, const char *dir)
{
    plan_t *p = ctx;
    return level_at(p, loc_abs(p, dir)) == LVL_WRITE;
}

/* Caps gitdir's hooks/ and config read-only, and follows its commondir
 * (which moves where git reads both) up to two pointers deep. whole: the
 * missing ones are blocked too (git takes gitdir as a repository now, so a
 * hooks/ or config made during the run would be run); otherwise only the
 * existing ones are capped, and nothing appears in a directory that merely
 * holds a HEAD. A commondir's target gets both, missing or not. */
static bool cap_repo(plan_t *p, const char *gitdir, int gfd, bool whole, unsigned depth)
{
    static const char *const names[] = {"hooks", "config"};
    const rrule_t *caps[] = {protect_cap(p, "protect.git_hooks"), protect_cap(p, "protect.git_config")};
    for (int i = 0; i < 2; i++) {
        if (!caps[i]) continue;
        loc_t t = loc_abs(p, path_join(gitdir, names[i], p->a));
        if (!whole && exists(p, t) == EX_MISSING) continue;
        if (!apply_cap(p, t, caps[i])) return false;
    }
    if (!caps[1] || depth >= 2 || gfd < 0) return true; /* gfd -1: gitdir is missing, so is its commondir */
    char *common = bwrap_repo_pointer(gfd, false);
    if (!common) return true;
    /* the commondir itself is read-only too: it cannot be pointed elsewhere
     * (a missing one is not blocked: git dies on an empty commondir) */
    bool ok = apply_cap(p, loc_abs(p, path_join(gitdir, "commondir", p->a)), caps[1]);
    int tfd = -1;
    char *err = NULL, *target = ok ? bwrap_repo_resolve(gfd, gitdir, common, plan_writable, p, &tfd, &err) : NULL;
    if (ok && !target) ok = fail(p, "%s", err);
    if (target) ok = cap_repo(p, arena_strdup(p->a, target), tfd, true, depth + 1);
    if (tfd >= 0) close(tfd);
    free(err);
    free(target);
    free(common);
    return ok;
}

/* At a writable directory dir, listed as kids: is it a repository by its
 * structure (a HEAD, whatever its type, as the layer decides: git takes
 * objects/ and refs/ as symlinks, or from a commondir), or does it hold a
 * gitfile (.git naming a gitdir elsewhere)? Caps what git would run. */
static bool plan_repo_at(plan_t *p, const char *dir, int dfd, char *const *kids, size_t n)
{
    bool head = false, objects = false, refs = false, common = false, dotgit = false;
    for (size_t i = 0; i < n; i++) {
        const char *k = kids[i];
        head = head || strcmp(k, "HEAD") == 0;
        objects = objects || strcmp(k, "objects") == 0;
        refs = refs || strcmp(k, "refs") == 0;
        common = common || strcmp(k, "commondir") == 0;
        dotgit = dotgit || strcmp(k, ".git") == 0;
    }
    if (head && !cap_repo(p, dir, dfd, (objects && refs) || common, 0)) return false;
    char *gitdir = dotgit ? bwrap_repo_pointer(dfd, true) : NULL;
    if (!gitdir) return true;
    int tfd = -1;
    char *err = NULL, *target = bwrap_repo_resolve(dfd, dir, gitdir, plan_writable, p, &tfd, &err);
    bool ok = target ? cap_repo(p, arena_strdup(p->a, target), tfd, true, 1) : fail(p, "%s", err);
    if (tfd >= 0) close(tfd);
    free(err);
    free(target);
    free(gitdir);
    return ok;
}

/* Lists the directory dfd (dir) and visits each entry, looked at beneath
 * dfd without following a link. */
static bool walk_listed(walker_t *w, int dfd, const char *dir, level_t lvl, unsigned depth)
{
    plan_t *p = w->p;
    int lfd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!d) {
        int e = errno;
        if (lfd >= 0) close(lfd);
        return hide_unlisted(p, dir, e);
    }
    VEC(char *) kids = {0};
    struct dirent *de;
    for (errno = 0; (de = readdir(d)); errno = 0) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        if (++p->walked > BW_WALK_MAX_ENTRIES) {
            closedir(d);
            for (size_t i = 0; i < kids.n; i++) free(kids.v[i]);
            vec_free(&kids);
            return fail(p, "more than 200000 entries under '%s' to check against the policy's globs; "
                           "narrow the globs or the grants",
                        dir);
        }
        vec_push(&kids, xstrdup(de->d_name));
    }
    int rerr = errno;
    closedir(d);
    if (rerr) { /* listed in part: what was not seen is not checked */
        for (size_t i = 0; i < kids.n; i++) free(kids.v[i]);
        vec_free(&kids);
        return hide_unlisted(p, dir, rerr);
    }
    bool ok = lvl != LVL_WRITE || plan_repo_at(p, dir, dfd, kids.v, kids.n), unlisted = false;
    for (size_t i = 0; i < kids.n; i++) {
        if (ok && !unlisted) {
            const char *path = path_join(dir, kids.v[i], p->a);
            if (strmap_get(&w->roots, path) >= 0) { /* walked as a root of its own */
                free(kids.v[i]);
                continue;
            }
            struct stat st;
            ex_t e = EX_MISSING;
            if (fstatat(dfd, kids.v[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
                e = S_ISLNK(st.st_mode)   ? EX_LINK
                    : S_ISDIR(st.st_mode) ? EX_DIR
                    : S_ISREG(st.st_mode) ? EX_FILE
                                          : EX_OTHER;
            else if (errno != ENOENT) { /* listed but not searchable (0644): what is in it is unknown */
                ok = hide_unlisted(p, dir, errno);
                unlisted = true;
            }
            if (unlisted) {
                free(kids.v[i]);
                continue;
            }
            bool descend = false;
            ok = visit(w, path, e, lvl, &descend);
            if (ok && descend && !is_hidden(p, path)) ok = walk_dir(w, dfd, path, lvl, depth + 1, false);
        }
        free(kids.v[i]);
    }
    vec_free(&kids);
    return ok;
}

/* Walks dir: a root (absolute, pfd AT_FDCWD), or an entry of the directory
 * pfd, opened beneath it without following a link (what the walk saw as a
 * directory must still be one: the walk, its repositories' pointer files
 * and their targets are all read beneath the fds it holds). */
static bool walk_dir(walker_t *w, int pfd, const char *dir, level_t lvl, unsigned depth, bool is_root)
{
    plan_t *p = w->p;
    if (depth > BW_WALK_MAX_DEPTH)
        return fail(p, "'%s' is nested too deeply to check the policy's globs (the limit is 64 levels)", dir);
    if (lvl == LVL_WRITE && !tail_blocks(p, loc_abs(p, dir), is_root)) return false;
    bool any = false;
    for (size_t i = 0; i < p->r->caps.n && !any; i++) {
        const rrule_t *c = &p->r->caps.v[i];
        any = glob_cap_applies(c, lvl) && glob_may_match_below(c->path, dir);
    }
    if (!any) return true;
    const char *name = pfd == AT_FDCWD ? dir : strrchr(dir, '/') + 1;
    int dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 && errno == ENOENT) return true; /* gone, nothing to cap */
    if (dfd < 0 && (errno == ELOOP || errno == ENOTDIR))
        return fail(p, "'%s' is no longer the directory the plan found (a symbolic link now?): refusing to run", dir);
    if (dfd < 0) return hide_unlisted(p, dir, errno);
    bool ok = walk_listed(w, dfd, dir, lvl, depth);
    close(dfd);
    return ok;
}

/* Walks every user grant (workspace, scratch, allow_*, mount_allowlist) with
 * the glob caps that can matter there. */
static bool plan_walk(plan_t *p)
{
    bool globs = false;
    for (size_t i = 0; i < p->r->caps.n; i++) globs = globs || p->r->caps.v[i].glob;
    if (!globs) return true;
    walker_t w = {p, STRMAP_INIT};
    VEC(const rrule_t *) rts = {0};
    for (size_t i = 0; i < p->r->grants.n; i++) {
        const rrule_t *g = &p->r->grants.v[i];
        rule_kind_t k = g->rule->kind;
        if (g->level == LVL_NONE || k == RK_SYSTEM || k == RK_PATH_DIR) continue;
        loc_t l = loc_rule(p, g);
        if (!l.abs || exists(p, l) != EX_DIR) continue;
        strmap_put(&w.roots, l.abs, 1);
        vec_push(&rts, g);
    }
    bool ok = true;
    for (size_t i = 0; i < rts.n && ok; i++) {
        loc_t l = loc_rule(p, rts.v[i]);
        if (is_hidden(p, l.key)) continue;
        level_t lvl = level_at(p, l);
        bool descend = true;
        ok = visit(&w, l.abs, EX_DIR, lvl, &descend);
        if (ok && descend) ok = walk_dir(&w, AT_FDCWD, l.abs, lvl, 0, true);
    }
    vec_free(&rts);
    strmap_free(&w.roots);
    return ok;
}

/* ---- grants and literal caps ------------------------------------------------------------------------ */

static bool plan_grants(plan_t *p)
{
    const resolved_t *r = p->r;
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        loc_t l = loc_rule(p, g);
        if (is_hidden(p, l.key)) continue;
        /* Two grants on one path (at exec time, a workspace that is also an
         * allow_read path): the lower one decides (SPEC §3.4), and only it
         * is mounted — a later --bind of the workspace would make the path,
         * and the protected paths in it, writable. */
        if (strmap_get(&p->grant_at, l.key) != (long)i) continue;
        const char *pk = parent_key(p, l.key);
        const rrule_t *up = pk ? grant_for(p, pk) : NULL;
        level_t above = up ? up->level : LVL_NONE;
        bool session_root = (g->base == PB_WORKSPACE || g->base == PB_SCRATCH) && !*g->path;
        if (!session_root && up && above == g->level) continue; /* adds nothing to its parent */
        ex_t e = exists(p, l);
        if (e == EX_LINK && g->base != PB_ROOT)
            return fail(p, "'%s' in the session directory is a symbolic link; a policy path there must not be one",
                        l.abs ? l.abs : l.key);
        switch (g->level) {
        case LVL_WRITE:
            if (session_root && g->base == PB_SCRATCH && p->roots && p->roots->scratch_tmpfs)
                mount1(p, PH_MOUNT, l, "--tmpfs", g, "the scratch dir: a fresh tmpfs, gone with the sandbox");
            else
                mount2(p, l, session_root ? "--bind" : "--bind-try", word_of(l), g, NULL);
            vec_push(&p->wmounts, l.key);
            break;
        case LVL_READ:
            mount2(p, l, "--ro-bind-try", word_of(l), g, NULL);
            break;
        case LVL_NONE:
            if (above == LVL_NONE) break; /* nothing above shows it */
            if (e == EX_MISSING) {
                if (!block_missing(p, l, g)) return false;
            } else if (!hide(p, l, e, g, false)) {
                return false;
            }
            break;
        }
        /* A grant named through a symlink (~/src -> code/src) is mounted at
         * its target; when nothing shows the link's own directory, recreate
         * the link so the name the policy uses works inside too. */
        if (g->level > LVL_NONE && g->base == PB_ROOT && strcmp(g->lexical, g->path) != 0) {
            const char *lk = parent_key(p, g->lexical);
            if (lk && grant_level(p, lk) == LVL_NONE && !is_hidden(p, g->lexical))
                mount2(p, loc_make(p, PB_ROOT, g->lexical), "--symlink", word_lit(g->path), g,
                       "the policy's name for a symlinked path");
        }
    }
    return true;
}

static bool plan_literal_caps(plan_t *p)
{
    for (size_t i = 0; i < p->r->caps.n; i++) {
        const rrule_t *c = &p->r->caps.v[i];
        if (c->glob) continue;
        loc_t l = loc_rule(p, c);
        bool ok = c->rule->kind != RK_RUNTIME ? apply_cap(p, l, c)
                  : p->roots                  ? darken(p, l, c)
                                              : true; /* the template leaves them to the runner */
        if (!ok) return false;
    }
    return true;
}

/* Phase 2 for write caps: remount each capped mount, and every writable
 * mount below it, read-only (a cap covers everything below its path). */
static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void plan_remounts(plan_t *p)
{
    if (p->wmounts.n) qsort(p->wmounts.v, p->wmounts.n, sizeof *p->wmounts.v, cmp_cstr);
    for (size_t i = 0; i < p->ro_caps.n; i++) {
        const char *ck = p->ro_caps.v[i].key;
        const rrule_t *origin = p->ro_caps.v[i].origin;
        loc_t c = key_loc(p, ck);
        mount1(p, PH_CAP, c, "--remount-ro", origin, "write-protected: read-only");
        /* writable mounts strictly below: a contiguous run after ck in sorted order */
        size_t lo = 0, hi = p->wmounts.n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (strcmp(p->wmounts.v[mid], ck) <= 0) lo = mid + 1;
            else hi = mid;
        }
        for (size_t k = lo; k < p->wmounts.n && key_under(p->wmounts.v[k], ck); k++) {
            const char *mk = p->wmounts.v[k];
            loc_t m = key_loc(p, mk);
            mount1(p, PH_CAP, m, "--remount-ro", origin, "below a write-protected path: read-only");
        }
    }
}

/* Is key strictly below a directory hidden as unlisted? (Its ancestors,
 * looked up: linear in the ops, whatever the number of such dirs.) */
static bool under_unlisted(plan_t *p, const char *key)
{
    bool self = true;
    FOR_KEY_AND_UP(p, key, k) {
        if (!self && strmap_get(&p->unlisted, k) >= 0) return true;
        self = false;
    }
    return false;
}

/* Nothing is mounted below a directory hidden because it could not be
 * listed: an op planned there before the listing failed (a pin of the
 * ancestors of a protected name, found by name) would bind the real,
 * unchecked directory back into the empty one. Its placeholders go too:
 * bwrap will not create them. */
static void drop_below_unlisted(plan_t *p)
{
    size_t keep = 0;
    for (size_t i = 0; i < p->items.n; i++)
        if (!(p->items.v[i].key[0] && under_unlisted(p, p->items.v[i].key))) p->items.v[keep++] = p->items.v[i];
    p->items.n = keep;
    keep = 0;
    for (size_t i = 0; i < p->residue->n; i++) {
        if (under_unlisted(p, p->residue->v[i].path)) free(p->residue->v[i].path);
        else p->residue->v[keep++] = p->residue->v[i];
    }
    p->residue->n = keep;
}

static int cmp_item(const void *x, const void *y)
{
    const item_t *a = x, *b = y;
    if (a->phase != b->phase) return a->phase - b->phase;
    if (a->phase == PH_FLAGS || a->phase == PH_TAIL) return a->seq < b->seq ? -1 : a->seq > b->seq;
    if (a->order != b->order) return a->order - b->order;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    int c = strcmp(a->key, b->key);
    if (c) return c;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

bwrap_t *bwrap_plan(const resolved_t *r, const roots_t *roots, char **err)
{
    if (!r->facts->bwrap_version || !*r->facts->bwrap_version) {
        /* fail closed: without the version, --disable-userns would be left
         * out silently (the compile driver says the same, located) */
        *err = xasprintf("%s: bwrap's version is unknown, so --disable-userns cannot be decided; install bubblewrap "
                         "or use --facts FILE",
                         r->facts->origin);
        return NULL;
    }
    bwrap_t *out = xcalloc(1, sizeof *out);
    plan_t p = {0};
    p.r = r;
    p.roots = roots;
    p.a = &out->arena;
    p.residue = &out->residue;
    p.out = out;
    for (size_t i = 0; i < r->grants.n; i++) {
        loc_t l = loc_rule(&p, &r->grants.v[i]);
        long prev = strmap_get(&p.grant_at, l.key);
        /* two grants on one path (the workspace named by allow_write too): lower wins */
        if (prev < 0 || r->grants.v[i].level < r->grants.v[prev].level) strmap_put(&p.grant_at, l.key, (long)i);
    }
    for (size_t i = 0; i < r->caps.n; i++) {
        const rrule_t *c = &r->caps.v[i];
        /* runtime-owned caps are planned as hidden keys (darken), which
         * spare the session dirs inside; a level here would not */
        if (c->glob || c->rule->kind == RK_RUNTIME) continue;
        loc_t l = loc_rule(&p, c);
        long prev = strmap_get(&p.litcap_at, l.key);
        if (prev < 0 || (long)c->level < prev) strmap_put(&p.litcap_at, l.key, (long)c->level);
    }

    plan_flags(&p);
    plan_base_mounts(&p);
    plan_hidden_dirs(&p);
    /* caps first: what they hide whole is skipped by the grants below them */
    bool ok = plan_literal_caps(&p) && (roots ? plan_walk(&p) : true);
    if (ok && !roots) {
        /* template: tails at the writable roots (fresh session dirs, allow_write) */
        for (size_t i = 0; i < r->grants.n && ok; i++) {
            const rrule_t *g = &r->grants.v[i];
            if (g->level != LVL_WRITE || g->rule->kind == RK_SYSTEM) continue;
            loc_t l = loc_rule(&p, g);
            if (exists(&p, l) == EX_DIR) ok = tail_blocks(&p, l, true);
        }
    }
    ok = ok && plan_grants(&p);
    if (ok) plan_remounts(&p);
    if (ok && p.unlisted_n) drop_below_unlisted(&p);
    if (p.unlisted_n > BW_NOTICES_MAX) {
        char *msg = xasprintf("and %zu more directories that cannot be listed are hidden in the sandbox",
                              p.unlisted_n - BW_NOTICES_MAX);
        notice(msg);
        free(msg);
    }
    add_op(&p, (slot_t){PH_TAIL, NULL, 0},
           (bw_op_t){"--chdir", (bw_word_t){BW_WORKSPACE, ""}, word_lit(""), 1, NULL, NULL});

    strmap_free(&p.grant_at);
    strmap_free(&p.litcap_at);
    strmap_free(&p.seen);
    strmap_free(&p.hidden);
    strmap_free(&p.ex_seen);
    free(p.upbuf);
    vec_free(&p.wmounts);
    vec_free(&p.ro_caps);
    strmap_free(&p.unlisted);
    if (!ok) {
        *err = p.err ? p.err : xstrdup("the sandbox could not be planned");
        vec_free(&p.items);
        bwrap_free(out);
        return NULL;
    }
    if (p.items.n) qsort(p.items.v, p.items.n, sizeof *p.items.v, cmp_item);
    for (size_t i = 0; i < p.items.n; i++) vec_push(&out->ops, p.items.v[i].op);
    vec_free(&p.items);
    return out;
}

void bwrap_free(bwrap_t *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->residue.n; i++) free(b->residue.v[i].path);
    vec_free(&b->residue);
    vec_free(&b->seen);
    strmap_free(&b->seen_at);
    vec_free(&b->ops);
    arena_free(&b->arena);
    free(b);
}

bool bwrap_seen(const bwrap_t *b, const char *path, bw_seen_t *out)
{
    long i = strmap_get(&b->seen_at, path);
    if (i < 0) return false;
    *out = b->seen.v[i];
    return true;
}

bool bwrap_build(const resolved_t *r, const facts_t *f, diag_list_t *diags, bwrap_t **out)
{
    (void)f; /* r was resolved with f: the planner reads the facts through r */
    char *err = NULL;
    *out = bwrap_plan(r, NULL, &err);
    if (!*out) diag_add(diags, SEV_ERROR, NULL, NULL, (span_t){0, 0}, "%s", err);
    free(err);
    return *out != NULL;
}
