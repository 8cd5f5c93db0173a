#!/usr/bin/env bash
# containerd (Debian's 1.6, runc shim v2) runs a task through sandnet-runtime:
#  - containerd runs in the test's "host" namespace and a private mount
#    namespace (cgroup v1 hierarchies mounted again, tmpfs /run) with a
#    configuration of the test's own (root, state, socket; CRI off);
#  - a prepared network namespace "ct" (a veth to "host", an address and a
#    default route); `ctr run --runc-binary sandnet-runtime --with-ns
#    network:PATH --rootfs DIR` with a sandnet.policy annotation: the task is
#    served (state owner oci:ID, netnspath PATH, eth0 without its address),
#    the host pings it and reaches busybox httpd inside, the annotation's rule
#    is the datapath's; `ctr task kill` + `ctr task rm` runs poststop: the
#    netns has exactly its addresses and routes back;
#  - --annotation io.sandnet.enable=false: the task runs and the namespace is
#    untouched;
#  - dist/runtime/containerd-config.toml (the CRI runtime "sandnet" with
#    BinaryName) is a configuration containerd reads: `containerd config dump`
#    shows the runtime and its BinaryName.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
. "$SANDNET_TESTS/lib/runtime.sh"

for p in containerd ctr runc; do
	command -v "$p" >/dev/null || sn_skip "no $p (apt-get install containerd runc)"
done
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"
sn_need_static_busybox

sn_netns_add host
sn_netns_add ct
HOSTNS=$(sn_ns host)
CT=$(sn_ns ct)
NSP=$(ns_path ct)
CG=sn$$ctd
PFX=10.$((200 + $$ % 50)).$(( ($$ + 3) % 250 ))
CT_IP=$PFX.2
sn_on_exit "rt_cgroups_remove $CG"
mkdir -p "$SANDNET_STATE_DIR" "$SN_TMP/ctd"
sn_veth_add ct eth0 host veth-ct
ip -n "$HOSTNS" addr add "$PFX.1/24" dev veth-ct
ip -n "$CT" addr add "$CT_IP/24" dev eth0
ip -n "$CT" route add default via "$PFX.1"
sn_wait_for 10 sh -c "ip -n '$CT' -6 addr show dev eth0 scope link | grep -q inet6" || sn_fail "no IPv6 link-local on eth0"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"

sn_log "the example CRI configuration is one containerd reads"
sed "s|/usr/local/bin/sandnet-runtime|$SANDNET_RUNTIME_BIN|" "$SANDNET_TESTS/../dist/runtime/containerd-config.toml" \
	>"$SN_TMP/cri.toml"
containerd --config "$SN_TMP/cri.toml" config dump >"$SN_TMP/cri-dump.toml" 2>&1 || sn_fail "containerd config dump: $(cat "$SN_TMP/cri-dump.toml")"
python3 - "$SN_TMP/cri-dump.toml" "$SANDNET_RUNTIME_BIN" <<'EOF' || sn_fail "the runtime in containerd's view (above)"
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
r = c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["sandnet"]
assert r["runtime_type"] == "io.containerd.runc.v2", r
assert r["options"]["BinaryName"] == sys.argv[2], r
assert "sandnet.*" in r["pod_annotations"] and "io.sandnet.*" in r["pod_annotations"], r
print("ok: containerd reads runtime sandnet:", r)
EOF

sn_log "containerd in the host namespace, its own root, state and socket"
SOCK=$SN_TMP/ctd/ctd.sock
cat >"$SN_TMP/ctd/config.toml" <<EOF
version = 2
root = "$SN_TMP/ctd/root"
state = "$SN_TMP/ctd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
EOF
rt_daemon "$HOSTNS" containerd containerd --config "$SN_TMP/ctd/config.toml"
CTD=$RT_PID
# ctr in containerd's mount namespace: the shims must see the fifos it makes in /run/containerd/fifo
c() { nsenter -t "$CTD" -m ctr --address "$SOCK" --namespace "sn$$" "$@"; }
sn_wait_for 20 c version || sn_fail "containerd did not start: $(tail -20 "$SN_TMP/containerd.log")"
rt_rootfs "$SN_TMP/rootfs"
CT_CMD='trap "exit 0" TERM; httpd -p 8080 -h /www || exit 1; sleep 600 & wait'
# run ID ANNOTATION: a detached task through sandnet-runtime in the prepared netns
run() {
	c run -d --runc-binary "$SANDNET_RUNTIME_BIN" --with-ns "network:$NSP" --cgroup "/$CG/$1" \
		--annotation "$2" --env PATH=/bin --rootfs "$SN_TMP/rootfs" "$1" /bin/sh -c "$CT_CMD"
}
# gone ID: kill the task, remove it and the container
gone() {
	c task kill -s KILL "$1" >/dev/null 2>&1
	sn_wait_for 10 sh -c "! nsenter -t $CTD -m ctr --address '$SOCK' --namespace sn$$ task ls | grep -q '^$1 .*RUNNING'" ||
		sn_fail "task $1 does not stop"
	c task rm "$1" >/dev/null || sn_fail "ctr task rm $1"
	c container rm "$1" >/dev/null || sn_fail "ctr container rm $1"
}
sn_on_exit "c task kill -s KILL sn$$-a; c task rm -f sn$$-a; c container rm sn$$-a"
sn_on_exit "c task kill -s KILL sn$$-b; c task rm -f sn$$-b; c container rm sn$$-b"

