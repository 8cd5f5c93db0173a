#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# Random and mutated frames from the container's side (issue 8): for
# $BLAST_SECS (default 10) seconds tests/tools/frame_blaster sends, from the
# peer's end of the container's veth, frames built from valid ARP / IPv4 /
# IPv6 / ICMP / UDP / TCP / fragment templates and then mutated (bit flips,
# truncation, bad lengths, options, extension headers...) to the datapath's
# MAC, broadcast and multicast, at most $BLAST_PPS (default 20000) per second,
# with a seed printed first ($BLAST_SEED repeats a run). The datapath serves
# --publish tcp:80 (python http.server behind it) and --publish udp:5000 (a
# UDP echo behind it). Afterwards:
#  - the datapath is the same process, alive, with no sanitizer report;
#  - it answers ping (IPv4 and IPv6), a 1 MiB download through the TCP
#    publish (sha256 compared) and a UDP echo through the UDP publish;
#  - its drop counters went up, under several reasons (printed);
#  - every fd it holds beyond the ones before the blast is a UDP flow's or a
#    TCP service connection's backend socket, within the flow cap (4096;
#    flows idle out after 3 minutes, too long to wait for here), and no
#    packet buffer is left beyond the baseline;
#  - it stops cleanly.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
BLASTER=$TOOLS/frame_blaster
[ -x "$BLASTER" ] || sn_skip "no $BLASTER (make tools)"
SECS=${BLAST_SECS:-10}
PPS=${BLAST_PPS:-20000}

dp_env_up --publish tcp:80=127.0.0.1:8080 --publish udp:5000=127.0.0.1:6000
head -c $((1024 * 1024)) /dev/urandom >"$SN_TMP/f1m"
(cd "$SN_TMP" && exec ip netns exec "$DPNS" python3 -m http.server --bind 127.0.0.1 8080) \
	>"$SN_TMP/http.log" 2>&1 &
sn_on_exit "kill $!"
sn_udp_echo "$DPNS" 127.0.0.1 6000
sn_wait_for 10 ip netns exec "$DPNS" curl -sf -o /dev/null http://127.0.0.1:8080/ || sn_fail "http.server did not come up"

# check_serving WHAT: ping both families, a download through the TCP publish, a UDP echo
check_serving() {
	ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 >/dev/null || sn_fail "$1: no IPv4 ping answer"
	ip netns exec "$PEER" ping -6 -c 2 -i 0.2 -W 2 fd77::2 >/dev/null || sn_fail "$1: no IPv6 ping answer"
	ip netns exec "$PEER" curl -sS --max-time 20 -o "$SN_TMP/got" http://10.77.0.2:80/f1m ||
		sn_fail "$1: curl through --publish tcp:80 failed"
	cmp -s "$SN_TMP/got" "$SN_TMP/f1m" || sn_fail "$1: the download differs"
	ip netns exec "$PEER" python3 - <<'PY' || sn_fail "$1: no UDP echo through --publish udp:5000"
import os, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
data = os.urandom(1000)
for attempt in range(3):
    s.sendto(data, ("10.77.0.2", 5000))
    try:
        r, a = s.recvfrom(70000)
        break
    except socket.timeout:
        continue
else:
    raise SystemExit("no echo")
assert r == data
PY
	echo "$1: ping, ping -6, 1 MiB through tcp:80, UDP echo through udp:5000: ok"
}

fds() { ls "/proc/$DP_PID/fd" | wc -l; }
check_serving "before"
dp_stats --json >"$SN_TMP/before.json"
FDS0=$(fds)
# packet buffers in use beyond the links' receive buffers (which grow with the load)
LIVE_EXPR="d['packets_live'] - sum(l['rx_buffers'] for l in [*d['links'].values(), *d.get('inner_links', {}).values()])"
LIVE0=$(dp_stat "$LIVE_EXPR")

sn_log "blasting for $SECS s"
ip netns exec "$PEER" "$BLASTER" --iface veth0 --dst-mac "$CT_MAC" --ip4 10.77.0.1,10.77.0.2 \
	--ip6 fd77::1,fd77::2 --tcp-port 80 --udp-port 5000 --seconds "$SECS" --pps "$PPS" \
	${BLAST_SEED:+--seed "$BLAST_SEED"} >"$SN_TMP/blast.log" 2>&1 &
