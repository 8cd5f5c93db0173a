// SPDX-License-Identifier: MIT
/*
 * tcp_glue.c - the adapter between the stack (IP, links, loop) and the TCP
 * engine of datapath/tcp/
 *
 * Theory of operation
 *
 * The engine is a pure protocol machine (docs/tcp.md): it takes parsed
 * segments and the time, and emits segments through a callback. This file
 * is everything around it:
 *
 * Input. ipv4_deliver()/ipv6 hand a TCP segment at pkt_data(). The header
 * and its options are read with pkt_peek() only; the checksum over the
 * pseudo-header is verified unless the kernel vouched for it (pkt->csum_ok:
 * VIRTIO_NET_HDR_F_DATA_VALID, or NEEDS_CSUM, a frame from the local kernel
 * whose checksum is not even computed yet; DESIGN.md). Segments to a
 * broadcast or multicast address are dropped (RFC 9293 3.10.7.1). The
 * engine copies what it keeps, so the packet stays borrowed.
 *
 * Output. The emit callback builds one pkt per segment: the linear part
 * holds the TCP header and options (IP and Ethernet are pushed in front by
 * the layers below), the tail borrows the payload from the connection's send
 * ring (pkt.h), and the checksum is computed over both. The segment goes to
 * ipv4_output() with DF set (the MSS fits the route MTU; PMTU discovery) or
 * ipv6_output(). Two cases copy the payload into the linear part instead: a
 * payload that wraps around the ring (two iovecs; a frame has one tail), and
 * a next hop still being resolved, since the neighbour queue may hold the
 * frame longer than the link's transmit batch. Borrowed memory must outlive
 * every queued frame: at the end of each loop turn the links are flushed and,
 * when no link holds a borrowed frame any more, tcp_stack_tx_done() lets the
 * engine free send memory it replaced or released. The engine never frees a
 * send ring directly (tcp_stack_retire()). Acknowledged bytes, though, are
 * overwritten by the next tcp_send(): services call tcp_glue_tx_quiet()
 * first, which flushes the links and says whether any borrowed frame is
 * still queued (a link blocked by EAGAIN); only then do they send.
 *
 * Time and timers. The engine's clock is the loop's, in microseconds (the
 * loop reads the clock once per turn, in milliseconds). One loop timer
 * stands for every connection's timers: at the end of each turn it is armed
 * for tcp_next_deadline(); when it fires, tcp_timers_run() does the due work.
 *
 * Per connection, the MSS comes from the MTU of the link the route to the
 * peer uses (minus the IP and TCP headers) and the largest emitted payload
 * (gso_max_bytes) from the link's GSO mode (docs/gso.md): in off mode one
 * MSS; in hw and sw mode as much as fits one frame of at most 65535 bytes,
 * Ethernet header and the largest TCP header included, below the link's
 * gso_max_size (DESIGN.md: at or above it the kernel splits the frame
 * itself). The engine then emits segments of up to that size with gso_size
 * = its sending MSS (in-flight data and cwnd stay in bytes, retransmissions
 * stay one MSS). Such a segment leaves here in one of two ways:
 *
 *  - hw (the route's link has PACKET_VNET_HDR): one frame whose
 *    virtio_net_hdr asks the kernel to segment it (NEEDS_CSUM, gso_type
 *    TCPV4/TCPV6, gso_size, csum_start, csum_offset 16, hdr_len) and whose
 *    TCP checksum field holds the folded, not inverted, pseudo-header sum
 *    over the whole L4 length. The IPv4 id advances by the number of
 *    segments, since the kernel numbers them id, id+1, ... Where the payload
 *    wraps around the send ring, the frame is cut at the last MSS boundary
 *    before the wrap and the one MSS piece that straddles it is copied.
 *  - sw (and whenever the link cannot take a GSO frame): the segment is cut
 *    into gso_size pieces, each its own pkt with its own headers, sequence
 *    number, IP id and full checksum, FIN and PSH only on the last, the
 *    payload borrowed slice by slice (no copy). The TCP header, options and
 *    pseudo-header are built and summed once per segment; a piece copies
 *    the header, patches seq and flags, and sums only its own payload
 *    (tcp_glue_emit_sw()). They queue in the link, which sends up to a
 *    batch of them in one sendmmsg().
 *
 * ICMP fragmentation-needed and packet-too-big quoting one of our TCP
 * segments lower the MSS of the connections between the two addresses
 * (tcp_glue_icmp_error()); the engine then uses a smaller gso_size.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/net/net.h"
#include "datapath/net/proto_hdr.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/out.h"

#define TCP_HLEN	20
#define TCP_MAX_HLEN	60
/* Largest frame built for the wire, Ethernet header included (DESIGN.md). */
#define TCP_GLUE_MAX_FRAME	65535u
/* BIG TCP frames: the kernel's own limit for them (GSO_MAX_SIZE) */
#define TCP_GLUE_BIG_FRAME	524280u

/* The TCP header on the wire (RFC 9293 3.1), network order. */
struct tcp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t doff;		/* data offset in the high 4 bits */
	uint8_t flags;
	uint16_t wnd;
	uint16_t csum;
	uint16_t urg;
} __attribute__((packed));

