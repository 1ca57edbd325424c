/* bwrap_eval.c — what the mount namespace a bwrap vector builds exposes at
 * a path: its ops replayed as mounts (a later mount hides what is below its
 * destination, --remount-ro flips one), the sandbox's own symlinks followed.
 * Explain and the tests ask it beside the lattice and the SBPL evaluator.
 */
#include "bwrap.h"

#include <stdlib.h>
#include <string.h>

#include "path.h"

typedef enum {
    MK_BIND,
    MK_TMPFS,
    MK_DEVNULL,
    MK_EMPTYFILE,
    MK_DEV,
    MK_PROC
} mkind_t;

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
        char *dest = bwrap_word_value(dw, roots, NULL);
        const char *d = arena_strdup(&a, dest);
        free(dest);
        if (strcmp(o, "--symlink") == 0) {
            link_t l = {d, op->a.s};
            vec_push(&links, l);
            continue;
        }
        if (strcmp(o, "--remount-ro") == 0) {
            for (size_t k = m.n; k-- > 0;)
                if (strcmp(m.v[k].dest, d) == 0) {
                    m.v[k].ro = true;
                    break;
                }
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
        case MK_TMPFS:
            priv = !best->ro;
            lv = LVL_NONE;
            break;
        case MK_DEV:
        case MK_PROC: priv = true; break;
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
