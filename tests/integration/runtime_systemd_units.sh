#!/usr/bin/env bash
# The unit files in dist/systemd pass `systemd-analyze verify` (with their
# ExecStart= pointed at this build, since verify checks the command exists),
# and carry the hardening docs/runtime.md promises: the daemon's capability
# bounding set is exactly what setns, netlink, packet sockets, bind mounts
# and pidfd_getfd need, the datapath has none at all, and neither has the
# metrics exporter (root's uid, read-only file system, docs/security.md).
. "$SANDNET_TESTS/lib/common.sh"
command -v systemd-analyze >/dev/null || sn_skip "no systemd-analyze"
[ -x "$NETSETUP" ] || sn_skip "no $NETSETUP"
DIST=$SANDNET_TESTS/../dist/systemd
for u in netsetup.socket netsetup.service datapath@.service sandnet-metrics.service; do
	[ -f "$DIST/$u" ] || sn_fail "missing $DIST/$u"
	sed -e "s|/usr/local/sbin/netsetup|$NETSETUP|g" -e "s|/usr/local/bin/datapath|$DATAPATH|g" \
		"$DIST/$u" >"$SN_TMP/$u"
done
(cd "$SN_TMP" && systemd-analyze verify --man=no netsetup.socket netsetup.service datapath@.service \
	sandnet-metrics.service) \
	>"$SN_TMP/verify.out" 2>&1
rc=$?
cat "$SN_TMP/verify.out"
[ "$rc" -eq 0 ] || sn_fail "systemd-analyze verify failed (above)"
[ ! -s "$SN_TMP/verify.out" ] || sn_fail "systemd-analyze verify warns (above)"

prop() { awk -F= -v k="$2" '$1 == k { sub(/^[^=]*=/, ""); print }' "$DIST/$1"; }
[ "$(prop netsetup.service Type)" = notify ] || sn_fail "netsetup.service: not Type=notify"
[ "$(prop netsetup.service CapabilityBoundingSet)" = "CAP_NET_ADMIN CAP_NET_RAW CAP_SYS_ADMIN CAP_SYS_PTRACE CAP_KILL" ] ||
	sn_fail "netsetup.service: CapabilityBoundingSet=$(prop netsetup.service CapabilityBoundingSet)"
[ "$(prop netsetup.service RestrictAddressFamilies)" = "AF_UNIX AF_NETLINK AF_PACKET" ] ||
	sn_fail "netsetup.service: RestrictAddressFamilies"
for kv in ProtectSystem=strict NoNewPrivileges=yes ProtectHome=yes; do
	grep -qx "$kv" "$DIST/netsetup.service" || sn_fail "netsetup.service: no $kv"
	grep -qx "$kv" "$DIST/datapath@.service" || sn_fail "datapath@.service: no $kv"
done
grep -q '^SystemCallFilter=@system-service' "$DIST/netsetup.service" || sn_fail "netsetup.service: no SystemCallFilter"
grep -qx 'CapabilityBoundingSet=' "$DIST/datapath@.service" || sn_fail "datapath@.service keeps capabilities"
grep -qx 'AmbientCapabilities=' "$DIST/datapath@.service" || sn_fail "datapath@.service: ambient capabilities"
grep -q '^ListenSequentialPacket=/run/sandnet/netsetup.sock' "$DIST/netsetup.socket" || sn_fail "netsetup.socket"
for kv in CapabilityBoundingSet= AmbientCapabilities= User=root ProtectSystem=strict NoNewPrivileges=yes \
	ProtectHome=yes PrivateDevices=yes ProcSubset=pid 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6'; do
	grep -qx "$kv" "$DIST/sandnet-metrics.service" || sn_fail "sandnet-metrics.service: no $kv"
done
grep -q '^ExecStart=/usr/local/bin/datapath metrics --listen 127.0.0.1:9476 --dir /run/sandnet$' \
	"$DIST/sandnet-metrics.service" || sn_fail "sandnet-metrics.service: ExecStart"
grep -q '^ReadWritePaths' "$DIST/sandnet-metrics.service" && sn_fail "sandnet-metrics.service writes somewhere"
# The daemon's default socket is the one the .socket unit listens on.
"$NETSETUP" serve --help | grep -q 'serve \[--socket PATH\]' || sn_fail "netsetup serve --help"
grep -q '"/run/sandnet/netsetup.sock"' "$SANDNET_TESTS/../netsetup/front/front.h" || sn_fail "default socket path differs"
# The example policy parses: the daemon refuses to start on a bad one, and starts on it.
sed 's/ sandnet$//' "$DIST/netsetup.conf" >"$SN_TMP/ok.conf"
export SANDNET_STATE_DIR=$SN_TMP/state
timeout 5 "$NETSETUP" serve --socket "$SN_TMP/s.sock" --config "$SN_TMP/ok.conf" >"$SN_TMP/serve.log" 2>&1 &
pid=$!
sn_on_exit "kill $pid"
sn_wait_for 5 test -S "$SN_TMP/s.sock" || sn_fail "serve does not start on the example policy: $(cat "$SN_TMP/serve.log")"
echo "max_channels = 99" >"$SN_TMP/bad.conf"
out=$("$NETSETUP" serve --socket "$SN_TMP/t.sock" --config "$SN_TMP/bad.conf" 2>&1) && sn_fail "bad policy accepted"
echo "$out" | grep -q "bad.conf line 1: max_channels '99': expected a number 1..64" || sn_fail "bad policy message: $out"
echo "systemd units verified"
