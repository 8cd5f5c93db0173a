// SPDX-License-Identifier: MIT
/*
 * tcp_glue.c - the adapter between an IP layer (the outer stack, or the
 * container face) and a TCP engine of datapath/tcp/
 *
 * Theory of operation
 *
 * The engine is a pure protocol machine (docs/tcp.md): it takes parsed
 * segments and the time, and emits segments through a callback. A struct
 * tcp_glue is everything around one engine; where its segments go is the
 * instance's struct tcp_glue_ops. Two instances run: the outer stack's
 * (st->tcp: routed by longest prefix, resolved by ARP/NDP, out of an
 * AF_PACKET link) and the container face's (face.c: straight into the
 * TUN). The code below is the same for both.
 *
 * Input. ipv4_deliver()/ipv6 (or the face) hand a TCP segment at
 * pkt_data(). The header and its options are read with pkt_peek() only; the
 * checksum over the pseudo-header is verified unless the kernel vouched for
 * it (pkt->csum_ok: VIRTIO_NET_HDR_F_DATA_VALID, or NEEDS_CSUM, a frame from
 * the local kernel whose checksum is not even computed yet; docs/gso.md). The
 * outer stack drops segments to a broadcast or multicast address (RFC 9293
 * 3.10.7.1). The engine copies what it keeps, so the packet stays borrowed.
 *
 * Output. The emit callback builds one pkt per segment: the linear part
 * holds the TCP header and options (IP and the link's header are pushed in
 * front by the layers below), the tail borrows the payload from the
 * connection's send ring (pkt.h), and the checksum is computed over both,
 * or left to the kernel (below). Two cases copy the payload into the linear
 * part instead: a payload that wraps around the ring (two iovecs; a frame
 * has one tail), and a next hop still being resolved (ops->hop_ready), since
 * the neighbour queue may hold the frame longer than the link's transmit
 * batch. Borrowed memory must outlive every queued frame: at the end of each
 * loop turn (stack_turn_end()) the links are flushed and, when no link holds
 * a borrowed frame any more, tcp_glue_turn_end() lets the engine free send
 * memory it replaced or released, and what it lent. The emit callback says
 * which segments borrowed (TCP_EMIT_LENT): the engine then neither frees
 * nor overwrites those bytes until tcp_stack_tx_done() (the borrow rule,
 * written once in tcp_pool.c), so services send whenever they like, a
 * link blocked by EAGAIN included.
 *
 * Time and timers. The engine's clock is the loop's, in microseconds (the
 * loop reads the clock once per turn, in milliseconds). One loop timer
 * stands for every connection's timers: at the end of each turn it is armed
 * for tcp_next_deadline(); when it fires, tcp_timers_run() does the due work.
 *
 * Per connection, the MSS comes from the MTU of the link its segments leave
 * by (minus the IP and TCP headers) and the largest emitted payload
 * (gso_max_bytes) from the link's GSO mode (vnet_tcp_gso_bytes(),
 * docs/gso.md). The engine then emits segments of up to that size with
 * gso_size = its sending MSS (in-flight data and cwnd stay in bytes,
 * retransmissions stay one MSS). Such a segment leaves here in one of two
 * ways:
 *
 *  - hw (the link has a vnet header and is in hw mode: an AF_PACKET link
 *    with PACKET_VNET_HDR, or the face's TUN): one frame whose
 *    virtio_net_hdr asks the kernel to segment it (vnet_set_tcp_gso()) and
 *    whose TCP checksum field holds the folded, not inverted, pseudo-header
 *    sum over the whole L4 length. Where the payload wraps around the send
 *    ring, the frame is cut at the last MSS boundary before the wrap and the
 *    one MSS piece that straddles it is copied.
 *  - sw (and whenever the link cannot take a GSO frame): the segment is cut
 *    into gso_size pieces, each its own pkt with its own headers, sequence
 *    number, IP id and full checksum, FIN and PSH only on the last, the
 *    payload borrowed slice by slice (no copy). The TCP header, options and
 *    pseudo-header are built and summed once per segment; a piece copies
 *    the header, patches seq and flags, and sums only its own payload
 *    (tcp_glue_emit_sw()). They queue in the link, which sends up to a
 *    batch of them in one sendmmsg().
 *
 * A link that takes partial checksums for every frame (the TUN: the
 * container's kernel trusts them, as over a veth) gets segments that are not
 * GSO frames with NEEDS_CSUM too (vnet_set_csum()): nothing is summed here.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/link/vnet.h"
#include "datapath/net/net.h"
#include "datapath/net/proto_hdr.h"
#include "datapath/net/tcp_glue.h"

/**
 * struct tcp_glue - one engine and what joins it to its IP layer
 * @st:		the stack: loop, drops, counters
 * @ops, @ctx:	where segments go
 * @tcp:	the engine
 * @timer:	fires at the engine's next deadline
 * @armed_us:	deadline @timer is armed for, UINT64_MAX if none
 * @c:		counters
 */
