#!/usr/bin/env bash
# The loss of every run at one offered load, per row, from bench/udp.sh's
# CSV files (its runs_loss_percent column): a point per run, out and in.
#
#   bench/udp_loss_plot.sh PLOT.png LOAD CSV[=SUFFIX]...
#
# LOAD as in the CSV ("1G"); SUFFIX tells the rows of one file from those of
# another ("kernel, before"). 1400-byte rows only. Needs gnuplot.
set -eu
plot=${1:?usage: bench/udp_loss_plot.sh PLOT.png LOAD CSV[=SUFFIX]...}
load=${2:?usage: bench/udp_loss_plot.sh PLOT.png LOAD CSV[=SUFFIX]...}
shift 2
command -v gnuplot >/dev/null || { echo "bench/udp_loss_plot.sh: gnuplot missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" "$load" "$@" <<'PY'
import csv, sys
tmp, load, files = sys.argv[1], sys.argv[2], sys.argv[3:]
labels, points = [], {"out": [], "in": []}
for spec in files:
    path, _, suffix = spec.partition("=")
    for r in csv.DictReader(open(path)):
        if r["offered"] != load or r["size"] != "1400" or not r.get("runs_loss_percent"):
            continue
        label = r["row"] + (", " + suffix if suffix else "")
        if label not in labels:
            labels.append(label)
        runs = [float(x) for x in r["runs_loss_percent"].split()]
        for j, v in enumerate(runs):
            points[r["direction"]].append((labels.index(label) + (j - (len(runs) - 1) / 2) * 0.05, v))
with open(f"{tmp}/loss.dat", "w") as o:
    for d in ("out", "in"):
        o.writelines(f"{x:.3f} {y}\n" for x, y in points[d])
        o.write("\n\n")
with open(f"{tmp}/xtics", "w") as o:
    o.write(", ".join(f'"{l}" {i}' for i, l in enumerate(labels)) + f"\n{len(labels)}\n")
PY
xtics=$(head -n1 "$tmp/xtics")
n=$(tail -n1 "$tmp/xtics")
gnuplot <<GP
set terminal png size 1100,500
set output "$plot"
set title "UDP at $load through the container face, 1400-byte datagrams: the loss of every run (bench/udp.sh)\\n$(date -u +%F), $(nproc) CPUs; default = netsetup run with no option"
set ylabel "datagrams lost, %"
set xtics ($xtics)
set xrange [-0.5:$n - 0.5]
set yrange [0:*]
set grid ytics
set key top left
plot "$tmp/loss.dat" index 0 using (\$1 - 0.15):2 with points pt 7 ps 1.5 title "out (the container sends)", \
     "$tmp/loss.dat" index 1 using (\$1 + 0.15):2 with points pt 9 ps 1.5 title "in (the peer sends)"
GP
echo "(plot: $plot)"
