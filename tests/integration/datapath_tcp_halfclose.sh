#!/usr/bin/env bash
# Half-close in both directions, through --publish and --forward:
#  client first: socat sends 1 MiB and shuts down its side; the server sees
#    EOF only through the stack's FIN, then answers with the sha256 of what
#    it got over the still-open other direction.
#  server first: the server sends 1 MiB and shuts down its side; the client
#    reads to EOF, then sends 1 MiB back, which the server hashes.
# Then failed connects are reported the way the other side expects:
#  publish to a closed TARGET port: the container's peer gets a RST;
#  forward to a closed REMOTE port (the kernel answers RST): the local client
#  gets EOF (its socket is closed).
# And a reset of an established connection propagates both ways (publish).
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
command -v socat >/dev/null || sn_skip "socat not installed"

dp_env_up --publish tcp:80=127.0.0.1:8080 --publish tcp:81=127.0.0.1:8081 \
	--forward tcp:127.0.0.1:9080=10.77.0.1:80 --forward tcp:127.0.0.1:9081=10.77.0.1:81 \
	--publish tcp:82=127.0.0.1:9 --forward tcp:127.0.0.1:9082=10.77.0.1:9 \
	--publish tcp:83=127.0.0.1:8083 --publish tcp:84=127.0.0.1:8084
tcp_peer_csum_off

cat >"$SN_TMP/hc.py" <<'PY'
import hashlib, os, socket, sys

def drain(s):
    out = bytearray()
    while True:
        d = s.recv(65536)
        if not d:
            return bytes(out)
        out += d

mode = sys.argv[1]
if mode in ("hash-server", "fin-server"):
    addr, port, outfile = sys.argv[2], int(sys.argv[3]), sys.argv[4]
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port)); ls.listen(8)
    while True:
        c, _ = ls.accept()
        c.settimeout(20)
        if mode == "hash-server":
            got = drain(c)                     # returns only after the FIN
            c.sendall(hashlib.sha256(got).hexdigest().encode() + b"\n")
        else:
            data = os.urandom(1 << 20)
            c.sendall(data)
            c.shutdown(socket.SHUT_WR)         # our FIN first
            got = drain(c)                     # the client still sends
            with open(outfile, "w") as f:
                f.write(hashlib.sha256(data).hexdigest() + " " + hashlib.sha256(got).hexdigest() + "\n")
        c.close()
elif mode == "fin-client":
    host, port, outfile = sys.argv[2], int(sys.argv[3]), sys.argv[4]
    s = socket.create_connection((host, port), timeout=20)
    got = drain(s)                             # server's data and FIN
    data = os.urandom(1 << 20)
    s.sendall(data)                            # our direction is still open
    s.shutdown(socket.SHUT_WR)
    rest = drain(s)
    assert rest == b"", "data after EOF"
    with open(outfile, "w") as f:
        f.write(hashlib.sha256(got).hexdigest() + " " + hashlib.sha256(data).hexdigest() + "\n")
elif mode in ("rst-server", "rst-server-active"):
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((sys.argv[2], int(sys.argv[3]))); ls.listen(8)
    c, _ = ls.accept()
    c.settimeout(10)
    c.recv(1)
    if mode == "rst-server-active":
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
        c.close()
        sys.exit(0)
    try:
        d = c.recv(10)
        res = f"got {d!r}"
    except ConnectionResetError:
        res = "reset"
    with open(sys.argv[4], "w") as f:
        f.write(res + "\n")
elif mode == "rst-client":
    s = socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=10)
    s.sendall(b"x")
    import time; time.sleep(0.5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
    s.close()
elif mode == "expect-reset":
    try:
        # the RST may come before connect() returns: it is the answer too
        s = socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=10)
        s.sendall(b"hello")
        d = s.recv(10)
        sys.exit(f"expected a reset, got {d!r}")
    except ConnectionResetError:
        print("connection reset, as expected")
elif mode == "expect-eof":
    s = socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=10)
    d = s.recv(10)
    if d != b"":
        sys.exit(f"expected EOF, got {d!r}")
    print("EOF, as expected")
PY

head -c $((1 << 20)) /dev/urandom >"$SN_TMP/in"
want=$(sha256sum <"$SN_TMP/in" | cut -d' ' -f1)

