// SPDX-License-Identifier: MIT
/*
 * icmpv6.c - ICMPv6 (RFC 4443) and Neighbor Discovery (RFC 4861, DAD RFC 4862)
 *
 * Theory of operation
 *
 * Every message's checksum (pseudo-header included) is verified unless the
 * kernel vouched for it. Echo requests to our unicast addresses are answered;
 * errors received are counted (TCP will use packet-too-big). Errors we send
 * quote as much of the offending packet as fits in the IPv6 minimum MTU
 * (RFC 4443 2.4 (c)), never about an error or a multicast destination, and
 * share the stack's rate limit.
 *
 * NDP: NS and NA are accepted only with hop limit 255 and code 0, at least
 * 24 bytes, a non-multicast target and well-formed options (length 0 is
 * invalid: RFC 4861 7.1.1); failures count as ndp_bad. The neighbour cache
 * is neigh.c's, shared with ARP.
 * - NS for one of our preferred addresses: learn the sender's link-layer
 *   address option (STALE, RFC 4861 7.2.3) and answer a solicited NA with
 *   our MAC. NS from :: (another node's DAD) for a preferred address is
 *   answered to all-nodes; for a tentative one it means the address is
 *   taken: DAD failed.
 * - NA: a target that is our tentative address fails DAD; otherwise it
 *   updates an existing cache entry (REACHABLE if solicited).
 * - DAD (RFC 4862 5.4): every address starts tentative unless configured
 *   nodad; ndp_dad_start() sends one NS from :: to the solicited-node group,
 *   and ndp_dad_timer() makes it preferred 1 s later if nobody objected,
 *   then announces it with an unsolicited NA to all-nodes. A link without a
 *   link-local address gets one from its MAC (modified EUI-64, RFC 4291 A).
 * Router solicitation/advertisement and redirects are ignored: routes come
 * from netsetup.
 */
#include <arpa/inet.h>
#include <string.h>

#include "datapath/net/net.h"
#include "datapath/wire/proto_hdr.h"
#include "datapath/net/tcp_glue.h"

#define NDP_HLEN	24	/* type, code, csum, flags/reserved, target */
#define NDP_OPT_SLLA	1
#define NDP_OPT_TLLA	2
#define NA_F_ROUTER	0x80
#define NA_F_SOLICITED	0x40
#define NA_F_OVERRIDE	0x20
#define ICMP6_ERROR_MAX	1280
#define DAD_WAIT_MS	1000

static const struct in6_addr in6_all_nodes = { .s6_addr = { 0xff, 0x02, [15] = 1 } };

static bool icmpv6_is_error(uint8_t type)
{
	return type < 128;
}

static uint16_t icmpv6_csum(const struct pkt *p, const struct in6_addr *src,
			    const struct in6_addr *dst)
{
	return csum_pkt_l4(p, csum_pseudo6(src, dst, IPPROTO_ICMPV6, pkt_total_len(p)));
}

static bool ipv6_unspec(const struct in6_addr *a)
{
	static const struct in6_addr any;

	return !memcmp(a, &any, 16);
}

/* Walk the options; return false on a malformed one, set *lla if found. */
static bool ndp_options(const uint8_t *opt, size_t len, uint8_t want, const uint8_t **lla)
{
	*lla = NULL;
	while (len) {
		size_t olen;

		if (len < 2 || opt[1] == 0)
			return false;
		olen = (size_t)opt[1] * 8;
		if (olen > len)
			return false;
		if (opt[0] == want && olen >= 8)
			*lla = opt + 2;
		opt += olen;
		len -= olen;
	}
	return true;
}

static void ndp_send_na(struct stack *st, struct link *l, const struct in6_addr *target,
			const struct in6_addr *dst, uint8_t flags, const uint8_t *dst_mac)
{
	struct pkt *p = pkt_alloc(NDP_HLEN + 8);
	struct in6_addr src = *target;
	uint8_t *m;

	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		return;
	}
	m = pkt_put(p, NDP_HLEN + 8);
	if (!m) {
		pkt_free(p);
		return;
	}
	memset(m, 0, NDP_HLEN + 8);
	m[0] = ND_NEIGHBOR_ADVERT;
	m[4] = flags;
	memcpy(m + 8, target, 16);
	m[24] = NDP_OPT_TLLA;
	m[25] = 1;
	memcpy(m + 26, l->mac, 6);
	{
		uint16_t c = htons(icmpv6_csum(p, &src, dst));

		memcpy(m + 2, &c, 2);
	}
	stack_count(st, CTR_NDP_NA_OUT);
	if (dst_mac)
		ipv6_output_mac(st, l, p, &src, dst, IPPROTO_ICMPV6, 255, dst_mac);
	else
		ipv6_output(st, l, p, &src, dst, IPPROTO_ICMPV6, 255);
}

