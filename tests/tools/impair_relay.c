// SPDX-License-Identifier: MIT
/*
 * impair_relay - bridge two links with seeded loss, delay, reordering,
 * duplication, a rate bottleneck and ECN marking
 *
 * The kernel on these machines has no netem, so tests that need a bad network
 * put this relay in a middle namespace between two veths:
 *
 *   peer ns: veth --- mid ns: [ifA <-> impair_relay <-> ifB] --- veth: container ns
 *
 * Theory of operation: one AF_PACKET socket per side, bound to the link with
 * PACKET_VNET_HDR so that GSO frames cross whole (the virtio_net_hdr that came
 * in goes out unchanged) and PACKET_IGNORE_OUTGOING so the relay never sees
 * its own frames.
 *
 * Receiving: each socket has a PACKET_RX_RING (TPACKET_V2, 16 MiB of 2 KiB
 * slots, mmap'ed), so reading a frame costs no system call. With
 * PACKET_VNET_HDR the kernel writes the virtio_net_hdr into the slot right in
 * front of the frame, at tp_mac - 10, so header and frame lie back to back
 * exactly as recv() would have returned them. A frame larger than a slot (a
 * GSO frame, a jumbo frame) is cut short in the slot, which is then marked
 * TP_STATUS_COPY, and because PACKET_COPY_THRESH is on the kernel queues the
 * whole frame on the socket as well: the relay reads it there with recvmsg()
 * at the slot's place in the ring, so order is kept. A cut frame without
 * TP_STATUS_COPY (the socket's receive buffer was full) cannot pass whole and
 * counts as a socket drop, like the frames the kernel drops when the ring is
 * full (PACKET_STATISTICS, read at the end). The kernel takes a VLAN tag out of
 * the frame before any packet socket sees it (tp_vlan_tci); the relay puts it
 * back (moving the vnet header's csum_start and hdr_len by 4) so that a tagged
 * frame leaves tagged.
 *
 * Impairing: every frame gets a release time. Loss and duplication are drawn
 * first; then, with --rate, each copy crosses a bottleneck for its direction:
 * it leaves the bottleneck at max(arrival, the previous frame's departure) +
 * wire length * 8 / rate, where the wire length is the frame without its vnet
 * header and a GSO frame counts every segment's headers. The bottleneck's
 * queue holds the bytes whose serialization has not finished, (departure of
 * the last frame - now) * rate / 8; a frame that would take it past
 * --limit-bytes (default 1000000 bytes, 1 MB) is tail-dropped (queue_drops).
 * With --ecn-mark, a frame that finds more than that many bytes queued and
 * whose IP header says ECT(0) or ECT(1) is marked CE (IPv4: the TOS byte and an
 * incremental header checksum update, RFC 1624; IPv6: the traffic class) after
 * one optional 802.1Q/802.1ad tag; a frame too short or not IP is never
 * touched. After the bottleneck (or on arrival, without --rate) come --delay-ms
 * and a uniform jitter; a reordered frame gets an extra delay so that later
 * ones overtake it. The random draws are the same, in the same order, as
 * without a rate, so a seed picks the same frames as before.
 *
 * Frames sit in a binary heap ordered by release time (ties by arrival, so that
 * without impairments order is kept). Their bytes live in 2 KiB slots of a
 * pool that grows in 2 MiB chunks and is never given back; only a frame too
 * large for a slot is malloc'ed. The loop reads the rings, then sends every
 * frame that is due with sendmmsg(), up to 64 per call and side, and when
 * there is nothing to do sleeps in ppoll() until the next release time
 * (nanoseconds; the timer slack is set to 1 us) or until a frame arrives.
 * SIGTERM and SIGINT are blocked except inside ppoll(), so a stop request
 * never cuts a batch short and is never missed. One xorshift generator seeded
 * from --seed makes a run repeatable for the same arrival order.
 *
 * It stops by itself after --duration seconds, or on SIGTERM/SIGINT, and then
 * prints its counters. The queue is bounded (--queue frames); a frame that
 * finds it full is dropped and counted.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#define VNET_LEN	sizeof(struct virtio_net_hdr)	/* 10 */
#define FRAME_MAX	(VNET_LEN + 65536)	/* vnet header + the largest frame a veth passes whole */
#define VLAN_LEN	4u
#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5
#endif

#define RING_SLOT	2048u		/* a TPACKET_V2 slot: header, vnet header, an MTU frame */
#define RING_BLOCK	(1u << 20)
#define RING_BLOCKS	16u
#define POOL_SLOT	2048u		/* vnet header + a frame of up to 2038 bytes */
#define POOL_CHUNK	1024u		/* slots the pool grows by */
#define RX_BUDGET	256u		/* frames read from one ring before sending what is due */
#define TX_BATCH	64u		/* frames per sendmmsg() */
#define LIMIT_DEFAULT	1000000u	/* --limit-bytes when --rate is given */
#define TIMER_SLACK_NS	1000ul