struct tcp_glue {
	struct stack *st;
	const struct tcp_glue_ops *ops;
	void *ctx;
	struct tcp_stack *tcp;
	struct loop_timer timer;
	uint64_t armed_us;
	struct tcp_glue_counters c;
};

/**
 * tcp_glue_now_us() - the engines' clock: the loop's time in microseconds
 */
uint64_t tcp_glue_now_us(const struct stack *st)
{
	return loop_now_ms(st->loop) * 1000;
}

/**
 * tcp_glue_engine() - the engine of one instance
 */
struct tcp_stack *tcp_glue_engine(const struct tcp_glue *g)
{
	return g ? g->tcp : NULL;
}

/**
 * tcp_glue_stack() - the outer stack's engine (services open sockets on it)
 */
struct tcp_stack *tcp_glue_stack(const struct stack *st)
{
	return tcp_glue_engine(st->tcp);
}

/**
 * tcp_glue_counters() - the counters of one instance
 */
struct tcp_glue_counters *tcp_glue_counters(struct tcp_glue *g)
{
	return &g->c;
}

/**
 * tcp_glue_endpoint_str() - "10.0.0.1:80" or "[fd00::1]:80"
 * Return: @buf.
 */
const char *tcp_glue_endpoint_str(const struct tcp_endpoint *e, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(e->addr.family, e->addr.a.bytes, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, e->addr.family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, e->port);
	return buf;
}

/**
 * tcp_glue_conn_opts_link() - settings for a connection whose segments leave by @l
 * @l:		the link (NULL: MTU 1500, no GSO)
 * @family:	AF_INET or AF_INET6
 * @o:		result: MSS from the link's MTU, gso_max_bytes from its GSO mode
 */
void tcp_glue_conn_opts_link(const struct link *l, uint8_t family, struct tcp_conn_opts *o)
{
	uint32_t mtu = l ? l->mtu : 1500;
	uint32_t hdrs = (family == AF_INET6 ? IPV6_HLEN : IPV4_HLEN) + TCP_HLEN;
	uint32_t mss = mtu > hdrs + 88 ? mtu - hdrs : 88;
	uint32_t gso;

	memset(o, 0, sizeof(*o));
	o->mss = mss > 65495 ? 65495 : (uint16_t)mss;
	gso = vnet_tcp_gso_bytes(l, family, o->mss);
	o->gso_max_bytes = gso > o->mss ? gso : o->mss;
}

/**
 * tcp_glue_conn_opts() - settings for an outer connection of @family to @remote
 * @st:		stack
 * @family:	AF_INET or AF_INET6
 * @remote:	the peer, or NULL for a listener (then the smallest link MTU
 *		and the smallest GSO limit of all links)
 * @o:		result (tcp_glue_conn_opts_link() of the route's link)
 */
void tcp_glue_conn_opts(const struct stack *st, uint8_t family, const struct net_addr *remote,
			struct tcp_conn_opts *o)
{
	struct tcp_conn_opts each;
	unsigned int i;

	if (remote && remote->family == family) {
		const struct route *r = route_lookup(st, family, &remote->a);

		if (r && r->link) {
			tcp_glue_conn_opts_link(r->link, family, o);
			return;
		}
	}
	tcp_glue_conn_opts_link(NULL, family, o);
	for (i = 0; i < st->n_links; i++) {
		tcp_glue_conn_opts_link(st->links[i], family, &each);
		if (i == 0 || each.mss < o->mss)
			o->mss = each.mss;
		if (i == 0 || each.gso_max_bytes < o->gso_max_bytes)
			o->gso_max_bytes = each.gso_max_bytes;
	}
	if (o->gso_max_bytes < o->mss)
		o->gso_max_bytes = o->mss;
}

