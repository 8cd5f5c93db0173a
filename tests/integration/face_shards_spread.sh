#!/usr/bin/env bash
# Shards (issue 20), what steering must get right, on two shards:
#  - 64 TCP connections out of the container and 64 into it, open at once,
#    16 UDP flows and pings: both shards carry some; each pair's inner and
#    outer connections are on the same shard (the shard's own stats list
#    both halves);
#  - ICMP errors reach the connection they are about: a refused port (UDP,
#    port unreachable), a host the router cannot reach (TCP connects on
#    four ports: host unreachable), and
#    "fragmentation needed" / "packet too big" from a router whose next link
#    has a smaller MTU: 16 uploads to a host behind it, IPv4 and IPv6, each
#    arrives intact, and every shard lowered its MSS from the router's word;
#  - fragments reach their socket: 4000-byte datagrams both ways, both
#    families.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

CONNS="$SANDNET_TESTS/lib/conns.py"

DP_NO_START=1 dp_env_up
# "far": a host behind the peer, which routes to it over a link of MTU 1400
# (the far end's is 1500: it advertises an MSS that does not fit the link)
FAR=$(sn_ns far)
sn_netns_add far
sn_veth_add peer veth1 far eth0
ip -n "$PEER" link set veth1 mtu 1400
ip -n "$PEER" addr add 10.78.0.1/24 dev veth1
ip -n "$PEER" addr add fd78::1/64 dev veth1 nodad
ip -n "$FAR" addr add 10.78.0.2/24 dev eth0
ip -n "$FAR" addr add fd78::2/64 dev eth0 nodad
ip -n "$FAR" route add default via 10.78.0.1
ip -n "$FAR" -6 route add default via fd78::1
# the router answers every packet too big at once: no ICMP rate limit
ip netns exec "$PEER" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
	net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0 net.ipv4.icmp_msgs_per_sec=100000 \
	net.ipv4.icmp_msgs_burst=100000 || sn_fail "the router's sysctls"
DP_SHARDS=2 dp_start
face_check_fenced

ip netns exec "$PEER" python3 "$CONNS" serve :: 9000 &
sn_on_exit "kill $!"
ip netns exec "$CT" python3 "$CONNS" serve :: 9001 &
sn_on_exit "kill $!"
ip netns exec "$FAR" python3 "$CONNS" serve :: 9100 &
sn_on_exit "kill $!"
sn_udp_echo "$PEER" :: 7000
for ns_port in "$PEER 9000" "$CT 9001" "$FAR 9100"; do
	set -- $ns_port
	sn_wait_for 10 sh -c "ip netns exec '$1' ss -Hltn 'sport = :$2' | grep -q ." || sn_fail "no server on $2 in $1"
done

sn_log "64 connections out, 64 in, 16 UDP flows, pings: open at once"
ip netns exec "$CT" python3 "$CONNS" hold 10.77.0.1 9000 64 "$SN_TMP/done" >"$SN_TMP/out.txt" 2>&1 &
out_pid=$!
ip netns exec "$PEER" python3 "$CONNS" hold 10.77.0.2 9001 64 "$SN_TMP/done" >"$SN_TMP/in.txt" 2>&1 &
in_pid=$!
sn_on_exit "touch $SN_TMP/done"
sn_wait_for 30 sh -c "grep -q '^open 64' '$SN_TMP/out.txt' && grep -q '^open 64' '$SN_TMP/in.txt'" ||
	sn_fail "not all 128 connections opened: $(cat "$SN_TMP/out.txt" "$SN_TMP/in.txt")"
ip netns exec "$CT" python3 -c '
import socket
for fam, addr in ((socket.AF_INET, "10.77.0.1"), (socket.AF_INET6, "fd77::1")):
    for i in range(8):
        s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(3)
        s.sendto(b"flow %d" % i, (addr, 7000))
        assert s.recvfrom(100)[0] == b"flow %d" % i, (addr, i)
