#!/usr/bin/env python3
"""The whole machine's CPU per request, from a perf record -a -g profile.

    bench/perf_machine.py PERF_DATA NAME SHAPE REQUESTS BUSY_TICKS HZ [CARRIER]

REQUESTS were served while perf recorded and the machine was busy
BUSY_TICKS (/proc/stat, every CPU, HZ a second): each command's and
symbol's share of the busy samples becomes ms of CPU per request, so that
a row is read against the kernel's own row of the same run. CARRIER (the
datapath's or pasta's command name) is also shared out by the system call
each sample was taken under (the frame do_syscall_64 called), "user" for
its own code and libraries, "interrupt" for what an interrupt ran on its
time, "no call chain" for samples perf could not walk. A system call's
share includes what the kernel ran for others inside it: a veth transmit
runs the receiver's stack, a TUN write the container's.
"""
import collections
import subprocess
import sys

SYS_PREFIXES = ("__x64_sys_", "__do_sys_", "__se_sys_")
SYMBOL_MIN_PCT = 0.5


def perf(data, *args):
    out = subprocess.run(["perf", *args, "-i", data], capture_output=True, text=True).stdout
    return out.splitlines()


def report(data, sort):
    """[(percent, fields...)] of perf report --sort SORT, idle included"""
    rows = []
    for line in perf(data, "report", "--stdio", "--no-children", "--sort", sort, "-g", "none"):
        f = line.split()
        if f and f[0].endswith("%") and not line.startswith("#"):
            rows.append((float(f[0][:-1]), f[1:]))
    return rows


def syscall_of(stack, kernel_leaf):
    """The system call of one sample's chain (leaf first), or a kind."""
    for fn in stack:
        for p in SYS_PREFIXES:
            if fn.startswith(p):
                return fn[len(p):]
        if fn.startswith(("asm_sysvec_", "asm_common_interrupt")):
            return "interrupt"
    if "do_syscall_64" in stack:
        i = stack.index("do_syscall_64")
        return "syscall:" + (stack[i - 1] if i > 0 else "?")	# an inlined entry point
    if kernel_leaf:
        return "kernel, chain not walked"
    return "user"


def by_syscall(data, comm):
    count, total, cur, stack, leaf_ip = collections.Counter(), 0, None, [], ""
    for line in perf(data, "script", "-F", "comm,ip,sym") + [""]:
        if not line.strip():
            if cur == comm:
                # perf recorded no call chain for some samples (on this
                # guest a fifth or more): counted apart, not left out
                count[syscall_of(stack, leaf_ip.startswith("ffff")) if stack else "no call chain"] += 1
                total += 1
            cur, stack, leaf_ip = None, [], ""
        elif not line[0].isspace():
            cur = line.split()[0]
        else:
            f = line.split(None, 1)
            if not stack:
                leaf_ip = f[0]
            stack.append(f[1].strip() if len(f) > 1 else f[0])
    return count, total


def main():
    if len(sys.argv) not in (7, 8):
        sys.exit(__doc__)
    data, name, shape = sys.argv[1:4]
    n, ticks, hz = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    carrier = sys.argv[7] if len(sys.argv) == 8 else None
    busy_ms = 1000 * ticks / hz / n
    comms = report(data, "comm")
    idle = sum(p for p, f in comms if f[0] == "swapper")
    ms = lambda p: p / (100 - idle) * busy_ms if idle < 100 else 0
    print(f"{name} {shape}: {n} requests, the machine busy {busy_ms:.3f} ms a request "
          f"(perf record -a: {idle:.1f} % of the samples idle)")
    print("ms of CPU per request, by command:")
    per_comm = {}
    for p, f in comms:
        if f[0] != "swapper":
            per_comm[f[0]] = ms(p)
            if ms(p) >= 0.001:
                print(f"  {ms(p):8.3f}  {f[0]}")
    print(f"by command and symbol ({SYMBOL_MIN_PCT} % of the samples or more):")
    for p, f in report(data, "comm,symbol"):
        if f[0] != "swapper" and p >= SYMBOL_MIN_PCT:
            print(f"  {ms(p):8.3f}  {f[0]:<16} {' '.join(f[2:])}")
    if carrier and per_comm.get(carrier):
        count, total = by_syscall(data, carrier)
        print(f"{carrier}'s CPU by system call ({total} samples), ms per request:")
        for what, k in count.most_common(12):
            print(f"  {per_comm[carrier] * k / total:8.3f}  {100 * k / total:5.1f} %  {what}")


if __name__ == "__main__":
    main()
