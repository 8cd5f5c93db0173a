// SPDX-License-Identifier: MIT
/*
 * link.c - batched packet I/O on the channel sockets of one link
 *
 * Theory of operation
 *
 * netsetup hands us, per link, 1..16 AF_PACKET sockets ("channels") bound to
 * the container's interface; with several, the kernel spreads flows over them
 * (PACKET_FANOUT). The link owns them from then on.
 *
 * Receive: each channel has LINK_RX_BATCH packet buffers of LINK_RX_BYTES,
 * allocated once. When epoll says a channel is readable, one recvmmsg() fills
 * up to a batch; in hw mode each frame starts with a struct virtio_net_hdr,
 * which is read into pkt->vnet through its own iovec so the frame itself
 * lands at PKT_HEADROOM (room to turn a request into a reply in place if a
 * layer wants to). Without a vnet header (sw and off modes) the kernel's
 * word on the checksum comes from PACKET_AUXDATA instead: a frame from the
 * local kernel often carries only a partial checksum (TP_STATUS_CSUMNOTREADY,
 * veth's checksum offload), which must not be verified. A frame longer than
 * the buffer comes back with MSG_TRUNC: it is counted as rx_truncated and
 * dropped (the peer retransmits it), and after that batch the channel's
 * buffers grow once to LINK_RX_BYTES_BIG: a kernel peer with BIG TCP sends
 * TCP frames up to 512 KiB. They start at 64 KiB so that a link which never
 * sees such a peer does not hold 32 MiB of buffers. A UDP GSO frame from a kernel
 * peer is cut into its datagrams here (TCP GSO frames go up whole: TCP takes
 * large segments). Each frame goes up the stack
 * synchronously; upper layers copy what they keep, so the buffers are reset
 * and reused for the next batch. At most LINK_RX_ROUNDS batches are read per
 * turn so that one busy channel cannot starve timers and other fds.
 *
 * Transmit: link_output() appends to a ring of LINK_TXQ_MAX frames. The ring
 * is flushed by the loop's turn-end hook (link_tx_flush()), so the replies to
 * a whole receive batch leave in one sendmmsg(), and also as soon as a full
 * batch is waiting. Each frame is an iovec array [vnet][linear][payload
 * slice] (pkt.h), so headers built in headroom and shared payloads go out
 * without a copy. sendmmsg() sends a prefix of the batch: the sent frames
 * leave the ring head and the rest stay in order. EAGAIN stops the flush and
 * asks epoll for EPOLLOUT on channel 0; nothing is dropped and nothing
 * overtakes. A frame the kernel refuses (EMSGSIZE, EINVAL, ENOBUFS: DESIGN.md
 * says ENOBUFS means that frame was dropped) is counted in tx_errors and
 * removed, then the flush goes on with the next. Only a full ring drops new
 * frames (tx_queue_full). Transmit always uses channel 0.
 *
 * In off mode (the seed's baseline) the batch is one frame per syscall.
 * In hw mode a frame may be a TCP GSO frame larger than the MTU, which the
 * kernel segments (its vnet header says how, tcp_glue.c); tx_gso_frames
 * counts them, tx_max_frame and tx_over_mtu show the sizes that left, and
 * tx_sw_segments counts the MSS pieces TCP cut in sw mode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/link/link.h"
#include "datapath/net/net.h"

#define LINK_RX_ROUNDS	4

static void link_channel_event(struct loop_fd *h, uint32_t events);
static void link_txq_pop(struct link *l, bool sent);

/**
 * link_new() - a link from netsetup's configuration
 * @st:		stack it will belong to
 * @cfg:	received LINK; its channel fds move to the link (set to -1 in @cfg)
 * @err:	on failure, why, in words
 * @err_len:	size of @err
 *
 * Return: the link, or NULL with @err filled.
 */
struct link *link_new(struct stack *st, struct proto_link *cfg, char *err, size_t err_len)
{
	struct link *l;
	unsigned int i, j;

