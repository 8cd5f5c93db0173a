#!/usr/bin/env bash
# Short flows (issue 19): nginx serving ab through the container face, both
# ways, next to the container's kernel alone on the same veth and to pasta,
# in the same run. The seeds' own benchmark: nginx-1m in gVisor's GSO work,
# 10 MiB at concurrency 5 in the software GSO work.
#
#   bench/nginx.sh BUILD_DIR
#
# Environment: SECS (seconds per ab run, default 4), REPS (runs per figure,
# median, default 3), ROWS (default "kernel hw hw-names sw pasta"; also hw-nopoll: hw
# with the datapath's --busy-poll 0; hw-noring: hw with --no-rx-ring;
# hw-nice0: hw with --nice 0; hw-iw0: hw
# with the kernel's initial window on the TUN's routes; hw-names: hw with a
# name rule for the peer's server, web.bench.test, answered by dnsmasq in the
# peer: the container looks it up before each of its runs, and ab sends
# "Host: web.bench.test:8080", so that every connection out is matched by
# the name rule and has its first bytes read: the names policy's cost per
# connection against the hw row; hw-flowlog: hw-names with --flow-log, a
# record per connection: the flow log's cost against hw-names), SHAPES (default
# all, below), PERF (sandnet modes to profile with perf record during
# "PERF_DIR PERF_SHAPE", default in 1m-c5, e.g. PERF=hw), PERF_MACHINE (rows,
# kernel included, whose whole machine is profiled, perf record -a, during
# the same shape: each command's and symbol's CPU ms per request; PERF_KEEP=DIR
# keeps the perf.data), SHARDS (netsetup --shards for
# the sandnet rows, default 1; auto: one per CPU, the datapath's default), OUT (results, default bench/results), PLOT
# (default docs/benchmarks-nginx.png).
#
# Namespaces (names "bn<pid>-*", removed on exit):
#   ct    the container: eth0 10.66.0.2/24, nginx on :8080
#   peer  a kernel stack: veth0 10.66.0.1/24, nginx on :8080
#   dp    where netsetup and the datapath run
#   ph/pp pasta's host (10.88.0.1, pasta forwards its :8080 to the
#         container) and a peer behind it (10.88.0.5, nginx :8080)
#   cp    pasta's container, nginx on :8080
#
# Directions: "in" is ab on the peer against nginx in the container (for
# pasta: ab on pp against the host's forwarded port); "out" is ab in the
# container against the peer's nginx.
# Shapes (ab -t SECS):
#   1m-c1      1 MiB, one connection per request, concurrency 1
#   1m-c5      1 MiB, fresh connections, concurrency 5
#   10m-c5     10 MiB, fresh connections, concurrency 5
#   100b-c20   100 bytes, fresh connections, concurrency 20 (connections/s)
#   100b-ka    100 bytes, keep-alive, concurrency 1 (request/response turns)
#   1m-c1-tw   (sandnet only) 1 MiB at concurrency 1 started right after the
#              kernel ran the same load: over the container's and the peer's
#              TIME-WAIT leftovers, as an attach to a running container is
# Idle pairs (sandnet rows, IDLE=N, default 10000; 0: none): N keep-alive
# connections from the container to the peer's nginx, each after one request,
# held idle: the datapath's RSS before, with them, 15 s after they close (the
# ring pool trims what stays unused for 10 s) and 65 s after (TIME-WAIT over).
# Columns: requests/s (median), x kernel, x pasta, p50 and p99 ms (ab's),
# the carrier's (datapath or pasta) CPU ms per request and CPU s per GB,
# the datapath's system calls per request (its links', both faces, and its
# loop's epoll_wait()s), its loop turns (wakeups) per request, and its
# page faults per request (minor, from /proc), and the whole machine's busy
# CPU time per request (every process and interrupt: ab, nginx, the carrier).
#
# Then, per row, where a fresh request's time goes (bench/phases.py): for
# each file of PHASES (default "f1m f100"), PHASE_N requests (default 200)
# one at a time, from the peer (in) and from the container (out), the
# median microseconds of connect, time to the first byte and the body's
# transfer; the median of REPS such runs, in nginx-phases.csv. PHASES=""
# leaves them out.
set -u
build=${1:?usage: bench/nginx.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
SECS=${SECS:-4}
REPS=${REPS:-3}
ROWS=${ROWS:-kernel hw hw-names sw pasta}
SHAPES=${SHAPES:-1m-c1 1m-c5 10m-c5 100b-c20 100b-ka}
IDLE=${IDLE:-10000}
PHASES=${PHASES-f1m f100}
PHASE_N=${PHASE_N:-200}
PERF_SHAPE=${PERF_SHAPE:-1m-c5}
PERF_DIR=${PERF_DIR:-in}
OUT=${OUT:-$repo/bench/results}
PLOT=${PLOT:-$repo/docs/benchmarks-nginx.png}
NETSETUP=$build/netsetup
DATAPATH=$build/datapath
HZ=$(getconf CLK_TCK)

[ "$(id -u)" -eq 0 ] || { echo "bench/nginx.sh: needs root (namespaces)"; exit 1; }
for t in nginx ab python3; do
	command -v "$t" >/dev/null || { echo "bench/nginx.sh: $t missing (scripts/install-deps.sh)"; exit 1; }
done
mkdir -p "$OUT"
. "$here/lib.sh"
bench_start bn CT:ct PEER:peer DPNS:dp PH:ph PP:pp CP:cp
csv=$OUT/nginx.csv
phases_csv=$OUT/nginx-phases.csv

for ns in $ALL_NS; do ip netns add "$ns" && ip -n "$ns" link set lo up || exit 1; done
bench_face_net "$CT" "$PEER" "$PH" "$PP" 10.66.0 10.88.0 || { echo "bench/nginx.sh: the namespaces do not pass"; exit 1; }
# ab and nginx on both sides open many short connections: the kernel's own
# defaults, the same in every namespace
for ns in $ALL_NS; do
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="32768 60999" net.core.somaxconn=4096
done

mkdir -p "$TMP/www"
head -c 100 /dev/zero | tr '\0' x >"$TMP/www/f100"
head -c $((1 << 20)) /dev/urandom >"$TMP/www/f1m"
head -c $((10 << 20)) /dev/urandom >"$TMP/www/f10m"
chmod -R a+rX "$TMP/www"
# nginx NS NAME: a server of $TMP/www on :8080 in NS
nginx_in() {
	local ns=$1 d=$TMP/nginx-$2
	mkdir -p "$d/logs"
	cat >"$d/nginx.conf" <<EOF
worker_processes auto;
worker_rlimit_nofile 40000;
pid $d/nginx.pid;
error_log $d/logs/error.log;
events { worker_connections 16384; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	keepalive_requests 1000000;
	keepalive_timeout 300s;
	server { listen 8080 reuseport backlog=4096; root $TMP/www; }
}
EOF
	ip netns exec "$ns" nginx -c "$d/nginx.conf" -p "$d" -g 'daemon off; user root;' >"$d/out" 2>&1 &
	bench_wait_port "$ns" 8080 || { echo "bench/nginx.sh: nginx in $ns did not start: $(cat "$d/out")"; exit 1; }
}
nginx_in "$CT" ct
nginx_in "$PEER" peer

# host_ticks: every CPU's busy time (all but idle and iowait), in ticks
host_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
cpu_ticks() { [ -n "$1" ] && awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
minflt() { [ -n "$1" ] && awk '{ print $10 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# datapath_syscalls: every link's rx and tx system calls, both faces, and
# the loop's turns (each turn one epoll_wait()), of every shard: "SYSCALLS TURNS"
datapath_syscalls() {
	[ -S "$CTL" ] || { echo 0 0; return; }
	ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = turns = 0
for s in [d] + d.get("shards", []):
    for kind in ("links", "inner_links"):
        for l in s.get(kind, {}).values():
            n += l.get("rx_syscalls", 0) + l.get("tx_syscalls", 0)
    turns += s.get("loop_turns", 0)
print(n, turns)' 2>/dev/null || echo 0 0
}
shape_args() {	# shape_args SHAPE: "FILE CONCURRENCY [-k]"
	case $1 in
	1m-c1|1m-c1-tw) echo "f1m 1";;
	1m-c5) echo "f1m 5";;
	10m-c5) echo "f10m 5";;
	100b-c20) echo "f100 20";;
	100b-ka) echo "f100 1 -k";;
	esac
}
echo "row,direction,file,connect_us,ttfb_us,body_us,total_us,bytes,note" >"$phases_csv"
echo "row,direction,shape,req_per_s,ratio_to_kernel,ratio_to_pasta,p50_ms,p99_ms,carrier_cpu_ms_per_req,carrier_cpu_s_per_gb,syscalls_per_req,turns_per_req,minflt_per_req,host_cpu_ms_per_req,runs_req_per_s,note" >"$csv"

