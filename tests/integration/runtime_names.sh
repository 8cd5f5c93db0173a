#!/usr/bin/env bash
# Name rules (issue 42) through the container runtimes, each given the way its
# users give rules, with the container's own DNS and busybox's tools inside:
#  1. podman 4.3 with CNI: a network from dist/cni/sandnet-bridge.conflist
#     whose sandnet plugin has "policy": ["egress-allow=tcp:allowed.test:8000"],
#     `podman run --network NET --dns DNS` (resolv.conf names dnsmasq
#     directly);
#  2. Docker 20.10 through sandnet-runtime: a runtime in daemon.json with
#     "runtimeArgs": ["--policy", "egress-allow=tcp:allowed.test:8000"] (Docker
#     20.10 has no `docker run --annotation`), `docker run --runtime
#     sandnet-names --network NET --dns DNS` on a user-defined bridge network
#     (resolv.conf names Docker's embedded resolver, 127.0.0.11, which asks
#     DNS from inside the container's namespace: through sandnet).
# dnsmasq on the host side (the namespace the runtime runs in) answers
# allowed.test and other.test and logs every query; python3's http.server
# there serves a file on both names' addresses. In each container:
#  (a) before any lookup, allowed.test's address is refused ("No route to
#      host": the datapath's ICMP administratively prohibited), and nothing of
#      it reaches the server;
#  (b) `nslookup allowed.test` answers its address, then `wget
#      http://allowed.test:8000/` fetches the host side's file intact; port
#      8001 of the same name stays refused (the rule's port only);
#  (c) `nslookup other.test` fails with REFUSED (the datapath's answer, which
#      Docker's resolver passes on as it is) and dnsmasq's log has no query for
#      other.test, while it has allowed.test's, from the container's address;
#  (d) other.test's address, used directly, is refused and the server sees
#      nothing;
#  (e) `datapath stats --all` shows the rule as given, deny by default, the
#      DNS refusals, the refusals by default and an address bound by an answer;
#  (f) podman: the conflist's "datapathArgs": ["--flow-log", FILE] gives a
#      record per conversation, the container's owner in each: the wget with
#      the file's bytes and allowed.test, the refusals, other.test's query.
# Everything runs in namespaces of the test: podman in a private mount
# namespace as in runtime_podman, dockerd as in runtime_docker
# (tests/lib/runtime.sh); both are stopped and nothing is left on exit.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
. "$SANDNET_TESTS/lib/runtime.sh"

CNI_DIR=/usr/lib/cni
DIST=$SANDNET_TESTS/../dist
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"
command -v dnsmasq >/dev/null || sn_skip "no dnsmasq (apt-get install dnsmasq-base)"
sn_need_static_busybox
PODMAN=1 DOCKER=1
for p in podman crun conmon; do command -v "$p" >/dev/null || PODMAN=; done
[ -x "$CNI_DIR/bridge" ] && [ -x "$CNI_DIR/host-local" ] || PODMAN=
for p in dockerd docker containerd runc; do command -v "$p" >/dev/null || DOCKER=; done
[ -n "$PODMAN$DOCKER" ] || sn_skip "neither podman (podman crun conmon containernetworking-plugins) nor docker.io"

RULE=tcp:allowed.test:8000
# On the host side's lo, in a subnet no bridge of the test uses.
DNS=10.199.0.53
ALLOWED=10.199.0.11
OTHER=10.199.0.12
mkdir -p "$SANDNET_STATE_DIR" "$SN_TMP/www"
head -c 1000000 /dev/urandom >"$SN_TMP/www/from-host"
CT_CMD='trap "exit 0" TERM; sleep 600 & wait'

# names_rootfs DIR: busybox-static with nslookup.
names_rootfs() {
	rt_rootfs "$1"
	ln -sf busybox "$1/bin/nslookup"
}

