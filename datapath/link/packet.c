// SPDX-License-Identifier: MIT
/*
 * packet.c - the outer link: batched I/O on the AF_PACKET channels of one
 * Ethernet interface
 *
 * Theory of operation
 *
 * netsetup hands us, per link, 1..64 AF_PACKET sockets ("channels") bound to
 * the container's interface; with several, the kernel spreads flows over them
 * (PACKET_FANOUT). The link owns them from then on.
 *
 * Receive: each channel starts with LINK_RX_BATCH_MIN packet buffers of
 * LINK_RX_BYTES and doubles them, up to LINK_RX_BATCH, each time one
 * recvmmsg() fills them all (a busy channel reads 64 frames a call, an idle
 * one holds 512 KiB, not 4 MiB). When epoll says a channel is readable, one
 * recvmmsg() fills up to its buffers; each frame starts with a struct
 * virtio_net_hdr (netsetup sets PACKET_VNET_HDR in every GSO mode), which is
 * read into pkt->vnet through its own iovec so the frame itself lands at
 * PKT_HEADROOM (room to turn a request into a reply in place if a layer
 * wants to). A channel without a vnet header (a test's socketpair in sw or
 * off mode) gives the kernel's word on the checksum through PACKET_AUXDATA
 * instead: a frame from the local kernel often carries only a partial
 * checksum (TP_STATUS_CSUMNOTREADY, veth's checksum offload), which must not
 * be verified. A frame longer than the buffer comes back with MSG_TRUNC: it
 * is counted as rx_truncated and dropped (the peer retransmits it), and
 * after that batch the channel's buffers grow once to LINK_RX_BYTES_BIG: a
 * kernel peer with BIG TCP sends TCP frames up to 512 KiB. They start at
 * 64 KiB so that a link which never
 * sees such a peer does not hold 32 MiB of buffers. At most LINK_RX_ROUNDS
 * batches are read per turn so that one busy channel cannot starve timers
 * and other fds. Frames go up through link_input(), which cuts a UDP GSO
 * frame from a kernel peer into its datagrams (vnet_udp_split()), to the
 * handler the stack registered (Ethernet input).
 *
 * Transmit: link.c's queue; link_packet_xmit() sends a batch with one
 * sendmmsg(). In off mode the batch is one frame per syscall.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/link/link.h"
#include "datapath/link/vnet.h"


/*
 * Do @cfg's channels start every frame with a virtio_net_hdr? The sockets
 * say (netsetup sets PACKET_VNET_HDR in every mode, so that a kernel peer's
 * UDP GSO frame can be cut on receive); a socket that is not a packet socket
 * (the tests' socketpairs) has one in hw mode. All must agree, and hw mode
 * needs one.
 *
 * Return: 1 or 0, or -EINVAL with @err filled.
 */
static int packet_channels_vnet(const struct proto_link *cfg, char *err, size_t err_len)
{
	int first = -1;
	unsigned int i;

	for (i = 0; i < cfg->n_channels; i++) {
		socklen_t len = sizeof(int);
		int on = 0, has;

		if (getsockopt(cfg->channel_fds[i], SOL_PACKET, PACKET_VNET_HDR, &on, &len) == 0)
			has = on != 0;
		else
			has = cfg->gso_mode == PROTO_GSO_HW;
		if (first < 0)
			first = has;
		if (has != first) {
			snprintf(err, err_len, "link %s: channel %u %s PACKET_VNET_HDR and channel 0 %s",
				 cfg->ifname, i, has ? "has" : "lacks", first ? "has" : "lacks");
			return -EINVAL;
		}
	}
	if (cfg->gso_mode == PROTO_GSO_HW && !first) {
		snprintf(err, err_len, "link %s: gso mode hw needs PACKET_VNET_HDR on its channel sockets",
			 cfg->ifname);
		return -EINVAL;
	}
	return first > 0;
}

/**
 * link_packet_new() - a packet link from netsetup's configuration
 * @loop:	the event loop its channels will be watched by
 * @cfg:	received LINK; its channel fds move to the link (set to -1 in @cfg)
 * @err:	on failure, why, in words
 * @err_len:	size of @err
 *
 * Return: the link, or NULL with @err filled.
 */
struct link *link_packet_new(struct loop *loop, struct proto_link *cfg, char *err, size_t err_len)
{
	struct link *l;
	unsigned int i;
	int vnet;

