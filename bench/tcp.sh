#!/usr/bin/env bash
# TCP through sandnet next to the kernel, pasta and slirp4netns, same run.
#
#   bench/tcp.sh BUILD_DIR
#
# Environment: SECS (iperf3 -t, default 5), REPS (runs per figure, median,
# default 3), ROWS (default "kernel anchors pasta slirp4netns off sw hw nginx rr
# loss"),
# LOSS (percent for the loss rows, default 1), LOSS_MODES (sandnet modes that
# get loss rows, default "off": issue 5's measure),
# PERF (sandnet modes to profile with perf record, e.g. "hw"; default none),
# OUT (results directory, default bench/results of this tree; the plot goes to
# docs/benchmarks-tcp.png unless PLOT is set).
#
# Namespaces (names "bn<pid>-*", removed on exit):
#   ct    the container: eth0 10.66.0.2/24, its kernel stack or sandnet's
#   peer  a kernel stack: veth0 10.66.0.1/24 (the other end of eth0)
#   dp    where netsetup and the datapath run (the datapath's own netns)
#   ph/cp pasta's host side ("peer": ext0 10.88.0.1/24, a veth
#         whose other end stays there) and its container
#   sh/cs slirp4netns's host side and its container
#
# Rows, each with 1 and 4 streams (iperf3 -P 4), data flowing
#   out: from the container to the peer; in: from the peer into the container.
#   kernel   out: iperf3 -c in ct -> socat relay in ct (127.0.0.1:5301 ->
#            10.66.0.1:5201) -> ct kernel TCP -> veth -> iperf3 -s in peer
#            in:  iperf3 -c in peer -> 10.66.0.2:5201 socat relay in ct ->
#            127.0.0.1:5202 iperf3 -s in ct
#            The same hops as sandnet's (loopback + user-space relay + veth);
#            CPU is the relay's (socat and its reaped children).
#   anchors  kernel-notso and kernel-nogso: the kernel rows again with
#            "ethtool -K tso off" (the kernel segments in software, as
#            sandnet's sw mode does) and "tso off gso off" (one segment per
#            skb, as off mode) on both ends of the veth: sw's and off's
#            like-for-like bars
#   off/sw/hw  netsetup run --gso MODE -- datapath
#            --forward tcp:127.0.0.1:5301=10.66.0.1:5201 (out: iperf3 -c in dp)
#            --publish tcp:5201=127.0.0.1:5201 (in: iperf3 -s in dp)
#            CPU is the datapath's.
#   pasta    pasta --config-net in ph for cp: out: iperf3 -c in cp to the
#            gateway address (pasta maps it to ph's loopback); in: pasta -t 5201,
#            iperf3 -c in ph to 10.88.0.1:5201 (non-loopback: pasta's tap path,
#            not its splice path). CPU is pasta's; its default MTU (65520). It runs
#            as root (--runas 0): as nobody it cannot join a root-owned netns.
#   slirp4netns  out: iperf3 -c in cs to 10.0.2.2 (sh's loopback); in: hostfwd
#            127.0.0.1:5201 added through the API socket, iperf3 -c in sh.
#            CPU is slirp4netns's. MTU 65520.
#   nginx    a 10 MiB file, ab -c 5 -n 100 from peer: nginx on ct's kernel
#            stack vs nginx in dp behind --publish tcp:8080=127.0.0.1:8080
#            (each sandnet mode).
#   rr       tests/tools/rr, 80000-byte requests/responses: through the socat
#            relays (kernel) and --forward/--publish (sandnet, each mode).
#   loss     kernel-lossN and MODE-lossN: one stream each way while the peer
#            drops N % of the packets crossing its veth in each direction
#            (nftables numgen random); the ratio is to kernel-lossN.
# Gbit/s is iperf3's receiver figure (-J end.sum_received); CPU s/GB is the
# carrier's utime+stime (/proc/PID/stat) over the run per 1e9 bytes received.
# Ratios are to the kernel row of the same direction and stream count; a row
# that cannot run says "n/a (why)", a run that moved nothing says "stalled".
# Results: a table on stdout, OUT/tcp.csv, OUT/rr.csv, the datapath's counters
# after each mode (OUT/datapath-stats-MODE.json, summed over all of that
# mode's runs), the plot.
set -u
build=${1:?usage: bench/tcp.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
SECS=${SECS:-5}
REPS=${REPS:-3}
ROWS=${ROWS:-kernel anchors pasta slirp4netns off sw hw nginx rr loss}
LOSS=${LOSS:-1}
LOSS_MODES=${LOSS_MODES:-off}
OUT=${OUT:-$repo/bench/results}
PLOT=${PLOT:-$repo/docs/benchmarks-tcp.png}
NETSETUP=$build/netsetup
DATAPATH=$build/datapath
RR=$build/tests/tools/rr
HZ=$(getconf CLK_TCK)

[ "$(id -u)" -eq 0 ] || { echo "bench/tcp.sh: needs root (namespaces)"; exit 1; }
for t in iperf3 socat python3; do
	command -v "$t" >/dev/null || { echo "bench/tcp.sh: $t missing (scripts/install-deps.sh)"; exit 1; }
done
mkdir -p "$OUT"

. "$here/lib.sh"
bench_start bn CT:ct PEER:peer DPNS:dp PH:ph CP:cp SH:sh CS:cs

tcp_plot() { bench_plot "$csv" "$PLOT" "TCP into (in) and out of (out) the container, iperf3 -t $SECS, median of $REPS" "$TMP"; }

# PLOT_ONLY=1: redraw the plot from an existing $OUT/tcp.csv (give the SECS
# and REPS it was measured with, for the title) and stop
if [ -n "${PLOT_ONLY:-}" ]; then
	csv=$OUT/tcp.csv
	tcp_plot
	exit 0
fi

for ns in $ALL_NS; do ip netns add "$ns" && ip -n "$ns" link set lo up || exit 1; done
ip link add ${P}a type veth peer name ${P}b
ip link set ${P}a netns "$CT" name eth0
ip link set ${P}b netns "$PEER" name veth0
ip -n "$CT" link set eth0 up
ip -n "$PEER" link set veth0 up
ip -n "$CT" addr add 10.66.0.2/24 dev eth0
ip -n "$PEER" addr add 10.66.0.1/24 dev veth0
ip netns exec "$PEER" ping -c 1 -W 2 10.66.0.2 >/dev/null || { echo "bench/tcp.sh: veth does not pass"; exit 1; }
for ns in "$PH" "$SH"; do
	# no dummy module on these kernels: a veth pair inside the namespace
	ip -n "$ns" link add ext0 type veth peer name ext1
	ip -n "$ns" link set ext1 up
	ip -n "$ns" link set ext0 up
	ip -n "$ns" addr add 10.88.0.1/24 dev ext0
	ip -n "$ns" route add default via 10.88.0.254
done

csv=$OUT/tcp.csv
rrcsv=$OUT/rr.csv
echo "row,direction,streams,gbit_per_s,ratio_to_kernel,cpu_s_per_gb,runs_gbit_per_s,note" >"$csv"
echo "row,path,transactions,min_us,p50_us,p90_us,p99_us,tps,ratio_tps_to_kernel,note" >"$rrcsv"

# cpu_ticks PID: utime+stime, plus the reaped children's (socat forks one per connection)
cpu_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# wait_port NS ADDR PORT: until something listens on PORT in NS (5 s; ADDR is
# documentation: pasta listens on the wildcard of either family)
wait_port() { bench_wait_port "$1" "$3"; }
bg() { bench_bg "$@"; }

# iperf_once NS ADDR PORT STREAMS CPU_PID: prints "bits_per_s bytes cpu_ticks" or "fail REASON"
iperf_once() {
	local ns=$1 addr=$2 port=$3 streams=$4 pid=$5 c0 c1 j=$TMP/iperf.json
	c0=$(cpu_ticks "$pid")
	timeout $((SECS + 20)) ip netns exec "$ns" iperf3 -c "$addr" -p "$port" -t "$SECS" \
		-P "$streams" -J --connect-timeout 3000 >"$j" 2>&1
	sleep 0.3	# let a relay's children exit and be reaped
	c1=$(cpu_ticks "$pid")
	python3 - "$j" "$((c1 - c0))" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("fail iperf3 printed no JSON"); sys.exit()
if "error" in d:
    print("fail", d["error"].replace(",", ";")); sys.exit()
r = d["end"]["sum_received"]
print(r["bits_per_second"], r["bytes"], sys.argv[2])
PY
}

# row NAME DIR STREAMS NS ADDR PORT CPU_PID [BASE]: REPS runs, the median to the
# table and CSV, with the ratio to row BASE (default kernel)
row() {
	local name=$1 dir=$2 streams=$3 base=${8:-kernel} i line
	: >"$TMP/runs"
	for ((i = 0; i < REPS; i++)); do
		line=$(iperf_once "$4" "$5" "$6" "$streams" "$7")
		echo "$line" >>"$TMP/runs"
		case $line in fail*) break;; esac
	done
	python3 - "$name" "$dir" "$streams" "$csv" "$TMP/runs" "$HZ" "$base" <<'PY'
import sys, statistics
name, d, streams, csv, runs, hz, base = sys.argv[1:]
rows, fail = [], None
for line in open(runs):
    f = line.split()
    if not f: continue
    if f[0] == "fail":
        fail = " ".join(f[1:]); break
    bps, nbytes, ticks = float(f[0]), int(f[1]), int(f[2])
    rows.append((bps / 1e9, int(ticks) / int(hz) / (nbytes / 1e9) if nbytes else 0))
if fail or not rows:
    note = f"n/a (iperf3 failed: {fail})"
    print(f"{name:<12} {d:<4} {streams:>2}  {note}")
    open(csv, "a").write(f"{name},{d},{streams},,,,,{note}\n")
    sys.exit()
g = statistics.median(r[0] for r in rows)
c = statistics.median(r[1] for r in rows)
stalled = g < 0.01
kern = None
for line in open(csv):
    f = line.strip().split(",")
    if f[0] == base and f[1] == d and f[2] == streams and f[3]:
        kern = float(f[3])
ratio = f"{g / kern:.2f}" if kern else "-"
runs_s = " ".join(f"{r[0]:.2f}" for r in rows)
note = "stalled: iperf3 received (almost) nothing" if stalled else ""
cs = "-" if stalled else f"{c:.2f}"
print(f"{name:<12} {d:<4} {streams:>2} {g:>9.2f} {ratio:>9} {cs:>10}   (runs: {runs_s}) {note}")
open(csv, "a").write(f"{name},{d},{streams},{g:.3f},{ratio if kern else ''},{'' if stalled else f'{c:.3f}'},{runs_s},{note}\n")
PY
}

