#!/usr/bin/env bash
# The --listen path: a datapath started on its own waits on a socket;
# `netsetup attach` connects to it and hands the container's link over;
# ping is answered; `netsetup detach` gives the addresses back.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
[ -x "$NETSETUP" ] || sn_skip "netsetup not built"

sn_netns_add ct; sn_netns_add peer; sn_netns_add dp
sn_veth_add ct eth0 peer veth0
ip -n "$CT" addr add 10.77.0.2/24 dev eth0
ip -n "$PEER" addr add 10.77.0.1/24 dev veth0
chmod 755 "$SN_TMP"
sock=$SN_TMP/listen.sock

ip netns exec "$DPNS" "$DATAPATH" --listen "$sock" --control "$DP_CTL" >"$DP_LOG" 2>&1 &
dp=$!
sn_on_exit "kill $dp"
sn_wait_for 5 test -S "$sock" || sn_fail "no listening socket at $sock"
ip netns exec "$DPNS" "$NETSETUP" attach --netns "/run/netns/$CT" --datapath "$sock" ||
	{ cat "$DP_LOG"; sn_fail "netsetup attach"; }
sn_wait_for 5 dp_stats || sn_fail "no control socket"
[ ! -e "$sock" ] || sn_fail "the listening socket was not removed after the connection"
ip -n "$CT" -j addr show dev eth0 | grep -q '"local":"10.77.0.2"' && sn_fail "kernel still holds the address"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 || sn_fail "ping through an attached datapath"
[ "$(dp_stat "d['uid']")" = "$(id -u nobody)" ] || sn_fail "not running as nobody"
kill -0 "$dp" || sn_fail "datapath exited after netsetup left"

ip netns exec "$DPNS" "$NETSETUP" detach --netns "/run/netns/$CT" || sn_fail "netsetup detach"
ip -n "$CT" -j addr show dev eth0 | grep -q '"local":"10.77.0.2"' || sn_fail "address not given back"
kill "$dp"; wait "$dp"; rc=$?
[ "$rc" -eq 0 ] || { cat "$DP_LOG"; sn_fail "datapath exit status $rc after SIGTERM"; }
grep -q "^datapath: stopped" "$DP_LOG" || sn_fail "no clean stop"
! grep -qE "Sanitizer|runtime error" "$DP_LOG" || { cat "$DP_LOG"; sn_fail "sanitizer report"; }
cat "$DP_LOG"
echo ok
