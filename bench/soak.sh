#!/usr/bin/env bash
# A soak with chaos (issue 41): one container served by a default-policy
# `netsetup run --shards 2` with name rules, for SECS seconds, with at once:
#   - HTTP fetches of a 1 MiB file out (the container, a fresh connection and
#     a DNS lookup each, and ten on one kept-alive connection) and in (the
#     peer, fresh), each body checked by its SHA-256;
#   - iperf3 UDP at 20 Mbit/s out and in, in runs of 20 s;
#   - a thousand idle connections held open (reopened when a chaos event
#     resets them);
#   - a --forward in use (a client in the datapath's namespace fetching
#     through it) and a --publish (the peer fetching the container's port
#     that the datapath's namespace serves);
#   - a probe of the policy every 2 s: a name no rule allows, and an address
#     never looked up, must stay refused; a server there counts what reaches
#     it;
#   - a second container attached through a `netsetup serve` daemon
#     (`netsetup connect`), fetching 1 MiB on kept-alive connections;
#   - and chaos every CHAOS_EVERY seconds, in turn: the datapath SIGKILLed,
#     SIGSTOPped for 5 s, restarted by `netsetup restart`, the peer's link
#     set down for 3 s, the serve daemon restarted (SIGTERM, started again:
#     the second container must not notice); after each, the time until a
#     new connection out works again (the heal), against its bound.
# Every 10 s a sample: RSS and open fds of netsetup, the supervisor, the
# datapath and the serve daemon, the container's TCP pairs open, the fetches done, bad and failed.
# Checked at the end (exit 1 and a line saying what, else 0):
#   - not one body with a wrong checksum, not one probe that got through;
#   - every fetch and UDP run that failed did so in a chaos event's window
#     (from a second before it to 12 s after the service was back): a
#     failure with no event near is a failure of the soak;
#   - every heal within its bound (SIGKILL 1 s, restart 2 s, SIGSTOP 5 s +
#     2 s, link down 3 s + 4 s, serve restart 1 s);
#   - no request reaches the server at the address the policy denies;
#   - after the warm-up (the first third), split in two halves: RSS peaks of
#     netsetup, the supervisor, the serve daemon and the datapath (which
#     starts over after each kill and restart) and fd floors (the connections in flight come and
#     go; a leak raises the floor) grow by at most 10 % (no leak).
# Writes OUT/soak.csv (the samples), OUT/soak-events.csv (chaos and heals),
# OUT/soak.txt (the summary), PLOT (RSS, fds and fetches over time, the
# chaos events marked), and keeps every worker's log and the datapath's in
# LOGS (a line per fetch or UDP run, with why it failed).
#
#   bench/soak.sh BUILD_DIR          SECS (default 3600), CHAOS_EVERY (60),
#                                    OUT (bench/results), PLOT (docs/soak.png),
#                                    LOGS (OUT/soak-logs)
set -u
build=${1:?usage: bench/soak.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
SECS=${SECS:-3600}
CHAOS_EVERY=${CHAOS_EVERY:-60}
OUT=${OUT:-$repo/bench/results}
LOGS=${LOGS:-$OUT/soak-logs}
PLOT=${PLOT:-$repo/docs/soak.png}
NETSETUP=$build/netsetup
DATAPATH=$build/datapath
[ "$(id -u)" -eq 0 ] || { echo "bench/soak.sh: needs root (namespaces)"; exit 1; }
for t in nginx iperf3 dnsmasq curl python3; do
	command -v "$t" >/dev/null || { echo "bench/soak.sh: $t missing (scripts/install-deps.sh)"; exit 1; }
done
mkdir -p "$OUT"
. "$here/lib.sh"
bench_start sk CT:ct PEER:peer DPNS:dp SCT:sct
for ns in $ALL_NS; do ip netns add "$ns" && ip -n "$ns" link set lo up || exit 1; done
ip link add ${P}a type veth peer name ${P}b &&
	ip link set ${P}a netns "$CT" name eth0 && ip link set ${P}b netns "$PEER" name veth0 &&
	ip -n "$CT" link set eth0 up && ip -n "$PEER" link set veth0 up &&
	ip -n "$CT" addr add 10.67.0.2/24 dev eth0 && ip -n "$CT" route add default via 10.67.0.1 &&
	ip -n "$PEER" addr add 10.67.0.1/24 dev veth0 && ip -n "$PEER" addr add 10.67.0.9/24 dev veth0 &&
	ip link add ${P}c type veth peer name ${P}d &&
	ip link set ${P}c netns "$SCT" name eth0 && ip link set ${P}d netns "$PEER" name veth1 &&
	ip -n "$SCT" link set eth0 up && ip -n "$PEER" link set veth1 up &&
	ip -n "$SCT" addr add 10.68.0.2/24 dev eth0 && ip -n "$SCT" route add default via 10.68.0.1 &&
	ip -n "$PEER" addr add 10.68.0.1/24 dev veth1 ||
	{ echo "bench/soak.sh: the namespaces"; exit 1; }
for ns in $ALL_NS; do ip netns exec "$ns" sysctl -qw net.core.somaxconn=4096; done

mkdir -p "$TMP/www" "$TMP/logs"
head -c $((1 << 20)) /dev/urandom >"$TMP/www/f1m"
SHA=$(sha256sum <"$TMP/www/f1m" | cut -d' ' -f1)
chmod -R a+rX "$TMP/www"
nginx_in() {	# NS NAME PORT ADDR: a server of $TMP/www
	local d=$TMP/nginx-$2
	mkdir -p "$d/logs"
	cat >"$d/nginx.conf" <<EOF
worker_processes 1;
pid $d/nginx.pid;
error_log $d/logs/error.log;
events { worker_connections 4096; }
http { access_log $d/logs/access.log; keepalive_requests 100000; server { listen $4:$3; root $TMP/www; } }
EOF
	ip netns exec "$1" nginx -c "$d/nginx.conf" -p "$d" -g 'daemon off; user root;' >"$d/out" 2>&1 &
	bench_wait_port "$1" "$3" || { echo "bench/soak.sh: nginx in $1: $(cat "$d/out")"; exit 1; }
}
nginx_in "$PEER" peer 8080 10.67.0.1
nginx_in "$PEER" peer2 8080 10.68.0.1
nginx_in "$PEER" denied 8080 10.67.0.9	# what the policy must keep the container from
nginx_in "$CT" ct 8080 0.0.0.0
nginx_in "$DPNS" published 8090 127.0.0.1
bench_bg "$PEER" dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces --listen-address=10.67.0.1 \
	--port=53 --pid-file= --host-record=web.soak.test,10.67.0.1 --host-record=other.soak.test,10.67.0.9
# --rcv-timeout: a test whose client went away with the datapath it crossed
# (SIGKILL, restart: its connections are gone, and no RST reaches the
# server, whose control connection is silent during a test) ends after 3 s
# with nothing on the server's sockets, not the default 120 s, in which
# every new client is told the server is busy (udp_loop waits that long
# after a failure)
bench_bg "$PEER" iperf3 -s -p 5201 --rcv-timeout 3000
bench_bg "$PEER" iperf3 -s -p 5202 --rcv-timeout 3000
printf 'nameserver 10.67.0.1\noptions attempts:2 timeout:1\n' >"$TMP/resolv.conf"

# the idle connections' peer: takes and holds
bench_bg "$PEER" python3 "$repo/tests/lib/conns.py" take 10.67.0.1 9000

CTL=$TMP/dp.ctl
ip netns exec "$DPNS" "$NETSETUP" run --netns "/run/netns/$CT" --shards 2 -- "$DATAPATH" --control "$CTL" \
	--egress-allow tcp:web.soak.test:8080 --egress-allow 10.67.0.1:5201-5202 --egress-allow tcp:10.67.0.1:9000 \
	--egress-allow icmp:10.67.0.1 --forward tcp:127.0.0.1:9100=10.67.0.1:8080 \
	--publish tcp:8082=127.0.0.1:8090 >"$TMP/logs/datapath.log" 2>&1 &
NS_PID=$!
for _ in $(seq 100); do ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" >/dev/null 2>&1 && break; sleep 0.1; done
dp_pid() { ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" --json 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null; }
DP_PID=$(dp_pid)
[ -n "$DP_PID" ] || { echo "bench/soak.sh: the datapath did not come up: $(cat "$TMP/logs/datapath.log")"; exit 1; }
SUP_PID=$(pgrep -P "$NS_PID" | head -n1)

# A second container, SCT, attached through the `netsetup serve` daemon
# (netsetup connect becomes its datapath), which the chaos restarts
export SANDNET_STATE_DIR=$TMP/state
SOCK=$TMP/serve.sock
printf 'allowed_uids = 0\nallowed_interfaces = eth0\nmax_channels = 2\nrequest_timeout = 5\n' >"$TMP/serve.conf"
serve_start() {
	ip netns exec "$DPNS" "$NETSETUP" serve --socket "$SOCK" --config "$TMP/serve.conf" >>"$TMP/logs/serve.log" 2>&1 &
	SERVE_PID=$!
	for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
}
serve_start
ip netns exec "$DPNS" "$NETSETUP" connect --socket "$SOCK" --netns "/run/netns/$SCT" --iface eth0 -- "$DATAPATH" \
	--control "$TMP/dp2.ctl" --egress-allow tcp:10.68.0.1:8080 >"$TMP/logs/datapath2.log" 2>&1 &
for _ in $(seq 100); do ip netns exec "$DPNS" "$DATAPATH" stats --control "$TMP/dp2.ctl" >/dev/null 2>&1 && break; sleep 0.1; done
ip netns exec "$DPNS" "$DATAPATH" stats --control "$TMP/dp2.ctl" >/dev/null 2>&1 ||
	{ echo "bench/soak.sh: the served datapath did not come up: $(cat "$TMP/logs/serve.log" "$TMP/logs/datapath2.log")"; exit 1; }

# the workers: each writes "T ok|bad|fail" lines to its log until $TMP/stop exists
cat >"$TMP/fetch.py" <<'PY'
import hashlib, http.client, os, socket, sys, time
mode, host, port, path, sha, log, stop = sys.argv[1:8]
out = open(log, "a", buffering=1)
def body(conn):
    conn.request("GET", path)
    r = conn.getresponse()
    return hashlib.sha256(r.read()).hexdigest() if r.status == 200 else "status %d" % r.status
while not os.path.exists(stop):
    t = time.time()
    try:
        if mode == "keepalive":
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            for _ in range(10):
                got = body(conn)
                out.write("%.1f %s\n" % (time.time(), "ok" if got == sha else "bad " + got))
            conn.close()
        else:
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            got = body(conn)
            conn.close()
            out.write("%.1f %s\n" % (time.time(), "ok" if got == sha else "bad " + got))
    except (OSError, http.client.HTTPException) as e:
        out.write("%.1f fail %s\n" % (time.time(), type(e).__name__))
        time.sleep(0.2)
    time.sleep(0.05)
PY
cat >"$TMP/idle.py" <<'PY'
import os, socket, sys, time
n, log, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3]
out = open(log, "a", buffering=1)
socks = []
while not os.path.exists(stop):
    alive = []
    for s in socks:		# a reset connection reads as EOF or an error
        try:
            s.setblocking(False)
            d = s.recv(1)
            if d == b"":
                s.close(); continue
        except BlockingIOError:
            pass
        except OSError:
            s.close(); continue
        alive.append(s)
    socks = alive
    while len(socks) < n:
        try:
            socks.append(socket.create_connection(("10.67.0.1", 9000), timeout=2))
        except OSError:
            break
    out.write("%.1f open %d\n" % (time.time(), len(socks)))
    time.sleep(5)
PY
cat >"$TMP/probe.py" <<'PY'
import os, socket, sys, time
log, stop = sys.argv[1:3]
out = open(log, "a", buffering=1)
while not os.path.exists(stop):
    for what in ("10.67.0.9", "other.soak.test"):
        try:
            addr = socket.getaddrinfo(what, 8080, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
        except OSError:
            out.write("%.1f refused %s (lookup)\n" % (time.time(), what)); continue
        try:
            socket.create_connection((addr, 8080), timeout=2).close()
            out.write("%.1f ESCAPE %s %s\n" % (time.time(), what, addr))
        except OSError:
            out.write("%.1f refused %s\n" % (time.time(), what))
    time.sleep(2)
PY
STOP=$TMP/stop
in_ct() { ip netns exec "$CT" unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$TMP/resolv.conf" "$@"; }
in_ct python3 "$TMP/fetch.py" fresh web.soak.test 8080 /f1m "$SHA" "$TMP/logs/out-fresh" "$STOP" &
in_ct python3 "$TMP/fetch.py" keepalive web.soak.test 8080 /f1m "$SHA" "$TMP/logs/out-keepalive" "$STOP" &
ip netns exec "$PEER" python3 "$TMP/fetch.py" fresh 10.67.0.2 8080 /f1m "$SHA" "$TMP/logs/in-fresh" "$STOP" &
ip netns exec "$DPNS" python3 "$TMP/fetch.py" fresh 127.0.0.1 9100 /f1m "$SHA" "$TMP/logs/forward" "$STOP" &
ip netns exec "$PEER" python3 "$TMP/fetch.py" fresh 10.67.0.2 8082 /f1m "$SHA" "$TMP/logs/publish" "$STOP" &
ip netns exec "$SCT" python3 "$TMP/fetch.py" keepalive 10.68.0.1 8080 /f1m "$SHA" "$TMP/logs/served" "$STOP" &
ip netns exec "$CT" python3 "$TMP/idle.py" 1000 "$TMP/logs/idle" "$STOP" &
in_ct python3 "$TMP/probe.py" "$TMP/logs/probe" "$STOP" &
udp_loop() {	# DIR: iperf3 -u runs of 20 s until the stop
	local r=''
	[ "$1" = in ] && r=-R
	while [ ! -e "$STOP" ] && [ -e "/run/netns/$CT" ]; do	# ends with the run, or its namespaces
		# a line per run: its end, ok or fail, Mbit/s and loss or why, its start
		ip netns exec "$CT" iperf3 -c 10.67.0.1 -p $((5201 + (${#r} > 0))) -u -b 20M -l 1400 -t 20 $r --json \
			2>>"$TMP/logs/udp-$1.stderr" | python3 -c 'import json,sys,time
t0 = float(sys.argv[1])
try:
    d = json.load(sys.stdin)
    if d.get("error"):
        raise ValueError(d["error"])
    e = d["end"]["sum"]; print("%.1f ok %.1f %.3f start %.1f" % (time.time(), e["bits_per_second"] / 1e6, e["lost_percent"], t0))
except Exception as x:
    print("%.1f fail %s start %.1f" % (time.time(), (str(x) or type(x).__name__).replace(" ", "_")[:120], t0))' \
			"$(date +%s.%N)" >>"$TMP/logs/udp-$1"
		# After a failure, wait past the servers' --rcv-timeout: an iperf3
		# server times a test out only after that long with nothing at all
		# on its sockets, and a client asking every second (to be told the
		# server is busy) kept a test whose client was gone alive for as
		# long as the retries went on
		if tail -n 1 "$TMP/logs/udp-$1" | grep -q ' fail '; then sleep 5; else sleep 1; fi
	done
}
udp_loop out &
UDP_PIDS=$!
udp_loop in &
UDP_PIDS="$UDP_PIDS $!"

# heal: seconds until a connection out works again (30 s at most)
heal() {	# [NS ADDR PORT]: the container's holder, or that
	ip netns exec "${1:-$CT}" python3 - "${2:-10.67.0.1}" "${3:-9000}" <<'PY'
import socket, sys, time
t0 = time.monotonic()
while time.monotonic() - t0 < 30:
    try:
        socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.02)
print("%.2f" % (time.monotonic() - t0))
PY
}
proc_rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
proc_fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
count() { cat "$TMP"/logs/{out-fresh,out-keepalive,in-fresh,forward,publish,served} 2>/dev/null | grep -c " $1"; }

csv=$OUT/soak.csv
events=$OUT/soak-events.csv
echo "t,dp_rss_kb,dp_fds,sup_rss_kb,sup_fds,ns_rss_kb,ns_fds,tcp_open,fetches_ok,fetches_bad,fetches_failed,serve_rss_kb,serve_fds" >"$csv"
echo "t,event,heal_s,bound_s,epoch" >"$events"
start=$(date +%s)
next_sample=0
next_chaos=$CHAOS_EVERY
chaos_i=0
echo "bench/soak.sh: $SECS s, chaos every $CHAOS_EVERY s; samples in $csv"
while :; do
	now=$(($(date +%s) - start))
	[ "$now" -ge "$SECS" ] && break
	if [ "$now" -ge "$next_sample" ]; then
		DP_PID=$(dp_pid)
		open=$(ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" --json 2>/dev/null |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["tcp_open"])' 2>/dev/null)
		echo "$now,$(proc_rss "${DP_PID:-0}"),$(proc_fds "${DP_PID:-0}"),$(proc_rss "$SUP_PID"),$(proc_fds "$SUP_PID"),$(proc_rss "$NS_PID"),$(proc_fds "$NS_PID"),${open:-},$(count ok),$(count bad),$(count fail),$(proc_rss "$SERVE_PID"),$(proc_fds "$SERVE_PID")" >>"$csv"
		next_sample=$((next_sample + 10))
	fi
	if [ "$now" -ge "$next_chaos" ]; then
		DP_PID=$(dp_pid)
		ev_at=$(date +%s.%N)
		case $((chaos_i % 5)) in
		0) ev=sigkill bound=1; kill -KILL "$DP_PID"; h=$(heal) ;;
		1) ev=sigstop-5s bound=7; kill -STOP "$DP_PID"; sleep 5; kill -CONT "$DP_PID"; h=$(heal); h=$(python3 -c "print(round($h + 5, 2))") ;;
		2) ev=netsetup-restart bound=2; ip netns exec "$DPNS" "$NETSETUP" restart --netns "/run/netns/$CT" >/dev/null 2>&1; h=$(heal) ;;
		3) ev=link-down-3s bound=7; ip -n "$PEER" link set veth0 down; sleep 3; ip -n "$PEER" link set veth0 up; h=$(heal); h=$(python3 -c "print(round($h + 3, 2))") ;;
		4) ev=serve-restart bound=1; kill -TERM "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; serve_start
		   h=$(heal "$SCT" 10.68.0.1 8080) ;;
		esac
		echo "$now,$ev,$h,$bound,$ev_at" >>"$events"
		echo "t=$now s: $ev, served again after $h s (bound $bound s)"
		chaos_i=$((chaos_i + 1))
		next_chaos=$((next_chaos + CHAOS_EVERY))
	fi
	sleep 1
done
touch "$STOP"
sleep 3
kill $UDP_PIDS 2>/dev/null	# mid-run: its last run is cut, not counted
wait $UDP_PIDS 2>/dev/null

# the verdict
python3 - "$csv" "$events" "$TMP/logs" "$OUT/soak.txt" "$SECS" "$TMP/nginx-denied/logs/access.log" "$start" <<'PY'
import csv, glob, os, sys
samples = list(csv.DictReader(open(sys.argv[1])))
events = list(csv.DictReader(open(sys.argv[2])))
logs, secs, start = sys.argv[3], int(sys.argv[5]), float(sys.argv[7])
fail, lines = [], []
def n(pat, name):
    return sum(1 for l in open(os.path.join(logs, name)) if l.split()[1:2] == [pat]) if os.path.exists(os.path.join(logs, name)) else 0
# A failure is chaos's only where a chaos event explains it: from a second
# before the event to FETCH_GRACE seconds after the service was back (a
# fetch waits 10 s for an answer; the iperf3 servers give up on a client
# after 3 s without data). Any other is a failure of the soak.
FETCH_GRACE = 12
# The served container (SCT) is touched only by the restarts of the daemon
# that attached it, the first one by everything else.
def window(e):
    return float(e["epoch"]) - 1, float(e["epoch"]) + float(e["heal_s"]) + FETCH_GRACE
windows = [window(e) for e in events if e["event"] != "serve-restart"]
serve_windows = [window(e) for e in events if e["event"] == "serve-restart"]
def explained(a, b, ws=windows):	# an interval [a, b] that meets a chaos window
    return any(a <= w1 and b >= w0 for w0, w1 in ws)
def lines_of(name):
    p = os.path.join(logs, name)
    return [l.split() for l in open(p)] if os.path.exists(p) else []
for w in ("out-fresh", "out-keepalive", "in-fresh", "forward", "publish", "served"):
    runs = lines_of(w)
    ok, bad = n("ok", w), n("bad", w)
    failed = [r for r in runs if r[1] == "fail"]
    ws = serve_windows if w == "served" else windows
    stray = [r for r in failed if not explained(float(r[0]), float(r[0]), ws)]
    lines.append("%-14s %6d bodies ok, %d bad, %d failed in chaos, %d outside it" % (w, ok, bad,
                 len(failed) - len(stray), len(stray)))
    if bad:
        fail.append("%s: %d bodies with a wrong checksum" % (w, bad))
    if not ok:
        fail.append("%s: no body fetched" % w)
    if stray:
        fail.append("%s: %d fetches failed with no chaos event near (%s)" % (w, len(stray),
                    ", ".join("%s at %.0f s" % (r[2], float(r[0]) - start) for r in stray[:4])))
for d in ("out", "in"):
    runs = lines_of("udp-" + d)
    oks = [r for r in runs if r[1] == "ok"]
    failed = [r for r in runs if r[1] == "fail"]
    # a run is "END fail WHY start START": explained when its span meets a window
    stray = [r for r in failed if not explained(float(r[4]) if len(r) > 4 else float(r[0]) - 20, float(r[0]))]
    lines.append("udp %-10s %6d runs of 20 s ok (Mbit/s %s), %d failed in chaos, %d outside it" % (d, len(oks),
                 " ".join(r[2] for r in oks[:6]) + (" ..." if len(oks) > 6 else ""), len(failed) - len(stray), len(stray)))
    if not oks:
        fail.append("udp %s: no run completed" % d)
    if stray:
        fail.append("udp %s: %d runs failed with no chaos event near (%s)" % (d, len(stray),
                    ", ".join("%s at %.0f s" % (r[2], float(r[0]) - start) for r in stray[:4])))
escapes = [l for l in open(os.path.join(logs, "probe")) if "ESCAPE" in l]
probes = sum(1 for _ in open(os.path.join(logs, "probe")))
lines.append("policy probes  %6d, escapes %d" % (probes, len(escapes)))
reached = sum(1 for _ in open(sys.argv[6])) if os.path.exists(sys.argv[6]) else 0
lines.append("denied server  %6d requests reached it" % reached)
if escapes or not probes or reached:
    fail.append("policy: %d escapes in %d probes, %d requests at the denied server: %s" % (len(escapes), probes,
                reached, escapes[:3]))
idle = [int(l.split()[2]) for l in open(os.path.join(logs, "idle"))]
lines.append("idle conns     held %d at the end, %d at least" % (idle[-1] if idle else 0, min(idle) if idle else 0))
for e in events:
    if float(e["heal_s"]) > float(e["bound_s"]):
        fail.append("t=%s %s: served again after %s s, bound %s s" % (e["t"], e["event"], e["heal_s"], e["bound_s"]))
lines.append("chaos events   %d: %s" % (len(events), ", ".join("%s %ss" % (e["event"], e["heal_s"]) for e in events[:8])))
third = [s for s in samples if int(s["t"]) >= secs / 3]
if len(third) >= 4:
    half = len(third) // 2
    # RSS: the peaks of the two halves; fds: their floors (the connections in flight
    # come and go, a leak raises the floor)
    for k in ("sup_rss_kb", "sup_fds", "ns_rss_kb", "ns_fds", "dp_fds", "dp_rss_kb", "serve_rss_kb", "serve_fds"):
        pick = max if k.endswith("kb") else min
        a = pick(int(s[k] or 0) for s in third[:half]); b = pick(int(s[k] or 0) for s in third[half:])
        lines.append("%-14s %s %d before, %d after (x%.2f)" % (k, "peak" if pick is max else "floor", a, b,
                     b / a if a else 0))
        if a and b > a * 1.10 and b - a > (2048 if k.endswith("kb") else 1):
            fail.append("%s grew from %d to %d after the warm-up" % (k, a, b))
out = open(sys.argv[4], "w")
for l in lines + ["FAIL: " + f for f in fail] + (["ok: no lost byte, no escape, every heal in bound, no growth"] if not fail else []):
    print(l); out.write(l + "\n")
sys.exit(1 if fail else 0)
PY
rc=$?
rm -rf "$LOGS" && mkdir -p "$LOGS" && cp -r "$TMP/logs/." "$LOGS/" && echo "bench/soak.sh: the logs are in $LOGS"
if command -v gnuplot >/dev/null; then
	marks=$(tail -n +2 "$events" | awk -F, '{printf "set arrow from %s, graph 0 to %s, graph 1 nohead lc rgb \"#cc0000\" dt 2; ", $1, $1}')
	gnuplot <<EOF
set terminal png size 1200,800
set output "$PLOT"
set datafile separator ","
set multiplot layout 3,1 title "bench/soak.sh: $SECS s, chaos every $CHAOS_EVERY s (dashed: kill, stop, restart, link down, serve restart in turn)"
$marks
set ylabel "RSS (MiB)"
plot "$csv" using 1:(\$2/1024) skip 1 with lines title "datapath", "" using 1:(\$4/1024) skip 1 with lines title "supervisor", "" using 1:(\$6/1024) skip 1 with lines title "netsetup", "" using 1:(\$12/1024) skip 1 with lines title "serve daemon"
set ylabel "open fds"
plot "$csv" using 1:3 skip 1 with lines title "datapath", "" using 1:5 skip 1 with lines title "supervisor", "" using 1:7 skip 1 with lines title "netsetup", "" using 1:13 skip 1 with lines title "serve daemon"
set ylabel "1 MiB bodies"
set xlabel "seconds"
plot "$csv" using 1:9 skip 1 with lines title "fetched (all workers)", "" using 1:11 skip 1 with lines title "failed (chaos)"
unset multiplot
EOF
fi
exit $rc
