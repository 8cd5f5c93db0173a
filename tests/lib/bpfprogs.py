#!/usr/bin/env python3
"""The ids of the BPF programs loaded in the kernel under one name.

  bpfprogs.py NAME      one id a line (sandnet_steer: netsetup's steering
                        programs, netsetup/kernel/steer.c)

Walks BPF_PROG_GET_NEXT_ID and reads each program's name with
BPF_OBJ_GET_INFO_BY_FD (bpftool is not installed here; this is what its
`prog show` does). Needs CAP_SYS_ADMIN, as the tests run.
"""
import ctypes
import os
import platform
import struct
import sys

SYS_BPF = {"x86_64": 321, "aarch64": 280}[platform.machine()]
BPF_PROG_GET_NEXT_ID, BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD = 11, 13, 15
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    ret = libc.syscall(SYS_BPF, cmd, buf, 128)
    if ret < 0:
        return -ctypes.get_errno(), buf.raw
    return ret, buf.raw


def prog_ids():
    start = 0
    while True:
        ret, raw = bpf(BPF_PROG_GET_NEXT_ID, struct.pack("=III", start, 0, 0))
        if ret < 0:
            return
        start = struct.unpack_from("=I", raw, 4)[0]
        yield start


def prog_name(pid):
    fd, _ = bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("=III", pid, 0, 0))
    if fd < 0:
        return None	# gone in between
    try:
        info = ctypes.create_string_buffer(256)
        ret, _ = bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("=IIQ", fd, 256, ctypes.addressof(info)))
        if ret < 0:
            return None
        return info.raw[64:80].split(b"\0", 1)[0].decode()
    finally:
        os.close(fd)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bpfprogs.py NAME")
    for pid in prog_ids():
        if prog_name(pid) == sys.argv[1]:
            print(pid)
