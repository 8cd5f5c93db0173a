#!/usr/bin/env bash
# Podman 4.3 (Debian's, CNI backend, crun) serving containers through
# sandnet the three ways a Podman user would set it up:
#  1. a CNI network whose conflist chains "sandnet" after Debian's "bridge"
#     (dist/cni/sandnet-bridge.conflist with a unique name, bridge and subnet):
#     `podman run --network NAME` gets a detached datapath (state owner
#     cni:ID:eth0, datapath in the namespace podman runs in), the container's
#     eth0 loses its addresses to the TUN sn-eth0; busybox wget inside fetches
#     a file from the host side and the host side fetches a page from busybox
#     httpd inside; `podman stop` (CNI DEL) stops the datapath and removes the
#     state, the bridge port, the IP lease and the netns; `podman rm` leaves
#     nothing either;
#  2. the OCI hooks of dist/oci/hooks.d (path rewritten to the build's
#     netsetup; `podman --hooks-dir`), enabled per container by the
#     annotation io.sandnet.enable=true: `--network ns:PATH` (a namespace of
#     the test, veth to the host side) is served the same way (owner oci:ID)
#     and `podman rm -f` runs poststop, which gives back exactly the
#     addresses and routes the namespace had. io.sandnet.enable=false does not
#     inject the hook; `--network none` (only lo: "no usable link") and
#     `--network host` (netsetup's own namespace) make the hook, and so
#     `podman run`, fail and leave nothing;
#  3. `podman --runtime sandnet-runtime` (crun behind it: runtime.conf),
#     podman 5's route since it has no CNI (the runtime interface is the
#     same in 4.3): `--network ns:PATH` with no annotation and no hooks.d is
#     served (owner oci:ID), `podman stop` and `podman rm` give back exactly
#     what the namespace had.
# The datapath is not named in either configuration: netsetup finds it next
# to itself (the build folder holds both).
#
# Nothing of the machine is used or changed: podman, conmon, crun, the CNI
# plugins, the hooks and the datapaths all run in the test's "host" netns
# and in one private mount namespace a holder process keeps (`ip netns exec`
# + mounts there; every podman call joins it with nsenter), with tmpfs over
# /sys/fs/cgroup (crun refuses this machine's hybrid cgroup layout), /run
# (podman's netns files, crun's state, /run/sandnet bound to the test's
# state folder), /var/lib (libcni's result cache) and, by an overlay, /etc
# (/etc/sandnet/runtime.conf: crun behind sandnet-runtime). podman's storage, tmp
# dir, file locks and events are under $SN_TMP (CONTAINERS_CONF and
# CONTAINERS_STORAGE_CONF name only the test's files; no registry: `--rootfs`
# with busybox-static). The state folder is bound on /run/sandnet rather
# than passed as SANDNET_STATE_DIR because conmon starts podman's cleanup
# (where CNI DEL and poststop run) with a filtered environment.
# `podman run` needs --cgroups=disabled and --ulimit nofile/nproc within
# this machine's hard limits (the defaults fail: setrlimit RLIMIT_NOFILE:
# Operation not permitted). No sysctl is relied on: traffic only goes to
# addresses of the host netns itself (the bridge plugin's isGateway turns on
# ip_forward there, which nothing needs).
# Not tested because it does not work yet: the hook on a network podman
# makes itself (a CNI network without sandnet, slirp4netns) attaches and
# serves, but podman tears the network down (deletes eth0/tap0) before it
# runs poststop, which then fails ("link eth0: writing
# /proc/sys/net/ipv6/conf/eth0/disable_ipv6: No such file or directory")
# and keeps the state file.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

CNI_DIR=/usr/lib/cni
DIST=$SANDNET_TESTS/../dist
command -v podman >/dev/null || sn_skip "no podman (apt-get install podman)"
command -v crun >/dev/null || sn_skip "no crun (apt-get install crun)"
command -v conmon >/dev/null || sn_skip "no conmon (apt-get install conmon)"
[ -x "$CNI_DIR/bridge" ] && [ -x "$CNI_DIR/host-local" ] || sn_skip "no CNI bridge/host-local in $CNI_DIR"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"
sn_need_static_busybox

