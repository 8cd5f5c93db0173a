// SPDX-License-Identifier: MIT
/*
 * scrape.c - read a network namespace's configuration over rtnetlink
 *
 * Theory of operation: the caller has entered the target namespace and opened
 * a NETLINK_ROUTE socket there (ns_nl_open()); the socket stays bound to that
 * namespace afterwards. With libnl-route-3 caches we read, in this order:
 *   - links: index, name, MAC, MTU, flags, operstate, gso_max_size/segs;
 *     libnl 3.7 has no getters for IFLA_GSO_IPV4_MAX_SIZE, IFLA_TSO_MAX_SIZE
 *     and IFLA_GRO_MAX_SIZE, so one more RTM_GETLINK dump is parsed with
 *     nlmsg_parse() for those;
 *   - IPv4/IPv6 addresses (link-local included), with lifetimes and labels
 *     so that they can be given back exactly;
 *   - main-table routes of both families with one nexthop (routes must be
 *     read BEFORE the addresses go: removing an address drops its routes);
 *     multipath routes are counted in n_routes_skipped, not served;
 *   - permanent neighbours.
 * Everything lands in a struct ns_net of plain arrays; nothing here changes
 * the namespace. Loopback and down links are kept but marked with ->skip, so
 * that `gso show` can still list them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if_arp.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/neighbour.h>

#include "netsetup/kernel/kernel_int.h"

/* Missing from Debian 12's linux/if_link.h (docs/netsetup.md). */
#define NS_IFLA_GSO_IPV4_MAX_SIZE	63
#define NS_IFLA_PARSE_MAX		70

static void *grow(void *arr, unsigned int n, size_t size)
{
	return reallocarray(arr, n + 1, size);
}

/**
 * ns_nl_open() - open a NETLINK_ROUTE socket in the current namespace
 * @skp:	receives the socket; nl_socket_free() it
 * @e:		error message
 *
 * Return: 0 or -errno.
 */
int ns_nl_open(struct nl_sock **skp, struct ns_err *e)
{
	struct nl_sock *sk;
	int err;

	sk = nl_socket_alloc();
	if (!sk) {
		ns_err_set(e, "rtnetlink: out of memory");
		return -ENOMEM;
	}
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err < 0) {
		ns_err_set(e, "rtnetlink: connect: %s", nl_geterror(err));
		nl_socket_free(sk);
		return -EIO;
	}
	*skp = sk;
	return 0;
}

/**
 * ns_operstate_name() - operstate as `ip -j link` spells it
 * @operstate:	IF_OPER_*
 *
 * Return: "UP", "DOWN", "UNKNOWN", ...
 */
const char *ns_operstate_name(uint8_t operstate)
{
	static const char *const names[] = {
		"UNKNOWN", "NOTPRESENT", "DOWN", "LOWERLAYERDOWN", "TESTING", "DORMANT", "UP",
	};

	return operstate < sizeof(names) / sizeof(names[0]) ? names[operstate] : "UNKNOWN";
}

/* A private copy of the socket's callbacks (nl_socket_get_cb() adds a reference). */
static struct nl_cb *sk_cb_clone(struct nl_sock *sk)
{
	struct nl_cb *orig = nl_socket_get_cb(sk);
	struct nl_cb *cb = nl_cb_clone(orig);

	nl_cb_put(orig);
	return cb;
}

static void addr_copy(union proto_inaddr *dst, struct nl_addr *a)
{
	unsigned int len;

	memset(dst, 0, sizeof(*dst));
	if (!a)
		return;
	len = nl_addr_get_len(a);
	if (len == 4 || len == 16)
		memcpy(dst->bytes, nl_addr_get_binary_addr(a), len);
}

static struct ns_link *link_by_index(struct ns_net *net, int ifindex)
{
	unsigned int i;

	for (i = 0; i < net->n_links; i++)
		if (net->links[i].ifindex == ifindex)
			return &net->links[i];
	return NULL;
}

/**
 * ns_net_link() - find a scraped link by name
 * @net:	scraped namespace
 * @ifname:	name
 *
 * Return: the link or NULL.
 */
struct ns_link *ns_net_link(struct ns_net *net, const char *ifname)
{
	unsigned int i;

	for (i = 0; i < net->n_links; i++)
		if (!strcmp(net->links[i].ifname, ifname))
			return &net->links[i];
	return NULL;
}

