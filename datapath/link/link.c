// SPDX-License-Identifier: MIT
/*
 * link.c - what both kinds of link share: the transmit queue, its flush, the
 * way received frames go up
 *
 * Theory of operation
 *
 * A link is one interface with two implementations. A packet link
 * (packet.c) is the container's Ethernet interface seen through the
 * AF_PACKET "channel" sockets netsetup opened: the outer link, where the
 * network is. A TUN link (tun.c) is the container face's TUN device: the
 * inner link, where the container's own kernel is. The stack and the
 * transports only ever call link_output(); what differs per kind is how a
 * batch reaches the kernel (sendmmsg() on a channel; on a TUN a batch of
 * writev()s in one io_uring_enter(), uring.c, or one writev() per frame),
 * how frames are read, what the kind builds on its channels (receive rings,
 * an io_uring), whether a UDP GSO frame is cut on receive, and the L2 header
 * (Ethernet, or none). Each kind says so in its struct link_ops, which it
 * hands to link_alloc(); this file calls through l->ops and names neither
 * kind: packet.c and tun.c use link.c, never the other way.
 *
 * Receive: the kind's reader fills buffers and hands each frame to
 * link_input(), which checks the virtio_net_hdr when there is one
 * (vnet.c; a header no kernel would write is counted as rx_bad_vnet and the
 * frame dropped), notes whether the kernel vouched for the L4 checksum, and
 * calls the link's rx_fn, which the layer above registered: Ethernet input
 * for a packet link (a kernel peer's UDP GSO frame cut into its datagrams
 * first), the face for a TUN. Drops go to the drop_fn it registered too, so
 * a link names no layer above it. Frames go up synchronously; upper layers
 * copy what they keep, so the buffers are reused for the next read.
 *
 * Transmit: link_output() fixes the vnet header's offsets for this link's
 * L2 header (vnet_to_wire()) and appends the frame to a ring of
 * LINK_TXQ_MAX frames. The ring is flushed at the end of the loop turn
 * (stack_turn_end()), so the replies to a whole receive batch leave
 * together, and as soon as a full batch is waiting. Each frame is an iovec
 * array [vnet][linear][payload slice] (pkt.h), so headers built in headroom
 * and shared payloads go out without a copy. The kind's xmit function sends
 * a prefix of the batch: the sent frames leave the ring head and the rest
 * stay in order (a TUN's batch of writes goes on past a frame the device
 * refused, and says which it refused). EAGAIN stops the flush and asks epoll for EPOLLOUT on
 * channel 0; nothing is dropped and nothing overtakes. A frame the kernel
 * refuses (EMSGSIZE, EINVAL, ENOBUFS, which means that frame was dropped:
 * docs/datapath.md) is counted in tx_errors and removed, then the flush
 * goes on with the next. Only a full ring drops new frames (tx_queue_full).
 * Transmit always uses channel 0.
 *
 * tx_gso_frames counts the frames the kernel segments (their vnet header
 * says how), tx_max_frame and tx_over_mtu show the sizes that left, and
 * tx_sw_segments counts the pieces TCP or UDP cut in sw mode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "datapath/link/link.h"
#include "datapath/link/vnet.h"

static const char *const link_kind_names[] = {
	[LINK_KIND_PACKET] = "packet",
	[LINK_KIND_TUN] = "tun",
};
_Static_assert(sizeof(link_kind_names) / sizeof(link_kind_names[0]) == LINK_KIND_MAX, "link kind names");

static void link_txq_pop(struct link *l, bool sent);

/**
 * link_kind_name() - "packet" or "tun"
 */
const char *link_kind_name(enum link_kind k)
{
	return k < LINK_KIND_MAX ? link_kind_names[k] : "?";
}

/**
 * link_alloc() - an empty link of a kind (the kinds' constructors fill it)
 * @loop:	the event loop its channels will be watched by
 * @ops:	what the kind does its own way (static in packet.c or tun.c)
 *
 * Return: the link, or NULL.
 */
struct link *link_alloc(struct loop *loop, const struct link_ops *ops)
{
	struct link *l = calloc(1, sizeof(*l));
	unsigned int i;

	if (!l)
		return NULL;
	l->loop = loop;
	l->ops = ops;
	l->kind = ops->kind;
	for (i = 0; i < PROTO_MAX_CHANNELS; i++)
		l->ch[i].fd = -1;
	return l;
}

/**
 * link_channel_add() - take @fd as the next channel, with its receive buffers
 * @l:		link
 * @fd:		the socket or device; owned by the link from now on, even on failure
 * @rx_bytes:	size of each receive buffer
 * @n_bufs:	receive buffers, at most LINK_RX_BATCH (a batch of recvmmsg(),
 *		or 1 for a device read one frame at a time)
 *
 * Return: 0, -ENOSPC (no channel left) or -ENOMEM.
 */
