/* bwrap.c — the bubblewrap planner (SPEC §7), bwrap.args rendering and
 * parsing, placeholder substitution, and the mount evaluator explain uses.
 *
 * See bwrap.h for the two phases. Locations are keyed by absolute path when
 * known, else symbolically ("W:rel", "S:rel") in a compile-time template,
 * where the workspace and scratch dir are taken to be fresh and empty and to
 * hold none of the absolute rules (they are leaves: drun-mcp makes them new).
 */
#include "bwrap.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"

/* The sandbox's uid and gid: never 0, even when the runtime is root. */
#define SANDBOX_UID "1000"
#define SANDBOX_GID "1000"

enum { PH_FLAGS, PH_MOUNT, PH_CAP, PH_TAIL };

typedef struct loc {
    path_base_t base; /* PB_ROOT, PB_WORKSPACE, PB_SCRATCH */
    const char *rel;  /* ROOT: the absolute path; session: below the root */
    const char *abs;  /* concrete absolute path; NULL for a template's session path */
    const char *key;  /* map key: abs when known, else "W:rel" / "S:rel" */
} loc_t;

typedef enum { EX_MISSING, EX_DIR, EX_FILE, EX_OTHER, EX_LINK } ex_t;

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
    strmap_t grant_at;  /* key -> index into r->grants */
    strmap_t litcap_at; /* key -> lowest literal cap level there */
    strmap_t seen;      /* op dedupe */
    strmap_t hidden;    /* keys hidden whole by a deny_read glob or a block */
    strmap_t ex_seen;   /* exec plans: abs path -> ex_t, so that each path is
                           looked at once (the blocks of the protected names walk
                           down from / for every name, under two roots) */
    VEC(const char *) wmounts;  /* keys of writable phase-1 mounts */
    VEC(struct ro_cap { const char *key; const rrule_t *origin; }) ro_caps; /* cap-read targets */
    VEC(bw_residue_t) *residue;
    strmap_t unlisted;  /* exec plans: dirs hidden because they could not be listed */
    size_t unlisted_n;
    size_t walked;
    char *err;
    char *upbuf;        /* scratch for ancestor lookups (FOR_KEY_AND_UP) */
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
        strmap_put(&p->ex_seen, arena_strdup(p->a, l.abs), (long)e); /* l.abs may be a walk buffer */
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
        if (h == 2 && key[0] == '/' && roots_exempt_from_dark(p->roots, k, key)) continue;
        if (h >= 0) return true;
    }
    return false;
}

/* ---- adding ops ------------------------------------------------------------------------------- */

static void word_text(buf_t *b, bw_word_t w);

static void add_op(plan_t *p, int phase, const char *key, int order, const char *opt, int nargs, bw_word_t a,
                   bw_word_t b, const rrule_t *origin, const char *note)
{
    buf_t k = BUF_INIT;
    buf_addc(&k, (char)('0' + phase));
    buf_adds(&k, key ? key : "");
    buf_addc(&k, '\n');
    buf_adds(&k, opt);
    if (nargs > 0) buf_addc(&k, ' '), word_text(&k, a);
    if (nargs > 1) buf_addc(&k, ' '), word_text(&k, b);
    const char *dk = arena_strdup(p->a, buf_cstr(&k));
    buf_free(&k);
    if (strmap_put(&p->seen, dk, 1) >= 0) return; /* the same op twice adds nothing */
    item_t it = {phase, order, key ? key_depth(key) : 0, key ? key : "", p->seq++,
                 {opt, a, b, nargs, origin, note}};
    vec_push(&p->items, it);
}

static int order_of(plan_t *p, loc_t l)
{
    if (p->roots || l.base == PB_ROOT) return 0;
    return l.base == PB_WORKSPACE ? 1 : 2;
}

static void flag(plan_t *p, const char *opt) { add_op(p, PH_FLAGS, NULL, 0, opt, 0, word_lit(""), word_lit(""), NULL, NULL); }

static void flag1(plan_t *p, const char *opt, bw_word_t a)
{
    add_op(p, PH_FLAGS, NULL, 0, opt, 1, a, word_lit(""), NULL, NULL);
}

