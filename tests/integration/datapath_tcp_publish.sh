#!/usr/bin/env bash
# --publish tcp: curl in the peer netns fetches files (1 B, 100 KiB, 64 MiB)
# from python3 http.server in the datapath's netns through the container's
# address, IPv4 and IPv6, sha256 compared; the peer's checksum offload is off
# and its kernel must count no checksum error. Then `datapath stats` shows a
# live connection like `ss -ti` (text and JSON), and an ICMP fragmentation
# needed quoting it lowers its MSS while the download goes on intact.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
command -v curl >/dev/null || sn_skip "curl not installed (scripts/install-deps.sh)"

dp_env_up --publish tcp:80=127.0.0.1:8080 --publish "tcp:[fd77::2]:81=127.0.0.1:8080" \
	--publish tcp:82=127.0.0.1:8082
tcp_peer_csum_off
mkdir "$SN_TMP/www"
tcp_files "$SN_TMP/www"
tcp_http "$DPNS" 127.0.0.1 8080 "$SN_TMP/www"

for f in f1 f100k f64m; do
	tcp_fetch "$PEER" "http://10.77.0.2/$f" "$SN_TMP/www/$f"
done
for f in f1 f100k f64m; do
	tcp_fetch "$PEER" "http://[fd77::2]:81/$f" "$SN_TMP/www/$f"
done
sn_log "port 81 is published on the IPv6 address only: IPv4 is refused"
ip netns exec "$PEER" curl -sS --max-time 5 -o /dev/null http://10.77.0.2:81/f1 2>"$SN_TMP/err"
rc=$?
# curl exit 7: could not connect (a RST to the SYN; a timeout would be 28)
[ "$rc" -eq 7 ] || sn_fail "10.77.0.2:81: curl exit $rc: $(cat "$SN_TMP/err")"

sn_log "a paced download (4 MiB in about 1.5 s) is listed in the stats while it runs"
head -c $((4 << 20)) /dev/urandom >"$SN_TMP/f4m"
ip netns exec "$DPNS" python3 - "$SN_TMP/f4m" <<'PY' &
import socket, sys, time
data = open(sys.argv[1], "rb").read()
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 8082)); ls.listen(1)
c, _ = ls.accept()
for i in range(0, len(data), 65536):
    c.sendall(data[i:i + 65536])
    time.sleep(0.025)
c.close()
PY
sn_on_exit "kill $!"
tcp_wait_listen "$DPNS" 8082
ip netns exec "$PEER" timeout 20 socat -u TCP:10.77.0.2:82 "CREATE:$SN_TMP/slow" &
slow_pid=$!
sn_on_exit "kill $slow_pid"
sleep 0.4
ip netns exec "$DPNS" "$DATAPATH" stats --control "$DP_CTL" | sed -n '/^tcp_connections/,$p' >"$SN_TMP/text"
grep "local 10.77.0.2:82 " "$SN_TMP/text"
grep -q "state ESTABLISHED local 10.77.0.2:82 remote 10.77.0.1:" "$SN_TMP/text" ||
	sn_fail "no ESTABLISHED row for the download in the text stats"
port=$(dp_stat "[c['remote'].split(':')[1] for c in d['tcp_connections'] if c['local'] == '10.77.0.2:82' and c['state'] == 'ESTABLISHED' and c['cwnd'] > 0 and c['bytes_acked'] > 0 and c['sndbuf'] > 0][0]") ||
	sn_fail "no live connection with cwnd and bytes in the JSON stats"

sn_log "ICMP fragmentation needed (MTU 1200) quoting the download lowers its MSS"
ip netns exec "$PEER" python3 - "$port" <<'PY' || sn_fail "sending the ICMP error"
import socket, struct, sys
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack(f"!{len(b)//2}H", b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 1500, 0, 0x4000, 64, 6, 0,
                 socket.inet_aton("10.77.0.2"), socket.inet_aton("10.77.0.1"))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
tcp8 = struct.pack("!HHI", 82, int(sys.argv[1]), 0)
msg = struct.pack("!BBHHH", 3, 4, 0, 0, 1200) + ip + tcp8
msg = msg[:2] + struct.pack("!H", csum(msg)) + msg[4:]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.sendto(msg, ("10.77.0.2", 0))
PY
sleep 0.3
mss=$(dp_stat "[c['mss'] for c in d['tcp_connections'] if c['remote'] == '10.77.0.1:$port'][0]")
echo "MSS after the ICMP error: $mss"
[ "$mss" -le 1160 ] || sn_fail "MSS $mss after fragmentation needed with MTU 1200"
wait "$slow_pid" || sn_fail "the paced download failed"
cmp -s "$SN_TMP/slow" "$SN_TMP/f4m" || sn_fail "the download differs after the MSS change"
echo "the download finished intact; segments split to the new MSS: $(dp_stat "d['tcp']['tx_split']")"

[ "$(tcp_peer_csum_errors)" = 0 ] || sn_fail "the peer counted TcpInCsumErrors: $(tcp_peer_csum_errors)"
errors=$(dp_stat "sum(s['errors'] + s['connect_failed'] for s in d['services'])")
[ "$errors" -eq 0 ] || sn_fail "services counted $errors errors"
dp_env_down
echo ok
