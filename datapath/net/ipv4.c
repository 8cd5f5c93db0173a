// SPDX-License-Identifier: MIT
/*
 * ipv4.c - IPv4 input and output (RFC 791, RFC 1122)
 *
 * Theory of operation
 *
 * Input validates in this order, each failure counted by its reason: the
 * fixed header is there (truncated), version 4 and IHL >= 5 (bad_header),
 * the whole header with options is there (truncated), total length between
 * the header length and the frame length (bad_length; a frame longer than
 * total length is Ethernet padding and is trimmed), the header checksum
 * (bad_checksum: always verified, it is 20-60 bytes; the vnet header's
 * DATA_VALID speaks for the L4 checksum only), a unicast source
 * (bad_address), and a destination that is ours, limited broadcast, the
 * directed broadcast of one of our prefixes, or 224.0.0.1 (else
 * not_for_us: we are a host, not a router). Options are skipped by IHL,
 * never interpreted. Fragments go to frag.c and come back whole.
 * Delivery dispatches on the protocol; an unknown one is answered with ICMP
 * protocol unreachable (RFC 1122 3.2.2.1).
 *
 * Output builds a 20-byte header without options in front of the transport
 * payload, routes by longest prefix (route.c), picks the source address on
 * the outgoing link that shares a prefix with the next hop, fragments when
 * the datagram exceeds the link MTU and DF is clear (frag.c), and hands
 * each frame to the neighbour layer, or straight to Ethernet for broadcast
 * and multicast. The IP id is a per-stack counter.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "datapath/link/vnet.h"
#include "datapath/net/net.h"
#include "datapath/wire/proto_hdr.h"
#include "datapath/net/tcp_glue.h"

/**
 * ipv4_is_ours() - one of the addresses of any link
 */
bool ipv4_is_ours(const struct stack *st, struct in_addr a)
{
	unsigned int i, j;

	for (i = 0; i < st->n_links; i++)
		for (j = 0; j < st->links[i]->n_addr4; j++)
			if (st->links[i]->addr4[j].addr.s_addr == a.s_addr)
				return true;
	return false;
}

static uint32_t ipv4_mask(uint8_t prefixlen)
{
	return prefixlen ? htonl(~0u << (32 - prefixlen)) : 0;
}

/* Limited broadcast or a directed broadcast of a prefix on @l. */
static bool ipv4_is_bcast(const struct link *l, struct in_addr a)
{
	unsigned int i;

	if (a.s_addr == INADDR_BROADCAST)
		return true;
	for (i = 0; i < l->n_addr4; i++) {
		uint32_t m = ipv4_mask(l->addr4[i].prefixlen);

		if (l->addr4[i].prefixlen < 31 &&
		    ((a.s_addr ^ l->addr4[i].addr.s_addr) & m) == 0 && (a.s_addr | m) == 0xffffffff)
			return true;
	}
	return false;
}

static bool ipv4_bad_source(struct in_addr a)
{
	uint32_t h = ntohl(a.s_addr);

	return h == 0 || h >= 0xe0000000 || (h >> 24) == 127;
}

/**
 * ipv4_hdr_check() - what every IPv4 header must be before anything reads
 * it: version 4, a header of at least 20 bytes that is all there, a total
 * length within the packet, a right checksum (the stack's input and the
 * container face's alike)
 * @p:		the packet at its IPv4 header
 * @big_tcp:	a TCP frame over 64 KiB may say 0 (a kernel peer's BIG TCP GSO
 *		frame, as ip_rcv_core() takes it)
 * @hlen, @tot_len: the header's and the datagram's length, when it passes
 *
 * Return: IP_HDR_OK, or what is wrong (each caller counts it its own way).
 */
enum ip_hdr_fault ipv4_hdr_check(const struct pkt *p, bool big_tcp, unsigned int *hlen, unsigned int *tot_len)
{
	const struct ipv4_hdr *ih = pkt_peek(p, 0, sizeof(*ih));

