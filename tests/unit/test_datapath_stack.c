// SPDX-License-Identifier: MIT
/*
 * test_datapath_stack.c - the stack below TCP, driven through a real link
 *
 * The fixture builds a stack on a fake-clock loop with one link whose
 * channel is one end of a unix SOCK_DGRAM socketpair: frames the test writes
 * to the other end are read by the link's recvmmsg path, and frames the
 * stack sends come out of the link's sendmmsg path. Every test checks what
 * came out byte by byte (addresses, checksums recomputed here with a
 * separate reference) or which drop counter moved, and the teardown fails
 * on any packet buffer left allocated.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/net/net.h"
#include "datapath/wire/proto_hdr.h"
#include "tests/unit/datapath_testlib.h"

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static struct loop *lp;
static struct stack st;
static struct link *lk;
static int peer_fd = -1;
static bool hw_mode;
static struct in_addr a_us, a_peer, a_far;
static struct in6_addr a6_us, a6_peer;

/* ---- reference checksum and frame builders ---- */

static size_t put_eth(uint8_t *f, const uint8_t *dst, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, dpt_peer_mac, 6);
	f[12] = type >> 8;
	f[13] = type & 0xff;
	return 14;
}

/* IPv4 header at f, payload of plen bytes after it; returns 20 */
static size_t put_ip4(uint8_t *f, struct in_addr s, struct in_addr d, uint8_t proto, size_t plen,
		      uint16_t id, uint16_t frag)
{
	uint16_t c;

	memset(f, 0, 20);
	f[0] = 0x45;
	f[2] = (20 + plen) >> 8;
	f[3] = (20 + plen) & 0xff;
	f[4] = id >> 8;
	f[5] = id & 0xff;
	f[6] = frag >> 8;
	f[7] = frag & 0xff;
	f[8] = 64;
	f[9] = proto;
	memcpy(f + 12, &s, 4);
	memcpy(f + 16, &d, 4);
	c = dpt_ref_sum(f, 20, 0);
	f[10] = c >> 8;
	f[11] = c & 0xff;
	return 20;
}

static size_t put_ip6(uint8_t *f, const struct in6_addr *s, const struct in6_addr *d, uint8_t nh,
		      size_t plen, uint8_t hl)
{
	memset(f, 0, 40);
	f[0] = 0x60;
	f[4] = plen >> 8;
	f[5] = plen & 0xff;
	f[6] = nh;
	f[7] = hl;
	memcpy(f + 8, s, 16);
	memcpy(f + 24, d, 16);
	return 40;
}

static void set_l4_csum(uint8_t *l4, size_t len, size_t csum_off, int family, const void *s,
			const void *d, uint8_t proto)
{
	uint16_t c;

	l4[csum_off] = l4[csum_off + 1] = 0;
	c = dpt_ref_sum(l4, len, proto == IPPROTO_ICMP ? 0 : dpt_ref_pseudo(family, s, d, proto, len));
	if (proto == IPPROTO_UDP && c == 0)
		c = 0xffff;
	l4[csum_off] = c >> 8;
	l4[csum_off + 1] = c & 0xff;
}

/* A UDP/IPv4 frame; returns its length. */
static size_t build_udp4(uint8_t *f, struct in_addr s, struct in_addr d, uint16_t sport,
			 uint16_t dport, const void *data, size_t len)
{
	size_t o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV4);
	uint8_t *u;

	o += put_ip4(f + o, s, d, IPPROTO_UDP, 8 + len, 0x1234, 0);
	u = f + o;
	u[0] = sport >> 8;
	u[1] = sport & 0xff;
	u[2] = dport >> 8;
	u[3] = dport & 0xff;
	u[4] = (8 + len) >> 8;
	u[5] = (8 + len) & 0xff;
	memcpy(u + 8, data, len);
	set_l4_csum(u, 8 + len, 6, AF_INET, &s, &d, IPPROTO_UDP);
	return o + 8 + len;
}

static size_t build_echo4(uint8_t *f, struct in_addr s, struct in_addr d, uint16_t id,
			  size_t payload)
{
	size_t o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV4), i;
	uint8_t *ic;

	o += put_ip4(f + o, s, d, IPPROTO_ICMP, 8 + payload, 7, 0x4000);
	ic = f + o;
	memset(ic, 0, 8);
	ic[0] = ICMP_ECHO;
	ic[4] = id >> 8;
	ic[5] = id & 0xff;
	ic[7] = 1;
	for (i = 0; i < payload; i++)
		ic[8 + i] = (uint8_t)i;
	set_l4_csum(ic, 8 + payload, 2, AF_INET, NULL, NULL, IPPROTO_ICMP);
	return o + 8 + payload;
}

/* ---- I/O through the link ---- */

static void inject(const void *frame, size_t len)
{
	uint8_t buf[70000];
	size_t off = 0;

	if (hw_mode) {
		struct virtio_net_hdr vh = { 0 };

		memcpy(buf, &vh, sizeof(vh));
		off = sizeof(vh);
	}
	ck_assert_uint_le(len + off, sizeof(buf));
	memcpy(buf + off, frame, len);
	ck_assert_int_eq(send(peer_fd, buf, len + off, 0), (ssize_t)(len + off));
	link_rx(&lk->ch[0]);
	link_tx_flush(lk);
}

/* Next frame the stack sent, vnet header stripped; -1 if none. */
static ssize_t next_frame(uint8_t *buf, size_t cap)
{
	uint8_t tmp[70000];
	ssize_t n = recv(peer_fd, tmp, sizeof(tmp), MSG_DONTWAIT);
	size_t off = hw_mode ? sizeof(struct virtio_net_hdr) : 0;

	if (n < 0)
		return -1;
	ck_assert_uint_ge((size_t)n, off);
	ck_assert_uint_le((size_t)n - off, cap);
	memcpy(buf, tmp + off, n - off);
	return n - off;
}

static void drain(void)
{
	dpt_drain(peer_fd);
}

static void learn_peer(void)
{
	dpt_neigh_add(&st, lk, "10.0.0.1");
	dpt_neigh_add(&st, lk, "fd00::1");
}

static void setup_mode(bool hw, bool nodad)
{
	const struct dpt_link_opts o = {
		.mode = hw ? PROTO_GSO_HW : PROTO_GSO_SW,
		.addr4 = "10.0.0.2", .addr6 = "fd00::2", .nodad = nodad,
	};
	struct proto_route r = { .family = AF_INET, .has_gateway = true };

	hw_mode = hw;
	inet_pton(AF_INET, "10.0.0.2", &a_us);
	inet_pton(AF_INET, "10.0.0.1", &a_peer);
	inet_pton(AF_INET, "192.0.2.9", &a_far);
	inet_pton(AF_INET6, "fd00::2", &a6_us);
	inet_pton(AF_INET6, "fd00::1", &a6_peer);
	lk = dpt_stack_up(&lp, &st, &o, &peer_fd);
	r.gateway.v4 = a_peer;
	ck_assert_int_eq(route_add(&st, lk, &r), 0);
	ck_assert_int_eq(stack_start(&st), 0);
	link_tx_flush(lk);
}

static void setup(void)
{
	setup_mode(false, true);
	drain();
}

static void setup_hw(void)
{
	setup_mode(true, true);
	drain();
}

static void teardown(void)
{
	dpt_stack_down(lp, &st, peer_fd);
}

/* ---- tests ---- */

