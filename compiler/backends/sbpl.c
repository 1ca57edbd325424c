/* sbpl.c — SBPL profile generation (SPEC §6) and its structured evaluator.
 *
 * Order is the whole game: SBPL applies the last matching rule, so after the
 * fixed base (what real tools need: link nodes, devices, the xcrun shims,
 * sysctls, mach services, IPC; docs/macos.md) and the network, grants are
 * emitted shallow-to-deep (each grant sets both read and write, so a deeper
 * read-only grant really lowers a writable parent), then metadata access to
 * the ancestors of granted paths and of the session dirs, the data volume's
 * second spelling closed, the runtime-owned paths, then every cap — nothing
 * after a cap can raise it again. Paths and regexes are quoted by one
 * function each; every deny of a named path also holds in any case (APFS).
 */
#include "sbpl.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"
#include "path.h"

/* ---- escaping -------------------------------------------------------------------------- */

bool sbpl_quote(buf_t *out, const char *s)
{
    buf_addc(out, '"');
    while (*s) {
        size_t run = strcspn(s, "\"\\\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
                                "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f");
        buf_add(out, s, run);
        s += run;
        if (!*s) break;
        unsigned char c = (unsigned char)*s;
        if (c != '"' && c != '\\') return false; /* a control character: never written */
        buf_addc(out, '\\');
        buf_addc(out, (char)c);
        s++;
    }
    buf_addc(out, '"');
    return true;
}

/* One character of literal text. An ASCII letter is the class of both its
 * cases: APFS and HFS+ volumes are case-insensitive by default, where
 * .GIT/hooks is .git/hooks and a created .ENV is the .env a tool opens, so a
 * cap written in one case must hold in every case (the lattice and Linux
 * match case-sensitively; the macOS caps are wider, never narrower). */
static void regex_literal(buf_t *out, char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        buf_addc(out, '[');
        buf_addc(out, (char)(c | 0x20));
        buf_addc(out, (char)(c & ~0x20));
        buf_addc(out, ']');
        return;
    }
    if (strchr(".[](){}*+?^$|\\", c)) buf_addc(out, '\\');
    buf_addc(out, c);
}

/* A byte outside printable ASCII (and not '/'): part of a UTF-8 sequence. */
#define NA "[^/ -~]"

const char *sbpl_glob_regex(const char *pattern, bool below, arena_t *a)
{
    buf_t b = BUF_INIT;
    buf_addc(&b, '^');
    const char *s = pattern, *st;
    while (path_next_comp(&s, &st, &s)) {
        if (s - st == 2 && st[0] == '*' && st[1] == '*') {
            buf_adds(&b, "(/.*)?"); /* zero or more whole components */
            continue;
        }
        buf_addc(&b, '/');
        for (const char *q = st; q < s; q++) {
            if (*q == '\\' && q + 1 < s && (q[1] == '*' || q[1] == '?')) regex_literal(&b, *++q);
            else if (*q == '*') buf_adds(&b, "[^/]*");
            /* '?' is one character: one byte, or one multi-byte UTF-8 sequence.
             * With ASCII-only syntax (no raw bytes in the profile) a sequence is
             * 2-4 bytes outside printable ASCII; that can also take two short
             * non-ASCII characters, which errs on the side of denying. The
             * lengths are spelled out, not {2,4}: Seatbelt's regex engine is
             * not documented to have counted repeats. */
            else if (*q == '?') buf_adds(&b, "([^/]|" NA NA "|" NA NA NA "|" NA NA NA NA ")");
            else regex_literal(&b, *q);
        }
    }
    buf_adds(&b, below ? "(/.*)?$" : "$"); /* the match (and everything below it) */
    const char *r = arena_strdup(a, buf_cstr(&b));
    buf_free(&b);
    return r;
}

/* ---- building --------------------------------------------------------------------------- */

typedef struct gen {
    sbpl_t *s;
    const resolved_t *r;
    diag_list_t *d;
    bool failed;
    strmap_t seen_unlink; /* dedupe of ancestor rules */
    unsigned lines;       /* newlines in the text so far */
} gen_t;

/* Renders a filter; false if a string cannot be quoted. */
static bool render_filter(buf_t *out, const sbpl_rule_t *r)
{
    static const char *const fname[] = {"(subpath ", "(literal ", "(regex "};
    buf_adds(out, fname[r->filter]);
    bool ok = true;
    if (r->base == PB_ROOT) {
        ok = sbpl_quote(out, r->arg);
    } else if (!*r->arg) {
        buf_adds(out, r->base == PB_WORKSPACE ? "(param \"WORKSPACE\")" : "(param \"SCRATCH\")");
    } else {
        buf_adds(out, r->base == PB_WORKSPACE ? "(string-append (param \"WORKSPACE\") "
                                              : "(string-append (param \"SCRATCH\") ");
        buf_t rest = BUF_INIT;
        buf_addc(&rest, '/');
        buf_adds(&rest, r->arg);
        ok = sbpl_quote(out, buf_cstr(&rest));
        buf_free(&rest);
        buf_addc(out, ')');
    }
    buf_addc(out, ')');
    return ok;
}

