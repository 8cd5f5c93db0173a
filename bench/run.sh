#!/usr/bin/env bash
# make bench: UDP through sandnet next to the kernel, same veth, same run.
#
#   bench/run.sh BUILD_DIR [SECONDS] [REPS]
#
# Rows (each the median of REPS runs, default 3, of SECONDS, default 3):
#   kernel  SIZE  peer -> veth -> the container's kernel UDP socket
#   sandnet SIZE  peer -> veth -> datapath (--publish udp:5000=127.0.0.1:6000)
#                 -> a UDP socket in the datapath's netns
# and, outbound (UDP GSO, docs/gso.md):
#   kernel-fwd SIZE   the container's kernel UDP socket -> veth -> the peer's
#   off|sw|hw SIZE    a UDP socket in the datapath's netns -> datapath
#                     (--forward udp:127.0.0.1:8000=10.66.0.1:7000, --gso MODE)
#                     -> veth -> the peer's kernel UDP socket
# The sender (bench/udp_flood.c, sendmmsg x64) runs in the peer netns
# (outbound: the container's or the datapath's netns); the figure is what
# the receiving socket got. For sandnet rows the datapath's
# frames per receive syscall, its CPU time per datagram and the frames the
# kernel dropped on its channel socket (rx_kernel_drops) are shown.
# Outbound rows show the datapath's frames per send syscall and the UDP GSO
# frames it sent per second instead of the receive figures.
# Results: a table on stdout and BUILD_DIR/bench/udp.csv; docs/benchmarks.md
# records the latest figures.
set -u
build=${1:?usage: bench/run.sh BUILD_DIR [SECONDS]}
secs=${2:-3}
reps=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
NETSETUP=$build/netsetup
DATAPATH=$build/datapath
FLOOD=$build/bench/udp_flood
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root"; exit 1; }
mkdir -p "$build/bench"
${CC:-cc} -O2 -Wall -Wextra -Werror -o "$FLOOD" "$here/udp_flood.c" || exit 1

