#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# UDP GSO on transmit (docs/gso.md) in the three modes. For each of --gso hw,
# sw and off, with the peer's veth checksum offload off:
#   --forward udp:127.0.0.1:8000=10.77.0.1:7000
#   --forward udp:127.0.0.1:8001=[fd77::1]:7001
# A client in the datapath's netns sends bursts of datagrams (runs of one
# size with a shorter tail, 1-byte datagrams, MTU-sized ones that need two
# GSO frames, mixed sizes, one above the MTU) while the datapath is stopped
# (SIGSTOP), so that one recvmmsg() sees each burst whole. Kernel UDP sockets
# in the peer netns must receive exactly the datagrams sent, in order, with
# their boundaries (sizes and SHA-256 compared), and the peer's kernel must
# count no UDP checksum error. Since a wrong partial checksum in a GSO frame
# passes the peer's kernel unseen (docs/gso.md, "Checksum testing"), a reader
# on the peer's veth with a vnet header also checks every UDP frame from the
# datapath: a GSO frame's vnet header (gso_type UDP_L4, csum_start/offset),
# its UDP length (the whole L4 length) and its checksum field (the
# folded pseudo-header sum over that length); any other frame's full checksum.
# Then the counters: hw sends GSO frames (udp_tx_gso_frames, the link's
# tx_gso_frames); sw cuts datagrams in user space and sends more than one
# frame per sendmmsg(); off sends one frame per syscall and no GSO frame.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"

cat >"$SN_TMP/recv.py" <<'PY'
# The peer's receivers: one UDP socket per family; prints "FAMILY LEN SHA"
# per datagram until an END datagram arrived on both, or the timeout.
import hashlib, select, socket, sys, time
out = open(sys.argv[1], "w")
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s4.bind(("10.77.0.1", 7000))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.bind(("fd77::1", 7001))
for s in (s4, s6):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
open(sys.argv[2], "w").write("ready\n")
ends, end = 0, time.time() + 40
while ends < 2 and time.time() < end:
    for s in select.select([s4, s6], [], [], 0.2)[0]:
        d = s.recv(70000)
        if d == b"END":
            ends += 1
            continue
        out.write(f"{4 if s is s4 else 6} {len(d)} {hashlib.sha256(d).hexdigest()[:16]}\n")
out.close()
PY

cat >"$SN_TMP/send.py" <<'PY'
# The client: bursts to the two forward listeners, each sent while the
# datapath is stopped so that it reads the burst in one recvmmsg(). Writes
# what the peer must receive, in the receiver's format.
import hashlib, os, signal, socket, sys, time
pid = int(sys.argv[1])
out = open(sys.argv[2], "w")
dst = {4: ("127.0.0.1", 8000), 6: ("127.0.0.1", 8001)}
mtu_payload = {4: 1500 - 28, 6: 1500 - 48}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
def bursts(fam):
    m = mtu_payload[fam]
    return [
        [1000] * 40 + [300],                     # a run with a short tail
        [m] * 50,                                # MTU-sized: two GSO frames
        [1] * 30,                                # 1-byte datagrams
        [500, 500, 700, 700, 700, 100, m, 2000, 3, 3, 9],  # mixed, one fragmented
        [m] * 20 + [1],                          # MTU-sized run, 1-byte tail
    ]
for fam in (4, 6):
    for sizes in bursts(fam):
        os.kill(pid, signal.SIGSTOP)
        try:
            for n in sizes:
                d = os.urandom(n)
                s.sendto(d, dst[fam])
                out.write(f"{fam} {n} {hashlib.sha256(d).hexdigest()[:16]}\n")
        finally:
            os.kill(pid, signal.SIGCONT)
        time.sleep(0.2)
out.close()
time.sleep(0.5)
for fam in (4, 6):
    s.sendto(b"END", dst[fam])
PY