# na NAME REASON: both directions and stream counts marked not run
na() {
	local d s
	for d in out in; do for s in 1 4; do
		printf '%-12s %-4s %2s  n/a (%s)\n' "$1" "$d" "$s" "$2"
		echo "$1,$d,$s,,,,,n/a ($2)" >>"$csv"
	done; done
}


# loss_set PERCENT: the peer drops PERCENT % of what crosses its veth, each
# way (nftables numgen: the kernel here has no netem); 0 removes the rule
loss_set() {
	ip netns exec "$PEER" nft delete table inet bnloss 2>/dev/null
	[ "$1" = 0 ] && return 0
	ip netns exec "$PEER" nft -f - <<NFT
table inet bnloss {
	chain in { type filter hook input priority 0; iifname "veth0" numgen random mod 100 < $1 drop; }
	chain out { type filter hook output priority 0; oifname "veth0" numgen random mod 100 < $1 drop; }
}
NFT
}

# loss_rows NAME NS_OUT ADDR_OUT NS_IN CPU_PID_OUT CPU_PID_IN: one stream each way at $LOSS %
loss_rows() {
	if ! loss_set "$LOSS"; then
		echo "$1-loss$LOSS: n/a (nft could not add the loss rule)"
		return
	fi
	row "$1-loss$LOSS" out 1 "$2" "$3" 5301 "$5" "kernel-loss$LOSS"
	row "$1-loss$LOSS" in 1 "$4" 10.66.0.2 5201 "$6" "kernel-loss$LOSS"
	loss_set 0
}

