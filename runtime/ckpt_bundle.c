/* ckpt_bundle.c — snapshots: a session's checkpoints as one git bundle (v2).
 *
 *   # v2 git bundle
 *   <head commit> HEAD
 *   <head commit> refs/heads/main
 *   <meta blob> refs/drun/meta
 *   <blank line>
 *   <packfile: every object reachable from the head, and the meta blob>
 *
 * `git clone snapshot.bundle` gives the checkpoints as commits. The meta
 * blob holds what commits cannot: the session label, each checkpoint's id,
 * label, tool, time and summary (fields tab-separated, %-escaped).
 */
#include "ckpt_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUNDLE_SIG "# v2 git bundle\n"
#define META_SIG "drun-snapshot 1\n"
#define BUNDLE_MAX (4ULL << 30) /* largest snapshot read back */

/* ---- field escaping ---------------------------------------------------------------------- */

static void esc(buf_t *b, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == '%' || ch == 0x7f)
            buf_printf(b, "%%%02X", ch);
        else
            buf_addc(b, (char)ch);
    }
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : (c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1);
}

static char *unesc(const char *s, size_t n)
{
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            char ch = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            buf_addc(&b, ch ? ch : ' ');
            i += 2;
        } else {
            buf_addc(&b, s[i]);
        }
    }
    return buf_detach(&b, NULL);
}

/* ---- writing ------------------------------------------------------------------------------ */

static int pack_out(void *data, size_t size, void *payload)
{
    buf_add(payload, data, size);
    return 0;
}

bool ckpt_bundle_write(ckpt_t *c, int fd, const char *session_label, char **err)
{
    pthread_mutex_lock(&c->mu);
    bool ok = false;
    git_packbuilder *pb = NULL;
    git_revwalk *walk = NULL;
    buf_t meta = BUF_INIT, pack = BUF_INIT, head = BUF_INIT;
    if (!c->hist.n) {
        *err = xstrdup("the session has no checkpoint to snapshot");
        goto out;
    }
    buf_adds(&meta, META_SIG "session-label\t");
    esc(&meta, session_label ? session_label : "");
    buf_printf(&meta, "\nlast-id\t%lld\n", (long long)c->last_id);
    for (size_t i = 0; i < c->hist.n; i++) {
        const ckpt_info_t *in = &c->hist.v[i].info;
        buf_printf(&meta, "cp\t%lld\t%s\t%lld\t", (long long)in->id, in->commit,
                   (long long)in->time_ms);
        esc(&meta, in->label ? in->label : "");
        buf_addc(&meta, '\t');
        esc(&meta, in->tool);
        buf_addc(&meta, '\t');
        esc(&meta, in->summary);
        buf_addc(&meta, '\n');
    }
    git_oid meta_oid;
    const git_oid *tip = &c->hist.v[c->hist.n - 1].commit;
    if (git_odb_write(&meta_oid, c->odb, meta.p, meta.len, GIT_OBJECT_BLOB) < 0 ||
        git_packbuilder_new(&pb, c->repo) < 0 || git_revwalk_new(&walk, c->repo) < 0 ||
        git_revwalk_push(walk, tip) < 0 || git_packbuilder_insert_walk(pb, walk) < 0 ||
        git_packbuilder_insert(pb, &meta_oid, NULL) < 0 ||
        git_packbuilder_foreach(pb, pack_out, &pack) < 0) {
        *err = ckpt_git_error("cannot pack the checkpoints");
        goto out;
    }
    char hex[GIT_OID_HEXSZ + 1];
    buf_adds(&head, BUNDLE_SIG);
    buf_printf(&head, "%s HEAD\n", git_oid_tostr(hex, sizeof hex, tip));
    buf_printf(&head, "%s refs/heads/main\n", hex);
    buf_printf(&head, "%s refs/drun/meta\n\n", git_oid_tostr(hex, sizeof hex, &meta_oid));
    if (!fsutil_write_all(fd, head.p, head.len) || !fsutil_write_all(fd, pack.p, pack.len)) {
        *err = xasprintf("cannot write the snapshot: %s", strerror(errno));
        goto out;
    }
    ok = true;
out:
    git_revwalk_free(walk);
    git_packbuilder_free(pb);
    buf_free(&meta);
    buf_free(&pack);
    buf_free(&head);
    pthread_mutex_unlock(&c->mu);
    return ok;
}

