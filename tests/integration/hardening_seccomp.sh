#!/usr/bin/env bash
# The datapath's seccomp filter (datapath/proc/seccomp.c), on the real process:
#  - a running datapath has a filter loaded (/proc/PID/status: Seccomp 2)
#    and still does what the loop needs after the drop: ping, a UDP publish
#    whose backend flow socket() is made after the drop, the control socket
#    (`datapath stats`), and a clean stop within 30 s (exit, and in an ASan
#    build LeakSanitizer's checks, run under the filter too);
#  - with SANDNET_SECCOMP_SELFTEST=1 the datapath tries socket(AF_PACKET)
#    right after loading the filter (before the ACK of DONE) and is killed
#    by SIGSYS: its exit status is 128 + 31, `netsetup attach` fails, and
#    the address is back with the kernel.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"

grep -q 'dp_seccomp_install' "$SANDNET_TESTS/../datapath/main.c" 2>/dev/null ||
	sn_skip "the filter is not hooked into datapath/main.c"

dp_env_up --publish udp:5000=127.0.0.1:6000
sn_udp_echo "$DPNS" 127.0.0.1 6000

sn_log "the running datapath is filtered"
grep -E '^(Seccomp|Seccomp_filters|NoNewPrivs):' "/proc/$DP_PID/status"
grep -Eq '^Seccomp:[[:space:]]+2$' "/proc/$DP_PID/status" || sn_fail "no seccomp filter on pid $DP_PID"

sn_log "and still serves: ping, a published UDP port, stats"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 || sn_fail "ping under the filter"
ip netns exec "$PEER" python3 - <<'PY' || sn_fail "UDP publish under the filter"
import os, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
data = os.urandom(1000)
for attempt in range(3):
    s.sendto(data, ("10.77.0.2", 5000))
    try:
        r, a = s.recvfrom(70000); break
    except socket.timeout:
        continue
else:
    raise SystemExit("no echo")
assert r == data
print("UDP echo through the published port: ok")
PY
dp_stats >/dev/null || sn_fail "datapath stats under the filter"
kill -0 "$DP_PID" || sn_fail "the datapath died: $(cat "$DP_LOG")"
# Exit runs under the filter too (and LeakSanitizer's stop-the-world in an
# ASan build): a missing system call there kills or hangs it.
kill "$DP_NS_PID"
sn_wait_for 30 sh -c "! kill -0 $DP_PID" || { kill -9 "$DP_PID"; sn_fail "the filtered datapath did not exit"; }
dp_env_down
dp_env_reset

sn_log "a forbidden system call kills it"
CT=$(sn_ns ct)
sn_netns_add ct
sn_netns_add peer
sn_netns_add dp
sn_veth_add ct eth0 peer veth0
ip -n "$CT" addr add 10.77.0.2/24 dev eth0
sock=$SN_TMP/listen.sock
# Started by this shell (not by netsetup run) so that `wait` sees how it ended.
SANDNET_SECCOMP_SELFTEST=1 ip netns exec "$DPNS" "$DATAPATH" --listen "$sock" >"$DP_LOG" 2>&1 &
pid=$!
sn_wait_for 5 test -S "$sock" || sn_fail "no listening socket at $sock"
ip netns exec "$DPNS" "$NETSETUP" attach --netns "/run/netns/$CT" --datapath "$sock" >"$SN_TMP/attach.log" 2>&1 &&
	sn_fail "netsetup attach succeeded with a datapath that made a forbidden call"
wait "$pid"
rc=$?
cat "$DP_LOG" "$SN_TMP/attach.log"
grep -q "seccomp self-test: socket(AF_PACKET) must kill us now" "$DP_LOG" || sn_fail "self-test did not run"
! grep -q "self-test FAILED" "$DP_LOG" || sn_fail "socket(AF_PACKET) was allowed"
[ "$rc" -eq $((128 + 31)) ] || sn_fail "datapath exit status $rc, expected $((128 + 31)) (SIGSYS)"
sn_wait_for 5 sh -c "ip -n '$CT' -4 addr show dev eth0 | grep -q 10.77.0.2" || sn_fail "address not given back"
echo "seccomp: filter loaded, the loop works under it, socket(AF_PACKET) kills with SIGSYS"
