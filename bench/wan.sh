#!/usr/bin/env bash
# TCP on a WAN (issue 38): a program in the container against the peer's
# kernel through the impairment relay, with delay and random loss, next to
# the container's own kernel on the same path in the same run.
#
#   bench/wan.sh BUILD_DIR
#
#   ct ns: eth0 --- mid ns: [ra <-> impair_relay <-> rb] --- peer ns: veth0
#   (sandnet rows: netsetup run on ct, the datapath in dp)
#
# TSO, GSO and GRO are off on the four links, so every frame the relay loses
# is one MSS of data (a lost GSO frame would be dozens of segments at once).
# The relay delays each frame by RTT/2 each way and loses LOSS % of them,
# both ways (data and ACKs); it has no rate limit: what it can move (a few
# Gbit/s of MTU frames here) is the path's ceiling.
#
# Rows, "out" the container sends (iperf3 -c), "in" it receives (-R); the
# congestion control is the sender's:
#   out: kernel-cubic, kernel-bbr    the container's kernel (iperf3 -C)
#        sandnet-cubic, -reno, -bbr  netsetup run's defaults (shards, nice,
#                                    polling, pacing) with --tcp-cc cubic |
#                                    reno | bbr. Without --tcp-cc it runs the
#                                    container namespace's own congestion
#                                    control, which a namespace inherits from
#                                    the host (this one's: bbr): that row
#                                    runs without --tcp-cc, as users start it
#   in:  kernel-cubic, kernel-bbr    the peer's kernel sends to the container's
#        sandnet-cubic, sandnet-bbr  the peer sends (CUBIC | BBR) to sandnet's
#                                    receiver (the sandnet-cubic datapath: a
#                                    receiver's congestion control sends nothing)
# Each row's figure is iperf3's receiver Mbit/s, every run shown; with it
# the sender's retransmissions and RTOs (the kernel's TcpExtTCPTimeouts of
# the sending namespace, the datapath's own counters), and for sandnet the
# datapath's and the whole system's CPU seconds per GB. Ratios are sandnet
# over the kernel with the same congestion control in the same run.
#
# Short flows: the completion time of one 1 MiB and one 10 MiB transfer on a
# fresh connection (bench/wan_flow.py), up and down, at the (RTT, loss)
# points of FLOW_POINTS, FLOW_REPS runs each: the kernel with CUBIC and with
# BBR, sandnet with --tcp-cc cubic and --tcp-cc bbr; down, the peer sends
# with the row's congestion control; ratios to the kernel with the same one.
#
# Trace: at RTT 40 ms and 0.1 % loss (TRACE_POINT), one 1-stream upload per congestion
# control with sandnet's per-ACK trace (`datapath ss --trace`) and the
# kernel's `ss -ti` every 20 ms: cwnd, and what was delivered per 50 ms,
# over time.
#
# Environment: RTTS ("10 40 100" ms), LOSSES ("0 0.01 0.1 1 2" %), STREAMS
# ("1 4"; 4 streams only at the RTTs of STREAMS4_RTTS, "40"), DIRS ("out in"),
# ROWS_OUT, ROWS_IN (as above), SECS (iperf3 -t, 6), REPS (2), FLOWS ("1 10"
# MiB), FLOW_POINTS ("40:0.1 40:0 10:0.1 100:0.1"), FLOW_REPS (5), TRACE (1),
# TRACE_POINT (the trace's RTT:LOSS, "40:0.1"),
# OUT (bench/results), PLOT (docs/benchmarks-wan.png; the trace plot goes
# beside it as -trace.png).
# Results: OUT/wan.csv, wan-flows.csv, wan.md (the tables), the plots, the
# raw traces (trace-kernel-CC.txt, trace-sandnet-CC.jsonl);
# wan-flows-runs.txt: every short flow with its sender's retransmissions and
# RTOs (the datapath's for a sandnet upload, else the sending kernel's).
set -u
build=${1:?usage: bench/wan.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
RTTS=${RTTS:-10 40 100}
LOSSES=${LOSSES:-0 0.01 0.1 1 2}
STREAMS=${STREAMS:-1 4}
STREAMS4_RTTS=${STREAMS4_RTTS:-40}
DIRS=${DIRS:-out in}
ROWS_OUT=${ROWS_OUT:-kernel-cubic kernel-bbr sandnet-cubic sandnet-reno sandnet-bbr}
ROWS_IN=${ROWS_IN:-kernel-cubic kernel-bbr sandnet-cubic sandnet-bbr}
SECS=${SECS:-6}
REPS=${REPS:-2}
FLOWS=${FLOWS:-1 10}
FLOW_POINTS=${FLOW_POINTS:-40:0.1 40:0 10:0.1 100:0.1}
FLOW_REPS=${FLOW_REPS:-5}
TRACE=${TRACE:-1}
TRACE_POINT=${TRACE_POINT:-40:0.1}
OUT=${OUT:-$repo/bench/results}
PLOT=${PLOT:-$repo/docs/benchmarks-wan.png}
NETSETUP=$build/netsetup
DATAPATH=$build/datapath
RELAY=$build/tests/tools/impair_relay
HZ=$(getconf CLK_TCK)

[ "$(id -u)" -eq 0 ] || { echo "bench/wan.sh: needs root (namespaces)"; exit 1; }
for t in iperf3 python3 ethtool nstat; do
	command -v "$t" >/dev/null || { echo "bench/wan.sh: $t missing (scripts/install-deps.sh)"; exit 1; }
done
[ -x "$RELAY" ] || { echo "bench/wan.sh: $RELAY missing (make tools)"; exit 1; }
mkdir -p "$OUT"
. "$here/lib.sh"
bench_start bw CT:ct MID:mid PEER:peer DPNS:dp
RELAY_PID=

for ns in $ALL_NS; do ip netns add "$ns" && ip -n "$ns" link set lo up || exit 1; done
ip link add ${P}a type veth peer name ${P}b &&
ip link set ${P}a netns "$CT" name eth0 && ip link set ${P}b netns "$MID" name ra &&
ip link add ${P}c type veth peer name ${P}d &&
ip link set ${P}c netns "$MID" name rb && ip link set ${P}d netns "$PEER" name veth0 || exit 1
for dev in "$CT eth0" "$MID ra" "$MID rb" "$PEER veth0"; do
	set -- $dev
	ip -n "$1" link set "$2" up
	ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 ||
		{ echo "bench/wan.sh: ethtool -K $2 tso off gso off gro off failed"; exit 1; }
done
ip -n "$CT" addr add 10.71.0.2/24 dev eth0
ip -n "$CT" route add default via 10.71.0.1
ip -n "$PEER" addr add 10.71.0.1/24 dev veth0

csv=$OUT/wan.csv
fcsv=$OUT/wan-flows.csv
echo "row,sender_cc,dir,rtt_ms,loss_pct,streams,mbit_s,ratio_to_kernel,retrans,rtos,dp_cpu_s_per_gb,sys_cpu_s_per_gb,runs_mbit_s,note" >"$csv"
echo "row,dir,rtt_ms,loss_pct,mib,median_s,ratio_to_kernel,runs_s" >"$fcsv"
echo "# row dir rtt_ms loss_pct mib seconds sender_retrans sender_rtos" >"$OUT/wan-flows-runs.txt"

cpu_ticks() { [ -n "$1" ] && awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
sys_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
timeouts() { ip netns exec "$1" nstat -az TcpExtTCPTimeouts 2>/dev/null | awk '/TcpExtTCPTimeouts/ { print $2 }'; }
dp_counters() {	# "retrans rtos" of the network engine, every shard
	ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = [d] + d.get("shards", [])
print(sum(x["tcp"]["retrans_segs"] for x in s), sum(x["tcp"]["rtos"] for x in s))' 2>/dev/null || echo "0 0"
}

relay_up() {	# relay_up RTT LOSS
	relay_down
	ip netns exec "$MID" "$RELAY" --a ra --b rb --seed 38 --queue 1000000 --duration 7200 \
		--delay-ms $(($1 / 2)) --loss "$2" >"$TMP/relay.out" 2>"$TMP/relay.err" &
	RELAY_PID=$!
	for _ in $(seq 50); do grep -q ready "$TMP/relay.err" && return 0; sleep 0.1; done
	echo "bench/wan.sh: the relay did not start: $(cat "$TMP/relay.err")"
	exit 1
}
relay_down() { [ -n "$RELAY_PID" ] && { kill "$RELAY_PID"; wait "$RELAY_PID"; } 2>/dev/null; RELAY_PID=; }

sandnet_up() {	# sandnet_up [DATAPATH ARGS]: netsetup run's defaults (shards, nice, polling)
	rm -f "$CTL"
	ip netns exec "$DPNS" "$NETSETUP" run --netns "/run/netns/$CT" -- "$DATAPATH" --control "$CTL" "$@" \
		>"$TMP/dp.log" 2>&1 &
	NS_PID=$!
	for _ in $(seq 100); do
		ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" >/dev/null 2>&1 && break
		sleep 0.1
	done
	DP_PID=$(ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" --json 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null)
	for _ in 1 2 3; do ip netns exec "$CT" ping -c 1 -W 2 10.71.0.1 >/dev/null 2>&1 && return 0; done
	echo "sandnet did not come up: $(tail -n 2 "$TMP/dp.log")"
	return 1
}
sandnet_down() { [ -n "$NS_PID" ] && { kill "$NS_PID"; wait "$NS_PID"; } 2>/dev/null; NS_PID='' DP_PID=''; sleep 0.5; }

bench_bg "$PEER" iperf3 -s -B 10.71.0.1 -p 5201
bench_bg "$PEER" python3 "$here/wan_flow.py" serve 10.71.0.1 5301
bench_wait_port "$PEER" 5201 && bench_wait_port "$PEER" 5301 || { echo "bench/wan.sh: the peer's servers did not start"; exit 1; }

# one_run ROW CC DIR STREAMS: "mbit retrans rtos dp_ticks sys_ticks bytes" or "fail WHY"
one_run() {
	local row=$1 cc=$2 dir=$3 streams=$4 rev='' ccopt='' j=$TMP/iperf.json t0 t1 c0 c1 s0 s1 d0 d1 sender
	[ "$dir" = in ] && rev=-R
	case $row in kernel*) ccopt="-C $cc" ;; *) [ "$dir" = in ] && ccopt="-C $cc" ;; esac
	sender=$CT; [ "$dir" = in ] && sender=$PEER
	t0=$(timeouts "$sender"); c0=$(cpu_ticks "$DP_PID"); s0=$(sys_busy); d0=$(dp_counters)
	timeout $((SECS + 30)) ip netns exec "$CT" iperf3 -c 10.71.0.1 -p 5201 -t "$SECS" -P "$streams" $rev $ccopt \
		-J --connect-timeout 5000 >"$j" 2>&1
	t1=$(timeouts "$sender"); c1=$(cpu_ticks "$DP_PID"); s1=$(sys_busy); d1=$(dp_counters)
	python3 - "$j" "$row" "$dir" "${t0:-0}" "${t1:-0}" "$((c1 - c0))" "$((s1 - s0))" "$d0" "$d1" <<'PY'
import json, sys
j, row, d, t0, t1, cpu, sysb, d0, d1 = sys.argv[1:]
try:
    r = json.load(open(j))
except Exception:
    print("fail iperf3 printed no JSON"); sys.exit()
if "error" in r:
    print("fail", r["error"].replace(",", ";")); sys.exit()
e = r["end"]
rx = e["sum_received"]
retrans = e["sum_sent"].get("retransmits", 0)
rtos = int(t1) - int(t0)
if row.startswith("sandnet") and d == "out":
    a, b = map(int, d0.split()), map(int, d1.split())
    (r0, o0), (r1, o1) = list(a), list(b)
    retrans, rtos = r1 - r0, o1 - o0
print(f"{rx['bits_per_second'] / 1e6:.2f} {retrans} {rtos} {cpu} {sysb} {rx['bytes']}")
PY
}

want() { case " $DIRS " in *" $1 "*) return 0;; esac; return 1; }	# a direction asked for (DIRS)

