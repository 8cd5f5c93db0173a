#!/usr/bin/env bash
# --forward tcp: curl in the datapath's netns fetches files (1 B, 100 KiB,
# 64 MiB) from a kernel HTTP server in the peer netns through the stack, over
# IPv4 and IPv6; sha256 compared. The peer's checksum offload is off so a
# wrong checksum cannot hide, and its kernel must count no checksum error.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
command -v curl >/dev/null || sn_skip "curl not installed (scripts/install-deps.sh)"

dp_env_up --forward tcp:127.0.0.1:8080=10.77.0.1:80 --forward "tcp:127.0.0.1:8086=[fd77::1]:80"
tcp_peer_csum_off
mkdir "$SN_TMP/www"
tcp_files "$SN_TMP/www"
tcp_http "$PEER" :: 80 "$SN_TMP/www"

for f in f1 f100k f64m; do
	tcp_fetch "$DPNS" "http://127.0.0.1:8080/$f" "$SN_TMP/www/$f"
done
for f in f1 f100k; do
	tcp_fetch "$DPNS" "http://127.0.0.1:8086/$f" "$SN_TMP/www/$f"
done
dp_stats | sed -n '/^services/,$p'
[ "$(tcp_peer_csum_errors)" = 0 ] || sn_fail "the peer counted TcpInCsumErrors: $(tcp_peer_csum_errors)"
errors=$(dp_stat "sum(s['errors'] + s['connect_failed'] for s in d['services'])")
[ "$errors" -eq 0 ] || sn_fail "services counted $errors errors"
dp_env_down
echo ok
