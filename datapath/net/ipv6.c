// SPDX-License-Identifier: MIT
/*
 * ipv6.c - IPv6 input and output (RFC 8200)
 *
 * Theory of operation
 *
 * Input checks the fixed header (truncated, bad_header for a version other
 * than 6), that the payload length fits the frame (bad_length; the rest is
 * padding and trimmed), a non-multicast source, and a destination that is
 * one of our preferred addresses, all-nodes ff02::1, or the solicited-node
 * group of any of our addresses, tentative ones included so that DAD works
 * (else not_for_us). Extension headers are walked, never interpreted:
 * hop-by-hop (first only), routing (dropped if segments are left: we are not
 * a router), destination options, and fragment headers, at most
 * IPV6_MAX_EXT of them and each bounds-checked before the next is read
 * (ipv6_ext_chain / truncated). A fragment that is not atomic goes to
 * reassembly (frag.c) and the whole datagram is walked on from the
 * fragment's next header. An unknown upper layer is answered with parameter
 * problem, code 1, pointing at the field.
 *
 * Output puts the 40-byte header in front of the payload; the caller has
 * chosen the source (it is in the L4 checksum). Multicast goes straight to
 * its 33:33 MAC on the hinted link; link-local unicast leaves on the hinted
 * link; the rest is routed by longest prefix and resolved by NDP. Datagrams
 * larger than the link MTU are sent as fragments (frag.c), as a source may.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "datapath/link/vnet.h"
#include "datapath/net/net.h"
#include "datapath/wire/proto_hdr.h"
#include "datapath/net/tcp_glue.h"

#define IPV6_MAX_EXT	8

static bool ipv6_is_mc(const struct in6_addr *a)
{
	return a->s6_addr[0] == 0xff;
}

static bool ipv6_is_ll(const struct in6_addr *a)
{
	return a->s6_addr[0] == 0xfe && (a->s6_addr[1] & 0xc0) == 0x80;
}

/**
 * ipv6_solicited_node() - ff02::1:ffXX:XXXX of an address (RFC 4291 2.7.1)
 */
void ipv6_solicited_node(const struct in6_addr *a, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[0] = 0xff;
	out->s6_addr[1] = 0x02;
	out->s6_addr[11] = 0x01;
	out->s6_addr[12] = 0xff;
	memcpy(&out->s6_addr[13], &a->s6_addr[13], 3);
}

/**
 * ipv6_find_addr() - our address entry for @a, any state
 * @st:	stack
 * @a:	address
 * @lp:	if not NULL, the link that has it
 *
 * Return: the entry, or NULL.
 */
struct link_addr6 *ipv6_find_addr(const struct stack *st, const struct in6_addr *a, struct link **lp)
{
	unsigned int i, j;

	for (i = 0; i < st->n_links; i++) {
		struct link *l = st->links[i];

		for (j = 0; j < l->n_addr6; j++) {
			if (!memcmp(&l->addr6[j].addr, a, 16)) {
				if (lp)
					*lp = l;
				return &l->addr6[j];
			}
		}
	}
	return NULL;
}

static bool ipv6_dst_ok(const struct link *l, const struct in6_addr *dst)
{
	static const struct in6_addr all_nodes = { .s6_addr = { 0xff, 0x02, [15] = 1 } };
	struct in6_addr sn;
	unsigned int i;

	if (!memcmp(dst, &all_nodes, 16))
		return true;
	for (i = 0; i < l->n_addr6; i++) {
		const struct link_addr6 *a = &l->addr6[i];

		if (a->state == ADDR6_PREFERRED && !memcmp(&a->addr, dst, 16))
			return true;
		ipv6_solicited_node(&a->addr, &sn);
		if (a->state != ADDR6_DUPLICATE && !memcmp(&sn, dst, 16))
			return true;
	}
	return false;
}

/*
 * Walk the extension headers from @nh on and hand the upper layer its
 * packet. @p has the fixed header at l3_off and the first header after it
 * at pkt_data(). A non-atomic fragment goes to reassembly; the whole
 * datagram comes back and is walked from the fragment's next header on (a
 * second fragment header inside it is refused).
 */
