#!/usr/bin/env bash
# The container face (issue 9): a program inside the container against the
# peer's kernel, through sandnet, next to the same container with its kernel
# alone on the same veth and next to pasta, in the same run.
#
#   bench/face.sh BUILD_DIR
#
# Environment: SECS (iperf3 -t, default 5), REPS (runs per figure, median,
# default 3), ROWS (default "kernel hw sw pasta"; also hw-percall: hw with
# the TUN read and written one packet per system call, and hw-nopoll: hw
# with --busy-poll 0, hw-noring: hw with --no-rx-ring (the link's sockets
# read with recvmmsg()), hw-nice0: hw with --nice 0, hw-iw0: hw with the
# kernel's initial window on the TUN's routes, and hw-cubic, hw-bbr, hw-reno:
# hw with that --tcp-cc instead of the container's own), PERF (sandnet modes to
# profile with perf record, e.g. "hw"; default none; PERF_LIMIT: the
# smallest share of a symbol listed, default 1 %), SHARDS (the netsetup
# --shards counts of the sandnet rows, e.g. "1 2 auto", each its own row
# "hw-2sh"; default 1), STREAMS (iperf3 -P of each row, default "1 4"),
# OUT (results directory,
# default bench/results of this tree; the plot goes to docs/benchmarks-face.png
# unless PLOT is set).
#
# Namespaces (names "bf<pid>-*", removed on exit):
#   ct    the container: eth0 10.67.0.2/24, default via 10.67.0.1
#   peer  a kernel stack: veth0 10.67.0.1/24, iperf3 and rr servers
#   dp    where netsetup and the datapath run
#   ph/pp pasta's host (ext0 10.89.0.1/24, a veth to pp) and a peer behind it
#         (10.89.0.5): pasta's container reaches the network through ph's
#         kernel, as a pasta container does
#   cp    pasta's container
#
# Rows, each with 1 and 4 streams (iperf3 -P; STREAMS), from inside the container:
#   out  iperf3 -c in the container to the peer (the container sends)
#   in   iperf3 -c -R (the peer sends, the container receives)
#   kernel   the container's kernel alone on the veth: the bar
#   hw, sw   netsetup run --gso hw|sw: the container face (its TUN with TSO
#            and USO, sandnet's stack, AF_PACKET on eth0)
#   pasta    pasta --config-net for cp, the peer behind ph
# plus TCP_RR: tests/tools/rr, 1-byte requests and responses, from inside.
# Gbit/s is iperf3's receiver figure; "carrier CPU s/GB" is the datapath's or
# pasta's utime+stime per 1e9 bytes (the kernel row has none: its work is in
# softirq); "system CPU s/GB" is every CPU's busy time (/proc/stat) per 1e9
# bytes, iperf3 and the kernel's work included: the fair total.
# Ratios are to the kernel row of the same direction and streams, and for
# sandnet also to pasta. Results: a table on stdout, OUT/face.csv,
# OUT/face-rr.csv, the plot.
set -u
build=${1:?usage: bench/face.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
SECS=${SECS:-5}
REPS=${REPS:-3}
ROWS=${ROWS:-kernel hw sw pasta}
STREAMS=${STREAMS:-1 4}
# SHARDS: the shard counts of the sandnet rows, each a row of its own ("hw"
# for one shard, "hw-2sh" for two: netsetup run --shards 2); "auto" is one
# per CPU
SHARDS=${SHARDS:-1}
OUT=${OUT:-$repo/bench/results}
PLOT=${PLOT:-$repo/docs/benchmarks-face.png}
NETSETUP=$build/netsetup
DATAPATH=$build/datapath
RR=$build/tests/tools/rr
HZ=$(getconf CLK_TCK)

[ "$(id -u)" -eq 0 ] || { echo "bench/face.sh: needs root (namespaces)"; exit 1; }
for t in iperf3 python3; do
	command -v "$t" >/dev/null || { echo "bench/face.sh: $t missing (scripts/install-deps.sh)"; exit 1; }
done
mkdir -p "$OUT"
. "$here/lib.sh"
bench_start bf CT:ct PEER:peer DPNS:dp PH:ph PP:pp CP:cp

csv=$OUT/face.csv
rrcsv=$OUT/face-rr.csv

face_plot() { bench_plot "$csv" "$PLOT" "A program inside the container against the peer's kernel, iperf3 -t $SECS, median of $REPS" "$TMP"; }
if [ -n "${PLOT_ONLY:-}" ]; then
	face_plot
	exit 0
fi

for ns in $ALL_NS; do ip netns add "$ns" && ip -n "$ns" link set lo up || exit 1; done
bench_face_net "$CT" "$PEER" "$PH" "$PP" 10.67.0 10.89.0 || { echo "bench/face.sh: the namespaces do not pass"; exit 1; }

echo "row,direction,streams,gbit_per_s,ratio_to_kernel,ratio_to_pasta,carrier_cpu_s_per_gb,system_cpu_s_per_gb,runs_gbit_per_s,note" >"$csv"
echo "row,transactions,min_us,p50_us,p90_us,p99_us,tps,ratio_tps_to_kernel,note" >"$rrcsv"

cpu_ticks() { [ -n "$1" ] && awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
sys_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
wait_port() { bench_wait_port "$@"; }
bg() { bench_bg "$@"; }

# iperf_once NS ADDR STREAMS REVERSE CPU_PID: "bits_per_s bytes carrier_ticks system_ticks" or "fail WHY"
iperf_once() {
	local ns=$1 addr=$2 streams=$3 rev=$4 pid=$5 c0 c1 s0 s1 j=$TMP/iperf.json
	c0=$(cpu_ticks "$pid"); s0=$(sys_busy)
	timeout $((SECS + 20)) ip netns exec "$ns" iperf3 -c "$addr" -p 5201 -t "$SECS" -P "$streams" \
		$rev -J --connect-timeout 3000 >"$j" 2>&1
	c1=$(cpu_ticks "$pid"); s1=$(sys_busy)
	python3 - "$j" "$((c1 - c0))" "$((s1 - s0))" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print("fail iperf3 printed no JSON"); sys.exit()
if "error" in d:
    print("fail", d["error"].replace(",", ";")); sys.exit()
r = d["end"]["sum_received"]
print(r["bits_per_second"], r["bytes"], sys.argv[2], sys.argv[3])
PY
}

# row NAME DIR STREAMS NS ADDR CPU_PID: REPS runs, median to the table and CSV
row() {
	local name=$1 dir=$2 streams=$3 i line rev=
	[ "$dir" = in ] && rev=-R
	: >"$TMP/runs"
	for ((i = 0; i < REPS; i++)); do
		line=$(iperf_once "$4" "$5" "$streams" "$rev" "$6")
		echo "$line" >>"$TMP/runs"
		case $line in fail*) break;; esac
	done
	python3 - "$name" "$dir" "$streams" "$csv" "$TMP/runs" "$HZ" "$6" <<'PY'
import sys, statistics
name, d, streams, csv, runs, hz, pid = sys.argv[1:]
rows, fail = [], None
for line in open(runs):
    f = line.split()
    if not f: continue
    if f[0] == "fail":
        fail = " ".join(f[1:]); break
    bps, nbytes, ct, st = float(f[0]), int(f[1]), int(f[2]), int(f[3])
    gb = nbytes / 1e9 if nbytes else 1
    rows.append((bps / 1e9, ct / int(hz) / gb, st / int(hz) / gb))
if fail or not rows:
    note = f"n/a (iperf3 failed: {fail})"
    print(f"{name:<8} {d:<4} {streams:>2}  {note}")
    open(csv, "a").write(f"{name},{d},{streams},,,,,,,{note}\n"); sys.exit()
g = statistics.median(r[0] for r in rows)
cc = statistics.median(r[1] for r in rows)
sc = statistics.median(r[2] for r in rows)
ref = {}
for line in open(csv):
    f = line.strip().split(",")
    if f[1] == d and f[2] == streams and f[3]:
        ref[f[0]] = float(f[3])
rk = f"{g / ref['kernel']:.2f}" if ref.get("kernel") else ""
rp = f"{g / ref['pasta']:.2f}" if ref.get("pasta") and name != "pasta" else ""
ccs = f"{cc:.2f}" if pid else "-"
runs_s = " ".join(f"{r[0]:.2f}" for r in rows)
print(f"{name:<8} {d:<4} {streams:>2} {g:>8.2f} {rk or '-':>8} {rp or '-':>8} {ccs:>9} {sc:>9.2f}   (runs: {runs_s})")
open(csv, "a").write(f"{name},{d},{streams},{g:.3f},{rk},{rp},{f'{cc:.3f}' if pid else ''},{sc:.3f},{runs_s},\n")
PY
}

# rr_row NAME NS ADDR: 1-byte TCP_RR from inside against the peer's rr server
rr_row() {
	local out
	out=$(timeout 40 ip netns exec "$2" "$RR" client --connect "$3:5401" --size 1 --count 20000 \
		--duration 20 2>&1)
	python3 - "$1" "$rrcsv" "$out" <<'PY'
import sys
name, csv, out = sys.argv[1:]
if not out.startswith("rr: "):
    note = "n/a (" + (out.strip().splitlines()[-1] if out.strip() else "no output").replace(",", ";") + ")"
    print(f"rr {name:<8} {note}")
    open(csv, "a").write(f"{name},,,,,,,,{note}\n"); sys.exit()
kv = dict(x.split("=") for x in out.split()[1:])
kern = None
for line in open(csv):
    f = line.strip().split(",")
    if f[0] == "kernel" and f[6]:
        kern = float(f[6])
ratio = f"{float(kv['tps']) / kern:.2f}" if kern else ""
print(f"rr {name:<8} {kv['transactions']:>6} p50 {float(kv['p50_us']):>6.0f} us  p99 {float(kv['p99_us']):>6.0f} us"
      f"  {float(kv['tps']):>8.0f} tps  x kernel {ratio or '-'}")
open(csv, "a").write(f"{name},{kv['transactions']},{kv['min_us']},{kv['p50_us']},{kv['p90_us']},"
                     f"{kv['p99_us']},{kv['tps']},{ratio},\n")
PY
}

echo "bench/face.sh: iperf3 -t $SECS, median of $REPS runs; $(nproc) CPUs; kernel $(uname -r)"
printf '%-8s %-4s %2s %8s %8s %8s %9s %9s\n' row dir P Gbit/s "x kernel" "x pasta" "carr s/GB" "sys s/GB"
bg "$PEER" iperf3 -s -B 10.67.0.1 -p 5201
bg "$PEER" "$RR" server --listen 10.67.0.1:5401 --duration 3600
wait_port "$PEER" 5201 && wait_port "$PEER" 5401 || { echo "bench/face.sh: the peer's servers did not start"; exit 1; }

rows_for() {	# rows_for NAME NS ADDR CPU_PID
	local s
	for s in $STREAMS; do
		row "$1" out "$s" "$2" "$3" "$4"
		row "$1" in "$s" "$2" "$3" "$4"
	done
	[ -x "$RR" ] && rr_row "$1" "$2" "$3"
}

# ---- the container's kernel alone on the veth ----
want kernel && rows_for kernel "$CT" 10.67.0.1 ""

# ---- pasta: its container reaches a peer behind its host's kernel ----
if want pasta; then
	if command -v pasta >/dev/null; then
		bg "$PP" iperf3 -s -B 10.89.0.5 -p 5201
		bg "$PP" "$RR" server --listen 10.89.0.5:5401 --duration 3600
		bg "$PH" pasta -f -q --runas 0 --config-net -T none -U none --netns "/run/netns/$CP"
		PASTA=$BG_PID
		if wait_port "$PP" 5201 && sleep 1 && ip netns exec "$CP" ping -c 1 -W 2 10.89.0.5 >/dev/null; then
			rows_for pasta "$CP" 10.89.0.5 "$PASTA"
		else
			echo "pasta: n/a (pasta did not come up)"
		fi
		kill "$PASTA" 2>/dev/null
	else
		echo "pasta: n/a (not installed)"
	fi
fi

# ---- sandnet's container face ----
dp_stats() { ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" "$@"; }
for ms in $(for m in hw hw-cubic hw-bbr hw-reno hw-percall hw-nopoll hw-noring hw-nice0 hw-iw0 sw; do for n in $SHARDS; do echo "$m:$n"; done; done); do
	m=${ms%%:*} n=${ms#*:}
	want "$m" || continue
	extra=$(bench_mode_args "$m")
	[ "$n" = auto ] && n=$(nproc)
	name=$m
	[ "$n" = 1 ] || name=$m-${n}sh
	rm -f "$CTL"
	ip netns exec "$DPNS" "$NETSETUP" run --netns "/run/netns/$CT" --gso "${m%%-*}" --shards "$n" -- \
		"$DATAPATH" --control "$CTL" $extra >"$TMP/dp-$m.log" 2>&1 &
	NS_PID=$!
	for _ in $(seq 100); do dp_stats >/dev/null 2>&1 && break; sleep 0.1; done
	DP_PID=$(pgrep -P "$(pgrep -P "$NS_PID" | head -n1)" | head -n1)	# the supervisor's child: the datapath that serves
	if [ -z "$DP_PID" ] || ! ip netns exec "$CT" ping -c 1 -W 2 10.67.0.1 >/dev/null; then
		echo "$m: n/a (the datapath did not come up: $(tail -n1 "$TMP/dp-$m.log"))"
	else
		rows_for "$name" "$CT" 10.67.0.1 "$DP_PID"
		if [[ " ${PERF:-} " == *" $m "* ]] && command -v perf >/dev/null; then
			for d in out in; do
				perf record -q -g -p "$DP_PID" -o "$TMP/perf.data" -- sleep "$SECS" >/dev/null 2>&1 &
				ppid=$!
				iperf_once "$CT" 10.67.0.1 1 "$([ $d = in ] && echo -R)" "$DP_PID" >/dev/null
				wait "$ppid"
				perf report -i "$TMP/perf.data" --stdio --no-children --percent-limit ${PERF_LIMIT:-1} \
					--sort dso,symbol -g none 2>/dev/null | grep -v '^$' | head -n 100 >"$OUT/perf-face-$name-$d.txt"
				echo "(face $name $d: perf profile of the datapath in $OUT/perf-face-$name-$d.txt)"
			done
		fi
		dp_stats --json >"$OUT/datapath-stats-face-$name.json" 2>/dev/null
	fi
	kill "$NS_PID" 2>/dev/null; wait "$NS_PID" 2>/dev/null
	NS_PID='' DP_PID=''
done
face_plot
echo "(results: $csv, $rrcsv)"