static void flag2(plan_t *p, const char *opt, bw_word_t a, bw_word_t b)
{
    add_op(p, PH_FLAGS, NULL, 0, opt, 2, a, b, NULL, NULL);
}

static void mount1(plan_t *p, int phase, loc_t l, const char *opt, const rrule_t *o, const char *note)
{
    add_op(p, phase, l.key, order_of(p, l), opt, 1, word_of(l), word_lit(""), o, note);
}

static void mount2(plan_t *p, loc_t l, const char *opt, bw_word_t src, const rrule_t *o, const char *note)
{
    add_op(p, PH_MOUNT, l.key, order_of(p, l), opt, 2, src, word_of(l), o, note);
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
        add_op(p, PH_MOUNT, c.key, order_of(p, c), "--perms", 1, word_lit("0444"), word_lit(""), NULL, NULL);
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
    if (is_hidden(p, t.key)) return true;                 /* inside another one (the config in ~/.drun) */
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
                           "(a sandbox could point it elsewhere): make it a directory, or narrow the grant", t.abs);
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

static bool walk_dir(walker_t *w, const char *dir, level_t lvl, unsigned depth, bool is_root);

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
                              "the sandbox (an empty read-only directory)", dir, strerror(why));
        notice(msg);
        free(msg);
    }
    return true;
}

static bool walk_dir(walker_t *w, const char *dir, level_t lvl, unsigned depth, bool is_root)
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
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? true : hide_unlisted(p, dir, errno); /* ENOENT: gone, nothing to cap */
    VEC(char *) kids = {0};
    struct dirent *de;
    for (errno = 0; (de = readdir(d)); errno = 0) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        if (++p->walked > BW_WALK_MAX_ENTRIES) {
            closedir(d);
            for (size_t i = 0; i < kids.n; i++) free(kids.v[i]);
            vec_free(&kids);
            return fail(p, "more than 200000 entries under '%s' to check against the policy's globs; "
                           "narrow the globs or the grants", dir);
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
    bool ok = true, unlisted = false;
    for (size_t i = 0; i < kids.n; i++) {
        if (ok && !unlisted) {
            const char *path = path_join(dir, kids.v[i], p->a);
            if (strmap_get(&w->roots, path) >= 0) { /* walked as a root of its own */
                free(kids.v[i]);
                continue;
            }
            struct stat st;
            ex_t e = EX_MISSING;
            if (lstat(path, &st) == 0)
                e = S_ISLNK(st.st_mode) ? EX_LINK : S_ISDIR(st.st_mode) ? EX_DIR : S_ISREG(st.st_mode) ? EX_FILE : EX_OTHER;
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
            if (ok && descend && !is_hidden(p, path)) ok = walk_dir(w, path, lvl, depth + 1, false);
        }
        free(kids.v[i]);
    }
    vec_free(&kids);
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
        if (ok && descend) ok = walk_dir(&w, l.abs, lvl, 0, true);
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
                  : p->roots ? darken(p, l, c) : true; /* the template leaves them to the runner */
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
                         "or use --facts FILE", r->facts->origin);
        return NULL;
    }
    bwrap_t *out = xcalloc(1, sizeof *out);
    plan_t p = {0};
    p.r = r;
    p.roots = roots;
    p.a = &out->arena;
    p.residue = (void *)&out->residue;
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
    add_op(&p, PH_TAIL, NULL, 0, "--chdir", 1, (bw_word_t){BW_WORKSPACE, ""}, word_lit(""), NULL, NULL);

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
    vec_free(&b->ops);
    arena_free(&b->arena);
    free(b);
}

/* ---- bwrap.args: rendering and parsing ------------------------------------------------------------------- */

static void escape_lit(buf_t *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\') buf_adds(b, "\\\\");
        else if (c == '\n') buf_adds(b, "\\n");
        else if (c == '\t') buf_adds(b, "\\t");
        else if (c == '$' || c < 0x20 || c == 0x7f) buf_printf(b, "\\x%02x", c);
        else buf_addc(b, (char)c);
    }
}

