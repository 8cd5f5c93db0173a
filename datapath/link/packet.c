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
 * Receive, through a ring: a real packet socket gets a receive ring
 * (PACKET_RX_RING, TPACKET_V2, packet_ring_open()). The kernel copies each
 * frame into a slot of memory we share, in the softirq that receives it (the
 * sender's system call, on a veth), and hands the slot over by its status
 * word. Reading a frame then costs no system call and frees no skb on our
 * thread: with recvmmsg() that was 60 % of the datapath's time under a UDP
 * flood in (docs/benchmarks.md). A slot holds one frame of the link's MTU;
 * a larger one (a GSO frame from a kernel peer) also goes whole on the
 * socket's receive queue (PACKET_COPY_THRESH), its slot marked
 * TP_STATUS_COPY, and a run of such slots is read with one recvmmsg(), in
 * order. A slot also says when the kernel received its frame (tp_sec,
 * tp_nsec, CLOCK_REALTIME); made loop time, it goes up in pkt->rx_us, so
 * that what a datapath set aside for a while reads at once can leave as
 * spread out as it came (the face's pacer). TPACKET_V3 reads more frames per second but hands a block over
 * only when it is full or a timer of at least a millisecond has passed: a
 * request would wait for it. A socket that is not a packet socket (the
 * tests' socketpairs), or `--no-rx-ring`, is read with recvmmsg() alone, as
 * below.
 *
 * Receive, through the queue: each channel starts with LINK_RX_BATCH_MIN
 * packet buffers of LINK_RX_BYTES and doubles them, up to LINK_RX_BATCH, each time one
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
 * 64 KiB so that a link which never sees such a peer does not hold 32 MiB
 * of buffers. At most LINK_RX_ROUNDS
 * batches are read per turn so that one busy channel cannot starve timers
 * and other fds. Frames go up through link_input(), which cuts a UDP GSO
 * frame from a kernel peer into its datagrams (vnet_udp_split()), to the
 * handler the stack registered (Ethernet input).
 *
 * Transmit: link.c's queue; packet_xmit() sends a batch with one
 * sendmmsg(). In off mode the batch is one frame per syscall.
 *
 * What link.c asks of this kind goes through link_packet_ops (the end of
 * this file): read a channel, send a batch, unmap the rings, the kernel's
 * drop counts, and cut a kernel peer's UDP GSO frames on receive.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/link/link.h"
#include "datapath/link/vnet.h"

static const struct link_ops link_packet_ops;

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

/* Bytes of receive ring per channel: 1024 slots at an MTU of 1500, 11 ms
 * of 1400-byte datagrams at 1 Gbit/s. */
#define PACKET_RING_BYTES	(2u << 20)
#define PACKET_RING_BLOCK	(64u << 10)	/* a block: 32 slots at an MTU of 1500 */
#define PACKET_RING_MIN_FRAMES	64

static bool packet_ring_off;

/** link_packet_no_ring() - `--no-rx-ring`: read every channel with recvmmsg() */
void link_packet_no_ring(void)
{
	packet_ring_off = true;
}

static struct tpacket2_hdr *packet_ring_slot(const struct link_rx_ring *r, unsigned int i)
{
	return (struct tpacket2_hdr *)(r->map + (size_t)(i / r->per_block) * r->block_size +
				       (size_t)(i % r->per_block) * r->frame_size);
}

/*
 * Give @ch a receive ring whose slots hold a frame of @frame_bytes (MTU and
 * link header) after the kernel's headers and our vnet header. A ring a
 * datapath before us left on the socket is taken down first: the socket
 * outlives a datapath that died (the supervisor hands it to the next), and
 * the kernel refuses a second ring or a new version while one is there.
 *
 * Return: 0, or negative errno with @err filled (the ring is not half made).
 */
static int packet_ring_open(struct link_channel *ch, unsigned int frame_bytes, char *err,
			    size_t err_len)
{
	struct link_rx_ring *r = &ch->ring;
	struct tpacket_req req = { 0 };
	int version = TPACKET_V2, thresh = 1;
	unsigned int frame, per_block, block, blocks;
	const char *step;
	void *map;

	/* where tpacket_rcv() puts the frame: its header and a sockaddr_ll,
	 * padded, at least 16 bytes for the link header, then our vnet header */
	frame = TPACKET_ALIGN(TPACKET2_HDRLEN + 16) + sizeof(struct virtio_net_hdr) + frame_bytes;
	frame = TPACKET_ALIGN(frame);
	block = frame <= PACKET_RING_BLOCK ? PACKET_RING_BLOCK :
		(frame + (unsigned int)getpagesize() - 1) / (unsigned int)getpagesize() *
		(unsigned int)getpagesize();
	per_block = block / frame;
	blocks = PACKET_RING_BYTES / block;
	if (blocks * per_block < PACKET_RING_MIN_FRAMES)
		blocks = (PACKET_RING_MIN_FRAMES + per_block - 1) / per_block;

	step = "taking down the ring left on it";
	if (setsockopt(ch->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		goto fail;
	step = "PACKET_VERSION TPACKET_V2";
	if (setsockopt(ch->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) < 0)
		goto fail;
	step = "PACKET_COPY_THRESH";
	if (setsockopt(ch->fd, SOL_PACKET, PACKET_COPY_THRESH, &thresh, sizeof(thresh)) < 0)
		goto fail;
	req.tp_block_size = block;
	req.tp_block_nr = blocks;
	req.tp_frame_size = frame;
	req.tp_frame_nr = blocks * per_block;
	step = "PACKET_RX_RING";
	if (setsockopt(ch->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		goto fail;
	step = "mmap";
	map = mmap(NULL, (size_t)block * blocks, PROT_READ | PROT_WRITE, MAP_SHARED, ch->fd, 0);
	if (map == MAP_FAILED) {
		int e = errno;

		memset(&req, 0, sizeof(req));
		setsockopt(ch->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req));
		errno = e;
		goto fail;
	}
	r->map = map;
	r->map_len = (size_t)block * blocks;
	r->block_size = block;
	r->frame_size = frame;
	r->per_block = per_block;
	r->frames = blocks * per_block;
	r->head = 0;
	return 0;
fail:
	snprintf(err, err_len, "link %s: channel %u: receive ring: %s: %s", ch->link->name,
		 (unsigned int)(ch - ch->link->ch), step, strerror(errno));
	return -errno;
}

/* link_packet_ops.free: unmap every channel's receive ring, the ones it has. */
static void packet_free(struct link *l)
{
	unsigned int i;

	for (i = 0; i < l->n_channels; i++) {
		struct link_channel *ch = &l->ch[i];

		if (!ch->ring.map)
			continue;
		munmap(ch->ring.map, ch->ring.map_len);
		ch->ring.map = NULL;
	}
}

/* Is @fd an AF_PACKET socket (and not a test's socketpair)? */
static bool packet_is_packet_socket(int fd)
{
	socklen_t len = sizeof(int);
	int domain = 0;

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_PACKET;
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
	l = link_alloc(loop, &link_packet_ops);
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
		if (l->vnet && !packet_ring_off && packet_is_packet_socket(fd) &&
		    packet_ring_open(&l->ch[l->n_channels - 1], l->l2_len + l->mtu, err, err_len) < 0)
			goto err;
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

/*
 * One recvmmsg() of up to @want frames (at most the channel's buffers) from
 * @ch's receive queue, each up through link_input(). A frame that did not
 * fit sets *@truncated.
 *
 * Return: frames read, 0 when none was waiting.
 */
static unsigned int packet_queue_read(struct link_channel *ch, unsigned int want, bool *truncated)
{
	struct link *l = ch->link;
	struct mmsghdr msgs[LINK_RX_BATCH];
	struct iovec iov[LINK_RX_BATCH][2];
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctrl[LINK_RX_BATCH];
	unsigned int batch = want < ch->n_rx ? want : ch->n_rx;
	int n, i;

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
		return 0;
	for (i = 0; i < n; i++) {
		struct pkt *p = ch->rx[i];
		size_t got = msgs[i].msg_len;

		if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
			l->stats.rx_truncated++;
			link_drop(l, DROP_RX_TRUNCATED);
			*truncated = true;
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
	return (unsigned int)n;
}

/* Hand @n slots from the ring's head back to the kernel. */
static void packet_ring_release(struct link_rx_ring *r, unsigned int n)
{
	while (n--) {
		__atomic_store_n(&packet_ring_slot(r, r->head)->tp_status, TP_STATUS_KERNEL,
				 __ATOMIC_RELEASE);
		r->head = (r->head + 1) % r->frames;
	}
}

/* Slots from the head on, up to @max, ours and marked TP_STATUS_COPY. */
static unsigned int packet_ring_copies(const struct link_rx_ring *r, unsigned int max)
{
	unsigned int n;

	for (n = 0; n < max && n < r->frames; n++) {
		uint32_t st = __atomic_load_n(&packet_ring_slot(r, (r->head + n) % r->frames)->tp_status,
					      __ATOMIC_ACQUIRE);

		if ((st & (TP_STATUS_USER | TP_STATUS_COPY)) != (TP_STATUS_USER | TP_STATUS_COPY))
			break;
	}
	return n;
}

/*
 * The frame in slot @h, ours: copied into a buffer and up through
 * link_input(), with the time the kernel received it (the slot's
 * CLOCK_REALTIME stamp less @rt_off: loop time).
 */
static void packet_ring_frame(struct link_channel *ch, const struct tpacket2_hdr *h, uint64_t rt_off)
{
	uint64_t stamp = (uint64_t)h->tp_sec * 1000000 + h->tp_nsec / 1000;
	const struct link_rx_ring *r = &ch->ring;
	const uint8_t *slot = (const uint8_t *)h;
	struct link *l = ch->link;
	struct pkt *p = ch->rx[0];
	uint32_t mac = h->tp_mac, snap = h->tp_snaplen;

	if (snap < h->tp_len) {	/* larger than a slot, and the queue had no room for it whole */
		l->stats.rx_truncated++;
		link_drop(l, DROP_RX_TRUNCATED);
		return;
	}
	if (mac < TPACKET2_HDRLEN + sizeof(p->vnet) || mac > r->frame_size || snap > r->frame_size - mac ||
	    snap > p->cap - PKT_HEADROOM) {
		link_drop(l, DROP_BAD_HEADER);
		return;
	}
	pkt_reset(p);
	memcpy(&p->vnet, slot + mac - sizeof(p->vnet), sizeof(p->vnet));
	memcpy(pkt_data(p), slot + mac, snap);
	p->len = snap;
	p->rx_us = stamp > rt_off ? stamp - rt_off : 0;
	l->stats.rx_ring_frames++;
	ch->rx_frames++;
	link_input(l, p);
}

/*
 * Read what the ring holds, up to as many frames as LINK_RX_ROUNDS batches,
 * in order: a slot at a time, a run of TP_STATUS_COPY slots with one read of
 * the queue.
 */
static void packet_ring_rx(struct link_channel *ch)
{
	struct link_rx_ring *r = &ch->ring;
	struct link *l = ch->link;
	uint64_t rt_off = loop_realtime_offset_us(l->loop);
	bool truncated = false;
	unsigned int n = 0;

	while (n < LINK_RX_BATCH * LINK_RX_ROUNDS) {
		struct tpacket2_hdr *h = packet_ring_slot(r, r->head);
		uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		unsigned int run, got;
		bool grow;

		if (!(status & TP_STATUS_USER))
			break;
		if (!(status & TP_STATUS_COPY)) {
			packet_ring_frame(ch, h, rt_off);
			packet_ring_release(r, 1);
			n++;
			continue;
		}
		if (truncated && !ch->rx_big)
			packet_rx_grow(ch);
		run = packet_ring_copies(r, ch->n_rx);
		got = packet_queue_read(ch, run, &truncated);
		l->stats.rx_ring_copies += got;
		grow = got == ch->n_rx;
		for (; got < run; got++) {	/* the kernel queues before it marks: never */
			l->stats.rx_truncated++;
			link_drop(l, DROP_RX_TRUNCATED);
		}
		packet_ring_release(r, run);
		n += run;
		if (grow && ch->n_rx < LINK_RX_BATCH)
			link_channel_more(ch);
	}
	if (truncated && !ch->rx_big)
		packet_rx_grow(ch);
}

/* link_packet_ops.rx: read what one channel holds and feed the stack. */
static void packet_rx(struct link_channel *ch)
{
	bool truncated = false;
	unsigned int round;

	if (ch->ring.map) {
		packet_ring_rx(ch);
		return;
	}
	for (round = 0; round < LINK_RX_ROUNDS; round++) {
		unsigned int batch = ch->n_rx;

		if (truncated && !ch->rx_big)
			packet_rx_grow(ch);
		if (packet_queue_read(ch, batch, &truncated) < batch)
			break;
		if (batch < LINK_RX_BATCH)
			link_channel_more(ch);
	}
	if (truncated && !ch->rx_big)
		packet_rx_grow(ch);
}

/*
 * link_packet_ops.kernel_stats: add the frames the kernel dropped on our
 * channels. PACKET_STATISTICS reports (and resets) the frames an AF_PACKET
 * socket had to drop because its receive queue was full: load we could not
 * keep up with. Called when the stats are read; other socket types are
 * ignored.
 */
static void packet_kernel_stats(struct link *l)
{
	unsigned int i;

	for (i = 0; i < l->n_channels; i++) {
		struct tpacket_stats ts;
		socklen_t len = sizeof(ts);

		if (getsockopt(l->ch[i].fd, SOL_PACKET, PACKET_STATISTICS, &ts, &len) == 0)
			l->stats.rx_kernel_drops += ts.tp_drops;
	}
}

/*
 * link_packet_ops.xmit: one sendmmsg() of @n frames on channel 0. A refused
 * frame ends the batch (@refused is never set).
 *
 * Return: frames sent (a prefix), or negative errno for the first one.
 */
static int packet_xmit(struct link *l, struct iovec (*iov)[3], const unsigned int *iovcnt, unsigned int n,
		       bool *refused)
{
	struct mmsghdr msgs[LINK_TX_BATCH];
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = iov[i];
		msgs[i].msg_hdr.msg_iovlen = iovcnt[i];
	}
	(void)refused;
	ret = sendmmsg(l->ch[0].fd, msgs, n, MSG_DONTWAIT);
	l->stats.tx_syscalls++;
	return ret < 0 ? -errno : ret;
}

/* The outer link. A kernel peer's UDP GSO frame is cut into its datagrams
 * on receive: the stack takes datagrams. */
static const struct link_ops link_packet_ops = {
	.kind = LINK_KIND_PACKET,
	.rx = packet_rx,
	.xmit = packet_xmit,
	.free = packet_free,
	.kernel_stats = packet_kernel_stats,
	.rx_udp_gso_split = true,
};