	if (!ih)
		return IP_HDR_SHORT;
	if ((ih->ver_ihl >> 4) != 4 || (ih->ver_ihl & 0xf) < 5)
		return IP_HDR_BAD_HEADER;
	*hlen = (ih->ver_ihl & 0xfu) * 4;
	if (!pkt_peek(p, 0, *hlen))
		return IP_HDR_TRUNCATED;
	*tot_len = ntohs(ih->tot_len);
	if (big_tcp && *tot_len == 0 && p->len > IPV4_MAX_LEN && ih->proto == IPPROTO_TCP)
		*tot_len = p->len;
	if (*tot_len < *hlen || *tot_len > p->len)
		return IP_HDR_BAD_LENGTH;
	if (csum_fold(csum_partial(ih, *hlen, 0)) != 0)
		return IP_HDR_BAD_CHECKSUM;
	return IP_HDR_OK;
}

/**
 * ipv4_hdr_build() - an IPv4 header without options, its checksum made
 * @ih:		where it goes
 * @tos:	type of service (DSCP and ECN)
 * @total:	the datagram's length, header included; over 64 KiB (BIG TCP,
 *		a GSO frame) the header says 0 and the kernel takes the frame's
 * @id:		identification
 * @df:		Don't Fragment
 * @ttl, @proto, @src, @dst: as they are
 */
void ipv4_hdr_build(struct ipv4_hdr *ih, uint8_t tos, size_t total, uint16_t id, bool df, uint8_t ttl,
		    uint8_t proto, struct in_addr src, struct in_addr dst)
{
	ih->ver_ihl = 0x45;
	ih->tos = tos;
	ih->tot_len = htons(total > IPV4_MAX_LEN ? 0 : (uint16_t)total);
	ih->id = htons(id);
	ih->frag_off = htons(df ? IPV4_DF : 0);
	ih->ttl = ttl;
	ih->proto = proto;
	ih->csum = 0;
	ih->saddr = src.s_addr;
	ih->daddr = dst.s_addr;
	ih->csum = htons(csum_fold(csum_partial(ih, sizeof(*ih), 0)));
}

/**
 * ipv4_hdr_pull() - past an IPv4 header ipv4_hdr_check() passed: the
 * datagram trimmed to its total length, pkt_data() at its payload, the
 * header's offset kept in @p->l3_off (for ICMP errors that quote it)
 * @p:		the packet at its IPv4 header
 * @ih:		that header
 * @hlen, @tot_len: what ipv4_hdr_check() found
 *
 * Return: true when it is a fragment, for reassembly (ipv4_reasm_input()).
 */
bool ipv4_hdr_pull(struct pkt *p, const struct ipv4_hdr *ih, unsigned int hlen, unsigned int tot_len)
{
	p->l3_off = p->off;
	pkt_trim(p, tot_len);
	pkt_pull(p, hlen);
	return ntohs(ih->frag_off) & (IPV4_MF | IPV4_OFFMASK);
}

/* The stack's count of each fault of ipv4_hdr_check() and ipv6_hdr_check(). */
const enum dp_drop ip_hdr_fault_drop[IP_HDR_FAULT_MAX] = {
	[IP_HDR_SHORT] = DROP_TRUNCATED,
	[IP_HDR_BAD_HEADER] = DROP_BAD_HEADER,
	[IP_HDR_TRUNCATED] = DROP_TRUNCATED,
	[IP_HDR_BAD_LENGTH] = DROP_BAD_LENGTH,
	[IP_HDR_BAD_CHECKSUM] = DROP_BAD_CHECKSUM,
};

/**
 * ipv4_input() - one IPv4 packet at pkt_data()
 * @st:	stack
 * @l:	link it arrived on
 * @p:	packet, borrowed
 */