	if (cfg->n_channels < 1 || cfg->n_channels > PROTO_MAX_CHANNELS) {
		snprintf(err, err_len, "link %s: %u channel sockets, need 1..%d", cfg->ifname,
			 cfg->n_channels, PROTO_MAX_CHANNELS);
		return NULL;
	}
	if (cfg->mac[0] & 1) {
		snprintf(err, err_len, "link %s: MAC address is multicast", cfg->ifname);
		return NULL;
	}
	vnet = packet_channels_vnet(cfg, err, err_len);
	if (vnet < 0)
		return NULL;
	l = link_alloc(loop, LINK_KIND_PACKET);
	if (!l) {
		snprintf(err, err_len, "link %s: out of memory", cfg->ifname);
		return NULL;
	}
	l->ifindex = cfg->ifindex;
	snprintf(l->name, sizeof(l->name), "%s", cfg->ifname);
	memcpy(l->mac, cfg->mac, 6);
	l->mtu = cfg->mtu;
	l->flags = cfg->flags;
	l->l2_len = ETH_HLEN;
	l->gso_mode = cfg->gso_mode;
	snprintf(l->gso_reason, sizeof(l->gso_reason), "%s", cfg->gso_reason);
	l->gso_max_size = cfg->gso_max_size;
	l->gso_max_segs = cfg->gso_max_segs;
	l->gso_ipv4_max_size = cfg->gso_ipv4_max_size;
	l->vnet = vnet;
	l->tx_batch = cfg->gso_mode == PROTO_GSO_OFF ? 1 : LINK_TX_BATCH;
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
		int fd = cfg->channel_fds[i], one = 1;

		cfg->channel_fds[i] = -1;
		/* Without a vnet header, auxdata says whether the checksum is
		 * only partial; on other socket types (tests) it is not there. */
		if (!l->vnet)
			setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one));
		if (link_channel_add(l, fd, LINK_RX_BYTES, LINK_RX_BATCH_MIN) < 0) {
			snprintf(err, err_len, "link %s: out of memory for receive buffers", l->name);
			goto err;
		}
	}
	cfg->n_channels = 0;
	return l;
err:
	for (i++; i < cfg->n_channels; i++) {
		close(cfg->channel_fds[i]);
		cfg->channel_fds[i] = -1;
	}
	cfg->n_channels = 0;
	link_free(l);
	return NULL;
}

/* The kernel's word on the checksum of a frame read without a vnet header. */
static bool packet_aux_csum_ok(struct msghdr *mh)
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
static void packet_rx_grow(struct link_channel *ch)
{
	struct pkt *big[LINK_RX_BATCH];
	unsigned int j;

	for (j = 0; j < ch->n_rx; j++) {
		big[j] = pkt_alloc(LINK_RX_BYTES_BIG);
		if (!big[j]) {
			while (j--)
				pkt_free(big[j]);
			return;
		}
	}
	for (j = 0; j < ch->n_rx; j++) {
		pkt_free(ch->rx[j]);
		ch->rx[j] = big[j];
	}
	ch->rx_big = true;
	ch->rx_bytes = LINK_RX_BYTES_BIG;
	ch->link->stats.rx_buffers_grown++;
}

/**
 * link_packet_rx() - read batches from one channel and feed the stack
 * @ch:	readable channel
 */
void link_packet_rx(struct link_channel *ch)
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
		unsigned int batch = ch->n_rx;

		if (truncated && !ch->rx_big)
			packet_rx_grow(ch);
		for (i = 0; i < (int)batch; i++) {
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
		n = recvmmsg(ch->fd, msgs, batch, MSG_DONTWAIT, NULL);
		l->stats.rx_syscalls++;
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			struct pkt *p = ch->rx[i];
			size_t got = msgs[i].msg_len;

			if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				l->stats.rx_truncated++;
				link_drop(l, DROP_RX_TRUNCATED);
				truncated = true;
				continue;
			}
			if (l->vnet) {
				if (got < sizeof(p->vnet)) {
					link_drop(l, DROP_TRUNCATED);
					continue;
				}
				got -= sizeof(p->vnet);
			}
			p->len = got;
			if (!l->vnet)
				p->csum_ok = packet_aux_csum_ok(&msgs[i].msg_hdr);
			ch->rx_frames++;
			link_input(l, p);
		}
		if (n < (int)batch)
			break;
		if (batch < LINK_RX_BATCH)
			link_channel_more(ch);
	}
	if (truncated && !ch->rx_big)
		packet_rx_grow(ch);
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

	if (l->kind != LINK_KIND_PACKET)
		return;
	for (i = 0; i < l->n_channels; i++) {
		struct tpacket_stats ts;
		socklen_t len = sizeof(ts);

		if (getsockopt(l->ch[i].fd, SOL_PACKET, PACKET_STATISTICS, &ts, &len) == 0)
			l->stats.rx_kernel_drops += ts.tp_drops;
	}
}

/**
 * link_packet_xmit() - one sendmmsg() of @n frames on channel 0
 * @l:		link
 * @iov:	per frame, its iovecs
 * @iovcnt:	per frame, how many
 * @n:		frames
 *
 * Return: frames sent (a prefix), or negative errno for the first one.
 */
int link_packet_xmit(struct link *l, struct iovec (*iov)[3], const unsigned int *iovcnt, unsigned int n)
{
	struct mmsghdr msgs[LINK_TX_BATCH];
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = iov[i];
		msgs[i].msg_hdr.msg_iovlen = iovcnt[i];
	}
	ret = sendmmsg(l->ch[0].fd, msgs, n, MSG_DONTWAIT);
	l->stats.tx_syscalls++;
	return ret < 0 ? -errno : ret;
}
