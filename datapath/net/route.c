// SPDX-License-Identifier: MIT
/*
 * route.c - routing by longest prefix over the routes netsetup scraped
 *
 * Theory of operation: one array holds the IPv4 and IPv6 routes of the main
 * table as netsetup scraped them (before it took the addresses away), each
 * tied to the link it was scraped on, plus a connected route per address
 * prefix (and fe80::/64 per link) in case the scrape had none. route_lookup()
 * scans for the longest matching prefix, the lowest metric breaking ties;
 * the default route (prefix length 0) is the longest match of last resort.
 * A linear scan is fine for PROTO_MAX_ROUTES entries looked up once per
 * datagram sent; a trie would come with a forwarding use case.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "datapath/net/net.h"

/**
 * net_prefix_match() - @a and @b agree in their first @len bits
 * @family:	AF_INET or AF_INET6 (the longest @len)
 * @a:		an address
 * @b:		another
 * @len:	prefix length
 *
 * Return: true when they do; false for a @len beyond the family's.
 */
bool net_prefix_match(uint8_t family, const union proto_inaddr *a, const union proto_inaddr *b,
		      unsigned int len)
{
	unsigned int bytes = len / 8, bits = len % 8;

	if (len > (family == AF_INET ? 32u : 128u))
		return false;
	if (memcmp(a->bytes, b->bytes, bytes))
		return false;
	if (bits) {
		uint8_t mask = (uint8_t)(0xff << (8 - bits));

		return ((a->bytes[bytes] ^ b->bytes[bytes]) & mask) == 0;
	}
	return true;
}

/**
 * net_prefix_mask() - clear every bit of @a past the first @len
 * @a:		the address
 * @len:	prefix length
 * @family:	AF_INET (4 bytes) or AF_INET6 (16)
 */
void net_prefix_mask(union proto_inaddr *a, unsigned int len, uint8_t family)
{
	unsigned int i, total_bytes = family == AF_INET ? 4 : 16;

	for (i = 0; i < total_bytes; i++) {
		if (len >= 8) {
			len -= 8;
			continue;
		}
		a->bytes[i] &= (uint8_t)(0xff << (8 - len));
		len = 0;
	}
}

/**
 * route_add() - add a scraped route on @l
 * Return: 0, -EINVAL for a bad family or prefix, -ENOSPC when full,
 * -EEXIST for an exact duplicate.
 */
int route_add(struct stack *st, struct link *l, const struct proto_route *r)
{
	struct route *e;
	unsigned int i;

	if ((r->family != AF_INET && r->family != AF_INET6) ||
	    r->dst_len > (r->family == AF_INET ? 32 : 128))
		return -EINVAL;
	for (i = 0; i < st->n_routes; i++) {
		e = &st->routes[i];
		if (e->family == r->family && e->dst_len == r->dst_len && e->link == l &&
		    net_prefix_match(r->family, &e->dst, &r->dst, r->dst_len) &&
		    e->has_gateway == r->has_gateway && e->metric == r->metric)
			return -EEXIST;
	}
	if (st->n_routes >= ROUTE_MAX)
		return -ENOSPC;
	e = &st->routes[st->n_routes++];
	memset(e, 0, sizeof(*e));
	e->family = r->family;
	e->dst_len = r->dst_len;
	e->dst = r->dst;
	net_prefix_mask(&e->dst, r->dst_len, r->family);
	e->has_gateway = r->has_gateway;
	e->gateway = r->gateway;
	e->metric = r->metric;
	e->link = l;
	return 0;
}

/**
 * route_add_connected() - on-link routes for the link's own prefixes
 * @st:	stack
 * @l:	link whose addresses are known
 */
void route_add_connected(struct stack *st, struct link *l)
{
	struct proto_route r;
	unsigned int i;

	for (i = 0; i < l->n_addr4; i++) {
		memset(&r, 0, sizeof(r));
		r.family = AF_INET;
		r.dst_len = l->addr4[i].prefixlen;
		r.dst.v4 = l->addr4[i].addr;
		r.metric = 0;
		route_add(st, l, &r);
	}
	for (i = 0; i < l->n_addr6; i++) {
		memset(&r, 0, sizeof(r));
		r.family = AF_INET6;
		r.dst_len = l->addr6[i].prefixlen;
		r.dst.v6 = l->addr6[i].addr;
		r.metric = 256;
		route_add(st, l, &r);
	}
	memset(&r, 0, sizeof(r));
	r.family = AF_INET6;
	r.dst_len = 64;
	r.dst.bytes[0] = 0xfe;
	r.dst.bytes[1] = 0x80;
	r.metric = 256;
	route_add(st, l, &r);
}

/**
 * route_lookup() - the best route to @dst
 * @st:		stack
 * @family:	AF_INET or AF_INET6
 * @dst:	destination
 *
 * Return: the route, or NULL when nothing matches (no_route).
 */
const struct route *route_lookup(const struct stack *st, uint8_t family,
				 const union proto_inaddr *dst)
{
	const struct route *best = NULL;
	unsigned int i;

	for (i = 0; i < st->n_routes; i++) {
		const struct route *r = &st->routes[i];

		if (r->family != family || !net_prefix_match(family, &r->dst, dst, r->dst_len))
			continue;
		if (!best || r->dst_len > best->dst_len ||
		    (r->dst_len == best->dst_len && r->metric < best->metric))
			best = r;
	}
	return best;
}