/**
 * ndp_solicit() - send a neighbour solicitation for @target
 * @st:		stack
 * @l:		link
 * @target:	address to resolve
 * @unicast:	refresh a known entry: send to @target at @dst_mac
 * @dst_mac:	known MAC when @unicast
 */
void ndp_solicit(struct stack *st, struct link *l, const struct in6_addr *target, bool unicast,
		 const uint8_t *dst_mac)
{
	struct in6_addr src, dst;
	uint8_t mac[6];
	struct pkt *p;
	uint8_t *m;
	uint16_t c;

	if (ipv6_pick_src(st, l, target, &src) < 0)
		return;
	if (unicast) {
		dst = *target;
		memcpy(mac, dst_mac, 6);
	} else {
		ipv6_solicited_node(target, &dst);
		mac[0] = 0x33;
		mac[1] = 0x33;
		memcpy(mac + 2, &dst.s6_addr[12], 4);
	}
	p = pkt_alloc(NDP_HLEN + 8);
	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		return;
	}
	m = pkt_put(p, NDP_HLEN + 8);
	if (!m) {
		pkt_free(p);
		return;
	}
	memset(m, 0, NDP_HLEN + 8);
	m[0] = ND_NEIGHBOR_SOLICIT;
	memcpy(m + 8, target, 16);
	m[24] = NDP_OPT_SLLA;
	m[25] = 1;
	memcpy(m + 26, l->mac, 6);
	c = htons(icmpv6_csum(p, &src, &dst));
	memcpy(m + 2, &c, 2);
	stack_count(st, CTR_NDP_NS_OUT);
	ipv6_output_mac(st, l, p, &src, &dst, IPPROTO_ICMPV6, 255, mac);
}

static void ndp_dad_probe(struct stack *st, struct link *l, struct link_addr6 *a)
{
	static const struct in6_addr any;
	struct in6_addr dst;
	uint8_t mac[6] = { 0x33, 0x33 };
	struct pkt *p = pkt_alloc(NDP_HLEN);
	uint8_t *m;
	uint16_t c;

	a->dad_ms = stack_now_ms(st);
	a->dad_probes++;
	if (!p)
		return;
	ipv6_solicited_node(&a->addr, &dst);
	memcpy(mac + 2, &dst.s6_addr[12], 4);
	m = pkt_put(p, NDP_HLEN);
	if (!m) {
		pkt_free(p);
		return;
	}
	memset(m, 0, NDP_HLEN);
	m[0] = ND_NEIGHBOR_SOLICIT;
	memcpy(m + 8, &a->addr, 16);
	c = htons(icmpv6_csum(p, &any, &dst));
	memcpy(m + 2, &c, 2);
	stack_count(st, CTR_NDP_NS_OUT);
	ipv6_output_mac(st, l, p, &any, &dst, IPPROTO_ICMPV6, 255, mac);
}

/**
 * ndp_dad_start() - start DAD for the link's tentative addresses
 * @st:	stack
 * @l:	link being attached
 */
void ndp_dad_start(struct stack *st, struct link *l)
{
	unsigned int i;
	bool has_ll = false;

	for (i = 0; i < l->n_addr6; i++)
		if (l->addr6[i].addr.s6_addr[0] == 0xfe && (l->addr6[i].addr.s6_addr[1] & 0xc0) == 0x80)
			has_ll = true;
	if (!has_ll && l->n_addr6 < LINK_MAX_ADDR6) {
		struct link_addr6 *a = &l->addr6[l->n_addr6++];

		memset(a, 0, sizeof(*a));
		a->addr.s6_addr[0] = 0xfe;
		a->addr.s6_addr[1] = 0x80;
		a->addr.s6_addr[8] = l->mac[0] ^ 0x02;
		a->addr.s6_addr[9] = l->mac[1];
		a->addr.s6_addr[10] = l->mac[2];
		a->addr.s6_addr[11] = 0xff;
		a->addr.s6_addr[12] = 0xfe;
		a->addr.s6_addr[13] = l->mac[3];
		a->addr.s6_addr[14] = l->mac[4];
		a->addr.s6_addr[15] = l->mac[5];
		a->prefixlen = 64;
		a->state = ADDR6_TENTATIVE;
	}
	for (i = 0; i < l->n_addr6; i++)
		if (l->addr6[i].state == ADDR6_TENTATIVE)
			ndp_dad_probe(st, l, &l->addr6[i]);
}