# rr_row NAME PATH NS ADDR PORT: one rr client run against a server already up,
# to $rrcsv (the rr table is printed at the end)
rr_row() {
	local name=$1 path=$2 ns=$3 addr=$4 port=$5 out
	out=$(timeout 40 ip netns exec "$ns" "$RR" client --connect "$addr:$port" --size 80000 \
		--count 2000 --duration 20 2>&1)
	python3 - "$name" "$path" "$rrcsv" "$out" <<'PY'
import sys
name, path, csv, out = sys.argv[1:]
if not out.startswith("rr: "):
    note = "n/a (" + out.strip().splitlines()[-1].replace(",", ";") + ")" if out.strip() else "n/a (no output)"
    open(csv, "a").write(f"{name},{path},,,,,,,,{note}\n"); sys.exit()
kv = dict(x.split("=") for x in out.split()[1:])
kern = None
for line in open(csv):
    f = line.strip().split(",")
    if f[0] == "kernel" and f[1] == path and f[7]:
        kern = float(f[7])
ratio = f"{float(kv['tps']) / kern:.2f}" if kern else ""
open(csv, "a").write(f"{name},{path},{kv['transactions']},{kv['min_us']},{kv['p50_us']},{kv['p90_us']},"
                     f"{kv['p99_us']},{kv['tps']},{ratio},\n")
PY
}

