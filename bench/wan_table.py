#!/usr/bin/env python3
"""wan_table.py - bench/wan.sh's results as the tables of docs/benchmarks.md

  wan_table.py WAN_CSV [FLOWS_CSV]

Prints, in Markdown, one table per direction: a line per RTT, loss and stream
count, and for each congestion control the kernel's runs, sandnet's runs and
the ratio of their medians (sandnet's --tcp-cc cubic against the kernel's
CUBIC, --tcp-cc bbr against the kernel's BBR), then Reno; a ratio below 0.9
is in bold. Then the short flows: each point's completion times, sandnet over
the kernel with the same congestion control (below 1 is faster). Every run is
shown, not only the median.
"""
import csv
import sys


def runs(r):
    return " ".join(f"{float(x):.0f}" for x in r["runs_mbit_s"].split()) if r else "-"


def ratio(s, k):
    if not s or not k or not float(k["mbit_s"]):
        return "-"
    x = float(s["mbit_s"]) / float(k["mbit_s"])
    return f"**{x:.2f}**" if x < 0.9 else f"{x:.2f}"


def throughput(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        rows[(r["dir"], int(r["rtt_ms"]), float(r["loss_pct"]), int(r["streams"]), r["row"])] = r
    points = sorted({k[:4] for k in rows})
    for d, title in (("out", "sandnet sends (the container uploads)"),
                     ("in", "sandnet receives (the peer's kernel sends)")):
        cubic = "sandnet-cubic"
        print(f"\n**{title}**, Mbit/s, every run:\n")
        print("| RTT ms | loss % | streams | kernel CUBIC | sandnet CUBIC | x | kernel BBR | sandnet BBR | x |"
              + (" sandnet Reno |" if d == "out" else ""))
        print("|---|---|---|---|---|---|---|---|---|" + ("---|" if d == "out" else ""))
        for p in points:
            if p[0] != d:
                continue
            g = {name: rows.get(p + (name,)) for name in ("kernel-cubic", cubic, "kernel-bbr", "sandnet-bbr",
                                                          "sandnet-reno")}
            line = (f"| {p[1]} | {p[2]:g} | {p[3]} | {runs(g['kernel-cubic'])} | {runs(g[cubic])} | "
                    f"{ratio(g[cubic], g['kernel-cubic'])} | {runs(g['kernel-bbr'])} | {runs(g['sandnet-bbr'])} | "
                    f"{ratio(g['sandnet-bbr'], g['kernel-bbr'])} |")
            if d == "out":
                line += f" {runs(g['sandnet-reno'])} |"
            print(line)


def flows(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        rows[(r["dir"], int(r["rtt_ms"]), float(r["loss_pct"]), int(r["mib"]), r["row"])] = r
    points = sorted({k[:4] for k in rows})
    print("\n**Short flows**, completion seconds of a fresh connection, every run (x: sandnet over the kernel "
          "with the same congestion control, below 1 is faster):\n")
    print("| dir | RTT ms | loss % | MiB | kernel CUBIC | sandnet CUBIC | x | kernel BBR | sandnet BBR | x |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def cell(r):
        return " ".join(f"{float(x):.2f}" for x in r["runs_s"].split()) if r else "-"

    def x(r):
        return r["ratio_to_kernel"] if r and r["ratio_to_kernel"] else "-"

    for p in points:
        g = {n: rows.get(p + (n,)) for n in ("kernel-cubic", "sandnet-cubic", "kernel-bbr", "sandnet-bbr")}
        print(f"| {p[0]} | {p[1]} | {p[2]:g} | {p[3]} | {cell(g['kernel-cubic'])} | {cell(g['sandnet-cubic'])} | "
              f"{x(g['sandnet-cubic'])} | {cell(g['kernel-bbr'])} | {cell(g['sandnet-bbr'])} | {x(g['sandnet-bbr'])} |")


if len(sys.argv) < 2:
    sys.exit(__doc__)
throughput(sys.argv[1])
if len(sys.argv) > 2:
    flows(sys.argv[2])
