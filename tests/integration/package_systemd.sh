#!/usr/bin/env bash
# The Debian package, installed into a real systemd (issue 40), as an
# operator would: `make deb` twice from this tree (the second with a higher
# version), lintian on both, then a Debian 12 root (mmdebstrap, `make rootfs`) booted
# with systemd-nspawn in a network namespace of ours, and inside it:
#  - dpkg -i: the user sandnet (sysusers.d), /run/sandnet (tmpfiles.d),
#    netsetup.socket listening and enabled, `netsetup --version`;
#  - a bad /etc/sandnet/netsetup.conf: netsetup.service fails, its status
#    names the file and the fix; put back, it starts;
#  - a container network namespace made inside (veth to the machine's own
#    namespace, where busybox httpd serves a file) and `systemctl start
#    datapath@ct`: the kernel gives the address up, the file comes through
#    the container face byte for byte, the datapath's log is in the journal,
#    sandnet-metrics.service answers /metrics with its series, and
#    `datapath stats --all` shows it;
#  - `systemctl restart netsetup`: the same datapath serves on;
#  - the upgrade to the second package while the container fetches the file
#    over and over: postinst's `netsetup restart --all` moves the datapath to
#    the new binary (its version, a new worker from the new file), every
#    fetch that completed is byte-identical, fetches go on after it, and the
#    container's kernel never gets its address back;
#  - `systemctl stop` of every unit gives the namespace back (the address is
#    the kernel's again, no state left);
#  - dpkg --purge leaves none of the package's files, no /etc/sandnet, no
#    /run/sandnet (the user sandnet stays, as Debian keeps system users);
#    installed again, it serves again;
#  - rebooted: netsetup.socket and sandnet-metrics.service come up by
#    themselves, /run/sandnet and its units folder are made again.
# The machine gets what netsetup needs from a host: the capabilities its unit
# names, /dev/net/tun, and bpf() and pidfd_getfd() (nspawn 252 refuses both
# in a machine unless asked: the steering program, and a restarted daemon
# finding a namespace again through a datapath's sockets). busybox's wget crashes with -T here: timeout
# bounds it instead. Everything runs in the booted machine, in our namespace; nothing of this
# machine's systemd, packages or network is touched. The sanitizer pass
# skips it: the package is built from the tree with its own flags, not from
# the build under test.
. "$SANDNET_TESTS/lib/common.sh"
[ -z "${SANDNET_SANITIZED:-}" ] || sn_skip "the package builds from the tree with its own flags: the plain pass runs it"
for c in systemd-nspawn dpkg-buildpackage lintian nsenter; do
	command -v "$c" >/dev/null || sn_fail "no $c (scripts/install-deps.sh installs it)"
done
[ -c /dev/net/tun ] || sn_skip "no /dev/net/tun"
repo=$(cd "$SANDNET_TESTS/.." && pwd)
VA=$(cat "$repo/VERSION")
VB=$VA+upgrade1

sn_log "two packages from this tree: $VA and $VB"
# The tree as it is (tracked and new files), twice; the second with a higher
# version in VERSION and debian/changelog.
for v in A B; do
	mkdir -p "$SN_TMP/src$v"
	(cd "$repo" && git ls-files -co --exclude-standard -z | xargs -0 tar cf - 2>/dev/null) |
		tar -C "$SN_TMP/src$v" -xf - || sn_fail "copying the tree"
done
echo "$VB" >"$SN_TMP/srcB/VERSION"
{ printf 'sandnet (%s) bookworm; urgency=medium\n\n  * A test build, to upgrade to.\n\n' "$VB"
  printf ' -- sandnet developers <sandnet-devel@lists.sandnet.dev>  %s\n\n' "$(date -R)"
  cat "$repo/debian/changelog"; } >"$SN_TMP/srcB/debian/changelog"
for v in A B; do
	make -C "$SN_TMP/src$v" deb DEB_OUT="$SN_TMP/debs" >"$SN_TMP/build$v.log" 2>&1 ||
		{ tail -n 30 "$SN_TMP/build$v.log"; sn_fail "make deb ($v)"; }
