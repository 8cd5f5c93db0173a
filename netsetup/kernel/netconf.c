// SPDX-License-Identifier: MIT
/*
 * netconf.c - a namespace's settings, one call each: per-link IPv6 sysctls,
 * addresses and routes (rtnetlink, libnl-route-3), nftables commands
 * (libnftables)
 *
 * Theory of operation: attach (takeover.c, face.c) and give-back
 * (restore.c) change the same few things in a container's namespace, in
 * opposite directions. The calls that change them live here, once: a sysctl
 * of /proc/sys/net/ipv6/conf/IF, an address added exactly as the kernel had
 * it, a link's route set made equal to a recorded one, an nftables
 * transaction. None of them decides anything: the order and what to do after
 * a failure are the callers'.
 *
 * All functions here must be called inside the target namespace: the
 * rtnetlink socket is bound to it, /proc/sys/net resolves to the namespace
 * of the caller, and libnftables works in the caller's namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <nftables/libnftables.h>

#include "netsetup/kernel/kernel_int.h"

#define RESTORE_PASSES 3

static int sysctl_path(const char *ifname, const char *key, char *buf, size_t size)
{
	int n = snprintf(buf, size, "/proc/sys/net/ipv6/conf/%s/%s", ifname, key);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/**
 * ns_sysctl6_read() - /proc/sys/net/ipv6/conf/IFNAME/KEY
 * Return: the value, -1 when the file does not exist (no IPv6 on the link).
 */
int ns_sysctl6_read(const char *ifname, const char *key)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	if (sysctl_path(ifname, key, path, sizeof(path)))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atoi(buf);
}

/**
 * ns_sysctl6_write() - set /proc/sys/net/ipv6/conf/IFNAME/KEY
 * @val:	the value; negative (not recorded) writes nothing
 * @e:		error message, or NULL
 *
 * Return: 0 or -errno.
 */
