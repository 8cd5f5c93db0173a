#!/usr/bin/env bash
# Docker (Debian's docker.io 20.10) runs containers through sandnet-runtime:
#  - dockerd runs in a namespace of the test ("dock") and a private mount
#    namespace (cgroup v1 hierarchies mounted again, tmpfs /run), with its
#    own data-root, exec-root, socket and containerd (which it starts:
#    one outside its mount namespace would not see its overlay mounts),
#    --iptables=false --bridge=none, every cgroup under a parent of the
#    test's, and dist/runtime/docker-daemon.json (paths pointed at the
#    build) as its configuration: runtimes "sandnet" and
#    "sandnet-no-private" (runtimeArgs --policy ...);
#  - a busybox-static rootfs imported as an image; a user-defined bridge
#    network (the bridge and its host side live in "dock");
#  - `docker run --runtime sandnet` on it: the state names oci:ID, eth0 holds
#    no IPv4 address inside and sn-eth0 does, busybox wget inside fetches a
#    file from the bridge's host side, the metadata address is refused (the
#    default rule counts it), the host side reaches busybox httpd inside;
#    `docker exec`, `docker stop`-less `docker rm -f`: no datapath and no
#    state left;
#  - --runtime sandnet-no-private: runtimeArgs' policy reaches the hook,
#    before the defaults;
#  - --network none and --network host: the container starts, unchanged, and
#    nothing is attached.
# All traffic stays in "dock"; dockerd, containerd and the shims are stopped
# and the cgroups removed on exit.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
. "$SANDNET_TESTS/lib/runtime.sh"

for p in dockerd docker containerd runc; do
	command -v "$p" >/dev/null || sn_skip "no $p (apt-get install docker.io)"
done
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"
sn_need_static_busybox

sn_netns_add dock
DOCK=$(sn_ns dock)
CG=sn$$docker
PFX=10.$((200 + $$ % 50)).$(( $$ % 250 ))
GW=$PFX.1
export DOCKER_HOST=unix://$SN_TMP/docker.sock
sn_on_exit "rt_cgroups_remove $CG"
mkdir -p "$SANDNET_STATE_DIR"

python3 - "$SANDNET_TESTS/../dist/runtime/docker-daemon.json" "$SN_TMP/daemon.json" "$SANDNET_RUNTIME_BIN" <<'EOF' ||
import json, sys
src, dst, runtime = sys.argv[1:]
c = json.load(open(src))
assert set(c["runtimes"]) == {"sandnet", "sandnet-no-private"}, c
for r in c["runtimes"].values():
    assert r["path"] == "/usr/local/bin/sandnet-runtime", r
    r["path"] = runtime
json.dump(c, open(dst, "w"), indent=1)
EOF
	sn_fail "dist/runtime/docker-daemon.json"
rt_daemon "$DOCK" dockerd dockerd --config-file "$SN_TMP/daemon.json" --data-root "$SN_TMP/docker" \
	--exec-root "$SN_TMP/exec" -H "$DOCKER_HOST" --pidfile "$SN_TMP/docker.pid" --iptables=false \
	--bridge=none --ip-forward=false --ip-masq=false --userland-proxy=false --cgroup-parent "/$CG" \
	--exec-opt native.cgroupdriver=cgroupfs --containerd-namespace "sn$$" --containerd-plugins-namespace "sn$$p"
DOCKERD=$RT_PID
sn_wait_for 30 docker info || sn_fail "dockerd did not start: $(tail -20 "$SN_TMP/dockerd.log")"
[ "$(readlink /proc/$DOCKERD/ns/net)" = "$(ip netns exec "$DOCK" readlink /proc/self/ns/net)" ] ||
	sn_fail "dockerd is not in $DOCK"
docker info --format '{{json .Runtimes}}' | grep -q '"sandnet"' || sn_fail "dockerd lacks the sandnet runtime"

rt_rootfs "$SN_TMP/rootfs"
tar -C "$SN_TMP/rootfs" -c . | docker import - "sn$$-busybox:1" >/dev/null || sn_fail "docker import"
docker network create --driver bridge --subnet "$PFX.0/24" --gateway "$GW" \
	-o com.docker.network.bridge.name="sn$$br" "sn$$net" >/dev/null || sn_fail "docker network create"
ip -n "$DOCK" addr show "sn$$br" | grep -q "inet $GW/" || sn_fail "the bridge's host side: $(ip -n "$DOCK" addr)"
head -c 2000000 /dev/urandom >"$SN_TMP/from-host"
(cd "$SN_TMP" && exec ip netns exec "$DOCK" python3 -m http.server --bind "$GW" 8000) >"$SN_TMP/http.log" 2>&1 &
sn_on_exit "kill $!"
sn_wait_for 10 ip netns exec "$DOCK" curl -sf -o /dev/null "http://$GW:8000/" || sn_fail "the host side's http.server"

datapaths() { sn_datapaths "$DOCK"; }
nothing_left() {
	sn_wait_for 10 sh -c "[ -z \"\$(ls '$SANDNET_STATE_DIR')\" ]" || sn_fail "$1 left: $(ls "$SANDNET_STATE_DIR")"
	sn_wait_for 5 sh -c "[ -z \"\$(ip netns pids '$DOCK' | xargs -r -I{} cat /proc/{}/comm 2>/dev/null | grep -xE 'datapath|sn-supervise')\" ]" ||
		sn_fail "$1 left a datapath: $(datapaths)"
}
CT_CMD='trap "exit 0" TERM; httpd -p 8080 -h /www || exit 1; sleep 600 & wait'

