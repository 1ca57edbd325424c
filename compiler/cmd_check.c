/* cmd_check.c — `drun-policy check [CONFIG] --golden DIR`: recompile CONFIG
 * with the facts DIR/policy.json recorded and print a unified diff of every
 * artifact that differs from the one committed in DIR. What a CI job runs
 * on every policy change: the reviewed artifacts must be exactly what this
 * compiler makes of the reviewed config.
 * Exit: 0 identical; 1 drift or a missing artifact (or a config error);
 * 2 usage or I/O error (no DIR/policy.json, no facts in it). */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "compile.h"
#include "diff.h"
#include "jsonr.h"

/* The recorded facts and source mtime of a manifest. */
typedef struct recorded {
    char *facts[2]; /* by target_t: the facts object as JSON text, or NULL */
    char *mtime;    /* source.mtime ("1970-01-01T00:00:00Z"), or NULL */
    char *sha[5];   /* recorded artifact hashes, by artifact index below */
} recorded_t;

static const char *const artifact_names[] = {"policy.sb", "bwrap.args", "seccomp.txt", "policy.json", "seccomp.bpf"};

static bool read_manifest(const char *dir, recorded_t *r, char **err)
{
    char *path = xasprintf("%s/policy.json", dir);
    buf_t b = BUF_INIT;
    bool ok = read_file(path, &b, err);
    json_error_t je;
    json_t *root = ok ? jsonr_load(b.p, b.len, &je) : NULL;
    if (ok && !json_is_object(root)) {
        char *why = root ? xstrdup("not a JSON object")
                         : xasprintf("not valid JSON at line %d, column %d (%s)", je.line, je.column, je.text);
        *err = xasprintf("%s: %s: it was not written by drun-policy compile (rewrite DIR with "
                         "'drun-policy compile CONFIG -o DIR')", path, why);
        free(why);
        ok = false;
    }
    if (ok) {
        const json_t *facts = json_object_get(root, "facts");
        static const char *const tn[2] = {"linux", "macos"};
        for (int t = 0; t < 2; t++) {
            const json_t *f = json_object_get(facts, tn[t]);
            if (json_is_object(f)) r->facts[t] = json_dumps(f, JSON_COMPACT);
        }
        const char *m = json_string_value(json_object_get(json_object_get(root, "source"), "mtime"));
        if (m) r->mtime = xstrdup(m);
        const json_t *arts = json_object_get(root, "artifacts");
        for (size_t i = 0; i < 5; i++) {
            const char *h = json_string_value(json_object_get(arts, artifact_names[i]));
            if (h) r->sha[i] = xstrdup(h);
        }
        if (!r->facts[0] && !r->facts[1]) {
            *err = xasprintf("%s records no facts: it was not written by drun-policy compile", path);
            ok = false;
        }
    }
    json_decref(root);
    buf_free(&b);
    free(path);
    return ok;
}

static void recorded_free(recorded_t *r)
{
    for (int t = 0; t < 2; t++) free(r->facts[t]);
    for (int i = 0; i < 5; i++) free(r->sha[i]);
    free(r->mtime);
}

/* The manifest's only clock reading is the source mtime (SOURCE_DATE_EPOCH
 * when set). A fresh checkout gives the file a new mtime, which is not
 * drift: recompile with the recorded one. */
static void reuse_mtime(const char *mtime)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (!mtime || !strptime(mtime, "%Y-%m-%dT%H:%M:%SZ", &tm)) return;
    char s[32];
    snprintf(s, sizeof s, "%lld", (long long)timegm(&tm));
    setenv("SOURCE_DATE_EPOCH", s, 1);
}

/* Compares one recompiled artifact with DIR/name; prints the diff. */
static bool same_artifact(const char *dir, const char *name, const buf_t *now, buf_t *out)
{
    char *path = xasprintf("%s/%s", dir, name);
    buf_t old = BUF_INIT;
    char *err = NULL;
    bool same = true;
    if (access(path, F_OK) != 0) {
        buf_printf(out, "%s: missing; the compiler makes it from the config\n", path);
        same = false;
    } else if (!read_file(path, &old, &err)) {
        buf_printf(out, "%s\n", err);
        free(err);
        same = false;
    } else {
        char *recompiled = xasprintf("%s (recompiled)", name);
        same = !unified_diff(path, old.p ? old.p : "", old.len, recompiled, now->p ? now->p : "", now->len, out);
        free(recompiled);
    }
    buf_free(&old);
    free(path);
    return same;
}

