#!/usr/bin/env bash
# `netsetup oci-hook` as an OCI runtime runs it. Debian's CNI ptp plugin
# builds the container's netns (its "host" side in a namespace of ours);
# Debian's crun runs a busybox-static rootfs whose config.json joins that
# netns by path and declares the hooks: createRuntime `netsetup oci-hook
# create --datapath DATAPATH` and poststop `netsetup oci-hook poststop`, with
# the annotations sandnet.publish=udp:5000=127.0.0.1:6000, sandnet.tcp-cc=bbr
# and sandnet.tcp-ecn=eth0=on (`datapath ss` shows them on a connection of
# the container's to the peer). crun, the hooks and
# the datapath run in the ptp "host" namespace (ip netns exec gives crun a
# private mount namespace; a tmpfs over /sys/fs/cgroup there makes crun see
# no cgroup hierarchy, since it refuses this machine's hybrid one). The peer
# (the host side) pings the container through sandnet and reaches the
# published UDP port (echoed by a backend on 127.0.0.1:6000); the
# container's own programs use the container face: busybox wget fetches a
# file from the peer, and busybox httpd answers the peer; crun delete
# runs poststop, which stops the datapath and gives back what ptp made.
# Before crun, the hook is fed state JSON directly: malformed input refused,
# poststop with nothing attached is a no-op; create by pid (no bundle, so no
# namespace path is recorded) and poststop, which must still give back. The
# last create's sandnet.policy annotation has name rules (tcp:pypi.org:443,
# *.github.com) among address rules: the datapath has them in order, refuses
# egress by default and keeps name bindings.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

. "$SANDNET_TESTS/lib/ptp.sh"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"
command -v crun >/dev/null || sn_skip "no crun (apt-get install crun)"
sn_need_static_busybox

ptp_up oci $((200 + $$ % 50))
ns_snapshot "$CT" "$SN_TMP/before"

# ct_process: a process in the container's netns, as a runtime's container is (CPID)
ct_process() {
	ip netns exec "$CT" sleep 60 >/dev/null 2>&1 &
	CPID=$!
	sn_on_exit "kill $CPID"
	sn_wait_for 5 sh -c "[ \"\$(readlink /proc/$CPID/ns/net)\" = \"\$(ip netns exec '$CT' readlink /proc/self/ns/net)\" ]" ||
		sn_fail "the container process did not enter $CT"
}

sn_log "the hook refuses malformed state"
hook() { ip netns exec "$HOSTNS" "$NETSETUP" oci-hook "$@"; }
ns_expect_fail "state not JSON" "OCI state on stdin: line [0-9]+ column" -- hook create --datapath "$DATAPATH" <<<'{"id": '
ns_expect_fail "state without id" '"id" missing' -- hook create <<<'{"pid": 5, "status": "creating"}'
ns_expect_fail "state without pid or netns path" '"pid" missing' -- hook create <<<'{"id": "x", "status": "creating"}'
ns_expect_fail "unknown status" 'status "running"' -- hook <<<'{"id": "x", "status": "running", "pid": 5}'
ns_expect_fail "unknown option" "unknown option" -- hook --frob <<<'{}'
ns_expect_fail "a malformed policy annotation" \
	"annotation sandnet.policy: 'egress-block=10.0.0.0/8': expected egress-allow=RULE, egress-deny=RULE" -- \
	hook create <<<'{"id": "x", "status": "creating", "pid": 5, "annotations": {"sandnet.policy": "egress-block=10.0.0.0/8"}}'
ns_expect_fail "a congestion control sandnet does not have" \
	"annotation sandnet.tcp-cc 'vegas': expected cubic, reno or bbr" -- \
	hook create <<<'{"id": "x", "status": "creating", "pid": 5, "annotations": {"sandnet.tcp-cc": "vegas"}}'
ns_expect_fail "a malformed ECN annotation" "annotation sandnet.tcp-ecn 'eth0=yes': expected off, accept or on" -- \
	hook create <<<'{"id": "x", "status": "creating", "pid": 5, "annotations": {"sandnet.tcp-ecn": "eth0=yes"}}'
hook poststop <<<'{"id": "never-attached", "status": "stopped"}' || sn_fail "poststop with nothing attached"
ns_snapshot "$CT" "$SN_TMP/after-errors"
ns_same "$SN_TMP/before" "$SN_TMP/after-errors" "namespace after refused hooks"

