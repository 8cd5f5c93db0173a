#!/usr/bin/env bash
# The impairment relay (tests/tools/impair_relay) between two kernel stacks:
# clean, it passes ping and a TCP stream unchanged; with loss, duplication and
# reordering the kernel's TCP still delivers the stream intact, and the
# relay's counters show that it impaired what it was told to. Its bottleneck
# holds a TCP stream to its --rate; crafted frames (IPv4 and IPv6, tagged and
# untagged, cut short, not IP) come out byte for byte as they went in, except
# that those that are ECN-capable and find the queue past --ecn-mark are
# marked CE with a valid IPv4 header checksum, and VLAN tags survive; and two
# kernels with ECN on keep a stream intact through a small marking queue,
# the receiver counting CE packets and the sender the echoes.
. "$SANDNET_TESTS/lib/common.sh"
command -v ethtool >/dev/null || sn_skip "ethtool not installed"

sn_netns_add a; sn_netns_add mid; sn_netns_add b
sn_veth_add a eth0 mid ra
sn_veth_add mid rb b eth0
A=$(sn_ns a) MID=$(sn_ns mid) B=$(sn_ns b)
ip -n "$A" addr add 10.231.0.1/24 dev eth0
ip -n "$B" addr add 10.231.0.2/24 dev eth0

relay_start() {
	ip netns exec "$MID" "$TOOLS/impair_relay" --a ra --b rb --duration 60 "$@" \
		>"$SN_TMP/relay.out" 2>"$SN_TMP/relay.err" &
	relay_pid=$!
	sn_on_exit "kill $relay_pid"
	sn_wait_for 5 grep -q ready "$SN_TMP/relay.err" || sn_fail "relay did not start: $(cat "$SN_TMP/relay.err")"
}
relay_stop() {
	kill -TERM "$relay_pid"; wait "$relay_pid" 2>/dev/null
	cat "$SN_TMP/relay.out"
}
# relay_stat KEY: a counter from the last run's stats line
relay_stat() { grep -o " $1=[0-9]*" "$SN_TMP/relay.out" | cut -d= -f2; }
# stream PORT FILE MAX_S: FILE from A to B over kernel TCP, compared byte for
# byte; leaves the time it took in stream_ns
stream() {
	local port=$1 file=$2 max=$3 srv t0
	rm -f "$SN_TMP/got"
	ip netns exec "$B" timeout "$max" socat -u TCP-LISTEN:"$port",reuseaddr OPEN:"$SN_TMP/got",creat,trunc &
	srv=$!
	sn_wait_for 5 sh -c "ip netns exec '$B' ss -Hltn 'sport = :$port' | grep -q ." || sn_fail "no listener on $port"
	t0=$(date +%s%N)
	ip netns exec "$A" timeout "$max" socat -u OPEN:"$file" TCP:10.231.0.2:"$port" || sn_fail "send to $port"
	wait $srv || sn_fail "receive on $port"
	stream_ns=$(($(date +%s%N) - t0))
	cmp -s "$file" "$SN_TMP/got" ||
		sn_fail "stream to $port changed: sha256 $(sha256sum <"$SN_TMP/got" | cut -c1-16) want $(sha256sum <"$file" | cut -c1-16)"
}
# nstat_of NS COUNTER: an absolute kernel counter in NS, no history file touched
nstat_of() {
	NSTAT_HISTORY=$SN_TMP/nstat ip netns exec "$1" nstat -asz "$2" | awk -v k="$2" '$1 == k { print $2 }'
}

# Bad flags are refused with a reason.
refused() {
	local why=$1 out; shift
	out=$("$TOOLS/impair_relay" --a x --b y "$@" 2>&1) && sn_fail "$* accepted"
	grep -q -- "$why" <<<"$out" || sn_fail "no reason for $*: $out"
}
refused "not a percentage" --loss 140
refused "--rate: '-1' is not a rate" --rate -1
refused "--rate: 'abc' is not a rate" --rate abc
refused "--rate: '1e3' is not a rate" --rate 1e3
refused "--ecn-mark needs --rate" --ecn-mark 10000
refused "--limit-bytes needs --rate" --limit-bytes 30000
refused "--limit-bytes needs --rate" --rate 0 --limit-bytes 30000
refused "--limit-bytes: '-5' is not a number" --rate 10 --limit-bytes -5
"$TOOLS/impair_relay" --help | grep -q -- "--limit-bytes N .*default 1000000" || sn_fail "usage names no default for --limit-bytes"

