// SPDX-License-Identifier: MIT
/*
 * tcp_outer.c - the outer stack's TCP instance (st->tcp): its segments are
 * routed by longest prefix, resolved by ARP/NDP and leave by an AF_PACKET
 * link; what the IP layer receives for TCP, and the ICMP errors about it,
 * come in here
 */
#include <errno.h>
#include <string.h>

#include "datapath/net/net.h"
#include "datapath/net/tcp_glue.h"

static struct link *tcp_glue_outer_link(void *ctx, const struct net_addr *dst)
{
	const struct route *r = route_lookup(ctx, dst->family, &dst->a);

	return r ? r->link : NULL;
}

static bool tcp_glue_outer_hop_ready(void *ctx, const struct net_addr *dst)
{
	struct stack *st = ctx;
	const struct route *r = route_lookup(st, dst->family, &dst->a);
	const struct neigh *n;
	union proto_inaddr hop;

	if (!r)
		return false;	/* the IP layer drops it; copying is harmless */
	hop = r->has_gateway ? r->gateway : dst->a;
	n = neigh_lookup(st, dst->family, &hop);
	return n && n->state != NEIGH_INCOMPLETE;
}

static int tcp_glue_outer_output(void *ctx, struct pkt *p, const struct net_addr *src,
				 const struct net_addr *dst)
{
	struct stack *st = ctx;

	if (dst->family == AF_INET)
		return ipv4_output(st, p, src->a.v4, dst->a.v4, IPPROTO_TCP, 64, true);
	return ipv6_output(st, NULL, p, &src->a.v6, &dst->a.v6, IPPROTO_TCP, 64);
}

static const struct tcp_glue_ops tcp_glue_outer_ops = {
	.link_for = tcp_glue_outer_link,
	.hop_ready = tcp_glue_outer_hop_ready,
	.output = tcp_glue_outer_output,
};

/**
 * tcp_glue_init() - create the outer stack's TCP engine (st->tcp)
 * Return: 0 or -ENOMEM.
 */
int tcp_glue_init(struct stack *st)
{
	st->tcp = tcp_glue_new(st, &tcp_glue_outer_ops, st);
	return st->tcp ? 0 : -ENOMEM;
}

/**
 * tcp_glue_fini() - free the outer stack's engine
 */
void tcp_glue_fini(struct stack *st)
{
	tcp_glue_free(st->tcp);
	st->tcp = NULL;
}

/**
 * tcp_glue_input() - one TCP segment from the outer stack's IP layer
 * @st:		stack
 * @l:		link it arrived on
 * @p:		segment, trimmed to the IP payload; borrowed
 * @src:	IP source
 * @dst:	IP destination (one of ours, or a broadcast/multicast one)
 * @to_bcast:	sent to a broadcast or multicast address
 */
void tcp_glue_input(struct stack *st, struct link *l, struct pkt *p, const struct net_addr *src,
		    const struct net_addr *dst, bool to_bcast)
{
	(void)l;
	stack_count(st, CTR_TCP_IN);
	if (to_bcast || !st->tcp) {
		stack_drop(st, DROP_NOT_FOR_US);
		return;
	}
	tcp_glue_segment(st->tcp, p, src, dst);
}

/**
 * tcp_glue_icmp_error() - an ICMP error the outer stack received about TCP
 * @st:		stack
 * @family:	AF_INET (ICMP) or AF_INET6 (ICMPv6)
 * @p:		the ICMP message at pkt_data(), checksum verified; borrowed
 *
 * Only a quote whose source is one of our addresses can be about one of our
 * segments (tcp_glue_icmp()).
 */
void tcp_glue_icmp_error(struct stack *st, uint8_t family, const struct pkt *p)
{
	const uint8_t *q = pkt_peek(p, 8, family == AF_INET ? IPV4_HLEN : IPV6_HLEN);
	struct in6_addr a6;
	struct in_addr a4;

	if (!q || !st->tcp)
		return;
	if (family == AF_INET) {
		memcpy(&a4, q + 12, 4);
		if (!ipv4_is_ours(st, a4))
			return;
	} else {
		memcpy(&a6, q + 8, 16);
		if (!ipv6_find_addr(st, &a6, NULL))
			return;
	}
	tcp_glue_icmp(st->tcp, family, p);
}

/**
 * tcp_glue_print_stats() - the outer engine's "tcp" counters and "tcp_connections"
 * @st:	stack
 * @o:	printer (text or JSON, one code path)
 */
void tcp_glue_print_stats(struct stack *st, struct out *o)
{
	if (st->tcp)
		tcp_glue_print(st->tcp, o, "tcp", "tcp_connections");
}