static void render_ops(buf_t *out, unsigned ops)
{
    if (ops & SB_READ) buf_adds(out, " file-read*");
    if (ops & SB_META) buf_adds(out, " file-read-metadata");
    if (ops & SB_WRITE) buf_adds(out, " file-write*");
    if (ops & SB_UNLINK) buf_adds(out, " file-write-unlink");
}

/* Where a rule came from, as a trailing comment: "config.toml:3:14 filesystem.allow_read". */
static void render_origin(buf_t *out, const rrule_t *o)
{
    if (!o) return;
    const rule_t *r = o->rule;
    buf_adds(out, " ; ");
    if (r->src) {
        srcpos_t p = source_pos(r->src, r->span.start);
        /* a file name is not trusted text: a newline in it would end the
         * comment and put the rest of the name into the profile */
        for (const char *c = r->src->name; *c; c++)
            buf_addc(out, (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
        buf_addc(out, ':');
        buf_addu(out, p.line);
        buf_addc(out, ':');
        buf_addu(out, p.col);
        buf_addc(out, ' ');
        buf_adds(out, policy_rule_kind_key(r->kind));
    } else {
        if (r->kind == RK_RUNTIME) buf_adds(out, "runtime-owned: "); /* SPEC §13 */
        buf_adds(out, r->origin ? r->origin : policy_rule_kind_key(r->kind));
    }
}

static void emit_guarded(gen_t *g, const char *guard, const char *dark, bool allow, unsigned ops, sbpl_filter_t f,
                         path_base_t base, const char *arg, const rrule_t *origin)
{
    sbpl_rule_t rule = {allow, ops, f, base, arg, origin, 0, guard, dark};
    buf_t *t = &g->s->text;
    size_t mark = t->len;
    bool ok = true;
    if (guard) {
        buf_adds(t, "(if (drun-in-session? ");
        ok = sbpl_quote(t, guard);
        buf_adds(t, ") ");
    } else if (dark) {
        buf_adds(t, base == PB_WORKSPACE ? "(if (drun-under? (param \"WORKSPACE\") " : "(if (drun-under? (param \"SCRATCH\") ");
        ok = sbpl_quote(t, dark);
        buf_adds(t, ") ");
        guard = dark; /* closes the (if ...) below */
    }
    buf_adds(t, allow ? "(allow" : "(deny");
    render_ops(t, ops);
    buf_addc(t, ' ');
    if (!ok || !render_filter(t, &rule)) {
        buf_truncate(t, mark); /* nothing of an unquotable string reaches the profile */
        const rule_t *r = origin ? origin->rule : NULL;
        diag_add(g->d, SEV_ERROR, "bad-path", r ? r->src : NULL, r ? r->span : (span_t){0, 0},
                 "a path holds a character that cannot be written into an SBPL profile");
        g->failed = true;
        return;
    }
    buf_addc(t, ')');
    if (guard) buf_addc(t, ')');
    render_origin(t, origin);
    buf_addc(t, '\n');
    rule.line = ++g->lines;
    vec_push(&g->s->rules, rule);
}

static void emit_if(gen_t *g, const char *guard, bool allow, unsigned ops, sbpl_filter_t f, path_base_t base,
                    const char *arg, const rrule_t *origin)
{
    emit_guarded(g, guard, NULL, allow, ops, f, base, arg, origin);
}

static void emit(gen_t *g, bool allow, unsigned ops, sbpl_filter_t f, path_base_t base, const char *arg,
                 const rrule_t *origin)
{
    emit_guarded(g, NULL, NULL, allow, ops, f, base, arg, origin);
}

static void add_text(gen_t *g, const char *t)
{
    buf_adds(&g->s->text, t);
    for (; *t; t++) g->lines += *t == '\n';
}

static void section(gen_t *g, const char *title)
{
    add_text(g, "\n;; ");
    add_text(g, title);
    add_text(g, "\n");
}

static const char base_profile[] =
    "(version 1)\n"
    "(deny default)\n"
    "\n"
    ";; processes: run and fork; signal only inside this sandbox. process-info* is\n"
    ";; partly allowed by Seatbelt whatever a profile says, so this rule does not\n"
    ";; hide other processes; it lets ps, psutil and Apple's xcrun shims inspect\n"
    ";; the sandbox's own (with the kern.proc.* sysctls below)\n"
    "(allow process-exec process-fork)\n"
    "(allow signal (target same-sandbox))\n"
    "(allow process-info* (target same-sandbox))\n"
    "\n"
    ";; the root directory (getcwd, realpath, shells read it) and the system link\n"
    ";; nodes: /etc /tmp /var are symlinks into /private, and following one reads\n"
    ";; the link (cat /etc/hosts, date's /etc/localtime, OpenSSL's /etc/ssl)\n"
    "(allow file-read* (literal \"/\"))\n"
    "(allow file-read-metadata (literal \"/etc\") (literal \"/tmp\") (literal \"/var\") (literal \"/private\"))\n"
    "\n"
    ";; the devices every program expects; /dev/stdin|stdout|stderr are links to\n"
    ";; /dev/fd/N (echo x > /dev/stderr), /dev itself is looked up on the way\n"
    "(allow file-read-metadata (literal \"/dev\") (literal \"/dev/fd\")\n"
    "  (literal \"/dev/stdin\") (literal \"/dev/stdout\") (literal \"/dev/stderr\"))\n"
    "(allow file-read* file-write-data file-ioctl\n"
    "  (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (literal \"/dev/dtracehelper\"))\n"
    "(allow file-read* (literal \"/dev/random\") (literal \"/dev/urandom\"))\n"
    "(allow file-read* file-write-data file-ioctl (regex #\"^/dev/fd/[0-9]+$\"))\n"
    "\n"
    ";; ttys: a pty made inside the sandbox (openpty: script, expect, node-pty)\n"
    ";; carries the pty extension and is the sandbox's to read and write; the\n"
    ";; terminal the command was started on can be written and ioctl'd (an\n"
    ";; interactive shell's prompt and stty) but never opened for reading, so no\n"
    ";; other terminal of the user can be read\n"
    "(allow pseudo-tty)\n"
    "(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\"))\n"
    "(allow file-read* file-write* file-ioctl\n"
    "  (require-all (regex #\"^/dev/ttys[0-9]+$\") (extension \"com.apple.sandbox.pty\")))\n"
    "(allow file-write-data file-ioctl (regex #\"^/dev/ttys[0-9]+$\"))\n"
    "\n"
    ";; Apple's /usr/bin shims (git, python3, make, clang, cc, pip3) find the\n"
    ";; developer dir through these links and load libxcrun from it: Command Line\n"
    ";; Tools, or an Xcode bundle (the bundle only, not all of /Applications);\n"
    ";; /bin/sh reads /private/var/select/sh to pick its shell\n"
    "(allow file-read* (literal \"/private/var/select/sh\") (literal \"/private/var/select/developer_dir\")\n"
    "  (literal \"/private/var/db/xcode_select_link\"))\n"
    "(allow file-read-metadata (literal \"/private/var/select\") (literal \"/private/var/db\")\n"
    "  (literal \"/Applications\") (literal \"/Library/Developer\"))\n"
    "(allow file-read* (subpath \"/Library/Developer/CommandLineTools\")\n"
    "  (regex #\"^/Applications/Xcode[^/]*\\.app(/.*)?$\"))\n"
    "\n"
    ";; named sysctls only, each for a tool that reads it:\n"
    ";; os.cpus(), nproc, make -j, libuv and V8 (cpu counts, perf levels, brand)\n"
    "(allow sysctl-read\n"
    "  (sysctl-name \"hw.activecpu\") (sysctl-name \"hw.logicalcpu\") (sysctl-name \"hw.logicalcpu_max\")\n"
    "  (sysctl-name \"hw.ncpu\") (sysctl-name \"hw.physicalcpu\") (sysctl-name \"hw.physicalcpu_max\")\n"
    "  (sysctl-name \"hw.packages\") (sysctl-name \"hw.nperflevels\") (sysctl-name-prefix \"hw.perflevel\")\n"
    "  (sysctl-name \"machdep.cpu.brand_string\") (sysctl-name \"machdep.cpu.core_count\")\n"
    "  (sysctl-name \"machdep.cpu.thread_count\") (sysctl-name \"hw.cpufrequency\")\n"
    "  (sysctl-name \"hw.cpufrequency_compat\") (sysctl-name \"hw.busfrequency_compat\")\n"
    "  (sysctl-name \"hw.tbfrequency_compat\"))\n"
    ";; CPU feature detection: numpy, OpenBLAS, the JVM, Rust's std::arch, clang -march=native\n"
    "(allow sysctl-read\n"
    "  (sysctl-name \"hw.cputype\") (sysctl-name \"hw.cpusubtype\") (sysctl-name \"hw.cpufamily\")\n"
    "  (sysctl-name \"hw.byteorder\") (sysctl-name \"hw.vectorunit\") (sysctl-name \"hw.machine\")\n"
    "  (sysctl-name \"hw.model\") (sysctl-name-prefix \"hw.optional.\") (sysctl-name \"machdep.cpu.features\")\n"
    "  (sysctl-name \"machdep.cpu.leaf7_features\") (sysctl-name \"machdep.cpu.extfeatures\")\n"
    "  (sysctl-name \"machdep.cpu.family\") (sysctl-name \"machdep.cpu.model\")\n"
    "  (sysctl-name \"machdep.ptrauth_enabled\") (sysctl-name \"sysctl.proc_cputype\")\n"
    "  (sysctl-name \"sysctl.proc_translated\"))\n"
    ";; caches and memory: allocators (jemalloc, mimalloc), os.totalmem(), psutil\n"
    "(allow sysctl-read\n"
    "  (sysctl-name \"hw.pagesize\") (sysctl-name \"hw.pagesize_compat\") (sysctl-name \"hw.memsize\")\n"
    "  (sysctl-name \"hw.cachelinesize\") (sysctl-name \"hw.cachelinesize_compat\") (sysctl-name \"hw.cacheconfig\")\n"
    "  (sysctl-name \"hw.l1dcachesize\") (sysctl-name \"hw.l1icachesize\") (sysctl-name \"hw.l2cachesize\")\n"
    "  (sysctl-name \"hw.l1dcachesize_compat\") (sysctl-name \"hw.l1icachesize_compat\")\n"
    "  (sysctl-name \"hw.l2cachesize_compat\") (sysctl-name \"hw.l3cachesize_compat\")\n"
    "  (sysctl-name \"vm.loadavg\") (sysctl-name \"vm.swapusage\"))\n"
    ";; the system: uname, sw_vers, hostname, id and getgroups, ulimit, uptime\n"
    "(allow sysctl-read\n"
    "  (sysctl-name \"kern.ostype\") (sysctl-name \"kern.osrelease\") (sysctl-name \"kern.osversion\")\n"
    "  (sysctl-name \"kern.version\") (sysctl-name \"kern.osproductversion\") (sysctl-name \"kern.osvariant_status\")\n"
    "  (sysctl-name \"kern.secure_kernel\") (sysctl-name \"kern.hostname\") (sysctl-name \"kern.argmax\")\n"
    "  (sysctl-name \"kern.maxfiles\") (sysctl-name \"kern.maxfilesperproc\") (sysctl-name \"kern.maxproc\")\n"
    "  (sysctl-name \"kern.ngroups\") (sysctl-name \"kern.usrstack64\") (sysctl-name \"kern.boottime\")\n"
    "  (sysctl-name \"kern.clockrate\") (sysctl-name \"kern.tcsm_available\") (sysctl-name \"kern.tcsm_enable\"))\n"
    ";; ps -p PID, psutil.Process, pgrep -g: one process or process group by id (not\n"
    ";; kern.proc.all, the host's process list, nor kern.procargs2, other processes'\n"
    ";; arguments and environment)\n"
    "(allow sysctl-read (sysctl-name-prefix \"kern.proc.pid.\") (sysctl-name-prefix \"kern.proc.pgrp.\"))\n"
    ";; the JVM reads its CPU type through a sysctl write\n"
    "(allow sysctl-write (sysctl-name \"kern.grade_cputype\"))\n"
    "\n"
    ";; os.cpus() and libuv: host_processor_info() and host_statistics()\n"
    "(allow mach-host*)\n"
    ";; Python multiprocessing's SemLock, pytest-xdist, concurrent.futures: POSIX semaphores\n"
    "(allow ipc-posix-sem)\n"
    ";; POSIX shared memory: multiprocessing.shared_memory, PyTorch's tensor sharing, the\n"
    ";; notification center's shared page\n"
    "(allow ipc-posix-shm)\n"
    ";; CFPreferences: xcrun, swift and every CoreFoundation tool read their defaults\n"
    "(allow user-preference-read)\n"
    "\n"
    ";; named mach services only (no bare mach-lookup): os_log and syslog (logd,\n"
    ";; logger), notify(3), getpwuid and DNS-free user lookups (libinfo), id -Gn and\n"
    ";; getgrouplist (membership), confstr's per-user temp dir (dirhelper: xcrun's cache)\n"
    "(allow mach-lookup\n"
    "  (global-name \"com.apple.logd\")\n"
    "  (global-name \"com.apple.system.logger\")\n"
    "  (global-name \"com.apple.system.notification_center\")\n"
    "  (global-name \"com.apple.system.opendirectoryd.libinfo\")\n"
    "  (global-name \"com.apple.system.opendirectoryd.membership\")\n"
    "  (global-name \"com.apple.bsd.dirhelper\"))\n"
    "\n"
    ";; (drun-in-session? path): path is the workspace or the scratch dir, or\n"
    ";; below one of them. Where those sit is known only at run time.\n"
    "(define (drun-under? path root)\n"
    "  (let ((n (string-length root)))\n"
    "    (and (>= (string-length path) n)\n"
    "         (string=? (substring path 0 n) root)\n"
    "         (or (= (string-length path) n) (char=? (string-ref path n) #\\/)))))\n"
    "(define (drun-in-session? path)\n"
    "  (or (drun-under? path (param \"WORKSPACE\")) (drun-under? path (param \"SCRATCH\"))))\n";

/* Could g's subtree be writable through a grant above it (writes is the set
 * of writable ROOT grant paths)? Session roots' places are unknown at compile
 * time, so their read-only grants always deny writes explicitly. */
static bool parent_may_write(const strmap_t *writes, const rrule_t *g, arena_t *a)
{
    if (g->base != PB_ROOT) return true;
    char *p = arena_strdup(a, g->path);
    for (char *slash = strrchr(p, '/'); slash; slash = strrchr(p, '/')) {
        *slash = '\0';
        if (strmap_get(writes, *p ? p : "/") >= 0) return true;
        if (!*p) break;
    }
    return false;
}

/* A built-in grant ($PATH dir, system dir) inside a grant of the same level
 * adds nothing; config entries are kept so each has its line. */
static bool redundant_builtin(const resolved_t *r, const rrule_t *g)
{
    if (g->base != PB_ROOT || (g->rule->kind != RK_SYSTEM && g->rule->kind != RK_PATH_DIR)) return false;
    const rrule_t *best = NULL;
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *o = &r->grants.v[i];
        if (o == g || o->base != PB_ROOT || !path_is_under(g->path, o->path) || strcmp(g->path, o->path) == 0) continue;
        if (!best || o->depth > best->depth) best = o;
    }
    return best && best->level == g->level;
}

/* A deny of an absolute literal path, again as a regex in any case, written
 * before the deny itself: on a case-insensitive volume ~/.SSH is ~/.ssh, and
 * a grant above it would otherwise let the other spelling through. The
 * exact-case subpath after it decides (and explain shows) the path as
 * written; a deeper grant after both re-opens only its own spelling. */
static void emit_deny_any_case(gen_t *g, const char *guard, unsigned ops, const rrule_t *gr)
{
    if (gr->base != PB_ROOT || !strpbrk(gr->path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")) return;
    emit_if(g, guard, false, ops, SBF_REGEX, PB_ROOT, sbpl_glob_regex(glob_escape(gr->path, &g->s->arena), true, &g->s->arena),
            gr);
}

/* The session roots are parameters, so where they sit among the absolute
 * rules is only known when the profile runs. An absolute grant inside the
 * workspace (deny_read ~/project/secrets with the workspace at ~/project) is
 * deeper than the workspace and must come after its rule: each one is
 * emitted again after the session grants, guarded by drun-under? so it
 * applies only when it really is inside that root. */
static void emit_inside_sessions(gen_t *g)
{
    const resolved_t *r = g->r;
    bool header = false;
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *gr = &r->grants.v[i];
        if (gr->base != PB_ROOT || gr->rule->kind == RK_SYSTEM || gr->rule->kind == RK_PATH_DIR) continue;
        if (!header) {
            section(g, "absolute grants inside the workspace or scratch dir, if they hold any, are deeper "
                       "than them: again, after them");
            header = true;
        }
        const char *p = gr->path;
        switch (gr->level) {
        case LVL_WRITE: emit_if(g, p, true, SB_READ | SB_WRITE, SBF_SUBPATH, PB_ROOT, p, gr); break;
        case LVL_READ:
            emit_if(g, p, true, SB_READ, SBF_SUBPATH, PB_ROOT, p, gr);
            emit_deny_any_case(g, p, SB_WRITE, gr);
            emit_if(g, p, false, SB_WRITE, SBF_SUBPATH, PB_ROOT, p, gr);
            break;
        case LVL_NONE:
            emit_deny_any_case(g, p, SB_READ | SB_WRITE, gr);
            emit_if(g, p, false, SB_READ | SB_WRITE, SBF_SUBPATH, PB_ROOT, p, gr);
            break;
        }
    }
}

static void emit_grants(gen_t *g)
{
    const resolved_t *r = g->r;
    strmap_t writes = STRMAP_INIT;
    for (size_t i = 0; i < r->grants.n; i++)
        if (r->grants.v[i].base == PB_ROOT && r->grants.v[i].level == LVL_WRITE)
            strmap_put(&writes, r->grants.v[i].path, 1);
    section(g, "grants, shallow to deep: the deepest grant on a path decides (last match wins)");
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *gr = &r->grants.v[i];
        if (redundant_builtin(r, gr)) continue;
        switch (gr->level) {
        case LVL_WRITE:
            emit(g, true, SB_READ | SB_WRITE, SBF_SUBPATH, gr->base, gr->path, gr);
            break;
        case LVL_READ:
            emit(g, true, SB_READ, SBF_SUBPATH, gr->base, gr->path, gr);
            if (parent_may_write(&writes, gr, &g->s->arena)) {
                emit_deny_any_case(g, NULL, SB_WRITE, gr);
                emit(g, false, SB_WRITE, SBF_SUBPATH, gr->base, gr->path, gr);
            }
            break;
        case LVL_NONE:
            emit_deny_any_case(g, NULL, SB_READ | SB_WRITE, gr);
            emit(g, false, SB_READ | SB_WRITE, SBF_SUBPATH, gr->base, gr->path, gr);
            break;
        }
    }
    strmap_free(&writes);
    emit_inside_sessions(g);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds p and, with ancestors, every directory above it to the set. */
static void add_lookup(gen_t *g, strmap_t *have, void *anc_v, const char *path, bool self)
{
    VEC(const char *) *anc = anc_v;
    char *p = arena_strdup(&g->s->arena, path);
    if (self && strcmp(p, "/") != 0 && strmap_put(have, p, 1) < 0) vec_push(anc, (const char *)p);
    p = arena_strdup(&g->s->arena, path);
    for (char *slash = strrchr(p, '/'); slash; slash = strrchr(p, '/')) {
        *slash = '\0';
        const char *a = *p ? arena_strdup(&g->s->arena, p) : "/";
        if (strmap_put(have, a, 1) < 0) vec_push(anc, a);
        if (!*p) break;
    }
}

/* Ancestors of readable grants get metadata access (literal), so the path
 * can be reached and stat()ed; one rule per ancestor, sorted. A rule path
 * that reaches its object through a symlink (~/src -> code/src, /tmp ->
 * /private/tmp) is followed by the kernel, which reads the link and looks
 * up every directory above it: the path as written and its ancestors get
 * metadata too (readlink is file-read-metadata). The session roots sit
 * where the parameters say: their ancestors are (path-ancestors (param
 * ...)), so realpath, canonicalize and `cd /abs/ws` can walk down to them. */
static void emit_ancestor_metadata(gen_t *g)
{
    const resolved_t *r = g->r;
    VEC(const char *) anc = {0};
    strmap_t have = STRMAP_INIT;
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *gr = &r->grants.v[i];
        if (gr->base != PB_ROOT || gr->level == LVL_NONE) continue;
        add_lookup(g, &have, &anc, gr->path, false);
        if (gr->lexical && strcmp(gr->lexical, gr->path) != 0) add_lookup(g, &have, &anc, gr->lexical, true);
    }
    if (anc.n) qsort(anc.v, anc.n, sizeof *anc.v, cmp_str);
    section(g, "ancestors of granted paths, and the links on the way to them, can be looked up (metadata only)");
    add_text(g, "(allow file-read-metadata (path-ancestors (param \"WORKSPACE\")) (path-ancestors (param \"SCRATCH\")))\n");
    for (size_t i = 0; i < anc.n; i++) emit(g, true, SB_META, SBF_LITERAL, PB_ROOT, anc.v[i], NULL);
    vec_free(&anc);
    strmap_free(&have);
}

/* The data volume's second spelling: every file of /Users, /Applications,
 * /opt, /private... is also /System/Volumes/Data/<path>, and /System is in
 * the system read set. Whatever a cap or a missing grant hides under its
 * usual name must not be readable under that one: the whole spelling is
 * closed (metadata of the mount point stays, for df and realpath). */
static void emit_data_volume(gen_t *g)
{
    section(g, "the data volume under its firmlink-free name (/System/Volumes/Data/Users/...): closed, so no "
               "denied path opens under a second spelling");
    emit(g, false, SB_READ | SB_WRITE, SBF_SUBPATH, PB_ROOT, "/System/Volumes/Data", NULL);
    emit(g, true, SB_META, SBF_LITERAL, PB_ROOT, "/System/Volumes/Data", NULL);
}

/* Sandboxed commands have no network (fetch goes through the runtime, which
 * checks the allowlist). [network] allow_unix_sockets is Linux's socket(AF_UNIX)
 * switch; here it is the same three operations: the socket, bind and connect
 * (the files a socket is bound to are still the file rules' to allow). */
static void emit_network(gen_t *g)
{
    const policy_t *p = g->r->pol;
    if (!p->command_domains.n) {
        section(g, "network: none for sandboxed commands (fetch goes through the runtime, which checks the allowlist)");
    } else {
        /* SPEC §15: the hosts of [network] command_domains only through the
         * runner's allowlisting proxy, which listens on this host's loopback
         * at the port it passes as -D PROXY_PORT=N (and sets HTTP_PROXY,
         * HTTPS_PROXY, ALL_PROXY, NO_PROXY to it): outbound TCP to that port
         * of localhost and nowhere else. */
        section(g, "network: only the runner's proxy for [network] command_domains (sandbox-exec -D PROXY_PORT=N, "
                   "with HTTP_PROXY/HTTPS_PROXY=http://127.0.0.1:N)");
        add_text(g, "(allow network-outbound (remote tcp (string-append \"localhost:\" (param \"PROXY_PORT\"))))\n");
    }
    if (!policy_get(p, S_ALLOW_UNIX_SOCKETS)) return;
    add_text(g, ";; [network] allow_unix_sockets = true: AF_UNIX sockets, bound and connected at any path\n"
                "(allow system-socket (socket-domain AF_UNIX))\n"
                "(allow network-bind (local unix-socket (path-regex #\"^/\")))\n"
                "(allow network-outbound (remote unix-socket (path-regex #\"^/\")))\n");
}

static bool seen(gen_t *g, const char *key) { return strmap_put(&g->seen_unlink, key, 1) >= 0; }

/* Denies renaming or deleting the ancestors of a lowered path, so it cannot
 * be moved out of the rule's reach, changed, and moved back. Ancestors that
 * end in "**" are skipped: they are every directory, and a rename below a
 * wildcard keeps the path matching the same pattern anyway. */
static void emit_unlink_ancestors(gen_t *g, const rrule_t *c)
{
    arena_t *a = &g->s->arena;
    const char *path = c->path;
    VEC(size_t) cuts = {0};                             /* prefix lengths of the ancestors */
    if (c->base != PB_ROOT) vec_push(&cuts, (size_t)0); /* the session root itself */
    for (size_t i = 1; path[i - 1] && path[i]; i++)
        if (path[i] == '/') vec_push(&cuts, i);
    for (size_t k = 0; k < cuts.n; k++) {
        const char *prefix = arena_strndup(a, path, cuts.v[k]);
        const char *last = strrchr(prefix, '/');
        if (strcmp(last ? last + 1 : prefix, "**") == 0) continue;
        bool wild = c->glob && glob_has_wildcard(prefix);
        const char *arg = wild ? sbpl_glob_regex(prefix, false, a) : (c->glob ? glob_unescape(prefix, a) : prefix);
        buf_t key = BUF_INIT;
        buf_addc(&key, (char)('0' + c->base));
        buf_addc(&key, wild ? 'r' : 'l');
        buf_adds(&key, arg);
        bool dup = seen(g, arena_strdup(a, buf_cstr(&key)));
        buf_free(&key);
        if (!dup) emit(g, false, SB_UNLINK, wild ? SBF_REGEX : SBF_LITERAL, c->base, arg, c);
    }
    vec_free(&cuts);
}

/* One cap's deny: a glob as its regex; a literal as a regex in any case,
 * where the volume ignores case, then as the subpath it is (which decides,
 * and explain names, for the path as written; a session-relative
 * path has a parameter in it: no regex can spell that, and a fresh session
 * dir holds nothing of the host's). */
static void emit_cap(gen_t *g, const rrule_t *c)
{
    unsigned ops = c->level == LVL_NONE ? SB_READ | SB_WRITE : SB_WRITE;
    if (c->glob) {
        emit(g, false, ops, SBF_REGEX, PB_ROOT, sbpl_glob_regex(c->path, true, &g->s->arena), c);
        return;
    }
    emit_deny_any_case(g, NULL, ops, c);
    emit(g, false, ops, SBF_SUBPATH, c->base, c->path, c);
}

/* A session root inside a runtime-owned dir (drun-mcp's STATE/sessions/ID,
 * explain's scratch dir under the state dir) stays its session's: its own
 * grants again, after the dark cap, when the parameter lies below it. The
 * other caps come after these, so they still hold inside. */
static void emit_dark_exemptions(gen_t *g, const rrule_t *dark)
{
    const resolved_t *r = g->r;
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *gr = &r->grants.v[i];
        if (gr->base == PB_ROOT) continue;
        switch (gr->level) {
        case LVL_WRITE:
            emit_guarded(g, NULL, dark->path, true, SB_READ | SB_WRITE, SBF_SUBPATH, gr->base, gr->path, gr);
            break;
        case LVL_READ:
            emit_guarded(g, NULL, dark->path, true, SB_READ, SBF_SUBPATH, gr->base, gr->path, gr);
            emit_guarded(g, NULL, dark->path, false, SB_WRITE, SBF_SUBPATH, gr->base, gr->path, gr);
            break;
        case LVL_NONE:
            emit_guarded(g, NULL, dark->path, false, SB_READ | SB_WRITE, SBF_SUBPATH, gr->base, gr->path, gr);
            break;
        }
    }
}