START_TEST(test_gratuitous_arp_on_start)
{
	uint8_t f[2048];
	ssize_t n;

	teardown();
	setup_mode(false, true);
	n = next_frame(f, sizeof(f));
	ck_assert_int_eq(n, 42);
	ck_assert_mem_eq(f, bcast, 6);
	ck_assert_uint_eq(f[12] << 8 | f[13], ETHERTYPE_ARP);
	ck_assert_uint_eq(f[21], 1);				/* request */
	ck_assert_mem_eq(f + 28, &a_us, 4);			/* sender = */
	ck_assert_mem_eq(f + 38, &a_us, 4);			/* target */
	drain();
}
END_TEST

START_TEST(test_arp_request_gets_reply)
{
	uint8_t f[64] = { 0 }, r[2048];
	size_t o = put_eth(f, bcast, ETHERTYPE_ARP);
	uint8_t *a = f + o;
	struct neigh *ne;

	a[1] = 1; a[2] = 0x08; a[4] = 6; a[5] = 4; a[7] = 1;
	memcpy(a + 8, dpt_peer_mac, 6);
	memcpy(a + 14, &a_peer, 4);
	memcpy(a + 24, &a_us, 4);
	inject(f, 60);
	ck_assert_int_eq(next_frame(r, sizeof(r)), 42);
	ck_assert_mem_eq(r, dpt_peer_mac, 6);
	ck_assert_mem_eq(r + 6, dpt_our_mac, 6);
	ck_assert_uint_eq(r[21], 2);				/* reply */
	ck_assert_mem_eq(r + 22, dpt_our_mac, 6);
	ck_assert_mem_eq(r + 28, &a_us, 4);
	ck_assert_mem_eq(r + 32, dpt_peer_mac, 6);
	ck_assert_mem_eq(r + 38, &a_peer, 4);
	ne = neigh_lookup(&st, AF_INET, &(union proto_inaddr){ .v4 = a_peer });
	ck_assert_ptr_nonnull(ne);
	ck_assert_int_eq(ne->state, NEIGH_REACHABLE);
	/* a request for somebody else is not answered and creates nothing */
	memcpy(a + 24, &a_far, 4);
	memcpy(a + 14, &(struct in_addr){ htonl(0x0a000063) }, 4);
	inject(f, 60);
	ck_assert_int_eq(next_frame(r, sizeof(r)), -1);
	ck_assert_ptr_null(neigh_lookup(&st, AF_INET,
					&(union proto_inaddr){ .v4 = { htonl(0x0a000063) } }));
}
END_TEST

START_TEST(test_arp_bad_formats_counted)
{
	uint8_t f[64] = { 0 }, r[2048];
	size_t o = put_eth(f, bcast, ETHERTYPE_ARP);
	uint8_t *a = f + o;

	a[1] = 1; a[2] = 0x08; a[4] = 5; a[5] = 4; a[7] = 1;	/* hlen 5 */
	memcpy(a + 24, &a_us, 4);
	inject(f, 60);
	ck_assert_uint_eq(st.drop[DROP_ARP_BAD_FORMAT], 1);
	a[4] = 6;
	a[5] = 16;						/* plen 16 */
	inject(f, 60);
	ck_assert_uint_eq(st.drop[DROP_ARP_BAD_FORMAT], 2);
	inject(f, 14 + 20);					/* truncated */
	ck_assert_uint_eq(st.drop[DROP_TRUNCATED], 1);
	inject(f, 10);						/* not even Ethernet */
	ck_assert_uint_eq(st.drop[DROP_TRUNCATED], 2);
	ck_assert_int_eq(next_frame(r, sizeof(r)), -1);
}
END_TEST

START_TEST(test_icmp_echo_resolves_then_replies)
{
	uint8_t f[2048], r[2048], arp[64] = { 0 };
	size_t n = build_echo4(f, a_peer, a_us, 0x4242, 56), o;
	uint8_t *a;
	ssize_t m;

	inject(f, n);
	/* no neighbour yet: an ARP request goes out, the reply waits */
	m = next_frame(r, sizeof(r));
	ck_assert_int_eq(m, 42);
	ck_assert_uint_eq(r[12] << 8 | r[13], ETHERTYPE_ARP);
	ck_assert_mem_eq(r + 38, &a_peer, 4);
	ck_assert_int_eq(next_frame(r, sizeof(r)), -1);
	ck_assert_uint_eq(st.ctr[CTR_NEIGH_QUEUED], 1);
	/* the ARP reply releases it */
	o = put_eth(arp, dpt_our_mac, ETHERTYPE_ARP);
	a = arp + o;
	a[1] = 1; a[2] = 0x08; a[4] = 6; a[5] = 4; a[7] = 2;
	memcpy(a + 8, dpt_peer_mac, 6);
	memcpy(a + 14, &a_peer, 4);
	memcpy(a + 18, dpt_our_mac, 6);
	memcpy(a + 24, &a_us, 4);
	inject(arp, 60);
	m = next_frame(r, sizeof(r));
	ck_assert_int_eq(m, (ssize_t)n);
	ck_assert_mem_eq(r, dpt_peer_mac, 6);
	ck_assert_uint_eq(dpt_ref_sum(r + 14, 20, 0), 0);		/* IP header checksum */
	ck_assert_mem_eq(r + 26, &a_us, 4);
	ck_assert_mem_eq(r + 30, &a_peer, 4);
	ck_assert_uint_eq(r[34], ICMP_ECHOREPLY);
	ck_assert_uint_eq(dpt_ref_sum(r + 34, n - 34, 0), 0);	/* ICMP checksum */
	ck_assert_mem_eq(r + 38, f + 38, n - 38);		/* id, seq, data */
}
END_TEST

START_TEST(test_ipv4_bad_packets_counted)
{
	uint8_t f[2048], r[2048];
	size_t n;

	learn_peer();
	n = build_echo4(f, a_peer, a_us, 1, 8);
	f[24] ^= 0xff;						/* header checksum */
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_BAD_CHECKSUM], 1);
	n = build_echo4(f, a_peer, a_us, 1, 8);
	inject(f, 14 + 12);					/* truncated header */
	ck_assert_uint_eq(st.drop[DROP_TRUNCATED], 1);
	n = build_echo4(f, a_peer, a_us, 1, 8);
	f[14] = 0x44;						/* IHL 4 */
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_BAD_HEADER], 1);
	n = build_echo4(f, a_peer, a_us, 1, 8);
	f[14] = 0x55;						/* version 5 */
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_BAD_HEADER], 2);
	n = build_echo4(f, a_peer, a_us, 1, 8);
	inject(f, n - 4);					/* total length > frame */
	ck_assert_uint_eq(st.drop[DROP_BAD_LENGTH], 1);
	n = build_echo4(f, a_peer, a_us, 1, 8);
	f[36] ^= 0x55;						/* ICMP checksum */
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_BAD_CHECKSUM], 2);
	n = build_echo4(f, a_peer, a_far, 1, 8);		/* not ours */
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_NOT_FOR_US], 1);
	ck_assert_int_eq(next_frame(r, sizeof(r)), -1);
	/* padding beyond the IP total length is fine */
	n = build_echo4(f, a_peer, a_us, 1, 8);
	memset(f + n, 0xee, 10);
	inject(f, n + 10);
	ck_assert_int_eq(next_frame(r, sizeof(r)), (ssize_t)n);
}
END_TEST

