#!/usr/bin/env bash
# Shards (issue 20): `netsetup run --shards 2` makes the container's TUN
# multi-queue with two queues and gives eth0 two channels in a
# PACKET_FANOUT_EBPF group, both steered by the program of common/flowhash.c
# (test_netsetup_steer checks, flow by flow, that both halves of a
# conversation land on one shard), and the datapath runs two stacks in two
# threads, one per queue and channel:
#  - netsetup and the datapath say so; the TUN has two queues; stats show
#    two shards, shard 0 reading one channel;
#  - TCP (IPv4, IPv6) and UDP from the container, ICMP echo both families,
#    and a connection into the container all work;
#  - both shards' channels and queues carried frames and connections; the
#    totals are their sum; each shard that asked for the peer's addresses
#    has them, whichever heard the answer;
#  - `datapath ss --trace` of every connection while that traffic runs has
#    samples of both shards and ends cleanly on SIGINT; `datapath ss --json`
#    answers meanwhile;
#  - SANDNET_NO_STEERING=1 (what a kernel that refuses the program gets):
#    one line says so, one channel and one queue, and the container is
#    served all the same;
#  - a datapath of two shards killed: the next one serves, with two shards;
#  - without netsetup --shards, the datapath's --shards (HELLO) decides, and
#    by default one shard per CPU it may run on (taskset -c 0: one);
#    netsetup's own --shards wins;
#  - the caps are shared out: both shards hold the defaults of one;
#  - the TCP memory cap holds: with --tcp-mem 2M, four 64 MiB fetches each
#    way at once keep every shard's rings within its 1 MiB share (give or
#    take what docs/security.md allows), and reach it;
#  - services on two shards: 16 fetches through a TCP forward (whose ports
#    each shard picks so that the answers come back to it), 16 through a TCP
#    publish (on both shards), 20 datagrams through a UDP forward (on the
#    shard of its address pair); the services' rows count both shards.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

# per_shard LINK: the frames each shard's LINK (eth0, or sn-eth0 the TUN) read,
# space separated: shard 0's from the top level, the others' from shards[]
per_shard() {
	dp_stat "' '.join(str((s['links'].get('$1') or s['inner_links']['$1'])['rx_frames']) for s in [raw] + raw['shards'])"
}

