#!/usr/bin/env bash
# `netsetup serve` on a socket in our temp dir (no systemd), and its client
# `netsetup connect`, which sends ATTACH with the netns fd and becomes the
# datapath on the same socket:
#  - a client that connects and sends nothing does not stall the others;
#  - garbage is answered with a protocol ERROR;
#  - uid 65534 (setpriv) is refused (allowed_uids), so are 3 channels
#    (max_channels = 2; 3 shards too, each a channel) and an interface
#    outside allowed_interfaces: exit status 1 (refused), and 2 for a
#    malformed --shards;
#  - root's request attaches, with --shards 2: the kernel loses the address,
#    the peer pings the container through sandnet, the state names the
#    datapath, which serves in two shards;
#  - the daemon restarted: it finds the state, the datapath keeps serving,
#    nothing is taken or given twice (state file unchanged, no address back);
#  - the datapath killed with SIGKILL: the recovered daemon gives everything
#    back; a second attach, whose datapath asks for 3 shards in its HELLO and
#    gets max_channels (2), killed the same way under the same daemon, too;
#  - a give-back that cannot reach the namespace (its bind mount lost, the
#    datapath gone) keeps the state file and says so; netsetup detach then
#    gives back.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"
command -v setpriv >/dev/null || sn_skip "no setpriv"

sn_netns_add ct
sn_netns_add peer
CT=$(sn_ns ct)
PEER=$(sn_ns peer)
NSP=$(ns_path ct)
sn_veth_add ct eth0 peer veth0
ip -n "$CT" addr add 10.78.0.2/24 dev eth0
ip -n "$CT" route add default via 10.78.0.1
ip -n "$PEER" addr add 10.78.0.1/24 dev veth0
sn_wait_for 10 sh -c "ip -n '$CT' -6 addr show dev eth0 scope link | grep -q inet6" || sn_fail "no link-local on eth0"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"
chmod 755 "$SN_TMP"

SOCK=$SN_TMP/serve.sock
cat >"$SN_TMP/serve.conf" <<EOF
# test policy
allowed_uids = 0
allowed_interfaces = eth0, eth9
gso = auto hw sw off
max_channels = 2
on_datapath_exit = restore
request_timeout = 5
EOF
# The bind mounts serve makes to keep namespaces reachable live in our state dir.
sn_on_exit 'for m in "$SANDNET_STATE_DIR"/*.netns; do umount -l "$m"; done'
DAEMON=
serve_start() {
	"$NETSETUP" serve --socket "$SOCK" --config "$SN_TMP/serve.conf" >>"$SN_TMP/serve.log" 2>&1 &
	DAEMON=$!
	sn_on_exit "kill $DAEMON"
	sn_wait_for 5 test -S "$SOCK" || { cat "$SN_TMP/serve.log"; sn_fail "serve did not start"; }
}
serve_stop() {
	kill "$DAEMON"
	sn_wait_for 5 sh -c "! kill -0 $DAEMON" || sn_fail "serve does not stop on SIGTERM"
	wait "$DAEMON" 2>/dev/null
}
addr_back() { ip -n "$CT" -4 addr show dev eth0 | grep -q "10.78.0.2/24"; }
dp_gone() { [ ! -e "/proc/$1" ] || grep -q ') Z' "/proc/$1/stat"; }

serve_start
sn_log "a silent client holds a connection the whole time"
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); time.sleep(60)' "$SOCK" &
sn_on_exit "kill $!"

sn_log "garbage gets a protocol ERROR"
python3 - "$SOCK" <<'EOF' || sn_fail "garbage not answered with ERROR"
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); s.settimeout(5)
s.send(b"GET / HTTP/1.0\r\n\r\n")
d = s.recv(65536)
magic, ver, minor, typ, length, seq = struct.unpack("=IBBHII", d[:16])
assert magic == 0x534e4554 and typ == 5, (hex(magic), typ)
print("ERROR answer of", len(d), "bytes")
EOF
# the daemon answers first and logs after (serve.c): the line may lag the answer
sn_wait_for 5 grep -q "bad magic" "$SN_TMP/serve.log" ||
	sn_fail "the daemon did not log the garbage: $(cat "$SN_TMP/serve.log")"