static int scrape_links(struct nl_sock *sk, struct ns_net *net, struct ns_err *e)
{
	struct nl_cache *cache;
	struct nl_object *obj;
	int err;

	err = rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache);
	if (err < 0) {
		ns_err_set(e, "rtnetlink: reading links: %s", nl_geterror(err));
		return -EIO;
	}
	for (obj = nl_cache_get_first(cache); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_link *rl = (struct rtnl_link *)obj;
		struct nl_addr *mac = rtnl_link_get_addr(rl);
		struct ns_link *l, *links;

		links = grow(net->links, net->n_links, sizeof(*links));
		if (!links) {
			nl_cache_free(cache);
			ns_err_set(e, "scrape: out of memory");
			return -ENOMEM;
		}
		net->links = links;
		l = &links[net->n_links++];
		memset(l, 0, sizeof(*l));
		l->ifindex = rtnl_link_get_ifindex(rl);
		snprintf(l->ifname, sizeof(l->ifname), "%s", rtnl_link_get_name(rl) ?: "?");
		l->mtu = rtnl_link_get_mtu(rl);
		l->flags = rtnl_link_get_flags(rl);
		l->operstate = rtnl_link_get_operstate(rl);
		l->loopback = rtnl_link_get_arptype(rl) == ARPHRD_LOOPBACK || (l->flags & IFF_LOOPBACK);
		if (mac && nl_addr_get_len(mac) == 6) {
			memcpy(l->mac, nl_addr_get_binary_addr(mac), 6);
			l->has_mac = true;
		}
		rtnl_link_get_gso_max_size(rl, &l->gso_max_size);
		rtnl_link_get_gso_max_segs(rl, &l->gso_max_segs);
		if (l->loopback)
			snprintf(l->skip, sizeof(l->skip), "loopback");
		else if (!(l->flags & IFF_UP))
			snprintf(l->skip, sizeof(l->skip), "down");
		else if (!l->has_mac)
			snprintf(l->skip, sizeof(l->skip), "not Ethernet");
	}
	nl_cache_free(cache);
	return 0;
}

/* One RTM_NEWLINK of the raw dump: the attributes libnl 3.7 cannot give us. */
static int link_extra_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[NS_IFLA_PARSE_MAX + 1];
	struct ns_net *net = arg;
	struct ifinfomsg *ifi;
	struct ns_link *l;

	if (nlh->nlmsg_type != RTM_NEWLINK || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return NL_SKIP;
	ifi = nlmsg_data(nlh);
	l = link_by_index(net, ifi->ifi_index);
	if (!l || nlmsg_parse(nlh, sizeof(*ifi), tb, NS_IFLA_PARSE_MAX, NULL) < 0)
		return NL_SKIP;
	if (tb[NS_IFLA_GSO_IPV4_MAX_SIZE] && nla_len(tb[NS_IFLA_GSO_IPV4_MAX_SIZE]) >= 4)
		l->gso_ipv4_max_size = nla_get_u32(tb[NS_IFLA_GSO_IPV4_MAX_SIZE]);
	if (tb[IFLA_TSO_MAX_SIZE] && nla_len(tb[IFLA_TSO_MAX_SIZE]) >= 4)
		l->tso_max_size = nla_get_u32(tb[IFLA_TSO_MAX_SIZE]);
	if (tb[IFLA_GRO_MAX_SIZE] && nla_len(tb[IFLA_GRO_MAX_SIZE]) >= 4)
		l->gro_max_size = nla_get_u32(tb[IFLA_GRO_MAX_SIZE]);
	if (tb[IFLA_GSO_MAX_SIZE] && nla_len(tb[IFLA_GSO_MAX_SIZE]) >= 4)
		l->gso_max_size = nla_get_u32(tb[IFLA_GSO_MAX_SIZE]);
	return NL_OK;
}

static int scrape_link_extras(struct nl_sock *sk, struct ns_net *net, struct ns_err *e)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nl_cb *cb;
	int err;

	cb = sk_cb_clone(sk);
	if (!cb) {
		ns_err_set(e, "scrape: out of memory");
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, link_extra_cb, net);
	err = nl_send_simple(sk, RTM_GETLINK, NLM_F_DUMP, &ifi, sizeof(ifi));
	if (err >= 0)
		err = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (err < 0) {
		ns_err_set(e, "rtnetlink: reading link GSO limits: %s", nl_geterror(err));
		return -EIO;
	}
	return 0;
}