/**
 * ndp_dad_timer() - tentative addresses nobody objected to become preferred
 *
 * Return: true while an address is still tentative.
 */
bool ndp_dad_timer(struct stack *st)
{
	uint64_t now = stack_now_ms(st);
	unsigned int i, j;
	bool busy = false;

	for (i = 0; i < st->n_links; i++) {
		struct link *l = st->links[i];

		for (j = 0; j < l->n_addr6; j++) {
			struct link_addr6 *a = &l->addr6[j];
			uint8_t mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };

			if (a->state != ADDR6_TENTATIVE)
				continue;
			if (now - a->dad_ms < DAD_WAIT_MS) {
				busy = true;
				continue;
			}
			a->state = ADDR6_PREFERRED;
			stack_count(st, CTR_NDP_DAD_OK);
			ndp_send_na(st, l, &a->addr, &in6_all_nodes, NA_F_OVERRIDE, mac);
		}
	}
	return busy;
}

static void ndp_input(struct stack *st, struct link *l, struct pkt *p, const struct in6_addr *src,
		      const struct in6_addr *dst, uint8_t hop_limit)
{
	const uint8_t *m = pkt_peek(p, 0, NDP_HLEN);
	struct link_addr6 *ours;
	struct link *owner = NULL;
	union proto_inaddr tgt;
	const uint8_t *lla;
	bool ns;

	if (!m || hop_limit != 255 || m[1] != 0) {
		stack_drop(st, DROP_NDP_BAD);
		return;
	}
	ns = m[0] == ND_NEIGHBOR_SOLICIT;
	stack_count(st, ns ? CTR_NDP_NS_IN : CTR_NDP_NA_IN);
	memcpy(&tgt.v6, m + 8, 16);
	if (tgt.v6.s6_addr[0] == 0xff ||
	    !ndp_options(m + NDP_HLEN, p->len - NDP_HLEN, ns ? NDP_OPT_SLLA : NDP_OPT_TLLA, &lla)) {
		stack_drop(st, DROP_NDP_BAD);
		return;
	}
	ours = ipv6_find_addr(st, &tgt.v6, &owner);
	if (ours && owner != l)
		ours = NULL;
	if (ns) {
		if (ipv6_unspec(src)) {
			if (lla || dst->s6_addr[0] != 0xff) {
				stack_drop(st, DROP_NDP_BAD);
				return;
			}
			if (!ours)
				return;
			if (ours->state == ADDR6_TENTATIVE) {
				ours->state = ADDR6_DUPLICATE;
				stack_count(st, CTR_NDP_DAD_FAILED);
			} else if (ours->state == ADDR6_PREFERRED) {
				uint8_t mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };

				ndp_send_na(st, l, &tgt.v6, &in6_all_nodes, NA_F_OVERRIDE, mac);
			}
			return;
		}
		if (!ours || ours->state != ADDR6_PREFERRED)
			return;
		if (lla) {
			union proto_inaddr s;

			memcpy(&s.v6, src, 16);
			neigh_update(st, l, AF_INET6, &s, lla, true, false);
		}
		ndp_send_na(st, l, &tgt.v6, src, NA_F_SOLICITED | NA_F_OVERRIDE, lla);
		return;
	}
	/* NA */
	if ((m[4] & NA_F_SOLICITED) && dst->s6_addr[0] == 0xff) {
		stack_drop(st, DROP_NDP_BAD);
		return;
	}
	if (ours) {
		if (ours->state == ADDR6_TENTATIVE) {
			ours->state = ADDR6_DUPLICATE;
			stack_count(st, CTR_NDP_DAD_FAILED);
		}
		return;
	}
	if (lla)
		neigh_update(st, l, AF_INET6, &tgt, lla, false, m[4] & NA_F_SOLICITED);
}

/**
 * icmpv6_input() - one ICMPv6 message at pkt_data()
 * @st:		stack
 * @l:		link it arrived on
 * @p:		message, IPv6 header at @p->l3_off; borrowed
 * @src:	IPv6 source
 * @dst:	IPv6 destination
 * @hop_limit:	from the IPv6 header (NDP needs 255)
 */
static void icmpv6_to_upper(struct stack *st, const struct pkt *p, const struct in6_addr *src,
			   const struct in6_addr *dst);

