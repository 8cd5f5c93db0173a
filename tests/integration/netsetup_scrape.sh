#!/usr/bin/env bash
# netsetup's scrape matches `ip -j addr` / `ip -j route`: a netns with two
# IPv4 and two IPv6 addresses, a default route via a gateway (both families),
# an extra prefix route and a permanent neighbour is attached to proto_sink,
# whose LINK must carry exactly those addresses, routes and neighbour.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

sn_netns_add ct
sn_netns_add peer
sn_veth_add ct eth0 peer veth0
CT=$(sn_ns ct)
ip -n "$CT" addr add 10.201.0.2/24 dev eth0
ip -n "$CT" addr add 10.201.0.3/24 dev eth0
ip -n "$CT" addr add fd20:1::2/64 dev eth0
ip -n "$CT" addr add fd20:2::2/64 dev eth0
ip -n "$CT" route add default via 10.201.0.1
ip -n "$CT" route add 10.202.0.0/16 dev eth0
ip -n "$CT" -6 route add default via fd20:1::1
ip -n "$CT" neigh add 10.201.0.9 lladdr 02:00:00:00:00:09 nud permanent dev eth0
ns_settle "$CT"

ip -n "$CT" -j addr show dev eth0 >"$SN_TMP/addr.json"
ip -n "$CT" -j -4 route show table main >"$SN_TMP/r4.json"
ip -n "$CT" -j -6 route show table main >"$SN_TMP/r6.json"
ip -n "$CT" -j neigh show nud permanent >"$SN_TMP/neigh.json"

ns_sink_start sink
"$NETSETUP" attach --netns "$(ns_path ct)" --datapath "$SN_TMP/sink.sock" ||
	sn_fail "attach failed"
sn_on_exit "$NETSETUP detach --netns $(ns_path ct)"
sn_wait_for 5 grep -q '"done"' "$SN_TMP/sink.out" || sn_fail "sink did not get DONE"
cat "$SN_TMP/sink.out"

python3 - "$SN_TMP" <<'EOF' || sn_fail "scrape differs from ip -j"
import json, sys
d = sys.argv[1]
links = [json.loads(l) for l in open(d + "/sink.out") if l.startswith('{"ifindex"')]
assert len(links) == 1, f"expected one LINK (eth0), got {len(links)}"
link = links[0]
ip = json.load(open(d + "/addr.json"))[0]
assert link["ifname"] == "eth0" and link["ifindex"] == ip["ifindex"], (link["ifname"], ip["ifindex"])
assert link["mac"] == ip["address"], (link["mac"], ip["address"])
assert link["mtu"] == ip["mtu"]

want = sorted((a["family"], a["local"], a["prefixlen"]) for a in ip["addr_info"])
got = sorted((a["family"], a["local"], a["prefixlen"]) for a in link["addrs"])
print("addresses:", got)
assert want == got, f"addresses: ip says {want}, netsetup sent {got}"
assert len([a for a in got if a[0] == "inet"]) == 2 and len([a for a in got if a[0] == "inet6"]) == 3

def ip_routes(fam, path):
    out = []
    for r in json.load(open(path)):
        if r.get("dev") != "eth0" or r.get("type", "unicast") != "unicast":
            continue
        dst = r["dst"]
        if dst == "default":
            dst, plen = "default", 0
        elif "/" in dst:
            dst, plen = dst.split("/")[0], int(dst.split("/")[1])
        else:
            plen = 32 if fam == "inet" else 128
        out.append((fam, dst, plen, r.get("gateway"), r.get("metric", 0)))
    return out

want = sorted(ip_routes("inet", d + "/r4.json") + ip_routes("inet6", d + "/r6.json"))
got = sorted((r["family"], r["dst"], r["dst_len"], r["gateway"], r["metric"]) for r in link["routes"])
print("routes:", got)
assert want == got, f"routes: ip says {want}, netsetup sent {got}"
assert ("inet", "default", 0, "10.201.0.1", 0) in got
assert ("inet6", "default", 0, "fd20:1::1", 1024) in got
assert ("inet", "10.202.0.0", 16, None, 0) in got

want = sorted((n["dst"], n["lladdr"]) for n in json.load(open(d + "/neigh.json")) if n.get("dev") == "eth0")
got = sorted((n["dst"], n["lladdr"]) for n in link["neighs"])
assert want == got == [("10.201.0.9", "02:00:00:00:00:09")], (want, got)
print("scrape matches ip -j")
EOF
