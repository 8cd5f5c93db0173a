// SPDX-License-Identifier: MIT
/*
 * face_ip.c - the container face's IP layer on the inner link: every packet
 * the container sends, and the IP header of everything it is sent
 *
 * Theory of operation
 *
 * Input (face_ip_rx(), every packet the container sends): the inner link is
 * untrusted, a program with CAP_NET_RAW can write anything. Checked in
 * order, each failure counted in face.drops by its reason: the vnet header
 * (link.c), the IP header (version, length, IPv4 header checksum), a GSO
 * frame whose kind matches its protocol, a source that is one of the
 * container's own addresses, a unicast destination that is not the
 * container itself. IPv6 extension headers are walked (hop-by-hop,
 * destination options, routing with no segments left) up to 8.
 * Fragments (the container's kernel cuts what its programs send over the
 * TUN's MTU, a large UDP datagram) are reassembled with the outer stack's
 * bounded reassembly (frag.c, --reasm-mem: its rules and drop reasons),
 * the whole datagram then goes on like any other (and the outer stack
 * fragments it again for the outer link's MTU). Then by protocol: TCP to the
 * inner engine (face_tcp.c), UDP to its flows (face_udp.c), ICMP and
 * ICMPv6 to face_icmp.c; anything else is answered as a kernel would
 * answer it, with protocol unreachable (ICMPv6 parameter problem, code 1),
 * from the destination.
 *
 * Output (face_ip_output(), everything the face sends the container): an IP
 * header in front of the transport, the TUN the destination's addresses
 * live on, no routing. TCP and UDP leave with partial checksums
 * (NEEDS_CSUM: the container's kernel trusts them, as over a veth) and TCP
 * as GSO frames of up to 64 KiB (tcp_glue.c): the TUN takes them whole.
 *
 * The IP headers are checked and built by the same functions as the outer
 * stack's (ipv4_hdr_check(), ipv6_hdr_check(), ipv4_hdr_build(),
 * ipv6_hdr_build(), net/ipv4.c and net/ipv6.c); what is the face's own is
 * what it counts (face.drops) and what it refuses that a router would pass:
 * a source that is not the container's, a destination that is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "datapath/face/face_int.h"
#include "datapath/link/vnet.h"
#include "datapath/wire/proto_hdr.h"

#define FACE_IPV6_MAX_EXT	8
#define FACE_ICMP4_MAX		576	/* RFC 1812 4.3.2.3 */
#define FACE_ICMP6_MAX		1280	/* RFC 4443 2.4 (c) */
#define FACE_TTL		64

/* The face's count of each fault of ipv4_hdr_check() and ipv6_hdr_check(). */
static const enum face_drop face_ip_fault_drop[IP_HDR_FAULT_MAX] = {
	[IP_HDR_SHORT] = FACE_DROP_BAD_HEADER,
	[IP_HDR_BAD_HEADER] = FACE_DROP_BAD_HEADER,
	[IP_HDR_TRUNCATED] = FACE_DROP_BAD_LENGTH,
	[IP_HDR_BAD_LENGTH] = FACE_DROP_BAD_LENGTH,
	[IP_HDR_BAD_CHECKSUM] = FACE_DROP_BAD_CHECKSUM,
};

/**
 * face_ip_output() - send a transport payload to the container
 * @f:		the face
 * @p:		transport header at pkt_data(), @p->vnet as the transport set
 *		it; given
 * @src:	the source: the remote end the face stands for
 * @dst:	one of the container's addresses
 * @proto:	IP protocol
 *
 * Return: 0 when queued on the TUN, -ENETUNREACH (no face carries @dst) or
 * -ENOBUFS; @p is freed in every case but success.
 */
int face_ip_output(struct face *f, struct pkt *p, const struct net_addr *src, const struct net_addr *dst,
		   uint8_t proto)
{
	struct link *tun = face_tun_for(f, dst);
	size_t total = pkt_total_len(p);

	if (!tun) {
		face_drop(f, FACE_DROP_NO_ROUTE);
		pkt_free(p);
		return -ENETUNREACH;
	}
	if (dst->family == AF_INET) {
		struct ipv4_hdr *ih = pkt_push(p, sizeof(*ih));

		if (!ih || total + sizeof(*ih) > IPV4_MAX_LEN)
			goto nomem;
		total += sizeof(*ih);
		ipv4_hdr_build(ih, p->tos, total, f->ipv4_id, true, FACE_TTL, proto, src->a.v4, dst->a.v4);
		f->ipv4_id = (uint16_t)(f->ipv4_id + vnet_gso_segs(&p->vnet, total - p->vnet.hdr_len));
	} else {
		struct ipv6_hdr *ih = pkt_push(p, sizeof(*ih));

		if (!ih || total > 65535)
			goto nomem;
		ipv6_hdr_build(ih, p->tos, (uint16_t)total, proto, FACE_TTL, &src->a.v6, &dst->a.v6);
	}
	p->ifindex = tun->ifindex;
	face_count(f, FACE_CTR_OUT_PACKETS);
	link_output(tun, p);
	return 0;
nomem:
	face_drop(f, FACE_DROP_NO_MEMORY);
	pkt_free(p);
	return -ENOBUFS;
}

