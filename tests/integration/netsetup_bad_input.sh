#!/usr/bin/env bash
# Every bad input of issue 3 fails with a message that names the problem and
# leaves the namespace exactly as it was: no such netns or pid, not a netns
# file, the host's own netns, no CAP_SYS_ADMIN, no usable link, unknown
# --iface, --gso hw without GSO, --channels 0 or absurd, a datapath socket
# that is missing, not listening, not SOCK_SEQPACKET, answering ERROR or a
# wrong version, and malformed flags (exit status 2).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

sn_netns_add ct
sn_netns_add peer
sn_netns_add empty
sn_veth_add ct eth0 peer veth0
sn_veth_add empty eth0 peer veth9
CT=$(sn_ns ct)
NSP=$(ns_path ct)
ip -n "$(sn_ns empty)" link set eth0 down
ip -n "$CT" addr add 10.251.0.2/24 dev eth0
ip -n "$CT" route add default via 10.251.0.1
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"
ns_sink_start ok
SOCK=$SN_TMP/ok.sock

unchanged() {
	ns_settle "$CT"
	ns_snapshot "$CT" "$SN_TMP/now"
	ns_same "$SN_TMP/before" "$SN_TMP/now" "$1"
	! ls "$SANDNET_STATE_DIR"/netns-*.state 2>/dev/null || sn_fail "$1: state file left"
}
fail() { ns_expect_fail "$@"; unchanged "$1"; }

sn_log "namespaces"
fail "no such netns" "no such file" -- "$NETSETUP" attach --netns /run/netns/sn-none-$$ --datapath "$SOCK"
fail "no such pid" "no such process" -- "$NETSETUP" attach --pid 2147483647 --datapath "$SOCK"
fail "not a netns file" "not a network namespace file" -- "$NETSETUP" attach --netns /etc/hostname --datapath "$SOCK"
fail "another namespace kind" "not a network namespace file \(a namespace of another kind\)" -- \
	"$NETSETUP" attach --netns /proc/self/ns/uts --datapath "$SOCK"
fail "host netns by pid" "host's network namespace" -- "$NETSETUP" attach --pid 1 --datapath "$SOCK"
# /proc/1/ns/net may be unreadable inside a sandbox: then our own namespace,
# which is the host's here, is what must be refused.
fail "host netns by path" "host's network namespace|netsetup's own" -- \
	"$NETSETUP" attach --netns /proc/self/ns/net --datapath "$SOCK"
if stat -L /proc/1/ns/net >/dev/null 2>&1; then
	fail "host netns by /proc/1 path" "host's network namespace" -- \
		"$NETSETUP" attach --netns /proc/1/ns/net --datapath "$SOCK"
fi
fail "detach of the host netns" "host's network namespace" -- "$NETSETUP" detach --pid 1
fail "run in the host netns" "host's network namespace" -- "$NETSETUP" run --pid 1 -- "$SINK"

sn_log "privilege"
if command -v capsh >/dev/null; then
	fail "attach without CAP_SYS_ADMIN" "CAP_SYS_ADMIN" -- \
		capsh --drop=cap_sys_admin -- -c "exec '$NETSETUP' attach --netns '$NSP' --datapath '$SOCK'"
	fail "gso show without CAP_SYS_ADMIN" "CAP_SYS_ADMIN" -- \
		capsh --drop=cap_sys_admin -- -c "exec '$NETSETUP' gso show --netns '$NSP'"
	fail "detach without CAP_SYS_ADMIN" "CAP_SYS_ADMIN" -- \
		capsh --drop=cap_sys_admin -- -c "exec '$NETSETUP' detach --netns '$NSP'"
	fail "attach without CAP_NET_ADMIN" "CAP_NET_ADMIN" -- \
		capsh --drop=cap_net_admin -- -c "exec '$NETSETUP' attach --netns '$NSP' --datapath '$SOCK'"
else
	fail "attach without CAP_SYS_ADMIN" "CAP_SYS_ADMIN" -- \
		setpriv --bounding-set -sys_admin --inh-caps -sys_admin "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK"
fi

sn_log "links"
fail "no usable link" "no usable link \(lo: loopback, eth0: down\)" -- \
	"$NETSETUP" attach --netns "$(ns_path empty)" --datapath "$SOCK"
