#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# 1 GiB each way through the stack against the Linux kernel, sha256
# compared (issue 5's long transfer), with the peer's checksum offload off:
#   stack receives: --forward tcp, curl in the datapath's netns, kernel
#                   http.server in the peer
#   stack sends:    --publish tcp, curl in the peer, http.server in the
#                   datapath's netns
# LOSS_PCT (default 0) drops that share of frames both ways on the peer's
# veth as datapath_tcp_loss.sh does; `make check-long` runs this at 1 % and
# 5 % too. SIZE_MB sets the size (below).
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
command -v curl >/dev/null || sn_skip "curl not installed (scripts/install-deps.sh)"
command -v nft >/dev/null || sn_skip "nft not installed"

# 1 GiB; 256 MiB in the sanitizer build (`make test SANITIZE=1` sets
# SANDNET_SANITIZED), which is there to catch memory errors, not to repeat the length
SIZE_MB=${SIZE_MB:-$([ -n "${SANDNET_SANITIZED:-}" ] && echo 256 || echo 1024)}
LOSS_PCT=${LOSS_PCT:-0}
# generous: 1 GiB at 5 % loss runs at tens of Mbit/s under the sanitizer
max_time=$((LOSS_PCT >= 5 ? 1800 : LOSS_PCT > 0 ? 600 : 300))

dp_env_up --forward tcp:127.0.0.1:8080=10.77.0.1:80 --publish tcp:80=127.0.0.1:8081
tcp_peer_csum_off
mkdir "$SN_TMP/www"
head -c $((SIZE_MB << 20)) /dev/urandom >"$SN_TMP/www/big" || sn_fail "cannot write $SIZE_MB MiB to $SN_TMP"
tcp_http "$PEER" 10.77.0.1 80 "$SN_TMP/www"
tcp_http "$DPNS" 127.0.0.1 8081 "$SN_TMP/www"

[ "$LOSS_PCT" -eq 0 ] || tcp_peer_loss "$LOSS_PCT"
sn_log "$SIZE_MB MiB each way at $LOSS_PCT % loss"
tcp_fetch "$DPNS" "http://127.0.0.1:8080/big" "$SN_TMP/www/big" --max-time "$max_time"
tcp_fetch "$PEER" "http://10.77.0.2/big" "$SN_TMP/www/big" --max-time "$max_time"
[ "$LOSS_PCT" -eq 0 ] || echo "peer dropped (in, out): $(tcp_peer_loss_counts)"

dp_stats | sed -n '/^tcp$/,/^tcp_connections/p'
tcp_check_clean
dp_env_down
echo ok
