#!/usr/bin/env bash
# sandnet-test: alone (it times each connection: a SYN retransmission is 1 s)
# An attach over the kernel's TIME-WAIT leftovers (issue 19): the container
# and the peer first talk kernel to kernel, 3000 short HTTP/1.0-style
# connections each way (the server closes first, so each server's kernel
# keeps a TIME-WAIT socket per tuple), on a port range of 2000 (connect()
# takes the even ones: some 1000 tuples, each used about 3 times) so that
# the next round reuses those 4-tuples. Then sandnet attaches and the same
# 3000 connections run again each way:
#  - outbound, the datapath's SYN on the link meets the peer's TIME-WAIT;
#  - inbound, the face's SYN to the container meets the container's.
# A kernel's TIME-WAIT takes a new SYN whose ISN or timestamp is ahead
# (RFC 6528, RFC 7323's per-connection offsets), else answers with a
# challenge ACK; then the datapath resets it and sends its SYN again at once.
# Either way no connection may wait for a SYN retransmission (1 s): every one
# must complete in well under that, and at least 800 of each direction's
# tuples must have been in TIME-WAIT at the attach. A third round runs over
# the TIME-WAIT the datapath's own connections left: there the kernels must
# take every SYN at once, with no challenge ACK at all.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

N=3000
PORTS=2000
PORT=8090
SLOW_S=0.5	# a SYN retransmission waits 1 s; nothing else here takes 0.5 s

DP_NO_START=1 dp_env_up
for ns in "$CT" "$PEER"; do
	# what the test relies on, whatever the host's defaults: a port range
	# the rounds go around (the second reuses the first's tuples), timestamps, and a
	# TIME-WAIT that a RST ends (RFC 1337 off, the kernel's default)
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="20000 $((20000 + PORTS - 1))" \
		net.ipv4.tcp_timestamps=1 net.ipv4.tcp_rfc1337=0 net.ipv4.tcp_tw_reuse=0 \
		net.ipv4.tcp_max_tw_buckets=262144 || sn_fail "sysctls in $ns"
done

# a server that closes first: every connection leaves TIME-WAIT on its side
server() {
	ip netns exec "$1" python3 - "$PORT" >"$SN_TMP/server-$1.log" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(512)
while True:
    c, _ = s.accept()
    c.settimeout(5)
    try:
        got = b""
        while not got.endswith(b"\r\n\r\n"):
            d = c.recv(1024)
            if not d:
                break
            got += d
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
    except OSError:
        pass
    c.close()
PY
	sn_on_exit "kill $!"
}
server "$CT"
server "$PEER"
tcp_wait_listen "$CT" "$PORT"
tcp_wait_listen "$PEER" "$PORT"

# clients NS ADDR NAME [PORTS_FILE]: N connections one after the other (or
# one from each local port in PORTS_FILE); the local ports to
# $SN_TMP/NAME.ports, the slowest and a summary to stdout
clients() {
	ip netns exec "$1" python3 - "$2" "$PORT" "$N" "$SN_TMP/$3.ports" "$SLOW_S" ${4:+"$4"} <<'PY'
import socket, sys, time
addr, port, n, ports_file, slow = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
bind = sorted({int(p) for p in open(sys.argv[6]).read().split()}) if len(sys.argv) > 6 else None
n = len(bind) if bind else n
times, ports, failed = [], [], []
for i in range(n):
    t0 = time.monotonic()
    try:
        s = socket.create_connection((addr, port), timeout=5, source_address=("0.0.0.0", bind[i]) if bind else None)
        ports.append(s.getsockname()[1])
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        got = b""
        while True:
            d = s.recv(1024)
            if not d:
                break
            got += d
        s.close()
        if not got.endswith(b"ok"):
            failed.append((i, "answer %r" % got[:40]))
    except OSError as e:
        failed.append((i, str(e)))
    times.append(time.monotonic() - t0)
open(ports_file, "w").write("\n".join(map(str, ports)) + "\n")
times.sort()
slow_n = sum(1 for t in times if t >= slow)
print(f"{n} connections to {addr}: p50 {times[n // 2] * 1000:.2f} ms, p99 {times[n * 99 // 100] * 1000:.2f} ms, "
      f"max {times[-1] * 1000:.1f} ms, {slow_n} took {slow} s or more, {len(failed)} failed {failed[:3]}")
sys.exit(1 if failed or slow_n else 0)
PY
}