void ipv4_input(struct stack *st, struct link *l, struct pkt *p)
{
	const struct ipv4_hdr *ih;
	unsigned int hlen, tot_len;
	enum ip_hdr_fault fault;
	struct in_addr src, dst;
	bool bcast = false;

	stack_count(st, CTR_IPV4_IN);
	fault = ipv4_hdr_check(p, true, &hlen, &tot_len);
	if (fault != IP_HDR_OK) {
		stack_drop(st, ip_hdr_fault_drop[fault]);
		return;
	}
	ih = pkt_peek(p, 0, sizeof(*ih));	/* there: checked */
	src.s_addr = ih->saddr;
	dst.s_addr = ih->daddr;
	if (ipv4_bad_source(src)) {
		stack_drop(st, DROP_BAD_ADDRESS);
		return;
	}
	if (!ipv4_is_ours(st, dst)) {
		if (ipv4_is_bcast(l, dst) || ntohl(dst.s_addr) == 0xe0000001) {
			bcast = true;
		} else {
			stack_drop(st, DROP_NOT_FOR_US);
			return;
		}
	}
	if (ipv4_hdr_pull(p, ih, hlen, tot_len)) {
		struct pkt *whole;

		stack_count(st, CTR_IPV4_FRAG_IN);
		whole = ipv4_reasm_input(st, p, ih);
		if (!whole)
			return;
		whole->ifindex = p->ifindex;
		ipv4_deliver(st, l, whole, ih->proto, src, dst, bcast);
		pkt_free(whole);
		return;
	}
	ipv4_deliver(st, l, p, ih->proto, src, dst, bcast);
}

/**
 * ipv4_deliver() - hand a whole datagram to its transport
 * @st:		stack
 * @l:		link it arrived on
 * @p:		transport header at pkt_data(), IP header at @p->l3_off; borrowed
 * @proto:	IP protocol
 * @src:	source address
 * @dst:	destination address
 * @to_bcast:	sent to a broadcast or multicast address
 */
void ipv4_deliver(struct stack *st, struct link *l, struct pkt *p, uint8_t proto,
		  struct in_addr src, struct in_addr dst, bool to_bcast)
{
	struct net_addr s = { .family = AF_INET }, d = { .family = AF_INET };

	switch (proto) {
	case IPPROTO_ICMP:
		icmp_input(st, l, p, src, dst, to_bcast);
		break;
	case IPPROTO_UDP:
		s.a.v4 = src;
		d.a.v4 = dst;
		udp_input(st, l, p, &s, &d, to_bcast);
		break;
	case IPPROTO_TCP:
		s.a.v4 = src;
		d.a.v4 = dst;
		tcp_glue_input(st, l, p, &s, &d, to_bcast);
		break;
	default:
		stack_drop(st, DROP_UNKNOWN_PROTOCOL);
		if (!to_bcast)
			icmp_send_error(st, p, ICMP_DEST_UNREACH, ICMP_PROT_UNREACH, 0);
		break;
	}
}

/**
 * ipv4_pick_src() - our source address for a datagram to @dst
 * Return: 0, or -ENETUNREACH without a route or an address on its link.
 */
int ipv4_pick_src(const struct stack *st, struct in_addr dst, struct in_addr *src)
{
	union proto_inaddr d = { .v4 = dst };
	const struct route *r = route_lookup(st, AF_INET, &d);
	struct in_addr hop;
	unsigned int i;

	if (!r || !r->link->n_addr4)
		return -ENETUNREACH;
	hop = r->has_gateway ? r->gateway.v4 : dst;
	for (i = 0; i < r->link->n_addr4; i++) {
		uint32_t m = ipv4_mask(r->link->addr4[i].prefixlen);

		if (((r->link->addr4[i].addr.s_addr ^ hop.s_addr) & m) == 0) {
			*src = r->link->addr4[i].addr;
			return 0;
		}
	}
	*src = r->link->addr4[0].addr;
	return 0;
}

/**
 * ipv4_send_l2() - one finished IPv4 frame to Ethernet
 * @st:		stack
 * @l:		link
 * @nexthop:	gateway or destination
 * @p:		packet at the IP header; given
 */