/**
 * face_send_icmp() - an ICMP or ICMPv6 message quoting a packet, to either side
 * @f:		the face
 * @family:	AF_INET (ICMP) or AF_INET6 (ICMPv6)
 * @src:	its source
 * @dst:	its destination
 * @type:	type
 * @code:	code
 * @info:	host-order second word (next-hop MTU, pointer), 0 if none
 * @quote:	the offending packet from its IP header (as much as fits is quoted)
 * @quote_len:	its bytes
 * @to_inner:	to the container through the TUN, else out of the outer stack
 *
 * Errors share the stack's token bucket (stack_icmp_allow()).
 */
void face_send_icmp(struct face *f, uint8_t family, const struct net_addr *src, const struct net_addr *dst,
		    uint8_t type, uint8_t code, uint32_t info, const void *quote, size_t quote_len, bool to_inner)
{
	struct stack *st = f->st;
	struct icmp_hdr *ic;
	struct pkt *p;
	uint8_t proto = family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;

	if (!stack_icmp_allow(st))
		return;
	p = family == AF_INET ? icmp_error_new(st, type, code, info, quote, quote_len, FACE_ICMP4_MAX, IPV4_HLEN) :
				icmp_error_new(st, type, code, info, quote, quote_len, FACE_ICMP6_MAX, IPV6_HLEN);
	if (!p)
		return;
	ic = (struct icmp_hdr *)pkt_data(p);
	ic->csum = family == AF_INET ? htons(csum_fold(csum_partial(ic, p->len, 0))) :
		   htons(csum_pkt_l4(p, csum_pseudo6(&src->a.v6, &dst->a.v6, IPPROTO_ICMPV6, p->len)));
	if (to_inner) {
		face_count(f, FACE_CTR_ICMP_TO_INNER);
		face_ip_output(f, p, src, dst, proto);
		return;
	}
	face_count(f, FACE_CTR_ICMP_TO_OUTER);
	if (family == AF_INET)
		ipv4_output(st, p, src->a.v4, dst->a.v4, IPPROTO_ICMP, FACE_TTL, false);
	else
		ipv6_output(st, NULL, p, &src->a.v6, &dst->a.v6, IPPROTO_ICMPV6, FACE_TTL);
}

/* A destination the container may not send to: its own, multicast, broadcast. */
static enum face_drop face_dst4_bad(const struct face *f, const struct link *tun, struct in_addr d)
{
	uint32_t h = ntohl(d.s_addr);
	struct net_addr a = { .family = AF_INET, .a.v4 = d };
	unsigned int i;

	if (h == 0 || (h >> 24) == 127 || (h >> 24) == 0)
		return FACE_DROP_BAD_DESTINATION;
	if (h == 0xffffffff || (h >> 28) >= 0xe)
		return FACE_DROP_MULTICAST;
	for (i = 0; i < tun->outer->n_addr4; i++) {
		uint8_t plen = tun->outer->addr4[i].prefixlen;
		uint32_t m = plen ? ~0u << (32 - plen) : 0;

		if (plen < 31 && (h & m) == (ntohl(tun->outer->addr4[i].addr.s_addr) & m) && (h | m) == 0xffffffff)
			return FACE_DROP_MULTICAST;	/* directed broadcast */
	}
	if (face_is_container(f, &a))
		return FACE_DROP_TO_SELF;
	return FACE_DROP_MAX;
}

static enum face_drop face_dst6_bad(const struct face *f, const struct in6_addr *d)
{
	static const struct in6_addr loop = IN6ADDR_LOOPBACK_INIT;
	struct net_addr a = { .family = AF_INET6, .a.v6 = *d };

	if (IN6_IS_ADDR_UNSPECIFIED(d) || !memcmp(d, &loop, 16))
		return FACE_DROP_BAD_DESTINATION;
	if (d->s6_addr[0] == 0xff)
		return FACE_DROP_MULTICAST;
	if (face_is_container(f, &a))
		return FACE_DROP_TO_SELF;
	return FACE_DROP_MAX;
}

