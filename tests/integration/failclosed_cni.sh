#!/usr/bin/env bash
# Fail closed, heal (issue 18), through the CNI plugin as a runtime calls it
# (Debian's ptp makes eth0, then sandnet, chained): with the default policy
# and a program in the container asking the cloud metadata address every
# 50 ms throughout,
#   - the detached datapath killed with SIGKILL, SIGSEGV and SIGABRT, each
#     during a download each way: a new one serves within a second, the open
#     connections are reset, never given back, and CHECK passes after each;
#   - more deaths: the crash loop; dark and fenced; CHECK fails with the
#     reason, `datapath stats --all` shows it;
#   - the configuration's TCP settings ("tcpCongestionControl": "bbr",
#     "tcpEcn": "on") are those of a connection to the peer, before the
#     deaths and after them;
#   - DEL gives back byte-identical what ptp made;
#   - the supervisor itself killed with SIGKILL: dark, CHECK says so, DEL
#     gives back byte-identical.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
. "$SANDNET_TESTS/lib/ptp.sh"
. "$SANDNET_TESTS/integration/failclosed.inc"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"

ptp_up fc $((150 + $$ % 50))
mkdir -p "$SN_TMP/bin" "$SANDNET_STATE_DIR"
ln -s "$NETSETUP" "$SN_TMP/bin/sandnet"
# the sandnet plugin, called as a runtime calls a chain's plugins
cni() {
	local cmd=$1; shift
	ip netns exec "$HOSTNS" env CNI_COMMAND="$cmd" CNI_CONTAINERID="$CID" CNI_NETNS="$NSP" \
		CNI_IFNAME=eth0 CNI_PATH="$SN_TMP/bin" "$SN_TMP/bin/sandnet" <"$SN_TMP/sandnet.json"
}
python3 - "$SN_TMP/ptp-result.json" "$SN_TMP/sandnet.json" "$DATAPATH" <<'EOF'
import json, sys
conf = {"cniVersion": "1.0.0", "name": "sandnet-fc", "type": "sandnet", "datapath": sys.argv[3],
        "tcpCongestionControl": "bbr", "tcpEcn": "on", "tcpPacing": True,
        "prevResult": json.load(open(sys.argv[1]))}
json.dump(conf, open(sys.argv[2], "w"))
EOF
FC_CT=$CT FC_CT_IP=$CT_IP FC_PEER=$HOSTNS FC_PEER_IP=$GW
fc_servers
ns_snapshot "$CT" "$SN_TMP/before"

sn_log "ADD, the default policy"
cni ADD >"$SN_TMP/add.json" 2>"$SN_TMP/add.err" ||
	sn_fail "ADD: $(cat "$SN_TMP/add.json" "$SN_TMP/add.err")"
STATE=$(ls "$SANDNET_STATE_DIR"/*.state)
FC_STATUS=$STATE.status FC_CTL=$STATE.ctl
sn_wait_for 5 grep -q "^state serving" "$FC_STATUS" || sn_fail "status: $(cat "$FC_STATUS")"
SUP=$(awk '$1 == "datapath" { print $2 }' "$STATE")
[ "$(fc_status supervisor)" = "$SUP" ] || sn_fail "the state file's datapath $SUP is not the supervisor: $(cat "$FC_STATUS")"
sn_log "\"tcpCongestionControl\": \"bbr\", \"tcpEcn\": \"on\": the network side's connection runs them"
ns_tcp_conn_check "$FC_CTL" "$CT" "$HOSTNS" "$GW" 7412 bbr true
fc_probe_start
for sig in KILL SEGV ABRT; do
	fc_kill_heal "$sig"
	cni CHECK >"$SN_TMP/check.out" || sn_fail "CHECK after SIG$sig: $(cat "$SN_TMP/check.out")"
done
sn_log "the datapath that healed keeps the TCP settings"
ns_tcp_conn_check "$FC_CTL" "$CT" "$HOSTNS" "$GW" 7413 bbr true

sn_log "the crash loop: dark, and CHECK says why"
fc_crash_loop
cni CHECK >"$SN_TMP/check.out" && sn_fail "CHECK passes while dark"
python3 - "$SN_TMP/check.out" <<'EOF' || sn_fail "CHECK's error: $(cat "$SN_TMP/check.out")"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["code"] == 102 and "dark: crash loop: 5 deaths within 60 s" in e["details"], e
print("CHECK:", e["msg"] + ":", e["details"])
EOF
"$DATAPATH" stats --all --dir "$SANDNET_STATE_DIR" --json | python3 -c '
import json, sys
a = json.load(sys.stdin)
assert len(a) == 1 and a[0]["name"] == sys.argv[1] and a[0]["supervisor"]["state"] == "dark", a
print("stats --all:", a[0]["name"], a[0]["supervisor"]["state"], a[0]["supervisor"]["reason"])
' "cni:$CID:eth0" || sn_fail "stats --all does not show the container dark"
grep -q "the container stays dark: crash loop" "$STATE.log" || sn_fail "the log does not say why it is dark"
fc_probe_stop

sn_log "DEL gives back byte-identical"
cni DEL || sn_fail "DEL of a dark container"
! fc_alive "$SUP" || sn_fail "the supervisor $SUP outlives DEL"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-del"
ns_same "$SN_TMP/before" "$SN_TMP/after-del" "after deaths, a crash loop and DEL"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "DEL left: $(ls "$SANDNET_STATE_DIR")"

sn_log "the supervisor killed: dark, CHECK says so, DEL gives back"
cni ADD >/dev/null || sn_fail "ADD again"
STATE=$(ls "$SANDNET_STATE_DIR"/*.state)
FC_STATUS=$STATE.status FC_CTL=$STATE.ctl
sn_wait_for 5 grep -q "^state serving" "$FC_STATUS" || sn_fail "status: $(cat "$FC_STATUS")"
SUP=$(awk '$1 == "datapath" { print $2 }' "$STATE")
WORKER=$(fc_worker)
fc_probe_start
kill -9 "$SUP"
sn_wait_for 5 eval "! fc_alive $WORKER" || sn_fail "the datapath $WORKER outlived its supervisor"
fc_probe_more 5
ip -n "$CT" -j addr show dev eth0 | grep -q '"family":"inet"' && sn_fail "eth0 got its address back"
ip netns exec "$CT" nft list tables | grep -q "^table netdev sandnet_" || sn_fail "the fence is gone"
fc_probe_stop any
cni CHECK >"$SN_TMP/check.out" && sn_fail "CHECK passes with the supervisor dead"
grep -q "supervisor (pid $SUP) is not running: the container is dark" "$SN_TMP/check.out" ||
	sn_fail "CHECK's error: $(cat "$SN_TMP/check.out")"
cni DEL || sn_fail "DEL after the supervisor died"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-del2"
ns_same "$SN_TMP/before" "$SN_TMP/after-del2" "after the supervisor's death and DEL"
! grep -E "Sanitizer|runtime error" "$SN_TMP"/state/*.log 2>/dev/null || sn_fail "sanitizer report"
echo "fail closed through the CNI plugin: healed 3 deaths, CHECK passes, crash loop dark and reported, DEL byte-identical"
