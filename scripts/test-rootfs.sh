#!/bin/sh
# The Debian 12 root the systemd test boots (tests/integration/package_systemd.sh):
# systemd, iproute2, busybox and the libraries the package depends on, made
# with mmdebstrap from the machine's apt sources. Like install-deps.sh, it
# fetches only when needed: the tarball is kept, named by what it holds, and
# OUT_DIR/bookworm.tar points at the current one.
#
#   scripts/test-rootfs.sh OUT_DIR
set -eu
out=${1:?usage: test-rootfs.sh OUT_DIR}
pkgs="systemd,systemd-sysv,dbus,iproute2,busybox,libnl-3-200,libnl-route-3-200,libnl-genl-3-200"
pkgs="$pkgs,libcap-ng0,libjansson4,libnftables1,libseccomp2,libsodium23,liburing2"
name=bookworm-$(echo "$pkgs" | sha256sum | cut -c1-12).tar
mkdir -p "$out"
if [ ! -s "$out/$name" ]; then
	echo "test-rootfs: making $out/$name with mmdebstrap (about 30 s)"
	rm -f "$out/$name.new.tar"
	mmdebstrap --quiet --variant=minbase --format=tar --include="$pkgs" bookworm "$out/$name.new.tar"
	mv "$out/$name.new.tar" "$out/$name"
fi
ln -sfn "$name" "$out/bookworm.tar"
