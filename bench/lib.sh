# bench/lib.sh - what bench/tcp.sh, face.sh, nginx.sh and udp.sh share;
# sourced
#
# Debian's tools first (iperf3, nginx, pasta, python3 from apt-get), before
# whatever a login shell put in front of them (tests/run-tests.sh does the same)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
#
# bench_face_net CT PEER PH PP NET PNET: the container face benchmarks'
# namespaces (made already, lo up): a veth between CT (eth0 NET.2/24, default
# route via NET.1) and PEER (veth0 NET.1/24); and for pasta a veth between
# its host PH (ext0 PNET.1/24, default route via PNET.254, ping sockets
# allowed: pasta answers its container's pings with them) and a peer behind
# it PP (veth0 PNET.5/24). Veth names from $P. Fails when the veth does not
# pass.
bench_face_net() {
	local ct=$1 peer=$2 ph=$3 pp=$4 net=$5 pnet=$6
	ip link add ${P}a type veth peer name ${P}b &&
	ip link set ${P}a netns "$ct" name eth0 &&
	ip link set ${P}b netns "$peer" name veth0 &&
	ip -n "$ct" link set eth0 up &&
	ip -n "$peer" link set veth0 up &&
	ip -n "$ct" addr add "$net.2/24" dev eth0 &&
	ip -n "$ct" route add default via "$net.1" &&
	ip -n "$peer" addr add "$net.1/24" dev veth0 &&
	ip link add ${P}c type veth peer name ${P}d &&
	ip link set ${P}c netns "$ph" name ext0 &&
	ip link set ${P}d netns "$pp" name veth0 &&
	ip -n "$ph" link set ext0 up &&
	ip -n "$pp" link set veth0 up &&
	ip -n "$ph" addr add "$pnet.1/24" dev ext0 &&
	ip -n "$ph" route add default via "$pnet.254" &&
	ip netns exec "$ph" sysctl -qw net.ipv4.ping_group_range="0 2147483647" &&
	ip -n "$pp" addr add "$pnet.5/24" dev veth0 &&
	ip netns exec "$peer" ping -c 1 -W 2 "$net.2" >/dev/null
}
#
# bench_bg NS CMD...: start CMD in NS in the background, its output in
# $TMP/log-*, its pid in $BG_PID
bench_bg() {
	local ns=$1; shift
	ip netns exec "$ns" "$@" >"$TMP/log-$(basename "$1")-$RANDOM" 2>&1 &
	BG_PID=$!
}

