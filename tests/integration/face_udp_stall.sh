#!/usr/bin/env bash
# sandnet-test: alone (it sends at a rate, stops the datapath, and counts what arrives)
# UDP through a default `netsetup run` reaches a receiver with the default
# socket buffer without loss, even when the datapath is set aside (issue
# 39): numbered datagrams (tests/tools/udp_seq) at 100 Mbit/s, 1400 bytes,
# a steady flow (the sender sleeps between datagrams, and one woken late
# does not send a burst to catch up: the flow is even as it leaves):
#  - first through the container's own kernel, before netsetup: the rate is
#    one that path carries to a receiver with the default buffer
#    (net.core.rmem_default, 208 KiB here: about 90 such datagrams) without
#    losing one, both ways, or the test cannot judge;
#  - then through `netsetup run --netns ct -- datapath` with no other
#    option, while the test stops the datapath five times for 25 ms
#    (SIGSTOP, SIGCONT): a datapath the scheduler set aside, as on a
#    machine with two CPUs shared with the sender and the receiver, but
#    longer and every time. What arrived meanwhile (about 220 datagrams, 2.4
#    times what the receiver's buffer holds) must leave as
#    spread out as it came, not in one burst that the receiver's buffer
#    cannot hold: every datagram arrives, in order, once, out and in (IPv4
#    and IPv6 in), and the face's pacers say they held trains
#    (face.udp.to_inner.held, to_outer.held) and sent at most one in a
#    hundred of them before their time (overruns).
# Before the pacers, every such run lost datagrams, all at the receiving
# socket.
. "$SANDNET_TESTS/lib/common.sh"
DP_NO_START=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

SEQ=$TOOLS/udp_seq
[ -x "$SEQ" ] || sn_skip "tests/tools/udp_seq not built (make tools)"
RATE=100	# Mbit/s
COUNT=30000	# 3.4 s of it
STALL=0.025	# seconds each
dp_env_up

FACE_SEQ_PORT=9800
# stop_dp: five stops of STALL seconds, 0.4 s apart, from 0.3 s on, timed
# by one process that prints how long each lasted. (Timed by the shell,
# each stop also lasted as long as starting and ending a `sleep` took: 30
# to 53 ms instead of 25 on a busy machine.)
stop_dp() {
	python3 - "$DP_PID" "$STALL" <<'PY'
import os, signal, sys, time
pid, stall = int(sys.argv[1]), float(sys.argv[2])
took = []
time.sleep(0.3)
for _ in range(5):
    os.kill(pid, signal.SIGSTOP)
    t = time.monotonic()
    while time.monotonic() - t < stall:
        time.sleep(stall - (time.monotonic() - t))
    os.kill(pid, signal.SIGCONT)
    took.append(time.monotonic() - t)
    time.sleep(0.4)
print("stops (ms):", " ".join("%.1f" % (x * 1000) for x in took))
PY
}
# run_pair NAME RECV_NS RECV_ADDR SEND_NS [stall]: COUNT datagrams at RATE,
# the sender steady, to a receiver with the default buffer; with "stall",
# the datapath is stopped five times meanwhile. Return: the receiver's
# status (0: everything arrived in order, once)
run_pair() {
	face_seq_pair "$1" "$2" "$3" "$4" 1400 "$COUNT" "$RATE" steady defbuf ${5:+stop_dp}
}
# pace VALUE: a pacer figure, every shard's summed (e.g. to_inner.held)
pace() { dp_stat "d['face']['udp']['${1%%.*}']['${1#*.}']"; }

for a in 10.77.0.2 fd77::2; do
	ip netns exec "$PEER" ping -c 1 -W 2 "$a" >/dev/null || sn_fail "the peer cannot ping $a"
done
[ "$(ip netns exec "$CT" cat /proc/sys/net/core/rmem_default)" -le 262144 ] ||
	sn_skip "this host's net.core.rmem_default is above 256 KiB: the receivers would not have the usual buffer"

sn_log "the kernel's own path at $RATE Mbit/s, receivers with the default buffer"
# The yardstick, not the thing tested: a receiver the machine kept from its
# CPU for 18 ms lost 159 datagrams of the kernel's own path once in a full
# suite (7 Dec), so each direction gets three tries to show that this
# machine, now, can carry the rate at all.
kernel_path() {
	local try
	for try in 1 2 3; do
		run_pair "kernel-$1" "$2" "$3" "$4" && return 0
		echo "the kernel's own path lost datagrams (try $try of 3)"
	done
	sn_fail "the container's kernel itself lost datagrams at $RATE Mbit/s three times: the machine is too busy to judge"
}
kernel_path out "$PEER" 10.77.0.1 "$CT"
kernel_path in "$CT" 10.77.0.2 "$PEER"

sn_log "a default netsetup run, stopped five times for ${STALL}s during each flow"
DP_RUN_DEFAULTS=1 dp_start
face_check_fenced
for a in 10.77.0.1 fd77::1; do
	ip netns exec "$CT" ping -c 1 -W 2 "$a" >/dev/null || sn_fail "the container cannot ping $a"
done
run_pair out "$PEER" 10.77.0.1 "$CT" stall || sn_fail "outbound: datagrams lost, late or damaged after stalls"
run_pair in "$CT" 10.77.0.2 "$PEER" stall || sn_fail "inbound: datagrams lost, late or damaged after stalls"
run_pair in6 "$CT" fd77::2 "$PEER" stall || sn_fail "inbound IPv6: datagrams lost, late or damaged after stalls"

for v in to_inner.held to_outer.held; do
	n=$(pace "$v")
	echo "face.udp.$v: $n"
	[ "$n" -gt 0 ] || sn_fail "the face's pacer held nothing ($v): the stalls were not what the flows crossed"
done
n=$(pace to_inner.overruns)
m=$(pace to_outer.overruns)
echo "face.udp overruns: to_inner $n, to_outer $m"
# An overrun is a train held FACE_PACE_MAX_HOLD_US (25 ms): the pacer's own
# spreading never holds one that long after a 25 ms stop, but a datapath
# the machine kept from its CPU for a few more milliseconds on top of a
# stop does (to_outer 1 of 4444 held in a CI run on 7 Dec, nothing lost).
# What the design promises is the delivery above; here, that overruns stay
# the exception they are meant to be: at most 1 % of what was held.
hi=$(pace to_inner.held)
ho=$(pace to_outer.held)
[ $((n * 100)) -le "$hi" ] && [ $((m * 100)) -le "$ho" ] ||
	sn_fail "the pacers sent trains before their time more than once in a hundred (overruns $n of $hi, $m of $ho)"
[ "$(pace to_inner.holding)" = 0 ] && [ "$(pace to_outer.holding)" = 0 ] || sn_fail "the pacers still hold trains"
# the summary (stats --all, the metrics) says the same, every shard's summed
t=$(dp_stat "' '.join(str(d['totals'][k]) for k in ('udp_held_to_container', 'udp_held_to_network', \
	'udp_pace_overruns_to_container', 'udp_pace_overruns_to_network'))")
[ "$t" = "$(pace to_inner.held) $(pace to_outer.held) $n $m" ] ||
	sn_fail "totals say '$t', the face's pacers '$(pace to_inner.held) $(pace to_outer.held) $n $m'"
echo "totals: udp_held_to_container, _to_network, overruns: $t"
face_check_clean
dp_env_down
echo ok
