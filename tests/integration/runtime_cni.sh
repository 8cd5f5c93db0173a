#!/usr/bin/env bash
# netsetup as a chained CNI plugin, called exactly as a runtime calls a chain:
# Debian's ptp plugin (host-local IPAM, private dataDir, test-only subnet,
# its "host" side in a namespace of ours) makes eth0, then "sandnet" (a
# symlink to netsetup in our own CNI_PATH, found by the configuration's
# "type") gets the same configuration with ptp's result as prevResult.
# ADD: the result is prevResult, a datapath runs detached and answers ping
# for the container's address and the UDP port the configuration publishes; CHECK passes; DEL stops it and gives back
# exactly what ptp made; DEL again is a no-op; a datapath killed with
# SIGKILL makes CHECK fail (code 102) and DEL still restores; `netsetup
# detach` stops the datapath ADD started and gives back, DEL then no-op. Malformed JSON
# and missing fields give CNI error JSON on stdout with the spec's codes.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

CNI_DIR=/usr/lib/cni
[ -x "$CNI_DIR/ptp" ] && [ -x "$CNI_DIR/host-local" ] || sn_skip "no CNI ptp/host-local in $CNI_DIR"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"

sn_netns_add host
sn_netns_add ct
HOSTNS=$(sn_ns host)
CT=$(sn_ns ct)
NSP=$(ns_path ct)
CID=sandnet-rt-$$
SUBNET=10.$((200 + $$ % 50)).$(($$ % 250)).0/24
mkdir -p "$SN_TMP/ipam" "$SN_TMP/bin"
ln -s "$CNI_DIR/ptp" "$SN_TMP/bin/ptp"
ln -s "$CNI_DIR/host-local" "$SN_TMP/bin/host-local"
ln -s "$NETSETUP" "$SN_TMP/bin/sandnet"
cat >"$SN_TMP/ptp.json" <<EOF
{
  "cniVersion": "1.0.0",
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
# cni PLUGIN COMMAND CONFIG [VAR=VALUE...]: one plugin call as a runtime makes it.
cni() {
	local plugin=$1 cmd=$2 conf=$3; shift 3
	ip netns exec "$HOSTNS" env CNI_COMMAND="$cmd" CNI_CONTAINERID="$CID" CNI_NETNS="$NSP" \
		CNI_IFNAME=eth0 CNI_PATH="$SN_TMP/bin" "$@" "$SN_TMP/bin/$plugin" <"$conf"
}
# sandnet_conf PREVRESULT_FILE OUT: our configuration, the chain's, with prevResult.
sandnet_conf() {
	python3 - "$1" "$2" "$DATAPATH" <<'EOF'
import json, sys
prev = json.load(open(sys.argv[1])) if sys.argv[1] != "-" else None
conf = {"cniVersion": "1.0.0", "name": "sandnet-test", "type": "sandnet",
        "datapath": sys.argv[3], "gso": "auto", "channels": 1,
        "publish": ["udp:5000=127.0.0.1:6000"],
        "policy": ["egress-deny=10.96.0.0/12", "ingress-deny=tcp:any:22"]}
if prev is not None:
    conf["prevResult"] = prev
json.dump(conf, open(sys.argv[2], "w"))
EOF
}
# alive PID: runs and is no zombie (an orphan is reaped by whoever adopted it, maybe late).
alive() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]; }
# expect_cni_error WHAT CODE WORDS -- CMD...: CMD exits non-zero with a CNI error object.
expect_cni_error() {
	local what=$1 code=$2 words=$3 rc; shift 4
	"$@" >"$SN_TMP/err.json" 2>"$SN_TMP/err.txt"; rc=$?
	[ "$rc" -ne 0 ] || sn_fail "$what: succeeded: $(cat "$SN_TMP/err.json")"
	! grep -Eq 'Sanitizer|runtime error' "$SN_TMP/err.txt" || sn_fail "$what: sanitizer: $(cat "$SN_TMP/err.txt")"
	python3 - "$SN_TMP/err.json" "$code" "$words" <<'EOF' || sn_fail "$what: not the CNI error expected: $(cat "$SN_TMP/err.json")"
import json, re, sys
e = json.load(open(sys.argv[1]))
assert set(e) == {"cniVersion", "code", "msg", "details"}, e
assert e["code"] == int(sys.argv[2]), e
assert re.search(sys.argv[3], e["msg"] + ": " + e["details"]), e
print("ok: CNI error", e["code"], e["msg"] + ":", e["details"])
EOF
}

