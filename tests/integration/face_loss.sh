#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# The container face under loss (issue 9): with nftables dropping 1 % and
# then 5 % of the frames each way on the peer's veth, 64 MiB go each way
# between a program inside the container and the peer's kernel, intact
# (sha256): the outer connection recovers, the inner one never sees a loss:
# neither the datapath nor the container's kernel finds a segment of it lost
# (no SACK or duplicate-ACK recovery, no fast retransmission, nothing marked
# lost), and no receive ring drops what its window let in.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

dp_env_up
face_check_fenced
# the container's kernel SACKs and D-SACKs: the checks below read both
ip netns exec "$CT" sysctl -qw net.ipv4.tcp_sack=1 net.ipv4.tcp_dsack=1
tcp_peer_csum_off
tcp_files "$SN_TMP"
tcp_http "$PEER" 10.77.0.1 8000 "$SN_TMP"
tcp_sha_sink "$PEER" 10.77.0.1 7100
want=$(sha256sum <"$SN_TMP/f64m" | cut -d' ' -f1)

for pct in 1 5; do
	sn_log "$pct % loss each way"
	tcp_peer_loss "$pct"
	tcp_fetch "$CT" "http://10.77.0.1:8000/f64m" "$SN_TMP/f64m"
	t0=$(date +%s.%N)
	got=$(ip netns exec "$CT" timeout 120 python3 - "$SN_TMP/f64m" <<'PY'
import socket, sys
s = socket.create_connection(("10.77.0.1", 7100), timeout=60)
with open(sys.argv[1], "rb") as f:
    s.sendfile(f)
s.shutdown(socket.SHUT_WR)
print(s.recv(100).decode())
PY
) || sn_fail "upload at $pct % loss failed"
	[ "$got" = "$want" ] || sn_fail "upload at $pct % loss: the peer hashed $got, want $want"
	echo "upload of 64 MiB at $pct % loss intact in $(python3 -c "import time; print(f'{time.time() - $t0:.2f}')") s"
	echo "frames dropped by the peer (in, out): $(tcp_peer_loss_counts)"
done
tcp_peer_loss 0
dp_stats | grep -E "^  (retrans_segs|rtos|sack_recoveries):" | head -3
[ "$(dp_stat "d['tcp']['retrans_segs']")" -gt 0 ] || sn_fail "no retransmission: was there any loss?"
# Neither end of an inner connection may find a segment lost: no SACK or
# duplicate-ACK recovery, nothing RACK marks lost. A retransmission by timer
# alone (a tail loss probe, a timeout while a CPU is busy elsewhere) can be
# spurious, and is only counted, with the D-SACKs that say it was.
read -r rx dsack rec lost full < <(dp_stat "' '.join(str(d['face_tcp'][k]) for k in
	('retrans_segs', 'dsacks_rx', 'sack_recoveries', 'fast_recoveries', 'rack_lost', 'drop_rcv_full'))" |
	awk '{ print $1, $2, $3 + $4, $5, $6 }')
echo "inner, datapath: retransmitted $rx, reported duplicate $dsack; recoveries $rec, marked lost $lost, no room $full"
[ "$rec" -eq 0 ] && [ "$lost" -eq 0 ] ||
	sn_fail "the datapath found segments to the container lost: $rec recoveries, $lost marked lost"
[ "$full" -eq 0 ] || sn_fail "the datapath's inner receive rings dropped $full segments inside the window they offered"
read -r rx dsack rec fast < <(ip netns exec "$CT" nstat -asz TcpRetransSegs TcpExtTCPDSACKRecvSegs \
	TcpExtTCPSackRecovery TcpExtTCPRenoRecovery TcpExtTCPFastRetrans |
	awk '{ v[$1] = $2 } END { print v["TcpRetransSegs"] + 0, v["TcpExtTCPDSACKRecvSegs"] + 0,
		v["TcpExtTCPSackRecovery"] + v["TcpExtTCPRenoRecovery"], v["TcpExtTCPFastRetrans"] + 0 }')
echo "inner, container: retransmitted $rx, reported duplicate $dsack; recoveries $rec, fast retransmits $fast"
[ "$rec" -eq 0 ] && [ "$fast" -eq 0 ] ||
	sn_fail "the container found segments to the datapath lost: $rec recoveries, $fast fast retransmits"
face_check_clean
dp_env_down
echo ok
