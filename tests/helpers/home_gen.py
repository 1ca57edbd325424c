#!/usr/bin/env python3
# home_gen.py DIR [N] — a synthetic home directory of N entries (default
# 250,000) for tests/bench/58-fuse-layer: the shape of a developer's home
# (tool caches with many small files, a few dozen repositories with .git
# dirs and node_modules trees, dot-config dirs, the secrets networked-dev
# hides), files empty. Built in DIR.tmp and renamed into place, so an
# interrupted run leaves no half-built home to be taken for a whole one.
import os
import shutil
import sys

root = sys.argv[1]
want = int(sys.argv[2]) if len(sys.argv) > 2 else 250000
tmp = root + ".tmp"
shutil.rmtree(tmp, ignore_errors=True)
n = 0


def mk(d):
    global n
    os.makedirs(d, 0o755, exist_ok=True)
    n += 1


def files(d, k, prefix="f"):
    global n
    for i in range(k):
        os.close(os.open(os.path.join(d, "%s%d" % (prefix, i)), os.O_CREAT | os.O_WRONLY, 0o644))
    n += k


for s in (".ssh", ".gnupg", ".aws", ".config/gcloud", ".docker", ".config/git", ".local/bin", ".npm", ".cache/pip"):
    mk(os.path.join(tmp, s))
    files(os.path.join(tmp, s), 3)
# each repository: sources, a .git dir with objects, a node_modules tree
r = 0
while n < want:
    repo = os.path.join(tmp, "src", "repo%d" % r)
    for sub in ("src/a", "src/b", "test", "docs"):
        mk(os.path.join(repo, sub))
        files(os.path.join(repo, sub), 40)
    git = os.path.join(repo, ".git")
    for sub in ("hooks", "refs/heads", "info"):
        mk(os.path.join(git, sub))
    files(git, 1, "HEAD")
    for o in range(64):
        mk(os.path.join(git, "objects", "%02x" % o))
        files(os.path.join(git, "objects", "%02x" % o), 20, "o")
    for m in range(60):
        pkg = os.path.join(repo, "node_modules", "pkg%d" % m, "lib")
        mk(pkg)
        files(pkg, 25)
    cache = os.path.join(tmp, ".cache", "tool%d" % r)
    mk(cache)
    files(cache, 400)
    r += 1
os.rename(tmp, root)
print(n)
