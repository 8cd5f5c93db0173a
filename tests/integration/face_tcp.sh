#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# The container face, TCP out: programs inside the container reach kernel
# servers in the peer through sandnet's stack (issue 9), and see what they
# would see without it:
#  - curl of 1 B and 64 MiB (sha256) over IPv4 and IPv6, iperf3 both ways,
#    with the peer's checksum offload off and no checksum error anywhere;
#  - connect() errors: ECONNREFUSED (RST), EHOSTUNREACH and ENETUNREACH (the
#    peer's ICMP errors, IPv4 and IPv6), ETIMEDOUT (silence);
#  - half-close and RST both ways;
#  - the peer sees the container's own address and port;
#  - every connection is a pair in `datapath stats`, and the pairs end.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

command -v iperf3 >/dev/null || sn_skip "iperf3 not installed"
dp_env_up
face_check_fenced
tcp_peer_csum_off
tcp_files "$SN_TMP"
tcp_http "$PEER" "::" 8000 "$SN_TMP"

sn_log "curl from inside the container, IPv4 and IPv6"
for host in 10.77.0.1 "[fd77::1]"; do
	tcp_fetch "$CT" "http://$host:8000/f1" "$SN_TMP/f1"
	tcp_fetch "$CT" "http://$host:8000/f64m" "$SN_TMP/f64m"
done
grep -q '10.77.0.2' "$SN_TMP/http-8000.log" || sn_fail "the peer did not see the container's address"
grep -q 'fd77::2' "$SN_TMP/http-8000.log" || sn_fail "the peer did not see the container's IPv6 address"

sn_log "iperf3 from inside, both directions"
ip netns exec "$PEER" iperf3 -s -p 5201 >"$SN_TMP/iperf3.log" 2>&1 &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 5201
for dir in "" "-R"; do
	out=$(ip netns exec "$CT" timeout 20 iperf3 -c 10.77.0.1 -p 5201 -t 2 -J $dir) ||
		sn_fail "iperf3 $dir failed"
	echo "$out" | python3 -c "
import json, sys
r = json.load(sys.stdin)['end']
bps = r['sum_received']['bits_per_second']
assert r['sum_received']['bytes'] > 0, r
print(f'iperf3 ${dir:-out}: {bps / 1e9:.2f} Gbit/s')" || sn_fail "iperf3 $dir moved nothing"
done

sn_log "connect() errors are the kernel's"
face_peer_router
ip netns exec "$CT" sysctl -qw net.ipv4.tcp_syn_retries=1
ip netns exec "$PEER" nft add table inet sndrop
ip netns exec "$PEER" nft add chain inet sndrop in "{ type filter hook input priority 0; }"
ip netns exec "$PEER" nft add rule inet sndrop in tcp dport 81 drop
check_errno() {
	local want=$1 got; shift
	got=$(face_errno "$CT" "$@")
	echo "connect $*: $got"
	[ "$got" = "$want" ] || { face_unreach_evidence "$2"; sn_fail "connect $*: got $got, want $want"; }
}
face_trace_start 30
check_errno ECONNREFUSED 4 10.77.0.1 9
check_errno ECONNREFUSED 6 fd77::1 9
check_errno EHOSTUNREACH 4 10.98.0.1 80
check_errno ENETUNREACH 4 10.99.0.1 80
check_errno ENETUNREACH 6 fd98::1 80
check_errno ETIMEDOUT 4 10.77.0.1 81 15

sn_log "half-close both ways, RST both ways"
ip netns exec "$PEER" python3 - >"$SN_TMP/halfsrv.log" 2>&1 <<'PY' &
import socket, struct
ls = socket.socket(socket.AF_INET6); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("::", 7000)); ls.listen(8)
for mode in ("client-half", "server-half", "server-rst", "client-rst"):
    c, a = ls.accept()
    print(mode, a, flush=True)
    if mode == "client-half":          # read to EOF, then answer
        data = b""
        while True:
            d = c.recv(65536)
            if not d:
                break
            data += d
        c.sendall(b"got %d" % len(data)); c.close()
    elif mode == "server-half":        # say something, shut down, keep reading
        c.sendall(b"hello"); c.shutdown(socket.SHUT_WR)
        n = 0
        while True:
            d = c.recv(65536)
            if not d:
                break
            n += len(d)
        print("server-half read", n, flush=True); c.close()
    elif mode == "server-rst":
        c.recv(10)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close()
    else:
        try:
            while c.recv(65536):
                pass
            print("client-rst: EOF", flush=True)
        except ConnectionResetError:
            print("client-rst: reset", flush=True)