# bench_wait_port NS PORT: until something listens on TCP PORT in NS (5 s at most)
bench_wait_port() {
	local i
	for ((i = 0; i < 50; i++)); do
		ip netns exec "$1" ss -Htln "sport = :$2" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# bench_plot CSV PLOT TITLE TMPDIR: a PNG of Gbit/s per row of CSV (columns
# row,direction,streams,gbit_per_s,...; rows named *-loss* and rows of
# another kind are left out), one cluster per row, one bar per direction x
# streams (as many as the CSV has: out before in, fewer streams first).
# Needs gnuplot (scripts/install-deps.sh); says so when it is missing.
bench_plot() {
	local csv=$1 plot=$2 title=$3 tmp=$4 ncols using i
	command -v gnuplot >/dev/null || { echo "(no plot: gnuplot not installed, scripts/install-deps.sh)"; return; }
	ncols=$(python3 - "$csv" "$tmp/plot.dat" <<'PY'
import sys
rows, cols, val = [], set(), {}
for line in list(open(sys.argv[1]))[1:]:
    f = line.split(",")
    if f[1] not in ("out", "in") or "-loss" in f[0]: continue
    if f[0] not in rows: rows.append(f[0])
    cols.add((f[1], int(f[2])))
    val[(f[0], (f[1], int(f[2])))] = f[3] or "0"
cols = sorted(cols, key=lambda c: (c[0] != "out", c[1]))
name = lambda c: f'"{c[0]}, {c[1]} stream{"s" if c[1] > 1 else ""}"'
with open(sys.argv[2], "w") as o:
    o.write("row " + " ".join(name(c) for c in cols) + "\n")
    for r in rows:
        o.write(r + " " + " ".join(val.get((r, c), "0") for c in cols) + "\n")
print(len(cols))
PY
)
	[ "${ncols:-0}" -gt 0 ] || { echo "(no plot: no rows in $csv)"; return; }
	using="\"$tmp/plot.dat\" using 2:xtic(1) title columnheader(2)"
	for i in $(seq 3 $((ncols + 1))); do using="$using, '' using $i title columnheader($i)"; done
	mkdir -p "$(dirname "$plot")"
	gnuplot <<GP 2>"$tmp/gnuplot.err" || { echo "bench: gnuplot failed: $(tail -n1 "$tmp/gnuplot.err")"; return; }
set terminal png size 960,540
set output "$plot"
set title "$title\\n$(date -u +%F), $(nproc) CPUs, kernel $(uname -r)"
set ylabel "Gbit/s (receiver)"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set key below horizontal
set grid ytics
set yrange [0:*]
plot $using
GP
	echo "(plot: $plot)"
}

# bench_ratio_plot DAT PLOT SIZE TITLE: a PNG of ratios to the kernel, one
# cluster per column of DAT's first field (a quoted label), one bar per
# further column (header line: "label ROW ROW ..."); SIZE as "1100,500".
# Needs gnuplot; says nothing when it is missing (the table is the result).
bench_ratio_plot() {
	local dat=$1 plot=$2 size=$3 title=$4 n i plots=""
	command -v gnuplot >/dev/null || return 0
	n=$(head -n1 "$dat" | wc -w)
	[ "$n" -ge 2 ] || return 0
	for ((i = 2; i <= n; i++)); do plots="$plots${plots:+, }'$dat' using $i:xtic(1) title columnheader($i)"; done
	gnuplot <<GP 2>/dev/null && echo "(plot: $plot)"
set terminal png size $size
set output "$plot"
set title "$title\\n$(date -u +%F), $(nproc) CPUs, kernel $(uname -r)"
set ylabel "x kernel"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set key below horizontal
set grid ytics
set yrange [0:*]
set xtics rotate by -30
plot $plots
GP
}

# bench_mode_args MODE: the datapath's options for a row's MODE: "hw-percall"
# is hw with --no-io-uring (the TUN read and written one packet per system
# call), "hw-nopoll" hw with --busy-poll 0 (the loop sleeps at once),
# "hw-nice0" hw with --nice 0 (the datapath at the programs' own priority;
# any hw-niceN maps to --nice N); "hw-iw0" is hw whose TUN routes lose the
# initcwnd netsetup gives them (bench_face_up): the kernel's ten segments);
# "hw-noring" hw with --no-rx-ring (the link's sockets read with recvmmsg());
# "hw-cubic", "hw-bbr", "hw-reno" hw with that --tcp-cc (without one the
# datapath runs the container namespace's own congestion control); "hw-names"
# hw with a name rule for the peer's web server (web.bench.test, which the
# benchmark's resolver must answer) and ICMP allowed (the ping that checks the
# path): egress is then refused by default, the container's DNS read, and
# each connection's first bytes read before they leave; "hw-flowlog" is
# hw-names with --flow-log (a record per connection, to BENCH_FLOWLOG,
# default /tmp/sandnet-bench-PID.flows: the caller removes it)
bench_mode_args() {
	case "${1#*-}" in
	names) echo --egress-allow tcp:web.bench.test:8080 --egress-allow icmp:any ;;
	flowlog) echo --egress-allow tcp:web.bench.test:8080 --egress-allow icmp:any \
		--flow-log "${BENCH_FLOWLOG:-/tmp/sandnet-bench-$$.flows}" ;;
	cubic|bbr|reno) echo --tcp-cc "${1#*-}" ;;
	percall) echo --no-io-uring ;;
	nopoll) echo --busy-poll 0 ;;
	noring) echo --no-rx-ring ;;
	nice*) echo --nice "${1##*-nice}" ;;
	esac
}

