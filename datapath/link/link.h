/* SPDX-License-Identifier: MIT */
/*
 * link.h - one link of the container and the channel sockets that serve it
 * (theory of operation in link.c)
 */
#ifndef SANDNET_DATAPATH_LINK_H
#define SANDNET_DATAPATH_LINK_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "datapath/loop.h"
#include "datapath/pkt.h"
#include "proto/proto.h"

#define LINK_RX_BATCH	64		/* frames per recvmmsg */
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

struct stack;
struct link;

/**
 * struct link_stats - what `datapath stats` shows per link
 */
struct link_stats {
	uint64_t rx_frames, rx_bytes, rx_syscalls, rx_gso_frames, rx_truncated, rx_kernel_drops,
		 rx_gso_segments;
	uint64_t tx_frames, tx_bytes, tx_syscalls, tx_gso_frames, tx_sw_segments;
	uint64_t tx_max_frame, tx_over_mtu;	/* largest frame sent; frames over MTU + 14 */
	uint64_t tx_eagain, tx_errors, tx_queue_full, tx_queue_max;
	uint64_t rx_buffers_grown;	/* channels whose buffers grew to LINK_RX_BYTES_BIG */
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

struct link_channel {
	struct link *link;
	struct loop_fd lfd;
	int fd;
	struct pkt *rx[LINK_RX_BATCH];
	bool rx_big;			/* buffers are LINK_RX_BYTES_BIG */
};

/**
 * struct link - the configuration netsetup sent, the channels, the tx queue
 * @st:		the stack the link belongs to
 * @vnet:	every frame carries a struct virtio_net_hdr (hw mode)
 * @tx_batch:	frames per sendmmsg (1 in off mode: the baseline)
 * @txq:	ring of frames to send, @txq_head first, @txq_len of them
 * @tx_blocked:	EAGAIN seen; waiting for EPOLLOUT on channel 0
 */
struct link {
	struct stack *st;
	uint32_t ifindex;
	char name[IFNAMSIZ];
	uint8_t mac[6];
	uint32_t mtu;
	uint32_t flags;
	enum proto_gso_mode gso_mode;
	char gso_reason[PROTO_TEXT_MAX];
	uint32_t gso_max_size, gso_max_segs, gso_ipv4_max_size;
	bool vnet;
	unsigned int tx_batch;
	unsigned int n_addr4, n_addr6;
	struct link_addr4 addr4[LINK_MAX_ADDR4];
	struct link_addr6 addr6[LINK_MAX_ADDR6];
	unsigned int n_channels;
	struct link_channel ch[PROTO_MAX_CHANNELS];
	struct pkt *txq[LINK_TXQ_MAX];
	unsigned int txq_head, txq_len;
	bool tx_blocked;
	unsigned int tx_borrowed;
	struct link_stats stats;
};

struct link *link_new(struct stack *st, struct proto_link *cfg, char *err, size_t err_len);
void link_free(struct link *l);
int link_start(struct link *l);
void link_output(struct link *l, struct pkt *p);
void link_tx_flush(struct link *l);
void link_rx_channel(struct link_channel *ch);
void link_input_frame(struct link *l, struct pkt *p);
void link_poll_kernel_stats(struct link *l);

/* Queued frames whose tail is borrowed memory (pkt.h); 0 means it may be reused. */
static inline unsigned int link_tx_borrowed(const struct link *l)
{
	return l->tx_borrowed;
}

#endif /* SANDNET_DATAPATH_LINK_H */