void ipv4_send_l2(struct stack *st, struct link *l, struct in_addr nexthop, struct pkt *p)
{
	static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	union proto_inaddr hop = { .v4 = nexthop };
	uint32_t h = ntohl(nexthop.s_addr);

	stack_count(st, CTR_IPV4_OUT);
	if (ipv4_is_bcast(l, nexthop)) {
		eth_output(l, bcast_mac, ETHERTYPE_IPV4, p);
	} else if ((h >> 28) == 0xe) {
		uint8_t mac[6] = { 0x01, 0x00, 0x5e, (h >> 16) & 0x7f, (h >> 8) & 0xff, h & 0xff };

		eth_output(l, mac, ETHERTYPE_IPV4, p);
	} else {
		neigh_output(st, l, AF_INET, &hop, p);
	}
}

/**
 * ipv4_output() - send a transport payload as an IPv4 datagram
 * @st:		stack
 * @p:		transport header at pkt_data(); given
 * @src:	source, or INADDR_ANY to pick one
 * @dst:	destination
 * @proto:	IP protocol
 * @ttl:	time to live
 * @df:		set Don't Fragment (then an oversize datagram is refused)
 *
 * A GSO frame (@p->vnet asks for it, tcp_glue.c, udp.c) on a hw link is not
 * held to the MTU (the kernel segments it) but to the link's frame limit
 * (vnet_frame_limit(): 65535 bytes with the L2 header, or, BIG TCP, the
 * IPv4 frame limit from netsetup with total length 0). The IP id advances
 * by its number of segments, which the kernel numbers id, id + 1, ...
 *
 * Return: 0 when sent or queued, -ENETUNREACH, -EMSGSIZE or -ENOBUFS when
 * dropped (counted, and @p freed in every case).
 */
int ipv4_output(struct stack *st, struct pkt *p, struct in_addr src, struct in_addr dst,
		uint8_t proto, uint8_t ttl, bool df)
{
	union proto_inaddr d = { .v4 = dst };
	const struct route *r = route_lookup(st, AF_INET, &d);
	struct ipv4_hdr *ih;
	struct in_addr hop;
	size_t total;
	bool gso;

	if (!r) {
		stack_drop(st, DROP_NO_ROUTE);
		pkt_free(p);
		return -ENETUNREACH;
	}
	if (src.s_addr == INADDR_ANY && ipv4_pick_src(st, dst, &src) < 0) {
		stack_drop(st, DROP_NO_ROUTE);
		pkt_free(p);
		return -ENETUNREACH;
	}
	total = pkt_total_len(p) + sizeof(*ih);
	/* a GSO frame (tcp_glue.c, udp.c) is segmented by the kernel: not held to
	 * the MTU, but to the link's frame limit (vnet.c), BIG TCP included */
	gso = r->link->vnet && vnet_is_gso(&p->vnet) &&
	      total + r->link->l2_len <= vnet_frame_limit(r->link, AF_INET, proto == IPPROTO_TCP);
	if (total > IPV4_MAX_LEN && !gso) {
		stack_drop(st, DROP_TOO_BIG);
		pkt_free(p);
		return -EMSGSIZE;
	}
	ih = pkt_push(p, sizeof(*ih));
	if (!ih) {
		stack_drop(st, DROP_NO_MEMORY);
		pkt_free(p);
		return -ENOBUFS;
	}
	ipv4_hdr_build(ih, p->tos, total, st->ipv4_id, df, ttl, proto, src, dst);
	/* the kernel numbers the segments of a GSO frame id, id + 1, ... */
	st->ipv4_id = (uint16_t)(st->ipv4_id + (gso ? vnet_gso_segs(&p->vnet, total - p->vnet.hdr_len) : 1));
	hop = r->has_gateway ? r->gateway.v4 : dst;
	if (total > r->link->mtu && !gso) {
		if (df) {
			stack_drop(st, DROP_TOO_BIG);
			pkt_free(p);
			return -EMSGSIZE;
		}
		return ipv4_fragment_output(st, r->link, hop, p, r->link->mtu);
	}
	ipv4_send_l2(st, r->link, hop, p);
	return 0;
}
