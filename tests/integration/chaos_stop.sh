#!/usr/bin/env bash
# sandnet-test: alone (it stops the datapath for 10 s and times what the peers see)
# A datapath stopped for 10 s (issue 41, "chaos cases"): SIGSTOP, as a
# debugger, a frozen cgroup or an overloaded machine does, then SIGCONT.
# Checked:
#  - meanwhile nothing reaches the container's kernel on its own: eth0 has
#    no address and the fence drops what comes, so a SYN from the peer to a
#    port a program in the container listens on gets no answer (no SYN-ACK,
#    no RST: the connect times out), and the supervisor neither counts a
#    death nor starts another datapath (a stop is not a death);
#  - a connection out and a connection in, each open across the stop with
#    a byte echoed every 200 ms, either survive (every byte echoed, in
#    order: TCP retransmits through the pause) or are reset, never stall
#    for good, and never end up answered by the container's kernel;
#  - afterwards new connections both ways work at once, and the counters
#    show no bad packet.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

STOP_S=10
DP_GSO=hw
dp_env_up
face_check_fenced
tcp_peer_csum_off

# echo servers: in the peer (for the connection out) and in the container (for the one in)
cat >"$SN_TMP/echo.py" <<'PY'
import socket, sys, threading
def serve(c):
    try:
        while True:
            d = c.recv(4096)
            if not d:
                break
            c.sendall(d)
    except OSError:
        pass
    c.close()
ls = socket.socket(socket.AF_INET6); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("::", int(sys.argv[1]))); ls.listen(16)
while True:
    c, a = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
ip netns exec "$PEER" python3 "$SN_TMP/echo.py" 7001 &
sn_on_exit "kill $!"
ip netns exec "$CT" python3 "$SN_TMP/echo.py" 7002 &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 7001
tcp_wait_listen "$CT" 7002

# a client that sends one numbered byte every 200 ms for SECS s and checks each echo;
# prints "ok N" (all N echoed in order), "reset after N" or "stalled after N"
cat >"$SN_TMP/ticker.py" <<'PY'
import socket, sys, time
host, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.create_connection((host, port), timeout=5)
s.settimeout(30)	# a pause of 10 s plus the retransmission backoff, with room
n, end = 0, time.monotonic() + secs
try:
    while time.monotonic() < end:
        b = bytes([n % 256])
        s.sendall(b)
        got = s.recv(1)
        if got != b:
            print("wrong byte after", n)
            sys.exit(1)
        n += 1
        time.sleep(0.2)
    print("ok", n)
except ConnectionResetError:
    print("reset after", n)
except socket.timeout:
    print("stalled after", n)
PY
secs=$((STOP_S + 8))
ip netns exec "$CT" python3 "$SN_TMP/ticker.py" 10.77.0.1 7001 "$secs" >"$SN_TMP/out.txt" 2>&1 &
OUT_PID=$!
ip netns exec "$PEER" python3 "$SN_TMP/ticker.py" 10.77.0.2 7002 "$secs" >"$SN_TMP/in.txt" 2>&1 &
IN_PID=$!
sleep 2
deaths0=$(dp_stat "raw['supervisor']['deaths']")

sn_log "the datapath stopped for $STOP_S s"
kill -STOP "$DP_PID"
sn_on_exit "kill -CONT $DP_PID 2>/dev/null"
t0=$(date +%s.%N)
# a new connection to a port the container listens on: the container's kernel must not answer
got=$(ip netns exec "$PEER" python3 - <<'PY'
import errno, socket
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("10.77.0.2", 7002))
    print("connected")
except socket.timeout:
    print("timeout")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
PY
)
[ "$got" = timeout ] || sn_fail "a SYN to the stopped container's listening port: $got (its kernel answered?)"
echo "ok: a SYN meanwhile: $got"
ip netns exec "$CT" nft list tables | grep -q "^table netdev sandnet_" || sn_fail "the fence went away"
ip -n "$CT" -j addr show dev eth0 | grep -q '"local"' && sn_fail "eth0 got an address back"
python3 -c "import time, sys; time.sleep(max(0, $STOP_S - (time.time() - float(sys.argv[1]))))" "$t0"
kill -CONT "$DP_PID"
echo "ok: stopped for $(python3 -c "import time, sys; print(round(time.time() - float(sys.argv[1]), 1))" "$t0") s"

sn_log "after SIGCONT: the open connections, the supervisor, new connections"
wait "$OUT_PID"; wait "$IN_PID"
for d in out in; do
	r=$(cat "$SN_TMP/$d.txt")
	case $r in
	# 2 s before the stop is 10 echoes at most: more means it went on after
	"ok "*) [ "${r#ok }" -ge 15 ] || sn_fail "$d: only $r bytes echoed in $secs s" ;;
	"reset after "*) ;;
	*) sn_fail "connection $d across the stop: $r" ;;
	esac
	echo "ok: connection $d across the stop: $r"
done
[ "$(dp_stat "raw['pid']")" = "$DP_PID" ] || sn_fail "another datapath serves: $(dp_stat "raw['pid']")"
[ "$(dp_stat "raw['supervisor']['deaths']")" = "$deaths0" ] || sn_fail "the stop was counted as a death"
[ "$(face_errno "$CT" 4 10.77.0.1 7001)" = connected ] || sn_fail "a new connection out after the stop"
[ "$(face_errno "$PEER" 4 10.77.0.2 7002)" = connected ] || sn_fail "a new connection in after the stop"
echo "ok: the same datapath serves ($DP_PID, deaths $deaths0), new connections both ways"
face_check_fenced
face_check_clean policy
dp_env_down