int link_channel_add(struct link *l, int fd, size_t rx_bytes, unsigned int n_bufs)
{
	struct link_channel *ch;
	unsigned int j;

	if (l->n_channels >= PROTO_MAX_CHANNELS) {
		close(fd);
		return -ENOSPC;
	}
	ch = &l->ch[l->n_channels++];
	ch->link = l;
	ch->fd = fd;
	ch->rx_bytes = rx_bytes;
	for (j = 0; j < n_bufs && j < LINK_RX_BATCH; j++) {
		ch->rx[j] = pkt_alloc(rx_bytes);
		if (!ch->rx[j])
			return -ENOMEM;
		ch->n_rx++;
	}
	return 0;
}

/**
 * link_channel_more() - a batch filled every buffer: twice as many for the next
 * @ch:	channel, between batches (out of memory: as many as it has)
 */
void link_channel_more(struct link_channel *ch)
{
	unsigned int want = ch->n_rx * 2 < LINK_RX_BATCH ? ch->n_rx * 2 : LINK_RX_BATCH;

	while (ch->n_rx < want) {
		struct pkt *p = pkt_alloc(ch->rx_bytes);

		if (!p)
			return;
		ch->rx[ch->n_rx++] = p;
	}
}

/**
 * link_free() - stop watching the channels, close them, free every buffer
 * @l:	link or NULL
 */
void link_free(struct link *l)
{
	unsigned int i, j;

	if (!l)
		return;
	if (l->ops->free)
		l->ops->free(l);
	for (i = 0; i < l->n_channels; i++) {
		struct link_channel *ch = &l->ch[i];

		if (ch->lfd.events && l->loop)
			loop_fd_del(l->loop, &ch->lfd);
		if (ch->fd >= 0)
			close(ch->fd);
		for (j = 0; j < LINK_RX_BATCH; j++)
			pkt_free(ch->rx[j]);
	}
	while (l->txq_len)
		link_txq_pop(l, false);
	free(l);
}

/**
 * link_rx() - read what a channel holds, the way its kind reads, each frame up
 * @ch:	a readable channel (the loop's event; tests and fuzzers call it too)
 */
void link_rx(struct link_channel *ch)
{
	ch->link->ops->rx(ch);
}

/**
 * link_poll_kernel_stats() - add what the kernel counted on @l's channels
 * @l:	link
 *
 * Called when the stats are read; a kind without such counters has none.
 */
void link_poll_kernel_stats(struct link *l)
{
	if (l->ops->kernel_stats)
		l->ops->kernel_stats(l);
}

static void link_channel_event(struct loop_fd *h, uint32_t events)
{
	struct link_channel *ch = h->ctx;
	struct link *l = ch->link;

	if (events & EPOLLOUT) {
		l->tx_blocked = false;
		loop_fd_mod(l->loop, &ch->lfd, EPOLLIN);
		link_tx_flush(l);
	}
	if (events & (EPOLLIN | EPOLLERR))
		l->ops->rx(ch);
}

/**
 * link_start() - register the channels with the loop
 * @l:	link whose stack has a loop
 *
 * Return: 0 or negative errno from epoll.
 */
