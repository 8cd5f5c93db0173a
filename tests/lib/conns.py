#!/usr/bin/env python3
"""Many TCP connections at once, for tests that look at them while they are open.

  conns.py serve ADDR PORT
      an echo server (one thread per connection): every byte comes back, and a
      line "sha256 N" after "sink N\\n" is the digest of the N bytes that follow
  conns.py hold ADDR PORT N DONEFILE
      open N connections to ADDR PORT, check each echoes its own line, print
      "open N", keep them open until DONEFILE exists (60 s at most), close
  conns.py sink ADDR PORT BYTES
      send BYTES random bytes after "sink BYTES\\n" and check the digest that
      comes back (a transfer whose data must cross a smaller MTU)
  conns.py take ADDR PORT [echo]
      take every connection and hold it until its client closes it (one
      thread for thousands: a selector), sending back what comes with "echo"
      and dropping it without; the fd limit raised to its hard limit
"""
import hashlib
import os
import resource
import selectors
import socket
import socketserver
import sys
import time


class Echo(socketserver.StreamRequestHandler):
    def handle(self):
        first = self.rfile.readline()
        if first.startswith(b"sink "):
            n = int(first.split()[1])
            h = hashlib.sha256()
            while n:
                chunk = self.rfile.read(min(n, 65536))
                if not chunk:
                    return
                h.update(chunk)
                n -= len(chunk)
            self.wfile.write(h.hexdigest().encode() + b"\n")
            return
        self.wfile.write(first)
        self.wfile.flush()
        while True:
            chunk = self.request.recv(65536)
            if not chunk:
                return
            self.request.sendall(chunk)


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    address_family = socket.AF_INET6


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def serve(addr, port):
    srv = Server((addr, int(port)), Echo, bind_and_activate=False)
    srv.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    srv.server_bind()
    srv.server_activate()
    srv.serve_forever()


def hold(addr, port, n, done):
    socks = []
    for i in range(int(n)):
        s = socket.create_connection((addr, int(port)), timeout=10)
        line = b"conn %d\n" % i
        s.sendall(line)
        got = b""
        while not got.endswith(b"\n"):
            chunk = s.recv(100)
            if not chunk:
                sys.exit("connection %d closed before its echo" % i)
            got += chunk
        if got != line:
            sys.exit("connection %d echoed %r" % (i, got))
        socks.append(s)
    print("open", len(socks), flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(done) and time.monotonic() < deadline:
        time.sleep(0.05)
    for s in socks:
        s.close()


def sink(addr, port, nbytes):
    data = os.urandom(int(nbytes))
    s = socket.create_connection((addr, int(port)), timeout=20)
    s.sendall(b"sink %d\n" % len(data) + data)
    got = s.makefile("rb").readline().strip().decode()
    want = hashlib.sha256(data).hexdigest()
    if got != want:
        sys.exit("digest %s, sent %s" % (got, want))
    print("sent", len(data), "intact")


def take(addr, port, mode=""):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    ls = socket.socket(family(addr))
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, int(port)))
    ls.listen(4096)
    ls.setblocking(False)
    sel.register(ls, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            if key.fileobj is ls:
                try:
                    while True:
                        c, _ = ls.accept()
                        c.setblocking(False)
                        sel.register(c, selectors.EVENT_READ)
                except BlockingIOError:
                    pass
                continue
            try:
                d = key.fileobj.recv(4096)
            except OSError:
                d = b""
            if not d:
                sel.unregister(key.fileobj)
                key.fileobj.close()
            elif mode == "echo":
                try:
                    key.fileobj.send(d)
                except OSError:
                    pass


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"serve": serve, "hold": hold, "sink": sink, "take": take}[cmd](*args)