# host_side NS: dnsmasq and http.server in NS (the runtime's namespace) on
# addresses of its lo; the logs in $SN_TMP/NS-dnsmasq.log and NS-http.log.
host_side() {
	local ns=$1 a
	for a in $DNS $ALLOWED $OTHER; do ip -n "$ns" addr add "$a/32" dev lo || sn_fail "address $a in $ns"; done
	ip netns exec "$ns" dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces \
		--listen-address="$DNS" --port=53 --pid-file= \
		--host-record="allowed.test,$ALLOWED" --host-record="other.test,$OTHER" \
		--log-queries --log-facility=- >"$SN_TMP/$ns-dnsmasq.log" 2>&1 &
	sn_on_exit "kill $!"
	(cd "$SN_TMP/www" && exec ip netns exec "$ns" python3 -m http.server --bind 0.0.0.0 8000) \
		>"$SN_TMP/$ns-http.log" 2>&1 &
	sn_on_exit "kill $!"
	sn_wait_for 10 sh -c "ip netns exec '$ns' ss -Hlun 'sport = :53' | grep -q ." || sn_fail "dnsmasq did not start: $(cat "$SN_TMP/$ns-dnsmasq.log")"
	sn_wait_for 10 ip netns exec "$ns" curl -sf -o /dev/null "http://$ALLOWED:8000/" || sn_fail "the host side's http.server"
}

# refused WHO URL LOG MARK EXEC...: wget of URL inside fails with "No route
# to host" (the datapath's refusal) and LOG (the host side's http.server)
# has no request for MARK (the URL's path).
refused() {
	local who=$1 url=$2 log=$3 mark=$4 out; shift 4
	out=$("$@" timeout 10 wget -q -O /dev/null "$url" 2>&1) && sn_fail "$who: $url answered: $out"
	echo "$out" | grep -q "No route to host" || sn_fail "$who: $url was not refused by the policy: $out"
	grep -q "GET $mark" "$log" && sn_fail "$who: the host side saw $mark: $(cat "$log")"
	echo "ok: $who: $url refused: $out"
}

# names_checks WHO NS CT_IP EXEC...: (a) to (d) inside the container;
# EXEC... runs a command in it, NS is where dnsmasq and the web server run.
names_checks() {
	local who=$1 ns=$2 ip=$3 out rc
	local dlog=$SN_TMP/$2-dnsmasq.log hlog=$SN_TMP/$2-http.log
	shift 3
	sn_log "$who (a): before any lookup, allowed.test's address is refused"
	refused "$who" "http://$ALLOWED:8000/before-lookup" "$hlog" /before-lookup "$@"

	sn_log "$who (b): allowed.test looked up, then reached on its rule's port"
	out=$("$@" timeout 15 nslookup allowed.test 2>&1)
	echo "$out" | grep -q "^Address: *$ALLOWED$" || sn_fail "$who: nslookup allowed.test: $out"
	echo "ok: $who: nslookup allowed.test: $(echo "$out" | grep "^Address: *$ALLOWED")"
	"$@" timeout 20 wget -q -O /tmp/got http://allowed.test:8000/from-host ||
		sn_fail "$who: wget http://allowed.test:8000/from-host"
	[ "$("$@" cat /tmp/got | cksum)" = "$(cksum <"$SN_TMP/www/from-host")" ] || sn_fail "$who: wget: the file differs"
	grep -q "^$ip .*GET /from-host" "$hlog" || sn_fail "$who: the host side saw no GET /from-host from $ip: $(cat "$hlog")"
	echo "ok: $who: wget http://allowed.test:8000/from-host: $(stat -c %s "$SN_TMP/www/from-host") bytes intact"
	refused "$who" http://allowed.test:8001/other-port "$hlog" /other-port "$@"
	grep -q "query\[A\] allowed.test from $ip$" "$dlog" ||
		sn_fail "$who: dnsmasq saw no query for allowed.test from $ip: $(cat "$dlog")"

	sn_log "$who (c): other.test refused by the datapath, never seen by dnsmasq"
	out=$("$@" timeout 15 nslookup other.test 2>&1); rc=$?
	echo "$out" | grep -q "$OTHER" && sn_fail "$who: nslookup other.test answered: $out"
	[ "$rc" != 0 ] && echo "$out" | grep -q "can't find other.test: REFUSED" ||
		sn_fail "$who: nslookup other.test: exit $rc, not REFUSED: $out"
	echo "ok: $who: nslookup other.test: exit $rc, $(echo "$out" | grep "can't find" | head -n 1)"
	grep -q "other.test" "$dlog" && sn_fail "$who: dnsmasq saw a query for other.test: $(cat "$dlog")"
	echo "ok: $who: dnsmasq's log has no other.test"

	sn_log "$who (d): other.test's address, used directly, is refused"
	refused "$who" "http://$OTHER:8000/other-direct" "$hlog" /other-direct "$@"
}

