#!/usr/bin/env bash
# netsetup's side of the container face (issue 9), and its bad inputs:
#  - the TUN gets the link's MTU, addresses and main-table routes, the same
#    set (a CNI ptp-style prefix route via the gateway, a /32 on-link route,
#    default routes of both families), each with initcwnd 128 (the
#    container's first flight to the datapath), and eth0 is fenced;
#  - without /dev/net/tun, or with the TUN's name taken, attach fails with a
#    message that says so and what to do, and the netns is left as it was;
#  - a netns with only IPv6, or only IPv4, gets a face for what it has;
#  - a link without a default route: the container reaches its on-link peer,
#    and its own kernel says ENETUNREACH for the rest;
#  - --face off keeps the container dark, as before;
#  - a datapath of protocol 1.1 (no FACE) is refused before any change, and
#    served with --face off.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

# routes of the kind a CNI ptp plugin makes, replacing the kernel's prefix route
DP_NO_START=1 dp_env_up
ip -n "$CT" link set eth0 mtu 1400
ip -n "$PEER" link set veth0 mtu 1400
ip -n "$CT" route del 10.77.0.0/24 dev eth0
ip -n "$CT" route add 10.77.0.1/32 dev eth0 scope link src 10.77.0.2
ip -n "$CT" route add 10.77.0.0/24 via 10.77.0.1 dev eth0 src 10.77.0.2
ip -n "$CT" route add 10.78.0.0/16 via 10.77.0.1 dev eth0 metric 50
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"
routes() {	# the main-table routes of $1, with the device name left out
	{ ip -n "$CT" -4 route show dev "$1"; ip -n "$CT" -6 route show dev "$1"; } | sed 's/ dev [^ ]*//' | sort
}
routes eth0 >"$SN_TMP/routes.eth0"

sn_log "the TUN gets the link's MTU, addresses and routes"
dp_start
face_check_fenced
routes sn-eth0 >"$SN_TMP/routes.tun"
cat "$SN_TMP/routes.tun"
[ -s "$SN_TMP/routes.tun" ] || sn_fail "the TUN has no routes"
grep -v " initcwnd 128\( \|$\)" "$SN_TMP/routes.tun" && sn_fail "TUN routes without initcwnd 128 (above)"
sed 's/ initcwnd 128//' "$SN_TMP/routes.tun" | sort >"$SN_TMP/routes.tun-bare"
diff -u "$SN_TMP/routes.eth0" "$SN_TMP/routes.tun-bare" || sn_fail "the TUN's routes differ from eth0's (diff above)"
[ "$(ip -n "$CT" -j link show sn-eth0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["mtu"])')" = 1400 ] ||
	sn_fail "the TUN does not have eth0's MTU"
