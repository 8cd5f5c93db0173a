#!/usr/bin/env bash
# The WAN benchmark's plot (bench/wan.sh): Mbit/s against loss, one panel
# per RTT, a line per row and direction (one stream), from a wan.csv; also
# for a wan.csv put together from runs of one direction each.
#
#   bench/wan_plot.sh WAN_CSV PLOT_PNG [WHAT]
#
# WHAT: how the figures were taken, for the title (e.g. "iperf3 -t 6, median of 2").
set -u
csv=${1:?usage: wan_plot.sh WAN_CSV PLOT_PNG [WHAT]}
PLOT=${2:?usage: wan_plot.sh WAN_CSV PLOT_PNG [WHAT]}
what=${3:-}
command -v gnuplot >/dev/null || { echo "wan_plot.sh: gnuplot missing (scripts/install-deps.sh)"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 - "$csv" "$TMP" <<'PY' >"$TMP/panels.txt"
import sys
rows = {}
for line in list(open(sys.argv[1]))[1:]:
    f = line.strip().split(",")
    if not f[6] or f[5] != "1":
        continue
    rtt = int(f[3])
    rows.setdefault(rtt, {}).setdefault(f"{f[0]} {f[2]}", []).append((float(f[4]), float(f[6])))
for rtt, series in sorted(rows.items()):
    names = []
    for name, pts in sorted(series.items()):
        fn = f"{sys.argv[2]}/plot-{rtt}-{name.replace(' ', '-')}.dat"
        with open(fn, "w") as o:
            for x, y in sorted(pts):
                o.write(f"{max(x, 0.001)} {y}\n")
        names.append((name, fn))
    print(rtt, " ".join(f"{n.replace(' ', '_')}={fn}" for n, fn in names))
PY
{
	echo "set terminal png size 1500,520"
	echo "set output '$PLOT'"
	echo "set multiplot layout 1,$(wc -l <"$TMP/panels.txt") title 'TCP through the relay, one stream${what:+, $what} ($(date -u +%F), $(nproc) CPUs)'"
	echo "set logscale xy; set grid; set key bottom left font ',8'; set xlabel 'random loss % each way (0 shown as 0.001)'; set ylabel 'Mbit/s'"
	while read -r rtt series; do
		plots=''
		for s in $series; do
			n=${s%%=*} f=${s#*=}
			plots="$plots${plots:+, }'$f' using 1:2 with linespoints title '${n//_/ }'"
		done
		echo "set title 'RTT $rtt ms'"
		echo "plot $plots"
	done <"$TMP/panels.txt"
	echo "unset multiplot"
} >"$TMP/plot.gp"
gnuplot "$TMP/plot.gp" 2>"$TMP/gnuplot.err" && echo "(plot: $PLOT)" || { echo "gnuplot: $(tail -n 2 "$TMP/gnuplot.err")"; exit 1; }
