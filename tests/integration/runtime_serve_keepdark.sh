#!/usr/bin/env bash
# `netsetup serve` with on_datapath_exit = keep-dark: a datapath killed with
# SIGKILL leaves its namespace without addresses (the kernel must not answer
# for the container), the state file and the bind mount stay, a restarted
# daemon leaves it so too, and `netsetup detach` on the bind mount gives
# everything back and removes what serve kept (state, mount).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"

sn_netns_add ct
sn_netns_add peer
CT=$(sn_ns ct)
PEER=$(sn_ns peer)
sn_veth_add ct eth0 peer veth0
ip -n "$CT" addr add 10.79.0.2/24 dev eth0
ip -n "$PEER" addr add 10.79.0.1/24 dev veth0
sn_wait_for 10 sh -c "ip -n '$CT' -6 addr show dev eth0 scope link | grep -q inet6" || sn_fail "no link-local on eth0"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"
SOCK=$SN_TMP/serve.sock
printf 'on_datapath_exit = keep-dark\n' >"$SN_TMP/serve.conf"
sn_on_exit 'for m in "$SANDNET_STATE_DIR"/*.netns; do umount -l "$m"; done'
serve_start() {
	"$NETSETUP" serve --socket "$SOCK" --config "$SN_TMP/serve.conf" >>"$SN_TMP/serve.log" 2>&1 &
	DAEMON=$!
	sn_on_exit "kill $DAEMON"
	sn_wait_for 5 test -S "$SOCK" || sn_fail "serve did not start: $(cat "$SN_TMP/serve.log")"
}
serve_start
"$NETSETUP" connect --socket "$SOCK" --netns "$(ns_path ct)" -- "$DATAPATH" >"$SN_TMP/dp.log" 2>&1 &
DP=$!
sn_on_exit "kill -9 $DP"
sn_wait_for 10 sh -c "! ip -n '$CT' -4 addr show dev eth0 | grep -q inet" || sn_fail "not attached: $(cat "$SN_TMP/serve.log")"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.79.0.2 || sn_fail "ping through sandnet"
STATE=$(ls "$SANDNET_STATE_DIR"/*.state)
KEEP=${STATE%.state}.netns

sn_log "SIGKILL: the namespace stays dark"
kill -9 "$DP"
sn_wait_for 10 grep -q "gone without being stopped; netns kept dark" "$SN_TMP/serve.log" || sn_fail "log: $(cat "$SN_TMP/serve.log")"
[ -e "$STATE" ] || sn_fail "state file removed"
[ -z "$(ip -n "$CT" -4 addr show dev eth0 | grep inet)" ] || sn_fail "the address came back despite keep-dark"
! ip netns exec "$PEER" ping -c 1 -W 1 10.79.0.2 >/dev/null || sn_fail "something answers for the dark container"

sn_log "a restarted daemon keeps it dark too"
kill "$DAEMON"
sn_wait_for 5 sh -c "! kill -0 $DAEMON" || sn_fail "serve does not stop"
serve_start
sn_wait_for 5 grep -q "recovered .* is gone" "$SN_TMP/serve.log" || sn_fail "restart: $(cat "$SN_TMP/serve.log")"
[ -z "$(ip -n "$CT" -4 addr show dev eth0 | grep inet)" ] || sn_fail "restart gave the address back"

sn_log "netsetup detach on the bind mount gives back"
"$NETSETUP" detach --netns "$KEEP" || sn_fail "detach"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after"
ns_same "$SN_TMP/before" "$SN_TMP/after" "namespace after keep-dark + detach"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "left behind: $(ls "$SANDNET_STATE_DIR")"
! grep -q "$KEEP" /proc/self/mountinfo || sn_fail "bind mount $KEEP left"
ip netns exec "$PEER" ping -c 1 -W 2 10.79.0.2 || sn_fail "the kernel does not answer after detach"
! grep -Eq 'Sanitizer|runtime error' "$SN_TMP/serve.log" || sn_fail "sanitizer: $(cat "$SN_TMP/serve.log")"
cat "$SN_TMP/serve.log"
echo "keep-dark: dark after SIGKILL and restart, detach gives back"