sn_log "the hook fed state JSON directly: attach by pid, poststop gives back"
# No bundle: the namespace is the pid's; the hook keeps it by a bind mount
# next to the state file, which `ip netns exec` (a mount namespace per
# command) loses, so poststop reaches it through the datapath's sockets
# (pidfd_getfd + SIOCGSKNS).
ct_process
ns_expect_fail "a datapath that does not exist" \
	"cannot execute /nonexistent/datapath: No such file or directory; give the hook --datapath PATH" -- \
	hook create --datapath /nonexistent/datapath <<<"{\"id\": \"direct-$$\", \"status\": \"creating\", \"pid\": $CPID}"
ns_expect_fail "no datapath next to netsetup nor in PATH" \
	"cannot execute no-such-datapath: not found next to netsetup .* nor in PATH \\(/usr/sbin:/usr/bin:/sbin:/bin\\); give the hook --datapath PATH" -- \
	env PATH=/usr/sbin:/usr/bin:/sbin:/bin "$NETSETUP" oci-hook create --datapath no-such-datapath \
	<<<"{\"id\": \"direct-$$\", \"status\": \"creating\", \"pid\": $CPID}"
[ -z "$(ls "$SANDNET_STATE_DIR" 2>/dev/null)" ] || sn_fail "a refused hook left: $(ls "$SANDNET_STATE_DIR")"
hook create --datapath "$DATAPATH" <<<"{\"ociVersion\": \"1.0.2\", \"id\": \"direct-$$\", \"status\": \"creating\", \"pid\": $CPID}" ||
	sn_fail "hook create by pid"
