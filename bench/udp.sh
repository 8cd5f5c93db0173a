#!/usr/bin/env bash
# UDP through the container face (issue 22): iperf3 -u from a program inside
# the container against the peer's kernel, both ways, next to the
# container's kernel alone on the same veth and to pasta, in the same run.
#
#   bench/udp.sh BUILD_DIR
#
# Environment: SECS (seconds per run, default 3), REPS (runs per figure,
# median, default 1), ROWS (default "kernel default hw sw pasta": "default"
# is netsetup run with no option, as users start it, the others one shard
# and a forced GSO mode; also hw-percall:
# hw with the TUN read and written one packet per system call; hw-nopoll: hw
# with --busy-poll 0; hw-noring: hw with --no-rx-ring, the link read with
# recvmmsg(); hw-nice0: hw with --nice 0), RATES (default
# "500M 1G 2G 0": iperf3 -b; 0 is as fast as it can), SIZES (default
# "1400 64"), OUT (default bench/results), PLOT (default
# docs/benchmarks-udp.png), PLOT_LOSS (default docs/benchmarks-udp-loss.png:
# every run's loss at 1G, bench/udp_loss_plot.sh).
#
# Namespaces "bu<pid>-*", removed on exit: ct (eth0 10.68.0.2), peer
# (veth0 10.68.0.1, iperf3 -s), dp (netsetup and the datapath); pasta's host
# ph (10.90.0.1) with a peer pp (10.90.0.5) behind it, and its container cp.
#
# Directions: out is the container sending (iperf3 -c), in is the peer
# sending (-R). Each row: offered load, goodput (what the receiver got, in
# Gbit/s), x kernel, loss % (iperf3's lost datagrams over sent), and the
# carrier's (datapath or pasta) CPU seconds per GB received. Rows "gso":
# tests/tools/udp_seq with UDP_SEGMENT, 46 datagrams of 1400 bytes (64 400
# bytes) a call, as fast as it can, out (the container's kernel builds UDP
# GSO frames) and in (the peer's): goodput and loss likewise. The kernel's
# own non-GSO figure is the "0" row of 1400 bytes. Each row also says where
# its runs lost datagrams ("lost at", summed over the runs; issue 22): the
# receiving socket (its namespace's UDP InErrors: a full receive buffer),
# the TUN's queue (tx_dropped out, rx_dropped in) and the datapath's
# channel (rx_kernel_drops: its queue or ring was full, and rx_truncated: a
# GSO frame larger than a ring slot found no room in the queue beside it).
# The channel counts frames: in a "gso" row one holds 46 datagrams.
set -u
build=${1:?usage: bench/udp.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
SECS=${SECS:-3}
REPS=${REPS:-1}
ROWS=${ROWS:-kernel default hw sw pasta}
RATES=${RATES:-500M 1G 2G 0}
SIZES=${SIZES:-1400 64}
OUT=${OUT:-$repo/bench/results}
PLOT=${PLOT:-$repo/docs/benchmarks-udp.png}
PLOT_LOSS=${PLOT_LOSS:-$repo/docs/benchmarks-udp-loss.png}
NETSETUP=$build/netsetup
DATAPATH=$build/datapath
SEQ=$build/tests/tools/udp_seq
HZ=$(getconf CLK_TCK)

[ "$(id -u)" -eq 0 ] || { echo "bench/udp.sh: needs root (namespaces)"; exit 1; }
for t in iperf3 python3; do
	command -v "$t" >/dev/null || { echo "bench/udp.sh: $t missing (scripts/install-deps.sh)"; exit 1; }
done
[ -x "$SEQ" ] || { echo "bench/udp.sh: $SEQ missing (make tools)"; exit 1; }
mkdir -p "$OUT"
. "$here/lib.sh"
bench_start bu CT:ct PEER:peer DPNS:dp PH:ph PP:pp CP:cp
csv=$OUT/udp-face.csv

for ns in $ALL_NS; do ip netns add "$ns" && ip -n "$ns" link set lo up || exit 1; done
bench_face_net "$CT" "$PEER" "$PH" "$PP" 10.68.0 10.90.0 || { echo "bench/udp.sh: the namespaces do not pass"; exit 1; }

cpu_ticks() { [ -n "$1" ] && awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
dp_stats() { ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" "$@"; }

# Where datagrams are lost (issue 22): the counters a run moves.
# udp_inerrors NS: the UDP InErrors of NS (a full receive buffer counts there)
udp_inerrors() {
	ip netns exec "$1" awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) k[i] = $i; h = 1 } else {
		for (i = 1; i <= NF; i++) if (k[i] == "InErrors") print $i } }' /proc/net/snmp
}
# drops CLIENT_NS SERVER_NS: "client_in_errors server_in_errors tun_tx_dropped
# tun_rx_dropped channel_drops" (the TUN's and the datapath's only with one)
drops() {
	local tun chan=0
	tun=$(ip -n "$1" -j -s link show sn-eth0 2>/dev/null | python3 -c '
import json, sys
try:
    s = json.load(sys.stdin)[0]["stats64"]; print(s["tx"]["dropped"], s["rx"]["dropped"])
except Exception:
    print(0, 0)')
	if [ -n "${DP_PID:-}" ]; then
		chan=$(dp_stats --json 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception:
    print(0); sys.exit()
print(sum(l.get("rx_kernel_drops", 0) + l.get("rx_truncated", 0)
          for s in [d] + d.get("shards", []) for l in s.get("links", {}).values()))')
	fi
	echo "$(udp_inerrors "$1") $(udp_inerrors "$2") $tun $chan"
}
# lost_at OUT|IN BEFORE AFTER: "sock tun chan", the datagrams each place dropped
lost_at() {
	python3 - "$@" <<'PY'
import sys
d, a, b = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
x = [int(q) - int(p) for p, q in zip(a, b)]
# out: the peer's socket receives, the TUN's transmit queue (the container's
# side) drops; in: the container's socket, the TUN's receive side
print(x[1] if d == "out" else x[0], x[2] if d == "out" else x[3], x[4])
PY
}
echo "row,direction,size,offered,goodput_gbit_per_s,ratio_to_kernel,loss_percent,carrier_cpu_s_per_gb,runs_gbit_per_s,runs_loss_percent,note" >"$csv"

# udp_once NS SERVER_NS ADDR SIZE RATE REV PID: "goodput_bps loss_pct bytes
# ticks lost_sock lost_tun lost_chan" or "fail WHY"
udp_once() {
	local ns=$1 sns=$2 addr=$3 size=$4 rate=$5 rev=$6 pid=$7 c0 c1 d0 d1 j=$TMP/iperf.json
	d0=$(drops "$ns" "$sns")
	c0=$(cpu_ticks "$pid")
	timeout $((SECS + 20)) ip netns exec "$ns" iperf3 -c "$addr" -p 5201 -u -b "$rate" -l "$size" \
		-t "$SECS" $rev -J --connect-timeout 3000 >"$j" 2>&1
	c1=$(cpu_ticks "$pid")
	d1=$(drops "$ns" "$sns")
	python3 - "$j" "$size" "$((c1 - c0))" $(lost_at "$([ -n "$rev" ] && echo in || echo out)" "$d0" "$d1") <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print("fail iperf3 printed no JSON"); sys.exit()
if "error" in d:
    print("fail", d["error"].replace(",", ";")); sys.exit()
s = d["end"]["sum"]
got = s["packets"] - s["lost_packets"]
secs = s["seconds"] or 1
print(got * int(sys.argv[2]) * 8 / secs, s["lost_percent"], got * int(sys.argv[2]), *sys.argv[3:7])
PY
}

# gso_once SEND_NS RECV_NS RECV_ADDR PID DIR: udp_seq with UDP_SEGMENT, as fast as it can
gso_once() {
	local sns=$1 rns=$2 raddr=$3 pid=$4 dir=$5 c0 c1 d0 d1 n=400000 rp cns=$1 pns=$2
	ip netns exec "$rns" "$SEQ" recv "$raddr" 5301 1400 "$n" 2 >"$TMP/seq.recv" 2>&1 &
	rp=$!
	for _ in $(seq 50); do grep -q listening "$TMP/seq.recv" && break; sleep 0.1; done
	[ "$dir" = in ] && { cns=$2; pns=$1; }
	d0=$(drops "$cns" "$pns")
	c0=$(cpu_ticks "$pid")
	ip netns exec "$sns" timeout 60 "$SEQ" send "$raddr" 5301 1400 "$n" 0 46 >"$TMP/seq.send" 2>&1
	wait "$rp"
	c1=$(cpu_ticks "$pid")
	d1=$(drops "$cns" "$pns")
	python3 - "$TMP/seq.send" "$TMP/seq.recv" "$((c1 - c0))" $(lost_at "$dir" "$d0" "$d1") <<'PY'
import sys
try:
    sent = int(open(sys.argv[1]).read().split()[1])
    r = open(sys.argv[2]).read().split("recv got ")[1].split()
    got, secs = int(r[0]), float(r[r.index("secs") + 1])
except Exception:
    print("fail udp_seq printed nothing"); sys.exit()
print(got * 1400 * 8 / max(secs, 0.01), 100 * (sent - got) / sent, got * 1400, *sys.argv[3:7])
PY
}

# row NAME DIR SIZE RATE PID CMD...: REPS runs of CMD, the median
row() {
	local name=$1 dir=$2 size=$3 rate=$4 pid=$5 i line; shift 5
	: >"$TMP/runs"
	for ((i = 0; i < REPS; i++)); do
		line=$("$@")
		echo "$line" >>"$TMP/runs"
		case $line in fail*) break;; esac
	done
	python3 - "$name" "$dir" "$size" "$rate" "$csv" "$TMP/runs" "$HZ" "$pid" <<'PY'
import sys, statistics
name, d, size, rate, csv, runs, hz, pid = sys.argv[1:]
rows, fail, at = [], None, [0, 0, 0]
for line in open(runs):
    f = line.split()
    if not f: continue
    if f[0] == "fail":
        fail = " ".join(f[1:]); break
    bps, loss, nbytes, ticks = float(f[0]), float(f[1]), int(f[2]), int(f[3])
    rows.append((bps / 1e9, loss, ticks / int(hz) / (nbytes / 1e9) if nbytes else 0))
    at = [a + int(v) for a, v in zip(at, f[4:7])] if len(f) >= 7 else at
offered = "max" if rate == "0" else rate
if fail or not rows:
    note = f"n/a ({fail})"
    print(f"{name:<6} {d:<3} {size:>5} {offered:>5}  {note}")
    open(csv, "a").write(f"{name},{d},{size},{offered},,,,,,,{note}\n"); sys.exit()
g, loss, cpu = (statistics.median(r[i] for r in rows) for i in range(3))
ref = None
for line in list(open(csv))[1:]:
    f = line.strip().split(",")
    if f[0] == "kernel" and f[1] == d and f[2] == size and f[3] == offered and f[4]:
        ref = float(f[4])
rk = f"{g / ref:.2f}" if ref and name != "kernel" else ""
cs = f"{cpu:.2f}" if pid else ""
runs_s = " ".join(f"{r[0]:.3f}" for r in rows)
runs_l = " ".join(f"{r[1]:.2f}" for r in rows)
# where the runs lost datagrams, all runs together: the receiving socket
# (InErrors), the TUN's queue, the datapath's channel (frames)
at_s = f"sock {at[0]} tun {at[1]} chan {at[2]}"
print(f"{name:<6} {d:<3} {size:>5} {offered:>5} {g:>8.3f} {rk or '-':>7} {loss:>7.2f} {cs or '-':>9}   "
      f"(runs: {runs_s} Gbit/s, {runs_l} % lost; lost at: {at_s})")
open(csv, "a").write(f"{name},{d},{size},{offered},{g:.4f},{rk},{loss:.3f},{cs},{runs_s},{runs_l},{at_s}\n")
PY
}

rows_for() {	# rows_for NAME CLIENT_NS SERVER_NS SERVER_ADDR PID
	local name=$1 cns=$2 sns=$3 addr=$4 pid=$5 size rate
	for size in $SIZES; do
		for rate in $RATES; do
			row "$name" out "$size" "$rate" "$pid" udp_once "$cns" "$sns" "$addr" "$size" "$rate" "" "$pid"
			row "$name" in "$size" "$rate" "$pid" udp_once "$cns" "$sns" "$addr" "$size" "$rate" -R "$pid"
		done
	done
	row "$name" out 1400 gso "$pid" gso_once "$cns" "$sns" "$addr" "$pid" out
	row "$name" in 1400 gso "$pid" gso_once "$sns" "$cns" "$(ip -n "$cns" -j -4 addr show scope global |
		python3 -c 'import json,sys; print([a["local"] for i in json.load(sys.stdin) for a in i["addr_info"]][0])')" "$pid" in
}