static int scrape_addrs(struct nl_sock *sk, struct ns_net *net, struct ns_err *e)
{
	struct nl_cache *cache;
	struct nl_object *obj;
	int err;

	err = rtnl_addr_alloc_cache(sk, &cache);
	if (err < 0) {
		ns_err_set(e, "rtnetlink: reading addresses: %s", nl_geterror(err));
		return -EIO;
	}
	for (obj = nl_cache_get_first(cache); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_addr *ra = (struct rtnl_addr *)obj;
		int family = rtnl_addr_get_family(ra);
		struct nl_addr *local = rtnl_addr_get_local(ra);
		struct nl_addr *peer = rtnl_addr_get_peer(ra);
		unsigned int alen = family == AF_INET ? 4 : 16;
		struct ns_addr *a, *addrs;

		if ((family != AF_INET && family != AF_INET6) || !local ||
		    nl_addr_get_len(local) != alen)
			continue;
		addrs = grow(net->addrs, net->n_addrs, sizeof(*addrs));
		if (!addrs) {
			nl_cache_free(cache);
			ns_err_set(e, "scrape: out of memory");
			return -ENOMEM;
		}
		net->addrs = addrs;
		a = &addrs[net->n_addrs++];
		memset(a, 0, sizeof(*a));
		a->ifindex = rtnl_addr_get_ifindex(ra);
		a->a.family = family;
		a->a.prefixlen = rtnl_addr_get_prefixlen(ra);
		a->a.scope = rtnl_addr_get_scope(ra);
		a->a.flags = rtnl_addr_get_flags(ra);
		addr_copy(&a->a.addr, local);
		if (peer && nl_addr_get_len(peer) == alen &&
		    memcmp(nl_addr_get_binary_addr(peer), a->a.addr.bytes, alen)) {
			a->has_peer = true;
			addr_copy(&a->peer, peer);
		}
		if (family == AF_INET && rtnl_addr_get_broadcast(ra) &&
		    nl_addr_get_len(rtnl_addr_get_broadcast(ra)) == 4) {
			a->has_broadcast = true;
			addr_copy(&a->broadcast, rtnl_addr_get_broadcast(ra));
		}
		a->valid_lft = rtnl_addr_get_valid_lifetime(ra);
		a->preferred_lft = rtnl_addr_get_preferred_lifetime(ra);
		if (family == AF_INET && rtnl_addr_get_label(ra))
			snprintf(a->label, sizeof(a->label), "%s", rtnl_addr_get_label(ra));
	}
	nl_cache_free(cache);
	return 0;
}

struct routes_ctx {
	int only_ifindex;
	struct ns_route *routes;
	unsigned int n;
	unsigned int skipped;
	int err;
};

static int route_add_cb(struct nl_msg *msg, void *arg)
{
	struct routes_ctx *c = arg;
	struct rtnl_route *rr = NULL;
	struct nl_addr *dst, *src, *gw;
	struct rtnl_nexthop *nh;
	struct ns_route *r, *grown;
	uint32_t initcwnd;
	int family;

	if (nlmsg_hdr(msg)->nlmsg_type != RTM_NEWROUTE || rtnl_route_parse(nlmsg_hdr(msg), &rr) < 0)
		return NL_SKIP;
	family = rtnl_route_get_family(rr);
	if ((family != AF_INET && family != AF_INET6) ||
	    rtnl_route_get_table(rr) != RT_TABLE_MAIN ||
	    (rtnl_route_get_flags(rr) & RTM_F_CLONED))
		goto out;
	if (rtnl_route_get_nnexthops(rr) != 1) {
		c->skipped++;
		goto out;
	}
	nh = rtnl_route_nexthop_n(rr, 0);
	if (c->only_ifindex > 0 && rtnl_route_nh_get_ifindex(nh) != c->only_ifindex)
		goto out;
	grown = grow(c->routes, c->n, sizeof(*grown));
	if (!grown) {
		c->err = -ENOMEM;
		goto out;
	}
	c->routes = grown;
	r = &grown[c->n++];
	memset(r, 0, sizeof(*r));
	r->ifindex = rtnl_route_nh_get_ifindex(nh);
	r->r.family = family;
	dst = rtnl_route_get_dst(rr);
	r->r.dst_len = dst ? nl_addr_get_prefixlen(dst) : 0;
	if (r->r.dst_len)
		addr_copy(&r->r.dst, dst);
	gw = rtnl_route_nh_get_gateway(nh);
	if (gw && (nl_addr_get_len(gw) == 4 || nl_addr_get_len(gw) == 16)) {
		r->r.has_gateway = true;
		addr_copy(&r->r.gateway, gw);
	}
	r->r.metric = rtnl_route_get_priority(rr);
	r->table = rtnl_route_get_table(rr);
	r->protocol = rtnl_route_get_protocol(rr);
	r->scope = rtnl_route_get_scope(rr);
	r->type = rtnl_route_get_type(rr);
	src = rtnl_route_get_pref_src(rr);
	if (src && (nl_addr_get_len(src) == 4 || nl_addr_get_len(src) == 16)) {
		r->has_prefsrc = true;
		addr_copy(&r->prefsrc, src);
	}
	if (rtnl_route_get_metric(rr, RTAX_INITCWND, &initcwnd) == 0)
		r->initcwnd = initcwnd;
out:
	rtnl_route_put(rr);
	return NL_OK;
}

