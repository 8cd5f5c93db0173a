// SPDX-License-Identifier: MIT
/*
 * takeover.c - take a link's addresses away from the kernel
 *
 * Theory of operation: while the kernel holds an address it answers the
 * container's traffic itself (RSTs, ICMP errors) next to the datapath. So
 * attach removes every IPv4/IPv6 address of the links it hands over, and stops
 * IPv6 autoconfiguration on them first so that nothing comes back: the
 * per-link sysctls accept_ra=0 and autoconf=0 (no SLAAC) and addr_gen_mode=1
 * (IN6_ADDR_GEN_MODE_NONE: no new link-local address on the next up).
 *
 * Everything needed to undo it is captured first, in a struct ns_state
 * (ns_takeover_prepare(); the caller writes it to disk, orch/state.c's
 * state file, before anything changes): the sysctl values, the addresses
 * with flags, lifetimes, peer and label, and the link's main-table routes,
 * which must be read before the addresses go because removing the last
 * IPv4 address of a link flushes all its IPv4 routes, gateway and default
 * routes included. ns_state_free() releases it, whoever made it.
 *
 * Giving it all back is restore.c's (ns_restore()); the calls that change
 * the namespace, in either direction, are netconf.c's.
 *
 * All functions here must be called inside the target namespace: the
 * rtnetlink socket is bound to it and /proc/sys/net resolves to the
 * namespace of the caller.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>

#include "netsetup/kernel/kernel_int.h"

#define IN6_ADDR_GEN_MODE_NONE_VAL 1

/**
 * ns_takeover_prepare() - capture what attach will take from the selected links
 * @net:	scraped namespace; links with ->selected set are taken
 * @ns:		the namespace (its identity keys the state)
 * @st:		filled; ns_state_free() it
 * @e:		error message
 *
 * Return: 0 or -ENOMEM.
 */
int ns_takeover_prepare(const struct ns_net *net, const struct ns_netns *ns,
			struct ns_state *st, struct ns_err *e)
{
	unsigned int i, j;

	memset(st, 0, sizeof(*st));
	st->dev = ns->dev;
	st->ino = ns->ino;
	st->links = calloc(net->n_links + 1, sizeof(*st->links));
	st->addrs = calloc(net->n_addrs + 1, sizeof(*st->addrs));
	st->routes = calloc(net->n_routes + 1, sizeof(*st->routes));
	if (!st->links || !st->addrs || !st->routes) {
		ns_state_free(st);
		ns_err_set(e, "takeover: out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < net->n_links; i++) {
		const struct ns_link *l = &net->links[i];
		struct ns_state_link *sl;

		if (!l->selected)
			continue;
		sl = &st->links[st->n_links++];
		sl->ifindex = l->ifindex;
		snprintf(sl->ifname, sizeof(sl->ifname), "%s", l->ifname);
		sl->addr_gen_mode = ns_sysctl6_read(l->ifname, "addr_gen_mode");
		sl->accept_ra = ns_sysctl6_read(l->ifname, "accept_ra");
		sl->autoconf = ns_sysctl6_read(l->ifname, "autoconf");
		for (j = 0; j < net->n_addrs; j++)
			if (net->addrs[j].ifindex == l->ifindex)
				st->addrs[st->n_addrs++] = net->addrs[j];
		for (j = 0; j < net->n_routes; j++)
			if (net->routes[j].ifindex == l->ifindex)
				st->routes[st->n_routes++] = net->routes[j];
	}
	return 0;
}

/**
 * ns_takeover() - stop autoconf and remove the addresses captured in @st
 * @sk:		rtnetlink socket in the namespace
 * @st:		from ns_takeover_prepare(), already written to disk
 * @e:		error message
 *
 * It stops at the first failure; the caller then gives back with
 * ns_restore(), which copes with any prefix of this having been done, and
 * keeps the state file when that fails too.
 *
 * Return: 0 or -errno.
 */
int ns_takeover(struct nl_sock *sk, const struct ns_state *st, struct ns_err *e)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < st->n_links && !err; i++) {
		const struct ns_state_link *sl = &st->links[i];

		if (sl->accept_ra >= 0)
			err = ns_sysctl6_write(sl->ifname, "accept_ra", 0, e);
		if (!err && sl->autoconf >= 0)
			err = ns_sysctl6_write(sl->ifname, "autoconf", 0, e);
		if (!err && sl->addr_gen_mode >= 0)
			err = ns_sysctl6_write(sl->ifname, "addr_gen_mode", IN6_ADDR_GEN_MODE_NONE_VAL, e);
	}
	/* Backwards: IPv4 secondaries go before their primary. */
	for (i = st->n_addrs; i-- > 0 && !err;) {
		const struct ns_addr *ad = &st->addrs[i];
		struct rtnl_addr *ra = ns_addr_build(ad);
		char name[64];
		int nerr;

		if (!ra) {
			ns_err_set(e, "takeover: out of memory");
			err = -ENOMEM;
			break;
		}
		nerr = rtnl_addr_delete(sk, ra, 0);
		rtnl_addr_put(ra);
		/* Already gone: a primary's removal took its secondaries. */
		if (nerr < 0 && nerr != -NLE_NOADDR && nerr != -NLE_OBJ_NOTFOUND) {
			ns_addr_name(ad, name, sizeof(name));
			ns_err_set(e, "link %s: removing address %s: %s", ns_state_ifname(st, ad->ifindex), name,
				   nl_geterror(nerr));
			err = nerr == -NLE_PERM ? -EPERM : -EIO;
		}
	}
	return err;
}

/**
 * ns_state_free() - release a parsed or built state
 * @st:		emptied
 */
void ns_state_free(struct ns_state *st)
{
	free(st->links);
	free(st->addrs);
	free(st->routes);
	memset(st, 0, sizeof(*st));
}
