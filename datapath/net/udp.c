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
 * datagram for a port nobody holds goes to the layer above when one
 * registered and takes it (stack_set_upper(): the container's own sockets);
 * else it is answered with
 * port unreachable, unless it was sent to a broadcast or multicast address
 * (RFC 1122 4.1.3.1).
 *
 * Output copies the caller's data once into a new packet behind the UDP
 * header, picks the source address when the socket is bound to "any", fills
 * the checksum over the pseudo-header, and hands the datagram to IPv4 (which
 * fragments it above the MTU) or IPv6. udp_sendto() is synchronous: its
 * return value says whether the datagram left or why not.
 *
 * UDP GSO on transmit (udp_sendto_gso(), the kernel's UDP_SEGMENT): a
 * caller with many datagrams for one destination hands them down as one
 * payload and a segment size; every datagram is gso_size bytes except
 * possibly a shorter last one. The payload is copied once into a refcounted
 * block (pkt.h) and every frame built from it names its slice as its tail,
 * so what happens next depends only on the route's link (docs/gso.md):
 *
 *  - hw: up to VNET_UDP_MAX_SEGS datagrams (the kernel refuses more with
 *    EINVAL) and at most a frame of 65535 bytes below the link's
 *    gso_max_size (vnet_udp_gso_segs()) leave as one frame whose
 *    virtio_net_hdr asks the kernel to cut it (vnet_set_udp_gso()): NEEDS_CSUM,
 *    gso_type UDP_L4, gso_size the datagram size, csum_start at the UDP
 *    header, csum_offset 6, hdr_len all headers. As
 *    the kernel's own udp_send_skb() builds it, the UDP length field holds
 *    the length of the whole L4 part (header + every datagram) and the
 *    checksum field the folded, not inverted, pseudo-header sum over that
 *    same length: __udp_gso_segment() swaps that length for each piece's
 *    in the sum and in the field, then the sum from csum_start is finished.
 *    The IPv4 id advances by the number of datagrams (ipv4_output(): the
 *    kernel numbers them id, id + 1, ...). A frame that would hold one datagram goes out
 *    plain, with a full checksum (the kernel does the same).
 *  - sw: one frame per datagram, each its own small pkt with its own UDP
 *    header and full checksum and its slice of the block as tail; they
 *    queue in the link and leave together in the next sendmmsg().
 *  - off: the same frames, which the link sends one per syscall.
 * A datagram that does not fit the MTU is never put in a GSO frame: it goes
 * out alone and IP fragments it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "datapath/link/vnet.h"
#include "datapath/net/net.h"
#include "datapath/wire/proto_hdr.h"

#define UDP_HASH_SIZE		1024
#define UDP_MAX_SOCKS		16384
#define UDP_EPHEMERAL_LO	32768
#define UDP_EPHEMERAL_HI	60999
/* Largest burst one udp_sendto_gso() takes (a service's batch is far less). */
#define UDP_GSO_MAX_BURST	(16u << 20)

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
	/* no stack socket: the layer above's, if it takes it (stack_set_upper()) */
	if (!s && !to_bcast && st->upper &&
	    st->upper->udp_input(st->upper_ctx, src, ntohs(uh->sport), dst, ntohs(uh->dport),
				 pkt_data(p) + sizeof(*uh), ulen - sizeof(*uh)))
		return;
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

/*
 * The source address of a datagram from @s to @dst: @src if it is one of
 * ours, else the socket's, else one picked for the route.
 */
static int udp_pick_from(struct udp_sock *s, const struct net_addr *src, const struct net_addr *dst,
			 struct net_addr *from)
{
	struct stack *st = s->st;
	int ret;

	if (src && src->family == dst->family &&
	    (src->family == AF_INET ? ipv4_is_ours(st, src->a.v4) :
	     ipv6_find_addr(st, &src->a.v6, NULL) != NULL))
		*from = *src;	/* a broadcast the peer used is not a source: pick */
	else if (s->local.family == dst->family)
		*from = s->local;
	else if (s->local.family != AF_UNSPEC)
		return -EAFNOSUPPORT;
	else {
		from->family = dst->family;
		ret = dst->family == AF_INET ? ipv4_pick_src(st, dst->a.v4, &from->a.v4) :
			ipv6_pick_src(st, NULL, &dst->a.v6, &from->a.v6);
		if (ret < 0) {
			stack_drop(st, DROP_NO_ROUTE);
			s->tx_errors++;
			return ret;
		}
	}
	return 0;
}

/*
 * One datagram, copied behind its header, full checksum; @from is one of
 * ours. Return: as ipv4_output()/ipv6_output().
 */
static int udp_output_one(struct stack *st, const struct net_addr *from, uint16_t sport,
			  const struct net_addr *dst, uint16_t dport, const void *data, size_t len)
{
	struct udp_hdr *uh;
	struct pkt *p;
	uint32_t sum;

	p = pkt_alloc(sizeof(*uh) + len);
	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		return -ENOBUFS;
	}
	uh = pkt_put(p, sizeof(*uh));
	uh->sport = htons(sport);
	uh->dport = htons(dport);
	uh->len = htons((uint16_t)(sizeof(*uh) + len));
	uh->csum = 0;
	memcpy(pkt_put(p, len), data, len);
	sum = dst->family == AF_INET ?
		csum_pseudo4(from->a.v4, dst->a.v4, IPPROTO_UDP, p->len) :
		csum_pseudo6(&from->a.v6, &dst->a.v6, IPPROTO_UDP, p->len);
	uh->csum = htons(csum_pkt_l4(p, sum));
	if (uh->csum == 0)
		uh->csum = 0xffff;	/* RFC 768: a computed zero is sent as all ones */
	stack_count(st, CTR_UDP_OUT);
	if (dst->family == AF_INET)
		return ipv4_output(st, p, from->a.v4, dst->a.v4, IPPROTO_UDP, 64, false);
	return ipv6_output(st, NULL, p, &from->a.v6, &dst->a.v6, IPPROTO_UDP, 64);
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
	struct net_addr from;
	int ret;

	if (dst->family != AF_INET && dst->family != AF_INET6)
		return -EAFNOSUPPORT;
	if (len > UDP_MAX_PAYLOAD_V4) {
		s->tx_errors++;
		return -EMSGSIZE;
	}
	ret = udp_pick_from(s, src, dst, &from);
	if (ret < 0)
		return ret;
	ret = udp_output_one(s->st, &from, s->port, dst, dport, data, len);
	if (ret < 0) {
		s->tx_errors++;
		return ret;
	}
	s->tx_datagrams++;
	s->tx_bytes += len;
	return 0;
}

/*
 * One frame of a burst: an 8-byte UDP header in the linear part and bytes
 * [@off, @off + @n) of @pl as its tail. @gso_size non-zero: a hw GSO frame
 * of several datagrams (see the theory of operation); 0: one datagram with
 * its full checksum. Return: as ipv4_output()/ipv6_output().
 */
static int udp_send_frame(struct stack *st, const struct net_addr *from, uint16_t sport,
			  const struct net_addr *dst, uint16_t dport, struct pkt_payload *pl,
			  uint32_t off, uint32_t n, uint16_t gso_size)
{
	struct udp_hdr *uh;
	struct pkt *p;
	uint32_t sum;

	p = pkt_alloc(sizeof(*uh));
	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		return -ENOBUFS;
	}
	uh = pkt_put(p, sizeof(*uh));
	uh->sport = htons(sport);
	uh->dport = htons(dport);
	uh->len = htons((uint16_t)(sizeof(*uh) + n));	/* the whole L4 length, also in GSO */
	uh->csum = 0;
	pkt_set_payload(p, pl, off, n);
	sum = dst->family == AF_INET ?
		csum_pseudo4(from->a.v4, dst->a.v4, IPPROTO_UDP, sizeof(*uh) + n) :
		csum_pseudo6(&from->a.v6, &dst->a.v6, IPPROTO_UDP, sizeof(*uh) + n);
	if (gso_size) {
		vnet_set_udp_gso(&p->vnet, dst->family == AF_INET ? IPV4_HLEN : IPV6_HLEN, gso_size);
		uh->csum = htons((uint16_t)~csum_fold(sum));
	} else {
		uh->csum = htons(csum_pkt_l4(p, sum));
		if (uh->csum == 0)
			uh->csum = 0xffff;	/* RFC 768 */
	}
	if (dst->family == AF_INET)
		return ipv4_output(st, p, from->a.v4, dst->a.v4, IPPROTO_UDP, 64, false);
	return ipv6_output(st, NULL, p, &from->a.v6, &dst->a.v6, IPPROTO_UDP, 64);
}

