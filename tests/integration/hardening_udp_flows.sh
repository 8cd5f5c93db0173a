#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# UDP flow caps from the container's side (issue 8; docs/security.md): the
# datapath serves --publish udp:5000 (a UDP echo behind it) with
# --max-udp-flows-per-source 64 and --max-udp-flows 512. From the peer netns,
# with three more addresses on its veth (10.77.0.11-13), a python3 flooder
# sends from FLOOD_PORTS (300) new source ports per address per round, for
# FLOOD_SECS (4) seconds at FLOOD_PPS (5000) datagrams/s at most (the caps are
# under test, not the datapath's speed: a new flow costs it four system calls,
# and the ASan build is slower): every datagram would open a flow (a backend
# socket held for 3 minutes of idleness). Meanwhile a legitimate client on another
# address (10.77.0.20) asks for an echo every 100 ms. Then:
#  - each flooding address holds exactly 64 flows (limits.udp_flows_per_source
#    .used == 64, its hits counted, in the service row as source_cap_hits), the
#    total stays under the total cap, and the datapath's fds beyond the ones
#    before the flood are at most its flows (/proc/PID/fd);
#  - the legitimate client got its echoes during the flood;
#  - a client on 10.77.0.20 that makes 150 short exchanges, each from a new
#    source port (more than its 64 slots), gets every answer: only its own
#    oldest flows are recycled;
#  - the datapath stops cleanly.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
SECS=${FLOOD_SECS:-4}
PORTS=${FLOOD_PORTS:-300}
PPS=${FLOOD_PPS:-5000}
PER_SOURCE=64
TOTAL=512

dp_env_up --publish udp:5000=127.0.0.1:6000 --max-udp-flows-per-source $PER_SOURCE \
	--max-udp-flows $TOTAL
sn_udp_echo "$DPNS" 127.0.0.1 6000
for a in 11 12 13 20; do
	ip -n "$PEER" addr add 10.77.0.$a/24 dev veth0 || sn_fail "cannot add 10.77.0.$a to the peer"
done