declare -A RUNS
record() {	# record ROW CC DIR RTT LOSS STREAMS LINE
	RUNS["$1|$2|$3|$4|$5|$6"]+="$7;"
}

# sender_counts DIR ROW: "retrans rtos" of the sender of a short flow: the
# datapath's for a sandnet upload, else the sending namespace's kernel
sender_counts() {
	case $1:$2 in
	up:sandnet*) dp_counters ;;
	*) ip netns exec "$([ "$1" = up ] && echo "$CT" || echo "$PEER")" nstat -az TcpRetransSegs TcpExtTCPTimeouts 2>/dev/null |
		awk '/TcpRetransSegs/ { r = $2 } /TcpExtTCPTimeouts/ { t = $2 } END { print r + 0, t + 0 }' ;;
	esac
}

flow_runs() {	# flow_runs ROW RTT LOSS CC: FLOW_REPS up and down of each size, the sender with CC
	local row=$1 rtt=$2 loss=$3 cc=$4 mib d i t n0 n1
	for mib in $FLOWS; do
		for d in up down; do
			for ((i = 0; i < FLOW_REPS; i++)); do
				read -ra n0 <<<"$(sender_counts "$d" "$row")"
				t=$(timeout 150 ip netns exec "$CT" python3 "$here/wan_flow.py" "$d" 10.71.0.1 5301 \
					$((mib << 20)) "$cc" 2>&1 | tail -n1)
				read -ra n1 <<<"$(sender_counts "$d" "$row")"
				RUNS["flow|$row|$d|$rtt|$loss|$mib"]+="$t;"
				echo "$row $d $rtt $loss $mib $t $((n1[0] - n0[0])) $((n1[1] - n0[1]))" >>"$OUT/wan-flows-runs.txt"
			done
		done
	done
}

