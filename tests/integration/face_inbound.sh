#!/usr/bin/env bash
# The container face, inbound (issue 9): a connection from the network to the
# container's address goes to the container's own sockets, from the client's
# own address and port, and the client gets what the container's kernel
# answers:
#  - HTTP from the peer to a server inside the container, 1 B and 64 MiB,
#    IPv4 and IPv6, the peer's address in the server's log;
#  - a closed port: the container kernel's RST (ECONNREFUSED at the peer);
#  - the container's firewall rejecting with an ICMP error: EHOSTUNREACH;
#  - a --publish rule with a TARGET keeps its port: the service in the
#    datapath's netns answers there, the container on every other port;
#  - ping from the peer, both families (answered by the datapath).
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

dp_env_up --publish tcp:8080=127.0.0.1:9090
face_check_fenced
tcp_peer_csum_off
tcp_files "$SN_TMP"
mkdir "$SN_TMP/pub"
echo "published service" >"$SN_TMP/pub/which"
echo "the container" >"$SN_TMP/which"
tcp_http "$CT" "::" 8081 "$SN_TMP"
tcp_http "$CT" "::" 8080 "$SN_TMP"	# shadowed by the --publish rule
tcp_http "$DPNS" 127.0.0.1 9090 "$SN_TMP/pub"

sn_log "HTTP from the peer to the container's own server"
for host in 10.77.0.2 "[fd77::2]"; do
	tcp_fetch "$PEER" "http://$host:8081/f1" "$SN_TMP/f1"
	tcp_fetch "$PEER" "http://$host:8081/f64m" "$SN_TMP/f64m"
done
grep -q '^::ffff:10.77.0.1 .*GET /f64m' "$SN_TMP/http-8081.log" ||
	{ cat "$SN_TMP/http-8081.log"; sn_fail "the server did not see the peer's IPv4 address"; }
grep -q '^fd77::1 .*GET /f64m' "$SN_TMP/http-8081.log" ||
	{ cat "$SN_TMP/http-8081.log"; sn_fail "the server did not see the peer's IPv6 address"; }

sn_log "--publish keeps its port, the container has the others"
got=$(ip netns exec "$PEER" curl -sS --max-time 10 http://10.77.0.2:8080/which) || sn_fail "curl :8080"
[ "$got" = "published service" ] || sn_fail ":8080 answered by '$got', want the --publish target"
got=$(ip netns exec "$PEER" curl -sS --max-time 10 http://10.77.0.2:8081/which) || sn_fail "curl :8081"
[ "$got" = "the container" ] || sn_fail ":8081 answered by '$got', want the container"

sn_log "what the container's kernel answers, the client gets"
check_errno() {
	local want=$1 got; shift
	got=$(face_errno "$PEER" "$@")
	echo "connect $*: $got"
	[ "$got" = "$want" ] || sn_fail "connect $*: got $got, want $want"
}
check_errno ECONNREFUSED 4 10.77.0.2 9
check_errno ECONNREFUSED 6 fd77::2 9
ip netns exec "$CT" nft -f - <<'NFT' || sn_fail "container firewall"
table inet ctfw {
	chain in {
		type filter hook input priority 0;
		tcp dport 8443 meta nfproto ipv4 reject with icmp type host-prohibited
		tcp dport 8443 meta nfproto ipv6 reject with icmpv6 type admin-prohibited
	}
}
NFT
check_errno EHOSTUNREACH 4 10.77.0.2 8443
check_errno EACCES 6 fd77::2 8443
ip netns exec "$CT" nft delete table inet ctfw

sn_log "ping from the peer"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 >/dev/null || sn_fail "ping 10.77.0.2"
ip netns exec "$PEER" ping -6 -c 2 -i 0.2 -W 2 fd77::2 >/dev/null || sn_fail "ping -6 fd77::2"

dp_stats | sed -n '/^face:/,/^  drops/p' | grep -E "tcp_inbound|tcp_refused|tcp_unreachable|icmp_to_outer"
[ "$(dp_stat "d['face']['counters']['tcp_inbound']")" -ge 6 ] || sn_fail "inbound pairs not counted"
[ "$(dp_stat "d['face']['counters']['tcp_unreachable']")" -ge 2 ] || sn_fail "the container's ICMP errors not passed on"
face_check_clean
dp_env_down
echo ok