fail "unknown --iface" "--iface eth7: no such link" -- "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --iface eth7
fail "--iface lo" "--iface lo: cannot be served: loopback" -- "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --iface lo
fail "gso show of an unknown link" "link eth7: no such link" -- "$NETSETUP" gso show --netns "$NSP" eth7
ip netns exec "$CT" ethtool -K eth0 tso off gso off >/dev/null
fail "--gso hw without GSO" "GSO mode hw refused" -- "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --gso hw
ip netns exec "$CT" ethtool -K eth0 tso on gso on >/dev/null

sn_log "datapath socket"
fail "datapath socket missing" "no such file \(is the datapath running\?\)" -- \
	"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/missing.sock"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1])' "$SN_TMP/stale.sock"
fail "datapath not listening" "nobody is listening" -- "$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/stale.sock"
socat UNIX-LISTEN:"$SN_TMP/stream.sock",fork /dev/null &
sn_on_exit "kill $!"
sn_wait_for 5 test -S "$SN_TMP/stream.sock" || sn_fail "socat did not listen"
fail "datapath socket of the wrong type" "not a SOCK_SEQPACKET socket" -- \
	"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/stream.sock"
fail "datapath socket is a regular file" "/etc/hostname: not a socket" -- "$NETSETUP" attach --netns "$NSP" --datapath /etc/hostname
ns_sink_start bad --answer badversion
fail "datapath speaks another version" "versions?.*99|99.*version" -- \
	"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/bad.sock"
ns_sink_start err --answer error
fail "datapath answers ERROR" "peer refused: proto_sink refuses DONE" -- \
	"$NETSETUP" attach --netns "$NSP" --datapath "$SN_TMP/err.sock"

sn_log "malformed command lines exit 2"
usage() {
	local what=$1 words=$2 rc; shift 2
	"$@" >/dev/null 2>&1; rc=$?
	[ "$rc" -eq 2 ] || sn_fail "$what: exit $rc, expected 2"
	fail "$what" "$words" -- "$@"
}
usage "--channels 0" "--channels 0: out of range 1..64" "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --channels 0
usage "--channels absurd" "--channels 1000: out of range" "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --channels 1000
usage "--channels not a number" "--channels 'two': not a number" "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --channels two
usage "--shards 0" "--shards 0: out of range 1..64" "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --shards 0
usage "--shards above 64" "--shards 65: out of range 1..64" "$NETSETUP" run --netns "$NSP" --shards 65 -- "$DATAPATH"
usage "--shards not a number" "--shards 'all': not a number" "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --shards all
usage "--shards and --channels" "--channels 4 and --shards 2: each shard has one channel per link" \
	"$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --shards 2 --channels 4
usage "--pid not a number" "--pid 'abc': not a number" "$NETSETUP" attach --pid abc --datapath "$SOCK"
usage "--pid negative" "--pid '-5': not a number" "$NETSETUP" attach --pid -5 --datapath "$SOCK"
usage "--gso unknown" "--gso 'fast': expected auto, hw, sw or off" "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --gso fast
usage "--gso-max-size tiny" "--gso-max-size 10: out of range" "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --gso-max-size 10
usage "unknown option" "unknown option '--bogus'" "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --bogus
usage "missing value" "missing the value of" "$NETSETUP" attach --netns "$NSP" --datapath
usage "no --datapath" "give --datapath SOCKET" "$NETSETUP" attach --netns "$NSP"
usage "no namespace" "give --netns PATH or --pid PID" "$NETSETUP" attach --datapath "$SOCK"
usage "--netns and --pid" "one of --netns or --pid" "$NETSETUP" attach --netns "$NSP" --pid 1 --datapath "$SOCK"
usage "option of another command" "'--datapath' does not apply" "$NETSETUP" detach --netns "$NSP" --datapath "$SOCK"
usage "--user outside run" "'--user' does not apply" "$NETSETUP" attach --netns "$NSP" --datapath "$SOCK" --user nobody
usage "run without a datapath" "no datapath command" "$NETSETUP" run --netns "$NSP" --
usage "stray argument" "unexpected argument 'extra'" "$NETSETUP" detach --netns "$NSP" extra
usage "gso without show" "expected 'gso show'" "$NETSETUP" gso list
usage "unknown command" "unknown command 'frobnicate'" "$NETSETUP" frobnicate
"$NETSETUP" help | grep -q "netsetup attach" || sn_fail "help does not show the usage"
echo "every bad input refused, nothing changed"
