#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# The inner link is untrusted too (issue 9): a program in the container with
# CAP_NET_RAW writes what it likes into the TUN (a packet socket on sn-eth0).
#  - each kind of bad packet is dropped and counted under its reason (or
#    answered as a kernel would: protocol unreachable), with no crash;
#  - a SYN flood from inside (hping3, 5 s, to a port the peer refuses) is
#    bounded by --max-half-open (the container side's limit hit, never
#    exceeded) and leaves nothing behind;
#  - 100k short connections from inside (tests/tools/churn against a churn
#    server in the peer, 48 at a time, below the half-open cap; 30k under
#    ASan): every one exchanges its bytes, the
#    pairs end, the fds do not grow, the heap in use does not grow;
#  - afterwards the same datapath still serves the container (curl, ping).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"
[ -x "$TOOLS/churn" ] || sn_skip "tests/tools/churn not built"

asan=0
ldd "$DATAPATH" 2>/dev/null | grep -q libasan && asan=1
COUNT=${CHURN_COUNT:-$([ "$asan" = 1 ] && echo 30000 || echo 100000)}
# the churn below opens fewer connections at once (48), so that only the flood meets it
HALF_OPEN=64

dp_env_up --max-half-open "$HALF_OPEN"
face_check_fenced
tcp_files "$SN_TMP"
tcp_http "$PEER" 10.77.0.1 8000 "$SN_TMP"
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$DP_PID/status"; }
nfd() { ls "/proc/$DP_PID/fd" | wc -l; }
fd0=$(nfd)

sn_log "bad packets written into the TUN from inside"
ip netns exec "$CT" python3 - <<'PY' || sn_fail "could not write the bad packets"
import socket, struct

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

def ip4(src, dst, proto, payload, ver=4, tot=None, frag=0, bad_csum=False):
    h = struct.pack("!BBHHHBBH4s4s", ver << 4 | 5, 0, tot if tot is not None else 20 + len(payload),
                    0x1234, frag, 64, proto, 0, socket.inet_aton(src), socket.inet_aton(dst))
    c = csum(h) ^ (0x5555 if bad_csum else 0)
    return h[:10] + struct.pack("!H", c) + h[12:] + payload

def ip6(src, dst, nh, payload, plen=None):
    return struct.pack("!IHBB16s16s", 6 << 28, plen if plen is not None else len(payload), nh, 64,
                       socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)) + payload

udp = struct.pack("!HHHH", 4000, 9, 12, 0) + b"four"
C, P = "10.77.0.2", "10.77.0.1"
bad = {
    "bad_header": [ip4(C, P, 17, udp, ver=5), b"\x40\x00", b"\x60" + b"\0" * 10],
    "bad_length": [ip4(C, P, 17, udp, tot=200), ip4(C, P, 17, udp, tot=10),
                   ip6("fd77::2", "fd77::1", 17, udp, plen=300)],
    "bad_checksum": [ip4(C, P, 17, udp, bad_csum=True)],
    "bad_source": [ip4("10.66.0.1", P, 17, udp), ip6("fd66::1", "fd77::1", 17, udp)],
    "to_self": [ip4(C, C, 17, udp), ip6("fd77::2", "fd77::2", 17, udp)],
    "multicast": [ip4(C, "224.0.0.251", 17, udp), ip4(C, "255.255.255.255", 17, udp),
                  ip4(C, "10.77.0.255", 17, udp), ip6("fd77::2", "ff02::1", 17, udp)],
    "bad_destination": [ip4(C, "127.0.0.1", 17, udp), ip4(C, "0.0.0.0", 17, udp)],
    "unknown_protocol": [ip4(C, P, 253, b"x" * 8)],
    "ipv6_ext_header": [ip6("fd77::2", "fd77::1", 60, (bytes([60, 0]) + b"\0" * 6) * 9 + udp)],
    # a first fragment that never completes, and two that overlap
    "fragments": [ip4(C, P, 17, udp + b"y" * 12, frag=0x2000),
                  ip4(C, P, 17, b"z" * 16, frag=0x2000 | 1), ip4(C, P, 17, b"w" * 16, frag=0x2000 | 1)],
}
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM)
n = 0
for kind, pkts in bad.items():
    for p in pkts:
        s.sendto(p, ("sn-eth0", 0x0800 if p[0] >> 4 != 6 else 0x86dd))
        n += 1