# names_stats WHO OWNER: (e) what `datapath stats --all` shows of the one container.
names_stats() {
	sn_log "$1 (e): datapath stats --all counts it"
	"$DATAPATH" stats --all --dir "$SANDNET_STATE_DIR" --json >"$SN_TMP/stats.json" ||
		sn_fail "$1: datapath stats --all: $(cat "$SN_TMP/stats.json")"
	python3 - "$SN_TMP/stats.json" "$2" "$RULE" <<'EOF' || sn_fail "$1: stats: $(cat "$SN_TMP/stats.json")"
import json, sys
a = json.load(open(sys.argv[1]))
assert [x["name"] for x in a] == [sys.argv[2]], [x["name"] for x in a]
p, t = a[0]["policy"]["egress"], a[0]["totals"]
hits = {r["rule"]: r["hits"] for r in p["rules"]}
assert p["no_match"] == "deny", p
# two lookups of allowed.test (nslookup, wget's), each A and AAAA at least, and one connection
assert hits[sys.argv[3]] >= 3, hits
# other.test's A and AAAA, at least one of each form
assert p["dns_refused"] >= 2 and t["dns_queries_refused"] >= 2, (p, t)
assert t["dns_queries_passed"] >= 2 and t["dns_addresses_bound"] >= 1, t
assert p["name_bindings"]["held"] >= 1, p["name_bindings"]
# before-lookup, other-port, other-direct
assert p["refused_by_default"] >= 3 and t["refused_egress"] >= 3, (p, t)
print("ok:", sys.argv[2], "hits", hits, "dns_refused", p["dns_refused"], "refused_by_default",
      p["refused_by_default"], "bindings", p["name_bindings"])
EOF
}

if [ -z "$PODMAN" ]; then
	echo "skipped part 1: no podman, crun, conmon or CNI bridge/host-local"
else
	sn_log "1. podman + CNI: the conflist's \"policy\": [\"egress-allow=$RULE\"]"
	sn_netns_add host
	HOSTNS=$(sn_ns host)
	NET=sandnet-$$
	PFX=10.$((200 + $$ % 50)).$(( $$ % 250 ))
	GW=$PFX.1
	NOFILE=$(ulimit -Hn)
	[ "$NOFILE" = unlimited ] && NOFILE=1048576
	mkdir -p "$SN_TMP/cni/net" "$SN_TMP/cni/bin" "$SN_TMP/ipam"
	ln -s "$NETSETUP" "$SN_TMP/cni/bin/sandnet"
	cat >"$SN_TMP/containers.conf" <<EOF
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
lock_type = "file"
[network]
network_backend = "cni"
network_config_dir = "$SN_TMP/cni/net"
cni_plugin_dirs = ["$SN_TMP/cni/bin", "$CNI_DIR"]
EOF
	cat >"$SN_TMP/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$SN_TMP/pod/root"
runroot = "$SN_TMP/pod/runroot"
EOF
	# The example conflist with the test's names and subnet, and the rule.
	python3 - "$DIST/cni/sandnet-bridge.conflist" "$SN_TMP/cni/net/$NET.conflist" "$NET" "sn$$br" \
		"$PFX.0/24" "$GW" "$SN_TMP/ipam" "egress-allow=$RULE" "$SN_TMP/pod-flows.jsonl" <<'EOF' ||