# ab_once NS URL SHAPE PID: "reqs_per_s p50 p99 requests bytes cpu_ticks syscalls minflt host_ticks turns"
# or "fail WHY"
ab_once() {
	local ns=$1 url=$2 pid=$4 file conc ka c0 c1 s0 s1 t0 t1 f0 f1 h0 h1 out=$TMP/ab.out
	read -r file conc ka <<<"$(shape_args "$3")"
	local host=()
	if [ -n "${AB_HOST:-}" ] && [ "$ns" = "$CT" ]; then	# the hw-names row, out
		# the lookup that binds the server's address to its name (for an hour: dnsmasq's TTL)
		if ! ip netns exec "$CT" unshare -m sh -c "mount --bind '$TMP/resolv.conf' /etc/resolv.conf &&
			getent hosts ${AB_HOST%:*}" >/dev/null; then
			echo "fail the container could not look up ${AB_HOST%:*}"
			return
		fi
		host=(-H "Host: $AB_HOST")
	fi
	c0=$(cpu_ticks "$pid"); read -r s0 t0 <<<"$(datapath_syscalls)"; f0=$(minflt "$pid"); h0=$(host_ticks)
	timeout $((SECS + 30)) ip netns exec "$ns" ab -q -r -s 10 -t "$SECS" -n 10000000 -c "$conc" $ka \
		"${host[@]}" "$url/$file" >"$out" 2>&1
	h1=$(host_ticks); c1=$(cpu_ticks "$pid"); read -r s1 t1 <<<"$(datapath_syscalls)"; f1=$(minflt "$pid")
	python3 - "$out" "$((c1 - c0))" "$((s1 - s0 + t1 - t0))" "$((f1 - f0))" "$((h1 - h0))" "$((t1 - t0))" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def num(pat):
    m = re.search(pat, t)
    return float(m.group(1)) if m else None
rps = num(r"Requests per second:\s+([0-9.]+)")
done = num(r"Complete requests:\s+([0-9]+)")
failed = num(r"Failed requests:\s+([0-9]+)") or 0
total = num(r"Total transferred:\s+([0-9]+)")
p50 = num(r"\n\s+50%\s+([0-9]+)")
p99 = num(r"\n\s+99%\s+([0-9]+)")
if rps is None or not done:
    last = [l for l in t.strip().splitlines() if l.strip()]
    print("fail", (last[-1] if last else "ab printed nothing").replace(",", ";")); sys.exit()
if failed > done * 0.01:
    print("fail %d of %d requests failed" % (failed, done)); sys.exit()
print(rps, p50, p99, int(done), int(total), *sys.argv[2:7])
PY
}

