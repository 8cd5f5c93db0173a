#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# TCP transmit GSO in the three modes (docs/gso.md). For each of --gso hw, sw
# and off: the peer's veth checksum offload is off (its kernel verifies every
# TCP checksum), curl in the peer fetches a 64 MiB file through --publish over
# IPv4 and a 100 KiB file over IPv6, sha256 compared, the peer's kernel
# counts no TcpInCsumErrors, and a checker on the peer's veth verifies the
# checksum of 300 frames as they arrive (a GSO frame's partial sum included). Then the datapath's link counters must show:
#   hw:  GSO frames larger than the MTU (tx_gso_frames, tx_max_frame, at
#        most 65535 bytes); veth hands them to the peer unsegmented, whose
#        TCP then checks the checksum over the whole large segment
#   sw:  no frame over the MTU (tx_over_mtu 0, tx_max_frame <= MTU + 14, the
#        peer's rx bytes/packets below it too), segments cut in user space
#        (tx_sw_segments) and more than one frame per sendmmsg
#   off: MSS-sized frames, one per syscall, no GSO frame, no split
# Then the peer uploads 64 MiB through --publish, intact; in every mode the
# kernel's TCP GSO frames reach the stack whole (rx_gso_frames > 0).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
command -v curl >/dev/null || sn_skip "curl not installed (scripts/install-deps.sh)"

mkdir "$SN_TMP/www"
tcp_files "$SN_TMP/www"

# A default veth lets a partial checksum through unchecked even with the
# peer's offloads off (measured: a wrong pseudo-header sum in a GSO frame
# still arrives intact), so the peer also reads what arrives with a vnet
# header and checks every checksum itself.
cat >"$SN_TMP/sniff.py" <<'PY'
# Peer-side check of what sandnet sent (tests/lib/vnetcheck.py): verify every
# TCP checksum from 10.77.0.2: a NEEDS_CSUM frame must hold the folded,
# non-inverted pseudo-header sum over the whole L4 length, any other frame a
# full checksum. Prints "frames gso bad maxlen".
import socket, struct, sys
sys.path.insert(0, sys.argv[5])
import vnetcheck as vc
ifname, secs, want = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
s = vc.open_socket(ifname)
open(sys.argv[4], "w").write("ready\n")
frames = gso = bad = maxlen = 0
for v, f in vc.frames(s, secs):
    if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6 or f[26:30] != socket.inet_aton("10.77.0.2"):
        continue
    ihl = (f[14] & 0xf) * 4
    tot = struct.unpack("!H", f[16:18])[0]
    l4 = f[14 + ihl:14 + tot]
    ph = vc.pseudo4(f, 6, len(l4))
    frames += 1
    maxlen = max(maxlen, len(f))
    if v.flags & vc.F_NEEDS_CSUM:
        if v.gso_type:
            gso += 1
        field = struct.unpack("!H", l4[16:18])[0]
        if v.csum_start != 14 + ihl or v.csum_offset != 16 or field != vc.fold(ph):
            bad += 1
    elif vc.fold(ph + vc.osum(l4)) != 0xffff:
        bad += 1
    if frames >= want:
        break
print(frames, gso, bad, maxlen)
PY

# sniff_start: the checker on the peer's veth0, until 300 TCP frames or 20 s
sniff_start() {
	rm -f "$SN_TMP/sniff.ready"
	ip netns exec "$PEER" timeout 30 python3 "$SN_TMP/sniff.py" veth0 20 300 "$SN_TMP/sniff.ready" "$SANDNET_TESTS/lib" \
		>"$SN_TMP/sniff.out" 2>&1 &
	sniff_pid=$!
	sn_on_exit "kill $sniff_pid"
	sn_wait_for 10 test -e "$SN_TMP/sniff.ready" || sn_fail "the peer's checker did not start"
}

# link counter NAME of eth0
link_stat() { dp_stat "d['links']['eth0']['$1']"; }