PY
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 7000
ip netns exec "$CT" python3 - <<'PY' || sn_fail "half-close / RST from inside"
import socket, struct, time
def conn():
    s = socket.create_connection(("fd77::1", 7000), timeout=10); return s
s = conn(); s.sendall(b"x" * 1000000); s.shutdown(socket.SHUT_WR)
r = b""
while True:
    d = s.recv(100)
    if not d:
        break
    r += d
assert r == b"got 1000000", r
print("client half-close ok")
s = conn(); assert s.recv(5) == b"hello"; assert s.recv(5) == b""   # the server's FIN
s.sendall(b"y" * 300000); s.close()
print("server half-close ok")
s = conn(); s.sendall(b"ping")
try:
    while s.recv(100):
        pass
    raise SystemExit("server RST: got EOF, want ECONNRESET")
except ConnectionResetError:
    print("server RST -> ECONNRESET ok")
s = conn(); s.sendall(b"z" * 1000); time.sleep(0.3)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); s.close()
PY
sn_wait_for 10 grep -q "client-rst: reset" "$SN_TMP/halfsrv.log" || {
	cat "$SN_TMP/halfsrv.log"; sn_fail "the peer did not see the container's RST"; }
grep -q "server-half read 300000" "$SN_TMP/halfsrv.log" || {
	cat "$SN_TMP/halfsrv.log"; sn_fail "data after the server's FIN was lost"; }

sn_log "stats: pairs, and none left"
dp_stats | sed -n '/^face:/,/^  drops/p'
[ "$(dp_stat "d['face']['counters']['tcp_outbound']")" -ge 10 ] || sn_fail "too few outbound pairs counted"
[ "$(dp_stat "d['face']['counters']['tcp_refused']")" -ge 2 ] || sn_fail "refusals not counted"
[ "$(dp_stat "d['face']['counters']['tcp_unreachable']")" -ge 3 ] || sn_fail "ICMP errors not counted"
# bytes copied once (face_pair_sink()): the 64 MiB downloads and iperf3's
# two directions took the direct way into the other engine's send ring
[ "$(dp_stat "d['tcp']['rcv_sunk_bytes']")" -ge 67108864 ] || sn_fail "inbound bytes did not go straight to the inner send ring"
[ "$(dp_stat "d['face_tcp']['rcv_sunk_bytes']")" -ge 1000000 ] || sn_fail "outbound bytes did not go straight to the outer send ring"
# the network side's ACKs for those bytes waited for the turn's end
# (tcp_conn_ack_at_push()): a download of 64 MiB has hundreds due
at_push=$(dp_stat "d['tcp']['acks_at_push']")
sn_log "ACKs that waited for the turn's end: $at_push"
[ "$at_push" -ge 100 ] || sn_fail "no ACK of the network side waited for the turn's end ($at_push)"
[ "$(dp_stat "d['face_tcp']['acks_at_push']")" -eq 0 ] || sn_fail "the container's side had its ACKs thinned"
# system calls per connection: every link's reads and writes and the loop's
# waits, over the pairs (this run moves megabytes on few connections and
# waits in between: thousands a connection; bench/nginx.sh has short flows)
dp_stats --json | python3 -c '
import json, sys
t = json.load(sys.stdin)["totals"]
n = t["tcp_outbound"] + t["tcp_inbound"]
assert t["syscalls"] > n, t
assert abs(t["syscalls_per_tcp_connection"] - t["syscalls"] / n) < 0.01, t
print("syscalls per TCP connection:", t["syscalls_per_tcp_connection"])' || sn_fail "totals.syscalls"
# the one attempt the container gave up on (ETIMEDOUT) waits for the
# network side's own timeout; every other pair has ended
pairs_left() {
	dp_stats_sum | python3 -c '
import json, sys
p = json.load(sys.stdin)["face"]["pairs"]
left = [x for x in p if x["outer_state"] != "SYN-SENT"]
print(len(left))
for x in left: print(x, file=sys.stderr)'
}
no_pairs_left() { [ "$(pairs_left 2>/dev/null)" = 0 ]; }
sn_wait_for 10 no_pairs_left || { pairs_left; sn_fail "pairs are left after their connections ended"; }
face_check_clean
dp_env_down
echo ok