/**
 * tcp_glue_pick_src() - our address for a connection to @dst
 * Return: 0, or -ENETUNREACH / -EAFNOSUPPORT.
 */
int tcp_glue_pick_src(const struct stack *st, const struct net_addr *dst, struct net_addr *src)
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
	*src = a;
	return 0;
}

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

/* The pseudo-header accumulator of a segment of @l4_len bytes. */
static uint32_t tcp_glue_pseudo(const struct net_addr *s, const struct net_addr *d, uint32_t l4_len)
{
	return s->family == AF_INET ? csum_pseudo4(s->a.v4, d->a.v4, IPPROTO_TCP, l4_len) :
				      csum_pseudo6(&s->a.v6, &d->a.v6, IPPROTO_TCP, l4_len);
}

/*
 * One emitted frame: header + options, payload @iov (borrowed or copied).
 * @gso_size non-zero: a hw GSO frame of @len bytes cut by the kernel into
 * @gso_size pieces; 0: one segment, its checksum full or (a link that takes
 * partial checksums) left to the kernel. Return: TCP_EMIT_LENT when the
 * frame borrows its payload, 0 when it copied it, negative on error.
 */
static int tcp_glue_emit_one(struct tcp_glue *g, const struct tcp_seg_out *seg, const struct link *l,
			     uint32_t seq, uint8_t flags, const struct iovec *iov, int iovcnt, size_t len,
			     uint16_t gso_size)
{
	struct stack *st = g->st;
	uint8_t opts[TCP_OPTS_MAX_BYTES];
	struct net_addr src, dst;
	struct tcp_hdr *th;
	bool copy, v6 = seg->dst.family == AF_INET6;
	size_t hlen, l3 = v6 ? IPV6_HLEN : IPV4_HLEN;
	uint32_t sum;
	struct pkt *p;
	int olen, i, ret;

	olen = tcp_opts_write(&seg->opts, opts, sizeof(opts));
	if (olen < 0 || olen % 4) {
		g->c.emit_errors++;
		return olen < 0 ? olen : -EINVAL;
	}
	src = seg->src;
	dst = seg->dst;
	hlen = TCP_HLEN + olen;
	copy = len && (iovcnt != 1 || !g->ops->hop_ready(g->ctx, &dst));
	p = pkt_alloc(hlen + (copy ? len : 0));
	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		g->c.emit_errors++;
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
		g->c.copied++;
	} else if (len) {
		pkt_set_tail(p, iov[0].iov_base, (uint32_t)iov[0].iov_len);
		g->c.borrowed++;
	}
	sum = tcp_glue_pseudo(&src, &dst, (uint32_t)pkt_total_len(p));
	if (gso_size) {
		vnet_set_tcp_gso(&p->vnet, v6, (unsigned int)l3, (unsigned int)(l3 + hlen), gso_size);
		th->csum = htons((uint16_t)~csum_fold(sum));
	} else if (l && l->tx_csum_partial) {
		vnet_set_csum(&p->vnet, (unsigned int)l3, VNET_TCP_CSUM_OFF);
		th->csum = htons((uint16_t)~csum_fold(sum));
		g->c.csum_offloaded++;
	} else {
		th->csum = htons(csum_pkt_l4(p, sum));
	}
	ret = g->ops->output(g->ctx, p, &src, &dst);
	if (ret < 0) {
		g->c.emit_errors++;
		return ret;
	}
	return !copy && len ? TCP_EMIT_LENT : 0;
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
	struct net_addr src, dst;
	uint32_t hsum;
	struct iovec iov[2];
	size_t hlen, off, n;
	int olen, cnt, ret, lent = 0;
	bool ready;

	olen = tcp_opts_write(&seg->opts, h.b + TCP_HLEN, sizeof(h.b) - TCP_HLEN);
	if (olen < 0 || olen % 4) {
		g->c.emit_errors++;
		return olen < 0 ? olen : -EINVAL;
	}
	src = seg->src;
	dst = seg->dst;
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
	hsum = csum_partial(h.b, hlen, tcp_glue_pseudo(&src, &dst, 0));
	ready = g->ops->hop_ready(g->ctx, &dst);
	for (off = 0; off < seg->len; off += n) {
		uint32_t seq = seg->seq + (uint32_t)off, l4, sum;
		uint8_t flags;
		struct tcp_hdr *th;
		struct pkt *p;

		n = seg->len - off < seg->gso_size ? seg->len - off : seg->gso_size;
		flags = off + n == seg->len ? seg->flags : seg->flags & ~(TCP_FIN | TCP_PSH);
		cnt = tcp_glue_slice(seg, off, n, iov);
		if (cnt < 0) {
			g->c.emit_errors++;
			return cnt;
		}
		g->c.split++;
		if (l && l->gso_mode == PROTO_GSO_SW)
			l->stats.tx_sw_segments++;
		if (cnt != 1 || !ready) {
			ret = tcp_glue_emit_one(g, seg, l, seq, flags, iov, cnt, n, 0);
			if (ret < 0)
				return ret;
			lent |= ret;
			continue;
		}
		p = pkt_alloc(hlen);
		th = p ? pkt_put(p, hlen) : NULL;
		if (!th) {
			pkt_free(p);
			stack_drop(st, DROP_NO_MEMORY);
			g->c.emit_errors++;
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
		g->c.borrowed++;
		ret = g->ops->output(g->ctx, p, &src, &dst);
		if (ret < 0) {
			g->c.emit_errors++;
			return ret;
		}
		lent = TCP_EMIT_LENT;
	}
	return lent;
}

