// SPDX-License-Identifier: MIT
/*
 * restore.c - give a namespace back to its kernel: everything a takeover
 * and the container face changed, undone
 *
 * Theory of operation: ns_restore() is the undoing half of takeover.c and
 * face.c, run inside the namespace with an rtnetlink socket bound to it,
 * from what struct ns_state recorded before anything changed:
 *   a. the container face: the TUN goes (its addresses and routes with it),
 *      the nftables table, disable_ipv6 back;
 *   b. the addresses, with their flags, lifetimes, peer, broadcast and label
 *      (IPv4 in dump order, IPv6 backwards);
 *   c. each link's main-table routes made equal to the saved set;
 *   d. the sysctls (addr_gen_mode last: switching it back may make the
 *      kernel regenerate the link-local address, which then exists).
 * A link the runtime already removed is skipped with a note. ns_restore() is
 * idempotent, keeps going after a failed step and reports the first failure,
 * so that it copes with any prefix of a takeover having been done. The calls
 * that change the namespace are netconf.c's. When to give back, and the
 * sequence around it (stopping the datapath, finding the namespace, the
 * state file), is the caller's: the orchestration's giveback.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "netsetup/kernel/kernel_int.h"

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