/**
 * udp_gso_max_segs() - datagrams of @gso_size bytes one hw GSO frame may carry
 * @l:		the link the frame leaves by
 * @family:	AF_INET or AF_INET6
 * @gso_size:	payload bytes per datagram
 *
 * Return: vnet_udp_gso_segs(): 0 when the link does not take UDP GSO frames.
 */
unsigned int udp_gso_max_segs(const struct link *l, uint8_t family, size_t gso_size)
{
	return vnet_udp_gso_segs(l, family, gso_size);
}

/**
 * udp_output_burst() - send many datagrams to one destination (UDP_SEGMENT)
 * @st:		stack
 * @from:	source address, one of ours (the caller checked)
 * @sport:	source port, host order
 * @dst:	destination
 * @dport:	destination port, host order
 * @iov:	the payload, the concatenation of these buffers
 * @iovcnt:	number of buffers
 * @gso_size:	bytes per datagram; the last one may be shorter. 0 or at
 *		least the whole payload: one datagram
 * @sent:	datagrams and bytes sent (also on failure: the ones before it)
 *
 * The payload is copied once; the datagrams leave as hw GSO frames, as
 * separate frames that share it (sw, off), or as fragmented datagrams when
 * @gso_size does not fit the MTU (theory of operation above). Stops at the
 * first datagram the IP layer refuses: the ones before it are sent.
 *
 * Return: 0 when every datagram was sent or queued, else negative errno
 * (-EMSGSIZE, -ENETUNREACH, -ENOBUFS, -EAFNOSUPPORT).
 */
