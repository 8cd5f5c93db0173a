# Sourced by integration tests: binaries, unique names, and cleanup on every exit.
#
#   . "$SANDNET_TESTS/lib/common.sh"
#   sn_netns_add peer            # creates "${SN_PREFIX}peer", removed on exit
#   sn_veth_add ct eth0 peer veth0   # veth between two of our namespaces
#   sn_on_exit "kill $pid"       # more cleanup, run in reverse order
#   sn_fail "what went wrong"    # print and exit 1
#   sn_udp_echo ns 127.0.0.1 6000 'd.upper()'   # a UDP echo server in ns
#
# Names are "sn<pid>-" prefixed so parallel or leftover runs never collide.
set -u
: "${SANDNET_BUILD:?run through tests/run-tests.sh or set SANDNET_BUILD}"
: "${SANDNET_TESTS:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
NETSETUP=$SANDNET_BUILD/netsetup
DATAPATH=$SANDNET_BUILD/datapath
TOOLS=$SANDNET_BUILD/tests/tools
SN_PREFIX=${SN_PREFIX:-sn$$-}
SN_TMP=$(mktemp -d "/tmp/${SN_PREFIX}XXXX")
_sn_cleanup=()
_sn_netns=()

sn_on_exit() { _sn_cleanup+=("$1"); }