# row NAME DIR SHAPE NS URL PID: REPS runs, the median to the table and the CSV
row() {
	local name=$1 dir=$2 shape=$3 i line n=$REPS
	[ "$shape" = 1m-c1-tw ] && n=1	# one run: the leftovers are gone after it
	: >"$TMP/runs"
	for ((i = 0; i < n; i++)); do
		line=$(ab_once "$4" "$5" "$shape" "$6")
		echo "$line" >>"$TMP/runs"
		case $line in fail*) break;; esac
	done
	python3 - "$name" "$dir" "$shape" "$csv" "$TMP/runs" "$HZ" "$6" <<'PY'
import sys, statistics
name, d, shape, csv, runs, hz, pid = sys.argv[1:]
rows, fail = [], None
for line in open(runs):
    f = line.split()
    if not f: continue
    if f[0] == "fail":
        fail = " ".join(f[1:]); break
    rps, p50, p99 = float(f[0]), float(f[1]), float(f[2])
    n, nbytes, ct, sc, mf, ht, tu = (int(x) for x in f[3:10])
    rows.append((rps, p50, p99, 1000 * ct / int(hz) / n, ct / int(hz) / (nbytes / 1e9), sc / n, mf / n,
                 1000 * ht / int(hz) / n, tu / n))
if fail or not rows:
    note = f"n/a ({fail})"
    print(f"{name:<6} {d:<3} {shape:<9} {note}")
    open(csv, "a").write(f"{name},{d},{shape},,,,,,,,,,,,,{note}\n"); sys.exit()
