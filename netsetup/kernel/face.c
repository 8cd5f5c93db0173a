// SPDX-License-Identifier: MIT
/*
 * face.c - the container face: the TUN that carries the container's own
 * traffic, and the outer link kept away from the container's kernel
 *
 * Theory of operation
 *
 * Without a face, attach takes a link's addresses from the kernel and the
 * container's programs are left without a network. With one (the default;
 * --face off, "face": false, sandnet.face=off turn it off), attach also
 * gives them a network that goes through the datapath:
 *
 *   1. before anything changes (ns_face_open()): /dev/net/tun is opened in
 *      the container's netns (the device lives in the opener's netns) and a
 *      TUN named "sn-" + the link's name is made with IFF_TUN | IFF_NO_PI |
 *      IFF_VNET_HDR (and IFF_MULTI_QUEUE, one queue per shard, with more
 *      than one shard: steer.c), with every offload TUNSETOFFLOAD accepts (CSUM, TSO4,
 *      TSO6, USO4, USO6; fewer on an older kernel). It is down and has no
 *      address. A missing /dev/net/tun or a name already taken fails here,
 *      with nothing changed; the device is not persistent, so it disappears
 *      with the last fd (ours, or the datapath's once it dies). The netns's
 *      /proc/net/snmp, snmp6 and dev are opened too, for the datapath to
 *      read the container's own losses from (FACE NETSTAT);
 *   2. after the takeover (ns_face_setup()): the outer link is kept from
 *      the container's kernel while the addresses live on the TUN: an
 *      nftables table "netdev sandnet_IFINDEX" whose ingress chain on the
 *      link drops every frame (AF_PACKET taps, the datapath's channels, see
 *      them before the hook), and disable_ipv6 on the link (no link-local
 *      address, no NDP or MLD from the kernel). Then the TUN gets the link's
 *      MTU, a transmit queue of NS_FACE_TXQLEN packets (the TUN's own 500
 *      overflow while the datapath waits for a CPU the container's program
 *      holds: a fifth of a 1 Gbit/s UDP stream was lost there, issue 22;
 *      the TUN orphans what it queues, so no socket buffer bounds it, and
 *      2048 frames of 64 KiB at most are what the container may park in
 *      its kernel this way),
 *      IPv6 autoconfiguration off (addr_gen_mode none, accept_ra 0),
 *      up, the link's addresses (IPv6 ones without DAD: the TUN is
 *      point-to-point and only the datapath answers on it), and the link's
 *      main-table routes, default routes included (the kernel's own prefix
 *      routes come back with the addresses). Every route on the TUN
 *      has an initial congestion window of NS_FACE_INITCWND segments
 *      (`ip route` shows "initcwnd 128"): the container's TCP peer on it is
 *      the datapath, one TUN write away, with no queue that a first flight
 *      could overflow, and its receive window (128 KiB at first) still
 *      bounds that flight. The kernel's ten segments cost a fresh response
 *      a loop turn of the datapath per round trip of its ramp (issue 19;
 *      docs/face.md);
 *   3. the TUN's fd goes to the datapath with the link (proto FACE, minor 2).
 *
 * Giving back (restore.c, first in ns_restore()) removes the TUN if
 * it is still there (its addresses and routes go with it), the nftables
 * table, and puts disable_ipv6 back, before the addresses return to the
 * link. It is idempotent and runs on every path that gives back: detach,
 * DEL, poststop, the end of run and the death of the datapath (SIGKILL
 * included).
 *
 * nftables is driven through libnftables (the nft tool's own library), in
 * the namespace netsetup has entered. Removal uses "add table; delete
 * table" in one transaction, which succeeds whether or not the table was
 * there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <linux/if_addr.h>
#include <linux/if_tun.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "netsetup/kernel/kernel_int.h"

/* Missing from Debian 12's linux/if_tun.h (Linux 6.2). */
#ifndef TUN_F_USO4
#define TUN_F_USO4	0x20
#endif
#ifndef TUN_F_USO6
#define TUN_F_USO6	0x40
#endif

#define NS_FACE_NFT_PRIO	-500

/* What TUNSETOFFLOAD is asked for, best first; the first one accepted stays. */
static const unsigned int ns_face_offloads[] = {
	TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_USO4 | TUN_F_USO6,
	TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6,
	TUN_F_CSUM,
	0,
};