static void emit_caps(gen_t *g)
{
    const resolved_t *r = g->r;
    if (!r->caps.n) return;
    bool owned = false;
    for (size_t i = 0; i < r->caps.n; i++) owned |= r->caps.v[i].rule->kind == RK_RUNTIME;
    if (owned) {
        section(g, "runtime-owned paths (SPEC §13): dark whatever the grants; a session dir inside one stays its "
                   "session's");
        for (size_t i = 0; i < r->caps.n; i++)
            if (r->caps.v[i].rule->kind == RK_RUNTIME) emit_cap(g, &r->caps.v[i]);
        for (size_t i = 0; i < r->caps.n; i++)
            if (r->caps.v[i].rule->kind == RK_RUNTIME && r->caps.v[i].base == PB_ROOT)
                emit_dark_exemptions(g, &r->caps.v[i]);
    }
    section(g, "caps: deny_read globs, deny_write and [protect], each letter in either case (APFS ignores case); "
               "nothing below can raise them");
    for (size_t i = 0; i < r->caps.n; i++)
        if (r->caps.v[i].rule->kind != RK_RUNTIME) emit_cap(g, &r->caps.v[i]);
    section(g, "lowered paths cannot be moved away and back: no unlink of them or their ancestors");
    for (size_t i = 0; i < r->caps.n; i++) emit_unlink_ancestors(g, &r->caps.v[i]);
    for (size_t i = 0; i < r->grants.n; i++)
        if (r->grants.v[i].level == LVL_NONE) emit_unlink_ancestors(g, &r->grants.v[i]);
}

