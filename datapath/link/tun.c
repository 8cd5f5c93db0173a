// SPDX-License-Identifier: MIT
/*
 * tun.c - the inner link: the container face's TUN device
 *
 * Theory of operation
 *
 * netsetup creates a TUN device in the container's netns (IFF_TUN |
 * IFF_NO_PI | IFF_VNET_HDR, with TUNSETOFFLOAD CSUM, TSO4, TSO6, USO4, USO6),
 * gives it the container's addresses and routes, and hands its fd over with
 * the link whose addresses it carries (docs/protocol.md, FACE). What the
 * container's programs send comes out of the fd as IP packets behind a
 * 10-byte virtio_net_hdr; what we write into it goes up the container
 * kernel's stack as if it had arrived on that device.
 *
 * System calls: a TUN is a character device, one packet per read() or
 * write(), and a system call costs more than the packet's own work here.
 * So the link gets an io_uring (uring.c) restricted to reading and writing
 * its queues, and reads and writes in batches, one io_uring_enter() each.
 * Without one (`datapath --no-io-uring`, or a kernel that refuses: the
 * reason is the link's "io" in `datapath stats`), one readv()/writev() per
 * packet.
 *
 * Receive: on a readable event, batches of readv()s ([vnet header]
 * [buffer]) into the channel's buffers; at most LINK_RX_ROUNDS batches an
 * event. A batch asks for what the last one suggests: twice as many after
 * one that filled up (the channel's buffers grow with it, from
 * LINK_RX_BATCH_MIN to LINK_RX_BATCH), one more than it got after one that
 * did not. A read that finds the queue empty is cheap but not free: a
 * request/response exchange has one packet a turn, and a batch of 8 for it
 * measured slower (TCP_RR) than two plain reads. The packets of a batch then go
 * up in order through link_input() (which checks the vnet header) to the
 * face. Without the ring: up to LINK_RX_BATCH readv()s into one buffer,
 * each packet up before the next is read. With the offloads on, the container's kernel hands up
 * TCP and UDP segments of up to 64 KiB (gso_type TCPV4/TCPV6/UDP_L4,
 * NEEDS_CSUM); they go up whole. A packet that fills the whole buffer may
 * have been cut: it is counted as rx_truncated and dropped (only a container
 * that raised its TUN's gso_max_size above 64 KiB sends one).
 *
 * Transmit: link.c's queue; tun_xmit() writes a batch of frames
 * ([vnet][headers][payload slice]) in one io_uring_enter(), or each with
 * one writev(). A TUN write does not block: the
 * packet is queued for the container's stack at once. So a flush leaves
 * nothing borrowed behind, and GSO frames up to 64 KiB (vnet header TCPV4/6
 * or UDP_L4, NEEDS_CSUM) go up whole: the container's TCP and UDP take
 * them as one large segment, and no checksum is computed on this side for
 * frames that carry NEEDS_CSUM (the container's kernel trusts a partial
 * checksum of a local packet, as over a veth).
 *
 * What link.c asks of this kind goes through link_tun_ops (the end of this
 * file): read a queue, write a batch, close the io_uring. A UDP GSO train
 * from the container goes up whole (the face keeps it for the network).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "datapath/link/link.h"
#include "datapath/link/uring.h"
#include "datapath/link/vnet.h"

/* The TUN's own default gso_max_size: frames up to 64 KiB. */
#define TUN_GSO_MAX_SIZE	65536u

static const struct link_ops link_tun_ops;

/**
 * link_tun_new() - the inner link from a FACE netsetup sent
 * @loop:	the event loop
 * @cfg:	the face; its fds move to the link, a channel per queue (@cfg
 *		keeps none)
 * @outer:	the packet link whose addresses the TUN carries
 * @err:	on failure, why, in words
 * @err_len:	size of @err
 *
 * A multi-queue TUN (shards) brings one fd per queue: the container's
 * kernel puts a flow on the queue the steering program picks, and any
 * queue takes what the datapath writes. Every queue is read; writes go
 * to the first.
 *
 * Return: the link, not started, or NULL with @err filled.
 */
struct link *link_tun_new(struct loop *loop, struct proto_face *cfg, struct link *outer, char *err,
			  size_t err_len)
{
	unsigned int i, n = cfg->n_fds;
	int fds[PROTO_MAX_CHANNELS];
	char why[PROTO_TEXT_MAX - 64];
	struct link *l;

	cfg->n_fds = 0;
	l = link_alloc(loop, &link_tun_ops);
	if (!l) {
		proto_fds_close(cfg->fds, n);
		snprintf(err, err_len, "face %s: out of memory", cfg->ifname);
		return NULL;
	}
	l->ifindex = cfg->ifindex;
	snprintf(l->name, sizeof(l->name), "%s", cfg->ifname);
	l->mtu = cfg->mtu;
	l->l2_len = 0;
	l->vnet = true;
	l->tx_csum_partial = true;
	l->gso_mode = PROTO_GSO_HW;
	snprintf(l->gso_reason, sizeof(l->gso_reason),
		 "TUN with IFF_VNET_HDR: GSO frames both ways (offloads 0x%x)", cfg->offloads);
	l->gso_max_size = TUN_GSO_MAX_SIZE;
	l->tx_batch = LINK_TX_BATCH;
	l->outer = outer;
	for (i = 0; i < n; i++) {
		/* link_channel_add() closes the fd it cannot take */
		if (link_channel_add(l, cfg->fds[i], LINK_RX_BYTES, LINK_RX_BATCH_MIN) < 0) {
			proto_fds_close(cfg->fds + i + 1, n - i - 1);
			snprintf(err, err_len, "face %s: out of memory for the receive buffers", l->name);
			link_free(l);
			return NULL;
		}
		fds[i] = l->ch[i].fd;
	}
	/* channel i is the ring's file i */
	l->uring = link_uring_new(fds, l->n_channels, why, sizeof(why));
	if (l->uring)
		snprintf(l->io_reason, sizeof(l->io_reason), "io_uring: batches of readv/writev");
	else
		snprintf(l->io_reason, sizeof(l->io_reason), "one system call per packet: %s", why);
	return l;
}

