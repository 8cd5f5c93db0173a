#!/bin/sh
# Install the Debian packages sandnet builds, tests and demos with; idempotent:
# apt-get runs only when a package is missing.
#
#   scripts/install-deps.sh         everything (make check, make demo, make bench)
#   scripts/install-deps.sh --deb   what `make deb` needs: the libraries and
#                                   Debian's packaging tools (debian/control)
set -eu

# the libraries (debian/control's Build-Depends) and the packaging tools
build="gcc make pkg-config
libnl-3-dev libnl-route-3-dev libnl-genl-3-dev libcap-ng-dev libsodium-dev
libjansson-dev libsystemd-dev libseccomp-dev libnftables-dev liburing-dev
debhelper dpkg-dev fakeroot lintian"
# the tests, the demo and the benchmarks; mmdebstrap and systemd-container
# boot a real systemd with the package installed (package_systemd.sh)
packages="$build clang libclang-rt-14-dev check
iproute2 ethtool nftables socat iputils-ping arping python3 curl
containernetworking-plugins procps valgrind crun busybox-static
iperf3 passt slirp4netns gnuplot-nox nginx apache2-utils hping3 dnsmasq-base podman
prometheus docker.io containerd runc mmdebstrap systemd-container"
[ "${1:-}" = "--deb" ] && packages=$build

missing=""
for p in $packages; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages:$missing (run as root, or install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# prometheus, docker.io and containerd would start daemons of the machine's
# own (in its network namespace) where services may start; the tests run
# theirs in namespaces of their own. policy-rc.d (Debian's switch) keeps
# every service the packages bring from starting while they install.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 0755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