_sn_exit() {
	local rc=$? i
	for ((i = ${#_sn_cleanup[@]} - 1; i >= 0; i--)); do
		eval "${_sn_cleanup[$i]}" >/dev/null 2>&1 || true
	done
	for ns in "${_sn_netns[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$SN_TMP"
	exit $rc
}
trap _sn_exit EXIT
trap 'exit 130' INT TERM

sn_fail() { echo "FAIL: $*" >&2; exit 1; }
sn_skip() { echo "skipped: $*"; exit 77; }
sn_log() { echo "--- [${SECONDS} s] $*"; }	# the time since the scenario began

# Every namespace sysctl the tests rely on, at the kernel's own defaults. A
# new namespace inherits its IPv4 settings from the root one
# (net.core.devconf_inherit_init_net=0), and a container host has them the
# other way round: CNI's bridge and ptp plugins, Docker and podman turn on
# ip_forward where they run, distributions set rp_filter. So each namespace
# sets them itself, "default" before any link arrives (a link copies it).
# TCP's ECN too, which netsetup run gives the datapath. (Its congestion
# control a namespace also inherits, but cubic cannot be set in one where
# the host's tcp_allowed_congestion_control lacks it: datapath_env.inc's
# DP_TCP_CC says which the datapath runs.)
SN_SYSCTL_BASELINE="net.ipv4.ip_forward=0
net.ipv4.conf.all.forwarding=0 net.ipv4.conf.default.forwarding=0
net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
net.ipv4.conf.all.accept_redirects=1 net.ipv4.conf.default.accept_redirects=1
net.ipv4.conf.all.send_redirects=1 net.ipv4.conf.default.send_redirects=1
net.ipv4.conf.all.accept_local=0 net.ipv4.conf.default.accept_local=0
net.ipv4.conf.all.route_localnet=0 net.ipv4.conf.default.route_localnet=0
net.ipv4.conf.all.proxy_arp=0 net.ipv4.conf.default.proxy_arp=0
net.ipv4.conf.all.arp_ignore=0 net.ipv4.conf.default.arp_ignore=0
net.ipv4.conf.all.arp_announce=0 net.ipv4.conf.default.arp_announce=0
net.ipv4.conf.all.arp_filter=0 net.ipv4.conf.default.arp_filter=0
net.ipv6.conf.all.forwarding=0 net.ipv6.conf.default.forwarding=0
net.ipv6.conf.all.accept_ra=1 net.ipv6.conf.default.accept_ra=1
net.ipv6.conf.all.autoconf=1 net.ipv6.conf.default.autoconf=1
net.ipv6.conf.all.accept_dad=1 net.ipv6.conf.default.accept_dad=1
net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0
net.ipv4.ping_group_range=1\t0
net.ipv4.tcp_ecn=2"

# sn_netns_add NAME: create namespace ${SN_PREFIX}NAME with lo up and
# SN_SYSCTL_BASELINE set. SN_HOST_SYSCTLS (tests/integration/host_sysctls.sh)
# is applied first: what a namespace inherits on a container host.
sn_netns_add() {
	local ns=$SN_PREFIX$1 kv settings=()
	ip netns add "$ns" || sn_fail "ip netns add $ns"
	_sn_netns+=("$ns")
	for kv in ${SN_HOST_SYSCTLS:-} $SN_SYSCTL_BASELINE; do
		settings+=("${kv//\\t/	}")
	done
	ip netns exec "$ns" sysctl -qw "${settings[@]}" >/dev/null || sn_fail "$ns: sysctl ${settings[*]}"
	ip -n "$ns" link set lo up
}

# sn_need_static_busybox: BUSYBOX is a static busybox (a container's whole
# rootfs), or the test is skipped.
sn_need_static_busybox() {
	BUSYBOX=$(command -v busybox) || sn_skip "no busybox (apt-get install busybox-static)"
	file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' ||
		sn_skip "$BUSYBOX is not static (apt-get install busybox-static)"
}

# sn_ns NAME: the full namespace name.
sn_ns() { echo "$SN_PREFIX$1"; }

# sn_veth_add NS1 IF1 NS2 IF2: a veth pair, both ends up.
sn_veth_add() {
	local tmp=sn$$v${RANDOM}
	ip link add "$tmp" type veth peer name "${tmp}p" || sn_fail "ip link add veth"
	ip link set "$tmp" netns "$SN_PREFIX$1" name "$2" || sn_fail "move veth to $1"
	ip link set "${tmp}p" netns "$SN_PREFIX$3" name "$4" || sn_fail "move veth to $3"
	ip -n "$SN_PREFIX$1" link set "$2" up
	ip -n "$SN_PREFIX$3" link set "$4" up
}

# sn_alive PID: runs and is no zombie (a detached process is reaped by
# whoever adopted it, maybe late); one read of its stat, no race
sn_alive() {
	local state
	state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$state" ] && [ "$state" != Z ]
}

# sn_datapaths NS: the live datapath supervisors in netns NS (comm
# sn-supervise: what a state file records as "datapath"); a datapath process
# that is not a supervisor's child is named too, "PID (stray)"
sn_datapaths() {
	local p c
	for p in $(ip netns pids "$1"); do
		c=$(cat "/proc/$p/comm" 2>/dev/null)
		if [ "$c" = sn-supervise ] && sn_alive "$p"; then
			echo "$p"
		elif [ "$c" = datapath ] && sn_alive "$p" &&
			[ "$(cat "/proc/$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)/comm" 2>/dev/null)" != sn-supervise ]; then
			echo "$p (stray)"
		fi
	done
}

# sn_wait_for TIMEOUT_S CMD...: retry CMD every 0.1 s until it succeeds or time runs out.
sn_wait_for() {
	local deadline=$(( $(date +%s) + $1 )); shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# sn_udp_echo NS ADDR PORT [EXPR]: a python3 UDP server in namespace
# ${SN_PREFIX}NS... (NS is the full name) on ADDR:PORT answering each
# datagram d with EXPR (default d itself) to its sender; waits until it is
# bound, kills it on exit, leaves its pid in SN_UDP_ECHO_PID.
sn_udp_echo() {
	local ns=$1 addr=$2 port=$3 expr=${4:-d}
	ip netns exec "$ns" python3 -c '
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM); s.bind((sys.argv[1], int(sys.argv[2])))
while True:
    d, a = s.recvfrom(70000); s.sendto(eval(sys.argv[3]), a)' "$addr" "$port" "$expr" &
	SN_UDP_ECHO_PID=$!
	sn_on_exit "kill $SN_UDP_ECHO_PID"
	sn_wait_for 10 sh -c "ip netns exec '$ns' ss -Hlun 'sport = :$port' | grep -q ." ||
		sn_fail "UDP echo on $addr:$port in $ns did not start"
}
