#!/usr/bin/env bash
# 64 MiB each way through the stack at 1 % random loss (nftables numgen on
# the peer's veth, both directions; datapath_tcp_loss5.sh runs this with
# LOSS_PCT=5), sha256 compared:
#   stack receives: --forward tcp, curl in the datapath's netns, kernel
#                   http.server in the peer
#   stack sends:    --publish tcp, curl in the peer, http.server in the
#                   datapath's netns
# The peer's checksum offload is off: its kernel must count no checksum
# error, and the stack must have recovered losses with SACK.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
command -v curl >/dev/null || sn_skip "curl not installed (scripts/install-deps.sh)"
command -v nft >/dev/null || sn_skip "nft not installed"

dp_env_up --forward tcp:127.0.0.1:8080=10.77.0.1:80 --publish tcp:80=127.0.0.1:8081
tcp_peer_csum_off
mkdir "$SN_TMP/www"
head -c $((64 * 1024 * 1024)) /dev/urandom >"$SN_TMP/www/f64m"
tcp_http "$PEER" 10.77.0.1 80 "$SN_TMP/www"
tcp_http "$DPNS" 127.0.0.1 8081 "$SN_TMP/www"

LOSS_PCT=${LOSS_PCT:-1}
pct=$LOSS_PCT
sn_log "$pct % loss"
tcp_peer_loss "$pct"
tcp_fetch "$DPNS" "http://127.0.0.1:8080/f64m" "$SN_TMP/www/f64m" --max-time "$((LOSS_PCT >= 5 ? 100 : 50))"
tcp_fetch "$PEER" "http://10.77.0.2/f64m" "$SN_TMP/www/f64m" --max-time "$((LOSS_PCT >= 5 ? 100 : 50))"
echo "peer dropped (in, out): $(tcp_peer_loss_counts)"
tcp_peer_loss 0
dp_stats | sed -n '/^tcp_connections/,$p' | grep "local 10.77.0.2:80 "

sent_recov=$(dp_stat "sum(c['sack_recoveries'] for c in d['tcp_connections'] if c['local'] == '10.77.0.2:80')")
retrans=$(dp_stat "sum(c['retrans'] for c in d['tcp_connections'] if c['local'] == '10.77.0.2:80')")
rtos=$(dp_stat "sum(c['rtos'] for c in d['tcp_connections'] if c['local'] == '10.77.0.2:80')")
rack=$(dp_stat "sum(c['rack_lost'] for c in d['tcp_connections'] if c['local'] == '10.77.0.2:80')")
undos=$(dp_stat "sum(c['undos'] for c in d['tcp_connections'] if c['local'] == '10.77.0.2:80')")
echo "stack as sender: $retrans retransmitted segments, $sent_recov SACK recoveries, $rtos RTOs," \
	"$rack segments RACK marked lost, $undos recoveries undone"
[ "$sent_recov" -gt 0 ] || sn_fail "no SACK recovery in the stats of the sending connections"
tcp_check_clean
dp_env_down
echo ok