START_TEST(test_ipv4_options_skipped)
{
	uint8_t f[2048], r[2048];
	size_t n = build_echo4(f, a_peer, a_us, 9, 16);
	uint8_t g[2048];
	uint16_t c;

	learn_peer();
	/* insert 4 bytes of options (NOP NOP NOP EOL): IHL 6 */
	memcpy(g, f, 34);
	g[34] = 1; g[35] = 1; g[36] = 1; g[37] = 0;
	memcpy(g + 38, f + 34, n - 34);
	g[14] = 0x46;
	g[17] += 4;
	g[24] = g[25] = 0;
	c = dpt_ref_sum(g + 14, 24, 0);
	g[24] = c >> 8;
	g[25] = c & 0xff;
	inject(g, n + 4);
	ck_assert_int_eq(next_frame(r, sizeof(r)), (ssize_t)n);
	ck_assert_uint_eq(r[34], ICMP_ECHOREPLY);
	ck_assert_mem_eq(r + 42, f + 42, 16);
}
END_TEST

static uint8_t got_data[70000];
static size_t got_len;
static int got_count;
static uint16_t got_sport;

static void on_udp(struct udp_sock *s, const struct net_addr *src, uint16_t sport,
		   const struct net_addr *dst, const uint8_t *data, size_t len)
{
	(void)s; (void)src; (void)dst;
	memcpy(got_data, data, len);
	got_len = len;
	got_sport = sport;
	got_count++;
}

START_TEST(test_udp_deliver_and_send)
{
	uint8_t f[2048], r[2048];
	struct net_addr peer = { .family = AF_INET, .a.v4 = a_peer };
	struct udp_sock *s;
	size_t n;
	ssize_t m;
	int err;

	learn_peer();
	got_count = 0;
	s = udp_open(&st, NULL, 5000, on_udp, NULL, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(udp_open(&st, NULL, 5000, on_udp, NULL, &err));
	ck_assert_int_eq(err, -EADDRINUSE);
	n = build_udp4(f, a_peer, a_us, 40000, 5000, "hello", 5);
	inject(f, n);
	ck_assert_int_eq(got_count, 1);
	ck_assert_uint_eq(got_len, 5);
	ck_assert_mem_eq(got_data, "hello", 5);
	ck_assert_uint_eq(got_sport, 40000);
	/* bad checksum, bad length: counted, not delivered */
	f[n - 1] ^= 1;
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_BAD_CHECKSUM], 1);
	n = build_udp4(f, a_peer, a_us, 40000, 5000, "hello", 5);
	f[34 + 5] = 200;					/* UDP length > IP payload */
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_BAD_LENGTH], 1);
	n = build_udp4(f, a_peer, a_us, 40000, 5000, "hello", 5);
	put_ip4(f + 14, a_peer, a_us, IPPROTO_UDP, 4, 0x1234, 0);
	inject(f, 14 + 20 + 4);					/* truncated UDP header */
	ck_assert_uint_eq(st.drop[DROP_TRUNCATED], 1);
	ck_assert_int_eq(got_count, 1);
	/* checksum 0 means none over IPv4 */
	n = build_udp4(f, a_peer, a_us, 40000, 5000, "hello", 5);
	f[40] = f[41] = 0;
	inject(f, n);
	ck_assert_int_eq(got_count, 2);
	/* send */
	ck_assert_int_eq(udp_sendto(s, NULL, &peer, 40000, "world!", 6), 0);
	link_tx_flush(lk);
	m = next_frame(r, sizeof(r));
	ck_assert_int_eq(m, 14 + 20 + 8 + 6);
	ck_assert_mem_eq(r + 26, &a_us, 4);
	ck_assert_uint_eq(r[34] << 8 | r[35], 5000);
	ck_assert_uint_eq(r[36] << 8 | r[37], 40000);
	ck_assert_uint_eq(dpt_ref_sum(r + 34, 14, dpt_ref_pseudo(AF_INET, &a_us, &a_peer, 17, 14)), 0);
	ck_assert_mem_eq(r + 42, "world!", 6);
	udp_close(s);
}
END_TEST

START_TEST(test_udp_port_unreachable)
{
	uint8_t f[2048], r[2048];
	size_t n;
	ssize_t m;

	learn_peer();
	n = build_udp4(f, a_peer, a_us, 40000, 9999, "x", 1);
	inject(f, n);
	m = next_frame(r, sizeof(r));
	ck_assert_int_eq(m, 14 + 20 + 8 + (ssize_t)(n - 14));
	ck_assert_uint_eq(r[23], IPPROTO_ICMP);
	ck_assert_uint_eq(r[34], ICMP_DEST_UNREACH);
	ck_assert_uint_eq(r[35], ICMP_PORT_UNREACH);
	ck_assert_uint_eq(dpt_ref_sum(r + 34, m - 34, 0), 0);
	ck_assert_mem_eq(r + 42, f + 14, n - 14);		/* quotes the datagram */
	ck_assert_uint_eq(st.ctr[CTR_UDP_NO_PORT], 1);
	/* to broadcast: silently nothing */
	n = build_udp4(f, a_peer, (struct in_addr){ htonl(0x0a0000ff) }, 40000, 9999, "x", 1);
	inject(f, n);
	ck_assert_int_eq(next_frame(r, sizeof(r)), -1);
}
END_TEST

/* fragment of a UDP datagram: frame with IP header for [off, off+len) of l4 */
static size_t build_frag(uint8_t *f, const uint8_t *l4, size_t l4_len, size_t off, size_t len,
			 uint16_t id)
{
	size_t o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV4);
	bool more = off + len < l4_len;

	o += put_ip4(f + o, a_peer, a_us, IPPROTO_UDP, len, id, (uint16_t)(off / 8) | (more ? 0x2000 : 0));
	memcpy(f + o, l4 + off, len);
	return o + len;
}

static size_t make_udp_l4(uint8_t *l4, size_t payload, uint16_t dport)
{
	size_t i;

	l4[0] = 0x9c; l4[1] = 0x40;
	l4[2] = dport >> 8; l4[3] = dport & 0xff;
	l4[4] = (8 + payload) >> 8; l4[5] = (8 + payload) & 0xff;
	for (i = 0; i < payload; i++)
		l4[8 + i] = (uint8_t)(i * 31 + 7);
	set_l4_csum(l4, 8 + payload, 6, AF_INET, &a_peer, &a_us, IPPROTO_UDP);
	return 8 + payload;
}

START_TEST(test_reassembly_out_of_order)
{
	static uint8_t l4[4000], f[2048];
	struct udp_sock *s;
	size_t len = make_udp_l4(l4, 3992, 5000);
	int err;

	learn_peer();
	got_count = 0;
	s = udp_open(&st, NULL, 5000, on_udp, NULL, &err);
	inject(f, build_frag(f, l4, len, 2960, len - 2960, 77));	/* last first */
	inject(f, build_frag(f, l4, len, 0, 1480, 77));
	ck_assert_int_eq(got_count, 0);
	ck_assert_uint_eq(ip_reasm_queues(&st), 1);
	inject(f, build_frag(f, l4, len, 1480, 1480, 77));
	ck_assert_int_eq(got_count, 1);
	ck_assert_uint_eq(got_len, 3992);
	ck_assert_mem_eq(got_data, l4 + 8, 3992);
	ck_assert_uint_eq(ip_reasm_queues(&st), 0);
	ck_assert_uint_eq(ip_reasm_bytes(&st), 0);
	ck_assert_uint_eq(st.ctr[CTR_IPV4_REASM_OK], 1);
	udp_close(s);
}
END_TEST