print(f"{n} bad packets written")
PY
sleep 0.5
dp_stats --json >"$SN_TMP/after-bad.json"
python3 - "$SN_TMP/after-bad.json" <<'PY' || sn_fail "bad packets not counted by reason"
import json, sys
d = json.load(open(sys.argv[1]))
drops, ctr = d["face"]["drops"], d["face"]["counters"]
want = {"bad_header": 3, "bad_length": 3, "bad_checksum": 1, "bad_source": 2, "to_self": 2,
        "multicast": 4, "bad_destination": 2, "unknown_protocol": 1, "ipv6_ext_header": 1}
for k, n in want.items():
    assert drops[k] >= n, f"face drop {k}: {drops[k]}, want {n}"
    print(f"{k}: {drops[k]}")
assert ctr["proto_unreach_sent"] >= 1, ctr
assert ctr["fragments_in"] >= 3, ctr
assert d["drops"]["frag_overlap"] >= 1, d["drops"]["frag_overlap"]
print("fragments: %d in, overlap dropped %d" % (ctr["fragments_in"], d["drops"]["frag_overlap"]))
PY
tcp_fetch "$CT" "http://10.77.0.1:8000/f100k" "$SN_TMP/f100k"

sn_log "a SYN flood from inside, 5 s, to a port the peer refuses"
command -v hping3 >/dev/null || sn_skip "hping3 not installed"
ip netns exec "$CT" timeout 5 hping3 -q -S -p 9 --flood 10.77.0.1 >/dev/null 2>&1
tcp_fetch "$CT" "http://10.77.0.1:8000/f100k" "$SN_TMP/f100k"
dp_stats --json | python3 -c "
import json, sys
d = json.load(sys.stdin); t = d['face_tcp']; c = d['face']['counters']
print(f\"held SYNs {t['syn_deferred']}, dropped at --max-half-open {t['syn_deferred_dropped']}, refused {c['tcp_refused']}\")
assert t['syn_deferred'] > 1000, 'the flood did not arrive'
" || sn_fail "SYN flood"
no_pairs() { [ "$(dp_stat "d['face']['tcp_pairs']")" = 0 ]; }
sn_wait_for 10 no_pairs || sn_fail "pairs left after the flood: $(dp_stat "d['face']['tcp_pairs']")"
dp_stats --json | python3 -c "
import json, sys
h = json.load(sys.stdin)['limits']['face_tcp_half_open']
print(f\"the container side's half-open: max {h['max']}, used {h['used']}, hits {h['hits']}\")
assert h['max'] == $HALF_OPEN, f\"the cap in effect is {h['max']}, not --max-half-open $HALF_OPEN\"
assert h['used'] <= h['max'], 'more half-open entries than the cap'
assert h['hits'] > 0, 'a 5 s flood never reached the cap'
" || sn_fail "the half-open cap"

sn_log "$COUNT short connections from inside"
ip netns exec "$PEER" "$TOOLS/churn" server --listen 10.77.0.1:8080 --duration 300 >"$SN_TMP/server.log" 2>&1 &
sn_on_exit "kill $!"
sn_wait_for 5 grep -q serving "$SN_TMP/server.log" || sn_fail "churn server did not start"
ip netns exec "$CT" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
churn() {
	ip netns exec "$CT" "$TOOLS/churn" client --connect 10.77.0.1:8080 --count "$1" --parallel 48 \
		--size 64 --duration 120
}
churn 10000 || sn_fail "warm-up: not every connection exchanged its bytes"
sn_wait_for 10 no_pairs || sn_fail "pairs left after the warm-up"
heap1=$(dp_stat "d['heap_in_use'] // 1024")
rss1=$(rss)
fd1=$(nfd)
out=$(churn "$COUNT") || sn_fail "churn: $out"
echo "$out"
sn_wait_for 10 no_pairs || sn_fail "pairs left after the churn: $(dp_stat "d['face']['tcp_pairs']")"
heap2=$(dp_stat "d['heap_in_use'] // 1024")
rss2=$(rss)
fd2=$(nfd)
echo "after $COUNT: RSS ${rss1} -> ${rss2} KiB, heap in use ${heap1} -> ${heap2} KiB, fds $fd0 -> $fd1 -> $fd2"
[ "$fd2" = "$fd0" ] || sn_fail "fds grew from $fd0 to $fd2"
if [ "$asan" = 0 ]; then
	[ $((heap2 - heap1)) -le 1024 ] || sn_fail "heap in use grew by $((heap2 - heap1)) KiB"
	[ "$rss2" -le $((96 * 1024)) ] || sn_fail "RSS $rss2 KiB over 96 MiB"
fi

sn_log "the same datapath still serves the container"
tcp_fetch "$CT" "http://10.77.0.1:8000/f64m" "$SN_TMP/f64m"
ip netns exec "$CT" ping -c 1 -W 2 10.77.0.1 >/dev/null || sn_fail "ping after the abuse"
dp_env_down
echo ok
