/* SPDX-License-Identifier: MIT */
/*
 * link.h - a link of the datapath: one interface of two kinds (theory of
 * operation in link.c; the kinds in packet.c and tun.c, each behind its
 * struct link_ops)
 */
#ifndef SANDNET_DATAPATH_LINK_H
#define SANDNET_DATAPATH_LINK_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "datapath/counters.h"
#include "datapath/loop.h"
#include "datapath/pkt.h"
#include "proto/proto.h"

#define LINK_RX_BATCH	64		/* frames per recvmmsg at most (and TUN reads per turn) */
#define LINK_RX_BATCH_MIN 8		/* receive buffers a channel starts with */
#define LINK_RX_ROUNDS	4		/* batches read per readable event at most */
#define LINK_TX_BATCH	64		/* frames per sendmmsg */
#define LINK_TXQ_MAX	1024		/* frames waiting to be sent */
/* Largest frame a kernel peer hands us in one read: 64 KiB GSO plus the
 * Ethernet header. A larger one (a peer with BIG TCP) is cut and counted,
 * and the channel's buffers then grow to LINK_RX_BYTES_BIG, the kernel's
 * GSO_MAX_SIZE (524280) and the headers, for the frames after it. */
#define LINK_RX_BYTES	(65536 + 64)
#define LINK_RX_BYTES_BIG	(524288 + 64)
#define LINK_MAX_ADDR4	PROTO_MAX_ADDRS
#define LINK_MAX_ADDR6	PROTO_MAX_ADDRS

struct link;
struct link_uring;

/**
 * enum link_kind - how a link reaches its wire
 * @LINK_KIND_PACKET:	AF_PACKET channels on the container's Ethernet link,
 *			the outer link (packet.c)
 * @LINK_KIND_TUN:	the container face's TUN device: IP packets to and from
 *			the container's own kernel, the inner link (tun.c)
 */
enum link_kind {
	LINK_KIND_PACKET,
	LINK_KIND_TUN,
	LINK_KIND_MAX
};

/**
 * struct link_stats - what `datapath stats` shows per link
 */
struct link_stats {
	uint64_t rx_frames, rx_bytes, rx_syscalls, rx_gso_frames, rx_truncated, rx_kernel_drops,
		 rx_gso_segments, rx_bad_vnet;
	uint64_t tx_frames, tx_bytes, tx_syscalls, tx_gso_frames, tx_sw_segments;
	uint64_t tx_max_frame, tx_over_mtu;	/* largest frame sent; frames over MTU + L2 */
	uint64_t tx_eagain, tx_errors, tx_queue_full, tx_queue_max;
	uint64_t rx_buffers_grown;	/* channels whose buffers grew to LINK_RX_BYTES_BIG */
	uint64_t rx_ring_frames;	/* frames read from a receive ring (packet.c), no system call */
	uint64_t rx_ring_copies;	/* frames too large for a slot, read from the queue instead */
};

enum link_addr6_state {
	ADDR6_TENTATIVE,	/* DAD running: answers only DAD */
	ADDR6_PREFERRED,	/* in use */
	ADDR6_DUPLICATE,	/* DAD found another owner: never used */
	ADDR6_STATE_MAX
};

struct link_addr4 {
	struct in_addr addr;
	uint8_t prefixlen;
};

struct link_addr6 {
	struct in6_addr addr;
	uint8_t prefixlen;
	enum link_addr6_state state;
	unsigned int dad_probes;
	uint64_t dad_ms;		/* when the DAD probe was sent */
};

/**
 * struct link_rx_ring - a packet channel's receive ring (PACKET_RX_RING,
 * TPACKET_V2), mapped into our memory (packet.c)
 * @map:	the mapping, or NULL: the channel is read with recvmmsg()
 * @map_len:	its bytes
 * @block_size:	bytes of one block (a multiple of the page size)
 * @frame_size:	bytes of one slot
 * @per_block:	slots in a block
 * @frames:	slots in the ring
 * @head:	the next slot to look at
 */
struct link_rx_ring {
	uint8_t *map;
	size_t map_len;
	unsigned int block_size, frame_size, per_block, frames, head;
};

/**
 * struct link_channel - one socket (or device) of a link
 * @rx:		receive buffers, @n_rx of them (packet.c grows them to a full batch)
 * @rx_bytes:	the size of each
 * @rx_big:	they are LINK_RX_BYTES_BIG (a BIG TCP peer was seen)
 * @ring:	the packet channel's receive ring, if it has one
 * @drained_us:	a TUN queue: when a read last found it empty (loop time, taken
 *		before that read): what is read after arrived after it
 */
struct link_channel {
	struct link *link;
	struct loop_fd lfd;
	int fd;
	struct pkt *rx[LINK_RX_BATCH];
	unsigned int n_rx;
	unsigned int rx_want;	/* a TUN's next batch of reads (tun.c) */
	size_t rx_bytes;
	bool rx_big;
	uint64_t rx_frames;	/* what this channel (fanout member, TUN queue) read */
	struct link_rx_ring ring;
	uint64_t drained_us;
};

/*
 * A received frame for the layer above, which registered it: the stack's
 * Ethernet input for a packet link (stack_add_link()), the container face
 * for a TUN. @p is borrowed.
 */
typedef void (*link_rx_fn)(void *ctx, struct link *l, struct pkt *p);

/* A frame the link dropped, by reason, for whoever counts drops (the stack). */
typedef void (*link_drop_fn)(void *ctx, enum dp_drop why);