/* Does a GSO frame's kind fit the packet? (vnet.c checked the header itself) */
static bool face_gso_ok(const struct pkt *p, uint8_t family, uint8_t proto)
{
	uint8_t t = p->vnet.gso_type & ~VIRTIO_NET_HDR_GSO_ECN;

	if (t == VIRTIO_NET_HDR_GSO_NONE)
		return true;
	if (t == VNET_GSO_UDP_L4)
		return proto == IPPROTO_UDP;
	return proto == IPPROTO_TCP &&
	       t == (family == AF_INET ? VIRTIO_NET_HDR_GSO_TCPV4 : VIRTIO_NET_HDR_GSO_TCPV6);
}

/* A packet from the container, its transport header at pkt_data(). */
static void face_deliver(struct face *f, struct pkt *p, uint8_t family, uint8_t proto,
			 const struct net_addr *src, const struct net_addr *dst)
{
	switch (proto) {
	case IPPROTO_TCP:
		face_count(f, FACE_CTR_IN_TCP);
		tcp_glue_segment(f->tcp, p, src, dst);
		return;
	case IPPROTO_UDP:
		face_count(f, FACE_CTR_IN_UDP);
		face_udp_from_inner(f, p, src, dst);
		return;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if ((proto == IPPROTO_ICMP) != (family == AF_INET))
			break;
		face_count(f, FACE_CTR_IN_ICMP);
		face_icmp_from_inner(f, p, family, src, dst);
		return;
	default:
		break;
	}
	face_drop(f, FACE_DROP_UNKNOWN_PROTOCOL);
}

static void face_rx4_deliver(struct face *f, struct pkt *p, const struct ipv4_hdr *ih, unsigned int tot_len,
			     const struct net_addr *src, const struct net_addr *dst);

static void face_rx4(struct face *f, struct link *tun, struct pkt *p)
{
	struct net_addr src = { .family = AF_INET }, dst = { .family = AF_INET };
	const struct ipv4_hdr *ih;
	unsigned int hlen, tot_len;
	enum ip_hdr_fault fault;
	enum face_drop bad;

	/* no BIG TCP from the container: its frames on the TUN are 64 KiB at most */
	fault = ipv4_hdr_check(p, false, &hlen, &tot_len);
	if (fault != IP_HDR_OK) {
		face_drop(f, face_ip_fault_drop[fault]);
		return;
	}
	ih = pkt_peek(p, 0, sizeof(*ih));	/* there: checked */
	if (!face_gso_ok(p, AF_INET, ih->proto)) {
		face_drop(f, FACE_DROP_BAD_GSO);
		return;
	}
	src.a.v4.s_addr = ih->saddr;
	dst.a.v4.s_addr = ih->daddr;
	if (!face_link_has(tun->outer, &src)) {
		face_drop(f, FACE_DROP_BAD_SOURCE);
		return;
	}
	bad = face_dst4_bad(f, tun, dst.a.v4);
	if (bad != FACE_DROP_MAX) {
		face_drop(f, bad);
		return;
	}
	if (ipv4_hdr_pull(p, ih, hlen, tot_len)) {
		/* what a program sent over the TUN's MTU: reassembled as a kernel would */
		struct pkt *whole;

		face_count(f, FACE_CTR_FRAGMENTS_IN);
		if (vnet_is_gso(&p->vnet)) {
			face_drop(f, FACE_DROP_BAD_GSO);
			return;
		}
		whole = ipv4_reasm_input(f->st, p, ih);
		if (!whole)
			return;
		face_count(f, FACE_CTR_REASSEMBLED);
		face_rx4_deliver(f, whole, ih, tot_len, &src, &dst);
		pkt_free(whole);
		return;
	}
	face_rx4_deliver(f, p, ih, tot_len, &src, &dst);
}

/* A whole IPv4 datagram from the container, its transport at pkt_data(). */
static void face_rx4_deliver(struct face *f, struct pkt *p, const struct ipv4_hdr *ih, unsigned int tot_len,
			     const struct net_addr *src, const struct net_addr *dst)
{
	if (ih->proto != IPPROTO_TCP && ih->proto != IPPROTO_UDP && ih->proto != IPPROTO_ICMP) {
		/* RFC 1122 3.2.2.1, as the destination's kernel would answer */
		face_drop(f, FACE_DROP_UNKNOWN_PROTOCOL);
		face_count(f, FACE_CTR_PROTO_UNREACH_SENT);
		face_send_icmp(f, AF_INET, dst, src, ICMP_DEST_UNREACH, ICMP_PROT_UNREACH, 0, ih,
			       tot_len, true);
		return;
	}
	face_deliver(f, p, AF_INET, ih->proto, src, dst);
}

static bool face_ext_header(uint8_t nh)
{
	return nh == 0 /* hop-by-hop */ || nh == 43 /* routing */ || nh == 60 /* destination options */ ||
	       nh == 44 /* fragment */;
}

