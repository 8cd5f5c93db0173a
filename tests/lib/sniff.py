#!/usr/bin/env python3
# sniff.py IFNAME OUT SECONDS: one line per TCP or ICMP packet that IFNAME
# sends or receives, IPv4 and IPv6, written to OUT as it comes, for SECONDS
# (this machine has no tcpdump). Run it in the link's namespace. A test
# prints OUT when a check fails, to show who sent what.
import socket
import struct
import sys
import time

ETH_P_ALL = 3
PACKET_OUTGOING = 4


def tcp(data, off):
    if len(data) < off + 14:
        return "tcp (short)"
    sp, dp, seq, ack, hl, flags = struct.unpack("!HHIIBB", data[off:off + 14])
    fl = "".join(n for b, n in ((2, "S"), (16, "A"), (4, "R"), (1, "F"), (8, "P")) if flags & b)
    return f"tcp {sp}->{dp} {fl} seq={seq} ack={ack} len={len(data) - off - (hl >> 4) * 4}"


def quote(data, off):
    """The packet an ICMP error quotes, as addresses, ports and sequence number."""
    if len(data) < off + 1:
        return ""
    if data[off] >> 4 == 4 and len(data) >= off + 28:
        qh = (data[off] & 15) * 4
        src, dst = socket.inet_ntoa(data[off + 12:off + 16]), socket.inet_ntoa(data[off + 16:off + 20])
        q = off + qh
    elif data[off] >> 4 == 6 and len(data) >= off + 48:
        src = socket.inet_ntop(socket.AF_INET6, data[off + 8:off + 24])
        dst = socket.inet_ntop(socket.AF_INET6, data[off + 24:off + 40])
        q = off + 40
    else:
        return ""
    if len(data) < q + 8:
        return ""
    sp, dp, seq = struct.unpack("!HHI", data[q:q + 8])
    return f" quoting {src}:{sp}->{dst}:{dp} seq={seq}"


def describe(data):
    if len(data) >= 20 and data[0] >> 4 == 4:
        ihl = (data[0] & 15) * 4
        proto, src, dst = data[9], socket.inet_ntoa(data[12:16]), socket.inet_ntoa(data[16:20])
        icmp = 1
    elif len(data) >= 40 and data[0] >> 4 == 6:
        ihl, proto = 40, data[6]
        src = socket.inet_ntop(socket.AF_INET6, data[8:24])
        dst = socket.inet_ntop(socket.AF_INET6, data[24:40])
        icmp = 58
    else:
        return None
    if proto == 6:
        return f"{src}->{dst} {tcp(data, ihl)}"
    if proto == icmp and len(data) >= ihl + 8:
        return f"{src}->{dst} icmp type={data[ihl]} code={data[ihl + 1]}{quote(data, ihl + 8)}"
    return None


def main():
    ifname, out, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    s.settimeout(0.2)
    t0 = time.monotonic()
    with open(out, "w") as f:
        print(f"{ifname}: capturing for {secs:.0f} s", file=f, flush=True)
        while time.monotonic() - t0 < secs:
            try:
                data, addr = s.recvfrom(70000)
            except socket.timeout:
                continue
            line = describe(data)
            if line:
                way = "out" if addr[2] == PACKET_OUTGOING else "in "
                print(f"{time.monotonic() - t0:8.4f} {way} {line}", file=f, flush=True)


if __name__ == "__main__":
    main()
