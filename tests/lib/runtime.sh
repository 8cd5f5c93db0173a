# Sourced by the tests that run a container daemon (dockerd, containerd) after
# common.sh and netsetup.sh: what every one of them needs to run it inside a
# namespace of the test, and sandnet-runtime as the build's netsetup.
#
#   rt_rootfs DIR [PAGE]          # a busybox-static rootfs: sh, httpd, wget, timeout, ip, ...
#   rt_daemon NS NAME CMD...      # CMD in netns NS and a private mount namespace with
#                                 # the cgroup v1 hierarchies and a tmpfs /run that still
#                                 # holds /run/netns; pid in RT_PID
#   rt_cgroups_remove PARENT      # the cgroup PARENT every hierarchy got (after the daemon)
#
# `ip netns exec` gives a private mount namespace but mounts a new sysfs, which
# has an empty /sys/fs/cgroup: runc and dockerd need the hierarchies, so they
# are mounted again there (the same hierarchies: the cgroups a daemon makes are
# the machine's, under a PARENT named by the test and removed on exit).
RUNTIME_BIN=$SN_TMP/bin
mkdir -p "$RUNTIME_BIN"
# sandnet-runtime is netsetup by that name (make install links it so).
ln -sf "$NETSETUP" "$RUNTIME_BIN/sandnet-runtime"
SANDNET_RUNTIME_BIN=$RUNTIME_BIN/sandnet-runtime

rt_rootfs() {
	local dir=$1 page=${2:-served from inside the container} c
	mkdir -p "$dir/bin" "$dir/www" "$dir/proc" "$dir/sys" "$dir/dev" "$dir/etc" "$dir/tmp"
	cp "$BUSYBOX" "$dir/bin/busybox"
	for c in sh sleep httpd wget timeout cat ip ping ls; do ln -sf busybox "$dir/bin/$c"; done
	echo "$page" >"$dir/www/index.html"
}

rt_daemon() {
	local ns=$1 name=$2; shift 2
	RT_TMP=$SN_TMP/$name.mnt ip netns exec "$ns" sh -c '
		set -e
		mount -t tmpfs rt-cgroup /sys/fs/cgroup
		awk -F: "\$2 != \"\" { print \$2 }" /proc/self/cgroup | while read -r c; do
			d=${c#name=}
			mkdir -p "/sys/fs/cgroup/$d"
			case $c in
			name=*) mount -t cgroup -o "none,$c" cgroup "/sys/fs/cgroup/$d";;
			*) mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$d";;
			esac
		done
		# a /run of its own (containerd writes shim sockets and fifos under
		# /run/containerd whatever it is told), with the named netns in it
		mkdir -p "$RT_TMP/run-netns"
		mount --rbind /run/netns "$RT_TMP/run-netns"
		mount -t tmpfs rt-run /run
		mkdir /run/netns
		mount --move "$RT_TMP/run-netns" /run/netns
		exec "$@"' "$name" "$@" >"$SN_TMP/$name.log" 2>&1 &
	RT_PID=$!
	sn_on_exit "rt_stop $RT_PID"
}

# rt_stop PID: SIGTERM, then SIGKILL after 10 s.
rt_stop() {
	local i
	kill "$1" 2>/dev/null || return 0
	for i in $(seq 100); do
		rt_alive "$1" || return 0
		sleep 0.1
	done
	kill -9 "$1"
}

# rt_alive PID: the process runs (a zombie does not).
rt_alive() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]; }

rt_cgroups_remove() {
	local d
	for d in /sys/fs/cgroup/*/"$1"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	return 0
}
