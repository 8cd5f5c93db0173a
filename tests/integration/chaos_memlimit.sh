#!/usr/bin/env bash
# sandnet-test: alone (10 000 connections, and a memory limit it watches)
# The datapath held to 64 MiB by its cgroup (issue 41, "chaos cases"),
# cgroup v1's memory.limit_in_bytes: netsetup run, its supervisor and the
# datapath all in it. The container opens 10 000 connections to the peer
# and holds them. Checked:
#  - the datapath read the limit and fitted the caps the command line left
#    to their defaults (its log says so; `datapath stats` shows them);
#  - it is never OOM-killed (the cgroup's oom_kill stays 0, the same datapath
#    serves, the supervisor counts no death): the caps hold, and the
#    connections over them are refused and counted (limits hits);
#  - the connections it took all work (a byte echoed on each of a sample),
#    and once they are closed a new one does too.
# Skipped under the sanitizers (their own memory is far above 64 MiB) and
# where the memory controller of cgroup v1 is not mounted.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

[ -z "${SANDNET_SANITIZED:-}" ] || sn_skip "the sanitizers' own memory is far above the 64 MiB limit"
MEMCG_ROOT=/sys/fs/cgroup/memory
[ -w "$MEMCG_ROOT/cgroup.procs" ] || sn_skip "no cgroup v1 memory controller at $MEMCG_ROOT"
LIMIT_MB=64
CONNS=10000
CG=$MEMCG_ROOT/sandnet-test-$$
mkdir "$CG" || sn_fail "mkdir $CG"
sn_on_exit "for _cg_try in \$(seq 50); do rmdir '$CG' 2>/dev/null && break; sleep 0.1; done"
echo $((LIMIT_MB << 20)) >"$CG/memory.limit_in_bytes" || sn_fail "memory.limit_in_bytes"
# netsetup run goes into the cgroup before it starts anything: its children are born
# there. `ip netns exec` mounted a sysfs of its own, without the cgroup hierarchies:
# the memory controller's is mounted again in that mount namespace, where it was.
cat >"$SN_TMP/incg.sh" <<EOF
#!/bin/sh
mount -t tmpfs sn-cgroup /sys/fs/cgroup && mkdir /sys/fs/cgroup/memory &&
	mount -t cgroup -o memory sn-memcg /sys/fs/cgroup/memory &&
	echo \$\$ >"$CG/cgroup.procs" && exec "\$@"
EOF
chmod +x "$SN_TMP/incg.sh"

DP_GSO=hw
DP_WRAP=$SN_TMP/incg.sh
dp_env_up
face_check_fenced
tcp_peer_csum_off
grep -q "datapath: a memory limit of $LIMIT_MB MiB: --max-conns" "$DP_LOG" ||
	sn_fail "the datapath did not read its limit: $(cat "$DP_LOG")"
grep "a memory limit" "$DP_LOG" | head -n 1
grep -qx "$DP_PID" "$CG/cgroup.procs" || sn_fail "the datapath $DP_PID is not in $CG"
max=$(dp_stat "sum(s['limits']['face_tcp_conns']['max'] for s in [raw] + raw.get('shards', []))")
[ "$max" -lt "$CONNS" ] || sn_fail "the caps were not lowered: face_tcp_conns max $max"
echo "ok: face_tcp_conns max $max in all (default 65536)"

# the peer takes and holds every connection, echoing what comes
ip netns exec "$PEER" python3 "$SANDNET_TESTS/lib/conns.py" take 0.0.0.0 8002 echo &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 8002
deaths0=$(dp_stat "raw['supervisor']['deaths']")

sn_log "$CONNS connections from the container, held"
ip netns exec "$CT" python3 - "$CONNS" "$SN_TMP/conns.out" <<'PY' &
import errno, resource, selectors, socket, sys, time
n = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
sel = selectors.DefaultSelector()
pending, up, failed = {}, [], 0
start = time.monotonic()
for i in range(n):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("10.77.0.1", 8002))
    pending[s.fileno()] = s
    sel.register(s, selectors.EVENT_WRITE)
    if i % 500 == 499:		# in steps: the container's SYN queue is not the test
        time.sleep(0.05)
deadline = time.monotonic() + 20
while pending and time.monotonic() < deadline:
    for key, _ in sel.select(timeout=0.5):
        s = key.fileobj
        sel.unregister(s)
        del pending[s.fileno()]
        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
            up.append(s)
        else:
            failed += 1
            s.close()
# a byte echoed on every 50th connection taken
ok = 0
for s in up[::50]:
    s.setblocking(True)
    s.settimeout(5)
    try:
        s.send(b"x")
        ok += s.recv(1) == b"x"
    except OSError:
        pass
with open(sys.argv[2] + ".tmp", "w") as f:
    print(len(up), failed, len(pending), ok, len(up[::50]), file=f)
import os
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(60)		# held while the test reads the counters, then killed
PY
HOLD_PID=$!
sn_on_exit "kill $HOLD_PID 2>/dev/null"
sn_wait_for 60 test -s "$SN_TMP/conns.out" || sn_fail "the client did not finish"
read -r up failed pending echoed sampled <"$SN_TMP/conns.out"
echo "connected $up, failed $failed, still pending after 20 s $pending; echoed on $echoed of $sampled sampled"
[ "$up" -ge 1000 ] || sn_fail "only $up connections were taken"
[ "$echoed" = "$sampled" ] || sn_fail "a taken connection did not echo: $echoed of $sampled"
[ "$up" -lt "$CONNS" ] || sn_fail "all $CONNS connections were taken: the cap did not hold"

sn_log "no OOM kill: the caps held, the refusals counted"
oom=$(sed -n 's/^oom_kill //p' "$CG/memory.oom_control")
[ "${oom:-0}" = 0 ] || sn_fail "the cgroup's OOM killer killed $oom process(es)"
peak=$(($(cat "$CG/memory.max_usage_in_bytes") >> 20))
echo "ok: no OOM kill; the cgroup's peak $peak MiB of $LIMIT_MB"
[ "$(dp_stat "raw['pid']")" = "$DP_PID" ] || sn_fail "another datapath serves now"
[ "$(dp_stat "raw['supervisor']['deaths']")" = "$deaths0" ] || sn_fail "the datapath died"
hits=$(dp_stat "sum(s['limits'][k]['hits'] for s in [raw] + raw.get('shards', []) for k in ('face_tcp_conns', 'tcp_conns', 'face_tcp_half_open', 'tcp_half_open'))")
[ "$hits" -gt 0 ] || sn_fail "no cap counted a refusal"
echo "ok: the caps counted $hits refusals"
kill "$HOLD_PID"
wait "$HOLD_PID" 2>/dev/null
sleep 1
[ "$(face_errno "$CT" 4 10.77.0.1 8002 10)" = connected ] || sn_fail "a new connection after they closed"
echo "ok: a new connection after the $up closed"
dp_env_down