cat >"$SN_TMP/sniff.py" <<'PY'
# Peer-side check of the UDP frames the datapath sent (from 10.77.0.2 or
# fd77::2), read from the peer's veth with a vnet header: GSO frames arrive
# whole. Prints "frames gso datagrams bad maxlen" and the reason of each bad.
import socket, struct, sys
sys.path.insert(0, sys.argv[4])
import vnetcheck as vc                      # tests/lib/vnetcheck.py
ifname, secs = sys.argv[1], float(sys.argv[2])
s = vc.open_socket(ifname)
open(sys.argv[3], "w").write("ready\n")
src4, src6 = socket.inet_aton("10.77.0.2"), socket.inet_pton(socket.AF_INET6, "fd77::2")
fold, osum = vc.fold, vc.osum
frames = gso = dgrams = bad = maxlen = ends = 0
why = []
for v, f in vc.frames(s, secs):
    flags, gtype, hlen, gsize, cstart, coff = (v.flags, v.gso_type, v.hdr_len, v.gso_size,
                                               v.csum_start, v.csum_offset)
    if f[12:14] == b"\x08\x00" and len(f) >= 42 and f[23] == 17 and f[26:30] == src4:
        l3 = (f[14] & 0xf) * 4
        if struct.unpack("!H", f[20:22])[0] & 0x3fff:
            continue                        # a fragment: its checksum is the whole datagram's
        l4 = f[14 + l3:14 + struct.unpack("!H", f[16:18])[0]]
        ph = vc.pseudo4(f, 17, len(l4))
    elif f[12:14] == b"\x86\xdd" and len(f) >= 62 and f[20] == 17 and f[22:38] == src6:
        l3 = 40
        l4 = f[54:54 + struct.unpack("!H", f[18:20])[0]]
        ph = vc.pseudo6(f, 17, len(l4))
    else:
        continue
    if l4[8:] == b"END":
        ends += 1
        if ends == 2:
            break
        continue
    frames += 1
    maxlen = max(maxlen, len(f))
    ulen, field = struct.unpack("!H", l4[4:6])[0], struct.unpack("!H", l4[6:8])[0]
    err = None
    if ulen != len(l4):
        err = f"UDP length {ulen}, L4 bytes {len(l4)}"
    elif flags & 1:                         # NEEDS_CSUM: the field holds the pseudo-header sum
        if cstart != 14 + l3 or coff != 6:
            err = f"csum_start {cstart} csum_offset {coff}"
        elif field != fold(ph):
            err = f"partial checksum {field:#x}, expected {fold(ph):#x}"
    elif field == 0 or fold(ph + osum(l4)) != 0xffff:
        err = f"checksum {field:#x} wrong"
    if gtype:
        gso += 1
        # hdr_len on receive is the kernel's linear part: at least the headers
        if gtype != 5 or not flags & 1 or hlen < 14 + l3 + 8 or not gsize:
            err = err or f"vnet gso_type {gtype} flags {flags} hdr_len {hlen} gso_size {gsize}"
        else:
            dgrams += (len(l4) - 8 + gsize - 1) // gsize
    else:
        dgrams += 1
    if err:
        bad += 1
        why.append(err)
print(frames, gso, dgrams, bad, maxlen)
for w in why[:10]:
    print(w)
PY

link_stat() { dp_stat "d['links']['eth0']['$1']"; }
peer_csum_errors() {
	ip netns exec "$PEER" nstat -az UdpInCsumErrors Udp6InCsumErrors |
		awk '/CsumErrors/ { n += $2 } END { print n + 0 }'
}

for mode in hw sw off; do
	sn_log "---- --gso $mode"
	DP_GSO=$mode
	dp_env_up --forward udp:127.0.0.1:8000=10.77.0.1:7000 --forward "udp:127.0.0.1:8001=[fd77::1]:7001"
	ip netns exec "$PEER" ethtool -K veth0 tx off rx off >/dev/null 2>&1 ||
		sn_fail "ethtool -K veth0 tx off rx off in the peer"
	got_mode=$(link_stat gso_mode)
	[ "$got_mode" = "$mode" ] || sn_fail "asked for --gso $mode, the link runs $got_mode"
	mtu=$(link_stat mtu)
	rm -f "$SN_TMP/recv.ready" "$SN_TMP/sniff.ready"
	ip netns exec "$PEER" timeout 50 python3 "$SN_TMP/recv.py" "$SN_TMP/got" "$SN_TMP/recv.ready" &
	recv_pid=$!
	sn_on_exit "kill $recv_pid"
	ip netns exec "$PEER" timeout 50 python3 "$SN_TMP/sniff.py" veth0 40 "$SN_TMP/sniff.ready" "$SANDNET_TESTS/lib" \
		>"$SN_TMP/sniff.out" 2>&1 &
	sniff_pid=$!
	sn_on_exit "kill $sniff_pid"
	sn_wait_for 10 test -e "$SN_TMP/recv.ready" || sn_fail "the peer's receiver did not start"
	sn_wait_for 10 test -e "$SN_TMP/sniff.ready" || sn_fail "the peer's checker did not start"
	# the peer's neighbour entries first, so no burst waits for resolution
	ip netns exec "$DPNS" python3 -c '