/**
 * struct tcp_glue - the engine and what joins it to the stack
 * @st:		the stack
 * @tcp:	the engine
 * @timer:	fires at the engine's next deadline
 * @armed_us:	deadline @timer is armed for, UINT64_MAX if none
 * @copied:	segments whose payload was copied (ring wrap, unresolved hop)
 * @borrowed:	segments sent with a borrowed tail
 * @split:	on-wire segments cut from a larger one here (sw mode, or MSS pieces)
 * @gso_frames:	hw GSO frames emitted (the kernel segments them)
 * @emit_errors: segments the IP layer refused (no route, ...)
 * @rx_bad:	segments dropped here (short, bad offset, options, checksum)
 * @tx_held:	service sends postponed while a link held borrowed frames
 * @pmtu_updates: ICMP errors about our TCP segments passed to the engine
 */
struct tcp_glue {
	struct stack *st;
	struct tcp_stack *tcp;
	struct loop_timer timer;
	uint64_t armed_us;
	uint64_t copied, borrowed, split, gso_frames, emit_errors, rx_bad, tx_held, pmtu_updates;
};

/**
 * tcp_glue_now_us() - the engine's clock: the loop's time in microseconds
 */
uint64_t tcp_glue_now_us(const struct stack *st)
{
	return loop_now_ms(st->loop) * 1000;
}

/**
 * tcp_glue_stack() - the TCP engine of the stack (services open sockets on it)
 */
struct tcp_stack *tcp_glue_stack(const struct stack *st)
{
	return st->tcp ? st->tcp->tcp : NULL;
}

/**
 * tcp_glue_addr_from() - a stack address as the engine's struct tcp_addr
 */
void tcp_glue_addr_from(struct tcp_addr *t, const struct net_addr *a)
{
	memset(t, 0, sizeof(*t));
	t->family = a->family;
	if (a->family == AF_INET)
		memcpy(t->addr, &a->a.v4, 4);
	else if (a->family == AF_INET6)
		memcpy(t->addr, &a->a.v6, 16);
}

/**
 * tcp_glue_endpoint_str() - "10.0.0.1:80" or "[fd00::1]:80"
 * Return: @buf.
 */
const char *tcp_glue_endpoint_str(const struct tcp_endpoint *e, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(e->addr.family, e->addr.addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, e->addr.family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, e->port);
	return buf;
}

/* The MTU towards @remote (or, without one, the smallest of the family's links). */
static uint32_t tcp_glue_mtu(const struct stack *st, uint8_t family, const struct net_addr *remote)
{
	uint32_t mtu = 0;
	unsigned int i;

	if (remote && remote->family == family) {
		const struct route *r = route_lookup(st, family, &remote->a);

		if (r && r->link)
			return r->link->mtu;
	}
	for (i = 0; i < st->n_links; i++)
		if (!mtu || st->links[i]->mtu < mtu)
			mtu = st->links[i]->mtu;
	return mtu ? mtu : 1500;
}

/*
 * IPv4 BIG TCP (docs/gso.md): in hw mode netsetup may allow IPv4 TCP frames
 * over 64 KiB (gso_ipv4_max_size, the largest such frame; IPv4 total length
 * 0, the kernel takes the length from the frame). 0 when it did not: IPv6
 * frames over 64 KiB are dropped through AF_PACKET (DESIGN.md) and sw mode
 * cuts every segment to the MSS anyway.
 */
static uint32_t tcp_glue_big_frame(const struct link *l, uint8_t family)
{
	if (family != AF_INET || !l->vnet || l->gso_mode != PROTO_GSO_HW ||
	    l->gso_ipv4_max_size <= TCP_GLUE_MAX_FRAME)
		return 0;
	return l->gso_ipv4_max_size < TCP_GLUE_BIG_FRAME ? l->gso_ipv4_max_size : TCP_GLUE_BIG_FRAME;
}

/**
 * tcp_glue_gso_bytes() - largest TCP payload of one emitted segment on a link
 * @l:		link, or NULL (then one MSS)
 * @family:	AF_INET or AF_INET6
 * @mss:	the connection's MSS
 *
 * Off mode: @mss. hw and sw mode: the frame, Ethernet, IP and the largest
 * TCP header included, stays at most 65535 bytes and below the link's
 * gso_max_size (65536 when netsetup did not say), and the segment count
 * within gso_max_segs; IPv4 in hw mode up to the IPv4 frame limit netsetup
 * sent instead when it is over 64 KiB (BIG TCP).
 *
 * Return: payload bytes, at least @mss.
 */
