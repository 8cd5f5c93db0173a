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
#   - and chaos every CHAOS_EVERY seconds, in turn: the datapath SIGKILLed,
#     SIGSTOPped for 5 s, restarted by `netsetup restart`, the peer's link
#     set down for 3 s; after each, the time until a new connection out works
#     again (the heal), against its bound.
# Every 10 s a sample: RSS and open fds of netsetup, the supervisor and the
# datapath, the container's TCP pairs open, the fetches done, bad and failed.
# Checked at the end (exit 1 and a line saying what, else 0):
#   - not one body with a wrong checksum, not one probe that got through;
#   - every heal within its bound (SIGKILL 1 s, restart 2 s, SIGSTOP 5 s +
#     2 s, link down 3 s + 4 s);
#   - no request reaches the server at the address the policy denies;
#   - after the warm-up (the first third), split in two halves: RSS peaks of
#     netsetup, the supervisor and the datapath (which starts over after each
#     kill and restart) and fd floors (the connections in flight come and
#     go; a leak raises the floor) grow by at most 10 % (no leak).
# Writes OUT/soak.csv (the samples), OUT/soak-events.csv (chaos and heals),
# OUT/soak.txt (the summary) and PLOT (RSS, fds and fetches over time, the
# chaos events marked).
#
#   bench/soak.sh BUILD_DIR          SECS (default 3600), CHAOS_EVERY (60),
#                                    OUT (bench/results), PLOT (docs/soak.png)
set -u
build=${1:?usage: bench/soak.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
SECS=${SECS:-3600}
CHAOS_EVERY=${CHAOS_EVERY:-60}
OUT=${OUT:-$repo/bench/results}
PLOT=${PLOT:-$repo/docs/soak.png}
NETSETUP=$build/netsetup
DATAPATH=$build/datapath
[ "$(id -u)" -eq 0 ] || { echo "bench/soak.sh: needs root (namespaces)"; exit 1; }
for t in nginx iperf3 dnsmasq curl python3; do
	command -v "$t" >/dev/null || { echo "bench/soak.sh: $t missing (scripts/install-deps.sh)"; exit 1; }
done
mkdir -p "$OUT"
. "$here/lib.sh"
bench_start sk CT:ct PEER:peer DPNS:dp
for ns in $ALL_NS; do ip netns add "$ns" && ip -n "$ns" link set lo up || exit 1; done
ip link add ${P}a type veth peer name ${P}b &&
	ip link set ${P}a netns "$CT" name eth0 && ip link set ${P}b netns "$PEER" name veth0 &&
	ip -n "$CT" link set eth0 up && ip -n "$PEER" link set veth0 up &&
	ip -n "$CT" addr add 10.67.0.2/24 dev eth0 && ip -n "$CT" route add default via 10.67.0.1 &&
	ip -n "$PEER" addr add 10.67.0.1/24 dev veth0 && ip -n "$PEER" addr add 10.67.0.9/24 dev veth0 ||
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
nginx_in "$PEER" denied 8080 10.67.0.9	# what the policy must keep the container from
nginx_in "$CT" ct 8080 0.0.0.0
nginx_in "$DPNS" published 8090 127.0.0.1
bench_bg "$PEER" dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces --listen-address=10.67.0.1 \
	--port=53 --pid-file= --host-record=web.soak.test,10.67.0.1 --host-record=other.soak.test,10.67.0.9
bench_bg "$PEER" iperf3 -s -p 5201
bench_bg "$PEER" iperf3 -s -p 5202
printf 'nameserver 10.67.0.1\noptions attempts:2 timeout:1\n' >"$TMP/resolv.conf"

# the idle connections' peer: takes and holds
cat >"$TMP/holder.py" <<'PY'
import selectors, socket
sel = selectors.DefaultSelector()
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("10.67.0.1", 9000)); ls.listen(4096); ls.setblocking(False)
sel.register(ls, selectors.EVENT_READ)
while True:
    for key, _ in sel.select():
        if key.fileobj is ls:
            try:
                while True:
                    c, _ = ls.accept(); c.setblocking(False); sel.register(c, selectors.EVENT_READ)
            except BlockingIOError:
                pass
        else:
            try:
                d = key.fileobj.recv(4096)
            except OSError:
                d = b""
            if not d:
                sel.unregister(key.fileobj); key.fileobj.close()