START_TEST(test_reassembly_overlap_timeout_bounds)
{
	static uint8_t l4[4000], f[2048];
	size_t len = make_udp_l4(l4, 3992, 5000);
	unsigned int i;

	/* overlapping fragments drop the datagram */
	inject(f, build_frag(f, l4, len, 0, 1480, 1));
	inject(f, build_frag(f, l4, len, 1472, 1480, 1));
	ck_assert_uint_eq(st.drop[DROP_FRAG_OVERLAP], 1);
	ck_assert_uint_eq(ip_reasm_queues(&st), 0);
	/* MF with a length that is not a multiple of 8 */
	inject(f, build_frag(f, l4, len, 0, 1001, 2));
	ck_assert_uint_eq(st.drop[DROP_BAD_LENGTH], 1);
	/* beyond 65535 */
	{
		size_t o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV4);

		o += put_ip4(f + o, a_peer, a_us, IPPROTO_UDP, 800, 3, (uint16_t)(65000 / 8) | 0x2000);
		inject(f, o + 800);
		ck_assert_uint_eq(st.drop[DROP_FRAG_TOO_BIG], 1);
	}
	/* an endless stream of incomplete datagrams stays bounded */
	for (i = 0; i < 200; i++)
		inject(f, build_frag(f, l4, len, 0, 1480, (uint16_t)(1000 + i)));
	ck_assert_uint_le(ip_reasm_queues(&st), 64);
	ck_assert_uint_ge(st.drop[DROP_FRAG_NO_MEMORY], 200 - 64);
	/* and times out */
	loop_advance_ms(lp, 31000);
	ck_assert_uint_eq(ip_reasm_queues(&st), 0);
	ck_assert_uint_eq(ip_reasm_bytes(&st), 0);
	ck_assert_uint_ge(st.drop[DROP_FRAG_TIMEOUT], 1);
	drain();
}
END_TEST

START_TEST(test_fragmenting_our_datagram)
{
	static uint8_t r[2048], whole[70000], payload[65507];
	struct net_addr peer = { .family = AF_INET, .a.v4 = a_peer };
	struct udp_sock *s;
	size_t have = 0, i;
	unsigned int frames = 0;
	bool last_seen = false;
	ssize_t m;
	int err;

	learn_peer();
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i ^ (i >> 8));
	s = udp_open(&st, NULL, 0, on_udp, NULL, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(udp_sendto(s, NULL, &peer, 7, payload, sizeof(payload)), 0);
	ck_assert_int_eq(udp_sendto(s, NULL, &peer, 7, payload, sizeof(payload) + 1), -EMSGSIZE);
	link_tx_flush(lk);
	while ((m = next_frame(r, sizeof(r))) >= 0) {
		uint16_t fo = r[20] << 8 | r[21];
		size_t off = (size_t)(fo & 0x1fff) * 8, tot = r[16] << 8 | r[17];

		ck_assert_int_le(m, 1514);
		ck_assert_uint_eq(dpt_ref_sum(r + 14, 20, 0), 0);
		ck_assert_uint_eq(off, have);			/* in order, contiguous */
		memcpy(whole + off, r + 34, tot - 20);
		have += tot - 20;
		if (!(fo & 0x2000))
			last_seen = true;
		else
			ck_assert_uint_eq((tot - 20) % 8, 0);
		frames++;
	}
	ck_assert(last_seen);
	ck_assert_uint_eq(have, 8 + sizeof(payload));
	ck_assert_uint_eq(frames, (8 + sizeof(payload) + 1479) / 1480);
	ck_assert_uint_eq(dpt_ref_sum(whole, have, dpt_ref_pseudo(AF_INET, &a_us, &a_peer, 17, have)), 0);
	ck_assert_mem_eq(whole + 8, payload, sizeof(payload));
	udp_close(s);
}
END_TEST

static size_t build_icmp6(uint8_t *f, const uint8_t *dmac, const struct in6_addr *s,
			  const struct in6_addr *d, uint8_t hl, const uint8_t *msg, size_t len)
{
	size_t o = put_eth(f, dmac, ETHERTYPE_IPV6);

	o += put_ip6(f + o, s, d, IPPROTO_ICMPV6, len, hl);
	memcpy(f + o, msg, len);
	set_l4_csum(f + o, len, 2, AF_INET6, s, d, IPPROTO_ICMPV6);
	return o + len;
}

START_TEST(test_icmpv6_echo)
{
	uint8_t msg[16] = { ICMP6_ECHO_REQUEST, 0, 0, 0, 0x12, 0x34, 0, 1, 'p', 'i', 'n', 'g' };
	uint8_t f[2048], r[2048];
	size_t n;
	ssize_t m;

	learn_peer();
	n = build_icmp6(f, dpt_our_mac, &a6_peer, &a6_us, 64, msg, 12);
	inject(f, n);
	m = next_frame(r, sizeof(r));
	ck_assert_int_eq(m, (ssize_t)n);
	ck_assert_mem_eq(r, dpt_peer_mac, 6);
	ck_assert_mem_eq(r + 22, &a6_us, 16);
	ck_assert_mem_eq(r + 38, &a6_peer, 16);
	ck_assert_uint_eq(r[54], ICMP6_ECHO_REPLY);
	ck_assert_uint_eq(dpt_ref_sum(r + 54, 12, dpt_ref_pseudo(AF_INET6, &a6_us, &a6_peer, 58, 12)), 0);
	ck_assert_mem_eq(r + 58, msg + 4, 8);
	/* bad checksum */
	f[n - 1] ^= 1;
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_BAD_CHECKSUM], 1);
	ck_assert_int_eq(next_frame(r, sizeof(r)), -1);
}
END_TEST

START_TEST(test_ndp_ns_gets_na)
{
	uint8_t msg[32] = { ND_NEIGHBOR_SOLICIT };
	uint8_t f[2048], r[2048], smac[6] = { 0x33, 0x33, 0xff, 0, 0, 2 };
	struct in6_addr sn;
	struct neigh *ne;
	ssize_t m;

	memcpy(msg + 8, &a6_us, 16);
	msg[24] = 1;						/* SLLA option */
	msg[25] = 1;
	memcpy(msg + 26, dpt_peer_mac, 6);
	ipv6_solicited_node(&a6_us, &sn);
	inject(f, build_icmp6(f, smac, &a6_peer, &sn, 255, msg, 32));
	m = next_frame(r, sizeof(r));
	ck_assert_int_eq(m, 14 + 40 + 32);
	ck_assert_mem_eq(r, dpt_peer_mac, 6);
	ck_assert_uint_eq(r[54], ND_NEIGHBOR_ADVERT);
	ck_assert_uint_eq(r[58] & 0x60, 0x60);			/* solicited, override */
	ck_assert_mem_eq(r + 62, &a6_us, 16);
	ck_assert_uint_eq(r[78], 2);				/* TLLA */
	ck_assert_mem_eq(r + 80, dpt_our_mac, 6);
	ck_assert_uint_eq(r[21], 255);
	ck_assert_uint_eq(dpt_ref_sum(r + 54, 32, dpt_ref_pseudo(AF_INET6, r + 22, r + 38, 58, 32)), 0);
	ne = neigh_lookup(&st, AF_INET6, &(union proto_inaddr){ .v6 = a6_peer });
	ck_assert_ptr_nonnull(ne);
	ck_assert_mem_eq(ne->mac, dpt_peer_mac, 6);
	/* hop limit other than 255: invalid */
	inject(f, build_icmp6(f, smac, &a6_peer, &sn, 64, msg, 32));
	ck_assert_uint_eq(st.drop[DROP_NDP_BAD], 1);
	/* option of length 0: invalid */
	msg[25] = 0;
	inject(f, build_icmp6(f, smac, &a6_peer, &sn, 255, msg, 32));
	ck_assert_uint_eq(st.drop[DROP_NDP_BAD], 2);
	ck_assert_int_eq(next_frame(r, sizeof(r)), -1);
}
END_TEST

