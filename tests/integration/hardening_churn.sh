#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# Connection churn through --publish: 100k short connections (tests/tools/
# churn: 200 in parallel, each a 64-byte request echoed back by a backend in
# the datapath's netns, which closes first, so the datapath holds TIME-WAIT
# like a web server). After a warm-up of 10k: the datapath's RSS grows by no
# more than a stated bound (docs/security.md, "Connection churn"), its fd
# count is unchanged (every backend socket closed), and once the last
# connection is done the TCP connection count is back to the TIME-WAIT
# entries, which stay at their cap (--max-timewait, evictions counted).
# The plain build also reads malloc's own figures from the stats: the bytes
# in use do not grow at all (no leak) and the heap it holds hardly does, so
# the RSS can only grow into heap pages already held (fragmentation: freed
# 128 KiB rings between long-lived TIME-WAIT entries), which bounds it.
# CHURN_COUNT overrides the count (the ASan build runs 30k: it is ~4x slower).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
[ -x "$TOOLS/churn" ] || sn_skip "tests/tools/churn not built"

asan=0
ldd "$DATAPATH" 2>/dev/null | grep -q libasan && asan=1
COUNT=${CHURN_COUNT:-$([ "$asan" = 1 ] && echo 30000 || echo 100000)}
WARMUP=10000
TIMEWAIT=4096
# Bounds after the warm-up, KiB (docs/security.md): the TIME-WAIT entries are
# all made during the warm-up already (10k > 4096). Heap in use: +1 MiB (it
# measured +0); heap held: +8 MiB; RSS: at most the heap held plus 16 MiB
# (receive buffers, stacks, libraries; it measured 3 MiB before any
# connection), and never more than 96 MiB. The ASan build has no malloc
# figures and keeps a quarantine of freed memory (256 MiB): RSS +300 MiB.
HEAP_GROWTH_MAX=1024
HELD_GROWTH_MAX=$((8 * 1024))
RSS_MAX=$((96 * 1024))
RSS_GROWTH_MAX=$((300 * 1024))

dp_env_up --publish tcp:80=127.0.0.1:8080 --max-timewait "$TIMEWAIT"
ip netns exec "$DPNS" "$TOOLS/churn" server --listen 127.0.0.1:8080 --duration 300 \
	>"$SN_TMP/server.log" 2>&1 &
sn_on_exit "kill $!"
sn_wait_for 5 grep -q serving "$SN_TMP/server.log" || sn_fail "churn server did not start"
# the peer is the client: passive close, no TIME-WAIT there, but 100k
# connections need more than the default 28k ephemeral ports over a minute
ip netns exec "$PEER" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$DP_PID/status"; }
nfd() { ls "/proc/$DP_PID/fd" | wc -l; }
churn() {
	ip netns exec "$PEER" "$TOOLS/churn" client --connect 10.77.0.2:80 --count "$1" --parallel 200 \
		--size 64 --duration 120
}
# settled: no connection left but TIME-WAIT ones
settled() {
	dp_stat "d['limits']['tcp_conns']['used'] - d['limits']['tcp_timewait']['used']" | grep -qx 0
}

fd0=$(nfd)
sn_log "warm-up: $WARMUP connections"
churn "$WARMUP" || sn_fail "warm-up: not every connection exchanged its bytes"
sn_wait_for 10 settled || sn_fail "connections left after the warm-up: $(dp_stat "d['limits']")"
rss1=$(rss)
fd1=$(nfd)
heap1=$(dp_stat "d['heap_in_use'] // 1024")
held1=$(dp_stat "d['heap_held'] // 1024")
echo "after the warm-up: RSS ${rss1} KiB, heap in use ${heap1} KiB, held ${held1} KiB, $fd1 fds (before: $fd0)"

sn_log "$COUNT connections"
t0=$(date +%s)
out=$(churn "$COUNT") || sn_fail "churn: $out"
echo "$out"
sn_wait_for 10 settled || sn_fail "connections left after the churn: $(dp_stat "d['limits']")"
rss2=$(rss)
fd2=$(nfd)
heap2=$(dp_stat "d['heap_in_use'] // 1024")
held2=$(dp_stat "d['heap_held'] // 1024")
echo "after $COUNT more: RSS ${rss2} KiB (+$((rss2 - rss1))), heap in use ${heap2} KiB (+$((heap2 - heap1))), held ${held2} KiB (+$((held2 - held1))), $fd2 fds, $(( $(date +%s) - t0 )) s"

dp_stats --json >"$SN_TMP/stats.json"
python3 - "$SN_TMP/stats.json" "$TIMEWAIT" "$((WARMUP + COUNT))" <<'PY' || sn_fail "stats after the churn"
import json, sys
d = json.load(open(sys.argv[1])); cap = int(sys.argv[2]); total = int(sys.argv[3])
lim, svc = d["limits"], [s for s in d["services"] if s.get("kind", "").startswith("publish")]
tw = lim["tcp_timewait"]
print(f"limits: {lim}")
assert tw["max"] == cap, "--max-timewait not applied"
assert tw["used"] == cap, f"TIME-WAIT {tw['used']}, expected its cap {cap}"
# a few TIME-WAIT entries are reopened by a new SYN of a reused port instead
assert tw["hits"] >= (total - cap) * 0.9, f"only {tw['hits']} TIME-WAIT evictions"
assert lim["tcp_conns"]["used"] == tw["used"], "connections besides TIME-WAIT"
assert lim["tcp_half_open"]["used"] == 0
assert lim["tcp_mem"]["used"] == 0, "rings held after the churn"
assert d["packets_live"] < 1000, f"{d['packets_live']} packet buffers in use"
PY
[ "$fd2" -eq "$fd1" ] || { ls -l "/proc/$DP_PID/fd"; sn_fail "fd count $fd1 after the warm-up, $fd2 after the churn"; }
[ "$fd1" -eq "$fd0" ] || sn_fail "fd count $fd0 before the warm-up, $fd1 after it"
if [ "$asan" = 1 ]; then
	[ $((rss2 - rss1)) -le "$RSS_GROWTH_MAX" ] || sn_fail "RSS grew by $((rss2 - rss1)) KiB"
else
	[ $((heap2 - heap1)) -le "$HEAP_GROWTH_MAX" ] || sn_fail "heap in use grew by $((heap2 - heap1)) KiB: a leak"
	[ $((held2 - held1)) -le "$HELD_GROWTH_MAX" ] || sn_fail "heap held grew by $((held2 - held1)) KiB"
	[ "$rss2" -le $((held2 + 16 * 1024)) ] || sn_fail "RSS ${rss2} KiB over the heap held + 16 MiB"
	[ "$rss2" -le "$RSS_MAX" ] || sn_fail "RSS ${rss2} KiB over ${RSS_MAX} KiB"
fi
dp_env_down