sn_log "docker run --runtime sandnet on a bridge network"
ID=$(docker run -d --runtime sandnet --network "sn$$net" --name "sn$$-c1" "sn$$-busybox:1" sh -c "$CT_CMD") ||
	sn_fail "docker run --runtime sandnet: $(tail -5 "$SN_TMP/dockerd.log")"
CPID=$(docker inspect --format '{{.State.Pid}}' "$ID") || sn_fail "docker inspect"
CT_IP=$(docker inspect --format "{{(index .NetworkSettings.Networks \"sn$$net\").IPAddress}}" "$ID")
echo "container $ID, pid $CPID, $CT_IP"
STATE=$(ls "$SANDNET_STATE_DIR"/*.state 2>/dev/null) || sn_fail "nothing attached: $(tail -5 "$SN_TMP/dockerd.log")"
grep -q "^owner oci:$ID$" "$STATE" || sn_fail "state owner: $(cat "$STATE")"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$STATE")
rt_alive "$DP_PID" || sn_fail "no datapath running: $(cat "$STATE")"
[ "$(datapaths)" = "$DP_PID" ] || sn_fail "datapaths in $DOCK: $(datapaths)"
nsenter -t "$CPID" -n ip -4 -o addr show dev eth0 >"$SN_TMP/eth0"
[ ! -s "$SN_TMP/eth0" ] || sn_fail "eth0 keeps an IPv4 address: $(cat "$SN_TMP/eth0")"
nsenter -t "$CPID" -n ip -4 -o addr show dev sn-eth0 | grep -q "inet $CT_IP/" ||
	sn_fail "sn-eth0 lacks $CT_IP: $(nsenter -t "$CPID" -n ip addr)"
docker exec "$ID" timeout 20 wget -q -O /tmp/got "http://$GW:8000/from-host" || sn_fail "busybox wget inside"
[ "$(docker exec "$ID" sh -c 'cat /tmp/got' | cksum)" = "$(cksum <"$SN_TMP/from-host")" ] ||
	sn_fail "wget inside: the file differs"
grep -q "^$CT_IP .*GET /from-host" "$SN_TMP/http.log" || sn_fail "the host side did not see $CT_IP"
out=$(docker exec "$ID" timeout 5 wget -q -O - http://169.254.169.254/ 2>&1) && sn_fail "the metadata address answered: $out"
echo "metadata address: $out"
got=$(ip netns exec "$DOCK" curl -sS --max-time 10 "http://$CT_IP:8080/index.html") || sn_fail "the host side cannot reach httpd inside"
[ "$got" = "served from inside the container" ] || sn_fail "httpd answered '$got'"
"$DATAPATH" stats --all --dir "$SANDNET_STATE_DIR" --json | python3 -c '
import json, sys
a = json.load(sys.stdin)
assert [x["name"] for x in a] == ["oci:" + sys.argv[1]], a
r = {x["rule"]: x["hits"] for x in a[0]["policy"]["egress"]["rules"]}
assert r["169.254.169.254"] >= 1, r
t = a[0]["totals"]
assert t["container_rx_bytes"] > 2000000 and t["tcp_outbound"] >= 1 and t["tcp_inbound"] >= 1, t
print("ok: the metadata default refused", r["169.254.169.254"], "time(s);", t)' "$ID" ||
	sn_fail "stats --all does not show the container and its refusal"

sn_log "docker rm -f: no datapath, no state"
docker rm -f "$ID" >/dev/null || sn_fail "docker rm -f"
nothing_left "docker rm -f"
rt_alive "$DP_PID" && sn_fail "datapath $DP_PID survives docker rm -f"

sn_log "--runtime sandnet-no-private: the daemon.json runtimeArgs' policy reaches the hook"
ID=$(docker run -d --runtime sandnet-no-private --network "sn$$net" "sn$$-busybox:1" sh -c "$CT_CMD") ||
	sn_fail "docker run --runtime sandnet-no-private"
"$DATAPATH" stats --all --dir "$SANDNET_STATE_DIR" --json | python3 -c '
import json, sys
a = json.load(sys.stdin)
rules = [(r["action"], r["rule"]) for r in a[0]["policy"]["egress"]["rules"]]
assert rules[:3] == [("deny", "10.0.0.0/8"), ("deny", "172.16.0.0/12"), ("deny", "192.168.0.0/16")], rules
assert rules[3] == ("deny", "169.254.169.254"), rules
print("ok:", rules)' || sn_fail "the runtime's policy"
out=$(docker exec "$ID" timeout 5 wget -q -O /dev/null "http://$GW:8000/" 2>&1) && sn_fail "10.0.0.0/8 was not refused"
docker rm -f "$ID" >/dev/null || sn_fail "docker rm -f"
nothing_left "docker rm -f (sandnet-no-private)"

sn_log "--network none and --network host: the container starts, nothing attached"
out=$(docker run --rm --runtime sandnet --network none "sn$$-busybox:1" ip -o link 2>&1) || sn_fail "--network none: $out"
echo "$out" | grep -q ": lo:" && ! echo "$out" | grep -q "sn-" || sn_fail "--network none: $out"
nothing_left "--network none"
out=$(docker run --rm --runtime sandnet --network host "sn$$-busybox:1" ip -o link 2>&1) || sn_fail "--network host: $out"
echo "$out" | grep -q "sn$$br" || sn_fail "--network host does not see the host's links: $out"
nothing_left "--network host"
echo "docker: served on a bridge network, given back by docker rm -f; none and host unchanged"
