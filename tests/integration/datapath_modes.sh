#!/usr/bin/env bash
# The same traffic in every GSO mode and with several channels: off (one
# frame per send syscall, 1 channel), sw (batched, 2 channels in a fanout
# group), hw (virtio_net_hdr on every frame, 4 channels). ping, ping -6, and
# UDP datagrams of 1..65507 bytes through --publish from many source ports
# (so that the fanout spreads them over the channels), contents compared.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"

cat >"$SN_TMP/client.py" <<'PY'
import os, socket, sys
ok = 0
for port_i in range(16):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    for n in (1, 1472, 3000, 65507):
        data = os.urandom(n)
        for attempt in range(3):
            s.sendto(data, ("10.77.0.2", 5000))
            try:
                r = s.recvfrom(70000)[0]
                break
            except socket.timeout:
                continue
        else:
            sys.exit(f"size {n} from port {s.getsockname()[1]}: no answer")
        if r != data:
            sys.exit(f"size {n}: answer differs")
        ok += 1
print(f"{ok} datagrams echoed intact from 16 source ports")
PY

for spec in off:1 sw:2 hw:4; do
	mode=${spec%:*} chans=${spec#*:}
	sn_log "mode $mode, $chans channel(s)"
	DP_GSO=$mode DP_CHANNELS=$chans dp_env_up --publish udp:5000=127.0.0.1:6000
	sn_udp_echo "$DPNS" 127.0.0.1 6000
	echo_pid=$SN_UDP_ECHO_PID
	got=$(dp_stat "list(d['links'].values())[0]['gso_mode']")
	[ "$got" = "$mode" ] || sn_fail "gso_mode is $got, expected $mode"
	got=$(dp_stat "list(d['links'].values())[0]['channels']")
	[ "$got" = "$chans" ] || sn_fail "$got channels, expected $chans"
	ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 >/dev/null || sn_fail "$mode: ping"
	sn_wait_for 5 ip netns exec "$PEER" ping -6 -c 1 -W 1 fd77::2 || sn_fail "$mode: ping -6"
	ip netns exec "$PEER" python3 "$SN_TMP/client.py" || sn_fail "$mode: UDP"
	read -r frames calls < <(dp_stat "' '.join(str(list(d['links'].values())[0][k]) for k in ('tx_frames', 'tx_syscalls'))")
	echo "tx: $frames frames in $calls syscalls"
	if [ "$mode" = off ]; then
		[ "$frames" -eq "$calls" ] || sn_fail "off mode sent $frames frames in $calls syscalls"
	else
		[ "$frames" -gt "$calls" ] || sn_fail "$mode mode did not batch ($frames frames, $calls syscalls)"
	fi
	kill "$echo_pid"
	dp_env_down
	dp_env_reset
done
echo ok