# nginx_start NS LISTEN: nginx serving $TMP/www on LISTEN, pid in NGINX_PID
nginx_start() {
	local ns=$1 listen=$2 dir=$TMP/nginx-$1
	mkdir -p "$dir"
	cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 64; }
http {
	access_log off;
	sendfile on;
	client_body_temp_path $dir;
	proxy_temp_path $dir;
	fastcgi_temp_path $dir;
	uwsgi_temp_path $dir;
	scgi_temp_path $dir;
	server { listen $listen; root $TMP/www; }
}
EOF
	bg "$ns" nginx -p "$dir" -c "$dir/nginx.conf"
	NGINX_PID=$BG_PID
	wait_port "$ns" "${listen%:*}" "${listen##*:}"
}

# nginx_row NAME: ab from peer against 10.66.0.2:8080, to the table and CSV
nginx_row() {
	local name=$1 out
	out=$(timeout 120 ip netns exec "$PEER" ab -q -c 5 -n 100 -s 10 "http://10.66.0.2:8080/f10m" 2>&1)
	python3 - "$name" "$csv" "$out" <<'PY'
import re, sys
name, csv, out = sys.argv[1:]
m = re.search(r"Requests per second:\s+([\d.]+)", out)
t = re.search(r"Transfer rate:\s+([\d.]+)", out)
failed = re.search(r"Failed requests:\s+(\d+)", out)
if not m or not t or (failed and int(failed.group(1))):
    why = (failed and f"{failed.group(1)} failed requests") or out.strip().splitlines()[-1] if out.strip() else "no output"
    print(f"{name:<12} http  5  n/a (ab: {why})")
    open(csv, "a").write(f"{name},http,5,,,,,n/a (ab: {str(why).replace(',', ';')})\n"); sys.exit()
rps = float(m.group(1)); gbps = float(t.group(1)) * 1024 * 8 / 1e9
kern = None
for line in open(csv):
    f = line.strip().split(",")
    if f[0] == "nginx-kernel" and f[1] == "http" and f[7]:
        kern = float(f[7].split()[0])
ratio = f"{rps / kern:.2f}" if kern else "-"
print(f"{name:<12} http  5 {gbps:>9.2f} {ratio:>9} {'-':>10}   ({rps:.1f} req/s)")
open(csv, "a").write(f"{name},http,5,{gbps:.3f},{ratio if kern else ''},,,{rps:.1f} req/s\n")
PY
}

