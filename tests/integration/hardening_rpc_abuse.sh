#!/usr/bin/env bash
# Abuse of sandnet's unix sockets by a misbehaving client (tests/tools/rpc_abuse):
# non-socket fds, sockets of the wrong family, a namespace of the wrong type,
# 253 fds (SCM_MAX_FD), garbage, a short header, closing mid-conversation.
#  1. `netsetup serve` (root, long-lived): every case is refused with a
#     protocol ERROR or just closed; the daemon's fd count (/proc/PID/fd) is
#     the same before and after, no worker is left behind, and a valid
#     request afterwards attaches (ping through sandnet) and gives back.
#  2. `datapath --listen SOCKET` (one connection, by design): each case makes
#     it refuse, answer ERROR where it can, and exit with status 1 and a
#     reason; never a signal or a sanitizer report; its socket path is gone.
#  3. the running datapath's control socket (SOCK_STREAM): garbage, 253 fds,
#     a short request and an early close; the datapath's fd count is the same
#     afterwards, `datapath stats` and ping still work.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
ABUSE=$TOOLS/rpc_abuse
[ -x "$ABUSE" ] || sn_skip "no $ABUSE (make tools)"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"

nfds() { ls "/proc/$1/fd" | wc -l; }
# abuse [--stream] SOCKET CASE: run the tool; it must not report "accepted".
abuse() {
	local out
	out=$("$ABUSE" "$@" 2>&1) || sn_fail "rpc_abuse $*: $out"
	echo "    ${*: -1}: $out"
}

# ---- 1. netsetup serve ----------------------------------------------------
sn_netns_add sct
sn_netns_add speer
CT=$(sn_ns sct)
PEER=$(sn_ns speer)
NSP=$(ns_path sct)
sn_veth_add sct eth0 speer veth0
ip -n "$CT" addr add 10.79.0.2/24 dev eth0
ip -n "$PEER" addr add 10.79.0.1/24 dev veth0
chmod 755 "$SN_TMP"
SOCK=$SN_TMP/serve.sock
printf 'allowed_uids = 0\nmax_channels = 2\nrequest_timeout = 3\n' >"$SN_TMP/serve.conf"
sn_on_exit 'for m in "$SANDNET_STATE_DIR"/*.netns; do umount -l "$m"; done'
"$NETSETUP" serve --socket "$SOCK" --config "$SN_TMP/serve.conf" >"$SN_TMP/serve.log" 2>&1 &
DAEMON=$!
sn_on_exit "kill $DAEMON"
sn_wait_for 5 test -S "$SOCK" || { cat "$SN_TMP/serve.log"; sn_fail "serve did not start"; }
before=$(nfds "$DAEMON")

sn_log "netsetup serve: bad clients (daemon pid $DAEMON, $before fds)"
for c in attach-devnull attach-pipe attach-inet attach-uts attach-nofd attach-253 attach-close \
	garbage garbage-253 short close; do
	abuse "$SOCK" "$c"
done
# Workers exit once their client is answered or gone (request_timeout 3 s at worst).
sn_wait_for 8 sh -c "[ -z \"\$(pgrep -P $DAEMON)\" ]" || sn_fail "workers left: $(pgrep -P "$DAEMON" | tr '\n' ' ')"
kill -0 "$DAEMON" || sn_fail "the daemon died: $(cat "$SN_TMP/serve.log")"
after=$(nfds "$DAEMON")
[ "$after" -eq "$before" ] || { ls -l "/proc/$DAEMON/fd"; sn_fail "daemon fds: $before before, $after after"; }
echo "    daemon fds: $before before, $after after"
n=$(grep -c "ATTACH: the fd is not a network namespace\|declares 1 netns fds but\|bad magic\|short message\|closed without a request" "$SN_TMP/serve.log")
[ "$n" -ge 10 ] || sn_fail "only $n refusals logged: $(cat "$SN_TMP/serve.log")"

sn_log "netsetup serve: a valid request afterwards attaches"
"$NETSETUP" connect --socket "$SOCK" --netns "$NSP" --iface eth0 -- "$DATAPATH" >"$SN_TMP/dp1.log" 2>&1 &
DP=$!
sn_on_exit "kill -9 $DP"
sn_wait_for 10 sh -c "! ip -n '$CT' -4 addr show dev eth0 | grep -q inet" ||
	{ cat "$SN_TMP/serve.log" "$SN_TMP/dp1.log"; sn_fail "valid attach after the abuse"; }
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.79.0.2 || { cat "$SN_TMP/dp1.log"; sn_fail "ping through sandnet"; }
kill "$DP"	# an explicit stop (a SIGKILL would leave it dark: fail closed)
wait "$DP" 2>/dev/null
sn_wait_for 10 sh -c "ip -n '$CT' -4 addr show dev eth0 | grep -q 10.79.0.2" || sn_fail "address not given back"
kill "$DAEMON"
wait "$DAEMON" 2>/dev/null
! grep -Eq 'Sanitizer|runtime error' "$SN_TMP/serve.log" || sn_fail "sanitizer: $(cat "$SN_TMP/serve.log")"

# ---- 2. datapath --listen ---------------------------------------------------
sn_log "datapath --listen: bad netsetups"
LSOCK=$SN_TMP/dpl.sock
for c in garbage garbage-253 short close hello-253 hello-close link-devnull link-inet link-253; do
	rm -f "$LSOCK"
	"$DATAPATH" --listen "$LSOCK" >"$SN_TMP/dpl.log" 2>&1 &
	pid=$!
	sn_wait_for 5 test -S "$LSOCK" || { cat "$SN_TMP/dpl.log"; sn_fail "datapath --listen did not bind"; }
	abuse "$LSOCK" "$c"
	sn_wait_for 5 sh -c "! kill -0 $pid" || { kill -9 "$pid"; sn_fail "$c: datapath still running"; }
	wait "$pid"
	rc=$?
	[ "$rc" -eq 1 ] || { cat "$SN_TMP/dpl.log"; sn_fail "$c: datapath exit status $rc, expected 1"; }
	grep -q "^datapath: " "$SN_TMP/dpl.log" || sn_fail "$c: no reason logged"
	! grep -Eq 'Sanitizer|runtime error' "$SN_TMP/dpl.log" || sn_fail "$c: sanitizer: $(cat "$SN_TMP/dpl.log")"
	[ ! -e "$LSOCK" ] || sn_fail "$c: socket path left behind"
	echo "      -> $(grep '^datapath: ' "$SN_TMP/dpl.log" | tail -n 1)"
done

# ---- 3. the running datapath's control socket --------------------------------
. "$SANDNET_TESTS/integration/datapath_env.inc"
dp_env_up
before=$(nfds "$DP_PID")
sn_log "datapath control socket: bad clients (datapath pid $DP_PID, $before fds)"
for c in garbage garbage-253 short close attach-253; do
	abuse --stream "$DP_CTL" "$c"
done
sleep 0.5
kill -0 "$DP_PID" || sn_fail "the datapath died: $(cat "$DP_LOG")"
after=$(nfds "$DP_PID")
[ "$after" -eq "$before" ] || { ls -l "/proc/$DP_PID/fd"; sn_fail "datapath fds: $before before, $after after"; }
echo "    datapath fds: $before before, $after after"
dp_stats >/dev/null || sn_fail "datapath stats after the abuse"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 || sn_fail "ping after the abuse"
dp_env_down
echo "rpc abuse: serve, datapath --listen and the control socket refused everything, no fd leaked"
