#!/usr/bin/env python3
"""set_gso_max.py IFNAME SIZE: set IFNAME's gso_max_size and gso_ipv4_max_size
to SIZE in the current network namespace with one RTM_NEWLINK, then read both
back (RTM_GETLINK) and fail unless they took. Debian 12's iproute2 (6.1)
knows gso_max_size but not gso_ipv4_max_size (IFLA_GSO_IPV4_MAX_SIZE, 63,
Linux 6.3), and BIG TCP needs both."""
import socket, struct, sys

RTM_NEWLINK, RTM_GETLINK = 16, 18
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
IFLA_GSO_MAX_SIZE, IFLA_GSO_IPV4_MAX_SIZE = 41, 63


def attr(kind, payload):
    a = struct.pack("=HH", 4 + len(payload), kind) + payload
    return a + b"\0" * (-len(a) % 4)


def request(sock, kind, flags, body):
    msg = struct.pack("=IHHII", 16 + len(body), kind, flags, 1, 0) + body
    sock.send(msg)
    return sock.recv(65536)


def main():
    ifname, size = sys.argv[1], int(sys.argv[2])
    index = socket.if_nametoindex(ifname)
    ifinfo = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, index, 0, 0)
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    body = ifinfo + attr(IFLA_GSO_MAX_SIZE, struct.pack("=I", size)) + \
        attr(IFLA_GSO_IPV4_MAX_SIZE, struct.pack("=I", size))
    reply = request(s, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, body)
    kind = struct.unpack_from("=H", reply, 4)[0]
    err = struct.unpack_from("=i", reply, 16)[0] if kind == NLMSG_ERROR else -1
    if err != 0:
        sys.exit(f"RTM_NEWLINK {ifname}: error {err}")
    reply = request(s, RTM_GETLINK, NLM_F_REQUEST, ifinfo)
    got, off = {}, 16 + 16
    length = struct.unpack_from("=I", reply, 0)[0]
    while off + 4 <= length:
        alen, akind = struct.unpack_from("=HH", reply, off)
        if alen < 4:
            break
        if akind in (IFLA_GSO_MAX_SIZE, IFLA_GSO_IPV4_MAX_SIZE) and alen >= 8:
            got[akind] = struct.unpack_from("=I", reply, off + 4)[0]
        off += (alen + 3) & ~3
    if got.get(IFLA_GSO_MAX_SIZE) != size or got.get(IFLA_GSO_IPV4_MAX_SIZE) != size:
        sys.exit(f"{ifname}: asked for {size}, the kernel has {got}")


if __name__ == "__main__":
    main()