static void word_text(buf_t *b, bw_word_t w)
{
    switch (w.kind) {
    case BW_LIT: escape_lit(b, w.s); return;
    case BW_ENV: buf_printf(b, "${env:%s}", w.s); return;
    case BW_EMPTY_FD: buf_adds(b, "${EMPTY_FD}"); return;
    case BW_WORKSPACE: buf_adds(b, "${WORKSPACE}"); break;
    case BW_SCRATCH: buf_adds(b, "${SCRATCH}"); break;
    }
    if (*w.s) {
        buf_addc(b, '/');
        escape_lit(b, w.s);
    }
}

void bwrap_op_text(const bw_op_t *op, buf_t *out)
{
    buf_adds(out, op->opt);
    if (op->nargs > 0) buf_addc(out, ' '), word_text(out, op->a);
    if (op->nargs > 1) buf_addc(out, ' '), word_text(out, op->b);
}

void bwrap_render(const bwrap_t *b, buf_t *out)
{
    for (size_t i = 0; i < b->ops.n; i++) {
        const bw_op_t *op = &b->ops.v[i];
        buf_adds(out, op->opt);
        buf_addc(out, '\n');
        if (op->nargs > 0) word_text(out, op->a), buf_addc(out, '\n');
        if (op->nargs > 1) word_text(out, op->b), buf_addc(out, '\n');
    }
}

/* Arity of every option the planner writes; anything else is refused. */
static int option_nargs(const char *opt)
{
    static const char *const zero[] = {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                                       "--new-session", "--clearenv"};
    static const char *const one[] = {"--cap-drop", "--uid", "--gid", "--hostname", "--dev", "--proc",
                                      "--tmpfs", "--remount-ro", "--chdir", "--unsetenv", "--perms"};
    static const char *const two[] = {"--setenv", "--bind", "--bind-try", "--ro-bind", "--ro-bind-try",
                                      "--symlink", "--ro-bind-data", "--dev-bind"};
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) if (strcmp(opt, zero[i]) == 0) return 0;
    for (size_t i = 0; i < sizeof one / sizeof *one; i++) if (strcmp(opt, one[i]) == 0) return 1;
    for (size_t i = 0; i < sizeof two / sizeof *two; i++) if (strcmp(opt, two[i]) == 0) return 2;
    return -1;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One line → one word (the inverse of word_text). */
static bool parse_word(arena_t *a, const char *s, size_t n, bw_word_t *w, char **err)
{
    bw_word_kind_t kind = BW_LIT;
    size_t i = 0;
    if (n >= 12 && memcmp(s, "${WORKSPACE}", 12) == 0) kind = BW_WORKSPACE, i = 12;
    else if (n >= 10 && memcmp(s, "${SCRATCH}", 10) == 0) kind = BW_SCRATCH, i = 10;
    else if (n == 11 && memcmp(s, "${EMPTY_FD}", 11) == 0) {
        *w = (bw_word_t){BW_EMPTY_FD, ""};
        return true;
    } else if (n >= 6 && memcmp(s, "${env:", 6) == 0 && s[n - 1] == '}') {
        *w = (bw_word_t){BW_ENV, arena_strndup(a, s + 6, n - 7)};
        return true;
    }
    if (kind != BW_LIT) {
        if (i < n && s[i] != '/') {
            *err = xstrdup("a placeholder must be followed by '/' or end the argument");
            return false;
        }
        if (i < n) i++;
    }
    buf_t b = BUF_INIT;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '$') {
            buf_free(&b);
            *err = xstrdup("a bare '$' (a literal dollar is written \\x24)");
            return false;
        }
        if (c != '\\') {
            buf_addc(&b, c);
            continue;
        }
        if (++i >= n) break;
        if (s[i] == '\\') buf_addc(&b, '\\');
        else if (s[i] == 'n') buf_addc(&b, '\n');
        else if (s[i] == 't') buf_addc(&b, '\t');
        else if (s[i] == 'x' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            int v = hexval(s[i + 1]) * 16 + hexval(s[i + 2]);
            if (v == 0) {
                buf_free(&b);
                *err = xstrdup("\\x00 cannot be an argument byte");
                return false;
            }
            buf_addc(&b, (char)v);
            i += 2;
        } else {
            buf_free(&b);
            *err = xstrdup("a bad escape (only \\\\, \\n, \\t and \\xHH)");
            return false;
        }
    }
    *w = (bw_word_t){kind, arena_strdup(a, buf_cstr(&b))};
    buf_free(&b);
    return true;
}