/* A regex rule's compiled form, kept from one sbpl_eval to the next: glibc's
 * regcomp builds its tables anew each time, and compiling every regex rule
 * again for every path was most of what explain --queries and the probe
 * helpers spent (twenty times more under the sanitizers). Keyed by the
 * pattern text, which for a session-relative rule depends on the roots. */
typedef struct sbpl_re {
    char *pattern; /* NULL: nothing compiled yet */
    bool ok;       /* regcomp accepted it */
    regex_t re;
} sbpl_re_t;

struct sbpl_re_cache {
    size_t n;
    sbpl_re_t *v;
};

static void sbpl_re_cache_free(struct sbpl_re_cache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        if (c->v[i].pattern && c->v[i].ok) regfree(&c->v[i].re);
        free(c->v[i].pattern);
    }
    free(c->v);
    free(c);
}

static sbpl_t *sbpl_generate(const resolved_t *r, diag_list_t *diags)
{
    sbpl_t *s = xcalloc(1, sizeof *s);
    /* Room for what a rule usually becomes (some 350 bytes of profile, three
     * rules), reserved once: a large block is mapped fresh and only the part
     * written is ever touched, where growing by doubling copied the profile
     * and faulted in every page twice (a quarter of a 10,000-rule compile). */
    size_t n = r->grants.n + r->caps.n;
    buf_reserve(&s->text, 16384 + n * 512);
    vec_grow(&s->rules, 64 + n * 4);
    gen_t g = {s, r, diags, false, STRMAP_INIT, 0};
    buf_t head = BUF_INIT;
    buf_printf(&head,
               ";; SBPL profile generated by drun-policy %s for macOS sandbox-exec. Do not edit:\n"
               ";; change the policy and recompile. Run it as\n"
               ";;   sandbox-exec -f policy.sb -D WORKSPACE=/abs/workspace -D SCRATCH=/abs/scratch CMD...\n",
               DRUN_VERSION);
    add_text(&g, buf_cstr(&head));
    buf_free(&head);
    add_text(&g, base_profile);
    emit_network(&g);
    emit_grants(&g);
    emit_ancestor_metadata(&g);
    emit_data_volume(&g);
    emit_caps(&g);
    strmap_free(&g.seen_unlink);
    if (g.failed) {
        sbpl_free(s);
        return NULL;
    }
    /* one slot per rule, now that the rules are all there */
    s->re_cache = xcalloc(1, sizeof *s->re_cache);
    s->re_cache->n = s->rules.n;
    s->re_cache->v = xcalloc(s->rules.n ? s->rules.n : 1, sizeof *s->re_cache->v);
    return s;
}