START_TEST(test_dad_success_and_failure)
{
	uint8_t f[2048], r[2048], msg[32] = { ND_NEIGHBOR_ADVERT };
	const struct in6_addr all = { .s6_addr = { 0xff, 0x02, [15] = 1 } };
	uint8_t mmac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	struct link_addr6 *a;
	ssize_t m;
	bool saw_probe = false;

	teardown();
	setup_mode(false, false);
	while ((m = next_frame(r, sizeof(r))) >= 0) {
		if (r[12] == 0x86 && r[54] == ND_NEIGHBOR_SOLICIT && !memcmp(r + 62, &a6_us, 16)) {
			static const uint8_t zero[16];

			ck_assert_mem_eq(r + 22, zero, 16);	/* from :: */
			saw_probe = true;
		}
	}
	ck_assert(saw_probe);
	a = ipv6_find_addr(&st, &a6_us, NULL);
	ck_assert_int_eq(a->state, ADDR6_TENTATIVE);
	/* tentative: an echo to it is not answered */
	learn_peer();
	/* somebody else answers for it: duplicate */
	memcpy(msg + 8, &a6_us, 16);
	msg[4] = 0x20;
	msg[24] = 2;
	msg[25] = 1;
	memcpy(msg + 26, dpt_peer_mac, 6);
	inject(f, build_icmp6(f, mmac, &a6_peer, &all, 255, msg, 32));
	ck_assert_int_eq(a->state, ADDR6_DUPLICATE);
	ck_assert_uint_eq(st.ctr[CTR_NDP_DAD_FAILED], 1);
	/* the link-local one completes after a second */
	loop_advance_ms(lp, 1500);
	ck_assert_uint_ge(st.ctr[CTR_NDP_DAD_OK], 1);
	ck_assert_int_eq(a->state, ADDR6_DUPLICATE);
	drain();
}
END_TEST

START_TEST(test_ipv6_ext_headers)
{
	uint8_t f[2048], r[2048], pl[256];
	size_t o, i, n_ext;
	uint8_t echo[12] = { ICMP6_ECHO_REQUEST, 0, 0, 0, 0, 1, 0, 1, 'a', 'b', 'c', 'd' };

	learn_peer();
	/* 2 destination options headers, then ICMPv6 echo: answered */
	for (n_ext = 2; n_ext <= 10; n_ext += 8) {
		size_t len = n_ext * 8 + sizeof(echo);

		memset(pl, 0, sizeof(pl));
		for (i = 0; i < n_ext; i++) {
			pl[i * 8] = i + 1 < n_ext ? IPPROTO_DSTOPTS : IPPROTO_ICMPV6;
			pl[i * 8 + 1] = 0;
			pl[i * 8 + 2] = 1;			/* PadN, 4 bytes */
			pl[i * 8 + 3] = 4;
		}
		memcpy(pl + n_ext * 8, echo, sizeof(echo));
		set_l4_csum(pl + n_ext * 8, sizeof(echo), 2, AF_INET6, &a6_peer, &a6_us, 58);
		o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV6);
		o += put_ip6(f + o, &a6_peer, &a6_us, IPPROTO_DSTOPTS, len, 64);
		memcpy(f + o, pl, len);
		inject(f, o + len);
		if (n_ext == 2) {
			ck_assert_int_gt(next_frame(r, sizeof(r)), 0);
			ck_assert_uint_eq(r[54], ICMP6_ECHO_REPLY);
		}
	}
	ck_assert_uint_eq(st.drop[DROP_IPV6_EXT_CHAIN], 1);
	/* an extension header running past the packet */
	o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV6);
	o += put_ip6(f + o, &a6_peer, &a6_us, IPPROTO_DSTOPTS, 8, 64);
	memset(f + o, 0, 8);
	f[o] = IPPROTO_ICMPV6;
	f[o + 1] = 3;						/* 32 bytes claimed */
	inject(f, o + 8);
	ck_assert_uint_eq(st.drop[DROP_TRUNCATED], 1);
	/* payload length longer than the frame */
	o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV6);
	o += put_ip6(f + o, &a6_peer, &a6_us, IPPROTO_ICMPV6, 100, 64);
	inject(f, o + 12);
	ck_assert_uint_eq(st.drop[DROP_BAD_LENGTH], 1);
	/* payload length 0 with bytes after it: a jumbogram without its option (RFC 2675) */
	o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV6);
	o += put_ip6(f + o, &a6_peer, &a6_us, IPPROTO_ICMPV6, 0, 64);
	inject(f, o + 12);
	ck_assert_uint_eq(st.drop[DROP_BAD_LENGTH], 2);
	/* a first fragment alone waits in reassembly */
	o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV6);
	o += put_ip6(f + o, &a6_peer, &a6_us, IPPROTO_FRAGMENT, 16, 64);
	memset(f + o, 0, 16);
	f[o] = IPPROTO_UDP;
	f[o + 3] = 1;						/* M flag */
	inject(f, o + 16);
	ck_assert_uint_eq(st.ctr[CTR_IPV6_FRAG_IN], 1);
	ck_assert_uint_eq(ip_reasm_queues(&st), 1);
	/* unknown next header: parameter problem pointing at the field */
	o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV6);
	o += put_ip6(f + o, &a6_peer, &a6_us, 253, 8, 64);
	memset(f + o, 0, 8);
	inject(f, o + 8);
	ck_assert_int_gt(next_frame(r, sizeof(r)), 0);
	ck_assert_uint_eq(r[54], ICMP6_PARAM_PROB);
	ck_assert_uint_eq(r[55], 1);
	ck_assert_uint_eq(r[61], 6);				/* offset of Next Header */
	ck_assert_uint_eq(st.drop[DROP_UNKNOWN_PROTOCOL], 1);
}
END_TEST

START_TEST(test_ipv6_fragments_both_ways)
{
	static uint8_t msg[3008], f[2048], r[2048], back[3100];
	size_t len = sizeof(msg), i, have = 0, o;
	uint32_t id = htonl(0x01020304);
	unsigned int frames = 0;
	ssize_t m;
	/* fragment boundaries, sent out of order */
	static const size_t cuts[][2] = { { 1448, 1448 }, { 0, 1448 }, { 2896, 112 } };

	learn_peer();
	memset(msg, 0, 8);
	msg[0] = ICMP6_ECHO_REQUEST;
	msg[5] = 1;
	for (i = 8; i < len; i++)
		msg[i] = (uint8_t)(i * 13);
	set_l4_csum(msg, len, 2, AF_INET6, &a6_peer, &a6_us, 58);
	for (i = 0; i < 3; i++) {
		size_t off = cuts[i][0], n = cuts[i][1];
		uint16_t fo = (uint16_t)off | (off + n < len ? 1 : 0);

		o = put_eth(f, dpt_our_mac, ETHERTYPE_IPV6);
		o += put_ip6(f + o, &a6_peer, &a6_us, IPPROTO_FRAGMENT, 8 + n, 64);
		f[o] = IPPROTO_ICMPV6;
		f[o + 1] = 0;
		f[o + 2] = fo >> 8;
		f[o + 3] = fo & 0xff;
		memcpy(f + o + 4, &id, 4);
		memcpy(f + o + 8, msg + off, n);
		inject(f, o + 8 + n);
	}
	ck_assert_uint_eq(st.ctr[CTR_IPV6_REASM_OK], 1);
	ck_assert_uint_eq(st.ctr[CTR_ICMPV6_ECHO_IN], 1);
	/* the 3008-byte reply leaves as fragments of at most the MTU */
	while ((m = next_frame(r, sizeof(r))) >= 0) {
		uint16_t fo;
		size_t n;

		ck_assert_int_le(m, 1514);
		ck_assert_uint_eq(r[20], IPPROTO_FRAGMENT);
		ck_assert_uint_eq(r[54], IPPROTO_ICMPV6);
		fo = r[56] << 8 | r[57];
		n = (size_t)(r[18] << 8 | r[19]) - 8;
		ck_assert_uint_eq(fo & 0xfff8, have);
		memcpy(back + have, r + 62, n);
		have += n;
		frames++;
		if (!(fo & 1))
			break;
		ck_assert_uint_eq(n % 8, 0);
	}
	ck_assert_uint_eq(frames, 3);
	ck_assert_uint_eq(have, len);
	ck_assert_uint_eq(back[0], ICMP6_ECHO_REPLY);
	ck_assert_uint_eq(dpt_ref_sum(back, len, dpt_ref_pseudo(AF_INET6, &a6_us, &a6_peer, 58, len)), 0);
	ck_assert_mem_eq(back + 4, msg + 4, len - 4);
	ck_assert_uint_eq(st.ctr[CTR_IPV6_FRAG_OUT], 3);
}
END_TEST