struct frame {
	uint64_t due_ns;
	uint64_t order;		/* arrival number: keeps FIFO among equal release times */
	uint8_t *data;		/* vnet header, then the Ethernet frame */
	uint32_t len;		/* bytes at data, vnet header included */
	int out;		/* side index to send on */
};

struct relay_opts {
	const char *ifname[2];
	uint64_t seed;
	unsigned int delay_ms, jitter_ms, reorder_ms;
	double loss, dup, reorder;	/* probabilities 0..1 */
	unsigned int duration_s;
	unsigned int queue_max;
	double rate_mbit;		/* 0: no bottleneck */
	unsigned int limit_bytes;
	unsigned int ecn_bytes;
	bool limit_set, ecn;
};

struct relay_stats {
	uint64_t in[2], out[2], lost, duplicated, reordered, queue_full, send_errors;
	uint64_t socket_drops;	/* frames the kernel dropped before the relay read them */
	uint64_t queue_drops;	/* tail drops at the bottleneck (--limit-bytes) */
	uint64_t ce_marked;	/* ECT frames marked CE (--ecn-mark) */
};

/* The heap of frames waiting for their release time. */
struct heap {
	struct frame *v;
	size_t n, cap;
};

/* Frame buffers: POOL_SLOT-sized slots, free ones linked through their first bytes. */
struct pool {
	void *free;
	uint8_t **chunk;
	size_t nchunk, chunk_cap;
};

/* One direction's bottleneck: when its last frame's serialization ends. */
struct bottleneck {
	uint64_t free_ns;
	uint32_t free_ps;	/* and the picoseconds past free_ns */
};

struct side {
	int fd;
	uint8_t *ring;
	size_t ring_len;
	unsigned int ring_slots, ring_next;
};

/* Frames due on one side, sent with one sendmmsg(). */
struct tx_batch {
	struct mmsghdr msg[TX_BATCH];
	struct iovec iov[TX_BATCH];
	struct frame f[TX_BATCH];
	unsigned int n;
};

struct relay {
	struct relay_opts o;
	struct relay_stats st;
	struct side side[2];
	struct bottleneck bn[2];	/* indexed by the side frames leave on */
	double ps_per_byte;		/* serialization time of a byte at --rate */
	struct heap h;
	struct pool pool;
	uint64_t order;
	uint8_t *rxbuf;			/* FRAME_MAX: a frame too large for a ring slot */
	struct tx_batch tx[2];
};

/**
 * socket_drops_add() - add the kernel's drop count of a socket to the stats
 * @fd: the packet socket (its count is reset by reading it)
 * @st: where to add it
 *
 * With a ring the count covers frames dropped because the ring was full, and
 * those the receive buffer had no room for.
 */
static void socket_drops_add(int fd, struct relay_stats *st)
{
	struct tpacket_stats ts;
	socklen_t len = sizeof(ts);

	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &ts, &len) == 0)
		st->socket_drops += ts.tp_drops;
}

static volatile sig_atomic_t relay_stop;

static void on_signal(int sig)
{
	(void)sig;
	relay_stop = 1;
}

static uint64_t rng_state;

/* xorshift64*: fast, seedable, good enough to pick which frames to impair. */
static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static double rng_unit(void)
{
	return (double)(rng_next() >> 11) / (double)(1ull << 53);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool frame_before(const struct frame *a, const struct frame *b)
{
	return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->order < b->order);
}

static void heap_swap(struct heap *h, size_t i, size_t j)
{
	struct frame t = h->v[i];

	h->v[i] = h->v[j];
	h->v[j] = t;
}

static void heap_push(struct heap *h, struct frame f)
{
	size_t i = h->n++;

	h->v[i] = f;
	while (i && frame_before(&h->v[i], &h->v[(i - 1) / 2])) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static struct frame heap_pop(struct heap *h)
{
	struct frame top = h->v[0];
	size_t i = 0;

	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && frame_before(&h->v[l], &h->v[m]))
			m = l;
		if (r < h->n && frame_before(&h->v[r], &h->v[m]))
			m = r;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
	return top;
}

/**
 * pool_grow() - add POOL_CHUNK free slots to the pool
 * @p: the pool
 *
 * Return: 0, or -ENOMEM.
 */