int link_start(struct link *l)
{
	unsigned int i;
	int ret;

	for (i = 0; i < l->n_channels; i++) {
		ret = loop_fd_add(l->loop, &l->ch[i].lfd, l->ch[i].fd, EPOLLIN, link_channel_event,
				  &l->ch[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* One datagram cut from a UDP GSO frame, up to the registered handler. */
static void link_input_piece(void *ctx, struct pkt *seg)
{
	struct link *l = ctx;

	l->stats.rx_gso_segments++;
	if (l->rx_fn)
		l->rx_fn(l->rx_ctx, l, seg);
}

/**
 * link_input() - one received frame up to the link's owner (readers and tests)
 * @l:	link it came in on
 * @p:	frame at pkt_data(), @p->vnet filled on a vnet link; borrowed
 */
void link_input(struct link *l, struct pkt *p)
{
	int ret;

	p->ifindex = l->ifindex;
	l->stats.rx_frames++;
	l->stats.rx_bytes += p->len;
	loop_count_rx(l->loop, p->len, p->rx_us);
	if (l->vnet) {
		if (vnet_rx_check(&p->vnet, p->len, l->l2_len) < 0) {
			l->stats.rx_bad_vnet++;
			link_drop(l, DROP_BAD_VNET);
			return;
		}
		p->csum_ok = vnet_rx_csum_ok(&p->vnet);
		if (vnet_is_gso(&p->vnet))
			l->stats.rx_gso_frames++;
		/* A kernel peer's UDP_SEGMENT train: the stack takes datagrams.
		 * (A TUN hands the container's whole to the face, which keeps
		 * the train for the network.) */
		if (l->ops->rx_udp_gso_split &&
		    (p->vnet.gso_type & ~VIRTIO_NET_HDR_GSO_ECN) == VNET_GSO_UDP_L4) {
			ret = vnet_udp_split(p, l->l2_len, link_input_piece, l);
			if (ret < 0)
				link_drop(l, ret == -ENOMEM ? DROP_NO_MEMORY : DROP_BAD_HEADER);
			return;
		}
	}
	if (l->rx_fn)
		l->rx_fn(l->rx_ctx, l, p);
}

/**
 * link_output() - queue a frame for transmission
 * @l:	link
 * @p:	frame, L2 header (if any) at pkt_data(), vnet offsets from the
 *	network header (vnet.c); given to the link
 */
void link_output(struct link *l, struct pkt *p)
{
	if (l->txq_len >= LINK_TXQ_MAX) {
		l->stats.tx_queue_full++;
		link_drop(l, DROP_TX_QUEUE_FULL);
		pkt_free(p);
		return;
	}
	vnet_to_wire(&p->vnet, l->l2_len);
	if (p->tail && !p->pl)
		l->tx_borrowed++;
	l->txq[(l->txq_head + l->txq_len) % LINK_TXQ_MAX] = p;
	l->txq_len++;
	if (l->txq_len > l->stats.tx_queue_max)
		l->stats.tx_queue_max = l->txq_len;
	if (l->txq_len >= l->tx_batch && !l->tx_blocked)
		link_tx_flush(l);
}

static void link_txq_pop(struct link *l, bool sent)
{
	struct pkt *p = l->txq[l->txq_head];

	if (sent) {
		size_t len = pkt_total_len(p);

		l->stats.tx_frames++;
		l->stats.tx_bytes += len;
		if (len > l->stats.tx_max_frame)
			l->stats.tx_max_frame = len;
		if (len > (size_t)l->mtu + l->l2_len)
			l->stats.tx_over_mtu++;
		if (l->vnet && vnet_is_gso(&p->vnet))
			l->stats.tx_gso_frames++;
	}
	if (p->tail && !p->pl)
		l->tx_borrowed--;
	pkt_free(p);
	l->txq[l->txq_head] = NULL;
	l->txq_head = (l->txq_head + 1) % LINK_TXQ_MAX;
	l->txq_len--;
}

static void link_tx_send_queued(struct link *l);

/**
 * link_tx_flush() - send what is queued, in order, until done or EAGAIN
 * @l:	link
 *
 * Every turn flushes every link: one with nothing queued costs a test, not
 * the batch's iovec arrays.
 */
void link_tx_flush(struct link *l)
{
	if (l->txq_len && !l->tx_blocked)
		link_tx_send_queued(l);
}

static void link_tx_send_queued(struct link *l)
{
	struct iovec iov[LINK_TX_BATCH][3];
	unsigned int iovcnt[LINK_TX_BATCH];
	bool refused[LINK_TX_BATCH];

	while (l->txq_len && !l->tx_blocked) {
		unsigned int n = l->txq_len < l->tx_batch ? l->txq_len : l->tx_batch;
		unsigned int i;
		int ret;

		for (i = 0; i < n; i++) {
			struct pkt *p = l->txq[(l->txq_head + i) % LINK_TXQ_MAX];
			unsigned int k = 0;

			if (l->vnet) {
				iov[i][k].iov_base = &p->vnet;
				iov[i][k++].iov_len = sizeof(p->vnet);
			}
			iov[i][k].iov_base = pkt_data(p);
			iov[i][k++].iov_len = p->len;
			if (p->tail_len) {
				iov[i][k].iov_base = (void *)p->tail;
				iov[i][k++].iov_len = p->tail_len;
			}
			iovcnt[i] = k;
			refused[i] = false;
		}
		ret = l->ops->xmit(l, iov, iovcnt, n, refused);
		if (ret > 0) {
			/* a batched TUN write goes on past a frame the device refused */
			for (i = 0; i < (unsigned int)ret; i++) {
				if (refused[i]) {
					l->stats.tx_errors++;
					link_drop(l, DROP_TX_ERROR);
				}
				link_txq_pop(l, !refused[i]);
			}
			continue;
		}
		if (ret == -EINTR)
			continue;
		if (ret == -EAGAIN || ret == -EWOULDBLOCK) {
			l->stats.tx_eagain++;
			l->tx_blocked = true;
			loop_fd_mod(l->loop, &l->ch[0].lfd, EPOLLIN | EPOLLOUT);
			return;
		}
		/* The head frame was refused: drop it alone, keep the order. */
		l->stats.tx_errors++;
		link_drop(l, DROP_TX_ERROR);
		link_txq_pop(l, false);
	}
}
