// SPDX-License-Identifier: MIT
/*
 * udp.c - UDP (RFC 768) and the stack's UDP socket API
 *
 * Theory of operation
 *
 * A struct udp_sock is an endpoint inside the stack: a local port, a local
 * address or "any" (family AF_UNSPEC: both families, every address), and a
 * receive callback. Sockets hang in UDP_HASH_SIZE chains hashed by port;
 * lookup prefers an exact address match over a wildcard. Services (svc/)
 * are the only users today; TCP-style ownership is not needed: a socket
 * lives until its owner calls udp_close().
 *
 * Input checks the 8-byte header (truncated), that the length field lies
 * between 8 and what IP delivered (bad_length; IP padding beyond it is
 * trimmed), and the checksum unless the kernel vouched for it (bad_checksum;
 * zero means "none" over IPv4 and is invalid over IPv6, RFC 8200 8.1). A
 * datagram for a port nobody holds is answered with port unreachable, unless
 * it was sent to a broadcast or multicast address (RFC 1122 4.1.3.1).
 *
 * Output copies the caller's data once into a new packet behind the UDP
 * header, picks the source address when the socket is bound to "any", fills
 * the checksum over the pseudo-header, and hands the datagram to IPv4 (which
 * fragments it above the MTU) or IPv6. udp_sendto() is synchronous: its
 * return value says whether the datagram left or why not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/net/net.h"
#include "datapath/net/proto_hdr.h"

#define UDP_HASH_SIZE		1024
#define UDP_MAX_SOCKS		16384
#define UDP_EPHEMERAL_LO	32768
#define UDP_EPHEMERAL_HI	60999

/**
 * udp_table_init() - empty socket table
 * Return: 0 or -ENOMEM.
 */
int udp_table_init(struct stack *st)
{
	st->udp_hash = calloc(UDP_HASH_SIZE, sizeof(*st->udp_hash));
	st->udp_next_port = UDP_EPHEMERAL_LO + (stack_now_ms(st) % 1000);
	return st->udp_hash ? 0 : -ENOMEM;
}

/**
 * udp_table_fini() - free the table; owners closed their sockets already,
 * any left are freed here
 */
void udp_table_fini(struct stack *st)
{
	unsigned int i;

	if (!st->udp_hash)
		return;
	for (i = 0; i < UDP_HASH_SIZE; i++) {
		while (st->udp_hash[i]) {
			struct udp_sock *s = st->udp_hash[i];

			st->udp_hash[i] = s->next;
			free(s);
		}
	}
	free(st->udp_hash);
	st->udp_hash = NULL;
	st->n_udp = 0;
}

static struct udp_sock *udp_lookup(const struct stack *st, const struct net_addr *dst, uint16_t port)
{
	struct udp_sock *s, *wild = NULL;

	for (s = st->udp_hash[port % UDP_HASH_SIZE]; s; s = s->next) {
		if (s->port != port)
			continue;
		if (s->local.family == AF_UNSPEC) {
			wild = s;
			continue;
		}
		if (net_addr_eq(&s->local, dst))
			return s;
	}
	return wild;
}

/**
 * udp_open() - a socket on @port (0: an ephemeral one)
 * @st:		stack
 * @local:	address to bind, or NULL / AF_UNSPEC for any
 * @port:	host order
 * @fn:		receive callback
 * @ctx:	owner's pointer
 * @errp:	on failure, -EADDRINUSE, -EADDRNOTAVAIL or -ENOMEM
 *
 * Return: the socket, or NULL with *@errp set.
 */