# client_first NS HOST PORT: socat sends the file, half-closes, reads the hash
client_first() {
	local got
	got=$(ip netns exec "$1" socat -t 20 -T 20 - "TCP:$2:$3" <"$SN_TMP/in") ||
		sn_fail "socat to $2:$3 failed"
	[ "$got" = "$want" ] || sn_fail "$2:$3: server hashed '$got', sent $want"
	echo "client-first half-close via $2:$3: the server got all of it after our FIN, answered after it"
}

# server_first NS HOST PORT SERVER_OUT: the server's FIN first
server_first() {
	local a b
	ip netns exec "$1" timeout 30 python3 "$SN_TMP/hc.py" fin-client "$2" "$3" "$SN_TMP/client.out" ||
		sn_fail "fin-client to $2:$3 failed"
	sn_wait_for 10 test -s "$4" || sn_fail "$2:$3: the server did not finish"
	read -r a b <"$4"
	[ "$(cat "$SN_TMP/client.out")" = "$a $b" ] ||
		sn_fail "$2:$3: client saw '$(cat "$SN_TMP/client.out")', server '$a $b'"
	echo "server-first half-close via $2:$3: 1 MiB each way intact around the server's FIN"
	rm -f "$4" "$SN_TMP/client.out"
}

ip netns exec "$DPNS" python3 "$SN_TMP/hc.py" hash-server 127.0.0.1 8080 - &
sn_on_exit "kill $!"
ip netns exec "$DPNS" python3 "$SN_TMP/hc.py" fin-server 127.0.0.1 8081 "$SN_TMP/dp.out" &
sn_on_exit "kill $!"
ip netns exec "$PEER" python3 "$SN_TMP/hc.py" hash-server 10.77.0.1 80 - &
sn_on_exit "kill $!"
ip netns exec "$PEER" python3 "$SN_TMP/hc.py" fin-server 10.77.0.1 81 "$SN_TMP/peer.out" &
sn_on_exit "kill $!"
tcp_wait_listen "$DPNS" 8080 8081
tcp_wait_listen "$PEER" 80 81

sn_log "publish: the peer half-closes first, then the backend does"
client_first "$PEER" 10.77.0.2 80
server_first "$PEER" 10.77.0.2 81 "$SN_TMP/dp.out"
sn_log "forward: the local client half-closes first, then the remote server does"
client_first "$DPNS" 127.0.0.1 9080
server_first "$DPNS" 127.0.0.1 9081 "$SN_TMP/peer.out"

sn_log "publish to a closed TARGET port: the peer's connection is reset"
ip netns exec "$PEER" python3 "$SN_TMP/hc.py" expect-reset 10.77.0.2 82 || sn_fail "publish: no reset"
sn_log "forward to a closed REMOTE port: the local client's socket is closed"
ip netns exec "$DPNS" python3 "$SN_TMP/hc.py" expect-eof 127.0.0.1 9082 || sn_fail "forward: no EOF"

sn_log "the peer resets an established connection: the backend sees a reset"
ip netns exec "$DPNS" timeout 20 python3 "$SN_TMP/hc.py" rst-server 127.0.0.1 8083 "$SN_TMP/rst.out" &
rst_pid=$!
ip netns exec "$DPNS" timeout 20 python3 "$SN_TMP/hc.py" rst-server-active 127.0.0.1 8084 - &
tcp_wait_listen "$DPNS" 8083 8084
ip netns exec "$PEER" python3 "$SN_TMP/hc.py" rst-client 10.77.0.2 83 || sn_fail "rst-client"
wait "$rst_pid"
[ "$(cat "$SN_TMP/rst.out")" = reset ] || sn_fail "backend saw '$(cat "$SN_TMP/rst.out")', not a reset"
echo "backend: reset"
sn_log "the backend resets an established connection: the peer sees a reset"
ip netns exec "$PEER" python3 "$SN_TMP/hc.py" expect-reset 10.77.0.2 84 || sn_fail "no reset from the backend"
resets=$(dp_stat "sum(s['resets_in'] + s['resets_out'] for s in d['services'])")
[ "$resets" -eq 2 ] || sn_fail "$resets resets counted, expected 2"

failed=$(dp_stat "sum(s['connect_failed'] for s in d['services'])")
[ "$failed" -eq 2 ] || sn_fail "connect_failed is $failed, expected 2"
closed=$(dp_stat "sum(s['closed'] for s in d['services'])")
[ "$closed" -eq 4 ] || sn_fail "$closed pairs closed gracefully, expected 4"
[ "$(tcp_peer_csum_errors)" = 0 ] || sn_fail "the peer counted TcpInCsumErrors"
dp_stats | sed -n '/^services/,/^tcp:/p'
dp_env_down
echo ok