# The kernel's cwnd and bytes acknowledged every 20 ms while one upload runs: "t_us cwnd bytes_acked" lines
# (one process in the container's namespace: an `ip netns exec` per sample took 100 ms)
kernel_trace() {
	ip netns exec "$CT" python3 - "$1" "$((SECS + 2))" <<'PY'
import re, subprocess, sys, time
out, secs = open(sys.argv[1], "a"), float(sys.argv[2])
end = time.monotonic() + secs
while time.monotonic() < end:
    txt = subprocess.run(["ss", "-Htin", "dst 10.71.0.1 and dport = :5201"], capture_output=True, text=True).stdout
    best = None
    for l in txt.split("\n"):
        m, r, b = re.search(r"cwnd:(\d+)", l), re.search(r"delivery_rate (\d+)bps", l), re.search(r"bytes_acked:(\d+)", l)
        if m and b and (best is None or int(b.group(1)) > best[2]):
            best = (int(m.group(1)), int(r.group(1)) if r else 0, int(b.group(1)))
    if best:
        out.write(f"{int(time.monotonic() * 1e6)} {best[0]} {best[2]}\n")
    time.sleep(0.02)
PY
}

# netsetup run's default: the container namespace's congestion control; that
# row runs as a user's does, without --tcp-cc (cc_args)
NS_CC=$(ip netns exec "$CT" sysctl -n net.ipv4.tcp_congestion_control)
cc_args() { [ "$1" = "$NS_CC" ] || echo "--tcp-cc $1"; }
echo "bench/wan.sh: iperf3 -t $SECS, $REPS runs a row; $(nproc) CPUs; kernel $(uname -r); RTTs $RTTS ms, loss $LOSSES %"
echo "netsetup run's default here: $NS_CC (the sandnet-$NS_CC rows run without --tcp-cc)"
for rtt in $RTTS; do
	for loss in $LOSSES; do
		relay_up "$rtt" "$loss"
		streams_here=1
		case " $STREAMS4_RTTS " in *" $rtt "*) streams_here=$STREAMS ;; esac
		echo "--- RTT $rtt ms, loss $loss %: $(ip netns exec "$CT" ping -c 3 -i 0.2 -W 2 10.71.0.1 | tail -n1)"
		for ((rep = 0; rep < REPS; rep++)); do
			for dir in $DIRS; do
				rows=$ROWS_OUT; [ "$dir" = in ] && rows=$ROWS_IN
				for row in $rows; do
					case $row in kernel-*) ;; *) continue ;; esac
					for s in $streams_here; do
						record "$row" "${row#kernel-}" "$dir" "$rtt" "$loss" "$s" "$(one_run "$row" "${row#kernel-}" "$dir" "$s")"
					done
				done
			done
			# sandnet with each congestion control (out); "in" rows on the CUBIC one
			for cc in cubic reno bbr; do
				row=sandnet-$cc
				do_out='' do_in=''
				want out && case " $ROWS_OUT " in *" $row "*) do_out=1 ;; esac
				[ "$row" = sandnet-cubic ] && want in && do_in=1
				[ -n "$do_out$do_in" ] || continue
				sandnet_up $(cc_args "$cc") || continue
				for s in $streams_here; do
					[ -n "$do_out" ] && record "$row" "$cc" out "$rtt" "$loss" "$s" "$(one_run "$row" "$cc" out "$s")"
					[ -n "$do_in" ] || continue
					for inrow in $ROWS_IN; do
						case $inrow in sandnet-*) ;; *) continue ;; esac
						record "$inrow" "${inrow#sandnet-}" in "$rtt" "$loss" "$s" \
							"$(one_run "$inrow" "${inrow#sandnet-}" in "$s")"
					done
				done
				sandnet_down
			done
		done
		# short flows at this point?
		case " $FLOW_POINTS " in *" $rtt:$loss "*)
			flow_runs kernel-cubic "$rtt" "$loss" cubic
			flow_runs kernel-bbr "$rtt" "$loss" bbr
			sandnet_up $(cc_args cubic) && { flow_runs sandnet-cubic "$rtt" "$loss" cubic; sandnet_down; }
			sandnet_up $(cc_args bbr) && { flow_runs sandnet-bbr "$rtt" "$loss" bbr; sandnet_down; }
			;;
		esac
		# the trace plot's runs
		if [ "$TRACE" = 1 ] && [ "$rtt:$loss" = "$TRACE_POINT" ]; then
			for cc in cubic bbr; do
				: >"$TMP/trace-kernel-$cc.txt"
				kernel_trace "$TMP/trace-kernel-$cc.txt" &
				tp=$!
				one_run "kernel-$cc" "$cc" out 1 >/dev/null
				wait "$tp"
				sandnet_up $(cc_args "$cc") || continue
				ip netns exec "$DPNS" "$DATAPATH" ss --control "$CTL" --trace "$TMP/trace-sandnet-$cc.jsonl" \
					--seconds $((SECS + 1)) 10.71.0.1:5201 &
				tp=$!
				one_run "sandnet-$cc" "$cc" out 1 >/dev/null
				wait "$tp"
				sandnet_down
			done
		fi
		relay_down
	done