PY
bench_bg "$PEER" python3 "$TMP/holder.py"

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
ip netns exec "$CT" python3 "$TMP/idle.py" 1000 "$TMP/logs/idle" "$STOP" &
in_ct python3 "$TMP/probe.py" "$TMP/logs/probe" "$STOP" &
udp_loop() {	# DIR: iperf3 -u runs of 20 s until the stop
	local r=''
	[ "$1" = in ] && r=-R
	while [ ! -e "$STOP" ] && [ -e "/run/netns/$CT" ]; do	# ends with the run, or its namespaces
		ip netns exec "$CT" iperf3 -c 10.67.0.1 -p $((5201 + (${#r} > 0))) -u -b 20M -l 1400 -t 20 $r --json 2>/dev/null |
			python3 -c 'import json,sys,time
try:
    e = json.load(sys.stdin)["end"]["sum"]; print("%.1f ok %.1f %.3f" % (time.time(), e["bits_per_second"] / 1e6, e["lost_percent"]))
except Exception as x:
    print("%.1f fail %s" % (time.time(), type(x).__name__))' >>"$TMP/logs/udp-$1"
		sleep 1
	done
}
udp_loop out &
UDP_PIDS=$!
udp_loop in &
UDP_PIDS="$UDP_PIDS $!"

# heal: seconds until a connection out works again (30 s at most)
heal() {
	ip netns exec "$CT" python3 - <<'PY'
import socket, time
t0 = time.monotonic()
while time.monotonic() - t0 < 30:
    try:
        socket.create_connection(("10.67.0.1", 9000), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.02)
print("%.2f" % (time.monotonic() - t0))
PY
}
proc_rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
proc_fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
count() { cat "$TMP"/logs/{out-fresh,out-keepalive,in-fresh,forward,publish} 2>/dev/null | grep -c " $1"; }

csv=$OUT/soak.csv
events=$OUT/soak-events.csv
echo "t,dp_rss_kb,dp_fds,sup_rss_kb,sup_fds,ns_rss_kb,ns_fds,tcp_open,fetches_ok,fetches_bad,fetches_failed" >"$csv"
echo "t,event,heal_s,bound_s" >"$events"
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
		echo "$now,$(proc_rss "${DP_PID:-0}"),$(proc_fds "${DP_PID:-0}"),$(proc_rss "$SUP_PID"),$(proc_fds "$SUP_PID"),$(proc_rss "$NS_PID"),$(proc_fds "$NS_PID"),${open:-},$(count ok),$(count bad),$(count fail)" >>"$csv"
		next_sample=$((next_sample + 10))
	fi
	if [ "$now" -ge "$next_chaos" ]; then
		DP_PID=$(dp_pid)
		case $((chaos_i % 4)) in
		0) ev=sigkill bound=1; kill -KILL "$DP_PID"; h=$(heal) ;;
		1) ev=sigstop-5s bound=7; kill -STOP "$DP_PID"; sleep 5; kill -CONT "$DP_PID"; h=$(heal); h=$(python3 -c "print(round($h + 5, 2))") ;;
		2) ev=netsetup-restart bound=2; ip netns exec "$DPNS" "$NETSETUP" restart --netns "/run/netns/$CT" >/dev/null 2>&1; h=$(heal) ;;
		3) ev=link-down-3s bound=7; ip -n "$PEER" link set veth0 down; sleep 3; ip -n "$PEER" link set veth0 up; h=$(heal); h=$(python3 -c "print(round($h + 3, 2))") ;;
		esac
		echo "$now,$ev,$h,$bound" >>"$events"
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
python3 - "$csv" "$events" "$TMP/logs" "$OUT/soak.txt" "$SECS" "$TMP/nginx-denied/logs/access.log" <<'PY'
import csv, glob, os, sys
samples = list(csv.DictReader(open(sys.argv[1])))
events = list(csv.DictReader(open(sys.argv[2])))
logs, secs = sys.argv[3], int(sys.argv[5])
fail, lines = [], []
def n(pat, name):
    return sum(1 for l in open(os.path.join(logs, name)) if l.split()[1:2] == [pat]) if os.path.exists(os.path.join(logs, name)) else 0
for w in ("out-fresh", "out-keepalive", "in-fresh", "forward", "publish"):
    ok, bad, failed = n("ok", w), n("bad", w), n("fail", w)
    lines.append("%-14s %6d bodies ok, %d bad, %d failed (chaos)" % (w, ok, bad, failed))
    if bad:
        fail.append("%s: %d bodies with a wrong checksum" % (w, bad))
    if not ok:
        fail.append("%s: no body fetched" % w)
for d in ("out", "in"):
    runs = [l.split() for l in open(os.path.join(logs, "udp-" + d))] if os.path.exists(os.path.join(logs, "udp-" + d)) else []
    oks = [r for r in runs if r[1] == "ok"]
    lines.append("udp %-10s %6d runs of 20 s ok (Mbit/s %s), %d failed" % (d, len(oks),
                 " ".join(r[2] for r in oks[:6]) + (" ..." if len(oks) > 6 else ""), len(runs) - len(oks)))
    if not oks:
        fail.append("udp %s: no run completed" % d)
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
    for k in ("sup_rss_kb", "sup_fds", "ns_rss_kb", "ns_fds", "dp_fds", "dp_rss_kb"):
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
if command -v gnuplot >/dev/null; then
	marks=$(tail -n +2 "$events" | awk -F, '{printf "set arrow from %s, graph 0 to %s, graph 1 nohead lc rgb \"#cc0000\" dt 2; ", $1, $1}')
	gnuplot <<EOF
set terminal png size 1200,800
set output "$PLOT"
set datafile separator ","
set multiplot layout 3,1 title "bench/soak.sh: $SECS s, chaos every $CHAOS_EVERY s (dashed: kill, stop, restart, link down in turn)"
$marks
set ylabel "RSS (MiB)"
plot "$csv" using 1:(\$2/1024) skip 1 with lines title "datapath", "" using 1:(\$4/1024) skip 1 with lines title "supervisor", "" using 1:(\$6/1024) skip 1 with lines title "netsetup"
set ylabel "open fds"
plot "$csv" using 1:3 skip 1 with lines title "datapath", "" using 1:5 skip 1 with lines title "supervisor", "" using 1:7 skip 1 with lines title "netsetup"
set ylabel "1 MiB bodies"
set xlabel "seconds"
plot "$csv" using 1:9 skip 1 with lines title "fetched (all workers)", "" using 1:11 skip 1 with lines title "failed (chaos)"
unset multiplot
EOF
fi
exit $rc