/*
 * The engine's output (see the theory of operation). A segment larger than
 * @gso_size leaves as hw GSO frames when its link is in hw mode, else it is
 * cut into @gso_size pieces (tcp_glue_emit_sw()); FIN and PSH on the last
 * frame.
 */
static int tcp_glue_emit(void *ctx, const struct tcp_seg_out *seg)
{
	struct tcp_glue *g = ctx;
	struct net_addr dst;
	struct iovec iov[2];
	struct link *l;
	size_t off, n;
	int ret, cnt, lent = 0;

	dst = seg->dst;
	l = g->ops->link_for(g->ctx, &dst);
	if (!seg->gso_size || seg->len <= seg->gso_size)
		return tcp_glue_emit_one(g, seg, l, seg->seq, seg->flags, seg->iov, seg->iovcnt, seg->len, 0);
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
			g->c.emit_errors++;
			return cnt;
		}
		if (gso)
			g->c.gso_frames++;
		else
			g->c.split++;
		ret = tcp_glue_emit_one(g, seg, l, seg->seq + (uint32_t)off,
					last ? seg->flags : seg->flags & ~(TCP_FIN | TCP_PSH), iov, cnt, n, gso);
		if (ret < 0)
			return ret;
		lent |= ret;
	}
	return lent;
}

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

static void tcp_glue_timer(struct loop_timer *t)
{
	struct tcp_glue *g = t->ctx;

	g->armed_us = UINT64_MAX;
	tcp_timers_run(g->tcp, tcp_glue_now_us(g->st));
}

/**
 * tcp_glue_turn_end() - the end of a loop turn, after the links were flushed
 * @g:		the instance
 * @quiet:	no link holds a frame with a borrowed tail any more
 *
 * Releases the engine's retired send memory once no frame borrows it and
 * arms the timer for the earliest deadline (stack_turn_end() calls it).
 */