sn_log "refusals"
ns_expect_fail -s 1 "uid 65534" "uid 65534 .* is not allowed" -- \
	setpriv --reuid 65534 --regid 65534 --clear-groups "$NETSETUP" connect --socket "$SOCK" --netns "$NSP" -- "$DATAPATH"
ns_expect_fail -s 1 "3 channels" "at most 2 allowed \(max_channels\)" -- \
	"$NETSETUP" connect --socket "$SOCK" --netns "$NSP" --iface eth0 --channels 3 -- "$DATAPATH"
ns_expect_fail -s 1 "3 shards" "3 shards asked, each a channel per link, at most 2 allowed \(max_channels\)" -- \
	"$NETSETUP" connect --socket "$SOCK" --netns "$NSP" --iface eth0 --shards 3 -- "$DATAPATH"
ns_expect_fail -s 2 "--shards 0" "--shards 0: out of range 1..64" -- \
	"$NETSETUP" connect --socket "$SOCK" --netns "$NSP" --iface eth0 --shards 0 -- "$DATAPATH"
ns_expect_fail -s 1 "interface not allowed" "interface lo is not allowed" -- \
	"$NETSETUP" connect --socket "$SOCK" --netns "$NSP" --iface lo -- "$DATAPATH"
ns_expect_fail -s 1 "not a netns" "not a network namespace" -- \
	"$NETSETUP" connect --socket "$SOCK" --netns /proc/self/ns/uts -- "$DATAPATH"
ns_snapshot "$CT" "$SN_TMP/after-refusals"
ns_same "$SN_TMP/before" "$SN_TMP/after-refusals" "namespace after refused requests"

