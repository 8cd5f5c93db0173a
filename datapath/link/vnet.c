// SPDX-License-Identifier: MIT
/*
 * vnet.c - the virtio_net_hdr and the GSO limits, for both kinds of link
 *
 * Theory of operation
 *
 * A link that speaks virtio-net headers (an AF_PACKET channel with
 * PACKET_VNET_HDR, which netsetup sets in every GSO mode, and the container
 * face's TUN with IFF_VNET_HDR) carries one struct virtio_net_hdr in front
 * of every frame; only hw mode asks for offloads with it.
 * This file is the only place that knows its rules (docs/gso.md's table):
 *
 *  - Transmit. A transport asks for an offload on the pkt it builds, before
 *    it knows the link: vnet_set_csum() (checksum only: NEEDS_CSUM, the
 *    checksum field holds the folded, not inverted, pseudo-header sum),
 *    vnet_set_tcp_gso() (TCPV4/TCPV6, gso_size the MSS, csum_offset 16) or
 *    vnet_set_udp_gso() (UDP_L4, gso_size the datagram size, csum_offset 6).
 *    The offsets it gives (csum_start, hdr_len) count from the network
 *    header; link_output() adds the link's own L2 header length with
 *    vnet_to_wire() when the frame is queued (14 for Ethernet, 0 for a TUN).
 *  - Limits. vnet_frame_limit() is the largest GSO frame a link takes, its
 *    L2 header included: at most 65535 bytes and below the link's
 *    gso_max_size (at or above it the kernel splits the frame itself), or
 *    for IPv4 TCP in hw mode the BIG TCP limit netsetup sent.
 *    vnet_tcp_gso_bytes() and vnet_udp_gso_segs() turn it into what TCP
 *    and UDP may put in one frame.
 *  - Receive. vnet_rx_check() refuses a header that no kernel would
 *    write (an unknown gso_type, a GSO frame without NEEDS_CSUM or without
 *    gso_size, a checksum field beyond the frame): the container face's
 *    TUN is written by the container's kernel, which a program with
 *    CAP_NET_ADMIN may drive, so nothing in the header is trusted.
 *    vnet_rx_csum_ok() says whether the kernel vouched for the L4 checksum
 *    (DATA_VALID, or NEEDS_CSUM: a local frame whose checksum is not even
 *    computed yet, which must not be verified). vnet_udp_split() cuts a
 *    received UDP GSO frame (a kernel peer's UDP_SEGMENT send) into its
 *    datagrams; TCP GSO frames go up whole, TCP takes large segments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "datapath/link/link.h"
#include "datapath/link/vnet.h"
#include "datapath/wire/csum.h"
#include "datapath/wire/proto_hdr.h"

/**
 * vnet_set_csum() - ask for the L4 checksum only (no segmentation)
 * @h:		header of the pkt being built
 * @l4_off:	offset of the L4 header from the network header
 * @csum_off:	offset of the checksum field in the L4 header
 */
void vnet_set_csum(struct virtio_net_hdr *h, unsigned int l4_off, unsigned int csum_off)
{
	memset(h, 0, sizeof(*h));
	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->gso_type = VIRTIO_NET_HDR_GSO_NONE;
	h->csum_start = (uint16_t)l4_off;
	h->csum_offset = (uint16_t)csum_off;
}

/**
 * vnet_set_tcp_gso() - ask the kernel to cut a TCP segment into @mss pieces
 * @h:		header of the pkt being built
 * @v6:		TCPV6 rather than TCPV4
 * @l4_off:	offset of the TCP header from the network header
 * @hdrs:	network and TCP headers with options, in bytes
 * @mss:	payload bytes per piece
 */
void vnet_set_tcp_gso(struct virtio_net_hdr *h, bool v6, unsigned int l4_off, unsigned int hdrs,
		      unsigned int mss)
{
	vnet_set_csum(h, l4_off, VNET_TCP_CSUM_OFF);
	h->gso_type = v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
	h->gso_size = (uint16_t)mss;
	h->hdr_len = (uint16_t)hdrs;
}

/**
 * vnet_set_udp_gso() - ask the kernel to cut a UDP frame into datagrams
 * @h:		header of the pkt being built
 * @l4_off:	offset of the UDP header from the network header
 * @gso_size:	payload bytes per datagram (the last may be shorter)
 */
void vnet_set_udp_gso(struct virtio_net_hdr *h, unsigned int l4_off, unsigned int gso_size)
{
	vnet_set_csum(h, l4_off, VNET_UDP_CSUM_OFF);
	h->gso_type = VNET_GSO_UDP_L4;
	h->gso_size = (uint16_t)gso_size;
	h->hdr_len = (uint16_t)(l4_off + UDP_HLEN);
}

/**
 * vnet_to_wire() - make the offsets count from the start of the frame
 * @h:		header as a transport set it (offsets from the network header)
 * @l2_len:	bytes of the link's own header in front of the network header
 */