done

# The tables: every run, the median, the ratio to the kernel with the same congestion control.
for k in "${!RUNS[@]}"; do echo "$k=${RUNS[$k]}"; done >"$TMP/runs.txt"
python3 - "$TMP/runs.txt" "$csv" "$fcsv" "$OUT/wan.md" "$HZ" <<'PY'
import statistics, sys
runs, csv, fcsv, md, hz = sys.argv[1:]
hz = int(hz)
rows, flows = {}, {}
for line in open(runs):
    key, _, vals = line.rstrip("\n").partition("=")
    parts = key.split("|")
    items = [v for v in vals.split(";") if v]
    if parts[0] == "flow":
        flows[tuple(parts[1:])] = items
    else:
        rows[tuple(parts)] = items
order_out = ["sandnet-cubic", "kernel-cubic", "sandnet-reno", "sandnet-bbr", "kernel-bbr"]
order_in = ["sandnet-cubic", "kernel-cubic", "sandnet-bbr", "kernel-bbr"]
num = lambda x: float(x)
def med(k):
    vals = [v.split() for v in rows.get(k, []) if not v.startswith("fail")]
    if not vals:
        return None
    return {
        "mbit": statistics.median(float(v[0]) for v in vals),
        "runs": [float(v[0]) for v in vals],
        "retrans": statistics.median(int(v[1]) for v in vals),
        "rtos": statistics.median(int(v[2]) for v in vals),
        "dp": statistics.median(int(v[3]) / hz / (int(v[5]) / 1e9) for v in vals if int(v[5])),
        "sys": statistics.median(int(v[4]) / hz / (int(v[5]) / 1e9) for v in vals if int(v[5])),
    }