/*
 * One readv() result (@got: bytes, or negative errno from the ring) into @p.
 * Return: 0 if it goes up; -EMSGSIZE for a frame cut short (counted as a
 * drop), or @got itself when nothing was read.
 */
static int tun_rx_result(struct link *l, struct pkt *p, ssize_t got, size_t room)
{
	if (got < 0)
		return (int)got;
	if ((size_t)got < sizeof(p->vnet)) {
		link_drop(l, DROP_TRUNCATED);
		return -EMSGSIZE;
	}
	p->len = (uint32_t)(got - sizeof(p->vnet));
	if (p->len == room) {
		l->stats.rx_truncated++;
		link_drop(l, DROP_RX_TRUNCATED);
		return -EMSGSIZE;
	}
	return 0;
}

static void tun_rx_iov(struct pkt *p, struct iovec *iov)
{
	pkt_reset(p);
	iov[0].iov_base = &p->vnet;
	iov[0].iov_len = sizeof(p->vnet);
	iov[1].iov_base = pkt_data(p);
	iov[1].iov_len = p->cap - p->off;
}

/* Batches of reads through the ring (see the top comment). */
static void tun_rx_batched(struct link_channel *ch)
{
	struct link *l = ch->link;
	unsigned int file = (unsigned int)(ch - l->ch), round, i;
	struct iovec iov[LINK_RX_BATCH][2];
	ssize_t res[LINK_RX_BATCH];

	for (round = 0; round < LINK_RX_ROUNDS; round++) {
		unsigned int batch = ch->rx_want, got = 0;
		uint64_t read_us = loop_now_us(l->loop);

		if (batch < 2)
			batch = 2;
		if (batch > ch->n_rx)
			batch = ch->n_rx;
		for (i = 0; i < batch; i++)
			tun_rx_iov(ch->rx[i], iov[i]);
		l->stats.rx_syscalls++;
		if (link_uring_readv(l->uring, file, iov, batch, res) < 0)
			return;	/* the next event retries */
		for (i = 0; i < batch; i++) {
			if (res[i] >= 0)
				got++;
			if (tun_rx_result(l, ch->rx[i], res[i], iov[i][1].iov_len) < 0)
				continue;
			ch->rx_frames++;
			ch->rx[i]->rx_after_us = ch->drained_us;
			link_input(l, ch->rx[i]);
		}
		if (got < batch) {
			ch->rx_want = got + 1;	/* drained */
			ch->drained_us = read_us;
			return;
		}
		if (batch == ch->n_rx)
			link_channel_more(ch);
		ch->rx_want = 2 * batch;
	}
}

/* link_tun_ops.rx: read what the container sent on the readable queue @ch. */
static void tun_rx(struct link_channel *ch)
{
	struct link *l = ch->link;
	struct pkt *p = ch->rx[0];
	unsigned int i;

	if (l->uring) {
		tun_rx_batched(ch);
		return;
	}
	for (i = 0; i < LINK_RX_BATCH; i++) {
		struct iovec iov[2];
		uint64_t read_us = loop_now_us(l->loop);
		ssize_t got;

		tun_rx_iov(p, iov);
		got = readv(ch->fd, iov, 2);
		l->stats.rx_syscalls++;
		if (got < 0) {
			if (errno == EAGAIN)
				ch->drained_us = read_us;
			break;	/* anything else: the next event retries */
		}
		if (tun_rx_result(l, p, got, iov[1].iov_len) < 0)
			continue;
		ch->rx_frames++;
		p->rx_after_us = ch->drained_us;
		link_input(l, p);
	}
}

/*
 * link_tun_ops.xmit: write @n frames to the first queue. @refused, per
 * frame, is set when the device refused it (a batch through the ring goes
 * on past it); left alone otherwise.
 *
 * Return: frames written or refused (a prefix of @n), or negative errno for
 * the first one.
 */
static int tun_xmit(struct link *l, struct iovec (*iov)[3], const unsigned int *iovcnt, unsigned int n,
		    bool *refused)
{
	ssize_t res[LINK_TX_BATCH];
	unsigned int i;
	int ret;

	if (l->uring && n <= LINK_TX_BATCH) {
		l->stats.tx_syscalls++;
		ret = link_uring_writev(l->uring, 0, iov, iovcnt, n, res);
		if (ret < 0)
			return ret;
		for (i = 0; i < n; i++)
			refused[i] = res[i] < 0;
		return (int)n;
	}
	for (i = 0; i < n; i++) {
		ssize_t got = writev(l->ch[0].fd, iov[i], (int)iovcnt[i]);

		l->stats.tx_syscalls++;
		if (got < 0)
			return i ? (int)i : -errno;
	}
	return (int)n;
}

/* link_tun_ops.free: close the io_uring, before link.c closes its files. */
static void tun_free(struct link *l)
{
	link_uring_free(l->uring);
	l->uring = NULL;
}

/* The inner link: no kernel counters of its own, and the container's UDP
 * GSO trains go up whole. */
static const struct link_ops link_tun_ops = {
	.kind = LINK_KIND_TUN,
	.rx = tun_rx,
	.xmit = tun_xmit,
	.free = tun_free,
};
