// SPDX-License-Identifier: MIT
/*
 * icmp.c - ICMP for IPv4 (RFC 792, RFC 1122 3.2.2)
 *
 * Theory of operation: input verifies the checksum (unless the kernel
 * vouched for it through the vnet header), answers echo requests sent to our
 * unicast addresses with the same identifier, sequence and data (RFC 1122
 * 3.2.2.6), ignores echo to broadcast (like Linux's
 * icmp_echo_ignore_broadcasts) and counts errors received; TCP will use
 * fragmentation-needed for path MTU. icmp_send_error() answers a packet we
 * received with an error that quotes its IP header and as much of its
 * payload as keeps the error within 576 bytes (RFC 1812 4.3.2.3), never
 * about an ICMP error, a non-first fragment, or a broadcast or invalid
 * source (RFC 1122 3.2.2), and only while the stack's token bucket allows.
 */
#include <arpa/inet.h>
#include <string.h>

#include "datapath/net/net.h"
#include "datapath/net/proto_hdr.h"
#include "datapath/net/tcp_glue.h"

#define ICMP_ERROR_MAX	576

static bool icmp_is_error(uint8_t type)
{
	return type == ICMP_DEST_UNREACH || type == 4 /* source quench */ || type == 5 ||
	       type == ICMP_TIME_EXCEEDED || type == ICMP_PARAMETERPROB;
}

/**
 * icmp_input() - one ICMP message at pkt_data()
 * @st:		stack
 * @l:		link it arrived on
 * @p:		message, IP header at @p->l3_off; borrowed
 * @src:	IP source
 * @dst:	IP destination
 * @to_bcast:	sent to a broadcast or multicast address
 */
void icmp_input(struct stack *st, struct link *l, struct pkt *p, struct in_addr src,
		struct in_addr dst, bool to_bcast)
{
	const struct icmp_hdr *ic = pkt_peek(p, 0, sizeof(*ic));
	struct icmp_hdr *rc;
	struct pkt *r;

	(void)l;
	stack_count(st, CTR_ICMP_IN);
	if (!ic) {
		stack_drop(st, DROP_TRUNCATED);
		return;
	}
	if (!p->csum_ok && csum_fold(csum_partial(pkt_data(p), p->len, 0)) != 0) {
		stack_drop(st, DROP_BAD_CHECKSUM);
		return;
	}
	if (icmp_is_error(ic->type)) {
		stack_count(st, CTR_ICMP_ERROR_IN);
		tcp_glue_icmp_error(st, AF_INET, p);
		return;
	}
	if (ic->type != ICMP_ECHO || ic->code != 0 || to_bcast) {
		stack_drop(st, DROP_ICMP_IGNORED);
		return;
	}
	stack_count(st, CTR_ICMP_ECHO_IN);
	r = pkt_alloc(p->len);
	if (!r) {
		stack_drop(st, DROP_NO_MEMORY);
		return;
	}
	rc = pkt_put(r, p->len);
	memcpy(rc, pkt_data(p), p->len);
	rc->type = ICMP_ECHOREPLY;
	rc->csum = 0;
	rc->csum = htons(csum_fold(csum_partial(rc, r->len, 0)));
	stack_count(st, CTR_ICMP_ECHO_REPLY_OUT);
	ipv4_output(st, r, dst, src, IPPROTO_ICMP, 64, false);
}

/**
 * icmp_send_error() - answer a received packet with an ICMP error
 * @st:		stack
 * @orig:	the packet; its IPv4 header is at @orig->l3_off in its buffer
 * @type:	ICMP type (3 destination unreachable, ...)
 * @code:	ICMP code
 * @info:	host-order value for the second word (next-hop MTU), 0 if none
 */
void icmp_send_error(struct stack *st, const struct pkt *orig, uint8_t type, uint8_t code,
		     uint32_t info)
{
	const struct ipv4_hdr *ih;
	size_t avail, quote;
	struct in_addr src, dst;
	struct icmp_hdr *ic;
	unsigned int hlen;
	struct pkt *p;

	if (orig->l3_off + sizeof(*ih) > orig->off + orig->len || orig->l3_off > orig->off)
		return;
	ih = (const struct ipv4_hdr *)(orig->buf + orig->l3_off);
	avail = orig->off + orig->len - orig->l3_off;
	hlen = (ih->ver_ihl & 0xf) * 4;
	src.s_addr = ih->saddr;
	dst.s_addr = ih->daddr;
	if (hlen < sizeof(*ih) || hlen > avail || (ntohs(ih->frag_off) & IPV4_OFFMASK))
		return;
	if (!ipv4_is_ours(st, dst) || src.s_addr == INADDR_ANY || (ntohl(src.s_addr) >> 28) >= 0xe)
		return;
	if (ih->proto == IPPROTO_ICMP) {
		const uint8_t *inner = (const uint8_t *)ih + hlen;

		if (avail < hlen + 1 || icmp_is_error(inner[0]))
			return;
	}
	if (!stack_icmp_allow(st))
		return;
	quote = avail;
	if (quote > ICMP_ERROR_MAX - IPV4_HLEN - sizeof(*ic))
		quote = ICMP_ERROR_MAX - IPV4_HLEN - sizeof(*ic);
	p = pkt_alloc(sizeof(*ic) + quote);
	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		return;
	}
	ic = pkt_put(p, sizeof(*ic));
	ic->type = type;
	ic->code = code;
	ic->csum = 0;
	ic->rest = htonl(info);
	memcpy(pkt_put(p, quote), ih, quote);
	ic->csum = htons(csum_fold(csum_partial(pkt_data(p), p->len, 0)));
	stack_count(st, CTR_ICMP_UNREACH_OUT);
	ipv4_output(st, p, dst, src, IPPROTO_ICMP, 64, false);
}