done
DEBA=$SN_TMP/debs/sandnet_${VA}_amd64.deb
DEBB=$SN_TMP/debs/sandnet_${VB}_amd64.deb
[ -f "$DEBA" ] && [ -f "$DEBB" ] || sn_fail "no packages: $(ls "$SN_TMP/debs")"
# the hardening flags reached the compiler: the build log shows them
grep -q -e '-D_FORTIFY_SOURCE=2' "$SN_TMP/buildA.log" && grep -q -e '-fstack-protector-strong' "$SN_TMP/buildA.log" ||
	sn_fail "the package build did not compile with dpkg-buildflags' hardening"
lintian "$DEBA" "$DEBB" >"$SN_TMP/lintian.out" 2>&1
grep -v 'running with root privileges' "$SN_TMP/lintian.out" | grep -E '^[EW]:' &&
	sn_fail "lintian reports errors or warnings (above)"
echo "ok: $(basename "$DEBA"), $(basename "$DEBB"); lintian: no error, no warning"

sn_log "a Debian 12 root with systemd"
# made before the tests, like the packages they use (make rootfs, which make check runs)
tarball=${SANDNET_ROOTFS:-$repo/build/rootfs/bookworm.tar}
[ -s "$tarball" ] || sn_fail "no Debian root at $tarball: \`make rootfs\` makes it (make check does)"
ROOT=$SN_TMP/root
mkdir "$ROOT" && tar -C "$ROOT" -xf "$tarball" || sn_fail "unpacking $tarball"
cp "$DEBA" "$DEBB" "$ROOT/root/"

sn_log "boot it (systemd-nspawn, in our namespace)"
sn_netns_add host
HOST=$(sn_ns host)
ip -n "$HOST" link set lo up
NSPAWN=
# machine_start: boot it; NSPAWN and INIT (the machine's pid 1, as we see it)
machine_start() {
	local state
	systemd-nspawn -D "$ROOT" --boot --register=no --keep-unit --console=read-only \
		--machine="${SN_PREFIX%-}" --network-namespace-path="/run/netns/$HOST" --bind=/dev/net/tun \
		--capability=CAP_NET_ADMIN,CAP_NET_RAW,CAP_SYS_ADMIN,CAP_SYS_PTRACE,CAP_KILL,CAP_BPF \
		--system-call-filter="bpf pidfd_getfd" \
		>>"$SN_TMP/console.log" 2>&1 &
	NSPAWN=$!
	sn_wait_for 20 sh -c "pgrep -P $NSPAWN >/dev/null" ||
		sn_fail "nspawn started no init: $(tail -n 20 "$SN_TMP/console.log")"
	INIT=$(pgrep -P "$NSPAWN" | head -n 1)
	sn_wait_for 30 in_m test -S /run/systemd/private ||
		sn_fail "systemd did not come up in the machine: $(tail -n 20 "$SN_TMP/console.log")"
	state=$(in_m timeout 60 systemctl is-system-running --wait)
	[ "$state" = running ] || { in_m systemctl --failed --no-pager; sn_fail "the machine is $state, not running"; }
	echo "ok: booted: $state ($(in_m systemctl --version | head -n 1))"
}
# SIGTERM: the machine powers off; then whatever is left goes
machine_stop() {
	local t
	[ -n "$NSPAWN" ] || return 0
	kill "$NSPAWN"
	for t in $(seq 50); do kill -0 "$NSPAWN" 2>/dev/null || return 0; sleep 0.2; done
	kill -9 "$NSPAWN"
}
in_m() { nsenter -t "$INIT" -a "$@"; }
sn_on_exit machine_stop
machine_start

sn_log "install $VA"
in_m dpkg -i "/root/$(basename "$DEBA")" >"$SN_TMP/dpkg-a.log" 2>&1 || { cat "$SN_TMP/dpkg-a.log"; sn_fail "dpkg -i"; }
in_m id sandnet >/dev/null || sn_fail "no user sandnet after the install"
[ "$(in_m stat -c '%a %U' /run/sandnet)" = "711 root" ] || sn_fail "/run/sandnet: $(in_m stat -c '%a %U' /run/sandnet)"
[ "$(in_m stat -c '%a %U' /run/sandnet/units)" = "750 sandnet" ] || sn_fail "/run/sandnet/units"
for u in netsetup.socket sandnet-metrics.service; do
	in_m systemctl is-enabled --quiet "$u" || sn_fail "$u not enabled"
	sn_wait_for 10 in_m systemctl is-active --quiet "$u" || sn_fail "$u not active: $(in_m systemctl status --no-pager "$u")"