# the peer veth's received packets and bytes, from `ip -s -j link`
peer_rx() {
	ip -n "$PEER" -s -j link show veth0 |
		python3 -c 'import json,sys; s=json.load(sys.stdin)[0]["stats64"]["rx"]; print(s["packets"], s["bytes"])'
}

for mode in hw sw off; do
	sn_log "---- --gso $mode"
	DP_GSO=$mode
	dp_env_up --publish tcp:80=127.0.0.1:8080 --publish "tcp:[fd77::2]:81=127.0.0.1:8080" \
		--publish tcp:90=127.0.0.1:8090
	tcp_peer_csum_off
	got_mode=$(link_stat gso_mode)
	[ "$got_mode" = "$mode" ] || sn_fail "asked for --gso $mode, the link runs $got_mode"
	mtu=$(link_stat mtu)
	tcp_http "$DPNS" 127.0.0.1 8080 "$SN_TMP/www"
	read -r rx_p0 rx_b0 < <(peer_rx)
	sniff_start
	tcp_fetch "$PEER" "http://10.77.0.2/f64m" "$SN_TMP/www/f64m"
	wait "$sniff_pid" || sn_fail "--gso $mode: the peer's checker failed: $(cat "$SN_TMP/sniff.out")"
	read -r s_frames s_gso s_bad s_max <"$SN_TMP/sniff.out"
	echo "--gso $mode: the peer checked $s_frames frames ($s_gso GSO), $s_bad bad checksums, largest $s_max bytes"
	[ "$s_frames" -ge 100 ] || sn_fail "--gso $mode: the peer's checker saw only $s_frames frames"
	[ "$s_bad" -eq 0 ] || sn_fail "--gso $mode: $s_bad frames with a wrong TCP checksum at the peer"
	if [ "$mode" = hw ]; then
		[ "$s_gso" -ge 10 ] || sn_fail "hw: the peer saw only $s_gso GSO frames"
	else
		[ "$s_gso" -eq 0 ] && [ "$s_max" -le $((mtu + 14)) ] ||
			sn_fail "--gso $mode: the peer saw $s_gso GSO frames, largest $s_max bytes"
	fi
	tcp_fetch "$PEER" "http://[fd77::2]:81/f100k" "$SN_TMP/www/f100k"
	read -r rx_p1 rx_b1 < <(peer_rx)
	[ "$(tcp_peer_csum_errors)" = 0 ] ||
		sn_fail "--gso $mode: the peer counted TcpInCsumErrors: $(tcp_peer_csum_errors)"

	gso=$(link_stat tx_gso_frames)
	sw=$(link_stat tx_sw_segments)
	maxf=$(link_stat tx_max_frame)
	over=$(link_stat tx_over_mtu)
	frames=$(link_stat tx_frames)
	per=$(link_stat tx_frames_per_syscall)
	errs=$(link_stat tx_errors)
	# what the peer received: average packet size on the wire (IP + 14 in ip -s)
	avg=$(( (rx_b1 - rx_b0) / (rx_p1 - rx_p0) ))
	echo "--gso $mode: tx_frames $frames gso_frames $gso sw_segments $sw max_frame $maxf" \
	     "over_mtu $over frames/syscall $per tx_errors $errs; peer rx $((rx_p1 - rx_p0)) packets, avg $avg bytes"
	[ "$errs" -eq 0 ] || sn_fail "--gso $mode: $errs frames refused by the kernel"
	# sw and off: no packet the peer received can be larger than MTU + 14
	# (hw: veth hands the peer the GSO packet whole, counted as one)
	[ "$mode" = hw ] || [ "$((rx_b1 - rx_b0))" -le "$(( (rx_p1 - rx_p0) * (mtu + 14) ))" ] ||
		sn_fail "--gso $mode: the peer received more bytes than MTU-sized packets carry"
	[ "$((rx_b1 - rx_b0))" -ge $((64 * 1024 * 1024)) ] ||
		sn_fail "--gso $mode: the peer received only $((rx_b1 - rx_b0)) bytes"
	case $mode in
	hw)
		[ "$gso" -gt 100 ] || sn_fail "hw: only $gso GSO frames for 64 MiB"
		[ "$maxf" -gt $((mtu + 14)) ] || sn_fail "hw: largest frame $maxf, not over the MTU"
		[ "$maxf" -le 65535 ] || sn_fail "hw: a frame of $maxf bytes (limit 65535)"
		[ "$over" -eq "$gso" ] || sn_fail "hw: $over frames over the MTU but $gso GSO frames"
		;;
	sw)
		[ "$over" -eq 0 ] || sn_fail "sw: $over frames over the MTU left the datapath"
		[ "$maxf" -le $((mtu + 14)) ] || sn_fail "sw: largest frame $maxf over MTU $mtu + 14"
		[ "$gso" -eq 0 ] || sn_fail "sw: $gso GSO frames"
		[ "$sw" -gt 10000 ] || sn_fail "sw: only $sw segments cut in user space"
		python3 -c "import sys; sys.exit(0 if $per > 1 else 1)" ||
			sn_fail "sw: $per frames per sendmmsg"
		;;
	off)
		[ "$over" -eq 0 ] || sn_fail "off: $over frames over the MTU"
		[ "$gso" -eq 0 ] && [ "$sw" -eq 0 ] || sn_fail "off: $gso GSO frames, $sw split segments"
		python3 -c "import sys; sys.exit(0 if $per == 1 else 1)" ||
			sn_fail "off: $per frames per syscall, expected 1"
		;;
	esac
	# receive: the peer uploads 64 MiB with its offloads back on (tx off took
	# TSO with it); in every mode the kernel's GSO frames reach TCP whole
	# with their vnet header (rx_gso_frames): the channel has one in every
	# mode, sw and off only send without GSO.
	ip netns exec "$PEER" ethtool -K veth0 tx on rx on tso on >/dev/null 2>&1 ||
		sn_fail "ethtool -K veth0 tx on rx on tso on in the peer"
	rx_gso0=$(link_stat rx_gso_frames)
	segs0=$(dp_stat "d['tcp']['segs_in']")
	rm -f "$SN_TMP/up"
	ip netns exec "$DPNS" timeout 60 socat -u TCP-LISTEN:8090,bind=127.0.0.1,reuseaddr \
		"CREATE:$SN_TMP/up" &
	up_pid=$!
	sn_on_exit "kill $up_pid"
	tcp_wait_listen "$DPNS" 8090
	ip netns exec "$PEER" timeout 60 socat -u "FILE:$SN_TMP/www/f64m" TCP:10.77.0.2:90 ||
		sn_fail "--gso $mode: the upload failed"
	wait "$up_pid" || sn_fail "--gso $mode: the upload's receiver failed"
	cmp -s "$SN_TMP/up" "$SN_TMP/www/f64m" || sn_fail "--gso $mode: the upload arrived different"
	rx_gso=$(( $(link_stat rx_gso_frames) - rx_gso0 ))
	segs=$(( $(dp_stat "d['tcp']['segs_in']") - segs0 ))
	echo "--gso $mode: 64 MiB upload intact, $rx_gso GSO frames received, TCP took $segs segments"
	[ "$rx_gso" -gt 10 ] || sn_fail "--gso $mode: only $rx_gso GSO frames in a 64 MiB upload"
	# 46000 segments of one MSS; whole GSO frames make far fewer
	[ "$segs" -lt 30000 ] || sn_fail "--gso $mode: TCP took $segs segments: GSO frames were cut"
	errors=$(dp_stat "sum(s['errors'] + s['connect_failed'] for s in d['services'])")
	[ "$errors" -eq 0 ] || sn_fail "--gso $mode: services counted $errors errors"
	dp_env_down
	dp_env_reset
done
echo ok