struct udp_sock *udp_open(struct stack *st, const struct net_addr *local, uint16_t port,
			  udp_recv_fn fn, void *ctx, int *errp)
{
	struct net_addr any = { .family = AF_UNSPEC };
	struct udp_sock *s, *o;
	unsigned int tries;

	if (!local)
		local = &any;
	if (local->family == AF_INET && !ipv4_is_ours(st, local->a.v4)) {
		*errp = -EADDRNOTAVAIL;
		return NULL;
	}
	if (local->family == AF_INET6 && !ipv6_find_addr(st, &local->a.v6, NULL)) {
		*errp = -EADDRNOTAVAIL;
		return NULL;
	}
	if (st->n_udp >= UDP_MAX_SOCKS) {
		*errp = -ENOMEM;
		return NULL;
	}
	for (tries = 0; !port && tries < UDP_EPHEMERAL_HI - UDP_EPHEMERAL_LO; tries++) {
		uint16_t cand = st->udp_next_port++;
		bool busy = false;

		if (st->udp_next_port > UDP_EPHEMERAL_HI)
			st->udp_next_port = UDP_EPHEMERAL_LO;
		for (o = st->udp_hash[cand % UDP_HASH_SIZE]; o; o = o->next)
			if (o->port == cand)
				busy = true;
		if (!busy)
			port = cand;
	}
	if (!port) {
		*errp = -EADDRINUSE;
		return NULL;
	}
	for (o = st->udp_hash[port % UDP_HASH_SIZE]; o; o = o->next) {
		if (o->port == port && (o->local.family == AF_UNSPEC || local->family == AF_UNSPEC ||
					net_addr_eq(&o->local, local))) {
			*errp = -EADDRINUSE;
			return NULL;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		*errp = -ENOMEM;
		return NULL;
	}
	s->st = st;
	s->local = *local;
	s->port = port;
	s->fn = fn;
	s->ctx = ctx;
	s->next = st->udp_hash[port % UDP_HASH_SIZE];
	st->udp_hash[port % UDP_HASH_SIZE] = s;
	st->n_udp++;
	return s;
}

/**
 * udp_close() - unbind and free
 * @s:	socket or NULL
 */
void udp_close(struct udp_sock *s)
{
	struct udp_sock **pp;

	if (!s)
		return;
	for (pp = &s->st->udp_hash[s->port % UDP_HASH_SIZE]; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			s->st->n_udp--;
			break;
		}
	}
	free(s);
}

/**
 * udp_for_each() - call @fn for every socket (stats)
 */
void udp_for_each(const struct stack *st, udp_each_fn fn, void *arg)
{
	unsigned int i;
	const struct udp_sock *s;

	for (i = 0; i < UDP_HASH_SIZE; i++)
		for (s = st->udp_hash[i]; s; s = s->next)
			fn(s, arg);
}

/**
 * udp_input() - one UDP datagram at pkt_data()
 * @st:		stack
 * @l:		link it arrived on
 * @p:		datagram, IP header at @p->l3_off; borrowed
 * @src:	IP source
 * @dst:	IP destination
 * @to_bcast:	sent to a broadcast or multicast address
 */
void udp_input(struct stack *st, struct link *l, struct pkt *p, const struct net_addr *src,
	       const struct net_addr *dst, bool to_bcast)
{
	const struct udp_hdr *uh = pkt_peek(p, 0, sizeof(*uh));
	struct udp_sock *s;
	size_t ulen;

	stack_count(st, CTR_UDP_IN);
	if (!uh) {
		stack_drop(st, DROP_TRUNCATED);
		return;
	}
	ulen = ntohs(uh->len);
	if (ulen < sizeof(*uh) || ulen > p->len) {
		stack_drop(st, DROP_BAD_LENGTH);
		return;
	}
	pkt_trim(p, ulen);
	if (uh->csum == 0 && src->family == AF_INET6) {
		stack_drop(st, DROP_BAD_CHECKSUM);
		return;
	}
	if (uh->csum != 0 && !p->csum_ok) {
		uint32_t sum = src->family == AF_INET ?
			csum_pseudo4(src->a.v4, dst->a.v4, IPPROTO_UDP, ulen) :
			csum_pseudo6(&src->a.v6, &dst->a.v6, IPPROTO_UDP, ulen);

		if (csum_pkt_l4(p, sum) != 0) {
			stack_drop(st, DROP_BAD_CHECKSUM);
			return;
		}
	}
	s = udp_lookup(st, dst, ntohs(uh->dport));
	if (!s) {
		stack_count(st, CTR_UDP_NO_PORT);
		if (to_bcast)
			return;
		if (src->family == AF_INET)
			icmp_send_error(st, p, ICMP_DEST_UNREACH, ICMP_PORT_UNREACH, 0);
		else
			icmpv6_send_error(st, l, p, ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_NOPORT, 0);
		return;
	}
	s->rx_datagrams++;
	s->rx_bytes += ulen - sizeof(*uh);
	s->fn(s, src, ntohs(uh->sport), dst, pkt_data(p) + sizeof(*uh), ulen - sizeof(*uh));
}

