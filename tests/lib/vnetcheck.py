"""vnetcheck: the peer side of the GSO checksum tests.

A wrong partial checksum in a GSO frame crosses a veth unnoticed, even with
the peer's checksum offload off (docs/gso.md, "Checksum testing"), so the
tests read the peer's veth with a PACKET_VNET_HDR packet socket and check
each frame the datapath sent themselves. This module holds what those
checkers share: the socket, the frame split, and one's-complement sums.

    import sys; sys.path.insert(0, LIBDIR); import vnetcheck
    s = vnetcheck.open_socket("veth0")
    for vnet, frame in vnetcheck.frames(s, seconds):
        ...
"""
import select
import socket
import struct
import time

SOL_PACKET, PACKET_VNET_HDR = 263, 15
ETH_P_ALL = 0x0003
F_NEEDS_CSUM = 1
GSO_TCPV4, GSO_TCPV6, GSO_UDP_L4 = 1, 4, 5


class Vnet:
    """The 10-byte struct virtio_net_hdr in front of every frame."""

    def __init__(self, raw):
        (self.flags, self.gso_type, self.hdr_len, self.gso_size,
         self.csum_start, self.csum_offset) = struct.unpack("=BBHHHH", raw)


def open_socket(ifname, rcvbuf=32 << 20):
    """A packet socket on ifname that hands over frames with their vnet header."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((ifname, 0))
    return s


def frames(s, seconds, bufsize=600000):
    """(Vnet, frame) for each frame read within seconds; stops early when the
    caller breaks out of the loop."""
    end = time.time() + seconds
    while time.time() < end:
        if not select.select([s], [], [], 0.2)[0]:
            continue
        d = s.recv(bufsize)
        if len(d) >= 10:
            yield Vnet(d[:10]), d[10:]


def fold(v):
    """Fold a one's-complement accumulator to 16 bits (not inverted)."""
    while v >> 16:
        v = (v & 0xffff) + (v >> 16)
    return v


def osum(b):
    """The one's-complement accumulator of bytes b (odd length padded)."""
    if len(b) % 2:
        b += b"\0"
    return sum(struct.unpack(f"!{len(b) // 2}H", b))


def pseudo4(frame, proto, l4len):
    """Pseudo-header accumulator of an IPv4 frame (Ethernet header first)."""
    return osum(frame[26:34]) + proto + l4len


def pseudo6(frame, proto, l4len):
    """Pseudo-header accumulator of an IPv6 frame without extension headers."""
    return osum(frame[22:54]) + proto + l4len
