#!/usr/bin/env bash
# attach then detach leaves `ip -j addr` and `ip -j route` exactly as they
# were (a route's initcwnd too: the state file keeps it); while attached the
# kernel holds no address and IPv6 autoconf is off; a second attach is
# refused; a datapath that answers ERROR (to DONE, or to the first LINK)
# leaves everything as it was, with no state file behind.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

sn_netns_add ct
sn_netns_add peer
sn_veth_add ct eth0 peer veth0
CT=$(sn_ns ct)
NSP=$(ns_path ct)
ip -n "$CT" addr add 10.211.0.2/24 dev eth0
ip -n "$CT" addr add 10.211.0.3/24 dev eth0
ip -n "$CT" addr add fd21:1::2/64 dev eth0
ip -n "$CT" route add default via 10.211.0.1
ip -n "$CT" route add 10.212.0.0/16 via 10.211.0.254 metric 7 initcwnd 20
ip -n "$CT" -6 route add default via fd21:1::1
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"

sn_log "attach, check the kernel let go, detach"
ns_sink_start s1
"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/s1.sock" || sn_fail "attach failed"
[ -z "$(ip -n "$CT" addr show dev eth0 | grep inet)" ] ||
	sn_fail "addresses still on eth0 after attach: $(ip -n "$CT" addr show dev eth0)"
[ "$(ip netns exec "$CT" cat /proc/sys/net/ipv6/conf/eth0/accept_ra)" = 0 ] || sn_fail "accept_ra not 0"
[ "$(ip netns exec "$CT" cat /proc/sys/net/ipv6/conf/eth0/addr_gen_mode)" = 1 ] || sn_fail "addr_gen_mode not none"
ls "$SANDNET_STATE_DIR"/netns-*.state >/dev/null || sn_fail "no state file"

ns_sink_start s2
ns_expect_fail "second attach" "already attached" -- \
	"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/s2.sock"

"$NETSETUP" detach --netns "$NSP" || sn_fail "detach failed"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after"
ns_same "$SN_TMP/before" "$SN_TMP/after" "attach + detach"
[ "$(ip netns exec "$CT" cat /proc/sys/net/ipv6/conf/eth0/accept_ra)" = 1 ] || sn_fail "accept_ra not restored"
[ "$(ip netns exec "$CT" cat /proc/sys/net/ipv6/conf/eth0/addr_gen_mode)" = 0 ] || sn_fail "addr_gen_mode not restored"
! ls "$SANDNET_STATE_DIR"/netns-*.state 2>/dev/null || sn_fail "state file left after detach"
ns_expect_fail "detach of a detached netns" "not attached" -- "$NETSETUP" detach --netns "$NSP"

for answer in error error-link; do
	sn_log "datapath answering $answer"
	ns_sink_start "e-$answer" --answer "$answer"
	ns_expect_fail "datapath answers $answer" "proto_sink refuses" -- \
		"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/e-$answer.sock"
	ns_settle "$CT"
	ns_snapshot "$CT" "$SN_TMP/after-$answer"
	ns_same "$SN_TMP/before" "$SN_TMP/after-$answer" "attach to a datapath answering $answer"
	! ls "$SANDNET_STATE_DIR"/netns-*.state 2>/dev/null || sn_fail "state file left after $answer"
done

sn_log "attach again works after all that, then detach"
ns_sink_start s3
"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/s3.sock" || sn_fail "attach after errors failed"
"$NETSETUP" detach --netns "$NSP" || sn_fail "detach failed"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after2"
ns_same "$SN_TMP/before" "$SN_TMP/after2" "second attach + detach"
echo "attach/detach leave the namespace as it was"