/**
 * struct link_ops - what a kind of link does its own way; each kind fills
 * one in its own file, and link.c calls through it (naming no kind)
 * @kind:	which kind this is (for printing: link_kind_name())
 * @rx:		read what the readable channel @ch holds, each frame up through
 *		link_input()
 * @xmit:	send @n frames (per frame @iovcnt iovecs of @iov) on channel 0.
 *		Return: frames sent or refused (a prefix of @n), or negative
 *		errno for the first one; a kind that goes on past a frame the
 *		kernel refused sets @refused for it (left alone otherwise)
 * @free:	release what the kind made on top of its channels (receive
 *		rings, an io_uring), before the channels are closed; or NULL
 * @kernel_stats: add what the kernel counted on the channels (drops), when
 *		the stats are read; or NULL
 * @rx_udp_gso_split: a received UDP GSO frame is cut into its datagrams
 *		before it goes up (the stack takes datagrams; the face keeps
 *		the container's train whole)
 */
struct link_ops {
	enum link_kind kind;
	void (*rx)(struct link_channel *ch);
	int (*xmit)(struct link *l, struct iovec (*iov)[3], const unsigned int *iovcnt, unsigned int n,
		    bool *refused);
	void (*free)(struct link *l);
	void (*kernel_stats)(struct link *l);
	bool rx_udp_gso_split;
};

/**
 * struct link - a link: configuration, channels, the tx queue
 * @loop:	the event loop its channels are watched by
 * @ops:	what its kind does its own way (packet.c, tun.c)
 * @kind:	packet (outer) or TUN (inner), for printing (@ops->kind)
 * @l2_len:	bytes of link header in front of the IP header (14 or 0)
 * @vnet:	every frame carries a struct virtio_net_hdr (packet channels in
 *		every mode, the TUN); GSO out only in hw mode (@gso_mode)
 * @tx_csum_partial: frames that are not GSO frames may leave with a partial
 *		checksum too (NEEDS_CSUM): the TUN, whose kernel trusts them
 * @tx_batch:	frames per sendmmsg (1 in off mode: the baseline)
 * @rx_fn, @rx_ctx: where received frames go (the layer above sets them)
 * @drop_fn, @drop_ctx: where drops are counted (the layer above sets them)
 * @txq:	ring of frames to send, @txq_head first, @txq_len of them
 * @tx_blocked:	EAGAIN seen; waiting for EPOLLOUT on channel 0
 * @outer:	a TUN: the packet link whose addresses it carries
 * @uring:	a TUN: its reads and writes in batches (uring.c), or NULL: one
 *		system call per packet, for the reason in @io_reason
 */
struct link {
	struct loop *loop;
	const struct link_ops *ops;
	enum link_kind kind;
	uint32_t ifindex;
	char name[IFNAMSIZ];
	uint8_t mac[6];
	uint32_t mtu;
	uint32_t flags;
	unsigned int l2_len;
	enum proto_gso_mode gso_mode;
	char gso_reason[PROTO_TEXT_MAX];
	uint32_t gso_max_size, gso_max_segs, gso_ipv4_max_size;
	bool vnet;
	bool tx_csum_partial;
	unsigned int tx_batch;
	link_rx_fn rx_fn;
	void *rx_ctx;
	link_drop_fn drop_fn;
	void *drop_ctx;
	unsigned int n_addr4, n_addr6;
	struct link_addr4 addr4[LINK_MAX_ADDR4];
	struct link_addr6 addr6[LINK_MAX_ADDR6];
	unsigned int n_channels;
	struct link_channel ch[PROTO_MAX_CHANNELS];
	struct pkt *txq[LINK_TXQ_MAX];
	unsigned int txq_head, txq_len;
	bool tx_blocked;
	unsigned int tx_borrowed;
	struct link *outer;
	struct link_uring *uring;
	char io_reason[PROTO_TEXT_MAX];
	struct link_stats stats;
};

const char *link_kind_name(enum link_kind k);

/* link.c: what both kinds share */
struct link *link_alloc(struct loop *loop, const struct link_ops *ops);
void link_free(struct link *l);
int link_start(struct link *l);
void link_rx(struct link_channel *ch);
void link_output(struct link *l, struct pkt *p);
void link_tx_flush(struct link *l);
void link_input(struct link *l, struct pkt *p);
int link_channel_add(struct link *l, int fd, size_t rx_bytes, unsigned int n_bufs);
void link_channel_more(struct link_channel *ch);
void link_poll_kernel_stats(struct link *l);

/* packet.c: AF_PACKET channels on an Ethernet link */
struct link *link_packet_new(struct loop *loop, struct proto_link *cfg, char *err, size_t err_len);
void link_packet_no_ring(void);

/* tun.c: the container face's TUN device */
struct link *link_tun_new(struct loop *loop, struct proto_face *cfg, struct link *outer, char *err,
			  size_t err_len);

/* Count a drop where the layer above asked (nowhere before it did). */
static inline void link_drop(struct link *l, enum dp_drop why)
{
	if (l->drop_fn)
		l->drop_fn(l->drop_ctx, why);
}

/* Queued frames whose tail is borrowed memory (pkt.h); 0 means it may be reused. */
static inline unsigned int link_tx_borrowed(const struct link *l)
{
	return l->tx_borrowed;
}

#endif /* SANDNET_DATAPATH_LINK_H */