bool sbpl_build(const resolved_t *r, const facts_t *f, diag_list_t *diags, sbpl_t **out)
{
    (void)f; /* r was resolved with f: the profile reads the facts through r */
    *out = sbpl_generate(r, diags);
    return *out != NULL;
}

void sbpl_free(sbpl_t *s)
{
    if (!s) return;
    sbpl_re_cache_free(s->re_cache);
    vec_free(&s->rules);
    buf_free(&s->text);
    arena_free(&s->arena);
    free(s);
}

/* ---- evaluation ---------------------------------------------------------------------------- */

/* Does path match the regex pattern of rule i? Compiled once per pattern
 * (a rule's pattern changes only with the roots it is relative to). */
static bool sbpl_re_matches(struct sbpl_re_cache *c, size_t i, const char *pattern, const char *path)
{
    sbpl_re_t *e = &c->v[i];
    if (!e->pattern || strcmp(e->pattern, pattern) != 0) {
        if (e->pattern && e->ok) regfree(&e->re);
        free(e->pattern);
        e->pattern = xstrdup(pattern);
        e->ok = regcomp(&e->re, pattern, REG_EXTENDED | REG_NOSUB) == 0;
    }
    return e->ok && regexec(&e->re, path, 0, NULL, 0) == 0;
}