' || sn_fail "UDP flows"
ip netns exec "$CT" ping -c 2 -i 0.2 -W 2 10.77.0.1 >/dev/null || sn_fail "ping"
ip netns exec "$CT" ping -6 -c 2 -i 0.2 -W 2 fd77::1 >/dev/null || sn_fail "ping -6"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 >/dev/null || sn_fail "ping the container"
dp_stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
shards = [d] + d["shards"]
assert len(shards) == 2
per = []
for k, s in enumerate(shards):
    outer = {(c["local"], c["remote"]) for c in s["tcp_connections"] if c["state"] == "ESTABLISHED"}
    inner = {(c["local"], c["remote"]) for c in s["face_tcp_connections"] if c["state"] == "ESTABLISHED"}
    pairs = [p for p in s["face"]["pairs"] if p["inner_state"] == "ESTABLISHED" and p["outer_state"] == "ESTABLISHED"]
    for p in pairs:
        assert (p["outer_local"], p["remote"]) in outer, f"shard {k}: the outer half of {p} is not here"
        assert (p["remote"], p["container"]) in inner, f"shard {k}: the inner half of {p} is not here"
    per.append((sum(p["direction"] == "outbound" for p in pairs), sum(p["direction"] == "inbound" for p in pairs),
                s["face"]["udp"]["flows"], s["face"]["counters"]["echo_to_outer"]))
out = sum(p[0] for p in per); inb = sum(p[1] for p in per)
assert out == 64 and inb == 64, f"pairs out/in per shard: {per}"
for k, (o, i, u, e) in enumerate(per):
    assert o > 0 and i > 0, f"shard {k} carried {o} outbound and {i} inbound connections: {per}"
assert sum(p[2] for p in per) >= 16, f"UDP flows per shard: {per}"
print("per shard (outbound pairs, inbound pairs, UDP flows, echo requests):", per)
' || sn_fail "the connections per shard"
touch "$SN_TMP/done"
wait "$out_pid" || sn_fail "the outbound connections: $(cat "$SN_TMP/out.txt")"
wait "$in_pid" || sn_fail "the inbound connections: $(cat "$SN_TMP/in.txt")"

sn_log "ICMP errors reach their connection"
for port in 9990 9991 9992 9993; do
	got=$(ip netns exec "$CT" python3 -c '
import errno, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.connect(("10.77.0.1", int(sys.argv[1])))
s.send(b"x")
try:
    s.recv(10); print("answered")
except OSError as e:
    print(errno.errorcode.get(e.errno, "TIMEOUT") if e.errno else "TIMEOUT")' "$port")
	[ "$got" = ECONNREFUSED ] || sn_fail "UDP to a closed port $port: $got, not ECONNREFUSED"
done
face_peer_router
face_trace_start 30
for port in 80 81 82 83; do
	got=$(face_errno "$CT" 4 10.98.0.1 "$port")
	[ "$got" = EHOSTUNREACH ] ||
		{ face_unreach_evidence 10.98.0.1; sn_fail "TCP to an unreachable host, port $port: $got, not EHOSTUNREACH"; }
done

sn_log "a router with a smaller MTU: 16 uploads of 256 KiB to a host behind it, both families"
before=$(dp_stat "d['tcp']['pmtu_updates']")
for i in $(seq 1 8); do
	ip netns exec "$CT" python3 "$CONNS" sink 10.78.0.2 9100 262144 >/dev/null || sn_fail "IPv4 upload $i"
	ip netns exec "$CT" python3 "$CONNS" sink fd78::2 9100 262144 >/dev/null || sn_fail "IPv6 upload $i"
done
dp_stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
upd = [s["tcp"]["pmtu_updates"] for s in [d] + d["shards"]]
assert all(n > 0 for n in upd), f"PMTU updates per shard: {upd}"
print("PMTU updates per shard:", upd)
' || sn_fail "the router's packet-too-big did not reach every shard"
[ "$(dp_stat "d['tcp']['pmtu_updates']")" -ge $((before + 16)) ] ||
	sn_fail "only $(($(dp_stat "d['tcp']['pmtu_updates']") - before)) PMTU updates for 16 uploads"

sn_log "fragments reach their socket: 4000-byte datagrams both ways, both families"
ip netns exec "$CT" python3 -c '
import socket
for fam, addr in ((socket.AF_INET, "10.77.0.1"), (socket.AF_INET6, "fd77::1")):
    for i in range(4):
        s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(3)
        data = bytes([i]) * 4000
        s.sendto(data, (addr, 7000))
        assert s.recvfrom(5000)[0] == data, (addr, i)
' || sn_fail "4000-byte datagrams"
[ "$(dp_stat "d['face']['counters']['reassembled']")" -ge 8 ] || sn_fail "the container's fragments were not reassembled"
[ "$(dp_stat "d['counters']['ipv4_reasm_ok'] + d['counters']['ipv6_reasm_ok']")" -ge 8 ] ||
	sn_fail "the peer's fragments were not reassembled"
face_check_clean
dp_env_down
face_check_gone "$CT"
echo ok