sn_log "ctr run --runc-binary sandnet-runtime in the prepared netns"
run "sn$$-a" "sandnet.policy=ingress-deny=tcp:any:22" >"$SN_TMP/run-a.out" 2>&1 ||
	sn_fail "ctr run: $(cat "$SN_TMP/run-a.out"; tail -5 "$SN_TMP/containerd.log")"
sn_wait_for 10 sh -c "nsenter -t $CTD -m ctr --address '$SOCK' --namespace sn$$ task ls | grep -q '^sn$$-a .*RUNNING'" ||
	sn_fail "the task does not run: $(c task ls)"
STATE=$(ls "$SANDNET_STATE_DIR"/*.state 2>/dev/null) || sn_fail "nothing attached: $(tail -5 "$SN_TMP/containerd.log")"
grep -q "^owner oci:sn$$-a$" "$STATE" && grep -q "^netnspath $NSP$" "$STATE" || sn_fail "state: $(cat "$STATE")"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$STATE")
rt_alive "$DP_PID" || sn_fail "no datapath: $(cat "$STATE")"
[ -z "$(ip -n "$CT" -4 addr show dev eth0 | grep inet)" ] || sn_fail "eth0 keeps its address"
ip -n "$CT" -4 addr show dev sn-eth0 | grep -q "inet $CT_IP/" || sn_fail "sn-eth0: $(ip -n "$CT" addr)"
ip netns exec "$HOSTNS" ping -c 2 -i 0.2 -W 2 "$CT_IP" >/dev/null || sn_fail "ping the task through sandnet"
got=$(ip netns exec "$HOSTNS" curl -sS --max-time 10 "http://$CT_IP:8080/index.html") || sn_fail "httpd inside"
[ "$got" = "served from inside the container" ] || sn_fail "httpd answered '$got'"
"$DATAPATH" stats --all --dir "$SANDNET_STATE_DIR" --json | python3 -c '
import json, sys
a = json.load(sys.stdin)
assert [x["name"] for x in a] == [sys.argv[1]], a
assert [(r["action"], r["rule"]) for r in a[0]["policy"]["ingress"]["rules"]] == [("deny", "tcp:any:22")], a
print("ok:", a[0]["name"], "ingress", a[0]["policy"]["ingress"]["rules"])' "oci:sn$$-a" || sn_fail "the annotation's policy"

sn_log "the task removed: poststop gives everything back"
gone "sn$$-a"
sn_wait_for 10 sh -c "[ -z \"\$(ls '$SANDNET_STATE_DIR')\" ]" || sn_fail "state left: $(ls "$SANDNET_STATE_DIR")"
sn_wait_for 5 eval "! rt_alive $DP_PID" || sn_fail "datapath $DP_PID survives"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after"
ns_same "$SN_TMP/before" "$SN_TMP/after" "the netns after the task"
ip -n "$CT" -o link show | grep -q ": sn-" && sn_fail "the container face's TUN is left"
ip netns exec "$HOSTNS" ping -c 1 -W 2 "$CT_IP" >/dev/null || sn_fail "the kernel does not answer after poststop"

sn_log "io.sandnet.enable=false: the task runs, the netns untouched"
run "sn$$-b" "io.sandnet.enable=false" >"$SN_TMP/run-b.out" 2>&1 || sn_fail "ctr run: $(cat "$SN_TMP/run-b.out")"
sn_wait_for 10 sh -c "nsenter -t $CTD -m ctr --address '$SOCK' --namespace sn$$ task ls | grep -q '^sn$$-b .*RUNNING'" ||
	sn_fail "the task does not run"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "attached: $(ls "$SANDNET_STATE_DIR")"
ns_snapshot "$CT" "$SN_TMP/off"
ns_same "$SN_TMP/before" "$SN_TMP/off" "the netns with io.sandnet.enable=false"
got=$(ip netns exec "$HOSTNS" curl -sS --max-time 10 "http://$CT_IP:8080/index.html") || sn_fail "httpd (kernel)"
gone "sn$$-b"
echo "containerd: served through --runc-binary, given back on task removal; io.sandnet.enable=false untouched"