void tcp_glue_turn_end(struct tcp_glue *g, bool quiet)
{
	struct stack *st = g->st;
	uint64_t next, now;

	if (quiet)
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
 * tcp_glue_new() - an engine joined to an IP layer
 * @st:		the stack (loop, drop counters)
 * @ops:	where its segments go
 * @ctx:	for @ops
 *
 * Return: the instance, or NULL (out of memory).
 */
struct tcp_glue *tcp_glue_new(struct stack *st, const struct tcp_glue_ops *ops, void *ctx)
{
	struct tcp_stack_cfg cfg;
	struct tcp_glue *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	memset(&cfg, 0, sizeof(cfg));
	cfg.emit = tcp_glue_emit;
	cfg.emit_ctx = g;
	g->st = st;
	g->ops = ops;
	g->ctx = ctx;
	g->armed_us = UINT64_MAX;
	g->tcp = tcp_stack_new(&cfg);
	if (!g->tcp) {
		free(g);
		return NULL;
	}
	loop_timer_init(&g->timer, tcp_glue_timer, g);
	return g;
}

/**
 * tcp_glue_free() - free the engine (its users closed their connections)
 * @g:	the instance, or NULL
 *
 * Called before the links are freed: nothing borrowed is queued any more
 * once the links are gone, and the engine's memory goes with it.
 */
void tcp_glue_free(struct tcp_glue *g)
{
	if (!g)
		return;
	loop_timer_cancel(g->st->loop, &g->timer);
	tcp_stack_free(g->tcp);
	free(g);
}

/* The outer stack's instance: routed, resolved, out of an AF_PACKET link. */

static struct link *tcp_glue_outer_link(void *ctx, const struct net_addr *dst)
{
	const struct route *r = route_lookup(ctx, dst->family, &dst->a);

	return r ? r->link : NULL;
}

static bool tcp_glue_outer_hop_ready(void *ctx, const struct net_addr *dst)
{
	struct stack *st = ctx;
	const struct route *r = route_lookup(st, dst->family, &dst->a);
	const struct neigh *n;
	union proto_inaddr hop;

	if (!r)
		return false;	/* the IP layer drops it; copying is harmless */
	hop = r->has_gateway ? r->gateway : dst->a;
	n = neigh_lookup(st, dst->family, &hop);
	return n && n->state != NEIGH_INCOMPLETE;
}

static int tcp_glue_outer_output(void *ctx, struct pkt *p, const struct net_addr *src,
				 const struct net_addr *dst)
{
	struct stack *st = ctx;

	if (dst->family == AF_INET)
		return ipv4_output(st, p, src->a.v4, dst->a.v4, IPPROTO_TCP, 64, true);
	return ipv6_output(st, NULL, p, &src->a.v6, &dst->a.v6, IPPROTO_TCP, 64);
}

static const struct tcp_glue_ops tcp_glue_outer_ops = {
	.link_for = tcp_glue_outer_link,
	.hop_ready = tcp_glue_outer_hop_ready,
	.output = tcp_glue_outer_output,
};

/**
 * tcp_glue_init() - create the outer stack's TCP engine (st->tcp)
 * Return: 0 or -ENOMEM.
 */
int tcp_glue_init(struct stack *st)
{
	st->tcp = tcp_glue_new(st, &tcp_glue_outer_ops, st);
	return st->tcp ? 0 : -ENOMEM;
}

/**
 * tcp_glue_fini() - free the outer stack's engine
 */
void tcp_glue_fini(struct stack *st)
{
	tcp_glue_free(st->tcp);
	st->tcp = NULL;
}

/**
 * tcp_glue_input() - one TCP segment from the outer stack's IP layer
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
	(void)l;
	stack_count(st, CTR_TCP_IN);
	if (to_bcast || !st->tcp) {
		stack_drop(st, DROP_NOT_FOR_US);
		return;
	}
	tcp_glue_segment(st->tcp, p, src, dst);
}

/**
 * tcp_glue_icmp_error() - an ICMP error the outer stack received about TCP
 * @st:		stack
 * @family:	AF_INET (ICMP) or AF_INET6 (ICMPv6)
 * @p:		the ICMP message at pkt_data(), checksum verified; borrowed
 *
 * Only a quote whose source is one of our addresses can be about one of our
 * segments (tcp_glue_icmp()).
 */
void tcp_glue_icmp_error(struct stack *st, uint8_t family, const struct pkt *p)
{
	const uint8_t *q = pkt_peek(p, 8, family == AF_INET ? IPV4_HLEN : IPV6_HLEN);
	struct in6_addr a6;
	struct in_addr a4;

	if (!q || !st->tcp)
		return;
	if (family == AF_INET) {
		memcpy(&a4, q + 12, 4);
		if (!ipv4_is_ours(st, a4))
			return;
	} else {
		memcpy(&a6, q + 8, 16);
		if (!ipv6_find_addr(st, &a6, NULL))
			return;
	}
	tcp_glue_icmp(st->tcp, family, p);
}

/**
 * tcp_glue_print_stats() - the outer engine's "tcp" counters and "tcp_connections"
 * @st:	stack
 * @o:	printer (text or JSON, one code path)
 */
void tcp_glue_print_stats(struct stack *st, struct out *o)
{
	if (st->tcp)
		tcp_glue_print(st->tcp, o, "tcp", "tcp_connections");
}