int udp_output_burst(struct stack *st, const struct net_addr *from, uint16_t sport,
		     const struct net_addr *dst, uint16_t dport, const struct iovec *iov,
		     unsigned int iovcnt, size_t gso_size, struct udp_sent *sent)
{
	union proto_inaddr d;
	const struct route *r;
	struct pkt_payload *pl;
	struct link *l;
	unsigned int i, segs;
	size_t total = 0, off = 0, n;
	int ret = 0;

	memset(sent, 0, sizeof(*sent));
	if (dst->family != AF_INET && dst->family != AF_INET6)
		return -EAFNOSUPPORT;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > UDP_GSO_MAX_BURST - total)
			return -EMSGSIZE;
		total += iov[i].iov_len;
	}
	if (!gso_size || gso_size > total)
		gso_size = total;
	if (gso_size > UDP_MAX_PAYLOAD_V4)
		return -EMSGSIZE;
	pl = pkt_payload_new(NULL, total);
	if (!pl) {
		stack_drop(st, DROP_NO_MEMORY);
		return -ENOBUFS;
	}
	for (i = 0; i < iovcnt; i++) {
		memcpy(pl->data + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	d = dst->a;
	r = route_lookup(st, dst->family, &d);
	l = r ? r->link : NULL;
	segs = vnet_udp_gso_segs(l, dst->family, gso_size);
	off = 0;
	do {
		size_t rest = total - off;
		unsigned int k;

		n = rest < gso_size ? rest : gso_size;
		if (segs > 1 && rest > gso_size)
			n = rest < (size_t)segs * gso_size ? rest : (size_t)segs * gso_size;
		k = gso_size ? (unsigned int)((n + gso_size - 1) / gso_size) : 1;
		ret = udp_send_frame(st, from, sport, dst, dport, pl, (uint32_t)off, (uint32_t)n,
				     n > gso_size ? (uint16_t)gso_size : 0);
		if (ret < 0)
			break;
		st->ctr[CTR_UDP_OUT] += k;
		if (n > gso_size) {
			stack_count(st, CTR_UDP_TX_GSO_FRAMES);
			st->ctr[CTR_UDP_TX_GSO_SEGMENTS] += k;
		} else if (total > gso_size && l && l->gso_mode == PROTO_GSO_SW) {
			stack_count(st, CTR_UDP_TX_SW_SEGMENTS);
			l->stats.tx_sw_segments++;
		}
		sent->datagrams += k;
		sent->bytes += n;
		off += n;
	} while (off < total);
	pkt_payload_put(pl);
	return ret;
}

/**
 * udp_sendto_gso() - send many datagrams from a stack socket to one destination
 * @s:		socket
 * @src:	source address, as for udp_sendto()
 * @dst:	destination
 * @dport:	destination port, host order
 * @iov:	the payload, the concatenation of these buffers
 * @iovcnt:	number of buffers
 * @gso_size:	bytes per datagram (udp_output_burst())
 *
 * Return: as udp_output_burst(), or -EADDRNOTAVAIL without a source.
 */
int udp_sendto_gso(struct udp_sock *s, const struct net_addr *src, const struct net_addr *dst,
		   uint16_t dport, const struct iovec *iov, unsigned int iovcnt, size_t gso_size)
{
	struct net_addr from;
	struct udp_sent sent;
	int ret;

	if (dst->family != AF_INET && dst->family != AF_INET6)
		return -EAFNOSUPPORT;
	ret = udp_pick_from(s, src, dst, &from);
	if (ret < 0)
		return ret;
	ret = udp_output_burst(s->st, &from, s->port, dst, dport, iov, iovcnt, gso_size, &sent);
	s->tx_datagrams += sent.datagrams;
	s->tx_bytes += sent.bytes;
	if (ret < 0)
		s->tx_errors++;
	return ret;
}