/**
 * udp_sendto() - send one datagram from a stack socket
 * @s:		socket
 * @src:	source address (used only if it is one of ours), or NULL to use
 *		the socket's or pick one
 * @dst:	destination
 * @dport:	destination port, host order
 * @data:	payload
 * @len:	bytes, at most 65507 over IPv4 (fragmented above the MTU) and
 *		the link MTU minus headers over IPv6
 *
 * Return: 0 when sent or queued for resolution, else negative errno
 * (-EMSGSIZE, -ENETUNREACH, -EADDRNOTAVAIL, -ENOBUFS, -EAFNOSUPPORT).
 */
int udp_sendto(struct udp_sock *s, const struct net_addr *src, const struct net_addr *dst,
	       uint16_t dport, const void *data, size_t len)
{
	struct stack *st = s->st;
	struct net_addr from;
	struct udp_hdr *uh;
	struct pkt *p;
	uint32_t sum;
	int ret;

	if (dst->family != AF_INET && dst->family != AF_INET6)
		return -EAFNOSUPPORT;
	if (len > UDP_MAX_PAYLOAD_V4) {
		s->tx_errors++;
		return -EMSGSIZE;
	}
	if (src && src->family == dst->family &&
	    (src->family == AF_INET ? ipv4_is_ours(st, src->a.v4) :
	     ipv6_find_addr(st, &src->a.v6, NULL) != NULL))
		from = *src;	/* a broadcast the peer used is not a source: pick */
	else if (s->local.family == dst->family)
		from = s->local;
	else if (s->local.family != AF_UNSPEC)
		return -EAFNOSUPPORT;
	else {
		from.family = dst->family;
		ret = dst->family == AF_INET ? ipv4_pick_src(st, dst->a.v4, &from.a.v4) :
			ipv6_pick_src(st, NULL, &dst->a.v6, &from.a.v6);
		if (ret < 0) {
			stack_drop(st, DROP_NO_ROUTE);
			s->tx_errors++;
			return ret;
		}
	}
	p = pkt_alloc(sizeof(*uh) + len);
	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		s->tx_errors++;
		return -ENOBUFS;
	}
	uh = pkt_put(p, sizeof(*uh));
	uh->sport = htons(s->port);
	uh->dport = htons(dport);
	uh->len = htons((uint16_t)(sizeof(*uh) + len));
	uh->csum = 0;
	memcpy(pkt_put(p, len), data, len);
	sum = dst->family == AF_INET ?
		csum_pseudo4(from.a.v4, dst->a.v4, IPPROTO_UDP, p->len) :
		csum_pseudo6(&from.a.v6, &dst->a.v6, IPPROTO_UDP, p->len);
	uh->csum = htons(csum_pkt_l4(p, sum));
	if (uh->csum == 0)
		uh->csum = 0xffff;	/* RFC 768: a computed zero is sent as all ones */
	stack_count(st, CTR_UDP_OUT);
	if (dst->family == AF_INET)
		ret = ipv4_output(st, p, from.a.v4, dst->a.v4, IPPROTO_UDP, 64, false);
	else
		ret = ipv6_output(st, NULL, p, &from.a.v6, &dst->a.v6, IPPROTO_UDP, 64);
	if (ret < 0) {
		s->tx_errors++;
		return ret;
	}
	s->tx_datagrams++;
	s->tx_bytes += len;
	return 0;
}
