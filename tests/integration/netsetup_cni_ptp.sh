#!/usr/bin/env bash
# A namespace built the way a container runtime builds it: Debian's CNI
# `ptp` plugin with host-local IPAM (CNI_COMMAND=ADD, JSON config on stdin,
# a private IPAM dataDir and a test-only subnet). The plugin's "host" side
# lives in a namespace of ours too, so the real host is never touched.
# Then `netsetup gso show` and `netsetup attach` on it: the datapath gets
# the plugin's address and routes; detach gives back exactly what ptp made
# (ptp deletes the kernel's prefix route; it must not come back).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

CNI_DIR=/usr/lib/cni
[ -x "$CNI_DIR/ptp" ] && [ -x "$CNI_DIR/host-local" ] || sn_skip "no CNI ptp/host-local in $CNI_DIR"

sn_netns_add host
sn_netns_add ct
HOSTNS=$(sn_ns host)
CT=$(sn_ns ct)
NSP=$(ns_path ct)
SUBNET=10.$((200 + $$ % 50)).$(($$ % 250)).0/24
mkdir -p "$SN_TMP/ipam"
cat >"$SN_TMP/cni.json" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "sandnet-test-$$",
  "type": "ptp",
  "ipMasq": false,
  "mtu": 1500,
  "ipam": {
    "type": "host-local",
    "subnet": "$SUBNET",
    "dataDir": "$SN_TMP/ipam",
    "routes": [ { "dst": "0.0.0.0/0" } ]
  }
}
EOF
cni() {
	ip netns exec "$HOSTNS" env CNI_COMMAND="$1" CNI_CONTAINERID="sandnet-$$" CNI_NETNS="$NSP" \
		CNI_IFNAME=eth0 CNI_PATH="$CNI_DIR" "$CNI_DIR/ptp" <"$SN_TMP/cni.json"
}
sn_on_exit "cni DEL"
cni ADD >"$SN_TMP/cni-result.json" || sn_fail "CNI ptp ADD failed: $(cat "$SN_TMP/cni-result.json")"
cat "$SN_TMP/cni-result.json"
ip -n "$CT" addr show dev eth0
ip -n "$CT" route
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"

sn_log "gso show on the CNI namespace"
"$NETSETUP" gso show --netns "$NSP" || sn_fail "gso show (text)"
"$NETSETUP" gso show --netns "$NSP" --json eth0 >"$SN_TMP/show.json" || sn_fail "gso show --json"
python3 - "$SN_TMP/show.json" "$(ip -n "$CT" -j link show dev eth0)" <<'EOF' || sn_fail "gso show disagrees"
import json, sys
s = json.load(open(sys.argv[1]))[0]
link = json.loads(sys.argv[2])[0]
assert s["ifindex"] == link["ifindex"] and s["mtu"] == link["mtu"] == 1500, (s, link)
assert s["mode"] in ("hw", "sw") and s["reason"], s
print("gso show:", s["ifname"], s["mode"], s["reason"])
EOF

sn_log "attach to the test receiver"
ip -n "$CT" -j -4 route >"$SN_TMP/r4.json"
ns_sink_start sink
# A process of the "container" (ip netns exec execs it: $! is its pid); attach by --pid.
ip netns exec "$CT" sleep 60 >/dev/null 2>&1 &
CPID=$!
sn_on_exit "kill $CPID"
sn_wait_for 5 sh -c "[ \"\$(readlink /proc/$CPID/ns/net)\" = \"\$(ip netns exec '$CT' readlink /proc/self/ns/net)\" ]" ||
	sn_fail "the container process did not enter $CT"
"$NETSETUP" attach --pid "$CPID" --datapath "$SN_TMP/sink.sock" || sn_fail "attach --pid failed"
sn_wait_for 5 grep -q '"done"' "$SN_TMP/sink.out" || sn_fail "no DONE"
[ -z "$(ip -n "$CT" addr show dev eth0 | grep inet)" ] || sn_fail "addresses left on eth0 after attach"
python3 - "$SN_TMP" <<'EOF' || sn_fail "LINK does not carry the CNI configuration"
import json, sys
d = sys.argv[1]
res = json.load(open(d + "/cni-result.json"))
links = [json.loads(l) for l in open(d + "/sink.out") if l.startswith('{"ifindex"')]
assert len(links) == 1 and links[0]["ifname"] == "eth0", links
l = links[0]
cni_ip, cni_plen = res["ips"][0]["address"].split("/")
assert ("inet", cni_ip, int(cni_plen)) in [(a["family"], a["local"], a["prefixlen"]) for a in l["addrs"]], l["addrs"]
want = set()
for r in json.load(open(d + "/r4.json")):
    dst = r["dst"]
    dst, plen = ("default", 0) if dst == "default" else (dst.split("/")[0], int(dst.split("/")[1]) if "/" in dst else 32)
    want.add((dst, plen, r.get("gateway")))
got = {(r["dst"], r["dst_len"], r["gateway"]) for r in l["routes"] if r["family"] == "inet"}
assert want == got, f"routes: ip {want}, LINK {got}"
assert ("default", 0, res["ips"][0]["gateway"]) in got, got
print("LINK carries", cni_ip, sorted(got, key=str))
EOF

sn_log "detach gives back exactly what ptp made"
"$NETSETUP" detach --netns "$NSP" || sn_fail "detach failed"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after"
ns_same "$SN_TMP/before" "$SN_TMP/after" "CNI ptp namespace after attach + detach"
ip netns exec "$CT" ping -c 1 -W 2 "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ips"][0]["gateway"])' "$SN_TMP/cni-result.json")" ||
	sn_fail "the container cannot reach its gateway after detach"
echo "CNI ptp namespace attached and given back"