BPID=$!
sn_on_exit "kill $BPID"
# during the blast (not asserted: the blast may fill the socket's queue)
sleep 1
ip netns exec "$PEER" ping -c 3 -i 0.3 -W 1 10.77.0.2 | grep -E "transmitted" | sed 's/^/during the blast: /'
wait "$BPID" || sn_fail "frame_blaster failed: $(cat "$SN_TMP/blast.log")"
cat "$SN_TMP/blast.log"
grep -q "^sent [1-9]" "$SN_TMP/blast.log" || sn_fail "frame_blaster sent nothing"

sn_log "after the blast"
kill -0 "$DP_PID" 2>/dev/null || sn_fail "the datapath died: $(tail -n 30 "$DP_LOG")"
[ "$(pgrep -P "$DP_SUP_PID" | head -n1)" = "$DP_PID" ] && [ "$(dp_stat "d['supervisor']['deaths']")" = 0 ] ||
	sn_fail "the datapath is not the same process: $(cat "$DP_STATUS")"
! grep -qE "Sanitizer|runtime error" "$DP_LOG" || sn_fail "sanitizer report: $(cat "$DP_LOG")"
check_serving "after"
dp_stats --json >"$SN_TMP/after.json"
python3 - "$SN_TMP/before.json" "$SN_TMP/after.json" <<'EOF' || sn_fail "drop counters"
import json, sys
b, a = (json.load(open(p)) for p in sys.argv[1:])
grew = {k: a["drops"][k] - b["drops"].get(k, 0) for k in a["drops"] if a["drops"][k] > b["drops"].get(k, 0)}
print("drops during the blast, by reason:", dict(sorted(grew.items(), key=lambda kv: -kv[1])))
print("tcp:", {k: v for k, v in a["tcp"].items() if isinstance(v, int) and v and k.startswith(("drop", "rx_bad", "rst", "challenge", "syncookies", "synq"))})
links = a["links"].values() if isinstance(a["links"], dict) else a["links"]
print("reassembly:", a["reassembly"], "links:", [{k: l.get(k) for k in ("rx_frames", "rx_kernel_drops", "rx_truncated")} for l in links])
assert len(grew) >= 3, f"only {len(grew)} drop reasons counted: {grew}"
assert sum(grew.values()) >= 100, f"only {sum(grew.values())} drops counted"
EOF

sn_log "every fd accounted for, no packet buffer left"
# UDP datagrams to the published port from the blast's many (mutated) source
# addresses and ports each open a flow with its own backend socket: kept for
# 3 minutes of idleness, at most 4096 (the least recently used goes). TCP
# connections hold a backend socket once accepted. Every fd beyond the ones
# before the blast must be one of those, within the caps.
accounted() {
	python3 - "$1" "$FDS0" "$(fds)" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); fds0, fds = int(sys.argv[2]), int(sys.argv[3])
flows = sum(s.get("flows", 0) for s in d["services"])
conns = sum(s.get("conns", 0) for s in d["services"])
print(f"fds {fds} (before the blast {fds0}), UDP flows {flows}, TCP service connections {conns}")
assert flows <= 4096, f"{flows} UDP flows, more than the cap of 4096"
assert fds <= fds0 + flows + conns, f"{fds - fds0 - flows - conns} fds not accounted for"
EOF
}
dp_stats --json >"$SN_TMP/fds.json"
accounted "$SN_TMP/fds.json" || sn_fail "fds after the blast"
live_settled() { [ "$(dp_stat "$LIVE_EXPR")" -le $((LIVE0 + 8)) ]; }
sn_wait_for 10 live_settled ||
	sn_fail "packet buffers live beyond the receive buffers: $(dp_stat "$LIVE_EXPR"), $LIVE0 before the blast"
echo "packets live beyond the receive buffers $(dp_stat "$LIVE_EXPR") (before: $LIVE0; receive buffers now $(dp_stat "sum(l['rx_buffers'] for l in d['links'].values())"))"
dp_env_down
echo "the datapath survived $(sed -n 's/^sent \([0-9]*\) frames.*/\1/p' "$SN_TMP/blast.log") random and mutated frames ($(head -n1 "$SN_TMP/blast.log"))"