static void ipv6_walk(struct stack *st, struct link *l, struct pkt *p, const struct in6_addr *src,
		      const struct in6_addr *dst, uint8_t hop_limit, uint8_t nh, bool reassembled)
{
	unsigned int n_ext = 0;
	size_t nh_off = offsetof(struct ipv6_hdr, nexthdr); /* from l3: the field naming nh */
	size_t pos = sizeof(struct ipv6_hdr);		    /* from l3: the current header */

	for (;;) {
		const uint8_t *e;
		size_t elen;

		if (nh != IPPROTO_HOPOPTS && nh != IPPROTO_ROUTING && nh != IPPROTO_DSTOPTS &&
		    nh != IPPROTO_FRAGMENT)
			break;
		if (++n_ext > IPV6_MAX_EXT || (nh == IPPROTO_HOPOPTS && (n_ext != 1 || reassembled))) {
			stack_drop(st, DROP_IPV6_EXT_CHAIN);
			return;
		}
		e = pkt_peek(p, 0, 8);
		if (!e) {
			stack_drop(st, DROP_TRUNCATED);
			return;
		}
		if (nh == IPPROTO_FRAGMENT) {
			uint16_t fo = (uint16_t)(e[2] << 8 | e[3]);

			elen = 8;
			if ((fo & 0xfff8) || (fo & 1)) {
				const struct ipv6_hdr *h;
				struct pkt *whole;
				uint32_t id;

				if (reassembled || p->l3_off + sizeof(*h) > p->off) {
					stack_drop(st, DROP_BAD_HEADER);
					return;
				}
				h = (const struct ipv6_hdr *)(p->buf + p->l3_off);
				memcpy(&id, e + 4, 4);
				nh = e[0];
				pkt_pull(p, elen);
				stack_count(st, CTR_IPV6_FRAG_IN);
				whole = ipv6_reasm_input(st, p, h, nh, fo, id);
				if (!whole)
					return;
				whole->ifindex = p->ifindex;
				ipv6_walk(st, l, whole, src, dst, hop_limit, nh, true);
				pkt_free(whole);
				return;
			}
			/* atomic fragment (RFC 6946): go on */
		} else {
			elen = ((size_t)e[1] + 1) * 8;
			if (!pkt_peek(p, 0, elen)) {
				stack_drop(st, DROP_TRUNCATED);
				return;
			}
			if (nh == IPPROTO_ROUTING && e[3] != 0) {
				stack_drop(st, DROP_BAD_HEADER);
				return;
			}
		}
		nh = e[0];
		nh_off = pos;
		pos += elen;
		pkt_pull(p, elen);
	}
	switch (nh) {
	case IPPROTO_ICMPV6:
		icmpv6_input(st, l, p, src, dst, hop_limit);
		break;
	case IPPROTO_UDP: {
		struct net_addr s = { .family = AF_INET6 }, d = { .family = AF_INET6 };

		s.a.v6 = *src;
		d.a.v6 = *dst;
		udp_input(st, l, p, &s, &d, ipv6_is_mc(dst));
		break;
	}
	case IPPROTO_TCP: {
		struct net_addr s = { .family = AF_INET6 }, d = { .family = AF_INET6 };

		s.a.v6 = *src;
		d.a.v6 = *dst;
		tcp_glue_input(st, l, p, &s, &d, ipv6_is_mc(dst));
		break;
	}
	case IPPROTO_NONE:
		stack_drop(st, DROP_UNKNOWN_PROTOCOL);
		break;
	default:
		stack_drop(st, DROP_UNKNOWN_PROTOCOL);
		if (!ipv6_is_mc(dst))
			icmpv6_send_error(st, l, p, ICMP6_PARAM_PROB, ICMP6_PARAMPROB_NEXTHEADER,
					  (uint32_t)nh_off);
		break;
	}
}

/**
 * ipv6_hdr_check() - what every IPv6 header must be before anything reads
 * it: all there, version 6, a payload length within the packet and not 0
 * with bytes after it (a jumbogram, RFC 2675, which nothing here takes);
 * the stack's input and the container face's alike
 * @p:		the packet at its IPv6 header
 * @plen:	the payload's length, when it passes
 *
 * Return: IP_HDR_OK, or what is wrong (each caller counts it its own way).
 */