uint32_t tcp_glue_gso_bytes(const struct link *l, uint8_t family, uint32_t mss)
{
	uint32_t hdrs = ETH_HLEN_ + (family == AF_INET6 ? IPV6_HLEN : IPV4_HLEN) + TCP_MAX_HLEN;
	uint32_t frame, bytes;

	if (!l || l->gso_mode == PROTO_GSO_OFF || !mss)
		return mss;
	frame = l->gso_max_size ? l->gso_max_size - 1 : TCP_GLUE_MAX_FRAME;
	if (frame > TCP_GLUE_MAX_FRAME)
		frame = TCP_GLUE_MAX_FRAME;
	if (tcp_glue_big_frame(l, family) > frame)
		frame = tcp_glue_big_frame(l, family);
	if (frame < hdrs + mss)
		return mss;
	bytes = frame - hdrs;
	if (l->gso_max_segs && bytes / mss > l->gso_max_segs)
		bytes = l->gso_max_segs * mss;
	return bytes < mss ? mss : bytes;
}

/* The link the route to @remote uses, or NULL. */
static struct link *tcp_glue_route_link(const struct stack *st, uint8_t family,
					const union proto_inaddr *remote)
{
	const struct route *r = route_lookup(st, family, remote);

	return r ? r->link : NULL;
}

/**
 * tcp_glue_conn_opts() - settings for a connection of @family to @remote
 * @st:		stack
 * @family:	AF_INET or AF_INET6
 * @remote:	the peer, or NULL for a listener (then the smallest link MTU
 *		and the smallest GSO limit of all links)
 * @o:		result: MSS from the route MTU, gso_max_bytes from the link's
 *		GSO mode (tcp_glue_gso_bytes())
 */
void tcp_glue_conn_opts(const struct stack *st, uint8_t family, const struct net_addr *remote,
			struct tcp_conn_opts *o)
{
	uint32_t mtu = tcp_glue_mtu(st, family, remote);
	uint32_t hdrs = (family == AF_INET6 ? IPV6_HLEN : IPV4_HLEN) + TCP_HLEN;
	uint32_t mss = mtu > hdrs + 88 ? mtu - hdrs : 88;
	uint32_t gso = 0, b;
	unsigned int i;

	memset(o, 0, sizeof(*o));
	o->mss = mss > 65495 ? 65495 : (uint16_t)mss;
	if (remote && remote->family == family) {
		gso = tcp_glue_gso_bytes(tcp_glue_route_link(st, family, &remote->a), family, o->mss);
	} else {
		for (i = 0; i < st->n_links; i++) {
			b = tcp_glue_gso_bytes(st->links[i], family, o->mss);
			if (!gso || b < gso)
				gso = b;
		}
	}
	o->gso_max_bytes = gso > o->mss ? gso : o->mss;
}

/**
 * tcp_glue_pick_src() - our address for a connection to @dst
 * Return: 0, or -ENETUNREACH / -EAFNOSUPPORT.
 */
int tcp_glue_pick_src(const struct stack *st, const struct net_addr *dst, struct tcp_addr *src)
{
	struct net_addr a = { .family = dst->family };
	int ret;

	if (dst->family == AF_INET)
		ret = ipv4_pick_src(st, dst->a.v4, &a.a.v4);
	else if (dst->family == AF_INET6)
		ret = ipv6_pick_src(st, NULL, &dst->a.v6, &a.a.v6);
	else
		return -EAFNOSUPPORT;
	if (ret < 0)
		return ret;
	tcp_glue_addr_from(src, &a);
	return 0;
}

/* Is the next hop towards @dst resolved, so a frame leaves with this turn's flush? */
static bool tcp_glue_hop_ready(struct stack *st, const struct tcp_addr *dst)
{
	union proto_inaddr d, hop;
	const struct route *r;
	const struct neigh *n;

	memset(&d, 0, sizeof(d));
	memcpy(&d, dst->addr, dst->family == AF_INET ? 4 : 16);
	r = route_lookup(st, dst->family, &d);
	if (!r)
		return false;	/* the IP layer drops it; copying is harmless */
	hop = r->has_gateway ? r->gateway : d;
	n = neigh_lookup(st, dst->family, &hop);
	return n && n->state != NEIGH_INCOMPLETE;
}

/*
 * Ask the kernel to segment @p (hw mode, DESIGN.md's table): @hlen is the
 * TCP header length, @l3 the IP header length, @sum the pseudo-header
 * accumulator over the whole L4 length, which goes into the checksum field
 * folded and not inverted.
 */
static void tcp_glue_set_gso(struct pkt *p, struct tcp_hdr *th, bool v6, size_t l3, size_t hlen,
			     uint16_t gso_size, uint32_t sum)
{
	p->vnet.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	p->vnet.gso_type = v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
	p->vnet.gso_size = gso_size;
	p->vnet.csum_start = (uint16_t)(ETH_HLEN_ + l3);
	p->vnet.csum_offset = 16;
	p->vnet.hdr_len = (uint16_t)(ETH_HLEN_ + l3 + hlen);
	th->csum = htons((uint16_t)~csum_fold(sum));
}

/*
 * One emitted frame: header + options, payload @iov (borrowed or copied).
 * @gso_size non-zero: a hw GSO frame of @len bytes cut by the kernel into
 * @gso_size pieces; 0: one segment with its full checksum.
 */
