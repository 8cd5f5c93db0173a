/* SPDX-License-Identifier: MIT */
/*
 * pkt.h - the packet buffer every layer of the datapath shares
 *
 * Theory of operation
 *
 * A struct pkt describes one frame as two parts that go to the wire back to back:
 *
 *   buf: [ headroom ........ | linear bytes (data .. data+len) | tailroom ]
 *   tail:                                    [ tail .. tail+tail_len ]
 *
 * 1. The linear part lives in the packet's own storage. Layers build a frame
 *    from the inside out: the transport writes its header after reserving
 *    PKT_HEADROOM bytes, then IP, Ethernet (and, in hw mode, the link's
 *    virtio_net_hdr, which travels as its own iovec) each pkt_push() their
 *    header into the headroom. Nothing is ever copied to make room. On receive
 *    the link reads into the linear part at the same offset, and each layer
 *    pkt_pull()s its header as it hands the rest up, so the upper layer sees
 *    its own header at pkt_data().
 *
 * 2. The optional tail is a slice of payload memory the packet does not
 *    copy. Either it lies in a refcounted struct pkt_payload (@pl holds one
 *    reference: a UDP GSO burst, the datagrams of a service put once into a
 *    block), or it is borrowed (@pl NULL: TCP's send buffer, which its owner
 *    keeps until the link reports no borrowed frame in flight,
 *    link_tx_borrowed()). A transport that sends one large payload builds
 *    one small pkt per segment whose linear part holds only that segment's
 *    headers and whose tail names its slice of the shared payload. The link
 *    sends [vnet][linear][tail] as one iovec array per frame, so a software
 *    split into MSS-sized segments copies headers only, and a hw GSO frame
 *    is the same three iovecs with a larger tail. A payload block is freed
 *    when the last pkt that names it is freed.
 *
 * 3. Every read of packet bytes goes through pkt_peek()/pkt_pull(), which
 *    check the length first and return NULL when the packet is too short; the
 *    caller then counts a drop with its reason.
 *
 * Small packets (ARP, ICMP, ACK-sized) come from a free list so the hot path
 * does not call malloc(); pkt_live() counts packets not yet freed so tests can
 * fail on a leak. Not thread-safe: one datapath thread owns every packet.
 */
#ifndef SANDNET_DATAPATH_PKT_H
#define SANDNET_DATAPATH_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <linux/virtio_net.h>

/* Room for vnet (12) + Ethernet (14) + IPv6 (40) + extensions + TCP (60). */
#define PKT_HEADROOM	192
/* Packets up to this many data bytes come from the free list. */
#define PKT_SMALL_BYTES	2048

/**
 * struct pkt_payload - a refcounted block shared by the segments that send it
 * @refs:	number of pkts (and owners) that hold it
 * @len:	bytes in @data
 * @data:	the payload
 */
struct pkt_payload {
	unsigned int refs;
	uint32_t len;
	uint8_t data[];
};

/**
 * struct pkt - one frame, in or out
 * @next:	link in a queue (tx queue, neighbour pending queue)
 * @buf:	storage; the linear bytes are buf[off .. off+len)
 * @cap:	bytes in @buf
 * @off:	offset of the first linear byte
 * @len:	linear bytes
 * @pl:		reference on the block that holds the tail, or NULL if borrowed
 * @tail:	first byte of the tail, sent after the linear bytes, or NULL
 * @tail_len:	bytes of the tail
 * @vnet:	rx: the header as the kernel gave it (hw links); tx: offload request
 * @ifindex:	link the packet came in on / goes out on
 * @l3_off:	rx: offset of the network header in @buf (for ICMP errors)
 * @rx_us:	rx: when the kernel received it, in loop time, if the link knows; else 0
 * @rx_after_us: rx, when the link has no @rx_us: it arrived after this (loop
 *		time), the last time its queue was found empty before it was read;
 *		0 if not known
 * @csum_ok:	rx: the kernel vouched for the L4 checksum (DATA_VALID or NEEDS_CSUM)
 * @pooled:	storage belongs to the small free list
 */
struct pkt {
	struct pkt *next;
	uint8_t *buf;
	uint32_t cap;
	uint32_t off;
	uint32_t len;
	struct pkt_payload *pl;
	const uint8_t *tail;
	uint32_t tail_len;
	struct virtio_net_hdr vnet;
	uint32_t ifindex;
	uint32_t l3_off;
	uint64_t rx_us;
	uint64_t rx_after_us;
	uint8_t tos;		/* the IP header's DS field to send (DSCP and ECN), 0 by default */
	bool csum_ok;
	bool pooled;
};

struct pkt *pkt_alloc(size_t data_bytes);
void pkt_free(struct pkt *p);
struct pkt *pkt_clone(const struct pkt *p);
void pkt_reset(struct pkt *p);
long pkt_live(void);
void pkt_pool_drain(void);

struct pkt_payload *pkt_payload_new(const void *data, size_t len);
struct pkt_payload *pkt_payload_get(struct pkt_payload *pl);
void pkt_payload_put(struct pkt_payload *pl);
void pkt_set_payload(struct pkt *p, struct pkt_payload *pl, uint32_t off, uint32_t len);
void pkt_set_tail(struct pkt *p, const void *data, uint32_t len);

static inline uint8_t *pkt_data(const struct pkt *p)
{
	return p->buf + p->off;
}

/* Total bytes on the wire: linear plus shared tail. */
static inline size_t pkt_total_len(const struct pkt *p)
{
	return (size_t)p->len + p->tail_len;
}

/**
 * pkt_peek() - bounds-checked view of bytes at an offset from pkt_data()
 * @p:		packet
 * @off:	offset from the first linear byte
 * @n:		bytes wanted
 *
 * Return: pointer to the bytes, or NULL if the linear part is too short.
 */
static inline const void *pkt_peek(const struct pkt *p, size_t off, size_t n)
{
	if (off > p->len || n > p->len - off)
		return NULL;
	return p->buf + p->off + off;
}

/**
 * pkt_pull() - consume @n bytes at the front (a header being parsed)
 * Return: pointer to the consumed bytes, or NULL if fewer than @n are there.
 */
static inline void *pkt_pull(struct pkt *p, size_t n)
{
	uint8_t *d;

	if (n > p->len)
		return NULL;
	d = p->buf + p->off;
	p->off += n;
	p->len -= n;
	return d;
}

/**
 * pkt_push() - make room for a header of @n bytes in front of the data
 * Return: pointer to the new first byte, or NULL if the headroom is short.
 */
static inline void *pkt_push(struct pkt *p, size_t n)
{
	if (n > p->off)
		return NULL;
	p->off -= n;
	p->len += n;
	return p->buf + p->off;
}

/**
 * pkt_put() - append @n bytes to the linear part
 * Return: pointer to the appended bytes, or NULL if the tailroom is short.
 */
static inline void *pkt_put(struct pkt *p, size_t n)
{
	uint8_t *d;

	if (n > p->cap - p->off - p->len)
		return NULL;
	d = p->buf + p->off + p->len;
	p->len += n;
	return d;
}

/**
 * pkt_trim() - cut the linear part to @len bytes (Ethernet padding, IP length)
 * Return: 0, or -EINVAL if the packet is shorter than @len.
 */
static inline int pkt_trim(struct pkt *p, size_t len)
{
	if (len > p->len)
		return -EINVAL;
	p->len = len;
	return 0;
}

#endif /* SANDNET_DATAPATH_PKT_H */
