#!/usr/bin/env bash
# The receiver gets one LINK per usable link (a down link and lo are
# skipped, --iface selects) with channel fds that are AF_PACKET SOCK_RAW
# sockets bound to that link's ifindex, PACKET_VNET_HDR in every mode (hw
# sends GSO frames behind it; every mode needs it to receive a peer's UDP
# GSO frame), and with --channels N, N sockets in one fanout group.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

sn_netns_add ct
sn_netns_add peer
sn_veth_add ct eth0 peer veth0
sn_veth_add ct eth1 peer veth1
sn_veth_add ct eth2 peer veth2
CT=$(sn_ns ct)
NSP=$(ns_path ct)
ip -n "$CT" addr add 10.241.0.2/24 dev eth0
ip -n "$CT" addr add 10.241.1.2/24 dev eth1
ip -n "$CT" link set eth2 down
ip netns exec "$CT" ethtool -K eth1 tso off gso off >/dev/null || sn_fail "ethtool -K eth1"
ip -n "$CT" -j link >"$SN_TMP/links.json"

# check NAME CHANNELS EXPECTED_LINKS [FORCED_MODE]: one attach+detach and its LINKs
check() {
	local name=$1 channels=$2 want=$3 mode=${4:-}; shift 4
	ns_sink_start "$name"
	"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/$name.sock" --channels "$channels" "$@" ||
		sn_fail "$name: attach failed"
	"$NETSETUP" detach --netns "$NSP" || sn_fail "$name: detach failed"
	sn_wait_for 5 grep -q '"done"' "$SN_TMP/$name.out" || sn_fail "$name: no DONE"
	python3 - "$SN_TMP" "$name" "$channels" "$want" "$mode" <<'EOF' || sn_fail "$name: LINKs are wrong"
import json, sys
d, name, channels, want, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
index = {l["ifname"]: l["ifindex"] for l in json.load(open(d + "/links.json"))}
links = [json.loads(l) for l in open(d + "/" + name + ".out") if l.startswith('{"ifindex"')]
got = sorted(l["ifname"] for l in links)
assert got == sorted(want.split(",")), f"links {got}, expected {want}"
for l in links:
    assert l["ifindex"] == index[l["ifname"]], l
    want_mode = mode or {"eth0": "hw", "eth1": "sw"}[l["ifname"]]
    assert l["gso_mode"] == want_mode, f"{l['ifname']}: mode {l['gso_mode']}, expected {want_mode}"
    assert len(l["channels"]) == channels, l["channels"]
    for c in l["channels"]:
        assert c["domain"] == 17 and c["type"] == 3, f"not AF_PACKET SOCK_RAW: {c}"
        assert c["ifindex"] == l["ifindex"], f"bound to {c['ifindex']}, link is {l['ifindex']}"
        assert c["protocol"] == 3, f"not bound to ETH_P_ALL: {c}"
        assert c["vnet_hdr"], f"no PACKET_VNET_HDR in mode {l['gso_mode']}"
    fan = {c["fanout"] for c in l["channels"]}
    if channels == 1:
        assert fan == {0}, f"one channel in a fanout group: {fan}"
    else:
        assert len(fan) == 1 and fan != {0}, f"channels not in one fanout group: {fan}"
        # type PACKET_FANOUT_HASH (0) with FLAG_IGNORE_OUTGOING (0x4000) in the high half
        f = fan.pop()
        assert (f >> 16) & 0xff == 0 and (f >> 16) & 0x4000, hex(f)
    print(name, l["ifname"], l["gso_mode"], [(c["ifindex"], c["vnet_hdr"], hex(c["fanout"])) for c in l["channels"]])
EOF
}

check all1 1 eth0,eth1 ""
check all3 3 eth0,eth1 ""
check sw 2 eth0,eth1 sw --gso sw
check off 1 eth0,eth1 off --gso off
check only1 1 eth1 "" --iface eth1
check max 16 eth0 "" --iface eth0
grep -q 'eth2' "$SN_TMP/all1.out" && sn_fail "the down link eth2 was handed over"
ns_expect_fail "--iface of a down link" "eth2: cannot be served: down" -- \
	"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/none.sock" --iface eth2
echo "one LINK per link with the right fds"