echo "bench/tcp.sh: iperf3 -t $SECS, median of $REPS runs; $(nproc) CPUs; kernel $(uname -r)"
printf '%-12s %-4s %2s %9s %9s %10s\n' row dir P Gbit/s "x kernel" "CPU s/GB"

# ---- kernel rows: the container's kernel stack and a socat relay ----
# socat's default 8 KiB buffer would hold the kernel row back: 256 KiB
SOCAT_OPTS=reuseaddr,fork,nodelay
bg "$PEER" iperf3 -s -B 10.66.0.1 -p 5201
bg "$CT" iperf3 -s -B 127.0.0.1 -p 5202
bg "$CT" socat -b 262144 "TCP4-LISTEN:5301,bind=127.0.0.1,$SOCAT_OPTS" TCP4:10.66.0.1:5201,nodelay
K_OUT=$BG_PID
bg "$CT" socat -b 262144 "TCP4-LISTEN:5201,bind=10.66.0.2,$SOCAT_OPTS" TCP4:127.0.0.1:5202,nodelay
K_IN=$BG_PID
wait_port "$PEER" 10.66.0.1 5201 && wait_port "$CT" 127.0.0.1 5202 &&
	wait_port "$CT" 127.0.0.1 5301 && wait_port "$CT" 10.66.0.2 5201 ||
	{ echo "bench/tcp.sh: the kernel row's servers did not start"; exit 1; }
if want kernel; then
	for s in 1 4; do
		row kernel out "$s" "$CT" 127.0.0.1 5301 "$K_OUT"
		row kernel in "$s" "$PEER" 10.66.0.2 5201 "$K_IN"
	done
fi
# the like-for-like anchors for sw and off: the same relay and veth with the
# kernel's own software GSO (tso off) and with no GSO at all (tso off gso off),
# on both ends of the veth; restored before sandnet's rows, whose hw mode needs TSO
if want anchors; then
	for a in notso nogso; do
		feats="tso off"
		[ "$a" = nogso ] && feats="tso off gso off"
		ip netns exec "$CT" ethtool -K eth0 $feats && ip netns exec "$PEER" ethtool -K veth0 $feats ||
			{ echo "kernel-$a: n/a (ethtool -K $feats refused)"; continue; }
		for s in 1 4; do
			row "kernel-$a" out "$s" "$CT" 127.0.0.1 5301 "$K_OUT"
			row "kernel-$a" in "$s" "$PEER" 10.66.0.2 5201 "$K_IN"
		done
	done
	ip netns exec "$CT" ethtool -K eth0 tso on gso on
	ip netns exec "$PEER" ethtool -K veth0 tso on gso on
fi
want loss && loss_rows kernel "$CT" 127.0.0.1 "$PEER" "$K_OUT" "$K_IN"