sn_log "clean relay: ping and a stream pass"
relay_start --seed 1
ip netns exec "$A" ping -c 3 -i 0.2 -W 2 10.231.0.2 >/dev/null || sn_fail "ping through a clean relay"
head -c 4000000 /dev/urandom >"$SN_TMP/data"
ip netns exec "$B" timeout 30 socat -u TCP-LISTEN:5001,reuseaddr OPEN:"$SN_TMP/got",creat,trunc &
srv=$!
sleep 0.3
ip netns exec "$A" timeout 30 socat -u OPEN:"$SN_TMP/data" TCP:10.231.0.2:5001 || sn_fail "send"
wait $srv
cmp -s "$SN_TMP/data" "$SN_TMP/got" || sn_fail "stream changed through a clean relay"
relay_stop

sn_log "impaired relay: 3% loss, 3% dup, 10% reorder, 2 ms delay"
relay_start --seed 7 --loss 3 --dup 3 --reorder 10 --delay-ms 2
ip netns exec "$B" timeout 60 socat -u TCP-LISTEN:5002,reuseaddr OPEN:"$SN_TMP/got2",creat,trunc &
srv=$!
sleep 0.3
ip netns exec "$A" timeout 60 socat -u OPEN:"$SN_TMP/data" TCP:10.231.0.2:5002 || sn_fail "send impaired"
wait $srv
cmp -s "$SN_TMP/data" "$SN_TMP/got2" || sn_fail "kernel TCP stream corrupted through the relay"
relay_stop
stats=$(cat "$SN_TMP/relay.out")
for k in lost duplicated reordered; do
	v=$(grep -o "$k=[0-9]*" <<<"$stats" | cut -d= -f2)
	[ "${v:-0}" -gt 0 ] || sn_fail "relay reports $k=0 although asked to impair"
done
for k in queue_drops ce_marked; do
	[ "$(relay_stat $k)" = 0 ] || sn_fail "relay reports $k=$(relay_stat $k) without a --rate"
done

sn_log "bottleneck: --rate 100 holds a TCP stream (GSO frames) to 60..100 Mbit/s"
head -c 24000000 /dev/urandom >"$SN_TMP/data24"
relay_start --seed 3 --rate 100
stream 5003 "$SN_TMP/data24" 30
relay_stop
mbit=$((24000000 * 8 * 1000 / stream_ns))
sn_log "24 MB in $((stream_ns / 1000000)) ms: $mbit Mbit/s"
[ "$mbit" -lt 100 ] && [ "$mbit" -gt 60 ] || sn_fail "a stream through --rate 100 ran at $mbit Mbit/s"
rm -f "$SN_TMP/data24"

sn_log "ECN marks: crafted frames through --rate 1 --ecn-mark 2500"
cat >"$SN_TMP/frames.py" <<'PY'
# frames.py send IFNAME | recv IFNAME SECONDS: FRAMES one after the other, and
# at the receiver each compared with what was sent (a VLAN tag the kernel took
# out put back from PACKET_AUXDATA); prints marked=N, exits 1 on a difference
import socket, struct, sys, time

DST, SRC = bytes.fromhex("02000000000b"), bytes.fromhex("02000000000a")
A4, B4 = bytes([10, 231, 9, 1]), bytes([10, 231, 9, 2])
A6, B6 = bytes.fromhex("fd00" + "00" * 13 + "01"), bytes.fromhex("fd00" + "00" * 13 + "02")

def csum(b):
    b += b"\0" * (len(b) % 2)
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF

def eth(etype, payload, vlan=None):
    tag = struct.pack("!HH", 0x8100, vlan) if vlan is not None else b""
    return DST + SRC + tag + struct.pack("!H", etype) + payload