	if (cfg->n_channels < 1 || cfg->n_channels > PROTO_MAX_CHANNELS) {
		snprintf(err, err_len, "link %s: %u channel sockets, need 1..%d", cfg->ifname,
			 cfg->n_channels, PROTO_MAX_CHANNELS);
		return NULL;
	}
	if (cfg->mac[0] & 1) {
		snprintf(err, err_len, "link %s: MAC address is multicast", cfg->ifname);
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, err_len, "link %s: out of memory", cfg->ifname);
		return NULL;
	}
	l->st = st;
	l->ifindex = cfg->ifindex;
	snprintf(l->name, sizeof(l->name), "%s", cfg->ifname);
	memcpy(l->mac, cfg->mac, 6);
	l->mtu = cfg->mtu;
	l->flags = cfg->flags;
	l->gso_mode = cfg->gso_mode;
	snprintf(l->gso_reason, sizeof(l->gso_reason), "%s", cfg->gso_reason);
	l->gso_max_size = cfg->gso_max_size;
	l->gso_max_segs = cfg->gso_max_segs;
	l->gso_ipv4_max_size = cfg->gso_ipv4_max_size;
	l->vnet = cfg->gso_mode == PROTO_GSO_HW;
	l->tx_batch = cfg->gso_mode == PROTO_GSO_OFF ? 1 : LINK_TX_BATCH;
	for (i = 0; i < PROTO_MAX_CHANNELS; i++)
		l->ch[i].fd = -1;
	for (i = 0; i < cfg->n_addrs; i++) {
		const struct proto_addr *a = &cfg->addrs[i];

		if (a->family == AF_INET && l->n_addr4 < LINK_MAX_ADDR4) {
			l->addr4[l->n_addr4].addr = a->addr.v4;
			l->addr4[l->n_addr4].prefixlen = a->prefixlen;
			l->n_addr4++;
		} else if (a->family == AF_INET6 && l->n_addr6 < LINK_MAX_ADDR6) {
			struct link_addr6 *a6 = &l->addr6[l->n_addr6++];

			a6->addr = a->addr.v6;
			a6->prefixlen = a->prefixlen;
			/* IFA_F_NODAD (0x02): the admin asked for no DAD */
			a6->state = (a->flags & 0x02) ? ADDR6_PREFERRED : ADDR6_TENTATIVE;
		}
	}
	for (i = 0; i < cfg->n_channels; i++) {
		struct link_channel *ch = &l->ch[i];

		ch->link = l;
		ch->fd = cfg->channel_fds[i];
		cfg->channel_fds[i] = -1;
		l->n_channels++;
		for (j = 0; j < LINK_RX_BATCH; j++) {
			ch->rx[j] = pkt_alloc(LINK_RX_BYTES);
			if (!ch->rx[j]) {
				snprintf(err, err_len, "link %s: out of memory for receive buffers",
					 l->name);
				goto err;
			}
		}
	}
	cfg->n_channels = 0;
	return l;