static int tcp_glue_emit_one(struct tcp_glue *g, const struct tcp_seg_out *seg, uint32_t seq,
			     uint8_t flags, const struct iovec *iov, int iovcnt, size_t len,
			     uint16_t gso_size)
{
	struct stack *st = g->st;
	uint8_t opts[TCP_OPTS_MAX_BYTES];
	struct tcp_hdr *th;
	bool copy;
	size_t hlen;
	uint32_t sum;
	struct pkt *p;
	int olen, i, ret;

	olen = tcp_opts_write(&seg->opts, opts, sizeof(opts));
	if (olen < 0 || olen % 4) {
		g->emit_errors++;
		return olen < 0 ? olen : -EINVAL;
	}
	hlen = TCP_HLEN + olen;
	copy = len && (iovcnt != 1 || !tcp_glue_hop_ready(st, &seg->dst));
	p = pkt_alloc(hlen + (copy ? len : 0));
	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		g->emit_errors++;
		return -ENOBUFS;
	}
	th = pkt_put(p, hlen);
	th->sport = htons(seg->sport);
	th->dport = htons(seg->dport);
	th->seq = htonl(seq);
	th->ack = htonl(seg->ack);
	th->doff = (uint8_t)((hlen / 4) << 4);
	th->flags = flags;
	th->wnd = htons(seg->wnd);
	th->csum = 0;
	th->urg = 0;
	memcpy(th + 1, opts, olen);
	if (copy) {
		for (i = 0; i < iovcnt; i++)
			memcpy(pkt_put(p, iov[i].iov_len), iov[i].iov_base, iov[i].iov_len);
		g->copied++;
	} else if (len) {
		pkt_set_tail(p, iov[0].iov_base, (uint32_t)iov[0].iov_len);
		g->borrowed++;
	}
	if (seg->dst.family == AF_INET) {
		struct in_addr s, d;

		memcpy(&s, seg->src.addr, 4);
		memcpy(&d, seg->dst.addr, 4);
		sum = csum_pseudo4(s, d, IPPROTO_TCP, (uint32_t)pkt_total_len(p));
		if (gso_size) {
			uint16_t id = st->ipv4_id;

			tcp_glue_set_gso(p, th, false, IPV4_HLEN, hlen, gso_size, sum);
			ret = ipv4_output(st, p, s, d, IPPROTO_TCP, 64, true);
			/* the kernel numbers the segments id, id + 1, ... */
			if (ret == 0 && st->ipv4_id == (uint16_t)(id + 1))
				st->ipv4_id = (uint16_t)(id + (len + gso_size - 1) / gso_size);
		} else {
			th->csum = htons(csum_pkt_l4(p, sum));
			ret = ipv4_output(st, p, s, d, IPPROTO_TCP, 64, true);
		}
	} else {
		struct in6_addr s, d;

		memcpy(&s, seg->src.addr, 16);
		memcpy(&d, seg->dst.addr, 16);
		sum = csum_pseudo6(&s, &d, IPPROTO_TCP, (uint32_t)pkt_total_len(p));
		if (gso_size)
			tcp_glue_set_gso(p, th, true, IPV6_HLEN, hlen, gso_size, sum);
		else
			th->csum = htons(csum_pkt_l4(p, sum));
		ret = ipv6_output(st, NULL, p, &s, &d, IPPROTO_TCP, 64);
	}
	if (ret < 0)
		g->emit_errors++;
	return ret;
}