int ns_sysctl6_write(const char *ifname, const char *key, int val, struct ns_err *e)
{
	char path[128], buf[32];
	int fd, n, err = 0;

	if (val < 0)
		return 0;
	if (sysctl_path(ifname, key, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", val);
	if (write(fd, buf, n) != n)
		err = errno ? -errno : -EIO;
	close(fd);
out:
	if (err)
		ns_err_set(e, "link %s: writing %s: %s", ifname, path, strerror(-err));
	return err;
}

static struct nl_addr *nl_addr_of(int family, const union proto_inaddr *a, unsigned int plen)
{
	struct nl_addr *na = nl_addr_build(family, a->bytes, family == AF_INET ? 4 : 16);

	if (na)
		nl_addr_set_prefixlen(na, plen);
	return na;
}

/**
 * ns_addr_build() - a libnl address object for a recorded address
 * @ad:		the address (link, local, prefix length, peer)
 *
 * Return: the object (rtnl_addr_put() it), or NULL when out of memory.
 */
struct rtnl_addr *ns_addr_build(const struct ns_addr *ad)
{
	unsigned int plen = ad->a.prefixlen;
	struct rtnl_addr *ra = rtnl_addr_alloc();
	struct nl_addr *local = NULL, *peer = NULL;

	if (!ra)
		return NULL;
	local = nl_addr_of(ad->a.family, &ad->a.addr, plen);
	if (!local)
		goto err;
	rtnl_addr_set_ifindex(ra, ad->ifindex);
	rtnl_addr_set_family(ra, ad->a.family);
	if (rtnl_addr_set_local(ra, local) < 0)
		goto err;
	if (ad->has_peer) {
		peer = nl_addr_of(ad->a.family, &ad->peer, plen);
		if (!peer || rtnl_addr_set_peer(ra, peer) < 0)
			goto err;
	}
	rtnl_addr_set_prefixlen(ra, plen);
	nl_addr_put(peer);	/* the object holds its own references */
	nl_addr_put(local);
	return ra;
err:
	nl_addr_put(peer);
	nl_addr_put(local);
	rtnl_addr_put(ra);
	return NULL;
}

/**
 * ns_addr_name() - "ADDRESS/PREFIXLEN" of a recorded address, for messages
 * @ad:		the address
 * @buf:	receives the text
 * @size:	size of @buf
 */
void ns_addr_name(const struct ns_addr *ad, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(ad->a.family, ad->a.addr.bytes, ip, sizeof(ip));
	snprintf(buf, size, "%s/%u", ip, ad->a.prefixlen);
}

/**
 * ns_state_ifname() - the name a state recorded for a link index, for messages
 * @st:		the state
 * @ifindex:	the link
 *
 * Return: its name, or "?".
 */
const char *ns_state_ifname(const struct ns_state *st, int ifindex)
{
	unsigned int i;

	for (i = 0; i < st->n_links; i++)
		if (st->links[i].ifindex == ifindex)
			return st->links[i].ifname;
	return "?";
}

/**
 * ns_addr_add() - add a recorded address with its flags, lifetimes, peer,
 * broadcast and label
 * @sk:		rtnetlink socket in the namespace
 * @st:		the state (link names, for messages)
 * @ad:		the address
 * @e:		error message, or NULL
 *
 * An address already there is success.
 *
 * Return: 0 or -errno.
 */
int ns_addr_add(struct nl_sock *sk, const struct ns_state *st, const struct ns_addr *ad,
			struct ns_err *e)
{
	struct rtnl_addr *ra = ns_addr_build(ad);
	char name[64];
	int err;

	if (!ra)
		return -ENOMEM;
	rtnl_addr_set_scope(ra, ad->a.scope);
	rtnl_addr_set_flags(ra, ad->a.flags & ~(IFA_F_TENTATIVE | IFA_F_DADFAILED |
						IFA_F_SECONDARY | IFA_F_DEPRECATED | IFA_F_OPTIMISTIC));
	rtnl_addr_set_valid_lifetime(ra, ad->valid_lft);
	rtnl_addr_set_preferred_lifetime(ra, ad->preferred_lft);
	if (ad->label[0])
		rtnl_addr_set_label(ra, ad->label);
	if (ad->has_broadcast) {
		struct nl_addr *brd = nl_addr_of(AF_INET, &ad->broadcast, 32);

		if (!brd || rtnl_addr_set_broadcast(ra, brd) < 0) {
			nl_addr_put(brd);
			rtnl_addr_put(ra);
			return -ENOMEM;
		}
		nl_addr_put(brd);
	}
	err = rtnl_addr_add(sk, ra, NLM_F_EXCL);
	rtnl_addr_put(ra);
	if (err == -NLE_EXIST)
		return 0;
	if (err < 0) {
		ns_addr_name(ad, name, sizeof(name));
		ns_err_set(e, "link %s: giving back address %s: %s", ns_state_ifname(st, ad->ifindex), name,
			   nl_geterror(err));
		return -EIO;
	}
	return 0;
}

static struct rtnl_route *route_build(const struct ns_route *r)
{
	struct rtnl_route *rr = rtnl_route_alloc();
	struct rtnl_nexthop *nh = NULL;
	struct nl_addr *dst = NULL, *gw = NULL, *src = NULL;

	if (!rr)
		return NULL;
	dst = nl_addr_of(r->r.family, &r->r.dst, r->r.dst_len);
	if (!dst)
		goto err;
	rtnl_route_set_family(rr, r->r.family);
	rtnl_route_set_table(rr, r->table);
	if (rtnl_route_set_dst(rr, dst) < 0)
		goto err;
	rtnl_route_set_priority(rr, r->r.metric);
	rtnl_route_set_protocol(rr, r->protocol);
	if (r->r.family == AF_INET)
		rtnl_route_set_scope(rr, r->scope);
	rtnl_route_set_type(rr, r->type);
	if (r->has_prefsrc) {
		src = nl_addr_of(r->r.family, &r->prefsrc, r->r.family == AF_INET ? 32 : 128);
		if (!src || rtnl_route_set_pref_src(rr, src) < 0)
			goto err;
	}
	nh = rtnl_route_nh_alloc();
	if (!nh)
		goto err;
	rtnl_route_nh_set_ifindex(nh, r->ifindex);
	if (r->r.has_gateway) {
		gw = nl_addr_of(r->r.family, &r->r.gateway, r->r.family == AF_INET ? 32 : 128);
		if (!gw)
			goto err;
		rtnl_route_nh_set_gateway(nh, gw);
	}
	rtnl_route_add_nexthop(rr, nh);
	nh = NULL;
	if (r->initcwnd && rtnl_route_set_metric(rr, RTAX_INITCWND, r->initcwnd) < 0)
		goto err;
	nl_addr_put(gw);
	nl_addr_put(src);
	nl_addr_put(dst);
	return rr;
err:
	if (nh)
		rtnl_route_nh_free(nh);
	nl_addr_put(gw);
	nl_addr_put(src);
	nl_addr_put(dst);
	rtnl_route_put(rr);
	return NULL;
}

static bool route_equal(const struct ns_route *a, const struct ns_route *b)
{
	size_t alen = a->r.family == AF_INET ? 4 : 16;

	return a->ifindex == b->ifindex && a->r.family == b->r.family &&
	       a->r.dst_len == b->r.dst_len && !memcmp(a->r.dst.bytes, b->r.dst.bytes, alen) &&
	       a->r.has_gateway == b->r.has_gateway &&
	       (!a->r.has_gateway || !memcmp(a->r.gateway.bytes, b->r.gateway.bytes, alen)) &&
	       a->r.metric == b->r.metric && a->table == b->table && a->type == b->type &&
	       a->protocol == b->protocol && a->has_prefsrc == b->has_prefsrc &&
	       (!a->has_prefsrc || !memcmp(a->prefsrc.bytes, b->prefsrc.bytes, alen)) &&
	       (a->r.family != AF_INET || a->scope == b->scope) && a->initcwnd == b->initcwnd;
}

static bool route_in(const struct ns_route *r, const struct ns_route *set, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (route_equal(r, &set[i]))
			return true;
	return false;
}

static void route_name(const struct ns_route *r, char *buf, size_t size)
{
	char dst[INET6_ADDRSTRLEN] = "default", gw[INET6_ADDRSTRLEN] = "";

	if (r->r.dst_len)
		inet_ntop(r->r.family, r->r.dst.bytes, dst, sizeof(dst));
	if (r->r.has_gateway)
		inet_ntop(r->r.family, r->r.gateway.bytes, gw, sizeof(gw));
	if (r->r.dst_len)
		snprintf(buf, size, "%s/%u%s%s", dst, r->r.dst_len, gw[0] ? " via " : "", gw);
	else
		snprintf(buf, size, "default%s%s", gw[0] ? " via " : "", gw);
}

/**
 * ns_routes_set() - make one link's main-table routes equal the ones @st saved for it
 * @sk:		rtnetlink socket in the namespace
 * @st:		the state: its routes of @ifindex are the wanted set
 * @ifindex:	the link
 * @e:		the first failure, or NULL
 *
 * Routes the kernel made that are not in the set go (the prefix route a CNI
 * ptp plugin had removed), missing ones come, on-link before gateway routes,
 * in up to RESTORE_PASSES passes while progress is made, so that a gateway
 * reachable only through another route still lands.
 *
 * Return: 0 or the first -errno.
 */
int ns_routes_set(struct nl_sock *sk, const struct ns_state *st, int ifindex, struct ns_err *e)
{
	struct ns_route *cur = NULL;
	unsigned int n_cur = 0, i, pass;
	bool *done = NULL;
	char name[128];
	int err, first_err = 0;

	err = ns_scrape_routes(sk, ifindex, &cur, &n_cur, e);
	if (err)
		return err;
	for (i = 0; i < n_cur; i++) {
		struct rtnl_route *rr;

		if (route_in(&cur[i], st->routes, st->n_routes))
			continue;
		rr = route_build(&cur[i]);
		if (!rr) {
			err = -ENOMEM;
			goto out;
		}
		err = rtnl_route_delete(sk, rr, 0);
		rtnl_route_put(rr);
		if (err < 0 && err != -NLE_OBJ_NOTFOUND && !first_err) {
			route_name(&cur[i], name, sizeof(name));
			ns_err_set(e, "link %s: removing route %s the kernel re-created: %s",
				   ns_state_ifname(st, ifindex), name, nl_geterror(err));
			first_err = -EIO;
		}
	}
	done = calloc(st->n_routes + 1, sizeof(*done));
	if (!done) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * On-link routes first, then gateway routes; passes repeat while some
	 * route fails and another one landed (a gateway reachable only through
	 * a route added in the same pass).
	 */
	for (pass = 0; pass < RESTORE_PASSES; pass++) {
		const struct ns_route *failed = NULL;
		bool progress = false;
		int failed_err = 0;

		for (int gwpass = 0; gwpass < 2; gwpass++) {
			for (i = 0; i < st->n_routes; i++) {
				const struct ns_route *r = &st->routes[i];
				struct rtnl_route *rr;

				if (done[i] || r->ifindex != ifindex || r->r.has_gateway != (gwpass == 1))
					continue;
				if (route_in(r, cur, n_cur)) {
					done[i] = true;
					continue;
				}
				rr = route_build(r);
				if (!rr) {
					err = -ENOMEM;
					goto out;
				}
				/*
				 * Not NLM_F_EXCL: with it the kernel refuses a
				 * route whose destination and metric another
				 * link's route has (IPv6 always, IPv4 too), so
				 * a second face would go without fe80::/64. The
				 * same route on the same link is still EEXIST.
				 */
				err = rtnl_route_add(sk, rr, 0);
				rtnl_route_put(rr);
				if (err >= 0 || err == -NLE_EXIST) {
					done[i] = true;
					progress = true;
				} else {
					failed = r;
					failed_err = err;
				}
			}
		}
		if (!failed)
			break;
		if (!progress || pass == RESTORE_PASSES - 1) {
			if (!first_err) {
				route_name(failed, name, sizeof(name));
				ns_err_set(e, "link %s: giving back route %s: %s", ns_state_ifname(st, ifindex),
					   name, nl_geterror(failed_err));
				first_err = -EIO;
			}
			break;
		}
	}
	err = first_err;
out:
	if (err == -ENOMEM)
		ns_err_set(e, "restore: out of memory");
	free(done);
	free(cur);
	return err;
}

/**
 * ns_addrs_copy() - put a link's saved addresses on another link (the face's TUN)
 * @sk:		rtnetlink socket in the namespace
 * @st:		the state
 * @from:	the link whose addresses @st saved
 * @to:		the link that gets them
 * @to_name:	its name, for messages
 * @e:		error message
 *
 * IPv6 addresses go without DAD (IFA_F_NODAD): nobody else is on @to.
 * Labels stay behind (they name @from).
 *
 * Return: 0 or -errno.
 */
int ns_addrs_copy(struct nl_sock *sk, const struct ns_state *st, int from, int to, const char *to_name,
		  struct ns_err *e)
{
	unsigned int i;
	int err;

	/* IPv4 primaries first, as dumped; IPv6 backwards, as ns_restore() does */
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < st->n_addrs; i++) {
			struct ns_addr ad = st->addrs[pass ? st->n_addrs - 1 - i : i];
			char name[64];

			if (ad.ifindex != from || ad.a.family != (pass ? AF_INET6 : AF_INET))
				continue;
			ad.ifindex = to;
			ad.label[0] = '\0';
			if (ad.a.family == AF_INET6)
				ad.a.flags |= IFA_F_NODAD;
			err = ns_addr_add(sk, st, &ad, NULL);
			if (err) {
				ns_addr_name(&ad, name, sizeof(name));
				ns_err_set(e, "face %s: adding address %s failed", to_name, name);
				return err;
			}
		}
	}
	return 0;
}

