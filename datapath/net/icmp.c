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
 *
 * ICMPv6 messages have the same layout (RFC 4443 2.1: type, code, checksum,
 * a 32-bit word, a body): icmp_reply_new() and icmp_error_new() build an echo
 * reply and an error for both families, leaving the checksum, which differs
 * (ICMPv6 covers a pseudo-header), and the output to the caller.
 */
#include <arpa/inet.h>
#include <string.h>

#include "datapath/net/net.h"
#include "datapath/wire/proto_hdr.h"
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
	if (icmp_is_error(ic->type) || (ic->type == ICMP_ECHOREPLY && st->upper)) {
		struct net_addr s = { .family = AF_INET, .a.v4 = src }, d = { .family = AF_INET, .a.v4 = dst };

		if (ic->type != ICMP_ECHOREPLY) {
			stack_count(st, CTR_ICMP_ERROR_IN);
			tcp_glue_icmp_error(st, AF_INET, p);
		}
		/* echo replies and errors for the layer above (stack_set_upper()) */
		if (!to_bcast && st->upper)
			st->upper->icmp_input(st->upper_ctx, AF_INET, p, &s, &d);
		return;
	}
	if (ic->type != ICMP_ECHO || ic->code != 0 || to_bcast) {
		stack_drop(st, DROP_ICMP_IGNORED);
		return;
	}
	stack_count(st, CTR_ICMP_ECHO_IN);
	if (st->upper) {
		struct net_addr s = { .family = AF_INET, .a.v4 = src }, d = { .family = AF_INET, .a.v4 = dst };

		if (st->upper->echo_refused(st->upper_ctx, AF_INET, p, &s, &d))
			return;
	}
	r = icmp_reply_new(st, p, ICMP_ECHOREPLY);
	if (!r)
		return;
	rc = (struct icmp_hdr *)pkt_data(r);
	rc->csum = htons(csum_fold(csum_partial(rc, r->len, 0)));
	stack_count(st, CTR_ICMP_ECHO_REPLY_OUT);
	ipv4_output(st, r, dst, src, IPPROTO_ICMP, 64, false);
}

/**
 * icmp_reply_new() - a copy of an echo request with another type (ICMP or ICMPv6)
 * @st:		stack (counts a failed allocation)
 * @req:	the request, ICMP header at pkt_data()
 * @type:	ICMP_ECHOREPLY or ICMP6_ECHO_REPLY
 *
 * Return: the reply with its checksum field 0, or NULL.
 */
struct pkt *icmp_reply_new(struct stack *st, const struct pkt *req, uint8_t type)
{
	struct icmp_hdr *rc;
	struct pkt *r;

	r = pkt_alloc(req->len);
	if (!r) {
		stack_drop(st, DROP_NO_MEMORY);
		return NULL;
	}
	rc = pkt_put(r, req->len);
	memcpy(rc, pkt_data(req), req->len);
	rc->type = type;
	rc->csum = 0;
	return r;
}

/**
 * icmp_error_new() - an ICMP or ICMPv6 error quoting an offending packet
 * @st:		stack (counts a failed allocation)
 * @type:	type
 * @code:	code
 * @info:	host-order value for the second word (next-hop MTU, pointer), 0 if none
 * @ip:		the offending packet, from its IP header
 * @avail:	bytes of it at @ip
 * @max:	the largest error, IP header (@ip_hlen bytes) included: 576 for
 *		IPv4 (RFC 1812 4.3.2.3), 1280 for IPv6 (RFC 4443 2.4 (c))
 * @ip_hlen:	the length of the error's own IP header
 *
 * Return: the message with as much of @ip as fits, its checksum field 0, or
 * NULL.
 */
struct pkt *icmp_error_new(struct stack *st, uint8_t type, uint8_t code, uint32_t info,
			   const void *ip, size_t avail, size_t max, size_t ip_hlen)
{
	size_t quote = avail;
	struct icmp_hdr *ic;
	struct pkt *p;

	if (quote > max - ip_hlen - sizeof(*ic))
		quote = max - ip_hlen - sizeof(*ic);
	p = pkt_alloc(sizeof(*ic) + quote);
	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		return NULL;
	}
	ic = pkt_put(p, sizeof(*ic));
	ic->type = type;
	ic->code = code;
	ic->csum = 0;
	ic->rest = htonl(info);
	memcpy(pkt_put(p, quote), ip, quote);
	return p;
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
	struct in_addr src, dst;
	struct icmp_hdr *ic;
	unsigned int hlen;
	struct pkt *p;
	size_t avail;

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
	p = icmp_error_new(st, type, code, info, ih, avail, ICMP_ERROR_MAX, IPV4_HLEN);
	if (!p)
		return;
	ic = (struct icmp_hdr *)pkt_data(p);
	ic->csum = htons(csum_fold(csum_partial(ic, p->len, 0)));
	stack_count(st, CTR_ICMP_UNREACH_OUT);
	ipv4_output(st, p, dst, src, IPPROTO_ICMP, 64, false);
}