keys = sorted({(k[2], int(k[3]), float(k[4]), int(k[5])) for k in rows})
out = open(csv, "a")
lines = []
for d, rtt, loss, s in keys:
    order = order_out if d == "out" else order_in
    for row in order:
        cc = row.split("-")[-1]
        k = (row, cc, d, str(rtt), f"{loss:g}", str(s))
        cand = [kk for kk in rows if kk[0] == row and kk[2] == d and int(kk[3]) == rtt and float(kk[4]) == loss and int(kk[5]) == s]
        if not cand:
            continue
        m = med(cand[0])
        fails = [v for v in rows[cand[0]] if v.startswith("fail")]
        if m is None:
            out.write(f"{row},{cc},{d},{rtt},{loss:g},{s},,,,,,,,{fails[0] if fails else 'n/a'}\n")
            continue
        kref = [kk for kk in rows if kk[0] == f"kernel-{cc}" and kk[2] == d and int(kk[3]) == rtt and float(kk[4]) == loss and int(kk[5]) == s]
        km = med(kref[0]) if kref and not row.startswith("kernel") else None
        ratio = f"{m['mbit'] / km['mbit']:.2f}" if km and km["mbit"] else ""
        dp = f"{m['dp']:.2f}" if row.startswith("sandnet") else ""
        runs_s = " ".join(f"{x:.1f}" for x in m["runs"])
        out.write(f"{row},{cc},{d},{rtt},{loss:g},{s},{m['mbit']:.2f},{ratio},{m['retrans']:g},{m['rtos']:g},{dp},{m['sys']:.2f},{runs_s},{'; '.join(fails)}\n")
        lines.append((d, rtt, loss, s, row, m, ratio, dp, runs_s))
