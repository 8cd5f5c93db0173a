#!/usr/bin/env bash
# `netsetup serve` as systemd starts it, without systemd running: the
# listening SOCK_SEQPACKET socket comes from systemd-socket-activate
# (LISTEN_FDS: the daemon must not bind anything itself) and readiness goes
# to NOTIFY_SOCKET, a datagram socket of ours, which must receive READY=1
# (and STOPPING=1 on SIGTERM). The activated daemon then answers: a request
# from uid 65534 is refused with a clear ERROR.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"
command -v systemd-socket-activate >/dev/null || sn_skip "no systemd-socket-activate"
command -v setpriv >/dev/null || sn_skip "no setpriv"
sn_netns_add ct
chmod 755 "$SN_TMP"
SOCK=$SN_TMP/act.sock
NOTIFY=$SN_TMP/notify.sock
cat >"$SN_TMP/notify.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(20)
while True:
    d = s.recv(4096).decode()
    print(d.replace("\n", " | "), flush=True)
    if "STOPPING=1" in d:
        break
PY
python3 "$SN_TMP/notify.py" "$NOTIFY" >"$SN_TMP/notify.out" &
sn_on_exit "kill $!"
sn_wait_for 5 test -S "$NOTIFY" || sn_fail "notify listener"
# Without --accept, systemd-socket-activate execs the daemon in place on the
# first connection: $APID becomes the daemon.
systemd-socket-activate --seqpacket -l "$SOCK" -E NOTIFY_SOCKET="$NOTIFY" -E SANDNET_STATE_DIR \
	"$NETSETUP" serve --socket "$SN_TMP/never-bound.sock" >"$SN_TMP/serve.log" 2>&1 &
APID=$!
sn_on_exit "kill $APID"
sn_wait_for 5 test -S "$SOCK" || sn_fail "systemd-socket-activate did not listen"
chmod 666 "$SOCK"
ns_expect_fail "uid 65534 through the activated socket" "uid 65534 .* is not allowed" -- \
	setpriv --reuid 65534 --regid 65534 --clear-groups "$NETSETUP" connect --socket "$SOCK" \
	--netns "$(ns_path ct)" -- "$DATAPATH"
sn_wait_for 5 grep -q "READY=1" "$SN_TMP/notify.out" || sn_fail "no READY=1: $(cat "$SN_TMP/notify.out" "$SN_TMP/serve.log")"
grep -q "STATUS=serving on (systemd socket)" "$SN_TMP/notify.out" || sn_fail "status: $(cat "$SN_TMP/notify.out")"
[ ! -e "$SN_TMP/never-bound.sock" ] || sn_fail "the daemon bound its own socket despite LISTEN_FDS"
grep -q "serving on (systemd socket)" "$SN_TMP/serve.log" || sn_fail "log: $(cat "$SN_TMP/serve.log")"
[ "$(readlink "/proc/$APID/exe")" = "$(readlink -f "$NETSETUP")" ] || sn_fail "pid $APID is not the daemon"
kill -TERM "$APID"
sn_wait_for 5 grep -q "STOPPING=1" "$SN_TMP/notify.out" || sn_fail "no STOPPING=1: $(cat "$SN_TMP/notify.out")"
cat "$SN_TMP/notify.out" "$SN_TMP/serve.log"
echo "socket activation and sd_notify readiness"
