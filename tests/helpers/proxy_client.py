#!/usr/bin/python3
# proxy_client.py — raw clients of the sandbox's proxy, run INSIDE the sandbox
# by tests/suites/57-proxy.bats (the proxy is http://127.0.0.1:3128 there).
#
#   proxy_client.py raw 'CONNECT host:port HTTP/1.1\r\n\r\n'
#       sends the bytes as given (\r \n escapes decoded), prints the first
#       line of the answer (or "closed")
#   proxy_client.py flood N READY DONE
#       opens N connections that never send a byte, writes READY, waits for
#       DONE (at most 60 s), then prints how many were answered 429
#   proxy_client.py unix
#       tries to make an AF_UNIX socket; prints "created" or the error
import os
import socket
import sys
import time

PROXY = ("127.0.0.1", 3128)


def raw(req):
    s = socket.create_connection(PROXY, timeout=20)
    s.sendall(req.encode().decode("unicode_escape").encode("latin-1"))
    data = b""
    while b"\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    print(data.split(b"\r\n")[0].decode("latin-1") if data else "closed")


def flood(n, ready, done):
    conns = []
    for _ in range(n):
        try:
            conns.append(socket.create_connection(PROXY, timeout=5))
        except OSError as e:
            print("connect failed:", e)
            break
    with open(ready, "w") as f:
        f.write("ready\n")
    for _ in range(600):
        if os.path.exists(done):
            break
        time.sleep(0.1)
    refused = 0
    for c in conns:
        c.setblocking(False)
        try:
            if c.recv(64).startswith(b"HTTP/1.1 429"):
                refused += 1
        except OSError:
            pass
    print("answered 429:", refused)


def unix():
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        print("created")
    except OSError as e:
        print("refused:", e)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "raw":
        raw(sys.argv[2])
    elif cmd == "flood":
        flood(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif cmd == "unix":
        unix()
