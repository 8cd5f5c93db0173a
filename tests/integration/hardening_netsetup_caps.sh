#!/usr/bin/env bash
# netsetup drops its capabilities in stages (netsetup/kernel/privs.c). The sets each
# stage keeps are read from the table in docs/security.md (rows marked
# "(tested)") and compared with /proc/PID/status of the live process:
#  - `netsetup run` stopped in its setup (a datapath script that sleeps
#    before it answers): CapEff = CapPrm = the "datapath forked" row, CapInh,
#    CapAmb, CapBnd empty, NoNewPrivs 1; the script (the datapath, forked
#    earlier) still has root's bounding set;
#  - `netsetup run` waiting for a real datapath: the "waiting" row; the
#    datapath answers ping; SIGTERM to netsetup is forwarded and the
#    addresses come back; the same after the datapath is SIGKILLed;
#  - `netsetup serve` listening and its worker after an attach: their rows;
#    the datapath SIGKILLed, the worker gives back with its reduced set.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"
DOC=$SANDNET_TESTS/../docs/security.md
[ -r "$DOC" ] || sn_skip "no docs/security.md"
[ -r /usr/include/linux/capability.h ] || sn_skip "no linux/capability.h to name capabilities"

# doc_mask SUBCOMMAND STAGE: the documented set as a CapEff hex mask
doc_mask() {
	python3 - "$DOC" "$1" "$2" <<'EOF'
import re, sys
doc, cmd, stage = sys.argv[1:]
caps = {m.group(1): int(m.group(2)) for m in
        re.finditer(r"#define\s+(CAP_[A-Z_]+)\s+(\d+)\s*$", open("/usr/include/linux/capability.h").read(), re.M)}
for line in open(doc):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) >= 3 and cells[0] == cmd and cells[1] == stage + " (tested)":
        names = re.findall(r"CAP_[A-Z_]+", cells[2])
        mask = 0
        for n in names:
            mask |= 1 << caps[n]
        print("%016x" % mask)
        break
else:
    sys.exit("no row '%s | %s (tested)' in %s" % (cmd, stage, doc))
EOF
}

# status_is PID WHAT EFF [BND]: CapEff = CapPrm = EFF, CapInh = CapAmb = 0, CapBnd = BND (0), NoNewPrivs 1
status_is() {
	local pid=$1 what=$2 eff=$3 bnd=${4:-0000000000000000} st
	st=$(grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' "/proc/$pid/status") || sn_fail "$what: no process $pid"
	echo "$what (pid $pid):" $st
	echo "$st" | grep -q "^CapEff:[[:space:]]*$eff$" || sn_fail "$what: CapEff, expected $eff: $st"
	echo "$st" | grep -q "^CapPrm:[[:space:]]*$eff$" || sn_fail "$what: CapPrm, expected $eff: $st"
	echo "$st" | grep -q "^CapInh:[[:space:]]*0000000000000000$" || sn_fail "$what: CapInh not empty: $st"
	echo "$st" | grep -q "^CapAmb:[[:space:]]*0000000000000000$" || sn_fail "$what: CapAmb not empty: $st"
	echo "$st" | grep -q "^CapBnd:[[:space:]]*$bnd$" || sn_fail "$what: CapBnd, expected $bnd: $st"
	echo "$st" | grep -q "^NoNewPrivs:[[:space:]]*1$" || sn_fail "$what: NoNewPrivs not set: $st"
}

M_SETUP=$(doc_mask run "datapath forked") || sn_fail "docs: $M_SETUP"
M_WAIT=$(doc_mask run "waiting for the datapath") || sn_fail "docs: $M_WAIT"
M_SERVE=$(doc_mask serve listening) || sn_fail "docs: $M_SERVE"
M_WORKER=$(doc_mask serve "worker attached") || sn_fail "docs: $M_WORKER"
[ "$M_WAIT" != "$M_SETUP" ] && [ "$M_WAIT" != 0000000000000000 ] || sn_fail "docs: odd sets $M_SETUP $M_WAIT"
ROOT_BND=$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)