/* ---- reading ------------------------------------------------------------------------------ */

static bool read_fd(int fd, buf_t *b, char **err)
{
    for (;;) {
        buf_reserve(b, 1 << 16);
        ssize_t r = read(fd, b->p + b->len, 1 << 16);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            *err = xasprintf("cannot read the snapshot: %s", strerror(errno));
            return false;
        }
        if (r == 0)
            return true;
        b->len += (size_t)r;
        if (b->len > BUNDLE_MAX) {
            *err = xstrdup("the file is larger than any snapshot drun-mcp reads (4 GiB)");
            return false;
        }
    }
}

/* Splits the bundle in b into its two refs and the pack. */
static bool parse_head(const buf_t *b, git_oid *tip, git_oid *meta, size_t *pack_at)
{
    size_t sl = strlen(BUNDLE_SIG);
    if (b->len < sl || memcmp(b->p, BUNDLE_SIG, sl))
        return false;
    bool have_tip = false, have_meta = false;
    size_t at = sl;
    for (;;) {
        const char *nl = memchr(b->p + at, '\n', b->len - at);
        if (!nl)
            return false;
        size_t len = (size_t)(nl - (b->p + at));
        if (len == 0) {
            *pack_at = at + 1;
            break;
        }
        const char *line = b->p + at;
        if (len > GIT_OID_HEXSZ + 1 && line[GIT_OID_HEXSZ] == ' ') {
            git_oid o;
            if (git_oid_fromstrn(&o, line, GIT_OID_HEXSZ) < 0)
                return false;
            const char *ref = line + GIT_OID_HEXSZ + 1;
            size_t rl = len - GIT_OID_HEXSZ - 1;
            if (rl == 15 && !memcmp(ref, "refs/heads/main", 15)) {
                *tip = o;
                have_tip = true;
            } else if (rl == 4 && !memcmp(ref, "HEAD", 4)) {
                /* the same commit, for `git clone` */
            } else if (rl == 14 && !memcmp(ref, "refs/drun/meta", 14)) {
                *meta = o;
                have_meta = true;
            }
        } else {
            return false; /* prerequisites ("-oid") or junk: not ours */
        }
        at += len + 1;
    }
    return have_tip && have_meta && b->len - *pack_at >= 12 && !memcmp(b->p + *pack_at, "PACK", 4);
}

static bool load_pack(ckpt_t *c, const char *p, size_t n)
{
    git_odb_writepack *wp = NULL;
    git_indexer_progress stats = {0};
    bool ok = git_odb_write_pack(&wp, c->odb, NULL, NULL) == 0 &&
              wp->append(wp, p, n, &stats) == 0 && wp->commit(wp, &stats) == 0;
    if (wp)
        wp->free(wp);
    return ok;
}

