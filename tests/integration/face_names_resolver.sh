#!/usr/bin/env bash
# What a resolver that lies, or says too much, gets (issue 42): the names
# policy reads every answer before it reaches the container. A resolver of
# the test's own in the peer (Python) answers:
#  - good.allowed.test: one A record, 10.77.0.11: passes, binds, reachable;
#  - swap.allowed.test: an answer whose question is other.test (a name no
#    rule allows) with an A record for 10.77.0.12: dropped as dns_unasked,
#    the container's lookup times out, and 10.77.0.12 stays refused;
#  - big.allowed.test: 300 A records, over the 4096 bytes a UDP answer may
#    have: dropped as dns_too_big, nothing of it bound (its first address
#    stays refused);
#  - anything else: REFUSED (never asked: the datapath refuses those names).
# And a UDP GSO frame (UDP_SEGMENT, what no resolver library sends) to port
# 53: dropped as bad_dns, the resolver receives none of its datagrams.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

DP_GSO=hw
dp_env_up --egress-allow "tcp:*.allowed.test:8002"
face_check_fenced
tcp_peer_csum_off
for a in 10.77.0.11 10.77.0.12 10.77.0.20; do ip -n "$PEER" addr add "$a/24" dev veth0; done

cat >"$SN_TMP/resolver.py" <<'PY'
import socket, struct, sys
log = open(sys.argv[1], "a", buffering=1)
def name(n):
    return b"".join(bytes([len(l)]) + l.encode() for l in n.split(".")) + b"\0"
def a_rr(addr):
    return b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 300, 4) + socket.inet_aton(addr)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.77.0.1", 53))
while True:
    q, peer = s.recvfrom(65535)
    qid, = struct.unpack(">H", q[:2])
    # the question: labels up to the root, then type and class
    i, labels = 12, []
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode(errors="replace"))
        i += 1 + q[i]
    qname, qtype = ".".join(labels), q[i + 1:i + 3]
    log.write(f"query {qname} {len(q)}\n")
    question = q[12:i + 5]
    if qtype != b"\x00\x01":	# AAAA and the rest: no records
        s.sendto(struct.pack(">HHHHHH", qid, 0x8180, 1, 0, 0, 0) + question, peer)
    elif qname == "good.allowed.test":
        s.sendto(struct.pack(">HHHHHH", qid, 0x8180, 1, 1, 0, 0) + question + a_rr("10.77.0.11"), peer)
    elif qname == "swap.allowed.test":
        other = name("other.test") + b"\x00\x01\x00\x01"
        s.sendto(struct.pack(">HHHHHH", qid, 0x8180, 1, 1, 0, 0) + other + a_rr("10.77.0.12"), peer)
    elif qname == "big.allowed.test":
        rrs = b"".join(a_rr("10.77.%d.%d" % (1 + k // 250, 20 + k % 200)) for k in range(300))
        rrs = a_rr("10.77.0.20") + rrs
        s.sendto(struct.pack(">HHHHHH", qid, 0x8180, 1, 301, 0, 0) + question + rrs, peer)
    else:
        s.sendto(struct.pack(">HHHHHH", qid, 0x8185, 1, 0, 0, 0) + question, peer)
PY
: >"$SN_TMP/resolver.log"
ip netns exec "$PEER" python3 "$SN_TMP/resolver.py" "$SN_TMP/resolver.log" &
sn_on_exit "kill $!"
ip netns exec "$PEER" python3 -c '
import socket, threading
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", 8002)); ls.listen(16)
while True:
    c, a = ls.accept(); c.sendall(b"hi"); c.close()
' &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 8002
sn_wait_for 10 sh -c "ip netns exec '$PEER' ss -Hlun 'sport = :53' | grep -q ." || sn_fail "the resolver did not start"
printf 'nameserver 10.77.0.1\noptions attempts:1 timeout:2\n' >"$SN_TMP/resolv.conf"
lookup() {
	ip netns exec "$CT" unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec getent ahostsv4 "$1"' \
		"$SN_TMP/resolv.conf" "$1" 2>/dev/null | awk '{print $1}' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
expect_tcp() {
	local got
	got=$(face_errno "$CT" 4 "$2" 8002)
	[ "$got" = "$1" ] || sn_fail "connect to $2:8002: $got, expected $1"
	echo "ok: connect $2:8002: $got"
}
drops() {
	dp_stats_sum | python3 -c 'import json, sys; d = json.load(sys.stdin)["face"]["drops"]; print(d["'"$1"'"])'
}

sn_log "an honest answer passes and binds"
[ "$(lookup good.allowed.test)" = 10.77.0.11 ] || sn_fail "good.allowed.test: $(lookup good.allowed.test)"
expect_tcp connected 10.77.0.11

sn_log "an answer for a name never let out: dropped (dns_unasked), nothing bound"
got=$(lookup swap.allowed.test)
[ -z "$got" ] || sn_fail "swap.allowed.test answered: $got"
grep -q "query swap.allowed.test" "$SN_TMP/resolver.log" || sn_fail "the resolver was not asked: $(cat "$SN_TMP/resolver.log")"
[ "$(drops dns_unasked)" -ge 1 ] || sn_fail "no dns_unasked drop"
expect_tcp EHOSTUNREACH 10.77.0.12
echo "ok: dns_unasked $(drops dns_unasked)"

sn_log "an answer over 4096 bytes: dropped (dns_too_big), nothing bound"
got=$(lookup big.allowed.test)
[ -z "$got" ] || sn_fail "big.allowed.test answered: $got"
[ "$(drops dns_too_big)" -ge 1 ] || sn_fail "no dns_too_big drop"
expect_tcp EHOSTUNREACH 10.77.0.20
echo "ok: dns_too_big $(drops dns_too_big)"

sn_log "a UDP GSO frame to port 53: dropped (bad_dns), the resolver sees none of it"
before=$(drops bad_dns)
queries=$(wc -l <"$SN_TMP/resolver.log")
ip netns exec "$CT" python3 -c '
import socket, struct
UDP_SEGMENT = 103
q = struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"\x04good\x07allowed\x04test\x00\x00\x01\x00\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_UDP, UDP_SEGMENT, len(q))
s.sendto(q * 3, ("10.77.0.1", 53))	# three queries, one GSO frame
' || sn_fail "UDP_SEGMENT send"
for _ in $(seq 50); do
	[ "$(drops bad_dns)" -gt "$before" ] && break
	sleep 0.1
done
[ "$(drops bad_dns)" -gt "$before" ] || sn_fail "the GSO frame was not dropped as bad_dns"
sleep 0.5
[ "$(wc -l <"$SN_TMP/resolver.log")" = "$queries" ] || sn_fail "the resolver got the GSO frame's queries: $(tail -n 3 "$SN_TMP/resolver.log")"
echo "ok: bad_dns $before -> $(drops bad_dns)"
face_check_clean bad_dns dns_unasked dns_too_big policy
dp_env_down