STATE=$(ls "$SANDNET_STATE_DIR"/*.state) || sn_fail "no state after hook create"
# no path of the namespace but the bind mount the hook made next to the state
# (gone with this hook's private mount namespace: poststop, in another,
# reaches the namespace through the datapath's sockets)
grep -q "^owner oci:direct-$$$" "$STATE" && grep -q "^netnspath ${STATE%.state}.netns$" "$STATE" ||
	sn_fail "state: $(cat "$STATE")"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$STATE")
[ -z "$(ip -n "$CT" -4 addr show dev eth0 | grep inet)" ] || sn_fail "the kernel still has the address"
ip netns exec "$HOSTNS" ping -c 2 -i 0.2 -W 2 "$CT_IP" || sn_fail "ping through sandnet (hook by pid)"
hook <<<"{\"id\": \"direct-$$\", \"status\": \"stopped\"}" || sn_fail "hook poststop"
sn_wait_for 5 sh -c "[ ! -e /proc/$DP_PID ] || grep -q ') Z' /proc/$DP_PID/stat" || sn_fail "datapath survives poststop"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "poststop left: $(ls "$SANDNET_STATE_DIR")"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-direct"
ns_same "$SN_TMP/before" "$SN_TMP/after-direct" "namespace after hook create (pid) + poststop"
kill "$CPID"

sn_log "a busybox container under crun, hooks in config.json"
B=$SN_TMP/bundle
mkdir -p "$B/rootfs/bin" "$SN_TMP/crun"
cp "$BUSYBOX" "$B/rootfs/bin/busybox"
for c in sh sleep httpd wget timeout cat; do ln -s busybox "$B/rootfs/bin/$c"; done
mkdir -p "$B/rootfs/www"
echo "served from inside the container" >"$B/rootfs/www/index.html"
head -c 3000000 /dev/urandom >"$SN_TMP/from-peer"
GW=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ips"][0]["gateway"])' "$SN_TMP/ptp-result.json")
(cd "$SN_TMP" && exec ip netns exec "$HOSTNS" python3 -m http.server --bind "$GW" 8000) >"$SN_TMP/peer-http.log" 2>&1 &
sn_on_exit "kill $!"
sn_wait_for 10 ip netns exec "$HOSTNS" curl -sf -o /dev/null "http://$GW:8000/" || sn_fail "the peer's http.server"
# busybox-static's wget -T crashes: its own timeout bounds it instead
CT_CMD="httpd -p 8080 -h /www && timeout 20 wget -q -O /www/got http://$GW:8000/from-peer; sleep 60"
(cd "$B" && crun spec) || sn_fail "crun spec"
python3 - "$B/config.json" "$NETSETUP" "$NSP" "$SANDNET_STATE_DIR" "$CT_CMD" <<'EOF'
import json, sys
path, netsetup, nsp, statedir, cmd = sys.argv[1:]
c = json.load(open(path))
c["process"]["terminal"] = False
c["process"]["args"] = ["sh", "-c", cmd]
c["root"]["readonly"] = False		# wget writes what it fetched
c["linux"].pop("resources", None)
c["linux"]["namespaces"] = [{"type": t} for t in ("pid", "ipc", "uts", "mount")] + \
    [{"type": "network", "path": nsp}]
env = ["SANDNET_STATE_DIR=" + statedir, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"]
c["hooks"] = {
    # No --datapath, and a runtime's PATH: the hook finds the datapath next to netsetup.
    "createRuntime": [{"path": netsetup, "args": ["netsetup", "oci-hook", "create"],
                       "env": env, "timeout": 30}],
    "poststop": [{"path": netsetup, "args": ["netsetup", "oci-hook", "poststop"], "env": env, "timeout": 30}],
}
c["annotations"] = {"sandnet.publish": "udp:5000=127.0.0.1:6000", "sandnet.tcp-cc": "bbr",
                    "sandnet.tcp-ecn": "eth0=on"}
json.dump(c, open(path, "w"), indent=1)
EOF
crun_() {
	ip netns exec "$HOSTNS" sh -c 'mount -t tmpfs sandnet-nocgroup /sys/fs/cgroup && exec "$@"' crun \
		crun --cgroup-manager=disabled --root "$SN_TMP/crun" "$@"
}
sn_on_exit "crun_ delete -f $CID"
# The UDP backend the published port goes to, in the datapath's netns.
sn_udp_echo "$HOSTNS" 127.0.0.1 6000 'd[::-1]'
if ! crun_ run --detach --bundle "$B" "$CID" >"$SN_TMP/crun.out" 2>&1; then
	cat "$SN_TMP/crun.out"
	sn_fail "crun run failed (above)"
fi
cat "$SN_TMP/crun.out"
crun_ state "$CID" | tee "$SN_TMP/crun-state.json"
STATE=$(ls "$SANDNET_STATE_DIR"/*.state 2>/dev/null) || sn_fail "createRuntime hook attached nothing"
grep -q "^owner oci:$CID$" "$STATE" || sn_fail "state owner: $(cat "$STATE")"
grep -q "^netnspath $NSP$" "$STATE" || sn_fail "state netns path: $(cat "$STATE")"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$STATE")
[ -n "$DP_PID" ] && [ -e "/proc/$DP_PID" ] || sn_fail "no datapath running: $(cat "$STATE")"
[ -z "$(ip -n "$CT" -4 addr show dev eth0 | grep inet)" ] || sn_fail "the kernel still has the address"
CPID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$SN_TMP/crun-state.json")
[ "$(readlink "/proc/$CPID/ns/net")" = "$(ip netns exec "$CT" readlink /proc/self/ns/net)" ] ||
	sn_fail "the container does not run in the ptp namespace"

sn_log "the peer reaches the container through sandnet"
ip netns exec "$HOSTNS" ping -c 3 -i 0.2 -W 2 "$CT_IP" || sn_fail "ping $CT_IP through sandnet"
ip netns exec "$HOSTNS" python3 - "$CT_IP" <<'EOF' || sn_fail "published UDP port 5000 (annotation)"
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
for i in range(3):
    s.sendto(b"sandnet-oci", (sys.argv[1], 5000))
    try:
        d, a = s.recvfrom(100)
        break
    except socket.timeout:
        continue
else:
    sys.exit("no answer from the published port")
assert d == b"sandnet-oci"[::-1] and a == (sys.argv[1], 5000), (d, a)
print("published udp:5000 answered", d, "from", a)
EOF

sn_log "the annotations sandnet.tcp-cc and sandnet.tcp-ecn: the network side's connection runs BBR with ECN"
ns_tcp_conn_check "$STATE.ctl" "$CT" "$HOSTNS" "$GW" 7411 bbr true

sn_log "the container's own programs: wget to the peer, httpd for the peer (the container face)"
sn_wait_for 25 cmp -s "$B/rootfs/www/got" "$SN_TMP/from-peer" ||
	sn_fail "busybox wget inside the container did not fetch the peer's file intact"
grep -q "^$CT_IP .*GET /from-peer" "$SN_TMP/peer-http.log" || sn_fail "the peer did not see the container's address"
got=$(ip netns exec "$HOSTNS" curl -sS --max-time 10 "http://$CT_IP:8080/index.html") ||
	sn_fail "the peer cannot reach busybox httpd in the container"
[ "$got" = "served from inside the container" ] || sn_fail "httpd answered '$got'"
echo "wget from inside and httpd inside both work"

sn_log "crun delete runs poststop: datapath stopped, addresses back"
crun_ kill "$CID" KILL || sn_fail "crun kill"
sn_wait_for 10 sh -c "crun --root '$SN_TMP/crun' state '$CID' | grep -q '\"stopped\"'" || sn_fail "container does not stop"
crun_ delete "$CID" || sn_fail "crun delete"
sn_wait_for 5 sh -c "[ ! -e /proc/$DP_PID ] || grep -q ') Z' /proc/$DP_PID/stat" || sn_fail "datapath $DP_PID survives poststop"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "poststop left: $(ls "$SANDNET_STATE_DIR")"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after"
ns_same "$SN_TMP/before" "$SN_TMP/after" "namespace after crun run + delete"
ip -n "$CT" -o link show | grep -q ": sn-" && sn_fail "the container face's TUN is left"
ip netns exec "$CT" nft list tables | grep -q sandnet_ && sn_fail "the nftables table is left"
ip netns exec "$HOSTNS" ping -c 1 -W 2 "$CT_IP" || sn_fail "the kernel does not answer after poststop"
sn_log "the runtime removed the link before poststop (podman does): poststop still gives back the rest"
ct_process
ip netns exec "$HOSTNS" env SANDNET_STATE_DIR="$SANDNET_STATE_DIR" "$NETSETUP" oci-hook create \
	<<<"{\"id\": \"gone-$$\", \"status\": \"creating\", \"pid\": $CPID, \"annotations\": {\"sandnet.policy\": \"egress-deny=10.0.0.0/8,egress-allow=tcp:pypi.org:443,egress-allow=*.github.com,ingress-deny=tcp:any:22\"}}" ||
	sn_fail "hook create (policy annotation)"
STATE=$(ls "$SANDNET_STATE_DIR"/*.state) || sn_fail "no state after hook create"
[ -S "$STATE.ctl" ] || sn_fail "no control socket $STATE.ctl"
"$DATAPATH" stats --all --dir "$SANDNET_STATE_DIR" --json | python3 -c '
import json, sys
a = json.load(sys.stdin)
assert len(a) == 1 and a[0]["name"] == sys.argv[1], a
eg = a[0]["policy"]["egress"]
rules = [(r["action"], r["rule"]) for r in eg["rules"]]
assert rules[:3] == [("deny", "10.0.0.0/8"), ("allow", "tcp:pypi.org:443"), ("allow", "*.github.com")], rules
assert rules[-1] == ("deny", "fd00:ec2::254"), rules
# the name rules: egress refused to what no rule allows, the DNS read (bindings kept)
assert eg["no_match"] == "deny" and "name_bindings" in eg, eg
assert [(r["action"], r["rule"]) for r in a[0]["policy"]["ingress"]["rules"]] == [("deny", "tcp:any:22")]
print("ok: stats --all:", a[0]["name"], rules, "no_match", eg["no_match"])
' "oci:gone-$$" || sn_fail "the annotation's policy is not the datapath's"
ns_expect_fail "stats with --all and --control" "give either --control SOCKET or --all" -- \
	"$DATAPATH" stats --all --control "$STATE.ctl"
# no state folder is nothing served (netsetup_cli.sh too); a file where the
# folder should be cannot be read
ns_expect_fail -s 1 "stats --all of a file, not a folder" "--all: $STATE: Not a directory" -- \
	"$DATAPATH" stats --all --dir "$STATE"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$STATE")
ip -n "$CT" link del eth0 || sn_fail "deleting eth0"
hook <<<"{\"id\": \"gone-$$\", \"status\": \"stopped\"}" 2>"$SN_TMP/gone.err" ||
	sn_fail "poststop after the link went: $(cat "$SN_TMP/gone.err")"
grep -q "link eth0 (index [0-9]*) is gone" "$SN_TMP/gone.err" || sn_fail "poststop did not say eth0 is gone: $(cat "$SN_TMP/gone.err")"
sn_wait_for 5 sh -c "[ ! -e /proc/$DP_PID ] || grep -q ') Z' /proc/$DP_PID/stat" || sn_fail "datapath survives poststop"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "poststop left: $(ls "$SANDNET_STATE_DIR")"
ip -n "$CT" -o link show | grep -q ": sn-" && sn_fail "the container face's TUN is left"
ip netns exec "$CT" nft list tables | grep -q sandnet_ && sn_fail "the nftables table is left"
kill "$CPID"
echo "crun + oci-hook: attached, pinged, published, given back; poststop after the link went"