void vnet_to_wire(struct virtio_net_hdr *h, unsigned int l2_len)
{
	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
		h->csum_start = (uint16_t)(h->csum_start + l2_len);
	if (vnet_is_gso(h))
		h->hdr_len = (uint16_t)(h->hdr_len + l2_len);
}

/**
 * vnet_is_gso() - does the header ask for (or report) segmentation?
 */
bool vnet_is_gso(const struct virtio_net_hdr *h)
{
	return (h->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) != VIRTIO_NET_HDR_GSO_NONE;
}

/**
 * vnet_gso_segs() - on-wire segments a GSO frame of @l4_payload bytes becomes
 * Return: at least 1.
 */
unsigned int vnet_gso_segs(const struct virtio_net_hdr *h, size_t l4_payload)
{
	if (!vnet_is_gso(h) || !h->gso_size || !l4_payload)
		return 1;
	return (unsigned int)((l4_payload + h->gso_size - 1) / h->gso_size);
}

/**
 * vnet_rx_check() - is a received header one a kernel would write?
 * @h:		the header
 * @len:	bytes of the frame behind it
 * @l2_len:	the link's L2 header length (the offsets count it)
 *
 * Return: 0, or -EINVAL (the frame is dropped and counted by the caller).
 */
int vnet_rx_check(const struct virtio_net_hdr *h, size_t len, unsigned int l2_len)
{
	uint8_t type = h->gso_type & ~VIRTIO_NET_HDR_GSO_ECN;

	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		if (h->csum_start < l2_len || (size_t)h->csum_start + h->csum_offset + 2 > len)
			return -EINVAL;
	}
	if (type == VIRTIO_NET_HDR_GSO_NONE)
		return 0;
	if (type != VIRTIO_NET_HDR_GSO_TCPV4 && type != VIRTIO_NET_HDR_GSO_TCPV6 &&
	    type != VNET_GSO_UDP_L4)
		return -EINVAL;
	if (!h->gso_size || !(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || h->hdr_len > len)
		return -EINVAL;
	return 0;
}

/**
 * vnet_rx_csum_ok() - the kernel vouched for the L4 checksum
 */
bool vnet_rx_csum_ok(const struct virtio_net_hdr *h)
{
	return h->flags & (VIRTIO_NET_HDR_F_DATA_VALID | VIRTIO_NET_HDR_F_NEEDS_CSUM);
}

/**
 * vnet_frame_limit() - largest GSO frame @l takes, its L2 header included
 * @l:		the link
 * @family:	AF_INET or AF_INET6
 * @tcp:	a TCP frame (IPv4 BIG TCP applies to TCP only)
 *
 * Return: bytes: at most 65535 and below gso_max_size (65536 when netsetup
 * did not say); for IPv4 TCP in hw mode up to the IPv4 frame limit netsetup
 * sent when it is over 64 KiB (docs/gso.md, BIG TCP).
 */
uint32_t vnet_frame_limit(const struct link *l, uint8_t family, bool tcp)
{
	uint32_t frame = l->gso_max_size ? l->gso_max_size - 1 : VNET_FRAME_MAX;

	if (frame > VNET_FRAME_MAX)
		frame = VNET_FRAME_MAX;
	if (tcp && family == AF_INET && l->vnet && l->gso_mode == PROTO_GSO_HW &&
	    l->gso_ipv4_max_size > VNET_FRAME_MAX) {
		uint32_t big = l->gso_ipv4_max_size < VNET_BIG_FRAME_MAX ? l->gso_ipv4_max_size :
									    VNET_BIG_FRAME_MAX;

		if (big > frame)
			frame = big;
	}
	return frame;
}

/**
 * vnet_tcp_gso_bytes() - largest TCP payload of one emitted segment on a link
 * @l:		link, or NULL (then one MSS)
 * @family:	AF_INET or AF_INET6
 * @mss:	the connection's MSS
 *
 * Off mode: @mss. hw and sw mode: the frame, L2, IP and the largest TCP
 * header included, within vnet_frame_limit(), and the segment count within
 * gso_max_segs.
 *
 * Return: payload bytes, at least @mss.
 */
uint32_t vnet_tcp_gso_bytes(const struct link *l, uint8_t family, uint32_t mss)
{
	uint32_t hdrs, frame, bytes;

	if (!l || l->gso_mode == PROTO_GSO_OFF || !mss)
		return mss;
	hdrs = l->l2_len + (family == AF_INET6 ? IPV6_HLEN : IPV4_HLEN) + TCP_MAX_HLEN;
	frame = vnet_frame_limit(l, family, true);
	if (frame < hdrs + mss)
		return mss;
	bytes = frame - hdrs;
	if (l->gso_max_segs && bytes / mss > l->gso_max_segs)
		bytes = l->gso_max_segs * mss;
	return bytes < mss ? mss : bytes;
}

