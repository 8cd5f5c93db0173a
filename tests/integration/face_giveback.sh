#!/usr/bin/env bash
# Giving the container face back (issue 9): after the datapath stops
# (SIGTERM to netsetup run), and after its supervisor dies (SIGKILL: the
# container stays dark, fail closed, until `netsetup detach`), the
# container's netns is what it was before, byte for byte (`ip -j addr`,
# `ip -j route`), with no sn-* TUN, no nftables table and IPv6 enabled again
# on eth0, and the program inside reaches the peer through its own kernel
# again.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

tcp_files "$SN_TMP"
DP_NO_START=1 dp_env_up
tcp_http "$PEER" "::" 8000 "$SN_TMP"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"

kernel_reaches_peer() {
	ip netns exec "$CT" ping -c 1 -W 2 10.77.0.1 >/dev/null || sn_fail "ping through the kernel"
	sn_wait_for 10 ip netns exec "$CT" ping -6 -c 1 -W 1 fd77::1 || sn_fail "ping -6 through the kernel"
	tcp_fetch "$CT" "http://10.77.0.1:8000/f100k" "$SN_TMP/f100k"
	tcp_fetch "$CT" "http://[fd77::1]:8000/f100k" "$SN_TMP/f100k"
}

kernel_reaches_peer
for how in TERM KILL; do
	sn_log "attach, then SIG$how"
	dp_start
	face_check_fenced
	tcp_fetch "$CT" "http://10.77.0.1:8000/f100k" "$SN_TMP/f100k"
	if [ "$how" = TERM ]; then
		kill -TERM "$DP_NS_PID"
		wait "$DP_NS_PID"
		grep -q "addresses and routes given back" "$DP_LOG" || { cat "$DP_LOG"; sn_fail "no give-back after SIG$how"; }
	else
		kill -KILL "$DP_SUP_PID"
		wait "$DP_NS_PID"
		grep -q "stays dark" "$DP_LOG" || { cat "$DP_LOG"; sn_fail "run did not keep the container dark"; }
		ip netns exec "$CT" nft list tables | grep -q "^table netdev sandnet_" || sn_fail "the fence is gone"
		ip netns exec "$DPNS" "$NETSETUP" detach --netns "/run/netns/$CT" || sn_fail "detach after SIG$how"
	fi
	face_check_gone "$CT"
	ns_settle "$CT"		# the link-local address goes through DAD again, as it first did
	ns_snapshot "$CT" "$SN_TMP/after-$how"
	ns_same "$SN_TMP/before" "$SN_TMP/after-$how" "after SIG$how"
	kernel_reaches_peer
done
echo ok