# bench_face_up MODE CT DPNS CTL LOG PEER_ADDR: netsetup run --gso MODE (and
# --shards $SHARDS, default 1: the rows stay comparable with the runs
# before the datapath's own default became one per CPU, which SHARDS=auto
# gives; MODE hw-percall, hw-nopoll, hw-nice0: bench_mode_args; MODE
# "default" is netsetup run with no option at all, as users start it) on
# CT with a datapath whose control socket is CTL; sets NS_PID (netsetup) and
# DP_PID (the datapath that serves: the supervisor's child), empty when it
# did not come up or CT cannot ping PEER_ADDR (then says why).
bench_face_up() {
	local m=$1 ct=$2 dpns=$3 ctl=$4 log=$5 peer=$6 extra=''
	rm -f "$ctl"
	extra=$(bench_mode_args "$m")
	if [ "$m" = default ]; then
		ip netns exec "$dpns" "$NETSETUP" run --netns "/run/netns/$ct" -- \
			"$DATAPATH" --control "$ctl" >"$log" 2>&1 &
	else
		ip netns exec "$dpns" "$NETSETUP" run --netns "/run/netns/$ct" --gso "${m%%-*}" \
			--shards "${SHARDS:-1}" -- "$DATAPATH" --control "$ctl" $extra >"$log" 2>&1 &
	fi
	NS_PID=$!
	for _ in $(seq 100); do
		ip netns exec "$dpns" "$DATAPATH" stats --control "$ctl" >/dev/null 2>&1 && break
		sleep 0.1
	done
	DP_PID=$(ip netns exec "$dpns" "$DATAPATH" stats --control "$ctl" --json 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null)
	if [ -z "$DP_PID" ] || ! ip netns exec "$ct" ping -c 1 -W 2 "$peer" >/dev/null; then
		echo "$m: n/a (the datapath did not come up: $(tail -n1 "$log"))"
		DP_PID=''
	fi
	if [ -n "$DP_PID" ] && [ "${m#*-}" = iw0 ]; then
		local r f
		for f in -4 -6; do
			ip -n "$ct" $f route show | grep " initcwnd " | while read -r r; do
				ip -n "$ct" $f route change ${r/ initcwnd 128/} initcwnd 0 ||
					echo "$m: could not take initcwnd from: $r"
			done
		done
	fi
}

# bench_start PREFIX VAR:NAME...: a benchmark's namespaces and scratch space.
# Sets P (PREFIX<pid>-), each VAR to ${P}NAME, ALL_NS (all of them), TMP (a
# folder readable by the datapath's user), CTL (the datapath's control
# socket in it), NS_PID and DP_PID (empty), and traps EXIT to bench_cleanup.
# The namespaces are not made here.
bench_start() {
	local pair
	P=$1$$-
	shift
	ALL_NS=''
	for pair in "$@"; do
		printf -v "${pair%%:*}" '%s' "$P${pair#*:}"
		ALL_NS="$ALL_NS $P${pair#*:}"
	done
	TMP=$(mktemp -d "/tmp/${P}XXXX")
	chmod 755 "$TMP"
	CTL=$TMP/dp.ctl
	NS_PID='' DP_PID=''
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}

# bench_cleanup: stop netsetup (NS_PID), everything in ALL_NS (TERM, then
# KILL), remove the namespaces and TMP (kept with KEEP_TMP set).
bench_cleanup() {
	local ns
	[ -n "$NS_PID" ] && { kill "$NS_PID"; wait "$NS_PID"; } 2>/dev/null
	for ns in $ALL_NS; do ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null; done
	sleep 0.2
	for ns in $ALL_NS; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}

# want ROW: is ROW in $ROWS?
want() { case " $ROWS " in *" $1 "*) return 0;; esac; return 1; }
