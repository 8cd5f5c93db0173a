// SPDX-License-Identifier: MIT
/*
 * probe.c - scrape, read features, decide, select: everything read-only
 *
 * Theory of operation: `gso show` and `attach` look at a namespace the same
 * way, so they share this: ns_probe() scrapes (scrape.c), reads each link's
 * offload features (ethtool.c) and decides its GSO mode for the request
 * (gso.c); ns_select() marks the links attach will take: the ones named with
 * --iface, or every usable one (not loopback, up, Ethernet). Nothing here
 * changes the namespace; the caller has entered it.
 */
#include <errno.h>
#include <string.h>

#include "netsetup/kernel/kernel_int.h"

/**
 * ns_probe() - scrape the namespace and decide each link's GSO mode
 * @sk:		rtnetlink socket inside the namespace
 * @net:	filled; ns_net_free() it
 * @req:	requested GSO mode (a refused hw shows in ->mode_refused)
 * @user_max_bytes: --gso-max-size or 0
 * @e:		error message
 *
 * A link whose features cannot be read is kept with feat.known false (its
 * mode then says why); only the scrape itself can fail.
 *
 * Return: 0 or -errno.
 */
int ns_probe(struct nl_sock *sk, struct ns_net *net, enum ns_gso_request req,
	     uint32_t user_max_bytes, struct ns_err *e)
{
	unsigned int i;
	int err;

	err = ns_scrape(sk, net, e);
	if (err)
		return err;
	for (i = 0; i < net->n_links; i++) {
		struct ns_link *l = &net->links[i];
		struct ns_err fe = { .text = "" };

		ns_ethtool_features(l->ifindex, l->ifname, &l->feat, &fe);
		ns_gso_decide(l, req, user_max_bytes);
	}
	return 0;
}

/**
 * ns_select() - mark the links attach takes
 * @net:	probed namespace
 * @ifaces:	--iface names, or none for every usable link
 * @n_ifaces:	how many
 * @nsname:	the namespace, for messages
 * @e:		error message
 *
 * Return: the number of selected links, or -ENODEV (unknown --iface, or
 * none usable), -ENONET (no link but loopback: nothing to serve),
 * -ENETDOWN (an --iface that cannot be served),
 * -EOPNOTSUPP (a selected link refused the requested GSO mode).
 */
int ns_select(struct ns_net *net, const char *const *ifaces, unsigned int n_ifaces,
	      const char *nsname, struct ns_err *e)
{
	char skipped[256] = "";
	unsigned int i, n = 0, n_real = 0;
	size_t used;

	for (i = 0; i < n_ifaces; i++) {
		struct ns_link *l = ns_net_link(net, ifaces[i]);

		if (!l) {
			ns_err_set(e, "--iface %s: no such link in netns %s", ifaces[i], nsname);
			return -ENODEV;
		}
		if (l->skip[0]) {
			ns_err_set(e, "--iface %s: cannot be served: %s", ifaces[i], l->skip);
			return -ENETDOWN;
		}
		l->selected = true;
	}
	for (i = 0; i < net->n_links; i++) {
		struct ns_link *l = &net->links[i];

		if (!n_ifaces && !l->skip[0])
			l->selected = true;
		n_real += !l->loopback;
		if (l->skip[0]) {
			used = strlen(skipped);
			snprintf(skipped + used, sizeof(skipped) - used, "%s%s: %s", used ? ", " : "",
				 l->ifname, l->skip);
		}
		if (!l->selected)
			continue;
		if (l->mode_refused) {
			ns_err_set(e, "link %s: %s", l->ifname, l->reason);
			return -EOPNOTSUPP;
		}
		n++;
	}
	if (!n) {
		ns_err_set(e, "netns %s: no usable link (%s)", nsname, skipped[0] ? skipped : "no links");
		return n_real ? -ENODEV : -ENONET;
	}
	if (n > PROTO_MAX_LINKS) {
		ns_err_set(e, "netns %s: %u links, more than the %d the protocol carries; choose with --iface",
			   nsname, n, PROTO_MAX_LINKS);
		return -E2BIG;
	}
	return n;
}