sn_log "run, stopped in its setup (the datapath has not answered HELLO yet)"
sn_netns_add ct
sn_netns_add peer
sn_veth_add ct eth0 peer veth0
CT=$(sn_ns ct)
PEER=$(sn_ns peer)
NSP=$(ns_path ct)
ip -n "$CT" addr add 10.77.0.2/24 dev eth0
ip -n "$CT" addr add fd77::2/64 dev eth0
ip -n "$CT" route add default via 10.77.0.1
ip -n "$PEER" addr add 10.77.0.1/24 dev veth0
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before"
cat >"$SN_TMP/slow-datapath" <<EOF
#!/bin/sh
touch "$SN_TMP/slow.started"
sleep 3
exec "$SINK" "\$@"
EOF
chmod 755 "$SN_TMP/slow-datapath"
"$NETSETUP" run --netns "$NSP" -- "$SN_TMP/slow-datapath" --hold 1 >"$SN_TMP/slow.out" 2>"$SN_TMP/slow.err" &
RUN=$!
sn_on_exit "kill -9 $RUN"
sn_wait_for 5 test -e "$SN_TMP/slow.started" || sn_fail "the slow datapath did not start: $(cat "$SN_TMP/slow.err")"
# netsetup is now inside the namespace, blocked on HELLO, with its channel sockets open.
sleep 0.5
status_is "$RUN" "run, datapath forked" "$M_SETUP"
CHILD=$(pgrep -P "$RUN" | head -n1)
[ -n "$CHILD" ] || sn_fail "no datapath child of $RUN"
grep -q "^CapBnd:[[:space:]]*$ROOT_BND$" "/proc/$CHILD/status" ||
	sn_fail "the datapath lost its bounding set: $(grep Cap "/proc/$CHILD/status")"
grep -q "^NoNewPrivs:[[:space:]]*0$" "/proc/$CHILD/status" || sn_fail "the datapath was started with no_new_privs"
wait "$RUN"; rc=$?
[ "$rc" -eq 0 ] || sn_fail "run of the slow datapath exited $rc: $(cat "$SN_TMP/slow.err")"
grep -q '"done"' "$SN_TMP/slow.out" || sn_fail "the slow datapath never got DONE"
# it exited on its own: no explicit stop, so run kept the namespace dark (fail closed)
grep -q "stays dark" "$SN_TMP/slow.err" || sn_fail "run gave back after its datapath exited: $(cat "$SN_TMP/slow.err")"
"$NETSETUP" detach --netns "$NSP" || sn_fail "detach after the slow datapath"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-slow"
ns_same "$SN_TMP/before" "$SN_TMP/after-slow" "after run of the slow datapath"
ip netns del "$CT"; ip netns del "$PEER"
_sn_netns=()

sn_log "run, waiting for a real datapath"
dp_env_up
status_is "$DP_NS_PID" "run, waiting" "$M_WAIT"
status_is "$DP_PID" "the datapath" 0000000000000000
status_is "$DP_SUP_PID" "the datapath's supervisor" 0000000000000000
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 || sn_fail "ping through the datapath"
kill "$DP_NS_PID"
wait "$DP_NS_PID"; rc=$?
# The datapath stops cleanly on the SIGTERM netsetup forwards (with CAP_KILL: it runs as nobody).
[ "$rc" -eq 0 ] && grep -q "^datapath: stopped" "$DP_LOG" ||
	sn_fail "run exited $rc after SIGTERM, expected the datapath to stop cleanly: $(cat "$DP_LOG")"
grep -q "addresses and routes given back" "$DP_LOG" || sn_fail "run did not give back: $(cat "$DP_LOG")"
ip -n "$CT" -4 addr show dev eth0 | grep -q "10.77.0.2/24" || sn_fail "10.77.0.2 not back after SIGTERM"
ip -n "$CT" -6 addr show dev eth0 | grep -q "fd77::2/64" || sn_fail "fd77::2 not back after SIGTERM"
ip -n "$CT" route | grep -q "^default via 10.77.0.1" || sn_fail "default route not back after SIGTERM"

