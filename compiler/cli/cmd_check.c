/* cmd_check.c — `drun-policy check [CONFIG] --golden DIR`: recompile CONFIG
 * with the facts DIR/policy.json recorded and print a unified diff of every
 * artifact that differs from the one committed in DIR. What a CI job runs
 * on every policy change: the reviewed artifacts must be exactly what this
 * compiler makes of the reviewed config.
 * Exit: 0 identical; 1 drift or a missing artifact (or a config error);
 * 2 usage or I/O error (no DIR/policy.json, no facts in it).
 * --json: one object instead of the text, each artifact with its status,
 * hashes and diff (fields documented in docs/review.md, kept stable). */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "compile.h"
#include "digest.h"
#include "fsutil.h"
#include "diff.h"
#include "jsonr.h"
#include "jsonw.h"

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
    bool ok = fsutil_read_file(path, &b, err);
    json_error_t je;
    json_t *root = ok ? jsonr_load(b.p, b.len, &je) : NULL;
    if (ok && !json_is_object(root)) {
        char *why = root ? xstrdup("not a JSON object")
                         : xasprintf("not valid JSON at line %d, column %d (%s)", je.line, je.column, je.text);
        *err = xasprintf("%s: %s: it was not written by drun-policy compile (rewrite DIR with "
                         "'drun-policy compile CONFIG -o DIR')",
                         path, why);
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
    } else if (!fsutil_read_file(path, &old, &err)) {
        buf_printf(out, "%s\n", err);
        free(err);
        same = false;
    } else {
        char *recompiled = xasprintf("%s (recompiled)", name);
        same = !diff_unified(path, old.p ? old.p : "", old.len, recompiled, now->p ? now->p : "", now->len, out);
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
    digest_sha256_hex(now->p ? now->p : "", now->len, hex);
    bool same;
    if (access(path, F_OK) == 0) {
        buf_t old = BUF_INIT;
        char *err = NULL;
        same = fsutil_read_file(path, &old, &err) && old.len == now->len && (!old.len || memcmp(old.p, now->p, old.len) == 0);
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

/* What check found for one artifact: "same", "drifted" or "missing", and
 * the text the plain report prints for it (a diff, or why). */
typedef struct check_result {
    const char *name;
    const char *status;
    char now_sha[65];
    const char *recorded_sha; /* the manifest's hash, or NULL */
    buf_t text;
} check_result_t;

static void json_results(const char *dir, const char *config, const check_result_t *v, size_t n, size_t drifted)
{
    buf_t b = BUF_INIT;
    jw_t j;
    jw_init(&j, &b, true);
    jw_obj(&j);
    jw_key(&j, "golden");
    jw_str(&j, dir);
    jw_key(&j, "config");
    jw_str(&j, config);
    jw_key(&j, "ok");
    jw_bool(&j, drifted == 0);
    jw_key(&j, "drifted");
    jw_int(&j, (int64_t)drifted);
    jw_key(&j, "artifacts");
    jw_arr(&j);
    for (size_t i = 0; i < n; i++) {
        jw_obj(&j);
        jw_key(&j, "name");
        jw_str(&j, v[i].name);
        jw_key(&j, "status");
        jw_str(&j, v[i].status);
        jw_key(&j, "sha256");
        jw_str(&j, v[i].now_sha);
        jw_key(&j, "recorded_sha256");
        jw_str(&j, v[i].recorded_sha);
        jw_key(&j, "diff");
        if (v[i].text.len) jw_strn(&j, v[i].text.p, v[i].text.len);
        else jw_null(&j);
        jw_end(&j);
    }
    jw_end(&j);
    jw_end(&j);
    buf_addc(&b, '\n');
    fwrite(b.p, 1, b.len, stdout);
    buf_free(&b);
}

/* Compares every artifact c made with DIR; fills v (one per artifact) and
 * returns how many drifted. */
static size_t compare_all(const char *dir, const compiled_t *c, const recorded_t *rec, check_result_t *v, size_t *n)
{
    const buf_t *now[5] = {c->sbpl ? &c->sbpl->text : NULL, c->bwrap ? &c->bwrap_args : NULL,
                           c->bwrap ? &c->seccomp_txt : NULL, &c->manifest, c->bwrap ? &c->seccomp : NULL};
    size_t drifted = 0;
    *n = 0;
    for (size_t i = 0; i < 5; i++) {
        if (!now[i]) continue;
        check_result_t *x = &v[(*n)++];
        x->name = artifact_names[i];
        x->recorded_sha = rec->sha[i];
        digest_sha256_hex(now[i]->p ? now[i]->p : "", now[i]->len, x->now_sha);
        bool same = i == 4 ? same_bpf(dir, now[i], rec->sha[4], &x->text)
                           : same_artifact(dir, artifact_names[i], now[i], &x->text);
        char *path = xasprintf("%s/%s", dir, artifact_names[i]);
        bool missing = i == 4 ? !same && access(path, F_OK) != 0 && !rec->sha[4] : access(path, F_OK) != 0;
        free(path);
        x->status = same ? "same" : (missing ? "missing" : "drifted");
        drifted += !same;
    }
    return drifted;
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
        check_result_t v[5];
        memset(v, 0, sizeof v);
        size_t n;
        size_t drifted = compare_all(a->golden, c, &rec, v, &n);
        if (a->json) json_results(a->golden, p->is_default ? "builtin:default" : p->path, v, n, drifted);
        for (size_t i = 0; i < n && !a->json; i++) fwrite(v[i].text.p ? v[i].text.p : "", 1, v[i].text.len, stdout);
        for (size_t i = 0; i < n; i++) buf_free(&v[i].text);
        if (drifted && a->json) {
            rc = EXIT_REJECTED;
        } else if (drifted) {
            printf("drun-policy check: %zu artifact%s in %s drifted from %s; recompile them (drun-policy compile "
                   "CONFIG -o %s) and commit them with the change that explains it\n",
                   drifted, drifted == 1 ? "" : "s", a->golden, p->path ? p->path : "the policy", a->golden);
            rc = EXIT_REJECTED;
        } else if (!a->json) {
            printf("drun-policy check: %s matches what %s compiles to\n", a->golden, p->path ? p->path : "the policy");
        }
    }
    diag_list_free(&d);
    compile_free(c);
    policy_free(p);
    recorded_free(&rec);
    return rc;
}
