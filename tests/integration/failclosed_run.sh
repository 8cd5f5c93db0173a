#!/usr/bin/env bash
# Fail closed, heal (issue 18), through `netsetup run`: with the default
# policy (the cloud metadata address denied) and a program inside the
# container asking that address every 50 ms throughout,
#   - the datapath killed with SIGKILL, SIGSEGV and SIGABRT, one after the
#     other, during a download each way: a new datapath serves a new
#     connection out and one in within a second, the open connections are
#     reset, the container is never given back (failclosed.inc);
#   - `netsetup restart` starts the binary now installed where the datapath
#     was started from (a different file: an upgrade), and then a broken one:
#     its deaths count, and with the earlier ones make the crash loop: dark,
#     fenced, the reason in the status file and `datapath stats`;
#   - `netsetup restart --all` restarts every datapath of the state folder;
#   - `netsetup restart` for a namespace nobody serves is refused;
#   - the supervisor itself killed with SIGKILL: dark, never given back, and
#     netsetup run exits without giving back; `netsetup detach` then gives
#     the namespace back byte-identical (addresses, routes, links, nftables);
#   - an explicit stop (SIGTERM to netsetup run) after deaths gives back
#     byte-identical too.
# The probe never reaches the metadata address.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
DP_SHARDS_ANY=1	# one shard in the plain pass, two in the ASan one (Makefile)
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/failclosed.inc"

# the datapath runs from a copy of its own: `netsetup restart` replaces it
mkdir -p "$SN_TMP/bin"
cp "$DATAPATH" "$SN_TMP/bin/datapath"
chmod 755 "$SN_TMP/bin" "$SN_TMP/bin/datapath"
DATAPATH_BUILT=$DATAPATH
FC_STATS=$DATAPATH
DATAPATH=$SN_TMP/bin/datapath

DP_NO_START=1 dp_env_up
FC_CT=$CT FC_CT_IP=10.77.0.2 FC_PEER=$PEER FC_PEER_IP=10.77.0.1 FC_CTL=$DP_CTL
snap() {
	ns_snapshot "$CT" "$1"
	ip -n "$CT" -o link | awk '{ print $2, $3 }' >"$1.links"
	ip netns exec "$CT" nft list ruleset >"$1.nft"
	ip netns exec "$CT" sysctl -n net.ipv6.conf.eth0.disable_ipv6 net.ipv6.conf.eth0.accept_ra \
		net.ipv6.conf.eth0.autoconf net.ipv6.conf.eth0.addr_gen_mode >"$1.sysctl"
}
same() {
	ns_same "$1" "$2" "$3"
	for x in links nft sysctl; do
		diff -u "$1.$x" "$2.$x" >&2 || sn_fail "$3: $x differ (diff above)"
	done
}
fc_servers
ns_settle "$CT"
snap "$SN_TMP/before"

sn_log "netsetup run, the default policy"
dp_start
FC_STATUS=$DP_STATUS
grep -q "^state serving$" "$FC_STATUS" || sn_fail "status: $(cat "$FC_STATUS")"
fc_probe_start
for sig in KILL SEGV ABRT; do
	fc_kill_heal "$sig"
done

sn_log "netsetup restart: the binary now at $DATAPATH (an upgrade) takes over the same fds"
old=$(fc_worker)
cp "$DATAPATH_BUILT" "$SN_TMP/datapath.new"
printf 'another build\n' >>"$SN_TMP/datapath.new"	# a different file, the same program
mv "$SN_TMP/datapath.new" "$DATAPATH"
chmod 755 "$DATAPATH"
ip netns exec "$DPNS" "$NETSETUP" restart --netns "/run/netns/$CT" 2>"$SN_TMP/restart.err" ||
	sn_fail "netsetup restart: $(cat "$SN_TMP/restart.err")"
cat "$SN_TMP/restart.err"
new=$(fc_worker)
[ "$new" != "$old" ] || sn_fail "restart kept datapath $old"
[ "$(stat -L -c %i "/proc/$new/exe")" = "$(stat -c %i "$DATAPATH")" ] ||
	sn_fail "datapath $new does not run the new binary"
ip netns exec "$CT" python3 "$FC_PY" reach 10.77.0.1 8080 5 >/dev/null || sn_fail "no connection out after the restart"
ip netns exec "$PEER" python3 "$FC_PY" reach 10.77.0.2 8081 5 >/dev/null || sn_fail "no connection in after the restart"
fc_fenced

sn_log "TIME-WAIT: the same 4-tuples again after a restart, both ways, without a stall"
# HTTP/1.0: the server closes first, so the peer's kernel (outbound) and the
# container's (inbound) hold TIME-WAIT for these 4-tuples; the new datapath's
# SYNs on them carry a larger ISN and a newer timestamp (the supervisor keeps
# the secret), which TIME-WAIT takes without a challenge ACK.
ip netns exec "$CT" python3 "$FC_PY" tuples 10.77.0.1 8080 41000 8 >/dev/null || sn_fail "outbound tuples"
ip netns exec "$PEER" python3 "$FC_PY" tuples 10.77.0.2 8081 42000 8 >/dev/null || sn_fail "inbound tuples"
tw_peer=$(ip netns exec "$PEER" ss -Htan state time-wait '( dport >= :41000 and dport < :41008 )' | wc -l)
tw_ct=$(ip netns exec "$CT" ss -Htan state time-wait '( dport >= :42000 and dport < :42008 )' | wc -l)
[ "$tw_peer" = 8 ] && [ "$tw_ct" = 8 ] || sn_fail "TIME-WAIT: $tw_peer at the peer, $tw_ct in the container, not 8 each"
# --all (what a package upgrade runs): every namespace of the state folder, here this one
ip netns exec "$DPNS" "$NETSETUP" restart --all 2>"$SN_TMP/restart-all.err" ||
	sn_fail "restart --all before the TIME-WAIT test: $(cat "$SN_TMP/restart-all.err")"