START_TEST(test_hw_mode_vnet)
{
	uint8_t f[2048], buf[2048];
	struct udp_sock *s;
	struct virtio_net_hdr vh = { .flags = VIRTIO_NET_HDR_F_DATA_VALID };
	size_t n;
	int err;

	learn_peer();
	got_count = 0;
	s = udp_open(&st, NULL, 5000, on_udp, NULL, &err);
	/* DATA_VALID: the kernel checked it, so a "wrong" checksum is not re-checked */
	n = build_udp4(f, a_peer, a_us, 40000, 5000, "hello", 5);
	f[40] ^= 0xff;
	memcpy(buf, &vh, sizeof(vh));
	memcpy(buf + sizeof(vh), f, n);
	ck_assert_int_eq(send(peer_fd, buf, n + sizeof(vh), 0), (ssize_t)(n + sizeof(vh)));
	link_rx(&lk->ch[0]);
	ck_assert_int_eq(got_count, 1);
	/* without it: verified and dropped */
	inject(f, n);
	ck_assert_int_eq(got_count, 1);
	ck_assert_uint_eq(st.drop[DROP_BAD_CHECKSUM], 1);
	/* transmit: every frame starts with a virtio_net_hdr */
	n = build_echo4(f, a_peer, a_us, 3, 8);
	inject(f, n);
	ck_assert_int_eq(recv(peer_fd, buf, sizeof(buf), MSG_DONTWAIT), (ssize_t)(n + sizeof(vh)));
	memcpy(&vh, buf, sizeof(vh));
	ck_assert_uint_eq(vh.gso_type, VIRTIO_NET_HDR_GSO_NONE);
	ck_assert_uint_eq(buf[sizeof(vh) + 34], ICMP_ECHOREPLY);
	ck_assert_uint_eq(lk->stats.rx_frames, 3);
	/* a UDP GSO frame: 250 bytes in datagrams of 100 */
	{
		static uint8_t big[600], payload[250];
		struct virtio_net_hdr gh = { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = 5,
					     .gso_size = 100, .csum_start = 34, .csum_offset = 6 };
		unsigned int k;

		for (k = 0; k < sizeof(payload); k++)
			payload[k] = (uint8_t)k;
		n = build_udp4(f, a_peer, a_us, 40000, 5000, payload, sizeof(payload));
		f[40] = f[41] = 0x12;				/* partial: not a real sum */
		memcpy(big, &gh, sizeof(gh));
		memcpy(big + sizeof(gh), f, n);
		got_count = 0;
		ck_assert_int_eq(send(peer_fd, big, n + sizeof(gh), 0), (ssize_t)(n + sizeof(gh)));
		link_rx(&lk->ch[0]);
		ck_assert_int_eq(got_count, 3);
		ck_assert_uint_eq(got_len, 50);			/* the last one */
		ck_assert_mem_eq(got_data, payload + 200, 50);
		ck_assert_uint_eq(lk->stats.rx_gso_segments, 3);
	}
	udp_close(s);
}
END_TEST

START_TEST(test_tx_eagain_keeps_order)
{
	struct net_addr peer = { .family = AF_INET, .a.v4 = a_peer };
	static uint8_t r[2048], data[1000];
	struct udp_sock *s;
	unsigned int i, sent = 0, seen = 0, turns;
	int err, sz = 4096;
	ssize_t m;

	uint64_t frames0 = lk->stats.tx_frames;

	learn_peer();
	s = udp_open(&st, NULL, 0, on_udp, NULL, &err);
	ck_assert_int_eq(setsockopt(lk->ch[0].fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)), 0);
	for (i = 0; i < 300; i++) {
		memcpy(data, &i, sizeof(i));
		if (udp_sendto(s, NULL, &peer, 9, data, sizeof(data)) == 0)
			sent++;
	}
	ck_assert_uint_eq(sent, 300);
	link_tx_flush(lk);
	ck_assert(lk->tx_blocked);
	ck_assert_uint_gt(lk->stats.tx_eagain, 0);
	ck_assert_uint_gt(lk->txq_len, 0);
	/* the peer reads; EPOLLOUT drives the rest out through the loop */
	for (turns = 0; turns < 1000 && seen < 300; turns++) {
		while ((m = next_frame(r, sizeof(r))) >= 0) {
			unsigned int k;

			memcpy(&k, r + 42, sizeof(k));
			ck_assert_uint_eq(k, seen);		/* nothing lost, nothing reordered */
			seen++;
		}
		loop_run_once(lp, 10);
	}
	ck_assert_uint_eq(seen, 300);
	ck_assert_uint_eq(lk->txq_len, 0);
	ck_assert_uint_eq(lk->stats.tx_frames - frames0, 300);
	ck_assert_uint_eq(st.drop[DROP_TX_QUEUE_FULL], 0);
	ck_assert_uint_gt(lk->stats.tx_frames, lk->stats.tx_syscalls);
	udp_close(s);
}
END_TEST

START_TEST(test_routing_longest_prefix)
{
	struct proto_route r = { .family = AF_INET };
	union proto_inaddr d;
	const struct route *rt;

	inet_pton(AF_INET, "192.0.2.0", &r.dst.v4);
	r.dst_len = 24;
	r.has_gateway = true;
	inet_pton(AF_INET, "10.0.0.7", &r.gateway.v4);
	ck_assert_int_eq(route_add(&st, lk, &r), 0);
	r.dst_len = 28;
	r.metric = 5;
	inet_pton(AF_INET, "10.0.0.8", &r.gateway.v4);
	ck_assert_int_eq(route_add(&st, lk, &r), 0);
	r.metric = 1;
	inet_pton(AF_INET, "10.0.0.9", &r.gateway.v4);
	ck_assert_int_eq(route_add(&st, lk, &r), 0);
	inet_pton(AF_INET, "192.0.2.9", &d.v4);
	rt = route_lookup(&st, AF_INET, &d);
	ck_assert_ptr_nonnull(rt);
	ck_assert_uint_eq(rt->dst_len, 28);
	ck_assert_uint_eq(rt->metric, 1);
	inet_pton(AF_INET, "192.0.2.200", &d.v4);
	ck_assert_uint_eq(route_lookup(&st, AF_INET, &d)->dst_len, 24);
	inet_pton(AF_INET, "198.51.100.1", &d.v4);
	rt = route_lookup(&st, AF_INET, &d);
	ck_assert_uint_eq(rt->dst_len, 0);			/* default */
	ck_assert_mem_eq(&rt->gateway.v4, &a_peer, 4);
	inet_pton(AF_INET, "10.0.0.77", &d.v4);
	rt = route_lookup(&st, AF_INET, &d);
	ck_assert_uint_eq(rt->dst_len, 24);			/* connected */
	ck_assert(!rt->has_gateway);
	inet_pton(AF_INET6, "2001:db8::1", &d.v6);
	ck_assert_ptr_null(route_lookup(&st, AF_INET6, &d));	/* no v6 default */
}
END_TEST

