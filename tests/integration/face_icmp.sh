#!/usr/bin/env bash
# The container face, ICMP (issue 9): ping and ping -6 from inside the
# container reach the peer (the echo is proxied: a new request from the
# container's address, the reply built anew), 4000-byte pings too; ICMP errors
# the network sends about the container's packets reach it (ping to an
# unreachable host, a UDP datagram to an unreachable network); an unknown
# protocol from inside is answered with protocol unreachable.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

dp_env_up
face_check_fenced

sn_log "ping and ping -6 from inside"
ip netns exec "$CT" ping -c 3 -i 0.2 -W 2 10.77.0.1 || sn_fail "ping 10.77.0.1"
ip netns exec "$CT" ping -6 -c 3 -i 0.2 -W 2 fd77::1 || sn_fail "ping -6 fd77::1"
ip netns exec "$CT" ping -c 2 -i 0.2 -W 2 -s 4000 10.77.0.1 || sn_fail "ping -s 4000"
ip netns exec "$CT" ping -6 -c 2 -i 0.2 -W 2 -s 4000 fd77::1 || sn_fail "ping -6 -s 4000"
[ "$(dp_stat "d['face']['counters']['echo_to_outer']")" -ge 10 ] || sn_fail "echo requests not counted"
[ "$(dp_stat "d['face']['counters']['echo_to_inner']")" -ge 10 ] || sn_fail "echo replies not counted"

sn_log "ICMP errors from the network reach the container"
face_peer_router
out=$(ip netns exec "$CT" ping -c 1 -W 2 10.98.0.1 2>&1)
echo "$out"
echo "$out" | grep -q "Destination Host Unreachable" || sn_fail "ping 10.98.0.1: no host unreachable"
out=$(ip netns exec "$CT" ping -6 -c 1 -W 2 fd98::1 2>&1)
echo "$out"
echo "$out" | grep -qi "unreachable" || sn_fail "ping -6 fd98::1: no unreachable"
ip netns exec "$CT" python3 - <<'PY' || sn_fail "UDP to an unreachable host"
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_IP, 11, 1)	# IP_RECVERR: the error as the kernel reports it
s.settimeout(3)
s.connect(("10.98.0.1", 53))
s.send(b"q")
try:
    s.recv(10)
    raise SystemExit("an answer from nowhere")
except OSError as e:
    assert e.errno == 113, e	# EHOSTUNREACH
    print("UDP: EHOSTUNREACH")
PY
[ "$(dp_stat "d['face']['counters']['icmp_to_inner']")" -ge 3 ] || sn_fail "errors to the container not counted"

sn_log "an unknown protocol from inside: protocol unreachable"
ip netns exec "$CT" python3 - <<'PY' || sn_fail "protocol unreachable"
import socket, struct
ic = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
ic.settimeout(3)
r = socket.socket(socket.AF_INET, socket.SOCK_RAW, 253)	# RFC 3692 experimental protocol
r.sendto(b"experiment", ("10.77.0.1", 0))
while True:
    d, a = ic.recvfrom(2000)
    ihl = (d[0] & 15) * 4
    t, c = d[ihl], d[ihl + 1]
    if t == 3 and c == 2 and d[ihl + 8 + 9] == 253:
        print("protocol unreachable from", a[0]); break
PY
[ "$(dp_stat "d['face']['counters']['proto_unreach_sent']")" -ge 1 ] || sn_fail "proto_unreach_sent"
face_check_clean unknown_protocol
dp_env_down
echo ok