# traffic: 12 fetches over IPv4 and IPv6, 8 UDP exchanges, pings both ways
traffic() {
	local i
	for i in 1 2 3 4 5 6; do
		tcp_fetch "$CT" "http://10.77.0.1:8000/f1" "$SN_TMP/f1"
		tcp_fetch "$CT" "http://[fd77::1]:8000/f1" "$SN_TMP/f1"
	done
	for i in 1 2 3 4 5 6 7 8; do
		out=$(ip netns exec "$CT" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.sendto(b"shard %s" % sys.argv[1].encode(), ("10.77.0.1", 7000))
print(s.recvfrom(100)[0].decode())' "$i") || sn_fail "UDP exchange $i got no answer"
		[ "$out" = "shard $i" ] || sn_fail "UDP exchange $i: got '$out'"
	done
	ip netns exec "$CT" ping -c 2 -i 0.2 -W 2 10.77.0.1 >/dev/null || sn_fail "ping 10.77.0.1 from the container"
	ip netns exec "$CT" ping -6 -c 2 -i 0.2 -W 2 fd77::1 >/dev/null || sn_fail "ping fd77::1 from the container"
	ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 >/dev/null || sn_fail "ping the container from the peer"
	tcp_fetch "$PEER" "http://10.77.0.2:8001/f1" "$SN_TMP/f1"
}

DP_NO_START=1 dp_env_up
tcp_files "$SN_TMP"
tcp_http "$PEER" "::" 8000 "$SN_TMP"
sn_udp_echo "$PEER" 10.77.0.1 7000

sn_log "two shards: two queues, two channels, steered"
DP_SHARDS=2 dp_start
face_check_fenced
tcp_http "$CT" "::" 8001 "$SN_TMP"
grep -q "link eth0 handed to the datapath: .*, 2 channels, container face sn-eth0, steered to shards" "$DP_LOG" ||
	{ cat "$DP_LOG" >&2; sn_fail "netsetup did not steer eth0 to two shards"; }
queues=$(ip netns exec "$CT" ls /sys/class/net/sn-eth0/queues | tr '\n' ' ')
[ "$queues" = "rx-0 rx-1 tx-0 tx-1 " ] || sn_fail "the TUN's queues: $queues"
grep -q "^datapath: serving 1 link(s), 0 service(s) as uid [0-9]* in 2 shards" "$DP_LOG" ||
	{ cat "$DP_LOG" >&2; sn_fail "the datapath does not run two shards"; }
[ "$(dp_stat "raw['n_shards']")" = 2 ] || sn_fail "stats do not show two shards"
[ "$(dp_stat "raw['links']['eth0']['channels']")" = 1 ] || sn_fail "shard 0 reads more than its channel of eth0"
# every TCP connection traced while the traffic runs: each shard's engines
# queue samples that the control socket's thread reads (under ThreadSanitizer
# in make check's tsan step: one writer, one reader, no lock)
ip netns exec "$DPNS" "$DATAPATH" ss --control "$DP_CTL" --trace "$SN_TMP/trace.jsonl" --seconds 30 &
trace_pid=$!
sn_on_exit "kill $trace_pid"
sn_wait_for 5 test -e "$SN_TMP/trace.jsonl" || sn_fail "datapath ss --trace did not start"
traffic
ip netns exec "$DPNS" "$DATAPATH" ss --control "$DP_CTL" --json >"$SN_TMP/ss.json" || sn_fail "datapath ss --json"
kill -INT "$trace_pid"
wait "$trace_pid" || sn_fail "datapath ss --trace did not end cleanly on SIGINT"
python3 - "$SN_TMP/trace.jsonl" "$SN_TMP/ss.json" <<'EOF' || sn_fail "the trace does not cover both shards"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
end = lines[-1]
assert end.get("trace") == "end", end
samples = lines[:-1]
shards = {(s["shard"], s["engine"]) for s in samples}
assert {0, 1} <= {s for s, _ in shards}, shards
assert all(s["event"] in ("ack", "rto", "tlp", "rack_timer", "ece") and s["cwnd"] > 0 for s in samples)
json.load(open(sys.argv[2]))
print(len(samples), "samples from", sorted(shards), "dropped", end["dropped"])
EOF
read -r c0 c1 <<<"$(per_shard eth0)"
read -r q0 q1 <<<"$(per_shard sn-eth0)"
sn_log "eth0's channels read $c0 and $c1 frames, the TUN's queues $q0 and $q1 (shard 0, shard 1)"
[ "$c0" -gt 0 ] && [ "$c1" -gt 0 ] || sn_fail "one of eth0's channels got nothing: $c0 $c1"
[ "$q0" -gt 0 ] && [ "$q1" -gt 0 ] || sn_fail "one of the TUN's queues got nothing: $q0 $q1"
# in one snapshot: the totals are the shards' sum, every shard knows the peer
# (the one that heard its answer told the other) and ran connections
dp_stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
shards = [d] + d["shards"]
assert len(shards) == 2, len(shards)
rx = sum(s["links"]["eth0"]["rx_frames"] for s in shards)
assert d["totals"]["network_rx_frames"] == rx, (d["totals"]["network_rx_frames"], rx)
# a shard asks for the peer only when one of its conversations needs it (the
# steering may give all IPv6 ones to one shard); whichever shard heard the
# answer, every shard that asked has it
known = set()
for i, s in enumerate(shards):
    mine = {n["address"]: n["mac"] for n in s["neighbours"] if n["address"] in ("10.77.0.1", "fd77::1")}
    assert all(mac != "-" for mac in mine.values()), f"shard {i} still waits for {mine}"
    known |= set(mine)
assert known == {"10.77.0.1", "fd77::1"}, f"the shards know {known}"
opened = [s["face"]["counters"]["tcp_outbound"] + s["face"]["counters"]["tcp_inbound"] for s in shards]
assert sum(opened) == d["totals"]["tcp_outbound"] + d["totals"]["tcp_inbound"], opened
assert all(n > 0 for n in opened), f"connections per shard: {opened}"
print("connections per shard:", opened)
# the caps are the process'"'"'s: two shards hold the defaults of one between them
# (datapath --help: 65536 connections, 1024 half-open, 4096 TIME-WAIT, 256 MiB)
want = {"tcp_conns": 65536, "tcp_half_open": 1024, "tcp_timewait": 4096, "tcp_mem": 256 << 20,
        "face_tcp_conns": 65536, "face_tcp_mem": 256 << 20, "reasm_mem": 4 << 20}
for name, total in want.items():
    got = [s["limits"][name]["max"] for s in shards]
    assert sum(got) == total, f"{name}: {got} per shard, {sum(got)} in all, not {total}"
print("caps shared out:", {n: [s["limits"][n]["max"] for s in shards] for n in ("tcp_conns", "tcp_mem")})
' || sn_fail "the shards disagree with their totals"
face_check_clean

sn_log "a datapath of two shards killed: the next one serves, with two shards"
kill -9 "$DP_PID"
sn_wait_for 10 sh -c "[ \"\$(ip netns exec '$DPNS' '$DATAPATH' stats --control '$DP_CTL' --json 2>/dev/null |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get(\"n_shards\", 0), d[\"supervisor\"][\"restarts\"])' 2>/dev/null)\" = '2 1' ]" ||
	sn_fail "no datapath of two shards after the first died"
tcp_fetch "$CT" "http://10.77.0.1:8000/f1" "$SN_TMP/f1"
tcp_fetch "$CT" "http://[fd77::1]:8000/f1" "$SN_TMP/f1"
dp_env_down
face_check_gone "$CT"

sn_log "netsetup not told: the datapath's word in HELLO (its --shards 2), which netsetup's --shards 1 overrides"
DP_SHARDS= dp_start --shards 2
grep -q "link eth0 handed to the datapath: .*, 2 channels, container face sn-eth0, steered to shards" "$DP_LOG" ||
	{ cat "$DP_LOG" >&2; sn_fail "netsetup did not follow the datapath's --shards 2"; }
[ "$(dp_stat "raw['n_shards']")" = 2 ] || sn_fail "datapath --shards 2 runs $(dp_stat "raw['n_shards']") shard(s)"
tcp_fetch "$CT" "http://10.77.0.1:8000/f1" "$SN_TMP/f1"
dp_env_down
DP_SHARDS=1 dp_start --shards 2
[ "$(dp_stat "raw['n_shards']")" = 1 ] || sn_fail "netsetup --shards 1 did not win over the datapath's --shards 2"
dp_env_down

sn_log "neither says: one shard per CPU the datapath may run on"
cpus=$(python3 -c 'import os; print(min(len(os.sched_getaffinity(0)), 64))')
DP_SHARDS= dp_start
[ "$(dp_stat "raw['n_shards']")" = "$cpus" ] ||
	sn_fail "by default $(dp_stat "raw['n_shards']") shard(s), not one per CPU ($cpus)"
tcp_fetch "$CT" "http://10.77.0.1:8000/f1" "$SN_TMP/f1"
dp_env_down
DP_SHARDS= DP_WRAP="taskset -c 0" dp_start
[ "$(dp_stat "raw['n_shards']")" = 1 ] ||
	sn_fail "a datapath allowed one CPU runs $(dp_stat "raw['n_shards']") shard(s)"
tcp_fetch "$CT" "http://10.77.0.1:8000/f1" "$SN_TMP/f1"
dp_env_down
face_check_gone "$CT"

sn_log "steering refused: one shard, and the container is served"
SANDNET_NO_STEERING=1 DP_SHARDS=2 dp_start
grep -q "steering off (SANDNET_NO_STEERING=1); serving with one shard instead of 2" "$DP_LOG" ||
	{ cat "$DP_LOG" >&2; sn_fail "no line about the fallback"; }
grep -q "link eth0 handed to the datapath: .*, 1 channel, container face sn-eth0$" "$DP_LOG" ||
	{ cat "$DP_LOG" >&2; sn_fail "the fallback did not serve one channel"; }
queues=$(ip netns exec "$CT" ls /sys/class/net/sn-eth0/queues | tr '\n' ' ')
[ "$queues" = "rx-0 tx-0 " ] || sn_fail "the fallback TUN's queues: $queues"
[ "$(dp_stat "raw['n_shards']")" = 1 ] || sn_fail "the fallback runs more than one shard"
traffic
face_check_clean
dp_env_down
face_check_gone "$CT"

sn_log "the TCP memory cap holds: --tcp-mem 2M over two shards, four 64 MiB fetches at once, each way"
DP_SHARDS=2 dp_start --tcp-mem 2M
# every snapshot: each shard's engines within their share, give or take
# what docs/security.md allows: 32 KiB a connection, and a receive ring's
# worth for the window it announced while the cap still had room (its peer
# may fill it after other rings took that room); the peak and the cap's
# hits are kept
memcheck() {
	dp_stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
peak = json.load(open(sys.argv[1]))
for i, s in enumerate([d] + d["shards"]):
    lim = s["limits"]
    for eng, conns in (("tcp_mem", "tcp_connections"), ("face_tcp_mem", "face_tcp_connections")):
        m = lim[eng]
        assert m["max"] == 1 << 20, (i, eng, m)
        rcv = [c["rcvbuf"] for c in s[conns]]
        slack = sum(32 * 1024 + r for r in rcv)
        assert m["used"] <= m["max"] + slack, f"shard {i} {eng}: {m}, receive rings {rcv}"
        k = f"{i} {eng}"
        peak[k] = max(peak.get(k, 0), m["used"])
        peak[k + " hits"] = m["hits"]
json.dump(peak, open(sys.argv[1], "w"))
' "$SN_TMP/peak.json"
}
echo '{}' >"$SN_TMP/peak.json"
for where in "$PEER http://10.77.0.2:8001" "$CT http://10.77.0.1:8000"; do
	set -- $where
	pids=""
	for i in 1 2 3 4; do
		ip netns exec "$1" curl -sS --max-time 60 -o "$SN_TMP/big$i" "$2/f64m" & pids="$pids $!"
	done
	for _ in $(seq 300); do
		memcheck || sn_fail "a shard's TCP rings went past --tcp-mem"
		running=0
		for p in $pids; do kill -0 "$p" 2>/dev/null && running=1; done
		[ "$running" = 1 ] || break
		sleep 0.1
	done
	for p in $pids; do wait "$p" || sn_fail "a 64 MiB fetch from $2 failed"; done
	want=$(sha256sum <"$SN_TMP/f64m" | cut -d' ' -f1)
	for i in 1 2 3 4; do
		[ "$(sha256sum <"$SN_TMP/big$i" | cut -d' ' -f1)" = "$want" ] || sn_fail "$2/f64m #$i arrived damaged"
		rm -f "$SN_TMP/big$i"
	done
done
python3 -c '
import json, sys
peak = json.load(open(sys.argv[1]))
print("ring memory at its peak, and the cap'"'"'s hits:", peak)
assert sum(v for k, v in peak.items() if k.endswith(" hits")) > 0, "the cap was never reached: the check proved nothing"
' "$SN_TMP/peak.json" || sn_fail "the 2M cap was never reached"
face_check_clean
dp_env_down
face_check_gone "$CT"

sn_log "services on two shards: a TCP publish on each, a TCP forward picking ports of its shard, a UDP forward"
tcp_http "$DPNS" 127.0.0.1 8091 "$SN_TMP"
DP_SHARDS=2 dp_start --publish tcp:8090=127.0.0.1:8091 --forward tcp:127.0.0.1:8080=10.77.0.1:8000 \
	--forward udp:127.0.0.1:7001=10.77.0.1:7000
grep -q "^datapath: serving 1 link(s), 3 service(s) as uid [0-9]* in 2 shards" "$DP_LOG" ||
	{ cat "$DP_LOG" >&2; sn_fail "the services are not served in two shards"; }
for i in $(seq 1 16); do
	tcp_fetch "$DPNS" "http://127.0.0.1:8080/f1" "$SN_TMP/f1"
	tcp_fetch "$PEER" "http://10.77.0.2:8090/f1" "$SN_TMP/f1"
done
ip netns exec "$DPNS" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
for i in range(20):
    s.sendto(b"dgram %d" % i, ("127.0.0.1", 7001))
    assert s.recvfrom(100)[0] == b"dgram %d" % i, i
' || sn_fail "the UDP forward on two shards"
dp_stats | sed -n '/^services/,/^[a-z]/p'
dp_stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
svc = {s["spec"]: s for s in d["services"]}
assert len(svc) == 3, svc
for spec, s in svc.items():
    assert s["errors"] == 0 and s.get("connect_failed", 0) == 0, (spec, s)
assert svc["tcp:127.0.0.1:8080=10.77.0.1:8000"]["accepted"] == 16, svc
assert svc["tcp:8090=127.0.0.1:8091"]["accepted"] == 16, svc
assert svc["udp:127.0.0.1:7001=10.77.0.1:7000"]["from_target"] == 20, svc
segs = [s["tcp"]["segs_in"] for s in [d] + d["shards"]]
assert all(n > 0 for n in segs), f"TCP segments per shard: {segs}"
print("services summed over both shards; outer TCP segments per shard:", segs)
' || sn_fail "the services on two shards"
face_check_clean
dp_env_down
face_check_gone "$CT"
