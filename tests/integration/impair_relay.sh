#!/usr/bin/env bash
# The impairment relay (tests/tools/impair_relay) between two kernel stacks:
# clean, it passes ping and a TCP stream unchanged; with loss, duplication and
# reordering the kernel's TCP still delivers the stream intact, and the
# relay's counters show that it impaired what it was told to.
. "$SANDNET_TESTS/lib/common.sh"

sn_netns_add a; sn_netns_add mid; sn_netns_add b
sn_veth_add a eth0 mid ra
sn_veth_add mid rb b eth0
A=$(sn_ns a) MID=$(sn_ns mid) B=$(sn_ns b)
ip -n "$A" addr add 10.231.0.1/24 dev eth0
ip -n "$B" addr add 10.231.0.2/24 dev eth0

relay_start() {
	ip netns exec "$MID" "$TOOLS/impair_relay" --a ra --b rb --duration 60 "$@" \
		>"$SN_TMP/relay.out" 2>"$SN_TMP/relay.err" &
	relay_pid=$!
	sn_on_exit "kill $relay_pid"
	sn_wait_for 5 grep -q ready "$SN_TMP/relay.err" || sn_fail "relay did not start: $(cat "$SN_TMP/relay.err")"
}
relay_stop() {
	kill -TERM "$relay_pid"; wait "$relay_pid" 2>/dev/null
	cat "$SN_TMP/relay.out"
}

# Bad flags are refused with a reason.
out=$("$TOOLS/impair_relay" --a x --b y --loss 140 2>&1) && sn_fail "--loss 140 accepted"
grep -q "not a percentage" <<<"$out" || sn_fail "no reason for --loss 140: $out"

sn_log "clean relay: ping and a stream pass"
relay_start --seed 1
ip netns exec "$A" ping -c 3 -i 0.2 -W 2 10.231.0.2 >/dev/null || sn_fail "ping through a clean relay"
head -c 4000000 /dev/urandom >"$SN_TMP/data"
ip netns exec "$B" timeout 30 socat -u TCP-LISTEN:5001,reuseaddr OPEN:"$SN_TMP/got",creat,trunc &
srv=$!
sleep 0.3
ip netns exec "$A" timeout 30 socat -u OPEN:"$SN_TMP/data" TCP:10.231.0.2:5001 || sn_fail "send"
wait $srv
cmp -s "$SN_TMP/data" "$SN_TMP/got" || sn_fail "stream changed through a clean relay"
relay_stop

sn_log "impaired relay: 3% loss, 3% dup, 10% reorder, 2 ms delay"
relay_start --seed 7 --loss 3 --dup 3 --reorder 10 --delay-ms 2
ip netns exec "$B" timeout 60 socat -u TCP-LISTEN:5002,reuseaddr OPEN:"$SN_TMP/got2",creat,trunc &
srv=$!
sleep 0.3
ip netns exec "$A" timeout 60 socat -u OPEN:"$SN_TMP/data" TCP:10.231.0.2:5002 || sn_fail "send impaired"
wait $srv
cmp -s "$SN_TMP/data" "$SN_TMP/got2" || sn_fail "kernel TCP stream corrupted through the relay"
relay_stop
stats=$(cat "$SN_TMP/relay.out")
for k in lost duplicated reordered; do
	v=$(grep -o "$k=[0-9]*" <<<"$stats" | cut -d= -f2)
	[ "${v:-0}" -gt 0 ] || sn_fail "relay reports $k=0 although asked to impair"
done
sn_log "ok"
