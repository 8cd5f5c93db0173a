#!/usr/bin/env bash
# ping, ping -6 and arping from a kernel peer are answered by the datapath;
# the peer's neighbour table holds the container's MAC; a UDP datagram to a
# closed port comes back as ICMP/ICMPv6 port unreachable (ECONNREFUSED),
# from the container's kernel through the face, and from the stack without it.
# With --icmp-ratelimit 10, a burst of 200 datagrams to a closed port gets
# no more errors than the rate allows over the time it took (every shard's
# share together), and the rest are counted as held back.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"

scenario() {
dp_env_up

sn_log "ping 10.77.0.2"
ip netns exec "$PEER" ping -c 3 -i 0.2 -W 2 10.77.0.2 || sn_fail "ping 10.77.0.2"
sn_log "ping -6 fd77::2"
sn_wait_for 5 ip netns exec "$PEER" ping -6 -c 1 -W 1 fd77::2 || sn_fail "ping -6 fd77::2 (first)"
ip netns exec "$PEER" ping -6 -c 3 -i 0.2 -W 2 fd77::2 || sn_fail "ping -6 fd77::2"
sn_log "large ping (fragmented both ways)"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 -s 4000 10.77.0.2 || sn_fail "ping -s 4000"
ip netns exec "$PEER" ping -6 -c 2 -i 0.2 -W 2 -s 4000 fd77::2 || sn_fail "ping -6 -s 4000"

sn_log "arping"
out=$(ip netns exec "$PEER" arping -c 2 -w 3 -I veth0 10.77.0.2 2>&1) || { echo "$out"; sn_fail "arping"; }
echo "$out"
echo "$out" | grep -qi "$CT_MAC" || sn_fail "arping replies do not come from $CT_MAC"

sn_log "the peer's neighbour table"
ip -n "$PEER" neigh show dev veth0
ip -n "$PEER" -j neigh show dev veth0 | python3 -c "
import json, sys
n = {e['dst']: e.get('lladdr') for e in json.load(sys.stdin)}
for a in ('10.77.0.2', 'fd77::2'):
    assert n.get(a) == '$CT_MAC', (a, n)
" || sn_fail "peer neighbours do not map the container's addresses to $CT_MAC"

sn_log "ICMP port unreachable, both families"
ip netns exec "$PEER" python3 - <<'PY' || sn_fail "no port unreachable"
import socket
for fam, addr in ((socket.AF_INET, "10.77.0.2"), (socket.AF_INET6, "fd77::2")):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.connect((addr, 9))
    s.send(b"anyone?")
    try:
        s.recv(100)
        raise SystemExit(f"{addr}: got an answer")
    except ConnectionRefusedError:
        print(f"{addr}: connection refused (ICMP port unreachable)")
PY

echo_in=$(dp_stat "d['counters']['icmp_echo_in']")
echo6_in=$(dp_stat "d['counters']['icmpv6_echo_in']")
[ "$echo_in" -ge 5 ] || sn_fail "icmp_echo_in $echo_in < 5"
[ "$echo6_in" -ge 3 ] || sn_fail "icmpv6_echo_in $echo6_in < 3"
if [ "$DP_FACE" = on ]; then
	# the container's own kernel answered, through the face, once per family
	[ "$(dp_stat "d['face']['counters']['icmp_to_outer']")" -ge 2 ] || sn_fail "face icmp_to_outer"
	[ "$(dp_stat "d['counters']['icmp_unreach_out']")" -eq 0 ] || sn_fail "the stack answered, not the container"
else
	[ "$(dp_stat "d['counters']['icmp_unreach_out']")" -ge 1 ] || sn_fail "icmp_unreach_out"
	[ "$(dp_stat "d['counters']['icmpv6_unreach_out']")" -ge 1 ] || sn_fail "icmpv6_unreach_out"
fi
dp_stats | sed -n '1,40p'
dp_env_down
}

# With the container face (the default) the container's kernel answers the
# closed port; without it the stack does. Both are what a sender expects.
scenario
sn_log "again with --face off"
dp_env_reset
DP_FACE=off
scenario

sn_log "--icmp-ratelimit 10: a burst of datagrams to a closed port"
dp_env_reset
DP_FACE=off
dp_env_up --icmp-ratelimit 10
before_out=$(dp_stat "d['counters']['icmp_unreach_out']")
before_held=$(dp_stat "d['counters']['icmp_rate_limited']")
t0=$(date +%s.%N)
ip netns exec "$PEER" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(200):
    s.sendto(b"x", ("10.77.0.2", 9))
' || sn_fail "the burst"
sleep 0.5
out=$(( $(dp_stat "d['counters']['icmp_unreach_out']") - before_out ))
held=$(( $(dp_stat "d['counters']['icmp_rate_limited']") - before_held ))
# every error counted was sent between t0 and now
elapsed=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.3f}')")
shards=$(dp_stat "raw['n_shards']")
echo "burst of 200, counted ${elapsed}s later, on $shards shard(s): $out ICMP errors sent, $held held back"
# each shard's bucket holds one (a tenth of a second of its share), and refills at
# its share; a datagram or two may be lost before the stack on a busy machine
python3 -c "import sys; sys.exit(not (190 <= $out + $held <= 200 and $held > 0 and 1 <= $out <= $shards + 10 * $elapsed))" ||
	sn_fail "--icmp-ratelimit 10: $out sent and $held held of 200 within ${elapsed}s"
dp_env_down
echo ok
