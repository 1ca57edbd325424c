/* facts.h — host facts: everything the pure compile needs to know about a
 * machine, gathered by a probe or read from a JSON file (SPEC §4).
 *
 * The compile never touches the filesystem: it asks the facts. Identical
 * policy + facts give byte-identical artifacts.
 */
#ifndef DRUN_FACTS_H
#define DRUN_FACTS_H

#include <stdbool.h>

#include "buf.h"

typedef enum {
    TARGET_LINUX,
    TARGET_MACOS
} target_t;

const char *facts_target_name(target_t t); /* "linux", "macos" */

typedef enum {
    PT_MISSING = 0, /* does not exist (or unknown to a facts file) */
    PT_DIR,
    PT_FILE,        /* regular file */
    PT_OTHER,       /* device, socket, fifo */
} ptype_t;

/* What the probe learnt about one absolute path of the policy. */
typedef struct path_fact {
    const char *path;     /* absolute, normalised, as the policy names it */
    ptype_t type;         /* of the resolved object */
    const char *realpath; /* symlinks resolved (for a missing path: its deepest
                             existing ancestor resolved, plus the missing rest) */
} path_fact_t;

typedef struct link_fact {
    const char *link;   /* "/bin" */
    const char *target; /* "usr/bin" (as readlink gives it) */
} link_fact_t;

typedef struct facts {
    arena_t arena;                 /* owns everything below */
    target_t target;
    const char *arch;              /* "x86_64" or "aarch64" */
    const char *home;              /* $HOME, absolute, normalised */
    VEC(const char *) path_dirs;   /* $PATH directories that exist, absolute, in order */
    VEC(const char *) system_read; /* system read set present on the host */
    VEC(link_fact_t) root_links;   /* top-level symlinks of a merged-/usr layout */
    VEC(link_fact_t) firmlinks;    /* macOS: /tmp -> /private/tmp, ... */
    const char *bwrap_version;     /* "0.8.0", or "" when bwrap is absent */
    bool bwrap_disable_userns;     /* bwrap knows --disable-userns */
    int fs_layer;                  /* the access-time layer (SPEC §16) usable by this runner: 1 yes,
                                      0 no (fs_layer_why says why), -1 not recorded (a facts file
                                      without it: nothing is said either way) */
    const char *fs_layer_why;      /* when fs_layer is 0: "/dev/fuse does not exist", ... */
    VEC(path_fact_t) paths;        /* sorted by path */
    const char *origin;            /* where they came from, for messages: the facts file,
                                      "this host's facts (probed)", or "facts JSON" */
} facts_t;

/* Probes this machine for target (Linux facts for linux; built-in macOS
 * defaults for macos unless running on macOS). paths_of lists extra absolute
 * paths to record (the policy's rule paths), NULL-terminated, may be NULL. */
facts_t *facts_probe(target_t target, const char *const *paths_of);

/* Probes more paths into f (absolute; recorded with their type and realpath). */
void facts_probe_paths(facts_t *f, const char *const *paths);

/* Can the access-time filesystem layer be used by this process: /dev/fuse
 * (DRUN_FUSE_DEV names another, for tests) is a character device it can
 * open, and, when not root, fusermount3 is installed; DRUN_FS_LAYER=off
 * (or 0) asks for the mount fallback. The reason in *why (static) when not.
 * The runner asks it before each run; the probe records it as a fact. */
bool facts_fs_layer_usable(const char **why);

/* Reads a facts file (the shape facts_to_json writes). NULL with *err set. */
facts_t *facts_load(const char *file, char **err);
facts_t *facts_from_json(const char *text, size_t len, char **err);

/* The built-in macOS facts (home /Users/user, firmlinks, system read set). */
facts_t *facts_macos_default(void);

void facts_to_json(const facts_t *f, buf_t *out); /* deterministic, 2-space indent */
void facts_free(facts_t *f);

/* Adds or replaces what is known of one path (used by the probe and tests). */
void facts_set_path(facts_t *f, const char *path, ptype_t type, const char *realpath);

/* What is known of an absolute path: the exact record, else one derived from
 * the nearest recorded ancestor (a path below a recorded symlinked directory
 * is rewritten through it), else {path, PT_MISSING, path}. */
path_fact_t facts_lookup(const facts_t *f, const char *path, arena_t *tmp);

#endif
