// SPDX-License-Identifier: MIT
/*
 * tcp_emit.c - a TCP engine's segments out to its IP layer: one frame, hw
 * GSO frames, or sw pieces
 *
 * Theory of operation
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
 * A segment larger than its gso_size (tcp_glue.c: the connection's MSS)
 * leaves in one of two ways:
 *
 *  - hw (the link has a vnet header and is in hw mode: an AF_PACKET link
 *    with PACKET_VNET_HDR, or a TUN): one frame whose
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
 * One header builder serves every frame (tcp_emit_hdr()): each frame sets
 * only its sequence number, flags and checksum.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "datapath/link/vnet.h"
#include "datapath/net/tcp_glue_int.h"

/*
 * The header of @seg with its options into @b: every field but the
 * sequence number and flags (each frame's own) and the checksum (zero).
 * Return: its length, or negative (options that do not fit; counted in
 * emit_errors).
 */
static int tcp_emit_hdr(struct tcp_glue *g, const struct tcp_seg_out *seg, uint8_t *b, size_t cap)
{
	struct tcp_hdr *th = (struct tcp_hdr *)b;
	int olen = tcp_opts_write(&seg->opts, b + TCP_HLEN, cap - TCP_HLEN);
	size_t hlen;

	if (olen < 0 || olen % 4) {
		g->c.emit_errors++;
		return olen < 0 ? olen : -EINVAL;
	}
	hlen = TCP_HLEN + (size_t)olen;
	th->sport = htons(seg->sport);
	th->dport = htons(seg->dport);
	th->seq = 0;
	th->ack = htonl(seg->ack);
	th->doff = (uint8_t)((hlen / 4) << 4);
	th->flags = 0;
	th->wnd = htons(seg->wnd);
	th->csum = 0;
	th->urg = 0;
	return (int)hlen;
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
	uint8_t h[TCP_MAX_HLEN];
	struct net_addr src = seg->src, dst = seg->dst;
	struct tcp_hdr *th;
	bool copy, v6 = seg->dst.family == AF_INET6;
	size_t hlen, l3 = v6 ? IPV6_HLEN : IPV4_HLEN;
	uint32_t sum;
	struct pkt *p;
	int ret, i;

	ret = tcp_emit_hdr(g, seg, h, sizeof(h));
	if (ret < 0)
		return ret;
	hlen = (size_t)ret;
	copy = len && (iovcnt != 1 || !g->ops->hop_ready(g->ctx, &dst));
	p = pkt_alloc(hlen + (copy ? len : 0));
	if (!p) {
		stack_drop(st, DROP_NO_MEMORY);
		g->c.emit_errors++;
		return -ENOBUFS;
	}
	p->tos = seg->ecn;
	th = pkt_put(p, hlen);
	memcpy(th, h, hlen);
	th->seq = htonl(seq);
	th->flags = flags;
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
	uint8_t h[TCP_MAX_HLEN];
	struct net_addr src = seg->src, dst = seg->dst;
	uint32_t hsum;
	struct iovec iov[2];
	size_t hlen, off, n;
	int cnt, ret, lent = 0;
	bool ready;

	ret = tcp_emit_hdr(g, seg, h, sizeof(h));
	if (ret < 0)
		return ret;
	hlen = (size_t)ret;
	/* the sum of everything but length, seq, flags and payload */
	hsum = csum_partial(h, hlen, tcp_glue_pseudo(&src, &dst, 0));
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
		memcpy(th, h, hlen);
		th->seq = htonl(seq);
		th->flags = flags;
		p->tos = seg->ecn;
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

/**
 * tcp_glue_emit() - the engine's output (struct tcp_stack_cfg's emit)
 * @ctx:	the instance
 * @seg:	the segment; its payload points into the send ring
 *
 * A segment larger than
 * @gso_size leaves as hw GSO frames when its link is in hw mode, else it is
 * cut into @gso_size pieces (tcp_glue_emit_sw()); FIN and PSH on the last
 * frame.
 *
 * Return: TCP_EMIT_LENT when a frame borrows from the send ring, 0 when
 * every frame copied, negative when the segment is lost.
 */
int tcp_glue_emit(void *ctx, const struct tcp_seg_out *seg)
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
