#!/usr/bin/env bash
# UDP through the stack, both services, contents compared:
#  --publish udp:5000=127.0.0.1:6000  (peer -> container:5000 -> echo backend)
#  --publish udp:5001=unix:PATH       (same, unix datagram backend)
#  --forward udp:127.0.0.1:8000=10.77.0.1:7000 (local client -> kernel server
#                                                in the peer netns)
# Payloads 1..1472 bytes fit one frame; 1473..65507 are fragmented by the
# sender and reassembled by the receiver, in both directions (IPv6 too).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"

BACKEND_SOCK=$SN_TMP/backend.sock

# dp_env_up creates the namespaces; start the inet backends right after it,
# before traffic flows (flows are created on the first datagram).
dp_env_up --publish udp:5000=127.0.0.1:6000 --publish "udp:5001=unix:$BACKEND_SOCK" \
	--forward udp:127.0.0.1:8000=10.77.0.1:7000 --publish "udp:[fd77::2]:5002=127.0.0.1:6000"

# The unix backend answers to the flow's autobound abstract address, which
# exists only in the datapath's netns: it runs there, like the others.
ip netns exec "$DPNS" python3 - "$BACKEND_SOCK" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666)
while True:
    d, a = s.recvfrom(70000)
    s.sendto(d, a)
PY
sn_on_exit "kill $!"
sn_udp_echo "$DPNS" 127.0.0.1 6000
sn_udp_echo "$PEER" 10.77.0.1 7000
sleep 0.3

cat >"$SN_TMP/client.py" <<'PY'
import os, socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
dst = (sys.argv[1], int(sys.argv[2]))
sizes = [int(x) for x in sys.argv[3].split(",")]
s = socket.socket(fam, socket.SOCK_DGRAM)
s.settimeout(3)
for n in sizes:
    data = os.urandom(n)
    for attempt in range(3):
        s.sendto(data, dst)
        try:
            r, a = s.recvfrom(70000)
            break
        except socket.timeout:
            continue
    else:
        sys.exit(f"{dst} size {n}: no answer")
    if r != data:
        sys.exit(f"{dst} size {n}: answer differs ({len(r)} bytes)")
print(f"{dst}: {len(sizes)} sizes echoed intact")
PY
SMALL=1,2,3,7,8,9,64,100,511,512,513,1000,1400,1471,1472
BIG=1473,1480,1481,2000,2952,2953,4000,8000,16000,30000,50000,65000,65507

sn_log "publish, peer -> container:5000 -> 127.0.0.1:6000"
ip netns exec "$PEER" python3 "$SN_TMP/client.py" 10.77.0.2 5000 "$SMALL,$BIG" || sn_fail "publish inet"
sn_log "publish, peer -> container:5001 -> unix socket"
ip netns exec "$PEER" python3 "$SN_TMP/client.py" 10.77.0.2 5001 "$SMALL,$BIG" || sn_fail "publish unix"
sn_log "publish over IPv6, fragmented above 1452 bytes both ways"
ip netns exec "$PEER" python3 "$SN_TMP/client.py" fd77::2 5002 "1,100,1000,1452,1453,3000,65507" || sn_fail "publish v6"
sn_log "forward, 127.0.0.1:8000 -> 10.77.0.1:7000 through the stack"
ip netns exec "$DPNS" python3 "$SN_TMP/client.py" 127.0.0.1 8000 "$SMALL,$BIG" || sn_fail "forward"
# bursts: the replies of one turn reach the client together (svc_udp_flush(),
# UDP_SEGMENT through the listening socket), intact and in order
ip netns exec "$DPNS" python3 - <<'PY' || sn_fail "forward: bursts"
import os, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
for _ in range(5):
    data = [os.urandom(900) for _ in range(40)] + [b"x" * 300]
    for d in data:
        s.sendto(d, ("127.0.0.1", 8000))
    got = [s.recvfrom(2000)[0] for _ in data]
    assert got == data, "replies differ or are out of order"
print("5 bursts of 41 echoed in order")
PY
echo "forward replies by UDP GSO: $(dp_stat "[x for x in d['services'] if x['kind'] == 'forward'][0]['host_gso_datagrams']")"

# udp_gso_check MODE: the peer sends 5 datagrams of 1000 bytes in one
# UDP_SEGMENT call, which crosses the veth as one GSO frame; all five come
# back from the echo backend, and the link cut exactly five pieces out of it
# (rx_gso_segments): the channel's vnet header says where they end, in every
# GSO mode (without it the container got one datagram of 5000 bytes). The
# publish service hands the five to its backend in one UDP_SEGMENT send
# (host_gso_datagrams).
udp_gso_check() {
	local mode=$1 before after hg0 hg1
	before=$(dp_stat "list(d['links'].values())[0]['rx_gso_segments']")
	hg0=$(dp_stat "d['services'][0]['host_gso_datagrams']")
	ip netns exec "$PEER" python3 - <<'PY' || sn_fail "--gso $mode: UDP GSO from the peer"
import os, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.setsockopt(socket.SOL_UDP, 103, 1000)          # UDP_SEGMENT
data = os.urandom(5000)
s.sendto(data, ("10.77.0.2", 5000))
got = sorted(s.recvfrom(6000)[0] for _ in range(5))
assert got == sorted(data[i:i + 1000] for i in range(0, 5000, 1000)), "datagrams differ"
print("5 segments echoed")
PY
	after=$(dp_stat "list(d['links'].values())[0]['rx_gso_segments']")
	echo "--gso $mode: rx_gso_segments $before -> $after"
	[ $((after - before)) -eq 5 ] ||
		sn_fail "--gso $mode: the link cut $((after - before)) datagrams from the peer's GSO frame, not 5"
	# and the five went on to the inet backend in one UDP_SEGMENT send
	hg1=$(dp_stat "d['services'][0]['host_gso_datagrams']")
	[ $((hg1 - hg0)) -eq 5 ] || sn_fail "--gso $mode: $((hg1 - hg0)) datagrams reached the backend by UDP GSO, not 5"
}

sn_log "UDP GSO from the kernel peer (UDP_SEGMENT 1000 x 5): five datagrams echoed"
udp_gso_check "$DP_GSO"

reasm=$(dp_stat "d['counters']['ipv4_reasm_ok']")
frag_out=$(dp_stat "d['counters']['ipv4_frag_out']")
echo "reassembled $reasm datagrams, sent $frag_out fragments"
[ "$reasm" -ge 39 ] || sn_fail "ipv4_reasm_ok $reasm < 39"
[ "$frag_out" -ge 39 ] || sn_fail "ipv4_frag_out $frag_out"
reasm6=$(dp_stat "d['counters']['ipv6_reasm_ok']")
[ "$reasm6" -ge 3 ] || sn_fail "ipv6_reasm_ok $reasm6 < 3"
dp_stats | sed -n '/udp_sockets/,$p'
errors=$(dp_stat "sum(s['errors'] for s in d['services'])")
[ "$errors" -eq 0 ] || sn_fail "services counted $errors errors"
dp_env_down

# sw and off mode send no GSO frames, but receive the peer's whole
for mode in sw off; do
	dp_env_reset
	DP_GSO=$mode
	dp_env_up --publish udp:5000=127.0.0.1:6000
	sn_udp_echo "$DPNS" 127.0.0.1 6000
	udp_gso_check "$mode"
	dp_env_down
done
echo ok
