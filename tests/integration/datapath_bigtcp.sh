#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# IPv4 BIG TCP on transmit (docs/gso.md): with the container link's
# gso_max_size and gso_ipv4_max_size raised to 185000, the datapath in hw mode
# sends TCP GSO frames over 64 KiB (IPv4 total length 0), up to that limit.
# 1 GiB through --publish arrives intact at a kernel curl in the peer, whose
# checksum offload is off; the peer reads its veth with a vnet-header packet
# socket and checks the partial checksum of every frame over 64 KiB it sees
# (the field must hold the pseudo-header sum over the whole L4 length, which
# for such a frame is more than 16 bits wide). IPv6 stays under 64 KiB.
#
# Then receive: with the peer's veth raised too, the kernel sends BIG TCP
# frames to the stack (IPv4 total length 0, up to 185000 bytes). The first
# one is cut by the 64 KiB receive buffer (rx_truncated), after which the
# channel's buffers grow (rx_buffers_grown 1) and the rest go into TCP whole;
# being larger than a slot of the channel's receive ring, they are read
# whole from the socket's queue beside it (rx_ring_copies);
# the same file through --forward from a kernel http.server arrives intact.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
command -v curl >/dev/null || sn_skip "curl not installed (scripts/install-deps.sh)"

BIG=185000
# 1 GiB; 256 MiB in the sanitizer build (SANDNET_SANITIZED, as datapath_tcp_1g.sh)
SIZE_MB=${SIZE_MB:-$([ -n "${SANDNET_SANITIZED:-}" ] && echo 256 || echo 1024)}
DP_GSO=hw DP_CT_GSO_MAX=$BIG \
	dp_env_up --publish tcp:80=127.0.0.1:8080 --forward tcp:127.0.0.1:8081=10.77.0.1:80
got=$(dp_stat "d['links']['eth0']['gso_ipv4_max_size']")
[ "$got" -eq $((BIG - 1)) ] || sn_fail "netsetup sent an IPv4 frame limit of $got, not $((BIG - 1))"
tcp_peer_csum_off
mkdir "$SN_TMP/www"
head -c $((SIZE_MB << 20)) /dev/urandom >"$SN_TMP/www/big"
head -c $((4 << 20)) /dev/urandom >"$SN_TMP/www/f4m"
tcp_http "$DPNS" 127.0.0.1 8080 "$SN_TMP/www"

# The peer's checker: frames from 10.77.0.2 with a vnet header; prints
# "frames big bad maxlen" (big: an IP datagram over 65535 bytes), and each bad
# frame on stderr.
cat >"$SN_TMP/sniff.py" <<'PY'
import socket, struct, sys
sys.path.insert(0, sys.argv[5])
import vnetcheck as vc
ifname, secs, want = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
s = vc.open_socket(ifname)
open(sys.argv[4], "w").write("ready\n")
frames = big = bad = maxlen = 0
for v, f in vc.frames(s, secs):
    if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6 or f[26:30] != socket.inet_aton("10.77.0.2"):
        continue
    ihl = (f[14] & 0xf) * 4
    tot = struct.unpack("!H", f[16:18])[0]
    frames += 1
    maxlen = max(maxlen, len(f))
    if len(f) - 14 <= 65535:                 # an IP datagram of at most 64 KiB
        continue
    big += 1
    l4 = f[14 + ihl:]
    field = struct.unpack("!H", l4[16:18])[0]
    expect = vc.fold(vc.pseudo4(f, 6, len(l4)))
    if (tot != 0 or not v.flags & vc.F_NEEDS_CSUM or v.gso_type != vc.GSO_TCPV4 or
            v.csum_start != 14 + ihl or v.csum_offset != 16 or field != expect):
        bad += 1
        print(f"bad frame: {len(f)} bytes, total length {tot}, vnet flags {v.flags} gso_type {v.gso_type} "
              f"csum_start {v.csum_start} csum_offset {v.csum_offset}, checksum field {field:#x}, "
              f"want {expect:#x}", file=sys.stderr)
    if big >= want:
        break
