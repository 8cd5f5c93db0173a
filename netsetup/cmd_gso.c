// SPDX-License-Identifier: MIT
/*
 * cmd_gso.c - `netsetup gso show`: what attach would do, changing nothing
 *
 * Theory of operation: enter the namespace (or stay in our own when none is
 * given: reading needs no privilege), probe it exactly as attach does with
 * --gso auto, return, and print one record per link through output.c. The
 * JSON keys are those of `ip -d -j link` (ifname, ifindex, mtu, operstate,
 * gso_max_size, ...) plus features (ethtool name -> bool), mode, reason and,
 * for a link attach would leave alone, skipped. Reading the host's own
 * namespace is allowed here: nothing is changed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "netsetup/netsetup.h"

static void print_link(struct ns_out *o, const struct ns_link *l)
{
	char fmt[64];
	int i;

	ns_out_open(o, NULL, false);
	ns_out_uint(o, "ifindex", "%llu: ", l->ifindex);
	ns_out_str(o, "ifname", "%s: ", l->ifname);
	ns_out_uint(o, "mtu", "mtu %llu ", l->mtu);
	ns_out_str(o, "operstate", "state %s\n", ns_operstate_name(l->operstate));
	ns_out_open(o, "features", false);
	if (l->feat.known) {
		for (i = 0; i < NS_FEAT_MAX; i++) {
			snprintf(fmt, sizeof(fmt), "    %s: %%s\n", ns_feature_names[i]);
			ns_out_bool(o, ns_feature_names[i], fmt, l->feat.on[i]);
		}
	} else {
		ns_out_text(o, "    features: unknown\n");
	}
	ns_out_close(o, false);
	ns_out_uint(o, "gso_max_size", "    gso_max_size %llu", l->gso_max_size);
	ns_out_uint(o, "gso_ipv4_max_size", " gso_ipv4_max_size %llu", l->gso_ipv4_max_size);
	ns_out_uint(o, "gso_max_segs", " gso_max_segs %llu", l->gso_max_segs);
	ns_out_uint(o, "tso_max_size", " tso_max_size %llu", l->tso_max_size);
	ns_out_uint(o, "gro_max_size", " gro_max_size %llu\n", l->gro_max_size);
	ns_out_str(o, "mode", "    mode %s", proto_gso_mode_name(l->mode));
	ns_out_str(o, "reason", " (%s)\n", l->reason);
	ns_out_uint(o, "frame_max_bytes", "    frame limit %llu", l->frame_max_bytes);
	ns_out_uint(o, "frame_max_ipv4_bytes", " ipv4 %llu\n", l->frame_max_ipv4_bytes);
	if (l->skip[0])
		ns_out_str(o, "skipped", "    attach skips it: %s\n", l->skip);
	ns_out_close(o, false);
}

/**
 * ns_cmd_gso_show() - `netsetup gso show`
 * @o:		parsed options
 * @out:	where to print
 * @e:		error message
 *
 * Return: 0 or -errno.
 */
int ns_cmd_gso_show(const struct ns_opts *o, FILE *out, struct ns_err *e)
{
	struct ns_netns ns = { .fd = -1, .name = "(own)" };
	struct nl_sock *sk = NULL;
	struct ns_net net = { 0 };
	struct ns_out po;
	unsigned int i, shown = 0;
	int orig = -1, err;

	if (o->netns_path || o->pid) {
		err = ns_caps_check(false, e);
		if (err)
			return err;
		err = ns_netns_open(o->netns_path, o->pid, true, &ns, e);
		if (err)
			return err;
		err = ns_privs_keep(NS_PRIVS_GSO_SHOW, "gso show", e);
		if (!err)
			err = ns_netns_enter(&ns, &orig, e);
		if (err)
			goto out;
	}
	err = ns_nl_open(&sk, e);
	if (!err)
		err = ns_probe(sk, &net, NS_GSO_AUTO, 0, e);
	if (orig >= 0 && ns_netns_leave(orig) < 0 && !err) {
		ns_err_set(e, "cannot return to our own netns");
		err = -EIO;
	}
	/* Reading needs no capability; printing certainly not. */
	if (!err)
		err = ns_privs_keep(0, "gso show", e);
	if (err)
		goto out;
	if (o->show_iface && !ns_net_link(&net, o->show_iface)) {
		ns_err_set(e, "link %s: no such link in netns %s", o->show_iface, ns.name);
		err = -ENODEV;
		goto out;
	}
	ns_out_init(&po, out, o->json);
	ns_out_open(&po, NULL, true);
	for (i = 0; i < net.n_links; i++) {
		if (o->show_iface && strcmp(o->show_iface, net.links[i].ifname))
			continue;
		if (shown++)
			ns_out_text(&po, "\n");
		print_link(&po, &net.links[i]);
	}
	ns_out_close(&po, true);
	ns_out_end(&po);
out:
	if (sk)
		nl_socket_free(sk);
	ns_net_free(&net);
	ns_netns_close(&ns);
	return err;
}
