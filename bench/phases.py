#!/usr/bin/env python3
# bench/phases.py HOST PORT PATH N: where one fresh request's time goes.
#
# N requests, one at a time, each on a fresh connection (HTTP/1.0, the
# server closes), timed by the client in three phases:
#   connect  connect() until it returns: the handshake (SYN, SYN-ACK);
#   ttfb     the request sent until the first byte of the answer: one trip
#            each way, and the server's own work;
#   body     the first byte until the server's close: the transfer, with
#            its slow start and window growth, for a large answer.
# Prints "connect ttfb body total bytes" in microseconds, each the median
# of the N, on one line; "fail WHY" when a request does not complete.
# bench/nginx.sh runs it on each row, from the peer and from the container
# (PHASES), so that a gap to the kernel is seen in the phase it is in.
import socket
import statistics
import sys
import time


def main():
    host, port, path, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    req = f"GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode()
    buf = bytearray(1 << 20)
    rows = []
    for _ in range(n):
        t0 = time.perf_counter()
        try:
            s = socket.create_connection((host, port), timeout=10)
        except OSError as e:
            print(f"fail connect: {e}")
            return
        t1 = time.perf_counter()
        first, got = None, 0
        with s:
            s.sendall(req)
            while True:
                k = s.recv_into(buf)
                if not k:
                    break
                if first is None:
                    first = time.perf_counter()
                got += k
        t3 = time.perf_counter()
        if first is None:
            print("fail no answer")
            return
        rows.append(((t1 - t0) * 1e6, (first - t1) * 1e6, (t3 - first) * 1e6, (t3 - t0) * 1e6))
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    print(f"{med[0]:.0f} {med[1]:.0f} {med[2]:.0f} {med[3]:.0f} {got}")


if __name__ == "__main__":
    main()
