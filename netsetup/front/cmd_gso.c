// SPDX-License-Identifier: MIT
/*
 * cmd_gso.c - `netsetup gso show`: what attach would do, changing nothing
 *
 * Theory of operation: enter the namespace (or stay in our own when none is
 * given: reading needs no privilege), probe it exactly as attach does with
 * --gso auto, return, and print one record per link through common/out.c
 * (a formatted printer). The JSON keys are those of `ip -d -j link` (ifname, ifindex, mtu, operstate,
 * gso_max_size, ...) plus features (ethtool name -> bool), mode, reason and,
 * for a link attach would leave alone, skipped. Reading the host's own
 * namespace is allowed here: nothing is changed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "common/out.h"
#include "netsetup/front/front.h"

static void print_link(struct out *o, const struct ns_link *l)
{
	char fmt[64];
	int i;

	out_obj_begin(o, NULL);
	out_u64f(o, "ifindex", "%llu: ", l->ifindex);
	out_strf(o, "ifname", "%s: ", l->ifname);
	out_u64f(o, "mtu", "mtu %llu ", l->mtu);
	out_strf(o, "operstate", "state %s\n", ns_operstate_name(l->operstate));
	out_obj_begin(o, "features");
	if (l->feat.known) {
		for (i = 0; i < NS_FEAT_MAX; i++) {
			snprintf(fmt, sizeof(fmt), "    %s: %%s\n", ns_feature_names[i]);
			out_boolf(o, ns_feature_names[i], fmt, l->feat.on[i]);
		}
	} else {
		out_text(o, "    features: unknown\n");
	}
	out_obj_end(o);
	out_u64f(o, "gso_max_size", "    gso_max_size %llu", l->gso_max_size);
	out_u64f(o, "gso_ipv4_max_size", " gso_ipv4_max_size %llu", l->gso_ipv4_max_size);
	out_u64f(o, "gso_max_segs", " gso_max_segs %llu", l->gso_max_segs);
	out_u64f(o, "tso_max_size", " tso_max_size %llu", l->tso_max_size);
	out_u64f(o, "gro_max_size", " gro_max_size %llu\n", l->gro_max_size);
	out_strf(o, "mode", "    mode %s", proto_gso_mode_name(l->mode));
	out_strf(o, "reason", " (%s)\n", l->reason);
	out_u64f(o, "frame_max_bytes", "    frame limit %llu", l->frame_max_bytes);
	out_u64f(o, "frame_max_ipv4_bytes", " ipv4 %llu\n", l->frame_max_ipv4_bytes);
	if (l->skip[0])
		out_strf(o, "skipped", "    attach skips it: %s\n", l->skip);
	out_obj_end(o);
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
	struct out po;
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
	out_init_formatted(&po, out, o->json);
	out_arr_begin(&po, NULL);
	for (i = 0; i < net.n_links; i++) {
		if (o->show_iface && strcmp(o->show_iface, net.links[i].ifname))
			continue;
		if (shown++)
			out_text(&po, "\n");
		print_link(&po, &net.links[i]);
	}
	out_arr_end(&po);
	out_finish(&po);
out:
	if (sk)
		nl_socket_free(sk);
	ns_net_free(&net);
	ns_netns_close(&ns);
	return err;
}