START_TEST(test_neigh_unresolved_drops_after_retries)
{
	struct net_addr far = { .family = AF_INET };
	struct udp_sock *s;
	uint8_t r[2048];
	unsigned int reqs = 0, i;
	int err;

	inet_pton(AF_INET, "10.0.0.50", &far.a.v4);
	s = udp_open(&st, NULL, 0, on_udp, NULL, &err);
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(udp_sendto(s, NULL, &far, 9, "q", 1), 0);
	ck_assert_uint_eq(st.drop[DROP_NEIGH_QUEUE_FULL], 20 - 16);
	for (i = 0; i < 10; i++) {
		link_tx_flush(lk);
		loop_advance_ms(lp, 1000);
		link_tx_flush(lk);
		while (next_frame(r, sizeof(r)) >= 0)
			if (r[12] == 0x08 && r[13] == 0x06 && !memcmp(r + 38, &far.a.v4, 4))
				reqs++;
	}
	ck_assert_uint_eq(reqs, 3);				/* three solicitations */
	ck_assert_uint_eq(st.drop[DROP_NO_NEIGHBOUR], 16);	/* the queue, dropped */
	ck_assert_ptr_null(neigh_lookup(&st, AF_INET, &far.a));
	udp_close(s);
}
END_TEST

/* ---- the layer above: what it registers, and the turn end's phases ---- */

static struct {
	bool take_udp;
	unsigned int udp, icmp, echo;
	uint16_t udp_dport;
	size_t udp_len;
	char order[16];
	unsigned int n_order;
	bool idle[16];
} upper_rec;

static bool rec_udp(void *ctx, const struct net_addr *src, uint16_t sport, const struct net_addr *dst,
		    uint16_t dport, const uint8_t *data, size_t len)
{
	(void)src; (void)sport; (void)dst; (void)data;
	ck_assert_ptr_eq(ctx, &upper_rec);
	upper_rec.udp++;
	upper_rec.udp_dport = dport;
	upper_rec.udp_len = len;
	return upper_rec.take_udp;
}

static void rec_icmp(void *ctx, uint8_t family, const struct pkt *p, const struct net_addr *src,
		     const struct net_addr *dst)
{
	(void)ctx; (void)family; (void)p; (void)src; (void)dst;
	upper_rec.icmp++;
}

static bool rec_echo(void *ctx, uint8_t family, const struct pkt *p, const struct net_addr *src,
		     const struct net_addr *dst)
{
	(void)ctx; (void)p; (void)src; (void)dst;
	ck_assert_uint_eq(family, AF_INET);
	upper_rec.echo++;
	return true;
}

static const struct stack_upper_ops rec_ops = {
	.udp_input = rec_udp, .icmp_input = rec_icmp, .echo_refused = rec_echo,
};

static void rec_turn(void *ctx, bool links_idle)
{
	if (upper_rec.n_order < sizeof(upper_rec.order) - 1) {
		upper_rec.idle[upper_rec.n_order] = links_idle;
		upper_rec.order[upper_rec.n_order++] = *(const char *)ctx;
	}
}

/*
 * What no socket of the stack holds goes to the one layer that registered
 * for it, which may take it or leave it to the stack; an echo request it
 * refuses is not answered. The turn end runs the registered work by phase,
 * in the order registered.
 */
START_TEST(test_upper_layer_and_turn_phases)
{
	static const char a = 'a', b = 'b', c = 'c';
	uint8_t f[2048], r[2048];
	unsigned int i;
	size_t n;
	int ret;

	memset(&upper_rec, 0, sizeof(upper_rec));
	learn_peer();
	ck_assert_int_eq(stack_set_upper(&st, &rec_ops, &upper_rec), 0);
	ck_assert_int_eq(stack_set_upper(&st, &rec_ops, &upper_rec), -EBUSY);

	/* taken: no port unreachable */
	upper_rec.take_udp = true;
	n = build_udp4(f, a_peer, a_us, 40000, 9999, "hello", 5);
	inject(f, n);
	ck_assert_int_eq(next_frame(r, sizeof(r)), -1);
	ck_assert_uint_eq(upper_rec.udp, 1);
	ck_assert_uint_eq(upper_rec.udp_dport, 9999);
	ck_assert_uint_eq(upper_rec.udp_len, 5);
	ck_assert_uint_eq(st.ctr[CTR_UDP_NO_PORT], 0);
	/* left to the stack: port unreachable, as without a layer above */
	upper_rec.take_udp = false;
	inject(f, n);
	ck_assert_int_gt(next_frame(r, sizeof(r)), 0);
	ck_assert_uint_eq(r[34], ICMP_DEST_UNREACH);
	ck_assert_uint_eq(upper_rec.udp, 2);
	ck_assert_uint_eq(st.ctr[CTR_UDP_NO_PORT], 1);
	/* an echo request it refuses is not answered */
	n = build_echo4(f, a_peer, a_us, 0x4242, 8);
	inject(f, n);
	ck_assert_int_eq(next_frame(r, sizeof(r)), -1);
	ck_assert_uint_eq(upper_rec.echo, 1);
	/* an echo reply is its, not the stack's */
	f[34] = ICMP_ECHOREPLY;
	set_l4_csum(f + 34, n - 34, 2, AF_INET, &a_peer, &a_us, IPPROTO_ICMP);
	inject(f, n);
	ck_assert_uint_eq(upper_rec.icmp, 1);

	/* phases: HAND_DOWN (b, then c) before the flush, FLUSHED (a) after */
	ck_assert_int_eq(stack_on_turn_end(&st, STACK_TURN_FLUSHED, rec_turn, (void *)&a), 0);
	ck_assert_int_eq(stack_on_turn_end(&st, STACK_TURN_HAND_DOWN, rec_turn, (void *)&b), 0);
	ck_assert_int_eq(stack_on_turn_end(&st, STACK_TURN_HAND_DOWN, rec_turn, (void *)&c), 0);
	ck_assert_int_eq(stack_on_turn_end(&st, STACK_TURN_PHASES, rec_turn, (void *)&c), -EINVAL);
	loop_run_once(lp, 0);
	ck_assert_str_eq(upper_rec.order, "bca");
	ck_assert(!upper_rec.idle[0] && !upper_rec.idle[1]);
	ck_assert(upper_rec.idle[2]);		/* nothing borrowed is queued */
	stack_off_turn_end(&st, rec_turn, (void *)&c);
	memset(upper_rec.order, 0, sizeof(upper_rec.order));
	upper_rec.n_order = 0;
	loop_run_once(lp, 0);
	ck_assert_str_eq(upper_rec.order, "ba");
	/* the table is bounded */
	for (i = 0, ret = 0; i < STACK_MAX_TURN_FNS + 1 && ret == 0; i++)
		ret = stack_on_turn_end(&st, STACK_TURN_FLUSHED, rec_turn, (void *)&c);
	ck_assert_int_eq(ret, -ENOSPC);
	ck_assert_int_eq(stack_set_upper(&st, NULL, NULL), 0);
	ck_assert_ptr_null(st.upper);
}
END_TEST