sn_netns_add host
sn_netns_add ct
HOSTNS=$(sn_ns host)
CT=$(sn_ns ct)
NET=sandnet-$$
BRIDGE=sn$$br
PFX=10.$((200 + $$ % 50)).$(( ($$ % 125) * 2 ))
SUBNET=$PFX.0/24			# the CNI network
GW=$PFX.1
PFX2=10.$((200 + $$ % 50)).$(( ($$ % 125) * 2 + 1 ))	# the ns:PATH namespace's veth
NOFILE=$(ulimit -Hn)
[ "$NOFILE" = unlimited ] && NOFILE=1048576
RUN_FLAGS=(--cgroups=disabled --ulimit "nofile=$NOFILE:$NOFILE" --ulimit nproc=4096:4096)
# Container pid 1: busybox httpd on :8080, then wait (TERM ends it at once).
CT_CMD='trap "exit 0" TERM; httpd -p 8080 -h /www || exit 1; sleep 600 & wait'

mkdir -p "$SN_TMP/rt-bin" "$SANDNET_STATE_DIR" "$SN_TMP/cni/net" "$SN_TMP/cni/bin" "$SN_TMP/ipam" "$SN_TMP/hooks" "$SN_TMP/www"
ln -s "$NETSETUP" "$SN_TMP/cni/bin/sandnet"
mkrootfs() {
	local c
	mkdir -p "$1/bin" "$1/www"
	cp "$BUSYBOX" "$1/bin/busybox"
	for c in sh sleep httpd wget timeout cat; do ln -s busybox "$1/bin/$c"; done
	echo "$2" >"$1/www/index.html"
}
head -c 3000000 /dev/urandom >"$SN_TMP/www/from-host"

cat >"$SN_TMP/containers.conf" <<EOF
[engine]
# 3.: sandnet-runtime by name, as a podman user would set it up
# (docs/runtime.md); podman knows what a runtime supports by its name:
# sandnet-runtime is crun here
runtime_supports_nocgroup = ["crun", "sandnet-runtime"]
runtime_supports_json = ["crun", "runc", "sandnet-runtime"]
cgroup_manager = "cgroupfs"
events_logger = "file"
lock_type = "file"
[network]
network_backend = "cni"
network_config_dir = "$SN_TMP/cni/net"
cni_plugin_dirs = ["$SN_TMP/cni/bin", "$CNI_DIR"]
[engine.runtimes]
sandnet-runtime = ["$SN_TMP/rt-bin/sandnet-runtime"]
EOF
cat >"$SN_TMP/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$SN_TMP/pod/root"
runroot = "$SN_TMP/pod/runroot"
EOF
# The example conflist with the test's names, subnet and IPAM folder; no
# masquerading (no iptables in the test's netns).
python3 - "$DIST/cni/sandnet-bridge.conflist" "$SN_TMP/cni/net/$NET.conflist" "$NET" "$BRIDGE" \
	"$SUBNET" "$GW" "$SN_TMP/ipam" <<'EOF' || sn_fail "dist/cni/sandnet-bridge.conflist"