ip -n "$CT" -j -d link show sn-eth0 | grep -q '"vnet_hdr":true' || sn_fail "the TUN has no vnet header"
ip netns exec "$CT" ethtool -k sn-eth0 | grep -q "^tcp-segmentation-offload: on" || sn_fail "the TUN has no TSO"
ip netns exec "$CT" ping -c 1 -W 2 10.77.0.1 >/dev/null || sn_fail "ping through the face"
# the container's kernel starts a connection through the face with the route's window
ip netns exec "$PEER" python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.77.0.1", 9050)); s.listen(1); s.settimeout(20)
c, _ = s.accept(); time.sleep(3)' &
srv=$!
sn_on_exit "kill $srv 2>/dev/null"
sn_wait_for 10 sh -c "ip netns exec '$PEER' ss -Hltn 'sport = :9050' | grep -q ." || sn_fail "no listener at the peer"
cwnd=$(ip netns exec "$CT" python3 -c '
import re, socket, subprocess
c = socket.create_connection(("10.77.0.1", 9050), timeout=10)
out = subprocess.run(["ss", "-Htin", "dst", "10.77.0.1:9050"], capture_output=True, text=True).stdout
m = re.search(r"cwnd:(\d+)", out)
print(m.group(1) if m else "none: " + out)')
echo "a fresh connection through the face starts with cwnd $cwnd"
[ "$cwnd" = 128 ] || sn_fail "a fresh connection through the face: cwnd $cwnd, want the route's 128"
wait "$srv"
kill "$DP_NS_PID"; wait "$DP_NS_PID"
face_check_gone "$CT"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after"
ns_same "$SN_TMP/before" "$SN_TMP/after" "after the face"

sn_log "a TUN name already taken"
ip -n "$CT" link add sn-eth0 type veth peer name sn-taken || sn_fail "a device named sn-eth0"
out=$(ip netns exec "$DPNS" timeout 20 "$NETSETUP" run --netns "/run/netns/$CT" -- "$DATAPATH" 2>&1) &&
	sn_fail "attach with the TUN's name taken succeeded"
echo "$out"
echo "$out" | grep -q "TUN name sn-eth0 is already taken.*--face off" || sn_fail "unclear message: $out"
ip -n "$CT" link del sn-eth0
ns_snapshot "$CT" "$SN_TMP/after-taken"
ns_same "$SN_TMP/before" "$SN_TMP/after-taken" "after a refused attach (name taken)"

sn_log "no /dev/net/tun"
out=$(ip netns exec "$DPNS" unshare -m sh -c "mount -t tmpfs none /dev/net && exec timeout 20 '$NETSETUP' run --netns /run/netns/$CT -- '$DATAPATH'" 2>&1) &&
	sn_fail "attach without /dev/net/tun succeeded"
echo "$out"
echo "$out" | grep -q "/dev/net/tun: No such file or directory (load the tun module, or --face off)" ||
	sn_fail "unclear message: $out"
ns_snapshot "$CT" "$SN_TMP/after-notun"
ns_same "$SN_TMP/before" "$SN_TMP/after-notun" "after a refused attach (no /dev/net/tun)"

sn_log "--face off: the container stays dark"
DP_FACE=off dp_start
ip -n "$CT" -o link show | grep -q ": sn-" && sn_fail "--face off made a TUN"
ip netns exec "$CT" ping -c 1 -W 1 10.77.0.1 >/dev/null 2>&1 && sn_fail "the container has a network with --face off"
kill "$DP_NS_PID"; wait "$DP_NS_PID"

sn_log "a datapath of protocol 1.1, which knows no FACE"
ns_sink_start old --answer minor1
ns_expect_fail "attach to a 1.1 datapath" "speaks protocol 1\.1, the container face needs 1\.2.*--face off" -- \
	ip netns exec "$DPNS" "$NETSETUP" attach --netns "/run/netns/$CT" --datapath "$SN_TMP/old.sock"
ip -n "$CT" -o link show | grep -q ": sn-" && sn_fail "a refused attach left a TUN behind"
ns_settle "$CT"	# the give-back of the --face off run above restarted DAD
ns_snapshot "$CT" "$SN_TMP/after-old"
ns_same "$SN_TMP/before" "$SN_TMP/after-old" "after a refused attach (a 1.1 datapath)"
ns_sink_start old2 --answer minor1
ip netns exec "$DPNS" "$NETSETUP" attach --face off --netns "/run/netns/$CT" --datapath "$SN_TMP/old2.sock" ||
	sn_fail "attach --face off to a 1.1 datapath failed"
grep -q '"done":1' "$SN_TMP/old2.out" || sn_fail "the 1.1 datapath did not get its link: $(cat "$SN_TMP/old2.out")"
"$NETSETUP" detach --netns "/run/netns/$CT" || sn_fail "detach after --face off"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-old2"
ns_same "$SN_TMP/before" "$SN_TMP/after-old2" "after detach (a 1.1 datapath, --face off)"
echo "a 1.1 datapath: refused with the face before any change, served with --face off"

sn_log "only IPv6, no default route"
ip -n "$CT" addr flush dev eth0 scope global
ip -n "$CT" -4 route flush dev eth0
ip -n "$CT" -6 route del default 2>/dev/null
ip -n "$CT" addr add fd77::2/64 dev eth0 nodad
dp_start
ip -n "$CT" -j addr show dev sn-eth0 | grep -q '"family":"inet"' && sn_fail "an IPv4 address appeared on the TUN"
ip -n "$CT" -6 route show default | grep -q . && sn_fail "a default route appeared"
sn_wait_for 5 ip netns exec "$CT" ping -6 -c 1 -W 1 fd77::1 || sn_fail "on-link IPv6 peer through the face"
got=$(face_errno "$CT" 6 fd99::1 80)
[ "$got" = ENETUNREACH ] || sn_fail "off-link without a default route: $got, want ENETUNREACH"
echo "only IPv6, no default route: on-link works, off-link is ENETUNREACH"
kill "$DP_NS_PID"; wait "$DP_NS_PID"
face_check_gone "$CT"

sn_log "only IPv4"
ip -n "$CT" addr flush dev eth0 scope global
ip -n "$CT" addr add 10.77.0.2/24 dev eth0
ip netns exec "$CT" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
dp_start
ip -n "$CT" -j addr show dev sn-eth0 | grep -q '"family":"inet6"' && sn_fail "an IPv6 address appeared on the TUN"
ip netns exec "$CT" ping -c 1 -W 2 10.77.0.1 >/dev/null || sn_fail "IPv4 through the face"
kill "$DP_NS_PID"; wait "$DP_NS_PID"
[ "$(ip netns exec "$CT" sysctl -n net.ipv6.conf.eth0.disable_ipv6)" = 1 ] ||
	sn_fail "disable_ipv6 was 1 before the face and is not after"
echo ok

sn_log "two links, two faces: each TUN has its own routes, fe80::/64 too, each with initcwnd 128"
# The kernel takes "the same destination and metric" across links: an
# exclusive add of sn-eth1's fe80::/64 fails on sn-eth0's, and a replace of
# one takes the other's. Neither may happen.
ip netns exec "$CT" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=0
ip -n "$CT" addr add fd77::2/64 dev eth0 nodad
sn_veth_add ct eth1 peer veth2
ip -n "$CT" addr add 10.79.0.2/24 dev eth1
ip -n "$CT" addr add fd79::2/64 dev eth1 nodad
ip -n "$PEER" addr add 10.79.0.1/24 dev veth2
ip -n "$PEER" addr add fd79::1/64 dev veth2 nodad
ns_settle "$CT"
routes eth0 >"$SN_TMP/routes2.eth0"
routes eth1 >"$SN_TMP/routes2.eth1"
grep -q "^fe80::/64" "$SN_TMP/routes2.eth1" || sn_fail "eth1 has no fe80::/64 to begin with"
dp_start
for l in eth0 eth1; do
	routes "sn-$l" >"$SN_TMP/routes2.sn-$l"
	cat "$SN_TMP/routes2.sn-$l"
	grep -v " initcwnd 128\( \|$\)" "$SN_TMP/routes2.sn-$l" && sn_fail "sn-$l: routes without initcwnd 128 (above)"
	sed 's/ initcwnd 128//' "$SN_TMP/routes2.sn-$l" | sort >"$SN_TMP/routes2.sn-$l-bare"
	diff -u "$SN_TMP/routes2.$l" "$SN_TMP/routes2.sn-$l-bare" || sn_fail "sn-$l's routes differ from $l's (diff above)"
done
ip netns exec "$CT" ping -c 1 -W 2 10.77.0.1 >/dev/null || sn_fail "IPv4 through sn-eth0"
ip netns exec "$CT" ping -c 1 -W 2 10.79.0.1 >/dev/null || sn_fail "IPv4 through sn-eth1"
sn_wait_for 5 ip netns exec "$CT" ping -6 -c 1 -W 1 fd79::1 || sn_fail "IPv6 through sn-eth1"
kill "$DP_NS_PID"; wait "$DP_NS_PID"
face_check_gone "$CT"
echo "two faces: each has its link's routes with initcwnd 128"