# rr servers: peer (outbound target) and ct/dp (inbound targets); kernel relays
if want rr; then
	bg "$PEER" "$RR" server --listen 10.66.0.1:5401 --duration 3600
	bg "$CT" "$RR" server --listen 127.0.0.1:5402 --duration 3600
	bg "$CT" socat -b 262144 "TCP4-LISTEN:5302,bind=127.0.0.1,$SOCAT_OPTS" TCP4:10.66.0.1:5401,nodelay
	bg "$CT" socat -b 262144 "TCP4-LISTEN:5400,bind=10.66.0.2,$SOCAT_OPTS" TCP4:127.0.0.1:5402,nodelay
	bg "$DPNS" "$RR" server --listen 127.0.0.1:5402 --duration 3600
	wait_port "$CT" 10.66.0.2 5400 && wait_port "$CT" 127.0.0.1 5302 && wait_port "$PEER" 10.66.0.1 5401
	rr_row kernel out "$CT" 127.0.0.1 5302
	rr_row kernel in "$PEER" 10.66.0.2 5400
fi

# nginx: the 10 MiB file on the container's kernel stack
if want nginx; then
	mkdir -p "$TMP/www" && chmod 755 "$TMP/www"
	head -c $((10 << 20)) /dev/urandom >"$TMP/www/f10m" && chmod 644 "$TMP/www/f10m"
	if ! command -v nginx >/dev/null || ! command -v ab >/dev/null; then
		echo "nginx-kernel http  5  n/a (nginx or ab not installed: scripts/install-deps.sh)"
		echo "nginx-kernel,http,5,,,,,n/a (nginx or ab not installed)" >>"$csv"
	elif nginx_start "$CT" 10.66.0.2:8080; then
		nginx_row nginx-kernel
		kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null
	else
		echo "nginx-kernel http  5  n/a (nginx did not start: $(tail -n1 "$TMP"/nginx-"$CT"/error.log 2>/dev/null))"
	fi
fi

# ---- pasta: host side in ph, container cp ----
if want pasta; then
	if ! command -v pasta >/dev/null; then
		na pasta "pasta not installed: scripts/install-deps.sh"
	else
		bg "$PH" iperf3 -s -p 5203
		bg "$CP" iperf3 -s -p 5201
		bg "$PH" pasta -f -q --runas 0 --config-net -t 5201 -T none -u none -U none --netns "/run/netns/$CP"
		PASTA=$BG_PID
		if wait_port "$PH" 0.0.0.0 5201 && wait_port "$CP" 0.0.0.0 5201 &&
			sn_gw=$(ip -n "$CP" -4 route show default | awk '{ print $3; exit }') && [ -n "$sn_gw" ]; then
			for s in 1 4; do
				row pasta out "$s" "$CP" "$sn_gw" 5203 "$PASTA"
				row pasta in "$s" "$PH" 10.88.0.1 5201 "$PASTA"
			done
		else
			na pasta "pasta did not come up: $(tail -n1 "$TMP"/log-pasta-* 2>/dev/null)"
		fi
		kill "$PASTA" 2>/dev/null
	fi
fi

# ---- slirp4netns: host side in sh, container cs ----
if want slirp4netns; then
	if ! command -v slirp4netns >/dev/null; then
		na slirp4netns "slirp4netns not installed: scripts/install-deps.sh"
	else
		bg "$SH" iperf3 -s -B 127.0.0.1 -p 5203
		bg "$CS" iperf3 -s -p 5201
		bg "$SH" slirp4netns --configure --mtu=65520 --api-socket "$TMP/slirp.sock" \
			--netns-type=path "/run/netns/$CS" tap0
		SLIRP=$BG_PID
		ok=
		for _ in $(seq 50); do [ -S "$TMP/slirp.sock" ] && ok=1 && break; sleep 0.1; done
		if [ -n "$ok" ] && reply=$(echo '{"execute": "add_hostfwd", "arguments": {"proto": "tcp",
			"host_addr": "127.0.0.1", "host_port": 5201, "guest_port": 5201}}' |
			ip netns exec "$SH" socat -t 2 - "UNIX-CONNECT:$TMP/slirp.sock") &&
			[[ $reply == *return* ]] && wait_port "$SH" 127.0.0.1 5201; then
			for s in 1 4; do
				row slirp4netns out "$s" "$CS" 10.0.2.2 5203 "$SLIRP"
				row slirp4netns in "$s" "$SH" 127.0.0.1 5201 "$SLIRP"
			done
		else
			na slirp4netns "slirp4netns did not come up: ${reply:-no API socket}"
		fi
		kill "$SLIRP" 2>/dev/null
	fi
