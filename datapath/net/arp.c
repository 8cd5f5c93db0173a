// SPDX-License-Identifier: MIT
/*
 * arp.c - ARP for IPv4 over Ethernet (RFC 826, RFC 5227)
 *
 * Theory of operation: the cache itself is the shared neighbour table
 * (neigh.c); this file only parses and builds ARP packets.
 * - A packet is accepted only with hardware type 1, protocol 0x0800, lengths
 *   6 and 4, and a sender MAC that is unicast; anything else counts as
 *   arp_bad_format.
 * - Per RFC 826's merge rule, a sender already in the cache is refreshed by
 *   any ARP we see; a new entry is created only when the packet targets one
 *   of our addresses (the sender is about to talk to us).
 * - A request for one of our addresses gets a unicast reply. An ARP probe
 *   (sender 0.0.0.0, RFC 5227) for our address is answered the same way,
 *   which defends the address.
 * - arp_announce() sends the gratuitous request (sender = target = our
 *   address, broadcast) that tells the peers the address moved to our MAC;
 *   stack_start() sends one per address when the link is attached.
 */
#include <arpa/inet.h>
#include <string.h>

#include "datapath/net/net.h"

struct arp_pkt {
	uint16_t htype;
	uint16_t ptype;
	uint8_t hlen;
	uint8_t plen;
	uint16_t op;
	uint8_t sha[6];
	uint8_t spa[4];
	uint8_t tha[6];
	uint8_t tpa[4];
} __attribute__((packed));

#define ARP_OP_REQUEST	1
#define ARP_OP_REPLY	2

static const uint8_t arp_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static bool arp_link_has(const struct link *l, struct in_addr a)
{
	unsigned int i;

	for (i = 0; i < l->n_addr4; i++)
		if (l->addr4[i].addr.s_addr == a.s_addr)
			return true;
	return false;
}

static void arp_send(struct stack *st, struct link *l, uint16_t op, const uint8_t *eth_dst,
		     const uint8_t *tha, struct in_addr spa, struct in_addr tpa)
{
	struct pkt *p = pkt_alloc(sizeof(struct arp_pkt));
	struct arp_pkt *a;

	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		return;
	}
	a = pkt_put(p, sizeof(*a));
	a->htype = htons(1);
	a->ptype = htons(ETHERTYPE_IPV4);
	a->hlen = 6;
	a->plen = 4;
	a->op = htons(op);
	memcpy(a->sha, l->mac, 6);
	memcpy(a->spa, &spa, 4);
	memcpy(a->tha, tha, 6);
	memcpy(a->tpa, &tpa, 4);
	eth_output(l, eth_dst, ETHERTYPE_ARP, p);
}

/**
 * arp_input() - one ARP packet at pkt_data()
 * @st:	stack
 * @l:	link
 * @p:	packet, borrowed
 */
void arp_input(struct stack *st, struct link *l, struct pkt *p)
{
	const struct arp_pkt *a = pkt_peek(p, 0, sizeof(*a));
	union proto_inaddr spa = { 0 };
	struct in_addr tpa;
	bool for_us;

	stack_count(st, CTR_ARP_IN);
	if (!a) {
		stack_drop(st, DROP_TRUNCATED);
		return;
	}
	if (ntohs(a->htype) != 1 || ntohs(a->ptype) != ETHERTYPE_IPV4 || a->hlen != 6 ||
	    a->plen != 4 || (a->sha[0] & 1)) {
		stack_drop(st, DROP_ARP_BAD_FORMAT);
		return;
	}
	memcpy(&spa.v4, a->spa, 4);
	memcpy(&tpa, a->tpa, 4);
	for_us = arp_link_has(l, tpa);
	if (spa.v4.s_addr != INADDR_ANY)
		neigh_update(st, l, AF_INET, &spa, a->sha, for_us, true);

	switch (ntohs(a->op)) {
	case ARP_OP_REQUEST:
		stack_count(st, CTR_ARP_REQUEST_IN);
		if (!for_us)
			return;
		stack_count(st, CTR_ARP_REPLY_OUT);
		arp_send(st, l, ARP_OP_REPLY, a->sha, a->sha, tpa, spa.v4);
		break;
	case ARP_OP_REPLY:
		stack_count(st, CTR_ARP_REPLY_IN);
		break;
	default:
		stack_drop(st, DROP_ARP_BAD_FORMAT);
		break;
	}
}

/* Our address on @l in the subnet of @target, else the first one. */
static struct in_addr arp_source_for(const struct link *l, struct in_addr target)
{
	struct in_addr none = { 0 };
	unsigned int i;

	for (i = 0; i < l->n_addr4; i++) {
		uint32_t mask = l->addr4[i].prefixlen ?
			htonl(~0u << (32 - l->addr4[i].prefixlen)) : 0;

		if (((l->addr4[i].addr.s_addr ^ target.s_addr) & mask) == 0)
			return l->addr4[i].addr;
	}
	return l->n_addr4 ? l->addr4[0].addr : none;
}

/**
 * arp_solicit() - ask who has @target
 * @st:		stack
 * @l:		link
 * @target:	address to resolve
 * @dst_mac:	NULL to broadcast, or the known MAC for a unicast refresh
 */
void arp_solicit(struct stack *st, struct link *l, struct in_addr target, const uint8_t *dst_mac)
{
	static const uint8_t zero[6];

	stack_count(st, CTR_ARP_REQUEST_OUT);
	arp_send(st, l, ARP_OP_REQUEST, dst_mac ? dst_mac : arp_bcast, zero,
		 arp_source_for(l, target), target);
}

/**
 * arp_announce() - gratuitous ARP request for one of our addresses
 * @st:		stack
 * @l:		link
 * @addr:	our address
 */
void arp_announce(struct stack *st, struct link *l, struct in_addr addr)
{
	static const uint8_t zero[6];

	stack_count(st, CTR_ARP_GRATUITOUS_OUT);
	arp_send(st, l, ARP_OP_REQUEST, arp_bcast, zero, addr, addr);
}
