#!/usr/bin/env python3
"""The programs the fail-closed tests run on either side (tests/integration/failclosed.inc).

  serve ADDR PORT WORDS             an HTTP server answering every GET with WORDS
  stream ADDR PORT                  a server that sends 1 KiB to each client every 20 ms
  hold HOST PORT OUT                a client of a stream server: writes "flowing" to OUT
                                    once data came, then "reset", "eof" or "silent" (no byte
                                    for 10 s) with the seconds since the last byte; at most 120 s
  hold-in PORT OUT                  accepts one client and streams to it: "flowing", then
                                    "reset" or "eof" as hold does
  probe HOST PORT OUT STOP          every 50 ms: connect and GET /; OUT gets one line per
                                    attempt ("refused ERRNO", "timeout", "REACHED");
                                    stops when the file STOP exists, or after 300 s
  tuples HOST PORT FIRST N          GET / from the source ports FIRST..FIRST+N-1, one after the
                                    other; prints the slowest connection's seconds
  reach HOST PORT SECONDS [SINCE]   GET / every 50 ms until it answers; prints the seconds
                                    it took (since the wall-clock time SINCE, when given;
                                    SINCE "kill:SIG:PID" sends SIG to PID first and counts
                                    from there, so that this interpreter's start is not in
                                    the figure), exits 1 when SECONDS passed first
"""
import errno
import os
import signal
import socket
import sys
import threading
import time


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def listener(addr, port):
    s = socket.socket(family(addr), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(64)
    return s


def serve(addr, port, words):
    s = listener(addr, int(port))
    body = (words + "\n").encode()

    def answer(c):
        try:
            c.settimeout(5)
            c.recv(4096)
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        except OSError:
            pass
        c.close()
    while True:
        c, _ = s.accept()
        threading.Thread(target=answer, args=(c,), daemon=True).start()


def pump(c):
    chunk = b"x" * 1024
    try:
        while True:
            c.sendall(chunk)
            time.sleep(0.02)
    except OSError as e:
        return "reset" if e.errno in (errno.ECONNRESET, errno.EPIPE) else "error %s" % e
    finally:
        c.close()


def stream(addr, port):
    s = listener(addr, int(port))
    while True:
        c, _ = s.accept()
        threading.Thread(target=pump, args=(c,), daemon=True).start()


def note(out, text):
    with open(out, "a") as f:
        f.write(text + "\n")


def hold(host, port, out):
    c = socket.create_connection((host, int(port)), timeout=5)
    c.settimeout(10)
    last = time.monotonic()
    flowing = False
    deadline = last + 120
    while time.monotonic() < deadline:
        try:
            d = c.recv(65536)
        except socket.timeout:
            note(out, "silent %.2f" % (time.monotonic() - last))
            return
        except OSError as e:
            word = "reset" if e.errno == errno.ECONNRESET else "error-%d" % e.errno
            note(out, "%s %.2f" % (word, time.monotonic() - last))
            return
        if not d:
            note(out, "eof %.2f" % (time.monotonic() - last))
            return
        last = time.monotonic()
        if not flowing:
            flowing = True
            note(out, "flowing")
    note(out, "deadline")


def hold_in(port, out):
    s = listener("::", int(port))
    c, _ = s.accept()
    note(out, "flowing")
    start = time.monotonic()
    word = pump(c)
    note(out, "%s %.2f" % (word, time.monotonic() - start))


def probe(host, port, out, stop):
    deadline = time.monotonic() + 300
    with open(out, "a") as f:
        while time.monotonic() < deadline and not os.path.exists(stop):
            try:
                c = socket.create_connection((host, int(port)), timeout=0.2)
                c.settimeout(0.5)
                c.sendall(b"GET / HTTP/1.0\r\n\r\n")
                if c.recv(100):
                    f.write("REACHED\n")
                else:
                    f.write("eof\n")
                c.close()
            except socket.timeout:
                f.write("timeout\n")
            except OSError as e:
                f.write("refused %s\n" % errno.errorcode.get(e.errno, e.errno))
            f.flush()
            time.sleep(0.05)


def reach(host, port, seconds, since=None):
    if since and since.startswith("kill:"):
        _, sig, pid = since.split(":")
        since = time.time()
        os.kill(int(pid), getattr(signal, "SIG" + sig))
    start = time.monotonic()
    since = float(since) if since else time.time()
    while time.monotonic() - start < float(seconds):
        try:
            c = socket.create_connection((host, int(port)), timeout=0.5)
            c.settimeout(0.5)
            c.sendall(b"GET / HTTP/1.0\r\n\r\n")
            if c.recv(100).startswith(b"HTTP/1.0 200"):
                print("%.3f" % (time.time() - since))
                return 0
        except OSError:
            pass
        time.sleep(0.05)
    return 1


def tuples(host, port, first, n):
    slowest = 0.0
    for sport in range(int(first), int(first) + int(n)):
        c = socket.socket(family(host), socket.SOCK_STREAM)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        c.bind(("::" if ":" in host else "0.0.0.0", sport))
        c.settimeout(5)
        start = time.monotonic()
        c.connect((host, int(port)))
        slowest = max(slowest, time.monotonic() - start)
        c.sendall(b"GET / HTTP/1.0\r\n\r\n")
        while c.recv(4096):
            pass
        c.close()
    print("%.3f" % slowest)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "serve":
        serve(*args)
    elif cmd == "stream":
        stream(*args)
    elif cmd == "hold":
        hold(*args)
    elif cmd == "hold-in":
        hold_in(*args)
    elif cmd == "probe":
        probe(*args)
    elif cmd == "tuples":
        tuples(*args)
    elif cmd == "reach":
        return reach(*args)
    else:
        sys.exit("unknown command " + cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
