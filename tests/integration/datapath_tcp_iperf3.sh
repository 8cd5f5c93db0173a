#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# iperf3 both ways through sandnet's TCP against the Linux kernel (issue 5):
#   forward: iperf3 -c in the datapath's netns -> 127.0.0.1:5301 (--forward)
#            -> sandnet's TCP -> veth -> iperf3 -s on the peer's kernel
#            (10.77.0.1:5201); data out of the container, then with -R in;
#   publish: iperf3 -c on the peer's kernel -> 10.77.0.2:5201 (sandnet's
#            TCP, --publish) -> iperf3 -s in the datapath's netns
#            (127.0.0.1:5202); data into the container, then with -R out.
# Each run is iperf3 -t $IPERF_SECS (default 3) -J: no "error", more than a
# token amount moved, and what the receiver counted (end.sum_received.bytes)
# is what the sender sent (end.sum_sent.bytes) less at most what the buffers
# on the path hold: iperf3 3.12 stops counting when its control connection
# says TEST_END, so the tail still in flight is never counted (even through
# the kernel's own relay); exact equality is not iperf3's to give. The byte-exact
# checks are datapath_tcp_* with sha256. The peer's checksum offload is off so that a
# wrong checksum cannot hide. The datapath's services count the connections
# (iperf3 makes a control and a data connection per run), accepted = closed,
# no error or failed connect, its byte counters at least what iperf3 moved,
# and its TCP saw no bad segment. Throughput is printed, never asserted
# (bench/tcp.sh measures it).
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
command -v iperf3 >/dev/null || sn_skip "no iperf3 (scripts/install-deps.sh)"
SECS=${IPERF_SECS:-3}

dp_env_up --forward tcp:127.0.0.1:5301=10.77.0.1:5201 --publish tcp:5201=127.0.0.1:5202
tcp_peer_csum_off
csum0=$(tcp_peer_csum_errors)
ip netns exec "$PEER" iperf3 -s -B 10.77.0.1 -p 5201 >"$SN_TMP/iperf-peer.log" 2>&1 &
sn_on_exit "kill $!"
ip netns exec "$DPNS" iperf3 -s -B 127.0.0.1 -p 5202 >"$SN_TMP/iperf-dp.log" 2>&1 &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 5201
tcp_wait_listen "$DPNS" 5202

# run NAME NS ADDR PORT [-R]: one iperf3 client run; adds its bytes to $SN_TMP/NAME.bytes
run() {
	local name=$1 ns=$2 addr=$3 port=$4; shift 4
	sn_log "$name"
	timeout $((SECS + 30)) ip netns exec "$ns" iperf3 -c "$addr" -p "$port" -t "$SECS" -J \
		--connect-timeout 5000 "$@" >"$SN_TMP/$name.json" 2>&1 &
	local pid=$!
	# While it runs: the datapath's side of the data connection, like ss -ti
	# (sampled until it shows the data moving, or iperf3 is done).
	local seen=
	while kill -0 "$pid" 2>/dev/null; do
		sleep 0.5
		dp_stats_sum >"$SN_TMP/$name.mid.json" 2>/dev/null || continue
		python3 - "$SN_TMP/$name.mid.json" "$name" >"$SN_TMP/$name.mid.txt" 2>&1 <<'EOF' && { seen=1; break; }
import json, sys
d = json.load(open(sys.argv[1]))
conns = [c for c in d["tcp_connections"] if c["state"] == "ESTABLISHED"]
# the data connection moves the bytes; the control connection a few hundred
data = max(conns, key=lambda c: c.get("bytes_acked", 0) + c.get("bytes_received", 0), default=None)
assert data, "no ESTABLISHED connection: %s" % d["tcp_connections"]
moved = data.get("bytes_acked", 0) + data.get("bytes_received", 0)
assert moved > 1 << 20 and data["cwnd"] > 0, f"the data connection moved only {moved} bytes so far: {data}"
print(sys.argv[2], "while running:", data)
EOF
	done
	wait "$pid"
	[ -n "$seen" ] || sn_fail "$name: the datapath never showed the data connection moving: $(cat "$SN_TMP/$name.mid.txt");" \
		"iperf3 said: $(tail -c 1500 "$SN_TMP/$name.json")"
	cat "$SN_TMP/$name.mid.txt"
	python3 - "$SN_TMP/$name.json" "$name" <<'EOF' || sn_fail "$name: $(tail -c 2000 "$SN_TMP/$name.json")"
import json, sys
path, name = sys.argv[1:]
try:
    j = json.load(open(path))
except ValueError as e:
    sys.exit(f"iperf3 printed no JSON ({e})")
if j.get("error"):
    sys.exit("iperf3: " + j["error"])
end = j["end"]
sent, recv = end["sum_sent"]["bytes"], end["sum_received"]["bytes"]
secs = end["sum_received"]["seconds"] or 1
print(f"{name}: sent {sent} received {recv} bytes, {recv * 8 / secs / 1e9:.2f} Gbit/s, "
      f"sender retransmits {end['sum_sent'].get('retransmits', 'n/a')}")
if recv < 1 << 20:
    sys.exit(f"only {recv} bytes received")
# iperf3 3.12 stops counting at TEST_END, which it sends on its control
# connection while data is still on its way: what the buffers on the path
# (two sockets of 4 MiB on each side of the relay) can hold goes uncounted.
if recv > sent or sent - recv > 64 << 20:
    sys.exit(f"sent {sent} bytes, received {recv}: {sent - recv} missing, more than the buffers hold")
open(path + ".bytes", "w").write(str(recv))
EOF
}