echo "bench/udp.sh: iperf3 -u -t $SECS, median of $REPS runs; $(nproc) CPUs; kernel $(uname -r)"
printf '%-6s %-3s %5s %5s %8s %7s %7s %9s\n' row dir size load Gbit/s "x kern" "loss %" "cpu s/GB"
bench_bg "$PEER" iperf3 -s -B 10.68.0.1 -p 5201
bench_wait_port "$PEER" 5201 || { echo "bench/udp.sh: the peer's iperf3 did not start"; exit 1; }

want kernel && rows_for kernel "$CT" "$PEER" 10.68.0.1 ""

if want pasta; then
	if command -v pasta >/dev/null; then
		bench_bg "$PP" iperf3 -s -B 10.90.0.5 -p 5201
		# -u 5301: the "in" gso row's datagrams to the host's address go into the container
		bench_bg "$PH" pasta -f -q --runas 0 --config-net -u 5301 -T none -U none --netns "/run/netns/$CP"
		PASTA=$BG_PID
		if bench_wait_port "$PP" 5201 && sleep 1 && ip netns exec "$CP" ping -c 1 -W 2 10.90.0.5 >/dev/null; then
			rows_for pasta "$CP" "$PP" 10.90.0.5 "$PASTA"
		else
			echo "pasta: n/a (pasta did not come up)"
		fi
		kill "$PASTA" 2>/dev/null
	else
		echo "pasta: n/a (not installed)"
	fi