P=snbench$$-
CT=${P}ct PEER=${P}peer DPNS=${P}dp
TMP=$(mktemp -d /tmp/${P}XXXX)
CTL=$TMP/dp.ctl
NS_PID=
cleanup() {
	[ -n "$NS_PID" ] && { kill "$NS_PID"; wait "$NS_PID"; } 2>/dev/null
	for ns in "$CT" "$PEER" "$DPNS"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ns in "$CT" "$PEER" "$DPNS"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip link add ${P}a type veth peer name ${P}b
ip link set ${P}a netns "$CT" name eth0
ip link set ${P}b netns "$PEER" name veth0
ip -n "$CT" link set eth0 up
ip -n "$PEER" link set veth0 up
ip -n "$CT" addr add 10.66.0.2/24 dev eth0
ip -n "$PEER" addr add 10.66.0.1/24 dev veth0
ip netns exec "$PEER" ping -c 1 -W 2 10.66.0.2 >/dev/null

csv=$build/bench/udp.csv
echo "path,size,datagrams_per_s,gbit_per_s,rx_frames_per_syscall,cpu_us_per_datagram,rx_kernel_drops_per_s" >"$csv"
printf '%-8s %6s %14s %10s %14s %14s %14s\n' path size datagrams/s Gbit/s frames/syscall "cpu us/dgram" "chan drops/s"

dp_json() { ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" --json; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# one_run NAME SIZE DST PORT SINK_NS SINK_ADDR SINK_PORT: prints
# "datagrams bytes seconds frames_per_syscall cpu_us_per_datagram"
one_run() {
	local name=$1 size=$2 dst=$3 port=$4 sns=$5 saddr=$6 sport=$7
	local f0 s0 c0 k0 f1 s1 c1 k1 fps=- cpu=- kd=- n bytes t rpid
	ip netns exec "$sns" "$FLOOD" recv "$saddr" "$sport" "$secs" >"$TMP/recv" &
	rpid=$!
	sleep 0.3
	if [ "$name" = sandnet ]; then
		read -r f0 s0 k0 < <(dp_link_io)
		c0=$(cpu_ticks "$DP_PID")
	fi
	ip netns exec "$PEER" "$FLOOD" send "$dst" "$port" "$size" \
		"$(awk -v s="$secs" 'BEGIN { print s + 0.5 }')" >/dev/null
	wait "$rpid"
	read -r _ n bytes t <"$TMP/recv"
	if [ "$name" = sandnet ]; then
		read -r f1 s1 k1 < <(dp_link_io)
		kd=$((k1 - k0))
		c1=$(cpu_ticks "$DP_PID")
		fps=$(awk -v f="$((f1 - f0))" -v s="$((s1 - s0))" 'BEGIN { printf "%.1f", s ? f / s : 0 }')
		# clock ticks are 10 ms: CPU microseconds per datagram received
		[ "$n" -gt 0 ] && cpu=$(awk -v c="$((c1 - c0))" -v n="$n" 'BEGIN { printf "%.2f", c * 10000 / n }')
	fi
	echo "$n $bytes $t $fps $cpu $kd"
}

# row NAME SIZE ...: the median of $reps runs by datagrams per second
row() {
	local i
	for ((i = 0; i < reps; i++)); do one_run "$@"; done >"$TMP/runs"
	python3 - "$1" "$2" "$csv" "$TMP/runs" <<'PY'
import sys
name, size, csv, runs = sys.argv[1:]
rows = []
for line in open(runs):
    n, b, t, fps, cpu, kd = line.split()
    t = float(t) or 1.0
    kd = f"{int(kd) / t:,.0f}" if kd != "-" else kd
    rows.append((int(n) / t, int(b) * 8 / t / 1e9, fps, cpu, kd))
rows.sort()
dps, gbps, fps, cpu, kd = rows[len(rows) // 2]
print(f"{name:<8} {size:>6} {dps:>14,.0f} {gbps:>10.3f} {fps:>14} {cpu:>14} {kd:>14}"
      f"   (runs: {', '.join(f'{r[0]:,.0f}' for r in rows)})")
open(csv, "a").write(f"{name},{size},{dps:.0f},{gbps:.3f},{fps},{cpu},{kd.replace(',', '')}\n")
PY
}

# fwd_one NAME SIZE: one outbound run; prints
# "datagrams bytes seconds tx_frames_per_syscall cpu_us_per_datagram gso_frames"
fwd_one() {
	local name=$1 size=$2 sns=$DPNS dst=127.0.0.1 port=8000 f0 s0 g0 c0 f1 s1 g1 c1
	local fps=- cpu=- gso=- n bytes t rpid
	if [ "$name" = kernel-fwd ]; then
		sns=$CT dst=10.66.0.1 port=7000
	fi
	ip netns exec "$PEER" "$FLOOD" recv 10.66.0.1 7000 "$secs" >"$TMP/recv" &
	rpid=$!
	sleep 0.3
	if [ "$name" != kernel-fwd ]; then
		read -r f0 s0 g0 < <(dp_link_tx)
		c0=$(cpu_ticks "$DP_PID")
	fi
	ip netns exec "$sns" "$FLOOD" send "$dst" "$port" "$size" \
		"$(awk -v s="$secs" 'BEGIN { print s + 0.5 }')" >/dev/null
	wait "$rpid"
	read -r _ n bytes t <"$TMP/recv"
	if [ "$name" != kernel-fwd ]; then
		read -r f1 s1 g1 < <(dp_link_tx)
		c1=$(cpu_ticks "$DP_PID")
		fps=$(awk -v f="$((f1 - f0))" -v s="$((s1 - s0))" 'BEGIN { printf "%.1f", s ? f / s : 0 }')
		gso=$((g1 - g0))
		[ "$n" -gt 0 ] && cpu=$(awk -v c="$((c1 - c0))" -v n="$n" 'BEGIN { printf "%.2f", c * 10000 / n }')
	fi
	echo "$n $bytes $t $fps $cpu $gso"
}

# fwd_row NAME SIZE: the median of $reps outbound runs, with the ratio to
# the kernel-fwd row of the same size
fwd_row() {
	local i
	for ((i = 0; i < reps; i++)); do fwd_one "$@"; done >"$TMP/runs"
	python3 - "$1" "$2" "$csv" "$TMP/runs" "$TMP/kfwd.$2" <<'PY'
import os, sys
name, size, csv, runs, kref = sys.argv[1:]
rows = []
for line in open(runs):
    n, b, t, fps, cpu, gso = line.split()
    t = float(t) or 1.0
    gso = f"{int(gso) / t:,.0f}" if gso != "-" else gso
    rows.append((int(n) / t, int(b) * 8 / t / 1e9, fps, cpu, gso))
rows.sort()
dps, gbps, fps, cpu, gso = rows[len(rows) // 2]
if name == "kernel-fwd":
    open(kref, "w").write(f"{dps}\n")
ratio = dps / float(open(kref).read()) if os.path.exists(kref) else 0
print(f"{name:<10} {size:>6} {dps:>14,.0f} {gbps:>10.3f} {fps:>14} {cpu:>14} {gso:>14}"
      f"  x{ratio:.2f}   (runs: {', '.join(f'{r[0]:,.0f}' for r in rows)})")
open(csv, "a").write(f"{name},{size},{dps:.0f},{gbps:.3f},{fps},{cpu},{gso.replace(',', '')}\n")
PY
}

dp_link_tx() {
	dp_json | python3 -c 'import json,sys; d=json.load(sys.stdin); l=list(d["links"].values())[0]; print(l["tx_frames"], l["tx_syscalls"], d["counters"]["udp_tx_gso_frames"])'
}

dp_link_io() {
	dp_json | python3 -c 'import json,sys; l=list(json.load(sys.stdin)["links"].values())[0]; print(l["rx_frames"], l["rx_syscalls"], l["rx_kernel_drops"])'
}

for size in 64 1400; do
	row kernel "$size" 10.66.0.2 6000 "$CT" 10.66.0.2 6000
done
echo "outbound (CSV: the last three columns are tx frames/syscall, cpu us/datagram, UDP GSO frames/s):"
printf '%-10s %6s %14s %10s %14s %14s %14s\n' path size datagrams/s Gbit/s "tx frames/call" "cpu us/dgram" "gso frames/s"
for size in 64 1400; do
	fwd_row kernel-fwd "$size"
done

# one shard, as the runs before the default became one per CPU: its link's
# counters below are the whole datapath's
ip netns exec "$DPNS" "$NETSETUP" run --netns "/run/netns/$CT" --shards 1 -- \
	"$DATAPATH" --control "$CTL" --publish udp:5000=127.0.0.1:6000 >"$TMP/dp.log" 2>&1 &
NS_PID=$!
for _ in $(seq 100); do dp_json >/dev/null 2>&1 && break; sleep 0.1; done
DP_PID=$(pgrep -P "$(pgrep -P "$NS_PID" | head -n1)" | head -n1)	# the supervisor's child: the datapath that serves
[ -n "$DP_PID" ] || { cat "$TMP/dp.log"; echo "bench: the datapath did not start"; exit 1; }
ip netns exec "$PEER" ping -c 1 -W 2 10.66.0.2 >/dev/null

echo "inbound:"
printf '%-8s %6s %14s %10s %14s %14s %14s\n' path size datagrams/s Gbit/s frames/syscall "cpu us/dgram" "chan drops/s"
for size in 64 1400; do
	row sandnet "$size" 10.66.0.2 5000 "$DPNS" 127.0.0.1 6000
done
gso=$(dp_json | python3 -c 'import json,sys; print(list(json.load(sys.stdin)["links"].values())[0]["gso_mode"])')
echo "(sandnet link GSO mode: $gso)"
echo "outbound, through --forward:"
printf '%-10s %6s %14s %10s %14s %14s %14s\n' path size datagrams/s Gbit/s "tx frames/call" "cpu us/dgram" "gso frames/s"
kill "$NS_PID"; wait "$NS_PID" 2>/dev/null; NS_PID=

# Outbound through --forward, one datapath per GSO mode.
for mode in off sw hw; do
	ip netns exec "$DPNS" "$NETSETUP" run --netns "/run/netns/$CT" --gso "$mode" --shards 1 -- \
		"$DATAPATH" --control "$CTL" --forward udp:127.0.0.1:8000=10.66.0.1:7000 \
		>"$TMP/dp.log" 2>&1 &
	NS_PID=$!
	for _ in $(seq 100); do dp_json >/dev/null 2>&1 && break; sleep 0.1; done
	DP_PID=$(pgrep -P "$(pgrep -P "$NS_PID" | head -n1)" | head -n1)	# the supervisor's child: the datapath that serves
	[ -n "$DP_PID" ] || { cat "$TMP/dp.log"; echo "bench: the datapath did not start"; exit 1; }
	for size in 64 1400; do
		fwd_row "$mode" "$size"
	done
	kill "$NS_PID"; wait "$NS_PID" 2>/dev/null; NS_PID=
done
echo "($(nproc) CPUs; kernel $(uname -r); results in $csv)"