med = [statistics.median(r[i] for r in rows) for i in range(9)]
ref = {}
for line in list(open(csv))[1:]:
    f = line.strip().split(",")
    base = "1m-c1" if shape == "1m-c1-tw" else shape
    if f[1] == d and f[2] == base and f[3]:
        ref[f[0]] = float(f[3])
rk = f"{med[0] / ref['kernel']:.2f}" if ref.get("kernel") else ""
rp = f"{med[0] / ref['pasta']:.2f}" if ref.get("pasta") and name != "pasta" else ""
cpu = f"{med[3]:.3f}" if pid else ""
cpugb = f"{med[4]:.2f}" if pid else ""
sc = f"{med[5]:.1f}" if name.split("-")[0] in ("hw", "sw") else ""
tu = f"{med[8]:.1f}" if name.split("-")[0] in ("hw", "sw") else ""
mf = f"{med[6]:.1f}" if pid else ""
runs_s = " ".join(f"{r[0]:.0f}" for r in rows)
print(f"{name:<6} {d:<3} {shape:<9} {med[0]:>9.1f} {rk or '-':>6} {rp or '-':>6} {med[1]:>6.0f} {med[2]:>6.0f}"
      f" {cpu or '-':>8} {cpugb or '-':>7} {sc or '-':>7} {tu or '-':>6} {mf or '-':>7} {med[7]:>8.3f}   (runs: {runs_s})")
open(csv, "a").write(f"{name},{d},{shape},{med[0]:.1f},{rk},{rp},{med[1]:.0f},{med[2]:.0f},{cpu},{cpugb},{sc},{tu},{mf},{med[7]:.3f},{runs_s},\n")
PY
}

# phases NAME DIR NS HOST: bench/phases.py REPS times, the medians to nginx-phases.csv
phases() {
	local f i
	for f in $PHASES; do
		for ((i = 0; i < REPS; i++)); do
			timeout 120 ip netns exec "$3" python3 "$here/phases.py" "$4" 8080 "$f" "$PHASE_N"
		done | python3 -c '
import statistics, sys
name, d, f = sys.argv[1:4]
runs = [l.split() for l in sys.stdin if l.strip()]
ok = [r for r in runs if r[0] != "fail"]
if not ok:
    why = " ".join(runs[-1][1:]) if runs else "no output"
    print(f"{name},{d},{f},,,,,,n/a ({why})"); sys.exit()
med = [statistics.median(float(r[i]) for r in ok) for i in range(4)]
print(f"{name},{d},{f},{med[0]:.0f},{med[1]:.0f},{med[2]:.0f},{med[3]:.0f},{ok[-1][4]},")' "$1" "$2" "$f" >>"$phases_csv"
	done
}