sn_on_exit "cni ptp DEL '$SN_TMP/ptp.json'"
cni ptp ADD "$SN_TMP/ptp.json" >"$SN_TMP/ptp-result.json" || sn_fail "ptp ADD: $(cat "$SN_TMP/ptp-result.json")"
CT_IP=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ips"][0]["address"].split("/")[0])' "$SN_TMP/ptp-result.json")
# eth0 gets its IPv6 link-local address a moment after ptp returns.
sn_wait_for 10 sh -c "ip -n '$CT' -6 addr show dev eth0 scope link | grep -q inet6" ||
	sn_fail "eth0 never got its IPv6 link-local address"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"
sandnet_conf "$SN_TMP/ptp-result.json" "$SN_TMP/sandnet.json"

sn_log "malformed configurations and environments give CNI errors"
printf '{"cniVersion": "1.0.0", "name": ' >"$SN_TMP/bad.json"
expect_cni_error "truncated JSON" 6 "decode" -- cni sandnet ADD "$SN_TMP/bad.json"
echo '[1, 2]' >"$SN_TMP/bad.json"
expect_cni_error "not an object" 6 "not a JSON object" -- cni sandnet ADD "$SN_TMP/bad.json"
echo '{"name": "x", "prevResult": {}}' >"$SN_TMP/bad.json"
expect_cni_error "no cniVersion" 7 'cniVersion" missing' -- cni sandnet ADD "$SN_TMP/bad.json"
echo '{"cniVersion": "9.9.9", "name": "x"}' >"$SN_TMP/bad.json"
expect_cni_error "unknown cniVersion" 1 "9.9.9" -- cni sandnet ADD "$SN_TMP/bad.json"
echo '{"cniVersion": "1.0.0", "prevResult": {}}' >"$SN_TMP/bad.json"
expect_cni_error "no name" 7 'name" missing' -- cni sandnet ADD "$SN_TMP/bad.json"
echo '{"cniVersion": "1.0.0", "name": "x", "name": "y"}' >"$SN_TMP/bad.json"
expect_cni_error "duplicate key" 6 "duplicate" -- cni sandnet ADD "$SN_TMP/bad.json"
sandnet_conf - "$SN_TMP/noprev.json"
expect_cni_error "ADD without prevResult" 7 "chained plugin" -- cni sandnet ADD "$SN_TMP/noprev.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["channels"]="two"; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/sandnet.json" "$SN_TMP/bad.json"
expect_cni_error "channels not a number" 7 '"channels"' -- cni sandnet ADD "$SN_TMP/bad.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["publish"]="udp:53=x"; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/sandnet.json" "$SN_TMP/bad.json"
expect_cni_error "publish not an array" 7 '"publish"' -- cni sandnet ADD "$SN_TMP/bad.json"
expect_cni_error "no CNI_IFNAME" 4 "CNI_IFNAME" -- cni sandnet ADD "$SN_TMP/sandnet.json" CNI_IFNAME=
expect_cni_error "bad CNI_CONTAINERID" 4 "CNI_CONTAINERID" -- cni sandnet ADD "$SN_TMP/sandnet.json" CNI_CONTAINERID="a b"
expect_cni_error "relative CNI_NETNS" 4 "CNI_NETNS" -- cni sandnet ADD "$SN_TMP/sandnet.json" CNI_NETNS=netns
expect_cni_error "unknown command" 4 "CNI_COMMAND 'FROB'" -- cni sandnet FROB "$SN_TMP/sandnet.json"
expect_cni_error "CHECK before ADD" 101 "not attached" -- cni sandnet CHECK "$SN_TMP/sandnet.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["datapath"]="/nonexistent/datapath"; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/sandnet.json" "$SN_TMP/bad.json"
expect_cni_error "datapath that does not exist" 100 \
	'attach failed: cannot execute /nonexistent/datapath: No such file or directory; set "datapath" in the network configuration' \
	-- cni sandnet ADD "$SN_TMP/bad.json"
printf 'not a program\n' >"$SN_TMP/notexec"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["datapath"]=sys.argv[3]; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/sandnet.json" "$SN_TMP/bad.json" "$SN_TMP/notexec"
expect_cni_error "datapath not executable" 100 "cannot execute $SN_TMP/notexec: Permission denied" \
	-- cni sandnet ADD "$SN_TMP/bad.json"
# Executable but no program: only execv() itself can tell, in the child.
chmod +x "$SN_TMP/notexec"
expect_cni_error "datapath not a program" 100 "cannot execute $SN_TMP/notexec: Exec format error" \
	-- cni sandnet ADD "$SN_TMP/bad.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["datapath"]="no-such-datapath"; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/sandnet.json" "$SN_TMP/bad.json"