done
# the protocol is this build's; the version the package's
want=$("$NETSETUP" --version | sed "s/^netsetup [^ ]* /netsetup $VA /")
[ "$(in_m netsetup --version)" = "$want" ] || sn_fail "netsetup --version: '$(in_m netsetup --version)', not '$want'"
echo "ok: installed: user sandnet, /run/sandnet, netsetup.socket and sandnet-metrics.service active; $(in_m netsetup --version)"

sn_log "a broken configuration: the service's status says which file and the fix"
in_m sh -c 'cp /etc/sandnet/netsetup.conf /root/netsetup.conf && echo "allowed_uids = 0 nobody-here" >>/etc/sandnet/netsetup.conf'
in_m systemctl restart netsetup.service 2>/dev/null && sn_fail "netsetup.service started on a broken configuration"
why="/etc/sandnet/netsetup.conf line [0-9]*: allowed_uids 'nobody-here': no such user (create it"
in_m systemctl show -P StatusText netsetup.service >"$SN_TMP/status"
grep -q "^cannot serve: $why" "$SN_TMP/status" || sn_fail "the unit's status text: $(cat "$SN_TMP/status")"
sn_wait_for 5 sh -c "nsenter -t $INIT -a journalctl --no-pager -u netsetup.service | grep -q \"$why\"" ||
	sn_fail "the journal does not name the file and the fix: $(in_m journalctl --no-pager -n 5 -u netsetup.service)"
echo "ok: status: $(cat "$SN_TMP/status")"
in_m cp /root/netsetup.conf /etc/sandnet/netsetup.conf
in_m systemctl reset-failed netsetup.service
in_m systemctl restart netsetup.socket netsetup.service || sn_fail "netsetup.service with its configuration back"

sn_log "a container namespace inside, served by datapath@ct"
in_m sh -e -c '
	ip netns add ct
	ip link add veth0 type veth peer name eth0 netns ct
	ip addr add 10.91.0.1/24 dev veth0
	ip link set veth0 up
	ip -n ct link set lo up
	ip -n ct addr add 10.91.0.2/24 dev eth0
	ip -n ct link set eth0 up
	ip -n ct route add default via 10.91.0.1
	mkdir -p /srv/www
	head -c 4000000 /dev/urandom >/srv/www/blob
	sha256sum </srv/www/blob | cut -d" " -f1 >/srv/blob.sha256
	busybox httpd -p 10.91.0.1:8080 -h /srv/www' || sn_fail "the container namespace"
addr_in_kernel() { in_m ip -n ct -4 addr show dev eth0 | grep -q 10.91.0.2/24; }
addr_in_kernel || sn_fail "10.91.0.2 not on eth0 to begin with"
in_m systemctl start datapath@ct.service || sn_fail "systemctl start datapath@ct"
sn_wait_for 10 sh -c "! nsenter -t $INIT -a ip -n ct -4 addr show dev eth0 | grep -q 10.91.0.2/24" ||
	{ in_m journalctl --no-pager -n 30; sn_fail "the kernel kept 10.91.0.2: not served"; }
fetch() { in_m sh -c 'timeout 10 ip netns exec ct busybox wget -q -O - http://10.91.0.1:8080/blob | sha256sum | cut -d" " -f1'; }
[ "$(fetch)" = "$(in_m cat /srv/blob.sha256)" ] || sn_fail "the file did not come through the face intact"
echo "ok: served: the kernel gave 10.91.0.2 up, 4 MB came through byte for byte"
sn_wait_for 5 sh -c "nsenter -t $INIT -a journalctl --no-pager -u datapath@ct.service | grep -q 'datapath: serving 1 link'" ||
	sn_fail "the datapath's log is not in the journal"