static int pool_grow(struct pool *p)
{
	uint8_t *c;

	if (p->nchunk == p->chunk_cap) {
		size_t cap = p->chunk_cap ? 2 * p->chunk_cap : 16;
		uint8_t **v = realloc(p->chunk, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->chunk = v;
		p->chunk_cap = cap;
	}
	c = malloc((size_t)POOL_CHUNK * POOL_SLOT);
	if (!c)
		return -ENOMEM;
	p->chunk[p->nchunk++] = c;
	for (size_t i = POOL_CHUNK; i-- > 0;) {
		uint8_t *s = c + i * POOL_SLOT;

		memcpy(s, &p->free, sizeof(p->free));
		p->free = s;
	}
	return 0;
}

/**
 * buf_get() - a buffer for a frame
 * @p: the pool
 * @len: bytes it must hold, vnet header included
 *
 * Return: a pool slot if @len fits one, else malloc'ed memory; NULL when out
 * of memory. Give it back with buf_put() and the same @len.
 */
static uint8_t *buf_get(struct pool *p, size_t len)
{
	uint8_t *s;

	if (len > POOL_SLOT)
		return malloc(len);
	if (!p->free && pool_grow(p) < 0)
		return NULL;
	s = p->free;
	memcpy(&p->free, s, sizeof(p->free));
	return s;
}

static void buf_put(struct pool *p, uint8_t *buf, size_t len)
{
	if (len > POOL_SLOT) {
		free(buf);
		return;
	}
	memcpy(buf, &p->free, sizeof(p->free));
	p->free = buf;
}

static void pool_free(struct pool *p)
{
	for (size_t i = 0; i < p->nchunk; i++)
		free(p->chunk[i]);
	free(p->chunk);
	*p = (struct pool){ 0 };
}

/**
 * ip_header() - find the IP header of an Ethernet frame
 * @f: the frame (no vnet header)
 * @len: its length
 * @off: set to the IP header's offset in @f
 *
 * Skips one 802.1Q or 802.1ad tag. The whole fixed header (IPv4: with its
 * options) must lie within @len.
 *
 * Return: 4 or 6, -EMSGSIZE if the frame is too short, -EPROTONOSUPPORT if it
 * does not carry IPv4 or IPv6.
 */
static int ip_header(const uint8_t *f, size_t len, size_t *off)
{
	size_t o = ETH_HLEN;
	uint16_t type;

	if (len < ETH_HLEN)
		return -EMSGSIZE;
	type = (uint16_t)(f[12] << 8 | f[13]);
	if (type == ETH_P_8021Q || type == ETH_P_8021AD) {
		if (len < ETH_HLEN + VLAN_LEN)
			return -EMSGSIZE;
		type = (uint16_t)(f[16] << 8 | f[17]);
		o += VLAN_LEN;
	}
	if (type == ETH_P_IP) {
		if (len < o + 20)
			return -EMSGSIZE;
		if (f[o] >> 4 != 4 || (f[o] & 0x0f) < 5)
			return -EPROTONOSUPPORT;
		if (len < o + (size_t)(f[o] & 0x0f) * 4)
			return -EMSGSIZE;
		*off = o;
		return 4;
	}
	if (type == ETH_P_IPV6) {
		if (len < o + 40)
			return -EMSGSIZE;
		if (f[o] >> 4 != 6)
			return -EPROTONOSUPPORT;
		*off = o;
		return 6;
	}
	return -EPROTONOSUPPORT;
}

/**
 * ecn_mark() - mark an ECN-capable frame Congestion Experienced
 * @f: the Ethernet frame (no vnet header), changed in place
 * @len: its length
 *
 * IPv4: the TOS byte's ECN field becomes 11 and the header checksum is
 * updated for the changed 16-bit word (RFC 1624, eqn. 3). IPv6: the traffic
 * class's ECN field becomes 11; IPv6 has no header checksum, and no transport
 * checksum covers these bits.
 *
 * Return: 1 if marked, 0 if the frame is not ECT(0) or ECT(1) (not ECN
 * capable, or CE already), or a negative errno from ip_header().
 */
static int ecn_mark(uint8_t *f, size_t len)
{
	size_t o;
	int v = ip_header(f, len, &o);

	if (v < 0)
		return v;
	if (v == 4) {
		uint32_t old = (uint32_t)f[o] << 8 | f[o + 1], new = old | 3, sum;
		uint16_t hc = (uint16_t)(f[o + 10] << 8 | f[o + 11]);

		if ((old & 3) == 0 || (old & 3) == 3)
			return 0;
		sum = (uint32_t)(uint16_t)~hc + (uint16_t)~old + new;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		f[o + 1] = (uint8_t)new;
		f[o + 10] = (uint8_t)(~sum >> 8);
		f[o + 11] = (uint8_t)~sum;
		return 1;
	}
	/* IPv6: version(4) traffic class(8) flow label(20); ECN is bits 5:4 of byte 1. */
	if ((f[o + 1] & 0x30) == 0 || (f[o + 1] & 0x30) == 0x30)
		return 0;
	f[o + 1] |= 0x30;
	return 1;
}

/**
 * wire_len() - the bytes a frame occupies on the link
 * @buf: vnet header, then the Ethernet frame
 * @len: bytes at @buf
 *
 * A frame's length without its vnet header; a GSO frame becomes several
 * segments on the link, each with its own copy of the headers, so their
 * lengths are added up. The header length is taken from the transport header
 * at csum_start (TCP: its data offset), else from the vnet header's hdr_len;
 * if neither makes sense the frame counts as one.
 *
 * Return: the length in bytes.
 */
static size_t wire_len(const uint8_t *buf, size_t len)
{
	struct virtio_net_hdr vh;
	const uint8_t *f = buf + VNET_LEN;
	size_t flen = len - VNET_LEN, hdr = 0, gso, segs;

	memcpy(&vh, buf, sizeof(vh));
	gso = le16toh(vh.gso_size);
	if (vh.gso_type == VIRTIO_NET_HDR_GSO_NONE || !gso)
		return flen;
	if (vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		size_t l4 = le16toh(vh.csum_start);

		switch (vh.gso_type & ~VIRTIO_NET_HDR_GSO_ECN) {
		case VIRTIO_NET_HDR_GSO_TCPV4:
		case VIRTIO_NET_HDR_GSO_TCPV6:
			if (l4 + 13 <= flen)
				hdr = l4 + (size_t)(f[l4 + 12] >> 4) * 4;
			break;
		case VIRTIO_NET_HDR_GSO_UDP:
		case VIRTIO_NET_HDR_GSO_UDP_L4:
			hdr = l4 + 8;
			break;
		}
	}
	if (!hdr || hdr >= flen)
		hdr = le16toh(vh.hdr_len);
	if (!hdr || hdr >= flen)
		return flen;
	segs = (flen - hdr + gso - 1) / gso;
	return flen + (segs - 1) * hdr;
}

/**
 * frame_copy() - copy a frame out of the ring into a buffer, tag put back
 * @dst: room for @len bytes, @len + VLAN_LEN with @tag
 * @src: vnet header, then the Ethernet frame (at least ETH_HLEN bytes with @tag)
 * @len: bytes at @src
 * @tag: true to insert an 802.1Q tag after the MAC addresses
 * @tpid: the tag's TPID (host order)
 * @tci: the tag's TCI (host order)
 *
 * With a tag, the vnet header's csum_start and hdr_len (offsets into the
 * frame) move by VLAN_LEN.
 *
 * Return: the bytes written to @dst.
 */
static size_t frame_copy(uint8_t *dst, const uint8_t *src, size_t len, bool tag,
			 uint16_t tpid, uint16_t tci)
{
	struct virtio_net_hdr vh;
	const size_t macs = VNET_LEN + 2 * ETH_ALEN;

	if (!tag) {
		memcpy(dst, src, len);
		return len;
	}
	memcpy(&vh, src, sizeof(vh));
	if (vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
		vh.csum_start = htole16((uint16_t)(le16toh(vh.csum_start) + VLAN_LEN));
	if (vh.hdr_len)
		vh.hdr_len = htole16((uint16_t)(le16toh(vh.hdr_len) + VLAN_LEN));
	memcpy(dst, &vh, sizeof(vh));
	memcpy(dst + VNET_LEN, src + VNET_LEN, 2 * ETH_ALEN);
	dst[macs] = (uint8_t)(tpid >> 8);
	dst[macs + 1] = (uint8_t)tpid;
	dst[macs + 2] = (uint8_t)(tci >> 8);
	dst[macs + 3] = (uint8_t)tci;
	memcpy(dst + macs + VLAN_LEN, src + macs, len - macs);
	return len + VLAN_LEN;
}

/**
 * bottleneck_pass() - take a frame through one direction's bottleneck
 * @r: the relay
 * @b: the direction's bottleneck
 * @wire: the frame's wire length
 * @now: its arrival time
 * @leave: set to the time it leaves the bottleneck
 * @backlog: set to the bytes queued before it arrived
 *
 * Return: 0, or -ENOBUFS if it does not fit in --limit-bytes (a tail drop:
 * the bottleneck is left as it was).
 */
static int bottleneck_pass(const struct relay *r, struct bottleneck *b, size_t wire,
			   uint64_t now, uint64_t *leave, double *backlog)
{
	uint64_t start = now, ps;
	uint32_t start_ps = 0;

	*backlog = 0;
	if (b->free_ns > now) {
		*backlog = ((double)(b->free_ns - now) * 1000.0 + b->free_ps) / r->ps_per_byte;
		start = b->free_ns;
		start_ps = b->free_ps;
	}
	if (*backlog + (double)wire > (double)r->o.limit_bytes)
		return -ENOBUFS;
	ps = start_ps + (uint64_t)((double)wire * r->ps_per_byte + 0.5);
	b->free_ns = start + ps / 1000;
	b->free_ps = (uint32_t)(ps % 1000);
	*leave = b->free_ns;
	return 0;
}

/**
 * frame_admit() - impair one received frame and queue what is left of it
 * @r: the relay
 * @in: side it came in on
 * @src: vnet header, then the Ethernet frame (ring slot or rxbuf)
 * @len: bytes at @src, VNET_LEN + ETH_HLEN at least
 * @tag: the kernel took a VLAN tag out of the frame
 * @tpid: its TPID
 * @tci: its TCI
 * @now: the arrival time
 *
 * Loss, duplication, jitter and reordering are drawn in that order, once per
 * frame, as they always were; each copy then crosses the bottleneck (if any)
 * and may be tail-dropped or ECN-marked there.
 */
static void frame_admit(struct relay *r, int in, const uint8_t *src, size_t len, bool tag,
			uint16_t tpid, uint16_t tci, uint64_t now)
{
	const struct relay_opts *o = &r->o;
	int copies = 1;
	uint64_t after = (uint64_t)o->delay_ms * 1000000u;

	r->st.in[in]++;
	if (rng_unit() < o->loss) {
		r->st.lost++;
		return;
	}
	if (rng_unit() < o->dup) {
		copies = 2;
		r->st.duplicated++;
	}
	if (o->jitter_ms)
		after += rng_next() % ((uint64_t)o->jitter_ms * 1000u) * 1000u;
	if (rng_unit() < o->reorder) {
		after += (uint64_t)o->reorder_ms * 1000000u;
		r->st.reordered++;
	}
	for (int i = 0; i < copies; i++) {
		size_t n = len + (tag ? VLAN_LEN : 0);
		struct frame f = { .order = r->order++, .out = !in, .len = (uint32_t)n };
		uint64_t leave = now;

		if (r->h.n >= o->queue_max || !(f.data = buf_get(&r->pool, n))) {
			r->st.queue_full++;
			break;
		}
		frame_copy(f.data, src, len, tag, tpid, tci);
		if (o->rate_mbit > 0) {
			double backlog;

			if (bottleneck_pass(r, &r->bn[f.out], wire_len(f.data, n), now, &leave,
					    &backlog) < 0) {
				r->st.queue_drops++;
				buf_put(&r->pool, f.data, n);
				continue;
			}
			if (o->ecn && backlog > (double)o->ecn_bytes &&
			    ecn_mark(f.data + VNET_LEN, n - VNET_LEN) == 1)
				r->st.ce_marked++;
		}
		f.due_ns = leave + after;
		heap_push(&r->h, f);
	}
}

/**
 * side_read_copy() - read a frame that did not fit its ring slot
 * @r: the relay
 * @in: side index
 * @now: the arrival time
 *
 * The kernel queued the whole frame on the socket (PACKET_COPY_THRESH) when
 * it marked the slot TP_STATUS_COPY; it is the oldest frame queued there.
 */
static void side_read_copy(struct relay *r, int in, uint64_t now)
{
	union {
		struct cmsghdr c;
		uint8_t b[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl;
	struct iovec iov = { .iov_base = r->rxbuf, .iov_len = FRAME_MAX };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = &ctl, .msg_controllen = sizeof(ctl) };
	struct tpacket_auxdata aux = { 0 };
	ssize_t n = recvmsg(r->side[in].fd, &m, MSG_TRUNC | MSG_DONTWAIT);

	if (n < (ssize_t)(VNET_LEN + ETH_HLEN) || n > (ssize_t)FRAME_MAX) {
		/* Gone, or a frame too large to pass whole: dropped on the kernel's path. */
		r->st.socket_drops++;
		return;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA &&
		    c->cmsg_len >= CMSG_LEN(sizeof(aux)))
			memcpy(&aux, CMSG_DATA(c), sizeof(aux));
	frame_admit(r, in, r->rxbuf, (size_t)n, aux.tp_status & TP_STATUS_VLAN_VALID,
		    aux.tp_status & TP_STATUS_VLAN_TPID_VALID ? aux.tp_vlan_tpid : ETH_P_8021Q,
		    aux.tp_vlan_tci, now);
}

/**
 * side_drain() - read the frames waiting in a side's ring
 * @r: the relay
 * @in: side index
 * @now: the arrival time given to them
 *
 * Return: frames taken from the ring, at most RX_BUDGET.
 */
static unsigned int side_drain(struct relay *r, int in, uint64_t now)
{
	struct side *s = &r->side[in];
	unsigned int done = 0;

	while (done < RX_BUDGET) {
		struct tpacket2_hdr *t = (void *)(s->ring + (size_t)s->ring_next * RING_SLOT);
		uint32_t status = __atomic_load_n(&t->tp_status, __ATOMIC_ACQUIRE);
		size_t mac = t->tp_mac, snap = t->tp_snaplen;

		if (!(status & TP_STATUS_USER))
			break;
		if (status & TP_STATUS_COPY) {
			side_read_copy(r, in, now);
		} else if (snap != t->tp_len || snap < ETH_HLEN || mac < sizeof(*t) + VNET_LEN ||
			   mac + snap > RING_SLOT) {
			r->st.socket_drops++;	/* cut short and not queued whole: lost */
		} else {
			bool tag = status & TP_STATUS_VLAN_VALID;

			frame_admit(r, in, (uint8_t *)t + mac - VNET_LEN, VNET_LEN + snap, tag,
				    status & TP_STATUS_VLAN_TPID_VALID ? t->tp_vlan_tpid : ETH_P_8021Q,
				    t->tp_vlan_tci, now);
		}
		__atomic_store_n(&t->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		s->ring_next = (s->ring_next + 1) % s->ring_slots;
		done++;
	}
	return done;
}

/**
 * tx_flush() - send one side's batch and give its buffers back
 * @r: the relay
 * @out: side index
 *
 * A frame the kernel refuses is counted as a send error and skipped; the
 * rest of the batch is still sent.
 */
static void tx_flush(struct relay *r, int out)
{
	struct tx_batch *b = &r->tx[out];
	unsigned int done = 0;

	while (done < b->n) {
		int k = sendmmsg(r->side[out].fd, b->msg + done, b->n - done, 0);

		if (k <= 0) {
			r->st.send_errors++;
			done++;
			continue;
		}
		r->st.out[out] += (unsigned int)k;
		done += (unsigned int)k;
	}
	for (unsigned int i = 0; i < b->n; i++)
		buf_put(&r->pool, b->f[i].data, b->f[i].len);
	b->n = 0;
}

/**
 * send_due() - send every frame whose release time has come
 * @r: the relay
 * @now: the time
 *
 * Return: frames sent or refused.
 */
static unsigned int send_due(struct relay *r, uint64_t now)
{
	unsigned int done = 0;

	while (r->h.n && r->h.v[0].due_ns <= now) {
		struct frame f = heap_pop(&r->h);
		struct tx_batch *b = &r->tx[f.out];

		b->f[b->n] = f;
		b->iov[b->n] = (struct iovec){ .iov_base = f.data, .iov_len = f.len };
		b->msg[b->n] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &b->iov[b->n],
							      .msg_iovlen = 1 } };
		if (++b->n == TX_BATCH)
			tx_flush(r, f.out);
		done++;
	}
	for (int i = 0; i < 2; i++)
		if (r->tx[i].n)
			tx_flush(r, i);
	return done;
}

/**
 * side_open() - open a side's packet socket and its receive ring
 * @s: the side, its fd and ring set on success
 * @ifname: the link
 *
 * Everything is set up before the bind, so no frame arrives before the ring
 * and the vnet header are in place.
 *
 * Return: 0, or a negative errno (with a message on stderr).
 */
static int side_open(struct side *s, const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct tpacket_req req = { .tp_block_size = RING_BLOCK, .tp_block_nr = RING_BLOCKS,
				   .tp_frame_size = RING_SLOT,
				   .tp_frame_nr = RING_BLOCK / RING_SLOT * RING_BLOCKS };
	int one = 1, bufsize = 16 << 20, version = TPACKET_V2, fd, err;

	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		err = -errno;
		fprintf(stderr, "impair_relay: link %s: %s\n", ifname, strerror(-err));
		return err;
	}
	/* Protocol 0 first, then bind with ETH_P_ALL: no frame arrives before the bind. */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "impair_relay: AF_PACKET socket: %s\n", strerror(-err));
		return err;
	}
	/*
	 * The ring, a large receive buffer for the frames too large for it, and
	 * drops read back with PACKET_STATISTICS: otherwise a burst the relay
	 * cannot take is lost where nobody counts it. PACKET_VNET_HDR and
	 * PACKET_VERSION must come before the ring.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsize, sizeof(bufsize)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsize, sizeof(bufsize)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_COPY_THRESH, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		goto fail;
	s->ring_len = (size_t)req.tp_block_size * req.tp_block_nr;
	s->ring = mmap(NULL, s->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (s->ring == MAP_FAILED) {
		s->ring = NULL;
		goto fail;
	}
	s->ring_slots = req.tp_frame_nr;
	s->ring_next = 0;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		goto fail;
	s->fd = fd;
	return 0;
fail:
	err = -errno;
	fprintf(stderr, "impair_relay: link %s: set up: %s\n", ifname, strerror(-err));
	if (s->ring)
		munmap(s->ring, s->ring_len);
	s->ring = NULL;
	close(fd);
	return err;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: impair_relay --a IFNAME --b IFNAME [--seed N] [--delay-ms N] [--jitter-ms N]\n"
		"                    [--loss PCT] [--dup PCT] [--reorder PCT] [--reorder-ms N]\n"
		"                    [--queue FRAMES] [--duration SECONDS]\n"
		"                    [--rate MBIT [--limit-bytes N] [--ecn-mark BYTES]]\n"
		"  --rate MBIT       a bottleneck each way: frames leave it at MBIT Mbit/s\n"
		"                    (decimal, e.g. 2.5; 0.001..100000, 0 = none), then the delay\n"
		"  --limit-bytes N   bytes its queue holds (default %u); a frame that would\n"
		"                    exceed them is dropped (queue_drops)\n"
		"  --ecn-mark BYTES  a frame that finds more than BYTES queued is marked CE if it\n"
		"                    is ECT(0) or ECT(1) (ce_marked)\n",
		LIMIT_DEFAULT);
}

static int parse_pct(const char *name, const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0 || v > 100) {
		fprintf(stderr, "impair_relay: --%s: '%s' is not a percentage 0..100\n", name, s);
		return -EINVAL;
	}
	*out = v / 100.0;
	return 0;
}

static int parse_uint(const char *name, const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-') {
		fprintf(stderr, "impair_relay: --%s: '%s' is not a number 0..%u\n", name, s, max);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

/**
 * parse_rate() - parse --rate: a plain decimal number of Mbit/s
 * @s: the argument
 * @out: set to the rate, 0 for none
 *
 * Only digits and one decimal point: no sign, exponent, "inf" or "nan".
 *
 * Return: 0, or -EINVAL with a message on stderr.
 */