fds() { ls "/proc/$DP_PID/fd" | wc -l; }
# echo_check SRC COUNT: COUNT exchanges from SRC, each from a new source port; all must be answered
echo_check() {
	ip netns exec "$PEER" python3 - "$1" "$2" <<'PY'
import os, socket, sys
src, count = sys.argv[1], int(sys.argv[2])
lost = 0
for i in range(count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
    s.bind((src, 0))
    data = os.urandom(64)
    for attempt in range(3):
        s.sendto(data, ("10.77.0.2", 5000))
        try:
            r, a = s.recvfrom(2048)
            if r == data:
                break
        except socket.timeout:
            continue
    else:
        lost += 1
    s.close()
print(f"{count} exchanges from {src}, each from a new source port: {count - lost} answered")
sys.exit(1 if lost else 0)
PY
}
echo_check 10.77.0.20 3 || sn_fail "no UDP echo through --publish udp:5000 before the flood"
FDS0=$(fds)
FLOWS0=$(dp_stat "d['services'][0]['flows']")

sn_log "flooding from 4 addresses x $PORTS source ports per round for $SECS s"
ip netns exec "$PEER" python3 - "$SECS" "$PORTS" "$PPS" >"$SN_TMP/flood.log" 2>&1 <<'PY' &
import socket, sys, time
secs, ports, pps = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
srcs = ["10.77.0.1", "10.77.0.11", "10.77.0.12", "10.77.0.13"]
start = time.monotonic()
end = start + secs
sent = rounds = 0
while time.monotonic() < end and rounds < 100:
    ahead = start + sent / pps - time.monotonic()
    if ahead > 0:
        time.sleep(ahead)
    base = 20000 + (rounds % 60) * ports % 40000
    for i in range(ports):
        for src in srcs:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((src, base + i))
            s.sendto(b"flood", ("10.77.0.2", 5000))
            s.close()
            sent += 1
    rounds += 1
print(f"sent {sent} datagrams in {rounds} rounds")
PY
FPID=$!
sn_on_exit "kill $FPID"
sleep 0.5
LEGIT_FAILED=0
ip netns exec "$PEER" python3 - >"$SN_TMP/legit.log" 2>&1 <<'PY' || LEGIT_FAILED=1
import os, socket, time
# one flow, a request every 100 ms; an answer counts whenever it comes (up to 1 s after the last)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.1)
s.bind(("10.77.0.20", 0))
asked, answered, first = set(), set(), None
t0 = time.monotonic()
while time.monotonic() - t0 < 3.5:
    data = os.urandom(32)
    s.sendto(data, ("10.77.0.2", 5000))
    asked.add(data)
    t = time.monotonic()
    while time.monotonic() - t < 0.1:
        try:
            r, a = s.recvfrom(2048)
        except socket.timeout:
            break
        if r in asked and r not in answered:
            answered.add(r)
            first = first or time.monotonic() - t0
t = time.monotonic()
while time.monotonic() - t < 1:
    try:
        r, a = s.recvfrom(2048)
    except socket.timeout:
        continue
    answered.add(r) if r in asked else None
print(f"during the flood: {len(answered)} of {len(asked)} echoes answered on one flow")
assert len(answered) >= len(asked) * 0.5, "the legitimate client was locked out"
PY
cat "$SN_TMP/legit.log"
dp_stat "{k: v for k, v in d['services'][0].items() if k != 'spec'}, [(l['rx_frames'], l['rx_kernel_drops']) for l in d['links'].values()], d['limits']['udp_flows_per_source']" |
	sed 's/^/during the flood: /'
[ "$LEGIT_FAILED" = 0 ] || sn_fail "the legitimate client was locked out during the flood; datapath log: $(tail -n 40 "$DP_LOG")"
wait "$FPID" || sn_fail "the flooder failed: $(cat "$SN_TMP/flood.log")"
cat "$SN_TMP/flood.log"
grep -q "^sent [1-9]" "$SN_TMP/flood.log" || sn_fail "the flooder sent nothing"

sn_log "after the flood"
kill -0 "$DP_PID" 2>/dev/null || sn_fail "the datapath died: $(tail -n 30 "$DP_LOG")"
dp_stats --json >"$SN_TMP/after.json"
python3 - "$SN_TMP/after.json" "$FDS0" "$(fds)" "$FLOWS0" $PER_SOURCE $TOTAL <<'EOF' || sn_fail "flows and fds after the flood; datapath log: $(tail -n 20 "$DP_LOG")"
import json, sys
d = json.load(open(sys.argv[1]))
fds0, fds, flows0, per, total = (int(x) for x in sys.argv[2:])
svc = d["services"][0]
lu, lp = d["limits"]["udp_flows"], d["limits"]["udp_flows_per_source"]
print(f"service: flows {svc['flows']} created {svc['flows_created']} source_cap_hits {svc['source_cap_hits']}"
      f" flows_evicted {svc['flows_evicted']}; limits.udp_flows {lu}; limits.udp_flows_per_source {lp};"
      f" fds {fds} (before the flood {fds0}, flows then {flows0})")
assert lp["max"] == per and lu["max"] == total, "the caps given are not the ones in effect"
assert lp["used"] == per, f"the busiest source holds {lp['used']} flows, not the cap {per}"
assert lp["hits"] >= 4 * per and lp["hits"] == svc["source_cap_hits"], "per-source hits not counted"
# 4 flooding sources at the cap, plus 10.77.0.20's few
assert 4 * per <= svc["flows"] <= 4 * per + 8, f"{svc['flows']} flows"
assert lu["used"] == svc["flows"] and lu["hits"] == 0 and svc["flows_evicted"] == 0
assert fds - fds0 <= svc["flows"] - flows0, f"{fds - fds0} more fds than before, {svc['flows'] - flows0} more flows"
EOF

sn_log "a client with many short exchanges from one address"
echo_check 10.77.0.20 150 || sn_fail "short exchanges from one address beyond its per-source cap"
[ "$(dp_stat "d['limits']['udp_flows_per_source']['used']")" -le $PER_SOURCE ] || sn_fail "over the per-source cap"
[ "$(fds)" -le $((FDS0 + 4 * PER_SOURCE + PER_SOURCE)) ] || sn_fail "fds: $(fds), $FDS0 before the flood"
! grep -qE "Sanitizer|runtime error" "$DP_LOG" || sn_fail "sanitizer report: $(cat "$DP_LOG")"
dp_env_down
