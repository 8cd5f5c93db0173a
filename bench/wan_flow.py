#!/usr/bin/env python3
"""wan_flow.py - one short flow of N bytes, its completion time (bench/wan.sh)

  wan_flow.py serve ADDR PORT            the peer: for each connection read a
                                         line "up N" or "down N [CC]"; "up":
                                         read N bytes, answer "ok"; "down": send
                                         N bytes with congestion control CC
                                         (the host's default without), close
  wan_flow.py up ADDR PORT N [CC]        the container sends N bytes (with CC);
                                         the time from connect() to the peer's
                                         "ok"
  wan_flow.py down ADDR PORT N [CC]      the container fetches N bytes (the
                                         peer sends with CC); the time from
                                         connect() to the last byte

The client prints the seconds; a failure prints "fail WHY" and exits 1. Each
run is a fresh connection: slow start, the initial window and tail loss are
what a short flow on a WAN is made of.
"""
import socket
import sys
import threading
import time


def serve(addr, port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(64)

    def one(c):
        try:
            f = c.makefile("rb")
            words = f.readline().decode().split()
            kind, n = words[0], int(words[1])
            if len(words) > 2:
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, words[2].encode())
            if kind == "up":
                left = n
                while left > 0:
                    d = f.read1(min(left, 1 << 20))
                    if not d:
                        return
                    left -= len(d)
                c.sendall(b"ok")
            else:
                chunk = b"\0" * (1 << 20)
                while n > 0:
                    c.sendall(chunk[:min(n, len(chunk))])
                    n -= min(n, len(chunk))
        except (OSError, ValueError):
            pass
        finally:
            c.close()

    while True:
        c, _ = ls.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


def client(kind, addr, port, n, cc=None):
    s = socket.socket()
    s.settimeout(120)
    if cc and kind == "up":
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    t0 = time.monotonic()
    s.connect((addr, port))
    s.sendall(f"{kind} {n}{' ' + cc if cc and kind == 'down' else ''}\n".encode())
    if kind == "up":
        chunk = b"\0" * (1 << 20)
        left = n
        while left > 0:
            s.sendall(chunk[:min(left, len(chunk))])
            left -= min(left, len(chunk))
        if s.recv(2) != b"ok":
            raise OSError("no ok from the peer")
    else:
        got = 0
        while got < n:
            d = s.recv(1 << 20)
            if not d:
                raise OSError(f"EOF after {got} of {n} bytes")
            got += len(d)
    t = time.monotonic() - t0
    s.close()
    return t


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) in (5, 6) and sys.argv[1] in ("up", "down"):
        try:
            cc = sys.argv[5] if len(sys.argv) == 6 else None
            print(f"{client(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), cc):.4f}")
        except OSError as e:
            print(f"fail {e}")
            sys.exit(1)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


main()