# perf_machine NAME CLIENT_NS_IN URL_IN CLIENT_NS_OUT URL_OUT PID: with NAME in
# PERF_MACHINE, the whole machine's CPU during one ab run of PERF_DIR
# PERF_SHAPE, as ms per request by command and by symbol, to
# perf-machine-NAME-PERF_DIR-PERF_SHAPE.txt: what a row adds to the kernel's
# own path, and where
perf_machine() {
	local name=$1 line ppid f out=$OUT/perf-machine-$1-$PERF_DIR-$PERF_SHAPE.txt
	[[ " ${PERF_MACHINE:-} " == *" $name "* ]] && command -v perf >/dev/null || return 0
	perf record -q -a -g -F 2000 -o "$TMP/perf-machine.data" -- sleep "$SECS" >/dev/null 2>&1 &
	ppid=$!
	if [ "$PERF_DIR" = out ]; then
		line=$(ab_once "$4" "$5" "$PERF_SHAPE" "$6")
	else
		line=$(ab_once "$2" "$3" "$PERF_SHAPE" "$6")
	fi
	wait "$ppid"
	case $line in fail*) echo "(perf-machine $name: ab failed: $line)"; return 0;; esac
	# the carrier's command name, as perf saw it (pasta runs as passt.avx2 or passt)
	local carrier=''
	[ -n "$6" ] && carrier=$(cat "/proc/$6/comm" 2>/dev/null)
	read -r -a f <<<"$line"
	python3 "$here/perf_machine.py" "$TMP/perf-machine.data" "$name" "$PERF_DIR $PERF_SHAPE" "${f[3]}" "${f[8]}" \
		"$HZ" $carrier >"$out"
	[ -n "${PERF_KEEP:-}" ] && cp "$TMP/perf-machine.data" "$PERF_KEEP/perf-machine-$name.data"
	echo "(perf of the whole machine, $name $PERF_DIR $PERF_SHAPE: $out)"
}

rows_for() {	# rows_for NAME CLIENT_NS_IN URL_IN CLIENT_NS_OUT URL_OUT PID
	local s host_in=${3#http://} host_out=${5#http://}
	for s in $SHAPES; do
		row "$1" in "$s" "$2" "$3" "$6"
		row "$1" out "$s" "$4" "$5" "$6"
	done
	perf_machine "$@"
	[ -n "$PHASES" ] || return 0
	phases "$1" in "$2" "${host_in%:*}"
	phases "$1" out "$4" "${host_out%:*}"
}

echo "bench/nginx.sh: ab -t $SECS, median of $REPS runs; $(nproc) CPUs; kernel $(uname -r)"
printf '%-6s %-3s %-9s %9s %6s %6s %6s %6s %8s %7s %7s %6s %7s %8s\n' row dir shape "req/s" "x kern" "x pasta" "p50ms" \
	"p99ms" "cpu ms/r" "cpu s/GB" "sys/req" "turn/r" "flt/req" "host ms/r"

want kernel && rows_for kernel "$PEER" http://10.66.0.2:8080 "$CT" http://10.66.0.1:8080 ""

if want pasta; then
	if command -v pasta >/dev/null; then
		nginx_in "$CP" cp
		nginx_in "$PP" pp
		bench_bg "$PH" pasta -f -q --runas 0 --config-net -t 8080 -u none -T none -U none --netns "/run/netns/$CP"
		PASTA=$BG_PID
		if bench_wait_port "$PH" 8080 && sleep 1 && ip netns exec "$CP" ping -c 1 -W 2 10.88.0.5 >/dev/null; then
			rows_for pasta "$PP" http://10.88.0.1:8080 "$CP" http://10.88.0.5:8080 "$PASTA"
		else
			echo "pasta: n/a (pasta did not come up)"
		fi
		kill "$PASTA" 2>/dev/null
	else
		echo "pasta: n/a (not installed)"
	fi
fi

dp_stats() { ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" "$@"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# idle_pairs MODE PID: IDLE keep-alive connections held idle through the face
idle_pairs() {
	local m=$1 pid=$2 r0 r1 r2 r3
	sleep 12	# settled: the pool gives back what the rows before left unused 10 s
	r0=$(rss_kib "$pid")
	ip netns exec "$CT" python3 - "$IDLE" "$TMP/idle.go" "$TMP/idle.ready" <<'PY' &
import os, resource, socket, sys, time
n, go, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 100, n + 100))
socks = []
for i in range(n):
    s = socket.create_connection(("10.66.0.1", 8080), timeout=10)
    s.sendall(b"GET /f100 HTTP/1.1\r\nHost: peer\r\n\r\n")
    got = b""
    while not got.endswith(b"x" * 100):
        got += s.recv(4096)
    socks.append(s)
open(ready, "w").close()
for _ in range(600):
    if os.path.exists(go): break
    time.sleep(0.1)
for s in socks: s.close()
PY
	local holder=$!
	for _ in $(seq 1200); do [ -e "$TMP/idle.ready" ] && break; sleep 0.1; done
	sleep 2
	r1=$(rss_kib "$pid")
	touch "$TMP/idle.go"
	wait "$holder"
	sleep 15
	r2=$(rss_kib "$pid")
	# the datapath's TIME-WAIT (60 s, like the kernel's) holds the last structures
	sleep 50
	r3=$(rss_kib "$pid")
	dp_stats --json >"$OUT/datapath-stats-nginx-$m-idle-closed.json" 2>/dev/null
	python3 -c "import sys; n, a, b, c, d = map(int, sys.argv[1:6]); print(f'{sys.argv[6]:<6} idle pairs: {n}: datapath RSS {a/1024:.1f} MB before, {b/1024:.1f} MB with them ({(b-a)/n:.1f} KiB a pair), {c/1024:.1f} MB 15 s after they closed, {d/1024:.1f} MB 65 s after (TIME-WAIT over)')" \
		"$IDLE" "$r0" "$r1" "$r2" "$r3" "$m" | tee -a "$OUT/nginx-idle.txt"
	rm -f "$TMP/idle.go" "$TMP/idle.ready"
}
: >"$OUT/nginx-idle.txt"
BENCH_FLOWLOG=$TMP/flows.jsonl
export BENCH_FLOWLOG
if want hw-names || want hw-flowlog; then
	# the resolver the hw-names row's container asks (its answers live an hour)
	bench_bg "$PEER" dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces --listen-address=10.66.0.1 \
		--port=53 --pid-file= --local-ttl=3600 --host-record=web.bench.test,10.66.0.1
	printf 'nameserver 10.66.0.1\n' >"$TMP/resolv.conf"