expect_cni_error "datapath found nowhere" 100 \
	"cannot execute no-such-datapath: not found next to netsetup \\($(dirname "$(readlink -f "$NETSETUP")").*nor in PATH" \
	-- cni sandnet ADD "$SN_TMP/bad.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["policy"]=["egress-deny=10.0.0.0/8", "egress-block=x"]; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/sandnet.json" "$SN_TMP/bad.json"
expect_cni_error "policy item of an unknown kind" 7 "\"policy\" item 1 'egress-block=x': expected egress-allow=RULE" \
	-- cni sandnet ADD "$SN_TMP/bad.json"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["policy"]="egress-deny=10.0.0.0/8"; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/sandnet.json" "$SN_TMP/bad.json"
expect_cni_error "policy not an array" 7 '"policy": expected an array' -- cni sandnet ADD "$SN_TMP/bad.json"
# the datapath checks the rule itself: its reason reaches the runtime
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["policy"]=["ingress-deny=tcp:10.0.0.0/33:22"]; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/sandnet.json" "$SN_TMP/bad.json"
expect_cni_error "malformed policy rule" 100 \
	"the datapath exited with status 2: datapath: --ingress-deny 'tcp:10.0.0.0/33:22': prefix length '33' is not in 0..32" \
	-- cni sandnet ADD "$SN_TMP/bad.json"
ns_snapshot "$CT" "$SN_TMP/after-errors"
ns_same "$SN_TMP/before" "$SN_TMP/after-errors" "namespace after refused ADDs"
[ -z "$(ls "$SANDNET_STATE_DIR" 2>/dev/null)" ] || sn_fail "refused ADDs left files: $(ls "$SANDNET_STATE_DIR")"
echo '{"cniVersion": "1.0.0"}' >"$SN_TMP/v.json"
cni sandnet VERSION "$SN_TMP/v.json" | python3 -c 'import json,sys; v=json.load(sys.stdin); assert "1.0.0" in v["supportedVersions"] and "0.4.0" in v["supportedVersions"], v' ||
	sn_fail "VERSION"

sn_log "ADD through the chain"
cni sandnet ADD "$SN_TMP/sandnet.json" >"$SN_TMP/add.json" 2>"$SN_TMP/add.err" ||
	sn_fail "sandnet ADD: $(cat "$SN_TMP/add.json" "$SN_TMP/add.err")"