import json, sys
src, dst, name, bridge, subnet, gw, ipam_dir, item, flows = sys.argv[1:]
c = json.load(open(src))
assert [p["type"] for p in c["plugins"]] == ["bridge", "sandnet"], c
br = c["plugins"][0]
c["name"] = name
br.update(bridge=bridge, ipMasq=False)
br["ipam"].update(dataDir=ipam_dir, ranges=[[{"subnet": subnet, "gateway": gw}]])
c["plugins"][1]["policy"] = [item]
c["plugins"][1]["datapathArgs"] = ["--flow-log", flows]
json.dump(c, open(dst, "w"), indent=1)
EOF
		sn_fail "dist/cni/sandnet-bridge.conflist"
	# podman's mount namespace (runtime_podman.sh: "Running podman in a test").
	ip netns exec "$HOSTNS" sh -c '
		mount -t tmpfs sn-nocgroup /sys/fs/cgroup &&
		mount -t tmpfs sn-run /run && mkdir /run/sandnet /run/netns && mount --bind "$1" /run/sandnet &&
		mount -t tmpfs sn-varlib /var/lib &&
		touch "$2" && exec sleep 3600' holder "$SANDNET_STATE_DIR" "$SN_TMP/holder.ready" &
	HOLDER=$!
	sn_on_exit "kill $HOLDER"
	sn_wait_for 10 test -e "$SN_TMP/holder.ready" || sn_fail "the holder's mounts failed"
	pod() {
		timeout -k 5 60 nsenter -t "$HOLDER" -m -n env -u SANDNET_STATE_DIR \
			CONTAINERS_CONF="$SN_TMP/containers.conf" CONTAINERS_STORAGE_CONF="$SN_TMP/storage.conf" \
			podman --root "$SN_TMP/pod/root" --runroot "$SN_TMP/pod/runroot" --tmpdir "$SN_TMP/pod/tmp" "$@"
	}
	sn_on_exit "pod rm -f -a -t 0"
	host_side "$HOSTNS"

	C1=sn$$-names
	names_rootfs "$SN_TMP/rootfs-pod"
	pod run -d --name "$C1" --network "$NET" --dns "$DNS" --cgroups=disabled \
		--ulimit "nofile=$NOFILE:$NOFILE" --ulimit nproc=4096:4096 \
		--rootfs "$SN_TMP/rootfs-pod" sh -c "$CT_CMD" >"$SN_TMP/run1.out" 2>&1 ||
		sn_fail "podman run --network $NET: $(cat "$SN_TMP/run1.out")"
	ID1=$(pod inspect --format '{{.Id}}' "$C1") || sn_fail "podman inspect"
	pod exec "$C1" cat /etc/resolv.conf | grep -qx "nameserver $DNS" ||
		sn_fail "the container's resolv.conf does not name $DNS: $(pod exec "$C1" cat /etc/resolv.conf)"
	STATE=$(ls "$SANDNET_STATE_DIR"/*.state 2>/dev/null)
	[ "$(echo "$STATE" | wc -w)" = 1 ] && grep -q "^owner cni:$ID1:eth0$" "$STATE" ||
		sn_fail "not served through the CNI plugin: $(ls "$SANDNET_STATE_DIR") $(cat "$SN_TMP/run1.out")"
	CT_IP=$(pod inspect --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$C1")
	echo "container $C1 ($ID1), $CT_IP, served: $(grep ^owner "$STATE")"
	names_checks podman "$HOSTNS" "$CT_IP" pod exec "$C1"
	names_stats podman "cni:$ID1:eth0"
	pod rm -f -t 0 "$C1" >/dev/null || sn_fail "podman rm -f $C1"
	sn_wait_for 10 sh -c "[ -z \"\$(ls '$SANDNET_STATE_DIR')\" ]" || sn_fail "podman rm left: $(ls "$SANDNET_STATE_DIR")"
	[ -z "$(sn_datapaths "$HOSTNS")" ] || sn_fail "podman rm left a datapath: $(sn_datapaths "$HOSTNS")"
	sn_log "podman (f): the flow log datapathArgs named"
	python3 - "$SN_TMP/pod-flows.jsonl" "cni:$ID1:eth0" "$ALLOWED" "$OTHER" "$RULE" \
		"$(stat -c %s "$SN_TMP/www/from-host")" <<'EOF' || sn_fail "podman: the flow log: $(cat "$SN_TMP/pod-flows.jsonl")"
import json, sys
path, owner, allowed, other, rule, size = sys.argv[1:]
recs = [json.loads(l) for l in open(path)]
assert recs and all(r["container"] == owner for r in recs), recs
def one(**want):
    got = [r for r in recs if all(r[k] == v for k, v in want.items())]
    assert len(got) == 1, (want, got)
    return got[0]
w = one(proto="tcp", dst=allowed, dport=8000, verdict="allow")
assert (w["name"], w["rule"], w["end"]) == ("allowed.test", rule, "closed"), w
assert int(size) < w["bytes_in"] < int(size) + 1000 and 50 < w["bytes_out"] < 1000, w	# the file and HTTP's heads (busybox asks in 89 bytes)
one(proto="tcp", dst=allowed, dport=8001, verdict="deny", end="policy")
assert len([r for r in recs if r["dst"] == allowed and r["dport"] == 8000 and r["verdict"] == "deny"]) == 1, recs
one(proto="tcp", dst=other, dport=8000, verdict="deny", end="policy")
q = [r for r in recs if r["proto"] == "udp" and r["dport"] == 53 and r["name"] == "other.test"]
assert q and all(r["verdict"] == "deny" for r in q), q
print("ok: podman: flow log", len(recs), "records; the wget:", w["bytes_out"], "out", w["bytes_in"], "in")
EOF
	echo "podman + CNI: the conflist's name rule held"
fi

if [ -z "$DOCKER" ]; then
	echo "skipped part 2: no dockerd, docker, containerd or runc"
else
	sn_log "2. Docker + sandnet-runtime: daemon.json's runtimeArgs [\"--policy\", \"egress-allow=$RULE\"]"
	sn_netns_add dock
	DOCK=$(sn_ns dock)
	CG=sn$$docker
	PFX=10.$((200 + $$ % 50)).$(( ($$ + 1) % 250 ))
	GW=$PFX.1
	export DOCKER_HOST=unix://$SN_TMP/docker.sock
	sn_on_exit "rt_cgroups_remove $CG"
	cat >"$SN_TMP/daemon.json" <<EOF
{ "runtimes": { "sandnet-names": { "path": "$SANDNET_RUNTIME_BIN",
                                   "runtimeArgs": ["--policy", "egress-allow=$RULE"] } } }
EOF
	rt_daemon "$DOCK" dockerd dockerd --config-file "$SN_TMP/daemon.json" --data-root "$SN_TMP/docker" \
		--exec-root "$SN_TMP/exec" -H "$DOCKER_HOST" --pidfile "$SN_TMP/docker.pid" --iptables=false \
		--bridge=none --ip-forward=false --ip-masq=false --userland-proxy=false --cgroup-parent "/$CG" \
		--exec-opt native.cgroupdriver=cgroupfs --containerd-namespace "sn$$" --containerd-plugins-namespace "sn$$p"
	sn_wait_for 30 docker info || sn_fail "dockerd did not start: $(tail -20 "$SN_TMP/dockerd.log")"
	docker info --format '{{json .Runtimes}}' | grep -q '"sandnet-names"' || sn_fail "dockerd lacks the runtime"
	host_side "$DOCK"
	names_rootfs "$SN_TMP/rootfs-dock"
	tar -C "$SN_TMP/rootfs-dock" -c . | docker import - "sn$$-busybox:1" >/dev/null || sn_fail "docker import"
	docker network create --driver bridge --subnet "$PFX.0/24" --gateway "$GW" \
		-o com.docker.network.bridge.name="sn$$br" "sn$$net" >/dev/null || sn_fail "docker network create"
	ID=$(docker run -d --runtime sandnet-names --network "sn$$net" --dns "$DNS" "sn$$-busybox:1" sh -c "$CT_CMD") ||
		sn_fail "docker run --runtime sandnet-names: $(tail -5 "$SN_TMP/dockerd.log")"
	sn_on_exit "docker rm -f $ID"
	STATE=$(ls "$SANDNET_STATE_DIR"/*.state 2>/dev/null)
	[ "$(echo "$STATE" | wc -w)" = 1 ] && grep -q "^owner oci:$ID$" "$STATE" ||
		sn_fail "not served through sandnet-runtime: $(ls "$SANDNET_STATE_DIR") $(tail -5 "$SN_TMP/dockerd.log")"
	CT_IP=$(docker inspect --format "{{(index .NetworkSettings.Networks \"sn$$net\").IPAddress}}" "$ID")
	docker exec "$ID" cat /etc/resolv.conf | grep -qx "nameserver 127.0.0.11" ||
		sn_fail "resolv.conf does not name Docker's resolver: $(docker exec "$ID" cat /etc/resolv.conf)"
	echo "container $ID, $CT_IP, served: $(grep ^owner "$STATE")"
	names_checks docker "$DOCK" "$CT_IP" docker exec "$ID"
	names_stats docker "oci:$ID"
	docker rm -f "$ID" >/dev/null || sn_fail "docker rm -f"
	sn_wait_for 10 sh -c "[ -z \"\$(ls '$SANDNET_STATE_DIR')\" ]" || sn_fail "docker rm -f left: $(ls "$SANDNET_STATE_DIR")"
	[ -z "$(sn_datapaths "$DOCK")" ] || sn_fail "docker rm -f left a datapath: $(sn_datapaths "$DOCK")"
	echo "docker + sandnet-runtime: daemon.json's name rule held"
fi
