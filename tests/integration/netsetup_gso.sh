#!/usr/bin/env bash
# The GSO decision follows `ethtool -K` and `ip link set ... gso_max_size`,
# and `netsetup gso show --json` reports what `ethtool --json -k` and
# `ip -d -j link` report, through the ethtool netlink family and through the
# SIOCETHTOOL fallback alike. The channels of every mode have PACKET_VNET_HDR
# (the mode says how the datapath sends, not how it receives).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

sn_netns_add ct
sn_netns_add peer
sn_veth_add ct eth0 peer veth0
CT=$(sn_ns ct)
NSP=$(ns_path ct)
ip -n "$CT" addr add 10.231.0.2/24 dev eth0

# compare: gso show --json for eth0 against ethtool and ip -d -j link; prints the mode
compare() {
	local tag=$1
	"$NETSETUP" gso show --netns "$NSP" --json eth0 >"$SN_TMP/show.json" || sn_fail "$tag: gso show failed"
	SANDNET_ETHTOOL=ioctl "$NETSETUP" gso show --netns "$NSP" --json eth0 >"$SN_TMP/show-ioctl.json" ||
		sn_fail "$tag: gso show (ioctl) failed"
	ip netns exec "$CT" ethtool --json -k eth0 >"$SN_TMP/ethtool.json" || sn_fail "ethtool --json -k"
	ip -n "$CT" -d -j link show dev eth0 >"$SN_TMP/link.json" || sn_fail "ip -d -j link"
	# iproute2 6.1 does not print IFLA_GSO_IPV4_MAX_SIZE (63): ask rtnetlink directly.
	ip netns exec "$CT" python3 - >"$SN_TMP/ipv4max" <<'EOF' || sn_fail "raw RTM_GETLINK"
import socket, struct
idx = socket.if_nametoindex("eth0")
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
ifi = struct.pack("=BxHiII", 0, 0, idx, 0, 0)
s.send(struct.pack("=IHHII", 16 + len(ifi), 18, 1, 1, 0) + ifi)   # RTM_GETLINK, NLM_F_REQUEST
data = s.recv(65536)
length, mtype = struct.unpack_from("=IH", data)
assert mtype == 16, f"expected RTM_NEWLINK, got {mtype}"
off, attrs = 32, {}
while off + 4 <= length:
    alen, atype = struct.unpack_from("=HH", data, off)
    if alen < 4:
        break
    attrs[atype & 0x3fff] = data[off + 4:off + alen]
    off += (alen + 3) & ~3
print(struct.unpack("=I", attrs[63])[0] if 63 in attrs else 0)
EOF
	python3 - "$SN_TMP" "$tag" <<'EOF' || sn_fail "$tag: gso show disagrees with ethtool/ip"
import json, sys
d, tag = sys.argv[1], sys.argv[2]
show = json.load(open(d + "/show.json"))
ioctl = json.load(open(d + "/show-ioctl.json"))
assert len(show) == 1 and show[0]["ifname"] == "eth0", show
s = show[0]
assert ioctl[0]["features"] == s["features"], f"netlink {s['features']} vs ioctl {ioctl[0]['features']}"
eth = json.load(open(d + "/ethtool.json"))[0]
for name, on in s["features"].items():
    assert eth[name]["active"] == on, f"{name}: ethtool says {eth[name]['active']}, netsetup {on}"
assert len(s["features"]) == 6, s["features"]
link = json.load(open(d + "/link.json"))[0]
for key in ("ifindex", "mtu", "operstate", "gso_max_size", "gso_max_segs", "tso_max_size", "gro_max_size"):
    assert s[key] == link[key], f"{key}: ip says {link[key]}, netsetup {s[key]}"
# iproute2 6.1 does not print gso_ipv4_max_size; when it does, it must agree.
if "gso_ipv4_max_size" in link:
    assert s["gso_ipv4_max_size"] == link["gso_ipv4_max_size"]
raw = int(open(d + "/ipv4max").read())
assert s["gso_ipv4_max_size"] == raw > 0, f"gso_ipv4_max_size: rtnetlink says {raw}, netsetup {s['gso_ipv4_max_size']}"
assert s["mode"] in ("hw", "sw", "off") and s["reason"], s
print(s["mode"])
EOF
}

expect_mode() {
	local tag=$1 want=$2 got
	got=$(compare "$tag") || exit 1
	[ "$got" = "$want" ] || sn_fail "$tag: mode $got, expected $want: $(cat "$SN_TMP/show.json")"
	echo "ok: $tag -> $got ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["reason"])' "$SN_TMP/show.json"))"
}

K() { ip netns exec "$CT" ethtool -K eth0 "$@" || sn_fail "ethtool -K eth0 $*"; }

expect_mode "default veth" hw
K tso off
expect_mode "tso off, gso on" hw
K gso off
expect_mode "tso off, gso off" sw
K tso on
expect_mode "tso on, gso off" hw
K gso on
ip -n "$CT" link set eth0 gso_max_size 1000 || sn_fail "ip link set gso_max_size"
expect_mode "gso_max_size 1000" sw
ip -n "$CT" link set eth0 gso_max_size 32768
expect_mode "gso_max_size 32768" hw
# Without scatter-gather the kernel turns TSO/GSO off (6.18 keeps
# tx-tcp-accecn-segmentation, so ethtool still says tcp-segmentation-offload: on).
K tx off sg off gro on
expect_mode "tx off sg off gro on" sw
K tx on sg on tso on gso on
expect_mode "tx on sg on tso on gso on" hw

sn_log "text output reads like ethtool"
"$NETSETUP" gso show --netns "$NSP" eth0 >"$SN_TMP/show.txt" || sn_fail "gso show (text)"
cat "$SN_TMP/show.txt"
grep -Eq '^[0-9]+: eth0: mtu 1500 state UP' "$SN_TMP/show.txt" || sn_fail "text: no header line"
grep -q 'gso_max_size 32768' "$SN_TMP/show.txt" || sn_fail "text: no gso_max_size"
grep -Eq '^    mode (hw|sw) \(' "$SN_TMP/show.txt" || sn_fail "text: no mode line"

sn_log "the decision is what attach uses; PACKET_VNET_HDR in hw and sw"
for setting in "on hw true" "off sw true"; do
	set -- $setting
	K tso "$1" gso "$1"
	ip netns exec "$CT" ethtool -k eth0 | grep -E '^(tcp|generic)-seg'
	ip -n "$CT" link set eth0 gso_max_size 65536
	ns_sink_start "s$1"
	"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/s$1.sock" || sn_fail "attach (tso $1)"
	"$NETSETUP" detach --netns "$NSP" || sn_fail "detach"
	sn_wait_for 5 grep -q '"done"' "$SN_TMP/s$1.out" || sn_fail "no DONE"
	python3 - "$SN_TMP/s$1.out" "$2" "$3" <<'EOF' || sn_fail "tso $1: LINK disagrees"
import json, sys
link = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"ifindex"')][0]
assert link["gso_mode"] == sys.argv[2], link
assert [c["vnet_hdr"] for c in link["channels"]] == [sys.argv[3] == "true"], link["channels"]
EOF
done

sn_log "--gso hw on a link without GSO is refused, naming the fix"
K tso off gso off
ns_sink_start refuse
ns_expect_fail "--gso hw without GSO" "GSO mode hw refused: .*ethtool -K eth0 tso on" -- \
	"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/refuse.sock" --gso hw
ip -n "$CT" addr show dev eth0 | grep -q 10.231.0.2 || sn_fail "refused attach changed the addresses"
echo "GSO decision follows the kernel"