import json, sys
src, dst, name, bridge, subnet, gw, ipam_dir = sys.argv[1:]
c = json.load(open(src))
assert [p["type"] for p in c["plugins"]] == ["bridge", "sandnet"], c
br = c["plugins"][0]
assert br["ipam"]["type"] == "host-local", br
c["name"] = name
br.update(bridge=bridge, ipMasq=False)
br["ipam"].update(dataDir=ipam_dir, ranges=[[{"subnet": subnet, "gateway": gw}]])
json.dump(c, open(dst, "w"), indent=1)
EOF
# The example hooks, pointing at the build's netsetup.
python3 - "$DIST/oci/hooks.d" "$SN_TMP/hooks" "$NETSETUP" <<'EOF' || sn_fail "dist/oci/hooks.d"
import json, os, sys
src, dst, netsetup = sys.argv[1:]
stages = {}
for f in sorted(os.listdir(src)):
    h = json.load(open(os.path.join(src, f)))
    assert h["version"] == "1.0.0" and h["hook"]["path"] == "/usr/local/sbin/netsetup", h
    assert h["when"] == {"annotations": {r"^io\.sandnet\.enable$": "^(true|1|yes|on)$"}}, h
    assert h["hook"]["args"][:2] == ["netsetup", "oci-hook"], h
    for s in h["stages"]:
        stages[s] = h["hook"]["args"][2:]
    h["hook"]["path"] = netsetup
    json.dump(h, open(os.path.join(dst, f), "w"), indent=1)
assert stages == {"createRuntime": ["create"], "poststop": ["poststop"]}, stages
EOF

# The holder: the mount namespace every podman call joins, in the host netns.
# Its /etc has /etc/sandnet/runtime.conf over the machine's (an overlay):
# sandnet-runtime's real runtime is crun, as podman's (3.). podman passes a
# runtime no environment of its own, so the file is the way.
touch "$SN_TMP/ct.netns"
mkdir -p "$SN_TMP/etc/up/sandnet" "$SN_TMP/etc/work"
echo "runtime = $(command -v crun)" >"$SN_TMP/etc/up/sandnet/runtime.conf"
ip netns exec "$HOSTNS" sh -c '
	mount --bind "$1" "$2" &&
	mount -t tmpfs sn-nocgroup /sys/fs/cgroup &&
	mount -t tmpfs sn-run /run && mkdir /run/sandnet /run/netns && mount --bind "$3" /run/sandnet &&
	mount -t tmpfs sn-varlib /var/lib &&
	mount -t overlay sn-etc -o "lowerdir=/etc,upperdir=$5/up,workdir=$5/work" /etc &&
	touch "$4" && exec sleep 3600' holder "$(ns_path ct)" "$SN_TMP/ct.netns" "$SANDNET_STATE_DIR" \
	"$SN_TMP/holder.ready" "$SN_TMP/etc" &
