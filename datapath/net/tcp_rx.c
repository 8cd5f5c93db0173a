// SPDX-License-Identifier: MIT
/*
 * tcp_rx.c - into a TCP engine from its IP layer: segments, and the ICMP
 * errors that quote one of its segments
 *
 * Theory of operation
 *
 * Input. ipv4_deliver()/ipv6 (or the inner side) hand a TCP segment at
 * pkt_data(). The header and its options are read with pkt_peek() only; the
 * checksum over the pseudo-header is verified unless the kernel vouched for
 * it (pkt->csum_ok: VIRTIO_NET_HDR_F_DATA_VALID, or NEEDS_CSUM, a frame from
 * the local kernel whose checksum is not even computed yet; docs/gso.md). The
 * outer stack drops segments to a broadcast or multicast address (RFC 9293
 * 3.10.7.1). The engine copies what it keeps, so the packet stays borrowed.
 *
 * ICMP errors quoting one of our segments (tcp_glue_icmp()):
 * fragmentation-needed and packet-too-big lower the MSS of the connections
 * between the two addresses (the engine then uses a smaller gso_size);
 * destination unreachable and time exceeded end a connection attempt still
 * in SYN-SENT with the errno Linux gives (tcp_icmp_errno()), as Linux's
 * tcp_v4_err() does: connect() then fails with EHOSTUNREACH, ENETUNREACH or
 * ECONNREFUSED instead of waiting for the timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "datapath/wire/proto_hdr.h"
#include "datapath/net/tcp_glue_int.h"

/**
 * tcp_glue_segment() - one TCP segment at pkt_data() into an instance's engine
 * @g:		the instance
 * @p:		segment, trimmed to the IP payload; borrowed
 * @src:	IP source
 * @dst:	IP destination
 *
 * A short header, a bad data offset, bad options or a bad checksum are
 * dropped and counted (rx_bad and the stack's drop reason).
 */
void tcp_glue_segment(struct tcp_glue *g, struct pkt *p, const struct net_addr *src,
		      const struct net_addr *dst)
{
	struct stack *st = g->st;
	const struct tcp_hdr *th = pkt_peek(p, 0, sizeof(*th));
	struct tcp_seg_in seg;
	const uint8_t *opts;
	size_t doff;

	if (!th) {
		g->c.rx_bad++;
		stack_drop(st, DROP_TRUNCATED);
		return;
	}
	doff = (size_t)(th->doff >> 4) * 4;
	opts = doff >= sizeof(*th) ? pkt_peek(p, sizeof(*th), doff - sizeof(*th)) : NULL;
	if (!opts) {
		g->c.rx_bad++;
		stack_drop(st, doff < sizeof(*th) ? DROP_BAD_HEADER : DROP_TRUNCATED);
		return;
	}
	if (!p->csum_ok && csum_pkt_l4(p, tcp_glue_pseudo(src, dst, p->len)) != 0) {
		g->c.rx_bad++;
		stack_drop(st, DROP_BAD_CHECKSUM);
		return;
	}
	memset(&seg, 0, sizeof(seg));
	if (tcp_opts_parse(opts, doff - sizeof(*th), &seg.opts) < 0) {
		g->c.rx_bad++;
		stack_drop(st, DROP_BAD_HEADER);
		return;
	}
	seg.src = *src;
	seg.dst = *dst;
	seg.sport = ntohs(th->sport);
	seg.dport = ntohs(th->dport);
	seg.seq = ntohl(th->seq);
	seg.ack = ntohl(th->ack);
	seg.flags = th->flags;
	seg.wnd = ntohs(th->wnd);
	seg.data = pkt_data(p) + doff;
	seg.len = p->len - doff;
	seg.ecn = ip_ecn(p);
	tcp_input(g->tcp, &seg, tcp_glue_now_us(st));
}

/**
 * tcp_icmp_errno() - the errno a connection attempt gets for an ICMP error
 * @family:	AF_INET (ICMP) or AF_INET6 (ICMPv6)
 * @type:	the error's type
 * @code:	its code
 *
 * As Linux maps them (icmp_err_convert[], icmpv6_err_convert()).
 *
 * Return: a negative errno, or 0 for a message that is not such an error
 * (fragmentation needed, packet too big, and anything else).
 */