bwrap_t *bwrap_args_parse(const char *text, size_t len, char **err)
{
    bwrap_t *b = xcalloc(1, sizeof *b);
    VEC(bw_word_t) words = {0};
    size_t line = 1;
    for (size_t i = 0; i < len; line++) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - text - i) : len - i;
        bw_word_t w;
        char *e = NULL;
        if (memchr(text + i, '\0', n) || !parse_word(&b->arena, text + i, n, &w, &e)) {
            *err = xasprintf("line %zu: %s", line, e ? e : "a NUL byte");
            free(e);
            goto fail;
        }
        vec_push(&words, w);
        i += n + 1;
    }
    for (size_t i = 0; i < words.n;) {
        if (words.v[i].kind != BW_LIT) {
            *err = xasprintf("argument %zu: expected an option", i + 1);
            goto fail;
        }
        int na = option_nargs(words.v[i].s);
        if (na < 0) {
            *err = xasprintf("argument %zu: unknown option '%s'", i + 1, words.v[i].s);
            goto fail;
        }
        if (i + (size_t)na >= words.n) {
            *err = xasprintf("argument %zu: '%s' needs %d argument%s", i + 1, words.v[i].s, na, na > 1 ? "s" : "");
            goto fail;
        }
        bw_op_t op = {words.v[i].s, word_lit(""), word_lit(""), na, NULL, NULL};
        if (na > 0) op.a = words.v[i + 1];
        if (na > 1) op.b = words.v[i + 2];
        vec_push(&b->ops, op);
        i += 1 + (size_t)na;
    }
    vec_free(&words);
    return b;
fail:
    vec_free(&words);
    bwrap_free(b);
    return NULL;
}

/* ---- substitution ---------------------------------------------------------------------------------------- */

static const char *env_get(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=') return *env + n + 1;
    return NULL;
}

static char *word_value(bw_word_t w, const roots_t *roots, char *const *env)
{
    switch (w.kind) {
    case BW_EMPTY_FD: return xstrdup("${EMPTY_FD}"); /* never reached: bwrap_argv binds empty_file */
    case BW_LIT: return xstrdup(w.s);
    case BW_ENV: {
        const char *v = env_get(env, w.s);
        return v ? xstrdup(v) : NULL;
    }
    case BW_WORKSPACE:
    case BW_SCRATCH: {
        const char *root = w.kind == BW_WORKSPACE ? roots->workspace : roots->scratch;
        return *w.s ? xasprintf("%s/%s", root, w.s) : xstrdup(root);
    }
    }
    return NULL;
}

/* A block of a missing file: "--perms 0444 --ro-bind-data ${EMPTY_FD} DEST". */
static bool empty_block(const bw_op_t *op)
{
    return op->nargs == 2 && op->a.kind == BW_EMPTY_FD && !strcmp(op->opt, "--ro-bind-data");
}

void bwrap_argv(const bwrap_t *b, const roots_t *roots, char *const *env, const char *empty_file, void *argv_vec)
{
    VEC(char *) *argv = argv_vec;
    for (size_t i = 0; i < b->ops.n; i++) {
        const bw_op_t *op = &b->ops.v[i];
        if (!strcmp(op->opt, "--perms") && i + 1 < b->ops.n && empty_block(&b->ops.v[i + 1])) continue;
        if (empty_block(op)) {
            vec_push(argv, xstrdup("--ro-bind"));
            vec_push(argv, xstrdup(empty_file));
            vec_push(argv, word_value(op->b, roots, env));
            continue;
        }
        char *a = op->nargs > 0 ? word_value(op->a, roots, env) : NULL;
        char *c = op->nargs > 1 ? word_value(op->b, roots, env) : NULL;
        if ((op->nargs > 0 && !a) || (op->nargs > 1 && !c)) { /* an unset passthrough variable */
            free(a);
            free(c);
            continue;
        }
        vec_push(argv, xstrdup(op->opt));
        if (a) vec_push(argv, a);
        if (c) vec_push(argv, c);
    }
}

/* ---- evaluation: the mount namespace the ops build ------------------------------------------------------------ */

typedef enum { MK_BIND, MK_TMPFS, MK_DEVNULL, MK_EMPTYFILE, MK_DEV, MK_PROC } mkind_t;