HOLDER=$!
sn_on_exit "kill $HOLDER"
sn_wait_for 10 test -e "$SN_TMP/holder.ready" || sn_fail "the holder's mounts failed"
in_holder() { nsenter -t "$HOLDER" -m -n "$@"; }
pod() {
	timeout -k 5 60 nsenter -t "$HOLDER" -m -n env -u SANDNET_STATE_DIR \
		CONTAINERS_CONF="$SN_TMP/containers.conf" CONTAINERS_STORAGE_CONF="$SN_TMP/storage.conf" \
		podman --root "$SN_TMP/pod/root" --runroot "$SN_TMP/pod/runroot" --tmpdir "$SN_TMP/pod/tmp" "$@"
}
sn_on_exit "pod rm -f -a -t 0"
# inspect NAME GO_TEMPLATE (in $(...): the caller exits on failure)
inspect() { pod inspect --format "$2" "$1" || sn_fail "podman inspect $1"; }
# datapaths: the live datapath supervisors (what the state records; each has
# its datapath as its child) in the host netns, where podman runs; any other
# datapath process is named too.
datapaths() { sn_datapaths "$HOSTNS"; }
alive() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]; }
# served CPID IP: the container's eth0 has no address, the TUN sn-eth0 has IP.
served() {
	nsenter --net="/proc/$1/ns/net" ip -j -d addr >"$SN_TMP/ct-addr.json" || sn_fail "ip addr in the container"
	python3 - "$SN_TMP/ct-addr.json" "$2" <<'EOF' || sn_fail "the container's links: $(nsenter --net="/proc/$1/ns/net" ip addr)"
import json, sys
links = {l["ifname"]: l for l in json.load(open(sys.argv[1]))}
assert links["eth0"].get("addr_info", []) == [], ("eth0 keeps addresses", links["eth0"])
tun = links["sn-eth0"]
assert tun["linkinfo"]["info_kind"] == "tun", tun
assert sys.argv[2] in [a["local"] for a in tun["addr_info"]], tun
print("eth0 has no address; sn-eth0 (tun) has", sys.argv[2])
EOF
}
# wget_and_httpd NAME ROOTFS IP GETFROM: busybox wget inside, busybox httpd for the host side.
wget_and_httpd() {
	local name=$1 rootfs=$2 ip=$3 from=$4 got
	pod exec "$name" timeout 20 wget -q -O /www/got "http://$from:8000/from-host" ||
		sn_fail "busybox wget inside $name"
	cmp "$rootfs/www/got" "$SN_TMP/www/from-host" || sn_fail "wget inside $name: the file differs"
	grep -q "^$ip .*GET /from-host" "$SN_TMP/host-http.log" || sn_fail "the host side did not see $ip"
	sn_wait_for 10 ip netns exec "$HOSTNS" curl -sf -o /dev/null --max-time 2 "http://$ip:8080/" ||
		sn_fail "busybox httpd in $name does not answer"
	got=$(ip netns exec "$HOSTNS" curl -sS --max-time 10 "http://$ip:8080/index.html") || sn_fail "curl $ip:8080"
	[ "$got" = "served from $name" ] || sn_fail "httpd in $name answered '$got'"
	echo "wget from inside $name and busybox httpd inside $name both work"
}
# state_of OWNER: the one state file, with OWNER (in $(...): the caller exits on failure).
state_of() {
	local f
	f=$(ls "$SANDNET_STATE_DIR"/*.state 2>/dev/null)
	[ "$(echo "$f" | wc -w)" = 1 ] || sn_fail "expected one state file: $(ls "$SANDNET_STATE_DIR")"
	grep -q "^owner $1$" "$f" || sn_fail "state owner is not $1: $(cat "$f")"
	echo "$f"
}
# nothing_left WHAT: no state file, no datapath.
nothing_left() {
	[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "$1 left: $(ls "$SANDNET_STATE_DIR")"
	sn_wait_for 5 sh -c "[ -z \"\$(ip netns pids '$HOSTNS' | xargs -r -I{} cat /proc/{}/comm 2>/dev/null | grep -xE 'datapath|sn-supervise')\" ]" ||
		sn_fail "$1 left a datapath: $(datapaths)"
}

pod network exists "$NET" || sn_fail "podman does not see the network $NET: $(pod network ls 2>&1)"
(cd "$SN_TMP/www" && exec ip netns exec "$HOSTNS" python3 -m http.server --bind 0.0.0.0 8000) >"$SN_TMP/host-http.log" 2>&1 &
sn_on_exit "kill $!"
sn_wait_for 10 ip netns exec "$HOSTNS" curl -sf -o /dev/null http://127.0.0.1:8000/ || sn_fail "the host side's http.server"

sn_log "1. podman run --network $NET (bridge, then sandnet): served through the CNI plugin"
C1=sn$$-cni
mkrootfs "$SN_TMP/rootfs-cni" "served from $C1"
pod run -d --name "$C1" --network "$NET" "${RUN_FLAGS[@]}" --rootfs "$SN_TMP/rootfs-cni" sh -c "$CT_CMD" \
	>"$SN_TMP/run1.out" 2>&1 || sn_fail "podman run --network $NET: $(cat "$SN_TMP/run1.out")"
ID1=$(inspect "$C1" '{{.Id}}') || exit 1
CPID=$(inspect "$C1" '{{.State.Pid}}') || exit 1
NSPATH=$(inspect "$C1" '{{.NetworkSettings.SandboxKey}}') || exit 1
CT_IP=$(inspect "$C1" "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}") || exit 1
[ -n "$CT_IP" ] && [ "$(inspect "$C1" "{{(index .NetworkSettings.Networks \"$NET\").Gateway}}")" = "$GW" ] ||
	sn_fail "podman inspect: no address on $NET"
echo "container $C1 ($ID1), pid $CPID, $CT_IP in $NSPATH"
STATE=$(state_of "cni:$ID1:eth0") || exit 1
in_holder test -e "/run/sandnet/$(basename "$STATE")" || sn_fail "the state is not in the runtime's /run/sandnet"
grep -q "^netnspath $NSPATH$" "$STATE" || sn_fail "state netns path: $(cat "$STATE")"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$STATE")
[ -n "$DP_PID" ] && alive "$DP_PID" || sn_fail "no datapath running: $(cat "$STATE")"
[ "$(readlink "/proc/$DP_PID/exe")" = "$(readlink -f "$DATAPATH")" ] || sn_fail "pid $DP_PID is not $DATAPATH"
[ "$(readlink "/proc/$DP_PID/ns/net")" = "$(ip netns exec "$HOSTNS" readlink /proc/self/ns/net)" ] ||
	sn_fail "the datapath does not run in the host netns"
[ "$(datapaths)" = "$DP_PID" ] || sn_fail "datapaths in the host netns: $(datapaths)"
CT_INO=$(stat -L -c %i "/proc/$CPID/ns/net")
[ "$(in_holder stat -L -c %i "$NSPATH")" = "$CT_INO" ] && grep -q "^netns [0-9]* $CT_INO$" "$STATE" ||
	sn_fail "the state does not name the container's netns (inode $CT_INO): $(cat "$STATE")"
served "$CPID" "$CT_IP"
wget_and_httpd "$C1" "$SN_TMP/rootfs-cni" "$CT_IP" "$GW"
sn_log "datapath stats --all: the container by its owner, with its totals"
"$DATAPATH" stats --all --dir "$SANDNET_STATE_DIR" >"$SN_TMP/all.txt" || sn_fail "stats --all: $(cat "$SN_TMP/all.txt")"
cat "$SN_TMP/all.txt"
"$DATAPATH" stats --all --dir "$SANDNET_STATE_DIR" --json | python3 -c '
import json, sys
a = json.load(sys.stdin)
assert [x["name"] for x in a] == [sys.argv[1]], a
t = a[0]["totals"]
# the 3 MB wget went out as the container face: bytes to the container, a connection out and in
assert t["container_rx_bytes"] > 3000000 and t["tcp_outbound"] >= 1 and t["tcp_inbound"] >= 1, t
print("ok:", a[0]["name"], t)
' "cni:$ID1:eth0" || sn_fail "stats --all does not show $C1"
grep -q "^name: cni:$ID1:eth0" "$SN_TMP/all.txt" || sn_fail "stats --all (text) lacks the container's name"

sn_log "podman stop: CNI DEL stops the datapath and gives everything back"
pod stop -t 10 "$C1" >/dev/null || sn_fail "podman stop $C1"
sn_wait_for 10 sh -c "[ -z \"\$(ls '$SANDNET_STATE_DIR')\" ]" || sn_fail "podman stop left the state: $(ls "$SANDNET_STATE_DIR")"
sn_wait_for 5 eval "! alive $DP_PID" || sn_fail "datapath $DP_PID survives podman stop"
nothing_left "podman stop"
[ -z "$(ip -n "$HOSTNS" link show master "$BRIDGE")" ] || sn_fail "a bridge port is left: $(ip -n "$HOSTNS" link show master "$BRIDGE")"
[ ! -e "$SN_TMP/ipam/$NET/$CT_IP" ] || sn_fail "the IP lease of $CT_IP is left"
in_holder test ! -e "$NSPATH" || sn_fail "podman left $NSPATH"
pod rm "$C1" >/dev/null || sn_fail "podman rm $C1"
nothing_left "podman rm"
[ -z "$(pod ps -aq)" ] || sn_fail "containers left: $(pod ps -a)"
echo "CNI chain bridge -> sandnet under podman: served, given back"

sn_log "2. podman --hooks-dir, annotation io.sandnet.enable=true, --network ns:PATH"
sn_veth_add ct eth0 host veth-ct
ip -n "$HOSTNS" addr add "$PFX2.1/24" dev veth-ct
ip -n "$CT" addr add "$PFX2.2/24" dev eth0
ip -n "$CT" route add default via "$PFX2.1"
sn_wait_for 10 sh -c "ip -n '$CT' -6 addr show dev eth0 scope link | grep -q inet6" || sn_fail "no IPv6 link-local on eth0"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/ct-before"
C2=sn$$-hook
mkrootfs "$SN_TMP/rootfs-hook" "served from $C2"
HOOK_RUN=(--hooks-dir "$SN_TMP/hooks" run -d "${RUN_FLAGS[@]}")

sn_log "io.sandnet.enable=false: the hook is not injected"
pod "${HOOK_RUN[@]}" --name "$C2-off" --annotation io.sandnet.enable=false --network "ns:$SN_TMP/ct.netns" \
	--rootfs "$SN_TMP/rootfs-hook" sh -c "$CT_CMD" >/dev/null || sn_fail "podman run with io.sandnet.enable=false"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "io.sandnet.enable=false attached: $(ls "$SANDNET_STATE_DIR")"
ns_snapshot "$CT" "$SN_TMP/ct-off"
ns_same "$SN_TMP/ct-before" "$SN_TMP/ct-off" "namespace with io.sandnet.enable=false"
pod rm -f -t 0 "$C2-off" >/dev/null || sn_fail "podman rm $C2-off"

sn_log "io.sandnet.enable=true: served through the hooks"
pod "${HOOK_RUN[@]}" --name "$C2" --annotation io.sandnet.enable=true --network "ns:$SN_TMP/ct.netns" \
	--rootfs "$SN_TMP/rootfs-hook" sh -c "$CT_CMD" >"$SN_TMP/run2.out" 2>&1 ||
	sn_fail "podman run with the hooks: $(cat "$SN_TMP/run2.out")"
ID2=$(inspect "$C2" '{{.Id}}') || exit 1
CPID=$(inspect "$C2" '{{.State.Pid}}') || exit 1
[ "$(readlink "/proc/$CPID/ns/net")" = "$(ip netns exec "$CT" readlink /proc/self/ns/net)" ] ||
	sn_fail "the container does not run in $CT"
STATE=$(state_of "oci:$ID2") || exit 1
grep -q "^netnspath $SN_TMP/ct.netns$" "$STATE" || sn_fail "state netns path: $(cat "$STATE")"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$STATE")
[ -n "$DP_PID" ] && alive "$DP_PID" || sn_fail "no datapath running: $(cat "$STATE")"
[ "$(readlink "/proc/$DP_PID/exe")" = "$(readlink -f "$DATAPATH")" ] || sn_fail "pid $DP_PID is not $DATAPATH"
[ "$(datapaths)" = "$DP_PID" ] || sn_fail "datapaths in the host netns: $(datapaths)"
served "$CPID" "$PFX2.2"
wget_and_httpd "$C2" "$SN_TMP/rootfs-hook" "$PFX2.2" "$PFX2.1"

sn_log "podman rm -f runs poststop: datapath stopped, addresses back"
pod rm -f -t 0 "$C2" >/dev/null || sn_fail "podman rm -f $C2"
sn_wait_for 10 sh -c "[ -z \"\$(ls '$SANDNET_STATE_DIR')\" ]" || sn_fail "poststop left the state: $(ls "$SANDNET_STATE_DIR")"
sn_wait_for 5 eval "! alive $DP_PID" || sn_fail "datapath $DP_PID survives poststop"
nothing_left "podman rm -f (poststop)"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/ct-after"
ns_same "$SN_TMP/ct-before" "$SN_TMP/ct-after" "namespace after podman run + rm -f"
ip -n "$CT" -o link show | grep -q ": sn-" && sn_fail "the container face's TUN is left"
ip netns exec "$CT" nft list tables 2>/dev/null | grep -q sandnet_ && sn_fail "the nftables table is left"
ip netns exec "$HOSTNS" ping -c 1 -W 2 "$PFX2.2" >/dev/null || sn_fail "the kernel does not answer after poststop"

sn_log "modes the hook refuses: --network none (only lo), --network host (netsetup's own netns)"
ns_snapshot "$HOSTNS" "$SN_TMP/host-before"
for mode in none host; do
	# (not ns_expect_fail: podman's "OCI runtime error" looks like a sanitizer's)
	out=$(pod "${HOOK_RUN[@]}" --name "$C2-$mode" --annotation io.sandnet.enable=true --network "$mode" \
		--rootfs "$SN_TMP/rootfs-hook" sh -c "$CT_CMD" 2>&1) && sn_fail "--network $mode: the hook did not refuse: $out"
	echo "$out" | grep -q "error executing hook .*netsetup" || sn_fail "--network $mode: not the hook's failure: $out"
	echo "ok: --network $mode refused: $out"
	nothing_left "the refused hook (--network $mode)"
	pod rm -f -t 0 "$C2-$mode" >/dev/null 2>&1
done
ns_snapshot "$HOSTNS" "$SN_TMP/host-after"
ns_same "$SN_TMP/host-before" "$SN_TMP/host-after" "the host netns after the refused hooks"
[ -z "$(pod ps -aq)" ] || sn_fail "containers left: $(pod ps -a)"
echo "podman + OCI hooks: ns:PATH served and given back; none and host refused"

sn_log "3. podman --runtime sandnet-runtime (podman 5's route: it has no CNI), --network ns:PATH, no annotation"
ln -s "$NETSETUP" "$SN_TMP/rt-bin/sandnet-runtime"	# as make install and the package link it
C3=sn$$-rt
mkrootfs "$SN_TMP/rootfs-rt" "served from $C3"
pod --runtime sandnet-runtime run -d "${RUN_FLAGS[@]}" --name "$C3" \
	--network "ns:$SN_TMP/ct.netns" --rootfs "$SN_TMP/rootfs-rt" sh -c "$CT_CMD" >"$SN_TMP/run3.out" 2>&1 ||
	sn_fail "podman --runtime sandnet-runtime run: $(cat "$SN_TMP/run3.out")"
[ "$(inspect "$C3" '{{.OCIRuntime}}')" = sandnet-runtime ] ||
	sn_fail "podman records another runtime: $(inspect "$C3" '{{.OCIRuntime}}')"
ID3=$(inspect "$C3" '{{.Id}}') || exit 1
CPID=$(inspect "$C3" '{{.State.Pid}}') || exit 1
STATE=$(state_of "oci:$ID3") || exit 1
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$STATE")
[ -n "$DP_PID" ] && alive "$DP_PID" || sn_fail "no datapath running: $(cat "$STATE")"
[ "$(datapaths)" = "$DP_PID" ] || sn_fail "datapaths in the host netns: $(datapaths)"
served "$CPID" "$PFX2.2"
wget_and_httpd "$C3" "$SN_TMP/rootfs-rt" "$PFX2.2" "$PFX2.1"
sn_log "podman stop and rm: the poststop sandnet-runtime added gives everything back"
pod stop -t 10 "$C3" >/dev/null || sn_fail "podman stop $C3"
pod rm "$C3" >/dev/null || sn_fail "podman rm $C3"
sn_wait_for 10 sh -c "[ -z \"\$(ls '$SANDNET_STATE_DIR')\" ]" || sn_fail "poststop left the state: $(ls "$SANDNET_STATE_DIR")"
nothing_left "podman rm (sandnet-runtime's poststop)"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/ct-after-rt"
ns_same "$SN_TMP/ct-before" "$SN_TMP/ct-after-rt" "namespace after podman --runtime sandnet-runtime run + rm"
[ -z "$(pod ps -aq)" ] || sn_fail "containers left: $(pod ps -a)"
echo "podman --runtime sandnet-runtime: served without CNI or hooks.d, given back"