/* seccomp.bpf is binary: compared by bytes when committed, else by the
 * sha256 the manifest recorded (golden directories keep only its text). */
static bool same_bpf(const char *dir, const buf_t *now, const char *recorded_sha, buf_t *out)
{
    char *path = xasprintf("%s/seccomp.bpf", dir);
    char hex[65];
    sha256_hex(now->p ? now->p : "", now->len, hex);
    bool same;
    if (access(path, F_OK) == 0) {
        buf_t old = BUF_INIT;
        char *err = NULL;
        same = read_file(path, &old, &err) && old.len == now->len && (!old.len || memcmp(old.p, now->p, old.len) == 0);
        if (!same) buf_printf(out, "Binary files %s and seccomp.bpf (recompiled) differ%s%s\n", path, err ? ": " : "",
                              err ? err : "");
        free(err);
        buf_free(&old);
    } else {
        same = recorded_sha && strcmp(recorded_sha, hex) == 0;
        if (!same) buf_printf(out, "%s/policy.json: seccomp.bpf sha256 %s, recompiled %s\n", dir,
                              recorded_sha ? recorded_sha : "(none)", hex);
    }
    free(path);
    return same;
}

int cmd_check_golden(const cli_args_t *a)
{
    if (!a->golden) {
        fprintf(stderr, "drun-policy check: --golden DIR is required: the directory 'drun-policy compile "
                        "CONFIG -o DIR' wrote\n");
        return EXIT_USAGE;
    }
    recorded_t rec = {0};
    char *err = NULL;
    if (!read_manifest(a->golden, &rec, &err)) {
        fprintf(stderr, "drun-policy check: %s\n", err);
        if (strstr(err, "No such file"))
            fprintf(stderr, "--golden DIR is the directory 'drun-policy compile CONFIG -o DIR' wrote\n");
        free(err);
        recorded_free(&rec);
        return EXIT_USAGE;
    }
    reuse_mtime(rec.mtime);
    int rc = EXIT_OK;
    policy_t *p = cli_load_policy("check", a->pos[0], &rc);
    if (!p) {
        recorded_free(&rec);
        return rc;
    }
    const char *facts[2] = {rec.facts[TARGET_LINUX], rec.facts[TARGET_MACOS]};
    diag_list_t d = {0};
    compiled_t *c = compile_policy_facts_json(p, facts, &d, &err);
    if (!c) {
        buf_t b = BUF_INIT;
        diag_render_all(&b, &d, diag_want_color(stderr));
        fprintf(stderr, "%sdrun-policy check: %s\n", buf_cstr(&b), err ? err : "the policy does not compile");
        buf_free(&b);
        free(err);
        rc = diag_count(&d, SEV_ERROR) ? EXIT_REJECTED : EXIT_USAGE;
    } else {
        buf_t out = BUF_INIT;
        size_t drifted = 0;
        const buf_t *now[4] = {c->sbpl ? &c->sbpl->text : NULL, c->bwrap ? &c->bwrap_args : NULL,
                               c->bwrap ? &c->seccomp_txt : NULL, &c->manifest};
        for (size_t i = 0; i < 4; i++)
            if (now[i] && !same_artifact(a->golden, artifact_names[i], now[i], &out)) drifted++;
        if (c->bwrap && !same_bpf(a->golden, &c->seccomp, rec.sha[4], &out)) drifted++;
        fwrite(out.p ? out.p : "", 1, out.len, stdout);
        if (drifted) {
            printf("drun-policy check: %zu artifact%s in %s drifted from %s; recompile them (drun-policy compile "
                   "CONFIG -o %s) and commit them with the change that explains it\n",
                   drifted, drifted == 1 ? "" : "s", a->golden, p->path ? p->path : "the policy", a->golden);
            rc = EXIT_REJECTED;
        } else {
            printf("drun-policy check: %s matches what %s compiles to\n", a->golden, p->path ? p->path : "the policy");
        }
        buf_free(&out);
    }
    diag_list_free(&d);
    compiled_free(c);
    policy_free(p);
    recorded_free(&rec);
    return rc;
}