/* An unbound AF_PACKET socket, with or without PACKET_VNET_HDR (root only). */
static int packet_socket(bool vnet)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), on = vnet;

	if (fd >= 0 && vnet)
		ck_assert_int_eq(setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof(on)), 0);
	return fd;
}

/*
 * The link learns from its channel sockets whether frames carry a vnet
 * header: netsetup sets it in every mode, so a sw link reads the peer's
 * UDP GSO frames with their gso_size. Channels that disagree, or hw mode
 * without it, are refused with the reason, and every fd stays with the
 * caller.
 */
START_TEST(test_channel_vnet_from_socket)
{
	static const struct {
		enum proto_gso_mode mode;
		bool vnet[2];
		unsigned int n;
		int want;		/* l->vnet, or -1: refused */
		const char *why;
	} cases[] = {
		{ PROTO_GSO_SW, { true }, 1, 1, NULL },
		{ PROTO_GSO_OFF, { true, true }, 2, 1, NULL },
		{ PROTO_GSO_SW, { false }, 1, 0, NULL },
		{ PROTO_GSO_HW, { true }, 1, 1, NULL },
		{ PROTO_GSO_HW, { false }, 1, -1, "gso mode hw needs PACKET_VNET_HDR" },
		{ PROTO_GSO_SW, { true, false }, 2, -1, "channel 1 lacks PACKET_VNET_HDR and channel 0 has" },
	};
	struct proto_link cfg;
	struct loop *lp;
	struct stack st;
	unsigned int i, j;
	int fds = dpt_count_fds();

	lp = loop_new(true);
	ck_assert_ptr_nonnull(lp);
	ck_assert_int_eq(stack_init(&st, lp), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct link *lk;
		char err[256] = "";

		memset(&cfg, 0, sizeof(cfg));
		cfg.ifindex = 2;
		strcpy(cfg.ifname, "eth0");
		memcpy(cfg.mac, dpt_our_mac, 6);
		cfg.mtu = 1500;
		cfg.gso_mode = cases[i].mode;
		cfg.n_channels = cases[i].n;
		for (j = 0; j < cases[i].n; j++) {
			cfg.channel_fds[j] = packet_socket(cases[i].vnet[j]);
			ck_assert_msg(cfg.channel_fds[j] >= 0, "AF_PACKET socket: %s (run as root)", strerror(errno));
		}
		lk = link_packet_new(lp, &cfg, err, sizeof(err));
		if (cases[i].want < 0) {
			ck_assert_ptr_null(lk);
			ck_assert_msg(strstr(err, cases[i].why), "case %u: \"%s\"", i, err);
			ck_assert_uint_eq(cfg.n_channels, cases[i].n);	/* the fds are still the caller's */
			for (j = 0; j < cases[i].n; j++)
				close(cfg.channel_fds[j]);
			continue;
		}
		ck_assert_msg(lk != NULL, "case %u: %s", i, err);
		ck_assert_int_eq(lk->vnet, cases[i].want);
		ck_assert_uint_eq(lk->n_channels, cases[i].n);
		link_free(lk);
	}
	stack_fini(&st);
	loop_free(lp);
	ck_assert_int_eq(dpt_count_fds(), fds);
}
END_TEST

/*
 * The ICMP error bucket: a burst of 100, then 1000 a second; a stack that is
 * one of 4 shards gets a quarter of both, so that the container's errors stay
 * within one bucket's worth however many shards answer for it.
 */
START_TEST(test_icmp_bucket_and_share)
{
	struct loop *lp = loop_new(true);
	struct stack a, b;
	unsigned int n, k;

	ck_assert_ptr_nonnull(lp);
	ck_assert_int_eq(stack_init(&a, lp), 0);
	ck_assert_int_eq(stack_init(&b, lp), 0);
	a.icmp_tokens_ms = b.icmp_tokens_ms = loop_now_ms(lp);
	for (n = 0; stack_icmp_allow(&a); n++)
		ck_assert_uint_lt(n, 1000);
	ck_assert_uint_eq(n, 100);
	ck_assert_uint_eq(a.ctr[CTR_ICMP_RATE_LIMITED], 1);
	loop_advance_ms(lp, 50);	/* 50 more at 1000 a second */
	for (n = 0; stack_icmp_allow(&a); n++)
		ck_assert_uint_lt(n, 1000);
	ck_assert_uint_eq(n, 50);

	stack_set_icmp_rate(&b, 1000 / 4);	/* one of 4 shards (limits_share()) */
	for (n = 0; stack_icmp_allow(&b); n++)
		ck_assert_uint_lt(n, 1000);
	ck_assert_uint_eq(n, 25);
	loop_advance_ms(lp, 1000);	/* a full bucket again, not 250 */
	for (n = 0; stack_icmp_allow(&b); n++)
		ck_assert_uint_lt(n, 1000);
	ck_assert_uint_eq(n, 25);
	loop_advance_ms(lp, 40);	/* 250 a second: 10 */
	for (n = 0; stack_icmp_allow(&b); n++)
		ck_assert_uint_lt(n, 1000);
	ck_assert_uint_eq(n, 10);

	/* 64 shards: each still gets at least one token */
	stack_set_icmp_rate(&b, 1000 / 64);
	for (k = 0, n = 0; k < 3 && stack_icmp_allow(&b); k++)
		n++;
	ck_assert_uint_eq(n, 1);
	stack_fini(&a);
	stack_fini(&b);
	loop_free(lp);
}
END_TEST

static Suite *stack_suite(void)
{
	Suite *s = suite_create("datapath_stack");
	TCase *tc = tcase_create("sw");
	TCase *hw = tcase_create("hw");
	TCase *ch = tcase_create("channels");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_gratuitous_arp_on_start);
	tcase_add_test(tc, test_arp_request_gets_reply);
	tcase_add_test(tc, test_arp_bad_formats_counted);
	tcase_add_test(tc, test_icmp_echo_resolves_then_replies);
	tcase_add_test(tc, test_icmp_bucket_and_share);
	tcase_add_test(tc, test_ipv4_bad_packets_counted);
	tcase_add_test(tc, test_ipv4_options_skipped);
	tcase_add_test(tc, test_udp_deliver_and_send);
	tcase_add_test(tc, test_udp_port_unreachable);
	tcase_add_test(tc, test_reassembly_out_of_order);
	tcase_add_test(tc, test_reassembly_overlap_timeout_bounds);
	tcase_add_test(tc, test_fragmenting_our_datagram);
	tcase_add_test(tc, test_icmpv6_echo);
	tcase_add_test(tc, test_ndp_ns_gets_na);
	tcase_add_test(tc, test_dad_success_and_failure);
	tcase_add_test(tc, test_ipv6_ext_headers);
	tcase_add_test(tc, test_ipv6_fragments_both_ways);
	tcase_add_test(tc, test_tx_eagain_keeps_order);
	tcase_add_test(tc, test_routing_longest_prefix);
	tcase_add_test(tc, test_neigh_unresolved_drops_after_retries);
	tcase_add_test(tc, test_upper_layer_and_turn_phases);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(hw, setup_hw, teardown);
	tcase_add_test(hw, test_hw_mode_vnet);
	suite_add_tcase(s, hw);
	tcase_add_test(ch, test_channel_vnet_from_socket);
	suite_add_tcase(s, ch);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(stack_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