fi
# the sandnet rows in the order ROWS gives them (the next row starts over the
# last one's TIME-WAIT leftovers: swap two rows to see what their order costs)
for m in $ROWS; do
	case $m in hw|hw-nopoll|hw-noring|hw-nice0|hw-iw0|hw-names|hw-flowlog|sw) ;; *) continue ;; esac
	AB_HOST=''
	case $m in hw-names|hw-flowlog) AB_HOST=web.bench.test:8080 ;; esac
	# the kernel leaves TIME-WAIT behind in the container and at the peer; sandnet starts over it
	if [[ " $SHAPES " == *" 1m-c1 "* ]]; then
		ab_once "$PEER" http://10.66.0.2:8080 1m-c1 "" >/dev/null
	fi
	bench_face_up "$m" "$CT" "$DPNS" "$CTL" "$TMP/dp-$m.log" 10.66.0.1
	if [ -n "$DP_PID" ]; then
		[[ " $SHAPES " == *" 1m-c1 "* ]] && row "$m" in 1m-c1-tw "$PEER" http://10.66.0.2:8080 "$DP_PID"
		rows_for "$m" "$PEER" http://10.66.0.2:8080 "$CT" http://10.66.0.1:8080 "$DP_PID"
		if [ "$m" = hw-flowlog ]; then	# what the flow log wrote and lost in those runs
			ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" --json | python3 -c '