err:
	for (; i < cfg->n_channels; i++) {
		close(cfg->channel_fds[i]);
		cfg->channel_fds[i] = -1;
	}
	cfg->n_channels = 0;
	link_free(l);
	return NULL;
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
	for (i = 0; i < l->n_channels; i++) {
		struct link_channel *ch = &l->ch[i];

		if (ch->lfd.events && l->st)
			loop_fd_del(l->st->loop, &ch->lfd);
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
		int one = 1;

		/* Without a vnet header, auxdata says whether the checksum is
		 * only partial; on other socket types (tests) it is not there. */
		if (!l->vnet)
			setsockopt(l->ch[i].fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one));
		ret = loop_fd_add(l->st->loop, &l->ch[i].lfd, l->ch[i].fd, EPOLLIN,
				  link_channel_event, &l->ch[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

#define LINK_GSO_UDP_L4	5	/* VIRTIO_NET_HDR_GSO_UDP_L4, missing from Debian 12's headers */

/*
 * A UDP GSO frame (a kernel peer's UDP_SEGMENT send) carries many datagrams
 * behind one set of headers: cut it into gso_size-byte datagrams, each with
 * a copy of the headers and its own lengths, and feed them up one by one.
 * The checksum is partial (NEEDS_CSUM): the kernel vouches for the data.
 */
static void link_rx_udp_gso(struct link *l, struct pkt *p)
{
	size_t l4 = p->vnet.csum_start, hdrs = l4 + 8, seg = p->vnet.gso_size, off;
	const uint8_t *d = pkt_data(p);

	if (!seg || hdrs > p->len || l4 < 14 + 20 || (d[14] >> 4 != 4 && d[14] >> 4 != 6)) {
		stack_drop(l->st, DROP_BAD_HEADER);
		return;
	}
	for (off = hdrs; off < p->len; off += seg) {
		size_t n = p->len - off < seg ? p->len - off : seg;
		struct pkt *q = pkt_alloc(hdrs + n);
		uint8_t *h;

		if (!q) {
			stack_drop(l->st, DROP_NO_MEMORY);
			return;
		}
		h = pkt_put(q, hdrs + n);
		memcpy(h, d, hdrs);
		memcpy(h + hdrs, d + off, n);
		if (h[14] >> 4 == 4) {
			uint16_t v = htons((uint16_t)(hdrs - 14 + n)), c;

			memcpy(h + 16, &v, 2);
			h[24] = h[25] = 0;
			c = htons(csum_fold(csum_partial(h + 14, (h[14] & 0xf) * 4, 0)));
			memcpy(h + 24, &c, 2);
		} else {
			uint16_t v = htons((uint16_t)(hdrs - 14 - 40 + n));

			memcpy(h + 18, &v, 2);
		}
		{
			uint16_t v = htons((uint16_t)(8 + n));

			memcpy(h + l4 + 4, &v, 2);
		}
		q->ifindex = l->ifindex;
		q->csum_ok = true;
		l->stats.rx_gso_segments++;
		eth_input(l->st, l, q);
		pkt_free(q);
	}
}

/**
 * link_input_frame() - one received frame into the stack (tests call it too)
 * @l:	link it came in on
 * @p:	frame at pkt_data(), vnet already filled in hw mode; borrowed
 */
void link_input_frame(struct link *l, struct pkt *p)
{
	p->ifindex = l->ifindex;
	if (l->vnet)
		p->csum_ok = p->vnet.flags & (VIRTIO_NET_HDR_F_DATA_VALID |
					      VIRTIO_NET_HDR_F_NEEDS_CSUM);
	if (l->vnet && p->vnet.gso_type != VIRTIO_NET_HDR_GSO_NONE) {
		l->stats.rx_gso_frames++;
		if ((p->vnet.gso_type & ~VIRTIO_NET_HDR_GSO_ECN) == LINK_GSO_UDP_L4 &&
		    (p->vnet.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)) {
			link_rx_udp_gso(l, p);
			return;
		}
	}
	eth_input(l->st, l, p);
}

/* The kernel's word on the checksum of a frame read without a vnet header. */
static bool link_aux_csum_ok(struct msghdr *mh)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		struct tpacket_auxdata aux;

		if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA ||
		    c->cmsg_len < CMSG_LEN(sizeof(aux)))
			continue;
		memcpy(&aux, CMSG_DATA(c), sizeof(aux));
		return aux.tp_status & (TP_STATUS_CSUMNOTREADY | TP_STATUS_CSUM_VALID);
	}
	return false;
}

/*
 * A frame did not fit: give @ch buffers for the largest GSO frame a kernel
 * peer sends (BIG TCP). Called between batches, when no buffer is in use.
 * Out of memory keeps the old buffers (and the truncations go on, counted).
 */
static void link_rx_grow(struct link_channel *ch)
{
	struct pkt *big[LINK_RX_BATCH];
	unsigned int j;

	for (j = 0; j < LINK_RX_BATCH; j++) {
		big[j] = pkt_alloc(LINK_RX_BYTES_BIG);
		if (!big[j]) {
			while (j--)
				pkt_free(big[j]);
			return;
		}
	}
	for (j = 0; j < LINK_RX_BATCH; j++) {
		pkt_free(ch->rx[j]);
		ch->rx[j] = big[j];
	}
	ch->rx_big = true;
	ch->link->stats.rx_buffers_grown++;
}

/**
 * link_rx_channel() - read batches from one channel and feed the stack
 * @ch:	readable channel
 */