sn_log "root attaches through the daemon, with two shards"
"$NETSETUP" connect --socket "$SOCK" --netns "$NSP" --iface eth0 --shards 2 -- "$DATAPATH" >"$SN_TMP/dp1.log" 2>&1 &
DP=$!
sn_on_exit "kill -9 $DP"
sn_wait_for 10 sh -c "ls '$SANDNET_STATE_DIR'/*.state" || { cat "$SN_TMP/serve.log" "$SN_TMP/dp1.log"; sn_fail "no state file"; }
STATE=$(ls "$SANDNET_STATE_DIR"/*.state)
sn_wait_for 10 sh -c "! ip -n '$CT' -4 addr show dev eth0 | grep -q inet" || sn_fail "the kernel keeps the address"
grep -q "^owner serve:$DP$" "$STATE" && grep -q "^datapath $DP " "$STATE" || sn_fail "state: $(cat "$STATE")"
ip netns exec "$PEER" ping -c 3 -i 0.2 -W 2 10.78.0.2 || { cat "$SN_TMP/dp1.log"; sn_fail "ping through sandnet"; }
grep -q "^datapath: serving 1 link(s), 0 service(s) as uid [0-9]* in 2 shards" "$SN_TMP/dp1.log" ||
	{ cat "$SN_TMP/dp1.log"; sn_fail "the datapath does not serve in the two shards connect asked for"; }
ns_expect_fail "same netns twice" "already attached" -- \
	"$NETSETUP" connect --socket "$SOCK" --netns "$NSP" --iface eth0 -- "$DATAPATH"

sn_log "daemon restart: state found, nothing lost or applied twice"
cp "$STATE" "$SN_TMP/state.before-restart"
serve_stop
kill -0 "$DP" || sn_fail "the datapath died with the daemon"
# Under systemd the new daemon gets a new mount namespace: the bind mount is lost.
umount -l "${STATE%.state}.netns" || sn_fail "no bind mount ${STATE%.state}.netns"
serve_start
sn_wait_for 5 grep -q "recovered .* still serves" "$SN_TMP/serve.log" || sn_fail "restart: $(cat "$SN_TMP/serve.log")"
sn_wait_for 5 grep -q "found again through the datapath's sockets" "$SN_TMP/serve.log" ||
	sn_fail "the lost bind mount was not made again: $(cat "$SN_TMP/serve.log")"
cmp "$STATE" "$SN_TMP/state.before-restart" || sn_fail "restart changed the state file"
! addr_back || sn_fail "restart gave the address back while the datapath serves"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.78.0.2 || sn_fail "ping after the daemon restart"

sn_log "the datapath killed with SIGKILL: the recovered daemon gives back"
kill -9 "$DP"
sn_wait_for 10 addr_back || { cat "$SN_TMP/serve.log"; sn_fail "address not restored after SIGKILL"; }
sn_wait_for 5 sh -c "! ls '$SANDNET_STATE_DIR'/*.state" || sn_fail "state file left"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-kill"
ns_same "$SN_TMP/before" "$SN_TMP/after-kill" "namespace after SIGKILL (recovered daemon)"

sn_log "again, under the daemon that attached it: a datapath asking for 3 shards gets max_channels, 2"
"$NETSETUP" connect --socket "$SOCK" --netns "$NSP" --iface eth0 -- "$DATAPATH" --shards 3 >"$SN_TMP/dp2.log" 2>&1 &
DP=$!
sn_on_exit "kill -9 $DP"
sn_wait_for 10 sh -c "! ip -n '$CT' -4 addr show dev eth0 | grep -q inet" || sn_fail "second attach"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.78.0.2 || sn_fail "ping, second attach"
grep -q "^datapath: serving 1 link(s), 0 service(s) as uid [0-9]* in 2 shards" "$SN_TMP/dp2.log" ||
	{ cat "$SN_TMP/dp2.log"; sn_fail "a datapath's --shards 3 was not held to max_channels 2"; }
kill -9 "$DP"
sn_wait_for 10 addr_back || { cat "$SN_TMP/serve.log"; sn_fail "address not restored after SIGKILL (worker)"; }
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-kill2"
ns_same "$SN_TMP/before" "$SN_TMP/after-kill2" "namespace after SIGKILL (worker)"
ip netns exec "$PEER" ping -c 1 -W 2 10.78.0.2 || sn_fail "the kernel does not answer"

sn_log "a give-back that cannot reach the namespace keeps the state: netsetup detach gives back"
"$NETSETUP" connect --socket "$SOCK" --netns "$NSP" --iface eth0 -- "$DATAPATH" >"$SN_TMP/dp3.log" 2>&1 &
DP=$!
sn_on_exit "kill -9 $DP"
# serving, not only taken over: the address goes at takeover, before the
# handoff, and a kill in between fails the attach (and gives back) instead
sn_wait_for 10 grep -q "^datapath: serving" "$SN_TMP/dp3.log" || { cat "$SN_TMP/dp3.log"; sn_fail "third attach"; }
! ip -n "$CT" -4 addr show dev eth0 | grep -q inet || sn_fail "third attach: the kernel keeps the address"
STATE=$(ls "$SANDNET_STATE_DIR"/*.state)
sn_wait_for 5 grep -q "^datapath $DP " "$STATE" || sn_fail "third attach: state $(cat "$STATE")"
# the bind mount lost (a daemon restarted under systemd) and the datapath gone
# with it: nothing reaches the namespace, which is not gone for all that
umount -l "${STATE%.state}.netns" || sn_fail "no bind mount ${STATE%.state}.netns"
kill -9 "$DP"
sn_wait_for 10 grep -q "cannot be reached (its bind mount is not in this mount namespace" "$SN_TMP/serve.log" ||
	sn_fail "the give-back did not say it could not reach the namespace: $(tail -n 3 "$SN_TMP/serve.log")"
[ -e "$STATE" ] || sn_fail "the state was removed as if given back"
! addr_back || sn_fail "the address came back without a namespace to give it in"
"$NETSETUP" detach --netns "$NSP" || sn_fail "netsetup detach of the kept state"
addr_back || sn_fail "detach did not give the address back"
[ ! -e "$STATE" ] || sn_fail "detach left the state"
echo "ok: the state was kept and said so; netsetup detach gave back"
serve_stop
! grep -Eq 'Sanitizer|runtime error' "$SN_TMP/serve.log" || sn_fail "sanitizer: $(cat "$SN_TMP/serve.log")"
cat "$SN_TMP/serve.log"
echo "serve: refusals, attach, restart, restore on SIGKILL"