sn_log "kernel to kernel: $N connections each way"
clients "$CT" 10.77.0.1 k-out || sn_fail "kernel mode, outbound"
clients "$PEER" 10.77.0.2 k-in || sn_fail "kernel mode, inbound"
# the TIME-WAIT tuples each server's kernel keeps: the client's port
tw_ports() {
	ip netns exec "$1" ss -Htn state time-wait "( sport = :$PORT )" |
		awk '{ n = split($4, a, ":"); print a[n] }' | sort -u
}
tw_ports "$PEER" >"$SN_TMP/tw-peer"
tw_ports "$CT" >"$SN_TMP/tw-ct"
echo "TIME-WAIT at the peer: $(wc -l <"$SN_TMP/tw-peer"), in the container: $(wc -l <"$SN_TMP/tw-ct")"
[ "$(wc -l <"$SN_TMP/tw-peer")" -ge 800 ] || sn_fail "the peer keeps too few TIME-WAIT sockets"
[ "$(wc -l <"$SN_TMP/tw-ct")" -ge 800 ] || sn_fail "the container keeps too few TIME-WAIT sockets"

sn_log "attach, and the same $N connections each way over the leftovers"
dp_start
face_check_fenced
clients "$CT" 10.77.0.1 s-out || sn_fail "through sandnet, outbound: a connection waited or failed"
clients "$PEER" 10.77.0.2 s-in || sn_fail "through sandnet, inbound: a connection waited or failed"
out_reused=$(sort -u "$SN_TMP/s-out.ports" | comm -12 - "$SN_TMP/tw-peer" | wc -l)
in_reused=$(sort -u "$SN_TMP/s-in.ports" | comm -12 - "$SN_TMP/tw-ct" | wc -l)
echo "tuples that were in TIME-WAIT: outbound $out_reused (the peer's), inbound $in_reused (the container's)"
[ "$out_reused" -ge 800 ] || sn_fail "outbound reused only $out_reused TIME-WAIT tuples"
[ "$in_reused" -ge 800 ] || sn_fail "inbound reused only $in_reused TIME-WAIT tuples"
# challenged: the SYNs a TIME-WAIT answered with a challenge ACK (the
# kernel's ISNs and timestamps were not ours: about half of them)
challenged() {
	dp_stats_sum | python3 -c '
import json, sys
d = json.load(sys.stdin)
for side in ("tcp", "face_tcp"):
    t = d[side]
    print(side + ":", ", ".join("%s %d" % (k, t[k]) for k in ("syn_challenged", "rtos", "retrans_segs")), file=sys.stderr)
print(d["tcp"]["syn_challenged"] + d["face_tcp"]["syn_challenged"])'
}
c1=$(challenged) || sn_fail "datapath stats"

sn_log "a third round, over the datapath's own TIME-WAIT leftovers: none challenged"
# the kernels now keep TIME-WAIT for the datapath's connections; its ISNs
# (RFC 6528) and timestamps (RFC 7323's per-connection offsets) grow per
# tuple, so a kernel's TIME-WAIT takes every new SYN as it is. One
# connection from each port the last round used (the ports it did not use
# still hold the kernels' own TIME-WAIT)
clients "$CT" 10.77.0.1 s2-out "$SN_TMP/s-out.ports" ||
	sn_fail "third round, outbound: a connection waited or failed"
clients "$PEER" 10.77.0.2 s2-in "$SN_TMP/s-in.ports" ||
	sn_fail "third round, inbound: a connection waited or failed"
c2=$(challenged) || sn_fail "datapath stats"
[ "$c2" = "$c1" ] || sn_fail "$((c2 - c1)) SYNs over the datapath's own TIME-WAIT were challenged"
face_check_clean
dp_env_down
echo ok