sn_log "run, the datapath's supervisor killed with SIGKILL: run stays dark, detach gives back"
dp_env_reset
dp_env_up
status_is "$DP_NS_PID" "run, waiting" "$M_WAIT"
status_is "$DP_SUP_PID" "the datapath's supervisor" 0000000000000000
kill -9 "$DP_SUP_PID"
wait "$DP_NS_PID"; rc=$?
[ "$rc" -eq 137 ] || sn_fail "run exited $rc after the supervisor's SIGKILL, expected 137"
ip -n "$CT" -4 addr show dev eth0 | grep -q "10.77.0.2/24" && sn_fail "10.77.0.2 given back after a SIGKILL: $(cat "$DP_LOG")"
ip netns exec "$DPNS" "$NETSETUP" detach --netns "/run/netns/$CT" || sn_fail "detach after the SIGKILL"
ip -n "$CT" -4 addr show dev eth0 | grep -q "10.77.0.2/24" || sn_fail "10.77.0.2 not back after detach: $(cat "$DP_LOG")"
ip -n "$CT" route | grep -q "^default via 10.77.0.1" || sn_fail "default route not back after detach"
! grep -qE "Sanitizer|runtime error" "$DP_LOG" || sn_fail "sanitizer report: $(cat "$DP_LOG")"
dp_env_reset

sn_log "serve and its worker"
sn_netns_add ct
sn_netns_add peer
sn_veth_add ct eth0 peer veth0
ip -n "$CT" addr add 10.77.0.2/24 dev eth0
ip -n "$CT" route add default via 10.77.0.1
ip -n "$PEER" addr add 10.77.0.1/24 dev veth0
sn_wait_for 10 sh -c "ip -n '$CT' -6 addr show dev eth0 scope link | grep -q inet6" || sn_fail "no link-local on eth0"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/before-serve"
chmod 755 "$SN_TMP"
printf 'allowed_uids = 0\nallowed_interfaces = eth0\non_datapath_exit = restore\n' >"$SN_TMP/serve.conf"
SOCK=$SN_TMP/serve.sock
sn_on_exit 'for m in "$SANDNET_STATE_DIR"/*.netns; do umount -l "$m"; done'
"$NETSETUP" serve --socket "$SOCK" --config "$SN_TMP/serve.conf" >"$SN_TMP/serve.log" 2>&1 &
DAEMON=$!
sn_on_exit "kill $DAEMON"
sn_wait_for 5 test -S "$SOCK" || sn_fail "serve did not start: $(cat "$SN_TMP/serve.log")"
sn_wait_for 5 grep -q "^NoNewPrivs:[[:space:]]*1" "/proc/$DAEMON/status" || sn_fail "serve: no_new_privs never set"
status_is "$DAEMON" "serve, listening" "$M_SERVE"
"$NETSETUP" connect --socket "$SOCK" --netns "$(ns_path ct)" --iface eth0 -- "$DATAPATH" >"$SN_TMP/dp.log" 2>&1 &
DP=$!
sn_on_exit "kill -9 $DP"
sn_wait_for 10 sh -c "! ip -n '$CT' -4 addr show dev eth0 | grep -q inet" ||
	sn_fail "serve did not attach: $(cat "$SN_TMP/serve.log" "$SN_TMP/dp.log")"
sn_wait_for 5 grep -q "attached (state" "$SN_TMP/serve.log" || sn_fail "no attach logged"
WORKER=$(pgrep -P "$DAEMON" | head -n1)
[ -n "$WORKER" ] || sn_fail "no worker under serve $DAEMON"
sn_wait_for 5 sh -c "grep -q '^CapEff:[[:space:]]*$M_WORKER' /proc/$WORKER/status" || true
status_is "$WORKER" "serve, worker attached" "$M_WORKER"
status_is "$DAEMON" "serve, still listening" "$M_SERVE"
ip netns exec "$PEER" ping -c 2 -i 0.2 -W 2 10.77.0.2 || sn_fail "ping through serve's datapath"
kill -9 "$DP"
sn_wait_for 10 sh -c "ip -n '$CT' -4 addr show dev eth0 | grep -q 10.77.0.2/24" ||
	sn_fail "serve's worker did not give back: $(cat "$SN_TMP/serve.log")"
ns_settle "$CT"
ns_snapshot "$CT" "$SN_TMP/after-serve"
ns_same "$SN_TMP/before-serve" "$SN_TMP/after-serve" "after serve's give-back"
kill "$DAEMON"
sn_wait_for 5 sh -c "! kill -0 $DAEMON" || sn_fail "serve does not stop on SIGTERM"
! grep -Eq 'Sanitizer|runtime error' "$SN_TMP/serve.log" || sn_fail "sanitizer: $(cat "$SN_TMP/serve.log")"
echo "netsetup's stages keep what docs/security.md says, and give back from there"
