// SPDX-License-Identifier: MIT
/*
 * encode.c - the body of each message, encoded: HELLO, LINK (its addresses,
 * routes, neighbours and the face), DONE, ERROR, ATTACH
 *
 * Theory of operation
 *
 * proto_encode() (codec.c) gives each encoder a libnl struct nl_msg; the
 * encoder puts the attributes (nla_put*, lists as nla_nest_* of repeated
 * entries) and codec.c copies them behind the header. An encoder refuses
 * counts over the PROTO_MAX_* limits and a message that does not fit with
 * -E2BIG: what it refuses to write, the decoder (decode.c) would refuse to
 * read. Optional attributes are left out when they say nothing (no GSO
 * reason, one face queue, no netstat fds), so that a peer of an older minor
 * sees what it knows.
 *
 * What it does not do: send (sock.c), or attach fds (they travel with the
 * message; the counts here declare them).
 */
#include <errno.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static int put_inaddr(struct nl_msg *nl, int type, uint8_t family, const union proto_inaddr *a)
{
	return nla_put(nl, type, proto_family_addr_len(family), a->bytes);
}

/**
 * proto_link_encode() - a LINK's body: the link, its lists and face, the counts of its fds
 * @nl:		the libnl message the attributes go into
 * @l:		the link
 *
 * Return: 0, or -E2BIG (over a PROTO_MAX_* limit, or no room)
 */
int proto_link_encode(struct nl_msg *nl, const struct proto_link *l)
{
	struct nlattr *list, *entry;

	if (l->n_addrs > PROTO_MAX_ADDRS || l->n_routes > PROTO_MAX_ROUTES ||
	    l->n_neighs > PROTO_MAX_NEIGHS || l->n_channels > PROTO_MAX_CHANNELS ||
	    (l->has_face && (l->face.n_fds < 1 || l->face.n_fds > PROTO_MAX_CHANNELS ||
			     (l->face.n_netstat && l->face.n_netstat != PROTO_FACE_NETSTAT_FDS))))
		return -E2BIG;

	if (nla_put_u32(nl, PROTO_LINK_IFINDEX, l->ifindex) ||
	    nla_put_string(nl, PROTO_LINK_IFNAME, l->ifname) ||
	    nla_put(nl, PROTO_LINK_MAC, sizeof(l->mac), l->mac) ||
	    nla_put_u32(nl, PROTO_LINK_MTU, l->mtu) ||
	    nla_put_u32(nl, PROTO_LINK_FLAGS, l->flags) ||
	    nla_put_u8(nl, PROTO_LINK_GSO_MODE, l->gso_mode) ||
	    (l->gso_reason[0] && nla_put_string(nl, PROTO_LINK_GSO_REASON, l->gso_reason)) ||
	    nla_put_u32(nl, PROTO_LINK_GSO_MAX_SIZE, l->gso_max_size) ||
	    nla_put_u32(nl, PROTO_LINK_GSO_MAX_SEGS, l->gso_max_segs) ||
	    nla_put_u32(nl, PROTO_LINK_GSO_IPV4_MAX_SIZE, l->gso_ipv4_max_size) ||
	    nla_put_u32(nl, PROTO_LINK_CHANNELS, l->n_channels) ||
	    (l->has_steer_seed && nla_put_u32(nl, PROTO_LINK_STEER_SEED, l->steer_seed)))
		return -E2BIG;

	if (!(list = nla_nest_start(nl, PROTO_LINK_ADDRS)))
		return -E2BIG;
	for (unsigned int i = 0; i < l->n_addrs; i++) {
		const struct proto_addr *a = &l->addrs[i];

		if (!(entry = nla_nest_start(nl, PROTO_LINK_ADDR)) ||
		    nla_put_u8(nl, PROTO_ADDR_FAMILY, a->family) ||
		    put_inaddr(nl, PROTO_ADDR_ADDRESS, a->family, &a->addr) ||
		    nla_put_u8(nl, PROTO_ADDR_PREFIXLEN, a->prefixlen) ||
		    nla_put_u8(nl, PROTO_ADDR_SCOPE, a->scope) ||
		    nla_put_u32(nl, PROTO_ADDR_FLAGS, a->flags))
			return -E2BIG;
		nla_nest_end(nl, entry);
	}
	nla_nest_end(nl, list);

	if (!(list = nla_nest_start(nl, PROTO_LINK_ROUTES)))
		return -E2BIG;
	for (unsigned int i = 0; i < l->n_routes; i++) {
		const struct proto_route *r = &l->routes[i];

		if (!(entry = nla_nest_start(nl, PROTO_LINK_ROUTE)) ||
		    nla_put_u8(nl, PROTO_ROUTE_FAMILY, r->family) ||
		    (r->dst_len && put_inaddr(nl, PROTO_ROUTE_DST, r->family, &r->dst)) ||
		    nla_put_u8(nl, PROTO_ROUTE_DST_LEN, r->dst_len) ||
		    (r->has_gateway && put_inaddr(nl, PROTO_ROUTE_GATEWAY, r->family, &r->gateway)) ||
		    nla_put_u32(nl, PROTO_ROUTE_METRIC, r->metric))
			return -E2BIG;
		nla_nest_end(nl, entry);
	}
	nla_nest_end(nl, list);

	if (!(list = nla_nest_start(nl, PROTO_LINK_NEIGHS)))
		return -E2BIG;
	for (unsigned int i = 0; i < l->n_neighs; i++) {
		const struct proto_neigh *n = &l->neighs[i];

		if (!(entry = nla_nest_start(nl, PROTO_LINK_NEIGH)) ||
		    nla_put_u8(nl, PROTO_NEIGH_FAMILY, n->family) ||
		    put_inaddr(nl, PROTO_NEIGH_ADDRESS, n->family, &n->addr) ||
		    nla_put(nl, PROTO_NEIGH_LLADDR, sizeof(n->lladdr), n->lladdr))
			return -E2BIG;
		nla_nest_end(nl, entry);
	}
	nla_nest_end(nl, list);

	if (l->has_face) {
		if (!(list = nla_nest_start(nl, PROTO_LINK_FACE)) ||
		    nla_put_u32(nl, PROTO_FACE_IFINDEX, l->face.ifindex) ||
		    nla_put_string(nl, PROTO_FACE_IFNAME, l->face.ifname) ||
		    nla_put_u32(nl, PROTO_FACE_MTU, l->face.mtu) ||
		    nla_put_u32(nl, PROTO_FACE_OFFLOADS, l->face.offloads) ||
		    (l->face.n_fds > 1 && nla_put_u32(nl, PROTO_FACE_QUEUES, l->face.n_fds)) ||
		    (l->face.n_netstat && nla_put_u32(nl, PROTO_FACE_NETSTAT, l->face.n_netstat)))
			return -E2BIG;
		nla_nest_end(nl, list);
	}
	return 0;
}