fi

for m in default hw hw-percall hw-nopoll hw-noring hw-nice0 sw; do
	want "$m" || continue
	bench_face_up "$m" "$CT" "$DPNS" "$CTL" "$TMP/dp-$m.log" 10.68.0.1
	if [ -n "$DP_PID" ]; then
		rows_for "$m" "$CT" "$PEER" 10.68.0.1 "$DP_PID"
		dp_stats --json >"$OUT/datapath-stats-udp-$m.json" 2>/dev/null
		ip -n "$CT" -s link show sn-eth0 >"$OUT/udp-tun-$m.txt" 2>/dev/null
	fi
	kill "$NS_PID" 2>/dev/null; wait "$NS_PID" 2>/dev/null
	NS_PID=''
done

# the plot: goodput as a ratio to the kernel, 1400-byte rows
if command -v gnuplot >/dev/null; then
	python3 - "$csv" "$TMP/plot.dat" <<'PY'
import sys
rows, cols, val = [], [], {}
for line in list(open(sys.argv[1]))[1:]:
    f = line.strip().split(",")
    if f[2] != "1400" or not f[4]: continue
    col = f"{f[1]} {f[3]}"
    if col not in cols: cols.append(col)
    if f[0] not in rows: rows.append(f[0])
    val[(f[0], col)] = "1" if f[0] == "kernel" else (f[5] or "0")
with open(sys.argv[2], "w") as o:
    o.write("load " + " ".join(rows) + "\n")
    for c in cols:
        o.write('"' + c + '" ' + " ".join(val.get((r, c), "0") for r in rows) + "\n")
PY
	bench_ratio_plot "$TMP/plot.dat" "$PLOT" 1100,500 \
		"UDP through the container face, 1400-byte datagrams: goodput as a ratio to the kernel (iperf3 -u -t $SECS)"
fi
# the loss of every run at 1 Gbit/s, per row
case " $RATES " in *" 1G "*) "$here/udp_loss_plot.sh" "$PLOT_LOSS" 1G "$csv" || true ;; esac
echo "(results: $csv)"