import socket
for a in (("127.0.0.1", 8000), ("127.0.0.1", 8001)):
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"", a)'
	sleep 0.5
	csum0=$(peer_csum_errors)
	ip netns exec "$DPNS" python3 "$SN_TMP/send.py" "$DP_PID" "$SN_TMP/want" || sn_fail "--gso $mode: the client failed"
	wait "$recv_pid" || sn_fail "--gso $mode: the receiver failed"
	wait "$sniff_pid" || sn_fail "--gso $mode: the peer's checker failed: $(cat "$SN_TMP/sniff.out")"
	# the two empty priming datagrams arrive first
	grep -v '^[46] 0 ' "$SN_TMP/got" >"$SN_TMP/got.data"
	if ! cmp -s "$SN_TMP/want" "$SN_TMP/got.data"; then
		diff "$SN_TMP/want" "$SN_TMP/got.data" | head -20 >&2
		sn_fail "--gso $mode: the peer received other datagrams than were sent"
	fi
	want_n=$(wc -l <"$SN_TMP/want")
	read -r s_frames s_gso s_dgrams s_bad s_max < <(head -n1 "$SN_TMP/sniff.out")
	echo "--gso $mode: $want_n datagrams intact; the peer checked $s_frames frames ($s_gso GSO)" \
	     "holding $s_dgrams datagrams, $s_bad bad, largest $s_max bytes"
	[ "$s_bad" -eq 0 ] || sn_fail "--gso $mode: frames with a wrong UDP header or checksum: $(tail -n +2 "$SN_TMP/sniff.out")"
	# every datagram but the fragmented 2000-byte ones (one per family) seen as a frame
	[ "$s_dgrams" -ge $((want_n - 2)) ] ||
		sn_fail "--gso $mode: the peer's checker saw $s_dgrams of $want_n datagrams"
	csum1=$(peer_csum_errors)
	[ "$csum1" -eq "$csum0" ] || sn_fail "--gso $mode: the peer counted $((csum1 - csum0)) UDP checksum errors"

	u_gso=$(dp_stat "d['counters']['udp_tx_gso_frames']")
	u_segs=$(dp_stat "d['counters']['udp_tx_gso_segments']")
	u_sw=$(dp_stat "d['counters']['udp_tx_sw_segments']")
	l_gso=$(link_stat tx_gso_frames)
	l_sw=$(link_stat tx_sw_segments)
	per=$(link_stat tx_frames_per_syscall)
	maxf=$(link_stat tx_max_frame)
	errs=$(link_stat tx_errors)
	runs=$(dp_stat "sum(s['gso_sends'] for s in d['services'])")
	echo "--gso $mode: udp_tx_gso_frames $u_gso udp_tx_gso_segments $u_segs udp_tx_sw_segments $u_sw;" \
	     "link tx_gso_frames $l_gso tx_sw_segments $l_sw frames/syscall $per max_frame $maxf" \
	     "tx_errors $errs; services: $runs GSO sends"
	[ "$errs" -eq 0 ] || sn_fail "--gso $mode: $errs frames refused by the kernel"
	[ "$runs" -ge 10 ] || sn_fail "--gso $mode: the services made only $runs GSO sends"
	case $mode in
	hw)
		# 7 per family: 1 + 2 (MTU-sized: 44 + 6) + 1 + 2 (mixed) + 1
		[ "$u_gso" -ge 10 ] || sn_fail "hw: only $u_gso UDP GSO frames"
		[ "$s_gso" -eq "$u_gso" ] || sn_fail "hw: sent $u_gso GSO frames, the peer saw $s_gso"
		[ "$l_gso" -eq "$u_gso" ] || sn_fail "hw: link tx_gso_frames $l_gso, UDP counted $u_gso"
		[ "$maxf" -gt $((mtu + 14)) ] && [ "$maxf" -le 65535 ] ||
			sn_fail "hw: largest frame $maxf bytes"
		[ "$u_sw" -eq 0 ] || sn_fail "hw: $u_sw datagrams cut in user space"
		;;
	sw)
		[ "$u_gso" -eq 0 ] && [ "$s_gso" -eq 0 ] && [ "$l_gso" -eq 0 ] ||
			sn_fail "sw: GSO frames ($u_gso, peer $s_gso, link $l_gso)"
		[ "$u_sw" -ge 200 ] || sn_fail "sw: only $u_sw datagrams cut in user space"
		[ "$l_sw" -ge "$u_sw" ] || sn_fail "sw: link tx_sw_segments $l_sw < $u_sw"
		[ "$s_max" -le $((mtu + 14)) ] || sn_fail "sw: a frame of $s_max bytes at the peer"
		python3 -c "import sys; sys.exit(0 if $per > 1 else 1)" ||
			sn_fail "sw: $per frames per sendmmsg"
		;;
	off)
		[ "$u_gso" -eq 0 ] && [ "$s_gso" -eq 0 ] && [ "$u_sw" -eq 0 ] ||
			sn_fail "off: $u_gso GSO frames ($s_gso at the peer), $u_sw cut"
		[ "$s_max" -le $((mtu + 14)) ] || sn_fail "off: a frame of $s_max bytes at the peer"
		python3 -c "import sys; sys.exit(0 if $per == 1 else 1)" ||
			sn_fail "off: $per frames per syscall, expected 1"
		;;
	esac
	errors=$(dp_stat "sum(s['errors'] for s in d['services'])")
	[ "$errors" -eq 0 ] || sn_fail "--gso $mode: services counted $errors errors"
	dp_env_down
	dp_env_reset
done
echo ok
