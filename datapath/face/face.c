// SPDX-License-Identifier: MIT
/*
 * face.c - the container face: the object, its IP layer on the inner link,
 * and its statistics
 *
 * Theory of operation
 *
 * Without a face the datapath serves a container's addresses: its own
 * programs have no network. With one, they keep their kernel's socket API
 * and get everything through the stack:
 *
 *   programs -> the container kernel's sockets -> the TUN (inner link, tun.c)
 *     -> here: TCP, UDP and ICMP terminated and re-originated
 *     -> the outer stack -> AF_PACKET on eth0 (the outer link) -> the network
 *
 * netsetup made the TUN in the container's netns, moved the container's
 * addresses and routes onto it, and stopped the container's kernel from
 * seeing the outer link (an nftables ingress drop, disable_ipv6). The
 * datapath therefore stands on both sides: towards the network it is the
 * container (the outer stack holds the container's addresses), towards the
 * container's kernel it is the whole network (every destination is "us" on
 * the TUN). Nothing is routed or forwarded: every connection and datagram is
 * received by one side and sent anew by the other, so the container's
 * kernel only ever receives packets the datapath built, and the network only
 * ever receives packets the outer stack built. The sender's TTL, IP options,
 * TCP sequence numbers and options do not cross (the isolation a
 * terminating proxy gives: a peer's crafted segments never reach a kernel's
 * TCP).
 *
 * Input (face_rx(), every packet the container sends): the inner link is
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
 * The outer stack hands over what is for the container through what the
 * face registered with it (the stack names no face): the outer engine's
 * catch-all listener (SYNs to ports no --publish takes), and, as the
 * stack's upper layer (face_upper_ops, stack_set_upper()), UDP for a port no
 * stack socket holds (face_udp_from_outer()), ICMP echo replies and errors
 * (face_icmp_from_outer()) and echo requests the policy may refuse.
 *
 * Time: one timer a second ages UDP and echo flows out. Everything else is
 * driven by packets and by the end of the loop turn, in the stack's phases
 * (stack_on_turn_end()): face_pump() before the links are flushed,
 * face_turn_end() after.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datapath/face/face_int.h"
#include "datapath/link/vnet.h"
#include "datapath/wire/proto_hdr.h"
#include "common/out.h"

#define FACE_SWEEP_MS		1000
#define FACE_IPV6_MAX_EXT	8
#define FACE_ICMP4_MAX		576	/* RFC 1812 4.3.2.3 */
#define FACE_ICMP6_MAX		1280	/* RFC 4443 2.4 (c) */
#define FACE_TTL		64

#define FACE_X_NAME(name) #name,
static const char *const face_drop_names[] = { FACE_DROP_LIST(FACE_X_NAME) };
static const char *const face_ctr_names[] = { FACE_CTR_LIST(FACE_X_NAME) };
_Static_assert(sizeof(face_drop_names) / sizeof(face_drop_names[0]) == FACE_DROP_MAX, "drop names");
_Static_assert(sizeof(face_ctr_names) / sizeof(face_ctr_names[0]) == FACE_CTR_MAX, "counter names");