/*
 * An IPv6 fragment from the container (@e its fragment header at @off):
 * reassembled as a kernel would (frag.c), then delivered whole.
 */
static void face_rx6_fragment(struct face *f, struct pkt *p, const struct ipv6_hdr *ih, size_t off,
			      const uint8_t *e, const struct net_addr *src, const struct net_addr *dst)
{
	uint16_t frag_off = (uint16_t)(e[2] << 8 | e[3]);
	uint32_t id;
	uint8_t nh = e[0];
	struct pkt *whole;

	memcpy(&id, e + 4, 4);
	face_count(f, FACE_CTR_FRAGMENTS_IN);
	if (vnet_is_gso(&p->vnet)) {
		face_drop(f, FACE_DROP_BAD_GSO);
		return;
	}
	p->l3_off = p->off;
	pkt_pull(p, off + 8);
	if (!(frag_off & 0xfff9)) {	/* an atomic fragment: offset 0, no more (RFC 6946) */
		face_deliver(f, p, AF_INET6, nh, src, dst);
		return;
	}
	whole = ipv6_reasm_input(f->st, p, ih, nh, frag_off, id);
	if (!whole)
		return;
	face_count(f, FACE_CTR_REASSEMBLED);
	face_deliver(f, whole, AF_INET6, nh, src, dst);
	pkt_free(whole);
}

static void face_rx6(struct face *f, struct link *tun, struct pkt *p)
{
	struct net_addr src = { .family = AF_INET6 }, dst = { .family = AF_INET6 };
	const struct ipv6_hdr *ih;
	size_t off = sizeof(*ih), plen;
	enum ip_hdr_fault fault;
	enum face_drop bad;
	uint8_t nh, nh_off;
	unsigned int n;

	fault = ipv6_hdr_check(p, &plen);
	if (fault != IP_HDR_OK) {
		face_drop(f, face_ip_fault_drop[fault]);
		return;
	}
	ih = pkt_peek(p, 0, sizeof(*ih));	/* there: checked */
	src.a.v6 = ih->saddr;
	dst.a.v6 = ih->daddr;
	if (!face_link_has(tun->outer, &src)) {
		face_drop(f, FACE_DROP_BAD_SOURCE);
		return;
	}
	bad = face_dst6_bad(f, &dst.a.v6);
	if (bad != FACE_DROP_MAX) {
		face_drop(f, bad);
		return;
	}
	pkt_trim(p, plen + sizeof(*ih));
	nh = ih->nexthdr;
	nh_off = 6;
	for (n = 0; face_ext_header(nh); n++) {
		const uint8_t *e = pkt_peek(p, off, 8);

		if (nh == 44 && e) {
			face_rx6_fragment(f, p, ih, off, e, &src, &dst);
			return;
		}
		if (!e || n >= FACE_IPV6_MAX_EXT || (nh == 43 && e[3] != 0) ||
		    !pkt_peek(p, off, (size_t)(e[1] + 1) * 8)) {
			face_drop(f, FACE_DROP_IPV6_EXT_HEADER);
			return;
		}
		nh_off = (uint8_t)(off < 256 ? off : 0);
		nh = e[0];
		off += (size_t)(e[1] + 1) * 8;
	}
	if (!face_gso_ok(p, AF_INET6, nh)) {
		face_drop(f, FACE_DROP_BAD_GSO);
		return;
	}
	p->l3_off = p->off;
	if (nh != IPPROTO_TCP && nh != IPPROTO_UDP && nh != IPPROTO_ICMPV6) {
		/* RFC 8200 4: parameter problem, code 1, pointing at the field */
		face_drop(f, FACE_DROP_UNKNOWN_PROTOCOL);
		face_count(f, FACE_CTR_PROTO_UNREACH_SENT);
		face_send_icmp(f, AF_INET6, &dst, &src, ICMP6_PARAM_PROB, ICMP6_PARAMPROB_NEXTHEADER, nh_off,
			       pkt_data(p), p->len, true);
		return;
	}
	pkt_pull(p, off);
	face_deliver(f, p, AF_INET6, nh, &src, &dst);
}

/**
 * face_ip_rx() - the TUN's rx_fn: a packet the container sent, borrowed
 * @ctx:	the face
 * @tun:	the TUN it came on
 * @p:		the packet at its IP header
 */
void face_ip_rx(void *ctx, struct link *tun, struct pkt *p)
{
	struct face *f = ctx;
	const uint8_t *v = pkt_peek(p, 0, 1);

	face_count(f, FACE_CTR_IN_PACKETS);
	if (v && (v[0] >> 4) == 4)
		face_rx4(f, tun, p);
	else if (v && (v[0] >> 4) == 6)
		face_rx6(f, tun, p);
	else
		face_drop(f, FACE_DROP_BAD_HEADER);
}