print(frames, big, bad, maxlen)
PY
rm -f "$SN_TMP/sniff.ready"
ip netns exec "$PEER" timeout 60 python3 "$SN_TMP/sniff.py" veth0 40 200 "$SN_TMP/sniff.ready" "$SANDNET_TESTS/lib" \
	>"$SN_TMP/sniff.out" 2>"$SN_TMP/sniff.err" &
sniff_pid=$!
sn_on_exit "kill $sniff_pid"
sn_wait_for 10 test -e "$SN_TMP/sniff.ready" || sn_fail "the peer's checker did not start"

tcp_fetch "$PEER" "http://10.77.0.2/big" "$SN_TMP/www/big" --max-time 300
wait "$sniff_pid" || sn_fail "the peer's checker failed: $(cat "$SN_TMP/sniff.err")"
cat "$SN_TMP/sniff.err"
read -r s_frames s_big s_bad s_max <"$SN_TMP/sniff.out"
echo "the peer checked $s_frames frames, $s_big over 64 KiB, $s_bad bad, largest $s_max bytes"
[ "$s_big" -ge 1 ] || sn_fail "no frame over 64 KiB reached the peer (largest $s_max)"
[ "$s_bad" -eq 0 ] || sn_fail "$s_bad BIG TCP frames with a wrong header or checksum at the peer"
[ "$s_max" -lt "$BIG" ] || sn_fail "a frame of $s_max bytes, not below gso_ipv4_max_size $BIG"
max=$(dp_stat "d['links']['eth0']['tx_max_frame']")
echo "datapath: largest frame $max bytes"
[ "$max" -gt 65549 ] && [ "$max" -lt "$BIG" ] || sn_fail "datapath tx_max_frame $max"

sn_log "IPv6 stays under 64 KiB"
tcp_fetch "$PEER" "http://[fd77::2]/f4m" "$SN_TMP/www/f4m"
sn_log "receive: the peer sends BIG TCP frames"
ip netns exec "$PEER" python3 "$SANDNET_TESTS/lib/set_gso_max.py" veth0 "$BIG" ||
	sn_fail "cannot raise the peer veth's GSO limits"
ip netns exec "$PEER" ethtool -K veth0 tx on >/dev/null 2>&1 || sn_fail "ethtool -K veth0 tx on in the peer"
tcp_http "$PEER" 10.77.0.1 80 "$SN_TMP/www"
tcp_fetch "$DPNS" "http://127.0.0.1:8081/big" "$SN_TMP/www/big" --max-time 300
grown=$(dp_stat "d['links']['eth0']['rx_buffers_grown']")
rx_gso=$(dp_stat "d['links']['eth0']['rx_gso_frames']")
echo "receive: rx_gso_frames $rx_gso, rx_truncated $(dp_stat "d['links']['eth0']['rx_truncated']"), rx_buffers_grown $grown"
[ "$grown" -eq 1 ] || sn_fail "the receive buffers grew $grown times, not once"
# the channel's ring slots hold an MTU's frame: the GSO frames came whole
# from the socket's queue (TP_STATUS_COPY), the ACKs and ARP through the ring
copies=$(dp_stat "(d['links']['eth0']['rx_ring_channels'], d['links']['eth0']['rx_ring_copies'], \
d['links']['eth0']['rx_ring_frames'])")
echo "receive ring (channels with one, frames read from the queue, frames read from the ring): $copies"
python3 -c "import sys; r = $copies; sys.exit(0 if r[0] >= 1 and r[1] >= $rx_gso and r[2] > 0 else 1)" ||
	sn_fail "the GSO frames did not come from the queue beside the ring: $copies, rx_gso_frames $rx_gso"
ip netns exec "$PEER" ethtool -K veth0 tx off >/dev/null 2>&1
csum=$(tcp_peer_csum_errors)
[ "$csum" = 0 ] || sn_fail "the peer counted $csum TcpInCsumErrors"
dp_stats | grep -E 'tx_max_frame|tx_gso_frames|tx_over_mtu'
dp_env_down
echo ok