/**
 * vnet_udp_gso_segs() - datagrams of @gso_size bytes one hw GSO frame may carry
 * @l:		the link the frame leaves by
 * @family:	AF_INET or AF_INET6
 * @gso_size:	payload bytes per datagram
 *
 * Return: 0 when the link does not take UDP GSO frames (no vnet header, not
 * hw mode, or a datagram does not fit its MTU), else at most
 * VNET_UDP_MAX_SEGS and the link's gso_max_segs, such that the frame fits
 * vnet_frame_limit().
 */
unsigned int vnet_udp_gso_segs(const struct link *l, uint8_t family, size_t gso_size)
{
	size_t hdrs = (family == AF_INET ? IPV4_HLEN : IPV6_HLEN) + UDP_HLEN, frame, segs;

	if (!l || !l->vnet || l->gso_mode != PROTO_GSO_HW || !gso_size || hdrs + gso_size > l->mtu)
		return 0;
	frame = vnet_frame_limit(l, family, false);
	if (frame < l->l2_len + hdrs + gso_size)
		return 0;
	segs = (frame - l->l2_len - hdrs) / gso_size;
	if (segs > VNET_UDP_MAX_SEGS)
		segs = VNET_UDP_MAX_SEGS;
	if (l->gso_max_segs && segs > l->gso_max_segs)
		segs = l->gso_max_segs;
	return (unsigned int)segs;
}

/*
 * One datagram of a split: the headers (L2, IP, UDP: @hdrs bytes) copied,
 * the lengths of IP and UDP fixed for @n payload bytes, the IPv4 header
 * checksum recomputed (its total length changed).
 */
static struct pkt *vnet_udp_piece(const uint8_t *hdr, size_t l2_len, size_t hdrs, const uint8_t *data,
				  size_t n)
{
	struct pkt *q = pkt_alloc(hdrs + n);
	uint8_t *b = q ? pkt_put(q, hdrs + n) : NULL;
	struct udp_hdr *uh;

	if (!b) {
		pkt_free(q);
		return NULL;
	}
	memcpy(b, hdr, hdrs);
	memcpy(b + hdrs, data, n);
	if ((b[l2_len] >> 4) == 4) {
		struct ipv4_hdr *ih = (struct ipv4_hdr *)(b + l2_len);

		ih->tot_len = htons((uint16_t)(hdrs - l2_len + n));
		ih->csum = 0;
		ih->csum = htons(csum_fold(csum_partial(ih, (ih->ver_ihl & 0xf) * 4u, 0)));
	} else {
		struct ipv6_hdr *ih = (struct ipv6_hdr *)(b + l2_len);

		ih->payload_len = htons((uint16_t)(hdrs - l2_len - IPV6_HLEN + n));
	}
	uh = (struct udp_hdr *)(b + hdrs - UDP_HLEN);
	uh->len = htons((uint16_t)(UDP_HLEN + n));
	q->csum_ok = true;
	return q;
}

/**
 * vnet_udp_split() - cut a received UDP GSO frame into its datagrams
 * @p:		the frame at pkt_data() (L2 header first), its vnet header in @p->vnet
 * @l2_len:	bytes of L2 header in front of the IP header
 * @fn:		called with each datagram, in order; the piece is freed after it
 * @ctx:	for @fn
 *
 * The checksum is partial (NEEDS_CSUM): the kernel vouches for the data,
 * and each piece is marked so (csum_ok). The UDP header starts at
 * csum_start; the IP header in front of it must say so (IPv4: its IHL;
 * IPv6: no extension header).
 *
 * Return: 0, -EINVAL for a header that does not add up, -ENOMEM.
 */
int vnet_udp_split(const struct pkt *p, unsigned int l2_len, vnet_seg_fn fn, void *ctx)
{
	size_t l4 = p->vnet.csum_start, hdrs = l4 + UDP_HLEN, seg = p->vnet.gso_size, off;
	const uint8_t *ip = pkt_peek(p, l2_len, 1);
	const uint8_t *hdr = pkt_peek(p, 0, hdrs);

	if (!seg || !ip || !hdr)
		return -EINVAL;
	if ((ip[0] >> 4) == 4) {
		const struct ipv4_hdr *ih = pkt_peek(p, l2_len, sizeof(*ih));

		if (!ih || ih->proto != IPPROTO_UDP || l4 != l2_len + (ih->ver_ihl & 0xfu) * 4 ||
		    (ih->ver_ihl & 0xf) < 5)
			return -EINVAL;
	} else if ((ip[0] >> 4) == 6) {
		const struct ipv6_hdr *ih = pkt_peek(p, l2_len, sizeof(*ih));

		if (!ih || ih->nexthdr != IPPROTO_UDP || l4 != l2_len + IPV6_HLEN)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	for (off = hdrs; off < p->len; off += seg) {
		size_t n = p->len - off < seg ? p->len - off : seg;
		struct pkt *q = vnet_udp_piece(hdr, l2_len, hdrs, pkt_peek(p, off, n), n);

		if (!q)
			return -ENOMEM;
		q->ifindex = p->ifindex;
		fn(ctx, q);
		pkt_free(q);
	}
	return 0;
}