/**
 * ns_face_name() - the TUN's name for a link: "sn-" + its name, cut to fit
 * @ifname:	the link
 * @out:	IFNAMSIZ bytes
 */
void ns_face_name(const char *ifname, char *out)
{
	snprintf(out, IFNAMSIZ, "%s%.*s", NS_FACE_PREFIX, (int)(IFNAMSIZ - 1 - strlen(NS_FACE_PREFIX)),
		 ifname);
}

/* One more queue of the TUN named in @fc; the first one makes it. */
static int face_queue_open(const struct ns_link *l, struct ns_face *fc, bool multi, struct ns_err *e)
{
	struct ifreq ifr;
	unsigned int i;
	int fd, err;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		ns_err_set(e, "link %s: cannot make the container face: /dev/net/tun: %s "
			   "(load the tun module, or --face off)", l->ifname, strerror(errno));
		return err;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", fc->name);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR | (multi ? IFF_MULTI_QUEUE : 0);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		err = -errno;
		ns_err_set(e, "link %s: cannot make the container face %s: TUNSETIFF%s: %s", l->ifname,
			   fc->name, fc->n_fds ? " (another queue)" : "", strerror(errno));
		close(fd);
		return err;
	}
	/* Offloads are the device's; each queue asks, the first answer stays. */
	for (i = 0; i < sizeof(ns_face_offloads) / sizeof(ns_face_offloads[0]); i++) {
		if (ioctl(fd, TUNSETOFFLOAD, (unsigned long)ns_face_offloads[i]) == 0) {
			if (!fc->n_fds)
				fc->offloads = ns_face_offloads[i];
			break;
		}
	}
	fc->fds[fc->n_fds++] = fd;
	return 0;
}

/*
 * The netns's own counters for the datapath (docs/protocol.md, FACE NETSTAT):
 * its /proc/net/snmp, snmp6 and dev, opened here, inside it (a procfs file
 * stays bound to the netns it was opened in), for reading. Without all
 * three (a kernel without IPv6 has no snmp6) the datapath goes without:
 * they say where datagrams were lost, nothing depends on them.
 */
static void face_netstat_open(struct ns_face *fc)
{
	static const char *const files[PROTO_FACE_NETSTAT_FDS] = {
		"/proc/thread-self/net/snmp", "/proc/thread-self/net/snmp6", "/proc/thread-self/net/dev",
	};

	while (fc->n_netstat < PROTO_FACE_NETSTAT_FDS) {
		int fd = open(files[fc->n_netstat], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			while (fc->n_netstat)
				close(fc->netstat_fds[--fc->n_netstat]);
			return;
		}
		fc->netstat_fds[fc->n_netstat++] = fd;
	}
}

/**
 * ns_face_open() - make the link's TUN, down and without an address
 * @l:		the link
 * @queues:	1, or one per shard (an IFF_MULTI_QUEUE TUN), up to PROTO_MAX_CHANNELS
 * @fc:		filled: the fds, the name, the index, the offloads
 * @e:		why not, in words
 *
 * Called inside the namespace, before anything in it changes.
 *
 * Return: 0 or -errno (-ENOENT no /dev/net/tun, -EEXIST the name is taken).
 */
int ns_face_open(const struct ns_link *l, unsigned int queues, struct ns_face *fc, struct ns_err *e)
{
	int err;

	memset(fc, 0, sizeof(*fc));
	ns_face_name(l->ifname, fc->name);
	if (queues < 1 || queues > PROTO_MAX_CHANNELS) {
		ns_err_set(e, "link %s: %u queues for the container face is out of range 1..%d", l->ifname,
			   queues, PROTO_MAX_CHANNELS);
		return -EINVAL;
	}
	if (if_nametoindex(fc->name)) {
		ns_err_set(e, "link %s: the container face's TUN name %s is already taken in the netns "
			   "(remove that device, or --face off)", l->ifname, fc->name);
		return -EEXIST;
	}
	while (fc->n_fds < queues) {
		err = face_queue_open(l, fc, queues > 1, e);
		if (err)
			goto err;
	}
	fc->ifindex = (int)if_nametoindex(fc->name);
	if (!fc->ifindex) {
		err = -ENODEV;
		ns_err_set(e, "link %s: the container face %s vanished", l->ifname, fc->name);
		goto err;
	}
	fc->mtu = l->mtu;
	face_netstat_open(fc);
	return 0;
err:
	ns_face_close(fc);
	return err;
}

