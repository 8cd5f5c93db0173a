#!/usr/bin/env bash
# Fail closed, heal (issue 18), through `netsetup oci-hook`, fed the state
# JSON an OCI runtime feeds it (createRuntime: the container's pid; poststop)
# on a namespace Debian's CNI ptp plugin built, with the default policy; a
# program in the container asks the cloud metadata address every 50 ms:
#   - the detached datapath killed with SIGKILL, SIGSEGV and SIGABRT during a
#     download each way: a new one serves within a second, the open
#     connections are reset, never given back;
#   - the crash loop: dark and fenced, the reason in the status file and the
#     log; poststop gives back byte-identical;
#   - a second create whose supervisor is killed: dark; poststop gives back
#     byte-identical (the hook attached by pid: it finds the namespace by
#     the bind mount it made next to the state file).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
. "$SANDNET_TESTS/lib/ptp.sh"
. "$SANDNET_TESTS/integration/failclosed.inc"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"

ptp_up fco $((100 + $$ % 50))
mkdir -p "$SANDNET_STATE_DIR"
FC_CT=$CT FC_CT_IP=$CT_IP FC_PEER=$HOSTNS FC_PEER_IP=$GW
fc_servers
ns_snapshot "$CT" "$SN_TMP/before"

# The runtime's hooks run in one mount namespace (the host's, for podman and
# crun): here one of the test's own, held by a process in the ptp "host"
# netns; the bind mount the hook keeps the namespace with lives there.
ip netns exec "$HOSTNS" unshare -m --propagation private sleep 300 &
HOLDER=$!
sn_on_exit "kill $HOLDER"
sn_wait_for 5 sh -c "[ \"\$(readlink /proc/$HOLDER/ns/mnt)\" != \"\$(readlink /proc/self/ns/mnt)\" ]" ||
	sn_fail "no mount namespace for the hooks"
hook() { nsenter -t "$HOLDER" -m -n "$NETSETUP" oci-hook "$@"; }
create() {
	ip netns exec "$CT" sleep 120 >/dev/null 2>&1 &
	CPID=$!
	sn_on_exit "kill $CPID"
	sn_wait_for 5 sh -c "[ \"\$(readlink /proc/$CPID/ns/net)\" = \"\$(ip netns exec '$CT' readlink /proc/self/ns/net)\" ]" ||
		sn_fail "the container process did not enter $CT"
	hook create --datapath "$DATAPATH" <<<"{\"ociVersion\": \"1.0.2\", \"id\": \"$CID\", \"status\": \"creating\", \"pid\": $CPID}" ||
		sn_fail "hook create"
	STATE=$(ls "$SANDNET_STATE_DIR"/*.state)
	FC_STATUS=$STATE.status FC_CTL=$STATE.ctl
	sn_wait_for 5 grep -q "^state serving" "$FC_STATUS" || sn_fail "status: $(cat "$FC_STATUS")"
	SUP=$(awk '$1 == "datapath" { print $2 }' "$STATE")
}
poststop() {
	hook poststop <<<"{\"ociVersion\": \"1.0.2\", \"id\": \"$CID\", \"status\": \"stopped\"}" || sn_fail "hook poststop"
	kill "$CPID"
	ns_settle "$CT"
	ns_snapshot "$CT" "$SN_TMP/after"
	ns_same "$SN_TMP/before" "$SN_TMP/after" "$1"
	[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "poststop left: $(ls "$SANDNET_STATE_DIR")"
}

sn_log "createRuntime, the default policy"
create
fc_probe_start
for sig in KILL SEGV ABRT; do
	fc_kill_heal "$sig"
done
sn_log "the crash loop: dark; poststop gives back"
fc_crash_loop
grep -q "the container stays dark: crash loop" "$STATE.log" || sn_fail "the log does not say why it is dark"
fc_probe_stop
poststop "after deaths, a crash loop and poststop"
! fc_alive "$SUP" || sn_fail "the supervisor $SUP outlives poststop"

sn_log "the supervisor killed: dark; poststop gives back"
create
WORKER=$(fc_worker)
fc_probe_start
kill -9 "$SUP"
sn_wait_for 5 eval "! fc_alive $WORKER" || sn_fail "the datapath $WORKER outlived its supervisor"
fc_probe_more 5
ip -n "$CT" -j addr show dev eth0 | grep -q '"family":"inet"' && sn_fail "eth0 got its address back"
ip netns exec "$CT" nft list tables | grep -q "^table netdev sandnet_" || sn_fail "the fence is gone"
fc_probe_stop any
poststop "after the supervisor's death and poststop"
echo "fail closed through the OCI hook: healed 3 deaths, crash loop dark, poststop byte-identical"
