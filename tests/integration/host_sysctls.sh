#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# The suite on a container host. A new namespace inherits the root
# namespace's IPv4 settings (net.core.devconf_inherit_init_net=0), and on a
# host where podman, Docker or CNI's bridge/ptp plugins ran, ip_forward is 1
# there, and distributions set rp_filter. The root namespace is not ours to
# change, so this test gives every namespace the suite makes such a start
# (SN_HOST_SYSCTLS, applied by sn_netns_add before its own baseline) and runs
# the tests that depend most on it: hardening_synflood (its peer must not
# forward, or the flood's answers would be routed back), face_tcp (a peer
# that forwards on purpose, errnos from an unreachable network) and
# datapath_ping (ARP, ICMP errors, redirects).
. "$SANDNET_TESTS/lib/common.sh"

export SN_HOST_SYSCTLS="net.ipv4.ip_forward=1
net.ipv4.conf.all.forwarding=1 net.ipv4.conf.default.forwarding=1
net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.default.rp_filter=1
net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0
net.ipv4.conf.all.accept_redirects=0 net.ipv4.conf.default.accept_redirects=0
net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.default.arp_ignore=1
net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.default.arp_announce=2
net.ipv4.conf.all.route_localnet=1 net.ipv4.conf.default.route_localnet=1
net.ipv6.conf.all.forwarding=1 net.ipv6.conf.default.forwarding=1
net.ipv6.conf.all.accept_ra=2 net.ipv6.conf.default.accept_ra=2
net.ipv4.ping_group_range=0\t2147483647"

sn_log "a namespace of the suite starts as on a container host, and is then set to the baseline"
ns=$(sn_ns probe)
ip netns add "$ns" || sn_fail "ip netns add $ns"
_sn_netns+=("$ns")
host=()
for kv in $SN_HOST_SYSCTLS; do host+=("${kv//\\t/	}"); done
ip netns exec "$ns" sysctl -qw "${host[@]}" || sn_fail "host-like sysctls"
[ "$(ip netns exec "$ns" sysctl -n net.ipv4.ip_forward)" = 1 ] || sn_fail "the host-like start does not forward"
ip netns del "$ns"
sn_netns_add probe
for kv in $SN_SYSCTL_BASELINE; do
	want=${kv#*=}; want=${want//\\t/	}
	got=$(ip netns exec "$ns" sysctl -n "${kv%%=*}") || sn_fail "read ${kv%%=*}"
	[ "$got" = "$want" ] || sn_fail "${kv%%=*} is '$got' after sn_netns_add, not '$want'"
done
echo "ok: ${#host[@]} host-like settings, then the baseline"

for t in hardening_synflood face_tcp datapath_ping; do
	sn_log "$t on a container host's settings"
	bash "$SANDNET_TESTS/integration/$t.sh" >"$SN_TMP/$t.log" 2>&1 || {
		tail -n 30 "$SN_TMP/$t.log"
		sn_fail "$t fails when namespaces start with a container host's settings"
	}
	tail -n 1 "$SN_TMP/$t.log"
done