/* "BAD_HEADER" -> "bad_header", the JSON key */
static void face_key(const char *name, char *buf, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		buf[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
	buf[i] = '\0';
}

/**
 * face_drop_name() - the name of a drop reason, as stats print it
 */
const char *face_drop_name(unsigned int d)
{
	return d < FACE_DROP_MAX ? face_drop_names[d] : "?";
}

static bool face_link_has(const struct link *outer, const struct net_addr *a)
{
	unsigned int i;

	if (a->family == AF_INET) {
		for (i = 0; i < outer->n_addr4; i++)
			if (outer->addr4[i].addr.s_addr == a->a.v4.s_addr)
				return true;
	} else if (a->family == AF_INET6) {
		for (i = 0; i < outer->n_addr6; i++)
			if (!memcmp(&outer->addr6[i].addr, &a->a.v6, 16))
				return true;
	}
	return false;
}

/**
 * face_tun_for() - the TUN the container's address @container lives on
 * Return: the link, or NULL when no face carries that address.
 */
struct link *face_tun_for(const struct face *f, const struct net_addr *container)
{
	unsigned int i;

	for (i = 0; i < f->n_tuns; i++)
		if (face_link_has(f->tuns[i]->outer, container))
			return f->tuns[i];
	return NULL;
}

/**
 * face_is_container() - is @a one of the addresses a face carries?
 */
bool face_is_container(const struct face *f, const struct net_addr *a)
{
	return face_tun_for(f, a) != NULL;
}

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
		ih->ver_ihl = 0x45;
		ih->tos = p->tos;
		ih->tot_len = htons((uint16_t)total);
		ih->id = htons(f->ipv4_id);
		f->ipv4_id = (uint16_t)(f->ipv4_id + vnet_gso_segs(&p->vnet, total - p->vnet.hdr_len));
		ih->frag_off = htons(IPV4_DF);
		ih->ttl = FACE_TTL;
		ih->proto = proto;
		ih->csum = 0;
		ih->saddr = src->a.v4.s_addr;
		ih->daddr = dst->a.v4.s_addr;
		ih->csum = htons(csum_fold(csum_partial(ih, sizeof(*ih), 0)));
	} else {
		struct ipv6_hdr *ih = pkt_push(p, sizeof(*ih));

		if (!ih || total > 65535)
			goto nomem;
		ih->ver_tc_flow = htonl(6u << 28 | (uint32_t)p->tos << 20);
		ih->payload_len = htons((uint16_t)total);
		ih->nexthdr = proto;
		ih->hop_limit = FACE_TTL;
		ih->saddr = src->a.v6;
		ih->daddr = dst->a.v6;
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
	const struct ipv4_hdr *ih = pkt_peek(p, 0, sizeof(*ih));
	struct net_addr src = { .family = AF_INET }, dst = { .family = AF_INET };
	unsigned int hlen, tot_len;
	enum face_drop bad;

	if (!ih || (ih->ver_ihl & 0xf) < 5) {
		face_drop(f, FACE_DROP_BAD_HEADER);
		return;
	}
	hlen = (ih->ver_ihl & 0xfu) * 4;
	tot_len = ntohs(ih->tot_len);
	if (!pkt_peek(p, 0, hlen) || tot_len < hlen || tot_len > p->len) {
		face_drop(f, FACE_DROP_BAD_LENGTH);
		return;
	}
	if (csum_fold(csum_partial(ih, hlen, 0)) != 0) {
		face_drop(f, FACE_DROP_BAD_CHECKSUM);
		return;
	}
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
	p->l3_off = p->off;
	pkt_trim(p, tot_len);
	pkt_pull(p, hlen);
	if (ntohs(ih->frag_off) & (IPV4_MF | IPV4_OFFMASK)) {
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
	const struct ipv6_hdr *ih = pkt_peek(p, 0, sizeof(*ih));
	struct net_addr src = { .family = AF_INET6 }, dst = { .family = AF_INET6 };
	size_t off = sizeof(*ih), plen;
	enum face_drop bad;
	uint8_t nh, nh_off;
	unsigned int n;

	if (!ih) {
		face_drop(f, FACE_DROP_BAD_HEADER);
		return;
	}
	plen = ntohs(ih->payload_len);
	if (plen + sizeof(*ih) > p->len || (!plen && p->len > sizeof(*ih))) {
		face_drop(f, FACE_DROP_BAD_LENGTH);
		return;
	}
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

/* The TUN's rx_fn: a packet the container sent, borrowed. */
static void face_rx(void *ctx, struct link *tun, struct pkt *p)
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

static void face_sweep(struct loop_timer *t)
{
	struct face *f = t->ctx;
	uint64_t now = loop_now_ms(f->st->loop);

	face_udp_sweep(f, now);
	face_icmp_sweep(f, now);
	loop_timer_arm(f->st->loop, &f->sweep, FACE_SWEEP_MS);
}

/* The inner engine's segments go straight into the TUN of their destination. */
static struct link *face_tcp_link_for(void *ctx, const struct net_addr *dst)
{
	return face_tun_for(ctx, dst);
}

static bool face_tcp_hop_ready(void *ctx, const struct net_addr *dst)
{
	(void)ctx;
	(void)dst;
	return true;	/* a TUN write is at once: borrow, do not copy */
}

static int face_tcp_output(void *ctx, struct pkt *p, const struct net_addr *src, const struct net_addr *dst)
{
	return face_ip_output(ctx, p, src, dst, IPPROTO_TCP);
}

static const struct tcp_glue_ops face_tcp_ops = {
	.link_for = face_tcp_link_for,
	.hop_ready = face_tcp_hop_ready,
	.output = face_tcp_output,
};

/* STACK_TURN_HAND_DOWN: move what connection pairs received to their other
 * end, and send the UDP trains. */
static void face_pump(void *ctx, bool links_idle)
{
	(void)links_idle;
	face_tcp_pump(ctx);
	face_udp_flush(ctx);
}

/* STACK_TURN_FLUSHED: the inner engine's end of turn (timers, retired memory). */
static void face_turn_end(void *ctx, bool links_idle)
{
	struct face *f = ctx;

	tcp_glue_turn_end(f->tcp, links_idle);
}

static bool face_upper_udp(void *ctx, const struct net_addr *src, uint16_t sport, const struct net_addr *dst,
			   uint16_t dport, const uint8_t *data, size_t len)
{
	return face_udp_from_outer(ctx, src, sport, dst, dport, data, len);
}

static void face_upper_icmp(void *ctx, uint8_t family, const struct pkt *p, const struct net_addr *src,
			    const struct net_addr *dst)
{
	face_icmp_from_outer(ctx, family, p, src, dst);
}

static bool face_upper_echo(void *ctx, uint8_t family, const struct pkt *p, const struct net_addr *src,
			    const struct net_addr *dst)
{
	return face_icmp_echo_refused(ctx, family, p, src, dst);
}

static void face_free(struct face *f);

static void face_upper_free(void *ctx)
{
	face_free(ctx);
}

/* What the outer stack hands up that is not its own (stack_set_upper()). */
static const struct stack_upper_ops face_upper_ops = {
	.udp_input = face_upper_udp,
	.icmp_input = face_upper_icmp,
	.echo_refused = face_upper_echo,
	.free = face_upper_free,
};

/**
 * face_of() - the container face of @st, or NULL when it has none
 */
struct face *face_of(const struct stack *st)
{
	return st->upper == &face_upper_ops ? st->upper_ctx : NULL;
}

static struct face *face_new(struct stack *st)
{
	struct face *f = calloc(1, sizeof(*f));
	const struct stack_limits *lim = &st->limits;

	if (!f)
		return NULL;
	f->st = st;
	f->ipv4_id = (uint16_t)(loop_now_ms(st->loop) * 40503u);
	loop_timer_init(&f->sweep, face_sweep, f);
	f->tcp = tcp_glue_new(st, &face_tcp_ops, f);
	if (!f->tcp || stack_key_engine(st, tcp_glue_engine(f->tcp), "face") < 0)
		goto err;
	/* the container side gets the same caps as the network side */
	if (tcp_stack_set_limits(tcp_glue_engine(f->tcp), lim->max_conns, lim->max_half_open,
				 lim->max_timewait, lim->tcp_mem) < 0)
		goto err;
	if (face_udp_init(f) < 0 || face_tcp_init(f) < 0)
		goto err;
	return f;
err:
	face_free(f);
	return NULL;
}

/*
 * The stack's first face: made, and registered as the stack's upper layer
 * and in both phases of its turn end; on failure nothing stays registered.
 */
static int face_register(struct stack *st, struct face **fp)
{
	struct face *f = face_new(st);
	int ret;

	if (!f)
		return -ENOMEM;
	ret = stack_set_upper(st, &face_upper_ops, f);
	if (ret < 0)
		goto err;
	ret = stack_on_turn_end(st, STACK_TURN_HAND_DOWN, face_pump, f);
	if (ret < 0)
		goto err_upper;
	ret = stack_on_turn_end(st, STACK_TURN_FLUSHED, face_turn_end, f);
	if (ret < 0)
		goto err_pump;
	*fp = f;
	return 0;
err_pump:
	stack_off_turn_end(st, face_pump, f);
err_upper:
	stack_set_upper(st, NULL, NULL);
err:
	face_free(f);
	return ret;
}

/**
 * face_add() - give the outer link @outer its container face
 * @st:		the stack; its face is made with the first call
 * @outer:	the packet link whose addresses the TUN carries
 * @cfg:	the FACE netsetup sent; its fds (a queue each) move to the TUN link
 * @err:	on failure, why, in words
 * @err_len:	size of @err
 *
 * Return: 0, or negative errno with @err filled.
 */
int face_add(struct stack *st, struct link *outer, struct proto_face *cfg, char *err, size_t err_len)
{
	struct face *f = face_of(st);
	struct link *tun;
	int ret;

	if (!f) {
		ret = face_register(st, &f);
		if (ret < 0) {
			proto_fds_close(cfg->fds, cfg->n_fds);
			cfg->n_fds = 0;
			snprintf(err, err_len, "face %s: %s", cfg->ifname,
				 ret == -ENOMEM ? "out of memory" : "the stack has no room for its hooks");
			return ret;
		}
	}
	if (f->n_tuns >= PROTO_MAX_LINKS) {
		snprintf(err, err_len, "face %s: too many faces", cfg->ifname);
		return -ENOSPC;
	}
	tun = link_tun_new(st->loop, cfg, outer, err, err_len);
	if (!tun)
		return -ENOMEM;
	ret = stack_add_inner_link(st, tun);
	if (ret < 0) {
		snprintf(err, err_len, "face %s: too many inner links", cfg->ifname);
		link_free(tun);
		return ret;
	}
	tun->rx_fn = face_rx;
	tun->rx_ctx = f;
	f->tuns[f->n_tuns++] = tun;
	face_netstat_take(f, cfg);
	return 0;
}

/**
 * face_start() - start ageing flows (the TUNs start with the stack's links)
 * Return: 0.
 */
int face_start(struct face *f)
{
	if (!f)
		return 0;
	f->started = true;
	loop_timer_arm(f->st->loop, &f->sweep, FACE_SWEEP_MS);
	return 0;
}

/**
 * face_free() - end every connection pair, free the flows and the engine
 * (the stack calls it through face_upper_ops when it goes)
 * @f:	the face, or NULL
 *
 * The TUN links belong to the stack (stack_fini() frees them after this).
 */
static void face_free(struct face *f)
{
	if (!f)
		return;
	loop_timer_cancel(f->st->loop, &f->sweep);
	face_tcp_fini(f);
	face_udp_fini(f);
	face_icmp_fini(f);
	face_netstat_close(f);
	tcp_glue_free(f->tcp);
	free(f);
}

/**
 * face_tcp_engine() - the face's TCP engine (the container side), for the
 * limits of `datapath stats`
 */
struct tcp_stack *face_tcp_engine(const struct face *f)
{
	return tcp_glue_engine(f->tcp);
}

/**
 * face_tcp_glue() - the face's TCP instance, for `datapath ss` and its traces
 * @f:	the face, or NULL
 *
 * Return: the instance, NULL without a face.
 */
struct tcp_glue *face_tcp_glue(const struct face *f)
{
	return f ? f->tcp : NULL;
}

/* The rows of struct face_totals: the summary's "totals" that are the face's. */
static const struct stat_desc face_totals_rows[] = {
	{ .key = "tcp_outbound", .offset = STAT_AT(struct face_totals, tcp_outbound), .kind = STAT_COUNTER,
	  .family = "sandnet_tcp_connections_opened_total",
	  .help = "TCP connections through the container face, by who opened them (outbound: the container).",
	  .label = "direction", .value = "outbound" },
	{ .key = "tcp_inbound", .offset = STAT_AT(struct face_totals, tcp_inbound), .kind = STAT_COUNTER,
	  .label = "direction", .value = "inbound" },
	{ .key = "udp_flows", .offset = STAT_AT(struct face_totals, udp_flows), .kind = STAT_COUNTER,
	  .family = "sandnet_udp_flows_opened_total",
	  .help = "UDP flows through the container face, either side opened." },
	{ .key = "tcp_open", .offset = STAT_AT(struct face_totals, tcp_open), .kind = STAT_GAUGE,
	  .family = "sandnet_tcp_connections_open", .help = "TCP connections of the container open now." },
	{ .key = "udp_flows_open", .offset = STAT_AT(struct face_totals, udp_flows_open), .kind = STAT_GAUGE,
	  .family = "sandnet_udp_flows_open", .help = "UDP flows of the container open now." },
	/* sandnet_drops_total{layer="face"} has them by reason */
	{ .key = "face_drops", .offset = STAT_AT(struct face_totals, drops), .kind = STAT_COUNTER,
	  .family = STAT_NOT_EXPORTED, .help = "Packets the container face dropped, every reason." },
	/* the face's UDP pacer, each way (docs/face.md, "A UDP flow's timing through the face") */
	{ .key = "udp_held_to_container", .offset = STAT_AT(struct face_totals, udp_held_to_container),
	  .kind = STAT_COUNTER, .family = "sandnet_face_udp_paced_total",
	  .help = "UDP datagrams (or GSO frames) the container face held to space them as they arrived, by direction.",
	  .label = "direction", .value = "to_container" },
	{ .key = "udp_held_to_network", .offset = STAT_AT(struct face_totals, udp_held_to_network),
	  .kind = STAT_COUNTER, .label = "direction", .value = "to_network" },
	{ .key = "udp_pace_overruns_to_container", .offset = STAT_AT(struct face_totals, udp_overruns_to_container),
	  .kind = STAT_COUNTER, .family = "sandnet_face_udp_pace_overruns_total",
	  .help = "Of those, sent before their time: held too long or too much held, by direction.",
	  .label = "direction", .value = "to_container" },
	{ .key = "udp_pace_overruns_to_network", .offset = STAT_AT(struct face_totals, udp_overruns_to_network),
	  .kind = STAT_COUNTER, .label = "direction", .value = "to_network" },
};

const struct stat_table face_totals_table = STAT_TABLE(face_totals_rows);

/**
 * face_totals() - the few figures per container (face_totals_table)
 * @f:	the face, or NULL (all zero)
 * @t:	receives them
 */
void face_totals(const struct face *f, struct face_totals *t)
{
	struct face_udp_usage u;
	unsigned int i;

	memset(t, 0, sizeof(*t));
	if (!f)
		return;
	t->tcp_outbound = f->ctr[FACE_CTR_TCP_OUTBOUND];
	t->tcp_inbound = f->ctr[FACE_CTR_TCP_INBOUND];
	t->udp_flows = f->ctr[FACE_CTR_UDP_FLOWS_NEW];
	for (i = 0; i < FACE_DROP_MAX; i++)
		t->drops += f->drop[i];
	t->tcp_open = f->n_pairs;
	face_udp_usage(f, &u);
	t->udp_flows_open = u.flows;
	t->udp_held_to_container = u.to_inner.held;
	t->udp_held_to_network = u.to_outer.held;
	t->udp_overruns_to_container = u.to_inner.overruns;
	t->udp_overruns_to_network = u.to_outer.overruns;
}

/**
 * face_drops_foreach() - call @fn for every drop reason that counted a packet
 * @f:		the face, or NULL (no call)
 * @fn:		gets the reason's stats name ("bad_header") and its count
 * @arg:	passed to @fn
 */
void face_drops_foreach(const struct face *f, void (*fn)(const char *reason, uint64_t n, void *arg), void *arg)
{
	char key[64];
	unsigned int i;

	for (i = 0; f && i < FACE_DROP_MAX; i++) {
		if (!f->drop[i])
			continue;
		face_key(face_drop_names[i], key, sizeof(key));
		fn(key, f->drop[i], arg);
	}
}

/**
 * face_print_stats() - the "face" object of `datapath stats`
 * @f:	the face, or NULL (nothing is printed)
 * @o:	printer
 */
void face_print_stats(struct face *f, struct out *o)
{
	char key[64];
	unsigned int i;

	if (!f)
		return;
	out_obj_begin(o, "face");
	out_obj_begin(o, "counters");
	for (i = 0; i < FACE_CTR_MAX; i++) {
		face_key(face_ctr_names[i], key, sizeof(key));
		out_u64(o, key, f->ctr[i]);
	}
	out_obj_end(o);
	out_obj_begin(o, "drops");
	for (i = 0; i < FACE_DROP_MAX; i++) {
		face_key(face_drop_names[i], key, sizeof(key));
		out_u64(o, key, f->drop[i]);
	}
	out_obj_end(o);
	face_udp_print(f, o);
	face_icmp_print(f, o);
	face_tcp_print(f, o);
	out_obj_end(o);
	tcp_glue_print(f->tcp, o, "face_tcp", "face_tcp_connections");
}