grep -q "restart --all: 1 restarted, 0 failed" "$SN_TMP/restart-all.err" ||
	sn_fail "restart --all: $(cat "$SN_TMP/restart-all.err")"
out=$(ip netns exec "$CT" python3 "$FC_PY" tuples 10.77.0.1 8080 41000 8) || sn_fail "outbound tuples after the restart"
in=$(ip netns exec "$PEER" python3 "$FC_PY" tuples 10.77.0.2 8081 42000 8) || sn_fail "inbound tuples after the restart"
echo "over TIME-WAIT after a restart: the slowest connect $out s out, $in s in"
python3 -c "import sys; sys.exit(0 if max(float(sys.argv[1]), float(sys.argv[2])) < 0.5 else 1)" "$out" "$in" ||
	sn_fail "a connection over a TIME-WAIT 4-tuple stalled ($out s out, $in s in): an RTO"
dp_stat "(d['tcp']['syn_challenged'], d['face_tcp']['syn_challenged'])" | grep -qx "(0, 0)" ||
	sn_fail "a SYN met a challenge ACK: $(dp_stat "(d['tcp']['syn_challenged'], d['face_tcp']['syn_challenged'])")"

sn_log "a broken binary: its deaths count, the crash loop makes it dark"
printf '#!/bin/sh\necho "broken datapath" >&2\nexit 3\n' >"$SN_TMP/broken"
chmod 755 "$SN_TMP/broken"
mv "$SN_TMP/broken" "$DATAPATH"
ns_expect_fail "restart into a broken binary" "no new datapath serves: crash loop: .* deaths within 60 s.*$DATAPATH" -- \
	ip netns exec "$DPNS" "$NETSETUP" restart --netns "/run/netns/$CT"
fc_crash_loop
grep -q "broken datapath" "$DP_LOG" || sn_fail "the broken datapath's words are not in the log"
kill -0 "$DP_NS_PID" || sn_fail "netsetup run ended while the container is dark"
fc_probe_stop

sn_log "an explicit stop after all that gives back byte-identical"
cp "$DATAPATH_BUILT" "$DATAPATH"
kill "$DP_NS_PID"
wait "$DP_NS_PID"
grep -q "addresses and routes given back" "$DP_LOG" || sn_fail "run did not give back on SIGTERM: $(tail -n 5 "$DP_LOG")"
grep -E "Sanitizer|runtime error" "$DP_LOG" && sn_fail "sanitizer report"
ns_settle "$CT"
snap "$SN_TMP/after-stop"
same "$SN_TMP/before" "$SN_TMP/after-stop" "after deaths, a restart, a crash loop and an explicit stop"
[ -z "$(ls "$SANDNET_STATE_DIR")" ] || sn_fail "left in the state folder: $(ls "$SANDNET_STATE_DIR")"

sn_log "the supervisor killed: dark, never given back; detach gives back"
dp_start
FC_STATUS=$DP_STATUS
fc_probe_start
kill -9 "$DP_SUP_PID"
wait "$DP_NS_PID"
grep -q "stays dark" "$DP_LOG" || sn_fail "run did not say the namespace stays dark: $(tail -n 5 "$DP_LOG")"
sn_wait_for 5 eval "! fc_alive $DP_PID" || sn_fail "the datapath outlived its supervisor"
ip -n "$CT" -j addr show dev eth0 | grep -q '"family":"inet"' && sn_fail "eth0 got its address back"
ip netns exec "$CT" nft list tables | grep -q "^table netdev sandnet_" || sn_fail "the fence is gone"
fc_probe_more 5
fc_probe_stop any	# the TUN went with the last fd: no route at all
ns_expect_fail "restart with nobody serving" "supervisor \\(pid $DP_SUP_PID\\) is gone: the container is dark" -- \
	ip netns exec "$DPNS" "$NETSETUP" restart --netns "/run/netns/$CT"
ip netns exec "$DPNS" "$NETSETUP" detach --netns "/run/netns/$CT" || sn_fail "detach after the supervisor died"
ns_settle "$CT"
snap "$SN_TMP/after-detach"
same "$SN_TMP/before" "$SN_TMP/after-detach" "after the supervisor's death and detach"
ns_expect_fail "restart of a namespace nobody attached" "is not attached" -- \
	ip netns exec "$DPNS" "$NETSETUP" restart --netns "/run/netns/$CT"
grep -E "Sanitizer|runtime error" "$DP_LOG" && sn_fail "sanitizer report"
echo "fail closed through netsetup run: healed 3 deaths, restarted, crash loop dark, byte-identical on explicit stop"
