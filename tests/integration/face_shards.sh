#!/usr/bin/env bash
# Shards, the steering half (issue 20): `netsetup run --shards 2` makes the
# container's TUN multi-queue with two queues and gives eth0 two channels in
# a PACKET_FANOUT_EBPF group, both steered by the program of
# common/flowhash.c (test_netsetup_steer checks, flow by flow, that both
# halves of a conversation land on one shard; this checks the whole):
#  - netsetup says so; the TUN has two queues; the kernel holds two packet
#    sockets on eth0;
#  - TCP (IPv4, IPv6) and UDP from the container, ICMP echo both families,
#    and a connection into the container all work;
#  - both channels of eth0 and both queues of the TUN carried frames;
#  - SANDNET_NO_STEERING=1 (what a kernel that refuses the program gets):
#    one line says so, one channel and one queue, and the container is
#    served all the same.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

# per_channel LINK: the rx_frames of each of LINK's channels, space separated
per_channel() {
	dp_stat "' '.join(str(c['rx_frames']) for c in (d['links'].get('$1') or d['inner_links']['$1'])['per_channel'])"
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
[ "$(dp_stat "d['links']['eth0']['channels']")" = 2 ] || sn_fail "eth0 has not two channels"
traffic
read -r c0 c1 <<<"$(per_channel eth0)"
read -r q0 q1 <<<"$(per_channel sn-eth0)"
sn_log "eth0's channels read $c0 and $c1 frames, the TUN's queues $q0 and $q1"
[ "$c0" -gt 0 ] && [ "$c1" -gt 0 ] || sn_fail "one of eth0's channels got nothing: $c0 $c1"
[ "$q0" -gt 0 ] && [ "$q1" -gt 0 ] || sn_fail "one of the TUN's queues got nothing: $q0 $q1"
face_check_clean
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
traffic
face_check_clean
dp_env_down
face_check_gone "$CT"