/**
 * proto_hello_encode() - HELLO's body: the versions, minor, software, shards
 * @nl:		the libnl message the attributes go into
 * @h:		the hello
 *
 * Return: 0, or -E2BIG (over a PROTO_MAX_* limit, or no room)
 */
int proto_hello_encode(struct nl_msg *nl, const struct proto_hello *h)
{
	struct nlattr *list;

	if (h->n_versions > PROTO_MAX_VERSIONS)
		return -E2BIG;
	if (!(list = nla_nest_start(nl, PROTO_HELLO_VERSIONS)))
		return -E2BIG;
	for (unsigned int i = 0; i < h->n_versions; i++)
		if (nla_put_u8(nl, PROTO_HELLO_VERSION, h->versions[i]))
			return -E2BIG;
	nla_nest_end(nl, list);
	if (nla_put_u8(nl, PROTO_HELLO_MINOR, h->minor))
		return -E2BIG;
	if (h->software[0] && nla_put_string(nl, PROTO_HELLO_SOFTWARE, h->software))
		return -E2BIG;
	if (h->shards && nla_put_u32(nl, PROTO_HELLO_SHARDS, h->shards))
		return -E2BIG;
	return 0;
}

/**
 * proto_attach_encode() - ATTACH's body: what the client asks for, the netns fd declared
 * @nl:		the libnl message the attributes go into
 * @a:		the request
 *
 * Return: 0, or -E2BIG (over a PROTO_MAX_* limit, or no room)
 */
int proto_attach_encode(struct nl_msg *nl, const struct proto_attach *a)
{
	if (nla_put_u32(nl, PROTO_ATTACH_NETNS, 1) ||
	    (a->ifname[0] && nla_put_string(nl, PROTO_ATTACH_IFNAME, a->ifname)) ||
	    (a->has_gso_mode && nla_put_u8(nl, PROTO_ATTACH_GSO_MODE, a->gso_mode)) ||
	    (a->channels && nla_put_u32(nl, PROTO_ATTACH_CHANNELS, a->channels)) ||
	    (a->no_face && nla_put_u8(nl, PROTO_ATTACH_FACE, 0)) ||
	    (a->shards && nla_put_u32(nl, PROTO_ATTACH_SHARDS, a->shards)))
		return -E2BIG;
	return 0;
}

/**
 * proto_error_encode() - ERROR's body: the errno and the message
 * @nl:		the libnl message the attributes go into
 * @e:		the error
 *
 * Return: 0, or -E2BIG (over a PROTO_MAX_* limit, or no room)
 */
int proto_error_encode(struct nl_msg *nl, const struct proto_error *e)
{
	if (nla_put_u32(nl, PROTO_ERROR_ERRNO, (uint32_t)e->err) ||
	    nla_put_string(nl, PROTO_ERROR_MESSAGE, e->message))
		return -E2BIG;
	return 0;
}

/**
 * proto_done_encode() - DONE's body: STATUS declares the status file that travels with it
 * @nl:		the libnl message the attributes go into
 * @d:		the done
 *
 * Return: 0, or -E2BIG (over a PROTO_MAX_* limit, or no room)
 */
int proto_done_encode(struct nl_msg *nl, const struct proto_done *d)
{
	if (d->has_status && nla_put_u32(nl, PROTO_DONE_STATUS, 1))
		return -E2BIG;
	return 0;
}
