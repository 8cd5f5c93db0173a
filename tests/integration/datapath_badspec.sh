#!/usr/bin/env bash
# A bad --publish/--forward SPEC (or --busy-poll, --nice, --shards) is refused at start, before any
# configuration is read, with a message that names the SPEC and the reason.
. "$SANDNET_TESTS/lib/common.sh"
[ -x "$DATAPATH" ] || sn_skip "datapath not built"

expect_refused() {
	local want=$1; shift
	local out rc
	out=$("$DATAPATH" --fd 0 "$@" 2>&1 </dev/null); rc=$?
	echo "$* -> rc $rc: $out"
	[ "$rc" -eq 2 ] || sn_fail "$*: exit $rc, expected 2"
	echo "$out" | grep -qF -- "$want" || sn_fail "$*: message lacks '$want'"
}

expect_refused "1..65535" --publish udp:0=127.0.0.1:53
expect_refused "missing '=TARGET'" --publish udp:53
expect_refused "1..65535" --publish tcp:0=127.0.0.1:80
expect_refused "must be absolute" --publish udp:53=unix:relative/path
expect_refused "brackets" --publish udp:53=fd00::1:53
expect_refused "numeric address" --forward udp:127.0.0.1:8000=example.org:53
expect_refused "udp:1.2.3.4.5:53=127.0.0.1:53" --publish udp:1.2.3.4.5:53=127.0.0.1:53
expect_refused "busy-poll" --busy-poll 1001
expect_refused "busy-poll" --busy-poll fast
expect_refused "busy-poll" --busy-poll -1
expect_refused "--nice '20': not a number in 0..19" --nice 20
expect_refused "--nice '-5'" --nice -5
expect_refused "--nice 'low'" --nice low
expect_refused "--shards '0': not a number in 1..64, nor auto" --shards 0
expect_refused "--shards '65': not a number in 1..64, nor auto" --shards 65
expect_refused "--shards 'all': not a number in 1..64, nor auto" --shards all
expect_refused "exactly one of --fd N and --listen" --publish udp:53=127.0.0.1:53 --listen /tmp/x

# a publish address that is not the container's is refused once the
# configuration is known (needs netsetup)
if [ -x "$NETSETUP" ]; then
	. "$SANDNET_TESTS/integration/datapath_env.inc"
	sn_netns_add ct; sn_netns_add peer; sn_netns_add dp
	sn_veth_add ct eth0 peer veth0
	ip -n "$CT" addr add 10.77.0.2/24 dev eth0
	out=$(ip netns exec "$DPNS" timeout 20 "$NETSETUP" run --netns "/run/netns/$CT" -- \
		"$DATAPATH" --publish udp:10.99.0.1:53=127.0.0.1:53 2>&1); rc=$?
	echo "rc $rc: $out"
	[ "$rc" -ne 0 ] || sn_fail "netsetup run succeeded with a foreign publish address"
	echo "$out" | grep -q "not one of the container's" || sn_fail "reason missing"
	ip -n "$CT" -j addr show dev eth0 | grep -q '"local":"10.77.0.2"' ||
		sn_fail "the container's address was not given back"
fi
echo ok
