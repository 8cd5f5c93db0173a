#!/usr/bin/env bash
# --publish tcp: curl in the peer netns fetches files (1 B, 100 KiB, 64 MiB)
# from python3 http.server in the datapath's netns through the container's
# address, IPv4 and IPv6, sha256 compared; the peer's checksum offload is off
# and its kernel must count no checksum error. Then `datapath stats` shows a
# live connection like `ss -ti` (text and JSON).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
command -v curl >/dev/null || sn_skip "curl not installed (scripts/install-deps.sh)"

dp_env_up --publish tcp:80=127.0.0.1:8080 --publish "tcp:[fd77::2]:81=127.0.0.1:8080"
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

sn_log "a slow download is listed in the stats while it runs"
ip netns exec "$PEER" curl -sS --max-time 20 --limit-rate 2M -o /dev/null http://10.77.0.2/f64m &
curl_pid=$!
sn_on_exit "kill $curl_pid"
sn_wait_for 5 sh -c "'$DATAPATH' stats --control '$DP_CTL' >/dev/null" || true
sleep 1
ip netns exec "$DPNS" "$DATAPATH" stats --control "$DP_CTL" | sed -n '/^tcp_connections/,$p' >"$SN_TMP/text"
cat "$SN_TMP/text"
grep -q "state ESTABLISHED local 10.77.0.2:80 remote 10.77.0.1:" "$SN_TMP/text" ||
	sn_fail "no ESTABLISHED row for the download in the text stats"
dp_stat "[c for c in d['tcp_connections'] if c['local'] == '10.77.0.2:80' and c['state'] == 'ESTABLISHED' and c['cwnd'] > 0 and c['bytes_acked'] > 0 and c['sndbuf'] > 0]" |
	grep -q "cwnd" || sn_fail "no live connection with cwnd and bytes in the JSON stats"
kill "$curl_pid"

[ "$(tcp_peer_csum_errors)" = 0 ] || sn_fail "the peer counted TcpInCsumErrors: $(tcp_peer_csum_errors)"
errors=$(dp_stat "sum(s['errors'] + s['connect_failed'] for s in d['services'])")
[ "$errors" -eq 0 ] || sn_fail "services counted $errors errors"
dp_env_down
echo ok
