#!/usr/bin/env bash
# `netsetup run` starts the datapath (here proto_sink) on a socketpair with
# `--fd N [--user USER] ARGS...`, and gives the addresses and routes back
# only on an explicit stop: a SIGTERM or SIGINT that netsetup forwarded. A
# datapath that exits on its own, or is killed with SIGKILL, leaves the
# namespace dark (fail closed), and `netsetup detach` gives it back. A
# datapath that cannot be executed changes nothing.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

sn_netns_add ct
sn_netns_add peer
sn_veth_add ct eth0 peer veth0
CT=$(sn_ns ct)
NSP=$(ns_path ct)
ip -n "$CT" addr add 10.221.0.2/24 dev eth0
ip -n "$CT" addr add fd22:1::2/64 dev eth0
ip -n "$CT" route add default via 10.221.0.1
ip -n "$CT" -6 route add default via fd22:1::1
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"

# start_run NAME HOLD [DATAPATH ARGS]: netsetup run in the background; sets RUN_PID
start_run() {
	local name=$1 hold=$2
	shift 2
	"$NETSETUP" run --netns "$NSP" --user nobody -- "$SINK" --hold "$hold" "$@" \
		>"$SN_TMP/$name.out" 2>"$SN_TMP/$name.err" &
	RUN_PID=$!
	sn_on_exit "kill -9 $RUN_PID"
	sn_wait_for 10 grep -q '"done"' "$SN_TMP/$name.out" ||
		sn_fail "$name: the datapath never got DONE: $(cat "$SN_TMP/$name.err")"
	[ -z "$(ip -n "$CT" addr show dev eth0 | grep inet)" ] ||
		sn_fail "$name: addresses still on eth0 while the datapath runs"
}

check_restored() {
	ns_settle "$CT"
	ns_snapshot "$CT" "$SN_TMP/after-$1"
	ns_same "$SN_TMP/before" "$SN_TMP/after-$1" "$1"
	! ls "$SANDNET_STATE_DIR"/netns-*.state 2>/dev/null || sn_fail "$1: state file left"
}

# dark_then_detach NAME: run kept the namespace dark; detach gives it back
dark_then_detach() {
	grep -q "stays dark" "$SN_TMP/$1.err" || sn_fail "$1: run did not keep it dark: $(cat "$SN_TMP/$1.err")"
	[ -z "$(ip -n "$CT" addr show dev eth0 | grep 'inet ')" ] || sn_fail "$1: the address came back"
	"$NETSETUP" detach --netns "$NSP" || sn_fail "$1: detach"
	check_restored "$1"
}

sn_log "the datapath exits by itself: dark"
start_run normal 2
grep -q '{"user":"nobody"}' "$SN_TMP/normal.out" || sn_fail "--user nobody did not reach the datapath"
# the namespace's TCP settings: the congestion control it inherited from the
# host (cubic or bbr, both the datapath's), tcp_ecn 2 (the test's)
cc=$(ip netns exec "$CT" sysctl -n net.ipv4.tcp_congestion_control)
[ "$(grep -o '"tcp-[a-z]*":"[a-z]*"' "$SN_TMP/normal.out" | tr '\n' ' ')" = "\"tcp-cc\":\"$cc\" \"tcp-ecn\":\"accept\" " ] ||
	sn_fail "the datapath did not get --tcp-cc $cc --tcp-ecn accept: $(cat "$SN_TMP/normal.out")"
wait "$RUN_PID"; rc=$?
[ "$rc" -eq 0 ] || sn_fail "run exited $rc, the datapath exited 0: $(cat "$SN_TMP/normal.err")"
dark_then_detach normal

sn_log "the namespace's tcp_congestion_control and tcp_ecn reach the datapath, the user's options after them"
ip netns exec "$CT" sysctl -qw net.ipv4.tcp_congestion_control=reno net.ipv4.tcp_ecn=1
start_run tcp 1 --tcp-cc bbr
wait "$RUN_PID"
ip netns exec "$CT" sysctl -qw net.ipv4.tcp_congestion_control="$cc" net.ipv4.tcp_ecn=2
got=$(grep -o '"tcp-[a-z]*":"[a-z]*"' "$SN_TMP/tcp.out" | tr '\n' ' ')
echo "the datapath's TCP options, in order: $got"
[ "$got" = '"tcp-cc":"reno" "tcp-ecn":"on" "tcp-cc":"bbr" ' ] ||
	sn_fail "expected --tcp-cc reno --tcp-ecn on from the namespace, then the user's --tcp-cc bbr: $got"
dark_then_detach tcp

sn_log "the datapath is killed with SIGKILL: dark"
start_run kill 60
child=$(pgrep -P "$RUN_PID" -f proto_sink) || sn_fail "no datapath child of $RUN_PID"
kill -9 "$child"
wait "$RUN_PID"; rc=$?
[ "$rc" -eq 137 ] || sn_fail "run exited $rc after SIGKILL of the datapath, expected 137"
dark_then_detach kill

for sig in TERM INT; do
	sn_log "SIG$sig to netsetup is forwarded"
	start_run "sig$sig" 60
	child=$(pgrep -P "$RUN_PID" -f proto_sink) || sn_fail "no datapath child of $RUN_PID"
	kill -"$sig" "$RUN_PID"
	wait "$RUN_PID"; rc=$?
	want=$((128 + $(kill -l "$sig")))
	[ "$rc" -eq "$want" ] || sn_fail "run exited $rc after SIG$sig, expected $want"
	! kill -0 "$child" 2>/dev/null || sn_fail "the datapath $child survived SIG$sig"
	grep -q "killed by signal $(kill -l "$sig")" "$SN_TMP/sig$sig.err" || sn_fail "no word of the signal"
	check_restored "run, SIG$sig forwarded"
done

sn_log "a datapath that refuses the configuration"
ns_expect_fail "run, datapath refuses a LINK" "proto_sink refuses link eth0" -- \
	"$NETSETUP" run --netns "$NSP" -- "$SINK" --answer error-link
check_restored "run of a datapath that refuses a LINK"

sn_log "a datapath that cannot be executed"
ns_expect_fail "run a missing datapath" "cannot execute|exited with status 127" -- \
	"$NETSETUP" run --netns "$NSP" -- /nonexistent/datapath
check_restored "run of a missing datapath"
echo "run gives everything back on an explicit stop, and only then"
