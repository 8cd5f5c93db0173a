// SPDX-License-Identifier: MIT
/*
 * giveback.c - giving a namespace back to its kernel: the one sequence
 *
 * Theory of operation: only an explicit stop gives back (docs/security.md,
 * "Fail closed"): SIGTERM or SIGINT to `netsetup run`, `netsetup detach`,
 * CNI DEL, the OCI poststop hook, and serve's watcher when its datapath
 * says it was stopped. A datapath that dies on its own never does: its
 * supervisor starts another on the same fds, and the namespace stays fenced
 * meanwhile. Whoever gives back runs the same steps, in this order:
 *
 *   1. stop the recorded datapath (its supervisor, which stops its own
 *      datapath first): it must not serve while the kernel takes over again
 *      (ns_give_back(); `run` has already waited for its child);
 *   2. in the namespace, when it still exists (by the path recorded or
 *      given, checked against the recorded dev/ino; else through the
 *      datapath's sockets while it lives), ns_restore():
 *        a. the container face: the TUN goes (its addresses and routes with
 *           it), the nftables table, disable_ipv6 back;
 *        b. the addresses, with their flags, lifetimes, peer, broadcast and
 *           label (IPv4 in dump order, IPv6 backwards);
 *        c. each link's main-table routes made equal to the saved set;
 *        d. the sysctls (addr_gen_mode last: switching it back may make the
 *           kernel regenerate the link-local address, which then exists);
 *      a link the runtime already removed is skipped with a note;
 *   3. the state file and its companions go (ns_state_files_remove()): the
 *      datapath's log, status and control socket, serve's bind mount.
 * ns_restore() is idempotent, keeps going after a failed step and reports
 * the first failure; a failed give-back keeps the state file for a retry.
 * A namespace that is gone has nothing to give back: its files go all the
 * same. The calls that change the namespace are netconf.c's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <netlink/route/link.h>

#include "netsetup/kernel/kernel_int.h"
#include "netsetup/orch/orch_int.h"

/**
 * ns_state_files_remove() - remove a state file and what lives next to it
 * @path:	the state file, "DIR/netns-DEV-INO.state"
 *
 * Its companions (docs/runtime.md): the datapath's log (.log), status
 * (.status) and control socket (.ctl), serve's bind mount of the namespace
 * (.netns, unmounted first).
 */
void ns_state_files_remove(const char *path)
{
	static const char *const suffixes[] = { ".log", ".status", ".ctl" };
	char other[PATH_MAX + 16];
	size_t n = strlen(path);
	unsigned int i;

	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(other, sizeof(other), "%s%s", path, suffixes[i]);
		unlink(other);
	}
	if (n > 6 && !strcmp(path + n - 6, ".state"))
		n -= 6;
	snprintf(other, sizeof(other), "%.*s.netns", (int)n, path);
	if (umount2(other, MNT_DETACH) == 0 || errno == EINVAL)
		unlink(other);
	unlink(path);
}

/*
 * What the container face changed on a link (face.c), given back: the TUN
 * when it is still there and is a TUN (its addresses and routes go with it),
 * the nftables table, disable_ipv6.
 * Idempotent; continues past failures and returns the first.
 */
static int face_remove(struct nl_sock *sk, const struct ns_state_link *sl, struct ns_err *e)
{
	struct rtnl_link *tun = NULL;
	char table[32], cmd[256];
	int err, first = 0;

	if (!sl->face)
		return 0;
	if (rtnl_link_get_kernel(sk, 0, sl->face_tun, &tun) == 0) {
		const char *kind = rtnl_link_get_type(tun);

		/* only a TUN of that name is ours to remove */
		if (!kind || !strcmp(kind, "tun")) {
			err = rtnl_link_delete(sk, tun);
			if (err < 0 && err != -NLE_OBJ_NOTFOUND && err != -NLE_NODEV) {
				ns_err_set(e, "face %s: removing it: %s", sl->face_tun, nl_geterror(err));
				first = -EIO;
			}
		}
		rtnl_link_put(tun);
	}
	ns_face_table(sl->ifindex, table, sizeof(table));
	snprintf(cmd, sizeof(cmd), "add table netdev %s\ndelete table netdev %s\n", table, table);
	err = ns_nft_run(cmd, sl->ifname, "removing the nftables table", first ? NULL : e);
	if (err && !first)
		first = err;
	/* the table goes in any case: it outlives the device it was hooked on */
	if (ns_link_gone(sl))
		return first;
	err = ns_sysctl6_write(sl->ifname, "disable_ipv6", sl->disable_ipv6, first ? NULL : e);
	if (err && !first)
		first = err;
	return first;
}

/* The entry of a link that is gone, for @ifindex; NULL when it is there. */
static const struct ns_state_link *gone_link(const struct ns_state *st, const bool *gone, int ifindex)
{
	unsigned int i;

	for (i = 0; i < st->n_links; i++)
		if (st->links[i].ifindex == ifindex && gone[i])
			return &st->links[i];
	return NULL;
}

/**
 * ns_restore() - give back to the kernel everything recorded in @st
 * @sk:		rtnetlink socket in the namespace
 * @st:		what was taken
 * @e:		the first failure, if any
 *
 * Idempotent; continues past failures.
 *
 * Return: 0 or the first -errno.
 */