/*
 * A raw dump parsed one message at a time with rtnl_route_parse(): libnl's
 * route cache merges IPv6 routes with the same key (fe80::/64 on every link)
 * into one multipath object, which would hide them.
 */
static int routes_read(struct nl_sock *sk, int only_ifindex, struct ns_route **routesp,
		       unsigned int *np, unsigned int *skippedp, struct ns_err *e)
{
	struct routes_ctx c = { .only_ifindex = only_ifindex };
	struct rtmsg rtm = { .rtm_family = AF_UNSPEC };
	struct nl_cb *cb;
	int err;

	cb = sk_cb_clone(sk);
	if (!cb) {
		ns_err_set(e, "scrape: out of memory");
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, route_add_cb, &c);
	err = nl_send_simple(sk, RTM_GETROUTE, NLM_F_DUMP, &rtm, sizeof(rtm));
	if (err >= 0)
		err = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (err < 0 || c.err) {
		free(c.routes);
		if (c.err) {
			ns_err_set(e, "scrape: out of memory");
			return c.err;
		}
		ns_err_set(e, "rtnetlink: reading routes: %s", nl_geterror(err));
		return -EIO;
	}
	*routesp = c.routes;
	*np = c.n;
	if (skippedp)
		*skippedp = c.skipped;
	return 0;
}

/**
 * ns_scrape_routes() - the main-table single-nexthop routes of one link
 * @sk:		rtnetlink socket in the namespace
 * @ifindex:	link, or 0 for all
 * @routesp:	receives a malloc'ed array (free() it), NULL when empty
 * @np:		receives its length
 * @e:		error message
 *
 * Return: 0 or -errno.
 */
int ns_scrape_routes(struct nl_sock *sk, int ifindex, struct ns_route **routesp,
		     unsigned int *np, struct ns_err *e)
{
	return routes_read(sk, ifindex, routesp, np, NULL, e);
}

static int scrape_neighs(struct nl_sock *sk, struct ns_net *net, struct ns_err *e)
{
	struct nl_cache *cache;
	struct nl_object *obj;
	int err;

	err = rtnl_neigh_alloc_cache(sk, &cache);
	if (err < 0) {
		ns_err_set(e, "rtnetlink: reading neighbours: %s", nl_geterror(err));
		return -EIO;
	}
	for (obj = nl_cache_get_first(cache); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_neigh *rn = (struct rtnl_neigh *)obj;
		int family = rtnl_neigh_get_family(rn);
		struct nl_addr *dst = rtnl_neigh_get_dst(rn);
		struct nl_addr *ll = rtnl_neigh_get_lladdr(rn);
		struct ns_neigh *nb, *grown;

		if ((family != AF_INET && family != AF_INET6) ||
		    !(rtnl_neigh_get_state(rn) & NUD_PERMANENT) || !dst || !ll ||
		    nl_addr_get_len(ll) != 6 || nl_addr_get_len(dst) != (family == AF_INET ? 4u : 16u))
			continue;
		grown = grow(net->neighs, net->n_neighs, sizeof(*grown));
		if (!grown) {
			nl_cache_free(cache);
			ns_err_set(e, "scrape: out of memory");
			return -ENOMEM;
		}
		net->neighs = grown;
		nb = &grown[net->n_neighs++];
		memset(nb, 0, sizeof(*nb));
		nb->ifindex = rtnl_neigh_get_ifindex(rn);
		nb->n.family = family;
		addr_copy(&nb->n.addr, dst);
		memcpy(nb->n.lladdr, nl_addr_get_binary_addr(ll), 6);
	}
	nl_cache_free(cache);
	return 0;
}

/**
 * ns_scrape() - read links, addresses, routes and neighbours
 * @sk:		rtnetlink socket opened inside the target namespace
 * @net:	filled; ns_net_free() it, also after a failure
 * @e:		error message
 *
 * Return: 0 or -errno.
 */
int ns_scrape(struct nl_sock *sk, struct ns_net *net, struct ns_err *e)
{
	int err;

	memset(net, 0, sizeof(*net));
	err = scrape_links(sk, net, e);
	if (!err)
		err = scrape_link_extras(sk, net, e);
	if (!err)
		err = scrape_addrs(sk, net, e);
	if (!err)
		err = routes_read(sk, 0, &net->routes, &net->n_routes, &net->n_routes_skipped, e);
	if (!err)
		err = scrape_neighs(sk, net, e);
	return err;
}

/**
 * ns_net_free() - release what ns_scrape() allocated
 * @net:	scraped namespace; emptied
 */
void ns_net_free(struct ns_net *net)
{
	free(net->links);
	free(net->addrs);
	free(net->routes);
	free(net->neighs);
	memset(net, 0, sizeof(*net));
}