/**
 * ns_routes_copy() - make another link's main-table routes the saved ones of @from
 * @sk:		rtnetlink socket in the namespace
 * @st:		the state
 * @from:	the link whose routes @st saved
 * @to:		the link that gets them (the face's TUN, its addresses in place)
 * @to_name:	its name, for messages
 * @e:		error message
 *
 * The same as giving the routes back to @from (ns_routes_set()), on @to:
 * routes the kernel made on @to for its addresses but @from did not have
 * (a prefix route a CNI plugin had replaced) go, the saved ones come, on-link
 * before gateway routes. With @initcwnd, every route on @to carries it as
 * its initial congestion window: the kernel's own prefix routes, made
 * without it, are deleted and made again with it. (Not NLM_F_REPLACE: a
 * replace takes the first route with the same destination and metric,
 * whichever link it is on.)
 *
 * Return: 0 or -errno.
 */
int ns_routes_copy(struct nl_sock *sk, const struct ns_state *st, int from, int to, const char *to_name,
		   uint32_t initcwnd, struct ns_err *e)
{
	struct ns_state_link link = { .ifindex = to };
	struct ns_state map = { .links = &link, .n_links = 1 };
	unsigned int i;
	int err;

	snprintf(link.ifname, sizeof(link.ifname), "%s", to_name);
	map.routes = calloc(st->n_routes + 1, sizeof(*map.routes));
	if (!map.routes) {
		ns_err_set(e, "face %s: out of memory", to_name);
		return -ENOMEM;
	}
	for (i = 0; i < st->n_routes; i++) {
		if (st->routes[i].ifindex != from)
			continue;
		map.routes[map.n_routes] = st->routes[i];
		map.routes[map.n_routes].initcwnd = initcwnd;
		map.routes[map.n_routes++].ifindex = to;
	}
	err = ns_routes_set(sk, &map, to, e);
	free(map.routes);
	return err;
}