cat "$SN_TMP/add.err"
python3 - "$SN_TMP/ptp-result.json" "$SN_TMP/add.json" <<'EOF' || sn_fail "ADD result is not prevResult"
import json, sys
prev, res = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert res == prev, (res, prev)
print("ADD result = prevResult:", res["ips"])
EOF
STATE=$(ls "$SANDNET_STATE_DIR"/*.state)
grep "^owner cni:$CID:eth0$" "$STATE" || sn_fail "state file has no owner: $(cat "$STATE")"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$STATE")
[ -n "$DP_PID" ] && alive "$DP_PID" || sn_fail "no running datapath in the state: $(cat "$STATE")"
[ "$(readlink "/proc/$DP_PID/exe")" = "$(readlink -f "$DATAPATH")" ] || sn_fail "pid $DP_PID is not the datapath"
# The runtime reads our stdout to EOF: the datapath must not hold it.
ls -l "/proc/$DP_PID/fd/1" | grep -q /dev/null || sn_fail "the datapath holds the plugin's stdout"
[ -z "$(ip -n "$CT" -4 addr show dev eth0 | grep inet)" ] || sn_fail "the kernel still has the address"
sn_log "the host side pings the container through sandnet"
ip netns exec "$HOSTNS" ping -c 3 -i 0.2 -W 2 "$CT_IP" || sn_fail "ping $CT_IP through sandnet"
sn_log "the published UDP port (configuration key \"publish\") answers through sandnet"
# The datapath runs where the plugin ran (the ptp "host" namespace): the backend too.
sn_udp_echo "$HOSTNS" 127.0.0.1 6000 'd.upper()'
ip netns exec "$HOSTNS" python3 - "$CT_IP" <<'EOF' || sn_fail "published UDP port 5000"
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
for i in range(5):
    s.sendto(b"sandnet-cni", (sys.argv[1], 5000))
    try:
        d, a = s.recvfrom(100)
        break
    except socket.timeout:
        continue
else:
    sys.exit("no answer from the published port")
assert d == b"SANDNET-CNI" and a == (sys.argv[1], 5000), (d, a)
print("published udp:5000 answered", d, "from", a)
EOF
sn_log "the configuration's policy is the datapath's, and stats --all names the container"
"$DATAPATH" stats --all --dir "$SANDNET_STATE_DIR" --json | python3 -c '
import json, sys
a = json.load(sys.stdin)
assert [x["name"] for x in a] == [sys.argv[1]], a
p = a[0]["policy"]
assert [(r["action"], r["rule"], r["default"]) for r in p["egress"]["rules"]] == [
    ("deny", "10.96.0.0/12", False), ("deny", "169.254.169.254", True), ("deny", "fd00:ec2::254", True)], p
assert [(r["action"], r["rule"]) for r in p["ingress"]["rules"]] == [("deny", "tcp:any:22")], p
assert a[0]["totals"]["network_rx_frames"] > 0, a[0]["totals"]
print("ok:", a[0]["name"], "policy", p["egress"]["rules"][0]["rule"], p["ingress"]["rules"][0]["rule"])
' "cni:$CID:eth0" || sn_fail "stats --all: the CNI policy"
cni sandnet CHECK "$SN_TMP/sandnet.json" >"$SN_TMP/check.out" || sn_fail "CHECK: $(cat "$SN_TMP/check.out")"
[ ! -s "$SN_TMP/check.out" ] || sn_fail "CHECK printed: $(cat "$SN_TMP/check.out")"
expect_cni_error "second ADD" 100 "already attached" -- cni sandnet ADD "$SN_TMP/sandnet.json"

sn_log "DEL gives back what ptp made and stops the datapath"
cni sandnet DEL "$SN_TMP/sandnet.json" || sn_fail "DEL"
! alive "$DP_PID" || sn_fail "datapath $DP_PID still runs after DEL"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-del"
ns_same "$SN_TMP/before" "$SN_TMP/after-del" "namespace after ADD + DEL"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "DEL left files: $(ls "$SANDNET_STATE_DIR")"
cni sandnet DEL "$SN_TMP/sandnet.json" || sn_fail "second DEL is not a no-op"
ip netns exec "$HOSTNS" ping -c 1 -W 2 "$CT_IP" || sn_fail "the kernel does not answer after DEL"

sn_log "netsetup detach stops the datapath ADD started and gives back; DEL is then a no-op"
cni sandnet ADD "$SN_TMP/sandnet.json" >/dev/null || sn_fail "ADD for detach"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$SANDNET_STATE_DIR"/*.state)
alive "$DP_PID" || sn_fail "no datapath after ADD"
"$NETSETUP" detach --netns "$NSP" 2>"$SN_TMP/detach.err" || sn_fail "detach: $(cat "$SN_TMP/detach.err")"
cat "$SN_TMP/detach.err"
grep -q "datapath (pid $DP_PID) stopped" "$SN_TMP/detach.err" || sn_fail "detach did not say it stopped $DP_PID"
sn_wait_for 5 eval "! alive $DP_PID" || sn_fail "datapath $DP_PID still runs after detach"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-detach"
ns_same "$SN_TMP/before" "$SN_TMP/after-detach" "namespace after ADD + detach"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "detach left files: $(ls "$SANDNET_STATE_DIR")"
cni sandnet DEL "$SN_TMP/sandnet.json" || sn_fail "DEL after detach is not a no-op"

sn_log "a datapath killed with SIGKILL: CHECK fails, DEL still restores"
cni sandnet ADD "$SN_TMP/sandnet.json" >/dev/null || sn_fail "ADD again"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$SANDNET_STATE_DIR"/*.state)
kill -9 "$DP_PID"
sn_wait_for 5 eval "! alive $DP_PID" || sn_fail "datapath $DP_PID survives SIGKILL"
expect_cni_error "CHECK with a dead datapath" 102 "is not running" -- cni sandnet CHECK "$SN_TMP/sandnet.json"
cni sandnet DEL "$SN_TMP/sandnet.json" || sn_fail "DEL after SIGKILL"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-kill"
ns_same "$SN_TMP/before" "$SN_TMP/after-kill" "namespace after ADD + SIGKILL + DEL"
sn_log "installed as make install lays it out, with a runtime's PATH: the datapath is found next to netsetup"
# make install (of this build, not rebuilt: -o all) into a PREFIX of ours:
# PREFIX/sbin/netsetup, PREFIX/bin/datapath, PREFIX/lib/cni/sandnet -> ../../sbin/netsetup;
# no "datapath" key, and PATH as podman gives its plugins, without PREFIX/bin.
PREFIX=$SN_TMP/prefix
chmod 755 "$SN_TMP"	# the datapath's supervisor, its user, execs PREFIX/bin/datapath
make -s -C "$SANDNET_TESTS/.." -o all install O="$SANDNET_BUILD" PREFIX="$PREFIX" SYSCONFDIR="$PREFIX/etc" >"$SN_TMP/install.log" 2>&1 ||
	sn_fail "make install: $(cat "$SN_TMP/install.log")"
for f in sbin/netsetup bin/datapath lib/cni/sandnet share/sandnet/cni/sandnet-bridge.conflist \
	share/containers/oci/hooks.d/sandnet.json share/containers/oci/hooks.d/sandnet-poststop.json \
	share/doc/sandnet/runtime.md share/man/man8/netsetup.8; do
	[ -e "$PREFIX/$f" ] || sn_fail "make install did not install $f"
done
[ "$(readlink -f "$PREFIX/lib/cni/sandnet")" = "$PREFIX/sbin/netsetup" ] || sn_fail "lib/cni/sandnet is not netsetup"
python3 - "$PREFIX" <<'EOF' || sn_fail "the installed OCI hooks do not name the installed netsetup"
import json, sys
for f, stage, arg in (("sandnet.json", "createRuntime", "create"), ("sandnet-poststop.json", "poststop", "poststop")):
    h = json.load(open(f"{sys.argv[1]}/share/containers/oci/hooks.d/{f}"))
    assert h["hook"]["path"] == sys.argv[1] + "/sbin/netsetup" and h["stages"] == [stage], h
    assert h["hook"]["args"] == ["netsetup", "oci-hook", arg] and "^io\\.sandnet\\.enable$" in h["when"]["annotations"], h
print("ok: hooks name", sys.argv[1] + "/sbin/netsetup")
EOF
# "stateDir" instead of SANDNET_STATE_DIR: the environment is the runtime's only (env -i), for DEL too
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); del c["datapath"]; c["stateDir"]=sys.argv[3]; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/sandnet.json" "$SN_TMP/nodp.json" "$SANDNET_STATE_DIR"
runtime_path=/usr/sbin:/usr/bin:/sbin:/bin
installed() {
	ip netns exec "$HOSTNS" env -i PATH=$runtime_path CNI_COMMAND="$1" CNI_CONTAINERID="$CID" CNI_NETNS="$NSP" \
		CNI_IFNAME=eth0 CNI_PATH="$PREFIX/lib/cni" "$PREFIX/lib/cni/sandnet" <"$SN_TMP/nodp.json"
}
installed ADD >"$SN_TMP/add.json" 2>"$SN_TMP/add.err" ||
	sn_fail "ADD installed, runtime PATH: $(cat "$SN_TMP/add.json" "$SN_TMP/add.err")"
DP_PID=$(awk '$1 == "datapath" { print $2 }' "$SANDNET_STATE_DIR"/*.state) ||
	sn_fail "no state in the \"stateDir\" $SANDNET_STATE_DIR"
[ "$(readlink "/proc/$DP_PID/exe")" = "$PREFIX/bin/datapath" ] ||
	sn_fail "the datapath started is $(readlink "/proc/$DP_PID/exe"), not $PREFIX/bin/datapath"
ip netns exec "$HOSTNS" ping -c 1 -W 2 "$CT_IP" || sn_fail "ping through the installed datapath"
installed CHECK || sn_fail "CHECK of the installed one (stateDir)"
installed DEL || sn_fail "DEL of the installed one (stateDir)"
! alive "$DP_PID" || sn_fail "datapath $DP_PID still runs after DEL"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["stateDir"]="relative/dir"; json.dump(c, open(sys.argv[2],"w"))' \
	"$SN_TMP/nodp.json" "$SN_TMP/bad.json"
expect_cni_error "stateDir not absolute" 7 '"stateDir": expected an absolute path' -- cni sandnet ADD "$SN_TMP/bad.json"
rm "$PREFIX/bin/datapath"
expect_cni_error "installed without its datapath" 100 \
	"cannot execute datapath: not found next to netsetup \\($PREFIX/sbin, $PREFIX/bin\\) nor in PATH \\($runtime_path\\); set \"datapath\" in the network configuration" \
	-- installed ADD
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-installed"
ns_same "$SN_TMP/before" "$SN_TMP/after-installed" "namespace after the installed ADD + DEL and the refused one"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "left files: $(ls "$SANDNET_STATE_DIR")"
echo "CNI chain ptp -> sandnet: ADD, CHECK, DEL, errors, the datapath found next to netsetup"