echo "ok: journal: $(in_m journalctl --no-pager -u datapath@ct.service | grep -o 'datapath: serving.*' | head -n 1)"
in_m timeout 10 busybox wget -q -O - http://127.0.0.1:9476/metrics >"$SN_TMP/metrics" || sn_fail "no /metrics"
grep -q 'sandnet_datapath_up{container="unit:ct"} 1\|container="unit:ct"' "$SN_TMP/metrics" ||
	{ head -n 20 "$SN_TMP/metrics"; sn_fail "/metrics has no series of unit:ct"; }
echo "ok: /metrics: $(grep -c 'container="unit:ct"' "$SN_TMP/metrics") series of unit:ct"
in_m datapath stats --all | grep -q 'unit:ct' || sn_fail "datapath stats --all does not show unit:ct"
# the datapath proper (the supervisor's worker), from its status file
worker() { in_m sh -c 'cat /run/sandnet/*.state.status' | awk '$1 == "datapath" { print $2 }'; }
w0=$(worker)
[ -n "$w0" ] || sn_fail "no datapath in the status file: $(in_m sh -c 'cat /run/sandnet/*.status')"

sn_log "systemctl restart netsetup: the container stays served"
in_m systemctl restart netsetup.service || sn_fail "systemctl restart netsetup"
[ "$(worker)" = "$w0" ] || sn_fail "the datapath changed with the daemon's restart"
[ "$(fetch)" = "$(in_m cat /srv/blob.sha256)" ] || sn_fail "no fetch after the daemon's restart"
! addr_in_kernel || sn_fail "the daemon's restart gave the address back"
echo "ok: same datapath (pid $w0), still served"

sn_log "upgrade to $VB while the container fetches"
# one line a fetch: ok (whole and identical), cut (wget failed: the restart
# resets open connections), bad (whole but other bytes); "kernel" when the
# container's kernel had the address
in_m sh -c 'sum=$(cat /srv/blob.sha256)
	while [ ! -e /root/stop ]; do
		rm -f /root/got
		if timeout 10 ip netns exec ct busybox wget -q -O /root/got http://10.91.0.1:8080/blob 2>/dev/null; then
			if [ "$(sha256sum </root/got | cut -d" " -f1)" = "$sum" ]; then r=ok; else r=bad; fi
		else
			r=cut; sleep 0.1
		fi
		echo "$r $(date +%s.%N)" >>/root/fetches
		ip -n ct -4 addr show dev eth0 | grep -q 10.91.0.2/24 && echo "kernel $(date +%s.%N)" >>/root/fetches
	done; true' &
LOOP=$!
sn_on_exit "kill $LOOP"
oks() { grep -c '^ok' "$ROOT/root/fetches" 2>/dev/null || echo 0; }
sn_wait_for 20 sh -c "[ \$(grep -c '^ok' '$ROOT/root/fetches' 2>/dev/null || echo 0) -ge 3 ]" || sn_fail "the fetch loop does not fetch"
in_m dpkg -i "/root/$(basename "$DEBB")" >"$SN_TMP/dpkg-b.log" 2>&1 || { cat "$SN_TMP/dpkg-b.log"; sn_fail "dpkg -i (upgrade)"; }
cat "$SN_TMP/dpkg-b.log"
grep -q "restart --all: 1 restarted, 0 failed" "$SN_TMP/dpkg-b.log" || sn_fail "postinst did not restart the datapath"
before=$(oks)
sn_wait_for 30 sh -c "[ \$(grep -c '^ok' '$ROOT/root/fetches') -ge $((before + 3)) ]" || sn_fail "no fetch after the upgrade"
touch "$ROOT/root/stop"
wait "$LOOP"
w1=$(worker)
[ -n "$w1" ] && [ "$w1" != "$w0" ] || sn_fail "the datapath was not restarted ($w0 -> $w1)"
in_m readlink "/proc/$w1/exe" | grep -q deleted && sn_fail "the new datapath runs the old, deleted binary"
[ "$(in_m datapath --version | cut -d' ' -f2)" = "$VB" ] || sn_fail "datapath --version: $(in_m datapath --version)"
! grep -q '^bad' "$ROOT/root/fetches" || sn_fail "a fetch came through with other bytes: $(grep -c '^bad' "$ROOT/root/fetches")"
! grep -q '^kernel' "$ROOT/root/fetches" || sn_fail "the container's kernel had its address back during the upgrade"
echo "ok: upgraded: datapath $w0 -> $w1 ($(in_m datapath --version)); fetches $(grep -c '^ok' "$ROOT/root/fetches") intact,"\
	"$(grep -c '^cut' "$ROOT/root/fetches") cut by the restart (reset), 0 corrupt; the kernel never had the address"