run forward-out "$DPNS" 127.0.0.1 5301
run forward-in "$DPNS" 127.0.0.1 5301 -R
run publish-in "$PEER" 10.77.0.2 5201
run publish-out "$PEER" 10.77.0.2 5201 -R

sn_log "the datapath's view"
# Both services, after every connection is closed (iperf3 exits after its own close).
sn_wait_for 10 sh -c "[ \"\$(ip netns exec '$DPNS' '$DATAPATH' stats --control '$DP_CTL' --json |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(s[\"conns\"] for s in d[\"services\"]))')\" = 0 ]" ||
	sn_fail "connections left in the services: $(dp_stats | sed -n '/^services/,$p')"
dp_stats | sed -n '/^services/,/^tcp/p'
dp_stats_sum >"$SN_TMP/stats.json"
python3 - "$SN_TMP" <<'EOF' || sn_fail "datapath stats"
import json, sys
tmp = sys.argv[1]
d = json.load(open(tmp + "/stats.json"))
b = {n: int(open(f"{tmp}/{n}.json.bytes").read()) for n in ("forward-out", "forward-in", "publish-in", "publish-out")}
svc = {s["kind"]: s for s in d["services"]}
fwd, pub = svc["forward"], svc["publish"]
for name, s in (("forward", fwd), ("publish", pub)):
    print(f"{name}: accepted {s['accepted']} closed {s['closed']} to_target {s['to_target']} "
          f"from_target {s['from_target']} errors {s['errors']} connect_failed {s['connect_failed']} "
          f"resets in/out {s['resets_in']}/{s['resets_out']}")
    # two runs, a control and a data connection each, all gone; iperf3's
    # server closes its data socket with the uncounted tail unread, so the
    # kernel resets that connection (RFC 2525) and the reset is propagated
    assert s["accepted"] == 4, f"{name}: {s['accepted']} connections accepted, expected 4"
    assert s["conns"] == 0, f"{name}: {s['conns']} connections left"
    assert s["closed"] >= 2, f"{name}: only {s['closed']} closed gracefully"
    assert s["errors"] == 0 and s["connect_failed"] == 0, f"{name}: errors or failed connects"
# forward: the target is the peer's iperf3 server; publish: the local one in the datapath's netns
assert fwd["to_target"] >= b["forward-out"], f"forward to_target {fwd['to_target']} < {b['forward-out']}"
assert fwd["from_target"] >= b["forward-in"], f"forward from_target {fwd['from_target']} < {b['forward-in']}"
assert pub["to_target"] >= b["publish-in"], f"publish to_target {pub['to_target']} < {b['publish-in']}"
assert pub["from_target"] >= b["publish-out"], f"publish from_target {pub['from_target']} < {b['publish-out']}"
assert d["tcp"]["rx_bad"] == 0, f"tcp rx_bad {d['tcp']['rx_bad']}"
print("tcp:", {k: v for k, v in d["tcp"].items() if isinstance(v, int) and v})
links = d["links"].values() if isinstance(d["links"], dict) else d["links"]
for l in links:
    print("link:", {k: l[k] for k in l if k.startswith(("rx_", "tx_")) and isinstance(l[k], int) and l[k]})
EOF
csum1=$(tcp_peer_csum_errors)
[ "${csum1:-0}" -eq "${csum0:-0}" ] || sn_fail "the peer's kernel counted $((csum1 - csum0)) TCP checksum errors"
kill -0 "$DP_PID" || sn_fail "the datapath died: $(cat "$DP_LOG")"
dp_env_down
echo "iperf3 both ways through --forward and --publish: every byte received"