fi

# ---- sandnet: netsetup run --gso MODE -- datapath --forward/--publish tcp ----
dp_stats() { ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" "$@"; }

# sandnet_up MODE: start; on failure print why in SN_WHY and return 1
sandnet_up() {
	local i
	rm -f "$CTL"
	ip netns exec "$DPNS" "$NETSETUP" run --netns "/run/netns/$CT" --gso "$1" --shards 1 -- \
		"$DATAPATH" --control "$CTL" \
		--forward tcp:127.0.0.1:5301=10.66.0.1:5201 --publish tcp:5201=127.0.0.1:5201 \
		--forward tcp:127.0.0.1:5302=10.66.0.1:5401 --publish tcp:5400=127.0.0.1:5402 \
		--publish tcp:8080=127.0.0.1:8080 >"$TMP/dp-$1.log" 2>&1 &
	NS_PID=$!
	for ((i = 0; i < 100; i++)); do
		dp_stats >/dev/null 2>&1 && break
		kill -0 "$NS_PID" 2>/dev/null || break
		sleep 0.1
	done
	DP_PID=$(pgrep -P "$(pgrep -P "$NS_PID" | head -n1)" | head -n1)	# the supervisor's child: the datapath that serves
	if ! dp_stats >/dev/null 2>&1 || [ -z "$DP_PID" ]; then
		SN_WHY="the datapath did not start: $(grep -v '^$' "$TMP/dp-$1.log" | tail -n1)"
		sandnet_down
		return 1
	fi
	wait_port "$DPNS" 127.0.0.1 5301
	ip netns exec "$PEER" ping -c 1 -W 2 10.66.0.2 >/dev/null
}

sandnet_down() {
	[ -n "$NS_PID" ] && { kill "$NS_PID"; wait "$NS_PID"; } 2>/dev/null
	NS_PID='' DP_PID=''
	# netsetup gave the address back: wait for it
	for _ in $(seq 30); do
		ip -n "$CT" -4 addr show dev eth0 | grep -q 10.66.0.2 && break
		sleep 0.1
	done
}

SN_MODES=
for m in off sw hw; do want "$m" && SN_MODES="$SN_MODES $m"; done
if [ -n "$SN_MODES" ] || want rr || want nginx; then
	# the sandnet rows' servers in the datapath's netns
	bg "$DPNS" iperf3 -s -B 127.0.0.1 -p 5201
	wait_port "$DPNS" 127.0.0.1 5201
	[ -x "$DATAPATH" ] && [ -x "$NETSETUP" ] || SN_BUILT="netsetup/datapath not built in $build"
	for m in ${SN_MODES:-sw}; do
		if [ -n "${SN_BUILT:-}" ]; then
			want "$m" && na "$m" "$SN_BUILT"
			want rr && echo "$m,out,,,,,,,,n/a ($SN_BUILT)" >>"$rrcsv"
			continue
		fi
		if ! sandnet_up "$m"; then
			want "$m" && na "$m" "$SN_WHY"
			want rr && echo "$m,out,,,,,,,,n/a ($SN_WHY)" >>"$rrcsv"
			continue
		fi
		gso=$(dp_stats --json 2>/dev/null | python3 -c 'import json,sys; print(list(json.load(sys.stdin)["links"].values())[0].get("gso_mode","?"))' 2>/dev/null)
		echo "(sandnet $m: the datapath reports link GSO mode ${gso:-?})"
		if want "$m"; then
			for s in 1 4; do
				row "$m" out "$s" "$DPNS" 127.0.0.1 5301 "$DP_PID"
				row "$m" in "$s" "$PEER" 10.66.0.2 5201 "$DP_PID"
			done
		fi
		# issue 5: single stream at $LOSS % loss, GSO off (LOSS_MODES)
		if want loss && [[ " $LOSS_MODES " == *" $m "* ]]; then
			loss_rows "$m" "$DPNS" 127.0.0.1 "$PEER" "$DP_PID" "$DP_PID"
		fi
		# PERF="MODE...": one more outbound and inbound run with the datapath
		# under perf record; the top of the profile goes to OUT/perf-MODE-DIR.txt
		if [[ " ${PERF:-} " == *" $m "* ]] && command -v perf >/dev/null; then
			for d in out in; do
				perf record -q -g -p "$DP_PID" -o "$TMP/perf.data" -- sleep "$SECS" >/dev/null 2>&1 &
				ppid=$!
				if [ "$d" = out ]; then
					iperf_once "$DPNS" 127.0.0.1 5301 1 "$DP_PID" >/dev/null
				else
					iperf_once "$PEER" 10.66.0.2 5201 1 "$DP_PID" >/dev/null
				fi
				wait "$ppid"
				perf report -i "$TMP/perf.data" --stdio --no-children --percent-limit 1 \
					--sort dso,symbol -g none 2>/dev/null | grep -v '^$' | head -n 60 >"$OUT/perf-$m-$d.txt"
				echo "(sandnet $m $d: perf profile of the datapath in $OUT/perf-$m-$d.txt)"
			done
		fi
		if want rr; then
			rr_row "$m" out "$DPNS" 127.0.0.1 5302
			rr_row "$m" in "$PEER" 10.66.0.2 5400
		fi
		if want nginx && command -v nginx >/dev/null && command -v ab >/dev/null; then
			if nginx_start "$DPNS" 127.0.0.1:8080; then
				nginx_row "nginx-$m"
				kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null
			fi
		fi
		# the datapath's counters after this mode's runs, for the GSO work
		if dp_stats --json >"$OUT/datapath-stats-$m.json" 2>/dev/null; then
			python3 - "$m" "$OUT/datapath-stats-$m.json" <<'PY'
import json, sys
m, path = sys.argv[1:]
l = list(json.load(open(path))["links"].values())[0]
g = lambda k: l.get(k, 0)
per = lambda a, b: f"{a / b:.1f}" if b else "-"
print(f"(sandnet {m} link counters: rx {per(g('rx_frames'), g('rx_syscalls'))} frames/syscall, "
      f"{per(g('rx_bytes'), g('rx_frames'))} B/frame, {g('rx_gso_frames')} GSO frames in; "
      f"tx {per(g('tx_frames'), g('tx_syscalls'))} frames/syscall, {per(g('tx_bytes'), g('tx_frames'))} B/frame, "
      f"{g('tx_gso_frames')} GSO frames, {g('tx_sw_segments')} sw segments, {g('tx_eagain')} EAGAIN; "
      f"kernel drops {g('rx_kernel_drops')})")
PY
		fi
		sandnet_down
	done
fi

if want rr; then
	echo
	printf 'rr %-10s %-8s %6s %8s %8s %8s %8s %9s %6s\n' row path n min_us p50_us p90_us p99_us tps "x kern"
	python3 - "$rrcsv" <<'PY'
import sys
for line in list(open(sys.argv[1]))[1:]:
    f = line.rstrip("\n").split(",")
    if f[9]:
        print(f"rr {f[0]:<10} {f[1]:<8} {f[9]}")
    else:
        print(f"rr {f[0]:<10} {f[1]:<8} {f[2]:>6} {float(f[3]):>8.0f} {float(f[4]):>8.0f} {float(f[5]):>8.0f}"
              f" {float(f[6]):>8.0f} {float(f[7]):>9.0f} {f[8] or '-':>6}")
PY
fi

tcp_plot
echo "(results: $csv, $rrcsv)"