/**
 * ns_face_close() - close our fds of the TUN (the datapath keeps its own)
 * @fc:	the face, or one never opened
 */
void ns_face_close(struct ns_face *fc)
{
	while (fc->n_fds)
		close(fc->fds[--fc->n_fds]);
	while (fc->n_netstat)
		close(fc->netstat_fds[--fc->n_netstat]);
}

/**
 * ns_face_table() - the name of the nftables table that fences a link: "sandnet_IFINDEX"
 * @ifindex:	the link
 * @buf:	receives the name
 * @size:	size of @buf
 */
void ns_face_table(int ifindex, char *buf, size_t size)
{
	snprintf(buf, size, "sandnet_%d", ifindex);
}

/**
 * ns_face_prepare() - record in the state what the face will change on a link
 * @sl:		the link's state entry
 * @fc:		its opened face
 */
void ns_face_prepare(struct ns_state_link *sl, const struct ns_face *fc)
{
	sl->face = true;
	snprintf(sl->face_tun, sizeof(sl->face_tun), "%s", fc->name);
	sl->disable_ipv6 = ns_sysctl6_read(sl->ifname, "disable_ipv6");
}

/* Up with the link's MTU; IPv6 autoconfiguration off first. */
static int ns_face_link_up(struct nl_sock *sk, const struct ns_face *fc, struct ns_err *e)
{
	struct rtnl_link *orig = rtnl_link_alloc(), *chg = rtnl_link_alloc();
	int err;

	if (!orig || !chg) {
		rtnl_link_put(orig);
		rtnl_link_put(chg);
		ns_err_set(e, "face %s: out of memory", fc->name);
		return -ENOMEM;
	}
	err = ns_sysctl6_write(fc->name, "addr_gen_mode", 1, e);
	if (!err)
		err = ns_sysctl6_write(fc->name, "accept_ra", 0, e);
	if (err)
		goto out;
	rtnl_link_set_ifindex(orig, fc->ifindex);
	rtnl_link_set_mtu(chg, fc->mtu);
	rtnl_link_set_txqlen(chg, NS_FACE_TXQLEN);
	rtnl_link_set_flags(chg, IFF_UP);
	err = rtnl_link_change(sk, orig, chg, 0);
	if (err < 0) {
		ns_err_set(e, "face %s: setting MTU %u, txqueuelen %u and up: %s", fc->name, fc->mtu,
			   NS_FACE_TXQLEN, nl_geterror(err));
		err = -EIO;
	}
out:
	rtnl_link_put(orig);
	rtnl_link_put(chg);
	return err;
}

/**
 * ns_face_setup() - isolate the outer link, give the TUN its addresses and routes
 * @sk:		rtnetlink socket in the namespace
 * @st:		the state (the link's addresses and routes, already taken)
 * @sl:		the link's state entry (ns_face_prepare() filled it)
 * @fc:		the link's face
 * @e:		error message
 *
 * Stops at the first failure; ns_restore() undoes any prefix of it.
 *
 * Return: 0 or -errno.
 */
int ns_face_setup(struct nl_sock *sk, const struct ns_state *st, const struct ns_state_link *sl,
		  const struct ns_face *fc, struct ns_err *e)
{
	char table[32], cmd[512];
	int err;

	ns_face_table(sl->ifindex, table, sizeof(table));
	snprintf(cmd, sizeof(cmd),
		 "add table netdev %s\n"
		 "add chain netdev %s ingress { type filter hook ingress device \"%s\" priority %d ; policy drop ; }\n",
		 table, table, sl->ifname, NS_FACE_NFT_PRIO);
	err = ns_nft_run(cmd, sl->ifname, "keeping the kernel off the link", e);
	if (!err && sl->disable_ipv6 >= 0)
		err = ns_sysctl6_write(sl->ifname, "disable_ipv6", 1, e);
	if (!err)
		err = ns_face_link_up(sk, fc, e);
	if (!err)
		err = ns_addrs_copy(sk, st, sl->ifindex, fc->ifindex, fc->name, e);
	if (!err)
		err = ns_routes_copy(sk, st, sl->ifindex, fc->ifindex, fc->name, NS_FACE_INITCWND, e);
	return err;
}