void icmpv6_input(struct stack *st, struct link *l, struct pkt *p, const struct in6_addr *src,
		  const struct in6_addr *dst, uint8_t hop_limit)
{
	const struct icmp_hdr *ic = pkt_peek(p, 0, 4);
	struct in6_addr rsrc;
	struct icmp_hdr *rc;
	struct pkt *r;

	stack_count(st, CTR_ICMPV6_IN);
	if (!ic) {
		stack_drop(st, DROP_TRUNCATED);
		return;
	}
	if (!p->csum_ok && icmpv6_csum(p, src, dst) != 0) {
		stack_drop(st, DROP_BAD_CHECKSUM);
		return;
	}
	if (icmpv6_is_error(ic->type)) {
		stack_count(st, CTR_ICMPV6_ERROR_IN);
		tcp_glue_icmp_error(st, AF_INET6, p);
		icmpv6_to_upper(st, p, src, dst);
		return;
	}
	switch (ic->type) {
	case ND_NEIGHBOR_SOLICIT:
	case ND_NEIGHBOR_ADVERT:
		ndp_input(st, l, p, src, dst, hop_limit);
		return;
	case ICMP6_ECHO_REPLY:
		icmpv6_to_upper(st, p, src, dst);
		return;
	case ICMP6_ECHO_REQUEST:
		break;
	default:
		stack_drop(st, DROP_ICMP_IGNORED);
		return;
	}
	if (ic->code != 0 || dst->s6_addr[0] == 0xff || p->len < 8) {
		stack_drop(st, DROP_ICMP_IGNORED);
		return;
	}
	stack_count(st, CTR_ICMPV6_ECHO_IN);
	if (st->upper) {
		struct net_addr s = { .family = AF_INET6, .a.v6 = *src }, d = { .family = AF_INET6, .a.v6 = *dst };

		if (st->upper->echo_refused(st->upper_ctx, AF_INET6, p, &s, &d))
			return;
	}
	rsrc = *dst;
	r = icmp_reply_new(st, p, ICMP6_ECHO_REPLY);
	if (!r)
		return;
	rc = (struct icmp_hdr *)pkt_data(r);
	rc->csum = htons(icmpv6_csum(r, &rsrc, src));
	stack_count(st, CTR_ICMPV6_ECHO_REPLY_OUT);
	ipv6_output(st, l, r, &rsrc, src, IPPROTO_ICMPV6, 64);
}

/* An echo reply or an error that may be the layer above's (stack_set_upper()). */
static void icmpv6_to_upper(struct stack *st, const struct pkt *p, const struct in6_addr *src,
			   const struct in6_addr *dst)
{
	struct net_addr s = { .family = AF_INET6, .a.v6 = *src }, d = { .family = AF_INET6, .a.v6 = *dst };

	if (st->upper)
		st->upper->icmp_input(st->upper_ctx, AF_INET6, p, &s, &d);
	else if (p->len >= 1 && pkt_data(p)[0] == ICMP6_ECHO_REPLY)
		stack_drop(st, DROP_ICMP_IGNORED);
}

/**
 * icmpv6_send_error() - answer a received packet with an ICMPv6 error
 * @st:		stack
 * @l:		link it arrived on
 * @orig:	the packet; its IPv6 header is at @orig->l3_off in its buffer
 * @type:	ICMPv6 type
 * @code:	code
 * @info:	host-order value for the second word (pointer, MTU)
 */
void icmpv6_send_error(struct stack *st, struct link *l, const struct pkt *orig, uint8_t type,
		       uint8_t code, uint32_t info)
{
	const struct ipv6_hdr *h;
	struct in6_addr src, dst;
	struct icmp_hdr *ic;
	struct pkt *p;
	size_t avail;

	if (orig->l3_off > orig->off || orig->l3_off + sizeof(*h) > orig->off + orig->len)
		return;
	h = (const struct ipv6_hdr *)(orig->buf + orig->l3_off);
	avail = orig->off + orig->len - orig->l3_off;
	memcpy(&dst, &h->saddr, 16);
	memcpy(&src, &h->daddr, 16);
	if (src.s6_addr[0] == 0xff || dst.s6_addr[0] == 0xff || ipv6_unspec(&dst))
		return;
	if (h->nexthdr == IPPROTO_ICMPV6 && avail > sizeof(*h) &&
	    icmpv6_is_error(((const uint8_t *)h)[sizeof(*h)]))
		return;
	if (!ipv6_find_addr(st, &src, NULL) || !stack_icmp_allow(st))
		return;
	p = icmp_error_new(st, type, code, info, h, avail, ICMP6_ERROR_MAX, IPV6_HLEN);
	if (!p)
		return;
	ic = (struct icmp_hdr *)pkt_data(p);
	ic->csum = htons(icmpv6_csum(p, &src, &dst));
	stack_count(st, CTR_ICMPV6_UNREACH_OUT);
	ipv6_output(st, l, p, &src, &dst, IPPROTO_ICMPV6, 64);
}
