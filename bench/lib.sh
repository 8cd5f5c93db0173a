# bench/lib.sh - what bench/tcp.sh, bench/face.sh and bench/nginx.sh share;
# sourced
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
# streams. Needs gnuplot (scripts/install-deps.sh); says so when it is missing.
bench_plot() {
	local csv=$1 plot=$2 title=$3 tmp=$4
	command -v gnuplot >/dev/null || { echo "(no plot: gnuplot not installed, scripts/install-deps.sh)"; return; }
	python3 - "$csv" "$tmp/plot.dat" <<'PY'
import sys
rows, cols = [], ["out 1", "out 4", "in 1", "in 4"]
names = {"out 1": "out, 1 stream", "out 4": "out, 4 streams", "in 1": "in, 1 stream", "in 4": "in, 4 streams"}
val = {}
for line in list(open(sys.argv[1]))[1:]:
    f = line.split(",")
    if f[1] not in ("out", "in") or "-loss" in f[0]: continue
    if f[0] not in rows: rows.append(f[0])
    val[(f[0], f"{f[1]} {f[2]}")] = f[3] or "0"
with open(sys.argv[2], "w") as o:
    o.write("row " + " ".join(f'"{names[c]}"' for c in cols) + "\n")
    for r in rows:
        o.write(r + " " + " ".join(val.get((r, c), "0") for c in cols) + "\n")
PY
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
plot "$tmp/plot.dat" using 2:xtic(1) title columnheader(2), '' using 3 title columnheader(3), \
	'' using 4 title columnheader(4), '' using 5 title columnheader(5)
GP
	echo "(plot: $plot)"
}