/* Bytes [@off, @off + @len) of the segment's payload as at most two iovecs. */
static int tcp_glue_slice(const struct tcp_seg_out *seg, size_t off, size_t len, struct iovec out[2])
{
	int i, n = 0;

	for (i = 0; i < seg->iovcnt && len && n < 2; i++) {
		size_t il = seg->iov[i].iov_len, take;

		if (off >= il) {
			off -= il;
			continue;
		}
		take = il - off < len ? il - off : len;
		out[n].iov_base = (uint8_t *)seg->iov[i].iov_base + off;
		out[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return len ? -EINVAL : n;
}

/* Bytes from @off to the end of the payload iovec that holds @off. */
static size_t tcp_glue_contig(const struct tcp_seg_out *seg, size_t off)
{
	int i;

	for (i = 0; i < seg->iovcnt; i++) {
		if (off < seg->iov[i].iov_len)
			return seg->iov[i].iov_len - off;
		off -= seg->iov[i].iov_len;
	}
	return 0;
}

/*
 * sw mode: cut @seg into @seg->gso_size pieces (see the theory of operation).
 * The TCP header, its options and the pseudo-header are built and summed
 * once; each piece copies that header, patches its sequence number and
 * flags, and adds to the sum only what differs (the L4 length, seq, flags)
 * and its own payload, summed once straight from the send ring. A piece
 * that straddles the ring's wrap, or a next hop still being resolved, goes
 * through tcp_glue_emit_one(), which copies.
 */
static int tcp_glue_emit_sw(struct tcp_glue *g, const struct tcp_seg_out *seg, struct link *l)
{
	struct stack *st = g->st;
	union {
		struct tcp_hdr th;
		uint8_t b[TCP_MAX_HLEN];
	} h;
	bool v6 = seg->dst.family == AF_INET6, ready;
	struct in_addr s4, d4;
	struct in6_addr s6, d6;
	uint32_t base, hsum;
	struct iovec iov[2];
	size_t hlen, off, n;
	int olen, cnt, ret;

	olen = tcp_opts_write(&seg->opts, h.b + TCP_HLEN, sizeof(h.b) - TCP_HLEN);
	if (olen < 0 || olen % 4) {
		g->emit_errors++;
		return olen < 0 ? olen : -EINVAL;
	}
	hlen = TCP_HLEN + olen;
	h.th.sport = htons(seg->sport);
	h.th.dport = htons(seg->dport);
	h.th.seq = 0;
	h.th.ack = htonl(seg->ack);
	h.th.doff = (uint8_t)((hlen / 4) << 4);
	h.th.flags = 0;
	h.th.wnd = htons(seg->wnd);
	h.th.csum = 0;
	h.th.urg = 0;
	/* the sum of everything but length, seq, flags and payload */
	if (v6) {
		memcpy(&s6, seg->src.addr, 16);
		memcpy(&d6, seg->dst.addr, 16);
		base = csum_pseudo6(&s6, &d6, IPPROTO_TCP, 0);
	} else {
		memcpy(&s4, seg->src.addr, 4);
		memcpy(&d4, seg->dst.addr, 4);
		base = csum_pseudo4(s4, d4, IPPROTO_TCP, 0);
	}
	hsum = csum_partial(h.b, hlen, base);
	ready = tcp_glue_hop_ready(st, &seg->dst);
	for (off = 0; off < seg->len; off += n) {
		uint32_t seq = seg->seq + (uint32_t)off, l4, sum;
		uint8_t flags;
		struct tcp_hdr *th;
		struct pkt *p;

		n = seg->len - off < seg->gso_size ? seg->len - off : seg->gso_size;
		flags = off + n == seg->len ? seg->flags : seg->flags & ~(TCP_FIN | TCP_PSH);
		cnt = tcp_glue_slice(seg, off, n, iov);
		if (cnt < 0) {
			g->emit_errors++;
			return cnt;
		}
		g->split++;
		if (l && l->gso_mode == PROTO_GSO_SW)
			l->stats.tx_sw_segments++;
		if (cnt != 1 || !ready) {
			ret = tcp_glue_emit_one(g, seg, seq, flags, iov, cnt, n, 0);
			if (ret < 0)
				return ret;
			continue;
		}
		p = pkt_alloc(hlen);
		th = p ? pkt_put(p, hlen) : NULL;
		if (!th) {
			pkt_free(p);
			stack_drop(st, DROP_NO_MEMORY);
			g->emit_errors++;
			return -ENOBUFS;
		}
		memcpy(th, h.b, hlen);
		th->seq = htonl(seq);
		th->flags = flags;
		/* the header is even-sized, so the payload's words line up */
		l4 = (uint32_t)(hlen + n);
		sum = hsum + (l4 >> 16) + (l4 & 0xffff) + (seq >> 16) + (seq & 0xffff) + flags;
		sum = csum_partial(iov[0].iov_base, n, sum);
		th->csum = htons(csum_fold(sum));
		pkt_set_tail(p, iov[0].iov_base, (uint32_t)n);
		g->borrowed++;
		ret = v6 ? ipv6_output(st, NULL, p, &s6, &d6, IPPROTO_TCP, 64) :
			   ipv4_output(st, p, s4, d4, IPPROTO_TCP, 64, true);
		if (ret < 0) {
			g->emit_errors++;
			return ret;
		}
	}
	return 0;
}

/* The link a segment to @dst leaves by (its GSO mode decides how), or NULL. */
static struct link *tcp_glue_seg_link(const struct stack *st, const struct tcp_addr *dst)
{
	union proto_inaddr d;

	memset(&d, 0, sizeof(d));
	memcpy(&d, dst->addr, dst->family == AF_INET ? 4 : 16);
	return tcp_glue_route_link(st, dst->family, &d);
}

/*
 * The engine's output (see the theory of operation). A segment larger than
 * @gso_size leaves as hw GSO frames when the route's link is in hw mode,
 * else it is cut into @gso_size pieces (tcp_glue_emit_sw()); FIN and PSH
 * on the last frame.
 */
static int tcp_glue_emit(void *ctx, const struct tcp_seg_out *seg)
{
	struct tcp_glue *g = ctx;
	struct iovec iov[2];
	struct link *l;
	size_t off, n;
	int ret, cnt;

	if (!seg->gso_size || seg->len <= seg->gso_size)
		return tcp_glue_emit_one(g, seg, seg->seq, seg->flags, seg->iov, seg->iovcnt, seg->len, 0);
	l = tcp_glue_seg_link(g->st, &seg->dst);
	if (!l || !l->vnet || l->gso_mode != PROTO_GSO_HW)
		return tcp_glue_emit_sw(g, seg, l);
	for (off = 0; off < seg->len; off += n) {
		size_t rest = seg->len - off, c = tcp_glue_contig(seg, off);
		uint16_t gso = 0;
		bool last;

		/* one frame up to the ring wrap, cut at an MSS boundary */
		n = rest < seg->gso_size ? rest : seg->gso_size;
		if (c >= rest)
			n = rest;
		else if (c >= seg->gso_size)
			n = c - c % seg->gso_size;
		if (n > seg->gso_size)
			gso = seg->gso_size;
		last = off + n == seg->len;
		cnt = tcp_glue_slice(seg, off, n, iov);
		if (cnt < 0) {
			g->emit_errors++;
			return cnt;
		}
		if (gso)
			g->gso_frames++;
		else
			g->split++;
		ret = tcp_glue_emit_one(g, seg, seg->seq + (uint32_t)off,
					last ? seg->flags : seg->flags & ~(TCP_FIN | TCP_PSH), iov, cnt, n, gso);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/**
 * tcp_glue_input() - one TCP segment at pkt_data() into the engine
 * @st:		stack
 * @l:		link it arrived on
 * @p:		segment, trimmed to the IP payload; borrowed
 * @src:	IP source
 * @dst:	IP destination (one of ours, or a broadcast/multicast one)
 * @to_bcast:	sent to a broadcast or multicast address
 */
void tcp_glue_input(struct stack *st, struct link *l, struct pkt *p, const struct net_addr *src,
		    const struct net_addr *dst, bool to_bcast)
{
	struct tcp_glue *g = st->tcp;
	const struct tcp_hdr *th = pkt_peek(p, 0, sizeof(*th));
	struct tcp_seg_in seg;
	const uint8_t *opts;
	size_t doff;

	(void)l;
	stack_count(st, CTR_TCP_IN);
	if (to_bcast || !g) {
		stack_drop(st, DROP_NOT_FOR_US);
		return;
	}
	if (!th) {
		g->rx_bad++;
		stack_drop(st, DROP_TRUNCATED);
		return;
	}
	doff = (size_t)(th->doff >> 4) * 4;
	opts = doff >= sizeof(*th) ? pkt_peek(p, sizeof(*th), doff - sizeof(*th)) : NULL;
	if (!opts) {
		g->rx_bad++;
		stack_drop(st, doff < sizeof(*th) ? DROP_BAD_HEADER : DROP_TRUNCATED);
		return;
	}
	if (!p->csum_ok) {
		uint32_t sum = src->family == AF_INET ?
			csum_pseudo4(src->a.v4, dst->a.v4, IPPROTO_TCP, p->len) :
			csum_pseudo6(&src->a.v6, &dst->a.v6, IPPROTO_TCP, p->len);

		if (csum_pkt_l4(p, sum) != 0) {
			g->rx_bad++;
			stack_drop(st, DROP_BAD_CHECKSUM);
			return;
		}
	}
	memset(&seg, 0, sizeof(seg));
	if (tcp_opts_parse(opts, doff - sizeof(*th), &seg.opts) < 0) {
		g->rx_bad++;
		stack_drop(st, DROP_BAD_HEADER);
		return;
	}
	tcp_glue_addr_from(&seg.src, src);
	tcp_glue_addr_from(&seg.dst, dst);
	seg.sport = ntohs(th->sport);
	seg.dport = ntohs(th->dport);
	seg.seq = ntohl(th->seq);
	seg.ack = ntohl(th->ack);
	seg.flags = th->flags;
	seg.wnd = ntohs(th->wnd);
	seg.data = pkt_data(p) + doff;
	seg.len = p->len - doff;
	tcp_input(g->tcp, &seg, tcp_glue_now_us(st));
}

/**
 * tcp_glue_tx_quiet() - flush the links; may tcp_send() overwrite acked bytes?
 * @st:	stack
 *
 * tcp_send() may write over send-ring bytes the peer acknowledged, and a
 * frame still queued in a link may borrow them (a retransmission the ACK
 * made spurious): it would leave with a wrong checksum. Services call this
 * right before tcp_send() and hold their data while it says no.
 *
 * Return: true when no link holds a frame with a borrowed tail.
 */
bool tcp_glue_tx_quiet(struct stack *st)
{
	unsigned int i, borrowed = 0;

	for (i = 0; i < st->n_links; i++) {
		if (link_tx_borrowed(st->links[i]))
			link_tx_flush(st->links[i]);
		borrowed += link_tx_borrowed(st->links[i]);
	}
	if (borrowed && st->tcp)
		st->tcp->tx_held++;
	return !borrowed;
}

/**
 * tcp_glue_icmp_error() - PMTU from an ICMP error that quotes a TCP segment
 * @st:		stack
 * @family:	AF_INET (ICMP) or AF_INET6 (ICMPv6)
 * @p:		the ICMP message at pkt_data(), checksum verified; borrowed
 *
 * Fragmentation needed (type 3 code 4) and packet too big (ICMPv6 type 2)
 * whose quoted header is one we sent (source one of ours, protocol TCP)
 * lower the MSS of the connections between the two addresses; the engine
 * ignores MTUs below the protocol minimum. Other errors are ignored.
 */
void tcp_glue_icmp_error(struct stack *st, uint8_t family, const struct pkt *p)
{
	const uint8_t *ic = pkt_peek(p, 0, 8);
	struct net_addr a = { .family = family };
	struct tcp_addr local, remote;
	const uint8_t *q;
	uint32_t mtu;

	if (!ic || !st->tcp)
		return;
	memset(&local, 0, sizeof(local));
	memset(&remote, 0, sizeof(remote));
	local.family = remote.family = family;
	if (family == AF_INET) {
		q = pkt_peek(p, 8, IPV4_HLEN);
		if (ic[0] != ICMP_DEST_UNREACH || ic[1] != ICMP_FRAG_NEEDED || !q ||
		    (q[0] >> 4) != 4 || q[9] != IPPROTO_TCP)
			return;
		mtu = (uint32_t)ic[6] << 8 | ic[7];
		memcpy(&a.a.v4, q + 12, 4);
		if (!ipv4_is_ours(st, a.a.v4))
			return;
		memcpy(local.addr, q + 12, 4);
		memcpy(remote.addr, q + 16, 4);
	} else {
		q = pkt_peek(p, 8, IPV6_HLEN);
		if (ic[0] != ICMP6_PACKET_TOO_BIG || !q || (q[0] >> 4) != 6 || q[6] != IPPROTO_TCP)
			return;
		mtu = (uint32_t)ic[4] << 24 | (uint32_t)ic[5] << 16 | (uint32_t)ic[6] << 8 | ic[7];
		memcpy(&a.a.v6, q + 8, 16);
		if (!ipv6_find_addr(st, &a.a.v6, NULL))
			return;
		memcpy(local.addr, q + 8, 16);
		memcpy(remote.addr, q + 24, 16);
	}
	st->tcp->pmtu_updates++;
	tcp_pmtu_update(st->tcp->tcp, &local, &remote, mtu, tcp_glue_now_us(st));
}

static void tcp_glue_timer(struct loop_timer *t)
{
	struct tcp_glue *g = t->ctx;

	g->armed_us = UINT64_MAX;
	tcp_timers_run(g->tcp, tcp_glue_now_us(g->st));
}

/*
 * End of a loop turn: send what the turn produced, release the engine's
 * retired send memory once no frame borrows it, arm the timer for the
 * earliest deadline. Runs before main's own flush hook, which then finds
 * the links empty.
 */
static void tcp_glue_turn_end(void *ctx)
{
	struct tcp_glue *g = ctx;
	struct stack *st = g->st;
	uint64_t next, now;
	unsigned int i, borrowed = 0;

	for (i = 0; i < st->n_links; i++) {
		link_tx_flush(st->links[i]);
		borrowed += link_tx_borrowed(st->links[i]);
	}
	if (!borrowed)
		tcp_stack_tx_done(g->tcp);
	next = tcp_next_deadline(g->tcp);
	if (next == UINT64_MAX) {
		loop_timer_cancel(st->loop, &g->timer);
		g->armed_us = UINT64_MAX;
		return;
	}
	if (next == g->armed_us && loop_timer_armed(&g->timer))
		return;
	now = tcp_glue_now_us(st);
	g->armed_us = next;
	loop_timer_arm(st->loop, &g->timer, next > now ? (next - now + 999) / 1000 : 0);
}

/**
 * tcp_glue_init() - create the TCP engine of @st and hook it to the loop
 * Return: 0, -ENOMEM, or -ENOSPC when the loop has no room for the hook.
 */
int tcp_glue_init(struct stack *st)
{
	struct tcp_stack_cfg cfg;
	struct tcp_glue *g = calloc(1, sizeof(*g));
	int ret;

	if (!g)
		return -ENOMEM;
	memset(&cfg, 0, sizeof(cfg));
	cfg.emit = tcp_glue_emit;
	cfg.emit_ctx = g;
	g->st = st;
	g->armed_us = UINT64_MAX;
	g->tcp = tcp_stack_new(&cfg);
	if (!g->tcp) {
		free(g);
		return -ENOMEM;
	}
	loop_timer_init(&g->timer, tcp_glue_timer, g);
	ret = loop_on_turn_end(st->loop, tcp_glue_turn_end, g);
	if (ret < 0) {
		tcp_stack_free(g->tcp);
		free(g);
		return ret;
	}
	st->tcp = g;
	return 0;
}

/**
 * tcp_glue_fini() - free the engine (services closed their connections)
 *
 * Called before the links are freed: nothing borrowed is queued any more
 * once the links are gone, and the engine's memory goes with it.
 */
void tcp_glue_fini(struct stack *st)
{
	struct tcp_glue *g = st->tcp;

	if (!g)
		return;
	loop_timer_cancel(st->loop, &g->timer);
	loop_off_turn_end(st->loop, tcp_glue_turn_end, g);
	tcp_stack_free(g->tcp);
	free(g);
	st->tcp = NULL;
}

static int tcp_glue_conn_row(struct tcp_conn *c, void *arg)
{
	struct out *o = arg;
	struct tcp_conn_info i;
	char buf[INET6_ADDRSTRLEN + 16];

	tcp_conn_info(c, &i);
	out_obj_begin(o, NULL);
	out_str(o, "state", tcp_state_name(i.state));
	out_str(o, "local", tcp_glue_endpoint_str(&i.local, buf, sizeof(buf)));
	out_str(o, "remote", tcp_glue_endpoint_str(&i.remote, buf, sizeof(buf)));
	out_str(o, "cc", i.cc ? i.cc : "-");
	out_u64(o, "mss", i.snd_mss);
	out_u64(o, "cwnd", i.cwnd);
	out_u64(o, "ssthresh", i.ssthresh);
	out_double(o, "srtt_ms", i.srtt_us / 1000.0);
	out_double(o, "rttvar_ms", i.rttvar_us / 1000.0);
	out_u64(o, "rto_ms", i.rto_us / 1000);
	out_u64(o, "snd_wnd", i.snd_wnd);
	out_u64(o, "rcv_wnd", i.rcv_wnd);
	out_u64(o, "bytes_sent", i.bytes_sent);
	out_u64(o, "bytes_acked", i.bytes_acked);
	out_u64(o, "bytes_received", i.bytes_received);
	out_u64(o, "segs_out", i.segs_out);
	out_u64(o, "segs_in", i.segs_in);
	out_u64(o, "retrans", i.retrans_segs);
	out_u64(o, "sack_recoveries", i.sack_recoveries);
	out_u64(o, "fast_recoveries", i.fast_recoveries);
	out_u64(o, "rtos", i.rto_count);
	out_u64(o, "rack_lost", i.rack_marked);
	out_double(o, "reo_wnd_ms", i.rack_reo_wnd_us / 1000.0);
	out_u64(o, "dsacks_rx", i.dsacks_rx);
	out_u64(o, "undos", i.undos);
	out_u64(o, "tlp_probes", i.tlp_probes);
	out_u64(o, "tlp_recoveries", i.tlp_recoveries);
	out_u64(o, "unacked", i.unacked_bytes);
	out_u64(o, "sndbuf_used", i.sndbuf_used);
	out_u64(o, "sndbuf", i.sndbuf_cap);
	out_u64(o, "rcvbuf_used", i.rcvbuf_used);
	out_u64(o, "rcvbuf", i.rcvbuf_cap);
	out_u64(o, "ooo_bytes", i.ooo_bytes);
	out_obj_end(o);
	return 0;
}

/**
 * tcp_glue_print_stats() - the "tcp" counters and the "tcp_connections" table
 * @st:	stack
 * @o:	printer (text or JSON, one code path)
 */
void tcp_glue_print_stats(struct stack *st, struct out *o)
{
	struct tcp_glue *g = st->tcp;
	struct tcp_stack_stats s;

	if (!g)
		return;
	tcp_stack_stats(g->tcp, &s);
	out_obj_begin(o, "tcp");
	out_u64(o, "conns", s.conns);
	out_u64(o, "timewait", s.timewait);
	out_u64(o, "segs_in", s.segs_in);
	out_u64(o, "segs_out", s.segs_out);
	out_u64(o, "rst_out", s.rst_out);
	out_u64(o, "rx_bad", g->rx_bad);
	out_u64(o, "tx_borrowed", g->borrowed);
	out_u64(o, "tx_copied", g->copied);
	out_u64(o, "tx_split", g->split);
	out_u64(o, "tx_gso_frames", g->gso_frames);
	out_u64(o, "tx_errors", g->emit_errors);
	out_u64(o, "tx_held", g->tx_held);
	out_u64(o, "pmtu_updates", g->pmtu_updates);
	out_u64(o, "drop_malformed", s.drop_malformed);
	out_u64(o, "drop_no_socket", s.drop_no_socket);
	out_u64(o, "drop_paws", s.drop_paws);
	out_u64(o, "drop_out_of_window", s.drop_out_of_window);
	out_u64(o, "drop_ooo_full", s.drop_ooo_full);
	out_u64(o, "drop_bad_ack", s.drop_bad_ack);
	out_u64(o, "challenge_acks", s.challenge_acks);
	out_u64(o, "challenge_acks_limited", s.challenge_acks_limited);
	out_u64(o, "syncookies_sent", s.syncookies_sent);
	out_u64(o, "syncookies_ok", s.syncookies_ok);
	out_u64(o, "syncookies_bad", s.syncookies_bad);
	out_u64(o, "synq_overflow", s.synq_overflow);
	out_u64(o, "timewait_evicted", s.timewait_evicted);
	out_u64(o, "emit_errors", s.emit_errors);
	out_u64(o, "retrans_segs", s.retrans_segs);
	out_u64(o, "fast_recoveries", s.fast_recoveries);
	out_u64(o, "sack_recoveries", s.sack_recoveries);
	out_u64(o, "rtos", s.rtos);
	out_u64(o, "rack_lost", s.rack_marked);
	out_u64(o, "dsacks_rx", s.dsacks_rx);
	out_u64(o, "undos", s.undos);
	out_obj_end(o);
	out_arr_begin(o, "tcp_connections");
	tcp_foreach_conn(g->tcp, tcp_glue_conn_row, o);
	out_arr_end(o);
}