enum ip_hdr_fault ipv6_hdr_check(const struct pkt *p, size_t *plen)
{
	const struct ipv6_hdr *h = pkt_peek(p, 0, sizeof(*h));

	if (!h)
		return IP_HDR_SHORT;
	if ((ntohl(h->ver_tc_flow) >> 28) != 6)
		return IP_HDR_BAD_HEADER;
	*plen = ntohs(h->payload_len);
	if (*plen + sizeof(*h) > p->len || (!*plen && p->len > sizeof(*h)))
		return IP_HDR_BAD_LENGTH;
	return IP_HDR_OK;
}

/**
 * ipv6_hdr_build() - an IPv6 header
 * @h:		where it goes
 * @tos:	traffic class (DSCP and ECN)
 * @plen:	the payload's length
 * @nh, @hop_limit, @src, @dst: as they are
 */
void ipv6_hdr_build(struct ipv6_hdr *h, uint8_t tos, uint16_t plen, uint8_t nh, uint8_t hop_limit,
		    const struct in6_addr *src, const struct in6_addr *dst)
{
	h->ver_tc_flow = htonl(6u << 28 | (uint32_t)tos << 20);
	h->payload_len = htons(plen);
	h->nexthdr = nh;
	h->hop_limit = hop_limit;
	memcpy(&h->saddr, src, 16);
	memcpy(&h->daddr, dst, 16);
}

/**
 * ipv6_input() - one IPv6 packet at pkt_data()
 * @st:	stack
 * @l:	link it arrived on
 * @p:	packet, borrowed
 */
void ipv6_input(struct stack *st, struct link *l, struct pkt *p)
{
	const struct ipv6_hdr *h;
	enum ip_hdr_fault fault;
	struct in6_addr src, dst;
	size_t plen;

	stack_count(st, CTR_IPV6_IN);
	fault = ipv6_hdr_check(p, &plen);
	if (fault != IP_HDR_OK) {
		stack_drop(st, ip_hdr_fault_drop[fault]);
		return;
	}
	h = pkt_peek(p, 0, sizeof(*h));	/* there: checked */
	memcpy(&src, &h->saddr, 16);
	memcpy(&dst, &h->daddr, 16);
	if (ipv6_is_mc(&src)) {
		stack_drop(st, DROP_BAD_ADDRESS);
		return;
	}
	if (!ipv6_dst_ok(l, &dst)) {
		stack_drop(st, DROP_NOT_FOR_US);
		return;
	}
	p->l3_off = p->off;
	pkt_trim(p, sizeof(*h) + plen);
	pkt_pull(p, sizeof(*h));
	ipv6_walk(st, l, p, &src, &dst, h->hop_limit, h->nexthdr, false);
}

/**
 * ipv6_pick_src() - our source address for @dst (RFC 6724, simplified)
 * @st:		stack
 * @hint:	link the datagram will leave on, or NULL to route
 * @dst:	destination
 * @src:	result
 *
 * A link-local destination gets a link-local source, anything else a
 * global one of the outgoing link when there is one.
 * Return: 0, or -EADDRNOTAVAIL without a preferred address.
 */
int ipv6_pick_src(const struct stack *st, struct link *hint, const struct in6_addr *dst,
		  struct in6_addr *src)
{
	union proto_inaddr d;
	const struct link_addr6 *fallback = NULL;
	struct link *l = hint;
	unsigned int i;

	if (!l) {
		const struct route *r;

		memcpy(&d.v6, dst, 16);
		r = route_lookup(st, AF_INET6, &d);
		if (!r)
			return -EADDRNOTAVAIL;
		l = r->link;
	}
	for (i = 0; i < l->n_addr6; i++) {
		const struct link_addr6 *a = &l->addr6[i];

		if (a->state != ADDR6_PREFERRED)
			continue;
		if (ipv6_is_ll(&a->addr) == (ipv6_is_ll(dst) || ipv6_is_mc(dst))) {
			*src = a->addr;
			return 0;
		}
		if (!fallback)
			fallback = a;
	}
	if (!fallback)
		return -EADDRNOTAVAIL;
	*src = fallback->addr;
	return 0;
}

