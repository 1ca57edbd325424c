#!/usr/bin/env python3
# fifo_race.py — two sides of one race, for 59-fuse-hostile.
#
#   fifo_race.py host DIR STOPFILE   (on the host) keeps making and removing
#                                    FIFOs DIR/f0..f3 until STOPFILE exists
#   fifo_race.py sandbox N           (in the sandbox, cwd the tree) opens
#                                    f0..f3 for writing, creating them, N
#                                    times each, removing each after
#
# A create the kernel sends because its lookup found nothing may meet a
# FIFO the host made in between; a layer that opened it as asked would
# block a worker until a reader came. Four lanes in parallel, one per name;
# each batch of attempts runs in a child that SIGALRM ends after 0.1 s (the
# default action: a FIFO the kernel itself opens, seen by the lookup, blocks
# the child in the sandbox, not the layer). Prints the outcomes and "DONE".
import errno
import os
import signal
import sys


def host(d, stop):
    # each FIFO lives for a moment only: a lookup in the sandbox mostly
    # finds nothing (and the kernel sends a create), while the layer's open
    # that follows may meet the next one
    os.umask(0)
    names = [os.path.join(d, "f%d" % p) for p in range(4)]
    while not os.path.exists(stop):
        for f in names:
            try:
                os.mkfifo(f, 0o666)
            except OSError:
                pass
        for f in names:
            try:
                os.unlink(f)
            except OSError:
                pass


def batch(p, n, out):
    signal.setitimer(signal.ITIMER_REAL, 0.1)  # SIGALRM's default action ends the batch
    seen = {}
    for _ in range(n):
        name = "f%d" % p
        try:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o644))
            k = "ok"
            os.unlink(name)
        except OSError as e:
            k = errno.errorcode.get(e.errno, str(e.errno))
        seen[k] = seen.get(k, 0) + 1
    os.write(out, (" ".join("%s=%d" % kv for kv in sorted(seen.items())) + "\n").encode())
    os._exit(0)


def lane(p, n, w):
    for _ in range(n // 50):
        pid = os.fork()
        if pid == 0:
            batch(p, 50, w)
        os.waitpid(pid, 0)
    os._exit(0)


def sandbox(n):
    r, w = os.pipe()
    lanes = []
    for p in range(4):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            lane(p, n, w)
        lanes.append(pid)
    os.close(w)
    total = {}
    for line in os.fdopen(r).read().split():
        k, v = line.split("=")
        total[k] = total.get(k, 0) + int(v)
    for pid in lanes:
        os.waitpid(pid, 0)
    print(total)
    print("DONE", flush=True)


if sys.argv[1] == "host":
    host(sys.argv[2], sys.argv[3])
else:
    sandbox(int(sys.argv[2]))