sn_log "systemctl stop: every namespace given back"
in_m systemctl stop datapath@ct.service sandnet-metrics.service netsetup.service netsetup.socket ||
	sn_fail "systemctl stop"
sn_wait_for 10 addr_in_kernel ||
	{ in_m journalctl --no-pager -n 30 -u netsetup.service -u datapath@ct.service
	  sn_fail "10.91.0.2 not given back after systemctl stop (the journal above)"; }
[ -z "$(in_m sh -c 'ls /run/sandnet/*.state 2>/dev/null')" ] || sn_fail "state left: $(in_m ls /run/sandnet)"
echo "ok: stopped: 10.91.0.2 is the kernel's again, no state left"

sn_log "purge, then install again"
in_m dpkg -L sandnet >"$SN_TMP/files"
in_m dpkg --purge sandnet >"$SN_TMP/purge.log" 2>&1 || { cat "$SN_TMP/purge.log"; sn_fail "dpkg --purge"; }
left=$(while read -r f; do
	case $f in /.|/etc|/lib|/usr|/usr/*/|/lib/systemd|/lib/systemd/system|/usr/lib|/usr/bin|/usr/sbin|/usr/share|\
		/usr/share/doc|/usr/share/man|/usr/share/man/man8|/usr/lib/sysusers.d|/usr/lib/tmpfiles.d) continue;; esac
	[ -e "$ROOT$f" ] || [ -L "$ROOT$f" ] && echo "$f"
done <"$SN_TMP/files")
[ -z "$left" ] || sn_fail "purge left: $left"
[ ! -e "$ROOT/etc/sandnet" ] || sn_fail "purge left /etc/sandnet: $(ls -A "$ROOT/etc/sandnet")"
[ -z "$(in_m sh -c 'ls -d /run/sandnet 2>/dev/null')" ] || sn_fail "purge left /run/sandnet: $(in_m ls -lA /run/sandnet)"
echo "ok: purged: none of its $(wc -l <"$SN_TMP/files") paths, no /etc/sandnet, no /run/sandnet (user sandnet kept)"
in_m dpkg -i "/root/$(basename "$DEBB")" >"$SN_TMP/dpkg-c.log" 2>&1 || { cat "$SN_TMP/dpkg-c.log"; sn_fail "reinstall"; }
in_m systemctl start datapath@ct.service || sn_fail "datapath@ct after the reinstall"
sn_wait_for 10 sh -c "! nsenter -t $INIT -a ip -n ct -4 addr show dev eth0 | grep -q 10.91.0.2/24" ||
	sn_fail "not served after the reinstall"
[ "$(fetch)" = "$(in_m cat /srv/blob.sha256)" ] || sn_fail "no fetch after the reinstall"
in_m systemctl stop datapath@ct.service
sn_wait_for 10 addr_in_kernel || sn_fail "not given back after the reinstall's stop"
echo "ok: installed again, served again, given back again"

sn_log "reboot: the socket and the exporter come up by themselves, /run/sandnet is made again"
machine_stop
wait "$NSPAWN" 2>/dev/null
machine_start
for u in netsetup.socket sandnet-metrics.service; do
	sn_wait_for 10 in_m systemctl is-active --quiet "$u" || sn_fail "$u not active after the reboot"
done
[ "$(in_m stat -c '%a %U' /run/sandnet/units)" = "750 sandnet" ] || sn_fail "/run/sandnet/units after the reboot"
in_m timeout 10 busybox wget -q -O - http://127.0.0.1:9476/metrics | grep -q '^sandnet_' ||
	sn_fail "/metrics after the reboot"
echo "ok: after a reboot: $(in_m systemctl is-active netsetup.socket sandnet-metrics.service | tr '\n' ' ')"
echo "package_systemd: built, linted, booted, installed, served, restarted, upgraded, stopped, purged, reinstalled, rebooted"