import json, sys
fl = json.load(sys.stdin)["flow_log"]
print("hw-flowlog: flow log records", fl["records"], "dropped", fl["dropped"], "file lines", sys.argv[2])
' "$BENCH_FLOWLOG" "$(wc -l <"$BENCH_FLOWLOG")"
		fi
		if [[ " ${PERF:-} " == *" $m "* ]] && command -v perf >/dev/null; then
			perf record -q -g -p "$DP_PID" -o "$TMP/perf.data" -- sleep "$SECS" >/dev/null 2>&1 &
			ppid=$!
			if [ "$PERF_DIR" = out ]; then
				ab_once "$CT" http://10.66.0.1:8080 "$PERF_SHAPE" "$DP_PID" >/dev/null
			else
				ab_once "$PEER" http://10.66.0.2:8080 "$PERF_SHAPE" "$DP_PID" >/dev/null
			fi
			wait "$ppid"
			{
				perf report -i "$TMP/perf.data" --stdio --no-children --sort dso -g none 2>/dev/null |
					grep -v -e '^$' -e '^#'
				perf report -i "$TMP/perf.data" --stdio --no-children --percent-limit 1 \
					--sort dso,symbol -g none 2>/dev/null | grep -v '^$' | head -n 60
			} >"$OUT/perf-nginx-$m-$PERF_DIR-$PERF_SHAPE.txt"
			# every symbol of the datapath itself, however small (what one feature costs)
			perf report -i "$TMP/perf.data" --stdio --no-children --dsos datapath --percent-limit 0 \
				--sort symbol -g none 2>/dev/null | grep -v -e '^$' -e '^#' \
				>"$OUT/perf-nginx-$m-$PERF_DIR-$PERF_SHAPE-datapath.txt"
			# where the kernel's share comes from: the call chains of the top symbols
			perf report -i "$TMP/perf.data" --stdio --no-children --percent-limit 4 \
				--sort symbol -g caller,2,callee,function,percent 2>/dev/null | grep -v '^$' | head -n 200 \
				>"$OUT/perf-nginx-$m-$PERF_DIR-$PERF_SHAPE-chains.txt"
			echo "(nginx $m $PERF_DIR $PERF_SHAPE: perf profile of the datapath in $OUT/perf-nginx-$m-$PERF_DIR-$PERF_SHAPE.txt, -chains.txt)"
		fi
		dp_stats --json >"$OUT/datapath-stats-nginx-$m.json" 2>/dev/null
		[ "$IDLE" -gt 0 ] && idle_pairs "$m" "$DP_PID"
	fi
	kill "$NS_PID" 2>/dev/null; wait "$NS_PID" 2>/dev/null
	NS_PID=''
done
AB_HOST=''

# where a fresh request's time goes, per row, against the kernel's
if [ -n "$PHASES" ]; then
	echo "where a fresh request's time goes (bench/phases.py, $PHASE_N requests one at a time, median us; x kernel):"
	python3 - "$phases_csv" <<'PY'
import sys
rows = [l.strip().split(",") for l in list(open(sys.argv[1]))[1:]]
kern = {(r[1], r[2]): r for r in rows if r[0] == "kernel" and r[3]}
print(f"{'row':<9} {'dir':<3} {'file':<5} {'connect':>13} {'ttfb':>13} {'body':>13} {'total':>13}")
for r in rows:
    if not r[3]:
        print(f"{r[0]:<9} {r[1]:<3} {r[2]:<5} {r[8]}"); continue
    k = kern.get((r[1], r[2]))
    cells = []
    for i in range(3, 7):
        x = f" ({float(r[i]) / float(k[i]):.1f}x)" if k and r[0] != "kernel" and float(k[i]) > 0 else ""
        cells.append(f"{r[i]}{x}")
    print(f"{r[0]:<9} {r[1]:<3} {r[2]:<5} " + " ".join(f"{c:>13}" for c in cells))
PY
fi

# the plot: x kernel per shape and direction, one bar per row
if command -v gnuplot >/dev/null; then
	python3 - "$csv" "$TMP/plot.dat" <<'PY'
import sys
rows, cols, val = [], [], {}
for line in list(open(sys.argv[1]))[1:]:
    f = line.strip().split(",")
    if not f[4] and f[0] != "kernel": continue
    col = f"{f[1]} {f[2]}"
    if col not in cols: cols.append(col)
    if f[0] not in rows: rows.append(f[0])
    val[(f[0], col)] = "1" if f[0] == "kernel" else f[4]
with open(sys.argv[2], "w") as o:
    o.write("shape " + " ".join(rows) + "\n")
    for c in cols:
        o.write('"' + c + '" ' + " ".join(val.get((r, c), "0") for r in rows) + "\n")
PY
	bench_ratio_plot "$TMP/plot.dat" "$PLOT" 1200,540 \
		"nginx under ab through the container face, requests/s as a ratio to the kernel (ab -t $SECS, median of $REPS)"
fi
echo "(results: $csv)"
