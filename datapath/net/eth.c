// SPDX-License-Identifier: MIT
/*
 * eth.c - Ethernet II framing
 *
 * Theory of operation: eth_input() accepts a frame addressed to the link's
 * MAC, to broadcast, or to a multicast group (IPv6 NDP and all-nodes arrive
 * as 33:33:xx; the channel socket sees every frame on the wire, so the
 * filtering a NIC would do happens here). Frames sent by ourselves (source =
 * our MAC) are ignored. The Ethernet padding of short frames is left in
 * place: the IP layers trim to their own length fields. VLAN tags and other
 * ethertypes are counted as unknown_ethertype. eth_output() prepends the
 * header into the packet's headroom.
 */
#include <arpa/inet.h>
#include <string.h>

#include "datapath/net/net.h"

struct eth_hdr {
	uint8_t dst[6];
	uint8_t src[6];
	uint16_t type;
} __attribute__((packed));

/**
 * eth_input() - one received frame at pkt_data()
 * @st:	stack
 * @l:	link it arrived on
 * @p:	frame, borrowed
 */
void eth_input(struct stack *st, struct link *l, struct pkt *p)
{
	const struct eth_hdr *eh = pkt_pull(p, sizeof(*eh));

	stack_count(st, CTR_ETH_IN);
	if (!eh) {
		stack_drop(st, DROP_TRUNCATED);
		return;
	}
	if (!memcmp(eh->src, l->mac, 6))
		return;	/* our own frame echoed by another channel */
	if (!(eh->dst[0] & 1) && memcmp(eh->dst, l->mac, 6)) {
		stack_drop(st, DROP_NOT_FOR_US);
		return;
	}
	switch (ntohs(eh->type)) {
	case ETHERTYPE_ARP:
		arp_input(st, l, p);
		break;
	case ETHERTYPE_IPV4:
		ipv4_input(st, l, p);
		break;
	case ETHERTYPE_IPV6:
		ipv6_input(st, l, p);
		break;
	default:
		stack_drop(st, DROP_UNKNOWN_ETHERTYPE);
		break;
	}
}

/**
 * eth_output() - prepend the Ethernet header and queue on the link
 * @l:		link
 * @dst_mac:	destination
 * @ethertype:	host order
 * @p:		packet at the network header; given
 */
void eth_output(struct link *l, const uint8_t *dst_mac, uint16_t ethertype, struct pkt *p)
{
	struct eth_hdr *eh = pkt_push(p, sizeof(*eh));

	if (!eh) {
		link_drop(l, DROP_NO_MEMORY);
		pkt_free(p);
		return;
	}
	memcpy(eh->dst, dst_mac, 6);
	memcpy(eh->src, l->mac, 6);
	eh->type = htons(ethertype);
	p->ifindex = l->ifindex;
	link_output(l, p);
}
