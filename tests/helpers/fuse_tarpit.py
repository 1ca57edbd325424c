#!/usr/bin/env python3
# fuse_tarpit.py DIR... — mounts a FUSE filesystem on each DIR that never
# answers, not even the kernel's INIT: every access below it waits for
# good. 59-fuse-hostile puts one below a served tree, so that the layer's
# daemon blocks on its backing tree. Root only (mount(2) with an fd of
# /dev/fuse). Prints "ready" once mounted; the mounts die (ENOTCONN) with
# this process.
import ctypes
import os
import signal
import sys

libc = ctypes.CDLL(None, use_errno=True)
fds = []
for d in sys.argv[1:]:
    fd = os.open("/dev/fuse", os.O_RDWR)
    opts = "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % fd
    if libc.mount(b"tarpit", d.encode(), b"fuse.tarpit", 0, opts.encode()) != 0:
        sys.exit("mount %s: %s" % (d, os.strerror(ctypes.get_errno())))
    fds.append(fd)
print("ready", flush=True)
signal.pause()