static int parse_rate(const char *s, double *out)
{
	size_t digits = strspn(s, "0123456789.");
	const char *dot = strchr(s, '.');
	char *end;
	double v;

	if (!digits || s[digits] || (dot && strchr(dot + 1, '.')) || !strpbrk(s, "0123456789"))
		goto bad;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || (v != 0 && (v < 0.001 || v > 100000)))
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "impair_relay: --rate: '%s' is not a rate in Mbit/s (0, or 0.001..100000)\n", s);
	return -EINVAL;
}

static int parse_opts(int argc, char **argv, struct relay_opts *o)
{
	static const struct option longopts[] = {
		{ "a", required_argument, NULL, 'a' },
		{ "b", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "jitter-ms", required_argument, NULL, 'j' },
		{ "loss", required_argument, NULL, 'l' },
		{ "dup", required_argument, NULL, 'u' },
		{ "reorder", required_argument, NULL, 'r' },
		{ "reorder-ms", required_argument, NULL, 'R' },
		{ "queue", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'B' },
		{ "limit-bytes", required_argument, NULL, 'L' },
		{ "ecn-mark", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned int seed = 1;
	int c;

	*o = (struct relay_opts){ .reorder_ms = 5, .duration_s = 600, .queue_max = 65536,
				  .limit_bytes = LIMIT_DEFAULT };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int err = 0;

		switch (c) {
		case 'a': o->ifname[0] = optarg; break;
		case 'b': o->ifname[1] = optarg; break;
		case 's': err = parse_uint("seed", optarg, UINT32_MAX, &seed); break;
		case 'd': err = parse_uint("delay-ms", optarg, 10000, &o->delay_ms); break;
		case 'j': err = parse_uint("jitter-ms", optarg, 10000, &o->jitter_ms); break;
		case 'l': err = parse_pct("loss", optarg, &o->loss); break;
		case 'u': err = parse_pct("dup", optarg, &o->dup); break;
		case 'r': err = parse_pct("reorder", optarg, &o->reorder); break;
		case 'R': err = parse_uint("reorder-ms", optarg, 10000, &o->reorder_ms); break;
		case 'q': err = parse_uint("queue", optarg, 1u << 20, &o->queue_max); break;
		case 't': err = parse_uint("duration", optarg, 86400, &o->duration_s); break;
		case 'B': err = parse_rate(optarg, &o->rate_mbit); break;
		case 'L':
			err = parse_uint("limit-bytes", optarg, 1u << 30, &o->limit_bytes);
			o->limit_set = true;
			break;
		case 'E':
			err = parse_uint("ecn-mark", optarg, 1u << 30, &o->ecn_bytes);
			o->ecn = true;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -EINVAL;
		}
		if (err)
			return err;
	}
	if (!o->ifname[0] || !o->ifname[1] || optind != argc || !o->queue_max) {
		usage(stderr);
		return -EINVAL;
	}
	if (o->rate_mbit == 0 && (o->limit_set || o->ecn)) {
		fprintf(stderr, "impair_relay: --%s needs --rate: without a rate there is no queue to %s\n",
			o->limit_set ? "limit-bytes" : "ecn-mark", o->limit_set ? "limit" : "mark in");
		return -EINVAL;
	}
	/* xorshift must not start at 0. */
	o->seed = ((uint64_t)seed << 32) ^ 0x9e3779b97f4a7c15ull;
	return 0;
}

int main(int argc, char **argv)
{
	static struct relay r;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t stop, waiting;
	uint64_t deadline;
	int rc = 1;

	if (parse_opts(argc, argv, &r.o))
		return 2;
	rng_state = r.o.seed;
	if (r.o.rate_mbit > 0)
		r.ps_per_byte = 8e6 / r.o.rate_mbit;	/* 8 bits * 1e12 ps / (rate * 1e6 bit/s) */
	r.side[0].fd = r.side[1].fd = -1;
	/* Signals only inside ppoll(): a stop is never missed, a batch never cut. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, &waiting);
	sigdelset(&waiting, SIGTERM);
	sigdelset(&waiting, SIGINT);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	prctl(PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0);

	r.h.cap = r.o.queue_max;
	r.h.v = calloc(r.h.cap, sizeof(*r.h.v));
	r.rxbuf = malloc(FRAME_MAX);
	if (!r.h.v || !r.rxbuf || pool_grow(&r.pool) < 0)
		goto out;
	for (int i = 0; i < 2; i++)
		if (side_open(&r.side[i], r.o.ifname[i]) < 0)
			goto out;
	fprintf(stderr, "impair_relay: %s <-> %s ready\n", r.o.ifname[0], r.o.ifname[1]);

	deadline = now_ns() + (uint64_t)r.o.duration_s * 1000000000u;
	while (!relay_stop) {
		struct pollfd pfd[2] = { { .fd = r.side[0].fd, .events = POLLIN },
					 { .fd = r.side[1].fd, .events = POLLIN } };
		uint64_t t = now_ns(), wait_ns = 100000000u;
		unsigned int work = 0;
		struct timespec ts;

		if (t >= deadline)
			break;
		for (int i = 0; i < 2; i++)
			work += side_drain(&r, i, t);
		if (work)
			t = now_ns();
		work += send_due(&r, t);
		if (work)
			wait_ns = 0;	/* more may be waiting: only take a stop signal */
		else if (r.h.n)
			wait_ns = r.h.v[0].due_ns - t;	/* > 0: send_due() left it */
		if (wait_ns > deadline - t)
			wait_ns = deadline - t;
		if (wait_ns > 100000000u)
			wait_ns = 100000000u;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)wait_ns;
		if (ppoll(pfd, 2, &ts, &waiting) < 0 && errno != EINTR)
			break;
	}
	rc = 0;
	for (int i = 0; i < 2; i++)
		socket_drops_add(r.side[i].fd, &r.st);
	printf("impair_relay: in a=%" PRIu64 " b=%" PRIu64 " out a=%" PRIu64 " b=%" PRIu64
	       " lost=%" PRIu64 " duplicated=%" PRIu64 " reordered=%" PRIu64 " queue_full=%" PRIu64
	       " send_errors=%" PRIu64 " socket_drops=%" PRIu64 " queue_drops=%" PRIu64
	       " ce_marked=%" PRIu64 "\n",
	       r.st.in[0], r.st.in[1], r.st.out[0], r.st.out[1], r.st.lost, r.st.duplicated,
	       r.st.reordered, r.st.queue_full, r.st.send_errors, r.st.socket_drops,
	       r.st.queue_drops, r.st.ce_marked);
out:
	while (r.h.n) {
		struct frame f = heap_pop(&r.h);

		buf_put(&r.pool, f.data, f.len);
	}
	free(r.h.v);
	free(r.rxbuf);
	pool_free(&r.pool);
	for (int i = 0; i < 2; i++) {
		if (r.side[i].ring)
			munmap(r.side[i].ring, r.side[i].ring_len);
		if (r.side[i].fd >= 0)
			close(r.side[i].fd);
	}
	return rc;
}