void link_rx_channel(struct link_channel *ch)
{
	struct link *l = ch->link;
	struct mmsghdr msgs[LINK_RX_BATCH];
	struct iovec iov[LINK_RX_BATCH][2];
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctrl[LINK_RX_BATCH];
	unsigned int round;
	bool truncated = false;
	int n, i;

	for (round = 0; round < LINK_RX_ROUNDS; round++) {
		if (truncated && !ch->rx_big)
			link_rx_grow(ch);
		for (i = 0; i < LINK_RX_BATCH; i++) {
			struct pkt *p = ch->rx[i];
			unsigned int k = 0;

			pkt_reset(p);
			if (l->vnet) {
				iov[i][k].iov_base = &p->vnet;
				iov[i][k++].iov_len = sizeof(p->vnet);
			}
			iov[i][k].iov_base = pkt_data(p);
			iov[i][k++].iov_len = p->cap - p->off;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = iov[i];
			msgs[i].msg_hdr.msg_iovlen = k;
			if (!l->vnet) {
				msgs[i].msg_hdr.msg_control = ctrl[i].buf;
				msgs[i].msg_hdr.msg_controllen = sizeof(ctrl[i].buf);
			}
		}
		n = recvmmsg(ch->fd, msgs, LINK_RX_BATCH, MSG_DONTWAIT, NULL);
		l->stats.rx_syscalls++;
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			struct pkt *p = ch->rx[i];
			size_t got = msgs[i].msg_len;

			if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				l->stats.rx_truncated++;
				stack_drop(l->st, DROP_RX_TRUNCATED);
				truncated = true;
				continue;
			}
			if (l->vnet) {
				if (got < sizeof(p->vnet)) {
					stack_drop(l->st, DROP_TRUNCATED);
					continue;
				}
				got -= sizeof(p->vnet);
			}
			p->len = got;
			if (!l->vnet)
				p->csum_ok = link_aux_csum_ok(&msgs[i].msg_hdr);
			l->stats.rx_frames++;
			l->stats.rx_bytes += got;
			link_input_frame(l, p);
		}
		if (n < LINK_RX_BATCH)
			break;
	}
	if (truncated && !ch->rx_big)
		link_rx_grow(ch);
}

static void link_channel_event(struct loop_fd *h, uint32_t events)
{
	struct link_channel *ch = h->ctx;

	if (events & EPOLLOUT) {
		ch->link->tx_blocked = false;
		loop_fd_mod(ch->link->st->loop, &ch->lfd, EPOLLIN);
		link_tx_flush(ch->link);
	}
	if (events & (EPOLLIN | EPOLLERR))
		link_rx_channel(ch);
}

/**
 * link_poll_kernel_stats() - add the frames the kernel dropped on our channels
 * @l:	link
 *
 * PACKET_STATISTICS reports (and resets) the frames an AF_PACKET socket had
 * to drop because its receive queue was full: load we could not keep up
 * with. Called when the stats are read; other socket types are ignored.
 */
void link_poll_kernel_stats(struct link *l)
{
	unsigned int i;

	for (i = 0; i < l->n_channels; i++) {
		struct tpacket_stats ts;
		socklen_t len = sizeof(ts);

		if (getsockopt(l->ch[i].fd, SOL_PACKET, PACKET_STATISTICS, &ts, &len) == 0)
			l->stats.rx_kernel_drops += ts.tp_drops;
	}
}

/**
 * link_output() - queue a frame for transmission
 * @l:	link
 * @p:	frame, Ethernet header at pkt_data(); given to the link
 */
void link_output(struct link *l, struct pkt *p)
{
	if (l->txq_len >= LINK_TXQ_MAX) {
		l->stats.tx_queue_full++;
		stack_drop(l->st, DROP_TX_QUEUE_FULL);
		pkt_free(p);
		return;
	}
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
		if (len > (size_t)l->mtu + 14)
			l->stats.tx_over_mtu++;
		if (l->vnet && p->vnet.gso_type != VIRTIO_NET_HDR_GSO_NONE)
			l->stats.tx_gso_frames++;
	}
	if (p->tail && !p->pl)
		l->tx_borrowed--;
	pkt_free(p);
	l->txq[l->txq_head] = NULL;
	l->txq_head = (l->txq_head + 1) % LINK_TXQ_MAX;
	l->txq_len--;
}

/**
 * link_tx_flush() - send what is queued, in order, until done or EAGAIN
 * @l:	link
 */
void link_tx_flush(struct link *l)
{
	struct mmsghdr msgs[LINK_TX_BATCH];
	struct iovec iov[LINK_TX_BATCH][3];
	int fd = l->ch[0].fd;

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
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = iov[i];
			msgs[i].msg_hdr.msg_iovlen = k;
		}
		ret = sendmmsg(fd, msgs, n, MSG_DONTWAIT);
		l->stats.tx_syscalls++;
		if (ret > 0) {
			for (i = 0; i < (unsigned int)ret; i++)
				link_txq_pop(l, true);
			continue;
		}
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			l->stats.tx_eagain++;
			l->tx_blocked = true;
			loop_fd_mod(l->st->loop, &l->ch[0].lfd, EPOLLIN | EPOLLOUT);
			return;
		}
		/* The head frame was refused: drop it alone, keep the order. */
		l->stats.tx_errors++;
		stack_drop(l->st, DROP_TX_ERROR);
		link_txq_pop(l, false);
	}
}