def ip4(tos, n, size, opts=b"", ihl=None):
    udp = struct.pack("!HHHH", 4000, 4001, 8 + size, 0) + bytes([n]) * size
    ihl = ihl or 5 + len(opts) // 4
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, 20 + len(opts) + len(udp), n, 0, 64, 17, 0, A4, B4) + opts
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + udp

def ip6(tc, n, size):
    udp = struct.pack("!HHHH", 4000, 4001, 8 + size, 0) + bytes([n]) * size
    return struct.pack("!IHBB", 6 << 28 | tc << 20 | n, len(udp), 17, 64) + A6 + B6 + udp

# (frame, ECN-capable). ECN (the low 2 bits of TOS or traffic class): 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
FRAMES = [
    (eth(0x0800, ip4(2, 0, 1000)), True),           # 0: the queue is empty: never marked
    (eth(0x0800, ip4(2, 1, 1000), vlan=5), True),   # 1-4: tagged, fill the queue
    (eth(0x0800, ip4(2, 2, 1000), vlan=5), True),
    (eth(0x0800, ip4(0x22, 3, 1000), vlan=5), True),
    (eth(0x0800, ip4(2, 4, 1000), vlan=5), True),
    (eth(0x0800, ip4(1, 5, 200)), True),            # 5..: the queue holds > 2500 bytes now
    (eth(0x86DD, ip6(2, 6, 200)), True),
    (eth(0x86DD, ip6(0xB9, 7, 200), vlan=7), True), # traffic class 0xb9: ECT(1)
    (eth(0x0800, ip4(0, 8, 200)), False),           # not-ECT
    (eth(0x0800, ip4(3, 9, 200)), False),           # CE already
    (eth(0x86DD, ip6(0xB8, 10, 200)), False),       # not-ECT
    (eth(0x0800, bytes([0x45, 2]) + b"\0" * 8), False),          # IPv4 cut short
    (eth(0x0800, bytes([0x45, 2]) + b"\0" * 8, vlan=9), False),  # the same, tagged
    (eth(0x88B5, bytes([2]) * 300), False),         # not IP
    (eth(0x0800, ip4(2, 14, 200, ihl=15)[:30]), False),  # its IHL says 60 bytes: past the end
    (eth(0x0800, ip4(2, 15, 200, opts=b"\x01\x01\x01\x00")), True),  # with an option
    (eth(0x86DD, ip6(2, 16, 200)[:30]), False),     # IPv6 cut short
    (eth(0x0800, ip4(0xFE, 17, 200)), True),        # the last one: ECT(0), DSCP bits set
]

def marked(f):
    """f with CE set, IPv4 checksum recomputed: what the relay must make of an ECT frame"""
    o = 18 if f[12:14] == b"\x81\x00" else 14
    f = bytearray(f)
    if f[o] >> 4 == 4:
        f[o + 1] |= 3
        f[o + 10:o + 12] = b"\0\0"
        f[o + 10:o + 12] = struct.pack("!H", csum(bytes(f[o:o + 4 * (f[o] & 15)])))
    else:
        f[o + 1] |= 0x30
    return bytes(f)