/**
 * ns_link_gone() - the link a state entry names no longer exists
 * @sl:		the entry; checked in the current namespace
 *
 * A runtime may tear the network down before it tells us (podman deletes
 * the CNI interface, or slirp4netns's tap, before its poststop hook): what
 * was taken from a link that is gone has nobody to go back to.
 *
 * Return: true when no link has the entry's index and name.
 */
bool ns_link_gone(const struct ns_state_link *sl)
{
	char name[IF_NAMESIZE];

	return !if_indextoname((unsigned int)sl->ifindex, name) || strcmp(name, sl->ifname);
}

/**
 * ns_nft_run() - run nftables commands in the current namespace, as one transaction
 * @cmd:	the commands, in nft's syntax
 * @ifname:	the link they are about, for messages
 * @what:	what they do, for messages ("keeping the kernel off the link")
 * @e:		error message (nft's first line), or NULL
 *
 * Return: 0 or -errno.
 */
int ns_nft_run(const char *cmd, const char *ifname, const char *what, struct ns_err *e)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	const char *msg;
	int ret;

	if (!nft) {
		ns_err_set(e, "link %s: %s: nftables: out of memory", ifname, what);
		return -ENOMEM;
	}
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	ret = nft_run_cmd_from_buffer(nft, cmd);
	if (ret) {
		msg = nft_ctx_get_error_buffer(nft);
		ns_err_set(e, "link %s: %s: nftables: %.*s", ifname, what,
			   msg ? (int)strcspn(msg, "\n") : 0, msg ? msg : "");
	}
	nft_ctx_free(nft);
	return ret ? -EIO : 0;
}