static struct pkt *ipv6_push_hdr(struct stack *st, struct pkt *p, const struct in6_addr *src,
				 const struct in6_addr *dst, uint8_t nh, uint8_t hop_limit)
{
	size_t plen = pkt_total_len(p);
	struct ipv6_hdr *h;

	if (plen > 0xffff || !(h = pkt_push(p, sizeof(*h)))) {
		stack_drop(st, DROP_TOO_BIG);
		pkt_free(p);
		return NULL;
	}
	ipv6_hdr_build(h, p->tos, (uint16_t)plen, nh, hop_limit, src, dst);
	return p;
}

/**
 * ipv6_output_mac() - send to a known MAC on @l (NDP, multicast)
 * @st:		stack
 * @l:		link
 * @p:		payload at pkt_data(); given
 * @src:	source (may be :: for DAD)
 * @dst:	destination
 * @nh:		next header
 * @hop_limit:	hop limit
 * @mac:	destination MAC
 *
 * Return: 0 or -EMSGSIZE (counted, @p freed).
 */
int ipv6_output_mac(struct stack *st, struct link *l, struct pkt *p, const struct in6_addr *src,
		    const struct in6_addr *dst, uint8_t nh, uint8_t hop_limit, const uint8_t *mac)
{
	p = ipv6_push_hdr(st, p, src, dst, nh, hop_limit);
	if (!p)
		return -EMSGSIZE;
	if (pkt_total_len(p) > l->mtu)
		return ipv6_fragment_output(st, l, NULL, mac, p, l->mtu);
	stack_count(st, CTR_IPV6_OUT);
	eth_output(l, mac, ETHERTYPE_IPV6, p);
	return 0;
}

/**
 * ipv6_output() - send a payload as an IPv6 datagram
 * @st:		stack
 * @hint:	link for link-local and multicast destinations (NULL: first link)
 * @p:		payload at pkt_data(); given
 * @src:	source, chosen by the caller (it is in the L4 checksum)
 * @dst:	destination
 * @nh:		next header
 * @hop_limit:	hop limit
 *
 * Return: 0 when sent or queued, else negative errno (counted, @p freed).
 */
int ipv6_output(struct stack *st, struct link *hint, struct pkt *p, const struct in6_addr *src,
		const struct in6_addr *dst, uint8_t nh, uint8_t hop_limit)
{
	union proto_inaddr hop;
	struct link *l = hint;

	if (ipv6_is_mc(dst)) {
		uint8_t mac[6] = { 0x33, 0x33, dst->s6_addr[12], dst->s6_addr[13],
				   dst->s6_addr[14], dst->s6_addr[15] };

		if (!l)
			l = st->n_links ? st->links[0] : NULL;
		if (!l) {
			stack_drop(st, DROP_NO_ROUTE);
			pkt_free(p);
			return -ENETUNREACH;
		}
		return ipv6_output_mac(st, l, p, src, dst, nh, hop_limit, mac);
	}
	memcpy(&hop.v6, dst, 16);
	if (!ipv6_is_ll(dst) || !l) {
		const struct route *r = route_lookup(st, AF_INET6, &hop);

		if (!r) {
			stack_drop(st, DROP_NO_ROUTE);
			pkt_free(p);
			return -ENETUNREACH;
		}
		l = r->link;
		if (r->has_gateway)
			hop = r->gateway;
	}
	p = ipv6_push_hdr(st, p, src, dst, nh, hop_limit);
	if (!p)
		return -EMSGSIZE;
	/* a GSO frame (tcp_glue.c) is segmented by the kernel: no MTU here */
	if (pkt_total_len(p) > l->mtu &&
	    !(l->vnet && vnet_is_gso(&p->vnet) &&
	      pkt_total_len(p) + l->l2_len <= vnet_frame_limit(l, AF_INET6, nh == IPPROTO_TCP)))
		return ipv6_fragment_output(st, l, &hop, NULL, p, l->mtu);
	stack_count(st, CTR_IPV6_OUT);
	neigh_output(st, l, AF_INET6, &hop, p);
	return 0;
}