int ns_restore(struct nl_sock *sk, const struct ns_state *st, struct ns_err *e)
{
	bool *gone = calloc(st->n_links + 1, sizeof(*gone));
	unsigned int i;
	int err, first = 0;

	if (!gone) {
		ns_err_set(e, "restore: out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < st->n_links; i++) {
		gone[i] = ns_link_gone(&st->links[i]);
		if (gone[i])
			fprintf(stderr, "netsetup: link %s (index %d) is gone: nothing goes back to it\n",
				st->links[i].ifname, st->links[i].ifindex);
	}

	/*
	 * The container face first: its TUN holds the addresses and routes
	 * that go back to the link, and IPv6 must be enabled on the link again.
	 */
	for (i = 0; i < st->n_links; i++) {
		err = face_remove(sk, &st->links[i], first ? NULL : e);
		if (err && !first)
			first = err;
	}
	/*
	 * IPv4 in dump order (primary before its secondaries); IPv6 backwards:
	 * the kernel lists a link's IPv6 addresses newest first.
	 */
	for (i = 0; i < st->n_addrs; i++) {
		if (st->addrs[i].a.family != AF_INET || gone_link(st, gone, st->addrs[i].ifindex))
			continue;
		err = ns_addr_add(sk, st, &st->addrs[i], first ? NULL : e);
		if (err && !first)
			first = err;
	}
	for (i = st->n_addrs; i-- > 0;) {
		if (st->addrs[i].a.family != AF_INET6 || gone_link(st, gone, st->addrs[i].ifindex))
			continue;
		err = ns_addr_add(sk, st, &st->addrs[i], first ? NULL : e);
		if (err && !first)
			first = err;
	}
	for (i = 0; i < st->n_links; i++) {
		if (gone[i])
			continue;
		err = ns_routes_set(sk, st, st->links[i].ifindex, first ? NULL : e);
		if (err && !first)
			first = err;
	}
	for (i = 0; i < st->n_links; i++) {
		const struct ns_state_link *sl = &st->links[i];
		struct ns_err *pe = first ? NULL : e;

		if (gone[i])
			continue;
		err = ns_sysctl6_write(sl->ifname, "accept_ra", sl->accept_ra, pe);
		if (!err)
			err = ns_sysctl6_write(sl->ifname, "autoconf", sl->autoconf, pe);
		if (!err)
			err = ns_sysctl6_write(sl->ifname, "addr_gen_mode", sl->addr_gen_mode, pe);
		if (err && !first)
			first = err;
	}
	free(gone);
	return first;
}

/**
 * ns_give_back() - stop a state's datapath and give its namespace back
 * @path:	the state file
 * @st:		its contents
 * @netns_path:	where the namespace is, or NULL for the path recorded in @st
 * @stop:	stop the recorded datapath first
 * @e:		error message
 *
 * Return: 0 (also when the namespace is gone: nothing to give back), or
 * -errno with the state file kept for a retry (-EHOSTUNREACH: its bind
 * mount is not in this mount namespace and no datapath holds it).
 */
int ns_give_back(const char *path, struct ns_state *st, const char *netns_path, bool stop,
		 struct ns_err *e)
{
	struct ns_netns ns = { .fd = -1 };
	struct ns_err ignored;
	struct nl_sock *sk = NULL;
	char fdpath[64];
	struct statfs sf;
	bool stale = false;
	int orig = -1, err, nsfd = -1;

	if (!netns_path || !netns_path[0])
		netns_path = st->netns_path[0] ? st->netns_path : NULL;
	if (!netns_path || ns_netns_open(netns_path, 0, false, &ns, &ignored) < 0 ||
	    (uint64_t)ns.dev != st->dev || (uint64_t)ns.ino != st->ino) {
		/* No path (any more): reach it through the datapath, while it lives. */
		stale = netns_path && statfs(netns_path, &sf) == 0 && sf.f_type != NSFS_MAGIC;
		ns_netns_close(&ns);
		nsfd = ns_datapath_netns_fd(st);
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", nsfd);
		netns_path = nsfd >= 0 ? fdpath : NULL;
	} else {
		ns_netns_close(&ns);
	}
	if (stop && ns_datapath_alive(st)) {
		err = ns_datapath_stop(st, 2000);
		if (err) {
			ns_err_set(e, "datapath pid %d does not stop, even with SIGKILL",
				   (int)st->datapath_pid);
			goto out;
		}
		fprintf(stderr, "netsetup: datapath (pid %d) stopped\n", (int)st->datapath_pid);
	}
	if (!netns_path && stale) {
		/*
		 * A file where the namespace was bound, but no namespace: the
		 * bind mount is in another mount namespace (an earlier start of
		 * a service's), and the namespace, which it keeps alive, may
		 * still be there. Not gone: the state stays for a retry.
		 */
		ns_err_set(e, "netns %s: cannot be reached (its bind mount is not in this mount namespace, and no "
			   "datapath holds it)", st->netns_path);
		err = -EHOSTUNREACH;
		goto out;
	}
	if (!netns_path || ns_netns_open(netns_path, 0, false, &ns, &ignored) < 0 ||
	    (uint64_t)ns.dev != st->dev || (uint64_t)ns.ino != st->ino) {
		/* The namespace is gone (or its path now names another): nothing to give back. */
		ns_netns_close(&ns);
		ns_state_files_remove(path);
		err = 0;
		goto out;
	}
	err = ns_netns_enter(&ns, &orig, e);
	if (!err)
		err = ns_nl_open(&sk, e);
	if (!err)
		err = ns_restore(sk, st, e);
	if (orig >= 0)
		ns_netns_leave(orig);
	if (sk)
		nl_socket_free(sk);
	ns_netns_close(&ns);
	if (!err)
		ns_state_files_remove(path);
out:
	if (nsfd >= 0)
		close(nsfd);
	return err;
}