def send(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    for f, _ in FRAMES:
        s.send(f)

def recv(ifname, seconds):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((ifname, 0))
    s.setsockopt(263, 8, 1)  # SOL_PACKET, PACKET_AUXDATA
    s.settimeout(0.2)
    print("ready", flush=True)
    got, end = [], time.time() + seconds
    while len(got) < len(FRAMES) and time.time() < end:
        try:
            d, anc, _, _ = s.recvmsg(4096, 256)
        except socket.timeout:
            continue
        if d[6:12] != SRC:
            continue
        for lvl, typ, a in anc:
            if lvl == 263 and typ == 8:
                st, _, _, _, _, tci, tpid = struct.unpack("IIIHHHH", a[:20])
                if st & 0x10:  # TP_STATUS_VLAN_VALID: the kernel took the tag out
                    d = d[:12] + struct.pack("!HH", tpid if st & 0x40 else 0x8100, tci) + d[12:]
        got.append(d)
    bad = []
    if len(got) != len(FRAMES):
        bad.append("%d of %d frames arrived" % (len(got), len(FRAMES)))
    n_marked = 0
    for i, (g, (f, ect)) in enumerate(zip(got, FRAMES)):
        if g == f:
            if ect and i >= 5:
                bad.append("frame %d: ECT behind a full queue, not marked" % i)
        elif ect and g == marked(f):
            n_marked += 1
            if i == 0:
                bad.append("frame 0: marked although the queue was empty")
        else:
            bad.append("frame %d changed:\n  sent %s\n  got  %s" % (i, f.hex(), g.hex()))
    print("marked=%d" % n_marked)
    for b in bad:
        print("BAD: " + b)
    sys.exit(1 if bad else 0)

if __name__ == "__main__":
    send(sys.argv[2]) if sys.argv[1] == "send" else recv(sys.argv[2], float(sys.argv[3]))
PY
relay_start --seed 4 --rate 1 --ecn-mark 2500
ip netns exec "$B" python3 "$SN_TMP/frames.py" recv eth0 5 >"$SN_TMP/frames.out" 2>&1 &
rcv=$!
sn_wait_for 5 grep -q ready "$SN_TMP/frames.out" || sn_fail "frame receiver did not start: $(cat "$SN_TMP/frames.out")"
ip netns exec "$A" python3 "$SN_TMP/frames.py" send eth0 || sn_fail "sending crafted frames"
wait $rcv || sn_fail "crafted frames through the relay: $(cat "$SN_TMP/frames.out")"
relay_stop
seen=$(grep -o "^marked=[0-9]*" "$SN_TMP/frames.out" | cut -d= -f2)
[ "$(relay_stat ce_marked)" = "$seen" ] ||
	sn_fail "relay reports ce_marked=$(relay_stat ce_marked), the receiver saw $seen frames marked"

sn_log "ECN: cubic, tcp_ecn=1 at both ends, --rate 50 --limit-bytes 30000 --ecn-mark 10000"
# A 64 KiB GSO frame would never fit in a 30000-byte queue: MSS-sized segments only.
for dev in "$A eth0" "$MID ra" "$MID rb" "$B eth0"; do
	set -- $dev
	ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 ||
		sn_fail "ethtool -K $2 tso off gso off gro off in $1"
done
for ns in "$A" "$B"; do
	ip netns exec "$ns" sysctl -qw net.ipv4.tcp_ecn=1 || sn_fail "tcp_ecn=1 in $ns"
done
# CUBIC backs off on CE (the namespace's default, BBR, does not): a per-route
# congctl, as a namespace may not pick a congestion control the host does not allow
ip -n "$A" route replace 10.231.0.0/24 dev eth0 proto kernel scope link src 10.231.0.1 congctl cubic ||
	sn_fail "congctl cubic on $A's route"
ce_in0=$(nstat_of "$B" IpExtInCEPkts) ce_echo0=$(nstat_of "$A" TcpExtTCPDeliveredCE)
head -c 8000000 /dev/urandom >"$SN_TMP/data8"
relay_start --seed 5 --rate 50 --limit-bytes 30000 --ecn-mark 10000
stream 5004 "$SN_TMP/data8" 30
relay_stop
ce_in=$(($(nstat_of "$B" IpExtInCEPkts) - ce_in0))
ce_echo=$(($(nstat_of "$A" TcpExtTCPDeliveredCE) - ce_echo0))
sn_log "8 MB intact in $((stream_ns / 1000000)) ms; receiver IpExtInCEPkts +$ce_in, sender TcpExtTCPDeliveredCE +$ce_echo"
[ "$(relay_stat ce_marked)" -gt 0 ] || sn_fail "relay marked nothing CE"
[ "$ce_in" -gt 0 ] || sn_fail "the receiver's kernel counted no CE packet (IpExtInCEPkts)"
[ "$ce_echo" -gt 0 ] || sn_fail "the sender's kernel saw no CE echoed (TcpExtTCPDeliveredCE)"
sn_log "ok"