static bool filter_matches(const sbpl_t *s, size_t i, const roots_t *roots, const char *path, arena_t *tmp)
{
    const sbpl_rule_t *r = &s->rules.v[i];
    const char *arg = r->arg;
    if (r->base != PB_ROOT) {
        const char *root = r->base == PB_WORKSPACE ? roots->workspace : roots->scratch;
        if (!root) return false;
        arg = path_join(root, r->arg, tmp);
    }
    switch (r->filter) {
    case SBF_SUBPATH: return path_is_under(path, arg);
    case SBF_LITERAL: return strcmp(path, arg) == 0;
    case SBF_REGEX: return sbpl_re_matches(s->re_cache, i, arg, path);
    }
    return false;
}

level_t sbpl_eval(const sbpl_t *s, const roots_t *roots, const char *path, const sbpl_rule_t **read_by,
                  const sbpl_rule_t **write_by)
{
    arena_t tmp = ARENA_INIT;
    const sbpl_rule_t *rd = NULL, *wr = NULL;
    for (size_t i = 0; i < s->rules.n; i++) {
        const sbpl_rule_t *r = &s->rules.v[i];
        if (!(r->ops & (SB_READ | SB_WRITE))) continue; /* metadata/unlink only: not a level */
        if (r->guard && !((roots->workspace && path_is_under(r->guard, roots->workspace)) ||
                          (roots->scratch && path_is_under(r->guard, roots->scratch))))
            continue;
        if (r->dark) {
            const char *root = r->base == PB_WORKSPACE ? roots->workspace : roots->scratch;
            if (!root || !path_is_under(root, r->dark)) continue;
        }
        if (!filter_matches(s, i, roots, path, &tmp)) continue;
        if (r->ops & SB_READ) rd = r;
        if (r->ops & SB_WRITE) wr = r;
    }
    arena_free(&tmp);
    if (read_by) *read_by = rd;
    if (write_by) *write_by = wr;
    bool can_read = rd && rd->allow, can_write = wr && wr->allow;
    return can_write && can_read ? LVL_WRITE : (can_read ? LVL_READ : LVL_NONE);
}