/* Tab-separated fields of one meta line. */
static size_t fields(char *line, char **f, size_t max)
{
    size_t n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

/* The history described by the meta blob. false when it is not ours. */
static bool parse_meta(ckpt_t *c, const char *text, size_t len, char **session_label)
{
    size_t sl = strlen(META_SIG);
    if (len < sl || memcmp(text, META_SIG, sl))
        return false;
    char *copy = xstrndup(text + sl, len - sl);
    bool ok = true;
    for (char *line = copy, *next; ok && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *f[8];
        size_t n = fields(line, f, 8);
        if (n == 2 && !strcmp(f[0], "session-label")) {
            free(*session_label);
            *session_label = unesc(f[1], strlen(f[1]));
        } else if (n == 2 && !strcmp(f[0], "last-id")) {
            c->last_id = strtoll(f[1], NULL, 10);
        } else if (n == 7 && !strcmp(f[0], "cp")) {
            ckpt_hist_t h = {0};
            h.info.id = strtoll(f[1], NULL, 10);
            git_commit *cm = NULL;
            ok = git_oid_fromstrn(&h.commit, f[2], GIT_OID_HEXSZ) == 0 && strlen(f[2]) == 40 &&
                 git_commit_lookup(&cm, c->repo, &h.commit) == 0 && h.info.id > 0 &&
                 (!c->hist.n || c->hist.v[c->hist.n - 1].info.id < h.info.id);
            if (!ok)
                break;
            git_oid_cpy(&h.tree, git_commit_tree_id(cm));
            const git_oid *parent = git_commit_parentcount(cm) ? git_commit_parent_id(cm, 0) : NULL;
            git_commit *pc = NULL;
            const git_oid *ptree = NULL;
            if (parent && git_commit_lookup(&pc, c->repo, parent) == 0)
                ptree = git_commit_tree_id(pc);
            ckpt_tree_changes(c, ptree, &h.tree, &h.info.added, &h.info.modified,
                              &h.info.deleted);
            git_commit_free(pc);
            git_commit_free(cm);
            memcpy(h.info.commit, f[2], 41);
            h.info.time_ms = strtoll(f[3], NULL, 10);
            h.info.label = *f[4] ? unesc(f[4], strlen(f[4])) : NULL;
            h.info.tool = unesc(f[5], strlen(f[5]));
            h.info.summary = unesc(f[6], strlen(f[6]));
            if (h.info.label && !ckpt_label_valid(h.info.label)) {
                free(h.info.label);
                h.info.label = NULL;
            }
            vec_push(&c->hist, h);
        }
    }
    free(copy);
    if (c->last_id < (c->hist.n ? c->hist.v[c->hist.n - 1].info.id : 0))
        c->last_id = c->hist.v[c->hist.n - 1].info.id;
    return ok && c->hist.n;
}

ckpt_t *ckpt_bundle_read(int fd, int objects_fd, const char *objects_path, const char *family,
                         int ws_fd, const ckpt_owner_t *own, char **session_label, char **err)
{
    buf_t b = BUF_INIT;
    *session_label = NULL;
    if (!read_fd(fd, &b, err)) {
        buf_free(&b);
        return NULL;
    }
    git_oid tip, meta;
    size_t pack_at = 0;
    if (!parse_head(&b, &tip, &meta, &pack_at)) {
        buf_free(&b);
        *err = xstrdup("the file is not a drun-mcp snapshot (no git bundle with a "
                       "refs/drun/meta ref)");
        return NULL;
    }
    ckpt_t *c = ckpt_create(objects_fd, objects_path, family, err);
    if (!c) {
        buf_free(&b);
        return NULL;
    }
    git_blob *mb = NULL;
    bool ok = load_pack(c, b.p + pack_at, b.len - pack_at) &&
              git_blob_lookup(&mb, c->repo, &meta) == 0 &&
              parse_meta(c, git_blob_rawcontent(mb), (size_t)git_blob_rawsize(mb), session_label) &&
              git_oid_equal(&tip, &c->hist.v[c->hist.n - 1].commit);
    git_blob_free(mb);
    buf_free(&b);
    if (!ok) {
        *err = xstrdup("the file is not a drun-mcp snapshot, or it is damaged (its pack or "
                       "its checkpoint list does not read back)");
        free(*session_label);
        *session_label = NULL;
        ckpt_free(c);
        return NULL;
    }
    pthread_mutex_lock(&c->mu);
    int rc = ckpt_checkout_locked(c, &c->hist.v[c->hist.n - 1].tree, ws_fd, own, err);
    pthread_mutex_unlock(&c->mu);
    if (rc < 0) {
        free(*session_label);
        *session_label = NULL;
        ckpt_free(c);
        return NULL;
    }
    return c;
}
