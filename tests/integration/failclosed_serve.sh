#!/usr/bin/env bash
# Fail closed, heal (issue 18), through `netsetup serve` and its client
# `netsetup connect` (the client execs the datapath on the daemon's socket),
# both in a namespace of the test's, with the daemon's default
# configuration (on_datapath_exit = keep-dark) and the default policy; a
# program in the container asks the cloud metadata address every 50 ms:
#   - the datapath killed with SIGKILL, SIGSEGV and SIGABRT during a download
#     each way: a new one serves within a second, the open connections are
#     reset, the daemon gives nothing back;
#   - the crash loop: dark and fenced; then SIGTERM to the supervisor (an
#     explicit stop, as systemctl stop sends it): the daemon gives back
#     byte-identical;
#   - a second attach whose supervisor is killed with SIGKILL: the daemon
#     keeps it dark and says so; `netsetup detach` gives back byte-identical.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
. "$SANDNET_TESTS/integration/failclosed.inc"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"

sn_netns_add ct
sn_netns_add peer
sn_netns_add dp
CT=$(sn_ns ct)
PEER=$(sn_ns peer)
DPNS=$(sn_ns dp)
NSP=$(ns_path ct)
sn_veth_add ct eth0 peer veth0
ip -n "$CT" addr add 10.79.0.2/24 dev eth0
ip -n "$CT" route add default via 10.79.0.1
ip -n "$PEER" addr add 10.79.0.1/24 dev veth0
sn_wait_for 10 sh -c "ip -n '$CT' -6 addr show dev eth0 scope link | grep -q inet6" || sn_fail "no link-local on eth0"
ns_settle "$CT"
chmod 755 "$SN_TMP"
mkdir -p "$SANDNET_STATE_DIR"
FC_CT=$CT FC_CT_IP=10.79.0.2 FC_PEER=$PEER FC_PEER_IP=10.79.0.1 FC_CTL=$SN_TMP/dp.ctl
fc_servers
ns_snapshot "$CT" "$SN_TMP/before"

SOCK=$SN_TMP/serve.sock
sn_on_exit 'for m in "$SANDNET_STATE_DIR"/*.netns; do umount -l "$m"; done'
ip netns exec "$DPNS" "$NETSETUP" serve --socket "$SOCK" >>"$SN_TMP/serve.log" 2>&1 &
DAEMON=$!
sn_on_exit "kill $DAEMON"
sn_wait_for 5 test -S "$SOCK" || { cat "$SN_TMP/serve.log"; sn_fail "serve did not start"; }
grep -q "without being stopped: keep it dark" "$SN_TMP/serve.log" || sn_fail "the daemon's default is not keep-dark: $(cat "$SN_TMP/serve.log")"

connect() {
	ip netns exec "$DPNS" "$NETSETUP" connect --socket "$SOCK" --netns "$NSP" -- \
		"$DATAPATH" --control "$FC_CTL" >>"$SN_TMP/dp.log" 2>&1 &
	CLIENT=$!
	sn_on_exit "kill $CLIENT"
	sn_wait_for 10 sh -c "ls '$SANDNET_STATE_DIR'/*.state.status && grep -q '^state serving' '$SANDNET_STATE_DIR'/*.state.status" ||
		{ cat "$SN_TMP/dp.log" "$SN_TMP/serve.log"; sn_fail "connect did not attach"; }
	STATE=$(ls "$SANDNET_STATE_DIR"/*.state)
	FC_STATUS=$STATE.status
	[ "$(awk '$1 == "datapath" { print $2 }' "$STATE")" = "$CLIENT" ] || sn_fail "the state does not name the client $CLIENT"
}

sn_log "connect, the daemon's defaults, the default policy"
connect
fc_probe_start
for sig in KILL SEGV ABRT; do
	fc_kill_heal "$sig"
done
grep -q "given back" "$SN_TMP/serve.log" && sn_fail "the daemon gave back: $(cat "$SN_TMP/serve.log")"

sn_log "the crash loop, then an explicit stop: the daemon gives back"
fc_crash_loop
fc_probe_stop
kill "$CLIENT"
wait "$CLIENT"
sn_wait_for 10 sh -c "[ -z \"\$(ls '$SANDNET_STATE_DIR'/*.state 2>/dev/null)\" ]" ||
	sn_fail "the daemon did not give back after SIGTERM: $(cat "$SN_TMP/serve.log")"
sn_wait_for 5 grep -q "was stopped; addresses and routes given back" "$SN_TMP/serve.log" ||
	sn_fail "serve.log: $(cat "$SN_TMP/serve.log")"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-stop"
ns_same "$SN_TMP/before" "$SN_TMP/after-stop" "after deaths, a crash loop and an explicit stop"

sn_log "the supervisor killed: the daemon keeps it dark; detach gives back"
connect
fc_probe_start
kill -9 "$CLIENT"
sn_wait_for 10 grep -q "gone without being stopped; netns kept dark" "$SN_TMP/serve.log" ||
	sn_fail "the daemon did not keep it dark: $(cat "$SN_TMP/serve.log")"
ip -n "$CT" -j addr show dev eth0 | grep -q '"family":"inet"' && sn_fail "eth0 got its address back"
ip netns exec "$CT" nft list tables | grep -q "^table netdev sandnet_" || sn_fail "the fence is gone"
fc_probe_more 5
fc_probe_stop any
ip netns exec "$DPNS" "$NETSETUP" detach --netns "$NSP" || sn_fail "detach"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-detach"
ns_same "$SN_TMP/before" "$SN_TMP/after-detach" "after the supervisor's death and detach"
! grep -E "Sanitizer|runtime error" "$SN_TMP/dp.log" "$SN_TMP/serve.log" || sn_fail "sanitizer report"
echo "fail closed through serve/connect: healed 3 deaths, crash loop dark, explicit stop and detach byte-identical"