int tcp_icmp_errno(uint8_t family, uint8_t type, uint8_t code)
{
	if (family == AF_INET) {
		if (type == ICMP_TIME_EXCEEDED)
			return -EHOSTUNREACH;
		if (type != ICMP_DEST_UNREACH || code == ICMP_FRAG_NEEDED)
			return 0;
		switch (code) {
		case 0: case 6: case 9: case 11:	/* net unreachable, unknown, prohibited, for TOS */
			return -ENETUNREACH;
		case ICMP_PROT_UNREACH:
			return -ENOPROTOOPT;
		case ICMP_PORT_UNREACH:
			return -ECONNREFUSED;
		default:				/* host unreachable, prohibited, filtered, ... */
			return -EHOSTUNREACH;
		}
	}
	if (type == ICMP6_TIME_EXCEEDED)
		return -EHOSTUNREACH;
	if (type != ICMP6_DST_UNREACH)
		return 0;
	switch (code) {
	case 0:						/* no route */
		return -ENETUNREACH;
	case 1: case 5: case 6:				/* prohibited, policy, reject route */
		return -EACCES;
	case ICMP6_DST_UNREACH_NOPORT:
		return -ECONNREFUSED;
	default:
		return -EHOSTUNREACH;
	}
}

/**
 * tcp_glue_icmp() - an ICMP error that quotes one of this engine's segments
 * @g:		the instance
 * @family:	AF_INET (ICMP) or AF_INET6 (ICMPv6)
 * @p:		the ICMP message at pkt_data(), checksum verified; borrowed
 *
 * The quoted header names the connection: its source is our local end. The
 * caller checked that the quote is ours to look at (the outer stack: its
 * source is one of our addresses). Fragmentation needed and packet too big
 * lower the MSS (the engine ignores MTUs below the protocol minimum);
 * unreachables and time exceeded end a connection attempt in SYN-SENT whose
 * ISS the quote carries (tcp_icmp_error()).
 */
void tcp_glue_icmp(struct tcp_glue *g, uint8_t family, const struct pkt *p)
{
	const uint8_t *ic = pkt_peek(p, 0, 8), *q, *t;
	struct tcp_endpoint local, remote;
	size_t l3;
	uint32_t mtu, seq;
	int err;

	if (!ic)
		return;
	memset(&local, 0, sizeof(local));
	memset(&remote, 0, sizeof(remote));
	local.addr.family = remote.addr.family = family;
	l3 = family == AF_INET ? IPV4_HLEN : IPV6_HLEN;
	q = pkt_peek(p, 8, l3);
	if (!q)
		return;
	if (family == AF_INET) {
		if ((q[0] >> 4) != 4 || q[9] != IPPROTO_TCP)
			return;
		l3 = (q[0] & 0xfu) * 4;
		memcpy(local.addr.a.bytes, q + 12, 4);
		memcpy(remote.addr.a.bytes, q + 16, 4);
		mtu = (uint32_t)ic[6] << 8 | ic[7];
		if (ic[0] == ICMP_DEST_UNREACH && ic[1] == ICMP_FRAG_NEEDED) {
			g->c.pmtu_updates++;
			tcp_pmtu_update(g->tcp, &local.addr, &remote.addr, mtu, tcp_glue_now_us(g->st));
			return;
		}
	} else {
		if ((q[0] >> 4) != 6 || q[6] != IPPROTO_TCP)
			return;
		memcpy(local.addr.a.bytes, q + 8, 16);
		memcpy(remote.addr.a.bytes, q + 24, 16);
		mtu = (uint32_t)ic[4] << 24 | (uint32_t)ic[5] << 16 | (uint32_t)ic[6] << 8 | ic[7];
		if (ic[0] == ICMP6_PACKET_TOO_BIG) {
			g->c.pmtu_updates++;
			tcp_pmtu_update(g->tcp, &local.addr, &remote.addr, mtu, tcp_glue_now_us(g->st));
			return;
		}
	}
	err = tcp_icmp_errno(family, ic[0], ic[1]);
	t = pkt_peek(p, 8 + l3, 8);	/* RFC 792: the quote has at least 8 bytes of it */
	if (!err || !t)
		return;
	local.port = (uint16_t)(t[0] << 8 | t[1]);
	remote.port = (uint16_t)(t[2] << 8 | t[3]);
	seq = (uint32_t)t[4] << 24 | (uint32_t)t[5] << 16 | (uint32_t)t[6] << 8 | t[7];
	if (tcp_icmp_error(g->tcp, &local, &remote, seq, err, tcp_glue_now_us(g->st)) == 0)
		g->c.icmp_aborts++;
}