typedef struct mnt {
    const char *dest;
    mkind_t kind;
    bool ro;
    const bw_op_t *op;
} mnt_t;

typedef struct link {
    const char *path, *target;
} link_t;

level_t bwrap_eval(const bwrap_t *b, const roots_t *roots, const char *path, const bw_op_t **by, bool *private_tmp)
{
    arena_t a = ARENA_INIT;
    VEC(mnt_t) m = {0};
    VEC(link_t) links = {0};
    for (size_t i = 0; i < b->ops.n; i++) {
        const bw_op_t *op = &b->ops.v[i];
        const char *o = op->opt;
        bw_word_t dw = op->nargs == 2 ? op->b : op->a;
        if (op->nargs == 0 || dw.kind == BW_ENV || strcmp(o, "--setenv") == 0 || strcmp(o, "--chdir") == 0 ||
            strcmp(o, "--perms") == 0 ||
            strcmp(o, "--cap-drop") == 0 || strcmp(o, "--uid") == 0 || strcmp(o, "--gid") == 0 ||
            strcmp(o, "--hostname") == 0)
            continue;
        char *dest = word_value(dw, roots, NULL);
        const char *d = arena_strdup(&a, dest);
        free(dest);
        if (strcmp(o, "--symlink") == 0) {
            link_t l = {d, op->a.s};
            vec_push(&links, l);
            continue;
        }
        if (strcmp(o, "--remount-ro") == 0) {
            for (size_t k = m.n; k-- > 0;)
                if (strcmp(m.v[k].dest, d) == 0) { m.v[k].ro = true; break; }
            continue;
        }
        /* a new mount hides every earlier mount at or below its destination */
        size_t keep = 0;
        for (size_t k = 0; k < m.n; k++)
            if (!path_is_under(m.v[k].dest, d)) m.v[keep++] = m.v[k];
        m.n = keep;
        mnt_t nm = {d, MK_BIND, false, op};
        if (strcmp(o, "--ro-bind") == 0 || strcmp(o, "--ro-bind-try") == 0) {
            nm.ro = true;
            if (op->a.kind == BW_LIT && strcmp(op->a.s, "/dev/null") == 0) nm.kind = MK_DEVNULL;
        } else if (strcmp(o, "--ro-bind-data") == 0) {
            nm.kind = MK_EMPTYFILE;
            nm.ro = true;
        } else if (strcmp(o, "--tmpfs") == 0) nm.kind = MK_TMPFS;
        else if (strcmp(o, "--dev") == 0) nm.kind = MK_DEV;
        else if (strcmp(o, "--proc") == 0) nm.kind = MK_PROC;
        vec_push(&m, nm);
    }
    /* follow the sandbox's own symlinks (merged /usr) */
    const char *p = path;
    for (int hops = 0; hops < 8; hops++) {
        bool moved = false;
        for (size_t i = 0; i < links.n && !moved; i++) {
            if (!path_is_under(p, links.v[i].path)) continue;
            const char *t = links.v[i].target[0] == '/' ? links.v[i].target : path_join("/", links.v[i].target, &a);
            size_t n = strlen(links.v[i].path);
            p = path_join(t, p[n] == '/' ? p + n + 1 : "", &a);
            moved = true;
        }
        if (!moved) break;
    }
    const mnt_t *best = NULL;
    for (size_t k = 0; k < m.n; k++)
        if (path_is_under(p, m.v[k].dest) && (!best || strlen(m.v[k].dest) >= strlen(best->dest))) best = &m.v[k];
    level_t lv = LVL_NONE;
    bool priv = false;
    if (best) {
        switch (best->kind) {
        case MK_BIND: lv = best->ro ? LVL_READ : LVL_WRITE; break;
        case MK_TMPFS: priv = !best->ro; lv = LVL_NONE; break;
        case MK_DEV: case MK_PROC: priv = true; break;
        case MK_DEVNULL: lv = LVL_NONE; break;
        case MK_EMPTYFILE: lv = LVL_READ; break; /* an empty file that cannot be written */
        }
    }
    if (by) *by = best ? best->op : NULL;
    if (private_tmp) *private_tmp = priv;
    vec_free(&m);
    vec_free(&links);
    arena_free(&a);
    return lv;
}
