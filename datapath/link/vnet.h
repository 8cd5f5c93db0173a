/* SPDX-License-Identifier: MIT */
/*
 * vnet.h - the virtio_net_hdr and GSO rules of both link kinds, in one place
 * (theory of operation in vnet.c)
 */
#ifndef SANDNET_DATAPATH_LINK_VNET_H
#define SANDNET_DATAPATH_LINK_VNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/virtio_net.h>

/* VIRTIO_NET_HDR_GSO_UDP_L4, missing from Debian 12's headers. */
#define VNET_GSO_UDP_L4		5
/*
 * Largest frame built for a link, its L2 header included: at or above a
 * veth's gso_max_size (65536) the kernel splits a frame itself (docs/gso.md).
 */
#define VNET_FRAME_MAX		65535u
/* Largest IPv4 BIG TCP frame: the kernel's GSO_MAX_SIZE. */
#define VNET_BIG_FRAME_MAX	524280u
/* The kernel's UDP_MAX_SEGMENTS: virtio_net_hdr_to_skb() refuses more (EINVAL). */
#define VNET_UDP_MAX_SEGS	128u

/* Offsets in the TCP and UDP headers of their checksum fields. */
#define VNET_TCP_CSUM_OFF	16
#define VNET_UDP_CSUM_OFF	6

struct link;
struct pkt;

void vnet_set_csum(struct virtio_net_hdr *h, unsigned int l4_off, unsigned int csum_off);
void vnet_set_tcp_gso(struct virtio_net_hdr *h, bool v6, unsigned int l4_off, unsigned int hdrs,
		      unsigned int mss);
void vnet_set_udp_gso(struct virtio_net_hdr *h, unsigned int l4_off, unsigned int gso_size);
void vnet_to_wire(struct virtio_net_hdr *h, unsigned int l2_len);
bool vnet_is_gso(const struct virtio_net_hdr *h);
unsigned int vnet_gso_segs(const struct virtio_net_hdr *h, size_t l4_payload);
int vnet_rx_check(const struct virtio_net_hdr *h, size_t len, unsigned int l2_len);
bool vnet_rx_csum_ok(const struct virtio_net_hdr *h);

uint32_t vnet_frame_limit(const struct link *l, uint8_t family, bool tcp);
uint32_t vnet_tcp_gso_bytes(const struct link *l, uint8_t family, uint32_t mss);
unsigned int vnet_udp_gso_segs(const struct link *l, uint8_t family, size_t gso_size);

typedef void (*vnet_seg_fn)(void *ctx, struct pkt *seg);
int vnet_udp_split(const struct pkt *p, unsigned int l2_len, vnet_seg_fn fn, void *ctx);

#endif /* SANDNET_DATAPATH_LINK_VNET_H */