out.close()
fo = open(fcsv, "a")
flines = []
for (row, d, rtt, loss, mib), items in sorted(flows.items()):
    ts = [float(x) for x in items if not x.startswith("fail")]
    if not ts:
        fo.write(f"{row},{d},{rtt},{loss},{mib},,,{' '.join(items)}\n"); continue
    # the kernel with the same congestion control
    kt = [float(x) for x in flows.get(("kernel-bbr" if row.endswith("bbr") else "kernel-cubic", d, rtt, loss, mib), [])
          if not x.startswith("fail")]
    ratio = f"{statistics.median(ts) / statistics.median(kt):.2f}" if kt and not row.startswith("kernel") else ""
    fo.write(f"{row},{d},{rtt},{loss},{mib},{statistics.median(ts):.3f},{ratio},{' '.join(f'{x:.3f}' for x in ts)}\n")
    flines.append((row, d, rtt, loss, mib, statistics.median(ts), ratio, ts))
fo.close()
with open(md, "w") as f:
    f.write("| dir | RTT ms | loss % | streams | row | Mbit/s (median) | x kernel, same cc | retrans | RTOs | datapath s/GB | system s/GB | every run |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for d, rtt, loss, s, row, m, ratio, dp, runs_s in lines:
        f.write(f"| {d} | {rtt} | {loss:g} | {s} | {row} | {m['mbit']:.1f} | {ratio or '-'} | {m['retrans']:g} | {m['rtos']:g} | {dp or '-'} | {m['sys']:.2f} | {runs_s} |\n")
    f.write("\n| row | dir | RTT ms | loss % | MiB | completion s (median) | x kernel, same cc | every run |\n|---|---|---|---|---|---|---|---|\n")
    for row, d, rtt, loss, mib, mt, ratio, ts in flines:
        f.write(f"| {row} | {d} | {rtt} | {loss} | {mib} | {mt:.3f} | {ratio or '-'} | {' '.join(f'{x:.2f}' for x in ts)} |\n")
print(open(md).read())
PY

# The plots: Mbit/s against loss per RTT (bench/wan_plot.sh), and the senders over time.
if command -v gnuplot >/dev/null; then
	"$here/wan_plot.sh" "$csv" "$PLOT" "iperf3 -t $SECS, median of $REPS"
	if [ "$TRACE" = 1 ] && ls "$TMP"/trace-* >/dev/null 2>&1; then
		python3 - "$TMP" <<'PY'
import glob, json, os, sys
d = sys.argv[1]

def write(fn, pts):
    """pts: (t_us, cwnd, bytes delivered so far): cwnd, and Mbit/s over 50 ms windows"""
    t0 = pts[0][0]
    with open(fn, "w") as o:
        w0 = pts[0]
        for t, cw, b in pts:
            if b < w0[2]:
                break	# the upload ended: another connection's figures
            if t - w0[0] >= 50000:
                o.write(f"{(t - t0) / 1e6:.3f} {cw} {(b - w0[2]) * 8 / (t - w0[0]):.1f}\n")
                w0 = (t, cw, b)

for cc in ("cubic", "bbr"):
    k = f"{d}/trace-kernel-{cc}.txt"
    if os.path.exists(k):
        pts = [tuple(int(x) for x in l.split()) for l in open(k) if l.strip()]
        if len(pts) > 2:
            write(f"{d}/tp-kernel-{cc}.dat", pts)
    s = f"{d}/trace-sandnet-{cc}.jsonl"
    if os.path.exists(s):
        rows = [json.loads(l) for l in open(s) if '"event"' in l]
        rows = [r for r in rows if r["engine"] == "network" and r["event"] == "ack"]
        if rows:
            best = max({r["local"] for r in rows}, key=lambda l: sum(1 for r in rows if r["local"] == l))
            pts = [(r["t_us"], r["cwnd"], r["delivered"]) for r in rows if r["local"] == best]
            if len(pts) > 2:
                write(f"{d}/tp-sandnet-{cc}.dat", pts)
PY
		cp "$TMP"/trace-* "$OUT"/ 2>/dev/null	# the raw traces, beside the plot's data
		tplot=${PLOT%.png}-trace.png
		{
			echo "set terminal png size 1400,800"
			echo "set output '$tplot'"
			echo "set multiplot layout 2,1 title 'One upload at RTT ${TRACE_POINT%%:*} ms, ${TRACE_POINT#*:} % loss: the sender over time (sandnet: datapath ss --trace, per ACK; kernel: ss -ti every 20 ms)'"
			echo "set grid; set key top right; set xlabel 's'"
			p1='' p2=''
			for f in "$TMP"/tp-*.dat; do
				n=$(basename "$f" .dat); n=${n#tp-}
				p1="$p1${p1:+, }'$f' using 1:2 with lines title '$n'"
				p2="$p2${p2:+, }'$f' using 1:3 with lines title '$n'"
			done
			echo "set ylabel 'cwnd (segments)'; set logscale y; plot $p1"
			echo "set ylabel 'delivered, Mbit/s over 50 ms'; unset logscale y; plot $p2"
			echo "unset multiplot"
		} >"$TMP/tplot.gp"
		gnuplot "$TMP/tplot.gp" 2>"$TMP/gnuplot.err" && echo "(plot: $tplot)" || echo "gnuplot: $(tail -n 2 "$TMP/gnuplot.err")"
	fi
fi
echo "(results: $csv, $fcsv, $OUT/wan.md)"
